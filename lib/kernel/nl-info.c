// SPDX-License-Identifier: GPL-2.0
/*
 * TAPROOT_CMD_GET_INFO: what the loaded module is, and whether this library
 * may talk to it (the ABI check every program runs first: opening a
 * connection asks it before anything else).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "kernel/kernel-private.h"

#define TP_RELEASE_LEN	65	/* sizeof(struct new_utsname.release) */

_Static_assert(sizeof(((struct taproot_info *)0)->kernel_release) == TP_RELEASE_LEN,
	       "kernel_release holds a utsname release");

/*
 * Exact lengths: libnl checks .minlen (implied by .type) and .maxlen, and a
 * trailing NUL for NLA_STRING, whose .maxlen counts it.
 */
static struct nla_policy tp_info_policy[TAPROOT_A_MAX + 1] = {
	[TAPROOT_A_ABI_VERSION]	   = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_NR_CPUS]	   = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_KERNEL_RELEASE] = { .type = NLA_STRING, .maxlen = TP_RELEASE_LEN },
	[TAPROOT_A_FEATURES]	   = { .type = NLA_U64, .maxlen = sizeof(uint64_t) },
	[TAPROOT_A_RUNNING]	   = { .type = NLA_U8, .maxlen = sizeof(uint8_t) },
	[TAPROOT_A_PAGE_SIZE]	   = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
};

static const int tp_info_required[] = {
	TAPROOT_A_ABI_VERSION, TAPROOT_A_NR_CPUS, TAPROOT_A_KERNEL_RELEASE,
	TAPROOT_A_FEATURES, TAPROOT_A_RUNNING, TAPROOT_A_PAGE_SIZE,
};

int taproot_abi_check(uint32_t module_abi)
{
	if (module_abi == TAPROOT_ABI_VERSION)
		return 0;
	return tp_err(-TAPROOT_EABI,
		      "module ABI version %u, this tool speaks %u: load the matching taproot.ko",
		      module_abi, TAPROOT_ABI_VERSION);
}

static const char *const tp_feature_names[64] = {
	[0] = "sampling",	/* TAPROOT_FEAT_SAMPLING */
	[1] = "kstack",		/* TAPROOT_FEAT_KSTACK */
	[2] = "ustack",		/* TAPROOT_FEAT_USTACK */
	[3] = "sched-events",	/* TAPROOT_FEAT_SCHED_EVENTS */
	[4] = "proc-events",	/* TAPROOT_FEAT_PROC_EVENTS */
	[5] = "preempt-rt",	/* TAPROOT_FEAT_PREEMPT_RT */
	[7] = "follow",		/* TAPROOT_FEAT_FOLLOW */
	[8] = "python",		/* TAPROOT_FEAT_PYTHON */
	[9] = "count",		/* TAPROOT_FEAT_COUNT */
	[10] = "jvm",		/* TAPROOT_FEAT_JVM */
};
_Static_assert(TAPROOT_FEAT_SAMPLING == 1ULL << 0 && TAPROOT_FEAT_KSTACK == 1ULL << 1 &&
	       TAPROOT_FEAT_USTACK == 1ULL << 2 && TAPROOT_FEAT_SCHED_EVENTS == 1ULL << 3 &&
	       TAPROOT_FEAT_PROC_EVENTS == 1ULL << 4 && TAPROOT_FEAT_PREEMPT_RT == 1ULL << 5,
	       "tp_feature_names follows the TAPROOT_FEAT_* bits");
_Static_assert(TAPROOT_FEAT_FOLLOW == 1ULL << 7, "tp_feature_names: follow");
_Static_assert(TAPROOT_FEAT_PYTHON == 1ULL << 8, "tp_feature_names: python");
_Static_assert(TAPROOT_FEAT_COUNT == 1ULL << 9, "tp_feature_names: count");
_Static_assert(TAPROOT_FEAT_JVM == 1ULL << 10, "tp_feature_names: jvm");

const char *taproot_feature_name(unsigned int bit)
{
	return bit < 64 ? tp_feature_names[bit] : NULL;
}

/*
 * Name the first attribute of [@head, @head + @len) that @policy refuses,
 * or the garbage after the last one.
 */
static int tp_info_malformed(struct nlattr *head, int len)
{
	struct nlattr *tb[TAPROOT_A_MAX + 1];
	struct nlattr *a;
	char name[16];
	int rem;

	nla_for_each_attr(a, head, len, rem) {
		if (nla_parse(tb, TAPROOT_A_MAX, a, NLA_ALIGN(a->nla_len) < rem ?
			      (int)NLA_ALIGN(a->nla_len) : rem, tp_info_policy) < 0)
			return tp_err(-TAPROOT_EPROTO,
				      "malformed reply to get info: attribute %s of %d bytes",
				      tp_nl_attr_name(nla_type(a), name, sizeof(name)),
				      nla_len(a));
	}
	return tp_err(-TAPROOT_EPROTO,
		      "malformed reply to get info: %d bytes after the last whole attribute",
		      rem);
}

/*
 * The ABI version, before the rest: when it differs, the rest of the
 * reply may follow other rules, and the user must hear about the
 * version, not about an attribute that changed.
 */
