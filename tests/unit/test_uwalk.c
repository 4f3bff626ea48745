// SPDX-License-Identifier: GPL-2.0
/*
 * The module's user stack walker (kmod/uwalk.c, built here in userspace)
 * against lib/unwind's taproot_unwind(), on the same rules and memory:
 * the same pcs, and matching ends (lib's TRUNCATED is the walker's FAULT,
 * MAX_DEPTH its MAX_FRAMES; where lib goes to libdw the walker stops with
 * SLOW_RULE and its pcs are a prefix of lib's).
 *
 * The walker gets lib's own compiled tables (tp_cfi_compile(), the same
 * kinds) as struct tap_utable, and reads, through tap_uwalk_read() below,
 * the stack copy lib gets plus the text of the mappings (lib reads the
 * sigreturn trampoline's code from the ELF, the walker from memory).
 *
 *  - this process's own stacks: a chain of noinline functions, one through
 *    a signal handler, a deep recursion; every max_frames, every length of
 *    the copy (the walker's reads fail where lib's copy ends), and from
 *    the registers where each walk stopped, lib's taproot_unwind_from()
 *    goes on as the full walk did: the end state is right;
 *  - the same stacks with random words overwritten: any memory, same pcs;
 *  - libc's PLT rule at each offset of an entry, the rbp chain where a
 *    mapping has no table, musl's sigreturn trampoline without CFI, a pc
 *    in no mapping, and tables that break the upload's rules.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>

#include "unwind/unwind-private.h"
#include "../../kmod/uwalk.h"

/* copied from sp up: test_deep's 300 frames whole, past 16 KiB under ASan */
#define OWNSTACK_MAX	(256 * 1024)
#include "ownstack.h"

#define MAX_PCS		TAPROOT_UNWIND_FRAMES_MAX
#define LIBC		"/lib/x86_64-linux-gnu/libc.so.6"
#define LIBC_BIAS	0x7f1234000000ULL
#define SYN_BASE	0x7ffe00000000ULL

/* --------------------------------------------------------- the world */

/* A mapped ELF, as lib's map callback and the walker's mappings see it. */
struct tmap {
	uint64_t start, end, bias;
	Elf *elf;
	int fd;
	char key[256];
	unsigned int table;		/* in world.kt */
};

/* One ELF's table as the walker takes it: lib's, rules in the ABI's form. */
struct ktable {
	char key[256];
	struct tp_cfi_table *t;		/* NULL: no CFI (lib: an empty table) */
	struct taproot_unwind_rule *rules;
	struct tap_utable ut;
};

/* Readable memory besides the stack copy: code, for the trampoline check. */
struct region {
	uint64_t start, end;
	const uint8_t *src;
};

struct world {
	struct tmap m[128];
	unsigned int n;
	struct ktable kt[64];
	unsigned int nkt;
	struct tap_umap kmap[128];
	struct tap_umaps kmaps;
	struct region code[128];
	unsigned int ncode;
	bool no_tables;			/* the walker's maps have table NULL */
};

/* What tap_uwalk_read() serves: the stack copy, then the world's code. */
static struct kmem {
	const uint8_t *stack;
	uint64_t base;
	size_t len;
	const struct world *w;
	/* the reads made, when log is set */
	struct { uint64_t addr; uint32_t len; } *log;
	unsigned int nlog;
} kmem;

int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	uint64_t off = addr - kmem.base;

	if (kmem.log && kmem.nlog < 512) {
		kmem.log[kmem.nlog].addr = addr;
		kmem.log[kmem.nlog++].len = len;
	}

	if (addr >= kmem.base && off <= kmem.len && kmem.len - off >= len) {
		memcpy(dst, kmem.stack + off, len);
		return 0;
	}
	for (unsigned int i = 0; kmem.w && i < kmem.w->ncode; i++) {
		const struct region *r = &kmem.w->code[i];

		if (addr >= r->start && addr < r->end && r->end - addr >= len) {
			memcpy(dst, r->src + (addr - r->start), len);
			return 0;
		}
	}
	return -EFAULT;
}

__u32 tap_uwalk_read_part(void *dst, __u64 addr, __u32 len)
{
	uint64_t off = addr - kmem.base;
	__u32 n = len;

	if (kmem.log && kmem.nlog < 512) {
		kmem.log[kmem.nlog].addr = addr;
		kmem.log[kmem.nlog++].len = len;
	}
	/* the stack copy only: the walker reads no code through a window */
	if (addr < kmem.base || off >= kmem.len)
		return 0;
	if (kmem.len - off < n)
		n = (__u32)(kmem.len - off);
	memcpy(dst, kmem.stack + off, n);
	return n;
}

