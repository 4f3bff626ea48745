// SPDX-License-Identifier: GPL-2.0
/*
 * Strings as JSON strings (util.h): the one escaper of taprootctl's JSON
 * writer, taprootd's state file and the Chrome traces, so that each writes
 * valid JSON (RFC 8259) in valid UTF-8 whatever bytes a name or path holds;
 * and its inverse, for the state file's reader. The reader of documents
 * others write is json.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/json.h"
#include "util/util.h"

/* Shared with the reader of JSON documents (json.h). */
int tp_utf8_len(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (avail < n)
		return 0;
	/* The second byte's range rules out overlong forms, surrogates and > U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	/* p[i] is read only after p[i - 1] was a continuation byte, not NUL. */
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return (int)n;
}

/* How many bytes at @p stand in a JSON string as they are, 0 when *@p needs escaping. */
static int tp_json_plain_len(const unsigned char *p)
{
	if (*p >= 0x80)
		return tp_utf8_len(p, SIZE_MAX);
	return *p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\';
}

/* The control characters JSON has a short escape for: \b \f \n \r \t. */
static const char tp_json_short[0x20] = {
	['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
};

/* The byte @c, which does not stand as it is, escaped. */
static void tp_json_escape(FILE *f, unsigned char c)
{
	if (c == '"' || c == '\\')
		fprintf(f, "\\%c", c);
	else if (c < 0x20 && tp_json_short[c])
		fprintf(f, "\\%c", tp_json_short[c]);
	else if (c < 0x20 || c == 0x7f)
		fprintf(f, "\\u%04x", c);
	else
		fputs("\\ufffd", f);	/* not part of valid UTF-8 */
}

int tp_json_quote(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		const unsigned char *run = p;
		int n;

		/* Runs of bytes that stand as they are go out in one write. */
		while (*p && (n = tp_json_plain_len(p)) > 0)
			p += n;
		if (p > run)
			fwrite(run, 1, (size_t)(p - run), f);
		if (*p)
			tp_json_escape(f, *p++);
	}
	fputc('"', f);
	return ferror(f) ? -EIO : 0;
}

/* Shared with the reader of JSON documents (json.h). */
long tp_hex4(const char *s)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int c = s[i] | 0x20;	/* lower case; a NUL stays no digit */

		if (s[i] >= '0' && s[i] <= '9')
			v = v * 16 + s[i] - '0';
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + c - 'a' + 10;
		else
			return -1;
	}
	return v;
}

int tp_json_unquote(const char *s, char *out, size_t len)
{
	size_t n = 0;
	bool full = !len;
	int err = -EINVAL;

	if (*s == '"')
		s++;
	else
		s = "";
	while (*s) {
		const char *b = s, *e;	/* the bytes it stands for, k of them */
		char byte;
		size_t k = 1;
		long cp;

		if (*s == '"') {
			err = 0;
			break;
		}
		if (*s == '\\' && s[1] == 'u' && (cp = tp_hex4(s + 2)) >= 0) {
			/* tp_json_quote() writes \u00XX for bytes, \ufffd for the rest. */
			byte = (char)cp;
			b = cp < 0x80 ? &byte : "\xef\xbf\xbd";
			k = cp < 0x80 ? 1 : 3;
			s += 6;
		} else if (*s == '\\' && s[1]) {
			/* A short one; '"', '\\' and '/' stand for themselves. */
			e = memchr(tp_json_short, s[1], sizeof(tp_json_short));
			byte = (char)(e ? e - tp_json_short : s[1]);
			b = &byte;
			s += 2;
		} else {
			s++;
		}
		/* Cut at the first that does not fit, the rest still read. */
		full = full || n + k >= len;
		if (!full) {
			memcpy(out + n, b, k);
			n += k;
		}
	}
	if (len)
		out[n] = '\0';
	return err;
}
