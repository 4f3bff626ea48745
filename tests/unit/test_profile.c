// SPDX-License-Identifier: GPL-2.0
/*
 * The profile builder: interning and IDs, merging of identical (stack,
 * labels) pairs, inline chains, kernel and marker frames, the stack-table
 * cap, resets, and that a stack seen before allocates nothing.
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile-private.h"
#include "util/util.h"
#include "newprofile.h"

/* A user frame of /usr/bin/app. */
#define UFRAME(fn, addr) { .function = (fn), .file = "app.c", .line = 10,	\
	.mapping_path = "/usr/bin/app", .build_id = bid, .build_id_len = 2,			\
	.mapping_start = 0x400000, .mapping_limit = 0x500000,			\
	.address = (addr) }

static const uint8_t bid[] = { 0xab, 0xcd };
static const int64_t one[2] = { 1, 10000000 };

static const char *fn_name(const struct taproot_profile *p, uint32_t fid)
{
	return tp_profile_str(p, p->funcs[fid - 1].name);
}

static void desc_cpu_filled(void **state)
{
	struct taproot_profile *p = new_cpu(0);

	assert_int_equal(p->nvalues, 2);
	assert_string_equal(tp_profile_str(p, 0), "");
	assert_string_equal(tp_profile_str(p, p->sample_type[0][0]), "samples");
	assert_string_equal(tp_profile_str(p, p->sample_type[0][1]), "count");
	assert_string_equal(tp_profile_str(p, p->sample_type[1][0]), "cpu");
	assert_string_equal(tp_profile_str(p, p->sample_type[1][1]), "nanoseconds");
	assert_string_equal(tp_profile_str(p, p->period_type[0]), "cpu");
	assert_string_equal(tp_profile_str(p, p->period_type[1]), "nanoseconds");
	assert_string_equal(tp_profile_str(p, p->default_sample_type), "cpu");
	assert_int_equal(p->period, 10000000);
	assert_int_equal(p->max_stacks, TAPROOT_PROFILE_MAX_STACKS);
	/* "cpu" and "nanoseconds" are one string each. */
	assert_int_equal(p->nr_strs, 5);
	taproot_profile_free(p);
}

static void desc_refused(void **state)
{
	static const struct taproot_profile_value_type t[] = { { "samples", "count" } };
	static const struct taproot_profile_value_type bad[] = { { "samples", NULL } };
	struct taproot_profile_desc d = { .sample_types = t, .nr_sample_types = 1 };
	struct taproot_profile *p = (void *)1;

	assert_int_equal(taproot_profile_new(&d, &p), 0);
	taproot_profile_free(p);

	d.nr_sample_types = 0;
	assert_int_equal(taproot_profile_new(&d, &p), -EINVAL);
	assert_null(p);
	d.nr_sample_types = TAPROOT_PROFILE_MAX_VALUES + 1;
	assert_int_equal(taproot_profile_new(&d, &p), -EINVAL);
	d.nr_sample_types = 1;
	d.default_sample_type = "cpu";
	assert_int_equal(taproot_profile_new(&d, &p), -EINVAL);
	assert_non_null(strstr(taproot_errmsg(-EINVAL), "cpu"));
	d.default_sample_type = NULL;
	d.period_type.type = "cpu";
	assert_int_equal(taproot_profile_new(&d, &p), -EINVAL);
	d.period_type.type = NULL;
	d.sample_types = bad;
	assert_int_equal(taproot_profile_new(&d, &p), -EINVAL);
}

