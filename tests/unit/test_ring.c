// SPDX-License-Identifier: GPL-2.0
/*
 * The ring consumer over rings laid out exactly as the kernel lays them out:
 * a memfd holds consumer page, producer page and data; the reader's window
 * maps the producer page and the data pages twice back to back (two mmaps
 * of the same file pages), and the test writes records through a separate
 * writable mapping, as the producer would. Plus record validation on
 * corrupted records and the CPU list parser.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel/kernel-private.h"

#define NR_CPUS		3
#define MAX_SEEN	1024

/* ------------------------------------------------------------ fixture */

struct fake_ring {
	int fd;
	size_t p, d;
	struct taproot_ring_consumer *cons;	/* the reader's rw page */
	void *window;				/* the reader's ro window */
	struct taproot_ring_producer *prod;	/* the producer's view */
	uint8_t *data;				/* the producer's view, once */
};

struct seen {
	unsigned int cpu;
	uint16_t type;
	uint32_t size;
	uint64_t time;
};

struct fixture {
	struct fake_ring rings[NR_CPUS];
	struct taproot_ring *r;
	struct seen seen[MAX_SEEN];
	unsigned int nr_seen;
	unsigned int stop_after;		/* 0: never stop */
	size_t reader_bytes;			/* attach(): 0, or start a reader thread */
	unsigned int nr_corrupt;
	unsigned int corrupt_cpu;
	uint64_t corrupt_pos;
	const char *corrupt_why;
	uint8_t last_sample[4096];		/* copy of the last sample seen */
};

static void fake_ring_init(struct fake_ring *f, unsigned int cpu, size_t d)
{
	size_t p = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *w;

	f->p = p;
	f->d = d;
	f->fd = memfd_create("taproot-ring", MFD_CLOEXEC);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, (off_t)(2 * p + d)), 0);

	f->cons = mmap(NULL, p, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	assert_true(f->cons != MAP_FAILED);
	/* Reserve P + 2D, then map the producer page and data, and data again. */
	w = mmap(NULL, p + 2 * d, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(w != MAP_FAILED);
	assert_true(mmap(w, p + d, PROT_READ, MAP_SHARED | MAP_FIXED, f->fd,
			 (off_t)p) == w);
	assert_true(mmap(w + p + d, d, PROT_READ, MAP_SHARED | MAP_FIXED, f->fd,
			 (off_t)(2 * p)) == w + p + d);
	f->window = w;

	f->prod = mmap(NULL, p, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)p);
	assert_true(f->prod != MAP_FAILED);
	f->data = mmap(NULL, d, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)(2 * p));
	assert_true(f->data != MAP_FAILED);

	f->prod->abi_version = TAPROOT_ABI_VERSION;
	f->prod->cpu = cpu;
	f->prod->page_size = (uint32_t)p;
	f->prod->data_offset = (uint32_t)(2 * p);
	f->prod->data_size = d;
}

static void fake_ring_fini(struct fake_ring *f)
{
	munmap(f->data, f->d);
	munmap(f->prod, f->p);
	munmap(f->window, f->p + 2 * f->d);
	munmap(f->cons, f->p);
	close(f->fd);
}

/* Both positions at @pos, as after a reader released everything up to it. */
static void fake_ring_set_pos(struct fake_ring *f, uint64_t pos)
{
	f->prod->data_head = pos;
	f->cons->data_tail = pos;
}

/* The producer: write @size bytes at head, wrapping in the data area; publish. */
static void produce(struct fake_ring *f, const void *rec, size_t size)
{
	uint64_t head = f->prod->data_head;
	const uint8_t *b = rec;
	size_t i;

	assert_true(head + size - f->cons->data_tail <= f->d);
	for (i = 0; i < size; i++)
		f->data[(head + i) & (f->d - 1)] = b[i];
	/* (A)+(B) of the diagram. */
	__atomic_store_n(&f->prod->data_head, head + size, __ATOMIC_RELEASE);
}

static size_t sample_build(void *buf, uint64_t time, uint16_t kstack_nr,
			   uint32_t ustack_len)
{
	struct taproot_rec_sample *s = buf;
	uint64_t *k = (uint64_t *)(s + 1);
	uint8_t *u = (uint8_t *)(k + kstack_nr);
	size_t size = (sizeof(*s) + kstack_nr * 8u + ustack_len + 7) & ~(size_t)7;
	uint32_t i;

	memset(buf, 0, size);
	s->hdr.size = (uint32_t)size;
	s->hdr.type = TAPROOT_REC_SAMPLE;
	s->hdr.time_ns = time;
	s->pid = 42;
	s->tid = 43;
	s->kstack_nr = kstack_nr;
	s->ustack_len = ustack_len;
	memcpy(s->comm, "yes", 4);
	for (i = 0; i < kstack_nr; i++)
		k[i] = 0xffffffff81000000ull + i;
	for (i = 0; i < ustack_len; i++)
		u[i] = (uint8_t)(i * 7 + 1);
	return size;
}

static void produce_sample(struct fake_ring *f, uint64_t time)
{
	uint64_t buf[64];

	produce(f, buf, sample_build(buf, time, 2, 16));
}

static void produce_lost(struct fake_ring *f, uint64_t time, uint64_t full)
{
	struct taproot_rec_lost l = {
		.hdr = { .size = sizeof(l), .type = TAPROOT_REC_LOST, .time_ns = time },
		.lost = { [TAPROOT_LOST_FULL] = full },
	};

	produce(f, &l, sizeof(l));
}

static int on_record(const struct taproot_rec_header *rec, unsigned int cpu, void *arg)
{
	struct fixture *fx = arg;
	struct seen *s;

	assert_true(fx->nr_seen < MAX_SEEN);
	s = &fx->seen[fx->nr_seen++];
	s->cpu = cpu;
	s->type = rec->type;
	s->size = rec->size;
	s->time = rec->time_ns;
	if (rec->type == TAPROOT_REC_SAMPLE && rec->size <= sizeof(fx->last_sample))
		memcpy(fx->last_sample, rec, rec->size);
	return fx->stop_after && fx->nr_seen == fx->stop_after;
}

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	struct fixture *fx = arg;

	fx->nr_corrupt++;
	fx->corrupt_cpu = cpu;
	fx->corrupt_pos = pos;
	fx->corrupt_why = why;
}

