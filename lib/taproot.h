/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot: the userspace side of taproot, shared by taprootctl and
 * taprootd. Public interface.
 *
 * Conventions, for every function below unless its contract says otherwise:
 *
 *  - A function that can fail returns an int: 0 (or a documented positive
 *    value) on success, a negative value on failure. The negative value is
 *    either -errno, for an error the system or the kernel reported, or
 *    -TAPROOT_E*, for a condition of taproot's own (the codes start above
 *    the last errno, so the two never collide).
 *  - A failure is never silent: the failing call records a message for this
 *    thread, with the details only it knows (the kernel's extended-ACK text,
 *    the two ABI versions, the paths it tried). taproot_errmsg() returns it.
 *  - Types are opaque; the library allocates them and the caller gives them
 *    back to the matching _close/_free function. Strings passed in are
 *    borrowed for the duration of the call only. Strings returned through an
 *    out-parameter (char **) are allocated with malloc and owned by the
 *    caller, who frees them with free().
 *  - Nothing here is safe to call on one handle from two threads at once;
 *    distinct handles are independent.
 */
#ifndef TAPROOT_H
#define TAPROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TAPROOT_VERSION	"0.1.0"

/* ---------------------------------------------------------------- errors */

/*
 * taproot's own error codes, with the generic message of each. The list
 * generates both the enum and the message table (lib/error.c); a failing
 * call usually records a more precise message, see taproot_errmsg().
 */
#define TAPROOT_ERRORS(E)						\
	E(NOMODULE,  "taproot module not loaded (run 'taprootctl load')") \
	E(ABI,       "the taproot module speaks another ABI version: load the matching taproot.ko") \
	E(PROTO,     "malformed message from the taproot module")	\
	E(LOADED,    "taproot module already loaded")			\
	E(NOKO,      "taproot.ko not found")				\
	E(MODPARAM,  "the module refused its parameters; see dmesg")	\
	E(AMBIGUOUS, "ambiguous abbreviation")				\
	E(CORRUPT,   "corrupt record in a taproot ring")		\
	E(KPTR,      "kernel addresses are hidden (kernel.kptr_restrict)")

enum taproot_error {
	TAPROOT_E_FIRST = 4095,		/* MAX_ERRNO: no errno is above */
#define TAPROOT_E_ENUM(name, msg) TAPROOT_E##name,
	TAPROOT_ERRORS(TAPROOT_E_ENUM)
#undef TAPROOT_E_ENUM
	TAPROOT_E_LAST
};

/*
 * The generic message for @err, a negative value returned by this library
 * (-errno or -TAPROOT_E*). Never NULL; the string is static.
 */
const char *taproot_strerror(int err);

/*
 * The message to show a user for @err: the one the last failing call of
 * this thread recorded, when that call returned @err, else
 * taproot_strerror(@err). Never NULL. The string stays valid until the next
 * call into this library from the same thread.
 */
const char *taproot_errmsg(int err);

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
 * tp_info_parse() in lib/taproot-private.h). Errors: -EPERM (with the
 * kernel's message), other -errno the kernel or the socket reported,
 * -TAPROOT_EABI, -TAPROOT_EPROTO for a reply that is malformed or missing.
 * On error @info's contents are unspecified, except that abi_version holds
 * the module's version after -TAPROOT_EABI.
 */
int taproot_nl_get_info(struct taproot_nl *nl, struct taproot_info *info);

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
	TAPROOT_CONFIG_ALL		= (1U << 9) - 1
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
};

/*
 * Send the fields of @cfg that @cfg->set names (TAPROOT_CMD_SET_CONFIG).
 * Every given field is checked against the ABI's limits first (-EINVAL,
 * with a message naming the field, and nothing is sent); the kernel then
 * applies all of them or none. Errors: -EINVAL (@cfg->set is empty or
 * names unknown bits, a value out of range, or the kernel's refusal with
 * its message), -EBUSY (freq or ring-pages while sampling runs, ring-pages
 * while a ring is mapped), -EPERM, other -errno.
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
 *   ring-pages N       power of two, TAPROOT_RING_PAGES_MIN..._MAX
 *   watermark BYTES    at least 1 (the kernel bounds it by the data size)
 *   pids PID[,PID...]  at most TAPROOT_MAX_TGIDS, each > 0, no repeats;
 *                      or "all" (the whole system)
 *   sched-one-in N     1..TAPROOT_SCHED_ONE_IN_MAX: one off-CPU interval
 *                      in N gets SWITCH/WAKING records
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

/* One CPU's counters, cumulative for the life of the module. */
struct taproot_cpu_stats {
	uint32_t cpu;
	uint64_t samples;		/* timer ticks that passed the filters */
	uint64_t records;		/* records written to the ring */
	uint64_t bytes;			/* bytes written to the ring */
	uint64_t lost_full;		/* records lost: ring full */
	uint64_t lost_nested;		/* records lost: writers nested too deep */
	uint64_t ustack_faults;		/* user stack copies cut short */
	uint64_t switches;		/* switch-outs of filtered tasks that
					   left the CPU blocked or preempted */
	uint64_t switches_selected;	/* of those, selected for capture */
	uint64_t wakings;		/* WAKING records written */
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

/* The /dev/taproot fd, for poll(): POLLIN when a ring has data to read. */
int taproot_ring_fd(const struct taproot_ring *r);

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
	uint64_t unread;		/* bytes between tail and head now */
	uint64_t invalid;		/* corrupt records this reader met */
};

/* Number of rings mapped (possible CPUs below nr_cpus). */
unsigned int taproot_ring_count(const struct taproot_ring *r);

/* Fill @st for the @i-th ring mapped (0 <= @i < taproot_ring_count()). */
void taproot_ring_stats(const struct taproot_ring *r, unsigned int i,
			struct taproot_ring_stats *st);

/*
 * Check the record at @rec, with @avail bytes readable there (the unread
 * bytes of its ring from it on), before anything reads it: the header fits
 * and @rec is 8-byte aligned; size >= the header, a multiple of 8, <=
 * @avail; a SAMPLE holds its fixed part, kstack_nr <= TAPROOT_KSTACK_MAX,
 * ustack_len <= TAPROOT_USTACK_MAX, and both arrays fit in size; LOST,
 * FORK and EXIT records, and SWITCH and WAKING records without a stack
 * snapshot, have exactly their fixed size; a snapshot (..._F_STACKS)
 * follows the fixed part whole, with its kstack_nr and ustack_len limited
 * as a sample's and its arrays inside size; an EXEC's filename_len is
 * 1..TAPROOT_EXEC_FILENAME_MAX, inside size, and its last byte the only
 * NUL. Other types are only checked as headers.
 * Returns 0, or -TAPROOT_ECORRUPT with *@why (static text) saying why.
 */
int taproot_rec_check(const void *rec, size_t avail, const char **why);

/*
 * The stack snapshot of a SWITCH or WAKING record that taproot_rec_check()
 * passed, or NULL when it has none (no ..._F_STACKS flag, another type).
 * Its kstack[] follows it, then its ustack bytes.
 */
struct taproot_stack_snap;	/* <linux/taproot.h> */
const struct taproot_stack_snap *taproot_rec_snap(const struct taproot_rec_header *rec);

/* "sample", "lost", "switch", ... or NULL for a type this library does not know. */
const char *taproot_rec_type_name(unsigned int type);

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

/* ---------------------------- processes, ELF files, symbols (symbolizer) */

