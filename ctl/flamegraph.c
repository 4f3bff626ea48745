// SPDX-License-Identifier: GPL-2.0
/*
 * record and report --flamegraph FILE: the CPU profile as a flame graph
 * page (flamegraph.h). The tree is the library's (taproot_flamegraph_json(),
 * safe inside a <script> element as it is); the page around it, the
 * drawing library inlined, was made at build time (scripts/flamegraph-page)
 * and is read here from its file, before the session starts; the title
 * and the subtitle are filled in, as HTML text, and the page is written
 * as the profiles are: whole or not at all, mode 0600.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flamegraph.h"
#include "util/util.h"

/* @s as HTML text (and attribute value): nothing in it can start markup. */
static void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* "WHAT on HOST": the <title> and the heading. */
static void write_title(FILE *f, const struct flamegraph_desc *d)
{
	html_text(f, d->what);
	if (d->host && d->host[0]) {
		fputs(" on ", f);
		html_text(f, d->host);
	}
}

/* "N CPU samples at F Hz over S s, from DATE (taprootctl CMD, taproot VERSION)". */
static void write_subtitle(FILE *f, const struct flamegraph_desc *d, int64_t samples)
{
	time_t t = (time_t)(d->start_ns / 1000000000);
	char date[64] = "";
	struct tm tm;

	fprintf(f, "%" PRId64 " CPU sample%s at %" PRIu32 " Hz over %.1f s", samples,
		samples == 1 ? "" : "s", d->freq_hz, d->secs);
	if (d->start_ns > 0 && localtime_r(&t, &tm) &&
	    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", &tm)) {
		fputs(", from ", f);
		html_text(f, date);
	}
	fprintf(f, " (taprootctl %s, taproot %s)", d->cmd, TAPROOT_VERSION);
}

/* Append printf(@fmt, ...) to @buf (@size bytes) at *@len, cut to fit. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 ? *len : (size_t)n >= size - *len ? size - 1 : *len + (size_t)n;
}

void flamegraph_what(char *buf, size_t size, char *const *argv, const uint32_t *pids,
		     unsigned int nr_pids)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; argv && argv[i]; i++) {
		const char *sep = i ? " " : "";

		if (!argv[i][0] || strpbrk(argv[i], " \t\n'\"\\")) {
			append(buf, size, &len, "%s'", sep);
			for (const char *c = argv[i]; *c; c++) {
				if (*c == '\'')
					append(buf, size, &len, "'\\''");
				else
					append(buf, size, &len, "%c", *c);
			}
			append(buf, size, &len, "'");
		} else {
			append(buf, size, &len, "%s%s", sep, argv[i]);
		}
	}
	for (unsigned int i = 0; !argv && i < nr_pids; i++)
		append(buf, size, &len, "%s%" PRIu32, i ? ", " : nr_pids > 1 ? "processes " :
		       "process ", pids[i]);
	if (!len)
		append(buf, size, &len, "whole system");
}

/* ------------------------------------------------------- the template */

enum fg_slot {
	FG_TEXT,			/* the template's own text */
	FG_TITLE,			/* what was profiled, where (HTML text) */
	FG_SUBTITLE,			/* samples, rate, length, date (HTML text) */
	FG_DATA,			/* taproot_flamegraph_json()'s tree */
	FG_NR_SLOTS
};

/* The markers the template holds, as scripts/flamegraph-page leaves them. */
static const char *const fg_marker[FG_NR_SLOTS] = {
	[FG_TITLE] = "title", [FG_SUBTITLE] = "subtitle", [FG_DATA] = "data",
};

struct fg_piece {
	enum fg_slot slot;
	size_t off, len;		/* FG_TEXT: its bytes in the text */
};

/* The template cut at its markers: its pieces, in order, cover it all. */
struct flamegraph_page {
	char *text;
	size_t len;
	struct fg_piece *pieces;
	size_t nr, alloc;
};

void flamegraph_page_free(struct flamegraph_page *pg)
{
	if (!pg)
		return;
	free(pg->text);
	free(pg->pieces);
	free(pg);
}

static int add_piece(struct flamegraph_page *pg, enum fg_slot slot, size_t off, size_t len)
{
	int err = tp_grow((void **)&pg->pieces, &pg->alloc, pg->nr + 1, sizeof(*pg->pieces));

	if (err < 0)
		return err;
	pg->pieces[pg->nr++] = (struct fg_piece){ .slot = slot, .off = off, .len = len };
	return 0;
}

