// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer: a pc becomes frames {function, file, line, mapping,
 * build ID}, several for one pc when code was inlined (innermost first).
 *
 * User pcs: the process model finds the mapping and its ELF file (cached);
 * on first use this file gets, once, a sorted symbol table (its .symtab,
 * else that of a separate debug file, else .dynsym) and, when DWARF is
 * there, a libdw handle for inline chains and file:line. A Go binary's own
 * function table (.gopclntab, kept by stripped binaries too) names its
 * functions, files and lines instead, and its inline trees the functions
 * inlined at a pc. Separate debug
 * files are found by build ID (/usr/lib/debug/.build-id/xx/rest.debug)
 * and by .gnu_debuglink (next to the file, in .debug/, under
 * /usr/lib/debug/DIR/; CRC checked), each first inside the process's root,
 * then in ours. C++ names are demangled with libstdc++'s __cxa_demangle,
 * loaded at run time. JIT code comes from the process's perf map. Kernel
 * pcs come from the kallsyms table (lib/kernel/ksyms.c).
 *
 * Bounds: per ELF file at most TP_SYMS_MAX symbols, one debug file and one
 * libdw handle, all freed when the ELF cache evicts the file; at most
 * TP_INLINE_MAX frames per pc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <zlib.h>

#include "process/process-private.h"
#include "runtime/runtime.h"

/* ------------------------------------------------------- demangling */

typedef char *(*tp_cxa_demangle_fn)(const char *mangled, char *buf, size_t *len,
				    int *status);

static tp_cxa_demangle_fn tp_cxa_demangle;
static pthread_once_t tp_demangle_once = PTHREAD_ONCE_INIT;

static void tp_demangle_load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	void *sym = h ? dlsym(h, "__cxa_demangle") : NULL;

	/* Kept loaded for the life of the process. */
	if (sym)
		memcpy(&tp_cxa_demangle, &sym, sizeof(sym));
}

