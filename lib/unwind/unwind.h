/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, unwinding layer: the CFI table compiler and the user stack
 * unwinder (lib/unwind/).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_UNWIND_H
#define TAPROOT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* ---------------------------------------- user stack unwinding (DWARF CFI) */
/*
 * (lib/unwind/cfi.c, lib/unwind/unwind.c.) Recovers a user call chain from a sample's
 * registers and its copy of the user stack, by the CFI (.eh_frame,
 * .debug_frame) of the ELF files mapped at each pc. Each ELF's CFI is
 * compiled once into a compact table of {pc -> rule}, kept in a cache keyed
 * by an identity the caller chooses (the build ID) and bounded in bytes
 * (least recently used tables go first). Rules the table cannot express are
 * evaluated by libdw per frame. The unwinder never opens a file or reads
 * /proc: the caller maps each pc to an ELF through a callback.
 */
struct taproot_unwinder;
struct taproot_user_regs;	/* <linux/taproot.h> */
/*
 * What the unwinder needs of the mapping holding a pc, the seam with
 * whatever knows the process (taproot_proc_unwind_map() fills it from the
 * process model): the ELF file (libelf's handle, the caller's, valid for
 * the call; for its CFI), a key naming its contents (the build ID; for a
 * file without one, 32 bytes of its dev, ino, size and mtime: compiled
 * tables are cached by it), the bias (ELF vaddr = pc - bias) and the
 * mapping [start, end).
 */
struct taproot_unwind_map {
	struct Elf *elf;
	const uint8_t *key;
	size_t key_len;
	uint64_t bias, start, end;
};

/* A frame of JIT code as the unwinder reached it: taproot_unwind_ops.jit. */
struct taproot_unwind_at {
	uint64_t pc;			/* as found: a return address unless exact */
	uint64_t sp;
	uint64_t bp, r13;		/* 0 when unknown */
	unsigned int index;		/* the frame's index in the pcs */
	bool exact;
	const void *mem;		/* the stack copy: taproot_unwind_at_read() */
};

/* The word at @addr of the stack copy: 0, or -EFAULT (not in the copy). */
int taproot_unwind_at_read(const struct taproot_unwind_at *at, uint64_t addr, uint64_t *v);

/*
 * How to find the caller of a JIT frame:
 *   SP      the caller's sp is sp + size; its pc the word below that, its
 *           rbp the word below the pc (size >= 16; else rbp is kept);
 *   FP      the rbp chain: rbp points at {saved rbp, return address};
 *   INTERP  HotSpot's interpreter: the return address at rbp + 8, the
 *           saved rbp at rbp, the caller's sp at rbp - 8.
 */
enum taproot_unwind_jit_kind {
	TAPROOT_JIT_SP,
	TAPROOT_JIT_FP,
	TAPROOT_JIT_INTERP,
};

struct taproot_unwind_jit {
	enum taproot_unwind_jit_kind kind;
	uint32_t size;			/* JIT_SP: the frame's bytes, return address included */
	/*
	 * >= 0: the frame was deoptimized (its pc is the deoptimization
	 * handler): the pc it had is the word at sp + orig_pc_off, and
	 * takes the handler's place in the pcs. -1 otherwise.
	 */
	int32_t orig_pc_off;
};

struct taproot_unwind_ops {
	/*
	 * Describe the mapping holding @pc of the process being unwound (@arg
	 * is taproot_unwind()'s): fill @map and return 1, or return 0 when
	 * @pc is in no mapping with an ELF (anonymous memory, JIT code, the
	 * vDSO when the caller has no ELF of it). The Elf and the key need to
	 * stay valid until taproot_unwind() returns. Any other value stops
	 * the unwind as if 0 were returned. Called once or more per frame.
	 */
	int (*map)(uint64_t pc, struct taproot_unwind_map *map, void *arg);
	/*
	 * Optional: describe the frame of @at's pc, which no ELF holds (map
	 * gave 0), as a JIT knows it (lib/process's JVM code cache): fill
	 * @f and return 1, or 0 to end the walk there (NO_MAPPING). May read
	 * the stack copy with taproot_unwind_at_read(), and note what it
	 * wants to keep of the frame (the interpreter's method) by at->index.
	 */
	int (*jit)(const struct taproot_unwind_at *at, struct taproot_unwind_jit *f, void *arg);
};

