/* SPDX-License-Identifier: GPL-2.0 */
/*
 * taprootd internals shared by ctl/taprootd.c and ctl/daemon-*.c, and the
 * state file format that taprootctl status reads (ctl/status-taprootd.c).
 */
#ifndef TAPROOTD_H
#define TAPROOTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "taproot.h"

#define TAPROOTD_STATE_DEFAULT	"/run/taproot/taprootd.json"

/* Strings an option gathers, one a time it is given (malloc'ed, each and the array). */
struct daemon_list {
	char **v;
	size_t nr;
};

#define DAEMON_LABELS_MAX	8	/* label settings */
#define DAEMON_RELABEL_MAX	64	/* relabel rules, as the library takes */
#define DAEMON_TARGETS_MAX	16	/* critical-path settings */

/* What taprootd is told: command line, then the --config file under it. */
struct daemon_opts {
	char *output;			/* directory of the profiles */
	unsigned long interval;		/* seconds per profile */
	unsigned long retain;		/* profiles kept, 0: all */
	unsigned long max_stacks;	/* per profile */
	bool label_tid, label_cpu;
	bool cpu, offcpu;		/* events: the profiles written */
	unsigned long sched_one_in;	/* off-CPU selection asked of the module:
					 * the least one-in-N */
	unsigned long sched_budget;	/* intervals/s with stacks at most, raising
					 * one-in-N; 0: fixed at sched_one_in */
	unsigned long min_block_us;	/* shorter blocked intervals left out */
	/*
	 * The module's unwinding, set while sampling is stopped: walk user
	 * stacks in the module from the tables taprootd uploads (off: no
	 * uploads, snapshots unwound here); samples it cannot walk carry no
	 * stack bytes; frames walked at most; MiB of uploads at most.
	 */
	bool unwind, ustack_private;
	unsigned long unwind_frames, unwind_mem_mib;
	/*
	 * Samples the module unwound are counted in its tables and drained
	 * once an interval (needs unwind; not with trace or critical-path,
	 * which need each sample).
	 */
	bool count;
	unsigned long buffer_mb;	/* the rings' reader thread's buffers, 0: none */
	unsigned int symbolize;		/* SYMBOLIZE_LOCAL, SYMBOLIZE_NONE */
	char *metrics;			/* ADDR:PORT to serve metrics on, NULL none */
	char *debuginfod;		/* server URLs, NULL: $DEBUGINFOD_URLS */
	/* --push: the store's URL, NULL: none; the rest as push_* below. */
	char *push;
	char *push_bearer_file, *push_basic_file;	/* secrets: read at start */
	char *push_tenant;		/* X-Scope-OrgID, NULL: none */
	unsigned long push_timeout;	/* s per request */
	unsigned long push_spool_mb;	/* bound of DIR/push */
	struct daemon_list labels;	/* "KEY=VALUE" on every sample */
	struct daemon_list relabel;	/* rules (taproot_relabel_add()) */
	/*
	 * Each interval, the timeline as trace-STAMP.json, and the critical
	 * paths of the main threads of the processes named (or the threads
	 * numbered) in critical as critpath-STAMP.pb.gz; either records every
	 * off-CPU interval (sched-one-in 1, no budget).
	 */
	bool trace;
	struct daemon_list critical;
	/*
	 * The module's sampling settings given (freq, kstack, ustack, pids,
	 * ring-pages: the fields module.set names), in the words of
	 * taproot_config_set_kv(); the others stay as the module has them.
	 */
	struct taproot_config module;
};

/* symbolize's words, in the order of its row's "local|none". */
enum { SYMBOLIZE_LOCAL, SYMBOLIZE_NONE };

