// SPDX-License-Identifier: GPL-2.0
/*
 * Records in (internal.h): each ring record to the stage it feeds. A
 * SAMPLE is a capture resolved now (stack.c); a STACK is resolved as it
 * arrives and kept in the mirror of the module's slots (interned.c,
 * resolved.c), and each SAMPLE_REF or drained count naming it is a sample
 * of that resolution; SWITCH and WAKING go to the off-CPU join, whose
 * snapshots come back here to be resolved; FORK, EXEC and EXIT keep the
 * process model right.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/internal.h"
#include "pipeline/ktables.h"
#include "util/hash.h"
#include "util/util.h"

/* @w from a record's fields; @comm is the record's 16 bytes, NUL padded or not. */
static void pl_who_set(struct pl_who *w, const struct taproot_rec_header *rec, uint32_t pid,
		       uint32_t tid, uint32_t period_us, const char comm[16])
{
	w->time_ns = rec->time_ns;
	w->weight = 1;
	w->pid = pid;
	w->tid = tid;
	w->period_us = period_us;
	memcpy(w->thread_comm, comm, 16);
	w->thread_comm[16] = '\0';
}

/* The process of a sample with a user part to unwind, NULL for any other. */
static struct taproot_proc *pl_sample_proc(struct taproot_pipeline *p, uint32_t pid, bool user)
{
	struct taproot_proc *proc;

	if (!user || !pid || taproot_proc_get(p->procs, (int)pid, 0, &proc) < 0)
		return NULL;
	return proc;
}

/* CPU sample @w with labels @labels and stack @frames (@nf), into the profile. */
static int pl_cpu_add(struct taproot_pipeline *p, const struct pl_who *w, unsigned int cpu,
		      const struct taproot_profile_label *labels, size_t nl, const char *comm,
		      const struct taproot_profile_frame *frames, size_t nf)
{
	const char *leaf;
	int64_t values[2];
	int err;

	values[0] = w->weight;
	values[1] = (int64_t)w->weight * (w->period_us ? (int64_t)w->period_us * 1000 :
					   p->period_ns);
	err = taproot_profile_add(p->profile, frames, nf, labels, nl, values);
	if (err < 0) {
		p->st.dropped += w->weight;
		return err;
	}
	p->st.samples += w->weight;
	/* A count has no instants to put on a timeline. */
	if (p->opts.timeline && w->weight == 1)
		tp_timeline_sample(p->opts.timeline, w->pid, w->tid, cpu, w->time_ns,
				   comm, w->thread_comm, frames, nf);

	leaf = frames[0].function;
	if (!leaf || !leaf[0])
		leaf = frames[0].mapping_path;
	if (!leaf || !leaf[0])
		leaf = "[unknown]";
	tp_pl_top_count(p, leaf, w->weight);
	if (p->live) {
		const char *group = comm && comm[0] ? comm : "[unknown]";

		for (size_t i = 0; i < nl; i++)
			if (labels[i].str && labels[i].str[0] &&
			    !strcmp(labels[i].key, "service_name"))
				group = labels[i].str;
		tp_pl_live_count(p, frames, nf, group, w->weight);
	}
	return 0;
}

/* A CPU sample of @w, its stacks @c (c->comm set here), into the profile. */
static int pl_cpu_sample(struct taproot_pipeline *p, const struct pl_who *w, unsigned int cpu,
			 struct pl_capture *c)
{
	struct taproot_profile_label labels[PL_LABELS_MAX];
	struct tp_stack_outcome o;
	struct taproot_proc *proc;
	char marker[160];
	const char *comm;
	size_t nf = 0, nl;
	int err;

	c->comm = w->thread_comm;
	/* Labels first: a sample the rules drop costs no unwinding. */
	proc = pl_sample_proc(p, w->pid, c->user);
	if (!tp_pl_sample_labels(p, w, cpu, proc, labels, &nl, &comm))
		return 0;
	err = tp_pl_stack(p, c, &nf, &proc, marker, sizeof(marker), &o);
	if (err < 0)
		return err;
	tp_pl_count_stack(p, &o, w->weight);
	return pl_cpu_add(p, w, cpu, labels, nl, comm, p->frames, nf);
}

