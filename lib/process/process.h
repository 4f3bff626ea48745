/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, process model layer: processes and their mappings, ELF
 * files, perf maps and the symbolizer (lib/process/).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_PROCESS_H
#define TAPROOT_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kernel.h"
#include "runtime/runtime.h"
#include "util/labels.h"

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

/* A longer /proc/PID/maps is cut to this many bytes. */
#define TAPROOT_PROC_MAPS_MAX	(64u << 20)

/* The files of /proc/PID the process model (and the pipeline) read. */
enum taproot_proc_file {
	TAPROOT_PROC_DIR,		/* the directory itself: only its failure is told */
	TAPROOT_PROC_STAT,
	TAPROOT_PROC_MAPS,
	TAPROOT_PROC_COMM,
	TAPROOT_PROC_CGROUP,
	TAPROOT_PROC_EXE,		/* the link's target, as readlink() gives it */
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
	unsigned int refresh_ms;	/* maps re-read at most this often ... */
	unsigned int quick_reads;	/* ... but for a process's first quick_reads
					 * re-reads, 5 ms apart at least: one met while
					 * its loader still maps its libraries */
	unsigned int exit_grace_ms;	/* maps of an exited process kept */
	const char *proc_root;		/* "/proc"; tests point it elsewhere */
	/* "/": where the container runtimes' files are (k8s_* labels); tests too */
	const char *runtime_root;
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
	uint64_t maps_inherited;	/* forks that started with their parent's maps */
	uint64_t maps_dropped;		/* executable mappings past the cap */
	uint64_t elfs_opened, elfs_evicted, elf_errors;
	uint64_t labels_failed;		/* processes left without labels (no memory) */
	/*
	 * Kubernetes labels: lookups the cache answered, runtime files read
	 * (a miss is read again after 2 s), refused (not a regular file, a
	 * link, too large, not JSON, unreadable), answers evicted for room.
	 */
	uint64_t k8s_hits, k8s_reads, k8s_refused, k8s_evicted;
};

