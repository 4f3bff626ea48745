/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, profiles layer: the profile builder, the pprof and OTLP
 * writers (lib/profile/).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_PROFILE_H
#define TAPROOT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

#include "util/labels.h"

/* ------------------------------------- profiles: builder, pprof writer */
/*
 * (lib/profile/profile.c, lib/profile/pprof.c.) A profile is an in-memory aggregate of
 * samples, independent of where the frames come from: each sample is a
 * stack (frames leaf first), labels and one value per sample type;
 * identical (stack, labels) pairs are merged by summing their values. It
 * is then written as a gzipped perftools.profiles.Profile (pprof) and
 * reset for the next interval.
 */
struct taproot_profile;

/* A pprof ValueType: "samples"/"count", "cpu"/"nanoseconds", ... */
struct taproot_profile_value_type {
	const char *type;
	const char *unit;
};

#define TAPROOT_PROFILE_MAX_VALUES	8
#define TAPROOT_PROFILE_MAX_STACKS	65536	/* default stack-table cap */
#define TAPROOT_PROFILE_MAX_BUILD_ID	64	/* bytes */

/* What a profile holds; the strings are copied by taproot_profile_new(). */
struct taproot_profile_desc {
	const struct taproot_profile_value_type *sample_types;
	size_t nr_sample_types;		/* 1..TAPROOT_PROFILE_MAX_VALUES */
	struct taproot_profile_value_type period_type;	/* {NULL, NULL}: none */
	int64_t period;
	const char *default_sample_type; /* a sample type's type, or NULL */
	const char *const *comments;	/* written in every profile */
	size_t nr_comments;
	int64_t time_nanos;		/* wall clock start, ns since the epoch */
	int64_t duration_nanos;
	/*
	 * Distinct (stack, labels) entries kept per interval; 0 means
	 * TAPROOT_PROFILE_MAX_STACKS. Once full, a sample whose entry does
	 * not exist yet is added to one "[truncated: stack table full]"
	 * sample (no labels) instead, and counted (stats.folded; the written
	 * profile says so in a comment). Memory is bounded by it: frames,
	 * functions, mappings and strings are only kept for entries kept.
	 */
	size_t max_stacks;
};

/*
 * Fill @desc for a CPU profile sampled at @hz per CPU: sample types
 * samples/count and cpu/nanoseconds (default "cpu"), period type
 * cpu/nanoseconds, period 1e9 / @hz. Other fields are zeroed. Add values
 * {1, period} per sample.
 */
void taproot_profile_desc_cpu(struct taproot_profile_desc *desc, uint32_t hz);

/*
 * The profiles of off-CPU intervals (lib/profile/causal.c), each with two sample
 * types, the time first and the default, then a count, and no period:
 *  - offcpu:   off_cpu/nanoseconds, switches/count (blocked time);
 *  - offwake:  off_cpu/nanoseconds, switches/count (blocked time until
 *              the wakeup, over the waker's stack, "--", the blocked one);
 *  - schedlat: runqueue/nanoseconds, switches/count (woken or preempted
 *              until running again).
 * Other fields are zeroed.
 */
void taproot_profile_desc_offcpu(struct taproot_profile_desc *desc);
void taproot_profile_desc_offwake(struct taproot_profile_desc *desc);
void taproot_profile_desc_schedlat(struct taproot_profile_desc *desc);

/*
 * One frame of a stack, as the profile takes it. Frames go leaf first.
 *
 * A location is one frame, or an inline chain: a frame with @inlined set
 * is inlined into the next frame of the array, and the run ending with
 * the first frame without @inlined is one pprof location whose lines are
 * those frames, innermost first; its address and mapping are the last
 * frame's (the others' are ignored).
 *
 * The mapping is named by @mapping_path (NULL: the frame has none), with
 * the range and file offset of /proc/PID/maps; mappings are told apart by
 * path, build ID and range, and IDs go in the order first seen (pprof's
 * "File:" header names mapping 1). A kernel frame (@is_kernel) without
 * @mapping_path gets "[kernel.kallsyms]" (range as given, 0-0 is fine);
 * a module frame passes "[MODULE]". A marker frame ("[unknown]",
 * "[truncated]", the off-wake separator "--") has just a @function: no
 * mapping, address 0. @function NULL (or "") leaves the location
 * unsymbolized, an address in its mapping, and the mapping then says
 * has_functions false; pass NULL rather than a placeholder name for a pc
 * the symbolizer did not know, so the flags stay true. @system_name NULL
 * means the same as @function. NULL strings and 0 numbers are "unknown".
 * Every string is borrowed for the call only.
 */
