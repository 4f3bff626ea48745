// SPDX-License-Identifier: GPL-2.0
/*
 * What taprootctl status shows of taprootd: its state file (written by
 * ctl/daemon-files.c every interval, default /run/taproot/taprootd.json,
 * $TAPROOTD_STATE to read another), shown while the pid it names is alive
 * and is a taprootd.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/taproot.h>

#include "daemon.h"
#include "taprootctl.h"
#include "util/util.h"

/* The enum taproot_kunwind named @name ("no-proc"), or -1. */
static int kunwind_of(const char *name)
{
	for (unsigned int e = 0; e < TAPROOT_PIPELINE_KUNWIND_NR; e++)
		if (taproot_kunwind_name(e) && !strcmp(taproot_kunwind_name(e), name))
			return (int)e;
	return -1;
}

int daemon_state_read(const char *path, struct daemon_state *st)
{
	char line[8192];
	FILE *f = fopen(path, "re");

	memset(st, 0, sizeof(*st));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char key[64], *colon, *v;
		char *q = strchr(line, '"');

		if (!q || !(colon = strstr(q, "\":")))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(colon - q - 1), q + 1);
		v = colon + 2;
		while (*v == ' ')
			v++;
		if (!strcmp(key, "pid"))
			st->pid = atoi(v);
		else if (!strcmp(key, "started"))
			st->started = strtoll(v, NULL, 10);
		else if (!strcmp(key, "updated"))
			st->updated = strtoll(v, NULL, 10);
		else if (!strcmp(key, "cpu_seconds"))
			st->cpu_seconds = strtod(v, NULL);
		else if (!strcmp(key, "rss_bytes"))
			st->rss_bytes = strtoull(v, NULL, 10);
		else if (!strcmp(key, "sampling"))
			st->sampling = !strncmp(v, "true", 4);
		else if (!strcmp(key, "interval"))
			st->interval = strtoul(v, NULL, 10);
		else if (!strcmp(key, "samples"))
			st->samples = strtoull(v, NULL, 10);
		else if (!strcmp(key, "lost"))
			st->lost = strtoull(v, NULL, 10);
		else if (!strcmp(key, "unwind_complete_permille"))
			st->unwind_permille = (unsigned int)strtoul(v, NULL, 10);
		else if (!strcmp(key, "profiles"))
			st->profiles = strtoull(v, NULL, 10);
		else if (!strcmp(key, "offcpu"))
			st->offcpu = !strncmp(v, "true", 4);
		else if (!strcmp(key, "intervals"))
			st->intervals = strtoull(v, NULL, 10);
		else if (!strcmp(key, "unpaired"))
			st->unpaired = strtoull(v, NULL, 10);
		else if (!strcmp(key, "module_unwind"))
			st->module_unwind = !strncmp(v, "true", 4);
#define X(field) else if (!strcmp(key, "kupload_" #field)) \
			st->kupload.field = strtoull(v, NULL, 10);
		TAPROOT_KUPLOAD_FIELDS(X)
#undef X
		else if (!strncmp(key, "kunwind_", 8) && kunwind_of(key + 8) >= 0)
			st->kunwind[kunwind_of(key + 8)] = strtoull(v, NULL, 10);
		else if (!strcmp(key, "stack_refs"))
			st->stack_refs = strtoull(v, NULL, 10);
		else if (!strcmp(key, "stack_refs_unresolved"))
			st->stack_refs_unresolved = strtoull(v, NULL, 10);
		else if (!strcmp(key, "counted"))
			st->counted = strtoull(v, NULL, 10);
		else if (!strcmp(key, "counted_unresolved"))
			st->counted_unresolved = strtoull(v, NULL, 10);
		else if (!strcmp(key, "push"))
			st->push = !strncmp(v, "true", 4);
		else if (!strcmp(key, "push_uploaded"))
			st->push_uploaded = strtoull(v, NULL, 10);
		else if (!strcmp(key, "push_failures"))
			st->push_failures = strtoull(v, NULL, 10);
		else if (!strcmp(key, "push_rejected"))
			st->push_rejected = strtoull(v, NULL, 10);
		else if (!strcmp(key, "push_dropped"))
			st->push_dropped = strtoull(v, NULL, 10);
		else if (!strcmp(key, "push_queued"))
			st->push_queued = strtoull(v, NULL, 10);
		else if (!strcmp(key, "push_queued_bytes"))
			st->push_queued_bytes = strtoull(v, NULL, 10);
		else if (!strcmp(key, "push_last_success"))
			st->push_last_success = strtoll(v, NULL, 10);
		else if (!strcmp(key, "output"))
			tp_json_unquote(v, st->output, sizeof(st->output));
		else if (!strcmp(key, "last_profile"))
			tp_json_unquote(v, st->last_profile, sizeof(st->last_profile));
	}
	fclose(f);
	return st->pid > 0 ? 0 : -EINVAL;
}

