// SPDX-License-Identifier: GPL-2.0
/*
 * The HotSpot frame step (jvwalk.h): the steps of lib/pipeline's JIT
 * callback (tp_pl_unwind_jit()) and lib/unwind's step_jit(), on the
 * uploaded layout and small reads of the process's memory, so that both
 * give the same pcs (the VM test's --unwind verify compares them).
 *
 * Per frame: the blob, by at most TAPROOT_JVM_HOPS_MAX one-byte reads of
 * the segment map; one read of its fields (from the first to the last, at
 * most TAPROOT_JVM_READ_MAX bytes, into a buffer on this stack); 16 bytes of its name; then by its
 * kind the frame's own words (through the walker's stack window), an
 * epilogue's 16 bytes of code at the leaf, or a method's ConstMethod (an
 * interpreted frame's bytecode index). The layout was checked at upload
 * (tap_jvlayout_ok()); what memory safety needs of it is checked again
 * at use (the fields' span against the buffer, the shift), as the fuzz
 * target feeds layouts of its own; every value read is the process's, so
 * a layout that lies gives wrong frames and nothing worse.
 */
#ifdef __KERNEL__
#include <linux/stddef.h>
#else
#include <stddef.h>
#endif

#include "jvwalk.h"
#include "uwalk.h"
#include "uwstep.h"

/* An interpreted frame's slots below rbp (frame_x86.hpp, JDK 9 on). */
#define TAP_JV_SENDER_SP	8
#define TAP_JV_METHOD		24
#define TAP_JV_BCP		64
/* A compiled frame this close to its prologue's end has pushed rbp. */
#define TAP_JV_PROLOGUE_TAIL	4
/* Words past a compiled frame's size where its return address may lie. */
#define TAP_JV_RA_SCAN		6
/* A frame, or a prologue, larger than this is not one (lib's TP_JVM_FRAME_MAX). */
#define TAP_JV_FRAME_MAX	(1U << 20)
/* A bytecode index past this is none (a method's bytecodes are shorter). */
#define TAP_JV_BCI_MAX		0xfffe
#define TAP_JV_NAME		16
#define TAP_JV_EPILOGUE		16

enum tap_jv_kind {
	TAP_JV_NMETHOD,		/* "nmethod", "native nmethod" */
	TAP_JV_INTERPRETER,
	TAP_JV_VTABLE,
	TAP_JV_STUB,
};

/* What a step needs of the blob at a pc. */
struct tap_jv_blob {
	enum tap_jv_kind kind;
	__u64 code_begin;
	__u32 frame_size;	/* bytes */
	__u32 frame_complete;	/* bytes from code_begin */
	__u64 deopt_handler;
	__s32 orig_pc;		/* -1: none */
	__u32 id;		/* the ring's: compile id's low bits, or NOID */
};

static int tap_jv_off_ok(__u32 off, __u32 size, __u32 max)
{
	return off + size <= max;
}

int tap_jvlayout_ok(const struct taproot_jvm_layout *l)
{
	__u64 lo = ~0ULL;
	__u32 i;

	if (!l->nr_heaps || l->nr_heaps > TAPROOT_JVM_HEAPS_MAX ||
	    l->reserved[0] || l->reserved[1] || l->reserved[2])
		return 0;
	for (i = 0; i < l->nr_heaps; i++) {
		const struct taproot_jvm_heap *h = &l->heap[i];

		if (h->low >= h->high || !h->segmap || h->log2_segment > 20 || h->reserved)
			return 0;
		if (h->low < lo)
			lo = h->low;
	}
	/* The ring keeps 31 bits of a pc: the heaps lie within 2 GiB. */
	for (i = 0; i < l->nr_heaps; i++)
		if (l->heap[i].high - lo > TAPROOT_UPC_JVM_PC_MASK + 1)
			return 0;
	return tap_jv_off_ok(l->blob_name, 8, TAPROOT_JVM_READ_MAX) &&
	       tap_jv_off_ok(l->blob_code_begin, 8, TAPROOT_JVM_READ_MAX) &&
	       tap_jv_off_ok(l->blob_frame_size, 4, TAPROOT_JVM_READ_MAX) &&
	       tap_jv_off_ok(l->blob_frame_complete, 4, TAPROOT_JVM_READ_MAX) &&
	       tap_jv_off_ok(l->nm_compile_id, 4, TAPROOT_JVM_READ_MAX) &&
	       tap_jv_off_ok(l->nm_deopt_handler, 8, TAPROOT_JVM_READ_MAX) &&
	       tap_jv_off_ok(l->nm_orig_pc, 4, TAPROOT_JVM_READ_MAX) &&
	       tap_jv_off_ok(l->method_const, 8, TAPROOT_JVM_FIELD_MAX) &&
	       tap_jv_off_ok(l->const_code_size, 2, TAPROOT_JVM_FIELD_MAX) &&
	       l->const_size <= TAPROOT_JVM_FIELD_MAX;
}

