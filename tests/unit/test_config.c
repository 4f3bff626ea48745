// SPDX-License-Identifier: GPL-2.0
/*
 * Configuration: the GET_CONFIG reply parser fed with libnl-built messages
 * (valid and each way one can be wrong), the SET_CONFIG request builder
 * read back, and the KEY VALUE words of "taprootctl config set".
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

static struct nl_msg *reply_new(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 1234, 7, FAMILY, 0, 0, cmd,
				    TAPROOT_GENL_VERSION));
	return msg;
}

/* Every attribute of a valid reply except @skip; TGIDS holds @nr pids. */
static void put_attrs(struct nl_msg *msg, int skip, int nr)
{
	struct nlattr *nest;
	int i;

	if (skip != TAPROOT_A_CFG_FREQ_HZ)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_FREQ_HZ, 99), 0);
	if (skip != TAPROOT_A_CFG_KSTACK_DEPTH)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_KSTACK_DEPTH, 64), 0);
	if (skip != TAPROOT_A_CFG_USTACK_BYTES)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_USTACK_BYTES, 8192), 0);
	if (skip != TAPROOT_A_CFG_EVENTS)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_EVENTS,
					     TAPROOT_EV_SAMPLE | TAPROOT_EV_EXIT), 0);
	if (skip != TAPROOT_A_CFG_FLAGS)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_FLAGS,
					     TAPROOT_CFG_F_SAMPLE_IDLE), 0);
	if (skip != TAPROOT_A_CFG_RING_PAGES)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_RING_PAGES, 256), 0);
	if (skip != TAPROOT_A_CFG_WATERMARK)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_WATERMARK, 4096), 0);
	if (skip != TAPROOT_A_CFG_SCHED_ONE_IN)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_SCHED_ONE_IN, 7), 0);
	if (skip != TAPROOT_A_CFG_UNWIND_FRAMES)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_UNWIND_FRAMES, 48), 0);
	if (skip != TAPROOT_A_CFG_UNWIND_MEM)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_UNWIND_MEM, 128), 0);
	if (skip != TAPROOT_A_CFG_TGIDS) {
		nest = nla_nest_start(msg, TAPROOT_A_CFG_TGIDS);
		assert_non_null(nest);
		for (i = 0; i < nr; i++)
			assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_TGID, 100 + i), 0);
		/* The kernel's nla_nest_end() keeps an empty nest; libnl's does not. */
		assert_int_equal(nla_nest_end_keep_empty(msg, nest), 0);
	}
}

static int parse(struct nl_msg *msg, struct taproot_config *cfg)
{
	int err = tp_config_parse(nlmsg_hdr(msg), cfg);

	nlmsg_free(msg);
	return err;
}

static void assert_refused(struct nl_msg *msg, const char *needle)
{
	struct taproot_config cfg;
	int err = parse(msg, &cfg);

	assert_int_equal(err, -TAPROOT_EPROTO);
	if (!strstr(taproot_errmsg(err), needle))
		fail_msg("message '%s' does not mention '%s'", taproot_errmsg(err), needle);
}

static void config_valid_reply_parsed(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct taproot_config cfg;

	put_attrs(msg, 0, 2);
	assert_int_equal(parse(msg, &cfg), 0);
	assert_int_equal(cfg.set, TAPROOT_CONFIG_ALL);
	assert_int_equal(cfg.freq_hz, 99);
	assert_int_equal(cfg.kstack_depth, 64);
	assert_int_equal(cfg.ustack_bytes, 8192);
	assert_int_equal(cfg.events, TAPROOT_EV_SAMPLE | TAPROOT_EV_EXIT);
	assert_int_equal(cfg.flags, TAPROOT_CFG_F_SAMPLE_IDLE);
	assert_int_equal(cfg.ring_pages, 256);
	assert_int_equal(cfg.watermark, 4096);
	assert_int_equal(cfg.sched_one_in, 7);
	assert_int_equal(cfg.unwind_frames, 48);
	assert_int_equal(cfg.unwind_mem_mib, 128);
	assert_int_equal(cfg.nr_tgids, 2);
	assert_int_equal(cfg.tgids[0], 100);
	assert_int_equal(cfg.tgids[1], 101);
}

