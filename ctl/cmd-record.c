// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl record: one profiling session, written as DIR/cpu.pb.gz and,
 * with --events offcpu, DIR/offcpu.pb.gz, DIR/offwake.pb.gz and
 * DIR/schedlat.pb.gz.
 *
 *   record [--freq HZ] [--duration S] [--pid PID... | --all] [--ustack BYTES]
 *          [--ring-pages N] [--buffer-mb MB] [--label-tid] [--label-cpu]
 *          [--stats-json FILE] [--events cpu,offcpu] [--sched-one-in N] [--min-block US]
 *          [--trace FILE [--trace-window S] [--trace-pid PID]...]
 *          [--critical-path TID|NAME|command] [--raw FILE] [--flamegraph FILE]
 *          [--symbolize local|none] --output DIR [-- COMMAND ARGS...]
 *
 * Off-CPU profiles need the module's switch and waking records
 * (TAPROOT_FEAT_SCHED_EVENTS); fork, exec and exit records are turned on
 * whenever the module offers them (TAPROOT_FEAT_PROC_EVENTS), since they
 * keep the process model right (exec, pid reuse).
 *
 * It configures the module (saving its configuration first), becomes the
 * consumer of the rings, starts sampling, feeds every record to the
 * pipeline (lib/pipeline/), and at the end stops sampling, drains the
 * rings, restores the configuration and writes the profile. SIGINT and
 * SIGTERM end the session early: what was collected is still written.
 *
 * With a COMMAND, it is forked stopped on a pipe until the module filters
 * on its pid, then released. When the module follows children itself
 * (TAPROOT_FEAT_FOLLOW), the filter has TAPROOT_CFG_F_FOLLOW: every
 * descendant is sampled from its fork, however short it lives. Else its
 * descendants are followed by polling /proc/PID/task/TID/children every
 * FOLLOW_MS and adding their TGIDs to the filter, so a new child is sampled
 * from at most about FOLLOW_MS after its fork. Either way a thread of its
 * own with its own netlink socket does it (with the module following, it
 * only reads how many processes are followed), so that a slow stretch of
 * the pipeline (compiling the unwind tables of a large library takes
 * seconds under emulation) does not delay it. The session ends when
 * COMMAND exits, and record exits with its status.
 *
 * With --raw FILE it also keeps what the pipeline was fed (lib/raw/rawfile.c):
 * every record as the ring gave it, the end of each read of the rings, the
 * kallsyms text, and what the process model read of /proc (and the build
 * IDs of the files it opened) at the point of the stream where it read it,
 * so that `taprootctl report FILE` rebuilds the same profiles later.
 *
 * With --trace FILE or --critical-path, the pipeline also keeps the
 * session's timeline (lib/profile/timeline.h): every off-CPU interval, so
 * the module must select them all (--sched-one-in 1), and every sample.
 * FILE gets it as a Chrome trace; DIR/critpath.pb.gz the critical path of
 * the thread named, of the main threads of the processes named, or of the
 * COMMAND's first thread.
 *
 * With --flamegraph FILE, the CPU profile is also written as a flame graph
 * page (ctl/flamegraph.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/taproot.h>

#include "flamegraph.h"
#include "taprootctl.h"
#include "util/clock.h"

#define RECORD_FREQ_DEFAULT	99	/* Hz: a short session wants more than 19 */
#define RECORD_BUFFER_MB_MAX	65536	/* --buffer-mb */
_Static_assert(TAPROOT_RING_BUFFER_DEFAULT == 64U << 20, "record --help says 64");
#define RECORD_DURATION_DEFAULT	10.0	/* s, without a command */
#define RECORD_POLL_MS		100	/* longest wait between two reads of the rings */
#define RECORD_DRAIN_S		1.0	/* longest wait between two drains of the counts */
#define RECORD_EXEC_WAIT_MS	2000	/* for the released command's exec */
#define FOLLOW_MS		100	/* how often a command's children are looked for */
#define PROGRESS_TTY_MS		500
#define PROGRESS_LINE_MS	5000

static volatile sig_atomic_t record_signal;

static void record_on_signal(int sig)
{
	record_signal = sig;
}

/* record --unwind: who unwinds the user stacks */
enum record_unwind {
	RECORD_UNWIND_KERNEL,		/* the module, from uploaded tables */
	RECORD_UNWIND_USER,		/* taprootctl, from the snapshots */
	RECORD_UNWIND_VERIFY,		/* both, compared */
};

struct record_opts {
	uint32_t freq;
	double duration;		/* 0: none given */
	uint32_t pids[TAPROOT_MAX_TGIDS];
	unsigned int nr_pids;
	bool all;
	bool ustack_set;
	uint32_t ustack;
	uint32_t ring_pages;		/* 0: the module's */
	uint32_t buffer_mb;		/* the reader thread's buffers, 0: none */
	bool label_tid, label_cpu;
	bool cpu, offcpu;		/* --events */
	uint32_t sched_one_in;		/* --sched-one-in */
	uint64_t min_block_ns;		/* --min-block, a userspace filter */
	const char *output;
	const char *stats_json;
	const char *raw;		/* --raw FILE, NULL: none */
	const char *flamegraph;		/* --flamegraph FILE, NULL: none */
	enum record_unwind unwind;	/* --unwind */
	bool symbolize_none;		/* --symbolize none */
	bool ustack_private;		/* --ustack-private */
	/*
	 * --count: 1 on, 0 off; -1 unsaid, then 2: on where it applies (the
	 * module's walks, and no --raw, --trace or --critical-path).
	 */
	int count;
	char **command;			/* NULL: none */
	/* --trace, --critical-path...; and the timeline they make, once started. */
	struct timeline_opts tl;
};

struct record {
	struct record_opts o;
	struct taproot_nl *nl;
	struct taproot_ring *ring;
	struct taproot_pipeline *pl;
	struct taproot_ksyms *ksyms;
	struct taproot_config saved;
	struct taproot_raw_writer *raw;	/* --raw */
	struct flamegraph_page *page;	/* --flamegraph's template, read at the start */
	struct taproot_procs_opts procs_opts;
	struct taproot_procs_observer observer;
	bool config_changed;
	bool started;
	char hostname[65];		/* a label of every sample */
	struct taproot_debuginfod *debuginfod;	/* with $DEBUGINFOD_URLS */

	pid_t child;			/* 0: no command */
	int child_status;		/* waitpid()'s, when child_done */
	bool child_done;
	uint32_t tgids[TAPROOT_MAX_TGIDS];	/* the filter while following */
	unsigned int nr_tgids;
	bool follow_full_warned;
	uint64_t followed;		/* children added to the filter; with
					   module_follows, the most followed at once */
	bool module_follows;		/* TAPROOT_CFG_F_FOLLOW does it */
	bool counting;			/* TAPROOT_CFG_F_COUNT: drained as we go */
	double last_drain;		/* CLOCK_MONOTONIC s of the last drain */
	bool follow_seen;		/* follow_full_base is read */
	uint64_t follow_full_base;	/* the module's FOLLOW_FULL at the start */
	uint64_t follow_full;		/* forks not followed since, the set full */
	struct taproot_nl *follow_nl;	/* the follower thread's */
	pthread_t follower;
	bool follower_running;
	atomic_bool follow_stop;

	uint64_t lost_base;		/* rings' lost counters at the start */
	uint64_t lost;
	uint64_t corrupt;
	double t0, t_end, secs;

	struct taproot_info info;	/* the module's, at the start */
	char comment[256];		/* the profiles' */
	int release;			/* the stopped command's pipe, -1: none */
	int execd;			/* EOF once it exec'd, its errno if exec
					   failed; -1: none, or read */
	int exec_err;			/* the command could not run: no profile */
	bool tty;			/* stderr is a terminal: progress in place */
	bool signals_caught;
	struct sigaction old_int, old_term;
};

/* ------------------------------------------------------------ helpers */

static int add_pids(struct record_opts *o, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int ret = EXIT_OK;
	uint32_t pid;

	if (!copy)
		return p_err("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		ret = parse_u32_arg("record", "--pid", tok, 1, INT32_MAX, &pid);
		if (ret != EXIT_OK)
			break;
		if (o->nr_pids == TAPROOT_MAX_TGIDS) {
			ret = p_usage("'record --pid': at most %d processes", TAPROOT_MAX_TGIDS);
			break;
		}
		o->pids[o->nr_pids++] = pid;
	}
	free(copy);
	return ret;
}

/* --events LIST: a comma list of profile kinds, cpu and offcpu. */
static int parse_events(const char *list, struct record_opts *o)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int ret = EXIT_OK;

	if (!copy)
		return p_err("out of memory");
	o->cpu = o->offcpu = false;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "cpu")) {
			o->cpu = true;
		} else if (!strcmp(tok, "offcpu")) {
			o->offcpu = true;
		} else {
			ret = p_usage("'record --events': unknown kind '%s' (cpu, offcpu)", tok);
			break;
		}
	}
	if (ret == EXIT_OK && !o->cpu && !o->offcpu)
		ret = p_usage("'record --events' needs cpu, offcpu or both");
	free(copy);
	return ret;
}

