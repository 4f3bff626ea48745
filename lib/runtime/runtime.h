/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, language runtimes layer: readers of the tables that language
 * runtimes keep about their own code, for the symbolizer (names, files,
 * lines) and the unwinder (frame sizes) above it (lib/runtime/).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_RUNTIME_H
#define TAPROOT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>
#include <linux/taproot.h>

#include "util/error.h"

/* Reads @len bytes of the process at @addr: 0, or -errno. */
typedef int (*tp_memread_fn)(void *ctx, uint64_t addr, void *dst, size_t len);

/* ------------------------------------------------ Go: .gopclntab (gopclntab.c) */
/*
 * The function table every Go binary carries for its own runtime (stack
 * traces, garbage collection): for each function its entry, name, and
 * pc-value tables of source file, line and stack-pointer delta. Stripping
 * (-ldflags=-s -w) removes the ELF symbols and DWARF, never this table, so
 * it names and unwinds stripped Go binaries. Layouts of Go 1.2 to 1.15,
 * 1.16-1.17, 1.18-1.19 and 1.20 on are read, little-endian, 8-byte
 * pointers (amd64).
 *
 * The table comes from a file of the profiled host: every offset in it is
 * checked against its size, strings must end inside it, and the function
 * table must be sorted (tp_gotab_open() refuses it otherwise). A malformed
 * pc-value table ends a lookup with -EINVAL, never a read out of bounds.
 * Addresses are link-time (the ELF file's), as the table holds them.
 */
enum tp_go_layout {
	TP_GO_1_2 = 1,		/* magic 0xfffffffb: Go 1.2 to 1.15 */
	TP_GO_1_16,		/* 0xfffffffa: 1.16, 1.17 */
	TP_GO_1_18,		/* 0xfffffff0: 1.18, 1.19 */
	TP_GO_1_20,		/* 0xfffffff1: 1.20 and later */
};

struct tp_gotab {
	const uint8_t *data;		/* the table, borrowed: outlives this */
	size_t size;
	enum tp_go_layout layout;
	uint8_t quantum;		/* pc step of the pc-value tables */
	uint32_t nfunc;
	uint32_t nfiles;		/* Go 1.2: entries of filetab */
	uint64_t text;			/* what 1.18+ entry offsets count from;
					 * from Go 1.27 the header has 0: then
					 * tp_gotab_elf() finds it elsewhere, and
					 * a caller of tp_gotab_open() sets it */
	/* Offsets into data. */
	size_t functab;			/* {entry, _func offset} rows, nfunc + 1 */
	size_t funcdata;		/* what _func offsets count from */
	size_t funcnames;		/* what name offsets count from */
	size_t cutab;			/* 1.16+: file index of each unit */
	size_t filetab;			/* file names */
	size_t pctab;			/* what pc-value offsets count from */
	uint64_t addr;			/* the table's link-time address (tp_gotab_elf) */
	/*
	 * The inline trees, for tp_gotab_frames() (tp_gotab_inline()): the
	 * file bytes of the segment holding them, at link-time address
	 * fdata_addr; in 1.18 on, what the funcdata offsets count from
	 * (the runtime's moduledata.gofunc). fdata NULL: none read.
	 */
	const uint8_t *fdata;		/* malloc'ed, owned (tp_gotab_close()) */
	size_t fdata_size;
	uint64_t fdata_addr, gofunc;
};

/* One function of a table: tp_gotab_func() fills it. */
struct tp_gofunc {
	uint64_t entry, end;		/* [entry, end) */
	const char *name;		/* in the table (NUL-terminated), or "?" */
	size_t off;			/* its _func record, in data */
};

/*
 * Reads the header of the table of @size bytes at @data (the .gopclntab
 * section, or where tp_gotab_find() found it) into @t, and checks it.
 * Returns 0, or -EINVAL (not a table, or malformed), -ENOTSUP (a layout or
 * pointer size this reader does not know).
 */
int tp_gotab_open(struct tp_gotab *t, const void *data, size_t size);

/*
 * Where a table begins in @size bytes at @data (a read-only segment of a
 * binary whose section headers are gone): the offset of the first header
 * tp_gotab_open() accepts, or -1.
 */
