// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof writer, checked by the real clients: a profile with known
 * stacks, labels and values (inline chains, kernel frames, an off-wake
 * separator, a marker, an unsymbolized frame, stacks that merge, a full
 * stack table) is written, then
 *  - decoded by protoc --decode=perftools.profiles.Profile with the
 *    profile.proto of Debian's golang-github-google-pprof-dev, and checked
 *    field by field;
 *  - read by the real pprof tool (-raw, -traces, -top, -tags), found
 *    through $TAPROOT_PPROF (make unit builds it and sets it).
 * Both tools are required: a missing one fails the test, it is not
 * skipped. Then the atomic write: errors leave no partial file, a full
 * file system (a tiny tmpfs, mounted when running as root) keeps the old
 * profile intact.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "profile/profile-private.h"
#include "pprofcheck.h"

/* ----------------------------------------------------------- helpers */

/* Names in @dir other than "." and ".."; "" when none, else "a b ". */
static char *dir_names(const char *dir)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			fprintf(f, "%s ", e->d_name);
	closedir(d);
	fclose(f);
	return s;
}

/* ------------------------------------------------------ decoded profiles */

/*
 * Sample @i as "v0 v1 | fn;fn;... | key=val,..." with each location's
 * lines innermost first, locations leaf first, labels in order.
 */
static char *sample_text(const struct decoded *d, size_t i)
{
	const struct tn *s = tn_get(&d->root, "sample", i);
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);
	const struct tn *k;

	assert_non_null(s);
	for (size_t j = 0; (k = tn_get(s, "value", j)); j++)
		fprintf(f, "%s%s", j ? " " : "", k->val);
	fprintf(f, " |");
	for (size_t j = 0; (k = tn_get(s, "location_id", j)); j++) {
		const struct tn *loc = dent(d, "location", strtoull(k->val, NULL, 10));
		const struct tn *ln;

		if (!tn_get(loc, "line", 0))
			fprintf(f, "%s0x%" PRIx64, j ? ";" : " ",
				tn_u64(loc, "address", 0));
		for (size_t m = 0; (ln = tn_get(loc, "line", m)); m++) {
			const struct tn *fn = dent(d, "function", tn_u64(ln, "function_id", 0));

			fprintf(f, "%s%s", j || m ? ";" : " ",
				dstr(d, tn_u64(fn, "name", 0)));
		}
	}
	fprintf(f, " |");
	for (size_t j = 0; (k = tn_get(s, "label", j)); j++) {
		fprintf(f, "%s%s=", j ? "," : " ", dstr(d, tn_u64(k, "key", 0)));
		if (tn_get(k, "str", 0))
			fprintf(f, "%s", dstr(d, tn_u64(k, "str", 0)));
		else
			fprintf(f, "%" PRId64, (int64_t)tn_u64(k, "num", 0));
		if (tn_get(k, "num_unit", 0))
			fprintf(f, "[%s]", dstr(d, tn_u64(k, "num_unit", 0)));
	}
	fclose(f);
	return t;
}

/* ----------------------------------------------------------- fixture */

static const char *const expected_samples[] = {
	"4 40000000 | copy_user_generic;__x64_sys_read;inner;outer;main"
	" | comm=app,thread_comm=worker,state=R,pid=42,tid=43,cpu=3",
	"1 10000000 | copy_user_generic;__x64_sys_read;inner;outer;main"
	" | comm=app,thread_comm=worker,state=R,pid=42,tid=44,cpu=3",
	"1 10000000 | try_to_wake_up;waker_fn;--;schedule;blocked_fn"
	" | comm=app,wait=1500[nanoseconds]",
	"2 20000000 | [unknown] | comm=ghost",
	"1 10000000 | 0x7f0000001230;main |",
	"3 30000000 | [truncated: stack table full] |",
};

