/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot internals of the process model (procmaps.c), the ELF file
 * cache (elffile.c), the symbolizer (symbolize.c), JIT maps (perfmap.c) and
 * the Kubernetes metadata of containers (k8s.c):
 * struct bodies and the functions these files share with each other and
 * with the unit tests. Not for programs.
 */
#ifndef TAPROOT_PROCESS_PRIVATE_H
#define TAPROOT_PROCESS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <gelf.h>

#include "process/process.h"
#include "util/lru.h"
#include "util/util.h"

/* ------------------------------------------------------------- bounds */

#define TP_PROCS_MAX_DEFAULT	4096	/* processes kept */
#define TP_ELFS_MAX_DEFAULT	128	/* ELF files open (each may hold a debug file too) */
#define TP_REFRESH_MS_DEFAULT	200	/* maps re-read at most this often per process */
#define TP_REFRESH_QUICK	8	/* ... but for its first re-reads (tp_proc_refresh()) */
#define TP_REFRESH_QUICK_MS	5	/* apart at least */
#define TP_EXIT_GRACE_MS_DEFAULT 5000	/* an exited process's maps kept this long */
#define TP_MAPS_LINE_MAX	(4096 + 128)	/* PATH_MAX and the fixed fields */
#define TP_MAPS_LINES_MAX	(1u << 20)	/* lines read (vm.max_map_count is 65530) */
#define TP_MAPS_EXEC_MAX	16384		/* executable mappings kept per process */
#define TP_ELF_PHDRS_MAX	1024		/* program headers looked at */
#define TP_BUILD_ID_MAX		64		/* bytes of an NT_GNU_BUILD_ID kept */
#define TP_SYMS_MAX		(4u << 20)	/* symbols per ELF table */
#define TP_PERFMAP_MAX		(1u << 20)	/* entries of a perf map */
#define TP_PERFMAP_LINE_MAX	4096
#define TP_PERFMAP_BYTES_MAX	(256u << 20)	/* perf map file size read */
#define TP_INLINE_MAX		16		/* frames for one pc (inline depth) */
#define TP_DEBUG_FILE_MAX	(4ull << 30)	/* debug files larger are not CRC'ed/read */

/* ------------------------------------------------------------ ELF files */

/* A PT_LOAD segment. */
struct tp_seg {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;			/* PF_* */
};

struct tp_elfsym;			/* symbolize.c: symbol table, DWARF */

/*
 * An open ELF file, shared by every process that maps it. Entries live in
 * the cache of a struct taproot_procs, found by the (dev, ino) that
 * /proc/PID/maps shows; the file's fstat (dev, ino, size, mtime) is its
 * identity, checked again at most once a second.
 */
struct taproot_elf {
	struct taproot_elf *hnext;		/* hash chain */
	struct tp_lru_node lru;			/* in tp_elfs.lru */
	uint64_t map_dev, map_ino;		/* lookup key (maps' view) */
	uint64_t dev, ino, size;		/* fstat */
	int64_t mtime_ns;
	uint64_t serial;			/* unique per entry, never reused */
	uint64_t checked_ms;			/* last fstat */
	int fd;					/* -1 for the vdso image */
	Elf *elf;
	void *image;				/* the vdso's bytes (malloc) */
	char *path;				/* what was opened */
	char *root;				/* "/proc/PID/root" or "" */
	char *name;				/* the file's path in its process */
	uint16_t type;				/* ET_EXEC, ET_DYN */
	uint8_t build_id[TP_BUILD_ID_MAX];
	size_t build_id_len;
	uint8_t key[TP_BUILD_ID_MAX];		/* build ID, else file identity */
	size_t key_len;
	struct tp_seg *segs;
	size_t nr_segs;
	struct tp_elfsym *sym;			/* NULL until symbolized */
	/*
	 * Set with sym by the symbolizer, which owns it: the cache frees sym
	 * through it, so that the cache, below the symbolizer, never calls
	 * up into it.
	 */
	void (*sym_free)(struct tp_elfsym *sym);
};

struct tp_elfs {
	struct taproot_elf **hash;
	size_t nr_buckets;			/* power of two */
	struct tp_lru lru;			/* every entry, most recently used first */
	size_t nr, max;
	uint64_t next_serial;
	uint64_t opened, evicted;		/* statistics */
};

int tp_elfs_init(struct tp_elfs *c, size_t max);
void tp_elfs_fini(struct tp_elfs *c);