static const struct taproot_ring_ops ops = {
	.record = on_record,
	.corrupt = on_corrupt,
};

/* Rings of @d bytes for CPUs 0, 2 and 5 (not contiguous, as possible CPUs may be). */
static const unsigned int cpu_ids[NR_CPUS] = { 0, 2, 5 };

static int setup_d(void **state, size_t d)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	unsigned int i;

	assert_non_null(fx);
	for (i = 0; i < NR_CPUS; i++)
		fake_ring_init(&fx->rings[i], cpu_ids[i], d);
	*state = fx;
	return 0;
}

static int setup(void **state)
{
	return setup_d(state, 2 * (size_t)sysconf(_SC_PAGESIZE));
}

/* Attach the rings to a reader (after the test set their positions). */
static void attach(struct fixture *fx)
{
	struct fake_ring *f;
	unsigned int i;

	assert_int_equal(tp_ring_new(-1, fx->rings[0].p, &fx->r), 0);
	for (i = 0; i < NR_CPUS; i++) {
		f = &fx->rings[i];
		assert_int_equal(tp_ring_add(fx->r, cpu_ids[i], f->cons, f->p, f->window,
					     f->p + 2 * f->d, false), 0);
	}
	if (fx->reader_bytes)
		assert_int_equal(taproot_ring_start_reader(fx->r, fx->reader_bytes), 0);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	unsigned int i;

	taproot_ring_close(fx->r);
	for (i = 0; i < NR_CPUS; i++)
		fake_ring_fini(&fx->rings[i]);
	free(fx);
	return 0;
}

/* ------------------------------------------------------------ merge */

static void ring_merge_delivers_in_time_order(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t want_time[] = { 10, 15, 20, 30, 40, 45, 50, 60, 70 };
	static const unsigned int want_cpu[] = { 0, 5, 2, 5, 0, 2, 2, 0, 5 };
	unsigned int i;

	attach(fx);
	produce_sample(&fx->rings[0], 10);
	produce_sample(&fx->rings[0], 40);
	produce_sample(&fx->rings[0], 60);
	produce_sample(&fx->rings[1], 20);
	produce_lost(&fx->rings[1], 45, 3);
	produce_sample(&fx->rings[1], 50);
	produce_sample(&fx->rings[2], 15);
	produce_sample(&fx->rings[2], 30);
	produce_sample(&fx->rings[2], 70);

	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 9);
	assert_int_equal(fx->nr_seen, 9);
	for (i = 0; i < 9; i++) {
		assert_int_equal(fx->seen[i].time, want_time[i]);
		assert_int_equal(fx->seen[i].cpu, want_cpu[i]);
	}
	assert_int_equal(fx->seen[5].type, TAPROOT_REC_LOST);
	assert_int_equal(fx->nr_corrupt, 0);
}

static void ring_merge_ties_broken_by_cpu(void **state)
{
	struct fixture *fx = *state;

	attach(fx);
	produce_sample(&fx->rings[2], 100);
	produce_sample(&fx->rings[1], 100);
	produce_sample(&fx->rings[0], 100);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 3);
	assert_int_equal(fx->seen[0].cpu, 0);
	assert_int_equal(fx->seen[1].cpu, 2);
	assert_int_equal(fx->seen[2].cpu, 5);
}

/* One CPU's records keep their ring order even when their times do not. */
static void ring_merge_keeps_ring_order_within_cpu(void **state)
{
	struct fixture *fx = *state;

	attach(fx);
	produce_sample(&fx->rings[0], 50);
	produce_sample(&fx->rings[0], 20);
	produce_sample(&fx->rings[1], 30);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 3);
	assert_int_equal(fx->seen[0].time, 30);
	assert_int_equal(fx->seen[1].time, 50);
	assert_int_equal(fx->seen[2].time, 20);
}

/* Documented limit: order holds within one call only. */
static void ring_later_records_go_to_next_call(void **state)
{
	struct fixture *fx = *state;

	attach(fx);
	produce_sample(&fx->rings[0], 100);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 1);
	produce_sample(&fx->rings[1], 50);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 1);
	assert_int_equal(fx->seen[1].time, 50);
}

/* ------------------------------------------------------------ release */

static void ring_consume_releases_tail_to_head(void **state)
{
	struct fixture *fx = *state;
	unsigned int i;

	attach(fx);
	for (i = 0; i < NR_CPUS; i++) {
		produce_sample(&fx->rings[i], i);
		produce_lost(&fx->rings[i], 10 + i, 1);
	}
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 6);
	for (i = 0; i < NR_CPUS; i++)
		assert_int_equal(fx->rings[i].cons->data_tail, fx->rings[i].prod->data_head);
	/* Nothing left: nothing delivered twice. */
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 0);
	assert_int_equal(fx->nr_seen, 6);
}

static void ring_consume_across_wrap(void **state)
{
	struct fixture *fx = *state;
	struct fake_ring *f = &fx->rings[1];
	/* Free-running and past several laps: 64 bytes before the end. */
	uint64_t start = 3 * f->d - 64;
	uint64_t buf[512];
	size_t size;
	unsigned int i;

	fake_ring_set_pos(f, start);
	attach(fx);
	size = sample_build(buf, 7, 4, 1000);
	assert_true(size > 64);
	produce(f, buf, size);
	produce_lost(f, 8, 2);

	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 2);
	assert_int_equal(fx->seen[0].type, TAPROOT_REC_SAMPLE);
	assert_int_equal(fx->seen[0].size, size);
	/* Read in place through the second mapping: the bytes are whole. */
	assert_memory_equal(fx->last_sample, buf, size);
	assert_int_equal(fx->seen[1].type, TAPROOT_REC_LOST);
	assert_int_equal(f->cons->data_tail, start + size + sizeof(struct taproot_rec_lost));
	assert_int_equal(f->cons->data_tail, f->prod->data_head);

	/* The room released is reused: fill the ring again across the end. */
	for (i = 0; i < 20; i++)
		produce_sample(f, 100 + i);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 20);
	assert_int_equal(f->cons->data_tail, f->prod->data_head);
	assert_int_equal(fx->nr_corrupt, 0);
}

