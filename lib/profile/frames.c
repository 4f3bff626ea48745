// SPDX-License-Identifier: GPL-2.0
/* Resolved stacks kept past the call that gave them: see frames.h. */
#include <stdlib.h>
#include <string.h>

#include "profile/frames.h"
#include "util/util.h"

size_t tp_frames_size(const struct taproot_profile_frame *f, size_t nr)
{
	size_t size = nr * sizeof(f[0]);

	for (size_t i = 0; i < nr; i++)
		size += tp_strsize(f[i].function) + tp_strsize(f[i].system_name) +
			tp_strsize(f[i].file) + tp_strsize(f[i].mapping_path) +
			(f[i].build_id ? f[i].build_id_len : 0);
	return size;
}

void tp_frames_pack(struct taproot_profile_frame *dst, const struct taproot_profile_frame *f,
		    size_t nr)
{
	char *pos = (char *)&dst[nr];

	for (size_t i = 0; i < nr; i++) {
		struct taproot_profile_frame *d = &dst[i];

		*d = f[i];
		d->function = tp_strcopy(&pos, f[i].function);
		d->system_name = tp_strcopy(&pos, f[i].system_name);
		d->file = tp_strcopy(&pos, f[i].file);
		d->mapping_path = tp_strcopy(&pos, f[i].mapping_path);
		if (f[i].build_id && f[i].build_id_len) {
			memcpy(pos, f[i].build_id, f[i].build_id_len);
			d->build_id = (const uint8_t *)pos;
			pos += f[i].build_id_len;
		} else {
			d->build_id = NULL;
			d->build_id_len = 0;
		}
	}
}

struct tp_frames *tp_frames_copy(const struct taproot_profile_frame *f, size_t nr, size_t room,
				 bool keys)
{
	size_t size = sizeof(struct tp_frames) + tp_frames_size(f, nr);
	struct tp_frames *s;

	if (size > room || !(s = malloc(size)))
		return NULL;
	s->nr = nr;
	s->bytes = size;
	tp_frames_pack(s->frames, f, nr);
	for (size_t i = 0; i < nr && !keys; i++)
		s->frames[i].key = NULL;
	return s;
}
