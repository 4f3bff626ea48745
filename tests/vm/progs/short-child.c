// SPDX-License-Identifier: GPL-2.0
/*
 * short-child [SPIN_MS [GRAND_MS [hold]]]: a short-lived process, as a
 * build's compiler runs are, for tests/vm/test-record-follow-children.sh.
 *
 * It appends "child pid=P start_ns=T" to stdout (T: CLOCK_MONOTONIC, the
 * clock of the module's records, read first thing in main()); with "hold"
 * it then reads one byte from stdin; it spins SPIN_MS ms of its own CPU
 * time (default 30) in short_child_spin(), then, unless GRAND_MS is 0,
 * forks a grandchild that appends "grandchild pid=G ppid=P start_ns=T" and
 * spins GRAND_MS ms (default 20) in short_grandchild_spin(), waits for it,
 * and exits 0. Each line is one write() to stdout opened O_APPEND by the
 * shell (>>), so the lines of many processes never mix.
 *
 * The spin counts CPU time, not wall time: a process the guest's other
 * work preempts still runs its whole SPIN_MS on a CPU, and so is sampled
 * about SPIN_MS * freq / 1000 times.
 */
// vm-cflags: -fno-omit-frame-pointer
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void say(const char *line)
{
	size_t len = strlen(line);

	if (write(STDOUT_FILENO, line, len) != (ssize_t)len)
		exit(2);
}

/* Spin @ms ms of this process's CPU time. noinline: a frame of its own. */
static __attribute__((noinline)) void spin(unsigned int ms)
{
	uint64_t end = now_ns(CLOCK_PROCESS_CPUTIME_ID) + (uint64_t)ms * 1000000u;

	while (now_ns(CLOCK_PROCESS_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i * 2654435761u;
}

__attribute__((noinline)) void short_child_spin(unsigned int ms);
__attribute__((noinline)) void short_grandchild_spin(unsigned int ms);

void short_child_spin(unsigned int ms)
{
	spin(ms);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

void short_grandchild_spin(unsigned int ms)
{
	spin(ms);
	__asm__ volatile("" ::: "memory");
}

static unsigned int arg_ms(int argc, char **argv, int i, unsigned int def)
{
	char *end;
	unsigned long v;

	if (argc <= i)
		return def;
	v = strtoul(argv[i], &end, 10);
	if (*end || end == argv[i] || v > 10000) {
		fprintf(stderr, "short-child: '%s': not a number of ms up to 10000\n", argv[i]);
		exit(2);
	}
	return (unsigned int)v;
}

int main(int argc, char **argv)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	unsigned int spin_ms = arg_ms(argc, argv, 1, 30), grand_ms = arg_ms(argc, argv, 2, 20);
	char line[128];
	int status;
	pid_t g;

	snprintf(line, sizeof(line), "child pid=%d start_ns=%llu\n", (int)getpid(),
		 (unsigned long long)t0);
	say(line);
	if (argc > 3) {
		char c;

		if (strcmp(argv[3], "hold") || read(STDIN_FILENO, &c, 1) != 1) {
			fprintf(stderr, "short-child: 'hold' and a byte on stdin expected\n");
			return 2;
		}
	}
	short_child_spin(spin_ms);
	if (!grand_ms)
		return 0;

	g = fork();
	if (g < 0) {
		perror("short-child: fork");
		return 2;
	}
	if (g == 0) {
		t0 = now_ns(CLOCK_MONOTONIC);
		snprintf(line, sizeof(line), "grandchild pid=%d ppid=%d start_ns=%llu\n",
			 (int)getpid(), (int)getppid(), (unsigned long long)t0);
		say(line);
		short_grandchild_spin(grand_ms);
		_exit(0);
	}
	if (waitpid(g, &status, 0) != g || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "short-child: the grandchild failed\n");
		return 2;
	}
	return 0;
}
