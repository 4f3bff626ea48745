// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder, end to end:
 *  - synthetic stacks laid out by libc's own compiled rules (the table is
 *    checked against libdw in test_cfi): random chains of frames with
 *    sp- and rbp-based CFAs, a PLT leaf, a signal frame through
 *    __restore_rt, ending in RA 0 or in a frame whose RA is undefined;
 *  - every truncation of such a stack ends "truncated" with a prefix of
 *    the chain, never garbage; max depth, no mapping, bad frames;
 *  - the rbp chain where an ELF has no CFI;
 *  - this process's own stack, captured inside a chain of noinline
 *    functions, unwound through main() and libc to _start;
 *  - the table cache's byte limit and LRU eviction;
 *  - speed: frames per second, warm (printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <gelf.h>

#include "unwind/unwind-private.h"

/* copied from sp up: as much as the module copies at most */
#define OWNSTACK_MAX	TAPROOT_USTACK_MAX
#include "ownstack.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* ------------------------------------------------------------ mappings */

struct tmap {
	uint64_t start, end, bias;
	Elf *elf;
	int fd;
	char key[256];
};

struct tmaps {
	struct tmap m[128];
	unsigned int n;
	unsigned int calls;
};

static int map_cb(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	struct tmaps *ms = arg;
	unsigned int lo = 0, hi = ms->n;

	ms->calls++;
	while (lo < hi) {		/* sorted by start */
		unsigned int mid = (lo + hi) / 2;

		if (pc < ms->m[mid].start)
			hi = mid;
		else if (pc >= ms->m[mid].end)
			lo = mid + 1;
		else {
			const struct tmap *m = &ms->m[mid];

			um->elf = m->elf;
			um->key = (const uint8_t *)m->key;
			um->key_len = strlen(m->key);
			um->bias = m->bias;
			um->start = m->start;
			um->end = m->end;
			return 1;
		}
	}
	return 0;
}

static void tmaps_free(struct tmaps *ms)
{
	for (unsigned int i = 0; i < ms->n; i++) {
		if (ms->m[i].elf)
			elf_end(ms->m[i].elf);
		if (ms->m[i].fd >= 0)
			close(ms->m[i].fd);
	}
	ms->n = 0;
}

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		close(*fd);
		*fd = -1;
	}
	return e;
}

/* The range of vaddrs the PT_LOAD segments of @e cover. */
static void elf_span(Elf *e, uint64_t *lo, uint64_t *hi)
{
	size_t n;

	*lo = UINT64_MAX;
	*hi = 0;
	assert_int_equal(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < *lo)
			*lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > *hi)
			*hi = ph.p_vaddr + ph.p_memsz;
	}
}

/* /proc/self/maps: each executable file mapping, with its ELF. */
static void tmaps_self(struct tmaps *ms)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	assert_non_null(f);
	ms->n = 0;
	while (fgets(line, sizeof(line), f) && ms->n < 128) {
		unsigned long start, end, pgoff;
		char perms[8], path[256] = "";
		struct tmap *m = &ms->m[ms->n];
		size_t nph;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &start, &end, perms,
			   &pgoff, path) < 4 || perms[2] != 'x' || path[0] != '/')
			continue;
		m->elf = open_elf(path, &m->fd);
		if (!m->elf)
			continue;
		m->start = start;
		m->end = end;
		m->bias = 0;
		snprintf(m->key, sizeof(m->key), "%s", path);
		assert_int_equal(elf_getphdrnum(m->elf, &nph), 0);
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    pgoff < (ph.p_offset & ~0xfffUL) ||
			    pgoff >= ph.p_offset + ph.p_filesz)
				continue;
			m->bias = start - (ph.p_vaddr - (ph.p_offset - pgoff));
			break;
		}
		ms->n++;
	}
	fclose(f);
	assert_true(ms->n >= 2);
}

/* ---------------------------------------------- synthetic libc stacks */

#define LIBC_BIAS	0x7f1234000000ULL
#define SYN_BASE	0x7ffe00000000ULL
#define SYN_WORDS	8192
#define MAX_FRAMES	64

struct libc {
	struct tmaps maps;
	struct tp_cfi_table *t;
	uint64_t restore_rt;		/* vaddr */
	uint64_t plt_row;		/* vaddr of the PLT rule's row */
	uint32_t *sp_rows, *fp_rows, *end_rows;
	size_t nr_sp, nr_fp, nr_end;
};

static struct libc libc;

static const struct tp_cfi_rule *row_rule(uint32_t row)
{
	return &libc.t->rules[libc.t->row_rule[row]];
}

static uint64_t row_pc(uint32_t row)
{
	return libc.t->base + libc.t->pcs[row];
}

static int setup_libc(void **state)
{
	struct tmap *m = &libc.maps.m[0];
	uint64_t lo, hi;

	memset(&libc, 0, sizeof(libc));
	m->elf = open_elf(LIBC, &m->fd);
	if (!m->elf)
		return -1;
	elf_span(m->elf, &lo, &hi);
	m->bias = LIBC_BIAS;
	m->start = LIBC_BIAS + lo;
	m->end = LIBC_BIAS + hi;
	snprintf(m->key, sizeof(m->key), "libc");
	libc.maps.n = 1;
	if (tp_cfi_compile(m->elf, &libc.t))
		return -1;
	libc.sp_rows = calloc(libc.t->nr, sizeof(uint32_t));
	libc.fp_rows = calloc(libc.t->nr, sizeof(uint32_t));
	libc.end_rows = calloc(libc.t->nr, sizeof(uint32_t));
	if (!libc.sp_rows || !libc.fp_rows || !libc.end_rows)
		return -1;
	for (uint32_t i = 0; i + 1 < libc.t->nr; i++) {
		const struct tp_cfi_rule *r = row_rule(i);
		uint64_t len = libc.t->pcs[i + 1] - libc.t->pcs[i];

		if (len < 2)
			continue;
		/* slots below sp: stale saves of an epilogue, not for a chain */
		if (r->rbp == TP_RBP_CFA && r->cfa_off + r->rbp_off < 0)
			continue;
		switch (r->kind) {
		case TP_CFI_SP:
			if (r->cfa_off >= 8 && r->cfa_off <= 512 && r->ra_off == -8)
				libc.sp_rows[libc.nr_sp++] = i;
			break;
		case TP_CFI_FP:
			if (r->cfa_off == 16 && r->ra_off == -8)
				libc.fp_rows[libc.nr_fp++] = i;
			break;
		case TP_CFI_END:
			libc.end_rows[libc.nr_end++] = i;
			break;
		case TP_CFI_SIGNAL:
			libc.restore_rt = row_pc(i) + 1;
			break;
		case TP_CFI_PLT:
			libc.plt_row = row_pc(i);
			break;
		}
	}
	if (!libc.nr_sp || !libc.nr_fp || !libc.nr_end || !libc.restore_rt ||
	    !libc.plt_row)
		return -1;
	return 0;
}

