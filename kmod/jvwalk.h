/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HotSpot frame step of the user stack walker: a frame whose pc lies
 * in a JVM's code cache, by the code blob holding it and the layout its
 * consumer uploaded (<linux/taproot.h>, "HotSpot frames"). Plain C,
 * compiled in the module and in userspace, as uwalk.h: it reads with
 * tap_uwalk_read() and the walker's stack reads, never faults a page in,
 * allocates nothing, and caps every loop.
 */
#ifndef _TAPROOT_JVWALK_H
#define _TAPROOT_JVWALK_H

#include <linux/types.h>
#include <linux/taproot.h>

struct tap_uwalk;
struct tap_uwalk_next;

/* Whether @l is a layout the step takes: heaps and offsets in range. */
int tap_jvlayout_ok(const struct taproot_jvm_layout *l);

/* Whether @pc lies in one of @l's code heaps. */
int tap_jvm_in_code(const struct taproot_jvm_layout *l, __u64 pc);

/*
 * One step up from the frame in w->regs, whose pc (exact when w->exact,
 * else a return address) lies in @l's code: the caller's registers into
 * @n, and the frame's pc as the ring has it (TAPROOT_UPC_JVM_*) into
 * *@upc. Returns uwalk's TAP_UWALK_STEP_OK or the walk's end, as
 * uwalk.c's own steps.
 */
int tap_jvwalk_step(struct tap_uwalk *w, const struct taproot_jvm_layout *l,
		    int bp_known, __u64 stack_lo, struct tap_uwalk_next *n,
		    __u64 *upc);

#endif /* _TAPROOT_JVWALK_H */
