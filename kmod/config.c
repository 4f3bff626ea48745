// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration: its defaults, and how a new one is published (see
 * config.h). The netlink commands that validate and change it are in
 * genl.c; the sample handler reads it in sample.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "config.h"
#include "taproot.h"

/* Serialises control: see config.h. */
DEFINE_MUTEX(tap_ctl_lock);

struct tap_config __rcu *tap_config_ptr;

u32 tap_config_auto_watermark(u32 pages)
{
	return (u32)((u64)pages * PAGE_SIZE / 2);
}

struct tap_config *tap_config_dup(gfp_t gfp)
{
	lockdep_assert_held(&tap_ctl_lock);

	return kmemdup(tap_config_locked(), sizeof(struct tap_config), gfp);
}

void tap_config_publish(struct tap_config *cfg)
{
	struct tap_config *old;

	old = rcu_replace_pointer(tap_config_ptr, cfg,
				  lockdep_is_held(&tap_ctl_lock));
	/*
	 * A handler may still be reading the old one: handlers run with
	 * interrupts off, which a grace period waits for.
	 */
	if (old)
		kfree_rcu(old, rcu);
}

static int tap_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

void tap_config_sort_tgids(struct tap_config *cfg)
{
	u32 i, n = 0;

	sort(cfg->tgids, cfg->nr_tgids, sizeof(cfg->tgids[0]), tap_cmp_u32,
	     NULL);
	for (i = 0; i < cfg->nr_tgids; i++)
		if (!n || cfg->tgids[i] != cfg->tgids[n - 1])
			cfg->tgids[n++] = cfg->tgids[i];
	cfg->nr_tgids = n;
}

bool tap_config_tgid_in(const struct tap_config *cfg, u32 tgid)
{
	u32 lo = 0, hi = cfg->nr_tgids;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (cfg->tgids[mid] == tgid)
			return true;
		if (cfg->tgids[mid] < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int __init tap_config_init(unsigned int ring_pages)
{
	struct tap_config *cfg;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;

	cfg->freq_hz = TAPROOT_FREQ_DEFAULT;
	cfg->kstack_depth = TAPROOT_KSTACK_DEFAULT;
	cfg->ustack_bytes = TAPROOT_USTACK_DEFAULT;
	cfg->events = TAPROOT_EV_SAMPLE;
	cfg->flags = TAPROOT_CFG_F_DEFAULT;
	cfg->unwind_frames = TAPROOT_UNWIND_FRAMES_DEFAULT;
	cfg->unwind_mem_mib = TAPROOT_UNWIND_MEM_DEFAULT;
	cfg->ring_pages = ring_pages;
	cfg->watermark = tap_config_auto_watermark(ring_pages);
	cfg->watermark_auto = true;
	cfg->follow_gen = TAP_FOLLOW_GEN_FIRST;
	tap_config_set_one_in(cfg, TAPROOT_SCHED_ONE_IN_DEFAULT);

	mutex_lock(&tap_ctl_lock);
	tap_config_publish(cfg);
	mutex_unlock(&tap_ctl_lock);
	return 0;
}

/* After sampling has stopped: no reader is left. */
void tap_config_exit(void)
{
	struct tap_config *cfg;

	mutex_lock(&tap_ctl_lock);
	cfg = rcu_replace_pointer(tap_config_ptr, NULL,
				  lockdep_is_held(&tap_ctl_lock));
	mutex_unlock(&tap_ctl_lock);
	kfree(cfg);
}
