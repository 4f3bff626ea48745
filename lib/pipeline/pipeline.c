// SPDX-License-Identifier: GPL-2.0
/*
 * The userspace pipeline: ring records in, pprof files out.
 *
 * Data flows one way, one sample at a time:
 *
 *   SAMPLE record
 *     -> process model (taproot_proc_get: maps of the pid, read when first
 *        seen, re-read when a pc falls outside them; an unreadable process
 *        gives one "[unknown: REASON]" frame and is counted)
 *     -> unwinder (the sample's user registers and stack copy; the end
 *        reason of an incomplete unwind becomes a marker frame at the root
 *        of the stack, "[truncated]", "[no cfi]", ...; ends are counted)
 *     -> symbolizer (user pcs: ELF symbols, inline chains, file:line;
 *        kernel pcs: kallsyms under "[kernel.kallsyms]"), through a cache
 *        of symbolized pcs
 *     -> profile builder (kernel frames on top of user frames, leaf first;
 *        labels pid, comm, thread_comm, optionally tid, cpu, and those of
 *        the process: service_name, systemd_unit, container_id, cgroup,
 *        exe; then the relabel rules, applied before the unwinder so that
 *        a sample they drop costs no unwinding)
 *     -> pprof writer (taproot_pipeline_write(): atomic, 0600).
 *
 * Stacks the module unwound (TAPROOT_FEAT_UNWIND) skip the unwinder: a
 * STACK record goes into the mirror of its CPU's stack slots, and each
 * SAMPLE_REF naming it is a sample whose user pcs are known (symbolized
 * as the unwinder's would be: the leaf exact, the others return
 * addresses). A SAMPLE whose walk fell back has the module's first pcs;
 * the unwinder goes on from the frame the walk stopped at. A SAMPLE with
 * VERIFY is unwound here as any other, and the module's pcs compared.
 *
 * SWITCH and WAKING records (with opts.offcpu) go to the off-CPU join
 * (lib/profile/causal.c), whose stack snapshots take the same path as a sample's
 * stack (pl_stack()) into the offcpu, offwake and schedlat profiles.
 * FORK, EXEC and EXIT records keep the process model right: exec re-reads
 * the maps and changes the identity the symbolized-pc cache keys on, a new
 * process drops what was known of its pid, the exit of the last thread
 * forgets the process after the grace period.
 *
 * The pipeline never reads a ring itself: the caller consumes the rings
 * (taproot_ring_consume()) and hands each record over, or lets
 * taproot_pipeline_consume() do it, which also ends the consume round the
 * join waits for; taprootctl record, taprootd and the unit tests share
 * this file unchanged.
 *
 * Memory is bounded: the profiles by their stack tables (max_stacks), the
 * join by its interval table, the
 * unwinder by its table cache, the process model by its LRU, the
 * symbolized-pc cache and the process-name cache by their entry counts
 * (both are emptied when full), the self-time table by its entry count
 * (later names go to "[other]"), the mirror of the stack slots by the
 * module's own bound (interned.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>
#include <linux/taproot.h>

#include "pipeline/interned.h"
#include "pipeline/pyframes.h"
#include "pipeline/pipeline.h"
#include "profile/causal.h"
#include "profile/frames.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/util.h"

#define PL_MAX_USER_FRAMES	128	/* default pcs unwound per sample */
#define PL_MAX_INLINE		16	/* frames per pc, as the symbolizer */
#define PL_SYM_CACHE_DEFAULT	65536	/* symbolized pcs kept */
#define PL_COMM_CACHE		4096	/* process names kept */
#define PL_TOP_MAX		16384	/* distinct leaf functions counted */
#define PL_LABELS_MAX		32	/* a sample's own, its process's, the rules' */
#define PL_STATIC_MAX		16	/* static labels of the options */

_Static_assert(TAPROOT_PIPELINE_KUNWIND_NR == TAPROOT_KUNWIND_NR,
	       "taproot_pipeline_stats.kunwind has a counter per taproot_kunwind");

/* ------------------------------------------------- symbolized pc cache */

/*
 * One symbolized pc: profile frames (innermost first) whose strings and
 * build IDs live in the same allocation, after the frames.
 */
struct pl_sym {
	struct pl_sym *next;		/* hash chain */
	int pid;			/* -1: kernel */
	uint64_t start_time;
	uint64_t pc;
	unsigned int flags;		/* TAPROOT_SYM_RETADDR */
	unsigned int nr;
	unsigned int unknown;		/* frames the symbolizer did not know */
	struct taproot_profile_frame frames[];
};

struct pl_symcache {
	struct pl_sym **buckets;
	size_t nbuckets;		/* power of two */
	size_t count, max;
};

static uint64_t pl_hash(int pid, uint64_t start_time, uint64_t pc, unsigned int flags)
{
	uint64_t h = tp_hash_mix(tp_hash_mix(0, (uint32_t)pid), start_time);

	return tp_hash_fin(tp_hash_mix(tp_hash_mix(h, pc), flags));
}

static void pl_symcache_clear(struct pl_symcache *c)
{
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct pl_sym *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
		c->buckets[i] = NULL;
	}
	c->count = 0;
}

static struct pl_sym *pl_symcache_find(struct pl_symcache *c, int pid, uint64_t start_time,
				       uint64_t pc, unsigned int flags)
{
	struct pl_sym *e = c->buckets[pl_hash(pid, start_time, pc, flags) & (c->nbuckets - 1)];

	for (; e; e = e->next)
		if (e->pc == pc && e->pid == pid && e->start_time == start_time &&
		    e->flags == flags)
			return e;
	return NULL;
}

/*
 * Copy @nr frames (strings borrowed from the symbolizer) into a new cache
 * entry and insert it. NULL on -ENOMEM. The cache is not emptied here:
 * frames of the stack being built point into it (see pl_symcache_full()).
 */
static struct pl_sym *pl_symcache_add(struct pl_symcache *c, int pid, uint64_t start_time,
				      uint64_t pc, unsigned int flags,
				      const struct taproot_profile_frame *frames, unsigned int nr,
				      unsigned int unknown)
{
	struct pl_sym *e = malloc(sizeof(struct pl_sym) + tp_frames_size(frames, nr));
	size_t b;

	if (!e)
		return NULL;
	e->pid = pid;
	e->start_time = start_time;
	e->pc = pc;
	e->flags = flags;
	e->nr = nr;
	e->unknown = unknown;
	tp_frames_pack(e->frames, frames, nr);
	b = pl_hash(pid, start_time, pc, flags) & (c->nbuckets - 1);
	e->next = c->buckets[b];
	c->buckets[b] = e;
	c->count++;
	return e;
}

/*
 * Whether the @n pcs of the stack about to be symbolized would overfill
 * the cache: the caller then empties it (pl_symcache_flush()) before the
 * stack rather than in its middle, as the stack's frames borrow their
 * strings from the entries. It holds at most max plus one stack's pcs.
 */
static bool pl_symcache_full(const struct pl_symcache *c, size_t n)
{
	return c->count + n > c->max;
}

/* ------------------------------------------------------ process names */

struct pl_comm {
	int pid;			/* 0: free */
	uint64_t start_time;
	char comm[17];			/* TASK_COMM_LEN + NUL */
};

/* ------------------------------------------------- self time per leaf */

struct pl_top {
	char *name;			/* NULL: free slot */
	uint64_t samples;
};

/* ------------------------------------------------------------ pipeline */

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

	struct pl_symcache symcache;
	struct tp_pyframes *pyframes;	/* cleared with symcache */
	uint64_t procs_refreshes;	/* procs stats seen: a change flushes symcache */
	uint64_t debuginfod_generation;	/* seen: a change flushes symcache */
	uint64_t procs_read;

	struct pl_comm *comms;		/* PL_COMM_CACHE, open addressing */
	size_t ncomms;

	struct pl_top *top;		/* PL_TOP_MAX * 2 slots */
	size_t ntop;
	uint64_t top_other;

	/* scratch, per sample */
	struct taproot_labeling labeling;	/* statics, the rules */
	struct taproot_profile_label statics[2 + PL_STATIC_MAX];	/* every sample's */
	bool relabel_early;		/* the rules read only labels an interval
					 * has before its stack is resolved */
	uint64_t *pcs;			/* max_pcs: the module's pcs and the unwinder's */
	uint8_t *pcflags;
	unsigned int max_pcs;
	struct taproot_profile_frame *frames;
	size_t max_frames;

	struct tp_interned interned;
	struct taproot_count *counts;	/* a drain's entries */
	uint32_t counts_max;	/* the module's stack slots, mirrored */

	struct taproot_pipeline_stats st;
};

static const char *const pl_end_marker[TAPROOT_UNWIND_NR_ENDS] = {
	[TAPROOT_UNWIND_COMPLETE] = NULL,
	[TAPROOT_UNWIND_TRUNCATED] = "[truncated]",
	[TAPROOT_UNWIND_NO_MAPPING] = "[no mapping]",
	[TAPROOT_UNWIND_NO_CFI] = "[no cfi]",
	[TAPROOT_UNWIND_BAD_FRAME] = "[bad frame]",
	[TAPROOT_UNWIND_MAX_DEPTH] = "[max depth]",
};

/*
 * How the module's walk ended, for a user stack that ends where it did
 * (a STACK's, or a fallback without a stack copy to go on with): the
 * unwinder's end it is counted as in stats.unwind[], and its marker frame.
 * The ends the unwinder has no name for count as truncated: the stack
 * needed to go on was not there.
 */
