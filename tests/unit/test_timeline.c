// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline (lib/profile/timeline.c), its critical path (critpath.c) and
 * its Chrome trace (trace.c), fed a known chain of threads by hand:
 *
 *   main (100)    runs [0,10], joins the worker: blocked [10,500], woken
 *                 by the worker at 500, switched in at 502, exits at 510
 *   worker (101)  waits at a barrier [12,20] (woken by the holder),
 *                 computes [21,200] (samples at 50, 100, 150), waits for
 *                 the mutex [200,480] (woken by the holder at 480, in at
 *                 490), exits: its exit record at 495, blocked [496,497]
 *                 (woken by an interrupt), its joiner's wakeup at 500, its
 *                 last switch-out at 501
 *   holder (102)  computes from 0 to 505 (samples every 100 and at 470)
 *   sleeper (103) naps: woken by a timer's interrupt every 5
 *
 * (times in microseconds.) The walk back from main's exit gives, exactly:
 * holder_compute (200,480] = 280 and, its sample at 100 the nearest to
 * (12,20], 8 more; worker_compute (21,200] = 179 and, its sample at 150
 * the nearest to (10,12], (490,496] and (497,500], 11 more; the run queue
 * 2 + 10 + 1 = 13; main, never sampled, "[running]" over the stack it was
 * next seen with; and nothing to the sleeper.
 *
 * A second chain (waits()) has the waker preempted and blocked while the
 * thread it wakes waits, and running stretches without a sample of their
 * own: no time may read as a blocked or preempted stack.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile-private.h"
#include "profile/timeline.h"
#include "runcmd.h"

#define US	1000ULL
#define T0	(5000000 * US)		/* any base: a monotonic clock's */

static const struct taproot_profile_frame f_holder[] = {
	{ .function = "holder_compute", .mapping_path = "/bin/chain", .address = 0x1010 },
	{ .function = "holder", .mapping_path = "/bin/chain", .address = 0x1100 },
};
static const struct taproot_profile_frame f_worker[] = {
	{ .function = "worker_compute", .mapping_path = "/bin/chain", .address = 0x2010 },
	{ .function = "worker", .mapping_path = "/bin/chain", .address = 0x2100 },
};
static const struct taproot_profile_frame f_join[] = {
	{ .function = "futex_wait", .is_kernel = true, .address = 0xffffffff81000010 },
	{ .function = "pthread_join", .mapping_path = "/lib/libc.so.6", .address = 0x3010 },
	{ .function = "main", .mapping_path = "/bin/chain", .address = 0x3100 },
};
static const struct taproot_profile_frame f_mutex[] = {
	{ .function = "futex_wait", .is_kernel = true, .address = 0xffffffff81000010 },
	{ .function = "mutex_wait", .mapping_path = "/bin/chain", .address = 0x2200 },
	{ .function = "worker", .mapping_path = "/bin/chain", .address = 0x2100 },
};
static const struct taproot_profile_frame f_barrier[] = {
	{ .function = "futex_wait", .is_kernel = true, .address = 0xffffffff81000010 },
	{ .function = "pthread_barrier_wait", .mapping_path = "/lib/libc.so.6", .address = 0x3310 },
	{ .function = "worker", .mapping_path = "/bin/chain", .address = 0x2100 },
};
static const struct taproot_profile_frame f_unlock[] = {
	{ .function = "futex_wake", .is_kernel = true, .address = 0xffffffff81000020 },
	{ .function = "pthread_mutex_unlock", .mapping_path = "/lib/libc.so.6", .address = 0x3410 },
	{ .function = "holder", .mapping_path = "/bin/chain", .address = 0x1100 },
};
static const struct taproot_profile_frame f_exit[] = {
	{ .function = "futex_wake", .is_kernel = true, .address = 0xffffffff81000020 },
	{ .function = "do_exit", .is_kernel = true, .address = 0xffffffff81000030 },
};
static const struct taproot_profile_frame f_nap[] = {
	{ .function = "do_nanosleep", .is_kernel = true, .address = 0xffffffff81000040 },
	{ .function = "sleeper_nap", .mapping_path = "/bin/chain", .address = 0x4010 },
};
static const struct taproot_profile_frame f_preempt[] = {
	{ .function = "preempt_schedule_irq", .is_kernel = true, .address = 0xffffffff81000070 },
	{ .function = "worker_compute", .mapping_path = "/bin/chain", .address = 0x2010 },
};
static const struct taproot_profile_frame f_hpreempt[] = {
	{ .function = "preempt_schedule_irq", .is_kernel = true, .address = 0xffffffff81000070 },
	{ .function = "holder_compute", .mapping_path = "/bin/chain", .address = 0x1010 },
};
static const struct taproot_profile_frame f_helper[] = {
	{ .function = "helper_compute", .mapping_path = "/bin/chain", .address = 0x5010 },
};
static const struct taproot_profile_frame f_timer[] = {
	{ .function = "hrtimer_wakeup", .is_kernel = true, .address = 0xffffffff81000050 },
	{ .function = "__hrtimer_run_queues", .is_kernel = true, .address = 0xffffffff81000060 },
};

