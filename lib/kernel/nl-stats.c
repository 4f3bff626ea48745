// SPDX-License-Identifier: GPL-2.0
/*
 * TAPROOT_CMD_GET_STATS: the module's per-CPU counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "kernel/kernel-private.h"

/* More CPUs than any kernel allows (NR_CPUS is at most 8192 today). */
#define TP_STATS_MAX_CPUS	65536

_Static_assert(TAPROOT_STATS_KUNWIND_NR == TAPROOT_KUNWIND_NR,
	       "taproot_cpu_stats.unwind holds one counter per taproot_kunwind");

static struct nla_policy tp_stats_policy[TAPROOT_A_MAX + 1] = {
	[TAPROOT_A_RUNNING]   = { .type = NLA_U8, .maxlen = sizeof(uint8_t) },
	[TAPROOT_A_FOLLOWED]  = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_FOLLOW_FULL] = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_UNWIND_MEM_USED] = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_UNWIND_TABLES] = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_UNWIND_PROCS] = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	/* Each nest is parsed by its own policy below. */
	[TAPROOT_A_STATS_CPU] = { .type = NLA_UNSPEC },
};

static struct nla_policy tp_stat_policy[TAPROOT_A_STAT_MAX + 1] = {
	[TAPROOT_A_STAT_CPU]	       = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_STAT_SAMPLES]       = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_RECORDS]       = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_BYTES]	       = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_LOST_FULL]     = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_LOST_NESTED]   = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_USTACK_FAULTS] = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_SWITCHES]      = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_SWITCHES_SELECTED] = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_WAKINGS]       = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	/* Parsed by tp_stat_unwind_policy below. */
	[TAPROOT_A_STAT_UNWIND]	       = { .type = NLA_UNSPEC },
	[TAPROOT_A_STAT_STACKS]	       = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_STACK_REFS]    = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_PY_WALKS]      = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_PY_FRAMES]     = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_PY_CUT]        = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_COUNTED]       = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_STAT_COUNT_FULL]    = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
};

/*
 * Inside STAT_UNWIND: the counter of taproot_kunwind K is attribute K + 1;
 * type 0 is the kernel's padding.
 */
#define TP_U64	{ .type = NLA_U64, .maxlen = sizeof(uint64_t) }
static struct nla_policy tp_stat_unwind_policy[TAPROOT_KUNWIND_NR + 1] = {
	[1] = TP_U64, [2] = TP_U64, [3] = TP_U64, [4] = TP_U64, [5] = TP_U64,
	[6] = TP_U64, [7] = TP_U64, [8] = TP_U64, [9] = TP_U64, [10] = TP_U64,
};
#undef TP_U64
_Static_assert(TAPROOT_KUNWIND_NR == 10, "a policy entry per taproot_kunwind");

/*
 * "no-proc", "#12": an attribute of STAT_UNWIND (tp_nl_parse() gives 16
 * bytes; its what names the nest).
 */
static const char *tp_stat_unwind_name(int type, char *buf, size_t len)
{
	const char *end = type > 0 ? taproot_kunwind_name((unsigned int)type - 1) : NULL;

	if (end)
		return end;
	snprintf(buf, len, "#%d", type);
	return buf;
}

/*
 * The STAT_UNWIND nest @nest into @unwind: end to end, a u64 of exactly
 * 8 bytes for every taproot_kunwind, none missing; padding (type 0) and
 * types past TAPROOT_KUNWIND_NR are skipped, as unknown attributes are
 * elsewhere in the reply.
 */
static int tp_stats_cpu_unwind(struct nlattr *nest, uint64_t *unwind)
{
	struct nlattr *tb[TAPROOT_KUNWIND_NR + 1];
	char name[16];
	int t, err;

	err = tp_nl_parse(tb, TAPROOT_KUNWIND_NR, nla_data(nest), nla_len(nest),
			  tp_stat_unwind_policy, "get stats (STAT_UNWIND)",
			  tp_stat_unwind_name);
	if (err < 0)
		return err;
	for (t = 1; t <= TAPROOT_KUNWIND_NR; t++) {
		if (!tb[t])
			return tp_err(-TAPROOT_EPROTO,
				      "reply to get stats: a STAT_UNWIND lacks the counter %s",
				      tp_stat_unwind_name(t, name, sizeof(name)));
		unwind[t - 1] = nla_get_u64(tb[t]);
	}
	return 0;
}

