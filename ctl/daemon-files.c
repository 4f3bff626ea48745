// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd's files: its output directory, the names of its profiles and
 * their retention (the state file: ctl/daemon-state.c; the configuration
 * file: ctl/daemon-options.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <linux/taproot.h>

#include "daemon.h"
#include "taproot.h"

/* ------------------------------------------------------------ output */

int daemon_check_output(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		log_msg(LOG_ERR, "output %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_msg(LOG_ERR, "output %s: not a directory", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		log_msg(LOG_ERR, "output %s: not writable: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ profiles */

#define STAMP_LEN	16	/* YYYYmmddTHHMMSSZ */

/* The kinds of file taprootd writes each interval: KIND-STAMP.SUFFIX. */
static const struct {
	const char *kind, *suffix;
} kinds[] = {
	{ "cpu", ".pb.gz" }, { "offcpu", ".pb.gz" }, { "offwake", ".pb.gz" },
	{ "schedlat", ".pb.gz" }, { "critpath", ".pb.gz" }, { "trace", ".json" },
};
#define NR_KINDS	(sizeof(kinds) / sizeof(kinds[0]))

/* The suffix of the files of @kind (".pb.gz" for one not in the table). */
static const char *kind_suffix(const char *kind)
{
	for (size_t k = 0; k < NR_KINDS; k++)
		if (!strcmp(kinds[k].kind, kind))
			return kinds[k].suffix;
	return ".pb.gz";
}

time_t daemon_next_stamp(time_t t, time_t *last)
{
	if (*last && t <= *last)
		t = *last + 1;
	*last = t;
	return t;
}

char *daemon_profile_path(const char *dir, const char *kind, time_t t)
{
	char stamp[32], *path;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (asprintf(&path, "%s/%s-%s%s", dir, kind, stamp, kind_suffix(kind)) < 0)
		return NULL;
	return path;
}

static bool is_stamp(const char *s)
{
	for (int i = 0; i < STAMP_LEN; i++) {
		char c = s[i];

		if (i == 8 ? c != 'T' : i == 15 ? c != 'Z' : (c < '0' || c > '9'))
			return false;
	}
	return true;
}

/* Length of "KIND-" when @name starts with one of the kinds, else 0. */
static size_t kind_prefix(const char *name, size_t *kind)
{
	for (size_t k = 0; k < NR_KINDS; k++) {
		size_t n = strlen(kinds[k].kind);

		if (!strncmp(name, kinds[k].kind, n) && name[n] == '-') {
			*kind = k;
			return n + 1;
		}
	}
	return 0;
}

/* The kind of file @name is (KIND-STAMP.SUFFIX), or -1. */
static int profile_kind(const char *name)
{
	size_t k, p = kind_prefix(name, &k);

	if (!p || strlen(name) != p + STAMP_LEN + strlen(kinds[k].suffix) ||
	    !is_stamp(name + p) || strcmp(name + p + STAMP_LEN, kinds[k].suffix))
		return -1;
	return (int)k;
}

bool daemon_is_profile_name(const char *name)
{
	return profile_kind(name) >= 0;
}

/* "KIND-STAMP.SUFFIX.tmp.XXXXXX": what tp_write_file_private() left. */
static bool is_temp_name(const char *name)
{
	size_t k, p = kind_prefix(name, &k), n;

	if (!p)
		return false;
	n = strlen(kinds[k].suffix);
	return strlen(name) > p + STAMP_LEN + n + 5 && is_stamp(name + p) &&
	       !strncmp(name + p + STAMP_LEN, kinds[k].suffix, n) &&
	       !strncmp(name + p + STAMP_LEN + n, ".tmp.", 5);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The start of the interval of profile @name (KIND-STAMP.pb.gz), s since the epoch. */
static int64_t profile_time(const char *name)
{
	struct tm tm = { 0 };
	const char *stamp = strchr(name, '-') + 1;

	sscanf(stamp, "%4d%2d%2dT%2d%2d%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
	       &tm.tm_min, &tm.tm_sec);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm);
}

time_t daemon_newest_stamp(const char *dir, time_t bound)
{
	time_t newest = 0, t;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (daemon_is_profile_name(de->d_name) &&
		    (t = (time_t)profile_time(de->d_name)) > newest && t <= bound)
			newest = t;
	closedir(d);
	return newest;
}

unsigned int daemon_retain(const char *dir, unsigned long retain, bool temps, bool spooled)
{
	struct spool_entry *held = NULL;
	long nr_held = 0;
	uint64_t bytes;
	char **names = NULL, **grown;
	size_t n = 0, alloc = 0, i, kept[NR_KINDS] = { 0 };
	unsigned int deleted = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int dfd;

	if (!d) {
		log_msg(LOG_WARNING, "reading %s: %s", dir, strerror(errno));
		return 0;
	}
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		if (temps && is_temp_name(de->d_name)) {
			if (unlinkat(dfd, de->d_name, 0) == 0) {
				log_msg(LOG_INFO, "removed %s/%s, left by a writer that was killed",
					dir, de->d_name);
				deleted++;
			}
			continue;
		}
		if (!retain || !daemon_is_profile_name(de->d_name))
			continue;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			grown = realloc(names, alloc * sizeof(*names));
			if (!grown)
				break;
			names = grown;
		}
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	/* Names sort by kind, then time: the newest of each kind last. */
	qsort(names, n, sizeof(*names), name_cmp);
	if (spooled && n && (nr_held = spool_list(dir, &held, &bytes, false)) < 0)
		nr_held = 0;
	for (i = n; i-- > 0;) {
		int k = profile_kind(names[i]);

		if (k < 0 || ++kept[k] <= retain)
			continue;
		/* Not while its interval waits to be uploaded. */
		if (spool_holds(held, (size_t)nr_held, profile_time(names[i]), kinds[k].kind))
			continue;
		if (unlinkat(dfd, names[i], 0) == 0)
			deleted++;
		else if (errno != ENOENT)
			log_msg(LOG_WARNING, "removing %s/%s: %s", dir, names[i], strerror(errno));
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(held);
	closedir(d);
	return deleted;
}
