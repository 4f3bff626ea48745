// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd: the taproot daemon. Continuous profiles, one file per interval.
 *
 * It follows the module's session through the "session" multicast group:
 * while sampling runs (whoever started it: 'taprootctl start', or taprootd
 * itself with --start) it is the consumer of the rings and feeds every
 * record to the pipeline (lib/pipeline/); when sampling stops it drains
 * the rings and lets go of /dev/taproot, so the module can be unloaded.
 * Every --interval seconds the profile of the interval is written to
 * OUTDIR/cpu-YYYYmmddTHHMMSSZ.pb.gz (UTC start of the interval) through a
 * temporary name, fsync and rename (taproot_pprof_write_file()), and the
 * oldest of its own files beyond --retain (of each kind) are deleted. An
 * interval without samples writes nothing. With --events offcpu the
 * off-CPU profiles of the interval go next to it, as offcpu-, offwake- and
 * schedlat-STAMP.pb.gz: the module must then produce switch and waking
 * records, which taprootd turns on itself while sampling is stopped (at
 * its start and on SIGHUP), with --sched-one-in, and fork, exec and exit
 * records whenever the module has them.
 *
 * Signals: SIGTERM/SIGINT write the partial profile of the current
 * interval and exit 0; SIGHUP ends the current interval (written) and
 * re-reads the --config file (options given on the command line keep
 * their values). A state file (--state, default
 * /run/taproot/taprootd.json) is rewritten every interval with taprootd's
 * pid, CPU time, RSS and counters; 'taprootctl status' shows it while that
 * pid lives. Logs go to stderr, or to syslog with --syslog.
 *
 * Memory is bounded by the pipeline's caches and the profile's stack cap
 * (--max-stacks).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <linux/taproot.h>

#include "daemon.h"
#include "taproot.h"
#include "topfile.h"
#include "util/clock.h"

static const char *prog = "taprootd";
struct daemon {
	struct daemon_opts o;
	uint64_t cmdline;		/* DOPT_* given on the command line */
	const char *config;		/* --config FILE or NULL */
	const char *state_path;
	bool start;			/* --start: start sampling if stopped */
	bool started_it;		/* ... and it did: stop it at exit */

	struct taproot_nl *nl;
	struct taproot_nl_sub *sub;
	struct taproot_info info;
	struct taproot_ring *ring;	/* open while sampling runs */
	struct taproot_ksyms *ksyms;
	struct taproot_pipeline *pl;
	uint32_t pl_freq;
	struct taproot_timeline *timeline;	/* the interval's; NULL: none */
	struct daemon_metrics *metrics;	/* --metrics, NULL: none */
	struct taproot_debuginfod *debuginfod;	/* NULL: none */
	struct daemon_push *push;	/* --push, NULL: none */
	double next_publish;		/* monotonic s: metrics published next */
	/* The pipeline's labels and rules, made with it from d->o. */
	struct taproot_relabel *relabel;
	struct taproot_profile_label static_labels[DAEMON_LABELS_MAX];
	char *label_strings;		/* "KEY\0VALUE\0" of the settings */
	char hostname[256];
	bool running;
	bool counts;			/* the session counts stacks: drain them */
	double next_full_check;		/* monotonic s: full_tables_drained() */
	uint64_t refs_seen;		/* the pipeline's stack_refs then */
	bool gone;			/* the module was unloaded under us */
	double next_probe;		/* monotonic s: check_module() */

	int64_t interval_start;		/* wall clock s of the current interval */
	uint64_t interval_samples;	/* pipeline samples at its start */
	double next_write;		/* monotonic s */
	time_t last_stamp;
	uint64_t profiles;
	uint64_t write_errors;		/* profiles that could not be written */
	char last_profile[4096];
	int64_t started;
	uint64_t lost_seen;		/* from the rings' counters */
	uint64_t lost_base;

	/* --sched-budget: adapt_selection() */
	uint32_t one_in;		/* the module's sched_one_in as last seen or set */
	uint64_t adapt_switches;	/* its switch count at adapt_at */
	double adapt_at;		/* monotonic s; 0: no count yet */
	double rate_peak;		/* switches/s, decaying; see adapt_selection() */
	double peak_at;			/* monotonic s of rate_peak; 0: none */

	/* The live top, for taprootctl top: live_request() */
	char *top_path;			/* beside the state file */
	double live_until;		/* monotonic s; 0: off */
	double live_taken;		/* monotonic s of the last take; 0: none */

	/*
	 * Session notifications of taprootd's own restart (configure_running()),
	 * acted on already: read_notifications() skips them, else the stop's
	 * would end the session that the start began.
	 */
	unsigned int own_notices;
};

/* The live top stays on this long after taprootctl top's last request. */
#define LIVE_LINGER_S	5.0

/*
 * A stamp on disk this far past the clock at start is one the taprootd
 * before ran ahead to (intervals ended within a second of each other);
 * further, the clock was set back since.
 */
#define STAMP_AHEAD_MAX_S	60

#define ADAPT_S		0.1	/* s between two looks at the switch rate */
#define PEAK_HALF_S	4.0	/* half-life of the rate's recent peak */

/*
 * The command line: getopt_long's tables are made from daemon_options[]
 * (a row's val: its short name, or 256 + its index).
 */
static void getopt_tables(struct option *longs, char *shorts)
{
	const struct daemon_option *opt;
	size_t i;

	*shorts++ = ':';		/* a missing value returns ':' */
	for (i = 0, opt = daemon_options; opt->name; i++, opt++) {
		bool has_arg = opt->arg != NULL;
		int val = opt->short_name ? opt->short_name : 256 + (int)i;

		longs[i] = (struct option){ opt->name, has_arg ? required_argument : no_argument,
					    NULL, val };
		if (opt->short_name) {
			*shorts++ = opt->short_name;
			if (has_arg)
				*shorts++ = ':';
		}
	}
	longs[i] = (struct option){ NULL };
	*shorts = '\0';
}

static const struct daemon_option *option_of(int val)
{
	const struct daemon_option *opt;

	if (val >= 256)
		return &daemon_options[val - 256];
	for (opt = daemon_options; opt->name; opt++)
		if (opt->short_name == val)
			return opt;
	return NULL;
}

/* A command-line-only option. 0: exit with it (it printed what was asked); -1: go on. */
static int act(const struct daemon_option *opt, struct daemon *d, bool *foreground)
{
	if (!strcmp(opt->name, "help")) {
		daemon_usage(prog);
		return 0;
	}
	if (!strcmp(opt->name, "print-config")) {
		daemon_print_config();
		return 0;
	}
	if (!strcmp(opt->name, "version")) {
		printf("%s %s (taproot ABI %d)\n", prog, TAPROOT_VERSION, TAPROOT_ABI_VERSION);
		return 0;
	}
	if (!strcmp(opt->name, "start"))
		d->start = true;
	else if (!strcmp(opt->name, "config"))
		d->config = optarg;
	else if (!strcmp(opt->name, "state"))
		d->state_path = optarg;
	else if (!strcmp(opt->name, "syslog"))
		log_to_syslog(prog);
	else
		*foreground = true;
	return -1;
}

