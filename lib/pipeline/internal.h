/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pipeline's stages, internals shared by its files (pipeline.h has the
 * API and pipeline.c the map of how a record goes through them):
 *
 *   records.c   records in: each record type to its stage; the samples a
 *               SAMPLE, a SAMPLE_REF or a drained count stands for; the
 *               off-CPU join's snapshots; the process events
 *   labels.c    a sample's labels: its own, its process's, the rules'
 *   stack.c     a capture's stack as profile frames: unwound (or the
 *               module's pcs), symbolized (symcache.c), markers
 *   resolved.c  the frames of interned stacks, resolved once
 *   top.c       self samples per leaf function
 *   live.c      the live top: self and total per function and group
 *   pipeline.c  the pipeline's life, its profiles out, its counters
 *
 * Calls go one way (`make layering` checks it): pipeline.c -> records.c
 * -> labels.c, stack.c, top.c, live.c; stack.c -> symcache.c; pipeline.c makes
 * and frees what the others use.
 */
#ifndef TAPROOT_PIPELINE_INTERNAL_H
#define TAPROOT_PIPELINE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/taproot.h>

#include "pipeline/interned.h"
#include "pipeline/pipeline.h"
#include "pipeline/pyframes.h"
#include "pipeline/symcache.h"
#include "profile/causal.h"

#define PL_MAX_USER_FRAMES	128	/* default pcs unwound per sample */
#define PL_MAX_INLINE		16	/* frames per pc, as the symbolizer */
#define PL_SYM_CACHE_DEFAULT	65536	/* symbolized pcs kept */
#define PL_COMM_CACHE		4096	/* process names kept */
#define PL_TOP_MAX		16384	/* distinct leaf functions counted */
#define PL_LIVE_MAX		16384	/* functions and groups of the live top */
#define PL_LABELS_MAX		32	/* a sample's own, its process's, the rules' */
#define PL_STATIC_MAX		16	/* static labels of the options */
#define PL_RESOLVED_BYTES	(8U << 20)	/* resolved interned stacks kept */
#define PL_JIT_PENDING_MAX	8192	/* JIT pcs waiting for a name */
#define PL_JIT_PATH_MAX		128	/* their mapping's name, at most */

struct pl_comm {
	int pid;			/* 0: free */
	uint64_t start_time;
	char comm[17];			/* TASK_COMM_LEN + NUL */
};

struct pl_live;

struct pl_top {
	char *name;			/* NULL: free slot */
	uint64_t samples;
};

/*
 * A JIT pc symbolized without a name (taproot_frame.jit): named when its
 * process's perf map names it, at the latest before a profile is written
 * (tp_pl_name_late()). Its process by pid and start time, its cache entry
 * by the key pl_symbolize() made, its locations by the unnamed frame.
 */
struct pl_jit {
	int pid;
	uint64_t proc_start;		/* taproot_proc_start_time() */
	uint32_t execs;			/* taproot_proc_execs(): its program */
	uint64_t sym_start;		/* the cache entry's start_time */
	uint64_t pc;
	unsigned int flags;		/* TAPROOT_SYM_RETADDR */
	struct taproot_profile_frame unnamed;	/* mapping_path: map_path */
	char map_path[PL_JIT_PATH_MAX];
};

struct taproot_pipeline {
	struct taproot_pipeline_opts opts;
	struct taproot_procs *procs;
	struct taproot_sym *sym;
	struct taproot_unwinder *unwinder;
	struct tp_ktables *ktables;	/* uploads to the module; NULL: never */
	struct taproot_profile *profile;
	/* With opts.offcpu: the join and its profiles. */
	struct tp_causal *causal;
	struct taproot_profile *kinds[TAPROOT_PROFILE_NR_KINDS];	/* [CPU] = profile */
	char causal_marker[160];
	int64_t period_ns;
	int64_t start_ns;		/* wall clock, start of the interval */

