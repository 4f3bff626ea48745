// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer
/*
 * An off-CPU profiling target whose threads block in known functions and
 * measure, with CLOCK_MONOTONIC around each blocking call, how long they
 * were blocked there:
 *
 *   sleeper  sleeper_nap: clock_nanosleep of NAP (20 ms), again and again
 *            (woken by the timer interrupt, not by a task)
 *   reader   reader_wait: read() of a pipe, one byte at a time
 *   writer   writer_compute: computes for COMPUTE (10 ms) of wall time, then
 *            writer_send: write() of one byte to that pipe, which wakes the
 *            reader
 *
 * and, when asked:
 *
 *   --mutex  waiter mutex_wait: pthread_mutex_lock of the mutex the writer
 *            holds while it computes
 *   --vfork  vforker vfork_wait: vfork() of a child that computes for
 *            COMPUTE and exits; the parent thread waits uninterruptibly (D)
 *            meanwhile
 *
 * usage: tapblock SECONDS [--mutex] [--vfork] [--nap-us NAP] [--compute-us COMPUTE]
 *
 * Each thread is named after its role (the thread_comm and waker labels of
 * a profile).
 *
 * Every thread stops at its first round after SECONDS. On exit, one line per
 * role on stdout, for a test to parse:
 *
 *   tapblock: role=ROLE fn=FUNCTION calls=N blocked_ns=NS compute_ns=NS blocked_sq_us2=X
 *
 * (the writer's line gives the time it computed as compute_ns; X is the sum
 * of the squares of the blocked times in microseconds, from which a test
 * bounds the error of an estimate that samples one call in N). Blocked time includes the run-queue wait after the wakeup,
 * as an off-CPU interval from switch-out to switch-in does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t nap_ns = 20 * 1000000LL;
static int64_t compute_ns = 10 * 1000000LL;

struct role {
	const char *name, *fn;
	uint64_t calls, blocked_ns, compute_ns;
	double blocked_sq_us2;	/* sum of squared blocked times, for a test's error bound */
};

static struct role sleeper = { .name = "sleeper", .fn = "sleeper_nap" };
static struct role reader = { .name = "reader", .fn = "reader_wait" };
static struct role writer = { .name = "writer", .fn = "writer_send" };
static struct role waiter = { .name = "waiter", .fn = "mutex_wait" };
static struct role vforker = { .name = "vforker", .fn = "vfork_wait" };

static int64_t end_ns;
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "tapblock: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void blocked(struct role *r, int64_t ns)
{
	r->blocked_ns += ns;
	r->blocked_sq_us2 += (ns / 1e3) * (ns / 1e3);
	r->calls++;
}

/* Burns CPU until @ns of CLOCK_MONOTONIC have passed. */
__attribute__((noipa)) static void spin_for(int64_t ns)
{
	int64_t until = now_ns() + ns;
	uint64_t x = sink;

	while (now_ns() < until)
		for (int i = 0; i < 1000; i++)
			x = (x * 6364136223846793005ULL + 1) ^ (x >> 13);
	sink = x;
}

__attribute__((noipa)) static void sleeper_nap(void)
{
	struct timespec ts = { nap_ns / 1000000000, nap_ns % 1000000000 };
	int64_t t0 = now_ns();

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	blocked(&sleeper, now_ns() - t0);
}

static void *sleeper_main(void *arg)
{
	pthread_setname_np(pthread_self(), "sleeper");
	(void)arg;
	while (now_ns() < end_ns)
		sleeper_nap();
	return NULL;
}

/* One byte from the pipe; false at end of file. */
__attribute__((noipa)) static bool reader_wait(void)
{
	char c;
	int64_t t0 = now_ns();
	ssize_t n = read(pipefd[0], &c, 1);

	if (n < 0)
		die("read");
	if (n == 0)
		return false;
	blocked(&reader, now_ns() - t0);
	return true;
}

static void *reader_main(void *arg)
{
	pthread_setname_np(pthread_self(), "reader");
	(void)arg;
	while (reader_wait())
		;
	return NULL;
}

__attribute__((noipa)) static void writer_compute(void)
{
	int64_t t0 = now_ns();

	spin_for(compute_ns);
	writer.compute_ns += now_ns() - t0;
}

__attribute__((noipa)) static void writer_send(void)
{
	if (write(pipefd[1], "x", 1) != 1)
		die("write");
	writer.calls++;
}

