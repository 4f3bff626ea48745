// SPDX-License-Identifier: GPL-2.0
/*
 * rate-loop: a workload whose progress can be measured. N threads (default
 * one per CPU, thread i pinned to the i-th CPU of the affinity mask) each
 * count loop iterations of a little arithmetic; every INTERVAL ms the main
 * thread prints the iterations done in that interval, all threads
 * together, per second of wall time:
 *
 *   rate t_ms=T per_s=R
 *
 * T is CLOCK_REALTIME in ms at the end of the interval (bash's
 * EPOCHREALTIME), so a test can pick the intervals that fall in a window
 * it timed; the rate itself is measured on CLOCK_MONOTONIC. It first prints
 * "ready pid=PID threads=N" and runs until killed.
 *
 * usage: rate-loop [--threads N] [--interval-ms MS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

/* One counter per thread, each on its own cache line. */
static struct {
	_Atomic uint64_t n;
	char pad[56];
} counts[MAX_THREADS];

static void *loop(void *arg)
{
	_Atomic uint64_t *n = &counts[(long)arg].n;
	uint64_t x = (uint64_t)(long)arg + 1;

	for (;;) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) +
				      (x | 1) / (x | 1), memory_order_relaxed);
	}
	return NULL;
}

static double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long threads = 0, interval_ms = 500, i;
	cpu_set_t mask, one;
	uint64_t prev = 0, sum;
	double t0, t1;
	int cpu, seen;
	pthread_t th;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			threads = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc) {
			interval_ms = strtol(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: rate-loop [--threads N] [--interval-ms MS]\n");
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof(mask), &mask)) {
		perror("rate-loop: sched_getaffinity");
		return 1;
	}
	if (threads <= 0)
		threads = CPU_COUNT(&mask);
	if (threads > MAX_THREADS || interval_ms <= 0) {
		fprintf(stderr, "rate-loop: at most %d threads, a positive interval\n",
			MAX_THREADS);
		return 2;
	}
	for (i = 0; i < threads; i++) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		/* The i-th CPU of the mask, round robin. */
		for (cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
			if (CPU_ISSET(cpu, &mask) && seen++ == i % CPU_COUNT(&mask)) {
				CPU_ZERO(&one);
				CPU_SET(cpu, &one);
				pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
				break;
			}
		}
		if (pthread_create(&th, &attr, loop, (void *)i)) {
			perror("rate-loop: pthread_create");
			return 1;
		}
		pthread_attr_destroy(&attr);
	}
	printf("ready pid=%d threads=%ld\n", getpid(), threads);
	t0 = now_ms(CLOCK_MONOTONIC);
	for (;;) {
		usleep(interval_ms * 1000);
		t1 = now_ms(CLOCK_MONOTONIC);
		sum = 0;
		for (i = 0; i < threads; i++)
			sum += atomic_load_explicit(&counts[i].n, memory_order_relaxed);
		printf("rate t_ms=%.0f per_s=%.0f\n", now_ms(CLOCK_REALTIME), (double)(sum - prev) * 1e3 / (t1 - t0));
		prev = sum;
		t0 = t1;
	}
}
