// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU rings of <linux/taproot.h>: allocation, the lock-free
 * producer, loss accounting, waking readers, and mapping to userspace.
 *
 * Layout. Each possible CPU has one ring. Its pages are allocated on the
 * CPU's node and vmap()ed once, in the order userspace sees them, so that
 * the kernel writes through the same double mapping as the reader reads:
 *
 *   window  0      P          2P                 2P+D               2P+2D
 *           +------+----------+------------------+------------------+
 *           | cons | producer | data  1 2 ... n  | data  1 2 ... n  |
 *           +------+----------+------------------+------------------+
 *                                            [ a record that wraps ]
 *
 * remap_vmalloc_range() then maps any part of that window to userspace
 * (VM_USERMAP), as kernel/bpf/ringbuf.c does.
 *
 * Producer. perf's scheme (kernel/events/ring_buffer.c), one ring per CPU
 * so that only writers nested on that CPU (task, softirq, hardirq, NMI)
 * ever race, and local_t operations suffice:
 *   - tap_ring_reserve() counts itself in ring->nest, refuses to nest
 *     deeper than TAP_RING_MAX_NEST, then moves the kernel-private head
 *     with a local_cmpxchg() loop that checks the consumer's data_tail for
 *     room and takes the timestamp inside the loop, so that positions and
 *     timestamps are in the same order on a CPU;
 *   - only the outermost writer publishes data_head; a writer nested in
 *     it (which may even reserve while the outermost one publishes) is
 *     caught by the re-check of ring->seq and published with it;
 *   - a reservation that fails is counted by cause, cumulatively in the
 *     producer page and pending in the ring; the next outermost
 *     reservation that succeeds reserves a TAPROOT_REC_LOST record with the
 *     pending counts in front of its own record, in one reservation.
 * Nothing in this path sleeps, locks, prints or wakes anyone: a publish
 * that leaves the watermark of unread bytes, with a reader waiting, queues
 * the ring's irq_work, and that wakes the readers.
 *
 * The consumer page is writable by userspace, so data_tail is whatever a
 * possibly hostile process stored there. The kernel never writes outside
 * the data area whatever its value (offsets are masked, and a record is at
 * most D/4 + a LOST record, which the second mapping of the data always
 * holds), and writes only into bytes data_tail releases: a data_tail that
 * is not in [data_head - D, data_head] stops the ring, as if full.
 * Nothing the kernel reads back from the ring steers it: the size of each
 * reservation is kept in the ring (ring->resv), not in the record header.
 *
 * Rings and resize. The set of rings is one RCU pointer (tap_rings). A
 * writer holds preemption off from tap_ring_reserve() to tap_ring_commit(),
 * which is an RCU read-side section; the timer and poll() use
 * rcu_read_lock(). tap_rings_resize() swaps the pointer and frees the old
 * set after synchronize_rcu(). Its caller stops sampling first, so that
 * no writer straddles the swap; if one did, its commit would find no
 * reservation of its own in the new ring and do nothing, and the old ring
 * it wrote to is freed only after it re-enabled preemption. A resize takes
 * the positions and counters over into the new rings: positions and
 * counters stay cumulative for the life of the module, and the unread
 * bytes of the old rings (no one has them mapped) are dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/topology.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <asm/local.h>

#include "intern.h"
#include "taproot.h"
#include "ring.h"

/* Pages of a window before the data: consumer page, producer page. */
#define TAP_RING_META_PAGES	2

/*
 * Period of the slow timer that wakes readers when a ring holds unread
 * bytes below the watermark: a trickle reaches the reader within about
 * this long. It runs only while a reader waits in poll().
 */
#define TAP_RING_TIMER_MS	100

/* Urgent records (tap_ring_urge()) wake readers at most this often per CPU. */
#define TAP_RING_URGE_GAP_NS	(10 * NSEC_PER_MSEC)

/* A reservation in progress, one per nesting level. */
struct tap_ring_resv {
	struct taproot_rec_header *hdr;	/* NULL: none at this level */
	u64 start;			/* position of hdr */
	u32 size;			/* bytes reserved at hdr */
};