/* What a SAMPLE's user part is, by its flags (taproot_rec_check() passed). */
static enum pl_upcs pl_sample_upcs(const struct taproot_rec_sample *s)
{
	if (!(s->hdr.flags & TAPROOT_SAMPLE_F_UPCS))
		return PL_UPCS_NONE;
	if (s->hdr.flags & TAPROOT_SAMPLE_F_VERIFY)
		return PL_UPCS_VERIFY;
	/* No stack copy to go on with (TAPROOT_CFG_F_USTACK_PRIVATE). */
	if (s->upc_nr && !s->ustack_len)
		return PL_UPCS_WHOLE;
	return PL_UPCS_CONTINUE;
}

static int pl_sample(struct taproot_pipeline *p, const struct taproot_rec_sample *s,
		     unsigned int cpu)
{
	const uint64_t *kstack = (const uint64_t *)(s + 1);
	const uint64_t *upcs = kstack + s->kstack_nr;
	struct pl_capture c = {
		.pid = s->pid,
		.tid = s->tid,
		.kstack = kstack,
		.kstack_nr = s->kstack_nr,
		.k0_exact = s->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.kstack_trunc = s->hdr.flags & TAPROOT_SAMPLE_F_KSTACK_TRUNC,
		.in_kernel = s->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.user = (s->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) &&
			!(s->hdr.flags & TAPROOT_SAMPLE_F_KTHREAD),
		.regs = &s->user_regs,
		.ustack = (const uint8_t *)(upcs + s->upc_nr),
		.ustack_len = s->ustack_len,
		.upcs_mode = pl_sample_upcs(s),
		.upcs = upcs,
		.upc_nr = s->upc_nr,
		.kend = s->unwind,
		.regs_caller = s->hdr.flags & TAPROOT_SAMPLE_F_UREGS_CALLER,
		.time_ns = s->hdr.time_ns,
	};
	struct pl_who w;

	c.py_nr = taproot_rec_sample_python(s, &c.py);
	if (c.upcs_mode == PL_UPCS_WHOLE)
		c.regs = NULL;
	pl_who_set(&w, &s->hdr, s->pid, s->tid, s->period_us, s->comm);
	/* TAPROOT_KUNWIND_NONE: the module did not walk it. */
	p->st.kunwind[s->unwind]++;
	if (c.upcs_mode == PL_UPCS_VERIFY)
		p->st.verify_samples++;
	return pl_cpu_sample(p, &w, cpu, &c);
}

/* ------------------------------------------- the module's stack slots */

/* The capture of thread @tid of @pid whose stack is STACK @st, taken whole. */
static struct pl_capture pl_stack_capture(const struct taproot_rec_stack *st, uint32_t pid,
					  uint32_t tid)
{
	const uint64_t *pcs = (const uint64_t *)(st + 1);

	return (struct pl_capture){
		.pid = pid,
		.tid = tid,
		.kstack = pcs,
		.kstack_nr = st->kstack_nr,
		.k0_exact = st->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.kstack_trunc = st->hdr.flags & TAPROOT_SAMPLE_F_KSTACK_TRUNC,
		.in_kernel = st->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.user = (st->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) && st->upc_nr,
		.upcs_mode = PL_UPCS_WHOLE,
		.upcs = pcs + st->kstack_nr,
		.upc_nr = st->upc_nr,
		.kend = st->unwind,
		.py = (const struct taproot_pyframe *)(pcs + st->kstack_nr + st->upc_nr),
		.py_nr = st->py_nr,
	};
}

/*
 * The generation resolutions are made under (resolved.h): debuginfod's,
 * and the JIT names found late.
 */
static uint64_t pl_resolve_generation(const struct taproot_pipeline *p)
{
	return tp_hash_mix(taproot_debuginfod_generation(p->opts.debuginfod),
			   p->jit_generation);
}

/*
 * Resolve STACK @s as it arrives (resolved.h says why then), as a capture
 * of its process's main thread with no name to check: its record's time
 * against the process's last exec tells whether the pcs are still the
 * program's whose maps are read, and the name those maps were read under
 * is kept for its samples to check (pl_stack_sample()). Left unresolved
 * beyond the budget or on a failure: its samples are then resolved one
 * by one.
 */
