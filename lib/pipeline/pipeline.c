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
 * STACK record goes into the mirror of its CPU's stack slots and is
 * resolved there and then, its user pcs known (symbolized as the
 * unwinder's would be: the leaf exact, the others return addresses); each
 * SAMPLE_REF or drained count naming it is a sample of that resolution
 * (resolved.h), its labels its own. A SAMPLE whose walk fell back has
 * the module's first pcs; the unwinder goes on from the frame the walk
 * stopped at. A SAMPLE with VERIFY is unwound here as any other, and the
 * module's pcs compared.
 *
 * SWITCH and WAKING records (with opts.offcpu) go to the off-CPU join
 * (lib/profile/causal.c), whose stack snapshots take the same path as a sample's
 * stack (tp_pl_stack()) into the offcpu, offwake and schedlat profiles.
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
 * Each stage is a file of its own, listed in internal.h: records.c takes
 * the records in, labels.c labels a sample, stack.c makes a capture's
 * frames (through symcache.c), resolved.c keeps the frames of interned
 * stacks; this file makes the pipeline and writes its profiles.
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

#include <linux/taproot.h>

#include "pipeline/internal.h"
#include "pipeline/ktables.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/util.h"

_Static_assert(TAPROOT_PIPELINE_KUNWIND_NR == TAPROOT_KUNWIND_NR,
	       "taproot_pipeline_stats.kunwind has a counter per taproot_kunwind");

void taproot_pipeline_opts_default(struct taproot_pipeline_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->freq_hz = TAPROOT_FREQ_DEFAULT;
	o->max_user_frames = PL_MAX_USER_FRAMES;
	o->sym_cache_entries = PL_SYM_CACHE_DEFAULT;
}

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
		.resolve = tp_pl_resolve_snap,
		.arg = p,
		.labeling = &p->labeling,
		.timeline = p->opts.timeline,
	};
	/* What an interval is labeled with when its stack is resolved. */
	const char *early[PL_LABELS_MAX] = { "pid", "comm", "thread_comm", "tid" };
	size_t nearly = 4;
	int err;

	_Static_assert(4 + TAPROOT_PROC_NR_LABEL_KEYS <= PL_LABELS_MAX, "early[] holds them");
	for (size_t i = 0; i < TAPROOT_PROC_NR_LABEL_KEYS; i++)
		early[nearly++] = taproot_proc_label_keys[i];

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

/* The caches and the per-sample scratch, sized by the options. 0 or -ENOMEM. */
static int pl_alloc_caches(struct taproot_pipeline *p)
{
	p->comms = calloc(PL_COMM_CACHE, sizeof(p->comms[0]));
	p->top = calloc(PL_TOP_MAX * 2, sizeof(p->top[0]));
	/* The module's pcs (VERIFY: all of them; a fallback: but the last) and the unwinder's. */
	p->max_pcs = p->opts.max_user_frames + TAPROOT_UNWIND_FRAMES_MAX;
	p->max_frames = TAPROOT_KSTACK_MAX + (size_t)p->max_pcs * PL_MAX_INLINE + 2;
	p->frames = calloc(p->max_frames, sizeof(p->frames[0]));
	p->pcs = calloc(p->max_pcs, sizeof(p->pcs[0]));
	p->pcflags = calloc(p->max_pcs, sizeof(p->pcflags[0]));
	p->pcnames = calloc(p->max_pcs, sizeof(p->pcnames[0]));
	if (!p->comms || !p->top || !p->frames || !p->pcs || !p->pcflags || !p->pcnames ||
	    tp_symcache_init(&p->symcache, p->opts.sym_cache_entries) < 0)
		return tp_err(-ENOMEM, NULL);
	return tp_pyframes_new(p->opts.sym_cache_entries, &p->pyframes);
}

int taproot_pipeline_new(const struct taproot_pipeline_opts *opts,
			 struct taproot_pipeline **pp)
{
	static const struct taproot_unwind_ops uops = {
		.map = tp_pl_unwind_map,
		.jit = tp_pl_unwind_jit,
	};
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
	err = tp_pl_set_labeling(p);
	if (err < 0) {
		free(p);
		return err;
	}
	if (!p->opts.max_user_frames)
		p->opts.max_user_frames = PL_MAX_USER_FRAMES;
	p->interned.keep_retired = p->opts.counted;
	p->interned.pool.max = PL_RESOLVED_BYTES;
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

void taproot_pipeline_free(struct taproot_pipeline *p)
{
	if (!p)
		return;
	if (p->top)
		tp_pl_top_clear(p);
	free(p->top);
	taproot_pipeline_live(p, false);
	tp_symcache_free(&p->symcache);
	tp_pyframes_free(p->pyframes);
	free(p->comms);
	free(p->frames);
	free(p->pcs);
	free(p->pcflags);
	free(p->pcnames);
	free(p->counts);
	free(p->jit);
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
	st->k8s_hits = prs.k8s_hits;
	st->k8s_reads = prs.k8s_reads;
	st->k8s_refused = prs.k8s_refused;
	st->k8s_evicted = prs.k8s_evicted;
	st->sym_cache_entries = p->symcache.count;
	st->counts_old_dropped = p->interned.old_dropped;
	st->resolved_stacks = p->interned.pool.made;
	st->resolved_over_budget = p->interned.pool.over_budget;
	st->resolved_bytes = p->interned.pool.bytes;
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
	tp_pl_top_clear(p);
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
