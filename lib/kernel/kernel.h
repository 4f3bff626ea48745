/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, kernel interface layer: the generic netlink client, the
 * rings, kernel symbols and loading the module (lib/kernel/).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_KERNEL_H
#define TAPROOT_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

/* ------------------------------------------------- netlink: the module */

/*
 * A connection to the taproot generic netlink family. One request at a time;
 * requests block until the kernel answers.
 */
struct taproot_nl;

/* What TAPROOT_CMD_GET_INFO tells about the loaded module. */
struct taproot_info {
	uint32_t abi_version;		/* TAPROOT_ABI_VERSION of the module */
	uint32_t nr_cpus;		/* possible CPUs = number of rings */
	char kernel_release[65];	/* utsname release, NUL terminated */
	uint64_t features;		/* TAPROOT_FEAT_* */
	bool running;			/* sampling is started */
	uint32_t page_size;		/* kernel page size, the mmap unit */
};

/*
 * Connect to the taproot family and check that the module speaks this
 * library's ABI (one GET_INFO request): on success *@nlp is a handle the
 * caller closes with taproot_nl_close(). Errors: -TAPROOT_ENOMODULE when
 * the family is not registered (the module is not loaded), -TAPROOT_EABI
 * when it speaks another ABI version, -EPERM without CAP_PERFMON or
 * CAP_SYS_ADMIN, or any error of taproot_nl_get_info(); *@nlp is then NULL.
 */
int taproot_nl_open(struct taproot_nl **nlp);

/* Close @nl (NULL is allowed) and free it. */
void taproot_nl_close(struct taproot_nl *nl);

/*
 * Ask the module for its description (TAPROOT_CMD_GET_INFO) and fill @info.
 * Every attribute of the reply is validated before use (the rules are at
 * tp_info_parse() in lib/kernel/kernel-private.h). Errors: -EPERM (with the
 * kernel's message), other -errno the kernel or the socket reported,
 * -TAPROOT_EABI, -TAPROOT_EPROTO for a reply that is malformed or missing.
 * On error @info's contents are unspecified, except that abi_version holds
 * the module's version after -TAPROOT_EABI.
 */
int taproot_nl_get_info(struct taproot_nl *nl, struct taproot_info *info);

/*
 * The loaded module's description, through a connection of its own:
 * taproot_nl_open(), taproot_nl_get_info(), taproot_nl_close(), and their
 * errors.
 */
int taproot_module_info(struct taproot_info *info);

/*
 * 0 when a module of ABI version @module_abi can be used by this library
 * (it equals TAPROOT_ABI_VERSION), else -TAPROOT_EABI with the message
 * "module ABI version X, this tool speaks Y: load the matching taproot.ko".
 */
int taproot_abi_check(uint32_t module_abi);

/*
 * The short name of feature bit @bit of TAPROOT_A_FEATURES ("sampling",
 * "kstack", ...), or NULL for a bit this library does not know.
 */
const char *taproot_feature_name(unsigned int bit);

/* ------------------------------------------ netlink: configuration */

/* Bits of taproot_config.set: which fields carry a value. */
enum taproot_config_field {
	TAPROOT_CONFIG_FREQ		= 1U << 0,	/* freq_hz */
	TAPROOT_CONFIG_KSTACK		= 1U << 1,	/* kstack_depth */
	TAPROOT_CONFIG_USTACK		= 1U << 2,	/* ustack_bytes */
	TAPROOT_CONFIG_EVENTS		= 1U << 3,	/* events */
	TAPROOT_CONFIG_FLAGS		= 1U << 4,	/* flags */
	TAPROOT_CONFIG_RING_PAGES	= 1U << 5,	/* ring_pages */
	TAPROOT_CONFIG_WATERMARK	= 1U << 6,	/* watermark */
	TAPROOT_CONFIG_TGIDS		= 1U << 7,	/* nr_tgids, tgids */
	TAPROOT_CONFIG_SCHED_ONE_IN	= 1U << 8,	/* sched_one_in */
	TAPROOT_CONFIG_UNWIND_FRAMES	= 1U << 9,	/* unwind_frames */
	TAPROOT_CONFIG_UNWIND_MEM	= 1U << 10,	/* unwind_mem_mib */
	TAPROOT_CONFIG_ALL		= (1U << 11) - 1
};

