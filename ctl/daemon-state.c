// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd's state: one table, daemon_stats[], for the state file that
 * taprootd writes and taprootctl status reads back, for what status shows
 * of it (ctl/status-taprootd.c) and for the metrics that --metrics serves.
 * A row is a member of struct daemon_state; every one of them shows the
 * rows in the table's order. Linked into taprootd and taprootctl both.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "taproot.h"
#include "util/util.h"

/* ------------------------------------------------------------ the table */

const struct daemon_status_line_def daemon_status_lines[DSL_NR] = {
	[DSL_TAPROOTD] = { "taprootd:" },
	[DSL_USAGE] = { "  usage:" },
	[DSL_SAMPLES] = { "  samples:" },
	[DSL_OFFCPU] = { "  off-cpu:", "offcpu" },
	[DSL_WALKS] = { "  kernel walks:", "module_unwind",
			"off (unwind off): user stacks unwound from snapshots" },
	[DSL_UPLOADS] = { "  uploads:", "module_unwind" },
	[DSL_PROFILES] = { "  profiles:" },
	[DSL_PUSH] = { "  push:", "push" },
};

static const char *unwind_end(unsigned int i)
{
	return taproot_unwind_end_name((enum taproot_unwind_end)i);
}

#define ROW(key_, type_, member)						\
	.key = key_, .type = type_, .field = offsetof(struct daemon_state, member),	\
	.size = sizeof(((struct daemon_state *)0)->member)
/* A member of the upload counters: kupload_FIELD, kernel_uploads.FIELD. */
#define KUPLOAD(f)	ROW("kupload_" #f, DS_U64, kupload.f), .json = "kernel_uploads." #f

/*
 * Every output shows the rows in this order: status's text within each of
 * its lines (the lines are in daemon_status_lines[]'s order), status
 * --json, the state file and the metrics.
 */
