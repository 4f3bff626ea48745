// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline of a session's threads: off-CPU intervals (from causal.c),
 * CPU samples and exits (from the pipeline) kept in arrival order, their
 * stacks kept once each, and a view of them by thread for the trace
 * (trace.c) and the critical path (critpath.c).
 *
 * Events arrive roughly in time order (the rings are merged by time within
 * a consume round; an interval arrives when its switch-in does), so
 * dropping the first half of the array drops roughly the oldest events;
 * the timeline then starts after the latest of them, and nothing before
 * that point is shown, so a thread is never drawn with a hole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/timeline-private.h"
#include "util/util.h"

int taproot_timeline_new(const struct taproot_timeline_opts *opts,
			 struct taproot_timeline **tp)
{
	struct taproot_timeline *t;

	*tp = NULL;
	if (opts && opts->nr_pids > TAPROOT_TIMELINE_MAX_PIDS)
		return tp_err(-EINVAL, "timeline: at most %u processes",
			      TAPROOT_TIMELINE_MAX_PIDS);
	t = calloc(1, sizeof(*t));
	if (!t)
		return tp_err(-ENOMEM, NULL);
	if (opts)
		t->o = *opts;
	if (!t->o.max_events)
		t->o.max_events = TAPROOT_TIMELINE_MAX_EVENTS;
	if (t->o.nr_pids)
		memcpy(t->pids, opts->pids, t->o.nr_pids * sizeof(t->pids[0]));
	t->o.pids = t->pids;
	*tp = t;
	return 0;
}

void taproot_timeline_free(struct taproot_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_stacks; i++)
		free(t->stacks[i]);
	free(t->stacks);
	free(t->stack_hash);
	tp_index_free(&t->stack_ix);
	free(t->threads);
	tp_index_free(&t->thread_ix);
	free(t->ev);
	free(t);
}

void taproot_timeline_stats(const struct taproot_timeline *t, struct taproot_timeline_stats *st)
{
	*st = t->st;
	st->stacks = t->nr_stacks;
	st->start_ns = t->st.first_ns;
	if (t->dropped_until > st->start_ns)
		st->start_ns = t->dropped_until;
	if (t->o.window_ns && t->st.last_ns > t->o.window_ns &&
	    t->st.last_ns - t->o.window_ns > st->start_ns)
		st->start_ns = t->st.last_ns - t->o.window_ns;
}

static bool tl_pid_kept(const struct taproot_timeline *t, uint32_t pid)
{
	if (!t->o.nr_pids)
		return true;
	for (size_t i = 0; i < t->o.nr_pids; i++)
		if (t->pids[i] == pid)
			return true;
	return false;
}

/* ------------------------------------------------------------ stacks */

static bool tl_str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool tl_frame_eq(const struct taproot_profile_frame *a, const struct taproot_profile_frame *b)
{
	return a->address == b->address && a->is_kernel == b->is_kernel &&
	       a->inlined == b->inlined && a->line == b->line &&
	       a->build_id_len == b->build_id_len &&
	       (!a->build_id_len || !memcmp(a->build_id, b->build_id, a->build_id_len)) &&
	       tl_str_eq(a->function, b->function) && tl_str_eq(a->file, b->file) &&
	       tl_str_eq(a->system_name, b->system_name) &&
	       tl_str_eq(a->mapping_path, b->mapping_path);
}

static uint64_t tl_str_hash(uint64_t h, const char *s)
{
	return tp_hash_mix(h, s ? tp_hash_bytes(s, strlen(s)) : 0);
}

static uint64_t tl_stack_hash(const struct taproot_profile_frame *f, size_t nr)
{
	uint64_t h = nr;

	for (size_t i = 0; i < nr; i++) {
		h = tp_hash_mix(h, f[i].address ^ ((uint64_t)f[i].inlined << 1) ^ f[i].is_kernel);
		h = tl_str_hash(h, f[i].function);
		h = tl_str_hash(h, f[i].mapping_path);
	}
	return tp_hash_fin(h);
}

struct tl_stack_key {
	uint64_t hash;
	const struct taproot_profile_frame *f;
	size_t nr;
};

static bool tl_stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct taproot_timeline *t = ctx;
	const struct tl_stack_key *k = key;
	const struct tp_frames *s = t->stacks[idx];

	if (t->stack_hash[idx] != k->hash || s->nr != k->nr)
		return false;
	for (size_t i = 0; i < s->nr; i++)
		if (!tl_frame_eq(&s->frames[i], &k->f[i]))
			return false;
	return true;
}