static const struct taproot_jvm_heap *tap_jv_heap(const struct taproot_jvm_layout *l,
						  __u64 pc)
{
	__u32 i;

	for (i = 0; i < l->nr_heaps && i < TAPROOT_JVM_HEAPS_MAX; i++)
		if (pc >= l->heap[i].low && pc < l->heap[i].high)
			return &l->heap[i];
	return NULL;
}

int tap_jvm_in_code(const struct taproot_jvm_layout *l, __u64 pc)
{
	return tap_jv_heap(l, pc) != NULL;
}

/* A read of memory that is not the stack: code, the code cache, metadata. */
static int tap_jv_read(struct tap_uwalk *w, void *dst, __u64 addr, __u32 len)
{
	w->reads++;
	if (!addr || addr + len < addr)
		return -1;
	return tap_uwalk_read(dst, addr, len);
}

/* Grow the span [*@lo, *@hi) to hold the field of @size bytes at @off. */
static void tap_jv_span(__u32 *lo, __u32 *hi, __u32 off, __u32 size)
{
	if (*lo > off)
		*lo = off;
	if (*hi < off + size)
		*hi = off + size;
}

static int tap_jv_name_is(const __u8 *name, const char *s)
{
	__u32 i;

	for (i = 0; i < TAP_JV_NAME; i++) {
		if (name[i] != (__u8)s[i])
			return 0;
		if (!s[i])
			return 1;
	}
	return 0;
}

/*
 * The blob holding @pc into @b: 0, or -1 when there is none, it cannot be
 * read, or a value is out of bounds (lib's tp_jvm_blob()).
 */
static int tap_jv_blob(struct tap_uwalk *w, const struct taproot_jvm_layout *l, __u64 pc,
		       struct tap_jv_blob *b)
{
	const struct taproot_jvm_heap *h = tap_jv_heap(l, pc);
	__u8 f[TAPROOT_JVM_READ_MAX], name[TAP_JV_NAME], tag;
	__u32 hop, lo = TAPROOT_JVM_READ_MAX, hi = 0;
	__s32 words, complete;
	__u64 seg, blob;

