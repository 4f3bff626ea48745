/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * taproot: sampling profiler ABI shared by taproot.ko and its userspace.
 *
 * This file is the only definition of the interface. The kernel module and
 * the userspace library both include it, and both compile the size and offset
 * assertions at its end, so a layout change breaks the build, not a user.
 *
 * ------------------------------------------------------------------------
 * Generic netlink family "taproot" (TAPROOT_GENL_NAME), version 1
 * ------------------------------------------------------------------------
 *
 * Every command needs CAP_PERFMON or CAP_SYS_ADMIN in the initial user
 * namespace; the module checks this itself (GENL_ADMIN_PERM would test
 * CAP_NET_ADMIN, which says nothing about the right to read other processes'
 * stacks). Attributes are validated strictly: unknown attributes, values out
 * of range and unknown flag bits are refused with an extended-ACK message that
 * points at the attribute, and a refused request changes nothing.
 *
 * TAPROOT_CMD_GET_INFO        (request: no attributes)
 *   reply:
 *     TAPROOT_A_ABI_VERSION      u32  TAPROOT_ABI_VERSION of the module
 *     TAPROOT_A_NR_CPUS          u32  nr_cpu_ids: rings are indexed by CPU
 *                                     number, 0..NR_CPUS-1; a number that
 *                                     is not a possible CPU has no ring
 *     TAPROOT_A_KERNEL_RELEASE   string, utsname release the module runs on
 *     TAPROOT_A_FEATURES         u64  TAPROOT_FEAT_* the module provides
 *     TAPROOT_A_RUNNING          u8   1 while sampling is started
 *     TAPROOT_A_PAGE_SIZE        u32  kernel page size (mmap unit)
 *
 * TAPROOT_CMD_SET_CONFIG      (only the attributes given change)
 *     TAPROOT_A_CFG_FREQ_HZ      u32  1..TAPROOT_FREQ_MAX samples/s per CPU
 *     TAPROOT_A_CFG_KSTACK_DEPTH u32  0..TAPROOT_KSTACK_MAX kernel frames
 *     TAPROOT_A_CFG_USTACK_BYTES u32  0..TAPROOT_USTACK_MAX, multiple of 8
 *     TAPROOT_A_CFG_EVENTS       u32  TAPROOT_EV_* mask of record kinds on
 *     TAPROOT_A_CFG_FLAGS        u32  TAPROOT_CFG_F_* mask
 *     TAPROOT_A_CFG_RING_PAGES   u32  data pages per CPU ring, power of two,
 *                                     TAPROOT_RING_PAGES_MIN..._MAX; only
 *                                     while stopped and no ring is mapped
 *     TAPROOT_A_CFG_WATERMARK    u32  bytes in a ring that wake poll();
 *                                     1..data size
 *     TAPROOT_A_CFG_TGIDS        nest of TAPROOT_A_CFG_TGID u32 (repeated),
 *                                     at most TAPROOT_MAX_TGIDS; an empty
 *                                     nest means the whole system
 *     TAPROOT_A_CFG_SCHED_ONE_IN u32  1..TAPROOT_SCHED_ONE_IN_MAX: one
 *                                     off-CPU interval in N is selected for
 *                                     capture (see "Causal events" below)
 *   While running, FREQ_HZ and RING_PAGES are refused (-EBUSY), and so is
 *   an EVENTS mask that turns on a causal event kind (SWITCH..EXIT) that was
 *   off at START (its tracepoint is not attached); the other attributes,
 *   and turning kinds off, are applied atomically between two records.
 *   reply: none (ACK). Multicast: TAPROOT_NOTIFY_CONFIG.
 *
 * TAPROOT_CMD_GET_CONFIG      (request: no attributes)
 *   reply: every TAPROOT_A_CFG_* attribute above, with its current value.
 *
 * TAPROOT_CMD_START / TAPROOT_CMD_STOP   (request: no attributes)
 *   START resets nothing: ring positions and counters are cumulative for the
 *   life of the module. -EALREADY when already in the requested state.
 *   reply: none (ACK). Multicast: TAPROOT_NOTIFY_STARTED / _STOPPED.
 *
 * TAPROOT_CMD_GET_STATS       (request: no attributes)
 *   reply:
 *     TAPROOT_A_RUNNING          u8
 *     TAPROOT_A_STATS_CPU        nest, one per possible CPU:
 *       TAPROOT_A_STAT_CPU          u32  CPU number
 *       TAPROOT_A_STAT_SAMPLES      u64  timer ticks that passed the filters
 *       TAPROOT_A_STAT_RECORDS      u64  records written to the ring
 *       TAPROOT_A_STAT_BYTES        u64  bytes written to the ring
 *       TAPROOT_A_STAT_LOST_FULL    u64  records lost: ring full
 *       TAPROOT_A_STAT_LOST_NESTED  u64  records lost: writers nested too deep
 *       TAPROOT_A_STAT_USTACK_FAULTS u64 samples whose user stack copy
 *                                        faulted (TAPROOT_SAMPLE_F_USTACK_FAULT;
 *                                        never a copy cut to fit the ring)
 *       TAPROOT_A_STAT_SWITCHES     u64  switch-outs of filtered tasks that
 *                                        left the CPU (blocked or preempted)
 *       TAPROOT_A_STAT_SWITCHES_SELECTED u64 of those, selected for capture
 *       TAPROOT_A_STAT_WAKINGS      u64  WAKING records written
 *
 * Multicast group "session" (TAPROOT_MCGRP_SESSION): TAPROOT_CMD_NOTIFY with
 *     TAPROOT_A_NOTIFY           u32  TAPROOT_NOTIFY_*
 *     TAPROOT_A_RUNNING          u8   state after the change
 *
 * ------------------------------------------------------------------------
 * The rings: /dev/taproot
 * ------------------------------------------------------------------------
 *
 * One ring per possible CPU. Opening needs the same privilege as netlink,
 * and /dev/taproot has one consumer at a time: a second open fails with
 * EBUSY until the first file is closed and all its mappings are gone (two
 * readers would race on data_tail). The consumer's own process is never
 * sampled. Open it O_RDWR. Ring N is mapped at file offset TAPROOT_MMAP_OFFSET(N)
 * and has three parts, each page aligned (P = page size, D = data size):
 *
 *   offset  0      P          2P                 2P+D               2P+2D
 *           +------+----------+------------------+------------------+
 *           | cons | producer | data             | data again       |
 *           | (rw) | (ro)     | (ro)             | (same pages, ro) |
 *           +------+----------+------------------+------------------+
 *
 * The data pages are mapped twice back to back, so a record that wraps past
 * the end of the data area is still contiguous in memory: a reader never
 * copies or splits. Only the consumer page may be mapped writable; any
 * writable mapping that reaches past it fails with EPERM, and read-only
 * mappings cannot be made writable later (mprotect fails with EACCES). No
 * page may be executable: PROT_EXEC fails with EPERM, mprotect with EACCES.
 * Mappings must be MAP_SHARED, must not extend beyond 2P+2D, and name a
 * possible CPU (else EINVAL); they are not inherited across fork and cannot
 * be grown by mremap. A typical reader maps [0, P) read-write and
 * [P, 2P+2D) read-only.
 *
 * Positions are free-running u64 byte counts; the offset of position x in
 * the data area is x & (D - 1). data_head is where the producer will write
 * next; data_tail is where the consumer will read next. Bytes in
 * [data_tail, data_head) hold complete records.
 *
 * Ordering (the labels are repeated where each side does it):
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
 *
 * A reader must: validate every header (size >= sizeof(header), size a
 * multiple of 8, size <= head - tail) before using a record; treat a record
 * of unknown type as opaque and skip it by its size; never trust a length
 * field inside a record without checking it against the record's size.
 *
 * Loss is never silent: when a record cannot be written, the counter of its
 * cause in the producer page grows, and the next record that can be written
 * on that CPU is preceded by a TAPROOT_REC_LOST record with the count (and
 * that record's timestamp). Losses still pending when sampling stops are
 * only in lost[]. A data_tail outside [data_head - D, data_head] is a
 * consumer bug: the kernel then writes nothing to that ring and counts every
 * record as lost (TAPROOT_LOST_FULL) until the tail is sane again.
 *
 * Causal events (TAPROOT_FEAT_SCHED_EVENTS, TAPROOT_FEAT_PROC_EVENTS) come
 * from the scheduler's tracepoints and share the rings with the samples,
 * each on the CPU where it happened; merge the rings by time_ns.
 *
 * Off-CPU intervals. A task's off-CPU interval starts when it is switched
 * out while blocked or preempted (not when it yields to nobody) and ends
 * when it is next switched in. Each interval is named by (tid, seq), where
 * seq is the task's count of context switches (nvcsw + nivcsw) just after
 * it was switched out: the switch-out, the waking and the switch-in of one
 * interval carry the same seq, so a consumer joins them by (tid, seq) and
 * never by adjacency, whatever was lost in between. One race: a waker on
 * another CPU can wake the target after the target was taken off the run
 * queue but before its switch-out counted; that WAKING carries the seq of
 * the target's previous interval, comes after that interval's switch-in,
 * and belongs to the interval whose switch-out follows it.
 *
 * Selection. Capturing stacks at every switch would cost too much, so one
 * interval in N (TAPROOT_A_CFG_SCHED_ONE_IN) is selected, by a hash of
 * (tid, seq): every CPU takes the same decision for the same interval
 * without shared state. Only selected intervals produce records: the
 * SWITCH that starts one carries the blocked task's stacks, the WAKING that
 * ends its sleep carries the waker's stacks, and the SWITCH that ends it
 * marks the switch-in. Totals scaled by N (sched_one_in, in each SWITCH
 * record) are unbiased estimates of the whole. A SWITCH record may thus
 * describe a switch-out (TAPROOT_SWITCH_F_PREV), a switch-in
 * (TAPROOT_SWITCH_F_NEXT) or both.
 *
 * Filters: causal events follow the TGID filter (the blocked task, the
 * woken task, the forking parent, the exec'ing or exiting task must pass;
 * a waker need not), and the consumer's own process is never recorded.
 *
 * poll() on an open /dev/taproot is level-triggered: POLLIN while any ring
 * holds at least the watermark of unread bytes (default: half the data
 * area), or holds bytes that were already unread at the last tick of a
 * 100 ms timer, so a trickle of records arrives within about one tick.
 */
#ifndef _UAPI_LINUX_TAPROOT_H
#define _UAPI_LINUX_TAPROOT_H

#include <linux/types.h>

#define TAPROOT_GENL_NAME	"taproot"
#define TAPROOT_GENL_VERSION	1
#define TAPROOT_MCGRP_SESSION	"session"
#define TAPROOT_DEVICE_NAME	"taproot"	/* /dev/taproot */

/*
 * Bumped on any incompatible change to this file. Userspace refuses to talk
 * to a module whose ABI version differs from the one it was built with.
 */
#define TAPROOT_ABI_VERSION	1

/* Limits and defaults of the configuration. */
#define TAPROOT_FREQ_MAX		1000
#define TAPROOT_FREQ_DEFAULT		19	/* as Parca: off-beat with 10 ms ticks */
#define TAPROOT_KSTACK_MAX		127	/* as PERF_MAX_STACK_DEPTH */
#define TAPROOT_KSTACK_DEFAULT		127
#define TAPROOT_USTACK_MAX		65536
#define TAPROOT_USTACK_DEFAULT		8192	/* as perf --call-graph dwarf */
/*
 * A user stack copy from the stack the process started on ends this many
 * bytes above mm->start_stack (where exec left argc; what lies above is
 * argv, envp and the auxiliary vector, never a frame): the
 * TAPROOT_SAMPLE_F_USTACK_TOP and TAPROOT_SNAP_F_USTACK_TOP flags.
 */
#define TAPROOT_USTACK_TOP_SLACK	64
#define TAPROOT_RING_PAGES_MIN		2
#define TAPROOT_RING_PAGES_MAX		16384	/* 64 MiB per CPU with 4 KiB pages */
#define TAPROOT_RING_PAGES_DEFAULT	256	/* 1 MiB per CPU */
#define TAPROOT_MAX_TGIDS		64
#define TAPROOT_SCHED_ONE_IN_MAX	65536
#define TAPROOT_SCHED_ONE_IN_DEFAULT	1	/* every off-CPU interval */
#define TAPROOT_EXEC_FILENAME_MAX	256	/* bytes kept, NUL included */

enum taproot_cmd {
	TAPROOT_CMD_UNSPEC,
	TAPROOT_CMD_GET_INFO,
	TAPROOT_CMD_SET_CONFIG,
	TAPROOT_CMD_GET_CONFIG,
	TAPROOT_CMD_START,
	TAPROOT_CMD_STOP,
	TAPROOT_CMD_GET_STATS,
	TAPROOT_CMD_NOTIFY,	/* multicast only */
	__TAPROOT_CMD_MAX
};
#define TAPROOT_CMD_MAX (__TAPROOT_CMD_MAX - 1)

enum taproot_attr {
	TAPROOT_A_UNSPEC,
	TAPROOT_A_ABI_VERSION,		/* u32 */
	TAPROOT_A_NR_CPUS,		/* u32 */
	TAPROOT_A_KERNEL_RELEASE,	/* string */
	TAPROOT_A_FEATURES,		/* u64, TAPROOT_FEAT_* */
	TAPROOT_A_RUNNING,		/* u8 */
	TAPROOT_A_PAGE_SIZE,		/* u32 */
	TAPROOT_A_CFG_FREQ_HZ,		/* u32 */
	TAPROOT_A_CFG_KSTACK_DEPTH,	/* u32 */
	TAPROOT_A_CFG_USTACK_BYTES,	/* u32 */
	TAPROOT_A_CFG_EVENTS,		/* u32, TAPROOT_EV_* */
	TAPROOT_A_CFG_FLAGS,		/* u32, TAPROOT_CFG_F_* */
	TAPROOT_A_CFG_RING_PAGES,	/* u32 */
	TAPROOT_A_CFG_WATERMARK,	/* u32 */
	TAPROOT_A_CFG_TGIDS,		/* nest of TAPROOT_A_CFG_TGID */
	TAPROOT_A_CFG_TGID,		/* u32, inside TAPROOT_A_CFG_TGIDS */
	TAPROOT_A_STATS_CPU,		/* nest of TAPROOT_A_STAT_* */
	TAPROOT_A_NOTIFY,		/* u32, TAPROOT_NOTIFY_* */
	TAPROOT_A_PAD,
	TAPROOT_A_CFG_SCHED_ONE_IN,	/* u32 */
	__TAPROOT_A_MAX
};
#define TAPROOT_A_MAX (__TAPROOT_A_MAX - 1)

enum taproot_stat_attr {
	TAPROOT_A_STAT_UNSPEC,
	TAPROOT_A_STAT_CPU,		/* u32 */
	TAPROOT_A_STAT_SAMPLES,		/* u64 */
	TAPROOT_A_STAT_RECORDS,		/* u64 */
	TAPROOT_A_STAT_BYTES,		/* u64 */
	TAPROOT_A_STAT_LOST_FULL,	/* u64 */
	TAPROOT_A_STAT_LOST_NESTED,	/* u64 */
	TAPROOT_A_STAT_USTACK_FAULTS,	/* u64 */
	TAPROOT_A_STAT_PAD,
	TAPROOT_A_STAT_SWITCHES,	/* u64 */
	TAPROOT_A_STAT_SWITCHES_SELECTED, /* u64 */
	TAPROOT_A_STAT_WAKINGS,		/* u64 */
	__TAPROOT_A_STAT_MAX
};
#define TAPROOT_A_STAT_MAX (__TAPROOT_A_STAT_MAX - 1)

enum taproot_notify {
	TAPROOT_NOTIFY_STARTED = 1,
	TAPROOT_NOTIFY_STOPPED,
	TAPROOT_NOTIFY_CONFIG,
};

/* TAPROOT_A_FEATURES: what this build of the module provides. */
#define TAPROOT_FEAT_SAMPLING		(1ULL << 0)	/* timer samples */
#define TAPROOT_FEAT_KSTACK		(1ULL << 1)	/* kernel stacks */
#define TAPROOT_FEAT_USTACK		(1ULL << 2)	/* user regs + stack */
#define TAPROOT_FEAT_SCHED_EVENTS	(1ULL << 3)	/* switch, waking */
#define TAPROOT_FEAT_PROC_EVENTS	(1ULL << 4)	/* fork, exec, exit */
#define TAPROOT_FEAT_PREEMPT_RT		(1ULL << 5)	/* kernel is PREEMPT_RT */

/* TAPROOT_A_CFG_EVENTS: which record kinds are produced. */
#define TAPROOT_EV_SAMPLE	(1U << 0)
#define TAPROOT_EV_SWITCH	(1U << 1)
#define TAPROOT_EV_WAKING	(1U << 2)
#define TAPROOT_EV_FORK		(1U << 3)
#define TAPROOT_EV_EXEC		(1U << 4)
#define TAPROOT_EV_EXIT		(1U << 5)
#define TAPROOT_EV_ALL		((1U << 6) - 1)

/* TAPROOT_A_CFG_FLAGS */
#define TAPROOT_CFG_F_SAMPLE_IDLE	(1U << 0)	/* sample the idle task too */
#define TAPROOT_CFG_F_ALL		((1U << 1) - 1)

/* ---------------------------------------------------------------- rings */

/* File offset of ring @cpu's mapping window. */
#define TAPROOT_MMAP_CPU_SHIFT	32
#define TAPROOT_MMAP_OFFSET(cpu) ((__u64)(cpu) << TAPROOT_MMAP_CPU_SHIFT)

/* Page 0 of a ring's window: the only page userspace may write. */
struct taproot_ring_consumer {
	__u64 data_tail;	/* next byte the consumer reads; it alone writes */
};

/* Causes of loss, indexes into taproot_ring_producer.lost[]. */
enum taproot_lost_cause {
	TAPROOT_LOST_FULL,	/* no room: the consumer is behind */
	TAPROOT_LOST_NESTED,	/* too many writers nested on one CPU */
	TAPROOT_LOST_NR = 4	/* room for causes added later */
};

/* Page 1 of a ring's window: written by the kernel only. */
struct taproot_ring_producer {
	__u32 abi_version;	/* TAPROOT_ABI_VERSION */
	__u32 cpu;		/* CPU this ring belongs to */
	__u32 page_size;	/* unit of the layout */
	__u32 data_offset;	/* offset of the data area in the window: 2P */
	__u64 data_size;	/* D: bytes, a power of two */
	__u64 reserved0[5];	/* pads the read-mostly line to 64 bytes */

	/* Written on every record; on its own cache line. */
	__u64 data_head;	/* next byte the producer writes */
	__u64 lost[TAPROOT_LOST_NR];	/* cumulative records lost, by cause */
	__u64 records;		/* cumulative records written */
	__u64 reserved1[2];
};

/* ---------------------------------------------------------------- records */

/*
 * Every record starts with this header and is padded to a multiple of 8
 * bytes; size includes the header and the padding.
 */
struct taproot_rec_header {
	__u32 size;
	__u16 type;		/* TAPROOT_REC_* */
	__u16 flags;		/* per type */
	__u64 time_ns;		/* CLOCK_MONOTONIC, comparable across CPUs */
};

enum taproot_rec_type {
	TAPROOT_REC_SAMPLE = 1,
	TAPROOT_REC_LOST,
	TAPROOT_REC_SWITCH,
	TAPROOT_REC_WAKING,
	TAPROOT_REC_FORK,
	TAPROOT_REC_EXEC,
	TAPROOT_REC_EXIT,
};

/*
 * x86-64 user general registers, as the task had them when it was
 * interrupted or when it last entered the kernel: enough for any DWARF CFI
 * rule to refer to.
 */
struct taproot_user_regs {
	__u64 ax, bx, cx, dx, si, di, bp, sp;
	__u64 r8, r9, r10, r11, r12, r13, r14, r15;
	__u64 ip, flags;
};

/*
 * Stacks. A sample and a causal event's snapshot (struct taproot_stack_snap)
 * capture a task's stacks the same way, and their stack flags, of the same
 * names (TAPROOT_SAMPLE_F_X and TAPROOT_SNAP_F_X), mean the same.
 *
 * The user stack is copied from user_regs.sp up. The copy is planned as
 * long as the configured size (TAPROOT_A_CFG_USTACK_BYTES), or shorter:
 *   USTACK_TOP    the copy is on the stack the process started on, whose
 *                 top, TAPROOT_USTACK_TOP_SLACK bytes above mm->start_stack
 *                 where argv and the environment begin, comes first: the
 *                 plan ends there. Nothing that can hold a frame is left
 *                 out, and no byte of the environment is copied.
 *   USTACK_TRUNC  the plan was cut short on purpose, below the configured
 *                 size (or the stack's top with USTACK_TOP), to fit the
 *                 record into the ring: a record takes at most a quarter of
 *                 the data area, and kernel frames get their room first.
 *                 Bytes that may hold frames were left out.
 * ustack_len is then the planned length, or less:
 *   USTACK_FAULT  the copy stopped before the planned length because user
 *                 memory could not be read there (an unmapped or guard
 *                 page, or one not present: the capture cannot take a page
 *                 fault); the bytes before it are good. Never set by the
 *                 plan: a copy cut on purpose is USTACK_TRUNC.
 * Each flag says one thing, so USTACK_TRUNC and USTACK_FAULT may come
 * together (the shortened copy faulted too), and so may USTACK_TOP and
 * USTACK_TRUNC. With neither TRUNC nor FAULT, ustack_len is the configured
 * size or, with USTACK_TOP, all of the stack up to its top: a stack that
 * goes on past the configured size is not flagged, as the kernel cannot
 * tell cheaply where other stacks end; the unwinder finds out.
 *   KSTACK_TRUNC  outermost kernel frames were left out, at the configured
 *                 depth (TAPROOT_A_CFG_KSTACK_DEPTH; every frame with depth
 *                 0) or where the record's room in the ring ran out. A
 *                 sample of user mode has no kernel stack and never sets it.
 *   USER_REGS     user_regs hold the task's user registers; without it they
 *                 are zero and nothing of the user stack is copied.
 */

/* taproot_rec_header.flags of a TAPROOT_REC_SAMPLE */
#define TAPROOT_SAMPLE_F_USER_REGS	(1U << 0) /* user_regs are valid */
#define TAPROOT_SAMPLE_F_IN_KERNEL	(1U << 1) /* interrupted in kernel mode */
#define TAPROOT_SAMPLE_F_IDLE		(1U << 2) /* interrupted the idle task */
#define TAPROOT_SAMPLE_F_KSTACK_TRUNC	(1U << 3) /* kernel frames left out */
#define TAPROOT_SAMPLE_F_USTACK_FAULT	(1U << 4) /* copy hit unreadable memory */
#define TAPROOT_SAMPLE_F_KTHREAD	(1U << 5) /* a kernel thread: no user part */
#define TAPROOT_SAMPLE_F_USTACK_TOP	(1U << 6) /* copy ends at the stack's top */
#define TAPROOT_SAMPLE_F_USTACK_TRUNC	(1U << 7) /* copy shortened to fit the ring */

/*
 * A timer sample. Followed by kstack_nr u64 kernel return addresses (the
 * interrupted ip first), then ustack_len bytes copied from the user stack
 * starting at user_regs.sp, then padding to 8 bytes. The stack flags are
 * those of "Stacks" above. (USTACK_TRUNC is newer than the first modules
 * of this ABI version, which flagged a sample's copy shortened to fit the
 * ring USTACK_FAULT.)
 */
struct taproot_rec_sample {
	struct taproot_rec_header hdr;
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u32 cpu;
	__u16 kstack_nr;
	__u16 reserved;
	__u32 ustack_len;	/* bytes of user stack that follow */
	__u32 period_us;	/* sampling period this sample stands for */
	char comm[16];		/* task comm, NUL padded */
	struct taproot_user_regs user_regs;
	/* __u64 kstack[kstack_nr]; __u8 ustack[ustack_len]; */
};

/*
 * Records that could not be written on this CPU since the previous LOST
 * record, by cause. Precedes the first record written after the loss.
 */
struct taproot_rec_lost {
	struct taproot_rec_header hdr;
	__u64 lost[TAPROOT_LOST_NR];
};

/*
 * What a causal event captured of a task: its user registers, kernel stack
 * and a copy of its user stack, as in a sample. Follows the fixed part of a
 * record whose flags say so, then kstack_nr u64 kernel return addresses
 * (innermost first; the module's own frames are left out, but the
 * tracepoint's caller chain is not trimmed further), then ustack_len bytes
 * from user_regs.sp, then padding to 8 bytes. The flags are those of
 * "Stacks" above.
 */
struct taproot_stack_snap {
	__u16 kstack_nr;
	__u16 flags;		/* TAPROOT_SNAP_F_* */
	__u32 ustack_len;
	struct taproot_user_regs user_regs;
	/* __u64 kstack[kstack_nr]; __u8 ustack[ustack_len]; */
};

#define TAPROOT_SNAP_F_USER_REGS	(1U << 0) /* user_regs are valid */
#define TAPROOT_SNAP_F_KSTACK_TRUNC	(1U << 1) /* kernel frames left out */
#define TAPROOT_SNAP_F_USTACK_FAULT	(1U << 2) /* copy hit unreadable memory */
#define TAPROOT_SNAP_F_USTACK_TRUNC	(1U << 3) /* copy shortened to fit the ring */
#define TAPROOT_SNAP_F_USTACK_TOP	(1U << 4) /* copy ends at the stack's top */

/* taproot_rec_header.flags of a TAPROOT_REC_SWITCH */
#define TAPROOT_SWITCH_F_PREV		(1U << 0) /* a selected interval of prev starts */
#define TAPROOT_SWITCH_F_NEXT		(1U << 1) /* a selected interval of next ends */
#define TAPROOT_SWITCH_F_PREEMPT	(1U << 2) /* prev was preempted: R+ */
#define TAPROOT_SWITCH_F_STACKS		(1U << 3) /* a taproot_stack_snap of prev follows */

/*
 * A context switch on @cpu from prev to next that starts or ends a
 * selected off-CPU interval. prev_state is the task state prev left the
 * CPU in (the kernel's TASK_* bits: 0 running, 0x1 interruptible (S), 0x2
 * uninterruptible (D), ...); with TAPROOT_SWITCH_F_PREEMPT prev was
 * preempted and is runnable (R+) whatever the state says; it is set for
 * every switch-out in state 0 too (preempted on the way back to user mode,
 * where the kernel calls schedule(), or a yield). prev_seq names
 * the interval prev starts, next_seq the one next ends; the fields of the
 * side that is not flagged still hold that task's identity. With
 * TAPROOT_SWITCH_F_STACKS, hdr.time_ns is when the capture of prev's stacks
 * ended, not when the record was reserved: the interval starts once the
 * capture is over, so that selected intervals, the only ones measured, are
 * not made longer than the others by it (a record nested in the capture,
 * an interrupt's sample, may follow it in the ring with an earlier time).
 */
struct taproot_rec_switch {
	struct taproot_rec_header hdr;
	__u32 cpu;
	__u32 prev_state;
	__u32 prev_pid;		/* thread group id */
	__u32 prev_tid;
	__u32 next_pid;
	__u32 next_tid;
	__u32 sched_one_in;	/* selection in force: weight of the interval */
	__u32 reserved;
	__u64 prev_seq;
	__u64 next_seq;
	char prev_comm[16];
	/* struct taproot_stack_snap, with TAPROOT_SWITCH_F_STACKS */
};

/* taproot_rec_header.flags of a TAPROOT_REC_WAKING */
#define TAPROOT_WAKING_F_HARDIRQ	(1U << 0) /* woken from a hard interrupt */
#define TAPROOT_WAKING_F_SOFTIRQ	(1U << 1) /* woken from a softirq */
#define TAPROOT_WAKING_F_NMI		(1U << 2) /* woken from an NMI */
#define TAPROOT_WAKING_F_NEW		(1U << 3) /* a new task's first wakeup */
#define TAPROOT_WAKING_F_STACKS		(1U << 4) /* a taproot_stack_snap of the waker */

/*
 * A selected interval's task (target) is woken, recorded in the waker's
 * context (the sched_waking tracepoint; sched_wakeup_new for a new task,
 * whose interval is seq 0). When an interrupt woke the target, the
 * interrupt is the waker: waker_pid and waker_tid are 0, waker_comm is
 * empty, the flags say which kind, and the snapshot (if any) holds only the
 * interrupt's kernel stack. capture_ns is how long capturing the waker's
 * stacks took, from hdr.time_ns: the target's wakeup came that much later
 * because its interval was selected, so a reader subtracts it from the
 * interval (its time in the run queue starts at time_ns + capture_ns).
 */
struct taproot_rec_waking {
	struct taproot_rec_header hdr;
	__u32 cpu;
	__u32 target_pid;
	__u32 target_tid;
	__u32 waker_pid;
	__u32 waker_tid;
	__u32 capture_ns;	/* capturing the waker's stacks took; saturates */
	__u64 target_seq;
	char waker_comm[16];
	/* struct taproot_stack_snap, with TAPROOT_WAKING_F_STACKS */
};

/* taproot_rec_header.flags of a TAPROOT_REC_FORK */
#define TAPROOT_FORK_F_THREAD		(1U << 0) /* a new thread, not a process */

/* A task created a task (sched_process_fork), in the parent's context. */
struct taproot_rec_fork {
	struct taproot_rec_header hdr;
	__u32 cpu;
	__u32 parent_pid;
	__u32 parent_tid;
	__u32 child_pid;
	__u32 child_tid;
	__u32 reserved;
	char comm[16];		/* the parent's, which the child inherits */
};

/* taproot_rec_header.flags of a TAPROOT_REC_EXEC */
#define TAPROOT_EXEC_F_FILENAME_TRUNC	(1U << 0) /* filename cut to fit */

/*
 * A successful exec (sched_process_exec). old_tid is the tid of the thread
 * that called exec when a non-leader thread did (the kernel then gives it
 * the leader's tid); else tid. filename_len bytes follow the fixed part,
 * the NUL included, at most TAPROOT_EXEC_FILENAME_MAX, then padding.
 */
struct taproot_rec_exec {
	struct taproot_rec_header hdr;
	__u32 cpu;
	__u32 pid;
	__u32 tid;
	__u32 old_tid;
	__u32 filename_len;
	__u32 reserved;
	char comm[16];		/* the new comm */
	/* char filename[filename_len]; */
};

/* taproot_rec_header.flags of a TAPROOT_REC_EXIT */
#define TAPROOT_EXIT_F_GROUP_DEAD	(1U << 0) /* the last thread of its process */

/* A task exits (sched_process_exit). */
struct taproot_rec_exit {
	struct taproot_rec_header hdr;
	__u32 cpu;
	__u32 pid;
	__u32 tid;
	__u32 reserved;
	char comm[16];
};

/*
 * Compile-time checks of the layout, evaluated by the kernel module and by
 * userspace alike. Any change that moves a field fails both builds.
 */
#define __TAPROOT_CHECK(cond, msg) _Static_assert(cond, "taproot ABI: " msg)
__TAPROOT_CHECK(sizeof(struct taproot_ring_consumer) == 8, "consumer page");
__TAPROOT_CHECK(sizeof(struct taproot_ring_producer) == 128, "producer page");
__TAPROOT_CHECK(__builtin_offsetof(struct taproot_ring_producer, data_head) == 64,
		"data_head on its own cache line");
__TAPROOT_CHECK(sizeof(struct taproot_rec_header) == 16, "record header");
__TAPROOT_CHECK(sizeof(struct taproot_user_regs) == 18 * 8, "user regs");
__TAPROOT_CHECK(sizeof(struct taproot_rec_sample) == 200, "sample record");
__TAPROOT_CHECK(__builtin_offsetof(struct taproot_rec_sample, user_regs) == 56,
		"sample user_regs");
__TAPROOT_CHECK(sizeof(struct taproot_rec_lost) == 48, "lost record");
__TAPROOT_CHECK(sizeof(struct taproot_stack_snap) == 152, "stack snapshot");
__TAPROOT_CHECK(sizeof(struct taproot_rec_switch) == 80, "switch record");
__TAPROOT_CHECK(sizeof(struct taproot_rec_waking) == 64, "waking record");
__TAPROOT_CHECK(sizeof(struct taproot_rec_fork) == 56, "fork record");
__TAPROOT_CHECK(sizeof(struct taproot_rec_exec) == 56, "exec record");
__TAPROOT_CHECK(sizeof(struct taproot_rec_exit) == 48, "exit record");
#undef __TAPROOT_CHECK

#endif /* _UAPI_LINUX_TAPROOT_H */
