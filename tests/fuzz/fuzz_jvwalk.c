// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the module's HotSpot frame step (kmod/jvwalk.c, built
 * here in userspace) inside its user stack walker (kmod/uwalk.c), on
 * whatever JVM layout, code cache and stack. The step runs in the sample
 * handler over memory the process may have forged, by a layout only
 * validation (tap_jvlayout_ok(), at upload) stands between it and: it
 * must survive any layout and any memory.
 *
 * The input, read front to back (missing bytes read as 0):
 *   u8 mode (bit 0: raw u64 heap bounds; bit 1: the walker's reach past
 *     the stack image; bit 2: no stack window), u8 max_frames;
 *   the layout: u8 nr_heaps, then per heap (4) u16 low and u16 length
 *     (offsets into the image; raw: u64 low, u64 high), u16 segmap offset,
 *     u8 log2_segment, u8 reserved; u16 block_size and the ten field
 *     offsets in struct order, each a u16; u8 the value of the reserved
 *     field bits 7..6 of mode name;
 *   the registers: u16 ip offset (into the image), u16 sp offset (into
 *     the stack), u8 bp mode (0: a stack offset, 1: raw, 2: 0) and u16 or
 *     u64, u64 r13;
 *   the image: u16 length, its bytes; the stack: the rest (at most 4 KiB).
 * Memory is the image at IMAGE_BASE and the stack at STACK_BASE, in
 * allocations of exactly their sizes; tap_uwalk_read() fails elsewhere.
 * There are no mappings: every frame steps by the JVM's code, or ends the
 * walk.
 *
 * Checked: at most max_frames (capped) pcs and nothing past them; every pc
 * but the last a JVM frame's (TAPROOT_UPC_JVM_*); the last pc a JVM
 * frame's or one in the layout's heaps (the first: the sampled ip); an
 * end in range, never NONE; reads bounded per frame (JV_READS_MAX) and a
 * walk (TAPROOT_JVM_WALK_READS, and the last step's), none longer than
 * TAPROOT_JVM_READ_MAX; and the walk with and without the stack window
 * gives the same pcs and end.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../../kmod/jvwalk.h"
#include "../../kmod/uwalk.h"

#define IMAGE_BASE	0x7f0000000000ULL
#define STACK_BASE	0x7ffd00000000ULL
#define STACK_MAX	4096
#define CANARY		0x5a5a5a5a5a5a5a5aULL
/*
 * A JVM step's reads at most: 16 hops, the blob, its name, an epilogue,
 * a deoptimized pc, 7 words scanned, the caller's words, a Method*, its
 * bytecode pointer and two tries of ConstMethod and its size.
 */
#define JV_READS_MAX	40

static const uint8_t *image, *stack;
static size_t image_len, stack_len;

/* [addr, addr + len) in the region at @base of @n bytes: its offset, or -1. */
static int64_t region_off(uint64_t base, size_t n, uint64_t addr, uint64_t len)
{
	uint64_t off = addr - base;

	return addr >= base && off <= n && n - off >= len ? (int64_t)off : -1;
}

int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	int64_t off;

	check(len <= TAPROOT_JVM_READ_MAX);
	if ((off = region_off(IMAGE_BASE, image_len, addr, len)) >= 0) {
		memcpy(dst, image + off, len);
		return 0;
	}
	if ((off = region_off(STACK_BASE, stack_len, addr, len)) >= 0) {
		memcpy(dst, stack + off, len);
		return 0;
	}
	return -1;
}

__u32 tap_uwalk_read_part(void *dst, __u64 addr, __u32 len)
{
	int64_t off = region_off(STACK_BASE, stack_len, addr, 0);
	uint64_t n;

	check(len <= TAPROOT_JVM_READ_MAX);
	if (off < 0)
		return 0;
	n = stack_len - (uint64_t)off < len ? stack_len - (uint64_t)off : len;
	memcpy(dst, stack + off, n);
	return (__u32)n;
}

static bool is_jvm_pc(uint64_t pc)
{
	return pc >> 62 == 1;
}