#define NF(a) (sizeof(a) / sizeof((a)[0]))

static void off(struct taproot_timeline *t, uint32_t tid, const char *name, uint64_t out,
		uint64_t wake, uint64_t in, uint32_t waker, enum tp_wake_kind kind,
		const struct taproot_profile_frame *bl, size_t nb,
		const struct taproot_profile_frame *wk, size_t nw)
{
	struct tp_timeline_interval iv = {
		.pid = 100, .tid = tid, .comm = "chain", .thread_comm = name, .state = "S",
		.t_out = T0 + out * US, .t_wake = wake ? T0 + wake * US : 0,
		.t_in = in ? T0 + in * US : 0, .wake = kind, .waker_pid = waker ? 100 : 0,
		.waker_tid = waker, .blocked = bl, .nr_blocked = nb, .waker = wk, .nr_waker = nw,
	};

	tp_timeline_time(t, iv.t_out);
	tp_timeline_interval(t, &iv);
}

static void sample(struct taproot_timeline *t, uint32_t tid, const char *name, uint64_t at,
		   const struct taproot_profile_frame *f, size_t nr)
{
	tp_timeline_time(t, T0 + at * US);
	tp_timeline_sample(t, 100, tid, tid % 2, T0 + at * US, "chain", name, f, nr);
}

/* The chain above, in roughly the order a pipeline would deliver it. */
static struct taproot_timeline *chain(void)
{
	struct taproot_timeline *t;

	assert_int_equal(taproot_timeline_new(NULL, &t), 0);
	tp_timeline_time(t, T0);
	off(t, 101, "worker", 12, 20, 21, 102, TP_WAKE_THREAD, f_barrier, NF(f_barrier),
	    f_unlock, NF(f_unlock));
	for (uint64_t at = 50; at < 200; at += 50)
		sample(t, 101, "worker", at, f_worker, NF(f_worker));
	for (uint64_t at = 100; at <= 400; at += 100)
		sample(t, 102, "holder", at, f_holder, NF(f_holder));
	sample(t, 102, "holder", 470, f_holder, NF(f_holder));
	off(t, 101, "worker", 200, 480, 490, 102, TP_WAKE_THREAD, f_mutex, NF(f_mutex),
	    f_unlock, NF(f_unlock));
	for (uint64_t at = 0; at < 500; at += 5)
		off(t, 103, "sleeper", at, at + 4, at + 4, 0, TP_WAKE_HARDIRQ, f_nap, NF(f_nap),
		    f_timer, NF(f_timer));
	/*
	 * As on 7.2: the worker's exit record comes before the wakeup of its
	 * joiner, and its last switch-out (dead, never switched in) after it.
	 */
	tp_timeline_exit(t, 100, 101, T0 + 495 * US);
	/* As on 7.2-rt: blocked while exiting (an rtmutex), woken, running again. */
	off(t, 101, "worker", 496, 497, 497, 0, TP_WAKE_HARDIRQ, f_exit, NF(f_exit), NULL, 0);
	off(t, 100, "chain", 10, 500, 502, 101, TP_WAKE_THREAD, f_join, NF(f_join),
	    f_exit, NF(f_exit));
	off(t, 101, "worker", 501, 0, 0, 0, TP_WAKE_NONE, f_exit, NF(f_exit), NULL, 0);
	tp_timeline_time(t, T0 + 505 * US);
	tp_timeline_exit(t, 100, 102, T0 + 505 * US);
	tp_timeline_time(t, T0 + 510 * US);
	tp_timeline_exit(t, 100, 100, T0 + 510 * US);
	return t;
}

