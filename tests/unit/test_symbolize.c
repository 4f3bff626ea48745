// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer on real inputs: this binary's own functions (and an
 * always_inline chain, two frames with file:line), libc's printf and
 * malloc, a shared library built at test time from fixtures/symlib.c,
 * stripped (.dynsym only) and given a separate debug file (debuglink with
 * CRC, then through a dlopen of it into this process), C++ demangling, JIT
 * code through a perf map, kernel symbols, unknown and exited cases, and
 * corrupted copies of a real library (never a crash).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>

#include "process/process-private.h"
#include "nm.h"
#include "runcmd.h"
#include "gofix.h"

#define FIXTURES "tests/unit/fixtures/"

/* ------------------------------------------------- functions to find */

__attribute__((noinline)) int symbolize_local_function(int x);
__attribute__((noinline)) int symbolize_local_function(int x)
{
	return x * 11 + 2;
}

static volatile uintptr_t tp_sink;
static volatile int tp_line_callee, tp_line_outer;

__attribute__((noinline)) static uintptr_t capture_return_address(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

static inline __attribute__((always_inline)) void inlined_callee(void)
{
	tp_sink = capture_return_address(); tp_line_callee = __LINE__;
}

__attribute__((noinline)) void outer_with_inline(void);
__attribute__((noinline)) void outer_with_inline(void)
{
	inlined_callee(); tp_line_outer = __LINE__;
}

/* ---------------------------------------------------------- helpers */

struct env {
	struct taproot_procs *procs;
	struct taproot_sym *sym;
	struct taproot_proc *self;
};

static int env_setup(void **state)
{
	struct env *env = calloc(1, sizeof(*env));
	struct taproot_procs_opts o;

	assert_non_null(env);
	/* Tests map code after the first read: re-read the maps at once. */
	taproot_procs_opts_default(&o);
	o.refresh_ms = 0;
	assert_int_equal(taproot_procs_new(&o, &env->procs), 0);
	assert_int_equal(taproot_sym_new(env->procs, NULL, &env->sym), 0);
	assert_int_equal(taproot_proc_get(env->procs, getpid(), 0, &env->self), 0);
	*state = env;
	return 0;
}

static int env_teardown(void **state)
{
	struct env *env = *state;

	taproot_sym_free(env->sym);
	taproot_procs_free(env->procs);
	free(env);
	return 0;
}

static void sh_ok(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("failed: %s", cmd);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static uint64_t self_pc(struct env *env, void *fn)
{
	(void)env;
	return (uint64_t)(uintptr_t)fn;
}

/* ------------------------------------------------------------ tests */

static void own_function_named_with_line(void **state)
{
	struct env *env = *state;
	const struct taproot_frame *f;
	uint64_t pc = self_pc(env, (void *)symbolize_local_function);
	int n;

	n = taproot_sym_user(env->sym, env->self, pc, 0, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "symbolize_local_function");
	assert_true(f[0].known);
	assert_false(f[0].inlined);
	assert_int_equal(f[0].sym_offset, 0);
	assert_non_null(f[0].file);
	assert_true(ends_with(f[0].file, "test_symbolize.c"));
	assert_true(f[0].line > 30 && f[0].line < 40);
	assert_non_null(f[0].build_id);
	assert_true(f[0].build_id_len >= 16);

	/* A return address just past the function's first byte: pc - 1. */
	n = taproot_sym_user(env->sym, env->self, pc + 1, TAPROOT_SYM_RETADDR, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "symbolize_local_function");
	assert_int_equal(f[0].sym_offset, 0);
}

static void inline_chain_two_frames(void **state)
{
	struct env *env = *state;
	const struct taproot_frame *f;
	int n;

	outer_with_inline();
	n = taproot_sym_user(env->sym, env->self, tp_sink, TAPROOT_SYM_RETADDR, &f);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].function, "inlined_callee");
	assert_true(f[0].inlined);
	assert_true(f[0].known);
	assert_non_null(f[0].file);
	assert_true(ends_with(f[0].file, "test_symbolize.c"));
	assert_int_equal(f[0].line, tp_line_callee);

	assert_string_equal(f[1].function, "outer_with_inline");
	assert_false(f[1].inlined);
	assert_true(f[1].known);
	assert_non_null(f[1].file);
	assert_true(ends_with(f[1].file, "test_symbolize.c"));
	assert_int_equal(f[1].line, tp_line_outer);
	assert_true(f[1].sym_offset > 0);
	assert_string_equal(f[0].map_path, f[1].map_path);
}

