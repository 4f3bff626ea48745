// SPDX-License-Identifier: GPL-2.0
/*
 * Replaying a raw capture file (taproot.h, "raw capture files"): its
 * records through a pipeline built with the recording's options, its /proc
 * snapshots materialized in a private directory that serves as the
 * pipeline's proc root.
 *
 * Since the recorder writes a PROC chunk before the record whose handling
 * read it, the directory shows at each record what the recording saw of
 * /proc then. Two things differ from the live run, on purpose:
 *
 *  - Mapped files are opened from this host's file system through
 *    TMP/PID/root -> "/", and matched by build ID (rp_file_check()): a
 *    recording made in a QEMU guest sees the host's files over 9p with
 *    other inode numbers, and the process model refuses a file whose inode
 *    is not the mapping's (lib/process/elffile.c). Maps lines of a file the
 *    recording opened are rewritten with this host's dev:inode when the
 *    build IDs agree, and with an inode that is not the file's when they do
 *    not, so the mapping stays unresolved rather than read from another
 *    file. Files the recording never opened keep their recorded numbers.
 *  - A /proc read that failed is replayed as an absent file: the reason
 *    the process model gives is "process exited" whatever the recording's
 *    was (permission denied, say).
 *
 * The vDSO is this host's (the process model reads its own); a recording
 * made under another kernel symbolizes its vDSO frames with this one's.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "raw/raw.h"
#include "util/clock.h"
#include "util/util.h"

#define RP_FILES_MAX		65536	/* mapped files of a recording matched here */
#define RP_MAPS_GROWTH		48	/* bytes a rewritten maps line may grow, at most */
#define RP_TMP_MAX		64

/* A mapped file the recording opened, and what this host has at its path. */
struct rp_file {
	uint64_t dev, ino;		/* as the recording's maps show it */
	uint64_t host_dev, host_ino;	/* what its maps lines get here */
	bool same;			/* this host's file is the recorded one */
};

struct taproot_replay {
	struct taproot_raw_reader *rd;
	struct taproot_replay_info info;
	struct taproot_ksyms *ksyms;
	struct rp_file *files;		/* sorted by (dev, ino) */
	size_t nr_files;
	bool started;			/* a pass read the file: rewind first */
	char *other_paths[4];		/* info.files_other_paths */
	char tmp[RP_TMP_MAX + 32];	/* the materialized proc root */
};

/* ------------------------------------------- files: recorded vs. here */

