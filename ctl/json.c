// SPDX-License-Identifier: GPL-2.0
/*
 * A small streaming JSON writer for --json output: compact, one line per
 * top-level value, strings always valid JSON whatever bytes they came from.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"
#include "util/util.h"

#define TP_JSON_DEPTH	32

struct tp_json_frame {
	char kind;		/* '{' or '[' */
	bool key;		/* object: a key was written, its value is due */
	unsigned int n;		/* members or elements written so far */
};

struct taproot_json {
	FILE *out;
	int err;		/* first error, sticky */
	int depth;
	struct tp_json_frame st[TP_JSON_DEPTH];
};

int taproot_json_new(FILE *out, struct taproot_json **jp)
{
	struct taproot_json *j = calloc(1, sizeof(*j));

	*jp = NULL;
	if (!j)
		return tp_err(-ENOMEM, NULL);
	j->out = out;
	*jp = j;
	return 0;
}

int taproot_json_free(struct taproot_json *j)
{
	int err;

	if (!j)
		return 0;
	err = j->err;
	if (!err && j->depth)
		err = -EINVAL;
	if (!err && fflush(j->out) == EOF)
		err = -EIO;
	free(j);
	if (err == -EIO)
		return tp_err(err, "writing JSON output: %s", taproot_strerror(err));
	if (err)
		return tp_err(err, "JSON writer misused: unbalanced or misplaced value");
	return 0;
}

static void tp_json_fail(struct taproot_json *j, int err)
{
	if (!j->err)
		j->err = err;
}

static void tp_json_puts(struct taproot_json *j, const char *s)
{
	if (!j->err && fputs(s, j->out) == EOF)
		tp_json_fail(j, -EIO);
}

static void tp_json_putc(struct taproot_json *j, char c)
{
	if (!j->err && fputc(c, j->out) == EOF)
		tp_json_fail(j, -EIO);
}

/* Before any value: its separator, and whether it is allowed here. */
static bool tp_json_value_begin(struct taproot_json *j)
{
	struct tp_json_frame *f;

	if (j->err)
		return false;
	if (!j->depth)
		return true;
	f = &j->st[j->depth - 1];
	if (f->kind == '{') {
		if (!f->key) {
			tp_json_fail(j, -EINVAL);	/* a value needs a key */
			return false;
		}
		f->key = false;
		return true;
	}
	if (f->n++)
		tp_json_putc(j, ',');
	return !j->err;
}

/* After any value: a top-level value ends its line. */
static void tp_json_value_end(struct taproot_json *j)
{
	if (!j->depth)
		tp_json_putc(j, '\n');
}

/*
 * Length of the valid UTF-8 sequence at @p (RFC 3629: shortest form, no
 * surrogates, at most U+10FFFF), or 0 when it is not one.
 */
static int tp_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	int n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	/* p[i] is read only after p[i - 1] was a continuation byte, not NUL. */
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

static void tp_json_put_string(struct taproot_json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];
	int n;

	tp_json_putc(j, '"');
	while (*p && !j->err) {
		switch (*p) {
		case '"':  tp_json_puts(j, "\\\""); p++; continue;
		case '\\': tp_json_puts(j, "\\\\"); p++; continue;
		case '\b': tp_json_puts(j, "\\b"); p++; continue;
		case '\f': tp_json_puts(j, "\\f"); p++; continue;
		case '\n': tp_json_puts(j, "\\n"); p++; continue;
		case '\r': tp_json_puts(j, "\\r"); p++; continue;
		case '\t': tp_json_puts(j, "\\t"); p++; continue;
		default:
			break;
		}
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			tp_json_puts(j, esc);
			p++;
		} else if (*p < 0x80) {
			tp_json_putc(j, (char)*p);
			p++;
		} else if ((n = tp_utf8_len(p)) > 0) {
			if (!j->err && fwrite(p, 1, (size_t)n, j->out) != (size_t)n)
				tp_json_fail(j, -EIO);
			p += n;
		} else {
			tp_json_puts(j, "\\ufffd");
			p++;
		}
	}
	tp_json_putc(j, '"');
}

static void tp_json_open(struct taproot_json *j, char kind)
{
	if (!tp_json_value_begin(j))
		return;
	if (j->depth == TP_JSON_DEPTH) {
		tp_json_fail(j, -EINVAL);
		return;
	}
	j->st[j->depth++] = (struct tp_json_frame){ .kind = kind };
	tp_json_putc(j, kind);
}

static void tp_json_close(struct taproot_json *j, char kind)
{
	struct tp_json_frame *f;

	if (j->err)
		return;
	f = j->depth ? &j->st[j->depth - 1] : NULL;
	if (!f || f->kind != kind || f->key) {
		tp_json_fail(j, -EINVAL);
		return;
	}
	j->depth--;
	tp_json_putc(j, kind == '{' ? '}' : ']');
	tp_json_value_end(j);
}

void taproot_json_object_begin(struct taproot_json *j)
{
	tp_json_open(j, '{');
}

void taproot_json_object_end(struct taproot_json *j)
{
	tp_json_close(j, '{');
}

void taproot_json_array_begin(struct taproot_json *j)
{
	tp_json_open(j, '[');
}

void taproot_json_array_end(struct taproot_json *j)
{
	tp_json_close(j, '[');
}

void taproot_json_key(struct taproot_json *j, const char *key)
{
	struct tp_json_frame *f;

	if (j->err)
		return;
	f = j->depth ? &j->st[j->depth - 1] : NULL;
	if (!f || f->kind != '{' || f->key || !key) {
		tp_json_fail(j, -EINVAL);
		return;
	}
	if (f->n++)
		tp_json_putc(j, ',');
	tp_json_put_string(j, key);
	tp_json_putc(j, ':');
	f->key = true;
}

void taproot_json_string(struct taproot_json *j, const char *s)
{
	if (!tp_json_value_begin(j))
		return;
	if (s)
		tp_json_put_string(j, s);
	else
		tp_json_puts(j, "null");
	tp_json_value_end(j);
}

void taproot_json_u64(struct taproot_json *j, uint64_t v)
{
	char buf[24];

	if (!tp_json_value_begin(j))
		return;
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	tp_json_puts(j, buf);
	tp_json_value_end(j);
}

void taproot_json_i64(struct taproot_json *j, int64_t v)
{
	char buf[24];

	if (!tp_json_value_begin(j))
		return;
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	tp_json_puts(j, buf);
	tp_json_value_end(j);
}

void taproot_json_bool(struct taproot_json *j, bool v)
{
	if (!tp_json_value_begin(j))
		return;
	tp_json_puts(j, v ? "true" : "false");
	tp_json_value_end(j);
}

void taproot_json_null(struct taproot_json *j)
{
	if (!tp_json_value_begin(j))
		return;
	tp_json_puts(j, "null");
	tp_json_value_end(j);
}

void taproot_json_key_u64(struct taproot_json *j, const char *key, uint64_t v)
{
	taproot_json_key(j, key);
	taproot_json_u64(j, v);
}

void taproot_json_key_string(struct taproot_json *j, const char *key, const char *s)
{
	taproot_json_key(j, key);
	taproot_json_string(j, s);
}