/*
 * The cached ELF file mapped as (@map_dev, @map_ino), opening it when
 * absent: first @root + @name, then @name alone when @root is not ""
 * (and the file found must be that dev/ino, or that ino on another device
 * as overlayfs shows it). @alt, when not NULL, is tried first (the
 * /proc/PID/map_files entry of a deleted mapping). The entry is valid until
 * the next call on @c. Returns 0 or a negative error with a message.
 */
int tp_elfs_get(struct tp_elfs *c, uint64_t map_dev, uint64_t map_ino,
		const char *root, const char *name, const char *alt,
		struct taproot_elf **ep);

/* The same for a file by path, without a maps key (tests, tools). */
int tp_elfs_open_path(struct tp_elfs *c, const char *path, struct taproot_elf **ep);

/* The kernel's vDSO image, from this process's own [vdso] mapping. */
int tp_elfs_vdso(struct tp_elfs *c, struct taproot_elf **ep);

/*
 * Open @path as an ELF file outside any cache, for a separate debug file
 * (no segment checks) or by the cache (@loadable: PT_LOAD segments and
 * build ID read and checked). On success *@ep is a new entry the caller
 * frees with tp_elf_free(). Errors: -errno of open/fstat, -ENOEXEC for a
 * file that is not a valid ELF (message says why).
 */
int tp_elf_open(const char *path, bool loadable, struct taproot_elf **ep);
void tp_elf_free(struct taproot_elf *e);

/* Read the NT_GNU_BUILD_ID of @elf into @buf; returns its length or 0. */
size_t tp_elf_read_build_id(Elf *elf, uint8_t *buf, size_t len);

/*
 * The segment holding file offset @off (p_offset <= off < p_offset +
 * p_filesz, or the page the segment starts in), preferring executable
 * segments; NULL when none does.
 */
const struct tp_seg *tp_elf_seg_at_offset(const struct taproot_elf *e, uint64_t off);

/* ------------------------------------------- Kubernetes metadata (k8s.c) */

#define TP_K8S_FILE_MAX		(1u << 20)	/* bytes of a runtime's file read */
#define TP_K8S_CACHE_MAX	1024		/* containers kept */
#define TP_K8S_MISS_MS		2000		/* a container without an answer, kept */
/*
 * Room for a value: Kubernetes allows 253 bytes for a pod name (a DNS
 * subdomain), 63 for a namespace and a container name (DNS labels); a uid
 * is a UUID, or a static pod's 32-hex-digit hash. Longer values are left
 * out, not cut.
 */
#define TP_K8S_VALUE_MAX	256

enum tp_k8s_field {
	TP_K8S_POD_NAME,
	TP_K8S_NAMESPACE,
	TP_K8S_CONTAINER_NAME,
	TP_K8S_POD_UID,
	TP_K8S_NR_FIELDS
};

enum tp_k8s_runtime_id {
	TP_K8S_CONTAINERD,			/* its CRI plugin's OCI bundles */
	TP_K8S_K3S,				/* the containerd k3s embeds */
	TP_K8S_CRIO,
	TP_K8S_DOCKER,				/* through cri-dockerd */
	TP_K8S_NR_RUNTIMES
};

/* What a container runtime says of a container; "" where it says nothing. */
struct tp_k8s_meta {
	char value[TP_K8S_NR_FIELDS][TP_K8S_VALUE_MAX];	/* UTF-8, no control characters */
};

/*
 * The fields of the runtime @rt's file for a container (@len bytes at
 * @doc, an OCI spec or Docker's config.v2.json) into @m. 0 (@m may be all
 * "": not a Kubernetes container), or -TAPROOT_EPROTO for a document that
 * is not valid JSON (@m all "").
 */
int tp_k8s_parse(enum tp_k8s_runtime_id rt, const char *doc, size_t len, struct tp_k8s_meta *m);

/*
 * The fields of container @id (64 lower-case hex digits) from the first
 * runtime's file found under @root ("/" in production) into @m. 0 when a
 * runtime has the container (@m may be all ""); -ENOENT when none has it;
 * -EINVAL for an id of another form or a file that is not a regular one,
 * -ELOOP a symbolic link, -EFBIG past TP_K8S_FILE_MAX, -TAPROOT_EPROTO not
 * JSON, other -errno of reading it (@m all "").
 */
int tp_k8s_read(const char *root, const char *id, struct tp_k8s_meta *m);

