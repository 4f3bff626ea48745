// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd's options: one table for its command line, its --config file
 * and its --help. A setting (a row with a DOPT_* bit) is both --NAME on
 * the command line and the key NAME in the file, parsed by the same code
 * with the same bounds; the other rows are command line only.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <linux/taproot.h>

#include "daemon.h"
#include "taproot.h"

#define STR_(x)	#x
#define STR(x)	STR_(x)
#define FIELD(f)	offsetof(struct daemon_opts, f)

const struct daemon_option daemon_options[] = {
	{ "output", 'o', DV_PATH, DOPT_OUTPUT, FIELD(output), 0, 0, "DIR",
	  "directory for profiles (default: the current one)" },
	{ "interval", 'i', DV_COUNT, DOPT_INTERVAL, FIELD(interval), 1, INTERVAL_MAX, "S",
	  "seconds per profile, 1.." STR(INTERVAL_MAX) " (default " STR(INTERVAL_DEFAULT) ")" },
	{ "retain", 'r', DV_COUNT, DOPT_RETAIN, FIELD(retain), 0, RETAIN_MAX, "N",
	  "profiles to keep, 0 for all (default 0); only\n"
	  "files of taprootd's own pattern are deleted" },
	{ "start", 's', DV_ACTION, 0, 0, 0, 0, NULL,
	  "start sampling if it is stopped (and stop it at exit)" },
	{ "config", 'c', DV_ACTION, 0, 0, 0, 0, "FILE",
	  "read settings from FILE (below); re-read on\n"
	  "SIGHUP. Options on the command line win over it." },
	{ "state", 0, DV_ACTION, 0, 0, 0, 0, "FILE",
	  "state file for 'taprootctl status' (default\n" TAPROOTD_STATE_DEFAULT ")" },
	{ "max-stacks", 0, DV_COUNT, DOPT_MAX_STACKS, FIELD(max_stacks), 1, MAX_STACKS_MAX, "N",
	  "distinct stacks per profile (default " STR(TAPROOT_PROFILE_MAX_STACKS) ")" },
	{ "label-tid", 0, DV_SWITCH, DOPT_LABEL_TID, FIELD(label_tid), 0, 0, NULL,
	  "add a tid label to samples" },
	{ "label-cpu", 0, DV_SWITCH, DOPT_LABEL_CPU, FIELD(label_cpu), 0, 0, NULL,
	  "add a cpu label to samples" },
	{ "freq", 'F', DV_MODULE, DOPT_MODULE_FREQ, 0, 0, 0, "HZ",
	  "samples a second on each CPU, 1.." STR(TAPROOT_FREQ_MAX) " (default: the\n"
	  "module's, " STR(TAPROOT_FREQ_DEFAULT) " when loaded). Changes only while\n"
	  "sampling is stopped: a session taprootd started\n"
	  "is restarted for it, another's is left alone" },
	{ "pids", 'p', DV_MODULE, DOPT_MODULE_PIDS, 0, 0, 0, "LIST",
	  "sample the processes of LIST, PID,PID,... (up to\n"
	  STR(TAPROOT_MAX_TGIDS) "), or all for every process (default: the\n"
	  "module's, all when loaded)" },
	{ "kstack", 0, DV_MODULE, DOPT_MODULE_KSTACK, 0, 0, 0, "N",
	  "kernel frames a sample keeps at most, 0.." STR(TAPROOT_KSTACK_MAX) "\n"
	  "(default: the module's, " STR(TAPROOT_KSTACK_DEFAULT) " when loaded); 0: none" },
	{ "ustack", 0, DV_MODULE, DOPT_MODULE_USTACK, 0, 0, 0, "BYTES",
	  "user stack bytes a sample copies when the module\n"
	  "does not unwind it, 0.." STR(TAPROOT_USTACK_MAX) ", a multiple of 8\n"
	  "(default: the module's, " STR(TAPROOT_USTACK_DEFAULT) " when loaded)" },
	{ "ring-pages", 0, DV_MODULE, DOPT_MODULE_RING_PAGES, 0, 0, 0, "N",
	  "pages of each CPU's ring, a power of two in\n"
	  STR(TAPROOT_RING_PAGES_MIN) ".." STR(TAPROOT_RING_PAGES_MAX) " (default: the module's, "
	  STR(TAPROOT_RING_PAGES_DEFAULT) " when loaded).\n"
	  "Changes as freq does" },
	{ "events", 'e', DV_EVENTS, DOPT_EVENTS, 0, 0, 0, "LIST",
	  "profiles to write: cpu (default), offcpu (off-CPU:\n"
	  "offcpu-, offwake- and schedlat-STAMP.pb.gz), or\n"
	  "cpu,offcpu. offcpu needs the module's switch and\n"
	  "waking records: taprootd turns them on while\n"
	  "sampling is stopped; a session already running\n"
	  "without them gives no off-CPU profiles" },
	{ "sched-one-in", 0, DV_COUNT, DOPT_SCHED_ONE_IN, FIELD(sched_one_in), 1,
	  TAPROOT_SCHED_ONE_IN_MAX, "N",
	  "record at least one off-CPU interval in N\n"
	  "(default " STR(TAPROOT_SCHED_ONE_IN_DEFAULT) "); values are scaled by N" },
	{ "sched-budget", 0, DV_COUNT, DOPT_SCHED_BUDGET, FIELD(sched_budget), 0,
	  SCHED_BUDGET_MAX, "R",
	  "record at most about R off-CPU intervals a\n"
	  "second (default " STR(SCHED_BUDGET_DEFAULT) "; 0: no limit): every second\n"
	  "taprootd raises N by powers of two above\n"
	  "--sched-one-in when intervals come faster, and\n"
	  "lowers it again when they slow down" },
	{ "min-block", 0, DV_COUNT, DOPT_MIN_BLOCK, FIELD(min_block_us), 0, UINT32_MAX, "US",
	  "leave intervals blocked less than US microseconds\n"
	  "out of offcpu and offwake (a filter in taprootd:\n"
	  "the kernel still records them)" },
	{ "unwind", 0, DV_ONOFF, DOPT_UNWIND, FIELD(unwind), 0, 0, "on|off",
	  "unwind user stacks in the module, from the unwind\n"
	  "tables and mappings taprootd uploads to it (default\n"
	  "on); off: the module copies stack snapshots that\n"
	  "taprootd unwinds, nothing is uploaded" },
	{ "ustack-private", 0, DV_ONOFF, DOPT_USTACK_PRIVATE, FIELD(ustack_private), 0, 0,
	  "on|off",
	  "a sample the module cannot unwind carries no user\n"
	  "stack bytes, only the frames it found (default off;\n"
	  "needs unwind on)" },
	{ "count", 0, DV_ONOFF, DOPT_COUNT, FIELD(count), 0, 0, "on|off",
	  "count the samples the module unwinds in its\n"
	  "tables, drained once an interval and within a\n"
	  "second of one filling, rather than read one by\n"
	  "one (default on; needs unwind on;\n"
	  "trace and critical-path read each sample)" },
	{ "unwind-frames", 0, DV_COUNT, DOPT_UNWIND_FRAMES, FIELD(unwind_frames), 1,
	  TAPROOT_UNWIND_FRAMES_MAX, "N",
	  "user frames the module unwinds at most, 1.." STR(TAPROOT_UNWIND_FRAMES_MAX) "\n"
	  "(default " STR(TAPROOT_UNWIND_FRAMES_DEFAULT) ")" },
	{ "unwind-mem", 0, DV_COUNT, DOPT_UNWIND_MEM, FIELD(unwind_mem_mib), 1,
	  TAPROOT_UNWIND_MEM_MAX, "MIB",
	  "MiB of tables and mappings taprootd may upload to\n"
	  "the module, 1.." STR(TAPROOT_UNWIND_MEM_MAX) " (default "
	  STR(TAPROOT_UNWIND_MEM_DEFAULT) "); beyond, processes\n"
	  "are unwound from snapshots" },
	{ "symbolize", 0, DV_CHOICE, DOPT_SYMBOLIZE, FIELD(symbolize), 0, 0, "local|none",
	  "name every frame here (local, the default), or\n"
	  "leave the frames of binaries and libraries as\n"
	  "addresses in mappings with their build IDs, for\n"
	  "the profile store to name (none); the kernel's,\n"
	  "JIT code's, Python's and Java's stay named" },
	{ "buffer-mb", 0, DV_COUNT, DOPT_BUFFER, FIELD(buffer_mb), 0, BUFFER_MB_MAX, "MB",
	  "MiB, over all CPUs, that a reader thread copies the\n"
	  "rings into while taprootd is busy (a table compile,\n"
	  "a new binary read): records are lost only when\n"
	  "both are full (default " STR(BUFFER_MB_DEFAULT) "; 0: no thread); at\n"
	  "least one ring's size per CPU" },
	{ "label", 'l', DV_LABEL, DOPT_LABEL, FIELD(labels), 0, DAEMON_LABELS_MAX, "KEY=VAL",
	  "add the label KEY=VAL to every sample (" STR(DAEMON_LABELS_MAX) " at\n"
	  "most; in the file: label KEY VALUE, a line\n"
	  "each); hostname and kernel_release always are" },
	{ "relabel", 0, DV_RELABEL, DOPT_RELABEL, FIELD(relabel), 0, DAEMON_RELABEL_MAX, "RULE",
	  "keep, drop or rewrite samples by their labels,\n"
	  "in order (up to " STR(DAEMON_RELABEL_MAX) "; a line each in the file):\n"
	  "'keep|drop LABEL[,LABEL...] REGEX',\n"
	  "'replace LABEL[,...] REGEX TARGET [REPLACEMENT]',\n"
	  "'labeldrop REGEX' (taprootd(8))" },
	{ "trace", 0, DV_ONOFF, DOPT_TRACE, FIELD(trace), 0, 0, "on|off",
	  "also write each interval's timeline as a Chrome\n"
	  "trace, trace-STAMP.json (default off; needs offcpu,\n"
	  "and records every off-CPU interval: sched-one-in\n"
	  "is 1 and sched-budget off)" },
	{ "critical-path", 0, DV_TARGET, DOPT_CRITICAL, FIELD(critical), 0, DAEMON_TARGETS_MAX,
	  "NAME|TID",
	  "also write each interval's critical path of the\n"
	  "main thread of every process named NAME (its comm),\n"
	  "or of thread TID, as critpath-STAMP.pb.gz (up to\n"
	  STR(DAEMON_TARGETS_MAX) "; a line each in the file; none by default;\n"
	  "needs offcpu, and records every off-CPU interval)" },
	{ "metrics", 'm', DV_ADDR, DOPT_METRICS, FIELD(metrics), 0, 0, "ADDR:PORT",
	  "serve taprootd's counters in the Prometheus text\n"
	  "format at http://ADDR:PORT/metrics (none by\n"
	  "default; :PORT for every address)" },
	{ "debuginfod", 0, DV_URLS, DOPT_DEBUGINFOD, FIELD(debuginfod), 0, 0, "URLS",
	  "fetch the debug files of binaries that have no\n"
	  "symbols or line info here, by build ID, from\n"
	  "these debuginfod servers (default:\n"
	  "$DEBUGINFOD_URLS; read at start only)" },
	{ "push", 0, DV_URL, DOPT_PUSH, FIELD(push), 0, 0, "URL",
	  "upload each interval's profiles, one series per\n"
	  "service_name, to the Pyroscope-compatible store at\n"
	  "URL (POST URL/ingest), or, for a URL that begins\n"
	  "otlp+http:// or otlp+https://, as OTLP profiles to\n"
	  "the OpenTelemetry collector at the rest of it\n"
	  "(POST URL/v1development/profiles); OUTPUT/push is\n"
	  "the spool (taprootd(8)). The push settings are\n"
	  "read at start only" },
	{ "push-bearer-file", 0, DV_FILE, DOPT_PUSH_BEARER, FIELD(push_bearer_file), 0, 0, "FILE",
	  "send 'Authorization: Bearer TOKEN', TOKEN the\n"
	  "first line of FILE" },
	{ "push-basic-file", 0, DV_FILE, DOPT_PUSH_BASIC, FIELD(push_basic_file), 0, 0, "FILE",
	  "send basic authentication, USER:PASSWORD the first\n"
	  "line of FILE" },
	{ "push-tenant", 0, DV_WORD, DOPT_PUSH_TENANT, FIELD(push_tenant), 0, 0, "ID",
	  "send 'X-Scope-OrgID: ID' (multi-tenant stores)" },
	{ "push-timeout", 0, DV_COUNT, DOPT_PUSH_TIMEOUT, FIELD(push_timeout), 1, PUSH_TIMEOUT_MAX,
	  "S", "give up an upload after S seconds and retry it\n"
	  "later (default " STR(PUSH_TIMEOUT_DEFAULT) ")" },
	{ "push-spool-mb", 0, DV_COUNT, DOPT_PUSH_SPOOL, FIELD(push_spool_mb), 1,
	  PUSH_SPOOL_MB_MAX, "MB",
	  "bound of the spool: beyond MB MiB waiting, the\n"
	  "oldest uploads are dropped, and counted (default\n"
	  STR(PUSH_SPOOL_MB_DEFAULT) ")" },
	{ "syslog", 0, DV_ACTION, 0, 0, 0, 0, NULL,
	  "log to syslog (daemon facility) instead of stderr" },
	{ "foreground", 'f', DV_ACTION, 0, 0, 0, 0, NULL,
	  "stay in the foreground; without it, taprootd\n"
	  "detaches once the module check has passed" },
	{ "print-config", 0, DV_ACTION, 0, 0, 0, 0, NULL,
	  "print a --config file holding every setting at its\n"
	  "default, commented, and exit" },
	{ "help", 'h', DV_ACTION, 0, 0, 0, 0, NULL, "show this help" },
	{ "version", 'V', DV_ACTION, 0, 0, 0, 0, NULL,
	  "show the version and the ABI version (" STR(TAPROOT_ABI_VERSION) ")" },
	{ NULL },
};

