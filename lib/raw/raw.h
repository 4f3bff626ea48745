/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, raw files layer: writing, reading and replaying raw
 * capture files (lib/raw/).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_RAW_H
#define TAPROOT_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/pipeline.h"

/* ------------------------------------------------- raw capture files */
/*
 * (lib/raw/rawfile.c.) What a recording fed its pipeline, kept so that the
 * profiles can be rebuilt later on the same host (taprootctl record --raw,
 * taprootctl report): a gzip stream of chunks, each
 *
 *	u32 type, u32 len, len bytes of payload	(little-endian)
 *
 * HEADER first (magic, format version, the session's options), then, in
 * the order the recorder met them: KSYMS (the /proc/kallsyms text the
 * pipeline used), PROC (a /proc/PID file the process model read, written
 * before the record whose handling read it), ELF (a mapped file the
 * process model opened: its maps dev and inode, path and build ID), RECORD
 * (a ring record exactly as the ring gave it, with its CPU), ROUND (the end
 * of one read of the rings: off-CPU intervals complete at round ends), and
 * END last (what the recorder counted outside the records). A reader
 * refuses anything else: unknown types, lengths past each type's limit,
 * records taproot_rec_check() refuses, a stream that ends before END.
 * docs/design.md "Raw capture files" has the payload of each type.
 */
#define TAPROOT_RAW_MAGIC	"TAPRAW\r\n"	/* 8 bytes, no NUL */
/*
 * Version 2 added the PROC files cgroup and exe and the host's name in the
 * header; a reader reads versions 1 and 2, and refuses those files in a
 * version 1 file.
 */
#define TAPROOT_RAW_VERSION	2

enum taproot_raw_type {
	TAPROOT_RAW_HEADER = 1,
	TAPROOT_RAW_KSYMS,
	TAPROOT_RAW_PROC,
	TAPROOT_RAW_ELF,
	TAPROOT_RAW_RECORD,
	TAPROOT_RAW_ROUND,
	TAPROOT_RAW_END,
	__TAPROOT_RAW_LAST
};

/* Limits of a payload, checked by the reader (and the writer). */
#define TAPROOT_RAW_KSYMS_MAX	(256u << 20)	/* kallsyms text */
#define TAPROOT_RAW_PROC_MAX	TAPROOT_PROC_MAPS_MAX	/* a maps file */
#define TAPROOT_RAW_RECORD_MAX	(128u << 10)	/* a record: > 64 KiB of stack + the rest */
#define TAPROOT_RAW_BUILD_ID_MAX 64
#define TAPROOT_RAW_PATH_MAX	4096

/* HEADER: the recording's options, so that a report builds the same pipeline. */
struct taproot_raw_header {
	uint32_t version;		/* TAPROOT_RAW_VERSION (set by the writer) */
	uint32_t abi_version;		/* the module's TAPROOT_ABI_VERSION */
	char kernel_release[65];	/* uname -r of the recording host */
	char hostname[65];		/* its name ("" in version 1 files) */
	uint32_t freq_hz;
	uint32_t ustack_bytes;		/* 0: the module's default */
	bool cpu, offcpu;		/* --events */
	uint32_t sched_one_in;
	uint64_t min_block_ns;
	bool label_tid, label_cpu;
	uint64_t start_ns;		/* CLOCK_REALTIME at the start */
};

/* END: the recorder's own counts. */
struct taproot_raw_end {
	uint64_t duration_ns;		/* of the session */
	uint64_t lost;			/* records the rings lost (their counters) */
	uint64_t corrupt;		/* corrupt ring stretches met */
};

/* One chunk read; pointers are valid until the next call on the reader. */
struct taproot_raw_chunk {
	enum taproot_raw_type type;
	union {
		struct taproot_raw_header header;
		struct {
			const char *text;
			size_t len;
		} ksyms;
		struct {
			int pid;
			enum taproot_proc_file file;
			int err;		/* < 0: the read failed, no data */
			const char *data;	/* NUL-terminated after @len */
			size_t len;
		} proc;
		struct {
			uint64_t dev, ino;
			const char *path;
			const uint8_t *build_id;
			size_t build_id_len;
		} elf;
		struct {
			unsigned int cpu;
			const struct taproot_rec_header *rec;	/* 8-byte aligned, checked */
		} record;
		struct taproot_raw_end end;
	};
};

struct taproot_raw_writer;
struct taproot_raw_reader;

/*
 * Start writing @path: a temporary file beside it (mode 0600) that
 * taproot_raw_writer_finish() renames to @path, the HEADER @h first.
 * Errors: -errno (with a message).
 */
int taproot_raw_writer_new(const char *path, const struct taproot_raw_header *h,
			   struct taproot_raw_writer **wp);

/*
 * Append one chunk. An error is sticky: every later call returns it and
 * finish() removes the temporary file. -EINVAL for a payload past its
 * limit, -EIO (message: zlib's) for a failed write.
 */
int taproot_raw_write_ksyms(struct taproot_raw_writer *w, const char *text, size_t len);
int taproot_raw_write_proc(struct taproot_raw_writer *w, int pid, enum taproot_proc_file file,
			   int err, const char *data, size_t len);
