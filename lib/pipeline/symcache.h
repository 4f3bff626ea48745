/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cache of symbolized pcs, pipeline internals (lib/pipeline/symcache.c):
 * profile frames by (process identity, pc, flags), so that a pc seen again
 * costs a lookup, not a symbolization. The frames of the stack being built
 * borrow their strings from its entries: the caller empties it between
 * stacks only (tp_symcache_full()), never in the middle of one.
 */
#ifndef TAPROOT_PIPELINE_SYMCACHE_H
#define TAPROOT_PIPELINE_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/*
 * One symbolized pc: profile frames (innermost first) whose strings and
 * build IDs live in the same allocation, after the frames.
 */
struct tp_sym {
	struct tp_sym *next;		/* hash chain */
	int pid;			/* -1: kernel */
	uint64_t start_time;
	uint64_t pc;
	unsigned int flags;		/* TAPROOT_SYM_RETADDR */
	unsigned int nr;
	unsigned int unknown;		/* frames the symbolizer did not know */
	/*
	 * Never handed out twice, 0 never: the profile memo key of its
	 * frames (taproot_profile_frame.key), which copies of them that
	 * outlive the entry keep (resolved.h).
	 */
	uint64_t serial;
	struct taproot_profile_frame frames[];
};

struct tp_symcache {
	struct tp_sym **buckets;
	size_t nbuckets;		/* power of two */
	size_t count, max;
	uint64_t serials;		/* handed out */
};


/* @c for @entries entries at most (then emptied by its user): 0 or -ENOMEM. */
int tp_symcache_init(struct tp_symcache *c, size_t entries);

/* Empty @c, and free its table. */
void tp_symcache_free(struct tp_symcache *c);

/* Empty @c: every entry freed. */
void tp_symcache_clear(struct tp_symcache *c);

/* The entry of (@pid, @start_time, @pc, @flags), or NULL. */
struct tp_sym *tp_symcache_find(struct tp_symcache *c, int pid, uint64_t start_time,
				uint64_t pc, unsigned int flags);

/*
 * Copy @nr frames (strings borrowed from the symbolizer) into a new entry
 * and insert it. NULL on -ENOMEM. Never empties the cache.
 */
struct tp_sym *tp_symcache_add(struct tp_symcache *c, int pid, uint64_t start_time,
			       uint64_t pc, unsigned int flags,
			       const struct taproot_profile_frame *frames, unsigned int nr,
			       unsigned int unknown);

/*
 * Drop the entry of (@pid, @start_time, @pc, @flags), if any: its pc is
 * symbolized again when next seen. Between stacks only (see above).
 */
void tp_symcache_remove(struct tp_symcache *c, int pid, uint64_t start_time, uint64_t pc,
			unsigned int flags);

/*
 * Whether @n more entries would overfill @c: its user then empties it
 * before the stack about to be symbolized rather than in its middle. It
 * holds at most max plus one stack's pcs.
 */
bool tp_symcache_full(const struct tp_symcache *c, size_t n);

#endif /* TAPROOT_PIPELINE_SYMCACHE_H */
