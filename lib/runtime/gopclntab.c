// SPDX-License-Identifier: GPL-2.0
/*
 * Go's function table, .gopclntab (lib/runtime/runtime.h). The layouts, as
 * Go's own reader (debug/gosym) and runtime (runtime/symtab.go) read them:
 *
 *   header   u32 magic, u8 0, u8 0, u8 quantum, u8 pointer size, then
 *            pointer-sized words: nfunc, and from 1.16 nfiles, [1.18+:
 *            text start], then the offsets of the name table, the unit
 *            table, the file table, the pc-value tables and the function
 *            table. Go 1.2 has nfunc alone, the function table right after
 *            it, and the file table's offset after that.
 *   functab  nfunc + 1 rows {entry, _func offset}: u32 offsets from the
 *            text start in 1.18+, pointer-sized addresses before; the last
 *            row's entry is the end of the last function.
 *   _func    entry (u32 offset in 1.18+, else an address), then u32
 *            fields: name offset, args, deferreturn, pcsp, pcfile, pcln,
 *            npcdata, cu offset (1.16+), ...
 *   pc-value a run of (value delta, pc delta) pairs from (-1, entry): the
 *            value delta zig-zag coded, the pc delta in quantum units, both
 *            unsigned varints; a zero value delta after the first pair ends
 *            the run. A value holds for pcs below the pc it was paired
 *            with.
 *
 * Every read goes through rd32()/rd64()/str(), which check the offset
 * against the table's size: the table is the profiled host's, not ours.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "runtime/runtime.h"

#define GO_MAGIC_1_2	0xfffffffbu
#define GO_MAGIC_1_16	0xfffffffau
#define GO_MAGIC_1_18	0xfffffff0u
#define GO_MAGIC_1_20	0xfffffff1u

#define GO_STR_MAX	4096	/* a name or path longer is malformed */
#define GO_SCAN_MAX	(256u << 20)	/* a segment read to look for a table */

/* The _func fields used here, as debug/gosym numbers them (0: entry). */
enum { F_NAME = 1, F_PCSP = 4, F_PCFILE = 5, F_PCLN = 6, F_NPCDATA = 7, F_CU = 8 };

#define PCDATA_INLTREE	2	/* the runtime's _PCDATA_InlTreeIndex */
#define GO_NPCDATA_MAX	64	/* a function with more is malformed */

static bool rd32(const struct tp_gotab *t, size_t off, uint32_t *v)
{
	if (off > t->size || t->size - off < 4)
		return false;
	memcpy(v, t->data + off, 4);
	return true;
}

static bool rd64(const struct tp_gotab *t, size_t off, uint64_t *v)
{
	if (off > t->size || t->size - off < 8)
		return false;
	memcpy(v, t->data + off, 8);
	return true;
}

/* The NUL-terminated string at @base + @off, or NULL. */
static const char *str(const struct tp_gotab *t, size_t base, uint64_t off)
{
	size_t pos, n;

	if (base > t->size || off >= t->size - base)
		return NULL;
	pos = base + off;
	n = t->size - pos < GO_STR_MAX ? t->size - pos : GO_STR_MAX;
	return memchr(t->data + pos, '\0', n) ? (const char *)t->data + pos : NULL;
}

static bool new_rows(const struct tp_gotab *t)
{
	return t->layout >= TP_GO_1_18;
}

/* Row @i of the function table: its entry and its _func's offset in data. */
static bool row(const struct tp_gotab *t, uint32_t i, uint64_t *entry, uint64_t *func)
{
	uint32_t e32, f32;

	if (new_rows(t)) {
		if (!rd32(t, t->functab + 8 * (size_t)i, &e32) ||
		    !rd32(t, t->functab + 8 * (size_t)i + 4, &f32))
			return false;
		*entry = t->text + e32;
		*func = f32;
	} else {
		if (!rd64(t, t->functab + 16 * (size_t)i, entry) ||
		    !rd64(t, t->functab + 16 * (size_t)i + 8, func))
			return false;
	}
	return true;
}

