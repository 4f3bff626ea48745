// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -Iinclude/uapi
/*
 * dev-abuse: /dev/taproot used wrongly, case by case; each case must get a
 * clean error or the defined behaviour, asserted precisely. The cases that
 * progs/ring-abi (test-ring-mmap-abi.sh) already asserts are not repeated
 * here: writable mappings past the consumer page (EPERM), mappings past the
 * window or of an impossible CPU (EINVAL), MAP_PRIVATE (EINVAL),
 * mprotect(PROT_WRITE) (EACCES), mremap growth, fork without MADV_DOFORK,
 * a second open (EBUSY), an open while the closed file is still mapped.
 *
 * usage: dev-abuse
 *
 * Runs as root with the module loaded, sampling stopped and the rings
 * empty (the close-during-poll case needs a poll() that no data would
 * ever wake). Prints "ok LABEL" or "not ok LABEL: what was seen" per case,
 * then "cases N failed M"; exit status 1 if any failed. Every file and
 * mapping is gone when it exits, so the test can check that the module's
 * reference count and mapping count came back to zero.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/taproot.h>

#include "abuse.h"

#define DEV "/dev/taproot"

static long P;		/* page size */
static uint64_t D;	/* data bytes per ring */

static const char *ename(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "success";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case EIO: return "EIO";
	case ENOTTY: return "ENOTTY";
	case ESPIPE: return "ESPIPE";
	case EOVERFLOW: return "EOVERFLOW";
	case EBADF: return "EBADF";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static off_t ring_off(unsigned int cpu)
{
	return (off_t)TAPROOT_MMAP_OFFSET(cpu);
}

static int open_dev(int flags)
{
	int fd = open(DEV, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* mmap that must fail with @want; unmaps whatever it got. */
static void mmap_fails(int fd, const char *label, size_t len, int prot, int flags, off_t off,
		       int want)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);
	int e = p == MAP_FAILED ? errno : 0;

	if (p != MAP_FAILED)
		munmap(p, len);
	check(e == want, label, "mmap(len %zu, prot %d, off 0x%llx): %s, expected %s", len, prot,
	      (unsigned long long)off, ename(e), ename(want));
}

/* mprotect that must fail with @want. */
static void mprotect_fails(void *p, size_t len, int prot, const char *label, int want)
{
	int e = mprotect(p, len, prot) ? errno : 0;

	check(e == want, label, "mprotect(prot %d): %s, expected %s", prot, ename(e), ename(want));
}

/*
 * Runs @fn(@arg) in a child and returns how it ended: the signal that
 * killed it (> 0), or -(exit status) - 1.
 */
static int in_child(void (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	return WIFSIGNALED(st) ? WTERMSIG(st) : -WEXITSTATUS(st) - 1;
}

static void write_byte(void *arg)
{
	*(volatile uint8_t *)arg = 0x5a;
}

static const char *how(int r)
{
	static char buf[32];

	if (r > 0)
		snprintf(buf, sizeof(buf), "killed by %s", strsignal(r));
	else
		snprintf(buf, sizeof(buf), "exited %d", -r - 1);
	return buf;
}

/* ------------------------------------------------------------ cases */

static void offsets_and_sizes(int fd)
{
	uint8_t *whole, *part;
	size_t win = 2 * P + 2 * D;

	mmap_fails(fd, "offset not page aligned: EINVAL", P, PROT_READ, MAP_SHARED, P / 2, EINVAL);
	mmap_fails(fd, "offset of CPU 2^31-1 (cpu field nearly all ones): EINVAL", P, PROT_READ,
		   MAP_SHARED, (off_t)0x7fffffff << TAPROOT_MMAP_CPU_SHIFT, EINVAL);
	mmap_fails(fd, "negative offset: EOVERFLOW", P, PROT_READ, MAP_SHARED, -(off_t)P, EOVERFLOW);
	mmap_fails(fd, "range from the end of CPU 0's offsets into CPU 1's ring: EINVAL", 2 * P,
		   PROT_READ, MAP_SHARED, ring_off(1) - P, EINVAL);
	mmap_fails(fd, "range over the whole window of CPU 0 and into CPU 1's offsets: EINVAL",
		   (size_t)1 << TAPROOT_MMAP_CPU_SHIFT, PROT_READ, MAP_SHARED, 0, EINVAL);
	mmap_fails(fd, "length 0: EINVAL", 0, PROT_READ, MAP_SHARED, 0, EINVAL);
	mmap_fails(fd, "length 2^40 (larger than any window): EINVAL", (size_t)1 << 40, PROT_READ,
		   MAP_SHARED, P, EINVAL);

	/* Partial mappings are defined: any page range inside the window. */
	whole = mmap(NULL, win - P, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	if (whole == MAP_FAILED)
		die("mmap [P, 2P+2D) of CPU 0");
	part = mmap(NULL, 1, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	check(part != MAP_FAILED && ((struct taproot_ring_producer *)part)->abi_version ==
	      TAPROOT_ABI_VERSION, "one byte of the producer page maps its whole page",
	      "%s", part == MAP_FAILED ? ename(errno) : "abi_version differs");
	if (part != MAP_FAILED)
		munmap(part, 1);
	part = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, ring_off(0) + 2 * P + 2 * D - P);
	check(part != MAP_FAILED && !memcmp(part, whole + P + 2 * D - P, P),
	      "the last page of the second data copy alone reads as in the whole mapping", "%s",
	      part == MAP_FAILED ? ename(errno) : "bytes differ");
	if (part != MAP_FAILED)
		munmap(part, P);
	part = mmap(NULL, P + 1, PROT_READ, MAP_SHARED, fd, ring_off(0) + 2 * P);
	check(part != MAP_FAILED, "a length that is not a page multiple (P+1) maps 2 pages", "%s",
	      part == MAP_FAILED ? ename(errno) : "");
	if (part != MAP_FAILED)
		munmap(part, P + 1);
	munmap(whole, win - P);
}

static void protections(int fd)
{
	uint8_t *cons, *data;

	mmap_fails(fd, "PROT_EXEC mapping of a data page: EPERM", P, PROT_READ | PROT_EXEC,
		   MAP_SHARED, ring_off(0) + 2 * P, EPERM);
	mmap_fails(fd, "PROT_EXEC mapping of the producer page: EPERM", P, PROT_READ | PROT_EXEC,
		   MAP_SHARED, ring_off(0) + P, EPERM);
	mmap_fails(fd, "PROT_EXEC mapping of the consumer page: EPERM", P,
		   PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, ring_off(0), EPERM);

	data = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, ring_off(0) + 2 * P);
	if (data == MAP_FAILED)
		die("mmap a data page");
	mprotect_fails(data, P, PROT_READ | PROT_EXEC, "mprotect(PROT_EXEC) of a data page: EACCES",
		       EACCES);
	mprotect_fails(data, P, PROT_READ | PROT_WRITE | PROT_EXEC,
		       "mprotect(PROT_WRITE|PROT_EXEC) of a data page: EACCES", EACCES);
	check(mprotect(data, P, PROT_NONE) == 0 && mprotect(data, P, PROT_READ) == 0,
	      "mprotect of a data page to PROT_NONE and back to PROT_READ", "%s", ename(errno));
	munmap(data, P);

	cons = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_SHARED, fd, ring_off(0));
	if (cons == MAP_FAILED)
		die("mmap the consumer page");
	mprotect_fails(cons, P, PROT_READ | PROT_WRITE | PROT_EXEC,
		       "mprotect(PROT_EXEC) of the consumer page: EACCES", EACCES);
	munmap(cons, P);
}

/* Called with no file open: the one consumer slot is free. */
static void open_modes(void)
{
	int ro, wo;

	ro = open_dev(O_RDONLY);
	if (ro < 0) {
		check(false, "O_RDONLY open", "%s", ename(-ro));
		return;
	}
	/* Without FMODE_WRITE the kernel makes MAP_SHARED a private mapping. */
	mmap_fails(ro, "O_RDONLY file: MAP_SHARED PROT_READ of data: EINVAL", P, PROT_READ,
		   MAP_SHARED, ring_off(0) + 2 * P, EINVAL);
	mmap_fails(ro, "O_RDONLY file: writable consumer page: EACCES", P, PROT_READ | PROT_WRITE,
		   MAP_SHARED, ring_off(0), EACCES);
	close(ro);
	wo = open_dev(O_WRONLY);
	if (wo < 0) {
		check(false, "O_WRONLY open", "%s", ename(-wo));
		return;
	}
	mmap_fails(wo, "O_WRONLY file: any mapping: EACCES", P, PROT_READ, MAP_SHARED,
		   ring_off(0) + P, EACCES);
	close(wo);
}

static void writes_to_data(int fd)
{
	uint8_t *data, *prod, before, after;
	struct iovec local, remote;
	int memfd, r, e;
	ssize_t n;
	uint8_t b = 0xa5;

	data = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, ring_off(0) + 2 * P);
	prod = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	if (data == MAP_FAILED || prod == MAP_FAILED)
		die("mmap data and producer pages");
	before = data[8];

	r = in_child(write_byte, data + 8);
	check(r == SIGSEGV && data[8] == before,
	      "a store to a read-only data page: SIGSEGV, data unchanged", "%s", how(r));
	r = in_child(write_byte, prod);
	check(r == SIGSEGV && ((struct taproot_ring_producer *)prod)->abi_version ==
	      TAPROOT_ABI_VERSION, "a store to the producer page: SIGSEGV, page unchanged", "%s",
	      how(r));

	/* FOLL_FORCE, as a debugger writes breakpoints: a shared ro page is not COWed. */
	memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (memfd < 0)
		die("open /proc/self/mem");
	n = pwrite(memfd, &b, 1, (off_t)(uintptr_t)(data + 8));
	e = n < 0 ? errno : 0;
	after = data[8];
	check(n < 0 && e == EIO && after == before,
	      "a write through /proc/self/mem to a data page: EIO, data unchanged",
	      "pwrite returned %zd (%s), byte %#x -> %#x", n, ename(e), before, after);
	n = pwrite(memfd, &b, 1, (off_t)(uintptr_t)prod);
	e = n < 0 ? errno : 0;
	check(n < 0 && e == EIO && ((struct taproot_ring_producer *)prod)->abi_version ==
	      TAPROOT_ABI_VERSION,
	      "a write through /proc/self/mem to the producer page: EIO, page unchanged",
	      "pwrite returned %zd (%s)", n, ename(e));
	n = pread(memfd, &after, 1, (off_t)(uintptr_t)(data + 8));
	check(n == 1 && after == before, "a read through /proc/self/mem of a data page works",
	      "pread returned %zd (%s)", n, ename(n < 0 ? errno : 0));
	close(memfd);

	local.iov_base = &b;
	local.iov_len = 1;
	remote.iov_base = data + 8;
	remote.iov_len = 1;
	n = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	e = n < 0 ? errno : 0;
	check(n < 0 && e == EFAULT && data[8] == before,
	      "process_vm_writev() to a data page: EFAULT, data unchanged",
	      "returned %zd (%s)", n, ename(e));

	munmap(data, P);
	munmap(prod, P);
}

