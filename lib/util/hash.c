// SPDX-License-Identifier: GPL-2.0
/* Hashing and the open-addressing index (hash.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/util.h"

uint64_t tp_hash_bytes(const void *p, size_t len)
{
	const char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = tp_hash_mix(h, w);
	}
	w = 0;
	memcpy(&w, s, len);
	return tp_hash_mix(h, w);
}

int tp_index_reserve(struct tp_index *ix)
{
	size_t n = ix->slots ? ix->mask + 1 : 0;
	struct tp_index_slot *ns;

	if (ix->slots && (ix->used + 1) * 2 <= n)
		return 0;
	n = n ? n * 2 : 64;
	ns = calloc(n, sizeof(*ns));
	if (!ns)
		return tp_err(-ENOMEM, "out of memory for an index of %zu slots", n);
	for (size_t i = 0; ix->slots && i <= ix->mask; i++) {
		struct tp_index_slot s = ix->slots[i];
		size_t j;

		if (!s.idx1)
			continue;
		for (j = s.hash & (n - 1); ns[j].idx1; j = (j + 1) & (n - 1))
			;
		ns[j] = s;
	}
	free(ix->slots);
	ix->slots = ns;
	ix->mask = n - 1;
	return 0;
}

struct tp_index_slot *tp_index_probe(const struct tp_index *ix, uint32_t hash,
				     tp_index_eq eq, const void *ctx, const void *key)
{
	if (!ix->slots)
		return NULL;
	for (size_t i = hash & ix->mask;; i = (i + 1) & ix->mask) {
		struct tp_index_slot *s = &ix->slots[i];

		if (!s->idx1 || (s->hash == hash && eq(ctx, s->idx1 - 1, key)))
			return s;
	}
}

void tp_index_clear(struct tp_index *ix)
{
	if (ix->slots)
		memset(ix->slots, 0, (ix->mask + 1) * sizeof(*ix->slots));
	ix->used = 0;
}

void tp_index_free(struct tp_index *ix)
{
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}