/*
 * Fill @o with the defaults: 4096 processes, 128 ELF files, 200 ms, 5 s,
 * "/proc", "/".
 */
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
 * What @proc belongs to, read with its maps when it is first read and again
 * after an exec: the labels service_name (taproot_service_name()),
 * systemd_unit, container_id, cgroup, exe (/proc/PID/exe, without
 * " (deleted)") and, for a container of a Kubernetes pod, k8s_pod_name,
 * k8s_namespace, k8s_container_name and k8s_pod_uid (from the container
 * runtime's files under runtime_root, lib/process/k8s.c), each only when
 * known; NULL when nothing is (a process that
 * could not be read). Valid as the process is (see above); take a
 * reference (tp_labels_get()) to keep it longer.
 */
struct tp_labels *taproot_proc_labels(const struct taproot_proc *proc);

/* Every key those labels may have: service_name ... exe, then the four k8s_*. */
#define TAPROOT_PROC_NR_LABEL_KEYS	9
extern const char *const taproot_proc_label_keys[TAPROOT_PROC_NR_LABEL_KEYS];

/*
 * The process @pid exited (TAPROOT_REC_EXIT): its maps are kept for the
 * exit grace period, for samples still queued, then dropped; a later
 * taproot_proc_get() of the pid reads it afresh. Unknown pids are ignored.
 */
void taproot_proc_forget(struct taproot_procs *procs, int pid);

/*
 * The process @pid called exec (TAPROOT_REC_EXEC) at @time_ns (the ring's
 * clock): its maps are re-read on next use, and taproot_proc_execs() of it
 * grows, so that what was cached about its old program (symbolized pcs)
 * is not taken for the new one. An unknown @pid is kept, unread, for the
 * time of its exec.
 */
void taproot_proc_exec(struct taproot_procs *procs, int pid, uint64_t time_ns);

/*
 * Read the live @proc's maps again now, whatever the refresh interval, for
 * a caller that needs them read after a moment of its own (after taking
 * the token of an upload to the module, TAPROOT_IOC_PROC_TOKEN), and that
 * limits how often itself. Counted as a refresh (stats.refreshes, which
 * tells users of symbolized pcs to start over) only when the mappings
 * differ from those held. Returns 0, or -ESRCH when @proc is gone or
 * exited (taproot_proc_gone() says why when gone).
 */
int taproot_proc_reread(struct taproot_proc *proc);

/*
 * taproot_proc_get() of @pid with its maps read from /proc by this call,
 * whether it was known (read again, as taproot_proc_reread()) or not
 * (read for the first time, once): for the same caller as
 * taproot_proc_reread(), when it may meet the pid first. Returns 0,
 * -ESRCH when the process is gone or exited, -ENOMEM, -EINVAL.
 */
int taproot_proc_get_current(struct taproot_procs *procs, int pid, struct taproot_proc **pp);

/*
 * The known process @pid of @start_time, not read if unknown (as
 * taproot_proc_get() would): 0 with *@pp set, or -ESRCH.
 */
int taproot_proc_find(struct taproot_procs *procs, int pid, uint64_t start_time,
		      struct taproot_proc **pp);

/*
 * Read @proc's perf map (/tmp/perf-PID.map) again now, whatever the
 * refresh interval: before a profile is written, for the JIT frames left
 * unnamed (a JVM with -XX:+DumpPerfMapAtExit writes its map as it exits).
 * A live or exited process's only. 0, or -ENOMEM.
 */
int taproot_proc_reload_perfmap(struct taproot_proc *proc);

/* Execs seen of @proc: part of its identity with pid and start time. */
uint32_t taproot_proc_execs(const struct taproot_proc *proc);

/*
 * Re-reads of @proc's maps that may have changed them (for a pc outside
 * them, or taproot_proc_reread() finding them changed): with the pid,
 * start time and execs, the identity of what was derived from its maps
 * (symbolized pcs), so that a re-read makes such results miss rather
 * than have every process's thrown away.
 */
uint32_t taproot_proc_maps_generation(const struct taproot_proc *proc);

/*
 * When @proc last exec'd, as taproot_proc_exec() was told (0: never seen):
 * a user stack captured before it is the old program's, which its maps no
 * longer describe.
 */
uint64_t taproot_proc_exec_ns(const struct taproot_proc *proc);

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
 * The name of @proc's main thread its maps were read under: "" unknown,
 * "\n" (no comm has it) when it changed during the read (an execve).
 */
const char *taproot_proc_maps_comm(const struct taproot_proc *proc);

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

/*
 * taproot_proc_new() of @child, forked by @parent (a FORK that is not a
 * thread's). A fork's address space is its parent's: the child starts with
 * the parent's maps and labels as held (none if the parent is unknown or
 * unread). It is still read from /proc at its first use, as any new
 * process is; these are what it keeps if it has exited by then, so that a
 * process that forks and ends before the consumer reaches its samples (a
 * build's worker, a shell's subshell) still has its frames named. Counted
 * in maps_inherited. Its entry is the first evicted until it is used.
 */
void taproot_proc_fork(struct taproot_procs *procs, int parent, int child);

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
 * or when the mapping has no file). When no mapping holds @pc, or the one
 * that does is no mapping of the process any more (its maps were read
 * while they changed), the maps are re-read (at most once per refresh
 * interval) and searched again. Returns
 * 0 with *@mp set, -ENOENT when no mapping holds @pc, -ESRCH when @proc is
 * gone (taproot_proc_gone()).
 */
int taproot_proc_find_map(struct taproot_proc *proc, uint64_t pc,
			  const struct taproot_map **mp);

/* Number of executable mappings of @proc, and the @i-th (sorted by start). */
size_t taproot_proc_map_count(const struct taproot_proc *proc);
const struct taproot_map *taproot_proc_map(const struct taproot_proc *proc, size_t i);

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

/*
 * What names @e's contents, *@len bytes (never 0): its build ID, else its
 * file's identity (device, inode, size, mtime), as Go's own linker leaves
 * binaries without a GNU build ID.
 */
