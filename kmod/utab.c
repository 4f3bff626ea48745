// SPDX-License-Identifier: GPL-2.0
/*
 * The store of uploaded unwind tables and process mappings
 * (<linux/taproot.h>, "Unwinding in the module"; the ioctls at its end).
 *
 * Ownership. The store belongs to the open /dev/taproot: it is made at
 * the file's first ioctl, hangs off file->private_data, and is freed when
 * the file is released (a killed consumer frees it too). The device has
 * one consumer at a time (dev.c), so there is one store at most, and it
 * is published in tap_utab_cur for the sample handler. Every change goes
 * through tap_utab_mutex (uploads are rare and may sleep: copies, big
 * allocations); the handler only reads, under RCU-sched.
 *
 * Memory. Everything an upload allocates (a table's arrays and struct, a
 * process's mappings, the store's hash heads) is charged to one counter,
 * checked against TAPROOT_A_CFG_UNWIND_MEM before the allocation: beyond,
 * -ENOSPC. Bytes are uncharged when they are freed, which for what a
 * sample handler may still be reading is after a grace period.
 *
 * Lifetimes. A table holds a reference for its entry in the store (until
 * TABLE_DEL or release) and one per mapping that points to it; process
 * mappings replaced or forgotten are freed by call_rcu(), which drops
 * their tables' references then. A table whose last reference goes is
 * already out of the store and out of every published mapping, so it is
 * freed at once (kvfree() may run in the RCU callback: vfree() defers
 * itself in interrupt context). The walker's per-CPU rule cache outlives
 * every table and needs no invalidation: it copies rules and keys them by
 * the table's uid, never reused (tap_utab_last_uid).
 *
 * Address spaces. A process's mappings name files by address, which is
 * true only of the address space they were read from. They are bound to
 * its mm by two numbers: mm->context.ctx_id (x86: unique for the life of
 * the system, never reused, unlike the mm's address) and a generation
 * that changes whenever mappings may have been removed, the first of
 * these the kernel allows (kmod/probes/), logged when a store is made:
 *   HAS___DO_MUNMAP (5.10), HAS_DO_MAS_MUNMAP (6.1), HAS_DO_VMI_MUNMAP
 *                         (6.12 on): a counter per hash of the mm's
 *                         address, bumped by kprobes on the helpers every
 *                         removal enters first (tap_unmap_probes[]) when
 *                         the range removed meets code or a file: a heap
 *                         or an arena that comes and goes leaves uploads
 *                         current; where they cannot be placed,
 *   HAS_MM_LOCK_SEQCOUNT  mm->mm_lock_seq, the seqcount the per-VMA locks
 *                         keep (6.13, Debian's 6.12): odd while the mmap
 *                         lock is held for writing, so a change under way
 *                         shows too; moved by every write lock;
 *   HAS_MM_VMACACHE_SEQNUM mm->vmacache_seqnum (before 6.1), bumped under
 *                         the write lock whenever a VMA is removed;
 *   HAS_MMAP_LOCK_ACQUIRE_RETURNED_* the counter, bumped by a probe on
 *                         the tracepoint mmap_lock_acquire_returned each
 *                         time a write lock is taken.
 * Kprobes and tracepoint are attached while a store exists. Two mms that
 * share a counter make each other's mappings stale more often, never
 * less.
 * Removing or replacing a mapping takes the mmap lock for writing, so it
 * moves the generation before it touches anything. The token of
 * TAPROOT_IOC_PROC_TOKEN is a keyed hash (siphash, a key of each store) of
 * the tgid, ctx_id and generation: MAPS_SET recomputes it and fails with
 * ESTALE when it differs, and binds the mappings to those numbers; a
 * lookup compares them with the sampled task's. The consumer reads
 * /proc/PID/maps after the token, under the mmap read lock: a change that
 * began before the token has ended by then, and the maps read include it.
 * tap_utab_unchanged() closes the last window, a change that begins while
 * a walk runs. MAPS_SET also takes only mappings that lie within the
 * process's executable VMAs, checked under the mmap lock with the
 * generation: the walker's pcs and code reads stay in code the process
 * runs (uwalk.h), whatever the uploader claims.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "config.h"
#include "jvwalk.h"
#include "pywalk.h"
#include "taproot.h"
#include "utab.h"

/*
 * Process hash: heads of RCU lists, by a keyed hash of the tgid (the
 * store's siphash key): pids are the unprivileged's to choose, by forking,
 * and a known hash would let them fill one chain that every sample walks
 * with interrupts off. A chain holds TAP_UPROC_CHAIN_MAX at most (MAPS_SET
 * of one more is ENOSPC), so a lookup reads at most that many entries;
 * with TAPROOT_PROCS_MAX spread over the buckets by a hash nobody outside
 * knows, 4 a chain on average, a full one does not happen but by design.
 */
#define TAP_UPROC_BITS		12
#define TAP_UPROC_CHAIN_MAX	32
/* Bytes copied from userspace between two chances to reschedule. */
#define TAP_UTAB_CHUNK		(256U << 10)
/* A table's share of the store's indexes (xarray and build ID hash). */
#define TAP_UTAB_INDEX_BYTES	64

/* One uploaded table. */
struct tap_utab {
	struct tap_utable t;		/* what the walker reads */
	refcount_t ref;			/* the store's entry + one per mapping */
	u32 id;
	u32 build_id_len;
	u8 build_id[TAPROOT_BUILD_ID_MAX];
	struct hlist_node by_bid;	/* store->bids, while in the store */
	size_t bytes;			/* charged */
	void *mem;			/* rules, pcs, row_rules: one kvmalloc */
};

/* The mappings of one process, bound to one address space. */
struct tap_uproc {
	struct hlist_node node;		/* store->procs[], RCU */
	u32 tgid;			/* global: the key */
	u32 upid;			/* the pid as the uploader named it */
	u64 mm_id;			/* mm->context.ctx_id */
	u64 gen;			/* tap_mm_gen() at the token */
	size_t bytes;			/* charged */
	struct rcu_head rcu;
	struct taproot_python_layout py;	/* .maps.py = &py when set */
	struct taproot_jvm_layout jvm;		/* .maps.jvm = &jvm when set */
	struct tap_umaps maps;		/* .map = map */
	struct tap_umap map[];
};

