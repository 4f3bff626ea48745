// SPDX-License-Identifier: GPL-2.0
/*
 * Timer sampling: TAPROOT_REC_SAMPLE, _STACK and _SAMPLE_REF records
 * (<linux/taproot.h>).
 *
 * The timer. While started, every online CPU has one pinned kernel perf
 * event, PERF_TYPE_SOFTWARE / PERF_COUNT_SW_CPU_CLOCK: an hrtimer of perf's
 * that needs no PMU (there is none under QEMU TCG), with a period of
 * 1e9 / freq_hz ns. The events are created and released by CPU hotplug
 * callbacks (a dynamic CPUHP_AP_ONLINE_DYN state set up at start, removed
 * at stop): perf detaches a CPU's kernel events when it goes offline and
 * never brings them back, so a CPU that comes online gets a new event and
 * one that goes offline releases its own. The state is above
 * CPUHP_AP_PERF_ONLINE, so the event goes before perf's per-CPU context.
 *
 * The handler. perf calls tap_sample_handler() from its hrtimer, in
 * hardirq context with interrupts off, on the sampled CPU, even on
 * PREEMPT_RT (the hrtimer is HRTIMER_MODE_REL_HARD), with the interrupted
 * registers. It is written as if it could run in NMI (a hardware event's
 * handler would): it never sleeps, takes no lock, allocates nothing, does
 * not printk; it reads the configuration with rcu_dereference_sched(),
 * writes per-CPU counters with this_cpu_inc(), writes the record in place
 * through tap_ring_reserve()/tap_ring_commit(), and takes the stacks with
 * the snapshot the causal events use too (stack.h): the unwinder from the
 * interrupted registers, as perf's callchain does, and user memory read
 * only with tap_ucopy() (ucopy.h; never VMAs, mmap_lock or
 * get_user_pages).
 *
 * The user stack. With TAPROOT_CFG_F_UNWIND the handler first walks it
 * (uwalk.h) by the mappings and tables the consumer uploaded for the
 * process (utab.h). A whole walk becomes a reference to an interned stack
 * (intern.h): a STACK record the first time the CPU sees it in the epoch,
 * a SAMPLE_REF every time, or with TAPROOT_CFG_F_COUNT one more in the
 * CPU's count table (count.h), a SAMPLE_REF when it has no room. Any
 * other walk, or none, becomes a SAMPLE with the snapshot from the frame
 * the walk stopped at and the pcs before it.
 *

 * Lifetime. perf_event_release_kernel() removes the event from its CPU
 * (an IPI to that CPU, so a handler running there has finished) and
 * cancels its hrtimer (hrtimer_cancel() waits for a running callback): once
 * stop has returned, no handler of this module runs or will run, which is
 * what unload and a ring resize rely on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "config.h"
#include "count.h"
#include "intern.h"
#include "ring.h"
#include "sample.h"
#include "stack.h"
#include "taproot.h"
#include "uwalk.h"

static DEFINE_PER_CPU(struct perf_event *, tap_sample_event);
static DEFINE_PER_CPU(struct tap_sample_stats, tap_sample_stats);

/*
 * The pcs of the sample being taken on a CPU, before they are written to
 * the ring: the sample handler does not nest with itself on a CPU, so one
 * buffer per CPU serves it. Allocated at load: too large for the static
 * per-CPU area of a module.
 */
struct tap_sample_pcs {
	u64 kstack[TAPROOT_KSTACK_MAX];
	u64 upcs[TAPROOT_UNWIND_FRAMES_MAX];
	struct taproot_pyframe py[TAPROOT_PY_FRAMES_MAX];
};

static struct tap_sample_pcs __percpu *tap_sample_pcs;

/* The dynamic hotplug state while started, 0 while stopped. */
static int tap_sample_hp_state;

/* Fixed from start to stop (freq_hz cannot change while started). */
static u64 tap_sample_period_ns;
static u32 tap_sample_period_us;

/* The first error of an online callback since start (0: none). */
static int tap_sample_cpu_err;

/*
 * Set at unload, before control goes away: a START that comes in between
 * is refused rather than left running.
 */
static bool tap_sample_closed;

