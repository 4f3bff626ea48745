// SPDX-License-Identifier: GPL-2.0
/*
 * The process model: the executable mappings of each process seen in
 * samples, from /proc/PID/maps, and the ELF file behind each.
 *
 * A process is its pid and its start time (/proc/PID/stat field 22), so a
 * reused pid is a new process. It is read when first seen and re-read when
 * a pc falls outside its maps (at most once per refresh interval), after
 * exec, and when the exit grace of a forgotten process ran out. A process
 * that cannot be read is kept with the reason, so its samples still count.
 *
 * Bounded: at most max_procs processes (least recently used evicted),
 * TP_MAPS_EXEC_MAX executable mappings each, maps lines of at most
 * TP_MAPS_LINE_MAX bytes and TP_MAPS_LINES_MAX lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "process/process-private.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/parse.h"

/* ------------------------------------------------------------ parsing */

int tp_stat_start_time(const char *buf, size_t len, uint64_t *start)
{
	const char *p, *end = buf + len;
	uint64_t v = 0;
	int field;

	/* comm is in parentheses and may hold anything: after the last ')'. */
	p = memrchr(buf, ')', len);
	if (!p || !memchr(buf, '(', (size_t)(p - buf)))
		return tp_err(-TAPROOT_EPROTO, "stat: no (comm)");
	p++;
	/* Fields 3 (state) .. 22 (starttime), each preceded by a space. */
	for (field = 3; field <= 22; field++) {
		const char *f;

		if (p >= end || *p != ' ')
			return tp_err(-TAPROOT_EPROTO, "stat: field %d missing", field);
		f = ++p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (p == f)
			return tp_err(-TAPROOT_EPROTO, "stat: field %d empty", field);
		if (field == 22 && (!tp_parse_dec(&f, p, &v) || f != p))
			return tp_err(-TAPROOT_EPROTO, "stat: bad start time");
	}
	*start = v;
	return 0;
}

/* A decimal number, then a space or the end of the line. */
static bool tp_dec(const char **pp, uint64_t *v)
{
	const char *p = *pp;

	if (!tp_parse_dec(&p, NULL, v) || (*p != ' ' && *p != '\0'))
		return false;
	*pp = p;
	return true;
}

struct tp_maps_line {
	uint64_t start, end, pgoff, major, minor, ino;
	char perms[5];
	const char *path;	/* into the line; "" when none */
};

/* One line without its newline. Returns false when it is malformed. */
static bool tp_maps_parse_line(const char *line, struct tp_maps_line *l)
{
	const char *p = line;

	if (!tp_parse_hex(&p, '-', &l->start) || !tp_parse_hex(&p, ' ', &l->end))
		return false;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's') || p[4] != ' ')
		return false;
	memcpy(l->perms, p, 4);
	l->perms[4] = '\0';
	p += 5;
	if (!tp_parse_hex(&p, ' ', &l->pgoff) || !tp_parse_hex(&p, ':', &l->major) ||
	    !tp_parse_hex(&p, ' ', &l->minor) || !tp_dec(&p, &l->ino))
		return false;
	if (l->major > 0xfff || l->minor > 0xfffff)
		return false;
	if (l->start >= l->end || (l->start & 0xfff) || (l->end & 0xfff))
		return false;
	while (*p == ' ')
		p++;
	l->path = p;
	return true;
}

/* The kernel writes a newline of a path as "\012": undo that, in place. */
static size_t tp_unescape_path(char *s, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n + 1 && !strncmp(s + i, "\\012", 4)) {
			s[o++] = '\n';
			i += 3;
		} else {
			s[o++] = s[i];
		}
	}
	return o;
}

/* The executable mappings being read, before they replace a process's. */
struct tp_maps_build {
	struct tp_map *maps;
	size_t nr, alloc;
	char *strings;		/* the paths; offset 0 is "" */
	size_t len, cap;
};

/*
 * Strip the " (deleted)" suffix and the escapes of the path of a maps line
 * (*@plen bytes at @path, in place) and classify it: TAPROOT_MAP_* flags.
 */
static uint32_t tp_maps_path_flags(char *path, size_t *plen)
{
	static const char deleted[] = " (deleted)";
	size_t n = *plen;
	uint32_t flags = 0;

	if (n >= sizeof(deleted) - 1 && !strcmp(path + n - (sizeof(deleted) - 1), deleted)) {
		n -= sizeof(deleted) - 1;
		flags |= TAPROOT_MAP_DELETED;
	}
	n = tp_unescape_path(path, n);
	*plen = n;
	if (n == 0)
		return flags | TAPROOT_MAP_ANON;
	if (path[0] == '[') {
		if (n == 6 && !memcmp(path, "[vdso]", 6))
			return flags | TAPROOT_MAP_VDSO;
		if (n == 10 && !memcmp(path, "[vsyscall]", 10))
			return flags | TAPROOT_MAP_VSYSCALL;
		return flags | TAPROOT_MAP_SPECIAL | TAPROOT_MAP_ANON;
	}
	/* anon_inode:..., a memfd without a leading /, ... */
	if (path[0] != '/')
		return flags | TAPROOT_MAP_SPECIAL | TAPROOT_MAP_ANON;
	return flags;
}

