// SPDX-License-Identifier: GPL-2.0
/*
 * Resolved stacks (resolved.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/resolved.h"

struct tp_resolved *tp_resolved_new(struct tp_resolved_pool *pool,
				    const struct taproot_profile_frame *f, size_t nr,
				    const struct tp_stack_outcome *o, uint64_t generation,
				    const char *comm)
{
	size_t size = sizeof(struct tp_resolved) + sizeof(struct tp_frames) + tp_frames_size(f, nr);
	struct tp_resolved *r;

	if (pool->bytes + size > pool->max) {
		pool->over_budget++;
		return NULL;
	}
	r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	/* The cache's serials, never reused: they stand for the copies too. */
	r->frames = tp_frames_copy(f, nr, size, true);
	if (!r->frames) {
		free(r);
		return NULL;
	}
	r->outcome = *o;
	r->generation = generation;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	pool->bytes += sizeof(*r) + r->frames->bytes;
	pool->made++;
	return r;
}

void tp_resolved_free(struct tp_resolved_pool *pool, struct tp_resolved *r)
{
	if (!r)
		return;
	pool->bytes -= sizeof(*r) + r->frames->bytes;
	free(r->frames);
	free(r);
}