static const struct {
	enum taproot_unwind_end end;
	const char *marker;
} pl_kend[TAPROOT_KUNWIND_NR] = {
	[TAPROOT_KUNWIND_NONE] = { TAPROOT_UNWIND_TRUNCATED, "[truncated]" },
	[TAPROOT_KUNWIND_COMPLETE] = { TAPROOT_UNWIND_COMPLETE, NULL },
	[TAPROOT_KUNWIND_MAX_FRAMES] = { TAPROOT_UNWIND_MAX_DEPTH, "[max depth]" },
	[TAPROOT_KUNWIND_NO_PROC] = { TAPROOT_UNWIND_TRUNCATED, "[no unwind tables]" },
	[TAPROOT_KUNWIND_STALE] = { TAPROOT_UNWIND_TRUNCATED, "[stale unwind tables]" },
	[TAPROOT_KUNWIND_NO_MAPPING] = { TAPROOT_UNWIND_NO_MAPPING, "[no mapping]" },
	[TAPROOT_KUNWIND_NO_CFI] = { TAPROOT_UNWIND_NO_CFI, "[no cfi]" },
	[TAPROOT_KUNWIND_SLOW_RULE] = { TAPROOT_UNWIND_TRUNCATED, "[slow rule]" },
	[TAPROOT_KUNWIND_FAULT] = { TAPROOT_UNWIND_TRUNCATED, "[truncated]" },
	[TAPROOT_KUNWIND_BAD_FRAME] = { TAPROOT_UNWIND_BAD_FRAME, "[bad frame]" },
};

void taproot_pipeline_opts_default(struct taproot_pipeline_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->freq_hz = TAPROOT_FREQ_DEFAULT;
	o->max_user_frames = PL_MAX_USER_FRAMES;
	o->sym_cache_entries = PL_SYM_CACHE_DEFAULT;
}

/* The map callback of the unwinder over the process model: 1 found, 0 none. */
static int pl_unwind_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	return taproot_proc_unwind_map(arg, pc, um) == 0 ? 1 : 0;
}

static int pl_resolve_snap(void *arg, uint32_t pid, uint32_t tid, const char *thread_comm,
			   bool owner, const struct taproot_stack_snap *snap, size_t len,
			   struct tp_causal_stack *out);

/* The off-CPU profiles, as the CPU one (stack cap, comments, start), and the join. */
static int pl_new_causal(struct taproot_pipeline *p)
{
	static void (*const descs[TAPROOT_PROFILE_NR_KINDS])(struct taproot_profile_desc *) = {
		[TAPROOT_PROFILE_OFFCPU] = taproot_profile_desc_offcpu,
		[TAPROOT_PROFILE_OFFWAKE] = taproot_profile_desc_offwake,
		[TAPROOT_PROFILE_SCHEDLAT] = taproot_profile_desc_schedlat,
	};
	struct tp_causal_opts co = {
		.max_intervals = p->opts.max_intervals,
		.max_open_ns = p->opts.max_open_ns,
		.min_block_ns = p->opts.min_block_ns,
		.label_tid = p->opts.label_tid,
		.resolve = pl_resolve_snap,
		.arg = p,
		.labeling = &p->labeling,
		.timeline = p->opts.timeline,
	};
	/* What an interval is labeled with when its stack is resolved. */
	const char *early[PL_LABELS_MAX] = {
		"pid", "comm", "thread_comm", "tid",
		"service_name", "systemd_unit", "container_id", "cgroup", "exe",
	};
	size_t nearly = 9;
	int err;

	for (size_t i = 0; i < p->labeling.nr_statics && nearly < PL_LABELS_MAX; i++)
		early[nearly++] = p->statics[i].key;
	p->relabel_early = p->opts.relabel &&
			   taproot_relabel_reads_only(p->opts.relabel, early, nearly);

	for (int k = TAPROOT_PROFILE_OFFCPU; k < TAPROOT_PROFILE_NR_KINDS; k++) {
		struct taproot_profile_desc desc;

		descs[k](&desc);
		desc.max_stacks = p->opts.max_stacks;
		desc.comments = p->opts.comments;
		desc.nr_comments = p->opts.nr_comments;
		desc.time_nanos = p->start_ns;
		err = taproot_profile_new(&desc, &p->kinds[k]);
		if (err < 0)
			return err;
	}
	co.offcpu = p->kinds[TAPROOT_PROFILE_OFFCPU];
	co.offwake = p->kinds[TAPROOT_PROFILE_OFFWAKE];
	co.schedlat = p->kinds[TAPROOT_PROFILE_SCHEDLAT];
	return tp_causal_new(&co, &p->causal);
}

/* How every sample's labels end: the host's, the options' static ones, the rules. */
static int pl_set_labeling(struct taproot_pipeline *p)
{
	const char *host[2] = { p->opts.hostname, p->opts.kernel_release };
	const char *const names[2] = { "hostname", "kernel_release" };
	size_t n = 0;

	if (p->opts.nr_static_labels > PL_STATIC_MAX)
		return tp_err(-EINVAL, "pipeline: %zu static labels, at most %d",
			      p->opts.nr_static_labels, PL_STATIC_MAX);
	for (int i = 0; i < 2; i++)
		if (host[i] && host[i][0])
			p->statics[n++] = TAPROOT_LABEL_STR(names[i], host[i]);
	for (size_t i = 0; i < p->opts.nr_static_labels; i++)
		p->statics[n++] = p->opts.static_labels[i];
	p->labeling.statics = p->statics;
	p->labeling.nr_statics = n;
	p->labeling.rules = p->opts.relabel;
	return 0;
}

/* The caches and the per-sample scratch, sized by the options. 0 or -ENOMEM. */
static int pl_alloc_caches(struct taproot_pipeline *p)
{
	p->symcache.nbuckets = 1;
	while (p->symcache.nbuckets < p->opts.sym_cache_entries)
		p->symcache.nbuckets <<= 1;
	p->symcache.max = p->opts.sym_cache_entries;
	p->symcache.buckets = calloc(p->symcache.nbuckets, sizeof(p->symcache.buckets[0]));
	p->comms = calloc(PL_COMM_CACHE, sizeof(p->comms[0]));
	p->top = calloc(PL_TOP_MAX * 2, sizeof(p->top[0]));
	/* The module's pcs (VERIFY: all of them; a fallback: but the last) and the unwinder's. */
	p->max_pcs = p->opts.max_user_frames + TAPROOT_UNWIND_FRAMES_MAX;
	p->max_frames = TAPROOT_KSTACK_MAX + (size_t)p->max_pcs * PL_MAX_INLINE + 2;
	p->frames = calloc(p->max_frames, sizeof(p->frames[0]));
	p->pcs = calloc(p->max_pcs, sizeof(p->pcs[0]));
	p->pcflags = calloc(p->max_pcs, sizeof(p->pcflags[0]));
	if (!p->symcache.buckets || !p->comms || !p->top || !p->frames || !p->pcs ||
	    !p->pcflags)
		return tp_err(-ENOMEM, NULL);
	return tp_pyframes_new(p->opts.sym_cache_entries, &p->pyframes);
}

int taproot_pipeline_new(const struct taproot_pipeline_opts *opts,
			 struct taproot_pipeline **pp)
{
	static const struct taproot_unwind_ops uops = { .map = pl_unwind_map };
	struct taproot_profile_desc desc;
	struct taproot_pipeline *p;
	int err;

	*pp = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return tp_err(-ENOMEM, NULL);
	if (opts)
		p->opts = *opts;
	else
		taproot_pipeline_opts_default(&p->opts);
	if (!p->opts.freq_hz || p->opts.freq_hz > TAPROOT_FREQ_MAX) {
		uint32_t hz = p->opts.freq_hz;

		free(p);
		return tp_err(-EINVAL, "pipeline: frequency %" PRIu32 " Hz, need 1..%d",
			      hz, TAPROOT_FREQ_MAX);
	}
	err = pl_set_labeling(p);
	if (err < 0) {
		free(p);
		return err;
	}
	if (!p->opts.max_user_frames)
		p->opts.max_user_frames = PL_MAX_USER_FRAMES;
	p->interned.keep_retired = p->opts.counted;
	if (!p->opts.sym_cache_entries)
		p->opts.sym_cache_entries = PL_SYM_CACHE_DEFAULT;

	err = taproot_procs_new(p->opts.procs, &p->procs);
	if (err < 0)
		goto fail;
	err = taproot_sym_new(p->procs, p->opts.ksyms, &p->sym);
	if (err < 0)
		goto fail;
	taproot_sym_set_debuginfod(p->sym, p->opts.debuginfod);
	err = taproot_unwinder_new(&uops, p->opts.unwind_cache_bytes, &p->unwinder);
	if (err < 0)
		goto fail;

	taproot_profile_desc_cpu(&desc, p->opts.freq_hz);
	p->period_ns = desc.period;
	desc.max_stacks = p->opts.max_stacks;
	desc.comments = p->opts.comments;
	desc.nr_comments = p->opts.nr_comments;
	p->start_ns = (int64_t)tp_clock_ns(CLOCK_REALTIME);
	desc.time_nanos = p->start_ns;
	err = taproot_profile_new(&desc, &p->profile);
	if (err < 0)
		goto fail;
	p->kinds[TAPROOT_PROFILE_CPU] = p->profile;
	if (p->opts.offcpu) {
		err = pl_new_causal(p);
		if (err < 0)
			goto fail;
	}

	err = pl_alloc_caches(p);
	if (err < 0)
		goto fail;
	*pp = p;
	return 0;
fail:
	taproot_pipeline_free(p);
	return err;
}

static void pl_top_clear(struct taproot_pipeline *p)
{
	for (size_t i = 0; i < PL_TOP_MAX * 2; i++) {
		free(p->top[i].name);
		p->top[i].name = NULL;
		p->top[i].samples = 0;
	}
	p->ntop = 0;
	p->top_other = 0;
}