/* Field @n (F_*) of the _func at @off. */
static bool field(const struct tp_gotab *t, size_t off, int n, uint32_t *v)
{
	size_t first = new_rows(t) ? 4 : 8;	/* after the entry */

	return rd32(t, off + first + 4 * (size_t)(n - 1), v);
}

static int header(struct tp_gotab *t, uint32_t magic)
{
	uint64_t w[8];
	int nw, i;

	switch (magic) {
	case GO_MAGIC_1_2:  t->layout = TP_GO_1_2;  nw = 1; break;
	case GO_MAGIC_1_16: t->layout = TP_GO_1_16; nw = 7; break;
	case GO_MAGIC_1_18: t->layout = TP_GO_1_18; nw = 8; break;
	case GO_MAGIC_1_20: t->layout = TP_GO_1_20; nw = 8; break;
	default: return -EINVAL;
	}
	for (i = 0; i < nw; i++)
		if (!rd64(t, 8 + 8 * (size_t)i, &w[i]))
			return -EINVAL;
	if (w[0] > UINT32_MAX)
		return -EINVAL;
	t->nfunc = (uint32_t)w[0];
	if (t->layout == TP_GO_1_2) {
		uint32_t fileoff, nfiles;

		t->functab = 16;
		t->funcdata = t->funcnames = t->pctab = t->cutab = 0;
		/* nfunc rows and the end: the file table's offset follows */
		if (t->nfunc > (t->size - 16) / 16 ||
		    !rd32(t, 16 + 16 * (size_t)t->nfunc + 8, &fileoff) ||
		    !rd32(t, fileoff, &nfiles) || nfiles > (t->size - fileoff) / 4)
			return -EINVAL;
		t->filetab = fileoff;
		t->nfiles = nfiles;
		return 0;
	}
	i = 2;
	t->text = 0;
	if (t->layout >= TP_GO_1_18)
		t->text = w[i++];
	for (int k = i; k < nw; k++)
		if (w[k] > t->size)
			return -EINVAL;
	t->funcnames = w[i];
	t->cutab = w[i + 1];
	t->filetab = w[i + 2];
	t->pctab = w[i + 3];
	t->functab = t->funcdata = w[i + 4];
	return 0;
}

int tp_gotab_open(struct tp_gotab *t, const void *data, size_t size)
{
	const uint8_t *d = data;
	uint64_t prev = 0, entry, func;
	size_t rowsz;
	uint32_t magic;
	int err;

	memset(t, 0, sizeof(*t));
	t->data = d;
	t->size = size;
	if (size < 16 || d[4] || d[5])
		return -EINVAL;
	if (d[6] != 1 && d[6] != 2 && d[6] != 4)
		return -EINVAL;
	if (d[7] != 8)			/* 32-bit Go: not on amd64 */
		return d[7] == 4 ? -ENOTSUP : -EINVAL;
	t->quantum = d[6];
	memcpy(&magic, d, 4);
	err = header(t, magic);
	if (err)
		return err;

	/* nfunc rows and the end row, within the table, sorted */
	rowsz = new_rows(t) ? 8 : 16;
	if (t->functab > size || t->nfunc >= (size - t->functab) / rowsz)
		return -EINVAL;
	for (uint32_t i = 0; i <= t->nfunc; i++) {
		if (!row(t, i, &entry, &func) || entry < prev)
			return -EINVAL;
		prev = entry;
	}
	return 0;
}

long tp_gotab_find(const void *data, size_t size)
{
	static const uint32_t magics[] = {
		GO_MAGIC_1_20, GO_MAGIC_1_18, GO_MAGIC_1_16, GO_MAGIC_1_2,
	};
	const uint8_t *d = data;
	struct tp_gotab t;
	uint32_t m;

	/* The linker aligns the table; 4 is the least any layout needs. */
	for (size_t off = 0; size >= 16 && off <= size - 16; off += 4) {
		if (d[off + 3] != 0xff || d[off + 4] || d[off + 5] || d[off + 7] != 8)
			continue;
		memcpy(&m, d + off, 4);
		for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
			if (m == magics[i] && tp_gotab_open(&t, d + off, size - off) == 0)
				return (long)off;
	}
	return -1;
}

