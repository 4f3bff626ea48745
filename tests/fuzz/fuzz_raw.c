// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the raw capture file reader (lib/raw/rawfile.c), which
 * `taprootctl report` runs on files that may be truncated, corrupt or
 * someone else's: the HEADER, then every chunk to END or the first error,
 * then a rewind and the same again (as a report's second pass does).
 *
 * The input is the file's bytes, written to a memfd and opened through
 * /proc/self/fd/N. zlib reads a stream without a gzip header as it is, so
 * an input is either the plain chunk stream (what the fuzzer mutates
 * best) or a gzip file as the writer makes it (seeds of both kinds).
 *
 * Checked: what taproot_raw_next() hands out keeps its contract (records
 * pass taproot_rec_check() and fill their chunk, PROC data and ELF paths
 * are NUL-terminated at their length, build IDs within their limit), a
 * failed or finished reader stays so, and the second pass yields the same
 * chunk types as the first; a breach aborts. With FUZZ_DEBUG set in the
 * environment the outcome of each pass is printed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include <linux/taproot.h>

#include "raw/raw.h"
#include "util/util.h"


#define MAX_CHUNKS	4096	/* types remembered for the second pass */


int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_input_init("fuzz-raw");
	return 0;
}

static void check_chunk(const struct taproot_raw_chunk *c)
{
	const char *why;

	switch (c->type) {
	case TAPROOT_RAW_KSYMS:
		check(c->ksyms.text && c->ksyms.text[c->ksyms.len] == '\0');
		break;
	case TAPROOT_RAW_PROC:
		check(c->proc.pid > 0 && c->proc.file < TAPROOT_PROC_NR_FILES);
		check(c->proc.err <= 0 && (c->proc.err == 0 || c->proc.len == 0));
		check(c->proc.data[c->proc.len] == '\0');
		break;
	case TAPROOT_RAW_ELF:
		check(c->elf.build_id_len <= TAPROOT_RAW_BUILD_ID_MAX);
		check(!c->elf.build_id_len || c->elf.build_id);
		check(c->elf.path && strlen(c->elf.path) > 0 &&
		      strlen(c->elf.path) < TAPROOT_RAW_PATH_MAX);
		break;
	case TAPROOT_RAW_RECORD:
		check(c->record.rec && (uintptr_t)c->record.rec % 8 == 0);
		check(taproot_rec_check(c->record.rec, c->record.rec->size, &why) == 0);
		break;
	case TAPROOT_RAW_ROUND:
	case TAPROOT_RAW_END:
		break;
	default:
		check(false);
	}
}

/* Read every chunk; returns the last result, *@nr chunks, their types. */
static int read_all(struct taproot_raw_reader *r, uint8_t *types, size_t *nr)
{
	struct taproot_raw_chunk c;
	int ret;

	*nr = 0;
	while ((ret = taproot_raw_next(r, &c)) == 1) {
		check_chunk(&c);
		if (*nr < MAX_CHUNKS)
			types[*nr] = (uint8_t)c.type;
		++*nr;
	}
	check(ret == 0 || ret == -TAPROOT_ECORRUPT || ret == -ENOMEM || ret == -EIO);
	/* Once it failed or ended, it says so again. */
	check(taproot_raw_next(r, &c) == ret);
	if (getenv("FUZZ_DEBUG"))
		fprintf(stderr, "fuzz_raw: %zu chunks, then %d %s\n", *nr, ret,
			ret < 0 ? taproot_errmsg(ret) : "(END)");
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t types[2][MAX_CHUNKS];
	struct taproot_raw_header h;
	struct taproot_raw_reader *r;
	size_t nr[2];
	int ret[2];

	fuzz_input_write(data, size);
	if (taproot_raw_reader_open(fuzz_path, &h, &r))
		return 0;
	check(h.version == TAPROOT_RAW_VERSION);
	check(h.freq_hz >= 1 && h.freq_hz <= TAPROOT_FREQ_MAX && (h.cpu || h.offcpu));
	check(memchr(h.kernel_release, '\0', sizeof(h.kernel_release)) != NULL);

	ret[0] = read_all(r, types[0], &nr[0]);
	if (taproot_raw_rewind(r) == 0) {
		ret[1] = read_all(r, types[1], &nr[1]);
		check(ret[0] == ret[1] && nr[0] == nr[1]);
		check(!memcmp(types[0], types[1], nr[0] < MAX_CHUNKS ? nr[0] : MAX_CHUNKS));
	}
	taproot_raw_reader_close(r);
	return 0;
}