/* Append the executable mapping of line @l to @b. 0 or -ENOMEM. */
static int tp_maps_add(struct tp_maps_build *b, const struct tp_maps_line *l)
{
	char *path = (char *)l->path;
	size_t plen = strlen(path);
	uint32_t flags = tp_maps_path_flags(path, &plen);
	struct tp_map *m;
	int64_t off;

	off = tp_strpool_add(&b->strings, &b->len, &b->cap, path, plen);
	if (off < 0 || tp_grow((void **)&b->maps, &b->alloc, b->nr + 1, sizeof(*b->maps)))
		return tp_err(-ENOMEM, NULL);
	m = &b->maps[b->nr++];
	memset(m, 0, sizeof(*m));
	m->pub.start = l->start;
	m->pub.end = l->end;
	m->pub.pgoff = l->pgoff;
	m->pub.dev = makedev((unsigned int)l->major, (unsigned int)l->minor);
	m->pub.ino = l->ino;
	m->pub.flags = flags;
	m->path_off = (uint32_t)off;
	return 0;
}

/*
 * Read line number @nr of @f into @line (TP_MAPS_LINE_MAX + 2 bytes), without
 * its newline, and parse it into @l. Returns 1 with a line, 0 at the end,
 * or a recorded error.
 */
static int tp_maps_next(struct taproot_proc *p, FILE *f, char *line, size_t nr,
			struct tp_maps_line *l)
{
	size_t n;

	if (!fgets(line, TP_MAPS_LINE_MAX + 2, f))
		return 0;
	if (nr > TP_MAPS_LINES_MAX)
		return tp_err(-E2BIG, "pid %d: maps has more than %u lines", p->pid,
			      TP_MAPS_LINES_MAX);
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[--n] = '\0';
	else if (!feof(f))
		return tp_err(-TAPROOT_EPROTO, "pid %d: maps line %zu longer than %u bytes",
			      p->pid, nr, TP_MAPS_LINE_MAX);
	if (!tp_maps_parse_line(line, l))
		return tp_err(-TAPROOT_EPROTO, "pid %d: maps line %zu malformed: '%.100s'",
			      p->pid, nr, line);
	return 1;
}

/* Replace @p's maps by those of @b, which is left empty. */
static void tp_maps_install(struct taproot_proc *p, struct tp_maps_build *b, size_t lines)
{
	for (size_t n = 0; n < b->nr; n++)
		b->maps[n].pub.path = b->strings + b->maps[n].path_off;
	free(p->maps);
	free(p->strings);
	p->maps = b->maps;
	p->nr_maps = b->nr;
	p->strings = b->strings;
	p->strings_len = b->len;
	p->maps_lines = lines;
	p->py_known = false;
	p->jvm_known = false;
	memset(b, 0, sizeof(*b));
}

int tp_maps_read(struct taproot_proc *p, FILE *f)
{
	struct tp_maps_build b = { 0 };
	uint64_t prev_end = 0;
	struct tp_maps_line l;
	size_t lines = 0;
	char *line;
	int err;

	line = malloc(TP_MAPS_LINE_MAX + 2);
	if (!line)
		return tp_err(-ENOMEM, NULL);
	/* Offset 0 of strings is "". */
	err = tp_strpool_add(&b.strings, &b.len, &b.cap, "", 0) < 0 ? tp_err(-ENOMEM, NULL) : 0;
	while (!err && (err = tp_maps_next(p, f, line, ++lines, &l)) == 1) {
		err = 0;
		if (l.start < prev_end)
			err = tp_err(-TAPROOT_EPROTO, "pid %d: maps line %zu overlaps or is out of order",
				     p->pid, lines);
		else if (l.perms[2] == 'x' && b.nr == TP_MAPS_EXEC_MAX)
			p->procs->stats.maps_dropped++;
		else if (l.perms[2] == 'x')
			err = tp_maps_add(&b, &l);
		prev_end = l.end;
	}
	if (!err && ferror(f)) {
		err = -errno ? -errno : -EIO;
		err = tp_err(err, "pid %d: reading maps: %s", p->pid, strerror(-err));
	}
	if (!err)
		tp_maps_install(p, &b, lines - 1);
	free(b.maps);
	free(b.strings);
	free(line);
	return err;
}