/* Bits of the options given on the command line: they beat the file. */
#define DOPT_OUTPUT		(UINT64_C(1) << 0)
#define DOPT_INTERVAL		(UINT64_C(1) << 1)
#define DOPT_RETAIN		(UINT64_C(1) << 2)
#define DOPT_MAX_STACKS		(UINT64_C(1) << 3)
#define DOPT_LABEL_TID		(UINT64_C(1) << 4)
#define DOPT_LABEL_CPU		(UINT64_C(1) << 5)
#define DOPT_EVENTS		(UINT64_C(1) << 6)
#define DOPT_SCHED_ONE_IN	(UINT64_C(1) << 7)
#define DOPT_MIN_BLOCK		(UINT64_C(1) << 8)
#define DOPT_SCHED_BUDGET	(UINT64_C(1) << 9)
#define DOPT_LABEL		(UINT64_C(1) << 10)
#define DOPT_RELABEL		(UINT64_C(1) << 11)
#define DOPT_METRICS		(UINT64_C(1) << 12)
#define DOPT_DEBUGINFOD		(UINT64_C(1) << 13)
#define DOPT_PUSH		(UINT64_C(1) << 14)
#define DOPT_PUSH_BEARER	(UINT64_C(1) << 15)
#define DOPT_PUSH_BASIC		(UINT64_C(1) << 16)
#define DOPT_PUSH_TENANT	(UINT64_C(1) << 17)
#define DOPT_PUSH_TIMEOUT	(UINT64_C(1) << 18)
#define DOPT_PUSH_SPOOL		(UINT64_C(1) << 19)
#define DOPT_UNWIND		(UINT64_C(1) << 20)
#define DOPT_USTACK_PRIVATE	(UINT64_C(1) << 21)
#define DOPT_UNWIND_FRAMES	(UINT64_C(1) << 22)
#define DOPT_UNWIND_MEM		(UINT64_C(1) << 23)
#define DOPT_BUFFER		(UINT64_C(1) << 24)
#define DOPT_TRACE		(UINT64_C(1) << 25)
#define DOPT_CRITICAL		(UINT64_C(1) << 26)
#define DOPT_COUNT		(UINT64_C(1) << 27)
#define DOPT_MODULE_FREQ	(UINT64_C(1) << 28)
#define DOPT_MODULE_KSTACK	(UINT64_C(1) << 29)
#define DOPT_MODULE_USTACK	(UINT64_C(1) << 30)
#define DOPT_MODULE_PIDS	(UINT64_C(1) << 31)
#define DOPT_MODULE_RING_PAGES	(UINT64_C(1) << 32)
#define DOPT_SYMBOLIZE		(UINT64_C(1) << 33)

/* What a row of daemon_options[] takes. */
enum daemon_value {
	DV_ACTION,			/* command line only: taprootd.c acts on it */
	DV_PATH,			/* a string, malloc'ed in the field */
	DV_COUNT,			/* an unsigned long in [min, max] */
	DV_SWITCH,			/* a bool: no value on the command line,
					 * yes or no in the file */
	DV_EVENTS,			/* cpu, offcpu or both: fields cpu, offcpu */
	DV_LABEL,			/* KEY=VALUE (KEY VALUE in the file), added
					 * to a struct daemon_list each time */
	DV_RELABEL,			/* a relabel rule, likewise */
	DV_TARGET,			/* a process name or a thread id, likewise */
	DV_ADDR,			/* ADDR:PORT, malloc'ed in the field; none
					 * by default */
	DV_URLS,			/* http(s) URLs, blank-separated, likewise */
	DV_URL,				/* one http(s) URL without user:password@,
					 * "otlp+" before it allowed, likewise */
	DV_FILE,			/* a path, likewise */
	DV_WORD,			/* printable ASCII, no blanks, likewise */
	DV_ONOFF,			/* a bool given as on or off (yes or no)
					 * on the command line and in the file */
	DV_CHOICE,			/* one of the words of arg ("a|b|c"): its
					 * index, an unsigned int; 0 by default */
	DV_MODULE,			/* a key of taproot_config_set_kv(), its
					 * name the option's, into field module */
};

