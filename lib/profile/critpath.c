// SPDX-License-Identifier: GPL-2.0
/*
 * The critical path of one thread through a timeline (Canopy's and
 * wPerf's question: what bounded the time this thread took?).
 *
 * The walk goes backwards over stretches of time, each (thread, lo, hi]
 * held in a work list: every instant of the target's span is attributed
 * exactly once, to whichever thread the chain of wakeups leads to at that
 * instant, so the profile's total is the span's length (taproot_critpath_
 * stats.total_ns says it). Within a stretch, the thread's events are read
 * from the latest back:
 *  - running (between a switch-in and the next switch-out): the time is
 *    split evenly between the thread's samples in it; with none (a stretch
 *    shorter than the sampling period mostly has none: between
 *    preemptions, before a wait), it goes to the thread's sample nearest
 *    in time, within CP_NEAR_NS; with none near either, to "[running]"
 *    over the stack the thread was next seen with (its switch-out, or the
 *    waking it was doing when the stretch was reached through it), so that
 *    running time never reads as the blocked or preempted stack it ended
 *    in;
 *  - runnable (woken, or preempted, until switched in): "[run queue]"
 *    over the stack it left the CPU with; a preempted thread whose stack
 *    has no user frame (its walk failed: a mapping not uploaded yet, a
 *    stale one) over its nearest sample's instead, as a running stretch's,
 *    so that a failed walk does not take the time from the code that ran;
 *  - blocked until a thread woke it: that part of the stretch is handed
 *    to the waker, from the waking back to the start of the wait (the
 *    waker is running at the waking; what it did before, blocked or not,
 *    is walked the same way). Times strictly decrease along a chain, and
 *    stretches split into disjoint parts, so the walk ends;
 *  - blocked until an interrupt woke it, or with no waking recorded: the
 *    chain ends there, "[hardirq]", "[softirq]", "[nmi]", "[timer]" (an
 *    interrupt whose stack shows a timer's expiry) or "[unknown]".
 */
#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "profile/timeline-private.h"
#include "util/util.h"

#define CP_MAX_FRAMES		1024
#define CP_MAX_STEPS		(1U << 22)
#define CP_LABELS		4
/* How far, in time and in a thread's events, a running stretch's nearest sample is looked for. */
#define CP_NEAR_NS		100000000ULL
#define CP_NEAR_EVENTS		256

struct cp_range {
	uint32_t pid, tid;
	uint64_t lo, hi;		/* the stretch (lo, hi] */
	uint32_t fallback;		/* the thread's stack at hi (stack id + 1), 0: none */
};

struct cp {
	const struct taproot_timeline *t;
	const struct tl_view *v;
	struct taproot_profile *p;
	struct taproot_critpath_stats *st;
	struct cp_range *work;
	size_t nr, alloc;
	bool *on_path;			/* by view thread */
	struct taproot_profile_frame frames[CP_MAX_FRAMES];
	int err;
};

void taproot_profile_desc_critpath(struct taproot_profile_desc *desc)
{
	static const struct taproot_profile_value_type types[] = {
		{ "critical", "nanoseconds" },
	};

	memset(desc, 0, sizeof(*desc));
	desc->sample_types = types;
	desc->nr_sample_types = 1;
	desc->default_sample_type = "critical";
}

static int cp_push(struct cp *cp, const struct cp_range *r)
{
	if (tp_grow((void **)&cp->work, &cp->alloc, cp->nr + 1, sizeof(cp->work[0])) < 0)
		return -ENOMEM;
	cp->work[cp->nr++] = *r;
	return 0;
}

/*
 * Add @ns on the path, to thread @tid of @pid: the stack @stack_id under
 * the marker @marker (NULL: none; with no stack either, "[running]").
 */
static void cp_add(struct cp *cp, uint32_t pid, uint32_t tid, const char *marker,
		   uint32_t stack_id, uint64_t ns)
{
	const struct tp_frames *s = tl_stack_get(cp->t, stack_id);
	const struct tl_thread *th = tl_thread_get(cp->t, tid);
	struct taproot_profile_label l[CP_LABELS];
	int64_t value = (int64_t)ns;
	size_t nf = 0;
	int err;

	if (!ns)
		return;
	if (marker || !s)
		cp->frames[nf++] = (struct taproot_profile_frame){
			.function = marker ? marker : "[running]" };
	for (size_t i = 0; s && i < s->nr && nf < CP_MAX_FRAMES; i++)
		cp->frames[nf++] = s->frames[i];
	cp->frames[nf - 1].inlined = false;	/* cut short: keep the array valid */
	l[0] = TAPROOT_LABEL_STR("thread", th && th->thread_comm[0] ? th->thread_comm : "?");
	l[1] = TAPROOT_LABEL_NUM("tid", tid);
	l[2] = TAPROOT_LABEL_NUM("pid", pid);
	l[3] = TAPROOT_LABEL_STR("comm", tl_process_name(cp->t, pid)[0] ?
					 tl_process_name(cp->t, pid) : l[0].str);
	err = taproot_profile_add(cp->p, cp->frames, nf, l, CP_LABELS, &value);
	if (err < 0 && !cp->err)
		cp->err = err;
}