struct tap_ustore {
	siphash_key_t key;		/* of the tokens */
	struct xarray tables;		/* id -> struct tap_utab */
	u32 next_id;
	u32 nr_procs;
	bool gen_on;			/* tokens can be made */
	DECLARE_HASHTABLE(bids, 8);	/* build ID -> struct tap_utab */
	struct hlist_head procs[1 << TAP_UPROC_BITS];
};

/* Serialises the ioctls and release: every change of the store. */
static DEFINE_MUTEX(tap_utab_mutex);
/*
 * The uid of the last table made (struct tap_utable; under the mutex):
 * counted up for the life of the module, never reused, so that a rule the
 * walker cached for a table freed since matches no table that follows it.
 */
static u64 tap_utab_last_uid;
/* The store of the open file, for the sample handler; NULL: none. */
static struct tap_ustore __rcu *tap_utab_cur;

static atomic64_t tap_utab_mem = ATOMIC64_INIT(0);
static atomic_t tap_utab_tables = ATOMIC_INIT(0);
static atomic_t tap_utab_procs = ATOMIC_INIT(0);

/* ------------------------------------------------------------ generations */

/*
 * TAP_UTAB_FORCE_TRACEPOINT (scripts/kbuild KERNEL KCFLAGS=-D...) takes
 * the tracepoint's generation even where a better one exists, to test it.
 *
 * The kernel's own generation, the fallback of the removal kprobes:
 * mm_lock_seq (odd while a write section is under way, its changes in no
 * maps read) or vmacache_seqnum.
 */
#if defined(HAS_MM_LOCK_SEQCOUNT) && !defined(TAP_UTAB_FORCE_TRACEPOINT)
#define TAP_GEN_NATIVE		"every mmap write lock (mm_lock_seq)"

static inline u64 tap_mm_native_gen(struct mm_struct *mm)
{
	return smp_load_acquire(&mm->mm_lock_seq.sequence);
}

static inline bool tap_native_busy(u64 gen)
{
	return gen & 1;
}
#elif defined(HAS_MM_VMACACHE_SEQNUM) && !defined(TAP_UTAB_FORCE_TRACEPOINT)
#define TAP_GEN_NATIVE		"every removal (vmacache_seqnum)"

static inline u64 tap_mm_native_gen(struct mm_struct *mm)
{
	return smp_load_acquire(&mm->vmacache_seqnum);
}

static inline bool tap_native_busy(u64 gen)
{
	return false;
}
#endif

#if defined(TAP_GEN_NATIVE) || \
	defined(HAS_MMAP_LOCK_ACQUIRE_RETURNED_MEMCG_PATH) || \
	defined(HAS_MMAP_LOCK_ACQUIRE_RETURNED_NO_MEMCG_PATH)

#define TAP_MM_GEN_BITS		12
static atomic_t tap_mm_gens[1 << TAP_MM_GEN_BITS];
/*
 * The generation is the counter of tap_mm_gens[] (bumped by the removal
 * kprobes or the tracepoint), not the kernel's own. tap_gen_start() sets
 * it, under the mutex, while no store is published: every token and walk
 * of a store reads the one generation.
 */
static bool tap_gen_counted;

static inline atomic_t *tap_mm_gen_slot(const struct mm_struct *mm)
{
	return &tap_mm_gens[hash_ptr(mm, TAP_MM_GEN_BITS)];
}

static inline u64 tap_mm_gen(struct mm_struct *mm)
{
#ifdef TAP_GEN_NATIVE
	if (!READ_ONCE(tap_gen_counted))
		return tap_mm_native_gen(mm);
#endif
	return (u32)atomic_read_acquire(tap_mm_gen_slot(mm));
}

static inline bool tap_gen_busy(u64 gen)
{
#ifdef TAP_GEN_NATIVE
	if (!READ_ONCE(tap_gen_counted))
		return tap_native_busy(gen);
#endif
	return false;
}

/* A change of @mm's mappings begins: the bump is seen before it. */
static inline void tap_mm_changing(struct mm_struct *mm)
{
	atomic_inc(tap_mm_gen_slot(mm));
	smp_mb__after_atomic();
}

#if (defined(HAS_DO_VMI_MUNMAP) || defined(HAS_DO_MAS_MUNMAP) || \
	defined(HAS___DO_MUNMAP)) && !defined(TAP_UTAB_FORCE_TRACEPOINT)
/*
 * A function that removals of mappings enter, under the mmap write lock
 * of the mm, before they change anything, with the range in two of its
 * arguments: start and end, or start and length (len).
 */
struct tap_unmap_probe {
	struct kprobe kp;
	const char *symbol;
	int mm_arg;			/* -1: current->mm */
	unsigned int start_arg;
	unsigned int end_arg;
	bool len;
};

/*
 * 5.10: munmap, a MAP_FIXED mapping over others, mremap and brk all enter
 * __do_munmap(mm, start, len, ...); 6.1 do_mas_align_munmap(mas, vma, mm,
 * start, end, ...). 6.12 on: all enter
 * do_vmi_align_munmap(vmi, vma, mm, start, end, ...) but a MAP_FIXED
 * mapping over others, which __mmap_region(file, addr, len, ...) removes
 * itself (vms_gather_munmap_vmas()); every new mapping of current->mm
 * enters it. (6.2 to 6.11 have no __mmap_region: no kprobes there.) A
 * kprobe is preferred to the tracepoint, whose every firing (every mmap
 * lock taken, page faults' too) has the kernel format the memory cgroup's
 * path under the global css_set_lock (RELIABILITY.md, issue 28), and to
 * mm_lock_seq, which every write lock moves: a JVM warming up takes one
 * every few milliseconds for its heap and its compilers' arenas, so its
 * uploads were stale as soon as made. The helpers are internal: nothing
 * checks their arguments at build time, unwind-upload-abuse's cases do.
 */
