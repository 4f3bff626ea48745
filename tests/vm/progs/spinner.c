// SPDX-License-Identifier: GPL-2.0
/*
 * spinner: a CPU-bound profiling target.
 *
 * usage: spinner [--threads N] [--pin] [--wait] [--cpu-ms MS [--period-us T]]
 *
 *   --threads N  N threads spin (default 1); with --pin, thread i is pinned
 *                to the i-th CPU of the process's affinity mask, so that
 *                N = nproc loads every CPU
 *   --wait       print "ready pid=PID" and block (asleep, using no CPU)
 *                until SIGUSR1 before spinning
 *   --cpu-ms MS  spin until the process has used MS ms of CPU time since
 *                the spin began, then print "done cpu_us=U wall_us=W ...",
 *                U being utime+stime from getrusage(RUSAGE_SELF) over the
 *                spin only, and exit; without it, spin until killed
 *   --period-us T  with --cpu-ms: also report the gaps in the spin, times
 *                when CLOCK_MONOTONIC jumped by 1 ms or more between two
 *                reads a few hundred instructions apart (the vCPU was not
 *                running: host load under TCG), as gaps=N gaps_us=SUM
 *                gap_max_us=MAX lost_periods=P, P = sum over the gaps of
 *                (gap - T) / T: periods of a T-periodic timer that a late
 *                expiry skips. A diagnostic for the rate test's message.
 *
 * Every line is flushed as it is printed: the tests read them from a file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static long long tv_us(struct timeval tv)
{
	return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

static long long ts_us(struct timespec ts)
{
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return tv_us(ru.ru_utime) + tv_us(ru.ru_stime);
}

static long long clock_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts_us(ts);
}

/* The busy loop: no system call, no memory traffic but one store. */
static void spin_forever(void)
{
	unsigned long x = 1;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	spin_forever();
	return NULL;
}

/* The affinity mask the process started with: pin_to() picks from it. */
static cpu_set_t start_mask;

/* Pins the calling thread to the @nth CPU of start_mask (modulo its size). */
static int pin_to(int nth)
{
	cpu_set_t one;
	int cpu, seen = 0;

	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &start_mask))
			continue;
		if (seen++ == nth % CPU_COUNT(&start_mask)) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
		}
	}
	return -EINVAL;
}

static void usage(void)
{
	fprintf(stderr, "usage: spinner [--threads N] [--pin] [--wait] [--cpu-ms MS [--period-us T]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long threads = 1, cpu_ms = 0;
	int pin = 0, wait_sig = 0, i, sig, err;
	long long c0, w0, c1, w1, gaps_us = 0, gap_max = 0, period_us = 0;
	long gaps_n = 0;
	double lost_pp = 0;
	sigset_t set;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cpu-ms") && i + 1 < argc)
			cpu_ms = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--period-us") && i + 1 < argc)
			period_us = strtoll(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--pin"))
			pin = 1;
		else if (!strcmp(argv[i], "--wait"))
			wait_sig = 1;
		else
			usage();
	}
	if (threads < 1 || threads > 1024 || cpu_ms < 0)
		usage();
	if (sched_getaffinity(0, sizeof(start_mask), &start_mask)) {
		perror("spinner: sched_getaffinity");
		return 1;
	}

	if (wait_sig) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready pid=%d\n", getpid());
		if (sigwait(&set, &sig))
			return 1;
	}

	c0 = cpu_us();
	w0 = clock_us(CLOCK_MONOTONIC);
	for (i = 1; i < threads; i++) {
		pthread_t t;

		if (pin) {
			/* The new thread inherits the mask it is created with. */
			err = pin_to(i);
			if (err) {
				fprintf(stderr, "spinner: pinning thread %d: %s\n", i, strerror(-err));
				return 1;
			}
		}
		err = pthread_create(&t, NULL, thread_main, NULL);
		if (err) {
			fprintf(stderr, "spinner: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	if (pin) {
		err = pin_to(0);
		if (err) {
			fprintf(stderr, "spinner: pinning thread 0: %s\n", strerror(-err));
			return 1;
		}
	}
	printf("spinning threads=%ld\n", threads);
	if (!cpu_ms)
		spin_forever();

	/*
	 * CLOCK_MONOTONIC is vDSO and read every 256 iterations: the gaps
	 * need a fine grain. CLOCK_PROCESS_CPUTIME_ID is exact
	 * (sum_exec_runtime) but a system call that takes the runqueue lock:
	 * it is read once per millisecond of CLOCK_MONOTONIC, so that the
	 * target spins in user mode like the CPU-bound code it stands for
	 * (read as often as the other, it kept the target in the kernel most
	 * of the time, interrupts pending behind the lock). The spin ends at
	 * most 1 ms of CPU time late; cpu_us is read after it.
	 */
	{
		long long until = clock_us(CLOCK_PROCESS_CPUTIME_ID) + cpu_ms * 1000;
		long long prev = clock_us(CLOCK_MONOTONIC), now, g, check = prev;
		unsigned long x = 1, n;

		for (;;) {
			for (n = 0; n < 256; n++) {
				x = x * 6364136223846793005UL + 1442695040888963407UL;
				sink = x;
			}
			now = clock_us(CLOCK_MONOTONIC);
			g = now - prev;
			prev = now;
			if (g >= 1000) {
				gaps_n++;
				gaps_us += g;
				if (period_us && g > period_us)
					lost_pp += (double)(g - period_us) / period_us;
				if (g > gap_max)
					gap_max = g;
			}
			if (now - check < 1000)
				continue;
			check = now;
			if (clock_us(CLOCK_PROCESS_CPUTIME_ID) >= until)
				break;
		}
	}
	c1 = cpu_us();
	w1 = clock_us(CLOCK_MONOTONIC);
	printf("done cpu_us=%lld wall_us=%lld gaps=%ld gaps_us=%lld gap_max_us=%lld lost_periods=%.1f\n",
	       c1 - c0, w1 - w0, gaps_n, gaps_us, gap_max, lost_pp);
	return 0;
}