/* The command line into @d. 0 or 2: exit with it (--help, an error); -1: go on. */
static int parse_options(int argc, char **argv, struct daemon *d, bool *foreground)
{
	static struct option longs[DAEMON_NR_OPTIONS + 1];
	static char shorts[2 + 2 * DAEMON_NR_OPTIONS];
	const struct daemon_option *opt;
	int val, ret;

	getopt_tables(longs, shorts);
	opterr = 0;
	while ((val = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (val == ':') {
			log_msg(LOG_ERR, "'%s' needs an argument", argv[optind - 1]);
			return 2;
		}
		opt = option_of(val);
		if (!opt) {
			log_msg(LOG_ERR, "unknown option '%s' (see '%s --help')", argv[optind - 1],
				prog);
			return 2;
		}
		if (opt->value == DV_ACTION) {
			ret = act(opt, d, foreground);
			if (ret >= 0)
				return ret;
			continue;
		}
		if (daemon_option_set(opt, "", optarg, &d->o))
			return 2;
		d->cmdline |= opt->bit;
	}
	if (optind < argc) {
		log_msg(LOG_ERR, "unexpected argument '%s' (see '%s --help')", argv[optind], prog);
		return 2;
	}
	if (!d->o.output)
		d->o.output = strdup(".");
	return -1;
}

static void log_module(const struct taproot_info *info)
{
	char features[256] = "";
	size_t off = 0;
	unsigned int bit;

	for (bit = 0; bit < 64 && off < sizeof(features); bit++) {
		const char *name = taproot_feature_name(bit);

		if (!(info->features & (1ULL << bit)))
			continue;
		if (name)
			off += (size_t)snprintf(features + off, sizeof(features) - off,
						"%s%s", off ? "," : "", name);
		else
			off += (size_t)snprintf(features + off, sizeof(features) - off,
						"%sbit%u", off ? "," : "", bit);
	}
	log_msg(LOG_INFO, "taproot module ABI %" PRIu32 " on %s: %" PRIu32 " CPUs, page size %"
		PRIu32 ", features %s, sampling %s", info->abi_version, info->kernel_release,
		info->nr_cpus, info->page_size, features[0] ? features : "none",
		info->running ? "running" : "stopped");
}

/* ------------------------------------------------------------ profiles */

static int64_t wall_s(void)
{
	return (int64_t)time(NULL);
}

/* What the pipeline's labels and rules outlive: freed after it. */
static void free_labels(struct daemon *d)
{
	taproot_relabel_free(d->relabel);
	d->relabel = NULL;
	free(d->label_strings);
	d->label_strings = NULL;
}

/*
 * The host's name, the labels of the label settings and the relabel rules
 * of d->o, for a new pipeline. Returns how many labels, or -1 (logged;
 * the settings were checked when read: only memory fails).
 */
static int make_labels(struct daemon *d)
{
	struct taproot_profile_label *l = d->static_labels;
	size_t n = 0, len = 0;
	char *s;
	int err;

	free_labels(d);
	if (gethostname(d->hostname, sizeof(d->hostname) - 1) < 0)
		d->hostname[0] = '\0';
	for (size_t i = 0; i < d->o.labels.nr; i++)
		len += strlen(d->o.labels.v[i]) + 1;
	s = d->label_strings = malloc(len + 1);
	if (!s) {
		log_msg(LOG_ERR, "labels: out of memory");
		return -1;
	}
	for (size_t i = 0; i < d->o.labels.nr; i++) {
		char *key = s, *eq;

		s = stpcpy(s, d->o.labels.v[i]) + 1;
		eq = strchr(key, '=');	/* "KEY=VALUE", checked when read */
		*eq = '\0';
		l[n++] = TAPROOT_LABEL_STR(key, eq + 1);
	}
	for (size_t i = 0; i < d->o.relabel.nr; i++) {
		err = taproot_relabel_add(&d->relabel, d->o.relabel.v[i]);
		if (err < 0) {
			log_msg(LOG_ERR, "relabel '%s': %s", d->o.relabel.v[i],
				taproot_errmsg(err));
			return -1;
		}
	}
	return (int)n;
}

/*
 * The pipeline uploads unwind tables and mappings through @ring, the open
 * rings (NULL: no more; the ring must still be open, its uploads are freed).
 */
/* trace or critical-path: the pipeline keeps the interval's timeline. */
static bool wants_timeline(const struct daemon *d)
{
	return d->o.offcpu && (d->o.trace || d->o.critical.nr);
}

/* Whether sessions taprootd configures count the samples the module unwinds. */
static bool wants_counts(const struct daemon *d)
{
	return d->o.count && d->o.unwind && !wants_timeline(d) &&
	       (d->info.features & TAPROOT_FEAT_COUNT);
}

static void pipeline_use_ring(struct daemon *d, struct taproot_ring *ring)
{
	int err;

	/* unwind off: nothing to upload, the snapshots are unwound here. */
	if (!d->o.unwind)
		ring = NULL;
	err = d->pl ? taproot_pipeline_set_ring(d->pl, ring) : 0;

	if (err < 0)
		log_msg(LOG_WARNING, "no uploads to the module's unwinder: %s",
			taproot_errmsg(err));
}

static int new_pipeline(struct daemon *d, uint32_t freq)
{
	static char comment[256];
	static const char *comments[1] = { comment };
	struct taproot_pipeline_opts po;
	int err, nl;

	pipeline_use_ring(d, NULL);
	taproot_pipeline_free(d->pl);
	d->pl = NULL;
	taproot_timeline_free(d->timeline);
	d->timeline = NULL;
	if (wants_timeline(d) && (err = taproot_timeline_new(NULL, &d->timeline)) < 0) {
		log_msg(LOG_ERR, "%s", taproot_errmsg(err));
		return -1;
	}
	nl = make_labels(d);
	if (nl < 0)
		return -1;
	taproot_pipeline_opts_default(&po);
	po.relabel = d->relabel;
	po.debuginfod = d->debuginfod;
	po.hostname = d->hostname;
	po.kernel_release = d->info.kernel_release;
	po.static_labels = d->static_labels;
	po.nr_static_labels = (size_t)nl;
	po.freq_hz = freq;
	po.ksyms = d->ksyms;
	po.label_tid = d->o.label_tid;
	po.symbolize_none = d->o.symbolize == SYMBOLIZE_NONE;
	po.label_cpu = d->o.label_cpu;
	po.max_stacks = d->o.max_stacks;
	po.offcpu = d->o.offcpu;
	po.min_block_ns = (uint64_t)d->o.min_block_us * 1000;
	po.timeline = d->timeline;
	po.counted = wants_counts(d);
	snprintf(comment, sizeof(comment), "taprootd %s, %" PRIu32 " Hz, kernel %s",
		 TAPROOT_VERSION, freq, d->info.kernel_release);
	po.comments = comments;
	po.nr_comments = 1;
	err = taproot_pipeline_new(&po, &d->pl);
	if (err < 0) {
		log_msg(LOG_ERR, "%s", taproot_errmsg(err));
		return -1;
	}
	err = taproot_pipeline_prewarm(d->pl);
	if (err < 0)
		log_msg(LOG_WARNING, "%s", taproot_errmsg(err));
	if (d->live_until && taproot_pipeline_live(d->pl, true) < 0)
		d->live_until = 0;
	d->live_taken = 0;
	pipeline_use_ring(d, d->ring);
	/*
	 * The interval starts now, after the warm-up: interval_start, read
	 * first, is the second the profiles' time falls in or one before.
	 */
	d->interval_start = wall_s();
	taproot_pipeline_reset(d->pl);
	d->pl_freq = freq;
	d->interval_samples = 0;
	return 0;
}

/* What the state file and the metrics say of @d now. */
static void fill_state(struct daemon *d, struct daemon_state *out)
{
	struct taproot_pipeline_stats ps = { 0 };
	struct taproot_debuginfod_stats ds;
	struct daemon_state st = { 0 };
	struct rusage ru;
	long pages = 0, rss = 0;
	FILE *f;

	if (d->pl)
		taproot_pipeline_stats(d->pl, &ps);
	getrusage(RUSAGE_SELF, &ru);
	f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	st.pid = getpid();
	st.started = d->started;
	st.updated = wall_s();
	st.cpu_seconds = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	st.rss_bytes = (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
	st.samples = ps.samples;
	st.lost = d->lost_seen;
	st.profiles = d->profiles;
	st.offcpu = d->o.offcpu;
	st.intervals = ps.causal.joined;
	st.unpaired = ps.causal.unpaired_no_in + ps.causal.unpaired_no_out;
	st.unwind_permille = (unsigned int)(taproot_pipeline_unwind_rate(&ps) * 1000 + 0.5);
	st.dropped = ps.dropped;
	st.proc_unknown = ps.proc_unknown;
	st.user_stale = ps.user_stale;
	st.elf_errors = ps.elf_errors;
	st.k8s_cache_hits = ps.k8s_hits;
	st.k8s_files_read = ps.k8s_reads;
	st.k8s_files_refused = ps.k8s_refused;
	st.k8s_cache_evicted = ps.k8s_evicted;
	st.user_stacks = ps.user_stacks;
	memcpy(st.unwind, ps.unwind, sizeof(st.unwind));
	st.frames = ps.frames;
	st.frames_unsymbolized = ps.frames_unsymbolized;
	st.jit_named_late = ps.jit_named_late;
	st.jit_pending_dropped = ps.jit_pending_dropped;
	taproot_debuginfod_get_stats(d->debuginfod, &ds);
	st.debuginfod_found = ds.found;
	st.debuginfod_absent = ds.absent;
	st.debuginfod_pending = ds.pending;
	st.relabel_dropped = ps.relabel_dropped + ps.causal.relabel_dropped;
	st.relabel_skipped = ps.relabel_skipped + ps.causal.relabel_skipped;
	st.write_errors = d->write_errors;
	st.module_unwind = d->o.unwind;
	st.kupload = ps.kupload;
	memcpy(st.kunwind, ps.kunwind, sizeof(st.kunwind));
	st.stack_refs = ps.stack_refs;
	st.counted = ps.counted_samples;
	st.counted_unresolved = ps.counted_unresolved;
	st.stack_refs_unresolved = ps.stack_refs_unresolved;
	daemon_push_stats(d->push, &st);
	st.sampling = d->running;
	st.interval = d->o.interval;
	snprintf(st.output, sizeof(st.output), "%s", d->o.output);
	snprintf(st.last_profile, sizeof(st.last_profile), "%s", d->last_profile);
	*out = st;
}

static void write_state(struct daemon *d)
{
	struct daemon_state st;
	int err;

	fill_state(d, &st);
	daemon_metrics_publish(d->metrics, &st);
	err = daemon_state_write(d->state_path, &st);
	if (err < 0) {
		static bool warned;

		if (!warned)
			log_msg(LOG_WARNING, "state file %s: %s", d->state_path, strerror(-err));
		warned = true;
	}
}

/*
 * --push: the profile @kind, split by service into the spool, before the
 * local profile is written: a crash in between may leave an interval
 * pushed and not on disk, but never one on disk and not pushed. Its
 * interval is [interval_start, now], in whole seconds around it; not its
 * stamp, which is later than its start when an interval begun in the same
 * second took that one (a write that came late, then one on time).
 */
static bool spool_kind(struct daemon *d, enum taproot_profile_kind kind)
{
	struct timespec now;
	int64_t until;

	/* [FROM, UNTIL] holds the profile's time: FROM rounded down, UNTIL up. */
	clock_gettime(CLOCK_REALTIME, &now);
	until = (int64_t)now.tv_sec + (now.tv_nsec > 0);
	if (until <= d->interval_start)
		until = d->interval_start + 1;
	return spool_write(d->o.output, taproot_pipeline_profile_of(d->pl, kind),
			   taproot_profile_kind_name(kind), d->interval_start, until,
			   spool_format_of(d->o.push), d->hostname) > 0;
}

/*
 * The interval's timeline: trace-STAMP.json and critpath-STAMP.pb.gz (the
 * stamp of the interval's profiles, *@stamp, or a new one); the next
 * interval gets a new timeline.
 */
static void write_timeline(struct daemon *d, time_t *stamp)
{
	struct taproot_timeline *done = d->timeline, *next = NULL;
	struct taproot_timeline_stats st;
	struct taproot_critpath_stats cs;
	uint32_t tids[256];
	size_t nr = 0;
	char *path;
	int err;

	if (!done)
		return;
	err = taproot_timeline_new(NULL, &next);
	if (err < 0)
		log_msg(LOG_ERR, "a new timeline: %s", taproot_errmsg(err));
	taproot_pipeline_set_timeline(d->pl, next);
	d->timeline = next;
	taproot_timeline_stats(done, &st);
	if (!st.intervals && !st.samples)
		goto out;
	if (!*stamp)
		*stamp = daemon_next_stamp((time_t)d->interval_start, &d->last_stamp);
	if (d->o.trace && (path = daemon_profile_path(d->o.output, "trace", *stamp))) {
		err = taproot_timeline_write_trace_file(done, path);
		if (err < 0) {
			log_msg(LOG_ERR, "writing %s: %s", path, taproot_errmsg(err));
			d->write_errors++;
		} else {
			d->profiles++;
		}
		free(path);
	}
	for (size_t i = 0; i < d->o.critical.nr; i++)
		nr += taproot_timeline_targets(done, d->o.critical.v[i], tids + nr,
					       sizeof(tids) / sizeof(tids[0]) - nr);
	if (nr && (path = daemon_profile_path(d->o.output, "critpath", *stamp))) {
		err = taproot_timeline_write_critpath(done, tids, nr, path, NULL, 0, &cs);
		if (err < 0) {
			log_msg(LOG_ERR, "writing %s: %s", path, taproot_errmsg(err));
			d->write_errors++;
		} else {
			d->profiles++;
			log_msg(LOG_DEBUG, "%s: the critical paths of %zu threads, %.3f s", path, nr,
				(double)cs.total_ns / 1e9);
		}
		free(path);
	}
out:
	taproot_timeline_free(done);
}

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg);

/* The stacks the module counted, into the interval's profile. */
static void drain_counts(struct daemon *d)
{
	int64_t n;

	if (!d->counts || !d->ring || !d->pl)
		return;
	n = taproot_pipeline_drain_counts(d->pl, d->ring, on_corrupt, d);
	if (n < 0)
		log_msg(LOG_ERR, "%s", taproot_errmsg((int)n));
}

/*
 * While the module counts, a SAMPLE_REF means a CPU's table was full (or a
 * count at its maximum): its samples come one by one, each a pass of the
 * pipeline, until the next drain. Drain then, within a second, rather
 * than at the interval's end.
 */
static void full_tables_drained(struct daemon *d, double now)
{
	struct taproot_pipeline_stats st;

	if (!d->counts || !d->pl || now < d->next_full_check)
		return;
	d->next_full_check = now + 1;
	taproot_pipeline_stats(d->pl, &st);
	if (st.stack_refs == d->refs_seen)
		return;
	d->refs_seen = st.stack_refs;
	drain_counts(d);
}

/* End the current interval: write each profile that has samples. */
static void flush_interval(struct daemon *d, const char *why)
{
	struct taproot_pipeline_stats st;
	time_t stamp = 0;
	bool wrote = false, spooled = false;

	if (!d->pl)
		return;
	drain_counts(d);
	/* Intervals completed so far go into this interval's profiles. */
	taproot_pipeline_flush(d->pl, !d->running);
	taproot_pipeline_stats(d->pl, &st);
	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++) {
		enum taproot_profile_kind kind = (enum taproot_profile_kind)k;
		uint64_t n = taproot_pipeline_adds(d->pl, kind);
		char *path;
		int err;

		if (!n || (kind == TAPROOT_PROFILE_CPU && !d->o.cpu))
			continue;
		if (!stamp)
			stamp = daemon_next_stamp((time_t)d->interval_start, &d->last_stamp);
		if (d->push)
			spooled |= spool_kind(d, kind);
		path = daemon_profile_path(d->o.output, taproot_profile_kind_name(kind), stamp);
		if (!path) {
			log_msg(LOG_ERR, "out of memory");
		} else if ((err = taproot_pipeline_write_kind(d->pl, kind, path)) < 0) {
			log_msg(LOG_ERR, "writing %s: %s", path, taproot_errmsg(err));
			d->write_errors++;
		} else {
			d->profiles++;
			wrote = true;
			if (kind == TAPROOT_PROFILE_CPU || !d->o.cpu)
				snprintf(d->last_profile, sizeof(d->last_profile), "%s", path);
			log_msg(LOG_DEBUG, "%s: %s: %" PRIu64 " samples", why, path, n);
		}
		free(path);
	}
	write_timeline(d, &stamp);
	if (spooled)
		daemon_push_kick(d->push);
	if (wrote)
		daemon_retain(d->o.output, d->o.retain, false, d->push != NULL);
	d->interval_start = wall_s();	/* first: see new_pipeline() */
	taproot_pipeline_reset(d->pl);
	d->interval_samples = st.samples;
	write_state(d);
}

