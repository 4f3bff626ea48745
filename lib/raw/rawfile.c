// SPDX-License-Identifier: GPL-2.0
/*
 * Raw capture files: a recording's ring records and the /proc snapshots its
 * process model read, so that `taprootctl report` can rebuild the profiles
 * later (taproot.h, "raw capture files"; docs/design.md "Raw capture files").
 *
 * The file is a gzip stream of chunks {u32 type, u32 len, payload},
 * little-endian. Everything in it is outside input to the reader: each
 * chunk's type and length are checked against the type's limit before its
 * payload is read (memory stays bounded by the largest limit), each field
 * against its range, and each record with taproot_rec_check(), so that a
 * truncated or corrupt file ends in an error naming the byte, never in a
 * read past a buffer.
 *
 * Payloads (offsets in bytes):
 *   HEADER  0 magic[8], 8 u32 version, 12 u32 abi, 16 u32 freq_hz,
 *           20 u32 ustack_bytes, 24 u32 flags (RAW_F_*), 28 u32 sched_one_in,
 *           32 u64 min_block_ns, 40 u64 start_ns, 48 kernel_release[72] (NUL
 *           padded); 120 bytes in version 1; version 2 appends 120
 *           hostname[72] (NUL padded): 192 bytes; a later one may append
 *   KSYMS   the text
 *   PROC    0 u32 pid, 4 u32 file, 8 i32 err, 12 data (none when err < 0)
 *   ELF     0 u64 dev, 8 u64 ino, 16 u32 build_id_len, 20 u32 path_len,
 *           24 build_id, then path (no NUL)
 *   RECORD  0 u32 cpu, 4 u32 zero, 8 the record (8-byte aligned in the
 *           payload, as in the ring)
 *   ROUND   empty
 *   END     0 u64 duration_ns, 8 u64 lost, 16 u64 corrupt
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <linux/taproot.h>

#include "raw/raw.h"
#include "util/util.h"

#define RAW_CHUNK_HDR		8
#define RAW_HEADER_V1_LEN	120
#define RAW_HEADER_LEN		192
#define RAW_HEADER_MAX		4096		/* room for later versions */
#define RAW_RELEASE_LEN		72
#define RAW_PROC_HDR		12
#define RAW_ELF_HDR		24
#define RAW_RECORD_HDR		8
#define RAW_END_LEN		24
#define RAW_CPU_MAX		65536
#define RAW_STAT_MAX		4095		/* the process model reads 4 KiB */
#define RAW_COMM_MAX		64

#define RAW_F_CPU		(1u << 0)
#define RAW_F_OFFCPU		(1u << 1)
#define RAW_F_LABEL_TID		(1u << 2)
#define RAW_F_LABEL_CPU		(1u << 3)
#define RAW_F_ALL		(RAW_F_CPU | RAW_F_OFFCPU | RAW_F_LABEL_TID | RAW_F_LABEL_CPU)

static const char *const raw_type_names[__TAPROOT_RAW_LAST] = {
	[TAPROOT_RAW_HEADER] = "HEADER", [TAPROOT_RAW_KSYMS] = "KSYMS",
	[TAPROOT_RAW_PROC] = "PROC", [TAPROOT_RAW_ELF] = "ELF",
	[TAPROOT_RAW_RECORD] = "RECORD", [TAPROOT_RAW_ROUND] = "ROUND",
	[TAPROOT_RAW_END] = "END",
};

/* -------------------------------------------------------- little-endian */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ------------------------------------------------------------- writer */

struct taproot_raw_writer {
	gzFile gz;
	int fd;				/* gz's, for the fsync */
	char *tmp, *path;
	int err;			/* sticky */
	char msg[512];			/* its message: later errors elsewhere replace
					 * the library's last one */
};

/* Make @err the writer's sticky error; returns it. */
static int raw_fail(struct taproot_raw_writer *w, int err)
{
	w->err = err;
	snprintf(w->msg, sizeof(w->msg), "%s", taproot_errmsg(err));
	return err;
}

