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
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "profile/profile-private.h"
#include "util/util.h"

/* ------------------------------------------------ protobuf encoding */

enum { WT_VARINT = 0, WT_LEN = 2 };

/* An output buffer; an allocation failure is sticky (err). */
struct pb {
	uint8_t *d;
	size_t len, cap;
	int err;
};

static bool pb_need(struct pb *b, size_t n)
{
	size_t cap;
	uint8_t *nd;

	if (b->err)
		return false;
	if (b->len + n <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n) {
		if (cap > SIZE_MAX / 2) {
			b->err = -EOVERFLOW;
			return false;
		}
		cap *= 2;
	}
	nd = realloc(b->d, cap);
	if (!nd) {
		b->err = -ENOMEM;
		return false;
	}
	b->d = nd;
	b->cap = cap;
	return true;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t varint_put(uint8_t *d, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		d[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	d[n++] = (uint8_t)v;
	return n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	if (pb_need(b, 10))
		b->len += varint_put(b->d + b->len, v);
}

static void pb_key(struct pb *b, unsigned int field, unsigned int wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

/* A varint field (uint64, int64 as two's complement, bool); 0 omitted. */
static void pb_u64(struct pb *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void pb_i64(struct pb *b, unsigned int field, int64_t v)
{
	pb_u64(b, field, (uint64_t)v);
}

static void pb_bytes(struct pb *b, unsigned int field, const void *s, size_t n)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, n);
	if (pb_need(b, n)) {
		memcpy(b->d + b->len, s, n);
		b->len += n;
	}
}

/*
 * A length-delimited field whose length is not known yet: pb_begin()
 * writes the key and returns where the body starts; pb_end() moves the
 * body up to make room for its length.
 */
static size_t pb_begin(struct pb *b, unsigned int field)
{
	pb_key(b, field, WT_LEN);
	return b->len;
}

static void pb_end(struct pb *b, size_t start)
{
	size_t n, vs;

	if (b->err)
		return;
	n = b->len - start;
	vs = varint_size(n);
	if (!pb_need(b, vs))
		return;
	memmove(b->d + start + vs, b->d + start, n);
	varint_put(b->d + start, n);
	b->len += vs;
}

/* ------------------------------------------------- Profile messages */

/*
 * The part of a profile one write keeps (taproot_pprof_encode_part()):
 * the samples with one string label, and only what they reference,
 * renumbered densely in the original order. Each array maps an old ID
 * (index for strings) to the new one, 0 for an entry left out; string 0
 * ("") is always kept. A NULL part is the whole profile.
 */
struct tp_part {
	bool *sample;
	uint32_t *loc, *map, *func, *str;
	uint32_t nr_strs;		/* strings written */
};

static uint32_t id_of(const uint32_t *renumber, uint32_t id)
{
	return renumber ? renumber[id] : id;
}

static void enc_value_type(struct pb *b, unsigned int field, const uint32_t vt[2],
			   const uint32_t *str)
{
	size_t m = pb_begin(b, field);

	pb_u64(b, 1, id_of(str, vt[0]));	/* ValueType.type */
	pb_u64(b, 2, id_of(str, vt[1]));	/* ValueType.unit */
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
			pb_varint(b, id_of(pt ? pt->loc : NULL, locs[i]));
		pb_end(b, f);
	}
	f = pb_begin(b, 2);		/* Sample.value, packed */
	for (size_t i = 0; i < nvalues; i++)
		pb_varint(b, (uint64_t)values[i]);
	pb_end(b, f);
	for (uint32_t i = 0; i < nlabels; i++) {
		const struct tp_label *l = &labels[i];

		f = pb_begin(b, 3);	/* Sample.label */
		pb_u64(b, 1, id_of(str, l->key));
		pb_u64(b, 2, id_of(str, l->str));
		pb_i64(b, 3, l->num);
		pb_u64(b, 4, id_of(str, l->unit));
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
	pb_u64(b, 5, id_of(str, mp->file));
	pb_u64(b, 6, id_of(str, mp->build_id));
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
	pb_u64(b, 2, id_of(pt ? pt->map : NULL, l->mapping));
	pb_u64(b, 3, l->address);
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct tp_line *ln = &p->lines[l->line_off + i];
		size_t f = pb_begin(b, 4);	/* Location.line */

		pb_u64(b, 1, id_of(pt ? pt->func : NULL, ln->function));
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
	pb_u64(b, 2, id_of(str, fn->name));
	pb_u64(b, 3, id_of(str, fn->system_name));
	pb_u64(b, 4, id_of(str, fn->file));
	pb_end(b, m);
}

/* Whether entry @i (0-based) is written, and under which ID. */
static bool kept(const uint32_t *renumber, size_t i, uint64_t *id)
{
	*id = renumber ? renumber[i + 1] : i + 1;
	return *id != 0;
}

static void enc_tables(const struct taproot_profile *p, const struct tp_part *pt,
		       struct pb *b)
{
	uint64_t id;

	for (size_t i = 0; i < p->nr_maps; i++)
		if (kept(pt ? pt->map : NULL, i, &id))
			enc_mapping(b, pt, &p->maps[i], id);
	for (size_t i = 0; i < p->nr_locations; i++)
		if (kept(pt ? pt->loc : NULL, i, &id))
			enc_location(b, p, pt, &p->locations[i], id);
	for (size_t i = 0; i < p->nr_funcs; i++)
		if (kept(pt ? pt->func : NULL, i, &id))
			enc_function(b, pt, &p->funcs[i], id);
	for (size_t i = 0; i < p->nr_strs; i++) {
		const char *s = tp_profile_str(p, (uint32_t)i);

		if (!i || !pt || pt->str[i])
			pb_bytes(b, 6, s, strlen(s));
	}
}

static int encode(const struct taproot_profile *p, const struct tp_part *pt, struct pb *b)
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
			pb_varint(b, id_of(str, p->comments[i]));
		if (trunc_str)
			pb_varint(b, trunc_str);
		pb_end(b, f);
	}
	pb_u64(b, 14, id_of(str, p->default_sample_type));
	return b->err;
}