void daemon_opts_init(struct daemon_opts *o)
{
	*o = (struct daemon_opts){
		.interval = INTERVAL_DEFAULT, .cpu = true,
		.max_stacks = TAPROOT_PROFILE_MAX_STACKS,
		.sched_one_in = TAPROOT_SCHED_ONE_IN_DEFAULT,
		.sched_budget = SCHED_BUDGET_DEFAULT,
		.push_timeout = PUSH_TIMEOUT_DEFAULT,
		.push_spool_mb = PUSH_SPOOL_MB_DEFAULT,
		.unwind = true,
		.count = true,
		.unwind_frames = TAPROOT_UNWIND_FRAMES_DEFAULT,
		.unwind_mem_mib = TAPROOT_UNWIND_MEM_DEFAULT,
		.buffer_mb = BUFFER_MB_DEFAULT,
	};
}

int daemon_opts_check(const struct daemon_opts *o)
{
	if (o->ustack_private && !o->unwind) {
		log_msg(LOG_ERR, "ustack-private on needs unwind on: without the module's "
			"unwinding every sample would lose its user stack");
		return -1;
	}
	if ((o->trace || o->critical.nr) && !o->offcpu) {
		log_msg(LOG_ERR, "trace and critical-path need events offcpu: the timeline is "
			"made of the off-CPU intervals");
		return -1;
	}
	return 0;
}