const uint8_t *taproot_elf_key(const struct taproot_elf *e, size_t *len);

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

/*
 * The CPython interpreter a process runs (pyproc.c): its ELF file's facts
 * (lib/runtime/python.c), the bias of its mapping, the layout the module
 * walks its threads' frames by, and where its evaluation loop's code lies.
 */
struct taproot_pyproc {
	struct tp_pyelf elf;
	uint64_t bias;
	struct taproot_python_layout layout;
};

/*
 * When @proc runs a CPython interpreter taproot does not walk (another
 * version than 3.9, 3.11, 3.13; a C library other than glibc), the frame
 * its samples get to say so: "[python 3.N: unsupported]", "[python 3.N: C
 * library unsupported]"; else NULL. Valid until its maps are read again.
 */
const char *taproot_proc_python_unwalked(struct taproot_proc *proc);

/* Whether @pc of a process lies in the evaluation loop of its interpreter @py. */
bool taproot_pyproc_in_eval(const struct taproot_pyproc *py, uint64_t pc);

/*
 * The interpreter of @proc into *@pyp (valid until its maps are read
 * again), from its mappings as held: python3.N or libpython3.N, and
 * glibc's pthread library; found once per read of the maps. Returns 0,
 * -ENOENT (none, or no glibc), -ENOTSUP (a version taproot does not walk,
 * or a C library whose pthread_getspecific() it does not recognise; with
 * a message the first time), -EINVAL, -ENOMEM.
 */
int taproot_proc_python(struct taproot_proc *proc, const struct taproot_pyproc **pyp);

/*
 * When @proc maps a libjvm.so whose tables taproot refuses (a release other
 * than OpenJDK 11 to 21, or tables it cannot read as HotSpot's), the name
 * its JIT code gets, "[java: JDK 25 not supported]", in @buf (@len bytes);
 * else NULL.
 */
const char *taproot_proc_jvm_refused(struct taproot_proc *proc, char *buf, size_t len);

/*
 * The frames of the code at @pc in the code cache of the HotSpot JVM the
 * live @proc runs (libjvm.so's vmStructs, read from its memory once for
 * its maps; no JVM flag needed), innermost first, into @fr (at most @max;
 * lib/runtime/runtime.h): a compiled method's inlined methods and then
 * itself ("java.util.HashMap.get", with file and line where known), or
 * other code's name ("Interpreter", a stub's). Returns their number,
 * -ENOENT when @proc runs no JVM taproot can read or @pc is in none of
 * its code, -ENOMEM. Named as the code cache is when asked: a method the
 * JIT freed since the sample and whose space it reused would be named for
 * the new code.
 */
int taproot_proc_jvm_frames(struct taproot_proc *proc, uint64_t pc, struct tp_jvm_frame *fr,
			    int max);

/*
 * The code blob at @pc of @proc's JVM, for the unwinder (runtime.h):
 * 0, -ENOENT (no JVM, or @pc in none of its blobs), -ENOMEM.
 */
int taproot_proc_jvm_blob(struct taproot_proc *proc, uint64_t pc, struct tp_jvm_blob *b);

/*
 * A Java frame stands for a pc that no code can have, as the module's
 * walker writes it (<linux/taproot.h>, "HotSpot frames"): an interpreted
 * frame's Method* and bytecode index (TAPROOT_UPC_JVM_METHOD), or code of
 * the code cache with its compile id (TAPROOT_UPC_JVM_CODE). The
 * unwinder's JIT frames are given the same, so that both walks agree;
 * taproot_sym_user() names them ("package.Class.method", file and line).
 */
static inline bool taproot_pc_is_jvm(uint64_t pc)
{
	return pc >> 62 == 1;
}

/* Whether @pc is an interpreted Java frame's (bits 63..60 are 0100). */
static inline bool taproot_pc_is_jvm_interp(uint64_t pc)
{
	return pc >> 60 == TAPROOT_UPC_JVM_METHOD >> 60;
}

