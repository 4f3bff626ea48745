// SPDX-License-Identifier: GPL-2.0
/*
 * A timeline as a Chrome trace: the JSON object format of the Trace Event
 * Format ("traceEvents", "stackFrames", "otherData", "displayTimeUnit").
 *
 * Each thread's states become consecutive "X" slices that never overlap:
 * "running" from a switch-in (or the thread's first moment in the window)
 * to the next switch-out, "blocked S"/"blocked D" from a switch-out to the
 * waking (or the switch-in, when no waking was recorded), "runnable" from
 * the waking (or a preemption's switch-out) to the switch-in. A waking by
 * a thread is a flow ("s" on the waker, inside its running slice at the
 * waking; "f" with "bp":"e" at the start of the wakee's runnable slice).
 * Samples are "i" instants. Every thread's events are written in time
 * order, and a slice's start never precedes the end of the one before it
 * (records of different CPUs may disagree by a clock's skew: a start is
 * moved up to the previous end).
 *
 * Times are whole microseconds from the window's start (nanoseconds
 * rounded down), so that a viewer that adds a slice's duration to its
 * start in floating point lands exactly on the next slice's start: with
 * fractions, speedscope saw slices that met as nested. A slice shorter
 * than a microsecond is left out, and one that would continue a slice of
 * the same name extends it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/timeline-private.h"
#include "util/util.h"

/* Item types, in the order they are written at one time. */
enum tr_type {
	TR_FLOW_F,			/* the wakee's end of a wakeup */
	TR_SLICE,
	TR_FLOW_S,			/* the waker's end */
	TR_INSTANT,
};

enum tr_slice { TR_RUNNING, TR_RUNNABLE, TR_BLOCKED };

struct tr_item {
	uint64_t ts, dur;
	uint32_t pid, tid;
	uint32_t ev;			/* the event it comes from */
	uint32_t flow;			/* TR_FLOW_*: its id */
	uint8_t type, slice;
};

struct tr {
	const struct taproot_timeline *t;
	const struct tl_view *v;
	size_t last_slice;		/* of the thread being built; SIZE_MAX: none */
	struct tr_item *it;
	size_t nr, alloc;
	uint32_t flows;
	uint64_t flows_unbound;		/* a waker without a running slice at the waking */
	uint64_t clamped;		/* slices moved up to the previous one's end */
	bool *stack_used;		/* by stack id */
	bool first;			/* no event written yet */
};

static int tr_add(struct tr *tr, const struct tr_item *item)
{
	if (tp_grow((void **)&tr->it, &tr->alloc, tr->nr + 1, sizeof(tr->it[0])) < 0)
		return -ENOMEM;
	tr->it[tr->nr++] = *item;
	return 0;
}

/* @t rounded down to a whole microsecond from the window's start. */
static uint64_t tr_quantum(const struct tr *tr, uint64_t t)
{
	return t - (t - tr->v->start) % 1000;
}

/* A slice [@from, @to] of the thread of event @ev, moved up to start at @*cur or later. */
static int tr_slice(struct tr *tr, const struct tl_event *e, uint32_t ev, enum tr_slice kind,
		    uint64_t from, uint64_t to, uint64_t *cur)
{
	struct tr_item item = { .pid = e->pid, .tid = e->tid, .ev = ev, .type = TR_SLICE,
				.slice = (uint8_t)kind };
	struct tr_item *last = tr->last_slice != SIZE_MAX ? &tr->it[tr->last_slice] : NULL;

	if (from < *cur) {
		if (*cur - from >= 1000)
			tr->clamped++;
		from = *cur;
	}
	from = tr_quantum(tr, from);
	to = to < from ? from : tr_quantum(tr, to);
	*cur = to;
	if (to == from)
		return 0;
	if (kind != TR_BLOCKED && last && last->slice == kind && last->ts + last->dur == from) {
		last->dur = to - last->ts;
		return 0;
	}
	item.ts = from;
	item.dur = to - from;
	if (kind == TR_BLOCKED && e->stack)
		tr->stack_used[e->stack - 1] = true;
	tr->last_slice = tr->nr;
	return tr_add(tr, &item);
}

/* The slices of off-CPU interval @e (event @ev): blocked, then runnable. */
static int tr_off(struct tr *tr, const struct tl_event *e, uint32_t ev, uint64_t *cur)
{
	const struct tl_view *v = tr->v;
	uint64_t out = e->t0 > v->start ? e->t0 : v->start, end = tl_off_end(v, e);
	bool woken = e->t_wake && e->t_wake >= e->t0 && e->t_wake <= end;
	uint64_t ready = woken ? (e->t_wake > out ? e->t_wake : out) : end;
	int err = 0;

	if (e->new_task || e->state[0] == 'R')
		ready = out;		/* runnable from the start: preempted or new */
	if (ready > out)
		err = tr_slice(tr, e, ev, TR_BLOCKED, out, ready, cur);
	if (!err && (ready < end || e->new_task || woken))
		err = tr_slice(tr, e, ev, TR_RUNNABLE, ready, end, cur);
	return err;
}