const struct daemon_stat daemon_stats[] = {
	{ ROW("pid", DS_I64, pid), .json = "pid",
	  .text = { DSL_TAPROOTD, "pid ", DSH_VALUE, "" } },
	{ ROW("started", DS_I64, started), .json = "started",
	  .text = { DSL_TAPROOTD, ", up ", DSH_AGO, " s" },
	  .metric = { "start_time_seconds", DM_GAUGE,
		      "When taprootd started, in seconds since the epoch." } },
	{ ROW("cpu_seconds", DS_SECONDS, cpu_seconds), .json = "cpu_ms",
	  .text = { DSL_USAGE, "", DSH_CPU, "" },
	  .metric = { "cpu_seconds_total", DM_COUNTER,
		      "User and system CPU time taprootd used." } },
	{ ROW("rss_bytes", DS_U64, rss_bytes), .json = "rss_bytes",
	  .text = { DSL_USAGE, ", ", DSH_MIB, " MiB resident" },
	  .metric = { "resident_memory_bytes", DM_GAUGE, "taprootd's resident memory." } },
	{ ROW("updated", DS_I64, updated), .json = "updated",
	  .text = { DSL_USAGE, " (at ", DSH_AGO, " s ago)" } },
	{ ROW("sampling", DS_BOOL, sampling), .json = "sampling",
	  .text = { DSL_TAPROOTD, ", ", DSH_CHOICE, "reading the rings|waiting for sampling" },
	  .metric = { "sampling", DM_GAUGE, "1 while the module's sampling runs." } },
	{ ROW("samples", DS_U64, samples), .json = "samples",
	  .text = { DSL_SAMPLES, "", DSH_VALUE, " samples" },
	  .metric = { "samples_total", DM_COUNTER, "CPU samples added to profiles." } },
	{ ROW("lost", DS_U64, lost), .json = "lost",
	  .text = { DSL_SAMPLES, ", ", DSH_VALUE, " lost" },
	  .metric = { "lost_records_total", DM_COUNTER, "Records the module's rings lost." } },
	{ ROW("unwind_complete_permille", DS_U64, unwind_permille),
	  .json = "unwind_complete_permille",
	  .text = { DSL_SAMPLES, ", ", DSH_PERMILLE, " unwound completely" } },
	{ ROW("profiles", DS_U64, profiles), .json = "profiles",
	  .text = { DSL_PROFILES, "", DSH_VALUE, " written" },
	  .metric = { "profiles_written_total", DM_COUNTER, "Profiles written." } },
	{ ROW("interval", DS_U64, interval), .json = "interval",
	  .text = { DSL_PROFILES, " every ", DSH_VALUE, " s" },
	  .metric = { "interval_seconds", DM_GAUGE, "Seconds per profile." } },
	{ ROW("offcpu", DS_BOOL, offcpu), .json = "offcpu" },
	{ ROW("intervals", DS_U64, intervals), .json = "intervals",
	  .text = { DSL_OFFCPU, "", DSH_VALUE, " intervals joined" },
	  .metric = { "offcpu_intervals_total", DM_COUNTER, "Off-CPU intervals joined." } },
	{ ROW("unpaired", DS_U64, unpaired), .json = "unpaired",
	  .text = { DSL_OFFCPU, ", ", DSH_VALUE, " unpaired" },
	  .metric = { "offcpu_unpaired_total", DM_COUNTER,
		      "Off-CPU intervals with an end missing." } },
	{ ROW("dropped", DS_U64, dropped),
	  .metric = { "invalid_records_total", DM_COUNTER,
		      "Invalid records, samples not added." } },
	{ ROW("proc_unknown", DS_U64, proc_unknown),
	  .metric = { "unknown_process_samples_total", DM_COUNTER,
		      "Samples of processes gone before their maps were read." } },
	{ ROW("user_stale", DS_U64, user_stale),
	  .metric = { "stale_user_samples_total", DM_COUNTER,
		      "Samples whose user part was left out across an execve." } },
	{ ROW("elf_errors", DS_U64, elf_errors),
	  .metric = { "elf_errors_total", DM_COUNTER,
		      "Mappings whose ELF file could not be used." } },
	{ ROW("k8s_cache_hits", DS_U64, k8s_cache_hits),
	  .metric = { "k8s_cache_hits_total", DM_COUNTER,
		      "Lookups of a container's Kubernetes labels the cache answered, "
		      "no file read." } },
	{ ROW("k8s_files_read", DS_U64, k8s_files_read),
	  .metric = { "k8s_files_read_total", DM_COUNTER,
		      "Container runtimes' files read for Kubernetes labels." } },
	{ ROW("k8s_files_refused", DS_U64, k8s_files_refused),
	  .metric = { "k8s_files_refused_total", DM_COUNTER,
		      "Of them, files refused: a link, not a regular file, over 1 MiB, "
		      "or not JSON." } },
	{ ROW("k8s_cache_evicted", DS_U64, k8s_cache_evicted),
	  .metric = { "k8s_cache_evicted_total", DM_COUNTER,
		      "Containers evicted from the cache of Kubernetes labels for room "
		      "(it keeps 1024)." } },
	{ ROW("user_stacks", DS_U64, user_stacks),
	  .metric = { "user_stacks_total", DM_COUNTER, "User stacks unwound." } },
	{ ROW("unwind", DS_ENDS, unwind), .name = unwind_end,
	  .metric = { "unwinds_total", DM_COUNTER,
		      "User stacks unwound, by how the unwinding ended." } },
	{ ROW("frames", DS_U64, frames),
	  .metric = { "frames_total", DM_COUNTER, "Frames symbolized." } },
	{ ROW("frames_unsymbolized", DS_U64, frames_unsymbolized),
	  .metric = { "frames_unsymbolized_total", DM_COUNTER,
		      "Frames without a function name." } },
	{ ROW("jit_named_late", DS_U64, jit_named_late),
	  .metric = { "jit_named_late_total", DM_COUNTER,
		      "JIT pcs named by a perf map read again before a profile was written." } },
	{ ROW("jit_pending_dropped", DS_U64, jit_pending_dropped),
	  .metric = { "jit_pending_dropped_total", DM_COUNTER,
		      "JIT pcs without a name not kept for a later one: too many waited." } },
	{ ROW("debuginfod_found", DS_U64, debuginfod_found),
	  .metric = { "debuginfod_found_total", DM_COUNTER,
		      "Debug files fetched from debuginfod." } },
	{ ROW("debuginfod_absent", DS_U64, debuginfod_absent),
	  .metric = { "debuginfod_absent_total", DM_COUNTER,
		      "Debug files debuginfod did not have, or that could not be fetched." } },
	{ ROW("debuginfod_pending", DS_U64, debuginfod_pending),
	  .metric = { "debuginfod_pending", DM_GAUGE, "Debug files waiting to be fetched." } },
	{ ROW("relabel_dropped", DS_U64, relabel_dropped),
	  .metric = { "relabel_dropped_total", DM_COUNTER,
		      "Samples and off-CPU intervals the relabel rules dropped." } },
	{ ROW("relabel_skipped", DS_U64, relabel_skipped),
	  .metric = { "relabel_skipped_total", DM_COUNTER,
		      "Samples kept with a relabel replacement skipped for want of room." } },
	{ ROW("write_errors", DS_U64, write_errors),
	  .metric = { "profile_write_errors_total", DM_COUNTER,
		      "Profiles that could not be written (their samples dropped)." } },
	{ ROW("module_unwind", DS_BOOL, module_unwind), .json = "module_unwind",
	  .metric = { "module_unwind", DM_GAUGE,
		      "1 when taprootd has the module unwind user stacks (setting unwind)." } },
	/* Every field of TAPROOT_KUPLOAD_FIELDS (test_daemon_state checks). */
	{ KUPLOAD(tables_uploaded),
	  .text = { DSL_UPLOADS, "", DSH_VALUE, " tables" },
	  .metric = { "kernel_upload_tables_total", DM_COUNTER,
		      "Unwind tables uploaded to the module." } },
	{ KUPLOAD(table_bytes),
	  .text = { DSL_UPLOADS, " (", DSH_KIB, " KiB)" },
	  .metric = { "kernel_upload_table_bytes_total", DM_COUNTER,
		      "Bytes of the unwind tables uploaded to the module." } },
	{ KUPLOAD(tables_existed),
	  .metric = { "kernel_upload_tables_found_total", DM_COUNTER,
		      "Unwind tables the module held already (same build ID)." } },
	{ KUPLOAD(tables_deleted) },
	{ KUPLOAD(maps_uploaded),
	  .text = { DSL_UPLOADS, ", ", DSH_VALUE, " process mapping sets" },
	  .metric = { "kernel_upload_maps_total", DM_COUNTER,
		      "Sets of a process's mappings uploaded to the module." } },
	{ KUPLOAD(maps_forgotten) },
	{ KUPLOAD(maps_fp) },
	{ KUPLOAD(maps_left_out) },
	{ KUPLOAD(stale_retries),
	  .metric = { "kernel_upload_stale_retries_total", DM_COUNTER,
		      "Mapping uploads retried: the process changed its mappings meanwhile." } },
	{ KUPLOAD(deferred),
	  .metric = { "kernel_upload_deferred_total", DM_COUNTER,
		      "Upload requests put off for the interval or the work budget, "
		      "served later." } },
	{ KUPLOAD(maps_current),
	  .metric = { "kernel_upload_maps_current_total", DM_COUNTER,
		      "Upload requests the process's token answered: "
		      "its mappings were current." } },
	{ KUPLOAD(work_ns) },
	{ KUPLOAD(tables),
	  .text = { DSL_UPLOADS, "; held now: ", DSH_VALUE, " tables" },
	  .metric = { "kernel_unwind_tables", DM_GAUGE,
		      "Unwind tables the module holds for taprootd now." } },
	{ KUPLOAD(procs),
	  .text = { DSL_UPLOADS, ", ", DSH_VALUE, " processes" },
	  .metric = { "kernel_unwind_processes", DM_GAUGE,
		      "Processes whose mappings the module holds for taprootd now." } },
	{ KUPLOAD(budget_refusals),
	  .text = { DSL_UPLOADS, "; ", DSH_VALUE, " refused for room" },
	  .metric = { "kernel_upload_budget_refusals_total", DM_COUNTER,
		      "Uploads the module refused: its unwind memory (unwind-mem) was full." } },
	{ KUPLOAD(errors),
	  .text = { DSL_UPLOADS, ", ", DSH_VALUE, " errors" },
	  .metric = { "kernel_upload_errors_total", DM_COUNTER,
		      "Uploads to the module that failed otherwise." } },
	{ KUPLOAD(python_procs) },
	{ KUPLOAD(python_unwalked) },
	{ KUPLOAD(jvm_procs) },
	{ KUPLOAD(jvm_unwalked) },
	/* Not "unwind_": those are the ends of this unwinder's walks. */
	{ ROW("kunwind", DS_ENDS, kunwind), .name = taproot_kunwind_name, .json = "kunwind",
	  .text = { DSL_WALKS, "", DSH_WALKS, "" },
	  .metric = { "kernel_walks_total", DM_COUNTER,
		      "CPU samples by how the module's walk of their user stack ended "
		      "(none: not walked)." } },
	{ ROW("stack_refs", DS_U64, stack_refs), .json = "stack_refs",
	  .text = { DSL_WALKS, "; ", DSH_VALUE, " stack refs" },
	  .metric = { "stack_refs_total", DM_COUNTER,
		      "Samples the module unwound itself, as references to interned stacks." } },
	{ ROW("stack_refs_unresolved", DS_U64, stack_refs_unresolved),
	  .json = "stack_refs_unresolved",
	  .text = { DSL_WALKS, ", ", DSH_VALUE, " unresolved" },
	  .metric = { "stack_refs_unresolved_total", DM_COUNTER,
		      "Of them, references to a stack taprootd had not seen (dropped)." } },
	{ ROW("counted", DS_U64, counted), .json = "counted",
	  .text = { DSL_WALKS, "; ", DSH_VALUE, " samples counted in the module" },
	  .metric = { "counted_samples_total", DM_COUNTER,
		      "Samples the module unwound itself and counted in its tables "
		      "(setting count)." } },
	{ ROW("counted_unresolved", DS_U64, counted_unresolved), .json = "counted_unresolved",
	  .text = { DSL_WALKS, ", ", DSH_VALUE, " unresolved" },
	  .metric = { "counted_unresolved_total", DM_COUNTER,
		      "Of them, samples of a stack taprootd had not seen (dropped)." } },
	{ ROW("output", DS_STR, output), .json = "output",
	  .text = { DSL_PROFILES, " to ", DSH_VALUE, "" } },
	{ ROW("last_profile", DS_STR, last_profile), .json = "last_profile",
	  .text = { DSL_PROFILES, ", last ", DSH_VALUE_SET, "" } },
	{ ROW("push", DS_BOOL, push), .json = "push" },
	{ ROW("push_uploaded", DS_U64, push_uploaded), .json = "push.uploaded",
	  .text = { DSL_PUSH, "", DSH_VALUE, " uploaded" },
	  .metric = { "push_uploads_total", DM_COUNTER, "Profiles the store accepted (--push)." } },
	{ ROW("push_last_success", DS_I64, push_last_success), .json = "push.last_success",
	  .text = { DSL_PUSH, " (last ", DSH_AGO_SET, " s ago)" },
	  .metric = { "push_last_success_seconds", DM_GAUGE,
		      "When the store last accepted an upload, in seconds since the epoch "
		      "(0: never)." } },
	{ ROW("push_queued", DS_U64, push_queued), .json = "push.queued",
	  .text = { DSL_PUSH, ", ", DSH_VALUE, " waiting" },
	  .metric = { "push_queue_files", DM_GAUGE, "Profiles waiting in the spool." } },
	{ ROW("push_queued_bytes", DS_U64, push_queued_bytes), .json = "push.queued_bytes",
	  .text = { DSL_PUSH, " (", DSH_VALUE, " bytes)" },
	  .metric = { "push_queue_bytes", DM_GAUGE, "Bytes waiting in the spool." } },
	{ ROW("push_failures", DS_U64, push_failures), .json = "push.failures",
	  .text = { DSL_PUSH, ", ", DSH_VALUE, " failed attempts" },
	  .metric = { "push_failures_total", DM_COUNTER,
		      "Upload attempts that failed and will be retried." } },
	{ ROW("push_rejected", DS_U64, push_rejected), .json = "push.rejected",
	  .text = { DSL_PUSH, ", ", DSH_VALUE, " refused" },
	  .metric = { "push_rejected_total", DM_COUNTER,
		      "Uploads the store refused for good (dropped)." } },
	{ ROW("push_partial_rejected", DS_U64, push_partial_rejected),
	  .json = "push.partial_rejected",
	  .text = { DSL_PUSH, ", ", DSH_VALUE, " profiles refused in accepted uploads" },
	  .metric = { "push_partial_rejected_profiles_total", DM_COUNTER,
		      "Profiles a collector refused inside uploads it accepted (OTLP "
		      "partial success)." } },
	{ ROW("push_dropped", DS_U64, push_dropped), .json = "push.dropped",
	  .text = { DSL_PUSH, ", ", DSH_VALUE, " dropped by the spool's bound" },
	  .metric = { "push_dropped_total", DM_COUNTER,
		      "Uploads dropped unsent: the spool was over its bound." } },
	{ NULL }
};