static struct tap_unmap_probe tap_unmap_probes[] = {
#if defined(HAS_DO_VMI_MUNMAP)
	{ .symbol = "do_vmi_align_munmap", .mm_arg = 2, .start_arg = 3,
	  .end_arg = 4 },
	{ .symbol = "__mmap_region", .mm_arg = -1, .start_arg = 1,
	  .end_arg = 2, .len = true },
#elif defined(HAS_DO_MAS_MUNMAP)
	{ .symbol = "do_mas_align_munmap", .mm_arg = 2, .start_arg = 3,
	  .end_arg = 4 },
#else
	{ .symbol = "__do_munmap", .mm_arg = 0, .start_arg = 1,
	  .end_arg = 2, .len = true },
#endif
};
static bool tap_unmap_probes_on;	/* under the mutex */

/*
 * Whether [@start, @end) of @mm meets code or a file: where an upload's
 * mappings may lie (MAPS_SET takes ranges of executable VMAs only, and
 * one made read-only since still maps its file). Anonymous data mapped
 * and unmapped (heaps, arenas, a JIT's commits, stacks) leaves uploads
 * true. Missed: anonymous code made writable, then replaced by a file's
 * code; its range keeps the frame-pointer rule every anonymous mapping
 * is uploaded with. The caller holds @mm's mmap lock for writing.
 */
static bool tap_mm_meets_code(struct mm_struct *mm, unsigned long start,
			      unsigned long end)
{
	struct vm_area_struct *vma;

	for (vma = find_vma(mm, start); vma && vma->vm_start < end;
	     vma = find_vma(mm, vma->vm_end)) {
		if ((vma->vm_flags & VM_EXEC) || vma->vm_file)
			return true;
	}
	return false;
}

static int tap_unmap_probe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	const struct tap_unmap_probe *up =
		container_of(kp, struct tap_unmap_probe, kp);
	unsigned long start = regs_get_kernel_argument(regs, up->start_arg);
	unsigned long end = regs_get_kernel_argument(regs, up->end_arg);
	struct mm_struct *mm = current->mm;

	if (up->mm_arg >= 0)
		mm = (struct mm_struct *)regs_get_kernel_argument(regs,
								  up->mm_arg);
	if (up->len)
		end = end > ULONG_MAX - start ? ULONG_MAX : start + end;
	if (!mm)
		return 0;
	/*
	 * A range no removal has (arguments not where the table says, on a
	 * kernel it was not tried on) counts as a change of everything.
	 */
	if (start >= end || end > TASK_SIZE_MAX ||
	    tap_mm_meets_code(mm, start, end))
		tap_mm_changing(mm);
	return 0;
}

/* 0, all attached; or register_kprobes()'s error, none attached. */
static int tap_unmap_probes_start(void)
{
	struct kprobe *kps[ARRAY_SIZE(tap_unmap_probes)];
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(tap_unmap_probes); i++) {
		struct tap_unmap_probe *up = &tap_unmap_probes[i];

		/* a kprobe is registered anew from a cleared struct */
		memset(&up->kp, 0, sizeof(up->kp));
		up->kp.symbol_name = up->symbol;
		up->kp.pre_handler = tap_unmap_probe_hit;
		kps[i] = &up->kp;
	}
	err = register_kprobes(kps, ARRAY_SIZE(kps));
	tap_unmap_probes_on = !err;
	if (err)
		pr_info_once("no kprobes on %s and the like (%d): a coarser generation of mappings\n",
			     tap_unmap_probes[0].symbol, err);
	return err;
}

static bool tap_unmap_probes_stop(void)
{
	struct kprobe *kps[ARRAY_SIZE(tap_unmap_probes)];
	unsigned int i;

	if (!tap_unmap_probes_on)
		return false;
	for (i = 0; i < ARRAY_SIZE(tap_unmap_probes); i++)
		kps[i] = &tap_unmap_probes[i].kp;
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	tap_unmap_probes_on = false;
	return true;
}
#else
static int tap_unmap_probes_start(void)
{
	return -ENOENT;
}

static bool tap_unmap_probes_stop(void)
{
	return false;
}
#endif

#if !defined(TAP_GEN_NATIVE) && \
	(defined(HAS_MMAP_LOCK_ACQUIRE_RETURNED_MEMCG_PATH) || \
	 defined(HAS_MMAP_LOCK_ACQUIRE_RETURNED_NO_MEMCG_PATH))
static struct tracepoint *tap_mmap_lock_tp;	/* attached; under the mutex */

/*
 * Every mmap write lock taken, in the taker's context: the bump is seen
 * before anything done under the lock.
 */
static inline void tap_mmap_locked(struct mm_struct *mm, bool write,
				   bool success)
{
	if (write && success)
		tap_mm_changing(mm);
}

#ifdef HAS_MMAP_LOCK_ACQUIRE_RETURNED_MEMCG_PATH
static void tap_probe_mmap_lock(void *data, struct mm_struct *mm,
				const char *memcg_path, bool write,
				bool success)
{
	tap_mmap_locked(mm, write, success);
}
#else
static void tap_probe_mmap_lock(void *data, struct mm_struct *mm, bool write,
				bool success)
{
	tap_mmap_locked(mm, write, success);
}
#endif

static void tap_find_mmap_lock_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "mmap_lock_acquire_returned"))
		*(struct tracepoint **)priv = tp;
}

/*
 * 0 and tap_mmap_lock_tp set, attached for the life of the store; or
 * -ENOENT: no such tracepoint (a kernel built without tracing); or
 * tracepoint_probe_register()'s error.
 */
static int tap_mmap_lock_tp_start(void)
{
	struct tracepoint *tp = NULL;
	int err;

	for_each_kernel_tracepoint(tap_find_mmap_lock_tp, &tp);
	if (!tp)
		return -ENOENT;
	err = tracepoint_probe_register(tp, tap_probe_mmap_lock, NULL);
	if (err) {
		pr_err("cannot attach to tracepoint mmap_lock_acquire_returned: %d\n",
		       err);
		return err;
	}
	tap_mmap_lock_tp = tp;
	return 0;
}

static void tap_mmap_lock_tp_stop(void)
{
	if (!tap_mmap_lock_tp)
		return;
	WARN_ON_ONCE(tracepoint_probe_unregister(tap_mmap_lock_tp,
						 tap_probe_mmap_lock, NULL));
	tracepoint_synchronize_unregister();
	tap_mmap_lock_tp = NULL;
}
#else
static inline void tap_mmap_lock_tp_stop(void)
{
}
#endif

