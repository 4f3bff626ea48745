// SPDX-License-Identifier: GPL-2.0
/*
 * Raw capture files (lib/raw/rawfile.c) and their replay (lib/raw/rawreplay.c):
 *
 *  - rawfile_round_trip: every chunk type written is read back as written;
 *  - rawfile_truncated: the stream cut at every byte (chunk boundaries and
 *    inside chunks), and the gzip file cut at every byte, fail cleanly
 *    with -TAPROOT_ECORRUPT (run under ASan too: never a read past a
 *    buffer);
 *  - rawfile_corrupt: types, lengths and fields out of range are refused,
 *    each with its message; then every byte flipped in turn reads as
 *    either a valid file or a clean error;
 *  - rawfile_replay_self: SAMPLE records of this process's own stack
 *    (captured inside a chain of noinline functions, as test_pipeline
 *    does), fed to a pipeline that records the raw file as taprootctl
 *    record --raw does, then replayed (twice, as report --repeat 2): the
 *    profiles, read with the real pprof tool, hold the same traces;
 *  - rawfile_replay_by_build_id: the same file as a QEMU guest would have
 *    written it (other inode numbers) replays the same; with other build
 *    IDs (files rebuilt since) the files are counted and not read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>

#include <cmocka.h>
#include <zlib.h>

#include <linux/taproot.h>

#include "taproot.h"
#include "ownstack.h"
#include "runcmd.h"

/* ------------------------------------------------------ file helpers */

static char tmpdir[] = "/tmp/test-rawfile-XXXXXX";

static void path_in_tmp(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* The whole of @path, decompressed (gzread) or not. */
static uint8_t *slurp(const char *path, bool gunzip, size_t *len)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	int n;

	*len = 0;
	if (gunzip) {
		gzFile g = gzopen(path, "rb");

		assert_non_null(g);
		do {
			if (*len == cap) {
				cap = cap ? cap * 2 : 4096;
				buf = realloc(buf, cap);
				assert_non_null(buf);
			}
			n = gzread(g, buf + *len, (unsigned int)(cap - *len));
			assert_true(n >= 0);
			*len += (size_t)n;
		} while (n > 0);
		gzclose(g);
	} else {
		int fd = open(path, O_RDONLY);

		assert_true(fd >= 0);
		do {
			if (*len == cap) {
				cap = cap ? cap * 2 : 4096;
				buf = realloc(buf, cap);
				assert_non_null(buf);
			}
			n = (int)read(fd, buf + *len, cap - *len);
			assert_true(n >= 0);
			*len += (size_t)n;
		} while (n > 0);
		close(fd);
	}
	return buf;
}

static void spill(const char *path, const void *data, size_t len, bool gzip)
{
	if (gzip) {
		gzFile g = gzopen(path, "wb");

		assert_non_null(g);
		if (len)
			assert_int_equal(gzwrite(g, data, (unsigned int)len), (int)len);
		assert_int_equal(gzclose(g), Z_OK);
	} else {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, data, len), (ssize_t)len);
		close(fd);
	}
}

/*
 * Read @path to its end: 0 when it is whole and valid, else the first
 * error (its message in *@msg when not NULL). Counts the chunks read.
 */
static int read_all(const char *path, size_t *chunks, const char **msg)
{
	struct taproot_raw_reader *r;
	struct taproot_raw_header h;
	struct taproot_raw_chunk c;
	int n;

	if (chunks)
		*chunks = 0;
	n = taproot_raw_reader_open(path, &h, &r);
	if (n < 0) {
		if (msg)
			*msg = taproot_errmsg(n);
		return n;
	}
	while ((n = taproot_raw_next(r, &c)) > 0)
		if (chunks)
			(*chunks)++;
	/* Once ended or failed, it stays so. */
	assert_int_equal(taproot_raw_next(r, &c), n);
	if (n < 0 && msg)
		*msg = taproot_errmsg(n);
	taproot_raw_reader_close(r);
	return n;
}

/* ------------------------------------------------------ a sample file */

static const char ksyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T fake_kernel_leaf\n"
	"ffffffff81002000 T fake_kernel_caller\n"
	"ffffffff81003000 T fake_kernel_end\n";
static const char stat_text[] = "4242 (tapwork) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 "
				"0 1 0 12345 1000 100 18446744073709551615\n";
static const char maps_text[] =
	"55d0c0000000-55d0c0001000 r-xp 00001000 08:01 1234 /usr/bin/tapwork\n";
static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3 };

static const struct taproot_raw_header sample_header = {
	.abi_version = TAPROOT_ABI_VERSION, .kernel_release = "6.1.0-test",
	.hostname = "test-host", .freq_hz = 99,
	.ustack_bytes = 8192, .cpu = true, .offcpu = true, .sched_one_in = 4,
	.min_block_ns = 5000, .label_tid = true, .start_ns = 1700000000000000000ull,
};

/* Chunk start offsets in the uncompressed stream, filled by write_sample(). */
static size_t boundaries[16], nr_boundaries;

