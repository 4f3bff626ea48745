/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The consumer's mirror of the module's stack slots (<linux/taproot.h>,
 * "Interned stacks"), pipeline internals (lib/pipeline/interned.c): per
 * ring, in slot id & (TAPROOT_STACK_SLOTS - 1), a copy of the last STACK
 * record that put id there. The module writes a SAMPLE_REF only for the
 * id its slot holds, after that STACK: a reader of every record of the
 * ring finds it here.
 *
 * Memory is bounded by the module's own bound: TAPROOT_STACK_SLOTS copies
 * per CPU (up to 40 + 8 * (127 + 127) bytes each, 2 KiB; a few hundred
 * bytes for most), of CPUs below TP_INTERNED_CPUS_MAX; a CPU's slots are
 * allocated with its first STACK record.
 *
 * Counted stacks ("Counted stacks") name a STACK when they are drained,
 * long after it took its slot, and a later STACK of the same slot may
 * have replaced it meanwhile. While @keep_retired, a replaced STACK is kept
 * aside (at most TP_INTERNED_RETIRED_MAX of them, 32 MiB at the largest
 * records, beyond which they are dropped and counted) until the drain
 * after the one it was replaced in: tp_interned_drain_begin() before a
 * drain takes the tables, tp_interned_retire() after its counts. A STACK
 * read after the tables were taken (as the drain reads the rings to their
 * heads) may have been written after, and replaced a stack whose samples
 * the module went on counting, in the tables the next drain takes.
 *
 * Each STACK kept may carry what the pipeline resolved it to (resolved.h),
 * freed with it into @pool.
 */
#ifndef TAPROOT_PIPELINE_INTERNED_H
#define TAPROOT_PIPELINE_INTERNED_H

#include <linux/taproot.h>

#include "pipeline/resolved.h"
#include "util/hash.h"

#define TP_INTERNED_CPUS_MAX	8192	/* x86-64's largest NR_CPUS */
#define TP_INTERNED_RETIRED_MAX	16384

struct tp_interned_cpu;

/* A STACK of the mirror and its resolution (NULL: none yet). */
struct tp_interned_stack {
	struct taproot_rec_stack *rec;
	struct tp_resolved *resolved;
};

/* Zero-initialised: empty. */
struct tp_interned {
	struct tp_interned_cpu **cpu;	/* by ring; NULL: no STACK yet */
	unsigned int ncpu;		/* entries of cpu */
	bool keep_retired;		/* keep replaced STACKs until retired */
	struct tp_interned_old {	/* replaced STACKs, by (cpu, id) in ix */
		struct tp_interned_stack s;
		unsigned int cpu;
		uint64_t drain;		/* drains begun when it was replaced */
	} *old;
	size_t nr_old, cap_old;
	struct tp_index ix;
	uint64_t old_dropped;		/* replaced beyond the bound: not kept */
	uint64_t drains;		/* begun */
	struct tp_resolved_pool pool;	/* the resolutions' */
};

/*
 * STACK record @st of ring @cpu into its slot, replacing what the slot
 * held (emptied when it cannot be copied: no reference may find the old
 * one), *@sp its place (to attach a resolution), NULL when not kept. 1
 * when kept, 0 for a ring past TP_INTERNED_CPUS_MAX (its references will
 * miss), -ENOMEM.
 */
int tp_interned_put(struct tp_interned *im, const struct taproot_rec_stack *st,
		    unsigned int cpu, struct tp_interned_stack **sp);

/*
 * The STACK @id of @epoch that ring @cpu wrote for process @pid, or NULL
 * when the mirror does not hold it (another epoch, an overwritten slot,
 * another process's user pcs). Kept STACKs that were replaced count.
 */
struct tp_interned_stack *tp_interned_find(struct tp_interned *im, unsigned int cpu,
					   uint64_t id, uint32_t epoch, uint32_t pid);

/* The STACK that reference @r of ring @cpu names, as tp_interned_find(). */
struct tp_interned_stack *tp_interned_get(struct tp_interned *im,
					  const struct taproot_rec_sample_ref *r,
					  unsigned int cpu);

/* Attach resolution @r to @s, freeing the one it had. */
void tp_interned_resolve(struct tp_interned *im, struct tp_interned_stack *s,
			 struct tp_resolved *r);

/* A drain of the module's counts begins: before it takes the tables. */
void tp_interned_drain_begin(struct tp_interned *im);

/*
 * After the counts of the drain begun last: free the replaced STACKs kept
 * since before it began, which no count may name any more; those replaced
 * since stay until the next drain's retire.
 */
void tp_interned_retire(struct tp_interned *im);

/* Forget every slot and free the memory: the mirror is empty again. */
void tp_interned_clear(struct tp_interned *im);

#endif /* TAPROOT_PIPELINE_INTERNED_H */