struct tap_ring {
	/*
	 * Producer state. Written only on the ring's CPU, by the writers
	 * nested there, hence local_t; read by GET_STATS from any CPU.
	 */
	local_t head;		/* next position to reserve: kernel private */
	local_t nest;		/* writers in progress on this CPU */
	local_t seq;		/* bumped by every reservation and every loss */
	local_t records;	/* cumulative, LOST records included */
	local_t bytes;		/* cumulative, LOST records included */
	local_t lost[TAPROOT_LOST_NR];		/* cumulative, by cause */
	local_t lost_pending[TAPROOT_LOST_NR];	/* not yet in a LOST record */
	struct tap_ring_resv resv[TAP_RING_MAX_NEST];
	u64 mask;		/* D - 1 */
	u32 max_record;		/* D / 4 */

	/* The kernel's view of the window, and what backs it. */
	struct taproot_ring_consumer *cons;	/* page 0: user rw */
	struct taproot_ring_producer *prod;	/* page 1: user ro */
	void *data;		/* pages 2..: D bytes, then the same D again */
	void *window;		/* the vmap() of all of it */
	struct page **pages;	/* the 2 + n distinct pages */
	unsigned int nr_pages;
	unsigned int cpu;

	/* Readers. */
	struct irq_work work ____cacheline_aligned_in_smp;
	u64 stale_head;		/* data_head at the last slow timer tick */
	/*
	 * A record the reader wants at once (tap_ring_urge()): urge, set by
	 * its writer, is taken by the publish that follows, which then sets
	 * urgent, after data_head; poll() on any CPU takes that (atomic,
	 * not local_t) and reports the ring readable once.
	 */
	local_t urge;
	atomic_t urgent;
	u64 urged_ns;		/* the last urge's time: on the ring's CPU only */
};

struct tap_ring_set {
	unsigned int data_pages;
	struct tap_ring *ring[];	/* nr_cpu_ids; NULL: not a possible CPU */
};

static struct tap_ring_set __rcu *tap_rings;

/*
 * Each ring of @set (NULL: none) as @ring, on @cpu. The caller holds
 * rcu_read_lock(), under which it read @set from tap_rings.
 */
#define tap_for_each_ring(set, ring, cpu)				\
	for_each_possible_cpu(cpu)					\
		if (!((ring) = (set) ? (set)->ring[cpu] : NULL)) {} else

/*
 * Serialises resize and mmap: a ring is mapped, and counted in
 * tap_rings_mapped, only under it; resize checks the count under it.
 */
static DEFINE_MUTEX(tap_rings_mutex);
static atomic_t tap_rings_mapped = ATOMIC_INIT(0);
static unsigned int tap_data_pages;	/* of the current set */

static u32 tap_watermark = 1;		/* bytes; see tap_rings_set_watermark() */

/* Readers wait here, whatever ring they read. */
static DECLARE_WAIT_QUEUE_HEAD(tap_waitq);
/*
 * 1 from a poll() that may sleep until a producer takes it to queue one
 * wakeup: at most one irq_work per poll(), not one per record. On
 * PREEMPT_RT the irq_work runs in irq_workd, a SCHED_FIFO thread whose
 * own context switches are records too: were each of them to queue the
 * next wakeup while the reader has not run yet, irq_workd would wake
 * itself for ever and starve the reader (seen with a watermark of 8
 * bytes: "RT throttling activated", the guest stuck).
 */
static atomic_t tap_wake_armed = ATOMIC_INIT(0);
static struct timer_list tap_ring_timer;

/* ---------------------------------------------------------------- setup */

static void tap_ring_wake_readers(struct irq_work *work)
{
	wake_up_all(&tap_waitq);
}

static void tap_ring_free(struct tap_ring *ring)
{
	unsigned int i;

	if (!ring)
		return;
	/* No writer runs any more: only its last wakeup may be pending. */
	irq_work_sync(&ring->work);
	vunmap(ring->window);
	for (i = 0; i < ring->nr_pages; i++)
		__free_page(ring->pages[i]);
	kvfree(ring->pages);
	kfree(ring);
}

