// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd --push: the spool, OUTPUT/push. Each interval's profiles are
 * split by service_name into files named FROM-UNTIL.KIND.SERVICE.pb.gz,
 * written as the profiles are (taproot_pprof_write_part_file(): temporary
 * name, fsync, rename, fsync of the directory), so that a file in the
 * spool is always complete, survives a crash, and names everything its
 * upload needs. ctl/daemon-push.c uploads them and deletes each once the
 * store accepted it: what is in the spool is what has not been accepted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "taproot.h"

/* The end of a spool file's name, by format. */
static const char *const spool_suffix[] = {
	[SPOOL_PPROF] = ".pb.gz",
	[SPOOL_OTLP] = ".otlp.gz",
};
#define MAX_SERVICES	4096	/* per profile: more are rare enough to log */

/* Bytes of a service name kept as they are in a file name; '.' too: the
 * name is parsed from both ends. */
static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '@' || c == '+' || c == ':';
}

/*
 * @s percent-encoded into @out, a file name's part: ENCODED_MAX bytes at
 * most, so that the whole name stays within NAME_MAX. A longer name is
 * cut, "~" and a hash of the whole added: two long names that begin
 * alike still make two files (the series' name is then the cut one, the
 * samples keep their service_name as it is). False for "".
 */
#define ENCODED_MAX	200
#define HASH_LEN	(3 + 8)		/* "%7E" and 8 hex digits */

static bool encode_service(const char *s, char out[ENCODED_MAX + 1])
{
	uint32_t hash = 2166136261u;	/* FNV-1a */
	size_t n = 0;
	bool cut = false;

	for (const char *c = s; *c; c++)
		hash = (hash ^ (unsigned char)*c) * 16777619u;
	for (; *s && !cut; s++) {
		unsigned char c = (unsigned char)*s;
		size_t w = plain_byte(c) ? 1 : 3;

		/* Room for this byte, and for the hash unless it is the last. */
		if (n + w + (s[1] ? HASH_LEN : 0) > ENCODED_MAX) {
			cut = true;
			break;
		}
		if (w == 1)
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, ENCODED_MAX + 1 - n, "%%%02X", c);
	}
	if (cut)
		n += (size_t)snprintf(out + n, ENCODED_MAX + 1 - n, "%%7E%08x", hash);
	out[n] = '\0';
	return n > 0;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The inverse of encode_service(), of @n bytes of @s. */
static bool decode_service(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (o + 1 >= len)
			return false;
		if (plain_byte((unsigned char)s[i])) {
			out[o++] = s[i];
			continue;
		}
		if (s[i] != '%' || i + 2 >= n || (hi = hex_digit(s[i + 1])) < 0 ||
		    (lo = hex_digit(s[i + 2])) < 0 || (!hi && !lo))
			return false;
		out[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[o] = '\0';
	return o > 0;
}

static bool kind_known(const char *kind)
{
	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++)
		if (!strcmp(kind, taproot_profile_kind_name((enum taproot_profile_kind)k)))
			return true;
	return false;
}

/* 10 decimal digits at @s into *@t. */
static bool parse_time(const char *s, int64_t *t)
{
	*t = 0;
	for (int i = 0; i < 10; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*t = *t * 10 + (s[i] - '0');
	}
	return true;
}

/*
 * The format of the file @name (@len bytes) by its end, and the length of
 * that end in *@n; -1 for neither. No service name is taken for the
 * other's end: ".otlp" before ".pb.gz" is part of the service.
 */
static int name_format(const char *name, size_t len, size_t *n)
{
	for (int f = SPOOL_PPROF; f <= SPOOL_OTLP; f++) {
		*n = strlen(spool_suffix[f]);
		if (len > *n && !memcmp(name + len - *n, spool_suffix[f], *n))
			return f;
	}
	return -1;
}

enum spool_format spool_format_of(const char *url)
{
	return !strncmp(url, PUSH_OTLP_PREFIX, strlen(PUSH_OTLP_PREFIX)) ? SPOOL_OTLP : SPOOL_PPROF;
}

bool spool_parse_name(const char *name, struct spool_entry *e)
{
	size_t len = strlen(name), kind_len, suffix;
	int format = name_format(name, len, &suffix);
	const char *kind, *svc;

	memset(e, 0, sizeof(*e));
	if (format < 0 || len >= sizeof(e->name) || len < 23 + suffix || name[10] != '-' ||
	    name[21] != '.' || !parse_time(name, &e->from) || !parse_time(name + 11, &e->until) ||
	    e->until < e->from)
		return false;
	e->format = (enum spool_format)format;
	kind = name + 22;
	kind_len = strcspn(kind, ".");
	svc = kind + kind_len + 1;
	if (!kind_len || kind_len >= sizeof(e->kind) || !kind[kind_len] ||
	    svc >= name + len - suffix)
		return false;
	memcpy(e->kind, kind, kind_len);
	if (!kind_known(e->kind))
		return false;
	if (!decode_service(svc, (size_t)(name + len - suffix - svc), e->service,
			    sizeof(e->service)))
		return false;
	memcpy(e->name, name, len + 1);
	return true;
}

