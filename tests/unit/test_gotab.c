// SPDX-License-Identifier: GPL-2.0
/*
 * Go's function table reader (lib/runtime/gopclntab.c) against Go's own
 * tools, on tests/vm/progs/gosplit.go built by the Makefile with the
 * host's Go and each other release's of the kernel matrix (gofix.h) as an
 * executable and a PIE, each with and without symbols and DWARF
 * (-ldflags=-s -w); each toolchain's tools judge its own builds, the
 * PIE's DWARF and the malformed copies are the host's:
 *   - the table is found by its section, and by its header alone in the
 *     whole file (binaries whose section headers are gone), in the layout
 *     of the Go that built it;
 *   - for each function's entry, middle and last byte, the function, file
 *     and line are what `go tool addr2line` says (the executables: Go's
 *     tools look for a section named .gopclntab, which a PIE does not
 *     have); in the PIE, at each function's entry and middle, the name is
 *     its ELF symbol's and the file and line what libdw reads from its
 *     DWARF, and the stripped PIE holds the same functions;
 *   - the stack-pointer delta at each instruction of main's functions, up
 *     to their first RET, is what their instructions do to SP, as `go tool
 *     objdump` disassembles them;
 *   - truncated and corrupted copies of a real table are refused or read
 *     within their bounds (the sanitizer run checks the reads).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "runtime/runtime.h"
#include "runcmd.h"
#include "gofix.h"

#define fixtures go_fixtures
#define NR_FIXTURES NR_GO_FIXTURES

/* A fixture read whole, and where its table and text are. */
struct gobin {
	uint8_t *img;
	size_t size;
	size_t tab_off, tab_size;
	uint64_t text;			/* .text's address */
	struct tp_gotab t;
};

static void load(const char *path, struct gobin *b)
{
	struct stat st;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;
	int fd;

	memset(b, 0, sizeof(*b));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("%s: %s (make builds it)", path, strerror(errno));
	assert_int_equal(fstat(fd, &st), 0);
	b->size = (size_t)st.st_size;
	b->img = malloc(b->size);
	assert_non_null(b->img);
	assert_int_equal(pread(fd, b->img, b->size, 0), (ssize_t)b->size);
	close(fd);

	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_memory((char *)b->img, b->size);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		/* the PIE's is relocated, in .data.rel.ro */
		if (!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab")) {
			b->tab_off = sh.sh_offset;
			b->tab_size = sh.sh_size;
		} else if (!strcmp(name, ".text")) {
			b->text = sh.sh_addr;
		}
	}
	elf_end(elf);
	if (!b->tab_size || !b->text)
		fail_msg("%s: no .gopclntab or no .text section", path);
	assert_true(b->tab_off + b->tab_size <= b->size);
	assert_int_equal(tp_gotab_open(&b->t, b->img + b->tab_off, b->tab_size), 0);
	if (!b->t.text && b->t.layout >= TP_GO_1_18)
		b->t.text = b->text;	/* Go 1.27 on: the header no longer has it */
}

static void unload(struct gobin *b)
{
	free(b->img);
}

static const char *const kinds[] = { "exe", "exe-stripped", "pie", "pie-stripped" };

/* The layout @tc's Go writes, by its version. */
static enum tp_go_layout layout_of(const struct go_toolchain *tc)
{
	int minor = go_minor(tc);

	return minor >= 20 ? TP_GO_1_20 : minor >= 18 ? TP_GO_1_18 :
		minor >= 16 ? TP_GO_1_16 : TP_GO_1_2;
}

static void found_by_section_and_by_header(void **state)
{
	struct go_toolchain tc[GO_TOOLCHAINS_MAX];
	size_t ntc = go_toolchains(tc);

	for (size_t i = 0; i < 4 * ntc; i++) {
		enum tp_go_layout want = layout_of(&tc[i / 4]);
		char path[128];
		struct gobin b;
		struct tp_gofunc f;

		load(go_fixture(&tc[i / 4], kinds[i % 4], path, sizeof(path)), &b);
		print_message("%s: %s's Go, layout %d, %u functions\n", path, tc[i / 4].name,
			      (int)b.t.layout, b.t.nfunc);
		assert_int_equal(b.t.layout, want);
		assert_true(b.t.nfunc > 1000);
		/* the table's first function is the start of the text */
		assert_int_equal(tp_gotab_func(&b.t, b.text, &f), 0);
		assert_int_equal(f.entry, b.text);
		assert_int_equal(tp_gotab_func(&b.t, b.text - 1, &f), -ENOENT);
		/* no section needed: the header found in the whole file */
		assert_int_equal(tp_gotab_find(b.img, b.size), (long)b.tab_off);
		unload(&b);
	}
}