/* ------------------------------------------------------------ parts */

static bool has_label(const struct taproot_profile *p, const struct tp_sample *s,
		      uint32_t key, uint32_t val)
{
	for (uint32_t i = 0; i < s->nlabels; i++) {
		const struct tp_label *l = &p->labels[s->label_off + i];

		if (l->key == key && l->str == val)
			return true;
	}
	return false;
}

/* Marks become IDs: 1, 2, ... in order (@from 1), or indexes from 0. */
static uint32_t renumber(uint32_t *v, size_t n, uint32_t from)
{
	uint32_t next = from;

	for (size_t i = from; i < n; i++)
		if (v[i])
			v[i] = next++;
	return next - from;
}

static void mark_sample(const struct taproot_profile *p, struct tp_part *pt,
			const struct tp_sample *s)
{
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct tp_location *l = &p->locations[p->locs[s->loc_off + i] - 1];

		pt->loc[p->locs[s->loc_off + i]] = 1;
		pt->map[l->mapping] = 1;
		for (uint32_t j = 0; j < l->nlines; j++)
			pt->func[p->lines[l->line_off + j].function] = 1;
	}
	for (uint32_t i = 0; i < s->nlabels; i++) {
		const struct tp_label *l = &p->labels[s->label_off + i];

		pt->str[l->key] = pt->str[l->str] = pt->str[l->unit] = 1;
	}
}

static void mark_strings(const struct taproot_profile *p, struct tp_part *pt)
{
	uint32_t *str = pt->str;

	for (size_t i = 0; i < p->nvalues; i++)
		str[p->sample_type[i][0]] = str[p->sample_type[i][1]] = 1;
	str[p->period_type[0]] = str[p->period_type[1]] = 1;
	str[p->default_sample_type] = 1;
	for (size_t i = 0; i < p->nr_comments; i++)
		str[p->comments[i]] = 1;
	for (size_t i = 1; i <= p->nr_maps; i++)
		if (pt->map[i])
			str[p->maps[i - 1].file] = str[p->maps[i - 1].build_id] = 1;
	for (size_t i = 1; i <= p->nr_funcs; i++)
		if (pt->func[i]) {
			const struct tp_function *fn = &p->funcs[i - 1];

			str[fn->name] = str[fn->system_name] = str[fn->file] = 1;
		}
}

static void part_free(struct tp_part *pt)
{
	free(pt->sample);
	free(pt->loc);
	free(pt->map);
	free(pt->func);
	free(pt->str);
}