static void config_empty_tgids_is_whole_system(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct taproot_config cfg;

	put_attrs(msg, 0, 0);
	assert_int_equal(parse(msg, &cfg), 0);
	assert_int_equal(cfg.nr_tgids, 0);
}

static void config_missing_attribute_refused(void **state)
{
	static const struct { int type; const char *name; } required[] = {
		{ TAPROOT_A_CFG_FREQ_HZ, "CFG_FREQ_HZ" },
		{ TAPROOT_A_CFG_KSTACK_DEPTH, "CFG_KSTACK_DEPTH" },
		{ TAPROOT_A_CFG_USTACK_BYTES, "CFG_USTACK_BYTES" },
		{ TAPROOT_A_CFG_EVENTS, "CFG_EVENTS" },
		{ TAPROOT_A_CFG_FLAGS, "CFG_FLAGS" },
		{ TAPROOT_A_CFG_RING_PAGES, "CFG_RING_PAGES" },
		{ TAPROOT_A_CFG_WATERMARK, "CFG_WATERMARK" },
		{ TAPROOT_A_CFG_TGIDS, "CFG_TGIDS" },
		{ TAPROOT_A_CFG_SCHED_ONE_IN, "CFG_SCHED_ONE_IN" },
		{ TAPROOT_A_CFG_UNWIND_FRAMES, "CFG_UNWIND_FRAMES" },
		{ TAPROOT_A_CFG_UNWIND_MEM, "CFG_UNWIND_MEM" },
	};
	size_t i;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);

		put_attrs(msg, required[i].type, 1);
		assert_refused(msg, required[i].name);
	}
}

static void config_u32_wrong_length_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);

	put_attrs(msg, TAPROOT_A_CFG_WATERMARK, 1);
	assert_int_equal(nla_put_u64(msg, TAPROOT_A_CFG_WATERMARK, 4096), 0);
	assert_refused(msg, "CFG_WATERMARK of 8 bytes");
}

static void config_value_out_of_range_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);

	put_attrs(msg, TAPROOT_A_CFG_FREQ_HZ, 1);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_FREQ_HZ, TAPROOT_FREQ_MAX + 1), 0);
	assert_refused(msg, "freq 1001");
}

/* The module's unwind limits: within the ABI's, or the reply is refused. */
static void config_unwind_limits_out_of_range_refused(void **state)
{
	static const struct { int type; uint32_t value; const char *needle; } bad[] = {
		{ TAPROOT_A_CFG_UNWIND_FRAMES, 0, "unwind-frames 0: not in 1..127" },
		{ TAPROOT_A_CFG_UNWIND_FRAMES, TAPROOT_UNWIND_FRAMES_MAX + 1,
		  "unwind-frames 128" },
		{ TAPROOT_A_CFG_UNWIND_MEM, 0, "unwind-mem 0: not in 1..4096 MiB" },
		{ TAPROOT_A_CFG_UNWIND_MEM, TAPROOT_UNWIND_MEM_MAX + 1, "unwind-mem 4097" },
	};
	struct nl_msg *msg;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		msg = reply_new(TAPROOT_CMD_GET_CONFIG);
		put_attrs(msg, bad[i].type, 1);
		assert_int_equal(nla_put_u32(msg, bad[i].type, bad[i].value), 0);
		assert_refused(msg, bad[i].needle);
	}
	msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	put_attrs(msg, TAPROOT_A_CFG_UNWIND_MEM, 1);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_CFG_UNWIND_MEM, 1), 0);
	assert_refused(msg, "CFG_UNWIND_MEM of 1 bytes");
}