/* A zeroed ring for @cpu, on its node, its producer page filled in. */
static struct tap_ring *tap_ring_alloc(unsigned int cpu,
				       unsigned int data_pages)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_RETRY_MAYFAIL |
			  __GFP_NOWARN;
	unsigned int nr_pages = TAP_RING_META_PAGES + data_pages;
	unsigned int i, nr_map = nr_pages + data_pages;
	int node = cpu_to_node(cpu);
	struct tap_ring *ring;
	struct page *page;

	/* A possible CPU that is not present may sit on an offline node. */
	if (node != NUMA_NO_NODE && !node_online(node))
		node = NUMA_NO_NODE;

	ring = kzalloc_node(sizeof(*ring), GFP_KERNEL, node);
	if (!ring)
		return ERR_PTR(-ENOMEM);
	ring->cpu = cpu;
	init_irq_work(&ring->work, tap_ring_wake_readers);

	/* Room for the second mapping of the data pages too. */
	ring->pages = kvmalloc_node(array_size(nr_map, sizeof(*ring->pages)),
				    GFP_KERNEL, node);
	if (!ring->pages)
		goto err_free;

	for (i = 0; i < nr_pages; i++) {
		page = alloc_pages_node(node, gfp, 0);
		if (!page)
			goto err_free;
		ring->pages[i] = page;
		ring->nr_pages = i + 1;
		if (i >= TAP_RING_META_PAGES)
			ring->pages[i + data_pages] = page;
	}

	ring->window = vmap(ring->pages, nr_map, VM_MAP | VM_USERMAP,
			    PAGE_KERNEL);
	if (!ring->window)
		goto err_free;

	ring->cons = ring->window;
	ring->prod = ring->window + PAGE_SIZE;
	ring->data = ring->window + TAP_RING_META_PAGES * PAGE_SIZE;
	ring->mask = (u64)data_pages * PAGE_SIZE - 1;
	ring->max_record = (u32)((u64)data_pages * PAGE_SIZE / 4);

	ring->prod->abi_version = TAPROOT_ABI_VERSION;
	ring->prod->cpu = cpu;
	ring->prod->page_size = PAGE_SIZE;
	ring->prod->data_offset = TAP_RING_META_PAGES * PAGE_SIZE;
	ring->prod->data_size = (u64)data_pages * PAGE_SIZE;
	return ring;

err_free:
	tap_ring_free(ring);	/* copes with what got allocated */
	return ERR_PTR(-ENOMEM);
}

static void tap_ring_set_free(struct tap_ring_set *set)
{
	unsigned int cpu;

	if (!set)
		return;
	for_each_possible_cpu(cpu)
		tap_ring_free(set->ring[cpu]);
	kfree(set);
}

static struct tap_ring_set *tap_ring_set_alloc(unsigned int data_pages)
{
	struct tap_ring_set *set;
	struct tap_ring *ring;
	unsigned int cpu;

	set = kzalloc(struct_size(set, ring, nr_cpu_ids), GFP_KERNEL);
	if (!set)
		return ERR_PTR(-ENOMEM);
	set->data_pages = data_pages;

	for_each_possible_cpu(cpu) {
		ring = tap_ring_alloc(cpu, data_pages);
		if (IS_ERR(ring)) {
			tap_ring_set_free(set);
			return ERR_CAST(ring);
		}
		set->ring[cpu] = ring;
	}
	return set;
}

/*
 * Continue @old in @new: positions, counters, pending losses. Both are
 * quiet (no writer, no mapping), so plain stores do.
 */
static void tap_ring_take_over(struct tap_ring *new, struct tap_ring *old)
{
	u64 head = (u64)local_read(&old->head);
	int c;

	local_set(&new->head, (long)head);
	local_set(&new->records, local_read(&old->records));
	local_set(&new->bytes, local_read(&old->bytes));
	for (c = 0; c < TAPROOT_LOST_NR; c++) {
		local_set(&new->lost[c], local_read(&old->lost[c]));
		local_set(&new->lost_pending[c],
			  local_read(&old->lost_pending[c]));
		new->prod->lost[c] = (u64)local_read(&new->lost[c]);
	}
	new->prod->records = (u64)local_read(&new->records);
	new->prod->data_head = head;
	new->cons->data_tail = head;
	new->stale_head = head;
}

/* ---------------------------------------------------------------- producer */

/*
 * The current CPU's ring. Preemption is off: that is the RCU read-side
 * section that keeps the set alive until tap_ring_commit().
 */
static __always_inline struct tap_ring *tap_ring_this_cpu(void)
{
	struct tap_ring_set *set = rcu_dereference_sched(tap_rings);

	return likely(set) ? set->ring[smp_processor_id()] : NULL;
}

static void tap_ring_lost(struct tap_ring *ring, enum taproot_lost_cause c)
{
	local_inc(&ring->lost[c]);
	local_inc(&ring->lost_pending[c]);
	local_inc(&ring->seq);	/* the outermost writer republishes lost[] */
}

static bool tap_ring_have_pending(struct tap_ring *ring)
{
	long any = 0;
	int c;

	for (c = 0; c < TAPROOT_LOST_NR; c++)
		any |= local_read(&ring->lost_pending[c]);
	return any != 0;
}

