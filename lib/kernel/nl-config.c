// SPDX-License-Identifier: GPL-2.0
/*
 * TAPROOT_CMD_SET_CONFIG and TAPROOT_CMD_GET_CONFIG: what the module samples
 * and how, field by field; and the KEY VALUE words users write it in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "kernel/kernel-private.h"

_Static_assert(sizeof(((struct taproot_config *)0)->tgids) ==
	       TAPROOT_MAX_TGIDS * sizeof(uint32_t),
	       "taproot_config.tgids holds TAPROOT_MAX_TGIDS");

/* The attribute of each TAPROOT_CONFIG_* bit, in bit order. */
static const int tp_config_attrs[] = {
	TAPROOT_A_CFG_FREQ_HZ, TAPROOT_A_CFG_KSTACK_DEPTH,
	TAPROOT_A_CFG_USTACK_BYTES, TAPROOT_A_CFG_EVENTS, TAPROOT_A_CFG_FLAGS,
	TAPROOT_A_CFG_RING_PAGES, TAPROOT_A_CFG_WATERMARK, TAPROOT_A_CFG_TGIDS,
	TAPROOT_A_CFG_SCHED_ONE_IN, TAPROOT_A_CFG_UNWIND_FRAMES,
	TAPROOT_A_CFG_UNWIND_MEM,
};
_Static_assert(sizeof(tp_config_attrs) / sizeof(tp_config_attrs[0]) == 11 &&
	       TAPROOT_CONFIG_ALL == (1U << 11) - 1,
	       "one attribute per TAPROOT_CONFIG_* bit");

static const char *const tp_event_names[32] = {
	[0] = "sample",	/* TAPROOT_EV_SAMPLE */
	[1] = "switch",	/* TAPROOT_EV_SWITCH */
	[2] = "waking",	/* TAPROOT_EV_WAKING */
	[3] = "fork",	/* TAPROOT_EV_FORK */
	[4] = "exec",	/* TAPROOT_EV_EXEC */
	[5] = "exit",	/* TAPROOT_EV_EXIT */
};
_Static_assert(TAPROOT_EV_SAMPLE == 1U << 0 && TAPROOT_EV_SWITCH == 1U << 1 &&
	       TAPROOT_EV_WAKING == 1U << 2 && TAPROOT_EV_FORK == 1U << 3 &&
	       TAPROOT_EV_EXEC == 1U << 4 && TAPROOT_EV_EXIT == 1U << 5 &&
	       TAPROOT_EV_ALL == (1U << 6) - 1,
	       "tp_event_names follows the TAPROOT_EV_* bits");

const char *taproot_event_name(unsigned int bit)
{
	return bit < 32 ? tp_event_names[bit] : NULL;
}

static bool tp_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* ------------------------------------------------------------ limits */

