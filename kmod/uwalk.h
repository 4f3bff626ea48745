/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user stack walker: one sample's user call chain from its registers,
 * the uploaded tables and mappings of its process (utable.h), and small
 * reads of its stack. Its step semantics are those of taproot's userspace
 * unwinder (lib/unwind/unwind.c, the fast path): the same rules give the
 * same pcs, which the agreement test checks.
 *
 * Plain C, compiled in the module and in userspace (the fuzz target): the
 * includer provides tap_uwalk_read(). Runs in any context: no lock, no
 * allocation, every loop bounded (frames by max_frames, each table lookup
 * by the binary search's log2 steps, each mapping lookup likewise).
 */
#ifndef _TAPROOT_UWALK_H
#define _TAPROOT_UWALK_H

#include <linux/types.h>
#include <linux/taproot.h>

#include "utable.h"

/*
 * Read @len bytes of the walked task's user memory at @addr into @dst
 * (an on-stack buffer of the walker): 0, or nonzero when any byte could
 * not be read (the walk then ends with TAPROOT_KUNWIND_FAULT). Never
 * faults pages in, never sleeps. The module's is tap_ucopy()'s
 * (ucopy.c); the fuzz target's reads its random memory.
 */
int tap_uwalk_read(void *dst, __u64 addr, __u32 len);

/*
 * The same, but keeping what could be read: the bytes at @addr copied to
 * @dst, up to the first that cannot be read; returns how many. For the
 * walker's stack window. The module's is tap_ucopy().
 */
__u32 tap_uwalk_read_part(void *dst, __u64 addr, __u32 len);

/*
 * The rules of recent (table, pc) lookups, direct-mapped by a hash of the
 * two, for a CPU's walks one after another (a profiled program's pcs
 * repeat). An entry holds a copy of the rule, never a pointer into a
 * table, and is keyed by the table's uid, which no other table ever has
 * (utable.h), and by the pc's exact offset in it: a hit is the rule the
 * table's search gives, whatever was freed or uploaded since, and an entry
 * of a table gone is never matched again, only overwritten. No lock: one
 * walk at a time uses a cache (the module's: one per CPU, taken with
 * interrupts off). All zero is empty.
 */
#define TAP_UWALK_CACHE_BITS	8

struct tap_uwalk_centry {
	__u64 uid;		/* the table's; 0: empty */
	__u32 off;		/* the pc's offset from the table's base */
	__u32 pad;
	struct taproot_unwind_rule rule;
};

struct tap_uwalk_cache {
	struct tap_uwalk_centry e[1U << TAP_UWALK_CACHE_BITS];
};

struct tap_uwalk_win;

/*
 * One walk. The caller sets maps, max_frames (1..TAPROOT_UNWIND_FRAMES_MAX),
 * stack_hi, cache (NULL: none) and no_window, and calls tap_uwalk(); the
 * rest is its result. The walk reads the stack in [the leaf's sp,
 * stack_hi) only (a read beyond fails, as one of unreadable memory does),
 * code only within an uploaded mapping (the sigreturn check at a pc), and
 * keeps a pc read from memory only when an uploaded mapping holds it: what
 * tables and mappings can make it read and tell is bounded by what the
 * process runs and that window.
 */
struct tap_uwalk {
	const struct tap_umaps *maps;
	__u32 max_frames;
	__u64 stack_hi;
	struct tap_uwalk_cache *cache;
	/*
	 * Every stack read its own: no window (uwalk.c) serving reads of
	 * frames close together. For tests, which compare the two ways.
	 */
	__u8 no_window;

	__u32 nr;		/* pcs written */
	__u8 end;		/* enum taproot_kunwind, never _NONE */
	/*
	 * The registers of frame nr - 1, where the walk stopped: all of them
	 * when it is the leaf or a frame a signal frame restored (exact set:
	 * its pc is not a return address); else only ip, sp and bp (bp 0
	 * when the rules lost it), the rest 0.
	 */
	struct taproot_user_regs regs;
	__u8 exact;		/* regs.ip is not a return address */
	__u8 partial;		/* only ip, sp, bp of regs are known */
	__u32 reads;		/* reads of memory made, and refused */
	__u32 hits;		/* rules found in the cache */

	struct tap_uwalk_win *win;	/* uwalk.c's, during tap_uwalk() */
};

/*
 * Walk from @start (the sampled user registers; the leaf's pc is exact),
 * writing up to w->max_frames pcs to @pcs, leaf first, return addresses as
 * found (not adjusted). Sets every result field of @w.
 */
void tap_uwalk(struct tap_uwalk *w, const struct taproot_user_regs *start,
	       __u64 *pcs);

/*
 * Little-endian loads from a buffer a walker read into, at offsets it
 * checked against the buffer's size: the runtimes' walkers (pywalk.c,
 * jvwalk.c) read structures the uploaded layouts describe.
 */
static inline __u64 tap_uwalk_le64(const __u8 *b, __u32 off)
{
	__u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | b[off + i];
	return v;
}

static inline __u32 tap_uwalk_le32(const __u8 *b, __u32 off)
{
	return (__u32)b[off] | (__u32)b[off + 1] << 8 | (__u32)b[off + 2] << 16 |
	       (__u32)b[off + 3] << 24;
}

#endif /* _TAPROOT_UWALK_H */
