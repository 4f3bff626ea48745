// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof writer: a profile (lib/profile/profile.c) as a gzipped
 * perftools.profiles.Profile message (the profile.proto of
 * github.com/google/pprof), and written atomically to a file.
 *
 * Encoded by hand rather than through protobuf-c, on purpose:
 *  - the format is small and frozen: seven messages, a few dozen fields,
 *    only two wire types (varint and length-delimited), no oneofs, maps
 *    or floats. The encoder is small and writes straight from the
 *    builder's tables, with no intermediate object tree (protobuf-c would
 *    need one: each Sample, Location, Line and Label a malloc'ed struct
 *    with pointer arrays, then a second pass to pack them);
 *  - no code generation step in the build (protoc-c and a vendored or
 *    generated profile.pb-c.[ch]), and no extra runtime library for the
 *    daemon (libprotobuf-c) — zlib, already linked, does the gzip;
 *  - correctness is not taken on trust: the unit tests (test_pprof.c)
 *    decode what this writes with the real protoc and the profile.proto
 *    Debian ships, and read it with the real pprof tool.
 * Repeated scalars (Sample.location_id, Sample.value, comment) are
 * written packed, as proto3 does by default; fields equal to 0 are
 * omitted, as proto3 does, except string_table entries (index 0 is "").
 * The encoding primitives, gzip and parts are shared with the OTLP writer
 * (profile/pbenc.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pbenc.h"
#include "util/util.h"

/* ------------------------------------------------- Profile messages */

static void enc_value_type(struct pb *b, unsigned int field, const uint32_t vt[2],
			   const uint32_t *str)
{
	size_t m = pb_begin(b, field);

	pb_u64(b, 1, tp_part_id(str, vt[0]));	/* ValueType.type */
	pb_u64(b, 2, tp_part_id(str, vt[1]));	/* ValueType.unit */
	pb_end(b, m);
}

static void enc_sample(struct pb *b, const struct tp_part *pt, const uint32_t *locs,
		       uint32_t nlocs, const int64_t *values, size_t nvalues,
		       const struct tp_label *labels, uint32_t nlabels)
{
	const uint32_t *str = pt ? pt->str : NULL;
	size_t m = pb_begin(b, 2), f;

	if (nlocs) {			/* Sample.location_id, packed */
		f = pb_begin(b, 1);
		for (uint32_t i = 0; i < nlocs; i++)
			pb_varint(b, tp_part_id(pt ? pt->loc : NULL, locs[i]));
		pb_end(b, f);
	}
	f = pb_begin(b, 2);		/* Sample.value, packed */
	for (size_t i = 0; i < nvalues; i++)
		pb_varint(b, (uint64_t)values[i]);
	pb_end(b, f);
	for (uint32_t i = 0; i < nlabels; i++) {
		const struct tp_label *l = &labels[i];

		f = pb_begin(b, 3);	/* Sample.label */
		pb_u64(b, 1, tp_part_id(str, l->key));
		pb_u64(b, 2, tp_part_id(str, l->str));
		pb_i64(b, 3, l->num);
		pb_u64(b, 4, tp_part_id(str, l->unit));
		pb_end(b, f);
	}
	pb_end(b, m);
}

static void enc_mapping(struct pb *b, const struct tp_part *pt, const struct tp_mapping *mp,
			uint64_t id)
{
	const uint32_t *str = pt ? pt->str : NULL;
	bool fn = mp->nlocs && mp->nlocs_fn == mp->nlocs;
	size_t m = pb_begin(b, 3);

	pb_u64(b, 1, id);
	pb_u64(b, 2, mp->start);
	pb_u64(b, 3, mp->limit);
	pb_u64(b, 4, mp->offset);
	pb_u64(b, 5, tp_part_id(str, mp->file));
	pb_u64(b, 6, tp_part_id(str, mp->build_id));
	/* What every location of it has: the truth, not a wish. */
	pb_u64(b, 7, fn);
	pb_u64(b, 8, fn && mp->nlines_file == mp->nlines);
	pb_u64(b, 9, fn && mp->nlines_lineno == mp->nlines);
	pb_u64(b, 10, mp->inline_frames);
	pb_end(b, m);
}

static void enc_location(struct pb *b, const struct taproot_profile *p,
			 const struct tp_part *pt, const struct tp_location *l, uint64_t id)
{
	size_t m = pb_begin(b, 4);

	pb_u64(b, 1, id);
	pb_u64(b, 2, tp_part_id(pt ? pt->map : NULL, l->mapping));
	pb_u64(b, 3, l->address);
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct tp_line *ln = &p->lines[l->line_off + i];
		size_t f = pb_begin(b, 4);	/* Location.line */

		pb_u64(b, 1, tp_part_id(pt ? pt->func : NULL, ln->function));
		pb_i64(b, 2, ln->line);
		pb_end(b, f);
	}
	pb_end(b, m);
}