static void list_free(struct daemon_list *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->nr = 0;
}

static int list_copy(struct daemon_list *dst, const struct daemon_list *src)
{
	dst->v = src->nr ? calloc(src->nr, sizeof(dst->v[0])) : NULL;
	dst->nr = 0;
	if (src->nr && !dst->v)
		return -1;
	for (; dst->nr < src->nr; dst->nr++)
		if (!(dst->v[dst->nr] = strdup(src->v[dst->nr])))
			return -1;
	return 0;
}

static int list_add(struct daemon_list *l, const char *s)
{
	char **v = realloc(l->v, (l->nr + 1) * sizeof(l->v[0]));

	if (!v)
		return -1;
	l->v = v;
	if (!(l->v[l->nr] = strdup(s)))
		return -1;
	l->nr++;
	return 0;
}

/* The string settings: daemon_opts owns each (malloc'ed or NULL). */
static const size_t string_fields[] = {
	FIELD(output), FIELD(metrics), FIELD(debuginfod), FIELD(push),
	FIELD(push_bearer_file), FIELD(push_basic_file), FIELD(push_tenant),
};
#define NR_STRING_FIELDS	(sizeof(string_fields) / sizeof(string_fields[0]))

static char **string_field(struct daemon_opts *o, size_t i)
{
	return (char **)((char *)o + string_fields[i]);
}

