// SPDX-License-Identifier: GPL-2.0
/*
 * read-zero: spends its time in the kernel, reading /dev/zero into a
 * 1 MiB buffer in a loop (read -> vfs_read -> read_zero -> clearing user
 * memory, a long path that is mostly kernel time).
 *
 * usage: read-zero
 *
 * Prints "ready pid=PID" once the buffer is faulted in, then reads until
 * killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE	(1 << 20)

int main(void)
{
	char *buf = malloc(BUF_SIZE);
	int fd = open("/dev/zero", O_RDONLY);

	if (!buf || fd < 0) {
		perror("read-zero");
		return 1;
	}
	memset(buf, 1, BUF_SIZE);	/* no page faults in the loop */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready pid=%d\n", getpid());
	for (;;) {
		if (read(fd, buf, BUF_SIZE) != BUF_SIZE) {
			perror("read-zero: read");
			return 1;
		}
	}
}
