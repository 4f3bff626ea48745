// SPDX-License-Identifier: GPL-2.0
/*
 * Interned stacks: per-CPU slots of stack ids and the epoch (intern.h).
 *
 * The slots of all possible CPUs are one vmalloc'd array of u64 ids,
 * TAPROOT_STACK_SLOTS per CPU (32 KiB each): too large for the static
 * per-CPU area a module may use. 0 is no id.
 *
 * Ids are SipHash-2-4 of the stack under a random key of each epoch: an
 * unkeyed or known hash would let a process craft a stack whose id is
 * another process's, and so have its own samples stand for that one's
 * (the consumer resolves a reference by id alone). Nobody but the
 * consumer sees ids, and the key never leaves the module. The keys of
 * the current epoch and of the last are kept by the epoch's parity: a
 * sample reads the epoch, then the key of its parity, which the next
 * change of epoch leaves alone (only the one after that writes it again;
 * a sample that spans two changes of epoch, both from process context,
 * gets an id of neither key: a stack interned once more).
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/smp.h>
#include <linux/vmalloc.h>

#include "intern.h"
#include "taproot.h"

static u64 *tap_intern_slots;
static atomic_t tap_intern_cur_epoch = ATOMIC_INIT(1);
static siphash_key_t tap_intern_keys[2];	/* by the epoch's parity */
static DEFINE_MUTEX(tap_intern_mutex);		/* changes of epoch */

int __init tap_intern_init(void)
{
	tap_intern_slots = vzalloc(array3_size(nr_cpu_ids, TAPROOT_STACK_SLOTS,
					       sizeof(u64)));
	get_random_bytes(&tap_intern_keys[1], sizeof(tap_intern_keys[1]));
	return tap_intern_slots ? 0 : -ENOMEM;
}

void tap_intern_exit(void)
{
	vfree(tap_intern_slots);
}

void tap_intern_new_epoch(void)
{
	u32 next;

	mutex_lock(&tap_intern_mutex);
	next = atomic_read(&tap_intern_cur_epoch) + 1;
	get_random_bytes(&tap_intern_keys[next & 1], sizeof(tap_intern_keys[0]));
	/* The key before the epoch: pairs with tap_intern_epoch()'s acquire. */
	atomic_set_release(&tap_intern_cur_epoch, next);
	mutex_unlock(&tap_intern_mutex);
}

u32 tap_intern_epoch(void)
{
	return atomic_read_acquire(&tap_intern_cur_epoch);
}

u64 tap_intern_id(u32 epoch, u32 pid, u16 flags, const u64 *kpcs, u32 knr,
		  const u64 *upcs, u32 unr,
		  const struct taproot_pyframe *py, u32 pynr)
{
	const siphash_key_t *key = &tap_intern_keys[epoch & 1];
	u64 h, uh;

	uh = siphash(upcs, unr * sizeof(u64), key);
	if (pynr)
		uh = siphash_2u64(uh, siphash(py, pynr * sizeof(*py), key), key);
	/* The counts keep a kernel pc from passing for a user one. */
	h = siphash_4u64((u64)epoch << 32 | pid,
			 (u64)pynr << 48 | (u64)flags << 32 | knr << 16 | unr,
			 siphash(kpcs, knr * sizeof(u64), key), uh, key);
	return h ? h : 1;
}

static u64 *tap_intern_slot(u64 id)
{
	unsigned int cpu = smp_processor_id();

	return &tap_intern_slots[(size_t)cpu * TAPROOT_STACK_SLOTS +
				 (id & (TAPROOT_STACK_SLOTS - 1))];
}

bool tap_intern_seen(u64 id)
{
	return *tap_intern_slot(id) == id;
}

void tap_intern_set(u64 id)
{
	*tap_intern_slot(id) = id;
}