static int map_cb(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	const struct world *w = arg;
	unsigned int lo = 0, hi = w->n;

	while (lo < hi) {		/* sorted by start */
		unsigned int mid = (lo + hi) / 2;

		if (pc < w->m[mid].start)
			hi = mid;
		else if (pc >= w->m[mid].end)
			lo = mid + 1;
		else {
			const struct tmap *m = &w->m[mid];

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

/* As utab.c's: each table a uid of its own, never one of a table before. */
static __u64 last_uid;

/* The table of key @key, compiled from @elf the first time. */
static unsigned int ktable_get(struct world *w, const char *key, Elf *elf)
{
	static const struct taproot_unwind_rule none = { .kind = TAPROOT_RULE_NONE };
	struct ktable *k;
	unsigned int i;

	for (i = 0; i < w->nkt; i++)
		if (!strcmp(w->kt[i].key, key))
			return i;
	assert_true(w->nkt < 64);
	k = &w->kt[w->nkt];
	memset(k, 0, sizeof(*k));
	k->ut.uid = ++last_uid;
	snprintf(k->key, sizeof(k->key), "%s", key);
	/* as lib's get_table(): CFI that does not compile is no CFI */
	if (!elf || tp_cfi_compile(elf, &k->t) != 0)
		k->t = NULL;
	if (!k->t) {
		k->ut.nr_rules = 1;
		k->ut.rules = &none;
		return w->nkt++;
	}
	k->rules = calloc(k->t->nr_rules, sizeof(*k->rules));
	assert_non_null(k->rules);
	for (uint32_t r = 0; r < k->t->nr_rules; r++) {
		const struct tp_cfi_rule *c = &k->t->rules[r];

		k->rules[r] = (struct taproot_unwind_rule){
			.kind = c->kind, .rbp = c->rbp, .plt_thr = c->plt_thr,
			.cfa_off = c->cfa_off, .ra_off = c->ra_off, .rbp_off = c->rbp_off,
		};
	}
	k->ut.base = k->t->base;
	k->ut.nr_rows = k->t->nr;
	k->ut.nr_rules = k->t->nr_rules;
	k->ut.pcs = k->t->pcs;
	k->ut.row_rules = k->t->row_rule;
	k->ut.rules = k->rules;
	return w->nkt++;
}

/* The walker's mappings from the world's (after any change to them). */
static void world_kmaps(struct world *w)
{
	for (unsigned int i = 0; i < w->n; i++) {
		w->kmap[i] = (struct tap_umap){
			.start = w->m[i].start, .end = w->m[i].end, .bias = w->m[i].bias,
			.table = w->no_tables ? NULL : &w->kt[w->m[i].table].ut,
		};
	}
	w->kmaps.nr = w->n;
	w->kmaps.map = w->kmap;
}

static void world_free(struct world *w)
{
	for (unsigned int i = 0; i < w->n; i++) {
		if (w->m[i].elf)
			elf_end(w->m[i].elf);
		if (w->m[i].fd >= 0)
			close(w->m[i].fd);
	}
	for (unsigned int i = 0; i < w->nkt; i++) {
		tp_cfi_table_free(w->kt[i].t);
		free(w->kt[i].rules);
	}
	free(w);
}

/*
 * /proc/self/maps: each executable file mapping, its ELF, its text
 * readable. Made once (tables of every library take a while to compile):
 * teardown() frees it.
 */
static struct world *self_world;

static struct world *world_self(void)
{
	struct world *w;
	FILE *f;
	char line[512];

	if (self_world)
		return self_world;
	w = calloc(1, sizeof(*w));
	f = fopen("/proc/self/maps", "re");
	assert_non_null(w);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && w->n < 128) {
		unsigned long start, end, pgoff;
		char perms[8], path[256] = "";
		struct tmap *m = &w->m[w->n];
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
		m->table = ktable_get(w, path, m->elf);
		w->code[w->ncode++] = (struct region){
			.start = start, .end = end, .src = (const uint8_t *)(uintptr_t)start,
		};
		w->n++;
	}
	fclose(f);
	assert_true(w->n >= 2);
	world_kmaps(w);
	self_world = w;
	return w;
}

/* libc alone, mapped at LIBC_BIAS; its executable segments readable. */
static struct world *world_libc(void)
{
	struct world *w = calloc(1, sizeof(*w));
	struct tmap *m = &w->m[0];
	uint64_t lo = UINT64_MAX, hi = 0, real;
	Dl_info di;
	size_t nph;

	assert_non_null(w);
	m->elf = open_elf(LIBC, &m->fd);
	assert_non_null(m->elf);
	assert_true(dladdr((void *)(uintptr_t)&printf, &di) != 0);
	real = (uint64_t)(uintptr_t)di.dli_fbase;
	assert_int_equal(elf_getphdrnum(m->elf, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
		if (ph.p_flags & PF_X)
			w->code[w->ncode++] = (struct region){
				.start = LIBC_BIAS + ph.p_vaddr,
				.end = LIBC_BIAS + ph.p_vaddr + ph.p_filesz,
				.src = (const uint8_t *)(uintptr_t)(real + ph.p_vaddr),
			};
	}
	m->start = LIBC_BIAS + lo;
	m->end = LIBC_BIAS + hi;
	m->bias = LIBC_BIAS;
	snprintf(m->key, sizeof(m->key), "libc");
	m->table = ktable_get(w, m->key, m->elf);
	assert_non_null(w->kt[m->table].t);
	w->n = 1;
	world_kmaps(w);
	return w;
}

/* ------------------------------------------------------ both walkers */

static struct taproot_unwinder *unwinder;
/* The walks' rule cache, as one CPU's: kept from walk to walk, test to test. */
static struct tap_uwalk_cache *cache;

struct both {
	struct tap_uwalk k;
	__u64 kpcs[MAX_PCS];
	struct taproot_unwind_result u;
	uint64_t upcs[MAX_PCS];
	uint8_t uflags[MAX_PCS];
};

static const char *kend_name(unsigned int end)
{
	static const char *const names[] = {
		"none", "complete", "max-frames", "no-proc", "stale", "no-mapping",
		"no-cfi", "slow-rule", "fault", "bad-frame",
	};

	return end < TAPROOT_KUNWIND_NR ? names[end] : "?";
}

/* lib's end as the walker says it. */
static unsigned int kend_of(enum taproot_unwind_end end)
{
	switch (end) {
	case TAPROOT_UNWIND_COMPLETE:	return TAPROOT_KUNWIND_COMPLETE;
	case TAPROOT_UNWIND_TRUNCATED:	return TAPROOT_KUNWIND_FAULT;
	case TAPROOT_UNWIND_NO_MAPPING:	return TAPROOT_KUNWIND_NO_MAPPING;
	case TAPROOT_UNWIND_NO_CFI:	return TAPROOT_KUNWIND_NO_CFI;
	case TAPROOT_UNWIND_BAD_FRAME:	return TAPROOT_KUNWIND_BAD_FRAME;
	case TAPROOT_UNWIND_MAX_DEPTH:	return TAPROOT_KUNWIND_MAX_FRAMES;
	default:			return TAPROOT_KUNWIND_NR;
	}
}

static void both_print(const struct both *b, const char *what)
{
	print_message("  %s: walker %u frames, %s; lib %u frames, %s\n", what, b->k.nr,
		      kend_name(b->k.end), b->u.nr, taproot_unwind_end_name(b->u.end));
	for (unsigned int i = 0; i < b->k.nr || i < b->u.nr; i++)
		print_message("    #%-3u %#018llx %#018llx%s\n", i,
			      i < b->k.nr ? (unsigned long long)b->kpcs[i] : 0ULL,
			      i < b->u.nr ? (unsigned long long)b->upcs[i] : 0ULL,
			      i < b->k.nr && i < b->u.nr && b->kpcs[i] != b->upcs[i] ?
			      "  <-" : "");
}

/* Whether walks @a and @b, with their pcs, found the same. */
static bool same_walk(const struct tap_uwalk *a, const __u64 *apcs,
		      const struct tap_uwalk *b, const __u64 *bpcs)
{
	return a->nr == b->nr && a->end == b->end && a->exact == b->exact &&
	       a->partial == b->partial &&
	       !memcmp(&a->regs, &b->regs, sizeof(a->regs)) &&
	       !memcmp(apcs, bpcs, a->nr * sizeof(apcs[0]));
}

/*
 * The walk of @k (done with the cache, every read its own) again: without
 * the cache, and with the stack window, with the cache warm and without,
 * and with a reach past the readable stack (an unmapped page below
 * stack_hi: a read there fails as one past stack_hi is refused, and a
 * window filled across it is cut short): none changes what the walk
 * finds, and the window only ever saves reads. The walks @k stands for
 * are compared with lib's.
 */
static void check_variants(const struct taproot_user_regs *regs, const struct tap_uwalk *k,
			   const __u64 *pcs, const char *what)
{
	static const struct { bool cache, window, beyond; const char *name; } v[] = {
		{ false, false, false, "without the cache" },
		{ true, true, false, "with the window and a warm cache" },
		{ false, true, false, "with the window" },
		{ false, false, true, "with a reach past the readable" },
		{ true, true, true, "with the window and a reach past the readable" },
	};
	struct tap_uwalk again;
	__u64 apcs[MAX_PCS];
	void *log = kmem.log;

	kmem.log = NULL;	/* the reads of @k's walk only */
	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		again = *k;
		again.cache = v[i].cache ? cache : NULL;
		again.no_window = !v[i].window;
		if (v[i].beyond)
			again.stack_hi += 4096;
		tap_uwalk(&again, regs, apcs);
		if (!same_walk(k, pcs, &again, apcs) || (!v[i].cache && again.hits) ||
		    (v[i].window ? again.reads > k->reads : again.reads != k->reads)) {
			print_message("  %s: %u frames, %s, %u reads; %s: %u frames, %s, %u reads\n",
				      what, k->nr, kend_name(k->end), k->reads, v[i].name,
				      again.nr, kend_name(again.end), again.reads);
			fail_msg("%s: the walk %s differs", what, v[i].name);
		}
	}
	kmem.log = log;
}

/*
 * Both walkers on @regs and the @len bytes @stack copied from regs->sp,
 * at most @max frames: they must agree (see the top of the file), and the
 * walker's result must keep uwalk.h's promises. The walker's reach is
 * the copy (stack_hi its end), and it keeps no pc in no mapping: where
 * lib's last pc is one, the walker stops a frame before it, with the
 * registers of that frame (lib's resume from them finds it again).
 */
static void run_both(const struct world *w, const struct taproot_user_regs *regs,
		     const uint8_t *stack, size_t len, unsigned int max, struct both *b,
		     const char *what)
{
	bool ok;

	assert_true(max <= MAX_PCS);
	kmem.stack = stack;
	kmem.base = regs->sp;
	kmem.len = len;
	kmem.w = w;
	memset(&b->k, 0xa5, sizeof(b->k));
	b->k.maps = &w->kmaps;
	b->k.max_frames = max;
	b->k.stack_hi = regs->sp + len;
	b->k.cache = cache;
	b->k.no_window = 1;
	tap_uwalk(&b->k, regs, b->kpcs);
	check_variants(regs, &b->k, b->kpcs, what);
	assert_true(taproot_unwind(unwinder, (void *)w, regs, stack, len, b->upcs,
				   b->uflags, max, &b->u) >= 0);

	assert_true(b->k.nr <= max);
	assert_true(b->k.end > TAPROOT_KUNWIND_NONE && b->k.end < TAPROOT_KUNWIND_NR);
	assert_true(b->k.reads <= 2 * b->k.nr);
	if (b->k.end == TAPROOT_KUNWIND_SLOW_RULE) {
		/* where lib went to libdw (flagged when libdw found the caller) */
		ok = b->k.nr >= 1 && b->k.nr <= b->u.nr &&
		     !memcmp(b->kpcs, b->upcs, b->k.nr * sizeof(b->kpcs[0])) &&
		     (b->k.nr == b->u.nr || (b->uflags[b->k.nr - 1] & TAPROOT_FRAME_SLOW));
	} else {
		/* lib keeps a caller's pc in no mapping; the walker does not */
		unsigned int unr = b->u.nr;

		if (b->u.end == TAPROOT_UNWIND_NO_MAPPING && unr > 1)
			unr--;
		ok = b->k.nr == unr && b->k.end == kend_of(b->u.end) &&
		     !memcmp(b->kpcs, b->upcs, b->k.nr * sizeof(b->kpcs[0]));
	}
	if (!ok) {
		both_print(b, what);
		fail_msg("%s: the walker and lib disagree", what);
	}
	if (!b->k.nr) {
		assert_memory_equal(&b->k.regs, regs, sizeof(*regs));
		return;
	}
	/* the registers of the frame of the last pc */
	assert_int_equal(b->k.regs.ip, b->kpcs[b->k.nr - 1]);
	assert_int_equal(b->k.exact, !!(b->uflags[b->k.nr - 1] & TAPROOT_FRAME_EXACT));
	assert_int_equal(b->k.partial, !b->k.exact);
	if (b->k.nr == 1)
		assert_memory_equal(&b->k.regs, regs, sizeof(*regs));
	if (b->k.partial)
		assert_true(!b->k.regs.ax && !b->k.regs.bx && !b->k.regs.cx &&
			    !b->k.regs.dx && !b->k.regs.si && !b->k.regs.di &&
			    !b->k.regs.r8 && !b->k.regs.r12 && !b->k.regs.r15 &&
			    !b->k.regs.flags);
}

/*
 * From the registers where a walk of @max frames stopped (frame max - 1),
 * lib goes on as the whole walk @full did, on the copy from their sp: what
 * the module's fallback relies on.
 */
static void check_resume(const struct world *w, const struct taproot_user_regs *regs,
			 const uint8_t *stack, size_t len, const struct both *full,
			 unsigned int max, const char *what)
{
	struct both *b = malloc(sizeof(*b));
	struct taproot_unwind_result res;
	uint64_t pcs[MAX_PCS], off;
	uint8_t flags[MAX_PCS];
	unsigned int start;

	assert_non_null(b);
	run_both(w, regs, stack, len, max, b, what);
	assert_int_equal(b->k.nr, max);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_MAX_FRAMES);
	off = b->k.regs.sp - regs->sp;
	assert_true(b->k.regs.sp >= regs->sp && off <= len);
	/* a frame a signal restored is as good as a leaf: every register */
	start = b->k.exact ? 0 : TAPROOT_UNWIND_START_CALLER;
	assert_true(taproot_unwind_from(unwinder, (void *)w, &b->k.regs, start, stack + off,
					len - off, pcs, flags, MAX_PCS, &res) >= 1);
	if (res.nr + max - 1 != full->u.nr || res.end != full->u.end ||
	    memcmp(pcs, full->upcs + max - 1, res.nr * sizeof(pcs[0]))) {
		both_print(full, what);
		for (unsigned int i = 0; i < res.nr; i++)
			print_message("    resumed #%-3u %#018llx\n", max - 1 + i,
				      (unsigned long long)pcs[i]);
		fail_msg("%s: from frame %u, lib ends %s after %u frames", what, max - 1,
			 taproot_unwind_end_name(res.end), res.nr);
	}
	free(b);
}

/* Every max_frames with a resume from each stop, every length of the copy. */
static void sweep(const struct world *w, const struct taproot_user_regs *regs,
		  const uint8_t *stack, size_t len, const char *what)
{
	struct both *full = malloc(sizeof(*full)), *b = malloc(sizeof(*full));
	char name[96];

	assert_non_null(full);
	assert_non_null(b);
	run_both(w, regs, stack, len, MAX_PCS, full, what);
	for (unsigned int max = 0; max <= full->u.nr + 1 && max <= MAX_PCS; max++) {
		snprintf(name, sizeof(name), "%s, max %u", what, max);
		if (max >= 1 && max < full->u.nr)
			check_resume(w, regs, stack, len, full, max, name);
		else
			run_both(w, regs, stack, len, max, b, name);
	}
	/* less memory, the same reads or fewer: a prefix of the same walk */
	for (size_t l = 0; l <= len; l += l < 512 ? 1 : 8) {
		snprintf(name, sizeof(name), "%s, %zu bytes", what, l);
		run_both(w, regs, stack, l, MAX_PCS, b, name);
		assert_true(b->k.nr <= full->k.nr);
		assert_memory_equal(b->kpcs, full->kpcs, b->k.nr * sizeof(b->kpcs[0]));
	}
	free(full);
	free(b);
}

/* ------------------------------------------------ this process's stacks */

static volatile int sink;

/*
 * The leaf of each captured stack, a frame of its own. The marks in ax
 * and r15 let run_both()'s register checks fail: a walk that stops at
 * frame 0 must keep them, a partial frame (only ip, sp, bp known) must
 * have them cleared, which the capture's zeros could not tell apart from
 * registers carried up from the leaf.
 */
__attribute__((noinline)) static void capture_here(struct ownstack *c)
{
	OWNSTACK_CAPTURE(c);
	c->regs.ax = 0xa0;
	c->regs.r15 = 0xf15;
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

static struct ownstack *sig_capture;

static void on_sigusr1(int sig)
{
	capture_here(sig_capture);
	sink = sig;
}

__attribute__((noinline)) static int sig_level(struct ownstack *c, int x)
{
	sig_capture = c;
	raise(SIGUSR1);
	sink = x;
	return x + 2;
}

__attribute__((noinline)) static int recurse(struct ownstack *c, int depth)
{
	int r;

	if (!depth) {
		capture_here(c);
		return 0;
	}
	r = recurse(c, depth - 1);
	sink = r;
	return r + 1;
}

static struct ownstack *capture_new(void)
{
	struct ownstack *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	ownstack_init();
	return c;
}

static void test_self(void **state)
{
	struct ownstack *c = capture_new();
	struct world *w;
	struct both *b = malloc(sizeof(*b));

	assert_non_null(b);
	assert_int_equal(level1(c, 1), 10);
	w = world_self();
	run_both(w, &c->regs, c->stack, c->len, MAX_PCS, b, "self");
	print_message("  self: %u frames, %s, %u reads", b->k.nr, kend_name(b->k.end),
		      b->k.reads);
	b->k.no_window = 0;
	tap_uwalk(&b->k, &c->regs, b->kpcs);
	print_message(", %u with the stack window, %u rules from the cache\n", b->k.reads,
		      b->k.hits);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_COMPLETE);
	assert_true(b->k.nr > 5);
	sweep(w, &c->regs, c->stack, c->len, "self");
	free(c);
	free(b);
}

static void test_self_signal(void **state)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 }, old;
	struct ownstack *c = capture_new();
	struct both *b = malloc(sizeof(*b));
	unsigned int exact = 0;
	struct world *w;

	assert_non_null(b);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(sig_level(c, 1), 3);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	w = world_self();
	run_both(w, &c->regs, c->stack, c->len, MAX_PCS, b, "signal");
	for (unsigned int i = 1; i < b->u.nr; i++)
		if (b->uflags[i] & TAPROOT_FRAME_EXACT)
			exact = i;
	print_message("  signal: %u frames, %s, the interrupted pc at #%u\n", b->k.nr,
		      kend_name(b->k.end), exact);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_COMPLETE);
	assert_true(exact > 2);
	sweep(w, &c->regs, c->stack, c->len, "signal");
	free(c);
	free(b);
}

