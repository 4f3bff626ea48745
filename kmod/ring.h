/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU rings: the producer side, as the rest of the module sees it.
 *
 * ring.c owns the rings (allocation, the layout of <linux/taproot.h>, loss
 * accounting, LOST records, waking readers); dev.c maps them to userspace;
 * every producer (sample.c, the tracepoint probes of events.c) writes through
 * tap_ring_reserve() / tap_ring_commit() and nothing else.
 */
#ifndef _TAPROOT_RING_H
#define _TAPROOT_RING_H

#include <linux/types.h>
#include <linux/taproot.h>

struct file;
struct poll_table_struct;
struct vm_area_struct;

/* Deepest nesting of writers on one CPU (task, softirq, hardirq, NMI). */
#define TAP_RING_MAX_NEST	4

/*
 * Allocate a ring of @data_pages (a power of two) for every possible CPU,
 * replacing the current set. Process context; may sleep. Returns -EBUSY,
 * and changes nothing, while any ring is mapped.
 */
int tap_rings_resize(unsigned int data_pages);
unsigned int tap_rings_data_pages(void);

/* Module load/unload: first set of rings, and final release. */
int tap_rings_init(unsigned int data_pages);
void tap_rings_exit(void);

/*
 * Producer, callable in any context (task with preemption off, softirq,
 * hardirq, NMI, tracepoint under the runqueue lock) on the current CPU's
 * ring. Never sleeps, never takes a lock, never calls wake_up().
 *
 * tap_ring_reserve() reserves @size bytes (a multiple of 8, header
 * included) and fills in the header's size, type and time_ns (from
 * ktime_get_mono_fast_ns()), flags = 0. It returns NULL when the record
 * cannot be written; the loss is then counted by cause and announced by a
 * TAPROOT_REC_LOST record ahead of the next record that fits. Every
 * non-NULL reservation must be committed before the caller re-enables
 * preemption or returns from its interrupt.
 *
 * tap_ring_commit() publishes the record. @used (a multiple of 8,
 * <= reserved size) lets the writer give back the unused tail of its
 * reservation (e.g. a user stack copy that stopped early); when a nested
 * writer has reserved after it, the tail cannot be given back and stays
 * in the record as padding: hdr->size says which.
 */
struct taproot_rec_header *tap_ring_reserve(u32 size, u16 type);
void tap_ring_commit(struct taproot_rec_header *hdr, u32 used);

/*
 * tap_ring_commit() of a record whose contents end after @used bytes, any
 * number: the padding up to the next multiple of 8 is zeroed first, so
 * that no stale byte of the ring reaches the reader.
 */
void tap_ring_commit_pad(struct taproot_rec_header *hdr, u32 used);

/*
 * Between tap_ring_reserve() and tap_ring_commit(): the record is one the
 * reader wants at once, whatever the watermark (a sample of a process the
 * module holds no mappings of: the reader uploads them, and reads the
 * process from /proc, before it has perhaps exited). A reader waiting in
 * poll() is woken by its commit; one that was not is told by its next
 * poll(). @now_ns: the record's time. Costs at most one wakeup per poll(),
 * as the watermark's, and one urge per CPU in 10 ms.
 */
void tap_ring_urge(u64 now_ns);

/* Largest record a ring can take (a quarter of its data area). */
u32 tap_ring_max_record(void);

/*
 * Per-CPU counters, for TAPROOT_CMD_GET_STATS: cumulative for the life of
 * the module (a resize carries them over); records and bytes count the
 * TAPROOT_REC_LOST records too.
 */
struct tap_ring_stats {
	u64 records;
	u64 bytes;
	u64 lost[TAPROOT_LOST_NR];
};

void tap_ring_get_stats(unsigned int cpu, struct tap_ring_stats *st);

/* Bytes unread in a ring that make the producer wake poll() (SET_CONFIG). */
void tap_rings_set_watermark(u32 bytes);

/*
 * Readers, used by dev.c. tap_ring_mmap() maps part of ring @cpu's window
 * (see <linux/taproot.h>) and counts the mapping until it is unmapped;
 * tap_rings_poll() is the whole of poll(), level-triggered: EPOLLIN while
 * any ring holds at least the watermark of unread bytes, or unread bytes
 * that were already there at the last tick of the slow timer. Readers are
 * woken by the producer's irq_work (past the watermark, when a reader
 * waits) and by that timer (any unread byte). tap_rings_wake_all() wakes
 * every reader in poll() regardless (process context).
 */
int tap_ring_mmap(unsigned int cpu, struct vm_area_struct *vma,
		  unsigned long pgoff_in_window);
__poll_t tap_rings_poll(struct file *file, struct poll_table_struct *wait);
void tap_rings_wake_all(void);

/*
 * CPU hotplug (sample.c): @cpu is going offline, no longer active; wait
 * until its ring has no wakeup pending. Process context, while started.
 */
void tap_ring_cpu_quiesce(unsigned int cpu);

#endif /* _TAPROOT_RING_H */
