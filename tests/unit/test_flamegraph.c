// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs: the profile's samples read back frame by frame
 * (taproot_profile_foreach_sample()), folded into the tree a flame graph
 * draws (taproot_flamegraph_json()):
 *
 *  - foreach_gives_frames_as_pprof_names_them: every sample once, leaf
 *    first, inline chains expanded, names as pprof shows them (a function,
 *    "[FILE]" of an unsymbolized pc, "<unknown>"), the truncated sample
 *    last, and the walk stops when the callback says so;
 *  - json_folds_samples_into_a_tree: the exact JSON of a small profile
 *    (children by name, values summed, kernel frames marked, zero values
 *    left out), an empty one, another sample type, an unknown one;
 *  - json_is_safe_in_a_script_element: names with '<', quotes, control
 *    and non-UTF-8 bytes; a stack thousands of frames deep.
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

#include "taproot.h"

/* ------------------------------------------------------------ helpers */

static struct taproot_profile *new_cpu(size_t max_stacks)
{
	struct taproot_profile_desc d;
	struct taproot_profile *p;

	taproot_profile_desc_cpu(&d, 100);
	d.max_stacks = max_stacks;
	assert_int_equal(taproot_profile_new(&d, &p), 0);
	return p;
}

/* A user frame of /usr/bin/app. */
#define UFRAME(fn, addr) { .function = (fn), .mapping_path = "/usr/bin/app",	\
	.mapping_start = 0x400000, .mapping_limit = 0x500000, .address = (addr) }
#define KFRAME(fn, addr) { .function = (fn), .address = (addr), .is_kernel = true }

static const int64_t one[2] = { 1, 10000000 };

/* Add the stack of @n frames @f (leaf first) @times times, no labels. */
static void add(struct taproot_profile *p, const struct taproot_profile_frame *f, size_t n,
		int times)
{
	for (int i = 0; i < times; i++)
		assert_int_equal(taproot_profile_add(p, f, n, NULL, 0, one), 0);
}

/* taproot_flamegraph_json() of @p for @type, as a string to free; *@total its root's value. */
static char *fg_json(const struct taproot_profile *p, const char *type, int64_t *total, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*err = taproot_flamegraph_json(p, type, f, total);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* ------------------------------------------------- reading the samples */

/* What foreach gave: one line per sample, "VALUE: NAME[*] NAME ...", '*' when inlined. */
struct seen {
	char text[2048];
	size_t len;
	int calls, stop_at;
	const struct taproot_profile_frame_view *last;
};

static int see(const int64_t *values, const struct taproot_profile_frame_view *frames,
	       size_t nr, void *arg)
{
	struct seen *s = arg;

	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "%lld:",
				   (long long)values[0]);
	for (size_t i = 0; i < nr; i++)
		s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, " %s%s",
					   frames[i].name, frames[i].inlined ? "*" : "");
	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "\n");
	assert_true(s->len < sizeof(s->text));
	s->last = frames;
	return ++s->calls == s->stop_at ? 42 : 0;
}

/* Frames of the first sample, to check the fields other than the name. */
static int check_first(const int64_t *values, const struct taproot_profile_frame_view *f,
		       size_t nr, void *arg)
{
	assert_int_equal(nr, 7);
	/* The inline chain: two frames, one location, the outer's address and mapping. */
	assert_string_equal(f[0].name, "inl_leaf");
	assert_true(f[0].inlined);
	assert_string_equal(f[0].mapping, "/usr/bin/app");
	assert_int_equal(f[0].address, 0x401010);
	assert_string_equal(f[1].name, "outer");
	assert_false(f[1].inlined);
	assert_int_equal(f[1].address, 0x401010);
	/* Unsymbolized in a library: its file's base name; in "[vdso]": as it is. */
	assert_string_equal(f[2].name, "[libfoo.so.1]");
	assert_string_equal(f[2].mapping, "/usr/lib/libfoo.so.1");
	assert_int_equal(f[2].address, 0x7f0000001234);
	assert_string_equal(f[3].name, "[vdso]");
	/* Nothing known at all. */
	assert_string_equal(f[4].name, "<unknown>");
	assert_null(f[4].mapping);
	/* A marker: its function, no mapping, no address. */
	assert_string_equal(f[5].name, "[unknown]");
	assert_null(f[5].mapping);
	assert_int_equal(f[5].address, 0);
	/* A kernel frame: the kernel's mapping. */
	assert_string_equal(f[6].name, "do_syscall_64");
	assert_string_equal(f[6].mapping, "[kernel.kallsyms]");
	assert_int_equal(values[0], 1);
	assert_int_equal(values[1], 10000000);
	return 1;
}