/*
 * The sampling configuration (TAPROOT_A_CFG_*). For a SET_CONFIG request
 * only the fields whose TAPROOT_CONFIG_* bit is in @set are sent, and only
 * those change; GET_CONFIG fills every field and sets every bit.
 */
struct taproot_config {
	uint32_t set;			/* TAPROOT_CONFIG_* */
	uint32_t freq_hz;		/* 1..TAPROOT_FREQ_MAX per CPU */
	uint32_t kstack_depth;		/* 0..TAPROOT_KSTACK_MAX frames */
	uint32_t ustack_bytes;		/* 0..TAPROOT_USTACK_MAX, multiple of 8 */
	uint32_t events;		/* TAPROOT_EV_* */
	uint32_t flags;			/* TAPROOT_CFG_F_* */
	uint32_t ring_pages;		/* data pages per CPU, a power of two */
	uint32_t watermark;		/* unread bytes that wake poll() */
	uint32_t nr_tgids;		/* 0: the whole system */
	uint32_t tgids[64];		/* TAPROOT_MAX_TGIDS processes */
	uint32_t sched_one_in;		/* 1..TAPROOT_SCHED_ONE_IN_MAX: one
					   off-CPU interval in N is captured */
	uint32_t unwind_frames;		/* 1..TAPROOT_UNWIND_FRAMES_MAX user
					   frames the module walks at most */
	uint32_t unwind_mem_mib;	/* 1..TAPROOT_UNWIND_MEM_MAX MiB of
					   uploaded tables and mappings */
	/*
	 * With TAPROOT_CONFIG_FLAGS: 0, flags is sent whole; else only these
	 * bits of flags are to change (taproot_config_set_kv()'s flag keys),
	 * and taproot_nl_set_config() keeps the module's other bits.
	 */
	uint32_t flags_given;
};

/*
 * Send the fields of @cfg that @cfg->set names (TAPROOT_CMD_SET_CONFIG).
 * Every given field is checked against the ABI's limits first (-EINVAL,
 * with a message naming the field, and nothing is sent); the kernel then
 * applies all of them or none. With cfg->flags_given, the module's flags
 * are read first (GET_CONFIG) and only those bits change. Errors: -EINVAL (@cfg->set is empty or
 * names unknown bits, a value out of range, or the kernel's refusal with
 * its message), -EBUSY (freq or ring-pages while sampling runs, ring-pages
 * while a ring is mapped, follow turned on while sampling runs without it), -EPERM, other -errno.
 */
int taproot_nl_set_config(struct taproot_nl *nl, const struct taproot_config *cfg);

/*
 * Fill @cfg with the module's current configuration (TAPROOT_CMD_GET_CONFIG);
 * cfg->set is TAPROOT_CONFIG_ALL. The reply is validated (tp_config_parse()).
 * Errors: as taproot_nl_get_info().
 */
int taproot_nl_get_config(struct taproot_nl *nl, struct taproot_config *cfg);