/*
 * Whether current is sampled, and the flags that say what it is (IDLE,
 * KTHREAD) in *@flags.
 */
static bool tap_sample_who(const struct tap_config *cfg,
			   const struct task_struct *task, u16 *flags)
{
	pid_t consumer;

	*flags = 0;
	if (is_idle_task(task)) {
		if (!(cfg->flags & TAPROOT_CFG_F_SAMPLE_IDLE))
			return false;
		*flags |= TAPROOT_SAMPLE_F_IDLE;
	}
	/* The consumer would mostly see itself reading the rings. */
	consumer = tap_dev_consumer_tgid();
	if (consumer && task->tgid == consumer)
		return false;
	if (!tap_config_tgid_ok(cfg, task->tgid))
		return false;
	if (task->flags & PF_KTHREAD)
		*flags |= TAPROOT_SAMPLE_F_KTHREAD;
	return true;
}

/*
 * The user registers of a sample interrupted at @regs: those interrupted
 * in user mode, else those the task saved when it entered the kernel
 * (none for a kernel thread, nor for a task whose mm is gone: exiting).
 */
static struct pt_regs *tap_sample_uregs(struct pt_regs *regs)
{
	return user_mode(regs) ? regs : tap_current_user_regs();
}

/*
 * Walk the user stack from @uregs into @upcs when the configuration asks
 * for it (w->end TAPROOT_KUNWIND_NONE when it does not, w->nr 0 when the
 * process has no mappings to walk by).
 */
static void tap_sample_walk(const struct tap_config *cfg,
			    struct pt_regs *uregs, struct tap_uwalk *w,
			    u64 *upcs)
{
	w->maps = NULL;
	w->nr = 0;
	w->end = TAPROOT_KUNWIND_NONE;
	if ((cfg->flags & TAPROOT_CFG_F_UNWIND) && uregs)
		tap_walk_user(w, uregs, cfg->unwind_frames, upcs);
}

/* Whether walk @w ended where the user stack ends, or at the frame cap. */
static bool tap_sample_walk_whole(const struct tap_uwalk *w)
{
	return w->end == TAPROOT_KUNWIND_COMPLETE ||
	       w->end == TAPROOT_KUNWIND_MAX_FRAMES;
}

/*
 * The Python frames of current's thread into @py, at most @max (walk @w
 * done: tap_walk_python()), counted.
 */
static u32 tap_sample_python(const struct tap_uwalk *w,
			     struct taproot_pyframe *py, u32 max)
{
	u32 nr, walked, cut;

	nr = tap_walk_python(w, py, min_t(u32, TAPROOT_PY_FRAMES_MAX, max),
			     &walked, &cut);
	if (walked) {
		this_cpu_inc(tap_sample_stats.py_walks);
		this_cpu_add(tap_sample_stats.py_frames, nr);
		if (cut)
			this_cpu_inc(tap_sample_stats.py_cut);
	}
	return nr;
}

/*
 * Plan the snapshot of a sample interrupted at @regs, whose user registers
 * are @uregs and whose user stack walk was @w (setting IN_KERNEL and the
 * flags of the walk in *@flags), with @tail bytes after its stack bytes
 * (its Python frames); returns the size to reserve, 0 when none fits.
 *
 * The snapshot goes on from where the walk stopped, with the pcs found
 * before it. With VERIFY a whole walk keeps the leaf's snapshot, for
 * the reader to compare; with USTACK_PRIVATE no stack byte is copied.
 */
static u32 tap_sample_plan(struct tap_snap *snap, const struct tap_config *cfg,
			   struct pt_regs *regs, struct pt_regs *uregs,
			   const struct tap_uwalk *w, u64 *upcs, u32 tail,
			   u16 *flags)
{
	u32 ubytes = cfg->ustack_bytes;

	*snap = (struct tap_snap){ .kfrom = TAP_KSTACK_NONE, .uregs = uregs };
	if (!user_mode(regs)) {
		*flags |= TAPROOT_SAMPLE_F_IN_KERNEL;
		snap->kfrom = TAP_KSTACK_REGS;
		snap->kregs = regs;
	}
	if (w->nr) {
		*flags |= TAPROOT_SAMPLE_F_UPCS;
		snap->upcs = upcs;
		snap->upc_nr = w->nr;
		if (tap_sample_walk_whole(w)) {
			*flags |= TAPROOT_SAMPLE_F_VERIFY;
		} else {
			snap->uframe = &w->regs;
			if (w->partial)
				*flags |= TAPROOT_SAMPLE_F_UREGS_CALLER;
		}
	}
	if (cfg->flags & TAPROOT_CFG_F_USTACK_PRIVATE)
		ubytes = 0;
	return tap_snap_plan(snap, sizeof(struct taproot_rec_sample) + tail,
			     cfg->kstack_depth, ubytes);
}

