// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer
/*
 * The first half of the exec test: computes in exec_a_spin for SECONDS or
 * until SIGUSR1, then execs PROGRAM ARGS... in the same process (same pid),
 * as a shell's `exec` does.
 *
 * usage: tapexec-a SECONDS PROGRAM [ARGS...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) void exec_a_spin(double secs);
__attribute__((noipa)) void exec_a_spin(double secs)
{
	double until = now() + secs;
	uint64_t x = sink;

	while (!go && now() < until)
		for (int i = 0; i < 10000; i++)
			x = (x * 6364136223846793005ULL + 1) ^ (x >> 13);
	sink = x;
}

/*
 * Never called with a nonzero argument: code after exec_a_spin that covers
 * the addresses where tapexec-b has exec_b_spin.
 */
__attribute__((noipa)) uint64_t exec_a_padding(uint64_t n);
__attribute__((noipa)) uint64_t exec_a_padding(uint64_t n)
{
#define P(k) n = n * (k) + ((n >> 5) ^ (k));
#define P10(k) P(k##0) P(k##1) P(k##2) P(k##3) P(k##4) P(k##5) P(k##6) P(k##7) P(k##8) P(k##9)
	if (n) {
		P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7) P10(8) P10(9)
		P10(11) P10(12) P10(13) P10(14) P10(15) P10(16) P10(17) P10(18) P10(19)
	}
	return n;
}

int main(int argc, char **argv)
{
	char *end;
	double secs;

	if (argc < 3 || (secs = strtod(argv[1], &end)) <= 0 || *end) {
		fprintf(stderr, "usage: tapexec-a SECONDS PROGRAM [ARGS...]\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	sink = exec_a_padding(0);
	exec_a_spin(secs);
	printf("tapexec-a: pid %d execs %s\n", getpid(), argv[2]);
	fflush(stdout);
	execv(argv[2], argv + 2);
	fprintf(stderr, "tapexec-a: exec %s: %s\n", argv[2], strerror(errno));
	return 1;
}
