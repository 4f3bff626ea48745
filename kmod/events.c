// SPDX-License-Identifier: GPL-2.0
/*
 * Causal events: probes on the scheduler's tracepoints that write
 * TAPROOT_REC_SWITCH, _WAKING, _FORK, _EXEC and _EXIT records
 * (<linux/taproot.h>, "Causal events").
 *
 * Attaching. The tracepoint objects are not exported; they are found by
 * name with for_each_kernel_tracepoint() at load, and probes are attached
 * with tracepoint_probe_register() at START for the kinds then enabled,
 * and detached at STOP and unload, followed by
 * tracepoint_synchronize_unregister(): after it no probe runs, so nothing
 * the probes use (configuration, rings, the module) may go before. The
 * fork and exit probes are also attached for following children
 * (TAPROOT_CFG_F_FOLLOW, follow.c), whatever records are on: a fork of a
 * filtered process joins the filter before the child first runs (the
 * tracepoint comes before wake_up_new_task()), and leaves it at its exit.
 *
 * Probe prototypes must match the tracepoints' exactly (kCFI kernels trap
 * on a mismatch): the kmod/probes/ build tests say which one this kernel
 * has (HAS_SCHED_SWITCH_PREV_STATE_LAST or _NO_PREV_STATE,
 * HAS_SCHED_PROCESS_EXIT_GROUP_DEAD).
 *
 * Contexts. sched_switch runs in __schedule() and sched_waking in
 * try_to_wake_up(), with interrupts off under the runqueue or pi lock;
 * sched_wakeup_new, fork, exec and exit run in the parent's or the task's
 * own context with preemption off (the tracepoint disables it) and can be
 * interrupted by the sample timer. So, as in the sample handler: no sleep,
 * no lock, no allocation, no printk, no wake_up() (the ring wakes readers
 * through irq_work); the configuration is read with rcu_dereference_sched()
 * and the counters are per CPU. A probe nested in another on one CPU (a
 * sample in a fork probe) is the ring's business (tap_ring_reserve()).
 *
 * User stacks. With TAPROOT_CFG_F_UNWIND, the switch-out's blocked task and
 * the waker are walked as the sample handler walks a sample (utab.h,
 * uwalk.h), into a per-CPU buffer of the events, before the record is
 * reserved: a whole walk is written as the snapshot's pcs
 * (TAPROOT_SNAP_F_UPCS) instead of the stack copy, and every snapshot
 * says how its walk ended (TAPROOT_SNAP_UNWIND_MASK), for the consumer to
 * upload what a fallback lacked. The walks run only with interrupts off
 * and outside an NMI, as the switch and waking probes do, so no walk here
 * nests in another on a CPU, and the RCU-sched read side that the
 * uploaded tables need is there.
 *
 * Off-CPU intervals. The interval a task starts when it leaves the CPU
 * (blocked, or preempted and still runnable) is named (tid, seq), seq =
 * nvcsw + nivcsw right after the switch-out: __schedule() bumps the count
 * before it calls trace_sched_switch() (checked in 5.10, 6.1, 6.12 and 7.2),
 * and no other switch of the task happens before it runs again, so the
 * switch-out (prev's count), the waking (the target's count) and the
 * switch-in (next's count) read the same number. tap_selected() decides from
 * (tid, seq) alone, so every CPU agrees without shared state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/hardirq.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "config.h"
#include "events.h"
#include "follow.h"
#include "ring.h"
#include "stack.h"
#include "taproot.h"
#include "uwalk.h"

#if !defined(HAS_SCHED_SWITCH_PREV_STATE_LAST) && \
	!defined(HAS_SCHED_SWITCH_NO_PREV_STATE)
#error "sched_switch probe prototype of this kernel is not supported (5.18's)"
#endif

static DEFINE_PER_CPU(struct tap_events_stats, tap_events_stats);

/*
 * The user pcs of the event being captured on a CPU, before they are
 * written to the ring. Not the sample handler's: the walks here run with
 * interrupts off (tap_event_walk()), so the sample timer cannot come in
 * between, and no probe that walks nests in another on one CPU. Allocated
 * at the first START (too large for the static per-CPU area of a module),
 * freed at unload; NULL: the events do not walk.
 */
struct tap_event_pcs {
	u64 upcs[TAPROOT_UNWIND_FRAMES_MAX];
};

static struct tap_event_pcs __percpu *tap_event_pcs;