static void test_deep(void **state)
{
	struct ownstack *c = capture_new();
	struct both *b = malloc(sizeof(*b));
	struct world *w;

	assert_non_null(b);
	assert_int_equal(recurse(c, 300), 300);
	w = world_self();
	run_both(w, &c->regs, c->stack, c->len, MAX_PCS, b, "deep");
	assert_int_equal(b->k.nr, MAX_PCS);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_MAX_FRAMES);
	/* beyond the ABI's maximum: the walker caps it */
	kmem.len = c->len;
	b->k.max_frames = MAX_PCS + 50;
	tap_uwalk(&b->k, &c->regs, b->kpcs);
	assert_int_equal(b->k.nr, MAX_PCS);
	for (size_t l = 0; l <= c->len; l += 24)
		run_both(w, &c->regs, c->stack, l, MAX_PCS, b, "deep, cut");
	free(c);
	free(b);
}

/*
 * Random words of real stacks (half the time words the walk reads)
 * overwritten with pointers into the stack, into text, small numbers or
 * noise, then cut and capped at random: the two walkers still agree,
 * whatever they make of it.
 */
static void test_perturbed(void **state)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 }, old;
	struct ownstack *c[2] = { capture_new(), capture_new() };
	struct both *b = malloc(sizeof(*b));
	uint8_t *stack = malloc(OWNSTACK_MAX);
	unsigned int ends[TAPROOT_KUNWIND_NR] = { 0 }, iters = 4000, nread[2] = { 0 };
	static uint64_t read_at[2][512];
	struct world *w;

	assert_non_null(b);
	assert_non_null(stack);
	assert_int_equal(level1(c[0], 1), 10);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(sig_level(c[1], 1), 3);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	w = world_self();
	/* the words each walk reads */
	for (unsigned int i = 0; i < 2; i++) {
		kmem.log = calloc(512, sizeof(*kmem.log));
		assert_non_null(kmem.log);
		kmem.nlog = 0;
		run_both(w, &c[i]->regs, c[i]->stack, c[i]->len, MAX_PCS, b, "perturbed");
		for (unsigned int r = 0; r < kmem.nlog; r++) {
			uint64_t a = kmem.log[r].addr;

			for (; a + 8 <= kmem.log[r].addr + kmem.log[r].len && nread[i] < 512; a += 8)
				if (a >= c[i]->regs.sp && a + 8 <= c[i]->regs.sp + c[i]->len)
					read_at[i][nread[i]++] = a - c[i]->regs.sp;
		}
		free(kmem.log);
		kmem.log = NULL;
		assert_true(nread[i] > 0);
	}
	if (getenv("TAPROOT_UWALK_ITERS"))
		iters = (unsigned int)atoi(getenv("TAPROOT_UWALK_ITERS"));
	srand(19);
	for (unsigned int it = 0; it < iters; it++) {
		unsigned int ci = it & 1;
		const struct ownstack *from = c[ci];
		size_t words = from->len / 8, span = words < 512 ? words : 512, len;
		unsigned int nr = 1 + (unsigned int)rand() % 6, max;
		struct taproot_user_regs regs = from->regs;

		memcpy(stack, from->stack, from->len);
		for (unsigned int k = 0; k < nr; k++) {
			size_t at = rand() % 2 ? read_at[ci][(unsigned int)rand() % nread[ci]] / 8 :
						 (size_t)rand() % span;
			const struct tmap *m = &w->m[(unsigned int)rand() % w->n];
			uint64_t v;

			switch (rand() % 6) {
			case 0: v = regs.sp + (uint64_t)(rand() % 4096); break;
			case 1: v = regs.sp + 8 * (uint64_t)(rand() % 512); break;
			case 2: v = m->start + (uint64_t)rand() % (m->end - m->start); break;
			case 3: v = (uint64_t)(rand() % 64); break;
			case 4: v = regs.sp - 8 * (uint64_t)(rand() % 64); break;
			default: v = ((uint64_t)rand() << 33) ^ (uint64_t)rand(); break;
			}
			memcpy(stack + 8 * at, &v, 8);
		}
		if (rand() % 4 == 0)
			regs.bp = regs.sp + 8 * (uint64_t)(rand() % 256);
		len = rand() % 3 ? from->len : (size_t)rand() % (from->len + 1);
		max = rand() % 4 ? MAX_PCS : 1 + (unsigned int)rand() % MAX_PCS;
		run_both(w, &regs, stack, len, max, b, "perturbed");
		ends[b->k.end]++;
	}
	print_message("  perturbed, %u walks:", iters);
	for (unsigned int e = 1; e < TAPROOT_KUNWIND_NR; e++)
		if (ends[e])
			print_message(" %s %u", kend_name(e), ends[e]);
	print_message("\n");
	assert_true(ends[TAPROOT_KUNWIND_COMPLETE] > 0);
	assert_true(ends[TAPROOT_KUNWIND_BAD_FRAME] + ends[TAPROOT_KUNWIND_NO_MAPPING] > 0);
	free(c[0]);
	free(c[1]);
	free(stack);
	free(b);
}

