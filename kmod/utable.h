/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Uploaded unwind tables and process mappings, as the user stack walker
 * (uwalk.c) reads them. utab.c builds them from the uploads of
 * <linux/taproot.h> ("Unwinding in the module") and owns their lifetime;
 * the walker only reads them, inside the RCU read side of the sample
 * handler.
 *
 * This header, like uwalk.h and uwalk.c, is plain C on fixed-width types
 * so that the walker also compiles in userspace, where the fuzz target
 * (tests/fuzz) drives it with random tables, mappings and memory: it
 * includes nothing of the kernel but <linux/types.h> and the ABI, which
 * userspace has too.
 *
 * Invariants utab.c establishes at upload (the walker still checks every
 * index it uses, and caps every loop, so that a table that breaks them
 * makes wrong pcs and nothing worse):
 *   - a table has nr_rows >= 1, pcs[] strictly ascending, every
 *     row_rules[i] < nr_rules, and rules[] of known kinds;
 *   - a process's maps[] are sorted by start, disjoint, start < end.
 */
#ifndef _TAPROOT_UTABLE_H
#define _TAPROOT_UTABLE_H

#include <linux/types.h>
#include <linux/taproot.h>

/*
 * The compiled CFI of one ELF file: row i covers base + [pcs[i], pcs[i + 1]).
 * Its arrays never change once the walker can reach it. uid names it in the
 * walker's rule cache (uwalk.h): an uploaded table's is nonzero and no other
 * table's, before or after, while the module stays loaded; 0 keeps the
 * table out of the cache.
 */
struct tap_utable {
	__u64 uid;
	__u64 base;
	__u32 nr_rows;
	__u32 nr_rules;
	const __u32 *pcs;
	const __u16 *row_rules;
	const struct taproot_unwind_rule *rules;
};

/* One executable mapping: pc in [start, end) is address pc - bias of table. */
struct tap_umap {
	__u64 start;
	__u64 end;
	__u64 bias;
	const struct tap_utable *table;	/* NULL: the rbp chain (MAP_F_FP) */
};

/* The mappings of one process, its CPython interpreter and its JVM. */
struct tap_umaps {
	__u32 nr;
	const struct tap_umap *map;	/* nr, sorted by start, disjoint */
	/* NULL: none described; else a layout tap_pylayout_ok() took. */
	const struct taproot_python_layout *py;
	/* NULL: none described; else a layout tap_jvlayout_ok() took. */
	const struct taproot_jvm_layout *jvm;
};

#endif /* _TAPROOT_UTABLE_H */