/* ------------------------------------------------------------ helpers */

/* The count that names a task's current (or next) off-CPU interval. */
static inline u64 tap_task_seq(const struct task_struct *t)
{
	return (u64)READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

/*
 * Whether interval (@tid, @seq) is selected: Fibonacci hashing of both,
 * compared with U64_MAX / sched_one_in (tap_config_set_one_in()). One
 * multiply, since every context switch asks twice. For one thread, seq
 * counts up by one from interval to interval, and seq * 2^64/phi is a Weyl
 * sequence: the fraction selected of any run of a thread's intervals is
 * within a few intervals of 1/N, and of any subsequence in step (every
 * other interval, every third...) too, so a thread whose waits alternate
 * short and long is not sampled on one kind. The decision depends on the
 * interval's name alone, never on its length: totals scaled by N are
 * unbiased. @tid sits above the 32 bits seq takes in practice and moves
 * each thread's sequence by tid * 0x7f4a7c15 / 2^32 of a turn, so that
 * neighbouring threads (a ping-pong's pair) are not selected together.
 */
static inline bool tap_selected(const struct tap_config *cfg, pid_t tid,
				u64 seq)
{
	u64 x = (seq ^ ((u64)(u32)tid << 32)) * 0x9e3779b97f4a7c15ULL;

	return x <= cfg->sched_select_max;
}

/*
 * The TGID filter, and never the consumer's own process (@consumer, 0:
 * none; no process has TGID 0, the idle tasks are left out before).
 * @filtered: whether @cfg has a filter, a constant in the probes' fast
 * paths (tap_switch(), tap_waking()).
 */
static __always_inline bool tap_task_passes(const struct tap_config *cfg,
					    const struct task_struct *t,
					    pid_t consumer, bool filtered)
{
	return t->tgid != consumer &&
	       (!filtered || tap_config_tgid_filtered(cfg, t->tgid));
}

/*
 * Walk current's user stack from @uregs into this CPU's event pcs, as the
 * sample handler does (sample.c), when the configuration asks for it;
 * returns the pcs, or NULL with w->end TAPROOT_KUNWIND_NONE when there was
 * no walk. Only with interrupts off (the switch and waking probes, outside
 * an NMI): nothing else on this CPU then uses the buffer, and the caller
 * is an RCU-sched reader for tap_walk_user(). Under the runqueue lock on
 * the switch path: the walk is bounded by cfg->unwind_frames, each frame
 * by two small reads that never fault pages in.
 */
static u64 *tap_event_walk(const struct tap_config *cfg,
			   struct pt_regs *uregs, struct tap_uwalk *w)
{
	struct tap_event_pcs __percpu *buf = READ_ONCE(tap_event_pcs);
	u64 *upcs;

	w->nr = 0;
	w->end = TAPROOT_KUNWIND_NONE;
	if (!(cfg->flags & TAPROOT_CFG_F_UNWIND) || !buf ||
	    !irqs_disabled() || in_nmi())
		return NULL;
	upcs = this_cpu_ptr(buf)->upcs;
	tap_walk_user(w, uregs, cfg->unwind_frames, upcs);
	return upcs;
}

/*
 * Plan the snapshot of current after a record's fixed part of @fixed
 * bytes; @irq: the interrupt being served is the one to capture (its
 * kernel stack alone). Returns the size to reserve for the record with
 * its snapshot, or 0 when no snapshot fits (the record goes without).
 * @leaf is the caller's, for the snapshot to point to until it is filled.
 *
 * A user part is walked first (tap_event_walk()): a whole walk gives the
 * pcs in place of the stack copy (TAPROOT_SNAP_F_UPCS, and USTACK_TRUNC
 * at the frame cap), with the leaf's ip, sp and bp alone. One that is not
 * whole gives the copy from the leaf, or with USTACK_PRIVATE the pcs it
 * found, at least the leaf's ip, flagged USTACK_FAULT. Every snapshot with
 * a user part says how its walk ended (TAPROOT_SNAP_UNWIND_MASK: w.end,
 * TAPROOT_KUNWIND_NONE when there was none), whichever of those it is;
 * one without says NONE. *@uflags gets the flags for
 * tap_event_snap_fill() to add.
 */
static u32 tap_event_snap_plan(struct tap_snap *snap,
			       const struct tap_config *cfg, u32 fixed, bool irq,
			       struct taproot_user_regs *leaf, u16 *uflags)
{
	struct pt_regs *uregs = irq ? NULL : tap_current_user_regs();
	u32 ubytes = cfg->ustack_bytes;
	struct tap_uwalk w;
	u64 *upcs;
	bool whole;

	BUILD_BUG_ON(TAPROOT_KUNWIND_NR - 1 >
		     TAPROOT_SNAP_UNWIND_MASK >> TAPROOT_SNAP_UNWIND_SHIFT);
	*snap = (struct tap_snap){
		.kfrom = irq ? TAP_KSTACK_HERE_IRQ : TAP_KSTACK_HERE,
		.uregs = uregs,
	};
	*uflags = 0;
	if (!uregs)
		goto plan;
	upcs = tap_event_walk(cfg, uregs, &w);
	*uflags = (u16)w.end << TAPROOT_SNAP_UNWIND_SHIFT;
	whole = w.end == TAPROOT_KUNWIND_COMPLETE ||
		w.end == TAPROOT_KUNWIND_MAX_FRAMES;
	if (!whole && !(cfg->flags & TAPROOT_CFG_F_USTACK_PRIVATE))
		goto plan;	/* the copy from the leaf */

	*leaf = (struct taproot_user_regs){
		.ip = uregs->ip, .sp = uregs->sp, .bp = uregs->bp,
	};
	snap->uregs = NULL;
	snap->uframe = leaf;
	if (w.nr) {
		snap->upcs = upcs;
		snap->upc_nr = w.nr;
	} else {
		/* No walk, or none kept: the leaf is known all the same. */
		snap->upcs = &leaf->ip;
		snap->upc_nr = 1;
	}
	if (w.end == TAPROOT_KUNWIND_MAX_FRAMES)
		*uflags |= TAPROOT_SNAP_F_USTACK_TRUNC;
	else if (!whole)
		*uflags |= TAPROOT_SNAP_F_USTACK_FAULT;
	ubytes = 0;
plan:
	return tap_snap_plan(snap, fixed + sizeof(struct taproot_stack_snap),
			     cfg->kstack_depth, ubytes);
}

/* Capture the snapshot planned into @sn; returns its size. */
static u32 tap_event_snap_fill(struct tap_snap *snap,
			       struct taproot_stack_snap *sn, u16 uflags)
{
	u32 len = tap_snap_fill_rec(snap, sn);

	sn->flags |= uflags;
	return len;
}

/* ------------------------------------------------------------ switch */

/*
 * Whether prev starts an off-CPU interval (blocked, or preempted and still
 * runnable): it does unless it is the idle task, it is dead (its last
 * switch) or the filter leaves it out.
 */
static __always_inline bool tap_prev_starts(const struct tap_config *cfg,
					    const struct task_struct *prev,
					    unsigned int state, pid_t consumer,
					    bool filtered)
{
	return !is_idle_task(prev) && !(state & TASK_DEAD) &&
	       tap_task_passes(cfg, prev, consumer, filtered);
}

/*
 * Whether prev, leaving with @state, was preempted and is still runnable.
 * It was when the tracepoint says so, and also when it left in
 * TASK_RUNNING: a task preempted on its way back to user mode goes through
 * schedule(), not preempt_schedule(), and so does one that yields.
 *
 * On PREEMPT_RT a wait for a sleeping spinlock is passed as a preemption,
 * and it is a block. Since 5.15 (and so 6.1-rt) the state says so:
 * SM_RTLOCK_WAIT is in SM_MASK_PREEMPT, and the task waits in
 * TASK_RTLOCK_WAIT. Before (5.10-rt), preempt_schedule_lock() calls
 * __schedule(true, true), which dequeues prev in its plain state where a
 * true preemption never does: prev is then off the runqueue.
 */
static inline bool tap_prev_preempted(bool preempt,
				      const struct task_struct *prev,
				      unsigned int state)
{
#if defined(TASK_RTLOCK_WAIT)
	if (preempt && (state & TASK_RTLOCK_WAIT))
		return false;
#elif defined(CONFIG_PREEMPT_RT)
	if (preempt && !READ_ONCE(prev->on_rq))
		return false;
#endif
	return preempt || !state;
}

/*
 * Write the SWITCH record of a switch that starts a selected interval of
 * prev (TAPROOT_SWITCH_F_PREV in @flags) and/or ends one of next (_NEXT).
 * Out of line, as tap_record_waking(): most switches select nothing, and
 * their path through the probe stays a few dozen instructions, with no
 * frame of this size to set up.
 */
static noinline void tap_record_switch(const struct tap_config *cfg,
				       bool preempt, struct task_struct *prev,
				       struct task_struct *next,
				       unsigned int prev_state, u16 flags)
{
	struct taproot_rec_header *hdr;
	struct taproot_rec_switch *rec;
	struct taproot_user_regs leaf;
	struct tap_snap snap;
	u32 size = sizeof(*rec), used;
	u16 uflags = 0;

	if (tap_prev_starts(cfg, prev, prev_state, tap_dev_consumer_tgid(),
			    cfg->nr_tgids))
		preempt = tap_prev_preempted(preempt, prev, prev_state);
	if (preempt)
		flags |= TAPROOT_SWITCH_F_PREEMPT;
	if (flags & TAPROOT_SWITCH_F_PREV) {
		this_cpu_inc(tap_events_stats.switches_selected);
		/* prev is current: its stacks are the ones in use. */
		used = tap_event_snap_plan(&snap, cfg, sizeof(*rec), false,
					   &leaf, &uflags);
		if (used) {
			flags |= TAPROOT_SWITCH_F_STACKS;
			size = used;
		}
	}

	hdr = tap_ring_reserve(size, TAPROOT_REC_SWITCH);
	if (!hdr)
		return;		/* counted and announced by the ring */
	rec = container_of(hdr, struct taproot_rec_switch, hdr);
	hdr->flags = flags;
	rec->cpu = smp_processor_id();
	rec->prev_state = prev_state;
	rec->prev_pid = prev->tgid;
	rec->prev_tid = prev->pid;
	rec->next_pid = next->tgid;
	rec->next_tid = next->pid;
	rec->sched_one_in = cfg->sched_one_in;
	rec->reserved = 0;
	rec->prev_seq = tap_task_seq(prev);
	rec->next_seq = tap_task_seq(next);
	tap_copy_comm(rec->prev_comm, prev);
	used = sizeof(*rec);
	if (flags & TAPROOT_SWITCH_F_STACKS) {
		used += tap_event_snap_fill(&snap,
					    (struct taproot_stack_snap *)(rec + 1),
					    uflags);
		/* The interval starts after our capture, walk included. */
		hdr->time_ns = ktime_get_mono_fast_ns();
	}
	tap_ring_commit_pad(hdr, used);
}

/*
 * Whether this switch starts or ends a selected interval, and its record
 * if it does. @filtered says whether @cfg has a TGID filter: a constant,
 * so that the common case's path (tap_probe_switch()) calls nothing but
 * tap_record_switch(), in tail position, and saves no register.
 */
static __always_inline void tap_switch(const struct tap_config *cfg,
				       bool preempt, struct task_struct *prev,
				       struct task_struct *next,
				       unsigned int prev_state, bool filtered)
{
	pid_t consumer = tap_dev_consumer_tgid();
	u16 flags = 0;

	if (tap_prev_starts(cfg, prev, prev_state, consumer, filtered)) {
		this_cpu_inc(tap_events_stats.switches);
		if (tap_selected(cfg, prev->pid, tap_task_seq(prev)))
			flags |= TAPROOT_SWITCH_F_PREV;
	}
	if (!is_idle_task(next) &&
	    tap_task_passes(cfg, next, consumer, filtered) &&
	    tap_selected(cfg, next->pid, tap_task_seq(next)))
		flags |= TAPROOT_SWITCH_F_NEXT;
	if (likely(!flags))
		return;
	tap_record_switch(cfg, preempt, prev, next, prev_state, flags);
}

static noinline void tap_switch_filtered(const struct tap_config *cfg,
					 bool preempt, struct task_struct *prev,
					 struct task_struct *next,
					 unsigned int prev_state)
{
	tap_switch(cfg, preempt, prev, next, prev_state, true);
}

/*
 * Every context switch of the system comes here: decide, in as few
 * instructions as possible, whether it starts or ends a selected interval
 * (BENCHMARKS.md, "Causal events", has what this path costs). prev is
 * current.
 */
static __always_inline void tap_switch_any(bool preempt,
					   struct task_struct *prev,
					   struct task_struct *next,
					   unsigned int prev_state)
{
	const struct tap_config *cfg = tap_config_sched();

	if (unlikely(!cfg) || !(cfg->events & TAPROOT_EV_SWITCH))
		return;
	if (unlikely(cfg->nr_tgids))
		tap_switch_filtered(cfg, preempt, prev, next, prev_state);
	else
		tap_switch(cfg, preempt, prev, next, prev_state, false);
}

#ifdef HAS_SCHED_SWITCH_PREV_STATE_LAST
static void tap_probe_switch(void *data, bool preempt, struct task_struct *prev,
			     struct task_struct *next, unsigned int prev_state)
{
	tap_switch_any(preempt, prev, next, prev_state);
}
#else
/*
 * Before 5.18 the tracepoint does not pass prev's state: it is read here,
 * where __schedule() has left it (a pending signal has already put it
 * back to TASK_RUNNING, where later kernels pass the state prev asked for).
 */
static void tap_probe_switch(void *data, bool preempt, struct task_struct *prev,
			     struct task_struct *next)
{
#ifdef HAS_TASK_STRUCT___STATE
	unsigned int prev_state = READ_ONCE(prev->__state);
#else
	unsigned int prev_state = READ_ONCE(prev->state);
#endif

	tap_switch_any(preempt, prev, next, prev_state);
}
#endif

/* ------------------------------------------------------------ waking */

/*
 * Write the WAKING record of a selected interval of @p, @seq, woken by
 * current or by the interrupt it is serving. Out of line, as
 * tap_record_switch().
 */
static noinline void tap_record_waking(const struct tap_config *cfg,
				       struct task_struct *p, u64 seq,
				       u16 flags)
{
	struct task_struct *waker = current;
	struct taproot_rec_header *hdr;
	struct taproot_rec_waking *rec;
	struct taproot_user_regs leaf;
	struct tap_snap snap;
	u32 size, used;
	u16 uflags;
	u64 t0;
	bool irq;

	if (in_nmi())
		flags |= TAPROOT_WAKING_F_NMI;
	else if (hardirq_count())	/* in_hardirq() since 5.11 */
		flags |= TAPROOT_WAKING_F_HARDIRQ;
	else if (in_serving_softirq())
		flags |= TAPROOT_WAKING_F_SOFTIRQ;

	irq = flags & (TAPROOT_WAKING_F_NMI | TAPROOT_WAKING_F_HARDIRQ |
		       TAPROOT_WAKING_F_SOFTIRQ);

	size = sizeof(*rec);
	/* The capture starts with the walk, before the reservation. */
	t0 = ktime_get_mono_fast_ns();
	used = tap_event_snap_plan(&snap, cfg, sizeof(*rec), irq, &leaf,
				   &uflags);
	if (used) {
		flags |= TAPROOT_WAKING_F_STACKS;
		size = used;
	}

	hdr = tap_ring_reserve(size, TAPROOT_REC_WAKING);
	if (!hdr)
		return;
	rec = container_of(hdr, struct taproot_rec_waking, hdr);
	hdr->flags = flags;
	rec->cpu = smp_processor_id();
	rec->target_pid = p->tgid;
	rec->target_tid = p->pid;
	rec->capture_ns = 0;
	rec->target_seq = seq;
	if (irq) {
		/* The interrupt woke it, not the task it interrupted. */
		rec->waker_pid = 0;
		rec->waker_tid = 0;
		memset(rec->waker_comm, 0, sizeof(rec->waker_comm));
	} else {
		rec->waker_pid = waker->tgid;
		rec->waker_tid = waker->pid;
		tap_copy_comm(rec->waker_comm, waker);
	}
	used = sizeof(*rec);
	if (flags & TAPROOT_WAKING_F_STACKS) {
		used += tap_event_snap_fill(&snap,
					    (struct taproot_stack_snap *)(rec + 1),
					    uflags);
		/*
		 * The wakeup waits for us: say how long, from the start of
		 * the capture, which the record's time becomes (see the uapi).
		 */
		hdr->time_ns = t0;
		rec->capture_ns = (u32)min_t(u64, ktime_get_mono_fast_ns() - t0,
					     U32_MAX);
	}
	tap_ring_commit_pad(hdr, used);
	this_cpu_inc(tap_events_stats.wakings);
}

/*
 * Whether @p's interval ending with this wakeup is selected, and its
 * record if it is; @new: a new task's first wakeup; @filtered: as in
 * tap_switch().
 */
static __always_inline void tap_waking(const struct tap_config *cfg,
				       struct task_struct *p, bool new,
				       bool filtered)
{
	u64 seq;

	/*
	 * A task woken before it left the CPU (it set its sleep state, then
	 * the condition came true) starts no interval: its switch-out sees
	 * it running again. Waking itself is the one case seen here.
	 */
	if (p == current && !new)
		return;
	if (!tap_task_passes(cfg, p, tap_dev_consumer_tgid(), filtered))
		return;
	/* A new task has not run: the interval before its first run is 0. */
	seq = new ? 0 : tap_task_seq(p);
	if (likely(!tap_selected(cfg, p->pid, seq)))
		return;
	tap_record_waking(cfg, p, seq, new ? TAPROOT_WAKING_F_NEW : 0);
}

static noinline void tap_waking_filtered(const struct tap_config *cfg,
					 struct task_struct *p, bool new)
{
	tap_waking(cfg, p, new, true);
}

/* Every wakeup comes here: as tap_probe_switch(), decide fast. */
static __always_inline void tap_probe_wake(struct task_struct *p, bool new)
{
	const struct tap_config *cfg = tap_config_sched();

	if (unlikely(!cfg) || !(cfg->events & TAPROOT_EV_WAKING))
		return;
	if (unlikely(cfg->nr_tgids))
		tap_waking_filtered(cfg, p, new);
	else
		tap_waking(cfg, p, new, false);
}

static void tap_probe_waking(void *data, struct task_struct *p)
{
	tap_probe_wake(p, false);
}

static void tap_probe_wakeup_new(void *data, struct task_struct *p)
{
	tap_probe_wake(p, true);
}

/* ------------------------------------------------------------ processes */

/* Whether @cfg has records of @kind on, and @t passes its filters. */
static bool tap_proc_wanted(const struct tap_config *cfg, u32 kind,
			    const struct task_struct *t)
{
	return (cfg->events & kind) &&
	       tap_task_passes(cfg, t, tap_dev_consumer_tgid(), cfg->nr_tgids);
}

static inline bool tap_follows(const struct tap_config *cfg)
{
	return unlikely(cfg->flags & TAPROOT_CFG_F_FOLLOW) && cfg->nr_tgids;
}

static void tap_probe_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	const struct tap_config *cfg = tap_config_sched();
	struct taproot_rec_header *hdr;
	struct taproot_rec_fork *rec;

	if (unlikely(!cfg))
		return;
	/* Before the child can run anywhere: its first sample passes. */
	/* A thread belongs to its process, which passes or not already. */
	if (tap_follows(cfg) && child->pid == child->tgid &&
	    tap_config_tgid_filtered(cfg, parent->tgid) &&
	    !tap_config_tgid_in(cfg, child->tgid))
		tap_follow_fork(cfg->follow_gen, child->tgid);
	if (!tap_proc_wanted(cfg, TAPROOT_EV_FORK, parent))
		return;
	hdr = tap_ring_reserve(sizeof(*rec), TAPROOT_REC_FORK);
	if (!hdr)
		return;
	rec = container_of(hdr, struct taproot_rec_fork, hdr);
	/* A thread is not its group's leader (CLONE_THREAD). */
	if (child->pid != child->tgid)
		hdr->flags = TAPROOT_FORK_F_THREAD;
	rec->cpu = smp_processor_id();
	rec->parent_pid = parent->tgid;
	rec->parent_tid = parent->pid;
	rec->child_pid = child->tgid;
	rec->child_tid = child->pid;
	rec->reserved = 0;
	tap_copy_comm(rec->comm, parent);
	tap_ring_commit(hdr, sizeof(*rec));
}

