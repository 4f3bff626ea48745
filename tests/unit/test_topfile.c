// SPDX-License-Identifier: GPL-2.0
/*
 * The live top's file (ctl/topfile.c): what taprootd writes reads back
 * the same, names with TABs, newlines, backslashes and control bytes
 * included, privately (0600); files that are not such a file, or whose
 * lines are wrong, are refused whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "topfile.h"

static char dir[] = "/tmp/test-topfile-XXXXXX";

static char *path_in_dir(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static void round_trip(void **state)
{
	char g0[] = "web.service", n0[] = "main", g1[] = "a\tb\\c", n1[] = "f\nx\001y";
	char g2[] = "[unknown]", n2[] = "/usr/lib/libc.so.6";
	struct topfile_fn fns[3] = {
		{ .self = 5, .total = 9, .group = g0, .name = n0 },
		{ .self = 4, .total = 4, .group = g1, .name = n1 },
		{ .self = 0, .total = 1, .group = g2, .name = n2 },
	};
	struct topfile t = {
		.host = "node-1", .time_ns = 1700000000123456789ULL, .window_ns = 1000000000,
		.sampling = true, .samples = 9, .other = 1, .fns = fns, .n = 3,
	}, r;
	char *path = topfile_path("/run/taproot/taprootd.json");
	struct stat st;

	(void)state;
	assert_string_equal(path, "/run/taproot/" TOPFILE_NAME);
	free(path);
	path = topfile_path("state.json");
	assert_string_equal(path, TOPFILE_NAME);
	free(path);

	path = path_in_dir(TOPFILE_NAME);
	assert_int_equal(topfile_write(path, &t), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(topfile_read(path, &r), 0);
	assert_string_equal(r.host, "node-1");
	assert_true(r.time_ns == t.time_ns);
	assert_true(r.window_ns == t.window_ns);
	assert_true(r.sampling);
	assert_int_equal(r.samples, 9);
	assert_int_equal(r.other, 1);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.fns[0].self, 5);
	assert_int_equal(r.fns[0].total, 9);
	assert_string_equal(r.fns[0].group, "web.service");
	assert_string_equal(r.fns[1].group, "a\tb\\c");
	/* A control byte other than TAB and newline is written as '?'. */
	assert_string_equal(r.fns[1].name, "f\nx?y");
	assert_string_equal(r.fns[2].name, "/usr/lib/libc.so.6");
	topfile_free(&r);
	assert_null(r.fns);
	unlink(path);
	free(path);
}

/* @text in a file of the test's directory: what topfile_read() says of it. */
static int read_text(const char *text)
{
	char *path = path_in_dir("bad.tsv");
	struct topfile r;
	FILE *f = fopen(path, "w");
	int err;

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	err = topfile_read(path, &r);
	if (err)
		assert_null(r.fns);
	else
		topfile_free(&r);
	unlink(path);
	free(path);
	return err;
}

#define HEAD "taproot-top 1\nhost\th\ntime\t5\nwindow\t1\nsampling\t1\nsamples\t3\nother\t0\n"

static void refuses_what_is_wrong(void **state)
{
	char *path = path_in_dir("none");
	struct topfile r;

	(void)state;
	assert_int_equal(topfile_read(path, &r), -ENOENT);
	free(path);
	assert_int_equal(read_text(HEAD "fn\t1\t2\tg\tname\n"), 0);
	/* Later keys are skipped: the format can grow. */
	assert_int_equal(read_text(HEAD "newkey\twhatever\nfn\t1\t2\tg\tname\n"), 0);
	assert_int_equal(read_text("taproot-top 2\n"), -EINVAL);
	assert_int_equal(read_text("something else\n"), -EINVAL);
	assert_int_equal(read_text(""), -EINVAL);
	/* No time: never written by taprootd. */
	assert_int_equal(read_text("taproot-top 1\nsamples\t3\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "fn\t3\t2\tg\tself above total\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "fn\t1\t2\tg\t\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "fn\t1\t2\tno name\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "fn\tx\t2\tg\tn\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "fn\t1\t99999999999999999999999\tg\tn\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "fn\t1\t2\tg\tn\textra\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "samples\t-1\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "sampling\tyes\n"), -EINVAL);
	assert_int_equal(read_text(HEAD "no tab here\n"), -EINVAL);
	/* A line cut short (no newline: the writer renames whole files). */
	assert_int_equal(read_text(HEAD "fn\t1\t2\tg\tn"), -EINVAL);
}

/* Names longer than kept are cut; more lines than kept are refused. */
static void bounded(void **state)
{
	char *path = path_in_dir("long.tsv"), name[2000];
	struct topfile r;
	FILE *f = fopen(path, "w");

	(void)state;
	assert_non_null(f);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	fprintf(f, HEAD "fn\t1\t1\tg\t%.1000s\n", name);
	fclose(f);
	assert_int_equal(topfile_read(path, &r), 0);
	assert_int_equal(strlen(r.fns[0].name), TOPFILE_MAX_NAME - 1);
	topfile_free(&r);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(HEAD, f);
	for (int i = 0; i <= TOPFILE_MAX_FNS; i++)
		fprintf(f, "fn\t1\t1\tg\tf%d\n", i);
	fclose(f);
	assert_int_equal(topfile_read(path, &r), -EINVAL);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(refuses_what_is_wrong),
		cmocka_unit_test(bounded),
	};
	int ret;

	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return ret;
}