/* The id + 1 of the stack @f (@nr frames), kept once; 0: none or not kept (counted). */
static uint32_t tl_stack_intern(struct taproot_timeline *t, const struct taproot_profile_frame *f,
				size_t nr)
{
	struct tl_stack_key k = { .hash = tl_stack_hash(f, nr), .f = f, .nr = nr };
	struct tp_index_slot *slot;
	struct tp_frames *s;

	if (!nr)
		return 0;
	if (tp_index_reserve(&t->stack_ix) < 0)
		goto full;
	slot = tp_index_probe(&t->stack_ix, (uint32_t)k.hash, tl_stack_eq, t, &k);
	if (slot->idx1)
		return slot->idx1;
	if (t->nr_stacks >= UINT32_MAX - 1 ||
	    tp_grow((void **)&t->stacks, &t->alloc_stacks, t->nr_stacks + 1, sizeof(t->stacks[0])) < 0 ||
	    tp_grow((void **)&t->stack_hash, &t->alloc_hashes, t->nr_stacks + 1,
		    sizeof(t->stack_hash[0])) < 0)
		goto full;
	/* A timeline may outlive its pipeline (taprootd's restarts): no keys. */
	s = tp_frames_copy(f, nr, TL_MAX_STACK_BYTES - t->st.stack_bytes, false);
	if (!s)
		goto full;
	t->st.stack_bytes += s->bytes;
	t->stacks[t->nr_stacks] = s;
	t->stack_hash[t->nr_stacks] = k.hash;
	tp_index_set(&t->stack_ix, slot, (uint32_t)k.hash, t->nr_stacks);
	return (uint32_t)++t->nr_stacks;
full:
	t->st.no_stack++;
	return 0;
}

/* ------------------------------------------------------------ threads */

static bool tl_thread_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct taproot_timeline *t = ctx;

	return t->threads[idx].tid == *(const uint32_t *)key;
}

static uint32_t tl_tid_hash(uint32_t tid)
{
	return (uint32_t)tp_hash_fin(tp_hash_mix(0, tid));
}

const struct tl_thread *tl_thread_get(const struct taproot_timeline *t, uint32_t tid)
{
	struct tp_index_slot *slot = tp_index_probe(&t->thread_ix, tl_tid_hash(tid), tl_thread_eq,
						    t, &tid);

	return slot && slot->idx1 ? &t->threads[slot->idx1 - 1] : NULL;
}

static void tl_name(char dst[17], const char *src)
{
	if (src && src[0])
		snprintf(dst, 17, "%s", src);
}

/* Note thread @tid's names (the latest win: an exec renames). */
static void tl_thread_note(struct taproot_timeline *t, uint32_t pid, uint32_t tid,
			   const char *comm, const char *thread_comm)
{
	struct tp_index_slot *slot;
	struct tl_thread *th;

	if (tp_index_reserve(&t->thread_ix) < 0)
		return;
	slot = tp_index_probe(&t->thread_ix, tl_tid_hash(tid), tl_thread_eq, t, &tid);
	if (slot->idx1) {
		th = &t->threads[slot->idx1 - 1];
	} else {
		if (tp_grow((void **)&t->threads, &t->alloc_threads, t->nr_threads + 1,
			    sizeof(t->threads[0])) < 0)
			return;
		th = &t->threads[t->nr_threads];
		memset(th, 0, sizeof(*th));
		th->tid = tid;
		tp_index_set(&t->thread_ix, slot, tl_tid_hash(tid), t->nr_threads++);
	}
	th->pid = pid;
	tl_name(th->thread_comm, thread_comm);
	tl_name(th->comm, comm);
}

const char *tl_process_name(const struct taproot_timeline *t, uint32_t pid)
{
	const struct tl_thread *main = tl_thread_get(t, pid);

	if (main && main->pid == pid && main->thread_comm[0])
		return main->thread_comm;
	return main && main->comm[0] ? main->comm : "";
}