/*
 * The process model: per process (identified by pid and start time, so a
 * reused pid is another process) its executable mappings from
 * /proc/PID/maps, read when it is first seen and again when a pc falls
 * outside them (at most once per refresh interval). Files are opened
 * through /proc/PID/root/PATH, so containerised processes work, and cached
 * once per file (dev, ino, size, mtime) for every process mapping them.
 *
 * Pointers returned by the functions of this section (processes, mappings,
 * ELF files, frames and their strings) stay valid until the next call on
 * the same struct taproot_procs or struct taproot_sym, unless a contract
 * says otherwise: the caches are bounded and evict what was used least
 * recently.
 */
struct taproot_procs;
struct taproot_proc;
struct taproot_elf;
struct Elf;				/* libelf's Elf */

/* The files of /proc/PID the process model (and the pipeline) read. */
enum taproot_proc_file {
	TAPROOT_PROC_DIR,		/* the directory itself: only its failure is told */
	TAPROOT_PROC_STAT,
	TAPROOT_PROC_MAPS,
	TAPROOT_PROC_COMM,
	TAPROOT_PROC_NR_FILES
};

/*
 * An observer of what the process model reads, so that a recording can
 * keep it (taprootctl record --raw). Callbacks run inside the call that
 * made the read, before it returns; the data is borrowed for the callback.
 */
struct taproot_procs_observer {
	/*
	 * /proc/PID/@file was read: its @len bytes are @data (exactly what
	 * the parser saw), or @err < 0 is why it could not be read.
	 */
	void (*read)(void *arg, int pid, enum taproot_proc_file file, int err,
		     const char *data, size_t len);
	/*
	 * The ELF file of a mapping (@dev, @ino as maps shows them; @path as
	 * maps names it) was opened for the first time since it entered the
	 * cache; @build_id is NULL (@build_id_len 0) when it has none.
	 */
	void (*elf)(void *arg, uint64_t dev, uint64_t ino, const char *path,
		    const uint8_t *build_id, size_t build_id_len);
	void *arg;
};

struct taproot_procs_opts {
	unsigned int max_procs;		/* processes kept (LRU), >= 1 */
	unsigned int max_elfs;		/* ELF files kept open (LRU), >= 1 */
	unsigned int refresh_ms;	/* maps re-read at most this often */
	unsigned int exit_grace_ms;	/* maps of an exited process kept */
	const char *proc_root;		/* "/proc"; tests point it elsewhere */
	/* NULL: none. Borrowed: it must outlive the process table. */
	const struct taproot_procs_observer *observer;
};

/* Counters, cumulative. */
struct taproot_procs_stats {
	uint64_t procs_read;		/* /proc/PID/maps reads */
	uint64_t procs_gone;		/* processes that could not be read */
	uint64_t procs_evicted;		/* dropped by the LRU */
	uint64_t pid_reused;		/* pid seen again with another start time */
	uint64_t refreshes;		/* re-reads for a pc outside the maps */
	uint64_t maps_dropped;		/* executable mappings past the cap */
	uint64_t elfs_opened, elfs_evicted, elf_errors;
};

/* Fill @o with the defaults: 4096 processes, 128 ELF files, 200 ms, 5 s, "/proc". */
void taproot_procs_opts_default(struct taproot_procs_opts *o);

/*
 * A new process table with options @opts (NULL: the defaults), owned by the
 * caller (taproot_procs_free()). Errors: -EINVAL (a zero bound), -ENOMEM.
 */
int taproot_procs_new(const struct taproot_procs_opts *opts, struct taproot_procs **pp);

/* Free @procs (NULL is allowed), its processes and its ELF files. */
void taproot_procs_free(struct taproot_procs *procs);

void taproot_procs_get_stats(const struct taproot_procs *procs,
			     struct taproot_procs_stats *st);

/*
 * The process @pid whose start time (/proc/PID/stat field 22, clock ticks
 * since boot) is @start_time, or whatever process has that pid when
 * @start_time is 0. A process not known yet is read now (start time, then
 * maps, through one open /proc/PID directory so a pid reused in between is
 * noticed). A known process with another start time is replaced. A process
 * that cannot be read (exited, pid reused, no permission) is still
 * returned, with taproot_proc_gone() saying why, so its samples count.
 * Returns 0 with *@pp set, -EINVAL for a pid <= 0, -ENOMEM.
 */
int taproot_proc_get(struct taproot_procs *procs, int pid, uint64_t start_time,
		     struct taproot_proc **pp);

/* NULL when @proc's maps are known, else why not ("process exited", ...). */
const char *taproot_proc_gone(const struct taproot_proc *proc);

int taproot_proc_pid(const struct taproot_proc *proc);
uint64_t taproot_proc_start_time(const struct taproot_proc *proc);

/*
 * The process @pid exited (TAPROOT_REC_EXIT): its maps are kept for the
 * exit grace period, for samples still queued, then dropped; a later
 * taproot_proc_get() of the pid reads it afresh. Unknown pids are ignored.
 */
void taproot_proc_forget(struct taproot_procs *procs, int pid);

/*
 * The process @pid called exec (TAPROOT_REC_EXEC): its maps are re-read on
 * next use, and taproot_proc_execs() of it grows, so that what was cached
 * about its old program (symbolized pcs) is not taken for the new one.
 */
void taproot_proc_exec(struct taproot_procs *procs, int pid);

/* Execs seen of @proc: part of its identity with pid and start time. */
uint32_t taproot_proc_execs(const struct taproot_proc *proc);

/*
 * Do @proc's maps belong with a sample of its main thread whose comm was
 * @comm? Its maps were read with its main thread's comm; execve renames
 * the process, so another name means it exec'd between the sample and
 * the read (the maps are the new program's, the sample the old one's) or
 * the other way round, or that it renamed itself. Then the process is
 * read again (at most once per refresh interval) and compared anew.
 * False only when the names still differ: the sample's user part must
 * not be unwound against these maps. True when either comm is unknown.
 * Samples of other threads cannot be checked this way.
 */
bool taproot_proc_check_comm(struct taproot_proc *proc, const char *comm);

/*
 * As taproot_proc_check_comm(), without reading the process again: whether
 * its maps are still of the name @comm (a pc outside them during an unwind
 * or symbolization has it read again, maybe after an execve).
 */
bool taproot_proc_comm_is(const struct taproot_proc *proc, const char *comm);

/*
 * A new process now has @pid (TAPROOT_REC_FORK): whatever was known of an
 * earlier process with that pid is dropped at once (counted as pid_reused).
 */
void taproot_proc_new(struct taproot_procs *procs, int pid);

/* Flags of struct taproot_map. */
#define TAPROOT_MAP_ANON	(1U << 0)	/* no file: anonymous, [heap], JIT */
#define TAPROOT_MAP_DELETED	(1U << 1)	/* the file was "(deleted)" */
#define TAPROOT_MAP_VDSO	(1U << 2)	/* [vdso] */
#define TAPROOT_MAP_VSYSCALL	(1U << 3)	/* [vsyscall] */
#define TAPROOT_MAP_SPECIAL	(1U << 4)	/* another "[name]" */

/* An executable mapping of a process. */
struct taproot_map {
	uint64_t start, end;		/* [start, end) */
	uint64_t pgoff;			/* file offset of start */
	uint64_t dev;			/* makedev(major, minor) as maps shows it */
	uint64_t ino;
	const char *path;		/* "" when anonymous; "[vdso]"; no " (deleted)" */
	uint32_t flags;			/* TAPROOT_MAP_* */
	/*
	 * Set by taproot_proc_find_map() for the mapping it returns, and
	 * valid as its result is; through taproot_proc_map(), stale.
	 */
	struct taproot_elf *elf;	/* NULL: no file, or it cannot be read */
	int elf_err;			/* why elf is NULL (0: no file to open) */
	uint64_t bias;			/* ELF vaddr = pc - bias, when elf */
};