void taproot_pipeline_free(struct taproot_pipeline *p)
{
	if (!p)
		return;
	if (p->top)
		pl_top_clear(p);
	free(p->top);
	if (p->symcache.buckets)
		pl_symcache_clear(&p->symcache);
	free(p->symcache.buckets);
	tp_pyframes_free(p->pyframes);
	free(p->comms);
	free(p->frames);
	free(p->pcs);
	free(p->pcflags);
	free(p->counts);
	taproot_pipeline_forget_stacks(p);
	/* The join first: it borrows the profiles. */
	tp_causal_free(p->causal);
	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++)
		taproot_profile_free(p->kinds[k]);
	if (!p->kinds[TAPROOT_PROFILE_CPU])
		taproot_profile_free(p->profile);
	tp_ktables_free(p->ktables);	/* before what it borrows */
	taproot_unwinder_free(p->unwinder);
	taproot_sym_free(p->sym);
	taproot_procs_free(p->procs);
	free(p);
}

/* ------------------------------------------------------------- labels */

/*
 * The name of process @pid: the comm of its main thread, which is the
 * sample's own when the sample is of the main thread; else
 * /proc/PID/comm, cached; else the thread's (the process is gone).
 */
static const char *pl_process_comm(struct taproot_pipeline *p, int pid, uint64_t start_time,
				   int tid, const char *thread_comm)
{
	size_t i = ((uint32_t)pid * 2654435761U) % PL_COMM_CACHE, n;
	struct pl_comm *c = NULL;
	char path[64];
	const char *root = p->opts.procs && p->opts.procs->proc_root ?
			   p->opts.procs->proc_root : "/proc";
	ssize_t len;
	int fd;

	for (n = 0; n < PL_COMM_CACHE; n++, i = (i + 1) % PL_COMM_CACHE) {
		if (!p->comms[i].pid || p->comms[i].pid == pid) {
			c = &p->comms[i];
			break;
		}
	}
	if (c && c->pid == pid && c->start_time == start_time && pid != tid)
		return c->comm;
	if (!c || (!c->pid && p->ncomms >= PL_COMM_CACHE * 3 / 4)) {
		memset(p->comms, 0, PL_COMM_CACHE * sizeof(p->comms[0]));
		p->ncomms = 0;
		i = ((uint32_t)pid * 2654435761U) % PL_COMM_CACHE;
		c = &p->comms[i];
	}
	if (!c->pid)
		p->ncomms++;
	c->pid = pid;
	c->start_time = start_time;
	if (pid == tid) {
		snprintf(c->comm, sizeof(c->comm), "%s", thread_comm);
		return c->comm;
	}
	snprintf(path, sizeof(path), "%s/%d/comm", root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, c->comm, sizeof(c->comm) - 1) : -errno;
	if (len < 0 && fd >= 0)
		len = -errno;
	if (fd >= 0)
		close(fd);
	if (p->opts.procs && p->opts.procs->observer && p->opts.procs->observer->read)
		p->opts.procs->observer->read(p->opts.procs->observer->arg, pid, TAPROOT_PROC_COMM,
					      len < 0 ? (int)len : 0, c->comm,
					      len < 0 ? 0 : (size_t)len);
	if (len <= 0) {
		snprintf(c->comm, sizeof(c->comm), "%s", thread_comm);
	} else {
		c->comm[len] = '\0';
		c->comm[strcspn(c->comm, "\n")] = '\0';
	}
	return c->comm;
}

/* The process @pid has a new name (exec): its cached one is stale. */
static void pl_comm_forget(struct taproot_pipeline *p, int pid)
{
	size_t i = ((uint32_t)pid * 2654435761U) % PL_COMM_CACHE;

	for (size_t n = 0; n < PL_COMM_CACHE && p->comms[i].pid; n++, i = (i + 1) % PL_COMM_CACHE)
		if (p->comms[i].pid == pid) {
			p->comms[i].start_time = UINT64_MAX;	/* matches no process */
			return;
		}
}

/* ------------------------------------------------------- self per leaf */

static void pl_top_count(struct taproot_pipeline *p, const char *name, uint32_t n)
{
	size_t mask = PL_TOP_MAX * 2 - 1, i;
	uint64_t h = tp_hash_fin(tp_hash_bytes(name, strlen(name)));

	for (i = h & mask;; i = (i + 1) & mask) {
		struct pl_top *t = &p->top[i];

		if (t->name && !strcmp(t->name, name)) {
			t->samples += n;
			return;
		}
		if (!t->name) {
			if (p->ntop >= PL_TOP_MAX || !(t->name = strdup(name))) {
				p->top_other += n;
				return;
			}
			p->ntop++;
			t->samples = n;
			return;
		}
	}
}

static int pl_top_cmp(const void *a, const void *b)
{
	const struct taproot_pipeline_top *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->name, y->name);
}

size_t taproot_pipeline_top(const struct taproot_pipeline *p,
			    struct taproot_pipeline_top *top, size_t n)
{
	struct taproot_pipeline_top *all;
	size_t k = 0;

	if (!n)
		return 0;
	all = malloc((p->ntop + 1) * sizeof(*all));
	if (!all)
		return 0;
	for (size_t i = 0; i < PL_TOP_MAX * 2; i++)
		if (p->top[i].name)
			all[k++] = (struct taproot_pipeline_top){ p->top[i].name, p->top[i].samples };
	if (p->top_other)
		all[k++] = (struct taproot_pipeline_top){ "[other]", p->top_other };
	qsort(all, k, sizeof(*all), pl_top_cmp);
	if (k > n)
		k = n;
	memcpy(top, all, k * sizeof(*all));
	free(all);
	return k;
}

/* ------------------------------------------------------------ frames */

/* Room for @n more frames in p->frames after @nf. */
static bool pl_room(const struct taproot_pipeline *p, size_t nf, size_t n)
{
	return nf + n <= p->max_frames;
}

/*
 * Convert the symbolizer's @nr frames of one pc into profile frames at
 * @out: strings are the symbolizer's (copied by the cache right after).
 */
static unsigned int pl_convert(const struct taproot_frame *sf, int nr, uint64_t address,
			       bool is_kernel, bool have_map, uint64_t mstart, uint64_t mend,
			       uint64_t mpgoff, struct taproot_profile_frame *out)
{
	unsigned int unknown = 0;

	for (int i = 0; i < nr; i++) {
		const struct taproot_frame *f = &sf[i];
		struct taproot_profile_frame *o = &out[i];

		memset(o, 0, sizeof(*o));
		/*
		 * A pc the symbolizer did not know stays an address in its
		 * mapping (function NULL), unless it is part of an inline chain,
		 * whose frames all need a name.
		 */
		o->function = f->known || nr > 1 ? f->function : NULL;
		if (!f->known)
			unknown++;
		if (f->known && strncmp(f->function, "[unknown", 8) != 0)
			o->file = f->file;
		o->line = f->line;
		o->address = address;
		o->is_kernel = is_kernel;
		o->inlined = f->inlined;
		o->build_id = f->build_id;
		o->build_id_len = f->build_id ? f->build_id_len : 0;
		if (is_kernel) {
			o->mapping_path = f->map_path;
		} else if (have_map) {
			o->mapping_path = f->map_path;
			o->mapping_start = mstart;
			o->mapping_limit = mend;
			o->mapping_offset = mpgoff;
		}
		if (o->build_id_len > TAPROOT_PROFILE_MAX_BUILD_ID) {
			o->build_id = NULL;
			o->build_id_len = 0;
		}
	}
	return unknown;
}

/* A symbolized pc from the cache, or symbolized now and cached. */
static const struct pl_sym *pl_symbolize(struct taproot_pipeline *p, struct taproot_proc *proc,
					 uint64_t pc, unsigned int flags)
{
	struct taproot_profile_frame tmp[PL_MAX_INLINE];
	const struct taproot_frame *sf;
	const struct taproot_map *m = NULL;
	/* The program is part of the identity: an exec reuses pid and start time. */
	uint64_t start_time = proc ? taproot_proc_start_time(proc) ^
				     ((uint64_t)taproot_proc_execs(proc) << 48) : 0;
	uint64_t address = (flags & TAPROOT_SYM_RETADDR) && pc ? pc - 1 : pc;
	uint64_t mstart = 0, mend = 0, mpgoff = 0;
	int pid = proc ? taproot_proc_pid(proc) : -1;
	bool have_map = false;
	struct pl_sym *e;
	unsigned int unknown;
	int nr;

	e = pl_symcache_find(&p->symcache, pid, start_time, pc, flags);
	if (e) {
		p->st.sym_cache_hits++;
		return e;
	}
	p->st.sym_cache_misses++;
	if (proc) {
		if (taproot_proc_find_map(proc, address, &m) == 0) {
			have_map = true;
			mstart = m->start;
			mend = m->end;
			mpgoff = m->pgoff;
		}
		nr = taproot_sym_user(p->sym, proc, pc, flags, &sf);
	} else {
		nr = taproot_sym_kernel(p->sym, pc, flags, &sf);
	}
	if (nr <= 0)
		return NULL;
	if (nr > PL_MAX_INLINE)
		nr = PL_MAX_INLINE;
	unknown = pl_convert(sf, nr, address, !proc, have_map, mstart, mend, mpgoff, tmp);
	return pl_symcache_add(&p->symcache, pid, start_time, pc, flags, tmp,
			       (unsigned int)nr, unknown);
}