/*
 * Wake readers when the ring holds at least the watermark of unread bytes
 * and someone waits in poll(). A stale data_tail only makes the unread
 * count larger, so it may wake a reader too many, never one too few.
 */
static void tap_ring_wake(struct tap_ring *ring, u64 head)
{
	u64 wm = min_t(u64, READ_ONCE(tap_watermark), ring->mask + 1);
	bool urge = local_xchg(&ring->urge, 0);

	/* After data_head (B): a poll() that takes it sees the record. */
	if (urge)
		atomic_set_release(&ring->urgent, 1);
	if (head - READ_ONCE(ring->cons->data_tail) < wm && !urge)
		return;
	/*
	 * Not from a CPU on its way offline. Its irq_work list is run one
	 * last time when it is dying (smpcfd_dying_cpu(); on PREEMPT_RT it
	 * is irq_workd's, parked before that): a work queued later stays
	 * pending on the dead CPU, the ring's wakeups with it, and freeing
	 * the ring (irq_work_sync()) would wait for ever. A CPU stops being
	 * active first thing when it goes offline, and only runs its
	 * teardown after that, which waits for a work queued before
	 * (tap_ring_cpu_quiesce()); the slow timer wakes readers meanwhile.
	 */
	if (unlikely(!cpu_active(ring->cpu)))
		return;
	/*
	 * Pairs with the smp_mb() in tap_rings_poll() between queueing the
	 * reader, arming, and reading data_head: either this sees the reader
	 * queued and armed, or the reader sees the data_head published (B)
	 * above.
	 */
	smp_mb();
	/* Lockless, NMI-safe: ordered by the smp_mb() just above. */
	if (waitqueue_active(&tap_waitq) && atomic_xchg(&tap_wake_armed, 0))
		irq_work_queue(&ring->work);
}

/*
 * A writer is done (committed, or failed to reserve). The outermost one
 * publishes what every writer on this CPU has done: data_head, records,
 * lost[]. perf_output_put_handle() is the model.
 */
static void tap_ring_put(struct tap_ring *ring)
{
	struct taproot_ring_producer *prod = ring->prod;
	unsigned long seq;
	u64 head;
	int c;

	if (local_read(&ring->nest) > 1) {
		local_dec(&ring->nest);
		return;
	}
again:
	/*
	 * Read seq before what it guards: a writer nested in us from here on
	 * changes it, and the re-check below publishes again.
	 */
	seq = local_read(&ring->seq);
	barrier();
	head = (u64)local_read(&ring->head);
	WRITE_ONCE(prod->records, (u64)local_read(&ring->records));
	for (c = 0; c < TAPROOT_LOST_NR; c++)
		WRITE_ONCE(prod->lost[c], (u64)local_read(&ring->lost[c]));

	/*
	 * (A) pairs with (C), the consumer's load-acquire of data_head: a
	 * reader that sees this head sees the records before it.
	 */
	smp_wmb();
	WRITE_ONCE(prod->data_head, head);		/* (B) */

	/*
	 * Publish before leaving the nest: a writer that interrupts us after
	 * this publishes a head at least as new, which ours must not undo.
	 */
	barrier();
	local_set(&ring->nest, 0);
	/* Leave the nest before the re-check, or a last change slips by. */
	barrier();
	if (unlikely(seq != (unsigned long)local_read(&ring->seq))) {
		local_set(&ring->nest, 1);
		goto again;
	}

	tap_ring_wake(ring, head);
}

void tap_ring_urge(u64 now_ns)
{
	struct tap_ring *ring = tap_ring_this_cpu();

	/*
	 * At most one in TAP_RING_URGE_GAP_NS per CPU: a process that stays
	 * without mappings (the budget spent) must not turn every poll() of
	 * the reader into a wakeup. A nested writer may race this plain
	 * store: an urge more or less, no harm.
	 */
	if (unlikely(!ring) ||
	    now_ns - READ_ONCE(ring->urged_ns) < TAP_RING_URGE_GAP_NS)
		return;
	WRITE_ONCE(ring->urged_ns, now_ns);
	local_set(&ring->urge, 1);
}

/*
 * Move @ring's private head past @total bytes if the consumer has left
 * room for them: true, with the position reserved in *@pos and its time
 * in *@ts; false, counted, when the ring is full. Inlined into
 * tap_ring_reserve(), whose stores to the record follow the branch on
 * tail below (a true return).
 */
