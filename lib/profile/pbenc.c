// SPDX-License-Identifier: GPL-2.0
/*
 * What the profile writers share (profile/pbenc.h): protocol buffers
 * encoded by hand, gzip, and the part of a profile one write keeps. Why
 * by hand rather than through protobuf-c: pprof.c's header comment.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "profile/pbenc.h"
#include "util/util.h"

/* ------------------------------------------------ protobuf encoding */

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

void pb_varint(struct pb *b, uint64_t v)
{
	if (pb_need(b, 10))
		b->len += varint_put(b->d + b->len, v);
}

void pb_key(struct pb *b, unsigned int field, unsigned int wire_type)
{
	pb_varint(b, (uint64_t)field << 3 | wire_type);
}

void pb_u64(struct pb *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, PB_WT_VARINT);
	pb_varint(b, v);
}

void pb_i64(struct pb *b, unsigned int field, int64_t v)
{
	pb_u64(b, field, (uint64_t)v);
}

void pb_fixed64(struct pb *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, PB_WT_I64);
	if (!pb_need(b, 8))
		return;
	for (int i = 0; i < 8; i++)		/* little-endian */
		b->d[b->len++] = (uint8_t)(v >> (8 * i));
}

void pb_bytes(struct pb *b, unsigned int field, const void *s, size_t n)
{
	pb_key(b, field, PB_WT_LEN);
	pb_varint(b, n);
	if (n && pb_need(b, n)) {
		memcpy(b->d + b->len, s, n);
		b->len += n;
	}
}

void pb_str(struct pb *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

size_t pb_begin(struct pb *b, unsigned int field)
{
	pb_key(b, field, PB_WT_LEN);
	return b->len;
}

void pb_end(struct pb *b, size_t start)
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

/* ---------------------------------------------------------------- gzip */

static int gzip_buf(const char *who, const uint8_t *in, size_t n, uint8_t **outp,
		    size_t *outlen)
{
	z_stream zs;
	size_t cap, len = 0;
	uint8_t *out = NULL;
	int zr = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return tp_err(-ENOMEM, "%s: deflateInit2 failed", who);
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
				return tp_err(-ENOMEM, "%s: out of memory", who);
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
			return tp_err(-EIO, "%s: deflate failed (%d)", who, zr);
		}
		n -= in_chunk - zs.avail_in;
		len += out_room - zs.avail_out;
	}
	deflateEnd(&zs);
	*outp = out;
	*outlen = len;
	return 0;
}

int pb_finish(struct pb *b, bool gzip, const char *who, void **buf, size_t *len)
{
	uint8_t *z = NULL;
	size_t zlen = 0;
	int err;

	*buf = NULL;
	*len = 0;
	if (b->err) {
		free(b->d);
		return tp_err(b->err, "%s: cannot encode the profile: %s", who,
			      taproot_strerror(b->err));
	}
	if (!gzip) {
		*buf = b->d;
		*len = b->len;
		return 0;
	}
	err = gzip_buf(who, b->d, b->len, &z, &zlen);
	free(b->d);
	if (err)
		return err;
	*buf = z;
	*len = zlen;
	return 0;
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

static void mark_stack(const struct taproot_profile *p, struct tp_part *pt,
		       const uint32_t *locs, uint32_t nlocs)
{
	for (uint32_t i = 0; i < nlocs; i++) {
		const struct tp_location *l = &p->locations[locs[i] - 1];

		pt->loc[locs[i]] = 1;
		pt->map[l->mapping] = 1;
		for (uint32_t j = 0; j < l->nlines; j++)
			pt->func[p->lines[l->line_off + j].function] = 1;
	}
}

long tp_part_select(const struct taproot_profile *p, const char *key, const char *value,
		    struct tp_part *pt)
{
	uint32_t k = key ? tp_profile_str_find(p, key) : 0;
	uint32_t v = key ? tp_profile_str_find(p, value) : 0;
	long n = 0;

	memset(pt, 0, sizeof(*pt));
	pt->sample = calloc(p->nr_samples + 1, sizeof(*pt->sample));
	pt->loc = calloc(p->nr_locations + 1, sizeof(*pt->loc));
	pt->map = calloc(p->nr_maps + 1, sizeof(*pt->map));
	pt->func = calloc(p->nr_funcs + 1, sizeof(*pt->func));
	pt->str = calloc(p->nr_strs + 1, sizeof(*pt->str));
	if (!pt->sample || !pt->loc || !pt->map || !pt->func || !pt->str) {
		tp_part_free(pt);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];

		if (key && !(k && v && has_label(p, s, k, v)))
			continue;
		pt->sample[i] = true;
		mark_stack(p, pt, p->locs + s->loc_off, s->nlocs);
		n++;
	}
	/* The truncated sample has no labels: no part by label holds it. */
	if (!key && p->folded) {
		pt->trunc = true;
		mark_stack(p, pt, &p->trunc_loc, 1);
	}
	return n;
}

void tp_part_mark_tables_strings(const struct taproot_profile *p, struct tp_part *pt)
{
	for (size_t i = 1; i <= p->nr_maps; i++)
		if (pt->map[i])
			pt->str[p->maps[i - 1].file] = 1;
	for (size_t i = 1; i <= p->nr_funcs; i++)
		if (pt->func[i]) {
			const struct tp_function *fn = &p->funcs[i - 1];

			pt->str[fn->name] = pt->str[fn->system_name] = pt->str[fn->file] = 1;
		}
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

void tp_part_renumber(const struct taproot_profile *p, struct tp_part *pt)
{
	pt->loc[0] = pt->map[0] = pt->func[0] = pt->str[0] = 0;
	renumber(pt->loc, p->nr_locations + 1, 1);
	renumber(pt->map, p->nr_maps + 1, 1);
	renumber(pt->func, p->nr_funcs + 1, 1);
	pt->nr_strs = renumber(pt->str, p->nr_strs, 1) + 1;
}

void tp_part_free(struct tp_part *pt)
{
	free(pt->sample);
	free(pt->loc);
	free(pt->map);
	free(pt->func);
	free(pt->str);
	memset(pt, 0, sizeof(*pt));
}

long tp_part_write_file(long n, void *buf, size_t len, const char *path)
{
	int err;

	if (n <= 0)
		return n;
	err = tp_write_file_private(path, buf, len);
	free(buf);
	return err ? err : n;
}
