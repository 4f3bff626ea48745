// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON writer: exact output for strings that need escaping, structure,
 * and the errors it must report rather than write broken JSON.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"

/* A writer into memory; out() closes it and returns what was written. */
struct buf {
	FILE *f;
	char *data;
	size_t len;
	struct taproot_json *j;
};

static int buf_setup(void **state)
{
	struct buf *b = calloc(1, sizeof(*b));

	if (!b)
		return -1;
	b->f = open_memstream(&b->data, &b->len);
	if (!b->f || taproot_json_new(b->f, &b->j) < 0)
		return -1;
	*state = b;
	return 0;
}

static int buf_teardown(void **state)
{
	struct buf *b = *state;

	taproot_json_free(b->j);
	if (b->f)
		fclose(b->f);
	free(b->data);
	free(b);
	return 0;
}

/* Finish the writer (its result is returned in *err) and the stream. */
static const char *out(struct buf *b, int *err)
{
	*err = taproot_json_free(b->j);
	b->j = NULL;
	fclose(b->f);
	b->f = NULL;
	return b->data;
}

/* @s written as a top-level string must read @want. */
static void assert_string_written(void **state, const char *s, const char *want)
{
	struct buf *b = *state;
	int err;

	taproot_json_string(b->j, s);
	assert_string_equal(out(b, &err), want);
	assert_int_equal(err, 0);
}

static void json_string_escapes_quote_and_backslash(void **state)
{
	assert_string_written(state, "a\"b\\c/", "\"a\\\"b\\\\c/\"\n");
}

static void json_string_escapes_control_characters(void **state)
{
	assert_string_written(state, "\n\t\r\b\f\x01\x1f\x7f",
			      "\"\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\"\n");
}

static void json_string_keeps_valid_utf8(void **state)
{
	/* 2, 3 and 4 byte sequences: e-acute, euro sign, U+1F600. */
	assert_string_written(state, "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
			      "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n");
}

static void json_string_replaces_invalid_utf8(void **state)
{
	/*
	 * A stray continuation byte, 0xff, an overlong '/', a UTF-16
	 * surrogate, a code point above U+10FFFF, and a sequence cut short
	 * by the end of the string: each bad byte becomes U+FFFD.
	 */
	assert_string_written(state,
			      "\x80|\xff|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82",
			      "\"\\ufffd|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
			      "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"\n");
}

static void json_object_and_array_written(void **state)
{
	struct buf *b = *state;
	int err;

	taproot_json_object_begin(b->j);
	taproot_json_key(b->j, "n");
	taproot_json_u64(b->j, UINT64_MAX);
	taproot_json_key(b->j, "neg");
	taproot_json_i64(b->j, INT64_MIN);
	taproot_json_key(b->j, "list");
	taproot_json_array_begin(b->j);
	taproot_json_bool(b->j, true);
	taproot_json_null(b->j);
	taproot_json_string(b->j, NULL);
	taproot_json_array_begin(b->j);
	taproot_json_array_end(b->j);
	taproot_json_array_end(b->j);
	taproot_json_key(b->j, "k\"ey");
	taproot_json_object_begin(b->j);
	taproot_json_object_end(b->j);
	taproot_json_object_end(b->j);
	assert_string_equal(out(b, &err),
			    "{\"n\":18446744073709551615,\"neg\":-9223372036854775808,"
			    "\"list\":[true,null,null,[]],\"k\\\"ey\":{}}\n");
	assert_int_equal(err, 0);
}

static void json_top_level_values_one_per_line(void **state)
{
	struct buf *b = *state;
	int err;

	taproot_json_u64(b->j, 1);
	taproot_json_object_begin(b->j);
	taproot_json_object_end(b->j);
	assert_string_equal(out(b, &err), "1\n{}\n");
	assert_int_equal(err, 0);
}

static void json_value_without_key_refused(void **state)
{
	struct buf *b = *state;
	int err;

	taproot_json_object_begin(b->j);
	taproot_json_u64(b->j, 1);
	taproot_json_object_end(b->j);
	/* Nothing after the misuse is written. */
	assert_string_equal(out(b, &err), "{");
	assert_int_equal(err, -EINVAL);
}

static void json_key_in_array_refused(void **state)
{
	struct buf *b = *state;
	int err;

	taproot_json_array_begin(b->j);
	taproot_json_key(b->j, "k");
	out(b, &err);
	assert_int_equal(err, -EINVAL);
}

static void json_unclosed_value_refused(void **state)
{
	struct buf *b = *state;
	int err;

	taproot_json_object_begin(b->j);
	taproot_json_key(b->j, "a");
	taproot_json_array_begin(b->j);
	taproot_json_array_end(b->j);
	out(b, &err);
	assert_int_equal(err, -EINVAL);
}

static void json_mismatched_end_refused(void **state)
{
	struct buf *b = *state;
	int err;

	taproot_json_array_begin(b->j);
	taproot_json_object_end(b->j);
	out(b, &err);
	assert_int_equal(err, -EINVAL);
}

static void json_nesting_limit_enforced(void **state)
{
	struct buf *b = *state;
	int i, err;

	for (i = 0; i < 33; i++)
		taproot_json_array_begin(b->j);
	for (i = 0; i < 33; i++)
		taproot_json_array_end(b->j);
	out(b, &err);
	assert_int_equal(err, -EINVAL);
}

static void json_write_error_reported(void **state)
{
	struct taproot_json *j;
	FILE *full = fopen("/dev/full", "w");

	assert_non_null(full);
	assert_int_equal(taproot_json_new(full, &j), 0);
	taproot_json_string(j, "bytes that cannot be written");
	assert_int_equal(taproot_json_free(j), -EIO);
	fclose(full);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, buf_setup, buf_teardown)
	const struct CMUnitTest tests[] = {
		T(json_string_escapes_quote_and_backslash),
		T(json_string_escapes_control_characters),
		T(json_string_keeps_valid_utf8),
		T(json_string_replaces_invalid_utf8),
		T(json_object_and_array_written),
		T(json_top_level_values_one_per_line),
		T(json_value_without_key_refused),
		T(json_key_in_array_refused),
		T(json_unclosed_value_refused),
		T(json_mismatched_end_refused),
		T(json_nesting_limit_enforced),
		cmocka_unit_test(json_write_error_reported),
	};
#undef T

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
