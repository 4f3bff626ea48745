/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration of the module (TAPROOT_A_CFG_* of <linux/taproot.h>)
 * and the lock that serialises control.
 *
 * The current configuration is an immutable struct tap_config reached
 * through an RCU pointer. Writers (netlink commands, in process context)
 * hold tap_ctl_lock, copy it with tap_config_dup(), change the copy and
 * publish it with tap_config_publish(); the old one is freed after a grace
 * period. Readers in atomic context (the sample handler: hardirq, and NMI
 * by design; the tracepoint probes, with preemption off) take it with
 * tap_config_sched() and never block; readers holding tap_ctl_lock use
 * tap_config_locked().
 */
#ifndef _TAPROOT_CONFIG_H
#define _TAPROOT_CONFIG_H

#include <linux/limits.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/types.h>
#include <linux/taproot.h>

#include "follow.h"

struct tap_config {
	u32 freq_hz;		/* TAPROOT_A_CFG_FREQ_HZ */
	u32 kstack_depth;	/* TAPROOT_A_CFG_KSTACK_DEPTH */
	u32 ustack_bytes;	/* TAPROOT_A_CFG_USTACK_BYTES */
	u32 events;		/* TAPROOT_A_CFG_EVENTS */
	u32 flags;		/* TAPROOT_A_CFG_FLAGS */
	u32 ring_pages;		/* TAPROOT_A_CFG_RING_PAGES */
	u32 watermark;		/* TAPROOT_A_CFG_WATERMARK */
	u32 sched_one_in;	/* TAPROOT_A_CFG_SCHED_ONE_IN */
	u32 unwind_frames;	/* TAPROOT_A_CFG_UNWIND_FRAMES */
	u32 unwind_mem_mib;	/* TAPROOT_A_CFG_UNWIND_MEM */
	/*
	 * The selection as the probes test it: an interval is selected when
	 * its hash is at most U64_MAX / sched_one_in (tap_config_set_one_in()),
	 * so that every context switch compares instead of dividing.
	 */
	u64 sched_select_max;
	/*
	 * Until userspace sets a watermark, it follows the ring size (half
	 * of the data area, as perf); once set, it stays as given.
	 */
	bool watermark_auto;
	/*
	 * The generation of the followed set (follow.h) this filter takes
	 * in, with TAPROOT_CFG_F_FOLLOW: a new one forgets them all.
	 */
	u64 follow_gen;
	u32 nr_tgids;		/* 0: the whole system */
	u32 tgids[TAPROOT_MAX_TGIDS];	/* sorted ascending, unique, > 0 */
	struct rcu_head rcu;
};

/*
 * Serialises every change of configuration and of sampling state (start,
 * stop, ring resize): held by the netlink commands that change them and by
 * module unload.
 */
extern struct mutex tap_ctl_lock;

extern struct tap_config __rcu *tap_config_ptr;

/* Lock-free read from atomic context (preemption or interrupts off). */
static inline const struct tap_config *tap_config_sched(void)
{
	return rcu_dereference_sched(tap_config_ptr);
}

/* Read under tap_ctl_lock. */
static inline const struct tap_config *tap_config_locked(void)
{
	return rcu_dereference_protected(tap_config_ptr,
					 lockdep_is_held(&tap_ctl_lock));
}

/* A writable copy of the current configuration, or NULL. */
struct tap_config *tap_config_dup(gfp_t gfp);

/* Make @cfg current (under tap_ctl_lock); the old one is freed later. */
void tap_config_publish(struct tap_config *cfg);

/* Sort @cfg->tgids and drop duplicates. */
void tap_config_sort_tgids(struct tap_config *cfg);

/* Set TAPROOT_A_CFG_SCHED_ONE_IN (1..TAPROOT_SCHED_ONE_IN_MAX). */
static inline void tap_config_set_one_in(struct tap_config *cfg, u32 one_in)
{
	cfg->sched_one_in = one_in;
	cfg->sched_select_max = U64_MAX / one_in;
}

/* Half the data area of a ring of @pages pages. */
u32 tap_config_auto_watermark(u32 pages);

/* Whether @tgid is in a non-empty filter (binary search, at most 7 steps). */
bool tap_config_tgid_in(const struct tap_config *cfg, u32 tgid);

/*
 * Whether a non-empty filter lets @tgid through: it is in the filter or,
 * with TAPROOT_CFG_F_FOLLOW, followed (follow.h). Any context, NMI too.
 * Here, not in config.c: the configuration is below the set of processes
 * followed, which reads it (make layering).
 */
static inline bool tap_config_tgid_filtered(const struct tap_config *cfg,
					    u32 tgid)
{
	return tap_config_tgid_in(cfg, tgid) ||
	       ((cfg->flags & TAPROOT_CFG_F_FOLLOW) &&
		tap_follow_has(cfg->follow_gen, tgid));
}

/*
 * Whether the TGID filter lets @tgid through: always with an empty set,
 * else when @tgid is in it or followed. The searches are out of line so
 * that the hot paths (the sample handler here; the switch and waking
 * probes test for a filter once and take a path without it, events.c)
 * carry no loop and need few registers when there is no filter, the
 * common case.
 */
static inline bool tap_config_tgid_ok(const struct tap_config *cfg, u32 tgid)
{
	return likely(!cfg->nr_tgids) || tap_config_tgid_filtered(cfg, tgid);
}

#endif /* _TAPROOT_CONFIG_H */