/* The items of thread @th, in its events' order. */
static int tr_thread(struct tr *tr, const struct tl_vthread *th)
{
	const struct tl_view *v = tr->v;
	uint64_t cur = th->born, end = th->died < v->end ? th->died : v->end;
	bool running = true;
	int err = 0;

	for (size_t i = 0; i < th->nr && !err; i++) {
		uint32_t ev = v->idx[th->first + i];
		const struct tl_event *e = &tr->t->ev[ev];

		if (e->kind == TL_SAMPLE) {
			struct tr_item item = { .ts = tr_quantum(tr, e->t0), .pid = e->pid,
						.tid = e->tid, .ev = ev, .type = TR_INSTANT };

			if (e->stack)
				tr->stack_used[e->stack - 1] = true;
			err = tr_add(tr, &item);
		} else if (e->kind == TL_OFF && e->t0 >= th->died) {
			break;		/* its last switch-out: nothing after it is drawn */
		} else if (e->kind == TL_OFF) {
			if (running && !e->new_task && e->t0 > cur)
				err = tr_slice(tr, e, ev, TR_RUNNING, cur, e->t0, &cur);
			if (!err)
				err = tr_off(tr, e, ev, &cur);
			running = e->t_in != TL_END;
		}
	}
	if (!err && running && cur < end) {
		const struct tl_event *last = &tr->t->ev[v->idx[th->first + th->nr - 1]];

		err = tr_slice(tr, last, v->idx[th->first + th->nr - 1], TR_RUNNING, cur, end, &cur);
	}
	return err;
}