static void write_sample(const char *path)
{
	struct taproot_rec_lost lost = { .hdr = { .size = sizeof(lost), .type = TAPROOT_REC_LOST } };
	struct taproot_raw_end end = { .duration_ns = 2500000000ull, .lost = 7, .corrupt = 1 };
	struct taproot_raw_writer *w;
	size_t len = 0;
	uint8_t *raw;

	lost.lost[TAPROOT_LOST_FULL] = 3;
	assert_int_equal(taproot_raw_writer_new(path, &sample_header, &w), 0);
	assert_int_equal(taproot_raw_write_ksyms(w, ksyms_text, strlen(ksyms_text)), 0);
	assert_int_equal(taproot_raw_write_proc(w, 4242, TAPROOT_PROC_STAT, 0, stat_text,
						strlen(stat_text)), 0);
	assert_int_equal(taproot_raw_write_proc(w, 4242, TAPROOT_PROC_MAPS, 0, maps_text,
						strlen(maps_text)), 0);
	assert_int_equal(taproot_raw_write_proc(w, 4243, TAPROOT_PROC_DIR, -ENOENT, NULL, 0), 0);
	assert_int_equal(taproot_raw_write_elf(w, (8ull << 8) | 1, 1234, "/usr/bin/tapwork",
					       build_id, sizeof(build_id)), 0);
	assert_int_equal(taproot_raw_write_record(w, 3, &lost.hdr), 0);
	assert_int_equal(taproot_raw_write_round(w), 0);
	/* Not yet renamed: the final path appears whole or not at all. */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(taproot_raw_writer_finish(w, &end), 0);

	/* The chunk boundaries, from the lengths in the stream itself. */
	raw = slurp(path, true, &len);
	nr_boundaries = 0;
	for (size_t off = 0; off + 8 <= len; ) {
		uint32_t clen = (uint32_t)raw[off + 4] | (uint32_t)raw[off + 5] << 8 |
				(uint32_t)raw[off + 6] << 16 | (uint32_t)raw[off + 7] << 24;

		assert_true(nr_boundaries < 16);
		boundaries[nr_boundaries++] = off;
		off += 8 + clen;
	}
	assert_int_equal(nr_boundaries, 9);
	free(raw);
}

static void test_round_trip(void **state)
{
	struct taproot_raw_reader *r;
	struct taproot_raw_header h;
	struct taproot_raw_chunk c;
	char path[128];
	struct stat st;

	path_in_tmp(path, sizeof(path), "round.raw");
	write_sample(path);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	assert_int_equal(taproot_raw_reader_open(path, &h, &r), 0);
	assert_int_equal(h.version, TAPROOT_RAW_VERSION);
	assert_int_equal(h.abi_version, TAPROOT_ABI_VERSION);
	assert_string_equal(h.kernel_release, "6.1.0-test");
	assert_string_equal(h.hostname, "test-host");
	assert_int_equal(h.freq_hz, 99);
	assert_int_equal(h.ustack_bytes, 8192);
	assert_true(h.cpu && h.offcpu && h.label_tid && !h.label_cpu);
	assert_int_equal(h.sched_one_in, 4);
	assert_int_equal(h.min_block_ns, 5000);
	assert_true(h.start_ns == sample_header.start_ns);

	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.type, TAPROOT_RAW_KSYMS);
		assert_int_equal(c.ksyms.len, strlen(ksyms_text));
		assert_memory_equal(c.ksyms.text, ksyms_text, c.ksyms.len);

		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.type, TAPROOT_RAW_PROC);
		assert_int_equal(c.proc.pid, 4242);
		assert_int_equal(c.proc.file, TAPROOT_PROC_STAT);
		assert_int_equal(c.proc.err, 0);
		assert_string_equal(c.proc.data, stat_text);

		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.proc.file, TAPROOT_PROC_MAPS);
		assert_string_equal(c.proc.data, maps_text);

		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.type, TAPROOT_RAW_PROC);
		assert_int_equal(c.proc.pid, 4243);
		assert_int_equal(c.proc.file, TAPROOT_PROC_DIR);
		assert_int_equal(c.proc.err, -ENOENT);
		assert_int_equal(c.proc.len, 0);

		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.type, TAPROOT_RAW_ELF);
		assert_true(c.elf.dev == ((8ull << 8) | 1));
		assert_true(c.elf.ino == 1234);
		assert_string_equal(c.elf.path, "/usr/bin/tapwork");
		assert_int_equal(c.elf.build_id_len, sizeof(build_id));
		assert_memory_equal(c.elf.build_id, build_id, sizeof(build_id));

		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.type, TAPROOT_RAW_RECORD);
		assert_int_equal(c.record.cpu, 3);
		assert_int_equal(c.record.rec->type, TAPROOT_REC_LOST);
		assert_int_equal(((uintptr_t)c.record.rec) % 8, 0);
		assert_true(((const struct taproot_rec_lost *)c.record.rec)->lost[TAPROOT_LOST_FULL] == 3);

		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.type, TAPROOT_RAW_ROUND);

		assert_int_equal(taproot_raw_next(r, &c), 1);
		assert_int_equal(c.type, TAPROOT_RAW_END);
		assert_true(c.end.duration_ns == 2500000000ull);
		assert_true(c.end.lost == 7 && c.end.corrupt == 1);

		assert_int_equal(taproot_raw_next(r, &c), 0);
		assert_int_equal(taproot_raw_next(r, &c), 0);
		/* --repeat: the same chunks again. */
		assert_int_equal(taproot_raw_rewind(r), 0);
	}
	taproot_raw_reader_close(r);

	/* A file abandoned (a session that never started) leaves nothing. */
	{
		struct taproot_raw_writer *w;
		char gone[128];

		path_in_tmp(gone, sizeof(gone), "abandoned.raw");
		assert_int_equal(taproot_raw_writer_new(gone, &sample_header, &w), 0);
		assert_int_equal(taproot_raw_writer_finish(w, NULL), 0);
		assert_int_equal(access(gone, F_OK), -1);
	}
	unlink(path);
}