/*
 * An option of taprootd (ctl/daemon-options.c). A row with a DOPT_* bit
 * is a setting: --NAME on the command line and NAME in the --config file.
 */
struct daemon_option {
	const char *name;
	char short_name;		/* -C, or 0 */
	enum daemon_value value;
	uint64_t bit;			/* DOPT_*, 0: not a setting */
	size_t field;			/* offsetof(struct daemon_opts, ...) */
	unsigned long min, max;		/* DV_COUNT */
	const char *arg;		/* the value's name in --help, NULL: none */
	const char *help;		/* lines of --help */
};

/* Every option, ending with a row whose name is NULL. */
#define DAEMON_NR_OPTIONS	42
extern const struct daemon_option daemon_options[DAEMON_NR_OPTIONS + 1];

/* The defaults of every setting (output: NULL, the current directory). */
void daemon_opts_init(struct daemon_opts *o);

/*
 * Free what @o owns (output, the lists); @o is then as after
 * daemon_opts_init() but for its numbers.
 */
void daemon_opts_free(struct daemon_opts *o);

/*
 * Settings that exclude each other, once the command line and the file
 * are read: ustack-private needs unwind. 0, or -1 after logging.
 */
int daemon_opts_check(const struct daemon_opts *o);

/* @dst as a copy of @src that owns its own strings. 0, or -1 (logged). */
int daemon_opts_copy(struct daemon_opts *dst, const struct daemon_opts *src);

const struct daemon_option *daemon_option_find(const char *name);

/*
 * Set the setting @opt in @o from @val (NULL: a switch given on the
 * command line). @where prefixes messages: "" on the command line,
 * "FILE:LINE: " in the file. Returns 0, or -1 after logging what is wrong.
 */
int daemon_option_set(const struct daemon_option *opt, const char *where, const char *val,
		      struct daemon_opts *o);

/* taprootd --help, its options from daemon_options[]. */
void daemon_usage(const char *prog);

/* taprootd --print-config: a config file, every setting at its default. */
void daemon_print_config(void);

#define INTERVAL_DEFAULT	10
/*
 * Off-CPU intervals recorded with stacks per second, whole system, by
 * default. Each costs two stack captures in the kernel (the blocked task's
 * and its waker's, more than the switch itself) and two unwinds in
 * taprootd: the default is the rate that keeps a switch-heavy load within
 * the overhead target (BENCHMARKS.md, "Causal events") while a 10 s
 * profile still holds thousands of intervals.
 */
#define SCHED_BUDGET_DEFAULT	250
#define SCHED_BUDGET_MAX	1000000
#define INTERVAL_MAX		86400
#define RETAIN_MAX		1000000
#define MAX_STACKS_MAX		(1UL << 24)
#define PUSH_TIMEOUT_DEFAULT	30
#define PUSH_TIMEOUT_MAX	3600
#define PUSH_SPOOL_MB_DEFAULT	256
#define BUFFER_MB_DEFAULT	64	/* TAPROOT_RING_BUFFER_DEFAULT */
#define BUFFER_MB_MAX		65536
_Static_assert(BUFFER_MB_DEFAULT << 20 == TAPROOT_RING_BUFFER_DEFAULT, "one default");
#define PUSH_SPOOL_MB_MAX	(1UL << 20)

/* Log @fmt at syslog priority @prio: on stderr, or to syslog after log_to_syslog(). */
void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* From now on, log to syslog as @prog (daemon facility); log_close() ends it. */
void log_to_syslog(const char *prog);
void log_close(void);

/*
 * Read the config file @path into @o, leaving the fields whose DOPT_* bit
 * is in @cmdline alone. Lines: "KEY VALUE" or "KEY = VALUE", '#'
 * comments; the keys are the settings of daemon_options[].
 * Returns 0, or -1 after logging what is wrong (@o is then unchanged).
 */
int daemon_read_config(const char *path, uint64_t cmdline, struct daemon_opts *o);

