/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user stack walker: one sample's user call chain from its registers,
 * the uploaded tables and mappings of its process (utable.h), and small
 * reads of its stack. Its step semantics are those of taproot's userspace
 * unwinder (lib/unwind/unwind.c, the fast path): the same rules give the
 * same pcs, which the agreement test checks.
 *
 * Plain C, compiled in the module and in userspace (the fuzz target): the
 * includer provides tap_uwalk_read(). Runs in any context: no lock, no
 * allocation, every loop bounded (frames by max_frames, each table lookup
 * by the binary search's log2 steps, each mapping lookup likewise).
 */
#ifndef _TAPROOT_UWALK_H
#define _TAPROOT_UWALK_H

#include <linux/types.h>
#include <linux/taproot.h>

#include "utable.h"

/*
 * Read @len bytes of the walked task's user memory at @addr into @dst
 * (an on-stack buffer of the walker): 0, or nonzero when any byte could
 * not be read (the walk then ends with TAPROOT_KUNWIND_FAULT). Never
 * faults pages in, never sleeps. The module's is tap_ucopy()'s
 * (ucopy.c); the fuzz target's reads its random memory.
 */
int tap_uwalk_read(void *dst, __u64 addr, __u32 len);

/*
 * One walk. The caller sets maps, max_frames (1..TAPROOT_UNWIND_FRAMES_MAX)
 * and stack_hi, and calls tap_uwalk(); the rest is its result. The walk
 * reads the stack in [the leaf's sp, stack_hi) only (a read beyond fails,
 * as one of unreadable memory does), code only within an uploaded mapping
 * (the sigreturn check at a pc), and keeps a pc read from memory only
 * when an uploaded mapping holds it: what tables and mappings can make it
 * read and tell is bounded by what the process runs and that window.
 */
struct tap_uwalk {
	const struct tap_umaps *maps;
	__u32 max_frames;
	__u64 stack_hi;

	__u32 nr;		/* pcs written */
	__u8 end;		/* enum taproot_kunwind, never _NONE */
	/*
	 * The registers of frame nr - 1, where the walk stopped: all of them
	 * when it is the leaf or a frame a signal frame restored (exact set:
	 * its pc is not a return address); else only ip, sp and bp (bp 0
	 * when the rules lost it), the rest 0.
	 */
	struct taproot_user_regs regs;
	__u8 exact;		/* regs.ip is not a return address */
	__u8 partial;		/* only ip, sp, bp of regs are known */
	__u32 reads;		/* tap_uwalk_read() calls made */
};

/*
 * Walk from @start (the sampled user registers; the leaf's pc is exact),
 * writing up to w->max_frames pcs to @pcs, leaf first, return addresses as
 * found (not adjusted). Sets every result field of @w.
 */
void tap_uwalk(struct tap_uwalk *w, const struct taproot_user_regs *start,
	       __u64 *pcs);

#endif /* _TAPROOT_UWALK_H */
