// SPDX-License-Identifier: GPL-2.0
/*
 * What record and report write alike: the output directory and its
 * private files, and the summary of a session's profiles, plain or JSON.
 * Below both commands, so that neither calls into the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/taproot.h>

#include "taprootctl.h"

#define TOP_N	10	/* functions in the summary's top list */

/* ------------------------------------------------------------ files */

/* mkdir -p @dir, the last component mode 0700 (taprootctl.h). */
int make_output_dir(const char *dir)
{
	char *p = strdup(dir), *s;
	struct stat st;
	int ret = 0;

	if (!p)
		return -ENOMEM;
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			ret = -errno;
			break;
		}
		*s = '/';
	}
	if (!ret && mkdir(p, 0700) < 0 && errno != EEXIST)
		ret = -errno;
	if (!ret && (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)))
		ret = -ENOTDIR;
	free(p);
	return ret;
}

FILE *fopen_private(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

/* ------------------------------------------------------------ summary */

static void summary_stats(const struct taproot_pipeline *pl, const struct summary_info *si,
			  struct taproot_pipeline_stats *st)
{
	if (si->st)
		*st = *si->st;
	else
		taproot_pipeline_stats(pl, st);
}

/* The off-CPU counters of the summary, in its order. */
static const struct {
	const char *name;
	size_t off;			/* in struct taproot_causal_stats */
} causal_fields[] = {
#define CAUSAL(f) { #f, offsetof(struct taproot_causal_stats, f) }
	CAUSAL(switch_outs), CAUSAL(wakings), CAUSAL(switch_ins), CAUSAL(joined),
	CAUSAL(woken), CAUSAL(preempted), CAUSAL(new_tasks), CAUSAL(filtered),
	CAUSAL(unpaired_no_in), CAUSAL(unpaired_no_out), CAUSAL(duplicates),
	CAUSAL(wakings_outside), CAUSAL(table_full), CAUSAL(bad_records), CAUSAL(blocked_ns),
	CAUSAL(wait_ns), CAUSAL(runqueue_ns),
#undef CAUSAL
};

static void json_offcpu(struct taproot_json *j, const struct taproot_causal_stats *c,
			const struct summary_info *si)
{
	taproot_json_key(j, "offcpu");
	taproot_json_object_begin(j);
	taproot_json_key_u64(j, "sched_one_in", si->sched_one_in);
	taproot_json_key_u64(j, "min_block_us", si->min_block_ns / 1000);
	for (size_t i = 0; i < sizeof(causal_fields) / sizeof(causal_fields[0]); i++)
		taproot_json_key_u64(j, causal_fields[i].name,
				     *(const uint64_t *)((const char *)c + causal_fields[i].off));
	taproot_json_object_end(j);
}

static void json_unwind(struct taproot_json *j, const struct taproot_pipeline_stats *st)
{
	taproot_json_key(j, "unwind");
	taproot_json_object_begin(j);
	for (unsigned int e = 0; e < TAPROOT_UNWIND_NR_ENDS; e++)
		taproot_json_key_u64(j, taproot_unwind_end_name(e), st->unwind[e]);
	taproot_json_object_end(j);
	taproot_json_key_u64(j, "unwind_at_entry", st->unwind_at_entry);
	taproot_json_key_u64(j, "unwind_complete_permille",
			     (uint64_t)(taproot_pipeline_unwind_rate(st) * 1000 + 0.5));
}

/* The uploads to the module's unwinder (lib/pipeline/ktables.h), in its order. */
static void json_kupload(struct taproot_json *j, const struct taproot_kupload_stats *k)
{
	taproot_json_key(j, "kernel_uploads");
	taproot_json_object_begin(j);
#define X(field) taproot_json_key_u64(j, #field, k->field);
	TAPROOT_KUPLOAD_FIELDS(X)
#undef X
	taproot_json_object_end(j);
}

/*
 * The module's walks by how they ended (every end, "none": not walked),
 * its interned stacks, and the VERIFY comparison as counts, exact.
 */
static void json_kunwind(struct taproot_json *j, const struct taproot_pipeline_stats *st)
{
	taproot_json_key(j, "kunwind");
	taproot_json_object_begin(j);
	for (unsigned int e = 0; e < TAPROOT_KUNWIND_NR; e++)
		taproot_json_key_u64(j, taproot_kunwind_name(e), st->kunwind[e]);
	taproot_json_object_end(j);
	taproot_json_key_u64(j, "kunwind_continued", st->kunwind_continued);
	taproot_json_key_u64(j, "causal_upcs", st->causal_upcs);
	taproot_json_key_u64(j, "stack_records", st->stack_records);
	taproot_json_key_u64(j, "stack_refs", st->stack_refs);
	taproot_json_key_u64(j, "stack_refs_unresolved", st->stack_refs_unresolved);
	taproot_json_key_u64(j, "counts", st->counts);
	taproot_json_key_u64(j, "counted_samples", st->counted_samples);
	taproot_json_key_u64(j, "counted_unresolved", st->counted_unresolved);
	taproot_json_key_u64(j, "counts_corrupt", st->counts_corrupt);
	taproot_json_key_u64(j, "resolved_stacks", st->resolved_stacks);
	taproot_json_key_u64(j, "resolved_samples", st->resolved_samples);
	taproot_json_key_u64(j, "resolved_over_budget", st->resolved_over_budget);
	taproot_json_key(j, "verify");
	taproot_json_object_begin(j);
	taproot_json_key_u64(j, "samples", st->verify_samples);
	taproot_json_key_u64(j, "identical", st->verify_identical);
	taproot_json_key_u64(j, "differing", st->verify_differing);
	taproot_json_object_end(j);
}

static void json_top(struct taproot_json *j, const struct taproot_pipeline *pl)
{
	struct taproot_pipeline_top top[TOP_N];
	size_t ntop = taproot_pipeline_top(pl, top, TOP_N);

	taproot_json_key(j, "top");
	taproot_json_array_begin(j);
	for (size_t i = 0; i < ntop; i++) {
		taproot_json_object_begin(j);
		taproot_json_key_string(j, "function", top[i].name);
		taproot_json_key_u64(j, "samples", top[i].samples);
		taproot_json_object_end(j);
	}
	taproot_json_array_end(j);
}

/*
 * The summary's figures as JSON members of the open object @j: the
 * session's (@si) and the pipeline's. Shared with report (taprootctl.h).
 */
void summary_json(struct taproot_json *j, const struct taproot_pipeline *pl,
		  const struct summary_info *si)
{
	struct taproot_pipeline_stats st;
	uint64_t ms = (uint64_t)(si->secs * 1000 + 0.5);

	summary_stats(pl, si, &st);
	taproot_json_key_string(j, "output", si->path);
	taproot_json_key_u64(j, "duration_s", ms / 1000);
	taproot_json_key_u64(j, "duration_ms", ms);
	taproot_json_key_u64(j, "freq", si->freq);
	taproot_json_key_u64(j, "samples", st.samples);
	taproot_json_key_u64(j, "lost", si->lost);
	taproot_json_key_u64(j, "corrupt", si->corrupt);
	taproot_json_key_u64(j, "dropped", st.dropped);
	taproot_json_key_u64(j, "kernel_only", st.kernel_only);
	taproot_json_key_u64(j, "user_stale", st.user_stale);
	taproot_json_key_u64(j, "user_stacks", st.user_stacks);
	json_unwind(j, &st);
	json_kunwind(j, &st);
	taproot_json_key_u64(j, "proc_unknown", st.proc_unknown);
	taproot_json_key_u64(j, "frames", st.frames);
	taproot_json_key_u64(j, "frames_unsymbolized", st.frames_unsymbolized);
	taproot_json_key_u64(j, "jit_named_late", st.jit_named_late);
	taproot_json_key_u64(j, "jit_pending_dropped", st.jit_pending_dropped);
	taproot_json_key_u64(j, "python_frames", st.python_frames);
	taproot_json_key_u64(j, "python_frames_gone", st.python_frames_gone);
	taproot_json_key_u64(j, "python_frames_unplaced", st.python_frames_unplaced);
	taproot_json_key_u64(j, "java_frames_kernel", st.java_frames_kernel);
	taproot_json_key_u64(j, "stacks", st.stacks);
	taproot_json_key_u64(j, "folded", st.folded);
	taproot_json_key_u64(j, "proc_events", st.proc_events);
	if (si->offcpu)
		json_offcpu(j, &st.causal, si);
	json_kupload(j, &st.kupload);
	json_top(j, pl);
}

/*
 * "kernel:": the walks the module made, the share that ended well (an
 * interned stack: complete or max-frames), every end met, and the
 * references whose stack was not known. Nothing without walks.
 */
static void print_kunwind(const struct taproot_pipeline_stats *st)
{
	uint64_t walks = kunwind_walks(st->kunwind),
		 good = st->kunwind[TAPROOT_KUNWIND_COMPLETE] +
			st->kunwind[TAPROOT_KUNWIND_MAX_FRAMES];

	if (!walks && !st->stack_refs)
		return;
	printf("  %-10s%.1f%% of %" PRIu64 " walks in the module ended well (", "kernel:",
	       walks ? 100.0 * (double)good / (double)walks : 0, walks);
	print_kunwind_ends(st->kunwind);
	printf(")");
	if (st->stack_refs_unresolved)
		printf("; %" PRIu64 " of %" PRIu64 " stack refs unresolved, dropped",
		       st->stack_refs_unresolved, st->stack_refs);
	printf("\n");
	if (st->counts)
		printf("  %-10s%" PRIu64 " samples counted in the module, in %" PRIu64
		       " counts of a stack and thread; %" PRIu64 " unresolved, dropped\n",
		       "counted:", st->counted_samples, st->counts, st->counted_unresolved);
}

/* "verify:": how many of the module's walks the unwinder found the same. */
static void print_verify(const struct taproot_pipeline_stats *st)
{
	uint64_t compared = st->verify_identical + st->verify_differing;

	if (!st->verify_samples)
		return;
	printf("  %-10s%.2f%% identical (%" PRIu64 " of %" PRIu64 " compared; %" PRIu64
	       " differing, %" PRIu64 " not compared)\n", "verify:",
	       100.0 * taproot_pipeline_verify_rate(st), st->verify_identical, compared,
	       st->verify_differing, st->verify_samples - compared);
}

void summary_print_head(const struct taproot_pipeline *pl, const struct summary_info *si)
{
	struct taproot_pipeline_stats st;
	unsigned int e;
	bool any = false;

	summary_stats(pl, si, &st);
	if (si->cpu)
		printf("taprootctl %s: wrote %s: %" PRIu64 " samples in %.1f s at %" PRIu32
		       " Hz\n", si->cmd, si->path, st.samples, si->secs, si->freq);
	else
		printf("taprootctl %s: %.1f s of off-CPU events\n", si->cmd, si->secs);
	if (si->offcpu) {
		const struct taproot_causal_stats *c = &st.causal;

		printf("  %-10s%s/{offcpu,offwake,schedlat}.pb.gz: %" PRIu64 " intervals joined "
		       "(one in %" PRIu32 " selected), %.3f s blocked, %.3f s until woken, "
		       "%.3f s run-queue delay (scaled)\n", "off-cpu:", si->output, c->joined,
		       si->sched_one_in, (double)c->blocked_ns / 1e9, (double)c->wait_ns / 1e9,
		       (double)c->runqueue_ns / 1e9);
		printf("  %-10s%" PRIu64 " without switch-in, %" PRIu64 " without switch-out, %"
		       PRIu64 " dropped (table full), %" PRIu64 " wakings outside their interval%s\n",
		       "unpaired:", c->unpaired_no_in, c->unpaired_no_out, c->table_full,
		       c->wakings_outside,
		       si->lost ? " (records were lost: their intervals stay unpaired)" : "");
		if (c->filtered)
			printf("  %-10s%" PRIu64 " intervals shorter than --min-block left out\n",
			       "filtered:", c->filtered);
	}
	printf("  %-10s%" PRIu64 "%s\n", "lost:", si->lost,
	       si->lost ? " (the rings were full: try a lower --freq or more --ring-pages)" : "");
	printf("  %-10s", "unwind:");
	if (!st.user_stacks) {
		printf("no user stacks\n");
	} else {
		printf("%.1f%% complete (%" PRIu64 " of %" PRIu64 " user stacks",
		       100.0 * taproot_pipeline_unwind_rate(&st),
		       st.unwind[TAPROOT_UNWIND_COMPLETE], st.user_stacks);
		for (e = 1; e < TAPROOT_UNWIND_NR_ENDS; e++) {
			if (!st.unwind[e])
				continue;
			printf("%s %s %" PRIu64, any ? "," : ";", taproot_unwind_end_name(e),
			       st.unwind[e]);
			any = true;
		}
		printf(")\n");
	}
	print_kunwind(&st);
	print_verify(&st);
	if (st.proc_unknown)
		printf("  %-10s%" PRIu64 " samples of processes that could not be read\n",
		       "unknown:", st.proc_unknown);
	if (st.kupload.maps_uploaded || st.kupload.errors)
		printf("  %-10s%" PRIu64 " tables (%" PRIu64 " KiB) and %" PRIu64 " process "
		       "mapping sets for the module's unwinder; %" PRIu64 " refused for room, %"
		       PRIu64 " errors\n", "uploads:", st.kupload.tables_uploaded,
		       st.kupload.table_bytes >> 10, st.kupload.maps_uploaded,
		       st.kupload.budget_refusals, st.kupload.errors);
	if (st.kupload.python_procs || st.kupload.python_unwalked)
		printf("  %-10s%" PRIu64 " processes' CPython frames walked in the module, %" PRIu64
		       " not (a version other than 3.9, 3.11, 3.13); %" PRIu64 " Python frames, %"
		       PRIu64 " of code objects gone, %" PRIu64 " left out\n", "python:",
		       st.kupload.python_procs, st.kupload.python_unwalked, st.python_frames,
		       st.python_frames_gone, st.python_frames_unplaced);
	if (st.kupload.jvm_procs || st.kupload.jvm_unwalked)
		printf("  %-10s%" PRIu64 " processes' Java frames walked in the module, %" PRIu64
		       " not (a JVM other than OpenJDK 11 to 21); %" PRIu64 " Java frames\n",
		       "java:", st.kupload.jvm_procs, st.kupload.jvm_unwalked,
		       st.java_frames_kernel);
}

void summary_print_tail(const struct taproot_pipeline *pl, const struct summary_info *si)
{
	struct taproot_pipeline_top top[TOP_N];
	size_t ntop = taproot_pipeline_top(pl, top, TOP_N);
	struct taproot_pipeline_stats st;

	summary_stats(pl, si, &st);
	if (ntop) {
		printf("  top functions (self):\n");
		printf("  %8s %6s  %s\n", "samples", "self%", "function");
		for (size_t i = 0; i < ntop; i++)
			printf("  %8" PRIu64 " %5.1f%%  %s\n", top[i].samples,
			       st.samples ? 100.0 * (double)top[i].samples / (double)st.samples : 0,
			       top[i].name);
	}
	if (si->cpu)
		printf("  open it:  pprof -top %s   (or pprof -http=: %s)\n", si->path, si->path);
	if (si->offcpu)
		printf("  off-cpu:  pprof -top %s/offcpu.pb.gz; pprof -traces %s/offwake.pb.gz\n",
		       si->output, si->output);
}