long tp_gotab_find(const void *data, size_t size);

/* The function holding @pc into @f: 0, or -ENOENT, -EINVAL. */
int tp_gotab_func(const struct tp_gotab *t, uint64_t pc, struct tp_gofunc *f);

/* The @i-th function by address (i < nfunc) into @f: 0, or -ENOENT, -EINVAL. */
int tp_gotab_nth(const struct tp_gotab *t, uint32_t i, struct tp_gofunc *f);

/*
 * The source file and line of @pc in @f (of an inlined call, the inlined
 * function's): 0, or -ENOENT (no line there), -EINVAL. *@file points
 * into the table.
 */
int tp_gotab_line(const struct tp_gotab *t, const struct tp_gofunc *f,
		  uint64_t pc, const char **file, int32_t *line);

/*
 * How far the stack pointer at @pc in @f lies below its value at the
 * function's entry, in bytes (0 at the entry; the return address is just
 * above the entry's sp): 0, or -ENOENT, -EINVAL. @until, when not NULL,
 * gets the end of the run of pcs from @pc on with the same delta.
 */
int tp_gotab_spdelta(const struct tp_gotab *t, const struct tp_gofunc *f,
		     uint64_t pc, int32_t *delta, uint64_t *until);

/* One frame of the chain of inlined calls at a pc: tp_gotab_frames(). */
struct tp_goframe {
	const char *name;		/* in the table, or "?" */
	const char *file;		/* in the table; NULL when unknown */
	int32_t line;			/* 0 when unknown */
};

/*
 * The frames at @pc in @f, innermost first, into @fr (at most @max, at
 * least 1): the functions inlined there, each at the line it is in, then
 * @f at the line of the outermost inlined call (Go's inline tree, as the
 * runtime's own tracebacks expand it). Without the inline trees
 * (tp_gotab_inline() not done, or failed) it is @f alone. Returns the
 * number of frames, or -ENOENT (@pc is not in @f), -EINVAL.
 */
int tp_gotab_frames(const struct tp_gotab *t, const struct tp_gofunc *f, uint64_t pc,
		    struct tp_goframe *fr, int max);

/*
 * The Go table of the ELF file @elf into @t: its section (.gopclntab, or a
 * PIE's .data.rel.ro.gopclntab), over libelf's data; else, when the file
 * has no section headers and @fd (the file's, -1: none) can be read, the
 * first table in a segment that is not code, read into *@image (malloc'ed:
 * the caller frees it once done with @t; NULL otherwise). Returns 0, or
 * -ENOENT (no table: not Go, or unreadable), -ENOMEM.
 */
int tp_gotab_elf(Elf *elf, int fd, struct tp_gotab *t, void **image);

/*
 * Reads the inline trees of @t, the table tp_gotab_elf() read from @elf,
 * from the file @fd (a copy, not a mapping: a file truncated under a
 * mapping would kill the reader). In Go 1.18 on they lie at offsets from
 * the runtime's moduledata.gofunc, found through the module data, which
 * points to the table; before, the functions point to them. Inline trees are read from
 * Go 1.12 on, the layout of the Go 1.2 table's last versions. Returns 0,
 * or -ENOENT (none found, or unreadable; tp_gotab_frames() then gives no
 * inlined frames). tp_gotab_close() frees them.
 */
int tp_gotab_inline(Elf *elf, int fd, struct tp_gotab *t);

/* Frees what tp_gotab_inline() read; @t stays usable without it. */
void tp_gotab_close(struct tp_gotab *t);

/* ------------------------------------------------ CPython (python.c) */
/*
 * What taproot knows of CPython 3.9, 3.11 and 3.13 on x86-64: where an
 * interpreter keeps its thread states, the layout of its frames and code
 * objects (for the module's walker, <linux/taproot.h> "CPython frames"),
 * and how a code object names its function, file and lines. Other
 * versions are refused: their layouts differ and are not checked here.
 *
 * The interpreter's ELF file comes from the profiled host, and code
 * objects from its processes' memory: every read is bounded, strings are
 * cut at TP_PY_STR_MAX bytes, line tables at TP_PY_LINES_MAX, and a
 * malformed line table gives line 0, never a read out of bounds.
 */
