// SPDX-License-Identifier: GPL-2.0
/*
 * Stack snapshots of the current task (stack.h), shared by the timer
 * samples and the tracepoint probes.
 *
 * Kernel stacks come from the kernel's unwinder (ORC on the kernels here,
 * which the module's own objects carry too), as perf's kernel callchain
 * does: from interrupted registers for a sample, from the probe's own
 * frame for a tracepoint. stack_trace_save() would do for the latter but
 * cannot stop at an interrupt's entry, and an interrupt that wakes a task
 * must not be charged with the stack of whatever task it interrupted.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/unwind.h>

#include "stack.h"

void tap_fill_user_regs(struct taproot_user_regs *u, const struct pt_regs *r)
{
	u->ax = r->ax;
	u->bx = r->bx;
	u->cx = r->cx;
	u->dx = r->dx;
	u->si = r->si;
	u->di = r->di;
	u->bp = r->bp;
	u->sp = r->sp;
	u->r8 = r->r8;
	u->r9 = r->r9;
	u->r10 = r->r10;
	u->r11 = r->r11;
	u->r12 = r->r12;
	u->r13 = r->r13;
	u->r14 = r->r14;
	u->r15 = r->r15;
	u->ip = r->ip;
	u->flags = r->flags;
}

struct pt_regs *tap_current_user_regs(void)
{
	struct task_struct *task = current;

	if ((task->flags & PF_KTHREAD) || !task->mm)
		return NULL;
	return task_pt_regs(task);
}

/*
 * exec leaves argc at mm->start_stack and argv, envp, the auxiliary vector
 * and their strings above it: never a frame (the entry code's own frames,
 * _start's included, lie below it). So a copy from the stack the process
 * started on stops a little above that point, which keeps the process's
 * environment out of the ring and costs less than a copy of the default
 * size. Other stacks (threads', signal stacks) end where nothing cheap can
 * tell: their copy stops at an unmapped page, if any. Reading
 * mm->start_stack takes no lock: current's mm stays while current runs,
 * and a value changed under us (exec, prctl) only moves where one copy
 * stops.
 */
u32 tap_ustack_span(unsigned long sp, u32 len)
{
	struct mm_struct *mm = current->mm;
	unsigned long top;

	if (!mm)
		return len;
	top = READ_ONCE(mm->start_stack) + TAPROOT_USTACK_TOP_SLACK;
	if (sp >= top || top - sp >= len)
		return len;
	return top - sp;
}

/*
 * The copy runs in the sample timer's hardirq and in the sched probes
 * (runqueue lock held), into the vmalloc'd ring. On kernels from 5.18 with
 * CONFIG_HARDENED_USERCOPY (Debian's), check_object_size() checks a
 * vmalloc destination under vmap_area_lock: a lock not to be taken in
 * hardirq, and a deadlock when the timer interrupts its holder on the
 * same CPU. copy_from_user_nofault() made that check until "mm: Fix
 * copy_from_user_nofault()" (6.3, backported to some stables only);
 * copy_from_user_nmi() (x86, exported to GPL modules everywhere) stopped
 * making it earlier, in 6.1 ("x86/uaccess: avoid check_object_size() in
 * copy_from_user_nmi()"): a raw copy with page faults disabled after the
 * checks an interrupt may make. Before 5.18 the check has no vmalloc
 * lookup. So copy_from_user_nmi() is safe on every kernel but 5.18-6.0.
 * It returns the bytes it did not copy: a copy stops at the first byte
 * that cannot be read, and what it copied before is good.
 */
u32 tap_copy_ustack(u8 *dst, unsigned long sp, u32 len)
{
	return len - copy_from_user_nmi(dst, (const void __user *)sp, len);
}

u32 tap_kstack_regs(u64 *out, u32 max, struct pt_regs *regs, bool *trunc)
{
	struct unwind_state state;
	unsigned long addr;
	u32 nr = 0;

	if (!max) {
		*trunc = true;	/* there is at least regs->ip */
		return 0;
	}
	out[nr++] = regs->ip;
	/* From regs, the unwinder starts at the interrupted frame's caller. */
	for (unwind_start(&state, current, regs, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		if (nr == max) {
			*trunc = true;
			break;
		}
		out[nr++] = addr;
	}
	return nr;
}

/*
 * noinline: the walk starts from this function's frame, which must be the
 * module's own so that the skip below has something to skip, whoever
 * calls it.
 */
noinline u32 tap_kstack_here(u64 *out, u32 max, bool irq_only, bool *trunc)
{
	struct unwind_state state;
	bool inner = true;	/* still in the module's frames */
	unsigned long addr;
	u32 nr = 0;

	for (unwind_start(&state, current, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		/* An entry frame: what follows is the interrupted context. */
		if (irq_only && unwind_get_entry_regs(&state, NULL))
			break;
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		if (inner && within_module(addr, THIS_MODULE))
			continue;
		inner = false;
		if (nr == max) {
			*trunc = true;
			break;
		}
		out[nr++] = addr;
	}
	return nr;
}