static int teardown_libc(void **state)
{
	tmaps_free(&libc.maps);
	tp_cfi_table_free(libc.t);
	free(libc.sp_rows);
	free(libc.fp_rows);
	free(libc.end_rows);
	return 0;
}

struct synth {
	uint64_t w[SYN_WORDS];
	size_t len;				/* bytes the chain needs */
	struct taproot_user_regs regs;
	uint64_t pcs[MAX_FRAMES];		/* expected, biased */
	uint8_t flags[MAX_FRAMES];
	unsigned int n;
};

struct syn_opts {
	unsigned int frames;
	bool plt_leaf;			/* frame 0 in a PLT entry */
	int signal_at;			/* this frame is __restore_rt; -1: none */
	bool end_rule;			/* the last frame's RA is undefined */
};

struct syn_frame {
	uint64_t pc;			/* vaddr */
	const struct tp_cfi_rule *r;
	bool exact;
};

static void syn_write(struct synth *s, uint64_t addr, uint64_t v)
{
	assert_true(addr >= SYN_BASE && addr + 8 <= SYN_BASE + sizeof(s->w));
	assert_int_equal(addr & 7, 0);
	s->w[(addr - SYN_BASE) / 8] = v;
	if (addr + 8 - SYN_BASE > s->len)
		s->len = addr + 8 - SYN_BASE;
}

/* rbp for frame @f whose sp is @sp, when its caller's frame lets us choose */
static uint64_t choose_rbp(const struct syn_frame *f, uint64_t sp, unsigned int i)
{
	if (f->r->kind == TP_CFI_FP)
		return sp + 16 + 8 * (uint64_t)(rand() % 32) - (uint64_t)f->r->cfa_off + 16;
	return 0x5555000000000000ULL | i;
}

/*
 * Pick a chain of frames of libc (rules from the compiled table), then lay
 * out the stack @s so that each frame's rule finds its caller: the return
 * address at CFA + ra_off, the caller's rbp where the rule saved it.
 */
static void synth_build(struct synth *s, const struct syn_opts *o, unsigned int seed)
{
	struct syn_frame f[MAX_FRAMES];
	uint64_t sp = SYN_BASE, rbp;
	unsigned int n = o->frames;

	assert_true(n >= 2 && n < MAX_FRAMES);
	memset(s, 0, sizeof(*s));
	srand(seed);
	for (size_t k = 0; k < SYN_WORDS; k++)
		s->w[k] = 0xdead000000000000ULL | k;	/* no pc of any mapping */

	/* the frames */
	for (unsigned int i = 0; i < n; i++) {
		bool exact = i == 0 || (int)i == o->signal_at + 1;
		bool rbp_free = i == 0 || (int)i == o->signal_at + 1 ||
				f[i - 1].r->rbp == TP_RBP_CFA;
		uint32_t row;

		if (i == 0 && o->plt_leaf) {
			f[i].pc = libc.plt_row + 16 + 11;	/* entry 0, pushed */
			f[i].r = &libc.t->rules[tp_cfi_lookup(libc.t, f[i].pc)];
			assert_int_equal(f[i].r->kind, TP_CFI_PLT);
		} else if ((int)i == o->signal_at) {
			assert_true(i > 0 && i + 1 < n);
			f[i].pc = libc.restore_rt;
			f[i].r = &libc.t->rules[tp_cfi_lookup(libc.t, f[i].pc - 1)];
			assert_int_equal(f[i].r->kind, TP_CFI_SIGNAL);
		} else {
			if (i == n - 1 && o->end_rule)
				row = libc.end_rows[(unsigned int)rand() % libc.nr_end];
			else if (rbp_free && rand() % 3 == 0)
				row = libc.fp_rows[(unsigned int)rand() % libc.nr_fp];
			else
				row = libc.sp_rows[(unsigned int)rand() % libc.nr_sp];
			f[i].pc = row_pc(row) + (exact ? 0 : 1);
			f[i].r = row_rule(row);
		}
		f[i].exact = exact;
		s->pcs[i] = f[i].pc + LIBC_BIAS;
		s->flags[i] = exact ? TAPROOT_FRAME_EXACT : 0;
	}
	s->n = n;

	/* the stack */
	rbp = choose_rbp(&f[0], sp, 0);
	s->regs.sp = sp;
	s->regs.bp = rbp;
	s->regs.ip = s->pcs[0];
	s->regs.ax = 0xa0;
	s->regs.bx = 0xb0;
	for (unsigned int i = 0; i < n; i++) {
		const struct tp_cfi_rule *r = f[i].r;
		uint64_t cfa = 0, next_pc = i + 1 < n ? s->pcs[i + 1] : 0;

		switch (r->kind) {
		case TP_CFI_END:
			assert_int_equal(i, n - 1);
			return;
		case TP_CFI_SIGNAL: {
			static const uint8_t dwarf_of_greg[17] = {
				8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16
			};
			uint64_t isp = sp + 1024;

			rbp = choose_rbp(&f[i + 1], isp, i + 1);
			for (unsigned int g = 0; g < 17; g++) {
				uint64_t v = 0x1000 + g;

				switch (dwarf_of_greg[g]) {
				case TP_REG_RSP: v = isp; break;
				case TP_REG_RIP: v = next_pc; break;
				case TP_REG_RBP: v = rbp; break;
				}
				syn_write(s, sp + 40 + 8 * g, v);
			}
			sp = isp;
			continue;
		}
		case TP_CFI_SP: cfa = sp + (uint64_t)(int64_t)r->cfa_off; break;
		case TP_CFI_FP: cfa = rbp + (uint64_t)(int64_t)r->cfa_off; break;
		case TP_CFI_PLT: cfa = sp + (uint64_t)(int64_t)r->cfa_off + 8; break;
		default: fail_msg("rule kind %u", r->kind);
		}
		assert_true(cfa > sp);
		syn_write(s, cfa + (uint64_t)(int64_t)r->ra_off, next_pc);
		if (r->rbp == TP_RBP_CFA) {
			rbp = i + 1 < n ? choose_rbp(&f[i + 1], cfa, i + 1) : 0;
			syn_write(s, cfa + (uint64_t)(int64_t)r->rbp_off, rbp);
		} else if (r->rbp == TP_RBP_UNDEF) {
			rbp = 0;
		}
		sp = cfa;
	}
}