/* Write the fixture to DIR/cpu.pb.gz; the caller frees dir and path. */
static void write_fixture(struct taproot_profile **pp, char **dir, char **path)
{
	struct stat sb;
	char *names;

	*pp = fixture();
	*dir = tmpdir();
	assert_true(asprintf(path, "%s/cpu.pb.gz", *dir) > 0);
	assert_int_equal(taproot_pprof_write_file(*pp, *path), 0);
	assert_int_equal(stat(*path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	names = dir_names(*dir);
	assert_string_equal(names, "cpu.pb.gz ");
	free(names);
}

/* The mapping whose filename is @file. */
static const struct tn *mapping_named(const struct decoded *d, const char *file)
{
	const struct tn *m;

	for (size_t i = 0; (m = tn_get(&d->root, "mapping", i)); i++)
		if (!strcmp(dstr(d, tn_u64(m, "filename", 0)), file))
			return m;
	fail_msg("no mapping %s", file);
	return NULL;
}

/* The location of sample @s's @j-th location_id. */
static const struct tn *sample_loc(const struct decoded *d, size_t s, size_t j)
{
	return dent(d, "location",
		    tn_u64(tn_get(&d->root, "sample", s), "location_id", j));
}

static void protoc_round_trip(void **state)
{
	struct taproot_profile *p;
	struct decoded d;
	char *dir, *path;
	void *file, *raw, *raw2, *gz, *plain;
	size_t file_len, raw_len, raw2_len, gz_len, plain_len;
	const struct tn *n, *m, *l;

	need_protoc();
	write_fixture(&p, &dir, &path);

	/* The file is one gzip member of exactly what encode() gives. */
	file = read_file(path, &file_len);
	assert_int_equal(taproot_pprof_encode(p, false, &plain, &plain_len), 0);
	assert_int_equal(taproot_pprof_encode(p, true, &gz, &gz_len), 0);
	raw = gunzip(file, file_len, &raw_len);
	raw2 = gunzip(gz, gz_len, &raw2_len);
	assert_int_equal(raw_len, plain_len);
	assert_memory_equal(raw, plain, plain_len);
	assert_int_equal(raw2_len, plain_len);
	assert_memory_equal(raw2, plain, plain_len);
	assert_true(file_len < plain_len);

	decode(&d, path);

	/* Header fields. */
	assert_true(d.nstr > 1);
	assert_string_equal(d.str[0], "");
	assert_int_equal(tn_count(&d.root, "sample_type"), 2);
	n = tn_get(&d.root, "sample_type", 0);
	assert_string_equal(dstr(&d, tn_u64(n, "type", 0)), "samples");
	assert_string_equal(dstr(&d, tn_u64(n, "unit", 0)), "count");
	n = tn_get(&d.root, "sample_type", 1);
	assert_string_equal(dstr(&d, tn_u64(n, "type", 0)), "cpu");
	assert_string_equal(dstr(&d, tn_u64(n, "unit", 0)), "nanoseconds");
	n = tn_get(&d.root, "period_type", 0);
	assert_non_null(n);
	assert_string_equal(dstr(&d, tn_u64(n, "type", 0)), "cpu");
	assert_string_equal(dstr(&d, tn_u64(n, "unit", 0)), "nanoseconds");
	assert_int_equal(tn_u64(&d.root, "period", 0), 10000000);
	assert_int_equal(tn_u64(&d.root, "time_nanos", 0), TIME_NS);
	assert_int_equal(tn_u64(&d.root, "duration_nanos", 0), DURATION_NS);
	assert_string_equal(dstr(&d, tn_u64(&d.root, "default_sample_type", 0)), "cpu");
	assert_int_equal(tn_count(&d.root, "comment"), 2);
	assert_string_equal(dstr(&d, tn_u64(&d.root, "comment", 0)), "taproot test fixture");
	assert_non_null(strstr(dstr(&d, tn_u64(&d.root, "comment", 1)),
			       "stack table was full (5 entries): 2 samples went to "
			       "[truncated: stack table full]"));
	assert_int_equal(tn_count(&d.root, "drop_frames") + tn_count(&d.root, "keep_frames"), 0);

	/* IDs sequential from 1 (dent() checks each). */
	assert_int_equal(tn_count(&d.root, "mapping"), 3);
	assert_int_equal(tn_count(&d.root, "location"), 12);
	assert_int_equal(tn_count(&d.root, "function"), 12);
	for (uint64_t i = 1; i <= 3; i++)
		dent(&d, "mapping", i);
	for (uint64_t i = 1; i <= 12; i++) {
		l = dent(&d, "location", i);
		if (tn_u64(l, "mapping_id", 0))
			dent(&d, "mapping", tn_u64(l, "mapping_id", 0));
		for (size_t j = 0; (n = tn_get(l, "line", j)); j++)
			dent(&d, "function", tn_u64(n, "function_id", 0));
		/* Each function's system_name is its name. */
		n = dent(&d, "function", i);
		assert_int_equal(tn_u64(n, "system_name", 0), tn_u64(n, "name", 0));
	}
	/* Strings are not repeated. */
	for (size_t i = 0; i < d.nstr; i++)
		for (size_t j = i + 1; j < d.nstr; j++)
			assert_string_not_equal(d.str[i], d.str[j]);

	/* Samples: stacks leaf first, merged values, labels. */
	assert_int_equal(tn_count(&d.root, "sample"), NR(expected_samples));
	for (size_t i = 0; i < NR(expected_samples); i++) {
		char *t = sample_text(&d, i);

		assert_string_equal(t, expected_samples[i]);
		free(t);
	}

	/* The inline chain is one location: lines innermost first. */
	l = sample_loc(&d, 0, 2);
	assert_int_equal(tn_count(l, "line"), 2);
	assert_int_equal(tn_u64(l, "address", 0), 0x401234);
	assert_int_equal(tn_u64(tn_get(l, "line", 0), "line", 0), 11);
	assert_int_equal(tn_u64(tn_get(l, "line", 1), "line", 0), 22);
	n = dent(&d, "function", tn_u64(tn_get(l, "line", 0), "function_id", 0));
	assert_string_equal(dstr(&d, tn_u64(n, "filename", 0)), "app.c");
	m = dent(&d, "mapping", tn_u64(l, "mapping_id", 0));
	assert_ptr_equal(m, mapping_named(&d, "/usr/bin/app"));
	assert_int_equal(tn_u64(m, "memory_start", 0), 0x400000);
	assert_int_equal(tn_u64(m, "memory_limit", 0), 0x500000);
	assert_int_equal(tn_u64(m, "file_offset", 0), 0);
	assert_string_equal(dstr(&d, tn_u64(m, "build_id", 0)), "deadbeef");
	assert_int_equal(tn_u64(m, "has_functions", 0), 1);
	assert_int_equal(tn_u64(m, "has_filenames", 0), 1);
	assert_int_equal(tn_u64(m, "has_line_numbers", 0), 1);
	assert_int_equal(tn_u64(m, "has_inline_frames", 0), 1);

	/* Kernel frames: [kernel.kallsyms], names but no files or lines. */
	l = sample_loc(&d, 0, 0);
	assert_int_equal(tn_u64(l, "address", 0), 0xffffffff81400000);
	m = dent(&d, "mapping", tn_u64(l, "mapping_id", 0));
	assert_ptr_equal(m, mapping_named(&d, "[kernel.kallsyms]"));
	assert_int_equal(tn_u64(m, "has_functions", 0), 1);
	assert_int_equal(tn_u64(m, "has_filenames", 0), 0);
	assert_int_equal(tn_u64(m, "has_line_numbers", 0), 0);
	assert_int_equal(tn_u64(m, "has_inline_frames", 0), 0);
	assert_int_equal(tn_count(m, "build_id"), 0);

	/* Markers ("--", "[unknown]", the truncated sample): no mapping, no address. */
	for (size_t i = 0; i < 3; i++) {
		static const size_t at[3][2] = { { 2, 2 }, { 3, 0 }, { 5, 0 } };

		l = sample_loc(&d, at[i][0], at[i][1]);
		assert_int_equal(tn_count(l, "mapping_id"), 0);
		assert_int_equal(tn_count(l, "address"), 0);
		assert_int_equal(tn_count(l, "line"), 1);
		assert_int_equal(tn_u64(tn_get(l, "line", 0), "line", 0), 0);
	}

	/* The unsymbolized library frame: its mapping says it has no functions. */
	l = sample_loc(&d, 4, 0);
	assert_int_equal(tn_count(l, "line"), 0);
	m = dent(&d, "mapping", tn_u64(l, "mapping_id", 0));
	assert_ptr_equal(m, mapping_named(&d, "/usr/lib/libfoo.so.1"));
	assert_int_equal(tn_u64(m, "file_offset", 0), 0x1000);
	assert_int_equal(tn_u64(m, "memory_start", 0), 0x7f0000000000);
	assert_int_equal(tn_u64(m, "has_functions", 0), 0);
	assert_int_equal(tn_u64(m, "has_filenames", 0), 0);
	/* "main" at the same address in two stacks is one location. */
	assert_int_equal(tn_u64(tn_get(&d.root, "sample", 4), "location_id", 1),
			 tn_u64(tn_get(&d.root, "sample", 0), "location_id", 3));

	decoded_free(&d);
	free(file);
	free(raw);
	free(raw2);
	free(gz);
	free(plain);
	rm_tree(dir);
	free(dir);
	free(path);
	taproot_profile_free(p);
}

/* An empty profile (no samples) is valid too, and a reset one is empty. */
static void protoc_empty_and_reset(void **state)
{
	struct taproot_profile *p = fixture();
	struct decoded d;
	char *dir = tmpdir(), *path, *t;

	need_protoc();
	assert_true(asprintf(&path, "%s/empty.pb.gz", dir) > 0);
	taproot_profile_reset(p, TIME_NS + DURATION_NS);
	assert_int_equal(taproot_pprof_write_file(p, path), 0);
	decode(&d, path);
	assert_string_equal(d.str[0], "");
	assert_int_equal(tn_count(&d.root, "sample"), 0);
	assert_int_equal(tn_count(&d.root, "location"), 0);
	assert_int_equal(tn_count(&d.root, "mapping"), 0);
	assert_int_equal(tn_count(&d.root, "sample_type"), 2);
	assert_int_equal(tn_u64(&d.root, "time_nanos", 0), TIME_NS + DURATION_NS);
	assert_int_equal(tn_count(&d.root, "duration_nanos"), 0);
	/* Only the desc's comment: nothing was folded since the reset. */
	assert_int_equal(tn_count(&d.root, "comment"), 1);
	decoded_free(&d);

	/* The next interval: IDs from 1 again. */
	ADD(s3, l_s3, 1, MS);
	taproot_profile_set_time(p, TIME_NS + DURATION_NS, DURATION_NS);
	assert_int_equal(taproot_pprof_write_file(p, path), 0);
	decode(&d, path);
	assert_int_equal(tn_count(&d.root, "sample"), 1);
	t = sample_text(&d, 0);
	assert_string_equal(t, expected_samples[2]);
	free(t);
	dent(&d, "location", 1);
	dent(&d, "mapping", 1);
	assert_int_equal(tn_u64(&d.root, "duration_nanos", 0), DURATION_NS);
	decoded_free(&d);

	rm_tree(dir);
	free(dir);
	free(path);
	taproot_profile_free(p);
}

/* ------------------------------------------------------- the pprof tool */

/* In pprof -top output @out, the row of @name: its flat and cum columns. */
static void top_row(const char *out, const char *name, const char *flat,
		    const char *cum)
{
	for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		char f[32], fp[32], sp[32], c[32], cp[32];
		int pos = 0;
		size_t len = strcspn(s, "\n");

		if (sscanf(s, "%31s %31s %31s %31s %31s %n", f, fp, sp, c, cp, &pos) != 5 ||
		    !pos || len < (size_t)pos || len - (size_t)pos != strlen(name) ||
		    strncmp(s + pos, name, strlen(name)))
			continue;
		assert_string_equal(f, flat);
		assert_string_equal(c, cum);
		return;
	}
	fail_msg("pprof -top: no row for %s in\n%s", name, out);
}

static char *pprof(const char *args, const char *path)
{
	int st;
	/* TZ: -raw prints the time in local time. */
	char *out = run(&st, "TZ=UTC '%s' %s '%s' 2>&1", pprof_tool(), args, path);

	assert_int_equal(st, 0);
	return out;
}

#define assert_contains(hay, needle) do {				\
	if (!strstr((hay), (needle)))					\
		fail_msg("expected\n%s\nin\n%s", (needle), (hay));	\
} while (0)
#define assert_not_contains(hay, needle) do {				\
	if (strstr((hay), (needle)))					\
		fail_msg("did not expect\n%s\nin\n%s", (needle), (hay)); \
} while (0)

