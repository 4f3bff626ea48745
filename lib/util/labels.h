/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: an immutable list of (key, value) string
 * pairs, counted by reference (lib/util/labels.c). The process model makes
 * one per process (what it belongs to); samples and off-CPU intervals hold
 * a reference to it, so an interval outlives the process's eviction with
 * its labels. Not thread-safe: one thread owns every reference.
 */
#ifndef TAPROOT_UTIL_LABELS_H
#define TAPROOT_UTIL_LABELS_H

#include <stddef.h>

#define TP_LABELS_MAX	16

struct tp_labels {
	unsigned int refs;
	unsigned int nr;
	const char *key[TP_LABELS_MAX];		/* into the same allocation */
	const char *value[TP_LABELS_MAX];
};

/*
 * A new list of the @nr (<= TP_LABELS_MAX) pairs @keys[i], @values[i],
 * copied, with one reference; NULL without memory.
 */
struct tp_labels *tp_labels_new(const char *const *keys, const char *const *values, size_t nr);

/* Take one more reference on @l (NULL allowed); returns @l. */
struct tp_labels *tp_labels_get(struct tp_labels *l);

/* Drop a reference on @l (NULL allowed): the last frees it. */
void tp_labels_put(struct tp_labels *l);

/* The value of @key in @l, or "" when @l is NULL or has no @key. */
const char *tp_labels_value(const struct tp_labels *l, const char *key);

#endif /* TAPROOT_UTIL_LABELS_H */
