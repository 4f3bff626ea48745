/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timer sampling (sample.c), as control (genl.c) and unload (main.c) see
 * it. Start and stop are called with tap_ctl_lock held (config.h).
 */
#ifndef _TAPROOT_SAMPLE_H
#define _TAPROOT_SAMPLE_H

#include <linux/types.h>
#include <linux/taproot.h>

/* The sample flags a STACK record carries: how to read its pcs. */
#define TAP_STACK_FLAGS	(TAPROOT_SAMPLE_F_IN_KERNEL | \
			 TAPROOT_SAMPLE_F_KSTACK_TRUNC | \
			 TAPROOT_SAMPLE_F_USER_REGS)

/*
 * Start: one CPU-clock perf event per online CPU, at the configured
 * frequency, and on every CPU that comes online until stop. -EALREADY when
 * started; any other error leaves sampling stopped.
 */
int tap_sample_start(void);

/*
 * Stop: release every event; when this returns, no sample handler runs or
 * will run. -EALREADY when stopped.
 */
int tap_sample_stop(void);

bool tap_sample_running(void);

/* Cumulative counters of @cpu since load, for TAPROOT_CMD_GET_STATS. */
struct tap_sample_stats {
	u64 samples;		/* ticks that passed the filters */
	u64 ustack_faults;	/* samples with TAPROOT_SAMPLE_F_USTACK_FAULT */
	u64 stacks;		/* TAPROOT_REC_STACK records written */
	u64 stack_refs;		/* TAPROOT_REC_SAMPLE_REF records written */
	u64 unwind[TAPROOT_KUNWIND_NR];	/* samples by how their walk ended */
	u64 py_walks;		/* walks of CPython frames (a layout set) */
	u64 py_frames;		/* the frames they found */
	u64 py_cut;		/* walks cut short: tap_pywalk_res.cut */
	u64 counted;		/* samples counted in the CPU's table */
	u64 count_full;		/* samples the table had no room for */
};

void tap_sample_get_stats(unsigned int cpu, struct tap_sample_stats *st);

#endif /* _TAPROOT_SAMPLE_H */