char *tp_demangle(const char *name)
{
	int status = -1;
	char *out;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	pthread_once(&tp_demangle_once, tp_demangle_load);
	if (!tp_cxa_demangle)
		return NULL;
	out = tp_cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ------------------------------------------------------ symbol tables */

struct tp_symbol {
	uint64_t addr, size;
	const char *name;		/* in libelf's string table data */
	uint8_t bind, type;
};

struct tp_elfsym {
	struct tp_symbol *syms;		/* sorted by addr, one per addr */
	size_t nr;
	const char *source;		/* "symtab", "debug", "dynsym", "none" */
	struct taproot_elf *debug;	/* separate debug file, owned */
	char *debug_path;		/* "" when none */
	Dwarf *dwarf;			/* over debug or the file; NULL: none */
	bool dwarf_tried;
	/*
	 * The DWARF functions (concrete subprograms) by address range, indexed
	 * one compilation unit at a time, when a pc first falls in it: a pc's
	 * function is then a binary search away, and only its own subtree is
	 * walked for inlined subroutines.
	 */
	struct tp_dwfn *fns;
	size_t nr_fns, alloc_fns;	/* sorted by lo */
	uint64_t *cus;			/* offsets of the CUs indexed, sorted */
	size_t nr_cus, alloc_cus;
	/* A debuginfod fetch of the debug file was under way at generation: */
	bool debug_pending;
	uint64_t debug_generation;
	/* Go's function table (tp_gotab_elf()), and the bytes it read, owned */
	struct tp_gotab go;
	bool has_go;
	void *go_image;
};

struct tp_dwfn {
	uint64_t lo, hi;		/* [lo, hi) */
	uint64_t die;			/* DIE offset */
};

/* Free what this file attached to an ELF file (its sym_free). */
static void tp_elfsym_free(struct tp_elfsym *s)
{
	if (!s)
		return;
	if (s->dwarf)
		dwarf_end(s->dwarf);
	tp_elf_free(s->debug);
	free(s->fns);
	free(s->cus);
	free(s->syms);
	free(s->debug_path);
	tp_gotab_close(&s->go);
	free(s->go_image);
	free(s);
}

static Elf_Scn *tp_find_section(Elf *elf, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, count = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) && ++count < 65536) {
		const char *n;

		if (!gelf_getshdr(scn, out))
			continue;
		n = elf_strptr(elf, shstrndx, out->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static Elf_Scn *tp_find_section_type(Elf *elf, uint32_t type, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t count = 0;

	while ((scn = elf_nextscn(elf, scn)) && ++count < 65536)
		if (gelf_getshdr(scn, out) && out->sh_type == type && out->sh_size)
			return scn;
	return NULL;
}

static bool tp_has_debug_info(Elf *elf)
{
	GElf_Shdr sh;

	if (tp_find_section(elf, ".debug_info", &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size)
		return true;
	return tp_find_section(elf, ".zdebug_info", &sh) && sh.sh_type != SHT_NOBITS;
}

/*
 * Whether the DWARF string sections of @elf end with a NUL. libdw (0.188)
 * reads the DW_FORM_line_strp names of .debug_line_str with strlen() and
 * no bound, so a section whose last string is not terminated is read past
 * its end: a heap overflow in dwarf_getsrclines() that tests/fuzz/fuzz_elf
 * found with a file whose last byte of .debug_line_str was not 0. Such a
 * file's DWARF is not used; its symbol table still is. Compressed
 * sections are decompressed first, as dwarf_begin_elf() would.
 */
static bool tp_dwarf_strings_ok(Elf *elf)
{
	static const char *const names[] = {
		".debug_str", ".debug_line_str", ".zdebug_str", ".zdebug_line_str",
	};
	GElf_Shdr sh;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Elf_Scn *scn = tp_find_section(elf, names[i], &sh);
		Elf_Data *data;

		if (!scn || sh.sh_type == SHT_NOBITS)
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return false;
		if (names[i][1] == 'z' && elf_compress_gnu(scn, 0, 0) < 0)
			return false;
		data = elf_getdata(scn, NULL);
		if (data && data->d_size && ((const char *)data->d_buf)[data->d_size - 1])
			return false;
	}
	return true;
}

static unsigned int tp_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int tp_bind_rank(uint8_t bind)
{
	switch (bind) {
	case STB_GLOBAL:	return 0;
	case STB_WEAK:		return 1;
	case STB_LOCAL:		return 2;
	default:		return 3;
	}
}

/*
 * By address; at one address the preferred name first: global over weak
 * over local, FUNC over IFUNC, fewer leading underscores ("printf" over
 * "_IO_printf"), shorter, then by bytes: deterministic.
 */
static int tp_symbol_cmp(const void *a, const void *b)
{
	const struct tp_symbol *x = a, *y = b;
	unsigned int ux, uy;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (tp_bind_rank(x->bind) != tp_bind_rank(y->bind))
		return tp_bind_rank(x->bind) - tp_bind_rank(y->bind);
	if (x->type != y->type)
		return x->type == STT_FUNC ? -1 : 1;
	/* "fopen" over its versioned "fopen@@GLIBC_2.2.5" */
	if (!strchr(x->name, '@') != !strchr(y->name, '@'))
		return strchr(x->name, '@') ? 1 : -1;
	ux = tp_underscores(x->name);
	uy = tp_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Add the function symbols of symbol table @scn of @elf to @s. */
static int tp_symtab_add(struct tp_elfsym *s, size_t *alloc, Elf *elf, Elf_Scn *scn,
			 const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;

	if (!data || !sh->sh_entsize || sh->sh_type == SHT_NOBITS)
		return 0;
	n = data->d_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		uint8_t type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		if (s->nr == TP_SYMS_MAX)
			return tp_err(-E2BIG, "more than %u symbols", TP_SYMS_MAX);
		if (s->nr == *alloc) {
			size_t a = *alloc ? *alloc * 2 : 1024;
			struct tp_symbol *ns = realloc(s->syms, a * sizeof(*ns));

			if (!ns)
				return tp_err(-ENOMEM, NULL);
			s->syms = ns;
			*alloc = a;
		}
		s->syms[s->nr++] = (struct tp_symbol){
			.addr = sym.st_value, .size = sym.st_size, .name = name,
			.bind = GELF_ST_BIND(sym.st_info), .type = type,
		};
	}
	return 0;
}

/* Sort and keep one symbol per address, the preferred one. */
static void tp_symtab_finish(struct tp_elfsym *s)
{
	size_t i, o;

	if (s->nr)
		qsort(s->syms, s->nr, sizeof(*s->syms), tp_symbol_cmp);
	for (i = 0, o = 0; i < s->nr; i++) {
		if (o && s->syms[o - 1].addr == s->syms[i].addr) {
			if (!s->syms[o - 1].size)
				s->syms[o - 1].size = s->syms[i].size;
			continue;
		}
		s->syms[o++] = s->syms[i];
	}
	s->nr = o;
}

int tp_file_crc32(int fd, uint32_t *crc)
{
	static const size_t chunk = 1 << 16;
	unsigned char *buf = malloc(chunk);
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while ((n = pread(fd, buf, chunk, off)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			free(buf);
			return (int)n;
		}
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	free(buf);
	*crc = (uint32_t)c;
	return 0;
}

/* .gnu_debuglink of @elf: the file name (a plain name) and its CRC. */
static bool tp_debuglink(Elf *elf, char *name, size_t len, uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = tp_find_section(elf, ".gnu_debuglink", &sh);
	Elf_Data *data;
	const char *ident;
	size_t n, off;
	uint32_t c;

	if (!scn || sh.sh_type == SHT_NOBITS || !(data = elf_rawdata(scn, NULL)) || !data->d_buf)
		return false;
	n = strnlen(data->d_buf, data->d_size);
	if (!n || n >= len || n == data->d_size)
		return false;
	off = (n + 4) & ~(size_t)3;
	if (off + 4 > data->d_size)
		return false;
	memcpy(name, data->d_buf, n + 1);
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	memcpy(&c, (const char *)data->d_buf + off, 4);
	ident = elf_getident(elf, NULL);
	if (ident && ident[EI_DATA] == ELFDATA2MSB)
		c = __builtin_bswap32(c);
	*crc = c;
	return true;
}

/*
 * Open @path as the debug file of @e, if it is one: a different file,
 * with @e's build ID when @e has one, else with the debuglink CRC @crc
 * (@check_crc).
 */
static struct taproot_elf *tp_try_debug(struct taproot_elf *e, const char *path,
					bool check_crc, uint32_t crc)
{
	struct taproot_elf *d;
	uint32_t got;

	if (tp_elf_open(path, false, &d))
		return NULL;
	if (d->dev == e->dev && d->ino == e->ino)
		goto reject;		/* the file itself */
	if (e->build_id_len) {
		if (d->build_id_len == e->build_id_len &&
		    !memcmp(d->build_id, e->build_id, e->build_id_len))
			return d;
		if (d->build_id_len)
			goto reject;	/* another build */
	}
	if (!check_crc || d->size > TP_DEBUG_FILE_MAX || tp_file_crc32(d->fd, &got) || got != crc)
		goto reject;
	return d;
reject:
	tp_elf_free(d);
	return NULL;
}

/* Find a separate debug file for @e; sets s->debug and s->debug_path. */
static void tp_find_debug(struct taproot_elf *e, struct tp_elfsym *s)
{
	const char *roots[2] = { e->root ? e->root : "", "" };
	char path[PATH_MAX], link[256], dir[PATH_MAX], hex[2 * TP_BUILD_ID_MAX + 1];
	size_t i, r, nroots = roots[0][0] ? 2 : 1;
	uint32_t crc = 0;
	bool has_link;
	char *slash;

	if (e->fd < 0 || !e->name || e->name[0] != '/')
		return;
	if (e->build_id_len >= 2) {
		for (i = 0; i < e->build_id_len; i++)
			sprintf(hex + 2 * i, "%02x", e->build_id[i]);
		for (r = 0; r < nroots && !s->debug; r++) {
			snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
				 roots[r], hex, hex + 2);
			s->debug = tp_try_debug(e, path, false, 0);
		}
	}
	has_link = tp_debuglink(e->elf, link, sizeof(link), &crc);
	if (!s->debug && has_link) {
		snprintf(dir, sizeof(dir), "%s", e->name);
		slash = strrchr(dir, '/');
		slash[slash == dir ? 1 : 0] = '\0';	/* "/x" -> "/" */
		if (!strcmp(dir, "/"))
			dir[0] = '\0';
		for (r = 0; r < nroots && !s->debug; r++) {
			for (i = 0; i < 3 && !s->debug; i++) {
				int n;

				if (i == 0)
					n = snprintf(path, sizeof(path), "%s%s/%s", roots[r], dir, link);
				else if (i == 1)
					n = snprintf(path, sizeof(path), "%s%s/.debug/%s", roots[r], dir,
						     link);
				else
					n = snprintf(path, sizeof(path), "%s/usr/lib/debug%s/%s",
						     roots[r], dir, link);
				if (n < 0 || (size_t)n >= sizeof(path))
					continue;
				s->debug = tp_try_debug(e, path, true, crc);
			}
		}
	}
	if (s->debug)
		s->debug_path = strdup(s->debug->path);
}

/*
 * The debug file of @e from the debuginfod servers of @dbg, when @e has a
 * build ID and none was found here: s->debug, or a fetch under way noted.
 */
static void tp_find_debug_remote(struct taproot_elf *e, struct taproot_debuginfod *dbg,
				 struct tp_elfsym *s)
{
	char path[PATH_MAX];
	int rc;

	if (s->debug || !dbg || !e->build_id_len)
		return;
	s->debug_generation = taproot_debuginfod_generation(dbg);
	rc = taproot_debuginfod_find(dbg, e->build_id, e->build_id_len, path, sizeof(path));
	s->debug_pending = rc == -EAGAIN;
	if (rc == 0)
		s->debug = tp_try_debug(e, path, false, 0);
}

/*
 * Whether the debuginfod fetch @s waits for has ended since it was noted:
 * then what @s holds is rebuilt, with the file if it came.
 */
static bool tp_debug_arrived(struct taproot_elf *e, struct taproot_debuginfod *dbg,
			     struct tp_elfsym *s)
{
	char path[PATH_MAX];
	uint64_t gen;

	if (!s->debug_pending || !dbg)
		return false;
	gen = taproot_debuginfod_generation(dbg);
	if (gen == s->debug_generation)
		return false;
	s->debug_generation = gen;
	if (taproot_debuginfod_find(dbg, e->build_id, e->build_id_len, path,
				    sizeof(path)) == -EAGAIN)
		return false;
	return true;
}

/* Build what symbolization of @e needs, once (again when debug info arrives). */
static int tp_elfsym_get(struct taproot_elf *e, struct taproot_debuginfod *dbg,
			 struct tp_elfsym **sp)
{
	struct tp_elfsym *s;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t alloc = 0;
	int err = 0;

	if (e->sym && tp_debug_arrived(e, dbg, e->sym)) {
		tp_elfsym_free(e->sym);
		e->sym = NULL;
	}
	if (e->sym) {
		*sp = e->sym;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return tp_err(-ENOMEM, NULL);
	s->source = "none";
	if (!tp_find_section_type(e->elf, SHT_SYMTAB, &sh) || !tp_has_debug_info(e->elf)) {
		tp_find_debug(e, s);
		tp_find_debug_remote(e, dbg, s);
	}

	if ((scn = tp_find_section_type(e->elf, SHT_SYMTAB, &sh))) {
		err = tp_symtab_add(s, &alloc, e->elf, scn, &sh);
		s->source = "symtab";
	} else if (s->debug && (scn = tp_find_section_type(s->debug->elf, SHT_SYMTAB, &sh)) &&
		   sh.sh_type != SHT_NOBITS) {
		err = tp_symtab_add(s, &alloc, s->debug->elf, scn, &sh);
		s->source = "debug";
	}
	if (!err && !s->nr && (scn = tp_find_section_type(e->elf, SHT_DYNSYM, &sh))) {
		err = tp_symtab_add(s, &alloc, e->elf, scn, &sh);
		s->source = "dynsym";
	}
	if (err && err != -E2BIG) {
		tp_elfsym_free(s);
		return err;
	}
	tp_symtab_finish(s);
	/* Go's table, over libelf's data of @e (which outlives s) or go_image */
	s->has_go = tp_gotab_elf(e->elf, e->fd, &s->go, &s->go_image) == 0;
	if (s->has_go)
		(void)tp_gotab_inline(e->elf, e->fd, &s->go);	/* else no inlined frames */
	if (!s->debug_path)
		s->debug_path = strdup("");
	if (!s->debug_path) {
		tp_elfsym_free(s);
		return tp_err(-ENOMEM, NULL);
	}
	e->sym = s;
	e->sym_free = tp_elfsym_free;
	*sp = s;
	return 0;
}

static const struct tp_symbol *tp_symtab_lookup(const struct tp_elfsym *s, uint64_t vaddr)
{
	size_t lo = 0, hi = s->nr, mid, i;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Sizes are respected: a pc past a symbol's end is not in it. */
	for (i = lo; i > 0 && lo - i < 4; i--) {
		const struct tp_symbol *sym = &s->syms[i - 1];

		if (sym->size) {
			if (vaddr - sym->addr < sym->size)
				return sym;
		} else if (i == lo && (lo == s->nr || vaddr < s->syms[lo].addr) &&
			   vaddr - sym->addr < 4096) {
			/* No size (assembly): up to the next symbol, within a page. */
			return sym;
		}
	}
	return NULL;
}

const char *tp_elf_symbol(struct taproot_elf *e, uint64_t vaddr, uint64_t *off,
			  const char **which)
{
	const struct tp_symbol *sym;
	struct tp_elfsym *s;

	if (tp_elfsym_get(e, NULL, &s))
		return NULL;
	if (which)
		*which = s->source;
	sym = tp_symtab_lookup(s, vaddr);
	if (!sym)
		return NULL;
	if (off)
		*off = vaddr - sym->addr;
	return sym->name;
}

const char *tp_elf_debug_path(struct taproot_elf *e)
{
	struct tp_elfsym *s;

	return tp_elfsym_get(e, NULL, &s) ? "" : s->debug_path;
}

static Dwarf *tp_elf_dwarf(struct taproot_elf *e, struct tp_elfsym *s)
{
	if (!s->dwarf_tried) {
		s->dwarf_tried = true;
		if (s->debug && tp_has_debug_info(s->debug->elf)) {
			if (tp_dwarf_strings_ok(s->debug->elf))
				s->dwarf = dwarf_begin_elf(s->debug->elf, DWARF_C_READ, NULL);
		} else if (tp_has_debug_info(e->elf) && tp_dwarf_strings_ok(e->elf)) {
			s->dwarf = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL);
		}
	}
	return s->dwarf;
}

/* ----------------------------------------------- DWARF function index */

#define TP_DWFNS_MAX	(4u << 20)	/* function ranges per ELF file */
#define TP_DW_DEPTH	64		/* DIE nesting walked */

static int tp_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int tp_dwfn_cmp(const void *a, const void *b)
{
	const struct tp_dwfn *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int tp_dwfn_add(struct tp_elfsym *s, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int n = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0 && n++ < 1024) {
		if (hi <= lo)
			continue;
		if (s->nr_fns == TP_DWFNS_MAX)
			return -E2BIG;
		if (s->nr_fns == s->alloc_fns) {
			size_t a = s->alloc_fns ? s->alloc_fns * 2 : 256;
			struct tp_dwfn *f = realloc(s->fns, a * sizeof(*f));

			if (!f)
				return -ENOMEM;
			s->fns = f;
			s->alloc_fns = a;
		}
		s->fns[s->nr_fns++] = (struct tp_dwfn){
			.lo = lo, .hi = hi, .die = dwarf_dieoffset(die),
		};
	}
	return 0;
}

/*
 * Record the concrete functions among the children of @parent: the
 * subprograms with code, and those in namespaces, classes and the like.
 */
static int tp_dwfn_walk(struct tp_elfsym *s, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	int err, res;

	if (depth > TP_DW_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			err = tp_dwfn_add(s, &child);
			if (err)
				return err;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			err = tp_dwfn_walk(s, &child, depth + 1);
			if (err)
				return err;
			break;
		default:
			break;
		}
	} while ((res = dwarf_siblingof(&child, &child)) == 0);
	return 0;
}

/* Index the CU @cu once. */
static int tp_dwfn_index_cu(struct tp_elfsym *s, Dwarf_Die *cu)
{
	uint64_t off = dwarf_dieoffset(cu);
	size_t old;
	int err;

	if (s->nr_cus && bsearch(&off, s->cus, s->nr_cus, sizeof(*s->cus), tp_u64_cmp))
		return 0;
	if (s->nr_cus == s->alloc_cus) {
		size_t a = s->alloc_cus ? s->alloc_cus * 2 : 64;
		uint64_t *c = realloc(s->cus, a * sizeof(*c));

		if (!c)
			return -ENOMEM;
		s->cus = c;
		s->alloc_cus = a;
	}
	s->cus[s->nr_cus++] = off;
	qsort(s->cus, s->nr_cus, sizeof(*s->cus), tp_u64_cmp);
	old = s->nr_fns;
	err = tp_dwfn_walk(s, cu, 0);
	if (err && err != -E2BIG)
		return err;
	/* Sort the CU's functions, merge them with the sorted others. */
	if (s->nr_fns > old) {
		struct tp_dwfn *merged;
		size_t i = 0, j = old, k = 0;

		qsort(s->fns + old, s->nr_fns - old, sizeof(*s->fns), tp_dwfn_cmp);
		if (old && tp_dwfn_cmp(&s->fns[old - 1], &s->fns[old]) > 0) {
			merged = malloc(s->nr_fns * sizeof(*merged));
			if (!merged) {
				s->nr_fns = old;
				return -ENOMEM;
			}
			while (i < old && j < s->nr_fns)
				merged[k++] = tp_dwfn_cmp(&s->fns[i], &s->fns[j]) <= 0 ?
					      s->fns[i++] : s->fns[j++];
			while (i < old)
				merged[k++] = s->fns[i++];
			while (j < s->nr_fns)
				merged[k++] = s->fns[j++];
			free(s->fns);
			s->fns = merged;
			s->alloc_fns = s->nr_fns;
		}
	}
	return 0;
}

/*
 * The DWARF chain of @vaddr into @chain (innermost first): inlined
 * subroutines, then the function they were inlined into. Returns the
 * number of DIEs (0: no function known).
 */
static int tp_dwfn_chain(struct tp_elfsym *s, Dwarf_Die *cu, uint64_t vaddr,
			 Dwarf_Die *chain, int max)
{
	Dwarf_Die die, child, stack[TP_INLINE_MAX];
	size_t lo = 0, hi, mid;
	int n = 0, i, steps = 0;
	bool found = false;

	if (tp_dwfn_index_cu(s, cu) == -ENOMEM)
		return 0;
	hi = s->nr_fns;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->fns[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; lo > 0 && i < 4; lo--, i++) {
		if (vaddr < s->fns[lo - 1].hi) {
			found = dwarf_offdie(s->dwarf, s->fns[lo - 1].die, &die) != NULL;
			break;
		}
	}
	if (!found)
		return 0;
	stack[n++] = die;
	/* Down the blocks and inlined subroutines holding @vaddr. */
	for (;;) {
		bool deeper = false;

		if (dwarf_child(&die, &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if (++steps > 100000)
				break;
			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
			     tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
			    dwarf_haspc(&child, vaddr) > 0) {
				if (tag == DW_TAG_inlined_subroutine && n < TP_INLINE_MAX)
					stack[n++] = child;
				die = child;
				deeper = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!deeper || steps > 100000)
			break;
	}
	for (i = 0; i < n && i < max; i++)
		chain[i] = stack[n - 1 - i];
	return i;
}

/* ------------------------------------------------------- the symbolizer */

/*
 * Strings a call returns that nobody else owns: freed by the next call.
 * A JVM's inline chain takes two a frame (its name and its file).
 */
#define TP_SCRATCH_MAX	(2 * TP_INLINE_MAX + 4)

struct taproot_sym {
	struct taproot_procs *procs;
	const struct taproot_ksyms *ksyms;
	struct taproot_debuginfod *debuginfod;	/* NULL: none; borrowed */
	uint8_t kernel_build_id[TP_BUILD_ID_MAX];	/* from /sys/kernel/notes */
	size_t kernel_build_id_len;
	struct taproot_frame frames[TP_INLINE_MAX];
	char *scratch[TP_SCRATCH_MAX];
	size_t nr_scratch;
};

size_t tp_notes_build_id(const uint8_t *buf, size_t len, uint8_t *id, size_t max)
{
	size_t off = 0;

	/* Elf{32,64}_Nhdr: namesz, descsz, type; name and desc 4-aligned. */
	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_len, desc_len;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		name_len = ((size_t)namesz + 3) & ~(size_t)3;
		desc_len = ((size_t)descsz + 3) & ~(size_t)3;
		if (namesz > len || descsz > len || name_len > len - off ||
		    desc_len > len - off - name_len)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + off, "GNU", 4) &&
		    descsz && descsz <= max) {
			memcpy(id, buf + off + name_len, descsz);
			return descsz;
		}
		off += name_len + desc_len;
	}
	return 0;
}

