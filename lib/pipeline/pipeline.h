/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, pipeline layer: ring records in, profiles out
 * (lib/pipeline/).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_PIPELINE_H
#define TAPROOT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kernel.h"
#include "pipeline/ktables.h"
#include "process/process.h"
#include "profile/profile.h"
#include "profile/timeline.h"
#include "pipeline/unwindmap.h"
#include "unwind/unwind.h"

/* ------------------------------------------------------- the pipeline */
/*
 * (lib/pipeline/, internal.h names its stages.) Ring records in, pprof profiles out, in one direction:
 * each SAMPLE record goes through the process model (its pid's maps; a pc
 * outside them re-reads them; a process that cannot be read gives one
 * "[unknown: REASON]" frame), the unwinder (its user registers and stack
 * copy; an incomplete unwind ends in a marker frame "[truncated]", "[no
 * cfi]", "[no mapping]", "[bad frame]" or "[max depth]", at the root;
 * an unwind that ends without CFI at an ELF's entry point, as everything
 * that runs in ld.so before main does, is the outermost frame: complete),
 * the
 * symbolizer (inline chains, file:line; kernel frames from kallsyms under
 * "[kernel.kallsyms]", on top of the user frames, leaf first) and into a
 * CPU profile (taproot_profile_desc_cpu(): samples/count and
 * cpu/nanoseconds, period_us * 1000 each). Samples aggregate per (stack,
 * pid, comm, thread_comm): "comm" is the process's name (its main thread's
 * comm), "thread_comm" the sampled thread's; "tid" and "cpu" labels are
 * optional since they multiply the number of distinct samples.
 *
 * Stacks the module unwound itself (TAPROOT_FEAT_UNWIND) come three ways:
 * a STACK record, kept in a mirror of the module's stack slots (per CPU,
 * TAPROOT_STACK_SLOTS each, allocated when a CPU's first STACK comes),
 * then SAMPLE_REF records naming it, each a sample whose user pcs need no
 * unwinding; a reference the mirror cannot resolve (another epoch, its
 * slot overwritten since, its STACK lost) is counted and dropped, as a
 * lost record is. A SAMPLE with the module's first pcs (UPCS) whose walk
 * fell back: its pcs, then the unwinder from the frame the walk stopped
 * at over the sample's stack copy (without a copy, the module's pcs and
 * a marker of why it stopped: "[no unwind tables]", "[stale unwind
 * tables]", "[slow rule]", or the unwinder's marker of the same end). A
 * SAMPLE with VERIFY: unwound here as a plain sample, the module's pcs
 * only compared (stats.verify_*).
 *
 * The caller reads the rings and hands each record over; the pipeline
 * never touches /dev/taproot. Memory is bounded: the profile's stack table
 * (max_stacks), the unwinder's table cache, the process model's LRU, and a
 * cache of symbolized pcs (emptied when full, or when some process's maps
 * were re-read).
 */
struct taproot_pipeline;

struct taproot_pipeline_opts {
	uint32_t freq_hz;		/* the module's rate: period 1e9 / freq_hz */
	bool label_tid;			/* add a numeric "tid" label */
	bool label_cpu;			/* add a numeric "cpu" label */
	bool no_kernel;			/* leave kernel frames out */
	/*
	 * Leave the frames of ELF files unnamed (record --symbolize none):
	 * their locations keep the address, and their mappings the file,
	 * its offset and build ID, for a server that has the binaries or
	 * their debug files to name them. The frames only this host can
	 * name stay named: the kernel's, JIT code's (perf maps), the
	 * interpreters' (Python, Java) and the vDSO's.
	 */
	bool symbolize_none;
	/*
	 * The module counts unwound samples (TAPROOT_CFG_F_COUNT): keep the
	 * STACK records a later one replaced until the next
	 * taproot_pipeline_drain_counts(), which may name them.
	 */
	bool counted;
	size_t max_stacks;		/* profile entries; 0: TAPROOT_PROFILE_MAX_STACKS */
	size_t unwind_cache_bytes;	/* 0: TAPROOT_UNWIND_CACHE_DEFAULT */
	unsigned int max_user_frames;	/* pcs unwound per sample; 0: 128 */
	unsigned int sym_cache_entries;	/* symbolized pcs kept; 0: 65536 */
	const struct taproot_ksyms *ksyms;	/* borrowed; NULL: kernel frames unnamed */
	const struct taproot_procs_opts *procs;	/* NULL: the defaults */
	const char *const *comments;	/* written in every profile (borrowed) */
	size_t nr_comments;
	/*
	 * Off-CPU profiles: join SWITCH and WAKING records into intervals
	 * and build the offcpu, offwake and schedlat profiles. Without it
	 * those records are counted in other_records and ignored.
	 */
	bool offcpu;
	uint64_t min_block_ns;		/* shorter blocked intervals: no offcpu/offwake */
	size_t max_intervals;		/* intervals held at once; 0: 16384 */
	uint64_t max_open_ns;		/* an interval open longer is dropped at a
					 * flush; 0: 10 minutes */
	/*
	 * Rules applied to the labels of every sample and off-CPU interval
	 * (NULL: none). A CPU sample they drop is not unwound, nor is an
	 * interval's stack when the rules read no label an interval gets
	 * later (state, waker). Borrowed: it must outlive the pipeline.
	 */
	const struct taproot_relabel *relabel;
	/*
	 * Labels of every sample of every profile, after its own and its
	 * process's and before the rules: hostname and kernel_release (NULL
	 * or "": left out), then @static_labels (at most 16). Borrowed,
	 * strings too: they must outlive the pipeline.
	 */
	const char *hostname, *kernel_release;
	/*
	 * Debug files fetched by build ID for binaries without symbols or
	 * line info here (NULL: none). Borrowed: it must outlive the
	 * pipeline. Frames whose file arrives later are named from then on.
	 */
	struct taproot_debuginfod *debuginfod;
	/*
	 * The session's timeline (NULL: none): with offcpu, every off-CPU
	 * interval, and every CPU sample and exit, with their stacks. Borrowed:
	 * it must outlive the pipeline.
	 */
	struct taproot_timeline *timeline;
	const struct taproot_profile_label *static_labels;
	size_t nr_static_labels;
};