static void pprof_tool_reads(void **state)
{
	struct taproot_profile *p;
	char *dir, *path, *out;

	pprof_tool();
	write_fixture(&p, &dir, &path);

	/* -raw: the profile as pprof parsed it. */
	out = pprof("-raw -symbolize=none", path);
	assert_contains(out, "Comment: taproot test fixture\n"
			"Comment: taproot: the stack table was full (5 entries): "
			"2 samples went to [truncated: stack table full]\n"
			"PeriodType: cpu nanoseconds\n"
			"Period: 10000000\n"
			"Time: 2023-11-14 22:13:20.123456789 +0000 UTC\n"
			"Duration: 10s\n"
			"Samples:\n"
			"samples/count cpu/nanoseconds[dflt]\n"
			"          4   40000000: 1 2 3 4 \n"
			"                comm:[app] state:[R] thread_comm:[worker]\n"
			"                cpu:[3] pid:[42] tid:[43]\n"
			"          1   10000000: 1 2 3 4 \n"
			"                comm:[app] state:[R] thread_comm:[worker]\n"
			"                cpu:[3] pid:[42] tid:[44]\n"
			"          1   10000000: 5 6 7 8 9 \n"
			"                comm:[app]\n"
			"                wait:[1500 nanoseconds]\n"
			"          2   20000000: 10 \n"
			"                comm:[ghost]\n"
			"          1   10000000: 11 4 \n"
			"          3   30000000: 12 \n"
			"Locations\n"
			"     1: 0xffffffff81400000 M=1 copy_user_generic :0 s=0\n"
			"     2: 0xffffffff81200000 M=1 __x64_sys_read :0 s=0\n"
			"     3: 0x401234 M=2 inner app.c:11 s=0\n"
			"             outer app.c:22 s=0\n"
			"     4: 0x402000 M=2 main app.c:33 s=0\n");
	assert_contains(out, "     7: 0x0 -- :0 s=0\n");
	assert_contains(out, "    10: 0x0 [unknown] :0 s=0\n");
	assert_contains(out, "    11: 0x7f0000001230 M=3 \n");
	assert_contains(out, "    12: 0x0 [truncated: stack table full] :0 s=0\n"
			"Mappings\n"
			"1: 0x0/0x0/0x0 [kernel.kallsyms]  [FN]\n"
			"2: 0x400000/0x500000/0x0 /usr/bin/app deadbeef [FN][FL][LN][IN]\n"
			"3: 0x7f0000000000/0x7f0000100000/0x1000 /usr/lib/libfoo.so.1  \n");
	free(out);

	/* -traces: each stack, leaf first, with its labels and value. */
	out = pprof("-traces -symbolize=none", path);
	assert_contains(out, "Duration: 10s, Total samples = 120ms");
	assert_contains(out, "-----------+-------------------------------------------------------\n"
			"      comm:  app\n"
			"     state:  R\n"
			"thread_comm:  worker\n"
			"       cpu:  3\n"
			"       pid:  42\n"
			"       tid:  43\n"
			"      40ms   copy_user_generic\n"
			"             __x64_sys_read\n"
			"             inner (inline)\n"
			"             outer\n"
			"             main\n"
			"-----------+");
	assert_contains(out, "       tid:  44\n"
			"      10ms   copy_user_generic\n");
	assert_contains(out, "      comm:  app\n"
			"      wait:  1.50us\n"
			"      10ms   try_to_wake_up\n"
			"             waker_fn\n"
			"             --\n"
			"             schedule\n"
			"             blocked_fn\n"
			"-----------+");
	assert_contains(out, "      comm:  ghost\n"
			"      20ms   [unknown]\n"
			"-----------+");
	assert_contains(out, "-----------+-------------------------------------------------------\n"
			"      30ms   [truncated: stack table full]\n"
			"-----------+");
	free(out);

	/* -top: flat and cum per function, in time and in samples. */
	out = pprof("-top -nodecount=100 -symbolize=none", path);
	assert_contains(out, "Showing nodes accounting for 120ms, 100% of 120ms total");
	top_row(out, "copy_user_generic", "50ms", "50ms");
	top_row(out, "__x64_sys_read", "0", "50ms");
	top_row(out, "inner (inline)", "0", "50ms");
	top_row(out, "main", "0", "60ms");
	top_row(out, "try_to_wake_up", "10ms", "10ms");
	top_row(out, "--", "0", "10ms");
	top_row(out, "blocked_fn", "0", "10ms");
	top_row(out, "[unknown]", "20ms", "20ms");
	top_row(out, "[truncated: stack table full]", "30ms", "30ms");
	free(out);
	out = pprof("-top -nodecount=100 -symbolize=none -sample_index=samples", path);
	top_row(out, "copy_user_generic", "5", "5");
	top_row(out, "main", "0", "6");
	top_row(out, "[truncated: stack table full]", "3", "3");
	free(out);

	/* -tags: label values and their totals. */
	out = pprof("-tags -symbolize=none", path);
	assert_contains(out, " tid: Total 50.0ms\n"
			"      40.0ms (80.00%): 43\n"
			"      10.0ms (20.00%): 44\n");
	assert_contains(out, " comm: Total 80.0ms\n"
			"       60.0ms (75.00%): app\n"
			"       20.0ms (25.00%): ghost\n");
	free(out);

	/* Label filters work on what we wrote. */
	out = pprof("-top -symbolize=none -tagfocus=tid=44", path);
	assert_contains(out, "Showing nodes accounting for 10ms, 8.33% of 120ms total");
	free(out);

	rm_tree(dir);
	free(dir);
	free(path);
	taproot_profile_free(p);
}