static int parse_unwind(const char *val, struct record_opts *o)
{
	static const char *const names[] = {
		[RECORD_UNWIND_KERNEL] = "kernel",
		[RECORD_UNWIND_USER] = "user",
		[RECORD_UNWIND_VERIFY] = "verify",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(val, names[i])) {
			o->unwind = (enum record_unwind)i;
			return EXIT_OK;
		}
	return p_usage("'record --unwind' needs kernel, user or verify, not '%s'", val);
}

/* The options that take a value, as --NAME VALUE or --NAME=VALUE. */
static const char *const record_valued[] = {
	"--freq", "--duration", "--pid", "--ustack", "--ring-pages", "--events",
	"--sched-one-in", "--min-block", "--stats-json", "--raw", "--output", "-o",
	"--unwind", "--buffer-mb", "--trace", "--trace-window", "--trace-pid", "--critical-path",
	"--count", "--flamegraph", "--symbolize",
};

static bool takes_value(const char *name)
{
	for (size_t i = 0; i < sizeof(record_valued) / sizeof(record_valued[0]); i++)
		if (!strcmp(name, record_valued[i]))
			return true;
	return false;
}

/* --all, --label-tid, --label-cpu; -ENOENT: @name is none of them. */
static int set_flag(const char *name, struct record_opts *o)
{
	if (!strcmp(name, "--all"))
		o->all = true;
	else if (!strcmp(name, "--label-tid"))
		o->label_tid = true;
	else if (!strcmp(name, "--label-cpu"))
		o->label_cpu = true;
	else if (!strcmp(name, "--ustack-private"))
		o->ustack_private = true;
	else
		return -ENOENT;
	return EXIT_OK;
}

/* Option @name (one of record_valued) with its value @val. */
static int set_value(const char *name, const char *val, struct record_opts *o)
{
	uint32_t us;
	int ret;

	ret = timeline_opts_set("record", name, val, &o->tl);
	if (ret != -ENOENT)
		return ret;
	if (!strcmp(name, "--freq"))
		return parse_u32_arg("record", name, val, 1, TAPROOT_FREQ_MAX, &o->freq);
	if (!strcmp(name, "--duration"))
		return parse_seconds_arg("record", name, val, &o->duration);
	if (!strcmp(name, "--pid"))
		return add_pids(o, val);
	if (!strcmp(name, "--ustack")) {
		ret = parse_u32_arg("record", name, val, 0, TAPROOT_USTACK_MAX, &o->ustack);
		if (ret == EXIT_OK && o->ustack % 8)
			return p_usage("'record --ustack' needs a multiple of 8, not '%s'", val);
		o->ustack_set = true;
		return ret;
	}
	if (!strcmp(name, "--ring-pages")) {
		ret = parse_u32_arg("record", name, val, TAPROOT_RING_PAGES_MIN,
				    TAPROOT_RING_PAGES_MAX, &o->ring_pages);
		if (ret == EXIT_OK && (o->ring_pages & (o->ring_pages - 1)))
			return p_usage("'record --ring-pages' needs a power of two, not '%s'", val);
		return ret;
	}
	if (!strcmp(name, "--buffer-mb"))
		return parse_u32_arg("record", name, val, 0, RECORD_BUFFER_MB_MAX, &o->buffer_mb);
	if (!strcmp(name, "--unwind"))
		return parse_unwind(val, o);
	if (!strcmp(name, "--count")) {
		if (strcmp(val, "on") && strcmp(val, "off"))
			return p_usage("'record --count' needs on or off, not '%s'", val);
		o->count = !strcmp(val, "on");
		return EXIT_OK;
	}
	if (!strcmp(name, "--events"))
		return parse_events(val, o);
	if (!strcmp(name, "--symbolize"))
		return parse_symbolize_arg("record", val, &o->symbolize_none);
	if (!strcmp(name, "--sched-one-in"))
		return parse_u32_arg("record", name, val, 1, TAPROOT_SCHED_ONE_IN_MAX,
				     &o->sched_one_in);
	if (!strcmp(name, "--min-block")) {
		ret = parse_u32_arg("record", name, val, 0, UINT32_MAX, &us);
		o->min_block_ns = (uint64_t)us * 1000;
		return ret;
	}
	if (!strcmp(name, "--stats-json"))
		o->stats_json = val;
	else if (!strcmp(name, "--raw"))
		o->raw = val;
	else if (!strcmp(name, "--flamegraph"))
		o->flamegraph = val;
	else
		o->output = val;
	return EXIT_OK;
}

