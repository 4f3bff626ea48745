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
 * reject-all policy: any attribute is refused. That is 6.1's core and
 * later; 5.10's checks neither header and parses no attribute of an op
 * without a policy, so tap_genl_check_request() checks the same again.
 * The family has no .maxattr: ops take it when they have none, and the
 * core's reject-all policy has one entry (7.2: a read past it, and a
 * BUG() in the attribute's validation). No op sets GENL_DONT_VALIDATE_*.
 * Commands that are not in tap_genl_ops get -EOPNOTSUPP from the core.
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
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <net/genetlink.h>

#include "config.h"
#include "count.h"
#include "events.h"
#include "follow.h"
#include "ring.h"
#include "sample.h"
#include "taproot.h"
#include "utab.h"

/*
 * State. Commands that read or change the configuration or the sampling
 * state hold tap_ctl_lock (config.h) from validation to the last change and
 * the notification, so that concurrent requests apply one after the other
 * and subscribers see notifications in the order of the changes. Nothing
 * under it waits for a sample handler except stop, which releases the perf
 * events, and a handler never takes it.
 */

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

/*
 * What genetlink checks itself since 6.1, before pre_doit, and 5.10's does
 * not (see "Validation" above). A request with NLM_F_DUMP never gets here:
 * it goes to a dumpit, which no op has.
 */
static int tap_genl_check_request(const struct tap_genl_hook_op *op,
				  const struct genl_info *info)
{
	if (info->genlhdr->reserved) {
		GENL_SET_ERR_MSG(info, "genlmsghdr.reserved field is not 0");
		return -EINVAL;
	}
	if (info->nlhdr->nlmsg_flags &
	    ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO)) {
		GENL_SET_ERR_MSG(info,
				 "ambiguous or reserved bits set in nlmsg_flags");
		return -EINVAL;
	}
	if (!op->policy && genlmsg_len(info->genlhdr)) {
		GENL_SET_ERR_MSG(info, "this command takes no attributes");
		return -EINVAL;
	}
	return 0;
}

static int tap_genl_pre_doit(const struct tap_genl_hook_op *op,
			     struct sk_buff *skb, struct genl_info *info)
{
	int err = tap_genl_check_request(op, info);