/*
 * With USTACK_PRIVATE, registers may hold what the stack would have: of
 * the user registers only those that locate the frame stay.
 */
static void tap_sample_private_regs(struct taproot_user_regs *r)
{
	struct taproot_user_regs keep = { .ip = r->ip, .sp = r->sp,
					  .bp = r->bp };

	*r = keep;
}

/* A snapshot's TAPROOT_SNAP_F_* as the sample's flags of the same names. */
static u16 tap_sample_snap_flags(u16 snap)
{
	u16 flags = 0;

	if (snap & TAPROOT_SNAP_F_USER_REGS)
		flags |= TAPROOT_SAMPLE_F_USER_REGS;
	if (snap & TAPROOT_SNAP_F_KSTACK_TRUNC)
		flags |= TAPROOT_SAMPLE_F_KSTACK_TRUNC;
	if (snap & TAPROOT_SNAP_F_USTACK_FAULT)
		flags |= TAPROOT_SAMPLE_F_USTACK_FAULT;
	if (snap & TAPROOT_SNAP_F_USTACK_TRUNC)
		flags |= TAPROOT_SAMPLE_F_USTACK_TRUNC;
	if (snap & TAPROOT_SNAP_F_USTACK_TOP)
		flags |= TAPROOT_SAMPLE_F_USTACK_TOP;
	return flags;
}

/* The fixed part of the sample of @task, but for the stacks. */
static void tap_sample_fill_task(struct taproot_rec_sample *rec,
				 const struct task_struct *task)
{
	rec->pid = task->tgid;
	rec->tid = task->pid;
	rec->cpu = smp_processor_id();
	rec->period_us = tap_sample_period_us;
	BUILD_BUG_ON(sizeof(rec->comm) != TASK_COMM_LEN);
	tap_copy_comm(rec->comm, task);
}

/*
 * At most how many Python frames a SAMPLE with @upc_nr user pcs takes: half
 * the room its fixed part and pcs leave, so that the stack copy they are
 * placed in by the reader keeps room in the smallest rings.
 */
static u32 tap_sample_python_max(u32 upc_nr)
{
	u32 max = round_down(tap_ring_max_record(), 8);
	u32 fixed = sizeof(struct taproot_rec_sample) +
		    sizeof(struct taproot_sample_python) + upc_nr * sizeof(u64);

	if (max <= fixed)
		return 0;
	return (max - fixed) / 2 / sizeof(struct taproot_pyframe);
}

/* After the stack bytes ending at @used, SAMPLE @rec's Python frames. */
static u32 tap_sample_fill_python(struct taproot_rec_sample *rec, u32 used,
				  const struct taproot_pyframe *py, u32 nr)
{
	struct taproot_sample_python *t;
	u32 at = round_up(used, 8);

	/* The plan's room for the tail starts at a multiple of 8. */
	BUILD_BUG_ON(sizeof(*rec) % 8 || sizeof(*t) % 8 || sizeof(*py) % 8);
	memset((u8 *)rec + used, 0, at - used);
	t = (struct taproot_sample_python *)((u8 *)rec + at);
	*t = (struct taproot_sample_python){ .py_nr = nr };
	memcpy(t + 1, py, nr * sizeof(*py));
	return at + sizeof(*t) + nr * sizeof(*py);
}

/*
 * The sample as a TAPROOT_REC_SAMPLE: the snapshot, the pcs of walk @w
 * when there are any (a fallback, or VERIFY), and the Python frames.
 */