/* ------------------------------------------------------- hand-made */

/*
 * A leaf at each byte of a lazy-binding PLT entry of libc: the CFA is
 * rsp + cfa_off, + 8 from the byte where the entry pushed its index.
 */
static void test_plt(void **state)
{
	struct world *w = world_libc();
	const struct ktable *k = &w->kt[0];
	struct both *b = malloc(sizeof(*b));
	uint64_t stack[64], plt = 0;
	const struct taproot_unwind_rule *r = NULL;
	struct taproot_user_regs regs = { .sp = SYN_BASE };

	assert_non_null(b);
	for (uint32_t i = 0; i + 1 < k->ut.nr_rows && !plt; i++) {
		r = &k->ut.rules[k->ut.row_rules[i]];
		if (r->kind == TAPROOT_RULE_PLT)
			plt = k->ut.base + k->ut.pcs[i];
	}
	assert_true(plt != 0);
	print_message("  libc's PLT at %#llx: CFA rsp%+d, +8 from byte %u\n",
		      (unsigned long long)plt, r->cfa_off, r->plt_thr);
	/* in libc's text, each says where it was: a caller the walker keeps */
	for (unsigned int k8 = 0; k8 < 64; k8++)
		stack[k8] = w->code[0].start + 0x100 + 16 * k8;
	for (unsigned int off = 0; off < 16; off++) {
		uint64_t cfa = (uint64_t)r->cfa_off + (off >= r->plt_thr ? 8 : 0);

		regs.ip = LIBC_BIAS + plt + 16 + off;	/* entry 1 */
		run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), 2, b, "plt");
		assert_int_equal(b->k.nr, 2);
		assert_int_equal(b->kpcs[1], stack[(cfa + (uint64_t)r->ra_off) / 8]);
		assert_int_equal(b->k.regs.sp, SYN_BASE + cfa);
		assert_int_equal(b->k.regs.bp, regs.bp);	/* rbp kept */
	}
	world_free(w);
	free(b);
}