/* DS_ENDS: @key is the row's KEY, an underscore and one of its names; that one, or -1. */
static int end_of(const struct daemon_stat *r, const char *key)
{
	size_t n = strlen(r->key);

	if (strncmp(key, r->key, n) || key[n] != '_')
		return -1;
	for (unsigned int i = 0; i < daemon_stat_nr(r); i++)
		if (r->name(i) && !strcmp(r->name(i), key + n + 1))
			return (int)i;
	return -1;
}

const struct daemon_stat *daemon_stat_find(const char *key)
{
	for (const struct daemon_stat *r = daemon_stats; r->key; r++)
		if (!strcmp(r->key, key))
			return r;
	return NULL;
}

/* ------------------------------------------------------------ the file */

static int mkdir_parent(const char *path)
{
	char *dir = strdup(path), *slash;
	int ret = 0;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			ret = -errno;
	}
	free(dir);
	return ret;
}

/* The members of @r in @st, each "KEY": VALUE on a line of its own. */
static void write_row(FILE *f, const struct daemon_stat *r, const struct daemon_state *st,
		      bool *first)
{
	const void *p = daemon_stat_ptr(st, r);
	unsigned int i;

	if (r->type == DS_ENDS) {
		for (i = 0; i < daemon_stat_nr(r); i++) {
			fprintf(f, "%s\"%s_%s\": %" PRIu64, *first ? "" : ",\n", r->key,
				r->name(i), ((const uint64_t *)p)[i]);
			*first = false;
		}
		return;
	}
	fprintf(f, "%s\"%s\": ", *first ? "" : ",\n", r->key);
	*first = false;
	switch (r->type) {
	case DS_I64:
		fprintf(f, "%" PRId64, *(const int64_t *)p);
		break;
	case DS_U64:
		fprintf(f, "%" PRIu64, *(const uint64_t *)p);
		break;
	case DS_SECONDS:
		fprintf(f, "%.3f", *(const double *)p);
		break;
	case DS_BOOL:
		fputs(*(const bool *)p ? "true" : "false", f);
		break;
	case DS_STR:
		tp_json_quote(f, p);
		break;
	case DS_ENDS:
		break;			/* above */
	}
}