/* The sum of the samples of @p whose stack holds function @fn (NULL: all). */
static int64_t sum_with(const struct taproot_profile *p, const char *fn)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];
		bool has = !fn;

		for (uint32_t j = 0; j < s->nlocs && !has; j++) {
			const struct tp_location *l = &p->locations[p->locs[s->loc_off + j] - 1];

			for (uint32_t k = 0; k < l->nlines && !has; k++) {
				uint32_t fid = p->lines[l->line_off + k].function;

				has = !strcmp(tp_profile_str(p, p->funcs[fid - 1].name), fn);
			}
		}
		if (has)
			sum += p->values[i * p->nvalues];
	}
	return sum;
}

/* The sum of the samples labelled thread=@thread. */
static int64_t sum_thread(const struct taproot_profile *p, const char *thread)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];

		for (uint32_t j = 0; j < s->nlabels; j++) {
			const struct tp_label *l = &p->labels[s->label_off + j];

			if (!strcmp(tp_profile_str(p, l->key), "thread") &&
			    !strcmp(tp_profile_str(p, l->str), thread))
				sum += p->values[i * p->nvalues];
		}
	}
	return sum;
}

static struct taproot_profile *critpath(struct taproot_timeline *t, uint32_t tid,
					struct taproot_critpath_stats *st, int want)
{
	struct taproot_profile_desc d;
	struct taproot_profile *p;

	taproot_profile_desc_critpath(&d);
	assert_int_equal(taproot_profile_new(&d, &p), 0);
	assert_int_equal(taproot_timeline_critical_path(t, tid, p, st), want);
	return p;
}

static void critpath_follows_wakers(void **state)
{
	struct taproot_timeline *t = chain();
	struct taproot_critpath_stats st;
	struct taproot_profile *p = critpath(t, 100, &st, 0);

	(void)state;
	assert_int_equal(st.total_ns, 510 * US);
	assert_int_equal(sum_with(p, NULL), 510 * US);
	assert_int_equal(sum_with(p, "holder_compute"), (280 + 8) * US);
	assert_int_equal(sum_with(p, "worker_compute"), (179 + 2 + 6 + 3) * US);
	assert_int_equal(sum_with(p, "[run queue]"), 13 * US);
	assert_int_equal(st.runqueue_ns, 13 * US);
	/* The worker's wait while exiting: an interrupt ends that chain. */
	assert_int_equal(st.running_ns, 496 * US);
	assert_int_equal(st.irq_ns, 1 * US);
	assert_int_equal(st.unknown_ns + st.timer_ns, 0);
	assert_int_equal(sum_with(p, "sleeper_nap"), 0);
	assert_int_equal(sum_thread(p, "sleeper"), 0);
	/* Main, never sampled: "[running]", over the stack it was next seen with. */
	assert_int_equal(sum_with(p, "pthread_join"), (10 + 2) * US);	/* run, run queue */
	assert_int_equal(sum_with(p, "do_exit"), 1 * US);	/* the interrupt's */
	assert_int_equal(sum_with(p, "[hardirq]"), 1 * US);
	assert_int_equal(sum_with(p, "[running]"), (10 + 8) * US);	/* before, after its wait */
	assert_int_equal(sum_thread(p, "holder"), (280 + 8) * US);
	assert_int_equal(st.threads, 3);
	taproot_profile_free(p);
	taproot_timeline_free(t);
}