static int raw_put(struct taproot_raw_writer *w, const void *buf, size_t len)
{
	int errnum;

	if (w->err)
		return w->err;
	if (len && gzwrite(w->gz, buf, (unsigned int)len) != (int)len) {
		const char *msg = gzerror(w->gz, &errnum);

		raw_fail(w, tp_err(errnum == Z_ERRNO && errno ? -errno : -EIO,
				   "raw: writing %s: %s", w->tmp,
				   errnum == Z_ERRNO ? strerror(errno) : msg));
	}
	return w->err;
}

/* A chunk of @type whose payload is @a (@alen bytes) then @b (@blen). */
static int raw_chunk(struct taproot_raw_writer *w, uint32_t type, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	uint8_t hdr[RAW_CHUNK_HDR];

	if (w->err)
		return w->err;
	put32(hdr, type);
	put32(hdr + 4, (uint32_t)(alen + blen));
	raw_put(w, hdr, sizeof(hdr));
	raw_put(w, a, alen);
	return raw_put(w, b, blen);
}

/* Refuse (stickily) a payload the reader would refuse. */
static int raw_refuse(struct taproot_raw_writer *w, const char *what, size_t len, size_t max)
{
	if (!w->err)
		raw_fail(w, tp_err(-EINVAL, "raw: %s of %zu bytes, the format's limit is %zu",
				   what, len, max));
	return w->err;
}

int taproot_raw_writer_new(const char *path, const struct taproot_raw_header *h,
			   struct taproot_raw_writer **wp)
{
	struct taproot_raw_writer *w;
	uint8_t p[RAW_HEADER_LEN] = { 0 };
	uint32_t flags = 0;
	int err;

	*wp = NULL;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path)) || asprintf(&w->tmp, "%s.tmp.XXXXXX", path) < 0) {
		if (w)
			free(w->path);
		free(w);
		return tp_err(-ENOMEM, NULL);
	}
	/* mkostemp creates it 0600: the file holds every process's stacks. */
	w->fd = mkostemp(w->tmp, O_CLOEXEC);
	if (w->fd < 0) {
		err = tp_err(-errno, "raw: cannot create %s: %s", w->tmp, strerror(errno));
		goto fail;
	}
	/* Level 1: the recorder writes this while it profiles; size matters less. */
	w->gz = gzdopen(w->fd, "wb1");
	if (!w->gz) {
		err = tp_err(-ENOMEM, "raw: %s: cannot start compressing", w->tmp);
		goto fail;
	}
	memcpy(p, TAPROOT_RAW_MAGIC, 8);
	put32(p + 8, TAPROOT_RAW_VERSION);
	put32(p + 12, h->abi_version);
	put32(p + 16, h->freq_hz);
	put32(p + 20, h->ustack_bytes);
	flags |= h->cpu ? RAW_F_CPU : 0;
	flags |= h->offcpu ? RAW_F_OFFCPU : 0;
	flags |= h->label_tid ? RAW_F_LABEL_TID : 0;
	flags |= h->label_cpu ? RAW_F_LABEL_CPU : 0;
	put32(p + 24, flags);
	put32(p + 28, h->sched_one_in);
	put64(p + 32, h->min_block_ns);
	put64(p + 40, h->start_ns);
	strncpy((char *)p + 48, h->kernel_release, RAW_RELEASE_LEN - 1);
	strncpy((char *)p + 120, h->hostname, RAW_RELEASE_LEN - 1);
	err = raw_chunk(w, TAPROOT_RAW_HEADER, p, sizeof(p), NULL, 0);
	if (err)
		goto fail;
	*wp = w;
	return 0;
fail:
	if (w->gz)
		gzclose(w->gz);
	else if (w->fd >= 0)
		close(w->fd);
	if (w->fd >= 0)
		unlink(w->tmp);
	free(w->tmp);
	free(w->path);
	free(w);
	return err;
}

int taproot_raw_write_ksyms(struct taproot_raw_writer *w, const char *text, size_t len)
{
	if (len > TAPROOT_RAW_KSYMS_MAX)
		return raw_refuse(w, "kallsyms text", len, TAPROOT_RAW_KSYMS_MAX);
	return raw_chunk(w, TAPROOT_RAW_KSYMS, text, len, NULL, 0);
}

