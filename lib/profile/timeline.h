/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, profile layer: the timeline of a session's threads
 * (lib/profile/timeline.c), its Chrome trace (trace.c) and the critical
 * path of one thread through it (critpath.c).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 *
 * A timeline holds what the off-CPU join (causal.c) made of SWITCH and
 * WAKING records, every interval a thread spent off CPU with how it ended
 * (who woke it, when), and the CPU samples with their resolved stacks.
 * A thread runs from the end of one off-CPU interval to the start of the
 * next: running time is never recorded, it is what the intervals leave.
 * So a timeline is only whole when every interval was recorded: a session
 * with TAPROOT_A_CFG_SCHED_ONE_IN above 1 would show threads running
 * through the intervals it did not select (taprootctl refuses it).
 *
 * Memory is bounded: max_events intervals, samples and exits (beyond it
 * the oldest half are dropped, and the timeline then starts after them),
 * and TL_MAX_STACK_BYTES of stacks (beyond it an event keeps no stack);
 * both are counted and written into the trace's metadata.
 */
#ifndef TAPROOT_TIMELINE_H
#define TAPROOT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

#define TAPROOT_TIMELINE_MAX_EVENTS	524288	/* 2^19 */
#define TAPROOT_TIMELINE_MAX_PIDS	64

struct taproot_timeline;

struct taproot_timeline_opts {
	uint64_t window_ns;		/* the last window_ns of the session; 0: all */
	size_t max_events;		/* 0: TAPROOT_TIMELINE_MAX_EVENTS */
	/* Processes kept (copied; at most TAPROOT_TIMELINE_MAX_PIDS); none: all. */
	const uint32_t *pids;
	size_t nr_pids;
};

struct taproot_timeline_stats {
	uint64_t intervals, samples, exits;	/* kept, in the window or not */
	uint64_t dropped_full;		/* the oldest, dropped at max_events */
	uint64_t other_pids;		/* events of processes not kept */
	uint64_t no_stack;		/* events kept without their stack: stacks full */
	size_t stacks, stack_bytes;	/* distinct stacks held */
	uint64_t first_ns, last_ns;	/* the session's first and last record */
	uint64_t start_ns;		/* where the timeline starts: window, drops */
};

/* A new empty timeline. -EINVAL (too many pids), -ENOMEM. */
int taproot_timeline_new(const struct taproot_timeline_opts *opts,
			 struct taproot_timeline **tp);
void taproot_timeline_free(struct taproot_timeline *t);
void taproot_timeline_stats(const struct taproot_timeline *t, struct taproot_timeline_stats *st);

/*
 * Write @t as a Chrome trace (the JSON object format that Perfetto,
 * chrome://tracing and speedscope read; docs/offcpu-and-critical-path.md,
 * "The trace", is its contract) to @f: per thread, "X" slices "running",
 * "runnable" and "blocked S|D" (the blocked stack), an "s"/"f" flow "wakeup" from the
 * waker's slice to the wakee's runnable slice, and an "i" instant per CPU
 * sample with its stack ("sf", into "stackFrames"); every thread's events
 * in time order. Times in microseconds from the timeline's start. 0, or
 * -errno of the writes.
 */
int taproot_timeline_write_trace(struct taproot_timeline *t, FILE *f);

/* The same into @path, replaced whole, mode 0600. 0 or -errno. */
int taproot_timeline_write_trace_file(struct taproot_timeline *t, const char *path);

/* The critical path's profile: critical/nanoseconds, no period. */
void taproot_profile_desc_critpath(struct taproot_profile_desc *desc);

struct taproot_critpath_stats {
	uint64_t total_ns;		/* the time walked: the window up to the end */
	uint64_t running_ns;		/* on some thread's own stacks */
	uint64_t runqueue_ns;		/* a thread on the path waiting for a CPU */
	uint64_t irq_ns, timer_ns;	/* chains ended by an interrupt, a timer */
	uint64_t unknown_ns;		/* no data: a waker not recorded, a gap */
	uint64_t threads;		/* distinct threads on the path */
	uint64_t steps;			/* stretches walked */
	bool truncated;			/* the walk stopped at its step bound */
};