int tp_config_check(const struct taproot_config *c, int err, const char *what)
{
	uint32_t i, j;

	if (c->set & ~(uint32_t)TAPROOT_CONFIG_ALL)
		return tp_err(err, "%s: unknown field bits 0x%x", what,
			      c->set & ~(uint32_t)TAPROOT_CONFIG_ALL);
	if ((c->set & TAPROOT_CONFIG_FREQ) &&
	    (c->freq_hz < 1 || c->freq_hz > TAPROOT_FREQ_MAX))
		return tp_err(err, "%s: freq %u: not in 1..%u Hz", what,
			      c->freq_hz, TAPROOT_FREQ_MAX);
	if ((c->set & TAPROOT_CONFIG_KSTACK) && c->kstack_depth > TAPROOT_KSTACK_MAX)
		return tp_err(err, "%s: kstack %u: more than %u frames", what,
			      c->kstack_depth, TAPROOT_KSTACK_MAX);
	if ((c->set & TAPROOT_CONFIG_USTACK) &&
	    (c->ustack_bytes > TAPROOT_USTACK_MAX || c->ustack_bytes % 8))
		return tp_err(err, "%s: ustack %u: not a multiple of 8 in 0..%u bytes",
			      what, c->ustack_bytes, TAPROOT_USTACK_MAX);
	if ((c->set & TAPROOT_CONFIG_EVENTS) && (c->events & ~TAPROOT_EV_ALL))
		return tp_err(err, "%s: events 0x%x: unknown event bits 0x%x", what,
			      c->events, c->events & ~TAPROOT_EV_ALL);
	if ((c->set & TAPROOT_CONFIG_FLAGS) && (c->flags & ~TAPROOT_CFG_F_ALL))
		return tp_err(err, "%s: flags 0x%x: unknown flag bits 0x%x", what,
			      c->flags, c->flags & ~TAPROOT_CFG_F_ALL);
	if ((c->set & TAPROOT_CONFIG_RING_PAGES) &&
	    (!tp_pow2(c->ring_pages) || c->ring_pages < TAPROOT_RING_PAGES_MIN ||
	     c->ring_pages > TAPROOT_RING_PAGES_MAX))
		return tp_err(err, "%s: ring-pages %u: not a power of two in %u..%u",
			      what, c->ring_pages, TAPROOT_RING_PAGES_MIN,
			      TAPROOT_RING_PAGES_MAX);
	if ((c->set & TAPROOT_CONFIG_WATERMARK) && c->watermark < 1)
		return tp_err(err, "%s: watermark 0: must be at least 1 byte", what);
	if ((c->set & TAPROOT_CONFIG_SCHED_ONE_IN) &&
	    (c->sched_one_in < 1 || c->sched_one_in > TAPROOT_SCHED_ONE_IN_MAX))
		return tp_err(err, "%s: sched-one-in %u: not in 1..%u", what,
			      c->sched_one_in, TAPROOT_SCHED_ONE_IN_MAX);
	if ((c->set & TAPROOT_CONFIG_UNWIND_FRAMES) &&
	    (c->unwind_frames < 1 || c->unwind_frames > TAPROOT_UNWIND_FRAMES_MAX))
		return tp_err(err, "%s: unwind-frames %u: not in 1..%u", what,
			      c->unwind_frames, TAPROOT_UNWIND_FRAMES_MAX);
	if ((c->set & TAPROOT_CONFIG_UNWIND_MEM) &&
	    (c->unwind_mem_mib < 1 || c->unwind_mem_mib > TAPROOT_UNWIND_MEM_MAX))
		return tp_err(err, "%s: unwind-mem %u: not in 1..%u MiB", what,
			      c->unwind_mem_mib, TAPROOT_UNWIND_MEM_MAX);
	if (!(c->set & TAPROOT_CONFIG_TGIDS))
		return 0;
	if (c->nr_tgids > TAPROOT_MAX_TGIDS)
		return tp_err(err, "%s: pids: %u processes, at most %u", what,
			      c->nr_tgids, TAPROOT_MAX_TGIDS);
	for (i = 0; i < c->nr_tgids; i++) {
		if (c->tgids[i] == 0 || c->tgids[i] > INT32_MAX)
			return tp_err(err, "%s: pids: %u is not a process id", what,
				      c->tgids[i]);
		for (j = 0; j < i; j++)
			if (c->tgids[j] == c->tgids[i])
				return tp_err(err, "%s: pids: %u given twice", what,
					      c->tgids[i]);
	}
	return 0;
}

/* ------------------------------------------------------------ set */