/* ------------------------------------------------------- atomic writes */

/* Write @len bytes of @buf to DIR/NAME; the path, malloc'ed. */
/*
 * A part (taproot_pprof_encode_part()): the samples of one label value,
 * with only the table entries they use, renumbered so that every ID is
 * its index + 1 (dent() checks), and read by protoc and by pprof.
 */
static void parts_by_label(void **state)
{
	struct taproot_profile *p = fixture();
	const char *values[4];
	char *dir = tmpdir(), *path, *out, *t;
	struct decoded d;
	void *buf;
	size_t len;

	assert_int_equal(taproot_profile_label_values(p, "comm", values, 4), 2);
	assert_string_equal(values[0], "app");
	assert_string_equal(values[1], "ghost");
	assert_int_equal(taproot_profile_label_values(p, "comm", values, 1), 2);
	assert_int_equal(taproot_profile_label_values(p, "nope", values, 4), 0);
	assert_int_equal(taproot_pprof_encode_part(p, "comm", "nope", true, &buf, &len), 0);
	assert_null(buf);

	/* comm=app: S1 twice (two tids) and S3; not ghost's, S5 or the folded. */
	assert_int_equal(taproot_pprof_encode_part(p, "comm", "app", true, &buf, &len), 3);
	path = write_buf(dir, "app.pb.gz", buf, len);
	free(buf);
	decode(&d, path);
	assert_int_equal(tn_count(&d.root, "sample"), 3);
	for (size_t i = 0; i < 3; i++) {
		t = sample_text(&d, i);
		assert_string_equal(t, expected_samples[i]);
		free(t);
	}
	/* The app mapping and [kernel.kallsyms]: not libfoo's. */
	assert_int_equal(tn_count(&d.root, "mapping"), 2);
	mapping_named(&d, "/usr/bin/app");
	assert_int_equal(tn_count(&d.root, "location"), 4 + 5);
	for (size_t i = 0; i < d.nstr; i++) {
		assert_string_not_equal(d.str[i], "ghost");
		assert_string_not_equal(d.str[i], "[unknown]");
		assert_string_not_equal(d.str[i], "/usr/lib/libfoo.so.1");
	}
	assert_int_equal(tn_u64(&d.root, "time_nanos", 0), TIME_NS);
	decoded_free(&d);
	out = pprof("-raw -symbolize=none", path);
	assert_contains(out, "PeriodType: cpu nanoseconds\n");
	assert_contains(out, "Comment: taproot test fixture\n");
	assert_not_contains(out, "truncated");
	free(out);
	free(path);

	/* Written to a file: the same bytes, mode 0600; nothing for no samples. */
	{
		struct stat sb;
		char *fpath, *names;
		size_t flen;
		void *fbuf, *gz;

		assert_true(asprintf(&fpath, "%s/app-file.pb.gz", dir) > 0);
		assert_int_equal(taproot_pprof_write_part_file(p, "comm", "app", fpath), 3);
		assert_int_equal(stat(fpath, &sb), 0);
		assert_int_equal(sb.st_mode & 07777, 0600);
		assert_int_equal(taproot_pprof_encode_part(p, "comm", "app", false, &buf, &len), 3);
		gz = read_file(fpath, &flen);
		fbuf = gunzip(gz, flen, &flen);
		free(gz);
		assert_int_equal(flen, len);
		assert_memory_equal(fbuf, buf, len);
		free(fbuf);
		free(buf);
		unlink(fpath);
		free(fpath);
		assert_true(asprintf(&fpath, "%s/none.pb.gz", dir) > 0);
		assert_int_equal(taproot_pprof_write_part_file(p, "comm", "nope", fpath), 0);
		free(fpath);
		names = dir_names(dir);
		assert_string_equal(names, "app.pb.gz ");
		free(names);
	}

	/* comm=ghost: one sample, one location, no mapping. */
	assert_int_equal(taproot_pprof_encode_part(p, "comm", "ghost", true, &buf, &len), 1);
	path = write_buf(dir, "ghost.pb.gz", buf, len);
	free(buf);
	decode(&d, path);
	t = sample_text(&d, 0);
	assert_string_equal(t, expected_samples[3]);
	free(t);
	assert_int_equal(tn_count(&d.root, "location"), 1);
	assert_int_equal(tn_count(&d.root, "mapping"), 0);
	decoded_free(&d);
	free(path);

	rm_tree(dir);
	free(dir);
	taproot_profile_free(p);
}