/*
 * Whether @pc, the last pc of an unwind that found no CFI for it, is at
 * the entry point of its ELF (e_entry, within ENTRY_SLACK bytes): the
 * outermost frame of the process. The dynamic loader's _start has no CFI
 * (glibc's RTLD_START is bare assembly, 61 bytes on Debian 12: "mov %rsp,
 * %rdi; call _dl_start", then _dl_start_user's "call _dl_init" at +0x2b),
 * so every sample taken while ld.so runs before main would otherwise end
 * in "[no cfi]" although nothing is missing.
 */
#define ENTRY_SLACK	64

static bool pl_at_entry(struct taproot_proc *proc, uint64_t pc)
{
	const struct taproot_map *m;
	GElf_Ehdr eh;
	uint64_t v;

	if (taproot_proc_find_map(proc, pc, &m) < 0 || !m->elf ||
	    !gelf_getehdr(taproot_elf_handle(m->elf), &eh) || !eh.e_entry)
		return false;
	v = pc - m->bias;
	return v >= eh.e_entry && v < eh.e_entry + ENTRY_SLACK;
}

/* Whether some mapping of @proc holds @pc (its maps re-read if not, at most once per refresh). */
static bool pl_has_map(struct taproot_proc *proc, uint64_t pc)
{
	const struct taproot_map *m;

	return taproot_proc_find_map(proc, pc, &m) != -ENOENT;
}

/* A frame with just a name: "[truncated]", "[unknown: process exited]". */
static void pl_marker(struct taproot_profile_frame *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->function = name;
}

/*
 * The symbolized pcs may be stale once the process model re-read some
 * maps (a pc now in another mapping): then the cache starts over.
 */
static void pl_symcache_flush(struct taproot_pipeline *p)
{
	pl_symcache_clear(&p->symcache);
	tp_pyframes_clear(p->pyframes);
	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++)
		if (p->kinds[k])
			taproot_profile_forget_keys(p->kinds[k]);
}

/*
 * A pc symbolized before may now have other frames: after maps were read
 * again, or a debug file arrived from debuginfod.
 */
static void pl_check_refresh(struct taproot_pipeline *p)
{
	uint64_t gen = taproot_debuginfod_generation(p->opts.debuginfod);
	struct taproot_procs_stats ps;

	taproot_procs_get_stats(p->procs, &ps);
	if (ps.refreshes != p->procs_refreshes || gen != p->debuginfod_generation) {
		p->procs_refreshes = ps.refreshes;
		p->debuginfod_generation = gen;
		pl_symcache_flush(p);
		p->st.sym_cache_flushes++;
	}
}

static int pl_add_sym(struct taproot_pipeline *p, size_t *nf, const struct pl_sym *e)
{
	if (!pl_room(p, *nf, e->nr))
		return -E2BIG;
	memcpy(&p->frames[*nf], e->frames, e->nr * sizeof(e->frames[0]));
	/* The entry stands for its frames until the cache is emptied. */
	p->frames[*nf + e->nr - 1].key = e;
	*nf += e->nr;
	p->st.frames++;
	p->st.frames_unsymbolized += e->unknown ? 1 : 0;
	return 0;
}

/* What a capture's user part is made of. */
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
};

/* The interrupted user ip: the module's first pc when it walked, else the registers'. */
static uint64_t pl_user_ip(const struct pl_capture *c)
{
	return c->upc_nr ? c->upcs[0] : c->regs->ip;
}

/* Whether @name is a tracing trampoline: __traceiter_*, __bpf_trace_*. */
static bool pl_is_trampoline(const char *name)
{
	return name && (!strncmp(name, "__traceiter_", 12) || !strncmp(name, "__bpf_trace_", 12));
}

/* What pl_stack_unwind() found of a capture's user stack. */
enum pl_user {
	PL_USER_NONE,		/* none to unwind: the kernel frames alone */
	PL_USER_GONE,		/* the process could not be read (why: *gone) */
	PL_USER_UNWOUND,	/* unwound: res.nr pcs in p->pcs */
};

/*
 * Run the unwinder over @c's registers and stack copy from frame @start
 * (TAPROOT_UNWIND_START_*), its pcs into p->pcs from @at, at most @max;
 * res->nr counts those before @at too.
 */
static void pl_user_unwind(struct taproot_pipeline *p, const struct pl_capture *c,
			   struct taproot_proc *proc, unsigned int start, unsigned int at,
			   unsigned int max, struct taproot_unwind_result *res)
{
	uint64_t t0 = tp_clock_ns(CLOCK_MONOTONIC);
	int err;

	err = taproot_unwind_from(p->unwinder, proc, c->regs, start, c->ustack, c->ustack_len,
				  p->pcs + at, p->pcflags + at, max, res);
	p->st.unwind_ns += tp_clock_ns(CLOCK_MONOTONIC) - t0;
	p->st.unwind_frames += res->nr;
	/* -ENOMEM: the pcs found so far are there; go on with them. */
	if (err < 0 && res->end == TAPROOT_UNWIND_COMPLETE)
		res->end = TAPROOT_UNWIND_BAD_FRAME;
	res->nr += at;
}

/*
 * The module's first @n pcs of @c into p->pcs: the leaf's exact, the
 * others return addresses (symbolized at pc - 1, as the unwinder's; a
 * frame a signal frame restored, exact in truth, is not told apart).
 */
static void pl_user_given(struct taproot_pipeline *p, const struct pl_capture *c, unsigned int n)
{
	memcpy(p->pcs, c->upcs, n * sizeof(p->pcs[0]));
	for (unsigned int i = 0; i < n; i++)
		p->pcflags[i] = i ? 0 : TAPROOT_FRAME_EXACT;
}

/*
 * VERIFY: whether the unwinder's pcs (@res) are the module's walk, as
 * taproot_pipeline_stats.verify_identical defines it; counted.
 */
static void pl_verify(struct taproot_pipeline *p, const struct pl_capture *c,
		      const struct taproot_unwind_result *res)
{
	bool same = c->kend == TAPROOT_KUNWIND_MAX_FRAMES ? res->nr >= c->upc_nr :
			res->nr == c->upc_nr;

	same = same && !memcmp(p->pcs, c->upcs, c->upc_nr * sizeof(p->pcs[0]));
	if (same)
		p->st.verify_identical++;
	else
		p->st.verify_differing++;
}

/* The user pcs of @c into p->pcs, by its kind (enum pl_upcs); @res what they are. */
static void pl_user_pcs(struct taproot_pipeline *p, const struct pl_capture *c,
			struct taproot_proc *proc, struct taproot_unwind_result *res)
{
	unsigned int max = p->opts.max_user_frames, pre;

	switch (c->upcs_mode) {
	case PL_UPCS_WHOLE:
		memset(res, 0, sizeof(*res));
		pl_user_given(p, c, c->upc_nr);
		res->nr = c->upc_nr;
		res->end = pl_kend[c->kend].end;
		return;
	case PL_UPCS_CONTINUE:
		/* regs are frame upc_nr - 1's: its pc comes from the unwinder. */
		pre = c->upc_nr ? c->upc_nr - 1 : 0;
		pl_user_given(p, c, pre);
		pl_user_unwind(p, c, proc, c->regs_caller ? TAPROOT_UNWIND_START_CALLER : 0, pre,
			       max > pre ? max - pre : 1, res);
		p->st.kunwind_continued++;
		return;
	case PL_UPCS_VERIFY:
		/* Room for the module's whole walk, whatever max_user_frames. */
		pl_user_unwind(p, c, proc, 0, 0, max > c->upc_nr ? max : c->upc_nr, res);
		pl_verify(p, c, res);
		return;
	default:
		pl_user_unwind(p, c, proc, 0, 0, max, res);
		return;
	}
}

/*
 * Unwind the user stack of @c, in process *@procp (NULL when @c has no
 * user stack). Counts what the unwinder did (time, frames, entry points)
 * but not the outcome, which pl_stack() counts once it is final.
 */
static int pl_stack_unwind(struct taproot_pipeline *p, const struct pl_capture *c,
			   struct taproot_proc **procp, const char **gone,
			   struct taproot_unwind_result *res, enum pl_user *user)
{
	struct taproot_proc *proc;
	int err;

	*user = PL_USER_NONE;
	if (!c->user || !c->pid)
		return 0;
	err = taproot_proc_get(p->procs, (int)c->pid, 0, &proc);
	if (err < 0)
		return err;
	*procp = proc;
	*gone = taproot_proc_gone(proc);
	if (*gone) {
		*user = PL_USER_GONE;
		return 0;
	}
	/*
	 * Its maps were read under another name: an execve came between the
	 * sample and the read. Unwound there, the pcs would take the other
	 * program's names.
	 */
	if (c->comm && c->tid == c->pid && !taproot_proc_check_comm(proc, c->comm))
		return 1;
	/*
	 * In the kernel with a user ip that no mapping of the process holds:
	 * the registers are stale, as between exec_mmap() and start_thread()
	 * in execve (the old program's registers, the new program's memory).
	 * There is no user stack to unwind: the kernel frames alone.
	 */
	if (c->in_kernel && !pl_has_map(proc, pl_user_ip(c)))
		return 1;

	pl_user_pcs(p, c, proc, res);
	if (res->end == TAPROOT_UNWIND_NO_CFI && res->nr &&
	    pl_at_entry(proc, p->pcs[res->nr - 1] -
			(p->pcflags[res->nr - 1] & TAPROOT_FRAME_EXACT ? 0 : 1))) {
		res->end = TAPROOT_UNWIND_COMPLETE;
		p->st.unwind_at_entry++;
	}
	*user = PL_USER_UNWOUND;
	return 0;
}

