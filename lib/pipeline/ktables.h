/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The uploader of unwind tables and process mappings to the module
 * (lib/pipeline/ktables.c), for its in-kernel unwinder ("Unwinding in the
 * module" in <linux/taproot.h>). The pipeline drives it: the counters
 * below are public (struct taproot_pipeline_stats.kupload); the tp_*
 * functions are the pipeline's and the unit tests', not programs'.
 *
 * Policy:
 *  - When: a SAMPLE the module could not unwind because it has no
 *    mappings of the process (TAPROOT_KUNWIND_NO_PROC: the first samples
 *    of every process, so the proactive upload of a process met for the
 *    first time) or because they went stale (TAPROOT_KUNWIND_STALE), and
 *    one whose pc was in no uploaded mapping (_NO_MAPPING: a library
 *    mapped since, or one left out) uploads the process: token, maps read
 *    again, each executable mapping's table (once per build ID), then the
 *    mappings. ESTALE: once more at once, then at the next trigger. A
 *    causal event's snapshot whose walk ended so (TAPROOT_SNAP_UNWIND(),
 *    a SWITCH's blocked task, a WAKING's waker, whether or not the waker
 *    passes the pid filter) triggers the same upload of its process, so
 *    that a process that mostly blocks is uploaded without waiting for a
 *    sample; the limits below count both alike. A trigger taken before
 *    the process's mappings were last set (but for a pc in no mapping)
 *    only has the token checked: equal to the one they were set with,
 *    they are current and nothing more is done (maps_current); a
 *    consumer that runs behind would otherwise read the maps and set them
 *    again for each interval of its backlog, and one that ignored such
 *    triggers would learn of a change only as late as it runs behind. The
 *    consumer's own process is never uploaded (tp_ktables_skip()): it is
 *    sampled while it uploads, and compiling the tables of its own
 *    libraries would take the budget from the processes being profiled;
 *    its samples fall back to the stack copy.
 *  - Rate limits: a process at most once per KT_PROC_INTERVAL_MS (a pc in
 *    no mapping: KT_NOMAP_INTERVAL_MS, unless mappings were left out); all
 *    the uploading (compiles, /proc reads, ioctls) at most KT_DUTY_PERMILLE
 *    of the time, as a token bucket of KT_BURST_MS: the ring consumer
 *    compiles tables in its own thread, as the pipeline's unwinder does,
 *    and a compile cannot be cut short, so the bucket goes into debt and
 *    the next uploads wait. A table that is not cached is compiled only
 *    while the bucket holds time; a mapping whose table is not ready is
 *    left out of the upload, never uploaded as an rbp chain.
 *  - Waiting: a trigger that cannot be served at once (the interval, the
 *    budget) puts its process in a list served oldest first by every
 *    later trigger and by tp_ktables_tick() (each read of the rings), as
 *    does an upload that left mappings out for want of budget: a process
 *    that blocks after its first events is uploaded all the same.
 *  - Budget (ENOSPC): counted; tables that no uploaded process maps are
 *    deleted (TABLE_DEL) and, while nothing could be freed, no new table
 *    is uploaded until a process's exit frees some.
 *  - Exit (EXIT with TAPROOT_EXIT_F_GROUP_DEAD, or a process found dead
 *    by the sweep of processes silent for KT_SWEEP_IDLE_MS): its mappings
 *    are forgotten (MAPS_SET nr 0).
 * Nothing here is fatal to profiling: every failure is counted, and the
 * module keeps falling back to snapshots for what was not uploaded.
 */
#ifndef TAPROOT_PIPELINE_KTABLES_H
#define TAPROOT_PIPELINE_KTABLES_H

#include <stdint.h>

struct taproot_ring;
struct taproot_procs;
struct taproot_proc;
struct taproot_unwinder;
struct taproot_table_add;
struct taproot_proc_map;
struct taproot_python_layout;
struct taproot_jvm_layout;

/* Cumulative counters of the uploads (now: current values). */
struct taproot_kupload_stats {
	uint64_t tables_uploaded;	/* TABLE_ADD that made a table */
	uint64_t table_bytes;		/* bytes of their rows and rules */
	uint64_t tables_existed;	/* TABLE_ADD answered EEXIST: its id used */
	uint64_t tables_deleted;	/* TABLE_DEL of tables no process mapped */
	uint64_t maps_uploaded;		/* MAPS_SET of a process that took */
	uint64_t maps_forgotten;	/* MAPS_SET nr 0: the process exited */
	uint64_t maps_fp;		/* mappings uploaded without a table (rbp chain) */
	uint64_t maps_left_out;		/* mappings left out: table not ready or refused */
	uint64_t stale_retries;		/* ESTALE: token and maps read again */
	uint64_t budget_refusals;	/* ENOSPC: the module's unwind memory is full */
	uint64_t deferred;		/* uploads put off: the work budget was spent */
	uint64_t maps_current;		/* tokens that said the mappings held were current */
	uint64_t errors;		/* other failures */
	uint64_t work_ns;		/* time spent uploading, compiles included */
	uint64_t tables;		/* now: tables uploaded */
	uint64_t procs;			/* now: processes with mappings uploaded */
	uint64_t python_procs;		/* processes whose interpreter was described */
	uint64_t python_unwalked;	/* interpreters found that taproot does not walk */
	uint64_t jvm_procs;		/* processes whose JVM was described */
	uint64_t jvm_unwalked;		/* JVMs found that the module does not walk */
};