/* ------------------------------------------------------------ the rings */

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	log_msg(LOG_WARNING, "ring of CPU %u corrupt at %" PRIu64 ": %s; its unread bytes "
		"were dropped", cpu, pos, why);
}

static void consume(struct daemon *d)
{
	uint64_t lost;

	if (!d->ring || !d->pl)
		return;
	taproot_pipeline_consume(d->pl, d->ring, on_corrupt, d);
	/* Read once: a loss counted between two reads would be skipped. */
	lost = taproot_ring_lost(d->ring);
	d->lost_seen += lost - d->lost_base;
	d->lost_base = lost;
}

/*
 * The module's unwinding as the settings ask (unwind, ustack-private,
 * unwind-frames, unwind-mem), into @c: the fields that differ from @cur.
 */
static void unwind_settings(const struct daemon *d, const struct taproot_config *cur,
			    struct taproot_config *c)
{
	const uint32_t mine = TAPROOT_CFG_F_UNWIND | TAPROOT_CFG_F_USTACK_PRIVATE |
			      TAPROOT_CFG_F_COUNT;
	uint32_t want = (d->o.unwind ? TAPROOT_CFG_F_UNWIND : 0) |
			(d->o.ustack_private ? TAPROOT_CFG_F_USTACK_PRIVATE : 0) |
			(wants_counts(d) ? TAPROOT_CFG_F_COUNT : 0);

