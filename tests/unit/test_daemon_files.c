// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd's profile files (ctl/daemon-files.c) in a temporary directory:
 * a taprootd started again after one that ran its stamps ahead of the
 * clock goes on after the newest of them, and does not write over it;
 * stamps past the bound (a clock set back) and files of other names are
 * not taken up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"

/* Create an empty file @name in @dir. */
static void touch(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void remove_all(const char *dir, const char *const *names, size_t n)
{
	char path[512];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

static void newest_stamp_after_restart(void **state)
{
	/* 2026-11-28 07:59:40 UTC, and the names of stamps around it. */
	const time_t now = 1795852780;
	static const char *const names[] = {
		"cpu-20261128T075941Z.pb.gz",		/* now + 1: ran ahead */
		"offcpu-20261128T075942Z.pb.gz",	/* now + 2: the newest */
		"trace-20261128T075939Z.json",
		"cpu-20261128T090000Z.pb.gz",		/* past the bound */
		"cpu-20261128T075950Z.pb.gz.tmp.AbC123", /* a killed writer's */
		"notes-20261128T075959Z.pb.gz",		/* not taprootd's */
	};
	char tmpl[] = "/tmp/test_daemon_files.XXXXXX", *dir = mkdtemp(tmpl);
	char *path;
	time_t last, t;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(daemon_newest_stamp(dir, now + 60), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		touch(dir, names[i]);

	last = daemon_newest_stamp(dir, now + 60);
	assert_int_equal(last, now + 2);
	/* The first interval of the new taprootd began at now: stamped after. */
	t = daemon_next_stamp(now, &last);
	assert_int_equal(t, now + 3);
	path = daemon_profile_path(dir, "offcpu", t);
	assert_non_null(path);
	assert_non_null(strstr(path, "/offcpu-20261128T075943Z.pb.gz"));
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
	/* The clock caught up: stamps follow it again. */
	assert_int_equal(daemon_next_stamp(now + 10, &last), now + 10);

	/* A bound before every stamp: none taken up. */
	assert_int_equal(daemon_newest_stamp(dir, now - 2), 0);
	remove_all(dir, names, sizeof(names) / sizeof(names[0]));
	assert_int_equal(daemon_newest_stamp(dir, now + 60), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(newest_stamp_after_restart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
