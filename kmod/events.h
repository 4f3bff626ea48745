/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Causal events (events.c): the scheduler's tracepoints that produce
 * TAPROOT_REC_SWITCH, _WAKING, _FORK, _EXEC and _EXIT, as control (genl.c)
 * and load/unload (main.c) see them. Start and stop are called with
 * tap_ctl_lock held (config.h).
 */
#ifndef _TAPROOT_EVENTS_H
#define _TAPROOT_EVENTS_H

#include <linux/types.h>
#include <linux/taproot.h>

/* The kinds that come from tracepoints. */
#define TAP_EV_CAUSAL	(TAPROOT_EV_SWITCH | TAPROOT_EV_WAKING | \
			 TAPROOT_EV_FORK | TAPROOT_EV_EXEC | TAPROOT_EV_EXIT)

/*
 * Not a record kind: following children (TAPROOT_CFG_F_FOLLOW) needs the
 * fork and exit probes, whatever records are on.
 */
#define TAP_EV_FOLLOW	(1U << 31)

/* Load: find the tracepoints. Never fails; what is missing is not offered. */
void tap_events_init(void);

/* Unload, after sampling stopped: detach for good (start is refused). */
void tap_events_exit(void);

/* TAPROOT_FEAT_SCHED_EVENTS / _PROC_EVENTS / _FOLLOW this kernel allows. */
u64 tap_events_features(void);

/*
 * Attach the probes of the causal kinds in @events, and those following
 * children needs when @flags has TAPROOT_CFG_F_FOLLOW. Returns 0, or
 * -errno with nothing attached: -EOPNOTSUPP when a kind's tracepoint is
 * missing, -ESHUTDOWN while unloading.
 */
int tap_events_start(u32 events, u32 flags);

/*
 * Detach every probe and forget the processes followed (follow.h); when
 * this returns no probe of the module runs or will run. Sampling must be
 * stopped first.
 */
void tap_events_stop(void);

/*
 * The TAPROOT_EV_* kinds, and TAP_EV_FOLLOW, all of whose probes are
 * attached (under tap_ctl_lock).
 */
u32 tap_events_attached(void);

/* Cumulative counters of @cpu since load, for TAPROOT_CMD_GET_STATS. */
struct tap_events_stats {
	u64 switches;		/* filtered switch-outs, blocked or preempted */
	u64 switches_selected;	/* of those, selected */
	u64 wakings;		/* WAKING records written */
};

void tap_events_get_stats(unsigned int cpu, struct tap_events_stats *st);

#endif /* _TAPROOT_EVENTS_H */