/* Why an unwind stopped. */
enum taproot_unwind_end {
	TAPROOT_UNWIND_COMPLETE,	/* outermost frame: RA undefined or 0 */
	TAPROOT_UNWIND_TRUNCATED,	/* needed stack beyond the copy */
	TAPROOT_UNWIND_NO_MAPPING,	/* the last pc is in no mapped ELF */
	TAPROOT_UNWIND_NO_CFI,		/* no CFI for the last pc, no rbp chain */
	TAPROOT_UNWIND_BAD_FRAME,	/* CFI or the stack gave an impossible frame */
	TAPROOT_UNWIND_MAX_DEPTH,	/* the pcs array is full */
	TAPROOT_UNWIND_NR_ENDS
};

/* "complete", "truncated", "no-mapping", "no-cfi", "bad-frame", "max-depth" */
const char *taproot_unwind_end_name(enum taproot_unwind_end end);

/* taproot_unwind()'s flags[i] */
#define TAPROOT_FRAME_EXACT	(1U << 0) /* pc is exact: leaf, or after a signal */
#define TAPROOT_FRAME_SLOW	(1U << 1) /* this frame's caller came from libdw */
#define TAPROOT_FRAME_FP	(1U << 2) /* ... from the rbp chain (no CFI) */
#define TAPROOT_FRAME_JIT	(1U << 3) /* ... from the JIT's description (ops.jit) */

#define TAPROOT_UNWIND_CACHE_DEFAULT	(64U << 20)	/* bytes of tables */

/*
 * A new unwinder with a cache of compiled tables of at most @cache_bytes
 * (0: TAPROOT_UNWIND_CACHE_DEFAULT). A table larger than the whole limit is
 * still compiled and used, and evicted by the next one. @ops is copied.
 * Errors: -EINVAL (no map callback), -ENOMEM.
 */
int taproot_unwinder_new(const struct taproot_unwind_ops *ops, size_t cache_bytes,
			 struct taproot_unwinder **up);

/* Free @u and every table it holds (NULL is allowed). */
void taproot_unwinder_free(struct taproot_unwinder *u);

/* What a taproot_unwind() call found; also summed in the stats. */
struct taproot_unwind_result {
	unsigned int nr;		/* pcs written */
	enum taproot_unwind_end end;
	unsigned int slow_frames;	/* callers libdw found */
	unsigned int fp_frames;		/* callers the rbp chain found */
	unsigned int jit_frames;	/* callers a JIT's description found */
};

/*
 * Unwind the user stack of one sample: @regs as sampled, @stack the
 * @stack_len bytes copied from address regs->sp. Writes up to @max pcs to
 * @pcs, leaf first: pcs[0] is regs->ip, each next one a return address as
 * found on the stack (not adjusted: a symbolizer looks up pc - 1 for a
 * frame without TAPROOT_FRAME_EXACT). @flags, when not NULL, receives
 * TAPROOT_FRAME_* of each pc. Fills @res; every stop is an end reason in
 * res->end, not an error: the caller adds a marker frame for it. A word
 * needed beyond the end of the copy stops with TAPROOT_UNWIND_TRUNCATED,
 * and the pcs found until then stay. Frames of ELFs without CFI are
 * unwound by the rbp chain when it validates (each saved rbp above the
 * previous, within the copy).
 *
 * Returns res->nr (>= 0; 0 only when @max is 0) or -ENOMEM (a table could
 * not be compiled; the pcs found so far are in @pcs, res->nr of them). The
 * map callback gets @arg. Compiling a table may take from milliseconds to
 * seconds for a large library, once per key while it stays cached.
 */