/*
 * The mapping of @proc holding @pc, with its ELF file opened (elf, bias;
 * elf NULL with elf_err when the file cannot be opened or is not an ELF,
 * or when the mapping has no file). When no mapping holds @pc, the maps are
 * re-read (at most once per refresh interval) and searched again. Returns
 * 0 with *@mp set, -ENOENT when no mapping holds @pc, -ESRCH when @proc is
 * gone (taproot_proc_gone()).
 */
int taproot_proc_find_map(struct taproot_proc *proc, uint64_t pc,
			  const struct taproot_map **mp);

/* Number of executable mappings of @proc, and the @i-th (sorted by start). */
size_t taproot_proc_map_count(const struct taproot_proc *proc);
const struct taproot_map *taproot_proc_map(const struct taproot_proc *proc, size_t i);

/*
 * What the unwinder needs of the mapping holding a pc: the ELF file (for
 * its CFI), a key naming its contents (the build ID; for a file without
 * one, 32 bytes of its dev, ino, size and mtime), the bias (ELF vaddr =
 * pc - bias) and the mapping's range.
 */
struct taproot_unwind_map {
	struct Elf *elf;
	const uint8_t *key;
	size_t key_len;
	uint64_t bias, start, end;
};

/*
 * Fill @um for @pc of @proc. Errors: as taproot_proc_find_map(), and the
 * mapping's elf_err when it has no ELF file.
 */
int taproot_proc_unwind_map(struct taproot_proc *proc, uint64_t pc,
			    struct taproot_unwind_map *um);

/*
 * Open the ELF file @path through the cache of @procs (not tied to a
 * process). Errors: -errno of open(), -ENOEXEC for a file that is not a
 * valid ELF (truncated, corrupt), with a message.
 */
int taproot_elf_open(struct taproot_procs *procs, const char *path,
		     struct taproot_elf **ep);

/* libelf's handle of @e (read-only; owned by the cache). */
struct Elf *taproot_elf_handle(const struct taproot_elf *e);

/* The NT_GNU_BUILD_ID of @e, *@len bytes; NULL (*@len 0) when it has none. */
const uint8_t *taproot_elf_build_id(const struct taproot_elf *e, size_t *len);

/* The path @e was opened by. */
const char *taproot_elf_path(const struct taproot_elf *e);

/*
 * The bias of @e mapped at [@start, @end) from file offset @pgoff: ELF
 * vaddr = pc - bias, from the PT_LOAD segment holding that file offset
 * (vaddr = pc - start + pgoff - p_offset + p_vaddr). -ENOENT when no
 * segment holds it.
 */
int taproot_elf_bias(const struct taproot_elf *e, uint64_t start, uint64_t end,
		     uint64_t pgoff, uint64_t *bias);

/* The symbolizer: pc -> frames, over a process table and kernel symbols. */
struct taproot_sym;

/* One frame; one pc gives several when code was inlined (innermost first). */
struct taproot_frame {
	const char *function;		/* never NULL; "[unknown]" when unknown */
	const char *file;		/* source file, NULL when unknown */
	unsigned int line;		/* 0 when unknown */
	const char *map_path;		/* mapping path, "[kernel.kallsyms]", "[MODULE]"; never NULL */
	const uint8_t *build_id;	/* NULL when none */
	size_t build_id_len;
	uint64_t map_offset;		/* ELF vaddr (or offset into an ELF-less mapping) */
	uint64_t sym_offset;		/* pc - symbol start, 0 when unknown */
	bool inlined;			/* inlined into the next frame */
	bool known;			/* function is a real name */
};

/* taproot_sym_*() flags */
#define TAPROOT_SYM_RETADDR	(1U << 0)	/* a return address: look up pc - 1 */

/*
 * A symbolizer over @procs (user frames) and @ksyms (kernel frames; NULL:
 * kernel frames stay unknown), both borrowed for its lifetime. -ENOMEM.
 */
int taproot_sym_new(struct taproot_procs *procs, const struct taproot_ksyms *ksyms,
		    struct taproot_sym **sp);
void taproot_sym_free(struct taproot_sym *s);

/*
 * Frames for the user pc @pc of @proc: from the ELF symbol table of its
 * mapping (.symtab, a separate debug file's, or .dynsym), DWARF inline
 * chains and file:line when there is debug information, C++ names
 * demangled; from the process's perf map for JIT code. Never fails for an
 * unknown pc: one frame "[unknown]" keeps the mapping path and offset
 * ("[unknown: process exited]" and the like for a gone process). Returns
 * the number of frames (1..16) with *@frames pointing to them, or -ENOMEM.
 */
int taproot_sym_user(struct taproot_sym *s, struct taproot_proc *proc, uint64_t pc,
		     unsigned int flags, const struct taproot_frame **frames);

/* The same for a kernel address, from the kallsyms table. */
int taproot_sym_kernel(struct taproot_sym *s, uint64_t pc, unsigned int flags,
		       const struct taproot_frame **frames);

/* The same for ELF vaddr @vaddr of @elf (no process). */
int taproot_sym_elf(struct taproot_sym *s, struct taproot_elf *elf, uint64_t vaddr,
		    unsigned int flags, const struct taproot_frame **frames);

/* ------------------------------------- end of the symbolizer's section */

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

/* -------------------------------------------------------- JSON writer */

/*
 * A streaming JSON writer: values are written to the FILE as they come,
 * compact, with a newline after each complete top-level value. Misuse (a
 * value where a key is expected, an unbalanced end, nesting deeper than 32)
 * and write errors are sticky: the writer stops writing and
 * taproot_json_free() reports the first one.
 */
struct taproot_json;

/* A writer to @out (borrowed; the caller closes it). -ENOMEM. */
int taproot_json_new(FILE *out, struct taproot_json **jp);

/*
 * Free @j (NULL is allowed). Returns 0 when everything was written and
 * every object and array was closed, -EINVAL after misuse or with a value
 * left open, -EIO after a write error.
 */
int taproot_json_free(struct taproot_json *j);

void taproot_json_object_begin(struct taproot_json *j);
void taproot_json_object_end(struct taproot_json *j);
void taproot_json_array_begin(struct taproot_json *j);
void taproot_json_array_end(struct taproot_json *j);
/* Inside an object, before each value. */
void taproot_json_key(struct taproot_json *j, const char *key);
/*
 * @s as a JSON string: quotes, backslashes and control characters are
 * escaped, valid UTF-8 passes through, and each byte that is not part of
 * valid UTF-8 becomes U+FFFD, so the output is always valid JSON. A NULL
 * @s writes null.
 */
void taproot_json_string(struct taproot_json *j, const char *s);
void taproot_json_u64(struct taproot_json *j, uint64_t v);
void taproot_json_i64(struct taproot_json *j, int64_t v);
void taproot_json_bool(struct taproot_json *j, bool v);
void taproot_json_null(struct taproot_json *j);

/* ------------------------------------------------------ command tables */

/*
 * A row of a command table in bpftool's style. A table is an array ending
 * with a row whose name is NULL. Aliases are more rows with the same fn.
 */
struct taproot_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;	/* synopsis of the arguments, "" for none */
	const char *help;	/* one line: what the command does */
	const char *doc;	/* more lines for "help COMMAND", or NULL */
};

/*
 * Select the row of @table that @word names: the row whose name equals
 * @word, else the only row whose name starts with @word. On success
 * *@row points into @table. Errors: -ENOENT when no row matches,
 * -TAPROOT_EAMBIGUOUS when @word starts several names (the message lists
 * them).
 */