static void ring_callback_stop_releases_only_delivered(void **state)
{
	struct fixture *fx = *state;
	uint64_t after_first;

	attach(fx);
	produce_sample(&fx->rings[0], 1);
	after_first = fx->rings[0].prod->data_head;
	produce_sample(&fx->rings[0], 3);
	produce_sample(&fx->rings[1], 2);
	produce_sample(&fx->rings[1], 4);

	fx->stop_after = 2;	/* times 1 (cpu 0) and 2 (cpu 2) */
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 2);
	assert_int_equal(fx->rings[0].cons->data_tail, after_first);
	assert_int_equal(fx->rings[1].cons->data_tail,
			 fx->rings[1].prod->data_head - fx->seen[1].size);
	fx->stop_after = 0;
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 2);
	assert_int_equal(fx->seen[2].time, 3);
	assert_int_equal(fx->seen[3].time, 4);
}

/* ------------------------------------------------------------ corruption */

static void ring_corrupt_record_drops_rest_of_cpu(void **state)
{
	struct fixture *fx = *state;
	struct fake_ring *f = &fx->rings[1];
	struct taproot_ring_stats st;
	uint64_t buf[64], bad_pos;
	struct taproot_rec_sample *s = (void *)buf;
	size_t size;

	attach(fx);
	produce_sample(f, 1);
	bad_pos = f->prod->data_head;
	size = sample_build(buf, 2, 2, 16);
	s->kstack_nr = 200;
	produce(f, buf, size);
	produce_sample(f, 3);
	produce_sample(&fx->rings[0], 4);

	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 2);
	assert_int_equal(fx->seen[0].time, 1);
	assert_int_equal(fx->seen[1].time, 4);
	assert_int_equal(fx->nr_corrupt, 1);
	assert_int_equal(fx->corrupt_cpu, 2);
	assert_int_equal(fx->corrupt_pos, bad_pos);
	assert_string_equal(fx->corrupt_why, "sample kstack_nr above TAPROOT_KSTACK_MAX");
	/* All of CPU 2's unread bytes are released; it reads on afterwards. */
	assert_int_equal(f->cons->data_tail, f->prod->data_head);
	taproot_ring_stats(fx->r, 1, &st);
	assert_int_equal(st.cpu, 2);
	assert_int_equal(st.invalid, 1);
	assert_int_equal(st.unread, 0);
	produce_sample(f, 5);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 1);
	assert_int_equal(fx->seen[2].time, 5);
}

static void ring_head_too_far_ahead_is_corrupt(void **state)
{
	struct fixture *fx = *state;
	struct fake_ring *f = &fx->rings[0];

	attach(fx);
	f->prod->data_head = f->d + 8;
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 0);
	assert_int_equal(fx->nr_corrupt, 1);
	assert_int_equal(fx->corrupt_pos, 0);
	assert_int_equal(f->cons->data_tail, f->d + 8);
}

static void ring_unknown_type_delivered_and_skipped(void **state)
{
	struct fixture *fx = *state;
	uint64_t rec[4] = { 0 };
	struct taproot_rec_header *h = (struct taproot_rec_header *)rec;

	attach(fx);
	h->size = sizeof(rec);
	h->type = 0x7777;
	h->time_ns = 5;
	produce(&fx->rings[0], rec, sizeof(rec));
	produce_sample(&fx->rings[0], 6);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 2);
	assert_int_equal(fx->seen[0].type, 0x7777);
	assert_int_equal(fx->seen[1].type, TAPROOT_REC_SAMPLE);
	assert_int_equal(fx->nr_corrupt, 0);
}

/* ------------------------------------------------------------ reader thread */

/*
 * The consume tests again, with a reader thread copying the rings into
 * its buffers (its fd is -1 here, so it looks every few ms, and races
 * with the test's producer and consumer): delivery is the same.
 */
#define WITH_READER(test)						\
static void test##_with_reader(void **state)				\
{									\
	((struct fixture *)*state)->reader_bytes = 1 << 20;		\
	test(state);							\
}
WITH_READER(ring_merge_delivers_in_time_order)
WITH_READER(ring_merge_keeps_ring_order_within_cpu)
WITH_READER(ring_consume_releases_tail_to_head)
WITH_READER(ring_consume_across_wrap)
WITH_READER(ring_corrupt_record_drops_rest_of_cpu)
WITH_READER(ring_head_too_far_ahead_is_corrupt)
WITH_READER(ring_unknown_type_delivered_and_skipped)

/* Wait (2 s at most) until the reader thread has released all of @f. */
static void wait_copied(struct fake_ring *f)
{
	struct timespec ms = { .tv_nsec = 1000000 };

	for (int i = 0; i < 2000; i++) {
		if (__atomic_load_n(&f->cons->data_tail, __ATOMIC_ACQUIRE) == f->prod->data_head)
			return;
		nanosleep(&ms, NULL);
	}
	fail_msg("the reader thread did not copy the ring");
}

/* Samples of time @t.. into @f until it holds about @bytes; returns the next time. */
static uint64_t produce_bytes(struct fake_ring *f, uint64_t t, size_t bytes)
{
	uint64_t start = f->prod->data_head;

	while (f->prod->data_head - start + 256 < bytes)
		produce_sample(f, t++);
	return t;
}

