// SPDX-License-Identifier: GPL-2.0
/*
 * A capture's stack as profile frames (internal.h): the user part
 * unwound from the stack copy, or taken from the module's walk, or both;
 * every pc symbolized through the cache of symbolized pcs; marker frames
 * where a walk ended early or the process could not be read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include <gelf.h>

#include "pipeline/internal.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/util.h"

static const char *const pl_end_marker[TAPROOT_UNWIND_NR_ENDS] = {
	[TAPROOT_UNWIND_COMPLETE] = NULL,
	[TAPROOT_UNWIND_TRUNCATED] = "[truncated]",
	[TAPROOT_UNWIND_NO_MAPPING] = "[no mapping]",
	[TAPROOT_UNWIND_NO_CFI] = "[no cfi]",
	[TAPROOT_UNWIND_BAD_FRAME] = "[bad frame]",
	[TAPROOT_UNWIND_MAX_DEPTH] = "[max depth]",
};

/*
 * How the module's walk ended, for a user stack that ends where it did
 * (a STACK's, or a fallback without a stack copy to go on with): the
 * unwinder's end it is counted as in stats.unwind[], and its marker frame.
 * The ends the unwinder has no name for count as truncated: the stack
 * needed to go on was not there.
 */
static const struct {
	enum taproot_unwind_end end;
	const char *marker;
} pl_kend[TAPROOT_KUNWIND_NR] = {
	[TAPROOT_KUNWIND_NONE] = { TAPROOT_UNWIND_TRUNCATED, "[truncated]" },
	[TAPROOT_KUNWIND_COMPLETE] = { TAPROOT_UNWIND_COMPLETE, NULL },
	[TAPROOT_KUNWIND_MAX_FRAMES] = { TAPROOT_UNWIND_MAX_DEPTH, "[max depth]" },
	[TAPROOT_KUNWIND_NO_PROC] = { TAPROOT_UNWIND_TRUNCATED, "[no unwind tables]" },
	[TAPROOT_KUNWIND_STALE] = { TAPROOT_UNWIND_TRUNCATED, "[stale unwind tables]" },
	[TAPROOT_KUNWIND_NO_MAPPING] = { TAPROOT_UNWIND_NO_MAPPING, "[no mapping]" },
	[TAPROOT_KUNWIND_NO_CFI] = { TAPROOT_UNWIND_NO_CFI, "[no cfi]" },
	[TAPROOT_KUNWIND_SLOW_RULE] = { TAPROOT_UNWIND_TRUNCATED, "[slow rule]" },
	[TAPROOT_KUNWIND_FAULT] = { TAPROOT_UNWIND_TRUNCATED, "[truncated]" },
	[TAPROOT_KUNWIND_BAD_FRAME] = { TAPROOT_UNWIND_BAD_FRAME, "[bad frame]" },
};

/* ------------------------------------------------------------ frames */

/* Room for @n more frames in p->frames after @nf. */
static bool pl_room(const struct taproot_pipeline *p, size_t nf, size_t n)
{
	return nf + n <= p->max_frames;
}

/*
 * Convert the symbolizer's @nr frames of one pc into profile frames at
 * @out: strings are the symbolizer's (copied by the cache right after).
 */
static unsigned int pl_convert(const struct taproot_frame *sf, int nr, uint64_t address,
			       bool is_kernel, bool have_map, uint64_t mstart, uint64_t mend,
			       uint64_t mpgoff, struct taproot_profile_frame *out)
{
	unsigned int unknown = 0;

	for (int i = 0; i < nr; i++) {
		const struct taproot_frame *f = &sf[i];
		struct taproot_profile_frame *o = &out[i];

		memset(o, 0, sizeof(*o));
		/*
		 * A pc the symbolizer did not know stays an address in its
		 * mapping (function NULL), unless it is part of an inline chain,
		 * whose frames all need a name.
		 */
		o->function = f->known || nr > 1 ? f->function : NULL;
		if (!f->known)
			unknown++;
		if (f->known && strncmp(f->function, "[unknown", 8) != 0)
			o->file = f->file;
		o->line = f->line;
		o->address = address;
		o->is_kernel = is_kernel;
		o->inlined = f->inlined;
		o->build_id = f->build_id;
		o->build_id_len = f->build_id ? f->build_id_len : 0;
		if (is_kernel) {
			o->mapping_path = f->map_path;
		} else if (have_map) {
			o->mapping_path = f->map_path;
			o->mapping_start = mstart;
			o->mapping_limit = mend;
			o->mapping_offset = mpgoff;
		}
		if (o->build_id_len > TAPROOT_PROFILE_MAX_BUILD_ID) {
			o->build_id = NULL;
			o->build_id_len = 0;
		}
	}
	return unknown;
}

/*
 * A pc of a file-backed mapping is symbolized once per file, whatever the
 * process: the cache keeps an entry of pid PL_SYM_FILE too, keyed by the
 * file's identity (device and inode, as maps shows them) and the pc's ELF
 * address, from which another process's entry is copied with its own
 * addresses: a thousand processes of one program cost one symbolization
 * of each pc, not a thousand.
 */
#define PL_SYM_FILE	(-2)

/* The file identity of mapping @m, for the entries of pid PL_SYM_FILE. */
static uint64_t pl_sym_file(const struct taproot_map *m)
{
	return tp_hash_fin(tp_hash_mix(m->dev, m->ino));
}

