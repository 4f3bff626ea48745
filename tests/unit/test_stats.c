// SPDX-License-Identifier: GPL-2.0
/*
 * The GET_STATS reply parser and the NOTIFY parser, fed with libnl-built
 * messages laid out as the kernel builds them (64-bit counters after a PAD
 * attribute where alignment asks for one), valid and malformed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "kernel/kernel-private.h"

#define FAMILY	0x1c

static struct nl_msg *reply_new(uint8_t cmd)
{
	/* Room for a hundred CPUs, as the kernel's genlmsg_new() may give. */
	struct nl_msg *msg = nlmsg_alloc_size(65536);

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 1234, 7, FAMILY, 0, 0, cmd,
				    TAPROOT_GENL_VERSION));
	return msg;
}

/*
 * A STAT_UNWIND nest as the kernel builds it: padding (type 0) before
 * each u64, the counter of taproot_kunwind k (type k + 1) cpu*1000+k; all
 * but the one of type @skip.
 */
static void put_unwind(struct nl_msg *msg, uint32_t cpu, int skip)
{
	struct nlattr *nest = nla_nest_start(msg, TAPROOT_A_STAT_UNWIND);
	int k;

	assert_non_null(nest);
	for (k = 0; k < TAPROOT_KUNWIND_NR; k++) {
		if (k + 1 == skip)
			continue;
		assert_int_equal(nla_put(msg, 0, 0, NULL), 0);
		assert_int_equal(nla_put_u64(msg, k + 1, cpu * 1000 + (uint64_t)k), 0);
	}
	nla_nest_end(msg, nest);
}

/*
 * A STATS_CPU nest for @cpu with counters cpu*10+1.., all but @skip, and
 * a whole STAT_UNWIND nest.
 */
static void put_cpu(struct nl_msg *msg, uint32_t cpu, int skip)
{
	struct nlattr *nest = nla_nest_start(msg, TAPROOT_A_STATS_CPU);
	int t;

	assert_non_null(nest);
	if (skip != TAPROOT_A_STAT_CPU)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_STAT_CPU, cpu), 0);
	if (skip != TAPROOT_A_STAT_UNWIND)
		put_unwind(msg, cpu, 0);
	for (t = TAPROOT_A_STAT_SAMPLES; t <= TAPROOT_A_STAT_MAX; t++) {
		if (t == skip || t == TAPROOT_A_STAT_PAD || t == TAPROOT_A_STAT_UNWIND)
			continue;
		/* nla_put_u64_64bit() pads like this when misaligned. */
		assert_int_equal(nla_put(msg, TAPROOT_A_STAT_PAD, 0, NULL), 0);
		assert_int_equal(nla_put_u64(msg, t, cpu * 10 + (uint64_t)t), 0);
	}
	nla_nest_end(msg, nest);
}

static int parse(struct nl_msg *msg, struct tp_stats *st)
{
	int err = tp_stats_parse(nlmsg_hdr(msg), st);

	nlmsg_free(msg);
	return err;
}

static void assert_refused(struct nl_msg *msg, const char *needle)
{
	struct tp_stats st = { 0 };
	int err = parse(msg, &st);

	free(st.cpus);
	assert_int_equal(err, -TAPROOT_EPROTO);
	if (!strstr(taproot_errmsg(err), needle))
		fail_msg("message '%s' does not mention '%s'", taproot_errmsg(err), needle);
}

