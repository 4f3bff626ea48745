// SPDX-License-Identifier: GPL-2.0
/*
 * Following children: the set of followed processes (follow.h).
 *
 * Invariants of the table, for one generation g:
 *   - a tgid is in at most one slot of g: it is inserted once, at the fork
 *     of its process, and removed at that process's exit, which comes
 *     before the tgid can be reused (the pid is freed when the task is
 *     reaped, after the exit probe has returned);
 *   - the slots from a tgid's home (its hash) to its own were all taken
 *     by g when it was inserted, and a slot of g only changes between a
 *     tgid and a tombstone of g, so a lookup may stop at the first free
 *     slot (zero, or another generation's): the tgid is not beyond it.
 * Tombstones are taken again by inserts, never freed while g is current:
 * freeing one could cut the path to a tgid inserted past it meanwhile. A
 * lookup therefore looks at TAP_FOLLOW_PROBES slots at most (4 cache
 * lines), and an insert that finds none free among them is counted as
 * full, as one beyond follow_max is. With at most TAPROOT_FOLLOW_MAX live
 * tgids in twice as many slots, that takes 32 live neighbours in a row.
 *
 * The count of processes followed is kept per generation parity:
 * tap_follow_renew() zeroes the counter of the new generation, which the
 * generation before the last used; tap_follow_forgotten() waits until no
 * probe of the old configuration runs any more, so the counter is free
 * again by the next renewal. The generations are 40 bits: while the
 * probes are attached each new one waits for a grace period, so it takes
 * years to wrap, and while they are detached the set is empty, so a
 * generation used again finds nothing of its own.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/stringify.h>
#include <linux/threads.h>

#include "config.h"
#include "follow.h"

#define TAP_FOLLOW_MASK		(TAP_FOLLOW_SLOTS - 1)
#define TAP_FOLLOW_GEN_MASK	((1ULL << (64 - TAP_FOLLOW_TGID_BITS)) - 1)

static u64 tap_follow_slots[TAP_FOLLOW_SLOTS] ____cacheline_aligned;
static atomic_t tap_follow_nr[2];		/* by generation parity */
static DEFINE_PER_CPU(u64, tap_follow_nr_full);
static u64 tap_follow_gen_last = TAP_FOLLOW_GEN_FIRST;	/* tap_ctl_lock */

/*
 * follow_max, the module parameter: processes followed at once, at most
 * TAPROOT_FOLLOW_MAX (the default). Lower only to test the bound without
 * thousands of processes; read-only once loaded.
 */
static unsigned int tap_follow_max __read_mostly = TAPROOT_FOLLOW_MAX;

static int tap_follow_max_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int err = kstrtouint(val, 0, &n);

	if (err)
		return err;
	if (n < 1 || n > TAPROOT_FOLLOW_MAX)
		return -EINVAL;
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops tap_follow_max_ops = {
	.set = tap_follow_max_set,
	.get = param_get_uint,
};

module_param_cb(follow_max, &tap_follow_max_ops, &tap_follow_max, 0444);
__MODULE_PARM_TYPE(follow_max, "uint");	/* modinfo, as module_param() says */
MODULE_PARM_DESC(follow_max,
		 "processes followed at once, 1.." __stringify(TAPROOT_FOLLOW_MAX)
		 " (default " __stringify(TAPROOT_FOLLOW_MAX) "): lower only for tests");

static inline u64 tap_follow_slot(u64 gen, u32 tgid)
{
	return gen << TAP_FOLLOW_TGID_BITS | tgid;
}

/* Whether slot value @s is free in generation @gen. */
static inline bool tap_follow_free(u64 s, u64 gen)
{
	return s >> TAP_FOLLOW_TGID_BITS != gen;
}

static inline u32 tap_follow_home(u32 tgid)
{
	BUILD_BUG_ON(!is_power_of_2(TAP_FOLLOW_SLOTS));
	BUILD_BUG_ON(PID_MAX_LIMIT > (1 << TAP_FOLLOW_TGID_BITS));
	return hash_32(tgid, ilog2(TAP_FOLLOW_SLOTS));
}