/*
 * Each --pid a process that exists now, named by its process id: the
 * module samples by process, so a thread's id would select nothing.
 */
static int check_pids(const struct record_opts *o)
{
	for (unsigned int i = 0; i < o->nr_pids; i++) {
		char path[32], line[128];
		unsigned long tgid = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", o->pids[i]);
		f = fopen(path, "re");
		if (!f && errno == ENOENT)
			return p_err("record --pid %" PRIu32 ": no such process", o->pids[i]);
		if (!f)
			return p_err("record --pid %" PRIu32 ": %s: %s", o->pids[i], path,
				     strerror(errno));
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Tgid: %lu", &tgid) == 1)
				break;
		fclose(f);
		if (tgid && tgid != o->pids[i])
			return p_err("record --pid %" PRIu32 ": a thread of process %lu: give the process's id",
				     o->pids[i], tgid);
	}
	return EXIT_OK;
}

/* The options together; the defaults that depend on others. */
static int check_args(struct record_opts *o)
{
	if (!o->output)
		return p_usage("'record' needs --output DIR");
	if (o->command && (o->nr_pids || o->all))
		return p_usage("'record': a COMMAND is profiled alone: no --pid or --all with it");
	if (o->nr_pids && o->all)
		return p_usage("'record': --pid and --all exclude each other");
	if (!o->command && !o->nr_pids)
		o->all = true;
	if (!o->offcpu && (o->sched_one_in || o->min_block_ns))
		return p_usage("'record': --sched-one-in and --min-block need --events offcpu");
	if (o->flamegraph && !o->cpu)
		return p_usage("'record --flamegraph' draws the CPU profile: it needs --events cpu");
	if (timeline_opts_check("record", &o->tl) != EXIT_OK)
		return EXIT_USAGE;
	if (o->tl.critical && !strcmp(o->tl.critical, "command") && !o->command)
		return p_usage("'record --critical-path command' needs a COMMAND");
	if (timeline_opts_wanted(&o->tl)) {
		/* The timeline shows a thread running wherever no interval was recorded. */
		if (!o->offcpu)
			return p_usage("'record': --trace and --critical-path need --events offcpu "
				       "(and cpu, for what threads ran)");
		if (o->sched_one_in > 1)
			return p_usage("'record': --trace and --critical-path need every off-CPU "
				       "interval: not with --sched-one-in %" PRIu32, o->sched_one_in);
		o->sched_one_in = 1;
	}
	if (!o->sched_one_in)
		o->sched_one_in = TAPROOT_SCHED_ONE_IN_DEFAULT;
	if (o->ustack_private && o->unwind == RECORD_UNWIND_USER)
		return p_usage("'record --ustack-private' needs the module to unwind: not with --unwind user");
	/* Counts are sums: what needs each sample's record cannot have them. */
	if (o->count == 1 && (o->unwind != RECORD_UNWIND_KERNEL || o->raw ||
			      timeline_opts_wanted(&o->tl)))
		return p_usage("'record --count on' needs --unwind kernel, and no --raw, --trace "
			       "or --critical-path (they need every sample)");
	if (o->count == -1)
		o->count = o->unwind == RECORD_UNWIND_KERNEL && !o->raw &&
			   !timeline_opts_wanted(&o->tl) ? 2 : 0;
	return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	int i, ret;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		size_t len = eq ? (size_t)(eq - a) : strlen(a);
		char name[32];

		if (!strcmp(a, "--")) {
			if (i + 1 >= argc)
				return p_usage("'record --' needs a COMMAND after it");
			o->command = &argv[i + 1];
			break;
		}
		if (a[0] != '-')
			return p_usage("'record': unexpected argument '%s' (a command goes after '--')",
				       a);
		if (len >= sizeof(name))
			return p_usage("'record': unknown option '%s'", a);
		memcpy(name, a, len);
		name[len] = '\0';
		if (!takes_value(name)) {
			ret = set_flag(name, o);
			if (ret == -ENOENT)
				return p_usage("'record': unknown option '%s'", a);
			if (eq)
				return p_usage("'record %s' takes no value", name);
			continue;
		}
		if (!eq && i + 1 >= argc)
			return p_usage("'record %s' needs a value", name);
		ret = set_value(name, eq ? eq + 1 : argv[++i], o);
		/* --pid 1 2 3: more pids may follow as separate words */
		while (ret == EXIT_OK && !strcmp(name, "--pid") && i + 1 < argc &&
		       argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
			ret = add_pids(o, argv[++i]);
		if (ret != EXIT_OK)
			return ret;
	}
	return check_args(o);
}

/* ------------------------------------------------------------ the rings */

static int on_discard(const struct taproot_rec_header *h, unsigned int cpu, void *arg)
{
	return 0;
}

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	struct record *r = arg;

	r->corrupt++;
	fprintf(stderr, "taprootctl: record: ring of CPU %u corrupt at %" PRIu64 ": %s; "
		"its unread bytes were dropped\n", cpu, pos, why);
}

/* ------------------------------------------------------ raw capture */

static void raw_on_read(void *arg, int pid, enum taproot_proc_file file, int err,
			const char *data, size_t len)
{
	struct record *r = arg;

	/* Errors are sticky in the writer: taproot_raw_writer_finish() reports them. */
	taproot_raw_write_proc(r->raw, pid, file, err, data, len);
}

static void raw_on_elf(void *arg, uint64_t dev, uint64_t ino, const char *path,
		       const uint8_t *build_id, size_t build_id_len)
{
	struct record *r = arg;

	taproot_raw_write_elf(r->raw, dev, ino, path, build_id, build_id_len);
}

/*
 * The record goes to the pipeline first, then to the file: the /proc reads
 * its handling made are written before it, where a replay needs them.
 */
static int raw_on_record(const struct taproot_rec_header *h, unsigned int cpu, void *arg)
{
	struct record *r = arg;

	taproot_pipeline_add_record(r->pl, h, cpu);
	taproot_raw_write_record(r->raw, cpu, h);
	return 0;
}

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg);

/* One read of the rings into the pipeline (and the raw file). */
static int consume(struct record *r)
{
	static const struct taproot_ring_ops ops = {
		.record = raw_on_record,
		.corrupt = on_corrupt,
	};
	int n;

	if (!r->raw)
		return taproot_pipeline_consume(r->pl, r->ring, on_corrupt, r);
	n = taproot_ring_consume(r->ring, &ops, r);
	taproot_pipeline_end_round(r->pl);
	taproot_raw_write_round(r->raw);
	return n;
}

/*
 * The kernel's symbols, from the text the raw file keeps: read once, so
 * that the file holds exactly what the pipeline used.
 */