static void walk(const struct tap_umaps *maps, const struct taproot_user_regs *regs,
		 uint32_t max, uint64_t stack_hi, bool no_window, __u64 *pcs, struct tap_uwalk *w)
{
	for (unsigned int i = 0; i <= TAPROOT_UNWIND_FRAMES_MAX; i++)
		pcs[i] = CANARY;
	memset(w, 0, sizeof(*w));
	w->maps = maps;
	w->max_frames = max;
	w->stack_hi = stack_hi;
	w->no_window = no_window;
	tap_uwalk(w, regs, pcs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct taproot_jvm_layout l = { 0 };
	struct taproot_user_regs regs = { 0 };
	struct tap_umaps maps = { .jvm = &l };
	__u64 pcs[TAPROOT_UNWIND_FRAMES_MAX + 1], pcs2[TAPROOT_UNWIND_FRAMES_MAX + 1];
	struct tap_uwalk w, w2;
	uint8_t mode = (uint8_t)fuzz_take(&in, 1), bp_mode;
	uint32_t max = (uint32_t)fuzz_take(&in, 1), cap, i, r;
	uint64_t stack_hi;
	uint8_t *img, *stk;

	l.nr_heaps = (uint32_t)fuzz_take(&in, 1);
	for (i = 0; i < TAPROOT_JVM_HEAPS_MAX; i++) {
		struct taproot_jvm_heap *h = &l.heap[i];

		if (mode & 1) {
			h->low = fuzz_take(&in, 8);
			h->high = fuzz_take(&in, 8);
		} else {
			h->low = IMAGE_BASE + fuzz_take(&in, 2);
			h->high = h->low + fuzz_take(&in, 2);
		}
		h->segmap = IMAGE_BASE + fuzz_take(&in, 2);
		h->log2_segment = (uint32_t)fuzz_take(&in, 1);
		h->reserved = (uint32_t)fuzz_take(&in, 1);
	}
	l.block_size = (uint16_t)fuzz_take(&in, 2);
	l.blob_name = (uint16_t)fuzz_take(&in, 2);
	l.blob_code_begin = (uint16_t)fuzz_take(&in, 2);
	l.blob_frame_size = (uint16_t)fuzz_take(&in, 2);
	l.blob_frame_complete = (uint16_t)fuzz_take(&in, 2);
	l.nm_compile_id = (uint16_t)fuzz_take(&in, 2);
	l.nm_deopt_handler = (uint16_t)fuzz_take(&in, 2);
	l.nm_orig_pc = (uint16_t)fuzz_take(&in, 2);
	l.method_const = (uint16_t)fuzz_take(&in, 2);
	l.const_size = (uint16_t)fuzz_take(&in, 2);
	l.const_code_size = (uint16_t)fuzz_take(&in, 2);
	l.reserved[mode >> 6 < 3 ? mode >> 6 : 0] = (uint16_t)fuzz_take(&in, 1);

	regs.ip = IMAGE_BASE + fuzz_take(&in, 2);
	regs.sp = STACK_BASE + fuzz_take(&in, 2) % STACK_MAX;
	bp_mode = (uint8_t)fuzz_take(&in, 1) % 3;
	regs.bp = bp_mode == 0 ? STACK_BASE + fuzz_take(&in, 2) :
		  bp_mode == 1 ? fuzz_take(&in, 8) : 0;
	regs.r13 = fuzz_take(&in, 8);

	image_len = (size_t)fuzz_take(&in, 2);
	if (image_len > in.left)
		image_len = in.left;
	img = malloc(image_len ? image_len : 1);
	memcpy(img, in.p, image_len);
	in.p += image_len;
	in.left -= image_len;
	stack_len = in.left < STACK_MAX ? in.left : STACK_MAX;
	stk = malloc(stack_len ? stack_len : 1);
	memcpy(stk, in.p, stack_len);
	image = img;
	stack = stk;
	stack_hi = STACK_BASE + stack_len + (mode & 2 ? 64 : 0);

	walk(&maps, &regs, max, stack_hi, false, pcs, &w);
	cap = max < TAPROOT_UNWIND_FRAMES_MAX ? max : TAPROOT_UNWIND_FRAMES_MAX;
	check(w.nr <= cap);
	check(pcs[cap] == CANARY);
	check(w.end != TAPROOT_KUNWIND_NONE && w.end < TAPROOT_KUNWIND_NR);
	check(w.reads <= JV_READS_MAX * (w.nr + 1));
	check(w.reads < TAPROOT_JVM_WALK_READS + JV_READS_MAX);
	for (i = 0; i < w.nr; i++) {
		if (is_jvm_pc(pcs[i]))
			continue;
		/* Only the last frame's step may have failed, keeping its pc. */
		check(i == w.nr - 1);
		check(i == 0 ? pcs[i] == regs.ip : tap_jvm_in_code(&l, pcs[i] - 1));
	}

	/* The stack window changes which reads are made, never what is found. */
	walk(&maps, &regs, max, stack_hi, true, pcs2, &w2);
	check(w2.nr == w.nr && w2.end == w.end);
	for (r = 0; r < w.nr; r++)
		check(pcs2[r] == pcs[r]);

	free(img);
	free(stk);
	return 0;
}