#define NOCFI_START 0x400000ULL

/* One mapping with no CFI: lib has no ELF for it, the walker no table. */
static struct world *world_nocfi(void)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->m[0] = (struct tmap){
		.start = NOCFI_START, .end = NOCFI_START + 0x10000, .fd = -1, .key = "nocfi",
	};
	w->n = 1;
	w->m[0].table = ktable_get(w, "nocfi", NULL);
	w->no_tables = true;
	world_kmaps(w);
	return w;
}

static void test_fp_chain(void **state)
{
	struct world *w = world_nocfi();
	struct both *b = malloc(sizeof(*b));
	struct taproot_user_regs regs = { 0 };
	uint64_t stack[64] = { 0 }, base = SYN_BASE;

	assert_non_null(b);
	/* frames at words 4, 12, 20: {saved rbp, ra} */
	stack[4] = base + 12 * 8;  stack[5] = NOCFI_START + 0x100;
	stack[12] = base + 20 * 8; stack[13] = NOCFI_START + 0x200;
	stack[20] = 0;             stack[21] = NOCFI_START + 0x300;
	regs.sp = base;
	regs.bp = base + 4 * 8;
	regs.ip = NOCFI_START + 0x10;
	regs.ax = 1;
	sweep(w, &regs, (const uint8_t *)stack, sizeof(stack), "fp");
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "fp");
	assert_int_equal(b->k.nr, 4);
	assert_int_equal(b->kpcs[3], NOCFI_START + 0x300);
	/* rbp 0 after the last frame: nothing to follow; its registers */
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_CFI);
	assert_int_equal(b->k.regs.sp, base + 22 * 8);
	assert_int_equal(b->k.regs.bp, 0);
	assert_int_equal(b->k.regs.ax, 0);
	assert_int_equal(b->k.reads, 3);
	/* each frame's registers, where a walk of max frames stops */
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), 2, b, "fp, 2");
	assert_int_equal(b->k.regs.sp, base + 6 * 8);
	assert_int_equal(b->k.regs.bp, base + 12 * 8);
	assert_true(b->k.partial && !b->k.exact);

	/* a saved rbp that goes down: the chain is refused there */
	stack[12] = base + 2 * 8;
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "fp, down");
	assert_int_equal(b->k.nr, 2);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_CFI);
	/* a chain beyond the readable stack: a fault */
	stack[12] = base + 200 * 8;
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "fp, beyond");
	assert_int_equal(b->k.nr, 3);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_FAULT);
	assert_int_equal(b->k.regs.bp, base + 200 * 8);
	/* rbp below sp, misaligned */
	regs.bp = base - 16;
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "fp, below");
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_CFI);
	regs.bp = base + 4 * 8 + 1;
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "fp, odd");
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_CFI);
	world_free(w);
	free(b);
}

