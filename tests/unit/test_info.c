// SPDX-License-Identifier: GPL-2.0
/*
 * The GET_INFO reply parser, fed with messages built by libnl as the kernel
 * would build them: valid ones, and each way one can be wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "kernel/kernel-private.h"

#define FAMILY		0x1c	/* any id: the parser does not check it */
#define RELEASE		"6.1.0-56-amd64"
#define FEATURES	(TAPROOT_FEAT_SAMPLING | TAPROOT_FEAT_KSTACK | TAPROOT_FEAT_USTACK)

/* A reply header of command @cmd, without attributes. */
static struct nl_msg *reply_new(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 1234, 7, FAMILY, 0, 0, cmd,
				    TAPROOT_GENL_VERSION));
	return msg;
}

/* Put every attribute of a valid reply except @skip (0: none). */
static void put_attrs(struct nl_msg *msg, int skip)
{
	if (skip != TAPROOT_A_ABI_VERSION)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_ABI_VERSION, TAPROOT_ABI_VERSION), 0);
	if (skip != TAPROOT_A_NR_CPUS)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_NR_CPUS, 4), 0);
	if (skip != TAPROOT_A_KERNEL_RELEASE)
		assert_int_equal(nla_put_string(msg, TAPROOT_A_KERNEL_RELEASE, RELEASE), 0);
	if (skip != TAPROOT_A_FEATURES)
		assert_int_equal(nla_put_u64(msg, TAPROOT_A_FEATURES, FEATURES), 0);
	if (skip != TAPROOT_A_RUNNING)
		assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	if (skip != TAPROOT_A_PAGE_SIZE)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_PAGE_SIZE, 4096), 0);
}

/* Parse @msg, free it, and return the parser's result. */
static int parse(struct nl_msg *msg, struct taproot_info *info)
{
	int err = tp_info_parse(nlmsg_hdr(msg), info);

	nlmsg_free(msg);
	return err;
}

/* The parser refuses @msg as malformed, with a message containing @needle. */
static void assert_refused(struct nl_msg *msg, const char *needle)
{
	struct taproot_info info;
	int err = parse(msg, &info);

	assert_int_equal(err, -TAPROOT_EPROTO);
	if (!strstr(taproot_errmsg(err), needle))
		fail_msg("message '%s' does not mention '%s'", taproot_errmsg(err), needle);
}

static void info_valid_reply_parsed(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);
	struct taproot_info info;

	put_attrs(msg, 0);
	assert_int_equal(parse(msg, &info), 0);
	assert_int_equal(info.abi_version, TAPROOT_ABI_VERSION);
	assert_int_equal(info.nr_cpus, 4);
	assert_string_equal(info.kernel_release, RELEASE);
	assert_true(info.features == FEATURES);
	assert_true(info.running);
	assert_int_equal(info.page_size, 4096);
}

static void info_missing_attribute_refused(void **state)
{
	static const struct { int type; const char *name; } required[] = {
		{ TAPROOT_A_NR_CPUS, "NR_CPUS" },
		{ TAPROOT_A_KERNEL_RELEASE, "KERNEL_RELEASE" },
		{ TAPROOT_A_FEATURES, "FEATURES" },
		{ TAPROOT_A_RUNNING, "RUNNING" },
		{ TAPROOT_A_PAGE_SIZE, "PAGE_SIZE" },
	};
	size_t i;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

		put_attrs(msg, required[i].type);
		assert_refused(msg, required[i].name);
	}
}

static void info_missing_abi_version_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_ABI_VERSION);
	assert_refused(msg, "lacks attribute ABI_VERSION");
}

static void info_u32_too_long_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_NR_CPUS);
	assert_int_equal(nla_put_u64(msg, TAPROOT_A_NR_CPUS, 4), 0);
	assert_refused(msg, "NR_CPUS of 8 bytes");
}

static void info_u32_too_short_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_PAGE_SIZE);
	assert_int_equal(nla_put_u16(msg, TAPROOT_A_PAGE_SIZE, 4096), 0);
	assert_refused(msg, "PAGE_SIZE of 2 bytes");
}

static void info_abi_version_wrong_length_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	assert_int_equal(nla_put_u16(msg, TAPROOT_A_ABI_VERSION, TAPROOT_ABI_VERSION), 0);
	put_attrs(msg, TAPROOT_A_ABI_VERSION);
	assert_refused(msg, "ABI_VERSION of 2 bytes");
}

static void info_u8_too_long_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_RUNNING);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_RUNNING, 1), 0);
	assert_refused(msg, "RUNNING of 4 bytes");
}

static void info_string_unterminated_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_KERNEL_RELEASE);
	/* The bytes of RELEASE without its NUL. */
	assert_int_equal(nla_put(msg, TAPROOT_A_KERNEL_RELEASE, strlen(RELEASE), RELEASE), 0);
	assert_refused(msg, "KERNEL_RELEASE");
}

static void info_string_oversized_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);
	char release[66];

	/* 65 characters and a NUL: one more than a utsname release holds. */
	memset(release, 'r', sizeof(release) - 1);
	release[sizeof(release) - 1] = '\0';
	put_attrs(msg, TAPROOT_A_KERNEL_RELEASE);
	assert_int_equal(nla_put_string(msg, TAPROOT_A_KERNEL_RELEASE, release), 0);
	assert_refused(msg, "KERNEL_RELEASE of 66 bytes");
}