static int tp_info_abi(struct nlattr *head, int len, struct taproot_info *info)
{
	struct nlattr *a = nla_find(head, len, TAPROOT_A_ABI_VERSION);

	if (!a)
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get info lacks attribute ABI_VERSION");
	if (nla_len(a) != sizeof(uint32_t))
		return tp_err(-TAPROOT_EPROTO,
			      "malformed reply to get info: attribute ABI_VERSION of %d bytes",
			      nla_len(a));
	info->abi_version = nla_get_u32(a);
	return taproot_abi_check(info->abi_version);
}

/* The attributes of @tb (parsed, all required present) into @info, checked. */
static int tp_info_fields(struct nlattr **tb, struct taproot_info *info)
{
	const char *release;
	uint32_t page_size;
	uint8_t running;
	size_t n;

	info->nr_cpus = nla_get_u32(tb[TAPROOT_A_NR_CPUS]);
	if (info->nr_cpus == 0)
		return tp_err(-TAPROOT_EPROTO, "reply to get info: NR_CPUS is 0");

	/* The policy guarantees a NUL at the end, within TP_RELEASE_LEN. */
	release = nla_data(tb[TAPROOT_A_KERNEL_RELEASE]);
	n = strnlen(release, (size_t)nla_len(tb[TAPROOT_A_KERNEL_RELEASE]));
	if (n == 0)
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get info: KERNEL_RELEASE is empty");
	memcpy(info->kernel_release, release, n);
	info->kernel_release[n] = '\0';

	info->features = nla_get_u64(tb[TAPROOT_A_FEATURES]);

	running = nla_get_u8(tb[TAPROOT_A_RUNNING]);
	if (running > 1)
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get info: RUNNING is %u, not 0 or 1", running);
	info->running = running;

	page_size = nla_get_u32(tb[TAPROOT_A_PAGE_SIZE]);
	if (page_size == 0 || (page_size & (page_size - 1)))
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get info: PAGE_SIZE %u is not a power of two",
			      page_size);
	info->page_size = page_size;
	return 0;
}

int tp_info_parse(const struct nlmsghdr *nlh, struct taproot_info *info)
{
	/* libnl's accessors take non-const pointers; they only read. */
	struct nlmsghdr *hdr = (struct nlmsghdr *)nlh;
	struct nlattr *tb[TAPROOT_A_MAX + 1];
	const struct genlmsghdr *gh;
	struct nlattr *head, *a;
	int len, rem, err;
	char name[16];
	size_t i;

	memset(info, 0, sizeof(*info));
	if (nlh->nlmsg_len < NLMSG_HDRLEN || !genlmsg_valid_hdr(hdr, 0))
		return tp_err(-TAPROOT_EPROTO,
			      "malformed reply to get info: %u bytes, no generic netlink header",
			      nlh->nlmsg_len);
	gh = genlmsg_hdr(hdr);
	if (gh->cmd != TAPROOT_CMD_GET_INFO)
		return tp_err(-TAPROOT_EPROTO,
			      "reply to get info carries command %u", gh->cmd);
	head = genlmsg_attrdata(gh, 0);
	len = genlmsg_attrlen(gh, 0);
	err = tp_info_abi(head, len, info);
	if (err < 0)
		return err;

	/* Attributes are laid end to end; anything after the last is garbage. */
	nla_for_each_attr(a, head, len, rem)
		;
	if (rem > 0 || nla_parse(tb, TAPROOT_A_MAX, head, len, tp_info_policy) < 0)
		return tp_info_malformed(head, len);

	for (i = 0; i < sizeof(tp_info_required) / sizeof(tp_info_required[0]); i++)
		if (!tb[tp_info_required[i]])
			return tp_err(-TAPROOT_EPROTO,
				      "reply to get info lacks attribute %s",
				      tp_nl_attr_name(tp_info_required[i], name,
						      sizeof(name)));
	return tp_info_fields(tb, info);
}

static int tp_info_reply(const struct nlmsghdr *nlh, void *arg)
{
	return tp_info_parse(nlh, arg);
}

int taproot_nl_get_info(struct taproot_nl *nl, struct taproot_info *info)
{
	memset(info, 0, sizeof(*info));
	return tp_nl_request_one(nl, TAPROOT_CMD_GET_INFO, "get info", tp_info_reply, info);
}

int taproot_module_info(struct taproot_info *info)
{
	struct taproot_nl *nl;
	int err;

	err = taproot_nl_open(&nl);
	if (err == 0)
		err = taproot_nl_get_info(nl, info);
	taproot_nl_close(nl);
	return err;
}

int taproot_nl_open(struct taproot_nl **nlp)
{
	struct taproot_info info;
	struct taproot_nl *nl;
	int err;

	*nlp = NULL;
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return tp_err(-ENOMEM, NULL);
	err = tp_nl_connect(nl);
	if (err < 0)
		goto out_free;
	err = taproot_nl_get_info(nl, &info);
	if (err < 0)
		goto out_close;
	*nlp = nl;
	return 0;

out_close:
	taproot_nl_close(nl);
	return err;
out_free:
	free(nl);
	return err;
}