static int tp_stats_cpu(struct nlattr *nest, struct tp_stats *st)
{
	struct nlattr *tb[TAPROOT_A_STAT_MAX + 1];
	struct taproot_cpu_stats c, *grown;
	const struct {
		int attr;
		uint64_t *value;
	} counters[] = {
		{ TAPROOT_A_STAT_SAMPLES, &c.samples },
		{ TAPROOT_A_STAT_RECORDS, &c.records },
		{ TAPROOT_A_STAT_BYTES, &c.bytes },
		{ TAPROOT_A_STAT_LOST_FULL, &c.lost_full },
		{ TAPROOT_A_STAT_LOST_NESTED, &c.lost_nested },
		{ TAPROOT_A_STAT_USTACK_FAULTS, &c.ustack_faults },
		{ TAPROOT_A_STAT_SWITCHES, &c.switches },
		{ TAPROOT_A_STAT_SWITCHES_SELECTED, &c.switches_selected },
		{ TAPROOT_A_STAT_WAKINGS, &c.wakings },
		{ TAPROOT_A_STAT_STACKS, &c.stacks },
		{ TAPROOT_A_STAT_STACK_REFS, &c.stack_refs },
		{ TAPROOT_A_STAT_PY_WALKS, &c.py_walks },
		{ TAPROOT_A_STAT_PY_FRAMES, &c.py_frames },
		{ TAPROOT_A_STAT_PY_CUT, &c.py_cut },
		{ TAPROOT_A_STAT_COUNTED, &c.counted },
		{ TAPROOT_A_STAT_COUNT_FULL, &c.count_full },
	};
	char name[24];
	size_t i;
	int err;

	err = tp_nl_parse(tb, TAPROOT_A_STAT_MAX, nla_data(nest), nla_len(nest),
			  tp_stat_policy, "get stats", tp_nl_stat_attr_name);
	if (err < 0)
		return err;
	if (!tb[TAPROOT_A_STAT_CPU])
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get stats: a STATS_CPU lacks attribute STAT_CPU");
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (!tb[counters[i].attr])
			return tp_err(-TAPROOT_EPROTO,
				      "reply to get stats: a STATS_CPU lacks attribute %s",
				      tp_nl_stat_attr_name(counters[i].attr, name,
							   sizeof(name)));
	if (!tb[TAPROOT_A_STAT_UNWIND])
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get stats: a STATS_CPU lacks attribute STAT_UNWIND");
	memset(&c, 0, sizeof(c));
	c.cpu = nla_get_u32(tb[TAPROOT_A_STAT_CPU]);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		*counters[i].value = nla_get_u64(tb[counters[i].attr]);
	err = tp_stats_cpu_unwind(tb[TAPROOT_A_STAT_UNWIND], c.unwind);
	if (err < 0)
		return err;

	for (i = 0; i < st->nr; i++)
		if (st->cpus[i].cpu == c.cpu)
			return tp_err(-TAPROOT_EPROTO,
				      "reply to get stats: CPU %u given twice", c.cpu);
	if (st->nr == TP_STATS_MAX_CPUS)
		return tp_err(-TAPROOT_EPROTO, "reply to get stats: more than %u CPUs",
			      TP_STATS_MAX_CPUS);
	if (st->nr == st->alloc) {
		size_t alloc = st->alloc ? st->alloc * 2 : 64;

		grown = realloc(st->cpus, alloc * sizeof(*grown));
		if (!grown)
			return tp_err(-ENOMEM, "get stats: no memory for %zu CPUs", alloc);
		st->cpus = grown;
		st->alloc = alloc;
	}
	st->cpus[st->nr++] = c;
	return 0;
}

