// SPDX-License-Identifier: GPL-2.0
/*
 * The CFI table compiler against libdw, on the system's own binaries: for a
 * dense sample of pcs (each row's first, middle and last byte, and a stride
 * over all text), the compiled table must give the rule libdw's frame
 * reduces to, and the table's step (tp_step_fast()) the registers libdw's
 * own expressions give (tp_step_slow()) on a synthetic stack. Rows the
 * table leaves to the slow path are counted, not compared.
 *
 * The ELF files: those of the list below that exist, and the paths in
 * $TAPROOT_CFI_ELFS (colon separated) — e.g. a libLLVM for a big one.
 *
 * Go binaries have no CFI: their rows come from Go's function table. For
 * the unit tests' Go fixtures (gofix.h: the host's Go and each other release's
 * of the kernel matrix), stripped or not, executable or
 * PIE, the rule at each instruction of main's functions must be the one
 * the instructions imply (go tool objdump): CFA = rsp + delta + 8, the
 * return address at CFA - 8, rbp saved at CFA - 16 in a frame of 16 bytes
 * or more; a goroutine's first function ends the walk; and nearly all of
 * the Go text has a rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>

#include "unwind/unwind-private.h"
#include "runcmd.h"
#include "gofix.h"
#include "nm.h"

static const char *const system_elfs[] = {
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/lib64/ld-linux-x86-64.so.2",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	"/usr/lib/x86_64-linux-gnu/libz.so.1",
	"/usr/lib/x86_64-linux-gnu/libdw.so.1",
	"/usr/bin/bash",
	"/usr/bin/python3.11",
	"/usr/bin/perl",
	"/usr/bin/gdb",
	/* .debug_frame only (built by the Makefile; tests run from the tree) */
	"build/fixtures/cfi-debug-frame.so",
};

struct elf_file {
	int fd;
	Elf *elf;
};

static bool elf_open(const char *path, struct elf_file *f)
{
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return false;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf) {
		close(f->fd);
		return false;
	}
	return true;
}