/*
 * @proc's entry for @pc from @fe, its file's: the names are the file's,
 * the address and mapping fields @proc's (@address in mapping @m).
 */
static struct tp_sym *pl_sym_from_file(struct taproot_pipeline *p, const struct tp_sym *fe,
				       int pid, uint64_t start_time, uint64_t pc,
				       unsigned int flags, uint64_t address,
				       const struct taproot_map *m)
{
	struct taproot_profile_frame tmp[PL_MAX_INLINE];

	memcpy(tmp, fe->frames, fe->nr * sizeof(tmp[0]));
	for (unsigned int i = 0; i < fe->nr; i++) {
		tmp[i].address = address;
		tmp[i].mapping_path = m->path;
		tmp[i].mapping_start = m->start;
		tmp[i].mapping_limit = m->end;
		tmp[i].mapping_offset = m->pgoff;
	}
	p->st.sym_cache_file_hits++;
	return tp_symcache_add(&p->symcache, pid, start_time, pc, flags, tmp, fe->nr, fe->unknown);
}

/*
 * With opts.symbolize_none, @proc's entry for @pc (@address in mapping
 * @m, an ELF file): no name, the address and the mapping with its build
 * ID, for a server to name; the file's symbols and DWARF are never read.
 * Not counted as unsymbolized: nobody asked for its name.
 */
static const struct tp_sym *pl_sym_unnamed(struct taproot_pipeline *p, int pid,
					   uint64_t start_time, uint64_t pc, unsigned int flags,
					   uint64_t address, const struct taproot_map *m)
{
	struct taproot_profile_frame out;
	struct taproot_frame f = {
		.function = "[unknown]",
		.map_path = m->path,
	};

	f.build_id = taproot_elf_build_id(m->elf, &f.build_id_len);
	if (!f.build_id)
		f.build_id_len = 0;
	pl_convert(&f, 1, address, false, true, m->start, m->end, m->pgoff, &out);
	return tp_symcache_add(&p->symcache, pid, start_time, pc, flags, &out, 1, 0);
}

/*
 * Keep JIT pc @pc of @proc, symbolized without a name as @unnamed under
 * cache key @sym_start, for tp_pl_name_late(). Not kept past
 * PL_JIT_PENDING_MAX (counted), nor with a mapping name too long to copy.
 */
static void pl_jit_note(struct taproot_pipeline *p, struct taproot_proc *proc,
			uint64_t sym_start, uint64_t pc, unsigned int flags,
			const struct taproot_profile_frame *unnamed)
{
	const char *path = unnamed->mapping_path ? unnamed->mapping_path : "";
	struct pl_jit *e;

	if (strlen(path) >= PL_JIT_PATH_MAX)
		return;
	if (p->njit == PL_JIT_PENDING_MAX ||
	    tp_grow((void **)&p->jit, &p->jit_alloc, p->njit + 1, sizeof(*p->jit))) {
		p->st.jit_pending_dropped++;
		return;
	}
	e = &p->jit[p->njit++];
	e->pid = taproot_proc_pid(proc);
	e->proc_start = taproot_proc_start_time(proc);
	e->execs = taproot_proc_execs(proc);
	e->sym_start = sym_start;
	e->pc = pc;
	e->flags = flags;
	/* Its strings are the symbolizer's: its mapping's is copied. */
	e->unnamed = *unnamed;
	e->unnamed.mapping_path = NULL;
	e->unnamed.key = NULL;
	snprintf(e->map_path, sizeof(e->map_path), "%s", path);
}