static void test_truncated(void **state)
{
	char path[128], cut[128];
	const char *msg = NULL;
	size_t len, zlen, chunks, b = 0;
	uint8_t *raw, *z;

	path_in_tmp(path, sizeof(path), "whole.raw");
	path_in_tmp(cut, sizeof(cut), "cut.raw");
	write_sample(path);
	assert_int_equal(read_all(path, &chunks, NULL), 0);
	assert_int_equal(chunks, 8);
	raw = slurp(path, true, &len);
	z = slurp(path, false, &zlen);

	/* The stream, cut at every byte, compressed properly. */
	for (size_t n = 0; n < len; n++) {
		bool boundary = b < nr_boundaries && boundaries[b] == n;

		spill(cut, raw, n, true);
		assert_int_equal(read_all(cut, NULL, &msg), -TAPROOT_ECORRUPT);
		if (boundary && n > boundaries[1] - 1)
			assert_non_null(strstr(msg, "without its END"));
		else if (n > 0 && !boundary)
			assert_non_null(strstr(msg, "truncated"));
		b += boundary;
	}
	/* The gzip file cut at every byte: the data, or its trailer, is missing. */
	for (size_t n = 0; n < zlen; n++) {
		spill(cut, z, n, false);
		assert_true(read_all(cut, NULL, &msg) < 0);
	}
	print_message("  last: %s\n", msg);
	free(raw);
	free(z);
	unlink(cut);
	unlink(path);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The sample stream with the u32 at @off set to @v must fail with a message holding @want. */
static void expect_refused(const uint8_t *raw, size_t len, size_t off, uint32_t v,
			   const char *want)
{
	uint8_t *bad = malloc(len);
	const char *msg = NULL;
	char cut[128];

	assert_non_null(bad);
	memcpy(bad, raw, len);
	put32(bad + off, v);
	path_in_tmp(cut, sizeof(cut), "bad.raw");
	spill(cut, bad, len, true);
	if (read_all(cut, NULL, &msg) != -TAPROOT_ECORRUPT)
		fail_msg("offset %zu = %u: not refused (%s)", off, v, msg ? msg : "read whole");
	if (!strstr(msg, want))
		fail_msg("offset %zu = %u: '%s' does not say '%s'", off, v, msg, want);
	free(bad);
	unlink(cut);
}

static void test_corrupt(void **state)
{
	enum { KSYMS = 1, STAT, MAPS, DIRC, ELF, REC, ROUND, END };
	char path[128], cut[128];
	size_t len;
	uint8_t *raw, *bad;
	const char *msg = NULL;
	int valid = 0;

	path_in_tmp(path, sizeof(path), "whole.raw");
	path_in_tmp(cut, sizeof(cut), "bad.raw");
	write_sample(path);
	raw = slurp(path, true, &len);
#define AT(chunk, off) (boundaries[chunk] + (off))
	expect_refused(raw, len, AT(0, 8), 0x57415250, "no magic");		/* magic */
	expect_refused(raw, len, AT(0, 16), 3, "format version 3");
	expect_refused(raw, len, AT(0, 16), 0, "format version 0");
	/* Version 1 is read, without the PROC files version 2 added. */
	{
		bad = malloc(len);
		assert_non_null(bad);
		memcpy(bad, raw, len);
		put32(bad + AT(0, 16), 1);
		spill(cut, bad, len, true);
		assert_int_equal(read_all(cut, NULL, &msg), 0);
		put32(bad + AT(STAT, 12), TAPROOT_PROC_CGROUP);
		spill(cut, bad, len, true);
		assert_int_equal(read_all(cut, NULL, &msg), -TAPROOT_ECORRUPT);
		assert_non_null(strstr(msg, "unknown file 4"));
		free(bad);
	}
	expect_refused(raw, len, AT(0, 8 + 16), 0, "frequency");
	expect_refused(raw, len, AT(0, 8 + 24), 0x10, "unknown flags");
	{
		uint8_t *h = malloc(len);
		const char *m = NULL;

		assert_non_null(h);
		memcpy(h, raw, len);
		memset(h + AT(0, 8 + 120), 'x', 72);	/* the hostname, unterminated */
		spill(cut, h, len, true);
		assert_int_equal(read_all(cut, NULL, &m), -TAPROOT_ECORRUPT);
		assert_non_null(strstr(m, "hostname not terminated"));
		free(h);
	}
	expect_refused(raw, len, AT(KSYMS, 0), 99, "unknown chunk type 99");
	expect_refused(raw, len, AT(KSYMS, 0), 0, "unknown chunk type 0");
	expect_refused(raw, len, AT(KSYMS, 0), TAPROOT_RAW_HEADER, "a second HEADER");
	expect_refused(raw, len, AT(KSYMS, 4), 0xffffffffu, "more than its limit");
	expect_refused(raw, len, AT(STAT, 4), 0x7fffffffu, "more than its limit");
	expect_refused(raw, len, AT(STAT, 8), 0, "pid 0");
	expect_refused(raw, len, AT(STAT, 12), 9, "unknown file 9");
	expect_refused(raw, len, AT(STAT, 16), 5, "error 5");
	expect_refused(raw, len, AT(STAT, 16), (uint32_t)-ENOENT, "error -2 with");
	expect_refused(raw, len, AT(ELF, 8 + 16), 65, "build ID of 65");
	expect_refused(raw, len, AT(ELF, 8 + 20), 3, "path of 3");
	expect_refused(raw, len, AT(REC, 8), 70000, "cpu 70000");
	expect_refused(raw, len, AT(REC, 8 + 8), 16, "record");		/* hdr.size */
	/* A LOST record's size with the type SAMPLE: the fixed part does not fit. */
	expect_refused(raw, len, AT(REC, 8 + 8 + 4), TAPROOT_REC_SAMPLE, "record");
	expect_refused(raw, len, AT(ROUND, 4), 1, "more than its limit");
	expect_refused(raw, len, AT(END, 4), 8, "END chunk of 8");
	/* A record length that disagrees with its chunk: the chunk is 8 longer. */
	{
		bad = malloc(len + 8);
		assert_non_null(bad);
		memcpy(bad, raw, boundaries[ROUND]);
		memset(bad + boundaries[ROUND], 0, 8);
		memcpy(bad + boundaries[ROUND] + 8, raw + boundaries[ROUND], len - boundaries[ROUND]);
		put32(bad + AT(REC, 4), raw[AT(REC, 4)] + 8u);
		spill(cut, bad, len + 8, true);
		assert_int_equal(read_all(cut, NULL, &msg), -TAPROOT_ECORRUPT);
		assert_non_null(strstr(msg, "record of"));
		/* Data after END. */
		memcpy(bad, raw, len);
		memset(bad + len, 0, 8);
		spill(cut, bad, len + 8, true);
		assert_int_equal(read_all(cut, NULL, &msg), -TAPROOT_ECORRUPT);
		assert_non_null(strstr(msg, "after the END"));
		free(bad);
	}
	/* Not gzip, not a raw file at all. */
	spill(cut, "hello, world\n", 13, false);
	assert_int_equal(read_all(cut, NULL, &msg), -TAPROOT_ECORRUPT);
	assert_non_null(strstr(msg, "truncated") ?: strstr(msg, "magic"));

	/* Every byte flipped in turn: valid or a clean error, nothing else. */
	bad = malloc(len);
	assert_non_null(bad);
	for (size_t i = 0; i < len; i++) {
		int n;

		memcpy(bad, raw, len);
		bad[i] ^= 0xff;
		spill(cut, bad, len, true);
		n = read_all(cut, NULL, &msg);
		assert_true(n == 0 || n == -TAPROOT_ECORRUPT);
		valid += n == 0;
	}
	/* Text bytes (kallsyms, stat, maps, path, reserved) may change freely. */
	print_message("  %d of %zu flips still valid\n", valid, len);
	assert_true(valid > 0 && (size_t)valid < len);
	free(bad);
	free(raw);
	unlink(cut);
	unlink(path);
#undef AT
}

/* ------------------------------------------------------ replay of own stack */

static volatile int sink;

__attribute__((noinline)) static void raw_capture(struct ownstack *c)
{
	OWNSTACK_CAPTURE(c);
}

__attribute__((noinline)) static int raw_leaf(struct ownstack *c, int x)
{
	raw_capture(c);
	sink = x;
	return x + 3;
}

__attribute__((noinline)) static int raw_outer(struct ownstack *c, int x)
{
	int r = raw_leaf(c, x * 2);

	sink = r;
	return r + 2;
}

/* pprof -traces of @path without its header (file name, times): the traces alone. */
static char *traces(const char *path)
{
	int status;
	char *out = run(&status, "%s -traces %s 2>&1", pprof_tool(), path), *body;

	assert_int_equal(status, 0);
	body = strstr(out, "-----------+");
	assert_non_null(body);
	body = strdup(body);
	free(out);
	return body;
}

/* What record --raw does: the process model's reads into the file as they happen. */
struct recorder {
	struct taproot_raw_writer *w;
	unsigned int reads, elfs;
};

static void rec_read(void *arg, int pid, enum taproot_proc_file file, int err,
		     const char *data, size_t len)
{
	struct recorder *r = arg;

	r->reads++;
	assert_int_equal(taproot_raw_write_proc(r->w, pid, file, err, data, len), 0);
}

static void rec_elf(void *arg, uint64_t dev, uint64_t ino, const char *path,
		    const uint8_t *bid, size_t bid_len)
{
	struct recorder *r = arg;

	r->elfs++;
	assert_int_equal(taproot_raw_write_elf(r->w, dev, ino, path, bid, bid_len), 0);
}

static void test_replay_self(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct recorder rec = { 0 };
	struct taproot_procs_observer obs = { .read = rec_read, .elf = rec_elf, .arg = &rec };
	struct taproot_raw_header h = sample_header;
	struct taproot_raw_end end = { .duration_ns = 1000000000 };
	struct taproot_pipeline_opts o, ro;
	struct taproot_procs_opts po, rpo;
	struct taproot_pipeline *p, *q;
	struct taproot_pipeline_stats st, rst;
	struct taproot_rec_header *recs[8];
	struct taproot_ksyms *ks;
	struct taproot_replay *rp;
	const struct taproot_replay_info *info;
	uint64_t k[2] = { 0xffffffff81001010ull, 0xffffffff81002020ull };
	char raw[128], direct[128], replayed[128];
	char *want, *got, comm[32];
	unsigned int nrec = 0, i;
	uint64_t ns = 0;
	FILE *f;

	assert_non_null(c);
	ownstack_init();
	assert_int_equal(raw_outer(c, 1), 7);
	f = fmemopen((void *)ksyms_text, strlen(ksyms_text), "r");
	assert_non_null(f);
	assert_int_equal(taproot_ksyms_read(f, &ks), 0);
	fclose(f);

	path_in_tmp(raw, sizeof(raw), "self.raw");
	path_in_tmp(direct, sizeof(direct), "direct.pb.gz");
	path_in_tmp(replayed, sizeof(replayed), "replayed.pb.gz");
	h.offcpu = false;
	h.sched_one_in = 1;
	h.min_block_ns = 0;
	h.freq_hz = 100;
	assert_int_equal(taproot_raw_writer_new(raw, &h, &rec.w), 0);
	assert_int_equal(taproot_raw_write_ksyms(rec.w, ksyms_text, strlen(ksyms_text)), 0);

	taproot_procs_opts_default(&po);
	po.observer = &obs;
	taproot_pipeline_opts_default(&o);
	o.freq_hz = h.freq_hz;
	o.ksyms = ks;
	o.label_tid = h.label_tid;
	/* As record: the host's labels, which the replay takes from the header. */
	o.hostname = h.hostname;
	o.kernel_release = h.kernel_release;
	o.procs = &po;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	/*
	 * As record: the prewarm opens libc and ld.so with the observer on,
	 * so that their build IDs are in the file (test_replay_by_build_id
	 * needs them: the samples below find them in the cache).
	 */
	assert_int_equal(taproot_pipeline_prewarm(p), 0);

	/*
	 * Another thread first (its process's comm is read), user-only, kernel
	 * on top, a gone pid, a kthread. The main thread's samples carry the
	 * real comm, as they do from the kernel: the pipeline keeps one name
	 * per process, the last main-thread sample's or /proc's, so a name
	 * /proc does not show would make a warm pass label differently.
	 */
	f = fopen("/proc/self/comm", "re");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	recs[nrec++] = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid() + 1, NULL, 0,
				   "a-thread");
	for (i = 0; i < 3; i++)
		recs[nrec++] = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid(), NULL, 0,
					   comm);
	recs[nrec++] = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid(), k, 2, comm);
	recs[nrec++] = ownstack_sample(c, 0x3ffffff0, 0x3ffffff0, NULL, 0, "ghost");
	recs[nrec++] = ownstack_sample(NULL, 2, 2, k, 2, "kthreadd");
	for (i = 0; i < nrec; i++) {
		/* As record: the pipeline first (its /proc reads go before), then the record. */
		assert_int_equal(taproot_pipeline_add_record(p, recs[i], 1), 0);
		assert_int_equal(taproot_raw_write_record(rec.w, 1, recs[i]), 0);
		if (i == 3) {
			taproot_pipeline_end_round(p);
			assert_int_equal(taproot_raw_write_round(rec.w), 0);
		}
	}
	taproot_pipeline_flush(p, true);
	assert_int_equal(taproot_raw_writer_finish(rec.w, &end), 0);
	/* stat, maps, comm of this process; the gone pid's directory; its ELF files. */
	assert_true(rec.reads >= 4);
	assert_true(rec.elfs >= 2);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.samples, nrec);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_COMPLETE], 5);
	assert_int_equal(st.proc_unknown, 1);
	assert_true(st.unwind_frames >= 5 * 4);
	assert_int_equal(st.kernel_frames, 4);
	assert_int_equal(taproot_pipeline_write(p, direct), 0);

	/* The replay: the same options, the same traces, twice (--repeat 2). */
	assert_int_equal(taproot_replay_open(raw, &rp), 0);
	info = taproot_replay_info(rp);
	assert_int_equal(info->records, nrec);
	assert_int_equal(info->files, rec.elfs);
	assert_int_equal(info->files_other, 0);
	assert_non_null(info->ksyms);
	assert_true(info->header.label_tid);
	taproot_replay_pipeline_opts(rp, &ro, &rpo);
	assert_int_equal(ro.freq_hz, 100);
	assert_string_not_equal(rpo.proc_root, "/proc");
	assert_int_equal(taproot_pipeline_new(&ro, &q), 0);
	want = traces(direct);
	print_message("%s", want);
	assert_non_null(strstr(want, "raw_leaf"));
	assert_non_null(strstr(want, "fake_kernel_leaf"));
	assert_non_null(strstr(want, "thread_comm:  a-thread"));
	assert_non_null(strstr(want, "[unknown: "));
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			taproot_pipeline_reset(q);
		assert_int_equal(taproot_replay_pass(rp, q, &ns, NULL), 0);
		assert_true(ns > 0);
		taproot_pipeline_stats(q, &rst);
		assert_int_equal(rst.samples, (pass + 1) * st.samples);
		assert_int_equal(rst.proc_unknown, (pass + 1) * st.proc_unknown);
		assert_int_equal(rst.unwind_frames, (pass + 1) * st.unwind_frames);
		assert_int_equal(taproot_pipeline_write(q, replayed), 0);
		got = traces(replayed);
		if (strcmp(got, want))
			print_message("pass %d differs; replayed:\n%s", pass + 1, got);
		assert_string_equal(got, want);
		free(got);
	}
	free(want);
	taproot_pipeline_free(q);
	taproot_replay_close(rp);

	/* The directory is gone with the replay. */
	{
		int status;
		char *left = run(&status, "ls -d %s/taproot-replay-* 2>/dev/null | wc -l",
				 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

		print_message("  replay directories left: %s", left);
		free(left);
	}
	for (i = 0; i < nrec; i++)
		free(recs[i]);
	taproot_pipeline_free(p);
	taproot_ksyms_free(ks);
	unlink(direct);
	unlink(replayed);
	free(c);
}