int tp_config_fill(struct nl_msg *msg, const struct taproot_config *c)
{
	const uint32_t values[] = {
		c->freq_hz, c->kstack_depth, c->ustack_bytes, c->events,
		c->flags, c->ring_pages, c->watermark,
	};
	struct nlattr *nest;
	uint32_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if ((c->set & (1U << i)) &&
		    nla_put_u32(msg, tp_config_attrs[i], values[i]) < 0)
			goto full;
	if ((c->set & TAPROOT_CONFIG_SCHED_ONE_IN) &&
	    nla_put_u32(msg, TAPROOT_A_CFG_SCHED_ONE_IN, c->sched_one_in) < 0)
		goto full;
	if ((c->set & TAPROOT_CONFIG_UNWIND_FRAMES) &&
	    nla_put_u32(msg, TAPROOT_A_CFG_UNWIND_FRAMES, c->unwind_frames) < 0)
		goto full;
	if ((c->set & TAPROOT_CONFIG_UNWIND_MEM) &&
	    nla_put_u32(msg, TAPROOT_A_CFG_UNWIND_MEM, c->unwind_mem_mib) < 0)
		goto full;
	if (!(c->set & TAPROOT_CONFIG_TGIDS))
		return 0;
	/* An empty nest is meaningful: the whole system. */
	nest = nla_nest_start(msg, TAPROOT_A_CFG_TGIDS);
	if (!nest)
		goto full;
	for (i = 0; i < c->nr_tgids; i++)
		if (nla_put_u32(msg, TAPROOT_A_CFG_TGID, c->tgids[i]) < 0)
			goto full;
	/* libnl's nla_nest_end() would drop an empty nest. */
	if (nla_nest_end_keep_empty(msg, nest) < 0)
		goto full;
	return 0;
full:
	return tp_err(-EMSGSIZE, "set config: the request does not fit a message");
}

static int tp_config_fill_cb(struct nl_msg *msg, void *arg)
{
	return tp_config_fill(msg, arg);
}

int taproot_nl_set_config(struct taproot_nl *nl, const struct taproot_config *cfg)
{
	struct taproot_config merged, cur;
	struct tp_nl_reply reply = { .arg = &merged };
	int err;

	if (!(cfg->set & TAPROOT_CONFIG_ALL))
		return tp_err(-EINVAL, "set config: no field given");
	err = tp_config_check(cfg, -EINVAL, "set config");
	if (err < 0)
		return err;
	merged = *cfg;
	/* Flag keys change their bits only: the others are the module's. */
	if ((cfg->set & TAPROOT_CONFIG_FLAGS) && cfg->flags_given) {
		err = taproot_nl_get_config(nl, &cur);
		if (err < 0)
			return err;
		merged.flags = (cur.flags & ~cfg->flags_given) |
			       (cfg->flags & cfg->flags_given);
	}
	err = tp_nl_request(nl, TAPROOT_CMD_SET_CONFIG, "set config",
			    tp_config_fill_cb, &reply);
	if (err == -EBUSY && reply.refused)
		return tp_err(err, "set config: %s (freq, ring-pages and turning on switch, "
			      "waking, fork, exec, exit or follow happen only while sampling is "
			      "stopped, ring-pages only while no consumer has the rings "
			      "mapped)",
			      reply.extack[0] ? reply.extack : taproot_strerror(err));
	return err;
}

/* ------------------------------------------------------------ get */

static struct nla_policy tp_config_policy[TAPROOT_A_MAX + 1] = {
	[TAPROOT_A_CFG_FREQ_HZ]	     = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_KSTACK_DEPTH] = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_USTACK_BYTES] = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_EVENTS]	     = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_FLAGS]	     = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_RING_PAGES]   = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_WATERMARK]    = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	/* Checked by hand below: end to end, TGID u32s only. */
	[TAPROOT_A_CFG_TGIDS]	     = { .type = NLA_UNSPEC },
	[TAPROOT_A_CFG_SCHED_ONE_IN] = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_UNWIND_FRAMES] = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_CFG_UNWIND_MEM]   = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
};