static void critpath_ends_at_timers(void **state)
{
	struct taproot_timeline *t = chain();
	struct taproot_critpath_stats st;
	struct taproot_profile *p = critpath(t, 103, &st, 0);

	(void)state;
	/* Each nap is 4 blocked, then switched in at once: a timer each time. */
	assert_int_equal(st.timer_ns, 100 * 4 * US);
	assert_int_equal(sum_with(p, "[timer]"), 400 * US);
	assert_int_equal(sum_thread(p, "holder") + sum_thread(p, "worker"), 0);
	assert_int_equal(st.threads, 1);
	taproot_profile_free(p);
	taproot_timeline_free(t);
}

static void critpath_unknown_thread(void **state)
{
	struct taproot_timeline *t = chain();
	struct taproot_critpath_stats st;
	struct taproot_profile *p = critpath(t, 4242, &st, -ENOENT);

	(void)state;
	taproot_profile_free(p);
	taproot_timeline_free(t);
}

static void critpath_waker_not_recorded(void **state)
{
	struct taproot_timeline *t;
	struct taproot_critpath_stats st;
	struct taproot_profile *p;

	(void)state;
	assert_int_equal(taproot_timeline_new(NULL, &t), 0);
	tp_timeline_time(t, T0);
	/* Woken by thread 999, of which nothing was recorded; and a wait never woken. */
	off(t, 100, "main", 10, 60, 61, 999, TP_WAKE_THREAD, f_join, NF(f_join), NULL, 0);
	off(t, 100, "main", 70, 0, 0, 0, TP_WAKE_NONE, f_join, NF(f_join), NULL, 0);
	tp_timeline_time(t, T0 + 100 * US);
	p = critpath(t, 100, &st, 0);
	assert_int_equal(st.total_ns, 100 * US);
	assert_int_equal(st.unknown_ns, (50 + 30) * US);
	assert_int_equal(sum_with(p, "[unknown]"), 80 * US);
	assert_int_equal(st.runqueue_ns, 1 * US);
	taproot_profile_free(p);
	taproot_timeline_free(t);
}

/* A preemption of @tid: state R from @out to @in, no waking; its stack @f. */
static void preempt(struct taproot_timeline *t, uint32_t tid, const char *name, uint64_t out,
		    uint64_t in, const struct taproot_profile_frame *f)
{
	struct tp_timeline_interval iv = {
		.pid = 100, .tid = tid, .comm = "chain", .thread_comm = name, .state = "R",
		.t_out = T0 + out * US, .t_in = T0 + in * US, .wake = TP_WAKE_NONE,
		.blocked = f, .nr_blocked = 2,
	};

	tp_timeline_time(t, iv.t_out);
	tp_timeline_interval(t, &iv);
}

/*
 * The waker preempted and blocked during the wakee's wait, and stretches
 * without samples (times in microseconds):
 *   main (100)    runs (0,5], joins the worker [5,1000] (woken at 1000 by
 *                 the worker, in at 1002), exits at 1010
 *   worker (101)  computes (5,100] (samples at 30, 60, 90) preempted at
 *                 [40,50], [70,75], [92,95]; waits for the mutex
 *                 [100,900] (woken by the holder at 900, in at 905);
 *                 computes (905,1000] (sample at 950), wakes main, dies
 *   holder (102)  computes (samples at 150, 250, 400, 650, 750), preempted
 *                 at [300,350] and [850,860], blocked [500,600] (woken by
 *                 the helper at 600, in at 610); unlocks at 900
 *   helper (103)  computes (500,600] (sample at 550), wakes the holder
 */
static struct taproot_timeline *waits(void)
{
	static const uint64_t wsamples[] = { 30, 60, 90, 950 }, hsamples[] = { 150, 250, 400, 650, 750 };
	struct taproot_timeline *t;

