// SPDX-License-Identifier: GPL-2.0
/* Growable arrays and string pools (util.h). */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int tp_grow(void **v, size_t *alloc, size_t need, size_t size)
{
	size_t n = *alloc ? *alloc : 16;
	void *nv;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return tp_err(-ENOMEM, "an array of %zu elements is too large", need);
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return tp_err(-ENOMEM, "an array of %zu elements is too large", need);
	nv = realloc(*v, n * size);
	if (!nv)
		return tp_err(-ENOMEM, "out of memory for %zu elements of %zu bytes", n, size);
	*v = nv;
	*alloc = n;
	return 0;
}

int64_t tp_strpool_add(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	size_t off = *len;

	if (off + n + 1 > UINT32_MAX)
		return tp_err(-ENOMEM, "a string pool of more than 4 GiB");
	if (tp_grow((void **)buf, cap, off + n + 1, 1))
		return -ENOMEM;
	memcpy(*buf + off, s, n);
	(*buf)[off + n] = '\0';
	*len += n + 1;
	return (int64_t)off;
}
