// SPDX-License-Identifier: GPL-2.0
/*
 * Self samples per leaf function (internal.h, taproot_pipeline_top()): an
 * open-addressed table of names, PL_TOP_MAX of them, later ones counted
 * as "[other]".
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/internal.h"
#include "util/hash.h"

void tp_pl_top_count(struct taproot_pipeline *p, const char *name, uint32_t n)
{
	size_t mask = PL_TOP_MAX * 2 - 1, i;
	uint64_t h = tp_hash_fin(tp_hash_bytes(name, strlen(name)));

	for (i = h & mask;; i = (i + 1) & mask) {
		struct pl_top *t = &p->top[i];

		if (t->name && !strcmp(t->name, name)) {
			t->samples += n;
			return;
		}
		if (!t->name) {
			if (p->ntop >= PL_TOP_MAX || !(t->name = strdup(name))) {
				p->top_other += n;
				return;
			}
			p->ntop++;
			t->samples = n;
			return;
		}
	}
}

static int pl_top_cmp(const void *a, const void *b)
{
	const struct taproot_pipeline_top *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->name, y->name);
}

size_t taproot_pipeline_top(const struct taproot_pipeline *p,
			    struct taproot_pipeline_top *top, size_t n)
{
	struct taproot_pipeline_top *all;
	size_t k = 0;

	if (!n)
		return 0;
	all = malloc((p->ntop + 1) * sizeof(*all));
	if (!all)
		return 0;
	for (size_t i = 0; i < PL_TOP_MAX * 2; i++)
		if (p->top[i].name)
			all[k++] = (struct taproot_pipeline_top){ p->top[i].name, p->top[i].samples };
	if (p->top_other)
		all[k++] = (struct taproot_pipeline_top){ "[other]", p->top_other };
	qsort(all, k, sizeof(*all), pl_top_cmp);
	if (k > n)
		k = n;
	memcpy(top, all, k * sizeof(*all));
	free(all);
	return k;
}

void tp_pl_top_clear(struct taproot_pipeline *p)
{
	for (size_t i = 0; i < PL_TOP_MAX * 2; i++) {
		free(p->top[i].name);
		p->top[i].name = NULL;
		p->top[i].samples = 0;
	}
	p->ntop = 0;
	p->top_other = 0;
}