static void elf_close(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

/* ---------------------------------------------------- synthetic stack */

#define STACK_BASE	0x7ffd00000000ULL
#define STACK_WORDS	(64 * 1024 / 8)

static uint64_t word_at(uint64_t addr)
{
	uint64_t x = addr * 0x9e3779b97f4a7c15ULL;

	return x ^ (x >> 31);
}

static uint64_t stack_words[STACK_WORDS];

static void stack_fill(void)
{
	for (size_t i = 0; i < STACK_WORDS; i++)
		stack_words[i] = word_at(STACK_BASE + 8 * i);
}

static void synthetic_regs(struct tp_regs *r, uint64_t pc)
{
	for (int i = 0; i < TP_NR_REGS; i++)
		r->r[i] = STACK_BASE + 4096 + 512 * (uint64_t)i;
	r->r[TP_REG_RSP] = STACK_BASE + 8192;
	r->r[TP_REG_RBP] = STACK_BASE + 16384;
	r->r[TP_REG_RIP] = pc;
	r->valid = (1U << TP_NR_REGS) - 1;
}

/* ---------------------------------------------------------- the oracle */

struct check {
	const char *path;
	Dwarf_CFI *eh, *dcfi;
	uint64_t pcs, fast, slow, none, mismatches;
	unsigned int printed;
};

static void mismatch(struct check *c, uint64_t pc, const char *what,
		     const struct tp_cfi_rule *a, const struct tp_cfi_rule *b)
{
	c->mismatches++;
	if (c->printed++ >= 10)
		return;
	print_message("  MISMATCH %s pc %#llx: %s", c->path, (unsigned long long)pc, what);
	if (a)
		print_message(" table %s cfa%+d ra%+d rbp %u%+d",
			      tp_cfi_kind_name(a->kind), a->cfa_off, a->ra_off,
			      a->rbp, a->rbp_off);
	if (b)
		print_message(" libdw %s cfa%+d ra%+d rbp %u%+d",
			      tp_cfi_kind_name(b->kind), b->cfa_off, b->ra_off,
			      b->rbp, b->rbp_off);
	print_message("\n");
}

static void check_pc(struct check *c, const struct tp_cfi_table *t, uint64_t pc)
{
	const struct tp_cfi_rule *r = &t->rules[tp_cfi_lookup(t, pc)];
	struct tp_mem mem = { (const uint8_t *)stack_words, STACK_BASE, sizeof(stack_words) };
	struct tp_regs in, fast, slow;
	struct tp_cfi_rule want;
	Dwarf_Frame *f = NULL;
	Dwarf_CFI *cfi = c->eh;
	int rf, rs;

	c->pcs++;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) != 0) {
		cfi = c->dcfi;
		if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) != 0)
			f = NULL;
	}
	if (!f) {
		c->none++;
		if (r->kind != TP_CFI_NONE)
			mismatch(c, pc, "libdw has no FDE", r, NULL);
		return;
	}
	tp_cfi_classify(f, cfi == c->eh ? TP_CFI_SRC_EH : TP_CFI_SRC_DEBUG, &want);
	free(f);
	if (memcmp(r, &want, sizeof(want))) {
		mismatch(c, pc, "rules differ", r, &want);
		return;
	}
	if (r->kind == TP_CFI_SLOW) {
		c->slow++;
		return;
	}
	c->fast++;

	synthetic_regs(&in, pc);
	memset(&fast, 0, sizeof(fast));
	memset(&slow, 0, sizeof(slow));
	rf = tp_step_fast(r, &in, &mem, &fast);
	rs = tp_step_slow(cfi, pc, &in, &mem, &slow, NULL);
	if (rf != rs) {
		char buf[64];

		snprintf(buf, sizeof(buf), "step ends differ: table %d, libdw %d", rf, rs);
		mismatch(c, pc, buf, r, NULL);
		return;
	}
	if (rf != TP_STEP_OK)
		return;
	if (r->kind == TP_CFI_SIGNAL) {
		for (int i = 0; i < TP_NR_REGS; i++)
			if (fast.r[i] != slow.r[i] || !(slow.valid & (1U << i)))
				mismatch(c, pc, "signal frame registers differ", r, NULL);
		return;
	}
	if (fast.r[TP_REG_RSP] != slow.r[TP_REG_RSP] ||
	    fast.r[TP_REG_RIP] != slow.r[TP_REG_RIP] ||
	    (fast.valid & 1U << TP_REG_RBP) != (slow.valid & 1U << TP_REG_RBP) ||
	    ((fast.valid & 1U << TP_REG_RBP) &&
	     fast.r[TP_REG_RBP] != slow.r[TP_REG_RBP]))
		mismatch(c, pc, "step results differ", r, NULL);
}