	if (!(d->info.features & TAPROOT_FEAT_UNWIND))
		return;
	if ((cur->flags & mine) != want) {
		c->set |= TAPROOT_CONFIG_FLAGS;
		c->flags = want;
		c->flags_given = mine;	/* the module's other flags stay */
	}
	if (cur->unwind_frames != d->o.unwind_frames) {
		c->set |= TAPROOT_CONFIG_UNWIND_FRAMES;
		c->unwind_frames = (uint32_t)d->o.unwind_frames;
	}
	if (cur->unwind_mem_mib != d->o.unwind_mem_mib) {
		c->set |= TAPROOT_CONFIG_UNWIND_MEM;
		c->unwind_mem_mib = (uint32_t)d->o.unwind_mem_mib;
	}
}

/* The module's configuration into @cfg: true, or false after saying why not. */
static bool read_config(struct daemon *d, struct taproot_config *cfg)
{
	int err = taproot_nl_get_config(d->nl, cfg);

	if (err < 0)
		log_msg(LOG_ERR, "reading the configuration: %s", taproot_errmsg(err));
	return err == 0;
}

/* The fields of the module's sampling settings that need sampling stopped. */
#define STOPPED_ONLY	(TAPROOT_CONFIG_FREQ | TAPROOT_CONFIG_RING_PAGES)

/*
 * The module's sampling settings given (freq, pids, kstack, ustack,
 * ring-pages), into @c: the fields that differ from @cur.
 */
static void sampling_settings(const struct daemon *d, const struct taproot_config *cur,
			      struct taproot_config *c)
{
	/* The settings of one number each: their field of struct taproot_config. */
	static const struct {
		uint32_t bit;
		size_t field;
	} numbers[] = {
		{ TAPROOT_CONFIG_FREQ, offsetof(struct taproot_config, freq_hz) },
		{ TAPROOT_CONFIG_KSTACK, offsetof(struct taproot_config, kstack_depth) },
		{ TAPROOT_CONFIG_USTACK, offsetof(struct taproot_config, ustack_bytes) },
		{ TAPROOT_CONFIG_RING_PAGES, offsetof(struct taproot_config, ring_pages) },
	};
	const struct taproot_config *m = &d->o.module;

	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		const uint32_t *want = (const uint32_t *)((const char *)m + numbers[i].field);
		const uint32_t *have = (const uint32_t *)((const char *)cur + numbers[i].field);

		if ((m->set & numbers[i].bit) && *want != *have) {
			c->set |= numbers[i].bit;
			*(uint32_t *)((char *)c + numbers[i].field) = *want;
		}
	}
	if ((m->set & TAPROOT_CONFIG_TGIDS) &&
	    (m->nr_tgids != cur->nr_tgids ||
	     memcmp(m->tgids, cur->tgids, m->nr_tgids * sizeof(m->tgids[0])))) {
		c->set |= TAPROOT_CONFIG_TGIDS;
		c->nr_tgids = m->nr_tgids;
		memcpy(c->tgids, m->tgids, sizeof(c->tgids));
	}
}

/* "freq 99 Hz, pids all, ..." of the sampling fields @c sets, into @buf. */
static const char *sampling_text(const struct taproot_config *c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
#define ADD(...)	(off += off < len ? (size_t)snprintf(buf + off, len - off, __VA_ARGS__) : 0)
	if (c->set & TAPROOT_CONFIG_FREQ)
		ADD("%sfreq %" PRIu32 " Hz", off ? ", " : "", c->freq_hz);
	if (c->set & TAPROOT_CONFIG_TGIDS) {
		ADD("%spids %s", off ? ", " : "", c->nr_tgids ? "" : "all");
		for (uint32_t i = 0; i < c->nr_tgids; i++)
			ADD("%s%" PRIu32, i ? "," : "", c->tgids[i]);
	}
	if (c->set & TAPROOT_CONFIG_KSTACK)
		ADD("%skstack %" PRIu32, off ? ", " : "", c->kstack_depth);
	if (c->set & TAPROOT_CONFIG_USTACK)
		ADD("%sustack %" PRIu32, off ? ", " : "", c->ustack_bytes);
	if (c->set & TAPROOT_CONFIG_RING_PAGES)
		ADD("%sring-pages %" PRIu32, off ? ", " : "", c->ring_pages);
#undef ADD
	return buf;
}

