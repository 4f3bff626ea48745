// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl report: rebuild the profiles of a recording from its raw
 * capture file (record --raw FILE), on the same host, without the module.
 *
 *   report FILE --output DIR [--repeat N] [--stats-json FILE] [--json]
 *          [--trace FILE [--trace-window S] [--trace-pid PID]...]
 *          [--critical-path TID|NAME] [--flamegraph FILE] [--symbolize local|none]
 *
 * The replay itself is the library's (lib/raw/rawreplay.c: /proc as the
 * recording read it, materialized in a private directory; mapped files
 * from this host matched by build ID); this file runs the passes, times
 * them and prints.
 *
 * --repeat N replays the records N times through the same pipeline (the
 * profiles reset between passes): pass 1 starts cold (unwind tables
 * compiled), later passes find the caches warm. Per pass it reports the
 * samples, user and kernel frames, the time inside taproot_unwind() and
 * inside the pipeline, and the process's CPU time; the profiles written are
 * the last pass's.
 *
 * --trace and --critical-path rebuild the recording's timeline (record's
 * options of the same names; a NAME is every process of that name) from a
 * recording that kept every off-CPU interval; with --repeat, the last
 * pass's.
 *
 * --flamegraph FILE also writes the CPU profile as a flame graph page
 * (ctl/flamegraph.c); with --repeat, the last pass's.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/taproot.h>

#include "flamegraph.h"
#include "taprootctl.h"
#include "util/clock.h"

#define REPORT_REPEAT_MAX	1000

static volatile int report_signal;	/* sig_atomic_t is int: taproot_replay_pass() polls it */

static void report_on_signal(int sig)
{
	report_signal = sig;
}

struct rp_pass {
	uint64_t samples, user_stacks, unwind_frames, kernel_frames;
	uint64_t unwind_ns;		/* inside taproot_unwind() */
	uint64_t pipeline_ns;		/* inside the pipeline's calls */
	uint64_t cpu_ns;		/* the process's CPU time for the pass */
	uint64_t wall_ns;
};

struct report {
	const char *input, *output, *stats_json;
	const char *flamegraph;		/* --flamegraph FILE, NULL: none */
	bool symbolize_none;		/* --symbolize none */
	struct flamegraph_page *page;	/* its template, read before the recording */
	uint32_t repeat;
	struct taproot_replay *rp;
	const struct taproot_replay_info *info;
	struct taproot_pipeline *pl;
	struct rp_pass *passes;
	struct timeline_opts tl;	/* --trace, --critical-path */
	/* After pass 1: the summary's figures are one pass's, as record's. */
	struct taproot_pipeline_stats st1;
};

/* ------------------------------------------------------------ helpers */

static int parse_args(int argc, char **argv, struct report *r)
{
	int ret;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-') {
			if (r->input)
				return p_usage("'report': one FILE only, not also '%s'", a);
			r->input = a;
			continue;
		}
		if (strcmp(a, "--output") && strcmp(a, "-o") && strcmp(a, "--stats-json") &&
		    strcmp(a, "--repeat") && strcmp(a, "--trace") && strcmp(a, "--trace-window") &&
		    strcmp(a, "--trace-pid") && strcmp(a, "--critical-path") &&
		    strcmp(a, "--flamegraph") && strcmp(a, "--symbolize"))
			return p_usage("'report': unknown option '%s'", a);
		if (i + 1 >= argc)
			return p_usage("'report %s' needs a value", a);
		ret = timeline_opts_set("report", a, argv[i + 1], &r->tl);
		if (ret != -ENOENT) {
			if (ret != EXIT_OK)
				return ret;
			i++;
		} else if (!strcmp(a, "--repeat")) {
			ret = parse_u32_arg("report", a, argv[++i], 1, REPORT_REPEAT_MAX,
					    &r->repeat);
			if (ret != EXIT_OK)
				return ret;
		} else if (!strcmp(a, "--stats-json")) {
			r->stats_json = argv[++i];
		} else if (!strcmp(a, "--flamegraph")) {
			r->flamegraph = argv[++i];
		} else if (!strcmp(a, "--symbolize")) {
			ret = parse_symbolize_arg("report", argv[++i], &r->symbolize_none);
			if (ret != EXIT_OK)
				return ret;
		} else {
			r->output = argv[++i];
		}
	}
	if (!r->input)
		return p_usage("'report' needs a FILE (written by 'record --raw FILE')");
	if (!r->output)
		return p_usage("'report' needs --output DIR");
	return timeline_opts_check("report", &r->tl);
}