	assert_int_equal(taproot_timeline_new(NULL, &t), 0);
	tp_timeline_time(t, T0);
	for (size_t i = 0; i < NF(wsamples); i++)
		sample(t, 101, "worker", wsamples[i], f_worker, NF(f_worker));
	for (size_t i = 0; i < NF(hsamples); i++)
		sample(t, 102, "holder", hsamples[i], f_holder, NF(f_holder));
	sample(t, 103, "helper", 550, f_helper, NF(f_helper));
	preempt(t, 101, "worker", 40, 50, f_preempt);
	preempt(t, 101, "worker", 70, 75, f_preempt);
	preempt(t, 101, "worker", 92, 95, f_preempt);
	preempt(t, 102, "holder", 300, 350, f_hpreempt);
	preempt(t, 102, "holder", 850, 860, f_hpreempt);
	off(t, 102, "holder", 500, 600, 610, 103, TP_WAKE_THREAD, f_barrier, NF(f_barrier),
	    f_helper, NF(f_helper));
	off(t, 101, "worker", 100, 900, 905, 102, TP_WAKE_THREAD, f_mutex, NF(f_mutex),
	    f_unlock, NF(f_unlock));
	off(t, 100, "chain", 5, 1000, 1002, 101, TP_WAKE_THREAD, f_join, NF(f_join),
	    f_exit, NF(f_exit));
	off(t, 101, "worker", 1001, 0, 0, 0, TP_WAKE_NONE, f_exit, NF(f_exit), NULL, 0);
	tp_timeline_time(t, T0 + 1010 * US);
	tp_timeline_exit(t, 100, 100, T0 + 1010 * US);
	return t;
}

/* The sum of the samples of @p whose stack holds @fn below a frame that is no marker. */
static int64_t sum_unmarked_with(const struct taproot_profile *p, const char *fn)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];
		const struct tp_location *leaf = &p->locations[p->locs[s->loc_off] - 1];
		uint32_t fid = p->lines[leaf->line_off].function;
		bool has = false;

		if (tp_profile_str(p, p->funcs[fid - 1].name)[0] == '[')
			continue;
		for (uint32_t j = 0; j < s->nlocs && !has; j++) {
			const struct tp_location *l = &p->locations[p->locs[s->loc_off + j] - 1];

			for (uint32_t k = 0; k < l->nlines && !has; k++) {
				fid = p->lines[l->line_off + k].function;
				has = !strcmp(tp_profile_str(p, p->funcs[fid - 1].name), fn);
			}
		}
		if (has)
			sum += p->values[i * p->nvalues];
	}
	return sum;
}

static void critpath_waker_preempted_and_blocked(void **state)
{
	struct taproot_timeline *t = waits();
	struct taproot_critpath_stats st;
	struct taproot_profile *p = critpath(t, 100, &st, 0);

	(void)state;
	assert_int_equal(st.total_ns, 1010 * US);
	assert_int_equal(sum_with(p, NULL), 1010 * US);
	/*
	 * The worker's wait is the holder's running (its sample at 750 the
	 * nearest to (860,900]), its run queue, and the helper's while the
	 * holder waited; the worker's stretch (95,100] goes to its sample at 90.
	 */
	assert_int_equal(sum_unmarked_with(p, "holder_compute"), (200 + 150 + 240 + 40) * US);
	assert_int_equal(sum_with(p, "helper_compute"), 100 * US);
	assert_int_equal(sum_unmarked_with(p, "worker_compute"), (35 + 20 + 17 + 5 + 95) * US);
	/* main's, the worker's wait and preemptions, the holder's preemptions and wait */
	assert_int_equal(sum_with(p, "[run queue]"), (2 + 5 + 18 + 60 + 10) * US);
	assert_int_equal(st.runqueue_ns, 95 * US);
	assert_int_equal(sum_with(p, "[running]"), (5 + 8) * US);	/* main: never sampled */
	assert_int_equal(st.unknown_ns + st.irq_ns + st.timer_ns, 0);
	/* No time reads as a blocked or preempted stack without its marker. */
	assert_int_equal(sum_unmarked_with(p, "futex_wait"), 0);
	assert_int_equal(sum_unmarked_with(p, "preempt_schedule_irq"), 0);
	assert_int_equal(sum_unmarked_with(p, "futex_wake"), 0);
	assert_int_equal(sum_thread(p, "helper"), 100 * US);
	assert_int_equal(st.threads, 4);
	taproot_profile_free(p);
	taproot_timeline_free(t);
}