/*
 * Have the module record what the profiles need: fork, exec and exit
 * whenever it has them (without them the process model cannot tell a
 * sample taken before an execve from one after it, and names the pcs of
 * one program with the other's functions), with --events offcpu the
 * switch and waking records at the selection asked, and unwind user
 * stacks as the unwind settings say. Only while sampling is stopped: a
 * running session cannot gain tracepoints, and is someone else's.
 */
static void configure_module(struct daemon *d)
{
	struct taproot_config c = { 0 };
	struct taproot_config cur;
	char text[512];
	int err;

	if (d->info.running || !read_config(d, &cur))
		return;
	sampling_settings(d, &cur, &c);
	if (c.set) {
		err = taproot_nl_set_config(d->nl, &c);
		if (err < 0)
			log_msg(LOG_ERR, "setting the module's sampling: %s", taproot_errmsg(err));
		else
			log_msg(LOG_INFO, "the module's sampling: %s",
				sampling_text(&c, text, sizeof(text)));
		c = (struct taproot_config){ 0 };
	}
	unwind_settings(d, &cur, &c);
	if (c.set) {
		err = taproot_nl_set_config(d->nl, &c);
		if (err < 0)
			log_msg(LOG_ERR, "setting the module's unwinding: %s", taproot_errmsg(err));
		else
			log_msg(LOG_INFO, "the module's unwinding: %s%s%s, %lu frames at most, "
				"%lu MiB of uploads at most", d->o.unwind ? "on" : "off",
				d->o.ustack_private ? ", ustack-private" : "",
				wants_counts(d) ? ", stacks counted" : "",
				d->o.unwind_frames, d->o.unwind_mem_mib);
	}
	if (!d->o.offcpu && !(d->info.features & TAPROOT_FEAT_PROC_EVENTS))
		return;
	c = (struct taproot_config){ .set = TAPROOT_CONFIG_EVENTS };
	c.events = cur.events;
	if (d->info.features & TAPROOT_FEAT_PROC_EVENTS)
		c.events |= TAPROOT_EV_FORK | TAPROOT_EV_EXEC | TAPROOT_EV_EXIT;
	if (!d->o.offcpu) {
		if (c.events == cur.events)
			return;
		err = taproot_nl_set_config(d->nl, &c);
		if (err < 0)
			log_msg(LOG_ERR, "turning on fork, exec and exit records: %s",
				taproot_errmsg(err));
		else
			log_msg(LOG_INFO, "fork, exec and exit records on");
		return;
	}
	c.events |= TAPROOT_EV_SWITCH | TAPROOT_EV_WAKING;
	if (d->o.cpu)
		c.events |= TAPROOT_EV_SAMPLE;
	c.set |= TAPROOT_CONFIG_SCHED_ONE_IN;
	/* A timeline with intervals left out would show threads running through them. */
	c.sched_one_in = wants_timeline(d) ? 1 : (uint32_t)d->o.sched_one_in;
	err = taproot_nl_set_config(d->nl, &c);
	if (err < 0)
		log_msg(LOG_ERR, "turning on switch and waking records: %s", taproot_errmsg(err));
	else
		log_msg(LOG_INFO, "off-CPU: switch and waking records on, one interval in %" PRIu32
			"%s", c.sched_one_in, wants_timeline(d) ?
			" (trace, critical-path: every interval, no sched-budget)" : "");
}

/* Sampling runs: be the consumer. */
static void session_started(struct daemon *d)
{
	struct taproot_config cfg;
	bool have_cfg;
	int err;

	d->running = true;
	have_cfg = read_config(d, &cfg);
	if (!have_cfg)
		cfg.freq_hz = d->pl_freq ? d->pl_freq : TAPROOT_FREQ_DEFAULT;
	d->one_in = !have_cfg ? (uint32_t)d->o.sched_one_in : cfg.sched_one_in;
	/* Unknown: drain anyway (a module that counts nothing gives none). */
	d->counts = (!have_cfg || (cfg.flags & TAPROOT_CFG_F_COUNT)) &&
		    (d->info.features & TAPROOT_FEAT_COUNT);
	d->adapt_at = 0;
	/*
	 * The rings first, their reader thread with them: sampling runs
	 * already, and making a pipeline (a prewarm, kernel symbols) takes
	 * longer than a ring holds at high rates.
	 */
	if (!d->ring) {
		err = taproot_ring_open(&d->info, &d->ring);
		if (err < 0) {
			log_msg(LOG_ERR, "%s", taproot_errmsg(err));
			return;
		}
		d->lost_base = taproot_ring_lost(d->ring);
		err = d->o.buffer_mb ? taproot_ring_start_reader(d->ring, d->o.buffer_mb << 20) : 0;
		if (err < 0)
			log_msg(LOG_WARNING, "reading the rings without a reader thread: %s",
				taproot_errmsg(err));
		pipeline_use_ring(d, d->ring);
	}
	if (!d->pl || cfg.freq_hz != d->pl_freq) {
		flush_interval(d, "frequency changed");
		if (new_pipeline(d, cfg.freq_hz) < 0) {
			/* Nothing would read them: the module's counters say what is lost. */
			taproot_ring_close(d->ring);
			d->ring = NULL;
			return;
		}
	}
	log_msg(LOG_INFO, "sampling runs at %" PRIu32 " Hz: reading the rings", cfg.freq_hz);
	if (have_cfg && d->o.offcpu && (cfg.events & (TAPROOT_EV_SWITCH | TAPROOT_EV_WAKING)) !=
			   (TAPROOT_EV_SWITCH | TAPROOT_EV_WAKING))
		log_msg(LOG_WARNING, "off-CPU profiles stay empty: this session runs without "
			"switch and waking records (stop it; taprootd turns them on)");
	if (have_cfg && (d->info.features & TAPROOT_FEAT_UNWIND) &&
	    !(cfg.flags & TAPROOT_CFG_F_UNWIND) != !d->o.unwind)
		log_msg(LOG_WARNING, "this session runs with the module's unwinding %s, taprootd's "
			"unwind setting is %s: it applies once sampling is stopped",
			cfg.flags & TAPROOT_CFG_F_UNWIND ? "on" : "off", d->o.unwind ? "on" : "off");
}

/* Sampling stopped: drain the rings and let go of them. */
static void session_stopped(struct daemon *d)
{
	d->running = false;
	/*
	 * The session --start began is over: a later one is somebody
	 * else's, and exit must not stop it.
	 */
	d->started_it = false;
	if (!d->ring)
		return;
	for (int i = 0; d->pl && i < 64 &&
	     taproot_pipeline_consume(d->pl, d->ring, on_corrupt, d) > 0; i++)
		;
	drain_counts(d);
	d->counts = false;
	/* Nothing more comes: intervals still open are unpaired. */
	if (d->pl)
		taproot_pipeline_flush(d->pl, true);
	d->lost_seen += taproot_ring_lost(d->ring) - d->lost_base;
	pipeline_use_ring(d, NULL);
	taproot_ring_close(d->ring);
	d->ring = NULL;
	log_msg(LOG_INFO, "sampling stopped: rings released");
}

static void resync(struct daemon *d)
{
	int err = taproot_nl_get_info(d->nl, &d->info);

	if (err < 0) {
		log_msg(LOG_ERR, "%s", taproot_errmsg(err));
		return;
	}
	if (d->info.running && !d->running)
		session_started(d);
	else if (!d->info.running && d->running)
		session_stopped(d);
}