struct taproot_profile_frame {
	const char *function;
	const char *system_name;
	const char *file;
	int64_t line;
	const char *mapping_path;
	const uint8_t *build_id;	/* written in hex; NULL: none */
	size_t build_id_len;		/* at most TAPROOT_PROFILE_MAX_BUILD_ID */
	uint64_t mapping_start, mapping_limit, mapping_offset;
	uint64_t address;
	bool is_kernel;
	bool inlined;
	/*
	 * Optional, on the last frame of a location (the one not inlined):
	 * a value (a pointer or a serial number, not NULL) the caller
	 * guarantees stands for this location's frames until it calls
	 * taproot_profile_forget_keys(). The profile then
	 * remembers the location it made of them under that key and skips
	 * hashing their strings the next time (a direct-mapped memo).
	 */
	const void *key;
};

/*
 * A sample label: a string label when @str is not NULL, else a numeric
 * one (@num, with the optional @unit). Labels are compared in the order
 * given: pass them in a fixed order. A string label whose @str is "" is
 * left out (pprof would read it as the number 0).
 */
struct taproot_profile_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *unit;
};

#define TAPROOT_LABEL_STR(k, s)	((struct taproot_profile_label){ .key = (k), .str = (s) })
#define TAPROOT_LABEL_NUM(k, n)	((struct taproot_profile_label){ .key = (k), .num = (n) })

/* What a profile holds now (since the last reset). */
struct taproot_profile_stats {
	uint64_t adds;			/* taproot_profile_add() calls that succeeded */
	uint64_t folded;		/* of them, folded into the truncated sample */
	size_t stacks;			/* distinct (stack, labels) entries */
	size_t max_stacks;
	size_t locations, functions, mappings, strings;
	size_t bytes;			/* memory held by the profile */
};

/*
 * A new, empty profile described by @desc. Errors: -EINVAL (no sample
 * types or too many, a NULL type or unit, a default_sample_type that is
 * not one of them), -ENOMEM. *@pp is NULL on error.
 */
int taproot_profile_new(const struct taproot_profile_desc *desc,
			struct taproot_profile **pp);

/* Free @p (NULL is allowed). */
void taproot_profile_free(struct taproot_profile *p);

/*
 * Late names, for code a JIT named after its samples were added (its perf
 * map written at exit): the location added for frame @unnamed (one with
 * no function: its mapping and address) becomes that of @named, @nr
 * frames innermost first as taproot_profile_add() takes them, its mapping
 * and address included. Every sample of it has the name from then on, and
 * the frames of @named added later find that location. Returns 1 when
 * named, 0 when @p holds no such unnamed location, -EINVAL (@unnamed has
 * a function, or @named no physical frame last), -ENOMEM.
 */
int taproot_profile_name_location(struct taproot_profile *p,
				  const struct taproot_profile_frame *unnamed,
				  const struct taproot_profile_frame *named, size_t nr);

/* The frames' keys given so far (taproot_profile_frame.key) may be reused. */
void taproot_profile_forget_keys(struct taproot_profile *p);

/*
 * Add a sample: the stack @frames (@nr frames, leaf first), @nlabels
 * @labels and @values (one per sample type). When the same stack with the
 * same labels was added since the last reset, the values are added to it;
 * that path allocates nothing. Hashing and lookups cost O(@nr + @nlabels)
 * plus the strings' lengths. Errors: -EINVAL (the last frame has
 * @inlined set, a frame of an inline chain without @function, a label
 * without a key, a build ID longer than TAPROOT_PROFILE_MAX_BUILD_ID),
 * -ENOMEM; the sample is then not counted, the profile stays valid.
 */
int taproot_profile_add(struct taproot_profile *p,
			const struct taproot_profile_frame *frames, size_t nr,
			const struct taproot_profile_label *labels, size_t nlabels,
			const int64_t *values);

/* The time and duration the next write reports. */
void taproot_profile_set_time(struct taproot_profile *p, int64_t time_nanos,
			      int64_t duration_nanos);

/*
 * Empty @p for the next interval starting at @time_nanos (duration 0);
 * the desc is kept, and so is the memory, for reuse.
 */
void taproot_profile_reset(struct taproot_profile *p, int64_t time_nanos);

void taproot_profile_stats(const struct taproot_profile *p,
			   struct taproot_profile_stats *st);

/*
 * Serialize @p as a perftools.profiles.Profile message, gzipped when
 * @gzip. On success *@buf (malloc'ed, caller frees) holds *@len bytes.
 * Errors: -ENOMEM, -EOVERFLOW.
 */