static void tap_probe_exec(void *data, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	struct taproot_rec_header *hdr;
	const struct tap_config *cfg = tap_config_sched();
	struct taproot_rec_exec *rec;
	ssize_t len;

	if (unlikely(!cfg) || !tap_proc_wanted(cfg, TAPROOT_EV_EXEC, p))
		return;
	hdr = tap_ring_reserve(sizeof(*rec) + TAPROOT_EXEC_FILENAME_MAX,
			       TAPROOT_REC_EXEC);
	if (!hdr)
		return;
	rec = container_of(hdr, struct taproot_rec_exec, hdr);
	len = strscpy((char *)(rec + 1), bprm->filename,
		      TAPROOT_EXEC_FILENAME_MAX);
	if (len < 0) {
		hdr->flags = TAPROOT_EXEC_F_FILENAME_TRUNC;
		len = TAPROOT_EXEC_FILENAME_MAX - 1;
	}
	rec->cpu = smp_processor_id();
	rec->pid = p->tgid;
	rec->tid = p->pid;
	rec->old_tid = old_pid;
	rec->filename_len = len + 1;
	rec->reserved = 0;
	tap_copy_comm(rec->comm, p);
	tap_ring_commit_pad(hdr, sizeof(*rec) + len + 1);
}

static void tap_exit_record(const struct tap_config *cfg,
			    struct task_struct *p, bool group_dead)
{
	struct taproot_rec_header *hdr;
	struct taproot_rec_exit *rec;