static void remaps(int fd)
{
	uint8_t *win, *to, *p;
	size_t len = P + 2 * D;
	uint32_t abi;

	win = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	if (win == MAP_FAILED)
		die("mmap [P, 2P+2D)");
	abi = ((struct taproot_ring_producer *)win)->abi_version;

	/* A free address range to move to. */
	to = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (to == MAP_FAILED)
		die("mmap anonymous");
	p = mremap(win, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	check(p == to && ((struct taproot_ring_producer *)p)->abi_version == abi &&
	      ((struct taproot_ring_producer *)p)->data_size == D,
	      "mremap moves a ring mapping, which reads the same at the new address", "%s",
	      p == MAP_FAILED ? ename(errno) : "moved, but the producer page differs");
	if (p == MAP_FAILED) {
		munmap(to, len);
		p = win;
	}
	win = p;

	p = mremap(win, len, len, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
	check(p == MAP_FAILED && errno == EINVAL,
	      "mremap(MREMAP_DONTUNMAP) of a ring mapping: EINVAL", "%s",
	      p == MAP_FAILED ? ename(errno) : "it succeeded");
	if (p != MAP_FAILED)
		munmap(p, len);

	/* Shrinking splits nothing off that stays mapped: a partial unmap. */
	p = mremap(win, len, P, 0);
	check(p == win && ((struct taproot_ring_producer *)p)->abi_version == abi,
	      "mremap shrinks a ring mapping to its first page, still readable", "%s",
	      p == MAP_FAILED ? ename(errno) : "producer page differs");
	if (p == MAP_FAILED) {
		munmap(win, len);
		return;
	}

	/* Unmapping a hole in the middle splits the mapping in two. */
	win = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	if (win == MAP_FAILED)
		die("mmap [P, 2P+2D) again");
	check(munmap(win + P, P) == 0 && win[0] == ((uint8_t *)p)[0] &&
	      win[2 * P] == ((uint8_t *)win)[2 * P + D],
	      "munmap of one page in the middle leaves both halves readable", "%s",
	      ename(errno));
	munmap(win, P);
	munmap(win + 2 * P, len - 2 * P);
	munmap(p, P);
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, sig);
}

static void madvise_dontneed(int fd)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old_bus, old_segv;
	volatile uint8_t *prod;
	volatile int sig;
	int e;

	prod = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	if (prod == MAP_FAILED)
		die("mmap the producer page");
	e = madvise((void *)prod, P, MADV_DONTNEED) ? errno : 0;
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	sig = sigsetjmp(bus_jmp, 1);
	if (!sig)
		(void)prod[0];
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	/*
	 * The pages are inserted at mmap time and there is no fault handler
	 * (as a BPF ring buffer): once given back they are not refaulted.
	 */
	check(!e && sig == SIGBUS,
	      "MADV_DONTNEED drops the pages: a later read is SIGBUS, nothing else",
	      "madvise %s, read %s", ename(e), sig ? strsignal(sig) : "succeeded");
	munmap((void *)prod, P);
}