	struct tp_symcache symcache;
	struct tp_pyframes *pyframes;	/* cleared with symcache, and on a re-read */
	uint64_t procs_refreshes;	/* procs stats seen: a change flushes symcache */
	uint64_t debuginfod_generation;	/* seen: a change flushes symcache */
	struct pl_jit *jit;		/* PL_JIT_PENDING_MAX: the JIT pcs unnamed */
	size_t njit, jit_alloc;
	uint64_t jit_generation;	/* JIT pcs named late so far */
	uint64_t procs_read;

	struct pl_comm *comms;		/* PL_COMM_CACHE, open addressing */
	size_t ncomms;

	struct pl_top *top;		/* PL_TOP_MAX * 2 slots */
	size_t ntop;
	uint64_t top_other;
	struct pl_live *live;		/* the live top, NULL: off (live.c) */

	/* scratch, per sample */
	struct taproot_labeling labeling;	/* statics, the rules */
	struct taproot_profile_label statics[2 + PL_STATIC_MAX];	/* every sample's */
	bool relabel_early;		/* the rules read only labels an interval
					 * has before its stack is resolved */
	uint64_t *pcs;			/* max_pcs: the module's pcs and the unwinder's */
	uint8_t *pcflags;
	/* max_pcs: 0, or what names the frame instead of its pc (an interpreted Java frame's) */
	uint64_t *pcnames;
	bool pcnames_set;		/* one is not 0 */
	unsigned int max_pcs;
	struct taproot_profile_frame *frames;
	size_t max_frames;

	struct tp_interned interned;
	struct taproot_count *counts;	/* a drain's entries */
	uint32_t counts_max;	/* the module's stack slots, mirrored */

	struct taproot_pipeline_stats st;
};

/* What a capture's user part is made of. */
/* What the unwinder's callbacks get (its @arg): the process, where its pcs go. */
struct pl_unwind_arg {
	struct taproot_pipeline *p;
	struct taproot_proc *proc;
	unsigned int at;		/* p->pcs index of the unwinder's pcs[0] */
};

/* The unwinder's callbacks (stack.c). */
int tp_pl_unwind_map(uint64_t pc, struct taproot_unwind_map *um, void *arg);
int tp_pl_unwind_jit(const struct taproot_unwind_at *at, struct taproot_unwind_jit *f, void *arg);

enum pl_upcs {
	PL_UPCS_NONE,		/* registers and a stack copy: unwound here */
	PL_UPCS_VERIFY,		/* the same, and the module's walk to compare */
	PL_UPCS_CONTINUE,	/* the module's pcs but the last, then unwound
				 * from the frame of its last (regs) */
	PL_UPCS_WHOLE,		/* the module's pcs are all there is (a STACK's,
				 * or a fallback without a stack copy) */
};

/* What a SAMPLE record, a STACK or a causal event's stack snapshot captured. */
struct pl_capture {
	uint32_t pid, tid;
	const uint64_t *kstack;
	unsigned int kstack_nr;
	bool k0_exact;			/* kstack[0] is the interrupted ip */
	bool kstack_trunc;
	bool in_kernel;			/* the user registers are those of kernel entry */
	bool user;			/* user registers and stack to unwind */
	bool trim_trace;		/* tracing trampolines on top of the kernel stack */
	const char *comm;		/* the thread's at the capture, NULL unknown */
	const struct taproot_user_regs *regs;	/* NULL with PL_UPCS_WHOLE */
	const uint8_t *ustack;
	uint32_t ustack_len;
	/* The module's walk (TAPROOT_FEAT_UNWIND): */
	enum pl_upcs upcs_mode;
	const uint64_t *upcs;		/* its pcs, leaf first, return addresses as found */
	unsigned int upc_nr;
	unsigned int kend;		/* enum taproot_kunwind: how it ended */
	const struct taproot_pyframe *py;	/* the thread's Python frames, innermost first */
	unsigned int py_nr;
	bool regs_caller;		/* regs are a caller frame's (UREGS_CALLER) */
	uint64_t time_ns;		/* when captured; 0: unknown */
};