#define TP_PY_STR_MAX		1024
#define TP_PY_LINES_MAX		(256U << 10)

#define TP_PY_EVAL_PARTS	4

enum tp_py_lines {
	TP_PY_LNOTAB,		/* 3.9: (byte offset delta, line delta) pairs */
	TP_PY_LOCATIONS,	/* 3.11+: the location table of PEP 657 */
};

/* Where a version keeps what the walk and the names need (python.c has them). */
struct tp_pyver {
	unsigned int minor;
	uint32_t runtime_tss;		/* _PyRuntime.autoTSSkey (a Py_tss_t) */
	uint16_t tstate_cframe, tstate_frame;
	uint16_t frame_code, frame_back, frame_pos, entry_off;
	uint8_t pos_kind, entry_kind;
	uint16_t code_argcount, code_kwonly, code_flags, code_firstlineno;
	uint16_t code_filename, code_name, code_qualname, code_lines;
	uint16_t str_ascii, str_compact;	/* data of a compact str: ASCII, other */
	enum tp_py_lines lines;
};

/* An interpreter's ELF file: tp_pyelf_read(). Addresses are link-time. */
struct tp_pyelf {
	struct tp_pyver v;
	unsigned int minor;		/* 3.minor */
	uint64_t tss_key;		/* the int pthread key of thread states */
	uint64_t code_type;		/* PyCode_Type */
	/*
	 * The code of _PyEval_EvalFrameDefault: its symbol's range, then
	 * the parts the compiler moved out of it (a .cold part: GCC's
	 * hot/cold partitioning puts most of 3.13's loop there in Debian's
	 * build), [lo, hi) each.
	 */
	uint64_t eval[TP_PY_EVAL_PARTS][2];
	unsigned int eval_parts;
	uint32_t code_insns;		/* 3.11+: first code unit's offset in a code object */
	bool debug_offsets;		/* v was read from the interpreter's own (3.13) */
};

/*
 * Whether @elf, the file at @path (its name says python3.N or
 * libpython3.N), is a CPython interpreter of a version taproot walks, into
 * @py. Returns 0, -ENOENT (not an interpreter: no _PyRuntime), -ENOTSUP
 * (another version; with a message), -EINVAL (its tables contradict it);
 * py->minor is set with the last two.
 */
int tp_pyelf_read(Elf *elf, const char *path, struct tp_pyelf *py);

/*
 * The fs-relative offset of pthread key 0's data word, as @libc's
 * pthread_getspecific() computes it (libc.so.6 since glibc 2.34,
 * libpthread.so.0 before): key k's is 16 k further. Returns 0, or -ENOENT
 * (no such function, or code this does not recognise).
 */
int tp_glibc_tsd(Elf *libc, uint32_t *tsd_off);

/* The module's layout of @py mapped with @bias, its TLS by @tsd_off. */
void tp_pyelf_layout(const struct tp_pyelf *py, uint64_t bias, uint32_t tsd_off,
		     struct taproot_python_layout *l);


/* A code object, as tp_pycode_read() found it. */
struct tp_pycode {
	char *name;			/* co_qualname (3.11+), else co_name */
	char *file;			/* co_filename */
	uint32_t argcount, kwonly, flags, firstlineno;
	uint8_t *lines;			/* its line table */
	size_t lines_len;
};

/*
 * The code object at @code of the interpreter @py mapped with @bias, read
 * with @rd, into @c: 0, or -ESTALE (its fields do not give @cookie: it was freed and the
 * memory reused since the module saw it, or it is no code object),
 * -EFAULT (unreadable), -ENOMEM. tp_pycode_free() frees it.
 */
int tp_pycode_read(const struct tp_pyelf *py, uint64_t bias, tp_memread_fn rd, void *ctx,
		   uint64_t code, uint32_t cookie, struct tp_pycode *c);
void tp_pycode_free(struct tp_pycode *c);

/* The cookie of a code object's fields, as the module computes it. */
uint32_t tp_pycode_cookie(uint32_t argcount, uint32_t kwonly, uint32_t flags,
			  uint32_t firstlineno);