/*
 * The recording has what the options need: CPU samples for the flame
 * graph, every off-CPU interval for the timeline.
 */
static int check_recording(const struct report *r)
{
	const struct taproot_raw_header *h = &r->info->header;

	if (h->abi_version != TAPROOT_ABI_VERSION)
		return p_err("%s: recorded from a module of ABI version %" PRIu32 ", this "
			     "taprootctl reads version %d records", r->input, h->abi_version,
			     TAPROOT_ABI_VERSION);
	if (r->flamegraph && !h->cpu)
		return p_err("'report --flamegraph' draws the CPU profile: %s was recorded "
			     "without --events cpu", r->input);
	if (!timeline_opts_wanted(&r->tl))
		return EXIT_OK;
	if (!h->offcpu)
		return p_err("'report --trace/--critical-path': %s was recorded without "
			     "--events offcpu: it has no off-CPU intervals", r->input);
	if (h->sched_one_in != 1)
		return p_err("'report --trace/--critical-path': %s kept one off-CPU interval in "
			     "%" PRIu32 " (--sched-one-in): the timeline needs them all",
			     r->input, h->sched_one_in);
	return EXIT_OK;
}

/* ------------------------------------------------------------ replay */

/* One pass over the records: the profiles hold its samples after it. */
static int run_pass(struct report *r, struct rp_pass *ps)
{
	struct taproot_pipeline_stats a, b;
	uint64_t cpu0 = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID), wall0 = tp_clock_ns(CLOCK_MONOTONIC);
	int err;

	taproot_pipeline_stats(r->pl, &a);
	err = taproot_replay_pass(r->rp, r->pl, &ps->pipeline_ns, &report_signal);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	taproot_pipeline_stats(r->pl, &b);
	ps->cpu_ns = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	ps->wall_ns = tp_clock_ns(CLOCK_MONOTONIC) - wall0;
	ps->samples = b.samples - a.samples;
	ps->user_stacks = b.user_stacks - a.user_stacks;
	ps->unwind_frames = b.unwind_frames - a.unwind_frames;
	ps->kernel_frames = b.kernel_frames - a.kernel_frames;
	ps->unwind_ns = b.unwind_ns - a.unwind_ns;
	return EXIT_OK;
}

/* ------------------------------------------------------------ output */

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void pass_json(struct taproot_json *j, const struct rp_pass *ps, uint32_t i)
{
	taproot_json_object_begin(j);
	taproot_json_key_u64(j, "pass", i + 1);
	taproot_json_key_u64(j, "samples", ps->samples);
	taproot_json_key_u64(j, "user_stacks", ps->user_stacks);
	taproot_json_key_u64(j, "user_frames", ps->unwind_frames);
	taproot_json_key_u64(j, "kernel_frames", ps->kernel_frames);
	taproot_json_key_u64(j, "cpu_ns", ps->cpu_ns);
	taproot_json_key_u64(j, "wall_ns", ps->wall_ns);
	taproot_json_key_u64(j, "pipeline_ns", ps->pipeline_ns);
	taproot_json_key_u64(j, "unwind_ns", ps->unwind_ns);
	taproot_json_key_u64(j, "samples_per_s",
				     (uint64_t)(per(ps->samples, ps->pipeline_ns) * 1e9 + 0.5));
	taproot_json_key_u64(j, "unwind_ns_per_frame",
				     (uint64_t)(per(ps->unwind_ns, ps->unwind_frames) + 0.5));
	taproot_json_key_u64(j, "pipeline_ns_per_frame",
				     (uint64_t)(per(ps->pipeline_ns, ps->unwind_frames) + 0.5));
	taproot_json_object_end(j);
}