/*
 * Four rings' worth written while nobody consumes: the thread keeps the
 * ring drained into its buffer, and one consume delivers every record,
 * in order; the stats count the buffered bytes and their peak.
 */
static void reader_drains_while_consumer_busy(void **state)
{
	struct fixture *fx = *state;
	struct fake_ring *f = &fx->rings[1];
	struct pollfd p = { .events = POLLIN };
	struct taproot_ring_stats st;
	uint64_t t = 1, held = 0, head0 = f->prod->data_head;

	fx->reader_bytes = 1 << 20;
	attach(fx);
	for (int round = 0; round < 4; round++) {
		t = produce_bytes(f, t, f->d);
		wait_copied(f);
	}
	held = f->prod->data_head - head0;
	assert_true(held > 3 * f->d);
	p.fd = taproot_ring_fd(fx->r);
	assert_int_equal(poll(&p, 1, 2000), 1);
	taproot_ring_stats(fx->r, 1, &st);
	assert_int_equal(st.buffered, held);
	assert_int_equal(st.unread, held);
	assert_true(st.buffer_size >= held && st.buffer_peak == held);

	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), t - 1);
	for (unsigned int i = 0; i < fx->nr_seen; i++)
		assert_int_equal(fx->seen[i].time, i + 1);
	assert_int_equal(fx->nr_corrupt, 0);
	taproot_ring_stats(fx->r, 1, &st);
	assert_int_equal(st.unread, 0);
	assert_int_equal(st.buffered, 0);
	assert_int_equal(poll(&p, 1, 0), 0);	/* consume cleared the wakeup */
}

/*
 * Laps of a buffer through a consumer that keeps up: the buffer's pages
 * behind its tail go back to the system, so that what stays in memory is
 * what it holds, not every page a lap wrote once.
 */
static void reader_buffer_gives_pages_back(void **state)
{
	struct fixture *fx = *state;
	struct fake_ring *f = &fx->rings[0];
	struct taproot_ring_stats st;
	uint64_t t = 1, seen = 0;

	fx->reader_bytes = NR_CPUS << 20;
	attach(fx);
	taproot_ring_stats(fx->r, 0, &st);
	assert_int_equal(st.buffer_size, 1 << 20);
	assert_true(st.buffer_resident < (64 << 10));
	while (seen < 3 * st.buffer_size) {
		t = produce_bytes(f, t, f->d / 2);
		wait_copied(f);
		seen += f->d / 2;
		while (taproot_ring_consume(fx->r, &ops, fx) > 0)
			;
		fx->nr_seen = 0;
		taproot_ring_stats(fx->r, 0, &st);
		assert_int_equal(st.buffered, 0);
		/* The batch not yet given back, and the page the tail is in. */
		assert_true(st.buffer_resident <= (64 << 10) + 4096);
	}
	assert_int_equal(fx->nr_corrupt, 0);
}

/*
 * A buffer of one ring's size (the least): with it full, the rest stays
 * in the kernel's ring (its space not released, nothing overwritten) and
 * the next consumes deliver everything, in order.
 */
static void reader_full_buffer_leaves_rest_in_ring(void **state)
{
	struct fixture *fx = *state;
	struct fake_ring *f = &fx->rings[0];
	struct timespec wait = { .tv_nsec = 30000000 };
	struct taproot_ring_stats st;
	uint64_t t, tail;

	fx->reader_bytes = 1;
	attach(fx);
	taproot_ring_stats(fx->r, 0, &st);
	assert_int_equal(st.buffer_size, f->d);
	t = produce_bytes(f, 1, f->d);
	wait_copied(f);
	t = produce_bytes(f, t, f->d);
	nanosleep(&wait, NULL);
	tail = __atomic_load_n(&f->cons->data_tail, __ATOMIC_ACQUIRE);
	assert_true(tail < f->prod->data_head);
	assert_true(f->prod->data_head - tail > f->d / 2);

	assert_true(taproot_ring_consume(fx->r, &ops, fx) > 0);
	while (taproot_ring_consume(fx->r, &ops, fx) > 0)
		;
	assert_int_equal(fx->nr_seen, t - 1);
	for (unsigned int i = 0; i < fx->nr_seen; i++)
		assert_int_equal(fx->seen[i].time, i + 1);
	assert_int_equal(f->cons->data_tail, f->prod->data_head);
}

static void reader_start_refused_twice_or_empty(void **state)
{
	struct fixture *fx = *state;

	attach(fx);
	assert_int_equal(taproot_ring_start_reader(fx->r, 0), -EINVAL);
	assert_int_equal(taproot_ring_start_reader(fx->r, 1 << 16), 0);
	assert_int_equal(taproot_ring_start_reader(fx->r, 1 << 16), -EALREADY);
	/* Still reads. */
	produce_sample(&fx->rings[2], 9);
	assert_int_equal(taproot_ring_consume(fx->r, &ops, fx), 1);
}

/* ------------------------------------------------------------ layout */

static void ring_producer_page_checked(void **state)
{
	struct fixture *fx = *state;
	struct fake_ring *f = &fx->rings[0];
	struct taproot_ring *r;

	assert_int_equal(tp_ring_new(-1, f->p, &r), 0);
	f->prod->abi_version = TAPROOT_ABI_VERSION + 1;
	assert_int_equal(tp_ring_add(r, 0, f->cons, f->p, f->window, f->p + 2 * f->d,
				     false), -TAPROOT_EABI);
	f->prod->abi_version = TAPROOT_ABI_VERSION;
	assert_int_equal(tp_ring_add(r, 1, f->cons, f->p, f->window, f->p + 2 * f->d,
				     false), -TAPROOT_EPROTO);
	assert_non_null(strstr(taproot_errmsg(-TAPROOT_EPROTO), "says CPU 0"));
	f->prod->data_offset = (uint32_t)f->p;
	assert_int_equal(tp_ring_add(r, 0, f->cons, f->p, f->window, f->p + 2 * f->d,
				     false), -TAPROOT_EPROTO);
	f->prod->data_offset = (uint32_t)(2 * f->p);
	f->prod->data_size = 3 * f->p;
	assert_int_equal(tp_ring_add(r, 0, f->cons, f->p, f->window, f->p + 2 * f->d,
				     false), -TAPROOT_EPROTO);
	f->prod->data_size = f->d;
	/* The window must hold the data twice. */
	assert_int_equal(tp_ring_add(r, 0, f->cons, f->p, f->window, f->p + f->d,
				     false), -TAPROOT_EPROTO);
	assert_int_equal(tp_ring_add(r, 0, f->cons, f->p, f->window, f->p + 2 * f->d,
				     false), 0);
	assert_int_equal(taproot_ring_count(r), 1);
	taproot_ring_close(r);
}

