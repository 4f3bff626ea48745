// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl's output helpers, which every command uses: errors and usage
 * errors (plain on stderr, or a JSON object on stdout with --json), and the
 * JSON stream of a command's answer. Below the commands and the dispatcher,
 * so that calls go one way: taprootctl.c -> cmd-*.c -> output.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/taproot.h>

#include "taprootctl.h"

#define PROG	"taprootctl"

bool json_output;

/* ------------------------------------------------------ module walks */

_Static_assert(TAPROOT_PIPELINE_KUNWIND_NR == TAPROOT_KUNWIND_NR &&
	       TAPROOT_STATS_KUNWIND_NR == TAPROOT_KUNWIND_NR,
	       "the walks' counters are indexed by enum taproot_kunwind");

uint64_t kunwind_walks(const uint64_t *ends)
{
	uint64_t walks = 0;

	for (unsigned int e = TAPROOT_KUNWIND_NONE + 1; e < TAPROOT_KUNWIND_NR; e++)
		walks += ends[e];
	return walks;
}

void print_kunwind_ends(const uint64_t *ends)
{
	bool any = false;

	for (unsigned int e = TAPROOT_KUNWIND_NONE + 1; e < TAPROOT_KUNWIND_NR; e++) {
		if (!ends[e])
			continue;
		printf("%s%s %" PRIu64, any ? ", " : "", taproot_kunwind_name(e), ends[e]);
		any = true;
	}
	if (!any)
		printf("none");
}

/* ------------------------------------------------------------- errors */

static void p_vmsg(const char *fmt, va_list ap)
{
	struct taproot_json *j;
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0) {
		fprintf(stderr, "%s: out of memory reporting an error\n", PROG);
		return;
	}
	if (!json_output) {
		fprintf(stderr, "%s: %s\n", PROG, msg);
	} else if (taproot_json_new(stdout, &j) < 0) {
		fprintf(stderr, "%s: %s\n", PROG, msg);
	} else {
		taproot_json_object_begin(j);
		taproot_json_key_string(j, "error", msg);
		taproot_json_object_end(j);
		if (taproot_json_free(j) < 0)
			fprintf(stderr, "%s: %s\n", PROG, msg);
	}
	free(msg);
}

int p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_vmsg(fmt, ap);
	va_end(ap);
	return EXIT_ERR;
}

int p_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_vmsg(fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

struct taproot_json *json_begin(void)
{
	struct taproot_json *j;
	int err = taproot_json_new(stdout, &j);

	if (err < 0) {
		p_err("%s", taproot_errmsg(err));
		return NULL;
	}
	return j;
}

int json_end(struct taproot_json *j)
{
	int err = taproot_json_free(j);

	/* The JSON stream is broken: say so where a human will see it. */
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", PROG, taproot_errmsg(err));
		return EXIT_ERR;
	}
	return EXIT_OK;
}

int p_ok(void)
{
	struct taproot_json *j;

	if (!json_output)
		return EXIT_OK;
	j = json_begin();
	if (!j)
		return EXIT_ERR;
	taproot_json_null(j);
	return json_end(j);
}

int parse_json_flag(int *argc, char **argv)
{
	int i, n = 0;

	for (i = 0; i < *argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json_output = true;
		else
			argv[n++] = argv[i];
	}
	*argc = n;
	return EXIT_OK;
}


int parse_u64_arg(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
		  uint64_t *v)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || n < min || n > max)
		return p_usage("'%s %s' needs a number in %" PRIu64 "..%" PRIu64 ", not '%s'",
			       cmd, opt, min, max, s);
	*v = n;
	return EXIT_OK;
}

int parse_u32_arg(const char *cmd, const char *opt, const char *s, uint32_t min, uint32_t max,
		  uint32_t *v)
{
	uint64_t n;
	int ret = parse_u64_arg(cmd, opt, s, min, max, &n);

	if (ret == EXIT_OK)
		*v = (uint32_t)n;
	return ret;
}

int parse_symbolize_arg(const char *cmd, const char *s, bool *none)
{
	if (strcmp(s, "local") && strcmp(s, "none"))
		return p_usage("'%s --symbolize' needs local or none, not '%s'", cmd, s);
	*none = !strcmp(s, "none");
	return EXIT_OK;
}

int parse_seconds_arg(const char *cmd, const char *opt, const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (s[0] < '0' || s[0] > '9' || *end || errno || !(*v > 0) || *v > 1e7)
		return p_usage("'%s %s' needs a positive number of seconds, not '%s'",
			       cmd, opt, s);
	return EXIT_OK;
}