/*
 * musl's __restore_rt has no CFI: a pc no row covers whose code is the
 * sigreturn trampoline is a signal frame, every register from its
 * ucontext; other code there follows the rbp chain.
 */
static void test_sigreturn_nocfi(void **state)
{
	static const uint8_t code[16] = {
		0x90, 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x90,
	};
	struct world *w = calloc(1, sizeof(*w));
	struct tap_uwalk k;
	struct taproot_user_regs regs = { .sp = SYN_BASE, .bp = 0x77 };
	uint64_t stack[64] = { 0 }, *g = &stack[5];
	__u64 pcs[8];

	assert_non_null(w);
	/* a table with no rows at all: every pc is NONE, as lib's empty one */
	w->m[0] = (struct tmap){ .start = NOCFI_START, .end = NOCFI_START + 0x1000, .fd = -1 };
	w->m[0].table = ktable_get(w, "musl", NULL);
	w->n = 1;
	world_kmaps(w);
	w->code[0] = (struct region){ .start = NOCFI_START, .end = NOCFI_START + 16, .src = code };
	w->ncode = 1;
	for (unsigned int i = 0; i < 17; i++)
		g[i] = 0x100 + i;		/* r8 .. r15, rdi .. rcx */
	g[10] = SYN_BASE + 0x180;		/* rbp */
	g[15] = SYN_BASE + 0x100;		/* rsp */
	g[16] = NOCFI_START + 0x800;		/* rip */
	/* above the restored frame: {saved rbp 0, RA} */
	stack[0x180 / 8] = 0;
	stack[0x180 / 8 + 1] = NOCFI_START + 0x900;
	kmem = (struct kmem){ (const uint8_t *)stack, SYN_BASE, sizeof(stack), w, NULL, 0 };

	/* the leaf at the trampoline, as a handler's return left it */
	regs.ip = NOCFI_START + 1;
	k = (struct tap_uwalk){ .maps = &w->kmaps, .max_frames = 2,
			       .stack_hi = SYN_BASE + sizeof(stack) };
	tap_uwalk(&k, &regs, pcs);
	assert_int_equal(k.nr, 2);
	assert_int_equal(k.end, TAPROOT_KUNWIND_MAX_FRAMES);
	assert_int_equal(pcs[1], NOCFI_START + 0x800);
	assert_true(k.exact && !k.partial);
	assert_int_equal(k.regs.r8, 0x100);
	assert_int_equal(k.regs.r15, 0x107);
	assert_int_equal(k.regs.di, 0x108);
	assert_int_equal(k.regs.si, 0x109);
	assert_int_equal(k.regs.bp, SYN_BASE + 0x180);
	assert_int_equal(k.regs.bx, 0x10b);
	assert_int_equal(k.regs.dx, 0x10c);
	assert_int_equal(k.regs.ax, 0x10d);
	assert_int_equal(k.regs.cx, 0x10e);
	assert_int_equal(k.regs.sp, SYN_BASE + 0x100);
	/* the code, the ucontext; the code at 0x800 (unreadable), its rbp chain */
	assert_int_equal(k.reads, 4);
	/* the restored pc, exact, then the rbp chain to a saved rbp of 0 */
	k.max_frames = 8;
	tap_uwalk(&k, &regs, pcs);
	assert_int_equal(k.nr, 3);
	assert_int_equal(pcs[2], NOCFI_START + 0x900);
	assert_int_equal(k.end, TAPROOT_KUNWIND_NO_CFI);
	/* the ucontext beyond the readable stack */
	kmem.len = 40 + 8 * 16;
	tap_uwalk(&k, &regs, pcs);
	assert_int_equal(k.nr, 1);
	assert_int_equal(k.end, TAPROOT_KUNWIND_FAULT);
	assert_memory_equal(&k.regs, &regs, sizeof(regs));

	/* other code: the rbp chain, here refused (rbp 0x77) */
	kmem.len = sizeof(stack);
	regs.ip = NOCFI_START + 2;
	tap_uwalk(&k, &regs, pcs);
	assert_int_equal(k.nr, 1);
	assert_int_equal(k.end, TAPROOT_KUNWIND_NO_CFI);
	/* code that cannot be read is not the trampoline */
	w->ncode = 0;
	regs.ip = NOCFI_START + 1;
	tap_uwalk(&k, &regs, pcs);
	assert_int_equal(k.end, TAPROOT_KUNWIND_NO_CFI);
	world_free(w);
}