static void config_sched_one_in_out_of_range_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);

	put_attrs(msg, TAPROOT_A_CFG_SCHED_ONE_IN, 1);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_SCHED_ONE_IN, 0), 0);
	assert_refused(msg, "sched-one-in 0");
	msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	put_attrs(msg, TAPROOT_A_CFG_SCHED_ONE_IN, 1);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_SCHED_ONE_IN,
				     TAPROOT_SCHED_ONE_IN_MAX + 1), 0);
	assert_refused(msg, "sched-one-in 65537");
}

static void config_ring_pages_not_power_of_two_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);

	put_attrs(msg, TAPROOT_A_CFG_RING_PAGES, 1);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_RING_PAGES, 96), 0);
	assert_refused(msg, "ring-pages 96");
}

static void config_unknown_event_bits_kept(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct taproot_config cfg;

	put_attrs(msg, TAPROOT_A_CFG_EVENTS, 1);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_EVENTS, 1U << 20), 0);
	assert_int_equal(parse(msg, &cfg), 0);
	assert_int_equal(cfg.events, 1U << 20);
}

static void config_foreign_attribute_in_tgids_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct nlattr *nest;

	put_attrs(msg, TAPROOT_A_CFG_TGIDS, 0);
	nest = nla_nest_start(msg, TAPROOT_A_CFG_TGIDS);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_TGID, 5), 0);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_FREQ_HZ, 5), 0);
	nla_nest_end(msg, nest);
	assert_refused(msg, "CFG_FREQ_HZ of 4 bytes in CFG_TGIDS");
}

static void config_short_tgid_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct nlattr *nest;

	put_attrs(msg, TAPROOT_A_CFG_TGIDS, 0);
	nest = nla_nest_start(msg, TAPROOT_A_CFG_TGIDS);
	assert_int_equal(nla_put_u16(msg, TAPROOT_A_CFG_TGID, 5), 0);
	nla_nest_end(msg, nest);
	assert_refused(msg, "CFG_TGID of 2 bytes");
}

static void config_too_many_tgids_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);

	put_attrs(msg, 0, TAPROOT_MAX_TGIDS + 1);
	assert_refused(msg, "more than 64 CFG_TGID");
}

static void config_max_tgids_accepted(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct taproot_config cfg;

	put_attrs(msg, 0, TAPROOT_MAX_TGIDS);
	assert_int_equal(parse(msg, &cfg), 0);
	assert_int_equal(cfg.nr_tgids, TAPROOT_MAX_TGIDS);
	assert_int_equal(cfg.tgids[TAPROOT_MAX_TGIDS - 1], 100 + TAPROOT_MAX_TGIDS - 1);
}

static void config_zero_tgid_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct nlattr *nest;

	put_attrs(msg, TAPROOT_A_CFG_TGIDS, 0);
	nest = nla_nest_start(msg, TAPROOT_A_CFG_TGIDS);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_CFG_TGID, 0), 0);
	nla_nest_end(msg, nest);
	assert_refused(msg, "0 is not a process id");
}

static void config_truncated_attribute_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);
	struct nlattr bad = { .nla_len = 64, .nla_type = TAPROOT_A_CFG_FREQ_HZ };

	put_attrs(msg, 0, 1);
	assert_int_equal(nlmsg_append(msg, &bad, sizeof(bad), NLMSG_ALIGNTO), 0);
	assert_refused(msg, "after the last whole attribute");
}

static void config_wrong_command_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_INFO);

	put_attrs(msg, 0, 1);
	assert_refused(msg, "carries command");
}

/* ------------------------------------------------------------ request */

/* Build a SET_CONFIG request from @cfg and parse it back as GET_CONFIG would. */
static struct nl_msg *request_of(const struct taproot_config *cfg)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_SET_CONFIG);

	assert_int_equal(tp_config_fill(msg, cfg), 0);
	return msg;
}

