/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resolved stacks, pipeline internals (lib/pipeline/resolved.c): the
 * profile frames an interned STACK record resolved to when it arrived,
 * kept with the record in the mirror of the stack slots (interned.h), so
 * that each sample naming the stack later (a SAMPLE_REF, a drained count)
 * costs a lookup and no unwinding or symbolization.
 *
 * Resolving when the STACK arrives, not when a sample names it, is also
 * what keeps a count right across an exec: a count is drained long after
 * its stack was captured, when the process may run another program whose
 * maps would give the old pcs other names.
 *
 * A resolution stays valid while its record does: the pcs are the
 * process's addresses when the stack was captured, and the names they had
 * then remain theirs however the process's maps change later. Only new
 * debug information (debuginfod) can name them better: a resolution
 * records the debuginfod generation it was made under, and one made under
 * an older one is made again.
 *
 * The STACK record does not say which program its process ran: read
 * after an execve, it would be resolved with the new program's maps. So a
 * resolution keeps the name of the process its maps were read under, and
 * a sample of the main thread under another name does not take it: it is
 * resolved on its own, where its name is checked against the process's
 * (the kernel frames alone when they differ).
 *
 * Memory is bounded by the pool's byte budget: a STACK arriving beyond it
 * is not resolved ahead, its samples are resolved one by one, as before
 * (counted in over_budget).
 */
#ifndef TAPROOT_PIPELINE_RESOLVED_H
#define TAPROOT_PIPELINE_RESOLVED_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/frames.h"

/* What became of a stack's user part, for the pipeline's counters. */
enum tp_stack_user {
	TP_STACK_KERNEL_ONLY,	/* none to unwind */
	TP_STACK_STALE,		/* left out: captured under another program */
	TP_STACK_GONE,		/* the process could not be read */
	TP_STACK_UNWOUND,	/* unwound, ended as @end says */
};

/* How a stack resolved: what a sample of it adds to the counters. */
struct tp_stack_outcome {
	enum tp_stack_user user;
	unsigned int end;		/* enum taproot_unwind_end, with UNWOUND */
	unsigned int kernel_frames;	/* kernel pcs captured */
};

struct tp_resolved {
	struct tp_stack_outcome outcome;
	uint64_t generation;		/* debuginfod's, when resolved */
	char comm[17];			/* the process's name its maps were read
					 * under ("" unknown, "\n" changing) */
	struct tp_frames *frames;	/* leaf first */
};

struct tp_resolved_pool {
	size_t bytes, max;		/* held; budget */
	uint64_t made, over_budget;
};

/*
 * A resolution of @nr frames @f into @pool, or NULL when it would take the
 * pool past its budget (counted) or memory is short. The copy keeps the
 * frames' profile memo keys: the serials of the symbolized-pc cache's
 * entries (symcache.h), never handed out twice, so that a location shared
 * by many stacks is made once in a profile, from whichever comes first.
 */
struct tp_resolved *tp_resolved_new(struct tp_resolved_pool *pool,
				    const struct taproot_profile_frame *f, size_t nr,
				    const struct tp_stack_outcome *o, uint64_t generation,
				    const char *comm);

/* Free @r (NULL: nothing), giving its bytes back to @pool. */
void tp_resolved_free(struct tp_resolved_pool *pool, struct tp_resolved *r);

#endif /* TAPROOT_PIPELINE_RESOLVED_H */