static void same_stack_merged(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame f[] = { UFRAME("leaf", 0x401000),
					   UFRAME("main", 0x402000) };
	const struct taproot_profile_label l[] = { TAPROOT_LABEL_STR("comm", "app"),
					   TAPROOT_LABEL_NUM("pid", 42) };
	const int64_t v2[2] = { 2, 20000000 };
	struct taproot_profile_stats st;

	assert_int_equal(taproot_profile_add(p, f, 2, l, 2, one), 0);
	assert_int_equal(taproot_profile_add(p, f, 2, l, 2, one), 0);
	assert_int_equal(taproot_profile_add(p, f, 2, l, 2, v2), 0);
	taproot_profile_stats(p, &st);
	assert_int_equal(st.adds, 3);
	assert_int_equal(st.stacks, 1);
	assert_int_equal(st.folded, 0);
	assert_int_equal(st.locations, 2);
	assert_int_equal(st.functions, 2);
	assert_int_equal(st.mappings, 1);
	assert_int_equal(p->values[0], 4);
	assert_int_equal(p->values[1], 40000000);

	/* Leaf first, IDs from 1 in the order seen. */
	assert_int_equal(p->samples[0].nlocs, 2);
	assert_int_equal(p->locs[0], 1);
	assert_int_equal(p->locs[1], 2);
	assert_int_equal(p->locations[0].address, 0x401000);
	assert_int_equal(p->locations[0].mapping, 1);
	assert_string_equal(fn_name(p, p->lines[p->locations[0].line_off].function), "leaf");
	assert_string_equal(tp_profile_str(p, p->maps[0].file), "/usr/bin/app");
	assert_string_equal(tp_profile_str(p, p->maps[0].build_id), "abcd");
	assert_int_equal(p->maps[0].start, 0x400000);
	assert_int_equal(p->maps[0].limit, 0x500000);

	/* Labels: string and numeric. */
	assert_int_equal(p->samples[0].nlabels, 2);
	assert_string_equal(tp_profile_str(p, p->labels[0].key), "comm");
	assert_string_equal(tp_profile_str(p, p->labels[0].str), "app");
	assert_string_equal(tp_profile_str(p, p->labels[1].key), "pid");
	assert_int_equal(p->labels[1].str, 0);
	assert_int_equal(p->labels[1].num, 42);
	taproot_profile_free(p);
}

static void labels_and_stacks_distinguish(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame f[] = { UFRAME("leaf", 0x401000),
					   UFRAME("main", 0x402000) };
	const struct taproot_profile_frame g[] = { UFRAME("main", 0x402000) };
	const struct taproot_profile_frame h[] = { UFRAME("main", 0x402000),
					   UFRAME("leaf", 0x401000) };
	struct taproot_profile_label a[] = { TAPROOT_LABEL_NUM("tid", 1),
				     TAPROOT_LABEL_STR("state", "R") };
	struct taproot_profile_label b[] = { TAPROOT_LABEL_STR("state", "R"),
				     TAPROOT_LABEL_NUM("tid", 1) };
	struct taproot_profile_label c[] = { TAPROOT_LABEL_NUM("tid", 2),
				     TAPROOT_LABEL_STR("state", "R") };
	struct taproot_profile_label u = { .key = "tid", .num = 1, .unit = "id" };

	assert_int_equal(taproot_profile_add(p, f, 2, a, 2, one), 0);
	assert_int_equal(taproot_profile_add(p, f, 2, c, 2, one), 0);	/* value */
	assert_int_equal(taproot_profile_add(p, f, 2, b, 2, one), 0);	/* order */
	assert_int_equal(taproot_profile_add(p, f, 2, a, 1, one), 0);	/* count */
	assert_int_equal(taproot_profile_add(p, f, 2, &u, 1, one), 0);	/* unit */
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(taproot_profile_add(p, g, 1, NULL, 0, one), 0);	/* depth */
	assert_int_equal(taproot_profile_add(p, h, 2, NULL, 0, one), 0);	/* order */
	assert_int_equal(p->nr_samples, 8);
	assert_int_equal(p->nr_locations, 2);
	/* All seen now: nothing new. */
	assert_int_equal(taproot_profile_add(p, h, 2, NULL, 0, one), 0);
	assert_int_equal(taproot_profile_add(p, f, 2, c, 2, one), 0);
	assert_int_equal(p->nr_samples, 8);
	assert_int_equal(p->values[1 * 2], 2);
	assert_int_equal(p->values[7 * 2], 2);
	/* A string label's num and unit do not count. */
	c[0] = (struct taproot_profile_label){ .key = "tid", .str = "x", .num = 5, .unit = "u" };
	assert_int_equal(taproot_profile_add(p, f, 2, c, 1, one), 0);
	c[0] = (struct taproot_profile_label){ .key = "tid", .str = "x" };
	assert_int_equal(taproot_profile_add(p, f, 2, c, 1, one), 0);
	assert_int_equal(p->nr_samples, 9);
	/* An empty string label is left out. */
	c[1] = (struct taproot_profile_label){ .key = "comm", .str = "" };
	assert_int_equal(taproot_profile_add(p, f, 2, c, 2, one), 0);
	assert_int_equal(p->nr_samples, 9);
	assert_int_equal(p->values[8 * 2], 3);
	taproot_profile_free(p);
}

