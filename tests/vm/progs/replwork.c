// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer -Wl,--no-as-needed -Lbuild/vm/progs -l:libtapwork -Wl,-rpath,$ORIGIN
/*
 * A profiling target for test-daemon-bad-binaries.sh: its binary and its
 * library (libtapwork, found through its $ORIGIN rpath: a copy next to a
 * copy of replwork is the one it loads) are changed on disk while it
 * runs. It waits, mapped and idle (no CPU, so no sample), until SIGUSR1,
 * then computes for SECONDS:
 *
 *   main -> run -> repl_a -> repl_leaf          half of the work units
 *   main -> run -> repl_b -> libfunc -> leaf_y  the other half
 *
 * usage: replwork SECONDS
 * Prints "replwork: ready pid=PID" once waiting, "replwork: done rounds=R"
 * at the end.
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

__attribute__((noipa)) uint64_t repl_leaf(uint64_t units, uint64_t seed);
__attribute__((noipa)) uint64_t repl_leaf(uint64_t units, uint64_t seed)
{
	uint64_t x = seed;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		x = (x * 6364136223846793005ULL + 1442695040888963407ULL) ^ (x >> 17);
	return x;
}

__attribute__((noipa)) uint64_t repl_a(uint64_t units, uint64_t seed);
__attribute__((noipa)) uint64_t repl_a(uint64_t units, uint64_t seed)
{
	uint64_t r = repl_leaf(units, seed);

	__asm__ volatile("" : "+r"(r));	/* no tail call: repl_a stays on the stack */
	return r + 1;
}

__attribute__((noipa)) uint64_t repl_b(uint64_t units, uint64_t seed);
__attribute__((noipa)) uint64_t repl_b(uint64_t units, uint64_t seed)
{
	uint64_t r = libfunc(units, seed);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noipa)) static uint64_t run(void)
{
	uint64_t rounds = 0, s = 1;

	while (!stop) {
		s = repl_a(1, s);
		s = repl_b(1, s);
		rounds++;
	}
	sink = s;
	return rounds;
}

int main(int argc, char **argv)
{
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("replwork: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	signal(SIGALRM, on_alarm);
	alarm(seconds ? seconds : 1);
	printf("replwork: done rounds=%llu\n", (unsigned long long)run());
	return 0;
}