/* ------------------------------------------------------------ records */

static int check(const void *rec, size_t avail, const char **why)
{
	return taproot_rec_check(rec, avail, why);
}

static void assert_rec_corrupt(const void *rec, size_t avail, const char *want)
{
	const char *why;

	assert_int_equal(check(rec, avail, &why), -TAPROOT_ECORRUPT);
	assert_non_null(why);
	assert_string_equal(why, want);
}

static void rec_check_valid_records_pass(void **state)
{
	uint64_t buf[512];
	struct taproot_rec_lost l = {
		.hdr = { .size = sizeof(l), .type = TAPROOT_REC_LOST },
	};
	struct taproot_rec_sample *s = (void *)buf;
	const char *why;
	size_t size;

	size = sample_build(buf, 1, TAPROOT_KSTACK_MAX, 0);
	assert_int_equal(check(buf, size, &why), 0);
	assert_null(why);
	size = sample_build(buf, 1, 0, 1);	/* padded to 8 */
	assert_int_equal(size, 208);
	assert_int_equal(check(buf, size, &why), 0);
	assert_int_equal(check(&l, sizeof(l), &why), 0);
	/* Padding beyond what the arrays need is allowed (commit's @used). */
	size = sample_build(buf, 1, 1, 8);
	s->hdr.size = (uint32_t)size + 64;
	assert_int_equal(check(buf, size + 64, &why), 0);
}

static void rec_check_bad_header_refused(void **state)
{
	uint64_t buf[8] = { 0 };
	struct taproot_rec_header *h = (struct taproot_rec_header *)buf;

	h->type = 0x99;
	h->size = 24;
	assert_rec_corrupt(buf, 15, "fewer unread bytes than a record header");
	h->size = 8;
	assert_rec_corrupt(buf, 64, "size smaller than the record header");
	h->size = 0;
	assert_rec_corrupt(buf, 64, "size smaller than the record header");
	h->size = 20;
	assert_rec_corrupt(buf, 64, "size not a multiple of 8");
	h->size = 72;
	assert_rec_corrupt(buf, 64, "size beyond the unread bytes");
	h->size = UINT32_MAX & ~7u;
	assert_rec_corrupt(buf, 64, "size beyond the unread bytes");
	h->size = 16;
	assert_rec_corrupt((const uint8_t *)buf + 4, 60, "record not 8-byte aligned");
}

static void rec_check_sample_lengths_refused(void **state)
{
	uint64_t buf[512];
	struct taproot_rec_sample *s = (void *)buf;
	size_t size;

	size = sample_build(buf, 1, 0, 0);
	s->hdr.size = 192;
	assert_rec_corrupt(buf, size, "sample smaller than its fixed part");

	size = sample_build(buf, 1, 2, 16);
	s->kstack_nr = TAPROOT_KSTACK_MAX + 1;
	assert_rec_corrupt(buf, size, "sample kstack_nr above TAPROOT_KSTACK_MAX");

	size = sample_build(buf, 1, 2, 16);
	s->ustack_len = TAPROOT_USTACK_MAX + 1;
	assert_rec_corrupt(buf, size, "sample ustack_len above TAPROOT_USTACK_MAX");

	size = sample_build(buf, 1, 2, 16);
	s->kstack_nr = 3;	/* one frame more than the size holds */
	assert_rec_corrupt(buf, size, "sample kstack, upcs and ustack overflow the record");

	size = sample_build(buf, 1, 2, 16);
	s->ustack_len = 17;
	assert_rec_corrupt(buf, size, "sample kstack, upcs and ustack overflow the record");

	/* Both at their maxima in a record too small: no arithmetic wraps. */
	size = sample_build(buf, 1, 0, 0);
	s->kstack_nr = TAPROOT_KSTACK_MAX;
	s->ustack_len = TAPROOT_USTACK_MAX;
	assert_rec_corrupt(buf, size, "sample kstack, upcs and ustack overflow the record");
}

static void rec_check_lost_size_fixed(void **state)
{
	uint64_t buf[8] = { 0 };
	struct taproot_rec_header *h = (struct taproot_rec_header *)buf;

	h->type = TAPROOT_REC_LOST;
	h->size = 56;
	assert_rec_corrupt(buf, 64, "lost record of the wrong size");
	h->size = 40;
	assert_rec_corrupt(buf, 64, "lost record of the wrong size");
}

static void rec_check_unknown_type_checked_as_header(void **state)
{
	uint64_t buf[4] = { 0 };
	struct taproot_rec_header *h = (struct taproot_rec_header *)buf;
	const char *why;

	h->type = TAPROOT_REC_EXIT + 100;
	h->size = 16;
	assert_int_equal(check(buf, 16, &why), 0);
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_SAMPLE), "sample");
	assert_null(taproot_rec_type_name(TAPROOT_REC_EXIT + 100));
}

/* ------------------------------------------- unwinding, interned stacks */

/*
 * A fallback SAMPLE in @buf: USER_REGS | UPCS | @flags, @kn kernel pcs,
 * @un user pcs, @ulen stack bytes, walk end @end. Returns its size.
 */
