// SPDX-License-Identifier: GPL-2.0
/*
 * Where "taprootctl load" finds taproot.ko: --ko, $TAPROOT_KO, the build
 * tree next to the executable, then the installed module. Each test works
 * in a fresh directory that looks like a checkout:
 *
 *   ROOT/ctl/taprootctl
 *   ROOT/build/kmod/RELEASE/kmod/taproot.ko   (when the test builds it)
 *   ROOT/other.ko
 */
#include <errno.h>
#include <limits.h>
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

#include "kernel/kernel-private.h"

#define RELEASE	"6.1.0-56-amd64"

struct tree {
	char root[64];
	char exe[PATH_MAX];
	char built[PATH_MAX];	/* where the build tree's module goes */
	char other[PATH_MAX];
};

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	char dir[PATH_MAX];

	if (!t)
		return -1;
	strcpy(t->root, "/tmp/taproot-unit-XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	snprintf(dir, sizeof(dir), "%s/ctl", t->root);
	if (mkdir(dir, 0700) < 0)
		return -1;
	snprintf(t->exe, sizeof(t->exe), "%s/ctl/taprootctl", t->root);
	snprintf(t->built, sizeof(t->built), "%s/build/kmod/%s/kmod/taproot.ko",
		 t->root, RELEASE);
	snprintf(t->other, sizeof(t->other), "%s/other.ko", t->root);
	touch(t->exe);
	touch(t->other);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[PATH_MAX + 16];
	int ret;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	ret = system(cmd);
	free(t);
	return ret ? -1 : 0;
}

/* Create the build tree's taproot.ko. */
static void build(struct tree *t)
{
	char dir[PATH_MAX];
	const char *parts[] = { "/build", "/kmod", "/" RELEASE, "/kmod" };
	size_t i;

	snprintf(dir, sizeof(dir), "%s", t->root);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		strncat(dir, parts[i], sizeof(dir) - strlen(dir) - 1);
		assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
	}
	touch(t->built);
}

static int resolve(struct tree *t, const char *ko, const char *env,
		   char **path, char *tried, size_t len)
{
	struct tp_ko_search s = {
		.ko = ko, .env = env, .exe = t->exe, .release = RELEASE,
	};

	return tp_ko_resolve(&s, path, tried, len);
}

static void module_ko_option_chosen(void **state)
{
	struct tree *t = *state;
	char *path, tried[256];

	build(t);
	assert_int_equal(resolve(t, t->other, NULL, &path, tried, sizeof(tried)), 0);
	assert_string_equal(path, t->other);
	free(path);
}

static void module_ko_option_wins_over_env(void **state)
{
	struct tree *t = *state;
	char *path, tried[256];

	assert_int_equal(resolve(t, t->other, t->built, &path, tried, sizeof(tried)), 0);
	assert_string_equal(path, t->other);
	free(path);
}

static void module_ko_option_missing_is_error(void **state)
{
	struct tree *t = *state;
	char *path, tried[256], want[PATH_MAX + 64];
	int err;

	build(t);
	err = resolve(t, "/nonexistent/taproot.ko", NULL, &path, tried, sizeof(tried));
	assert_int_equal(err, -ENOENT);
	assert_null(path);
	snprintf(want, sizeof(want),
		 "taproot.ko not found: /nonexistent/taproot.ko: No such file or directory");
	assert_string_equal(taproot_errmsg(err), want);
}

static void module_env_chosen_over_build_tree(void **state)
{
	struct tree *t = *state;
	char *path, tried[256];

	build(t);
	assert_int_equal(resolve(t, NULL, t->other, &path, tried, sizeof(tried)), 0);
	assert_string_equal(path, t->other);
	free(path);
}

static void module_env_missing_is_error(void **state)
{
	struct tree *t = *state;
	char *path, tried[256];
	int err;

	build(t);
	err = resolve(t, NULL, "/nonexistent/x.ko", &path, tried, sizeof(tried));
	assert_int_equal(err, -ENOENT);
	assert_non_null(strstr(taproot_errmsg(err), "/nonexistent/x.ko (from $TAPROOT_KO)"));
}

static void module_env_empty_is_unset(void **state)
{
	struct tree *t = *state;
	char *path, tried[256];

	build(t);
	assert_int_equal(resolve(t, NULL, "", &path, tried, sizeof(tried)), 0);
	assert_string_equal(path, t->built);
	free(path);
}

static void module_build_tree_found_next_to_exe(void **state)
{
	struct tree *t = *state;
	char *path, tried[256];

	build(t);
	assert_int_equal(resolve(t, NULL, NULL, &path, tried, sizeof(tried)), 0);
	assert_string_equal(path, t->built);
	free(path);
}

static void module_no_build_tree_falls_back_to_installed(void **state)
{
	struct tree *t = *state;
	char *path, tried[PATH_MAX + 64], want[PATH_MAX + 64];

	assert_int_equal(resolve(t, NULL, NULL, &path, tried, sizeof(tried)), 1);
	assert_null(path);
	snprintf(want, sizeof(want), "%s (No such file or directory)", t->built);
	assert_string_equal(tried, want);
}

static void module_exe_in_root_dir_has_no_build_tree(void **state)
{
	struct tp_ko_search s = { .exe = "/taprootctl", .release = RELEASE };
	char *path, tried[64];

	assert_int_equal(tp_ko_resolve(&s, &path, tried, sizeof(tried)), 1);
	assert_null(path);
	assert_string_equal(tried, "");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tree_setup, tree_teardown)
	const struct CMUnitTest tests[] = {
		T(module_ko_option_chosen),
		T(module_ko_option_wins_over_env),
		T(module_ko_option_missing_is_error),
		T(module_env_chosen_over_build_tree),
		T(module_env_missing_is_error),
		T(module_env_empty_is_unset),
		T(module_build_tree_found_next_to_exe),
		T(module_no_build_tree_falls_back_to_installed),
		cmocka_unit_test(module_exe_in_root_dir_has_no_build_tree),
	};
#undef T

	return cmocka_run_group_tests_name("module", tests, NULL, NULL);
}
