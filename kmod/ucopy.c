// SPDX-License-Identifier: GPL-2.0
/*
 * Reads of user memory in atomic context (ucopy.h), for the stack copy
 * (stack.c) and the user stack walker (uwalk.h: tap_uwalk_read() and
 * tap_uwalk_read_part(), the one part of the walker that is kernel only:
 * uwalk.c also builds in userspace, where its fuzz target and test
 * provide their own).
 *
 * Why not the kernel's copies. With CONFIG_HARDENED_USERCOPY (Debian's),
 * a copy of a size the compiler does not know checks its destination:
 * from 5.18 __check_object_size() looks a vmalloc'd one up in the vmap
 * area tree under vmap_area_lock, a lock not to be taken in hardirq (a
 * deadlock when the interrupt came in while its holder ran on this CPU),
 * and the destinations here are vmalloc'd (the ring) or on the IRQ stack
 * (vmap'd too, with CONFIG_VMAP_STACK). copy_from_user_nmi() stopped
 * making that check in 6.1 ("x86/uaccess: avoid check_object_size() in
 * copy_from_user_nmi()"), copy_from_user_nofault() in 6.3 ("mm: Fix
 * copy_from_user_nofault()"), each backported to some stable kernels
 * only, and nothing a build can see tells a kernel that has the fix from
 * one that lacks it. check_object_size() is compiled out for a constant
 * size, so every copy here is made of constant-size pieces of the inline
 * __copy_from_user_inatomic(), on every kernel: no destination is ever
 * looked up. scripts/kbuild refuses a module that links either of the two
 * copies again.
 *
 * The rest is what copy_from_user_nmi() does: a user range checked first
 * (a lying table can make any address), page faults disabled, so that an
 * absent page is a failed read and never a fault-in, and the bytes before
 * the first that cannot be read kept. Not for NMI: there the current mm
 * may be half switched, which nmi_uaccess_okay() tells from per-CPU TLB
 * state that modules cannot read; the module samples from an hrtimer.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "ucopy.h"
#include "uwalk.h"

/*
 * The large piece: a copy of 8 KiB, the default, is 32 of them; the
 * middle one, the walker's stack window (uwalk.c) in one, and a tail.
 */
#define TAP_UCOPY_PIECE		256
#define TAP_UCOPY_MID		64

/* Copy the constant @n bytes at @from + @done to @to + @done; true when all were. */
#define tap_ucopy_piece(to, from, done, n)					\
	(!__copy_from_user_inatomic((u8 *)(to) + (done),			\
				    (const void __user *)((from) + (done)), (n)))

u32 tap_ucopy(void *to, unsigned long from, u32 len)
{
	u32 done = 0;

	if (from >= TASK_SIZE_MAX || len > TASK_SIZE_MAX - from)
		return 0;
	pagefault_disable();
	while (len - done >= TAP_UCOPY_PIECE &&
	       tap_ucopy_piece(to, from, done, TAP_UCOPY_PIECE))
		done += TAP_UCOPY_PIECE;
	while (len - done >= TAP_UCOPY_MID &&
	       tap_ucopy_piece(to, from, done, TAP_UCOPY_MID))
		done += TAP_UCOPY_MID;
	/* A piece that failed, or the tail: words, then bytes, up to the first unreadable one. */
	while (len - done >= 8 && tap_ucopy_piece(to, from, done, 8))
		done += 8;
	while (done < len && tap_ucopy_piece(to, from, done, 1))
		done++;
	pagefault_enable();
	return done;
}

int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	return tap_ucopy(dst, (unsigned long)addr, len) == len ? 0 : -EFAULT;
}

__u32 tap_uwalk_read_part(void *dst, __u64 addr, __u32 len)
{
	return tap_ucopy(dst, (unsigned long)addr, len);
}
