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

/* @s as a JSON string, escaped as tp_json_quote() does. */
static void tp_json_put_string(struct taproot_json *j, const char *s)
{
	if (!j->err && tp_json_quote(j->out, s) < 0)
		tp_json_fail(j, -EIO);
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
