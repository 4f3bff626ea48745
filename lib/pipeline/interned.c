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
	struct taproot_rec_stack *rec;	/* NULL: none yet */
	size_t cap;			/* bytes allocated at rec */
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

int tp_interned_put(struct tp_interned *im, const struct taproot_rec_stack *st,
		    unsigned int cpu)
{
	size_t len = taproot_rec_stack_size(st);
	struct tp_interned_cpu *ic = interned_cpu(im, cpu, true);
	struct tp_interned_slot *sl;

	if (!ic)
		return cpu < TP_INTERNED_CPUS_MAX ? tp_err(-ENOMEM, NULL) : 0;
	sl = &ic->slot[st->id & (TAPROOT_STACK_SLOTS - 1)];
	if (sl->cap < len) {
		free(sl->rec);
		sl->cap = 0;
		sl->rec = malloc(len);
		if (!sl->rec)
			return tp_err(-ENOMEM, NULL);
		sl->cap = len;
	}
	memcpy(sl->rec, st, len);
	return 1;
}

const struct taproot_rec_stack *tp_interned_get(const struct tp_interned *im,
						const struct taproot_rec_sample_ref *r,
						unsigned int cpu)
{
	const struct taproot_rec_stack *st;

	if (cpu >= im->ncpu || !im->cpu[cpu])
		return NULL;
	st = im->cpu[cpu]->slot[r->stack_id & (TAPROOT_STACK_SLOTS - 1)].rec;
	if (!st || st->id != r->stack_id || st->epoch != r->epoch)
		return NULL;
	/* User pcs are one process's addresses: never another's, whatever the hash. */
	if ((st->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS) && st->pid != r->pid)
		return NULL;
	return st;
}

void tp_interned_clear(struct tp_interned *im)
{
	for (unsigned int cpu = 0; cpu < im->ncpu; cpu++) {
		if (!im->cpu[cpu])
			continue;
		for (unsigned int i = 0; i < TAPROOT_STACK_SLOTS; i++)
			free(im->cpu[cpu]->slot[i].rec);
		free(im->cpu[cpu]);
	}
	free(im->cpu);
	im->cpu = NULL;
	im->ncpu = 0;
}