	if (!tap_proc_wanted(cfg, TAPROOT_EV_EXIT, p))
		return;
	hdr = tap_ring_reserve(sizeof(*rec), TAPROOT_REC_EXIT);
	if (!hdr)
		return;
	rec = container_of(hdr, struct taproot_rec_exit, hdr);
	if (group_dead)
		hdr->flags = TAPROOT_EXIT_F_GROUP_DEAD;
	rec->cpu = smp_processor_id();
	rec->pid = p->tgid;
	rec->tid = p->pid;
	rec->reserved = 0;
	tap_copy_comm(rec->comm, p);
	tap_ring_commit(hdr, sizeof(*rec));
}

static void tap_exit(struct task_struct *p, bool group_dead)
{
	const struct tap_config *cfg = tap_config_sched();

	if (unlikely(!cfg))
		return;
	/* The last thread's EXIT passes the filter; then the process leaves. */
	tap_exit_record(cfg, p, group_dead);
	if (group_dead && tap_follows(cfg))
		tap_follow_exit(cfg, p->tgid);
}

#ifdef HAS_SCHED_PROCESS_EXIT_GROUP_DEAD
static void tap_probe_exit(void *data, struct task_struct *p, bool group_dead)
{
	tap_exit(p, group_dead);
}
#else
/*
 * do_exit() has taken the task out of signal->live before the
 * tracepoint: the last thread sees 0. Two threads that exit at once may
 * both see 0; the tracepoint's own argument (6.16) is exact.
 */