/*
 * The answers of tp_k8s_read() per container id, kept by the rule k8s.c's
 * header gives: an answer until evicted, a miss TP_K8S_MISS_MS.
 */
struct tp_k8s_cache {
	char *root;
	struct tp_lru lru;			/* every entry, most recently used first */
	size_t nr, max;
	struct {
		uint64_t hits, reads, refused, evicted;
	} stats;
};

/* 0, -EINVAL (@max 0) or -ENOMEM; recorded. @root is copied. */
int tp_k8s_cache_init(struct tp_k8s_cache *c, const char *root, size_t max);
void tp_k8s_cache_fini(struct tp_k8s_cache *c);

/*
 * What is known of container @id at @now_ms (a monotonic clock): from the
 * cache, else read. Valid until the next call on @c; NULL without memory,
 * or for an id that is not 64 lower-case hex digits.
 */
const struct tp_k8s_meta *tp_k8s_lookup(struct tp_k8s_cache *c, const char *id, uint64_t now_ms);

/* ------------------------------------------------------------ processes */

/* One executable mapping, with what the parser and the cache learned. */
struct tp_map {
	struct taproot_map pub;
	uint32_t path_off;			/* into the process's strings */
	int elf_err;				/* opening failed: don't retry */
};

enum tp_proc_state {
	TP_PROC_NEW,		/* never read */
	TP_PROC_LIVE,		/* maps read */
	TP_PROC_EXITED,		/* forgotten (exit event): maps kept for late samples */
	TP_PROC_GONE,		/* could not be read: reason says why */
};

struct tp_perfmap;

struct taproot_proc {
	struct taproot_procs *procs;
	struct taproot_proc *hnext;
	struct tp_lru_node lru;			/* in taproot_procs.lru */
	int pid;
	uint64_t start_time;			/* clock ticks since boot, field 22 */
	enum tp_proc_state state;
	int err;				/* why GONE */
	char reason[96];			/* "process exited", ... */
	uint64_t read_ms;			/* maps last read */
	unsigned int quick_reads;		/* re-reads sooner than refresh_ms */
	uint64_t exited_ms;
	char root[32];				/* "/proc/PID/root" */
	struct tp_map *maps;			/* sorted by start, disjoint */
	size_t nr_maps;
	char *strings;				/* paths, NUL terminated */
	size_t strings_len;
	uint64_t maps_lines;			/* lines the last read saw */
	struct tp_perfmap *perfmap;		/* /tmp/perf-PID.map, NULL until needed */
	uint64_t perfmap_ms;			/* perf map last looked at */
	int nspid;				/* the pid in its own namespace, 0 unknown */
	uint32_t execs;				/* exec calls seen (TAPROOT_REC_EXEC) */
	uint64_t exec_ns;			/* the last one's time (ring clock) */
	uint32_t maps_gen;			/* re-reads that may have changed the maps */
	char comm[17];				/* its main thread's when maps were read,
						 * "" unknown, "\n" changing */
	struct tp_labels *labels;		/* NULL: none known */
	bool labels_read;			/* since the last exec */
	struct taproot_pyproc *py;		/* its interpreter, when py_err is 0 */
	int py_err;				/* taproot_proc_python()'s */
	char py_marker[48];			/* "[python 3.N: unsupported]", "" */
	bool py_known;				/* py, py_err: of the maps held */
	struct tp_jvm *jvm;			/* its HotSpot JVM, when jvm_err is 0 */
	int jvm_err;				/* -ENOENT: none */
	bool jvm_known;				/* jvm, jvm_err: of the maps held */
	uint64_t jvm_lib;			/* the libjvm.so jvm was read from */
	unsigned int jvm_refused;		/* -ENOTSUP: its release, 0 unknown */
	uint64_t jvm_heaps_ms;			/* its code heaps last read */
};

struct taproot_procs {
	struct taproot_procs_opts opts;	/* proc_root points to ours */
	char *proc_root;
	struct taproot_proc **hash;
	size_t nr_buckets;
	struct tp_lru lru;			/* every process, most recently used first */
	size_t nr;
	struct tp_elfs elfs;
	struct tp_k8s_cache k8s;		/* the pods of containers */
	struct taproot_procs_stats stats;
};

/*
 * Parse /proc/PID/maps text from @f into @p's maps (executable mappings
 * only; the previous maps are replaced). Every line is validated; a
 * malformed one fails the whole read with -TAPROOT_EPROTO naming the line
 * (@p keeps its previous maps). Returns 0, -E2BIG past the bounds,
 * -ENOMEM, -EIO.
 */