int taproot_cmd_find(const struct taproot_command *table, const char *word,
		     const struct taproot_command **row);

/* ------------------------------------- profiles: builder, pprof writer */
/*
 * (lib/profile.c, lib/pprof.c.) A profile is an in-memory aggregate of
 * samples, independent of where the frames come from: each sample is a
 * stack (frames leaf first), labels and one value per sample type;
 * identical (stack, labels) pairs are merged by summing their values. It
 * is then written as a gzipped perftools.profiles.Profile (pprof) and
 * reset for the next interval.
 */
struct taproot_profile;

/* A pprof ValueType: "samples"/"count", "cpu"/"nanoseconds", ... */
struct taproot_profile_value_type {
	const char *type;
	const char *unit;
};

#define TAPROOT_PROFILE_MAX_VALUES	8
#define TAPROOT_PROFILE_MAX_STACKS	65536	/* default stack-table cap */
#define TAPROOT_PROFILE_MAX_BUILD_ID	64	/* bytes */

/* What a profile holds; the strings are copied by taproot_profile_new(). */
struct taproot_profile_desc {
	const struct taproot_profile_value_type *sample_types;
	size_t nr_sample_types;		/* 1..TAPROOT_PROFILE_MAX_VALUES */
	struct taproot_profile_value_type period_type;	/* {NULL, NULL}: none */
	int64_t period;
	const char *default_sample_type; /* a sample type's type, or NULL */
	const char *const *comments;	/* written in every profile */
	size_t nr_comments;
	int64_t time_nanos;		/* wall clock start, ns since the epoch */
	int64_t duration_nanos;
	/*
	 * Distinct (stack, labels) entries kept per interval; 0 means
	 * TAPROOT_PROFILE_MAX_STACKS. Once full, a sample whose entry does
	 * not exist yet is added to one "[truncated: stack table full]"
	 * sample (no labels) instead, and counted (stats.folded; the written
	 * profile says so in a comment). Memory is bounded by it: frames,
	 * functions, mappings and strings are only kept for entries kept.
	 */
	size_t max_stacks;
};

/*
 * Fill @desc for a CPU profile sampled at @hz per CPU: sample types
 * samples/count and cpu/nanoseconds (default "cpu"), period type
 * cpu/nanoseconds, period 1e9 / @hz. Other fields are zeroed. Add values
 * {1, period} per sample.
 */
void taproot_profile_desc_cpu(struct taproot_profile_desc *desc, uint32_t hz);

/*
 * The profiles of off-CPU intervals (lib/causal.c), each with two sample
 * types, the time first and the default, then a count, and no period:
 *  - offcpu:   off_cpu/nanoseconds, switches/count (blocked time);
 *  - offwake:  off_cpu/nanoseconds, switches/count (blocked time until
 *              the wakeup, over the waker's stack, "--", the blocked one);
 *  - schedlat: runqueue/nanoseconds, switches/count (woken or preempted
 *              until running again).
 * Other fields are zeroed.
 */
void taproot_profile_desc_offcpu(struct taproot_profile_desc *desc);
void taproot_profile_desc_offwake(struct taproot_profile_desc *desc);
void taproot_profile_desc_schedlat(struct taproot_profile_desc *desc);

/*
 * One frame of a stack, as the profile takes it. Frames go leaf first.
 *
 * A location is one frame, or an inline chain: a frame with @inlined set
 * is inlined into the next frame of the array, and the run ending with
 * the first frame without @inlined is one pprof location whose lines are
 * those frames, innermost first; its address and mapping are the last
 * frame's (the others' are ignored).
 *
 * The mapping is named by @mapping_path (NULL: the frame has none), with
 * the range and file offset of /proc/PID/maps; mappings are told apart by
 * path, build ID and range, and IDs go in the order first seen (pprof's
 * "File:" header names mapping 1). A kernel frame (@is_kernel) without
 * @mapping_path gets "[kernel.kallsyms]" (range as given, 0-0 is fine);
 * a module frame passes "[MODULE]". A marker frame ("[unknown]",
 * "[truncated]", the off-wake separator "--") has just a @function: no
 * mapping, address 0. @function NULL (or "") leaves the location
 * unsymbolized, an address in its mapping, and the mapping then says
 * has_functions false; pass NULL rather than a placeholder name for a pc
 * the symbolizer did not know, so the flags stay true. @system_name NULL
 * means the same as @function. NULL strings and 0 numbers are "unknown".
 * Every string is borrowed for the call only.
 */
struct taproot_profile_frame {
	const char *function;
	const char *system_name;
	const char *file;
	int64_t line;
	const char *mapping_path;
	const uint8_t *build_id;	/* written in hex; NULL: none */
	size_t build_id_len;		/* at most TAPROOT_PROFILE_MAX_BUILD_ID */
	uint64_t mapping_start, mapping_limit, mapping_offset;
	uint64_t address;
	bool is_kernel;
	bool inlined;
	/*
	 * Optional, on the last frame of a location (the one not inlined):
	 * an address the caller guarantees stands for this location's frames
	 * until it calls taproot_profile_forget_keys(). The profile then
	 * remembers the location it made of them under that key and skips
	 * hashing their strings the next time (a direct-mapped memo).
	 */
	const void *key;
};

/*
 * A sample label: a string label when @str is not NULL, else a numeric
 * one (@num, with the optional @unit). Labels are compared in the order
 * given: pass them in a fixed order. A string label whose @str is "" is
 * left out (pprof would read it as the number 0).
 */
struct taproot_profile_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *unit;
};

#define TAPROOT_LABEL_STR(k, s)	((struct taproot_profile_label){ .key = (k), .str = (s) })
#define TAPROOT_LABEL_NUM(k, n)	((struct taproot_profile_label){ .key = (k), .num = (n) })

/* What a profile holds now (since the last reset). */
struct taproot_profile_stats {
	uint64_t adds;			/* taproot_profile_add() calls that succeeded */
	uint64_t folded;		/* of them, folded into the truncated sample */
	size_t stacks;			/* distinct (stack, labels) entries */
	size_t max_stacks;
	size_t locations, functions, mappings, strings;
	size_t bytes;			/* memory held by the profile */
};

/*
 * A new, empty profile described by @desc. Errors: -EINVAL (no sample
 * types or too many, a NULL type or unit, a default_sample_type that is
 * not one of them), -ENOMEM. *@pp is NULL on error.
 */
int taproot_profile_new(const struct taproot_profile_desc *desc,
			struct taproot_profile **pp);

/* Free @p (NULL is allowed). */
void taproot_profile_free(struct taproot_profile *p);

/* The frames' keys given so far (taproot_profile_frame.key) may be reused. */
void taproot_profile_forget_keys(struct taproot_profile *p);

/*
 * Add a sample: the stack @frames (@nr frames, leaf first), @nlabels
 * @labels and @values (one per sample type). When the same stack with the
 * same labels was added since the last reset, the values are added to it;
 * that path allocates nothing. Hashing and lookups cost O(@nr + @nlabels)
 * plus the strings' lengths. Errors: -EINVAL (the last frame has
 * @inlined set, a frame of an inline chain without @function, a label
 * without a key, a build ID longer than TAPROOT_PROFILE_MAX_BUILD_ID),
 * -ENOMEM; the sample is then not counted, the profile stays valid.
 */
int taproot_profile_add(struct taproot_profile *p,
			const struct taproot_profile_frame *frames, size_t nr,
			const struct taproot_profile_label *labels, size_t nlabels,
			const int64_t *values);