/*
 * --sched-budget: every ADAPT_S seconds while a session with off-CPU
 * records runs, set the module's one-in-N so that at most the budget of
 * intervals a second carry stacks, whatever the context-switch rate
 * (taproot_sched_one_in_adapt(): powers of two above --sched-one-in).
 * The cost of off-CPU profiling is then bounded by the budget, not by
 * how busy the scheduler is; the totals stay unbiased estimates.
 *
 * What it adapts to is the switch rate's recent peak: the rate of the
 * last look, or the peak before, halved every PEAK_HALF_S seconds, when
 * that is higher. So a burst raises one-in-N within a look, ADAPT_S
 * (the module records it in full until then), while a lull of a few
 * seconds does not lower it: adapting to the last second alone, a busy
 * host that paused for a second went back to one in 1, and the next
 * burst was recorded in full for a second: enough to slow the load
 * itself and overflow the rings.
 */
static void adapt_selection(struct daemon *d, double now)
{
	struct taproot_config c = { .set = TAPROOT_CONFIG_SCHED_ONE_IN };
	struct taproot_cpu_stats *cpus;
	uint64_t switches = 0;
	bool running;
	size_t nr;
	double rate;
	int err;

	if (!d->running || !d->o.offcpu || !d->o.sched_budget || wants_timeline(d) ||
	    now - d->adapt_at < ADAPT_S)
		return;
	err = taproot_nl_get_stats(d->nl, &running, &cpus, &nr);
	if (err < 0)
		return;		/* the module went: check_module() says so */
	for (size_t i = 0; i < nr; i++)
		switches += cpus[i].switches;
	free(cpus);
	rate = d->adapt_at > 0 && switches >= d->adapt_switches ?
	       (double)(switches - d->adapt_switches) / (now - d->adapt_at) : -1;
	d->adapt_switches = switches;
	d->adapt_at = now;
	if (rate < 0 || !running)
		return;
	if (d->peak_at > 0)
		d->rate_peak *= exp2(-(now - d->peak_at) / PEAK_HALF_S);
	if (rate > d->rate_peak)
		d->rate_peak = rate;
	d->peak_at = now;
	rate = d->rate_peak;
	c.sched_one_in = taproot_sched_one_in_adapt(d->one_in, (uint32_t)d->o.sched_one_in,
						    rate, (uint32_t)d->o.sched_budget);
	if (c.sched_one_in == d->one_in)
		return;
	err = taproot_nl_set_config(d->nl, &c);
	if (err < 0) {
		log_msg(LOG_WARNING, "setting sched-one-in %" PRIu32 ": %s", c.sched_one_in,
			taproot_errmsg(err));
		return;
	}
	log_msg(LOG_INFO, "off-CPU: %.0f intervals/s: recording one in %" PRIu32
		" (budget %lu/s)", rate, c.sched_one_in, d->o.sched_budget);
	d->one_in = c.sched_one_in;
}

/* --start: start sampling unless it runs; remember that taprootd did. */
static void start_if_asked(struct daemon *d)
{
	int err;

	if (!d->start || d->info.running)
		return;
	err = taproot_nl_start(d->nl);
	if (err < 0 && err != -EALREADY)
		log_msg(LOG_ERR, "starting sampling: %s", taproot_errmsg(err));
	else if (err == 0)
		d->started_it = true;
}

/*
 * The sampling settings given, while sampling runs. A session taprootd
 * started is its own: what can change while it runs (pids, kstack,
 * ustack) changes at once, and for freq or ring-pages it is stopped and
 * started again. Another's session is left alone: configure_module()
 * applies them when taprootd starts, or re-reads its configuration, with
 * sampling stopped.
 */
static void configure_running(struct daemon *d)
{
	struct taproot_config c = { 0 }, cur;
	char text[512];
	int err;

	if (!d->info.running || !read_config(d, &cur))
		return;
	sampling_settings(d, &cur, &c);
	if (!c.set)
		return;
	sampling_text(&c, text, sizeof(text));
	if (!d->started_it) {
		log_msg(LOG_WARNING, "sampling runs in a session taprootd did not start: %s "
			"not applied (they are when taprootd starts or re-reads its "
			"configuration with sampling stopped)", text);
		return;
	}
	if (!(c.set & STOPPED_ONLY)) {
		err = taproot_nl_set_config(d->nl, &c);
		if (err < 0)
			log_msg(LOG_ERR, "setting the module's sampling: %s", taproot_errmsg(err));
		else
			log_msg(LOG_INFO, "the module's sampling: %s", text);
		return;
	}
	log_msg(LOG_INFO, "%s: restarting the session taprootd started", text);
	err = taproot_nl_stop(d->nl);
	if (err < 0 && err != -EALREADY) {
		log_msg(LOG_ERR, "stopping sampling: %s", taproot_errmsg(err));
		return;
	}
	d->own_notices = 1;
	resync(d);		/* the rings let go of, for ring-pages */
	configure_module(d);
	d->started_it = false;
	err = taproot_nl_start(d->nl);
	if (err < 0 && err != -EALREADY) {
		log_msg(LOG_ERR, "starting sampling: %s", taproot_errmsg(err));
	} else if (err == 0) {
		d->started_it = true;
		d->own_notices++;
	}
	resync(d);
}

/*
 * The module can be unloaded under taprootd while sampling is stopped (it
 * holds no ring then). Its netlink family goes with it, and so does the
 * multicast subscription; the next load registers a family under another
 * id, which nothing tells the old sockets. So while sampling is stopped,
 * ask the module for its info once a second: when that fails, say so once
 * and try new sockets each second; once they work, follow the module's
 * session again as at start (with --start, start sampling again).
 */
static void check_module(struct daemon *d)
{
	struct taproot_nl_sub *sub = NULL;
	struct taproot_nl *nl = NULL;
	int err;

	if (!d->gone && taproot_nl_get_info(d->nl, &d->info) == 0)
		return;
	err = taproot_nl_open(&nl);
	if (err == 0)
		err = taproot_nl_get_info(nl, &d->info);
	if (err == 0)
		err = taproot_nl_subscribe(&sub);
	if (err < 0) {
		taproot_nl_close(nl);
		if (!d->gone)
			log_msg(LOG_WARNING, "the taproot module is gone (%s): waiting for it to "
				"be loaded again", taproot_errmsg(err));
		d->gone = true;
		d->started_it = false;	/* that session went with the module */
		return;
	}
	taproot_nl_sub_close(d->sub);
	taproot_nl_close(d->nl);
	d->nl = nl;
	d->sub = sub;
	if (d->gone)
		log_msg(LOG_INFO, "the taproot module is loaded again");
	d->gone = false;
	log_module(&d->info);
	configure_module(d);
	start_if_asked(d);
	resync(d);
	configure_running(d);
}

static void read_notifications(struct daemon *d)
{
	struct taproot_notification n;
	int err;

	while ((err = taproot_nl_sub_read(d->sub, &n)) != 0) {
		if (err == -ENOBUFS) {	/* some were lost: ask for the state */
			d->own_notices = 0;
			resync(d);
			continue;
		}
		if (err < 0) {
			if (err != -EAGAIN && err != -TAPROOT_EPROTO)
				log_msg(LOG_WARNING, "notifications: %s", taproot_errmsg(err));
			if (err == -TAPROOT_EPROTO)
				continue;
			return;
		}
		if ((n.what == TAPROOT_NOTIFY_STARTED || n.what == TAPROOT_NOTIFY_STOPPED) &&
		    d->own_notices) {
			d->own_notices--;
			continue;
		}
		switch (n.what) {
		case TAPROOT_NOTIFY_STARTED:
			if (!d->running)
				session_started(d);
			break;
		case TAPROOT_NOTIFY_STOPPED:
			if (d->running)
				session_stopped(d);
			break;
		case TAPROOT_NOTIFY_CONFIG:
			log_msg(LOG_INFO, "the module's configuration changed");
			break;
		default:
			break;
		}
	}
}