static void config_fill_sends_only_set_fields(void **state)
{
	struct taproot_config cfg = {
		.set = TAPROOT_CONFIG_FREQ | TAPROOT_CONFIG_TGIDS,
		.freq_hz = 99, .kstack_depth = 5, .nr_tgids = 2, .tgids = { 7, 9 },
	};
	struct nl_msg *msg = request_of(&cfg);
	struct genlmsghdr *gh = genlmsg_hdr(nlmsg_hdr(msg));
	struct nlattr *head = genlmsg_attrdata(gh, 0), *a, *t;
	int len = genlmsg_attrlen(gh, 0), rem, trem, n = 0, nt = 0;

	nla_for_each_attr(a, head, len, rem) {
		n++;
		if (nla_type(a) == TAPROOT_A_CFG_FREQ_HZ) {
			assert_int_equal(nla_get_u32(a), 99);
			continue;
		}
		assert_int_equal(nla_type(a), TAPROOT_A_CFG_TGIDS);
		nla_for_each_nested(t, a, trem) {
			assert_int_equal(nla_type(t), TAPROOT_A_CFG_TGID);
			assert_int_equal(nla_get_u32(t), cfg.tgids[nt]);
			nt++;
		}
	}
	assert_int_equal(n, 2);
	assert_int_equal(nt, 2);
	nlmsg_free(msg);
}

static void config_fill_sends_sched_one_in(void **state)
{
	struct taproot_config cfg = {
		.set = TAPROOT_CONFIG_SCHED_ONE_IN, .sched_one_in = 64,
	};
	struct nl_msg *msg = request_of(&cfg);
	struct genlmsghdr *gh = genlmsg_hdr(nlmsg_hdr(msg));
	struct nlattr *a = nla_find(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
				    TAPROOT_A_CFG_SCHED_ONE_IN);

	assert_non_null(a);
	assert_int_equal(nla_get_u32(a), 64);
	assert_null(nla_find(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			     TAPROOT_A_CFG_FREQ_HZ));
	nlmsg_free(msg);
}

static void config_fill_sends_unwind_limits(void **state)
{
	struct taproot_config cfg = {
		.set = TAPROOT_CONFIG_UNWIND_FRAMES | TAPROOT_CONFIG_UNWIND_MEM,
		.unwind_frames = 127, .unwind_mem_mib = 4096, .freq_hz = 5,
	};
	struct nl_msg *msg = request_of(&cfg);
	struct genlmsghdr *gh = genlmsg_hdr(nlmsg_hdr(msg));
	struct nlattr *head = genlmsg_attrdata(gh, 0), *a;
	int len = genlmsg_attrlen(gh, 0), rem, n = 0;

	nla_for_each_attr(a, head, len, rem) {
		n++;
		if (nla_type(a) == TAPROOT_A_CFG_UNWIND_FRAMES)
			assert_int_equal(nla_get_u32(a), 127);
		else if (nla_type(a) == TAPROOT_A_CFG_UNWIND_MEM)
			assert_int_equal(nla_get_u32(a), 4096);
		else
			fail_msg("attribute %d sent", nla_type(a));
	}
	assert_int_equal(n, 2);
	nlmsg_free(msg);
}

static void config_fill_all_is_empty_nest(void **state)
{
	struct taproot_config cfg = { .set = TAPROOT_CONFIG_TGIDS, .nr_tgids = 0 };
	struct nl_msg *msg = request_of(&cfg);
	struct genlmsghdr *gh = genlmsg_hdr(nlmsg_hdr(msg));
	struct nlattr *a = nla_find(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
				    TAPROOT_A_CFG_TGIDS);

	assert_non_null(a);
	assert_int_equal(nla_len(a), 0);
	nlmsg_free(msg);
}