static void tap_probe_exit(void *data, struct task_struct *p)
{
	tap_exit(p, !atomic_read(&p->signal->live));
}
#endif

/* ------------------------------------------------------------ attaching */

struct tap_tp {
	const char *name;
	void *probe;
	u32 kinds;		/* the TAPROOT_EV_*, TAP_EV_FOLLOW that need it */
	struct tracepoint *tp;	/* NULL: not in this kernel */
};

static struct tap_tp tap_tps[] = {
	{ "sched_switch", tap_probe_switch, TAPROOT_EV_SWITCH },
	{ "sched_waking", tap_probe_waking, TAPROOT_EV_WAKING },
	{ "sched_wakeup_new", tap_probe_wakeup_new, TAPROOT_EV_WAKING },
	{ "sched_process_fork", tap_probe_fork, TAPROOT_EV_FORK | TAP_EV_FOLLOW },
	{ "sched_process_exec", tap_probe_exec, TAPROOT_EV_EXEC },
	{ "sched_process_exit", tap_probe_exit, TAPROOT_EV_EXIT | TAP_EV_FOLLOW },
};

/* Kinds (and TAP_EV_FOLLOW) whose probes are attached; under tap_ctl_lock. */
static u32 tap_events_on;
static bool tap_events_closed;

static void tap_find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tap_tps); i++)
		if (!strcmp(tp->name, tap_tps[i].name))
			tap_tps[i].tp = tp;
}