struct tp_map *tp_proc_lookup(struct taproot_proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->nr_maps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].pub.start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= p->maps[lo - 1].pub.end)
		return NULL;
	return &p->maps[lo - 1];
}

/* ------------------------------------------------------ the table */

void taproot_procs_opts_default(struct taproot_procs_opts *o)
{
	o->max_procs = TP_PROCS_MAX_DEFAULT;
	o->max_elfs = TP_ELFS_MAX_DEFAULT;
	o->refresh_ms = TP_REFRESH_MS_DEFAULT;
	o->quick_reads = TP_REFRESH_QUICK;
	o->exit_grace_ms = TP_EXIT_GRACE_MS_DEFAULT;
	o->proc_root = "/proc";
	o->runtime_root = "/";
	o->observer = NULL;
}

int taproot_procs_new(const struct taproot_procs_opts *opts, struct taproot_procs **pp)
{
	struct taproot_procs *procs;
	int err;

	*pp = NULL;
	procs = calloc(1, sizeof(*procs));
	if (!procs)
		return tp_err(-ENOMEM, NULL);
	if (opts)
		procs->opts = *opts;
	else
		taproot_procs_opts_default(&procs->opts);
	if (!procs->opts.max_procs || !procs->opts.max_elfs) {
		free(procs);
		return tp_err(-EINVAL, "process table: max_procs and max_elfs must be at least 1");
	}
	if (!procs->opts.proc_root)
		procs->opts.proc_root = "/proc";
	/* Kept by pointer: copy it. */
	procs->proc_root = strdup(procs->opts.proc_root);
	procs->nr_buckets = 64;
	while (procs->nr_buckets < (size_t)procs->opts.max_procs * 2 &&
	       procs->nr_buckets < (1u << 22))
		procs->nr_buckets *= 2;
	procs->hash = calloc(procs->nr_buckets, sizeof(*procs->hash));
	if (!procs->proc_root || !procs->hash) {
		free(procs->proc_root);
		free(procs->hash);
		free(procs);
		return tp_err(-ENOMEM, NULL);
	}
	procs->opts.proc_root = procs->proc_root;
	err = tp_elfs_init(&procs->elfs, procs->opts.max_elfs);
	if (err) {
		free(procs->proc_root);
		free(procs->hash);
		free(procs);
		return err;
	}
	if (!procs->opts.runtime_root)
		procs->opts.runtime_root = "/";
	err = tp_k8s_cache_init(&procs->k8s, procs->opts.runtime_root, TP_K8S_CACHE_MAX);
	if (err) {
		tp_elfs_fini(&procs->elfs);
		free(procs->proc_root);
		free(procs->hash);
		free(procs);
		return err;
	}
	procs->opts.runtime_root = procs->k8s.root;
	*pp = procs;
	return 0;
}

static size_t tp_procs_bucket(const struct taproot_procs *procs, int pid)
{
	return (size_t)(tp_hash_fin(tp_hash_mix(0, (uint32_t)pid)) & (procs->nr_buckets - 1));
}

/* Forget @p's maps and what was found in them. */
static void tp_proc_drop_maps(struct taproot_proc *p)
{
	free(p->maps);
	free(p->strings);
	p->maps = NULL;
	p->strings = NULL;
	p->nr_maps = 0;
	p->strings_len = 0;
	p->py_known = false;
	p->jvm_known = false;
}

static void tp_proc_clear(struct taproot_proc *p)
{
	tp_proc_drop_maps(p);
	tp_perfmap_free(p->perfmap);
	tp_proc_free_labels(p);
	free(p->py);
	p->py = NULL;
	free(p->jvm);
	p->jvm = NULL;
	p->perfmap = NULL;
}

