// SPDX-License-Identifier: GPL-2.0
/*
 * The ring consumer: /dev/taproot's per-CPU rings mapped as <linux/taproot.h>
 * lays them out, every record validated before use, the CPUs merged in
 * timestamp order, consumed space handed back to the producer.
 *
 * A ring's window, P = page size, D = data size (a power of two):
 *
 *   file offset TAPROOT_MMAP_OFFSET(cpu) + 0      P        2P       2P+D     2P+2D
 *                                          +------+--------+--------+--------+
 *                                          | cons | prod   | data   | data   |
 *                                          +------+--------+--------+--------+
 *   our mappings:                           cons   window (read-only) ------->
 *                                           (rw)
 *
 * The data pages follow themselves once more, so a record that wraps past
 * the end of the data area is contiguous: it is read in place, never copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/kernel-private.h"

#define TP_DEV_PATH		"/dev/" TAPROOT_DEVICE_NAME
#define TP_POSSIBLE_PATH	"/sys/devices/system/cpu/possible"

_Static_assert(TAPROOT_LOST_NR == 4, "taproot_ring_stats.lost holds TAPROOT_LOST_NR");

/* ------------------------------------------------------------ records */

static const char *const tp_rec_names[] = {
	[TAPROOT_REC_SAMPLE]	= "sample",
	[TAPROOT_REC_LOST]	= "lost",
	[TAPROOT_REC_SWITCH]	= "switch",
	[TAPROOT_REC_WAKING]	= "waking",
	[TAPROOT_REC_FORK]	= "fork",
	[TAPROOT_REC_EXEC]	= "exec",
	[TAPROOT_REC_EXIT]	= "exit",
	[TAPROOT_REC_STACK]	= "stack",
	[TAPROOT_REC_SAMPLE_REF] = "sample_ref",
};

const char *taproot_rec_type_name(unsigned int type)
{
	return type < sizeof(tp_rec_names) / sizeof(tp_rec_names[0]) ?
	       tp_rec_names[type] : NULL;
}

static const char *const tp_kunwind_names[TAPROOT_KUNWIND_NR] = {
	[TAPROOT_KUNWIND_NONE]		= "none",
	[TAPROOT_KUNWIND_COMPLETE]	= "complete",
	[TAPROOT_KUNWIND_MAX_FRAMES]	= "max-frames",
	[TAPROOT_KUNWIND_NO_PROC]	= "no-proc",
	[TAPROOT_KUNWIND_STALE]		= "stale",
	[TAPROOT_KUNWIND_NO_MAPPING]	= "no-mapping",
	[TAPROOT_KUNWIND_NO_CFI]	= "no-cfi",
	[TAPROOT_KUNWIND_SLOW_RULE]	= "slow-rule",
	[TAPROOT_KUNWIND_FAULT]		= "fault",
	[TAPROOT_KUNWIND_BAD_FRAME]	= "bad-frame",
};

const char *taproot_kunwind_name(unsigned int end)
{
	return end < TAPROOT_KUNWIND_NR ? tp_kunwind_names[end] : NULL;
}

/*
 * No message is recorded here (tp_err() formats): this runs for every
 * record. The caller reports, with the CPU and the position.
 */
/*
 * How a snapshot's walk ended (TAPROOT_SNAP_UNWIND()), against what the
 * module does (kmod/events.c, tap_event_snap_plan()): an end that is a
 * TAPROOT_KUNWIND_*; a walk only with a user part; a whole walk (COMPLETE,
 * MAX_FRAMES) always gives UPCS. With UPCS, tp_snap_upcs_check() goes on.
 */
static const char *tp_snap_unwind_check(const struct taproot_stack_snap *sn)
{
	unsigned int end = TAPROOT_SNAP_UNWIND(sn->flags);

	if (end >= TAPROOT_KUNWIND_NR)
		return "snapshot unwind not a TAPROOT_KUNWIND_*";
	if (!(sn->flags & TAPROOT_SNAP_F_USER_REGS) && end != TAPROOT_KUNWIND_NONE)
		return "snapshot unwind not NONE without USER_REGS";
	if (!(sn->flags & TAPROOT_SNAP_F_UPCS) &&
	    (end == TAPROOT_KUNWIND_COMPLETE || end == TAPROOT_KUNWIND_MAX_FRAMES))
		return "snapshot unwind COMPLETE or MAX_FRAMES without UPCS";
	return NULL;
}