static void libc_functions(void **state)
{
	static const char *const names[] = { "printf", "malloc", "fopen", "qsort" };
	struct env *env = *state;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	size_t i;

	assert_non_null(libc);
	for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
		const struct taproot_frame *f;
		void *addr = dlsym(libc, names[i]);
		int n;

		assert_non_null(addr);
		n = taproot_sym_user(env->sym, env->self, (uint64_t)(uintptr_t)addr + 4, 0, &f);
		assert_int_equal(n, 1);
		assert_string_equal(f[0].function, names[i]);
		assert_int_equal(f[0].sym_offset, 4);
		assert_non_null(strstr(f[0].map_path, "libc.so.6"));
	}
	dlclose(libc);
}

static void demangle_cxx(void **state)
{
	char *s = tp_demangle("_ZN3foo3barEv");

	assert_non_null(s);
	assert_string_equal(s, "foo::bar()");
	free(s);
	s = tp_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
	assert_non_null(s);
	assert_string_equal(s, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(s);
	assert_null(tp_demangle("printf"));
	assert_null(tp_demangle("_Z"));		/* not a valid name: kept mangled */
	assert_null(tp_demangle(NULL));
}

/* ---------------------------------- stripped library, debug file */

struct lib {
	char dir[64];
	char full[128], stripped[128], linked[128], debug[128];
	uint64_t exported, local, cxx;
};

static void lib_build(struct lib *l)
{
	char cmd[1024];

	strcpy(l->dir, "/tmp/taproot-sym-XXXXXX");
	assert_non_null(mkdtemp(l->dir));
	snprintf(l->full, sizeof(l->full), "%s/full.so", l->dir);
	snprintf(l->stripped, sizeof(l->stripped), "%s/stripped.so", l->dir);
	snprintf(l->linked, sizeof(l->linked), "%s/libtpfix.so", l->dir);
	snprintf(l->debug, sizeof(l->debug), "%s/libtpfix.debug", l->dir);
	/* No build ID: the debug file is found by debuglink and its CRC. */
	snprintf(cmd, sizeof(cmd), "gcc -shared -fPIC -O1 -g -Wl,--build-id=none -o %s %s",
		 l->full, FIXTURES "symlib.c");
	sh_ok(cmd);
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug %s %s", l->full, l->debug);
	sh_ok(cmd);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o %s %s", l->stripped, l->full);
	sh_ok(cmd);
	snprintf(cmd, sizeof(cmd), "objcopy --add-gnu-debuglink=%s %s %s", l->debug,
		 l->stripped, l->linked);
	sh_ok(cmd);
	l->exported = nm_address(l->full, "tpfix_exported");
	l->local = nm_address(l->full, "tpfix_local");
	l->cxx = nm_address(l->full, "_ZN5tpfix3addEii");
	assert_true(l->exported && l->local && l->cxx);
}

static void lib_remove(struct lib *l)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", l->dir);
	sh_ok(cmd);
}

/* PATH's whole content, malloc'd; its size in *size. */
static char *read_whole(const char *path, long *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*size = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)*size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)*size, f), (size_t)*size);
	fclose(f);
	return buf;
}

