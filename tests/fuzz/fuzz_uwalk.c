// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the module's user stack walker (kmod/uwalk.c, built
 * here in userspace) on whatever tables, mappings, registers and memory:
 * it runs in the sample handler on uploads that only validation stands
 * between it and, so it must survive even those utab.c would refuse
 * (rows out of order, rule indexes past the rules, unknown kinds and rbp
 * rules, offsets of any size, mappings unsorted or overlapping).
 *
 * The input, read front to back (missing bytes read as 0):
 *   u8 nr_tables (% 4), u8 nr_maps (% 9), u8 max_frames, u8 sp_off
 *   per table: u64 base, u8 nr_rows (% 33), u8 nr_rules (% 17),
 *     nr_rows x { u8 delta: pc = previous + delta, or with 0xff a raw u32 },
 *     nr_rows x { u8 rule index: % (nr_rules + 1), or with 0xff a raw u16 },
 *     nr_rules x { u8 kind, u8 rbp, u8 plt_thr, u8 mode, then cfa_off,
 *       ra_off, rbp_off: each an s8 times 8, or with its bit of mode a
 *       raw s32 }
 *   per mapping: u8 start page, u8 pages, u8 bias mode, u8 table (>=
 *     nr_tables: none, the rbp chain), u8 flags (1: start raw u64)
 *   u8 ip mode, u16 ip offset; u8 bp mode, u16 bp offset; then the code
 *   image (u8 length, bytes; 0xfe: the sigreturn trampoline then its
 *   length of bytes); then the stack, word by word: u8 tag (0 a pc in
 *   the mappings, 1 a stack address, 2 raw, 3 zero), u16 or u64 payload.
 * Memory is the stack image at STACK_BASE + sp_off and the code image at
 * CODE_BASE, in allocations of exactly their size; tap_uwalk_read() fails
 * elsewhere. The walker's reach (stack_hi) is the first half of the stack
 * image. Tables are allocated to exactly their lengths, so ASan sees
 * an index the walker did not check.
 *
 * Checked: at most max_frames (capped at TAPROOT_UNWIND_FRAMES_MAX) pcs
 * and nothing written past them, pcs[0] the start ip, every other pc in a
 * mapping, every read within the reach or, for code, a mapping, an end in
 * range and never NONE, at most 2 reads per frame, and the end registers
 * those of the last pc's frame as uwalk.h says. The rule cache lives from
 * input to input, as a CPU's does, and each table gets a uid never given
 * before, as utab.c does; the walk is made as the module makes it (the
 * cache, the stack window), then again without the cache, without the
 * window (never fewer reads), and with the cache warm: all find the same.
 * With the reach past the end of the stack image (memory that cannot be
 * read below stack_hi, where a window is cut short), the walks with and
 * without the window find the same too. FUZZ_DEBUG prints the walk.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../../kmod/uwalk.h"

#define CODE_BASE	0x400000ULL
#define STACK_BASE	0x7ffd00000000ULL
#define MAX_TABLES	3
#define MAX_MAPS	8
#define MAX_ROWS	32
#define MAX_RULES	16
#define MAX_WORDS	512
#define CANARY		0x5a5a5a5a5a5a5a5aULL

static int32_t take_off(struct fuzz_input *in, bool raw)
{
	if (raw)
		return (int32_t)(uint32_t)fuzz_take(in, 4);
	return (int8_t)fuzz_take(in, 1) * 8;
}

/* What one input makes; each array its exact length, freed after the run. */
struct world {
	struct tap_utable t[MAX_TABLES];
	struct tap_umap map[MAX_MAPS];
	struct tap_umaps maps;
	uint8_t *code, *stack;
	size_t code_len, stack_len;
	uint64_t stack_base, stack_hi;
	bool strayed;		/* a read outside the reach and the mappings */
};

static struct world *cur;
static struct tap_uwalk_cache cache;
static __u64 last_uid;

/* Whether [@addr, @addr + @len) lies in one mapping of @w. */
static bool in_map(const struct world *w, uint64_t addr, uint64_t len)
{
	for (unsigned int i = 0; i < w->maps.nr; i++)
		if (addr >= w->map[i].start && addr < w->map[i].end &&
		    w->map[i].end - addr >= len)
			return true;
	return false;
}

