// SPDX-License-Identifier: GPL-2.0
/*
 * The command lines of taprootctl record, report and dump and of taprootd,
 * and taprootd's --config file: bad input is refused with a message that
 * names it and the usage exit status (2), before anything touches the
 * module. Runs the built ctl/taprootctl and ctl/taprootd from the source
 * tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>

#include <cmocka.h>
#include <linux/taproot.h>

#include "raw/raw.h"
#include "runcmd.h"

#define CTL	"ctl/taprootctl"
#define DAEMON	"ctl/taprootd"

/*
 * Run @cmd, stderr with stdout: its output (malloc'ed) and *@status its
 * exit status. The shell ends with the status printed and exits 0, so
 * that run() does not report the failures these tests want.
 */
static char *run_cli(const char *cmd, int *status)
{
	int sh_status;
	char *out = run(&sh_status, "%s 2>&1; echo \"[exit $?]\"", cmd);
	char *tail = strrchr(out, '[');

	assert_int_equal(sh_status, 0);
	assert_non_null(tail);
	assert_int_equal(sscanf(tail, "[exit %d]", status), 1);
	*tail = '\0';
	return out;
}

/* Run @cmd: its exit status must be @want, its output hold @needle. */
static void expect(const char *cmd, int want, const char *needle)
{
	int status;
	char *out = run_cli(cmd, &status);

	if (status != want || !strstr(out, needle))
		fail_msg("%s: exit %d, want %d; output lacks '%s':\n%s", cmd, status, want, needle,
			 out);
	free(out);
}