static void pl_stack_resolve(struct taproot_pipeline *p, struct tp_interned_stack *s)
{
	const struct taproot_rec_stack *st = s->rec;
	struct pl_capture c = pl_stack_capture(st, st->pid, st->pid);
	struct taproot_proc *proc;
	struct tp_stack_outcome o;
	char marker[160];
	size_t nf = 0;

	c.time_ns = st->hdr.time_ns;
	if (tp_pl_stack(p, &c, &nf, &proc, marker, sizeof(marker), &o) < 0) {
		tp_interned_resolve(&p->interned, s, NULL);
		return;
	}
	tp_interned_resolve(&p->interned, s,
			    tp_resolved_new(&p->interned.pool, p->frames, nf, &o,
					    pl_resolve_generation(p),
					    o.user == TP_STACK_UNWOUND && proc ?
					    taproot_proc_maps_comm(proc) : ""));
}

/*
 * Sample @w of ring @cpu whose stack is STACK @s: the labels its own, the
 * stack its resolution (made again under newer debug information).
 */
static int pl_stack_sample(struct taproot_pipeline *p, const struct pl_who *w, unsigned int cpu,
			   struct tp_interned_stack *s)
{
	const struct taproot_rec_stack *st = s->rec;
	struct taproot_profile_label labels[PL_LABELS_MAX];
	bool user = (st->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) && st->upc_nr;
	const struct tp_resolved *r;
	const char *comm;
	size_t nl;

	p->st.kunwind[st->unwind] += w->weight;
	if (s->resolved && s->resolved->generation != pl_resolve_generation(p))
		pl_stack_resolve(p, s);
	r = s->resolved;
	/* Resolved under another program's name (resolved.h): on its own. */
	if (r && w->tid == w->pid && r->comm[0] && strcmp(r->comm, w->thread_comm))
		r = NULL;
	if (!r) {
		struct pl_capture c = pl_stack_capture(st, w->pid, w->tid);

		c.time_ns = st->hdr.time_ns;
		return pl_cpu_sample(p, w, cpu, &c);
	}
	if (!tp_pl_sample_labels(p, w, cpu, pl_sample_proc(p, w->pid, user), labels, &nl, &comm))
		return 0;
	tp_pl_count_stack(p, &r->outcome, w->weight);
	p->st.resolved_samples += w->weight;
	return pl_cpu_add(p, w, cpu, labels, nl, comm, r->frames->frames, r->frames->nr);
}

/*
 * A SAMPLE_REF: a sample whose stack is a STACK record of its CPU. The
 * pcs are taken whole (PL_UPCS_WHOLE); one the mirror lacks is counted
 * and dropped: its stack is not known, as a lost record's.
 */
static int pl_sample_ref(struct taproot_pipeline *p, const struct taproot_rec_sample_ref *r,
			 unsigned int cpu)
{
	struct tp_interned_stack *s;
	struct pl_who w;

	p->st.stack_refs++;
	s = tp_interned_get(&p->interned, r, cpu);
	if (!s) {
		p->st.stack_refs_unresolved++;
		return 0;
	}
	pl_who_set(&w, &r->hdr, r->pid, r->tid, r->period_us, r->comm);
	return pl_stack_sample(p, &w, cpu, s);
}

/*
 * A drained count (taproot_count_check() passed): its samples as a
 * reference's, all at once, at the time of the last.
 */
static int pl_count(struct taproot_pipeline *p, const struct taproot_count *e)
{
	struct tp_interned_stack *s;
	struct pl_who w = {
		.pid = e->pid,
		.tid = e->tid,
		.time_ns = e->last_ns,
		.period_us = e->period_us,
		.weight = e->count,
	};

	p->st.counts++;
	p->st.counted_samples += e->count;
	s = tp_interned_find(&p->interned, e->cpu, e->stack_id, e->epoch, e->pid);
	if (!s) {
		p->st.counted_unresolved += e->count;
		return 0;
	}
	memcpy(w.thread_comm, e->comm, sizeof(e->comm));
	w.thread_comm[sizeof(e->comm)] = '\0';
	return pl_stack_sample(p, &w, e->cpu, s);
}

void taproot_pipeline_forget_stacks(struct taproot_pipeline *p)
{
	tp_interned_clear(&p->interned);
}

/* ------------------------------------------------------- causal events */

/*
 * A snapshot with the module's walk (TAPROOT_SNAP_F_UPCS): its "stack
 * bytes" are the user pcs, taken whole as an interned stack's, never
 * unwound here; TAPROOT_SNAP_UNWIND() says how the walk ended (with
 * USTACK_TRUNC: MAX_FRAMES; with USTACK_FAULT: where it stopped, or NONE
 * when it was not tried).
 */
