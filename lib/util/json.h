/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: a reader of JSON documents written by
 * others (lib/util/json.c), for the few string values a caller wants out
 * of them, such as the annotations of a container runtime's OCI bundle.
 * For lib/, not for programs. (The writer's side, tp_json_quote(), is in
 * util.h.)
 */
#ifndef TAPROOT_UTIL_JSON_H
#define TAPROOT_UTIL_JSON_H

#include <stddef.h>

#define TP_JSON_DEPTH_MAX	64	/* objects and arrays nested */
#define TP_JSON_PATH_MAX	8	/* keys in a query's path */
#define TP_JSON_QUERIES_MAX	32	/* queries in one tp_json_lookup() */
#define TP_JSON_KEY_MAX		256	/* bytes of a key compared: longer ones match none */

/*
 * One string value wanted: the member reached from the top-level object
 * by the keys @path[0], ..., @path[@path_len - 1] (1 <= @path_len <=
 * TP_JSON_PATH_MAX), as {"Config", "Labels", "io.kubernetes.pod.name"}.
 * tp_json_lookup() sets @result: the value's length, with the value and a
 * NUL in @out (@size bytes); or -ENOENT, no such member; -EINVAL, it is
 * not a string; -E2BIG, it does not fit @out (nothing kept: a value cut
 * would be another value); -EILSEQ, it holds a control character (U+0000
 * to U+001F or U+007F, escaped or not), which a label must not carry.
 */
struct tp_json_query {
	const char *const *path;
	size_t path_len;
	char *out;
	size_t size;
	int result;
};

/*
 * Read the JSON document (RFC 8259) of @len bytes at @doc, which need not
 * be NUL-terminated and is never read past, and answer the @nr (<=
 * TP_JSON_QUERIES_MAX) queries @q. The whole document is validated:
 * strings in valid UTF-8 with their escapes (\uXXXX decoded to UTF-8, a
 * surrogate pair to one character, a lone surrogate to U+FFFD as Go's
 * encoding/json reads it), numbers, literals, nesting at most
 * TP_JSON_DEPTH_MAX deep, nothing but white space after the value. A
 * key's duplicate wins over it, as in Go's encoding/json (which writes the
 * runtimes' files; they hold none). Returns 0, -EINVAL for a bad query,
 * or -TAPROOT_EPROTO with a message naming the byte for a malformed
 * document (then no result is to be used).
 */
int tp_json_lookup(const char *doc, size_t len, struct tp_json_query *q, size_t nr);

/*
 * Shared with the writer of JSON strings (lib/util/jsonstr.c): the length
 * of the valid UTF-8 sequence at @p, of which @avail bytes may be read (a
 * NUL-terminated string may say SIZE_MAX: a NUL ends any sequence), by RFC
 * 3629 (shortest form, no surrogates, at most U+10FFFF), or 0 when it is
 * not one; and the value of the 4 hex digits at @s (4 bytes readable, or
 * NUL-terminated), or -1.
 */
int tp_utf8_len(const unsigned char *p, size_t avail);
long tp_hex4(const char *s);

#endif /* TAPROOT_UTIL_JSON_H */