/* A config file holding @text; its path, to free. */
static char *config_file(const char *text)
{
	char *path = strdup("/tmp/taproot-test-cli-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void record_refuses_bad_values(void **state)
{
	expect(CTL " record --freq 0 -o /nonexistent", 2,
	       "'record --freq' needs a number in 1..1000, not '0'");
	expect(CTL " record --freq=1001 -o /nonexistent", 2, "not '1001'");
	expect(CTL " record --ustack 7 -o /nonexistent", 2, "multiple of 8");
	expect(CTL " record --ring-pages 3 -o /nonexistent", 2, "power of two, not '3'");
	expect(CTL " record --buffer-mb 65537 -o /nonexistent", 2,
	       "'record --buffer-mb' needs a number in 0..65536, not '65537'");
	expect(CTL " record --duration -1 -o /nonexistent", 2, "positive number of seconds");
	expect(CTL " record --events cpu,gpu -o /nonexistent", 2, "unknown kind 'gpu'");
	expect(CTL " record --pid 1,x -o /nonexistent", 2, "'record --pid' needs a number");
	/* More pids may follow --pid as words of their own. */
	expect(CTL " record --pid 1 2 0 -o /nonexistent", 2, "not '0'");
}

static void dump_refuses_bad_values(void **state)
{
	expect(CTL " dump --count 0", 2, "'dump --count' needs a number in 1..");
	expect(CTL " dump --pid 1x", 2, "'dump --pid' needs a number in 1..2147483647, not '1x'");
	expect(CTL " dump --ustack-bytes=-1", 2, "'dump --ustack-bytes' needs a number in 0..");
	expect(CTL " dump --duration 0", 2, "'dump --duration' needs a positive number of seconds");
	expect(CTL " dump --pid", 2, "'dump --pid' needs a value");
}

static void record_refuses_bad_combinations(void **state)
{
	expect(CTL " record", 2, "'record' needs --output DIR");
	expect(CTL " record -o /nonexistent --pid 1 --all", 2, "exclude each other");
	expect(CTL " record -o /nonexistent --all -- true", 2, "a COMMAND is profiled alone");
	expect(CTL " record -o /nonexistent --min-block 5", 2, "need --events offcpu");
	expect(CTL " record -o /nonexistent --", 2, "needs a COMMAND after it");
	expect(CTL " record -o /nonexistent --label-tid=1", 2, "'record --label-tid' takes no value");
	expect(CTL " record -o /nonexistent --bogus", 2, "unknown option '--bogus'");
	expect(CTL " record -o /nonexistent stray", 2, "unexpected argument 'stray'");
	expect(CTL " record -o /nonexistent --freq", 2, "'record --freq' needs a value");
	/* The timeline needs every off-CPU interval, and the options go together. */
	expect(CTL " record -o /nonexistent --trace t.json", 2, "need --events offcpu");
	expect(CTL " record -o /nonexistent --events cpu,offcpu --sched-one-in 2 --critical-path 1", 2,
	       "need every off-CPU interval: not with --sched-one-in 2");
	expect(CTL " record -o /nonexistent --trace-window 5", 2,
	       "go with --trace or --critical-path");
	expect(CTL " record -o /nonexistent --events offcpu --critical-path command", 2,
	       "'record --critical-path command' needs a COMMAND");
	expect(CTL " record -o /nonexistent --events offcpu --critical-path 0", 2,
	       "'record --critical-path' needs a number in 1..2147483647, not '0'");
	expect(CTL " record -o /nonexistent --events offcpu --trace t --trace-window 0", 2,
	       "'record --trace-window' needs a positive number of seconds");
}

static void *park(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pause();
	return NULL;
}

/*
 * --pid of no process, or of a thread (the module samples processes): an
 * error naming it, before the module or --output is touched.
 */
static void record_refuses_missing_processes(void **state)
{
	char cmd[160], want[64];
	pthread_t t;
	pid_t tid = 0;
	long max = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

	(void)state;
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &max), 1);
	fclose(f);
	/* Every pid is below pid_max: this one names no process. */
	snprintf(cmd, sizeof(cmd), CTL " record -o /nonexistent --pid 1 %ld", max);
	snprintf(want, sizeof(want), "record --pid %ld: no such process", max);
	expect(cmd, 1, want);
	assert_int_equal(pthread_create(&t, NULL, park, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		sched_yield();
	snprintf(cmd, sizeof(cmd), CTL " record -o /nonexistent --pid %d", (int)tid);
	expect(cmd, 1, "a thread of process");
	pthread_cancel(t);
	pthread_join(t, NULL);
	assert_int_equal(access("/nonexistent", F_OK), -1);
}

/* A raw capture of nothing at @path, its header's off-CPU settings @offcpu, @one_in. */
static void empty_recording(const char *path, bool offcpu, uint32_t one_in)
{
	struct taproot_raw_header h = {
		.abi_version = TAPROOT_ABI_VERSION, .kernel_release = "test", .freq_hz = 99,
		.cpu = true, .offcpu = offcpu, .sched_one_in = one_in,
	};
	struct taproot_raw_end end = { .duration_ns = 1 };
	struct taproot_raw_writer *w;

	assert_int_equal(taproot_raw_writer_new(path, &h, &w), 0);
	assert_int_equal(taproot_raw_writer_finish(w, &end), 0);
}

/* report's timeline options: refused alone, or for a recording that lacks intervals. */
static void report_refuses_timeline_without_intervals(void **state)
{
	char dir[] = "/tmp/taproot-test-report-XXXXXX", path[256], cmd[768];
	int status;

	assert_non_null(mkdtemp(dir));
	expect(CTL " report x.raw -o /nonexistent --trace-window 5", 2,
	       "'report': --trace-window and --trace-pid go with --trace or --critical-path");
	expect(CTL " report x.raw -o /nonexistent --trace-pid 0 --trace t", 2,
	       "'report --trace-pid' needs a number in 1..");
	expect(CTL " report x.raw -o /nonexistent --critical-path", 2,
	       "'report --critical-path' needs a value");
	expect(CTL " report x.raw -o /nonexistent --repeat 0", 2,
	       "'report --repeat' needs a number in 1..1000, not '0'");

	snprintf(path, sizeof(path), "%s/cpu-only.raw", dir);
	empty_recording(path, false, 1);
	snprintf(cmd, sizeof(cmd), CTL " report %s -o %s/out --trace %s/t.json", path, dir, dir);
	expect(cmd, 1, "was recorded without --events offcpu");
	snprintf(path, sizeof(path), "%s/one-in-4.raw", dir);
	empty_recording(path, true, 4);
	snprintf(cmd, sizeof(cmd), CTL " report %s -o %s/out --critical-path 1", path, dir);
	expect(cmd, 1, "kept one off-CPU interval in 4 (--sched-one-in)");
	/* Refused before anything was written. */
	snprintf(cmd, sizeof(cmd), "%s/out", dir);
	assert_int_equal(access(cmd, F_OK), -1);
	snprintf(cmd, sizeof(cmd), "%s/t.json", dir);
	assert_int_equal(access(cmd, F_OK), -1);

	/* A recording with every interval: a name no process had is said so. */
	snprintf(path, sizeof(path), "%s/all.raw", dir);
	empty_recording(path, true, 1);
	snprintf(cmd, sizeof(cmd), CTL " report %s -o %s/out --critical-path nosuchcomm", path,
		 dir);
	expect(cmd, 1, "'report --critical-path nosuchcomm': no process of that name");
	free(run(&status, "rm -rf %s", dir));
}

static void daemon_refuses_bad_options(void **state)
{
	expect(DAEMON " --critical-path 'a b'", 2,
	       "'--critical-path' needs a process name (1 to 15 bytes, no blank) or a thread id");
	expect(DAEMON " --critical-path 0", 2, "or a thread id, not '0'");
	expect(DAEMON " --trace on", 2, "trace and critical-path need events offcpu");
	expect(DAEMON " -i 0", 2, "'--interval' needs a number in 1..86400, not '0'");
	expect(DAEMON " --sched-one-in -3", 2, "'--sched-one-in' needs a number in 1..65536");
	expect(DAEMON " --events cpu,gpu", 2, "'--events': unknown kind 'gpu'");
	expect(DAEMON " --interval", 2, "'--interval' needs an argument");
	expect(DAEMON " --bogus", 2, "unknown option '--bogus'");
	expect(DAEMON " stray", 2, "unexpected argument 'stray'");
	/* The module's sampling settings, in taprootctl config's words and bounds. */
	expect(DAEMON " --freq 1001", 2, "'--freq': freq '1001': not in 1..1000");
	expect(DAEMON " -F 0", 2, "'--freq': freq '0': not in 1..1000");
	expect(DAEMON " --pids 12,x", 2, "'--pids': pids 'x': not a decimal number");
	expect(DAEMON " -p 0", 2, "'--pids': pids '0': not in 1..2147483647");
	expect(DAEMON " --kstack 128", 2, "'--kstack': kstack '128': not in 0..127");
	expect(DAEMON " --ustack 100", 2, "'--ustack': ustack '100': not a multiple of 8");
	expect(DAEMON " --ring-pages 3", 2, "'--ring-pages': ring-pages '3': not a power of two");
	expect(DAEMON " --freq 99 --freq 199", 2, "'--freq': 'freq' given twice");
	expect(DAEMON " --label team", 2, "'--label' needs KEY=VALUE");
	expect(DAEMON " --label 9x=y", 2, "'--label' needs KEY=VALUE");
	expect(DAEMON " -l service_name=web", 2, "taproot sets the label service_name itself");
	expect(DAEMON " -l team=a -l team=b", 2, "label team given twice");
	expect(DAEMON " -l a=1 -l b=1 -l c=1 -l d=1 -l e=1 -l f=1 -l g=1 -l h=1 -l i=1", 2,
	       "'--label': more than 8");
	expect(DAEMON " --relabel 'keep service_name'", 2,
	       "'--relabel': relabel: 'keep' needs a regular expression");
	expect(DAEMON " --relabel 'replace exe (a) t $2'", 2, "uses group 2");
	expect(DAEMON " --metrics 9464", 2, "'--metrics' needs ADDR:PORT");
	expect(DAEMON " -m 127.0.0.1:99999", 2, "'--metrics' needs ADDR:PORT");
	expect(DAEMON " -m '[::1:9464'", 2, "'--metrics' needs ADDR:PORT");
	expect(DAEMON " --debuginfod ftp://x", 2, "'--debuginfod' needs http:// or https:// URLs");
	expect(DAEMON " --debuginfod 'https://a http://'", 2, "'--debuginfod' needs http://");
	expect(DAEMON " --push ftp://store", 2, "'--push' needs one http:// or https:// URL");
	expect(DAEMON " --push 'http://a http://b'", 2, "'--push' needs one http://");
	expect(DAEMON " --push http://", 2, "'--push' needs one http://");
	/* Credentials never on the command line, where ps shows them. */
	expect(DAEMON " --push https://user:secret@store", 2, "without user:password@");
	expect(DAEMON " --push 'https://store/p?x=1'", 2, "or ?query");
	expect(DAEMON " --push-tenant 'a b'", 2, "'--push-tenant' needs 1 to 128 printable");
	expect(DAEMON " --push-timeout 0", 2, "'--push-timeout' needs a number in 1..3600");
	expect(DAEMON " --push-spool-mb 0", 2, "'--push-spool-mb' needs a number in 1..");
	expect(DAEMON " --unwind maybe", 2, "'--unwind' needs on or off, not 'maybe'");
	expect(DAEMON " --unwind", 2, "'--unwind' needs an argument");
	expect(DAEMON " --ustack-private yes --unwind no", 2,
	       "ustack-private on needs unwind on");
	expect(DAEMON " --unwind-frames 0", 2, "'--unwind-frames' needs a number in 1..127");
	expect(DAEMON " --unwind-frames 128", 2, "'--unwind-frames' needs a number in 1..127");
	expect(DAEMON " --unwind-mem 4097", 2, "'--unwind-mem' needs a number in 1..4096");
	expect(DAEMON " --unwind-mem 256M", 2, "'--unwind-mem' needs a number in 1..4096");
	expect(DAEMON " --buffer-mb 65537", 2, "'--buffer-mb' needs a number in 0..65536");
}

/*
 * --push's secrets are read, and checked, before anything else happens
 * (the module is not needed to find a missing token); what is wrong is
 * said without the secret.
 */
static void daemon_push_secrets(void **state)
{
	char dir[] = "/tmp/taproot-test-push-XXXXXX", cmd[512], *out;
	int status;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), DAEMON " -f -o %s --push http://127.0.0.1:9 "
		 "--push-bearer-file %s/none", dir, dir);
	expect(cmd, 1, "--push-bearer-file /tmp/taproot-test-push-");
	snprintf(cmd, sizeof(cmd), "%s/token", dir);
	f = fopen(cmd, "w");
	assert_non_null(f);
	fputs("\nsecret-token-on-line-2\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), DAEMON " -f -o %s --push http://127.0.0.1:9 "
		 "--push-bearer-file %s/token", dir, dir);
	expect(cmd, 1, "the first line must hold 1 to 4096 printable bytes");
	out = run_cli(cmd, &status);
	assert_null(strstr(out, "secret-token"));
	free(out);
	snprintf(cmd, sizeof(cmd), DAEMON " -f -o %s --push http://127.0.0.1:9 "
		 "--push-bearer-file %s/token --push-basic-file %s/token", dir, dir, dir);
	expect(cmd, 1, "--push-bearer-file and --push-basic-file: one or the other");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	out = run_cli(cmd, &status);
	free(out);
}