int tp_gotab_nth(const struct tp_gotab *t, uint32_t i, struct tp_gofunc *f)
{
	uint64_t entry, end, func, own;
	uint32_t name, e32;

	if (i >= t->nfunc)
		return -ENOENT;
	if (!row(t, i, &entry, &func) || !row(t, i + 1, &end, &own))
		return -EINVAL;
	if (func > t->size || t->funcdata > t->size - func)
		return -EINVAL;
	f->off = t->funcdata + func;
	/* The _func names its own entry: a row that points elsewhere is corrupt. */
	if (new_rows(t)) {
		if (!rd32(t, f->off, &e32) || t->text + e32 != entry)
			return -EINVAL;
	} else if (!rd64(t, f->off, &own) || own != entry) {
		return -EINVAL;
	}
	if (!field(t, f->off, F_NAME, &name))
		return -EINVAL;
	f->entry = entry;
	f->end = end;
	f->name = str(t, t->funcnames, name);
	if (!f->name)
		f->name = "?";
	return 0;
}

int tp_gotab_func(const struct tp_gotab *t, uint64_t pc, struct tp_gofunc *f)
{
	uint64_t entry, end, func;
	uint32_t lo = 0, hi = t->nfunc;

	if (!t->nfunc)
		return -ENOENT;
	if (!row(t, 0, &entry, &func) || !row(t, t->nfunc, &end, &func))
		return -EINVAL;
	if (pc < entry || pc >= end)
		return -ENOENT;
	/* the last row whose entry is <= pc: rows are sorted (tp_gotab_open) */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (!row(t, mid, &entry, &func))
			return -EINVAL;
		if (entry <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return tp_gotab_nth(t, lo, f);
}

/* An unsigned varint of at most 32 bits at *@pos, which it advances. */
static bool uvarint(const struct tp_gotab *t, size_t *pos, uint32_t *v)
{
	uint32_t x = 0;

	for (unsigned int shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*pos >= t->size)
			return false;
		b = t->data[(*pos)++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/*
 * The value at @pc of the pc-value table at @off for @f, and in *@until
 * (when not NULL) the end of the run of pcs that share it.
 */
static int pcvalue(const struct tp_gotab *t, const struct tp_gofunc *f,
		   uint32_t off, uint64_t pc, int32_t *value, uint64_t *until)
{
	uint64_t at = f->entry;
	int32_t val = -1;
	size_t pos;

	if (!off)			/* the function has no such table */
		return -ENOENT;
	if (t->pctab > t->size || off >= t->size - t->pctab)
		return -EINVAL;
	pos = t->pctab + off;
	/* Each step consumes bytes of a bounded table: the loop ends. */
	for (bool first = true;; first = false) {
		uint32_t uv, dpc;

		if (!uvarint(t, &pos, &uv))
			return -EINVAL;
		if (!uv && !first)
			return -ENOENT;
		if (!uvarint(t, &pos, &dpc))
			return -EINVAL;
		/* zig-zag: the low bit is the sign; sums wrap, as Go's int32 do */
		val = (int32_t)((uint32_t)val + ((uv & 1) ? ~(uv >> 1) : (uv >> 1)));
		at += (uint64_t)dpc * t->quantum;
		if (pc < at) {
			*value = val;
			if (until)
				*until = at < f->end ? at : f->end;
			return 0;
		}
		if (at >= f->end)
			return -ENOENT;
	}
}

int tp_gotab_line(const struct tp_gotab *t, const struct tp_gofunc *f,
		  uint64_t pc, const char **file, int32_t *line)
{
	uint32_t pcfile, pcln, cu, name;
	int32_t fno;
	int err;

	if (pc < f->entry || pc >= f->end)
		return -ENOENT;
	if (!field(t, f->off, F_PCFILE, &pcfile) || !field(t, f->off, F_PCLN, &pcln))
		return -EINVAL;
	err = pcvalue(t, f, pcfile, pc, &fno, NULL);
	if (!err)
		err = pcvalue(t, f, pcln, pc, line, NULL);
	if (err)
		return err;
	if (fno < 0)
		return -ENOENT;
	if (t->layout == TP_GO_1_2) {
		/* an index into the file table, whose entry 0 is its length */
		if (fno == 0 || (uint32_t)fno >= t->nfiles ||
		    !rd32(t, t->filetab + 4 * (size_t)fno, &name))
			return fno == 0 ? -ENOENT : -EINVAL;
		*file = str(t, 0, name);
	} else {
		/* an index into the function's unit's slice of the unit table */
		if (!field(t, f->off, F_CU, &cu) ||
		    (uint64_t)cu + (uint32_t)fno > (SIZE_MAX - t->cutab) / 4 ||
		    !rd32(t, t->cutab + 4 * ((size_t)cu + (uint32_t)fno), &name))
			return -EINVAL;
		if (name == UINT32_MAX)
			return -ENOENT;
		*file = str(t, t->filetab, name);
	}
	return *file ? 0 : -EINVAL;
}

int tp_gotab_spdelta(const struct tp_gotab *t, const struct tp_gofunc *f,
		     uint64_t pc, int32_t *delta, uint64_t *until)
{
	uint32_t pcsp;

	if (pc < f->entry || pc >= f->end)
		return -ENOENT;
	if (!field(t, f->off, F_PCSP, &pcsp))
		return -EINVAL;
	return pcvalue(t, f, pcsp, pc, delta, until);
}

/* ------------------------------------------------------ inline trees */
/*
 *   _func    after the fields above: [1.20+: u32 start line], u8 funcID,
 *            u8 flag, u8 pad, u8 nfuncdata (1.16, 1.17: funcID, two pads,
 *            nfuncdata), then u32 pcdata[npcdata], pc-value table offsets,
 *            then funcdata[nfuncdata]: u32 offsets from moduledata.gofunc
 *            in 1.18+ (~0: none), before that 8-aligned pointers (0: none).
 *   inline   pcdata[2] gives, at a pc, the index of the inlined call the pc
 *            belongs to (-1: none) in the function's tree, funcdata[3]
 *            (funcdata[4] in 1.12-1.15).
 *            An entry's name offset and parent pc (the offset of an
 *            instruction at its call site in the caller) are at 12 and 16
 *            of 20 bytes before 1.20, at 4 and 8 of 16 bytes since.
 */

/* The size of a _func's fixed part, where its pcdata offsets begin. */
static size_t func_fixed(const struct tp_gotab *t)
{
	return t->layout == TP_GO_1_16 || t->layout == TP_GO_1_20 ? 44 : 40;
}

/* The value at @pc of @f's pc-value table pcdata[@i]. */
static int pcdata(const struct tp_gotab *t, const struct tp_gofunc *f, uint32_t i,
		  uint64_t pc, int32_t *value)
{
	uint32_t npcdata, off;

	if (!field(t, f->off, F_NPCDATA, &npcdata))
		return -EINVAL;
	if (i >= npcdata)
		return -ENOENT;
	if (!rd32(t, f->off + func_fixed(t) + 4 * (size_t)i, &off))
		return -EINVAL;
	return pcvalue(t, f, off, pc, value, NULL);
}

/* The link-time address of @f's inline tree, or 0: none. */
static uint64_t inline_tree(const struct tp_gotab *t, const struct tp_gofunc *f)
{
	/* _FUNCDATA_InlTree: 4 in Go 1.12-1.15 (before RegPointerMaps went) */
	size_t fixed = func_fixed(t), p, inl = t->layout == TP_GO_1_2 ? 4 : 3;
	uint32_t npcdata, off;
	uint64_t addr;

	if (!field(t, f->off, F_NPCDATA, &npcdata) || npcdata > GO_NPCDATA_MAX ||
	    fixed > t->size || f->off > t->size - fixed || t->data[f->off + fixed - 1] <= inl)
		return 0;
	p = f->off + fixed + 4 * (size_t)npcdata;
	if (new_rows(t))
		return t->gofunc && rd32(t, p + 4 * inl, &off) &&
		       off != UINT32_MAX ? t->gofunc + off : 0;
	if ((t->addr + p) & 4)		/* the pointers are 8-aligned in memory */
		p += 4;
	return rd64(t, p + 8 * inl, &addr) ? addr : 0;
}

/* Entry @ix of the inline tree at @tree: its name and its parent pc. */
static bool inline_entry(const struct tp_gotab *t, uint64_t tree, int32_t ix,
			 uint32_t *name, uint32_t *parent_pc)
{
	size_t size = t->layout >= TP_GO_1_20 ? 16 : 20;
	size_t at = t->layout >= TP_GO_1_20 ? 4 : 12;
	uint64_t off;

	if (tree < t->fdata_addr || tree - t->fdata_addr > t->fdata_size)
		return false;
	off = tree - t->fdata_addr;
	if ((t->fdata_size - off) / size <= (uint64_t)ix)
		return false;
	off += (uint64_t)ix * size;
	memcpy(name, t->fdata + off + at, 4);
	memcpy(parent_pc, t->fdata + off + at + 4, 4);
	return true;
}

static void frame_at(const struct tp_gotab *t, const struct tp_gofunc *f, uint64_t pc,
		     const char *name, struct tp_goframe *fr)
{
	fr->name = name ? name : "?";
	fr->file = NULL;
	fr->line = 0;
	if (tp_gotab_line(t, f, pc, &fr->file, &fr->line) != 0 || fr->line < 0) {
		fr->file = NULL;
		fr->line = 0;
	}
}

int tp_gotab_frames(const struct tp_gotab *t, const struct tp_gofunc *f, uint64_t pc,
		    struct tp_goframe *fr, int max)
{
	uint64_t tree;
	int n = 0;

	if (pc < f->entry || pc >= f->end)
		return -ENOENT;
	if (max < 1)
		return -EINVAL;
	tree = t->fdata ? inline_tree(t, f) : 0;
	/*
	 * Out from the innermost inlined call to its call site, while there
	 * is one: each step is a frame, at most max - 1 of them. A tree that
	 * does not hold together ends the chain where it breaks.
	 */
	while (tree && n < max - 1) {
		uint32_t name, parent_pc;
		int32_t ix;

		if (pcdata(t, f, PCDATA_INLTREE, pc, &ix) != 0 || ix < 0 ||
		    !inline_entry(t, tree, ix, &name, &parent_pc) ||
		    parent_pc >= f->end - f->entry)
			break;
		frame_at(t, f, pc, str(t, t->funcnames, name), &fr[n++]);
		pc = f->entry + parent_pc;
	}
	frame_at(t, f, pc, f->name, &fr[n]);
	return n + 1;
}

/* ------------------------------------------------------ in an ELF file */

static Elf_Scn *section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) && ++n < 65536) {
		GElf_Shdr sh;
		const char *s;

		if (gelf_getshdr(scn, &sh) && (s = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(s, name))
			return sh.sh_type == SHT_NOBITS ? NULL : scn;
	}
	return NULL;
}

/* The table of @elf into @t, as tp_gotab_elf() but for the text start. */
static int find_table(Elf *elf, int fd, struct tp_gotab *t, void **image)
{
	static const char *const names[] = { ".gopclntab", ".data.rel.ro.gopclntab" };
	size_t nphdr, shnum;

	if (image)
		*image = NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Elf_Scn *scn = section(elf, names[i]);
		Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
		GElf_Shdr sh;

		if (!scn)
			continue;
		if (!d || !d->d_buf || !gelf_getshdr(scn, &sh) ||
		    tp_gotab_open(t, d->d_buf, d->d_size) != 0)
			return -ENOENT;
		t->addr = sh.sh_addr;
		return 0;
	}
	/* Only a file without section headers is searched: others have none. */
	if (fd < 0 || !image || elf_getshdrnum(elf, &shnum) != 0 || shnum ||
	    elf_getphdrnum(elf, &nphdr) != 0)
		return -ENOENT;
	for (size_t i = 0; i < nphdr && i < 1024; i++) {
		GElf_Phdr ph;
		uint8_t *buf;
		long at;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    (ph.p_flags & PF_X) || !ph.p_filesz || ph.p_filesz > GO_SCAN_MAX)
			continue;
		buf = malloc(ph.p_filesz);
		if (!buf)
			return -ENOMEM;
		if (pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz &&
		    (at = tp_gotab_find(buf, ph.p_filesz)) >= 0 &&
		    tp_gotab_open(t, buf + at, ph.p_filesz - (size_t)at) == 0) {
			t->addr = ph.p_vaddr + (uint64_t)at;
			*image = buf;
			return 0;
		}
		free(buf);
	}
	return -ENOENT;
}