/* The kinds all of whose tracepoints were found. */
static u32 tap_events_provided(void)
{
	u32 kinds = TAP_EV_CAUSAL | TAP_EV_FOLLOW;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tap_tps); i++)
		if (!tap_tps[i].tp)
			kinds &= ~tap_tps[i].kinds;
	return kinds;
}

/* The kinds all of whose probes are attached once those @want needs are. */
static u32 tap_events_covered(u32 want)
{
	u32 kinds = TAP_EV_CAUSAL | TAP_EV_FOLLOW;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tap_tps); i++)
		if (!(tap_tps[i].kinds & want))
			kinds &= ~tap_tps[i].kinds;
	return kinds;
}

void __init tap_events_init(void)
{
	unsigned int i;

	for_each_kernel_tracepoint(tap_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(tap_tps); i++)
		if (!tap_tps[i].tp)
			pr_warn("tracepoint %s not found: its events are off\n",
				tap_tps[i].name);
}

u64 tap_events_features(void)
{
	u32 kinds = tap_events_provided();
	u64 features = 0;

	if ((kinds & (TAPROOT_EV_SWITCH | TAPROOT_EV_WAKING)) ==
	    (TAPROOT_EV_SWITCH | TAPROOT_EV_WAKING))
		features |= TAPROOT_FEAT_SCHED_EVENTS;
	if ((kinds & (TAPROOT_EV_FORK | TAPROOT_EV_EXEC | TAPROOT_EV_EXIT)) ==
	    (TAPROOT_EV_FORK | TAPROOT_EV_EXEC | TAPROOT_EV_EXIT))
		features |= TAPROOT_FEAT_PROC_EVENTS;
	if (kinds & TAP_EV_FOLLOW)
		features |= TAPROOT_FEAT_FOLLOW;
	return features;
}