static void info_string_longest_accepted(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);
	struct taproot_info info;
	char release[65];

	memset(release, 'r', sizeof(release) - 1);
	release[sizeof(release) - 1] = '\0';
	put_attrs(msg, TAPROOT_A_KERNEL_RELEASE);
	assert_int_equal(nla_put_string(msg, TAPROOT_A_KERNEL_RELEASE, release), 0);
	assert_int_equal(parse(msg, &info), 0);
	assert_string_equal(info.kernel_release, release);
}

static void info_string_empty_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_KERNEL_RELEASE);
	assert_int_equal(nla_put_string(msg, TAPROOT_A_KERNEL_RELEASE, ""), 0);
	assert_refused(msg, "KERNEL_RELEASE is empty");
}

/* Decided: unknown and foreign attributes are ignored (see tp_info_parse). */
static void info_unknown_attributes_ignored(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);
	struct taproot_info info;
	uint8_t junk[3] = { 1, 2, 3 };

	assert_int_equal(nla_put(msg, TAPROOT_A_MAX + 7, sizeof(junk), junk), 0);
	put_attrs(msg, 0);
	/* Known, but not part of this reply: not validated, not used. */
	assert_int_equal(nla_put(msg, TAPROOT_A_CFG_FREQ_HZ, 1, junk), 0);
	assert_int_equal(parse(msg, &info), 0);
	assert_int_equal(info.nr_cpus, 4);
	assert_string_equal(info.kernel_release, RELEASE);
}

static void info_abi_mismatch_detected(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);
	struct taproot_info info;
	char want[128];
	int err;

	/* A future module: other version, and NR_CPUS changed to a u64. */
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_ABI_VERSION, TAPROOT_ABI_VERSION + 1), 0);
	assert_int_equal(nla_put_u64(msg, TAPROOT_A_NR_CPUS, 4), 0);
	err = parse(msg, &info);
	assert_int_equal(err, -TAPROOT_EABI);
	assert_int_equal(info.abi_version, TAPROOT_ABI_VERSION + 1);
	snprintf(want, sizeof(want),
		 "module ABI version %d, this tool speaks %d: load the matching taproot.ko",
		 TAPROOT_ABI_VERSION + 1, TAPROOT_ABI_VERSION);
	assert_string_equal(taproot_errmsg(err), want);
}

static void info_abi_check_accepts_own_version(void **state)
{
	assert_int_equal(taproot_abi_check(TAPROOT_ABI_VERSION), 0);
	assert_int_equal(taproot_abi_check(TAPROOT_ABI_VERSION - 1), -TAPROOT_EABI);
}

static void info_wrong_command_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);

	put_attrs(msg, 0);
	assert_refused(msg, "command");
}

static void info_running_not_boolean_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_RUNNING);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 2), 0);
	assert_refused(msg, "RUNNING is 2");
}

static void info_page_size_not_power_of_two_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_PAGE_SIZE);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_PAGE_SIZE, 4095), 0);
	assert_refused(msg, "PAGE_SIZE 4095");
}

static void info_zero_cpus_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, TAPROOT_A_NR_CPUS);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_NR_CPUS, 0), 0);
	assert_refused(msg, "NR_CPUS is 0");
}

static void info_truncated_attribute_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);
	/* An attribute header claiming more bytes than the message has. */
	struct nlattr bad = { .nla_len = 64, .nla_type = TAPROOT_A_NR_CPUS };

	put_attrs(msg, 0);
	assert_int_equal(nlmsg_append(msg, &bad, sizeof(bad), NLMSG_ALIGNTO), 0);
	assert_refused(msg, "after the last whole attribute");
}

static void info_no_genl_header_refused(void **state)
{
	struct nl_msg *msg = nlmsg_alloc_simple(FAMILY, 0);

	assert_non_null(msg);
	assert_refused(msg, "no generic netlink header");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(info_valid_reply_parsed),
		cmocka_unit_test(info_missing_attribute_refused),
		cmocka_unit_test(info_missing_abi_version_refused),
		cmocka_unit_test(info_u32_too_long_refused),
		cmocka_unit_test(info_u32_too_short_refused),
		cmocka_unit_test(info_abi_version_wrong_length_refused),
		cmocka_unit_test(info_u8_too_long_refused),
		cmocka_unit_test(info_string_unterminated_refused),
		cmocka_unit_test(info_string_oversized_refused),
		cmocka_unit_test(info_string_longest_accepted),
		cmocka_unit_test(info_string_empty_refused),
		cmocka_unit_test(info_unknown_attributes_ignored),
		cmocka_unit_test(info_abi_mismatch_detected),
		cmocka_unit_test(info_abi_check_accepts_own_version),
		cmocka_unit_test(info_wrong_command_refused),
		cmocka_unit_test(info_running_not_boolean_refused),
		cmocka_unit_test(info_page_size_not_power_of_two_refused),
		cmocka_unit_test(info_zero_cpus_refused),
		cmocka_unit_test(info_truncated_attribute_refused),
		cmocka_unit_test(info_no_genl_header_refused),
	};

	return cmocka_run_group_tests_name("info", tests, NULL, NULL);
}