/*
 * The generation of the store's life, the finest the kernel allows: the
 * removal kprobes; else the kernel's own; else the tracepoint. A kernel
 * with none makes stores that take tables but make no tokens
 * (-EOPNOTSUPP).
 */
static int tap_gen_start(struct tap_ustore *s)
{
	int __maybe_unused err;

	if (!tap_unmap_probes_start()) {
		WRITE_ONCE(tap_gen_counted, true);
		pr_info_once("mappings' generation: removals of code or files (kprobes)\n");
		s->gen_on = true;
		return 0;
	}
#ifdef TAP_GEN_NATIVE
	WRITE_ONCE(tap_gen_counted, false);
	pr_info_once("mappings' generation: " TAP_GEN_NATIVE "\n");
#else
	WRITE_ONCE(tap_gen_counted, true);
	err = tap_mmap_lock_tp_start();
	if (err == -ENOENT) {
		pr_warn_once("tracepoint mmap_lock_acquire_returned not found: no process mappings\n");
		return 0;
	}
	if (err)
		return err;
	pr_info_once("mappings' generation: every mmap write lock (tracepoint)\n");
#endif
	s->gen_on = true;
	return 0;
}

static void tap_gen_stop(struct tap_ustore *s)
{
	if (!tap_unmap_probes_stop())
		tap_mmap_lock_tp_stop();
	s->gen_on = false;
}

#else	/* no generation: no process mappings */

static inline u64 tap_mm_gen(struct mm_struct *mm)
{
	return 0;
}

static inline bool tap_gen_busy(u64 gen)
{
	return true;
}

static int tap_gen_start(struct tap_ustore *s)
{
	return 0;
}

static void tap_gen_stop(struct tap_ustore *s)
{
}

#endif

static inline u64 tap_mm_id(struct mm_struct *mm)
{
	return READ_ONCE(mm->context.ctx_id);
}

/* ------------------------------------------------------------ memory */

static u64 tap_utab_budget(void)
{
	u64 mib;

	rcu_read_lock_sched();
	mib = tap_config_sched()->unwind_mem_mib;
	rcu_read_unlock_sched();
	return mib << 20;
}

/* Charge @bytes about to be allocated: 0, or -ENOSPC beyond the budget. */
static int tap_utab_charge(size_t bytes)
{
	if ((u64)atomic64_add_return(bytes, &tap_utab_mem) > tap_utab_budget()) {
		atomic64_sub(bytes, &tap_utab_mem);
		return -ENOSPC;
	}
	return 0;
}

static void tap_utab_uncharge(size_t bytes)
{
	WARN_ON_ONCE(atomic64_sub_return(bytes, &tap_utab_mem) < 0);
}

/*
 * The allocations of uploads, out of line and named so that they can be
 * told apart in /proc/vmallocinfo (the leak check of the VM tests).
 */
static noinline void *tap_utab_kvmalloc(size_t bytes)
{
	return kvmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
}

/* ------------------------------------------------------------ tables */

static void tap_utab_free(struct tap_utab *t)
{
	kvfree(t->mem);
	tap_utab_uncharge(t->bytes);
	kfree(t);
}

static void tap_utab_put(const struct tap_utable *ut)
{
	struct tap_utab *t = container_of((struct tap_utable *)ut,
					  struct tap_utab, t);

	if (refcount_dec_and_test(&t->ref))
		tap_utab_free(t);
}

static u32 tap_bid_hash(const u8 *bid, u32 len)
{
	return jhash(bid, len, 0);
}

static struct tap_utab *tap_utab_by_bid(struct tap_ustore *s, const u8 *bid,
					u32 len)
{
	struct tap_utab *t;

	hash_for_each_possible(s->bids, t, by_bid, tap_bid_hash(bid, len))
		if (t->build_id_len == len && !memcmp(t->build_id, bid, len))
			return t;
	return NULL;
}

static bool tap_off_ok(s32 off)
{
	return off >= -TAPROOT_RULE_OFF_MAX && off <= TAPROOT_RULE_OFF_MAX;
}

/* One rule: known kinds, and the fields its kind does not use 0. */
static bool tap_rule_ok(const struct taproot_unwind_rule *r)
{
	if (r->reserved || r->kind >= TAPROOT_RULE_NR ||
	    r->rbp >= TAPROOT_RBP_NR || !tap_off_ok(r->cfa_off) ||
	    !tap_off_ok(r->ra_off) || !tap_off_ok(r->rbp_off))
		return false;
	if (r->kind == TAPROOT_RULE_PLT ? r->plt_thr > 15 : r->plt_thr)
		return false;
	if (r->rbp != TAPROOT_RBP_CFA && r->rbp_off)
		return false;
	switch (r->kind) {
	case TAPROOT_RULE_SP:
	case TAPROOT_RULE_FP:
	case TAPROOT_RULE_PLT:
		return true;
	default:	/* NONE, SIGNAL, END, SLOW: nothing but the kind */
		return !r->rbp && !r->cfa_off && !r->ra_off;
	}
}

/*
 * Copy @len bytes from user address @uptr to @dst in chunks, with a chance
 * to reschedule, and to give up for a fatal signal, between them.
 */