/* The running kernel's build ID, from /sys/kernel/notes. */
static size_t tp_kernel_build_id(uint8_t *id, size_t max)
{
	uint8_t buf[4096];
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? tp_notes_build_id(buf, (size_t)n, id, max) : 0;
}

int taproot_sym_new(struct taproot_procs *procs, const struct taproot_ksyms *ksyms,
		    struct taproot_sym **sp)
{
	struct taproot_sym *s = calloc(1, sizeof(*s));

	*sp = NULL;
	if (!s)
		return tp_err(-ENOMEM, NULL);
	s->procs = procs;
	s->ksyms = ksyms;
	if (ksyms)
		s->kernel_build_id_len = tp_kernel_build_id(s->kernel_build_id,
							    sizeof(s->kernel_build_id));
	*sp = s;
	return 0;
}

void taproot_sym_set_debuginfod(struct taproot_sym *s, struct taproot_debuginfod *d)
{
	s->debuginfod = d;
}

static void tp_sym_reset(struct taproot_sym *s)
{
	size_t i;

	for (i = 0; i < s->nr_scratch; i++)
		free(s->scratch[i]);
	s->nr_scratch = 0;
	memset(s->frames, 0, sizeof(s->frames));
}

void taproot_sym_free(struct taproot_sym *s)
{
	if (!s)
		return;
	tp_sym_reset(s);
	free(s);
}