/*
 * The line of position @pos (taproot_pyframe.pos without ENTRY) in @c:
 * the line of its instruction, its first line when the frame has not
 * started (or the position is unknown), 0 when the table has none.
 */
uint32_t tp_pycode_line(const struct tp_pyelf *py, const struct tp_pycode *c, uint32_t pos);

/* ------------------------------------------------ HotSpot: vmStructs (hotspot.c) */
/*
 * A HotSpot JVM describes its own structures to debuggers in tables that
 * libjvm.so exports (gHotSpotVMStructs: type, field, offset or static
 * address; gHotSpotVMTypes: type, size), their layout itself given by
 * exported globals (gHotSpotVMStructEntry*Offset, *ArrayStride). From them
 * and the live process's memory: the code cache's heaps, and for a pc in
 * them the code blob that holds it (its segment map walked back to the
 * blob's first segment), its name (an nmethod's: its method's class and
 * name; else the blob's, "Interpreter", "StubRoutines (1)", ...). No JVM
 * flag is needed. Everything read is the process's: every count, offset,
 * string and walk is bounded, and a table without what is needed is
 * refused (-ENOTSUP), never guessed.
 */

/* The exported globals read, in this order (tp_jvm_elf_syms()). */
enum tp_jvm_sym {
	TP_JVM_STRUCTS,			/* VMStructEntry *: the table */
	TP_JVM_STRUCT_STRIDE,		/* uint64_t: an entry's size */
	TP_JVM_STRUCT_TYPE_NAME,	/* uint64_t: offsets in an entry */
	TP_JVM_STRUCT_FIELD_NAME,
	TP_JVM_STRUCT_IS_STATIC,
	TP_JVM_STRUCT_OFFSET,
	TP_JVM_STRUCT_ADDRESS,
	TP_JVM_TYPES,			/* VMTypeEntry *: the table */
	TP_JVM_TYPE_STRIDE,
	TP_JVM_TYPE_TYPE_NAME,
	TP_JVM_TYPE_SIZE,
	TP_JVM_NR_SYMS
};

/* The fields taproot reads (hotspot.c's table names them). */
enum tp_jvm_field {
	TP_JVMF_HEAPS,			/* CodeCache::_heaps (static) */
	TP_JVMF_VM_MAJOR,		/* Abstract_VM_Version::_vm_major_version (static) */
	TP_JVMF_GA_LEN,			/* GrowableArrayBase::_len (11: GenericGrowableArray) */
	TP_JVMF_GA_DATA,		/* GrowableArray<int>::_data */
	TP_JVMF_HEAP_MEMORY,		/* CodeHeap::_memory (a VirtualSpace) */
	TP_JVMF_HEAP_SEGMAP,		/* CodeHeap::_segmap (a VirtualSpace) */
	TP_JVMF_HEAP_LOG2,		/* CodeHeap::_log2_segment_size */
	TP_JVMF_VS_LOW,			/* VirtualSpace::_low_boundary */
	TP_JVMF_VS_HIGH,		/* VirtualSpace::_high_boundary */
	TP_JVMF_BLOB_NAME,		/* CodeBlob::_name */
	TP_JVMF_NM_METHOD,		/* CompiledMethod::_method */
	TP_JVMF_CONST_METHOD,		/* Method::_constMethod */
	TP_JVMF_CM_CONSTANTS,		/* ConstMethod::_constants */
	TP_JVMF_CM_NAME_INDEX,		/* ConstMethod::_name_index */
	TP_JVMF_CP_HOLDER,		/* ConstantPool::_pool_holder */
	TP_JVMF_KLASS_NAME,		/* Klass::_name */
	TP_JVMF_SYM_LENGTH,		/* Symbol::_length */
	TP_JVMF_SYM_BODY,		/* Symbol::_body */
	TP_JVMF_CODE_BEGIN,		/* CodeBlob::_code_begin */
	TP_JVMF_SCOPES_DATA,		/* CompiledMethod::_scopes_data_begin */
	TP_JVMF_NM_METADATA,		/* nmethod::_metadata_offset */
	TP_JVMF_NM_SCOPES_PCS,		/* nmethod::_scopes_pcs_offset */
	TP_JVMF_NM_DEPENDENCIES,	/* nmethod::_dependencies_offset: the PcDescs' end */
	TP_JVMF_CM_FLAGS,		/* ConstMethod::_flags (u2 in 17; 21: _flags._flags, u4) */
	TP_JVMF_CM_CODE_SIZE,		/* ConstMethod::_code_size */
	TP_JVMF_CP_SOURCE_FILE,		/* ConstantPool::_source_file_name_index (11: InstanceKlass's) */
	TP_JVMF_FRAME_SIZE,		/* CodeBlob::_frame_size (words) */
	TP_JVMF_FRAME_COMPLETE,		/* CodeBlob::_frame_complete_offset */
	TP_JVMF_DEOPT_HANDLER,		/* CompiledMethod::_deopt_handler_begin */
	TP_JVMF_ORIG_PC,		/* nmethod::_orig_pc_offset */
	TP_JVMF_COMPILE_ID,		/* nmethod::_compile_id */
	TP_JVM_NR_FIELDS
};