static void check_elf(const char *path, unsigned int *kinds_seen)
{
	struct elf_file ef;
	struct tp_cfi_table *t = NULL;
	struct check c = { .path = path };
	Dwarf *dbg = NULL;
	Elf_Scn *scn = NULL;
	uint64_t text = 0;
	unsigned int kinds[8] = { 0 };
	int err;

	if (!elf_open(path, &ef))
		return;
	err = tp_cfi_compile(ef.elf, &t);
	if (err)
		fail_msg("%s: %s", path, taproot_errmsg(err));
	assert_non_null(t);
	assert_true(t->nr > 0);
	assert_int_equal(t->rules[0].kind, TP_CFI_NONE);
	assert_int_equal(t->rules[t->row_rule[t->nr - 1]].kind, TP_CFI_NONE);
	for (uint32_t i = 1; i < t->nr; i++) {
		assert_true(t->pcs[i - 1] < t->pcs[i]);
		assert_true(t->row_rule[i] != t->row_rule[i - 1]);	/* merged */
	}
	for (uint32_t i = 0; i < t->nr; i++)
		kinds[t->rules[t->row_rule[i]].kind]++;
	for (int k = 0; k < 8; k++)
		if (kinds[k])
			kinds_seen[k]++;
	for (uint32_t i = 0; i < t->nr_rules; i++)
		if (t->rules[i].src == TP_CFI_SRC_DEBUG) {
			kinds_seen[7]++;	/* an ELF with .debug_frame rules */
			break;
		}

	c.eh = dwarf_getcfi_elf(ef.elf);
	dbg = dwarf_begin_elf(ef.elf, DWARF_C_READ, NULL);
	c.dcfi = dbg ? dwarf_getcfi(dbg) : NULL;

	/* each row: first, middle and last byte */
	for (uint32_t i = 0; i + 1 < t->nr; i++) {
		uint64_t a = t->base + t->pcs[i], b = t->base + t->pcs[i + 1];

		check_pc(&c, t, a);
		if (b - a > 2)
			check_pc(&c, t, a + (b - a) / 2);
		if (b - a > 1)
			check_pc(&c, t, b - 1);
	}
	/* and a stride over all code, gaps and FDEs alike */
	while ((scn = elf_nextscn(ef.elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		text += sh.sh_size;
		for (uint64_t pc = sh.sh_addr; pc < sh.sh_addr + sh.sh_size; pc += 97)
			check_pc(&c, t, pc);
	}

	print_message("  %-44s %6u FDEs %7u rows %4u rules %8zu B (%.2f B/row) "
		      "%7.1f ms | code with CFI %.2f%%, slow %.3f%% | %7llu pcs: "
		      "%.2f%% fast, %.3f%% slow, %.2f%% no CFI\n",
		      path, t->nr_fdes, t->nr, t->nr_rules, t->bytes,
		      (double)t->bytes / t->nr, t->compile_ns / 1e6,
		      100.0 * t->covered / text, 100.0 * t->slow / text,
		      (unsigned long long)c.pcs, 100.0 * c.fast / c.pcs,
		      100.0 * c.slow / c.pcs, 100.0 * c.none / c.pcs);
	if (c.mismatches)
		fail_msg("%s: %llu pcs where the table and libdw differ", path,
			 (unsigned long long)c.mismatches);
	if (c.eh)
		dwarf_cfi_end(c.eh);
	if (dbg)
		dwarf_end(dbg);
	tp_cfi_table_free(t);
	elf_close(&ef);
}

static void test_oracle(void **state)
{
	unsigned int kinds_seen[8] = { 0 };
	const char *env = getenv("TAPROOT_CFI_ELFS");
	unsigned int n = 0;

	stack_fill();
	for (size_t i = 0; i < sizeof(system_elfs) / sizeof(system_elfs[0]); i++) {
		if (access(system_elfs[i], R_OK))
			continue;
		check_elf(system_elfs[i], kinds_seen);
		n++;
	}
	if (env && *env) {
		char *copy = strdup(env), *save = NULL;

		assert_non_null(copy);
		for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
			check_elf(p, kinds_seen);
			n++;
		}
		free(copy);
	}
	assert_true(n >= 2);
	/* glibc alone has them all: .plt, __restore_rt, _start / clone3 */
	assert_true(kinds_seen[TP_CFI_SP] > 0);
	assert_true(kinds_seen[TP_CFI_PLT] > 0);
	assert_true(kinds_seen[TP_CFI_SIGNAL] > 0);
	assert_true(kinds_seen[TP_CFI_END] > 0);
	/* the fixture's code has .debug_frame only */
	if (!access("build/fixtures/cfi-debug-frame.so", R_OK))
		assert_true(kinds_seen[7] > 0);
}

/* The PLT rule: CFA moves by 8 once the entry pushed its index. */
static void test_plt_rule(void **state)
{
	struct tp_cfi_rule r = { .kind = TP_CFI_PLT, .cfa_off = 8, .plt_thr = 11,
				 .ra_off = -8 };
	struct tp_mem mem = { (const uint8_t *)stack_words, STACK_BASE, sizeof(stack_words) };
	struct tp_regs in, out;

	stack_fill();
	synthetic_regs(&in, 0x26020);		/* entry start: jmp *GOT */
	assert_int_equal(tp_step_fast(&r, &in, &mem, &out), TP_STEP_OK);
	assert_int_equal(out.r[TP_REG_RSP], in.r[TP_REG_RSP] + 8);
	assert_int_equal(out.r[TP_REG_RIP], word_at(in.r[TP_REG_RSP]));
	synthetic_regs(&in, 0x2602b);		/* after push $index */
	assert_int_equal(tp_step_fast(&r, &in, &mem, &out), TP_STEP_OK);
	assert_int_equal(out.r[TP_REG_RSP], in.r[TP_REG_RSP] + 16);
	assert_int_equal(out.r[TP_REG_RIP], word_at(in.r[TP_REG_RSP] + 8));
}

/* Reads beyond the copy end as truncated, below it as a bad frame. */
static void test_step_bounds(void **state)
{
	struct tp_cfi_rule r = { .kind = TP_CFI_SP, .cfa_off = 16, .ra_off = -8,
				 .rbp = TP_RBP_CFA, .rbp_off = -16 };
	struct tp_mem mem = { (const uint8_t *)stack_words, STACK_BASE, 16 };
	struct tp_regs in, out;

	stack_fill();
	synthetic_regs(&in, 0x1000);
	in.r[TP_REG_RSP] = STACK_BASE;
	assert_int_equal(tp_step_fast(&r, &in, &mem, &out), TP_STEP_OK);
	assert_int_equal(out.r[TP_REG_RIP], word_at(STACK_BASE + 8));
	assert_int_equal(out.r[TP_REG_RBP], word_at(STACK_BASE));
	mem.len = 15;
	assert_int_equal(tp_step_fast(&r, &in, &mem, &out), TAPROOT_UNWIND_TRUNCATED);
	mem.len = 16;
	/* the saved rbp below the copy: unknown, the step goes on */
	in.r[TP_REG_RSP] = STACK_BASE - 8;
	assert_int_equal(tp_step_fast(&r, &in, &mem, &out), TP_STEP_OK);
	assert_int_equal(out.r[TP_REG_RIP], word_at(STACK_BASE));
	assert_false(out.valid & (1U << TP_REG_RBP));
	/* the return address below it: a bad frame */
	in.r[TP_REG_RSP] = STACK_BASE - 16;
	assert_int_equal(tp_step_fast(&r, &in, &mem, &out), TAPROOT_UNWIND_BAD_FRAME);
	r.kind = TP_CFI_FP;
	in.valid &= ~(1U << TP_REG_RBP);
	assert_int_equal(tp_step_fast(&r, &in, &mem, &out), TAPROOT_UNWIND_BAD_FRAME);
}

/* Not an x86-64 ELF: refused with a message. */
static void test_not_x86_64(void **state)
{
	static char junk[] = "\177ELF not really";
	struct tp_cfi_table *t = (void *)1;
	Elf *e = elf_memory(junk, sizeof(junk));
	int err;

	assert_non_null(e);
	err = tp_cfi_compile(e, &t);
	assert_int_equal(err, -EINVAL);
	assert_null(t);
	assert_non_null(strstr(taproot_errmsg(err), "x86-64"));
	elf_end(e);
}

/*
 * An x86-64 ELF64 with no CFI at all (a bare header: no sections, no
 * segments): an empty table, not an error. Found by tests/fuzz/fuzz_elf:
 * with no FDE the FDE array stayed NULL and went to qsort(), which UBSan
 * reports (qsort's array is declared nonnull).
 */
static void test_no_cfi_empty_table(void **state)
{
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
			     ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_ehsize = sizeof(Elf64_Ehdr),
	};
	struct tp_cfi_table *t = NULL;
	Elf *e = elf_memory((char *)&eh, sizeof(eh));

	assert_non_null(e);
	assert_int_equal(tp_cfi_compile(e, &t), 0);
	assert_non_null(t);
	assert_int_equal(t->nr, 0);
	assert_int_equal(t->nr_fdes, 0);
	assert_int_equal(tp_cfi_lookup(t, 0x1000), 0);
	tp_cfi_table_free(t);
	elf_end(e);
}