/* Keep @str (malloc'ed) until the next call; NULL when out of room. */
static const char *tp_sym_keep(struct taproot_sym *s, char *str)
{
	if (!str)
		return NULL;
	if (s->nr_scratch == TP_SCRATCH_MAX) {
		free(str);
		return NULL;
	}
	s->scratch[s->nr_scratch++] = str;
	return str;
}

static const char *tp_sym_printf(struct taproot_sym *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *tp_sym_printf(struct taproot_sym *s, const char *fmt, ...)
{
	va_list ap;
	char *str;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&str, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : tp_sym_keep(s, str);
}

/*
 * @name demangled (kept in scratch) or as it is, without a symbol version
 * ("fopen@@GLIBC_2.2.5" of a debug file's .symtab is "fopen").
 */
static const char *tp_sym_name(struct taproot_sym *s, const char *name)
{
	const char *at = strchr(name, '@'), *d;
	char *plain = NULL;

	if (at && at != name) {
		plain = strndup(name, (size_t)(at - name));
		if (plain)
			name = plain;
	}
	d = tp_sym_keep(s, tp_demangle(name));
	if (d) {
		free(plain);
		return d;
	}
	if (plain) {
		d = tp_sym_keep(s, plain);
		return d ? d : "[unknown]";
	}
	return name;
}

/* The name of a subprogram or inlined subroutine DIE, demangled. */
static const char *tp_die_name(struct taproot_sym *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) &&
	    (name = dwarf_formstring(&attr)))
		return tp_sym_name(s, name);
	if (dwarf_attr_integrate(die, DW_AT_name, &attr) && (name = dwarf_formstring(&attr)))
		return name;
	return NULL;
}