/* The time and duration the next write reports. */
void taproot_profile_set_time(struct taproot_profile *p, int64_t time_nanos,
			      int64_t duration_nanos);

/*
 * Empty @p for the next interval starting at @time_nanos (duration 0);
 * the desc is kept, and so is the memory, for reuse.
 */
void taproot_profile_reset(struct taproot_profile *p, int64_t time_nanos);

void taproot_profile_stats(const struct taproot_profile *p,
			   struct taproot_profile_stats *st);

/*
 * Serialize @p as a perftools.profiles.Profile message, gzipped when
 * @gzip. On success *@buf (malloc'ed, caller frees) holds *@len bytes.
 * Errors: -ENOMEM, -EOVERFLOW.
 */
int taproot_pprof_encode(const struct taproot_profile *p, bool gzip,
			 void **buf, size_t *len);

/* Write @p, gzipped, to @fd. Errors: as encode, and write(2)'s -errno. */
int taproot_pprof_write_fd(const struct taproot_profile *p, int fd);

/*
 * Write @p, gzipped, to @path atomically: to "@path.tmp.XXXXXX" in the
 * same directory, mode 0600, fsync'ed, then renamed over @path and the
 * directory fsync'ed. @path never holds a partial file. On error
 * (-ENOSPC, -EACCES, ...) the temporary file is removed and @path is
 * untouched, except when only the final fsync of the directory failed:
 * @path then holds the complete new profile, and the error is returned
 * since it may not be durable.
 */
int taproot_pprof_write_file(const struct taproot_profile *p, const char *path);

/* ------------------------------------------ end of the profiles' section */

/* ---------------------------------------- user stack unwinding (DWARF CFI) */
/*
 * (lib/cfi.c, lib/unwind.c.) Recovers a user call chain from a sample's
 * registers and its copy of the user stack, by the CFI (.eh_frame,
 * .debug_frame) of the ELF files mapped at each pc. Each ELF's CFI is
 * compiled once into a compact table of {pc -> rule}, kept in a cache keyed
 * by an identity the caller chooses (the build ID) and bounded in bytes
 * (least recently used tables go first). Rules the table cannot express are
 * evaluated by libdw per frame. The unwinder never opens a file or reads
 * /proc: the caller maps each pc to an ELF through a callback.
 */
struct taproot_unwinder;
struct taproot_user_regs;	/* <linux/taproot.h> */
/*
 * The seam with the process model: struct taproot_unwind_map (in the
 * "processes, ELF files, symbols" section, filled by
 * taproot_proc_unwind_map()) describes the ELF mapped at a pc: elf (libelf
 * handle, the caller's, valid for the call), key + key_len (bytes
 * naming the ELF's contents: the build ID; compiled tables are cached by
 * it), bias (ELF vaddr = pc - bias) and the mapping [start, end).
 */
struct taproot_unwind_map;

struct taproot_unwind_ops {
	/*
	 * Describe the mapping holding @pc of the process being unwound (@arg
	 * is taproot_unwind()'s): fill @map and return 1, or return 0 when
	 * @pc is in no mapping with an ELF (anonymous memory, JIT code, the
	 * vDSO when the caller has no ELF of it). The Elf and the key need to
	 * stay valid until taproot_unwind() returns. Any other value stops
	 * the unwind as if 0 were returned. Called once or more per frame.
	 */
	int (*map)(uint64_t pc, struct taproot_unwind_map *map, void *arg);
};

/* Why an unwind stopped. */
enum taproot_unwind_end {
	TAPROOT_UNWIND_COMPLETE,	/* outermost frame: RA undefined or 0 */
	TAPROOT_UNWIND_TRUNCATED,	/* needed stack beyond the copy */
	TAPROOT_UNWIND_NO_MAPPING,	/* the last pc is in no mapped ELF */
	TAPROOT_UNWIND_NO_CFI,		/* no CFI for the last pc, no rbp chain */
	TAPROOT_UNWIND_BAD_FRAME,	/* CFI or the stack gave an impossible frame */
	TAPROOT_UNWIND_MAX_DEPTH,	/* the pcs array is full */
	TAPROOT_UNWIND_NR_ENDS
};

/* "complete", "truncated", "no-mapping", "no-cfi", "bad-frame", "max-depth" */
const char *taproot_unwind_end_name(enum taproot_unwind_end end);

/* taproot_unwind()'s flags[i] */
#define TAPROOT_FRAME_EXACT	(1U << 0) /* pc is exact: leaf, or after a signal */
#define TAPROOT_FRAME_SLOW	(1U << 1) /* this frame's caller came from libdw */
#define TAPROOT_FRAME_FP	(1U << 2) /* ... from the rbp chain (no CFI) */

#define TAPROOT_UNWIND_CACHE_DEFAULT	(64U << 20)	/* bytes of tables */

/*
 * A new unwinder with a cache of compiled tables of at most @cache_bytes
 * (0: TAPROOT_UNWIND_CACHE_DEFAULT). A table larger than the whole limit is
 * still compiled and used, and evicted by the next one. @ops is copied.
 * Errors: -EINVAL (no map callback), -ENOMEM.
 */
int taproot_unwinder_new(const struct taproot_unwind_ops *ops, size_t cache_bytes,
			 struct taproot_unwinder **up);

/* Free @u and every table it holds (NULL is allowed). */
void taproot_unwinder_free(struct taproot_unwinder *u);

/* What a taproot_unwind() call found; also summed in the stats. */
struct taproot_unwind_result {
	unsigned int nr;		/* pcs written */
	enum taproot_unwind_end end;
	unsigned int slow_frames;	/* callers libdw found */
	unsigned int fp_frames;		/* callers the rbp chain found */
};

/*
 * Unwind the user stack of one sample: @regs as sampled, @stack the
 * @stack_len bytes copied from address regs->sp. Writes up to @max pcs to
 * @pcs, leaf first: pcs[0] is regs->ip, each next one a return address as
 * found on the stack (not adjusted: a symbolizer looks up pc - 1 for a
 * frame without TAPROOT_FRAME_EXACT). @flags, when not NULL, receives
 * TAPROOT_FRAME_* of each pc. Fills @res; every stop is an end reason in
 * res->end, not an error: the caller adds a marker frame for it. A word
 * needed beyond the end of the copy stops with TAPROOT_UNWIND_TRUNCATED,
 * and the pcs found until then stay. Frames of ELFs without CFI are
 * unwound by the rbp chain when it validates (each saved rbp above the
 * previous, within the copy).
 *
 * Returns res->nr (>= 0; 0 only when @max is 0) or -ENOMEM (a table could
 * not be compiled; the pcs found so far are in @pcs, res->nr of them). The
 * map callback gets @arg. Compiling a table may take from milliseconds to
 * seconds for a large library, once per key while it stays cached.
 */
int taproot_unwind(struct taproot_unwinder *u, void *arg,
		   const struct taproot_user_regs *regs,
		   const void *stack, size_t stack_len,
		   uint64_t *pcs, uint8_t *flags, unsigned int max,
		   struct taproot_unwind_result *res);

/* Cumulative counters of an unwinder. */
struct taproot_unwind_stats {
	uint64_t unwinds;
	uint64_t frames;		/* pcs written */
	uint64_t ends[TAPROOT_UNWIND_NR_ENDS];
	uint64_t slow_frames, fp_frames;
	uint64_t rule_cache_hits, rule_cache_misses;
	uint64_t tables;		/* cached now */
	uint64_t table_bytes;		/* held now */
	uint64_t compiles;		/* tables compiled */
	uint64_t compile_ns;		/* time spent compiling */
	uint64_t evictions;
};