static int rp_file_cmp(const void *a, const void *b)
{
	const struct rp_file *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static const struct rp_file *rp_file_find(const struct taproot_replay *r, uint64_t dev,
					  uint64_t ino)
{
	struct rp_file key = { .dev = dev, .ino = ino };

	if (!r->nr_files)
		return NULL;
	return bsearch(&key, r->files, r->nr_files, sizeof(key), rp_file_cmp);
}

/*
 * Is this host's @path the file the recording opened? The same build ID,
 * or, when the recorded file had none, the same inode (a replay on the
 * machine that recorded). Sets @f's dev:inode for the maps written here.
 */
static void rp_file_check(struct taproot_procs *scratch, struct rp_file *f, const char *path,
			  const uint8_t *build_id, size_t build_id_len)
{
	struct taproot_elf *e;
	const uint8_t *bid;
	struct stat st;
	size_t len;

	f->same = false;
	f->host_dev = f->dev;
	f->host_ino = f->ino;
	if (stat(path, &st) < 0)
		return;			/* not here: opening it fails as it would */
	f->host_dev = st.st_dev;
	if (build_id_len) {
		if (taproot_elf_open(scratch, path, &e) == 0) {
			bid = taproot_elf_build_id(e, &len);
			f->same = bid && len == build_id_len && !memcmp(bid, build_id, len);
		}
	} else {
		f->same = st.st_ino == f->ino;
	}
	/* Another file: an inode that is not its own, so the mapping stays unresolved. */
	f->host_ino = f->same ? st.st_ino : st.st_ino + 1;
}

static int rp_add_file(struct taproot_replay *r, struct taproot_procs *scratch, size_t *cap,
		       const struct taproot_raw_chunk *c)
{
	struct rp_file *f;

	if (r->nr_files == RP_FILES_MAX) {
		r->info.files_over++;
		return 0;
	}
	if (r->nr_files == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		f = realloc(r->files, *cap * sizeof(*f));
		if (!f)
			return tp_err(-ENOMEM, NULL);
		r->files = f;
	}
	f = &r->files[r->nr_files++];
	f->dev = c->elf.dev;
	f->ino = c->elf.ino;
	rp_file_check(scratch, f, c->elf.path, c->elf.build_id, c->elf.build_id_len);
	/* A few names for the summary (one file may come twice: compare). */
	for (size_t i = 0; !f->same && i < 4; i++) {
		if (r->other_paths[i] && strcmp(r->other_paths[i], c->elf.path))
			continue;
		if (!r->other_paths[i] && !(r->other_paths[i] = strdup(c->elf.path)))
			return tp_err(-ENOMEM, NULL);
		r->info.files_other_paths[i] = r->other_paths[i];
		break;
	}
	return 0;
}

/* Sorted for rp_file_find(), once; a file evicted and opened again came twice. */
static void rp_sort_files(struct taproot_replay *r)
{
	size_t o = 0;

	if (r->nr_files)
		qsort(r->files, r->nr_files, sizeof(r->files[0]), rp_file_cmp);
	for (size_t i = 0; i < r->nr_files; i++) {
		if (o && !rp_file_cmp(&r->files[o - 1], &r->files[i]))
			continue;
		r->files[o++] = r->files[i];
		r->info.files_other += !r->files[i].same;
	}
	r->nr_files = r->info.files = o;
}

/*
 * The first read of the file: every chunk checked, the kernel symbols
 * loaded, the mapped files matched.
 */
static int rp_scan(struct taproot_replay *r)
{
	struct taproot_procs *scratch = NULL;
	struct taproot_raw_chunk c;
	size_t cap = 0;
	int n, err;

	err = taproot_procs_new(NULL, &scratch);
	if (err < 0)
		return err;
	while ((n = taproot_raw_next(r->rd, &c)) > 0) {
		FILE *f;

		switch (c.type) {
		case TAPROOT_RAW_KSYMS:
			if (r->ksyms)
				break;
			/* A bad table leaves kernel frames unnamed, as when recording. */
			f = fmemopen((void *)c.ksyms.text, c.ksyms.len ? c.ksyms.len : 1, "r");
			if (f) {
				taproot_ksyms_read(f, &r->ksyms);
				fclose(f);
			}
			break;
		case TAPROOT_RAW_ELF:
			n = rp_add_file(r, scratch, &cap, &c);
			break;
		case TAPROOT_RAW_RECORD:
			r->info.records++;
			break;
		case TAPROOT_RAW_PROC:
			r->info.procs++;
			break;
		case TAPROOT_RAW_END:
			r->info.end = c.end;
			break;
		default:
			break;
		}
		if (n < 0)
			break;
	}
	taproot_procs_free(scratch);
	if (n < 0)
		return n;
	rp_sort_files(r);
	r->info.ksyms = r->ksyms;
	return 0;
}

/* --------------------------------------------- the materialized /proc */

/* Remove TMP/@name (a pid's directory) and what it holds. */
static void rp_remove_pid(const struct taproot_replay *r, const char *name)
{
	static const char *const files[] = { "stat", "maps", "comm", "cgroup", "exe", "root" };
	char path[sizeof(r->tmp) + 48];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", r->tmp, name, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%s", r->tmp, name);
	rmdir(path);
}

