// SPDX-License-Identifier: GPL-2.0
/*
 * fork-storm: a fork-heavy, multi-threaded load for the lifecycle tests.
 *
 * usage: fork-storm [--threads N]
 *
 * N threads (default: the number of CPUs) spin; the main thread forks
 * short-lived children in a loop: each child touches some memory, and
 * either exits at once, or starts a thread of its own and exits while that
 * thread runs (an exit with a live thread, and mm teardown under sampling),
 * or execs this program again with --exit, which exits as soon as the new
 * image runs (exec, then exit of a fresh mm).
 * Prints "ready pid=PID threads=N" once the threads run, and every second
 * "forks=COUNT execs=COUNT failed=COUNT" (children that exec'd, children
 * that did not exit 0); runs until killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *spin(void *arg)
{
	unsigned long x = (unsigned long)arg;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
	return NULL;
}

static void *child_thread(void *arg)
{
	(void)arg;
	for (;;)
		sink++;
	return NULL;
}

static void child(unsigned long n)
{
	char *p = malloc(64 * 1024);
	pthread_t t;

	if (p)
		memset(p, (int)n, 64 * 1024);
	if (n % 4 == 0 && !pthread_create(&t, NULL, child_thread, NULL)) {
		/* Let the thread start, then exit the group under it. */
		for (int i = 0; i < 100000; i++)
			sink++;
	}
	if (n % 4 == 1) {
		execl("/proc/self/exe", "fork-storm", "--exit", (char *)NULL);
		_exit(3);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long forks = 0, execs = 0, failed = 0;
	time_t last = time(NULL);
	pthread_t t;
	long i;

	if (argc == 2 && !strcmp(argv[1], "--exit"))
		return 0;
	if (argc == 3 && !strcmp(argv[1], "--threads"))
		threads = strtol(argv[2], NULL, 10);
	else if (argc != 1) {
		fprintf(stderr, "usage: fork-storm [--threads N]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < threads; i++) {
		if (pthread_create(&t, NULL, spin, (void *)i)) {
			perror("fork-storm: pthread_create");
			return 1;
		}
	}
	printf("ready pid=%d threads=%ld\n", getpid(), threads);
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			child(forks);
		if (pid > 0) {
			int status;

			if (waitpid(pid, &status, 0) == pid &&
			    (!WIFEXITED(status) || WEXITSTATUS(status)))
				failed++;
			if (forks % 4 == 1)
				execs++;
			forks++;
		}
		if (time(NULL) != last) {
			last = time(NULL);
			printf("forks=%lu execs=%lu failed=%lu\n", forks, execs,
			       failed);
		}
	}
}
