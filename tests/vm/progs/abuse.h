/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report of the programs that use /dev/taproot wrongly case by case
 * (dev-abuse, upload-abuse), in the form their tests read: "ok LABEL" or
 * "not ok LABEL: what was seen" per case, then "cases N failed M", and
 * exit status 1 if any failed. Each program is one C file
 * (tests/vm/build-progs), so all here is static.
 */
#ifndef TAPROOT_VM_PROGS_ABUSE_H
#define TAPROOT_VM_PROGS_ABUSE_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ncases, nfailed;

/*
 * One case. Each line is flushed at once: a child forked later must not
 * print it again from its copy of the buffer, and a case that hangs or
 * kills the program leaves the lines of those before it.
 */
__attribute__((format(printf, 3, 4)))
static inline void check(bool ok, const char *label, const char *fmt, ...)
{
	va_list ap;

	ncases++;
	if (ok) {
		printf("ok %s\n", label);
		fflush(stdout);
		return;
	}
	nfailed++;
	printf("not ok %s: ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* A step the cases need failed (errno says why): one more failure, the end. */
__attribute__((noreturn))
static inline void die(const char *what)
{
	printf("not ok setup: %s: %s\n", what, strerror(errno));
	printf("cases %d failed %d\n", ncases, nfailed + 1);
	exit(1);
}

/* The summary line; returns the exit status. */
static inline int cases_done(void)
{
	printf("cases %d failed %d\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}

#endif /* TAPROOT_VM_PROGS_ABUSE_H */
