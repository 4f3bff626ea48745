// SPDX-License-Identifier: GPL-2.0
/*
 * pathzoo SECONDS: runs 2048 distinct call paths in turn for SECONDS, for
 * the VM test count-tables (more stacks than the module's count table of
 * a CPU holds in an interval). Path v goes through PATHZOO_LEVELS levels;
 * at level k it calls f<2k> or f<2k+1> by bit k of v, each through step(),
 * then spins in leaf(). Sibling calls are not optimised away, so every
 * level leaves its frames.
 *
 * Prints "pathzoo: paths=N" (paths run) at the end.
 */
// vm-cflags: -fno-optimize-sibling-calls -fno-inline
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PATHZOO_LEVELS	11	/* 2048 paths */

static volatile unsigned long sink;

static void step(unsigned int v, int level);

#define F(n) \
	static __attribute__((noinline)) void f##n(unsigned int v, int level) \
	{ \
		step(v, level + 1); \
		sink += n; \
	}
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10)
F(11) F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19) F(20) F(21)

static void (*const fns[2 * PATHZOO_LEVELS])(unsigned int, int) = {
	f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10,
	f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21,
};

static __attribute__((noinline)) void leaf(void)
{
	for (int i = 0; i < 2000; i++)
		sink += (unsigned long)i;
}

static __attribute__((noinline)) void step(unsigned int v, int level)
{
	if (level == PATHZOO_LEVELS) {
		leaf();
		return;
	}
	fns[2 * level + ((v >> level) & 1)](v, level);
	sink++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end;
	unsigned long paths = 0;

	if (argc != 2 || atof(argv[1]) <= 0) {
		fprintf(stderr, "usage: pathzoo SECONDS\n");
		return 2;
	}
	end = now() + atof(argv[1]);
	while (now() < end)
		for (unsigned int v = 0; v < (1u << PATHZOO_LEVELS); v++, paths++)
			step(v, 0);
	printf("pathzoo: paths=%lu\n", paths);
	return 0;
}
