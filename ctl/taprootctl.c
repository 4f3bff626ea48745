// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl: control the taproot profiler module.
 *
 *   taprootctl [OPTIONS] COMMAND [ARGS]
 *
 * Commands come from the table below, in bpftool's grammar: a command may be
 * abbreviated to any unambiguous prefix, "help" is generated from the table,
 * and every command has a --json twin whose errors are JSON too.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/taproot.h>

#include "flamegraph.h"
#include "taprootctl.h"

#define STR_(x)	#x
#define STR(x)	STR_(x)

static const char *prog = "taprootctl";

/* ------------------------------------------------------------- help */

static int do_help(int argc, char **argv);

static const struct taproot_command commands[] = {
	{ "load", do_load, "[--ko PATH] [PARAM=VALUE]...",
	  "load taproot.ko into the running kernel",
	  "Loads the module with libkmod, passing each PARAM=VALUE to it as a\n"
	  "module parameter; a name the module does not declare is refused.\n"
	  "Without --ko the file is, in this order: $TAPROOT_KO when set;\n"
	  "../build/kmod/$(uname -r)/kmod/taproot.ko relative to the directory\n"
	  "of this program, when it exists; the installed module named\n"
	  "'taproot' (modules.dep of the running kernel). Needs CAP_SYS_MODULE.\n" },
	{ "unload", do_unload, "",
	  "unload taproot.ko",
	  "Fails while a consumer has /dev/taproot open or mapped, and when\n"
	  "the module is not loaded. Needs CAP_SYS_MODULE.\n" },
	{ "status", do_status, "[--json]",
	  "show the loaded module: ABI version, CPUs, kernel, features, state",
	  "Asks the module over generic netlink (GET_INFO) and prints its ABI\n"
	  "version, number of CPUs (rings), kernel release, features, whether\n"
	  "sampling is running, and the page size. Fails when the module is not\n"
	  "loaded or speaks another ABI version than this program (ABI "
	  STR(TAPROOT_ABI_VERSION) "). Needs CAP_PERFMON or CAP_SYS_ADMIN.\n" },
	{ "start", do_start, "[--json]",
	  "start sampling on every CPU",
	  "Sampling runs until 'stop' (or until the module is unloaded), with\n"
	  "the configuration of 'config'. Ring positions and counters are not\n"
	  "reset. Fails when sampling already runs. Needs CAP_PERFMON or\n"
	  "CAP_SYS_ADMIN.\n" },
	{ "stop", do_stop, "[--json]",
	  "stop sampling",
	  "Records already in the rings stay there for a consumer ('dump').\n"
	  "Fails when sampling is not running.\n" },
	{ "config", do_config, "[show] | set KEY VALUE [KEY VALUE]... [--json]",
	  "show or change what is sampled and how",
	  "'config' and 'config show' print the module's configuration, one\n"
	  "KEY: VALUE per line, or one JSON object. 'config set' changes only\n"
	  "the keys given, all of them or none:\n"
	  "  freq HZ              samples per second per CPU, 1.." STR(TAPROOT_FREQ_MAX) "\n"
	  "  kstack DEPTH         kernel frames per sample, 0.." STR(TAPROOT_KSTACK_MAX) "\n"
	  "  ustack BYTES         user stack bytes per sample, 0.." STR(TAPROOT_USTACK_MAX) ",\n"
	  "                       a multiple of 8\n"
	  "  events LIST          comma list of sample, switch, waking, fork,\n"
	  "                       exec, exit; or all, or none\n"
	  "  idle on|off          sample the idle task too\n"
	  "  ring-pages N         data pages per CPU ring, a power of two in\n"
	  "                       " STR(TAPROOT_RING_PAGES_MIN) ".." STR(TAPROOT_RING_PAGES_MAX) "\n"
	  "  watermark BYTES      unread bytes in a ring that wake its reader\n"
	  "  pids PID[,PID]...    only these processes (at most " STR(TAPROOT_MAX_TGIDS) "); or all\n"
	  "  sched-one-in N       capture one off-CPU interval in N (switch and\n"
	  "                       waking records), 1.." STR(TAPROOT_SCHED_ONE_IN_MAX) "\n"
	  "freq and ring-pages change only while sampling is stopped, and\n"
	  "ring-pages only while no consumer has the rings mapped; switch,\n"
	  "waking, fork, exec and exit can be turned on only while stopped\n"
	  "(their tracepoints are attached at start). Values are\n"
	  "checked here first (exit 2); the module's refusals carry its reason.\n" },
	{ "stats", do_stats, "[--json]",
	  "show the per-CPU counters of the module",
	  "One row per possible CPU and a total: samples taken, records and\n"
	  "bytes written to the ring, records lost because the ring was full or\n"
	  "writers nested too deep, and user stack copies cut short by a fault.\n"
	  "The counters are cumulative for the life of the module.\n" },
	{ "dump", do_dump,
	  "[--count N] [--duration SEC] [--pid PID] [--ustack-bytes N] [--json]",
	  "print the records of the rings, merged by time",
	  "Becomes the consumer of /dev/taproot (one at a time) and prints each\n"
	  "record as it is read, merged across CPUs in time order, until N\n"
	  "records were printed, SEC seconds passed, or SIGINT/SIGTERM (then\n"
	  "what the rings hold is drained and the exit status is 0). It does\n"
	  "not start sampling. Plain output is one line per record (time, CPU,\n"
	  "type, pid/tid, comm, flags, user ip/sp) with the kernel stack\n"
	  "symbolized below it; --json prints one JSON object per line.\n"
	  "--pid keeps the samples of one process (and LOST records).\n"
	  "--ustack-bytes N prints the first N bytes of each user stack copy in\n"
	  "hex (default 0: none). A summary goes to stderr at the end: records\n"
	  "by type, records lost, corrupt records. Order holds within each read\n"
	  "of the rings: a record published late with an earlier time than\n"
	  "records already printed is printed after them.\n" },
	{ "record", do_record,
	  "[--freq HZ] [--duration S] [--pid PID... | --all] [--ustack BYTES]\n"
	  "         [--ring-pages N] [--buffer-mb MB] [--label-tid] [--label-cpu]\n"
	  "         [--stats-json FILE] [--events cpu,offcpu] [--sched-one-in N] [--min-block US]\n"
	  "         [--unwind kernel|user|verify] [--ustack-private] [--count on|off]\n"
	  "         [--trace FILE [--trace-window S] [--trace-pid PID]...]\n"
	  "         [--critical-path TID|NAME|command] [--raw FILE] [--flamegraph FILE]\n"
	  "         [--symbolize local|none] --output DIR [-- COMMAND ARGS...]",
	  "profile the system, some processes or a command into DIR/cpu.pb.gz",
	  "Configures the module (freq, default " STR(99) " Hz; ustack; pids), becomes the\n"
	  "consumer of the rings, starts sampling, turns every sample into\n"
	  "a call stack (DWARF unwinding, symbols, kernel frames on top) and\n"
	  "writes a pprof profile, DIR/cpu.pb.gz (DIR is created, mode 0700).\n"
	  "With a COMMAND: runs it (held until the module filters on its pid),\n"
	  "follows its children (the module takes each into the filter at its\n"
	  "fork, at most " STR(TAPROOT_FOLLOW_MAX) " at once, with the follow feature; else\n"
	  "they are looked for in /proc every 100 ms, at most " STR(TAPROOT_MAX_TGIDS) ") until it\n"
	  "exits, and exits with its status. Without: --pid PID... (or --all,\n"
	  "the default) for --duration seconds (default 10). SIGINT/SIGTERM end\n"
	  "the session early; the profile is still written. At the end the\n"
	  "module's previous configuration is restored and sampling stopped.\n"
	  "Progress goes to stderr; a summary (samples, lost, unwind success,\n"
	  "top 10 functions by self samples) to stdout, or as JSON with --json;\n"
	  "--stats-json FILE writes that JSON to FILE too. --label-tid and\n"
	  "--label-cpu add tid and cpu labels (more distinct samples).\n"
	  "--ring-pages N resizes the rings for the session (restored after).\n"
	  "--buffer-mb MB (default 64; 0: none): a reader thread copies the\n"
	  "rings into MB MiB (over all CPUs, at least a ring per CPU) while\n"
	  "the pipeline is busy (a table compile, a new binary read): records\n"
	  "are lost only when both are full.\n"
	  "--events LIST (default cpu): cpu samples on-CPU stacks; offcpu records\n"
	  "context switches and wakeups and writes DIR/offcpu.pb.gz (blocked time\n"
	  "by blocked stack, label state S/D/R+), DIR/offwake.pb.gz (blocked time\n"
	  "until the wakeup: waker's stack, '--', blocked stack; label waker) and\n"
	  "DIR/schedlat.pb.gz (run-queue delay); it needs a module with the\n"
	  "sched-events feature. --sched-one-in N (default 1) has the kernel\n"
	  "select one off-CPU interval in N (by a hash of the thread and its\n"
	  "switch count): less overhead, values scaled by N. --min-block US\n"
	  "leaves intervals blocked for less than US microseconds out of offcpu\n"
	  "and offwake; it is a filter in taprootctl, the kernel still records\n"
	  "them (it selects by probability only). Fork, exec and exit records\n"
	  "are turned on whenever the module has them: they keep the process\n"
	  "model right across exec and pid reuse.\n"
	  "--unwind kernel (the default, with a module that has the unwind\n"
	  "feature) has the module unwind user stacks from the tables\n"
	  "taprootctl uploads (each binary's once, each process's mappings),\n"
	  "and send each stack once per CPU, then small references to it; a\n"
	  "sample it cannot unwind (before the upload, an expression rule)\n"
	  "carries the stack copy from where it stopped, which taprootctl\n"
	  "unwinds. --unwind user: every sample carries the copy (--ustack).\n"
	  "--unwind verify: both, compared pc by pc (the summary's verify line).\n"
	  "--ustack-private: a sample the module cannot unwind carries no stack\n"
	  "bytes (nor registers but ip, sp, bp): its stack ends where the module\n"
	  "stopped, with a marker frame saying why.\n"
	  "--count on|off: the samples the module unwinds are counted in its\n"
	  "tables, drained every second, rather than read one by one (on by\n"
	  "default, where it can: --unwind kernel, no --raw, --trace or\n"
	  "--critical-path, which need each sample).\n"
	  "--trace FILE (with --events cpu,offcpu) writes the session's timeline\n"
	  "as a Chrome trace (Perfetto, chrome://tracing, speedscope; mode 0600):\n"
	  "per thread, running, runnable and blocked slices (the blocked stack),\n"
	  "a flow from each waker's slice to the thread it woke, each sample an\n"
	  "instant with its stack. --trace-window S keeps the last S seconds,\n"
	  "--trace-pid PID (up to " STR(TAPROOT_TIMELINE_MAX_PIDS) ") only those processes; at most\n"
	  STR(TAPROOT_TIMELINE_MAX_EVENTS) " events are held (the oldest half dropped past that);\n"
	  "what was left out is in the file's otherData.\n"
	  "--critical-path TID (a thread, a pid for its main thread; a NAME for\n"
	  "the main threads of the processes of that name; 'command' for the\n"
	  "COMMAND's) writes DIR/critpath.pb.gz (critical/\n"
	  "nanoseconds, label thread): walking back from its end, its running\n"
	  "time goes to its own stacks, its run-queue waits to [run queue], and\n"
	  "its blocked time follows the thread that woke it, recursively;\n"
	  "interrupts, timers and wakers not recorded end the chain as\n"
	  "[hardirq], [timer], [unknown]. Both need every off-CPU interval:\n"
	  "--sched-one-in is 1 with them, and any other value is refused.\n"
	  "--flamegraph FILE also writes the CPU profile as a flame graph: one\n"
	  "HTML file (mode 0600, written atomically) that a browser opens\n"
	  "offline, the drawing library inside; click a frame to zoom into it,\n"
	  "search functions by regular expression (FILE opened as\n"
	  "FILE#search=RE starts with one). The page's template, which holds\n"
	  "the library, is read before recording starts: $TAPROOT_FLAMEGRAPH_PAGE,\n"
	  "else the build tree's, else " FLAMEGRAPH_PAGE_INSTALLED ".\n"
	  "--raw FILE also saves what the profiles were built from (the ring\n"
	  "records, kallsyms, what was read of /proc, mapped files' build IDs;\n"
	  "gzip, mode 0600, written atomically) for 'taprootctl report FILE'.\n"
	  "--symbolize none leaves the frames of binaries and libraries unnamed,\n"
	  "for a server to name: their locations keep the address, their\n"
	  "mappings the file, offset and build ID (pprof -symbolize=local with\n"
	  "$PPROF_BINARY_PATH names them from the binaries or their debug files).\n"
	  "Frames only this host can name stay named: the kernel's, JIT code's,\n"
	  "Python's and Java's. Default local: everything named here.\n"
	  "Refused while sampling already runs (taprootd or another record).\n" },
	{ "report", do_report,
	  "FILE --output DIR [--repeat N] [--stats-json FILE] [--json]\n"
	  "         [--trace FILE [--trace-window S] [--trace-pid PID]...]\n"
	  "         [--critical-path TID|NAME] [--flamegraph FILE] [--symbolize local|none]",
	  "rebuild the profiles of a 'record --raw FILE' recording into DIR",
	  "Replays FILE's records through a pipeline with the recording's\n"
	  "options and writes DIR/cpu.pb.gz (and offcpu, offwake, schedlat when\n"
	  "recorded with --events offcpu), with the summary record prints. No\n"
	  "module needed; run it on the host that recorded (a QEMU guest's\n"
	  "host too): mapped files are opened from this host's file system and\n"
	  "matched by build ID; a file that is not the recorded one is left\n"
	  "unresolved and counted. A truncated or corrupt FILE is an error\n"
	  "before anything is written. --repeat N (1.." STR(1000) ") replays the records\n"
	  "N times through one pipeline (pass 1 cold, later passes with warm\n"
	  "caches; the profiles reset between passes, the last one written) and\n"
	  "prints per pass: samples, user and kernel frames, CPU and wall time,\n"
	  "samples/s and ns per unwound frame for taproot_unwind() alone and for\n"
	  "the whole pipeline. --stats-json FILE writes the summary and the\n"
	  "passes as JSON to FILE; --json prints it instead of the text.\n"
	  "--trace, --trace-window, --trace-pid and --critical-path are\n"
	  "record's, over the recording's timeline (the last pass's); a NAME is\n"
	  "the main thread of every process of that name. They need a\n"
	  "recording of every off-CPU interval (--events cpu,offcpu, whose\n"
	  "--sched-one-in was 1); another is refused. --flamegraph FILE writes\n"
	  "the CPU profile as record's does (the last pass's). --symbolize is\n"
	  "record's: none leaves the frames of binaries and libraries unnamed.\n" },
	{ "top", do_top, "[--refresh S] [--total] [--by-function] [--filter TEXT] [--count N]",
	  "the hottest functions of the host, live",
	  "A view of the functions the CPU samples of the last refresh (every\n"
	  "second, --refresh S) ran: SELF, the share of samples where the\n"
	  "function was the leaf, TOTAL, where it was anywhere on the stack,\n"
	  "and the PROCESS, its service_name or else its process name. Sorted\n"
	  "by self (--total: by total); --by-function shows a row per\n"
	  "function, its processes together; --filter TEXT keeps the rows\n"
	  "whose function or process holds TEXT (any case). Keys: q quit,\n"
	  "s sort by self or total, / filter (Enter to apply, Esc to leave),\n"
	  "c clear the filter, g rows by process or by function, p pause,\n"
	  "space refresh now. It asks the running taprootd (the one its state\n"
	  "file names, $TAPROOTD_STATE) with SIGUSR1 and reads the file it\n"
	  "writes beside that state file; without one it starts a taprootd of\n"
	  "its own (--start; its files in a private directory, removed at\n"
	  "exit). Not on a terminal, or with --count N, it prints N snapshots\n"
	  "(default 1) as text and exits. Needs what taprootd needs\n"
	  "(CAP_PERFMON or CAP_SYS_ADMIN), and to signal it and read its files\n"
	  "(root, for the packaged service).\n" },
	{ "help", do_help, "[COMMAND]",
	  "show this help, or the help of COMMAND", NULL },
	{ NULL },
};

