// SPDX-License-Identifier: GPL-2.0
/*
 * The CPython frame walker (pywalk.h). Two reads a frame: the frame, then
 * its code object, each at most TAPROOT_PY_READ_MAX bytes into a buffer
 * on this stack; the offsets of the layout were checked at upload
 * (tap_pylayout_ok()) and are checked again here, since the walker also
 * runs on layouts the fuzz target makes up. Memory is the process's own,
 * read through its mm: a layout that lies gives wrong frames and nothing
 * worse, and the walk stops at TAPROOT_PY_FRAMES_MAX frames, or twice
 * that many steps when frames are skipped (ENTRY_OWNER's C-stack frames).
 */
#ifdef __KERNEL__
#include <linux/stddef.h>
#else
#include <stddef.h>
#endif

#include "pywalk.h"
#include "uwalk.h"

/* struct pthread's specific_1stblock holds the data of keys 0..31. */
#define TAP_PY_TSD_KEYS		32
#define TAP_PY_TSD_STRIDE	16
/* A frame owned by the C stack: 3.12+'s entry frame between activations. */
#define TAP_PY_OWNER_CSTACK	3

static int tap_py_off_ok(__u32 off, __u32 size)
{
	return off + size <= TAPROOT_PY_READ_MAX;
}

int tap_pylayout_ok(const struct taproot_python_layout *l)
{
	__u32 pos_size = l->pos_kind == TAPROOT_PY_POS_INT ? 4 : 8;

	return l->pos_kind < TAPROOT_PY_POS_NR && l->entry_kind < TAPROOT_PY_ENTRY_NR &&
	       !l->reserved[0] && !l->reserved[1] && !l->reserved[2] &&
	       (l->entry_kind != TAPROOT_PY_ENTRY_ALL || !l->entry_off) &&
	       l->tsd_off <= 4096 &&
	       tap_py_off_ok(l->tstate_cframe, 8) && tap_py_off_ok(l->tstate_frame, 8) &&
	       tap_py_off_ok(l->frame_code, 8) && tap_py_off_ok(l->frame_back, 8) &&
	       tap_py_off_ok(l->frame_pos, pos_size) && tap_py_off_ok(l->entry_off, 1) &&
	       tap_py_off_ok(l->code_argcount, 4) && tap_py_off_ok(l->code_kwonly, 4) &&
	       tap_py_off_ok(l->code_flags, 4) && tap_py_off_ok(l->code_firstlineno, 4);
}

/* Grow read length *@len to hold the field of @size bytes at @off. */
static void tap_py_end(__u32 *len, __u32 off, __u32 size)
{
	if (*len < off + size)
		*len = off + size;
}

static int tap_py_read(void *dst, __u64 addr, __u32 len, __u32 *reads)
{
	(*reads)++;
	if (!addr || addr + len < addr)
		return -1;
	return tap_uwalk_read(dst, addr, len);
}

/*
 * The innermost frame of the thread at @fsbase; 0 when it has none (no
 * thread state: res->cut stays 0) or it could not be found (res->cut 1).
 */
static __u64 tap_py_top(const struct taproot_python_layout *l, __u64 fsbase,
			struct tap_pywalk_res *res)
{
	__u8 w[8];
	__u32 key;
	__u64 p;

	res->cut = 1;
	if (tap_py_read(w, l->tss_key, 4, &res->reads))
		return 0;
	key = tap_uwalk_le32(w, 0);
	if (key >= TAP_PY_TSD_KEYS || !fsbase ||
	    tap_py_read(w, fsbase + l->tsd_off + (__u64)key * TAP_PY_TSD_STRIDE, 8,
			&res->reads))
		return 0;
	p = tap_uwalk_le64(w, 0);	/* the thread state */
	if (!p) {
		res->cut = 0;
		return 0;
	}
	if (l->tstate_cframe) {
		if (tap_py_read(w, p + l->tstate_cframe, 8, &res->reads))
			return 0;
		p = tap_uwalk_le64(w, 0);
	}
	if (tap_py_read(w, p + l->tstate_frame, 8, &res->reads))
		return 0;
	res->cut = 0;
	return tap_uwalk_le64(w, 0);
}

