// SPDX-License-Identifier: GPL-2.0
/*
 * The cache of symbolized pcs (symcache.h): chained buckets, a power of
 * two of them.
 */
#include <errno.h>
#include <stdlib.h>

#include "pipeline/symcache.h"
#include "profile/frames.h"
#include "util/hash.h"
#include "util/util.h"

static uint64_t symcache_hash(int pid, uint64_t start_time, uint64_t pc, unsigned int flags)
{
	uint64_t h = tp_hash_mix(tp_hash_mix(0, (uint32_t)pid), start_time);

	return tp_hash_fin(tp_hash_mix(tp_hash_mix(h, pc), flags));
}

void tp_symcache_clear(struct tp_symcache *c)
{
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct tp_sym *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
		c->buckets[i] = NULL;
	}
	c->count = 0;
}

struct tp_sym *tp_symcache_find(struct tp_symcache *c, int pid, uint64_t start_time,
				uint64_t pc, unsigned int flags)
{
	struct tp_sym *e = c->buckets[symcache_hash(pid, start_time, pc, flags) & (c->nbuckets - 1)];

	for (; e; e = e->next)
		if (e->pc == pc && e->pid == pid && e->start_time == start_time &&
		    e->flags == flags)
			return e;
	return NULL;
}

struct tp_sym *tp_symcache_add(struct tp_symcache *c, int pid, uint64_t start_time,
			       uint64_t pc, unsigned int flags,
			       const struct taproot_profile_frame *frames, unsigned int nr,
			       unsigned int unknown)
{
	struct tp_sym *e = malloc(sizeof(struct tp_sym) + tp_frames_size(frames, nr));
	size_t b;

	if (!e)
		return NULL;
	e->pid = pid;
	e->start_time = start_time;
	e->pc = pc;
	e->flags = flags;
	e->nr = nr;
	e->unknown = unknown;
	e->serial = ++c->serials;
	tp_frames_pack(e->frames, frames, nr);
	b = symcache_hash(pid, start_time, pc, flags) & (c->nbuckets - 1);
	e->next = c->buckets[b];
	c->buckets[b] = e;
	c->count++;
	return e;
}

void tp_symcache_remove(struct tp_symcache *c, int pid, uint64_t start_time, uint64_t pc,
			unsigned int flags)
{
	struct tp_sym **pe = &c->buckets[symcache_hash(pid, start_time, pc, flags) &
					 (c->nbuckets - 1)];

	for (; *pe; pe = &(*pe)->next) {
		struct tp_sym *e = *pe;

		if (e->pc == pc && e->pid == pid && e->start_time == start_time &&
		    e->flags == flags) {
			*pe = e->next;
			free(e);
			c->count--;
			return;
		}
	}
}

bool tp_symcache_full(const struct tp_symcache *c, size_t n)
{
	return c->count + n > c->max;
}

int tp_symcache_init(struct tp_symcache *c, size_t entries)
{
	c->nbuckets = 1;
	while (c->nbuckets < entries)
		c->nbuckets <<= 1;
	c->max = entries;
	c->count = 0;
	c->buckets = calloc(c->nbuckets, sizeof(c->buckets[0]));
	return c->buckets ? 0 : tp_err(-ENOMEM, NULL);
}

void tp_symcache_free(struct tp_symcache *c)
{
	if (c->buckets)
		tp_symcache_clear(c);
	free(c->buckets);
	c->buckets = NULL;
}