/*
 * A snapshot with the module's user pcs (TAPROOT_SNAP_F_UPCS): a user part,
 * 1..TAPROOT_UNWIND_FRAMES_MAX whole pcs, and of the stack flags only
 * USTACK_TRUNC, the frame cap, exactly when unwind is MAX_FRAMES, or
 * USTACK_FAULT, a walk that stopped (or none, with USTACK_PRIVATE),
 * exactly when unwind is neither COMPLETE nor MAX_FRAMES.
 */
static const char *tp_snap_upcs_check(const struct taproot_stack_snap *sn)
{
	unsigned int end = TAPROOT_SNAP_UNWIND(sn->flags);
	bool trunc = sn->flags & TAPROOT_SNAP_F_USTACK_TRUNC;
	bool fault = sn->flags & TAPROOT_SNAP_F_USTACK_FAULT;

	if (!(sn->flags & TAPROOT_SNAP_F_UPCS))
		return NULL;
	if (!(sn->flags & TAPROOT_SNAP_F_USER_REGS))
		return "snapshot UPCS without USER_REGS";
	if (sn->ustack_len % sizeof(uint64_t) || !sn->ustack_len ||
	    sn->ustack_len > TAPROOT_UNWIND_FRAMES_MAX * sizeof(uint64_t))
		return "snapshot UPCS ustack_len not 8..8*TAPROOT_UNWIND_FRAMES_MAX by 8";
	if (sn->flags & TAPROOT_SNAP_F_USTACK_TOP)
		return "snapshot UPCS with USTACK_TOP";
	if (trunc && fault)
		return "snapshot UPCS with USTACK_TRUNC and USTACK_FAULT";
	if (trunc != (end == TAPROOT_KUNWIND_MAX_FRAMES))
		return "snapshot UPCS: USTACK_TRUNC is not unwind MAX_FRAMES";
	if (fault != (end != TAPROOT_KUNWIND_COMPLETE && end != TAPROOT_KUNWIND_MAX_FRAMES))
		return "snapshot UPCS: USTACK_FAULT is not a walk that stopped";
	return NULL;
}

/*
 * The snapshot at @off of a record of @size bytes: whole, its counts within
 * the ABI's limits, its arrays inside the record. NULL when it is valid.
 */
static const char *tp_snap_check(const void *rec, size_t off, size_t size)
{
	const struct taproot_stack_snap *sn;
	const char *why;

	if (size < off + sizeof(*sn))
		return "stack snapshot beyond the record";
	sn = (const void *)((const char *)rec + off);
	if (sn->kstack_nr > TAPROOT_KSTACK_MAX)
		return "snapshot kstack_nr above TAPROOT_KSTACK_MAX";
	if (sn->ustack_len > TAPROOT_USTACK_MAX)
		return "snapshot ustack_len above TAPROOT_USTACK_MAX";
	why = tp_snap_unwind_check(sn);
	if (!why)
		why = tp_snap_upcs_check(sn);
	if (why)
		return why;
	if (off + sizeof(*sn) + (size_t)sn->kstack_nr * sizeof(uint64_t) +
	    sn->ustack_len > size)
		return "snapshot kstack and ustack overflow the record";
	return NULL;
}

/* A record whose fixed part of @fixed bytes may be followed by a snapshot. */
static const char *tp_snapped_check(const struct taproot_rec_header *h,
				    size_t fixed, bool stacks)
{
	if (!stacks)
		return h->size == fixed ? NULL : "record without snapshot of the wrong size";
	return tp_snap_check(h, fixed, h->size);
}

static const char *tp_exec_check(const struct taproot_rec_exec *e)
{
	const char *name = (const char *)(e + 1);

	if (e->hdr.size < sizeof(*e))
		return "exec smaller than its fixed part";
	if (e->filename_len < 1 || e->filename_len > TAPROOT_EXEC_FILENAME_MAX)
		return "exec filename_len not in 1..TAPROOT_EXEC_FILENAME_MAX";
	if (sizeof(*e) + (size_t)e->filename_len > e->hdr.size)
		return "exec filename overflows the record";
	if (memchr(name, '\0', e->filename_len) != name + e->filename_len - 1)
		return "exec filename not ended by its only NUL";
	return NULL;
}

/*
 * The flags of the module's walk in a SAMPLE: pcs only with UPCS, which
 * needs a user part and a walk; a caller frame's registers and the
 * verification copy only with pcs, and not both (VERIFY's are the leaf's).
 */