static void inline_chain_one_location(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	struct taproot_profile_frame f[] = {
		UFRAME("inner", 0),		/* inlined into middle */
		UFRAME("middle", 0),		/* inlined into outer */
		UFRAME("outer", 0x401234),
		UFRAME("main", 0x402000),
	};
	const struct tp_location *l;

	f[0].inlined = f[1].inlined = true;
	f[0].line = 1;
	f[1].line = 2;
	f[2].line = 3;
	assert_int_equal(taproot_profile_add(p, f, 4, NULL, 0, one), 0);
	assert_int_equal(p->samples[0].nlocs, 2);
	assert_int_equal(p->nr_locations, 2);
	l = &p->locations[0];
	assert_int_equal(l->address, 0x401234);
	assert_int_equal(l->mapping, 1);
	assert_int_equal(l->nlines, 3);
	assert_string_equal(fn_name(p, p->lines[l->line_off + 0].function), "inner");
	assert_int_equal(p->lines[l->line_off + 0].line, 1);
	assert_string_equal(fn_name(p, p->lines[l->line_off + 1].function), "middle");
	assert_string_equal(fn_name(p, p->lines[l->line_off + 2].function), "outer");
	assert_int_equal(p->lines[l->line_off + 2].line, 3);
	assert_true(p->maps[0].inline_frames);
	assert_int_equal(p->maps[0].nlocs, 2);
	assert_int_equal(p->maps[0].nlocs_fn, 2);

	/* Without the chain, "outer" at that address is another location. */
	assert_int_equal(taproot_profile_add(p, f + 2, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 3);
	assert_int_equal(p->nr_samples, 2);

	/* Malformed chains. */
	f[3].inlined = true;
	assert_int_equal(taproot_profile_add(p, f, 4, NULL, 0, one), -EINVAL);
	f[3].inlined = false;
	f[1].function = NULL;
	assert_int_equal(taproot_profile_add(p, f, 4, NULL, 0, one), -EINVAL);
	f[1].function = "middle";
	f[2].function = "";
	assert_int_equal(taproot_profile_add(p, f, 4, NULL, 0, one), -EINVAL);
	assert_int_equal(p->nr_samples, 2);
	assert_int_equal(p->adds, 2);
	taproot_profile_free(p);
}

static void kernel_and_marker_frames(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame f[] = {
		{ .function = "schedule", .address = 0xffffffff81003000, .is_kernel = true },
		{ .function = "do_syscall_64", .address = 0xffffffff81001000, .is_kernel = true },
		{ .function = "[unknown]" },
		{ .function = "--" },
		{ .address = 0x401000, .mapping_path = "/usr/bin/app",
		  .mapping_start = 0x400000, .mapping_limit = 0x500000 },
		{ .function = "ext4_readdir", .address = 0xffffffffc0100000,
		  .is_kernel = true, .mapping_path = "[ext4]" },
	};
	const struct tp_location *l = p->locations;

	assert_int_equal(taproot_profile_add(p, f, 6, NULL, 0, one), 0);
	l = p->locations;
	assert_int_equal(p->nr_locations, 6);
	assert_int_equal(p->nr_maps, 3);
	assert_string_equal(tp_profile_str(p, p->maps[0].file), "[kernel.kallsyms]");
	assert_int_equal(l[0].mapping, 1);
	assert_int_equal(l[1].mapping, 1);
	assert_int_equal(p->maps[0].nlocs, 2);
	/* Markers: a function, no mapping, no address. */
	assert_int_equal(l[2].mapping, 0);
	assert_int_equal(l[2].address, 0);
	assert_int_equal(l[2].nlines, 1);
	assert_string_equal(fn_name(p, p->lines[l[2].line_off].function), "[unknown]");
	assert_string_equal(fn_name(p, p->lines[l[3].line_off].function), "--");
	/* Unsymbolized: an address, no line, and its mapping says so. */
	assert_int_equal(l[4].nlines, 0);
	assert_int_equal(l[4].mapping, 2);
	assert_int_equal(p->maps[1].nlocs, 1);
	assert_int_equal(p->maps[1].nlocs_fn, 0);
	/* A module keeps its own name. */
	assert_string_equal(tp_profile_str(p, p->maps[2].file), "[ext4]");
	/* A function with no file and no line: counted as such. */
	assert_int_equal(p->maps[0].nlines_file, 0);
	assert_int_equal(p->maps[0].nlines_lineno, 0);
	taproot_profile_free(p);
}

static void cap_folds_new_stacks(void **state)
{
	struct taproot_profile *p = new_cpu(2);
	struct taproot_profile_frame f[] = { UFRAME("a", 0x401000), UFRAME("main", 0x402000) };
	struct taproot_profile_label l = TAPROOT_LABEL_NUM("pid", 1);
	struct taproot_profile_stats st, st2;
	const struct tp_location *tl;

	assert_int_equal(taproot_profile_add(p, f, 2, &l, 1, one), 0);
	f[0].function = "b";
	f[0].address = 0x401100;
	assert_int_equal(taproot_profile_add(p, f, 2, &l, 1, one), 0);
	taproot_profile_stats(p, &st);
	assert_int_equal(st.stacks, 2);

	/* Full: new frames, new labels, new combinations are folded. */
	f[0].function = "c";
	f[0].address = 0x401200;
	assert_int_equal(taproot_profile_add(p, f, 2, &l, 1, one), 0);
	l.num = 2;
	f[0].function = "a";
	f[0].address = 0x401000;
	assert_int_equal(taproot_profile_add(p, f, 2, &l, 1, one), 0);
	assert_int_equal(taproot_profile_add(p, f + 1, 1, NULL, 0, one), 0);
	taproot_profile_stats(p, &st2);
	assert_int_equal(st2.stacks, 2);
	assert_int_equal(st2.folded, 3);
	assert_int_equal(st2.adds, 5);
	assert_int_equal(p->trunc_values[0], 3);
	assert_int_equal(p->trunc_values[1], 30000000);
	/* Only the marker was added: no frame of a folded sample is kept. */
	assert_int_equal(st2.locations, st.locations + 1);
	assert_int_equal(st2.functions, st.functions + 1);
	tl = &p->locations[p->trunc_loc - 1];
	assert_int_equal(tl->mapping, 0);
	assert_string_equal(fn_name(p, p->lines[tl->line_off].function), TP_TRUNCATED_FRAME);
	for (size_t i = 0; i < p->nr_strs; i++)
		assert_string_not_equal(tp_profile_str(p, (uint32_t)i), "c");

	/* Known stacks still merge. */
	l.num = 1;
	assert_int_equal(taproot_profile_add(p, f, 2, &l, 1, one), 0);
	assert_int_equal(p->values[0], 2);
	taproot_profile_stats(p, &st2);
	assert_int_equal(st2.folded, 3);

	/* Memory stays bounded through many folded stacks. */
	for (uint64_t i = 0; i < 10000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "fn%llu", (unsigned long long)i);
		f[0].function = name;
		f[0].address = 0x410000 + i;
		assert_int_equal(taproot_profile_add(p, f, 2, &l, 1, one), 0);
	}
	taproot_profile_stats(p, &st);
	assert_int_equal(st.folded, 10003);
	assert_int_equal(st.bytes, st2.bytes);
	taproot_profile_free(p);
}