/* Check that @dir is a writable directory (logs why not). 0 or -1. */
int daemon_check_output(const char *dir);

/*
 * The time stamp of the next interval's files: @t, or one second later
 * than @last (updated) when it would not sort after it.
 */
time_t daemon_next_stamp(time_t t, time_t *last);

/*
 * The newest stamp of taprootd's profiles in @dir no later than @bound, or
 * 0: where a taprootd started again takes up the stamps of the one before,
 * which may have run ahead of the clock, lest it write over their files.
 * Stamps past @bound are a clock set back since, not run ahead.
 */
time_t daemon_newest_stamp(const char *dir, time_t bound);

/*
 * The path of a profile in @dir: DIR/KIND-YYYYmmddTHHMMSSZ.pb.gz for @t
 * (UTC), KIND one of cpu, offcpu, offwake, schedlat. Returns a malloc'ed
 * string or NULL.
 */
char *daemon_profile_path(const char *dir, const char *kind, time_t t);

/*
 * Delete the oldest profiles of taprootd's own pattern in @dir beyond
 * @retain of each kind (0: keep all), except, when @spooled, those whose
 * interval still waits in the spool (--push); also the temporary files of
 * that pattern that a killed writer left ("KIND-*.pb.gz.tmp.*") when
 * @temps. Returns the number deleted.
 */
unsigned int daemon_retain(const char *dir, unsigned long retain, bool temps, bool spooled);

/* Whether @name is one of taprootd's profiles: KIND-YYYYmmddTHHMMSSZ.pb.gz. */
bool daemon_is_profile_name(const char *name);

/*
 * What taprootd says of itself: the state file (one member a line, written
 * every interval), taprootctl status (its text and --json) and --metrics
 * all show this, each member as its row of daemon_stats[] says
 * (ctl/daemon-state.c).
 */
struct daemon_state {
	int64_t pid;
	int64_t started;		/* wall clock, s since the epoch */
	int64_t updated;
	double cpu_seconds;		/* user + system of taprootd */
	uint64_t rss_bytes;
	uint64_t samples, lost;
	uint64_t profiles;		/* profiles written */
	bool offcpu;			/* off-CPU profiles on */
	uint64_t intervals;		/* off-CPU intervals joined */
	uint64_t unpaired;		/* off-CPU intervals with an end missing */
	uint64_t unwind_permille;	/* complete unwinds */
	/*
	 * What could not be profiled as it ran, counted (the pipeline's
	 * cumulative counters, taproot_pipeline_stats): invalid records,
	 * samples of processes gone before their maps were read, user parts
	 * left out across an execve, mappings whose ELF file could not be
	 * used, user stacks by how their unwinding ended, frames without a
	 * name; samples and intervals the relabel rules dropped, and those
	 * kept with a replacement skipped; and profiles that could not be
	 * written (disk full).
	 */
	uint64_t dropped, proc_unknown, user_stale, elf_errors;
	/*
	 * Kubernetes labels: lookups the cache of containers answered,
	 * container runtimes' files read and refused, containers evicted.
	 */
	uint64_t k8s_cache_hits, k8s_files_read, k8s_files_refused, k8s_cache_evicted;
	uint64_t relabel_dropped, relabel_skipped;
	/* debuginfod: debug files fetched, absent from the servers, queued now. */
	uint64_t debuginfod_found, debuginfod_absent, debuginfod_pending;
	uint64_t user_stacks, unwind[TAPROOT_UNWIND_NR_ENDS];
	uint64_t frames, frames_unsymbolized;
	uint64_t jit_named_late, jit_pending_dropped;	/* JIT pcs, perf maps read again */
	uint64_t write_errors;
	/*
	 * The module's unwinding: whether taprootd has it on (setting
	 * unwind: module_unwind), the uploads of tables and mappings to it (the pipeline's
	 * kupload), the samples by how the module's walk ended (kunwind,
	 * enum taproot_kunwind; [0]: not walked), the references to interned
	 * stacks and the samples counted in the module (setting count), and
	 * of each those that could not be resolved.
	 */
	bool module_unwind;
	struct taproot_kupload_stats kupload;
	uint64_t kunwind[TAPROOT_PIPELINE_KUNWIND_NR];
	uint64_t stack_refs, stack_refs_unresolved;
	uint64_t counted, counted_unresolved;
	/*
	 * --push: uploads that succeeded, attempts that failed (and will be
	 * retried), uploads the store refused (4xx: dropped), uploads the
	 * spool's bound dropped unsent, and what waits in the spool now.
	 */
	bool push;
	uint64_t push_uploaded, push_failures, push_rejected, push_dropped;
	uint64_t push_partial_rejected;
	uint64_t push_queued, push_queued_bytes;
	int64_t push_last_success;	/* wall clock s, 0: none yet */
	bool sampling;			/* the module's sampling runs */
	char output[4096];
	char last_profile[4096];
	uint64_t interval;		/* s per profile */
};

