// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the files of /proc/PID for the process model (procmaps.c, the
 * maps; cgroup.c, the labels), and telling the observer what was read.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "process/process-private.h"

ssize_t tp_read_at(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - (size_t)got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

void tp_observe(const struct taproot_procs *procs, int pid, enum taproot_proc_file file,
		int err, const char *data, size_t len)
{
	const struct taproot_procs_observer *o = procs->opts.observer;

	if (o && o->read)
		o->read(o->arg, pid, file, err, data, len);
}