/*
 * Set one field of @cfg from a KEY VALUE pair as taprootctl's "config set"
 * takes it, and add its bit to cfg->set:
 *   freq HZ            1..TAPROOT_FREQ_MAX
 *   kstack DEPTH       0..TAPROOT_KSTACK_MAX
 *   ustack BYTES       0..TAPROOT_USTACK_MAX, a multiple of 8
 *   events LIST        comma list of sample,switch,waking,fork,exec,exit;
 *                      or "all" or "none"
 *   idle on|off        TAPROOT_CFG_F_SAMPLE_IDLE
 *   follow on|off      TAPROOT_CFG_F_FOLLOW: the pid filter takes in the
 *                      processes its processes fork
 *   unwind on|off      TAPROOT_CFG_F_UNWIND: user stacks unwound in the
 *                      module from uploaded tables (on by default)
 *   ustack-private on|off  TAPROOT_CFG_F_USTACK_PRIVATE: a sample the
 *                      module cannot unwind carries no stack bytes
 *   unwind-verify on|off   TAPROOT_CFG_F_UNWIND_VERIFY: unwound samples
 *                      carry the leaf's snapshot too, to compare
 *   count on|off       TAPROOT_CFG_F_COUNT: unwound samples are counted in
 *                      the module's tables (a consumer drains them)
 *   (the flag keys set their bit in flags and flags_given, so that the
 *   module's other flags are kept)
 *   ring-pages N       power of two, TAPROOT_RING_PAGES_MIN..._MAX
 *   watermark BYTES    at least 1 (the kernel bounds it by the data size)
 *   pids PID[,PID...]  at most TAPROOT_MAX_TGIDS, each > 0, no repeats;
 *                      or "all" (the whole system)
 *   sched-one-in N     1..TAPROOT_SCHED_ONE_IN_MAX: one off-CPU interval
 *                      in N gets SWITCH/WAKING records
 *   unwind-frames N    1..TAPROOT_UNWIND_FRAMES_MAX user frames the
 *                      module walks at most
 *   unwind-mem MIB     1..TAPROOT_UNWIND_MEM_MAX MiB of tables and
 *                      mappings the consumer may upload
 * Numbers are decimal. Errors: -EINVAL with a message for the user
 * ("unknown key", "given twice", "VALUE: why"); @cfg is then unchanged.
 */
int taproot_config_set_kv(struct taproot_config *cfg, const char *key,
			  const char *value);

/*
 * The name of TAPROOT_EV_* bit @bit ("sample", "switch", ...) or NULL for a
 * bit this library does not know.
 */
const char *taproot_event_name(unsigned int bit);

/* --------------------------------------- netlink: sampling and stats */

/*
 * Start or stop sampling on every CPU (TAPROOT_CMD_START / _STOP).
 * Errors: -EALREADY when sampling already is in that state (with the
 * message "sampling is already running" / "... not running"), -EPERM,
 * other -errno with the kernel's message.
 */
int taproot_nl_start(struct taproot_nl *nl);
int taproot_nl_stop(struct taproot_nl *nl);

/* TAPROOT_KUNWIND_NR of <linux/taproot.h> (nl-stats.c asserts it). */
#define TAPROOT_STATS_KUNWIND_NR	10

/* One CPU's counters, cumulative for the life of the module. */
struct taproot_cpu_stats {
	uint32_t cpu;
	uint64_t samples;		/* timer ticks that passed the filters */
	uint64_t records;		/* records written to the ring */
	uint64_t bytes;			/* bytes written to the ring */
	uint64_t lost_full;		/* records lost: ring full */
	uint64_t lost_nested;		/* records lost: writers nested too deep */
	uint64_t ustack_faults;		/* samples whose user stack copy faulted */
	uint64_t switches;		/* switch-outs of filtered tasks that
					   left the CPU blocked or preempted */
	uint64_t switches_selected;	/* of those, selected for capture */
	uint64_t wakings;		/* WAKING records written */
	/*
	 * Samples by how the module's walk of their user stack ended, enum
	 * taproot_kunwind (taproot_kunwind_name()); [TAPROOT_KUNWIND_NONE]:
	 * not walked.
	 */
	uint64_t unwind[TAPROOT_STATS_KUNWIND_NR];
	uint64_t stacks;		/* STACK records written */
	uint64_t stack_refs;		/* SAMPLE_REF records written */
	uint64_t py_walks;		/* walks of CPython frames */
	uint64_t py_frames;		/* the frames they found */
	uint64_t py_cut;		/* walks cut short (a forged chain, a lying layout) */
	uint64_t counted;		/* samples counted in the module's table */
	uint64_t count_full;		/* samples its table had no room for */
};

/*
 * TAPROOT_CMD_GET_STATS: on success *@cpus is an array of *@nr entries,
 * one per possible CPU, sorted by CPU number, allocated with malloc and
 * owned by the caller (free()); *@running tells whether sampling runs.
 * The reply is validated (tp_stats_parse()). Errors: as
 * taproot_nl_get_info(); *@cpus is then NULL and *@nr 0.
 */