/* What a member of struct daemon_state is (a row of daemon_stats[]). */
enum daemon_stat_type {
	DS_I64,				/* int64_t */
	DS_U64,				/* uint64_t */
	DS_SECONDS,			/* double: to the millisecond in the file,
					 * whole milliseconds in status --json */
	DS_BOOL,			/* bool: true or false; 1 or 0 as a metric */
	DS_STR,				/* char[]: a JSON string, never a metric */
	DS_ENDS,			/* uint64_t[] by end, named by name(): a
					 * member KEY_NAME each in the file, an
					 * object {NAME: N} in status --json, one
					 * metric labelled result="NAME" */
};

/* The lines of taprootctl status about taprootd, in order (daemon_status_lines[]). */
enum daemon_status_line {
	DSL_NONE,			/* not in the text */
	DSL_TAPROOTD,
	DSL_USAGE,
	DSL_SAMPLES,
	DSL_OFFCPU,
	DSL_WALKS,
	DSL_UPLOADS,
	DSL_PROFILES,
	DSL_PUSH,
	DSL_NR
};

/* How taprootctl status's text shows a member's value. */
enum daemon_shown {
	DSH_VALUE,			/* the number or the string */
	DSH_VALUE_SET,			/* likewise; 0 or "": the row shows nothing */
	DSH_AGO,			/* a wall clock time: the seconds since */
	DSH_AGO_SET,			/* likewise; 0: the row shows nothing */
	DSH_MIB,			/* bytes as MiB, one decimal */
	DSH_KIB,			/* bytes as whole KiB */
	DSH_PERMILLE,			/* per mille as a percentage, one decimal */
	DSH_CHOICE,			/* a bool: after is "TRUE-TEXT|FALSE-TEXT",
					 * shown instead of the value */
	DSH_CPU,			/* CPU seconds, two decimals, " s CPU" and
					 * their share of one CPU from started to
					 * updated, " (S% of one CPU)" */
	DSH_WALKS,			/* the module's walks (taproot_kunwind):
					 * "S% of N ended well (END N, ...)" */
};

enum daemon_metric_type {
	DM_NONE,			/* not a metric */
	DM_COUNTER,
	DM_GAUGE,
};

/*
 * A member of struct daemon_state, and everything that shows it: its key
 * in the state file, its member in taprootctl status --json, its part of
 * a line of taprootctl status, and its metric. Each of them shows the
 * rows in the table's order, so a counter added is one row.
 */
