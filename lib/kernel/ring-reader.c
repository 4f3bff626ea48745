// SPDX-License-Identifier: GPL-2.0
/*
 * The reader thread (taproot_ring_start_reader()): it keeps the kernel's
 * rings drained into buffers of this process while the consumer is busy
 * elsewhere, so that a record is lost only when both are full.
 *
 * Roles, per CPU:
 *  - the filler (this thread, or taproot_ring_consume() before it reads;
 *    one at a time, under fill_lock) is the kernel ring's consumer and the
 *    buffer's producer: it copies whole records from [ktail, data_head)
 *    while the buffer has room, publishes the buffer's head (release:
 *    pairs with the consumer's load-acquire, as (A)/(C) of the kernel's
 *    protocol), then gives the kernel its space back (data_tail, release,
 *    (D));
 *  - the consumer (taproot_ring_consume()) reads [tail, head) of the
 *    buffer and releases its tail, which the filler loads with acquire
 *    before it writes over those bytes.
 * The filler does not validate records (the consumer does): it needs a
 * record's size only to copy it whole. A size no record can have passes
 * the rest of the kernel's bytes on as they are, for the consumer to find
 * corrupt; a head beyond the ring's size (nothing there can be trusted)
 * is dropped here and reported by the next consume, as it would have.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/kernel-private.h"

#define RR_FULL_WAIT_MS	5	/* a buffer was full: look again this soon */
/* Pages are given back this many bytes at a time, at least: one madvise(). */
#define RR_RELEASE_BATCH	(64u << 10)

struct tp_ring_reader {
	pthread_t thread;
	bool started;
	pthread_mutex_t fill_lock;	/* one filler at a time */
	int notify_fd;			/* eventfd: records were copied */
	int stop_fd;			/* eventfd: the thread is to end */
	int err;			/* the thread's poll() failed: -errno */
};

/* ------------------------------------------------------------ buffers */

/* @b: @size bytes (a power of two) of memory mapped twice, back to back. */
static int rr_buf_map(struct tp_ring_buf *b, uint64_t size)
{
	uint8_t *w;
	int fd, err = 0;

	fd = memfd_create("taproot-ring-buffer", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		err = -errno;
		goto out;
	}
	w = mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	if (mmap(w, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    mmap(w + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		err = -errno;
		munmap(w, 2 * size);
		goto out;
	}
	b->data = w;
	b->size = size;
out:
	close(fd);
	return err;
}

static void rr_buf_unmap(struct tp_ring_buf *b)
{
	if (b->data)
		munmap(b->data, 2 * b->size);
	memset(b, 0, sizeof(*b));
}

void tp_ring_reader_release(struct tp_ring_cpu *c, uint64_t tail)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), to = tail & ~(page - 1);
	struct tp_ring_buf *b = &c->buf;

	if (to - b->freed < RR_RELEASE_BATCH)
		return;
	if (to - b->freed > b->size)
		b->freed = to - b->size;	/* more than a lap: every page once */
	/*
	 * [freed, to) is consumed and not yet released to the filler, which
	 * cannot write there before the tail's store that follows. Contiguous
	 * in the second mapping when it wraps; either mapping's pages are the
	 * memfd's, which MADV_REMOVE frees (the filler's next write faults in
	 * a zeroed page). A failure only leaves the pages in memory.
	 */
	(void)madvise(b->data + (b->freed & (b->size - 1)), to - b->freed, MADV_REMOVE);
	b->freed = to;
}

uint64_t tp_ring_reader_resident(const struct tp_ring_cpu *c)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), n = c->buf.size / page, resident = 0;
	unsigned char *vec = malloc(n);

	if (!vec)
		return 0;
	if (!mincore(c->buf.data, c->buf.size, vec))
		for (uint64_t i = 0; i < n; i++)
			resident += vec[i] & 1;
	free(vec);
	return resident * page;
}

/* ------------------------------------------------------------- filling */