/* The kernel frames of @c into p->frames from *@nfp. 0 or -ENOMEM. */
static int pl_stack_kernel(struct taproot_pipeline *p, const struct pl_capture *c, size_t *nfp)
{
	unsigned int i;

	if (p->opts.no_kernel)
		return 0;
	for (i = 0; i < c->kstack_nr; i++) {
		bool exact = i == 0 && c->k0_exact;
		const struct pl_sym *e;

		e = pl_symbolize(p, NULL, c->kstack[i], exact ? 0 : TAPROOT_SYM_RETADDR);
		if (!e)
			return tp_err(-ENOMEM, NULL);
		/* The tracepoint's own callers are not the task's: drop them. */
		if (c->trim_trace && !*nfp && e->nr &&
		    pl_is_trampoline(e->frames[e->nr - 1].function))
			continue;
		pl_add_sym(p, nfp, e);
	}
	if (c->kstack_nr && c->kstack_trunc && pl_room(p, *nfp, 1))
		pl_marker(&p->frames[(*nfp)++], "[kernel truncated]");
	return 0;
}

/*
 * The marker frame at the root of @c's user frames (@res): why the walk
 * ended where it did, the module's reason when it ended there; NULL for
 * a complete one.
 */
static const char *pl_user_marker(const struct pl_capture *c,
				  const struct taproot_unwind_result *res)
{
	if (res->end == TAPROOT_UNWIND_COMPLETE)
		return NULL;
	if (c->upcs_mode == PL_UPCS_WHOLE)
		return pl_kend[c->kend].marker;
	return pl_end_marker[res->end];
}

/*
 * In place of an activation of the interpreter's evaluation loop: the
 * Python frames of @c it ran, from *@pyi up to the one marked as its
 * first (TAPROOT_PYFRAME_ENTRY), into p->frames from *@nf. 0 or -ENOMEM.
 */
static int pl_python_frames(struct taproot_pipeline *p, const struct pl_capture *c,
			    struct taproot_proc *proc, const struct taproot_pyproc *py,
			    unsigned int *pyi, size_t *nf)
{
	while (*pyi < c->py_nr && pl_room(p, *nf, 1)) {
		const struct taproot_pyframe *f = &c->py[(*pyi)++];
		int ret = tp_pyframes_frame(p->pyframes, proc, py, f, &p->frames[*nf]);

		if (ret < 0)
			return ret;
		(*nf)++;
		p->st.python_frames++;
		p->st.python_frames_gone += ret;
		if (f->pos & TAPROOT_PYFRAME_ENTRY)
			break;
	}
	return 0;
}

/*
 * The unwound user frames (@res) of @c in @proc into p->frames from *@nfp,
 * the Python frames of the module's walk in place of the interpreter's
 * frames that ran them. Returns 1 when they had to be dropped, 0, or
 * -ENOMEM.
 */
static int pl_stack_user(struct taproot_pipeline *p, const struct pl_capture *c,
			 struct taproot_proc *proc, const struct taproot_unwind_result *res,
			 size_t *nfp)
{
	const struct taproot_pyproc *py = NULL;
	unsigned int pyi = 0;
	size_t nf = *nfp;
	unsigned int i;

	if (c->py_nr && taproot_proc_python(proc, &py) < 0)
		py = NULL;
	for (i = 0; i < res->nr; i++) {
		unsigned int fl = p->pcflags[i] & TAPROOT_FRAME_EXACT ? 0 : TAPROOT_SYM_RETADDR;
		uint64_t at = fl ? p->pcs[i] - 1 : p->pcs[i];
		const struct pl_sym *e;

		if (py && pyi < c->py_nr && taproot_pyproc_in_eval(py, at)) {
			if (pl_python_frames(p, c, proc, py, &pyi, &nf) < 0)
				return tp_err(-ENOMEM, NULL);
			continue;
		}
		e = pl_symbolize(p, proc, p->pcs[i], fl);
		if (!e)
			return tp_err(-ENOMEM, NULL);
		if (pl_add_sym(p, &nf, e) < 0)
			break;
	}
	/* Frames of activations the native walk did not reach (MAX_FRAMES). */
	p->st.python_frames_unplaced += c->py_nr - pyi;
	/* An interpreter not walked says so, at the root of its stacks. */
	if (res->nr && taproot_proc_python_unwalked(proc) && pl_room(p, nf, 1))
		pl_marker(&p->frames[nf++], taproot_proc_python_unwalked(proc));
	if (pl_user_marker(c, res) && pl_room(p, nf, 1))
		pl_marker(&p->frames[nf++], pl_user_marker(c, res));
	/*
	 * A pc outside the maps had the process read again, under another
	 * name: the frames after it may have the new program's names. The
	 * kernel frames alone, as for a stale capture.
	 */
	if (c->comm && c->tid == c->pid && !taproot_proc_comm_is(proc, c->comm))
		return 1;
	*nfp = nf;
	return 0;
}

/*
 * The stack of @c into p->frames, leaf first: kernel frames on top of the
 * user frames; *@nfp frames, *@procp the process (NULL: none). 0 or -ENOMEM.
 *
 * The user stack is unwound before anything is symbolized: unwinding may
 * re-read the process's maps, which empties the cache of symbolized pcs
 * (pl_check_refresh()), and p->frames borrows its strings from that cache.
 */
static int pl_stack(struct taproot_pipeline *p, const struct pl_capture *c, size_t *nfp,
		    struct taproot_proc **procp, char *marker, size_t marker_size)
{
	struct taproot_unwind_result res = { 0 };
	enum pl_user user;
	const char *gone = NULL;
	int stale, err;
	size_t nf = 0;

	*procp = NULL;
	stale = pl_stack_unwind(p, c, procp, &gone, &res, &user);
	if (stale < 0)
		return stale;
	if (!p->opts.no_kernel)
		p->st.kernel_frames += c->kstack_nr;
	pl_check_refresh(p);
	if (pl_symcache_full(&p->symcache, c->kstack_nr + res.nr) ||
	    tp_pyframes_full(p->pyframes, c->py_nr))
		pl_symcache_flush(p);

	err = pl_stack_kernel(p, c, &nf);
	if (err < 0)
		return err;
	if (user == PL_USER_GONE) {
		snprintf(marker, marker_size, "[unknown: %s]", gone);
		if (pl_room(p, nf, 1))
			pl_marker(&p->frames[nf++], marker);
	} else if (user == PL_USER_UNWOUND) {
		stale = pl_stack_user(p, c, *procp, &res, &nf);
		if (stale < 0)
			return stale;
	}

	if (stale) {
		p->st.user_stale++;
		p->st.kernel_only++;
	} else if (user == PL_USER_UNWOUND) {
		p->st.user_stacks++;
		p->st.unwind[res.end]++;
	} else if (user == PL_USER_GONE) {
		p->st.proc_unknown++;
	} else {
		p->st.kernel_only++;
	}
	if (!nf)
		pl_marker(&p->frames[nf++], "[no stack]");
	*nfp = nf;
	return 0;
}

/* Who a CPU sample is of, whichever record it came in. */
struct pl_who {
	uint32_t pid, tid;
	uint64_t time_ns;		/* the record's */
	uint32_t period_us;		/* 0: the pipeline's period */
	uint32_t weight;		/* samples it stands for: 1, or a count's */
	char thread_comm[17];		/* the record's comm, NUL-terminated */
};

/* @w from a record's fields; @comm is the record's 16 bytes, NUL padded or not. */
static void pl_who_set(struct pl_who *w, const struct taproot_rec_header *rec, uint32_t pid,
		       uint32_t tid, uint32_t period_us, const char comm[16])
{
	w->time_ns = rec->time_ns;
	w->weight = 1;
	w->pid = pid;
	w->tid = tid;
	w->period_us = period_us;
	memcpy(w->thread_comm, comm, 16);
	w->thread_comm[16] = '\0';
}

/*
 * The labels of CPU sample @w into @l (room for PL_LABELS_MAX), in a fixed
 * order: pid, comm, thread_comm, [tid], [cpu], then those of its process
 * (@proc, NULL: unknown), the static ones, then what the relabel rules
 * made of them.
 * False when the rules drop the sample.
 */
static bool pl_sample_labels(struct taproot_pipeline *p, const struct pl_who *w,
			     unsigned int cpu, struct taproot_proc *proc,
			     struct taproot_profile_label *l, size_t *n, const char **commp)
{
	const char *comm = proc ? pl_process_comm(p, (int)w->pid, taproot_proc_start_time(proc),
						  (int)w->tid, w->thread_comm) : w->thread_comm;

	*commp = comm;

	*n = 0;
	l[(*n)++] = TAPROOT_LABEL_NUM("pid", w->pid);
	l[(*n)++] = TAPROOT_LABEL_STR("comm", comm);
	l[(*n)++] = TAPROOT_LABEL_STR("thread_comm", w->thread_comm);
	if (p->opts.label_tid)
		l[(*n)++] = TAPROOT_LABEL_NUM("tid", w->tid);
	if (p->opts.label_cpu)
		l[(*n)++] = TAPROOT_LABEL_NUM("cpu", cpu);
	return taproot_labeling_finish(&p->labeling, proc ? taproot_proc_labels(proc) : NULL,
				       l, n, PL_LABELS_MAX, &p->st.relabel_dropped,
				       &p->st.relabel_skipped);
}

/* The process of a sample with a user part to unwind, NULL for any other. */
static struct taproot_proc *pl_sample_proc(struct taproot_pipeline *p, uint32_t pid, bool user)
{
	struct taproot_proc *proc;

	if (!user || !pid || taproot_proc_get(p->procs, (int)pid, 0, &proc) < 0)
		return NULL;
	return proc;
}