static const char *tp_sample_upcs_check(const struct taproot_rec_sample *s)
{
	unsigned int f = s->hdr.flags;

	if (s->unwind >= TAPROOT_KUNWIND_NR)
		return "sample unwind not a TAPROOT_KUNWIND_*";
	if (!(f & TAPROOT_SAMPLE_F_UPCS)) {
		if (s->upc_nr)
			return "sample upc_nr without UPCS";
		if (f & (TAPROOT_SAMPLE_F_UREGS_CALLER | TAPROOT_SAMPLE_F_VERIFY))
			return "sample UREGS_CALLER or VERIFY without UPCS";
		return NULL;
	}
	if (!(f & TAPROOT_SAMPLE_F_USER_REGS) || (f & TAPROOT_SAMPLE_F_KTHREAD))
		return "sample UPCS without a user part";
	if (s->unwind == TAPROOT_KUNWIND_NONE)
		return "sample UPCS with unwind NONE";
	if (s->upc_nr > TAPROOT_UNWIND_FRAMES_MAX)
		return "sample upc_nr above TAPROOT_UNWIND_FRAMES_MAX";
	if ((f & TAPROOT_SAMPLE_F_UREGS_CALLER) && (f & TAPROOT_SAMPLE_F_VERIFY))
		return "sample UREGS_CALLER with VERIFY";
	return NULL;
}

/* Where a SAMPLE's stack bytes end, padded: its Python frames' header. */
static size_t tp_sample_python_at(const struct taproot_rec_sample *s)
{
	return sizeof(*s) + ((size_t)s->kstack_nr + s->upc_nr) * sizeof(uint64_t) +
	       (((size_t)s->ustack_len + 7) & ~(size_t)7);
}

/* A SAMPLE's Python frames: only with a user part, whole inside the record. */
static const char *tp_sample_python_check(const struct taproot_rec_sample *s)
{
	const struct taproot_sample_python *t;
	size_t at = tp_sample_python_at(s);

	if (!(s->hdr.flags & TAPROOT_SAMPLE_F_PYTHON))
		return NULL;
	if (!(s->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) ||
	    (s->hdr.flags & TAPROOT_SAMPLE_F_KTHREAD))
		return "sample PYTHON without a user part";
	if (at + sizeof(*t) > s->hdr.size)
		return "sample Python frames' header overflows the record";
	t = (const void *)((const uint8_t *)s + at);
	if (!t->py_nr || t->py_nr > TAPROOT_PY_FRAMES_MAX)
		return "sample py_nr not in 1..TAPROOT_PY_FRAMES_MAX";
	if (t->reserved[0] || t->reserved[1] || t->reserved[2])
		return "sample Python frames' reserved not 0";
	if (at + sizeof(*t) + t->py_nr * sizeof(struct taproot_pyframe) > s->hdr.size)
		return "sample Python frames overflow the record";
	return NULL;
}

unsigned int taproot_rec_sample_python(const struct taproot_rec_sample *s,
				       const struct taproot_pyframe **py)
{
	const struct taproot_sample_python *t;

	*py = NULL;
	if (!(s->hdr.flags & TAPROOT_SAMPLE_F_PYTHON))
		return 0;
	t = (const void *)((const uint8_t *)s + tp_sample_python_at(s));
	*py = (const struct taproot_pyframe *)(t + 1);
	return t->py_nr;
}

static const char *tp_sample_check(const struct taproot_rec_sample *s)
{
	const char *why;

	if (s->hdr.size < sizeof(*s))
		return "sample smaller than its fixed part";
	if (s->kstack_nr > TAPROOT_KSTACK_MAX)
		return "sample kstack_nr above TAPROOT_KSTACK_MAX";
	if (s->ustack_len > TAPROOT_USTACK_MAX)
		return "sample ustack_len above TAPROOT_USTACK_MAX";
	why = tp_sample_upcs_check(s);
	if (why)
		return why;
	/* Each term is bounded above: no arithmetic wraps. */
	if (sizeof(*s) + ((size_t)s->kstack_nr + s->upc_nr) * sizeof(uint64_t) +
	    s->ustack_len > s->hdr.size)
		return "sample kstack, upcs and ustack overflow the record";
	return tp_sample_python_check(s);
}

size_t taproot_rec_stack_size(const struct taproot_rec_stack *st)
{
	return sizeof(*st) + ((size_t)st->kstack_nr + st->upc_nr) * sizeof(uint64_t) +
	       (size_t)st->py_nr * sizeof(struct taproot_pyframe);
}