	if (err)
		return err;
	if (netlink_capable(skb, CAP_PERFMON) ||
	    netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;

	GENL_SET_ERR_MSG(info, "needs CAP_PERFMON or CAP_SYS_ADMIN");
	return -EPERM;
}

/* TAPROOT_A_FEATURES: only what this build really provides. */
static u64 tap_features(void)
{
	u64 features = TAPROOT_FEAT_SAMPLING | TAPROOT_FEAT_KSTACK |
		       TAPROOT_FEAT_USTACK | TAPROOT_FEAT_UNWIND |
		       TAPROOT_FEAT_PYTHON | TAPROOT_FEAT_COUNT | TAPROOT_FEAT_JVM;

	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		features |= TAPROOT_FEAT_PREEMPT_RT;
	return features | tap_events_features();
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
	    nla_put_u8(msg, TAPROOT_A_RUNNING, tap_sample_running()) ||
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

/* ---------------------------------------------------------- NOTIFY */

/*
 * TAPROOT_CMD_NOTIFY to the "session" group, in every network namespace
 * (netnsok). Under tap_ctl_lock, so that notifications keep the order of
 * the changes. Best effort: a subscriber whose socket is full misses it and
 * sees ENOBUFS on its socket, which is how netlink says so.
 */
static void tap_genl_notify(u32 what)
{
	struct sk_buff *msg;
	void *hdr;

	lockdep_assert_held(&tap_ctl_lock);

	msg = genlmsg_new(nla_total_size(sizeof(u32)) +
			  nla_total_size(sizeof(u8)), GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &tap_genl_family, 0, TAPROOT_CMD_NOTIFY);
	if (!hdr ||
	    nla_put_u32(msg, TAPROOT_A_NOTIFY, what) ||
	    nla_put_u8(msg, TAPROOT_A_RUNNING, tap_sample_running())) {
		WARN_ON_ONCE(1);	/* the size above is wrong */
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	/* -ESRCH: nobody listens, which is fine. */
#ifdef HAS_GENL_MCAST_ALLNS_GFP
	genlmsg_multicast_allns(&tap_genl_family, msg, 0, TAP_MCGRP_SESSION,
				GFP_KERNEL);
#else
	genlmsg_multicast_allns(&tap_genl_family, msg, 0, TAP_MCGRP_SESSION);
#endif
}

/* ---------------------------------------------------------- SET_CONFIG */

static const struct nla_policy tap_tgids_policy[TAPROOT_A_CFG_TGID + 1] = {
	[TAPROOT_A_CFG_TGID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/*
 * Beyond NLA_POLICY_RANGE, whose bounds are s16. Not const: 6.1's policy
 * points at it through a non-const pointer.
 */
static struct netlink_range_validation tap_ustack_range __ro_after_init = {
	.min = 0,
	.max = TAPROOT_USTACK_MAX,
};

static struct netlink_range_validation tap_one_in_range __ro_after_init = {
	.min = 1,
	.max = TAPROOT_SCHED_ONE_IN_MAX,
};

static struct netlink_range_validation tap_unwind_mem_range __ro_after_init = {
	.min = 1,
	.max = TAPROOT_UNWIND_MEM_MAX,
};

static const struct nla_policy tap_set_config_policy[TAPROOT_A_CFG_UNWIND_MEM + 1] = {
	[TAPROOT_A_CFG_FREQ_HZ] = NLA_POLICY_RANGE(NLA_U32, 1,
						   TAPROOT_FREQ_MAX),
	[TAPROOT_A_CFG_KSTACK_DEPTH] = NLA_POLICY_RANGE(NLA_U32, 0,
							TAPROOT_KSTACK_MAX),
	[TAPROOT_A_CFG_USTACK_BYTES] = NLA_POLICY_FULL_RANGE(NLA_U32,
							     &tap_ustack_range),
	[TAPROOT_A_CFG_EVENTS] = NLA_POLICY_MASK(NLA_U32, TAPROOT_EV_ALL),
	[TAPROOT_A_CFG_FLAGS] = NLA_POLICY_MASK(NLA_U32, TAPROOT_CFG_F_ALL),
	[TAPROOT_A_CFG_RING_PAGES] = NLA_POLICY_RANGE(NLA_U32,
						      TAPROOT_RING_PAGES_MIN,
						      TAPROOT_RING_PAGES_MAX),
	[TAPROOT_A_CFG_WATERMARK] = NLA_POLICY_MIN(NLA_U32, 1),
	[TAPROOT_A_CFG_TGIDS] = NLA_POLICY_NESTED(tap_tgids_policy),
	[TAPROOT_A_CFG_SCHED_ONE_IN] = NLA_POLICY_FULL_RANGE(NLA_U32,
							     &tap_one_in_range),
	[TAPROOT_A_CFG_UNWIND_FRAMES] = NLA_POLICY_RANGE(NLA_U32, 1,
							 TAPROOT_UNWIND_FRAMES_MAX),
	[TAPROOT_A_CFG_UNWIND_MEM] = NLA_POLICY_FULL_RANGE(NLA_U32,
							   &tap_unwind_mem_range),
};

/*
 * Reads the TGID set of @nest into @cfg. The policy has checked each
 * TGID (a u32 > 0, nothing else in the nest).
 */
static int tap_parse_tgids(struct tap_config *cfg, const struct nlattr *nest,
			   struct netlink_ext_ack *extack)
{
	const struct nlattr *a;
	int rem;
	u32 n = 0;

	nla_for_each_nested(a, nest, rem) {
		if (n == TAPROOT_MAX_TGIDS) {
			NL_SET_ERR_MSG_ATTR(extack, nest, "too many tgids");
			return -E2BIG;
		}
		cfg->tgids[n++] = nla_get_u32(a);
	}
	cfg->nr_tgids = n;
	tap_config_sort_tgids(cfg);
	return 0;
}

/* The sampling attributes of @tb into @cfg: what and how often. */
static int tap_parse_sampling(struct tap_config *cfg, struct nlattr **tb, bool running,
			      struct netlink_ext_ack *extack)
{
	struct nlattr *a;

	a = tb[TAPROOT_A_CFG_FREQ_HZ];
	if (a) {
		if (running) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "cannot change the frequency while sampling");
			return -EBUSY;
		}
		cfg->freq_hz = nla_get_u32(a);
	}
	a = tb[TAPROOT_A_CFG_KSTACK_DEPTH];
	if (a)
		cfg->kstack_depth = nla_get_u32(a);
	a = tb[TAPROOT_A_CFG_USTACK_BYTES];
	if (a) {
		if (nla_get_u32(a) % 8) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "user stack bytes must be a multiple of 8");
			return -EINVAL;
		}
		cfg->ustack_bytes = nla_get_u32(a);
	}
	a = tb[TAPROOT_A_CFG_EVENTS];
	if (a) {
		/* A causal kind's tracepoint is attached at START only. */
		if (running && (nla_get_u32(a) & TAP_EV_CAUSAL &
				~tap_events_attached())) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "cannot turn on switch, waking, fork, exec or exit events while sampling: not attached at start");
			return -EBUSY;
		}
		cfg->events = nla_get_u32(a);
	}
	a = tb[TAPROOT_A_CFG_SCHED_ONE_IN];
	if (a)
		tap_config_set_one_in(cfg, nla_get_u32(a));
	a = tb[TAPROOT_A_CFG_FLAGS];
	if (a) {
		/* Following needs the fork and exit probes, attached at START. */
		if (running && (nla_get_u32(a) & TAPROOT_CFG_F_FOLLOW) &&
		    !(tap_events_attached() & TAP_EV_FOLLOW)) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "cannot turn on follow while sampling: not attached at start");
			return -EBUSY;
		}
		cfg->flags = nla_get_u32(a);
	}
	a = tb[TAPROOT_A_CFG_UNWIND_FRAMES];
	if (a)
		cfg->unwind_frames = nla_get_u32(a);
	a = tb[TAPROOT_A_CFG_UNWIND_MEM];
	if (a)
		cfg->unwind_mem_mib = nla_get_u32(a);
	return 0;
}

