/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the profile writers (pprof.c, otlp.c) share, in lib/profile/pbenc.c:
 * protocol buffers encoded by hand into a growing buffer, gzip, and the
 * part of a profile one write keeps. Not for programs.
 *
 * Only what the two formats use: varints (uint64, int64 as two's
 * complement, int32 >= 0, bool), fixed64, and length-delimited fields
 * (bytes, strings, messages, packed repeated varints). Fields equal to 0
 * are omitted by pb_u64(), as proto3 does; a field that must be written
 * even when 0 (a oneof member) uses pb_key() and pb_varint().
 */
#ifndef TAPROOT_PROFILE_PBENC_H
#define TAPROOT_PROFILE_PBENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile-private.h"

enum { PB_WT_VARINT = 0, PB_WT_I64 = 1, PB_WT_LEN = 2, PB_WT_I32 = 5 };

/* An output buffer; an allocation failure is sticky (err). */
struct pb {
	uint8_t *d;
	size_t len, cap;
	int err;
};

void pb_varint(struct pb *b, uint64_t v);
void pb_key(struct pb *b, unsigned int field, unsigned int wire_type);
/* A varint field (uint64, int64 as two's complement, int32 >= 0, bool); 0 omitted. */
void pb_u64(struct pb *b, unsigned int field, uint64_t v);
void pb_i64(struct pb *b, unsigned int field, int64_t v);
/* A fixed64 field; 0 omitted. */
void pb_fixed64(struct pb *b, unsigned int field, uint64_t v);
/* A length-delimited field of @n bytes (@s may be NULL when @n is 0). */
void pb_bytes(struct pb *b, unsigned int field, const void *s, size_t n);
void pb_str(struct pb *b, unsigned int field, const char *s);

/*
 * A length-delimited field whose length is not known yet: pb_begin()
 * writes the key and returns where the body starts; pb_end() moves the
 * body up to make room for its length.
 */
size_t pb_begin(struct pb *b, unsigned int field);
void pb_end(struct pb *b, size_t start);

/*
 * Hand the message encoded in @b over as *@buf, *@len (malloc'ed, the
 * caller frees), gzipped when @gzip; @b's memory is taken either way.
 * Errors (@b's sticky one, or gzip's), reported with @who ("pprof")
 * before the message: -ENOMEM, -EOVERFLOW, -EIO. *@buf is NULL on error.
 */
int pb_finish(struct pb *b, bool gzip, const char *who, void **buf, size_t *len);

/*
 * The part of a profile one write keeps: the samples with one string
 * label, or all of them, and only what they reference, renumbered densely
 * in the original order. Each array maps an old ID (index for strings) to
 * the new one, 0 for an entry left out; ID 0 and string 0 ("") stand for
 * themselves. A NULL part (pprof's whole profile) is all of it, as it is.
 *
 * Made in three steps, since each format references its own strings:
 * tp_part_select() marks the samples and the locations, mappings and
 * functions they use; the writer marks its strings in pt->str
 * (tp_part_mark_tables_strings() the tables'); tp_part_renumber().
 */
struct tp_part {
	bool *sample;
	bool trunc;			/* the truncated sample is kept */
	uint32_t *loc, *map, *func, *str;
	uint32_t nr_strs;		/* strings kept, "" included */
};

static inline uint32_t tp_part_id(const uint32_t *renumber, uint32_t id)
{
	return renumber ? renumber[id] : id;
}

/* Whether entry @i (0-based) of a table is kept, and under which ID. */
static inline bool tp_part_kept(const uint32_t *renumber, size_t i, uint64_t *id)
{
	*id = renumber ? renumber[i + 1] : i + 1;
	return *id != 0;
}

/*
 * Mark the samples of @p with the string label @key = @value, or every
 * sample and the truncated one when @key is NULL, and the table entries
 * they use. Returns the samples kept, or -ENOMEM (nothing to free then).
 */
long tp_part_select(const struct taproot_profile *p, const char *key, const char *value,
		    struct tp_part *pt);
/* Mark the strings of the kept mappings (file) and functions. */
void tp_part_mark_tables_strings(const struct taproot_profile *p, struct tp_part *pt);
void tp_part_renumber(const struct taproot_profile *p, struct tp_part *pt);
void tp_part_free(struct tp_part *pt);

/*
 * What an encode of a part returned, @n samples in @buf (@len bytes),
 * written as a private file at @path, and @buf freed: @n, 0 with no file
 * for no samples, or the error (@n's, or the write's).
 */
long tp_part_write_file(long n, void *buf, size_t len, const char *path);

#endif /* TAPROOT_PROFILE_PBENC_H */
