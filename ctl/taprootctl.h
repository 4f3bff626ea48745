/* SPDX-License-Identifier: GPL-2.0 */
/*
 * taprootctl internals shared by the command files ctl/cmd-*.c.
 *
 * A command handler gets the arguments after its name and returns the exit
 * status: EXIT_OK, EXIT_ERR after p_err(), EXIT_USAGE after p_usage().
 */
#ifndef TAPROOTCTL_H
#define TAPROOTCTL_H

#include <stdbool.h>

#include "taproot.h"
#include "cmd.h"
#include "json.h"

enum {
	EXIT_OK = 0,
	EXIT_ERR = 1,
	EXIT_USAGE = 2,
	EXIT_CMD_NOT_RUN = 127,	/* record's command could not run, as a shell's */
};

/* -j/--json, or a command's own --json: output is JSON, errors too. */
extern bool json_output;

/*
 * Report an error: "taprootctl: MESSAGE" on stderr, or {"error":"MESSAGE"}
 * on stdout in JSON mode. Returns EXIT_ERR.
 */
int p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same for a usage error; returns EXIT_USAGE. */
int p_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A writer for one JSON value on stdout, or NULL after reporting the error
 * (then return EXIT_ERR). json_end() frees it and reports a write error.
 */
struct taproot_json *json_begin(void);
int json_end(struct taproot_json *j);

/*
 * The end of a command that succeeded with nothing to report: no output,
 * or `null` in JSON mode (so that a JSON reader always gets one value).
 */
int p_ok(void);

/*
 * Take every --json / -j out of @argv (a command's own twin of -j), set
 * json_output for it, and shorten *@argc. Returns EXIT_OK.
 */
int parse_json_flag(int *argc, char **argv);

/*
 * Option @opt of command @cmd with value @s: a decimal number in
 * @min..@max (64 or 32 bits), or a positive number of seconds (at most 1e7). EXIT_OK, or
 * EXIT_USAGE after saying what was wanted.
 */
int parse_u64_arg(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
		  uint64_t *v);
int parse_u32_arg(const char *cmd, const char *opt, const char *s, uint32_t min, uint32_t max,
		  uint32_t *v);
int parse_seconds_arg(const char *cmd, const char *opt, const char *s, double *v);
/*
 * --symbolize local|none: *@none for none, the frames of ELF files left
 * as addresses for a server to name (taproot_pipeline_opts.symbolize_none).
 */
int parse_symbolize_arg(const char *cmd, const char *s, bool *none);

/* Handlers, one file per group of commands. */
int do_load(int argc, char **argv);	/* cmd-module.c */
int do_unload(int argc, char **argv);
int do_status(int argc, char **argv);	/* cmd-status.c */
int do_start(int argc, char **argv);	/* cmd-session.c */
int do_stop(int argc, char **argv);
int do_config(int argc, char **argv);	/* cmd-config.c */
int do_stats(int argc, char **argv);	/* cmd-stats.c */
int do_dump(int argc, char **argv);	/* cmd-dump.c */
int do_record(int argc, char **argv);	/* cmd-record.c */
int do_report(int argc, char **argv);	/* cmd-report.c */
int do_top(int argc, char **argv);	/* cmd-top.c */

/*
 * The end-of-session summary, shared by record and report (cmd-record.c):
 * what the pipeline does not know itself.
 */
struct summary_info {
	const char *cmd;		/* "record", "report" */
	const char *output;		/* DIR */
	const char *path;		/* DIR/cpu.pb.gz */
	double secs;			/* the session's length */
	uint32_t freq;
	bool cpu, offcpu;
	uint32_t sched_one_in;
	uint64_t min_block_ns;
	uint64_t lost, corrupt;
	/* The pipeline's counters to show; NULL: its cumulative ones now. */
	const struct taproot_pipeline_stats *st;
};

/*
 * The module's walks of user stacks by how they ended, @ends indexed by
 * enum taproot_kunwind (TAPROOT_KUNWIND_NR of them; the module's counters,
 * the pipeline's and taprootd's alike): kunwind_walks() the walks in all
 * (TAPROOT_KUNWIND_NONE is no walk), print_kunwind_ends() "END N, END N"
 * for each end met, or "none".
 */