int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	uint64_t off = addr - cur->stack_base;

	if (!(addr >= cur->stack_base && addr <= cur->stack_hi && cur->stack_hi - addr >= len) &&
	    !in_map(cur, addr, len))
		cur->strayed = true;

	if (addr >= cur->stack_base && off <= cur->stack_len && cur->stack_len - off >= len) {
		memcpy(dst, cur->stack + off, len);
		return 0;
	}
	off = addr - CODE_BASE;
	if (addr >= CODE_BASE && off <= cur->code_len && cur->code_len - off >= len) {
		memcpy(dst, cur->code + off, len);
		return 0;
	}
	return -1;
}

/* The stack window's reads: the stack image only, up to its end. */
__u32 tap_uwalk_read_part(void *dst, __u64 addr, __u32 len)
{
	uint64_t off = addr - cur->stack_base;

	if (!(addr >= cur->stack_base && addr <= cur->stack_hi && cur->stack_hi - addr >= len))
		cur->strayed = true;
	if (addr < cur->stack_base || off >= cur->stack_len)
		return 0;
	if (cur->stack_len - off < len)
		len = (__u32)(cur->stack_len - off);
	memcpy(dst, cur->stack + off, len);
	return len;
}

/* Whether walks @a and @b, with their pcs, found the same. */
static bool same_walk(const struct tap_uwalk *a, const __u64 *apcs,
		      const struct tap_uwalk *b, const __u64 *bpcs)
{
	return a->nr == b->nr && a->end == b->end && a->exact == b->exact &&
	       a->partial == b->partial && !memcmp(&a->regs, &b->regs, sizeof(a->regs)) &&
	       !memcmp(apcs, bpcs, a->nr * sizeof(*apcs));
}

static void *alloc(size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	p = malloc(n * size);
	if (!p)
		abort();
	return p;
}

static void decode_table(struct fuzz_input *in, struct tap_utable *t)
{
	uint32_t *pcs, pc = 0;
	uint16_t *rows;
	struct taproot_unwind_rule *rules;

	t->uid = ++last_uid;
	t->base = fuzz_take(in, 8);
	t->nr_rows = (uint32_t)fuzz_take(in, 1) % (MAX_ROWS + 1);
	t->nr_rules = (uint32_t)fuzz_take(in, 1) % (MAX_RULES + 1);
	pcs = alloc(t->nr_rows, sizeof(*pcs));
	rows = alloc(t->nr_rows, sizeof(*rows));
	rules = alloc(t->nr_rules, sizeof(*rules));
	for (uint32_t i = 0; i < t->nr_rows; i++) {
		uint8_t d = (uint8_t)fuzz_take(in, 1);

		pc = d == 0xff ? (uint32_t)fuzz_take(in, 4) : pc + d;
		pcs[i] = pc;
	}
	for (uint32_t i = 0; i < t->nr_rows; i++) {
		uint8_t r = (uint8_t)fuzz_take(in, 1);

		rows[i] = r == 0xff ? (uint16_t)fuzz_take(in, 2) : r % (t->nr_rules + 1);
	}
	for (uint32_t i = 0; i < t->nr_rules; i++) {
		struct taproot_unwind_rule *r = &rules[i];
		uint8_t mode;

		r->kind = (uint8_t)fuzz_take(in, 1);
		r->rbp = (uint8_t)fuzz_take(in, 1);
		r->plt_thr = (uint8_t)fuzz_take(in, 1);
		mode = (uint8_t)fuzz_take(in, 1);
		/* mostly the kinds and rbp rules that exist */
		if (!(mode & 0x80)) {
			r->kind %= TAPROOT_RULE_NR;
			r->rbp %= TAPROOT_RBP_NR;
			r->plt_thr %= 16;
		}
		r->reserved = 0;
		r->cfa_off = take_off(in, mode & 1);
		r->ra_off = take_off(in, mode & 2);
		r->rbp_off = take_off(in, mode & 4);
	}
	t->pcs = pcs;
	t->row_rules = rows;
	t->rules = rules;
}