/* Compile the CFI of @len bytes at @buf; returns the table (caller frees). */
static struct tp_cfi_table *compile_bytes(char *buf, size_t len)
{
	struct tp_cfi_table *t = NULL;
	Elf *e = elf_memory(buf, len);

	assert_non_null(e);
	assert_int_equal(tp_cfi_compile(e, &t), 0);
	assert_non_null(t);
	elf_end(e);
	return t;
}

/*
 * A CIE whose program names register 2^27: its FDEs are not used (they
 * would make libdw build a 2 GiB state for every row: tests/fuzz/fuzz_elf
 * found a 35 KB file that took 90 s and 1 GB to compile). The fixture's
 * one CIE starts "def_cfa r7 8; offset r16 cfa-8" (0c 07 08 90 01),
 * rewritten in place to "undefined r134217728" (07 80 80 80 40).
 */
static void test_huge_register_refused(void **state)
{
	static const uint8_t cie[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };
	static const uint8_t bad[] = { 0x07, 0x80, 0x80, 0x80, 0x40 };
	struct tp_cfi_table *t;
	struct stat st;
	char *buf, *at = NULL;
	int fd = open("build/fixtures/cfi-debug-frame.so", O_RDONLY | O_CLOEXEC);
	uint32_t fdes;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);

	t = compile_bytes(buf, (size_t)st.st_size);
	fdes = t->nr_fdes;
	assert_true(fdes > 0);
	tp_cfi_table_free(t);

	for (char *p = buf; p + sizeof(cie) <= buf + st.st_size; p++) {
		if (!memcmp(p, cie, sizeof(cie))) {
			assert_null(at);	/* one CIE, found once */
			at = p;
		}
	}
	assert_non_null(at);
	memcpy(at, bad, sizeof(bad));
	t = compile_bytes(buf, (size_t)st.st_size);
	assert_int_equal(t->nr_fdes, 0);
	assert_int_equal(t->nr, 0);
	assert_int_equal(t->fdes_skipped, fdes);
	tp_cfi_table_free(t);
	free(buf);
}