/* The call site of inlined subroutine @die: file and line. */
static void tp_call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file, unsigned int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word w;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_attr(die, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &w) &&
	    w <= UINT32_MAX)
		*line = (unsigned int)w;
	if (dwarf_attr(die, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &w) &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && w < nfiles)
		*file = dwarf_filesrc(files, w, NULL, NULL);
}

/*
 * The frames of Go code at @vaddr into @f (TP_INLINE_MAX of them), from
 * the binary's own table: the functions inlined there, innermost first,
 * then the function, each with its file and line when the table has them.
 * @f[0] holds the mapping's fields, copied to the others. Returns how
 * many, 0 when the table has no function there (C code of a cgo binary:
 * the symbols then).
 */
static int tp_sym_go_frames(const struct tp_elfsym *es, uint64_t vaddr, struct taproot_frame *f)
{
	struct tp_goframe gf[TP_INLINE_MAX];
	struct tp_gofunc fn;
	int n;

	if (tp_gotab_func(&es->go, vaddr, &fn) != 0 ||
	    (n = tp_gotab_frames(&es->go, &fn, vaddr, gf, TP_INLINE_MAX)) < 1)
		return 0;
	for (int i = 0; i < n; i++) {
		if (i > 0)
			f[i] = f[0];
		f[i].function = gf[i].name;
		f[i].file = gf[i].line > 0 ? gf[i].file : NULL;
		f[i].line = gf[i].line > 0 ? (unsigned int)gf[i].line : 0;
		f[i].inlined = i < n - 1;
		f[i].known = true;
		f[i].sym_offset = 0;
	}
	f[n - 1].sym_offset = vaddr - fn.entry;
	return n;
}

