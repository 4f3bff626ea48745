// SPDX-License-Identifier: GPL-2.0
/*
 * A profile as the tree a flame graph draws, in JSON (profile.h,
 * taproot_flamegraph_json()): the samples folded from the root down, one
 * node per distinct path of frame names, its value the sum over the
 * samples that pass through it.
 *
 * The nodes are one array (index 0 the root) linked parent, first child,
 * next sibling; an index by (parent, name) finds a child in O(1) while
 * folding, so that a wide node (the root of a whole-system profile has a
 * child per process's outermost frame) costs no more than a narrow one.
 * The names are copied into a pool: "[FILE]" names only live through the
 * walk of the samples. The tree is written depth first without recursion:
 * stacks can be hundreds of frames deep.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/hash.h"
#include "util/util.h"

struct fg_node {
	int64_t value;
	uint32_t name;			/* offset in fg.names */
	uint32_t parent;
	uint32_t first, next;		/* first child, next sibling; 0: none */
	bool kernel;
};

struct fg {
	struct fg_node *nodes;
	size_t nr_nodes, alloc_nodes;
	char *names;
	size_t names_len, names_cap;
	struct tp_index ix;		/* nodes but the root, by (parent, name) */
	size_t vi;			/* the value summed */
};

struct fg_key {
	uint32_t parent;
	const char *name;
};

static bool fg_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg *g = ctx;
	const struct fg_key *k = key;

	return g->nodes[idx].parent == k->parent && !strcmp(g->names + g->nodes[idx].name, k->name);
}

/* The child of @parent named @name, made when missing; its index, or -ENOMEM. */
static int64_t fg_child(struct fg *g, uint32_t parent, const char *name, bool kernel)
{
	struct fg_key k = { parent, name };
	size_t len = strlen(name);
	uint32_t hash = (uint32_t)tp_hash_fin(tp_hash_mix(tp_hash_bytes(name, len), parent));
	struct tp_index_slot *s;
	struct fg_node *n;
	int64_t off;

	if (tp_index_reserve(&g->ix) < 0)
		return -ENOMEM;
	s = tp_index_probe(&g->ix, hash, fg_eq, g, &k);
	if (s->idx1)
		return s->idx1 - 1;
	if (g->nr_nodes >= UINT32_MAX ||
	    tp_grow((void **)&g->nodes, &g->alloc_nodes, g->nr_nodes + 1, sizeof(*n)) < 0)
		return -ENOMEM;
	off = tp_strpool_add(&g->names, &g->names_len, &g->names_cap, name, len);
	if (off < 0)
		return -ENOMEM;
	n = &g->nodes[g->nr_nodes];
	*n = (struct fg_node){ .name = (uint32_t)off, .parent = parent, .kernel = kernel,
			       .next = g->nodes[parent].first };
	g->nodes[parent].first = (uint32_t)g->nr_nodes;
	tp_index_set(&g->ix, s, hash, g->nr_nodes);
	return (int64_t)g->nr_nodes++;
}

/* Add one sample: its frames from the outermost (the root's child) to the leaf. */
static int fg_add(const int64_t *values, const struct taproot_profile_frame_view *frames,
		  size_t nr, void *arg)
{
	struct fg *g = arg;
	int64_t v = values[g->vi];
	uint32_t cur = 0;

	if (!v)
		return 0;
	g->nodes[0].value += v;
	for (size_t i = nr; i-- > 0;) {
		/* x86-64 and arm64 alike keep the kernel in the upper half. */
		int64_t c = fg_child(g, cur, frames[i].name, frames[i].address >> 63);

		if (c < 0)
			return -ENOMEM;
		cur = (uint32_t)c;
		g->nodes[cur].value += v;
	}
	return 0;
}

struct fg_sorted {
	const char *name;
	uint32_t idx;
};

static int fg_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fg_sorted *)a)->name, ((const struct fg_sorted *)b)->name);
}

