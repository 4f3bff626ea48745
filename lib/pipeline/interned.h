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
 */
#ifndef TAPROOT_PIPELINE_INTERNED_H
#define TAPROOT_PIPELINE_INTERNED_H

#include <linux/taproot.h>

#define TP_INTERNED_CPUS_MAX	8192	/* x86-64's largest NR_CPUS */

struct tp_interned_cpu;

/* Zero-initialised: empty. */
struct tp_interned {
	struct tp_interned_cpu **cpu;	/* by ring; NULL: no STACK yet */
	unsigned int ncpu;		/* entries of cpu */
};

/*
 * STACK record @st of ring @cpu into its slot, replacing what the slot
 * held (emptied when it cannot be copied: no reference may find the old
 * one). 1 when kept, 0 for a ring past TP_INTERNED_CPUS_MAX (its
 * references will miss), -ENOMEM.
 */
int tp_interned_put(struct tp_interned *im, const struct taproot_rec_stack *st,
		    unsigned int cpu);

/*
 * The STACK that reference @r of ring @cpu names, or NULL when the mirror
 * does not hold it (another epoch, an overwritten slot, another process's
 * user pcs).
 */
const struct taproot_rec_stack *tp_interned_get(const struct tp_interned *im,
						const struct taproot_rec_sample_ref *r,
						unsigned int cpu);

/* Forget every slot and free the memory: the mirror is empty again. */
void tp_interned_clear(struct tp_interned *im);

#endif /* TAPROOT_PIPELINE_INTERNED_H */
