// SPDX-License-Identifier: GPL-2.0
/*
 * The live top (pipeline.h, taproot_pipeline_live()): for each function
 * and group (the sample's service_name, else its process name), the
 * samples where it was the leaf (self) and those where it was anywhere on
 * the stack (total, once per sample however often it recurs), since the
 * last take. An open-addressed table of PL_LIVE_MAX entries in twice the
 * slots; samples of functions beyond its room are counted as "other".
 * Off by default: it costs a lookup per frame of every sample added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/internal.h"
#include "util/hash.h"
#include "util/util.h"

struct pl_live_slot {
	char *name, *group;		/* NULL name: free */
	uint64_t self, total;
	uint64_t seen;			/* the sample that last counted its total */
};

struct pl_live {
	struct pl_live_slot *slot;	/* PL_LIVE_MAX * 2 */
	size_t n;
	uint64_t samples, other, sample_seq;
	struct taproot_pipeline_live_fn *taken;	/* the last take's, owning its strings */
	size_t ntaken;
};

static void live_taken_free(struct pl_live *l)
{
	for (size_t i = 0; i < l->ntaken; i++) {
		free((char *)l->taken[i].name);
		free((char *)l->taken[i].group);
	}
	free(l->taken);
	l->taken = NULL;
	l->ntaken = 0;
}

static void live_free(struct pl_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < PL_LIVE_MAX * 2; i++) {
		free(l->slot[i].name);
		free(l->slot[i].group);
	}
	free(l->slot);
	live_taken_free(l);
	free(l);
}

int taproot_pipeline_live(struct taproot_pipeline *p, bool on)
{
	if (!on) {
		live_free(p->live);
		p->live = NULL;
		return 0;
	}
	if (p->live)
		return 0;
	p->live = calloc(1, sizeof(*p->live));
	if (p->live)
		p->live->slot = calloc(PL_LIVE_MAX * 2, sizeof(p->live->slot[0]));
	if (!p->live || !p->live->slot) {
		free(p->live);
		p->live = NULL;
		return tp_err(-ENOMEM, "live top: out of memory");
	}
	return 0;
}

/* The slot of (@name, @group), made if there is room; NULL when there is none. */
static struct pl_live_slot *live_slot(struct pl_live *l, const char *name, const char *group)
{
	size_t mask = PL_LIVE_MAX * 2 - 1, i;
	uint64_t h = tp_hash_fin(tp_hash_mix(tp_hash_bytes(name, strlen(name)),
					     tp_hash_bytes(group, strlen(group))));

	for (i = h & mask;; i = (i + 1) & mask) {
		struct pl_live_slot *s = &l->slot[i];

		if (s->name && !strcmp(s->name, name) && !strcmp(s->group, group))
			return s;
		if (s->name)
			continue;
		if (l->n >= PL_LIVE_MAX)
			return NULL;
		s->name = strdup(name);
		s->group = strdup(group);
		if (!s->name || !s->group) {
			free(s->name);
			free(s->group);
			s->name = s->group = NULL;
			return NULL;
		}
		l->n++;
		return s;
	}
}

/* What a frame is called in the top: its function, else its file. */
static const char *live_name(const struct taproot_profile_frame *f)
{
	if (f->function && f->function[0])
		return f->function;
	if (f->mapping_path && f->mapping_path[0])
		return f->mapping_path;
	return "[unknown]";
}

void tp_pl_live_count(struct taproot_pipeline *p, const struct taproot_profile_frame *frames,
		      size_t nf, const char *group, uint64_t n)
{
	struct pl_live *l = p->live;
	bool lost = false;

	if (!l || !nf)
		return;
	l->samples += n;
	l->sample_seq++;
	for (size_t i = 0; i < nf; i++) {
		struct pl_live_slot *s = live_slot(l, live_name(&frames[i]), group);

		if (!s) {
			lost = true;
			continue;
		}
		if (!i)
			s->self += n;
		if (s->seen != l->sample_seq) {
			s->seen = l->sample_seq;
			s->total += n;
		}
	}
	if (lost)
		l->other += n;
}

static int live_cmp(const void *a, const void *b)
{
	const struct taproot_pipeline_live_fn *x = a, *y = b;
	int c;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->group, y->group);
}

int taproot_pipeline_live_take(struct taproot_pipeline *p, struct taproot_pipeline_live_take *t)
{
	struct pl_live *l = p->live;
	size_t k = 0;

	memset(t, 0, sizeof(*t));
	if (!l)
		return tp_err(-EINVAL, "live top: not on");
	live_taken_free(l);
	l->taken = l->n ? malloc(l->n * sizeof(l->taken[0])) : NULL;
	if (l->n && !l->taken)
		return tp_err(-ENOMEM, "live top: out of memory");
	/* The strings move to the taken array: the table starts empty. */
	for (size_t i = 0; i < PL_LIVE_MAX * 2; i++) {
		struct pl_live_slot *s = &l->slot[i];

		if (!s->name)
			continue;
		l->taken[k++] = (struct taproot_pipeline_live_fn){
			.name = s->name, .group = s->group, .self = s->self, .total = s->total,
		};
		*s = (struct pl_live_slot){ 0 };
	}
	if (k)
		qsort(l->taken, k, sizeof(l->taken[0]), live_cmp);
	l->ntaken = k;
	t->fns = l->taken;
	t->n = k;
	t->samples = l->samples;
	t->other = l->other;
	l->n = 0;
	l->samples = l->other = 0;
	return 0;
}