int taproot_nl_get_stats(struct taproot_nl *nl, bool *running,
			 struct taproot_cpu_stats **cpus, size_t *nr);

/* The counters of TAPROOT_CMD_GET_STATS that are not per CPU. */
struct taproot_module_stats {
	bool has_follow;		/* the module reports the two below */
	uint32_t followed;		/* processes followed now (TAPROOT_CFG_F_FOLLOW) */
	uint64_t follow_full;		/* forks not followed since load: the set was full */
	bool has_unwind;		/* the module reports the three below */
	uint64_t unwind_mem_used;	/* bytes of uploaded tables and mappings */
	uint32_t unwind_tables;		/* tables uploaded now */
	uint32_t unwind_procs;		/* processes with mappings now */
};

/* As taproot_nl_get_stats(), with the module's own counters in *@ms. */
int taproot_nl_get_stats_all(struct taproot_nl *nl, bool *running,
			     struct taproot_module_stats *ms,
			     struct taproot_cpu_stats **cpus, size_t *nr);

/* ------------------------------------------ netlink: notifications */

/*
 * A subscription to the "session" multicast group: its own socket, so
 * that notifications never mix with the replies of a struct taproot_nl.
 */
struct taproot_nl_sub;

/* A TAPROOT_CMD_NOTIFY event. */
struct taproot_notification {
	uint32_t what;			/* TAPROOT_NOTIFY_* */
	bool running;			/* sampling state after the change */
};

/*
 * Subscribe to the module's notifications: *@subp is a handle with a
 * non-blocking socket the caller may poll (taproot_nl_sub_fd()) and closes
 * with taproot_nl_sub_close(). Errors: -TAPROOT_ENOMODULE, -EPERM, other
 * -errno; *@subp is then NULL.
 */
int taproot_nl_subscribe(struct taproot_nl_sub **subp);
void taproot_nl_sub_close(struct taproot_nl_sub *sub);

/* The socket's fd, for poll(): POLLIN when a notification may be read. */
int taproot_nl_sub_fd(const struct taproot_nl_sub *sub);

/*
 * Read the next notification into @n without blocking: 1 when one was
 * read, 0 when none is pending. Messages that are not taproot notifications
 * from the kernel are skipped. Errors: -ENOBUFS when the socket overran and
 * notifications were lost (ask GET_INFO for the state; the subscription
 * goes on), -TAPROOT_EPROTO for a malformed notification (skipped; the
 * next call goes on), other -errno.
 */
int taproot_nl_sub_read(struct taproot_nl_sub *sub, struct taproot_notification *n);

/* ------------------------------------------------------- the rings */

/*
 * The per-CPU rings of /dev/taproot, mapped for reading. There is one
 * consumer at a time: the module refuses a second open.
 */
struct taproot_ring;
struct taproot_rec_header;	/* <linux/taproot.h> */

/*
 * Open /dev/taproot and map the ring of every possible CPU below
 * @info->nr_cpus (from taproot_nl_get_info()): CPUs missing from
 * /sys/devices/system/cpu/possible have no ring and are skipped. Each
 * producer page is checked (ABI version, CPU, page size, data offset, data
 * size a power of two) before its data is mapped. Reading starts where the
 * consumer page says the last reader stopped. Errors: -TAPROOT_ENOMODULE
 * (no /dev/taproot), -EBUSY ("another consumer has /dev/taproot open"),
 * -EPERM or -EACCES (needs CAP_PERFMON or CAP_SYS_ADMIN), -TAPROOT_EABI,
 * -TAPROOT_EPROTO for a producer page that breaks the layout, other -errno.
 */
int taproot_ring_open(const struct taproot_info *info, struct taproot_ring **rp);

/* Unmap every ring, close /dev/taproot and free @r (NULL is allowed). */
void taproot_ring_close(struct taproot_ring *r);

/*
 * The fd to poll() for POLLIN when a ring has data to read: /dev/taproot,
 * or with a reader thread an eventfd it signals (taproot_ring_consume()
 * clears it).
 */
int taproot_ring_fd(const struct taproot_ring *r);

/* taproot_ring_start_reader()'s default buffer, over all CPUs. */
#define TAPROOT_RING_BUFFER_DEFAULT	(64U << 20)

