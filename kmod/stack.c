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
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/fsgsbase.h>
#include <asm/unwind.h>

#include "ring.h"
#include "stack.h"
#include "pywalk.h"
#include "ucopy.h"
#include "utab.h"
#include "uwalk.h"

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

/*
 * How many of @len bytes of current's user stack from @sp can hold frames:
 * fewer than @len only when the copy would run past the top of the stack
 * the process started on (TAPROOT_USTACK_TOP_SLACK above mm->start_stack).
 *
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
static u32 tap_ustack_span(unsigned long sp, u32 len)
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
 * One rule cache per CPU (8 KiB each: too much for the static per-CPU
 * area that modules share). Entries need no invalidation (uwalk.h): a
 * table's uid is never another's.
 */
static struct tap_uwalk_cache __percpu *tap_uwalk_caches;

int __init tap_stack_init(void)
{
	tap_uwalk_caches = alloc_percpu(struct tap_uwalk_cache);
	return tap_uwalk_caches ? 0 : -ENOMEM;
}

void tap_stack_exit(void)
{
	free_percpu(tap_uwalk_caches);
	tap_uwalk_caches = NULL;
}

void tap_walk_user(struct tap_uwalk *w, struct pt_regs *uregs, u32 max_frames,
		   u64 *upcs)
{
	struct taproot_user_regs start;
	u8 why;

	w->nr = 0;
	w->maps = tap_utab_lookup(current, &why);
	if (!w->maps) {
		w->end = why;
		return;
	}
	w->max_frames = max_frames;
	/*
	 * A walk with interrupts on could be interrupted by a sample that
	 * walks too: it goes without the cache. An NMI is never a caller.
	 */
	w->cache = irqs_disabled() && !in_nmi() ?
		   this_cpu_ptr(tap_uwalk_caches) : NULL;
	w->no_window = 0;
	tap_fill_user_regs(&start, uregs);
	/* As far up as the largest copy would go (a user sp: no wrap). */
	w->stack_hi = start.sp + tap_ustack_span(start.sp, TAPROOT_USTACK_MAX);
	tap_uwalk(w, &start, upcs);
	if (!tap_utab_unchanged(current, w->maps)) {
		w->nr = 0;
		w->end = TAPROOT_KUNWIND_STALE;
	}
}

u32 tap_walk_python(const struct tap_uwalk *w, struct taproot_pyframe *out,
		    u32 max, u32 *walked, u32 *cut)
{
	const struct taproot_python_layout *py;
	struct tap_pywalk_res res;
	u32 nr;

	*walked = *cut = 0;
	/* Any walk's mappings hold the layout; without them, look it up. */
	py = w->maps ? w->maps->py : tap_utab_python(current);
	if (!py || !max)
		return 0;
	/* Current's own: the kernel never changes the FS base on entry. */
	nr = tap_pywalk(py, x86_fsbase_read_cpu(), out, max, &res);
	*walked = 1;
	*cut = res.cut;
	return nr;
}

struct pt_regs *tap_current_user_regs(void)
{
	struct task_struct *task = current;

	if ((task->flags & PF_KTHREAD) || !task->mm)
		return NULL;
	return task_pt_regs(task);
}

/*
 * Copy up to @len bytes of current's user stack from @sp into @dst (the
 * vmalloc'd ring), up to the first byte that cannot be read (ucopy.c: no
 * hardened-usercopy lookup of the destination). Returns the bytes copied.
 */