static size_t raw_proc_max(enum taproot_proc_file file)
{
	switch (file) {
	case TAPROOT_PROC_STAT:
		return RAW_STAT_MAX;
	case TAPROOT_PROC_MAPS:
		return TAPROOT_RAW_PROC_MAX;
	case TAPROOT_PROC_COMM:
		return RAW_COMM_MAX;
	case TAPROOT_PROC_CGROUP:
		return TAPROOT_CGROUP_TEXT_MAX - 1;
	case TAPROOT_PROC_EXE:
		return TAPROOT_RAW_PATH_MAX - 1;
	default:
		return 0;
	}
}

int taproot_raw_write_proc(struct taproot_raw_writer *w, int pid, enum taproot_proc_file file,
			   int err, const char *data, size_t len)
{
	uint8_t p[RAW_PROC_HDR];

	if (pid <= 0 || (unsigned int)file >= TAPROOT_PROC_NR_FILES || err > 0 || err < -4095)
		return raw_refuse(w, "PROC chunk with a field out of range", 0, 0);
	if (err < 0)
		len = 0;
	if (len > raw_proc_max(file))
		return raw_refuse(w, "/proc file", len, raw_proc_max(file));
	put32(p, (uint32_t)pid);
	put32(p + 4, (uint32_t)file);
	put32(p + 8, (uint32_t)err);
	return raw_chunk(w, TAPROOT_RAW_PROC, p, sizeof(p), data, len);
}

int taproot_raw_write_elf(struct taproot_raw_writer *w, uint64_t dev, uint64_t ino,
			  const char *path, const uint8_t *build_id, size_t build_id_len)
{
	size_t plen = strlen(path);
	uint8_t p[RAW_ELF_HDR + TAPROOT_RAW_BUILD_ID_MAX];

	if (build_id_len > TAPROOT_RAW_BUILD_ID_MAX)
		return raw_refuse(w, "build ID", build_id_len, TAPROOT_RAW_BUILD_ID_MAX);
	if (!plen || plen >= TAPROOT_RAW_PATH_MAX)
		return raw_refuse(w, "path", plen, TAPROOT_RAW_PATH_MAX - 1);
	put64(p, dev);
	put64(p + 8, ino);
	put32(p + 16, (uint32_t)build_id_len);
	put32(p + 20, (uint32_t)plen);
	if (build_id_len)
		memcpy(p + RAW_ELF_HDR, build_id, build_id_len);
	return raw_chunk(w, TAPROOT_RAW_ELF, p, RAW_ELF_HDR + build_id_len, path, plen);
}

int taproot_raw_write_record(struct taproot_raw_writer *w, unsigned int cpu,
			     const struct taproot_rec_header *rec)
{
	uint8_t p[RAW_RECORD_HDR] = { 0 };

	if (rec->size > TAPROOT_RAW_RECORD_MAX || cpu >= RAW_CPU_MAX)
		return raw_refuse(w, "record", rec->size, TAPROOT_RAW_RECORD_MAX);
	put32(p, cpu);
	return raw_chunk(w, TAPROOT_RAW_RECORD, p, sizeof(p), rec, rec->size);
}

int taproot_raw_write_round(struct taproot_raw_writer *w)
{
	return raw_chunk(w, TAPROOT_RAW_ROUND, NULL, 0, NULL, 0);
}