static void tp_procs_remove(struct taproot_procs *procs, struct taproot_proc *p)
{
	struct taproot_proc **pp = &procs->hash[tp_procs_bucket(procs, p->pid)];

	while (*pp && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = p->hnext;
	tp_lru_unlink(&procs->lru, &p->lru);
	procs->nr--;
	tp_proc_clear(p);
	free(p);
}

void taproot_procs_free(struct taproot_procs *procs)
{
	if (!procs)
		return;
	while (procs->lru.head)
		tp_procs_remove(procs, tp_lru_entry(procs->lru.head, struct taproot_proc, lru));
	tp_elfs_fini(&procs->elfs);
	tp_k8s_cache_fini(&procs->k8s);
	free(procs->hash);
	free(procs->proc_root);
	free(procs);
}

void taproot_procs_get_stats(const struct taproot_procs *procs,
			     struct taproot_procs_stats *st)
{
	*st = procs->stats;
	st->elfs_opened = procs->elfs.opened;
	st->elfs_evicted = procs->elfs.evicted;
	st->k8s_hits = procs->k8s.stats.hits;
	st->k8s_reads = procs->k8s.stats.reads;
	st->k8s_refused = procs->k8s.stats.refused;
	st->k8s_evicted = procs->k8s.stats.evicted;
}

static struct taproot_proc *tp_procs_find(struct taproot_procs *procs, int pid)
{
	struct taproot_proc *p;

	for (p = procs->hash[tp_procs_bucket(procs, pid)]; p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

static void tp_procs_touch(struct taproot_procs *procs, struct taproot_proc *p)
{
	tp_lru_touch(&procs->lru, &p->lru);
}

static struct taproot_proc *tp_procs_add(struct taproot_procs *procs, int pid)
{
	struct taproot_proc *p;
	size_t b;

	while (procs->nr >= procs->opts.max_procs && procs->lru.tail) {
		tp_procs_remove(procs, tp_lru_entry(procs->lru.tail, struct taproot_proc, lru));
		procs->stats.procs_evicted++;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->procs = procs;
	p->pid = pid;
	p->state = TP_PROC_NEW;
	b = tp_procs_bucket(procs, pid);
	p->hnext = procs->hash[b];
	procs->hash[b] = p;
	tp_lru_push(&procs->lru, &p->lru);
	procs->nr++;
	return p;
}

/* @p cannot be read: keep it, with @err and the reason. */
static void tp_proc_set_gone(struct taproot_proc *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void tp_proc_set_gone(struct taproot_proc *p, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
	p->err = err;
	if (p->nr_maps && err == -ESRCH) {
		/* It ran before: keep its maps for its late samples. */
		if (p->state != TP_PROC_EXITED)
			p->exited_ms = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
		p->state = TP_PROC_EXITED;
		return;
	}
	p->state = TP_PROC_GONE;
	p->procs->stats.procs_gone++;
}

static bool tp_errno_exited(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

/*
 * With an observer, maps is read whole first, so that the observer gets
 * exactly the text the parser then reads (through fmemopen()); at most
 * TAPROOT_PROC_MAPS_MAX bytes, which a replay then cuts the same way.
 */
static FILE *tp_maps_open_observed(struct taproot_proc *p, int dirfd, char **bufp)
{
	char *buf = NULL;
	FILE *f = NULL;
	size_t len = 0;
	int fd, err;

	*bufp = NULL;
	fd = openat(dirfd, "maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		tp_observe(p->procs, p->pid, TAPROOT_PROC_MAPS, err, NULL, 0);
		errno = -err;
		return NULL;
	}
	err = tp_read_fd(fd, TAPROOT_PROC_MAPS_MAX, &buf, &len);
	close(fd);
	tp_observe(p->procs, p->pid, TAPROOT_PROC_MAPS, err, buf, err ? 0 : len);
	/* "r" of zero bytes is an empty stream: maps of a zombie. */
	if (!err && !(f = fmemopen(len ? buf : (char *)"", len, "r")))
		err = -errno;
	if (err) {
		free(buf);
		errno = -err;
		return NULL;
	}
	*bufp = buf;
	return f;
}

/* @p's /proc/PID/comm (its main thread's name) into @buf, "" if unknown. */
static void tp_read_comm(struct taproot_proc *p, int dirfd, char *buf, size_t len)
{
	ssize_t n = tp_read_at(dirfd, "comm", buf, len);

	tp_observe(p->procs, p->pid, TAPROOT_PROC_COMM, n < 0 ? (int)n : 0, buf,
		   n < 0 ? 0 : (size_t)n);
	if (n < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * Read @p's start time from stat in @dirfd (@dir for messages), which must
 * be @want when not 0; a new one means another process took the pid.
 * False when @p is gone (its reason set).
 */
static bool tp_proc_read_stat(struct taproot_proc *p, int dirfd, const char *dir,
			      uint64_t want)
{
	struct taproot_procs *procs = p->procs;
	char statbuf[4096];
	uint64_t start = 0;
	ssize_t n;
	int err;

	n = tp_read_at(dirfd, "stat", statbuf, sizeof(statbuf));
	tp_observe(procs, p->pid, TAPROOT_PROC_STAT, n < 0 ? (int)n : 0, statbuf,
		   n < 0 ? 0 : (size_t)n);
	if (n < 0) {
		if (tp_errno_exited((int)n))
			tp_proc_set_gone(p, -ESRCH, "process exited");
		else
			tp_proc_set_gone(p, (int)n, "reading stat: %s", strerror((int)-n));
		return false;
	}
	err = tp_stat_start_time(statbuf, (size_t)n, &start);
	if (err) {
		tp_proc_set_gone(p, err, "malformed %s/stat", dir);
		return false;
	}
	if (want && start != want) {
		p->start_time = want;
		tp_proc_set_gone(p, -ESRCH, "process exited (pid reused)");
		procs->stats.pid_reused++;
		return false;
	}
	if (p->start_time && start != p->start_time) {
		/* Another process took the pid: nothing of the old one applies. */
		tp_proc_clear(p);
		procs->stats.pid_reused++;
	}
	p->start_time = start;
	return true;
}

/* Read @p's maps from @dirfd. False when @p is gone (its reason set). */
static bool tp_proc_read_maps(struct taproot_proc *p, int dirfd)
{
	char *mapsbuf = NULL;
	int fd = -1, err;
	FILE *f;

	if (p->procs->opts.observer) {
		f = tp_maps_open_observed(p, dirfd, &mapsbuf);
	} else {
		fd = openat(dirfd, "maps", O_RDONLY | O_CLOEXEC);
		f = fd >= 0 ? fdopen(fd, "r") : NULL;
	}
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		if (tp_errno_exited(err))
			tp_proc_set_gone(p, -ESRCH, "process exited");
		else
			tp_proc_set_gone(p, err, "reading maps: %s", strerror(-err));
		return false;
	}
	err = tp_maps_read(p, f);
	fclose(f);
	free(mapsbuf);
	if (err) {
		if (tp_errno_exited(err))
			tp_proc_set_gone(p, -ESRCH, "process exited");
		else if (!p->nr_maps)
			tp_proc_set_gone(p, err, "%s", taproot_errmsg(err));
		return false;
	}
	if (!p->nr_maps) {
		/* A zombie or a kernel thread: maps is empty. */
		tp_proc_set_gone(p, -ESRCH, "process exited (no executable mappings)");
		return false;
	}
	return true;
}

/*
 * (Re)read @p: its start time (which must be @want when not 0) and maps.
 * On failure @p keeps its previous maps: a live process becomes GONE only
 * when it has none.
 */
static void tp_proc_read(struct taproot_proc *p, uint64_t want)
{
	struct taproot_procs *procs = p->procs;
	char dir[PATH_MAX], comm[sizeof(p->comm)];
	int dirfd, err;

	p->read_ms = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
	procs->stats.procs_read++;
	snprintf(p->root, sizeof(p->root), "%s/%d/root",
		 strlen(procs->proc_root) < sizeof(p->root) - 20 ? procs->proc_root : "/proc",
		 p->pid);
	snprintf(dir, sizeof(dir), "%s/%d", procs->proc_root, p->pid);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err = -errno;
		tp_observe(procs, p->pid, TAPROOT_PROC_DIR, err, NULL, 0);
		if (tp_errno_exited(err))
			tp_proc_set_gone(p, -ESRCH, "process exited");
		else
			tp_proc_set_gone(p, err, "%s: %s", dir, strerror(-err));
		return;
	}
	if (!tp_proc_read_stat(p, dirfd, dir, want))
		goto out;
	/* The name before the maps: taproot_proc_check_comm(). */
	tp_read_comm(p, dirfd, comm, sizeof(comm));
	if (!tp_proc_read_maps(p, dirfd))
		goto out;
	if (!p->labels_read && tp_proc_read_labels(p, dirfd) < 0)
		procs->stats.labels_failed++;
	p->state = TP_PROC_LIVE;
	p->err = 0;
	p->reason[0] = '\0';
	/*
	 * The name that goes with these maps, the same before and after
	 * them: else an execve came in between, and the maps may be of
	 * either program: "\n", a name no comm read here has, sends every
	 * sample of the main thread to read the process again.
	 */
	tp_read_comm(p, dirfd, p->comm, sizeof(p->comm));
	if (strcmp(comm, p->comm))
		strcpy(p->comm, "\n");
out:
	close(dirfd);
}

/*
 * Read the live @proc again, at most once per refresh interval: true if
 * read. A process met while its loader still maps its libraries (its first
 * samples come during ld.so) is read without them, and its pcs in them miss
 * for a whole interval: its first opts.quick_reads re-reads may come
 * TP_REFRESH_QUICK_MS apart, a few, which bounds what a process whose pcs
 * keep missing (JIT code without a perf map) costs.
 */
static bool tp_proc_refresh(struct taproot_proc *proc)
{
	uint64_t since = tp_clock_ms(CLOCK_MONOTONIC_COARSE) - proc->read_ms;

	if (proc->state != TP_PROC_LIVE)
		return false;
	if (since < proc->procs->opts.refresh_ms) {
		if (proc->quick_reads >= proc->procs->opts.quick_reads || since < TP_REFRESH_QUICK_MS)
			return false;
		proc->quick_reads++;
	}
	proc->procs->stats.refreshes++;
	proc->maps_gen++;
	tp_proc_read(proc, 0);
	return true;
}

/* A digest of @p's mappings as maps showed them, to tell a re-read that changed them. */
static uint64_t tp_maps_digest(const struct taproot_proc *p)
{
	uint64_t h = tp_hash_mix(p->start_time, p->nr_maps);

	for (size_t i = 0; i < p->nr_maps; i++) {
		const struct taproot_map *m = &p->maps[i].pub;

		h = tp_hash_mix(tp_hash_mix(tp_hash_mix(h, m->start), m->end), m->pgoff);
		h = tp_hash_mix(tp_hash_mix(tp_hash_mix(h, m->dev), m->ino), m->flags);
	}
	return tp_hash_fin(h);
}

int taproot_proc_reread(struct taproot_proc *proc)
{
	uint64_t before;

	if (proc->state == TP_PROC_NEW) {
		tp_proc_read(proc, 0);
	} else if (proc->state == TP_PROC_LIVE) {
		before = tp_maps_digest(proc);
		tp_proc_read(proc, 0);
		if (tp_maps_digest(proc) != before) {
			proc->procs->stats.refreshes++;
			proc->maps_gen++;
		}
	}
	return proc->state == TP_PROC_LIVE ? 0 : -ESRCH;
}

const char *taproot_proc_maps_comm(const struct taproot_proc *proc)
{
	return proc->comm;
}

bool taproot_proc_comm_is(const struct taproot_proc *proc, const char *comm)
{
	return !proc->comm[0] || !strcmp(proc->comm, comm);
}

bool taproot_proc_check_comm(struct taproot_proc *proc, const char *comm)
{
	if (!proc->comm[0] || !strcmp(proc->comm, comm))
		return true;
	/*
	 * Renamed, or exec'd after the read: read it again, at the usual
	 * pace (an exited one cannot be: its maps stay of the name read).
	 */
	tp_proc_refresh(proc);
	return !proc->comm[0] || !strcmp(proc->comm, comm);
}

int taproot_proc_get(struct taproot_procs *procs, int pid, uint64_t start_time,
		     struct taproot_proc **pp)
{
	struct taproot_proc *p;
	uint64_t now = tp_clock_ms(CLOCK_MONOTONIC_COARSE);

	*pp = NULL;
	if (pid <= 0)
		return tp_err(-EINVAL, "pid %d", pid);
	p = tp_procs_find(procs, pid);
	if (p) {
		bool reread = false;

		tp_procs_touch(procs, p);
		if (start_time && p->start_time && p->start_time != start_time) {
			/* Another process with this pid. */
			procs->stats.pid_reused++;
			tp_procs_remove(procs, p);
			p = NULL;
		} else if (p->state == TP_PROC_NEW) {
			reread = true;
		} else if (p->state == TP_PROC_EXITED) {
			if (!start_time && now - p->exited_ms >= procs->opts.exit_grace_ms) {
				tp_procs_remove(procs, p);
				p = NULL;
			}
		} else if (p->state == TP_PROC_GONE && !start_time &&
			   now - p->read_ms >= procs->opts.refresh_ms) {
			/* The pid may have a new process by now. */
			tp_procs_remove(procs, p);
			p = NULL;
		}
		if (p) {
			if (reread)
				tp_proc_read(p, start_time);
			*pp = p;
			return 0;
		}
	}
	p = tp_procs_add(procs, pid);
	if (!p)
		return tp_err(-ENOMEM, NULL);
	tp_proc_read(p, start_time);
	*pp = p;
	return 0;
}

int taproot_proc_get_current(struct taproot_procs *procs, int pid, struct taproot_proc **pp)
{
	uint64_t reads = procs->stats.procs_read;
	int err = taproot_proc_get(procs, pid, 0, pp);

	if (err < 0)
		return err;
	/* Not read by the get: it was known, read before this call. */
	if (procs->stats.procs_read == reads)
		return taproot_proc_reread(*pp);
	return (*pp)->state == TP_PROC_LIVE ? 0 : -ESRCH;
}

int taproot_proc_find(struct taproot_procs *procs, int pid, uint64_t start_time,
		      struct taproot_proc **pp)
{
	struct taproot_proc *p = pid > 0 ? tp_procs_find(procs, pid) : NULL;

	*pp = NULL;
	if (!p || (start_time && p->start_time != start_time))
		return -ESRCH;
	*pp = p;
	return 0;
}

const char *taproot_proc_gone(const struct taproot_proc *proc)
{
	return proc->state == TP_PROC_GONE ? proc->reason : NULL;
}

int taproot_proc_pid(const struct taproot_proc *proc)
{
	return proc->pid;
}

uint64_t taproot_proc_start_time(const struct taproot_proc *proc)
{
	return proc->start_time;
}

void taproot_proc_forget(struct taproot_procs *procs, int pid)
{
	struct taproot_proc *p = tp_procs_find(procs, pid);

	if (!p)
		return;
	if (p->state != TP_PROC_LIVE) {
		tp_procs_remove(procs, p);
		return;
	}
	p->state = TP_PROC_EXITED;
	p->exited_ms = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
}

void taproot_proc_exec(struct taproot_procs *procs, int pid, uint64_t time_ns)
{
	struct taproot_proc *p = tp_procs_find(procs, pid);

	/* Unknown: kept unread, for the time of its exec. */
	if (!p && pid > 0) {
		p = tp_procs_add(procs, pid);
		if (p)
			p->exec_ns = time_ns;
		return;
	}
	if (p && p->state != TP_PROC_EXITED) {
		p->execs++;
		if (time_ns > p->exec_ns)
			p->exec_ns = time_ns;
		p->state = TP_PROC_NEW;
		/*
		 * The maps held are the old program's: kept, they would be
		 * taken for the new one's if it exits before it is read.
		 */
		tp_proc_drop_maps(p);
		tp_perfmap_free(p->perfmap);
		p->perfmap = NULL;
		tp_proc_free_labels(p);
	}
}

void taproot_proc_new(struct taproot_procs *procs, int pid)
{
	struct taproot_proc *p = tp_procs_find(procs, pid);

	if (p) {
		procs->stats.pid_reused++;
		tp_procs_remove(procs, p);
	}
}

void taproot_proc_fork(struct taproot_procs *procs, int parent, int child)
{
	struct tp_maps_build b = { 0 };
	struct taproot_proc *pp, *p;
	struct tp_labels *labels;
	uint64_t lines;

	taproot_proc_new(procs, child);
	pp = parent > 0 && parent != child ? tp_procs_find(procs, parent) : NULL;
	if (!pp || !pp->nr_maps || (pp->state != TP_PROC_LIVE && pp->state != TP_PROC_EXITED))
		return;
	/* All taken before the add, whose eviction may free the parent. */
	b.nr = b.alloc = pp->nr_maps;
	b.len = b.cap = pp->strings_len;
	b.maps = malloc(b.nr * sizeof(*b.maps));
	b.strings = malloc(b.len ? b.len : 1);
	if (!b.maps || !b.strings)
		goto out;
	memcpy(b.maps, pp->maps, b.nr * sizeof(*b.maps));
	memcpy(b.strings, pp->strings, b.len);
	for (size_t i = 0; i < b.nr; i++)
		b.maps[i].pub.elf = NULL;	/* resolved again, for the child */
	lines = pp->maps_lines;
	labels = tp_labels_get(pp->labels);
	p = tp_procs_add(procs, child);
	if (!p) {
		tp_labels_put(labels);
		goto out;
	}
	/*
	 * The first evicted until a sample uses it: a burst of forks never
	 * sampled must not push out the processes that are.
	 */
	tp_lru_unlink(&procs->lru, &p->lru);
	tp_lru_push_tail(&procs->lru, &p->lru);
	/* State NEW: read from /proc at first use, these kept if it has exited. */
	tp_maps_install(p, &b, lines);
	p->labels = labels;
	procs->stats.maps_inherited++;
out:
	/* Nothing left after tp_maps_install(), which takes them. */
	free(b.maps);
	free(b.strings);
}

uint32_t taproot_proc_execs(const struct taproot_proc *proc)
{
	return proc->execs;
}

uint32_t taproot_proc_maps_generation(const struct taproot_proc *proc)
{
	return proc->maps_gen;
}

uint64_t taproot_proc_exec_ns(const struct taproot_proc *proc)
{
	return proc->exec_ns;
}

size_t taproot_proc_map_count(const struct taproot_proc *proc)
{
	return proc->nr_maps;
}

const struct taproot_map *taproot_proc_map(const struct taproot_proc *proc, size_t i)
{
	return i < proc->nr_maps ? &proc->maps[i].pub : NULL;
}

/* Open the ELF file of @m, a mapping with a file; see tp_map_resolve(). */
static int tp_map_open(struct taproot_proc *p, struct tp_map *m, const char *alt,
		       struct taproot_elf **ep)
{
	struct taproot_procs *procs = p->procs;
	const struct taproot_procs_observer *o = procs->opts.observer;
	uint64_t opened = procs->elfs.opened;
	bool deleted = m->pub.flags & TAPROOT_MAP_DELETED;
	int err;

	err = tp_elfs_get(&procs->elfs, m->pub.dev, m->pub.ino, p->root, m->pub.path,
			  deleted ? alt : NULL, ep);
	if ((err == -ESTALE || err == -ENOENT) && !deleted)
		err = tp_elfs_get(&procs->elfs, m->pub.dev, m->pub.ino, p->root,
				  m->pub.path, alt, ep);
	/* Newly opened: a replay must find the same file (its build ID). */
	if (!err && o && o->elf && procs->elfs.opened != opened)
		o->elf(o->arg, m->pub.dev, m->pub.ino, m->pub.path, (*ep)->build_id,
		       (*ep)->build_id_len);
	return err;
}

/* Whether /proc/PID/map_files exists but has no entry @path (of it). */
static bool tp_map_files_lacks(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (lstat(path, &st) == 0 || errno != ENOENT)
		return false;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
	return stat(dir, &st) == 0;
}

/*
 * Open the ELF file of @m into m->pub (once per mapping: an error is
 * remembered). Returns false, remembering nothing, when the range is not
 * a mapping of the live @p any more: the maps read are stale.
 */
static bool tp_map_resolve(struct taproot_proc *p, struct tp_map *m)
{
	struct taproot_elf *e = NULL;
	char alt[PATH_MAX];
	int err;

	m->pub.elf = NULL;
	m->pub.elf_err = m->elf_err;
	if (m->elf_err)
		return true;
	if (m->pub.flags & TAPROOT_MAP_VDSO) {
		err = tp_elfs_vdso(&p->procs->elfs, &e);
	} else if (m->pub.flags & (TAPROOT_MAP_ANON | TAPROOT_MAP_VSYSCALL)) {
		return true;
	} else {
		/*
		 * map_files (root only) opens the mapped file itself: the one
		 * way to a deleted file, and the fallback when the path leads
		 * nowhere or to another inode than maps shows. On overlayfs
		 * before 6.6, maps shows a copied-up file's real (upper) inode,
		 * while every open, map_files too, sees the overlay's.
		 */
		snprintf(alt, sizeof(alt), "%s/%d/map_files/%llx-%llx", p->procs->proc_root,
			 p->pid, (unsigned long long)m->pub.start,
			 (unsigned long long)m->pub.end);
		err = tp_map_open(p, m, alt, &e);
		/*
		 * No map_files entry: the range is no mapping now (maps read
		 * while ld.so replaced a library's whole-file mapping by its
		 * segments, say). Remembered, the error would outlive the
		 * file's rename or removal; the caller reads the maps again.
		 */
		if (err && p->state == TP_PROC_LIVE && tp_map_files_lacks(alt)) {
			m->pub.elf_err = err;
			return false;
		}
	}
	if (!err)
		err = taproot_elf_bias(e, m->pub.start, m->pub.end, m->pub.pgoff, &m->pub.bias);
	if (err) {
		m->elf_err = m->pub.elf_err = err;
		p->procs->stats.elf_errors++;
		return true;
	}
	m->pub.elf = e;
	return true;
}

/* Why no mapping of @proc holds @pc. */
static int tp_proc_no_map(const struct taproot_proc *proc, uint64_t pc)
{
	if (proc->state == TP_PROC_GONE)
		return tp_err(-ESRCH, "pid %d: %s", proc->pid, proc->reason);
	return tp_err(-ENOENT, "pid %d: no executable mapping holds 0x%llx",
		      proc->pid, (unsigned long long)pc);
}

int taproot_proc_find_map(struct taproot_proc *proc, uint64_t pc,
			  const struct taproot_map **mp)
{
	struct tp_map *m;

	*mp = NULL;
	if (proc->state == TP_PROC_GONE)
		return tp_proc_no_map(proc, pc);
	if (proc->state == TP_PROC_NEW)
		tp_proc_read(proc, 0);
	m = tp_proc_lookup(proc, pc);
	if (!m && tp_proc_refresh(proc))
		m = tp_proc_lookup(proc, pc);
	if (m && !tp_map_resolve(proc, m) && tp_proc_refresh(proc)) {
		m = tp_proc_lookup(proc, pc);
		if (m)
			tp_map_resolve(proc, m);
	}
	if (!m)
		return tp_proc_no_map(proc, pc);
	*mp = &m->pub;
	return 0;
}

