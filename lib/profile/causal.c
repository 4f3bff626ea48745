// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU join: SWITCH and WAKING records in, off-CPU intervals out,
 * into three profiles (offcpu, offwake, schedlat).
 *
 * An interval is named by (tid, seq), as the module names it (see the
 * "Causal events" part of include/uapi/linux/taproot.h): its switch-out,
 * its waking and its switch-in carry the same pair, so they are joined by
 * it and never by adjacency. The records of one interval come from up to
 * three CPUs; the rings are merged by time within a consume round only, so
 * a record can arrive a round late. An interval is therefore added to the
 * profiles at the end of the round after the one in which its switch-in
 * arrived, or at a flush.
 *
 * The blocked stack is resolved (unwound, symbolized) when the switch-out
 * arrives, while the process's maps are those it blocked with; the waker's
 * when the waking arrives. Both are copied into the interval.
 *
 * Nothing is guessed: an interval missing an end (lost records, a task
 * that exited, a session that ended) is counted as unpaired and adds
 * nothing; a waking outside its interval is counted and ignored.
 *
 * Memory is bounded by the number of intervals held (max_intervals) and
 * the bytes of their stacks (CZ_MAX_BYTES); a record that would exceed
 * either is dropped and counted (table_full).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/causal.h"
#include "profile/frames.h"
#include "util/hash.h"
#include "util/util.h"

#define CZ_MAX_INTERVALS	16384
#define CZ_MAX_OPEN_NS		(600ULL * 1000000000ULL)
#define CZ_MAX_BYTES		(64u << 20)	/* stacks held */
#define CZ_MAX_FRAMES		4096		/* blocked + "--" + waker */
#define CZ_LABELS_MAX		32		/* an interval's, its process's, the rules' */

/* What an interval has seen. */
#define CZ_OUT		(1U << 0)
#define CZ_WAKE		(1U << 1)
#define CZ_IN		(1U << 2)

struct cz_ival {
	struct cz_ival *next;		/* hash chain */
	uint32_t tid, pid;
	uint64_t seq;
	unsigned int have;		/* CZ_* */
	uint64_t t_out, t_wake, t_in;
	uint32_t wake_capture;		/* ns the waker's stack capture delayed the wakeup */
	uint64_t round_in;		/* the round the switch-in arrived in */
	uint64_t round_new;		/* the round the interval was first seen in */
	uint32_t one_in;
	bool wake_new;			/* a new task's first wakeup */
	char state[3];			/* "S", "D", "R", "R+" */
	char thread_comm[17];
	char comm[17];			/* the process's */
	char waker[40];			/* the waking thread's comm, "[hardirq]", ... */
	uint32_t waker_pid, waker_tid;	/* 0: an interrupt */
	enum tp_wake_kind wake_kind;
	struct tp_frames *blocked, *waker_stack;
	struct tp_labels *labels;	/* of the process, a reference; NULL none */
	bool dropped;			/* by the relabel rules, before its stacks */
};

struct tp_causal {
	struct tp_causal_opts o;
	struct cz_ival **buckets;
	size_t nbuckets;		/* a power of two */
	size_t count, bytes;
	uint64_t round;
	uint64_t last_time;		/* latest record time seen */
	struct taproot_profile_frame *scratch;	/* CZ_MAX_FRAMES */
	struct taproot_causal_stats st;
};

int tp_causal_new(const struct tp_causal_opts *opts, struct tp_causal **cp)
{
	struct tp_causal *c;

	*cp = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return tp_err(-ENOMEM, NULL);
	c->o = *opts;
	if (!c->o.max_intervals)
		c->o.max_intervals = CZ_MAX_INTERVALS;
	if (!c->o.max_open_ns)
		c->o.max_open_ns = CZ_MAX_OPEN_NS;
	c->nbuckets = 1;
	while (c->nbuckets < c->o.max_intervals)
		c->nbuckets <<= 1;
	c->buckets = calloc(c->nbuckets, sizeof(c->buckets[0]));
	c->scratch = calloc(CZ_MAX_FRAMES, sizeof(c->scratch[0]));
	if (!c->buckets || !c->scratch) {
		tp_causal_free(c);
		return tp_err(-ENOMEM, NULL);
	}
	*cp = c;
	return 0;
}