static int tap_copy_in(void *dst, u64 uptr, size_t len)
{
	const char __user *src = u64_to_user_ptr(uptr);
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = min_t(size_t, len - off, TAP_UTAB_CHUNK);
		if (copy_from_user((char *)dst + off, src + off, n))
			return -EFAULT;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/* Copy the arrays of @a into @t's memory and check them. */
static int tap_utab_fill(struct tap_utab *t, const struct taproot_table_add *a)
{
	struct taproot_unwind_rule *rules = t->mem;
	u32 *pcs = (u32 *)(rules + a->nr_rules);
	u16 *row_rules = (u16 *)(pcs + a->nr_rows);
	u32 i;
	int err;

	err = tap_copy_in(rules, a->rules, (size_t)a->nr_rules * sizeof(*rules));
	if (!err)
		err = tap_copy_in(pcs, a->pcs, (size_t)a->nr_rows * sizeof(*pcs));
	if (!err)
		err = tap_copy_in(row_rules, a->row_rules,
				  (size_t)a->nr_rows * sizeof(*row_rules));
	if (err)
		return err;

	for (i = 0; i < a->nr_rules; i++)
		if (!tap_rule_ok(&rules[i]))
			return -EINVAL;
	for (i = 0; i < a->nr_rows; i++) {
		if ((i && pcs[i] <= pcs[i - 1]) || row_rules[i] >= a->nr_rules)
			return -EINVAL;
		if (!(i & 0xffff))
			cond_resched();
	}
	/* Every row's address fits in 64 bits. */
	if (a->base > U64_MAX - pcs[a->nr_rows - 1])
		return -EINVAL;

	t->t = (struct tap_utable){
		.base = a->base,
		.nr_rows = a->nr_rows,
		.nr_rules = a->nr_rules,
		.pcs = pcs,
		.row_rules = row_rules,
		.rules = rules,
	};
	return 0;
}

/*
 * TAPROOT_IOC_TABLE_ADD. The request is checked whole, then the build ID
 * (EEXIST: the id is copied out before the error is returned), then the
 * budget, then the arrays are copied and checked; only a table that
 * passed everything, and whose id reached userspace, enters the store.
 */
static long tap_utab_table_add(struct tap_ustore *s,
			       struct taproot_table_add __user *uarg)
{
	struct taproot_table_add a;
	struct tap_utab *t;
	size_t mem, bytes;
	int err;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.reserved || !a.nr_rows || a.nr_rows > TAPROOT_TABLE_ROWS_MAX ||
	    !a.nr_rules || a.nr_rules > TAPROOT_TABLE_RULES_MAX ||
	    !a.build_id_len || a.build_id_len > TAPROOT_BUILD_ID_MAX ||
	    memchr_inv(a.build_id + a.build_id_len, 0,
		       TAPROOT_BUILD_ID_MAX - a.build_id_len))
		return -EINVAL;

	t = tap_utab_by_bid(s, a.build_id, a.build_id_len);
	if (t) {
		a.table_id = t->id;
		if (copy_to_user(uarg, &a, sizeof(a)))
			return -EFAULT;
		return -EEXIST;
	}

	/* rules, pcs, row_rules: within the limits, far from overflowing. */
	if (check_mul_overflow((size_t)a.nr_rows,
			       sizeof(u32) + sizeof(u16), &mem) ||
	    check_add_overflow(mem, (size_t)a.nr_rules *
			       sizeof(struct taproot_unwind_rule), &mem) ||
	    check_add_overflow(mem, sizeof(*t) + TAP_UTAB_INDEX_BYTES, &bytes))
		return -EINVAL;
	err = tap_utab_charge(bytes);
	if (err)
		return err;

	err = -ENOMEM;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		goto err_uncharge;
	t->mem = tap_utab_kvmalloc(mem);
	if (!t->mem)
		goto err_free;
	t->bytes = bytes;
	refcount_set(&t->ref, 1);
	t->build_id_len = a.build_id_len;
	memcpy(t->build_id, a.build_id, sizeof(t->build_id));

	err = tap_utab_fill(t, &a);
	if (err)
		goto err_free;
	t->t.uid = ++tap_utab_last_uid;

	err = xa_alloc_cyclic(&s->tables, &t->id, t, XA_LIMIT(1, INT_MAX),
			      &s->next_id, GFP_KERNEL);
	if (err < 0)
		goto err_free;
	a.table_id = t->id;
	if (copy_to_user(uarg, &a, sizeof(a))) {
		xa_erase(&s->tables, t->id);
		err = -EFAULT;
		goto err_free;
	}
	hash_add(s->bids, &t->by_bid, tap_bid_hash(t->build_id, t->build_id_len));
	atomic_inc(&tap_utab_tables);
	return 0;

err_free:
	kvfree(t->mem);
	kfree(t);
err_uncharge:
	tap_utab_uncharge(bytes);
	return err;
}

/* Take table @t out of the store: mappings may still hold it. */
static void tap_utab_remove(struct tap_ustore *s, struct tap_utab *t)
{
	xa_erase(&s->tables, t->id);
	hash_del(&t->by_bid);
	atomic_dec(&tap_utab_tables);
	tap_utab_put(&t->t);
}

/* TAPROOT_IOC_TABLE_DEL: ENOENT for an id not in the store. */
static long tap_utab_table_del(struct tap_ustore *s, u32 __user *uarg)
{
	struct tap_utab *t;
	u32 id;

	if (get_user(id, uarg))
		return -EFAULT;
	t = id ? xa_load(&s->tables, id) : NULL;
	if (!t)
		return -ENOENT;
	tap_utab_remove(s, t);
	return 0;
}

/* ------------------------------------------------------------ processes */

static struct hlist_head *tap_uproc_head(struct tap_ustore *s, u32 tgid)
{
	return &s->procs[siphash_1u32(tgid, &s->key) & (BIT(TAP_UPROC_BITS) - 1)];
}

/* Whether @tgid's chain has room for one more; under the mutex. */
static bool tap_uproc_room(struct tap_ustore *s, u32 tgid)
{
	struct tap_uproc *p;
	unsigned int n = 0;

	hlist_for_each_entry(p, tap_uproc_head(s, tgid), node)
		n++;
	return n < TAP_UPROC_CHAIN_MAX;
}

/* Under the mutex. */
static struct tap_uproc *tap_uproc_find(struct tap_ustore *s, u32 tgid)
{
	struct tap_uproc *p;

	hlist_for_each_entry(p, tap_uproc_head(s, tgid), node)
		if (p->tgid == tgid)
			return p;
	return NULL;
}

static void tap_uproc_free(struct tap_uproc *p)
{
	u32 i;

	for (i = 0; i < p->maps.nr; i++)
		if (p->map[i].table)
			tap_utab_put(p->map[i].table);
	tap_utab_uncharge(p->bytes);
	kvfree(p);
}

static void tap_uproc_free_rcu(struct rcu_head *rcu)
{
	tap_uproc_free(container_of(rcu, struct tap_uproc, rcu));
}