/* The profiles a pipeline builds. */
enum taproot_profile_kind {
	TAPROOT_PROFILE_CPU,
	TAPROOT_PROFILE_OFFCPU,
	TAPROOT_PROFILE_OFFWAKE,
	TAPROOT_PROFILE_SCHEDLAT,
	TAPROOT_PROFILE_NR_KINDS
};

/* "cpu", "offcpu", "offwake", "schedlat"; NULL for another value. */
const char *taproot_profile_kind_name(enum taproot_profile_kind kind);

/* TAPROOT_KUNWIND_NR of <linux/taproot.h> (pipeline.c asserts it). */
#define TAPROOT_PIPELINE_KUNWIND_NR	10

/* Cumulative counters of a pipeline (since taproot_pipeline_new()). */
struct taproot_pipeline_stats {
	uint64_t records;		/* records given */
	uint64_t samples;		/* samples added to the profile */
	uint64_t lost;			/* records the module lost (LOST records) */
	uint64_t dropped;		/* invalid records, samples not added */
	uint64_t other_records;		/* records of other types, ignored */
	uint64_t kernel_only;		/* samples without a user part */
	uint64_t user_stale;		/* of them: in the kernel with a user ip in no
					 * mapping (execve between the old and the new
					 * program), or of a main thread whose maps were
					 * read under another name (an execve between
					 * the sample and the read): the user part is
					 * left out */
	uint64_t user_stacks;		/* user stacks unwound */
	uint64_t unwind[TAPROOT_UNWIND_NR_ENDS];	/* of them, by end reason */
	uint64_t unwind_at_entry;	/* of the complete ones: ended without CFI
					 * at an ELF's entry point (ld.so's _start) */
	uint64_t proc_unknown;		/* samples of processes that could not be read */
	uint64_t frames;		/* pcs symbolized (user and kernel) */
	uint64_t frames_unsymbolized;	/* of them, without a function name */
	/*
	 * CPython frames of the module's walks (TAPROOT_FEAT_PYTHON): put in
	 * place of the interpreter's frames; of them, those whose code
	 * object was gone by the time it was read; and those left out, of
	 * activations the native walk did not reach.
	 */
	uint64_t python_frames;
	uint64_t python_frames_gone;
	uint64_t python_frames_unplaced;
	/*
	 * Java frames of the module's walks (TAPROOT_FEAT_JVM), as resolved:
	 * each sample's own, an interned stack's once.
	 */
	uint64_t java_frames_kernel;
	uint64_t sym_cache_hits, sym_cache_misses, sym_cache_flushes;
	uint64_t sym_cache_file_hits;	/* misses another process's symbolization
					 * of the same file served */
	uint64_t jit_named_late;	/* JIT pcs named by a perf map read again */
	uint64_t jit_pending_dropped;	/* JIT pcs not kept for a late name: too many */
	size_t sym_cache_entries;	/* now */
	uint64_t procs_read, procs_gone;	/* the process model's */
	uint64_t elf_errors;		/* mappings whose ELF file could not be used
					 * (gone, replaced, not ELF, corrupt) */
	/* Kubernetes labels: as struct taproot_procs_stats's k8s_*. */
	uint64_t k8s_hits, k8s_reads, k8s_refused, k8s_evicted;
	/* The current profile (since the last reset): */
	uint64_t folded;		/* samples folded: the stack table was full */
	size_t stacks;			/* distinct (stack, labels) entries */
	size_t profile_bytes;		/* memory the profile holds */
	uint64_t proc_events;		/* FORK, EXEC and EXIT records applied */
	uint64_t relabel_dropped;	/* CPU samples the relabel rules dropped */
	uint64_t relabel_skipped;	/* samples and intervals kept with a replace
					 * skipped for want of room */
	struct taproot_causal_stats causal;	/* zero unless opts.offcpu */
	/* Uploads to the module's unwinder (taproot_pipeline_set_ring()). */
	struct taproot_kupload_stats kupload;
	/*
	 * The cost of unwinding alone (cumulative, for benchmarks): the
	 * CLOCK_MONOTONIC time inside taproot_unwind() (a vDSO read each side)
	 * and the user pcs it returned; the kernel pcs the samples carried.
	 */
	uint64_t unwind_ns;
	uint64_t unwind_frames;
	uint64_t kernel_frames;
	/*
	 * The module's unwinding (TAPROOT_FEAT_UNWIND). kunwind: CPU samples
	 * (SAMPLE records, and references resolved to their STACK) by how
	 * the module's walk of the user stack ended, enum taproot_kunwind
	 * (taproot_kunwind_name()); [TAPROOT_KUNWIND_NONE]: not walked.
	 * Their user stacks count in user_stacks and unwind[] too, by the
	 * final end: a STACK's COMPLETE as complete, MAX_FRAMES as max-depth.
	 */
	uint64_t kunwind[TAPROOT_PIPELINE_KUNWIND_NR];
	uint64_t kunwind_continued;	/* fallback samples whose walk the unwinder
					 * continued from the module's last frame */
	uint64_t causal_upcs;		/* causal events' stacks resolved from the
					 * module's walk (TAPROOT_SNAP_F_UPCS) */
	uint64_t stack_records;		/* STACK records kept in the mirror */
	uint64_t stack_refs;		/* SAMPLE_REF records */
	uint64_t stack_refs_unresolved;	/* of them, not in the mirror: dropped */
	/*
	 * Counted stacks (taproot_pipeline_drain_counts()): the entries
	 * drained, the samples they stood for, of those the samples whose
	 * STACK the mirror lacked (dropped), entries the checks refused, and
	 * STACK records replaced beyond the mirror's bound on those it keeps
	 * (TP_INTERNED_RETIRED_MAX).
	 */
	uint64_t counts;
	uint64_t counted_samples;
	uint64_t counted_unresolved;
	uint64_t counts_corrupt;
	uint64_t counts_old_dropped;
	/*
	 * Interned stacks resolved once, as their STACK arrived, and kept for
	 * the samples that name them (SAMPLE_REFs, counts): resolutions made,
	 * samples served by one, STACKs left unresolved for the budget (their
	 * samples resolved one by one), bytes held now.
	 */
	uint64_t resolved_stacks;
	uint64_t resolved_samples;
	uint64_t resolved_over_budget;
	size_t resolved_bytes;
	/*
	 * Samples with TAPROOT_SAMPLE_F_VERIFY: compared when their snapshot
	 * was unwound here (not for a process that could not be read, nor
	 * one the relabel rules dropped, nor a walk that differs when the
	 * process's memory was gone by then). Identical: the unwinder's pcs are
	 * the module's, in the same order, as many (when the module's walk
	 * ended MAX_FRAMES: the unwinder's first upc_nr pcs are the module's
	 * upc_nr). The profile has the unwinder's stack either way.
	 */
	uint64_t verify_samples;
	uint64_t verify_identical;
	uint64_t verify_differing;
};

