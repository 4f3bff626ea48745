// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack walker (uwalk.h): the steps of lib/unwind/unwind.c's fast
 * path, on uploaded tables (utable.h) and small reads of user memory.
 *
 * Per frame: the mapping holding the pc (minus 1 for a return address),
 * the previous frame's or else by binary search over the process's
 * mappings; its table's row, by binary search over the row pcs; the row's
 * rule gives the caller's sp (the CFA), return address and rbp. A mapping
 * without a table (TAPROOT_MAP_F_FP) follows the rbp chain; so does a pc
 * no row covers, unless the code at the pc is the sigreturn trampoline
 * (then every register comes from the signal frame), as lib does where an
 * ELF has no CFI there. A pc in no mapping but in the code heaps of the
 * process's JVM steps by its code blob (jvwalk.c).
 *
 * What lib/unwind reads from its stack copy this walker reads with
 * tap_uwalk_read(), and the ends map one to one: a word the copy lacks
 * (TRUNCATED there) is a read that failed here (TAPROOT_KUNWIND_FAULT); a
 * word below the leaf's sp is BAD_FRAME in both, whether or not it could
 * be read, so that both walks see the same memory. The agreement test
 * (tests/unit/test_uwalk.c) checks that they give the same pcs.
 *
 * Reads of the stack go through a window (struct tap_uwalk_win): a read
 * that lies in the bytes last read is served from them, so that frames
 * close together cost one read, not one or two each. The window changes
 * which reads are made, never what a read of a word gives: a word is in
 * the window only when it was read, and one the window could not read
 * (past the first byte that failed) is a failed read, as it would be
 * alone. Below the leaf's sp nothing is read either way.
 *
 * Nothing here trusts the tables or mappings beyond their array lengths:
 * every index is checked at use, every search is capped at 32 halvings,
 * the walk at TAPROOT_UNWIND_FRAMES_MAX frames, and each frame's step
 * makes at most two reads, of at most 136 bytes (a signal frame's
 * registers; a window's are 64), into buffers on this stack (the fuzz
 * target checks the count).
 */
#ifdef __KERNEL__
#include <linux/stddef.h>	/* NULL, which <linux/types.h> does not define */
#else
#include <stddef.h>
#endif

#include "jvwalk.h"
#include "uwalk.h"
#include "uwstep.h"

/*
 * The x86-64 rt_sigframe a signal handler returns through: at the sp of
 * the sigreturn trampoline (pretcode already popped) is the ucontext, its
 * gregs after uc_flags, uc_link and uc_stack, in REG_R8..REG_RIP order.
 */
#define TAP_UC_GREGS_OFF	40
#define TAP_UC_NR_GREGS		17

/* mov $0xf,%rax; syscall: rt_sigreturn, as glibc's and musl's __restore_rt */
static const __u8 tap_sigreturn_code[9] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05
};

/* What a pc no row covers follows, as lib's rules[0]. */
static const struct taproot_unwind_rule tap_rule_none = {
	.kind = TAPROOT_RULE_NONE,
};

/*
 * The mapping holding @pc, or NULL. Sorted disjoint mappings make it the
 * last one starting at or below @pc; with any others the search still
 * ends (a u32 range halves at most 32 times) and the answer is checked.
 */