static int tp_config_parse_tgids(struct nlattr *nest, struct taproot_config *cfg)
{
	struct nlattr *a;
	char name[16];
	int rem;

	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != TAPROOT_A_CFG_TGID || nla_len(a) != sizeof(uint32_t))
			return tp_err(-TAPROOT_EPROTO,
				      "malformed reply to get config: attribute %s of %d bytes in CFG_TGIDS",
				      tp_nl_attr_name(nla_type(a), name, sizeof(name)),
				      nla_len(a));
		if (cfg->nr_tgids == TAPROOT_MAX_TGIDS)
			return tp_err(-TAPROOT_EPROTO,
				      "reply to get config: more than %u CFG_TGID",
				      TAPROOT_MAX_TGIDS);
		cfg->tgids[cfg->nr_tgids++] = nla_get_u32(a);
	}
	if (rem > 0)
		return tp_err(-TAPROOT_EPROTO,
			      "malformed reply to get config: %d bytes after the last whole attribute in CFG_TGIDS",
			      rem);
	return 0;
}

int tp_config_parse(const struct nlmsghdr *nlh, struct taproot_config *cfg)
{
	struct nlattr *tb[TAPROOT_A_MAX + 1];
	uint32_t *values[] = {
		&cfg->freq_hz, &cfg->kstack_depth, &cfg->ustack_bytes,
		&cfg->events, &cfg->flags, &cfg->ring_pages, &cfg->watermark,
	};
	struct nlattr *head;
	char name[16];
	size_t i;
	int len, err;

	memset(cfg, 0, sizeof(*cfg));
	err = tp_genl_attrs(nlh, TAPROOT_CMD_GET_CONFIG, "get config", &head, &len);
	if (err < 0)
		return err;
	err = tp_nl_parse(tb, TAPROOT_A_MAX, head, len, tp_config_policy,
			  "get config", tp_nl_attr_name);
	if (err < 0)
		return err;
	for (i = 0; i < sizeof(tp_config_attrs) / sizeof(tp_config_attrs[0]); i++)
		if (!tb[tp_config_attrs[i]])
			return tp_err(-TAPROOT_EPROTO,
				      "reply to get config lacks attribute %s",
				      tp_nl_attr_name(tp_config_attrs[i], name,
						      sizeof(name)));
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		*values[i] = nla_get_u32(tb[tp_config_attrs[i]]);
	cfg->sched_one_in = nla_get_u32(tb[TAPROOT_A_CFG_SCHED_ONE_IN]);
	cfg->unwind_frames = nla_get_u32(tb[TAPROOT_A_CFG_UNWIND_FRAMES]);
	cfg->unwind_mem_mib = nla_get_u32(tb[TAPROOT_A_CFG_UNWIND_MEM]);
	err = tp_config_parse_tgids(tb[TAPROOT_A_CFG_TGIDS], cfg);
	if (err < 0)
		return err;
	/*
	 * Limits are the ABI's; event and flag bits this library does not
	 * know are reported, not refused, as feature bits are.
	 */
	cfg->set = TAPROOT_CONFIG_ALL & ~(TAPROOT_CONFIG_EVENTS | TAPROOT_CONFIG_FLAGS);
	err = tp_config_check(cfg, -TAPROOT_EPROTO, "reply to get config");
	cfg->set = TAPROOT_CONFIG_ALL;
	return err;
}

static int tp_config_reply(const struct nlmsghdr *nlh, void *arg)
{
	return tp_config_parse(nlh, arg);
}

int taproot_nl_get_config(struct taproot_nl *nl, struct taproot_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	return tp_nl_request_one(nl, TAPROOT_CMD_GET_CONFIG, "get config", tp_config_reply, cfg);
}

/* ------------------------------------------------------------ KEY VALUE */

/* A decimal number in @min..@max, nothing else: no sign, no blanks. */
static int tp_parse_u32(const char *key, const char *s, uint32_t min,
			uint32_t max, uint32_t *v)
{
	unsigned long long n;
	char *end;

	if (!s[0] || s[0] < '0' || s[0] > '9')
		return tp_err(-EINVAL, "%s '%s': not a decimal number", key, s);
	errno = 0;
	n = strtoull(s, &end, 10);
	if (*end)
		return tp_err(-EINVAL, "%s '%s': not a decimal number", key, s);
	if (errno == ERANGE || n < min || n > max)
		return tp_err(-EINVAL, "%s '%s': not in %u..%u", key, s, min, max);
	*v = (uint32_t)n;
	return 0;
}