/*
 * Add the critical path of thread @tid (a pid names its main thread) to
 * @p, made with taproot_profile_desc_critpath(). Walking back from the
 * thread's end (its exit, or the timeline's end): while it runs, the time
 * goes to its own samples (a stretch without one to the stack it was next
 * seen with, or "[running]"); while runnable, to "[run queue]" over the
 * stack it blocked in; while blocked, the walk follows the thread that
 * woke it, from the moment of the waking back to the start of the wait,
 * and so on recursively; an interrupt ends the chain as "[hardirq]",
 * "[softirq]", "[nmi]" or, when its stack shows a timer's expiry,
 * "[timer]"; a wait whose end was not recorded as "[unknown]" (each over
 * the blocked stack). Labels: thread (the thread on the path at that
 * time), tid, pid, comm. Returns 0; -ENOENT (@tid never seen), -ENOMEM.
 */
int taproot_timeline_critical_path(struct taproot_timeline *t, uint32_t tid,
				   struct taproot_profile *p, struct taproot_critpath_stats *st);

/*
 * The critical paths of the @nr threads @tids, one profile, as a pprof file
 * @path (replaced whole, mode 0600), its profile's comments @comments
 * (@nr_comments, borrowed) and its time the wall clock's now less the
 * timeline's length; @st sums the walks'. Errors as
 * taproot_timeline_critical_path() (the first thread's), and those of the write.
 */
int taproot_timeline_write_critpath(struct taproot_timeline *t, const uint32_t *tids, size_t nr,
				    const char *path, const char *const *comments,
				    size_t nr_comments, struct taproot_critpath_stats *st);

/*
 * The threads @target names, into @tids (at most @max): a number is that
 * thread (if it was seen); a name, the main thread (tid == pid) of every
 * process of that name (its main thread's comm). Returns how many.
 */
size_t taproot_timeline_targets(const struct taproot_timeline *t, const char *target,
				uint32_t *tids, size_t max);

/* ------------------------------------------- fed by the pipeline */

/* How an off-CPU interval's wait ended. */
enum tp_wake_kind {
	TP_WAKE_NONE,			/* no waking recorded (preempted, lost, open) */
	TP_WAKE_THREAD,
	TP_WAKE_HARDIRQ,
	TP_WAKE_SOFTIRQ,
	TP_WAKE_NMI,
};

/* An off-CPU interval; frames borrowed for the call. */
struct tp_timeline_interval {
	uint32_t pid, tid;
	const char *comm, *thread_comm;
	const char *state;		/* "S", "D", "R", "R+"; "new" for a new task */
	uint64_t t_out;			/* a new task: its first wakeup */
	uint64_t t_wake;		/* 0: no waking */
	uint64_t t_in;			/* 0: still off CPU at the end */
	enum tp_wake_kind wake;
	uint32_t waker_pid, waker_tid;
	const struct taproot_profile_frame *blocked, *waker;
	size_t nr_blocked, nr_waker;
};

void tp_timeline_interval(struct taproot_timeline *t, const struct tp_timeline_interval *iv);
void tp_timeline_sample(struct taproot_timeline *t, uint32_t pid, uint32_t tid, uint32_t cpu,
			uint64_t time_ns, const char *comm, const char *thread_comm,
			const struct taproot_profile_frame *frames, size_t nr);
void tp_timeline_exit(struct taproot_timeline *t, uint32_t pid, uint32_t tid, uint64_t time_ns);
/* A record's time: the session's bounds. */
void tp_timeline_time(struct taproot_timeline *t, uint64_t time_ns);

#endif /* TAPROOT_TIMELINE_H */
