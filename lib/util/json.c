// SPDX-License-Identifier: GPL-2.0
/*
 * A reader of JSON documents written by others (json.h): one pass of
 * recursive descent over the whole document, validating every byte, that
 * keeps only the string values its queries name and skips everything
 * else. Its memory is its stack: one frame per level of nesting, at most
 * TP_JSON_DEPTH_MAX, each with a key buffer of TP_JSON_KEY_MAX bytes.
 *
 * Which queries a value answers is carried down as a bit mask: bit i of
 * @match is set while the keys that led to the value are the first ones
 * of query i's path.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/json.h"
#include "util/util.h"

struct tp_json {
	const char *start, *p, *end;	/* start <= p <= end: never read at end */
	struct tp_json_query *q;
	size_t nr;
};

/* A decoded string's bytes: the first size - 1 kept in out, all counted. */
struct tp_json_text {
	char *out;
	size_t size, len;
	bool control;			/* a control character was among them */
};

static int tp_json_bad(const struct tp_json *j, const char *why)
{
	return tp_err(-TAPROOT_EPROTO, "json: %s at byte %zu", why, (size_t)(j->p - j->start));
}

static void tp_json_ws(struct tp_json *j)
{
	while (j->p < j->end &&
	       (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static void tp_text_put(struct tp_json_text *t, const char *b, size_t k)
{
	if (t->out && t->len + k < t->size)
		memcpy(t->out + t->len, b, k);
	t->len += k;
}

/* The code point @cp (at most U+10FFFF, no surrogate) as UTF-8. */
static void tp_text_put_cp(struct tp_json_text *t, unsigned long cp)
{
	char b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (char)cp, k = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6), k = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12), k = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18), k = 4;
	}
	for (size_t i = 1; i < k; i++)
		b[i] = (char)(0x80 | ((cp >> (6 * (k - 1 - i))) & 0x3f));
	t->control = t->control || cp < 0x20 || cp == 0x7f;
	tp_text_put(t, b, k);
}

/* The 4 hex digits after the "\u" at j->p, moving past them; -1 if not. */
static long tp_json_u4(struct tp_json *j)
{
	long v;

	if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u')
		return -1;
	v = tp_hex4(j->p + 2);
	if (v >= 0)
		j->p += 6;
	return v;
}

/* The escape at j->p (its backslash) into @t. */
static int tp_json_escape(struct tp_json *j, struct tp_json_text *t)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	long cp, lo;

	if (j->end - j->p < 2)
		return tp_json_bad(j, "string ends in an escape");
	if (j->p[1] != 'u') {
		e = memchr(from, j->p[1], sizeof(from) - 1);
		if (!e)
			return tp_json_bad(j, "unknown escape");
		tp_text_put_cp(t, (unsigned char)to[e - from]);
		j->p += 2;
		return 0;
	}
	cp = tp_json_u4(j);
	if (cp < 0)
		return tp_json_bad(j, "\\u without 4 hex digits");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		const char *low = j->p;

		/* A high surrogate pairs with a low one that follows at once. */
		lo = tp_json_u4(j);
		if (lo >= 0xdc00 && lo <= 0xdfff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else {
			j->p = low;	/* not its pair: read on its own */
			cp = 0xfffd;
		}
	} else if (cp >= 0xdc00 && cp <= 0xdfff) {
		cp = 0xfffd;
	}
	tp_text_put_cp(t, (unsigned long)cp);
	return 0;
}

/* The string at j->p (its opening quote), decoded into @t, moving past it. */
static int tp_json_string(struct tp_json *j, struct tp_json_text *t)
{
	int err, n;

	j->p++;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c == '\\') {
			err = tp_json_escape(j, t);
			if (err)
				return err;
			continue;
		}
		if (c < 0x20)
			return tp_json_bad(j, "control character in a string");
		n = c < 0x80 ? 1 : tp_utf8_len((const unsigned char *)j->p,
					       (size_t)(j->end - j->p));
		if (!n)
			return tp_json_bad(j, "invalid UTF-8");
		t->control = t->control || c == 0x7f;
		tp_text_put(t, j->p, (size_t)n);
		j->p += n;
	}
	if (j->p == j->end)
		return tp_json_bad(j, "unterminated string");
	j->p++;
	if (t->out)
		t->out[t->len < t->size ? t->len : 0] = '\0';
	return 0;
}

static bool tp_json_digit(const struct tp_json *j)
{
	return j->p < j->end && *j->p >= '0' && *j->p <= '9';
}

static void tp_json_digits(struct tp_json *j)
{
	while (tp_json_digit(j))
		j->p++;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at j->p. */
static int tp_json_number(struct tp_json *j)
{
	if (*j->p == '-')
		j->p++;
	if (!tp_json_digit(j))
		return tp_json_bad(j, "number without digits");
	if (*j->p++ != '0')
		tp_json_digits(j);
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!tp_json_digit(j))
			return tp_json_bad(j, "number without digits after '.'");
		tp_json_digits(j);
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!tp_json_digit(j))
			return tp_json_bad(j, "number without digits in its exponent");
		tp_json_digits(j);
	}
	return 0;
}

static int tp_json_literal(struct tp_json *j)
{
	static const char *const words[] = { "true", "false", "null" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i]);

		if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, words[i], n)) {
			j->p += n;
			return 0;
		}
	}
	return tp_json_bad(j, "unexpected character");
}