/* Defaults: TAPROOT_FREQ_DEFAULT Hz, every other field 0 or false. */
void taproot_pipeline_opts_default(struct taproot_pipeline_opts *o);

/*
 * A new pipeline with @opts (NULL: the defaults), its profile's interval
 * starting now. Errors: -EINVAL (freq_hz 0 or above TAPROOT_FREQ_MAX),
 * -ENOMEM; *@pp is then NULL.
 */
int taproot_pipeline_new(const struct taproot_pipeline_opts *opts,
			 struct taproot_pipeline **pp);
void taproot_pipeline_free(struct taproot_pipeline *p);

/*
 * Take one record of ring @cpu (as taproot_ring_ops.record gets it; it is
 * checked again with taproot_rec_check()). SAMPLE records go into the
 * profile, STACK records into the mirror of ring @cpu's stack slots and
 * SAMPLE_REF records resolved there into the profile (a ring's records
 * must come in its order), LOST records into stats.lost, SWITCH and
 * WAKING records into the off-CPU join (with opts.offcpu), FORK, EXEC and
 * EXIT records into the process model (stats.proc_events); others are counted and ignored.
 * Returns 0; -TAPROOT_ECORRUPT for an invalid record, -ENOMEM (both
 * counted in stats.dropped; the pipeline stays usable).
 */