/*
 * Frames for ELF vaddr @vaddr of @e into s->frames: DWARF's inline chain
 * when there is one, else the symbol table's function; "[unknown]" when
 * neither knows. Returns the number of frames.
 */
static int tp_sym_elf_frames(struct taproot_sym *s, struct taproot_elf *e, uint64_t vaddr,
			     const char *map_path)
{
	struct taproot_frame outer, *f = s->frames, base = {
		.function = "[unknown]",
		.map_path = map_path,
		.build_id = e->build_id_len ? e->build_id : NULL,
		.build_id_len = e->build_id_len,
		.map_offset = vaddr,
	};
	const struct tp_symbol *sym = NULL;
	struct tp_elfsym *es;
	Dwarf_Die cudie, chain[TP_INLINE_MAX];
	Dwarf *dw;
	int i, nr;

	f[0] = base;
	if (tp_elfsym_get(e, s->debuginfod, &es))
		return 1;
	if (es->has_go && (nr = tp_sym_go_frames(es, vaddr, f)) > 0)
		return nr;
	sym = tp_symtab_lookup(es, vaddr);
	if (sym) {
		f[0].function = tp_sym_name(s, sym->name);
		f[0].sym_offset = vaddr - sym->addr;
		f[0].known = true;
	}
	dw = tp_elf_dwarf(e, es);
	if (!dw || !dwarf_addrdie(dw, vaddr, &cudie))
		return 1;

	/* The innermost line, for the innermost frame. */
	{
		Dwarf_Line *l = dwarf_getsrc_die(&cudie, vaddr);
		int lineno = 0;

		if (l) {
			f[0].file = dwarf_linesrc(l, NULL, NULL);
			if (!dwarf_lineno(l, &lineno) && lineno > 0)
				f[0].line = (unsigned int)lineno;
		}
	}

	nr = tp_dwfn_chain(es, &cudie, vaddr, chain, TP_INLINE_MAX);
	if (nr <= 1) {
		/* No inlining: the symbol's name, DWARF's when it has none. */
		if (nr == 1 && !sym) {
			const char *name = tp_die_name(s, &chain[0]);

			if (name) {
				f[0].function = name;
				f[0].known = true;
			}
		}
		return 1;
	}
	/*
	 * chain[0] is the innermost inlined subroutine, chain[nr - 1] the
	 * function it all was inlined into. Frame i > 0 is at the call site of
	 * frame i - 1; the last keeps the symbol table's name and offset.
	 */
	outer = f[0];
	for (i = 0; i < nr; i++) {
		const char *name;

		if (i > 0) {
			f[i] = base;
			tp_call_site(&cudie, &chain[i - 1], &f[i].file, &f[i].line);
		}
		f[i].inlined = i < nr - 1;
		if (i == nr - 1 && sym) {
			f[i].function = outer.function;
			f[i].sym_offset = outer.sym_offset;
			f[i].known = true;
			continue;
		}
		name = tp_die_name(s, &chain[i]);
		f[i].function = name ? name : "[unknown]";
		f[i].known = name != NULL;
		f[i].sym_offset = 0;
	}
	return nr;
}