/* A symbolized pc from the cache, or symbolized now and cached. */
static const struct tp_sym *pl_symbolize(struct taproot_pipeline *p, struct taproot_proc *proc,
					 uint64_t pc, unsigned int flags)
{
	struct taproot_profile_frame tmp[PL_MAX_INLINE];
	const struct taproot_frame *sf;
	const struct taproot_map *m = NULL;
	/*
	 * The program and its maps are part of the identity: an exec reuses
	 * pid and start time, a re-read may have moved a mapping.
	 */
	uint64_t start_time = proc ? tp_hash_mix(tp_hash_mix(taproot_proc_start_time(proc),
							     taproot_proc_execs(proc)),
						 taproot_proc_maps_generation(proc)) : 0;
	uint64_t address = (flags & TAPROOT_SYM_RETADDR) && pc ? pc - 1 : pc;
	uint64_t mstart = 0, mend = 0, mpgoff = 0;
	int pid = proc ? taproot_proc_pid(proc) : -1;
	bool have_map = false, by_file = false;
	uint64_t file = 0, vaddr = 0;
	uint32_t gen = 0;
	struct tp_sym *e;
	unsigned int unknown;
	int nr;

	/*
	 * An interpreted Java frame's name is its Method's, which the JVM
	 * frees with its class: the address could hold another method's
	 * since the name was cached, with another ConstMethod.
	 */
	if (proc && taproot_pc_is_jvm_interp(pc))
		start_time = tp_hash_mix(start_time, taproot_proc_jvm_method_cookie(proc, pc));
	e = tp_symcache_find(&p->symcache, pid, start_time, pc, flags);
	if (e) {
		p->st.sym_cache_hits++;
		return e;
	}
	p->st.sym_cache_misses++;
	if (proc && taproot_pc_is_jvm(pc)) {
		/* Java frames: a mapping of their own, where their pcs lie (bits 63..62: 01). */
		have_map = true;
		mstart = TAPROOT_UPC_JVM_METHOD;
		mend = TAPROOT_UPC_JVM_METHOD << 1;
		nr = taproot_sym_user(p->sym, proc, pc, flags, &sf);
	} else if (proc) {
		if (taproot_proc_find_map(proc, address, &m) == 0) {
			have_map = true;
			mstart = m->start;
			mend = m->end;
			mpgoff = m->pgoff;
			by_file = m->elf && m->ino;
		}
		if (by_file && p->opts.symbolize_none)
			return pl_sym_unnamed(p, pid, start_time, pc, flags, address, m);
		if (by_file) {
			file = pl_sym_file(m);
			vaddr = pc - m->bias;
			e = tp_symcache_find(&p->symcache, PL_SYM_FILE, file, vaddr, flags);
			if (e)
				return pl_sym_from_file(p, e, pid, start_time, pc, flags, address, m);
		}
		gen = taproot_proc_maps_generation(proc);
		nr = taproot_sym_user(p->sym, proc, pc, flags, &sf);
		/* Maps read again meanwhile: @m may not be the mapping it used. */
		by_file = by_file && gen == taproot_proc_maps_generation(proc);
	} else {
		nr = taproot_sym_kernel(p->sym, pc, flags, &sf);
	}
	if (nr <= 0)
		return NULL;
	if (nr > PL_MAX_INLINE)
		nr = PL_MAX_INLINE;
	unknown = pl_convert(sf, nr, address, !proc, have_map, mstart, mend, mpgoff, tmp);
	if (by_file && !tp_symcache_add(&p->symcache, PL_SYM_FILE, file, vaddr, flags, tmp,
					(unsigned int)nr, unknown))
		return NULL;
	if (proc && nr == 1 && sf[0].jit)
		pl_jit_note(p, proc, start_time, pc, flags, &tmp[0]);
	return tp_symcache_add(&p->symcache, pid, start_time, pc, flags, tmp,
			       (unsigned int)nr, unknown);
}

static int pl_jit_cmp(const void *a, const void *b)
{
	const struct pl_jit *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->proc_start != y->proc_start)
		return x->proc_start < y->proc_start ? -1 : 1;
	if (x->sym_start != y->sym_start)
		return x->sym_start < y->sym_start ? -1 : 1;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

/*
 * Name @e from its process's perf map as read now, in every profile: 1
 * when named, 0 when the map has no name for it yet, -ENOMEM.
 */
static int pl_jit_name(struct taproot_pipeline *p, struct taproot_proc *proc, struct pl_jit *e)
{
	struct taproot_profile_frame named[PL_MAX_INLINE];
	const struct taproot_profile_frame *u = &e->unnamed;
	const struct taproot_frame *sf;
	int nr = taproot_sym_user(p->sym, proc, e->pc, e->flags, &sf);

	if (nr < 0)
		return nr;
	if (nr == 0 || !sf[0].known)
		return 0;
	if (nr > PL_MAX_INLINE)
		nr = PL_MAX_INLINE;
	e->unnamed.mapping_path = e->map_path;
	pl_convert(sf, nr, u->address, false, u->mapping_limit != 0, u->mapping_start,
		   u->mapping_limit, u->mapping_offset, named);
	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++) {
		int err = p->kinds[k] ?
			taproot_profile_name_location(p->kinds[k], u, named, (size_t)nr) : 0;

		if (err < 0)
			return err;
	}
	/* Seen again, it is symbolized again: with its name. */
	tp_symcache_remove(&p->symcache, e->pid, e->sym_start, e->pc, e->flags);
	p->st.jit_named_late++;
	return 1;
}

void tp_pl_name_late(struct taproot_pipeline *p)
{
	struct taproot_proc *proc = NULL;
	size_t kept = 0, named = 0;

	if (!p->njit)
		return;
	qsort(p->jit, p->njit, sizeof(p->jit[0]), pl_jit_cmp);
	for (size_t i = 0; i < p->njit; i++) {
		struct pl_jit *e = &p->jit[i];
		int r;

		/*
		 * Noted twice: its cache entry went and came back unnamed.
		 * (jit[i - 1] is as sorted: only entries before it moved.)
		 */
		if (i && !pl_jit_cmp(e, &p->jit[i - 1]))
			continue;
		/* The process's perf map, read again once for its pcs. */
		if (!i || e->pid != p->jit[i - 1].pid || e->proc_start != p->jit[i - 1].proc_start) {
			if (taproot_proc_find(p->procs, e->pid, e->proc_start, &proc) < 0 ||
			    taproot_proc_reload_perfmap(proc) < 0)
				proc = NULL;
		}
		/* Its process gone from the model, or its program: no name will come. */
		if (!proc || taproot_proc_execs(proc) != e->execs)
			continue;
		r = pl_jit_name(p, proc, e);
		if (r > 0) {
			named++;
			continue;
		}
		if (kept != i)
			p->jit[kept] = *e;
		kept++;
	}
	p->njit = kept;
	if (named)
		p->jit_generation++;
}

/*
 * Whether @pc, the last pc of an unwind that found no CFI for it, is at
 * the entry point of its ELF (e_entry, within ENTRY_SLACK bytes): the
 * outermost frame of the process. The dynamic loader's _start has no CFI
 * (glibc's RTLD_START is bare assembly, 61 bytes on Debian 12: "mov %rsp,
 * %rdi; call _dl_start", then _dl_start_user's "call _dl_init" at +0x2b),
 * so every sample taken while ld.so runs before main would otherwise end
 * in "[no cfi]" although nothing is missing.
 */
