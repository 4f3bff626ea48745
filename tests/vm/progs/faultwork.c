// SPDX-License-Identifier: GPL-2.0
/*
 * A fault-heavy load for the benchmarks (scripts/bench-guest, insns part
 * mmaplock): two threads, each UNITS times maps 64 anonymous pages,
 * touches each (a page fault, which takes the mmap lock for reading on
 * kernels without per-VMA locks) and unmaps them (the lock for writing).
 *
 * usage: faultwork UNITS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES	64

static long units;

static void *work(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);

	(void)arg;
	for (long u = 0; u < units; u++) {
		volatile char *p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("faultwork: mmap");
			exit(1);
		}
		for (int i = 0; i < PAGES; i++)
			p[i * page] = 1;
		munmap((void *)p, PAGES * page);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	units = argc > 1 ? atol(argv[1]) : 0;
	if (units <= 0) {
		fprintf(stderr, "usage: faultwork UNITS\n");
		return 2;
	}
	if (pthread_create(&t, NULL, work, NULL)) {
		perror("faultwork: pthread_create");
		return 1;
	}
	work(NULL);
	pthread_join(t, NULL);
	return 0;
}