/* ------------------------------------------- stacks the module unwound */

static int ri_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	return taproot_proc_unwind_map(arg, pc, um) == 0 ? 1 : 0;
}

/* The user pcs of @c, as the module would have found them. */
static unsigned int ri_pcs(const struct ownstack *c, uint64_t *pcs, unsigned int max)
{
	static const struct taproot_unwind_ops ops = { .map = ri_map };
	struct taproot_unwind_result res;
	struct taproot_unwinder *u;
	struct taproot_procs *procs;
	struct taproot_proc *proc;

	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	assert_int_equal(taproot_proc_get(procs, getpid(), 0, &proc), 0);
	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);
	assert_true(taproot_unwind(u, proc, &c->regs, c->stack, c->len, pcs, NULL, max, &res) > 2);
	taproot_unwinder_free(u);
	taproot_procs_free(procs);
	return res.nr;
}

static struct taproot_rec_header *ri_stack(uint64_t id, const uint64_t *pcs, unsigned int nu)
{
	size_t size = sizeof(struct taproot_rec_stack) + nu * 8;
	struct taproot_rec_stack *st = calloc(1, size);

	assert_non_null(st);
	st->hdr = (struct taproot_rec_header){ (uint32_t)size, TAPROOT_REC_STACK,
					       TAPROOT_SAMPLE_F_USER_REGS, 100 };
	st->id = id;
	st->epoch = 5;
	st->pid = (uint32_t)getpid();
	st->upc_nr = (uint8_t)nu;
	st->unwind = TAPROOT_KUNWIND_COMPLETE;
	memcpy(st + 1, pcs, nu * 8);
	return &st->hdr;
}