void daemon_opts_free(struct daemon_opts *o)
{
	for (size_t i = 0; i < NR_STRING_FIELDS; i++) {
		free(*string_field(o, i));
		*string_field(o, i) = NULL;
	}
	list_free(&o->labels);
	list_free(&o->relabel);
	list_free(&o->critical);
}

int daemon_opts_copy(struct daemon_opts *dst, const struct daemon_opts *src)
{
	struct daemon_opts *s = (struct daemon_opts *)src;	/* read only */
	bool ok = true;

	*dst = *src;
	for (size_t i = 0; i < NR_STRING_FIELDS; i++)
		*string_field(dst, i) = NULL;
	dst->labels = dst->relabel = dst->critical = (struct daemon_list){ 0 };
	for (size_t i = 0; i < NR_STRING_FIELDS && ok; i++)
		if (*string_field(s, i))
			ok = (*string_field(dst, i) = strdup(*string_field(s, i))) != NULL;
	if (!ok || list_copy(&dst->labels, &src->labels) < 0 ||
	    list_copy(&dst->relabel, &src->relabel) < 0 ||
	    list_copy(&dst->critical, &src->critical) < 0) {
		daemon_opts_free(dst);
		log_msg(LOG_ERR, "out of memory");
		return -1;
	}
	return 0;
}

const struct daemon_option *daemon_option_find(const char *name)
{
	for (const struct daemon_option *opt = daemon_options; opt->name; opt++)
		if (!strcmp(opt->name, name))
			return opt;
	return NULL;
}

/* ------------------------------------------------------------ values */

/* The TAPROOT_CONFIG_* field of module setting @opt. */
static uint32_t module_bit(const struct daemon_option *opt)
{
	return opt->bit == DOPT_MODULE_FREQ ? TAPROOT_CONFIG_FREQ :
	       opt->bit == DOPT_MODULE_PIDS ? TAPROOT_CONFIG_TGIDS :
	       opt->bit == DOPT_MODULE_KSTACK ? TAPROOT_CONFIG_KSTACK :
	       opt->bit == DOPT_MODULE_USTACK ? TAPROOT_CONFIG_USTACK :
					       TAPROOT_CONFIG_RING_PAGES;
}

static int parse_count(const char *where, const char *shown, const char *v, unsigned long min,
		       unsigned long max, unsigned long *out)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] < '0' || v[0] > '9' || n < min || n > max) {
		log_msg(LOG_ERR, "%s'%s' needs a number in %lu..%lu, not '%s'", where, shown,
			min, max, v);
		return -1;
	}
	*out = n;
	return 0;
}

/* @words: how the message names the two ("yes or no", "on or off"). */
static int parse_yes_no(const char *where, const char *shown, const char *v, bool *out,
			const char *words)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
		*out = false;
	else {
		log_msg(LOG_ERR, "%s'%s' needs %s, not '%s'", where, shown, words, v);
		return -1;
	}
	return 0;
}

