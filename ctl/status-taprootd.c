// SPDX-License-Identifier: GPL-2.0
/*
 * What taprootctl status shows of taprootd: its state file (written by
 * taprootd every interval, default /run/taproot/taprootd.json,
 * $TAPROOTD_STATE to read another), shown while the pid it names is alive
 * and is a taprootd; its lines and members as daemon_stats[] says
 * (ctl/daemon-state.c).
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

/* ------------------------------------------------------------ text */

/* The bool of the row @key of daemon_stats[] in @st. */
static bool state_bool(const struct daemon_state *st, const char *key)
{
	return *(const bool *)daemon_stat_ptr(st, daemon_stat_find(key));
}

/*
 * The module's walks of the samples' user stacks: the share that ended
 * well (an interned stack: complete or max-frames), of how many, and
 * every end met.
 */
static void print_walks(const uint64_t *kunwind)
{
	uint64_t walks = kunwind_walks(kunwind),
		 good = kunwind[TAPROOT_KUNWIND_COMPLETE] + kunwind[TAPROOT_KUNWIND_MAX_FRAMES];

	printf("%.1f%% of %" PRIu64 " ended well (",
	       walks ? 100.0 * (double)good / (double)walks : 0.0, walks);
	print_kunwind_ends(kunwind);
	putchar(')');
}

/* Whether @r shows nothing in @st: a _SET one whose value is 0 or "". */
static bool left_out(const struct daemon_stat *r, const struct daemon_state *st)
{
	const void *p = daemon_stat_ptr(st, r);

	if (r->text.shown != DSH_VALUE_SET && r->text.shown != DSH_AGO_SET)
		return false;
	if (r->type == DS_STR)
		return !*(const char *)p;
	return r->type == DS_I64 ? !*(const int64_t *)p : !*(const uint64_t *)p;
}

/* The value of @r in @st as @r->text.shown says. */
static void print_value(const struct daemon_stat *r, const struct daemon_state *st, int64_t now)
{
	const void *p = daemon_stat_ptr(st, r);
	int64_t i = r->type == DS_I64 ? *(const int64_t *)p : 0;
	uint64_t u = r->type == DS_U64 ? *(const uint64_t *)p : 0;
	const char *bar;

	switch (r->text.shown) {
	case DSH_AGO:
	case DSH_AGO_SET:
		printf("%" PRId64, now - i);
		break;
	case DSH_MIB:
		printf("%.1f", (double)u / (1024.0 * 1024.0));
		break;
	case DSH_KIB:
		printf("%" PRIu64, u >> 10);
		break;
	case DSH_PERMILLE:
		printf("%.1f%%", (double)u / 10.0);
		break;
	case DSH_CHOICE:
		bar = strchr(r->text.after, '|');
		if (*(const bool *)p)
			printf("%.*s", (int)(bar - r->text.after), r->text.after);
		else
			fputs(bar + 1, stdout);
		break;
	case DSH_CPU:
		printf("%.2f s CPU (%.2f%% of one CPU)", st->cpu_seconds,
		       st->updated > st->started ?
		       100.0 * st->cpu_seconds / (double)(st->updated - st->started) : 0.0);
		break;
	case DSH_WALKS:
		print_walks(p);
		break;
	default:
		if (r->type == DS_STR)
			fputs(p, stdout);
		else if (r->type == DS_I64)
			printf("%" PRId64, i);
		else
			printf("%" PRIu64, u);
		break;
	}
}

void daemon_state_print(const struct daemon_state *st, int64_t now)
{
	for (int l = DSL_NONE + 1; l < DSL_NR; l++) {
		const struct daemon_status_line_def *line = &daemon_status_lines[l];

		if (line->when && !state_bool(st, line->when)) {
			if (line->otherwise)
				printf("%-16s%s\n", line->label, line->otherwise);
			continue;
		}
		printf("%-16s", line->label);
		for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
			if ((int)r->text.line != l || left_out(r, st))
				continue;
			fputs(r->text.before, stdout);
			print_value(r, st, now);
			/* A choice's after holds the words it shows instead. */
			if (r->text.shown != DSH_CHOICE)
				fputs(r->text.after, stdout);
		}
		putchar('\n');
	}
}

/* ------------------------------------------------------------ JSON */