static int tr_cmp(const void *a, const void *b)
{
	const struct tr_item *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/*
 * The slice of thread (@pid, @tid) among the first @nr items (sorted) that
 * holds time @ts, a running one when @running; NULL: none.
 */
static const struct tr_item *tr_slice_at(const struct tr *tr, size_t nr, uint32_t pid,
					 uint32_t tid, uint64_t ts, bool running)
{
	size_t lo = 0, hi = nr;

	/* The first item past (pid, tid, ts). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tr_item *m = &tr->it[mid];

		if (m->pid < pid || (m->pid == pid && (m->tid < tid ||
						       (m->tid == tid && m->ts <= ts))))
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct tr_item *m = &tr->it[lo];

		if (m->pid != pid || m->tid != tid)
			return NULL;
		if (m->type == TR_SLICE)
			return m->ts + m->dur >= ts && (!running || m->slice == TR_RUNNING) ? m : NULL;
	}
	return NULL;
}

/*
 * A flow for each waking by a thread, from the waker's running slice to
 * the woken thread's slice at that time (its runnable one, or the one it
 * merged into): both ends at the waking, so never backwards.
 */
static int tr_flows(struct tr *tr)
{
	size_t nr = tr->nr;

	for (size_t i = 0; i < tr->v->nr_idx; i++) {
		uint32_t ev = tr->v->idx[i];
		const struct tl_event *e = &tr->t->ev[ev];
		struct tr_item f, w;
		uint64_t at;

		if (e->kind != TL_OFF || e->wake != TP_WAKE_THREAD || !e->t_wake || e->new_task ||
		    e->t_wake < tr->v->start || e->t_wake > tr->v->end)
			continue;
		at = tr_quantum(tr, e->t_wake);
		if (!tr_slice_at(tr, nr, e->pid, e->tid, at, false) ||
		    !tr_slice_at(tr, nr, e->waker_pid, e->waker_tid, at, true)) {
			tr->flows_unbound++;
			continue;
		}
		f = (struct tr_item){ .ts = at, .pid = e->pid, .tid = e->tid, .ev = ev,
				      .flow = ++tr->flows, .type = TR_FLOW_F };
		w = f;
		w.pid = e->waker_pid;
		w.tid = e->waker_tid;
		w.type = TR_FLOW_S;
		if (tr_add(tr, &f) < 0 || tr_add(tr, &w) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ JSON */

/* Nanoseconds (whole microseconds: tr_quantum()) as the format's microseconds. */
static void tr_us(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%" PRIu64, key, ns / 1000);
}

static const char *tr_frame_name(const struct taproot_profile_frame *fr)
{
	if (fr->function && fr->function[0])
		return fr->function;
	return "[unknown]";
}

static const char *tr_base(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

/* "stackFrames": for each stack used, a chain s<ID>-<DEPTH>, root at depth 0. */
static void tr_stack_frames(const struct tr *tr, FILE *f)
{
	bool first = true;

	fputs("\"stackFrames\":{", f);
	for (size_t id = 0; id < tr->t->nr_stacks; id++) {
		const struct tp_frames *s = tr->t->stacks[id];

		if (!tr->stack_used[id])
			continue;
		for (size_t d = 0; d < s->nr; d++) {
			const struct taproot_profile_frame *fr = &s->frames[s->nr - 1 - d];

			fprintf(f, "%s\n\"s%zu-%zu\":{\"name\":", first ? "" : ",", id + 1, d);
			tp_json_quote(f, tr_frame_name(fr));
			fputs(",\"category\":", f);
			tp_json_quote(f, fr->is_kernel ? "kernel" : tr_base(fr->mapping_path));
			if (d)
				fprintf(f, ",\"parent\":\"s%zu-%zu\"", id + 1, d - 1);
			fputc('}', f);
			first = false;
		}
	}
	fputs("},\n", f);
}

/* ,"sf":...,"args":{"stack":[leaf, ..., root] — stack id + 1 @id, 0: none. */
static void tr_stack_ref(const struct tr *tr, FILE *f, uint32_t id, const char *more)
{
	const struct tp_frames *s = tl_stack_get(tr->t, id);

	if (s && s->nr)
		fprintf(f, ",\"sf\":\"s%" PRIu32 "-%zu\"", id, s->nr - 1);
	fprintf(f, ",\"args\":{%s", more);
	if (s) {
		fprintf(f, "%s\"stack\":[", more[0] ? "," : "");
		for (size_t i = 0; i < s->nr; i++) {
			if (i)
				fputc(',', f);
			tp_json_quote(f, tr_frame_name(&s->frames[i]));
		}
		fputc(']', f);
	}
	fputc('}', f);
}

/* What goes before an event: nothing before the first. */
static const char *tr_sep(struct tr *tr)
{
	const char *sep = tr->first ? "\n" : ",\n";

	tr->first = false;
	return sep;
}

static const char *const tr_slice_name[] = { "running", "runnable", "blocked" };

static void tr_item_write(struct tr *tr, FILE *f, const struct tr_item *it)
{
	const struct tl_event *e = &tr->t->ev[it->ev];
	const struct tl_thread *w;
	uint64_t ts = it->ts - tr->v->start;
	char more[96];

	fprintf(f, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, tr_sep(tr), it->pid, it->tid);
	tr_us(f, "ts", ts);
	switch (it->type) {
	case TR_SLICE:
		fputs(",\"ph\":\"X\",\"cat\":\"sched\",\"name\":", f);
		if (it->slice == TR_BLOCKED) {
			fprintf(f, "\"blocked %s\"", e->state);
		} else {
			tp_json_quote(f, tr_slice_name[it->slice]);
		}
		tr_us(f, "dur", it->dur);
		if (it->slice == TR_BLOCKED) {
			tr_stack_ref(tr, f, e->stack, "");
		} else if (it->slice == TR_RUNNABLE && e->wake != TP_WAKE_NONE) {
			static const char *const irq[] = {
				[TP_WAKE_HARDIRQ] = "[hardirq]", [TP_WAKE_SOFTIRQ] = "[softirq]",
				[TP_WAKE_NMI] = "[nmi]",
			};

			w = e->wake == TP_WAKE_THREAD ? tl_thread_get(tr->t, e->waker_tid) : NULL;
			fputs(",\"args\":{\"waker\":", f);
			tp_json_quote(f, e->wake != TP_WAKE_THREAD ? irq[e->wake] :
				      w && w->thread_comm[0] ? w->thread_comm : "?");
			if (e->wake == TP_WAKE_THREAD)
				fprintf(f, ",\"waker_tid\":%" PRIu32, e->waker_tid);
			fputc('}', f);
		}
		break;
	case TR_FLOW_S:
	case TR_FLOW_F:
		fprintf(f, ",\"ph\":\"%s\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":%" PRIu32 "%s",
			it->type == TR_FLOW_S ? "s" : "f", it->flow,
			it->type == TR_FLOW_F ? ",\"bp\":\"e\"" : "");
		break;
	default:
		fputs(",\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu\",\"name\":", f);
		tp_json_quote(f, tl_stack_get(tr->t, e->stack) ?
			      tr_frame_name(&tl_stack_get(tr->t, e->stack)->frames[0]) : "sample");
		snprintf(more, sizeof(more), "\"cpu\":%" PRIu32, e->cpu);
		tr_stack_ref(tr, f, e->stack, more);
		break;
	}
	fputc('}', f);
}

/* process_name and thread_name of every thread shown. */
static void tr_names(struct tr *tr, FILE *f)
{
	uint32_t last_pid = 0;

	for (size_t i = 0; i < tr->v->nr_th; i++) {
		const struct tl_vthread *th = &tr->v->th[i];
		const struct tl_thread *n = tl_thread_get(tr->t, th->tid);
		char name[48];

		if (i == 0 || th->pid != last_pid) {
			const char *pn = tl_process_name(tr->t, th->pid);

			fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32
				",\"tid\":%" PRIu32 ",\"args\":{\"name\":", tr_sep(tr), th->pid, th->pid);
			snprintf(name, sizeof(name), "%s %" PRIu32, pn, th->pid);
			tp_json_quote(f, name);
			fputs("}}", f);
			last_pid = th->pid;
		}
		/* A thread seen only at its first wakeup has no name of its own yet. */
		snprintf(name, sizeof(name), "%s %" PRIu32, !n ? "" : n->thread_comm[0] ?
			 n->thread_comm : tl_process_name(tr->t, th->pid), th->tid);
		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32
			",\"tid\":%" PRIu32 ",\"args\":{\"name\":", tr_sep(tr), th->pid, th->tid);
		tp_json_quote(f, name);
		fputs("}}", f);
	}
}

/* "otherData": where the trace comes from, and what it leaves out. */
static void tr_other(const struct tr *tr, FILE *f)
{
	struct taproot_timeline_stats st;

	taproot_timeline_stats(tr->t, &st);
	fprintf(f, "\"otherData\":{\"producer\":\"taproot\","
		"\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ","
		"\"session_start_ns\":%" PRIu64 ",\"window_ns\":%" PRIu64 ","
		"\"processes\":", tr->v->start, tr->v->end, st.first_ns, tr->t->o.window_ns);
	if (!tr->t->o.nr_pids) {
		fputs("\"all\"", f);
	} else {
		fputc('[', f);
		for (size_t i = 0; i < tr->t->o.nr_pids; i++)
			fprintf(f, "%s%" PRIu32, i ? "," : "", tr->t->pids[i]);
		fputc(']', f);
	}
	fprintf(f, ",\"left_out\":{\"before_start_ns\":%" PRIu64 ",\"events_over_limit\":%" PRIu64
		",\"events_of_other_processes\":%" PRIu64 ",\"stacks_over_limit\":%" PRIu64
		",\"wakeups_without_waker_slice\":%" PRIu64 "},\"slices_moved_for_clock_skew\":%"
		PRIu64 "},\n", st.start_ns - st.first_ns, st.dropped_full, st.other_pids,
		st.no_stack, tr->flows_unbound, tr->clamped);
}

static int tr_build(struct tr *tr)
{
	for (size_t i = 0; i < tr->v->nr_th; i++) {
		tr->last_slice = SIZE_MAX;
		if (tr_thread(tr, &tr->v->th[i]) < 0)
			return -ENOMEM;
	}
	qsort(tr->it, tr->nr, sizeof(tr->it[0]), tr_cmp);
	if (tr_flows(tr) < 0)
		return -ENOMEM;
	qsort(tr->it, tr->nr, sizeof(tr->it[0]), tr_cmp);
	return 0;
}

int taproot_timeline_write_trace(struct taproot_timeline *t, FILE *f)
{
	struct tl_view v;
	struct tr tr = { .t = t, .v = &v };
	int err = tl_view_build(t, &v);

	if (err < 0)
		return err;
	tr.stack_used = calloc(t->nr_stacks + 1, sizeof(bool));
	if (!tr.stack_used || tr_build(&tr) < 0) {
		err = tp_err(-ENOMEM, NULL);
		goto out;
	}
	fputs("{\"displayTimeUnit\":\"ms\",\n", f);
	tr_other(&tr, f);
	tr_stack_frames(&tr, f);
	fputs("\"traceEvents\":[", f);
	tr.first = true;
	tr_names(&tr, f);
	for (size_t i = 0; i < tr.nr; i++)
		tr_item_write(&tr, f, &tr.it[i]);
	fputs("\n]}\n", f);
	if (ferror(f))
		err = tp_err(-EIO, "trace: writing failed");
out:
	free(tr.stack_used);
	free(tr.it);
	tl_view_free(&v);
	return err;
}

int taproot_timeline_write_trace_file(struct taproot_timeline *t, const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return tp_err(-ENOMEM, NULL);
	err = taproot_timeline_write_trace(t, f);
	if (fclose(f) && !err)
		err = tp_err(-ENOMEM, NULL);
	if (!err)
		err = tp_write_file_private(path, buf, len);
	free(buf);
	return err;
}