static void cz_free_ival(struct tp_causal *c, struct cz_ival *v)
{
	if (v->blocked)
		c->bytes -= v->blocked->bytes;
	if (v->waker_stack)
		c->bytes -= v->waker_stack->bytes;
	free(v->blocked);
	free(v->waker_stack);
	tp_labels_put(v->labels);
	free(v);
	c->count--;
}

void tp_causal_free(struct tp_causal *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->buckets && i < c->nbuckets; i++) {
		struct cz_ival *v = c->buckets[i], *next;

		for (; v; v = next) {
			next = v->next;
			cz_free_ival(c, v);
		}
	}
	free(c->buckets);
	free(c->scratch);
	free(c);
}

/* ------------------------------------------------------------ table */

static size_t cz_bucket(const struct tp_causal *c, uint32_t tid, uint64_t seq)
{
	return (size_t)(tp_hash_fin(tp_hash_mix(tp_hash_mix(0, tid), seq)) & (c->nbuckets - 1));
}

static struct cz_ival *cz_find(struct tp_causal *c, uint32_t tid, uint64_t seq)
{
	struct cz_ival *v = c->buckets[cz_bucket(c, tid, seq)];

	for (; v; v = v->next)
		if (v->tid == tid && v->seq == seq)
			return v;
	return NULL;
}

/* A new empty interval, or NULL (counted) when the table is full. */
static struct cz_ival *cz_add(struct tp_causal *c, uint32_t tid, uint32_t pid, uint64_t seq)
{
	struct cz_ival *v;
	size_t b;

	if (c->count >= c->o.max_intervals || !(v = calloc(1, sizeof(*v)))) {
		c->st.table_full++;
		return NULL;
	}
	v->tid = tid;
	v->pid = pid;
	v->seq = seq;
	v->one_in = 1;
	v->round_new = c->round;
	b = cz_bucket(c, tid, seq);
	v->next = c->buckets[b];
	c->buckets[b] = v;
	c->count++;
	return v;
}

static void cz_remove(struct tp_causal *c, struct cz_ival *v)
{
	struct cz_ival **pp = &c->buckets[cz_bucket(c, v->tid, v->seq)];

	while (*pp != v)
		pp = &(*pp)->next;
	*pp = v->next;
	cz_free_ival(c, v);
}

/* ------------------------------------------------------------ stacks */

/* A copy of @nr frames, or NULL (counted) when memory is short or over the bound. */
static struct tp_frames *cz_copy(struct tp_causal *c, const struct taproot_profile_frame *f,
				 size_t nr)
{
	/* Added to its pipeline's profiles only: the keys stay (frames.h). */
	struct tp_frames *s = tp_frames_copy(f, nr, CZ_MAX_BYTES - c->bytes, true);

	if (!s) {
		c->st.table_full++;
		return NULL;
	}
	c->bytes += s->bytes;
	return s;
}

/*
 * Resolve and copy the snapshot that follows the fixed part @fixed of
 * @rec, when @has_snap. NULL without one (or when it could not be kept).
 * With @owner, the interval of the task, its process's name and labels go
 * there, and no stack is resolved for an interval the rules drop.
 */
static struct tp_frames *cz_snap(struct tp_causal *c, const struct taproot_rec_header *rec,
				size_t fixed, bool has_snap, uint32_t pid, uint32_t tid,
				const char *thread_comm, struct cz_ival *owner)
{
	const struct taproot_stack_snap *snap = NULL;
	struct tp_causal_stack rs = { 0 };
	size_t len = 0;

	if (has_snap) {
		if (rec->size < fixed + sizeof(*snap)) {
			c->st.bad_records++;
			return NULL;
		}
		snap = (const struct taproot_stack_snap *)((const char *)rec + fixed);
		len = rec->size - fixed;
	}
	if (c->o.resolve(c->o.arg, pid, tid, thread_comm, owner, snap, len, &rs) < 0) {
		tp_labels_put(rs.labels);
		c->st.bad_records++;
		return NULL;
	}
	if (owner) {
		if (rs.comm)
			snprintf(owner->comm, sizeof(owner->comm), "%s", rs.comm);
		tp_labels_put(owner->labels);
		owner->labels = rs.labels;
		owner->dropped = rs.dropped;
	} else {
		tp_labels_put(rs.labels);
	}
	if (!snap || !rs.nr)
		return NULL;
	return cz_copy(c, rs.frames, rs.nr);
}