/* Function, file and line of every sampled pc: ours, then addr2line's. */
static void names_and_lines_match_addr2line(void **state)
{
	struct go_toolchain tc[GO_TOOLCHAINS_MAX];
	size_t ntc = go_toolchains(tc);

	for (size_t i = 0; i < 2 * ntc; i++) {	/* the executables */
		char tmp[] = "/tmp/test_gotab.XXXXXX", *out, *line, *save = NULL, path[128];
		const char *exe = go_fixture(&tc[i / 2], kinds[i % 2], path, sizeof(path));
		size_t n = 0, bad = 0, nfunc = 0;
		bool main_seen = false;
		struct tp_gofunc f;
		struct gobin b;
		uint64_t pc;
		FILE *pcs;
		int fd, st;

		load(exe, &b);
		fd = mkstemp(tmp);
		assert_true(fd >= 0);
		pcs = fdopen(fd, "w");
		assert_non_null(pcs);
		for (pc = b.text; tp_gotab_func(&b.t, pc, &f) == 0; pc = f.end) {
			fprintf(pcs, "%#llx\n%#llx\n%#llx\n", (unsigned long long)f.entry,
				(unsigned long long)(f.entry + (f.end - f.entry) / 2),
				(unsigned long long)(f.end - 1));
			main_seen |= !strcmp(f.name, "main.hotA");
			nfunc++;
		}
		fclose(pcs);
		assert_int_equal(nfunc, b.t.nfunc);
		assert_true(main_seen);

		out = run(&st, "%s tool addr2line %s <%s", tc[i / 2].go, exe, tmp);
		assert_int_equal(st, 0);
		line = strtok_r(out, "\n", &save);
		for (pc = b.text; line && tp_gotab_func(&b.t, pc, &f) == 0; pc = f.end) {
			uint64_t at[3] = { f.entry, f.entry + (f.end - f.entry) / 2, f.end - 1 };

			for (int k = 0; k < 3 && line; k++) {
				const char *file = "";
				char ours[8192], *theirs;
				int32_t ln = -1;

				/* Go's reader says ":-1" where the tables say nothing
				 * (padding after the last instruction, generated code) */
				if (tp_gotab_line(&b.t, &f, at[k], &file, &ln) != 0) {
					file = "";
					ln = -1;
				}
				theirs = strtok_r(NULL, "\n", &save);
				/* Go 1.2x's marks (go:textfipsstart) have no file and
				 * a negative line, which its reader prints as is */
				if (theirs && theirs[0] == ':' && theirs[1] == '-')
					theirs = ":-1";
				snprintf(ours, sizeof(ours), "%s:%d", file, ln);
				if (strcmp(line, f.name) || !theirs || strcmp(theirs, ours)) {
					if (bad++ < 10)
						print_message("%s %#llx: ours %s %s, addr2line %s %s\n",
							      exe, (unsigned long long)at[k],
							      f.name, ours, line, theirs ? theirs : "-");
				}
				n++;
				line = strtok_r(NULL, "\n", &save);
			}
		}
		assert_int_equal(n, 3 * nfunc);
		print_message("%s: %zu functions, %zu pcs, %zu differ from addr2line\n",
			      exe, nfunc, n, bad);
		assert_int_equal(bad, 0);
		free(out);
		unlink(tmp);
		unload(&b);
	}
}

/*
 * The table's name @ours and the ELF symbol @sym name the same function:
 * the symbols of assembly functions end in ".abi0", and the table writes
 * an array type's length as "[...]".
 */
static bool same_func(const char *ours, const char *sym)
{
	const char *open = strstr(ours, "[...]"), *close;
	size_t n = strlen(sym);

	if (n > 5 && !strcmp(sym + n - 5, ".abi0"))
		n -= 5;
	if (!open)
		return strlen(ours) == n && !strncmp(ours, sym, n);
	/* the same up to '[', then the same from the bracket's end */
	close = memchr(sym + (open - ours), ']', n - (size_t)(open - ours));
	return close && !strncmp(ours, sym, (size_t)(open - ours) + 1) &&
	       strlen(open + 4) == n - (size_t)(close - sym) &&
	       !strncmp(open + 4, close, n - (size_t)(close - sym));
}

/* A row of a DWARF line table: code at addr and after comes from file:line. */
struct dline {
	uint64_t addr;
	const char *file;
	int line;
	bool end;		/* end of a sequence: no code from here */
};

static int dline_cmp(const void *a, const void *b)
{
	const struct dline *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)y->end - (int)x->end;	/* an end before a start at one address */
}

