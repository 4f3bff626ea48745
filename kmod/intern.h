/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interned stacks (<linux/taproot.h>, "Interned stacks"): the ids of the
 * stacks each CPU has written a TAPROOT_REC_STACK record of, in
 * TAPROOT_STACK_SLOTS slots per CPU, and the epoch they belong to.
 *
 * Only the sample handler reads and writes a CPU's slots, on that CPU: it
 * does not nest with itself, so a slot needs no atomics. A reader keeps
 * the same slots from the records, so a slot may be set only once its
 * STACK record is committed, and only the sample handler writes STACK
 * records: a record nested between the two (an event probe interrupted)
 * never touches a slot.
 */
#ifndef _TAPROOT_INTERN_H
#define _TAPROOT_INTERN_H

#include <linux/types.h>
#include <linux/taproot.h>

int tap_intern_init(void);
void tap_intern_exit(void);

/*
 * A new epoch: the next reader has not seen the STACK records written so
 * far (a new open of /dev/taproot, rings replaced). Process context.
 */
void tap_intern_new_epoch(void);

/* The current epoch, any context. */
u32 tap_intern_epoch(void);

/*
 * The id of a stack of process @pid in @epoch: a 64-bit keyed hash
 * (SipHash, a random key of each epoch: intern.c) of them, the flags that
 * say how to read the pcs, the kernel pcs, the user pcs and the Python
 * frames; never 0. The epoch is hashed in so that a slot filled in an
 * earlier epoch never matches. Any context.
 */
u64 tap_intern_id(u32 epoch, u32 pid, u16 flags, const u64 *kpcs, u32 knr,
		  const u64 *upcs, u32 unr,
		  const struct taproot_pyframe *py, u32 pynr);

/* Whether the current CPU's slot of @id holds it (its STACK was written). */
bool tap_intern_seen(u64 id);

/* @id's STACK record is committed on the current CPU: it takes its slot. */
void tap_intern_set(u64 id);

#endif /* _TAPROOT_INTERN_H */