/* Unpublish @p; freed after a grace period. */
static void tap_uproc_remove(struct tap_ustore *s, struct tap_uproc *p)
{
	hlist_del_rcu(&p->node);
	s->nr_procs--;
	atomic_dec(&tap_utab_procs);
	call_rcu(&p->rcu, tap_uproc_free_rcu);
}

/*
 * The process @pid names, with a reference; ERR_PTR(-ESRCH) when there is
 * none (a thread id is not a process). @pid is global, of the initial pid
 * namespace, as every record and the TGID filter give pids: a consumer in
 * a pid namespace of its own uploads for the pids its records name.
 */
static struct task_struct *tap_utab_task(u32 pid)
{
	struct task_struct *t = NULL;

	if (pid <= PID_MAX_LIMIT) {
		rcu_read_lock();
		t = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_TGID);
		if (t)
			get_task_struct(t);
		rcu_read_unlock();
	}
	return t ?: ERR_PTR(-ESRCH);
}

/*
 * Whether each of the @nr sorted mappings @m lies within executable
 * mappings of @mm, with no gap: what the walker may read code from and
 * take pcs in. Under the mmap lock; visits each VMA once at most.
 */
static bool tap_umaps_exec(struct mm_struct *mm, const struct tap_umap *m, u32 nr)
{
	struct vm_area_struct *vma;
	unsigned long addr;
	u32 i;

	for (i = 0; i < nr; i++) {
		for (addr = m[i].start; addr < m[i].end; addr = vma->vm_end) {
			vma = find_vma(mm, addr);
			if (!vma || vma->vm_start > addr || !(vma->vm_flags & VM_EXEC))
				return false;
		}
	}
	return true;
}

/*
 * The address space of process @pid now: its identity and generation
 * (and the global tgid). With @m, also whether its @nr mappings lie in
 * the process's executable mappings (*@exec), read under the mmap lock
 * with the generation: a change that would make them so or not moves it.
 * -ESRCH: no such process, or it has exited; -EINVAL: a kernel thread;
 * -EINTR: killed while waiting for the lock.
 */
static int tap_utab_space(u32 pid, u32 *tgid, u64 *mm_id, u64 *gen,
			  const struct tap_umap *m, u32 nr, bool *exec)
{
	struct task_struct *t;
	struct mm_struct *mm;
	bool kthread;
	int err = 0;

	t = tap_utab_task(pid);
	if (IS_ERR(t))
		return PTR_ERR(t);
	*tgid = t->tgid;
	kthread = t->flags & PF_KTHREAD;
	mm = kthread ? NULL : get_task_mm(t);
	put_task_struct(t);
	if (!mm)
		return kthread ? -EINVAL : -ESRCH;
	*mm_id = tap_mm_id(mm);
	if (!m) {
		*gen = tap_mm_gen(mm);
	} else if (mmap_read_lock_killable(mm)) {
		err = -EINTR;
	} else {
		*gen = tap_mm_gen(mm);
		*exec = tap_umaps_exec(mm, m, nr);
		mmap_read_unlock(mm);
	}
	mmput(mm);
	return err;
}

static u64 tap_utab_token(const struct tap_ustore *s, u32 tgid, u64 mm_id,
			  u64 gen)
{
	return siphash_3u64(tgid, mm_id, gen, &s->key);
}

/* TAPROOT_IOC_PROC_TOKEN */
static long tap_utab_proc_token(struct tap_ustore *s,
				struct taproot_proc_token __user *uarg)
{
	struct taproot_proc_token a;
	u64 mm_id, gen;
	u32 tgid;
	int err;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.reserved || !a.pid)
		return -EINVAL;
	if (!s->gen_on)
		return -EOPNOTSUPP;
	err = tap_utab_space(a.pid, &tgid, &mm_id, &gen, NULL, 0, NULL);
	if (err)
		return err;
	a.token = tap_utab_token(s, tgid, mm_id, gen);
	return copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : 0;
}

/* Forget process @pid (MAPS_SET with nr 0), even if it is gone. */
static long tap_uproc_forget(struct tap_ustore *s, u32 pid)
{
	struct task_struct *t = tap_utab_task(pid);
	struct tap_uproc *p = NULL;
	unsigned int b;

	if (!IS_ERR(t)) {
		p = tap_uproc_find(s, t->tgid);
		put_task_struct(t);
	} else {
		/* Gone: by the number it was set with (bounded by the procs). */
		for (b = 0; b < ARRAY_SIZE(s->procs) && !p; b++)
			hlist_for_each_entry(p, &s->procs[b], node)
				if (p->upid == pid)
					break;
	}
	if (p)
		tap_uproc_remove(s, p);
	return 0;
}

/* Take a reference to each table @p's mappings use. */
static void tap_umaps_get(struct tap_uproc *p)
{
	u32 i;

	for (i = 0; i < p->maps.nr; i++)
		if (p->map[i].table)
			refcount_inc(&container_of((struct tap_utable *)p->map[i].table,
						   struct tap_utab, t)->ref);
}

/* Check @nr mappings and point them at their tables (no reference yet). */
static int tap_umaps_check(struct tap_ustore *s,
			   const struct taproot_proc_map *in, u32 nr,
			   struct tap_umap *out)
{
	struct tap_utab *t;
	u32 i;

	for (i = 0; i < nr; i++) {
		if (in[i].start >= in[i].end ||
		    (i && in[i].start < in[i - 1].end) ||
		    (in[i].flags & ~TAPROOT_MAP_F_FP))
			return -EINVAL;
		if (in[i].flags & TAPROOT_MAP_F_FP) {
			if (in[i].table_id || in[i].bias)
				return -EINVAL;
			t = NULL;
		} else {
			t = in[i].table_id ? xa_load(&s->tables, in[i].table_id) : NULL;
			if (!t)
				return in[i].table_id ? -ENOENT : -EINVAL;
		}
		out[i] = (struct tap_umap){
			.start = in[i].start,
			.end = in[i].end,
			.bias = in[i].bias,
			.table = t ? &t->t : NULL,
		};
	}
	return 0;
}