/*
 * A STACK: a nonzero id, counts within the ABI's limits and its pcs inside
 * the record; user pcs only with a user part, whose walk ended well (the
 * other ends fall back to a SAMPLE).
 */
static const char *tp_stack_check(const struct taproot_rec_stack *st)
{
	if (st->hdr.size < sizeof(*st))
		return "stack smaller than its fixed part";
	if (!st->id)
		return "stack id 0";
	if (st->kstack_nr > TAPROOT_KSTACK_MAX)
		return "stack kstack_nr above TAPROOT_KSTACK_MAX";
	if (st->upc_nr > TAPROOT_UNWIND_FRAMES_MAX)
		return "stack upc_nr above TAPROOT_UNWIND_FRAMES_MAX";
	if (st->unwind >= TAPROOT_KUNWIND_NR)
		return "stack unwind not a TAPROOT_KUNWIND_*";
	if (!(st->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS)) {
		if (st->upc_nr)
			return "stack user pcs without USER_REGS";
	} else if (st->unwind != TAPROOT_KUNWIND_COMPLETE &&
		   st->unwind != TAPROOT_KUNWIND_MAX_FRAMES) {
		return "stack unwind neither COMPLETE nor MAX_FRAMES";
	} else if (!st->upc_nr) {
		return "stack with USER_REGS but no user pcs";
	}
	if (st->py_nr > TAPROOT_PY_FRAMES_MAX)
		return "stack py_nr above TAPROOT_PY_FRAMES_MAX";
	if (st->py_nr && !st->upc_nr)
		return "stack Python frames without user pcs";
	if (taproot_rec_stack_size(st) > st->hdr.size)
		return "stack pcs overflow the record";
	return NULL;
}

/* Checks of the record's own type, once its header passed. */
static const char *tp_rec_body_check(const struct taproot_rec_header *h)
{
	const struct taproot_rec_sample *s = (const void *)h;

	switch (h->type) {
	case TAPROOT_REC_SAMPLE:
		return tp_sample_check(s);
	case TAPROOT_REC_LOST:
		return h->size == sizeof(struct taproot_rec_lost) ? NULL :
		       "lost record of the wrong size";
	case TAPROOT_REC_SWITCH:
		return tp_snapped_check(h, sizeof(struct taproot_rec_switch),
					h->flags & TAPROOT_SWITCH_F_STACKS);
	case TAPROOT_REC_WAKING:
		return tp_snapped_check(h, sizeof(struct taproot_rec_waking),
					h->flags & TAPROOT_WAKING_F_STACKS);
	case TAPROOT_REC_FORK:
		return h->size == sizeof(struct taproot_rec_fork) ? NULL :
		       "fork record of the wrong size";
	case TAPROOT_REC_EXEC:
		return tp_exec_check((const void *)h);
	case TAPROOT_REC_EXIT:
		return h->size == sizeof(struct taproot_rec_exit) ? NULL :
		       "exit record of the wrong size";
	case TAPROOT_REC_STACK:
		return tp_stack_check((const void *)h);
	case TAPROOT_REC_SAMPLE_REF:
		if (h->size < sizeof(struct taproot_rec_sample_ref))
			return "sample_ref smaller than its fixed part";
		if (!((const struct taproot_rec_sample_ref *)h)->stack_id)
			return "sample_ref stack_id 0";
		return NULL;
	default:
		return NULL;	/* opaque: skipped by its size */
	}
}

int taproot_rec_check(const void *rec, size_t avail, const char **why)
{
	const struct taproot_rec_header *h = rec;

	*why = NULL;
	if ((uintptr_t)rec % 8)
		*why = "record not 8-byte aligned";
	else if (avail < sizeof(*h))
		*why = "fewer unread bytes than a record header";
	else if (h->size < sizeof(*h))
		*why = "size smaller than the record header";
	else if (h->size % 8)
		*why = "size not a multiple of 8";
	else if (h->size > avail)
		*why = "size beyond the unread bytes";
	else
		*why = tp_rec_body_check(h);
	return *why ? -TAPROOT_ECORRUPT : 0;
}

const struct taproot_stack_snap *taproot_rec_snap(const struct taproot_rec_header *rec)
{
	if (rec->type == TAPROOT_REC_SWITCH && (rec->flags & TAPROOT_SWITCH_F_STACKS))
		return (const void *)((const char *)rec + sizeof(struct taproot_rec_switch));
	if (rec->type == TAPROOT_REC_WAKING && (rec->flags & TAPROOT_WAKING_F_STACKS))
		return (const void *)((const char *)rec + sizeof(struct taproot_rec_waking));
	return NULL;
}