#define ENTRY_SLACK	64

static bool pl_at_entry(struct taproot_proc *proc, uint64_t pc)
{
	const struct taproot_map *m;
	GElf_Ehdr eh;
	uint64_t v;

	if (taproot_proc_find_map(proc, pc, &m) < 0 || !m->elf ||
	    !gelf_getehdr(taproot_elf_handle(m->elf), &eh) || !eh.e_entry)
		return false;
	v = pc - m->bias;
	return v >= eh.e_entry && v < eh.e_entry + ENTRY_SLACK;
}

/* Whether some mapping of @proc holds @pc (its maps re-read if not, at most once per refresh). */
static bool pl_has_map(struct taproot_proc *proc, uint64_t pc)
{
	const struct taproot_map *m;

	return taproot_proc_find_map(proc, pc, &m) != -ENOENT;
}

/* A frame with just a name: "[truncated]", "[unknown: process exited]". */
static void pl_marker(struct taproot_profile_frame *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->function = name;
}

/*
 * The symbolized pcs may be stale once the process model re-read some
 * maps (a pc now in another mapping): then the cache starts over.
 */
static void pl_symcache_flush(struct taproot_pipeline *p)
{
	tp_symcache_clear(&p->symcache);
	tp_pyframes_clear(p->pyframes);
	for (int k = 0; k < TAPROOT_PROFILE_NR_KINDS; k++)
		if (p->kinds[k])
			taproot_profile_forget_keys(p->kinds[k]);
}

/*
 * A pc symbolized before may now have other frames: after a debug file
 * arrived from debuginfod, every pc; after a process's maps were read
 * again, its pcs, whose entries then miss (the maps generation is part
 * of their identity: pl_symbolize()) and go when the cache fills. The
 * Python names of the process's code objects go at once, as before.
 */
static void pl_check_refresh(struct taproot_pipeline *p)
{
	uint64_t gen = taproot_debuginfod_generation(p->opts.debuginfod);
	struct taproot_procs_stats ps;

	taproot_procs_get_stats(p->procs, &ps);
	if (gen != p->debuginfod_generation) {
		p->debuginfod_generation = gen;
		p->procs_refreshes = ps.refreshes;
		pl_symcache_flush(p);
		p->st.sym_cache_flushes++;
	} else if (ps.refreshes != p->procs_refreshes) {
		p->procs_refreshes = ps.refreshes;
		tp_pyframes_clear(p->pyframes);
	}
}

static int pl_add_sym(struct taproot_pipeline *p, size_t *nf, const struct tp_sym *e)
{
	if (!pl_room(p, *nf, e->nr))
		return -E2BIG;
	memcpy(&p->frames[*nf], e->frames, e->nr * sizeof(e->frames[0]));
	/* Its serial stands for these frames, whatever becomes of the entry. */
	p->frames[*nf + e->nr - 1].key = (const void *)(uintptr_t)e->serial;
	*nf += e->nr;
	p->st.frames++;
	p->st.frames_unsymbolized += e->unknown ? 1 : 0;
	return 0;
}

/* The interrupted user ip: the module's first pc when it walked, else the registers'. */
static uint64_t pl_user_ip(const struct pl_capture *c)
{
	return c->upc_nr ? c->upcs[0] : c->regs->ip;
}

/* Whether @name is a tracing trampoline: __traceiter_*, __bpf_trace_*. */
static bool pl_is_trampoline(const char *name)
{
	return name && (!strncmp(name, "__traceiter_", 12) || !strncmp(name, "__bpf_trace_", 12));
}

/* What pl_stack_unwind() found of a capture's user stack. */
enum pl_user {
	PL_USER_NONE,		/* none to unwind: the kernel frames alone */
	PL_USER_GONE,		/* the process could not be read (why: *gone) */
	PL_USER_UNWOUND,	/* unwound: res.nr pcs in p->pcs */
};

int tp_pl_unwind_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	const struct pl_unwind_arg *a = arg;

	return taproot_proc_unwind_map(a->proc, pc, um) == 0 ? 1 : 0;
}

/* HotSpot's interpreter frame: its Method*, and its bytecode pointer while not running. */
#define PL_JVM_INTERP_METHOD	24	/* below rbp */
#define PL_JVM_INTERP_BCP	64
/* A compiled frame this close to its prologue's end has pushed rbp. */
#define PL_JVM_PROLOGUE_TAIL	4

/* Words past a compiled frame's size where its return address may lie. */
#define PL_JVM_RA_SCAN		6

/*
 * The size of a compiled frame of @size bytes at @at: where its return
 * address is. Compiled Java code is called from Java code or the call
 * stub, all in the code cache; but the JIT's x86 code may have pushed a
 * few words more than the blob says (HotSpot's own frame::safe_for_sender
 * and async-profiler look a few words further too). 1 with *@out; 1 with
 * @size where the copy ends first (the unwinder then says it is cut
 * short); 0 when no word of the scan is such a return address.
 */