/*
 * The ring attributes of @tb into @cfg: its size, and a watermark that
 * fits it (an automatic one follows the size).
 */
static int tap_parse_ring(struct tap_config *cfg, struct nlattr **tb, bool running,
			  struct netlink_ext_ack *extack)
{
	struct nlattr *a;
	u64 data_size;

	a = tb[TAPROOT_A_CFG_RING_PAGES];
	if (a) {
		if (running) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "cannot resize the rings while sampling");
			return -EBUSY;
		}
		if (!is_power_of_2(nla_get_u32(a))) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "ring pages must be a power of two");
			return -EINVAL;
		}
		cfg->ring_pages = nla_get_u32(a);
	}

	data_size = (u64)cfg->ring_pages * PAGE_SIZE;
	a = tb[TAPROOT_A_CFG_WATERMARK];
	if (a) {
		if (nla_get_u32(a) > data_size) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "watermark exceeds the ring data size");
			return -EINVAL;
		}
		cfg->watermark = nla_get_u32(a);
		cfg->watermark_auto = false;
	} else if (cfg->watermark_auto) {
		cfg->watermark = tap_config_auto_watermark(cfg->ring_pages);
	} else if (cfg->watermark > data_size) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TAPROOT_A_CFG_RING_PAGES],
				    "watermark exceeds the new ring data size");
		return -EINVAL;
	}
	return 0;
}

/*
 * Applies the attributes of @tb to @cfg, a copy of the current
 * configuration, checking what the policy could not. Changes nothing
 * else: on error the caller drops the copy.
 */
