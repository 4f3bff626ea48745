/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live top's file: what taprootd writes on SIGUSR1 (its hottest
 * functions since the last such signal) and taprootctl top reads. One
 * format module for both sides; docs/design.md, "The live top file",
 * describes it for others. Text, a record a line, fields separated by a
 * TAB; in a name, TAB, newline and backslash are written \t, \n and \\,
 * other control bytes as '?':
 *
 *   taproot-top 1
 *   host<TAB>NAME
 *   time<TAB>NS          CLOCK_REALTIME of the take
 *   window<TAB>NS        since the take before (0: the first)
 *   sampling<TAB>0|1     whether sampling ran
 *   samples<TAB>N        CPU samples counted in the window
 *   other<TAB>N          of those, with a function beyond taprootd's table
 *   fn<TAB>SELF<TAB>TOTAL<TAB>GROUP<TAB>NAME   most total first
 */
#ifndef TAPROOT_CTL_TOPFILE_H
#define TAPROOT_CTL_TOPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOPFILE_NAME		"taprootd-top.tsv"	/* beside the state file */
#define TOPFILE_MAX_FNS		2000	/* written at most, and read */
#define TOPFILE_MAX_NAME	512	/* bytes of a name or group kept */

struct topfile_fn {
	uint64_t self, total;
	char *group, *name;		/* read: malloc'ed, at most TOPFILE_MAX_NAME
					   bytes with the NUL */
};

struct topfile {
	char host[256];
	uint64_t time_ns, window_ns;
	bool sampling;
	uint64_t samples, other;
	struct topfile_fn *fns;		/* n of them; read: malloc'ed */
	size_t n;
};

/* The file's path beside the state file @state_path (malloc'ed), or NULL. */
char *topfile_path(const char *state_path);

/*
 * Write @t to @path: a temporary file in its directory, mode 0600 (it
 * names the host's code), renamed over it. 0, or -errno.
 */
int topfile_write(const char *path, const struct topfile *t);

/*
 * Read @path into @t (t->fns malloc'ed: topfile_free()). Every line is
 * checked: 0, -errno when it cannot be read, -EINVAL when it is not such
 * a file (then @t holds nothing).
 */
int topfile_read(const char *path, struct topfile *t);

void topfile_free(struct topfile *t);

#endif /* TAPROOT_CTL_TOPFILE_H */