/*
 * MADV_DOFORK: the child inherits the mapping and with it the file, on
 * kernels that allow it. Those whose madvise() refuses MADV_DOFORK on any
 * VM_SPECIAL mapping (7.2's does; 6.12's refused only VM_IO) refuse it with
 * EINVAL, as the ring's mappings are VM_DONTEXPAND (no mremap() growth):
 * the mapping then never reaches a child, which ring-abi's fork case
 * covers.
 */
static int fork_with_mapping(int *fdp)
{
	int fd = *fdp, pipefd[2], st, fd2, rc, e;
	uint8_t *win;
	size_t len = P + 2 * D;
	pid_t pid;
	char c;

	win = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	if (win == MAP_FAILED)
		die("mmap [P, 2P+2D)");
	rc = madvise(win, len, MADV_DOFORK);
	e = rc ? errno : 0;
	check(!e || e == EINVAL,
	      "MADV_DOFORK on a ring mapping is allowed, or refused as on any VM_SPECIAL mapping",
	      "%s", ename(e));
	if (e) {
		printf("# MADV_DOFORK refused (%s): no child can inherit a ring mapping here\n",
		       ename(e));
		munmap(win, len);
		return fd;
	}
	if (pipe(pipefd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		const struct taproot_ring_producer *prod = (const void *)win;

		close(pipefd[1]);
		close(fd);
		/* Wait until the parent has let go of its file and mapping. */
		if (read(pipefd[0], &c, 1) != 1)
			_exit(3);
		if (prod->abi_version != TAPROOT_ABI_VERSION || prod->data_size != D)
			_exit(4);
		/* The second copy of the data reads as the first. */
		if (memcmp(win + P, win + P + D, D))
			_exit(5);
		_exit(0);
	}
	close(pipefd[0]);
	munmap(win, len);
	close(fd);
	*fdp = -1;
	fd2 = open_dev(O_RDWR);
	check(fd2 == -EBUSY,
	      "parent closed and unmapped; the child's inherited mapping keeps the device busy",
	      "open: %s", fd2 < 0 ? ename(-fd2) : "success");
	if (fd2 >= 0)
		close(fd2);
	if (write(pipefd[1], "x", 1) != 1)
		die("write pipe");
	close(pipefd[1]);
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the child reads the inherited mapping after the parent let go",
	      "child status 0x%x", st);
	fd2 = open_dev(O_RDWR);
	check(fd2 >= 0, "once the child exited, open succeeds again", "open: %s",
	      fd2 < 0 ? ename(-fd2) : "");
	return fd2;
}