int taproot_raw_writer_finish(struct taproot_raw_writer *w, const struct taproot_raw_end *end)
{
	uint8_t p[RAW_END_LEN];
	int err, zerr;

	if (!w)
		return 0;
	if (end) {
		put64(p, end->duration_ns);
		put64(p + 8, end->lost);
		put64(p + 16, end->corrupt);
		raw_chunk(w, TAPROOT_RAW_END, p, sizeof(p), NULL, 0);
		/* The gzip trailer, then the bytes on disk, before the rename. */
		if (!w->err && gzflush(w->gz, Z_FINISH) != Z_OK)
			raw_fail(w, tp_err(-EIO, "raw: writing %s: %s", w->tmp,
					   gzerror(w->gz, &zerr)));
		if (!w->err && fsync(w->fd) < 0)
			raw_fail(w, tp_err(-errno, "raw: fsync %s: %s", w->tmp,
					   strerror(errno)));
	}
	zerr = gzclose(w->gz);
	if (end && !w->err && zerr != Z_OK)
		raw_fail(w, tp_err(-EIO, "raw: closing %s failed", w->tmp));
	if (end && !w->err && rename(w->tmp, w->path) < 0)
		raw_fail(w, tp_err(-errno, "raw: cannot rename to %s: %s", w->path,
				   strerror(errno)));
	if (!end || w->err)
		unlink(w->tmp);
	err = end ? w->err : 0;
	if (err)
		tp_err(err, "%s", w->msg);
	free(w->tmp);
	free(w->path);
	free(w);
	return err;
}

/* ------------------------------------------------------------- reader */

struct taproot_raw_reader {
	gzFile gz;
	char *path;
	uint64_t off;			/* uncompressed bytes consumed */
	z_off_t body;			/* where the chunk after the header starts */
	uint64_t body_off;
	uint64_t *buf;			/* the payload, 8-byte aligned, NUL after it */
	size_t cap;
	int state;			/* 0 reading, 1 after END, < 0 the error */
	uint32_t proc_files;		/* PROC files of the header's version */
};