static void decode_map(struct fuzz_input *in, struct world *w, unsigned int nr_tables,
		       struct tap_umap *m)
{
	uint64_t page = fuzz_take(in, 1), pages = fuzz_take(in, 1) + 1;
	uint8_t bias = (uint8_t)fuzz_take(in, 1), table = (uint8_t)fuzz_take(in, 1);
	uint8_t flags = (uint8_t)fuzz_take(in, 1);

	m->start = flags & 1 ? fuzz_take(in, 8) : CODE_BASE + page * 0x100;
	m->end = flags & 2 ? fuzz_take(in, 8) : m->start + pages * 0x100;
	switch (bias % 3) {
	case 0: m->bias = 0; break;
	case 1: m->bias = CODE_BASE; break;
	default: m->bias = fuzz_take(in, 8); break;
	}
	m->table = table < nr_tables ? &w->t[table] : NULL;
}

static uint64_t decode_addr(struct fuzz_input *in, const struct world *w, uint64_t sp)
{
	uint8_t mode = (uint8_t)fuzz_take(in, 1);
	uint64_t off = fuzz_take(in, 2);

	switch (mode % 4) {
	case 0: return w->maps.nr ? w->map[off % w->maps.nr].start + (off >> 4) : off;
	case 1: return sp + off;
	case 2: return fuzz_take(in, 8);
	default: return off;
	}
}