/*
 * Cut @pg's text at its markers, "{{NAME}}" with NAME in [a-z]+ (other
 * text with braces is text: the library's scripts have some). An unknown
 * NAME, or a marker missing, is a template made for another taprootctl
 * (or the source's page.html, with the library not inlined): refused, as
 * its page would be broken.
 */
static int page_parse(struct flamegraph_page *pg, const char *path, const char *from)
{
	const char *t = pg->text;
	unsigned int count[FG_NR_SLOTS] = { 0 };
	size_t pos = 0, start = 0;
	const char *m;
	int err;

	if (!pg->len)
		return tp_err(-EINVAL, "flame graph page template %s%s: empty", path, from);
	if (memchr(t, '\0', pg->len))
		return tp_err(-EINVAL, "flame graph page template %s%s: holds a NUL byte: "
			      "not a page", path, from);
	while ((m = memmem(t + pos, pg->len - pos, "{{", 2)) != NULL) {
		size_t at = (size_t)(m - t), end = at + 2;
		int slot = FG_NR_SLOTS;

		while (end < pg->len && t[end] >= 'a' && t[end] <= 'z')
			end++;
		if (end == at + 2 || pg->len - end < 2 || memcmp(t + end, "}}", 2)) {
			pos = at + 1;
			continue;
		}
		for (int i = FG_TITLE; i < FG_NR_SLOTS; i++)
			if (strlen(fg_marker[i]) == end - at - 2 &&
			    !memcmp(t + at + 2, fg_marker[i], end - at - 2))
				slot = i;
		if (slot == FG_NR_SLOTS)
			return tp_err(-EINVAL, "flame graph page template %s%s: unknown marker "
				      "{{%.*s}}: not a template scripts/flamegraph-page made for "
				      "this taprootctl", path, from, (int)(end - at - 2),
				      t + at + 2);
		err = add_piece(pg, FG_TEXT, start, at - start);
		if (!err)
			err = add_piece(pg, (enum fg_slot)slot, 0, 0);
		if (err < 0)
			return err;
		count[slot]++;
		pos = start = end + 2;
	}
	err = add_piece(pg, FG_TEXT, start, pg->len - start);
	if (err < 0)
		return err;
	/* The title may be said twice (<title>, <h1>); the tree once. */
	for (int i = FG_TITLE; i < FG_NR_SLOTS; i++)
		if (!count[i])
			return tp_err(-EINVAL, "flame graph page template %s%s: no {{%s}} marker: "
				      "not a template scripts/flamegraph-page made", path, from,
				      fg_marker[i]);
	if (count[FG_DATA] > 1)
		return tp_err(-EINVAL, "flame graph page template %s%s: %u {{data}} markers, "
			      "not one", path, from, count[FG_DATA]);
	return 0;
}

/* Read and check the template @path, open as @fd, into @pg. */
static int page_read_fd(int fd, const char *path, const char *from, struct flamegraph_page *pg)
{
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0)
		return tp_err(-errno, "flame graph page template %s%s: %s", path, from,
			      strerror(errno));
	if (!S_ISREG(st.st_mode))
		return tp_err(-EINVAL, "flame graph page template %s%s: not a regular file",
			      path, from);
	if ((uint64_t)st.st_size <= FLAMEGRAPH_PAGE_MAX) {
		err = tp_read_fd(fd, FLAMEGRAPH_PAGE_MAX + 1, &pg->text, &pg->len);
		if (err == -ENOMEM)
			return tp_err(err, NULL);
		if (err < 0)
			return tp_err(err, "reading flame graph page template %s%s: %s", path,
				      from, strerror(-err));
		/* Read whole: it may have grown since fstat(). */
		if (pg->len <= FLAMEGRAPH_PAGE_MAX)
			return page_parse(pg, path, from);
	}
	return tp_err(-EFBIG, "flame graph page template %s%s: larger than %u MiB: not a page",
		      path, from, FLAMEGRAPH_PAGE_MAX >> 20);
}

/*
 * Read and check the template @path (@from says where the path came
 * from, for the messages). -ENOENT (recorded) when there is no such file.
 */