/* Empty TMP (before a pass, at the end). */
static void rp_clear(const struct taproot_replay *r)
{
	struct dirent *de;
	DIR *d;

	if (!r->tmp[0] || !(d = opendir(r->tmp)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && strlen(de->d_name) < 16)
			rp_remove_pid(r, de->d_name);
	closedir(d);
}

static int rp_write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (len) {
		n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return (int)n;
		}
		data += n;
		len -= (size_t)n;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* Make @path a symbolic link to the @len bytes of @target (no NUL). */
static int rp_write_link(const char *path, const char *target, size_t len)
{
	char to[TAPROOT_RAW_PATH_MAX];

	snprintf(to, sizeof(to), "%.*s", (int)len, target);
	if ((unlink(path) < 0 && errno != ENOENT) || symlink(to, path) < 0)
		return tp_err(-errno, "replay: %s: %s", path, strerror(errno));
	return 0;
}

/*
 * The file a maps line names by dev and inode (the 4th and 5th fields),
 * if the recording opened it; *@at and *@after bracket the two fields.
 * A line that does not parse is left alone: the process model refuses it
 * as it did when recording.
 */
static const struct rp_file *rp_line_file(const struct taproot_replay *r, const char *p,
					  const char *eol, const char **at, const char **after)
{
	unsigned long long maj, min, ino;
	const char *q = p;
	char *e;

	for (int k = 0; k < 3 && q < eol; k++) {	/* start-end perms offset */
		while (q < eol && *q != ' ')
			q++;
		if (q < eol)
			q++;
	}
	*at = q;
	if (q >= eol || !isxdigit((unsigned char)*q))
		return NULL;
	errno = 0;
	maj = strtoull(q, &e, 16);
	if (e >= eol || *e != ':' || !isxdigit((unsigned char)e[1]))
		return NULL;
	min = strtoull(e + 1, &e, 16);
	if (e >= eol || *e != ' ' || e[1] < '0' || e[1] > '9')
		return NULL;
	ino = strtoull(e + 1, &e, 10);
	if (errno || e > eol || maj > 0xfff || min > 0xfffff)
		return NULL;
	*after = e;
	return rp_file_find(r, makedev(maj, min), ino);
}

/* @data, maps text, with the dev:inode of the files matched here. *@out is malloc'd. */
static int rp_rewrite_maps(const struct taproot_replay *r, const char *data, size_t len,
			   char **out, size_t *outlen)
{
	const char *p = data, *end = data + len;
	size_t lines = 1, o = 0;
	char *buf;

	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	buf = malloc(len + lines * RP_MAPS_GROWTH + 1);
	if (!buf)
		return -ENOMEM;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *at, *after;
		const struct rp_file *f;

		eol = eol ? eol + 1 : end;
		f = rp_line_file(r, p, eol, &at, &after);
		if (f) {
			memcpy(buf + o, p, (size_t)(at - p));
			o += (size_t)(at - p);
			o += (size_t)sprintf(buf + o, "%02x:%02x %" PRIu64, major(f->host_dev),
					     minor(f->host_dev), f->host_ino);
			memcpy(buf + o, after, (size_t)(eol - after));
			o += (size_t)(eol - after);
		} else {
			memcpy(buf + o, p, (size_t)(eol - p));
			o += (size_t)(eol - p);
		}
		p = eol;
	}
	*out = buf;
	*outlen = o;
	return 0;
}

