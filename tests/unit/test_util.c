// SPDX-License-Identifier: GPL-2.0
/*
 * The utilities layer (lib/util/): number parsing stops where the text or
 * its bound ends, arrays grow without overflowing, the index finds what was
 * put in it and nothing else, clocks read as clocks, and any bytes become
 * a valid JSON string that reads back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/clock.h"
#include "util/hash.h"
#include "util/labels.h"
#include "util/parse.h"
#include "util/util.h"

static void parse_hex_needs_its_stop(void **state)
{
	const char *s = "7f00-7fff ", *p = s;
	uint64_t v = 0;

	assert_true(tp_parse_hex(&p, '-', &v));
	assert_int_equal(v, 0x7f00);
	assert_ptr_equal(p, s + 5);
	assert_true(tp_parse_hex(&p, ' ', &v));
	assert_int_equal(v, 0x7fff);

	p = s;
	assert_false(tp_parse_hex(&p, ' ', &v));	/* '-' is not the stop */
	assert_ptr_equal(p, s);
	p = "-";
	assert_false(tp_parse_hex(&p, '-', &v));	/* no digit */
}

static void parse_hex_refuses_more_than_64_bits(void **state)
{
	const char *p = "ffffffffffffffff ";
	uint64_t v = 0;

	assert_true(tp_parse_hex(&p, ' ', &v));
	assert_true(v == UINT64_MAX);
	p = "10000000000000000 ";
	assert_false(tp_parse_hex(&p, ' ', &v));
}

static void parse_dec_stops_at_its_bound(void **state)
{
	const char s[] = "12345";
	const char *p = s;
	uint64_t v = 0;

	/* Only the first three bytes are the field: the rest is not read. */
	assert_true(tp_parse_dec(&p, s + 3, &v));
	assert_int_equal(v, 123);
	assert_ptr_equal(p, s + 3);

	p = s;
	assert_true(tp_parse_dec(&p, NULL, &v));
	assert_int_equal(v, 12345);
	assert_ptr_equal(p, s + 5);

	p = s;
	assert_false(tp_parse_dec(&p, s, &v));		/* empty field */
	p = "x1";
	assert_false(tp_parse_dec(&p, NULL, &v));
}

static void parse_dec_refuses_overflow(void **state)
{
	const char *p = "18446744073709551615";
	uint64_t v = 0;

	assert_true(tp_parse_dec(&p, NULL, &v));
	assert_true(v == UINT64_MAX);
	p = "18446744073709551616";
	v = 7;
	assert_false(tp_parse_dec(&p, NULL, &v));
	assert_int_equal(v, 7);				/* unchanged */
}

static void grow_doubles_and_keeps_contents(void **state)
{
	uint32_t *a = NULL;
	size_t alloc = 0;

	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(tp_grow((void **)&a, &alloc, i + 1, sizeof(*a)), 0);
		assert_true(alloc >= i + 1);
		a[i] = i;
	}
	assert_int_equal(alloc, 1024);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(a[i], i);
	free(a);
}

static void grow_refuses_overflow(void **state)
{
	char *a = NULL;
	size_t alloc = 0;

	assert_int_equal(tp_grow((void **)&a, &alloc, SIZE_MAX / 4, 8), -ENOMEM);
	assert_null(a);
	assert_int_equal(alloc, 0);
	assert_non_null(strstr(taproot_errmsg(-ENOMEM), "too large"));
}

static void strpool_appends_with_nul(void **state)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;

	assert_int_equal(tp_strpool_add(&buf, &len, &cap, "", 0), 0);
	assert_int_equal(tp_strpool_add(&buf, &len, &cap, "libc.so.6 and more", 9), 1);
	assert_int_equal(tp_strpool_add(&buf, &len, &cap, "[vdso]", 6), 11);
	assert_int_equal(len, 18);
	assert_true(cap >= len);
	assert_string_equal(buf + 1, "libc.so.6");
	assert_string_equal(buf + 11, "[vdso]");
	/* An offset past 32 bits is refused before anything is allocated. */
	assert_int_equal(tp_strpool_add(&buf, &len, &cap, "x", (size_t)UINT32_MAX), -ENOMEM);
	assert_int_equal(len, 18);
	free(buf);
}

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const char *const *)ctx)[idx], key);
}

