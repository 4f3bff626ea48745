// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer
/*
 * A critical-path target with a known chain, each thread named after its
 * role:
 *
 *   main     starts the others, then waits for the worker (pthread_join)
 *   holder   takes the mutex, lets the worker go (a barrier), computes in
 *            holder_compute for HOLD/ROUNDS ms of wall time, releases the
 *            mutex, waits for the worker to be done with it (a second
 *            barrier: else it could take the mutex again first, and each
 *            wait for the other); ROUNDS times
 *   worker   waits for the holder at the barrier, computes in
 *            worker_compute for WORK/ROUNDS ms, then takes the mutex
 *            (mutex_wait: blocked until the holder releases it),
 *            releases it and meets the holder; ROUNDS times, and ends
 *   sleeper  naps 5 ms at a time (sleeper_nap) until the process exits:
 *            woken by timers only, on no one's path
 *
 * The main thread's critical path is then: its start, the worker's
 * compute, the holder's compute for as long as the worker waited for the
 * mutex, round after round (and the short hand-overs at the barriers),
 * the worker's end. Many rounds make running
 * stretches shorter than a sampling period (a stretch with no sample of
 * its own, the case of issue 34). On exit one line with the sums of each
 * measured step, CLOCK_MONOTONIC around each, for a test to compare with
 * the profile:
 *
 *   critchain: worker_compute_ns=N mutex_wait_ns=N holder_compute_ns=N main_wait_ns=N
 *
 * usage: critchain [HOLD_MS [WORK_MS [START_MS|stdin [ROUNDS]]]]   (defaults 800, 300, 1000, 1)
 *
 * The threads are started first (their stacks mapped), then the main
 * thread sleeps START_MS before it lets the chain run, so that a profiler
 * that reads a process's maps when it first meets it has the time to,
 * under emulation too, before the chain runs and the process exits. With
 * "stdin" instead, it prints "critchain: ready pid=PID" and waits for a
 * line (or the end) of its standard input: a test lets it go once the
 * profiler is seen ready. Nothing maps or unmaps memory from then until
 * the last line (no allocation: read(2), not stdio).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start, held, done;
static long hold_ms = 800, work_ms = 300, start_ms = 1000, rounds = 1;
static uint64_t worker_compute_ns, mutex_wait_ns, holder_compute_ns;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* Spin on the CPU for @ns of wall time; returns the time it took. */
static uint64_t __attribute__((noinline)) spin(uint64_t ns)
{
	uint64_t t0 = now_ns(), end = t0 + ns;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i * 2654435761u;
	return now_ns() - t0;
}

static uint64_t __attribute__((noinline)) holder_compute(void)
{
	uint64_t ns = spin((uint64_t)hold_ms * 1000000 / (uint64_t)rounds);

	__asm__ volatile("" ::: "memory");	/* not a tail call: stays on the stack */
	return ns;
}

static uint64_t __attribute__((noinline)) worker_compute(void)
{
	uint64_t ns = spin((uint64_t)work_ms * 1000000 / (uint64_t)rounds);

	__asm__ volatile("" ::: "memory");
	return ns;
}

static uint64_t __attribute__((noinline)) mutex_wait(void)
{
	uint64_t t0 = now_ns();

	pthread_mutex_lock(&lock);
	__asm__ volatile("" ::: "memory");
	return now_ns() - t0;
}

static void __attribute__((noinline)) sleeper_nap(void)
{
	struct timespec ts = { 0, 5000000 };

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	__asm__ volatile("" ::: "memory");
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "holder");
	pthread_barrier_wait(&start);
	for (long r = 0; r < rounds; r++) {
		pthread_mutex_lock(&lock);
		pthread_barrier_wait(&held);
		holder_compute_ns += holder_compute();
		pthread_mutex_unlock(&lock);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker");
	pthread_barrier_wait(&start);
	for (long r = 0; r < rounds; r++) {
		pthread_barrier_wait(&held);
		worker_compute_ns += worker_compute();
		mutex_wait_ns += mutex_wait();
		pthread_mutex_unlock(&lock);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	for (;;)
		sleeper_nap();
	return NULL;
}

/* Waits for a line of standard input, or its end. */
static void wait_stdin(void)
{
	char c;
	ssize_t n;

	printf("critchain: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	do
		n = read(0, &c, 1);
	while (n > 0 ? c != '\n' : n < 0 && errno == EINTR);
}

int main(int argc, char **argv)
{
	pthread_t h, w, s;
	bool gate = false;
	uint64_t t0;

	if (argc > 1)
		hold_ms = atol(argv[1]);
	if (argc > 2)
		work_ms = atol(argv[2]);
	if (argc > 3) {
		gate = !strcmp(argv[3], "stdin");
		start_ms = gate ? 0 : atol(argv[3]);
	}
	if (argc > 4)
		rounds = atol(argv[4]);
	if (hold_ms <= work_ms || work_ms <= 0 || hold_ms > 1000000 || start_ms < 0 ||
	    start_ms >= 1000000 || rounds < 1 || rounds > 10000) {
		fprintf(stderr, "usage: critchain [HOLD_MS [WORK_MS [START_MS|stdin [ROUNDS]]]], "
			"1000000 >= HOLD_MS > WORK_MS > 0, 0 <= START_MS < 1000000, "
			"1 <= ROUNDS <= 10000\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, 3);
	pthread_barrier_init(&held, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	/* The sleeper last: its start-up then contends with no one's on the path. */
	if (pthread_create(&h, NULL, holder, NULL) || pthread_create(&w, NULL, worker, NULL) ||
	    pthread_create(&s, NULL, sleeper, NULL)) {
		perror("critchain: pthread_create");
		return 1;
	}
	if (gate) {
		wait_stdin();
	} else {
		struct timespec ts = { start_ms / 1000, (start_ms % 1000) * 1000000 };

		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
	t0 = now_ns();
	pthread_barrier_wait(&start);
	pthread_join(w, NULL);
	printf("critchain: worker_compute_ns=%llu mutex_wait_ns=%llu holder_compute_ns=%llu "
	       "main_wait_ns=%llu\n", (unsigned long long)worker_compute_ns,
	       (unsigned long long)mutex_wait_ns, (unsigned long long)holder_compute_ns,
	       (unsigned long long)(now_ns() - t0));
	/*
	 * Not joined: waiting for the sleeper's last nap would put it on the
	 * path. The exit ends both (the holder has released the mutex, the
	 * worker took it after).
	 */
	fflush(stdout);
	return 0;
}
