/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running a shell command from a unit test, and finding the real pprof
 * tool the tests read our profiles with (test_pprof, test_pipeline,
 * test_causal, test_rawfile). Include after <cmocka.h>.
 */
#ifndef TAPROOT_TESTS_RUNCMD_H
#define TAPROOT_TESTS_RUNCMD_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The output of the command printf(@fmt, ...) (malloc'ed, NUL-terminated);
 * *@status its exit status (128 when killed). A failure prints the command
 * and its output, for the test's log.
 */
static inline char *run(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline char *run(int *status, const char *fmt, ...)
{
	char *cmd, *out = NULL, buf[4096];
	size_t len = 0, n;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	f = popen(cmd, "r");
	assert_non_null(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		out = realloc(out, len + n + 1);
		assert_non_null(out);
		memcpy(out + len, buf, n);
		len += n;
	}
	if (!out)
		out = calloc(1, 1);
	out[len] = '\0';
	st = pclose(f);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	if (*status)
		fprintf(stderr, "command failed (%d): %s\n%s\n", *status, cmd, out);
	free(cmd);
	return out;
}

/* The pprof tool: $TAPROOT_PPROF (make unit sets it), else build/pprof. */
static inline const char *pprof_tool(void)
{
	const char *p = getenv("TAPROOT_PPROF");

	if (!p || !*p)
		p = "build/pprof";
	if (access(p, X_OK))
		fail_msg("the pprof tool %s is missing: run the tests through 'make unit', "
			 "which builds it and sets TAPROOT_PPROF", p);
	return p;
}

#endif
