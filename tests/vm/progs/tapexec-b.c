// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer
/*
 * The second half of the exec test, exec'ed by tapexec-a in its process:
 * computes in exec_b_spin for SECONDS. A larger function before it puts
 * exec_b_spin at addresses where tapexec-a has other code, so that a
 * profiler symbolizing against the old binary names something else.
 *
 * usage: tapexec-b SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Never called with a nonzero argument: only shifts exec_b_spin's address. */
__attribute__((noipa)) uint64_t exec_b_padding(uint64_t n);
__attribute__((noipa)) uint64_t exec_b_padding(uint64_t n)
{
#define P(k) n = n * (k) + ((n >> 7) ^ (k));
#define P10(k) P(k##0) P(k##1) P(k##2) P(k##3) P(k##4) P(k##5) P(k##6) P(k##7) P(k##8) P(k##9)
	if (n) {
		P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7) P10(8) P10(9)
	}
	return n;
}

__attribute__((noipa)) void exec_b_spin(double secs);
__attribute__((noipa)) void exec_b_spin(double secs)
{
	double until = now() + secs;
	uint64_t x = sink;

	while (now() < until)
		for (int i = 0; i < 10000; i++)
			x = (x * 6364136223846793005ULL + 1) ^ (x >> 13);
	sink = x;
}

int main(int argc, char **argv)
{
	char *end;
	double secs;

	if (argc != 2 || (secs = strtod(argv[1], &end)) <= 0 || *end) {
		fprintf(stderr, "usage: tapexec-b SECONDS\n");
		return 2;
	}
	sink = exec_b_padding(0);
	exec_b_spin(secs);
	printf("tapexec-b: pid %d done\n", getpid());
	return 0;
}