int daemon_state_write(const char *path, const struct daemon_state *st)
{
	bool first = true;
	char *tmp;
	FILE *f;
	int fd, err = 0;

	err = mkdir_parent(path);
	if (err < 0)
		return err;
	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	fputs("{\n", f);
	for (const struct daemon_stat *r = daemon_stats; r->key; r++)
		write_row(f, r, st, &first);
	fputs("\n}\n", f);
	if (fflush(f) == EOF || ferror(f))
		err = -EIO;
	if (fclose(f) == EOF && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
fail:
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

/* The value @v of the member "KEY" of the file into @st, if it is one. */
static void read_member(struct daemon_state *st, const char *key, const char *v)
{
	const struct daemon_stat *r = daemon_stat_find(key);
	char *p;
	int i = -1;

	for (const struct daemon_stat *e = daemon_stats; !r && e->key; e++)
		if (e->type == DS_ENDS && (i = end_of(e, key)) >= 0)
			r = e;
	if (!r || (r->type == DS_ENDS && i < 0))
		return;
	p = (char *)st + r->field;
	switch (r->type) {
	case DS_I64:
		*(int64_t *)p = strtoll(v, NULL, 10);
		break;
	case DS_U64:
		*(uint64_t *)p = strtoull(v, NULL, 10);
		break;
	case DS_SECONDS:
		*(double *)p = strtod(v, NULL);
		break;
	case DS_BOOL:
		*(bool *)p = !strncmp(v, "true", 4);
		break;
	case DS_STR:
		tp_json_unquote(v, p, r->size);
		break;
	case DS_ENDS:
		((uint64_t *)p)[i] = strtoull(v, NULL, 10);
		break;
	}
}

int daemon_state_read(const char *path, struct daemon_state *st)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "re");

	memset(st, 0, sizeof(*st));
	if (!f)
		return -errno;
	/* One member a line: "KEY": VALUE, (keys are never escaped). */
	while (getline(&line, &cap, f) > 0) {
		char key[64], *colon, *v;
		char *q = strchr(line, '"');

		if (!q || !(colon = strstr(q, "\":")))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(colon - q - 1), q + 1);
		v = colon + 2;
		while (*v == ' ')
			v++;
		read_member(st, key, v);
	}
	free(line);
	fclose(f);
	return st->pid > 0 ? 0 : -EINVAL;
}