/* Relink every node's children in the order of their names. */
static int fg_sort(struct fg *g)
{
	struct fg_sorted *s = NULL;
	size_t alloc = 0;

	for (size_t i = 0; i < g->nr_nodes; i++) {
		size_t n = 0;

		for (uint32_t c = g->nodes[i].first; c; c = g->nodes[c].next) {
			if (tp_grow((void **)&s, &alloc, n + 1, sizeof(*s)) < 0) {
				free(s);
				return -ENOMEM;
			}
			s[n++] = (struct fg_sorted){ g->names + g->nodes[c].name, c };
		}
		if (n < 2)
			continue;
		qsort(s, n, sizeof(*s), fg_cmp);
		g->nodes[i].first = s[0].idx;
		for (size_t j = 0; j < n; j++)
			g->nodes[s[j].idx].next = j + 1 < n ? s[j + 1].idx : 0;
	}
	free(s);
	return 0;
}

/*
 * Length of the valid UTF-8 sequence at @p (RFC 3629: shortest form, no
 * surrogates, at most U+10FFFF), or 0 when it is not one.
 */
static int fg_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		c >= 0xf0 && c <= 0xf4 ? 4 : 0;

	if (!n || p[1] < lo || p[1] > hi)
		return 0;
	/* p[i] is read only after p[i - 1] was a continuation byte, not NUL. */
	for (int i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/*
 * @s as a JSON string that an HTML <script> element can hold as it is:
 * '<', '>' and '&' as \u escapes (no "</script>" or "<!--" can end or
 * change the element), control characters too, and any byte that is not
 * part of valid UTF-8 as U+FFFD: valid JSON in valid UTF-8 whatever @s
 * holds.
 */
static void fg_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		int n = c < 0x80 ? 1 : fg_utf8_len(p);

		if (!n)
			fputs("\\ufffd", f);
		else if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&')
			fprintf(f, "\\u%04x", c);
		else
			fwrite(p, 1, (size_t)n, f);
		p += n ? n : 1;
	}
	fputc('"', f);
}

/* Node @i's name and value, then its children's list open, or the node closed. */
static void fg_open(const struct fg *g, FILE *f, uint32_t i)
{
	const struct fg_node *n = &g->nodes[i];

	fputs("{\"n\":", f);
	fg_str(f, g->names + n->name);
	fprintf(f, ",\"v\":%" PRId64, n->value);
	if (n->kernel)
		fputs(",\"l\":\"kernel\"", f);
	fputs(n->first ? ",\"c\":[" : "}", f);
}

static void fg_write(const struct fg *g, FILE *f)
{
	uint32_t i = 0;

	fg_open(g, f, 0);
	for (;;) {
		if (g->nodes[i].first) {
			i = g->nodes[i].first;
			fg_open(g, f, i);
			continue;
		}
		/* Close every node this one was the last child of. */
		while (i && !g->nodes[i].next) {
			i = g->nodes[i].parent;
			fputs("]}", f);
		}
		if (!i)
			break;
		i = g->nodes[i].next;
		fputc(',', f);
		fg_open(g, f, i);
	}
	fputc('\n', f);
}

int taproot_flamegraph_json(const struct taproot_profile *p, const char *type, FILE *f,
			    int64_t *total)
{
	struct fg g = { 0 };
	int vi = taproot_profile_sample_type_index(p, type);
	int64_t root;
	int err;

	if (vi < 0)
		return tp_err(-ENOENT, "flame graph: the profile has no sample type '%s'", type);
	g.vi = (size_t)vi;
	if (tp_grow((void **)&g.nodes, &g.alloc_nodes, 1, sizeof(*g.nodes)) < 0 ||
	    (root = tp_strpool_add(&g.names, &g.names_len, &g.names_cap, "all", 3)) < 0) {
		err = -ENOMEM;
		goto out;
	}
	g.nodes[0] = (struct fg_node){ .name = (uint32_t)root };
	g.nr_nodes = 1;
	err = taproot_profile_foreach_sample(p, fg_add, &g);
	if (!err)
		err = fg_sort(&g);
	if (err) {
		err = tp_err(-ENOMEM, "flame graph: out of memory for %zu nodes", g.nr_nodes);
		goto out;
	}
	fg_write(&g, f);
	if (ferror(f))
		err = tp_err(-EIO, "flame graph: writing failed");
	*total = g.nodes[0].value;
out:
	free(g.nodes);
	free(g.names);
	tp_index_free(&g.ix);
	return err;
}
