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
 *     TAPROOT_A_CFG_UNWIND_FRAMES u32 1..TAPROOT_UNWIND_FRAMES_MAX: user
 *                                     frames the module unwinds at most
 *                                     (see "Unwinding in the module")
 *     TAPROOT_A_CFG_UNWIND_MEM   u32  1..TAPROOT_UNWIND_MEM_MAX MiB of
 *                                     tables and mappings the open
 *                                     /dev/taproot may hold; lowering it
 *                                     frees nothing, it refuses uploads
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
 *       TAPROOT_A_STAT_UNWIND       nest of u64, one per enum
 *                                        taproot_kunwind (attribute type =
 *                                        the value + 1; padding, if any, is
 *                                        type 0): samples whose user stack
 *                                        the module's walk ended so
 *                                        (TAPROOT_KUNWIND_NONE: not tried)
 *       TAPROOT_A_STAT_STACKS       u64  STACK records written
 *       TAPROOT_A_STAT_STACK_REFS   u64  SAMPLE_REF records written
 *       TAPROOT_A_STAT_PY_WALKS     u64  walks of CPython frames ("CPython
 *                                        frames" below)
 *       TAPROOT_A_STAT_PY_FRAMES    u64  the frames they found
 *       TAPROOT_A_STAT_PY_CUT       u64  of them, walks cut short: a read
 *                                        failed, a code object was not
 *                                        one, or the chain ran on past
 *                                        2 * TAPROOT_PY_FRAMES_MAX steps
 *       TAPROOT_A_STAT_COUNTED      u64  samples counted in the CPU's table
 *                                        ("Counted stacks")
 *       TAPROOT_A_STAT_COUNT_FULL   u64  samples the table had no room
 *                                        for: written as SAMPLE_REF
 *     TAPROOT_A_FOLLOWED         u32  processes followed now (see
 *                                     TAPROOT_CFG_F_FOLLOW)
 *     TAPROOT_A_FOLLOW_FULL      u64  forks not followed: the set was full
 *     TAPROOT_A_UNWIND_MEM_USED  u64  bytes of uploaded tables and mappings
 *                                     (and of their indexes)
 *     TAPROOT_A_UNWIND_TABLES    u32  tables uploaded now
 *     TAPROOT_A_UNWIND_PROCS     u32  processes with mappings now
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
 * A SAMPLE whose walk ended TAPROOT_KUNWIND_NO_PROC (a process the
 * module holds no mappings of) makes its ring readable at once, whatever
 * the watermark (at most once in 10 ms per CPU): the reader's uploads of
 * a new process, and its reads of /proc, must come before it exits.
 *
 * ------------------------------------------------------------------------
 * Unwinding in the module (TAPROOT_FEAT_UNWIND)
 * ------------------------------------------------------------------------
 *
 * The consumer uploads, through ioctl()s on its open /dev/taproot, the
 * compiled unwind table of each ELF file (TAPROOT_IOC_TABLE_ADD, once per
 * build ID) and the executable mappings of each process it profiles
 * (TAPROOT_IOC_MAPS_SET). Everything uploaded belongs to the open file:
 * it is freed when the file is released, and held within the budget
 * TAPROOT_A_CFG_UNWIND_MEM (beyond it an upload fails with ENOSPC). Every
 * upload is validated whole before it is used (EINVAL for any field out of
 * range: rows not ascending, a rule index past nr_rules, an unknown kind,
 * mappings that overlap or are not sorted); the module still checks every
 * index when it uses a table, and reads user memory only through the
 * sampled task's own mm, so a table that lies makes wrong pcs, nothing
 * worse.
 *
 * What the holder of an open /dev/taproot (who may have dropped its
 * privileges after the open) can make the module read and tell, whatever
 * it uploads: TAPROOT_IOC_MAPS_SET takes only mappings that lie within
 * executable mappings of the process when it is set (else ESTALE); a walk
 * reads the sampled task's stack from its sp up to TAPROOT_USTACK_MAX
 * bytes above it, no higher than a stack copy would go (the top of the
 * stack the process started on), and code only within an uploaded
 * mapping (the 9 bytes of the sigreturn check at a pc); and a pc read
 * from memory reaches the ring only when an uploaded mapping holds it
 * (else the walk ends there, TAPROOT_KUNWIND_NO_MAPPING). So the records
 * say which code addresses lie where a copy would have read, and nothing
 * else of the process's memory: with TAPROOT_CFG_F_USTACK_PRIVATE, no
 * word of its data, its stack or its environment. (A CPython layout, which
 * only a caller with the capabilities at the call can set, goes further:
 * "CPython frames" below.)
 *
 * Mappings are bound to the process's address space as it was when the
 * consumer asked for a token (TAPROOT_IOC_PROC_TOKEN), before it read
 * /proc/PID/maps: TAPROOT_IOC_MAPS_SET fails with ESTALE when the process
 * has exec'd, or may have unmapped something, since, or when a mapping
 * given is not, now, all executable memory of the process. After the set, a
 * sample whose process exec'd or may have changed its mappings falls back
 * (TAPROOT_KUNWIND_STALE) until the consumer sets them again.
 *
 * With TAPROOT_CFG_F_UNWIND, a sample of a task with user registers is
 * unwound from them: each frame's rule comes from the table of the mapping
 * holding its pc (the pc minus 1 for a return address), the caller's
 * return address and rbp are read from the stack with small reads that
 * never fault pages in. Frames of mappings without a table
 * (TAPROOT_MAP_F_FP: JIT code, the vDSO) or of pcs no row covers follow
 * the rbp chain; a lazy-binding PLT entry and a signal frame (registers
 * from the rt_sigframe) are rules of the table; at most
 * TAPROOT_A_CFG_UNWIND_FRAMES frames. A walk that ends well
 * (TAPROOT_KUNWIND_COMPLETE or _MAX_FRAMES) makes an interned stack; one
 * that cannot go on falls back to a TAPROOT_REC_SAMPLE with the pcs found
 * (TAPROOT_SAMPLE_F_UPCS) and the snapshot taken from the last frame the
 * walk reached (TAPROOT_SAMPLE_F_UREGS_CALLER when not the leaf), or,
 * with TAPROOT_CFG_F_USTACK_PRIVATE, with no stack bytes at all. The user
 * stack of a causal event (a SWITCH's blocked task, a WAKING's waker) is
 * walked the same way: a walk that ends well gives the event's snapshot
 * the pcs in place of the stack bytes (TAPROOT_SNAP_F_UPCS, see "Stacks"),
 * and the snapshot says how the walk ended (TAPROOT_SNAP_UNWIND());
 * TAPROOT_CFG_F_UNWIND_VERIFY does not apply to events.
 *
 * Interned stacks. The first time a stack is seen on a CPU in an epoch, a
 * TAPROOT_REC_STACK record carries its pcs and its id (a 64-bit hash of
 * the process, the kernel and the user pcs); then, and every time it is
 * seen again, a TAPROOT_REC_SAMPLE_REF names it by id. Each CPU keeps
 * TAPROOT_STACK_SLOTS ids, stack id i in slot i & (TAPROOT_STACK_SLOTS -
 * 1), a newer stack replacing an older one in its slot; a reference is
 * written only for the id its slot holds, after the STACK record that put
 * it there. A reader that keeps the same slots per CPU (the last STACK
 * record of each slot) therefore finds every reference's stack, in any
 * case where it read every record of that CPU since. The epoch changes
 * when /dev/taproot is opened (a new reader has not seen the STACK records
 * of the last): a reference of another epoch than its STACK cannot be
 * resolved, and is counted by the reader.
 *
 * ------------------------------------------------------------------------
 * Following children (TAPROOT_FEAT_FOLLOW)
 * ------------------------------------------------------------------------
 *
 * With TAPROOT_CFG_F_FOLLOW and a TGID filter, a process forked by a
 * process that passes the filter passes it too, from the fork on (its
 * first sample, FORK and EXEC records included), until it exits; its
 * children follow in turn. At most TAPROOT_FOLLOW_MAX processes are
 * followed at once; forks beyond are not followed and are counted
 * (TAPROOT_A_FOLLOW_FULL). Setting a new TGID filter, or clearing the
 * flag, forgets the processes followed so far, and so does STOP (exits are
 * not seen while stopped, and a tgid may be reused). Following needs the
 * fork and exit tracepoints, attached at START: while running, turning
 * TAPROOT_CFG_F_FOLLOW on is refused (-EBUSY) unless it, or both FORK and
 * EXIT records, were on at START. Without a TGID filter it does nothing.
 *
 * ------------------------------------------------------------------------
 * Counted stacks (TAPROOT_FEAT_COUNT)
 * ------------------------------------------------------------------------
 *
 * With TAPROOT_CFG_F_COUNT, a sample whose walk makes an interned stack is
 * counted, not written: each CPU keeps a table of TAPROOT_COUNT_SLOTS
 * struct taproot_count, one per (stack id, thread, the sample's flags, the
 * thread's comm, period), with how many samples it stands for and the
 * times of the first and the last. The STACK record is written as ever,
 * the first time its stack is seen on that CPU in the epoch, and before
 * the sample is counted; the SAMPLE_REF is not. A sample its table has no
 * room for (TAPROOT_COUNT_PROBES slots from its hash are taken) is written
 * as a SAMPLE_REF and counted in TAPROOT_A_STAT_COUNT_FULL: none is lost.
 * Samples that fall back to a SAMPLE record (a walk that did not end
 * well, VERIFY) are written as ever, and so is everything else.
 *
 * TAPROOT_IOC_COUNTS_DRAIN on /dev/taproot takes the counts out: it
 * switches every possible CPU to its other table, waits until no sample
 * handler can still write the ones it left (an RCU grace period), copies
 * their entries into the caller's array and empties them. The array must
 * have room for TAPROOT_COUNT_SLOTS entries of each possible CPU (CPU
 * numbers below the highest possible one + 1: -ENOSPC otherwise, nothing
 * taken). The STACK records an entry names were committed to its CPU's
 * ring before the drain returned: a reader that reads its rings up to
 * their heads after the drain resolves every entry of its epoch, as a
 * SAMPLE_REF. The tables belong to the open file: they are emptied at
 * open, and entries of another epoch than the reader's cannot be resolved.
 * The first configuration with COUNT allocates them (2 * TAPROOT_COUNT_SLOTS
 * * 64 bytes per possible CPU, kept until unload; -ENOMEM when it cannot).
 */
#ifndef _UAPI_LINUX_TAPROOT_H
#define _UAPI_LINUX_TAPROOT_H

#include <linux/ioctl.h>
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
#define TAPROOT_UNWIND_FRAMES_MAX	127	/* as PERF_MAX_STACK_DEPTH */
#define TAPROOT_UNWIND_FRAMES_DEFAULT	64
#define TAPROOT_UNWIND_MEM_MAX		4096	/* MiB */
#define TAPROOT_UNWIND_MEM_DEFAULT	256	/* MiB */
#define TAPROOT_FOLLOW_MAX		4096	/* processes followed at once */

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
	TAPROOT_A_CFG_UNWIND_FRAMES,	/* u32 */
	TAPROOT_A_CFG_UNWIND_MEM,	/* u32, MiB */
	TAPROOT_A_FOLLOWED,		/* u32 */
	TAPROOT_A_FOLLOW_FULL,		/* u64 */
	TAPROOT_A_UNWIND_MEM_USED,	/* u64 */
	TAPROOT_A_UNWIND_TABLES,	/* u32 */
	TAPROOT_A_UNWIND_PROCS,		/* u32 */
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
	TAPROOT_A_STAT_UNWIND,		/* nest of u64 by taproot_kunwind + 1 */
	TAPROOT_A_STAT_STACKS,		/* u64 */
	TAPROOT_A_STAT_STACK_REFS,	/* u64 */
	TAPROOT_A_STAT_PY_WALKS,	/* u64 */
	TAPROOT_A_STAT_PY_FRAMES,	/* u64 */
	TAPROOT_A_STAT_PY_CUT,		/* u64 */
	TAPROOT_A_STAT_COUNTED,		/* u64 */
	TAPROOT_A_STAT_COUNT_FULL,	/* u64 */
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
#define TAPROOT_FEAT_UNWIND		(1ULL << 6)	/* unwinding, interned stacks */
#define TAPROOT_FEAT_FOLLOW		(1ULL << 7)	/* TAPROOT_CFG_F_FOLLOW */
#define TAPROOT_FEAT_PYTHON		(1ULL << 8)	/* CPython frames */
#define TAPROOT_FEAT_COUNT		(1ULL << 9)	/* counted stacks */
#define TAPROOT_FEAT_JVM		(1ULL << 10)	/* HotSpot frames */

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
/*
 * Unwind user stacks in the module from the uploaded tables (default on;
 * without tables every sample falls back to the snapshot).
 */
#define TAPROOT_CFG_F_UNWIND		(1U << 1)
/*
 * No sample carries user stack bytes, nor user registers but ip, sp and
 * bp: one the module cannot unwind (or does not: without UNWIND; or for
 * VERIFY) ends where its walk stopped. Nor does any causal event
 * (TAPROOT_SNAP_F_UPCS).
 */
#define TAPROOT_CFG_F_USTACK_PRIVATE	(1U << 2)
/* Every unwound sample also carries the leaf's snapshot, to compare. */
#define TAPROOT_CFG_F_UNWIND_VERIFY	(1U << 3)
/*
 * The TGID filter takes in the processes its processes fork from now on,
 * and theirs, from their first instruction (see TAPROOT_FOLLOW_MAX).
 */
#define TAPROOT_CFG_F_FOLLOW		(1U << 4)
/*
 * Samples whose walk makes an interned stack are counted in the module's
 * tables instead of written as SAMPLE_REF records ("Counted stacks").
 */
#define TAPROOT_CFG_F_COUNT		(1U << 5)
#define TAPROOT_CFG_F_ALL		((1U << 6) - 1)
#define TAPROOT_CFG_F_DEFAULT		TAPROOT_CFG_F_UNWIND

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
	TAPROOT_REC_STACK,
	TAPROOT_REC_SAMPLE_REF,
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
 *
 * A causal event's snapshot may hold user pcs instead of stack bytes:
 *   UPCS          (TAPROOT_SNAP_F_UPCS, snapshots only) the module walked
 *                 the user stack (TAPROOT_CFG_F_UNWIND, "Unwinding in the
 *                 module"): the ustack_len bytes after the kernel frames
 *                 are ustack_len / 8 u64 user pcs (1 to
 *                 TAPROOT_UNWIND_FRAMES_MAX), leaf first, return addresses
 *                 as found. USER_REGS is set,
 *                 and user_regs hold the leaf's ip, sp and bp only, the
 *                 other registers 0: nothing of the task's data. With UPCS
 *                 alone the walk reached the outermost frame
 *                 (TAPROOT_KUNWIND_COMPLETE); with USTACK_TRUNC it stopped
 *                 at TAPROOT_A_CFG_UNWIND_FRAMES (_MAX_FRAMES): outer frames
 *                 were left out; with USTACK_FAULT it could not go on (any
 *                 fallback reason, or no walk at all) and the pcs are those
 *                 it found, at least the leaf's ip. USTACK_TOP never comes
 *                 with UPCS, nor TRUNC with FAULT.
 * A walk that cannot finish gives the snapshot from the leaf, without UPCS,
 * as when the module does not unwind; but with TAPROOT_CFG_F_USTACK_PRIVATE
 * no event carries stack bytes: every snapshot with a user part has UPCS,
 * with USTACK_FAULT when the walk did not end well or was not tried
 * (TAPROOT_CFG_F_UNWIND off: the leaf's ip alone).
 *
 * A causal event's snapshot also says how the module's walk of its user
 * stack ended, as a sample's unwind does, in the bits
 * TAPROOT_SNAP_UNWIND_MASK of its flags (TAPROOT_SNAP_UNWIND(flags)), an
 * enum taproot_kunwind:
 *   NONE          no walk: no user part (USER_REGS clear: a kernel thread,
 *                 an interrupt's wakeup), TAPROOT_CFG_F_UNWIND off, or no
 *                 walk where the probe ran (interrupts on, no memory for
 *                 the walk). With UPCS (USTACK_PRIVATE): USTACK_FAULT, the
 *                 leaf's ip alone.
 *   COMPLETE      UPCS, without USTACK_TRUNC or USTACK_FAULT.
 *   MAX_FRAMES    UPCS and USTACK_TRUNC.
 *   a fallback    (NO_PROC to BAD_FRAME) the walk stopped there: the copy
 *                 from the leaf, without UPCS; or, with USTACK_PRIVATE,
 *                 UPCS and USTACK_FAULT with the pcs it found.
 * So under UPCS, USTACK_TRUNC says MAX_FRAMES and USTACK_FAULT any end but
 * COMPLETE and MAX_FRAMES; a snapshot without UPCS never says COMPLETE or
 * MAX_FRAMES. A reader uploads what a fallback lacks (NO_PROC, STALE,
 * NO_MAPPING) for the task the snapshot is of, as for a sample.
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
#define TAPROOT_SAMPLE_F_UPCS		(1U << 8) /* upc_nr user pcs follow the kernel's */
#define TAPROOT_SAMPLE_F_UREGS_CALLER	(1U << 9) /* user_regs are a caller frame's */
#define TAPROOT_SAMPLE_F_VERIFY		(1U << 10) /* upcs are a whole walk; regs,
						    * copy: the leaf's */
#define TAPROOT_SAMPLE_F_PYTHON		(1U << 11) /* CPython frames follow the copy */

/*
 * A timer sample. Followed by kstack_nr u64 kernel return addresses (the
 * interrupted ip first), then, with TAPROOT_SAMPLE_F_UPCS, upc_nr u64 user
 * pcs (leaf first, return addresses as found), then ustack_len bytes
 * copied from the user stack starting at user_regs.sp, then padding to 8
 * bytes; then, with TAPROOT_SAMPLE_F_PYTHON (only with USER_REGS), a
 * struct taproot_sample_python and its py_nr CPython frames ("CPython
 * frames" below). The stack flags are those of "Stacks" above. (USTACK_TRUNC is
 * newer than the first modules of this ABI version, which flagged a
 * sample's copy shortened to fit the ring USTACK_FAULT.)
 *
 * UPCS: the module unwound the first upc_nr frames, and unwind says why
 * it stopped (a fallback reason; or any reason with VERIFY). Without
 * VERIFY, the user stack goes on from the last of them: user_regs and the
 * copy are those of frame upc_nr - 1, whose pc is upcs[upc_nr - 1] and
 * user_regs.ip. With UREGS_CALLER that frame is not the leaf: its pc is a
 * return address, and only ip, sp and bp are known (bp is 0 when it was
 * lost); the other registers are 0. With VERIFY, the walk was whole, and
 * user_regs and the copy are the leaf's, as without unwinding.
 */
struct taproot_rec_sample {
	struct taproot_rec_header hdr;
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u32 cpu;
	__u16 kstack_nr;
	__u8 upc_nr;		/* user pcs that follow, with SAMPLE_F_UPCS */
	__u8 unwind;		/* enum taproot_kunwind: how the walk ended */
	__u32 ustack_len;	/* bytes of user stack that follow */
	__u32 period_us;	/* sampling period this sample stands for */
	char comm[16];		/* task comm, NUL padded */
	struct taproot_user_regs user_regs;
	/* __u64 kstack[kstack_nr]; __u8 ustack[ustack_len]; */
};

/*
 * The CPython frames of a SAMPLE with TAPROOT_SAMPLE_F_PYTHON: at the
 * first multiple of 8 after its stack bytes. Followed by py_nr struct
 * taproot_pyframe, innermost first.
 */
struct taproot_sample_python {
	__u16 py_nr;		/* 1..TAPROOT_PY_FRAMES_MAX */
	__u16 reserved[3];	/* 0 */
	/* struct taproot_pyframe py[py_nr]; */
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
 * "Stacks" above. With TAPROOT_SNAP_F_UPCS the ustack_len bytes are the
 * module's walk instead: ustack_len / 8 u64 user pcs, leaf first, and
 * user_regs the leaf's ip, sp and bp alone. Whether or not it has UPCS,
 * TAPROOT_SNAP_UNWIND(flags) says how the module's walk of the user stack
 * ended (TAPROOT_KUNWIND_NONE: there was none).
 */
struct taproot_stack_snap {
	__u16 kstack_nr;
	__u16 flags;		/* TAPROOT_SNAP_F_*, TAPROOT_SNAP_UNWIND_MASK */
	__u32 ustack_len;
	struct taproot_user_regs user_regs;
	/* __u64 kstack[kstack_nr]; __u8 ustack[ustack_len]; */
};

#define TAPROOT_SNAP_F_USER_REGS	(1U << 0) /* user_regs are valid */
#define TAPROOT_SNAP_F_KSTACK_TRUNC	(1U << 1) /* kernel frames left out */
#define TAPROOT_SNAP_F_USTACK_FAULT	(1U << 2) /* copy hit unreadable memory */
#define TAPROOT_SNAP_F_USTACK_TRUNC	(1U << 3) /* copy shortened to fit the ring */
#define TAPROOT_SNAP_F_USTACK_TOP	(1U << 4) /* copy ends at the stack's top */
#define TAPROOT_SNAP_F_UPCS		(1U << 5) /* ustack: the module's user pcs */
/* Bits 8-11: enum taproot_kunwind, how the walk of the user stack ended. */
#define TAPROOT_SNAP_UNWIND_SHIFT	8
#define TAPROOT_SNAP_UNWIND_MASK	(0xfU << TAPROOT_SNAP_UNWIND_SHIFT)
#define TAPROOT_SNAP_UNWIND(flags) \
	(((flags) & TAPROOT_SNAP_UNWIND_MASK) >> TAPROOT_SNAP_UNWIND_SHIFT)

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
 * (the module's walk of its user stack included) ended, not when the
 * record was reserved: the interval starts once the capture is over, so
 * that selected intervals, the only ones measured, are not made longer
 * than the others by it (a record nested in the capture,
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
 * hdr.time_ns is when the capture began: the module's walk of the waker's
 * user stack (TAPROOT_SNAP_F_UPCS, or a walk that fell back) comes first
 * and is in capture_ns.
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
 * A stack, the first time it is seen on this CPU in this epoch (see
 * "Interned stacks"). Followed by kstack_nr u64 kernel pcs (the
 * interrupted ip first), then upc_nr u64 user pcs (leaf first), then
 * py_nr struct taproot_pyframe, the thread's CPython frames (innermost
 * first, "CPython frames" below). hdr.flags
 * are those of a sample that tell how to read the pcs: IN_KERNEL (kernel
 * pcs[0] is exact), KSTACK_TRUNC, USER_REGS (there is a user part).
 */
struct taproot_rec_stack {
	struct taproot_rec_header hdr;
	__u64 id;		/* never 0 */
	__u32 epoch;
	__u32 pid;		/* thread group id: user pcs are its addresses */
	__u16 kstack_nr;
	__u8 upc_nr;
	__u8 unwind;		/* TAPROOT_KUNWIND_COMPLETE or _MAX_FRAMES */
	__u16 py_nr;		/* 0..TAPROOT_PY_FRAMES_MAX */
	__u16 reserved;
	/*
	 * __u64 kstack[kstack_nr]; __u64 upcs[upc_nr];
	 * struct taproot_pyframe py[py_nr];
	 */
};

/* The number of stack ids a CPU and its reader keep: a power of two. */
#define TAPROOT_STACK_SLOTS	4096

/*
 * A timer sample whose stack is STACK record @stack_id of this CPU and
 * @epoch. hdr.flags are the sample's (IDLE, KTHREAD, IN_KERNEL, ...).
 */
struct taproot_rec_sample_ref {
	struct taproot_rec_header hdr;
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u32 cpu;
	__u32 period_us;
	char comm[16];
	__u64 stack_id;
	__u32 epoch;
	__u32 reserved;
};

/* Each CPU's table of counted stacks: a power of two. */
#define TAPROOT_COUNT_SLOTS	1024
/* Slots a sample may take, from its hash on: then its table is full. */
#define TAPROOT_COUNT_PROBES	8

/*
 * The samples of one stack of one thread on one CPU since the last drain
 * ("Counted stacks"): as many SAMPLE_REFs of the same fields.
 */
struct taproot_count {
	__u64 stack_id;		/* a STACK record of @cpu and @epoch */
	__u32 epoch;
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u16 cpu;
	__u16 flags;		/* the samples' TAPROOT_SAMPLE_F_* */
	__u32 count;		/* >= 1 */
	__u32 period_us;	/* each sample stands for */
	__u64 first_ns;		/* the first sample's time (the records' clock) */
	__u64 last_ns;		/* the last's */
	char comm[16];		/* the thread's, NUL padded */
};

/*
 * TAPROOT_IOC_COUNTS_DRAIN: @entries is an array of @max struct
 * taproot_count; the drain writes @nr of them.
 */
struct taproot_counts_drain {
	__u64 entries;
	__u32 max;
	__u32 nr;		/* out */
};

/*
 * How the module's walk of a user stack ended: taproot_rec_sample.unwind,
 * TAPROOT_SNAP_UNWIND() of a snapshot's flags.
 */
enum taproot_kunwind {
	TAPROOT_KUNWIND_NONE,		/* not tried: unwinding off, no user part */
	TAPROOT_KUNWIND_COMPLETE,	/* the outermost frame was reached */
	TAPROOT_KUNWIND_MAX_FRAMES,	/* TAPROOT_A_CFG_UNWIND_FRAMES reached */
	/* The fallbacks: */
	TAPROOT_KUNWIND_NO_PROC,	/* no mappings uploaded for the process */
	TAPROOT_KUNWIND_STALE,		/* it exec'd or changed its mappings since */
	TAPROOT_KUNWIND_NO_MAPPING,	/* a pc in no uploaded mapping: kept if the leaf's */
	TAPROOT_KUNWIND_NO_CFI,		/* no row for a pc, and no rbp chain */
	TAPROOT_KUNWIND_SLOW_RULE,	/* a rule the module does not evaluate */
	TAPROOT_KUNWIND_FAULT,		/* user memory could not be read */
	TAPROOT_KUNWIND_BAD_FRAME,	/* the stack went backwards */
	TAPROOT_KUNWIND_NR
};

/* ---------------------------------------------------------------- ioctls */

#define TAPROOT_IOC_MAGIC	0xB7

/*
 * One rule of an unwind table: how a pc's caller is found. The kinds and
 * their fields are those of taproot's CFI compiler; the fields a kind does
 * not use must be 0.
 */
enum taproot_rule_kind {
	TAPROOT_RULE_NONE,	/* no CFI: the rbp chain */
	TAPROOT_RULE_SP,	/* CFA = rsp + cfa_off */
	TAPROOT_RULE_FP,	/* CFA = rbp + cfa_off */
	TAPROOT_RULE_PLT,	/* CFA = rsp + cfa_off (+ 8 if (rip & 15) >= plt_thr) */
	TAPROOT_RULE_SIGNAL,	/* registers from the rt_sigframe at rsp */
	TAPROOT_RULE_END,	/* the outermost frame */
	TAPROOT_RULE_SLOW,	/* an expression: the module falls back */
	TAPROOT_RULE_NR
};

enum taproot_rule_rbp {
	TAPROOT_RBP_SAME,	/* the caller's rbp is this frame's */
	TAPROOT_RBP_UNDEF,	/* lost */
	TAPROOT_RBP_CFA,	/* saved at CFA + rbp_off */
	TAPROOT_RBP_NR
};

struct taproot_unwind_rule {
	__u8 kind;		/* enum taproot_rule_kind */
	__u8 rbp;		/* enum taproot_rule_rbp */
	__u8 plt_thr;		/* TAPROOT_RULE_PLT: 0..15 */
	__u8 reserved;		/* 0 */
	__s32 cfa_off;		/* |cfa_off| <= TAPROOT_RULE_OFF_MAX */
	__s32 ra_off;		/* return address at CFA + ra_off */
	__s32 rbp_off;		/* TAPROOT_RBP_CFA */
};

#define TAPROOT_RULE_OFF_MAX	(1 << 20)
#define TAPROOT_TABLE_ROWS_MAX	(1U << 24)
#define TAPROOT_TABLE_RULES_MAX	65535
#define TAPROOT_BUILD_ID_MAX	20

/*
 * TAPROOT_IOC_TABLE_ADD: upload the table of one ELF file. Row i covers
 * ELF addresses [base + pcs[i], base + pcs[i + 1]) (the last row: up to
 * the end of the text, where its rule is usually NONE) with rule
 * rules[row_rules[i]]. pcs strictly ascending, base + pcs[nr_rows - 1]
 * within 64 bits, the bytes of build_id past build_id_len 0. On success
 * table_id is set (> 0; its value in is not read). EEXIST: a table of
 * this build ID is uploaded: its id is set all the same (the struct is
 * copied out before the error returns; the arrays are then not read);
 * ENOSPC: beyond the budget; EFAULT: an array that cannot be read;
 * EINVAL: anything malformed.
 */
struct taproot_table_add {
	__u64 pcs;		/* user pointer to __u32[nr_rows] */
	__u64 row_rules;	/* user pointer to __u16[nr_rows] */
	__u64 rules;		/* user pointer to taproot_unwind_rule[nr_rules] */
	__u64 base;		/* ELF address pcs are offsets from */
	__u32 nr_rows;		/* 1..TAPROOT_TABLE_ROWS_MAX */
	__u32 nr_rules;		/* 1..TAPROOT_TABLE_RULES_MAX */
	__u8 build_id[TAPROOT_BUILD_ID_MAX];
	__u32 build_id_len;	/* 1..TAPROOT_BUILD_ID_MAX */
	__u32 table_id;		/* out */
	__u32 reserved;		/* 0 */
};

/* TAPROOT_MAP_F_* of a mapping */
#define TAPROOT_MAP_F_FP	(1U << 0)	/* no table: follow the rbp chain */

/*
 * One executable mapping: pc in [start, end) is ELF address pc - bias of
 * table table_id (0, with TAPROOT_MAP_F_FP: none, and bias 0).
 */
struct taproot_proc_map {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 table_id;
	__u32 flags;		/* TAPROOT_MAP_F_* */
};

#define TAPROOT_MAPS_MAX	4096	/* mappings of one process */
#define TAPROOT_PROCS_MAX	16384	/* processes with mappings */

/*
 * TAPROOT_IOC_PROC_TOKEN: a token naming process @pid's address space as
 * it is now, for TAPROOT_IOC_MAPS_SET: opaque, valid for this open file
 * only. ESRCH: no such process (a thread id that is not a thread group
 * id is none); EINVAL: a kernel thread, pid 0; EOPNOTSUPP: a kernel on
 * which the module cannot tell when mappings change. The pids of these
 * ioctls are global (the initial pid namespace's), as those of the
 * records and the TGID filter, whatever namespace the caller is in.
 */
struct taproot_proc_token {
	__u32 pid;		/* thread group id */
	__u32 reserved;		/* 0 */
	__u64 token;		/* out */
};

/*
 * TAPROOT_IOC_MAPS_SET: replace process @pid's mappings with @nr
 * taproot_proc_map sorted by start and disjoint (nr 0: forget the
 * process, whatever the token, even if it has exited). ESTALE: the
 * address space is no longer the token's (on some kernels any mmap or
 * munmap since counts); ENOENT: a table_id that is not uploaded; ESRCH;
 * ENOSPC: beyond the budget, or TAPROOT_PROCS_MAX processes (or 32 in
 * one bucket of the module's keyed hash of them, which chance alone does
 * not make); EINVAL.
 */
struct taproot_maps_set {
	__u32 pid;
	__u32 nr;		/* 0..TAPROOT_MAPS_MAX */
	__u64 maps;		/* user pointer to taproot_proc_map[nr] */
	__u64 token;		/* from TAPROOT_IOC_PROC_TOKEN */
};

/*
 * CPython frames (TAPROOT_FEAT_PYTHON). A consumer that finds a CPython
 * interpreter in a process whose mappings it set describes it with
 * TAPROOT_IOC_PYTHON_SET: where its thread states are, and the layout of
 * its frames and code objects, as that version has them. Then each sample
 * of one of its threads with a user part also reads the thread's Python
 * frames, whether or not the walk of its native stack ended well (an
 * interned stack carries them in its STACK record, any other sample after
 * its stack bytes: TAPROOT_SAMPLE_F_PYTHON): the thread state from pthread key *tss_key's
 * slot of the thread's TLS (the word at fs base + tsd_off + 16 * key, for
 * a key below 32), its innermost frame, and up the frames' back pointers,
 * at most TAPROOT_PY_FRAMES_MAX of them, two reads of at most
 * TAPROOT_PY_READ_MAX bytes each (the frame, its code object) per frame. A
 * frame whose code object's type is not *code_type ends the walk (its
 * type word at offset 8, as every object's). A thread without a thread
 * state (not a Python thread, or not yet) has no Python frames.
 *
 * Each frame gives its code object's address, its position (the int at
 * frame_pos, POS_INT; or the pointer at frame_pos minus the code object's
 * address, POS_PTR; TAPROOT_PYFRAME_POS_NONE when that is not in
 * [0, 2^30)), and a cookie of the code object's fields that the
 * consumer, which reads the code object later, checks it against (code
 * objects are freed and their memory reused): (argcount << 25) +
 * (kwonlyargcount << 18) + (flags << 10) + firstlineno, in 32 bits.
 * TAPROOT_PYFRAME_ENTRY marks the last frame an evaluation loop's
 * activation ran before it (for which the native walk has one interpreter
 * frame): entry_kind ENTRY_ALL, every frame (one activation per frame);
 * ENTRY_FLAG, a frame whose byte at entry_off is not 0; ENTRY_OWNER, the
 * frame before one whose byte at entry_off is 3 (a frame owned by the C
 * stack, which is not given).
 *
 * What this lets the holder of an open /dev/taproot make the module read
 * and tell goes beyond "Unwinding in the module": the reads follow
 * pointers through the process's memory as the layout says, and the
 * records carry the addresses and 32-bit words found (also with
 * TAPROOT_CFG_F_USTACK_PRIVATE). So TAPROOT_IOC_PYTHON_SET checks the
 * caller's capabilities itself, at the call (CAP_PERFMON or
 * CAP_SYS_ADMIN), not only the opener's: a holder that dropped them
 * cannot describe an interpreter. The layout is bound to the address
 * space as MAPS_SET's mappings are (TAPROOT_IOC_PROC_TOKEN): a new
 * MAPS_SET keeps it, an exec forgets it. A change of the mappings alone
 * does not: the interpreter's structures stay where they are while it
 * maps memory, and every read is checked as untrusted anyway, so the
 * frames are walked also while the mappings are stale (STALE).
 */
#define TAPROOT_PY_FRAMES_MAX		128
#define TAPROOT_PY_READ_MAX		128	/* frame_* and code_* offsets + size */

enum taproot_py_pos {
	TAPROOT_PY_POS_INT,	/* __s32 at frame_pos (3.9: f_lasti) */
	TAPROOT_PY_POS_PTR,	/* pointer at frame_pos into the code object */
	TAPROOT_PY_POS_NR
};

enum taproot_py_entry {
	TAPROOT_PY_ENTRY_ALL,	/* each frame its own activation (3.9) */
	TAPROOT_PY_ENTRY_FLAG,	/* __u8 at entry_off != 0 (3.11: is_entry) */
	TAPROOT_PY_ENTRY_OWNER,	/* __u8 at entry_off == 3 follows (3.12+: owner) */
	TAPROOT_PY_ENTRY_NR
};

struct taproot_python_layout {
	__u64 tss_key;		/* address of the int pthread key of tstates */
	__u64 code_type;	/* address of PyCode_Type */
	__u32 tsd_off;		/* fs base + tsd_off + 16 * key: the key's word */
	__u16 tstate_cframe;	/* tstate -> cframe pointer; 0: none */
	__u16 tstate_frame;	/* innermost frame's pointer, in tstate or cframe */
	__u16 frame_code;	/* pointer */
	__u16 frame_back;	/* pointer */
	__u16 frame_pos;	/* by pos_kind */
	__u16 entry_off;	/* by entry_kind (ALL: 0) */
	__u8 pos_kind;		/* enum taproot_py_pos */
	__u8 entry_kind;	/* enum taproot_py_entry */
	__u16 code_argcount;	/* int fields of the code object */
	__u16 code_kwonly;
	__u16 code_flags;
	__u16 code_firstlineno;
	__u16 reserved[3];	/* 0 */
};

/*
 * TAPROOT_IOC_PYTHON_SET: describe process @pid's interpreter (@forget 1:
 * forget it; layout and token are then not read). ENOENT: no mappings set
 * for @pid (MAPS_SET first); ESTALE as MAPS_SET; EPERM: the caller lacks
 * CAP_PERFMON and CAP_SYS_ADMIN; EINVAL: an offset past
 * TAPROOT_PY_READ_MAX - 8, an unknown kind, reserved fields not 0.
 */
struct taproot_python_set {
	__u32 pid;
	__u32 forget;		/* 0 or 1 */
	__u64 token;		/* from TAPROOT_IOC_PROC_TOKEN */
	struct taproot_python_layout layout;
};

/* A CPython frame of an interned stack or a sample. */
struct taproot_pyframe {
	__u64 code;		/* the code object's address */
	__u32 pos;		/* TAPROOT_PYFRAME_POS_MASK: position; ENTRY */
	__u32 cookie;
};

#define TAPROOT_PYFRAME_POS_MASK	0x3fffffffU
#define TAPROOT_PYFRAME_POS_NONE	TAPROOT_PYFRAME_POS_MASK
#define TAPROOT_PYFRAME_ENTRY		(1U << 31)

/*
 * HotSpot frames (TAPROOT_FEAT_JVM). A consumer that finds a HotSpot JVM
 * in a process whose mappings it set describes its code cache with
 * TAPROOT_IOC_JVM_SET: the code heaps, their segment maps, and where a
 * code blob, a Method and a ConstMethod keep the fields a walk reads, as
 * that JVM's own tables (vmStructs) give them. The heaps are not uploaded
 * mappings: a walk (TAPROOT_CFG_F_UNWIND) that reaches a pc in one of
 * them steps through its frame by the blob holding it, as HotSpot lays
 * frames out on x86-64, and goes on from the caller:
 *   - the blob: the heap's segment map has a byte a segment of
 *     1 << log2_segment bytes: 0xff free, 0 a block's first segment, else
 *     how many segments back to step (at most TAPROOT_JVM_HOPS_MAX steps);
 *     the blob starts block_size bytes into its block. Its fields are
 *     read at once (from the first to the last of them, within the blob's
 *     first TAPROOT_JVM_READ_MAX bytes), then the first 16 bytes of its
 *     name.
 *   - "nmethod" and "native nmethod" (compiled Java code; a JNI method's
 *     wrapper) keep no frame pointer. At the leaf's pc before code_begin +
 *     frame_complete (the prologue), the frame is 8 bytes, 16 in the
 *     prologue's last 4 bytes; at the leaf's pc in an epilogue (16 bytes
 *     of code read: "pop rbp" 16; a safepoint poll or "ret" 8), as that
 *     says; else frame_size words, or up to 6 words more where the first
 *     of them that is a return address into the heaps lies. The caller's
 *     pc is the frame's last word, its rbp the word before (a frame of 16
 *     bytes or more; else rbp is kept). At the deoptimization handler's
 *     pc, the frame is that of the pc at sp + orig_pc.
 *   - "Interpreter": by rbp: the caller's rbp at rbp, its pc at rbp + 8,
 *     its sp at rbp - 8; the frame's Method* at rbp - 24, its bytecode
 *     pointer at rbp - 64 (the leaf's in r13 while it runs, taken when it
 *     lies in the method's bytecodes).
 *   - "vtable chunks": the return address alone; any other blob (stubs,
 *     adapters) by its frame size, or by rbp when it has none.
 * Each such frame's pc in the ring is one no code can have (bits 63..62
 * are 01), which says what ran there at the sample:
 *   TAPROOT_UPC_JVM_METHOD | bci << 44 | Method* >> 3: an interpreted
 *       frame (its Method* 8-aligned, below 2^47); bci its bytecode index
 *       (TAPROOT_UPC_JVM_BCI_NONE: none in its bytecodes). Methods are
 *       freed only when their class is unloaded.
 *   TAPROOT_UPC_JVM_CODE | id << 31 | (pc & 0x7fffffff): compiled code or
 *       a stub; id the low 29 bits of the nmethod's compile id, which the
 *       consumer compares with the blob's when it names the pc (the JIT
 *       frees and reuses its code), TAPROOT_UPC_JVM_NOID for another
 *       blob; the pc is the one address of the code cache with these low
 *       31 bits (a code cache spans less than 2 GiB). A deoptimized
 *       frame's is its real pc's.
 * An interpreted frame whose Method* is not one as above goes as the
 * interpreter's code. Whatever ends the walk in the code cache (a blob
 * not found, a frame that does not hold, a read that fails, or the walk's
 * reads of memory past TAPROOT_JVM_WALK_READS before a JVM frame's step)
 * ends it as anywhere else, NO_MAPPING where it is not a read's fault,
 * and the consumer goes on from the stack copy.
 *
 * Like a CPython layout, a JVM's has the module follow pointers through
 * the process's memory and put what it found (Method* and compile ids) in
 * the records, so TAPROOT_IOC_JVM_SET checks the caller's capabilities
 * itself, and the layout is bound to the address space as the CPython
 * one is (a new MAPS_SET keeps it, an exec forgets it). Unlike it, it is
 * used only while the mappings are current (a walk needs them).
 */
#define TAPROOT_JVM_HEAPS_MAX		4
#define TAPROOT_JVM_READ_MAX		512	/* blob field offsets + size */
#define TAPROOT_JVM_HOPS_MAX		16
#define TAPROOT_JVM_FIELD_MAX		4096	/* Method, ConstMethod offsets */
#define TAPROOT_JVM_WALK_READS		512	/* a walk's reads, JVM frames stepped */

#define TAPROOT_UPC_JVM_METHOD		(1ULL << 62)
#define TAPROOT_UPC_JVM_CODE		(5ULL << 60)
#define TAPROOT_UPC_JVM_BCI_SHIFT	44
#define TAPROOT_UPC_JVM_BCI_NONE	0xffffU
#define TAPROOT_UPC_JVM_ID_SHIFT	31
#define TAPROOT_UPC_JVM_NOID		0x1fffffffU
#define TAPROOT_UPC_JVM_PC_MASK		0x7fffffffULL

/*
 * The pc of an interpreted frame of @method at bytecode index @bci, 0
 * when @method cannot be one (not 8-aligned, 0, or past 2^47); and the pc
 * of code at @pc in a blob whose compile id's low bits are @id
 * (TAPROOT_UPC_JVM_NOID: none). The module's walker writes them, and the
 * consumer's unwinder gives the frames it walks the same.
 */
static __inline__ __u64 taproot_upc_jvm_method(__u64 method, __u32 bci)
{
	if (!method || (method & 7) || (method >> 3) >> TAPROOT_UPC_JVM_BCI_SHIFT)
		return 0;
	return TAPROOT_UPC_JVM_METHOD |
	       (__u64)(bci & TAPROOT_UPC_JVM_BCI_NONE) << TAPROOT_UPC_JVM_BCI_SHIFT |
	       method >> 3;
}

static __inline__ __u64 taproot_upc_jvm_code(__u32 id, __u64 pc)
{
	return TAPROOT_UPC_JVM_CODE |
	       (__u64)(id & TAPROOT_UPC_JVM_NOID) << TAPROOT_UPC_JVM_ID_SHIFT |
	       (pc & TAPROOT_UPC_JVM_PC_MASK);
}

struct taproot_jvm_heap {
	__u64 low;		/* its code: [low, high) */
	__u64 high;
	__u64 segmap;		/* its segment map's address */
	__u32 log2_segment;	/* 0..20 */
	__u32 reserved;		/* 0 */
};

struct taproot_jvm_layout {
	struct taproot_jvm_heap heap[TAPROOT_JVM_HEAPS_MAX];	/* nr_heaps used */
	__u32 nr_heaps;		/* 1..TAPROOT_JVM_HEAPS_MAX */
	__u16 block_size;	/* sizeof(HeapBlock) */
	/* CodeBlob fields (offset + size <= TAPROOT_JVM_READ_MAX) */
	__u16 blob_name;	/* const char * */
	__u16 blob_code_begin;	/* pointer */
	__u16 blob_frame_size;	/* int, in words */
	__u16 blob_frame_complete; /* int, bytes from code_begin */
	__u16 nm_compile_id;	/* int, of an nmethod */
	__u16 nm_deopt_handler;	/* pointer, of an nmethod */
	__u16 nm_orig_pc;	/* int, of an nmethod: an offset from sp */
	/* Method and ConstMethod (below TAPROOT_JVM_FIELD_MAX) */
	__u16 method_const;	/* Method::_constMethod, pointer */
	__u16 const_size;	/* sizeof(ConstMethod): its bytecodes follow */
	__u16 const_code_size;	/* ConstMethod::_code_size, __u16 */
	__u16 reserved[3];	/* 0 */
};

/*
 * TAPROOT_IOC_JVM_SET: describe process @pid's JVM (@forget 1: forget it;
 * layout and token are then not read). Errors as TAPROOT_IOC_PYTHON_SET's;
 * EINVAL: a heap empty, not all heaps within 2 GiB of the lowest, an
 * offset out of range, nr_heaps 0 or too many, reserved fields not 0.
 */
struct taproot_jvm_set {
	__u32 pid;
	__u32 forget;		/* 0 or 1 */
	__u64 token;		/* from TAPROOT_IOC_PROC_TOKEN */
	struct taproot_jvm_layout layout;
};

#define TAPROOT_IOC_TABLE_ADD	_IOWR(TAPROOT_IOC_MAGIC, 1, struct taproot_table_add)
#define TAPROOT_IOC_TABLE_DEL	_IOW(TAPROOT_IOC_MAGIC, 2, __u32)
#define TAPROOT_IOC_PROC_TOKEN	_IOWR(TAPROOT_IOC_MAGIC, 3, struct taproot_proc_token)
#define TAPROOT_IOC_MAPS_SET	_IOW(TAPROOT_IOC_MAGIC, 4, struct taproot_maps_set)
#define TAPROOT_IOC_PYTHON_SET	_IOW(TAPROOT_IOC_MAGIC, 5, struct taproot_python_set)
#define TAPROOT_IOC_COUNTS_DRAIN _IOWR(TAPROOT_IOC_MAGIC, 6, struct taproot_counts_drain)
#define TAPROOT_IOC_JVM_SET	_IOW(TAPROOT_IOC_MAGIC, 7, struct taproot_jvm_set)

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
__TAPROOT_CHECK(sizeof(struct taproot_rec_stack) == 40, "stack record");
__TAPROOT_CHECK(sizeof(struct taproot_rec_sample_ref) == 64, "sample ref record");
__TAPROOT_CHECK(sizeof(struct taproot_unwind_rule) == 16, "unwind rule");
__TAPROOT_CHECK(sizeof(struct taproot_table_add) == 72, "table upload");
__TAPROOT_CHECK(sizeof(struct taproot_proc_map) == 32, "unwind mapping");
__TAPROOT_CHECK(sizeof(struct taproot_proc_token) == 16, "proc token");
__TAPROOT_CHECK(sizeof(struct taproot_maps_set) == 24, "maps upload");
__TAPROOT_CHECK(sizeof(struct taproot_python_layout) == 48, "python layout");
__TAPROOT_CHECK(sizeof(struct taproot_python_set) == 64, "python upload");
__TAPROOT_CHECK(sizeof(struct taproot_pyframe) == 16, "python frame");
__TAPROOT_CHECK(sizeof(struct taproot_jvm_layout) == 160, "jvm layout");
__TAPROOT_CHECK(sizeof(struct taproot_jvm_set) == 176, "jvm upload");
__TAPROOT_CHECK((TAPROOT_STACK_SLOTS & (TAPROOT_STACK_SLOTS - 1)) == 0,
		"stack slots: a power of two");
__TAPROOT_CHECK(TAPROOT_KUNWIND_NR - 1 <=
		TAPROOT_SNAP_UNWIND_MASK >> TAPROOT_SNAP_UNWIND_SHIFT,
		"a snapshot's flags hold every taproot_kunwind");
__TAPROOT_CHECK(!(TAPROOT_SNAP_UNWIND_MASK & ((TAPROOT_SNAP_F_UPCS << 1) - 1)) &&
		TAPROOT_SNAP_UNWIND_MASK <= 0xffff,
		"a snapshot's unwind bits: apart from its flags, in 16 bits");
#undef __TAPROOT_CHECK

#endif /* _UAPI_LINUX_TAPROOT_H */