static int raw_corrupt(struct taproot_raw_reader *r, uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int raw_corrupt(struct taproot_raw_reader *r, uint64_t at, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	r->state = tp_err(-TAPROOT_ECORRUPT, "%s: corrupt raw capture at byte %llu "
			  "(uncompressed): %s", r->path, (unsigned long long)at, why);
	return r->state;
}

/*
 * Read exactly @len bytes. Returns 0, 1 when the stream ended before any
 * of them (at a chunk boundary the caller decides whether that is fine),
 * or an error: a short read is a truncated file.
 */
static int raw_get(struct taproot_raw_reader *r, void *buf, size_t len, const char *what)
{
	size_t got = 0;
	int errnum;

	while (got < len) {
		int n = gzread(r->gz, (char *)buf + got, (unsigned int)(len - got));

		if (n < 0) {
			const char *msg = gzerror(r->gz, &errnum);

			if (errnum == Z_ERRNO)
				return r->state = tp_err(-errno, "%s: %s", r->path, strerror(errno));
			return raw_corrupt(r, r->off + got, "%s (zlib)", msg);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == len) {
		r->off += len;
		return 0;
	}
	if (!got)
		return 1;
	return raw_corrupt(r, r->off + got, "the file ends inside %s (truncated)", what);
}

/* Make room for a payload of @len bytes plus a NUL. */
static int raw_room(struct taproot_raw_reader *r, size_t len)
{
	size_t cap = (len + 1 + 7) & ~(size_t)7;
	uint64_t *b;

	if (cap <= r->cap)
		return 0;
	b = realloc(r->buf, cap);
	if (!b)
		return r->state = tp_err(-ENOMEM, NULL);
	r->buf = b;
	r->cap = cap;
	return 0;
}

/* The largest payload a chunk of @type may have, 0 for an unknown type. */
static size_t raw_type_max(uint32_t type)
{
	switch (type) {
	case TAPROOT_RAW_HEADER:
		return RAW_HEADER_MAX;
	case TAPROOT_RAW_KSYMS:
		return TAPROOT_RAW_KSYMS_MAX;
	case TAPROOT_RAW_PROC:
		return RAW_PROC_HDR + TAPROOT_RAW_PROC_MAX;
	case TAPROOT_RAW_ELF:
		return RAW_ELF_HDR + TAPROOT_RAW_BUILD_ID_MAX + TAPROOT_RAW_PATH_MAX;
	case TAPROOT_RAW_RECORD:
		return RAW_RECORD_HDR + TAPROOT_RAW_RECORD_MAX;
	case TAPROOT_RAW_ROUND:
		return 0;
	case TAPROOT_RAW_END:
		return RAW_END_LEN;
	default:
		return SIZE_MAX;
	}
}

/*
 * Read the next chunk's type and payload into r->buf. Returns 0, 1 at a
 * clean end of the stream, or an error.
 */
static int raw_read_chunk(struct taproot_raw_reader *r, uint32_t *type, size_t *len)
{
	uint8_t hdr[RAW_CHUNK_HDR];
	uint64_t at = r->off;
	size_t max;
	int err;

	err = raw_get(r, hdr, sizeof(hdr), "a chunk header");
	if (err)
		return err;
	*type = get32(hdr);
	*len = get32(hdr + 4);
	if (!at && *type != TAPROOT_RAW_HEADER)
		return raw_corrupt(r, at, "not a taproot raw capture (no magic)");
	max = raw_type_max(*type);
	if (max == SIZE_MAX)
		return raw_corrupt(r, at, "unknown chunk type %u", *type);
	if (*len > max)
		return raw_corrupt(r, at, "%s chunk of %zu bytes, more than its limit %zu",
				   raw_type_names[*type], *len, max);
	err = raw_room(r, *len);
	if (err)
		return err;
	err = raw_get(r, r->buf, *len, "a chunk's payload");
	if (err == 1)
		return raw_corrupt(r, r->off, "the file ends inside a %s chunk (truncated)",
				   raw_type_names[*type]);
	if (err)
		return err;
	((char *)r->buf)[*len] = '\0';
	return 0;
}

static int raw_parse_header(struct taproot_raw_reader *r, uint64_t at, size_t len,
			    struct taproot_raw_header *h)
{
	const uint8_t *p = (const uint8_t *)r->buf;
	uint32_t flags;

	memset(h, 0, sizeof(*h));
	if (len < RAW_HEADER_V1_LEN || memcmp(p, TAPROOT_RAW_MAGIC, 8))
		return raw_corrupt(r, at, "not a taproot raw capture (no magic)");
	h->version = get32(p + 8);
	if (h->version < 1 || h->version > TAPROOT_RAW_VERSION)
		return raw_corrupt(r, at, "format version %u, this taproot reads versions 1 to %u",
				   h->version, TAPROOT_RAW_VERSION);
	if (h->version >= 2 && len < RAW_HEADER_LEN)
		return raw_corrupt(r, at, "header of %zu bytes, version 2 has %d", len,
				   RAW_HEADER_LEN);
	if (h->version >= 2 && !memchr(p + 120, '\0', RAW_RELEASE_LEN))
		return raw_corrupt(r, at + 120, "header: hostname not terminated");
	if (h->version >= 2)
		snprintf(h->hostname, sizeof(h->hostname), "%s", (const char *)p + 120);
	r->proc_files = h->version == 1 ? TAPROOT_PROC_CGROUP : TAPROOT_PROC_NR_FILES;
	h->abi_version = get32(p + 12);
	h->freq_hz = get32(p + 16);
	h->ustack_bytes = get32(p + 20);
	flags = get32(p + 24);
	h->sched_one_in = get32(p + 28);
	h->min_block_ns = get64(p + 32);
	h->start_ns = get64(p + 40);
	if (!memchr(p + 48, '\0', RAW_RELEASE_LEN))
		return raw_corrupt(r, at + 48, "header: kernel release not terminated");
	snprintf(h->kernel_release, sizeof(h->kernel_release), "%s", (const char *)p + 48);
	if (flags & ~RAW_F_ALL)
		return raw_corrupt(r, at + 24, "header: unknown flags 0x%x", flags & ~RAW_F_ALL);
	h->cpu = flags & RAW_F_CPU;
	h->offcpu = flags & RAW_F_OFFCPU;
	h->label_tid = flags & RAW_F_LABEL_TID;
	h->label_cpu = flags & RAW_F_LABEL_CPU;
	if (!h->freq_hz || h->freq_hz > TAPROOT_FREQ_MAX)
		return raw_corrupt(r, at + 16, "header: frequency %u Hz out of range", h->freq_hz);
	if (h->ustack_bytes > TAPROOT_USTACK_MAX)
		return raw_corrupt(r, at + 20, "header: ustack %u bytes out of range",
				   h->ustack_bytes);
	if (!h->cpu && !h->offcpu)
		return raw_corrupt(r, at + 24, "header: neither cpu nor offcpu events");
	if (!h->sched_one_in || h->sched_one_in > TAPROOT_SCHED_ONE_IN_MAX)
		return raw_corrupt(r, at + 28, "header: sched_one_in %u out of range",
				   h->sched_one_in);
	return 0;
}

int taproot_raw_reader_open(const char *path, struct taproot_raw_header *h,
			    struct taproot_raw_reader **rp)
{
	struct taproot_raw_reader *r;
	uint32_t type;
	size_t len;
	int fd, err;

	*rp = NULL;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		return tp_err(-ENOMEM, NULL);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = tp_err(-errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	r->gz = gzdopen(fd, "rb");
	if (!r->gz) {
		close(fd);
		err = tp_err(-ENOMEM, NULL);
		goto fail;
	}
	err = raw_read_chunk(r, &type, &len);
	if (err == 1)
		err = raw_corrupt(r, 0, "empty file");
	if (!err && type != TAPROOT_RAW_HEADER)
		err = raw_corrupt(r, 0, "not a taproot raw capture (no magic)");
	if (!err)
		err = raw_parse_header(r, RAW_CHUNK_HDR, len, h);
	if (err)
		goto fail;
	r->body = gztell(r->gz);
	r->body_off = r->off;
	*rp = r;
	return 0;
fail:
	taproot_raw_reader_close(r);
	return err;
}

void taproot_raw_reader_close(struct taproot_raw_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->buf);
	free(r->path);
	free(r);
}

int taproot_raw_rewind(struct taproot_raw_reader *r)
{
	if (gzseek(r->gz, r->body, SEEK_SET) != r->body)
		return r->state = tp_err(-EIO, "%s: cannot go back to its start", r->path);
	r->off = r->body_off;
	r->state = 0;
	return 0;
}

static int raw_parse_proc(struct taproot_raw_reader *r, uint64_t at, size_t len,
			  struct taproot_raw_chunk *c)
{
	const uint8_t *p = (const uint8_t *)r->buf;
	uint32_t pid, file;
	int32_t err;

	if (len < RAW_PROC_HDR)
		return raw_corrupt(r, at, "PROC chunk of %zu bytes", len);
	pid = get32(p);
	file = get32(p + 4);
	err = (int32_t)get32(p + 8);
	if (!pid || pid > INT32_MAX)
		return raw_corrupt(r, at, "PROC chunk: pid %u", pid);
	if (file >= r->proc_files)
		return raw_corrupt(r, at + 4, "PROC chunk: unknown file %u", file);
	if (err > 0 || err < -4095 || (err < 0 && len != RAW_PROC_HDR))
		return raw_corrupt(r, at + 8, "PROC chunk: error %d with %zu bytes of data", err,
				   len - RAW_PROC_HDR);
	if (len - RAW_PROC_HDR > raw_proc_max(file))
		return raw_corrupt(r, at, "PROC chunk: %zu bytes, more than %zu for that file",
				   len - RAW_PROC_HDR, raw_proc_max(file));
	c->proc.pid = (int)pid;
	c->proc.file = (enum taproot_proc_file)file;
	c->proc.err = err;
	c->proc.data = (const char *)p + RAW_PROC_HDR;
	c->proc.len = len - RAW_PROC_HDR;
	return 1;
}

static int raw_parse_elf(struct taproot_raw_reader *r, uint64_t at, size_t len,
			 struct taproot_raw_chunk *c)
{
	uint8_t *p = (uint8_t *)r->buf;
	uint32_t blen, plen;

	if (len < RAW_ELF_HDR)
		return raw_corrupt(r, at, "ELF chunk of %zu bytes", len);
	blen = get32(p + 16);
	plen = get32(p + 20);
	if (blen > TAPROOT_RAW_BUILD_ID_MAX || !plen || plen >= TAPROOT_RAW_PATH_MAX ||
	    len != RAW_ELF_HDR + (size_t)blen + plen)
		return raw_corrupt(r, at, "ELF chunk: build ID of %u and path of %u bytes in %zu",
				   blen, plen, len);
	if (memchr(p + RAW_ELF_HDR + blen, '\0', plen))
		return raw_corrupt(r, at, "ELF chunk: NUL inside the path");
	c->elf.dev = get64(p);
	c->elf.ino = get64(p + 8);
	c->elf.build_id = blen ? p + RAW_ELF_HDR : NULL;
	c->elf.build_id_len = blen;
	c->elf.path = (const char *)p + RAW_ELF_HDR + blen;	/* the NUL after the payload */
	return 1;
}

static int raw_parse_record(struct taproot_raw_reader *r, uint64_t at, size_t len,
			    struct taproot_raw_chunk *c)
{
	const uint8_t *p = (const uint8_t *)r->buf;
	const struct taproot_rec_header *rec = (const void *)(p + RAW_RECORD_HDR);
	const char *why = NULL;
	uint32_t cpu;

	if (len < RAW_RECORD_HDR + sizeof(*rec))
		return raw_corrupt(r, at, "RECORD chunk of %zu bytes", len);
	cpu = get32(p);
	if (cpu >= RAW_CPU_MAX || get32(p + 4))
		return raw_corrupt(r, at, "RECORD chunk: cpu %u", cpu);
	if (taproot_rec_check(rec, len - RAW_RECORD_HDR, &why))
		return raw_corrupt(r, at + RAW_RECORD_HDR, "record: %s", why);
	if (rec->size != len - RAW_RECORD_HDR)
		return raw_corrupt(r, at + RAW_RECORD_HDR, "record of %u bytes in a chunk of %zu",
				   rec->size, len - RAW_RECORD_HDR);
	c->record.cpu = cpu;
	c->record.rec = rec;
	return 1;
}

int taproot_raw_next(struct taproot_raw_reader *r, struct taproot_raw_chunk *c)
{
	const uint8_t *p;
	uint32_t type;
	uint64_t at;
	size_t len;
	char extra;
	int err, errnum;

	if (r->state)
		return r->state > 0 ? 0 : r->state;
	memset(c, 0, sizeof(*c));
	err = raw_read_chunk(r, &type, &len);
	if (err == 1)
		return raw_corrupt(r, r->off, "the file ends without its END chunk (truncated: "
				   "the recording was cut short or the copy is incomplete)");
	if (err)
		return err;
	at = r->off - len;		/* the payload's first byte */
	p = (const uint8_t *)r->buf;
	c->type = (enum taproot_raw_type)type;
	switch (type) {
	case TAPROOT_RAW_HEADER:
		return raw_corrupt(r, at, "a second HEADER chunk");
	case TAPROOT_RAW_KSYMS:
		c->ksyms.text = (const char *)p;
		c->ksyms.len = len;
		return 1;
	case TAPROOT_RAW_PROC:
		return raw_parse_proc(r, at, len, c);
	case TAPROOT_RAW_ELF:
		return raw_parse_elf(r, at, len, c);
	case TAPROOT_RAW_RECORD:
		return raw_parse_record(r, at, len, c);
	case TAPROOT_RAW_ROUND:
		return 1;
	case TAPROOT_RAW_END:
		if (len != RAW_END_LEN)
			return raw_corrupt(r, at, "END chunk of %zu bytes", len);
		c->end.duration_ns = get64(p);
		c->end.lost = get64(p + 8);
		c->end.corrupt = get64(p + 16);
		err = raw_get(r, &extra, 1, "");
		if (err == 0)
			return raw_corrupt(r, r->off - 1, "data after the END chunk");
		if (err < 0)
			return err;
		/* zlib reads a stream without its trailer (CRC, length) as ended. */
		gzerror(r->gz, &errnum);
		if (errnum == Z_BUF_ERROR)
			return raw_corrupt(r, r->off, "the gzip stream ends before its trailer "
					   "(truncated)");
		r->state = 1;
		return 1;
	}
	return raw_corrupt(r, at, "unknown chunk type %u", type);
}