/*
 * Start a thread that keeps the kernel's rings drained into buffers of
 * this process while the caller is busy with other work (a table compile,
 * an ELF file read for the first time can take longer than a ring holds
 * at high rates): records are lost only when a buffer is full too. The
 * buffers share @bytes (at least one ring's size per CPU, each a power of
 * two; their pages are touched only as records arrive). The thread copies
 * whole records only, when the module wakes poll() (the watermark);
 * taproot_ring_consume() copies what is left itself first. Delivery and
 * validation are unchanged. Once per ring; closed by taproot_ring_close().
 * Returns 0, -EALREADY, -EINVAL (@bytes 0), -ENOMEM, other -errno.
 */
int taproot_ring_start_reader(struct taproot_ring *r, size_t bytes);

/*
 * Wait up to @timeout_ms (-1: forever) for data. Returns 1 when a ring is
 * readable, 0 on timeout, -EINTR when a signal arrived, other -errno.
 */
int taproot_ring_poll(struct taproot_ring *r, int timeout_ms);

/* The callbacks of taproot_ring_consume(). */
struct taproot_ring_ops {
	/*
	 * One valid record of ring @cpu (taproot_rec_check() passed). @rec
	 * points into the mapping and is valid until the callback returns.
	 * Return 0 to go on, anything else to stop consuming: the records
	 * delivered so far are released, the others stay for the next call.
	 */
	int (*record)(const struct taproot_rec_header *rec, unsigned int cpu,
		      void *arg);
	/*
	 * Optional: ring @cpu is corrupt at position @pos (@why says how);
	 * its unread bytes, up to the head seen, are dropped.
	 */
	void (*corrupt)(unsigned int cpu, uint64_t pos, const char *why,
			void *arg);
};

/*
 * Deliver the records every ring holds now, in global time_ns order (a
 * k-way merge over the CPUs, ties by CPU number; one CPU's records keep
 * their ring order), then release the space of those delivered.
 *
 * Order holds within one call only: a record published on one CPU after
 * this call read that CPU's head is delivered by a later call, even when
 * its timestamp is earlier than records delivered now. A consumer that
 * needs a total order must buffer across calls (e.g. hold records back
 * for a few poll intervals) — this library does not.
 *
 * Each record is validated first; a record that fails means its ring is
 * corrupt: ops->corrupt hears about it, the ring's invalid count grows,
 * and everything unread in that ring up to the head seen is dropped —
 * the reader does not guess where the next record starts. Records of
 * types this library does not know are delivered too (skip them by size).
 * In-band TAPROOT_REC_LOST records are delivered like any other.
 *
 * Returns the number of records delivered (>= 0); a callback that stops
 * the call early does not make it an error.
 */
int taproot_ring_consume(struct taproot_ring *r,
			 const struct taproot_ring_ops *ops, void *arg);

/* What a ring's producer page and this reader know about it. */
struct taproot_ring_stats {
	uint32_t cpu;
	uint64_t data_size;		/* D */
	uint64_t records;		/* producer: records written, cumulative */
	uint64_t lost[4];		/* producer: lost[TAPROOT_LOST_*], cumulative */
	uint64_t unread;		/* bytes between tail and head now, buffered ones too */
	uint64_t invalid;		/* corrupt records this reader met */
	uint64_t buffered;		/* of unread, in the reader thread's buffer */
	uint64_t buffer_size;		/* that buffer's size (0: no reader thread) */
	uint64_t buffer_peak;		/* most bytes it held at once */
	uint64_t buffer_resident;	/* its bytes in memory now (whole pages) */
};

/* Number of rings mapped (possible CPUs below nr_cpus). */
unsigned int taproot_ring_count(const struct taproot_ring *r);

/* Fill @st for the @i-th ring mapped (0 <= @i < taproot_ring_count()). */
void taproot_ring_stats(const struct taproot_ring *r, unsigned int i,
			struct taproot_ring_stats *st);

/* Records lost so far, of every cause, summed over the rings. */
uint64_t taproot_ring_lost(const struct taproot_ring *r);