/* A consumer killed while it holds the file and mappings frees the device. */
static void killed_consumer(void)
{
	int pipefd[2], st, fd;
	pid_t pid;
	char c;

	if (pipe(pipefd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int cfd = open(DEV, O_RDWR);
		void *a, *b;

		if (cfd < 0)
			_exit(3);
		a = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, ring_off(0));
		b = mmap(NULL, P + 2 * D, PROT_READ, MAP_SHARED, cfd, ring_off(0) + P);
		if (a == MAP_FAILED || b == MAP_FAILED)
			_exit(4);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(5);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1) {
		waitpid(pid, &st, 0);
		check(false, "a consumer killed with SIGKILL while mapped frees the device",
		      "the child could not map: status 0x%x", st);
		close(pipefd[0]);
		return;
	}
	close(pipefd[0]);
	fd = open_dev(O_RDWR);
	check(fd == -EBUSY, "while another process holds the device: EBUSY", "open: %s",
	      fd < 0 ? ename(-fd) : "success");
	if (fd >= 0)
		close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fd = open_dev(O_RDWR);
	check(fd >= 0, "a consumer killed with SIGKILL while mapped frees the device", "open: %s",
	      fd < 0 ? ename(-fd) : "");
	if (fd >= 0)
		close(fd);
}

struct poller {
	int fd;
	pid_t tid;
	int ret, err;
	short revents;
	volatile bool started;
};

