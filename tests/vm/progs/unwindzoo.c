// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer -Wl,-z,lazy -Wl,--no-as-needed -Lbuild/vm/progs -l:libtapwork -Wl,-rpath,$ORIGIN
/*
 * The user stacks an unwinder gets wrong, in one target, for comparing the
 * module's unwinder with the userspace one (the unwind-agreement test):
 *
 *   deep	a recursion 40 frames deep, no frame pointers (CFA from rsp)
 *   lib	calls into a shared library (libtapwork) through its PLT,
 *		bound lazily (-z lazy): the first calls run the PLT stub and
 *		the dynamic linker's resolver
 *   libc	qsort() calling back into this program: frames of libc
 *		between frames of the program
 *   signal	work inside a SIGPROF handler, so that samples land above a
 *		signal frame (the kernel's rt_sigframe and __restore_rt)
 *   alloca	frames whose size is known only at run time (CFA from rbp)
 *   vdso	clock_gettime() through libc into the vDSO, called from
 *		code without frame pointers: on the way into or out of the
 *		vDSO, rbp is not its frame's
 *
 * usage: unwindzoo [SECONDS]   (default 3)
 * Prints "unwindzoo: rounds R signals S" at the end.
 */
#include <alloca.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

uint64_t libfunc(uint64_t units, uint64_t seed);	/* libtapwork */

#define DEPTH	40

static volatile sig_atomic_t stop;
static volatile uint64_t sink;
static volatile uint64_t signals;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static __attribute__((noinline)) uint64_t spin(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static __attribute__((noinline)) uint64_t deep(int level, uint64_t x)
{
	if (level == 0)
		return spin(20000, x);
	x = deep(level - 1, x + (uint64_t)level);
	/* Not a tail call: the frame stays on the stack. */
	return x ^ (uint64_t)level;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = spin(8, *(const uint64_t *)a);
	uint64_t y = spin(8, *(const uint64_t *)b);

	return x < y ? -1 : x > y;
}

static __attribute__((noinline)) uint64_t libc_callbacks(uint64_t seed)
{
	uint64_t v[512];

	for (unsigned int i = 0; i < 512; i++)
		v[i] = spin(1, seed + i);
	qsort(v, 512, sizeof(v[0]), cmp_u64);
	return v[0];
}

static __attribute__((noinline)) uint64_t with_alloca(size_t n, uint64_t x)
{
	volatile uint8_t *buf = alloca(n);

	memset((void *)buf, (int)x, n);
	return spin(5000, x + buf[n / 2]);
}

static __attribute__((noinline, noclone)) uint64_t timed(unsigned int n, uint64_t x)
{
	struct timespec ts;

	for (unsigned int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x += (uint64_t)ts.tv_nsec;
	}
	return x;
}

/*
 * Five times deep()'s work per call, at a tenth of its calls: about 3% of
 * the samples, enough for the test's ratios run after run.
 */
static void on_prof(int sig)
{
	(void)sig;
	signals++;
	sink += spin(100000, signals);
}

int main(int argc, char **argv)
{
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	uint64_t rounds = 0, x = 1;

	signal(SIGALRM, on_alarm);
	signal(SIGPROF, on_prof);
	setitimer(ITIMER_PROF, &it, NULL);
	alarm(seconds ? seconds : 1);
	while (!stop) {
		x = deep(DEPTH, x);
		x += libfunc(2, x);
		x += libc_callbacks(x);
		x += with_alloca(64 + (x & 1023), x);
		x += timed(500, x);
		rounds++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	sink += x;
	printf("unwindzoo: rounds %llu signals %llu\n",
	       (unsigned long long)rounds, (unsigned long long)signals);
	return 0;
}