static const struct tap_umap *tap_uwalk_search(const struct tap_umaps *maps,
					       __u64 pc)
{
	const struct tap_umap *m;
	__u32 lo = 0, hi, steps;

	if (!maps || !maps->map || !maps->nr)
		return NULL;
	hi = maps->nr;
	for (steps = 0; hi - lo > 1 && steps < 32; steps++) {
		__u32 mid = lo + (hi - lo) / 2;

		if (maps->map[mid].start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	m = &maps->map[lo];
	return pc >= m->start && pc < m->end ? m : NULL;
}

/*
 * The mapping holding @pc, or NULL. @last, the previous frame's mapping
 * (or NULL), is tried first: callers are mostly in their callee's file,
 * and disjoint mappings make a mapping that holds @pc the only one.
 */
static __always_inline const struct tap_umap *
tap_uwalk_map(const struct tap_umaps *maps, const struct tap_umap *last, __u64 pc)
{
	if (last && pc >= last->start && pc < last->end)
		return last;
	return tap_uwalk_search(maps, pc);
}

/* The cache entry of offset @off in the table of uid @uid. */
static struct tap_uwalk_centry *tap_uwalk_centry(struct tap_uwalk_cache *c,
						 __u64 uid, __u32 off)
{
	__u64 h = (uid << 32 | off) * 0x9e3779b97f4a7c15ULL;

	return &c->e[h >> (64 - TAP_UWALK_CACHE_BITS)];
}

/*
 * The rule of ELF address @vaddr in @t, as tp_cfi_lookup(): the last row
 * whose pc is at or below it; &tap_rule_none when no row covers it. NULL
 * when the row names a rule past nr_rules (a table the upload should have
 * refused). A rule the search found goes into w->cache, keyed by the exact
 * offset, so that a hit gives what the search would, for any table; a
 * rule from the cache lives until the next lookup.
 */
static const struct taproot_unwind_rule *
tap_uwalk_rule(struct tap_uwalk *w, const struct tap_utable *t, __u64 vaddr)
{
	struct tap_uwalk_centry *e = NULL;
	__u64 off = vaddr - t->base;
	__u32 lo = 0, hi = t->nr_rows, steps;
	__u16 rule;

	/* first: an entry is there only for an @off that got past the checks */
	if (w->cache && t->uid) {
		e = tap_uwalk_centry(w->cache, t->uid, (__u32)off);
		if (e->uid == t->uid && e->off == off) {
			w->hits++;
			return &e->rule;
		}
	}
	if (vaddr < t->base || off > 0xffffffffULL || !t->nr_rows ||
	    !t->pcs || !t->row_rules || off < t->pcs[0])
		return &tap_rule_none;
	for (steps = 0; hi - lo > 1 && steps < 32; steps++) {
		__u32 mid = lo + (hi - lo) / 2;

		if (t->pcs[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	rule = t->row_rules[lo];
	if (rule >= t->nr_rules || !t->rules)
		return NULL;
	if (e) {
		e->uid = t->uid;
		e->off = (__u32)off;
		e->rule = t->rules[rule];
	}
	return &t->rules[rule];
}

/* Every register from the ucontext of the signal frame at sp. */
static int tap_uwalk_signal(struct tap_uwalk *w, __u64 stack_lo,
			    struct tap_uwalk_next *n)
{
	__u64 at = w->regs.sp + TAP_UC_GREGS_OFF, g[TAP_UC_NR_GREGS];
	struct taproot_user_regs *r = &n->regs;

	if (at < stack_lo)
		return TAPROOT_KUNWIND_BAD_FRAME;
	if (tap_uwalk_rd(w, g, at, sizeof(g)))
		return TAPROOT_KUNWIND_FAULT;
	r->r8 = g[0];
	r->r9 = g[1];
	r->r10 = g[2];
	r->r11 = g[3];
	r->r12 = g[4];
	r->r13 = g[5];
	r->r14 = g[6];
	r->r15 = g[7];
	r->di = g[8];
	r->si = g[9];
	r->bp = g[10];
	r->bx = g[11];
	r->dx = g[12];
	r->ax = g[13];
	r->cx = g[14];
	r->sp = g[15];
	r->ip = g[16];
	r->flags = 0;		/* REG_EFL, not read: no rule uses it */
	n->bp_known = 1;
	n->signal = 1;
	return TAP_UWALK_STEP_OK;
}

/*
 * A rule of kind SP, FP or PLT: the CFA from sp or rbp, the return address
 * at CFA + ra_off, the caller's rbp kept, lost, or at CFA + rbp_off: lib's
 * tp_step_fast(). A saved rbp that cannot be read (below the leaf's sp, as
 * an epilogue's stale CFA-16 past "pop %rbp" is, or unreadable) is lost,
 * and the walk goes on. The two words are read at once when adjacent.
 */
static int tap_uwalk_fast(struct tap_uwalk *w,
			  const struct taproot_unwind_rule *r, int bp_known,
			  __u64 stack_lo, struct tap_uwalk_next *n)
{
	const struct taproot_user_regs *in = &w->regs;
	__u64 cfa, ra_at, bp_at, lo, words[2];
	int bp_tried = 0;

	switch (r->kind) {
	case TAPROOT_RULE_SP:
		cfa = in->sp + (__u64)(__s64)r->cfa_off;
		break;
	case TAPROOT_RULE_FP:
		if (!bp_known)
			return TAPROOT_KUNWIND_BAD_FRAME;
		cfa = in->bp + (__u64)(__s64)r->cfa_off;
		break;
	case TAPROOT_RULE_PLT:
		/* + 8 once the PLT entry pushed its index */
		cfa = in->sp + (__u64)(__s64)r->cfa_off;
		if ((in->ip & 15) >= r->plt_thr)
			cfa += 8;
		break;
	default:
		return TAPROOT_KUNWIND_BAD_FRAME;
	}
	ra_at = cfa + (__u64)(__s64)r->ra_off;
	bp_at = cfa + (__u64)(__s64)r->rbp_off;
	if (ra_at < stack_lo)
		return TAPROOT_KUNWIND_BAD_FRAME;

	if (r->rbp == TAPROOT_RBP_CFA && bp_at >= stack_lo &&
	    (bp_at + 8 == ra_at || ra_at + 8 == bp_at)) {
		lo = bp_at + 8 == ra_at ? bp_at : ra_at;
		/* lo + 16 must not wrap: then words[1] is at lo + 8 */
		if (lo <= ~0ULL - 15) {
			if (!tap_uwalk_rd(w, words, lo, 16)) {
				n->regs.ip = words[lo != ra_at];
				n->regs.bp = words[lo != bp_at];
				n->bp_known = 1;
				goto found;
			}
			/* one word or both unreadable: the RA's read decides */
			bp_tried = 1;
		}
	}
	if (tap_uwalk_rd(w, &words[0], ra_at, 8))
		return TAPROOT_KUNWIND_FAULT;
	n->regs.ip = words[0];
	n->regs.bp = 0;
	switch (r->rbp) {
	case TAPROOT_RBP_SAME:
		n->regs.bp = bp_known ? in->bp : 0;
		n->bp_known = bp_known;
		break;
	case TAPROOT_RBP_CFA:
		/* the pair failed and the RA did not: the rbp slot is unreadable */
		if (!bp_tried && bp_at >= stack_lo &&
		    !tap_uwalk_rd(w, &words[1], bp_at, 8)) {
			n->regs.bp = words[1];
			n->bp_known = 1;
		}
		break;
	default:		/* TAPROOT_RBP_UNDEF, or unknown: lost */
		break;
	}
found:
	n->regs.sp = cfa;
	return TAP_UWALK_STEP_OK;
}

/*
 * Whether the code at @pc, in mapping @m, is the sigreturn trampoline;
 * unreadable, or running past @m: no.
 */
static int tap_uwalk_is_sigreturn(struct tap_uwalk *w, const struct tap_umap *m,
				  __u64 pc)
{
	__u8 code[sizeof(tap_sigreturn_code)];
	unsigned int i;

	w->reads++;
	if (m->end - pc < sizeof(code) || tap_uwalk_read(code, pc, sizeof(code)))
		return 0;
	for (i = 0; i < sizeof(code); i++)
		if (code[i] != tap_sigreturn_code[i])
			return 0;
	return 1;
}

/* The address whose mapping and row a frame's are: a return address's call. */
static __u64 tap_uwalk_lookup_pc(__u64 pc, int exact)
{
	return exact ? pc : pc - 1;
}

/* Whether the code at @pc (@exact, or a return address) is its JVM's. */
static int tap_uwalk_in_jvm(const struct tap_umaps *maps, __u64 pc, int exact)
{
	return maps && maps->jvm && tap_jvm_in_code(maps->jvm, tap_uwalk_lookup_pc(pc, exact));
}

/*
 * One step up from the frame in w->regs, whose pc is exact (the leaf's, or
 * one a signal frame restored: w->exact) or a return address, in mapping
 * @m: the caller's registers into @n. Returns TAP_UWALK_STEP_OK or the
 * walk's end: lib/unwind's unwind_frame().
 */
static int tap_uwalk_step(struct tap_uwalk *w, const struct tap_umap *m,
			  int bp_known, __u64 stack_lo, struct tap_uwalk_next *n)
{
	__u64 pc = w->regs.ip, lookup = tap_uwalk_lookup_pc(pc, w->exact);
	const struct taproot_unwind_rule *r;

	if (!m->table)
		return tap_uwalk_fp(w, bp_known, stack_lo, n);
	r = tap_uwalk_rule(w, m->table, lookup - m->bias);
	if (!r)
		return TAPROOT_KUNWIND_NO_CFI;
	switch (r->kind) {
	case TAPROOT_RULE_NONE:
		/* musl's __restore_rt has no CFI; lib reads its code from the ELF */
		if (tap_uwalk_is_sigreturn(w, m, pc))
			return tap_uwalk_signal(w, stack_lo, n);
		return tap_uwalk_fp(w, bp_known, stack_lo, n);
	case TAPROOT_RULE_SIGNAL:
		return tap_uwalk_signal(w, stack_lo, n);
	case TAPROOT_RULE_END:
		return TAPROOT_KUNWIND_COMPLETE;
	case TAPROOT_RULE_SLOW:
		return TAPROOT_KUNWIND_SLOW_RULE;
	default:
		return tap_uwalk_fast(w, r, bp_known, stack_lo, n);
	}
}

void tap_uwalk(struct tap_uwalk *w, const struct taproot_user_regs *start,
	       __u64 *pcs)
{
	/* lib's stack copy starts at the leaf's sp: nothing below is read */
	__u64 stack_lo = start->sp;
	/* empty, and free to be filled at the first read */
	struct tap_uwalk_win win = { .served = 2 };
	struct tap_uwalk_next n;
	const struct tap_umap *m;
	__u32 max = w->max_frames;
	int bp_known = 1, end = TAPROOT_KUNWIND_MAX_FRAMES;
	__u64 upc;

	w->win = w->no_window ? NULL : &win;
	w->nr = 0;
	w->reads = 0;
	w->hits = 0;
	w->regs = *start;
	w->exact = 1;
	w->partial = 0;
	if (max > TAPROOT_UNWIND_FRAMES_MAX)
		max = TAPROOT_UNWIND_FRAMES_MAX;
	if (!max)
		goto out;

	/* The leaf's pc is the sampled register's, whatever it maps to. */
	pcs[w->nr++] = w->regs.ip;
	m = tap_uwalk_map(w->maps, NULL, w->regs.ip);
	for (;;) {
		n.bp_known = 0;
		n.signal = 0;
		if (m) {
			end = tap_uwalk_step(w, m, bp_known, stack_lo, &n);
		} else if (tap_uwalk_in_jvm(w->maps, w->regs.ip, w->exact)) {
			/* Its pc goes to the ring as the JVM's code or method. */
			end = tap_jvwalk_step(w, w->maps->jvm, bp_known, stack_lo, &n, &upc);
			if (end == TAP_UWALK_STEP_OK)
				pcs[w->nr - 1] = upc;
		} else {
			end = TAPROOT_KUNWIND_NO_MAPPING;
		}
		if (end != TAP_UWALK_STEP_OK)
			break;
		/*
		 * A caller's frame is above its callee's, but for a signal's.
		 * In the leaf only it may be the same frame: a leaf that keeps
		 * its return address in a register (glibc's __vfork) has
		 * CFA == rsp.
		 */
		if (!n.signal && (n.regs.sp < w->regs.sp ||
				  (n.regs.sp == w->regs.sp && w->nr > 1))) {
			end = TAPROOT_KUNWIND_BAD_FRAME;
			break;
		}
		if (!n.regs.ip) {
			end = TAPROOT_KUNWIND_COMPLETE;
			break;
		}
		/*
		 * The last pc is stepped from too, as lib does: a stack of
		 * exactly max frames is COMPLETE. w->regs stays the frame of
		 * the last pc.
		 */
		if (w->nr == max) {
			end = TAPROOT_KUNWIND_MAX_FRAMES;
			break;
		}
		/*
		 * A pc read from memory is kept only in an uploaded mapping
		 * or its JVM's code heaps (which its step then names): the
		 * walk stops before any other word reaches the ring, and
		 * w->regs stay those of the last pc kept.
		 */
		m = tap_uwalk_map(w->maps, m,
				  tap_uwalk_lookup_pc(n.regs.ip, n.signal));
		if (!m && !tap_uwalk_in_jvm(w->maps, n.regs.ip, n.signal)) {
			end = TAPROOT_KUNWIND_NO_MAPPING;
			break;
		}
		/*
		 * A partial frame's registers but ip, sp and bp are 0: cleared
		 * once, when the walk leaves an exact frame (the leaf, or one
		 * a signal frame restored), not copied frame after frame.
		 */
		if (n.signal) {
			w->regs = n.regs;
		} else {
			if (!w->partial)
				w->regs = (struct taproot_user_regs){ 0 };
			w->regs.ip = n.regs.ip;
			w->regs.sp = n.regs.sp;
			w->regs.bp = n.regs.bp;
		}
		bp_known = n.bp_known;
		w->exact = n.signal;
		w->partial = !n.signal;
		pcs[w->nr++] = w->regs.ip;
	}
out:
	w->end = (__u8)end;
	w->win = NULL;
}