static u32 tap_copy_ustack(u8 *dst, unsigned long sp, u32 len)
{
	return tap_ucopy(dst, sp, len);
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
 * The kernel stack of the caller, innermost first, without the module's
 * own frames, at most @max return addresses. With @irq_only, the walk
 * stops where the interrupt that runs it was entered, so that an
 * interrupt's stack does not continue into the task it interrupted. Sets
 * *@trunc when frames were left out (always when @max is 0).
 *
 * noinline: the walk starts from this function's frame, which must be the
 * module's own so that the skip below has something to skip, whoever
 * calls it.
 */
static noinline u32 tap_kstack_here(u64 *out, u32 max, bool irq_only,
				    bool *trunc)
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

/* The sp the user stack copy of @s starts at; 0 without a user part. */
static unsigned long tap_snap_usp(const struct tap_snap *s)
{
	if (s->uframe)
		return s->uframe->sp;
	return s->uregs ? s->uregs->sp : 0;
}

/*
 * The kernel frames first, then the user pcs, then the user stack gets
 * what room is left: the kernel part is short and says where the task is
 * blocked or what the interrupt hit, the pcs are the part of the user
 * stack already unwound, the copy is long and the unwinder can use a
 * prefix of it. A copy shortened here is truncated on purpose
 * (USTACK_TRUNC), never a fault: USTACK_FAULT is for the copy itself.
 */
u32 tap_snap_plan(struct tap_snap *s, u32 fixed, u32 kstack_depth,
		  u32 ustack_bytes)
{
	u32 max = round_down(tap_ring_max_record(), 8);
	bool user = s->uregs || s->uframe;
	u32 room, span = 0, pcs = s->upc_nr * sizeof(u64);

	s->kdepth = s->kfrom == TAP_KSTACK_NONE ? 0 : kstack_depth;
	s->flags = 0;
	s->kstack_nr = 0;
	s->ustack_len = 0;
	if (user && ustack_bytes) {
		span = tap_ustack_span(tap_snap_usp(s), ustack_bytes);
		if (span < ustack_bytes)
			s->flags |= TAPROOT_SNAP_F_USTACK_TOP;
	}
	s->ubytes = span;
	if (max < fixed || max - fixed < pcs)
		return 0;
	room = max - fixed - pcs;
	if (s->kdepth * sizeof(u64) + s->ubytes > room) {
		s->kdepth = min_t(u32, s->kdepth, room / sizeof(u64));
		s->ubytes = round_down(min_t(u32, s->ubytes,
					     room - s->kdepth * sizeof(u64)), 8);
		if (s->ubytes < span)
			s->flags |= TAPROOT_SNAP_F_USTACK_TRUNC;
	}
	/* A span cut at the stack's top need not be a multiple of 8. */
	return round_up(fixed + s->kdepth * sizeof(u64) + pcs + s->ubytes, 8);
}

/* The kernel frames @s planned, into @kstack; returns how many. */
static u32 tap_snap_kstack(struct tap_snap *s, u64 *kstack)
{
	bool ktrunc = false;
	u32 nr = 0;

	switch (s->kfrom) {
	case TAP_KSTACK_NONE:
		break;
	case TAP_KSTACK_REGS:
		nr = tap_kstack_regs(kstack, s->kdepth, s->kregs, &ktrunc);
		break;
	case TAP_KSTACK_HERE:
	case TAP_KSTACK_HERE_IRQ:
		nr = tap_kstack_here(kstack, s->kdepth,
				     s->kfrom == TAP_KSTACK_HERE_IRQ, &ktrunc);
		break;
	}
	if (ktrunc)
		s->flags |= TAPROOT_SNAP_F_KSTACK_TRUNC;
	return nr;
}

u32 tap_snap_fill(struct tap_snap *s, struct taproot_user_regs *uregs,
		  u64 *kstack)
{
	u32 nr, ulen = 0;
	u8 *ustack;

	nr = tap_snap_kstack(s, kstack);
	if (s->upc_nr)
		memcpy(kstack + nr, s->upcs, s->upc_nr * sizeof(u64));
	ustack = (u8 *)(kstack + nr + s->upc_nr);

	if (s->uregs || s->uframe) {
		s->flags |= TAPROOT_SNAP_F_USER_REGS;
		if (s->uframe)
			*uregs = *s->uframe;
		else
			tap_fill_user_regs(uregs, s->uregs);
		if (s->ubytes) {
			ulen = tap_copy_ustack(ustack, tap_snap_usp(s),
					       s->ubytes);
			/* Short of the plan: the copy could not read on. */
			if (ulen < s->ubytes)
				s->flags |= TAPROOT_SNAP_F_USTACK_FAULT;
		}
	} else {
		memset(uregs, 0, sizeof(*uregs));
	}
	s->kstack_nr = nr;
	s->ustack_len = ulen;
	return (nr + s->upc_nr) * sizeof(u64) + ulen;
}

/*
 * A snapshot has no count of user pcs: with TAPROOT_SNAP_F_UPCS they take
 * the place of the stack bytes, and ustack_len counts them (never both:
 * the caller plans no copy with pcs; no WARN here, under the runqueue
 * lock).
 */
u32 tap_snap_fill_rec(struct tap_snap *s, struct taproot_stack_snap *sn)
{
	u32 len = tap_snap_fill(s, &sn->user_regs, (u64 *)(sn + 1));

	sn->kstack_nr = s->kstack_nr;
	sn->flags = s->flags;
	sn->ustack_len = s->ustack_len;
	if (s->upc_nr) {
		sn->flags |= TAPROOT_SNAP_F_UPCS;
		sn->ustack_len = s->upc_nr * sizeof(u64);
	}
	return sizeof(*sn) + len;
}