static void reset_starts_over(void **state)
{
	struct taproot_profile *p = new_cpu(1);
	struct taproot_profile_frame f[] = { UFRAME("a", 0x401000), UFRAME("main", 0x402000) };
	struct taproot_profile_stats st;

	taproot_profile_set_time(p, 1000, 2000);
	assert_int_equal(p->time_nanos, 1000);
	assert_int_equal(p->duration_nanos, 2000);
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(taproot_profile_add(p, f, 1, NULL, 0, one), 0);
	taproot_profile_stats(p, &st);
	assert_int_equal(st.folded, 1);

	taproot_profile_reset(p, 5000);
	taproot_profile_stats(p, &st);
	assert_int_equal(p->time_nanos, 5000);
	assert_int_equal(p->duration_nanos, 0);
	assert_int_equal(st.adds, 0);
	assert_int_equal(st.folded, 0);
	assert_int_equal(st.stacks, 0);
	assert_int_equal(st.locations, 0);
	assert_int_equal(st.functions, 0);
	assert_int_equal(st.mappings, 0);
	assert_int_equal(st.strings, 5);
	assert_int_equal(p->trunc_loc, 0);
	assert_int_equal(p->trunc_values[0], 0);
	assert_string_equal(tp_profile_str(p, p->sample_type[1][0]), "cpu");

	/* IDs restart at 1; the desc's strings are found, not added again. */
	f[0].function = "cpu";
	assert_int_equal(taproot_profile_add(p, f + 0, 1, NULL, 0, one), 0);
	assert_int_equal(p->locs[0], 1);
	assert_int_equal(p->lines[0].function, 1);
	assert_int_equal(p->funcs[0].name, p->sample_type[1][0]);
	assert_int_equal(p->maps[0].nlocs, 1);
	taproot_profile_free(p);
}

