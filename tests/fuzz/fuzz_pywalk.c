// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the module's CPython frame walker (kmod/pywalk.c, built
 * here in userspace) on whatever layout and memory, and the line tables
 * the library reads of code objects (lib/runtime/python.c). The walker
 * runs in the sample handler over a process's memory, which the process
 * may have forged, by a layout only validation stands between it and:
 * it must take only layouts tap_pylayout_ok() takes and survive any
 * memory.
 *
 * The input, read front to back (missing bytes read as 0):
 *   the layout, struct taproot_python_layout's fields in order, each a
 *     u8 (an offset; with bit 7 of the mode byte, raw: u16 or u64), its
 *     addresses (tss_key, code_type) chosen in the heap by a u16 offset;
 *   u8 mode, u16 fs base offset in the heap, u8 max frames;
 *   the heap: u16 length, its bytes; then the rest: a line table.
 * Memory is the heap image at HEAP_BASE, in an allocation of exactly its
 * size; tap_uwalk_read() fails elsewhere.
 *
 * Checked: a layout the walker takes is one tap_pylayout_ok() takes; at
 * most max frames written (capped at TAPROOT_PY_FRAMES_MAX), nothing past
 * them; every frame's code object lies in the heap and its type word is
 * code_type; at most 5 + 4 * TAPROOT_PY_FRAMES_MAX reads; a walk that
 * stopped short of the cap with frames left says it was cut short. The
 * line table: tp_pycode_line() of both formats at every position gives a
 * line, reading only the table (ASan checks).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/runtime.h"
#include "../../kmod/pywalk.h"
#include "../../kmod/uwalk.h"

#define HEAP_BASE	0x7f0000000000ULL
#define CANARY		0x5a5a5a5a5a5a5a5aULL

static const uint8_t *heap;
static size_t heap_len;
static unsigned int reads_seen;

int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	uint64_t off = addr - HEAP_BASE;

	reads_seen++;
	check(len <= TAPROOT_PY_READ_MAX);
	if (addr < HEAP_BASE || off > heap_len || heap_len - off < len)
		return -1;
	memcpy(dst, heap + off, len);
	return 0;
}

static uint16_t take_off(struct fuzz_input *in, bool raw)
{
	return raw ? (uint16_t)fuzz_take(in, 2) : (uint16_t)fuzz_take(in, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct taproot_python_layout l = { 0 };
	struct taproot_pyframe out[TAPROOT_PY_FRAMES_MAX + 1];
	struct tap_pywalk_res res;
	uint8_t mode = (uint8_t)fuzz_take(&in, 1);
	bool raw = mode & 0x80;
	uint64_t fsoff;
	uint32_t max, nr;
	uint8_t *h;

	l.tss_key = raw ? fuzz_take(&in, 8) : HEAP_BASE + fuzz_take(&in, 2);
	l.code_type = raw ? fuzz_take(&in, 8) : HEAP_BASE + fuzz_take(&in, 2);
	l.tsd_off = raw ? (uint32_t)fuzz_take(&in, 4) : (uint32_t)fuzz_take(&in, 2);
	l.tstate_cframe = take_off(&in, raw);
	l.tstate_frame = take_off(&in, raw);
	l.frame_code = take_off(&in, raw);
	l.frame_back = take_off(&in, raw);
	l.frame_pos = take_off(&in, raw);
	l.entry_off = take_off(&in, raw);
	l.pos_kind = (uint8_t)fuzz_take(&in, 1);
	l.entry_kind = (uint8_t)fuzz_take(&in, 1);
	l.code_argcount = take_off(&in, raw);
	l.code_kwonly = take_off(&in, raw);
	l.code_flags = take_off(&in, raw);
	l.code_firstlineno = take_off(&in, raw);
	if (mode & 0x40)
		l.reserved[(mode & 3) % 3] = 1;
	fsoff = fuzz_take(&in, 2);
	max = (uint32_t)fuzz_take(&in, 1);
	heap_len = (size_t)fuzz_take(&in, 2);
	if (heap_len > in.left)
		heap_len = in.left;
	h = malloc(heap_len ? heap_len : 1);
	memcpy(h, in.p, heap_len);
	heap = h;
	in.p += heap_len;
	in.left -= heap_len;

	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++)
		memset(&out[i], 0x5a, sizeof(out[i]));
	reads_seen = 0;
	nr = tap_pywalk(&l, HEAP_BASE + fsoff, out, max, &res);
	check(nr <= max && nr <= TAPROOT_PY_FRAMES_MAX);
	check(!nr || tap_pylayout_ok(&l));
	check(reads_seen <= res.reads && res.reads <= 5 + 4 * TAPROOT_PY_FRAMES_MAX);
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t type, code = out[i].code;

		check(code >= HEAP_BASE && code - HEAP_BASE + 16 <= heap_len);
		memcpy(&type, heap + (code - HEAP_BASE) + 8, sizeof(type));
		check(type == l.code_type);
	}
	/* Nothing written past the frames the walker may write. */
	check(out[max < TAPROOT_PY_FRAMES_MAX ? max : TAPROOT_PY_FRAMES_MAX].code == CANARY);

	/* The rest as a line table of either format, at every position. */
	{
		struct tp_pyelf py = { 0 };
		struct tp_pycode c = { 0 };

		c.lines = (uint8_t *)in.p;
		c.lines_len = in.left;
		c.firstlineno = (uint32_t)mode;
		py.code_insns = 200;
		for (int f = 0; f < 2; f++) {
			py.v.lines = f ? TP_PY_LOCATIONS : TP_PY_LNOTAB;
			for (uint32_t pos = 0; pos < 2 * in.left + 210 && pos < 4096; pos += 2)
				(void)tp_pycode_line(&py, &c, pos);
			(void)tp_pycode_line(&py, &c, TAPROOT_PYFRAME_POS_NONE);
		}
	}
	free(h);
	return 0;
}