static void tap_sample_write_snap(const struct tap_config *cfg,
				  struct pt_regs *regs, struct pt_regs *uregs,
				  const struct tap_uwalk *w,
				  struct tap_sample_pcs *pcs, u16 flags)
{
	struct taproot_rec_header *hdr;
	struct taproot_rec_sample *rec;
	struct tap_snap snap;
	u32 size, used, pynr = 0, tail = 0;

	if (uregs)
		pynr = tap_sample_python(w, pcs->py,
					 tap_sample_python_max(w->nr));
	if (pynr)
		tail = sizeof(struct taproot_sample_python) +
		       pynr * sizeof(pcs->py[0]);
	size = tap_sample_plan(&snap, cfg, regs, uregs, w, pcs->upcs, tail,
			       &flags);
	if (unlikely(!size))
		return;		/* not even the fixed part fits */
	hdr = tap_ring_reserve(size, TAPROOT_REC_SAMPLE);
	if (!hdr)
		return;		/* counted and announced by the ring */
	rec = container_of(hdr, struct taproot_rec_sample, hdr);

	tap_sample_fill_task(rec, current);
	used = sizeof(*rec) + tap_snap_fill(&snap, &rec->user_regs,
					    (u64 *)(rec + 1));
	if (pynr) {
		used = tap_sample_fill_python(rec, used, pcs->py, pynr);
		flags |= TAPROOT_SAMPLE_F_PYTHON;
	}
	if (cfg->flags & TAPROOT_CFG_F_USTACK_PRIVATE)
		tap_sample_private_regs(&rec->user_regs);
	rec->kstack_nr = snap.kstack_nr;
	rec->upc_nr = snap.upc_nr;
	rec->unwind = w->end;
	/* Its uploads wait on the reader: see tap_ring_urge(). */
	if (w->end == TAPROOT_KUNWIND_NO_PROC)
		tap_ring_urge(hdr->time_ns);
	rec->ustack_len = snap.ustack_len;
	if (snap.flags & TAPROOT_SNAP_F_USTACK_FAULT)
		this_cpu_inc(tap_sample_stats.ustack_faults);
	hdr->flags = flags | tap_sample_snap_flags(snap.flags);
	/* Give back what the stacks did not take. */
	tap_ring_commit_pad(hdr, used);
}

/*
 * The STACK record of a stack of @knr kernel and @unr user pcs and @pynr
 * Python frames, unless the CPU wrote it already in this epoch; false
 * when it could not be written (the ring counted the loss).
 */
static bool tap_sample_write_stack(u64 id, u32 epoch, u16 flags,
				   const u64 *kpcs, u32 knr,
				   const u64 *upcs, u32 unr, u8 end,
				   const struct taproot_pyframe *py, u32 pynr)
{
	struct taproot_rec_header *hdr;
	struct taproot_rec_stack *rec;
	u32 size = sizeof(*rec) + (knr + unr) * sizeof(u64) + pynr * sizeof(*py);
	u64 *pcs;

	if (tap_intern_seen(id))
		return true;
	hdr = tap_ring_reserve(size, TAPROOT_REC_STACK);
	if (!hdr)
		return false;
	rec = container_of(hdr, struct taproot_rec_stack, hdr);
	rec->id = id;
	rec->epoch = epoch;
	rec->pid = current->tgid;
	rec->kstack_nr = knr;
	rec->upc_nr = unr;
	rec->unwind = end;
	rec->py_nr = pynr;
	rec->reserved = 0;
	pcs = (u64 *)(rec + 1);
	memcpy(pcs, kpcs, knr * sizeof(u64));
	memcpy(pcs + knr, upcs, unr * sizeof(u64));
	memcpy(pcs + knr + unr, py, pynr * sizeof(*py));
	hdr->flags = flags;
	tap_ring_commit(hdr, size);
	tap_intern_set(id);
	this_cpu_inc(tap_sample_stats.stacks);
	return true;
}

/*
 * The sample as a reference to its interned stack: the user pcs of whole
 * walk @w in @pcs->upcs, the Python frames and kernel frames taken here.
 * Python frames beyond the largest record are left out, and a kernel
 * part too long for it is cut (KSTACK_TRUNC).
 */