/* X(FIELD) for each field of taproot_kupload_stats, in order: its writers' list. */
#define TAPROOT_KUPLOAD_FIELDS(X)						\
	X(tables_uploaded) X(table_bytes) X(tables_existed) X(tables_deleted)	\
	X(maps_uploaded) X(maps_forgotten) X(maps_fp) X(maps_left_out)		\
	X(stale_retries) X(budget_refusals) X(deferred) X(maps_current)	\
	X(errors) X(work_ns) X(tables) X(procs) X(python_procs) X(python_unwalked) \
	X(jvm_procs) X(jvm_unwalked)

struct tp_ktables;

/* The module's ioctls, as lib/kernel wraps them; tests put fakes in. */
struct tp_kops {
	int (*table_add)(void *ring, const struct taproot_table_add *t, uint32_t *table_id);
	int (*table_del)(void *ring, uint32_t table_id);
	int (*proc_token)(void *ring, uint32_t pid, uint64_t *token);
	int (*maps_set)(void *ring, uint32_t pid, uint64_t token,
			const struct taproot_proc_map *maps, uint32_t nr);
	/* NULL: none (a fake ring that walks no Python) */
	int (*python_set)(void *ring, uint32_t pid, uint64_t token,
			  const struct taproot_python_layout *layout);
	/* NULL: none (a fake ring that walks no JVM) */
	int (*jvm_set)(void *ring, uint32_t pid, uint64_t token,
		       const struct taproot_jvm_layout *layout);
	uint64_t (*now_ns)(void);	/* CLOCK_MONOTONIC */
};

/*
 * A new uploader over the pipeline's process model and unwinder (both
 * borrowed), with no ring yet. 0 or -ENOMEM.
 */
int tp_ktables_new(struct taproot_procs *procs, struct taproot_unwinder *u,
		   struct tp_ktables **kp);

/* Free @k (NULL allowed). The ring is not touched: closing it frees the uploads. */
void tp_ktables_free(struct tp_ktables *k);

/*
 * Upload through @ring from now on (NULL: never again, as for a replay).
 * What was uploaded through another ring is forgotten here: that open
 * file held it, and the module frees it when the file is closed. @ops
 * NULL: lib/kernel's ioctls on @ring.
 */
void tp_ktables_set_ring(struct tp_ktables *k, void *ring, const struct tp_kops *ops);

/*
 * A SAMPLE, or a causal event's stack snapshot, of process @pid taken at
 * @time_ns (the record's, CLOCK_MONOTONIC) whose walk in the module ended
 * @unwind (enum taproot_kunwind). NULL @k: nothing.
 */
void tp_ktables_sample(struct tp_ktables *k, uint32_t pid, unsigned int unwind,
		       uint64_t time_ns);

/* Upload what waits and may go now (after each read of the rings). NULL @k: nothing. */
void tp_ktables_tick(struct tp_ktables *k);

/* Never upload process @pid (0: none): the consumer's own. */
void tp_ktables_skip(struct tp_ktables *k, uint32_t pid);

/* Process @pid exited, its last thread: forget its mappings. NULL @k: nothing. */
void tp_ktables_exit(struct tp_ktables *k, uint32_t pid);

/* Fill @st (zero for NULL @k). */
void tp_ktables_stats(const struct tp_ktables *k, struct taproot_kupload_stats *st);

/*
 * The mappings of @proc to upload, sorted by start, into @maps (room for
 * @max), as its maps were last read (an upload reads them after taking its
 * token: taproot_proc_get_current()). Tables not uploaded yet are uploaded
 * when @k has a ring and the budget allows; mappings without a table are
 * TAPROOT_MAP_F_FP, those whose table is not ready left out (*@left_out).
 * Returns how many, or -ENOMEM. For the unit tests, and the upload itself.
 */
int tp_ktables_build(struct tp_ktables *k, struct taproot_proc *proc,
		     struct taproot_proc_map *maps, uint32_t max, uint32_t *left_out);

#endif /* TAPROOT_PIPELINE_KTABLES_H */