/* ------------------------------------------------------------ records */

static void cz_comm(char *dst, const char src[16])
{
	memcpy(dst, src, 16);
	dst[16] = '\0';
}

/*
 * The state label: preempted "R+", running (a yield) "R", TASK_INTERRUPTIBLE
 * "S", any other TASK_* bit (uninterruptible, killable, stopped, traced,
 * parked, ...) "D".
 */
static void cz_state(char *dst, bool preempt, uint32_t state)
{
	const char *s = preempt ? "R+" : !state ? "R" : (state & 0x1) ? "S" : "D";

	snprintf(dst, 3, "%s", s);
}

static void cz_switch_out(struct tp_causal *c, const struct taproot_rec_switch *r)
{
	struct cz_ival *v = cz_find(c, r->prev_tid, r->prev_seq);
	char thread_comm[17];

	c->st.switch_outs++;
	if (v && (v->have & CZ_OUT)) {
		if (v->t_out == r->hdr.time_ns && v->pid == r->prev_pid) {
			c->st.duplicates++;
			return;
		}
		/*
		 * Another switch-out for the same (tid, seq): the tid was reused
		 * by a new task whose count of switches caught up with an
		 * interval of the old one that never ended (the old task
		 * exited). The old interval is over, unpaired.
		 */
		c->st.unpaired_no_in++;
		cz_remove(c, v);
		v = NULL;
	}
	if (!v)
		v = cz_add(c, r->prev_tid, r->prev_pid, r->prev_seq);
	if (!v)
		return;
	v->have |= CZ_OUT;
	v->pid = r->prev_pid;
	v->t_out = r->hdr.time_ns;
	/* The larger, should the switch-in have come first (another CPU). */
	if (!(v->have & CZ_IN) || r->sched_one_in > v->one_in)
		v->one_in = r->sched_one_in ? r->sched_one_in : 1;
	cz_state(v->state, r->hdr.flags & TAPROOT_SWITCH_F_PREEMPT, r->prev_state);
	cz_comm(thread_comm, r->prev_comm);
	snprintf(v->thread_comm, sizeof(v->thread_comm), "%s", thread_comm);
	v->blocked = cz_snap(c, &r->hdr, sizeof(*r), r->hdr.flags & TAPROOT_SWITCH_F_STACKS,
			     r->prev_pid, r->prev_tid, thread_comm, v);
	/* A waking that arrived first (another CPU, an earlier round) must be inside. */
	if ((v->have & CZ_WAKE) && v->t_wake < v->t_out) {
		c->st.wakings_outside++;
		v->have &= ~CZ_WAKE;
		if (v->waker_stack)
			c->bytes -= v->waker_stack->bytes;
		free(v->waker_stack);
		v->waker_stack = NULL;
	}
}

static void cz_switch_in(struct tp_causal *c, const struct taproot_rec_switch *r)
{
	struct cz_ival *v = cz_find(c, r->next_tid, r->next_seq);

	c->st.switch_ins++;
	if (v && (v->have & CZ_IN)) {
		c->st.duplicates++;
		return;
	}
	if (!v)
		v = cz_add(c, r->next_tid, r->next_pid, r->next_seq);
	if (!v)
		return;
	v->have |= CZ_IN;
	v->t_in = r->hdr.time_ns;
	v->round_in = c->round;
	/*
	 * The module selects (tid, seq) when a hash of it falls below
	 * 2^32 / one_in, so a selection at one value implies it at every
	 * smaller one. If one_in changed while the task was off CPU (taprootd
	 * adapts it), both ends were recorded with probability 1 / the larger
	 * of the two: that is the interval's weight. (An interval whose end
	 * was not selected after a rise stays unpaired, and is counted so.)
	 */
	if (r->sched_one_in > v->one_in)
		v->one_in = r->sched_one_in;
}