void taproot_unwinder_stats(const struct taproot_unwinder *u,
			    struct taproot_unwind_stats *st);

/* ------------------------------------------------------- the pipeline */
/*
 * (lib/pipeline.c.) Ring records in, pprof profiles out, in one direction:
 * each SAMPLE record goes through the process model (its pid's maps; a pc
 * outside them re-reads them; a process that cannot be read gives one
 * "[unknown: REASON]" frame), the unwinder (its user registers and stack
 * copy; an incomplete unwind ends in a marker frame "[truncated]", "[no
 * cfi]", "[no mapping]", "[bad frame]" or "[max depth]", at the root;
 * an unwind that ends without CFI at an ELF's entry point, as everything
 * that runs in ld.so before main does, is the outermost frame: complete),
 * the
 * symbolizer (inline chains, file:line; kernel frames from kallsyms under
 * "[kernel.kallsyms]", on top of the user frames, leaf first) and into a
 * CPU profile (taproot_profile_desc_cpu(): samples/count and
 * cpu/nanoseconds, period_us * 1000 each). Samples aggregate per (stack,
 * pid, comm, thread_comm): "comm" is the process's name (its main thread's
 * comm), "thread_comm" the sampled thread's; "tid" and "cpu" labels are
 * optional since they multiply the number of distinct samples.
 *
 * The caller reads the rings and hands each record over; the pipeline
 * never touches /dev/taproot. Memory is bounded: the profile's stack table
 * (max_stacks), the unwinder's table cache, the process model's LRU, and a
 * cache of symbolized pcs (emptied when full, or when some process's maps
 * were re-read).
 */
struct taproot_pipeline;

struct taproot_pipeline_opts {
	uint32_t freq_hz;		/* the module's rate: period 1e9 / freq_hz */
	bool label_tid;			/* add a numeric "tid" label */
	bool label_cpu;			/* add a numeric "cpu" label */
	bool no_kernel;			/* leave kernel frames out */
	size_t max_stacks;		/* profile entries; 0: TAPROOT_PROFILE_MAX_STACKS */
	size_t unwind_cache_bytes;	/* 0: TAPROOT_UNWIND_CACHE_DEFAULT */
	unsigned int max_user_frames;	/* pcs unwound per sample; 0: 128 */
	unsigned int sym_cache_entries;	/* symbolized pcs kept; 0: 65536 */
	const struct taproot_ksyms *ksyms;	/* borrowed; NULL: kernel frames unnamed */
	const struct taproot_procs_opts *procs;	/* NULL: the defaults */
	const char *const *comments;	/* written in every profile (borrowed) */
	size_t nr_comments;
	/*
	 * Off-CPU profiles: join SWITCH and WAKING records into intervals
	 * and build the offcpu, offwake and schedlat profiles. Without it
	 * those records are counted in other_records and ignored.
	 */
	bool offcpu;
	uint64_t min_block_ns;		/* shorter blocked intervals: no offcpu/offwake */
	size_t max_intervals;		/* intervals held at once; 0: 16384 */
	uint64_t max_open_ns;		/* an interval open longer is dropped at a
					 * flush; 0: 10 minutes */
};

/* The profiles a pipeline builds. */
enum taproot_profile_kind {
	TAPROOT_PROFILE_CPU,
	TAPROOT_PROFILE_OFFCPU,
	TAPROOT_PROFILE_OFFWAKE,
	TAPROOT_PROFILE_SCHEDLAT,
	TAPROOT_PROFILE_NR_KINDS
};

/* "cpu", "offcpu", "offwake", "schedlat"; NULL for another value. */
const char *taproot_profile_kind_name(enum taproot_profile_kind kind);

/*
 * Counters of the off-CPU join (lib/causal.c), cumulative. Times are in
 * ns, already scaled by each interval's sched_one_in: unbiased estimates
 * of the whole.
 */
struct taproot_causal_stats {
	uint64_t switch_outs;		/* selected intervals started (F_PREV) */
	uint64_t wakings;		/* WAKING records */
	uint64_t switch_ins;		/* selected intervals ended (F_NEXT) */
	uint64_t joined;		/* intervals with both ends: in offcpu */
	uint64_t woken;			/* of them, with their waking: in offwake */
	uint64_t preempted;		/* of them, preempted (R+) */
	uint64_t new_tasks;		/* first wakeups of new tasks (schedlat only) */
	uint64_t filtered;		/* joined but below min_block_ns */
	uint64_t unpaired_no_in;	/* no switch-in: open too long, at the end,
					 * replaced by a reused tid's interval */
	uint64_t unpaired_no_out;	/* a switch-in without switch-out */
	uint64_t duplicates;		/* a second record for the same (tid, seq) end */
	uint64_t wakings_outside;	/* a waking before the switch-out or after the
					 * switch-in of its interval, or whose switch-out
					 * did not come within a round: ignored */
	uint64_t table_full;		/* records dropped: the interval table was full */
	uint64_t bad_records;		/* records or stack snapshots that do not add up */
	uint64_t open;			/* intervals held now */
	uint64_t blocked_ns;		/* off-CPU time of the joined intervals */
	uint64_t wait_ns;		/* of it, until the wakeup (offwake) */
	uint64_t runqueue_ns;		/* run-queue delay (schedlat) */
};

/*
 * The off-CPU selection to ask of the module (TAPROOT_A_CFG_SCHED_ONE_IN)
 * so that at most @budget intervals a second are recorded with their
 * stacks, given @rate intervals a second (the module's "switches"
 * counter): @floor times the smallest power of two that fits, at most
 * TAPROOT_SCHED_ONE_IN_MAX; @floor with @budget 0. From the current
 * value @cur it rises at once but falls only once @rate is a quarter of
 * what @cur allows. Totals stay unbiased across changes (lib/causal.c
 * weighs each interval by the larger value of its two ends).
 */
uint32_t taproot_sched_one_in_adapt(uint32_t cur, uint32_t floor, double rate, uint32_t budget);

/* Cumulative counters of a pipeline (since taproot_pipeline_new()). */
struct taproot_pipeline_stats {
	uint64_t records;		/* records given */
	uint64_t samples;		/* samples added to the profile */
	uint64_t lost;			/* records the module lost (LOST records) */
	uint64_t dropped;		/* invalid records, samples not added */
	uint64_t other_records;		/* records of other types, ignored */
	uint64_t kernel_only;		/* samples without a user part */
	uint64_t user_stale;		/* of them: in the kernel with a user ip in no
					 * mapping (execve between the old and the new
					 * program), or of a main thread whose maps were
					 * read under another name (an execve between
					 * the sample and the read): the user part is
					 * left out */
	uint64_t user_stacks;		/* user stacks unwound */
	uint64_t unwind[TAPROOT_UNWIND_NR_ENDS];	/* of them, by end reason */
	uint64_t unwind_at_entry;	/* of the complete ones: ended without CFI
					 * at an ELF's entry point (ld.so's _start) */
	uint64_t proc_unknown;		/* samples of processes that could not be read */
	uint64_t frames;		/* pcs symbolized (user and kernel) */
	uint64_t frames_unsymbolized;	/* of them, without a function name */
	uint64_t sym_cache_hits, sym_cache_misses, sym_cache_flushes;
	size_t sym_cache_entries;	/* now */
	uint64_t procs_read, procs_gone;	/* the process model's */
	uint64_t elf_errors;		/* mappings whose ELF file could not be used
					 * (gone, replaced, not ELF, corrupt) */
	/* The current profile (since the last reset): */
	uint64_t folded;		/* samples folded: the stack table was full */
	size_t stacks;			/* distinct (stack, labels) entries */
	size_t profile_bytes;		/* memory the profile holds */
	uint64_t proc_events;		/* FORK, EXEC and EXIT records applied */
	struct taproot_causal_stats causal;	/* zero unless opts.offcpu */
	/*
	 * The cost of unwinding alone (cumulative, for benchmarks): the
	 * CLOCK_MONOTONIC time inside taproot_unwind() (a vDSO read each side)
	 * and the user pcs it returned; the kernel pcs the samples carried.
	 */
	uint64_t unwind_ns;
	uint64_t unwind_frames;
	uint64_t kernel_frames;
};