#define TP_JVM_MAX_HEAPS	8
#define TP_JVM_NAME_MAX		256	/* a frame's name, NUL included */

/* A frame of JVM code: a method's, or a blob's (file "", line 0). */
struct tp_jvm_frame {
	char name[TP_JVM_NAME_MAX];
	char file[128];			/* its class's source file, "" unknown */
	uint32_t line;			/* 0 unknown */
};

struct tp_jvm {
	uint64_t field[TP_JVM_NR_FIELDS];	/* offsets; static fields: their address */
	unsigned int major;			/* the feature release: 11 to 21 */
	unsigned int u5_excluded;		/* UNSIGNED5's excluded byte value: 0, or 1 (20+) */
	bool source_in_klass;			/* CP_SOURCE_FILE is InstanceKlass's (11) */
	uint64_t heap_block_size;		/* sizeof(HeapBlock) */
	uint64_t cp_size;			/* sizeof(ConstantPool) */
	uint64_t const_method_size;		/* sizeof(ConstMethod): its bytecodes follow */
	struct tp_jvm_heap {
		uint64_t low, high;		/* the code it holds: [low, high) */
		uint64_t segmap;		/* a byte a segment */
		uint32_t log2_segment;
	} heap[TP_JVM_MAX_HEAPS];
	unsigned int nr_heaps;
};

/*
 * The link-time addresses in libjvm.so @elf of the globals of enum
 * tp_jvm_sym (its .dynsym): 0, or -ENOENT when one is missing (not a
 * HotSpot with vmStructs).
 */
int tp_jvm_elf_syms(Elf *elf, uint64_t vaddr[TP_JVM_NR_SYMS]);

/*
 * Read the tables of the JVM whose globals are at @addr (run-time
 * addresses: the ELF's plus its bias) with @rd into @j, then its code
 * heaps (tp_jvm_read_heaps()). 0, -EFAULT (unreadable), -EAGAIN (its
 * release not set yet: the VM is still initializing), -ENOTSUP (a table
 * malformed or without a field taproot reads, or a feature release other
 * than JDK 11 to 21, whose layouts are known: @j->major is then that
 * release, 0 when not read or not plausible).
 */
int tp_jvm_read(struct tp_jvm *j, const uint64_t addr[TP_JVM_NR_SYMS], tp_memread_fn rd,
		void *ctx);

/* Read @j's code heaps again (the JVM makes them as it starts). 0 or -EFAULT. */
int tp_jvm_read_heaps(struct tp_jvm *j, tp_memread_fn rd, void *ctx);

/* Whether @pc lies in one of @j's code heaps. */
bool tp_jvm_in_code(const struct tp_jvm *j, uint64_t pc);

/*
 * The frames of the code at @pc into @fr (at most @max), innermost first:
 * for a compiled method ("java.util.HashMap.get", a hidden class's
 * address suffix left out) the methods its debug information says were
 * inlined at @pc (the scope of the first PcDesc at or after it: a return
 * address's own, or the next safepoint's), then the method compiled, each
 * with its source file and the line of its bytecode there (its line number
 * table); for another blob its own name ("Interpreter", a stub's), one
 * frame. Returns the number of frames, -ENOENT for a pc in no blob (free
 * space, or out of the heaps), -EFAULT (unreadable, or changed under the
 * read), -EINVAL (a walk or a length out of bounds); no name is left on an
 * error.
 */