static int pl_jvm_frame_size(struct taproot_proc *proc, const struct taproot_unwind_at *at,
			     uint32_t size, uint32_t *out)
{
	uint64_t ra;

	*out = size;
	for (uint32_t k = 0; k <= PL_JVM_RA_SCAN; k++) {
		if (taproot_unwind_at_read(at, at->sp + size + 8 * k - 8, &ra) < 0)
			return 1;
		if (ra && taproot_proc_jvm_owns(proc, ra - 1, ra)) {
			*out = size + 8 * k;
			return 1;
		}
	}
	return 0;
}


/*
 * A frame in a JVM's code cache, by its blob (the OpenTelemetry profiler's
 * HotSpot unwinder does the same, and so does the module's walker,
 * kmod/jvwalk.c, whose steps these are): compiled code keeps no frame
 * pointer, its frames are as large as the blob says once its prologue is
 * done; the interpreter's frames chain by rbp and keep their caller's sp;
 * stubs without a frame size keep rbp. The frame's pc, as the module's
 * walker writes it (an interpreted frame's method, or the code with its
 * compile id), is noted in p->pcnames, which take the pcs' places.
 */
int tp_pl_unwind_jit(const struct taproot_unwind_at *at, struct taproot_unwind_jit *f, void *arg)
{
	const struct pl_unwind_arg *a = arg;
	uint64_t lookup = at->exact ? at->pc : at->pc - 1, method, bcp, name, orig;
	unsigned int i = a->at + at->index;
	struct tp_jvm_blob b;
	uint8_t code[TP_JVM_EPILOGUE_BYTES];
	int named, ret;

	if (taproot_proc_jvm_blob(a->proc, lookup, &b) < 0)
		return 0;
	name = taproot_jvm_code_pc(at->pc, b.compile_id);
	ret = 1;
	switch (b.kind) {
	case TP_JVM_BLOB_INTERPRETER:
		if (!at->bp || taproot_unwind_at_read(at, at->bp - PL_JVM_INTERP_METHOD, &method) < 0)
			return 0;
		/* Running, it keeps the bcp in r13; the slot has it at a call. */
		named = at->exact && at->r13 ?
			taproot_proc_jvm_interp_pc(a->proc, method, at->r13, &name) : -ENOENT;
		if (named != 0) {
			if (taproot_unwind_at_read(at, at->bp - PL_JVM_INTERP_BCP, &bcp) < 0)
				bcp = 0;
			taproot_proc_jvm_interp_pc(a->proc, method, bcp, &name);
		}
		f->kind = TAPROOT_JIT_INTERP;
		break;
	case TP_JVM_BLOB_VTABLE:
		f->kind = TAPROOT_JIT_SP;
		f->size = 8;
		break;
	case TP_JVM_BLOB_NMETHOD:
	case TP_JVM_BLOB_NATIVE:
		if (at->pc == b.deopt_handler) {
			f->orig_pc_off = b.orig_pc_offset;
			/* Named for the pc it had, as the unwinder gives it. */
			if (b.orig_pc_offset >= 0 &&
			    taproot_unwind_at_read(at, at->sp + (uint64_t)b.orig_pc_offset,
						   &orig) == 0 && orig)
				name = taproot_jvm_code_pc(orig, b.compile_id);
		}
		f->kind = TAPROOT_JIT_SP;
		/* In the prologue: the return address, then rbp, pushed so far. */
		if (at->exact && lookup < b.code_begin + b.frame_complete) {
			f->size = lookup + PL_JVM_PROLOGUE_TAIL >= b.code_begin + b.frame_complete ?
				  16 : 8;
			break;
		}
		/* Sampled in its epilogue: the frame released already. */
		if (at->exact && taproot_proc_read_mem(a->proc, at->pc, code, sizeof(code)) == 0 &&
		    (f->size = tp_jvm_epilogue(code)))
			break;
		ret = pl_jvm_frame_size(a->proc, at, b.frame_size, &f->size);
		break;
	case TP_JVM_BLOB_STUB:
		f->kind = b.frame_size ? TAPROOT_JIT_SP : TAPROOT_JIT_FP;
		f->size = b.frame_size;
		break;
	}
	if (ret == 1 && i < a->p->max_pcs) {
		a->p->pcnames[i] = name;
		a->p->pcnames_set = true;
	}
	return ret;
}

/*
 * Run the unwinder over @c's registers and stack copy from frame @start
 * (TAPROOT_UNWIND_START_*), its pcs into p->pcs from @at, at most @max;
 * res->nr counts those before @at too.
 */
static void pl_user_unwind(struct taproot_pipeline *p, const struct pl_capture *c,
			   struct taproot_proc *proc, unsigned int start, unsigned int at,
			   unsigned int max, struct taproot_unwind_result *res)
{
	struct pl_unwind_arg arg = { .p = p, .proc = proc, .at = at };
	uint64_t t0 = tp_clock_ns(CLOCK_MONOTONIC);
	int err;

	err = taproot_unwind_from(p->unwinder, &arg, c->regs, start, c->ustack, c->ustack_len,
				  p->pcs + at, p->pcflags + at, max, res);
	/* Java frames as the module's walker gives them. */
	for (unsigned int i = at; p->pcnames_set && i < at + res->nr; i++)
		if (p->pcnames[i])
			p->pcs[i] = p->pcnames[i];
	p->st.unwind_ns += tp_clock_ns(CLOCK_MONOTONIC) - t0;
	p->st.unwind_frames += res->nr;
	/* -ENOMEM: the pcs found so far are there; go on with them. */
	if (err < 0 && res->end == TAPROOT_UNWIND_COMPLETE)
		res->end = TAPROOT_UNWIND_BAD_FRAME;
	res->nr += at;
}

