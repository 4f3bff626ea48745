// SPDX-License-Identifier: GPL-2.0
/*
 * cfi-compile: what compiling one ELF's unwind table costs, for
 * scripts/bench. Compiles the CFI of FILE (lib/unwind/cfi.c, as the unwinder does
 * once per build ID) ROUNDS times and prints one JSON object:
 *
 *   {"path": ..., "file_bytes": N, "fdes": N, "rows": N, "rules": N,
 *    "table_bytes": N, "bytes_per_row": X, "compile_ms": [t1, t2, ...]}
 *
 * The first round reads the file through the page cache as the daemon
 * would; each round opens the file afresh.
 *
 * usage: cfi-compile FILE [ROUNDS]   (ROUNDS 1..100, default 3)
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/unwind-private.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One compile of @path; fills *@t (the caller frees it) and *@ms. */
static int compile_once(const char *path, struct tp_cfi_table **t, double *ms)
{
	double t0 = now_ms();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	int err;

	if (fd < 0) {
		fprintf(stderr, "cfi-compile: %s: %s\n", path, strerror(errno));
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		fprintf(stderr, "cfi-compile: %s: %s\n", path, elf_errmsg(-1));
		close(fd);
		return -1;
	}
	err = tp_cfi_compile(elf, t);
	*ms = now_ms() - t0;
	elf_end(elf);
	close(fd);
	if (err) {
		fprintf(stderr, "cfi-compile: %s: %s\n", path, strerror(-err));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tp_cfi_table *t = NULL;
	double ms[100];
	struct stat st;
	int rounds = 3;

	if (argc < 2 || argc > 3 || (argc == 3 && (rounds = atoi(argv[2])) < 1) || rounds > 100) {
		fprintf(stderr, "usage: cfi-compile FILE [ROUNDS]\n");
		return 2;
	}
	if (stat(argv[1], &st) < 0) {
		fprintf(stderr, "cfi-compile: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	elf_version(EV_CURRENT);
	for (int i = 0; i < rounds; i++) {
		if (t)
			tp_cfi_table_free(t);
		t = NULL;
		if (compile_once(argv[1], &t, &ms[i]))
			return 1;
	}
	printf("{\"path\": \"%s\", \"file_bytes\": %lld, \"fdes\": %u, \"rows\": %u, "
	       "\"rules\": %u, \"table_bytes\": %zu, \"bytes_per_row\": %.2f, \"compile_ms\": [",
	       argv[1], (long long)st.st_size, t->nr_fdes, t->nr, t->nr_rules, t->bytes,
	       t->nr ? (double)t->bytes / t->nr : 0.0);
	for (int i = 0; i < rounds; i++)
		printf("%s%.1f", i ? ", " : "", ms[i]);
	printf("]}\n");
	tp_cfi_table_free(t);
	return 0;
}