/* TAPROOT_IOC_MAPS_SET */
static long tap_utab_maps_set(struct tap_ustore *s,
			      struct taproot_maps_set __user *uarg)
{
	struct taproot_proc_map *in = NULL;
	struct tap_uproc *p, *old;
	struct taproot_maps_set a;
	size_t bytes;
	u64 mm_id, gen;
	u32 tgid;
	bool exec;
	int err;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!a.pid || a.nr > TAPROOT_MAPS_MAX)
		return -EINVAL;
	if (!a.nr)
		return tap_uproc_forget(s, a.pid);
	if (!s->gen_on)
		return -EOPNOTSUPP;

	bytes = struct_size(p, map, a.nr);
	err = tap_utab_charge(bytes);
	if (err)
		return err;
	err = -ENOMEM;
	p = tap_utab_kvmalloc(bytes);
	in = kvmalloc_array(a.nr, sizeof(*in), GFP_KERNEL);
	if (!p || !in)
		goto err;
	err = tap_copy_in(in, a.maps, (size_t)a.nr * sizeof(*in));
	if (err)
		goto err;
	err = tap_umaps_check(s, in, a.nr, p->map);
	if (err)
		goto err;

	err = tap_utab_space(a.pid, &tgid, &mm_id, &gen, p->map, a.nr, &exec);
	if (err)
		goto err;
	/* Not the maps the token was for, or not code the process runs now. */
	if (tap_gen_busy(gen) || tap_utab_token(s, tgid, mm_id, gen) != a.token || !exec) {
		err = -ESTALE;
		goto err;
	}
	old = tap_uproc_find(s, tgid);
	if (!old && (s->nr_procs >= TAPROOT_PROCS_MAX || !tap_uproc_room(s, tgid))) {
		err = -ENOSPC;
		goto err;
	}
	kvfree(in);

	p->tgid = tgid;
	p->upid = a.pid;
	p->mm_id = mm_id;
	p->gen = gen;
	p->bytes = bytes;
	p->maps.nr = a.nr;
	p->maps.map = p->map;
	/* The runtimes are the address space's: kept until an exec. */
	p->maps.py = NULL;
	p->maps.jvm = NULL;
	if (old && old->mm_id == mm_id) {
		p->py = old->py;
		p->maps.py = old->maps.py ? &p->py : NULL;
		p->jvm = old->jvm;
		p->maps.jvm = old->maps.jvm ? &p->jvm : NULL;
	}
	tap_umaps_get(p);
	if (old) {
		hlist_replace_rcu(&old->node, &p->node);
		call_rcu(&old->rcu, tap_uproc_free_rcu);
	} else {
		hlist_add_head_rcu(&p->node, tap_uproc_head(s, tgid));
		s->nr_procs++;
		atomic_inc(&tap_utab_procs);
	}
	return 0;

err:
	kvfree(in);
	kvfree(p);
	tap_utab_uncharge(bytes);
	return err;
}

/*
 * TAPROOT_IOC_PYTHON_SET and TAPROOT_IOC_JVM_SET: a copy of the process's
 * entry with the runtime's layout (@py or @jvm, the one not NULL; @forget:
 * without it) replaces it, as MAPS_SET replaces one, so that a sample
 * handler sees either whole. The caller checked the layout.
 */
static long tap_utab_runtime_set(struct tap_ustore *s, u32 pid, u32 forget, u64 token,
				 const struct taproot_python_layout *py,
				 const struct taproot_jvm_layout *jvm)
{
	struct tap_uproc *p, *old;
	u64 mm_id, gen;
	u32 tgid;
	int err;

	if (!s->gen_on)
		return -EOPNOTSUPP;
	err = tap_utab_space(pid, &tgid, &mm_id, &gen, NULL, 0, NULL);
	if (err)
		return err;
	old = tap_uproc_find(s, tgid);
	if (!old)
		return -ENOENT;
	if (!forget && (old->mm_id != mm_id || tap_gen_busy(gen) ||
			tap_utab_token(s, tgid, mm_id, gen) != token))
		return -ESTALE;

	err = tap_utab_charge(old->bytes);
	if (err)
		return err;
	p = tap_utab_kvmalloc(old->bytes);
	if (!p) {
		tap_utab_uncharge(old->bytes);
		return -ENOMEM;
	}
	memcpy(p, old, old->bytes);
	p->maps.map = p->map;
	p->maps.py = old->maps.py ? &p->py : NULL;
	p->maps.jvm = old->maps.jvm ? &p->jvm : NULL;
	if (py) {
		p->py = *py;
		p->maps.py = forget ? NULL : &p->py;
	}
	if (jvm) {
		p->jvm = *jvm;
		p->maps.jvm = forget ? NULL : &p->jvm;
	}
	tap_umaps_get(p);
	hlist_replace_rcu(&old->node, &p->node);
	call_rcu(&old->rcu, tap_uproc_free_rcu);
	return 0;
}

static long tap_utab_python_set(struct tap_ustore *s,
				struct taproot_python_set __user *uarg)
{
	struct taproot_python_set a;

	/* The layout steers reads of any of the process's memory: see the ABI. */
	if (!perfmon_capable())
		return -EPERM;
	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!a.pid || a.forget > 1 || (!a.forget && !tap_pylayout_ok(&a.layout)))
		return -EINVAL;
	return tap_utab_runtime_set(s, a.pid, a.forget, a.token, &a.layout, NULL);
}

static long tap_utab_jvm_set(struct tap_ustore *s, struct taproot_jvm_set __user *uarg)
{
	struct taproot_jvm_set a;

	/* As the CPython layout: see the ABI. */
	if (!perfmon_capable())
		return -EPERM;
	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!a.pid || a.forget > 1 || (!a.forget && !tap_jvlayout_ok(&a.layout)))
		return -EINVAL;
	return tap_utab_runtime_set(s, a.pid, a.forget, a.token, NULL, &a.layout);
}

/* ------------------------------------------------------------ the store */

static struct tap_ustore *tap_ustore_new(void)
{
	struct tap_ustore *s;
	int err;