/* Queries of @match whose path ends at @depth: the value here answers them. */
static uint32_t tp_json_targets(const struct tp_json *j, uint32_t match, unsigned int depth)
{
	uint32_t t = 0;

	for (size_t i = 0; i < j->nr; i++)
		if ((match >> i & 1) && j->q[i].path_len == depth)
			t |= 1u << i;
	return t;
}

/* Queries of @match whose path goes on through the key @key (@len bytes). */
static uint32_t tp_json_descend(const struct tp_json *j, uint32_t match, unsigned int depth,
				const char *key, size_t len)
{
	uint32_t m = 0;

	for (size_t i = 0; i < j->nr; i++) {
		const char *k;

		if (!(match >> i & 1) || j->q[i].path_len <= depth)
			continue;
		k = j->q[i].path[depth];
		if (strlen(k) == len && !memcmp(k, key, len))
			m |= 1u << i;
	}
	return m;
}

/*
 * The string value at j->p, for the queries @targets: decoded into the
 * largest of their buffers, copied to the others it fits.
 */
static int tp_json_answer(struct tp_json *j, uint32_t targets)
{
	struct tp_json_query *first = NULL;
	struct tp_json_text t;
	int err, result;

	for (size_t i = 0; i < j->nr; i++)
		if ((targets >> i & 1) && (!first || j->q[i].size > first->size))
			first = &j->q[i];
	t = (struct tp_json_text){ .out = first->out, .size = first->size };
	err = tp_json_string(j, &t);

	if (err)
		return err;
	if (t.len >= first->size)
		result = -E2BIG;
	else if (t.control)
		result = -EILSEQ;
	else
		result = (int)t.len;
	for (size_t i = 0; i < j->nr; i++) {
		struct tp_json_query *q = &j->q[i];

		if (!(targets >> i & 1))
			continue;
		/* Another query of the same path, with a buffer of its own. */
		if (q != first && result >= 0 && (size_t)result >= q->size)
			q->result = -E2BIG;
		else if (q != first && result >= 0)
			memcpy(q->out, first->out, (size_t)result + 1), q->result = result;
		else
			q->result = result;
		if (q->result < 0 && q->size)
			q->out[0] = '\0';
	}
	return 0;
}

static int tp_json_value(struct tp_json *j, unsigned int depth, uint32_t match);

/* The object (@close '}') or array (']') at j->p, at @depth. */
static int tp_json_container(struct tp_json *j, unsigned int depth, uint32_t match, char close)
{
	char key[TP_JSON_KEY_MAX];
	int err;

	if (depth >= TP_JSON_DEPTH_MAX)
		return tp_json_bad(j, "nested too deep");
	j->p++;
	tp_json_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		uint32_t sub = 0;

		if (close == '}') {
			struct tp_json_text t = { .out = key, .size = sizeof(key) };

			if (j->p == j->end || *j->p != '"')
				return tp_json_bad(j, "object key is not a string");
			err = tp_json_string(j, &t);
			if (err)
				return err;
			if (t.len < sizeof(key))
				sub = tp_json_descend(j, match, depth, key, t.len);
			tp_json_ws(j);
			if (j->p == j->end || *j->p != ':')
				return tp_json_bad(j, "no ':' after an object key");
			j->p++;
		}
		err = tp_json_value(j, depth + 1, sub);
		if (err)
			return err;
		tp_json_ws(j);
		if (j->p == j->end)
			return tp_json_bad(j, "document ends inside an object or array");
		if (*j->p == close) {
			j->p++;
			return 0;
		}
		if (*j->p != ',')
			return tp_json_bad(j, "no ',' between members");
		j->p++;
		tp_json_ws(j);
	}
}

/* The value at j->p (after white space), reached by the keys of @match. */
static int tp_json_value(struct tp_json *j, unsigned int depth, uint32_t match)
{
	uint32_t targets = tp_json_targets(j, match, depth);
	int err;

	tp_json_ws(j);
	if (j->p == j->end)
		return tp_json_bad(j, "value expected");
	if (*j->p == '"' && targets)
		return tp_json_answer(j, targets);
	if (*j->p == '"')
		err = tp_json_string(j, &(struct tp_json_text){ 0 });
	else if (*j->p == '{')
		err = tp_json_container(j, depth, match, '}');
	else if (*j->p == '[')
		err = tp_json_container(j, depth, 0, ']');
	else if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
		err = tp_json_number(j);
	else
		err = tp_json_literal(j);
	for (size_t i = 0; !err && i < j->nr; i++) {
		if (targets >> i & 1) {
			j->q[i].result = -EINVAL;
			if (j->q[i].size)
				j->q[i].out[0] = '\0';
		}
	}
	return err;
}

int tp_json_lookup(const char *doc, size_t len, struct tp_json_query *q, size_t nr)
{
	struct tp_json j = { .start = doc, .p = doc, .end = doc + len, .q = q, .nr = nr };
	uint32_t all = 0;
	int err;

	if (nr > TP_JSON_QUERIES_MAX)
		return tp_err(-EINVAL, "json: more than %d queries", TP_JSON_QUERIES_MAX);
	for (size_t i = 0; i < nr; i++) {
		if (!q[i].path_len || q[i].path_len > TP_JSON_PATH_MAX || !q[i].out || !q[i].size)
			return tp_err(-EINVAL, "json: query %zu has no path or no room", i);
		q[i].result = -ENOENT;
		q[i].out[0] = '\0';
		all |= 1u << i;
	}
	/* The top level answers no query (paths have a key at least). */
	err = tp_json_value(&j, 0, all);
	if (err)
		return err;
	tp_json_ws(&j);
	if (j.p != j.end)
		return tp_json_bad(&j, "more after the document");
	return 0;
}