int taproot_pipeline_add_record(struct taproot_pipeline *p,
				const struct taproot_rec_header *rec, unsigned int cpu);

/*
 * Warm the caches up before the first record: unwind and symbolize the
 * calling thread's own stack, which compiles the unwind tables of the
 * libraries nearly every process maps (libc, the dynamic loader; keyed by
 * build ID, so shared with every process mapping the same files). Under
 * emulation compiling libc's takes seconds, during which the rings would
 * fill and short-lived processes exit unread. Counts nothing. 0 or
 * -ENOMEM.
 */
int taproot_pipeline_prewarm(struct taproot_pipeline *p);

/*
 * Give every record from now on to timeline @t (NULL: none) in place of
 * opts.timeline; the one before gets what it lacks of the intervals under
 * way (those still open as open), so that it ends as the session stands.
 * Borrowed: @t must outlive the pipeline or the next call.
 */
void taproot_pipeline_set_timeline(struct taproot_pipeline *p, struct taproot_timeline *t);

/* Count @lost records lost outside the rings' LOST records. */
void taproot_pipeline_add_lost(struct taproot_pipeline *p, uint64_t lost);

/*
 * Upload unwind tables and process mappings through @ring, the caller's
 * open /dev/taproot, from now on, for the module's unwinder (policy:
 * lib/pipeline/ktables.h); NULL: no more (a replay never sets one). What
 * was uploaded through the ring set before is forgotten, its processes'
 * mappings freed in the module: call it with NULL while that ring is
 * still open, before closing it. Failures are counted in stats.kupload,
 * never returned: the module falls back to snapshots. 0 or -ENOMEM.
 */
int taproot_pipeline_set_ring(struct taproot_pipeline *p, struct taproot_ring *ring);

/*
 * The same with @ops in place of the module's ioctls on @ring (NULL: those,
 * @ring a struct taproot_ring): the unit tests' fakes, not programs'.
 */
int tp_pipeline_set_kring(struct taproot_pipeline *p, void *ring, const struct tp_kops *ops);

void taproot_pipeline_stats(const struct taproot_pipeline *p,
			    struct taproot_pipeline_stats *st);

/* complete unwinds / user stacks unwound, 0 when none. */
double taproot_pipeline_unwind_rate(const struct taproot_pipeline_stats *st);

/* verify_identical / (verify_identical + verify_differing), 0 when none. */
double taproot_pipeline_verify_rate(const struct taproot_pipeline_stats *st);

/*
 * Forget the mirror of the module's stack slots, as a new reader of the
 * rings starts (a replay's next pass: its references resolve only to its
 * own STACK records).
 */
void taproot_pipeline_forget_stacks(struct taproot_pipeline *p);

/* A function and the samples where it was the leaf (self). */
struct taproot_pipeline_top {
	const char *name;		/* valid until the next add or reset */
	uint64_t samples;
};

/*
 * The @n functions (or markers) seen most often as the leaf frame of a
 * sample since the last reset, most first, into @top; returns how many.
 */
size_t taproot_pipeline_top(const struct taproot_pipeline *p,
			    struct taproot_pipeline_top *top, size_t n);

/*
 * The live top (taprootctl top): while it is on, each CPU sample counts,
 * for every function of its stack and the sample's group (its
 * service_name label, else its process name), in "self" when it is the
 * leaf and in "total" once however often it recurs. Off by default (a
 * lookup per frame of each sample). On: a table of at most 16384
 * functions and groups; off frees it. 0, or -ENOMEM.
 */
int taproot_pipeline_live(struct taproot_pipeline *p, bool on);

struct taproot_pipeline_live_fn {
	const char *name;		/* the function, else its file, or "[unknown]" */
	const char *group;
	uint64_t self, total;		/* samples */
};

struct taproot_pipeline_live_take {
	const struct taproot_pipeline_live_fn *fns;	/* most total first; valid
							   until the next take or off */
	size_t n;
	uint64_t samples;		/* CPU samples counted */
	uint64_t other;			/* of those, samples with a function the
					   table had no room for */
};