static void enc_function(struct pb *b, const struct tp_part *pt, const struct tp_function *fn,
			 uint64_t id)
{
	const uint32_t *str = pt ? pt->str : NULL;
	size_t m = pb_begin(b, 5);

	pb_u64(b, 1, id);
	pb_u64(b, 2, tp_part_id(str, fn->name));
	pb_u64(b, 3, tp_part_id(str, fn->system_name));
	pb_u64(b, 4, tp_part_id(str, fn->file));
	pb_end(b, m);
}

static void enc_tables(const struct taproot_profile *p, const struct tp_part *pt,
		       struct pb *b)
{
	uint64_t id;

	for (size_t i = 0; i < p->nr_maps; i++)
		if (tp_part_kept(pt ? pt->map : NULL, i, &id))
			enc_mapping(b, pt, &p->maps[i], id);
	for (size_t i = 0; i < p->nr_locations; i++)
		if (tp_part_kept(pt ? pt->loc : NULL, i, &id))
			enc_location(b, p, pt, &p->locations[i], id);
	for (size_t i = 0; i < p->nr_funcs; i++)
		if (tp_part_kept(pt ? pt->func : NULL, i, &id))
			enc_function(b, pt, &p->funcs[i], id);
	for (size_t i = 0; i < p->nr_strs; i++) {
		const char *s = tp_profile_str(p, (uint32_t)i);

		if (!i || !pt || pt->str[i])
			pb_bytes(b, 6, s, strlen(s));
	}
}

static void encode(const struct taproot_profile *p, const struct tp_part *pt, struct pb *b)
{
	const uint32_t *str = pt ? pt->str : NULL;
	char trunc_comment[256];
	uint32_t trunc_str = 0, nstrs = (uint32_t)p->nr_strs;
	size_t f;

	for (size_t i = 0; i < p->nvalues; i++)
		enc_value_type(b, 1, p->sample_type[i], str);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];

		if (pt && !pt->sample[i])
			continue;
		enc_sample(b, pt, p->locs + s->loc_off, s->nlocs,
			   p->values + i * p->nvalues, p->nvalues,
			   p->labels + s->label_off, s->nlabels);
	}
	/* The truncated sample has no labels: no part holds it. */
	if (p->folded && !pt)
		enc_sample(b, NULL, &p->trunc_loc, 1, p->trunc_values, p->nvalues,
			   NULL, 0);
	enc_tables(p, pt, b);
	if (pt)
		nstrs = pt->nr_strs;
	if (p->folded && !pt) {
		/* One string more than the profile's, for this comment. */
		snprintf(trunc_comment, sizeof(trunc_comment),
			 "taproot: the stack table was full (%zu entries): "
			 "%llu samples went to " TP_TRUNCATED_FRAME,
			 p->max_stacks, (unsigned long long)p->folded);
		trunc_str = nstrs;
		pb_bytes(b, 6, trunc_comment, strlen(trunc_comment));
	}

	pb_i64(b, 9, p->time_nanos);
	pb_i64(b, 10, p->duration_nanos);
	if (p->period_type[0] || p->period_type[1])
		enc_value_type(b, 11, p->period_type, str);
	pb_i64(b, 12, p->period);
	if (p->nr_comments || trunc_str) {
		f = pb_begin(b, 13);		/* comment, packed */
		for (size_t i = 0; i < p->nr_comments; i++)
			pb_varint(b, tp_part_id(str, p->comments[i]));
		if (trunc_str)
			pb_varint(b, trunc_str);
		pb_end(b, f);
	}
	pb_u64(b, 14, tp_part_id(str, p->default_sample_type));
}