/* Defaults: TAPROOT_FREQ_DEFAULT Hz, every other field 0 or false. */
void taproot_pipeline_opts_default(struct taproot_pipeline_opts *o);

/*
 * A new pipeline with @opts (NULL: the defaults), its profile's interval
 * starting now. Errors: -EINVAL (freq_hz 0 or above TAPROOT_FREQ_MAX),
 * -ENOMEM; *@pp is then NULL.
 */
int taproot_pipeline_new(const struct taproot_pipeline_opts *opts,
			 struct taproot_pipeline **pp);
void taproot_pipeline_free(struct taproot_pipeline *p);

/*
 * Take one record of ring @cpu (as taproot_ring_ops.record gets it; it is
 * checked again with taproot_rec_check()). SAMPLE records go into the
 * profile, LOST records into stats.lost, SWITCH and WAKING records into
 * the off-CPU join (with opts.offcpu), FORK, EXEC and EXIT records into
 * the process model (stats.proc_events); others are counted and ignored.
 * Returns 0; -TAPROOT_ECORRUPT for an invalid record, -ENOMEM (both
 * counted in stats.dropped; the pipeline stays usable).
 */
int taproot_pipeline_add_record(struct taproot_pipeline *p,
				const struct taproot_rec_header *rec, unsigned int cpu);

/*
 * Warm the caches up before the first record: unwind and symbolize the
 * calling thread's own stack, which compiles the unwind tables of the
 * libraries nearly every process maps (libc, the dynamic loader; keyed by
 * build ID, so shared with every process mapping the same files). Under
 * emulation compiling libc's takes seconds, during which the rings would
 * fill and short-lived processes exit unread. Counts nothing. 0 or
 * -ENOMEM.
 */
int taproot_pipeline_prewarm(struct taproot_pipeline *p);

/* Count @lost records lost outside the rings' LOST records. */
void taproot_pipeline_add_lost(struct taproot_pipeline *p, uint64_t lost);

void taproot_pipeline_stats(const struct taproot_pipeline *p,
			    struct taproot_pipeline_stats *st);

/* complete unwinds / user stacks unwound, 0 when none. */
double taproot_pipeline_unwind_rate(const struct taproot_pipeline_stats *st);

/* A function and the samples where it was the leaf (self). */
struct taproot_pipeline_top {
	const char *name;		/* valid until the next add or reset */
	uint64_t samples;
};

/*
 * The @n functions (or markers) seen most often as the leaf frame of a
 * sample since the last reset, most first, into @top; returns how many.
 */
size_t taproot_pipeline_top(const struct taproot_pipeline *p,
			    struct taproot_pipeline_top *top, size_t n);

/* The profile being built (to encode it elsewhere, or read its stats). */
const struct taproot_profile *taproot_pipeline_profile(const struct taproot_pipeline *p);

/*
 * Write the profile of the current interval (time: when it started,
 * duration: until now) to @path, atomically, mode 0600, as
 * taproot_pprof_write_file(). The profile is kept: reset it for the next
 * interval. Errors: as taproot_pprof_write_file().
 */
int taproot_pipeline_write(struct taproot_pipeline *p, const char *path);

/* Start a new interval now: empty profiles, the self counts cleared. */
void taproot_pipeline_reset(struct taproot_pipeline *p);

/*
 * Read every record the rings hold now into the pipeline (taproot_ring_consume(),
 * @corrupt and @arg its corrupt callback), then end the consume round:
 * off-CPU intervals completed in the round before are added to their
 * profiles (a record of another CPU that belongs to an interval completed
 * now may still be read in the next round). Returns the records read.
 */
int taproot_pipeline_consume(struct taproot_pipeline *p, struct taproot_ring *ring,
			     void (*corrupt)(unsigned int cpu, uint64_t pos,
					     const char *why, void *arg),
			     void *arg);

/* End a consume round by hand (what taproot_pipeline_consume() does last). */
void taproot_pipeline_end_round(struct taproot_pipeline *p);

/*
 * Before writing the off-CPU profiles: add every completed interval, drop
 * (as unpaired) those open longer than opts.max_open_ns, or, when @final
 * (the session is over, the rings drained), every open one.
 */
void taproot_pipeline_flush(struct taproot_pipeline *p, bool final);

/* Whether @p builds the profile @kind (cpu always; the others with opts.offcpu). */
bool taproot_pipeline_has(const struct taproot_pipeline *p, enum taproot_profile_kind kind);

/* Samples added to the profile @kind since the last reset (0 if not built). */
uint64_t taproot_pipeline_adds(const struct taproot_pipeline *p, enum taproot_profile_kind kind);

/*
 * Write the profile @kind as taproot_pipeline_write() does the CPU one.
 * Errors: -ENOENT (@p does not build it), as taproot_pprof_write_file().
 */
int taproot_pipeline_write_kind(struct taproot_pipeline *p, enum taproot_profile_kind kind,
				const char *path);

/* ------------------------------------------------ end of the pipeline */

/* ------------------------------------------------- raw capture files */
/*
 * (lib/rawfile.c.) What a recording fed its pipeline, kept so that the
 * profiles can be rebuilt later on the same host (taprootctl record --raw,
 * taprootctl report): a gzip stream of chunks, each
 *
 *	u32 type, u32 len, len bytes of payload	(little-endian)
 *
 * HEADER first (magic, format version, the session's options), then, in
 * the order the recorder met them: KSYMS (the /proc/kallsyms text the
 * pipeline used), PROC (a /proc/PID file the process model read, written
 * before the record whose handling read it), ELF (a mapped file the
 * process model opened: its maps dev and inode, path and build ID), RECORD
 * (a ring record exactly as the ring gave it, with its CPU), ROUND (the end
 * of one read of the rings: off-CPU intervals complete at round ends), and
 * END last (what the recorder counted outside the records). A reader
 * refuses anything else: unknown types, lengths past each type's limit,
 * records taproot_rec_check() refuses, a stream that ends before END.
 * README.md "Raw capture files" has the payload of each type.
 */
#define TAPROOT_RAW_MAGIC	"TAPRAW\r\n"	/* 8 bytes, no NUL */
#define TAPROOT_RAW_VERSION	1

enum taproot_raw_type {
	TAPROOT_RAW_HEADER = 1,
	TAPROOT_RAW_KSYMS,
	TAPROOT_RAW_PROC,
	TAPROOT_RAW_ELF,
	TAPROOT_RAW_RECORD,
	TAPROOT_RAW_ROUND,
	TAPROOT_RAW_END,
	__TAPROOT_RAW_LAST
};

/* Limits of a payload, checked by the reader (and the writer). */
#define TAPROOT_RAW_KSYMS_MAX	(256u << 20)	/* kallsyms text */
#define TAPROOT_RAW_PROC_MAX	(64u << 20)	/* a maps file, 64 MiB */
#define TAPROOT_RAW_RECORD_MAX	(128u << 10)	/* a record: > 64 KiB of stack + the rest */
#define TAPROOT_RAW_BUILD_ID_MAX 64
#define TAPROOT_RAW_PATH_MAX	4096