static void stats_valid_reply_parsed_and_sorted(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);
	struct tp_stats st = { 0 };

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	put_cpu(msg, 3, 0);
	put_cpu(msg, 0, 0);
	assert_int_equal(parse(msg, &st), 0);
	assert_int_equal(tp_stats_finish(&st), 0);
	assert_true(st.running);
	assert_int_equal(st.nr, 2);
	assert_int_equal(st.cpus[0].cpu, 0);
	assert_int_equal(st.cpus[1].cpu, 3);
	assert_int_equal(st.cpus[1].samples, 30 + TAPROOT_A_STAT_SAMPLES);
	assert_int_equal(st.cpus[1].records, 30 + TAPROOT_A_STAT_RECORDS);
	assert_int_equal(st.cpus[1].bytes, 30 + TAPROOT_A_STAT_BYTES);
	assert_int_equal(st.cpus[1].lost_full, 30 + TAPROOT_A_STAT_LOST_FULL);
	assert_int_equal(st.cpus[1].lost_nested, 30 + TAPROOT_A_STAT_LOST_NESTED);
	assert_int_equal(st.cpus[1].ustack_faults, 30 + TAPROOT_A_STAT_USTACK_FAULTS);
	assert_int_equal(st.cpus[1].switches, 30 + TAPROOT_A_STAT_SWITCHES);
	assert_int_equal(st.cpus[1].switches_selected,
			 30 + TAPROOT_A_STAT_SWITCHES_SELECTED);
	assert_int_equal(st.cpus[1].wakings, 30 + TAPROOT_A_STAT_WAKINGS);
	assert_int_equal(st.cpus[1].stacks, 30 + TAPROOT_A_STAT_STACKS);
	assert_int_equal(st.cpus[1].stack_refs, 30 + TAPROOT_A_STAT_STACK_REFS);
	assert_int_equal(st.cpus[1].unwind[TAPROOT_KUNWIND_NONE], 3000);
	assert_int_equal(st.cpus[1].unwind[TAPROOT_KUNWIND_COMPLETE], 3001);
	assert_int_equal(st.cpus[1].unwind[TAPROOT_KUNWIND_BAD_FRAME],
			 3000 + TAPROOT_KUNWIND_BAD_FRAME);
	assert_int_equal(st.cpus[0].unwind[TAPROOT_KUNWIND_NO_PROC], TAPROOT_KUNWIND_NO_PROC);
	free(st.cpus);
}

/* Opens a STATS_CPU nest with every counter but STAT_UNWIND, each 1. */
static struct nlattr *put_cpu_but_unwind(struct nl_msg *msg, uint32_t cpu)
{
	struct nlattr *nest = nla_nest_start(msg, TAPROOT_A_STATS_CPU);

	assert_non_null(nest);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_STAT_CPU, cpu), 0);
	for (int t = TAPROOT_A_STAT_SAMPLES; t <= TAPROOT_A_STAT_MAX; t++)
		if (t != TAPROOT_A_STAT_PAD && t != TAPROOT_A_STAT_UNWIND)
			assert_int_equal(nla_put_u64(msg, t, 1), 0);
	return nest;
}

/* STAT_UNWIND: a u64 per taproot_kunwind, none missing, exact lengths. */
static void stats_unwind_nest(void **state)
{
	struct tp_stats st = { 0 };
	struct nl_msg *msg;
	struct nlattr *cpu, *nest;
	int k;

	/* Each counter missing in turn: refused, named. */
	for (k = 0; k < TAPROOT_KUNWIND_NR; k++) {
		char needle[64];

		msg = reply_new(TAPROOT_CMD_GET_STATS);
		assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
		cpu = put_cpu_but_unwind(msg, 0);
		put_unwind(msg, 0, k + 1);
		nla_nest_end(msg, cpu);
		snprintf(needle, sizeof(needle), "STAT_UNWIND lacks the counter %s",
			 taproot_kunwind_name((unsigned int)k));
		assert_refused(msg, needle);
	}

	/* A counter of 4 bytes; garbage after the last attribute. */
	msg = reply_new(TAPROOT_CMD_GET_STATS);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	cpu = put_cpu_but_unwind(msg, 0);
	nest = nla_nest_start(msg, TAPROOT_A_STAT_UNWIND);
	assert_int_equal(nla_put_u32(msg, TAPROOT_KUNWIND_STALE + 1, 1), 0);
	nla_nest_end(msg, nest);
	nla_nest_end(msg, cpu);
	assert_refused(msg, "get stats (STAT_UNWIND): attribute stale of 4 bytes");

	msg = reply_new(TAPROOT_CMD_GET_STATS);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	cpu = put_cpu_but_unwind(msg, 0);
	nest = nla_nest_start(msg, TAPROOT_A_STAT_UNWIND);
	{
		struct nlattr bad = { .nla_len = 40, .nla_type = 1 };

		assert_int_equal(nlmsg_append(msg, &bad, sizeof(bad), NLMSG_ALIGNTO), 0);
	}
	nla_nest_end(msg, nest);
	nla_nest_end(msg, cpu);
	assert_refused(msg, "after the last whole attribute");

	/* A type past the last taproot_kunwind is skipped, as elsewhere. */
	msg = reply_new(TAPROOT_CMD_GET_STATS);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 0), 0);
	cpu = put_cpu_but_unwind(msg, 1);
	nest = nla_nest_start(msg, TAPROOT_A_STAT_UNWIND);
	for (k = TAPROOT_KUNWIND_NR; k >= 0; k--)
		assert_int_equal(nla_put_u64(msg, k + 1, 100 + (uint64_t)k), 0);
	nla_nest_end(msg, nest);
	nla_nest_end(msg, cpu);
	assert_int_equal(parse(msg, &st), 0);
	assert_int_equal(st.nr, 1);
	assert_int_equal(st.cpus[0].unwind[TAPROOT_KUNWIND_COMPLETE], 101);
	assert_int_equal(st.cpus[0].unwind[TAPROOT_KUNWIND_NR - 1], 100 + TAPROOT_KUNWIND_NR - 1);
	assert_int_equal(st.cpus[0].stack_refs, 1);
	free(st.cpus);
}