static void stripped_then_debug_file(void **state)
{
	struct env *env = *state;
	const struct taproot_frame *f;
	struct taproot_elf *e;
	struct lib l;
	const char *which;
	int n;

	lib_build(&l);

	/* Stripped: .dynsym names the exported functions only. */
	assert_int_equal(taproot_elf_open(env->procs, l.stripped, &e), 0);
	n = taproot_sym_elf(env->sym, e, l.exported + 2, 0, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "tpfix_exported");
	assert_null(f[0].file);
	assert_non_null(tp_elf_symbol(e, l.exported, NULL, &which));
	assert_string_equal(which, "dynsym");
	n = taproot_sym_elf(env->sym, e, l.cxx, 0, &f);
	assert_string_equal(f[0].function, "tpfix::add(int, int)");
	n = taproot_sym_elf(env->sym, e, l.local, 0, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "[unknown]");
	assert_false(f[0].known);
	assert_int_equal(f[0].map_offset, l.local);
	assert_string_equal(f[0].map_path, l.stripped);
	assert_string_equal(tp_elf_debug_path(e), "");

	/* With the debuglink to the debug file: full names and lines. */
	assert_int_equal(taproot_elf_open(env->procs, l.linked, &e), 0);
	n = taproot_sym_elf(env->sym, e, l.local, 0, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "tpfix_local");
	assert_true(f[0].known);
	assert_non_null(f[0].file);
	assert_true(ends_with(f[0].file, "symlib.c"));
	assert_true(f[0].line > 0);
	assert_string_equal(tp_elf_debug_path(e), l.debug);
	assert_non_null(tp_elf_symbol(e, l.local, NULL, &which));
	assert_string_equal(which, "debug");
	n = taproot_sym_elf(env->sym, e, l.cxx, 0, &f);
	assert_string_equal(f[0].function, "tpfix::add(int, int)");

	/* The same through the process: dlopen it, symbolize its pcs. */
	{
		void *h = dlopen(l.linked, RTLD_NOW | RTLD_LOCAL);
		uintptr_t (*addr_of_local)(void);
		void *sym;

		assert_non_null(h);
		sym = dlsym(h, "tpfix_local_address");
		assert_non_null(sym);
		memcpy(&addr_of_local, &sym, sizeof(sym));
		n = taproot_sym_user(env->sym, env->self, addr_of_local() + 1, 0, &f);
		assert_int_equal(n, 1);
		if (strcmp(f[0].function, "tpfix_local")) {
			const struct taproot_map *m;

			assert_int_equal(taproot_proc_find_map(env->self, addr_of_local(), &m), 0);
			fail_msg("%s: elf %p err %d (%s) path %s", f[0].function, (void *)m->elf,
				 m->elf_err, taproot_errmsg(m->elf_err),
				 m->elf ? tp_elf_debug_path(m->elf) : "-");
		}
		assert_string_equal(f[0].function, "tpfix_local");
		assert_int_equal(f[0].sym_offset, 1);
		assert_string_equal(f[0].map_path, l.linked);
		assert_int_equal(f[0].map_offset, l.local + 1);
		dlclose(h);
	}
	lib_remove(&l);
}

static void debuglink_crc_mismatch_rejected(void **state)
{
	struct env *env = *state;
	const struct taproot_frame *f;
	struct taproot_elf *e;
	struct lib l;
	FILE *dbg;

	lib_build(&l);
	/* One byte more: the CRC no longer matches. */
	dbg = fopen(l.debug, "ab");
	assert_non_null(dbg);
	fputc(0, dbg);
	fclose(dbg);
	assert_int_equal(taproot_elf_open(env->procs, l.linked, &e), 0);
	taproot_sym_elf(env->sym, e, l.local, 0, &f);
	assert_string_equal(f[0].function, "[unknown]");
	assert_string_equal(tp_elf_debug_path(e), "");
	lib_remove(&l);
}

/* ---------------------------------------------------------- perf maps */