/*
 * The module's first @n pcs of @c into p->pcs: the leaf's exact, the
 * others return addresses (symbolized at pc - 1, as the unwinder's; a
 * frame a signal frame restored, exact in truth, is not told apart).
 */
static void pl_user_given(struct taproot_pipeline *p, const struct pl_capture *c, unsigned int n)
{
	memcpy(p->pcs, c->upcs, n * sizeof(p->pcs[0]));
	for (unsigned int i = 0; i < n; i++)
		p->pcflags[i] = i ? 0 : TAPROOT_FRAME_EXACT;
}

/*
 * VERIFY: whether the unwinder's pcs (@res) are the module's walk, as
 * taproot_pipeline_stats.verify_identical defines it; counted. A walk
 * that differs while @proc's memory is gone is not compared: the
 * unwinder reads a JVM's code cache live, and a consumer behind the ring
 * unwinds the last samples of a process that has exited.
 */
static void pl_verify(struct taproot_pipeline *p, const struct pl_capture *c,
		      const struct taproot_proc *proc, const struct taproot_unwind_result *res)
{
	bool same = c->kend == TAPROOT_KUNWIND_MAX_FRAMES ? res->nr >= c->upc_nr :
			res->nr == c->upc_nr;

	same = same && !memcmp(p->pcs, c->upcs, c->upc_nr * sizeof(p->pcs[0]));
	if (same)
		p->st.verify_identical++;
	else if (!taproot_proc_mem_gone(proc, pl_user_ip(c)))
		p->st.verify_differing++;
}

/* The user pcs of @c into p->pcs, by its kind (enum pl_upcs); @res what they are. */
static void pl_user_pcs(struct taproot_pipeline *p, const struct pl_capture *c,
			struct taproot_proc *proc, struct taproot_unwind_result *res)
{
	unsigned int max = p->opts.max_user_frames, pre;

	if (p->pcnames_set) {
		memset(p->pcnames, 0, p->max_pcs * sizeof(p->pcnames[0]));
		p->pcnames_set = false;
	}
	for (unsigned int i = 0; i < c->upc_nr; i++)
		p->st.java_frames_kernel += taproot_pc_is_jvm(c->upcs[i]);
	switch (c->upcs_mode) {
	case PL_UPCS_WHOLE:
		memset(res, 0, sizeof(*res));
		pl_user_given(p, c, c->upc_nr);
		res->nr = c->upc_nr;
		res->end = pl_kend[c->kend].end;
		return;
	case PL_UPCS_CONTINUE:
		/* regs are frame upc_nr - 1's: its pc comes from the unwinder. */
		pre = c->upc_nr ? c->upc_nr - 1 : 0;
		pl_user_given(p, c, pre);
		pl_user_unwind(p, c, proc, c->regs_caller ? TAPROOT_UNWIND_START_CALLER : 0, pre,
			       max > pre ? max - pre : 1, res);
		p->st.kunwind_continued++;
		return;
	case PL_UPCS_VERIFY:
		/* Room for the module's whole walk, whatever max_user_frames. */
		pl_user_unwind(p, c, proc, 0, 0, max > c->upc_nr ? max : c->upc_nr, res);
		pl_verify(p, c, proc, res);
		return;
	default:
		pl_user_unwind(p, c, proc, 0, 0, max, res);
		return;
	}
}

/*
 * Unwind the user stack of @c, in process *@procp (NULL when @c has no
 * user stack). Counts what the unwinder did (time, frames, entry points)
 * but not the outcome, which tp_pl_stack() returns once it is final (tp_stack_outcome).
 */
static int pl_stack_unwind(struct taproot_pipeline *p, const struct pl_capture *c,
			   struct taproot_proc **procp, const char **gone,
			   struct taproot_unwind_result *res, enum pl_user *user)
{
	struct taproot_proc *proc;
	int err;

	*user = PL_USER_NONE;
	if (!c->user || !c->pid)
		return 0;
	err = taproot_proc_get(p->procs, (int)c->pid, 0, &proc);
	if (err < 0)
		return err;
	*procp = proc;
	*gone = taproot_proc_gone(proc);
	if (*gone) {
		*user = PL_USER_GONE;
		return 0;
	}
	/*
	 * Its maps were read under another name: an execve came between the
	 * sample and the read. Unwound there, the pcs would take the other
	 * program's names.
	 */
	if (c->comm && c->tid == c->pid && !taproot_proc_check_comm(proc, c->comm))
		return 1;
	/* Captured before an exec the process model has seen: the old program's. */
	if (c->time_ns && c->time_ns < taproot_proc_exec_ns(proc))
		return 1;
	/*
	 * In the kernel with a user ip that no mapping of the process holds:
	 * the registers are stale, as between exec_mmap() and start_thread()
	 * in execve (the old program's registers, the new program's memory).
	 * There is no user stack to unwind: the kernel frames alone.
	 */
	if (c->in_kernel && !pl_has_map(proc, pl_user_ip(c)))
		return 1;