static __always_inline bool tap_ring_claim(struct tap_ring *ring, u32 total,
					   u64 *pos, u64 *ts)
{
	u64 data_size = ring->mask + 1;
	u64 tail, pub, head;

	do {
		tail = READ_ONCE(ring->cons->data_tail);
		/* Only our CPU writes it: the newest published head. */
		pub = READ_ONCE(ring->prod->data_head);
		head = (u64)local_read(&ring->head);
		/*
		 * Userspace wrote tail. Trust it only within
		 * [pub - D, pub]: then [head, tail + D) is free and holds
		 * no byte the reader has not released nor any byte a
		 * writer under us is still filling ([pub, head)). Any
		 * other value stops the ring, as if full.
		 *
		 * The branch on tail orders its load before the stores to
		 * the record: the control dependency that pairs with (D),
		 * the consumer's store-release of data_tail.
		 */
		if (unlikely(pub - tail > data_size ||
			     head + total - tail > data_size)) {
			tap_ring_lost(ring, TAPROOT_LOST_FULL);
			return false;
		}
		/*
		 * Inside the loop: a writer nested in us between here and
		 * the cmpxchg reserves first, makes the cmpxchg fail, and
		 * we take a later time for a later position.
		 */
		*ts = ktime_get_mono_fast_ns();
	} while ((u64)local_cmpxchg(&ring->head, (long)head,
				    (long)(head + total)) != head);
	local_inc(&ring->seq);
	*pos = head;
	return true;
}

/*
 * Write at @p, the front of a reservation made for it and the record
 * after it, the LOST record of the losses pending on @ring (taken out of
 * pending), with time @ts.
 */
static void tap_ring_write_lost(struct tap_ring *ring, void *p, u64 ts)
{
	struct taproot_rec_lost *lost = p;
	int c;

	lost->hdr.size = sizeof(*lost);
	lost->hdr.type = TAPROOT_REC_LOST;
	lost->hdr.flags = 0;
	lost->hdr.time_ns = ts;
	for (c = 0; c < TAPROOT_LOST_NR; c++)
		lost->lost[c] = (u64)local_xchg(&ring->lost_pending[c], 0);
	local_inc(&ring->records);
	local_add(sizeof(*lost), &ring->bytes);
}

struct taproot_rec_header *tap_ring_reserve(u32 size, u16 type)
{
	struct taproot_rec_header *hdr;
	struct tap_ring_resv *resv;
	struct tap_ring *ring;
	u32 lost_size = 0;
	u64 head, ts;
	long nest;
	void *p;

	preempt_disable_notrace();	/* until tap_ring_commit() */
	ring = tap_ring_this_cpu();
	if (unlikely(!ring))
		goto out;

	nest = local_inc_return(&ring->nest);
	if (unlikely(nest > TAP_RING_MAX_NEST)) {
		tap_ring_lost(ring, TAPROOT_LOST_NESTED);
		goto out_put;
	}
	/* A record this ring can never take: counted as "no room". */
	if (unlikely(size < sizeof(*hdr) || !IS_ALIGNED(size, 8) ||
		     size > ring->max_record)) {
		tap_ring_lost(ring, TAPROOT_LOST_FULL);
		goto out_put;
	}

	/*
	 * Only the outermost writer emits the LOST record: no one else
	 * takes the pending counts, so they are still there below.
	 */
	if (nest == 1 && unlikely(tap_ring_have_pending(ring)))
		lost_size = sizeof(struct taproot_rec_lost);
	if (!tap_ring_claim(ring, lost_size + size, &head, &ts))
		goto out_put;

	/* Contiguous thanks to the second mapping: lost_size + size < D. */
	p = ring->data + (head & ring->mask);

	if (lost_size) {
		tap_ring_write_lost(ring, p, ts);
		p += lost_size;
	}

	hdr = p;
	hdr->size = size;
	hdr->type = type;
	hdr->flags = 0;
	hdr->time_ns = ts;

	resv = &ring->resv[nest - 1];
	resv->hdr = hdr;
	resv->start = head + lost_size;
	resv->size = size;
	return hdr;	/* preemption stays off, we stay in the nest */

out_put:
	tap_ring_put(ring);
out:
	preempt_enable_notrace();
	return NULL;
}

