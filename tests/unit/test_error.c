// SPDX-License-Identifier: GPL-2.0
/*
 * Error messages: a failing call's own message reaches the user, a stale
 * one never does, and taproot's codes have the wording the tools promise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <netlink/errno.h>

#include "util/util.h"

static void error_recorded_message_returned(void **state)
{
	int err = tp_err(-EBUSY, "taproot module in use (%s)", "detail");

	assert_int_equal(err, -EBUSY);
	assert_string_equal(taproot_errmsg(-EBUSY), "taproot module in use (detail)");
}

static void error_other_code_gets_generic_message(void **state)
{
	tp_err(-EBUSY, "taproot module in use");
	assert_string_equal(taproot_errmsg(-ENOENT), "No such file or directory");
}

static void error_module_not_loaded_wording(void **state)
{
	assert_string_equal(taproot_strerror(-TAPROOT_ENOMODULE),
			    "taproot module not loaded (run 'taprootctl load')");
}

static void error_every_taproot_code_has_message(void **state)
{
	int e;

	for (e = TAPROOT_E_FIRST + 1; e < TAPROOT_E_LAST; e++)
		if (!strcmp(taproot_strerror(-e), "unknown error"))
			fail_msg("taproot error %d has no message", e);
	assert_string_equal(taproot_strerror(-TAPROOT_E_LAST), "unknown error");
}

static void error_codes_do_not_collide_with_errno(void **state)
{
	/* The kernel's highest errno is MAX_ERRNO (4095); ours start above. */
	assert_true(TAPROOT_ENOMODULE > 4095);
	assert_string_equal(taproot_strerror(-EHWPOISON), "Memory page has hardware error");
}

static void error_nlerr_mapped_to_errno(void **state)
{
	assert_int_equal(tp_nlerr_to_errno(-NLE_PERM), -EPERM);
	assert_int_equal(tp_nlerr_to_errno(-NLE_OBJ_NOTFOUND), -ENOENT);
	assert_int_equal(tp_nlerr_to_errno(-NLE_NOMEM), -ENOMEM);
	assert_int_equal(tp_nlerr_to_errno(-NLE_FAILURE), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(error_recorded_message_returned),
		cmocka_unit_test(error_other_code_gets_generic_message),
		cmocka_unit_test(error_module_not_loaded_wording),
		cmocka_unit_test(error_every_taproot_code_has_message),
		cmocka_unit_test(error_codes_do_not_collide_with_errno),
		cmocka_unit_test(error_nlerr_mapped_to_errno),
	};

	return cmocka_run_group_tests_name("error", tests, NULL, NULL);
}