/* One unknown frame. */
static int tp_sym_unknown(struct taproot_sym *s, const char *function, const char *map_path,
			  uint64_t offset)
{
	s->frames[0] = (struct taproot_frame){
		.function = function ? function : "[unknown]",
		.map_path = map_path ? map_path : "[unknown]",
		.map_offset = offset,
	};
	return 1;
}

/* The fixed entry points of the legacy vsyscall page. */
static const char *tp_vsyscall_name(uint64_t pc)
{
	switch ((pc - 0xffffffffff600000ull) >> 10) {
	case 0:	return "gettimeofday";
	case 1:	return "time";
	case 2:	return "getcpu";
	default: return NULL;
	}
}

int taproot_sym_elf(struct taproot_sym *s, struct taproot_elf *elf, uint64_t vaddr,
		    unsigned int flags, const struct taproot_frame **frames)
{
	tp_sym_reset(s);
	if ((flags & TAPROOT_SYM_RETADDR) && vaddr)
		vaddr--;
	*frames = s->frames;
	return tp_sym_elf_frames(s, elf, vaddr, elf->path);
}

/* The frames @jf (@nr, innermost first) of Java code at @pc, mapping "[java]". */
static int tp_sym_jvm_frames(struct taproot_sym *s, const struct tp_jvm_frame *jf, int nr,
			     uint64_t pc)
{
	for (int i = 0; i < nr; i++) {
		s->frames[i] = (struct taproot_frame){
			.function = tp_sym_printf(s, "%s", jf[i].name),
			.file = jf[i].file[0] ? tp_sym_printf(s, "%s", jf[i].file) : NULL,
			.line = jf[i].line,
			.map_path = "[java]",
			.map_offset = pc,
			.inlined = i < nr - 1,
		};
		s->frames[i].known = s->frames[i].function != NULL;
		if (!s->frames[i].known)
			s->frames[i].function = "[unknown]";
	}
	return nr;
}