/* Whether @pid is alive and is a taprootd. */
static bool is_taprootd(int pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return !strcmp(comm, "taprootd");
}

static const char *state_path(void)
{
	const char *p = getenv("TAPROOTD_STATE");

	return p && *p ? p : TAPROOTD_STATE_DEFAULT;
}

/* 1 with @st filled when taprootd runs, else 0 (*@stale when its file is left over). */
static int daemon_get(struct daemon_state *st, bool *stale)
{
	*stale = false;
	if (daemon_state_read(state_path(), st) < 0)
		return 0;
	if (!is_taprootd(st->pid)) {
		*stale = true;
		return 0;
	}
	return 1;
}

/*
 * "kernel walks:" the module's walks of the samples' user stacks, the
 * share that ended well (an interned stack: complete or max-frames),
 * every end met, the references to interned stacks; "uploads:" the
 * tables and mappings uploaded for them, and what the module holds now.
 */
static void print_module_unwind(const struct daemon_state *st)
{
	const struct taproot_kupload_stats *k = &st->kupload;
	uint64_t walks = kunwind_walks(st->kunwind),
		 good = st->kunwind[TAPROOT_KUNWIND_COMPLETE] +
			st->kunwind[TAPROOT_KUNWIND_MAX_FRAMES];

	if (!st->module_unwind) {
		printf("%-16soff (unwind off): user stacks unwound from snapshots\n",
		       "  kernel walks:");
		return;
	}
	printf("%-16s%.1f%% of %" PRIu64 " ended well (", "  kernel walks:",
	       walks ? 100.0 * (double)good / (double)walks : 0.0, walks);
	print_kunwind_ends(st->kunwind);
	printf("); %" PRIu64 " stack refs, %" PRIu64 " unresolved; %" PRIu64
	       " samples counted in the module, %" PRIu64 " unresolved\n",
	       st->stack_refs, st->stack_refs_unresolved, st->counted, st->counted_unresolved);
	printf("%-16s%" PRIu64 " tables (%" PRIu64 " KiB), %" PRIu64 " process mapping sets; "
	       "held now: %" PRIu64 " tables, %" PRIu64 " processes; %" PRIu64
	       " refused for room, %" PRIu64 " errors\n", "  uploads:", k->tables_uploaded,
	       k->table_bytes >> 10, k->maps_uploaded, k->tables, k->procs, k->budget_refusals,
	       k->errors);
}

void daemon_status_plain(void)
{
	struct daemon_state st;
	bool stale;
	int64_t now = (int64_t)time(NULL);

	if (!daemon_get(&st, &stale)) {
		printf("%-16s%s\n", "taprootd:", stale ? "not running (stale state file)" :
		       "not running");
		return;
	}
	printf("%-16spid %d, up %" PRId64 " s, %s\n", "taprootd:", st.pid,
	       now - st.started, st.sampling ? "reading the rings" : "waiting for sampling");
	printf("%-16s%.2f s CPU (%.2f%% of one CPU), %.1f MiB resident (at %" PRId64 " s ago)\n",
	       "  usage:", st.cpu_seconds,
	       st.updated > st.started ? 100.0 * st.cpu_seconds / (double)(st.updated - st.started)
				       : 0.0,
	       (double)st.rss_bytes / (1024.0 * 1024.0), now - st.updated);
	printf("%-16s%" PRIu64 " samples, %" PRIu64 " lost, %.1f%% unwound completely\n",
	       "  samples:", st.samples, st.lost, st.unwind_permille / 10.0);
	if (st.offcpu)
		printf("%-16s%" PRIu64 " intervals joined, %" PRIu64 " unpaired\n", "  off-cpu:",
		       st.intervals, st.unpaired);
	print_module_unwind(&st);
	printf("%-16s%" PRIu64 " written every %lu s to %s%s%s\n", "  profiles:", st.profiles,
	       st.interval, st.output, st.last_profile[0] ? ", last " : "", st.last_profile);
	if (!st.push)
		return;
	printf("%-16s%" PRIu64 " uploaded", "  push:", st.push_uploaded);
	if (st.push_last_success)
		printf(" (last %" PRId64 " s ago)", now - st.push_last_success);
	printf(", %" PRIu64 " waiting (%" PRIu64 " bytes), %" PRIu64 " failed attempts, %"
	       PRIu64 " refused, %" PRIu64 " dropped by the spool's bound\n", st.push_queued,
	       st.push_queued_bytes, st.push_failures, st.push_rejected, st.push_dropped);
}