static void pl_snap_upcs(struct taproot_pipeline *p, struct pl_capture *c,
			 const struct taproot_stack_snap *snap)
{
	c->upcs_mode = PL_UPCS_WHOLE;
	c->upcs = (const uint64_t *)c->ustack;
	c->upc_nr = snap->ustack_len / sizeof(uint64_t);
	c->regs = NULL;
	c->ustack = NULL;
	c->ustack_len = 0;
	c->kend = TAPROOT_SNAP_UNWIND(snap->flags);
	p->st.causal_upcs++;
}

/*
 * The join's resolver (lib/profile/causal.c): a stack snapshot as a sample's
 * stack. Everything it returns lives in p->frames and p->causal_marker
 * until the next record.
 */
int tp_pl_resolve_snap(void *arg, uint32_t pid, uint32_t tid, const char *thread_comm,
		       bool owner, const struct taproot_stack_snap *snap, size_t len,
		       struct tp_causal_stack *out)
{
	struct taproot_pipeline *p = arg;
	struct pl_capture c = { .pid = pid, .tid = tid, .trim_trace = true, .in_kernel = true,
				.comm = thread_comm };
	struct taproot_proc *proc = NULL;
	struct tp_stack_outcome o;
	size_t nf = 0;
	int err;

	memset(out, 0, sizeof(*out));
	out->comm = thread_comm;
	if (snap && (snap->kstack_nr > TAPROOT_KSTACK_MAX || snap->ustack_len > TAPROOT_USTACK_MAX ||
		     sizeof(*snap) + (size_t)snap->kstack_nr * 8 + snap->ustack_len > len))
		return -TAPROOT_ECORRUPT;
	if (snap && (snap->flags & TAPROOT_SNAP_F_UPCS) &&
	    (!(snap->flags & TAPROOT_SNAP_F_USER_REGS) || !snap->ustack_len ||
	     snap->ustack_len % 8 || snap->ustack_len > 8 * TAPROOT_UNWIND_FRAMES_MAX ||
	     TAPROOT_SNAP_UNWIND(snap->flags) >= TAPROOT_KUNWIND_NR))
		return -TAPROOT_ECORRUPT;
	c.user = snap && (snap->flags & TAPROOT_SNAP_F_USER_REGS) && pid;
	/*
	 * The process first: its labels may spare the stack's resolution.
	 * A snapshot without user registers (a kernel thread's) does not
	 * read it: such a task has no process to label it.
	 */
	if (pid && (!snap || c.user) && taproot_proc_get(p->procs, (int)pid, 0, &proc) < 0)
		proc = NULL;
	if (proc)
		out->comm = tp_pl_process_comm(p, (int)pid, taproot_proc_start_time(proc), (int)tid,
					    thread_comm);
	if (owner) {
		out->labels = proc ? tp_labels_get(taproot_proc_labels(proc)) : NULL;
		out->dropped = tp_pl_interval_dropped(p, pid, tid, out->comm, thread_comm, proc);
		if (out->dropped)
			return 0;
	}
	if (!snap)
		return 0;
	c.kstack = (const uint64_t *)(snap + 1);
	c.kstack_nr = snap->kstack_nr;
	c.kstack_trunc = snap->flags & TAPROOT_SNAP_F_KSTACK_TRUNC;
	c.regs = &snap->user_regs;
	c.ustack = (const uint8_t *)(c.kstack + snap->kstack_nr);
	c.ustack_len = snap->ustack_len;
	if (snap->flags & TAPROOT_SNAP_F_UPCS)
		pl_snap_upcs(p, &c, snap);
	err = tp_pl_stack(p, &c, &nf, &proc, p->causal_marker, sizeof(p->causal_marker), &o);
	if (err < 0)
		return err;
	tp_pl_count_stack(p, &o, 1);
	out->frames = p->frames;
	out->nr = nf;
	return 0;
}

/*
 * A SWITCH or WAKING whose snapshot says the module could not walk its
 * task's user stack for want of uploads (NO_PROC, STALE, NO_MAPPING) asks
 * for them as a sample does (lib/pipeline/ktables.h): a process that
 * mostly blocks is then walked in its events, not only once a sample
 * happens to come. The snapshot is prev's in a SWITCH, the waker's
 * (current at sched_waking) in a WAKING; an interrupt's wakeup has no
 * user part, so no walk, and waker pid 0.
 */
