// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -Iinclude/uapi
/*
 * nl-fuzz: generated and mutated messages to the "taproot" generic netlink
 * family, over a raw NETLINK_GENERIC socket (no libnl: it must be able to
 * send what no library would build), with every reply read and checked.
 *
 * usage: nl-fuzz [--seed S] [--count N] [--valid-pct P] [--unprivileged]
 *
 * Message i is a function of the seed alone (never of what the kernel
 * answered), so "--seed S --count N" sends the same N messages again; the
 * seed is printed first. The mix (see gen()): P % (default 5) valid
 * GET_INFO, GET_CONFIG, GET_STATS, START, STOP and SET_CONFIG; unknown and
 * multicast-only commands; attributes given to commands that take none;
 * SET_CONFIG with one fault that must be refused (a value out of range, a
 * wrong length, an attribute the policy does not know, a bad TGID nest);
 * SET_CONFIG with random attributes (duplicated, oversized, nested, extreme
 * values, random flag bits in nla_type); broken netlink and genl headers
 * (truncated, lengths past the end, version, reserved, random nlmsg_flags
 * such as NLM_F_DUMP); random bit flips of a valid message; two messages
 * in one datagram; raw random bytes.
 *
 * Checks, each failure printed as "FAIL #INDEX KIND: what" (with the
 * message in hex) and counted:
 *   - every datagram received parses: nlmsghdr lengths within it, replies
 *     carry our port and the sequence number of a message we sent, an
 *     NLMSG_ERROR holds the header we sent (and the payload unless
 *     capped) and well-formed extended-ACK TLVs, a reply of the family has
 *     the command asked, version 1, and exactly the attributes of its
 *     command with their sizes and values in range (GET_INFO, GET_CONFIG,
 *     GET_STATS: see <linux/taproot.h>);
 *   - a request that asks for an ACK gets exactly one;
 *   - as root: valid requests succeed (or fail as documented: EALREADY,
 *     EBUSY while running, ENOMEM); requests built to be invalid are
 *     refused; a refused SET_CONFIG, START or STOP changes nothing
 *     (GET_CONFIG and GET_INFO compared); after any accepted change the
 *     configuration read back is within the documented ranges;
 *   - --unprivileged: nothing succeeds and no reply of the family comes;
 *     a well-formed request of a known command is refused with EPERM.
 *
 * At the end, as root, the module is put back as the test found it
 * defaults: stopped, default configuration, no TGID filter (and checked).
 *
 * Output: "seed=S", the failures, then one line
 *   "sent=N accepted=N acked_ok=N refused=N silent=N replies=N validated=N failures=N
 *    must_fail=N valid=N valid_ok=N starts=N stops=N configs=N"
 * and one "errno NAME=COUNT..." line. Exit status 1 if any check failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taproot.h>

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif

#define MSG_MAX (96 * 1024)	/* largest message built */
#define RX_MAX (512 * 1024)	/* an error echoes the whole request */

/* ------------------------------------------------------------ random */

static uint64_t rng;

static uint64_t rnd64(void)
{
	/* splitmix64: one state word, every seed valid */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd(uint32_t n)	/* 0..n-1 */
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static bool chance(uint32_t pct)
{
	return rnd(100) < pct;
}

/* ------------------------------------------------------------ the ABI */

/* The attributes SET_CONFIG takes, their bounds (<linux/taproot.h>). */
struct cfg_attr {
	uint16_t type;
	uint32_t min, max;	/* for a mask: min 0, max = the mask */
	bool mask, pow2, mult8;
};

static const struct cfg_attr cfg_attrs[] = {
	{ TAPROOT_A_CFG_FREQ_HZ, 1, TAPROOT_FREQ_MAX, false, false, false },
	{ TAPROOT_A_CFG_KSTACK_DEPTH, 0, TAPROOT_KSTACK_MAX, false, false, false },
	{ TAPROOT_A_CFG_USTACK_BYTES, 0, TAPROOT_USTACK_MAX, false, false, true },
	{ TAPROOT_A_CFG_EVENTS, 0, TAPROOT_EV_ALL, true, false, false },
	{ TAPROOT_A_CFG_FLAGS, 0, TAPROOT_CFG_F_ALL, true, false, false },
	{ TAPROOT_A_CFG_RING_PAGES, TAPROOT_RING_PAGES_MIN,
	  TAPROOT_RING_PAGES_MAX, false, true, false },
	{ TAPROOT_A_CFG_WATERMARK, 1, UINT32_MAX, false, false, false },
	{ TAPROOT_A_CFG_SCHED_ONE_IN, 1, TAPROOT_SCHED_ONE_IN_MAX, false, false, false },
};
#define NCFG (sizeof(cfg_attrs) / sizeof(cfg_attrs[0]))

/* The configuration as GET_CONFIG reports it. */
struct config {
	uint32_t v[TAPROOT_A_MAX + 1];	/* by attribute type */
	uint32_t ntgids;
	uint32_t tgids[TAPROOT_MAX_TGIDS];
};

/* ------------------------------------------------------------ counters */

static unsigned long n_sent, n_accepted, n_acked_ok, n_refused, n_silent, n_replies,
	n_validated, n_failures, n_must_fail, n_valid, n_valid_ok, n_starts,
	n_stops, n_configs;
static unsigned long errno_count[4096];
static bool unprivileged;
static long page_size;

static const char *kind_name;
static unsigned long msg_index;
static const uint8_t *cur_msg;
static size_t cur_len;

static void fail(const char *fmt, ...)
{
	va_list ap;
	size_t i;

	n_failures++;
	if (n_failures > 30)
		return;
	printf("FAIL #%lu %s: ", msg_index, kind_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("; message (%zu bytes):", cur_len);
	for (i = 0; i < cur_len && i < 96; i++)
		printf("%s%02x", i % 4 ? "" : " ", cur_msg[i]);
	printf("%s\n", cur_len > 96 ? " ..." : "");
	fflush(stdout);
}

/* ------------------------------------------------------------ building */

struct msg {
	uint8_t *buf;
	size_t len;	/* bytes written */
	size_t cap;	/* room at buf; 0: MSG_MAX */
};

static void put(struct msg *m, const void *p, size_t n)
{
	size_t cap = m->cap ? m->cap : MSG_MAX;

	if (m->len + n > cap)
		n = cap - m->len;
	memcpy(m->buf + m->len, p, n);
	m->len += n;
}

static void pad4(struct msg *m)
{
	static const uint8_t zero[4];

	put(m, zero, (4 - m->len % 4) % 4);
}

static uint32_t seq_next = 1;

/* nlmsghdr + genlmsghdr; returns the offset of the nlmsghdr. */
static size_t hdr(struct msg *m, uint16_t family, uint8_t cmd, uint16_t flags)
{
	size_t off = m->len;
	struct nlmsghdr nh = {
		.nlmsg_type = family,
		.nlmsg_flags = flags,
		.nlmsg_seq = seq_next++,
	};
	struct genlmsghdr gh = { .cmd = cmd, .version = TAPROOT_GENL_VERSION };

	put(m, &nh, sizeof(nh));
	put(m, &gh, sizeof(gh));
	return off;
}

/* Sets nlmsg_len of the message at @off to what follows it. */
static void end(struct msg *m, size_t off)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)(m->buf + off);

	nh->nlmsg_len = (uint32_t)(m->len - off);
}

static void attr(struct msg *m, uint16_t type, const void *p, size_t n)
{
	struct nlattr na = { .nla_len = (uint16_t)(NLA_HDRLEN + n),
			     .nla_type = type };

	put(m, &na, sizeof(na));
	put(m, p, n);
	pad4(m);
}