static struct taproot_rec_header *ri_ref(uint64_t id, const char *comm)
{
	struct taproot_rec_sample_ref *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->hdr = (struct taproot_rec_header){ sizeof(*r), TAPROOT_REC_SAMPLE_REF, 0, 200 };
	r->pid = r->tid = (uint32_t)getpid();
	r->period_us = 10000;
	memcpy(r->comm, comm, strnlen(comm, sizeof(r->comm) - 1));
	r->stack_id = id;
	r->epoch = 5;
	return &r->hdr;
}

/*
 * STACK and SAMPLE_REF records through a raw file: the replay resolves
 * the references as the recording did (each CPU's records in their
 * order), pass after pass, and misses the one the recording missed.
 */
static void test_replay_interned(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct recorder rec = { 0 };
	struct taproot_procs_observer obs = { .read = rec_read, .elf = rec_elf, .arg = &rec };
	struct taproot_raw_header h = sample_header;
	struct taproot_raw_end end = { .duration_ns = 1000000000 };
	struct taproot_pipeline_opts o, ro;
	struct taproot_procs_opts po, rpo;
	struct taproot_pipeline *p, *q;
	struct taproot_pipeline_stats st, rst;
	struct taproot_replay *rp;
	struct {
		unsigned int cpu;
		struct taproot_rec_header *rec;
	} recs[6];
	uint64_t pcs[128], id = 0xfeedface;
	char raw[128], direct[128], replayed[128], comm[32], *want, *got;
	unsigned int nu, n = 0, i;
	FILE *f;

	assert_non_null(c);
	ownstack_init();
	assert_int_equal(raw_outer(c, 1), 7);
	nu = ri_pcs(c, pcs, 128);
	f = fopen("/proc/self/comm", "re");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';

	path_in_tmp(raw, sizeof(raw), "interned.raw");
	path_in_tmp(direct, sizeof(direct), "interned-direct.pb.gz");
	path_in_tmp(replayed, sizeof(replayed), "interned-replayed.pb.gz");
	h.offcpu = false;
	h.freq_hz = 100;
	assert_int_equal(taproot_raw_writer_new(raw, &h, &rec.w), 0);
	taproot_procs_opts_default(&po);
	po.observer = &obs;
	taproot_pipeline_opts_default(&o);
	o.freq_hz = h.freq_hz;
	o.label_tid = h.label_tid;
	o.hostname = h.hostname;
	o.kernel_release = h.kernel_release;
	o.procs = &po;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);

	recs[n].cpu = 2, recs[n++].rec = ri_stack(id, pcs, nu);
	recs[n].cpu = 3, recs[n++].rec = ri_ref(id, comm);	/* another CPU: missed */
	recs[n].cpu = 2, recs[n++].rec = ri_ref(id, comm);
	recs[n].cpu = 2, recs[n++].rec = ri_ref(id, comm);
	for (i = 0; i < n; i++) {
		assert_int_equal(taproot_pipeline_add_record(p, recs[i].rec, recs[i].cpu), 0);
		assert_int_equal(taproot_raw_write_record(rec.w, recs[i].cpu, recs[i].rec), 0);
	}
	assert_int_equal(taproot_raw_writer_finish(rec.w, &end), 0);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.stack_refs_unresolved, 1);
	assert_int_equal(taproot_pipeline_write(p, direct), 0);
	want = traces(direct);
	print_message("%s", want);
	assert_non_null(strstr(want, "raw_leaf"));

	assert_int_equal(taproot_replay_open(raw, &rp), 0);
	taproot_replay_pipeline_opts(rp, &ro, &rpo);
	assert_int_equal(taproot_pipeline_new(&ro, &q), 0);
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			taproot_pipeline_reset(q);
		assert_int_equal(taproot_replay_pass(rp, q, NULL, NULL), 0);
		taproot_pipeline_stats(q, &rst);
		assert_int_equal(rst.samples, (pass + 1) * st.samples);
		assert_int_equal(rst.stack_records, (pass + 1) * st.stack_records);
		assert_int_equal(rst.stack_refs_unresolved, (pass + 1) * st.stack_refs_unresolved);
		assert_int_equal(rst.kunwind[TAPROOT_KUNWIND_COMPLETE], (pass + 1) * 2);
		assert_int_equal(taproot_pipeline_write(q, replayed), 0);
		got = traces(replayed);
		assert_string_equal(got, want);
		free(got);
	}
	free(want);
	taproot_pipeline_free(q);
	taproot_replay_close(rp);
	taproot_pipeline_free(p);
	for (i = 0; i < n; i++)
		free(recs[i].rec);
	unlink(raw);
	unlink(direct);
	unlink(replayed);
	free(c);
}