static struct taproot_unwinder *new_unwinder(size_t limit)
{
	static const struct taproot_unwind_ops ops = { .map = map_cb };
	struct taproot_unwinder *u = NULL;

	assert_int_equal(taproot_unwinder_new(&ops, limit, &u), 0);
	assert_non_null(u);
	return u;
}

static void unwind_synth(struct taproot_unwinder *u, const struct synth *s,
			 size_t len, unsigned int max, uint64_t *pcs, uint8_t *flags,
			 struct taproot_unwind_result *res)
{
	int n = taproot_unwind(u, (void *)&libc.maps, &s->regs, s->w, len, pcs,
			       flags, max, res);

	assert_int_equal(n, (int)res->nr);
}

static void check_synth(const struct synth *s, const char *what)
{
	struct taproot_unwinder *u = new_unwinder(0);
	struct taproot_unwind_result res;
	uint64_t pcs[MAX_FRAMES];
	uint8_t flags[MAX_FRAMES];

	unwind_synth(u, s, s->len, MAX_FRAMES, pcs, flags, &res);
	if (res.end != TAPROOT_UNWIND_COMPLETE || res.nr != s->n) {
		for (unsigned int i = 0; i < res.nr || i < s->n; i++)
			print_message("  %s %2u: got %#llx want %#llx\n", what, i,
				      i < res.nr ? (unsigned long long)pcs[i] : 0ULL,
				      i < s->n ? (unsigned long long)s->pcs[i] : 0ULL);
		fail_msg("%s: end %s, %u frames, want complete, %u",
			 what, taproot_unwind_end_name(res.end), res.nr, s->n);
	}
	for (unsigned int i = 0; i < s->n; i++) {
		assert_int_equal(pcs[i], s->pcs[i]);
		assert_int_equal(flags[i] & TAPROOT_FRAME_EXACT, s->flags[i]);
	}
	assert_int_equal(res.slow_frames, 0);
	assert_int_equal(res.fp_frames, 0);
	taproot_unwinder_free(u);
}

static void test_synthetic_chains(void **state)
{
	struct synth *s = malloc(sizeof(*s));

	assert_non_null(s);
	for (unsigned int seed = 1; seed <= 200; seed++) {
		struct syn_opts o = {
			.frames = 2 + seed % 30,
			.plt_leaf = seed % 5 == 0,
			.signal_at = seed % 4 == 0 && 2 + seed % 30 >= 5 ? 1 + (int)(seed % 3) : -1,
			.end_rule = seed % 2 == 0,
		};
		char what[64];

		snprintf(what, sizeof(what), "seed %u", seed);
		synth_build(s, &o, seed);
		check_synth(s, what);
	}
	free(s);
}

/* Every cut of the copy: "truncated" and a prefix of the chain. */
static void test_truncation(void **state)
{
	struct taproot_unwinder *u = new_unwinder(0);
	struct synth *s = malloc(sizeof(*s));
	struct syn_opts o = { .frames = 20, .signal_at = 7, .end_rule = true };
	struct taproot_unwind_result res;
	uint64_t pcs[MAX_FRAMES];
	unsigned int prev = 0;

	assert_non_null(s);
	synth_build(s, &o, 42);
	for (size_t len = 0; len <= s->len; len++) {
		unwind_synth(u, s, len, MAX_FRAMES, pcs, NULL, &res);
		assert_true(res.nr >= 1 && res.nr <= s->n);
		assert_memory_equal(pcs, s->pcs, res.nr * sizeof(pcs[0]));
		assert_true(res.nr >= prev);
		prev = res.nr;
		if (len < s->len)
			assert_int_equal(res.end, TAPROOT_UNWIND_TRUNCATED);
	}
	assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);
	assert_int_equal(res.nr, s->n);
	/* no copy at all */
	unwind_synth(u, s, 0, MAX_FRAMES, pcs, NULL, &res);
	assert_int_equal(res.nr, 1);
	assert_int_equal(res.end, TAPROOT_UNWIND_TRUNCATED);
	taproot_unwinder_free(u);
	free(s);
}

static void test_ends(void **state)
{
	struct taproot_unwinder *u = new_unwinder(0);
	struct synth *s = malloc(sizeof(*s));
	struct syn_opts o = { .frames = 10, .signal_at = -1 };
	struct taproot_unwind_result res;
	struct taproot_unwind_stats st;
	uint64_t pcs[MAX_FRAMES];
	int n;

	assert_non_null(s);
	synth_build(s, &o, 7);

	/* max depth */
	unwind_synth(u, s, s->len, 3, pcs, NULL, &res);
	assert_int_equal(res.nr, 3);
	assert_int_equal(res.end, TAPROOT_UNWIND_MAX_DEPTH);
	n = taproot_unwind(u, &libc.maps, &s->regs, s->w, s->len, pcs, NULL, 0, &res);
	assert_int_equal(n, 0);
	assert_int_equal(res.end, TAPROOT_UNWIND_MAX_DEPTH);

	/* a return address into no mapping: that pc is the last */
	for (size_t k = 0; k < SYN_WORDS; k++)
		if (s->w[k] == s->pcs[4])
			s->w[k] = 0x1234;
	unwind_synth(u, s, s->len, MAX_FRAMES, pcs, NULL, &res);
	assert_int_equal(res.nr, 5);
	assert_int_equal(pcs[4], 0x1234);
	assert_int_equal(res.end, TAPROOT_UNWIND_NO_MAPPING);

	/* the leaf in no mapping */
	s->regs.ip = 0x1234;
	unwind_synth(u, s, s->len, MAX_FRAMES, pcs, NULL, &res);
	assert_int_equal(res.nr, 1);
	assert_int_equal(res.end, TAPROOT_UNWIND_NO_MAPPING);

	/* an rbp-based CFA below the copy: a bad frame */
	s->regs.ip = row_pc(libc.fp_rows[0]) + LIBC_BIAS;
	s->regs.bp = SYN_BASE - 64;
	unwind_synth(u, s, s->len, MAX_FRAMES, pcs, NULL, &res);
	assert_int_equal(res.nr, 1);
	assert_int_equal(res.end, TAPROOT_UNWIND_BAD_FRAME);

	taproot_unwinder_stats(u, &st);
	assert_int_equal(st.unwinds, 5);
	assert_int_equal(st.ends[TAPROOT_UNWIND_MAX_DEPTH], 2);
	assert_int_equal(st.ends[TAPROOT_UNWIND_NO_MAPPING], 2);
	assert_int_equal(st.compiles, 1);
	assert_int_equal(st.tables, 1);
	assert_string_equal(taproot_unwind_end_name(TAPROOT_UNWIND_TRUNCATED), "truncated");
	taproot_unwinder_free(u);
	free(s);
}