void tap_ring_commit(struct taproot_rec_header *hdr, u32 used)
{
	struct tap_ring_resv *resv;
	struct tap_ring *ring;
	u64 end;
	u32 size;
	long nest;

	ring = tap_ring_this_cpu();
	if (unlikely(!ring))
		goto out;

	/* The innermost writer in progress is us, or this is not ours. */
	nest = local_read(&ring->nest);
	if (unlikely(nest < 1 || nest > TAP_RING_MAX_NEST))
		goto out;
	resv = &ring->resv[nest - 1];
	if (unlikely(resv->hdr != hdr))
		goto out;

	size = resv->size;
	if (used < size && used >= sizeof(*hdr) && IS_ALIGNED(used, 8)) {
		/* Give the tail back unless someone reserved after us. */
		end = resv->start + size;
		if ((u64)local_cmpxchg(&ring->head, (long)end,
				       (long)(resv->start + used)) == end)
			size = used;
	}
	hdr->size = size;	/* ours, whatever the writer put there */
	resv->hdr = NULL;

	local_inc(&ring->records);
	local_add(size, &ring->bytes);
	tap_ring_put(ring);
out:
	preempt_enable_notrace();	/* from tap_ring_reserve() */
}

void tap_ring_commit_pad(struct taproot_rec_header *hdr, u32 used)
{
	u32 size = round_up(used, 8);

	memset((u8 *)hdr + used, 0, size - used);
	tap_ring_commit(hdr, size);
}

u32 tap_ring_max_record(void)
{
	return (u32)((u64)READ_ONCE(tap_data_pages) * PAGE_SIZE / 4);
}

void tap_ring_get_stats(unsigned int cpu, struct tap_ring_stats *st)
{
	struct tap_ring_set *set;
	struct tap_ring *ring;
	int c;

	memset(st, 0, sizeof(*st));
	if (cpu >= nr_cpu_ids)
		return;

	rcu_read_lock();
	set = rcu_dereference(tap_rings);
	ring = set ? set->ring[cpu] : NULL;
	if (ring) {
		st->records = (u64)local_read(&ring->records);
		st->bytes = (u64)local_read(&ring->bytes);
		for (c = 0; c < TAPROOT_LOST_NR; c++)
			st->lost[c] = (u64)local_read(&ring->lost[c]);
	}
	rcu_read_unlock();
}

/*
 * Any value is taken; the producer uses min(@bytes, D) with at least 1,
 * so that a watermark set for larger rings still wakes readers of
 * smaller ones.
 */
void tap_rings_set_watermark(u32 bytes)
{
	WRITE_ONCE(tap_watermark, max_t(u32, bytes, 1));
}

/* ---------------------------------------------------------------- readers */

/* Unread bytes of @ring, or 0 when data_tail is inconsistent. */
static u64 tap_ring_unread(struct tap_ring *ring, u64 head, u64 tail)
{
	u64 unread = head - tail;

	return unread <= ring->mask + 1 ? unread : 0;
}

/* Whether @ring was urged since the last poll() that said so: once. */
static bool tap_ring_urgent(struct tap_ring *ring, u64 tail)
{
	if (!atomic_read(&ring->urgent) || !atomic_xchg(&ring->urgent, 0))
		return false;
	/*
	 * Set after the data_head it urges was published, and the xchg is
	 * ordered: read data_head again. Nothing unread: already read.
	 */
	return tap_ring_unread(ring, READ_ONCE(ring->prod->data_head), tail) != 0;
}

/*
 * The slow timer: marks the data_head of every ring with unread bytes as
 * stale, which makes poll() readable, and wakes readers. It runs while a
 * reader waits: poll() arms it, and it rearms itself only then.
 */
static void tap_rings_tick(struct timer_list *timer)
{
	struct tap_ring_set *set;
	struct tap_ring *ring;
	bool unread = false;
	unsigned int cpu;
	u64 head;

	rcu_read_lock();
	set = rcu_dereference(tap_rings);
	tap_for_each_ring(set, ring, cpu) {
		head = READ_ONCE(ring->prod->data_head);
		if (tap_ring_unread(ring, head,
				    READ_ONCE(ring->cons->data_tail))) {
			WRITE_ONCE(ring->stale_head, head);
			unread = true;
		}
	}
	rcu_read_unlock();

	if (unread)
		wake_up_all(&tap_waitq);
	/*
	 * Rearm while someone waits. Lockless: a poll() that races with this
	 * read arms the timer itself after queueing (tap_rings_poll()).
	 */
	if (waitqueue_active(&tap_waitq))
		mod_timer(timer, jiffies + msecs_to_jiffies(TAP_RING_TIMER_MS));
}

