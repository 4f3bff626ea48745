// SPDX-License-Identifier: GPL-2.0
/*
 * A profiling target that spends its time in libc: it sorts an array of
 * strings with qsort (glibc's msort, internal functions that only libc's
 * debug file names) and measures them with strlen, over and over.
 *
 * usage: libcwork [SECONDS]   (default 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N	4096

static char words[N][24];
static const char *ptrs[N];

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

__attribute__((noinline)) static size_t sort_round(unsigned int seed)
{
	size_t total = 0;

	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		snprintf(words[i], sizeof(words[i]), "w%08x", seed);
		ptrs[i] = words[i];
	}
	qsort(ptrs, N, sizeof(ptrs[0]), by_name);
	for (int i = 0; i < N; i++)
		total += strlen(ptrs[i]);
	return total;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	unsigned long rounds = 0;
	size_t total = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		total += sort_round((unsigned int)rounds);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("libcwork: rounds %lu total %zu\n", rounds, total);
	return 0;
}