struct go_check {
	struct tp_cfi_table *t[2];	/* the build with symbols, the stripped */
	size_t checked, bad;
};

static void go_check_one(void *ctx, uint64_t pc, const char *asm_text, int32_t d)
{
	struct go_check *c = ctx;

	for (int k = 0; k < 2; k++) {
		const struct tp_cfi_rule *r = &c->t[k]->rules[tp_cfi_lookup(c->t[k], pc)];
		bool ok = r->kind == TP_CFI_SP && r->cfa_off == d + 8 && r->ra_off == -8 &&
			  (d >= 16 ? r->rbp == TP_RBP_CFA && r->rbp_off == -16
				   : r->rbp == TP_RBP_SAME);

		if (!ok && c->bad++ < 10)
			print_message("%#llx (%s), delta %d: rule %s cfa %+d rbp %u %+d\n",
				      (unsigned long long)pc, asm_text, d, tp_cfi_kind_name(r->kind),
				      r->cfa_off, r->rbp, r->rbp_off);
		c->checked++;
	}
}

/* The table of the ELF file at @path (the caller frees it). */
static struct tp_cfi_table *compile_file(const char *path)
{
	struct tp_cfi_table *t = NULL;
	struct elf_file f;

	if (!elf_open(path, &f))
		fail_msg("%s: cannot open (make builds it)", path);
	assert_int_equal(tp_cfi_compile(f.elf, &t), 0);
	elf_close(&f);
	return t;
}