uint64_t kunwind_walks(const uint64_t *ends);
void print_kunwind_ends(const uint64_t *ends);

/* mkdir -p @dir, the last component mode 0700: 0 or -errno. */
int make_output_dir(const char *dir);

/*
 * fopen(@path, "we"), but a file it creates is mode 0600 whatever the
 * umask: the statistics name the functions of the processes profiled. An
 * existing file (/dev/stdout...) keeps its mode.
 */
FILE *fopen_private(const char *path);

/* Plain: the first lines (profile, off-cpu, lost, unwind, unknown)... */
void summary_print_head(const struct taproot_pipeline *pl, const struct summary_info *si);
/* ...and the last (top functions, how to open the profiles). */
void summary_print_tail(const struct taproot_pipeline *pl, const struct summary_info *si);
/* JSON: the same figures as members of the object @j has open. */
void summary_json(struct taproot_json *j, const struct taproot_pipeline *pl,
		  const struct summary_info *si);

/*
 * The timeline options of record and report (timeline-opts.c): --trace FILE,
 * --trace-window S, --trace-pid PID, --critical-path TID|NAME (record's
 * "command" is its COMMAND's first thread; a NAME, the main threads of the
 * processes of that name, at most TIMELINE_OPTS_MAX_TARGETS).
 */
#define TIMELINE_OPTS_MAX_TARGETS	64

struct timeline_opts {
	const char *trace;		/* --trace FILE, NULL: none */
	double window;			/* --trace-window S, 0: the whole session */
	uint32_t pids[TAPROOT_TIMELINE_MAX_PIDS];	/* --trace-pid */
	unsigned int nr_pids;
	const char *critical;		/* --critical-path's value, NULL: none */
	uint32_t critical_tid;		/* when that is a number; else 0 */
	/* Set by timeline_opts_start() and timeline_opts_write(). */
	struct taproot_timeline *timeline;
	uint32_t tids[TIMELINE_OPTS_MAX_TARGETS];	/* the critical path's threads */
	size_t nr_tids;
	struct taproot_critpath_stats critpath;
	bool critpath_written;
};

/* Option @name with @val if it is one of them (EXIT_OK, EXIT_USAGE), else -ENOENT. */
int timeline_opts_set(const char *cmd, const char *name, const char *val,
		      struct timeline_opts *t);
/* --trace or --critical-path was given: the session needs every off-CPU interval. */
bool timeline_opts_wanted(const struct timeline_opts *t);
/* The options together: EXIT_OK or EXIT_USAGE. */
int timeline_opts_check(const char *cmd, const struct timeline_opts *t);
/* A new timeline in t->timeline if one is wanted: EXIT_OK or EXIT_ERR. */
int timeline_opts_start(struct timeline_opts *t);
/*
 * The trace file and @dir/critpath.pb.gz; the critical path of
 * --critical-path's thread, of @command_tid for "command" (when not 0),
 * else of the processes it names. EXIT_OK or EXIT_ERR (each failure
 * reported).
 */
int timeline_opts_write(const char *cmd, struct timeline_opts *t, const char *dir,
			uint32_t command_tid, const char *comment);
/* The summary's lines for them, plain, or the "critical_path" member of @j. */
void timeline_opts_print(const struct timeline_opts *t, const char *dir);
void timeline_opts_json(struct taproot_json *j, const struct timeline_opts *t);
void timeline_opts_free(struct timeline_opts *t);

/*
 * taprootd as its state file says (status-taprootd.c): 1 with @st filled
 * when the taprootd that file names ($TAPROOTD_STATE, else the default;
 * *@path, unless NULL) runs, else 0 (*@stale when the file is left over
 * from one that is gone).
 */
struct daemon_state;
int daemon_find(struct daemon_state *st, bool *stale, const char **path);

/* taprootd's state for 'status': its own lines, or a "taprootd" member. */
void daemon_status_plain(void);
void daemon_status_json(struct taproot_json *j);

#endif /* TAPROOTCTL_H */