static void test_no_mapping(void **state)
{
	struct world *w = world_libc();
	struct both *b = malloc(sizeof(*b));
	struct taproot_user_regs regs = { .sp = SYN_BASE, .ip = 0x1234 };
	static const struct tap_umaps none = { 0 };
	uint64_t stack[8] = { 0 };

	assert_non_null(b);
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "no mapping");
	assert_int_equal(b->k.nr, 1);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_MAPPING);
	/* just past the end of the mapping, and its last byte as a leaf */
	regs.ip = w->m[0].end;
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "end");
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_MAPPING);
	regs.ip = w->m[0].start - 1;
	run_both(w, &regs, (const uint8_t *)stack, sizeof(stack), MAX_PCS, b, "start");
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_MAPPING);
	/* a process without mappings */
	b->k = (struct tap_uwalk){ .maps = &none, .max_frames = 4 };
	tap_uwalk(&b->k, &regs, b->kpcs);
	assert_int_equal(b->k.nr, 1);
	assert_int_equal(b->k.end, TAPROOT_KUNWIND_NO_MAPPING);
	assert_int_equal(b->k.reads, 0);
	world_free(w);
	free(b);
}

/* Tables the upload refuses: wrong pcs at worst, and the ends say why. */
static void test_bad_tables(void **state)
{
	static const __u32 pcs[3] = { 0x10, 0x20, 0x30 };
	static const __u16 rows[3] = { 0, 1, 7 };
	struct taproot_unwind_rule rules[2] = {
		{ .kind = TAPROOT_RULE_SP, .cfa_off = 8, .ra_off = -8 },
		{ .kind = TAPROOT_RULE_SLOW },
	};
	struct tap_utable t = {
		.base = 0, .nr_rows = 3, .nr_rules = 2, .pcs = pcs, .row_rules = rows,
		.rules = rules,
	};
	struct tap_umap maps[2] = {
		{ .start = 0x1000, .end = 0x2000, .bias = 0x1000, .table = &t },
		{ .start = 0x800, .end = 0x1800, .bias = 0x800, .table = &t },	/* unsorted */
	};
	struct tap_umaps um = { .nr = 1, .map = maps };
	struct taproot_user_regs regs = { .sp = SYN_BASE };
	uint64_t stack[8] = { 0x1015, 0x1015 };
	__u64 out[8];
	struct tap_uwalk k = { .maps = &um, .max_frames = 8,
			       .stack_hi = SYN_BASE + sizeof(stack) };

	kmem = (struct kmem){ (const uint8_t *)stack, SYN_BASE, sizeof(stack), NULL, NULL, 0 };
	regs.ip = 0x1015;		/* SP rule: its RA, then the same pc above */
	tap_uwalk(&k, &regs, out);
	assert_int_equal(k.end, TAPROOT_KUNWIND_COMPLETE);	/* RA 0 at word 2 */
	assert_int_equal(k.nr, 3);
	regs.ip = 0x1025;
	tap_uwalk(&k, &regs, out);
	assert_int_equal(k.end, TAPROOT_KUNWIND_SLOW_RULE);
	regs.ip = 0x1035;		/* a rule index past nr_rules */
	tap_uwalk(&k, &regs, out);
	assert_int_equal(k.end, TAPROOT_KUNWIND_NO_CFI);
	assert_int_equal(k.nr, 1);
	rules[1].kind = 200;		/* an unknown kind */
	regs.ip = 0x1025;
	tap_uwalk(&k, &regs, out);
	assert_int_equal(k.end, TAPROOT_KUNWIND_BAD_FRAME);
	rules[1].kind = TAPROOT_RULE_END;
	tap_uwalk(&k, &regs, out);
	assert_int_equal(k.end, TAPROOT_KUNWIND_COMPLETE);
	assert_int_equal(k.nr, 1);
	/* unsorted mappings: found or not, never past the array */
	um.nr = 2;
	for (regs.ip = 0x700; regs.ip < 0x2100; regs.ip += 0x80) {
		tap_uwalk(&k, &regs, out);
		assert_true(k.nr >= 1 && k.nr <= 8);
	}
	/* rules that lose rbp or need it: FP with rbp lost is a bad frame */
	rules[0] = (struct taproot_unwind_rule){
		.kind = TAPROOT_RULE_SP, .rbp = TAPROOT_RBP_UNDEF, .cfa_off = 16, .ra_off = -8,
	};
	rules[1] = (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_FP, .cfa_off = 16, .ra_off = -8 };
	um.nr = 1;
	stack[1] = 0x1025;
	regs.ip = 0x1015;
	tap_uwalk(&k, &regs, out);
	assert_int_equal(k.nr, 2);
	assert_int_equal(k.end, TAPROOT_KUNWIND_BAD_FRAME);
	assert_int_equal(k.regs.bp, 0);
	assert_int_equal(k.regs.sp, SYN_BASE + 16);
	/* max_frames 0: nothing written, the start registers */
	k.max_frames = 0;
	tap_uwalk(&k, &regs, out);
	assert_int_equal(k.nr, 0);
	assert_int_equal(k.end, TAPROOT_KUNWIND_MAX_FRAMES);
	assert_memory_equal(&k.regs, &regs, sizeof(regs));
}