/* Copy @c's whole records while its buffer has room; *@full when it ran out. */
static uint64_t rr_fill_cpu(struct tp_ring_cpu *c, bool *full)
{
	/* (C): pairs with the kernel's smp_wmb() (A). */
	uint64_t khead = __atomic_load_n(&c->prod->data_head, __ATOMIC_ACQUIRE);
	uint64_t kpos = c->ktail, head = c->buf.head, start = head;
	uint64_t room = c->buf.size - (head - __atomic_load_n(&c->buf.tail, __ATOMIC_ACQUIRE));

	if (khead - kpos > c->size) {
		if (!c->corrupt_why) {
			c->corrupt_why = "head more than the data size ahead of tail";
			c->corrupt_pos = kpos;
		}
		kpos = khead;
	}
	while (kpos != khead) {
		const struct taproot_rec_header *h =
			(const void *)(c->data + (kpos & (c->size - 1)));
		uint64_t len = h->size;

		if (len < sizeof(*h) || len > khead - kpos)
			len = khead - kpos;	/* the consumer will call it corrupt */
		if (len > room) {
			*full = true;
			break;
		}
		/* Contiguous on both sides: each data area is mapped twice. */
		memcpy(c->buf.data + (head & (c->buf.size - 1)), h, len);
		kpos += len;
		head += len;
		room -= len;
	}
	if (head != start) {
		__atomic_store_n(&c->buf.head, head, __ATOMIC_RELEASE);
		if (c->buf.size - room > c->buf.peak)
			__atomic_store_n(&c->buf.peak, c->buf.size - room, __ATOMIC_RELAXED);
	}
	if (kpos != c->ktail) {
		__atomic_store_n(&c->ktail, kpos, __ATOMIC_RELAXED);
		/* (D): pairs with the kernel's READ_ONCE(tail) at reserve. */
		__atomic_store_n(&c->cons->data_tail, kpos, __ATOMIC_RELEASE);
	}
	return head - start;
}

/* Every CPU, under fill_lock. Returns bytes copied; *@full as above. */
static uint64_t rr_fill(struct taproot_ring *r, bool *full)
{
	uint64_t copied = 0;

	*full = false;
	for (unsigned int i = 0; i < r->nr; i++)
		copied += rr_fill_cpu(&r->cpus[i], full);
	return copied;
}

void tp_ring_reader_fill(struct taproot_ring *r, const struct taproot_ring_ops *ops, void *arg)
{
	struct tp_ring_reader *rr = r->reader;
	eventfd_t v;
	bool full;

	/* Cleared before the fill: a copy after it signals again. */
	(void)eventfd_read(rr->notify_fd, &v);
	pthread_mutex_lock(&rr->fill_lock);
	rr_fill(r, &full);
	for (unsigned int i = 0; i < r->nr; i++) {
		struct tp_ring_cpu *c = &r->cpus[i];

		if (!c->corrupt_why)
			continue;
		c->invalid++;
		if (ops->corrupt)
			ops->corrupt(c->cpu, c->corrupt_pos, c->corrupt_why, arg);
		c->corrupt_why = NULL;
	}
	pthread_mutex_unlock(&rr->fill_lock);
}

/* ------------------------------------------------------------- thread */

/*
 * Wait for the module's wakeup (its watermark, or its slow timer for a
 * trickle), copy, tell the consumer. With a buffer full, the module's
 * poll() stays ready: wait for the consumer instead, a little at a time.
 */
static void *rr_main(void *arg)
{
	struct taproot_ring *r = arg;
	struct tp_ring_reader *rr = r->reader;
	bool full = false;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = rr->stop_fd, .events = POLLIN },
			{ .fd = r->fd, .events = POLLIN },
		};
		int n = poll(p, full || r->fd < 0 ? 1 : 2, full || r->fd < 0 ? RR_FULL_WAIT_MS : -1);
		uint64_t copied;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p[1].revents & (POLLERR | POLLNVAL))) {
			__atomic_store_n(&rr->err, n < 0 ? -errno : -EIO, __ATOMIC_RELEASE);
			(void)eventfd_write(rr->notify_fd, 1);
			return NULL;
		}
		if (p[0].revents)
			return NULL;
		pthread_mutex_lock(&rr->fill_lock);
		copied = rr_fill(r, &full);
		pthread_mutex_unlock(&rr->fill_lock);
		if (copied)
			(void)eventfd_write(rr->notify_fd, 1);
	}
}