struct daemon_stat {
	const char *key;		/* in the state file */
	enum daemon_stat_type type;
	size_t field;			/* offsetof(struct daemon_state, ...) */
	size_t size;			/* its sizeof */
	const char *(*name)(unsigned int i);	/* DS_ENDS: end i's name */
	/*
	 * status --json: the member's name, NULL for none; "GROUP.NAME" is
	 * NAME in the object GROUP, whose rows follow each other. A DS_BOOL
	 * row named GROUP just before them stands for the object: null
	 * while it is false.
	 */
	const char *json;
	/*
	 * status's text: on line @line, before, the value as @shown, after
	 * (nothing with DSL_NONE).
	 */
	struct {
		enum daemon_status_line line;
		const char *before;
		enum daemon_shown shown;
		const char *after;
	} text;
	/* --metrics: taprootd_NAME with its TYPE and HELP (DM_NONE: none). */
	struct {
		const char *name;
		enum daemon_metric_type type;
		const char *help;
	} metric;
};

/* Every member, ending with a row whose key is NULL. */
extern const struct daemon_stat daemon_stats[];

/*
 * A line of taprootctl status: its label, and the key of a DS_BOOL row
 * that shows it (NULL: always); while that is false, the line says
 * @otherwise (NULL: it is left out).
 */
struct daemon_status_line_def {
	const char *label;
	const char *when;
	const char *otherwise;
};

extern const struct daemon_status_line_def daemon_status_lines[DSL_NR];

/* The row of daemon_stats[] of @key (a DS_ENDS row by its own key), or NULL. */
const struct daemon_stat *daemon_stat_find(const char *key);

/* The member of @st that @r describes. */
static inline const void *daemon_stat_ptr(const struct daemon_state *st,
					  const struct daemon_stat *r)
{
	return (const char *)st + r->field;
}

/* DS_ENDS: how many counters. */
static inline unsigned int daemon_stat_nr(const struct daemon_stat *r)
{
	return (unsigned int)(r->size / sizeof(uint64_t));
}

/*
 * Write @st to @path atomically (temporary file, rename), creating its
 * directory (0755). The format is a flat JSON object, one member a line:
 * readers may parse it line by line. 0 or -errno.
 */
int daemon_state_write(const char *path, const struct daemon_state *st);

/* Parse the file @path written by daemon_state_write(). 0 or -errno. */
int daemon_state_read(const char *path, struct daemon_state *st);

struct taproot_json;

/*
 * taprootctl status (ctl/status-taprootd.c): @st as its lines about
 * taprootd, @now the wall clock (each line of daemon_status_lines[] that
 * is shown, with the rows on it in their order); and as an object of @j.
 */
void daemon_state_print(const struct daemon_state *st, int64_t now);
void daemon_state_json(const struct daemon_state *st, struct taproot_json *j);

/*
 * --metrics ADDR:PORT (ctl/daemon-metrics.c): the counters of @st in the
 * Prometheus text format, served over HTTP by a thread of its own.
 */
struct daemon_metrics;

/* The room the metrics have: their text is cut there. */
#define DAEMON_METRICS_MAX	16384

/* @st as Prometheus text into @buf (cut at @len); its length. */
size_t daemon_metrics_text(const struct daemon_state *st, char *buf, size_t len);

/*
 * Split ADDR:PORT (":PORT" for every address, "[IPV6]:PORT") into @host
 * ("" for every address) and @port. 0, or -1 when it is not of the form.
 */
int daemon_metrics_parse_addr(const char *s, char *host, size_t hlen, char *port, size_t plen);

/*
 * Listen on @addr (before detaching: a bind error is the caller's exit),
 * then serve from a thread (after: a fork keeps no thread). 0, or -1 after
 * logging why not.
 */
int daemon_metrics_listen(const char *addr, struct daemon_metrics **mp);
int daemon_metrics_run(struct daemon_metrics *m);

/* Serve @st from now on (a copy). NULL @m: nothing. */
void daemon_metrics_publish(struct daemon_metrics *m, const struct daemon_state *st);

/* Stop serving, close, free (NULL allowed). */
void daemon_metrics_stop(struct daemon_metrics *m);