/* ------------------------------------------------------------ parts */

/* The strings a part's Profile references (tp_part_select() marked the rest). */
static void mark_strings(const struct taproot_profile *p, struct tp_part *pt)
{
	uint32_t *str = pt->str;

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];

		if (!pt->sample[i])
			continue;
		for (uint32_t j = 0; j < s->nlabels; j++) {
			const struct tp_label *l = &p->labels[s->label_off + j];

			str[l->key] = str[l->str] = str[l->unit] = 1;
		}
	}
	for (size_t i = 0; i < p->nvalues; i++)
		str[p->sample_type[i][0]] = str[p->sample_type[i][1]] = 1;
	str[p->period_type[0]] = str[p->period_type[1]] = 1;
	str[p->default_sample_type] = 1;
	for (size_t i = 0; i < p->nr_comments; i++)
		str[p->comments[i]] = 1;
	for (size_t i = 1; i <= p->nr_maps; i++)
		if (pt->map[i])
			str[p->maps[i - 1].build_id] = 1;
	tp_part_mark_tables_strings(p, pt);
}

static int encode_buf(const struct taproot_profile *p, const struct tp_part *pt, bool gzip,
		      void **buf, size_t *len)
{
	struct pb b = { 0 };

	encode(p, pt, &b);
	return pb_finish(&b, gzip, "pprof", buf, len);
}

int taproot_pprof_encode(const struct taproot_profile *p, bool gzip,
			 void **buf, size_t *len)
{
	return encode_buf(p, NULL, gzip, buf, len);
}

long taproot_pprof_encode_part(const struct taproot_profile *p, const char *key,
			       const char *value, bool gzip, void **buf, size_t *len)
{
	struct tp_part pt;
	long n;
	int err;

	*buf = NULL;
	*len = 0;
	n = tp_part_select(p, key, value, &pt);
	if (n < 0)
		return tp_err((int)n, "pprof: out of memory");
	mark_strings(p, &pt);
	tp_part_renumber(p, &pt);
	err = n ? encode_buf(p, &pt, gzip, buf, len) : 0;
	tp_part_free(&pt);
	return err ? err : n;
}

int taproot_pprof_write_fd(const struct taproot_profile *p, int fd)
{
	void *buf;
	size_t len;
	int err;

	if ((err = taproot_pprof_encode(p, true, &buf, &len)))
		return err;
	err = tp_write_all(fd, buf, len);
	free(buf);
	if (err)
		return tp_err(err, "pprof: write: %s", strerror(-err));
	return 0;
}

int taproot_pprof_write_file(const struct taproot_profile *p, const char *path)
{
	void *buf;
	size_t len;
	int err = taproot_pprof_encode(p, true, &buf, &len);

	if (err)
		return err;
	err = tp_write_file_private(path, buf, len);
	free(buf);
	return err;
}

long taproot_pprof_write_part_file(const struct taproot_profile *p, const char *key,
				   const char *value, const char *path)
{
	void *buf;
	size_t len;
	long n = taproot_pprof_encode_part(p, key, value, true, &buf, &len);

	return tp_part_write_file(n, buf, len, path);
}