/* One walk of @regs over @um with the cache; its frames, *@hits its hits. */
static unsigned int walk_cached(const struct tap_umaps *um, const struct taproot_user_regs *regs,
				uint64_t *stack, size_t len, __u64 *pcs, unsigned int *hits)
{
	struct tap_uwalk k = { .maps = um, .max_frames = 8, .stack_hi = SYN_BASE + len,
			       .cache = cache };

	kmem = (struct kmem){ (const uint8_t *)stack, SYN_BASE, len, NULL, NULL, 0 };
	tap_uwalk(&k, regs, pcs);
	*hits = k.hits;
	return k.nr;
}

/*
 * The cache against tables replaced at the same address (freed, and the
 * next upload's allocation landing there) and against a pc at a row's
 * boundary: a hit is only ever what the table walked now says.
 */
static void test_cache(void **state)
{
	static const __u32 pcs[2] = { 0x10, 0x20 };
	static const __u16 rows[2] = { 0, 1 };
	struct taproot_unwind_rule rules[2] = {
		{ .kind = TAPROOT_RULE_SP, .cfa_off = 16, .ra_off = -8 },
		{ .kind = TAPROOT_RULE_SP, .cfa_off = 24, .ra_off = -8 },
	};
	struct tap_utable t = {
		.uid = ++last_uid, .nr_rows = 2, .nr_rules = 2, .pcs = pcs, .row_rules = rows,
		.rules = rules,
	};
	struct tap_umap map = { .start = 0x1000, .end = 0x2000, .bias = 0x1000, .table = &t };
	struct tap_umaps um = { .nr = 1, .map = &map };
	struct taproot_user_regs regs = { .sp = SYN_BASE, .ip = 0x1015 };
	/* row 0: RA at sp + 8; row 1: at sp + 16; 0x1051 is row 1's, then 0 */
	uint64_t stack[8] = { 0, 0x1051, 0, 0, 0 };
	unsigned int hits;
	__u64 out[8];

	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 2);
	assert_int_equal(out[1], 0x1051);
	assert_int_equal(hits, 0);
	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 2);
	assert_int_equal(hits, 2);

	/* the same struct and arrays, another table: its rules, not the cache's */
	rules[0].cfa_off = 24;
	t.uid = ++last_uid;
	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 1);
	assert_int_equal(hits, 0);
	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 1);
	assert_int_equal(hits, 1);
	/*
	 * Back and forth, a new uid each time: more tables than the cache
	 * has entries, so that some land on an entry of an earlier one.
	 */
	for (unsigned int i = 0; i < 4 << TAP_UWALK_CACHE_BITS; i++) {
		rules[0].cfa_off = i & 1 ? 24 : 16;
		t.uid = ++last_uid;
		assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits),
				 i & 1 ? 1 : 2);
		assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits),
				 i & 1 ? 1 : 2);
		assert_int_equal(hits, i & 1 ? 1 : 2);
	}
	rules[0].cfa_off = 16;

	/*
	 * Row 0 ends at 0x1f, row 1 starts at 0x20: a leaf at each, cached
	 * one after the other either way, keeps its own row's rule (row 0's
	 * walk goes on to 0x1051, row 1's reads 0 at sp + 16). A return
	 * address at 0x1020 is looked up at 0x101f: row 0.
	 */
	for (unsigned int round = 0; round < 2; round++) {
		regs.ip = 0x101f;
		assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 2);
		regs.ip = 0x1020;
		assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 1);
		assert_int_equal(hits, round);
	}
	stack[1] = 0x1020;
	stack[3] = 0;
	regs.ip = 0x1020;
	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 1);
	regs.ip = 0x101f;
	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 2);
	assert_int_equal(out[1], 0x1020);
	assert_int_equal(hits, 2);	/* 0x1f, both times, as leaf and as call */

	/* uid 0: never cached */
	t.uid = 0;
	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 2);
	assert_int_equal(walk_cached(&um, &regs, stack, sizeof(stack), out, &hits), 2);
	assert_int_equal(hits, 0);
}

static int setup(void **state)
{
	static const struct taproot_unwind_ops ops = { .map = map_cb };

	elf_version(EV_CURRENT);
	cache = calloc(1, sizeof(*cache));
	if (!cache)
		return -1;
	return taproot_unwinder_new(&ops, 0, &unwinder);
}

static int teardown(void **state)
{
	taproot_unwinder_free(unwinder);
	free(cache);
	if (self_world)
		world_free(self_world);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_self_signal),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_perturbed),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_fp_chain),
		cmocka_unit_test(test_sigreturn_nocfi),
		cmocka_unit_test(test_no_mapping),
		cmocka_unit_test(test_bad_tables),
		cmocka_unit_test(test_cache),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
