/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks of the current task, as samples (sample.c) and causal events
 * (events.c) record them: user registers, a page-chunked copy of the user
 * stack, and the kernel stack, either from interrupted registers or from
 * where a tracepoint probe runs.
 *
 * Every helper runs in any context (task with preemption off, softirq,
 * hardirq, NMI, under the runqueue lock): none sleeps, locks, allocates or
 * prints, and user memory is read only with copy_from_user_nofault().
 */
#ifndef _TAPROOT_STACK_H
#define _TAPROOT_STACK_H

#include <linux/types.h>
#include <linux/taproot.h>

struct pt_regs;

/* Copy @r into the ABI's register set. */
void tap_fill_user_regs(struct taproot_user_regs *u, const struct pt_regs *r);

/*
 * The user registers current saved when it entered the kernel, or NULL
 * for a kernel thread and for a task whose mm is gone (exiting).
 */
struct pt_regs *tap_current_user_regs(void);

/*
 * How many of @len bytes of current's user stack from @sp can hold frames:
 * fewer than @len only when the copy would run past the top of the stack
 * the process started on (TAPROOT_USTACK_TOP_SLACK above mm->start_stack).
 */
u32 tap_ustack_span(unsigned long sp, u32 len);

/*
 * Copy up to @len bytes of current's user stack from @sp into @dst, up to
 * the first byte that cannot be read. Returns the bytes copied. Safe in
 * hardirq and under the runqueue lock.
 */
u32 tap_copy_ustack(u8 *dst, unsigned long sp, u32 len);

/*
 * The kernel stack of interrupted kernel-mode @regs: regs->ip, then the
 * return addresses the unwinder finds, at most @max in all. Sets *@trunc
 * when frames were left out (always when @max is 0).
 */
u32 tap_kstack_regs(u64 *out, u32 max, struct pt_regs *regs, bool *trunc);

/*
 * The kernel stack of the caller, innermost first, without the module's
 * own frames, at most @max return addresses. With @irq_only, the walk
 * stops where the interrupt that runs it was entered, so that an
 * interrupt's stack does not continue into the task it interrupted. Sets
 * *@trunc when frames were left out (always when @max is 0).
 */
u32 tap_kstack_here(u64 *out, u32 max, bool irq_only, bool *trunc);

#endif /* _TAPROOT_STACK_H */