int taproot_pprof_encode(const struct taproot_profile *p, bool gzip,
			 void **buf, size_t *len);

/*
 * Serialize, as taproot_pprof_encode() does, the part of @p whose samples
 * have the string label @key = @value: those samples only, and only the
 * locations, functions, mappings and strings they use, renumbered (a
 * valid profile on its own; the truncated sample, which has no labels, is
 * in no part). Returns the samples written, 0 (and *@buf NULL) for none,
 * or an error as taproot_pprof_encode().
 */
long taproot_pprof_encode_part(const struct taproot_profile *p, const char *key,
			       const char *value, bool gzip, void **buf, size_t *len);

/*
 * The distinct values of the string label @key over the samples of @p,
 * in the order first seen, into @values (at most @max; the strings are
 * the profile's, valid until it is reset or freed). Returns how many
 * there are (more than @max: only @max were stored), or -ENOMEM.
 */
long taproot_profile_label_values(const struct taproot_profile *p, const char *key,
				  const char **values, size_t max);

/* The index of the sample type @type ("samples", "cpu"...) in a sample's values, or -ENOENT. */
int taproot_profile_sample_type_index(const struct taproot_profile *p, const char *type);

/*
 * A frame of a sample as taproot_profile_foreach_sample() gives it. @name
 * is the name pprof shows for it: its function's; for a frame without one
 * (a pc the symbolizer did not know), "[FILE]", FILE the base name of its
 * mapping's file (a file named in brackets, "[vdso]" or a module's
 * "[ext4]", as it is); "<unknown>" without either.
 */
struct taproot_profile_frame_view {
	const char *name;
	const char *mapping;		/* its mapping's file; NULL: none */
	uint64_t address;		/* 0: a marker frame ("[unknown]"...) */
	bool inlined;			/* inlined into the next frame */
};

/*
 * Called for each sample with its values (one per sample type, in the
 * desc's order) and its @nr frames, leaf first, an inline chain as one
 * frame per function (pprof's lines, innermost first). Returning non-zero
 * stops the walk.
 */
typedef int (*taproot_profile_sample_fn)(const int64_t *values,
					 const struct taproot_profile_frame_view *frames,
					 size_t nr, void *arg);

/*
 * Call @fn for each sample of @p, read-only: each (stack, labels) entry in
 * the order first added, then the truncated sample if samples were folded
 * into it. Labels are not given: one stack with two sets of labels comes
 * twice. What @fn gets is valid until this call returns (the names are
 * the profile's strings, or made once per mapping for the call). Returns
 * 0, @fn's first non-zero return, or -ENOMEM.
 */
int taproot_profile_foreach_sample(const struct taproot_profile *p, taproot_profile_sample_fn fn,
				   void *arg);

/*
 * The samples of @p as the tree a flame graph draws (lib/profile/flamegraph.c),
 * written to @f as JSON in the form d3-flame-graph reads:
 *
 *   {"n":NAME,"v":VALUE[,"l":"kernel"][,"c":[CHILD,...]]}
 *
 * The root is "all"; a node's children are the frames its frame called
 * (as taproot_profile_foreach_sample() names them), sorted by name, one
 * per name; "l":"kernel" marks a kernel frame (an address in the upper
 * half). VALUE is the sum of the sample type @type ("samples"...) over
 * the samples through the node, its children's values included. Samples
 * whose value is 0 are left out. The text has no '<', '>' or '&' (they are
 * escaped in strings, as are bytes that are not UTF-8, as U+FFFD), so an
 * HTML <script> element can hold it as it is. *@total gets the root's
 * value. Errors: -ENOENT (no sample type @type), -ENOMEM, -EIO (@f failed).
 */
int taproot_flamegraph_json(const struct taproot_profile *p, const char *type, FILE *f,
			    int64_t *total);

/* Write @p, gzipped, to @fd. Errors: as encode, and write(2)'s -errno. */
int taproot_pprof_write_fd(const struct taproot_profile *p, int fd);

/*
 * Write @p, gzipped, to @path atomically: to "@path.tmp.XXXXXX" in the
 * same directory, mode 0600, fsync'ed, then renamed over @path and the
 * directory fsync'ed. @path never holds a partial file. On error
 * (-ENOSPC, -EACCES, ...) the temporary file is removed and @path is
 * untouched, except when only the final fsync of the directory failed:
 * @path then holds the complete new profile, and the error is returned
 * since it may not be durable.
 */
int taproot_pprof_write_file(const struct taproot_profile *p, const char *path);

