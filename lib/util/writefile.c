// SPDX-License-Identifier: GPL-2.0
/*
 * Writing files whole: a profile or a trace replaces the file at its path
 * only once completely written and synced, and is private to its owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

int tp_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *d = buf;

	while (len) {
		ssize_t n = write(fd, d, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		d += n;
		len -= (size_t)n;
	}
	return 0;
}


/* Record "WHAT PATH: strerror(errno)" and return -errno. */
static int sys_err(const char *what, const char *path)
{
	int e = errno;

	return tp_err(-e, "%s %s: %s", what, path, strerror(e));
}

/* fsync the directory that holds @path. */
static int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, err = 0;

	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		err = sys_err("fsync", dir);
	if (fd >= 0)
		close(fd);
	free(dir);
	return err;
}

int tp_write_file_private(const char *path, const void *buf, size_t len)
{
	char *tmp = NULL;
	int fd = -1, err;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		err = tp_err(-ENOMEM, NULL);
		goto out;
	}
	/* mkostemp creates the file 0600: what is written shows every process. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = sys_err("cannot create", tmp);
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (fchmod(fd, 0600) < 0) {
		err = sys_err("chmod", tmp);
		goto out;
	}
	if ((err = tp_write_all(fd, buf, len))) {
		err = tp_err(err, "write %s: %s", tmp, strerror(-err));
		goto out;
	}
	if (fsync(fd) < 0) {
		err = sys_err("fsync", tmp);
		goto out;
	}
	err = close(fd);
	fd = -1;
	if (err < 0) {
		err = sys_err("close", tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		err = sys_err("cannot rename to", path);
		goto out;
	}
	free(tmp);
	tmp = NULL;
	err = sync_dir(path);
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return err;
}