/*
 * A Java frame's pc (TAPROOT_UPC_JVM_*): an interpreted frame's method,
 * file and line; compiled code's methods, or a stub's name.
 */
static int tp_sym_jvm(struct taproot_sym *s, struct taproot_proc *proc, uint64_t pc)
{
	struct tp_jvm_frame jf[TP_INLINE_MAX];
	int nr;

	if (taproot_pc_is_jvm_interp(pc)) {
		nr = taproot_proc_jvm_interp_frame(proc, pc, jf);
		if (nr == 0)
			nr = 1;
	} else {
		nr = taproot_proc_jvm_code_frames(proc, pc, jf, TP_INLINE_MAX);
	}
	if (nr == -ENOMEM)
		return nr;
	if (nr == -ESTALE)
		return tp_sym_unknown(s, "[java: code freed]", "[java]", pc);
	if (nr <= 0)
		return tp_sym_unknown(s, taproot_pc_is_jvm_interp(pc) ? "[java: method gone]" :
					 "[java: code gone]", "[java]", pc);
	return tp_sym_jvm_frames(s, jf, nr, pc);
}

int taproot_sym_user(struct taproot_sym *s, struct taproot_proc *proc, uint64_t pc,
		     unsigned int flags, const struct taproot_frame **frames)
{
	const struct taproot_map *m = NULL;
	const struct tp_perfsym *ps;
	char refused[48];
	int err;

	tp_sym_reset(s);
	*frames = s->frames;
	if (taproot_pc_is_jvm(pc))
		return tp_sym_jvm(s, proc, pc);
	if ((flags & TAPROOT_SYM_RETADDR) && pc)
		pc--;
	err = taproot_proc_find_map(proc, pc, &m);
	if (err == -ESRCH) {
		const char *why = taproot_proc_gone(proc);

		return tp_sym_unknown(s, tp_sym_printf(s, "[unknown: %s]",
						       why ? why : "process exited"),
				      NULL, pc);
	}
	if (err == 0 && m->elf)
		return tp_sym_elf_frames(s, m->elf, pc - m->bias, m->path);
	if (err == 0 && (m->flags & TAPROOT_MAP_VSYSCALL)) {
		const char *name = tp_vsyscall_name(pc);

		tp_sym_unknown(s, name, m->path, pc - m->start);
		s->frames[0].known = name != NULL;
		return 1;
	}
	/* Anonymous executable memory, or none: JIT code? */
	if (!err || err == -ENOENT) {
		struct tp_jvm_frame jf[TP_INLINE_MAX];
		int r = taproot_proc_jvm_frames(proc, pc, jf, TP_INLINE_MAX);

		if (r == -ENOMEM)
			return r;
		/* A JVM's code cache, from its own tables: no flag needed. */
		if (r > 0)
			return tp_sym_jvm_frames(s, jf, r, pc);
		if (proc->state == TP_PROC_LIVE || proc->state == TP_PROC_EXITED) {
			err = tp_proc_perfmap(proc);
			if (err == -ENOMEM)
				return err;
		}
		ps = tp_perfmap_lookup(proc->perfmap, pc);
		if (ps) {
			tp_sym_unknown(s, proc->perfmap->strings + ps->name,
				       tp_sym_printf(s, "[perf-%d.map]", proc->pid), pc);
			s->frames[0].sym_offset = pc - ps->start;
			s->frames[0].known = true;
			return 1;
		}
		/* A JVM whose tables taproot refuses: its code says so. */
		if (taproot_proc_jvm_refused(proc, refused, sizeof(refused))) {
			tp_sym_unknown(s, tp_sym_printf(s, "%s", refused),
				       m && m->path[0] ? m->path : "[anon]",
				       m ? pc - m->start + m->pgoff : pc);
			return 1;
		}
	}
	if (m)	/* a file we cannot read, or anonymous: keep the file offset */
		tp_sym_unknown(s, NULL, m->path[0] ? m->path : "[anon]", pc - m->start + m->pgoff);
	else
		tp_sym_unknown(s, NULL, NULL, pc);
	s->frames[0].jit = true;
	return 1;
}

int taproot_sym_kernel(struct taproot_sym *s, uint64_t pc, unsigned int flags,
		       const struct taproot_frame **frames)
{
	const char *name = NULL, *module = NULL;
	uint64_t off = 0;

	tp_sym_reset(s);
	*frames = s->frames;
	if ((flags & TAPROOT_SYM_RETADDR) && pc)
		pc--;
	if (s->ksyms)
		name = taproot_ksyms_lookup(s->ksyms, pc, &off, &module);
	tp_sym_unknown(s, name, module ? tp_sym_printf(s, "[%s]", module) : "[kernel.kallsyms]",
		       pc);
	if (!module && s->kernel_build_id_len) {
		s->frames[0].build_id = s->kernel_build_id;
		s->frames[0].build_id_len = s->kernel_build_id_len;
	}
	s->frames[0].sym_offset = off;
	s->frames[0].known = name != NULL;
	return 1;
}