static int load_ksyms_raw(struct record *r)
{
	char *text;
	size_t len;
	int err;

	err = taproot_ksyms_load_text(NULL, TAPROOT_RAW_KSYMS_MAX, &r->ksyms, &text, &len);
	if (!err)
		taproot_raw_write_ksyms(r->raw, text, len);
	free(text);
	return err;
}

/* ------------------------------------------------- following children */

static bool tgid_known(const struct record *r, uint32_t pid)
{
	for (unsigned int i = 0; i < r->nr_tgids; i++)
		if (r->tgids[i] == pid)
			return true;
	return false;
}

/* Add the children of every thread of @pid to r->tgids; true if any was new. */
static bool add_children(struct record *r, uint32_t pid)
{
	char path[64], buf[4096];
	struct dirent *de;
	bool added = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		ssize_t n;
		char *s, *end;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/task/%.16s/children", pid,
			 de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (s = buf; *s; s = end) {
			unsigned long c = strtoul(s, &end, 10);

			if (end == s)
				break;
			if (!c || c > INT32_MAX || tgid_known(r, (uint32_t)c))
				continue;
			if (r->nr_tgids == TAPROOT_MAX_TGIDS) {
				if (!r->follow_full_warned)
					fprintf(stderr, "taprootctl: record: more than %d processes to "
						"follow: new ones are not sampled\n", TAPROOT_MAX_TGIDS);
				r->follow_full_warned = true;
				break;
			}
			r->tgids[r->nr_tgids++] = (uint32_t)c;
			r->followed++;
			added = true;
		}
	}
	closedir(d);
	return added;
}

/*
 * With the module following (TAPROOT_CFG_F_FOLLOW): how many processes it
 * follows now, the most so far, and the forks it could not follow.
 */
static void follow_count(struct record *r)
{
	struct taproot_cpu_stats *cpus;
	struct taproot_module_stats ms;
	bool running;
	size_t nr;
	int err;

	err = taproot_nl_get_stats_all(r->follow_nl, &running, &ms, &cpus, &nr);
	if (err < 0 || !ms.has_follow)
		return;
	free(cpus);
	if (ms.followed > r->followed)
		r->followed = ms.followed;
	if (!r->follow_seen) {
		r->follow_full_base = ms.follow_full;
		r->follow_seen = true;
	}
	r->follow_full = ms.follow_full - r->follow_full_base;
	if (r->follow_full && !r->follow_full_warned) {
		fprintf(stderr, "taprootctl: record: the module follows %d processes at most: "
			"new ones are not sampled\n", TAPROOT_FOLLOW_MAX);
		r->follow_full_warned = true;
	}
}

/*
 * Look for new descendants of the command and put them in the module's
 * filter; drop processes that are gone to make room.
 */
static void follow_children(struct record *r)
{
	struct taproot_config cfg = { .set = TAPROOT_CONFIG_TGIDS };
	bool changed = false;
	unsigned int i, n;
	int err;

	if (r->module_follows) {
		follow_count(r);
		return;
	}
	for (i = 0, n = 0; i < r->nr_tgids; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/proc/%" PRIu32, r->tgids[i]);
		if (i == 0 || access(path, F_OK) == 0)
			r->tgids[n++] = r->tgids[i];
		else
			changed = true;
	}
	r->nr_tgids = n;
	for (i = 0; i < r->nr_tgids; i++)	/* grows while it runs: grandchildren too */
		changed |= add_children(r, r->tgids[i]);
	if (!changed)
		return;
	cfg.nr_tgids = r->nr_tgids;
	memcpy(cfg.tgids, r->tgids, r->nr_tgids * sizeof(cfg.tgids[0]));
	err = taproot_nl_set_config(r->follow_nl, &cfg);
	if (err < 0)
		fprintf(stderr, "taprootctl: record: following children: %s\n",
			taproot_errmsg(err));
}

/*
 * The follower thread: every FOLLOW_MS, new descendants into the filter.
 * It alone touches r->tgids, r->followed, r->follow_* and r->follow_nl
 * until joined.
 */