static void print_doc(const char *doc)
{
	const char *line = doc;

	while (*line) {
		size_t n = strcspn(line, "\n");

		printf("    %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
}

static void print_command(const struct taproot_command *c, bool doc)
{
	printf("  %s%s%s\n", c->name, c->args[0] ? " " : "", c->args);
	printf("    %s\n", c->help);
	if (doc && c->doc) {
		putchar('\n');
		print_doc(c->doc);
	}
}

static void usage(void)
{
	const struct taproot_command *c;

	printf("Usage: %s [OPTIONS] COMMAND [ARGS]\n"
	       "       %s help [COMMAND]\n\n"
	       "Commands (any unambiguous prefix works):\n", prog, prog);
	for (c = commands; c->name; c++)
		print_command(c, false);
	printf("\nOptions:\n"
	       "  -j, --json     JSON output: one value per command (dump: one\n"
	       "                 per record, a line each); errors as\n"
	       "                 {\"error\": \"...\"} on stdout\n"
	       "  -h, --help     show this help\n"
	       "  -V, --version  show the version and the ABI version it speaks\n"
	       "\nExit status: 0 success, 1 error, 2 usage error.\n");
}

static int do_help(int argc, char **argv)
{
	const struct taproot_command *c;
	int err;

	if (argc == 0) {
		usage();
		return EXIT_OK;
	}
	if (argc > 1)
		return p_usage("'help' takes one COMMAND, not %d", argc);
	err = taproot_cmd_find(commands, argv[0], &c);
	if (err < 0)
		return p_usage("%s", taproot_errmsg(err));
	printf("Usage: %s %s%s%s\n", prog, c->name, c->args[0] ? " " : "", c->args);
	printf("    %s\n", c->help);
	if (c->doc) {
		putchar('\n');
		print_doc(c->doc);
	}
	return EXIT_OK;
}

/* ------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ "version",	no_argument,	NULL, 'V' },
		{ NULL }
	};
	const struct taproot_command *c;
	int opt, err;

	/* "+": options end at the command; its own options are its own. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+jhV", options, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json_output = true;
			break;
		case 'h':
			usage();
			return EXIT_OK;
		case 'V':
			if (json_output) {
				struct taproot_json *j = json_begin();

				if (!j)
					return EXIT_ERR;
				taproot_json_object_begin(j);
				taproot_json_key_string(j, "version", TAPROOT_VERSION);
				taproot_json_key_u64(j, "abi_version", TAPROOT_ABI_VERSION);
				taproot_json_object_end(j);
				return json_end(j);
			}
			printf("%s %s (taproot ABI %d)\n", prog, TAPROOT_VERSION,
			       TAPROOT_ABI_VERSION);
			return EXIT_OK;
		default:
			return p_usage("unknown option '%s' (see '%s help')",
				       argv[optind - 1], prog);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0)
		return p_usage("missing COMMAND (see '%s help')", prog);

	err = taproot_cmd_find(commands, argv[0], &c);
	if (err < 0)
		return p_usage("%s (see '%s help')", taproot_errmsg(err), prog);
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return do_help(1, (char *[]){ (char *)c->name });
	return c->fn(argc - 1, argv + 1);
}