/* OUTPUT/push into @dir, made (0700: profiles name code paths) if missing. */
static int make_spool(const char *output, char *dir, size_t len)
{
	snprintf(dir, len, "%s/" DAEMON_SPOOL_DIR, output);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_msg(LOG_ERR, "spool %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_spool(const char *output, char *dir, size_t len)
{
	int fd;

	if (make_spool(output, dir, len) < 0)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		log_msg(LOG_ERR, "spool %s: %s", dir, strerror(errno));
	return fd;
}

/* The part of @prof of @service as a gzipped OTLP request into the file @path. */
static long write_otlp_part(const struct taproot_profile *prof, const char *service,
			    const char *hostname, const char *path)
{
	const struct taproot_otlp_attr resource[] = {
		{ .key = "service.name", .str = service },
		{ .key = "host.name", .str = hostname },
		{ .key = "os.type", .str = "linux" },
	};

	return taproot_otlp_write_part_file(prof, "service_name", service, resource,
					    sizeof(resource) / sizeof(resource[0]), path);
}

/* One part: the samples of @service into the spool. 1 written, 0 none, -1. */
static int write_part(const char *dir, const struct taproot_profile *prof, const char *kind,
		      int64_t from, int64_t until, const char *service,
		      enum spool_format format, const char *hostname)
{
	char enc[ENCODED_MAX + 1], path[4800];
	long n;

	if (!encode_service(service, enc))
		return 0;
	snprintf(path, sizeof(path), "%s/%010" PRId64 "-%010" PRId64 ".%s.%s%s", dir, from,
		 until, kind, enc, spool_suffix[format]);
	if (format == SPOOL_OTLP)
		n = write_otlp_part(prof, service, hostname, path);
	else
		n = taproot_pprof_write_part_file(prof, "service_name", service, path);
	if (n < 0) {
		log_msg(LOG_ERR, "spool: %s", taproot_errmsg((int)n));
		return -1;
	}
	return n > 0;
}

/*
 * @until, or past it while the spool holds an interval FROM-UNTIL of @kind
 * already: two intervals begun within one second (a flush forced soon
 * after another) must not share a file, and a later UNTIL still bounds
 * the profile.
 */
static int64_t free_until(const char *output, const char *kind, int64_t from, int64_t until)
{
	struct spool_entry *v;
	uint64_t bytes;
	long n = spool_list(output, &v, &bytes, false);
	bool taken = true;

	while (taken && n > 0) {
		taken = false;
		for (long i = 0; i < n && !taken; i++)
			taken = v[i].from == from && v[i].until == until && !strcmp(v[i].kind, kind);
		until += taken;
	}
	free(v);
	return until;
}

int spool_write(const char *output, const struct taproot_profile *prof, const char *kind,
		int64_t from, int64_t until, enum spool_format format, const char *hostname)
{
	const char **services = calloc(MAX_SERVICES, sizeof(*services));
	char dir[4200];
	long n;
	int written = 0, ret = 0;

	if (!services) {
		log_msg(LOG_ERR, "spool: out of memory");
		return -1;
	}
	if (make_spool(output, dir, sizeof(dir)) < 0) {
		free(services);
		return -1;
	}
	n = taproot_profile_label_values(prof, "service_name", services, MAX_SERVICES);
	if (n < 0) {
		log_msg(LOG_ERR, "spool: %s", taproot_errmsg((int)n));
		free(services);
		return -1;
	}
	if (n > MAX_SERVICES) {
		log_msg(LOG_WARNING, "spool: %ld services in one %s profile: the first %d pushed",
			n, kind, MAX_SERVICES);
		n = MAX_SERVICES;
	}
	if (n > 0)
		until = free_until(output, kind, from, until);
	for (long i = 0; i < n && ret >= 0; i++) {
		ret = write_part(dir, prof, kind, from, until, services[i], format, hostname);
		written += ret > 0;
	}
	free(services);
	return ret < 0 ? -1 : written;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct spool_entry *)a)->name, ((const struct spool_entry *)b)->name);
}

/* Whether @name is a temporary file of write_atomic(): NAME.tmp.XXXXXX. */
static bool is_temp(const char *name)
{
	const char *t = strstr(name, ".tmp.");
	size_t suffix;

	return t && t[5] && name_format(name, (size_t)(t - name), &suffix) >= 0;
}

long spool_list(const char *output, struct spool_entry **vp, uint64_t *bytes, bool temps)
{
	struct spool_entry *v = NULL, e;
	size_t n = 0, alloc = 0;
	char dir[4200];
	struct dirent *de;
	DIR *d;
	int fd = open_spool(output, dir, sizeof(dir));

	*vp = NULL;
	*bytes = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (temps && is_temp(de->d_name)) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (!spool_parse_name(de->d_name, &e) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		e.bytes = (uint64_t)st.st_size;
		if (n == alloc) {
			struct spool_entry *nv = realloc(v, (alloc = alloc ? 2 * alloc : 64) * sizeof(*v));

			if (!nv) {
				log_msg(LOG_ERR, "spool: out of memory");
				free(v);
				closedir(d);
				return -1;
			}
			v = nv;
		}
		v[n++] = e;
		*bytes += e.bytes;
	}
	closedir(d);
	/* The names start with FROM, 10 digits: by name is oldest first. */
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	*vp = v;
	return (long)n;
}

bool spool_holds(const struct spool_entry *v, size_t n, int64_t stamp, const char *kind)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].from <= stamp && stamp <= v[i].until && !strcmp(v[i].kind, kind))
			return true;
	return false;
}