static void attr_u32(struct msg *m, uint16_t type, uint32_t v)
{
	attr(m, type, &v, sizeof(v));
}

static size_t nest_start(struct msg *m, uint16_t type)
{
	size_t off = m->len;

	attr(m, type | NLA_F_NESTED, NULL, 0);
	return off;
}

static void nest_end(struct msg *m, size_t off)
{
	struct nlattr *na = (struct nlattr *)(m->buf + off);

	na->nla_len = (uint16_t)(m->len - off);
}

/* ------------------------------------------------------------ generating */

enum kind {
	K_VALID,	/* a valid request: it must succeed, or fail as documented */
	K_UNKNOWN_CMD,	/* must be refused */
	K_ATTRS_NO_POLICY, /* attributes to a command that takes none: refused */
	K_CFG_ONE_FAULT, /* SET_CONFIG with one fault: refused */
	K_CFG_RANDOM,	/* SET_CONFIG, random attributes: anything but a crash */
	K_BAD_HEADER,	/* broken nlmsghdr or genlmsghdr */
	K_FLIPS,	/* bit flips of a valid request */
	K_BATCH,	/* two messages in one datagram */
	K_RANDOM,	/* random bytes */
	K_NR
};

static const char *const kind_names[K_NR] = {
	"valid", "unknown-cmd", "attrs-no-policy", "cfg-one-fault",
	"cfg-random", "bad-header", "flips", "batch", "random",
};

/* What the sender knows about a message it built. */
struct plan {
	enum kind kind;
	uint8_t cmd;		/* of the first message */
	bool must_fail;		/* as root: it must be refused */
	bool well_formed;	/* header and attributes parse: EPERM as nobody */
	/* K_VALID SET_CONFIG: the attributes given, to check they applied */
	bool has[TAPROOT_A_MAX + 1];
	uint32_t val[TAPROOT_A_MAX + 1];
	bool has_tgids;
	uint32_t ntgids;
	uint32_t tgids[TAPROOT_MAX_TGIDS + 1];
};

static uint16_t family_id;

static uint32_t extreme(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 7, 8, 9, 255, 256, 4095, 4096, 4097, 65535, 65536,
		65537, 0x7fffffff, 0x80000000, 0xfffffff8, 0xfffffffe,
		0xffffffff, TAPROOT_FREQ_MAX, TAPROOT_FREQ_MAX + 1,
		TAPROOT_KSTACK_MAX, TAPROOT_KSTACK_MAX + 1,
		TAPROOT_RING_PAGES_MAX, TAPROOT_RING_PAGES_MAX + 1,
		TAPROOT_SCHED_ONE_IN_MAX + 1, TAPROOT_EV_ALL + 1,
		TAPROOT_CFG_F_ALL + 1,
	};

	if (chance(20))
		return (uint32_t)rnd64();
	return v[rnd(sizeof(v) / sizeof(v[0]))];
}

/* Pages of a valid ring size: small, so that resizing stays quick. */
static uint32_t valid_ring_pages(void)
{
	return 1U << (1 + rnd(6));	/* 2..64 */
}

/* A valid SET_CONFIG body, each attribute present with probability 1/3. */
static void valid_config(struct msg *m, struct plan *p)
{
	uint32_t ring = 0, v, i;
	size_t n;

	for (i = 0; i < NCFG; i++) {
		const struct cfg_attr *a = &cfg_attrs[i];

		if (!chance(33))
			continue;
		switch (a->type) {
		case TAPROOT_A_CFG_FREQ_HZ:
			/* low rates: the fuzzing, not the sampling, is the point */
			v = 1 + rnd(199);
			break;
		case TAPROOT_A_CFG_USTACK_BYTES:
			v = rnd(TAPROOT_USTACK_MAX / 8 + 1) * 8;
			break;
		case TAPROOT_A_CFG_RING_PAGES:
			v = ring = valid_ring_pages();
			break;
		case TAPROOT_A_CFG_WATERMARK:
			continue;	/* below, once the ring size is known */
		default:
			v = a->mask ? (uint32_t)rnd64() & a->max :
				      a->min + rnd(a->max - a->min + 1);
		}
		attr_u32(m, a->type, v);
		p->has[a->type] = true;
		p->val[a->type] = v;
	}
	if (ring && chance(50)) {
		v = 1 + rnd(ring * (uint32_t)page_size);
		attr_u32(m, TAPROOT_A_CFG_WATERMARK, v);
		p->has[TAPROOT_A_CFG_WATERMARK] = true;
		p->val[TAPROOT_A_CFG_WATERMARK] = v;
	}
	if (chance(25)) {
		n = chance(30) ? 0 : 1 + rnd(TAPROOT_MAX_TGIDS);
		size_t nest = nest_start(m, TAPROOT_A_CFG_TGIDS);

		p->has_tgids = true;
		p->ntgids = (uint32_t)n;
		for (i = 0; i < n; i++) {
			v = 1 + rnd(chance(50) ? 64 : 0x3fffffff);
			attr_u32(m, TAPROOT_A_CFG_TGID, v);
			p->tgids[i] = v;
		}
		nest_end(m, nest);
	}
}

/* A valid request of a random command. */
static void gen_valid(struct msg *m, struct plan *p)
{
	static const uint8_t cmds[] = {
		TAPROOT_CMD_GET_INFO, TAPROOT_CMD_GET_CONFIG,
		TAPROOT_CMD_GET_STATS, TAPROOT_CMD_START, TAPROOT_CMD_STOP,
		TAPROOT_CMD_SET_CONFIG, TAPROOT_CMD_SET_CONFIG,
	};
	uint8_t cmd = cmds[rnd(sizeof(cmds))];
	size_t off = hdr(m, family_id, cmd, NLM_F_REQUEST | NLM_F_ACK);

	p->cmd = cmd;
	p->well_formed = true;
	if (cmd == TAPROOT_CMD_SET_CONFIG)
		valid_config(m, p);
	end(m, off);
}

/* One attribute of SET_CONFIG with a value that the policy must refuse. */
static void one_fault(struct msg *m)
{
	const struct cfg_attr *a = &cfg_attrs[rnd(NCFG)];
	uint32_t v = 0, i, n;
	uint64_t big[2] = { 0, 0 };
	size_t nest;

	switch (rnd(6)) {
	case 0:	/* a value out of range, or outside the mask */
		if (a->type == TAPROOT_A_CFG_WATERMARK) {
			v = 0;
		} else if (a->mask) {
			v = (a->max + 1) << rnd(8);
		} else if (a->pow2 && chance(50)) {
			v = a->min + 1;	/* 3: in range, not a power of two */
		} else if (a->mult8 && chance(50)) {
			v = 1 + rnd(a->max - 1);
			v += v % 8 ? 0 : 1;
		} else if (a->min > 0 && chance(50)) {
			v = a->min - 1;
		} else {
			v = a->max + 1 + rnd(chance(50) ? 16 : UINT32_MAX - a->max - 1);
		}
		attr_u32(m, a->type, v);
		break;
	case 1:	/* a u32 of the wrong length */
		n = (uint32_t[]){ 0, 1, 2, 3, 5, 8, 16 }[rnd(7)];
		big[0] = chance(50) ? 1 : 0;
		attr(m, a->type, big, n);
		break;
	case 2:	/* a type the policy does not know */
		v = chance(50) ? TAPROOT_A_MAX + 1 + rnd(0x3fff - TAPROOT_A_MAX) :
				 (uint32_t)(TAPROOT_A_ABI_VERSION + rnd(6));
		attr_u32(m, (uint16_t)v, 1);
		break;
	case 3:	/* a TGID of 0 in the nest */
		nest = nest_start(m, TAPROOT_A_CFG_TGIDS);
		attr_u32(m, TAPROOT_A_CFG_TGID, 1 + rnd(100));
		attr_u32(m, TAPROOT_A_CFG_TGID, 0);
		nest_end(m, nest);
		break;
	case 4:	/* more TGIDs than TAPROOT_MAX_TGIDS */
		nest = nest_start(m, TAPROOT_A_CFG_TGIDS);
		n = TAPROOT_MAX_TGIDS + 1 + rnd(64);
		for (i = 0; i < n; i++)
			attr_u32(m, TAPROOT_A_CFG_TGID, 1 + i);
		nest_end(m, nest);
		break;
	case 5:	/* something else than a TGID in the nest, or a u32 nest */
		if (chance(50)) {
			nest = nest_start(m, TAPROOT_A_CFG_TGIDS);
			attr_u32(m, (uint16_t)(chance(50) ? TAPROOT_A_CFG_TGID + 1 :
					       TAPROOT_A_CFG_FREQ_HZ), 5);
			nest_end(m, nest);
		} else {
			attr_u32(m, TAPROOT_A_CFG_TGIDS, 5);
		}
		break;
	}
}

