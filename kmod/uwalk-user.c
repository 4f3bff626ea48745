// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack walker's reads (uwalk.h: tap_uwalk_read()), the one part
 * of it that is kernel only: uwalk.c itself also builds in userspace,
 * where the fuzz target and the agreement test provide their own.
 *
 * The walker runs in the sample handler (hardirq), on current's user
 * stack. copy_from_user_nmi(), as stack.c's tap_copy_ustack() and for the
 * same reasons (see there): page faults disabled, an absent page a failed
 * read, no hardened-usercopy lookup of the destination on the kernels of
 * the matrix (the destinations are the walker's on-stack buffers anyway).
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "uwalk.h"

int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	/* a user address, whatever a lying table made of it */
	if (addr >= TASK_SIZE_MAX || len > TASK_SIZE_MAX - addr)
		return -EFAULT;
	if (copy_from_user_nmi(dst, (const void __user *)(unsigned long)addr, len))
		return -EFAULT;
	return 0;
}