/* ------------------------------------------------------------ layout */

int tp_ring_check_producer(const struct taproot_ring_producer *prod,
			   unsigned int cpu, size_t page_size)
{
	uint64_t d = prod->data_size;
	int err;

	err = taproot_abi_check(prod->abi_version);
	if (err < 0)
		return tp_err(err, "ring of CPU %u: %s", cpu, taproot_errmsg(err));
	if (prod->cpu != cpu)
		return tp_err(-TAPROOT_EPROTO, "ring of CPU %u: producer page says CPU %u",
			      cpu, prod->cpu);
	if (prod->page_size != page_size)
		return tp_err(-TAPROOT_EPROTO,
			      "ring of CPU %u: page size %u, expected %zu", cpu,
			      prod->page_size, page_size);
	if (prod->data_offset != 2 * page_size)
		return tp_err(-TAPROOT_EPROTO,
			      "ring of CPU %u: data offset %u, expected %zu", cpu,
			      prod->data_offset, 2 * page_size);
	if (!d || (d & (d - 1)) || d < page_size ||
	    d > (uint64_t)TAPROOT_RING_PAGES_MAX * page_size)
		return tp_err(-TAPROOT_EPROTO,
			      "ring of CPU %u: data size %llu is not a power of two of 1..%u pages",
			      cpu, (unsigned long long)d, TAPROOT_RING_PAGES_MAX);
	return 0;
}

int tp_ring_new(int fd, size_t page_size, struct taproot_ring **rp)
{
	struct taproot_ring *r = calloc(1, sizeof(*r));

	*rp = NULL;
	if (!r)
		return tp_err(-ENOMEM, NULL);
	r->fd = fd;
	r->page_size = page_size;
	*rp = r;
	return 0;
}

int tp_ring_add(struct taproot_ring *r, unsigned int cpu, void *cons,
		size_t cons_len, const void *window, size_t window_len,
		bool owned)
{
	const struct taproot_ring_producer *prod = window;
	struct tp_ring_cpu *c;
	int err;

	err = tp_ring_check_producer(prod, cpu, r->page_size);
	if (err < 0)
		return err;
	/* The window must hold what the producer page announces, twice. */
	if (window_len != r->page_size + 2 * prod->data_size)
		return tp_err(-TAPROOT_EPROTO,
			      "ring of CPU %u: data size %llu changed while mapping",
			      cpu, (unsigned long long)prod->data_size);
	if (r->nr && r->cpus[r->nr - 1].cpu >= cpu)
		return tp_err(-EINVAL, "ring of CPU %u added out of order", cpu);

	if (r->nr == r->alloc) {
		unsigned int alloc = r->alloc ? 2 * r->alloc : 16;
		struct tp_ring_cpu *cpus = realloc(r->cpus, alloc * sizeof(*cpus));
		unsigned int *heap;

		if (!cpus)
			return tp_err(-ENOMEM, NULL);
		r->cpus = cpus;
		heap = realloc(r->heap, alloc * sizeof(*heap));
		if (!heap)
			return tp_err(-ENOMEM, NULL);
		r->heap = heap;
		r->alloc = alloc;
	}
	c = &r->cpus[r->nr++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->cons = cons;
	c->prod = prod;
	c->data = (const uint8_t *)window + (prod->data_offset - r->page_size);
	c->size = prod->data_size;
	tp_ring_read_kernel(c);
	if (owned) {
		c->cons_map = cons;
		c->cons_len = cons_len;
		c->prod_map = (void *)window;
		c->prod_len = window_len;
	}
	/* Where the last reader stopped: only readers write data_tail. */
	c->tail = __atomic_load_n(&c->cons->data_tail, __ATOMIC_RELAXED);
	c->pos = c->head = c->tail;
	return 0;
}

/* ------------------------------------------------------------ opening */

int tp_cpulist_parse(const char *s, bool *mask, size_t n)
{
	unsigned long a, b, i;
	char *end;

	if (!*s || *s == '\n')
		return -EINVAL;
	for (;;) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		a = strtoul(s, &end, 10);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return -EINVAL;
			b = strtoul(s, &end, 10);
			if (b < a)
				return -EINVAL;
		}
		for (i = a; i <= b && i < n; i++)
			mask[i] = true;
		s = end;
		if (*s == ',') {
			s++;
			continue;
		}
		if (*s == '\n')
			s++;
		return *s ? -EINVAL : 0;
	}
}

