// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the netlink reply parsers (lib/nl-*.c) on arbitrary
 * datagrams.
 *
 * Input: one selector byte, then the bytes of one datagram as recv(2)
 * would return them. The datagram is split into messages the way libnl
 * does before any parser sees them (nlmsg_ok()/nlmsg_next(): a message's
 * nlmsg_len is within the datagram, the rest is left alone), and each
 * message is copied into a buffer of exactly nlmsg_len bytes so that
 * AddressSanitizer sees any read past the message. As in tp_nl_valid(),
 * the messages after the first refused one are not parsed. The selector
 * picks the parser, as the request that was sent would:
 *
 *   0 GET_INFO    tp_info_parse()
 *   1 GET_CONFIG  tp_config_parse()
 *   2 GET_STATS   tp_stats_parse() of every message, then tp_stats_finish()
 *   3 NOTIFY      tp_notify_parse()
 *   4 NLMSG_ERROR tp_nl_extack_msg() (the ACK / refusal path)
 *
 * The parsers' results are checked against their documented contracts
 * (0 or -TAPROOT_EPROTO/-TAPROOT_EABI, fields within the ranges the
 * contracts promise); a breach aborts, which libFuzzer reports as a crash.
 * With FUZZ_DEBUG set in the environment each parser's result is printed
 * (to see what an input does: `FUZZ_DEBUG=1 build/fuzz/fuzz_nl FILE`).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/msg.h>

#include "fuzz.h"
#include "kernel/kernel-private.h"


enum { SEL_INFO, SEL_CONFIG, SEL_STATS, SEL_NOTIFY, SEL_EXTACK, SEL_NR };


static int parse_one(unsigned int sel, const struct nlmsghdr *nlh, struct tp_stats *st)
{
	union {
		struct taproot_info info;
		struct taproot_config cfg;
		struct taproot_notification n;
	} u;
	char buf[256];
	int err;

	err = 0;
	switch (sel) {
	case SEL_INFO:
		err = tp_info_parse(nlh, &u.info);
		check(err == 0 || err == -TAPROOT_EPROTO || err == -TAPROOT_EABI);
		if (!err) {
			check(u.info.abi_version == TAPROOT_ABI_VERSION);
			check(u.info.nr_cpus >= 1);
			check(u.info.page_size && !(u.info.page_size & (u.info.page_size - 1)));
			check(memchr(u.info.kernel_release, '\0',
				     sizeof(u.info.kernel_release)) != NULL);
		}
		break;
	case SEL_CONFIG:
		err = tp_config_parse(nlh, &u.cfg);
		check(err == 0 || err == -TAPROOT_EPROTO);
		if (!err) {
			check(u.cfg.nr_tgids <= TAPROOT_MAX_TGIDS);
			check(u.cfg.freq_hz >= 1 && u.cfg.freq_hz <= TAPROOT_FREQ_MAX);
			check(u.cfg.kstack_depth <= TAPROOT_KSTACK_MAX);
			check(u.cfg.ustack_bytes <= TAPROOT_USTACK_MAX);
		}
		break;
	case SEL_STATS:
		err = tp_stats_parse(nlh, st);
		check(err == 0 || err == -TAPROOT_EPROTO);
		check(st->nr <= st->alloc && st->nr <= 65536);
		break;
	case SEL_NOTIFY:
		err = tp_notify_parse(nlh, &u.n);
		check(err == 0 || err == -TAPROOT_EPROTO);
		if (!err)
			check(u.n.what >= TAPROOT_NOTIFY_STARTED &&
			      u.n.what <= TAPROOT_NOTIFY_CONFIG);
		break;
	case SEL_EXTACK:
		err = tp_nl_extack_msg(nlh, buf, sizeof(buf));
		check(err == 0 || err == 1 || err == -TAPROOT_EPROTO);
		check(memchr(buf, '\0', sizeof(buf)) != NULL);
		break;
	}
	if (getenv("FUZZ_DEBUG"))
		fprintf(stderr, "fuzz_nl: parser %u: %d %s\n", sel, err,
			err < 0 ? taproot_errmsg(err) : "");
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_stats st = { 0 };
	struct nlmsghdr *nlh, *copy;
	unsigned int sel;
	uint8_t *dgram;
	int rem, err = 0;

	if (size < 1 || size > 65536)
		return 0;
	sel = data[0] % SEL_NR;
	/* The datagram, aligned as the receive buffer is. */
	dgram = malloc(size - 1 ? size - 1 : 1);
	if (!dgram)
		return 0;
	memcpy(dgram, data + 1, size - 1);
	rem = (int)(size - 1);
	for (nlh = (struct nlmsghdr *)dgram; !err && nlmsg_ok(nlh, rem);
	     nlh = nlmsg_next(nlh, &rem)) {
		copy = malloc(nlh->nlmsg_len);
		if (!copy)
			break;
		memcpy(copy, nlh, nlh->nlmsg_len);
		err = parse_one(sel, copy, &st);
		if (err > 0)
			err = 0;	/* extack: 1 is "found a message" */
		free(copy);
	}
	if (sel == SEL_STATS && !err && tp_stats_finish(&st) == 0) {
		if (getenv("FUZZ_DEBUG"))
			fprintf(stderr, "fuzz_nl: stats of %zu CPUs\n", st.nr);
		check(st.seen_running && st.nr >= 1);
		for (size_t i = 1; i < st.nr; i++)
			check(st.cpus[i - 1].cpu < st.cpus[i].cpu);
	}
	free(st.cpus);
	free(dgram);
	return 0;
}