/*
 * Check the record at @rec, with @avail bytes readable there (the unread
 * bytes of its ring from it on), before anything reads it: the header fits
 * and @rec is 8-byte aligned; size >= the header, a multiple of 8, <=
 * @avail; a SAMPLE holds its fixed part, kstack_nr <= TAPROOT_KSTACK_MAX,
 * ustack_len <= TAPROOT_USTACK_MAX, and both arrays fit in size; LOST,
 * FORK and EXIT records, and SWITCH and WAKING records without a stack
 * snapshot, have exactly their fixed size; a snapshot (..._F_STACKS)
 * follows the fixed part whole, with its kstack_nr and ustack_len limited
 * as a sample's and its arrays inside size, its TAPROOT_SNAP_UNWIND() a
 * TAPROOT_KUNWIND_*, NONE without USER_REGS, neither COMPLETE nor
 * MAX_FRAMES without UPCS; with TAPROOT_SNAP_F_UPCS USER_REGS, ustack_len
 * a multiple of 8 in 8..8 * TAPROOT_UNWIND_FRAMES_MAX, no USTACK_TOP, not
 * both USTACK_TRUNC and _FAULT, USTACK_TRUNC exactly with unwind
 * MAX_FRAMES and USTACK_FAULT exactly with an unwind other than COMPLETE
 * and MAX_FRAMES (a fallback, or NONE); an EXEC's filename_len is
 * 1..TAPROOT_EXEC_FILENAME_MAX, inside size, and its last byte the only
 * NUL. A SAMPLE's unwind is a TAPROOT_KUNWIND_*; upc_nr is 0 without
 * UPCS, <= TAPROOT_UNWIND_FRAMES_MAX with it, its pcs in size too; UPCS
 * needs USER_REGS (not KTHREAD) and unwind not NONE; UREGS_CALLER and
 * VERIFY need UPCS and exclude each other; PYTHON needs USER_REGS (not
 * KTHREAD), its header and py_nr (1..TAPROOT_PY_FRAMES_MAX) frames in
 * size, reserved 0. A STACK holds its fixed part,
 * id != 0, its counts limited as a sample's, py_nr <= TAPROOT_PY_FRAMES_MAX
 * (0 without user pcs), and its pcs and Python frames in size; with
 * USER_REGS, upc_nr >= 1 and unwind COMPLETE or MAX_FRAMES; without, no
 * user pcs. A SAMPLE_REF holds its fixed part (more is padding), and
 * stack_id != 0. Other types are only checked as headers.
 * Returns 0, or -TAPROOT_ECORRUPT with *@why (static text) saying why.
 */
int taproot_rec_check(const void *rec, size_t avail, const char **why);

/*
 * The stack snapshot of a SWITCH or WAKING record that taproot_rec_check()
 * passed, or NULL when it has none (no ..._F_STACKS flag, another type).
 * Its kstack[] follows it, then its ustack bytes (with TAPROOT_SNAP_F_UPCS,
 * ustack_len / 8 u64 user pcs); TAPROOT_SNAP_UNWIND(flags) says how the
 * module's walk of its user stack ended.
 */
struct taproot_stack_snap;	/* <linux/taproot.h> */
const struct taproot_stack_snap *taproot_rec_snap(const struct taproot_rec_header *rec);

/*
 * The CPython frames of a SAMPLE that taproot_rec_check() passed: their
 * number, the first in *@py (NULL and 0 without TAPROOT_SAMPLE_F_PYTHON).
 */
struct taproot_rec_sample;	/* <linux/taproot.h> */
struct taproot_pyframe;
unsigned int taproot_rec_sample_python(const struct taproot_rec_sample *s,
				       const struct taproot_pyframe **py);

/* The bytes of a STACK record's fixed part, pcs and Python frames (those after it). */
struct taproot_rec_stack;	/* <linux/taproot.h> */
size_t taproot_rec_stack_size(const struct taproot_rec_stack *st);

/* "sample", "lost", "switch", ... or NULL for a type this library does not know. */
const char *taproot_rec_type_name(unsigned int type);

/* ------------------------------------- the rings: unwind uploads */