	/* The upload checked the layout; what reads and shifts need, again. */
	if (!h || h->log2_segment > 20)
		return -1;
	seg = (pc - h->low) >> h->log2_segment;
	for (hop = 0;; hop++) {
		if (hop == TAPROOT_JVM_HOPS_MAX || tap_jv_read(w, &tag, h->segmap + seg, 1) ||
		    tag == 0xff)
			return -1;
		if (!tag)
			break;
		if (tag > seg)
			return -1;
		seg -= tag;
	}
	blob = h->low + (seg << h->log2_segment) + l->block_size;
	/* Read from the first field to the last: [lo, hi) of the blob. */
	tap_jv_span(&lo, &hi, l->blob_name, 8);
	tap_jv_span(&lo, &hi, l->blob_code_begin, 8);
	tap_jv_span(&lo, &hi, l->blob_frame_size, 4);
	tap_jv_span(&lo, &hi, l->blob_frame_complete, 4);
	tap_jv_span(&lo, &hi, l->nm_compile_id, 4);
	tap_jv_span(&lo, &hi, l->nm_deopt_handler, 8);
	tap_jv_span(&lo, &hi, l->nm_orig_pc, 4);
	if (hi > sizeof(f) || tap_jv_read(w, f + lo, blob + lo, hi - lo) ||
	    tap_jv_read(w, name, tap_uwalk_le64(f, l->blob_name), sizeof(name)))
		return -1;
	b->code_begin = tap_uwalk_le64(f, l->blob_code_begin);
	words = (__s32)tap_uwalk_le32(f, l->blob_frame_size);
	complete = (__s32)tap_uwalk_le32(f, l->blob_frame_complete);
	/* A frame size in words, or negative: none (-1 before it is known). */
	if (words < 0)
		words = 0;
	if ((__u64)words * 8 > TAP_JV_FRAME_MAX || pc < b->code_begin ||
	    (complete > 0 && (__u32)complete > TAP_JV_FRAME_MAX))
		return -1;
	b->frame_size = (__u32)words * 8;
	b->frame_complete = complete > 0 ? (__u32)complete : 0;
	b->deopt_handler = 0;
	b->orig_pc = -1;
	b->id = TAPROOT_UPC_JVM_NOID;
	if (tap_jv_name_is(name, "nmethod") || tap_jv_name_is(name, "native nmethod")) {
		b->kind = TAP_JV_NMETHOD;
		b->id = tap_uwalk_le32(f, l->nm_compile_id) & TAPROOT_UPC_JVM_NOID;
		b->deopt_handler = tap_uwalk_le64(f, l->nm_deopt_handler);
		b->orig_pc = (__s32)tap_uwalk_le32(f, l->nm_orig_pc);
		if (b->orig_pc < 0 || (__u32)b->orig_pc + 8 > b->frame_size)
			b->orig_pc = -1;
	} else if (tap_jv_name_is(name, "Interpreter")) {
		b->kind = TAP_JV_INTERPRETER;
	} else if (tap_jv_name_is(name, "vtable chunks")) {
		b->kind = TAP_JV_VTABLE;
	} else {
		b->kind = TAP_JV_STUB;
	}
	return 0;
}

/*
 * The bytecode index of @bcp in @method's bytecodes: 0 with *@bci, or -1
 * (unreadable, or not in them): lib's tp_jvm_bci().
 */
static int tap_jv_bci(struct tap_uwalk *w, const struct taproot_jvm_layout *l, __u64 method,
		      __u64 bcp, __u32 *bci)
{
	__u8 v[8];
	__u64 cm, code;
	__u32 size;

	if (tap_jv_read(w, v, method + l->method_const, 8))
		return -1;
	cm = tap_uwalk_le64(v, 0);
	if (!cm || tap_jv_read(w, v, cm + l->const_code_size, 2))
		return -1;
	size = (__u32)v[0] | (__u32)v[1] << 8;
	code = cm + l->const_size;
	/* A bcp at the end: a frame returning from its last bytecode's call. */
	if (bcp < code || bcp - code > size || bcp - code > TAP_JV_BCI_MAX)
		return -1;
	*bci = (__u32)(bcp - code);
	return 0;
}

/*
 * An interpreted frame's pc for the ring: its Method* and bytecode index
 * (r13's at the leaf, else its slot's); the interpreter's code when the
 * slot holds no Method* (taproot_proc_jvm_interp_pc()). 0 with *@upc, or
 * the walk's end.
 */
static int tap_jv_interp_upc(struct tap_uwalk *w, const struct taproot_jvm_layout *l,
			     const struct tap_jv_blob *b, __u64 stack_lo, __u64 *upc)
{
	__u64 bp = w->regs.bp, method, bcp;
	__u32 bci;

	/* Its Method* unknown, the frame is not described: lib's walk ends too. */
	if (bp < TAP_JV_METHOD || bp - TAP_JV_METHOD < stack_lo ||
	    tap_uwalk_rd(w, &method, bp - TAP_JV_METHOD, 8))
		return TAPROOT_KUNWIND_NO_MAPPING;
	if (!taproot_upc_jvm_method(method, 0)) {
		*upc = taproot_upc_jvm_code(b->id, w->regs.ip);
		return TAP_UWALK_STEP_OK;
	}
	if (!(w->exact && w->regs.r13 && !tap_jv_bci(w, l, method, w->regs.r13, &bci))) {
		if (bp - TAP_JV_BCP < stack_lo || tap_uwalk_rd(w, &bcp, bp - TAP_JV_BCP, 8))
			bcp = 0;
		if (tap_jv_bci(w, l, method, bcp, &bci))
			bci = TAPROOT_UPC_JVM_BCI_NONE;
	}
	*upc = taproot_upc_jvm_method(method, bci);
	return TAP_UWALK_STEP_OK;
}

