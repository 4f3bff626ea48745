/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Following children (follow.c): the set of processes a TGID filter takes
 * in because a filtered process forked them (TAPROOT_CFG_F_FOLLOW,
 * <linux/taproot.h> "Following children").
 *
 * The set is a fixed table of TAP_FOLLOW_SLOTS u64 slots, open addressing
 * with linear probing over at most TAP_FOLLOW_PROBES slots. A slot holds
 * (generation << TAP_FOLLOW_TGID_BITS) | tgid; tgid 0 is a tombstone (a
 * process that exited), and a slot of another generation than the
 * configuration's is free. A configuration carries the generation its
 * filter follows in (tap_config.follow_gen): forgetting every process is
 * publishing a configuration with a new generation, which readers see
 * atomically with the filter it goes with.
 *
 * Contexts. tap_follow_has() reads with plain loads: any context, NMI
 * included. tap_follow_fork() and tap_follow_exit() insert and remove with
 * cmpxchg, from the fork and exit probes (preemption off); no lock, no
 * allocation. The rest is control, under tap_ctl_lock.
 */
#ifndef _TAPROOT_FOLLOW_H
#define _TAPROOT_FOLLOW_H

#include <linux/types.h>
#include <linux/taproot.h>

struct task_struct;
struct tap_config;

/* Twice the processes followed at most: a probe finds a free slot soon. */
#define TAP_FOLLOW_SLOTS	(2 * TAPROOT_FOLLOW_MAX)
/* Slots a lookup, an insert or a removal looks at, at most. */
#define TAP_FOLLOW_PROBES	32
/*
 * A tgid is below PID_MAX_LIMIT (2^22 on 64-bit): the 40 bits above are
 * the generation. Generation 0 is never used, so a zeroed slot is free.
 */
#define TAP_FOLLOW_TGID_BITS	24
#define TAP_FOLLOW_GEN_FIRST	1	/* of the configuration at load */

/* Whether @tgid is followed in generation @gen. Any context. */
bool tap_follow_has(u64 gen, u32 tgid);

/*
 * sched_process_fork of a new process @tgid that is to be followed (its
 * parent passes a filter with FOLLOW, and it is not in the filter itself:
 * the caller's to judge) in generation @gen: follow it, or count it when
 * the set is full.
 */
void tap_follow_fork(u64 gen, u32 tgid);

/* sched_process_exit of @tgid's last thread, @cfg having FOLLOW. */
void tap_follow_exit(const struct tap_config *cfg, u32 tgid);

/*
 * Under tap_ctl_lock, before @cfg replaces @cur: when the processes
 * followed so far are to be forgotten (FOLLOW cleared, or a new filter
 * with @tgids_given), give @cfg a new generation and return true. Then,
 * once @cfg is published, the caller waits for the probes that may still
 * read @cur (a grace period, when they are attached): they insert into
 * and count in the old generation, which the next renewal reuses.
 */
bool tap_follow_renew(const struct tap_config *cur, struct tap_config *cfg,
		      bool tgids_given);

/*
 * Empty the set. Only when no probe and no sample handler can run (the
 * probes detached, sampling stopped): a process that exits meanwhile would
 * stay in it, and its tgid be followed once reused.
 */
void tap_follow_clear(void);

/* TAPROOT_A_FOLLOWED of @cfg's generation; under tap_ctl_lock. */
u32 tap_follow_count(const struct tap_config *cfg);

/* TAPROOT_A_FOLLOW_FULL: forks not followed since load, the set full. */
u64 tap_follow_full(void);

#endif /* _TAPROOT_FOLLOW_H */
