// SPDX-License-Identifier: GPL-2.0
/*
 * Extended-ACK parsing: NLMSG_ERROR messages laid out as the kernel's
 * netlink_ack() lays them out, capped and uncapped, and broken ones.
 */
#include <errno.h>
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

#define FAMILY	0x1c
#define KMSG	"needs CAP_PERFMON or CAP_SYS_ADMIN"

/*
 * The payload of the request being acknowledged: genl header + one u32.
 * Not const: libnl's nlmsg_append() takes a non-const pointer.
 */
static struct {
	struct genlmsghdr genl;
	struct nlattr nla;
	uint32_t value;
} request = {
	.genl = { .cmd = TAPROOT_CMD_SET_CONFIG, .version = TAPROOT_GENL_VERSION },
	.nla = { .nla_len = NLA_HDRLEN + 4, .nla_type = TAPROOT_A_CFG_FREQ_HZ },
	.value = 100000,
};

/*
 * An NLMSG_ERROR for @error; the request payload is echoed unless @flags
 * has NLM_F_CAPPED. The caller adds the TLVs.
 */
static struct nl_msg *ack_new(int flags, int error)
{
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_ERROR, flags);
	struct nlmsgerr e = {
		.error = error,
		.msg = {
			.nlmsg_len = NLMSG_HDRLEN + sizeof(request),
			.nlmsg_type = FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
			.nlmsg_seq = 7,
		},
	};

	assert_non_null(msg);
	assert_int_equal(nlmsg_append(msg, &e, sizeof(e), NLMSG_ALIGNTO), 0);
	if (!(flags & NLM_F_CAPPED))
		assert_int_equal(nlmsg_append(msg, &request, sizeof(request),
					      NLMSG_ALIGNTO), 0);
	return msg;
}

/* Run the parser on @msg with a buffer of @len, free @msg. */
static int extack(struct nl_msg *msg, char *buf, size_t len)
{
	int ret = tp_nl_extack_msg(nlmsg_hdr(msg), buf, len);

	nlmsg_free(msg);
	return ret;
}

static void extack_uncapped_message_found(void **state)
{
	struct nl_msg *msg = ack_new(NLM_F_ACK_TLVS, -EPERM);
	char buf[128];

	assert_int_equal(nla_put_u32(msg, NLMSGERR_ATTR_OFFS, 20), 0);
	assert_int_equal(nla_put_string(msg, NLMSGERR_ATTR_MSG, KMSG), 0);
	assert_int_equal(extack(msg, buf, sizeof(buf)), 1);
	assert_string_equal(buf, KMSG);
}

static void extack_capped_message_found(void **state)
{
	struct nl_msg *msg = ack_new(NLM_F_ACK_TLVS | NLM_F_CAPPED, -EINVAL);
	char buf[128];

	assert_int_equal(nla_put_string(msg, NLMSGERR_ATTR_MSG, KMSG), 0);
	assert_int_equal(extack(msg, buf, sizeof(buf)), 1);
	assert_string_equal(buf, KMSG);
}

static void extack_without_tlv_flag_is_none(void **state)
{
	struct nl_msg *msg = ack_new(0, -EPERM);
	char buf[128] = "stale";

	assert_int_equal(extack(msg, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void extack_tlvs_without_message_are_none(void **state)
{
	struct nl_msg *msg = ack_new(NLM_F_ACK_TLVS, -EINVAL);
	char buf[128];

	assert_int_equal(nla_put_u32(msg, NLMSGERR_ATTR_OFFS, 20), 0);
	assert_int_equal(extack(msg, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void extack_unterminated_message_refused(void **state)
{
	struct nl_msg *msg = ack_new(NLM_F_ACK_TLVS | NLM_F_CAPPED, -EINVAL);
	char buf[128];

	assert_int_equal(nla_put(msg, NLMSGERR_ATTR_MSG, strlen(KMSG), KMSG), 0);
	assert_int_equal(extack(msg, buf, sizeof(buf)), -TAPROOT_EPROTO);
	assert_string_equal(buf, "");
}

static void extack_echo_past_end_refused(void **state)
{
	struct nl_msg *msg = ack_new(NLM_F_ACK_TLVS | NLM_F_CAPPED, -EINVAL);
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	char buf[128];

	/* Uncapped, but the echoed request would run past the message. */
	nlh->nlmsg_flags &= ~NLM_F_CAPPED;
	((struct nlmsgerr *)NLMSG_DATA(nlh))->msg.nlmsg_len = 4096;
	assert_int_equal(extack(msg, buf, sizeof(buf)), -TAPROOT_EPROTO);
}

static void extack_long_message_truncated(void **state)
{
	struct nl_msg *msg = ack_new(NLM_F_ACK_TLVS | NLM_F_CAPPED, -EINVAL);
	char buf[8];

	assert_int_equal(nla_put_string(msg, NLMSGERR_ATTR_MSG, KMSG), 0);
	assert_int_equal(extack(msg, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "needs C");
}

static void extack_not_an_error_message_refused(void **state)
{
	struct nl_msg *msg = nlmsg_alloc_simple(FAMILY, 0);
	char buf[16];

	assert_non_null(msg);
	assert_int_equal(extack(msg, buf, sizeof(buf)), -TAPROOT_EPROTO);
}

static void extack_eperm_names_capabilities(void **state)
{
	int err = tp_nl_refused(-EPERM, "get info", "");

	assert_int_equal(err, -EPERM);
	assert_string_equal(taproot_errmsg(err),
			    "permission denied: needs CAP_PERFMON or CAP_SYS_ADMIN");
}

static void extack_eperm_adds_other_kernel_text(void **state)
{
	int err = tp_nl_refused(-EPERM, "get info", "not in the initial user namespace");

	assert_string_equal(taproot_errmsg(err),
			    "permission denied: needs CAP_PERFMON or CAP_SYS_ADMIN "
			    "(kernel: not in the initial user namespace)");
}

static void extack_eperm_same_kernel_text_not_repeated(void **state)
{
	int err = tp_nl_refused(-EPERM, "get info", KMSG);

	assert_string_equal(taproot_errmsg(err),
			    "permission denied: needs CAP_PERFMON or CAP_SYS_ADMIN");
}

static void extack_refusal_carries_kernel_text(void **state)
{
	int err = tp_nl_refused(-EINVAL, "set config", "frequency out of range");

	assert_int_equal(err, -EINVAL);
	assert_string_equal(taproot_errmsg(err),
			    "set config: frequency out of range (Invalid argument)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(extack_uncapped_message_found),
		cmocka_unit_test(extack_capped_message_found),
		cmocka_unit_test(extack_without_tlv_flag_is_none),
		cmocka_unit_test(extack_tlvs_without_message_are_none),
		cmocka_unit_test(extack_unterminated_message_refused),
		cmocka_unit_test(extack_echo_past_end_refused),
		cmocka_unit_test(extack_long_message_truncated),
		cmocka_unit_test(extack_not_an_error_message_refused),
		cmocka_unit_test(extack_eperm_names_capabilities),
		cmocka_unit_test(extack_eperm_adds_other_kernel_text),
		cmocka_unit_test(extack_eperm_same_kernel_text_not_repeated),
		cmocka_unit_test(extack_refusal_carries_kernel_text),
	};

	return cmocka_run_group_tests_name("extack", tests, NULL, NULL);
}