static void config_check_refuses_out_of_range(void **state)
{
	struct taproot_config cfg = { .set = TAPROOT_CONFIG_USTACK, .ustack_bytes = 12 };

	assert_int_equal(tp_config_check(&cfg, -EINVAL, "x"), -EINVAL);
	cfg.ustack_bytes = 16;
	assert_int_equal(tp_config_check(&cfg, -EINVAL, "x"), 0);
	cfg.set = 1U << 12;
	assert_int_equal(tp_config_check(&cfg, -EINVAL, "x"), -EINVAL);
	cfg = (struct taproot_config){ .set = TAPROOT_CONFIG_UNWIND_FRAMES, .unwind_frames = 0 };
	assert_int_equal(tp_config_check(&cfg, -EINVAL, "set config"), -EINVAL);
	assert_non_null(strstr(taproot_errmsg(-EINVAL), "set config: unwind-frames 0"));
	cfg.unwind_frames = TAPROOT_UNWIND_FRAMES_MAX;
	assert_int_equal(tp_config_check(&cfg, -EINVAL, "x"), 0);
	cfg = (struct taproot_config){ .set = TAPROOT_CONFIG_UNWIND_MEM, .unwind_mem_mib = 4097 };
	assert_int_equal(tp_config_check(&cfg, -EINVAL, "x"), -EINVAL);
	assert_non_null(strstr(taproot_errmsg(-EINVAL), "unwind-mem 4097"));
	cfg.unwind_mem_mib = 1;
	assert_int_equal(tp_config_check(&cfg, -EINVAL, "x"), 0);
}

/* The module's limits on unwinding are refused out of range before sending. */
static void config_set_refuses_unwind_limits_unsent(void **state)
{
	struct taproot_config cfg = {
		.set = TAPROOT_CONFIG_UNWIND_MEM, .unwind_mem_mib = 0,
	};

	/* No connection needed: the check comes first. */
	assert_int_equal(taproot_nl_set_config(NULL, &cfg), -EINVAL);
	assert_non_null(strstr(taproot_errmsg(-EINVAL), "unwind-mem 0"));
}

/* ------------------------------------------------------------ KEY VALUE */

static void assert_kv_refused(const char *key, const char *value, const char *needle)
{
	struct taproot_config cfg = { 0 };
	int err = taproot_config_set_kv(&cfg, key, value);

	assert_int_equal(err, -EINVAL);
	assert_int_equal(cfg.set, 0);
	if (!strstr(taproot_errmsg(err), needle))
		fail_msg("message '%s' does not mention '%s'", taproot_errmsg(err), needle);
}

static void config_kv_every_key_parsed(void **state)
{
	struct taproot_config cfg = { 0 };

	assert_int_equal(taproot_config_set_kv(&cfg, "freq", "99"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "kstack", "0"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "ustack", "65536"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "events", "sample,fork,exit"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "idle", "on"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "ring-pages", "16384"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "watermark", "1"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "pids", "1,42,4194304"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "sched-one-in", "65536"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "unwind-frames", "127"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "unwind-mem", "1"), 0);
	assert_int_equal(cfg.set, TAPROOT_CONFIG_ALL);
	assert_int_equal(cfg.unwind_frames, 127);
	assert_int_equal(cfg.unwind_mem_mib, 1);
	assert_int_equal(cfg.sched_one_in, 65536);
	assert_int_equal(cfg.freq_hz, 99);
	assert_int_equal(cfg.kstack_depth, 0);
	assert_int_equal(cfg.ustack_bytes, 65536);
	assert_int_equal(cfg.events, TAPROOT_EV_SAMPLE | TAPROOT_EV_FORK | TAPROOT_EV_EXIT);
	assert_int_equal(cfg.flags, TAPROOT_CFG_F_SAMPLE_IDLE);
	assert_int_equal(cfg.ring_pages, 16384);
	assert_int_equal(cfg.watermark, 1);
	assert_int_equal(cfg.nr_tgids, 3);
	assert_int_equal(cfg.tgids[2], 4194304);
}

/* Each flag key is one bit: the others are left to the module's. */
/* The module's unwinding: three more flag keys, on by default in the module. */
static void config_kv_unwind_flags(void **state)
{
	struct taproot_config cfg = { 0 };

	assert_int_equal(taproot_config_set_kv(&cfg, "unwind", "off"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "ustack-private", "on"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "unwind-verify", "on"), 0);
	assert_int_equal(cfg.flags, TAPROOT_CFG_F_USTACK_PRIVATE | TAPROOT_CFG_F_UNWIND_VERIFY);
	assert_int_equal(cfg.flags_given, TAPROOT_CFG_F_UNWIND | TAPROOT_CFG_F_USTACK_PRIVATE |
					  TAPROOT_CFG_F_UNWIND_VERIFY);
	assert_int_equal(taproot_config_set_kv(&cfg, "unwind", "on"), -EINVAL);
	assert_int_equal(taproot_config_set_kv(&cfg, "unwind-verify", "maybe"), -EINVAL);
}