/*
 * A preemption whose walk failed (a stack of kernel frames only) reads as
 * the run queue over the thread's nearest sample, not over a stack without
 * the code that ran: the worker computes (0,100] (samples at 20 and 80),
 * preempted [40,50] with its stack walked, [60,64] without; a kernel-only
 * stack stays as it is when no sample is near.
 */
static void critpath_preempted_walk_failed(void **state)
{
	static const struct taproot_profile_frame f_kernel_only[] = {
		{ .function = "preempt_schedule_irq", .is_kernel = true,
		  .address = 0xffffffff81000070 },
		{ .function = "irqentry_exit", .is_kernel = true, .address = 0xffffffff81000080 },
	};
	struct taproot_critpath_stats st;
	struct taproot_timeline *t;
	struct taproot_profile *p;

	(void)state;
	assert_int_equal(taproot_timeline_new(NULL, &t), 0);
	tp_timeline_time(t, T0);
	sample(t, 101, "worker", 20, f_worker, NF(f_worker));
	sample(t, 101, "worker", 80, f_worker, NF(f_worker));
	preempt(t, 101, "worker", 40, 50, f_preempt);
	preempt(t, 101, "worker", 60, 64, f_kernel_only);
	tp_timeline_time(t, T0 + 100 * US);
	tp_timeline_exit(t, 100, 101, T0 + 100 * US);
	p = critpath(t, 101, &st, 0);
	assert_int_equal(st.total_ns, 100 * US);
	assert_int_equal(st.runqueue_ns, 14 * US);
	assert_int_equal(sum_with(p, "[run queue]"), 14 * US);
	/* Every nanosecond is worker_compute's: run queue, running, both. */
	assert_int_equal(sum_with(p, "worker_compute"), 100 * US);
	assert_int_equal(sum_with(p, "irqentry_exit"), 0);
	taproot_profile_free(p);
	taproot_timeline_free(t);

	/*
	 * No sample within CP_NEAR_NS: the kernel stack is all there is, for
	 * the run queue [40,50] and for the running (0,40] before it, read
	 * as "[running]" over the stack it ended in.
	 */
	assert_int_equal(taproot_timeline_new(NULL, &t), 0);
	tp_timeline_time(t, T0);
	preempt(t, 101, "worker", 40, 50, f_kernel_only);
	tp_timeline_time(t, T0 + 100 * US);
	tp_timeline_exit(t, 100, 101, T0 + 100 * US);
	p = critpath(t, 101, &st, 0);
	assert_int_equal(st.runqueue_ns, 10 * US);
	assert_int_equal(sum_with(p, "irqentry_exit"), (10 + 40) * US);
	taproot_profile_free(p);
	taproot_timeline_free(t);
}

/* The trace of the chain through tests/vm/tracecheck.py, the strict reader. */
static void trace_passes_the_strict_reader(void **state)
{
	struct taproot_timeline *t = chain();
	char path[] = "/tmp/test_timeline.XXXXXX", *out;
	int fd = mkstemp(path), st;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(taproot_timeline_write_trace_file(t, path), 0);
	out = run(&st, "python3 tests/vm/tracecheck.py '%s' --summary", path);
	assert_int_equal(st, 0);
	/* Three flows: the barrier, the mutex, the join; the sleeper's timers none. */
	assert_non_null(strstr(out, "\"flows\": 3"));
	assert_non_null(strstr(out, "\"instants\": 8"));
	/* The holder ran 505 us; the sleeper was blocked 4 of every 5. */
	assert_non_null(strstr(out, "\"100/102\": {\"running\": 505000}"));
	assert_non_null(strstr(out, "\"blocked S\": 400000"));
	free(out);
	/* A damaged copy is refused: the strict reader can fail. */
	out = run(&st, "sed 's/\"ph\":\"f\"/\"ph\":\"F\"/' '%s' >'%s.bad' && "
		  "python3 tests/vm/tracecheck.py '%s.bad'", path, path, path);
	assert_int_not_equal(st, 0);
	free(out);
	out = run(&st, "rm -f '%s.bad'", path);
	free(out);
	unlink(path);
	taproot_timeline_free(t);
}