static void gen_one_fault(struct msg *m, struct plan *p)
{
	size_t off = hdr(m, family_id, TAPROOT_CMD_SET_CONFIG,
			 NLM_F_REQUEST | NLM_F_ACK);
	struct plan ignored = { 0 };

	p->cmd = TAPROOT_CMD_SET_CONFIG;
	p->must_fail = true;
	/*
	 * Valid attributes before the fault, which alone must refuse it all.
	 * Not after it: the last of duplicated attributes is the one applied,
	 * and a fault the handler checks (not the policy) would be replaced.
	 */
	if (chance(50))
		valid_config(m, &ignored);
	one_fault(m);
	end(m, off);
}

/* Random attributes: anything may happen, except a crash. */
static void random_attrs(struct msg *m, unsigned int depth)
{
	unsigned int i, n = rnd(6);
	uint16_t type;
	uint32_t v;
	size_t nest, len;
	static uint8_t junk[70000];

	for (i = 0; i < n && m->len < MSG_MAX - 70000; i++) {
		type = (uint16_t)(chance(80) ? rnd(TAPROOT_A_MAX + 3) :
					       rnd(0x4000));
		if (chance(10))
			type |= NLA_F_NESTED;
		if (chance(5))
			type |= NLA_F_NET_BYTEORDER;
		switch (rnd(8)) {
		case 0: case 1: case 2:
			attr_u32(m, type, extreme());
			break;
		case 3:	/* duplicated */
			v = extreme();
			attr_u32(m, type, v);
			attr_u32(m, type, chance(50) ? v : extreme());
			break;
		case 4:	/* nested, maybe deeply */
			if (depth < 8) {
				nest = nest_start(m, type);
				random_attrs(m, depth + 1);
				nest_end(m, nest);
			}
			break;
		case 5:	/* oversized */
			len = chance(50) ? 4 + rnd(64) : rnd(65536 - 8);
			for (size_t j = 0; j < len && j < 64; j++)
				junk[j] = (uint8_t)rnd64();
			attr(m, type, junk, len);
			break;
		case 6:	/* a length past the end, or below the header */
			attr_u32(m, type, extreme());
			((struct nlattr *)(m->buf + m->len - 8))->nla_len =
				(uint16_t)(chance(50) ? rnd(4) : 8 + rnd(0xfff8));
			break;
		case 7:	/* a string or a u64 where a u32 goes */
			if (chance(50))
				attr(m, type, "taproot", 8);
			else
				attr(m, type, &(uint64_t){ rnd64() }, 8);
			break;
		}
	}
}

static void gen_cfg_random(struct msg *m, struct plan *p)
{
	uint8_t cmd = chance(70) ? TAPROOT_CMD_SET_CONFIG :
				   (uint8_t)rnd(TAPROOT_CMD_MAX + 2);
	size_t off = hdr(m, family_id, cmd, NLM_F_REQUEST | NLM_F_ACK);

	p->cmd = cmd;
	random_attrs(m, 0);
	end(m, off);
}

static void gen_unknown_cmd(struct msg *m, struct plan *p)
{
	uint8_t cmd;
	size_t off;

	switch (rnd(3)) {
	case 0:
		cmd = TAPROOT_CMD_UNSPEC;
		break;
	case 1:
		cmd = TAPROOT_CMD_NOTIFY;	/* multicast only: no handler */
		break;
	default:
		cmd = (uint8_t)(TAPROOT_CMD_MAX + 1 + rnd(255 - TAPROOT_CMD_MAX));
	}
	off = hdr(m, family_id, cmd, NLM_F_REQUEST | NLM_F_ACK);
	p->cmd = cmd;
	p->must_fail = true;
	if (chance(30))
		attr_u32(m, TAPROOT_A_CFG_FREQ_HZ, 19);
	end(m, off);
}

static void gen_attrs_no_policy(struct msg *m, struct plan *p)
{
	static const uint8_t cmds[] = {
		TAPROOT_CMD_GET_INFO, TAPROOT_CMD_GET_CONFIG,
		TAPROOT_CMD_GET_STATS, TAPROOT_CMD_START, TAPROOT_CMD_STOP,
	};
	uint8_t cmd = cmds[rnd(sizeof(cmds))];
	size_t off = hdr(m, family_id, cmd, NLM_F_REQUEST | NLM_F_ACK);

	p->cmd = cmd;
	p->must_fail = true;
	/* even attributes that exist, with sane values */
	attr_u32(m, (uint16_t)(1 + rnd(TAPROOT_A_MAX)), (uint32_t)rnd(100));
	end(m, off);
}

static void gen_bad_header(struct msg *m, struct plan *p)
{
	struct plan sub = { 0 };
	struct nlmsghdr *nh;
	struct genlmsghdr *gh;

	gen_valid(m, &sub);
	p->cmd = sub.cmd;
	nh = (struct nlmsghdr *)m->buf;
	gh = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	switch (rnd(7)) {
	case 0:	/* nlmsg_len shorter: into the headers, or mid-attribute */
		nh->nlmsg_len = chance(50) ? rnd(NLMSG_HDRLEN + GENL_HDRLEN) :
					     rnd((uint32_t)m->len);
		break;
	case 1:	/* nlmsg_len past the end of the datagram */
		nh->nlmsg_len = (uint32_t)m->len + 1 + rnd(chance(50) ? 16 : 1U << 20);
		break;
	case 2:	/* the datagram cut short, nlmsg_len unchanged */
		m->len = rnd((uint32_t)m->len);
		break;
	case 3:	/* a genl version nobody speaks */
		gh->version = (uint8_t)(chance(50) ? 0 : 2 + rnd(254));
		break;
	case 4:	/* reserved must be 0 */
		gh->reserved = (uint16_t)(1 + rnd(0xffff));
		p->must_fail = true;
		break;
	case 5:	/* random nlmsg_flags: DUMP, ECHO, MULTI, REPLACE... */
		nh->nlmsg_flags = (uint16_t)rnd64();
		if (chance(50))
			nh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
		if (chance(30))
			nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP;
		/*
		 * A request may hold only REQUEST, ACK and ECHO (genetlink
		 * refuses the others, resv_start_op being 0), and DUMP finds
		 * no dumpit: either way refused. Not a request: ignored.
		 */
		if ((nh->nlmsg_flags & NLM_F_REQUEST) &&
		    (nh->nlmsg_flags & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO)))
			p->must_fail = true;
		break;
	case 6:	/*
		 * A control message type, or the controller (whose commands of
		 * these numbers only read). Never another family: fuzzing it
		 * is not this program's business.
		 */
		nh->nlmsg_type = (uint16_t)(chance(50) ? rnd(NLMSG_MIN_TYPE) :
						 GENL_ID_CTRL);
		break;
	}
}