static void many_stacks_found_again(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	struct taproot_profile_frame f[3] = { UFRAME("x", 0), UFRAME("y", 0), UFRAME("main", 0x402000) };
	struct taproot_profile_label l = TAPROOT_LABEL_NUM("tid", 0);
	struct taproot_profile_stats st, st2;
	size_t mem1, mem2;

	for (int round = 0; round < 3; round++)
		for (uint64_t i = 0; i < 20000; i++) {
			f[0].address = 0x401000 + i % 200;
			f[1].address = 0x408000 + i / 200;
			l.num = (int64_t)(i % 7);
			assert_int_equal(taproot_profile_add(p, f, 3, &l, 1, one), 0);
			if (round == 0 && i == 19999) {
				taproot_profile_stats(p, &st);
				mem1 = mallinfo2().uordblks;
			}
		}
	mem2 = mallinfo2().uordblks;
	taproot_profile_stats(p, &st2);
	assert_int_equal(st.stacks, 20000);
	assert_int_equal(st2.stacks, 20000);
	assert_int_equal(st2.adds, 60000);
	assert_int_equal(st2.bytes, st.bytes);
	/* Rounds 2 and 3 found every stack: not one allocation. */
	assert_int_equal(mem2, mem1);
	for (size_t i = 0; i < st2.stacks; i++)
		assert_int_equal(p->values[i * 2], 3);
	/* 200 leaves + 100 callers + main. */
	assert_int_equal(st2.locations, 301);
	assert_int_equal(st2.functions, 3);
	taproot_profile_free(p);
}

/* Strings are borrowed per call: a buffer reused with new text is new. */
static void reused_buffer_is_new_string(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	char name[16] = "first";
	struct taproot_profile_frame f[] = { UFRAME(name, 0x401000),
					     UFRAME("main", 0x402000) };

	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	strcpy(name, "second");
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_funcs, 3);
	assert_int_equal(p->nr_samples, 2);
	assert_string_equal(fn_name(p, 1), "first");
	assert_string_equal(fn_name(p, 3), "second");
	/* Equal text at another address is the same string. */
	f[0].function = "first";
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_funcs, 3);
	assert_int_equal(p->nr_samples, 2);
	assert_int_equal(p->values[0], 2);
	taproot_profile_free(p);
}

/*
 * A frame's key stands for its location until taproot_profile_forget_keys()
 * (or a reset): a hit reuses the location without looking at the strings;
 * after forgetting, the same key with other frames is another location.
 */
static void keyed_locations_until_forgotten(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	static const int key_a, key_b;
	struct taproot_profile_frame f[] = { UFRAME("inner", 0x401000),
					     UFRAME("main", 0x402000) };

	f[0].key = &key_a;
	f[1].key = &key_b;
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 2);
	/* The contract: same key, same frames; the memo answers. */
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 2);
	assert_int_equal(p->nr_samples, 1);
	assert_int_equal(p->values[0], 2);
	/* Forgotten: key_a now stands for another frame. */
	taproot_profile_forget_keys(p);
	f[0].function = "other";
	f[0].address = 0x403000;
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 3);
	assert_int_equal(p->nr_samples, 2);
	assert_string_equal(fn_name(p, 3), "other");
	/* A reset forgets too. */
	taproot_profile_reset(p, 0);
	f[0].function = "third";
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 2);
	assert_string_equal(fn_name(p, 1), "third");
	taproot_profile_free(p);
}