/* Every setting is a key of the file, and --help says which. */
static void daemon_help_lists_every_key(void **state)
{
	static const char *const keys[] = {
		"output", "interval", "retain", "max-stacks", "label-tid", "label-cpu",
		"events", "sched-one-in", "sched-budget", "min-block", "label", "relabel",
		"metrics", "debuginfod", "push", "push-bearer-file", "push-basic-file",
		"push-tenant", "push-timeout", "push-spool-mb", "unwind", "ustack-private",
		"count", "unwind-frames", "unwind-mem", "buffer-mb", "trace", "critical-path",
	};
	int status;
	char *out = run_cli(DAEMON " --help", &status);

	assert_int_equal(status, 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char line[64];

		snprintf(line, sizeof(line), "--%s", keys[i]);
		if (!strstr(out, line))
			fail_msg("--help has no option %s", line);
		if (!strstr(strstr(out, "The --config file:"), keys[i]))
			fail_msg("--help does not list the key %s", keys[i]);
	}
	free(out);
}

static void daemon_config_names_the_bad_line(void **state)
{
	char *path = config_file("# taprootd\n\ninterval = 0\n");
	char cmd[256], want[128];

	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	snprintf(want, sizeof(want), "%s:3: 'interval' needs a number in 1..86400, not '0'",
		 path);
	expect(cmd, 2, want);
	unlink(path);
	free(path);

	path = config_file("interval 5\nlabel-tid maybe\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, ":2: 'label-tid' needs yes or no, not 'maybe'");
	unlink(path);
	free(path);

	path = config_file("label team web\nlabel team=db\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, ":2: 'label': label team given twice");
	unlink(path);
	free(path);

	path = config_file("freq 99\npids 1,2\nfreq 49\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, ":3: 'freq': 'freq' given twice");
	unlink(path);
	free(path);

	path = config_file("pids all\nkstack 200\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, ":2: 'kstack': kstack '200': not in 0..127");
	unlink(path);
	free(path);

	path = config_file("relabel drop service_name cron\nrelabel keep comm (x\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, ":2: 'relabel': relabel: '(x': ");
	unlink(path);
	free(path);

	path = config_file("unwind-frames 64\nunwind of\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, ":2: 'unwind' needs on or off, not 'of'");
	unlink(path);
	free(path);

	/* Both good alone, not together; the file's unwind loses to the command line's. */
	path = config_file("unwind off\nustack-private on\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, "ustack-private on needs unwind on");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -o /nonexistent/cmdline --unwind on -c %s", path);
	expect(cmd, 1, "output /nonexistent/cmdline: No such file or directory");
	unlink(path);
	free(path);

	path = config_file("colour blue\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 2, "unknown key 'colour' (output, interval, retain, max-stacks");
	unlink(path);
	free(path);
}

/*
 * The command line wins over the file, yet the file's value is still
 * checked: the output the file names is not used when -o is given.
 */
static void daemon_config_loses_to_the_command_line(void **state)
{
	char *path = config_file("output /nonexistent/file\ninterval 5\n");
	char cmd[256];

	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s", path);
	expect(cmd, 1, "output /nonexistent/file: No such file or directory");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -o /nonexistent/cmdline -c %s", path);
	expect(cmd, 1, "output /nonexistent/cmdline: No such file or directory");
	unlink(path);
	free(path);

	path = config_file("interval 0\n");
	snprintf(cmd, sizeof(cmd), DAEMON " -f -i 7 -c %s", path);
	expect(cmd, 2, "'interval' needs a number in 1..86400, not '0'");
	unlink(path);
	free(path);
}

/*
 * --print-config writes a file taprootd reads back unchanged, every
 * setting in it, commented out at its default; uncommented, the file
 * still parses (the defaults are within their own bounds).
 */
static void daemon_print_config_reads_back(void **state)
{
	static const char *const keys[] = {
		"output", "interval", "retain", "max-stacks", "label-tid", "label-cpu",
		"events", "sched-one-in", "sched-budget", "min-block", "label", "relabel",
		"metrics", "debuginfod", "push", "push-bearer-file", "push-basic-file",
		"push-tenant", "push-timeout", "push-spool-mb", "unwind", "ustack-private",
		"count", "unwind-frames", "unwind-mem", "buffer-mb", "trace", "critical-path",
	};
	char *path = strdup("/tmp/taproot-test-cli-XXXXXX");
	char cmd[256], line[64];
	int status, fd = mkstemp(path);
	char *out;

	assert_true(fd >= 0);
	close(fd);
	out = run_cli(DAEMON " --print-config", &status);
	assert_int_equal(status, 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(line, sizeof(line), "\n#%s ", keys[i]);
		if (!strstr(out, line))
			fail_msg("--print-config lacks the setting %s:\n%s", keys[i], out);
	}
	free(out);
	/*
	 * Uncommented: every setting given (events with offcpu, which the
	 * example of critical-path needs); output . is checked, then the module.
	 */
	snprintf(cmd, sizeof(cmd), DAEMON " --print-config | sed 's/^#\\([a-z]\\)/\\1/; "
		 "s/^events .*/events cpu,offcpu/' > %s", path);
	out = run_cli(cmd, &status);
	assert_int_equal(status, 0);
	free(out);
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s --output /nonexistent/cmdline", path);
	expect(cmd, 1, "output /nonexistent/cmdline: No such file or directory");
	unlink(path);
	free(path);
}

/* The text of man page @path with roff's escaped hyphens ("\\-") as "-". */
static char *man_text(const char *path)
{
	int status;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "sed 's/\\\\-/-/g' %s", path);
	return run_cli(cmd, &status);
}

/*
 * The words at the start of @text's lines that begin with @lead ("  -o,
 * --output DIR" gives "output" for lead "--" within the first 8 columns;
 * "#interval 10" gives "interval" for lead "#"), space-separated.
 */
static void leading_words(const char *text, const char *lead, size_t within, char *out,
			  size_t len)
{
	size_t off = 0, n = strlen(lead);
	const char *line, *next, *at;

	out[0] = '\0';
	for (line = text; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			next++;
		at = strstr(line, lead);
		if (!at || at >= next || (size_t)(at - line) > within)
			continue;
		at += n;
		if (*at < 'a' || *at > 'z')
			continue;
		off += (size_t)snprintf(out + off, len - off, "%.*s ",
					(int)strspn(at, "abcdefghijklmnopqrstuvwxyz-"), at);
		assert_true(off < len);
	}
}

/* Every word of @words (space-separated) is in @text as @prefix WORD. */
static void all_named(const char *what, const char *text, const char *prefix, const char *words)
{
	char word[64];

	for (const char *w = words; *w; w += strcspn(w, " ") + 1) {
		snprintf(word, sizeof(word), "%s%.*s", prefix, (int)strcspn(w, " "), w);
		if (!strstr(text, word))
			fail_msg("%s lacks %s", what, word);
	}
}

/*
 * The man pages name every option and key the programs take, as the
 * programs list them (--help, --print-config): no drift.
 */
static void man_pages_cover_every_option(void **state)
{
	static const char ctl_words[] =
		"load unload status start stop config stats dump record report top --ko --count "
		"--duration --pid --ustack-bytes --freq --all --ustack --ring-pages --buffer-mb --label-tid "
		"--label-cpu --stats-json --events --sched-one-in --min-block --raw --output "
		"--repeat --unwind --ustack-private --trace --trace-window --trace-pid "
		"--critical-path --flamegraph freq kstack ustack events idle ring-pages watermark "
		"pids sched-one-in follow unwind ustack-private unwind-verify count unwind-frames "
		"unwind-mem --refresh --total --by-function --filter ";
	char *daemon = man_text("man/taprootd.8"), *conf = man_text("man/taprootd.conf.5");
	char *ctl = man_text("man/taprootctl.8"), *help, *printed;
	char options[1024], keys[512];
	int status;

	help = run_cli(DAEMON " --help", &status);
	printed = run_cli(DAEMON " --print-config", &status);
	leading_words(help, "--", 8, options, sizeof(options));
	leading_words(printed, "#", 0, keys, sizeof(keys));
	assert_non_null(strstr(options, "sched-budget "));
	assert_non_null(strstr(keys, "min-block "));
	all_named("taprootd(8)", daemon, "--", options);
	all_named("taprootd.conf(5)", conf, "", keys);
	all_named("taprootctl(8)", ctl, "", ctl_words);
	free(help);
	free(printed);
	free(daemon);
	free(conf);
	free(ctl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_refuses_bad_values),
		cmocka_unit_test(record_refuses_bad_combinations),
		cmocka_unit_test(record_refuses_missing_processes),
		cmocka_unit_test(dump_refuses_bad_values),
		cmocka_unit_test(report_refuses_timeline_without_intervals),
		cmocka_unit_test(daemon_refuses_bad_options),
		cmocka_unit_test(daemon_push_secrets),
		cmocka_unit_test(daemon_help_lists_every_key),
		cmocka_unit_test(daemon_config_names_the_bad_line),
		cmocka_unit_test(daemon_config_loses_to_the_command_line),
		cmocka_unit_test(daemon_print_config_reads_back),
		cmocka_unit_test(man_pages_cover_every_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