/* ------------------------------------------------- rbp chain, no CFI */

#define NOCFI_START 0x400000ULL

static int nocfi_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	if (pc < NOCFI_START || pc >= NOCFI_START + 0x10000)
		return 0;
	um->elf = NULL;			/* no ELF: no CFI */
	um->key = (const uint8_t *)"nocfi";
	um->key_len = 5;
	um->bias = 0;
	um->start = NOCFI_START;
	um->end = NOCFI_START + 0x10000;
	return 1;
}

/*
 * A leaf whose return address is in a register: glibc's __vfork pops it
 * into rdi before the syscall ("cfi_register(rip, rdi)", CFA = rsp), and a
 * vfork parent blocks right after that syscall. The caller's frame is then
 * at the same sp; the unwinder must take rdi and go on, not call it a bad
 * frame.
 */
static void test_ra_in_register(void **state)
{
	struct taproot_unwinder *u = new_unwinder(0);
	struct taproot_user_regs regs;
	struct taproot_unwind_result res;
	static uint64_t zeros[64];
	uint64_t pcs[8], vfork;
	uint32_t end_row;
	Dl_info di;
	void *fn;

	(void)state;
	fn = dlsym(RTLD_DEFAULT, "__vfork");
	assert_non_null(fn);
	assert_true(dladdr(fn, &di) != 0);
	vfork = (uint64_t)(uintptr_t)fn - (uint64_t)(uintptr_t)di.dli_fbase;
	/* the CFA rule of an END row never matters: a row the caller is in */
	end_row = libc.end_rows[0];

	memset(&regs, 0, sizeof(regs));
	regs.ip = LIBC_BIAS + vfork + 8;	/* pop %rdi; mov $58,%eax; syscall */
	regs.sp = SYN_BASE;
	regs.di = LIBC_BIAS + row_pc(end_row) + 1;
	assert_int_equal(taproot_unwind(u, &libc.maps, &regs, zeros, sizeof(zeros),
					pcs, NULL, 8, &res), 2);
	assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);
	assert_int_equal(pcs[0], regs.ip);
	assert_int_equal(pcs[1], regs.di);
	taproot_unwinder_free(u);
}

static void test_fp_fallback(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = nocfi_map };
	struct taproot_unwinder *u = NULL;
	struct taproot_unwind_result res;
	struct taproot_user_regs regs = { 0 };
	uint64_t stack[64] = { 0 }, pcs[16];
	uint8_t flags[16];
	uint64_t base = SYN_BASE;

	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);
	/* frames at words 4, 12, 20: {saved rbp, ra} */
	stack[4] = base + 12 * 8;  stack[5] = NOCFI_START + 0x100;
	stack[12] = base + 20 * 8; stack[13] = NOCFI_START + 0x200;
	stack[20] = 0;             stack[21] = NOCFI_START + 0x300;
	regs.sp = base;
	regs.bp = base + 4 * 8;
	regs.ip = NOCFI_START + 0x10;
	assert_int_equal(taproot_unwind(u, NULL, &regs, stack, sizeof(stack), pcs,
					flags, 16, &res), 4);
	assert_int_equal(pcs[1], NOCFI_START + 0x100);
	assert_int_equal(pcs[2], NOCFI_START + 0x200);
	assert_int_equal(pcs[3], NOCFI_START + 0x300);
	assert_int_equal(res.fp_frames, 3);
	assert_true(flags[0] & TAPROOT_FRAME_FP);
	assert_true(flags[0] & TAPROOT_FRAME_EXACT);
	assert_false(flags[1] & TAPROOT_FRAME_EXACT);
	/* rbp 0 after the last frame: nothing to follow */
	assert_int_equal(res.end, TAPROOT_UNWIND_NO_CFI);

	/* a saved rbp that goes down: the chain is refused there */
	stack[12] = base + 2 * 8;
	assert_int_equal(taproot_unwind(u, NULL, &regs, stack, sizeof(stack), pcs,
					flags, 16, &res), 2);
	assert_int_equal(res.end, TAPROOT_UNWIND_NO_CFI);
	/* a chain beyond the copy: truncated */
	stack[12] = base + 200 * 8;
	assert_int_equal(taproot_unwind(u, NULL, &regs, stack, sizeof(stack), pcs,
					flags, 16, &res), 3);
	assert_int_equal(res.end, TAPROOT_UNWIND_TRUNCATED);
	taproot_unwinder_free(u);
}

/* ------------------------------------------------------- JIT frames */

#define JIT_CODE 0x70000000ULL

/* What the jit callback saw, frame by frame. */
struct jit_seen {
	unsigned int calls;
	unsigned int index[8];
	uint64_t r13[8], method[8];
	bool exact[8];
};

/*
 * Code no ELF holds, as a JVM's: [0, 0x100) compiled, 32-byte frames;
 * [0x100, 0x200) the interpreter; [0x200, 0x300) compiled, 48-byte frames,
 * its deoptimization handler at 0x280 with the real pc at sp + 8.
 */