static void tap_sample_write_ref(const struct tap_config *cfg,
				 struct pt_regs *regs,
				 const struct tap_uwalk *w,
				 struct tap_sample_pcs *pcs, u16 flags)
{
	u32 max = tap_ring_max_record(), knr = 0, kdepth, epoch, pynr, room;
	struct taproot_rec_sample_ref *rec;
	struct taproot_rec_header *hdr;
	bool ktrunc = false;
	u64 id;

	room = sizeof(struct taproot_rec_stack) + w->nr * sizeof(u64);
	room = max > room ? max - room : 0;
	pynr = tap_sample_python(w, pcs->py, room / sizeof(pcs->py[0]));
	flags |= TAPROOT_SAMPLE_F_USER_REGS;
	if (!user_mode(regs)) {
		flags |= TAPROOT_SAMPLE_F_IN_KERNEL;
		kdepth = (room - pynr * sizeof(pcs->py[0])) / sizeof(u64);
		kdepth = min(cfg->kstack_depth, kdepth);
		knr = tap_kstack_regs(pcs->kstack, kdepth, regs, &ktrunc);
		if (ktrunc)
			flags |= TAPROOT_SAMPLE_F_KSTACK_TRUNC;
	}
	epoch = tap_intern_epoch();
	id = tap_intern_id(epoch, current->tgid, flags & TAP_STACK_FLAGS,
			   pcs->kstack, knr, pcs->upcs, w->nr, pcs->py, pynr);
	if (!tap_sample_write_stack(id, epoch, flags & TAP_STACK_FLAGS,
				    pcs->kstack, knr, pcs->upcs, w->nr, w->end,
				    pcs->py, pynr))
		return;
	if (cfg->flags & TAPROOT_CFG_F_COUNT) {
		/* The records' clock, as tap_ring_reserve() takes it. */
		if (tap_count_add(id, epoch, current, flags,
				  tap_sample_period_us,
				  ktime_get_mono_fast_ns())) {
			this_cpu_inc(tap_sample_stats.counted);
			return;
		}
		this_cpu_inc(tap_sample_stats.count_full);
	}

	hdr = tap_ring_reserve(sizeof(*rec), TAPROOT_REC_SAMPLE_REF);
	if (!hdr)
		return;
	rec = container_of(hdr, struct taproot_rec_sample_ref, hdr);
	rec->pid = current->tgid;
	rec->tid = current->pid;
	rec->cpu = smp_processor_id();
	rec->period_us = tap_sample_period_us;
	tap_copy_comm(rec->comm, current);
	rec->stack_id = id;
	rec->epoch = epoch;
	rec->reserved = 0;
	hdr->flags = flags;
	tap_ring_commit(hdr, sizeof(*rec));
	this_cpu_inc(tap_sample_stats.stack_refs);
}

static void tap_sample_handler(struct perf_event *event,
			       struct perf_sample_data *data,
			       struct pt_regs *regs)
{
	const struct tap_config *cfg = tap_config_sched();
	struct tap_sample_pcs *pcs;
	struct pt_regs *uregs;
	struct tap_uwalk w;
	u16 flags;

	if (unlikely(!cfg || !regs) || !(cfg->events & TAPROOT_EV_SAMPLE))
		return;
	if (!tap_sample_who(cfg, current, &flags))
		return;
	this_cpu_inc(tap_sample_stats.samples);

	uregs = flags & TAPROOT_SAMPLE_F_KTHREAD ? NULL : tap_sample_uregs(regs);
	pcs = this_cpu_ptr(tap_sample_pcs);
	tap_sample_walk(cfg, uregs, &w, pcs->upcs);
	this_cpu_inc(tap_sample_stats.unwind[w.end]);
	if (tap_sample_walk_whole(&w) &&
	    !(cfg->flags & TAPROOT_CFG_F_UNWIND_VERIFY))
		tap_sample_write_ref(cfg, regs, &w, pcs, flags);
	else
		tap_sample_write_snap(cfg, regs, uregs, &w, pcs, flags);
}