/* The pc of code at @pc of the code cache, in a blob of @compile_id (< 0: none). */
static inline uint64_t taproot_jvm_code_pc(uint64_t pc, int32_t compile_id)
{
	return taproot_upc_jvm_code(compile_id < 0 ? TAPROOT_UPC_JVM_NOID : (uint32_t)compile_id,
				    pc);
}

/*
 * Whether [@start, @end) of @proc holds code of its JVM's code cache
 * (the heaps read now if none were): the module's walker must leave such
 * a mapping to the unwinder, which knows its frames (it would follow rbp).
 */
bool taproot_proc_jvm_owns(struct taproot_proc *proc, uint64_t start, uint64_t end);

/*
 * 0 with *@pc; 1 with *@pc of the method without a bytecode index (no
 * line) when @bcp is not in its bytecodes; -ENOENT (no JVM, or not a
 * Method*), -ENOMEM.
 */
int taproot_proc_jvm_interp_pc(struct taproot_proc *proc, uint64_t method, uint64_t bcp,
			       uint64_t *pc);

/*
 * What tells the method of interpreted-frame pc @pc apart from another
 * at its address later: its ConstMethod's address as read now; 0 when it
 * cannot be read.
 */
uint64_t taproot_proc_jvm_method_cookie(struct taproot_proc *proc, uint64_t pc);

/* The frame of interpreted-frame pc @pc into @fr: 0, -ENOENT, -ENOMEM. */
int taproot_proc_jvm_interp_frame(struct taproot_proc *proc, uint64_t pc,
				  struct tp_jvm_frame *fr);

/*
 * The frames of code pc @pc (TAPROOT_UPC_JVM_CODE) as taproot_proc_jvm_frames()
 * gives them, once the blob there is the one of the pc's compile id:
 * -ESTALE when it is not (the JIT freed the code and reused its space
 * since the sample), else as taproot_proc_jvm_frames().
 */
int taproot_proc_jvm_code_frames(struct taproot_proc *proc, uint64_t pc,
				 struct tp_jvm_frame *fr, int max);

/*
 * The layout of @proc's JVM for the module's walker (tp_jvm_layout()),
 * its heaps read again if none were: 0, -ENOENT (no JVM, or no heap
 * yet), -ENOTSUP (one the module cannot walk), -ENOMEM.
 */
int taproot_proc_jvm_layout(struct taproot_proc *proc, struct taproot_jvm_layout *l);

/*
 * Read @len bytes at @addr of the live @proc's memory (process_vm_readv():
 * the caller may ptrace it). 0, -ESRCH (gone), -EFAULT (not all mapped).
 */
int taproot_proc_read_mem(const struct taproot_proc *proc, uint64_t addr, void *dst, size_t len);

/*
 * Whether @proc's memory is out of reach for good: its exit was seen, or
 * its address space is gone (reading @addr, any address, gives -ESRCH).
 * What was read of it before (maps, ELF files) stays usable.
 */
bool taproot_proc_mem_gone(const struct taproot_proc *proc, uint64_t addr);

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
	/*
	 * Unknown, and in no ELF file (anonymous executable memory, a
	 * mapping we cannot read, none): code a JIT made, which its perf
	 * map, read again later, may name (taproot_proc_reload_perfmap()).
	 */
	bool jit;
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

/* ------------------------------------------------ what a process belongs to */

#define TAPROOT_CGROUP_TEXT_MAX	16384	/* of /proc/PID/cgroup: more is cut */
#define TAPROOT_CGROUP_PATH_MAX	512
#define TAPROOT_UNIT_NAME_MAX	256	/* systemd's own limit */

/*
 * What /proc/PID/cgroup says of a process; "" where it says nothing. The
 * path is the unified (v2) hierarchy's, else systemd's named v1 hierarchy's,
 * else the first line's (cut to TAPROOT_CGROUP_PATH_MAX - 1 bytes).
 */