/*
 * Write the part of @p whose samples have the string label @key = @value
 * (taproot_pprof_encode_part()) to @path as taproot_pprof_write_file()
 * does. Returns the samples written, 0 for none (nothing written), or an
 * error as taproot_pprof_write_file().
 */
long taproot_pprof_write_part_file(const struct taproot_profile *p, const char *key,
				   const char *value, const char *path);

/* ------------------------------------------------- OTLP profiles writer */
/*
 * (lib/profile/otlp.c, whose header tells how labels become attributes and
 * sample types Profiles.) A profile as an OpenTelemetry
 * ExportProfilesServiceRequest of opentelemetry-proto v1.11.0 (package
 * opentelemetry.proto.profiles.v1development), for a collector's OTLP
 * profiles endpoint.
 */

/* The semantic conventions the attribute names follow (schema_url). */
#define TAPROOT_OTLP_SCHEMA_URL	"https://opentelemetry.io/schemas/1.37.0"

/*
 * An attribute of the resource a request describes, named as OpenTelemetry
 * names it ("service.name", "host.name", "os.type", "k8s.pod.name", ...):
 * a string when @str is not NULL, else the integer @num.
 */
struct taproot_otlp_attr {
	const char *key;
	const char *str;
	int64_t num;
};

/*
 * The attribute name the OTLP writer gives the label @label_key: the
 * semantic conventions' name where they have one ("service_name" is
 * "service.name", "pid" "process.pid", "hostname" "host.name", ...), else
 * @label_key itself. For a caller making resource attributes of labels.
 */
const char *taproot_otlp_attr_name(const char *label_key);

/*
 * Serialize @p as an ExportProfilesServiceRequest: one resource with the
 * @nr_resource attributes @resource (copied as they are, in that order),
 * one scope ("taproot", TAPROOT_VERSION), one Profile per sample type of
 * @p, in the desc's order, sharing one dictionary; gzipped when @gzip (for
 * "Content-Encoding: gzip"). On success *@buf (malloc'ed, caller frees)
 * holds *@len bytes. Errors: -EINVAL (an attribute without a key),
 * -ENOMEM, -EOVERFLOW.
 */
int taproot_otlp_encode(const struct taproot_profile *p,
			const struct taproot_otlp_attr *resource, size_t nr_resource,
			bool gzip, void **buf, size_t *len);

/*
 * The same for the part of @p whose samples have the string label @key =
 * @value (taproot_pprof_encode_part()'s part: the truncated sample is in
 * none). The resource is still the caller's: for a part by service_name,
 * pass service.name = @value. Returns the samples written, 0 (and *@buf
 * NULL) for none, or an error as taproot_otlp_encode().
 */
long taproot_otlp_encode_part(const struct taproot_profile *p, const char *key,
			      const char *value, const struct taproot_otlp_attr *resource,
			      size_t nr_resource, bool gzip, void **buf, size_t *len);

/*
 * What a collector's answer @data (@n bytes, an ExportProfilesServiceResponse
 * in protobuf: outside data, read within @n) says it rejected:
 * partial_success's rejected_profiles into *@rejected, its error_message
 * into @msg (cut to @len bytes with its NUL, control and non-ASCII bytes as
 * '?'; "" for none). 0, or -EBADMSG for bytes that are no protobuf message.
 */
int taproot_otlp_read_response(const void *data, size_t n, int64_t *rejected, char *msg,
			       size_t len);

/*
 * taproot_otlp_encode_part(), gzipped, written as taproot_pprof_write_part_file()
 * writes (mode 0600, atomically) to @path: the samples written, 0 (no
 * file) for none, or an error.
 */
long taproot_otlp_write_part_file(const struct taproot_profile *p, const char *key,
				  const char *value, const struct taproot_otlp_attr *resource,
				  size_t nr_resource, const char *path);

/* ------------------------------------------------- the off-CPU join */

/*
 * Counters of the off-CPU join (lib/profile/causal.c), cumulative. Times are in
 * ns, already scaled by each interval's sched_one_in: unbiased estimates
 * of the whole.
 */