static void *follower(void *arg)
{
	struct record *r = arg;
	struct timespec ts = { 0, FOLLOW_MS * 1000000L };

	while (!atomic_load(&r->follow_stop)) {
		follow_children(r);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int start_follower(struct record *r)
{
	int err = taproot_nl_open(&r->follow_nl);

	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	if (r->module_follows)
		follow_count(r);	/* FOLLOW_FULL before the command runs */
	atomic_store(&r->follow_stop, false);
	err = pthread_create(&r->follower, NULL, follower, r);
	if (err) {
		taproot_nl_close(r->follow_nl);
		r->follow_nl = NULL;
		return p_err("cannot start a thread: %s", strerror(err));
	}
	r->follower_running = true;
	return EXIT_OK;
}

static void stop_follower(struct record *r)
{
	if (r->follower_running) {
		atomic_store(&r->follow_stop, true);
		pthread_join(r->follower, NULL);
		r->follower_running = false;
		/* The module forgets at stop: the last count comes first. */
		if (r->module_follows)
			follow_count(r);
	}
	taproot_nl_close(r->follow_nl);
	r->follow_nl = NULL;
}

/* ------------------------------------------------------------ the command */

/*
 * Fork @argv stopped: the child waits until a byte arrives on the pipe
 * (*@release is its write end), then execs. EOF without a byte: exit 127.
 * *@execd reads EOF once the child exec'd (its write end is the child's,
 * closed on exec), or exec's errno when it could not, before exit 127.
 */
static pid_t spawn_stopped(char **argv, int *release, int *execd)
{
	int go[2], done[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(done, O_CLOEXEC) < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid == 0) {
		char c;
		int err;

		close(go[1]);
		close(done[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		err = errno;
		if (write(done[1], &err, sizeof(err)) != sizeof(err))
			fprintf(stderr, "taprootctl: record: cannot run '%s': %s\n", argv[0],
				strerror(errno));
		_exit(127);
	}
	pid = pid < 0 ? -errno : pid;
	close(go[0]);
	close(done[1]);
	if (pid < 0) {
		close(go[1]);
		close(done[0]);
		return pid;
	}
	*release = go[1];
	*execd = done[0];
	return pid;
}

/*
 * Whether the released command exec'd, waiting @ms at most: sets
 * r->exec_err when it could not. The samples it gave as a copy of
 * taprootctl, before, are kept; but were they consumed before the exec,
 * the uploader would read this program's mappings in /proc and compile
 * its libraries' tables for the module, work lost a moment later. Still
 * unknown after @ms, it is asked again once the command has ended.
 */
static void wait_exec(struct record *r, int ms)
{
	struct pollfd p = { .fd = r->execd, .events = POLLIN };
	ssize_t len;
	int n, err;

	if (r->execd < 0)
		return;
	do {
		n = poll(&p, 1, ms);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return;
	do {
		len = read(r->execd, &err, sizeof(err));
	} while (len < 0 && errno == EINTR);
	if (len == sizeof(err))	/* atomic: written at once, below PIPE_BUF */
		r->exec_err = err > 0 ? err : EIO;
	close(r->execd);
	r->execd = -1;
}

static void reap_child(struct record *r, bool block)
{
	int st;
	pid_t p;

	if (!r->child || r->child_done)
		return;
	do {
		p = waitpid(r->child, &st, block ? 0 : WNOHANG);
	} while (p < 0 && errno == EINTR && block);
	if (p == r->child) {
		r->child_done = true;
		r->child_status = st;
	}
}

/*
 * The session is over and the command still runs: ended by the duration,
 * wait for it; by a signal, pass the signal on and wait a few seconds;
 * never released, it exits at once.
 */
static void wait_child(struct record *r)
{
	int sig = record_signal;
	double deadline = tp_clock_s(CLOCK_MONOTONIC) + 5;

	if (sig)
		kill(r->child, sig);
	for (;;) {
		reap_child(r, false);
		if (r->child_done || (sig && tp_clock_s(CLOCK_MONOTONIC) > deadline))
			return;
		if (!sig && record_signal) {	/* a signal while waiting */
			sig = record_signal;
			kill(r->child, sig);
			deadline = tp_clock_s(CLOCK_MONOTONIC) + 5;
		}
		usleep(20000);
	}
}

static int child_exit_code(const struct record *r)
{
	if (WIFEXITED(r->child_status))
		return WEXITSTATUS(r->child_status);
	if (WIFSIGNALED(r->child_status))
		return 128 + WTERMSIG(r->child_status);
	return EXIT_ERR;
}

/* ------------------------------------------------------------ output */

/*
 * One line of progress on stderr: on a terminal rewritten in place (the
 * last one, @final, ends it), elsewhere a line each time.
 */
static void progress(struct record *r, bool final)
{
	double el = tp_clock_s(CLOCK_MONOTONIC) - r->t0;
	uint64_t lost = taproot_ring_lost(r->ring) - r->lost_base;
	struct taproot_pipeline_stats st;
	char of[32] = "";

	taproot_pipeline_stats(r->pl, &st);
	/* How far along, when a duration ends the session. */
	if (r->o.duration)
		snprintf(of, sizeof(of), " of %g s", r->o.duration);
	if (!r->tty) {
		fprintf(stderr, "taprootctl record: %.1f s%s, %" PRIu64 " samples, %" PRIu64
			" lost\n", el, of, st.samples, lost);
		return;
	}
	fprintf(stderr, "\rtaprootctl record: %6.1f s%s  %8" PRIu64 " samples  ", el, of,
		st.samples);
	if (r->o.offcpu)
		fprintf(stderr, "%8" PRIu64 " intervals  ", st.causal.joined);
	fprintf(stderr, "%6" PRIu64 " lost%s\033[K%s", lost,
		r->child && !r->child_done ? "  (command running)" : "", final ? "\n" : "");
	fflush(stderr);
}

static void write_stats_json(struct record *r, FILE *f, const struct summary_info *si)
{
	struct taproot_json *j;

	if (taproot_json_new(f, &j) < 0)
		return;
	taproot_json_object_begin(j);
	taproot_json_key_u64(j, "followed", r->followed);
	if (r->module_follows)
		taproot_json_key_u64(j, "follow_full", r->follow_full);
	if (r->o.raw) {
		taproot_json_key_string(j, "raw", r->o.raw);
	}
	timeline_opts_json(j, &r->o.tl);
	if (r->child) {
		taproot_json_key(j, "command_status");
		if (r->child_done)
			taproot_json_i64(j, child_exit_code(r));
		else
			taproot_json_null(j);
	}
	summary_json(j, r->pl, si);
	taproot_json_object_end(j);
	taproot_json_free(j);
}

static void summary(struct record *r, const char *path, double secs)
{
	struct summary_info si = {
		.cmd = "record", .output = r->o.output, .path = path, .secs = secs,
		.freq = r->o.freq, .cpu = r->o.cpu, .offcpu = r->o.offcpu,
		.sched_one_in = r->o.sched_one_in, .min_block_ns = r->o.min_block_ns,
		.lost = r->lost, .corrupt = r->corrupt,
	};

	if (r->o.stats_json) {
		FILE *f = fopen_private(r->o.stats_json);

		if (!f)
			fprintf(stderr, "taprootctl: record: %s: %s\n", r->o.stats_json,
				strerror(errno));
		else {
			write_stats_json(r, f, &si);
			if (fclose(f) == EOF)
				fprintf(stderr, "taprootctl: record: %s: %s\n", r->o.stats_json,
					strerror(errno));
		}
	}
	if (json_output) {
		write_stats_json(r, stdout, &si);
		return;
	}
	summary_print_head(r->pl, &si);
	if (r->child) {
		printf("  %-10s", "command:");
		if (!r->child_done)
			printf("still running\n");
		else if (WIFEXITED(r->child_status))
			printf("exited with status %d\n", WEXITSTATUS(r->child_status));
		else if (WIFSIGNALED(r->child_status))
			printf("killed by signal %d (%s)\n", WTERMSIG(r->child_status),
			       strsignal(WTERMSIG(r->child_status)));
		if (r->followed && r->module_follows)
			printf("  %-10s%" PRIu64 " child processes followed at once at most, "
			       "by the module\n", "children:", r->followed);
		else if (r->followed)
			printf("  %-10s%" PRIu64 " child processes followed\n", "children:",
			       r->followed);
		if (r->follow_full)
			printf("  %-10s%" PRIu64 " forks not followed: the module's set was full\n",
			       "", r->follow_full);
	}
	if (r->o.raw)
		printf("  %-10s%s (taprootctl report %s --output DIR rebuilds the profiles)\n",
		       "raw:", r->o.raw, r->o.raw);
	timeline_opts_print(&r->o.tl, r->o.output);
	summary_print_tail(r->pl, &si);
}

/* ------------------------------------------------------------ record */

/* --flamegraph FILE: the CPU profile as a flame graph page. */
static int write_flamegraph(struct record *r, int *ret)
{
	struct flamegraph_desc d = {
		.host = r->hostname, .cmd = "record", .secs = r->secs, .freq_hz = r->o.freq,
		.start_ns = (int64_t)(tp_clock_ns(CLOCK_REALTIME) - (uint64_t)(r->secs * 1e9)),
	};
	char what[512];
	int e;

	flamegraph_what(what, sizeof(what), r->o.command, r->o.pids, r->o.all ? 0 : r->o.nr_pids);
	d.what = what;
	e = flamegraph_write(r->o.flamegraph, r->page,
			     taproot_pipeline_profile_of(r->pl, TAPROOT_PROFILE_CPU), &d);
	if (e < 0)
		*ret = p_err("writing %s: %s", r->o.flamegraph, taproot_errmsg(e));
	return e;
}

/* Write the profiles of the session into the output directory. */
static int write_profiles(struct record *r, int *ret)
{
	int err = 0, e;

	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++) {
		char *path;

		if (k == TAPROOT_PROFILE_CPU ? !r->o.cpu : !r->o.offcpu)
			continue;
		if (asprintf(&path, "%s/%s.pb.gz", r->o.output,
			     taproot_profile_kind_name((enum taproot_profile_kind)k)) < 0) {
			*ret = p_err("out of memory");
			return -ENOMEM;
		}
		e = taproot_pipeline_write_kind(r->pl, (enum taproot_profile_kind)k, path);
		if (e < 0) {
			*ret = p_err("writing %s: %s", path, taproot_errmsg(e));
			err = e;
		}
		free(path);
	}
	if (r->o.flamegraph) {
		e = write_flamegraph(r, ret);
		if (e < 0)
			err = e;
	}
	return err;
}

/* Put the module's configuration back as it was before the session. */
static void restore_config(struct record *r)
{
	struct taproot_config c = r->saved;
	int err;

	if (!r->config_changed)
		return;
	c.set = TAPROOT_CONFIG_ALL;
	if (!r->o.ring_pages)
		c.set &= ~TAPROOT_CONFIG_RING_PAGES;
	if (!(r->info.features & TAPROOT_FEAT_SCHED_EVENTS))
		c.set &= ~TAPROOT_CONFIG_SCHED_ONE_IN;
	err = taproot_nl_set_config(r->nl, &c);
	if (err < 0)
		fprintf(stderr, "taprootctl: record: restoring the module's configuration: %s\n",
			taproot_errmsg(err));
}

/*
 * The module's flags for the session: those it had, but for the ones the
 * session decides (who unwinds, the privacy setting, following children).
 */
static uint32_t session_flags(const struct record *r)
{
	uint32_t f = r->saved.flags & ~(TAPROOT_CFG_F_UNWIND | TAPROOT_CFG_F_UNWIND_VERIFY |
					 TAPROOT_CFG_F_USTACK_PRIVATE | TAPROOT_CFG_F_FOLLOW |
					 TAPROOT_CFG_F_COUNT);

	if (r->o.unwind != RECORD_UNWIND_USER && (r->info.features & TAPROOT_FEAT_UNWIND))
		f |= TAPROOT_CFG_F_UNWIND;
	if (r->o.unwind == RECORD_UNWIND_VERIFY)
		f |= TAPROOT_CFG_F_UNWIND_VERIFY;
	if (r->o.ustack_private)
		f |= TAPROOT_CFG_F_USTACK_PRIVATE;
	if (r->module_follows)
		f |= TAPROOT_CFG_F_FOLLOW;
	if (r->counting)
		f |= TAPROOT_CFG_F_COUNT;
	return f;
}

static int configure(struct record *r)
{
	uint32_t page_size = r->info.page_size;
	struct taproot_config c = { 0 };
	int err;

	c.set = TAPROOT_CONFIG_FREQ | TAPROOT_CONFIG_EVENTS | TAPROOT_CONFIG_TGIDS;
	c.freq_hz = r->o.freq;
	c.events = r->o.cpu ? TAPROOT_EV_SAMPLE : 0;
	if (r->o.offcpu) {
		c.events |= TAPROOT_EV_SWITCH | TAPROOT_EV_WAKING;
		c.set |= TAPROOT_CONFIG_SCHED_ONE_IN;
		c.sched_one_in = r->o.sched_one_in;
	}
	/* The process model follows exec, exit and pid reuse through them. */
	if (r->info.features & TAPROOT_FEAT_PROC_EVENTS)
		c.events |= TAPROOT_EV_FORK | TAPROOT_EV_EXEC | TAPROOT_EV_EXIT;
	if (r->o.ustack_set) {
		c.set |= TAPROOT_CONFIG_USTACK;
		c.ustack_bytes = r->o.ustack;
	}
	if (r->o.ring_pages) {
		c.set |= TAPROOT_CONFIG_RING_PAGES;
		c.ring_pages = r->o.ring_pages;
		/* The saved watermark may not fit a smaller ring. */
		if (r->saved.watermark > r->o.ring_pages * page_size / 2) {
			c.set |= TAPROOT_CONFIG_WATERMARK;
			c.watermark = r->o.ring_pages * page_size / 2;
		}
	}
	if (r->child) {
		c.nr_tgids = 1;
		c.tgids[0] = (uint32_t)r->child;
		/* Its descendants from their fork on, when the module can. */
		r->module_follows = r->info.features & TAPROOT_FEAT_FOLLOW;
	} else if (!r->o.all) {
		c.nr_tgids = r->o.nr_pids;
		memcpy(c.tgids, r->o.pids, r->o.nr_pids * sizeof(c.tgids[0]));
	}
	c.set |= TAPROOT_CONFIG_FLAGS;
	c.flags = session_flags(r);
	r->config_changed = true;
	err = taproot_nl_set_config(r->nl, &c);
	if (err < 0)
		return p_err("configuring the module: %s", taproot_errmsg(err));
	return EXIT_OK;
}

/*
 * Open the module's control family, check that no session runs and save
 * the configuration the session changes.
 */
static int record_open(struct record *r)
{
	int err = taproot_nl_open(&r->nl);

	if (err == 0)
		err = taproot_nl_get_info(r->nl, &r->info);
	if (err == 0 && r->info.running)
		return p_err("sampling is already running (another session, or taprootd?): "
			     "'taprootctl stop' it first");
	if (err == 0)
		err = taproot_nl_get_config(r->nl, &r->saved);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	if (r->o.offcpu && !(r->info.features & TAPROOT_FEAT_SCHED_EVENTS))
		return p_err("--events offcpu: the loaded taproot module (kernel %s) has no "
			     "switch and waking records (feature sched-events): load a module "
			     "built from this version", r->info.kernel_release);
	if ((r->o.unwind == RECORD_UNWIND_VERIFY || r->o.ustack_private) &&
	    !(r->info.features & TAPROOT_FEAT_UNWIND))
		return p_err("%s: the loaded taproot module (kernel %s) does not unwind user "
			     "stacks (feature unwind): load a module built from this version",
			     r->o.ustack_private ? "--ustack-private" : "--unwind verify",
			     r->info.kernel_release);
	return EXIT_OK;
}

/* --raw FILE: its header, and the process model's reads go to it. */
static int raw_open(struct record *r)
{
	struct taproot_raw_header h = {
		.abi_version = r->info.abi_version, .freq_hz = r->o.freq,
		.ustack_bytes = r->o.ustack_set ? r->o.ustack : 0,
		.cpu = r->o.cpu, .offcpu = r->o.offcpu, .sched_one_in = r->o.sched_one_in,
		.min_block_ns = r->o.min_block_ns, .label_tid = r->o.label_tid,
		.label_cpu = r->o.label_cpu,
		.start_ns = tp_clock_ns(CLOCK_REALTIME),
	};
	int err;

	snprintf(h.kernel_release, sizeof(h.kernel_release), "%s", r->info.kernel_release);
	snprintf(h.hostname, sizeof(h.hostname), "%s", r->hostname);
	err = taproot_raw_writer_new(r->o.raw, &h, &r->raw);
	if (err < 0)
		return p_err("--raw: %s", taproot_errmsg(err));
	r->observer = (struct taproot_procs_observer){
		.read = raw_on_read, .elf = raw_on_elf, .arg = r,
	};
	taproot_procs_opts_default(&r->procs_opts);
	r->procs_opts.observer = &r->observer;
	return EXIT_OK;
}

/* The pipeline the records go to, warmed up. */
static int record_pipeline(struct record *r)
{
	const char *comments[1] = { r->comment };
	struct taproot_pipeline_opts po;
	int err;

	if (gethostname(r->hostname, sizeof(r->hostname) - 1) < 0)
		r->hostname[0] = '\0';
	if (r->o.raw) {
		int ret = raw_open(r);

		if (ret != EXIT_OK)
			return ret;
		err = load_ksyms_raw(r);
	} else {
		err = taproot_ksyms_load(NULL, &r->ksyms);
	}
	if (err < 0)
		fprintf(stderr, "taprootctl: record: kernel frames stay unnamed: %s\n",
			taproot_errmsg(err));
	/* Counting needs the module's walks: not with --unwind user (check_args). */
	r->counting = r->o.count && (r->info.features & TAPROOT_FEAT_COUNT) &&
		      (r->info.features & TAPROOT_FEAT_UNWIND);
	if (r->o.count == 1 && !r->counting)
		return p_err("--count on: this taproot module counts no stacks (feature count)");
	taproot_pipeline_opts_default(&po);
	po.freq_hz = r->o.freq;
	po.counted = r->counting;
	po.ksyms = r->ksyms;
	po.label_tid = r->o.label_tid;
	po.label_cpu = r->o.label_cpu;
	po.symbolize_none = r->o.symbolize_none;
	po.offcpu = r->o.offcpu;
	po.min_block_ns = r->o.min_block_ns;
	po.hostname = r->hostname;
	po.kernel_release = r->info.kernel_release;
	/* Debug files of stripped binaries, when there are servers to ask. */
	if (getenv("DEBUGINFOD_URLS") && getenv("DEBUGINFOD_URLS")[0]) {
		err = taproot_debuginfod_new(NULL, &r->debuginfod);
		if (err < 0)
			fprintf(stderr, "taprootctl: record: %s\n", taproot_errmsg(err));
	}
	po.debuginfod = r->debuginfod;
	if (r->raw)
		po.procs = &r->procs_opts;
	if (timeline_opts_start(&r->o.tl) != EXIT_OK)
		return EXIT_ERR;
	po.timeline = r->o.tl.timeline;
	snprintf(r->comment, sizeof(r->comment), "taprootctl record %s, %" PRIu32 " Hz, kernel %s",
		 TAPROOT_VERSION, r->o.freq, r->info.kernel_release);
	po.comments = comments;
	po.nr_comments = 1;
	err = taproot_pipeline_new(&po, &r->pl);
	/*
	 * With --raw, the prewarm's reads go to the file too: the files it
	 * opens (libc, ld.so) stay in the process model's cache, and a replay
	 * must be told their build IDs.
	 */
	if (err == 0)
		err = taproot_pipeline_prewarm(r->pl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	return EXIT_OK;
}

/* Signals end the session (no SA_RESTART: the wait returns). */
static void catch_signals(struct record *r)
{
	struct sigaction sa = { .sa_handler = record_on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &r->old_int);
	sigaction(SIGTERM, &sa, &r->old_term);
	r->signals_caught = true;
}

static void release_signals(struct record *r)
{
	if (!r->signals_caught)
		return;
	sigaction(SIGINT, &r->old_int, NULL);
	sigaction(SIGTERM, &r->old_term, NULL);
	r->signals_caught = false;
}

/*
 * Fork the command (stopped), configure the module, open the rings,
 * start sampling, then release the command: it runs sampled from its
 * first instruction.
 */
static int record_start(struct record *r)
{
	static const struct taproot_ring_ops discard = { .record = on_discard };
	int ret, err;

	if (r->o.command) {
		r->child = spawn_stopped(r->o.command, &r->release, &r->execd);
		if (r->child < 0) {
			err = (int)-r->child;
			r->child = 0;
			return p_err("cannot fork: %s", strerror(err));
		}
		r->tgids[0] = (uint32_t)r->child;
		r->nr_tgids = 1;
	}
	ret = configure(r);
	if (ret != EXIT_OK)
		return ret;
	err = taproot_ring_open(&r->info, &r->ring);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	/* What earlier sessions left in the rings is not ours. */
	while (taproot_ring_consume(r->ring, &discard, r) > 0)
		;
	r->lost_base = taproot_ring_lost(r->ring);
	err = r->o.buffer_mb ? taproot_ring_start_reader(r->ring, (size_t)r->o.buffer_mb << 20) : 0;
	if (err < 0)
		fprintf(stderr, "taprootctl: record: reading the rings without a reader thread: %s\n",
			taproot_errmsg(err));
	/* Unwind tables and mappings for the module's unwinder go through it. */
	err = taproot_pipeline_set_ring(r->pl, r->ring);
	if (err < 0)
		fprintf(stderr, "taprootctl: record: no uploads to the module's unwinder: %s\n",
			taproot_errmsg(err));

	err = taproot_nl_start(r->nl);
	if (err < 0)
		return p_err("starting: %s", taproot_errmsg(err));
	r->started = true;
	r->t0 = tp_clock_s(CLOCK_MONOTONIC);
	if (r->o.duration)
		r->t_end = r->t0 + r->o.duration;
	if (r->child) {
		ret = start_follower(r);
		if (ret != EXIT_OK)
			return ret;
	}
	if (r->release >= 0) {
		if (write(r->release, "", 1) != 1)
			fprintf(stderr, "taprootctl: record: releasing the command: %s\n",
				strerror(errno));
		close(r->release);
		r->release = -1;
		wait_exec(r, RECORD_EXEC_WAIT_MS);
	}
	return EXIT_OK;
}

/*
 * The module's counted stacks into the pipeline: every RECORD_DRAIN_S
 * (the tables then hold a second of distinct stacks, and the progress
 * line counts them), and once more after the stop.
 */
static void drain_counts(struct record *r)
{
	int64_t n;

	if (!r->counting)
		return;
	r->last_drain = tp_clock_s(CLOCK_MONOTONIC);
	n = taproot_pipeline_drain_counts(r->pl, r->ring, on_corrupt, r);
	if (n < 0)
		fprintf(stderr, "taprootctl: record: %s\n", taproot_errmsg((int)n));
}

/*
 * Read the rings until the duration is over, the command exits or a
 * signal comes; progress on stderr meanwhile.
 */
static int record_loop(struct record *r)
{
	double last_progress = 0;

	for (;;) {
		int timeout = RECORD_POLL_MS, n;
		double t;

		consume(r);
		if (record_signal)
			return EXIT_OK;
		t = tp_clock_s(CLOCK_MONOTONIC);
		if (r->counting && t - r->last_drain >= RECORD_DRAIN_S)
			drain_counts(r);
		if (r->child) {
			reap_child(r, false);
			if (r->child_done)
				return EXIT_OK;
		}
		if (r->t_end && t >= r->t_end)
			return EXIT_OK;
		if ((t - last_progress) * 1000 >= (r->tty ? PROGRESS_TTY_MS : PROGRESS_LINE_MS)) {
			if (last_progress || r->tty)
				progress(r, false);
			last_progress = t;
		}
		if (r->t_end && (r->t_end - t) * 1000 < timeout)
			timeout = (int)((r->t_end - t) * 1000) + 1;
		n = taproot_ring_poll(r->ring, timeout);
		if (n < 0 && n != -EINTR)
			return p_err("%s", taproot_errmsg(n));
	}
}

/*
 * Stop sampling and read what was published up to the stop; put the
 * module's configuration back. Sets r->secs and r->lost.
 */
static void record_stop(struct record *r)
{
	int err;

	/* First: it must not change the filter once the configuration is restored. */
	stop_follower(r);
	if (r->started) {
		r->secs = tp_clock_s(CLOCK_MONOTONIC) - r->t0;
		err = taproot_nl_stop(r->nl);
		if (err < 0 && err != -EALREADY)
			fprintf(stderr, "taprootctl: record: stopping: %s\n", taproot_errmsg(err));
		/* Everything published up to the stop. */
		for (int i = 0; i < 64 && consume(r) > 0; i++)
			;
		drain_counts(r);
		/* Nothing more comes: intervals still open are unpaired. */
		taproot_pipeline_flush(r->pl, true);
		r->lost = taproot_ring_lost(r->ring) - r->lost_base;
		if (r->tty)
			progress(r, true);
	}
	/* What was uploaded through the ring is freed with it. */
	if (r->pl)
		taproot_pipeline_set_ring(r->pl, NULL);
	taproot_ring_close(r->ring);
	r->ring = NULL;
	if (r->nl)
		restore_config(r);
	if (r->release >= 0)
		close(r->release);	/* the command was never released: it exits 127 */
	r->release = -1;
}

/* Close the raw file with the session's end; an error updates *@ret. */
static int raw_finish(struct record *r, int *ret)
{
	struct taproot_raw_end end = {
		.duration_ns = (uint64_t)(r->secs * 1e9), .lost = r->lost, .corrupt = r->corrupt,
	};
	int err;

	if (!r->raw)
		return 0;
	err = taproot_raw_writer_finish(r->raw, r->started ? &end : NULL);
	r->raw = NULL;
	if (err < 0)
		*ret = p_err("--raw %s: %s", r->o.raw, taproot_errmsg(err));
	return err;
}

int do_record(int argc, char **argv)
{
	struct record r = {
		.o = { .freq = RECORD_FREQ_DEFAULT, .cpu = true,
		       .buffer_mb = TAPROOT_RING_BUFFER_DEFAULT >> 20, .count = -1 },
		.release = -1, .execd = -1, .tty = isatty(STDERR_FILENO),
	};
	char *path = NULL;
	int ret, err = 0;

	ret = parse_json_flag(&argc, argv);
	if (ret == EXIT_OK)
		ret = parse_args(argc, argv, &r.o);
	if (ret != EXIT_OK)
		return ret;
	if (!r.o.command && !r.o.duration)
		r.o.duration = RECORD_DURATION_DEFAULT;
	ret = check_pids(&r.o);
	if (ret != EXIT_OK)
		return ret;
	/* The page's template now: a session is not recorded for a page it cannot write. */
	if (r.o.flamegraph) {
		err = flamegraph_page_load(&r.page);
		if (err < 0)
			return p_err("record --flamegraph: %s", taproot_errmsg(err));
	}

	err = make_output_dir(r.o.output);
	if (err < 0)
		ret = p_err("--output %s: %s", r.o.output, strerror(-err));
	else if (asprintf(&path, "%s/cpu.pb.gz", r.o.output) < 0)
		ret = p_err("out of memory");
	if (ret != EXIT_OK) {
		flamegraph_page_free(r.page);
		return ret;
	}

	ret = record_open(&r);
	if (ret == EXIT_OK)
		ret = record_pipeline(&r);
	if (ret == EXIT_OK) {
		catch_signals(&r);
		ret = record_start(&r);
	}
	if (ret == EXIT_OK)
		ret = record_loop(&r);
	record_stop(&r);
	if (r.child && !r.child_done)
		wait_child(&r);
	/* Ended, the command closed its end of the pipe: this cannot wait. */
	wait_exec(&r, 0);
	if (r.exec_err) {
		/* A command that never ran has no profile: none is written. */
		p_err("record: cannot run '%s': %s", r.o.command[0], strerror(r.exec_err));
		r.started = false;
		ret = EXIT_CMD_NOT_RUN;
	}

	err = 0;
	if (r.started)
		err = write_profiles(&r, &ret);
	if (r.started && r.o.tl.timeline &&
	    timeline_opts_write("record", &r.o.tl, r.o.output, (uint32_t)r.child,
				r.comment) != EXIT_OK) {
		ret = EXIT_ERR;
		err = -1;
	}
	if (raw_finish(&r, &ret) < 0)
		err = -1;
	if (r.started && err >= 0 && ret == EXIT_OK) {
		summary(&r, path, r.secs);
		if (r.child && r.child_done)
			ret = child_exit_code(&r);
	}
	if (r.execd >= 0)
		close(r.execd);
	release_signals(&r);
	taproot_pipeline_free(r.pl);
	timeline_opts_free(&r.o.tl);
	taproot_debuginfod_free(r.debuginfod);
	taproot_ksyms_free(r.ksyms);
	taproot_nl_close(r.nl);
	flamegraph_page_free(r.page);
	free(path);
	return ret;
}