static void write_errors_leave_nothing(void **state)
{
	struct taproot_profile *p = fixture();
	char *dir = tmpdir(), *path, *names, cwd[4096];
	struct stat sb;
	int fd;

	/* A device that is always full. */
	fd = open("/dev/full", O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(taproot_pprof_write_fd(p, fd), -ENOSPC);
	close(fd);

	/* A directory that does not exist: nothing created anywhere. */
	assert_true(asprintf(&path, "%s/nodir/cpu.pb.gz", dir) > 0);
	assert_int_equal(taproot_pprof_write_file(p, path), -ENOENT);
	assert_non_null(strstr(taproot_errmsg(-ENOENT), "nodir/cpu.pb.gz.tmp."));
	free(path);

	/* A directory in the way: the rename fails, the temp file goes. */
	assert_true(asprintf(&path, "%s/adir", dir) > 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(taproot_pprof_write_file(p, path), -EISDIR);
	names = dir_names(dir);
	assert_string_equal(names, "adir ");
	free(names);
	free(path);

	/* Overwriting: a complete new file, 0600 whatever the old one was. */
	assert_true(asprintf(&path, "%s/cpu.pb.gz", dir) > 0);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "old", 3), 3);
	close(fd);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(taproot_pprof_write_file(p, path), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_true(sb.st_size > 3);
	free(path);

	/* A path without a directory: the current one. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(taproot_pprof_write_file(p, "rel.pb.gz"), 0);
	assert_int_equal(chdir(cwd), 0);
	names = dir_names(dir);
	assert_non_null(strstr(names, "rel.pb.gz "));
	assert_null(strstr(names, ".tmp."));
	free(names);

	rm_tree(dir);
	free(dir);
	taproot_profile_free(p);
}

/* A profile too big for 64 KiB once gzipped: random function names. */
static struct taproot_profile *big_profile(void)
{
	struct taproot_profile_desc d;
	struct taproot_profile *p;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	const int64_t v[2] = { 1, MS };

	taproot_profile_desc_cpu(&d, 100);
	assert_int_equal(taproot_profile_new(&d, &p), 0);
	for (int i = 0; i < 4000; i++) {
		char name[72];
		struct taproot_profile_frame f = { .function = name };

		for (int j = 0; j < 64; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			name[j] = "0123456789abcdefghijklmnopqrstuvwxyz"[x % 36];
		}
		name[64] = '\0';
		assert_int_equal(taproot_profile_add(p, &f, 1, NULL, 0, v), 0);
	}
	return p;
}

/* The tmpfs of the test below, unmounted even when the test fails. */
static char *mounted;

static int unmount_teardown(void **state)
{
	if (mounted) {
		umount2(mounted, MNT_DETACH);
		rmdir(mounted);
		free(mounted);
		mounted = NULL;
	}
	return 0;
}

static void full_filesystem_keeps_old_file(void **state)
{
	struct taproot_profile *small = fixture(), *big = big_profile();
	char *dir, *path, *names;
	void *before, *after;
	size_t before_len, after_len;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIP full_filesystem_keeps_old_file: needs root to mount a tmpfs\n");
		taproot_profile_free(small);
		taproot_profile_free(big);
		skip();
	}
	dir = tmpdir();
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700")) {
		fprintf(stderr, "SKIP full_filesystem_keeps_old_file: mount tmpfs: %s\n",
			strerror(errno));
		rmdir(dir);
		free(dir);
		taproot_profile_free(small);
		taproot_profile_free(big);
		skip();
	}
	mounted = dir;
	assert_true(asprintf(&path, "%s/cpu.pb.gz", dir) > 0);
	assert_int_equal(taproot_pprof_write_file(small, path), 0);
	before = read_file(path, &before_len);

	assert_int_equal(taproot_pprof_write_file(big, path), -ENOSPC);
	assert_non_null(strstr(taproot_errmsg(-ENOSPC), "cpu.pb.gz.tmp."));
	after = read_file(path, &after_len);
	assert_int_equal(after_len, before_len);
	assert_memory_equal(after, before, before_len);
	names = dir_names(dir);
	assert_string_equal(names, "cpu.pb.gz ");
	free(names);

	assert_int_equal(umount2(dir, 0), 0);
	assert_int_equal(rmdir(dir), 0);
	mounted = NULL;
	free(before);
	free(after);
	free(path);
	free(dir);
	taproot_profile_free(small);
	taproot_profile_free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(protoc_round_trip),
		cmocka_unit_test(protoc_empty_and_reset),
		cmocka_unit_test(pprof_tool_reads),
		cmocka_unit_test(parts_by_label),
		cmocka_unit_test(write_errors_leave_nothing),
		cmocka_unit_test_teardown(full_filesystem_keeps_old_file,
					  unmount_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