int tp_maps_read(struct taproot_proc *p, FILE *f);

/*
 * Field 22 (starttime) of /proc/PID/stat text @buf of @len bytes, whose
 * comm may hold spaces and parentheses. Returns 0 or -TAPROOT_EPROTO.
 */
int tp_stat_start_time(const char *buf, size_t len, uint64_t *start);

/*
 * Read @p's cgroup and executable from /proc/PID (@dirfd) into its labels,
 * telling the observer. Returns 0 or -ENOMEM; what cannot be read is left
 * out.
 */
int tp_proc_read_labels(struct taproot_proc *p, int dirfd);
void tp_proc_free_labels(struct taproot_proc *p);

/*
 * Read /proc/PID/@name (@dirfd) into @buf, NUL-terminated, at most @len - 1
 * bytes: their number, or -errno.
 */
ssize_t tp_read_at(int dirfd, const char *name, char *buf, size_t len);

/* Tell the observer of @procs, if any, what was read of /proc/PID/@file. */
void tp_observe(const struct taproot_procs *procs, int pid, enum taproot_proc_file file,
		int err, const char *data, size_t len);

/* The last mapping with start <= @pc, if it holds @pc; else NULL. */
struct tp_map *tp_proc_lookup(struct taproot_proc *p, uint64_t pc);

/* --------------------------------------------------------- perf maps */

struct tp_perfsym {
	uint64_t start, size;
	uint32_t name;				/* offset into strings */
};

struct tp_perfmap {
	struct tp_perfsym *syms;		/* sorted by start */
	size_t nr;
	char *strings;
	size_t len;
	size_t bad_lines;			/* malformed lines skipped */
	uint64_t mtime_ns, size;		/* of the file read */
};

/*
 * Parse a perf map ("START SIZE NAME" per line, START and SIZE in hex with
 * an optional 0x, NAME to the end of the line) from @f. Malformed lines
 * (bad numbers, no name, size 0, wrapping ranges, overlong lines, control
 * characters) are skipped and counted: JITs append while we read. Later
 * entries win over earlier ones at the same start (code regenerated).
 * Errors: -E2BIG past TP_PERFMAP_MAX entries, -ENOMEM, -EIO.
 */
int tp_perfmap_read(FILE *f, struct tp_perfmap **pmp);
void tp_perfmap_free(struct tp_perfmap *pm);

/* The entry holding @addr, or NULL. */
const struct tp_perfsym *tp_perfmap_lookup(const struct tp_perfmap *pm, uint64_t addr);

/*
 * Load (or reload when it changed) the perf map of @p, read through
 * /proc/PID/root/tmp/perf-NSPID.map, then /tmp/perf-PID.map; at most once
 * per refresh interval. Returns 0 (p->perfmap may stay NULL) or -ENOMEM.
 */
int tp_proc_perfmap(struct taproot_proc *p);

/* ---------------------------------------------------------- symbolizer */

/*
 * Demangle the C++ (Itanium ABI) name @name with libstdc++'s
 * __cxa_demangle, loaded with dlopen on first use. Returns a malloc'ed
 * string, or NULL when @name is not mangled, libstdc++ is not there, or
 * demangling fails (the caller keeps the mangled name).
 */
char *tp_demangle(const char *name);

/*
 * The NT_GNU_BUILD_ID in the raw notes @buf of @len bytes (as
 * /sys/kernel/notes gives them) into @id of @max bytes: its length, 0 when
 * there is none or the notes are malformed.
 */
size_t tp_notes_build_id(const uint8_t *buf, size_t len, uint8_t *id, size_t max);

/* The CRC-32 of .gnu_debuglink over the file @fd (read from its start). */
int tp_file_crc32(int fd, uint32_t *crc);

/*
 * The symbol table of @e (its .symtab, its debug file's, else .dynsym):
 * the name of the function holding @vaddr and *@off into it, or NULL.
 * *@which, when not NULL, says where it came from ("symtab", "dynsym",
 * "debug").
 */
const char *tp_elf_symbol(struct taproot_elf *e, uint64_t vaddr, uint64_t *off,
			  const char **which);

/* Where the separate debug file of @e came from ("" when none). */
const char *tp_elf_debug_path(struct taproot_elf *e);

#endif /* TAPROOT_PROCESS_PRIVATE_H */