static void cz_waking(struct tp_causal *c, const struct taproot_rec_waking *r)
{
	struct cz_ival *v = cz_find(c, r->target_tid, r->target_seq);
	uint16_t fl = r->hdr.flags;
	char comm[17];

	c->st.wakings++;
	if (v && (v->have & CZ_WAKE)) {
		c->st.duplicates++;
		return;
	}
	if (v && (((v->have & CZ_OUT) && r->hdr.time_ns < v->t_out) ||
		  ((v->have & CZ_IN) && r->hdr.time_ns > v->t_in))) {
		c->st.wakings_outside++;
		return;
	}
	if (!v)
		v = cz_add(c, r->target_tid, r->target_pid, r->target_seq);
	if (!v)
		return;
	v->have |= CZ_WAKE;
	v->t_wake = r->hdr.time_ns;
	v->wake_capture = r->capture_ns;
	v->wake_new = fl & TAPROOT_WAKING_F_NEW;
	cz_comm(comm, r->waker_comm);
	v->waker_pid = r->waker_pid;
	v->waker_tid = r->waker_tid;
	v->wake_kind = fl & TAPROOT_WAKING_F_NMI ? TP_WAKE_NMI :
		       fl & TAPROOT_WAKING_F_HARDIRQ ? TP_WAKE_HARDIRQ :
		       fl & TAPROOT_WAKING_F_SOFTIRQ ? TP_WAKE_SOFTIRQ : TP_WAKE_THREAD;
	if (fl & TAPROOT_WAKING_F_NMI)
		snprintf(v->waker, sizeof(v->waker), "[nmi]");
	else if (fl & TAPROOT_WAKING_F_HARDIRQ)
		snprintf(v->waker, sizeof(v->waker), "[hardirq]");
	else if (fl & TAPROOT_WAKING_F_SOFTIRQ)
		snprintf(v->waker, sizeof(v->waker), "[softirq]");
	else if (comm[0])
		snprintf(v->waker, sizeof(v->waker), "%s", comm);
	else
		snprintf(v->waker, sizeof(v->waker), "[tid %" PRIu32 "]", r->waker_tid);
	/* A new task has no switch-out to name its process: the waking does. */
	if (v->wake_new && !(v->have & CZ_OUT))
		cz_snap(c, &r->hdr, sizeof(*r), false, r->target_pid, r->target_tid, "", v);
	/* The rules drop the interval: its waker's stack is not wanted. */
	if (v->dropped)
		return;
	/* An interrupt's snapshot holds its kernel stack only: no process to read. */
	if (fl & (TAPROOT_WAKING_F_NMI | TAPROOT_WAKING_F_HARDIRQ | TAPROOT_WAKING_F_SOFTIRQ) ||
	    !r->waker_pid)
		v->waker_stack = cz_snap(c, &r->hdr, sizeof(*r), fl & TAPROOT_WAKING_F_STACKS,
					 0, 0, comm, NULL);
	else
		v->waker_stack = cz_snap(c, &r->hdr, sizeof(*r), fl & TAPROOT_WAKING_F_STACKS,
					 r->waker_pid, r->waker_tid, comm, NULL);
}

void tp_causal_record(struct tp_causal *c, const struct taproot_rec_header *rec)
{
	if (rec->time_ns > c->last_time)
		c->last_time = rec->time_ns;
	if (rec->type == TAPROOT_REC_SWITCH) {
		const struct taproot_rec_switch *r = (const struct taproot_rec_switch *)rec;

		if (rec->size < sizeof(*r)) {
			c->st.bad_records++;
			return;
		}
		/* Out first: a task switched out and in by one record is not possible. */
		if (rec->flags & TAPROOT_SWITCH_F_PREV)
			cz_switch_out(c, r);
		if (rec->flags & TAPROOT_SWITCH_F_NEXT)
			cz_switch_in(c, r);
	} else if (rec->type == TAPROOT_REC_WAKING) {
		const struct taproot_rec_waking *r = (const struct taproot_rec_waking *)rec;

		if (rec->size < sizeof(*r)) {
			c->st.bad_records++;
			return;
		}
		cz_waking(c, r);
	}
}

