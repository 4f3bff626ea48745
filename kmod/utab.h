/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store of uploaded unwind tables and process mappings (utab.c):
 * built by the ioctls of /dev/taproot (<linux/taproot.h>, "Unwinding in
 * the module"), read by the sample handler through tap_utab_lookup(), in
 * the shapes of utable.h that the walker (uwalk.h) takes.
 */
#ifndef _TAPROOT_UTAB_H
#define _TAPROOT_UTAB_H

#include <linux/types.h>

#include "utable.h"

struct file;
struct task_struct;

/*
 * TAPROOT_IOC_TABLE_ADD, _TABLE_DEL, _PROC_TOKEN and _MAPS_SET on @file
 * (dev.c's .unlocked_ioctl; -ENOTTY for any other @cmd). Process context;
 * sleeps. The store is made at the first of them and belongs to @file.
 */
long tap_utab_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/*
 * @file is released (dev.c, before the device is free for the next
 * opener): the store is unpublished, and freed once no sample handler can
 * see it any more. Sleeps (RCU grace periods).
 */
void tap_utab_release(struct file *file);

/*
 * The mappings uploaded for the process of @task, for the walker; or NULL
 * with *@why TAPROOT_KUNWIND_NO_PROC (nothing uploaded for it) or
 * TAPROOT_KUNWIND_STALE (it exec'd, or may have changed its mappings,
 * since they were set: mapped with the address space of the token, they
 * could name the wrong files).
 *
 * @task must be current (its mm is read, and only the running task's mm
 * is sure to stay). The caller is an RCU-sched reader (preemption or
 * interrupts off: the sample handler in hardirq or NMI) and stays one as
 * long as it uses the result, tables included: they are freed only after
 * a grace period. No lock, no allocation, no loop but the walk of one hash
 * chain (at most TAPROOT_PROCS_MAX entries; a few in practice).
 */
const struct tap_umaps *tap_utab_lookup(struct task_struct *task, u8 *why);

/*
 * The CPython layout set for the process of @task (TAPROOT_IOC_PYTHON_SET),
 * or NULL: none, or its address space is not the one it was set for. Its
 * mappings may have changed since (they are not checked, unlike
 * tap_utab_lookup()'s): the layout names where the interpreter keeps its
 * state, which stays put while the process maps memory, and its walk
 * reads as untrusted whatever it finds. Same context and lifetime as
 * tap_utab_lookup().
 */
struct taproot_python_layout;
const struct taproot_python_layout *tap_utab_python(struct task_struct *task);

/*
 * After a walk with @maps from tap_utab_lookup(@task, ...), in the same
 * RCU-sched read side: whether the address space still may not have
 * changed. false means a change began while the walk read the stack, so
 * its pcs may mix two mappings: the caller counts the sample STALE. (The
 * check at lookup already catches every change that began before.)
 */
bool tap_utab_unchanged(struct task_struct *task, const struct tap_umaps *maps);

/* For GET_STATS: what is uploaded now. */
struct tap_utab_stats {
	u64 mem_used;		/* TAPROOT_A_UNWIND_MEM_USED */
	u32 tables;		/* TAPROOT_A_UNWIND_TABLES */
	u32 procs;		/* TAPROOT_A_UNWIND_PROCS */
};

void tap_utab_get_stats(struct tap_utab_stats *st);

#endif /* _TAPROOT_UTAB_H */