static int tap_parse_config(struct tap_config *cfg, struct nlattr **tb,
			    struct netlink_ext_ack *extack)
{
	bool running = tap_sample_running();
	int err;

	err = tap_parse_sampling(cfg, tb, running, extack);
	if (!err)
		err = tap_parse_ring(cfg, tb, running, extack);
	if (!err && tb[TAPROOT_A_CFG_TGIDS])
		err = tap_parse_tgids(cfg, tb[TAPROOT_A_CFG_TGIDS], extack);
	return err;
}

/*
 * Everything is checked before anything changes. The one step that can
 * still fail, resizing the rings, comes first; what follows cannot fail.
 */
static int tap_genl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	const struct tap_config *cur;
	struct tap_config *cfg;
	bool forget;
	int err;

	mutex_lock(&tap_ctl_lock);
	cur = tap_config_locked();
	cfg = tap_config_dup(GFP_KERNEL);
	if (!cfg) {
		err = -ENOMEM;
		goto out_unlock;
	}
	err = tap_parse_config(cfg, info->attrs, info->extack);
	if (err)
		goto out_free;
	if (cfg->flags & TAPROOT_CFG_F_COUNT) {
		err = tap_count_enable();
		if (err) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[TAPROOT_A_CFG_FLAGS],
					    "no memory for the count tables");
			goto out_free;
		}
	}

	if (cfg->ring_pages != cur->ring_pages) {
		err = tap_rings_resize(cfg->ring_pages);
		if (err == -EBUSY)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[TAPROOT_A_CFG_RING_PAGES],
					    "rings are mapped by a consumer");
		else if (err)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[TAPROOT_A_CFG_RING_PAGES],
					    "cannot resize the rings");
		if (err)
			goto out_free;
	}
	if (cfg->watermark != cur->watermark ||
	    cfg->ring_pages != cur->ring_pages)
		tap_rings_set_watermark(cfg->watermark);

	forget = tap_follow_renew(cur, cfg, info->attrs[TAPROOT_A_CFG_TGIDS]);
	tap_config_publish(cfg);
	/* Probes run with preemption off: a grace period waits for them. */
	if (forget && tap_events_attached())
		synchronize_rcu();
	tap_genl_notify(TAPROOT_NOTIFY_CONFIG);
	mutex_unlock(&tap_ctl_lock);
	return 0;

out_free:
	kfree(cfg);
out_unlock:
	mutex_unlock(&tap_ctl_lock);
	return err;
}

/* ---------------------------------------------------------- GET_CONFIG */

static size_t tap_config_size(void)
{
	return 10 * nla_total_size(sizeof(u32)) +	/* FREQ_HZ..WATERMARK, SCHED_ONE_IN, UNWIND_* */
	       nla_total_size(0) +			/* TGIDS */
	       TAPROOT_MAX_TGIDS * nla_total_size(sizeof(u32));
}

