/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON writer of taprootctl and taprootd (ctl/json.c).
 */
#ifndef TAPROOT_CTL_JSON_H
#define TAPROOT_CTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* -------------------------------------------------------- JSON writer */

/*
 * A streaming JSON writer: values are written to the FILE as they come,
 * compact, with a newline after each complete top-level value. Misuse (a
 * value where a key is expected, an unbalanced end, nesting deeper than 32)
 * and write errors are sticky: the writer stops writing and
 * taproot_json_free() reports the first one.
 */
struct taproot_json;

/* A writer to @out (borrowed; the caller closes it). -ENOMEM. */
int taproot_json_new(FILE *out, struct taproot_json **jp);

/*
 * Free @j (NULL is allowed). Returns 0 when everything was written and
 * every object and array was closed, -EINVAL after misuse or with a value
 * left open, -EIO after a write error.
 */
int taproot_json_free(struct taproot_json *j);

void taproot_json_object_begin(struct taproot_json *j);
void taproot_json_object_end(struct taproot_json *j);
void taproot_json_array_begin(struct taproot_json *j);
void taproot_json_array_end(struct taproot_json *j);
/* Inside an object, before each value. */
void taproot_json_key(struct taproot_json *j, const char *key);
/*
 * @s as a JSON string: quotes, backslashes and control characters are
 * escaped, valid UTF-8 passes through, and each byte that is not part of
 * valid UTF-8 becomes U+FFFD, so the output is always valid JSON. A NULL
 * @s writes null.
 */
void taproot_json_string(struct taproot_json *j, const char *s);
void taproot_json_u64(struct taproot_json *j, uint64_t v);
void taproot_json_i64(struct taproot_json *j, int64_t v);
void taproot_json_bool(struct taproot_json *j, bool v);
void taproot_json_null(struct taproot_json *j);

/* A member of the open object: taproot_json_key() and the value, in one call. */
void taproot_json_key_u64(struct taproot_json *j, const char *key, uint64_t v);
void taproot_json_key_string(struct taproot_json *j, const char *key, const char *s);

#endif /* TAPROOT_CTL_JSON_H */
