/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flame graph page of record and report --flamegraph FILE
 * (ctl/flamegraph.c): one self-contained HTML file, the library that
 * draws it (d3-flame-graph, from npm) and the profile inline.
 */
#ifndef TAPROOTCTL_FLAMEGRAPH_H
#define TAPROOTCTL_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "taproot.h"

/*
 * The page as scripts/flamegraph-page makes it at build time from
 * ctl/flamegraph/page.html (build/gen/flamegraph-page.c): pieces of text
 * with the library inlined, between them what each page fills in, up to
 * FLAMEGRAPH_END.
 */
enum flamegraph_slot {
	FLAMEGRAPH_END,
	FLAMEGRAPH_TEXT,		/* the piece's own text */
	FLAMEGRAPH_TITLE,		/* what was profiled, where (HTML text) */
	FLAMEGRAPH_SUBTITLE,		/* samples, rate, length, date (HTML text) */
	FLAMEGRAPH_DATA,		/* taproot_flamegraph_json()'s tree */
};

struct flamegraph_piece {
	enum flamegraph_slot slot;
	const char *text;		/* FLAMEGRAPH_TEXT */
	size_t len;
};

extern const struct flamegraph_piece flamegraph_page[];

/* What the title and subtitle say of the profile. */
struct flamegraph_desc {
	const char *what;		/* "./app --fast", "whole system", "processes 12, 34" */
	const char *host;		/* NULL or "": not said */
	const char *cmd;		/* "record", "report" */
	double secs;			/* the session's length */
	int64_t start_ns;		/* its start, CLOCK_REALTIME; 0: not said */
	uint32_t freq_hz;
};

/*
 * What a page says was profiled, into @buf (@size bytes; cut to fit):
 * the command line @argv (NULL-terminated; a word with a space or a quote
 * in single quotes), else "process PID" or "processes PID, PID...", else
 * "whole system".
 */
void flamegraph_what(char *buf, size_t size, char *const *argv, const uint32_t *pids,
		     unsigned int nr_pids);

/*
 * Write the CPU profile @p (its "samples" values) as a flame graph page
 * to @path, atomically, mode 0600 (as the profiles: it names the
 * functions of the processes profiled). 0 or -errno, with a message.
 */
int flamegraph_write(const char *path, const struct taproot_profile *p,
		     const struct flamegraph_desc *d);

#endif /* TAPROOTCTL_FLAMEGRAPH_H */