/* The possible CPUs below @n, as a mask of @n entries (caller frees). */
static int tp_possible_cpus(size_t n, bool **maskp)
{
	char buf[4096];
	ssize_t len;
	bool *mask;
	int fd, err;

	*maskp = NULL;
	fd = open(TP_POSSIBLE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tp_err(-errno, "reading %s: %s", TP_POSSIBLE_PATH, strerror(errno));
	len = read(fd, buf, sizeof(buf) - 1);
	err = errno;
	close(fd);
	if (len < 0)
		return tp_err(-err, "reading %s: %s", TP_POSSIBLE_PATH, strerror(err));
	buf[len] = '\0';
	mask = calloc(n, sizeof(*mask));
	if (!mask)
		return tp_err(-ENOMEM, NULL);
	if (tp_cpulist_parse(buf, mask, n) < 0) {
		free(mask);
		return tp_err(-TAPROOT_EPROTO, "%s: not a CPU list: '%.64s'",
			      TP_POSSIBLE_PATH, buf);
	}
	*maskp = mask;
	return 0;
}

/* Map ring @cpu of /dev/taproot: consumer page, then its producer page to
 * learn D, then the read-only window of producer page and data twice. */
static int tp_ring_map(struct taproot_ring *r, unsigned int cpu)
{
	const off_t off = (off_t)TAPROOT_MMAP_OFFSET(cpu);
	const size_t p = r->page_size;
	const struct taproot_ring_producer *prod;
	void *cons, *window;
	size_t window_len;
	uint64_t d;
	int err;

	cons = mmap(NULL, p, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, off);
	if (cons == MAP_FAILED)
		return tp_err(-errno, "mapping the consumer page of CPU %u: %s",
			      cpu, strerror(errno));
	prod = mmap(NULL, p, PROT_READ, MAP_SHARED, r->fd, off + (off_t)p);
	if (prod == MAP_FAILED) {
		err = tp_err(-errno, "mapping the producer page of CPU %u: %s",
			     cpu, strerror(errno));
		goto out_cons;
	}
	err = tp_ring_check_producer(prod, cpu, p);
	d = prod->data_size;
	munmap((void *)prod, p);
	if (err < 0)
		goto out_cons;

	window_len = p + 2 * (size_t)d;
	window = mmap(NULL, window_len, PROT_READ, MAP_SHARED, r->fd, off + (off_t)p);
	if (window == MAP_FAILED) {
		err = tp_err(-errno, "mapping the data of CPU %u (%zu bytes): %s",
			     cpu, window_len, strerror(errno));
		goto out_cons;
	}
	err = tp_ring_add(r, cpu, cons, p, window, window_len, true);
	if (err < 0)
		goto out_window;
	return 0;

out_window:
	munmap(window, window_len);
out_cons:
	munmap(cons, p);
	return err;
}

int taproot_ring_open(const struct taproot_info *info, struct taproot_ring **rp)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct taproot_ring *r;
	bool *possible;
	unsigned int cpu;
	int fd, err;

	*rp = NULL;
	if (info->page_size != page)
		return tp_err(-TAPROOT_EPROTO,
			      "the module's page size is %u, this process's %zu",
			      info->page_size, page);
	fd = open(TP_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			return tp_err(-TAPROOT_ENOMODULE,
				      "%s does not exist: taproot module not loaded (run 'taprootctl load')",
				      TP_DEV_PATH);
		if (err == -EBUSY)
			return tp_err(err, "another consumer has %s open", TP_DEV_PATH);
		if (err == -EPERM || err == -EACCES)
			return tp_err(err, "permission denied: opening %s needs CAP_PERFMON or CAP_SYS_ADMIN",
				      TP_DEV_PATH);
		return tp_err(err, "opening %s: %s", TP_DEV_PATH, strerror(-err));
	}

	err = tp_possible_cpus(info->nr_cpus, &possible);
	if (err < 0)
		goto out_fd;
	err = tp_ring_new(fd, page, &r);
	if (err < 0)
		goto out_possible;
	for (cpu = 0; cpu < info->nr_cpus; cpu++) {
		/* Not a possible CPU: the module has no ring for it. */
		if (!possible[cpu])
			continue;
		err = tp_ring_map(r, cpu);
		if (err < 0)
			goto out_ring;
	}
	if (!r->nr) {
		err = tp_err(-TAPROOT_EPROTO, "no possible CPU below the module's %u",
			     info->nr_cpus);
		goto out_ring;
	}
	free(possible);
	*rp = r;
	return 0;

out_ring:
	r->fd = -1;	/* closed below */
	taproot_ring_close(r);
out_possible:
	free(possible);
out_fd:
	close(fd);
	return err;
}