/*
 * The file bytes of the loadable segment of @elf holding @addr, from @addr
 * (from the segment's start when @from_start) to the segment's end or to
 * @stop, at most GO_SCAN_MAX, malloc'ed into *@buf; *@at gets the address
 * they start at. Returns how many, 0 when no segment holds @addr.
 */
static size_t segment_read(Elf *elf, int fd, uint64_t addr, bool from_start, uint64_t stop,
			   uint8_t **buf, uint64_t *at)
{
	size_t nphdr;

	*buf = NULL;
	if (elf_getphdrnum(elf, &nphdr) != 0)
		return 0;
	for (size_t i = 0; i < nphdr && i < 1024; i++) {
		GElf_Phdr ph;
		uint64_t skip;
		size_t n;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		skip = from_start ? 0 : addr - ph.p_vaddr;
		n = ph.p_filesz - skip > GO_SCAN_MAX ? GO_SCAN_MAX : (size_t)(ph.p_filesz - skip);
		if (stop > ph.p_vaddr + skip && stop - (ph.p_vaddr + skip) < n)
			n = (size_t)(stop - (ph.p_vaddr + skip));
		*buf = malloc(n);
		if (*buf && pread(fd, *buf, n, (off_t)(ph.p_offset + skip)) == (ssize_t)n) {
			*at = ph.p_vaddr + skip;
			return n;
		}
		free(*buf);
		*buf = NULL;
		return 0;
	}
	return 0;
}

