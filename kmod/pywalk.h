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

/*
 * Walk the frames of the thread whose fs base is @fsbase, by layout @l
 * (tap_pylayout_ok()), into @out (up to @max, at most
 * TAPROOT_PY_FRAMES_MAX). Returns the frames written; *@reads counts the
 * tap_uwalk_read() calls. A read that fails, or a frame whose code object
 * is not one, ends the walk with the frames found before it.
 */
__u32 tap_pywalk(const struct taproot_python_layout *l, __u64 fsbase,
		 struct taproot_pyframe *out, __u32 max, __u32 *reads);

#endif /* _TAPROOT_PYWALK_H */