/* FOLLOWED and FOLLOW_FULL, the module's own counters: both or neither. */
static void stats_follow_counters(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);
	struct tp_stats st = { 0 };

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_FOLLOWED, 7), 0);
	assert_int_equal(nla_put(msg, TAPROOT_A_PAD, 0, NULL), 0);
	assert_int_equal(nla_put_u64(msg, TAPROOT_A_FOLLOW_FULL, 12), 0);
	put_cpu(msg, 0, 0);
	assert_int_equal(parse(msg, &st), 0);
	assert_int_equal(tp_stats_finish(&st), 0);
	assert_true(st.module.has_follow);
	assert_int_equal(st.module.followed, 7);
	assert_int_equal(st.module.follow_full, 12);
	free(st.cpus);

	msg = reply_new(TAPROOT_CMD_GET_STATS);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_FOLLOWED, 7), 0);
	put_cpu(msg, 0, 0);
	assert_refused(msg, "FOLLOW_FULL");

	msg = reply_new(TAPROOT_CMD_GET_STATS);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	assert_int_equal(nla_put_u64(msg, TAPROOT_A_FOLLOW_FULL, 1), 0);
	put_cpu(msg, 0, 0);
	assert_refused(msg, "FOLLOWED");

	msg = reply_new(TAPROOT_CMD_GET_STATS);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	assert_int_equal(nla_put_u8(msg, TAPROOT_A_FOLLOWED, 7), 0);
	assert_int_equal(nla_put_u64(msg, TAPROOT_A_FOLLOW_FULL, 1), 0);
	put_cpu(msg, 0, 0);
	assert_refused(msg, "");
}

static void stats_split_reply_accumulates(void **state)
{
	struct nl_msg *a = reply_new(TAPROOT_CMD_GET_STATS);
	struct nl_msg *b = reply_new(TAPROOT_CMD_GET_STATS);
	struct tp_stats st = { 0 };

	assert_int_equal(nla_put_u8(a, TAPROOT_A_RUNNING, 0), 0);
	put_cpu(a, 0, 0);
	put_cpu(b, 1, 0);
	assert_int_equal(parse(a, &st), 0);
	assert_int_equal(parse(b, &st), 0);
	assert_int_equal(tp_stats_finish(&st), 0);
	assert_false(st.running);
	assert_int_equal(st.nr, 2);
	free(st.cpus);
}

static void stats_many_cpus_grow(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);
	struct tp_stats st = { 0 };
	uint32_t cpu;

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	for (cpu = 0; cpu < 100; cpu++)
		put_cpu(msg, 99 - cpu, 0);
	assert_int_equal(parse(msg, &st), 0);
	assert_int_equal(tp_stats_finish(&st), 0);
	assert_int_equal(st.nr, 100);
	for (cpu = 0; cpu < 100; cpu++)
		assert_int_equal(st.cpus[cpu].cpu, cpu);
	free(st.cpus);
}

static void stats_missing_counter_refused(void **state)
{
	int t;

	for (t = TAPROOT_A_STAT_CPU; t <= TAPROOT_A_STAT_MAX; t++) {
		struct nl_msg *msg;
		char name[24];

		if (t == TAPROOT_A_STAT_PAD)
			continue;
		msg = reply_new(TAPROOT_CMD_GET_STATS);
		assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
		put_cpu(msg, 0, t);
		assert_refused(msg, tp_nl_stat_attr_name(t, name, sizeof(name)));
	}
}

static void stats_counter_wrong_length_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);
	struct nlattr *nest;

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	nest = nla_nest_start(msg, TAPROOT_A_STATS_CPU);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_STAT_CPU, 0), 0);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_STAT_BYTES, 7), 0);
	nla_nest_end(msg, nest);
	assert_refused(msg, "STAT_BYTES of 4 bytes");
}

static void stats_garbage_in_nest_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);
	struct nlattr bad = { .nla_len = 40, .nla_type = TAPROOT_A_STAT_SAMPLES };
	struct nlattr *nest;

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	nest = nla_nest_start(msg, TAPROOT_A_STATS_CPU);
	assert_int_equal(nla_put_u32(msg, TAPROOT_A_STAT_CPU, 0), 0);
	assert_int_equal(nlmsg_append(msg, &bad, sizeof(bad), NLMSG_ALIGNTO), 0);
	nla_nest_end(msg, nest);
	assert_refused(msg, "after the last whole attribute");
}