static int jit_cb(const struct taproot_unwind_at *at, struct taproot_unwind_jit *f, void *arg)
{
	uint64_t off = (at->exact ? at->pc : at->pc - 1) - JIT_CODE;
	struct jit_seen *seen = arg;
	unsigned int n = seen->calls++;

	if (n < 8) {
		seen->index[n] = at->index;
		seen->r13[n] = at->r13;
		seen->exact[n] = at->exact;
		if (at->bp && taproot_unwind_at_read(at, at->bp - 24, &seen->method[n]) < 0)
			seen->method[n] = 0;
	}
	if (off < 0x100) {
		f->kind = TAPROOT_JIT_SP;
		f->size = 32;
	} else if (off < 0x200) {
		f->kind = TAPROOT_JIT_INTERP;
	} else if (off < 0x300) {
		f->kind = TAPROOT_JIT_SP;
		f->size = 48;
		if (at->pc == JIT_CODE + 0x280)
			f->orig_pc_off = 8;
	} else {
		return 0;
	}
	return 1;
}

/*
 * A compiled leaf, an interpreted caller (rbp chain, its caller's sp in
 * its frame), a deoptimized compiled frame (its pc from its frame), then
 * native code without CFI: the JIT's descriptions walk them, and the
 * unwinder's own checks still hold.
 */
static void test_jit_frames(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = nocfi_map, .jit = jit_cb };
	struct taproot_unwinder *u = NULL;
	struct taproot_unwind_result res;
	struct taproot_user_regs regs = { 0 };
	uint64_t stack[64] = { 0 }, pcs[16], base = SYN_BASE;
	struct jit_seen seen = { 0 };
	struct taproot_unwind_stats st;
	uint8_t flags[16];

	(void)state;
	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);
	/* the compiled leaf: sp at word 0, its frame words 0-3 */
	stack[2] = base + 8 * 8;		/* rbp: the interpreted frame's */
	stack[3] = JIT_CODE + 0x110;		/* into the interpreter */
	/* the interpreted frame: rbp at word 8 */
	stack[5] = 0xabc0;			/* rbp - 24: its Method* */
	stack[7] = base + 10 * 8;		/* rbp - 8: its caller's sp */
	stack[8] = 0x1234;			/* its caller's rbp */
	stack[9] = JIT_CODE + 0x280;		/* to a deoptimized frame */
	/* the deoptimized frame: sp at word 10, 48 bytes */
	stack[11] = JIT_CODE + 0x250;		/* sp + 8: its real pc */
	stack[14] = base + 20 * 8;		/* rbp for the native caller */
	stack[15] = NOCFI_START + 0x100;
	/* the native frame, by the rbp chain */
	stack[20] = 0;
	stack[21] = NOCFI_START + 0x300;
	regs.sp = base;
	regs.bp = 0x5555;			/* compiled code: not a frame pointer */
	regs.r13 = 0x7777;
	regs.ip = JIT_CODE + 0x10;
	assert_int_equal(taproot_unwind(u, &seen, &regs, stack, sizeof(stack), pcs, flags, 16,
					&res), 5);
	assert_int_equal(pcs[0], JIT_CODE + 0x10);
	assert_int_equal(pcs[1], JIT_CODE + 0x110);
	assert_int_equal(pcs[2], JIT_CODE + 0x250);	/* the handler's place taken */
	assert_int_equal(pcs[3], NOCFI_START + 0x100);
	assert_int_equal(pcs[4], NOCFI_START + 0x300);
	assert_int_equal(res.end, TAPROOT_UNWIND_NO_CFI);
	assert_int_equal(res.jit_frames, 3);
	assert_int_equal(res.fp_frames, 1);
	for (int i = 0; i < 3; i++)
		assert_true(flags[i] & TAPROOT_FRAME_JIT);
	assert_false(flags[3] & TAPROOT_FRAME_JIT);
	/* the callback saw each frame by its index, the leaf's registers at the leaf alone */
	assert_int_equal(seen.calls, 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(seen.index[i], i);
	assert_true(seen.exact[0]);
	assert_int_equal(seen.r13[0], 0x7777);
	assert_false(seen.exact[1]);
	assert_int_equal(seen.r13[1], 0);
	assert_int_equal(seen.method[1], 0xabc0);
	taproot_unwinder_stats(u, &st);
	assert_int_equal(st.jit_frames, 3);

	/* an interpreted frame whose caller's sp is inside its own: refused */
	stack[7] = base + 8 * 8;
	seen.calls = 0;
	assert_int_equal(taproot_unwind(u, &seen, &regs, stack, sizeof(stack), pcs, flags, 16,
					&res), 2);
	assert_int_equal(res.end, TAPROOT_UNWIND_BAD_FRAME);
	stack[7] = base + 10 * 8;

	/* a frame the JIT does not know: no mapping, as without the callback */
	regs.ip = JIT_CODE + 0x400;
	assert_int_equal(taproot_unwind(u, &seen, &regs, stack, sizeof(stack), pcs, flags, 16,
					&res), 1);
	assert_int_equal(res.end, TAPROOT_UNWIND_NO_MAPPING);

	/* a frame beyond the copy: truncated */
	regs.ip = JIT_CODE + 0x10;
	assert_int_equal(taproot_unwind(u, &seen, &regs, stack, 16, pcs, flags, 16, &res), 1);
	assert_int_equal(res.end, TAPROOT_UNWIND_TRUNCATED);
	taproot_unwinder_free(u);
}

/* ----------------------------------------------------- table cache */

static int many_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	static char key[16];

	assert_int_equal(map_cb(LIBC_BIAS + (pc & 0xffff) + libc.plt_row, um, &libc.maps), 1);
	snprintf(key, sizeof(key), "libc-%u", (unsigned int)(pc >> 32));
	um->key = (const uint8_t *)key;
	um->key_len = strlen(key);
	um->bias = pc - (pc & 0xffff) - libc.plt_row;
	um->start = pc & ~0xffffULL;
	um->end = um->start + 0x10000;
	return 1;
}