/* @v as the index of one of the words of @choices ("a|b|c") into @out. */
static int parse_choice(const char *where, const char *shown, const char *v,
			const char *choices, unsigned int *out)
{
	size_t n = strlen(v);
	unsigned int i = 0;

	for (const char *c = choices; *c; i++) {
		size_t k = strcspn(c, "|");

		if (k == n && !strncmp(c, v, n)) {
			*out = i;
			return 0;
		}
		c += k + (c[k] == '|');
	}
	log_msg(LOG_ERR, "%s'%s' needs %s, not '%s'", where, shown, choices, v);
	return -1;
}

/* An events list ("cpu", "offcpu", "cpu,offcpu") into @cpu and @offcpu. */
static int parse_events(const char *where, const char *shown, const char *list, bool *cpu,
			bool *offcpu)
{
	const char *s = list;

	*cpu = *offcpu = false;
	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 3 && !strncmp(s, "cpu", 3)) {
			*cpu = true;
		} else if (n == 6 && !strncmp(s, "offcpu", 6)) {
			*offcpu = true;
		} else {
			log_msg(LOG_ERR, "%s'%s': unknown kind '%.*s' (cpu, offcpu)", where, shown,
				(int)(n > 32 ? 32 : n), s);
			return -1;
		}
		s += n + (s[n] == ',');
	}
	if (!*cpu && !*offcpu) {
		log_msg(LOG_ERR, "%s'%s' needs cpu, offcpu or both", where, shown);
		return -1;
	}
	return 0;
}

/*
 * The labels taproot sets itself, with a process's (taproot_proc_label_keys):
 * a label setting may not take their names.
 */
static const char *const own_labels[] = {
	"pid", "comm", "thread_comm", "tid", "cpu", "state", "waker", "hostname",
	"kernel_release",
};

/* Whether @v (@n bytes) names a label taproot sets itself; that name in *@name. */
static bool own_label(const char *v, size_t n, const char **name)
{
	size_t nown = sizeof(own_labels) / sizeof(own_labels[0]);

	for (size_t i = 0; i < nown + TAPROOT_PROC_NR_LABEL_KEYS; i++) {
		*name = i < nown ? own_labels[i] : taproot_proc_label_keys[i - nown];
		if (strlen(*name) == n && !strncmp(v, *name, n))
			return true;
	}
	return false;
}

