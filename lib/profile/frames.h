/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resolved stacks kept past the call that gave them (lib/profile/frames.c),
 * for the off-CPU join, the timeline and the pipeline's symbol cache. Not
 * for programs.
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
 * Frames packed in one allocation: tp_frames_size() is the room the @nr
 * frames @f take, tp_frames_pack() copies them into @dst, their strings
 * and build IDs after them (from &@dst[@nr]), keys as they are.
 */
size_t tp_frames_size(const struct taproot_profile_frame *f, size_t nr);
void tp_frames_pack(struct taproot_profile_frame *dst, const struct taproot_profile_frame *f,
		    size_t nr);

/*
 * A copy of the @nr frames @f (leaf first) in one allocation to free(),
 * or NULL when memory is short or it would take more than @room bytes.
 * With @keys the copies keep the frames' keys (taproot_profile_frame.key):
 * only for a copy added to the profiles of the resolver that made them,
 * whose keys are never reused (the pipeline's cache serials); else NULL.
 */
struct tp_frames *tp_frames_copy(const struct taproot_profile_frame *f, size_t nr, size_t room,
				 bool keys);

#endif /* TAPROOT_FRAMES_H */
