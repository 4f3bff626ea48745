// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -Iinclude/uapi
/*
 * ring-abi: the mmap ABI of /dev/taproot (<linux/taproot.h>, "The rings"),
 * asserted from the failing side as well, by a real consumer.
 *
 * usage: ring-abi check DATA_SIZE
 *        ring-abi hold
 *
 * check: opens /dev/taproot, maps every possible CPU's ring as a reader
 * does, and checks, printing one line per check: "ok LABEL" or
 * "not ok LABEL: what was seen"; at the end "checks N failed M", exit
 * status 1 if any failed. The test expects DATA_SIZE bytes of data per ring
 * (it configured ring-pages) and must have filled the rings beforehand,
 * with sampling stopped, using records of exactly 200 bytes (kstack 0,
 * ustack 0), so that the rings are full. Half way, the program releases
 * every ring (data_tail = data_head), prints "released" and waits for
 * SIGUSR1: the test samples a little more meanwhile, then stops and
 * signals; the program then reads the records that followed, including the
 * one that crosses the end of the data area, through the second mapping.
 *
 * hold: opens /dev/taproot, maps every ring, closes the file, prints
 * "held pid=PID" and sleeps until killed: a consumer whose mappings alone
 * keep the device (and the module) in use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/taproot.h>

#define DEV "/dev/taproot"
#define MAX_CPUS 1024

struct ring {
	unsigned int cpu;
	struct taproot_ring_consumer *cons;	/* page 0, rw */
	uint8_t *win;				/* [P, 2P + 2D), ro */
	const struct taproot_ring_producer *prod;
	const uint8_t *data;
	uint64_t d;
};

static long P;
static int nchecks, nfailed;
static struct ring rings[MAX_CPUS];
static unsigned int nrings, nr_cpu_ids;
static bool possible[MAX_CPUS];

