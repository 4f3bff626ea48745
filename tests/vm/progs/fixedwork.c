// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer
/*
 * fixedwork: a fixed amount of CPU-bound work on every CPU, for the
 * sampling-overhead benchmark (scripts/bench). Each of N threads (default:
 * one per CPU of the affinity mask, thread i pinned to the i-th) runs
 * UNITS work units, each a descent through DEPTH frames of a recursive
 * function before a short loop, so that every sample carries a real
 * DWARF-unwound stack (built without frame pointers, like Debian's
 * binaries). It prints, once all threads are done:
 *
 *   fixedwork: threads=N units=U depth=D wall_us=W cpu_us=C
 *
 * W is from the first thread's start to the last thread's end
 * (CLOCK_MONOTONIC), C is the process's user+system CPU time.
 *
 * usage: fixedwork [--threads N] [--units U] [--depth D]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define UNIT_ITERS 20000

static unsigned long units = 2000, depth = 12;
static volatile uint64_t sink;

__attribute__((noipa)) static uint64_t work_leaf(uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < UNIT_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noipa)) static uint64_t work_descend(unsigned long level, uint64_t seed)
{
	if (level == 0)
		return work_leaf(seed);
	/* Not a tail call: the frame stays on the stack. */
	return work_descend(level - 1, seed + level) ^ level;
}

struct worker {
	pthread_t thread;
	int cpu;			/* -1: not pinned */
};

static void *work_thread(void *arg)
{
	struct worker *w = arg;
	uint64_t acc = 0;

	if (w->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (unsigned long u = 0; u < units; u++)
		acc += work_descend(depth, u);
	sink = acc;
	return NULL;
}

static unsigned long arg_ul(const char *opt, const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s ? s : "", &end, 10);

	if (!s || *end || v == 0 || v > max) {
		fprintf(stderr, "fixedwork: %s takes an integer 1..%lu\n", opt, max);
		exit(2);
	}
	return v;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	unsigned long threads = 0;
	struct worker *w;
	struct rusage ru;
	cpu_set_t mask;
	int64_t t0, t1;
	int cpu = -1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads"))
			threads = arg_ul("--threads", argv[++i], 1024);
		else if (!strcmp(argv[i], "--units"))
			units = arg_ul("--units", argv[++i], 100000000);
		else if (!strcmp(argv[i], "--depth"))
			depth = arg_ul("--depth", argv[++i], 1000);
		else {
			fprintf(stderr, "usage: fixedwork [--threads N] [--units U] [--depth D]\n");
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof(mask), &mask) < 0) {
		perror("fixedwork: sched_getaffinity");
		return 1;
	}
	if (!threads)
		threads = CPU_COUNT(&mask);
	w = calloc(threads, sizeof(*w));
	if (!w) {
		perror("fixedwork");
		return 1;
	}
	t0 = now_us();
	for (unsigned long i = 0; i < threads; i++) {
		/* The i-th CPU of the mask, round robin. */
		do
			cpu = (cpu + 1) % CPU_SETSIZE;
		while (!CPU_ISSET(cpu, &mask));
		w[i].cpu = cpu;
		if (pthread_create(&w[i].thread, NULL, work_thread, &w[i])) {
			fprintf(stderr, "fixedwork: cannot create thread %lu\n", i);
			return 1;
		}
	}
	for (unsigned long i = 0; i < threads; i++)
		pthread_join(w[i].thread, NULL);
	t1 = now_us();
	getrusage(RUSAGE_SELF, &ru);
	printf("fixedwork: threads=%lu units=%lu depth=%lu wall_us=%lld cpu_us=%lld\n",
	       threads, units, depth, (long long)(t1 - t0),
	       (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	free(w);
	return 0;
}