static int tap_sample_cpu_online(unsigned int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = tap_sample_period_ns,
		.pinned = 1,
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, cpu, NULL,
						 tap_sample_handler, NULL);
	if (IS_ERR(event)) {
		/*
		 * Not an error for hotplug: a CPU must not stay offline for
		 * the profiler's sake. Start reports it.
		 */
		pr_warn("CPU %u: cannot create the sampling event: %ld\n", cpu,
			PTR_ERR(event));
		if (!tap_sample_cpu_err)
			tap_sample_cpu_err = PTR_ERR(event);
		return 0;
	}
	per_cpu(tap_sample_event, cpu) = event;
	return 0;
}

static int tap_sample_cpu_offline(unsigned int cpu)
{
	struct perf_event *event = per_cpu(tap_sample_event, cpu);

	if (event) {
		per_cpu(tap_sample_event, cpu) = NULL;
		/* Waits for a handler running on @cpu. */
		perf_event_release_kernel(event);
	}
	/* No wakeup of @cpu's ring left pending on the dead CPU. */
	tap_ring_cpu_quiesce(cpu);
	return 0;
}

int tap_sample_start(void)
{
	const struct tap_config *cfg = tap_config_locked();
	int state;

	lockdep_assert_held(&tap_ctl_lock);
	if (tap_sample_hp_state)
		return -EALREADY;
	if (tap_sample_closed)
		return -ESHUTDOWN;

	tap_sample_period_ns = div_u64(NSEC_PER_SEC, cfg->freq_hz);
	tap_sample_period_us = div_u64(tap_sample_period_ns, NSEC_PER_USEC);
	tap_sample_cpu_err = 0;

	/* Runs tap_sample_cpu_online() on every online CPU first. */
	state = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "taproot:online",
				  tap_sample_cpu_online,
				  tap_sample_cpu_offline);
	if (state < 0) {
		pr_err("cannot set up the CPU hotplug state: %d\n", state);
		return state;
	}
	if (tap_sample_cpu_err) {
		cpuhp_remove_state(state);
		return tap_sample_cpu_err;
	}
	WRITE_ONCE(tap_sample_hp_state, state);
	return 0;
}

int tap_sample_stop(void)
{
	int state = tap_sample_hp_state;

	lockdep_assert_held(&tap_ctl_lock);
	if (!state)
		return -EALREADY;

	/* Runs tap_sample_cpu_offline() on every online CPU. */
	cpuhp_remove_state(state);
	WRITE_ONCE(tap_sample_hp_state, 0);
	return 0;
}

bool tap_sample_running(void)
{
	return READ_ONCE(tap_sample_hp_state) != 0;
}

void tap_sample_get_stats(unsigned int cpu, struct tap_sample_stats *st)
{
	const struct tap_sample_stats *s = per_cpu_ptr(&tap_sample_stats, cpu);

	/* Single aligned 64-bit loads: never torn on x86-64. */
	unsigned int i;

	st->samples = READ_ONCE(s->samples);
	st->ustack_faults = READ_ONCE(s->ustack_faults);
	st->stacks = READ_ONCE(s->stacks);
	st->stack_refs = READ_ONCE(s->stack_refs);
	for (i = 0; i < TAPROOT_KUNWIND_NR; i++)
		st->unwind[i] = READ_ONCE(s->unwind[i]);
	st->py_walks = READ_ONCE(s->py_walks);
	st->py_frames = READ_ONCE(s->py_frames);
	st->py_cut = READ_ONCE(s->py_cut);
	st->counted = READ_ONCE(s->counted);
	st->count_full = READ_ONCE(s->count_full);
}

int __init tap_sample_init(void)
{
	tap_sample_pcs = alloc_percpu(struct tap_sample_pcs);
	return tap_sample_pcs ? 0 : -ENOMEM;
}

/*
 * Unload, first of all: stop sampling for good. When this returns no
 * handler runs, and none will (START is refused from now on).
 */
void tap_sample_exit(void)
{
	mutex_lock(&tap_ctl_lock);
	tap_sample_closed = true;
	if (tap_sample_running())
		tap_sample_stop();
	mutex_unlock(&tap_ctl_lock);
	free_percpu(tap_sample_pcs);
}