/* Tables over the byte limit are evicted, least recently used first. */
static void test_cache_lru(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = many_map };
	struct taproot_unwinder *u = NULL;
	struct taproot_unwind_result res;
	struct taproot_unwind_stats st;
	struct taproot_user_regs regs = { .sp = SYN_BASE };
	uint64_t stack[4] = { 0 }, pcs[4];

	/* room for two libc tables (about 175 KB each), not three */
	assert_int_equal(taproot_unwinder_new(&ops, 2 * libc.t->bytes + 4096, &u), 0);
	for (unsigned int k = 1; k <= 3; k++) {
		regs.ip = ((uint64_t)k << 32) | 16;	/* "libc-k", in its PLT */
		taproot_unwind(u, NULL, &regs, stack, sizeof(stack), pcs, NULL, 4, &res);
		assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);	/* RA 0 */
	}
	taproot_unwinder_stats(u, &st);
	assert_int_equal(st.compiles, 3);
	assert_int_equal(st.tables, 2);
	assert_int_equal(st.evictions, 1);
	assert_true(st.table_bytes <= 2 * libc.t->bytes + 4096);
	/* libc-2 and libc-3 stay; libc-2 used last, so libc-3 goes next */
	regs.ip = (2ULL << 32) | 16;
	taproot_unwind(u, NULL, &regs, stack, sizeof(stack), pcs, NULL, 4, &res);
	taproot_unwinder_stats(u, &st);
	assert_int_equal(st.compiles, 3);
	regs.ip = (1ULL << 32) | 16;
	taproot_unwind(u, NULL, &regs, stack, sizeof(stack), pcs, NULL, 4, &res);
	regs.ip = (2ULL << 32) | 16;
	taproot_unwind(u, NULL, &regs, stack, sizeof(stack), pcs, NULL, 4, &res);
	taproot_unwinder_stats(u, &st);
	assert_int_equal(st.compiles, 4);	/* libc-1 again, libc-2 still cached */
	assert_int_equal(st.evictions, 2);
	taproot_unwinder_free(u);
}

/* ------------------------------------------------- this process's stack */

static volatile int sink;

/*
 * The leaf, a frame of its own: the first name test_self's and
 * test_self_signal's chains want.
 */
__attribute__((noinline)) static void capture_here(struct ownstack *c)
{
	OWNSTACK_CAPTURE(c);
}

__attribute__((noinline)) static int level3(struct ownstack *c, int x)
{
	capture_here(c);
	sink = x;
	return x + 3;
}

__attribute__((noinline)) static int level2(struct ownstack *c, int x)
{
	int r = level3(c, x * 2);

	sink = r;
	return r + 2;
}

__attribute__((noinline)) static int level1(struct ownstack *c, int x)
{
	int r = level2(c, x + 1);

	sink = r;
	return r + 1;
}

/* The function of the exe's .symtab holding vaddr @v, or NULL. */
static const char *exe_symbol(Elf *e, uint64_t v)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			if (v >= sym.st_value && v < sym.st_value + (sym.st_size ? sym.st_size : 1))
				return elf_strptr(e, sh.sh_link, sym.st_name);
		}
	}
	return NULL;
}

static const struct tmap *map_of(const struct tmaps *ms, uint64_t pc)
{
	for (unsigned int i = 0; i < ms->n; i++)
		if (pc >= ms->m[i].start && pc < ms->m[i].end)
			return &ms->m[i];
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_self(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = map_cb };
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_unwinder *u = NULL;
	struct taproot_unwind_result res;
	struct taproot_unwind_stats st;
	struct tmaps *ms = calloc(1, sizeof(*ms));
	uint64_t pcs[128];
	uint8_t flags[128];
	const char *want[] = { "capture_here", "level3", "level2", "level1", "test_self" };
	unsigned int w = 0, i, main_at = 0;
	const struct tmap *exe;
	double t0, dt;
	long iters = 20000;
	int n;

	assert_non_null(c);
	assert_non_null(ms);
	ownstack_init();
	assert_int_equal(level1(c, 1), 10);
	tmaps_self(ms);
	exe = map_of(ms, (uint64_t)(uintptr_t)&level1);
	assert_non_null(exe);

	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);
	n = taproot_unwind(u, ms, &c->regs, c->stack, c->len, pcs, flags, 128, &res);
	assert_true(n > 0);
	for (i = 0; i < res.nr; i++) {
		const struct tmap *m = map_of(ms, pcs[i]);
		uint64_t v = pcs[i] - (i ? 1 : 0);
		const char *name = m == exe ? exe_symbol(exe->elf, v - exe->bias) : NULL;

		print_message("  #%-2u %#014llx %s %s%s\n", i, (unsigned long long)pcs[i],
			      m ? m->key : "?", name ? name : "",
			      flags[i] & TAPROOT_FRAME_SLOW ? " (slow)" :
			      flags[i] & TAPROOT_FRAME_FP ? " (fp)" : "");
		if (name && w < 5 && !strcmp(name, want[w]))
			w++;
		if (name && !strcmp(name, "main"))
			main_at = i;
	}
	print_message("  end: %s, %u frames, %u slow, %u by rbp\n",
		      taproot_unwind_end_name(res.end), res.nr, res.slow_frames,
		      res.fp_frames);
	assert_int_equal(w, 5);			/* the chain, in order */
	assert_true(main_at > 4);
	/* main's caller is libc's __libc_start_call_main, then on to _start */
	assert_true(main_at + 1 < res.nr);
	assert_ptr_not_equal(map_of(ms, pcs[main_at + 1]), exe);
	assert_non_null(strstr(map_of(ms, pcs[main_at + 1])->key, "libc.so"));
	assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);
	assert_string_equal(exe_symbol(exe->elf, pcs[res.nr - 1] - 1 - exe->bias), "_start");

	/* warm speed: the same stack again and again */
	if (getenv("TAPROOT_UNWIND_ITERS"))
		iters = atol(getenv("TAPROOT_UNWIND_ITERS"));
	t0 = now_s();
	for (long k = 0; k < iters; k++)
		taproot_unwind(u, ms, &c->regs, c->stack, c->len, pcs, NULL, 128, &res);
	dt = now_s() - t0;
	taproot_unwinder_stats(u, &st);
	print_message("  warm: %ld unwinds of %u frames in %.3f s: %.0f frames/s, "
		      "%.0f ns/frame; rule cache %.1f%% hits; %llu tables, %llu bytes\n",
		      iters, res.nr, dt, iters * res.nr / dt, dt * 1e9 / (iters * res.nr),
		      100.0 * st.rule_cache_hits / (st.rule_cache_hits + st.rule_cache_misses),
		      (unsigned long long)st.tables, (unsigned long long)st.table_bytes);

	taproot_unwinder_free(u);
	tmaps_free(ms);
	free(ms);
	free(c);
}