static void perfmap_parse_malformed(void **state)
{
	FILE *f = fopen(FIXTURES "perf-odd.map", "r");
	struct tp_perfmap *pm;
	const struct tp_perfsym *s;

	assert_non_null(f);
	assert_int_equal(tp_perfmap_read(f, &pm), 0);
	fclose(f);
	assert_int_equal(pm->nr, 4);
	assert_int_equal(pm->bad_lines, 8);
	s = tp_perfmap_lookup(pm, 0x7f0000001010);
	assert_non_null(s);
	assert_string_equal(pm->strings + s->name,
			    "LazyCompile:*main /app/index.js:1 (optimized, written later)");
	s = tp_perfmap_lookup(pm, 0x7f000000201f);
	assert_non_null(s);
	assert_string_equal(pm->strings + s->name, "with_0x_prefix");
	assert_null(tp_perfmap_lookup(pm, 0x7f0000002020));
	s = tp_perfmap_lookup(pm, 0x7f0000006000);
	assert_string_equal(pm->strings + s->name, "good after bad");
	assert_null(tp_perfmap_lookup(pm, 0x7f0000004000));
	assert_null(tp_perfmap_lookup(pm, 0x7f000000a000));
	assert_null(tp_perfmap_lookup(pm, 0x10));
	tp_perfmap_free(pm);
}

static void jit_code_from_perf_map(void **state)
{
	struct env *env = *state;
	const struct taproot_frame *f;
	char path[64];
	uint8_t *code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FILE *pm;
	int n;

	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	pm = fopen(path, "w");
	assert_non_null(pm);
	fprintf(pm, "%lx 100 jit_function_one\nnot a line\n%lx 80 Interpreter::sh_ok(int)\n",
		(unsigned long)(uintptr_t)code, (unsigned long)(uintptr_t)code + 0x1000);
	fclose(pm);

	/* The mapping is new: the maps are read again, then the perf map. */
	n = taproot_sym_user(env->sym, env->self, (uint64_t)(uintptr_t)code + 0x10, 0, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "jit_function_one");
	assert_true(f[0].known);
	assert_int_equal(f[0].sym_offset, 0x10);
	assert_non_null(strstr(f[0].map_path, "perf-"));
	n = taproot_sym_user(env->sym, env->self, (uint64_t)(uintptr_t)code + 0x1004, 0, &f);
	assert_string_equal(f[0].function, "Interpreter::sh_ok(int)");
	/* Inside the mapping, outside every entry. */
	n = taproot_sym_user(env->sym, env->self, (uint64_t)(uintptr_t)code + 0x800, 0, &f);
	assert_string_equal(f[0].function, "[unknown]");
	assert_string_equal(f[0].map_path, "[anon]");
	assert_true(f[0].jit);
	assert_false(f[0].known);

	/* The map grows (a JVM writes its own at exit), and is read again. */
	pm = fopen(path, "a");
	assert_non_null(pm);
	fprintf(pm, "%lx 40 late_function\n", (unsigned long)(uintptr_t)code + 0x800);
	fclose(pm);
	assert_int_equal(taproot_proc_reload_perfmap(env->self), 0);
	n = taproot_sym_user(env->sym, env->self, (uint64_t)(uintptr_t)code + 0x808, 0, &f);
	assert_string_equal(f[0].function, "late_function");
	assert_true(f[0].known);
	assert_false(f[0].jit);
	unlink(path);
	munmap(code, 8192);
}

/* ------------------------------------------------ kernel and unknown */

static void kernel_symbols(void **state)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81003000 T schedule\n"
		"ffffffff81004000 T _etext\n"
		"ffffffffc0100000 t ext4_readdir\t[ext4]\n";
	struct taproot_ksyms *k;
	struct taproot_sym *s;
	const struct taproot_frame *f;
	FILE *in = fmemopen((void *)text, strlen(text), "r");

	assert_int_equal(taproot_ksyms_read(in, &k), 0);
	fclose(in);
	assert_int_equal(taproot_sym_new(NULL, k, &s), 0);
	assert_int_equal(taproot_sym_kernel(s, 0xffffffff81003010, 0, &f), 1);
	assert_string_equal(f[0].function, "schedule");
	assert_int_equal(f[0].sym_offset, 0x10);
	assert_string_equal(f[0].map_path, "[kernel.kallsyms]");
	/* A return address at a symbol's start belongs to the one before. */
	assert_int_equal(taproot_sym_kernel(s, 0xffffffff81003000, TAPROOT_SYM_RETADDR, &f), 1);
	assert_string_equal(f[0].function, "_stext");
	assert_int_equal(taproot_sym_kernel(s, 0xffffffffc0100020, 0, &f), 1);
	assert_string_equal(f[0].function, "ext4_readdir");
	assert_string_equal(f[0].map_path, "[ext4]");
	assert_int_equal(taproot_sym_kernel(s, 0x1000, 0, &f), 1);
	assert_string_equal(f[0].function, "[unknown]");
	assert_false(f[0].known);
	taproot_sym_free(s);
	taproot_ksyms_free(k);
}