/*
 * Level-triggered: readable while any ring holds at least the watermark
 * of unread bytes, or holds bytes that were already there at the last
 * tick of the slow timer; and once for a ring urged since the last time
 * (tap_ring_urge()) that holds unread bytes: the reader reads them all.
 */
__poll_t tap_rings_poll(struct file *file, struct poll_table_struct *wait)
{
	struct tap_ring_set *set;
	struct tap_ring *ring;
	u64 head, tail, wm;
	__poll_t mask = 0;
	unsigned int cpu;

	poll_wait(file, &tap_waitq, wait);
	atomic_set(&tap_wake_armed, 1);
	/*
	 * Pairs with the smp_mb() in tap_ring_wake(): queued on tap_waitq
	 * and armed before reading data_head, so a producer that published
	 * after our read sees us waiting and wakes us.
	 */
	smp_mb();
	if (!timer_pending(&tap_ring_timer))
		mod_timer(&tap_ring_timer,
			  jiffies + msecs_to_jiffies(TAP_RING_TIMER_MS));

	rcu_read_lock();
	set = rcu_dereference(tap_rings);
	tap_for_each_ring(set, ring, cpu) {
		wm = min_t(u64, READ_ONCE(tap_watermark), ring->mask + 1);
		head = READ_ONCE(ring->prod->data_head);
		tail = READ_ONCE(ring->cons->data_tail);
		if (tap_ring_unread(ring, head, tail) >= wm ||
		    tap_ring_unread(ring, READ_ONCE(ring->stale_head), tail) ||
		    tap_ring_urgent(ring, tail)) {
			mask = EPOLLIN | EPOLLRDNORM;
			break;
		}
	}
	rcu_read_unlock();
	return mask;
}

/*
 * Wake every reader in poll(), whatever the rings hold: a poll() re-checks
 * its descriptors when woken, and one that was closed meanwhile reports
 * POLLNVAL and returns.
 */
void tap_rings_wake_all(void)
{
	wake_up_all(&tap_waitq);
}

/*
 * @cpu goes offline and is no longer active, so no publish on it queues
 * its ring's irq_work any more (tap_ring_wake()): wait for one queued
 * before, while the CPU can still run it. Process context, on @cpu's
 * hotplug thread, while sampling runs: the set is neither resized nor
 * freed meanwhile (both wait for sampling to stop), so the ring outlives
 * the RCU read section it is looked up in.
 */
void tap_ring_cpu_quiesce(unsigned int cpu)
{
	struct tap_ring_set *set;
	struct tap_ring *ring;

	rcu_read_lock();
	set = rcu_dereference(tap_rings);
	ring = set && cpu < nr_cpu_ids ? set->ring[cpu] : NULL;
	rcu_read_unlock();
	if (ring)
		irq_work_sync(&ring->work);
}

/* ---------------------------------------------------------------- mmap */

static void tap_ring_vm_open(struct vm_area_struct *vma)
{
	/* A split, mremap() move or MADV_DOFORK'd fork: one more VMA. */
	atomic_inc(&tap_rings_mapped);
}

static void tap_ring_vm_close(struct vm_area_struct *vma)
{
	atomic_dec(&tap_rings_mapped);
}

/*
 * A ->close also keeps the kernel from merging these VMAs with their
 * neighbours, so every VMA counted was opened here or in ->open.
 */
static const struct vm_operations_struct tap_ring_vm_ops = {
	.open = tap_ring_vm_open,
	.close = tap_ring_vm_close,
};