int tp_stats_parse(const struct nlmsghdr *nlh, struct tp_stats *st)
{
	struct nlattr *tb[TAPROOT_A_MAX + 1];
	struct nlattr *head, *a;
	uint8_t running;
	int len, rem, err;

	err = tp_genl_attrs(nlh, TAPROOT_CMD_GET_STATS, "get stats", &head, &len);
	if (err < 0)
		return err;
	/* End to end, RUNNING checked; the nests are walked below. */
	err = tp_nl_parse(tb, TAPROOT_A_MAX, head, len, tp_stats_policy,
			  "get stats", tp_nl_attr_name);
	if (err < 0)
		return err;
	if (tb[TAPROOT_A_RUNNING]) {
		running = nla_get_u8(tb[TAPROOT_A_RUNNING]);
		if (running > 1)
			return tp_err(-TAPROOT_EPROTO,
				      "reply to get stats: RUNNING is %u, not 0 or 1",
				      running);
		st->running = running;
		st->seen_running = true;
	}
	if (!tb[TAPROOT_A_FOLLOWED] != !tb[TAPROOT_A_FOLLOW_FULL])
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get stats: FOLLOWED and FOLLOW_FULL come together");
	if (tb[TAPROOT_A_FOLLOWED]) {
		st->module.has_follow = true;
		st->module.followed = nla_get_u32(tb[TAPROOT_A_FOLLOWED]);
		st->module.follow_full = nla_get_u64(tb[TAPROOT_A_FOLLOW_FULL]);
	}
	if (!tb[TAPROOT_A_UNWIND_MEM_USED] != !tb[TAPROOT_A_UNWIND_TABLES] ||
	    !tb[TAPROOT_A_UNWIND_MEM_USED] != !tb[TAPROOT_A_UNWIND_PROCS])
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get stats: UNWIND_MEM_USED, UNWIND_TABLES and UNWIND_PROCS come together");
	if (tb[TAPROOT_A_UNWIND_MEM_USED]) {
		st->module.has_unwind = true;
		st->module.unwind_mem_used = nla_get_u64(tb[TAPROOT_A_UNWIND_MEM_USED]);
		st->module.unwind_tables = nla_get_u32(tb[TAPROOT_A_UNWIND_TABLES]);
		st->module.unwind_procs = nla_get_u32(tb[TAPROOT_A_UNWIND_PROCS]);
	}
	nla_for_each_attr(a, head, len, rem) {
		if (nla_type(a) != TAPROOT_A_STATS_CPU)
			continue;
		err = tp_stats_cpu(a, st);
		if (err < 0)
			return err;
	}
	return 0;
}

static int tp_stats_reply(const struct nlmsghdr *nlh, void *arg)
{
	return tp_stats_parse(nlh, arg);
}

static int tp_stats_cmp(const void *a, const void *b)
{
	const struct taproot_cpu_stats *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

int tp_stats_finish(struct tp_stats *st)
{
	if (!st->seen_running)
		return tp_err(-TAPROOT_EPROTO, "reply to get stats lacks attribute RUNNING");
	if (!st->nr)
		return tp_err(-TAPROOT_EPROTO, "reply to get stats has no STATS_CPU");
	qsort(st->cpus, st->nr, sizeof(*st->cpus), tp_stats_cmp);
	return 0;
}

int taproot_nl_get_stats(struct taproot_nl *nl, bool *running,
			 struct taproot_cpu_stats **cpus, size_t *nr)
{
	return taproot_nl_get_stats_all(nl, running, NULL, cpus, nr);
}

int taproot_nl_get_stats_all(struct taproot_nl *nl, bool *running,
			     struct taproot_module_stats *ms,
			     struct taproot_cpu_stats **cpus, size_t *nr)
{
	struct tp_stats st = { 0 };
	struct tp_nl_reply reply = {
		.parse = tp_stats_reply,
		.arg = &st,
	};
	int err;

	*cpus = NULL;
	*nr = 0;
	err = tp_nl_request(nl, TAPROOT_CMD_GET_STATS, "get stats", NULL, &reply);
	if (err < 0)
		goto fail;
	err = tp_stats_finish(&st);
	if (err < 0)
		goto fail;
	*running = st.running;
	if (ms)
		*ms = st.module;
	*cpus = st.cpus;
	*nr = st.nr;
	return 0;
fail:
	free(st.cpus);
	return err;
}