/* A CPU sample of @w, its stacks @c (c->comm set here), into the profile. */
static int pl_cpu_sample(struct taproot_pipeline *p, const struct pl_who *w, unsigned int cpu,
			 struct pl_capture *c)
{
	struct taproot_profile_label labels[PL_LABELS_MAX];
	struct taproot_proc *proc;
	char marker[160];
	const char *leaf, *comm;
	size_t nf = 0, nl;
	int64_t values[2];
	int err;

	c->comm = w->thread_comm;
	/* Labels first: a sample the rules drop costs no unwinding. */
	proc = pl_sample_proc(p, w->pid, c->user);
	if (!pl_sample_labels(p, w, cpu, proc, labels, &nl, &comm))
		return 0;
	err = pl_stack(p, c, &nf, &proc, marker, sizeof(marker));
	if (err < 0)
		return err;

	values[0] = w->weight;
	values[1] = (int64_t)w->weight * (w->period_us ? (int64_t)w->period_us * 1000 :
					   p->period_ns);
	err = taproot_profile_add(p->profile, p->frames, nf, labels, nl, values);
	if (err < 0) {
		p->st.dropped += w->weight;
		return err;
	}
	p->st.samples += w->weight;
	/* A count has no instants to put on a timeline. */
	if (p->opts.timeline && w->weight == 1)
		tp_timeline_sample(p->opts.timeline, w->pid, w->tid, cpu, w->time_ns,
				   comm, w->thread_comm, p->frames, nf);

	leaf = p->frames[0].function;
	if (!leaf || !leaf[0])
		leaf = p->frames[0].mapping_path;
	if (!leaf || !leaf[0])
		leaf = "[unknown]";
	pl_top_count(p, leaf, w->weight);
	return 0;
}


/* What a SAMPLE's user part is, by its flags (taproot_rec_check() passed). */
static enum pl_upcs pl_sample_upcs(const struct taproot_rec_sample *s)
{
	if (!(s->hdr.flags & TAPROOT_SAMPLE_F_UPCS))
		return PL_UPCS_NONE;
	if (s->hdr.flags & TAPROOT_SAMPLE_F_VERIFY)
		return PL_UPCS_VERIFY;
	/* No stack copy to go on with (TAPROOT_CFG_F_USTACK_PRIVATE). */
	if (s->upc_nr && !s->ustack_len)
		return PL_UPCS_WHOLE;
	return PL_UPCS_CONTINUE;
}

static int pl_sample(struct taproot_pipeline *p, const struct taproot_rec_sample *s,
		     unsigned int cpu)
{
	const uint64_t *kstack = (const uint64_t *)(s + 1);
	const uint64_t *upcs = kstack + s->kstack_nr;
	struct pl_capture c = {
		.pid = s->pid,
		.tid = s->tid,
		.kstack = kstack,
		.kstack_nr = s->kstack_nr,
		.k0_exact = s->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.kstack_trunc = s->hdr.flags & TAPROOT_SAMPLE_F_KSTACK_TRUNC,
		.in_kernel = s->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.user = (s->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) &&
			!(s->hdr.flags & TAPROOT_SAMPLE_F_KTHREAD),
		.regs = &s->user_regs,
		.ustack = (const uint8_t *)(upcs + s->upc_nr),
		.ustack_len = s->ustack_len,
		.upcs_mode = pl_sample_upcs(s),
		.upcs = upcs,
		.upc_nr = s->upc_nr,
		.kend = s->unwind,
		.regs_caller = s->hdr.flags & TAPROOT_SAMPLE_F_UREGS_CALLER,
	};
	struct pl_who w;

	c.py_nr = taproot_rec_sample_python(s, &c.py);
	if (c.upcs_mode == PL_UPCS_WHOLE)
		c.regs = NULL;
	pl_who_set(&w, &s->hdr, s->pid, s->tid, s->period_us, s->comm);
	/* TAPROOT_KUNWIND_NONE: the module did not walk it. */
	p->st.kunwind[s->unwind]++;
	if (c.upcs_mode == PL_UPCS_VERIFY)
		p->st.verify_samples++;
	return pl_cpu_sample(p, &w, cpu, &c);
}

/* ------------------------------------------- the module's stack slots */

/*
 * A SAMPLE_REF: a sample whose stack is a STACK record of its CPU. The
 * pcs are taken whole (PL_UPCS_WHOLE); one the mirror lacks is counted
 * and dropped: its stack is not known, as a lost record's.
 */
/* The capture of thread @tid of @pid whose stack is STACK @st, taken whole. */
static struct pl_capture pl_stack_capture(const struct taproot_rec_stack *st, uint32_t pid,
					  uint32_t tid)
{
	const uint64_t *pcs = (const uint64_t *)(st + 1);

	return (struct pl_capture){
		.pid = pid,
		.tid = tid,
		.kstack = pcs,
		.kstack_nr = st->kstack_nr,
		.k0_exact = st->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.kstack_trunc = st->hdr.flags & TAPROOT_SAMPLE_F_KSTACK_TRUNC,
		.in_kernel = st->hdr.flags & TAPROOT_SAMPLE_F_IN_KERNEL,
		.user = (st->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) && st->upc_nr,
		.upcs_mode = PL_UPCS_WHOLE,
		.upcs = pcs + st->kstack_nr,
		.upc_nr = st->upc_nr,
		.kend = st->unwind,
		.py = (const struct taproot_pyframe *)(pcs + st->kstack_nr + st->upc_nr),
		.py_nr = st->py_nr,
	};
}

static int pl_sample_ref(struct taproot_pipeline *p, const struct taproot_rec_sample_ref *r,
			 unsigned int cpu)
{
	const struct taproot_rec_stack *st;
	struct pl_capture c;
	struct pl_who w;

	p->st.stack_refs++;
	st = tp_interned_get(&p->interned, r, cpu);
	if (!st) {
		p->st.stack_refs_unresolved++;
		return 0;
	}
	c = pl_stack_capture(st, r->pid, r->tid);
	pl_who_set(&w, &r->hdr, r->pid, r->tid, r->period_us, r->comm);
	p->st.kunwind[st->unwind]++;
	return pl_cpu_sample(p, &w, cpu, &c);
}

/*
 * A drained count (taproot_count_check() passed): its samples as a
 * reference's, all at once, at the time of the last.
 */
static int pl_count(struct taproot_pipeline *p, const struct taproot_count *e)
{
	const struct taproot_rec_stack *st;
	struct pl_capture c;
	struct pl_who w = {
		.pid = e->pid,
		.tid = e->tid,
		.time_ns = e->last_ns,
		.period_us = e->period_us,
		.weight = e->count,
	};

	p->st.counts++;
	p->st.counted_samples += e->count;
	st = tp_interned_find(&p->interned, e->cpu, e->stack_id, e->epoch, e->pid);
	if (!st) {
		p->st.counted_unresolved += e->count;
		return 0;
	}
	c = pl_stack_capture(st, e->pid, e->tid);
	memcpy(w.thread_comm, e->comm, sizeof(e->comm));
	w.thread_comm[sizeof(e->comm)] = '\0';
	p->st.kunwind[st->unwind] += e->count;
	return pl_cpu_sample(p, &w, e->cpu, &c);
}

void taproot_pipeline_forget_stacks(struct taproot_pipeline *p)
{
	tp_interned_clear(&p->interned);
}

/* ------------------------------------------------------- causal events */

/*
 * The join's resolver (lib/profile/causal.c): a stack snapshot as a sample's
 * stack. Everything it returns lives in p->frames and p->causal_comm
 * until the next record.
 */
/*
 * Whether the relabel rules drop the intervals of task @tid of @proc (NULL:
 * unknown), named @comm, judged on the labels it has before its stack is
 * resolved; only when the rules read no other (p->relabel_early).
 */
static bool pl_interval_dropped(struct taproot_pipeline *p, uint32_t pid, uint32_t tid,
				const char *comm, const char *thread_comm,
				struct taproot_proc *proc)
{
	struct taproot_profile_label l[PL_LABELS_MAX];
	uint64_t dropped = 0, skipped = 0;	/* counted as the interval is written */
	size_t n = 0;

	if (!p->relabel_early)
		return false;
	l[n++] = TAPROOT_LABEL_NUM("pid", pid);
	l[n++] = TAPROOT_LABEL_STR("comm", comm);
	l[n++] = TAPROOT_LABEL_STR("thread_comm", thread_comm);
	if (p->opts.label_tid)
		l[n++] = TAPROOT_LABEL_NUM("tid", tid);
	return !taproot_labeling_finish(&p->labeling, proc ? taproot_proc_labels(proc) : NULL,
					l, &n, PL_LABELS_MAX, &dropped, &skipped);
}

/*
 * A snapshot with the module's walk (TAPROOT_SNAP_F_UPCS): its "stack
 * bytes" are the user pcs, taken whole as an interned stack's, never
 * unwound here; TAPROOT_SNAP_UNWIND() says how the walk ended (with
 * USTACK_TRUNC: MAX_FRAMES; with USTACK_FAULT: where it stopped, or NONE
 * when it was not tried).
 */
static void pl_snap_upcs(struct taproot_pipeline *p, struct pl_capture *c,
			 const struct taproot_stack_snap *snap)
{
	c->upcs_mode = PL_UPCS_WHOLE;
	c->upcs = (const uint64_t *)c->ustack;
	c->upc_nr = snap->ustack_len / sizeof(uint64_t);
	c->regs = NULL;
	c->ustack = NULL;
	c->ustack_len = 0;
	c->kend = TAPROOT_SNAP_UNWIND(snap->flags);
	p->st.causal_upcs++;
}

