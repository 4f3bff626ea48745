// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer -Wl,--no-as-needed -Lbuild/vm/progs -l:libtapwork -Wl,-rpath,$ORIGIN
/*
 * A profiling target with known call chains in known proportions, built
 * like Debian's binaries (-O2, no frame pointers) and using a shared
 * library (libtapwork):
 *
 *   main -> run -> a -> leaf_x                 6 work units of every 10
 *   main -> run -> b -> libfunc -> leaf_y      4 work units of every 10
 *
 * leaf_x and leaf_y run the same loop per unit, so CPU time splits 60/40
 * up to how the two copies of the loop happen to run.
 *
 * usage: tapwork [SECONDS]   (default 3; stops at the next round after)
 * Prints "tapwork: rounds R units_x X units_y Y" at the end.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t libfunc(uint64_t units, uint64_t seed);	/* libtapwork */

#define UNIT_ITERS	20000

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

__attribute__((noipa)) uint64_t leaf_x(uint64_t units, uint64_t seed);
__attribute__((noipa)) uint64_t leaf_x(uint64_t units, uint64_t seed)
{
	uint64_t x = seed;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		x = (x * 6364136223846793005ULL + 1442695040888963407ULL) ^ (x >> 17);
	return x;
}

__attribute__((noipa)) uint64_t a(uint64_t units, uint64_t seed);
__attribute__((noipa)) uint64_t a(uint64_t units, uint64_t seed)
{
	uint64_t r = leaf_x(units, seed);

	__asm__ volatile("" : "+r"(r));	/* no tail call: a stays on the stack */
	return r + 1;
}

__attribute__((noipa)) uint64_t b(uint64_t units, uint64_t seed);
__attribute__((noipa)) uint64_t b(uint64_t units, uint64_t seed)
{
	uint64_t r = libfunc(units, seed);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noipa)) static uint64_t run(uint64_t *ux, uint64_t *uy)
{
	uint64_t rounds = 0, s = 1;

	while (!stop) {
		for (int k = 0; k < 10; k++) {
			if (k % 5 < 3) {	/* 0,1,2,5,6,7: six of ten */
				s = a(1, s);
				(*ux)++;
			} else {
				s = b(1, s);
				(*uy)++;
			}
		}
		rounds++;
	}
	sink = s;
	return rounds;
}

int main(int argc, char **argv)
{
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;
	uint64_t ux = 0, uy = 0, rounds;

	signal(SIGALRM, on_alarm);
	alarm(seconds ? seconds : 1);
	rounds = run(&ux, &uy);
	printf("tapwork: rounds %llu units_x %llu units_y %llu\n", (unsigned long long)rounds,
	       (unsigned long long)ux, (unsigned long long)uy);
	return 0;
}
