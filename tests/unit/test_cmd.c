// SPDX-License-Identifier: GPL-2.0
/*
 * Command tables: names, prefixes, aliases and ambiguity.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cmd.h"
#include "util/error.h"

static int fn_load(int argc, char **argv) { return 0; }
static int fn_status(int argc, char **argv) { return 0; }
static int fn_stats(int argc, char **argv) { return 0; }
static int fn_start(int argc, char **argv) { return 0; }

/* "show" is an alias of "status"; "stats" and "start" share a prefix with it. */
static const struct taproot_command table[] = {
	{ "load",   fn_load,   "", "", NULL },
	{ "status", fn_status, "", "", NULL },
	{ "show",   fn_status, "", "", NULL },
	{ "stats",  fn_stats,  "", "", NULL },
	{ "start",  fn_start,  "", "", NULL },
	{ NULL },
};

static void cmd_exact_name_selected(void **state)
{
	const struct taproot_command *row;

	assert_int_equal(taproot_cmd_find(table, "stats", &row), 0);
	assert_ptr_equal(row, &table[3]);
}

static void cmd_unique_prefix_selected(void **state)
{
	const struct taproot_command *row;

	assert_int_equal(taproot_cmd_find(table, "l", &row), 0);
	assert_ptr_equal(row, &table[0]);
	assert_int_equal(taproot_cmd_find(table, "statu", &row), 0);
	assert_ptr_equal(row, &table[1]);
}

static void cmd_ambiguous_prefix_refused(void **state)
{
	const struct taproot_command *row = table;
	int err = taproot_cmd_find(table, "sta", &row);

	assert_int_equal(err, -TAPROOT_EAMBIGUOUS);
	assert_null(row);
	assert_string_equal(taproot_errmsg(err),
			    "ambiguous command 'sta': could be status, stats, start");
}

static void cmd_exact_name_wins_over_longer_name(void **state)
{
	static const struct taproot_command t[] = {
		{ "stat",  fn_status, "", "", NULL },
		{ "stats", fn_stats,  "", "", NULL },
		{ NULL },
	};
	const struct taproot_command *row;

	assert_int_equal(taproot_cmd_find(t, "stat", &row), 0);
	assert_ptr_equal(row, &t[0]);
}

static void cmd_aliases_are_one_choice(void **state)
{
	static const struct taproot_command t[] = {
		{ "status", fn_status, "", "", NULL },
		{ "show",   fn_status, "", "", NULL },
		{ "load",   fn_load,   "", "", NULL },
		{ NULL },
	};
	const struct taproot_command *row;

	assert_int_equal(taproot_cmd_find(t, "s", &row), 0);
	assert_ptr_equal(row->fn, fn_status);
}

static void cmd_unknown_word_refused(void **state)
{
	const struct taproot_command *row = table;
	int err = taproot_cmd_find(table, "loads", &row);

	assert_int_equal(err, -ENOENT);
	assert_null(row);
	assert_string_equal(taproot_errmsg(err), "unknown command 'loads'");
}

static void cmd_empty_word_refused(void **state)
{
	const struct taproot_command *row;

	assert_int_equal(taproot_cmd_find(table, "", &row), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cmd_exact_name_selected),
		cmocka_unit_test(cmd_unique_prefix_selected),
		cmocka_unit_test(cmd_ambiguous_prefix_refused),
		cmocka_unit_test(cmd_exact_name_wins_over_longer_name),
		cmocka_unit_test(cmd_aliases_are_one_choice),
		cmocka_unit_test(cmd_unknown_word_refused),
		cmocka_unit_test(cmd_empty_word_refused),
	};

	return cmocka_run_group_tests_name("cmd", tests, NULL, NULL);
}
