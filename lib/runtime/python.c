// SPDX-License-Identifier: GPL-2.0
/*
 * CPython 3.9, 3.11 and 3.13 on x86-64 (runtime.h): the layouts of thread
 * states, frames and code objects, read off those versions' headers and
 * checked against Debian's interpreters (tests/unit/test_pywalk.c walks
 * live ones), and the two line-table formats.
 *
 * The frames of a thread: its thread state is the data of pthread key
 * _PyRuntime.autoTSSkey (PyGILState_GetThisThreadState()), set for every
 * thread that runs Python, whether or not it holds the GIL; the thread
 * state points to its innermost frame (3.11: through its cframe), each
 * frame to its caller.
 *  - 3.9: PyFrameObject, one per activation of _PyEval_EvalFrameDefault;
 *    f_lasti the byte offset of the last instruction (-1: not started).
 *  - 3.11: _PyInterpreterFrame, several per activation; is_entry marks
 *    each activation's first; prev_instr the last instruction run.
 *  - 3.13: _PyInterpreterFrame again, its fields moved; an activation
 *    begins with a frame owned by the C stack (owner 3), which names no
 *    code; instr_ptr the instruction being run.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "runtime/runtime.h"
#include "util/util.h"

static const struct tp_pyver tp_pyvers[] = {
	{
		.minor = 9, .runtime_tss = 584,
		.tstate_frame = 24,
		.frame_code = 32, .frame_back = 24, .frame_pos = 104,
		.pos_kind = TAPROOT_PY_POS_INT, .entry_kind = TAPROOT_PY_ENTRY_ALL,
		.code_argcount = 16, .code_kwonly = 24, .code_flags = 36, .code_firstlineno = 40,
		.code_filename = 104, .code_name = 112, .code_lines = 120,
		.str_ascii = 48, .str_compact = 72, .lines = TP_PY_LNOTAB,
	}, {
		.minor = 11, .runtime_tss = 592,
		.tstate_cframe = 56, .tstate_frame = 8,
		.frame_code = 32, .frame_back = 48, .frame_pos = 56, .entry_off = 68,
		.pos_kind = TAPROOT_PY_POS_PTR, .entry_kind = TAPROOT_PY_ENTRY_FLAG,
		.code_argcount = 56, .code_kwonly = 64, .code_flags = 48, .code_firstlineno = 72,
		.code_filename = 112, .code_name = 120, .code_qualname = 128, .code_lines = 136,
		.str_ascii = 48, .str_compact = 72, .lines = TP_PY_LOCATIONS,
	}, {
		.minor = 13, .runtime_tss = 2160,
		.tstate_frame = 72,
		.frame_code = 0, .frame_back = 8, .frame_pos = 56, .entry_off = 70,
		.pos_kind = TAPROOT_PY_POS_PTR, .entry_kind = TAPROOT_PY_ENTRY_OWNER,
		.code_argcount = 52, .code_kwonly = 60, .code_flags = 48, .code_firstlineno = 68,
		.code_filename = 112, .code_name = 120, .code_qualname = 128, .code_lines = 136,
		.str_ascii = 40, .str_compact = 56, .lines = TP_PY_LOCATIONS,
	},
};

/* Every object's header: ob_refcnt, ob_type; a variable one's ob_size. */
#define PY_OB_TYPE		8
#define PY_OB_SIZE		16
#define PY_TYPE_BASICSIZE	32	/* PyTypeObject.tp_basicsize */
#define PY_BYTES_DATA		32	/* PyBytesObject.ob_sval */
#define PY_STR_LENGTH		16	/* PyASCIIObject.length: code points */
#define PY_STR_STATE		32	/* ... its state bit field */
#define PY_TSS_KEY		4	/* Py_tss_t: _is_initialized, then _key */
/*
 * 3.13's _PyRuntime begins with _Py_DebugOffsets, for debuggers: this
 * cookie, the version, then for each structure its size and its fields'
 * offsets, as 64-bit words. The words taproot takes (3.13's layout of
 * that structure; a later version, which lays it out otherwise, is not
 * walked), each checked against its structure's size.
 */