	pl_user_pcs(p, c, proc, res);
	if (res->end == TAPROOT_UNWIND_NO_CFI && res->nr &&
	    pl_at_entry(proc, p->pcs[res->nr - 1] -
			(p->pcflags[res->nr - 1] & TAPROOT_FRAME_EXACT ? 0 : 1))) {
		res->end = TAPROOT_UNWIND_COMPLETE;
		p->st.unwind_at_entry++;
	}
	*user = PL_USER_UNWOUND;
	return 0;
}

/* The kernel frames of @c into p->frames from *@nfp. 0 or -ENOMEM. */
static int pl_stack_kernel(struct taproot_pipeline *p, const struct pl_capture *c, size_t *nfp)
{
	unsigned int i;

	if (p->opts.no_kernel)
		return 0;
	for (i = 0; i < c->kstack_nr; i++) {
		bool exact = i == 0 && c->k0_exact;
		const struct tp_sym *e;

		e = pl_symbolize(p, NULL, c->kstack[i], exact ? 0 : TAPROOT_SYM_RETADDR);
		if (!e)
			return tp_err(-ENOMEM, NULL);
		/* The tracepoint's own callers are not the task's: drop them. */
		if (c->trim_trace && !*nfp && e->nr &&
		    pl_is_trampoline(e->frames[e->nr - 1].function))
			continue;
		pl_add_sym(p, nfp, e);
	}
	if (c->kstack_nr && c->kstack_trunc && pl_room(p, *nfp, 1))
		pl_marker(&p->frames[(*nfp)++], "[kernel truncated]");
	return 0;
}

/*
 * The marker frame at the root of @c's user frames (@res): why the walk
 * ended where it did, the module's reason when it ended there; NULL for
 * a complete one.
 */
static const char *pl_user_marker(const struct pl_capture *c,
				  const struct taproot_unwind_result *res)
{
	if (res->end == TAPROOT_UNWIND_COMPLETE)
		return NULL;
	if (c->upcs_mode == PL_UPCS_WHOLE)
		return pl_kend[c->kend].marker;
	return pl_end_marker[res->end];
}

/*
 * In place of an activation of the interpreter's evaluation loop: the
 * Python frames of @c it ran, from *@pyi up to the one marked as its
 * first (TAPROOT_PYFRAME_ENTRY), into p->frames from *@nf. 0 or -ENOMEM.
 */
static int pl_python_frames(struct taproot_pipeline *p, const struct pl_capture *c,
			    struct taproot_proc *proc, const struct taproot_pyproc *py,
			    unsigned int *pyi, size_t *nf)
{
	while (*pyi < c->py_nr && pl_room(p, *nf, 1)) {
		const struct taproot_pyframe *f = &c->py[(*pyi)++];
		int ret = tp_pyframes_frame(p->pyframes, proc, py, f, &p->frames[*nf]);

		if (ret < 0)
			return ret;
		(*nf)++;
		p->st.python_frames++;
		p->st.python_frames_gone += ret;
		if (f->pos & TAPROOT_PYFRAME_ENTRY)
			break;
	}
	return 0;
}

/*
 * The unwound user frames (@res) of @c in @proc into p->frames from *@nfp,
 * the Python frames of the module's walk in place of the interpreter's
 * frames that ran them. Returns 1 when they had to be dropped, 0, or
 * -ENOMEM.
 */
static int pl_stack_user(struct taproot_pipeline *p, const struct pl_capture *c,
			 struct taproot_proc *proc, const struct taproot_unwind_result *res,
			 size_t *nfp)
{
	const struct taproot_pyproc *py = NULL;
	unsigned int pyi = 0;
	size_t nf = *nfp;
	unsigned int i;

	if (c->py_nr && taproot_proc_python(proc, &py) < 0)
		py = NULL;
	for (i = 0; i < res->nr; i++) {
		unsigned int fl = p->pcflags[i] & TAPROOT_FRAME_EXACT ? 0 : TAPROOT_SYM_RETADDR;
		uint64_t at = fl ? p->pcs[i] - 1 : p->pcs[i];
		const struct tp_sym *e;

		if (py && pyi < c->py_nr && taproot_pyproc_in_eval(py, at)) {
			if (pl_python_frames(p, c, proc, py, &pyi, &nf) < 0)
				return tp_err(-ENOMEM, NULL);
			continue;
		}
		e = pl_symbolize(p, proc, p->pcs[i], fl);
		if (!e)
			return tp_err(-ENOMEM, NULL);
		if (pl_add_sym(p, &nf, e) < 0)
			break;
	}
	/* Frames of activations the native walk did not reach (MAX_FRAMES). */
	p->st.python_frames_unplaced += c->py_nr - pyi;
	/* An interpreter not walked says so, at the root of its stacks. */
	if (res->nr && taproot_proc_python_unwalked(proc) && pl_room(p, nf, 1))
		pl_marker(&p->frames[nf++], taproot_proc_python_unwalked(proc));
	if (pl_user_marker(c, res) && pl_room(p, nf, 1))
		pl_marker(&p->frames[nf++], pl_user_marker(c, res));
	/*
	 * A pc outside the maps had the process read again, under another
	 * name: the frames after it may have the new program's names. The
	 * kernel frames alone, as for a stale capture.
	 */
	if (c->comm && c->tid == c->pid && !taproot_proc_comm_is(proc, c->comm))
		return 1;
	*nfp = nf;
	return 0;
}

/*
 * The user stack is unwound before anything is symbolized: unwinding may
 * re-read the process's maps, after which the caches may be emptied
 * (pl_check_refresh()), and p->frames borrows its strings from them.
 */
