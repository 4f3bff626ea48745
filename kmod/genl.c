// SPDX-License-Identifier: GPL-2.0
/*
 * The "taproot" generic netlink family: how userspace controls the module.
 * The commands and their attributes are documented in <linux/taproot.h>.
 *
 * Privilege. Every doit passes through tap_genl_pre_doit(), which wants
 * CAP_PERFMON or CAP_SYS_ADMIN in the initial user namespace, held both by
 * the opener of the socket and by the sender (netlink_capable() checks
 * both). GENL_ADMIN_PERM is not used: it tests CAP_NET_ADMIN, which says
 * nothing about the right to read every process's stack. The core checks
 * the header and the attributes before pre_doit, so a malformed request
 * gets -EINVAL whoever sends it. pre_doit does not run for dumps: an op
 * given a .dumpit must check privilege in its .start.
 *
 * Validation. resv_start_op is left at 0, so genetlink validates every
 * command strictly: genlmsghdr.reserved must be 0, nlmsg_flags may hold only
 * REQUEST, ACK, ECHO and DUMP, and attributes are parsed against the op's
 * own .policy with NL_VALIDATE_STRICT (unknown types, trailing bytes and
 * entries the policy leaves NLA_UNSPEC are refused, with an extack message
 * that points at the attribute). An op without a .policy gets the core's
 * reject-all policy: any attribute is refused. No op sets
 * GENL_DONT_VALIDATE_*. Commands that are not in tap_genl_ops get
 * -EOPNOTSUPP from the core.
 *
 * Concurrency. parallel_ops: the handlers do not run under the global
 * genl_mutex, which would stall every other family while a command here
 * waits (for example on CPU hotplug). A handler that touches shared state
 * (configuration, start and stop) must serialise on a lock of the module's.
 *
 * Namespaces. netnsok: a profiler is not a per-network-namespace resource,
 * and the privilege test above is against the initial user namespace, so a
 * privileged agent in its own network namespace may use the family too.
 * Notifications must therefore go out with genlmsg_multicast_allns().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/netlink.h>
#include <linux/utsname.h>
#include <net/genetlink.h>

#include "taproot.h"

/*
 * 6.2 split each command into do and dump halves: since then the family's
 * pre_doit/post_doit are handed a struct genl_split_ops, before a struct
 * genl_ops. The hooks here never look at it; only the type differs, and it
 * must match exactly (kCFI kernels trap on a mismatched indirect call).
 * The ops table itself stays struct genl_ops, which every kernel takes.
 */
#ifdef HAS_GENL_SPLIT_OPS
#define tap_genl_hook_op genl_split_ops
#else
#define tap_genl_hook_op genl_ops
#endif

enum tap_genl_mcgrp {
	TAP_MCGRP_SESSION,
};

/*
 * Open to any subscriber: the group carries state changes (started,
 * stopped, configuration changed), nothing about any process. Requiring
 * GENL_MCAST_CAP_SYS_ADMIN would shut out agents that hold CAP_PERFMON.
 */
static const struct genl_multicast_group tap_genl_mcgrps[] = {
	[TAP_MCGRP_SESSION] = { .name = TAPROOT_MCGRP_SESSION },
};

static struct genl_family tap_genl_family;

static int tap_genl_pre_doit(const struct tap_genl_hook_op *op,
			     struct sk_buff *skb, struct genl_info *info)
{
	if (netlink_capable(skb, CAP_PERFMON) ||
	    netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;

	GENL_SET_ERR_MSG(info, "needs CAP_PERFMON or CAP_SYS_ADMIN");
	return -EPERM;
}

/* TAPROOT_A_FEATURES: only what this build really provides. */
static u64 tap_features(void)
{
	u64 features = 0;

	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		features |= TAPROOT_FEAT_PREEMPT_RT;
	return features;
}

/* ---------------------------------------------------------- GET_INFO */

static size_t tap_info_size(void)
{
	return nla_total_size(sizeof(u32)) +		/* ABI_VERSION */
	       nla_total_size(sizeof(u32)) +		/* NR_CPUS */
	       nla_total_size(__NEW_UTS_LEN + 1) +	/* KERNEL_RELEASE */
	       nla_total_size_64bit(sizeof(u64)) +	/* FEATURES */
	       nla_total_size(sizeof(u8)) +		/* RUNNING */
	       nla_total_size(sizeof(u32));		/* PAGE_SIZE */
}

/*
 * NR_CPUS is nr_cpu_ids, one more than the highest possible CPU number,
 * not num_possible_cpus(): rings are indexed by CPU number, and with holes
 * in the possible mask the count would leave the highest CPUs unreachable.
 */
static int tap_genl_get_info(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(tap_info_size(), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put_reply(msg, info, &tap_genl_family, 0,
				TAPROOT_CMD_GET_INFO);
	if (!hdr)
		goto err_free;

	if (nla_put_u32(msg, TAPROOT_A_ABI_VERSION, TAPROOT_ABI_VERSION) ||
	    nla_put_u32(msg, TAPROOT_A_NR_CPUS, nr_cpu_ids) ||
	    nla_put_string(msg, TAPROOT_A_KERNEL_RELEASE, utsname()->release) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_FEATURES, tap_features(),
			      TAPROOT_A_PAD) ||
	    nla_put_u8(msg, TAPROOT_A_RUNNING, 0) ||	/* no sampling yet */
	    nla_put_u32(msg, TAPROOT_A_PAGE_SIZE, PAGE_SIZE))
		goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	/* tap_info_size() is an upper bound: this means it is wrong. */
	WARN_ON_ONCE(1);
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* ---------------------------------------------------------- the family */

/*
 * One row per command, in TAPROOT_CMD_* order. A command with attributes
 * gets its own policy table,
 *	static const struct nla_policy tap_<cmd>_policy[TAPROOT_A_MAX + 1]
 * with ranges and masks from <linux/taproot.h>, and
 *	.policy = tap_<cmd>_policy, .maxattr = ARRAY_SIZE(tap_<cmd>_policy) - 1
 * A command without attributes has no .policy: the core then refuses any.
 */
static const struct genl_ops tap_genl_ops[] = {
	{
		.cmd = TAPROOT_CMD_GET_INFO,
		.doit = tap_genl_get_info,
	},
};

static struct genl_family tap_genl_family __ro_after_init = {
	.name = TAPROOT_GENL_NAME,
	.version = TAPROOT_GENL_VERSION,
	.maxattr = TAPROOT_A_MAX,
	.netnsok = true,
	.parallel_ops = true,
	.pre_doit = tap_genl_pre_doit,
	.ops = tap_genl_ops,
	.n_ops = ARRAY_SIZE(tap_genl_ops),
	.mcgrps = tap_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(tap_genl_mcgrps),
	.module = THIS_MODULE,
};

int __init tap_genl_init(void)
{
	int err;

	err = genl_register_family(&tap_genl_family);
	if (err)
		pr_err("cannot register generic netlink family %s: %d\n",
		       TAPROOT_GENL_NAME, err);
	return err;
}

void tap_genl_exit(void)
{
	/* Waits for commands in progress: none runs after this. */
	genl_unregister_family(&tap_genl_family);
}