/*
 * Uploads to the module's unwinder through the open /dev/taproot of @r
 * (lib/kernel/utab.c; <linux/taproot.h>, "Unwinding in the module"). What
 * is uploaded belongs to @r's file: taproot_ring_close() frees it all.
 * Common errors: -ENOSPC beyond the module's unwind memory, -EFAULT (a
 * pointer of the upload the module could not read), -ENOTTY (a module
 * without uploads), -EINTR, -ENOMEM; each with a message.
 */
struct taproot_table_add;	/* <linux/taproot.h> */
struct taproot_proc_map;
struct taproot_python_layout;
struct taproot_jvm_layout;

/*
 * Upload the table @t describes (its table_id is not read). 0 (a new
 * table, *@table_id set), 1 (a table of this build ID was there: its id in
 * *@table_id), or -errno with a message: -EINVAL for a malformed table.
 */
int taproot_ring_table_add(struct taproot_ring *r, const struct taproot_table_add *t,
			   uint32_t *table_id);

/* Delete table @table_id (mappings that use it keep it). -ENOENT: no such table. */
int taproot_ring_table_del(struct taproot_ring *r, uint32_t table_id);

/*
 * The token of process @pid's address space now, to get before reading
 * its /proc/PID/maps for taproot_ring_maps_set(). -ESRCH: no such process;
 * -EINVAL: a kernel thread; -EOPNOTSUPP: a kernel where the module cannot
 * tell when mappings change.
 */
int taproot_ring_proc_token(struct taproot_ring *r, uint32_t pid, uint64_t *token);

/*
 * Set process @pid's @nr mappings (sorted by start, disjoint; nr 0 forgets
 * the process, whatever @token). -ESTALE when the address space changed
 * since the token: get a new token and read the maps again. -ENOENT: a
 * table_id that is not uploaded; -EINVAL: malformed; -ESRCH.
 */
int taproot_ring_maps_set(struct taproot_ring *r, uint32_t pid, uint64_t token,
			  const struct taproot_proc_map *maps, uint32_t nr);

/*
 * Take the module's counted stacks out (TAPROOT_IOC_COUNTS_DRAIN) into
 * @entries, room for @max (TAPROOT_COUNT_SLOTS per ring's CPU number up
 * to the highest: -ENOSPC otherwise); *@nr of them written, each to be
 * checked with taproot_count_check(). Read the rings up to their heads
 * after it: the STACK records the entries name are there by then.
 */
struct taproot_count;
int taproot_ring_counts_drain(struct taproot_ring *r, struct taproot_count *entries,
			      uint32_t max, uint32_t *nr);

/*
 * Whether @e, an entry of a drain, is one the module can write: a nonzero
 * stack id and count, a CPU below @nr_cpus, the period of a rate of 1 to
 * TAPROOT_FREQ_MAX Hz. 0, or -TAPROOT_ECORRUPT with *@why (static text).
 */
int taproot_count_check(const struct taproot_count *e, uint32_t nr_cpus, const char **why);

/*
 * Describe process @pid's CPython interpreter by @layout (NULL: forget
 * it), after its mappings were set with @token. -ENOENT: no mappings set;
 * -ESTALE, -ESRCH as taproot_ring_maps_set(); -EPERM: the caller lacks
 * CAP_PERFMON and CAP_SYS_ADMIN now; -ENOTTY: a module without it.
 */
int taproot_ring_python_set(struct taproot_ring *r, uint32_t pid, uint64_t token,
			    const struct taproot_python_layout *layout);

/* The same for its HotSpot JVM's code cache (ABI: "HotSpot frames"). */
int taproot_ring_jvm_set(struct taproot_ring *r, uint32_t pid, uint64_t token,
			 const struct taproot_jvm_layout *layout);

/*
 * "none", "complete", "max-frames", "no-proc", ...: enum taproot_kunwind
 * @end, how the module's walk of a user stack ended; NULL past the last.
 */
const char *taproot_kunwind_name(unsigned int end);

/* --------------------------------------------- kernel symbols */

/* The kernel's text symbols (/proc/kallsyms), sorted by address. */
struct taproot_ksyms;

