/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flame graph page of record and report --flamegraph FILE
 * (ctl/flamegraph.c): one self-contained HTML file, the library that
 * draws it (d3-flame-graph, from npm) and the profile inline. The library
 * is not in taprootctl: its licence (Apache-2.0) does not go with
 * taprootctl's (GPL-2.0). It is in the page's template, a data file that
 * scripts/flamegraph-page makes at build time from ctl/flamegraph/page.html
 * and that taprootctl reads when it writes a page.
 */
#ifndef TAPROOTCTL_FLAMEGRAPH_H
#define TAPROOTCTL_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "taproot.h"

/* Where the template is looked for, in this order (flamegraph_page_load()). */
#define FLAMEGRAPH_PAGE_ENV		"TAPROOT_FLAMEGRAPH_PAGE"
/* Relative to the root of the build tree, the folder above the program's own. */
#define FLAMEGRAPH_PAGE_BUILD		"build/gen/flamegraph-page.html"
/* Where make install puts it (the Makefile's PKGDATADIR). */
#define FLAMEGRAPH_PAGE_INSTALLED	"/usr/share/taproot/flamegraph-page.html"
/*
 * The largest template read: the one made at build time is about 160 KB;
 * the bound is for a path that names something else (input from outside).
 */
#define FLAMEGRAPH_PAGE_MAX		(16u << 20)

/* A template read and checked: its text, cut at the markers a page fills in. */
struct flamegraph_page;

/*
 * Find the template (the file $TAPROOT_FLAMEGRAPH_PAGE names when set and
 * not empty; else the build tree's, when the program runs from one and it
 * is there; else the installed one), read it and check its markers: a
 * {{data}}, at least a {{title}} and a {{subtitle}}, no other. 0 and
 * *@pg, or -errno with a message naming the paths tried (a missing file
 * is -ENOENT, one that is no template -EINVAL).
 */
int flamegraph_page_load(struct flamegraph_page **pg);

void flamegraph_page_free(struct flamegraph_page *pg);

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
 * made from @pg to @path, atomically, mode 0600 (as the profiles: it
 * names the functions of the processes profiled). 0 or -errno, with a
 * message.
 */
int flamegraph_write(const char *path, const struct flamegraph_page *pg,
		     const struct taproot_profile *p, const struct flamegraph_desc *d);

#endif /* TAPROOTCTL_FLAMEGRAPH_H */
