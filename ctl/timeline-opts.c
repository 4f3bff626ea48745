// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline options record and report share: --trace FILE,
 * --trace-window S, --trace-pid PID, --critical-path; the timeline they
 * make the pipeline keep (lib/profile/timeline.h), the files written from
 * it and their lines of the summary. Below both commands, beside summary.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taprootctl.h"

/* --trace-pid PID: a process of the timeline. */
static int add_pid(const char *cmd, struct timeline_opts *t, const char *val)
{
	uint32_t pid;
	int ret = parse_u32_arg(cmd, "--trace-pid", val, 1, INT32_MAX, &pid);

	if (ret != EXIT_OK)
		return ret;
	if (t->nr_pids == TAPROOT_TIMELINE_MAX_PIDS)
		return p_usage("'%s --trace-pid': at most %d processes", cmd,
			       TAPROOT_TIMELINE_MAX_PIDS);
	t->pids[t->nr_pids++] = pid;
	return EXIT_OK;
}

int timeline_opts_set(const char *cmd, const char *name, const char *val,
		      struct timeline_opts *t)
{
	if (!strcmp(name, "--trace")) {
		t->trace = val;
		return EXIT_OK;
	}
	if (!strcmp(name, "--trace-window"))
		return parse_seconds_arg(cmd, name, val, &t->window);
	if (!strcmp(name, "--trace-pid"))
		return add_pid(cmd, t, val);
	if (strcmp(name, "--critical-path"))
		return -ENOENT;
	t->critical = val;
	if (val[0] < '0' || val[0] > '9')
		return EXIT_OK;
	return parse_u32_arg(cmd, name, val, 1, INT32_MAX, &t->critical_tid);
}

bool timeline_opts_wanted(const struct timeline_opts *t)
{
	return t->trace || t->critical;
}

int timeline_opts_check(const char *cmd, const struct timeline_opts *t)
{
	if ((t->window || t->nr_pids) && !timeline_opts_wanted(t))
		return p_usage("'%s': --trace-window and --trace-pid go with --trace or "
			       "--critical-path", cmd);
	return EXIT_OK;
}

int timeline_opts_start(struct timeline_opts *t)
{
	struct taproot_timeline_opts to = {
		.window_ns = (uint64_t)(t->window * 1e9),
		.pids = t->pids, .nr_pids = t->nr_pids,
	};
	int err;

	if (!timeline_opts_wanted(t))
		return EXIT_OK;
	err = taproot_timeline_new(&to, &t->timeline);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	return EXIT_OK;
}

/* The threads of the critical path: t->tids. */
static int find_targets(const char *cmd, struct timeline_opts *t, uint32_t command_tid)
{
	if (t->critical_tid) {
		t->tids[0] = t->critical_tid;
		t->nr_tids = 1;
	} else if (command_tid && !strcmp(t->critical, "command")) {
		t->tids[0] = command_tid;
		t->nr_tids = 1;
	} else {
		t->nr_tids = taproot_timeline_targets(t->timeline, t->critical, t->tids,
						      TIMELINE_OPTS_MAX_TARGETS);
	}
	if (!t->nr_tids)
		return p_err("'%s --critical-path %s': no process of that name in the timeline",
			     cmd, t->critical);
	return EXIT_OK;
}

int timeline_opts_write(const char *cmd, struct timeline_opts *t, const char *dir,
			uint32_t command_tid, const char *comment)
{
	const char *comments[1] = { comment };
	char *path = NULL;
	int ret = EXIT_OK, err;

	if (t->trace) {
		err = taproot_timeline_write_trace_file(t->timeline, t->trace);
		if (err < 0)
			ret = p_err("writing %s: %s", t->trace, taproot_errmsg(err));
	}
	if (!t->critical)
		return ret;
	if (find_targets(cmd, t, command_tid) != EXIT_OK)
		return EXIT_ERR;
	if (asprintf(&path, "%s/critpath.pb.gz", dir) < 0)
		return p_err("out of memory");
	err = taproot_timeline_write_critpath(t->timeline, t->tids, t->nr_tids, path, comments, 1,
					      &t->critpath);
	if (err < 0)
		ret = p_err("--critical-path %s: %s", t->critical, taproot_errmsg(err));
	t->critpath_written = err == 0;
	free(path);
	return ret;
}

/* Percent of @part in @whole. */
static double pct_of(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

void timeline_opts_print(const struct timeline_opts *t, const char *dir)
{
	const struct taproot_critpath_stats *c = &t->critpath;
	struct taproot_timeline_stats st;
	char whose[64];

	if (!t->timeline)
		return;
	taproot_timeline_stats(t->timeline, &st);
	if (t->trace)
		printf("  %-10s%s: %" PRIu64 " intervals, %" PRIu64 " samples, %.3f s "
		       "(Perfetto, chrome://tracing)\n", "trace:", t->trace, st.intervals,
		       st.samples, (double)(st.last_ns - st.start_ns) / 1e9);
	if (st.dropped_full || st.no_stack)
		printf("  %-10s%" PRIu64 " oldest events dropped, %" PRIu64
		       " without their stack: the timeline's bounds\n", "", st.dropped_full,
		       st.no_stack);
	if (!t->critpath_written)
		return;
	if (t->nr_tids == 1)
		snprintf(whose, sizeof(whose), "thread %" PRIu32, t->tids[0]);
	else
		snprintf(whose, sizeof(whose), "%zu threads", t->nr_tids);
	printf("  %-10s%s/critpath.pb.gz: %.3f s of %s over %" PRIu64 " threads: running "
	       "%.1f%%, run queue %.1f%%, timers %.1f%%, interrupts %.1f%%, unknown %.1f%%%s\n",
	       "critical:", dir, (double)c->total_ns / 1e9, whose, c->threads,
	       pct_of(c->running_ns, c->total_ns), pct_of(c->runqueue_ns, c->total_ns),
	       pct_of(c->timer_ns, c->total_ns), pct_of(c->irq_ns, c->total_ns),
	       pct_of(c->unknown_ns, c->total_ns), c->truncated ? " (walk cut short)" : "");
}

void timeline_opts_json(struct taproot_json *j, const struct timeline_opts *t)
{
	const struct taproot_critpath_stats *c = &t->critpath;

	if (!t->critpath_written)
		return;
	taproot_json_key(j, "critical_path");
	taproot_json_object_begin(j);
	taproot_json_key(j, "tids");
	taproot_json_array_begin(j);
	for (size_t i = 0; i < t->nr_tids; i++)
		taproot_json_u64(j, t->tids[i]);
	taproot_json_array_end(j);
	taproot_json_key_u64(j, "total_ns", c->total_ns);
	taproot_json_key_u64(j, "running_ns", c->running_ns);
	taproot_json_key_u64(j, "runqueue_ns", c->runqueue_ns);
	taproot_json_key_u64(j, "timer_ns", c->timer_ns);
	taproot_json_key_u64(j, "irq_ns", c->irq_ns);
	taproot_json_key_u64(j, "unknown_ns", c->unknown_ns);
	taproot_json_key_u64(j, "threads", c->threads);
	taproot_json_key(j, "truncated");
	taproot_json_bool(j, c->truncated);
	taproot_json_object_end(j);
}

void timeline_opts_free(struct timeline_opts *t)
{
	taproot_timeline_free(t->timeline);
	t->timeline = NULL;
}