/*
 * What the live top counted since the last take (or since it was turned
 * on), into @t; the count starts again from nothing. -EINVAL when it is
 * off, -ENOMEM.
 */
int taproot_pipeline_live_take(struct taproot_pipeline *p, struct taproot_pipeline_live_take *t);

/* The profile being built (to encode it elsewhere, or read its stats). */
const struct taproot_profile *taproot_pipeline_profile(const struct taproot_pipeline *p);

/*
 * The profile @kind being built, its time and duration set to the
 * interval so far, as taproot_pipeline_write_kind() sets them (to encode
 * it elsewhere); NULL when @p does not build it.
 */
const struct taproot_profile *taproot_pipeline_profile_of(struct taproot_pipeline *p,
							  enum taproot_profile_kind kind);

/*
 * Write the profile of the current interval (time: when it started,
 * duration: until now) to @path, atomically, mode 0600, as
 * taproot_pprof_write_file(). The profile is kept: reset it for the next
 * interval. Errors: as taproot_pprof_write_file().
 */
int taproot_pipeline_write(struct taproot_pipeline *p, const char *path);

/* Start a new interval now: empty profiles, the self counts cleared. */
void taproot_pipeline_reset(struct taproot_pipeline *p);

/*
 * Read every record the rings hold now into the pipeline (taproot_ring_consume(),
 * @corrupt and @arg its corrupt callback), then end the consume round:
 * off-CPU intervals completed in the round before are added to their
 * profiles (a record of another CPU that belongs to an interval completed
 * now may still be read in the next round). Returns the records read.
 */
int taproot_pipeline_consume(struct taproot_pipeline *p, struct taproot_ring *ring,
			     void (*corrupt)(unsigned int cpu, uint64_t pos,
					     const char *why, void *arg),
			     void *arg);

/*
 * The module's counted stacks into the profile: drain them
 * (taproot_ring_counts_drain()), read every record @ring holds then (as
 * taproot_pipeline_consume(): the STACK records they name are among
 * them), add each count as that many samples of its stack, at the time
 * of its last; then forget the replaced STACK records kept for them.
 * Returns the samples added, or -errno with a message (-ENOTTY: a module
 * that counts nothing).
 */
int64_t taproot_pipeline_drain_counts(struct taproot_pipeline *p, struct taproot_ring *ring,
				      void (*corrupt)(unsigned int cpu, uint64_t pos,
						      const char *why, void *arg),
				      void *arg);

/*
 * For callers that drain the module's counts themselves (tests), what
 * taproot_pipeline_drain_counts() does: taproot_pipeline_counts_begin()
 * before the drain takes the tables; then, after it (and after reading the
 * rings to their heads), taproot_pipeline_add_counts() of the @nr entries
 * at @e into the profile, each checked (taproot_count_check(), CPUs below
 * @nr_cpus; refused ones counted in stats.counts_corrupt) and resolved in
 * the mirror of the STACK records read so far; then the replaced STACK
 * records kept since before the drain began are freed (those replaced
 * since may be named by the next drain's counts). Returns the samples
 * added.
 */
void taproot_pipeline_counts_begin(struct taproot_pipeline *p);
int64_t taproot_pipeline_add_counts(struct taproot_pipeline *p, const struct taproot_count *e,
				    size_t nr, uint32_t nr_cpus);

/* End a consume round by hand (what taproot_pipeline_consume() does last). */
void taproot_pipeline_end_round(struct taproot_pipeline *p);

/*
 * Before writing the off-CPU profiles: add every completed interval, drop
 * (as unpaired) those open longer than opts.max_open_ns, or, when @final
 * (the session is over, the rings drained), every open one.
 */
void taproot_pipeline_flush(struct taproot_pipeline *p, bool final);

/* Whether @p builds the profile @kind (cpu always; the others with opts.offcpu). */
bool taproot_pipeline_has(const struct taproot_pipeline *p, enum taproot_profile_kind kind);

/* Samples added to the profile @kind since the last reset (0 if not built). */
uint64_t taproot_pipeline_adds(const struct taproot_pipeline *p, enum taproot_profile_kind kind);

/*
 * Write the profile @kind as taproot_pipeline_write() does the CPU one.
 * Errors: -ENOENT (@p does not build it), as taproot_pprof_write_file().
 */
int taproot_pipeline_write_kind(struct taproot_pipeline *p, enum taproot_profile_kind kind,
				const char *path);

#endif /* TAPROOT_PIPELINE_H */