static void *poll_thread(void *arg)
{
	struct poller *pl = arg;
	struct pollfd pfd = { .fd = pl->fd, .events = POLLIN };

	pl->tid = (pid_t)syscall(SYS_gettid);
	pl->started = true;
	pl->ret = poll(&pfd, 1, -1);
	pl->err = pl->ret < 0 ? errno : 0;
	pl->revents = pfd.revents;
	return NULL;
}

/* The thread sleeps in poll(): state S in syscall 7. */
static bool in_poll(pid_t tid)
{
	char path[64], buf[256];
	long nr = -1;
	FILE *f;
	char st = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		char *p = strrchr(buf, ')');

		if (p && p[1] == ' ')
			st = p[2];
	}
	fclose(f);
	return nr == SYS_poll && st == 'S';
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * close() of the descriptor that another thread polls, with nothing in the
 * rings and sampling stopped: the poll() returns POLLNVAL (it would sleep
 * forever otherwise, holding the one consumer slot), and the file is
 * released: a new open succeeds.
 */
static void close_during_poll(int fd)
{
	struct poller pl = { .fd = fd };
	pthread_t th;
	double t0;
	int i, fd2;

	if (pthread_create(&th, NULL, poll_thread, &pl))
		die("pthread_create");
	for (i = 0; i < 3000 && !(pl.started && in_poll(pl.tid)); i++)
		usleep(10000);
	check(i < 3000, "a thread blocks in poll() on the empty rings", "not in poll after 30 s");
	t0 = now_s();
	close(fd);
	for (i = 0; i < 1000; i++) {
		if (pthread_tryjoin_np(th, NULL) == 0)
			break;
		usleep(10000);
	}
	if (i == 1000) {
		check(false, "close() during a blocked poll() makes poll() return POLLNVAL",
		      "poll() still blocked 10 s after close()");
		/* Leave the thread: exit() ends it. */
		return;
	}
	check(pl.ret == 1 && pl.revents == POLLNVAL,
	      "close() during a blocked poll() makes poll() return POLLNVAL",
	      "poll returned %d (%s) revents %#x after %.2f s", pl.ret, ename(pl.err),
	      (unsigned int)pl.revents, now_s() - t0);
	fd2 = open_dev(O_RDWR);
	check(fd2 >= 0, "after that poll() returned, the file is released: open succeeds",
	      "open: %s", fd2 < 0 ? ename(-fd2) : "");
	if (fd2 >= 0)
		close(fd2);
}

static void file_ops(int fd)
{
	char buf[16];
	ssize_t n;
	off_t o;
	int r;

	n = read(fd, buf, sizeof(buf));
	check(n < 0 && errno == EINVAL, "read(): EINVAL", "%zd %s", n, ename(n < 0 ? errno : 0));
	n = write(fd, buf, sizeof(buf));
	check(n < 0 && errno == EINVAL, "write(): EINVAL", "%zd %s", n, ename(n < 0 ? errno : 0));
	n = pread(fd, buf, sizeof(buf), 0);
	check(n < 0 && errno == ESPIPE, "pread(): ESPIPE", "%zd %s", n, ename(n < 0 ? errno : 0));
	r = ioctl(fd, 0, 0);
	check(r < 0 && errno == ENOTTY, "ioctl(0): ENOTTY", "%d %s", r, ename(r < 0 ? errno : 0));
	r = ioctl(fd, FIONREAD, &r);
	check(r < 0 && errno == ENOTTY, "ioctl(FIONREAD): ENOTTY", "%d %s", r,
	      ename(r < 0 ? errno : 0));
	o = lseek(fd, 0, SEEK_SET);
	check(o < 0 && errno == ESPIPE, "lseek(): ESPIPE", "%lld %s", (long long)o,
	      ename(o < 0 ? errno : 0));
}

int main(void)
{
	const struct taproot_ring_producer *prod;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	P = sysconf(_SC_PAGESIZE);
	fd = open_dev(O_RDWR);
	if (fd < 0) {
		errno = -fd;
		die("open " DEV);
	}
	prod = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, ring_off(0) + P);
	if (prod == MAP_FAILED)
		die("mmap the producer page");
	D = prod->data_size;
	munmap((void *)prod, P);

	file_ops(fd);
	offsets_and_sizes(fd);
	protections(fd);
	writes_to_data(fd);
	remaps(fd);
	madvise_dontneed(fd);
	close(fd);
	open_modes();
	killed_consumer();
	fd = open_dev(O_RDWR);
	if (fd < 0) {
		errno = -fd;
		die("reopen " DEV);
	}
	fd = fork_with_mapping(&fd);
	if (fd >= 0)
		close_during_poll(fd);

	return cases_done();
}