static size_t upcs_build(void *buf, unsigned int flags, uint16_t kn, uint8_t un,
			 uint32_t ulen, uint8_t end)
{
	struct taproot_rec_sample *s = buf;
	size_t size = (sizeof(*s) + (kn + un) * 8u + ulen + 7) & ~(size_t)7;

	memset(buf, 0, size);
	s->hdr.size = (uint32_t)size;
	s->hdr.type = TAPROOT_REC_SAMPLE;
	s->hdr.flags = (uint16_t)(TAPROOT_SAMPLE_F_USER_REGS | TAPROOT_SAMPLE_F_UPCS | flags);
	s->pid = 42;
	s->tid = 42;
	s->kstack_nr = kn;
	s->upc_nr = un;
	s->unwind = end;
	s->ustack_len = ulen;
	return size;
}

static size_t stack_build(void *buf, uint64_t id, uint16_t kn, uint8_t un, bool user)
{
	struct taproot_rec_stack *st = buf;
	size_t size = sizeof(*st) + (kn + un) * 8u;

	memset(buf, 0, size);
	st->hdr.size = (uint32_t)size;
	st->hdr.type = TAPROOT_REC_STACK;
	st->hdr.flags = user ? TAPROOT_SAMPLE_F_USER_REGS : TAPROOT_SAMPLE_F_KTHREAD;
	st->id = id;
	st->epoch = 3;
	st->pid = 42;
	st->kstack_nr = kn;
	st->upc_nr = un;
	st->unwind = user ? TAPROOT_KUNWIND_COMPLETE : TAPROOT_KUNWIND_NONE;
	return size;
}

static void rec_check_sample_upcs(void **state)
{
	uint64_t buf[512];
	struct taproot_rec_sample *s = (void *)buf;
	const char *why;
	size_t size;

	size = upcs_build(buf, TAPROOT_SAMPLE_F_UREGS_CALLER, 2, 3, 64, TAPROOT_KUNWIND_NO_CFI);
	assert_int_equal(size, 200 + 5 * 8 + 64);
	assert_int_equal(check(buf, size, &why), 0);
	size = upcs_build(buf, TAPROOT_SAMPLE_F_VERIFY, 0, TAPROOT_UNWIND_FRAMES_MAX, 8,
			  TAPROOT_KUNWIND_MAX_FRAMES);
	assert_int_equal(check(buf, size, &why), 0);

	/* One pc more than the size holds; the stack one byte too long. */
	size = upcs_build(buf, 0, 2, 3, 64, TAPROOT_KUNWIND_FAULT);
	s->upc_nr = 4;
	assert_rec_corrupt(buf, size, "sample kstack, upcs and ustack overflow the record");
	size = upcs_build(buf, 0, 2, 3, 64, TAPROOT_KUNWIND_FAULT);
	s->ustack_len = 65;
	assert_rec_corrupt(buf, size, "sample kstack, upcs and ustack overflow the record");

	size = upcs_build(buf, 0, 0, 1, 0, TAPROOT_KUNWIND_NR);
	assert_rec_corrupt(buf, size, "sample unwind not a TAPROOT_KUNWIND_*");
	size = upcs_build(buf, 0, 0, 1, 0, TAPROOT_KUNWIND_NONE);
	assert_rec_corrupt(buf, size, "sample UPCS with unwind NONE");
	size = upcs_build(buf, 0, 0, 200, 0, TAPROOT_KUNWIND_FAULT);
	assert_rec_corrupt(buf, size, "sample upc_nr above TAPROOT_UNWIND_FRAMES_MAX");
	size = upcs_build(buf, TAPROOT_SAMPLE_F_UREGS_CALLER | TAPROOT_SAMPLE_F_VERIFY, 0, 2, 0,
			  TAPROOT_KUNWIND_COMPLETE);
	assert_rec_corrupt(buf, size, "sample UREGS_CALLER with VERIFY");
	size = upcs_build(buf, 0, 0, 2, 0, TAPROOT_KUNWIND_FAULT);
	s->hdr.flags &= (uint16_t)~TAPROOT_SAMPLE_F_USER_REGS;
	assert_rec_corrupt(buf, size, "sample UPCS without a user part");
	size = upcs_build(buf, TAPROOT_SAMPLE_F_KTHREAD, 0, 2, 0, TAPROOT_KUNWIND_FAULT);
	assert_rec_corrupt(buf, size, "sample UPCS without a user part");

	/* Without UPCS: no pcs, no flag that needs them. */
	size = upcs_build(buf, 0, 0, 2, 0, TAPROOT_KUNWIND_FAULT);
	s->hdr.flags &= (uint16_t)~TAPROOT_SAMPLE_F_UPCS;
	assert_rec_corrupt(buf, size, "sample upc_nr without UPCS");
	size = sample_build(buf, 1, 0, 0);
	s->hdr.flags |= TAPROOT_SAMPLE_F_VERIFY;
	assert_rec_corrupt(buf, size, "sample UREGS_CALLER or VERIFY without UPCS");
	size = sample_build(buf, 1, 0, 0);
	s->hdr.flags |= TAPROOT_SAMPLE_F_UREGS_CALLER;
	assert_rec_corrupt(buf, size, "sample UREGS_CALLER or VERIFY without UPCS");
	/* A reason without pcs (the walk was not reported) is still a sample. */
	size = sample_build(buf, 1, 0, 0);
	s->unwind = TAPROOT_KUNWIND_NO_PROC;
	assert_int_equal(check(buf, size, &why), 0);
	s->unwind = 200;
	assert_rec_corrupt(buf, size, "sample unwind not a TAPROOT_KUNWIND_*");
}