static void world_free(struct world *w)
{
	for (unsigned int i = 0; i < MAX_TABLES; i++) {
		free((void *)w->t[i].pcs);
		free((void *)w->t[i].row_rules);
		free((void *)w->t[i].rules);
	}
	free(w->code);
	free(w->stack);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t sigreturn[9] = {
		0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05
	};
	struct fuzz_input in = { data, size };
	struct world w;
	struct taproot_user_regs regs;
	struct tap_uwalk walk, again;
	unsigned int nr_tables, max, cap;
	uint64_t words[MAX_WORDS];
	__u64 *pcs, *apcs;
	size_t nwords = 0, clen;

	memset(&w, 0, sizeof(w));
	nr_tables = (unsigned int)fuzz_take(&in, 1) % (MAX_TABLES + 1);
	w.maps.nr = (uint32_t)fuzz_take(&in, 1) % (MAX_MAPS + 1);
	max = (unsigned int)fuzz_take(&in, 1);
	w.stack_base = STACK_BASE + 8 * fuzz_take(&in, 1);
	for (unsigned int i = 0; i < nr_tables; i++)
		decode_table(&in, &w.t[i]);
	for (unsigned int i = 0; i < w.maps.nr; i++)
		decode_map(&in, &w, nr_tables, &w.map[i]);
	w.maps.map = w.maps.nr ? w.map : NULL;

	memset(&regs, 0, sizeof(regs));
	regs.sp = w.stack_base;
	regs.ip = decode_addr(&in, &w, regs.sp);
	regs.bp = decode_addr(&in, &w, regs.sp);
	regs.ax = 0xa;
	regs.r15 = 0xf;
	regs.flags = 0x246;

	clen = fuzz_take(&in, 1);
	if (clen == 0xfe) {
		clen = fuzz_take(&in, 1);
		w.code = alloc(sizeof(sigreturn) + clen, 1);
		memcpy(w.code, sigreturn, sizeof(sigreturn));
		for (size_t i = 0; i < clen; i++)
			w.code[sizeof(sigreturn) + i] = (uint8_t)fuzz_take(&in, 1);
		clen += sizeof(sigreturn);
	} else {
		w.code = alloc(clen, 1);
		for (size_t i = 0; i < clen; i++)
			w.code[i] = (uint8_t)fuzz_take(&in, 1);
	}
	w.code_len = clen;

	while (in.left && nwords < MAX_WORDS) {
		uint8_t tag = (uint8_t)fuzz_take(&in, 1);
		uint64_t v = fuzz_take(&in, 2);

		switch (tag % 4) {
		case 0: v = w.maps.nr ? w.map[v % w.maps.nr].start + (v >> 4) : v; break;
		case 1: v = w.stack_base + v; break;
		case 2: v = v | fuzz_take(&in, 6) << 16; break;
		default: v = 0; break;
		}
		words[nwords++] = v;
	}
	w.stack_len = nwords * 8;
	w.stack = alloc(nwords, 8);
	if (nwords)
		memcpy(w.stack, words, w.stack_len);

	cap = max < TAPROOT_UNWIND_FRAMES_MAX ? max : TAPROOT_UNWIND_FRAMES_MAX;
	pcs = alloc(cap + 1, sizeof(*pcs));	/* one more: the canary */
	for (unsigned int i = 0; i <= cap; i++)
		pcs[i] = CANARY;
	cur = &w;
	memset(&walk, 0xa5, sizeof(walk));
	walk.maps = &w.maps;
	walk.max_frames = max;
	w.stack_hi = regs.sp + (w.stack_len / 2 & ~7ULL);
	walk.stack_hi = w.stack_hi;
	walk.cache = &cache;
	walk.no_window = 0;
	tap_uwalk(&walk, &regs, pcs);

	if (getenv("FUZZ_DEBUG")) {
		fprintf(stderr, "tables %u maps %u max %u stack %zu code %zu: %u frames, end %u,"
			" %u reads, exact %u\n", nr_tables, w.maps.nr, max, w.stack_len,
			w.code_len, walk.nr, walk.end, walk.reads, walk.exact);
		for (unsigned int i = 0; i < walk.nr && i < cap; i++)
			fprintf(stderr, "  #%u %#llx\n", i, (unsigned long long)pcs[i]);
	}
	check(walk.nr <= cap);
	check(!w.strayed);
	for (unsigned int i = 1; i < walk.nr && i < cap; i++)
		check(in_map(&w, pcs[i] - 1, 1) || in_map(&w, pcs[i], 1));
	check(pcs[cap] == CANARY);
	for (unsigned int i = walk.nr; i < cap; i++)
		check(pcs[i] == CANARY);
	check(walk.end > TAPROOT_KUNWIND_NONE && walk.end < TAPROOT_KUNWIND_NR);
	check(walk.reads <= 2 * walk.nr);
	check(walk.exact <= 1 && walk.partial == !walk.exact);
	check(walk.maps == &w.maps && walk.max_frames == max);
	if (!cap) {
		check(walk.nr == 0 && walk.end == TAPROOT_KUNWIND_MAX_FRAMES);
	} else {
		check(walk.nr >= 1 && pcs[0] == regs.ip);
		check(walk.regs.ip == pcs[walk.nr - 1]);
		if (walk.end == TAPROOT_KUNWIND_MAX_FRAMES)
			check(walk.nr == cap);
	}
	if (walk.nr <= 1)
		check(!memcmp(&walk.regs, &regs, sizeof(regs)) && walk.exact);
	if (walk.partial)
		check(!walk.regs.ax && !walk.regs.bx && !walk.regs.cx && !walk.regs.dx &&
		      !walk.regs.si && !walk.regs.di && !walk.regs.r8 && !walk.regs.r9 &&
		      !walk.regs.r10 && !walk.regs.r11 && !walk.regs.r12 && !walk.regs.r13 &&
		      !walk.regs.r14 && !walk.regs.r15 && !walk.regs.flags);
	/* a walk that came from a signal frame restored exact registers */
	if (walk.nr > 1 && walk.exact)
		check(walk.regs.flags == 0);

	/* without the cache, without the window, then warm: the same walk */
	apcs = alloc(cap + 1, sizeof(*apcs));
	for (unsigned int pass = 0; pass < 3; pass++) {
		again = walk;
		again.cache = pass == 0 ? NULL : &cache;
		again.no_window = pass == 1;
		tap_uwalk(&again, &regs, apcs);
		check(same_walk(&walk, pcs, &again, apcs));
		check(again.reads <= 2 * again.nr);
		if (pass == 0)
			check(!again.hits && again.reads == walk.reads);
		if (pass == 1)
			check(again.reads >= walk.reads);
	}
	/* a reach past the readable: with the window and without, the same */
	w.stack_hi = w.stack_base + w.stack_len + 8 * (size % 32);
	walk.stack_hi = again.stack_hi = w.stack_hi;
	walk.no_window = 0;
	again.no_window = 1;
	tap_uwalk(&walk, &regs, pcs);
	tap_uwalk(&again, &regs, apcs);
	check(same_walk(&walk, pcs, &again, apcs));
	check(!w.strayed && walk.reads <= again.reads);
	free(apcs);

	free(pcs);
	world_free(&w);
	cur = NULL;
	return 0;
}