/*
 * The first @n words of the runtime's module data (runtime.firstmoduledata),
 * in a writable segment: the record that points to the table and to its
 * name, unit, file and pc-value tables (words 0, 1, 4, 7 and 10: slices
 * are three words). False when none is found.
 */
static bool find_moduledata(Elf *elf, int fd, const struct tp_gotab *t, uint64_t *words,
			    size_t n)
{
	const uint64_t want[][2] = {
		{ 0, t->addr }, { 1, t->addr + t->funcnames }, { 4, t->addr + t->cutab },
		{ 7, t->addr + t->filetab }, { 10, t->addr + t->pctab },
	};
	size_t nphdr;
	bool found = false;

	if (fd < 0 || !t->addr || elf_getphdrnum(elf, &nphdr) != 0)
		return false;
	for (size_t i = 0; i < nphdr && i < 1024 && !found; i++) {
		GElf_Phdr ph;
		uint64_t base;
		uint8_t *buf;
		size_t len;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_W) || !ph.p_filesz)
			continue;
		len = segment_read(elf, fd, ph.p_vaddr, true, 0, &buf, &base);
		for (size_t off = (8 - base % 8) % 8; len >= 8 * n && off <= len - 8 * n && !found;
		     off += 8) {
			uint64_t w;
			size_t k;

			for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
				memcpy(&w, buf + off + 8 * want[k][0], 8);
				if (w != want[k][1])
					break;
			}
			if (k == sizeof(want) / sizeof(want[0])) {
				memcpy(words, buf + off, 8 * n);
				found = true;
			}
		}
		free(buf);
	}
	return found;
}