static void write_json(const struct report *r, FILE *f, const struct summary_info *si)
{
	struct taproot_json *j;

	if (taproot_json_new(f, &j) < 0)
		return;
	taproot_json_object_begin(j);
	taproot_json_key_string(j, "raw", r->input);
	taproot_json_key_string(j, "kernel_release", r->info->header.kernel_release);
	taproot_json_key_u64(j, "records", r->info->records);
	taproot_json_key_u64(j, "files_checked", r->info->files + r->info->files_over);
	taproot_json_key_u64(j, "files_not_recorded_one",
				     r->info->files_other + r->info->files_over);
	taproot_json_key(j, "files_not_recorded_one_paths");
	taproot_json_array_begin(j);
	for (size_t i = 0; i < 4 && r->info->files_other_paths[i]; i++)
		taproot_json_string(j, r->info->files_other_paths[i]);
	taproot_json_array_end(j);
	summary_json(j, r->pl, si);
	timeline_opts_json(j, &r->tl);
	taproot_json_key(j, "passes");
	taproot_json_array_begin(j);
	for (uint32_t i = 0; i < r->repeat; i++)
		pass_json(j, &r->passes[i], i);
	taproot_json_array_end(j);
	taproot_json_object_end(j);
	taproot_json_free(j);
}

static void print_passes(const struct report *r)
{
	printf("  %-10s%" PRIu64 " records; per pass (pipeline: the time inside its calls; "
	       "unwind: inside taproot_unwind()):\n", "replay:", r->info->records);
	printf("  %5s %9s %11s %11s %8s %8s %11s %13s %15s\n", "pass", "samples", "user fr.",
	       "kernel fr.", "cpu s", "wall s", "samples/s", "unwind ns/fr", "pipeline ns/fr");
	for (uint32_t i = 0; i < r->repeat; i++) {
		const struct rp_pass *ps = &r->passes[i];

		printf("  %5" PRIu32 " %9" PRIu64 " %11" PRIu64 " %11" PRIu64 " %8.3f %8.3f %11.0f "
		       "%13.1f %15.1f\n", i + 1, ps->samples, ps->unwind_frames, ps->kernel_frames,
		       (double)ps->cpu_ns / 1e9, (double)ps->wall_ns / 1e9,
		       per(ps->samples, ps->pipeline_ns) * 1e9, per(ps->unwind_ns, ps->unwind_frames),
		       per(ps->pipeline_ns, ps->unwind_frames));
	}
}

static void summary(const struct report *r, const char *path)
{
	const struct taproot_raw_header *h = &r->info->header;
	const struct taproot_replay_info *in = r->info;
	struct summary_info si = {
		.cmd = "report", .output = r->output, .path = path,
		.secs = (double)in->end.duration_ns / 1e9, .freq = h->freq_hz, .cpu = h->cpu,
		.offcpu = h->offcpu, .sched_one_in = h->sched_one_in,
		.min_block_ns = h->min_block_ns, .lost = in->end.lost, .corrupt = in->end.corrupt,
		.st = &r->st1,
	};

	if (r->stats_json) {
		FILE *f = fopen_private(r->stats_json);

		if (!f) {
			fprintf(stderr, "taprootctl: report: %s: %s\n", r->stats_json, strerror(errno));
		} else {
			write_json(r, f, &si);
			if (fclose(f) == EOF)
				fprintf(stderr, "taprootctl: report: %s: %s\n", r->stats_json,
					strerror(errno));
		}
	}
	if (json_output) {
		write_json(r, stdout, &si);
		return;
	}
	summary_print_head(r->pl, &si);
	printf("  %-10s%s, recorded on kernel %s\n", "from:", r->input, h->kernel_release);
	if (in->files_other || in->files_over)
		printf("  %-10s%" PRIu64 " of the %" PRIu64 " mapped files the recording opened: "
		       "the file on this host is not the recorded one (their mappings stay "
		       "unresolved)\n", "files:", (uint64_t)in->files_other + in->files_over,
		       (uint64_t)in->files + in->files_over);
	for (size_t i = 0; i < 4 && in->files_other_paths[i]; i++)
		printf("  %-10s%s\n", "", in->files_other_paths[i]);
	print_passes(r);
	timeline_opts_print(&r->tl, r->output);
	summary_print_tail(r->pl, &si);
}

/*
 * --flamegraph FILE: the CPU profile as a flame graph page. The recording
 * does not say what it profiled: the page names the file, and the host
 * that recorded it.
 */
static int write_flamegraph(struct report *r)
{
	const struct taproot_raw_header *h = &r->info->header;
	const char *base = strrchr(r->input, '/');
	struct flamegraph_desc d = {
		.host = h->hostname, .cmd = "report", .freq_hz = h->freq_hz,
		.secs = (double)r->info->end.duration_ns / 1e9, .start_ns = (int64_t)h->start_ns,
	};
	char what[256];

	snprintf(what, sizeof(what), "recording %s", base ? base + 1 : r->input);
	d.what = what;
	return flamegraph_write(r->flamegraph, r->page,
				taproot_pipeline_profile_of(r->pl, TAPROOT_PROFILE_CPU), &d);
}