static void index_finds_what_was_put(void **state)
{
	static const char *words[300];
	char buf[300][16];
	struct tp_index ix = { 0 };

	for (int i = 0; i < 300; i++) {
		struct tp_index_slot *s;
		uint32_t h;

		snprintf(buf[i], sizeof(buf[i]), "w%d", i);
		words[i] = buf[i];
		h = (uint32_t)tp_hash_fin(tp_hash_bytes(buf[i], strlen(buf[i])));
		assert_int_equal(tp_index_reserve(&ix), 0);
		s = tp_index_probe(&ix, h, str_eq, words, buf[i]);
		assert_int_equal(s->idx1, 0);		/* not there yet */
		tp_index_set(&ix, s, h, (size_t)i);
	}
	assert_int_equal(ix.used, 300);
	assert_true(ix.mask + 1 >= 600);		/* at most half full */
	for (int i = 0; i < 300; i++) {
		uint32_t h = (uint32_t)tp_hash_fin(tp_hash_bytes(buf[i], strlen(buf[i])));
		struct tp_index_slot *s = tp_index_probe(&ix, h, str_eq, words, buf[i]);

		assert_int_equal(s->idx1, i + 1);
	}
	{
		uint32_t h = (uint32_t)tp_hash_fin(tp_hash_bytes("w300", 4));

		assert_int_equal(tp_index_probe(&ix, h, str_eq, words, "w300")->idx1, 0);
	}
	tp_index_clear(&ix);
	assert_int_equal(ix.used, 0);
	tp_index_free(&ix);
	assert_null(ix.slots);
	assert_int_equal(tp_index_bytes(&ix), 0);
}

static void clock_reads_time(void **state)
{
	uint64_t a = tp_clock_ns(CLOCK_MONOTONIC), b = tp_clock_ns(CLOCK_MONOTONIC);

	assert_true(a > 0);
	assert_true(b >= a);
	assert_true(tp_clock_ns(CLOCK_REALTIME) / 1000000000 > 1600000000);
	assert_int_equal(tp_clock_ns((clockid_t)-100), 0);	/* not a clock */
}

/* Labels are copied, found by key, and freed with the last reference (ASan checks). */
static void labels_copied_and_counted(void **state)
{
	char key[16] = "service_name", value[16] = "nginx";
	const char *keys[TP_LABELS_MAX + 1], *values[TP_LABELS_MAX + 1];
	const char *k = key, *v = value;
	struct tp_labels *l = tp_labels_new(&k, &v, 1);

	assert_non_null(l);
	strcpy(value, "changed");
	assert_string_equal(tp_labels_value(l, "service_name"), "nginx");
	assert_string_equal(tp_labels_value(l, "exe"), "");
	assert_string_equal(tp_labels_value(NULL, "exe"), "");
	assert_ptr_equal(tp_labels_get(l), l);
	assert_int_equal(l->refs, 2);
	tp_labels_put(l);
	assert_string_equal(l->key[0], "service_name");
	tp_labels_put(l);
	tp_labels_put(NULL);
	for (int i = 0; i <= TP_LABELS_MAX; i++)
		keys[i] = values[i] = "x";
	assert_null(tp_labels_new(keys, values, TP_LABELS_MAX + 1));
	l = tp_labels_new(keys, values, 0);
	assert_non_null(l);
	assert_int_equal(l->nr, 0);
	tp_labels_put(l);
}