int tp_jvm_frames(const struct tp_jvm *j, uint64_t pc, tp_memread_fn rd, void *ctx,
		  struct tp_jvm_frame *fr, int max);

/* The code blobs, as far as their frames differ. */
enum tp_jvm_blob_kind {
	TP_JVM_BLOB_NMETHOD,		/* a compiled Java method */
	TP_JVM_BLOB_NATIVE,		/* "native nmethod": a JNI method's wrapper */
	TP_JVM_BLOB_INTERPRETER,	/* the template interpreter */
	TP_JVM_BLOB_VTABLE,		/* "vtable chunks": the return address alone */
	TP_JVM_BLOB_STUB,		/* any other: stubs, adapters */
};

/* What the unwinder needs of the blob at a pc: tp_jvm_blob(). */
struct tp_jvm_blob {
	enum tp_jvm_blob_kind kind;
	uint64_t code_begin;
	uint32_t frame_size;		/* bytes, return address included */
	uint32_t frame_complete;	/* bytes from code_begin: the prologue's end */
	uint64_t deopt_handler;		/* nmethods: where a deoptimized frame returns */
	int32_t orig_pc_offset;		/* ... whose real pc is at sp + this */
	int32_t compile_id;		/* nmethods: the JIT's number of the code; else -1 */
};

/*
 * The blob holding @pc into @b: 0, -ENOENT (in no blob), -EFAULT
 * (unreadable), -EINVAL (a walk or a value out of bounds: a frame bigger
 * than TP_JVM_FRAME_MAX, a prologue longer than the code).
 */
#define TP_JVM_FRAME_MAX	(1U << 20)
int tp_jvm_blob(const struct tp_jvm *j, uint64_t pc, tp_memread_fn rd, void *ctx,
		struct tp_jvm_blob *b);

/*
 * The layout the module's walker steps through @j's frames by (ABI,
 * "HotSpot frames"), of its code heaps as last read: 0; -ENOENT (no heap
 * yet: the JVM is starting); -ENOTSUP (more heaps than the module takes,
 * heaps further apart than 2 GiB, a field past the module's reads).
 */
int tp_jvm_layout(const struct tp_jvm *j, struct taproot_jvm_layout *l);

/*
 * The bytes of a compiled frame still on the stack when the code at a pc
 * (its first TP_JVM_EPILOGUE_BYTES bytes in @code) is the frame's epilogue
 * past its release (add rsp, N): 16 at pop rbp (rbp, then the return
 * address); 8 from there to the ret, across the safepoint poll between
 * them (17, 21: cmp rsp, [r15 + d32]; ja; 11: mov r10, [r15 + d32];
 * test [r10], eax); 0 elsewhere. C1 and C2 end a method alike, and push
 * or pop rbp nowhere else. x86-64.
 */
#define TP_JVM_EPILOGUE_BYTES	16
uint32_t tp_jvm_epilogue(const uint8_t code[TP_JVM_EPILOGUE_BYTES]);

/*
 * The bytecode index of @bcp, an interpreted frame's bytecode pointer, in
 * Method @method (its ConstMethod read with @rd): 0 with *@bci, -EFAULT,
 * -EINVAL (not in the method's bytecodes, which are 64 KiB at most).
 */
int tp_jvm_bci(const struct tp_jvm *j, uint64_t method, uint64_t bcp, tp_memread_fn rd,
	       void *ctx, uint32_t *bci);

/*
 * The frame of Method @method at bytecode index @bci (an interpreted
 * frame's; TP_JVM_BCI_NONE: unknown) into @fr: its name, source file and
 * line. 0, -EFAULT (not a method, or unreadable), -EINVAL.
 */
#define TP_JVM_BCI_NONE		0xffff
int tp_jvm_method_frame(const struct tp_jvm *j, uint64_t method, uint32_t bci,
			tp_memread_fn rd, void *ctx, struct tp_jvm_frame *fr);

#endif /* TAPROOT_RUNTIME_H */