static void foreach_gives_frames_as_pprof_names_them(void **state)
{
	struct taproot_profile *p = new_cpu(3);
	const struct taproot_profile_frame a[] = {
		{ .function = "inl_leaf", .inlined = true },
		{ .function = "outer", .mapping_path = "/usr/bin/app", .mapping_start = 0x400000,
		  .mapping_limit = 0x500000, .address = 0x401010 },
		{ .mapping_path = "/usr/lib/libfoo.so.1", .mapping_start = 0x7f0000000000,
		  .mapping_limit = 0x7f0000100000, .address = 0x7f0000001234 },
		{ .mapping_path = "[vdso]", .mapping_start = 0x7ffff000,
		  .mapping_limit = 0x7ffff800, .address = 0x7ffff100 },
		{ .address = 0x1234 },
		{ .function = "[unknown]" },
		KFRAME("do_syscall_64", 0xffffffff81001000),
	};
	const struct taproot_profile_frame b[] = { UFRAME("leaf", 0x401000),
						   UFRAME("main", 0x402000) };
	const struct taproot_profile_frame c[] = { UFRAME("main", 0x402000) };
	const struct taproot_profile_frame d[] = { UFRAME("other", 0x403000) };
	const struct taproot_profile_label l = TAPROOT_LABEL_STR("comm", "app");
	struct seen s = { 0 };

	assert_int_equal(taproot_profile_sample_type_index(p, "samples"), 0);
	assert_int_equal(taproot_profile_sample_type_index(p, "cpu"), 1);
	assert_int_equal(taproot_profile_sample_type_index(p, "count"), -ENOENT);
	assert_int_equal(taproot_profile_sample_type_index(p, "nope"), -ENOENT);

	/* Nothing yet: no call. */
	assert_int_equal(taproot_profile_foreach_sample(p, see, &s), 0);
	assert_int_equal(s.calls, 0);

	add(p, a, 7, 1);
	add(p, b, 2, 2);
	/* The same stack with labels: another entry, another call. */
	assert_int_equal(taproot_profile_add(p, b, 2, &l, 1, one), 0);
	/* The table holds 3: these go to the truncated sample. */
	add(p, c, 1, 2);
	add(p, d, 1, 1);
	assert_int_equal(taproot_profile_foreach_sample(p, see, &s), 0);
	print_message("%s", s.text);
	assert_string_equal(s.text,
			    "1: inl_leaf* outer [libfoo.so.1] [vdso] <unknown> [unknown] "
			    "do_syscall_64\n"
			    "2: leaf main\n"
			    "1: leaf main\n"
			    "3: [truncated: stack table full]\n");
	assert_int_equal(taproot_profile_foreach_sample(p, check_first, NULL), 1);

	/* A callback's non-zero return ends the walk and is returned. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(taproot_profile_foreach_sample(p, see, &s), 42);
	assert_int_equal(s.calls, 2);
	taproot_profile_free(p);
}

/* ------------------------------------------------------- the JSON tree */

static void json_folds_samples_into_a_tree(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame bam[] = { UFRAME("b", 0x401100), UFRAME("a", 0x401000),
						     UFRAME("main", 0x402000) };
	const struct taproot_profile_frame cam[] = { UFRAME("c", 0x401200), UFRAME("a", 0x401000),
						     UFRAME("main", 0x402000) };
	const struct taproot_profile_frame m[] = { UFRAME("main", 0x402000) };
	const struct taproot_profile_frame km[] = { KFRAME("sys_read", 0xffffffff81002000),
						    UFRAME("main", 0x402000) };
	/* Another binary's "main", another root: one node per name, whatever the address. */
	const struct taproot_profile_frame zm[] = { UFRAME("main", 0x402100),
						    UFRAME("_start", 0x400100) };
	const int64_t zero[2] = { 0, 0 };
	int64_t total = -1;
	char *json;
	int err;

	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	assert_string_equal(json, "{\"n\":\"all\",\"v\":0}\n");
	assert_int_equal(total, 0);
	free(json);

	add(p, bam, 3, 2);
	add(p, cam, 3, 1);
	add(p, m, 1, 1);
	add(p, km, 2, 1);
	add(p, zm, 2, 3);
	/* A sample of value 0 adds no node. */
	assert_int_equal(taproot_profile_add(p, (const struct taproot_profile_frame[]){
		UFRAME("zero", 0x405000) }, 1, NULL, 0, zero), 0);
	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	print_message("%s", json);
	assert_string_equal(json,
		"{\"n\":\"all\",\"v\":8,\"c\":["
		"{\"n\":\"_start\",\"v\":3,\"c\":[{\"n\":\"main\",\"v\":3}]},"
		"{\"n\":\"main\",\"v\":5,\"c\":["
		"{\"n\":\"a\",\"v\":3,\"c\":[{\"n\":\"b\",\"v\":2},{\"n\":\"c\",\"v\":1}]},"
		"{\"n\":\"sys_read\",\"v\":1,\"l\":\"kernel\"}]}]}\n");
	assert_int_equal(total, 8);
	free(json);

	/* Another sample type: the same tree in its unit. */
	json = fg_json(p, "cpu", &total, &err);
	assert_int_equal(err, 0);
	assert_non_null(strstr(json, "{\"n\":\"all\",\"v\":80000000,"));
	assert_non_null(strstr(json, "{\"n\":\"b\",\"v\":20000000}"));
	assert_int_equal(total, 80000000);
	free(json);

	json = fg_json(p, "nanoseconds", &total, &err);
	assert_int_equal(err, -ENOENT);
	assert_non_null(strstr(taproot_errmsg(err), "nanoseconds"));
	free(json);
	taproot_profile_free(p);
}

static void json_is_safe_in_a_script_element(void **state)
{
	enum { DEEP = 5000 };
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame odd[] = {
		UFRAME("</script><b>\"x\"\\", 0x401000),
		UFRAME("tab\there & \xff\xc3\xa9t\xc3", 0x402000),
	};
	/* A surrogate and an overlong form (not UTF-8 whatever their bytes say), DEL. */
	const struct taproot_profile_frame bad[] = { UFRAME("s\xed\xa0\x80o\xe0\x80\xaf\x7f",
							    0x403000) };
	struct taproot_profile_frame *deep = calloc(DEEP, sizeof(*deep));
	char names[DEEP][16];
	int64_t total;
	size_t opens = 0, closes = 0;
	char *json;
	int err;

	assert_non_null(deep);
	add(p, odd, 2, 1);
	add(p, bad, 1, 1);
	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	print_message("%s", json);
	/* No '<', '>' or '&' anywhere; quotes and backslashes escaped; é kept. */
	assert_null(strpbrk(json, "<>&"));
	assert_string_equal(json,
		"{\"n\":\"all\",\"v\":2,\"c\":["
		"{\"n\":\"s\\ufffd\\ufffd\\ufffdo\\ufffd\\ufffd\\ufffd\\u007f\",\"v\":1},"
		"{\"n\":\"tab\\u0009here \\u0026 \\ufffd\xc3\xa9t\\ufffd\",\"v\":1,\"c\":["
		"{\"n\":\"\\u003c/script\\u003e\\u003cb\\u003e\\\"x\\\"\\\\\",\"v\":1}]}]}\n");
	free(json);
	taproot_profile_free(p);

	/* Deeper than any real stack: written without recursion, every node closed. */
	p = new_cpu(0);
	for (int i = 0; i < DEEP; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		deep[i] = (struct taproot_profile_frame)UFRAME(names[i], 0x401000 + (uint64_t)i);
	}
	add(p, deep, DEEP, 1);
	add(p, deep + 1, DEEP - 1, 1);
	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	assert_int_equal(total, 2);
	for (const char *c = json; *c; c++) {
		opens += *c == '{';
		closes += *c == '}';
	}
	assert_int_equal(opens, DEEP + 1);
	assert_int_equal(closes, DEEP + 1);
	/* The outermost frame under the root; the leaf's caller has value 2, the leaf 1. */
	assert_non_null(strstr(json, "{\"n\":\"all\",\"v\":2,\"c\":[{\"n\":\"f4999\",\"v\":2,"));
	assert_non_null(strstr(json, "{\"n\":\"f1\",\"v\":2,\"c\":[{\"n\":\"f0\",\"v\":1}]}"));
	free(json);
	free(deep);
	taproot_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(foreach_gives_frames_as_pprof_names_them),
		cmocka_unit_test(json_folds_samples_into_a_tree),
		cmocka_unit_test(json_is_safe_in_a_script_element),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