static const char tp_py_debug_cookie[8] = "xdebugpy";
enum {
	PY_DBG_VERSION = 1, PY_DBG_FREE_THREADED = 2,
	PY_DBG_TSTATE = 19, PY_DBG_TSTATE_FRAME = 23,
	PY_DBG_FRAME = 28, PY_DBG_FRAME_BACK = 29, PY_DBG_FRAME_CODE = 30,
	PY_DBG_FRAME_POS = 31, PY_DBG_FRAME_OWNER = 33,
	PY_DBG_CODE = 34, PY_DBG_CODE_FILENAME = 35, PY_DBG_CODE_NAME = 36,
	PY_DBG_CODE_QUALNAME = 37, PY_DBG_CODE_LINES = 38, PY_DBG_CODE_FIRSTLINENO = 39,
	PY_DBG_CODE_ARGCOUNT = 40, PY_DBG_CODE_INSNS = 43,
	PY_DBG_STR = 67, PY_DBG_STR_ASCII = 70,
	PY_DBG_WORDS = 71,
};

/* ------------------------------------------------------------ the ELF file */

static uint64_t py_u64(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

static uint32_t py_u32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

/* The symbol @name of @elf (its .symtab or .dynsym): 0, or -ENOENT. */
static int py_sym(Elf *elf, const char *name, GElf_Sym *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				*out = s;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* @len bytes of @elf at link-time address @addr, from the section holding them. */
static int py_elf_read(Elf *elf, uint64_t addr, void *dst, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size)
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size - (addr - sh.sh_addr) < len ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
		    d->d_size < addr - sh.sh_addr + len)
			return -ENOENT;
		memcpy(dst, (const uint8_t *)d->d_buf + (addr - sh.sh_addr), len);
		return 0;
	}
	return -ENOENT;
}

/* The N of a path named python3.N or libpython3.N...; 0 when not. */
static unsigned int py_name_minor(const char *path)
{
	const char *base = tp_path_base(path);
	unsigned int minor = 0;
	const char *p;

	if (!strncmp(base, "lib", 3))
		base += 3;
	if (strncmp(base, "python3.", 8))
		return 0;
	for (p = base + 8; *p >= '0' && *p <= '9' && minor < 100; p++)
		minor = minor * 10 + (unsigned int)(*p - '0');
	return p > base + 8 && (!*p || *p == '.') ? minor : 0;
}

/* The section named @name of @elf into @sh: 0, or -ENOENT. */
static int py_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return 0;
	}
	return -ENOENT;
}

/*
 * The end of the code whose unwind entry (FDE) begins exactly at @addr,
 * by .eh_frame_hdr's sorted table of FDE starts (@hdr); 0 when no FDE
 * begins there. The encodings are those every GNU toolchain writes
 * (table: datarel sdata4; FDE: pcrel sdata4 start, then a 4-byte range).
 */
static uint64_t py_fde_end(Elf *elf, const GElf_Shdr *hdr, uint64_t addr)
{
	uint8_t h[12], e[8], f[16];
	uint64_t lo = 0, hi, fde;

	if (py_elf_read(elf, hdr->sh_addr, h, sizeof(h)) < 0 || h[0] != 1 || h[2] != 0x03 ||
	    h[3] != 0x3b)
		return 0;
	hi = py_u32(h + 8);
	if (hi > (hdr->sh_size - 12) / 8)
		return 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, loc;

		if (py_elf_read(elf, hdr->sh_addr + 12 + mid * 8, e, sizeof(e)) < 0)
			return 0;
		loc = hdr->sh_addr + (uint64_t)(int64_t)(int32_t)py_u32(e);
		if (loc == addr) {
			fde = hdr->sh_addr + (uint64_t)(int64_t)(int32_t)py_u32(e + 4);
			if (py_elf_read(elf, fde, f, sizeof(f)) < 0 || py_u32(f) == 0xffffffff ||
			    fde + 8 + (uint64_t)(int64_t)(int32_t)py_u32(f + 8) != addr)
				return 0;
			return addr + py_u32(f + 12);
		}
		if (loc < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Whether a function symbol of @elf begins at @addr. */
static bool py_sym_at(Elf *elf, uint64_t addr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(d, (int)i, &s) && s.st_value == addr &&
			    GELF_ST_TYPE(s.st_info) == STT_FUNC)
				return true;
		}
	}
	return false;
}

/*
 * The parts of _PyEval_EvalFrameDefault outside its symbol's range: code
 * its own jumps (jmp rel32, jcc rel32) lead to, where an FDE of no
 * function symbol begins (a jump to another function's entry is a tail
 * call; a part split off begins an FDE of its own, with no symbol).
 */