int tp_ring_reader_error(const struct taproot_ring *r)
{
	return r->reader ? __atomic_load_n(&r->reader->err, __ATOMIC_ACQUIRE) : 0;
}

int taproot_ring_fd(const struct taproot_ring *r)
{
	return r->reader ? r->reader->notify_fd : r->fd;
}

/* Per CPU: an even share of @bytes, a power of two, at least the ring's size. */
static uint64_t rr_buf_size(const struct tp_ring_cpu *c, size_t bytes, unsigned int nr)
{
	uint64_t share = bytes / nr, size = c->size;

	while (size <= share / 2)
		size *= 2;
	return size;
}

/* Consume from the buffers from now on: they start empty, the kernel's tail as it was. */
static void rr_switch(struct taproot_ring *r)
{
	for (unsigned int i = 0; i < r->nr; i++) {
		struct tp_ring_cpu *c = &r->cpus[i];

		c->ktail = c->tail;
		c->tail = c->head = c->pos = 0;
		c->buf.freed = 0;
		c->src = c->buf.data;
		c->src_size = c->buf.size;
		c->src_head = &c->buf.head;
		c->src_tail = &c->buf.tail;
	}
}

/* Back to the kernel's rings, the buffers empty (a start that failed). */
static void rr_unswitch(struct taproot_ring *r)
{
	for (unsigned int i = 0; i < r->nr; i++) {
		struct tp_ring_cpu *c = &r->cpus[i];

		c->tail = c->head = c->pos = c->ktail;
		tp_ring_read_kernel(c);
	}
}

static void rr_free(struct taproot_ring *r)
{
	struct tp_ring_reader *rr = r->reader;

	for (unsigned int i = 0; i < r->nr; i++)
		rr_buf_unmap(&r->cpus[i].buf);
	if (rr->notify_fd >= 0)
		close(rr->notify_fd);
	if (rr->stop_fd >= 0)
		close(rr->stop_fd);
	pthread_mutex_destroy(&rr->fill_lock);
	free(rr);
	r->reader = NULL;
}

int taproot_ring_start_reader(struct taproot_ring *r, size_t bytes)
{
	struct tp_ring_reader *rr;
	sigset_t all, old;
	int err;

	if (r->reader)
		return tp_err(-EALREADY, "ring: the reader thread already runs");
	if (!bytes || !r->nr)
		return tp_err(-EINVAL, "ring: a reader thread needs a buffer and a ring");
	rr = calloc(1, sizeof(*rr));
	if (!rr)
		return tp_err(-ENOMEM, NULL);
	pthread_mutex_init(&rr->fill_lock, NULL);
	rr->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rr->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->reader = rr;
	if (rr->notify_fd < 0 || rr->stop_fd < 0) {
		err = tp_err(-errno, "ring: eventfd: %s", strerror(errno));
		goto fail;
	}
	for (unsigned int i = 0; i < r->nr; i++) {
		struct tp_ring_cpu *c = &r->cpus[i];

		err = rr_buf_map(&c->buf, rr_buf_size(c, bytes, r->nr));
		if (err < 0) {
			err = tp_err(err, "ring: a buffer of CPU %u: %s", c->cpu, strerror(-err));
			goto fail;
		}
	}
	rr_switch(r);
	/* The caller's signals are its own (taprootd reads them from a signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&rr->thread, NULL, rr_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err < 0) {
		rr_unswitch(r);
		err = tp_err(err, "ring: starting the reader thread: %s", strerror(-err));
		goto fail;
	}
	rr->started = true;
	return 0;
fail:
	rr_free(r);
	return err;
}

void tp_ring_reader_stop(struct taproot_ring *r)
{
	struct tp_ring_reader *rr = r->reader;

	if (!rr)
		return;
	if (rr->started) {
		(void)eventfd_write(rr->stop_fd, 1);
		pthread_join(rr->thread, NULL);
	}
	rr_free(r);
}