void taproot_ring_close(struct taproot_ring *r)
{
	unsigned int i;

	if (!r)
		return;
	tp_ring_reader_stop(r);
	for (i = 0; i < r->nr; i++) {
		if (r->cpus[i].prod_map)
			munmap(r->cpus[i].prod_map, r->cpus[i].prod_len);
		if (r->cpus[i].cons_map)
			munmap(r->cpus[i].cons_map, r->cpus[i].cons_len);
	}
	if (r->fd >= 0)
		close(r->fd);
	free(r->cpus);
	free(r->heap);
	free(r);
}

int taproot_ring_poll(struct taproot_ring *r, int timeout_ms)
{
	struct pollfd p = { .fd = taproot_ring_fd(r), .events = POLLIN };
	int n;

	n = tp_ring_reader_error(r);
	if (n < 0)
		return tp_err(n, "the ring's reader thread stopped: %s", strerror(-n));
	n = poll(&p, 1, timeout_ms);
	if (n < 0 && errno == EINTR)
		return -EINTR;
	if (n < 0)
		return tp_err(-errno, "polling %s: %s", TP_DEV_PATH, strerror(errno));
	if (n == 0)
		return 0;
	if (p.revents & (POLLERR | POLLNVAL))
		return tp_err(-EIO, "polling %s: error condition (revents 0x%x)",
			      TP_DEV_PATH, p.revents);
	return 1;
}

unsigned int taproot_ring_count(const struct taproot_ring *r)
{
	return r->nr;
}

void taproot_ring_stats(const struct taproot_ring *r, unsigned int i,
			struct taproot_ring_stats *st)
{
	const struct tp_ring_cpu *c = &r->cpus[i];
	unsigned int k;

	memset(st, 0, sizeof(*st));
	st->cpu = c->cpu;
	st->data_size = c->size;
	/* Counters only: no ordering with the data is needed. */
	st->records = __atomic_load_n(&c->prod->records, __ATOMIC_RELAXED);
	for (k = 0; k < TAPROOT_LOST_NR; k++)
		st->lost[k] = __atomic_load_n(&c->prod->lost[k], __ATOMIC_RELAXED);
	st->invalid = c->invalid;
	if (!r->reader) {
		st->unread = __atomic_load_n(&c->prod->data_head, __ATOMIC_RELAXED) - c->tail;
		return;
	}
	st->buffered = __atomic_load_n(&c->buf.head, __ATOMIC_RELAXED) - c->tail;
	st->buffer_size = c->buf.size;
	st->buffer_peak = __atomic_load_n(&c->buf.peak, __ATOMIC_RELAXED);
	st->buffer_resident = tp_ring_reader_resident(c);
	st->unread = __atomic_load_n(&c->prod->data_head, __ATOMIC_RELAXED) -
		     __atomic_load_n(&c->ktail, __ATOMIC_RELAXED) + st->buffered;
}

uint64_t taproot_ring_lost(const struct taproot_ring *r)
{
	uint64_t lost = 0;

	/* Counters only, as in taproot_ring_stats(), without its mincore(). */
	for (unsigned int i = 0; i < taproot_ring_count(r); i++)
		for (unsigned int k = 0; k < TAPROOT_LOST_NR; k++)
			lost += __atomic_load_n(&r->cpus[i].prod->lost[k], __ATOMIC_RELAXED);
	return lost;
}

/* ------------------------------------------------------------ reading */

static const struct taproot_rec_header *tp_ring_at(const struct tp_ring_cpu *c)
{
	return (const struct taproot_rec_header *)(c->src + (c->pos & (c->src_size - 1)));
}

/*
 * The corrupt ring @c: report, count, and drop what is unread up to the
 * head this call saw. No guessing where a next record might start.
 */
static void tp_ring_corrupt(struct tp_ring_cpu *c, const struct taproot_ring_ops *ops,
			    void *arg, const char *why)
{
	c->invalid++;
	if (ops->corrupt)
		ops->corrupt(c->cpu, c->pos, why, arg);
	c->pos = c->head;
}