static int tp_parse_events(const char *s, uint32_t *events)
{
	const char *p = s;
	uint32_t mask = 0;
	unsigned int bit;
	size_t n;

	if (!strcmp(s, "all")) {
		*events = TAPROOT_EV_ALL;
		return 0;
	}
	if (!strcmp(s, "none")) {
		*events = 0;
		return 0;
	}
	for (;;) {
		n = strcspn(p, ",");
		for (bit = 0; bit < 32; bit++)
			if (tp_event_names[bit] && strlen(tp_event_names[bit]) == n &&
			    !strncmp(p, tp_event_names[bit], n))
				break;
		if (bit == 32)
			return tp_err(-EINVAL,
				      "events '%s': unknown event '%.*s' (sample, switch, waking, fork, exec, exit, all, none)",
				      s, (int)n, p);
		mask |= 1U << bit;
		if (!p[n])
			break;
		p += n + 1;
	}
	*events = mask;
	return 0;
}

static int tp_parse_pids(const char *s, struct taproot_config *c)
{
	struct taproot_config t = *c;
	char word[32];
	const char *p = s;
	size_t n;
	int err;

	t.nr_tgids = 0;
	if (!strcmp(s, "all")) {
		c->nr_tgids = 0;
		return 0;
	}
	for (;;) {
		n = strcspn(p, ",");
		if (t.nr_tgids == TAPROOT_MAX_TGIDS)
			return tp_err(-EINVAL, "pids: more than %u processes",
				      TAPROOT_MAX_TGIDS);
		if (n >= sizeof(word))
			return tp_err(-EINVAL, "pids '%.*s': not a process id", (int)n, p);
		memcpy(word, p, n);
		word[n] = '\0';
		err = tp_parse_u32("pids", word, 1, INT32_MAX, &t.tgids[t.nr_tgids]);
		if (err < 0)
			return err;
		t.nr_tgids++;
		if (!p[n])
			break;
		p += n + 1;
	}
	t.set = TAPROOT_CONFIG_TGIDS;
	err = tp_config_check(&t, -EINVAL, "config");
	if (err < 0)
		return err;
	c->nr_tgids = t.nr_tgids;
	memcpy(c->tgids, t.tgids, sizeof(t.tgids));
	return 0;
}