/* Whether frames of @s show a timer's expiry (an interrupt's waking). */
static bool cp_timer_stack(const struct tp_frames *s)
{
	static const char *const timer_fns[] = {
		"hrtimer_wakeup", "__hrtimer_run_queues", "hrtimer_run_softirq",
		"process_timeout", "call_timer_fn", "__run_timers", "run_timer_softirq",
	};

	for (size_t i = 0; s && i < s->nr; i++)
		for (size_t j = 0; j < sizeof(timer_fns) / sizeof(timer_fns[0]); j++)
			if (s->frames[i].function && !strcmp(s->frames[i].function, timer_fns[j]))
				return true;
	return false;
}

/* Where the chain ends at off-CPU interval @e: its marker, the time counted in @st. */
static const char *cp_end(struct cp *cp, const struct tl_event *e, uint64_t ns)
{
	switch (e->wake) {
	case TP_WAKE_HARDIRQ:
	case TP_WAKE_SOFTIRQ:
		if (cp_timer_stack(tl_stack_get(cp->t, e->waker_stack))) {
			cp->st->timer_ns += ns;
			return "[timer]";
		}
		cp->st->irq_ns += ns;
		return e->wake == TP_WAKE_HARDIRQ ? "[hardirq]" : "[softirq]";
	case TP_WAKE_NMI:
		cp->st->irq_ns += ns;
		return "[nmi]";
	default:
		cp->st->unknown_ns += ns;
		return "[unknown]";
	}
}

/*
 * The stack id of @th's sample nearest to the stretch (@s, @t], which holds
 * none: looked for before it from event @k (the last one at or before @t;
 * -1: none) back, and after it from @k + 1 on, within CP_NEAR_NS and
 * CP_NEAR_EVENTS each way. 0: none.
 */
static uint32_t cp_near_sample(const struct cp *cp, const struct tl_vthread *th, ptrdiff_t k,
			       uint64_t s, uint64_t t)
{
	uint64_t best = CP_NEAR_NS + 1;
	uint32_t stack = 0;

	for (ptrdiff_t i = k, n = 0; i >= 0 && n < CP_NEAR_EVENTS; i--, n++) {
		const struct tl_event *e = &cp->t->ev[cp->v->idx[th->first + (size_t)i]];

		if (e->t0 + CP_NEAR_NS < s)
			break;
		if (e->kind == TL_SAMPLE && e->t0 <= s) {
			best = s - e->t0;
			stack = e->stack;
			break;
		}
	}
	for (size_t i = (size_t)(k + 1), n = 0; i < th->nr && n < CP_NEAR_EVENTS; i++, n++) {
		const struct tl_event *e = &cp->t->ev[cp->v->idx[th->first + i]];

		if (e->t0 > t && e->t0 - t >= best)
			break;
		if (e->kind == TL_SAMPLE && e->t0 > t)
			return e->stack;
	}
	return stack;
}

/*
 * The running stretch (@s, @t] of thread @th, whose events up to index @k
 * (of the thread's; -1: none) hold its samples: split between them, or
 * to its nearest sample, or to "[running]" over @fallback.
 */
static void cp_running(struct cp *cp, const struct tl_vthread *th, ptrdiff_t k, uint64_t s,
		       uint64_t t, uint32_t fallback)
{
	size_t n = 0, first = 0;
	uint64_t each, extra;
	uint32_t near;

	cp->st->running_ns += t - s;
	for (ptrdiff_t i = k; i >= 0; i--) {
		const struct tl_event *e = &cp->t->ev[cp->v->idx[th->first + (size_t)i]];

		if (e->t0 <= s)
			break;
		if (e->kind == TL_SAMPLE && e->t0 <= t) {
			n++;
			first = (size_t)i;
		}
	}
	if (!n) {
		near = cp_near_sample(cp, th, k, s, t);
		if (near)
			cp_add(cp, th->pid, th->tid, NULL, near, t - s);
		else
			cp_add(cp, th->pid, th->tid, "[running]", fallback, t - s);
		return;
	}
	each = (t - s) / n;
	extra = (t - s) - each * n;
	for (size_t i = first; i <= (size_t)k; i++) {
		const struct tl_event *e = &cp->t->ev[cp->v->idx[th->first + i]];

		if (e->kind == TL_SAMPLE && e->t0 > s && e->t0 <= t) {
			cp_add(cp, th->pid, th->tid, NULL, e->stack, each + extra);
			extra = 0;
		}
	}
}