static void rec_check_stack(void **state)
{
	uint64_t buf[512];
	struct taproot_rec_stack *st = (void *)buf;
	const char *why;
	size_t size;

	size = stack_build(buf, 7, 3, 5, true);
	assert_int_equal(size, 40 + 8 * 8);
	assert_int_equal(check(buf, size, &why), 0);
	size = stack_build(buf, 7, TAPROOT_KSTACK_MAX, 0, false);
	assert_int_equal(check(buf, size, &why), 0);
	size = stack_build(buf, 7, 3, TAPROOT_UNWIND_FRAMES_MAX, true);
	st->unwind = TAPROOT_KUNWIND_MAX_FRAMES;
	st->hdr.size += 16;	/* padding is allowed */
	assert_int_equal(check(buf, size + 16, &why), 0);

	size = stack_build(buf, 7, 3, 5, true);
	st->hdr.size = 32;
	assert_rec_corrupt(buf, size, "stack smaller than its fixed part");
	size = stack_build(buf, 0, 3, 5, true);
	assert_rec_corrupt(buf, size, "stack id 0");
	size = stack_build(buf, 7, 3, 5, true);
	st->upc_nr = 6;
	assert_rec_corrupt(buf, size, "stack pcs overflow the record");
	size = stack_build(buf, 7, 3, 5, true);
	st->kstack_nr = TAPROOT_KSTACK_MAX + 1;
	assert_rec_corrupt(buf, size, "stack kstack_nr above TAPROOT_KSTACK_MAX");
	size = stack_build(buf, 7, 3, 5, true);
	st->upc_nr = TAPROOT_UNWIND_FRAMES_MAX + 1;
	assert_rec_corrupt(buf, size, "stack upc_nr above TAPROOT_UNWIND_FRAMES_MAX");
	size = stack_build(buf, 7, 3, 5, true);
	st->unwind = TAPROOT_KUNWIND_FAULT;
	assert_rec_corrupt(buf, size, "stack unwind neither COMPLETE nor MAX_FRAMES");
	st->unwind = TAPROOT_KUNWIND_NR;
	assert_rec_corrupt(buf, size, "stack unwind not a TAPROOT_KUNWIND_*");
	size = stack_build(buf, 7, 3, 0, true);
	assert_rec_corrupt(buf, size, "stack with USER_REGS but no user pcs");
	size = stack_build(buf, 7, 3, 2, false);
	assert_rec_corrupt(buf, size, "stack user pcs without USER_REGS");
	/* Both counts at their maxima in a record too small: no arithmetic wraps. */
	size = stack_build(buf, 7, 0, 1, true);
	st->kstack_nr = TAPROOT_KSTACK_MAX;
	st->upc_nr = TAPROOT_UNWIND_FRAMES_MAX;
	assert_rec_corrupt(buf, size, "stack pcs overflow the record");
	/* Python frames: 16 bytes each after the pcs, only with user pcs. */
	size = stack_build(buf, 7, 3, 1, true);
	st->py_nr = 2;
	st->hdr.size += 2 * sizeof(struct taproot_pyframe);
	memset((uint8_t *)buf + size, 0, 2 * sizeof(struct taproot_pyframe));
	assert_int_equal(check(buf, size + 32, &why), 0);
	assert_int_equal(taproot_rec_stack_size(st), size + 32);
	st->py_nr = 3;
	assert_rec_corrupt(buf, size + 32, "stack pcs overflow the record");
	st->py_nr = TAPROOT_PY_FRAMES_MAX + 1;
	assert_rec_corrupt(buf, size + 32, "stack py_nr above TAPROOT_PY_FRAMES_MAX");
	size = stack_build(buf, 7, 3, 0, false);
	st->py_nr = 1;
	st->hdr.size += 16;
	assert_rec_corrupt(buf, size + 16, "stack Python frames without user pcs");
}

/* A sample with a user part, ustack_len bytes and py_nr Python frames after them. */
static size_t sample_python_build(void *buf, uint32_t ustack_len, uint16_t py_nr)
{
	struct taproot_rec_sample *s = buf;
	size_t at = sample_build(buf, 1, 2, ustack_len);
	struct taproot_sample_python *t = (void *)((uint8_t *)buf + at);
	struct taproot_pyframe *f = (void *)(t + 1);

	s->hdr.flags = TAPROOT_SAMPLE_F_USER_REGS | TAPROOT_SAMPLE_F_PYTHON;
	*t = (struct taproot_sample_python){ .py_nr = py_nr };
	for (uint16_t i = 0; i < py_nr; i++)
		f[i] = (struct taproot_pyframe){ .code = 0x7f0000001000ull + i, .pos = i,
						 .cookie = 0x1234 };
	s->hdr.size = (uint32_t)(at + sizeof(*t) + py_nr * sizeof(*f));
	return s->hdr.size;
}