/* Every row of every unit's line table of @dw, sorted by address. */
static struct dline *dwarf_rows(Dwarf *dw, size_t *nr)
{
	Dwarf_Off off = 0, next;
	size_t hsize, n = 0, cap = 0;
	struct dline *rows = NULL;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nl;

		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_getsrclines(&cu, &lines, &nl) == 0) {
			for (size_t i = 0; i < nl; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;
				bool end = false;

				if (n == cap) {
					cap = cap ? 2 * cap : 4096;
					rows = realloc(rows, cap * sizeof(*rows));
					assert_non_null(rows);
				}
				assert_int_equal(dwarf_lineaddr(l, &a), 0);
				assert_int_equal(dwarf_lineendsequence(l, &end), 0);
				rows[n].addr = a;
				rows[n].end = end;
				rows[n].file = dwarf_linesrc(l, NULL, NULL);
				assert_int_equal(dwarf_lineno(l, &rows[n].line), 0);
				n++;
			}
		}
		off = next;
	}
	qsort(rows, n, sizeof(*rows), dline_cmp);
	*nr = n;
	return rows;
}

/* The row in effect at @pc, or NULL. */
static const struct dline *dwarf_row_at(const struct dline *rows, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && !rows[lo - 1].end && rows[lo - 1].file ? &rows[lo - 1] : NULL;
}

/* The PIE's table against its symbols and DWARF, at each function's entry and middle. */
static void pie_names_and_lines_match_dwarf(void **state)
{
	size_t n = 0, bad = 0, named = 0, nrows;
	struct dline *rows;
	struct tp_gofunc f;
	struct gobin b;
	Elf_Scn *scn = NULL;
	Dwarf *dw;
	Elf *elf;
	int fd;

	load(fixtures[2], &b);
	fd = open(fixtures[2], O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	assert_non_null(dw);
	rows = dwarf_rows(dw, &nrows);
	assert_true(nrows > 1000);

	/* every function symbol names the function the table has there */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym sym;
			const char *name;

			assert_non_null(gelf_getsym(data, (int)k, &sym));
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			/* runtime.text marks the start of the text, not a function */
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !name ||
			    !strcmp(name, "runtime.text") ||
			    tp_gotab_func(&b.t, sym.st_value, &f) != 0 || f.entry != sym.st_value)
				continue;
			if (!same_func(f.name, name) && bad++ < 10)
				print_message("pie %#llx: ours %s, symbol %s\n",
					      (unsigned long long)sym.st_value, f.name, name);
			named++;
		}
	}

	for (uint64_t pc = b.text; tp_gotab_func(&b.t, pc, &f) == 0; pc = f.end) {
		uint64_t at[2] = { f.entry, f.entry + (f.end - f.entry) / 2 };

		for (int k = 0; k < 2; k++) {
			const struct dline *r = dwarf_row_at(rows, nrows, at[k]);
			const char *file = "", *theirs;
			int32_t ln = -1;

			if (!r)
				continue;	/* no DWARF line there */
			/*
			 * The unit's directory is "." (-trimpath): the table and
			 * libdw each put "./" before some names, not the same ones.
			 */
			theirs = strncmp(r->file, "./", 2) ? r->file : r->file + 2;
			n++;
			if (tp_gotab_line(&b.t, &f, at[k], &file, &ln) != 0 ||
			    strcmp(strncmp(file, "./", 2) ? file : file + 2, theirs) ||
			    ln != r->line) {
				if (bad++ < 10)
					print_message("pie %s %#llx: ours %s:%d, DWARF %s:%d\n", f.name,
						      (unsigned long long)at[k], file, ln, theirs, r->line);
			}
		}
	}
	print_message("%s: %zu functions named as their symbols, %zu pcs against DWARF\n",
		      fixtures[2], named, n);
	assert_true(named > 1000);
	assert_true(n > 1000);
	assert_int_equal(bad, 0);
	free(rows);
	dwarf_end(dw);
	elf_end(elf);
	close(fd);
	unload(&b);
}

struct sp_check {
	struct gobin *b;		/* [2]: the build with symbols, the stripped */
	const char *names[2];
	size_t checked, bad;
};

static void sp_check_one(void *ctx, uint64_t pc, const char *asm_text, int32_t d)
{
	struct sp_check *c = ctx;

	for (int k = 0; k < 2; k++) {
		struct tp_gofunc f;
		uint64_t until;
		int32_t ours;

		assert_int_equal(tp_gotab_func(&c->b[k].t, pc, &f), 0);
		assert_int_equal(tp_gotab_spdelta(&c->b[k].t, &f, pc, &ours, &until), 0);
		assert_true(until > pc && until <= f.end);
		if (ours != d && c->bad++ < 10)
			print_message("%s %s %#llx (%s): ours %d, instructions %d\n", c->names[k],
				      f.name, (unsigned long long)pc, asm_text, ours, d);
		c->checked++;
	}
}

/*
 * The stack-pointer deltas of main's functions, in the tables of @exe and
 * of @stripped (the same program linked without symbols: objdump cannot
 * disassemble it, and its table must hold the same functions at the same
 * addresses), against the instructions in @exe.
 */