/*
 * The minor version of the Go that linked @elf (27 for go1.27), from the
 * build information the linker writes (since Go 1.18 the version string
 * follows the 32-byte header "\xff Go buildinf:", ptrsize, flags bit 1,
 * as a varint-prefixed string) in a writable segment; 0 when unknown.
 */
static int go_minor(Elf *elf, int fd)
{
	static const char magic[] = "\xff Go buildinf:";
	size_t nphdr;
	int minor = 0;

	if (fd < 0 || elf_getphdrnum(elf, &nphdr) != 0)
		return 0;
	for (size_t i = 0; i < nphdr && i < 1024 && !minor; i++) {
		GElf_Phdr ph;
		uint8_t hdr[64];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_W) || ph.p_filesz < sizeof(hdr))
			continue;
		/* The linker puts .go.buildinfo first in the segment, 16-aligned. */
		for (uint64_t off = 0; off + sizeof(hdr) <= ph.p_filesz && off < 4096 && !minor;
		     off += 16) {
			if (pread(fd, hdr, sizeof(hdr), (off_t)(ph.p_offset + off)) !=
			    (ssize_t)sizeof(hdr))
				break;
			if (memcmp(hdr, magic, 14) || hdr[14] != 8 || !(hdr[15] & 2) ||
			    hdr[32] >= 0x80 || hdr[32] < 5 || hdr[32] > sizeof(hdr) - 34)
				continue;
			hdr[33 + hdr[32]] = '\0';
			if (sscanf((const char *)hdr + 33, "go1.%d", &minor) != 1 || minor < 0)
				minor = 0;
		}
	}
	return minor;
}