/* ------------------------------------------------------------ SIGHUP */

/* A string setting as it was at start, for keep_push_settings(). */
static int keep_string(const char *key, char *const *was, char **now)
{
	if (!*was == !*now && (!*was || !strcmp(*was, *now)))
		return 0;
	log_msg(LOG_WARNING, "SIGHUP: %s is read at start only: unchanged", key);
	free(*now);
	*now = *was ? strdup(*was) : NULL;
	return *was && !*now ? -1 : 0;
}

/*
 * The push settings, and the output directory while pushing (it holds
 * the spool), stay as they were at start in the re-read @o.
 */
static int keep_push_settings(struct daemon *d, struct daemon_opts *o)
{
	o->push_timeout = d->o.push_timeout;
	o->push_spool_mb = d->o.push_spool_mb;
	if (keep_string("push", &d->o.push, &o->push) < 0 ||
	    keep_string("push-bearer-file", &d->o.push_bearer_file, &o->push_bearer_file) < 0 ||
	    keep_string("push-basic-file", &d->o.push_basic_file, &o->push_basic_file) < 0 ||
	    keep_string("push-tenant", &d->o.push_tenant, &o->push_tenant) < 0 ||
	    (d->push && keep_string("output (while pushing: the spool's)", &d->o.output,
				    &o->output) < 0)) {
		log_msg(LOG_ERR, "SIGHUP: out of memory");
		return -1;
	}
	return 0;
}

static void reload(struct daemon *d)
{
	struct daemon_opts o;

	flush_interval(d, "SIGHUP");
	if (!d->config) {
		log_msg(LOG_INFO, "SIGHUP: no --config file to re-read; interval restarted");
		return;
	}
	if (daemon_opts_copy(&o, &d->o) < 0)
		return;
	if (daemon_read_config(d->config, d->cmdline, &o) < 0 || daemon_opts_check(&o) < 0 ||
	    daemon_check_output(o.output) < 0 || keep_push_settings(d, &o) < 0) {
		daemon_opts_free(&o);
		log_msg(LOG_ERR, "SIGHUP: %s not applied; the configuration stays as it was",
			d->config);
		return;
	}
	if (!d->o.metrics != !o.metrics ||
	    (o.metrics && strcmp(o.metrics, d->o.metrics))) {
		daemon_metrics_stop(d->metrics);
		d->metrics = NULL;
		if (o.metrics && (daemon_metrics_listen(o.metrics, &d->metrics) < 0 ||
				  daemon_metrics_run(d->metrics) < 0)) {
			daemon_metrics_stop(d->metrics);
			d->metrics = NULL;
			log_msg(LOG_ERR, "SIGHUP: no metrics served");
		}
	}
	daemon_opts_free(&d->o);
	d->o = o;
	if (d->o.offcpu && !(d->info.features & TAPROOT_FEAT_SCHED_EVENTS)) {
		log_msg(LOG_ERR, "SIGHUP: events offcpu: the module has no switch and waking "
			"records: off-CPU profiles stay off");
		d->o.offcpu = false;
	}
	configure_module(d);
	configure_running(d);
	/* Labels, events and the stack cap belong to the pipeline: a new one. */
	if (d->pl)
		new_pipeline(d, d->pl_freq);
	log_msg(LOG_INFO, "SIGHUP: %s re-read: output %s, interval %lu s, retain %lu",
		d->config, d->o.output, d->o.interval, d->o.retain);
	d->next_write = tp_clock_s(CLOCK_MONOTONIC) + (double)d->o.interval;
}

/* ------------------------------------------------------------ main */

/*
 * Fetch debug files when there are servers to ask (--debuginfod, else
 * $DEBUGINFOD_URLS). Without libdebuginfod, frames go unnamed as before.
 * Its thread starts here, after detaching and before any other thread.
 */
static void start_debuginfod(struct daemon *d)
{
	struct taproot_debuginfod_opts o;
	const char *env = getenv("DEBUGINFOD_URLS");
	int err;

	if (!d->o.debuginfod && (!env || !env[0]))
		return;
	taproot_debuginfod_opts_default(&o);
	o.urls = d->o.debuginfod;
	err = taproot_debuginfod_new(&o, &d->debuginfod);
	if (err < 0)
		log_msg(LOG_WARNING, "%s: binaries without symbols here stay unnamed",
			taproot_errmsg(err));
	else
		log_msg(LOG_INFO, "debuginfod: fetching debug files from %s",
			o.urls ? o.urls : env);
}

/*
 * --push: check its settings and read its secrets before detaching (an
 * error is the exit status); the thread starts after.
 */
static int new_push(struct daemon *d)
{
	struct utsname uts;
	struct daemon_push_config c = {
		.url = d->o.push,
		.bearer_file = d->o.push_bearer_file,
		.basic_file = d->o.push_basic_file,
		.tenant = d->o.push_tenant,
		.timeout_s = d->o.push_timeout,
		.spool_bytes = (uint64_t)d->o.push_spool_mb << 20,
		.output = d->o.output,
		.hostname = d->hostname,
		.kernel_release = uts.release,
		.labels = &d->o.labels,
	};

	if (!d->o.push)
		return 0;
	if (uname(&uts) < 0)
		uts.release[0] = '\0';
	if (gethostname(d->hostname, sizeof(d->hostname) - 1) < 0)
		d->hostname[0] = '\0';
	return daemon_push_new(&c, &d->push);
}

/* Signals through a signalfd, blocked from the start: none is lost. */
static int signal_fd(void)
{
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		log_msg(LOG_ERR, "signals: %s", strerror(errno));
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);
	return sfd;
}

/*
 * The module: its control family, its session notifications, and that it
 * can give what the options ask. 0, or -1 after logging why not.
 */
static int open_module(struct daemon *d)
{
	int err = taproot_nl_open(&d->nl);

	if (err == 0)
		err = taproot_nl_get_info(d->nl, &d->info);
	if (err == 0)
		err = taproot_nl_subscribe(&d->sub);
	if (err < 0) {
		log_msg(LOG_ERR, "%s", taproot_errmsg(err));
		return -1;
	}
	log_module(&d->info);
	if (d->o.offcpu && !(d->info.features & TAPROOT_FEAT_SCHED_EVENTS)) {
		log_msg(LOG_ERR, "--events offcpu: the loaded taproot module has no switch and "
			"waking records (feature sched-events): load a module built from this "
			"version");
		return -1;
	}
	if (d->o.ustack_private && !(d->info.features & TAPROOT_FEAT_UNWIND)) {
		log_msg(LOG_ERR, "ustack-private: the loaded taproot module does not unwind user "
			"stacks (feature unwind): load a module built from this version");
		return -1;
	}
	err = taproot_ksyms_load(NULL, &d->ksyms);
	if (err < 0)
		log_msg(LOG_WARNING, "kernel frames stay unnamed: %s", taproot_errmsg(err));
	return 0;
}

/* How long poll() may wait: up to the next write, look at the rate or probe. */
static int poll_timeout(const struct daemon *d, double now)
{
	int timeout = (int)((d->next_write - now) * 1000) + 1;

	if (timeout > 1000)
		timeout = 1000;
	if (d->running && d->o.offcpu && d->o.sched_budget) {
		/* Up to the next look at the switch rate: adapt_selection(). */
		int t = (int)((d->adapt_at + ADAPT_S - now) * 1000) + 1;

		if (t < timeout)
			timeout = t < 1 ? 1 : t;
	}
	return timeout;
}