int tp_pl_stack(struct taproot_pipeline *p, const struct pl_capture *c, size_t *nfp,
		struct taproot_proc **procp, char *marker, size_t marker_size,
		struct tp_stack_outcome *o)
{
	struct taproot_unwind_result res = { 0 };
	enum pl_user user;
	const char *gone = NULL;
	int stale, err;
	size_t nf = 0;

	*procp = NULL;
	stale = pl_stack_unwind(p, c, procp, &gone, &res, &user);
	if (stale < 0)
		return stale;
	pl_check_refresh(p);
	/* A user pc may take two entries: its process's and its file's. */
	if (tp_symcache_full(&p->symcache, c->kstack_nr + 2 * (size_t)res.nr) ||
	    tp_pyframes_full(p->pyframes, c->py_nr))
		pl_symcache_flush(p);

	err = pl_stack_kernel(p, c, &nf);
	if (err < 0)
		return err;
	if (user == PL_USER_GONE) {
		snprintf(marker, marker_size, "[unknown: %s]", gone);
		if (pl_room(p, nf, 1))
			pl_marker(&p->frames[nf++], marker);
	} else if (user == PL_USER_UNWOUND) {
		stale = pl_stack_user(p, c, *procp, &res, &nf);
		if (stale < 0)
			return stale;
	}

	o->kernel_frames = p->opts.no_kernel ? 0 : c->kstack_nr;
	o->end = 0;
	if (stale) {
		o->user = TP_STACK_STALE;
	} else if (user == PL_USER_UNWOUND) {
		o->user = TP_STACK_UNWOUND;
		o->end = res.end;
	} else if (user == PL_USER_GONE) {
		o->user = TP_STACK_GONE;
	} else {
		o->user = TP_STACK_KERNEL_ONLY;
	}
	if (!nf)
		pl_marker(&p->frames[nf++], "[no stack]");
	*nfp = nf;
	return 0;
}

void tp_pl_count_stack(struct taproot_pipeline *p, const struct tp_stack_outcome *o,
		       uint64_t n)
{
	p->st.kernel_frames += o->kernel_frames * n;
	switch (o->user) {
	case TP_STACK_STALE:
		p->st.user_stale += n;
		p->st.kernel_only += n;
		break;
	case TP_STACK_KERNEL_ONLY:
		p->st.kernel_only += n;
		break;
	case TP_STACK_GONE:
		p->st.proc_unknown += n;
		break;
	case TP_STACK_UNWOUND:
		p->st.user_stacks += n;
		p->st.unwind[o->end] += n;
		break;
	}
}

/* ------------------------------------------------------------ prewarm */

#define PREWARM_STACK	(16 * 1024)

/* A plain copy that ASan does not check: it reads other frames' redzones. */
__attribute__((noinline, no_sanitize_address))
static void pl_copy_stack(uint8_t *dst, const volatile uint8_t *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		dst[i] = src[i];
}

/* This thread's registers (those CFI may need) and the top of its stack. */
__attribute__((noinline))
static size_t pl_capture(struct taproot_user_regs *regs, uint8_t *stack, size_t max,
			 uint64_t stack_end)
{
	uint64_t sp, bp, ip;
	size_t len;

	__asm__ volatile("lea 0f(%%rip), %0\n"
			 "0:\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2\n"
			 : "=&r"(ip), "=&r"(sp), "=&r"(bp));
	memset(regs, 0, sizeof(*regs));
	regs->ip = ip;
	regs->sp = sp;
	regs->bp = bp;
	len = stack_end > sp ? stack_end - sp : 0;
	if (len > max)
		len = max;
	pl_copy_stack(stack, (const volatile uint8_t *)(uintptr_t)sp, len);
	return len;
}

int taproot_pipeline_prewarm(struct taproot_pipeline *p)
{
	struct taproot_pipeline_stats saved = p->st;
	struct taproot_user_regs regs;
	struct taproot_unwind_result res;
	struct taproot_proc *proc;
	pthread_attr_t attr;
	uint64_t stack_end = 0;
	uint8_t *stack;
	void *addr;
	size_t size, len;
	int err;

	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0)
			stack_end = (uint64_t)(uintptr_t)addr + size;
		pthread_attr_destroy(&attr);
	}
	if (!stack_end)
		return 0;
	stack = malloc(PREWARM_STACK);
	if (!stack)
		return tp_err(-ENOMEM, NULL);
	len = pl_capture(&regs, stack, PREWARM_STACK, stack_end);
	err = taproot_proc_get(p->procs, getpid(), 0, &proc);
	if (!err && !taproot_proc_gone(proc)) {
		struct pl_unwind_arg arg = { .p = p, .proc = proc };

		err = taproot_unwind(p->unwinder, &arg, &regs, stack, len, p->pcs, p->pcflags,
				     p->opts.max_user_frames, &res);
		if (tp_symcache_full(&p->symcache, 2 * (size_t)res.nr))
			pl_symcache_flush(p);
		for (unsigned int i = 0; err >= 0 && i < res.nr; i++)
			if (!pl_symbolize(p, proc, p->pcs[i],
					  p->pcflags[i] & TAPROOT_FRAME_EXACT ? 0 : TAPROOT_SYM_RETADDR))
				err = tp_err(-ENOMEM, NULL);
	}
	free(stack);
	p->st = saved;
	return err < 0 ? err : 0;
}