static void config_kv_flag_bits(void **state)
{
	struct taproot_config cfg = { 0 }, fresh = { 0 };

	assert_int_equal(taproot_config_set_kv(&cfg, "follow", "on"), 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "idle", "off"), 0);
	assert_int_equal(cfg.set, TAPROOT_CONFIG_FLAGS);
	assert_int_equal(cfg.flags, TAPROOT_CFG_F_FOLLOW);
	assert_int_equal(cfg.flags_given, TAPROOT_CFG_F_FOLLOW | TAPROOT_CFG_F_SAMPLE_IDLE);
	assert_int_equal(taproot_config_set_kv(&cfg, "follow", "off"), -EINVAL);
	assert_non_null(strstr(taproot_errmsg(-EINVAL), "given twice"));
	assert_int_equal(cfg.flags, TAPROOT_CFG_F_FOLLOW);
	assert_int_equal(taproot_config_set_kv(&fresh, "follow", "yes"), -EINVAL);
	assert_non_null(strstr(taproot_errmsg(-EINVAL), "follow 'yes'"));
	assert_int_equal(fresh.set, 0);
	assert_int_equal(fresh.flags_given, 0);
}

static void config_kv_all_and_none(void **state)
{
	struct taproot_config cfg = { 0 };

	assert_int_equal(taproot_config_set_kv(&cfg, "events", "all"), 0);
	assert_int_equal(cfg.events, TAPROOT_EV_ALL);
	assert_int_equal(taproot_config_set_kv(&cfg, "pids", "all"), 0);
	assert_int_equal(cfg.nr_tgids, 0);
	assert_true(cfg.set & TAPROOT_CONFIG_TGIDS);
	cfg.set = 0;
	assert_int_equal(taproot_config_set_kv(&cfg, "events", "none"), 0);
	assert_int_equal(cfg.events, 0);
	assert_int_equal(taproot_config_set_kv(&cfg, "idle", "off"), 0);
	assert_int_equal(cfg.flags, 0);
}

static void config_kv_bad_numbers_refused(void **state)
{
	assert_kv_refused("freq", "0", "not in 1..1000");
	assert_kv_refused("freq", "1001", "not in 1..1000");
	assert_kv_refused("freq", "-5", "not a decimal number");
	assert_kv_refused("freq", "+5", "not a decimal number");
	assert_kv_refused("freq", " 5", "not a decimal number");
	assert_kv_refused("freq", "5hz", "not a decimal number");
	assert_kv_refused("freq", "", "not a decimal number");
	assert_kv_refused("freq", "99999999999999999999999", "not in");
	assert_kv_refused("kstack", "128", "not in 0..127");
	assert_kv_refused("ustack", "12", "not a multiple of 8");
	assert_kv_refused("ustack", "65544", "not in 0..65536");
	assert_kv_refused("ring-pages", "3", "not a power of two");
	assert_kv_refused("ring-pages", "1", "not in 2..16384");
	assert_kv_refused("ring-pages", "32768", "not in 2..16384");
	assert_kv_refused("watermark", "0", "not in 1..");
	assert_kv_refused("sched-one-in", "0", "not in 1..65536");
	assert_kv_refused("sched-one-in", "65537", "not in 1..65536");
	assert_kv_refused("sched-one-in", "1/8", "not a decimal number");
	assert_kv_refused("unwind-frames", "0", "unwind-frames '0': not in 1..127");
	assert_kv_refused("unwind-frames", "128", "not in 1..127");
	assert_kv_refused("unwind-frames", "64k", "not a decimal number");
	assert_kv_refused("unwind-mem", "0", "unwind-mem '0': not in 1..4096");
	assert_kv_refused("unwind-mem", "4097", "not in 1..4096");
	assert_kv_refused("unwind-mem", "256M", "not a decimal number");
}