static void py_eval_parts(Elf *elf, struct tp_pyelf *py)
{
	uint64_t lo = py->eval[0][0], len = py->eval[0][1] - lo;
	GElf_Shdr hdr;
	uint8_t *code;

	if (len > (1U << 20) || py_section(elf, ".eh_frame_hdr", &hdr) < 0 ||
	    !(code = malloc(len)))
		return;
	if (py_elf_read(elf, lo, code, len) < 0)
		len = 0;
	for (uint64_t i = 0; i + 6 <= len && py->eval_parts < TP_PY_EVAL_PARTS; i++) {
		uint64_t next, target, end;
		unsigned int p;

		if (code[i] == 0x0f && (code[i + 1] & 0xf0) == 0x80)
			next = i + 6;
		else if (code[i] == 0xe9)
			next = i + 5;
		else
			continue;
		target = lo + next + (uint64_t)(int64_t)(int32_t)py_u32(code + next - 4);
		for (p = 0; p < py->eval_parts; p++)
			if (target >= py->eval[p][0] && target < py->eval[p][1])
				break;
		if (p < py->eval_parts || !(end = py_fde_end(elf, &hdr, target)) ||
		    py_sym_at(elf, target))
			continue;
		py->eval[py->eval_parts][0] = target;
		py->eval[py->eval_parts][1] = end;
		py->eval_parts++;
	}
	free(code);
}

/*
 * 3.13: the offsets of py->v from the interpreter's own debug offsets at
 * @runtime, where it publishes them (a build of its own may differ from
 * the headers'); those it does not publish (co_flags, co_kwonlyargcount,
 * the thread-state key) stay the table's. 0, or -EINVAL.
 */
static int py_debug_offsets(Elf *elf, uint64_t runtime, struct tp_pyelf *py)
{
	struct tp_pyver *v = &py->v;
	uint64_t w[PY_DBG_WORDS];
	/* Each word taken, with the structure size word it must lie within. */
	static const struct { uint8_t word, size; } fields[] = {
		{ PY_DBG_TSTATE_FRAME, PY_DBG_TSTATE },
		{ PY_DBG_FRAME_BACK, PY_DBG_FRAME }, { PY_DBG_FRAME_CODE, PY_DBG_FRAME },
		{ PY_DBG_FRAME_POS, PY_DBG_FRAME }, { PY_DBG_FRAME_OWNER, PY_DBG_FRAME },
		{ PY_DBG_CODE_FILENAME, PY_DBG_CODE }, { PY_DBG_CODE_NAME, PY_DBG_CODE },
		{ PY_DBG_CODE_QUALNAME, PY_DBG_CODE }, { PY_DBG_CODE_LINES, PY_DBG_CODE },
		{ PY_DBG_CODE_FIRSTLINENO, PY_DBG_CODE }, { PY_DBG_CODE_ARGCOUNT, PY_DBG_CODE },
		{ PY_DBG_CODE_INSNS, PY_DBG_CODE }, { PY_DBG_STR_ASCII, PY_DBG_STR },
	};

	if (py_elf_read(elf, runtime, w, sizeof(w)) < 0 || memcmp(w, tp_py_debug_cookie, 8) ||
	    w[PY_DBG_VERSION] >> 16 != 0x030d || w[PY_DBG_FREE_THREADED])
		return -EINVAL;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (w[fields[i].size] > 4096 || w[fields[i].word] + 1 > w[fields[i].size])
			return -EINVAL;
	v->tstate_frame = (uint16_t)w[PY_DBG_TSTATE_FRAME];
	v->frame_back = (uint16_t)w[PY_DBG_FRAME_BACK];
	v->frame_code = (uint16_t)w[PY_DBG_FRAME_CODE];
	v->frame_pos = (uint16_t)w[PY_DBG_FRAME_POS];
	v->entry_off = (uint16_t)w[PY_DBG_FRAME_OWNER];
	v->code_filename = (uint16_t)w[PY_DBG_CODE_FILENAME];
	v->code_name = (uint16_t)w[PY_DBG_CODE_NAME];
	v->code_qualname = (uint16_t)w[PY_DBG_CODE_QUALNAME];
	v->code_lines = (uint16_t)w[PY_DBG_CODE_LINES];
	v->code_firstlineno = (uint16_t)w[PY_DBG_CODE_FIRSTLINENO];
	v->code_argcount = (uint16_t)w[PY_DBG_CODE_ARGCOUNT];
	/* posonlyargcount, then kwonlyargcount: the two ints after argcount. */
	v->code_kwonly = (uint16_t)(w[PY_DBG_CODE_ARGCOUNT] + 8);
	v->str_ascii = (uint16_t)w[PY_DBG_STR_ASCII];
	/* A compact str that is not ASCII adds utf8_length and utf8. */
	v->str_compact = (uint16_t)(w[PY_DBG_STR_ASCII] + 16);
	py->code_insns = (uint32_t)w[PY_DBG_CODE_INSNS];
	py->debug_offsets = true;
	return 0;
}