static void stats_duplicate_cpu_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 1), 0);
	put_cpu(msg, 2, 0);
	put_cpu(msg, 2, 0);
	assert_refused(msg, "CPU 2 given twice");
}

static void stats_running_not_boolean_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 7), 0);
	put_cpu(msg, 0, 0);
	assert_refused(msg, "RUNNING is 7");
}

static void stats_missing_running_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);
	struct tp_stats st = { 0 };
	int err;

	put_cpu(msg, 0, 0);
	assert_int_equal(parse(msg, &st), 0);
	err = tp_stats_finish(&st);
	free(st.cpus);
	assert_int_equal(err, -TAPROOT_EPROTO);
	assert_non_null(strstr(taproot_errmsg(err), "lacks attribute RUNNING"));
}

static void stats_no_cpu_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_STATS);
	struct tp_stats st = { 0 };
	int err;

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 0), 0);
	assert_int_equal(parse(msg, &st), 0);
	err = tp_stats_finish(&st);
	assert_int_equal(err, -TAPROOT_EPROTO);
	assert_non_null(strstr(taproot_errmsg(err), "no STATS_CPU"));
}

static void stats_wrong_command_refused(void **state)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_GET_CONFIG);

	assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, 0), 0);
	assert_refused(msg, "carries command");
}

/* ------------------------------------------------------------ notify */

static int notify(uint32_t what, int running_len, uint8_t running,
		  struct taproot_notification *n)
{
	struct nl_msg *msg = reply_new(TAPROOT_CMD_NOTIFY);
	uint32_t r32 = running;
	int err;

	if (what)
		assert_int_equal(nla_put_u32(msg, TAPROOT_A_NOTIFY, what), 0);
	if (running_len == 1)
		assert_int_equal(nla_put_u8(msg, TAPROOT_A_RUNNING, running), 0);
	else if (running_len == 4)
		assert_int_equal(nla_put(msg, TAPROOT_A_RUNNING, 4, &r32), 0);
	err = tp_notify_parse(nlmsg_hdr(msg), n);
	nlmsg_free(msg);
	return err;
}

static void notify_valid_parsed(void **state)
{
	struct taproot_notification n;

	assert_int_equal(notify(TAPROOT_NOTIFY_STARTED, 1, 1, &n), 0);
	assert_int_equal(n.what, TAPROOT_NOTIFY_STARTED);
	assert_true(n.running);
	assert_int_equal(notify(TAPROOT_NOTIFY_CONFIG, 1, 0, &n), 0);
	assert_int_equal(n.what, TAPROOT_NOTIFY_CONFIG);
	assert_false(n.running);
}

static void notify_malformed_refused(void **state)
{
	struct taproot_notification n;

	assert_int_equal(notify(0, 1, 1, &n), -TAPROOT_EPROTO);
	assert_int_equal(notify(TAPROOT_NOTIFY_STOPPED, 0, 0, &n), -TAPROOT_EPROTO);
	assert_int_equal(notify(TAPROOT_NOTIFY_STOPPED, 4, 0, &n), -TAPROOT_EPROTO);
	assert_int_equal(notify(TAPROOT_NOTIFY_STOPPED, 1, 2, &n), -TAPROOT_EPROTO);
	assert_int_equal(notify(TAPROOT_NOTIFY_CONFIG + 1, 1, 0, &n), -TAPROOT_EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stats_valid_reply_parsed_and_sorted),
		cmocka_unit_test(stats_unwind_nest),
		cmocka_unit_test(stats_split_reply_accumulates),
		cmocka_unit_test(stats_many_cpus_grow),
		cmocka_unit_test(stats_follow_counters),
		cmocka_unit_test(stats_missing_counter_refused),
		cmocka_unit_test(stats_counter_wrong_length_refused),
		cmocka_unit_test(stats_garbage_in_nest_refused),
		cmocka_unit_test(stats_duplicate_cpu_refused),
		cmocka_unit_test(stats_running_not_boolean_refused),
		cmocka_unit_test(stats_missing_running_refused),
		cmocka_unit_test(stats_no_cpu_refused),
		cmocka_unit_test(stats_wrong_command_refused),
		cmocka_unit_test(notify_valid_parsed),
		cmocka_unit_test(notify_malformed_refused),
	};

	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
