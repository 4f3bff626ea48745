// SPDX-License-Identifier: GPL-2.0
/*
 * exec-storm: short-lived processes that exec and exit while being
 * profiled, for test-daemon-exec-storm.sh.
 *
 * usage: exec-storm SECONDS TAPEXEC_A TAPEXEC_B SPIN
 *
 * Without address space randomization (personality ADDR_NO_RANDOMIZE,
 * inherited by the children and kept across exec), it forks children in
 * a loop for SECONDS, up to two at a time, one per CPU: each execs
 * "TAPEXEC_A SPIN TAPEXEC_B SPIN", which computes SPIN seconds in
 * exec_a_spin, then execs tapexec-b in the same process, which computes
 * SPIN seconds in exec_b_spin, at addresses where tapexec-a has
 * exec_a_padding, and exits. Every third child is killed (SIGKILL) at a
 * moment that moves through its life: a process gone while its last
 * samples wait to be unwound. Samples of tapexec-b symbolized against
 * tapexec-a's maps would show exec_a_padding.
 * Prints "exec-storm: children=N killed=K failed=F" at the end (failed:
 * children that exited otherwise than 0 or by the kill).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIVE	2

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct child {
	pid_t pid;
	double kill_at;		/* 0: let it finish */
};

int main(int argc, char **argv)
{
	struct child live[MAX_LIVE] = { { 0 } };
	unsigned long children = 0, killed = 0, failed = 0;
	double until, spin;
	char *end;
	int nlive = 0;

	if (argc != 5 || strtod(argv[1], &end) <= 0 || *end ||
	    (spin = strtod(argv[4], &end)) <= 0 || *end) {
		fprintf(stderr, "usage: exec-storm SECONDS TAPEXEC_A TAPEXEC_B SPIN\n");
		return 2;
	}
	until = now() + strtod(argv[1], NULL);
	/* Both programs at the same address, so a stale pc has a wrong name. */
	if (personality(ADDR_NO_RANDOMIZE) < 0) {
		fprintf(stderr, "exec-storm: personality: %s\n", strerror(errno));
		return 1;
	}
	while (now() < until || nlive) {
		int status, i;
		pid_t pid;

		while (nlive < MAX_LIVE && now() < until) {
			pid = fork();
			if (pid < 0) {
				fprintf(stderr, "exec-storm: fork: %s\n", strerror(errno));
				return 1;
			}
			if (pid == 0) {
				execl(argv[2], "tapexec-a", argv[4], argv[3], argv[4], (char *)NULL);
				_exit(127);
			}
			live[nlive].pid = pid;
			/* Killed at 0..2 SPIN into its life, in steps. */
			live[nlive].kill_at = children % 3 == 2 ?
				now() + spin * (double)(children % 7) / 3 : 0;
			nlive++;
			children++;
		}
		for (i = 0; i < nlive; i++)
			if (live[i].kill_at && now() >= live[i].kill_at) {
				kill(live[i].pid, SIGKILL);
				live[i].kill_at = 0;
				killed++;
			}
		/* Reap what exited; nothing blocks: the kills are due in time. */
		pid = waitpid(-1, &status, WNOHANG);
		if (pid < 0 && errno != EINTR) {
			fprintf(stderr, "exec-storm: waitpid: %s\n", strerror(errno));
			return 1;
		}
		if (pid <= 0) {
			usleep(1000);
			continue;
		}
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
		    !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
			failed++;
		for (i = 0; i < nlive; i++)
			if (live[i].pid == pid) {
				live[i] = live[--nlive];
				break;
			}
	}
	printf("exec-storm: children=%lu killed=%lu failed=%lu\n", children, killed, failed);
	return 0;
}