/* Whether the fields the module reads of frames and code objects lie in its reads. */
static bool py_module_reads(const struct tp_pyver *v)
{
	const uint16_t f[] = {
		v->frame_code, v->frame_back, v->frame_pos, v->entry_off, v->tstate_frame,
		v->tstate_cframe, v->code_argcount, v->code_kwonly, v->code_flags,
		v->code_firstlineno,
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i] + 8 > TAPROOT_PY_READ_MAX)
			return false;
	return true;
}

int tp_pyelf_read(Elf *elf, const char *path, struct tp_pyelf *py)
{
	unsigned int minor = py_name_minor(path);
	GElf_Sym rt, code, eval, ver;
	uint64_t size;

	memset(py, 0, sizeof(*py));
	if (!minor || py_sym(elf, "_PyRuntime", &rt) < 0)
		return -ENOENT;
	/* Py_Version (3.11+) says the version, whatever the file is called. */
	if (py_sym(elf, "Py_Version", &ver) == 0) {
		uint32_t hex;

		if (py_elf_read(elf, ver.st_value, &hex, sizeof(hex)) < 0 || hex >> 24 != 3)
			return tp_err(-EINVAL, "%s: Py_Version unreadable", path);
		minor = (hex >> 16) & 0xff;
	}
	py->minor = minor;	/* for the caller's message, whatever follows */
	for (size_t i = 0; i < sizeof(tp_pyvers) / sizeof(tp_pyvers[0]); i++)
		if (tp_pyvers[i].minor == minor)
			py->v = tp_pyvers[i];
	if (!py->v.minor)
		return tp_err(-ENOTSUP, "%s: CPython 3.%u: only 3.9, 3.11 and 3.13 are walked",
			      path, minor);
	if (py_sym(elf, "PyCode_Type", &code) < 0 ||
	    py_sym(elf, "_PyEval_EvalFrameDefault", &eval) < 0)
		return tp_err(-EINVAL, "%s: no PyCode_Type or _PyEval_EvalFrameDefault", path);
	if (minor == 13 && py_debug_offsets(elf, rt.st_value, py) < 0)
		return tp_err(-EINVAL, "%s: _PyRuntime does not open with 3.13's debug offsets",
			      path);
	if (!py_module_reads(&py->v))
		return tp_err(-ENOTSUP, "%s: CPython 3.%u lays its frames out beyond the module's "
			      "reads", path, minor);
	py->tss_key = rt.st_value + py->v.runtime_tss + PY_TSS_KEY;
	py->code_type = code.st_value;
	py->eval[0][0] = eval.st_value;
	py->eval[0][1] = eval.st_value + (eval.st_size ? eval.st_size : 1);
	py->eval_parts = 1;
	py_eval_parts(elf, py);
	if (py->v.lines == TP_PY_LOCATIONS && !py->code_insns) {
		if (py_elf_read(elf, code.st_value + PY_TYPE_BASICSIZE, &size, sizeof(size)) < 0 ||
		    size < (uint64_t)py->v.code_lines + 8 || size > 4096)
			return tp_err(-EINVAL, "%s: PyCode_Type.tp_basicsize unreadable", path);
		py->code_insns = (uint32_t)size;
	}
	return 0;
}

int tp_glibc_tsd(Elf *libc, uint32_t *tsd_off)
{
	uint8_t c[48];
	GElf_Sym s;

	if ((py_sym(libc, "pthread_getspecific", &s) < 0 &&
	     py_sym(libc, "__pthread_getspecific", &s) < 0) ||
	    py_elf_read(libc, s.st_value, c, sizeof(c)) < 0)
		return -ENOENT;
	/*
	 * key < 32: &THREAD_SELF->specific_1stblock[key], as
	 * "lea N(%rdi),%eax" or "mov %edi,%eax; add $N,%rax", then
	 * "shl $4,%rax" (16-byte {seq, data} entries, N of them before the
	 * block), then the data read at displacement 8.
	 */
	for (size_t i = 4; i + 8 <= sizeof(c); i++) {
		int n = -1;

		if (memcmp(c + i, "\x48\xc1\xe0\x04", 4))
			continue;
		if (c[i - 3] == 0x8d && c[i - 2] == 0x47)
			n = c[i - 1];
		else if (c[i - 4] == 0x48 && c[i - 3] == 0x83 && c[i - 2] == 0xc0)
			n = c[i - 1];
		if (n < 0 || n > 0x7f)
			return -ENOENT;
		for (size_t j = i + 4; j + 2 < sizeof(c); j++)
			if (c[j] == 0x8b && (c[j + 1] >> 6) == 1 && c[j + 2] == 8) {
				*tsd_off = (uint32_t)n * 16 + 8;
				return 0;
			}
		return -ENOENT;
	}
	return -ENOENT;
}