static void rec_check_sample_python(void **state)
{
	uint64_t buf[1024];
	struct taproot_rec_sample *s = (void *)buf;
	const struct taproot_pyframe *py;
	struct taproot_sample_python *t;
	const char *why;
	size_t size;

	/* After the stack bytes padded to 8: 13 bytes take 16. */
	size = sample_python_build(buf, 13, 3);
	assert_int_equal(size, sizeof(*s) + 2 * 8 + 16 + 8 + 3 * 16);
	assert_int_equal(check(buf, size, &why), 0);
	assert_int_equal(taproot_rec_sample_python(s, &py), 3);
	assert_ptr_equal(py, (const uint8_t *)buf + sizeof(*s) + 2 * 8 + 16 + 8);
	assert_int_equal(py[2].code, 0x7f0000001002ull);
	size = sample_python_build(buf, 0, TAPROOT_PY_FRAMES_MAX);
	assert_int_equal(check(buf, size, &why), 0);
	/* Without the flag, none (whatever follows is padding). */
	s->hdr.flags = TAPROOT_SAMPLE_F_USER_REGS;
	assert_int_equal(check(buf, size, &why), 0);
	assert_int_equal(taproot_rec_sample_python(s, &py), 0);
	assert_null(py);

	size = sample_python_build(buf, 16, 2);
	t = (void *)((uint8_t *)buf + sizeof(*s) + 2 * 8 + 16);
	s->hdr.flags = TAPROOT_SAMPLE_F_PYTHON;
	assert_rec_corrupt(buf, size, "sample PYTHON without a user part");
	s->hdr.flags = TAPROOT_SAMPLE_F_USER_REGS | TAPROOT_SAMPLE_F_KTHREAD |
		       TAPROOT_SAMPLE_F_PYTHON;
	assert_rec_corrupt(buf, size, "sample PYTHON without a user part");
	s->hdr.flags = TAPROOT_SAMPLE_F_USER_REGS | TAPROOT_SAMPLE_F_PYTHON;
	t->py_nr = 0;
	assert_rec_corrupt(buf, size, "sample py_nr not in 1..TAPROOT_PY_FRAMES_MAX");
	t->py_nr = TAPROOT_PY_FRAMES_MAX + 1;
	assert_rec_corrupt(buf, size, "sample py_nr not in 1..TAPROOT_PY_FRAMES_MAX");
	t->py_nr = 3;
	assert_rec_corrupt(buf, size, "sample Python frames overflow the record");
	t->py_nr = 2;
	t->reserved[2] = 1;
	assert_rec_corrupt(buf, size, "sample Python frames' reserved not 0");
	t->reserved[2] = 0;
	/* The header itself outside: stack bytes up to the end. */
	s->ustack_len = 16 + 8 + 2 * 16;
	assert_rec_corrupt(buf, size, "sample Python frames' header overflows the record");
	/* Counts at their maxima in a record too small: no arithmetic wraps. */
	size = sample_python_build(buf, 0, 1);
	s->kstack_nr = TAPROOT_KSTACK_MAX;
	s->ustack_len = TAPROOT_USTACK_MAX;
	assert_rec_corrupt(buf, size, "sample kstack, upcs and ustack overflow the record");
}

static void rec_check_sample_ref(void **state)
{
	struct {
		struct taproot_rec_sample_ref r;
		uint64_t pad;
	} b = { .r = { .hdr = { .size = sizeof(b.r), .type = TAPROOT_REC_SAMPLE_REF },
		       .stack_id = 9 } };
	const char *why;

	assert_int_equal(check(&b, sizeof(b.r), &why), 0);
	b.r.hdr.size = sizeof(b);
	assert_int_equal(check(&b, sizeof(b), &why), 0);
	b.r.hdr.size = sizeof(b.r) - 8;
	assert_rec_corrupt(&b, sizeof(b), "sample_ref smaller than its fixed part");
	b.r.hdr.size = sizeof(b.r);
	b.r.stack_id = 0;
	assert_rec_corrupt(&b, sizeof(b), "sample_ref stack_id 0");
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_STACK), "stack");
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_SAMPLE_REF), "sample_ref");
	assert_string_equal(taproot_kunwind_name(TAPROOT_KUNWIND_MAX_FRAMES), "max-frames");
	assert_string_equal(taproot_kunwind_name(TAPROOT_KUNWIND_BAD_FRAME), "bad-frame");
	assert_null(taproot_kunwind_name(TAPROOT_KUNWIND_NR));
}

/* ------------------------------------------------------------ cpu lists */

static void cpulist_ranges_parsed(void **state)
{
	bool mask[8] = { 0 };
	static const bool want[8] = { 1, 1, 1, 0, 0, 1, 0, 1 };

	assert_int_equal(tp_cpulist_parse("0-2,5,7-20\n", mask, 8), 0);
	assert_memory_equal(mask, want, sizeof(want));
}

static void cpulist_malformed_refused(void **state)
{
	bool mask[8];

	assert_int_equal(tp_cpulist_parse("", mask, 8), -EINVAL);
	assert_int_equal(tp_cpulist_parse("\n", mask, 8), -EINVAL);
	assert_int_equal(tp_cpulist_parse("0-", mask, 8), -EINVAL);
	assert_int_equal(tp_cpulist_parse("3-1", mask, 8), -EINVAL);
	assert_int_equal(tp_cpulist_parse("0,,1", mask, 8), -EINVAL);
	assert_int_equal(tp_cpulist_parse("-1", mask, 8), -EINVAL);
	assert_int_equal(tp_cpulist_parse("0-3 ", mask, 8), -EINVAL);
	assert_int_equal(tp_cpulist_parse("0-3\nx", mask, 8), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ring_merge_delivers_in_time_order, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_merge_ties_broken_by_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_merge_keeps_ring_order_within_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_later_records_go_to_next_call, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_consume_releases_tail_to_head, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_consume_across_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_callback_stop_releases_only_delivered, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_corrupt_record_drops_rest_of_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_head_too_far_ahead_is_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_unknown_type_delivered_and_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_producer_page_checked, setup, teardown),
#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
		T(ring_merge_delivers_in_time_order_with_reader),
		T(ring_merge_keeps_ring_order_within_cpu_with_reader),
		T(ring_consume_releases_tail_to_head_with_reader),
		T(ring_consume_across_wrap_with_reader),
		T(ring_corrupt_record_drops_rest_of_cpu_with_reader),
		T(ring_head_too_far_ahead_is_corrupt_with_reader),
		T(ring_unknown_type_delivered_and_skipped_with_reader),
		T(reader_drains_while_consumer_busy),
		T(reader_buffer_gives_pages_back),
		T(reader_full_buffer_leaves_rest_in_ring),
		T(reader_start_refused_twice_or_empty),
#undef T
		cmocka_unit_test(rec_check_valid_records_pass),
		cmocka_unit_test(rec_check_bad_header_refused),
		cmocka_unit_test(rec_check_sample_lengths_refused),
		cmocka_unit_test(rec_check_lost_size_fixed),
		cmocka_unit_test(rec_check_unknown_type_checked_as_header),
		cmocka_unit_test(rec_check_sample_upcs),
		cmocka_unit_test(rec_check_sample_python),
		cmocka_unit_test(rec_check_stack),
		cmocka_unit_test(rec_check_sample_ref),
		cmocka_unit_test(cpulist_ranges_parsed),
		cmocka_unit_test(cpulist_malformed_refused),
	};

	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
