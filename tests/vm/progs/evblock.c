// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -O1
/*
 * evblock: threads that leave the CPU in known ways, for the causal event
 * tests (tests/vm/test-events-*.sh).
 *
 * usage: evblock MODE ROUNDS
 *
 *   sleep   a thread "evsleep" sleeps 5 ms in clock_nanosleep (ev_nap),
 *           ROUNDS times: blocked in S, woken by the timer interrupt
 *   pipe    a thread "evreader" reads a pipe a byte at a time (ev_read);
 *           a thread "evwriter" writes a byte (ev_write) every 2 ms,
 *           ROUNDS times: the reader is woken by the writer
 *   vfork   a thread "evvfork" vforks (ev_vfork) ROUNDS times a child
 *           that computes for 5 ms and exits: the parent waits in D
 *   spin    two threads "evspin" pinned to the first CPU of the affinity
 *           mask compute for ROUNDS ms of wall time each: they preempt
 *           each other (R+)
 *   proc    ROUNDS times: a thread "evthread" is created and joined, then
 *           a child is forked that execs this program with "exit 3"
 *   exit    exit with status ROUNDS at once (the exec'd child of proc)
 *
 * Before the work it prints "ready pid=PID" and, for each thread, "tid
 * role=NAME tid=TID"; then "start", waits for a line on stdin ("go") or
 * for 1 s when stdin is at end of file, and does the work; at the end
 * "done". Lines are flushed as printed: tests read them from a file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long rounds;
static const char *self;
static int pipefd[2];
static volatile unsigned long sink;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	/* One line at a time: two threads' lines would otherwise mix. */
	flockfile(stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
}

static void die(const char *what)
{
	fprintf(stderr, "evblock: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void compute_ns(long long ns)
{
	long long end = now_ns() + ns;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

/* The named functions are noinline: a test looks for them in stacks. */
__attribute__((noinline)) void ev_nap(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

__attribute__((noinline)) void ev_read(void)
{
	char c;

	if (read(pipefd[0], &c, 1) != 1)
		die("read");
}

__attribute__((noinline)) void ev_write(void)
{
	if (write(pipefd[1], "x", 1) != 1)
		die("write");
}

__attribute__((noinline)) void ev_vfork(void)
{
	pid_t pid = vfork();

	if (pid < 0)
		die("vfork");
	if (!pid) {
		compute_ns(5 * 1000 * 1000);
		_exit(0);
	}
	if (waitpid(pid, NULL, 0) != pid)
		die("waitpid");
}

static pthread_barrier_t ready, go;

static void *sleeper(void *arg)
{
	for (long i = 0; i < rounds; i++)
		ev_nap();
	return arg;
}

static void *reader(void *arg)
{
	for (long i = 0; i < rounds; i++)
		ev_read();
	return arg;
}

static void *writer(void *arg)
{
	for (long i = 0; i < rounds; i++) {
		ev_nap();	/* not CPU time: the reader must be asleep */
		ev_write();
	}
	return arg;
}

static void *vforker(void *arg)
{
	for (long i = 0; i < rounds; i++)
		ev_vfork();
	return arg;
}

static int spin_cpu;

static void *spinner(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(spin_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	compute_ns(rounds * 1000 * 1000LL);
	return arg;
}

static void *nothing(void *arg)
{
	return arg;
}

struct thread {
	const char *name;
	void *(*fn)(void *);
};

static void *trampoline(void *arg)
{
	struct thread *t = arg;

	prctl(PR_SET_NAME, t->name);
	say("tid role=%s tid=%ld", t->name, (long)syscall(SYS_gettid));
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&go);
	return t->fn(NULL);
}

static void wait_go(void)
{
	char line[16];

	say("start");
	/* A test says go, or stdin is /dev/null: then give it a second. */
	if (!fgets(line, sizeof(line), stdin))
		sleep(1);
}

static void run_threads(struct thread *t, int n)
{
	pthread_t th[2];
	int i;

	pthread_barrier_init(&ready, NULL, (unsigned int)n + 1);
	pthread_barrier_init(&go, NULL, (unsigned int)n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, trampoline, &t[i]))
			die("pthread_create");
	pthread_barrier_wait(&ready);
	wait_go();
	pthread_barrier_wait(&go);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void proc_rounds(void)
{
	char arg[16];
	pthread_t th;
	pid_t pid;
	int status;

	wait_go();
	for (long i = 0; i < rounds; i++) {
		if (pthread_create(&th, NULL, nothing, NULL))
			die("pthread_create");
		pthread_join(th, NULL);
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			snprintf(arg, sizeof(arg), "3");
			execl(self, self, "exit", arg, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		say("child pid=%d status=%d", pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

int main(int argc, char **argv)
{
	struct thread sl[] = { { "evsleep", sleeper } };
	struct thread pp[] = { { "evreader", reader }, { "evwriter", writer } };
	struct thread vf[] = { { "evvfork", vforker } };
	struct thread sp[] = { { "evspin", spinner }, { "evspin", spinner } };
	cpu_set_t set;
	const char *mode;

	if (argc != 3) {
		fprintf(stderr, "usage: evblock sleep|pipe|vfork|spin|proc|exit ROUNDS\n");
		return 2;
	}
	self = argv[0];
	mode = argv[1];
	rounds = strtol(argv[2], NULL, 10);
	if (!strcmp(mode, "exit"))
		return (int)rounds;
	say("ready pid=%d", getpid());

	if (!strcmp(mode, "sleep")) {
		run_threads(sl, 1);
	} else if (!strcmp(mode, "pipe")) {
		if (pipe(pipefd))
			die("pipe");
		run_threads(pp, 2);
	} else if (!strcmp(mode, "vfork")) {
		run_threads(vf, 1);
	} else if (!strcmp(mode, "spin")) {
		if (sched_getaffinity(0, sizeof(set), &set))
			die("sched_getaffinity");
		for (spin_cpu = 0; !CPU_ISSET(spin_cpu, &set); spin_cpu++)
			;
		say("cpu %d", spin_cpu);
		run_threads(sp, 2);
	} else if (!strcmp(mode, "proc")) {
		proc_rounds();
	} else {
		fprintf(stderr, "evblock: unknown mode '%s'\n", mode);
		return 2;
	}
	say("done");
	return 0;
}
