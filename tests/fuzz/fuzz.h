/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libFuzzer targets of tests/fuzz share: the entry points
 * libFuzzer calls, check() for a contract breach, and for the targets
 * whose parser takes a path (ELF files, raw captures) a memfd holding the
 * input, opened through its /proc/self/fd path.
 */
#ifndef TAPROOT_FUZZ_H
#define TAPROOT_FUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An input read front to back by fuzz_take(); bytes past its end read as 0. */
struct fuzz_input {
	const uint8_t *p;
	size_t left;
};

/* The next @bytes (at most 8) of @in, little-endian. */
static inline uint64_t fuzz_take(struct fuzz_input *in, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++) {
		uint64_t b = 0;

		if (in->left) {
			b = *in->p++;
			in->left--;
		}
		v |= b << (8 * i);
	}
	return v;
}

/* A contract breach: abort, and libFuzzer keeps the input. */
static inline void check(bool ok)
{
	if (!ok)
		abort();
}

static int fuzz_memfd = -1;
/* The input's path, /proc/self/fd/N, once fuzz_input_init() ran. */
static char fuzz_path[64];

/* Once, from LLVMFuzzerInitialize(): NAME names the memfd. */
static inline void fuzz_input_init(const char *name)
{
	fuzz_memfd = memfd_create(name, MFD_CLOEXEC);
	if (fuzz_memfd < 0) {
		perror("fuzz: memfd_create");
		exit(1);
	}
	snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_memfd);
}

/* The input becomes the file's whole content. */
static inline void fuzz_input_write(const uint8_t *data, size_t size)
{
	if (ftruncate(fuzz_memfd, 0) < 0 ||
	    pwrite(fuzz_memfd, data, size, 0) != (ssize_t)size)
		abort();
}

#endif /* TAPROOT_FUZZ_H */