/* The position of a frame read into @f whose code object is at @code. */
static __u32 tap_py_pos(const struct taproot_python_layout *l, const __u8 *f,
			__u64 code)
{
	__u64 d;

	if (l->pos_kind == TAPROOT_PY_POS_INT) {
		d = tap_uwalk_le32(f, l->frame_pos);
		/* f_lasti -1: not started yet. */
		return d <= TAPROOT_PYFRAME_POS_MASK - 1 ? (__u32)d : TAPROOT_PYFRAME_POS_NONE;
	}
	d = tap_uwalk_le64(f, l->frame_pos) - code;
	return d < TAPROOT_PYFRAME_POS_NONE ? (__u32)d : TAPROOT_PYFRAME_POS_NONE;
}

__u32 tap_pywalk(const struct taproot_python_layout *l, __u64 fsbase,
		 struct taproot_pyframe *out, __u32 max, struct tap_pywalk_res *res)
{
	__u8 f[TAPROOT_PY_READ_MAX], c[TAPROOT_PY_READ_MAX];
	__u32 nr = 0, steps, flen = 0, clen = 0;
	__u64 frame, code, code_type;

	res->reads = 0;
	res->cut = 1;
	if (max > TAPROOT_PY_FRAMES_MAX)
		max = TAPROOT_PY_FRAMES_MAX;
	if (!tap_pylayout_ok(l))
		return 0;
	/* Read as far as the furthest field, of frames and of code objects. */
	tap_py_end(&flen, l->frame_code, 8);
	tap_py_end(&flen, l->frame_back, 8);
	tap_py_end(&flen, l->frame_pos, l->pos_kind == TAPROOT_PY_POS_INT ? 4 : 8);
	tap_py_end(&flen, l->entry_off, 1);
	tap_py_end(&clen, 8, 8);	/* ob_type */
	tap_py_end(&clen, l->code_argcount, 4);
	tap_py_end(&clen, l->code_kwonly, 4);
	tap_py_end(&clen, l->code_flags, 4);
	tap_py_end(&clen, l->code_firstlineno, 4);
	code_type = l->code_type;

	frame = tap_py_top(l, fsbase, res);
	for (steps = 0; frame && nr < max && steps < 2 * TAPROOT_PY_FRAMES_MAX; steps++) {
		if (tap_py_read(f, frame, flen, &res->reads))
			break;
		frame = tap_uwalk_le64(f, l->frame_back);
		if (l->entry_kind == TAPROOT_PY_ENTRY_OWNER &&
		    f[l->entry_off] == TAP_PY_OWNER_CSTACK) {
			if (nr)
				out[nr - 1].pos |= TAPROOT_PYFRAME_ENTRY;
			continue;
		}
		code = tap_uwalk_le64(f, l->frame_code);
		if (tap_py_read(c, code, clen, &res->reads) || tap_uwalk_le64(c, 8) != code_type)
			break;
		out[nr].code = code;
		out[nr].pos = tap_py_pos(l, f, code);
		out[nr].cookie = (tap_uwalk_le32(c, l->code_argcount) << 25) +
				 (tap_uwalk_le32(c, l->code_kwonly) << 18) +
				 (tap_uwalk_le32(c, l->code_flags) << 10) +
				 tap_uwalk_le32(c, l->code_firstlineno);
		if (l->entry_kind == TAPROOT_PY_ENTRY_ALL ||
		    (l->entry_kind == TAPROOT_PY_ENTRY_FLAG && f[l->entry_off]))
			out[nr].pos |= TAPROOT_PYFRAME_ENTRY;
		nr++;
	}
	/* Ended before the chain's end and the frame cap: a break, or the step cap. */
	if (frame && nr < max)
		res->cut = 1;
	return nr;
}