/*
 * Copy raw file @from to @to as a QEMU guest would have written it: every
 * inode in maps and in the ELF chunks moved by @delta (9p shows the host's
 * files with other inode numbers); with @flip, the ELF chunks' build IDs
 * changed too (the files were rebuilt since).
 */
static void as_from_guest(const char *from, const char *to, uint64_t delta, bool flip)
{
	struct taproot_raw_reader *r;
	struct taproot_raw_writer *w;
	struct taproot_raw_header h;
	struct taproot_raw_chunk c;
	uint8_t bid[TAPROOT_RAW_BUILD_ID_MAX];
	char *maps;
	size_t o;

	assert_int_equal(taproot_raw_reader_open(from, &h, &r), 0);
	assert_int_equal(taproot_raw_writer_new(to, &h, &w), 0);
	while (taproot_raw_next(r, &c) > 0) {
		switch (c.type) {
		case TAPROOT_RAW_KSYMS:
			assert_int_equal(taproot_raw_write_ksyms(w, c.ksyms.text, c.ksyms.len), 0);
			break;
		case TAPROOT_RAW_PROC:
			if (c.proc.file != TAPROOT_PROC_MAPS || c.proc.err) {
				assert_int_equal(taproot_raw_write_proc(w, c.proc.pid, c.proc.file,
									c.proc.err, c.proc.data,
									c.proc.len), 0);
				break;
			}
			maps = malloc(c.proc.len * 2 + 1);
			assert_non_null(maps);
			o = 0;
			for (const char *l = c.proc.data; *l; ) {
				unsigned long long a, b, off, ino;
				unsigned int maj, min;
				char perms[8];
				int n = 0;
				const char *eol = strchr(l, '\n');

				eol = eol ? eol + 1 : l + strlen(l);
				assert_int_equal(sscanf(l, "%llx-%llx %7s %llx %x:%x %llu%n", &a, &b,
							perms, &off, &maj, &min, &ino, &n), 7);
				o += (size_t)sprintf(maps + o, "%llx-%llx %s %08llx %02x:%02x %llu", a,
						     b, perms, off, maj, min, ino ? ino + delta : 0);
				memcpy(maps + o, l + n, (size_t)(eol - l - n));
				o += (size_t)(eol - l - n);
				l = eol;
			}
			assert_int_equal(taproot_raw_write_proc(w, c.proc.pid, c.proc.file, 0, maps,
								o), 0);
			free(maps);
			break;
		case TAPROOT_RAW_ELF:
			memcpy(bid, c.elf.build_id, c.elf.build_id_len);
			if (flip)
				bid[0] ^= 1;
			assert_int_equal(taproot_raw_write_elf(w, c.elf.dev, c.elf.ino + delta,
							       c.elf.path, bid, c.elf.build_id_len),
					 0);
			break;
		case TAPROOT_RAW_RECORD:
			assert_int_equal(taproot_raw_write_record(w, c.record.cpu, c.record.rec), 0);
			break;
		case TAPROOT_RAW_ROUND:
			assert_int_equal(taproot_raw_write_round(w), 0);
			break;
		case TAPROOT_RAW_END:
			assert_int_equal(taproot_raw_writer_finish(w, &c.end), 0);
			break;
		default:
			fail_msg("chunk type %d", c.type);
		}
	}
	taproot_raw_reader_close(r);
}

