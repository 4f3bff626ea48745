/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads of the current task's user memory where the module may not sleep
 * or take a lock: the sample handler (hardirq) and the sched probes (IRQs
 * off, runqueue lock held). ucopy.c says why they are not the kernel's
 * copy_from_user_nmi() or copy_from_user_nofault().
 */
#ifndef _TAPROOT_UCOPY_H
#define _TAPROOT_UCOPY_H

#include <linux/types.h>

/*
 * Copy up to @len bytes at user address @from into @to, up to the first
 * byte that cannot be read without a page fault: returns the bytes
 * copied, all good. 0 for a range that is not all below TASK_SIZE_MAX.
 * Never sleeps, takes no lock; not for NMI (see ucopy.c).
 */
u32 tap_ucopy(void *to, unsigned long from, u32 len);

#endif /* _TAPROOT_UCOPY_H */
