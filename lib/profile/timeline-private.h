/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timeline's insides, shared by timeline.c (which owns them), trace.c
 * and critpath.c (which read them through a view). Not for programs.
 */
#ifndef TAPROOT_TIMELINE_PRIVATE_H
#define TAPROOT_TIMELINE_PRIVATE_H

#include "profile/frames.h"
#include "profile/timeline.h"
#include "util/hash.h"

#define TL_MAX_STACK_BYTES	(64u << 20)
#define TL_END			UINT64_MAX	/* an interval still open */

enum tl_kind {
	TL_OFF,				/* an off-CPU interval */
	TL_SAMPLE,
	TL_EXIT,
};

struct tl_event {
	uint64_t t0;			/* OFF: switch-out (a new task: wakeup); else the time */
	uint64_t t_wake;		/* OFF: 0 without a waking */
	uint64_t t_in;			/* OFF: TL_END while open */
	uint32_t pid, tid;
	uint32_t stack;			/* OFF: blocked, SAMPLE: its; stack id + 1, 0: none */
	uint32_t waker_stack;		/* OFF */
	uint32_t waker_pid, waker_tid;	/* OFF, with TP_WAKE_THREAD */
	uint32_t cpu;			/* SAMPLE */
	uint8_t kind;			/* enum tl_kind */
	uint8_t wake;			/* enum tp_wake_kind */
	bool new_task;			/* OFF: a new task's first wait for a CPU */
	char state[3];			/* OFF: "S", "D", "R", "R+" */
};

struct tl_thread {
	uint32_t tid, pid;
	char thread_comm[17];
	char comm[17];			/* its process's */
};

struct taproot_timeline {
	struct taproot_timeline_opts o;
	uint32_t pids[TAPROOT_TIMELINE_MAX_PIDS];
	struct tl_event *ev;
	size_t nr_ev, alloc_ev;
	struct tp_frames **stacks;	/* each distinct stack once, by id */
	uint64_t *stack_hash;		/* each one's hash, by id */
	size_t nr_stacks, alloc_stacks, alloc_hashes;
	struct tp_index stack_ix;
	struct tl_thread *threads;
	size_t nr_threads, alloc_threads;
	struct tp_index thread_ix;
	uint64_t dropped_until;		/* the latest time of an event dropped */
	struct taproot_timeline_stats st;
};

/*
 * The events of the window, by thread: idx[] holds event indices sorted by
 * (pid, tid, t0); each thread's run of them is one tl_vthread.
 */
struct tl_view {
	uint64_t start, end;		/* the window */
	uint32_t *idx;
	size_t nr_idx;
	struct tl_vthread {
		uint32_t pid, tid;
		size_t first, nr;	/* into idx */
		uint64_t born;		/* first run: a new task's wakeup, else start */
		uint64_t died;		/* its exit, TL_END: none */
		bool died_out;		/* died is its last switch-out */
	} *th;
	size_t nr_th;
};

int tl_view_build(const struct taproot_timeline *t, struct tl_view *v);
void tl_view_free(struct tl_view *v);
const struct tl_vthread *tl_view_thread(const struct tl_view *v, uint32_t pid, uint32_t tid);
/* A thread's names; NULL: never seen. */
const struct tl_thread *tl_thread_get(const struct taproot_timeline *t, uint32_t tid);
/*
 * The name of process @pid: its main thread's (the kernel's definition of a
 * process's comm), else the one its threads' records gave; "" unknown.
 */
const char *tl_process_name(const struct taproot_timeline *t, uint32_t pid);
/* Stack id + 1 → the stack; NULL for 0. */
static inline const struct tp_frames *tl_stack_get(const struct taproot_timeline *t, uint32_t id)
{
	return id && id <= t->nr_stacks ? t->stacks[id - 1] : NULL;
}
/* The end of off-CPU interval @e in view @v: its switch-in, or the window's end. */
static inline uint64_t tl_off_end(const struct tl_view *v, const struct tl_event *e)
{
	return e->t_in == TL_END ? v->end : e->t_in;
}

#endif /* TAPROOT_TIMELINE_PRIVATE_H */