static void config_kv_bad_words_refused(void **state)
{
	assert_kv_refused("frequency", "99", "unknown key 'frequency'");
	assert_kv_refused("events", "sample,,exit", "unknown event ''");
	assert_kv_refused("events", "sample,bogus", "unknown event 'bogus'");
	assert_kv_refused("events", "", "unknown event ''");
	assert_kv_refused("idle", "yes", "not 'on' or 'off'");
	assert_kv_refused("pids", "0", "not in 1..");
	assert_kv_refused("pids", "5,5", "5 given twice");
	assert_kv_refused("pids", "5,", "not a decimal number");
	assert_kv_refused("pids", "", "not a decimal number");
}

static void config_kv_too_many_pids_refused(void **state)
{
	char list[1024] = "";
	size_t off = 0;
	int i;

	for (i = 1; i <= TAPROOT_MAX_TGIDS + 1; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d",
					i > 1 ? "," : "", i);
	assert_kv_refused("pids", list, "more than 64 processes");
}

static void config_kv_key_twice_refused(void **state)
{
	struct taproot_config cfg = { 0 };
	int err;

	assert_int_equal(taproot_config_set_kv(&cfg, "freq", "99"), 0);
	err = taproot_config_set_kv(&cfg, "freq", "100");
	assert_int_equal(err, -EINVAL);
	assert_string_equal(taproot_errmsg(err), "'freq' given twice");
	assert_int_equal(cfg.freq_hz, 99);
}

static void config_kv_refusal_leaves_config_unchanged(void **state)
{
	struct taproot_config cfg = { 0 }, before;

	assert_int_equal(taproot_config_set_kv(&cfg, "pids", "3,4"), 0);
	cfg.set = 0;
	before = cfg;
	assert_int_equal(taproot_config_set_kv(&cfg, "pids", "8,9,0"), -EINVAL);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(config_valid_reply_parsed),
		cmocka_unit_test(config_empty_tgids_is_whole_system),
		cmocka_unit_test(config_missing_attribute_refused),
		cmocka_unit_test(config_u32_wrong_length_refused),
		cmocka_unit_test(config_value_out_of_range_refused),
		cmocka_unit_test(config_sched_one_in_out_of_range_refused),
		cmocka_unit_test(config_unwind_limits_out_of_range_refused),
		cmocka_unit_test(config_fill_sends_unwind_limits),
		cmocka_unit_test(config_set_refuses_unwind_limits_unsent),
		cmocka_unit_test(config_fill_sends_sched_one_in),
		cmocka_unit_test(config_ring_pages_not_power_of_two_refused),
		cmocka_unit_test(config_unknown_event_bits_kept),
		cmocka_unit_test(config_foreign_attribute_in_tgids_refused),
		cmocka_unit_test(config_short_tgid_refused),
		cmocka_unit_test(config_too_many_tgids_refused),
		cmocka_unit_test(config_max_tgids_accepted),
		cmocka_unit_test(config_zero_tgid_refused),
		cmocka_unit_test(config_truncated_attribute_refused),
		cmocka_unit_test(config_wrong_command_refused),
		cmocka_unit_test(config_fill_sends_only_set_fields),
		cmocka_unit_test(config_fill_all_is_empty_nest),
		cmocka_unit_test(config_check_refuses_out_of_range),
		cmocka_unit_test(config_kv_every_key_parsed),
		cmocka_unit_test(config_kv_all_and_none),
		cmocka_unit_test(config_kv_flag_bits),
		cmocka_unit_test(config_kv_unwind_flags),
		cmocka_unit_test(config_kv_bad_numbers_refused),
		cmocka_unit_test(config_kv_bad_words_refused),
		cmocka_unit_test(config_kv_too_many_pids_refused),
		cmocka_unit_test(config_kv_key_twice_refused),
		cmocka_unit_test(config_kv_refusal_leaves_config_unchanged),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