int taproot_raw_write_elf(struct taproot_raw_writer *w, uint64_t dev, uint64_t ino,
			  const char *path, const uint8_t *build_id, size_t build_id_len);
int taproot_raw_write_record(struct taproot_raw_writer *w, unsigned int cpu,
			     const struct taproot_rec_header *rec);
int taproot_raw_write_round(struct taproot_raw_writer *w);

/*
 * Write END @end, close, fsync and rename to the final path, then free @w;
 * on an error (this one's or an earlier sticky one) the temporary file is
 * removed instead and the error returned. @end NULL: abandon the file
 * (removed, 0 returned). @w NULL is allowed.
 */
int taproot_raw_writer_finish(struct taproot_raw_writer *w, const struct taproot_raw_end *end);

/*
 * Open @path for reading and read its HEADER into *@h (magic, version
 * checked). Errors: -errno, -TAPROOT_ECORRUPT (the message says what is
 * wrong and at which byte of the uncompressed stream).
 */
int taproot_raw_reader_open(const char *path, struct taproot_raw_header *h,
			    struct taproot_raw_reader **rp);
void taproot_raw_reader_close(struct taproot_raw_reader *r);

/*
 * The next chunk after the header into *@c: 1 (END included: the file
 * must end there), 0 once END was returned, or -TAPROOT_ECORRUPT (truncated, unknown type, a length
 * or field out of range, a record that fails taproot_rec_check()),
 * -ENOMEM, -EIO. Once it failed or returned 0 it keeps doing so.
 */
int taproot_raw_next(struct taproot_raw_reader *r, struct taproot_raw_chunk *c);

/* Back to the chunk after the header (for another pass). 0 or -EIO. */
int taproot_raw_rewind(struct taproot_raw_reader *r);

/*
 * Replaying a raw capture file (lib/raw/rawreplay.c), on the host that recorded
 * it (the host of a QEMU guest too): what the recording's process model
 * read of /proc is materialized, in stream order, in a private directory
 * that the replay's process model uses as its proc root (TMP/PID/stat,
 * maps, comm, and TMP/PID/root -> "/", so that mapped files are opened
 * from this host's file system). Mapped files are matched by build ID: when
 * this host's file at a path the recording opened has the recorded build
 * ID, maps in TMP show its dev:inode (a guest sees the host's files over 9p
 * with other inode numbers, and the process model refuses a file whose
 * inode is not the mapping's); when not, an inode that is not the file's,
 * so the mapping stays unresolved instead of being read from another file.
 */
struct taproot_replay;

/* What taproot_replay_open() found in the file. */
struct taproot_replay_info {
	struct taproot_raw_header header;
	struct taproot_raw_end end;
	uint64_t records, procs;	/* RECORD and PROC chunks */
	size_t files;			/* distinct mapped files the recording opened */
	size_t files_other;		/* of them, not the recorded one on this host */
	const char *files_other_paths[4];	/* the first of them; NULL after the last */
	uint64_t files_over;		/* past the table's bound: unresolved, counted here */
	const struct taproot_ksyms *ksyms;	/* from its KSYMS chunk; NULL: none */
};

/*
 * Open @path, read it whole once (every chunk checked: a corrupt file
 * fails here, before anything is built), load its kernel symbols, match
 * its mapped files against this host's, and make the private directory
 * (under $TMPDIR, else /tmp). Errors: as taproot_raw_reader_open() and
 * taproot_raw_next(), -errno making the directory, -ENOMEM.
 */
int taproot_replay_open(const char *path, struct taproot_replay **rp);

/* Remove the directory and free @r (NULL is allowed). */
void taproot_replay_close(struct taproot_replay *r);

const struct taproot_replay_info *taproot_replay_info(const struct taproot_replay *r);

/*
 * Pipeline options that rebuild the recording's pipeline (its frequency,
 * labels, off-CPU options, kernel symbols), and process-model options
 * @procs that @opts points to: the directory as proc root, refresh and
 * exit grace 0 (the directory always shows what the recording last read,
 * so the replay re-reads whenever the recording may have: it follows the
 * recording's reads, not this run's much faster clock). @r and @procs must
 * outlive the pipeline.
 */
void taproot_replay_pipeline_opts(const struct taproot_replay *r,
				  struct taproot_pipeline_opts *opts,
				  struct taproot_procs_opts *procs);

/*
 * Feed every record of the file to @pl, in order, materializing /proc as
 * it goes (a second pass starts the file, the directory and @pl's mirror
 * of the module's stack slots over; reset the pipeline's profiles between
 * passes yourself). Records are in the order the recording read them, so
 * each CPU's in its ring's order: a SAMPLE_REF after its STACK. ROUND chunks end a
 * round, END flushes the off-CPU join (final). *@pipeline_ns (may be NULL)
 * gets the CLOCK_MONOTONIC time spent inside the pipeline's calls.
 * Returns 0, -EINTR when *@stop became true, or an error (the file
 * changed since it was opened, a write in the directory failed).
 */
int taproot_replay_pass(struct taproot_replay *r, struct taproot_pipeline *pl,
			uint64_t *pipeline_ns, volatile int *stop);

#endif /* TAPROOT_RAW_H */
