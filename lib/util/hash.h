/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: hashing, and an open-addressing index of the
 * entries of an array (lib/util/hash.c). For lib/ and ctl/, not for
 * programs.
 */
#ifndef TAPROOT_UTIL_HASH_H
#define TAPROOT_UTIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mix the word @v into the hash state @h (start from any constant). */
static inline uint64_t tp_hash_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

/*
 * The last step before a hash picks a slot: every bit of @h then affects
 * the low bits a power-of-two table uses.
 */
static inline uint64_t tp_hash_fin(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* The hash state of @len bytes at @p, mixed eight bytes at a time. */
uint64_t tp_hash_bytes(const void *p, size_t len);

/*
 * An open-addressing index of the entries of an array, by hash: each slot
 * holds an entry's index and its 32-bit hash, so that a probe compares
 * entries only when their hashes match. Linear probing, at most half full,
 * no deletion (an index is cleared as a whole). Zeroed is empty.
 */
struct tp_index {
	struct tp_index_slot {
		uint32_t hash;
		uint32_t idx1;		/* index + 1; 0: empty */
	} *slots;
	size_t mask;			/* slots - 1, slots a power of two */
	size_t used;
};

/* Whether entry @idx equals @key, for tp_index_probe(). */
typedef bool (*tp_index_eq)(const void *ctx, uint32_t idx, const void *key);

/* Room for one more entry. 0 or -ENOMEM (recorded). */
int tp_index_reserve(struct tp_index *ix);

/*
 * The slot holding the entry equal to @key (by @eq with @ctx), or the empty
 * slot where it would go; NULL when @ix has no slots yet. The slot is valid
 * until the next tp_index_reserve().
 */
struct tp_index_slot *tp_index_probe(const struct tp_index *ix, uint32_t hash,
				     tp_index_eq eq, const void *ctx, const void *key);

/* Fill the empty slot @s (from tp_index_probe()) with entry @idx. */
static inline void tp_index_set(struct tp_index *ix, struct tp_index_slot *s,
				uint32_t hash, size_t idx)
{
	s->hash = hash;
	s->idx1 = (uint32_t)idx + 1;
	ix->used++;
}

/* Empty @ix, keeping its slots. */
void tp_index_clear(struct tp_index *ix);

/* Free @ix's slots; it is empty again. */
void tp_index_free(struct tp_index *ix);

/* The memory @ix holds. */
static inline size_t tp_index_bytes(const struct tp_index *ix)
{
	return ix->slots ? (ix->mask + 1) * sizeof(*ix->slots) : 0;
}

#endif /* TAPROOT_UTIL_HASH_H */