static void kernel_notes_build_id(void **state)
{
	/* Two notes: "Linux" type 6, then "GNU" build ID of 20 bytes. */
	static const uint8_t notes[] = {
		6, 0, 0, 0,  4, 0, 0, 0,  6, 0, 0, 0,  'L', 'i', 'n', 'u', 'x', 0, 0, 0,
		1, 2, 3, 4,
		4, 0, 0, 0,  20, 0, 0, 0,  3, 0, 0, 0,  'G', 'N', 'U', 0,
		0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	};
	uint8_t id[64];
	FILE *f;

	assert_int_equal(tp_notes_build_id(notes, sizeof(notes), id, sizeof(id)), 20);
	assert_int_equal(id[0], 0xde);
	assert_int_equal(id[19], 16);
	/* Cut anywhere: no build ID, no read past the end. */
	for (size_t n = 0; n < sizeof(notes); n++) {
		uint8_t *copy = malloc(n ? n : 1);

		assert_non_null(copy);
		memcpy(copy, notes, n);
		assert_int_equal(tp_notes_build_id(copy, n, id, sizeof(id)), 0);
		free(copy);
	}
	/* The running kernel's, when readable: Debian's kernels have one. */
	f = fopen("/sys/kernel/notes", "rb");
	if (f) {
		uint8_t buf[4096];
		size_t n = fread(buf, 1, sizeof(buf), f);

		fclose(f);
		if (n)
			assert_true(tp_notes_build_id(buf, n, id, sizeof(id)) >= 16);
	}
}

static void unknown_and_exited(void **state)
{
	struct env *env = *state;
	const struct taproot_frame *f;
	struct taproot_proc *p;
	int n;

	n = taproot_sym_user(env->sym, env->self, 0x10, 0, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "[unknown]");
	assert_string_equal(f[0].map_path, "[unknown]");
	assert_int_equal(f[0].map_offset, 0x10);

	/* A pid that is not running (pid_max is below 2^22). */
	assert_int_equal(taproot_proc_get(env->procs, 0x7ffffff0, 0, &p), 0);
	n = taproot_sym_user(env->sym, p, 0x401000, 0, &f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "[unknown: process exited]");
	assert_false(f[0].known);
}

/* Flip bytes of a real library with symbols and DWARF: never a crash. */
static void corrupted_library_symbolizes_safely(void **state)
{
	struct env *env = *state;
	struct lib l;
	char path[160];
	FILE *f;
	long size;
	char *orig;
	unsigned int seed = 777;
	int round;

	lib_build(&l);
	orig = read_whole(l.full, &size);
	for (round = 0; round < 200; round++) {
		struct taproot_elf *e;
		const struct taproot_frame *fr;
		char *buf = malloc((size_t)size);
		int flips;

		assert_non_null(buf);
		memcpy(buf, orig, (size_t)size);
		for (flips = 0; flips < 1 + round % 16; flips++)
			buf[(size_t)rand_r(&seed) % (size_t)size] = (char)rand_r(&seed);
		/* A new name each round: a new file for the cache. */
		snprintf(path, sizeof(path), "%s/fuzz-%d.so", l.dir, round);
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, (size_t)size, f), (size_t)size);
		fclose(f);
		free(buf);
		if (taproot_elf_open(env->procs, path, &e) == 0) {
			assert_true(taproot_sym_elf(env->sym, e, l.local, 0, &fr) >= 1);
			assert_true(taproot_sym_elf(env->sym, e, l.exported + 3, 0, &fr) >= 1);
			assert_true(taproot_sym_elf(env->sym, e, l.cxx, 0, &fr) >= 1);
			assert_non_null(fr[0].function);
		}
		unlink(path);
	}
	free(orig);
	lib_remove(&l);
}