/* The interpreter's caller: lib's step_jit(), TAPROOT_JIT_INTERP. */
static int tap_jv_interp(struct tap_uwalk *w, int bp_known, __u64 stack_lo,
			 struct tap_uwalk_next *n)
{
	__u64 bp = w->regs.bp, words[3];

	if (!bp_known || (bp & 7) || bp < w->regs.sp)
		return TAPROOT_KUNWIND_BAD_FRAME;
	if (bp - TAP_JV_SENDER_SP < stack_lo)
		return TAPROOT_KUNWIND_BAD_FRAME;
	if (tap_uwalk_rd(w, words, bp - TAP_JV_SENDER_SP, sizeof(words)))
		return TAPROOT_KUNWIND_FAULT;
	if (words[0] < bp + 16 || (words[0] & 7))
		return TAPROOT_KUNWIND_BAD_FRAME;
	n->regs.sp = words[0];
	n->regs.bp = words[1];
	n->regs.ip = words[2];
	n->bp_known = 1;
	return TAP_UWALK_STEP_OK;
}

/*
 * A compiled frame's size (lib's pl_jvm_frame_size()): @size, or up to
 * TAP_JV_RA_SCAN words more where the first return address into the code
 * cache lies. 0 with *@out; 1 when none of them is one; with @size when a
 * word cannot be read (the step then fails at it).
 */
static int tap_jv_frame_size(struct tap_uwalk *w, const struct taproot_jvm_layout *l,
			     __u64 stack_lo, __u32 size, __u32 *out)
{
	__u64 ra, at;
	__u32 k;

	*out = size;
	for (k = 0; k <= TAP_JV_RA_SCAN; k++) {
		at = w->regs.sp + size + 8 * k - 8;
		if (at < stack_lo || tap_uwalk_rd(w, &ra, at, 8))
			return 0;
		if (ra && tap_jv_heap(l, ra - 1)) {
			*out = size + 8 * k;
			return 0;
		}
	}
	return 1;
}

/*
 * The caller of a frame @size bytes large from sp (lib's step_jit(),
 * TAPROOT_JIT_SP): its pc the frame's last word, its rbp the one before.
 */
static int tap_jv_sized(struct tap_uwalk *w, __u32 size, int bp_known, __u64 stack_lo,
			struct tap_uwalk_next *n)
{
	__u64 cfa = w->regs.sp + size, words[2];

	if (size < 8 || (size & 7))
		return TAPROOT_KUNWIND_BAD_FRAME;
	n->regs.sp = cfa;
	n->regs.bp = bp_known ? w->regs.bp : 0;
	n->bp_known = bp_known;
	if (size >= 16) {
		if (cfa - 16 < stack_lo)
			return TAPROOT_KUNWIND_BAD_FRAME;
		if (tap_uwalk_rd(w, words, cfa - 16, 16))
			return TAPROOT_KUNWIND_FAULT;
		n->regs.bp = words[0];
		n->regs.ip = words[1];
		n->bp_known = 1;
		return TAP_UWALK_STEP_OK;
	}
	if (cfa - 8 < stack_lo)
		return TAPROOT_KUNWIND_BAD_FRAME;
	if (tap_uwalk_rd(w, words, cfa - 8, 8))
		return TAPROOT_KUNWIND_FAULT;
	n->regs.ip = words[0];
	return TAP_UWALK_STEP_OK;
}