void tp_pyelf_layout(const struct tp_pyelf *py, uint64_t bias, uint32_t tsd_off,
		     struct taproot_python_layout *l)
{
	const struct tp_pyver *v = &py->v;

	*l = (struct taproot_python_layout){
		.tss_key = py->tss_key + bias,
		.code_type = py->code_type + bias,
		.tsd_off = tsd_off,
		.tstate_cframe = v->tstate_cframe,
		.tstate_frame = v->tstate_frame,
		.frame_code = v->frame_code,
		.frame_back = v->frame_back,
		.frame_pos = v->frame_pos,
		.entry_off = v->entry_off,
		.pos_kind = v->pos_kind,
		.entry_kind = v->entry_kind,
		.code_argcount = v->code_argcount,
		.code_kwonly = v->code_kwonly,
		.code_flags = v->code_flags,
		.code_firstlineno = v->code_firstlineno,
	};
}

/* ------------------------------------------------------------ code objects */

uint32_t tp_pycode_cookie(uint32_t argcount, uint32_t kwonly, uint32_t flags,
			  uint32_t firstlineno)
{
	return (argcount << 25) + (kwonly << 18) + (flags << 10) + firstlineno;
}

/* Append code point @cp to @out as UTF-8 (@out has room for 4 more bytes). */
static size_t py_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		cp = 0xfffd;
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The str object at @addr as UTF-8 (malloc'ed), cut at TP_PY_STR_MAX
 * bytes: compact ones only (what the compiler makes of names and paths);
 * "?" for any other. NULL only when memory is short.
 */
static char *py_str(const struct tp_pyver *v, tp_memread_fn rd, void *ctx, uint64_t addr)
{
	uint8_t hdr[40], raw[TP_PY_STR_MAX];
	unsigned int kind, n;
	uint64_t len;
	uint32_t state;
	char *out;
	size_t o = 0;

	if (!addr || rd(ctx, addr, hdr, sizeof(hdr)) < 0)
		return strdup("?");
	len = py_u64(hdr + PY_STR_LENGTH);
	state = py_u32(hdr + PY_STR_STATE);
	kind = (state >> 2) & 7;
	if (!(state & 1U << 5) || (kind != 1 && kind != 2 && kind != 4))
		return strdup("?");
	n = (unsigned int)(len < TP_PY_STR_MAX / 4 ? len : TP_PY_STR_MAX / 4);
	if (rd(ctx, addr + (state & 1U << 6 ? v->str_ascii : v->str_compact), raw, n * kind) < 0)
		return strdup("?");
	out = malloc((size_t)n * 4 + 1);
	if (!out)
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t cp = kind == 1 ? raw[i] :
			      kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) :
			      py_u32(raw + 4 * i);

		o += py_utf8(out + o, cp);
	}
	out[o] = '\0';
	return out;
}

void tp_pycode_free(struct tp_pycode *c)
{
	free(c->name);
	free(c->file);
	free(c->lines);
	memset(c, 0, sizeof(*c));
}