/*
 * A library whose .debug_line_str does not end with a NUL: its DWARF is
 * not used (libdw would read the last name past the section: a heap
 * overflow tests/fuzz/fuzz_elf found), its symbol table still is.
 */
static void unterminated_line_strings_not_read(void **state)
{
	struct env *env = *state;
	const struct taproot_frame *fr;
	struct taproot_elf *e;
	struct lib l;
	char path[160], *buf;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	long size;
	bool patched = false;
	Elf *elf;
	FILE *f;

	lib_build(&l);
	buf = read_whole(l.full, &size);

	elf_version(EV_CURRENT);
	elf = elf_memory(buf, (size_t)size);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		assert_non_null(gelf_getshdr(scn, &sh));
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, ".debug_line_str") && sh.sh_size &&
		    !(sh.sh_flags & SHF_COMPRESSED)) {
			assert_true(sh.sh_offset + sh.sh_size <= (uint64_t)size);
			buf[sh.sh_offset + sh.sh_size - 1] = 'x';
			patched = true;
		}
	}
	elf_end(elf);
	if (!patched) {
		free(buf);
		lib_remove(&l);
		skip();		/* a compiler without DWARF 5 line strings */
	}
	snprintf(path, sizeof(path), "%s/unterminated.so", l.dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	free(buf);

	assert_int_equal(taproot_elf_open(env->procs, path, &e), 0);
	assert_true(taproot_sym_elf(env->sym, e, l.local, 0, &fr) >= 1);
	assert_string_equal(fr[0].function, "tpfix_local");
	assert_null(fr[0].file);
	unlink(path);
	lib_remove(&l);
}

/* A copy of ELF file @from at @to without section headers (e_shoff, e_shnum, e_shstrndx 0). */
static void copy_without_section_headers(const char *from, const char *to)
{
	char cmd[512];
	Elf64_Ehdr eh;
	FILE *c;

	snprintf(cmd, sizeof(cmd), "cp %s %s", from, to);
	sh_ok(cmd);
	c = fopen(to, "r+");
	assert_non_null(c);
	assert_int_equal(fread(&eh, sizeof(eh), 1, c), 1);
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	rewind(c);
	assert_int_equal(fwrite(&eh, sizeof(eh), 1, c), 1);
	assert_int_equal(fclose(c), 0);
}

/*
 * Go binaries (tests/vm/progs/gosplit.go, built by the Makefile) are
 * named from their own function table, stripped or not, executable or
 * PIE: main.hotA's middle is main.hotA, in gosplit.go, at the line Go's
 * addr2line gives for the executable; the stripped builds (no symbols,
 * no DWARF) say the same at the same addresses, and so do copies of them
 * whose section headers are gone (the table found in their segments).
 */