/* ------------------------------------------------------------ output */

static const struct taproot_profile_frame cz_sep = { .function = "--" };
static const struct taproot_profile_frame cz_nostack = { .function = "[no stack]" };
static const struct taproot_profile_frame cz_newtask = { .function = "[new task]" };

/*
 * The labels of interval @v into @l (room for CZ_LABELS_MAX): its own
 * (@waker adds the waker's), its process's, the static ones, then what the
 * relabel rules made of them. False when the rules drop the sample (counted).
 */
static bool cz_labels(struct tp_causal *c, const struct cz_ival *v, bool waker,
		      struct taproot_profile_label *l, size_t *n)
{
	*n = 0;
	l[(*n)++] = TAPROOT_LABEL_NUM("pid", v->pid);
	l[(*n)++] = TAPROOT_LABEL_STR("comm", v->comm[0] ? v->comm : v->thread_comm);
	l[(*n)++] = TAPROOT_LABEL_STR("thread_comm", v->thread_comm);
	if (c->o.label_tid)
		l[(*n)++] = TAPROOT_LABEL_NUM("tid", v->tid);
	l[(*n)++] = TAPROOT_LABEL_STR("state", v->state);
	if (waker)
		l[(*n)++] = TAPROOT_LABEL_STR("waker", v->waker);
	if (!c->o.labeling)
		return true;
	return taproot_labeling_finish(c->o.labeling, v->labels, l, n, CZ_LABELS_MAX,
				       &c->st.relabel_dropped, &c->st.relabel_skipped);
}

static void cz_add_sample(struct taproot_profile *p, const struct taproot_profile_frame *f,
			  size_t nr, const struct taproot_profile_label *l, size_t nl,
			  uint64_t ns, uint32_t one_in)
{
	int64_t values[2] = { (int64_t)ns, (int64_t)one_in };

	taproot_profile_add(p, f, nr, l, nl, values);
}

/*
 * The off-wake stack, leaf first as pprof takes it: the waker's frames
 * root first, "--", then the blocked frames leaf first. Read from the
 * root of a flame graph up: the blocked stack, the separator, then the
 * waker's stack upside down, its leaf (the wakeup) next to the separator
 * and its root at the top, as bcc's offwaketime draws it.
 */
static size_t cz_offwake_stack(struct tp_causal *c, const struct cz_ival *v,
			       const struct taproot_profile_frame *blocked, size_t nb)
{
	struct taproot_profile_frame *f = c->scratch;
	size_t n = 0;

	if (v->waker_stack) {
		const struct tp_frames *w = v->waker_stack;

		/*
		 * Reversed frame by frame, an inline chain (frames marked
		 * inlined into the next) would point the wrong way: reverse
		 * whole locations, keeping each chain's own order.
		 */
		for (size_t end = w->nr; end > 0 && n + 1 < CZ_MAX_FRAMES;) {
			size_t start = end - 1;

			while (start > 0 && w->frames[start - 1].inlined)
				start--;
			for (size_t i = start; i < end && n + 1 < CZ_MAX_FRAMES; i++)
				f[n++] = w->frames[i];
			if (f[n - 1].inlined)	/* cut short: keep the array valid */
				f[n - 1].inlined = false;
			end = start;
		}
	} else {
		f[n++] = (struct taproot_profile_frame){ .function = v->waker };
	}
	f[n++] = cz_sep;
	for (size_t i = 0; i < nb && n < CZ_MAX_FRAMES; i++)
		f[n++] = blocked[i];
	if (f[n - 1].inlined)
		f[n - 1].inlined = false;
	return n;
}

/*
 * Interval @v to the timeline: ended (@open false: both ends, or a new
 * task's first run), or still open at the end of the session.
 */
