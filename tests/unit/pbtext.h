/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests of the profile writers share (test_pprof, test_otlp):
 * files read, written and gunzipped, and protoc's text output (--decode)
 * parsed into a tree. Include after <cmocka.h>, with <zlib.h>.
 */
#ifndef TAPROOT_TESTS_PBTEXT_H
#define TAPROOT_TESTS_PBTEXT_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runcmd.h"

/* ------------------------------------------------------------- files */

static inline void *read_file(const char *path, size_t *len)
{
	struct stat sb;
	void *d;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	d = malloc((size_t)sb.st_size + 1);
	assert_non_null(d);
	assert_int_equal(read(fd, d, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return d;
}

/* gunzip @in (one gzip member, nothing after it). */
static inline void *gunzip(const void *in, size_t n, size_t *outlen)
{
	z_stream zs = { 0 };
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.avail_in, 0);
	*outlen = zs.total_out;
	inflateEnd(&zs);
	return out;
}

static inline char *tmpdir(void)
{
	char *d;

	assert_true(asprintf(&d, "%s/taproot-test-XXXXXX",
			     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") > 0);
	assert_non_null(mkdtemp(d));
	return d;
}

static inline void rm_tree(const char *dir)
{
	int st;
	char *out = run(&st, "rm -rf '%s'", dir);

	free(out);
}

static inline char *write_buf(const char *dir, const char *name, const void *buf, size_t len)
{
	char *path;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* ------------------------------------------------- protobuf text format */

/* A node of protoc's text output: "name: value" or "name { ... }". */
struct tn {
	char *name, *val;
	struct tn *kids;
	size_t nkids;
};

static inline char *unquote(const char *v)
{
	char *s = malloc(strlen(v) + 1), *o = s;

	assert_non_null(s);
	assert_true(*v == '"');
	for (v++; *v && *v != '"'; v++) {
		if (*v != '\\') {
			*o++ = *v;
			continue;
		}
		v++;
		if (*v >= '0' && *v <= '7') {
			int c = 0;

			for (int i = 0; i < 3 && *v >= '0' && *v <= '7'; i++)
				c = c * 8 + *v++ - '0';
			v--;
			*o++ = (char)c;
		} else {
			*o++ = *v == 'n' ? '\n' : *v == 't' ? '\t' : *v;
		}
	}
	*o = '\0';
	return s;
}

static inline struct tn *tn_add(struct tn *n, const char *name, size_t len)
{
	struct tn *k;

	n->kids = realloc(n->kids, (n->nkids + 1) * sizeof(*n->kids));
	assert_non_null(n->kids);
	k = &n->kids[n->nkids++];
	memset(k, 0, sizeof(*k));
	k->name = strndup(name, len);
	return k;
}

/* Parse from *@s up to a "}" or the end into @n. */
static inline void tn_parse(struct tn *n, char **s)
{
	while (**s) {
		char *line = *s, *end = strchr(line, '\n'), *colon;
		size_t len;

		if (!end)
			end = line + strlen(line);
		*s = *end ? end + 1 : end;
		*end = '\0';
		while (*line == ' ')
			line++;
		len = strlen(line);
		if (!len)
			continue;
		if (!strcmp(line, "}"))
			return;
		if (len > 2 && !strcmp(line + len - 2, " {")) {
			/* Parse into the new child; n->kids may move meanwhile. */
			struct tn *k = tn_add(n, line, len - 2), sub = *k;

			tn_parse(&sub, s);
			n->kids[n->nkids - 1] = sub;
			(void)k;
			continue;
		}
		colon = strstr(line, ": ");
		assert_non_null(colon);
		tn_add(n, line, (size_t)(colon - line))->val =
			colon[2] == '"' ? unquote(colon + 2) : strdup(colon + 2);
	}
}

static inline void tn_free(struct tn *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		tn_free(&n->kids[i]);
	free(n->kids);
	free(n->name);
	free(n->val);
}

static inline size_t tn_count(const struct tn *n, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < n->nkids; i++)
		c += !strcmp(n->kids[i].name, name);
	return c;
}

/* The @idx-th child named @name, or NULL. */
static inline const struct tn *tn_get(const struct tn *n, const char *name, size_t idx)
{
	for (size_t i = 0; i < n->nkids; i++)
		if (!strcmp(n->kids[i].name, name) && !idx--)
			return &n->kids[i];
	return NULL;
}

/* A scalar child as a number; 0 when absent (proto3 default). */
static inline uint64_t tn_u64(const struct tn *n, const char *name, size_t idx)
{
	const struct tn *k = tn_get(n, name, idx);

	if (!k)
		return 0;
	assert_non_null(k->val);
	if (!strcmp(k->val, "true"))
		return 1;
	return k->val[0] == '-' ? (uint64_t)strtoll(k->val, NULL, 10) :
				  strtoull(k->val, NULL, 10);
}

#endif /* TAPROOT_TESTS_PBTEXT_H */