static void gen_flips(struct msg *m, struct plan *p)
{
	struct plan sub = { 0 };
	unsigned int i, n = 1 + rnd(8);

	gen_valid(m, &sub);
	p->cmd = sub.cmd;
	for (i = 0; i < n; i++) {
		size_t at = rnd((uint32_t)m->len);

		/* not nlmsg_type: the flips stay in this family */
		if (at == 4 || at == 5)
			continue;
		m->buf[at] ^= (uint8_t)(1U << rnd(8));
	}
}

static void gen(struct msg *m, struct plan *p, unsigned int valid_pct);
static bool in_batch;

static void gen_batch(struct msg *m, struct plan *p, unsigned int valid_pct)
{
	struct plan second = { 0 };
	struct msg rest;

	gen_valid(m, p);
	pad4(m);
	rest = (struct msg){ .buf = m->buf + m->len, .cap = MSG_MAX - m->len };
	in_batch = true;
	gen(&rest, &second, valid_pct);
	in_batch = false;
	m->len += rest.len;
	p->kind = K_BATCH;
	p->well_formed = false;
	memset(p->has, 0, sizeof(p->has));
	p->has_tgids = false;
}

static void gen_random(struct msg *m, struct plan *p)
{
	size_t n = rnd(80), i;

	for (i = 0; i < n; i++)
		m->buf[i] = (uint8_t)rnd64();
	m->len = n;
	/* ours (and a length that fits, half the time) or a control type */
	if (n >= NLMSG_HDRLEN) {
		((struct nlmsghdr *)m->buf)->nlmsg_type =
			chance(90) ? family_id : (uint16_t)rnd(NLMSG_MIN_TYPE);
		if (chance(50))
			((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)n;
	}
	p->cmd = n > NLMSG_HDRLEN ? m->buf[NLMSG_HDRLEN] : 0;
}

static void gen(struct msg *m, struct plan *p, unsigned int valid_pct)
{
	uint32_t r = rnd(100);

	memset(p, 0, sizeof(*p));
	if (r < valid_pct) {
		p->kind = K_VALID;
		gen_valid(m, p);
		return;
	}
	p->kind = (enum kind)(1 + rnd(K_NR - 1));
	switch (p->kind) {
	case K_UNKNOWN_CMD:
		gen_unknown_cmd(m, p);
		break;
	case K_ATTRS_NO_POLICY:
		gen_attrs_no_policy(m, p);
		break;
	case K_CFG_ONE_FAULT:
		gen_one_fault(m, p);
		break;
	case K_CFG_RANDOM:
		gen_cfg_random(m, p);
		break;
	case K_BAD_HEADER:
		gen_bad_header(m, p);
		break;
	case K_FLIPS:
		gen_flips(m, p);
		break;
	case K_BATCH:
		if (!in_batch) {
			gen_batch(m, p, valid_pct);
			break;
		}
		/* no batch inside a batch: random bytes instead */
		p->kind = K_RANDOM;
		gen_random(m, p);
		break;
	default:
		p->kind = K_RANDOM;
		gen_random(m, p);
	}
}

/* ------------------------------------------------------------ the socket */

static int sock;
static uint32_t my_port;
static uint8_t rx[RX_MAX];

static void die(const char *what)
{
	fprintf(stderr, "nl-fuzz: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void open_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t len = sizeof(sa);
	int one = 1, bufsz = 4 << 20;

	sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (sock < 0)
		die("socket(NETLINK_GENERIC)");
	if (setsockopt(sock, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)))
		die("NETLINK_EXT_ACK");
	/* Errors echo whole requests, up to 64 KiB each. */
	setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	if (bind(sock, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	if (getsockname(sock, (struct sockaddr *)&sa, &len))
		die("getsockname");
	my_port = sa.nl_pid;
}

static void send_msg(const uint8_t *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(sock, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		/*
		 * The kernel refused the datagram before parsing it (ENODATA
		 * for an empty one, EMSGSIZE, ENOBUFS...): fine, counted.
		 */
		if (errno == EBADF || errno == ENOTSOCK || errno == EFAULT)
			die("sendto");
		if (errno < 4096)
			errno_count[errno]++;
	}
}

/*
 * One datagram, or -1 when none is queued. Netlink runs a request in the
 * sender's sendmsg(), so every reply to it is queued when sendto() returns.
 */
static ssize_t recv_one(void)
{
	struct iovec iov = { rx, sizeof(rx) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT);

	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -1;
		if (errno == ENOBUFS) {
			fail("replies lost: the socket overflowed (ENOBUFS)");
			return 0;
		}
		die("recvmsg");
	}
	if (mh.msg_flags & MSG_TRUNC)
		fail("a reply of more than %zu bytes", sizeof(rx));
	return n;
}

/* ------------------------------------------------------------ checking */

/* The attributes in [p, p + len): -1 if they do not parse. */
static int parse_attrs(const uint8_t *p, size_t len, const struct nlattr **tb,
		       unsigned int max, unsigned int *unknown)
{
	size_t off = 0;

	while (off < len) {
		const struct nlattr *na = (const struct nlattr *)(p + off);
		unsigned int type;

		if (len - off < NLA_HDRLEN || na->nla_len < NLA_HDRLEN ||
		    na->nla_len > len - off)
			return -1;
		type = na->nla_type & NLA_TYPE_MASK;
		if (type <= max && tb)
			tb[type] = na;
		else if (unknown)
			(*unknown)++;
		off += NLA_ALIGN(na->nla_len);
	}
	return 0;
}

static const void *nla_data(const struct nlattr *na)
{
	return (const uint8_t *)na + NLA_HDRLEN;
}

static size_t nla_len(const struct nlattr *na)
{
	return na->nla_len - NLA_HDRLEN;
}

static bool get_u32(const struct nlattr *na, uint32_t *v)
{
	if (!na || nla_len(na) != 4)
		return false;
	memcpy(v, nla_data(na), 4);
	return true;
}

static bool get_u64(const struct nlattr *na)
{
	return na && nla_len(na) == 8;
}

static struct config cfg_seen;	/* filled by check_config() */
static uint32_t running_seen;	/* by check_info() */

static bool check_info(const uint8_t *p, size_t len)
{
	const struct nlattr *tb[TAPROOT_A_MAX + 1] = { 0 };
	unsigned int unknown = 0;
	uint32_t v;
	const struct nlattr *rel;

	if (parse_attrs(p, len, tb, TAPROOT_A_MAX, &unknown) || unknown)
		return false;
	if (!get_u32(tb[TAPROOT_A_ABI_VERSION], &v) || v != TAPROOT_ABI_VERSION)
		return false;
	if (!get_u32(tb[TAPROOT_A_NR_CPUS], &v) || v == 0)
		return false;
	if (!get_u32(tb[TAPROOT_A_PAGE_SIZE], &v) || v != (uint32_t)page_size)
		return false;
	if (!get_u64(tb[TAPROOT_A_FEATURES]))
		return false;
	if (!tb[TAPROOT_A_RUNNING] || nla_len(tb[TAPROOT_A_RUNNING]) != 1 ||
	    *(const uint8_t *)nla_data(tb[TAPROOT_A_RUNNING]) > 1)
		return false;
	running_seen = *(const uint8_t *)nla_data(tb[TAPROOT_A_RUNNING]);
	rel = tb[TAPROOT_A_KERNEL_RELEASE];
	if (!rel || nla_len(rel) == 0 ||
	    memchr(nla_data(rel), 0, nla_len(rel)) == NULL)
		return false;
	return true;
}

/* GET_CONFIG's reply: every attribute present and within its bounds. */
static bool check_config(const uint8_t *p, size_t len, const char **why)
{
	const struct nlattr *tb[TAPROOT_A_MAX + 1] = { 0 };
	const struct nlattr *in[TAPROOT_A_MAX + 1];
	unsigned int unknown = 0, i;
	struct config c = { 0 };
	size_t off;

	*why = "attributes do not parse";
	if (parse_attrs(p, len, tb, TAPROOT_A_MAX, &unknown) || unknown)
		return false;
	for (i = 0; i < NCFG; i++) {
		const struct cfg_attr *a = &cfg_attrs[i];
		uint32_t v;

		*why = "a configuration attribute missing or of the wrong size";
		if (!get_u32(tb[a->type], &v))
			return false;
		*why = "a configuration value out of its documented range";
		if (a->mask ? (v & ~a->max) : (v < a->min || v > a->max))
			return false;
		if ((a->pow2 && (v & (v - 1))) || (a->mult8 && v % 8))
			return false;
		c.v[a->type] = v;
	}
	*why = "watermark beyond the ring's data size";
	if ((uint64_t)c.v[TAPROOT_A_CFG_WATERMARK] >
	    (uint64_t)c.v[TAPROOT_A_CFG_RING_PAGES] * (uint64_t)page_size)
		return false;
	*why = "TGIDS nest missing or malformed";
	if (!tb[TAPROOT_A_CFG_TGIDS])
		return false;
	for (off = 0; off < nla_len(tb[TAPROOT_A_CFG_TGIDS]);) {
		const struct nlattr *na = (const struct nlattr *)
			((const uint8_t *)nla_data(tb[TAPROOT_A_CFG_TGIDS]) + off);
		uint32_t v;

		memset(in, 0, sizeof(in));
		if (parse_attrs((const uint8_t *)na, nla_len(tb[TAPROOT_A_CFG_TGIDS]) - off,
				NULL, 0, NULL))
			return false;
		if ((na->nla_type & NLA_TYPE_MASK) != TAPROOT_A_CFG_TGID ||
		    !get_u32(na, &v))
			return false;
		*why = "TGIDs not sorted, unique, > 0, at most TAPROOT_MAX_TGIDS";
		if (v == 0 || c.ntgids == TAPROOT_MAX_TGIDS ||
		    (c.ntgids && v <= c.tgids[c.ntgids - 1]))
			return false;
		c.tgids[c.ntgids++] = v;
		off += NLA_ALIGN(na->nla_len);
	}
	cfg_seen = c;
	return true;
}

/* STAT_UNWIND: a u64 per enum taproot_kunwind, type its value + 1 (0: padding). */
static bool check_stats_unwind(const struct nlattr *nest)
{
	const struct nlattr *tb[TAPROOT_KUNWIND_NR + 1] = { 0 };
	unsigned int unknown = 0, e;

	if (!nest || parse_attrs(nla_data(nest), nla_len(nest), tb, TAPROOT_KUNWIND_NR,
				 &unknown) || unknown)
		return false;
	for (e = 1; e <= TAPROOT_KUNWIND_NR; e++)
		if (!get_u64(tb[e]))
			return false;
	return true;
}

/* The module-wide counters beside the CPUs' nests: each of its size. */
static bool check_stats_module(unsigned int type, const struct nlattr *na)
{
	uint32_t v;

	switch (type) {
	case TAPROOT_A_RUNNING:
		return nla_len(na) == 1 && *(const uint8_t *)nla_data(na) <= 1;
	case TAPROOT_A_FOLLOWED:
	case TAPROOT_A_UNWIND_TABLES:
	case TAPROOT_A_UNWIND_PROCS:
		return get_u32(na, &v);
	case TAPROOT_A_FOLLOW_FULL:
	case TAPROOT_A_UNWIND_MEM_USED:
		return get_u64(na);
	default:
		return false;
	}
}

static bool check_stats(const uint8_t *p, size_t len)
{
	size_t off = 0;
	unsigned int ncpu = 0;

	if (!len)
		return false;
	/* STATS_CPU nests and the module's counters, in any order */
	while (off < len) {
		const struct nlattr *na = (const struct nlattr *)(p + off);
		unsigned int type, unknown = 0, i;
		uint32_t cpu;
		const struct nlattr *st[TAPROOT_A_STAT_MAX + 1] = { 0 };

		if (len - off < NLA_HDRLEN || na->nla_len < NLA_HDRLEN ||
		    na->nla_len > len - off)
			return false;
		type = na->nla_type & NLA_TYPE_MASK;
		if (type == TAPROOT_A_STATS_CPU) {
			if (parse_attrs(nla_data(na), nla_len(na), st,
					TAPROOT_A_STAT_MAX, &unknown) || unknown)
				return false;
			if (!get_u32(st[TAPROOT_A_STAT_CPU], &cpu))
				return false;
			for (i = TAPROOT_A_STAT_SAMPLES; i <= TAPROOT_A_STAT_MAX; i++)
				if (i != TAPROOT_A_STAT_PAD && i != TAPROOT_A_STAT_UNWIND &&
				    !get_u64(st[i]))
					return false;
			if (!check_stats_unwind(st[TAPROOT_A_STAT_UNWIND]))
				return false;
			ncpu++;
		} else if (!check_stats_module(type, na)) {
			return false;
		}
		off += NLA_ALIGN(na->nla_len);
	}
	return ncpu > 0;
}

/* What came back for one datagram sent. */
struct outcome {
	unsigned int acks;	/* NLMSG_ERROR with error 0 */
	unsigned int family_acks; /* of those, to a message of the family */
	unsigned int errors;	/* NLMSG_ERROR with error < 0 */
	int first_err;		/* errno of the first error */
	unsigned int replies;	/* messages of the family */
	uint8_t reply_cmd;
	bool ok_reply;		/* the last reply passed its command's check */
};

static uint32_t seq_lo, seq_hi;	/* the sequence numbers of this datagram */

static void check_extack(const uint8_t *p, size_t len, size_t orig_len)
{
	const struct nlattr *tb[8] = { 0 };
	unsigned int unknown = 0;
	uint32_t off;

	if (parse_attrs(p, len, tb, 7, &unknown)) {
		fail("extended ACK TLVs do not parse");
		return;
	}
	if (tb[NLMSGERR_ATTR_MSG] &&
	    (nla_len(tb[NLMSGERR_ATTR_MSG]) == 0 ||
	     !memchr(nla_data(tb[NLMSGERR_ATTR_MSG]), 0,
		     nla_len(tb[NLMSGERR_ATTR_MSG]))))
		fail("extended ACK message not NUL-terminated");
	if (tb[NLMSGERR_ATTR_OFFS]) {
		if (!get_u32(tb[NLMSGERR_ATTR_OFFS], &off))
			fail("extended ACK offset not a u32");
		else if (off >= orig_len)
			fail("extended ACK offset %u beyond the request (%zu bytes)",
			     off, orig_len);
	}
}

static void check_datagram(const uint8_t *p, size_t len, struct outcome *o)
{
	size_t off = 0;

	while (off < len) {
		const struct nlmsghdr *nh = (const struct nlmsghdr *)(p + off);
		const uint8_t *body;
		size_t blen;

		if (len - off < NLMSG_HDRLEN || nh->nlmsg_len < NLMSG_HDRLEN ||
		    nh->nlmsg_len > len - off) {
			fail("a reply's nlmsghdr does not fit its datagram");
			return;
		}
		body = p + off + NLMSG_HDRLEN;
		blen = nh->nlmsg_len - NLMSG_HDRLEN;
		n_replies++;
		if (nh->nlmsg_pid != my_port)
			fail("a reply to port %u, not ours (%u)", nh->nlmsg_pid,
			     my_port);
		if (nh->nlmsg_seq < seq_lo || nh->nlmsg_seq > seq_hi)
			fail("a reply with seq %u, not one of this datagram's (%u..%u)",
			     nh->nlmsg_seq, seq_lo, seq_hi);
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = (const struct nlmsgerr *)body;
			size_t need = sizeof(*e);

			if (blen < need) {
				fail("NLMSG_ERROR shorter than struct nlmsgerr");
				return;
			}
			if (e->error > 0 || e->error < -4095) {
				fail("NLMSG_ERROR with error %d", e->error);
			} else if (e->error == 0) {
				o->acks++;
				/* an ACK to a non-request is not an acceptance */
				o->family_acks += e->msg.nlmsg_type == family_id &&
						  (e->msg.nlmsg_flags & NLM_F_REQUEST);
			} else {
				o->errors++;
				if (!o->first_err)
					o->first_err = -e->error;
				errno_count[-e->error]++;
			}
			if (e->msg.nlmsg_seq != nh->nlmsg_seq)
				fail("NLMSG_ERROR echoes seq %u in a reply of seq %u",
				     e->msg.nlmsg_seq, nh->nlmsg_seq);
			if (!(nh->nlmsg_flags & NLM_F_CAPPED) && e->error)
				need += e->msg.nlmsg_len - NLMSG_HDRLEN;
			if (blen < need) {
				fail("NLMSG_ERROR cut short: %zu < %zu bytes", blen, need);
				return;
			}
			if (nh->nlmsg_flags & NLM_F_ACK_TLVS)
				check_extack(body + NLMSG_ALIGN(need), blen > NLMSG_ALIGN(need) ?
					     blen - NLMSG_ALIGN(need) : 0,
					     e->msg.nlmsg_len);
			n_validated++;
		} else if (nh->nlmsg_type == family_id) {
			const struct genlmsghdr *g = (const struct genlmsghdr *)body;
			const uint8_t *a = body + GENL_HDRLEN;
			size_t alen = blen - GENL_HDRLEN;
			const char *why = "attributes of the wrong set";
			bool ok;

			if (blen < GENL_HDRLEN) {
				fail("a reply shorter than genlmsghdr");
				return;
			}
			o->replies++;
			o->reply_cmd = g->cmd;
			if (g->version != TAPROOT_GENL_VERSION)
				fail("a reply of version %u", g->version);
			switch (g->cmd) {
			case TAPROOT_CMD_GET_INFO:
				ok = check_info(a, alen);
				break;
			case TAPROOT_CMD_GET_CONFIG:
				ok = check_config(a, alen, &why);
				break;
			case TAPROOT_CMD_GET_STATS:
				ok = check_stats(a, alen);
				break;
			default:
				ok = false;
				why = "a command that has no reply";
			}
			o->ok_reply = ok;
			if (!ok)
				fail("reply to command %u: %s", g->cmd, why);
			else
				n_validated++;
		} else if (nh->nlmsg_type == GENL_ID_CTRL) {
			/* the controller answering a message sent its way */
			if (blen < GENL_HDRLEN ||
			    parse_attrs(body + GENL_HDRLEN, blen - GENL_HDRLEN,
					NULL, 0, NULL))
				fail("a reply of the controller does not parse");
			else
				n_validated++;
		} else if (nh->nlmsg_type == NLMSG_DONE) {
			/* the end of a dump: of the controller's (ours has none) */
			if (blen < sizeof(int))
				fail("NLMSG_DONE without its status");
			else
				n_validated++;
		} else {
			fail("a reply of type %u (family %u)", nh->nlmsg_type,
			     family_id);
		}
		off += NLMSG_ALIGN(nh->nlmsg_len);
	}
}

/* Sends @len bytes and reads every reply. */
static void exchange(const uint8_t *buf, size_t len, struct outcome *o)
{
	ssize_t n;

	memset(o, 0, sizeof(*o));
	send_msg(buf, len);
	n_sent++;
	while ((n = recv_one()) >= 0)
		check_datagram(rx, (size_t)n, o);
}

/* ------------------------------------------------------------ state */

static uint8_t aux_buf[4096];

/* A request of our own (not counted as fuzz); returns its outcome. */
static void simple(uint8_t cmd, struct outcome *o)
{
	struct msg m = { .buf = aux_buf };
	size_t off;
	const char *saved = kind_name;
	const uint8_t *sm = cur_msg;
	size_t sl = cur_len;

	off = hdr(&m, family_id, cmd, NLM_F_REQUEST | NLM_F_ACK);
	end(&m, off);
	seq_lo = seq_hi = seq_next - 1;
	kind_name = "state-read";
	cur_msg = m.buf;
	cur_len = m.len;
	exchange(m.buf, m.len, o);
	n_sent--;	/* not fuzz */
	kind_name = saved;
	cur_msg = sm;
	cur_len = sl;
}

/*
 * What the module's state is known to be, read lazily: a message that
 * may have changed it (accepted, or dropped without a word, which is how a
 * request without NLM_F_ACK succeeds) makes it unknown, and it is read
 * again (and its ranges checked) before the next message that needs it.
 */
static struct config cfg_known;
static uint32_t running_known;
static bool cfg_valid, running_valid;

/* GET_CONFIG into @c (checked by check_config()). */
static bool read_config(struct config *c)
{
	struct outcome o;

	simple(TAPROOT_CMD_GET_CONFIG, &o);
	if (o.errors || o.replies != 1 || !o.ok_reply) {
		fail("GET_CONFIG failed (errno %d) after this message", o.first_err);
		return false;
	}
	*c = cfg_seen;
	return true;
}

/* GET_INFO's RUNNING into @running. */
static bool read_running(uint32_t *running)
{
	struct outcome o;

	simple(TAPROOT_CMD_GET_INFO, &o);
	if (o.errors || o.replies != 1 || !o.ok_reply) {
		fail("GET_INFO failed (errno %d) after this message", o.first_err);
		return false;
	}
	*running = running_seen;
	return true;
}

static bool read_state(struct config *c, uint32_t *running)
{
	return read_config(c) && read_running(running);
}

static bool know_state(void)
{
	if (!cfg_valid && !(cfg_valid = read_config(&cfg_known)))
		return false;
	if (!running_valid && !(running_valid = read_running(&running_known)))
		return false;
	return true;
}

static bool config_eq(const struct config *a, const struct config *b)
{
	return !memcmp(a->v, b->v, sizeof(a->v)) && a->ntgids == b->ntgids &&
	       !memcmp(a->tgids, b->tgids, a->ntgids * sizeof(a->tgids[0]));
}

/* The sorted set of @p's TGIDs. */
static uint32_t sorted_tgids(const struct plan *p, uint32_t *out)
{
	uint32_t i, j, n = 0;

	for (i = 0; i < p->ntgids; i++) {
		uint32_t v = p->tgids[i];

		for (j = n; j > 0 && out[j - 1] > v; j--)
			out[j] = out[j - 1];
		out[j] = v;
		n++;
	}
	for (i = j = 0; i < n; i++)
		if (!j || out[i] != out[j - 1])
			out[j++] = out[i];
	return j;
}

/* A valid request got @o: check what the ABI promises. */
static void check_valid(const struct plan *p, const struct outcome *o,
			uint32_t was_running)
{
	struct config c;
	uint32_t i, n, want[TAPROOT_MAX_TGIDS + 1];
	int err = o->errors ? o->first_err : 0;
	bool busy_ok;

	n_valid++;
	if (o->acks + o->errors != 1) {
		fail("a valid request got %u ACKs and %u errors", o->acks, o->errors);
		return;
	}
	switch (p->cmd) {
	case TAPROOT_CMD_GET_INFO:
	case TAPROOT_CMD_GET_CONFIG:
	case TAPROOT_CMD_GET_STATS:
		if (err || o->replies != 1 || o->reply_cmd != p->cmd)
			fail("valid GET (cmd %u): errno %d, %u replies of cmd %u",
			     p->cmd, err, o->replies, o->reply_cmd);
		break;
	case TAPROOT_CMD_START:
	case TAPROOT_CMD_STOP:
		if (err == EALREADY ?
		    was_running != (p->cmd == TAPROOT_CMD_START) :
		    err != 0 && err != ENOMEM)
			fail("%s while %s: errno %d", p->cmd == TAPROOT_CMD_START ?
			     "START" : "STOP", was_running ? "running" : "stopped", err);
		if (!err) {
			p->cmd == TAPROOT_CMD_START ? n_starts++ : n_stops++;
			running_known = p->cmd == TAPROOT_CMD_START;
		} else if (err != EALREADY) {
			running_valid = false;
		}
		break;
	case TAPROOT_CMD_SET_CONFIG:
		/*
		 * While running: any FREQ_HZ or RING_PAGES is refused, an
		 * EVENTS mask with a causal kind not attached at START (which
		 * kinds were is not visible: any causal kind may be), and the
		 * FOLLOW flag when its probes were not attached at START.
		 */
		busy_ok = was_running &&
			  (p->has[TAPROOT_A_CFG_FREQ_HZ] ||
			   p->has[TAPROOT_A_CFG_RING_PAGES] ||
			   (p->has[TAPROOT_A_CFG_EVENTS] &&
			    (p->val[TAPROOT_A_CFG_EVENTS] & ~(uint32_t)TAPROOT_EV_SAMPLE)) ||
			   (p->has[TAPROOT_A_CFG_FLAGS] &&
			    (p->val[TAPROOT_A_CFG_FLAGS] & TAPROOT_CFG_F_FOLLOW)));
		/* a watermark kept from before may not fit a smaller ring */
		if (err == EINVAL && p->has[TAPROOT_A_CFG_RING_PAGES] &&
		    !p->has[TAPROOT_A_CFG_WATERMARK])
			break;
		if (err && !(err == EBUSY && busy_ok) && err != ENOMEM) {
			fail("valid SET_CONFIG refused: errno %d (running %u)", err,
			     was_running);
			break;
		}
		if (err)
			break;
		n_configs++;
		cfg_valid = read_config(&c);
		if (!cfg_valid)
			break;
		cfg_known = c;
		for (i = 0; i <= TAPROOT_A_MAX; i++)
			if (p->has[i] && c.v[i] != p->val[i])
				fail("SET_CONFIG of attribute %u to %u reads back %u",
				     i, p->val[i], c.v[i]);
		if (p->has_tgids) {
			n = sorted_tgids(p, want);
			if (n != c.ntgids || memcmp(want, c.tgids, n * sizeof(want[0])))
				fail("SET_CONFIG of %u TGIDs reads back %u, not the set given",
				     n, c.ntgids);
		}
		break;
	}
	n_valid_ok += !err;
}

/* ------------------------------------------------------------ family id */

static uint16_t resolve_family(void)
{
	struct msg m = { .buf = aux_buf };
	size_t off = hdr(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
			 NLM_F_REQUEST | NLM_F_ACK);
	ssize_t n;
	uint16_t id = 0;
	int err = 0;

	attr(&m, CTRL_ATTR_FAMILY_NAME, TAPROOT_GENL_NAME,
	     sizeof(TAPROOT_GENL_NAME));
	end(&m, off);
	send_msg(m.buf, m.len);
	while ((n = recv_one()) >= 0) {
		size_t o = 0;

		while (o + NLMSG_HDRLEN <= (size_t)n) {
			const struct nlmsghdr *nh = (const struct nlmsghdr *)(rx + o);
			const struct nlattr *tb[CTRL_ATTR_MAX + 1] = { 0 };

			if (nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > n - o)
				break;
			if (nh->nlmsg_type == NLMSG_ERROR)
				err = -((const struct nlmsgerr *)NLMSG_DATA(nh))->error;
			else if (nh->nlmsg_type == GENL_ID_CTRL &&
				 !parse_attrs(rx + o + NLMSG_HDRLEN + GENL_HDRLEN,
					      nh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
					      tb, CTRL_ATTR_MAX, NULL) &&
				 tb[CTRL_ATTR_FAMILY_ID] &&
				 nla_len(tb[CTRL_ATTR_FAMILY_ID]) == 2)
				memcpy(&id, nla_data(tb[CTRL_ATTR_FAMILY_ID]), 2);
			o += NLMSG_ALIGN(nh->nlmsg_len);
		}
	}
	if (!id) {
		fprintf(stderr, "nl-fuzz: no generic netlink family %s: %s\n",
			TAPROOT_GENL_NAME, err ? strerror(err) : "no reply");
		exit(2);
	}
	return id;
}

/* ------------------------------------------------------------ restore */

/* Stopped, the default configuration, no TGID filter. */
static void restore_defaults(void)
{
	struct msg m = { .buf = aux_buf };
	struct outcome o;
	struct config c;
	uint32_t running;
	size_t off, nest;

	kind_name = "restore";
	simple(TAPROOT_CMD_STOP, &o);
	off = hdr(&m, family_id, TAPROOT_CMD_SET_CONFIG, NLM_F_REQUEST | NLM_F_ACK);
	attr_u32(&m, TAPROOT_A_CFG_FREQ_HZ, TAPROOT_FREQ_DEFAULT);
	attr_u32(&m, TAPROOT_A_CFG_KSTACK_DEPTH, TAPROOT_KSTACK_DEFAULT);
	attr_u32(&m, TAPROOT_A_CFG_USTACK_BYTES, TAPROOT_USTACK_DEFAULT);
	attr_u32(&m, TAPROOT_A_CFG_EVENTS, TAPROOT_EV_SAMPLE);
	attr_u32(&m, TAPROOT_A_CFG_FLAGS, 0);
	attr_u32(&m, TAPROOT_A_CFG_RING_PAGES, TAPROOT_RING_PAGES_DEFAULT);
	attr_u32(&m, TAPROOT_A_CFG_WATERMARK,
		 TAPROOT_RING_PAGES_DEFAULT * (uint32_t)page_size / 2);
	attr_u32(&m, TAPROOT_A_CFG_SCHED_ONE_IN, TAPROOT_SCHED_ONE_IN_DEFAULT);
	nest = nest_start(&m, TAPROOT_A_CFG_TGIDS);
	nest_end(&m, nest);
	end(&m, off);
	seq_lo = seq_hi = seq_next - 1;
	cur_msg = m.buf;
	cur_len = m.len;
	exchange(m.buf, m.len, &o);
	n_sent--;
	if (o.errors || o.acks != 1)
		fail("SET_CONFIG of the defaults: errno %d", o.first_err);
	if (read_state(&c, &running)) {
		if (running)
			fail("still running after STOP");
		if (c.ntgids || c.v[TAPROOT_A_CFG_FREQ_HZ] != TAPROOT_FREQ_DEFAULT ||
		    c.v[TAPROOT_A_CFG_RING_PAGES] != TAPROOT_RING_PAGES_DEFAULT)
			fail("the defaults do not read back");
	}
}

/* ------------------------------------------------------------ main */

static const char *errno_name(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ERANGE: return "ERANGE";
	case EBUSY: return "EBUSY";
	case EALREADY: return "EALREADY";
	case ENOMEM: return "ENOMEM";
	case EMSGSIZE: return "EMSGSIZE";
	case E2BIG: return "E2BIG";
	case ENOBUFS: return "ENOBUFS";
	case EFAULT: return "EFAULT";
	case ESHUTDOWN: return "ESHUTDOWN";
	case EACCES: return "EACCES";
	case ENODATA: return "ENODATA";
	default: return NULL;
	}
}