/* Make TMP/PID/FILE what the recording read, or absent where its read failed. */
static int rp_materialize(const struct taproot_replay *r, const struct taproot_raw_chunk *c)
{
	static const char *const names[TAPROOT_PROC_NR_FILES] = {
		[TAPROOT_PROC_STAT] = "stat", [TAPROOT_PROC_MAPS] = "maps",
		[TAPROOT_PROC_COMM] = "comm", [TAPROOT_PROC_CGROUP] = "cgroup",
		[TAPROOT_PROC_EXE] = "exe",
	};
	char dir[sizeof(r->tmp) + 16], path[sizeof(dir) + 16], pid[16];
	const char *data = c->proc.data;
	size_t len = c->proc.len;
	char *maps = NULL;
	int err;

	snprintf(pid, sizeof(pid), "%d", c->proc.pid);
	snprintf(dir, sizeof(dir), "%s/%s", r->tmp, pid);
	if (c->proc.file == TAPROOT_PROC_DIR) {
		rp_remove_pid(r, pid);	/* it was not there: the process had exited */
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, names[c->proc.file]);
	if (c->proc.err) {
		unlink(path);
		return 0;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return tp_err(-errno, "replay: %s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/root", dir);
	if (symlink("/", path) < 0 && errno != EEXIST)
		return tp_err(-errno, "replay: %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", dir, names[c->proc.file]);
	if (c->proc.file == TAPROOT_PROC_EXE)
		return rp_write_link(path, data, len);
	if (c->proc.file == TAPROOT_PROC_MAPS) {
		err = rp_rewrite_maps(r, c->proc.data, c->proc.len, &maps, &len);
		if (err)
			return tp_err(err, NULL);
		data = maps;
	}
	err = rp_write_file(path, data, len);
	free(maps);
	if (err)
		return tp_err(err, "replay: writing %s: %s", path, strerror(-err));
	return 0;
}

/* ------------------------------------------------------------ the API */

int taproot_replay_open(const char *path, struct taproot_replay **rp)
{
	const char *tmpdir = getenv("TMPDIR");
	struct taproot_replay *r;
	int err;

	*rp = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return tp_err(-ENOMEM, NULL);
	err = taproot_raw_reader_open(path, &r->info.header, &r->rd);
	if (!err)
		err = rp_scan(r);
	if (err)
		goto fail;
	if (!tmpdir || !tmpdir[0] || strlen(tmpdir) > RP_TMP_MAX)
		tmpdir = "/tmp";
	snprintf(r->tmp, sizeof(r->tmp), "%s/taproot-replay-XXXXXX", tmpdir);
	if (!mkdtemp(r->tmp)) {
		err = tp_err(-errno, "replay: cannot make a directory %s: %s", r->tmp,
			     strerror(errno));
		r->tmp[0] = '\0';
		goto fail;
	}
	r->started = true;	/* the scan read the file */
	*rp = r;
	return 0;
fail:
	taproot_replay_close(r);
	return err;
}

void taproot_replay_close(struct taproot_replay *r)
{
	if (!r)
		return;
	rp_clear(r);
	if (r->tmp[0])
		rmdir(r->tmp);
	taproot_raw_reader_close(r->rd);
	taproot_ksyms_free(r->ksyms);
	free(r->files);
	for (size_t i = 0; i < 4; i++)
		free(r->other_paths[i]);
	free(r);
}

const struct taproot_replay_info *taproot_replay_info(const struct taproot_replay *r)
{
	return &r->info;
}

void taproot_replay_pipeline_opts(const struct taproot_replay *r,
				  struct taproot_pipeline_opts *opts,
				  struct taproot_procs_opts *procs)
{
	const struct taproot_raw_header *h = &r->info.header;

	taproot_procs_opts_default(procs);
	procs->proc_root = r->tmp;
	/* No runtime's files were captured: no k8s_* labels in a replay. */
	procs->runtime_root = r->tmp;
	procs->refresh_ms = 0;
	procs->exit_grace_ms = 0;
	taproot_pipeline_opts_default(opts);
	opts->freq_hz = h->freq_hz;
	opts->ksyms = r->ksyms;
	opts->label_tid = h->label_tid;
	opts->label_cpu = h->label_cpu;
	opts->offcpu = h->offcpu;
	opts->min_block_ns = h->min_block_ns;
	opts->hostname = h->hostname;
	opts->kernel_release = h->kernel_release;
	opts->procs = procs;
}

int taproot_replay_pass(struct taproot_replay *r, struct taproot_pipeline *pl,
			uint64_t *pipeline_ns, volatile int *stop)
{
	struct taproot_raw_chunk c;
	uint64_t t, in = 0;
	int n = 1, err = 0;

	if (r->started) {
		err = taproot_raw_rewind(r->rd);
		if (err)
			return err;
	}
	r->started = true;
	rp_clear(r);
	/* As a new reader: the pass's references resolve to its own STACK records. */
	taproot_pipeline_forget_stacks(pl);
	while (!err && (!stop || !*stop) && (n = taproot_raw_next(r->rd, &c)) > 0) {
		switch (c.type) {
		case TAPROOT_RAW_PROC:
			err = rp_materialize(r, &c);
			break;
		case TAPROOT_RAW_RECORD:
			t = tp_clock_ns(CLOCK_MONOTONIC);
			/* Its errors are counted in the pipeline's stats, as when recording. */
			taproot_pipeline_add_record(pl, c.record.rec, c.record.cpu);
			in += tp_clock_ns(CLOCK_MONOTONIC) - t;
			break;
		case TAPROOT_RAW_ROUND:
			t = tp_clock_ns(CLOCK_MONOTONIC);
			taproot_pipeline_end_round(pl);
			in += tp_clock_ns(CLOCK_MONOTONIC) - t;
			break;
		case TAPROOT_RAW_END:
			t = tp_clock_ns(CLOCK_MONOTONIC);
			taproot_pipeline_flush(pl, true);
			in += tp_clock_ns(CLOCK_MONOTONIC) - t;
			break;
		default:
			break;
		}
	}
	if (!err && n < 0)
		err = n;
	if (pipeline_ns)
		*pipeline_ns = in;
	if (!err && stop && *stop)
		err = tp_err(-EINTR, "replay: interrupted");
	return err;
}
