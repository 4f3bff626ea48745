// SPDX-License-Identifier: GPL-2.0
/*
 * record and report --flamegraph FILE: the CPU profile as a flame graph
 * page (flamegraph.h). The tree is the library's (taproot_flamegraph_json(),
 * safe inside a <script> element as it is); the page around it, the
 * drawing library inlined, was made at build time (scripts/flamegraph-page);
 * here the title and the subtitle are filled in, as HTML text, and the
 * page is written as the profiles are: whole or not at all, mode 0600.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int flamegraph_write(const char *path, const struct taproot_profile *p,
		     const struct flamegraph_desc *d)
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
	for (const struct flamegraph_piece *pc = flamegraph_page; pc->slot != FLAMEGRAPH_END; pc++) {
		switch (pc->slot) {
		case FLAMEGRAPH_TEXT:
			fwrite(pc->text, 1, pc->len, pf);
			break;
		case FLAMEGRAPH_TITLE:
			write_title(pf, d);
			break;
		case FLAMEGRAPH_SUBTITLE:
			write_subtitle(pf, d, samples);
			break;
		case FLAMEGRAPH_DATA:
			fwrite(data, 1, data_len, pf);
			break;
		case FLAMEGRAPH_END:
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