struct taproot_cgroup {
	char path[TAPROOT_CGROUP_PATH_MAX];
	/* The deepest systemd service or scope of the path but a container's. */
	char unit[TAPROOT_UNIT_NAME_MAX];
	/*
	 * The container's 64 hex digits, as docker, containerd (CRI), cri-o
	 * and podman name its cgroup, on v1 or v2, with or without systemd.
	 */
	char container_id[65];
};

/*
 * Parse @len bytes of /proc/PID/cgroup into @cg. Errors: -TAPROOT_EPROTO
 * for text that is not lines of "ID:CONTROLLERS:/PATH" (with a message).
 */
int taproot_cgroup_parse(const char *text, size_t len, struct taproot_cgroup *cg);

/*
 * The name a store keeps the profiles of a process under, into @buf (cut to
 * @len - 1 bytes): its systemd service without ".service" (not the per-user
 * manager user@UID.service, and not when its container is in another
 * hierarchy than the service), else its container's short id (12 hex
 * digits, as docker shows it), else the base name of its executable @exe
 * (NULL or "": none). Returns the length of the whole name, as snprintf().
 */
size_t taproot_service_name(const struct taproot_cgroup *cg, const char *exe,
			    char *buf, size_t len);

/* ------------------------------------------------- debuginfod */

/*
 * Separate debug files fetched by build ID from debuginfod servers
 * (lib/process/debuginfod.c): libdebuginfod, loaded at run time, in a
 * thread of its own. The symbolizer asks; nobody waits on the network.
 */
struct taproot_debuginfod;

struct taproot_debuginfod_opts {
	const char *urls;		/* NULL: $DEBUGINFOD_URLS */
	unsigned int timeout_s;		/* a fetch ends after this long */
	unsigned int retry_s;		/* an absent build ID is asked again after */
};

struct taproot_debuginfod_stats {
	uint64_t asked;			/* fetches queued */
	uint64_t found, absent;		/* fetches done */
	uint64_t full;			/* not queued: table or queue full */
	uint64_t pending;		/* now */
	int last_error;			/* of the last failed fetch, -errno */
};

/* Fill @o with the defaults: $DEBUGINFOD_URLS, 10 s, 600 s. */
void taproot_debuginfod_opts_default(struct taproot_debuginfod_opts *o);

/*
 * Start fetching (sets $DEBUGINFOD_URLS from @opts->urls, and
 * $DEBUGINFOD_TIMEOUT and $DEBUGINFOD_MAXTIME when unset: call it before
 * other threads run). Errors: -EINVAL without URLs, -ENOSYS without
 * libdebuginfod, -ENOMEM, -EAGAIN (no thread).
 */
int taproot_debuginfod_new(const struct taproot_debuginfod_opts *opts,
			   struct taproot_debuginfod **dp);

/* Stop (a fetch under way is cancelled) and free; NULL allowed. */
void taproot_debuginfod_free(struct taproot_debuginfod *d);

/*
 * The debug file of build ID @id (@len bytes): 0 with its path in @path
 * (@plen bytes), -EAGAIN while it is fetched (asking queues it), -ENOENT
 * when the servers have none (asked again after retry_s) or no room was
 * left to ask. Never blocks on the network.
 */
int taproot_debuginfod_find(struct taproot_debuginfod *d, const uint8_t *id, size_t len,
			    char *path, size_t plen);

/* A number that changes whenever a debug file arrives; 0 for NULL @d. */
uint64_t taproot_debuginfod_generation(const struct taproot_debuginfod *d);

void taproot_debuginfod_get_stats(struct taproot_debuginfod *d,
				  struct taproot_debuginfod_stats *st);

/*
 * Have @s ask @d (borrowed; NULL: none) for the debug files of the ELF
 * files with a build ID that have neither symbols nor DWARF here and no
 * local debug file. A file whose fetch is under way is symbolized without
 * it, and again with it once taproot_debuginfod_generation() changes (a
 * cache of symbolized pcs must then be flushed to see it).
 */
void taproot_sym_set_debuginfod(struct taproot_sym *s, struct taproot_debuginfod *d);

#endif /* TAPROOT_PROCESS_H */
