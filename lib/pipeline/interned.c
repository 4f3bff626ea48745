// SPDX-License-Identifier: GPL-2.0
/*
 * The consumer's mirror of the module's stack slots (interned.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"
#include "pipeline/interned.h"
#include "util/util.h"

struct tp_interned_slot {
	struct tp_interned_stack s;	/* s.rec NULL: none yet */
	size_t cap;			/* bytes allocated at s.rec */
};

struct tp_interned_cpu {
	struct tp_interned_slot slot[TAPROOT_STACK_SLOTS];
};

/* Ring @cpu's slots, allocated now if @alloc; NULL past the bound or -ENOMEM. */
static struct tp_interned_cpu *interned_cpu(struct tp_interned *im, unsigned int cpu,
					    bool alloc)
{
	struct tp_interned_cpu **v;
	unsigned int n;

	if (cpu < im->ncpu && (im->cpu[cpu] || !alloc))
		return im->cpu[cpu];
	if (!alloc || cpu >= TP_INTERNED_CPUS_MAX)
		return NULL;
	if (cpu >= im->ncpu) {
		n = cpu + 1 > 2 * im->ncpu ? cpu + 1 : 2 * im->ncpu;
		if (n > TP_INTERNED_CPUS_MAX)
			n = TP_INTERNED_CPUS_MAX;
		v = realloc(im->cpu, n * sizeof(v[0]));
		if (!v)
			return NULL;
		memset(v + im->ncpu, 0, (n - im->ncpu) * sizeof(v[0]));
		im->cpu = v;
		im->ncpu = n;
	}
	im->cpu[cpu] = calloc(1, sizeof(*im->cpu[cpu]));
	return im->cpu[cpu];
}

/* The index's hash of (@cpu, @id). */
static uint32_t old_hash(unsigned int cpu, uint64_t id)
{
	return (uint32_t)tp_hash_fin(tp_hash_mix(id, cpu));
}

struct old_key {
	unsigned int cpu;
	uint64_t id;
};

static bool old_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct tp_interned *im = ctx;
	const struct old_key *k = key;

	return im->old[idx].cpu == k->cpu && im->old[idx].s.rec->id == k->id;
}

/*
 * Keep @sl's STACK of ring @cpu aside, @sl empty after: 0, or -ENOMEM
 * (the slot then keeps it, to be overwritten). Beyond the bound, or a
 * second STACK of the same id (the newer one is in a slot), it is freed.
 */
static int interned_keep_old(struct tp_interned *im, struct tp_interned_slot *sl,
			     unsigned int cpu)
{
	struct old_key k = { cpu, sl->s.rec->id };
	struct tp_index_slot *ix;
	int err;

	if (im->nr_old >= TP_INTERNED_RETIRED_MAX) {
		im->old_dropped++;
		return 0;
	}
	if (im->nr_old == im->cap_old) {
		size_t cap = im->cap_old ? 2 * im->cap_old : 64;
		struct tp_interned_old *v = realloc(im->old, cap * sizeof(*v));

		if (!v)
			return tp_err(-ENOMEM, NULL);
		im->old = v;
		im->cap_old = cap;
	}
	err = tp_index_reserve(&im->ix);
	if (err < 0)
		return err;
	ix = tp_index_probe(&im->ix, old_hash(cpu, k.id), old_eq, im, &k);
	if (ix->idx1) {
		/* An older copy of the same stack stands, kept as long as this one. */
		im->old[ix->idx1 - 1].drain = im->drains;
		return 0;
	}
	im->old[im->nr_old] = (struct tp_interned_old){ sl->s, cpu, im->drains };
	tp_index_set(&im->ix, ix, old_hash(cpu, k.id), (uint32_t)im->nr_old);
	im->nr_old++;
	sl->s = (struct tp_interned_stack){ NULL, NULL };
	sl->cap = 0;
	return 0;
}