/* ------------------------------------------------------------ metrics */

struct mtext {
	char *buf;
	size_t len, off;
};

static void mprintf(struct mtext *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mprintf(struct mtext *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->off >= t->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->off, t->len - t->off, fmt, ap);
	va_end(ap);
	t->off += n > 0 ? (size_t)n : 0;
}

size_t daemon_metrics_text(const struct daemon_state *st, char *buf, size_t len)
{
	struct mtext t = { .buf = buf, .len = len };

	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		const char *name = r->metric.name;
		const void *p = daemon_stat_ptr(st, r);

		if (r->metric.type == DM_NONE)
			continue;
		mprintf(&t, "# HELP taprootd_%s %s\n# TYPE taprootd_%s %s\n", name, r->metric.help,
			name, r->metric.type == DM_COUNTER ? "counter" : "gauge");
		/* Integers exactly, as a double would not be beyond 2^53. */
		switch (r->type) {
		case DS_I64:
			mprintf(&t, "taprootd_%s %" PRId64 "\n", name, *(const int64_t *)p);
			break;
		case DS_U64:
			mprintf(&t, "taprootd_%s %" PRIu64 "\n", name, *(const uint64_t *)p);
			break;
		case DS_SECONDS:
			mprintf(&t, "taprootd_%s %.17g\n", name, *(const double *)p);
			break;
		case DS_BOOL:
			mprintf(&t, "taprootd_%s %d\n", name, *(const bool *)p);
			break;
		case DS_ENDS:
			for (unsigned int i = 0; i < daemon_stat_nr(r); i++)
				mprintf(&t, "taprootd_%s{result=\"%s\"} %" PRIu64 "\n", name,
					r->name(i), ((const uint64_t *)p)[i]);
			break;
		default:
			break;
		}
	}
	return t.off;
}