/*
 * A JIT's frame added before its perf map named it: the location becomes
 * the named one, under the named frame's mapping, with every sample of
 * it; the named frame added later finds it; the unnamed frame added again
 * is a location of its own; a second naming finds nothing to name.
 */
static void unnamed_location_named_late(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	struct taproot_profile_frame jit = {
		.mapping_path = "[anon]", .mapping_start = 0x7f0000000000,
		.mapping_limit = 0x7f0000100000, .address = 0x7f0000001234,
	};
	struct taproot_profile_frame named = jit, f[2] = { jit, UFRAME("main", 0x402000) };
	struct taproot_profile_frame other = jit;
	const struct tp_location *l;
	uint32_t anon_map;

	named.function = "LJit;::hot";
	named.mapping_path = "[perf-42.map]";
	other.address = 0x7f0000005678;
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	f[0] = other;
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 3);
	anon_map = p->locations[0].mapping;
	assert_int_equal(p->maps[anon_map - 1].nlocs, 2);
	assert_int_equal(p->maps[anon_map - 1].nlocs_fn, 0);

	assert_int_equal(taproot_profile_name_location(p, &jit, &named, 1), 1);
	l = &p->locations[0];
	assert_int_equal(l->nlines, 1);
	assert_string_equal(fn_name(p, p->lines[l->line_off].function), "LJit;::hot");
	assert_string_equal(tp_profile_str(p, p->maps[l->mapping - 1].file), "[perf-42.map]");
	assert_int_equal(p->maps[anon_map - 1].nlocs, 1);
	assert_int_equal(p->maps[l->mapping - 1].nlocs_fn, 1);
	/* The other address is still unnamed; the name is not given twice. */
	assert_int_equal(p->locations[2].nlines, 0);
	assert_int_equal(taproot_profile_name_location(p, &jit, &named, 1), 0);

	/* The named frame, added now, is that location: one sample, count 2. */
	f[0] = named;
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 3);
	assert_int_equal(p->nr_samples, 2);
	assert_int_equal(p->values[0], 2);
	/* The unnamed frame again: a location of its own. */
	f[0] = jit;
	assert_int_equal(taproot_profile_add(p, f, 2, NULL, 0, one), 0);
	assert_int_equal(p->nr_locations, 4);
	assert_int_equal(p->nr_samples, 3);

	/* Nothing of that mapping: nothing named; a named frame refused. */
	jit.mapping_path = "[anon:other]";
	assert_int_equal(taproot_profile_name_location(p, &jit, &named, 1), 0);
	assert_int_equal(taproot_profile_name_location(p, &named, &named, 1), -EINVAL);
	taproot_profile_free(p);
}

static void bad_arguments_refused(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame f[] = { UFRAME("a", 0x401000) };
	const struct taproot_profile_label nokey = { .str = "x" };

	assert_int_equal(taproot_profile_add(p, f, 1, NULL, 0, NULL), -EINVAL);
	assert_int_equal(taproot_profile_add(p, NULL, 1, NULL, 0, one), -EINVAL);
	assert_int_equal(taproot_profile_add(p, f, 1, &nokey, 1, one), -EINVAL);
	assert_int_equal(p->adds, 0);
	assert_int_equal(p->nr_strs, 5);
	/* No frames at all is a sample too (pprof takes it). */
	assert_int_equal(taproot_profile_add(p, NULL, 0, NULL, 0, one), 0);
	assert_int_equal(p->nr_samples, 1);
	assert_int_equal(p->samples[0].nlocs, 0);
	taproot_profile_free(p);
	taproot_profile_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(desc_cpu_filled),
		cmocka_unit_test(desc_refused),
		cmocka_unit_test(same_stack_merged),
		cmocka_unit_test(labels_and_stacks_distinguish),
		cmocka_unit_test(inline_chain_one_location),
		cmocka_unit_test(kernel_and_marker_frames),
		cmocka_unit_test(cap_folds_new_stacks),
		cmocka_unit_test(reset_starts_over),
		cmocka_unit_test(many_stacks_found_again),
		cmocka_unit_test(reused_buffer_is_new_string),
		cmocka_unit_test(keyed_locations_until_forgotten),
		cmocka_unit_test(unnamed_location_named_late),
		cmocka_unit_test(bad_arguments_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
