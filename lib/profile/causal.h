/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU join (lib/profile/causal.c), as the pipeline (lib/pipeline/) drives
 * it. Not for programs: they see it through taproot_pipeline_*.
 */
#ifndef TAPROOT_CAUSAL_H
#define TAPROOT_CAUSAL_H

#include <linux/taproot.h>

#include "profile/profile.h"
#include "profile/timeline.h"

struct tp_causal;

/*
 * A stack snapshot resolved into profile frames (leaf first) and the name
 * of the task's process. Everything is borrowed until the next call into
 * the pipeline: the join copies what it keeps.
 */
struct tp_causal_stack {
	const struct taproot_profile_frame *frames;
	size_t nr;
	const char *comm;		/* the process's name */
	/*
	 * For the interval's own task (@owner): the labels of its process,
	 * a reference the join takes over (NULL: none), and whether the
	 * relabel rules drop its intervals (its stack then not resolved).
	 */
	struct tp_labels *labels;
	bool dropped;
};

/*
 * Resolve the snapshot @snap of task @tid of process @pid (@snap_len
 * bytes readable from @snap, the snapshot and what follows it in its
 * record; NULL @snap: no stacks were captured); @owner: the task is the
 * interval's own, not its waker. 0, or a negative errno when the snapshot
 * does not add up (counted as a bad record; @out's labels are dropped).
 */
typedef int (*tp_causal_resolve_fn)(void *arg, uint32_t pid, uint32_t tid,
				    const char *thread_comm, bool owner,
				    const struct taproot_stack_snap *snap, size_t snap_len,
				    struct tp_causal_stack *out);

struct tp_causal_opts {
	size_t max_intervals;		/* 0: 16384 */
	uint64_t max_open_ns;		/* 0: 10 minutes */
	uint64_t min_block_ns;		/* 0: every interval */
	bool label_tid;
	tp_causal_resolve_fn resolve;
	void *arg;
	/* Borrowed; the samples go there. */
	struct taproot_profile *offcpu, *offwake, *schedlat;
	/* How every sample's labels end (NULL: with its own); borrowed. */
	struct taproot_labeling *labeling;
	/* Every interval goes there too, open ones at the final flush (NULL: none); borrowed. */
	struct taproot_timeline *timeline;
};

int tp_causal_new(const struct tp_causal_opts *opts, struct tp_causal **cp);
void tp_causal_free(struct tp_causal *c);

/* A SWITCH or WAKING record, valid as taproot_rec_check() says. */
void tp_causal_record(struct tp_causal *c, const struct taproot_rec_header *rec);

/* The end of a consume round: intervals completed before this round are added. */
void tp_causal_end_round(struct tp_causal *c);

/* As taproot_pipeline_flush(). */
void tp_causal_flush(struct tp_causal *c, bool final);

void tp_causal_stats(const struct tp_causal *c, struct taproot_causal_stats *st);

/*
 * From now on, intervals go to timeline @t (NULL: none). The one before
 * gets the intervals it has not had yet, those still open as open ones:
 * it ends as the session stands now.
 */
void tp_causal_set_timeline(struct tp_causal *c, struct taproot_timeline *t);

#endif /* TAPROOT_CAUSAL_H */