/* The work due at @now: read the rings, adapt, probe, write the interval. */
static void tick(struct daemon *d, double now)
{
	consume(d);
	full_tables_drained(d, now);
	adapt_selection(d, now);
	if (!d->running && now >= d->next_probe) {
		check_module(d);
		d->next_probe = now + 1;
	}
	if (now >= d->next_write) {
		flush_interval(d, "interval");
		while (d->next_write <= now)
			d->next_write += (double)d->o.interval;
	}
	if (d->live_until && now > d->live_until) {
		/* taprootctl top went away: no more lookups per frame. */
		if (d->pl)
			taproot_pipeline_live(d->pl, false);
		d->live_until = d->live_taken = 0;
	}
	if (d->metrics && now >= d->next_publish) {
		struct daemon_state st;

		fill_state(d, &st);
		daemon_metrics_publish(d->metrics, &st);
		d->next_publish = now + 1;
	}
}

/*
 * SIGUSR1, from taprootctl top: the live top since the last request, into
 * its file beside the state file (topfile.h). The first request turns the
 * live top on (its file then holds nothing yet); it stays on while
 * requests come, LIVE_LINGER_S after the last at most. A request drains
 * the module's counts and reads the rings first: the file is as fresh as
 * taprootd can make it.
 */
static void live_request(struct daemon *d)
{
	struct taproot_pipeline_live_take t = { 0 };
	double now = tp_clock_s(CLOCK_MONOTONIC);
	struct topfile f = { 0 };
	int err;

	if (!d->top_path && !(d->top_path = topfile_path(d->state_path)))
		return;
	if (d->pl && !d->live_until && taproot_pipeline_live(d->pl, true) < 0)
		return;
	d->live_until = now + LIVE_LINGER_S;
	drain_counts(d);
	consume(d);
	if (d->pl && taproot_pipeline_live_take(d->pl, &t) < 0)
		return;
	snprintf(f.host, sizeof(f.host), "%s", d->hostname);
	f.time_ns = tp_clock_ns(CLOCK_REALTIME);
	f.window_ns = d->live_taken ? (uint64_t)((now - d->live_taken) * 1e9) : 0;
	f.sampling = d->running;
	f.samples = t.samples;
	f.other = t.other;
	f.n = t.n < TOPFILE_MAX_FNS ? t.n : TOPFILE_MAX_FNS;
	f.fns = f.n ? calloc(f.n, sizeof(f.fns[0])) : NULL;
	if (f.n && !f.fns)
		return;
	for (size_t i = 0; i < f.n; i++)
		f.fns[i] = (struct topfile_fn){ .self = t.fns[i].self, .total = t.fns[i].total,
						.group = (char *)t.fns[i].group,
						.name = (char *)t.fns[i].name };
	err = topfile_write(d->top_path, &f);
	free(f.fns);
	if (err < 0)
		log_msg(LOG_WARNING, "live top: %s: %s", d->top_path, strerror(-err));
	d->live_taken = now;
}

/*
 * Until SIGTERM or SIGINT (exit status 0) or a failed poll (1): the
 * rings, the session's notifications, SIGHUP and SIGUSR1.
 */
static int run(struct daemon *d, int sfd)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[3];
	int n;

	for (;;) {
		double now = tp_clock_s(CLOCK_MONOTONIC);

		tick(d, now);
		pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = taproot_nl_sub_fd(d->sub), .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = d->ring ? taproot_ring_fd(d->ring) : -1,
					  .events = POLLIN };
		n = poll(pfd, 3, poll_timeout(d, now));
		if (n < 0 && errno != EINTR) {
			log_msg(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (n > 0 && (pfd[1].revents & POLLIN))
			read_notifications(d);
		if (n > 0 && (pfd[0].revents & POLLIN) &&
		    read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				reload(d);
				continue;
			}
			if (si.ssi_signo == SIGUSR1) {
				live_request(d);
				continue;
			}
			log_msg(LOG_INFO, "%s received: writing the last profile and exiting",
				si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
			return 0;
		}
	}
}

/* Stop what taprootd started, write the last interval, let go of all. */
static void finish(struct daemon *d)
{
	int err;

	if (d->started_it) {
		err = taproot_nl_stop(d->nl);
		if (err < 0 && err != -EALREADY)
			log_msg(LOG_WARNING, "stopping sampling: %s", taproot_errmsg(err));
	}
	consume(d);
	if (d->ring)
		session_stopped(d);
	flush_interval(d, "exit");
	unlink(d->state_path);
	if (d->top_path)
		unlink(d->top_path);
}

static void release(struct daemon *d)
{
	daemon_push_stop(d->push);
	daemon_metrics_stop(d->metrics);
	taproot_pipeline_free(d->pl);
	taproot_timeline_free(d->timeline);
	taproot_debuginfod_free(d->debuginfod);
	free_labels(d);
	taproot_ksyms_free(d->ksyms);
	taproot_nl_sub_close(d->sub);
	taproot_nl_close(d->nl);
	daemon_opts_free(&d->o);
	free(d->top_path);
	log_close();
}

int main(int argc, char **argv)
{
	struct daemon d = { .state_path = TAPROOTD_STATE_DEFAULT };
	bool foreground = false;
	int ret, sfd, status;

	daemon_opts_init(&d.o);
	ret = parse_options(argc, argv, &d, &foreground);
	if (ret < 0 && d.config && daemon_read_config(d.config, d.cmdline, &d.o) < 0)
		ret = 2;
	if (ret < 0 && daemon_opts_check(&d.o) < 0)
		ret = 2;
	if (ret < 0 && (!d.o.output || daemon_check_output(d.o.output) < 0))
		ret = 1;
	if (ret < 0 && new_push(&d) < 0)
		ret = 1;
	if (ret < 0 && ((sfd = signal_fd()) < 0 || open_module(&d) < 0))
		ret = 1;
	/* Bound before detaching, so that a taken port is the exit status... */
	if (ret < 0 && d.o.metrics && daemon_metrics_listen(d.o.metrics, &d.metrics) < 0)
		ret = 1;
	if (ret < 0 && !foreground && daemon(1, 1) < 0) {
		log_msg(LOG_ERR, "detaching: %s", strerror(errno));
		ret = 1;
	}
	/* ... served after it: a fork keeps no thread. */
	if (ret < 0)
		start_debuginfod(&d);
	if (ret < 0 && d.metrics && daemon_metrics_run(d.metrics) < 0)
		ret = 1;
	if (ret < 0 && d.push && daemon_push_start(d.push) < 0)
		ret = 1;
	if (ret >= 0) {
		release(&d);
		return ret;
	}

	d.started = wall_s();
	/* Temporary files a killed taprootd left behind, then the retention. */
	daemon_retain(d.o.output, d.o.retain, true, d.push != NULL);
	d.last_stamp = daemon_newest_stamp(d.o.output, (time_t)d.started + STAMP_AHEAD_MAX_S);
	configure_module(&d);
	start_if_asked(&d);
	resync(&d);
	configure_running(&d);
	if (!d.running)
		log_msg(LOG_INFO, "sampling is stopped: waiting for it to start "
			"('taprootctl start')");
	d.next_write = tp_clock_s(CLOCK_MONOTONIC) + (double)d.o.interval;
	write_state(&d);

	status = run(&d, sfd);
	finish(&d);
	release(&d);
	return status;
}