/* The index (of @th's events) of the last event at or before @t; -1: none. */
static ptrdiff_t cp_last_before(const struct cp *cp, const struct tl_vthread *th, uint64_t t)
{
	size_t lo = 0, hi = th->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp->t->ev[cp->v->idx[th->first + mid]].t0 <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* Whether stack @id holds a frame of user code. */
static bool cp_user_stack(const struct cp *cp, uint32_t id)
{
	const struct tp_frames *s = tl_stack_get(cp->t, id);

	for (size_t i = 0; s && i < s->nr; i++)
		if (!s->frames[i].is_kernel)
			return true;
	return false;
}

/*
 * The part of off-CPU interval @e, event @j of thread @th, in (@lo, *@t]:
 * run queue, then the wait.
 */
static int cp_off(struct cp *cp, const struct cp_range *r, const struct tl_vthread *th,
		  ptrdiff_t j, const struct tl_event *e, uint64_t *t)
{
	uint64_t s = e->t0 > r->lo ? e->t0 : r->lo;
	bool woken = e->t_wake && e->t_wake >= e->t0 && e->t_wake <= tl_off_end(cp->v, e);
	uint64_t ready = woken ? e->t_wake : tl_off_end(cp->v, e);
	bool preempted = e->state[0] == 'R' && !e->new_task;

	if (e->new_task || e->state[0] == 'R')
		ready = e->t0;
	if (*t > ready) {
		uint64_t a = ready > s ? ready : s;
		uint32_t stack = e->stack, near;

		if (preempted && !cp_user_stack(cp, stack)) {
			near = cp_near_sample(cp, th, j, e->t0, e->t0);
			if (near && cp_user_stack(cp, near))
				stack = near;
		}
		cp->st->runqueue_ns += *t - a;
		cp_add(cp, e->pid, e->tid, "[run queue]", stack, *t - a);
		*t = a;
	}
	if (*t <= s)
		return 0;
	if (woken && e->wake == TP_WAKE_THREAD && e->waker_tid && e->waker_tid != e->tid) {
		struct cp_range w = { .pid = e->waker_pid, .tid = e->waker_tid, .lo = s, .hi = *t,
				      .fallback = e->waker_stack };

		*t = s;
		return cp_push(cp, &w);
	}
	cp_add(cp, e->pid, e->tid, cp_end(cp, e, *t - s), e->stack, *t - s);
	*t = s;
	return 0;
}

/* Walk stretch @r of its thread back from its end, handing waits to wakers. */
static int cp_range(struct cp *cp, const struct cp_range *r)
{
	const struct tl_vthread *th = tl_view_thread(cp->v, r->pid, r->tid);
	uint32_t fallback = r->fallback;
	uint64_t t = r->hi;
	ptrdiff_t k;

	if (!th) {
		cp->st->unknown_ns += r->hi - r->lo;
		cp_add(cp, r->pid, r->tid, "[unknown]", 0, r->hi - r->lo);
		return 0;
	}
	cp->on_path[th - cp->v->th] = true;
	k = cp_last_before(cp, th, t);
	while (t > r->lo) {
		const struct tl_event *off = NULL;
		ptrdiff_t j = k;
		uint64_t from;

		if (++cp->st->steps > CP_MAX_STEPS) {
			cp->st->truncated = true;
			return 0;
		}
		/* The latest off-CPU interval that started before t. */
		for (; j >= 0; j--) {
			off = &cp->t->ev[cp->v->idx[th->first + (size_t)j]];
			if (off->kind == TL_OFF && off->t0 < t)
				break;
			off = NULL;
		}
		if (off && t <= tl_off_end(cp->v, off)) {
			int err = cp_off(cp, r, th, j, off, &t);

			if (err < 0)
				return err;
			fallback = off->stack;	/* where the run before it ended */
			k = j - 1;
			continue;
		}
		from = off ? tl_off_end(cp->v, off) : th->born;
		if (from < r->lo)
			from = r->lo;
		if (from >= t) {		/* before the thread was seen */
			cp->st->unknown_ns += t - r->lo;
			cp_add(cp, r->pid, r->tid, "[unknown]", 0, t - r->lo);
			return 0;
		}
		cp_running(cp, th, k, from, t, fallback);
		t = from;
		k = j;
	}
	return 0;
}

/* The critical path of @tid in view @v of @t, into @p; as taproot_timeline_critical_path(). */
static int cp_walk(struct taproot_timeline *t, const struct tl_view *v, uint32_t tid,
		   struct taproot_profile *p, struct taproot_critpath_stats *st)
{
	const struct tl_thread *who = tl_thread_get(t, tid);
	const struct tl_vthread *th;
	struct cp cp = { .t = t, .v = v, .p = p, .st = st };
	struct cp_range r;
	int err;

	memset(st, 0, sizeof(*st));
	if (!who)
		return tp_err(-ENOENT, "critical path: thread %u was not seen in the session", tid);
	th = tl_view_thread(v, who->pid, tid);
	if (!th)
		return tp_err(-ENOENT, "critical path: thread %u has no event in the window", tid);
	cp.on_path = calloc(v->nr_th, sizeof(bool));
	r = (struct cp_range){ .pid = who->pid, .tid = tid, .lo = th->born,
			       .hi = th->died < v->end ? th->died : v->end };
	st->total_ns = r.hi > r.lo ? r.hi - r.lo : 0;
	err = cp.on_path ? cp_push(&cp, &r) : -ENOMEM;
	while (!err && cp.nr && !st->truncated) {
		r = cp.work[--cp.nr];
		err = cp_range(&cp, &r);
	}
	if (!err)
		err = cp.err;
	for (size_t i = 0; cp.on_path && i < v->nr_th; i++)
		st->threads += cp.on_path[i];
	if (err == -ENOMEM)
		err = tp_err(-ENOMEM, NULL);
	free(cp.on_path);
	free(cp.work);
	return err;
}

int taproot_timeline_critical_path(struct taproot_timeline *t, uint32_t tid,
				   struct taproot_profile *p, struct taproot_critpath_stats *st)
{
	struct tl_view v;
	int err = tl_view_build(t, &v);

	if (err < 0) {
		memset(st, 0, sizeof(*st));
		return err;
	}
	err = cp_walk(t, &v, tid, p, st);
	tl_view_free(&v);
	return err;
}

/* @st plus @add. */
static void cp_stats_add(struct taproot_critpath_stats *st, const struct taproot_critpath_stats *add)
{
	st->total_ns += add->total_ns;
	st->running_ns += add->running_ns;
	st->runqueue_ns += add->runqueue_ns;
	st->irq_ns += add->irq_ns;
	st->timer_ns += add->timer_ns;
	st->unknown_ns += add->unknown_ns;
	st->threads += add->threads;
	st->steps += add->steps;
	st->truncated |= add->truncated;
}

int taproot_timeline_write_critpath(struct taproot_timeline *t, const uint32_t *tids, size_t nr,
				    const char *path, const char *const *comments,
				    size_t nr_comments, struct taproot_critpath_stats *st)
{
	struct taproot_critpath_stats one;
	struct taproot_profile_desc desc;
	struct tl_view v;
	struct taproot_profile *p;
	struct timespec now;
	int err = 0;

	memset(st, 0, sizeof(*st));
	taproot_profile_desc_critpath(&desc);
	desc.comments = comments;
	desc.nr_comments = nr_comments;
	clock_gettime(CLOCK_REALTIME, &now);
	desc.duration_nanos = (int64_t)(t->st.last_ns - t->st.first_ns);
	desc.time_nanos = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - desc.duration_nanos;
	err = taproot_profile_new(&desc, &p);
	if (err < 0)
		return err;
	/* One view for every thread's walk: it sorts the whole timeline. */
	err = tl_view_build(t, &v);
	if (err < 0) {
		taproot_profile_free(p);
		return err;
	}
	for (size_t i = 0; i < nr && !err; i++) {
		err = cp_walk(t, &v, tids[i], p, &one);
		/* Of several threads, one without events in the window adds nothing. */
		if (err == -ENOENT && nr > 1)
			err = 0;
		cp_stats_add(st, &one);
	}
	tl_view_free(&v);
	if (!err)
		err = taproot_pprof_write_file(p, path);
	taproot_profile_free(p);
	return err;
}