static void go_binaries_named_from_their_table(void **state)
{
	static const char *const kinds[] = { "exe", "pie" };
	struct env *env = *state;

	for (size_t k = 0; k < 2; k++) {
		char path[128], stripped[160], noshdr[160], *out, want_file[512] = "", *colon;
		const struct taproot_frame *f;
		struct taproot_elf *e;
		unsigned int want_line = 0;
		uint64_t hot;
		FILE *p;

		snprintf(path, sizeof(path), "build/fixtures/go/gosplit-%s", kinds[k]);
		snprintf(stripped, sizeof(stripped), "%s-stripped", path);
		hot = nm_address(path, "main.hotA") + 0x10;
		if (k == 0) {	/* Go's tools do not read a PIE's table */
			char cmd[256], line[512];

			snprintf(cmd, sizeof(cmd), "echo %#llx | go tool addr2line %s",
				 (unsigned long long)hot, path);
			p = popen(cmd, "r");
			assert_non_null(p);
			assert_non_null(fgets(line, sizeof(line), p));
			assert_string_equal(line, "main.hotA\n");
			assert_non_null(fgets(line, sizeof(line), p));
			pclose(p);
			colon = strrchr(line, ':');
			assert_non_null(colon);
			want_line = (unsigned int)strtoul(colon + 1, NULL, 10);
			*colon = '\0';
			snprintf(want_file, sizeof(want_file), "%s", line);
			assert_true(want_line > 0);
		}
		snprintf(noshdr, sizeof(noshdr), "/tmp/test_symbolize-go-%d-%s", (int)getpid(), kinds[k]);
		copy_without_section_headers(stripped, noshdr);
		for (int st = 0; st < 3; st++) {
			const char *bin = st == 2 ? noshdr : st ? stripped : path;

			assert_int_equal(taproot_elf_open(env->procs, bin, &e), 0);
			assert_int_equal(taproot_sym_elf(env->sym, e, hot, 0, &f), 1);
			assert_string_equal(f[0].function, "main.hotA");
			assert_true(f[0].known);
			assert_int_equal(f[0].sym_offset, 0x10);
			assert_non_null(f[0].file);
			out = strstr(f[0].file, "gosplit.go");
			assert_non_null(out);
			assert_true(f[0].line > 0);
			if (want_line) {
				assert_string_equal(f[0].file, want_file);
				assert_int_equal(f[0].line, want_line);
			}
		}
		unlink(noshdr);
	}
}

/* One line of gosplit -frames: a pc of its stack and Go's frame for it. */
struct goframe_line {
	uint64_t pc, entry;
	char function[128], file[64];
	unsigned int line;
};

/*
 * The functions Go inlines, from its inline trees: gosplit -frames prints
 * its stack from inside calls inlined into printFrames, one pc per
 * logical frame as Go's runtime counts them, and Go's name, file and line
 * for each. The symbolizer, given each real return address, gives frames
 * (inlined first) that must be Go's for that pc and the ones runtime.Callers
 * made up for the calls inlined there, in order; then the walk of Go's
 * list goes on after them. In the executable and the PIE (at their
 * link-time addresses: the PIE's load base from main.main's entry), with
 * symbols and DWARF, stripped, and stripped of section headers too (the
 * module data that locates the trees then found in the segments); built
 * by the host's Go and each other release's (gofix.h).
 */