int taproot_config_set_kv(struct taproot_config *cfg, const char *key,
			  const char *value)
{
	static const struct {
		const char *key;
		uint32_t bit;
		uint32_t flag;		/* of a flag key: its TAPROOT_CFG_F_* */
	} keys[] = {
		{ "freq", TAPROOT_CONFIG_FREQ, 0 },
		{ "kstack", TAPROOT_CONFIG_KSTACK, 0 },
		{ "ustack", TAPROOT_CONFIG_USTACK, 0 },
		{ "events", TAPROOT_CONFIG_EVENTS, 0 },
		{ "idle", TAPROOT_CONFIG_FLAGS, TAPROOT_CFG_F_SAMPLE_IDLE },
		{ "follow", TAPROOT_CONFIG_FLAGS, TAPROOT_CFG_F_FOLLOW },
		{ "unwind", TAPROOT_CONFIG_FLAGS, TAPROOT_CFG_F_UNWIND },
		{ "ustack-private", TAPROOT_CONFIG_FLAGS, TAPROOT_CFG_F_USTACK_PRIVATE },
		{ "unwind-verify", TAPROOT_CONFIG_FLAGS, TAPROOT_CFG_F_UNWIND_VERIFY },
		{ "count", TAPROOT_CONFIG_FLAGS, TAPROOT_CFG_F_COUNT },
		{ "ring-pages", TAPROOT_CONFIG_RING_PAGES, 0 },
		{ "watermark", TAPROOT_CONFIG_WATERMARK, 0 },
		{ "pids", TAPROOT_CONFIG_TGIDS, 0 },
		{ "sched-one-in", TAPROOT_CONFIG_SCHED_ONE_IN, 0 },
		{ "unwind-frames", TAPROOT_CONFIG_UNWIND_FRAMES, 0 },
		{ "unwind-mem", TAPROOT_CONFIG_UNWIND_MEM, 0 },
	};
	struct taproot_config t = *cfg;
	uint32_t bit = 0, flag = 0;
	size_t i;
	int err;

	/* Each flag key is one bit of the flags field. */
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i].key)) {
			bit = keys[i].bit;
			flag = keys[i].flag;
		}
	if (!bit)
		return tp_err(-EINVAL,
			      "unknown key '%s' (freq, kstack, ustack, events, idle, follow, unwind, ustack-private, unwind-verify, count, ring-pages, watermark, pids, sched-one-in, unwind-frames, unwind-mem)",
			      key);
	if (bit == TAPROOT_CONFIG_FLAGS ? (cfg->flags_given & flag) != 0 : (cfg->set & bit) != 0)
		return tp_err(-EINVAL, "'%s' given twice", key);

	switch (bit) {
	case TAPROOT_CONFIG_FREQ:
		err = tp_parse_u32(key, value, 1, TAPROOT_FREQ_MAX, &t.freq_hz);
		break;
	case TAPROOT_CONFIG_KSTACK:
		err = tp_parse_u32(key, value, 0, TAPROOT_KSTACK_MAX, &t.kstack_depth);
		break;
	case TAPROOT_CONFIG_USTACK:
		err = tp_parse_u32(key, value, 0, TAPROOT_USTACK_MAX, &t.ustack_bytes);
		if (!err && t.ustack_bytes % 8)
			err = tp_err(-EINVAL, "ustack '%s': not a multiple of 8", value);
		break;
	case TAPROOT_CONFIG_EVENTS:
		err = tp_parse_events(value, &t.events);
		break;
	case TAPROOT_CONFIG_FLAGS:
		/* Its bit alone: taproot_nl_set_config() keeps the others. */
		if (!strcmp(value, "on"))
			t.flags |= flag;
		else if (!strcmp(value, "off"))
			t.flags &= ~flag;
		else
			return tp_err(-EINVAL, "%s '%s': not 'on' or 'off'", key, value);
		t.flags_given |= flag;
		err = 0;
		break;
	case TAPROOT_CONFIG_RING_PAGES:
		err = tp_parse_u32(key, value, TAPROOT_RING_PAGES_MIN,
				   TAPROOT_RING_PAGES_MAX, &t.ring_pages);
		if (!err && !tp_pow2(t.ring_pages))
			err = tp_err(-EINVAL, "ring-pages '%s': not a power of two", value);
		break;
	case TAPROOT_CONFIG_WATERMARK:
		err = tp_parse_u32(key, value, 1, UINT32_MAX, &t.watermark);
		break;
	case TAPROOT_CONFIG_SCHED_ONE_IN:
		err = tp_parse_u32(key, value, 1, TAPROOT_SCHED_ONE_IN_MAX,
				   &t.sched_one_in);
		break;
	case TAPROOT_CONFIG_UNWIND_FRAMES:
		err = tp_parse_u32(key, value, 1, TAPROOT_UNWIND_FRAMES_MAX,
				   &t.unwind_frames);
		break;
	case TAPROOT_CONFIG_UNWIND_MEM:
		err = tp_parse_u32(key, value, 1, TAPROOT_UNWIND_MEM_MAX,
				   &t.unwind_mem_mib);
		break;
	default: /* TAPROOT_CONFIG_TGIDS */
		err = tp_parse_pids(value, &t);
		break;
	}
	if (err < 0)
		return err;
	t.set |= bit;
	*cfg = t;
	return 0;
}