u32 tap_events_attached(void)
{
	lockdep_assert_held(&tap_ctl_lock);
	return tap_events_on;
}

/* Detach the probes of @kinds and wait until none of them runs. */
static void tap_events_detach(u32 kinds)
{
	unsigned int i;

	if (!kinds)
		return;
	for (i = 0; i < ARRAY_SIZE(tap_tps); i++)
		if (tap_tps[i].kinds & kinds)
			WARN_ON_ONCE(tracepoint_probe_unregister(tap_tps[i].tp,
								 tap_tps[i].probe,
								 NULL));
	tracepoint_synchronize_unregister();
}

int tap_events_start(u32 events, u32 flags)
{
	u32 want = events & TAP_EV_CAUSAL, done = 0;
	unsigned int i;
	int err;

	lockdep_assert_held(&tap_ctl_lock);
	if (tap_events_closed)
		return -ESHUTDOWN;
	if (WARN_ON_ONCE(tap_events_on))
		return -EALREADY;
	if (flags & TAPROOT_CFG_F_FOLLOW)
		want |= TAP_EV_FOLLOW;
	if (want & ~tap_events_provided())
		return -EOPNOTSUPP;
	/*
	 * Kept until unload. Without it the events do not walk: their user
	 * stacks are copied as without unwinding, which is no reason to fail.
	 */
	if (!tap_event_pcs)
		WRITE_ONCE(tap_event_pcs, alloc_percpu(struct tap_event_pcs));

	for (i = 0; i < ARRAY_SIZE(tap_tps); i++) {
		if (!(tap_tps[i].kinds & want))
			continue;
		err = tracepoint_probe_register(tap_tps[i].tp, tap_tps[i].probe,
						NULL);
		if (err) {
			pr_err("cannot attach to tracepoint %s: %d\n",
			       tap_tps[i].name, err);
			goto err_detach;
		}
		done |= tap_tps[i].kinds;	/* something to wait for */
	}
	tap_events_on = tap_events_covered(want);
	return 0;

err_detach:
	/* Only the probes before i were attached. */
	while (i--)
		if (tap_tps[i].kinds & want)
			WARN_ON_ONCE(tracepoint_probe_unregister(tap_tps[i].tp,
								 tap_tps[i].probe,
								 NULL));
	if (done)
		tracepoint_synchronize_unregister();
	tap_follow_clear();	/* a fork may have come through meanwhile */
	return err;
}

void tap_events_stop(void)
{
	lockdep_assert_held(&tap_ctl_lock);
	tap_events_detach(tap_events_on);
	tap_events_on = 0;
	/* No exit is seen from now on: a process followed would stay. */
	tap_follow_clear();
}

void tap_events_get_stats(unsigned int cpu, struct tap_events_stats *st)
{
	const struct tap_events_stats *s = per_cpu_ptr(&tap_events_stats, cpu);

	/* Single aligned 64-bit loads: never torn on x86-64. */
	st->switches = READ_ONCE(s->switches);
	st->switches_selected = READ_ONCE(s->switches_selected);
	st->wakings = READ_ONCE(s->wakings);
}

void tap_events_exit(void)
{
	mutex_lock(&tap_ctl_lock);
	tap_events_closed = true;
	tap_events_stop();
	mutex_unlock(&tap_ctl_lock);
	/* No probe runs any more (tap_events_stop() waited for them). */
	free_percpu(tap_event_pcs);
	tap_event_pcs = NULL;
}