void daemon_status_json(struct taproot_json *j)
{
	struct daemon_state st;
	bool stale;

	taproot_json_key(j, "taprootd");
	if (!daemon_get(&st, &stale)) {
		taproot_json_null(j);
		return;
	}
	taproot_json_object_begin(j);
	taproot_json_key_u64(j, "pid", (uint64_t)st.pid);
	taproot_json_key(j, "started");
	taproot_json_i64(j, st.started);
	taproot_json_key(j, "updated");
	taproot_json_i64(j, st.updated);
	taproot_json_key_u64(j, "cpu_ms", (uint64_t)(st.cpu_seconds * 1000 + 0.5));
	taproot_json_key_u64(j, "rss_bytes", st.rss_bytes);
	taproot_json_key(j, "sampling");
	taproot_json_bool(j, st.sampling);
	taproot_json_key_u64(j, "samples", st.samples);
	taproot_json_key_u64(j, "lost", st.lost);
	taproot_json_key_u64(j, "unwind_complete_permille", st.unwind_permille);
	taproot_json_key_u64(j, "profiles", st.profiles);
	taproot_json_key_u64(j, "interval", st.interval);
	taproot_json_key(j, "offcpu");
	taproot_json_bool(j, st.offcpu);
	taproot_json_key_u64(j, "intervals", st.intervals);
	taproot_json_key_u64(j, "unpaired", st.unpaired);
	taproot_json_key(j, "module_unwind");
	taproot_json_bool(j, st.module_unwind);
	/* As record's --stats-json names them. */
	taproot_json_key(j, "kernel_uploads");
	taproot_json_object_begin(j);
#define X(field) taproot_json_key_u64(j, #field, st.kupload.field);
	TAPROOT_KUPLOAD_FIELDS(X)
#undef X
	taproot_json_object_end(j);
	taproot_json_key(j, "kunwind");
	taproot_json_object_begin(j);
	for (unsigned int e = 0; e < TAPROOT_PIPELINE_KUNWIND_NR; e++)
		taproot_json_key_u64(j, taproot_kunwind_name(e), st.kunwind[e]);
	taproot_json_object_end(j);
	taproot_json_key_u64(j, "stack_refs", st.stack_refs);
	taproot_json_key_u64(j, "stack_refs_unresolved", st.stack_refs_unresolved);
	taproot_json_key_u64(j, "counted", st.counted);
	taproot_json_key_u64(j, "counted_unresolved", st.counted_unresolved);
	taproot_json_key_string(j, "output", st.output);
	taproot_json_key_string(j, "last_profile", st.last_profile);
	taproot_json_key(j, "push");
	if (st.push) {
		taproot_json_object_begin(j);
		taproot_json_key_u64(j, "uploaded", st.push_uploaded);
		taproot_json_key_u64(j, "failures", st.push_failures);
		taproot_json_key_u64(j, "rejected", st.push_rejected);
		taproot_json_key_u64(j, "dropped", st.push_dropped);
		taproot_json_key_u64(j, "queued", st.push_queued);
		taproot_json_key_u64(j, "queued_bytes", st.push_queued_bytes);
		taproot_json_key(j, "last_success");
		taproot_json_i64(j, st.push_last_success);
		taproot_json_object_end(j);
	} else {
		taproot_json_null(j);
	}
	taproot_json_object_end(j);
}