/* @s through tp_json_quote() must read @want. */
static void assert_quoted(const char *s, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(tp_json_quote(f, s), 0);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

static void json_quote_escapes_quotes_backslashes_controls(void **state)
{
	char in[0x80] = "", want[0x100];
	size_t n = 0;

	assert_quoted("", "\"\"");
	assert_quoted("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	/* Every control character: JSON's short form where it has one, else \u00XX. */
	for (int c = 1; c < 0x20; c++) {
		const char *s = c == '\b' ? "b" : c == '\f' ? "f" : c == '\n' ? "n" :
				c == '\r' ? "r" : c == '\t' ? "t" : NULL;

		in[0] = (char)c;
		in[1] = '\0';
		if (s)
			snprintf(want, sizeof(want), "\"\\%s\"", s);
		else
			snprintf(want, sizeof(want), "\"\\u%04x\"", (unsigned int)c);
		assert_quoted(in, want);
	}
	/* DEL is valid JSON as it is: escaped all the same, as a terminal would not show it. */
	assert_quoted("\x7f", "\"\\u007f\"");
	/* The rest of ASCII stands as it is; the string ends at its NUL. */
	for (int c = 0x20; c < 0x7f; c++)
		if (c != '"' && c != '\\')
			in[n++] = (char)c;
	in[n] = '\0';
	snprintf(want, sizeof(want), "\"%s\"", in);
	assert_quoted(in, want);
	assert_quoted("ab\0cd", "\"ab\"");
}

static void json_quote_keeps_valid_utf8(void **state)
{
	/* The first and last code point of each length, either side of the surrogates. */
	static const char *const valid[] = {
		"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
		"\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	};
	char want[64];

	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		snprintf(want, sizeof(want), "\"%s\"", valid[i]);
		assert_quoted(valid[i], want);
	}
}

static void json_quote_replaces_invalid_utf8(void **state)
{
#define R	"\\ufffd"
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "\x80", "\"" R "\"" },			/* a continuation byte alone */
		{ "\xbf", "\"" R "\"" },
		{ "\xfe", "\"" R "\"" },			/* never in UTF-8 */
		{ "\xff", "\"" R "\"" },
		{ "\xc0\xaf", "\"" R R "\"" },			/* overlong '/' */
		{ "\xc1\xbf", "\"" R R "\"" },
		{ "\xe0\x80\xaf", "\"" R R R "\"" },		/* overlong, 3 bytes */
		{ "\xe0\x9f\xbf", "\"" R R R "\"" },
		{ "\xf0\x80\x80\xaf", "\"" R R R R "\"" },	/* overlong, 4 bytes */
		{ "\xf0\x8f\xbf\xbf", "\"" R R R R "\"" },
		{ "\xed\xa0\x80", "\"" R R R "\"" },		/* UTF-16 surrogates */
		{ "\xed\xbf\xbf", "\"" R R R "\"" },
		{ "\xf4\x90\x80\x80", "\"" R R R R "\"" },	/* above U+10FFFF */
		{ "\xf5\x80\x80\x80", "\"" R R R R "\"" },
		{ "\xe2\x82", "\"" R R "\"" },			/* cut short by the end */
		{ "\xf0\x9f\x98", "\"" R R R "\"" },
		{ "\xe2\x82" "A", "\"" R R "A\"" },		/* by ASCII, which is kept */
		{ "\xe2" "\xe2\x82\xac", "\"" R "\xe2\x82\xac\"" },	/* by a valid sequence */
	};
#undef R

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_quoted(cases[i].in, cases[i].want);
}

/* What tp_json_quote() writes, tp_json_unquote() reads back. */
static void json_unquote_reads_what_quote_wrote(void **state)
{
	char in[0x100], out[0x100], *buf = NULL;
	size_t n = 0, len = 0;
	FILE *f = open_memstream(&buf, &len);

	/* Every ASCII byte, and UTF-8 of each length. */
	for (int c = 1; c < 0x80; c++)
		in[n++] = (char)c;
	snprintf(in + n, sizeof(in) - n, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	assert_non_null(f);
	assert_int_equal(tp_json_quote(f, in), 0);
	fclose(f);
	assert_int_equal(tp_json_unquote(buf, out, sizeof(out)), 0);
	assert_string_equal(out, in);
	free(buf);

	/* Bytes that were not UTF-8 read back as U+FFFD. */
	assert_int_equal(tp_json_unquote("\"a\\ufffd\\u00e9\\/\"", out, sizeof(out)), 0);
	assert_string_equal(out, "a\xef\xbf\xbd\xef\xbf\xbd/");
	/* Cut to fit, never within what an escape stands for. */
	assert_int_equal(tp_json_unquote("\"ab\\ufffdc\"", out, 5), 0);
	assert_string_equal(out, "ab");
	assert_int_equal(tp_json_unquote("\"ab\\n\"", out, 3), 0);
	assert_string_equal(out, "ab");
	/* Not a string, or one cut short. */
	assert_int_equal(tp_json_unquote("12", out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "");
	assert_int_equal(tp_json_unquote("\"ab\\", out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "ab\\");
}

static void json_quote_reports_write_errors(void **state)
{
	FILE *full = fopen("/dev/full", "w");

	assert_non_null(full);
	setvbuf(full, NULL, _IONBF, 0);
	assert_int_equal(tp_json_quote(full, "x"), -EIO);
	fclose(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_hex_needs_its_stop),
		cmocka_unit_test(parse_hex_refuses_more_than_64_bits),
		cmocka_unit_test(parse_dec_stops_at_its_bound),
		cmocka_unit_test(parse_dec_refuses_overflow),
		cmocka_unit_test(grow_doubles_and_keeps_contents),
		cmocka_unit_test(grow_refuses_overflow),
		cmocka_unit_test(strpool_appends_with_nul),
		cmocka_unit_test(index_finds_what_was_put),
		cmocka_unit_test(clock_reads_time),
		cmocka_unit_test(labels_copied_and_counted),
		cmocka_unit_test(json_quote_escapes_quotes_backslashes_controls),
		cmocka_unit_test(json_quote_keeps_valid_utf8),
		cmocka_unit_test(json_quote_replaces_invalid_utf8),
		cmocka_unit_test(json_unquote_reads_what_quote_wrote),
		cmocka_unit_test(json_quote_reports_write_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
