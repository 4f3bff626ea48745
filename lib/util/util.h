/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: what every layer above uses (errors,
 * strings, reading files). Not for programs.
 */
#ifndef TAPROOT_UTIL_H
#define TAPROOT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

/* ---------------------------------------------------------------- errors */

/*
 * Record the message for the failure @err of the current call, formatted
 * from @fmt (NULL: taproot_strerror(@err)), and return @err, so a failing
 * path reads "return tp_err(-EFOO, "what went wrong: %s", why);".
 */
int tp_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* -errno for a negative libnl error code (-NLE_*). */
int tp_nlerr_to_errno(int nlerr);

/*
 * Strings packed after a structure in one allocation: tp_strsize() is the
 * room @s takes (0 for NULL), tp_strcopy() puts it at *@pos and moves *@pos
 * past it, returning the copy (NULL for NULL).
 */
static inline size_t tp_strsize(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static inline const char *tp_strcopy(char **pos, const char *s)
{
	size_t n;
	char *d;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	d = *pos;
	memcpy(d, s, n);
	*pos += n;
	return d;
}

/* The last component of @path: what follows its last '/', or @path. */
static inline const char *tp_path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Write @s to @f as a JSON string, quotes included (RFC 8259): '"' and '\\'
 * escaped, control characters as \b \f \n \r \t or \u00XX, DEL as
 * \u007f, valid UTF-8 (RFC 3629: shortest form, no surrogates, up to
 * U+10FFFF) as it is, and each other byte as \ufffd, so that what is
 * written is valid JSON in valid UTF-8 whatever @s holds. 0, or -EIO when
 * @f is in error afterwards (not recorded).
 */
int tp_json_quote(FILE *f, const char *s);

/*
 * The JSON string at @s (its opening quote), as tp_json_quote() writes
 * them, into @out: its first @len - 1 bytes at most (never part of an
 * escape) and a NUL. Escapes are read back, \uXXXX below U+0080 as that
 * byte and any other as U+FFFD (tp_json_quote() writes no other). 0, or
 * -EINVAL when @s is no string or ends before its closing quote (@out
 * then holds what came before).
 */
int tp_json_unquote(const char *s, char *out, size_t len);

/*
 * Read @fd to its end, at most @max bytes (a longer file is cut: *@lenp ==
 * @max tells), into *@bufp (malloc'ed, NULL when empty; the caller frees
 * it). 0, -ENOMEM or -errno of read(2); nothing is kept on error.
 */
int tp_read_fd(int fd, size_t max, char **bufp, size_t *lenp);

/*
 * Make room for @need elements of @size bytes in the array *@v, which has
 * room for *@alloc: its room doubles (from 16) until @need fits, so that
 * appending one at a time costs amortized O(1). Returns 0 or -ENOMEM
 * (recorded; *@v and *@alloc unchanged).
 */
int tp_grow(void **v, size_t *alloc, size_t need, size_t size);

/*
 * Append the @n bytes at @s and a NUL to the string pool *@buf, of which
 * *@len bytes are used and *@cap allocated (growing as tp_grow() does).
 * Offsets stay below 2^32, so that tables can keep them in 32 bits.
 * Returns the offset of the copy, or -ENOMEM (recorded; nothing changed).
 */
int64_t tp_strpool_add(char **buf, size_t *len, size_t *cap, const char *s, size_t n);

/*
 * Write the @len bytes at @buf to @fd, again after EINTR or a short write.
 * 0 or -errno (not recorded).
 */
int tp_write_all(int fd, const void *buf, size_t len);

/*
 * Replace @path by a file of mode 0600 holding the @len bytes at @buf:
 * written to a temporary file beside it, synced, renamed over @path, and
 * the directory synced, so that a reader sees the old file or the new one,
 * whole. 0 or -errno (recorded, naming the step and the file).
 */
int tp_write_file_private(const char *path, const void *buf, size_t len);

#endif /* TAPROOT_UTIL_H */