static bool label_name_ok(const char *s, size_t n)
{
	if (!n || n > 64 || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* "KEY=VALUE" or "KEY VALUE" into @list as "KEY=VALUE". */
static int parse_label(const char *where, const char *shown, const char *v,
		       struct daemon_list *list)
{
	size_t n = strcspn(v, "= \t");
	const char *value = v + n + strspn(v + n, "= \t");
	const char *own;
	char buf[512];

	if (!label_name_ok(v, n) || !*value || strlen(value) > 256) {
		log_msg(LOG_ERR, "%s'%s' needs KEY=VALUE: a name of letters, digits and '_' "
			"(64 at most) and a value of 1 to 256 bytes, not '%s'", where, shown, v);
		return -1;
	}
	for (const char *c = value; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			log_msg(LOG_ERR, "%s'%s': a control character in the value", where,
				shown);
			return -1;
		}
	}
	if (own_label(v, n, &own)) {
		log_msg(LOG_ERR, "%s'%s': taproot sets the label %s itself (a relabel "
			"rule can change it)", where, shown, own);
		return -1;
	}
	for (size_t i = 0; i < list->nr; i++) {
		if (!strncmp(list->v[i], v, n) && list->v[i][n] == '=') {
			log_msg(LOG_ERR, "%s'%s': label %.*s given twice", where, shown, (int)n, v);
			return -1;
		}
	}
	snprintf(buf, sizeof(buf), "%.*s=%s", (int)n, v, value);
	return list_add(list, buf);
}

/* A relabel rule, checked by the library's parser, into @list. */
static int parse_relabel(const char *where, const char *shown, const char *v,
			 struct daemon_list *list)
{
	struct taproot_relabel *rules = NULL;
	int err = taproot_relabel_add(&rules, v);

	taproot_relabel_free(rules);
	if (err < 0) {
		log_msg(LOG_ERR, "%s'%s': %s", where, shown, taproot_errmsg(err));
		return -1;
	}
	return list_add(list, v);
}

/* A process name (a comm: 1..15 bytes, no blank) or a thread id into @list. */
static int parse_target(const char *where, const char *shown, const char *v,
			struct daemon_list *list)
{
	size_t n = strlen(v);
	bool ok = n && n <= 15;

	for (const char *c = v; ok && *c; c++)
		ok = (unsigned char)*c > ' ' && *c != 0x7f;
	if (ok && v[0] >= '0' && v[0] <= '9') {
		char *end;
		unsigned long id = strtoul(v, &end, 10);

		ok = !*end && id >= 1 && id <= INT32_MAX;
	}
	if (!ok) {
		log_msg(LOG_ERR, "%s'%s' needs a process name (1 to 15 bytes, no blank) or a "
			"thread id, not '%s'", where, shown, v);
		return -1;
	}
	return list_add(list, v);
}

/* Add @v to the list setting @opt of @o: its own parser, its bound. */
static int add_to_list(const struct daemon_option *opt, const char *where, const char *shown,
		       const char *v, struct daemon_list *list)
{
	int ret;

	if (list->nr >= opt->max) {
		log_msg(LOG_ERR, "%s'%s': more than %lu", where, shown, opt->max);
		return -1;
	}
	ret = opt->value == DV_LABEL ? parse_label(where, shown, v, list) :
	      opt->value == DV_TARGET ? parse_target(where, shown, v, list) :
					parse_relabel(where, shown, v, list);
	if (ret < 0 && errno == ENOMEM)
		log_msg(LOG_ERR, "%s%s: out of memory", where, shown);
	return ret;
}

/* Whether @v is blank-separated http:// or https:// URLs, one at least. */
static bool urls_ok(const char *v)
{
	size_t n = 0;

	for (v += strspn(v, " \t"); *v; v += strspn(v, " \t"), n++) {
		size_t len = strcspn(v, " \t");

		if ((strncmp(v, "http://", 7) || len <= 7) && (strncmp(v, "https://", 8) || len <= 8))
			return false;
		v += len;
	}
	return n > 0;
}

/*
 * Whether @v is one http:// or https:// URL, or one of those after
 * PUSH_OTLP_PREFIX, with a host, no userinfo and no query or fragment
 * (paths are appended to it).
 */
static bool url_ok(const char *v)
{
	size_t otlp = spool_format_of(v) == SPOOL_OTLP ? strlen(PUSH_OTLP_PREFIX) : 0;
	size_t scheme = !strncmp(v + otlp, "http://", 7) ? otlp + 7 :
			!strncmp(v + otlp, "https://", 8) ? otlp + 8 : 0;
	size_t host = scheme ? strcspn(v + scheme, "/?#") : 0;

	if (!scheme || !host || memchr(v + scheme, '@', host) || strpbrk(v, "?#") ||
	    strlen(v) > 2048)
		return false;
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return false;
	return true;
}

/* Whether @v is 1..128 printable ASCII characters, no blanks (a header value). */
static bool word_ok(const char *v)
{
	size_t n = strlen(v);

	if (!n || n > 128)
		return false;
	for (; *v; v++)
		if ((unsigned char)*v <= ' ' || (unsigned char)*v >= 0x7f)
			return false;
	return true;
}

/* A copy of @v in the string *@field. */
static int set_string(const char *where, const char *shown, const char *v, char **field)
{
	char *copy = strdup(v);

	if (!copy) {
		log_msg(LOG_ERR, "%s%s: out of memory", where, shown);
		return -1;
	}
	free(*field);
	*field = copy;
	return 0;
}

/*
 * Set @opt (a setting) in @o from @val; NULL for a switch given on the
 * command line. @where prefixes messages: "" for the command line, where
 * options are shown as --NAME, "FILE:LINE: " for the file, where they are
 * shown as NAME.
 */
int daemon_option_set(const struct daemon_option *opt, const char *where, const char *val,
		      struct daemon_opts *o)
{
	void *field = (char *)o + opt->field;
	char shown[40], host[256], port[8];

	snprintf(shown, sizeof(shown), "%s%s", *where ? "" : "--", opt->name);
	switch (opt->value) {
	case DV_COUNT:
		return parse_count(where, shown, val, opt->min, opt->max, field);
	case DV_SWITCH:
		if (!val) {
			*(bool *)field = true;
			return 0;
		}
		return parse_yes_no(where, shown, val, field, "yes or no");
	case DV_ONOFF:
		return parse_yes_no(where, shown, val, field, "on or off");
	case DV_CHOICE:
		return parse_choice(where, shown, val, opt->arg, field);
	case DV_EVENTS:
		return parse_events(where, shown, val, &o->cpu, &o->offcpu);
	case DV_LABEL:
	case DV_RELABEL:
	case DV_TARGET:
		return add_to_list(opt, where, shown, val, field);
	case DV_ADDR:
		if (daemon_metrics_parse_addr(val, host, sizeof(host), port, sizeof(port)) < 0) {
			log_msg(LOG_ERR, "%s'%s' needs ADDR:PORT (127.0.0.1:9464, [::1]:9464, "
				":9464), not '%s'", where, shown, val);
			return -1;
		}
		return set_string(where, shown, val, field);
	case DV_URLS:
		if (!urls_ok(val)) {
			log_msg(LOG_ERR, "%s'%s' needs http:// or https:// URLs separated by "
				"blanks, not '%s'", where, shown, val);
			return -1;
		}
		return set_string(where, shown, val, field);
	case DV_URL:
		if (!url_ok(val)) {
			log_msg(LOG_ERR, "%s'%s' needs one http:// or https:// URL (otlp+ before it "
				"for OTLP) without "
				"user:password@ (credentials go in --push-basic-file) or ?query, "
				"not '%s'", where, shown, val);
			return -1;
		}
		return set_string(where, shown, val, field);
	case DV_WORD:
		if (!word_ok(val)) {
			log_msg(LOG_ERR, "%s'%s' needs 1 to 128 printable ASCII characters "
				"without blanks", where, shown);
			return -1;
		}
		return set_string(where, shown, val, field);
	case DV_PATH:
	case DV_FILE:
		return set_string(where, shown, val, field);
	case DV_MODULE: {
		int err = val ? taproot_config_set_kv(&o->module, opt->name, val) : -EINVAL;

		if (err < 0) {
			log_msg(LOG_ERR, "%s'%s': %s", where, shown,
				val ? taproot_errmsg(err) : "needs a value");
			return -1;
		}
		return 0;
	}
	case DV_ACTION:
		break;
	}
	return -1;
}

/* The keys of the file, "output, interval, ...", into @buf. */
static void config_keys(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (const struct daemon_option *opt = daemon_options; opt->name; opt++)
		if (opt->bit && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
						opt->name);
}

/* ------------------------------------------------------------ --help */

/* Print @text, wrapped at 72 columns, each line indented by @indent. */
static void print_wrapped(const char *text, int indent)
{
	int col = indent;

	printf("%*s", indent, "");
	while (*text) {
		int n = (int)strcspn(text, " ");

		if (col > indent && col + 1 + n > 72) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		printf("%.*s", n, text);
		col += n;
		text += n + (text[n] == ' ');
	}
	putchar('\n');
}

/* A row: "  -o, --output DIR     help", continued lines under the help. */
static void print_option(const struct daemon_option *opt)
{
	const char *h = opt->help;
	char left[40];

	if (opt->short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", opt->short_name, opt->name,
			 opt->arg ? " " : "", opt->arg ? opt->arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", opt->name, opt->arg ? " " : "",
			 opt->arg ? opt->arg : "");
	printf("  %-20s ", left);
	for (;;) {
		int n = (int)strcspn(h, "\n");

		printf("%.*s\n", n, h);
		if (!h[n])
			return;
		h += n + 1;
		printf("%23s", "");
	}
}

void daemon_usage(const char *prog)
{
	char keys[512], text[768];

	printf("Usage: %s [OPTIONS]\n"
	       "\n"
	       "Writes a CPU profile of the processes sampled (every one, unless\n"
	       "--pids or 'taprootctl config' says otherwise) every interval while\n"
	       "sampling runs, as OUTDIR/cpu-YYYYmmddTHHMMSSZ.pb.gz (pprof format; UTC\n"
	       "start of the interval). It follows the module's session: it reads\n"
	       "the rings while sampling runs, whoever starts it, and lets go of them\n"
	       "when it stops.\n"
	       "\n"
	       "Options:\n", prog);
	for (const struct daemon_option *opt = daemon_options; opt->name; opt++)
		print_option(opt);
	config_keys(keys, sizeof(keys));
	snprintf(text, sizeof(text), "'KEY VALUE' or 'KEY = VALUE' lines, # comments. The keys "
		 "are the options of the same names: %s; yes or no for those that take no "
		 "value on the command line.", keys);
	printf("\nThe --config file:\n");
	print_wrapped(text, 2);
	printf("\n"
	       "Signals: SIGTERM/SIGINT write the current partial profile and exit 0;\n"
	       "SIGHUP writes it and re-reads --config.\n"
	       "\n"
	       "Exit status: 0 after SIGTERM/SIGINT, 1 error (module not loaded, other\n"
	       "ABI, no permission: needs CAP_PERFMON or CAP_SYS_ADMIN), 2 usage error.\n");
}

/* The value of setting @opt in @o as the file writes it. */
static void print_value(const struct daemon_option *opt, const struct daemon_opts *o)
{
	const void *field = (const char *)o + opt->field;

	switch (opt->value) {
	case DV_PATH:
		printf("%s", *(char *const *)field ? *(char *const *)field : ".");
		break;
	case DV_COUNT:
		printf("%lu", *(const unsigned long *)field);
		break;
	case DV_SWITCH:
		printf("%s", *(const bool *)field ? "yes" : "no");
		break;
	case DV_ONOFF:
		printf("%s", *(const bool *)field ? "on" : "off");
		break;
	case DV_CHOICE: {
		const char *c = opt->arg;

		for (unsigned int i = *(const unsigned int *)field; i && *c; i--)
			c += strcspn(c, "|") + (c[strcspn(c, "|")] == '|');
		printf("%.*s", (int)strcspn(c, "|"), c);
		break;
	}
	case DV_EVENTS:
		printf("%s%s%s", o->cpu ? "cpu" : "", o->cpu && o->offcpu ? "," : "",
		       o->offcpu ? "offcpu" : "");
		break;
	case DV_LABEL:		/* none by default: an example */
		printf("team web");
		break;
	case DV_RELABEL:
		printf("drop service_name cron|sshd");
		break;
	case DV_TARGET:
		printf("postgres");
		break;
	case DV_ADDR:
		printf("127.0.0.1:9464");
		break;
	case DV_URLS:
		printf("https://debuginfod.debian.net");
		break;
	case DV_URL:
		printf("https://profiles.example.net");
		break;
	case DV_FILE:
		printf("/etc/taproot/%s", opt->bit == DOPT_PUSH_BEARER ? "push-token" : "push-basic");
		break;
	case DV_WORD:
		printf("team-a");
		break;
	case DV_MODULE:		/* the module's by default: what it takes when loaded */
		printf("%s", opt->bit == DOPT_MODULE_FREQ ? STR(TAPROOT_FREQ_DEFAULT) :
		       opt->bit == DOPT_MODULE_PIDS ? "all" :
		       opt->bit == DOPT_MODULE_KSTACK ? STR(TAPROOT_KSTACK_DEFAULT) :
		       opt->bit == DOPT_MODULE_USTACK ? STR(TAPROOT_USTACK_DEFAULT) :
							 STR(TAPROOT_RING_PAGES_DEFAULT));
		break;
	case DV_ACTION:
		break;
	}
}

void daemon_print_config(void)
{
	struct daemon_opts o;

	daemon_opts_init(&o);
	printf("# taprootd's configuration (taprootd.conf(5)): 'KEY VALUE' lines, '#'\n"
	       "# comments. Every setting is shown at its default, commented out.\n"
	       "# Options on taprootd's command line win over this file; SIGHUP makes\n"
	       "# taprootd read it again.\n");
	for (const struct daemon_option *opt = daemon_options; opt->name; opt++) {
		const char *h = opt->help;

		if (!opt->bit)
			continue;
		printf("\n");
		while (*h) {
			int n = (int)strcspn(h, "\n");

			printf("# %.*s\n", n, h);
			h += n + (h[n] == '\n');
		}
		if (opt->value != DV_PATH && opt->value != DV_COUNT && opt->value != DV_SWITCH &&
		    opt->value != DV_EVENTS && opt->value != DV_ONOFF && opt->value != DV_CHOICE &&
		    opt->value != DV_MODULE)
			printf("# (none by default; for example:)\n");
		printf("#%s ", opt->name);
		print_value(opt, &o);
		printf("\n");
	}
}

/* ------------------------------------------------------------ the file */

/*
 * Split a line of the file into @key and @val ("KEY VALUE" or
 * "KEY = VALUE", '#' comments, blanks around). False for a blank line.
 */
static bool split_line(char *s, char **key, char **val)
{
	char *e;

	s[strcspn(s, "#\n")] = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return false;
	*key = s;
	s += strcspn(s, " \t=");
	if (*s)
		*s++ = '\0';
	while (*s == ' ' || *s == '\t' || *s == '=')
		s++;
	*val = s;
	for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	*e = '\0';
	return true;
}

static void log_unknown_key(const char *where, const char *key)
{
	char keys[512];

	config_keys(keys, sizeof(keys));
	log_msg(LOG_ERR, "%sunknown key '%s' (%s)", where, key, keys);
}

/*
 * One KEY VALUE of the file into @o, unless the command line set it
 * (@cmdline): then it is checked, and dropped.
 */
static int apply_key(const char *where, const char *key, const char *val,
		     uint64_t cmdline, struct daemon_opts *o)
{
	const struct daemon_option *opt = daemon_option_find(key);
	struct daemon_opts dropped = { 0 };
	int ret;

	if (!opt || !opt->bit) {
		log_unknown_key(where, key);
		return -1;
	}
	if (!*val) {
		log_msg(LOG_ERR, "%s'%s' needs a value", where, key);
		return -1;
	}
	if (!(cmdline & opt->bit))
		return daemon_option_set(opt, where, val, o);
	ret = daemon_option_set(opt, where, val, &dropped);
	daemon_opts_free(&dropped);
	return ret;
}

int daemon_read_config(const char *path, uint64_t cmdline, struct daemon_opts *o)
{
	struct daemon_opts n;
	unsigned int line = 0;
	char buf[4096], where[96];
	char *key, *val;
	int ret = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		log_msg(LOG_ERR, "--config %s: %s", path, strerror(errno));
		return -1;
	}
	/* @o stays as it is until the whole file is good. */
	if (daemon_opts_copy(&n, o) < 0) {
		fclose(f);
		return -1;
	}
	/* The file's lists are the file's alone: read again, not added to. */
	if (!(cmdline & DOPT_LABEL))
		list_free(&n.labels);
	if (!(cmdline & DOPT_RELABEL))
		list_free(&n.relabel);
	/* Nor are the module's settings: one left out is the module's again. */
	for (const struct daemon_option *opt = daemon_options; opt->name; opt++)
		if (opt->value == DV_MODULE && !(cmdline & opt->bit))
			n.module.set &= ~module_bit(opt);
	while (ret == 0 && fgets(buf, sizeof(buf), f)) {
		line++;
		if (!split_line(buf, &key, &val))
			continue;
		snprintf(where, sizeof(where), "%.80s:%u: ", path, line);
		ret = apply_key(where, key, val, cmdline, &n);
	}
	fclose(f);
	if (ret) {
		daemon_opts_free(&n);
		return -1;
	}
	daemon_opts_free(o);
	*o = n;
	return 0;
}
