// SPDX-License-Identifier: GPL-2.0
/*
 * Counted stacks (count.h; <linux/taproot.h>, "Counted stacks").
 *
 * The tables of all possible CPUs are one vmalloc'd array: CPU c's table
 * i (0 or 1) is TAPROOT_COUNT_SLOTS entries from (2 * c + i) *
 * TAPROOT_COUNT_SLOTS. Made at the first configuration with COUNT, never
 * freed before unload: a configuration published with COUNT stays
 * readable by handlers that run late, and a table to count in costs
 * 128 KiB per possible CPU, once.
 *
 * A table is open addressing: an entry's home slot is a hash of its
 * stack id (already a keyed SipHash: intern.c) and thread, and it is
 * looked for in TAPROOT_COUNT_PROBES slots from there. An entry whose
 * count is 0 is free; entries are never removed but by a drain, which
 * empties the whole table, so a lookup may stop at the first free slot.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "count.h"
#include "taproot.h"

#define TAP_COUNT_BITS	ilog2(TAPROOT_COUNT_SLOTS)

/* NULL until the first configuration with COUNT; then every CPU's two. */
static struct taproot_count *tap_count_tables;
/* Which of its two tables a CPU counts in: written by drains only. */
static DEFINE_PER_CPU(u32, tap_count_active);
/* Serialises making the tables, drains and clears. */
static DEFINE_MUTEX(tap_count_mutex);

static struct taproot_count *tap_count_table(struct taproot_count *t,
					     unsigned int cpu, u32 which)
{
	return t + ((size_t)cpu * 2 + which) * TAPROOT_COUNT_SLOTS;
}

int tap_count_enable(void)
{
	struct taproot_count *t;
	int err = 0;

	BUILD_BUG_ON(!is_power_of_2(TAPROOT_COUNT_SLOTS));
	BUILD_BUG_ON(TAPROOT_COUNT_PROBES > TAPROOT_COUNT_SLOTS);
	BUILD_BUG_ON(sizeof(struct taproot_count) != 64);
	mutex_lock(&tap_count_mutex);
	if (!tap_count_tables) {
		t = vzalloc(array3_size(nr_cpu_ids, 2 * TAPROOT_COUNT_SLOTS,
					sizeof(*t)));
		if (t)
			/* Zeroed before published: pairs with tap_count_add(). */
			smp_store_release(&tap_count_tables, t);
		else
			err = -ENOMEM;
	}
	mutex_unlock(&tap_count_mutex);
	return err;
}

/* Whether @e holds the samples of this key. */
static bool tap_count_match(const struct taproot_count *e, u64 id, u32 epoch,
			    u32 tid, u16 flags, u32 period_us,
			    const char *comm)
{
	return e->stack_id == id && e->tid == tid && e->epoch == epoch &&
	       e->flags == flags && e->period_us == period_us &&
	       !memcmp(e->comm, comm, sizeof(e->comm));
}

bool tap_count_add(u64 id, u32 epoch, const struct task_struct *task,
		   u16 flags, u32 period_us, u64 now_ns)
{
	struct taproot_count *t = smp_load_acquire(&tap_count_tables), *e;
	unsigned int cpu = smp_processor_id();
	char comm[TASK_COMM_LEN];
	u32 home, i;

	if (!t)
		return false;
	t = tap_count_table(t, cpu, READ_ONCE(*this_cpu_ptr(&tap_count_active)));
	tap_copy_comm(comm, task);
	home = hash_64(id ^ task->pid, TAP_COUNT_BITS);
	for (i = 0; i < TAPROOT_COUNT_PROBES; i++) {
		e = &t[(home + i) & (TAPROOT_COUNT_SLOTS - 1)];
		if (!e->count) {
			*e = (struct taproot_count){
				.stack_id = id,
				.epoch = epoch,
				.pid = task->tgid,
				.tid = task->pid,
				.cpu = cpu,
				.flags = flags,
				.count = 1,
				.period_us = period_us,
				.first_ns = now_ns,
				.last_ns = now_ns,
			};
			memcpy(e->comm, comm, sizeof(e->comm));
			return true;
		}
		if (tap_count_match(e, id, epoch, task->pid, flags, period_us,
				    comm)) {
			/* A count that would wrap: its samples go one by one. */
			if (e->count == U32_MAX)
				return false;
			e->count++;
			e->last_ns = now_ns;
			return true;
		}
	}
	return false;
}

/*
 * Every CPU to its other table; on return no handler writes the ones they
 * left (tap_count_left()). Under tap_count_mutex, the tables made.
 */
static void tap_count_switch(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		u32 *active = per_cpu_ptr(&tap_count_active, cpu);

		WRITE_ONCE(*active, !*active);
	}
	/*
	 * The handler runs with interrupts off, an RCU reader: once this
	 * returns, every one that read the old index has finished.
	 */
	synchronize_rcu();
}

/* The table @cpu left at the last switch. Under tap_count_mutex. */
static struct taproot_count *tap_count_left(unsigned int cpu)
{
	return tap_count_table(tap_count_tables, cpu,
			       !*per_cpu_ptr(&tap_count_active, cpu));
}

long tap_count_drain_ioctl(struct taproot_counts_drain __user *uarg)
{
	struct taproot_counts_drain a;
	struct taproot_count __user *out;
	unsigned int cpu, i;
	long ret = 0;
	u32 nr = 0;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.max < (u64)nr_cpu_ids * TAPROOT_COUNT_SLOTS)
		return -ENOSPC;
	out = u64_to_user_ptr(a.entries);

	mutex_lock(&tap_count_mutex);
	if (tap_count_tables) {
		tap_count_switch();
		for_each_possible_cpu(cpu) {
			struct taproot_count *left = tap_count_left(cpu);

			for (i = 0; i < TAPROOT_COUNT_SLOTS && !ret; i++) {
				if (!left[i].count)
					continue;
				if (copy_to_user(out + nr, &left[i], sizeof(left[i])))
					ret = -EFAULT;
				nr++;
			}
			/* Emptied whatever happened: it is the next active one. */
			memset(left, 0, TAPROOT_COUNT_SLOTS * sizeof(*left));
		}
	}
	mutex_unlock(&tap_count_mutex);
	if (!ret && put_user(nr, &uarg->nr))
		ret = -EFAULT;
	return ret;
}

void tap_count_clear(void)
{
	unsigned int cpu, round;

	mutex_lock(&tap_count_mutex);
	for (round = 0; tap_count_tables && round < 2; round++) {
		tap_count_switch();
		for_each_possible_cpu(cpu)
			memset(tap_count_left(cpu), 0,
			       TAPROOT_COUNT_SLOTS * sizeof(struct taproot_count));
	}
	mutex_unlock(&tap_count_mutex);
}

void tap_count_exit(void)
{
	vfree(tap_count_tables);
	tap_count_tables = NULL;
}