/*
 * As on 7.2-rt: a thread's exit record, then its wakeup of its joiner, and
 * no last switch-out recorded: it was running at that wakeup all the same.
 */
static void trace_waker_after_exit(void **state)
{
	struct taproot_timeline *t;
	char path[] = "/tmp/test_timeline.XXXXXX", *out;
	int fd = mkstemp(path), st;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(taproot_timeline_new(NULL, &t), 0);
	tp_timeline_time(t, T0);
	sample(t, 101, "worker", 8, f_worker, NF(f_worker));
	tp_timeline_exit(t, 100, 101, T0 + 10 * US);
	off(t, 100, "chain", 5, 12, 13, 101, TP_WAKE_THREAD, f_join, NF(f_join),
	    f_exit, NF(f_exit));
	tp_timeline_time(t, T0 + 20 * US);
	assert_int_equal(taproot_timeline_write_trace_file(t, path), 0);
	out = run(&st, "python3 tests/vm/tracecheck.py '%s' --summary", path);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "\"flows\": 1"));
	assert_non_null(strstr(out, "\"100/101\": {\"running\": 12000}"));
	free(out);
	unlink(path);
	taproot_timeline_free(t);
}

static void trace_window_and_bounds(void **state)
{
	struct taproot_timeline_opts o = { .window_ns = 100 * US, .max_events = 64 };
	struct taproot_timeline_stats st;
	struct taproot_timeline *t;
	uint32_t pids[TAPROOT_TIMELINE_MAX_PIDS + 1] = { 0 };

	(void)state;
	o.pids = pids;
	o.nr_pids = TAPROOT_TIMELINE_MAX_PIDS + 1;
	assert_int_equal(taproot_timeline_new(&o, &t), -EINVAL);
	o.nr_pids = 0;
	o.max_events = 0;
	assert_int_equal(taproot_timeline_new(&o, &t), 0);
	for (uint64_t at = 0; at < 1000; at++)
		sample(t, 101, "worker", at, f_worker, NF(f_worker));
	taproot_timeline_stats(t, &st);
	/* The window: the last 100 us. */
	assert_int_equal(st.dropped_full, 0);
	assert_int_equal(st.start_ns, T0 + 899 * US);
	assert_int_equal(st.stacks, 1);
	taproot_timeline_free(t);

	/* 64 events at most: the oldest half dropped as it fills, and the start after them. */
	o.window_ns = 0;
	o.max_events = 64;
	assert_int_equal(taproot_timeline_new(&o, &t), 0);
	for (uint64_t at = 0; at < 1000; at++)
		sample(t, 101, "worker", at, f_worker, NF(f_worker));
	taproot_timeline_stats(t, &st);
	assert_true(st.dropped_full >= 1000 - 64);
	assert_int_equal(st.samples, 1000);	/* counted when kept, dropped or not */
	assert_true(st.start_ns >= T0 + (1000 - 64) * US && st.start_ns < T0 + 999 * US);
	taproot_timeline_free(t);

	pids[0] = 7;
	o.nr_pids = 1;
	o.window_ns = 0;
	assert_int_equal(taproot_timeline_new(&o, &t), 0);
	sample(t, 101, "worker", 1, f_worker, NF(f_worker));	/* pid 100: not kept */
	taproot_timeline_stats(t, &st);
	assert_int_equal(st.other_pids, 1);
	assert_int_equal(st.samples, 0);
	taproot_timeline_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(critpath_follows_wakers),
		cmocka_unit_test(critpath_ends_at_timers),
		cmocka_unit_test(critpath_unknown_thread),
		cmocka_unit_test(critpath_waker_not_recorded),
		cmocka_unit_test(critpath_waker_preempted_and_blocked),
		cmocka_unit_test(critpath_preempted_walk_failed),
		cmocka_unit_test(trace_passes_the_strict_reader),
		cmocka_unit_test(trace_waker_after_exit),
		cmocka_unit_test(trace_window_and_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