int taproot_unwind(struct taproot_unwinder *u, void *arg,
		   const struct taproot_user_regs *regs,
		   const void *stack, size_t stack_len,
		   uint64_t *pcs, uint8_t *flags, unsigned int max,
		   struct taproot_unwind_result *res);

/* taproot_unwind_from()'s @start */
/*
 * @regs are those of a caller frame another walker reached (the module's,
 * which stopped there): regs->ip is a return address, looked up at ip - 1
 * and not flagged TAPROOT_FRAME_EXACT; only ip, sp and bp are known, and
 * bp 0 means unknown too. Rules that need another register end the walk
 * (TAPROOT_UNWIND_BAD_FRAME), and the frame may not share its caller's
 * CFA (a leaf's exception).
 */
#define TAPROOT_UNWIND_START_CALLER	(1U << 0)

/*
 * taproot_unwind() from the frame @regs describe as @start says (0: the
 * leaf, every register valid, which is taproot_unwind()). The stack copy
 * starts at regs->sp as there.
 */
int taproot_unwind_from(struct taproot_unwinder *u, void *arg,
			const struct taproot_user_regs *regs, unsigned int start,
			const void *stack, size_t stack_len,
			uint64_t *pcs, uint8_t *flags, unsigned int max,
			struct taproot_unwind_result *res);

/* Cumulative counters of an unwinder. */
struct taproot_unwind_stats {
	uint64_t unwinds;
	uint64_t frames;		/* pcs written */
	uint64_t ends[TAPROOT_UNWIND_NR_ENDS];
	uint64_t slow_frames, fp_frames, jit_frames;
	uint64_t rule_cache_hits, rule_cache_misses;
	uint64_t tables;		/* cached now */
	uint64_t table_bytes;		/* held now */
	uint64_t compiles;		/* tables compiled */
	uint64_t compile_ns;		/* time spent compiling */
	uint64_t evictions;
};

void taproot_unwinder_stats(const struct taproot_unwinder *u,
			    struct taproot_unwind_stats *st);

/* ------------------------------------- tables for the module's unwinder */

struct taproot_table_add;	/* <linux/taproot.h> */

/* taproot_unwind_table_export()'s flags */
#define TAPROOT_EXPORT_CACHED	(1U << 0)	/* a table cached now, or -EAGAIN */

/*
 * The compiled table of the ELF @m names (its key and elf; bias and range
 * unused), in the form the module takes it (TAPROOT_IOC_TABLE_ADD, see
 * "Unwinding in the module" in <linux/taproot.h>), without compiling it
 * twice: from the cache taproot_unwind() uses (a use, for the LRU), else
 * compiled now and cached, as an unwind would, unless @flags has
 * TAPROOT_EXPORT_CACHED. Fills @t's pcs, row_rules and rules with the
 * addresses of memory @u holds, valid until the next call on @u, and its
 * base, nr_rows and nr_rules; leaves build_id, table_id and reserved
 * alone. Each rule keeps its kind and the fields the kind uses (the
 * others are 0); a rule the ABI cannot hold (an offset beyond
 * TAPROOT_RULE_OFF_MAX) is TAPROOT_RULE_SLOW, as is every rule only libdw
 * evaluates: the module falls back where the unwinder goes to libdw.
 * Returns 0; -ENODATA when the ELF has no CFI a table could give (its
 * frames follow the rbp chain: TAPROOT_MAP_F_FP); -EAGAIN (not cached, with
 * TAPROOT_EXPORT_CACHED); -E2BIG (more rows or rules than the ABI takes);
 * -EINVAL (no key); -ENOMEM. A compile takes as long as in taproot_unwind().
 */
int taproot_unwind_table_export(struct taproot_unwinder *u, const struct taproot_unwind_map *m,
				unsigned int flags, struct taproot_table_add *t);

#endif /* TAPROOT_UNWIND_H */