/* "pop rbp" 16; "ret", or a safepoint poll before it, 8: lib's tp_jvm_epilogue(). */
static __u32 tap_jv_epilogue(const __u8 *c)
{
	static const __u8 cmp_rsp[3] = { 0x49, 0x3b, 0xa7 }, mov_r10[3] = { 0x4d, 0x8b, 0x97 };
	static const __u8 test_ret[4] = { 0x41, 0x85, 0x02, 0xc3 };
	int i, cmp = 1, mov = 1, test = 1, test7 = 1;

	if (c[0] == 0x5d)
		return 16;
	if (c[0] == 0xc3)
		return 8;
	for (i = 0; i < 3; i++) {
		cmp &= c[i] == cmp_rsp[i];
		mov &= c[i] == mov_r10[i];
	}
	for (i = 0; i < 4; i++) {
		test &= c[i] == test_ret[i];
		test7 &= c[7 + i] == test_ret[i];
	}
	/* cmp rsp, [r15 + d32]; ja slow; ret */
	if (cmp && c[7] == 0x0f && c[8] == 0x87 && c[13] == 0xc3)
		return 8;
	/* ja slow; ret */
	if (c[0] == 0x0f && c[1] == 0x87 && c[6] == 0xc3)
		return 8;
	/* mov r10, [r15 + d32]; test [r10], eax; ret */
	if (mov && test7)
		return 8;
	/* test [r10], eax; ret */
	return test ? 8 : 0;
}

int tap_jvwalk_step(struct tap_uwalk *w, const struct taproot_jvm_layout *l,
		    int bp_known, __u64 stack_lo, struct tap_uwalk_next *n,
		    __u64 *upc)
{
	__u64 pc = w->regs.ip, lookup = w->exact ? pc : pc - 1, orig;
	__u8 code[TAP_JV_EPILOGUE];
	struct tap_jv_blob b;
	__u32 size;
	int ret;

	/*
	 * A budget of reads a walk (the ABI's TAPROOT_JVM_WALK_READS): a JVM
	 * step makes up to 40, and a stack of JVM frames up to the frame cap
	 * would make thousands, with interrupts off (or the runqueue lock
	 * held, in the switch probe). Past it the consumer goes on from the
	 * copy.
	 */
	if (w->reads >= TAPROOT_JVM_WALK_READS)
		return TAPROOT_KUNWIND_NO_MAPPING;
	if (tap_jv_blob(w, l, lookup, &b))
		return TAPROOT_KUNWIND_NO_MAPPING;
	*upc = taproot_upc_jvm_code(b.id, pc);
	switch (b.kind) {
	case TAP_JV_INTERPRETER:
		ret = tap_jv_interp_upc(w, l, &b, stack_lo, upc);
		return ret == TAP_UWALK_STEP_OK ? tap_jv_interp(w, bp_known, stack_lo, n) : ret;
	case TAP_JV_VTABLE:
		return tap_jv_sized(w, 8, bp_known, stack_lo, n);
	case TAP_JV_STUB:
		if (!b.frame_size)
			return tap_uwalk_fp(w, bp_known, stack_lo, n);
		return tap_jv_sized(w, b.frame_size, bp_known, stack_lo, n);
	case TAP_JV_NMETHOD:
		break;
	}
	/* A deoptimized frame: named for the pc it had. */
	if (pc == b.deopt_handler && b.orig_pc >= 0 &&
	    w->regs.sp + (__u32)b.orig_pc >= stack_lo &&
	    !tap_uwalk_rd(w, &orig, w->regs.sp + (__u32)b.orig_pc, 8) && orig)
		*upc = taproot_upc_jvm_code(b.id, orig);
	/* In the prologue: the return address, then rbp, pushed so far. */
	if (w->exact && lookup < b.code_begin + b.frame_complete) {
		size = lookup + TAP_JV_PROLOGUE_TAIL >= b.code_begin + b.frame_complete ? 16 : 8;
		return tap_jv_sized(w, size, bp_known, stack_lo, n);
	}
	/* Sampled in its epilogue: the frame released already. */
	if (w->exact && !tap_jv_read(w, code, pc, sizeof(code)) &&
	    (size = tap_jv_epilogue(code)))
		return tap_jv_sized(w, size, bp_known, stack_lo, n);
	if (tap_jv_frame_size(w, l, stack_lo, b.frame_size, &size))
		return TAPROOT_KUNWIND_NO_MAPPING;
	return tap_jv_sized(w, size, bp_known, stack_lo, n);
}