struct taproot_causal_stats {
	uint64_t switch_outs;		/* selected intervals started (F_PREV) */
	uint64_t wakings;		/* WAKING records */
	uint64_t switch_ins;		/* selected intervals ended (F_NEXT) */
	uint64_t joined;		/* intervals with both ends: in offcpu */
	uint64_t woken;			/* of them, with their waking: in offwake */
	uint64_t preempted;		/* of them, preempted (R+) */
	uint64_t new_tasks;		/* first wakeups of new tasks (schedlat only) */
	uint64_t filtered;		/* joined but below min_block_ns */
	uint64_t unpaired_no_in;	/* no switch-in: open too long, at the end,
					 * replaced by a reused tid's interval */
	uint64_t unpaired_no_out;	/* a switch-in without switch-out */
	uint64_t duplicates;		/* a second record for the same (tid, seq) end */
	uint64_t wakings_outside;	/* a waking before the switch-out or after the
					 * switch-in of its interval, or whose switch-out
					 * did not come within a round: ignored */
	uint64_t table_full;		/* records dropped: the interval table was full */
	uint64_t bad_records;		/* records or stack snapshots that do not add up */
	uint64_t relabel_dropped;	/* joined intervals, and samples of them, that
					 * the relabel rules dropped */
	uint64_t relabel_skipped;	/* samples kept with a replace skipped */
	uint64_t open;			/* intervals held now */
	uint64_t blocked_ns;		/* off-CPU time of the joined intervals */
	uint64_t wait_ns;		/* of it, until the wakeup (offwake) */
	uint64_t runqueue_ns;		/* run-queue delay (schedlat) */
};

/*
 * The off-CPU selection to ask of the module (TAPROOT_A_CFG_SCHED_ONE_IN)
 * so that at most @budget intervals a second are recorded with their
 * stacks, given @rate intervals a second (the module's "switches"
 * counter): @floor times the smallest power of two that fits, at most
 * TAPROOT_SCHED_ONE_IN_MAX; @floor with @budget 0. From the current
 * value @cur it rises at once but falls only once @rate is a quarter of
 * what @cur allows. Totals stay unbiased across changes (lib/profile/causal.c
 * weighs each interval by the larger value of its two ends).
 */
uint32_t taproot_sched_one_in_adapt(uint32_t cur, uint32_t floor, double rate, uint32_t budget);

/* ------------------------------------------------------------ relabeling */

/*
 * Rules that keep, drop or rewrite samples by their labels, a subset of
 * Prometheus's relabeling (lib/profile/relabel.c has the grammar;
 * docs/profiles-and-labels.md, "Relabel rules"). NULL is the empty list:
 * it keeps every sample as it is.
 */
struct taproot_relabel;

/*
 * Parse the rule @text and append it to *@rules (made on the first call).
 * Errors: -EINVAL (the message says what is wrong), -E2BIG past 64 rules,
 * -ENOMEM; *@rules is then unchanged but for being made.
 */
int taproot_relabel_add(struct taproot_relabel **rules, const char *text);
void taproot_relabel_free(struct taproot_relabel *rules);

/*
 * Whether every rule of @rules reads only labels named in @keys[0..@nr):
 * then the rules can be applied before the other labels are known.
 */
bool taproot_relabel_reads_only(const struct taproot_relabel *rules, const char *const *keys,
				size_t nr);

/*
 * Apply @rules to the @n labels at @l, which has room for @max: labels are
 * removed, set or added in place; values the rules make are written to
 * @scratch (@scratch_len bytes) and valid while it is, the keys of labels
 * they add are @rules' own and valid while @rules is. Returns 1 to keep
 * the sample, 0 to drop it, -ENOSPC to keep it with a replace skipped for
 * want of room (in @l or @scratch).
 */
int taproot_relabel_apply(const struct taproot_relabel *rules, struct taproot_profile_label *l,
			  size_t *n, size_t max, char *scratch, size_t scratch_len);

/*
 * What every sample's labels end with, the same for CPU samples and
 * off-CPU intervals: its process's labels, the static ones, then the
 * rules. Borrowed, all of it, but the scratch for the rules' values.
 */
#define TAPROOT_LABELING_SCRATCH	4096
struct taproot_labeling {
	const struct taproot_relabel *rules;		/* NULL: none */
	const struct taproot_profile_label *statics;
	size_t nr_statics;
	char scratch[TAPROOT_LABELING_SCRATCH];
};

/*
 * Append the labels of @proc (NULL: none) and @lb's static ones to the *@n
 * labels at @l (room for @max), then apply @lb's rules; a result is
 * counted in *@dropped (0) or *@skipped (-ENOSPC). False: the rules drop
 * the sample. Values the rules make are valid until the next call.
 */
bool taproot_labeling_finish(struct taproot_labeling *lb, const struct tp_labels *proc,
			     struct taproot_profile_label *l, size_t *n, size_t max,
			     uint64_t *dropped, uint64_t *skipped);

#endif /* TAPROOT_PROFILE_H */