/*
 * A walk started mid-stack, as the pipeline continues the module's: the
 * caller frame's ip (a return address), sp and bp of the leaf captured
 * here, read through the frame pointer that __builtin_frame_address()
 * makes this function keep.
 */
__attribute__((noinline))
static void capture_with_caller(struct ownstack *c, struct taproot_user_regs *caller)
{
	const uint64_t *fp = __builtin_frame_address(0);

	OWNSTACK_CAPTURE(c);
	/* the leaf's rbp is that frame pointer, or the two walks part */
	assert_int_equal(c->regs.bp, (uint64_t)(uintptr_t)fp);
	memset(caller, 0, sizeof(*caller));
	caller->ip = fp[1];
	caller->sp = (uint64_t)(uintptr_t)(fp + 2);
	caller->bp = fp[0];
}

__attribute__((noinline)) static int from_level2(struct ownstack *c,
						 struct taproot_user_regs *caller, int x)
{
	capture_with_caller(c, caller);
	sink = x;
	return x + 2;
}

__attribute__((noinline)) static int from_level1(struct ownstack *c,
						 struct taproot_user_regs *caller, int x)
{
	int r = from_level2(c, caller, x + 1);

	sink = r;
	return r + 1;
}

/*
 * taproot_unwind_from(START_CALLER) from frame 1 of a real stack gives the
 * leaf walk's pcs from 1 on, none of them exact; with bp unknown it goes
 * as far as the rules need no rbp, never elsewhere.
 */
static void test_from_caller(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = map_cb };
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_unwinder *u = NULL;
	struct taproot_unwind_result res, res2;
	struct tmaps *ms = calloc(1, sizeof(*ms));
	uint64_t pcs[128], pcs2[128];
	uint8_t flags[128], flags2[128];
	size_t off;

	assert_non_null(c);
	assert_non_null(ms);
	ownstack_init();
	assert_int_equal(from_level1(c, &caller, 1), 5);
	tmaps_self(ms);
	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);

	assert_true(taproot_unwind(u, ms, &c->regs, c->stack, c->len, pcs, flags, 128, &res) > 3);
	assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);
	assert_true(flags[0] & TAPROOT_FRAME_EXACT);
	assert_true(pcs[1] == caller.ip);
	off = caller.sp - c->regs.sp;
	assert_true(off < c->len);

	assert_int_equal(taproot_unwind_from(u, ms, &caller, TAPROOT_UNWIND_START_CALLER,
					     c->stack + off, c->len - off, pcs2, flags2, 128,
					     &res2), (int)res.nr - 1);
	assert_int_equal(res2.end, res.end);
	assert_memory_equal(pcs2, pcs + 1, res2.nr * sizeof(pcs[0]));
	assert_false(flags2[0] & TAPROOT_FRAME_EXACT);
	for (unsigned int i = 1; i < res2.nr; i++)
		assert_int_equal(flags2[i] & TAPROOT_FRAME_EXACT, flags[i + 1] & TAPROOT_FRAME_EXACT);

	/* rbp lost: a prefix of the same walk, whatever ended it. */
	caller.bp = 0;
	assert_true(taproot_unwind_from(u, ms, &caller, TAPROOT_UNWIND_START_CALLER,
					c->stack + off, c->len - off, pcs2, NULL, 128, &res2) >= 1);
	assert_true(res2.nr <= res.nr - 1);
	assert_memory_equal(pcs2, pcs + 1, res2.nr * sizeof(pcs[0]));
	print_message("  from the caller, rbp unknown: %u of %u frames, %s\n", res2.nr,
		      res.nr - 1, taproot_unwind_end_name(res2.end));

	/* start 0 is taproot_unwind(). */
	assert_int_equal(taproot_unwind_from(u, ms, &c->regs, 0, c->stack, c->len, pcs2, flags2, 128,
					     &res2), (int)res.nr);
	assert_memory_equal(pcs2, pcs, res.nr * sizeof(pcs[0]));
	assert_true(flags2[0] & TAPROOT_FRAME_EXACT);

	taproot_unwinder_free(u);
	tmaps_free(ms);
	free(ms);
	free(c);
}

/* A real signal frame: captured in a handler, through __restore_rt. */
static struct ownstack *sig_capture;

static void on_sigusr1(int sig)
{
	capture_here(sig_capture);
	sink = sig;
}

__attribute__((noinline)) static int sig_level2(struct ownstack *c, int x)
{
	sig_capture = c;
	raise(SIGUSR1);
	sink = x;
	return x + 2;
}

__attribute__((noinline)) static int sig_level1(struct ownstack *c, int x)
{
	int r = sig_level2(c, x + 1);

	sink = r;
	return r + 1;
}

static void test_self_signal(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = map_cb };
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_unwinder *u = NULL;
	struct taproot_unwind_result res;
	struct tmaps *ms = calloc(1, sizeof(*ms));
	struct sigaction sa = { .sa_handler = on_sigusr1 }, old;
	uint64_t pcs[128];
	uint8_t flags[128];
	const char *want[] = { "capture_here", "on_sigusr1", "sig_level2", "sig_level1",
			       "test_self_signal", "main", "_start" };
	unsigned int w = 0, exact_at = 0;
	const struct tmap *exe;

	assert_non_null(c);
	assert_non_null(ms);
	ownstack_init();
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(sig_level1(c, 1), 5);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	tmaps_self(ms);
	exe = map_of(ms, (uint64_t)(uintptr_t)&sig_level1);
	assert_non_null(exe);

	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);
	assert_true(taproot_unwind(u, ms, &c->regs, c->stack, c->len, pcs, flags, 128, &res) > 0);
	for (unsigned int i = 0; i < res.nr; i++) {
		const struct tmap *m = map_of(ms, pcs[i]);
		uint64_t v = pcs[i] - (flags[i] & TAPROOT_FRAME_EXACT ? 0 : 1);
		const char *name = m == exe ? exe_symbol(exe->elf, v - exe->bias) : NULL;

		print_message("  #%-2u %#014llx %s %s%s\n", i, (unsigned long long)pcs[i],
			      m ? m->key : "?", name ? name : "",
			      flags[i] & TAPROOT_FRAME_EXACT ? " (exact)" : "");
		if (name && w < 7 && !strcmp(name, want[w]))
			w++;
		if (i > 0 && (flags[i] & TAPROOT_FRAME_EXACT))
			exact_at = i;
	}
	print_message("  end: %s, %u frames\n", taproot_unwind_end_name(res.end), res.nr);
	assert_int_equal(w, 7);
	assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);
	/* the interrupted pc, in libc (the kill syscall), is exact */
	assert_true(exact_at > 2);
	assert_non_null(strstr(map_of(ms, pcs[exact_at])->key, "libc.so"));
	taproot_unwinder_free(u);
	tmaps_free(ms);
	free(ms);
	free(c);
}