static void tap_vma_flags(struct vm_area_struct *vma, vm_flags_t set,
			  vm_flags_t clear)
{
#ifdef HAS_VM_FLAGS_SET
	vm_flags_set(vma, set);
	vm_flags_clear(vma, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/*
 * dev.c has checked the CPU number and that the mapping is shared. Here:
 * the range against the window, write permission against the page kinds
 * (only the consumer page is ever writable), and no page is executable.
 */
int tap_ring_mmap(unsigned int cpu, struct vm_area_struct *vma,
		  unsigned long pgoff_in_window)
{
	unsigned long npages = vma_pages(vma), win_pages;
	struct tap_ring_set *set;
	struct tap_ring *ring;
	vm_flags_t clear = 0;
	int err;

	mutex_lock(&tap_rings_mutex);
	set = rcu_dereference_protected(tap_rings,
					lockdep_is_held(&tap_rings_mutex));
	ring = NULL;
	if (set && cpu < nr_cpu_ids)	/* @cpu comes from the file offset */
		ring = set->ring[array_index_nospec(cpu, nr_cpu_ids)];
	if (!ring) {
		err = -EINVAL;
		goto out;
	}

	win_pages = TAP_RING_META_PAGES + 2UL * set->data_pages;
	if (pgoff_in_window >= win_pages ||
	    npages > win_pages - pgoff_in_window) {
		err = -EINVAL;
		goto out;
	}
	/*
	 * The rings are data, partly chosen by whoever is sampled (user
	 * stack bytes): never executable, now or after mprotect().
	 */
	if (vma->vm_flags & VM_EXEC) {
		err = -EPERM;
		goto out;
	}
	clear = VM_MAYEXEC;
	if (pgoff_in_window + npages > 1) {
		/* Reaches past the consumer page: read-only, for good. */
		if (vma->vm_flags & VM_WRITE) {
			err = -EPERM;
			goto out;
		}
		clear |= VM_MAYWRITE;
	}
	/*
	 * Fork: the child does not inherit the mapping (one consumer).
	 * mremap(): cannot grow it; a move or a shrink is fine.
	 */
	tap_vma_flags(vma, VM_DONTCOPY | VM_DONTEXPAND, clear);

	err = remap_vmalloc_range(vma, ring->window, pgoff_in_window);
	if (err)
		goto out;
	vma->vm_ops = &tap_ring_vm_ops;
	tap_ring_vm_open(vma);
out:
	mutex_unlock(&tap_rings_mutex);
	return err;
}

/* ---------------------------------------------------------------- life */

static void tap_rings_publish(struct tap_ring_set *set)
{
	rcu_assign_pointer(tap_rings, set);
	WRITE_ONCE(tap_data_pages, set ? set->data_pages : 0);
}

int tap_rings_resize(unsigned int data_pages)
{
	struct tap_ring_set *old, *set;
	unsigned int cpu;
	int err = 0;

	if (!is_power_of_2(data_pages) ||
	    data_pages < TAPROOT_RING_PAGES_MIN ||
	    data_pages > TAPROOT_RING_PAGES_MAX)
		return -EINVAL;

	mutex_lock(&tap_rings_mutex);
	old = rcu_dereference_protected(tap_rings,
					lockdep_is_held(&tap_rings_mutex));
	if (old && old->data_pages == data_pages)
		goto out;
	if (atomic_read(&tap_rings_mapped)) {
		err = -EBUSY;
		goto out;
	}

	/* All or nothing: the old set stays until the new one is whole. */
	set = tap_ring_set_alloc(data_pages);
	if (IS_ERR(set)) {
		err = PTR_ERR(set);
		goto out;
	}
	if (old)
		for_each_possible_cpu(cpu)
			tap_ring_take_over(set->ring[cpu], old->ring[cpu]);

	tap_rings_publish(set);
	/* STACK records unread in the old rings are gone with them. */
	tap_intern_new_epoch();
	/* Every writer that may have seen the old set has committed. */
	synchronize_rcu();
	tap_ring_set_free(old);
out:
	mutex_unlock(&tap_rings_mutex);
	return err;
}

unsigned int tap_rings_data_pages(void)
{
	return READ_ONCE(tap_data_pages);
}

int __init tap_rings_init(unsigned int data_pages)
{
	int err;

	timer_setup(&tap_ring_timer, tap_rings_tick, 0);
	/* As config.c's default: half the data area. */
	tap_rings_set_watermark((u32)((u64)data_pages * PAGE_SIZE / 2));

	err = tap_rings_resize(data_pages);
	if (err)
		pr_err("cannot allocate rings of %u pages for %u CPUs: %d\n",
		       data_pages, num_possible_cpus(), err);
	return err;
}

/*
 * After every producer is gone (sampling stopped, probes unregistered)
 * and with no file open (the module is pinned while one is, and a
 * mapping holds its file): no one can reach the rings any more.
 */
void tap_rings_exit(void)
{
	struct tap_ring_set *set;

#ifdef HAS_TIMER_DELETE_SYNC
	timer_delete_sync(&tap_ring_timer);
#else
	del_timer_sync(&tap_ring_timer);
#endif
	mutex_lock(&tap_rings_mutex);
	set = rcu_dereference_protected(tap_rings,
					lockdep_is_held(&tap_rings_mutex));
	tap_rings_publish(NULL);
	mutex_unlock(&tap_rings_mutex);

	synchronize_rcu();
	tap_ring_set_free(set);	/* irq_work_sync() on each ring */
}