/* Validate @c's next record; false when it has none (or is corrupt). */
static bool tp_ring_peek(struct tp_ring_cpu *c, const struct taproot_ring_ops *ops,
			 void *arg)
{
	const char *why;

	if (c->pos == c->head)
		return false;
	if (taproot_rec_check(tp_ring_at(c), c->head - c->pos, &why) < 0) {
		tp_ring_corrupt(c, ops, arg, why);
		return false;
	}
	return true;
}

/* Merge order: earlier time first, then lower CPU. */
static bool tp_ring_before(const struct taproot_ring *r, unsigned int a, unsigned int b)
{
	uint64_t ta = tp_ring_at(&r->cpus[a])->time_ns;
	uint64_t tb = tp_ring_at(&r->cpus[b])->time_ns;

	return ta < tb || (ta == tb && a < b);
}

static void tp_heap_down(struct taproot_ring *r, unsigned int n, unsigned int i)
{
	unsigned int *h = r->heap, l, m, t;

	for (;;) {
		l = 2 * i + 1;
		if (l >= n)
			return;
		m = l + 1 < n && tp_ring_before(r, h[l + 1], h[l]) ? l + 1 : l;
		if (!tp_ring_before(r, h[m], h[i]))
			return;
		t = h[i], h[i] = h[m], h[m] = t;
		i = m;
	}
}

int taproot_ring_consume(struct taproot_ring *r,
			 const struct taproot_ring_ops *ops, void *arg)
{
	const struct taproot_rec_header *rec;
	struct tp_ring_cpu *c;
	unsigned int i, n = 0;
	int delivered = 0;

	/*
	 * Ordering, as in <linux/taproot.h>:
	 *
	 *   kernel (producer)                  user (consumer)
	 *
	 *   reserve: if head - READ_ONCE(tail)  head = load_acquire(&data_head)  (C)
	 *            leaves no room, drop       read records in [tail, head)
	 *   write the record                    store_release(&data_tail, tail') (D)
	 *   smp_wmb()                     (A)
	 *   WRITE_ONCE(data_head, head')  (B)
	 *   A pairs with C: a reader that sees the new head sees the record.
	 *   D pairs with the producer's READ_ONCE(tail) plus the control dependency
	 *   of the space check: the kernel never overwrites bytes the reader has not
	 *   released.
	 * With a reader thread the source is its buffer, whose filler is the
	 * producer, with the same pairs (lib/kernel/ring-reader.c).
	 */
	if (r->reader)
		tp_ring_reader_fill(r, ops, arg);
	for (i = 0; i < r->nr; i++) {
		c = &r->cpus[i];
		/* (C): pairs with the producer's smp_wmb() (A). */
		c->head = __atomic_load_n(c->src_head, __ATOMIC_ACQUIRE);
		c->pos = c->tail;
		if (c->head - c->tail > c->src_size) {
			tp_ring_corrupt(c, ops, arg, "head more than the data size ahead of tail");
			continue;
		}
		if (tp_ring_peek(c, ops, arg))
			r->heap[n++] = i;
	}
	/* A heap of the CPUs with a record to deliver, keyed by its time. */
	for (i = n / 2; i-- > 0;)
		tp_heap_down(r, n, i);

	while (n) {
		c = &r->cpus[r->heap[0]];
		rec = tp_ring_at(c);
		delivered++;
		c->pos += rec->size;
		if (ops->record(rec, c->cpu, arg))
			break;
		if (!tp_ring_peek(c, ops, arg))
			r->heap[0] = r->heap[--n];
		tp_heap_down(r, n, 0);
	}

	for (i = 0; i < r->nr; i++) {
		c = &r->cpus[i];
		if (c->pos == c->tail)
			continue;
		c->tail = c->pos;
		if (r->reader)
			tp_ring_reader_release(c, c->tail);
		/* (D): pairs with the producer's READ_ONCE(tail) at reserve. */
		__atomic_store_n(c->src_tail, c->tail, __ATOMIC_RELEASE);
	}
	return delivered;
}

int taproot_count_check(const struct taproot_count *e, uint32_t nr_cpus, const char **why)
{
	*why = NULL;
	if (!e->stack_id)
		*why = "count of stack id 0";
	else if (!e->count)
		*why = "count 0";
	else if (e->cpu >= nr_cpus)
		*why = "count of a CPU past the module's";
	/* 1..TAPROOT_FREQ_MAX Hz; count * period in ns then fits in 63 bits. */
	else if (e->period_us < 1000000 / TAPROOT_FREQ_MAX || e->period_us > 1000000)
		*why = "count of a period no rate has";
	return *why ? -TAPROOT_ECORRUPT : 0;
}
