/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks of the current task, as samples (sample.c) and causal events
 * (events.c) record them: user registers, a copy of the user stack, and
 * the kernel stack, either from interrupted registers or from where a
 * tracepoint probe runs. Both take their snapshot through struct tap_snap,
 * so that a stack is planned, captured and flagged one way.
 *
 * Every helper runs in any context (task with preemption off, softirq,
 * hardirq, under the runqueue lock): none sleeps, locks, allocates or
 * prints, and user memory is read only with tap_ucopy() (ucopy.h).
 */
#ifndef _TAPROOT_STACK_H
#define _TAPROOT_STACK_H

#include <linux/types.h>
#include <linux/taproot.h>

struct pt_regs;

/* Where a snapshot's kernel stack comes from. */
enum tap_kstack_from {
	TAP_KSTACK_NONE,	/* none: a sample of user mode */
	TAP_KSTACK_REGS,	/* interrupted kernel-mode registers (a sample) */
	TAP_KSTACK_HERE,	/* the caller's frames (a tracepoint probe) */
	TAP_KSTACK_HERE_IRQ,	/* the same, up to the interrupt's entry */
};

/*
 * A stack snapshot of current, in two steps so that its record is sized
 * once, before the reservation: tap_snap_plan() decides how many kernel
 * frames and user stack bytes the record has room for, tap_snap_fill()
 * captures them into the reserved record. flags are TAPROOT_SNAP_F_*,
 * with the meanings <linux/taproot.h> gives them ("Stacks"); a sample
 * carries them as the TAPROOT_SAMPLE_F_* of the same names.
 */
struct tap_snap {
	/* The sources, set by the caller before tap_snap_plan(). */
	enum tap_kstack_from kfrom;
	struct pt_regs *kregs;	/* TAP_KSTACK_REGS: the interrupted registers */
	struct pt_regs *uregs;	/* the user registers; NULL: no user part */
	/*
	 * Instead of uregs: the registers of a user frame the walker reached
	 * (uwalk.h), from whose sp the user stack is copied.
	 */
	const struct taproot_user_regs *uframe;
	/* User pcs the walker found, written after the kernel frames. */
	const u64 *upcs;
	u32 upc_nr;

	/* The plan. */
	u32 kdepth;		/* room for kernel frames */
	u32 ubytes;		/* user stack bytes to copy */

	/* USTACK_TOP and _TRUNC from the plan, the others from the capture. */
	u16 flags;

	/* What tap_snap_fill() captured. */
	u16 kstack_nr;
	u32 ustack_len;
};

/*
 * Plan @s for a record whose other parts take @fixed bytes, a multiple of
 * 8 (its fixed part, everything before the kernel frames, and what it
 * carries after the stack bytes from the next multiple of 8): at most
 * @kstack_depth frames, s->upc_nr user pcs and @ustack_bytes of user
 * stack, in that order of priority, within the largest record a ring
 * takes. Returns the size to reserve (a multiple of 8), or 0 when not
 * even the other parts and the user pcs fit.
 */
u32 tap_snap_plan(struct tap_snap *s, u32 fixed, u32 kstack_depth,
		  u32 ustack_bytes);

/*
 * Capture the snapshot planned in @s: the user registers into @uregs
 * (zeroed without a user part), the kernel frames at @kstack, the user
 * pcs right after them, then the user stack bytes. Sets s->kstack_nr,
 * s->ustack_len and the capture's flags; returns the bytes written at
 * @kstack.
 */
u32 tap_snap_fill(struct tap_snap *s, struct taproot_user_regs *uregs,
		  u64 *kstack);

/*
 * The same into a causal event's taproot_stack_snap; returns its size.
 * With user pcs (s->upc_nr, planned without stack bytes), they are the
 * snapshot's ustack: TAPROOT_SNAP_F_UPCS, ustack_len their bytes.
 */
u32 tap_snap_fill_rec(struct tap_snap *s, struct taproot_stack_snap *sn);

/*
 * The user registers current saved when it entered the kernel, or NULL
 * for a kernel thread and for a task whose mm is gone (exiting).
 */
struct pt_regs *tap_current_user_regs(void);

struct tap_uwalk;

/*
 * The walker's per-CPU rule caches (uwalk.h), made at load before any
 * sample or probe can walk, freed at unload after the last has run.
 */
int tap_stack_init(void);
void tap_stack_exit(void);

/*
 * Walk current's user stack from @uregs into @upcs (at most @max_frames
 * pcs) by the mappings uploaded for its process (utab.h, uwalk.h). Sets
 * every result of @w: without mappings, w->nr 0 and w->end the lookup's
 * TAPROOT_KUNWIND_NO_PROC or _STALE; when a change of the mappings began
 * during the walk, none of its pcs is kept (they may mix two of them):
 * w->nr 0, _STALE. The caller is an RCU-sched reader (preemption or
 * interrupts off) and owns @upcs on this CPU. With interrupts off (the
 * sample handler, the switch and waking probes) the walk uses this CPU's
 * rule cache: nothing else on the CPU can run a walk meanwhile.
 */
void tap_walk_user(struct tap_uwalk *w, struct pt_regs *uregs, u32 max_frames,
		   u64 *upcs);

/*
 * After a walk @w of current's user stack by tap_walk_user(), in the same
 * RCU-sched read side: the Python frames of current's thread into @out
 * (at most @max), when its process has a CPython layout (pywalk.h), also
 * when @w found no mappings to walk by or found them stale
 * (tap_utab_python()).
 * Returns the frames written; *@walked and *@cut (0 or 1) say whether it
 * walked, and whether the walk was cut short (struct tap_pywalk_res).
 */
u32 tap_walk_python(const struct tap_uwalk *w, struct taproot_pyframe *out,
		    u32 max, u32 *walked, u32 *cut);

/* Copy @r into the ABI's register set. */
void tap_fill_user_regs(struct taproot_user_regs *u, const struct pt_regs *r);

/*
 * The kernel stack of interrupted kernel-mode @regs: regs->ip, then the
 * return addresses the unwinder finds, at most @max in all. Sets *@trunc
 * when frames were left out (always when @max is 0).
 */
u32 tap_kstack_regs(u64 *out, u32 max, struct pt_regs *regs, bool *trunc);

#endif /* _TAPROOT_STACK_H */