/* Who a CPU sample is of, whichever record it came in. */
struct pl_who {
	uint32_t pid, tid;
	uint64_t time_ns;		/* the record's */
	uint32_t period_us;		/* 0: the pipeline's period */
	uint32_t weight;		/* samples it stands for: 1, or a count's */
	char thread_comm[17];		/* the record's comm, NUL-terminated */
};

/* ---------------------------------------------------------- labels.c */

/* How every sample's labels end: the host's, the options' static ones, the rules. */
int tp_pl_set_labeling(struct taproot_pipeline *p);

/*
 * The name of process @pid: the comm of its main thread, which is the
 * sample's own when the sample is of the main thread; else
 * /proc/PID/comm, cached; else the thread's (the process is gone).
 */
const char *tp_pl_process_comm(struct taproot_pipeline *p, int pid, uint64_t start_time,
			       int tid, const char *thread_comm);

/* The process @pid has a new name (exec): its cached one is stale. */
void tp_pl_comm_forget(struct taproot_pipeline *p, int pid);

/*
 * The labels of CPU sample @w into @l (room for PL_LABELS_MAX), in a fixed
 * order: pid, comm, thread_comm, [tid], [cpu], then those of its process
 * (@proc, NULL: unknown), the static ones, then what the relabel rules
 * made of them; *@commp the process's name. False when the rules drop
 * the sample.
 */
bool tp_pl_sample_labels(struct taproot_pipeline *p, const struct pl_who *w, unsigned int cpu,
			 struct taproot_proc *proc, struct taproot_profile_label *l, size_t *n,
			 const char **commp);

/*
 * Whether the relabel rules drop the intervals of task @tid of @proc (NULL:
 * unknown), named @comm, judged on the labels it has before its stack is
 * resolved; only when the rules read no other (p->relabel_early).
 */
bool tp_pl_interval_dropped(struct taproot_pipeline *p, uint32_t pid, uint32_t tid,
			    const char *comm, const char *thread_comm, struct taproot_proc *proc);

/* ----------------------------------------------------------- stack.c */

/*
 * The stack of @c into p->frames, leaf first: kernel frames on top of the
 * user frames; *@nfp frames, *@procp the process (NULL: none), *@o what
 * it adds to the counters (tp_pl_count_stack()). Markers may be written
 * in @marker. 0 or -ENOMEM.
 */
int tp_pl_stack(struct taproot_pipeline *p, const struct pl_capture *c, size_t *nfp,
		struct taproot_proc **procp, char *marker, size_t marker_size,
		struct tp_stack_outcome *o);

/*
 * Name the JIT pcs symbolized without a name whose perf map names them
 * now (read again for this), in every profile, as the profiles are about
 * to be written: their cache entries go, and the resolved stacks are
 * resolved again (pl_resolve_generation()). Those still unnamed stay
 * pending while their process is known.
 */
void tp_pl_name_late(struct taproot_pipeline *p);

/* @n samples of a stack that resolved as @o, into the counters. */
void tp_pl_count_stack(struct taproot_pipeline *p, const struct tp_stack_outcome *o, uint64_t n);

/* ------------------------------------------------------------- top.c */

/* @n more samples whose leaf frame is @name, for taproot_pipeline_top(). */
void tp_pl_top_count(struct taproot_pipeline *p, const char *name, uint32_t n);

/* Forget every leaf counted so far. */
void tp_pl_top_clear(struct taproot_pipeline *p);

/* ------------------------------------------------------------ live.c */

/*
 * @n more samples of the stack @frames (@nf, leaf first) in @group, for
 * the live top when it is on.
 */
void tp_pl_live_count(struct taproot_pipeline *p, const struct taproot_profile_frame *frames,
		      size_t nf, const char *group, uint64_t n);

/* --------------------------------------------------------- records.c */

/* The off-CPU join's resolver of stack snapshots (lib/profile/causal.h). */
int tp_pl_resolve_snap(void *arg, uint32_t pid, uint32_t tid, const char *thread_comm,
		       bool owner, const struct taproot_stack_snap *snap, size_t len,
		       struct tp_causal_stack *out);

#endif /* TAPROOT_PIPELINE_INTERNAL_H */