/* Rules only libdw can evaluate (ld.so has some) go through the slow path. */
static void test_slow_path(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = map_cb };
	struct tmaps *ms = calloc(1, sizeof(*ms));
	struct taproot_unwinder *u = NULL;
	struct taproot_unwind_result res;
	struct tp_cfi_table *t = NULL;
	struct taproot_user_regs regs;
	uint64_t *stack = calloc(1024, 8), pcs[4], lo, hi;
	uint8_t flags[4];
	unsigned int slow = 0, complete = 0;
	struct tmap *m;

	assert_non_null(ms);
	assert_non_null(stack);
	m = &ms->m[0];
	m->elf = open_elf("/lib64/ld-linux-x86-64.so.2", &m->fd);
	assert_non_null(m->elf);		/* this test's own loader */
	elf_span(m->elf, &lo, &hi);
	m->bias = LIBC_BIAS;
	m->start = LIBC_BIAS + lo;
	m->end = LIBC_BIAS + hi;
	snprintf(m->key, sizeof(m->key), "ld.so");
	ms->n = 1;
	assert_int_equal(tp_cfi_compile(m->elf, &t), 0);
	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);

	for (uint32_t i = 0; i + 1 < t->nr; i++) {
		if (t->rules[t->row_rule[i]].kind != TP_CFI_SLOW)
			continue;
		/* every register 512 bytes up the copy, whatever the CFA uses */
		memset(&regs, 0, sizeof(regs));
		regs.ax = regs.bx = regs.cx = regs.dx = regs.si = regs.di = regs.bp =
			regs.r8 = regs.r9 = regs.r10 = regs.r11 = regs.r12 = regs.r13 =
			regs.r14 = regs.r15 = SYN_BASE + 4096;
		regs.sp = SYN_BASE;
		regs.ip = t->base + t->pcs[i] + LIBC_BIAS;
		/* zeros: the return address read is 0, the end */
		taproot_unwind(u, ms, &regs, stack, 1024 * 8, pcs, flags, 4, &res);
		slow++;
		if (!(flags[0] & TAPROOT_FRAME_SLOW))
			print_message("  %#llx: %s\n", (unsigned long long)(t->base + t->pcs[i]),
				      taproot_unwind_end_name(res.end));
		assert_true(flags[0] & TAPROOT_FRAME_SLOW);
		assert_int_equal(res.slow_frames, 1);
		if (res.end == TAPROOT_UNWIND_COMPLETE && res.nr == 1)
			complete++;
	}
	print_message("  ld.so: %u slow rows, %u unwound to RA 0\n", slow, complete);
	assert_true(slow > 0);
	assert_true(complete > 0);
	tp_cfi_table_free(t);
	taproot_unwinder_free(u);
	tmaps_free(ms);
	free(ms);
	free(stack);
}

/* Speed on libc's synthetic chains, spread over many pcs (colder cache). */
static void test_speed_synthetic(void **state)
{
	enum { N = 64 };
	struct synth *s = malloc(N * sizeof(*s));
	struct taproot_unwinder *u = new_unwinder(0);
	struct taproot_unwind_result res;
	struct taproot_unwind_stats st;
	uint64_t pcs[MAX_FRAMES], frames = 0;
	long iters = 2000;
	double t0, dt;

	assert_non_null(s);
	if (getenv("TAPROOT_UNWIND_ITERS"))
		iters = atol(getenv("TAPROOT_UNWIND_ITERS")) / 10 + 1;
	for (unsigned int k = 0; k < N; k++) {
		struct syn_opts o = { .frames = 30, .signal_at = -1, .end_rule = true };

		synth_build(&s[k], &o, 1000 + k);
	}
	for (unsigned int k = 0; k < N; k++)	/* warm the table */
		unwind_synth(u, &s[k], s[k].len, MAX_FRAMES, pcs, NULL, &res);
	t0 = now_s();
	for (long it = 0; it < iters; it++)
		for (unsigned int k = 0; k < N; k++) {
			unwind_synth(u, &s[k], s[k].len, MAX_FRAMES, pcs, NULL, &res);
			frames += res.nr;
		}
	dt = now_s() - t0;
	taproot_unwinder_stats(u, &st);
	print_message("  synthetic: %llu frames (%u distinct pcs) in %.3f s: %.0f frames/s, "
		      "%.0f ns/frame; rule cache %.1f%% hits\n",
		      (unsigned long long)frames, N * 30, dt, frames / dt, dt * 1e9 / frames,
		      100.0 * st.rule_cache_hits / (st.rule_cache_hits + st.rule_cache_misses));
	taproot_unwinder_free(u);
	free(s);
}

static void test_new_refuses(void **state)
{
	struct taproot_unwind_ops ops = { 0 };
	struct taproot_unwinder *u = (void *)1;

	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), -EINVAL);
	assert_null(u);
	taproot_unwinder_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_refuses),
		cmocka_unit_test(test_synthetic_chains),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_ends),
		cmocka_unit_test(test_ra_in_register),
		cmocka_unit_test(test_fp_fallback),
		cmocka_unit_test(test_jit_frames),
		cmocka_unit_test(test_cache_lru),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_self_signal),
		cmocka_unit_test(test_from_caller),
		cmocka_unit_test(test_slow_path),
		cmocka_unit_test(test_speed_synthetic),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, setup_libc, teardown_libc);
}