static void pl_event_kupload(struct taproot_pipeline *p, const struct taproot_rec_header *rec)
{
	const struct taproot_stack_snap *snap = taproot_rec_snap(rec);
	uint32_t pid;

	if (!snap)
		return;
	if (rec->type == TAPROOT_REC_SWITCH)
		pid = ((const struct taproot_rec_switch *)rec)->prev_pid;
	else
		pid = ((const struct taproot_rec_waking *)rec)->waker_pid;
	tp_ktables_sample(p->ktables, pid, TAPROOT_SNAP_UNWIND(snap->flags), rec->time_ns);
}

/* FORK, EXEC, EXIT: the process model follows the processes' lives. */
static void pl_proc_event(struct taproot_pipeline *p, const struct taproot_rec_header *rec)
{
	switch (rec->type) {
	case TAPROOT_REC_FORK: {
		const struct taproot_rec_fork *f = (const void *)rec;

		if (rec->size < sizeof(*f))
			goto bad;
		/*
		 * A new process: a pid still known belonged to one that is
		 * gone. Its maps are the parent's copy until it execs; they
		 * are read from /proc when its first stack needs them, and
		 * the parent's serve if it has exited by then.
		 */
		if (!(rec->flags & TAPROOT_FORK_F_THREAD) && f->child_pid)
			taproot_proc_fork(p->procs, (int)f->parent_pid, (int)f->child_pid);
		break;
	}
	case TAPROOT_REC_EXEC: {
		const struct taproot_rec_exec *e = (const void *)rec;

		if (rec->size < sizeof(*e))
			goto bad;
		if (e->pid) {
			taproot_proc_exec(p->procs, (int)e->pid, rec->time_ns);
			tp_pl_comm_forget(p, (int)e->pid);
		}
		break;
	}
	case TAPROOT_REC_EXIT: {
		const struct taproot_rec_exit *x = (const void *)rec;

		if (rec->size < sizeof(*x))
			goto bad;
		if (p->opts.timeline)
			tp_timeline_exit(p->opts.timeline, x->pid, x->tid, rec->time_ns);
		if ((rec->flags & TAPROOT_EXIT_F_GROUP_DEAD) && x->pid) {
			taproot_proc_forget(p->procs, (int)x->pid);
			tp_ktables_exit(p->ktables, x->pid);
		}
		break;
	}
	}
	p->st.proc_events++;
	return;
bad:
	p->st.dropped++;
}

int taproot_pipeline_add_record(struct taproot_pipeline *p,
				const struct taproot_rec_header *rec, unsigned int cpu)
{
	const char *why;
	int err;

	p->st.records++;
	err = taproot_rec_check(rec, rec->size, &why);
	if (err < 0) {
		p->st.dropped++;
		return tp_err(err, "pipeline: invalid record: %s", why);
	}
	if (p->opts.timeline)
		tp_timeline_time(p->opts.timeline, rec->time_ns);
	switch (rec->type) {
	case TAPROOT_REC_SAMPLE:
		tp_ktables_sample(p->ktables, ((const struct taproot_rec_sample *)rec)->pid,
				  ((const struct taproot_rec_sample *)rec)->unwind, rec->time_ns);
		err = pl_sample(p, (const struct taproot_rec_sample *)rec, cpu);
		if (err < 0 && err != -ENOMEM)
			err = 0;	/* counted; the next sample goes on */
		return err;
	case TAPROOT_REC_SAMPLE_REF:
		err = pl_sample_ref(p, (const struct taproot_rec_sample_ref *)rec, cpu);
		if (err < 0 && err != -ENOMEM)
			err = 0;
		return err;
	case TAPROOT_REC_STACK: {
		struct tp_interned_stack *s;

		err = tp_interned_put(&p->interned, (const struct taproot_rec_stack *)rec, cpu, &s);
		if (err < 0) {
			p->st.dropped++;
			return err;
		}
		p->st.stack_records += err;
		if (s)
			pl_stack_resolve(p, s);
		return 0;
	}
	case TAPROOT_REC_LOST: {
		const struct taproot_rec_lost *l = (const struct taproot_rec_lost *)rec;

		/* What was lost may have been an end of an interval: it stays unpaired. */
		for (unsigned int i = 0; i < TAPROOT_LOST_NR; i++)
			p->st.lost += l->lost[i];
		return 0;
	}
	case TAPROOT_REC_SWITCH:
	case TAPROOT_REC_WAKING:
		pl_event_kupload(p, rec);
		if (!p->causal)
			break;
		tp_causal_record(p->causal, rec);
		return 0;
	case TAPROOT_REC_FORK:
	case TAPROOT_REC_EXEC:
	case TAPROOT_REC_EXIT:
		pl_proc_event(p, rec);
		return 0;
	default:
		break;
	}
	p->st.other_records++;
	return 0;
}