static int pl_resolve_snap(void *arg, uint32_t pid, uint32_t tid, const char *thread_comm,
			   bool owner, const struct taproot_stack_snap *snap, size_t len,
			   struct tp_causal_stack *out)
{
	struct taproot_pipeline *p = arg;
	struct pl_capture c = { .pid = pid, .tid = tid, .trim_trace = true, .in_kernel = true,
				.comm = thread_comm };
	struct taproot_proc *proc = NULL;
	size_t nf = 0;
	int err;

	memset(out, 0, sizeof(*out));
	out->comm = thread_comm;
	if (snap && (snap->kstack_nr > TAPROOT_KSTACK_MAX || snap->ustack_len > TAPROOT_USTACK_MAX ||
		     sizeof(*snap) + (size_t)snap->kstack_nr * 8 + snap->ustack_len > len))
		return -TAPROOT_ECORRUPT;
	if (snap && (snap->flags & TAPROOT_SNAP_F_UPCS) &&
	    (!(snap->flags & TAPROOT_SNAP_F_USER_REGS) || !snap->ustack_len ||
	     snap->ustack_len % 8 || snap->ustack_len > 8 * TAPROOT_UNWIND_FRAMES_MAX ||
	     TAPROOT_SNAP_UNWIND(snap->flags) >= TAPROOT_KUNWIND_NR))
		return -TAPROOT_ECORRUPT;
	c.user = snap && (snap->flags & TAPROOT_SNAP_F_USER_REGS) && pid;
	/*
	 * The process first: its labels may spare the stack's resolution.
	 * A snapshot without user registers (a kernel thread's) does not
	 * read it: such a task has no process to label it.
	 */
	if (pid && (!snap || c.user) && taproot_proc_get(p->procs, (int)pid, 0, &proc) < 0)
		proc = NULL;
	if (proc)
		out->comm = pl_process_comm(p, (int)pid, taproot_proc_start_time(proc), (int)tid,
					    thread_comm);
	if (owner) {
		out->labels = proc ? tp_labels_get(taproot_proc_labels(proc)) : NULL;
		out->dropped = pl_interval_dropped(p, pid, tid, out->comm, thread_comm, proc);
		if (out->dropped)
			return 0;
	}
	if (!snap)
		return 0;
	c.kstack = (const uint64_t *)(snap + 1);
	c.kstack_nr = snap->kstack_nr;
	c.kstack_trunc = snap->flags & TAPROOT_SNAP_F_KSTACK_TRUNC;
	c.regs = &snap->user_regs;
	c.ustack = (const uint8_t *)(c.kstack + snap->kstack_nr);
	c.ustack_len = snap->ustack_len;
	if (snap->flags & TAPROOT_SNAP_F_UPCS)
		pl_snap_upcs(p, &c, snap);
	err = pl_stack(p, &c, &nf, &proc, p->causal_marker, sizeof(p->causal_marker));
	if (err < 0)
		return err;
	out->frames = p->frames;
	out->nr = nf;
	return 0;
}

/*
 * A SWITCH or WAKING whose snapshot says the module could not walk its
 * task's user stack for want of uploads (NO_PROC, STALE, NO_MAPPING) asks
 * for them as a sample does (lib/pipeline/ktables.h): a process that
 * mostly blocks is then walked in its events, not only once a sample
 * happens to come. The snapshot is prev's in a SWITCH, the waker's
 * (current at sched_waking) in a WAKING; an interrupt's wakeup has no
 * user part, so no walk, and waker pid 0.
 */
static void pl_event_kupload(struct taproot_pipeline *p, const struct taproot_rec_header *rec)
{
	const struct taproot_stack_snap *snap = taproot_rec_snap(rec);
	uint32_t pid;

	if (!snap)
		return;
	if (rec->type == TAPROOT_REC_SWITCH)
		pid = ((const struct taproot_rec_switch *)rec)->prev_pid;
	else
		pid = ((const struct taproot_rec_waking *)rec)->waker_pid;
	tp_ktables_sample(p->ktables, pid, TAPROOT_SNAP_UNWIND(snap->flags), rec->time_ns);
}

/* FORK, EXEC, EXIT: the process model follows the processes' lives. */
static void pl_proc_event(struct taproot_pipeline *p, const struct taproot_rec_header *rec)
{
	switch (rec->type) {
	case TAPROOT_REC_FORK: {
		const struct taproot_rec_fork *f = (const void *)rec;

		if (rec->size < sizeof(*f))
			goto bad;
		/*
		 * A new process: a pid still known belonged to one that is
		 * gone. Its maps are the parent's copy until it execs; they
		 * are read from /proc when its first stack needs them.
		 */
		if (!(rec->flags & TAPROOT_FORK_F_THREAD) && f->child_pid)
			taproot_proc_new(p->procs, (int)f->child_pid);
		break;
	}
	case TAPROOT_REC_EXEC: {
		const struct taproot_rec_exec *e = (const void *)rec;

		if (rec->size < sizeof(*e))
			goto bad;
		if (e->pid) {
			taproot_proc_exec(p->procs, (int)e->pid);
			pl_comm_forget(p, (int)e->pid);
		}
		break;
	}
	case TAPROOT_REC_EXIT: {
		const struct taproot_rec_exit *x = (const void *)rec;

		if (rec->size < sizeof(*x))
			goto bad;
		if (p->opts.timeline)
			tp_timeline_exit(p->opts.timeline, x->pid, x->tid, rec->time_ns);
		if ((rec->flags & TAPROOT_EXIT_F_GROUP_DEAD) && x->pid) {
			taproot_proc_forget(p->procs, (int)x->pid);
			tp_ktables_exit(p->ktables, x->pid);
		}
		break;
	}
	}
	p->st.proc_events++;
	return;
bad:
	p->st.dropped++;
}

int taproot_pipeline_add_record(struct taproot_pipeline *p,
				const struct taproot_rec_header *rec, unsigned int cpu)
{
	const char *why;
	int err;

	p->st.records++;
	err = taproot_rec_check(rec, rec->size, &why);
	if (err < 0) {
		p->st.dropped++;
		return tp_err(err, "pipeline: invalid record: %s", why);
	}
	if (p->opts.timeline)
		tp_timeline_time(p->opts.timeline, rec->time_ns);
	switch (rec->type) {
	case TAPROOT_REC_SAMPLE:
		tp_ktables_sample(p->ktables, ((const struct taproot_rec_sample *)rec)->pid,
				  ((const struct taproot_rec_sample *)rec)->unwind, rec->time_ns);
		err = pl_sample(p, (const struct taproot_rec_sample *)rec, cpu);
		if (err < 0 && err != -ENOMEM)
			err = 0;	/* counted; the next sample goes on */
		return err;
	case TAPROOT_REC_SAMPLE_REF:
		err = pl_sample_ref(p, (const struct taproot_rec_sample_ref *)rec, cpu);
		if (err < 0 && err != -ENOMEM)
			err = 0;
		return err;
	case TAPROOT_REC_STACK:
		err = tp_interned_put(&p->interned, (const struct taproot_rec_stack *)rec, cpu);
		if (err < 0) {
			p->st.dropped++;
			return err;
		}
		p->st.stack_records += err;
		return 0;
	case TAPROOT_REC_LOST: {
		const struct taproot_rec_lost *l = (const struct taproot_rec_lost *)rec;

		/* What was lost may have been an end of an interval: it stays unpaired. */
		for (unsigned int i = 0; i < TAPROOT_LOST_NR; i++)
			p->st.lost += l->lost[i];
		return 0;
	}
	case TAPROOT_REC_SWITCH:
	case TAPROOT_REC_WAKING:
		pl_event_kupload(p, rec);
		if (!p->causal)
			break;
		tp_causal_record(p->causal, rec);
		return 0;
	case TAPROOT_REC_FORK:
	case TAPROOT_REC_EXEC:
	case TAPROOT_REC_EXIT:
		pl_proc_event(p, rec);
		return 0;
	default:
		break;
	}
	p->st.other_records++;
	return 0;
}

/* ------------------------------------------------------------ prewarm */

#define PREWARM_STACK	(16 * 1024)

/* A plain copy that ASan does not check: it reads other frames' redzones. */
__attribute__((noinline, no_sanitize_address))
static void pl_copy_stack(uint8_t *dst, const volatile uint8_t *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		dst[i] = src[i];
}

/* This thread's registers (those CFI may need) and the top of its stack. */
__attribute__((noinline))
static size_t pl_capture(struct taproot_user_regs *regs, uint8_t *stack, size_t max,
			 uint64_t stack_end)
{
	uint64_t sp, bp, ip;
	size_t len;

	__asm__ volatile("lea 0f(%%rip), %0\n"
			 "0:\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2\n"
			 : "=&r"(ip), "=&r"(sp), "=&r"(bp));
	memset(regs, 0, sizeof(*regs));
	regs->ip = ip;
	regs->sp = sp;
	regs->bp = bp;
	len = stack_end > sp ? stack_end - sp : 0;
	if (len > max)
		len = max;
	pl_copy_stack(stack, (const volatile uint8_t *)(uintptr_t)sp, len);
	return len;
}