static void test_go_rows(void **state)
{
	struct go_toolchain tc[GO_TOOLCHAINS_MAX];
	size_t ntc = go_toolchains(tc);

	for (size_t i = 0; i < 2 * ntc; i++) {
		const struct go_toolchain *g = &tc[i / 2];
		char exe[128], stripped[128];
		struct go_check c = {
			.t = { compile_file(go_fixture(g, i % 2 ? "pie" : "exe", exe, sizeof(exe))),
			       compile_file(go_fixture(g, i % 2 ? "pie-stripped" : "exe-stripped",
						       stripped, sizeof(stripped))) },
		};
		/* assembly functions' symbols end in .abi0 from Go 1.17 */
		uint64_t goexit = nm_address(exe, "runtime.goexit.abi0") ?:
				  nm_address(exe, "runtime.goexit");
		size_t funcs = go_main_deltas(g->go, exe, go_check_one, &c);

		assert_true(goexit != 0);
		print_message("%s: %u rows, %u rules, %llu bytes of text covered; "
			      "%zu instructions of %zu functions of main checked\n",
			      exe, c.t[0]->nr, c.t[0]->nr_rules,
			      (unsigned long long)c.t[0]->covered, c.checked / 2, funcs);
		assert_true(funcs >= 5 && c.checked > 100);
		assert_int_equal(c.bad, 0);
		/* rows from the first function to the end of the last: nearly all ruled */
		assert_true(c.t[0]->nr > 1000);
		assert_true(c.t[0]->covered * 100 >= 95ull * c.t[0]->pcs[c.t[0]->nr - 1]);
		for (int k = 0; k < 2; k++)
			assert_int_equal(c.t[k]->rules[tp_cfi_lookup(c.t[k], goexit + 1)].kind,
					 TP_CFI_END);
		/* the stripped build's table is the same */
		assert_int_equal(c.t[1]->nr, c.t[0]->nr);
		assert_int_equal(c.t[1]->covered, c.t[0]->covered);
		tp_cfi_table_free(c.t[0]);
		tp_cfi_table_free(c.t[1]);
	}
}

/*
 * A cgo binary (tests/unit/fixtures/gocgo.go) has both sources of rows:
 * .eh_frame for its C code (cwork, a leaf: CFA = rsp + 8 throughout), and
 * Go's table for its Go code, whose rules in main's functions are what
 * their instructions do to SP (go tool objdump), as in a Go-only binary.
 */
static void test_cgo_rows(void **state)
{
	const char *bin = "build/fixtures/go/gocgo";
	struct tp_cfi_table *t = compile_file(bin);
	struct go_check c = { .t = { t, t } };
	uint64_t cwork = nm_address(bin, "cwork");
	size_t funcs = go_main_deltas("go", bin, go_check_one, &c);

	assert_true(cwork != 0);
	for (uint64_t pc = cwork; pc < cwork + 8; pc++) {
		const struct tp_cfi_rule *r = &t->rules[tp_cfi_lookup(t, pc)];

		assert_int_equal(r->kind, TP_CFI_SP);
		assert_int_equal(r->cfa_off, 8);
		assert_int_equal(r->ra_off, -8);
	}
	print_message("%s: %zu instructions of %zu functions of main checked\n", bin,
		      c.checked / 2, funcs);
	assert_true(funcs >= 2 && c.checked > 20);
	assert_int_equal(c.bad, 0);
	tp_cfi_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plt_rule),
		cmocka_unit_test(test_step_bounds),
		cmocka_unit_test(test_not_x86_64),
		cmocka_unit_test(test_no_cfi_empty_table),
		cmocka_unit_test(test_huge_register_refused),
		cmocka_unit_test(test_oracle),
		cmocka_unit_test(test_go_rows),
		cmocka_unit_test(test_cgo_rows),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