	err = tap_utab_charge(sizeof(*s));
	if (err)
		return ERR_PTR(err);
	s = kvzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s) {
		tap_utab_uncharge(sizeof(*s));
		return ERR_PTR(-ENOMEM);
	}
	get_random_bytes(&s->key, sizeof(s->key));
	xa_init_flags(&s->tables, XA_FLAGS_ALLOC1);
	hash_init(s->bids);
	/* procs[]: zeroed heads are empty lists. */
	err = tap_gen_start(s);
	if (err) {
		kvfree(s);
		tap_utab_uncharge(sizeof(*s));
		return ERR_PTR(err);
	}
	return s;
}

/* The store of @file, made at its first ioctl; under the mutex. */
static struct tap_ustore *tap_ustore_get(struct file *file)
{
	struct tap_ustore *s = file->private_data;

	if (s)
		return s;
	s = tap_ustore_new();
	if (IS_ERR(s))
		return s;
	file->private_data = s;
	/* One consumer at a time (dev.c): no other store is published. */
	WARN_ON_ONCE(rcu_access_pointer(tap_utab_cur));
	rcu_assign_pointer(tap_utab_cur, s);
	return s;
}

long tap_utab_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct tap_ustore *s;
	long ret;

	switch (cmd) {
	case TAPROOT_IOC_TABLE_ADD:
	case TAPROOT_IOC_TABLE_DEL:
	case TAPROOT_IOC_PROC_TOKEN:
	case TAPROOT_IOC_MAPS_SET:
	case TAPROOT_IOC_PYTHON_SET:
	case TAPROOT_IOC_JVM_SET:
		break;
	default:
		return -ENOTTY;
	}

	if (mutex_lock_killable(&tap_utab_mutex))
		return -EINTR;
	s = tap_ustore_get(file);
	if (IS_ERR(s)) {
		ret = PTR_ERR(s);
		goto out;
	}
	switch (cmd) {
	case TAPROOT_IOC_TABLE_ADD:
		ret = tap_utab_table_add(s, uarg);
		break;
	case TAPROOT_IOC_TABLE_DEL:
		ret = tap_utab_table_del(s, uarg);
		break;
	case TAPROOT_IOC_PROC_TOKEN:
		ret = tap_utab_proc_token(s, uarg);
		break;
	case TAPROOT_IOC_PYTHON_SET:
		ret = tap_utab_python_set(s, uarg);
		break;
	case TAPROOT_IOC_JVM_SET:
		ret = tap_utab_jvm_set(s, uarg);
		break;
	default:
		ret = tap_utab_maps_set(s, uarg);
		break;
	}
out:
	mutex_unlock(&tap_utab_mutex);
	return ret;
}

void tap_utab_release(struct file *file)
{
	struct tap_ustore *s = file->private_data;
	struct hlist_node *tmp;
	struct tap_uproc *p;
	struct tap_utab *t;
	unsigned long id;
	unsigned int b;

	if (!s)
		return;
	mutex_lock(&tap_utab_mutex);
	RCU_INIT_POINTER(tap_utab_cur, NULL);
	tap_gen_stop(s);
	/* No handler sees the store now; replaced mappings are freed. */
	synchronize_rcu();
	rcu_barrier();

	for (b = 0; b < ARRAY_SIZE(s->procs); b++) {
		hlist_for_each_entry_safe(p, tmp, &s->procs[b], node) {
			hlist_del(&p->node);
			atomic_dec(&tap_utab_procs);
			tap_uproc_free(p);
		}
	}
	xa_for_each(&s->tables, id, t)
		tap_utab_remove(s, t);
	xa_destroy(&s->tables);
	kvfree(s);
	tap_utab_uncharge(sizeof(*s));
	file->private_data = NULL;
	mutex_unlock(&tap_utab_mutex);
}

/* ------------------------------------------------------------ lookup */

/* Under RCU-sched; at most TAP_UPROC_CHAIN_MAX entries read. */
static const struct tap_uproc *tap_uproc_lookup(struct tap_ustore *s, u32 tgid)
{
	struct hlist_node *n;
	unsigned int i = 0;

	for (n = rcu_dereference_sched(hlist_first_rcu(tap_uproc_head(s, tgid)));
	     n && i < TAP_UPROC_CHAIN_MAX; n = rcu_dereference_sched(hlist_next_rcu(n)), i++) {
		const struct tap_uproc *p = hlist_entry(n, struct tap_uproc, node);

		if (p->tgid == tgid)
			return p;
	}
	return NULL;
}

/*
 * What was uploaded for @task's process, in whichever address space, and
 * *@mm, @task's; NULL: nothing (or no mm). For the lookups below.
 */
static const struct tap_uproc *tap_utab_proc(struct task_struct *task,
					     struct mm_struct **mm)
{
	struct tap_ustore *s = rcu_dereference_sched(tap_utab_cur);

	*mm = READ_ONCE(task->mm);
	return s && *mm ? tap_uproc_lookup(s, task->tgid) : NULL;
}

const struct tap_umaps *tap_utab_lookup(struct task_struct *task, u8 *why)
{
	struct mm_struct *mm;
	const struct tap_uproc *p = tap_utab_proc(task, &mm);

	if (!p) {
		*why = TAPROOT_KUNWIND_NO_PROC;
		return NULL;
	}
	if (p->mm_id != tap_mm_id(mm) || p->gen != tap_mm_gen(mm)) {
		*why = TAPROOT_KUNWIND_STALE;
		return NULL;
	}
	return &p->maps;
}

const struct taproot_python_layout *tap_utab_python(struct task_struct *task)
{
	struct mm_struct *mm;
	const struct tap_uproc *p = tap_utab_proc(task, &mm);

	/* The address space, not the generation: see the header. */
	return p && p->mm_id == tap_mm_id(mm) ? p->maps.py : NULL;
}

bool tap_utab_unchanged(struct task_struct *task, const struct tap_umaps *maps)
{
	const struct tap_uproc *p = container_of(maps, struct tap_uproc, maps);
	struct mm_struct *mm = READ_ONCE(task->mm);

	/* The walk's reads of user memory come before the generation's. */
	smp_rmb();
	return mm && p->gen == tap_mm_gen(mm);
}

void tap_utab_get_stats(struct tap_utab_stats *st)
{
	st->mem_used = atomic64_read(&tap_utab_mem);
	st->tables = atomic_read(&tap_utab_tables);
	st->procs = atomic_read(&tap_utab_procs);
}