size_t taproot_timeline_targets(const struct taproot_timeline *t, const char *target,
				uint32_t *tids, size_t max)
{
	char *end;
	unsigned long id = strtoul(target, &end, 10);
	size_t n = 0;

	if (target[0] >= '0' && target[0] <= '9' && !*end) {
		if (max && id <= UINT32_MAX && tl_thread_get(t, (uint32_t)id))
			tids[n++] = (uint32_t)id;
		return n;
	}
	for (size_t i = 0; i < t->nr_threads && n < max; i++) {
		const struct tl_thread *th = &t->threads[i];

		if (th->tid == th->pid && !strcmp(tl_process_name(t, th->pid), target))
			tids[n++] = th->tid;
	}
	return n;
}

/* ------------------------------------------------------------ events */

/*
 * Room for one more event: at max_events, the first half is dropped and
 * the timeline starts after the latest of them. NULL: no memory (counted).
 */
static struct tl_event *tl_push(struct taproot_timeline *t)
{
	if (t->nr_ev >= t->o.max_events) {
		size_t half = t->nr_ev / 2;

		for (size_t i = 0; i < half; i++) {
			const struct tl_event *e = &t->ev[i];
			uint64_t end = e->kind == TL_OFF && e->t_in != TL_END ? e->t_in : e->t0;

			if (end > t->dropped_until)
				t->dropped_until = end;
		}
		memmove(t->ev, t->ev + half, (t->nr_ev - half) * sizeof(t->ev[0]));
		t->nr_ev -= half;
		t->st.dropped_full += half;
	}
	if (tp_grow((void **)&t->ev, &t->alloc_ev, t->nr_ev + 1, sizeof(t->ev[0])) < 0) {
		t->st.dropped_full++;
		return NULL;
	}
	memset(&t->ev[t->nr_ev], 0, sizeof(t->ev[0]));
	return &t->ev[t->nr_ev++];
}

void tp_timeline_time(struct taproot_timeline *t, uint64_t time_ns)
{
	if (!t->st.first_ns || time_ns < t->st.first_ns)
		t->st.first_ns = time_ns;
	if (time_ns > t->st.last_ns)
		t->st.last_ns = time_ns;
}

/*
 * A new event @kind of thread @tid of @pid at @t0; NULL for a process not
 * kept (counted) or when there is no room.
 */
static struct tl_event *tl_add(struct taproot_timeline *t, enum tl_kind kind, uint32_t pid,
			       uint32_t tid, uint64_t t0)
{
	struct tl_event *e;

	if (!tl_pid_kept(t, pid)) {
		t->st.other_pids++;
		return NULL;
	}
	e = tl_push(t);
	if (e) {
		e->kind = kind;
		e->pid = pid;
		e->tid = tid;
		e->t0 = t0;
	}
	return e;
}

void tp_timeline_interval(struct taproot_timeline *t, const struct tp_timeline_interval *iv)
{
	struct tl_event *e = tl_add(t, TL_OFF, iv->pid, iv->tid, iv->t_out);

	if (!e)
		return;
	tl_thread_note(t, iv->pid, iv->tid, iv->comm, iv->thread_comm);
	e->t_wake = iv->t_wake;
	e->t_in = iv->t_in ? iv->t_in : TL_END;
	e->wake = (uint8_t)iv->wake;
	e->waker_pid = iv->waker_pid;
	e->waker_tid = iv->waker_tid;
	e->new_task = !strcmp(iv->state, "new");
	snprintf(e->state, sizeof(e->state), "%s", e->new_task ? "R" : iv->state);
	e->stack = tl_stack_intern(t, iv->blocked, iv->nr_blocked);
	e->waker_stack = tl_stack_intern(t, iv->waker, iv->nr_waker);
	t->st.intervals++;
}

void tp_timeline_sample(struct taproot_timeline *t, uint32_t pid, uint32_t tid, uint32_t cpu,
			uint64_t time_ns, const char *comm, const char *thread_comm,
			const struct taproot_profile_frame *frames, size_t nr)
{
	struct tl_event *e = tl_add(t, TL_SAMPLE, pid, tid, time_ns);

	if (!e)
		return;
	tl_thread_note(t, pid, tid, comm, thread_comm);
	e->cpu = cpu;
	e->stack = tl_stack_intern(t, frames, nr);
	t->st.samples++;
}

void tp_timeline_exit(struct taproot_timeline *t, uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	if (tl_add(t, TL_EXIT, pid, tid, time_ns))
		t->st.exits++;
}

/* ------------------------------------------------------------ views */

