/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profile builder's tables (lib/profile/profile.c), as the writers
 * (lib/profile/pprof.c, otlp.c) and the unit tests read them. Not for programs.
 *
 * Every table is an array; an entry's pprof ID is its index + 1, so IDs
 * are sequential from 1 in the order entries were first seen. String
 * index 0 is "". References between tables are IDs (0: none) or string
 * indexes.
 */
#ifndef TAPROOT_PROFILE_PRIVATE_H
#define TAPROOT_PROFILE_PRIVATE_H

#include "profile/profile.h"
#include "util/hash.h"


struct tp_mapping {
	uint64_t start, limit, offset;
	uint32_t file, build_id;	/* strings */
	/* For the has_* flags: what its locations tell. */
	uint32_t nlocs, nlocs_fn;	/* locations, those with lines */
	uint32_t nlines, nlines_file, nlines_lineno;
	bool inline_frames;		/* a location with two lines or more */
};

struct tp_function {
	uint32_t name, system_name, file;	/* strings */
};

struct tp_line {
	uint32_t function;		/* ID */
	int64_t line;
};

struct tp_location {
	uint64_t address;
	uint32_t mapping;		/* ID, 0: none */
	uint32_t line_off, nlines;	/* in lines[], innermost first */
};

struct tp_label {
	uint32_t key, str, unit;	/* strings; str 0: numeric */
	int64_t num;
};

/* A distinct (stack, labels) entry; its values are in values[]. */
struct tp_sample {
	uint32_t loc_off, nlocs;	/* location IDs in locs[], leaf first */
	uint32_t label_off, nlabels;	/* in labels[] */
};

#define TP_VEC(type, name) type *name; size_t nr_##name, alloc_##name

struct taproot_profile {
	/* The desc, as string indexes (interned first, kept by resets). */
	size_t nvalues;
	uint32_t sample_type[TAPROOT_PROFILE_MAX_VALUES][2];
	uint32_t period_type[2];
	int64_t period;
	uint32_t default_sample_type;
	uint32_t *comments;
	size_t nr_comments;
	size_t base_strings;		/* strings that survive a reset */
	size_t base_chars;
	size_t max_stacks;

	int64_t time_nanos, duration_nanos;
	uint64_t adds, folded;

	/* Strings: offsets into chars[] of NUL-terminated text. */
	TP_VEC(char, chars);
	TP_VEC(uint32_t, strs);
	struct tp_index str_ht;

	TP_VEC(struct tp_mapping, maps);
	struct tp_index map_ht;
	TP_VEC(struct tp_function, funcs);
	struct tp_index func_ht;
	TP_VEC(struct tp_location, locations);
	TP_VEC(struct tp_line, lines);
	struct tp_index loc_ht;
	bool loc_ht_stale;		/* locations named since: loc_reindex() */

	TP_VEC(struct tp_sample, samples);
	TP_VEC(uint32_t, locs);		/* samples' location IDs */
	TP_VEC(struct tp_label, labels);	/* samples' labels */
	TP_VEC(int64_t, values);	/* nvalues per sample */
	struct tp_index sample_ht;

	/* The "[truncated: stack table full]" sample. */
	uint32_t trunc_loc;		/* its location ID, 0 until needed */
	int64_t trunc_values[TAPROOT_PROFILE_MAX_VALUES];

	/* Per-call scratch, grown only. */
	TP_VEC(uint32_t, scratch_locs);
	TP_VEC(struct tp_line, scratch_lines);
	TP_VEC(struct tp_label, scratch_labels);
	/*
	 * Strings already looked up by this add, by address: within one call
	 * an address always holds the same text (the caller's strings live
	 * through the call), so a mapping path or file name repeated over
	 * the frames is hashed once. Cleared by each add.
	 */
	struct tp_str_memo {
		const char *s;
		uint32_t id;
	} memo[32];
	/*
	 * Locations by the caller's frame key (taproot_profile_frame.key),
	 * direct-mapped, TP_LOC_MEMO slots: a hit skips hashing a frame's
	 * strings, the largest cost of an add. Cleared by
	 * taproot_profile_forget_keys() and by a reset.
	 */
	struct tp_loc_memo {
		const void *key;
		uint32_t id;
	} *loc_memo;
};

#define TP_LOC_MEMO	4096

#undef TP_VEC

/* String @idx of @p. */
static inline const char *tp_profile_str(const struct taproot_profile *p,
					 uint32_t idx)
{
	return p->chars + p->strs[idx];
}

/* The index of the string @s in @p, or 0 ("") when @p has none. */
uint32_t tp_profile_str_find(const struct taproot_profile *p, const char *s);

#define TP_TRUNCATED_FRAME	"[truncated: stack table full]"

#endif /* TAPROOT_PROFILE_PRIVATE_H */