/*
 * moduledata.gofunc (Go 1.18 on), what funcdata offsets count from: word
 * 38 of the module data in 1.18 and 1.19, 40 from 1.20 (coverage counters
 * added), 43 from 1.27 (type descriptor and itab fields added). 0 when
 * not found.
 */
static uint64_t find_gofunc(Elf *elf, int fd, const struct tp_gotab *t)
{
	uint64_t words[44];
	size_t at = 38;

	if (t->layout >= TP_GO_1_20)
		at = go_minor(elf, fd) >= 27 ? 43 : 40;
	return find_moduledata(elf, fd, t, words, at + 1) ? words[at] : 0;
}

int tp_gotab_inline(Elf *elf, int fd, struct tp_gotab *t)
{
	uint64_t where = 0, at;
	uint8_t *buf;
	size_t n;

	if (fd < 0 || !t->addr || t->fdata)
		return t->fdata ? 0 : -ENOENT;
	if (new_rows(t)) {
		t->gofunc = find_gofunc(elf, fd, t);
		where = t->gofunc;
	} else {
		/* the first tree any function points to: its segment holds all */
		for (uint32_t i = 0; i < t->nfunc && !where; i++) {
			struct tp_gofunc f;

			if (tp_gotab_nth(t, i, &f) == 0)
				where = inline_tree(t, &f);
		}
	}
	if (!where)
		return -ENOENT;
	/* The trees lie before the table when one segment holds both. */
	n = segment_read(elf, fd, where, !new_rows(t), where < t->addr ? t->addr : 0,
			 &buf, &at);
	if (!n)
		return -ENOENT;
	t->fdata = buf;
	t->fdata_size = n;
	t->fdata_addr = at;
	return 0;
}

int tp_gotab_elf(Elf *elf, int fd, struct tp_gotab *t, void **image)
{
	int err = find_table(elf, fd, t, image);
	uint64_t words[23];
	Elf_Scn *text;
	GElf_Shdr sh;

	/*
	 * Go 1.27 on leave the header's text start 0 (it took a relocation):
	 * the start of .text, else the module data's text (word 22).
	 */
	if (err || !new_rows(t) || t->text)
		return err;
	text = section(elf, ".text");
	if (text && gelf_getshdr(text, &sh))
		t->text = sh.sh_addr;
	else if (find_moduledata(elf, fd, t, words, 23))
		t->text = words[22];
	if (t->text)
		return 0;
	if (image) {
		free(*image);
		*image = NULL;
	}
	return -ENOENT;
}

void tp_gotab_close(struct tp_gotab *t)
{
	free((void *)t->fdata);
	t->fdata = NULL;
	t->fdata_size = 0;
}
