/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the user stack walker's frame steps share, uwalk.c's own and the
 * runtimes' (jvwalk.c): the caller's frame a step finds, reads of the
 * stack through the walk's window, and the rbp chain's step. Inline, so
 * that the steps call down into this header and never into each other's
 * files; included after uwalk.h, by uwalk.c and jvwalk.c only.
 */
#ifndef _TAPROOT_UWSTEP_H
#define _TAPROOT_UWSTEP_H

#ifdef __KERNEL__
#include <linux/compiler.h>	/* __always_inline */
#elif !defined(__always_inline)
#define __always_inline	inline __attribute__((__always_inline__))
#endif

#include "uwalk.h"

/* A step that found the caller; otherwise an enum taproot_kunwind that ends the walk. */
#define TAP_UWALK_STEP_OK	TAPROOT_KUNWIND_NONE

/*
 * The caller's frame, as one step found it. A step sets bp_known and
 * signal, and of regs ip, sp and bp (0 when lost); a signal frame's, every
 * register. The rest of regs is stale: not read.
 */
struct tap_uwalk_next {
	struct taproot_user_regs regs;	/* ip, sp, bp; all after a signal */
	int bp_known;
	int signal;		/* restored by a signal frame: exact, all known */
};

/*
 * The stack window: [lo, lo + len) of the stack, read at once. It is
 * filled at a read it does not hold, from that read's address up to
 * TAP_UWALK_WIN bytes (or stack_hi), as long as the window before served
 * two reads or more: frames so far apart that each window serves one
 * read are read one read at a time, as a window would cost more. Small,
 * as a copy costs by the byte (a byte an instruction under TCG), and
 * two return addresses 16 bytes apart are the common case it is for.
 */
#define TAP_UWALK_WIN		64

struct tap_uwalk_win {
	__u64 lo;
	__u32 len;
	__u32 served;		/* reads served by this filling, its own included */
	__u64 buf[TAP_UWALK_WIN / 8];
};

/*
 * Serve @len bytes (a multiple of 8) at @addr from @win, if it holds them;
 * by words. Inline, as tap_uwalk_rd(): each read's size is a constant.
 */
static __always_inline int tap_uwalk_win_get(struct tap_uwalk_win *win, __u64 *dst,
					     __u64 addr, __u32 len)
{
	__u64 off = addr - win->lo;	/* huge below lo */
	__u32 i;

	if (off > win->len || win->len - off < len || (off & 7))
		return 0;
	for (i = 0; i < len / 8; i++)
		dst[i] = win->buf[off / 8 + i];
	win->served++;
	return 1;
}

/*
 * A read of @len bytes (a multiple of 8) of the stack at @addr: below
 * w->stack_hi only (the callers check the low end). 0, or nonzero when
 * any byte cannot be read.
 */
static __always_inline int tap_uwalk_rd(struct tap_uwalk *w, __u64 *dst, __u64 addr,
					__u32 len)
{
	struct tap_uwalk_win *win = w->win;
	__u64 n;

	if (addr > w->stack_hi || w->stack_hi - addr < len) {
		w->reads++;
		return -1;
	}
	if (win) {
		if (tap_uwalk_win_get(win, dst, addr, len))
			return 0;
		if (len <= TAP_UWALK_WIN && win->served >= 2) {
			n = w->stack_hi - addr;
			if (n > TAP_UWALK_WIN)
				n = TAP_UWALK_WIN;
			w->reads++;
			win->lo = addr;
			win->len = tap_uwalk_read_part(win->buf, addr, (__u32)n);
			win->served = 0;
			/* short of @len: a byte of the read is unreadable */
			return !tap_uwalk_win_get(win, dst, addr, len);
		}
	}
	w->reads++;
	return tap_uwalk_read(dst, addr, len);
}

/*
 * The rbp chain: rbp points at {saved rbp, return address}. Accepted when
 * rbp is known, 8-aligned, at or above sp (and the leaf's sp), and the
 * saved rbp is 0 or above it: lib/unwind's step_fp().
 */
static inline int tap_uwalk_fp(struct tap_uwalk *w, int bp_known, __u64 stack_lo,
			       struct tap_uwalk_next *n)
{
	__u64 bp = w->regs.bp, words[2];

	if (!bp_known || (bp & 7) || bp < w->regs.sp || bp < stack_lo)
		return TAPROOT_KUNWIND_NO_CFI;
	if (tap_uwalk_rd(w, words, bp, sizeof(words)))
		return TAPROOT_KUNWIND_FAULT;
	if (words[0] && words[0] <= bp)
		return TAPROOT_KUNWIND_NO_CFI;
	n->regs.sp = bp + 16;
	n->regs.bp = words[0];
	n->regs.ip = words[1];
	n->bp_known = 1;
	return TAP_UWALK_STEP_OK;
}

#endif /* _TAPROOT_UWSTEP_H */