struct pl_consume {
	struct taproot_pipeline *p;
	void (*corrupt)(unsigned int cpu, uint64_t pos, const char *why, void *arg);
	void *arg;
};

static int pl_on_record(const struct taproot_rec_header *h, unsigned int cpu, void *arg)
{
	struct pl_consume *c = arg;

	/* Errors are counted in the pipeline's stats; the session goes on. */
	taproot_pipeline_add_record(c->p, h, cpu);
	return 0;
}

static void pl_on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	struct pl_consume *c = arg;

	if (c->corrupt)
		c->corrupt(cpu, pos, why, c->arg);
}

int64_t taproot_pipeline_drain_counts(struct taproot_pipeline *p, struct taproot_ring *ring,
				      void (*corrupt)(unsigned int cpu, uint64_t pos,
						      const char *why, void *arg),
				      void *arg)
{
	uint32_t nr;
	int err;

	/*
	 * Once: rings are sorted by CPU, the last one's number is the highest
	 * (its stats read the reader's buffer with mincore(): not every drain).
	 */
	if (!p->counts) {
		uint32_t nr_cpus = 0;

		if (taproot_ring_count(ring)) {
			struct taproot_ring_stats rs;

			taproot_ring_stats(ring, taproot_ring_count(ring) - 1, &rs);
			nr_cpus = rs.cpu + 1;
		}
		p->counts_max = nr_cpus * TAPROOT_COUNT_SLOTS;
		p->counts = calloc(p->counts_max ? p->counts_max : 1, sizeof(*p->counts));
		if (!p->counts)
			return tp_err(-ENOMEM, NULL);
	}
	taproot_pipeline_counts_begin(p);
	err = taproot_ring_counts_drain(ring, p->counts, p->counts_max, &nr);
	if (err < 0)
		return err;
	/* The STACK records the counts name came before the drain returned. */
	taproot_pipeline_consume(p, ring, corrupt, arg);
	return taproot_pipeline_add_counts(p, p->counts, nr, p->counts_max / TAPROOT_COUNT_SLOTS);
}

void taproot_pipeline_counts_begin(struct taproot_pipeline *p)
{
	tp_interned_drain_begin(&p->interned);
}

int64_t taproot_pipeline_add_counts(struct taproot_pipeline *p, const struct taproot_count *e,
				    size_t nr, uint32_t nr_cpus)
{
	uint64_t before = p->st.samples;
	const char *why;

	for (size_t i = 0; i < nr; i++) {
		if (taproot_count_check(&e[i], nr_cpus, &why) < 0) {
			p->st.counts_corrupt++;
			continue;
		}
		/* A count the profile could not take is counted in stats.dropped. */
		(void)pl_count(p, &e[i]);
	}
	tp_interned_retire(&p->interned);
	return (int64_t)(p->st.samples - before);
}

int taproot_pipeline_consume(struct taproot_pipeline *p, struct taproot_ring *ring,
			     void (*corrupt)(unsigned int cpu, uint64_t pos,
					     const char *why, void *arg),
			     void *arg)
{
	static const struct taproot_ring_ops ops = {
		.record = pl_on_record,
		.corrupt = pl_on_corrupt,
	};
	struct pl_consume c = { p, corrupt, arg };
	int n = taproot_ring_consume(ring, &ops, &c);

	taproot_pipeline_end_round(p);
	return n;
}

void taproot_pipeline_end_round(struct taproot_pipeline *p)
{
	if (p->causal)
		tp_causal_end_round(p->causal);
	tp_ktables_tick(p->ktables);
}

void taproot_pipeline_flush(struct taproot_pipeline *p, bool final)
{
	if (p->causal)
		tp_causal_flush(p->causal, final);
	/* Last: the intervals just added may hold JIT frames to name. */
	tp_pl_name_late(p);
}