int taproot_pipeline_prewarm(struct taproot_pipeline *p)
{
	struct taproot_pipeline_stats saved = p->st;
	struct taproot_user_regs regs;
	struct taproot_unwind_result res;
	struct taproot_proc *proc;
	pthread_attr_t attr;
	uint64_t stack_end = 0;
	uint8_t *stack;
	void *addr;
	size_t size, len;
	int err;

	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0)
			stack_end = (uint64_t)(uintptr_t)addr + size;
		pthread_attr_destroy(&attr);
	}
	if (!stack_end)
		return 0;
	stack = malloc(PREWARM_STACK);
	if (!stack)
		return tp_err(-ENOMEM, NULL);
	len = pl_capture(&regs, stack, PREWARM_STACK, stack_end);
	err = taproot_proc_get(p->procs, getpid(), 0, &proc);
	if (!err && !taproot_proc_gone(proc)) {
		err = taproot_unwind(p->unwinder, proc, &regs, stack, len, p->pcs, p->pcflags,
				     p->opts.max_user_frames, &res);
		if (pl_symcache_full(&p->symcache, res.nr))
			pl_symcache_flush(p);
		for (unsigned int i = 0; err >= 0 && i < res.nr; i++)
			if (!pl_symbolize(p, proc, p->pcs[i],
					  p->pcflags[i] & TAPROOT_FRAME_EXACT ? 0 : TAPROOT_SYM_RETADDR))
				err = tp_err(-ENOMEM, NULL);
	}
	free(stack);
	p->st = saved;
	return err < 0 ? err : 0;
}

void taproot_pipeline_set_timeline(struct taproot_pipeline *p, struct taproot_timeline *t)
{
	if (p->causal)
		tp_causal_set_timeline(p->causal, t);
	p->opts.timeline = t;
}

void taproot_pipeline_add_lost(struct taproot_pipeline *p, uint64_t lost)
{
	p->st.lost += lost;
}

int tp_pipeline_set_kring(struct taproot_pipeline *p, void *ring, const struct tp_kops *ops)
{
	int err;

	if (!p->ktables) {
		if (!ring)
			return 0;
		err = tp_ktables_new(p->procs, p->unwinder, &p->ktables);
		if (err < 0)
			return err;
		tp_ktables_skip(p->ktables, (uint32_t)getpid());
	}
	tp_ktables_set_ring(p->ktables, ring, ops);
	return 0;
}

int taproot_pipeline_set_ring(struct taproot_pipeline *p, struct taproot_ring *ring)
{
	return tp_pipeline_set_kring(p, ring, NULL);
}

void taproot_pipeline_stats(const struct taproot_pipeline *p, struct taproot_pipeline_stats *st)
{
	struct taproot_profile_stats ps;
	struct taproot_procs_stats prs;

	*st = p->st;
	taproot_profile_stats(p->profile, &ps);
	st->folded = ps.folded;
	st->stacks = ps.stacks;
	st->profile_bytes = ps.bytes;
	taproot_procs_get_stats(p->procs, &prs);
	st->procs_read = prs.procs_read;
	st->procs_gone = prs.procs_gone;
	st->elf_errors = prs.elf_errors;
	st->sym_cache_entries = p->symcache.count;
	st->counts_old_dropped = p->interned.old_dropped;
	if (p->causal)
		tp_causal_stats(p->causal, &st->causal);
	tp_ktables_stats(p->ktables, &st->kupload);
}

const struct taproot_profile *taproot_pipeline_profile(const struct taproot_pipeline *p)
{
	return p->profile;
}

const struct taproot_profile *taproot_pipeline_profile_of(struct taproot_pipeline *p,
							  enum taproot_profile_kind kind)
{
	int64_t now = (int64_t)tp_clock_ns(CLOCK_REALTIME);

	if (!taproot_pipeline_has(p, kind))
		return NULL;
	taproot_profile_set_time(p->kinds[kind], p->start_ns, now - p->start_ns);
	return p->kinds[kind];
}

int taproot_pipeline_write(struct taproot_pipeline *p, const char *path)
{
	int64_t now = (int64_t)tp_clock_ns(CLOCK_REALTIME);

	taproot_profile_set_time(p->profile, p->start_ns, now - p->start_ns);
	return taproot_pprof_write_file(p->profile, path);
}

void taproot_pipeline_reset(struct taproot_pipeline *p)
{
	p->start_ns = (int64_t)tp_clock_ns(CLOCK_REALTIME);
	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++)
		if (p->kinds[k])
			taproot_profile_reset(p->kinds[k], p->start_ns);
	pl_top_clear(p);
}

const char *taproot_profile_kind_name(enum taproot_profile_kind kind)
{
	static const char *const names[TAPROOT_PROFILE_NR_KINDS] = {
		[TAPROOT_PROFILE_CPU] = "cpu",
		[TAPROOT_PROFILE_OFFCPU] = "offcpu",
		[TAPROOT_PROFILE_OFFWAKE] = "offwake",
		[TAPROOT_PROFILE_SCHEDLAT] = "schedlat",
	};

	return (unsigned int)kind < TAPROOT_PROFILE_NR_KINDS ? names[kind] : NULL;
}

bool taproot_pipeline_has(const struct taproot_pipeline *p, enum taproot_profile_kind kind)
{
	return (unsigned int)kind < TAPROOT_PROFILE_NR_KINDS && p->kinds[kind];
}

uint64_t taproot_pipeline_adds(const struct taproot_pipeline *p, enum taproot_profile_kind kind)
{
	struct taproot_profile_stats ps;

	if (!taproot_pipeline_has(p, kind))
		return 0;
	taproot_profile_stats(p->kinds[kind], &ps);
	return ps.adds;
}

int taproot_pipeline_write_kind(struct taproot_pipeline *p, enum taproot_profile_kind kind,
				const char *path)
{
	int64_t now = (int64_t)tp_clock_ns(CLOCK_REALTIME);

	if (!taproot_pipeline_has(p, kind))
		return tp_err(-ENOENT, "pipeline: no %s profile",
			      taproot_profile_kind_name(kind) ?: "such");
	taproot_profile_set_time(p->kinds[kind], p->start_ns, now - p->start_ns);
	return taproot_pprof_write_file(p->kinds[kind], path);
}

void taproot_pipeline_end_round(struct taproot_pipeline *p)
{
	if (p->causal)
		tp_causal_end_round(p->causal);
	tp_ktables_tick(p->ktables);
}

void taproot_pipeline_flush(struct taproot_pipeline *p, bool final)
{
	if (p->causal)
		tp_causal_flush(p->causal, final);
}

struct pl_consume {
	struct taproot_pipeline *p;
	void (*corrupt)(unsigned int cpu, uint64_t pos, const char *why, void *arg);
	void *arg;
};

static int pl_on_record(const struct taproot_rec_header *h, unsigned int cpu, void *arg)
{
	struct pl_consume *c = arg;

	/* Errors are counted in the pipeline's stats; the session goes on. */
	taproot_pipeline_add_record(c->p, h, cpu);
	return 0;
}

static void pl_on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	struct pl_consume *c = arg;

	if (c->corrupt)
		c->corrupt(cpu, pos, why, c->arg);
}

int64_t taproot_pipeline_drain_counts(struct taproot_pipeline *p, struct taproot_ring *ring,
				      void (*corrupt)(unsigned int cpu, uint64_t pos,
						      const char *why, void *arg),
				      void *arg)
{
	uint32_t nr;
	int err;

	/*
	 * Once: rings are sorted by CPU, the last one's number is the highest
	 * (its stats read the reader's buffer with mincore(): not every drain).
	 */
	if (!p->counts) {
		uint32_t nr_cpus = 0;

		if (taproot_ring_count(ring)) {
			struct taproot_ring_stats rs;

			taproot_ring_stats(ring, taproot_ring_count(ring) - 1, &rs);
			nr_cpus = rs.cpu + 1;
		}
		p->counts_max = nr_cpus * TAPROOT_COUNT_SLOTS;
		p->counts = calloc(p->counts_max ? p->counts_max : 1, sizeof(*p->counts));
		if (!p->counts)
			return tp_err(-ENOMEM, NULL);
	}
	err = taproot_ring_counts_drain(ring, p->counts, p->counts_max, &nr);
	if (err < 0)
		return err;
	/* The STACK records the counts name came before the drain returned. */
	taproot_pipeline_consume(p, ring, corrupt, arg);
	return taproot_pipeline_add_counts(p, p->counts, nr, p->counts_max / TAPROOT_COUNT_SLOTS);
}

int64_t taproot_pipeline_add_counts(struct taproot_pipeline *p, const struct taproot_count *e,
				    size_t nr, uint32_t nr_cpus)
{
	uint64_t before = p->st.samples;
	const char *why;

	for (size_t i = 0; i < nr; i++) {
		if (taproot_count_check(&e[i], nr_cpus, &why) < 0) {
			p->st.counts_corrupt++;
			continue;
		}
		/* A count the profile could not take is counted in stats.dropped. */
		(void)pl_count(p, &e[i]);
	}
	tp_interned_retire(&p->interned);
	return (int64_t)(p->st.samples - before);
}

int taproot_pipeline_consume(struct taproot_pipeline *p, struct taproot_ring *ring,
			     void (*corrupt)(unsigned int cpu, uint64_t pos,
					     const char *why, void *arg),
			     void *arg)
{
	static const struct taproot_ring_ops ops = {
		.record = pl_on_record,
		.corrupt = pl_on_corrupt,
	};
	struct pl_consume c = { p, corrupt, arg };
	int n = taproot_ring_consume(ring, &ops, &c);

	taproot_pipeline_end_round(p);
	return n;
}

double taproot_pipeline_verify_rate(const struct taproot_pipeline_stats *st)
{
	uint64_t n = st->verify_identical + st->verify_differing;

	return n ? (double)st->verify_identical / (double)n : 0;
}

double taproot_pipeline_unwind_rate(const struct taproot_pipeline_stats *st)
{
	if (!st->user_stacks)
		return 0;
	return (double)st->unwind[TAPROOT_UNWIND_COMPLETE] / (double)st->user_stacks;
}
