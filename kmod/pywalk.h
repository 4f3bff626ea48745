/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPython frame walker: a thread's Python frames, innermost first, from
 * its TLS and the layout its consumer uploaded (<linux/taproot.h>, "CPython
 * frames"). Plain C, compiled in the module and in userspace, as uwalk.h:
 * it reads with tap_uwalk_read(), never faults a page in, allocates
 * nothing, and caps every loop.
 */
#ifndef _TAPROOT_PYWALK_H
#define _TAPROOT_PYWALK_H

#include <linux/types.h>
#include <linux/taproot.h>

/* Whether @l is a layout the walker takes: every offset in its reads. */
int tap_pylayout_ok(const struct taproot_python_layout *l);

/* How a walk went: tap_pywalk() sets every field. */
struct tap_pywalk_res {
	__u32 reads;		/* tap_uwalk_read() calls */
	/*
	 * The walk was cut short: a read failed, a frame's code object was
	 * not one, or the chain ran past twice TAPROOT_PY_FRAMES_MAX steps
	 * (a forged or changing chain; a layout that lies). Not for a
	 * thread without a thread state, nor at @max frames.
	 */
	__u8 cut;
};

/*
 * Walk the frames of the thread whose fs base is @fsbase, by layout @l
 * (tap_pylayout_ok()), into @out (up to @max, at most
 * TAPROOT_PY_FRAMES_MAX). Returns the frames written, those found before
 * whatever ended the walk.
 */
__u32 tap_pywalk(const struct taproot_python_layout *l, __u64 fsbase,
		 struct taproot_pyframe *out, __u32 max, struct tap_pywalk_res *res);

#endif /* _TAPROOT_PYWALK_H */