static void sp_deltas_of(const char *go, const char *exe, const char *stripped)
{
	struct gobin b[2];
	struct sp_check c = { .b = b, .names = { exe, stripped } };
	size_t funcs;

	load(exe, &b[0]);
	load(stripped, &b[1]);
	assert_int_equal(b[0].t.nfunc, b[1].t.nfunc);
	for (uint64_t pc = b[0].text; pc;) {
		struct tp_gofunc f0, f1;

		if (tp_gotab_func(&b[0].t, pc, &f0) != 0)
			break;
		assert_int_equal(tp_gotab_func(&b[1].t, pc, &f1), 0);
		assert_int_equal(f0.entry, f1.entry);
		assert_int_equal(f0.end, f1.end);
		assert_string_equal(f0.name, f1.name);
		pc = f0.end;
	}
	funcs = go_main_deltas(go, exe, sp_check_one, &c);
	print_message("%s and %s: %zu instructions of %zu functions of main\n",
		      exe, stripped, c.checked / 2, funcs);
	assert_true(funcs >= 5);
	assert_true(c.checked > 100);
	assert_int_equal(c.bad, 0);
	unload(&b[0]);
	unload(&b[1]);
}

static void sp_deltas_match_objdump(void **state)
{
	struct go_toolchain tc[GO_TOOLCHAINS_MAX];
	size_t ntc = go_toolchains(tc);

	for (size_t i = 0; i < 2 * ntc; i++) {
		char exe[128], stripped[128];

		sp_deltas_of(tc[i / 2].go, go_fixture(&tc[i / 2], kinds[2 * (i % 2)], exe, sizeof(exe)),
			     go_fixture(&tc[i / 2], kinds[2 * (i % 2) + 1], stripped,
					sizeof(stripped)));
	}
}

/* Every lookup the reader offers, at @n pcs across the text. */
static void read_all(const struct tp_gotab *t, uint64_t text, uint64_t span, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		uint64_t pc = text + span * k / n;
		struct tp_gofunc f;
		const char *file;
		int32_t v;

		if (tp_gotab_func(t, pc, &f) != 0)
			continue;
		assert_true(f.entry <= pc && pc < f.end);
		assert_non_null(f.name);
		if (tp_gotab_line(t, &f, pc, &file, &v) == 0)
			assert_non_null(file);
		(void)tp_gotab_spdelta(t, &f, pc, &v, NULL);
	}
}

static void malformed_tables_stay_in_bounds(void **state)
{
	struct tp_gofunc last;
	struct gobin b;
	uint64_t span;
	uint8_t *copy;
	struct tp_gotab t;
	unsigned int seed = 12345, opened = 0;

	load(fixtures[0], &b);
	span = 0;
	for (uint64_t pc = b.text; tp_gotab_func(&b.t, pc, &last) == 0; pc = last.end)
		span = last.end - b.text;
	assert_true(span > 0);

	/* cut short anywhere: refused, or every read within what is left */
	for (size_t len = 0; len < b.tab_size; len += len < 256 ? 1 : 4099) {
		copy = malloc(len ? len : 1);
		assert_non_null(copy);
		memcpy(copy, b.img + b.tab_off, len);
		if (tp_gotab_open(&t, copy, len) == 0) {
			opened++;
			read_all(&t, b.text, span, 64);
		}
		free(copy);
	}
	/* the header's counts and offsets, and bytes anywhere, changed */
	copy = malloc(b.tab_size);
	assert_non_null(copy);
	for (int round = 0; round < 400; round++) {
		memcpy(copy, b.img + b.tab_off, b.tab_size);
		for (int k = 0; k < 8; k++) {
			size_t at = round < 200 ? 8 + (size_t)(rand_r(&seed) % 64)
						: (size_t)rand_r(&seed) % b.tab_size;

			copy[at] = (uint8_t)rand_r(&seed);
		}
		if (tp_gotab_open(&t, copy, b.tab_size) == 0) {
			opened++;
			read_all(&t, b.text, span, 256);
		}
	}
	free(copy);
	print_message("%u damaged tables opened and read\n", opened);
	/* not a table at all */
	assert_int_equal(tp_gotab_open(&t, "\xf1\xff\xff\xff\0\0\1\4xxxxxxxx", 16), -ENOTSUP);
	assert_int_equal(tp_gotab_open(&t, "0123456789abcdef", 16), -EINVAL);
	assert_int_equal(tp_gotab_find("0123456789abcdef", 16), -1);
	unload(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_by_section_and_by_header),
		cmocka_unit_test(names_and_lines_match_addr2line),
		cmocka_unit_test(pie_names_and_lines_match_dwarf),
		cmocka_unit_test(sp_deltas_match_objdump),
		cmocka_unit_test(malformed_tables_stay_in_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
