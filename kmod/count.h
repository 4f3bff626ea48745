/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counted stacks (count.c; <linux/taproot.h>, "Counted stacks"): per CPU,
 * two tables of TAPROOT_COUNT_SLOTS struct taproot_count, one the sample
 * handler counts in (the active one), the other empty or being drained.
 *
 * Contexts. tap_count_add() runs in the sample handler, on its CPU, which
 * does not nest with itself: the active table has one writer and needs no
 * atomics. A drain switches each CPU's active table and waits a grace
 * period (the handler runs with interrupts off) before it reads the ones
 * it left: then nothing writes them. The rest is process context, under
 * the count mutex.
 */
#ifndef _TAPROOT_COUNT_H
#define _TAPROOT_COUNT_H

#include <linux/types.h>
#include <linux/taproot.h>

struct task_struct;

/*
 * Make the tables when there are none yet (the first configuration with
 * TAPROOT_CFG_F_COUNT, before it is published): 0 or -ENOMEM. Process
 * context; sleeps.
 */
int tap_count_enable(void);

/*
 * Count a sample of stack @id (of @epoch) of @task on this CPU, with the
 * sample's @flags and @period_us, taken at @now_ns. false: no table, or
 * no room in it (the caller writes a SAMPLE_REF instead).
 */
bool tap_count_add(u64 id, u32 epoch, const struct task_struct *task,
		   u16 flags, u32 period_us, u64 now_ns);

/*
 * TAPROOT_IOC_COUNTS_DRAIN, @uarg its argument: 0, -EFAULT, -ENOSPC (an
 * array too small). Process context; sleeps (a grace period).
 */
long tap_count_drain_ioctl(struct taproot_counts_drain __user *uarg);

/* Empty both tables of every CPU (a new reader). Process context. */
void tap_count_clear(void);

/* At unload, once no sample handler runs: free the tables. */
void tap_count_exit(void);

#endif /* _TAPROOT_COUNT_H */