bool tap_follow_has(u64 gen, u32 tgid)
{
	u64 want = tap_follow_slot(gen, tgid);
	u32 i = tap_follow_home(tgid), n;

	/* The idle tasks' tgid: never followed, and its value is a tombstone's. */
	if (!tgid)
		return false;

	for (n = 0; n < TAP_FOLLOW_PROBES; n++, i = (i + 1) & TAP_FOLLOW_MASK) {
		u64 s = READ_ONCE(tap_follow_slots[i]);

		if (s == want)
			return true;
		if (tap_follow_free(s, gen))
			return false;
	}
	return false;
}

/* Put @tgid in a free slot or a tombstone of @gen; false: none near. */
static bool tap_follow_insert(u64 gen, u32 tgid)
{
	u64 want = tap_follow_slot(gen, tgid), tomb = tap_follow_slot(gen, 0);
	u32 i = tap_follow_home(tgid), n;

	for (n = 0; n < TAP_FOLLOW_PROBES; n++, i = (i + 1) & TAP_FOLLOW_MASK) {
		u64 s = READ_ONCE(tap_follow_slots[i]);

		/* Another insert may take the slot first: then look again. */
		while (s == tomb || tap_follow_free(s, gen)) {
			u64 old = cmpxchg(&tap_follow_slots[i], s, want);

			if (old == s)
				return true;
			s = old;
		}
	}
	return false;
}

void tap_follow_fork(u64 gen, u32 tgid)
{
	atomic_t *nr = &tap_follow_nr[gen & 1];

	if (atomic_add_unless(nr, 1, READ_ONCE(tap_follow_max))) {
		if (likely(tap_follow_insert(gen, tgid)))
			return;
		atomic_dec(nr);
	}
	this_cpu_inc(tap_follow_nr_full);
}

void tap_follow_exit(const struct tap_config *cfg, u32 tgid)
{
	u64 gen = cfg->follow_gen, want = tap_follow_slot(gen, tgid);
	u32 i = tap_follow_home(tgid), n;

	for (n = 0; n < TAP_FOLLOW_PROBES; n++, i = (i + 1) & TAP_FOLLOW_MASK) {
		u64 s = READ_ONCE(tap_follow_slots[i]);

		if (s == want) {
			/* Two last threads may both say so (events.c): one wins. */
			if (cmpxchg(&tap_follow_slots[i], want,
				    tap_follow_slot(gen, 0)) == want)
				atomic_dec(&tap_follow_nr[gen & 1]);
			return;
		}
		if (tap_follow_free(s, gen))
			return;
	}
}

bool tap_follow_renew(const struct tap_config *cur, struct tap_config *cfg,
		      bool tgids_given)
{
	u64 gen;

	lockdep_assert_held(&tap_ctl_lock);
	/* Without FOLLOW, the current generation holds nothing (see above). */
	if (!(cur->flags & TAPROOT_CFG_F_FOLLOW) ||
	    ((cfg->flags & TAPROOT_CFG_F_FOLLOW) && !tgids_given))
		return false;
	gen = (tap_follow_gen_last + 1) & TAP_FOLLOW_GEN_MASK;
	if (!gen)
		gen = TAP_FOLLOW_GEN_FIRST;
	tap_follow_gen_last = gen;
	/* Its last user was generation gen - 2, gone (tap_follow_forgotten()). */
	atomic_set(&tap_follow_nr[gen & 1], 0);
	cfg->follow_gen = gen;
	return true;
}

void tap_follow_clear(void)
{
	unsigned int i;

	lockdep_assert_held(&tap_ctl_lock);
	for (i = 0; i < TAP_FOLLOW_SLOTS; i++)
		WRITE_ONCE(tap_follow_slots[i], 0);
	atomic_set(&tap_follow_nr[0], 0);
	atomic_set(&tap_follow_nr[1], 0);
}

u32 tap_follow_count(const struct tap_config *cfg)
{
	return atomic_read(&tap_follow_nr[cfg->follow_gen & 1]);
}

u64 tap_follow_full(void)
{
	unsigned int cpu;
	u64 sum = 0;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(&tap_follow_nr_full, cpu));
	return sum;
}