int main(int argc, char **argv)
{
	uint64_t seed = 0;
	unsigned long count = 5000, i;
	unsigned int valid_pct = 5;
	bool have_seed = false;
	int cap_ack = 0;
	static uint8_t buf[MSG_MAX + 64];
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seed") && a + 1 < argc) {
			seed = strtoull(argv[++a], NULL, 0);
			have_seed = true;
		} else if (!strcmp(argv[a], "--count") && a + 1 < argc) {
			count = strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--valid-pct") && a + 1 < argc) {
			valid_pct = (unsigned int)strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--unprivileged")) {
			unprivileged = true;
		} else {
			fprintf(stderr, "usage: nl-fuzz [--seed S] [--count N] [--valid-pct P] [--unprivileged]\n");
			return 2;
		}
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
		       (uint64_t)getpid() << 32;
	}
	printf("seed=%" PRIu64 " count=%lu valid-pct=%u mode=%s\n", seed, count,
	       valid_pct, unprivileged ? "unprivileged" : "root");
	fflush(stdout);
	rng = seed;
	page_size = sysconf(_SC_PAGESIZE);

	open_socket();
	family_id = resolve_family();
	kind_name = "start";

	for (i = 0; i < count; i++) {
		struct msg m = { .buf = buf };
		struct plan p;
		struct outcome o;
		uint32_t first = seq_next;
		bool single, changer;
		uint8_t cmd;

		msg_index = i;
		/* now and then, errors without the request echoed, or with */
		if (chance(5)) {
			cap_ack = !cap_ack;
			if (setsockopt(sock, SOL_NETLINK, NETLINK_CAP_ACK,
				       &cap_ack, sizeof(cap_ack)))
				die("NETLINK_CAP_ACK");
		}
		gen(&m, &p, valid_pct);
		kind_name = kind_names[p.kind];
		cur_msg = m.buf;
		cur_len = m.len;
		/* one message in the datagram, and its command */
		single = m.len >= NLMSG_HDRLEN + GENL_HDRLEN &&
			 ((struct nlmsghdr *)m.buf)->nlmsg_len <= m.len &&
			 NLMSG_ALIGN(((struct nlmsghdr *)m.buf)->nlmsg_len) >= m.len;
		cmd = m.len > NLMSG_HDRLEN ? m.buf[NLMSG_HDRLEN] : 0;
		changer = single && (cmd == TAPROOT_CMD_SET_CONFIG ||
				     cmd == TAPROOT_CMD_START ||
				     cmd == TAPROOT_CMD_STOP);
		if (!unprivileged && (p.kind == K_VALID || changer) && !know_state())
			break;
		seq_lo = first;
		seq_hi = seq_next - 1;
		/*
		 * The random kinds put any seq in a header, and a shortened
		 * nlmsg_len makes what follows it a message of its own,
		 * whatever its bytes say: any seq is theirs.
		 */
		if (p.kind == K_RANDOM || p.kind == K_FLIPS || p.kind == K_BATCH ||
		    p.kind == K_BAD_HEADER) {
			seq_lo = 0;
			seq_hi = UINT32_MAX;
		}
		exchange(m.buf, m.len, &o);
		if (o.acks)
			n_acked_ok++;
		if (o.family_acks || o.replies)
			n_accepted++;
		if (o.errors)
			n_refused++;
		if (!o.acks && !o.errors && !o.replies)
			n_silent++;
		if (p.kind == K_VALID || p.kind == K_UNKNOWN_CMD ||
		    p.kind == K_ATTRS_NO_POLICY || p.kind == K_CFG_ONE_FAULT) {
			if (o.acks + o.errors != 1)
				fail("a request asking for an ACK got %u ACKs and %u errors",
				     o.acks, o.errors);
		}

		if (unprivileged) {
			if (o.family_acks || o.replies)
				fail("accepted without privilege (%u ACKs, %u replies)",
				     o.family_acks, o.replies);
			if (p.well_formed && o.first_err != EPERM)
				fail("a valid request without privilege: errno %d, not EPERM",
				     o.first_err);
			continue;
		}

		if (p.must_fail) {
			n_must_fail++;
			if (!o.errors || o.acks)
				fail("accepted, but must be refused");
		}
		if (p.kind == K_VALID) {
			check_valid(&p, &o, running_known);
			continue;
		}
		if (o.acks || o.replies || !o.errors || !single) {
			/*
			 * Accepted, silent, or several messages (one refused
			 * does not say the others were: a request without
			 * NLM_F_ACK succeeds silently): may have changed.
			 */
			cfg_valid = running_valid = false;
		} else if (!changer) {
			/* one request, refused, that changes nothing anyway */
		} else if (cmd == TAPROOT_CMD_SET_CONFIG) {
			struct config c;

			/* one request, refused: it changed nothing */
			if (!read_config(&c))
				break;
			if (!config_eq(&c, &cfg_known))
				fail("a refused SET_CONFIG (errno %d) changed the configuration",
				     o.first_err);
			cfg_known = c;
		} else {
			uint32_t running;

			if (!read_running(&running))
				break;
			if (running != running_known)
				fail("a refused %s (errno %d) changed the running state (%u -> %u)",
				     cmd == TAPROOT_CMD_START ? "START" : "STOP",
				     o.first_err, running_known, running);
			running_known = running;
		}
	}

	if (!unprivileged)
		restore_defaults();

	printf("sent=%lu accepted=%lu acked_ok=%lu refused=%lu silent=%lu replies=%lu validated=%lu failures=%lu must_fail=%lu valid=%lu valid_ok=%lu starts=%lu stops=%lu configs=%lu\n",
	       n_sent, n_accepted, n_acked_ok, n_refused, n_silent, n_replies, n_validated,
	       n_failures, n_must_fail, n_valid, n_valid_ok, n_starts, n_stops,
	       n_configs);
	printf("errno");
	for (a = 1; a < 4096; a++) {
		const char *name = errno_name(a);

		if (!errno_count[a])
			continue;
		if (name)
			printf(" %s=%lu", name, errno_count[a]);
		else
			printf(" E%d=%lu", a, errno_count[a]);
	}
	printf("\n");
	return n_failures ? 1 : 0;
}