/* The length of the GROUP of @json ("GROUP.NAME"), 0 when it has none. */
static size_t group_len(const char *json)
{
	const char *dot = json ? strchr(json, '.') : NULL;

	return dot ? (size_t)(dot - json) : 0;
}

/* Whether @r is a DS_BOOL that stands for the group of the rows after it. */
static bool stands_for_group(const struct daemon_stat *r)
{
	const struct daemon_stat *next = r + 1;
	size_t n = strlen(r->json);

	while (next->key && !next->json)
		next++;
	return r->type == DS_BOOL && next->key && group_len(next->json) == n &&
	       !strncmp(next->json, r->json, n);
}

/* The member of @r in @st as a value of @j. */
static void json_value(struct taproot_json *j, const struct daemon_stat *r,
		       const struct daemon_state *st)
{
	const void *p = daemon_stat_ptr(st, r);

	switch (r->type) {
	case DS_I64:
		taproot_json_i64(j, *(const int64_t *)p);
		break;
	case DS_U64:
		taproot_json_u64(j, *(const uint64_t *)p);
		break;
	case DS_SECONDS:
		taproot_json_u64(j, (uint64_t)(*(const double *)p * 1000 + 0.5));
		break;
	case DS_BOOL:
		taproot_json_bool(j, *(const bool *)p);
		break;
	case DS_STR:
		taproot_json_string(j, p);
		break;
	case DS_ENDS:
		taproot_json_object_begin(j);
		for (unsigned int i = 0; i < daemon_stat_nr(r); i++)
			taproot_json_key_u64(j, r->name(i), ((const uint64_t *)p)[i]);
		taproot_json_object_end(j);
		break;
	}
}

void daemon_state_json(const struct daemon_state *st, struct taproot_json *j)
{
	const char *group = NULL;	/* "GROUP" of the rows being written */
	size_t glen = 0;
	bool absent = false;		/* GROUP was null: its rows are left out */
	char name[64];

	taproot_json_object_begin(j);
	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		size_t len = group_len(r->json);

		if (!r->json)
			continue;
		if (group && (len != glen || strncmp(r->json, group, glen))) {
			if (!absent)
				taproot_json_object_end(j);
			group = NULL;
		}
		if (!group && stands_for_group(r)) {
			/* True: the group's first row opens its object. */
			if (*(const bool *)daemon_stat_ptr(st, r))
				continue;
			taproot_json_key(j, r->json);
			taproot_json_null(j);
			group = r->json;
			glen = strlen(r->json);
			absent = true;
			continue;
		}
		if (!group && len) {
			snprintf(name, sizeof(name), "%.*s", (int)len, r->json);
			taproot_json_key(j, name);
			taproot_json_object_begin(j);
			group = r->json;
			glen = len;
			absent = false;
		}
		if (absent)
			continue;
		taproot_json_key(j, r->json + (len ? len + 1 : 0));
		json_value(j, r, st);
	}
	if (group && !absent)
		taproot_json_object_end(j);
	taproot_json_object_end(j);
}

/* ------------------------------------------------------------ taprootd */

/* Whether @pid is alive and is a taprootd. */
static bool is_taprootd(int64_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (pid <= 0 || pid > INT32_MAX || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
		return false;
	snprintf(path, sizeof(path), "/proc/%" PRId64 "/comm", pid);
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

int daemon_find(struct daemon_state *st, bool *stale, const char **path)
{
	*stale = false;
	if (path)
		*path = state_path();
	if (daemon_state_read(state_path(), st) < 0)
		return 0;
	if (!is_taprootd(st->pid)) {
		*stale = true;
		return 0;
	}
	return 1;
}

void daemon_status_plain(void)
{
	struct daemon_state st;
	bool stale;

	if (!daemon_find(&st, &stale, NULL)) {
		printf("%-16s%s\n", "taprootd:", stale ? "not running (stale state file)" :
		       "not running");
		return;
	}
	daemon_state_print(&st, (int64_t)time(NULL));
}

void daemon_status_json(struct taproot_json *j)
{
	struct daemon_state st;
	bool stale;

	taproot_json_key(j, "taprootd");
	if (!daemon_find(&st, &stale, NULL)) {
		taproot_json_null(j);
		return;
	}
	daemon_state_json(&st, j);
}