static void go_inlined_frames_match_runtime(void **state)
{
	static const char *const kinds[] = { "exe", "pie" };
	struct go_toolchain tc[GO_TOOLCHAINS_MAX];
	size_t ntc = go_toolchains(tc);
	struct env *env = *state;

	for (size_t k = 0; k < 2 * ntc; k++) {
		char path[128], stripped[160], noshdr[160], cmd[256], buf[512];
		struct goframe_line go[64];
		size_t ngo = 0, inlined = 0;
		uint64_t base = 0;
		FILE *p;

		go_fixture(&tc[k / 2], kinds[k % 2], path, sizeof(path));
		snprintf(stripped, sizeof(stripped), "%s-stripped", path);
		snprintf(noshdr, sizeof(noshdr), "/tmp/test_symbolize-goinl-%d-%s-%s", (int)getpid(),
			 tc[k / 2].name, kinds[k % 2]);
		copy_without_section_headers(stripped, noshdr);
		snprintf(cmd, sizeof(cmd), "%s -frames", path);
		p = popen(cmd, "r");
		assert_non_null(p);
		while (ngo < 64 && fgets(buf, sizeof(buf), p)) {
			struct goframe_line *g = &go[ngo++];
			unsigned long long pc, entry;

			assert_int_equal(sscanf(buf, "pc %llx %llx %127s %63s %u", &pc, &entry,
						g->function, g->file, &g->line), 5);
			g->pc = pc;
			g->entry = entry;
			if (!strcmp(g->function, "main.main"))
				base = g->entry - nm_address(path, "main.main");
		}
		assert_int_equal(pclose(p), 0);
		assert_true(ngo >= 5);
		if (k % 2 == 0)
			assert_int_equal(base, 0);

		for (int st = 0; st < 3; st++) {
			const char *bin = st == 2 ? noshdr : st ? stripped : path;
			struct taproot_elf *e;

			assert_int_equal(taproot_elf_open(env->procs, bin, &e), 0);
			for (size_t i = 0; i < ngo;) {
				const struct taproot_frame *f;
				int n = taproot_sym_elf(env->sym, e, go[i].pc - base,
							TAPROOT_SYM_RETADDR, &f);

				assert_true(n >= 1);
				for (int j = 0; j < n; j++, i++) {
					const char *file = f[j].file ? strrchr(f[j].file, '/') : NULL;

					file = file ? file + 1 : f[j].file ? f[j].file : "(none)";
					if (i >= ngo || strcmp(f[j].function, go[i].function) ||
					    strcmp(file, go[i].file) || f[j].line != go[i].line)
						fail_msg("%s pc %#llx frame %d: ours %s %s:%u, Go's %s %s:%u",
							 bin, (unsigned long long)go[i < ngo ? i : 0].pc, j,
							 f[j].function, file, f[j].line,
							 i < ngo ? go[i].function : "(none)",
							 i < ngo ? go[i].file : "", i < ngo ? go[i].line : 0);
					assert_true(f[j].inlined == (j < n - 1));
				}
				if (n > 1)
					inlined += (size_t)n - 1;
			}
		}
		print_message("%s: %zu frames of Go's, %zu of them inlined frames ours too\n",
			      path, ngo, inlined / 3);
		/* framesMid and framesOuter, inlined into printFrames */
		assert_true(inlined / 3 >= 2);
		unlink(noshdr);
	}
}

/*
 * A cgo binary (tests/unit/fixtures/gocgo.go): its Go code is named from
 * Go's table, with its file and line, and its C code, which the table
 * does not hold, from the ELF symbols, at the addresses nm gives.
 */
static void cgo_binary_named_both_ways(void **state)
{
	const char *bin = "build/fixtures/go/gocgo";
	struct env *env = *state;
	const struct taproot_frame *f;
	struct taproot_elf *e;
	uint64_t go = nm_address(bin, "main.goWork"), c = nm_address(bin, "cwork");

	assert_true(go && c);
	assert_int_equal(taproot_elf_open(env->procs, bin, &e), 0);
	assert_int_equal(taproot_sym_elf(env->sym, e, go + 1, 0, &f), 1);
	assert_string_equal(f[0].function, "main.goWork");
	assert_true(f[0].known);
	assert_int_equal(f[0].sym_offset, 1);
	assert_non_null(f[0].file);
	assert_true(ends_with(f[0].file, "gocgo.go"));
	assert_true(f[0].line > 0);
	assert_true(taproot_sym_elf(env->sym, e, c + 4, 0, &f) >= 1);
	assert_string_equal(f[0].function, "cwork");
	assert_true(f[0].known);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_function_named_with_line),
		cmocka_unit_test(inline_chain_two_frames),
		cmocka_unit_test(libc_functions),
		cmocka_unit_test(demangle_cxx),
		cmocka_unit_test(stripped_then_debug_file),
		cmocka_unit_test(debuglink_crc_mismatch_rejected),
		cmocka_unit_test(perfmap_parse_malformed),
		cmocka_unit_test(jit_code_from_perf_map),
		cmocka_unit_test(kernel_symbols),
		cmocka_unit_test(kernel_notes_build_id),
		cmocka_unit_test(unknown_and_exited),
		cmocka_unit_test(corrupted_library_symbolizes_safely),
		cmocka_unit_test(unterminated_line_strings_not_read),
		cmocka_unit_test(go_binaries_named_from_their_table),
		cmocka_unit_test(go_inlined_frames_match_runtime),
		cmocka_unit_test(cgo_binary_named_both_ways),
	};

	return cmocka_run_group_tests(tests, env_setup, env_teardown);
}
