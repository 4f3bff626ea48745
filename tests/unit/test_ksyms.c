// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols: a sample of /proc/kallsyms as the kernel prints it (core
 * kernel, data symbols to skip, modules), lookups at and between symbols,
 * malformed lines, and the all-zero addresses of kptr_restrict.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/kernel-private.h"

static const char sample[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81001000 t do_one_initcall\n"
	"ffffffff81002000 D some_data\n"
	"ffffffff81003000 T schedule\n"
	"ffffffff81003400 W weak_func\n"
	"ffffffff81004000 T _etext\n"
	"ffffffff82000000 d data_after_text\n"
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffffc0100000 t ext4_readdir\t[ext4]\n"
	"ffffffffc0100200 t ext4_lookup\t[ext4]\n"
	/* 7.2 lists a module's .modinfo symbols with type '?': not text. */
	"ffffc90000c9351e ? __UNIQUE_ID_modinfo_569\t[lpc_ich]\n"
	"ffffffffc0200000 t taproot_sample\t[taproot]\n";

static struct taproot_ksyms *load(const char *text, int *errp)
{
	struct taproot_ksyms *k = NULL;
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(f);
	err = taproot_ksyms_read(f, &k);
	fclose(f);
	if (errp)
		*errp = err;
	else
		assert_int_equal(err, 0);
	return k;
}

static void assert_sym(const struct taproot_ksyms *k, uint64_t addr, const char *want)
{
	char buf[128];

	if (!want) {
		assert_false(taproot_ksyms_format(k, addr, buf, sizeof(buf)));
		assert_string_equal(buf, "");
		return;
	}
	assert_true(taproot_ksyms_format(k, addr, buf, sizeof(buf)));
	assert_string_equal(buf, want);
}

static void ksyms_text_symbols_loaded(void **state)
{
	struct taproot_ksyms *k = load(sample, NULL);

	/* The 9 t, T and W lines of the 12. */
	assert_int_equal(taproot_ksyms_count(k), 9);
	taproot_ksyms_free(k);
}

static void ksyms_lookup_names_offsets(void **state)
{
	struct taproot_ksyms *k = load(sample, NULL);
	const char *mod;
	uint64_t off;

	assert_sym(k, 0xffffffff81000000, "_stext+0x0");
	assert_sym(k, 0xffffffff81001234, "do_one_initcall+0x234");
	/* D some_data is not text: do_one_initcall runs on to schedule. */
	assert_sym(k, 0xffffffff81002010, "do_one_initcall+0x1010");
	assert_sym(k, 0xffffffff810033ff, "schedule+0x3ff");
	assert_sym(k, 0xffffffff81003400, "weak_func+0x0");
	assert_sym(k, 0xffffffffc0100210, "ext4_lookup+0x10 [ext4]");
	assert_sym(k, 0xffffffffc0200008, "taproot_sample+0x8 [taproot]");
	assert_string_equal(taproot_ksyms_lookup(k, 0xffffffffc0100004, &off, &mod),
			    "ext4_readdir");
	assert_int_equal(off, 4);
	assert_string_equal(mod, "ext4");
	assert_string_equal(taproot_ksyms_lookup(k, 0xffffffff81003000, &off, &mod),
			    "schedule");
	assert_null(mod);
	taproot_ksyms_free(k);
}

static void ksyms_outside_text_not_found(void **state)
{
	struct taproot_ksyms *k = load(sample, NULL);

	/* Below the first symbol. */
	assert_sym(k, 0xffffffff80ffffff, NULL);
	assert_sym(k, 0x1000, NULL);
	/* Past the kernel's last text symbol by more than 64 KiB. */
	assert_sym(k, 0xffffffff82000000, NULL);
	assert_sym(k, 0xffffffff81004000 + 0xffff, "_etext+0xffff");
	assert_sym(k, 0xffffffff81004000 + 0x10000, NULL);
	/* Past a module's last symbol by more than 64 KiB, before the next. */
	assert_sym(k, 0xffffffffc0100200 + 0x10000, NULL);
	/* Past the very last symbol. */
	assert_sym(k, 0xffffffffc0200000 + 0x20000, NULL);
	assert_sym(k, UINT64_MAX, NULL);
	taproot_ksyms_free(k);
}

static void ksyms_unsorted_input_sorted(void **state)
{
	static const char text[] =
		"ffffffff81003000 T b\n"
		"ffffffff81001000 T a\n"
		"ffffffff81005000 T c\n";
	struct taproot_ksyms *k = load(text, NULL);

	assert_sym(k, 0xffffffff81001008, "a+0x8");
	assert_sym(k, 0xffffffff81003008, "b+0x8");
	assert_sym(k, 0xffffffff81005008, "c+0x8");
	taproot_ksyms_free(k);
}

static void ksyms_kptr_restrict_reported(void **state)
{
	static const char text[] =
		"0000000000000000 T _stext\n"
		"0000000000000000 T schedule\n"
		"0000000000000000 t ext4_lookup\t[ext4]\n";
	struct taproot_ksyms *k;
	int err;

	k = load(text, &err);
	assert_null(k);
	assert_int_equal(err, -TAPROOT_EKPTR);
	assert_non_null(strstr(taproot_errmsg(err), "kptr_restrict"));
}

static void assert_malformed(const char *text, const char *needle)
{
	struct taproot_ksyms *k;
	int err;

	k = load(text, &err);
	assert_null(k);
	assert_int_equal(err, -TAPROOT_EPROTO);
	if (!strstr(taproot_errmsg(err), needle))
		fail_msg("message '%s' does not mention '%s'", taproot_errmsg(err), needle);
}

static void ksyms_malformed_lines_refused(void **state)
{
	assert_malformed("ffffffff81000000 T a\nxyz T b\n", "line 2: malformed");
	assert_malformed("ffffffff81000000T a\n", "line 1");
	assert_malformed("ffffffff81000000 TT a\n", "line 1");
	assert_malformed("ffffffff81000000 T \n", "line 1");
	assert_malformed("ffffffff81000000 T a b\n", "line 1");
	assert_malformed("1ffffffff81000000 T a\n", "line 1");
	assert_malformed("ffffffff81000000 T a\t[ext4\n", "line 1");
	assert_malformed("ffffffff81000000 T a\t[]\n", "line 1");
	assert_malformed("ffffffff81000000 T a\t\n", "line 1");
	assert_malformed("ffffffff81000000 1 a\n", "line 1");
	assert_malformed("ffffffff81000000 ! a\n", "line 1");
}

static void ksyms_long_name_bounded(void **state)
{
	char text[1200];
	char name[600];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(text, sizeof(text), "ffffffff81000000 T %s\n", name);
	assert_malformed(text, "line 1");
	/* 511 bytes is the longest name the kernel prints. */
	name[511] = '\0';
	snprintf(text, sizeof(text), "ffffffff81000000 T %s\n", name);
	taproot_ksyms_free(load(text, NULL));
}

static void ksyms_last_line_without_newline_read(void **state)
{
	struct taproot_ksyms *k = load("ffffffff81000000 T a\nffffffff81000100 T b", NULL);

	assert_int_equal(taproot_ksyms_count(k), 2);
	assert_sym(k, 0xffffffff81000104, "b+0x4");
	taproot_ksyms_free(k);
}

static void ksyms_no_text_symbols_refused(void **state)
{
	assert_malformed("ffffffff81000000 D a\n", "no text symbols");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ksyms_text_symbols_loaded),
		cmocka_unit_test(ksyms_lookup_names_offsets),
		cmocka_unit_test(ksyms_outside_text_not_found),
		cmocka_unit_test(ksyms_unsorted_input_sorted),
		cmocka_unit_test(ksyms_kptr_restrict_reported),
		cmocka_unit_test(ksyms_malformed_lines_refused),
		cmocka_unit_test(ksyms_long_name_bounded),
		cmocka_unit_test(ksyms_last_line_without_newline_read),
		cmocka_unit_test(ksyms_no_text_symbols_refused),
	};

	return cmocka_run_group_tests_name("ksyms", tests, NULL, NULL);
}