int tp_pycode_read(const struct tp_pyelf *py, uint64_t bias, tp_memread_fn rd, void *ctx,
		   uint64_t code, uint32_t cookie, struct tp_pycode *c)
{
	const struct tp_pyver *v = &py->v;
	uint8_t o[160], b[24];
	uint64_t lines, size;

	memset(c, 0, sizeof(*c));
	if (rd(ctx, code, o, sizeof(o)) < 0)
		return -EFAULT;
	c->argcount = py_u32(o + v->code_argcount);
	c->kwonly = py_u32(o + v->code_kwonly);
	c->flags = py_u32(o + v->code_flags);
	c->firstlineno = py_u32(o + v->code_firstlineno);
	if (py_u64(o + PY_OB_TYPE) != py->code_type + bias ||
	    tp_pycode_cookie(c->argcount, c->kwonly, c->flags, c->firstlineno) != cookie)
		return -ESTALE;
	c->name = py_str(v, rd, ctx, py_u64(o + (v->code_qualname ? v->code_qualname : v->code_name)));
	c->file = py_str(v, rd, ctx, py_u64(o + v->code_filename));
	if (!c->name || !c->file)
		goto nomem;
	/* The line table: a bytes object. */
	lines = py_u64(o + v->code_lines);
	if (lines && rd(ctx, lines, b, sizeof(b)) == 0) {
		size = py_u64(b + PY_OB_SIZE);
		if (size > TP_PY_LINES_MAX)
			size = TP_PY_LINES_MAX;
		c->lines = malloc(size ? size : 1);
		if (!c->lines)
			goto nomem;
		if (rd(ctx, lines + PY_BYTES_DATA, c->lines, size) == 0) {
			c->lines_len = size;
		} else {
			free(c->lines);
			c->lines = NULL;
		}
	}
	return 0;
nomem:
	tp_pycode_free(c);
	return tp_err(-ENOMEM, NULL);
}

/* 3.9's lnotab: the line of the instruction at byte offset @lasti. */
static uint32_t py_line_lnotab(const struct tp_pycode *c, uint32_t lasti)
{
	int64_t line = c->firstlineno;
	uint64_t addr = 0;

	for (size_t i = 0; i + 1 < c->lines_len; i += 2) {
		addr += c->lines[i];
		if (addr > lasti)
			break;
		line += (int8_t)c->lines[i + 1];
	}
	return line > 0 && line <= UINT32_MAX ? (uint32_t)line : 0;
}

/* A varint of the location table at *@i (6-bit groups, 0x40: more); false past the end. */
static bool py_varint(const struct tp_pycode *c, size_t *i, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; shift < 64; shift += 6) {
		uint8_t b;

		if (*i >= c->lines_len)
			return false;
		b = c->lines[(*i)++];
		v |= (uint64_t)(b & 0x3f) << shift;
		if (!(b & 0x40)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool py_svarint(const struct tp_pycode *c, size_t *i, int64_t *out)
{
	uint64_t u;

	if (!py_varint(c, i, &u))
		return false;
	*out = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

/*
 * 3.11+'s location table: the line of code unit @unit. Entries, each
 * starting with a byte of bit 7 set: code (bits 3-6) and length in code
 * units (bits 0-2, + 1), then the code's fields. 15: no location (the
 * running line stands); 14: long form (Δline, end line, columns); 13: no
 * columns (Δline); 10-12: one line, Δline = code - 10, two column bytes;
 * 0-9: short form, the same line, one column byte.
 */
static uint32_t py_line_locations(const struct tp_pycode *c, uint64_t unit)
{
	int64_t line = c->firstlineno, dl;
	uint64_t addr = 0, skip;
	size_t i = 0;

	while (i < c->lines_len) {
		uint8_t b = c->lines[i++];
		unsigned int code = (b >> 3) & 15, len = (b & 7) + 1;
		bool ok = true;

		if (!(b & 0x80))
			return 0;	/* not at an entry's start: malformed */
		dl = 0;
		if (code == 14) {
			ok = py_svarint(c, &i, &dl) && py_varint(c, &i, &skip) &&
			     py_varint(c, &i, &skip) && py_varint(c, &i, &skip);
		} else if (code == 13) {
			ok = py_svarint(c, &i, &dl);
		} else if (code >= 10 && code <= 12) {
			dl = code - 10;
			i += 2;
		} else if (code <= 9) {
			i += 1;
		}
		/* A line moves by less than 2^31: a table that says more is malformed. */
		if (!ok || dl > INT32_MAX || dl < -INT32_MAX)
			return 0;
		line += dl;
		if (unit < addr + len)
			return line > 0 && line <= UINT32_MAX ? (uint32_t)line : 0;
		addr += len;
	}
	return 0;
}

uint32_t tp_pycode_line(const struct tp_pyelf *py, const struct tp_pycode *c, uint32_t pos)
{
	if (pos == TAPROOT_PYFRAME_POS_NONE || !c->lines)
		return pos == TAPROOT_PYFRAME_POS_NONE ? c->firstlineno : 0;
	if (py->v.lines == TP_PY_LNOTAB)
		return py_line_lnotab(c, pos);
	if (pos < py->code_insns)
		return c->firstlineno;
	return py_line_locations(c, (pos - py->code_insns) / 2);
}