/* Replay @raw once; its cpu profile's traces, and the replay's facts in @info. */
static char *replay_traces(const char *raw, const char *pb, struct taproot_replay_info *info,
			   struct taproot_pipeline_stats *st)
{
	struct taproot_pipeline_opts ro;
	struct taproot_procs_opts rpo;
	struct taproot_pipeline *q;
	struct taproot_replay *rp;
	char *t;

	static char first[256];

	assert_int_equal(taproot_replay_open(raw, &rp), 0);
	*info = *taproot_replay_info(rp);
	/* The names go with the replay: keep the first. */
	if (info->files_other_paths[0]) {
		snprintf(first, sizeof(first), "%s", info->files_other_paths[0]);
		info->files_other_paths[0] = first;
	}
	for (size_t i = 1; i < 4; i++)
		info->files_other_paths[i] = NULL;
	taproot_replay_pipeline_opts(rp, &ro, &rpo);
	assert_int_equal(taproot_pipeline_new(&ro, &q), 0);
	assert_int_equal(taproot_replay_pass(rp, q, NULL, NULL), 0);
	taproot_pipeline_stats(q, st);
	assert_int_equal(taproot_pipeline_write(q, pb), 0);
	t = traces(pb);
	taproot_pipeline_free(q);
	taproot_replay_close(rp);
	unlink(pb);
	return t;
}