static int tl_cmp_ev(const void *a, const void *b, void *arg)
{
	const struct taproot_timeline *t = arg;
	const struct tl_event *x = &t->ev[*(const uint32_t *)a], *y = &t->ev[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	/* An exit after whatever came at the same time. */
	return (x->kind == TL_EXIT) - (y->kind == TL_EXIT);
}

/* Whether event @e shows in the window [@start, @end]. */
static bool tl_in_window(const struct tl_event *e, uint64_t start, uint64_t end)
{
	if (e->kind == TL_OFF)
		return (e->t_in == TL_END || e->t_in >= start) && e->t0 <= end;
	return e->t0 >= start && e->t0 <= end;
}

/*
 * The threads' runs of v->idx, with when each was born and died. A thread
 * runs on after its exit record (the kernel has its files, its memory and
 * the wakeup of a joiner to finish, and may block doing so): it dies at
 * its last switch-out, the one never switched in, when one follows the
 * exit record, else when it was last seen running after it (a sample, a
 * switch-in, a waking it did: tl_view_wakers()).
 */
static int tl_view_threads(const struct taproot_timeline *t, struct tl_view *v)
{
	size_t alloc = 0;

	for (size_t i = 0; i < v->nr_idx; i++) {
		const struct tl_event *e = &t->ev[v->idx[i]];
		struct tl_vthread *th = v->nr_th ? &v->th[v->nr_th - 1] : NULL;

		if (!th || th->pid != e->pid || th->tid != e->tid) {
			if (tp_grow((void **)&v->th, &alloc, v->nr_th + 1, sizeof(v->th[0])) < 0)
				return -ENOMEM;
			th = &v->th[v->nr_th++];
			*th = (struct tl_vthread){ .pid = e->pid, .tid = e->tid, .first = i,
						   .born = v->start, .died = TL_END };
			if (e->kind == TL_OFF && e->new_task && e->t0 >= v->start)
				th->born = e->t0;
		}
		th->nr++;
		if (e->kind == TL_EXIT && th->died == TL_END) {
			th->died = e->t0;
		} else if (th->died == TL_END || th->died_out || e->t0 < th->died) {
			continue;
		} else if (e->kind == TL_OFF && e->t_in == TL_END) {
			th->died = e->t0;
			th->died_out = true;
		} else if (e->kind == TL_OFF) {
			th->died = e->t_in;	/* blocked while exiting, and running again */
		} else if (e->kind == TL_SAMPLE) {
			th->died = e->t0;
		}
	}
	return 0;
}

/* A thread that woke another after its exit record was running then. */
static void tl_view_wakers(const struct taproot_timeline *t, struct tl_view *v)
{
	for (size_t i = 0; i < v->nr_idx; i++) {
		const struct tl_event *e = &t->ev[v->idx[i]];
		struct tl_vthread *w;

		if (e->kind != TL_OFF || e->wake != TP_WAKE_THREAD || !e->t_wake)
			continue;
		w = (struct tl_vthread *)tl_view_thread(v, e->waker_pid, e->waker_tid);
		if (w && w->died != TL_END && !w->died_out && e->t_wake > w->died)
			w->died = e->t_wake;
	}
}

int tl_view_build(const struct taproot_timeline *t, struct tl_view *v)
{
	struct taproot_timeline_stats st;

	memset(v, 0, sizeof(*v));
	taproot_timeline_stats(t, &st);
	v->start = st.start_ns;
	v->end = st.last_ns;
	v->idx = malloc((t->nr_ev ? t->nr_ev : 1) * sizeof(v->idx[0]));
	if (!v->idx)
		return tp_err(-ENOMEM, NULL);
	for (size_t i = 0; i < t->nr_ev; i++)
		if (tl_in_window(&t->ev[i], v->start, v->end))
			v->idx[v->nr_idx++] = (uint32_t)i;
	qsort_r(v->idx, v->nr_idx, sizeof(v->idx[0]), tl_cmp_ev, (void *)t);
	if (tl_view_threads(t, v) < 0) {
		tl_view_free(v);
		return tp_err(-ENOMEM, NULL);
	}
	tl_view_wakers(t, v);
	return 0;
}

void tl_view_free(struct tl_view *v)
{
	free(v->idx);
	free(v->th);
	memset(v, 0, sizeof(*v));
}

const struct tl_vthread *tl_view_thread(const struct tl_view *v, uint32_t pid, uint32_t tid)
{
	size_t lo = 0, hi = v->nr_th;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tl_vthread *th = &v->th[mid];

		if (th->pid == pid && th->tid == tid)
			return th;
		if (th->pid < pid || (th->pid == pid && th->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
