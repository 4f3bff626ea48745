// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a file whole into memory, bounded: for texts that are both
 * parsed and kept exactly as read (kallsyms and /proc/PID/maps in a raw
 * capture, lib/raw/rawfile.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/util.h"

int tp_read_fd(int fd, size_t max, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = 0;
	char *buf = NULL, *nb;
	ssize_t n;

	*bufp = NULL;
	*lenp = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= max)
				break;		/* cut at @max: the caller sees len == max */
			cap = cap ? cap * 2 : 65536;
			if (cap > max)
				cap = max;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}