static void check(bool ok, const char *label, const char *fmt, ...)
{
	va_list ap;

	nchecks++;
	if (ok) {
		printf("ok %s\n", label);
		return;
	}
	nfailed++;
	printf("not ok %s: ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

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
	case ENXIO: return "ENXIO";
	case EAGAIN: return "EAGAIN";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static void read_possible(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int a, b;
	char sep;

	if (!f) {
		perror("ring-abi: /sys/devices/system/cpu/possible");
		exit(2);
	}
	for (;;) {
		if (fscanf(f, "%u", &a) != 1)
			break;
		b = a;
		sep = (char)fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%u", &b) != 1)
				break;
			sep = (char)fgetc(f);
		}
		for (; a <= b && a < MAX_CPUS; a++) {
			possible[a] = true;
			if (a + 1 > nr_cpu_ids)
				nr_cpu_ids = a + 1;
		}
		if (sep != ',')
			break;
	}
	fclose(f);
}

static off_t ring_off(unsigned int cpu)
{
	return (off_t)TAPROOT_MMAP_OFFSET(cpu);
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

/* Maps ring @cpu as a reader does: consumer page rw, then the rest ro. */
static int map_ring(int fd, unsigned int cpu, struct ring *r)
{
	const struct taproot_ring_producer *prod;
	uint64_t d;

	r->cpu = cpu;
	r->cons = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_SHARED, fd, ring_off(cpu));
	if (r->cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, ring_off(cpu) + P);
	if (prod == MAP_FAILED)
		return -errno;
	d = prod->data_size;
	munmap((void *)prod, P);
	if (!d || d > (uint64_t)TAPROOT_RING_PAGES_MAX * P)
		return -ERANGE;
	r->win = mmap(NULL, P + 2 * d, PROT_READ, MAP_SHARED, fd, ring_off(cpu) + P);
	if (r->win == MAP_FAILED)
		return -errno;
	r->prod = (const void *)r->win;
	r->data = r->win + P;
	r->d = d;
	return 0;
}

static void unmap_ring(struct ring *r)
{
	munmap(r->cons, P);
	munmap(r->win, P + 2 * r->d);
}

static int open_dev(void)
{
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* A child process tries to open the device: returns its errno (0: opened). */
static int open_in_child(void)
{
	int st, fd;
	pid_t pid = fork();

	if (pid == 0) {
		fd = open(DEV, O_RDWR);
		_exit(fd < 0 ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Bytes of the data area that are not zero: the comparisons below are
 * about real records, not about two zeroed copies. */
static uint64_t nonzero(const struct ring *r)
{
	uint64_t i, n = 0;

	for (i = 0; i < r->d; i++)
		n += r->data[i] != 0;
	return n;
}

/*
 * Walks the records of [from, to) through the window, contiguous thanks
 * to the second mapping. Returns the number of records, -1 if one is
 * invalid; *@crossing is set to the position of the record that crosses
 * the end of the data area, if any.
 */
static long walk(const struct ring *r, uint64_t from, uint64_t to, uint64_t *crossing,
		 const char *label)
{
	const struct taproot_rec_header *h;
	const struct taproot_rec_sample *s;
	uint64_t pos, off;
	long n = 0;
	char l[96];

	*crossing = UINT64_MAX;
	for (pos = from; pos < to; pos += h->size, n++) {
		off = pos & (r->d - 1);
		h = (const void *)(r->data + off);
		s = (const void *)h;
		snprintf(l, sizeof(l), "%s cpu %u: record at %" PRIu64 " is valid", label, r->cpu,
			 pos);
		if (h->size < sizeof(*h) || h->size % 8 || h->size > to - pos ||
		    (h->type != TAPROOT_REC_SAMPLE && h->type != TAPROOT_REC_LOST) ||
		    (h->type == TAPROOT_REC_SAMPLE && (h->size != sizeof(*s) || s->cpu != r->cpu)) ||
		    (h->type == TAPROOT_REC_LOST && h->size != sizeof(struct taproot_rec_lost))) {
			check(false, l, "size %u type %u (sample cpu %u), %" PRIu64 " bytes left",
			      h->size, h->type, h->type == TAPROOT_REC_SAMPLE ? s->cpu : 0,
			      to - pos);
			return -1;
		}
		if (off + h->size > r->d)
			*crossing = pos;
	}
	return n;
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static int do_check(uint64_t want_d)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	uint64_t head[MAX_CPUS], crossing;
	const struct taproot_rec_header *h;
	char label[128];
	unsigned int i, cpu;
	int fd, fd2, e, st;
	sigset_t set, old;
	long n;
	pid_t pid;
	void *p;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);

	fd = open_dev();
	check(fd >= 0, "open O_RDWR as root", "%s", ename(-fd));
	if (fd < 0)
		goto out;

	fd2 = open_dev();
	check(fd2 == -EBUSY, "second open in the same process fails with EBUSY", "%s",
	      fd2 >= 0 ? "it succeeded" : ename(-fd2));
	if (fd2 >= 0)
		close(fd2);
	e = open_in_child();
	check(e == EBUSY, "open by another process fails with EBUSY", "%s",
	      e < 0 ? "child failed" : ename(e));

	/* ---- the producer page of every ring, as a reader maps it */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct ring *r = &rings[nrings];
		const struct taproot_ring_producer *pr;

		if (!possible[cpu])
			continue;
		e = map_ring(fd, cpu, r);
		snprintf(label, sizeof(label), "cpu %u: map consumer page rw and [P, 2P+2D) ro", cpu);
		check(!e, label, "%s", ename(-e));
		if (e)
			goto out;
		nrings++;
		pr = r->prod;
		snprintf(label, sizeof(label), "cpu %u: producer abi_version", cpu);
		check(pr->abi_version == TAPROOT_ABI_VERSION, label, "%u, expected %u",
		      pr->abi_version, TAPROOT_ABI_VERSION);
		snprintf(label, sizeof(label), "cpu %u: producer cpu", cpu);
		check(pr->cpu == cpu, label, "%u", pr->cpu);
		snprintf(label, sizeof(label), "cpu %u: producer page_size", cpu);
		check(pr->page_size == P, label, "%u, expected %ld", pr->page_size, P);
		snprintf(label, sizeof(label), "cpu %u: producer data_offset is 2P", cpu);
		check(pr->data_offset == 2 * P, label, "%u, expected %ld", pr->data_offset, 2 * P);
		snprintf(label, sizeof(label), "cpu %u: producer data_size is a power of two", cpu);
		check(pr->data_size && !(pr->data_size & (pr->data_size - 1)), label, "%" PRIu64,
		      (uint64_t)pr->data_size);
		snprintf(label, sizeof(label), "cpu %u: producer data_size is ring-pages * P", cpu);
		check(pr->data_size == want_d, label, "%" PRIu64 ", expected %" PRIu64,
		      (uint64_t)pr->data_size, want_d);
		snprintf(label, sizeof(label), "cpu %u: reserved fields are zero", cpu);
		check(!(pr->reserved0[0] | pr->reserved0[1] | pr->reserved0[2] | pr->reserved0[3] |
			pr->reserved0[4] | pr->reserved1[0] | pr->reserved1[1]), label, "not zero");
	}

	/* ---- what must fail, on the first ring */
	{
		struct ring *r = &rings[0];
		off_t o = ring_off(r->cpu);
		size_t D = r->d;

		mmap_fails(fd, "writable mapping of the producer page: EPERM", P,
			   PROT_READ | PROT_WRITE, MAP_SHARED, o + P, EPERM);
		mmap_fails(fd, "writable mapping of a data page: EPERM", P,
			   PROT_READ | PROT_WRITE, MAP_SHARED, o + 2 * P, EPERM);
		mmap_fails(fd, "write-only mapping of a data page: EPERM", P, PROT_WRITE,
			   MAP_SHARED, o + 2 * P + P, EPERM);
		mmap_fails(fd, "writable mapping of consumer+producer pages: EPERM", 2 * P,
			   PROT_READ | PROT_WRITE, MAP_SHARED, o, EPERM);
		mmap_fails(fd, "writable mapping of the whole window: EPERM", 2 * P + 2 * D,
			   PROT_READ | PROT_WRITE, MAP_SHARED, o, EPERM);
		mmap_fails(fd, "mapping one page longer than the window: EINVAL", 3 * P + 2 * D,
			   PROT_READ, MAP_SHARED, o, EINVAL);
		mmap_fails(fd, "mapping the page right after the window: EINVAL", P, PROT_READ,
			   MAP_SHARED, o + 2 * P + 2 * D, EINVAL);
		mmap_fails(fd, "mapping that starts inside and ends past the window: EINVAL", 2 * P,
			   PROT_READ, MAP_SHARED, o + 2 * P + 2 * D - P, EINVAL);
		mmap_fails(fd, "private mapping: EINVAL", P, PROT_READ, MAP_PRIVATE, o + P, EINVAL);
		mmap_fails(fd, "ring of CPU nr_cpu_ids (no such CPU): EINVAL", P, PROT_READ,
			   MAP_SHARED, ring_off(nr_cpu_ids), EINVAL);
		mmap_fails(fd, "ring of CPU 2^20: EINVAL", P, PROT_READ, MAP_SHARED,
			   ring_off(1u << 20), EINVAL);

		e = mprotect(r->win, P, PROT_READ | PROT_WRITE) ? errno : 0;
		check(e == EACCES, "mprotect(PROT_WRITE) of the read-only producer page: EACCES",
		      "%s", ename(e));
		e = mprotect(r->win + P, P, PROT_READ | PROT_WRITE) ? errno : 0;
		check(e == EACCES, "mprotect(PROT_WRITE) of a read-only data page: EACCES", "%s",
		      ename(e));

		/* The consumer page is writable: store data_tail's own value back. */
		r->cons->data_tail = r->cons->data_tail;
		check(true, "consumer page is writable", "");

		p = mremap(r->cons, P, 2 * P, MREMAP_MAYMOVE);
		e = p == MAP_FAILED ? errno : 0;
		check(p == MAP_FAILED, "mremap cannot grow a ring mapping", "it grew to %p", p);
		if (p != MAP_FAILED)
			r->cons = p;	/* unreachable if the check passed */

		/* Not inherited across fork: the child faults on the address. */
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			signal(SIGSEGV, SIG_DFL);
			_exit(*(volatile uint32_t *)r->prod == TAPROOT_ABI_VERSION ? 0 : 3);
		}
		st = 0;
		waitpid(pid, &st, 0);
		check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
		      "a forked child does not inherit the mapping (SIGSEGV)", "child status 0x%x",
		      st);
	}

	/* ---- the data, twice */
	for (i = 0; i < nrings; i++) {
		struct ring *r = &rings[i];
		uint64_t nz = nonzero(r), hd, tl;

		hd = __atomic_load_n(&r->prod->data_head, __ATOMIC_ACQUIRE);
		tl = r->cons->data_tail;
		/* Full: no room for one more 200-byte sample, nothing read yet. */
		snprintf(label, sizeof(label), "cpu %u: the test filled the ring (tail 0, head > D - 200)",
			 r->cpu);
		check(tl == 0 && hd <= r->d && r->d - hd < sizeof(struct taproot_rec_sample), label,
		      "head %" PRIu64 " tail %" PRIu64 " D %" PRIu64, hd, tl, r->d);
		snprintf(label, sizeof(label), "cpu %u: the data area holds records (over 1/8 nonzero bytes)",
			 r->cpu);
		check(nz > r->d / 8, label, "%" PRIu64 " of %" PRIu64 " bytes not zero", nz, r->d);
		snprintf(label, sizeof(label), "cpu %u: data[i] == data[D + i] for all i < D", r->cpu);
		check(!memcmp(r->data, r->data + r->d, r->d), label, "the two copies differ");
		n = walk(r, tl, hd, &crossing, "filled ring");
		snprintf(label, sizeof(label), "cpu %u: every record of the filled ring is valid",
			 r->cpu);
		check(n > 0, label, "%ld records", n);
		head[i] = hd;
		/* Release everything: the next records start at head. (D) */
		__atomic_store_n(&r->cons->data_tail, hd, __ATOMIC_RELEASE);
	}

	printf("released\n");
	fflush(stdout);
	while (!got_usr1)
		sigsuspend(&old);

	/* ---- the records that followed, across the end of the data area */
	for (i = 0; i < nrings; i++) {
		struct ring *r = &rings[i];
		uint64_t hd = __atomic_load_n(&r->prod->data_head, __ATOMIC_ACQUIRE), off;

		snprintf(label, sizeof(label), "cpu %u: new records after the release", r->cpu);
		check(hd > head[i], label, "head %" PRIu64 " did not move from %" PRIu64, hd, head[i]);
		if (hd <= head[i])
			continue;
		h = (const void *)(r->data + (head[i] & (r->d - 1)));
		snprintf(label, sizeof(label),
			 "cpu %u: the first record after the overflow is LOST", r->cpu);
		check(h->type == TAPROOT_REC_LOST && h->size == sizeof(struct taproot_rec_lost) &&
		      ((const struct taproot_rec_lost *)h)->lost[TAPROOT_LOST_FULL] > 0,
		      label, "type %u size %u", h->type, h->size);
		n = walk(r, head[i], hd, &crossing, "after release");
		snprintf(label, sizeof(label), "cpu %u: every record after the release is valid",
			 r->cpu);
		check(n > 0, label, "%ld records", n);
		snprintf(label, sizeof(label), "cpu %u: a record crosses the end of the data area",
			 r->cpu);
		check(crossing != UINT64_MAX, label, "none did (from %" PRIu64 " to %" PRIu64 ")",
		      head[i], hd);
		if (crossing == UINT64_MAX)
			continue;
		off = crossing & (r->d - 1);
		h = (const void *)(r->data + off);
		snprintf(label, sizeof(label),
			 "cpu %u: the crossing record's tail is the start of the data area",
			 r->cpu);
		check(!memcmp(r->data + r->d, r->data, off + h->size - r->d), label,
		      "bytes differ");
		printf("cpu %u: crossing record at offset %" PRIu64 " size %u\n", r->cpu, off,
		       h->size);
	}

	/* ---- a mapping keeps the file, so the device stays busy */
	close(fd);
	e = open_in_child();
	check(e == EBUSY, "with the file closed but mapped, another open fails with EBUSY", "%s",
	      e < 0 ? "child failed" : ename(e));
	for (i = 0; i < nrings; i++)
		unmap_ring(&rings[i]);
	e = open_in_child();
	check(e == 0, "once every mapping is gone, open succeeds again", "%s",
	      e < 0 ? "child failed" : ename(e));
out:
	printf("checks %d failed %d\n", nchecks, nfailed);
	return nfailed ? 1 : 0;
}

static int do_hold(void)
{
	unsigned int cpu;
	int fd, e;

	fd = open_dev();
	if (fd < 0) {
		fprintf(stderr, "ring-abi: open %s: %s\n", DEV, strerror(-fd));
		return 1;
	}
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!possible[cpu])
			continue;
		e = map_ring(fd, cpu, &rings[nrings++]);
		if (e) {
			fprintf(stderr, "ring-abi: mapping the ring of CPU %u: %s\n", cpu,
				strerror(-e));
			return 1;
		}
	}
	close(fd);	/* the mappings alone hold the file now */
	printf("held pid=%d rings=%u\n", getpid(), nrings);
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	P = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	read_possible();
	if (argc == 3 && !strcmp(argv[1], "check"))
		return do_check(strtoull(argv[2], NULL, 0));
	if (argc == 2 && !strcmp(argv[1], "hold"))
		return do_hold();
	fprintf(stderr, "usage: ring-abi check DATA_SIZE | ring-abi hold\n");
	return 2;
}