int tp_interned_put(struct tp_interned *im, const struct taproot_rec_stack *st,
		    unsigned int cpu, struct tp_interned_stack **sp)
{
	size_t len = taproot_rec_stack_size(st);
	struct tp_interned_cpu *ic = interned_cpu(im, cpu, true);
	struct tp_interned_slot *sl;

	*sp = NULL;
	if (!ic)
		return cpu < TP_INTERNED_CPUS_MAX ? tp_err(-ENOMEM, NULL) : 0;
	sl = &ic->slot[st->id & (TAPROOT_STACK_SLOTS - 1)];
	if (im->keep_retired && sl->s.rec && sl->s.rec->id != st->id &&
	    interned_keep_old(im, sl, cpu) < 0)
		return -ENOMEM;
	tp_interned_resolve(im, &sl->s, NULL);
	if (sl->cap < len) {
		free(sl->s.rec);
		sl->cap = 0;
		sl->s.rec = malloc(len);
		if (!sl->s.rec)
			return tp_err(-ENOMEM, NULL);
		sl->cap = len;
	}
	memcpy(sl->s.rec, st, len);
	*sp = &sl->s;
	return 1;
}

void tp_interned_resolve(struct tp_interned *im, struct tp_interned_stack *s,
			 struct tp_resolved *r)
{
	tp_resolved_free(&im->pool, s->resolved);
	s->resolved = r;
}

struct tp_interned_stack *tp_interned_find(struct tp_interned *im, unsigned int cpu,
					   uint64_t id, uint32_t epoch, uint32_t pid)
{
	struct tp_interned_stack *s = NULL;
	const struct taproot_rec_stack *st;

	if (cpu < im->ncpu && im->cpu[cpu])
		s = &im->cpu[cpu]->slot[id & (TAPROOT_STACK_SLOTS - 1)].s;
	if ((!s || !s->rec || s->rec->id != id) && im->nr_old) {
		struct old_key k = { cpu, id };
		const struct tp_index_slot *ix =
			tp_index_probe(&im->ix, old_hash(cpu, id), old_eq,
				       im, &k);

		s = ix && ix->idx1 ? &im->old[ix->idx1 - 1].s : NULL;
	}
	st = s ? s->rec : NULL;
	if (!st || st->id != id || st->epoch != epoch)
		return NULL;
	/* User pcs are one process's addresses: never another's, whatever the hash. */
	if ((st->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) && st->pid != pid)
		return NULL;
	return s;
}

struct tp_interned_stack *tp_interned_get(struct tp_interned *im,
					  const struct taproot_rec_sample_ref *r,
					  unsigned int cpu)
{
	return tp_interned_find(im, cpu, r->stack_id, r->epoch, r->pid);
}

static void interned_old_free(struct tp_interned *im, struct tp_interned_old *o)
{
	tp_interned_resolve(im, &o->s, NULL);
	free(o->s.rec);
}

void tp_interned_drain_begin(struct tp_interned *im)
{
	im->drains++;
}

void tp_interned_retire(struct tp_interned *im)
{
	size_t kept = 0;

	tp_index_clear(&im->ix);
	for (size_t i = 0; i < im->nr_old; i++) {
		struct tp_interned_old *o = &im->old[i];
		struct old_key k = { o->cpu, o->s.rec->id };

		if (o->drain != im->drains) {
			interned_old_free(im, o);
			continue;
		}
		/* Room was reserved when it was kept: this cannot fail. */
		im->old[kept] = *o;
		tp_index_set(&im->ix, tp_index_probe(&im->ix, old_hash(o->cpu, k.id), old_eq,
						     im, &k),
			     old_hash(o->cpu, k.id), (uint32_t)kept);
		kept++;
	}
	im->nr_old = kept;
}

void tp_interned_clear(struct tp_interned *im)
{
	for (unsigned int cpu = 0; cpu < im->ncpu; cpu++) {
		if (!im->cpu[cpu])
			continue;
		for (unsigned int i = 0; i < TAPROOT_STACK_SLOTS; i++) {
			tp_interned_resolve(im, &im->cpu[cpu]->slot[i].s, NULL);
			free(im->cpu[cpu]->slot[i].s.rec);
		}
		free(im->cpu[cpu]);
	}
	free(im->cpu);
	im->cpu = NULL;
	im->ncpu = 0;
	for (size_t i = 0; i < im->nr_old; i++)
		interned_old_free(im, &im->old[i]);
	im->nr_old = 0;
	free(im->old);
	im->old = NULL;
	im->cap_old = 0;
	tp_index_free(&im->ix);
}