static void *writer_main(void *arg)
{
	pthread_setname_np(pthread_self(), "writer");
	bool with_mutex = *(bool *)arg;

	while (now_ns() < end_ns) {
		if (with_mutex)
			pthread_mutex_lock(&lock);
		writer_compute();
		if (with_mutex)
			pthread_mutex_unlock(&lock);
		writer_send();
	}
	close(pipefd[1]);	/* the reader sees end of file and stops */
	return NULL;
}

/* Waits for the mutex the writer holds while it computes. */
__attribute__((noipa)) static void mutex_wait(void)
{
	int64_t t0 = now_ns();

	pthread_mutex_lock(&lock);
	blocked(&waiter, now_ns() - t0);
	pthread_mutex_unlock(&lock);
}

static void *waiter_main(void *arg)
{
	pthread_setname_np(pthread_self(), "waiter");
	(void)arg;
	while (now_ns() < end_ns) {
		mutex_wait();
		/*
		 * Let the writer take the lock again before the next attempt,
		 * so that this thread waits for it rather than spinning
		 * between two of the writer's rounds.
		 */
		sched_yield();
	}
	return NULL;
}

/*
 * The calling thread sleeps uninterruptibly (TASK_KILLABLE, shown as D)
 * until the child exits. The child only computes and calls _exit, which is
 * what a vfork child may do.
 */
__attribute__((noipa)) static void vfork_wait(void)
{
	int64_t t0 = now_ns();
	pid_t pid = vfork();

	if (pid < 0)
		die("vfork");
	if (pid == 0) {
		spin_for(compute_ns);
		_exit(0);
	}
	blocked(&vforker, now_ns() - t0);
	if (waitpid(pid, NULL, 0) < 0)
		die("waitpid");
}

static void *vforker_main(void *arg)
{
	pthread_setname_np(pthread_self(), "vforker");
	(void)arg;
	while (now_ns() < end_ns)
		vfork_wait();
	return NULL;
}

/* A duration in microseconds, 1 us .. 10 s; -1 if it is not one. */
static int64_t arg_us(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	return *end || v < 1 || v > 10000000 ? -1 : v;
}

static void report(const struct role *r)
{
	printf("tapblock: role=%s fn=%s calls=%llu blocked_ns=%llu compute_ns=%llu"
	       " blocked_sq_us2=%.0f\n", r->name, r->fn, (unsigned long long)r->calls,
	       (unsigned long long)r->blocked_ns, (unsigned long long)r->compute_ns,
	       r->blocked_sq_us2);
}

int main(int argc, char **argv)
{
	bool with_mutex = false, with_vfork = false;
	pthread_t t[5];
	int nt = 0, err;
	char *end;
	double secs;

	if (argc < 2)
		goto usage;
	secs = strtod(argv[1], &end);
	if (*end || !(secs > 0 && secs <= 3600))
		goto usage;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--mutex"))
			with_mutex = true;
		else if (!strcmp(argv[i], "--vfork"))
			with_vfork = true;
		else if (!strcmp(argv[i], "--nap-us") && i + 1 < argc)
			nap_ns = 1000 * arg_us(argv[++i]);
		else if (!strcmp(argv[i], "--compute-us") && i + 1 < argc)
			compute_ns = 1000 * arg_us(argv[++i]);
		else
			goto usage;
	}
	if (nap_ns < 0 || compute_ns < 0)
		goto usage;
	if (pipe(pipefd))
		die("pipe");
	end_ns = now_ns() + (int64_t)(secs * 1e9);

	err = pthread_create(&t[nt++], NULL, sleeper_main, NULL);
	if (!err)
		err = pthread_create(&t[nt++], NULL, reader_main, NULL);
	if (!err)
		err = pthread_create(&t[nt++], NULL, writer_main, &with_mutex);
	if (!err && with_mutex)
		err = pthread_create(&t[nt++], NULL, waiter_main, NULL);
	if (!err && with_vfork)
		err = pthread_create(&t[nt++], NULL, vforker_main, NULL);
	if (err) {
		errno = err;
		die("pthread_create");
	}
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);

	report(&sleeper);
	report(&reader);
	report(&writer);
	if (with_mutex)
		report(&waiter);
	if (with_vfork)
		report(&vforker);
	return 0;
usage:
	fprintf(stderr, "usage: tapblock SECONDS [--mutex] [--vfork] [--nap-us N] [--compute-us N]\n");
	return 2;
}