static int page_read(const char *path, const char *from, struct flamegraph_page **pgp)
{
	struct flamegraph_page *pg;
	int fd, err;

	/* O_NONBLOCK: a FIFO there is refused as no regular file, not waited on. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return tp_err(-errno, "flame graph page template %s%s: %s", path, from,
			      strerror(errno));
	pg = calloc(1, sizeof(*pg));
	err = pg ? page_read_fd(fd, path, from, pg) : tp_err(-ENOMEM, NULL);
	close(fd);
	if (err < 0) {
		flamegraph_page_free(pg);
		return err;
	}
	*pgp = pg;
	return 0;
}

/*
 * The build tree's template for the program @exe, ROOT/ctl/taprootctl:
 * ROOT/build/gen/flamegraph-page.html, into @buf. False when @exe has no
 * folder above its own ("/taprootctl") or the path does not fit.
 */
static bool build_tree_page(const char *exe, char *buf, size_t size)
{
	const char *dir = strrchr(exe, '/'), *root;
	int n;

	if (!dir)
		return false;
	root = memrchr(exe, '/', (size_t)(dir - exe));
	if (!root)
		return false;
	n = snprintf(buf, size, "%.*s/%s", (int)(root - exe), exe, FLAMEGRAPH_PAGE_BUILD);
	return n > 0 && (size_t)n < size;
}

int flamegraph_page_load(struct flamegraph_page **pg)
{
	const char *env = getenv(FLAMEGRAPH_PAGE_ENV);
	char exe[PATH_MAX], build[PATH_MAX + 64], tried[2 * PATH_MAX + 256];
	size_t len = 0;
	ssize_t n;
	int err;

	*pg = NULL;
	tried[0] = '\0';
	/* Given: that file or none, as $TAPROOT_KO is for load. */
	if (env && env[0])
		return page_read(env, " (from $" FLAMEGRAPH_PAGE_ENV ")", pg);
	append(tried, sizeof(tried), &len, "$" FLAMEGRAPH_PAGE_ENV " (not set)");

	/*
	 * The build tree's, as load finds the build tree's taproot.ko: a
	 * program run from it draws with the library it was built with.
	 */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (build_tree_page(exe, build, sizeof(build))) {
			err = page_read(build, " (the build tree's)", pg);
			if (err != -ENOENT && err != -ENOTDIR)
				return err;
			append(tried, sizeof(tried), &len, "; %s (not found)", build);
		}
	} else {
		append(tried, sizeof(tried), &len, "; no build tree (/proc/self/exe unreadable)");
	}

	err = page_read(FLAMEGRAPH_PAGE_INSTALLED, "", pg);
	if (err != -ENOENT && err != -ENOTDIR)
		return err;
	append(tried, sizeof(tried), &len, "; %s (not found)", FLAMEGRAPH_PAGE_INSTALLED);
	return tp_err(-ENOENT, "no flame graph page template; tried: %s. Install the taproot "
		      "package, make userspace in the source tree, or set $"
		      FLAMEGRAPH_PAGE_ENV " to the template's path", tried);
}

/* ----------------------------------------------------------- the page */

int flamegraph_write(const char *path, const struct flamegraph_page *pg,
		     const struct taproot_profile *p, const struct flamegraph_desc *d)
{
	char *data = NULL, *page = NULL;
	size_t data_len = 0, page_len = 0;
	FILE *df = open_memstream(&data, &data_len), *pf;
	int64_t samples = 0;
	int err;

	if (!df)
		return tp_err(-ENOMEM, NULL);
	/* The tree first: the subtitle says how many samples it holds. */
	err = taproot_flamegraph_json(p, "samples", df, &samples);
	if (fclose(df) && !err)
		err = tp_err(-ENOMEM, NULL);
	if (err)
		goto out;
	pf = open_memstream(&page, &page_len);
	if (!pf) {
		err = tp_err(-ENOMEM, NULL);
		goto out;
	}
	for (size_t i = 0; i < pg->nr; i++) {
		const struct fg_piece *pc = &pg->pieces[i];

		switch (pc->slot) {
		case FG_TEXT:
			fwrite(pg->text + pc->off, 1, pc->len, pf);
			break;
		case FG_TITLE:
			write_title(pf, d);
			break;
		case FG_SUBTITLE:
			write_subtitle(pf, d, samples);
			break;
		case FG_DATA:
			fwrite(data, 1, data_len, pf);
			break;
		case FG_NR_SLOTS:
			break;
		}
	}
	if (fclose(pf))
		err = tp_err(-ENOMEM, NULL);
	if (!err)
		err = tp_write_file_private(path, page, page_len);
out:
	free(data);
	free(page);
	return err;
}
