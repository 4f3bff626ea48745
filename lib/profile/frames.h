/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resolved stacks kept past the call that gave them (lib/profile/frames.c),
 * for the off-CPU join and the timeline. Not for programs.
 */
#ifndef TAPROOT_FRAMES_H
#define TAPROOT_FRAMES_H

#include "profile/profile.h"

/* A copy of resolved frames, their strings and build IDs after them, one allocation. */
struct tp_frames {
	size_t nr, bytes;		/* frames; the allocation's size */
	struct taproot_profile_frame frames[];
};

/*
 * A copy of the @nr frames @f (leaf first) in one allocation to free(),
 * or NULL when memory is short or it would take more than @room bytes.
 * The copies' keys are NULL: they outlive the resolver's cache entries.
 */
struct tp_frames *tp_frames_copy(const struct taproot_profile_frame *f, size_t nr, size_t room);

#endif /* TAPROOT_FRAMES_H */