/*
 * A recording from a guest: other inode numbers, the same files (build
 * IDs) replays as the original; files rebuilt since (other build IDs) are
 * counted and left unresolved, not read.
 */
static void test_replay_by_build_id(void **state)
{
	struct taproot_replay_info info;
	struct taproot_pipeline_stats st, gst;
	char raw[128], guest[128], pb[128];
	char *want, *got;

	path_in_tmp(raw, sizeof(raw), "self.raw");
	path_in_tmp(guest, sizeof(guest), "guest.raw");
	path_in_tmp(pb, sizeof(pb), "guest.pb.gz");
	assert_int_equal(access(raw, F_OK), 0);		/* test_replay_self's */

	want = replay_traces(raw, pb, &info, &st);
	assert_int_equal(info.files_other, 0);
	assert_true(info.files >= 2);

	as_from_guest(raw, guest, 1000003, false);
	got = replay_traces(guest, pb, &info, &gst);
	assert_int_equal(info.files_other, 0);
	assert_null(info.files_other_paths[0]);
	assert_string_equal(got, want);
	free(got);

	as_from_guest(raw, guest, 1000003, true);
	got = replay_traces(guest, pb, &info, &gst);
	assert_int_equal(info.files_other, info.files);
	assert_non_null(info.files_other_paths[0]);
	assert_non_null(strstr(info.files_other_paths[0], "/"));
	print_message("  rebuilt files: %zu of %zu; user stacks %llu, complete %llu\n",
		      info.files_other, info.files, (unsigned long long)gst.user_stacks,
		      (unsigned long long)gst.unwind[TAPROOT_UNWIND_COMPLETE]);
	/* Not one stack unwinds through a file that is not the recorded one. */
	assert_int_equal(gst.samples, st.samples);
	assert_int_equal(gst.unwind[TAPROOT_UNWIND_COMPLETE], 0);
	assert_null(strstr(got, "raw_leaf"));
	assert_string_not_equal(got, want);
	free(got);
	free(want);
	unlink(guest);
	unlink(raw);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_replay_self),
		cmocka_unit_test(test_replay_interned),
		cmocka_unit_test(test_replay_by_build_id),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