/*
 * Load the text symbols (types t, T, w, W) of the kernel and its modules
 * from @path (NULL: /proc/kallsyms). Lines are validated ("ADDR TYPE NAME"
 * with an optional "\t[MODULE]"); a malformed line fails the load
 * (-TAPROOT_EPROTO naming the line). Bounded: at most 8 Mi symbols, names
 * up to 511 bytes. Errors: -TAPROOT_EKPTR when every address reads 0
 * (kernel.kptr_restrict hides them from this process), -ENOENT, -ENOMEM,
 * -E2BIG past the bounds, other -errno.
 */
int taproot_ksyms_load(const char *path, struct taproot_ksyms **kp);

/* The same from an open stream (not closed). */
int taproot_ksyms_read(FILE *f, struct taproot_ksyms **kp);
/*
 * As taproot_ksyms_load(), also handing back the text read (*@textp,
 * malloc'ed, *@lenp bytes), for a caller that keeps it (record --raw).
 * -EFBIG beyond @max bytes.
 */
int taproot_ksyms_load_text(const char *path, size_t max, struct taproot_ksyms **kp,
			    char **textp, size_t *lenp);

void taproot_ksyms_free(struct taproot_ksyms *k);

/* Number of symbols loaded. */
size_t taproot_ksyms_count(const struct taproot_ksyms *k);

/*
 * The symbol holding @addr: its name (valid until taproot_ksyms_free()),
 * with *@off the offset into it and *@module its module (NULL for the core
 * kernel) when those are not NULL. A symbol is taken to end where the next
 * one starts; the last symbol of the core kernel or of a module extends at
 * most 64 KiB. NULL when no symbol holds @addr.
 */
const char *taproot_ksyms_lookup(const struct taproot_ksyms *k, uint64_t addr,
				 uint64_t *off, const char **module);

/*
 * Write "name+0xoff" (with " [module]" for a module) for @addr into @buf
 * of @len bytes; returns false, leaving "" in @buf, when no symbol holds it.
 */
bool taproot_ksyms_format(const struct taproot_ksyms *k, uint64_t addr,
			  char *buf, size_t len);

/* ----------------------------------------------- the module: load/unload */

/*
 * Find the taproot.ko to load, in this order:
 *   1. @ko, when not NULL: that file, which must exist;
 *   2. $TAPROOT_KO, when set and not empty: that file, which must exist;
 *   3. the build tree next to the running program:
 *      DIR/../build/kmod/RELEASE/kmod/taproot.ko, where DIR holds the
 *      executable (/proc/self/exe) and RELEASE is uname -r;
 *   4. the installed module named "taproot" (libkmod lookup in
 *      /lib/modules/RELEASE).
 * On success *@path is the file found (caller frees). Errors: -ENOENT when
 * the file of 1 or 2 does not exist, -TAPROOT_ENOKO when 3 and 4 find
 * nothing (the message lists what was tried), other -errno.
 */
int taproot_module_find(const char *ko, char **path);

/*
 * Load taproot.ko into the running kernel with libkmod. @ko is as for
 * taproot_module_find(); @params is the module's parameter string
 * ("name=value name2=\"value with spaces\"", as modprobe takes it) or NULL.
 * Parameter names are checked against those the module declares (its
 * modinfo) before the kernel sees them, since the kernel only warns about
 * unknown ones. On success, when @path is not NULL, *@path is the file that
 * was loaded (caller frees). Errors: -TAPROOT_ELOADED, -ENOENT /
 * -TAPROOT_ENOKO (nothing to load), -EPERM (needs CAP_SYS_MODULE),
 * -TAPROOT_EMODPARAM (an unknown parameter, or one the module refused),
 * -ENOEXEC (built for another kernel), other -errno from the kernel; each
 * with a message saying what to do.
 */
int taproot_module_load(const char *ko, const char *params, char **path);

/*
 * Unload taproot.ko. Errors: -TAPROOT_ENOMODULE when it is not loaded,
 * -EBUSY while something holds it (/dev/taproot open or mapped), -EPERM,
 * other -errno.
 */
int taproot_module_unload(void);

#endif /* TAPROOT_KERNEL_H */