/*
 * --push (ctl/daemon-spool.c, ctl/daemon-push.c). Each interval's
 * profiles are split by service_name into the spool, OUTPUT/push, as
 * FROM-UNTIL.KIND.SERVICE.pb.gz, gzipped pprof for a Pyroscope-compatible
 * store, or FROM-UNTIL.KIND.SERVICE.otlp.gz, a gzipped OTLP
 * ExportProfilesServiceRequest for an OpenTelemetry collector (FROM,
 * UNTIL: the interval in s since the epoch, 10 digits; SERVICE
 * percent-encoded); a thread uploads them, oldest first, and deletes each
 * once the store accepted it.
 */
#define DAEMON_SPOOL_DIR	"push"

/* What a --push URL starts with to upload OTLP: "otlp+https://HOST:4318". */
#define PUSH_OTLP_PREFIX	"otlp+"

/* What a spool file holds, and the protocol that uploads it. */
enum spool_format {
	SPOOL_PPROF,			/* --push http(s)://: Pyroscope's /ingest */
	SPOOL_OTLP,			/* --push otlp+http(s)://: OTLP/HTTP */
};

/* The format --push URL @url uploads (a URL daemon_option_set() took). */
enum spool_format spool_format_of(const char *url);

/* A spool file's name, parsed. */
struct spool_entry {
	int64_t from, until;
	enum spool_format format;
	char kind[16];
	char service[256];		/* decoded */
	char name[512];			/* the file's name */
	uint64_t bytes;
};

/*
 * Split @prof (a profile of @kind, written for the interval [@from,
 * @until), whole seconds around its time) by service_name into
 * OUTPUT/push, in @format (OTLP's resource: the service, host.name
 * @hostname, os.type linux); @until moves up when an earlier interval of
 * @kind has that name. Returns the files written, or -1 after logging
 * (what was written stays).
 */
int spool_write(const char *output, const struct taproot_profile *prof, const char *kind,
		int64_t from, int64_t until, enum spool_format format, const char *hostname);

/* Parse the spool file name @name; false when it is not one. */
bool spool_parse_name(const char *name, struct spool_entry *e);

/*
 * The spool's files, oldest first (malloc'ed array in *@v, caller frees),
 * and their total size in *@bytes; also removes the temporary files a
 * killed writer left when @temps. Returns the count, or -1.
 */
long spool_list(const char *output, struct spool_entry **v, uint64_t *bytes, bool temps);

/*
 * Whether the spool holds files of @kind whose interval holds second
 * @stamp (a local profile's name): that profile is then kept by --retain.
 * (A stamp is the second its interval began in, or a later one when an
 * earlier interval took that second: within [FROM, UNTIL] but for a run
 * of flushes forced within one second.)
 */
bool spool_holds(const struct spool_entry *v, size_t n, int64_t stamp, const char *kind);

struct daemon_push;

struct daemon_push_config {
	const char *url;		/* the store's base URL */
	const char *bearer_file, *basic_file, *tenant;
	unsigned long timeout_s;
	uint64_t spool_bytes;		/* the spool's bound */
	const char *output;		/* the spool is OUTPUT/push */
	const char *hostname, *kernel_release;
	const struct daemon_list *labels;	/* "KEY=VALUE": in the series' name */
};

/*
 * Check @c, read the secrets, make the spool directory. 0, or -1 after
 * logging why not (taprootd then exits: an agent that would not push
 * must not look as if it did).
 */
int daemon_push_new(const struct daemon_push_config *c, struct daemon_push **pp);

/* Start the uploading thread (after the fork). 0 or -1 (logged). */
int daemon_push_start(struct daemon_push *p);

/* New files are in the spool: enforce its bound and wake the uploader. */
void daemon_push_kick(struct daemon_push *p);

/* The counters, into the push_* fields of @st. NULL @p: push false. */
void daemon_push_stats(struct daemon_push *p, struct daemon_state *st);

/* Stop the thread (an upload in flight is abandoned), free. NULL allowed. */
void daemon_push_stop(struct daemon_push *p);

#endif /* TAPROOTD_H */
