// SPDX-License-Identifier: GPL-2.0
/*
 * What record and report write alike: the output directory and its
 * private files, and the summary of a session's profiles, plain or JSON.
 * Below both commands, so that neither calls into the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

/*
 * The summary's figures as JSON members of the open object @j: the
 * session's (@si) and the pipeline's. Shared with report (taprootctl.h).
 */
void summary_json(struct taproot_json *j, const struct taproot_pipeline *pl,
		  const struct summary_info *si)
{
	struct taproot_pipeline_top top[TOP_N];
	size_t ntop = taproot_pipeline_top(pl, top, TOP_N);
	struct taproot_pipeline_stats st;
	unsigned int e;

	summary_stats(pl, si, &st);
	taproot_json_key(j, "output");
	taproot_json_string(j, si->path);
	taproot_json_key(j, "duration_s");
	taproot_json_u64(j, (uint64_t)(si->secs * 1000 + 0.5) / 1000);
	taproot_json_key(j, "duration_ms");
	taproot_json_u64(j, (uint64_t)(si->secs * 1000 + 0.5));
	taproot_json_key(j, "freq");
	taproot_json_u64(j, si->freq);
	taproot_json_key(j, "samples");
	taproot_json_u64(j, st.samples);
	taproot_json_key(j, "lost");
	taproot_json_u64(j, si->lost);
	taproot_json_key(j, "corrupt");
	taproot_json_u64(j, si->corrupt);
	taproot_json_key(j, "dropped");
	taproot_json_u64(j, st.dropped);
	taproot_json_key(j, "kernel_only");
	taproot_json_u64(j, st.kernel_only);
	taproot_json_key(j, "user_stale");
	taproot_json_u64(j, st.user_stale);
	taproot_json_key(j, "user_stacks");
	taproot_json_u64(j, st.user_stacks);
	taproot_json_key(j, "unwind");
	taproot_json_object_begin(j);
	for (e = 0; e < TAPROOT_UNWIND_NR_ENDS; e++) {
		taproot_json_key(j, taproot_unwind_end_name(e));
		taproot_json_u64(j, st.unwind[e]);
	}
	taproot_json_object_end(j);
	taproot_json_key(j, "unwind_at_entry");
	taproot_json_u64(j, st.unwind_at_entry);
	taproot_json_key(j, "unwind_complete_permille");
	taproot_json_u64(j, (uint64_t)(taproot_pipeline_unwind_rate(&st) * 1000 + 0.5));
	taproot_json_key(j, "proc_unknown");
	taproot_json_u64(j, st.proc_unknown);
	taproot_json_key(j, "frames");
	taproot_json_u64(j, st.frames);
	taproot_json_key(j, "frames_unsymbolized");
	taproot_json_u64(j, st.frames_unsymbolized);
	taproot_json_key(j, "stacks");
	taproot_json_u64(j, st.stacks);
	taproot_json_key(j, "folded");
	taproot_json_u64(j, st.folded);
	taproot_json_key(j, "proc_events");
	taproot_json_u64(j, st.proc_events);
	if (si->offcpu) {
		const struct taproot_causal_stats *c = &st.causal;

		taproot_json_key(j, "offcpu");
		taproot_json_object_begin(j);
		taproot_json_key(j, "sched_one_in");
		taproot_json_u64(j, si->sched_one_in);
		taproot_json_key(j, "min_block_us");
		taproot_json_u64(j, si->min_block_ns / 1000);
		taproot_json_key(j, "switch_outs");
		taproot_json_u64(j, c->switch_outs);
		taproot_json_key(j, "wakings");
		taproot_json_u64(j, c->wakings);
		taproot_json_key(j, "switch_ins");
		taproot_json_u64(j, c->switch_ins);
		taproot_json_key(j, "joined");
		taproot_json_u64(j, c->joined);
		taproot_json_key(j, "woken");
		taproot_json_u64(j, c->woken);
		taproot_json_key(j, "preempted");
		taproot_json_u64(j, c->preempted);
		taproot_json_key(j, "new_tasks");
		taproot_json_u64(j, c->new_tasks);
		taproot_json_key(j, "filtered");
		taproot_json_u64(j, c->filtered);
		taproot_json_key(j, "unpaired_no_in");
		taproot_json_u64(j, c->unpaired_no_in);
		taproot_json_key(j, "unpaired_no_out");
		taproot_json_u64(j, c->unpaired_no_out);
		taproot_json_key(j, "duplicates");
		taproot_json_u64(j, c->duplicates);
		taproot_json_key(j, "wakings_outside");
		taproot_json_u64(j, c->wakings_outside);
		taproot_json_key(j, "table_full");
		taproot_json_u64(j, c->table_full);
		taproot_json_key(j, "bad_records");
		taproot_json_u64(j, c->bad_records);
		taproot_json_key(j, "blocked_ns");
		taproot_json_u64(j, c->blocked_ns);
		taproot_json_key(j, "wait_ns");
		taproot_json_u64(j, c->wait_ns);
		taproot_json_key(j, "runqueue_ns");
		taproot_json_u64(j, c->runqueue_ns);
		taproot_json_object_end(j);
	}
	taproot_json_key(j, "top");
	taproot_json_array_begin(j);
	for (size_t i = 0; i < ntop; i++) {
		taproot_json_object_begin(j);
		taproot_json_key(j, "function");
		taproot_json_string(j, top[i].name);
		taproot_json_key(j, "samples");
		taproot_json_u64(j, top[i].samples);
		taproot_json_object_end(j);
	}
	taproot_json_array_end(j);
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
	if (st.proc_unknown)
		printf("  %-10s%" PRIu64 " samples of processes that could not be read\n",
		       "unknown:", st.proc_unknown);
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