static void cz_timeline(struct tp_causal *c, const struct cz_ival *v, bool open)
{
	bool woken = (v->have & CZ_WAKE) && v->t_wake >= v->t_out &&
		     (open || v->t_wake <= v->t_in);
	struct tp_timeline_interval iv = {
		.pid = v->pid, .tid = v->tid, .comm = v->comm, .thread_comm = v->thread_comm,
		.state = v->state, .t_out = v->t_out, .t_in = open ? 0 : v->t_in,
		.t_wake = woken ? v->t_wake : 0, .wake = woken ? v->wake_kind : TP_WAKE_NONE,
		.waker_pid = v->waker_pid, .waker_tid = v->waker_tid,
		.blocked = v->blocked ? v->blocked->frames : NULL,
		.nr_blocked = v->blocked ? v->blocked->nr : 0,
		.waker = v->waker_stack ? v->waker_stack->frames : NULL,
		.nr_waker = v->waker_stack ? v->waker_stack->nr : 0,
	};

	if (!c->o.timeline)
		return;
	if (!(v->have & CZ_OUT)) {
		if (!v->wake_new || !(v->have & CZ_WAKE) || v->t_in < v->t_wake)
			return;
		/* A new task: waiting for a CPU from its first wakeup. */
		iv.state = "new";
		iv.t_out = v->t_wake;
	} else if (!open && v->t_in < v->t_out) {
		return;
	}
	tp_timeline_interval(c->o.timeline, &iv);
}

/* The interval @v has both ends (or is a new task's first run): add it. */
static void cz_emit(struct tp_causal *c, const struct cz_ival *v)
{
	struct taproot_profile_label l[CZ_LABELS_MAX];
	const struct taproot_profile_frame *bf = v->blocked ? v->blocked->frames : &cz_nostack;
	size_t nb = v->blocked ? v->blocked->nr : 1, nl;
	uint64_t one_in = v->one_in, cap, off;
	bool woken = (v->have & CZ_WAKE) && v->t_wake >= v->t_out && v->t_wake <= v->t_in;

	if (!(v->have & CZ_OUT)) {
		/* A new task: woken, then running, never switched out before. */
		if (v->wake_new && (v->have & CZ_WAKE) && v->t_in >= v->t_wake) {
			struct cz_ival nv = *v;

			snprintf(nv.state, sizeof(nv.state), "R");
			if (v->dropped) {
				c->st.relabel_dropped++;
				return;
			}
			c->st.new_tasks++;
			c->st.runqueue_ns += (v->t_in - v->t_wake) * one_in;
			if (cz_labels(c, &nv, false, l, &nl))
				cz_add_sample(c->o.schedlat, &cz_newtask, 1, l, nl,
					      (v->t_in - v->t_wake) * one_in, v->one_in);
		} else {
			c->st.unpaired_no_out++;
		}
		return;
	}
	if (v->t_in < v->t_out) {
		c->st.unpaired_no_out++;	/* ends that do not belong together */
		return;
	}
	if (v->dropped) {
		c->st.relabel_dropped++;
		return;
	}
	/*
	 * Capturing the waker's stacks held the wakeup back, and only for
	 * selected intervals, the ones measured: leave that time out, or
	 * short intervals would be overestimated by their own measurement.
	 */
	cap = woken ? v->wake_capture : 0;
	if (cap > v->t_in - v->t_wake)
		cap = v->t_in - v->t_wake;
	off = v->t_in - v->t_out - cap;
	c->st.joined++;
	if (!strcmp(v->state, "R+"))
		c->st.preempted++;
	c->st.blocked_ns += off * one_in;

	/* Run-queue delay: from the wakeup, or from the preemption. */
	if (woken || !strcmp(v->state, "R+")) {
		uint64_t from = woken ? v->t_wake + cap : v->t_out;

		c->st.runqueue_ns += (v->t_in - from) * one_in;
		if (cz_labels(c, v, false, l, &nl))
			cz_add_sample(c->o.schedlat, bf, nb, l, nl, (v->t_in - from) * one_in,
				      v->one_in);
	}
	if (off < c->o.min_block_ns) {
		c->st.filtered++;
		return;
	}
	if (cz_labels(c, v, false, l, &nl))
		cz_add_sample(c->o.offcpu, bf, nb, l, nl, off * one_in, v->one_in);
	if (woken) {
		c->st.woken++;
		c->st.wait_ns += (v->t_wake - v->t_out) * one_in;
		if (cz_labels(c, v, true, l, &nl))
			cz_add_sample(c->o.offwake, c->scratch, cz_offwake_stack(c, v, bf, nb), l,
				      nl, (v->t_wake - v->t_out) * one_in, v->one_in);
	}
}

