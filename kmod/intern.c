// SPDX-License-Identifier: GPL-2.0
/*
 * Interned stacks: per-CPU slots of stack ids and the epoch (intern.h).
 *
 * The slots of all possible CPUs are one vmalloc'd array of u64 ids,
 * TAPROOT_STACK_SLOTS per CPU (32 KiB each): too large for the static
 * per-CPU area a module may use. 0 is no id.
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/vmalloc.h>

#include "intern.h"
#include "taproot.h"

static u64 *tap_intern_slots;
static atomic_t tap_intern_cur_epoch = ATOMIC_INIT(1);

int __init tap_intern_init(void)
{
	tap_intern_slots = vzalloc(array3_size(nr_cpu_ids, TAPROOT_STACK_SLOTS,
					       sizeof(u64)));
	return tap_intern_slots ? 0 : -ENOMEM;
}

void tap_intern_exit(void)
{
	vfree(tap_intern_slots);
}

void tap_intern_new_epoch(void)
{
	atomic_inc(&tap_intern_cur_epoch);
}

u32 tap_intern_epoch(void)
{
	return atomic_read(&tap_intern_cur_epoch);
}

/* One round of a multiply-xorshift mix (as in splitmix64's finaliser). */
static inline u64 tap_intern_mix(u64 h, u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

u64 tap_intern_id(u32 epoch, u32 pid, u16 flags, const u64 *kpcs, u32 knr,
		  const u64 *upcs, u32 unr)
{
	u64 h = tap_intern_mix(0x6a09e667f3bcc909ULL,
			       (u64)epoch << 32 | pid);
	u32 i;

	/* The counts keep a kernel pc from passing for a user one. */
	h = tap_intern_mix(h, (u64)flags << 32 | knr << 16 | unr);
	for (i = 0; i < knr; i++)
		h = tap_intern_mix(h, kpcs[i]);
	for (i = 0; i < unr; i++)
		h = tap_intern_mix(h, upcs[i]);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
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
