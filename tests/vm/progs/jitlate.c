// SPDX-License-Identifier: GPL-2.0
/*
 * jitlate SECONDS: a JIT that names its code only as it exits, as a JVM
 * run with -XX:+DumpPerfMapAtExit does. It makes two functions in
 * anonymous executable memory, jit_alpha and jit_beta (each a countdown
 * loop: no frame, no unwind information), and calls them from main for
 * SECONDS of CPU: each call is alpha's with probability 3/4, for a count
 * drawn from [CHUNK_MIN, CHUNK_MAX). Order and lengths are random so that
 * no period of the calls can beat with the sampling timer's: a fixed
 * alpha, alpha, alpha, beta of fixed calls, each about one sampling period
 * long under TCG, gave alpha 66% of the samples for 74.6% of the time.
 * It measures the thread CPU time of each itself, prints
 *	jitlate: alpha=NS beta=NS
 * and then, last, writes /tmp/perf-PID.map naming the two.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* uint64_t f(uint64_t n): mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const uint8_t countdown[] = {
	0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3,
};

#define BETA_OFFSET	0x100
#define CODE_SIZE	0x1000
#define CHUNK_MIN	100000	/* iterations a call */
#define CHUNK_MAX	300000

typedef uint64_t (*jit_fn)(uint64_t n);

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* xorshift64: the calls' pseudo-random order and lengths. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* Run @f on @n and add the thread CPU time it took to *@ns. */
static void timed(jit_fn f, uint64_t n, uint64_t *ns)
{
	uint64_t t0 = thread_ns();

	f(n);
	*ns += thread_ns() - t0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	uint64_t alpha_ns = 0, beta_ns = 0, end, state, r, n;
	jit_fn alpha, beta;
	uint8_t *code;
	char path[64];
	FILE *f;

	if (secs <= 0) {
		fprintf(stderr, "usage: jitlate SECONDS\n");
		return 2;
	}
	code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitlate: mmap");
		return 1;
	}
	memcpy(code, countdown, sizeof(countdown));
	memcpy(code + BETA_OFFSET, countdown, sizeof(countdown));
	if (mprotect(code, CODE_SIZE, PROT_READ | PROT_EXEC) < 0) {
		perror("jitlate: mprotect");
		return 1;
	}
	alpha = (jit_fn)(uintptr_t)code;
	beta = (jit_fn)(uintptr_t)(code + BETA_OFFSET);
	state = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull | 1;
	end = thread_ns() + (uint64_t)(secs * 1e9);
	while (thread_ns() < end) {
		r = next_random(&state);
		n = CHUNK_MIN + (r >> 8) % (CHUNK_MAX - CHUNK_MIN);
		if ((r & 3) != 0)
			timed(alpha, n, &alpha_ns);
		else
			timed(beta, n, &beta_ns);
	}
	printf("jitlate: alpha=%llu beta=%llu\n", (unsigned long long)alpha_ns,
	       (unsigned long long)beta_ns);
	fflush(stdout);

	/* The perf map, last: nothing could name the code before. */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f) {
		perror("jitlate: /tmp/perf-PID.map");
		return 1;
	}
	fprintf(f, "%lx %zx jit_alpha\n%lx %zx jit_beta\n", (unsigned long)(uintptr_t)alpha,
		sizeof(countdown), (unsigned long)(uintptr_t)beta, sizeof(countdown));
	if (fclose(f) != 0) {
		perror("jitlate: writing /tmp/perf-PID.map");
		return 1;
	}
	return 0;
}