/*
 * Walk the table: add the intervals completed before round @before (all
 * completed ones when @final), drop wakings without switch-out seen before
 * round @wake_before, and open intervals older than the limit (@age) or all
 * of them (@final).
 */
static void cz_sweep(struct tp_causal *c, uint64_t before, uint64_t wake_before, bool age,
		     bool final)
{
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct cz_ival *v = c->buckets[i], *next;

		for (; v; v = next) {
			uint64_t t0;

			next = v->next;
			if (v->have & CZ_IN) {
				if (!final && v->round_in >= before)
					continue;
				cz_timeline(c, v, false);
				cz_emit(c, v);
				cz_remove(c, v);
				continue;
			}
			/*
			 * A waking without its switch-out two rounds on: the
			 * switch-out precedes it by microseconds, so it is not
			 * coming (lost, or the interval is over and gone).
			 */
			if (!(v->have & CZ_OUT) && !final && v->round_new < wake_before) {
				c->st.wakings_outside++;
				cz_remove(c, v);
				continue;
			}
			t0 = v->have & CZ_OUT ? v->t_out : v->t_wake;
			if (final || (age && c->last_time > t0 &&
				      c->last_time - t0 > c->o.max_open_ns)) {
				if (final && (v->have & CZ_OUT))
					cz_timeline(c, v, true);
				if (v->have & CZ_OUT)
					c->st.unpaired_no_in++;
				else
					c->st.wakings_outside++;	/* a waking alone */
				cz_remove(c, v);
			}
		}
	}
}

void tp_causal_end_round(struct tp_causal *c)
{
	/* A waking of the round before had this whole round for its switch-out. */
	cz_sweep(c, c->round, c->round, false, false);
	c->round++;
}

void tp_causal_flush(struct tp_causal *c, bool final)
{
	/* The current round may still be read on: spare its wakings and the last. */
	cz_sweep(c, c->round + 1, c->round ? c->round - 1 : 0, true, final);
}

void tp_causal_set_timeline(struct tp_causal *c, struct taproot_timeline *t)
{
	for (size_t i = 0; c->o.timeline && i < c->nbuckets; i++)
		for (struct cz_ival *v = c->buckets[i]; v; v = v->next)
			if (v->have & CZ_OUT)
				cz_timeline(c, v, !(v->have & CZ_IN));
	c->o.timeline = t;
}

void tp_causal_stats(const struct tp_causal *c, struct taproot_causal_stats *st)
{
	*st = c->st;
	st->open = c->count;
}

uint32_t taproot_sched_one_in_adapt(uint32_t cur, uint32_t floor, double rate, uint32_t budget)
{
	uint32_t want = floor ? floor : 1;

	if (budget && rate > (double)budget * want) {
		/* The smallest power of two times floor that fits the budget. */
		while (want < TAPROOT_SCHED_ONE_IN_MAX && rate > (double)budget * want)
			want = want * 2 > TAPROOT_SCHED_ONE_IN_MAX ? TAPROOT_SCHED_ONE_IN_MAX : want * 2;
	}
	/*
	 * Up at once (the budget is what bounds the cost); down only when the
	 * rate fell to a quarter of what the current value allows, so that a
	 * rate hovering near a boundary does not make it flap.
	 */
	if (want >= cur || !budget || rate * 4 <= (double)budget * cur)
		return want;
	return cur;
}