static int tap_put_config(struct sk_buff *msg, const struct tap_config *cfg)
{
	struct nlattr *nest;
	u32 i;

	if (nla_put_u32(msg, TAPROOT_A_CFG_FREQ_HZ, cfg->freq_hz) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_KSTACK_DEPTH, cfg->kstack_depth) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_USTACK_BYTES, cfg->ustack_bytes) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_EVENTS, cfg->events) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_FLAGS, cfg->flags) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_RING_PAGES, cfg->ring_pages) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_WATERMARK, cfg->watermark) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_SCHED_ONE_IN, cfg->sched_one_in) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_UNWIND_FRAMES, cfg->unwind_frames) ||
	    nla_put_u32(msg, TAPROOT_A_CFG_UNWIND_MEM, cfg->unwind_mem_mib))
		return -EMSGSIZE;

	nest = nla_nest_start(msg, TAPROOT_A_CFG_TGIDS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < cfg->nr_tgids; i++)
		if (nla_put_u32(msg, TAPROOT_A_CFG_TGID, cfg->tgids[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int tap_genl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(tap_config_size(), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put_reply(msg, info, &tap_genl_family, 0,
				TAPROOT_CMD_GET_CONFIG);
	if (!hdr)
		goto err_free;

	mutex_lock(&tap_ctl_lock);
	err = tap_put_config(msg, tap_config_locked());
	mutex_unlock(&tap_ctl_lock);
	if (err)
		goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	WARN_ON_ONCE(1);	/* tap_config_size() is wrong */
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* ---------------------------------------------------------- START, STOP */

static int tap_genl_start(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	mutex_lock(&tap_ctl_lock);
	if (tap_sample_running()) {
		GENL_SET_ERR_MSG(info, "sampling is already started");
		err = -EALREADY;
		goto out;
	}
	/* The rings' watermark is the configuration's, whatever they began with. */
	tap_rings_set_watermark(tap_config_locked()->watermark);
	/* The probes of the causal kinds enabled now; later ones need a restart. */
	err = tap_events_start(tap_config_locked()->events,
			       tap_config_locked()->flags);
	if (err == -ESHUTDOWN)
		GENL_SET_ERR_MSG(info, "the module is unloading");
	else if (err == -EOPNOTSUPP)
		GENL_SET_ERR_MSG(info, "this kernel lacks a tracepoint of the events enabled");
	else if (err)
		GENL_SET_ERR_MSG(info, "cannot attach to the scheduler's tracepoints");
	if (err)
		goto out;
	err = tap_sample_start();
	if (err == -ESHUTDOWN)
		GENL_SET_ERR_MSG(info, "the module is unloading");
	else if (err)
		GENL_SET_ERR_MSG(info, "cannot create the sampling events");
	if (err) {
		tap_events_stop();
		goto out;
	}
	tap_genl_notify(TAPROOT_NOTIFY_STARTED);
out:
	mutex_unlock(&tap_ctl_lock);
	return err;
}

static int tap_genl_stop(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	mutex_lock(&tap_ctl_lock);
	err = tap_sample_stop();
	if (err) {
		GENL_SET_ERR_MSG(info, "sampling is already stopped");
		goto out;
	}
	tap_events_stop();
	tap_genl_notify(TAPROOT_NOTIFY_STOPPED);
out:
	mutex_unlock(&tap_ctl_lock);
	return err;
}

/* ---------------------------------------------------------- GET_STATS */

static size_t tap_stats_cpu_size(void)
{
	return nla_total_size(0) +			/* STATS_CPU */
	       nla_total_size(sizeof(u32)) +		/* STAT_CPU */
	       16 * nla_total_size_64bit(sizeof(u64)) +	/* its 16 counters */
	       nla_total_size(0) +			/* STAT_UNWIND */
	       TAPROOT_KUNWIND_NR * nla_total_size_64bit(sizeof(u64));
}

/* TAPROOT_A_STAT_UNWIND: samples by how their walk ended. */
static int tap_put_stats_unwind(struct sk_buff *msg,
				const struct tap_sample_stats *ss)
{
	struct nlattr *nest;
	unsigned int i;

	nest = nla_nest_start(msg, TAPROOT_A_STAT_UNWIND);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < TAPROOT_KUNWIND_NR; i++)
		if (nla_put_u64_64bit(msg, i + 1, ss->unwind[i], 0))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int tap_put_stats_cpu(struct sk_buff *msg, unsigned int cpu)
{
	struct tap_events_stats es;
	struct tap_sample_stats ss;
	struct tap_ring_stats rs;
	struct nlattr *nest;

	tap_sample_get_stats(cpu, &ss);
	tap_ring_get_stats(cpu, &rs);
	tap_events_get_stats(cpu, &es);

	nest = nla_nest_start(msg, TAPROOT_A_STATS_CPU);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(msg, TAPROOT_A_STAT_CPU, cpu) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_SAMPLES, ss.samples,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_RECORDS, rs.records,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_BYTES, rs.bytes,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_LOST_FULL,
			      rs.lost[TAPROOT_LOST_FULL], TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_LOST_NESTED,
			      rs.lost[TAPROOT_LOST_NESTED],
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_USTACK_FAULTS,
			      ss.ustack_faults, TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_SWITCHES, es.switches,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_SWITCHES_SELECTED,
			      es.switches_selected, TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_WAKINGS, es.wakings,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_STACKS, ss.stacks,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_STACK_REFS, ss.stack_refs,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_PY_WALKS, ss.py_walks,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_PY_FRAMES, ss.py_frames,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_PY_CUT, ss.py_cut,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_COUNTED, ss.counted,
			      TAPROOT_A_STAT_PAD) ||
	    nla_put_u64_64bit(msg, TAPROOT_A_STAT_COUNT_FULL, ss.count_full,
			      TAPROOT_A_STAT_PAD) ||
	    tap_put_stats_unwind(msg, &ss))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * One nest per possible CPU, in one message: userspace must receive with
 * a buffer sized for it (MSG_PEEK | MSG_TRUNC tells the size).
 */
static int tap_genl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct tap_utab_stats us;
	struct sk_buff *msg;
	unsigned int cpu;
	void *hdr;
	int err;

	msg = genlmsg_new(nla_total_size(sizeof(u8)) +
			  num_possible_cpus() * tap_stats_cpu_size() +
			  nla_total_size(sizeof(u32)) +		/* FOLLOWED */
			  nla_total_size_64bit(sizeof(u64)) +	/* FOLLOW_FULL */
			  nla_total_size_64bit(sizeof(u64)) +	/* UNWIND_MEM_USED */
			  2 * nla_total_size(sizeof(u32)),	/* UNWIND_TABLES, _PROCS */
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put_reply(msg, info, &tap_genl_family, 0,
				TAPROOT_CMD_GET_STATS);
	if (!hdr)
		goto err_free;
	if (nla_put_u8(msg, TAPROOT_A_RUNNING, tap_sample_running()))
		goto err_free;
	mutex_lock(&tap_ctl_lock);
	err = nla_put_u32(msg, TAPROOT_A_FOLLOWED,
			  tap_follow_count(tap_config_locked()));
	mutex_unlock(&tap_ctl_lock);
	if (err || nla_put_u64_64bit(msg, TAPROOT_A_FOLLOW_FULL,
				     tap_follow_full(), TAPROOT_A_PAD))
		goto err_free;
	tap_utab_get_stats(&us);
	if (nla_put_u64_64bit(msg, TAPROOT_A_UNWIND_MEM_USED, us.mem_used,
			      TAPROOT_A_PAD) ||
	    nla_put_u32(msg, TAPROOT_A_UNWIND_TABLES, us.tables) ||
	    nla_put_u32(msg, TAPROOT_A_UNWIND_PROCS, us.procs))
		goto err_free;
	for_each_possible_cpu(cpu)
		if (tap_put_stats_cpu(msg, cpu))
			goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	WARN_ON_ONCE(1);	/* the size above is wrong */
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
	{
		.cmd = TAPROOT_CMD_SET_CONFIG,
		.doit = tap_genl_set_config,
		.policy = tap_set_config_policy,
		.maxattr = ARRAY_SIZE(tap_set_config_policy) - 1,
	},
	{
		.cmd = TAPROOT_CMD_GET_CONFIG,
		.doit = tap_genl_get_config,
	},
	{
		.cmd = TAPROOT_CMD_START,
		.doit = tap_genl_start,
	},
	{
		.cmd = TAPROOT_CMD_STOP,
		.doit = tap_genl_stop,
	},
	{
		.cmd = TAPROOT_CMD_GET_STATS,
		.doit = tap_genl_get_stats,
	},
};

static struct genl_family tap_genl_family __ro_after_init = {
	.name = TAPROOT_GENL_NAME,
	.version = TAPROOT_GENL_VERSION,
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