/* HEADER: the recording's options, so that a report builds the same pipeline. */
struct taproot_raw_header {
	uint32_t version;		/* TAPROOT_RAW_VERSION (set by the writer) */
	uint32_t abi_version;		/* the module's TAPROOT_ABI_VERSION */
	char kernel_release[65];	/* uname -r of the recording host */
	uint32_t freq_hz;
	uint32_t ustack_bytes;		/* 0: the module's default */
	bool cpu, offcpu;		/* --events */
	uint32_t sched_one_in;
	uint64_t min_block_ns;
	bool label_tid, label_cpu;
	uint64_t start_ns;		/* CLOCK_REALTIME at the start */
};

/* END: the recorder's own counts. */
struct taproot_raw_end {
	uint64_t duration_ns;		/* of the session */
	uint64_t lost;			/* records the rings lost (their counters) */
	uint64_t corrupt;		/* corrupt ring stretches met */
};

/* One chunk read; pointers are valid until the next call on the reader. */
struct taproot_raw_chunk {
	enum taproot_raw_type type;
	union {
		struct taproot_raw_header header;
		struct {
			const char *text;
			size_t len;
		} ksyms;
		struct {
			int pid;
			enum taproot_proc_file file;
			int err;		/* < 0: the read failed, no data */
			const char *data;	/* NUL-terminated after @len */
			size_t len;
		} proc;
		struct {
			uint64_t dev, ino;
			const char *path;
			const uint8_t *build_id;
			size_t build_id_len;
		} elf;
		struct {
			unsigned int cpu;
			const struct taproot_rec_header *rec;	/* 8-byte aligned, checked */
		} record;
		struct taproot_raw_end end;
	};
};

struct taproot_raw_writer;
struct taproot_raw_reader;

/*
 * Start writing @path: a temporary file beside it (mode 0600) that
 * taproot_raw_writer_finish() renames to @path, the HEADER @h first.
 * Errors: -errno (with a message).
 */
int taproot_raw_writer_new(const char *path, const struct taproot_raw_header *h,
			   struct taproot_raw_writer **wp);

/*
 * Append one chunk. An error is sticky: every later call returns it and
 * finish() removes the temporary file. -EINVAL for a payload past its
 * limit, -EIO (message: zlib's) for a failed write.
 */
int taproot_raw_write_ksyms(struct taproot_raw_writer *w, const char *text, size_t len);
int taproot_raw_write_proc(struct taproot_raw_writer *w, int pid, enum taproot_proc_file file,
			   int err, const char *data, size_t len);
int taproot_raw_write_elf(struct taproot_raw_writer *w, uint64_t dev, uint64_t ino,
			  const char *path, const uint8_t *build_id, size_t build_id_len);
int taproot_raw_write_record(struct taproot_raw_writer *w, unsigned int cpu,
			     const struct taproot_rec_header *rec);
int taproot_raw_write_round(struct taproot_raw_writer *w);

/*
 * Write END @end, close, fsync and rename to the final path, then free @w;
 * on an error (this one's or an earlier sticky one) the temporary file is
 * removed instead and the error returned. @end NULL: abandon the file
 * (removed, 0 returned). @w NULL is allowed.
 */
int taproot_raw_writer_finish(struct taproot_raw_writer *w, const struct taproot_raw_end *end);

/*
 * Open @path for reading and read its HEADER into *@h (magic, version
 * checked). Errors: -errno, -TAPROOT_ECORRUPT (the message says what is
 * wrong and at which byte of the uncompressed stream).
 */
int taproot_raw_reader_open(const char *path, struct taproot_raw_header *h,
			    struct taproot_raw_reader **rp);
void taproot_raw_reader_close(struct taproot_raw_reader *r);

/*
 * The next chunk after the header into *@c: 1 (END included: the file
 * must end there), 0 once END was returned, or -TAPROOT_ECORRUPT (truncated, unknown type, a length
 * or field out of range, a record that fails taproot_rec_check()),
 * -ENOMEM, -EIO. Once it failed or returned 0 it keeps doing so.
 */
int taproot_raw_next(struct taproot_raw_reader *r, struct taproot_raw_chunk *c);

/* Back to the chunk after the header (for another pass). 0 or -EIO. */
int taproot_raw_rewind(struct taproot_raw_reader *r);

/*
 * Replaying a raw capture file (lib/rawreplay.c), on the host that recorded
 * it (the host of a QEMU guest too): what the recording's process model
 * read of /proc is materialized, in stream order, in a private directory
 * that the replay's process model uses as its proc root (TMP/PID/stat,
 * maps, comm, and TMP/PID/root -> "/", so that mapped files are opened
 * from this host's file system). Mapped files are matched by build ID: when
 * this host's file at a path the recording opened has the recorded build
 * ID, maps in TMP show its dev:inode (a guest sees the host's files over 9p
 * with other inode numbers, and the process model refuses a file whose
 * inode is not the mapping's); when not, an inode that is not the file's,
 * so the mapping stays unresolved instead of being read from another file.
 */
struct taproot_replay;

/* What taproot_replay_open() found in the file. */
struct taproot_replay_info {
	struct taproot_raw_header header;
	struct taproot_raw_end end;
	uint64_t records, procs;	/* RECORD and PROC chunks */
	size_t files;			/* distinct mapped files the recording opened */
	size_t files_other;		/* of them, not the recorded one on this host */
	const char *files_other_paths[4];	/* the first of them; NULL after the last */
	uint64_t files_over;		/* past the table's bound: unresolved, counted here */
	const struct taproot_ksyms *ksyms;	/* from its KSYMS chunk; NULL: none */
};

/*
 * Open @path, read it whole once (every chunk checked: a corrupt file
 * fails here, before anything is built), load its kernel symbols, match
 * its mapped files against this host's, and make the private directory
 * (under $TMPDIR, else /tmp). Errors: as taproot_raw_reader_open() and
 * taproot_raw_next(), -errno making the directory, -ENOMEM.
 */
int taproot_replay_open(const char *path, struct taproot_replay **rp);

/* Remove the directory and free @r (NULL is allowed). */
void taproot_replay_close(struct taproot_replay *r);

const struct taproot_replay_info *taproot_replay_info(const struct taproot_replay *r);

/*
 * Pipeline options that rebuild the recording's pipeline (its frequency,
 * labels, off-CPU options, kernel symbols), and process-model options
 * @procs that @opts points to: the directory as proc root, refresh and
 * exit grace 0 (the directory always shows what the recording last read,
 * so the replay re-reads whenever the recording may have: it follows the
 * recording's reads, not this run's much faster clock). @r and @procs must
 * outlive the pipeline.
 */
void taproot_replay_pipeline_opts(const struct taproot_replay *r,
				  struct taproot_pipeline_opts *opts,
				  struct taproot_procs_opts *procs);

/*
 * Feed every record of the file to @pl, in order, materializing /proc as
 * it goes (a second pass starts the file and the directory over; reset
 * the pipeline's profiles between passes yourself). ROUND chunks end a
 * round, END flushes the off-CPU join (final). *@pipeline_ns (may be NULL)
 * gets the CLOCK_MONOTONIC time spent inside the pipeline's calls.
 * Returns 0, -EINTR when *@stop became true, or an error (the file
 * changed since it was opened, a write in the directory failed).
 */
int taproot_replay_pass(struct taproot_replay *r, struct taproot_pipeline *pl,
			uint64_t *pipeline_ns, volatile int *stop);

/* ---------------------------------------- end of the raw capture files */

#endif /* TAPROOT_H */