/*
 * The part of @p whose samples have the string label @key = @value.
 * Returns the samples kept, or -ENOMEM.
 */
static long part_make(const struct taproot_profile *p, const char *key, const char *value,
		      struct tp_part *pt)
{
	uint32_t k = tp_profile_str_find(p, key), v = tp_profile_str_find(p, value);
	long n = 0;

	pt->sample = calloc(p->nr_samples + 1, sizeof(*pt->sample));
	pt->loc = calloc(p->nr_locations + 1, sizeof(*pt->loc));
	pt->map = calloc(p->nr_maps + 1, sizeof(*pt->map));
	pt->func = calloc(p->nr_funcs + 1, sizeof(*pt->func));
	pt->str = calloc(p->nr_strs + 1, sizeof(*pt->str));
	if (!pt->sample || !pt->loc || !pt->map || !pt->func || !pt->str) {
		part_free(pt);
		return -ENOMEM;
	}
	for (size_t i = 0; k && v && i < p->nr_samples; i++) {
		if (!has_label(p, &p->samples[i], k, v))
			continue;
		pt->sample[i] = true;
		mark_sample(p, pt, &p->samples[i]);
		n++;
	}
	mark_strings(p, pt);
	/* ID 0 and string 0 ("") stand for themselves. */
	pt->loc[0] = pt->map[0] = pt->func[0] = pt->str[0] = 0;
	renumber(pt->loc, p->nr_locations + 1, 1);
	renumber(pt->map, p->nr_maps + 1, 1);
	renumber(pt->func, p->nr_funcs + 1, 1);
	pt->nr_strs = renumber(pt->str, p->nr_strs, 1) + 1;
	return n;
}

/* ---------------------------------------------------------------- gzip */

static int gzip_buf(const uint8_t *in, size_t n, uint8_t **outp, size_t *outlen)
{
	z_stream zs;
	size_t cap, len = 0;
	uint8_t *out = NULL;
	int zr = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return tp_err(-ENOMEM, "pprof: deflateInit2 failed");
	cap = deflateBound(&zs, n) + 64;
	zs.next_in = (Bytef *)in;
	while (zr != Z_STREAM_END) {
		size_t in_chunk = n > UINT_MAX ? UINT_MAX : n;
		size_t out_room;

		if (len == cap || !out) {
			uint8_t *no;

			if (out)
				cap *= 2;
			no = realloc(out, cap);
			if (!no) {
				free(out);
				deflateEnd(&zs);
				return tp_err(-ENOMEM, "pprof: out of memory");
			}
			out = no;
		}
		out_room = cap - len > UINT_MAX ? UINT_MAX : cap - len;
		zs.avail_in = (uInt)in_chunk;
		zs.next_out = out + len;
		zs.avail_out = (uInt)out_room;
		zr = deflate(&zs, in_chunk == n ? Z_FINISH : Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			free(out);
			deflateEnd(&zs);
			return tp_err(-EIO, "pprof: deflate failed (%d)", zr);
		}
		n -= in_chunk - zs.avail_in;
		len += out_room - zs.avail_out;
	}
	deflateEnd(&zs);
	*outp = out;
	*outlen = len;
	return 0;
}

static int encode_buf(const struct taproot_profile *p, const struct tp_part *pt, bool gzip,
		      void **buf, size_t *len)
{
	struct pb b = { 0 };
	uint8_t *z = NULL;
	size_t zlen = 0;
	int err;

	*buf = NULL;
	*len = 0;
	if ((err = encode(p, pt, &b))) {
		free(b.d);
		return tp_err(err, "pprof: cannot encode the profile: %s",
			      taproot_strerror(err));
	}
	if (!gzip) {
		*buf = b.d;
		*len = b.len;
		return 0;
	}
	err = gzip_buf(b.d, b.len, &z, &zlen);
	free(b.d);
	if (err)
		return err;
	*buf = z;
	*len = zlen;
	return 0;
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
	n = part_make(p, key, value, &pt);
	if (n < 0)
		return tp_err((int)n, "pprof: out of memory");
	err = n ? encode_buf(p, &pt, gzip, buf, len) : 0;
	part_free(&pt);
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
	int err;

	if (n <= 0)
		return n;
	err = tp_write_file_private(path, buf, len);
	free(buf);
	return err ? err : n;
}
