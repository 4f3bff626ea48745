// SPDX-License-Identifier: GPL-2.0
/*
 * A context-switch-heavy benchmark: two threads pass one byte back and
 * forth over two pipes, so every round trip blocks and wakes each thread
 * once (four context switches when they share a CPU, two wakeups across
 * CPUs otherwise).
 *
 * usage: pingpong [--count FILE] ROUND_TRIPS [MAX_SECONDS]
 *
 * With MAX_SECONDS it stops early once that much time has passed, so that
 * a test on a slow host stays within its time limit (checked every 256
 * round trips). With --count, FILE (created, or truncated, to 8 bytes) is
 * mapped shared and holds the round trips done so far, a native-endian
 * u64 stored after each one: a benchmark reads it to measure a running
 * pingpong's rate over windows of its choosing. Prints one line:
 * "pingpong: round_trips=N seconds=S rate=R offcpu=O"
 * (N the round trips done, R round trips per second of CLOCK_MONOTONIC,
 * from the first byte sent to the last one received; O the seconds the
 * two threads spent off CPU in all, each from its start to its end: wall
 * time less its own CLOCK_THREAD_CPUTIME_ID, the truth an off-CPU profile
 * can be held to).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int ping_fd[2], pong_fd[2];
static long rounds;

/* The byte that tells the second thread to stop without answering. */
#define QUIT 'q'

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Passes one byte from @in to @out; false when it was QUIT. */
static bool xfer(int in, int out)
{
	char c;

	if (read(in, &c, 1) != 1)
		die("read");
	if (c == QUIT)
		return false;
	if (write(out, &c, 1) != 1)
		die("write");
	return true;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* Off-CPU seconds of the calling thread since (@wall0, @cpu0). */
static double offcpu_since(double wall0, double cpu0)
{
	return (now() - wall0) - (clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0);
}

static double pong_offcpu;

/* The second thread: answers every byte. */
static void *pong(void *arg)
{
	double wall0 = now(), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (!xfer(ping_fd[0], pong_fd[1]))
			break;
	pong_offcpu = offcpu_since(wall0, cpu0);
	return NULL;
}

/* The u64 of --count FILE, mapped; a private one without --count. */
static uint64_t *count_map(const char *path)
{
	static uint64_t none;
	void *p;
	int fd;

	if (!path)
		return &none;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(uint64_t)))
		die(path);
	p = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die(path);
	close(fd);
	return p;
}

int main(int argc, char **argv)
{
	const char *count_path = NULL;
	double t0, secs, max_secs = 0;
	uint64_t *count;
	pthread_t t;
	long done;
	char *end;
	int err;

	if (argc > 2 && !strcmp(argv[1], "--count")) {
		count_path = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || argc > 3 || (rounds = strtol(argv[1], &end, 10)) <= 0 || *end ||
	    (argc == 3 && ((max_secs = strtod(argv[2], &end)) <= 0 || *end))) {
		fprintf(stderr, "usage: pingpong [--count FILE] ROUND_TRIPS [MAX_SECONDS]\n");
		return 2;
	}
	count = count_map(count_path);
	double wall0 = now(), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);

	if (pipe(ping_fd) || pipe(pong_fd))
		die("pipe");
	err = pthread_create(&t, NULL, pong, NULL);
	if (err) {
		errno = err;
		die("pthread_create");
	}
	t0 = now();
	for (done = 0; done < rounds; done++) {
		if (max_secs && done % 256 == 0 && now() - t0 >= max_secs) {
			if (write(ping_fd[1], (char[]){ QUIT }, 1) != 1)
				die("write");
			break;
		}
		if (write(ping_fd[1], "x", 1) != 1)
			die("write");
		char c;

		if (read(pong_fd[0], &c, 1) != 1)
			die("read");
		__atomic_store_n(count, (uint64_t)done + 1, __ATOMIC_RELAXED);
	}
	secs = now() - t0;
	pthread_join(t, NULL);
	printf("pingpong: round_trips=%ld seconds=%.6f rate=%.1f offcpu=%.6f\n", done, secs,
	       done / secs, offcpu_since(wall0, cpu0) + pong_offcpu);
	return 0;
}