static int write_profiles(struct report *r)
{
	int ret = EXIT_OK, err;

	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++) {
		char *path;

		if (k == TAPROOT_PROFILE_CPU ? !r->info->header.cpu : !r->info->header.offcpu)
			continue;
		if (asprintf(&path, "%s/%s.pb.gz", r->output,
			     taproot_profile_kind_name((enum taproot_profile_kind)k)) < 0)
			return p_err("out of memory");
		err = taproot_pipeline_write_kind(r->pl, (enum taproot_profile_kind)k, path);
		if (err < 0)
			ret = p_err("writing %s: %s", path, taproot_errmsg(err));
		free(path);
	}
	if (r->flamegraph) {
		err = write_flamegraph(r);
		if (err < 0)
			ret = p_err("writing %s: %s", r->flamegraph, taproot_errmsg(err));
	}
	return ret;
}

/* ------------------------------------------------------------ report */

int do_report(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = report_on_signal }, old_int, old_term;
	struct report r = { .repeat = 1 };
	struct taproot_pipeline_opts po;
	struct taproot_procs_opts popts;
	const char *comments[1];
	char comment[256], *path = NULL;
	int ret, err;

	ret = parse_json_flag(&argc, argv);
	if (ret == EXIT_OK)
		ret = parse_args(argc, argv, &r);
	if (ret != EXIT_OK)
		return ret;

	/* The page's template, then the whole file, are checked before anything is written. */
	if (r.flamegraph) {
		err = flamegraph_page_load(&r.page);
		if (err < 0)
			return p_err("report --flamegraph: %s", taproot_errmsg(err));
	}
	err = taproot_replay_open(r.input, &r.rp);
	if (err < 0) {
		flamegraph_page_free(r.page);
		return p_err("%s", taproot_errmsg(err));
	}
	/* From here on a signal stops the passes, so that the directory is removed. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r.info = taproot_replay_info(r.rp);
	ret = check_recording(&r);
	if (ret == EXIT_OK)
		ret = timeline_opts_start(&r.tl);
	if (ret != EXIT_OK)
		goto out;
	r.passes = calloc(r.repeat, sizeof(*r.passes));
	if (!r.passes || asprintf(&path, "%s/cpu.pb.gz", r.output) < 0) {
		path = NULL;
		ret = p_err("out of memory");
		goto out;
	}
	err = make_output_dir(r.output);
	if (err < 0) {
		ret = p_err("--output %s: %s", r.output, strerror(-err));
		goto out;
	}
	taproot_replay_pipeline_opts(r.rp, &po, &popts);
	snprintf(comment, sizeof(comment), "taprootctl report %s of a recording at %" PRIu32
		 " Hz, kernel %s", TAPROOT_VERSION, r.info->header.freq_hz,
		 r.info->header.kernel_release);
	comments[0] = comment;
	po.symbolize_none = r.symbolize_none;
	po.comments = comments;
	po.nr_comments = 1;
	err = taproot_pipeline_new(&po, &r.pl);
	if (err < 0) {
		ret = p_err("%s", taproot_errmsg(err));
		goto out;
	}
	for (uint32_t i = 0; ret == EXIT_OK && i < r.repeat; i++) {
		if (i)
			taproot_pipeline_reset(r.pl);
		if (i == r.repeat - 1)
			taproot_pipeline_set_timeline(r.pl, r.tl.timeline);
		ret = run_pass(&r, &r.passes[i]);
		if (!i)
			taproot_pipeline_stats(r.pl, &r.st1);
	}
	if (ret == EXIT_OK)
		ret = write_profiles(&r);
	if (ret == EXIT_OK && r.tl.timeline)
		ret = timeline_opts_write("report", &r.tl, r.output, 0, comment);
	if (ret == EXIT_OK)
		summary(&r, path);
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	taproot_pipeline_free(r.pl);
	timeline_opts_free(&r.tl);
	taproot_replay_close(r.rp);
	flamegraph_page_free(r.page);
	free(r.passes);
	free(path);
	return ret;
}
