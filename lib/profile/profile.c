// SPDX-License-Identifier: GPL-2.0
/*
 * The profile builder: an in-memory aggregate of samples, as pprof
 * models it (lib/profile/profile-private.h has the tables).
 *
 * Strings, mappings, functions, locations and (stack, labels) entries are
 * each interned in an array with an open-addressing hash table over it;
 * an entry's array index + 1 is its pprof ID. Adding a sample first looks
 * everything up without creating anything (a miss anywhere means the
 * entry is new); only a new entry interns what it needs. So a sample seen
 * before costs hashing and lookups over its frames and labels and no
 * allocation, and a full stack table (max_stacks) bounds the memory: a new
 * entry then goes to one "[truncated: stack table full]" sample and
 * nothing of it is kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile-private.h"
#include "util/hash.h"
#include "util/util.h"

#define KERNEL_MAPPING	"[kernel.kallsyms]"

/* ------------------------------------------------ arrays, hash tables */

/* tp_grow() for the tables, whose indexes are 32 bits (pprof IDs). */
static int vec_grow(void **v, size_t *alloc, size_t need, size_t size)
{
	if (need > UINT32_MAX)
		return tp_err(-ENOMEM, "profile: table of %zu entries is too large", need);
	return tp_grow(v, alloc, need, size);
}

#define VEC_RESERVE(p, name, n)						\
	vec_grow((void **)&(p)->name, &(p)->alloc_##name,		\
		 (p)->nr_##name + (n), sizeof(*(p)->name))

/*
 * The interning functions below look up an entry and, when @create,
 * add it if missing: 0 with *@id set, 1 when it is missing and not
 * @create, or -ENOMEM.
 */

/* ------------------------------------------------------------- strings */

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct taproot_profile *p = ctx;
	const struct str_key *k = key;
	const char *t = tp_profile_str(p, idx);

	return strncmp(t, k->s, k->len) == 0 && t[k->len] == '\0';
}

static int str_push(struct taproot_profile *p, const char *s, size_t len)
{
	if (VEC_RESERVE(p, chars, len + 1) || VEC_RESERVE(p, strs, 1))
		return -ENOMEM;
	if (p->nr_chars + len + 1 > UINT32_MAX)
		return tp_err(-ENOMEM, "profile: string table too large");
	memcpy(p->chars + p->nr_chars, s, len);
	p->chars[p->nr_chars + len] = '\0';
	p->strs[p->nr_strs++] = (uint32_t)p->nr_chars;
	p->nr_chars += len + 1;
	return 0;
}

static int str_lookup(struct taproot_profile *p, const char *s, bool create,
		      uint32_t *id);

static struct tp_str_memo *memo_slot(struct taproot_profile *p, const char *s)
{
	uintptr_t a = (uintptr_t)s;

	return &p->memo[(a ^ (a >> 5) ^ (a >> 10)) % (sizeof(p->memo) / sizeof(p->memo[0]))];
}

/* NULL and "" are string 0. */
static int str_id(struct taproot_profile *p, const char *s, bool create,
		  uint32_t *id)
{
	struct tp_str_memo *memo;
	int err;

	if (!s || !*s) {
		*id = 0;
		return 0;
	}
	memo = memo_slot(p, s);
	if (memo->s == s) {
		*id = memo->id;
		return 0;
	}
	err = str_lookup(p, s, create, id);
	if (!err) {
		memo->s = s;
		memo->id = *id;
	}
	return err;
}

static int str_lookup(struct taproot_profile *p, const char *s, bool create,
		      uint32_t *id)
{
	struct str_key k;
	struct tp_index_slot *slot;
	uint32_t hash;
	int err;

	k.s = s;
	k.len = strlen(s);
	hash = (uint32_t)tp_hash_fin(tp_hash_bytes(s, k.len));
	if (create && (err = tp_index_reserve(&p->str_ht)))
		return err;
	slot = tp_index_probe(&p->str_ht, hash, str_eq, p, &k);
	if (slot && slot->idx1) {
		*id = slot->idx1 - 1;
		return 0;
	}
	if (!create)
		return 1;
	if ((err = str_push(p, s, k.len)))
		return err;
	*id = (uint32_t)(p->nr_strs - 1);
	tp_index_set(&p->str_ht, slot, hash, *id);
	return 0;
}

/* ------------------------------------------------------------ mappings */

static bool map_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct taproot_profile *p = ctx;
	const struct tp_mapping *a = &p->maps[idx], *b = key;

	return a->start == b->start && a->limit == b->limit &&
	       a->offset == b->offset && a->file == b->file &&
	       a->build_id == b->build_id;
}

/* The mapping ID of frame @f, 0 for none. */
static int map_id(struct taproot_profile *p, const struct taproot_profile_frame *f,
		  bool create, uint32_t *id)
{
	struct tp_mapping k = {
		.start = f->mapping_start,
		.limit = f->mapping_limit,
		.offset = f->mapping_offset,
	};
	const char *path = f->mapping_path;
	char bid[2 * TAPROOT_PROFILE_MAX_BUILD_ID + 1] = "";
	struct tp_index_slot *slot;
	uint32_t hash;
	int err;

	if (!path && f->is_kernel)
		path = KERNEL_MAPPING;
	if (!path) {
		*id = 0;
		return 0;
	}
	if (f->build_id_len) {
		static const char hex[] = "0123456789abcdef";

		for (size_t i = 0; i < f->build_id_len; i++) {
			bid[2 * i] = hex[f->build_id[i] >> 4];
			bid[2 * i + 1] = hex[f->build_id[i] & 15];
		}
		bid[2 * f->build_id_len] = '\0';
	}
	/*
	 * bid is a stack buffer, at the same address for every frame: it must
	 * not go through str_id()'s per-address memo.
	 */
	if ((err = str_id(p, path, create, &k.file)))
		return err;
	if (!bid[0])
		k.build_id = 0;
	else if ((err = str_lookup(p, bid, create, &k.build_id)))
		return err;
	hash = (uint32_t)tp_hash_fin(tp_hash_mix(tp_hash_mix(tp_hash_mix(tp_hash_mix(tp_hash_mix(0, k.start), k.limit), k.offset),
			       k.file), k.build_id));
	if (create && (err = tp_index_reserve(&p->map_ht)))
		return err;
	slot = tp_index_probe(&p->map_ht, hash, map_eq, p, &k);
	if (slot && slot->idx1) {
		*id = slot->idx1;
		return 0;
	}
	if (!create)
		return 1;
	if (VEC_RESERVE(p, maps, 1))
		return -ENOMEM;
	p->maps[p->nr_maps] = k;
	tp_index_set(&p->map_ht, slot, hash, p->nr_maps);
	*id = (uint32_t)++p->nr_maps;
	return 0;
}

/* ----------------------------------------------------------- functions */

static bool func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct taproot_profile *p = ctx;
	const struct tp_function *a = &p->funcs[idx], *b = key;

	return a->name == b->name && a->system_name == b->system_name &&
	       a->file == b->file;
}

static int func_id(struct taproot_profile *p, const struct taproot_profile_frame *f,
		   bool create, uint32_t *id)
{
	struct tp_function k;
	struct tp_index_slot *slot;
	uint32_t hash;
	int err;

	if ((err = str_id(p, f->function, create, &k.name)) ||
	    (err = str_id(p, f->system_name ? f->system_name : f->function,
			  create, &k.system_name)) ||
	    (err = str_id(p, f->file, create, &k.file)))
		return err;
	hash = (uint32_t)tp_hash_fin(tp_hash_mix(tp_hash_mix(tp_hash_mix(1, k.name), k.system_name), k.file));
	if (create && (err = tp_index_reserve(&p->func_ht)))
		return err;
	slot = tp_index_probe(&p->func_ht, hash, func_eq, p, &k);
	if (slot && slot->idx1) {
		*id = slot->idx1;
		return 0;
	}
	if (!create)
		return 1;
	if (VEC_RESERVE(p, funcs, 1))
		return -ENOMEM;
	p->funcs[p->nr_funcs] = k;
	tp_index_set(&p->func_ht, slot, hash, p->nr_funcs);
	*id = (uint32_t)++p->nr_funcs;
	return 0;
}

/* ----------------------------------------------------------- locations */

struct loc_key {
	uint32_t mapping;
	uint64_t address;
	const struct tp_line *lines;
	uint32_t nlines;
};

static bool loc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct taproot_profile *p = ctx;
	const struct tp_location *a = &p->locations[idx];
	const struct loc_key *k = key;
	const struct tp_line *l = p->lines + a->line_off;

	if (a->mapping != k->mapping || a->address != k->address ||
	    a->nlines != k->nlines)
		return false;
	for (uint32_t i = 0; i < k->nlines; i++)
		if (l[i].function != k->lines[i].function ||
		    l[i].line != k->lines[i].line)
			return false;
	return true;
}

static void map_account(struct taproot_profile *p, const struct loc_key *k)
{
	struct tp_mapping *m;

	if (!k->mapping)
		return;
	m = &p->maps[k->mapping - 1];
	m->nlocs++;
	m->nlocs_fn += k->nlines > 0;
	m->nlines += k->nlines;
	for (uint32_t i = 0; i < k->nlines; i++) {
		m->nlines_file += p->funcs[k->lines[i].function - 1].file != 0;
		m->nlines_lineno += k->lines[i].line > 0;
	}
	if (k->nlines > 1)
		m->inline_frames = true;
}

static uint32_t loc_hash(const struct loc_key *k)
{
	uint64_t h = tp_hash_mix(tp_hash_mix(2, k->mapping), k->address);

	for (uint32_t i = 0; i < k->nlines; i++)
		h = tp_hash_mix(tp_hash_mix(h, k->lines[i].function), (uint64_t)k->lines[i].line);
	return (uint32_t)tp_hash_fin(h);
}

/*
 * Index every location again under what it holds now: after
 * taproot_profile_name_location() gave some of them lines. Their slots
 * were under their old keys, which no location holds any longer.
 */
static int loc_reindex(struct taproot_profile *p)
{
	int err;

	tp_index_clear(&p->loc_ht);
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct tp_location *l = &p->locations[i];
		struct loc_key k = { l->mapping, l->address, p->lines + l->line_off, l->nlines };
		uint32_t hash = loc_hash(&k);
		struct tp_index_slot *slot;

		if ((err = tp_index_reserve(&p->loc_ht)))
			return err;
		/* A location named as another already was: the first is found. */
		slot = tp_index_probe(&p->loc_ht, hash, loc_eq, p, &k);
		if (!slot->idx1)
			tp_index_set(&p->loc_ht, slot, hash, i);
	}
	p->loc_ht_stale = false;
	return 0;
}

static int loc_id(struct taproot_profile *p, const struct loc_key *k,
		  bool create, uint32_t *id)
{
	struct tp_location *l;
	struct tp_index_slot *slot;
	uint32_t hash = loc_hash(k);
	int err;

	if (p->loc_ht_stale && (err = loc_reindex(p)))
		return err;
	if (create && (err = tp_index_reserve(&p->loc_ht)))
		return err;
	slot = tp_index_probe(&p->loc_ht, hash, loc_eq, p, k);
	if (slot && slot->idx1) {
		*id = slot->idx1;
		return 0;
	}
	if (!create)
		return 1;
	if (VEC_RESERVE(p, locations, 1) || VEC_RESERVE(p, lines, k->nlines))
		return -ENOMEM;
	l = &p->locations[p->nr_locations];
	l->address = k->address;
	l->mapping = k->mapping;
	l->line_off = (uint32_t)p->nr_lines;
	l->nlines = k->nlines;
	memcpy(p->lines + p->nr_lines, k->lines, k->nlines * sizeof(*k->lines));
	p->nr_lines += k->nlines;
	map_account(p, k);
	tp_index_set(&p->loc_ht, slot, hash, p->nr_locations);
	*id = (uint32_t)++p->nr_locations;
	return 0;
}

/* Take location @l's lines and itself out of its mapping's counts. */
static void map_unaccount(struct taproot_profile *p, const struct tp_location *l)
{
	struct tp_mapping *m;
	const struct tp_line *ln = p->lines + l->line_off;

	if (!l->mapping)
		return;
	m = &p->maps[l->mapping - 1];
	m->nlocs--;
	m->nlocs_fn -= l->nlines > 0;
	m->nlines -= l->nlines;
	for (uint32_t i = 0; i < l->nlines; i++) {
		m->nlines_file -= p->funcs[ln[i].function - 1].file != 0;
		m->nlines_lineno -= ln[i].line > 0;
	}
}

int taproot_profile_name_location(struct taproot_profile *p,
				  const struct taproot_profile_frame *unnamed,
				  const struct taproot_profile_frame *named, size_t nr)
{
	struct loc_key old = { .address = unnamed->address }, k = { 0 };
	struct tp_index_slot *slot;
	struct tp_location *l;
	struct tp_line *ln;
	int err;

	if (!nr || named[nr - 1].inlined || unnamed->function)
		return tp_err(-EINVAL, "profile: a location named needs an unnamed frame "
			      "and a physical one");
	/* Not there: no mapping of that name, or no location without lines. */
	if ((err = map_id(p, unnamed, false, &old.mapping)))
		return err < 0 ? err : 0;
	/*
	 * The index may be stale from names given earlier in this batch: it
	 * still finds a location unnamed so far, whose slot is under the
	 * key it still has.
	 */
	slot = tp_index_probe(&p->loc_ht, loc_hash(&old), loc_eq, p, &old);
	if (!slot || !slot->idx1)
		return 0;
	if ((err = map_id(p, &named[nr - 1], true, &k.mapping)) ||
	    VEC_RESERVE(p, lines, nr))
		return err ? err : -ENOMEM;
	k.address = named[nr - 1].address;
	k.lines = ln = p->lines + p->nr_lines;
	for (size_t i = 0; i < nr; i++) {
		if (!named[i].function || !*named[i].function)
			continue;
		if ((err = func_id(p, &named[i], true, &ln[k.nlines].function)))
			return err;
		ln[k.nlines++].line = named[i].line;
	}
	l = &p->locations[slot->idx1 - 1];
	map_unaccount(p, l);
	l->mapping = k.mapping;
	l->address = k.address;
	l->line_off = (uint32_t)p->nr_lines;
	l->nlines = k.nlines;
	p->nr_lines += k.nlines;
	map_account(p, &k);
	p->loc_ht_stale = true;
	return 1;
}

/* ------------------------------------------------------------- samples */

struct sample_key {
	const uint32_t *locs;
	uint32_t nlocs;
	const struct tp_label *labels;
	uint32_t nlabels;
};

static bool label_eq(const struct tp_label *a, const struct tp_label *b)
{
	return a->key == b->key && a->str == b->str && a->num == b->num &&
	       a->unit == b->unit;
}

static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct taproot_profile *p = ctx;
	const struct tp_sample *s = &p->samples[idx];
	const struct sample_key *k = key;

	if (s->nlocs != k->nlocs || s->nlabels != k->nlabels ||
	    memcmp(p->locs + s->loc_off, k->locs, k->nlocs * sizeof(*k->locs)))
		return false;
	for (uint32_t i = 0; i < k->nlabels; i++)
		if (!label_eq(&p->labels[s->label_off + i], &k->labels[i]))
			return false;
	return true;
}

static uint32_t sample_hash(const struct sample_key *k)
{
	uint64_t h = tp_hash_mix(3, k->nlocs);

	for (uint32_t i = 0; i < k->nlocs; i++)
		h = tp_hash_mix(h, k->locs[i]);
	for (uint32_t i = 0; i < k->nlabels; i++) {
		const struct tp_label *l = &k->labels[i];

		h = tp_hash_mix(tp_hash_mix(tp_hash_mix(tp_hash_mix(h, l->key), l->str), (uint64_t)l->num),
			 l->unit);
	}
	return (uint32_t)tp_hash_fin(h);
}

static struct tp_loc_memo *loc_memo_slot(struct taproot_profile *p, const void *key)
{
	uint64_t a = (uintptr_t)key;

	return &p->loc_memo[(uint32_t)tp_hash_fin(a * 0x9e3779b97f4a7c15ULL) % TP_LOC_MEMO];
}

void taproot_profile_forget_keys(struct taproot_profile *p)
{
	memset(p->loc_memo, 0, TP_LOC_MEMO * sizeof(*p->loc_memo));
}

/*
 * Resolve @frames and @labels into the scratch arrays (location IDs,
 * label string indexes), creating what is missing when @create: 0, 1 on
 * the first thing missing when not @create, or -ENOMEM. @k is filled.
 */
static int resolve(struct taproot_profile *p, const struct taproot_profile_frame *frames,
		   size_t nr, const struct taproot_profile_label *labels, size_t nlabels,
		   bool create, struct sample_key *k)
{
	uint32_t nlocs = 0, nl = 0;
	int err;

	for (size_t i = 0; i < nr;) {
		const struct taproot_profile_frame *phys;
		struct loc_key lk = { .lines = p->scratch_lines };
		struct tp_line *ln = p->scratch_lines;
		struct tp_loc_memo *memo = NULL;
		size_t j;

		for (j = i; frames[j].inlined; j++)
			;
		phys = &frames[j];
		if (phys->key) {
			memo = loc_memo_slot(p, phys->key);
			if (memo->key == phys->key) {
				p->scratch_locs[nlocs++] = memo->id;
				i = j + 1;
				continue;
			}
		}
		if ((err = map_id(p, phys, create, &lk.mapping)))
			return err;
		lk.address = phys->address;
		for (; i <= j; i++) {
			if (!frames[i].function || !*frames[i].function)
				continue;
			if ((err = func_id(p, &frames[i], create,
					   &ln[lk.nlines].function)))
				return err;
			ln[lk.nlines++].line = frames[i].line;
		}
		if ((err = loc_id(p, &lk, create, &p->scratch_locs[nlocs])))
			return err;
		if (memo) {
			memo->key = phys->key;
			memo->id = p->scratch_locs[nlocs];
		}
		nlocs++;
	}
	for (size_t i = 0; i < nlabels; i++) {
		const struct taproot_profile_label *l = &labels[i];
		struct tp_label *t = &p->scratch_labels[nl];

		/* pprof cannot tell str "" (index 0) from a number: drop it. */
		if (l->str && !*l->str)
			continue;
		nl++;
		t->num = l->str ? 0 : l->num;
		if ((err = str_id(p, l->key, create, &t->key)) ||
		    (err = str_id(p, l->str, create, &t->str)) ||
		    (err = str_id(p, l->str ? NULL : l->unit, create, &t->unit)))
			return err;
	}
	k->locs = p->scratch_locs;
	k->nlocs = nlocs;
	k->labels = p->scratch_labels;
	k->nlabels = nl;
	return 0;
}

static int check_sample(const struct taproot_profile_frame *frames, size_t nr,
			const struct taproot_profile_label *labels, size_t nlabels,
			const int64_t *values)
{
	if ((nr && !frames) || (nlabels && !labels) || !values)
		return tp_err(-EINVAL, "profile: NULL frames, labels or values");
	if (nr > UINT32_MAX / 2 || nlabels > UINT32_MAX / 2)
		return tp_err(-EINVAL, "profile: sample too large");
	for (size_t i = 0; i < nr; i++) {
		const struct taproot_profile_frame *f = &frames[i];
		bool chain = f->inlined || (i && frames[i - 1].inlined);

		if (f->inlined && i == nr - 1)
			return tp_err(-EINVAL, "profile: the last frame is inlined into nothing");
		if (chain && (!f->function || !*f->function))
			return tp_err(-EINVAL, "profile: frame %zu of an inline chain has no function", i);
		if (f->build_id_len > TAPROOT_PROFILE_MAX_BUILD_ID ||
		    (f->build_id_len && !f->build_id))
			return tp_err(-EINVAL, "profile: frame %zu: build ID of %zu bytes",
				      i, f->build_id_len);
	}
	for (size_t i = 0; i < nlabels; i++)
		if (!labels[i].key || !*labels[i].key)
			return tp_err(-EINVAL, "profile: label %zu has no key", i);
	return 0;
}

static void add_values(int64_t *dst, const int64_t *values, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = (int64_t)((uint64_t)dst[i] + (uint64_t)values[i]);
}

static int fold(struct taproot_profile *p, const int64_t *values)
{
	if (!p->trunc_loc) {
		const struct taproot_profile_frame f = { .function = TP_TRUNCATED_FRAME };
		struct loc_key lk = { .lines = p->scratch_lines, .nlines = 1 };
		int err;

		p->scratch_lines[0].line = 0;
		if ((err = func_id(p, &f, true, &p->scratch_lines[0].function)) ||
		    (err = loc_id(p, &lk, true, &p->trunc_loc)))
			return err;
	}
	add_values(p->trunc_values, values, p->nvalues);
	p->folded++;
	p->adds++;
	return 0;
}

int taproot_profile_add(struct taproot_profile *p,
			const struct taproot_profile_frame *frames, size_t nr,
			const struct taproot_profile_label *labels, size_t nlabels,
			const int64_t *values)
{
	struct sample_key k;
	struct tp_index_slot *slot;
	struct tp_sample *s;
	uint32_t hash;
	int err;

	if ((err = check_sample(frames, nr, labels, nlabels, values)))
		return err;
	memset(p->memo, 0, sizeof(p->memo));
	/* Scratch: one location and one line per frame at most. */
	if (p->alloc_scratch_locs < nr || p->alloc_scratch_lines < nr + 1 ||
	    p->alloc_scratch_labels < nlabels) {
		if (vec_grow((void **)&p->scratch_locs, &p->alloc_scratch_locs,
			     nr, sizeof(uint32_t)) ||
		    vec_grow((void **)&p->scratch_lines, &p->alloc_scratch_lines,
			     nr + 1, sizeof(struct tp_line)) ||
		    vec_grow((void **)&p->scratch_labels, &p->alloc_scratch_labels,
			     nlabels, sizeof(struct tp_label)))
			return -ENOMEM;
	}

	err = resolve(p, frames, nr, labels, nlabels, false, &k);
	if (err == 0) {
		hash = sample_hash(&k);
		slot = tp_index_probe(&p->sample_ht, hash, sample_eq, p, &k);
		if (slot && slot->idx1) {
			add_values(p->values + (size_t)(slot->idx1 - 1) * p->nvalues,
				   values, p->nvalues);
			p->adds++;
			return 0;
		}
	}
	if (p->nr_samples >= p->max_stacks)
		return fold(p, values);
	if (err && (err = resolve(p, frames, nr, labels, nlabels, true, &k)))
		return err;

	hash = sample_hash(&k);
	if ((err = tp_index_reserve(&p->sample_ht)) ||
	    VEC_RESERVE(p, samples, 1) || VEC_RESERVE(p, locs, k.nlocs) ||
	    VEC_RESERVE(p, labels, k.nlabels) ||
	    VEC_RESERVE(p, values, p->nvalues))
		return -ENOMEM;
	slot = tp_index_probe(&p->sample_ht, hash, sample_eq, p, &k);
	s = &p->samples[p->nr_samples];
	s->loc_off = (uint32_t)p->nr_locs;
	s->nlocs = k.nlocs;
	s->label_off = (uint32_t)p->nr_labels;
	s->nlabels = k.nlabels;
	memcpy(p->locs + p->nr_locs, k.locs, k.nlocs * sizeof(*k.locs));
	p->nr_locs += k.nlocs;
	memcpy(p->labels + p->nr_labels, k.labels, k.nlabels * sizeof(*k.labels));
	p->nr_labels += k.nlabels;
	memcpy(p->values + p->nr_values, values, p->nvalues * sizeof(*values));
	p->nr_values += p->nvalues;
	tp_index_set(&p->sample_ht, slot, hash, p->nr_samples);
	p->nr_samples++;
	p->adds++;
	return 0;
}

/* ------------------------------------------------------ the profile */

void taproot_profile_desc_cpu(struct taproot_profile_desc *desc, uint32_t hz)
{
	static const struct taproot_profile_value_type cpu_types[] = {
		{ "samples", "count" },
		{ "cpu", "nanoseconds" },
	};

	memset(desc, 0, sizeof(*desc));
	desc->sample_types = cpu_types;
	desc->nr_sample_types = 2;
	desc->period_type = (struct taproot_profile_value_type){ "cpu", "nanoseconds" };
	desc->period = hz ? 1000000000 / (int64_t)hz : 0;
	desc->default_sample_type = "cpu";
}

/* The off-CPU profiles: time first (the default), then the intervals. */
static void desc_interval(struct taproot_profile_desc *desc, const char *what)
{
	static const struct taproot_profile_value_type off_types[] = {
		{ "off_cpu", "nanoseconds" },
		{ "switches", "count" },
	};
	static const struct taproot_profile_value_type rq_types[] = {
		{ "runqueue", "nanoseconds" },
		{ "switches", "count" },
	};
	bool rq = !strcmp(what, "runqueue");

	memset(desc, 0, sizeof(*desc));
	desc->sample_types = rq ? rq_types : off_types;
	desc->nr_sample_types = 2;
	desc->default_sample_type = rq ? "runqueue" : "off_cpu";
}

void taproot_profile_desc_offcpu(struct taproot_profile_desc *desc)
{
	desc_interval(desc, "off_cpu");
}

void taproot_profile_desc_offwake(struct taproot_profile_desc *desc)
{
	desc_interval(desc, "off_cpu");
}

void taproot_profile_desc_schedlat(struct taproot_profile_desc *desc)
{
	desc_interval(desc, "runqueue");
}

static int check_desc(const struct taproot_profile_desc *d)
{
	bool dflt = !d->default_sample_type;

	if (!d->nr_sample_types || d->nr_sample_types > TAPROOT_PROFILE_MAX_VALUES ||
	    !d->sample_types)
		return tp_err(-EINVAL, "profile: %zu sample types, need 1 to %d",
			      d->nr_sample_types, TAPROOT_PROFILE_MAX_VALUES);
	for (size_t i = 0; i < d->nr_sample_types; i++) {
		const struct taproot_profile_value_type *t = &d->sample_types[i];

		if (!t->type || !*t->type || !t->unit || !*t->unit)
			return tp_err(-EINVAL, "profile: sample type %zu lacks a type or unit", i);
		if (d->default_sample_type &&
		    !strcmp(d->default_sample_type, t->type))
			dflt = true;
	}
	if (!dflt)
		return tp_err(-EINVAL, "profile: default sample type %s is not a sample type",
			      d->default_sample_type);
	if (!d->period_type.type != !d->period_type.unit)
		return tp_err(-EINVAL, "profile: period type needs both a type and a unit");
	if (d->nr_comments && !d->comments)
		return tp_err(-EINVAL, "profile: NULL comments");
	return 0;
}

int taproot_profile_new(const struct taproot_profile_desc *desc,
			struct taproot_profile **pp)
{
	struct taproot_profile *p;
	int err;

	*pp = NULL;
	if ((err = check_desc(desc)))
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return tp_err(-ENOMEM, "profile: out of memory");
	p->nvalues = desc->nr_sample_types;
	p->period = desc->period;
	p->time_nanos = desc->time_nanos;
	p->duration_nanos = desc->duration_nanos;
	p->max_stacks = desc->max_stacks ? desc->max_stacks : TAPROOT_PROFILE_MAX_STACKS;
	if (desc->nr_comments &&
	    !(p->comments = calloc(desc->nr_comments, sizeof(*p->comments)))) {
		err = tp_err(-ENOMEM, "profile: out of memory");
		goto fail;
	}
	p->nr_comments = desc->nr_comments;
	p->loc_memo = calloc(TP_LOC_MEMO, sizeof(*p->loc_memo));
	if (!p->loc_memo) {
		err = tp_err(-ENOMEM, "profile: out of memory");
		goto fail;
	}
	/* Never NULL, so that copying or comparing 0 entries is defined. */
	if (VEC_RESERVE(p, maps, 1) || VEC_RESERVE(p, funcs, 1) ||
	    VEC_RESERVE(p, locations, 1) || VEC_RESERVE(p, lines, 1) ||
	    VEC_RESERVE(p, samples, 1) || VEC_RESERVE(p, locs, 1) ||
	    VEC_RESERVE(p, labels, 1) || VEC_RESERVE(p, values, p->nvalues) ||
	    VEC_RESERVE(p, scratch_locs, 1) || VEC_RESERVE(p, scratch_lines, 1) ||
	    VEC_RESERVE(p, scratch_labels, 1)) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = str_push(p, "", 0)))
		goto fail;
	for (size_t i = 0; i < p->nvalues; i++)
		if ((err = str_id(p, desc->sample_types[i].type, true, &p->sample_type[i][0])) ||
		    (err = str_id(p, desc->sample_types[i].unit, true, &p->sample_type[i][1])))
			goto fail;
	if ((err = str_id(p, desc->period_type.type, true, &p->period_type[0])) ||
	    (err = str_id(p, desc->period_type.unit, true, &p->period_type[1])) ||
	    (err = str_id(p, desc->default_sample_type, true, &p->default_sample_type)))
		goto fail;
	for (size_t i = 0; i < p->nr_comments; i++)
		if ((err = str_id(p, desc->comments[i], true, &p->comments[i])))
			goto fail;
	p->base_strings = p->nr_strs;
	p->base_chars = p->nr_chars;
	*pp = p;
	return 0;
fail:
	taproot_profile_free(p);
	return err;
}

void taproot_profile_free(struct taproot_profile *p)
{
	if (!p)
		return;
	free(p->comments);
	free(p->chars);
	free(p->strs);
	free(p->str_ht.slots);
	free(p->maps);
	free(p->map_ht.slots);
	free(p->funcs);
	free(p->func_ht.slots);
	free(p->locations);
	free(p->lines);
	free(p->loc_ht.slots);
	free(p->samples);
	free(p->locs);
	free(p->labels);
	free(p->values);
	free(p->sample_ht.slots);
	free(p->scratch_locs);
	free(p->scratch_lines);
	free(p->scratch_labels);
	free(p->loc_memo);
	free(p);
}

void taproot_profile_set_time(struct taproot_profile *p, int64_t time_nanos,
			      int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

void taproot_profile_reset(struct taproot_profile *p, int64_t time_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = 0;
	p->adds = p->folded = 0;
	p->nr_strs = p->base_strings;
	p->nr_chars = p->base_chars;
	p->nr_maps = p->nr_funcs = p->nr_locations = p->nr_lines = 0;
	p->nr_samples = p->nr_locs = p->nr_labels = p->nr_values = 0;
	p->trunc_loc = 0;
	memset(p->trunc_values, 0, sizeof(p->trunc_values));
	taproot_profile_forget_keys(p);
	tp_index_clear(&p->map_ht);
	tp_index_clear(&p->func_ht);
	tp_index_clear(&p->loc_ht);
	p->loc_ht_stale = false;
	tp_index_clear(&p->sample_ht);
	/* The desc's strings stay; the table has room for them already. */
	tp_index_clear(&p->str_ht);
	for (size_t i = 1; i < p->base_strings; i++) {
		const char *s = tp_profile_str(p, (uint32_t)i);
		struct str_key k = { s, strlen(s) };
		uint32_t hash = (uint32_t)tp_hash_fin(tp_hash_bytes(s, k.len));

		tp_index_set(&p->str_ht, tp_index_probe(&p->str_ht, hash, str_eq, p, &k),
		       hash, i);
	}
}

uint32_t tp_profile_str_find(const struct taproot_profile *p, const char *s)
{
	uint32_t id;

	/* Without create, str_lookup() only reads. */
	if (str_lookup((struct taproot_profile *)p, s, false, &id))
		return 0;
	return id;
}

long taproot_profile_label_values(const struct taproot_profile *p, const char *key,
				  const char **values, size_t max)
{
	uint32_t k = tp_profile_str_find(p, key);
	bool *seen;
	long n = 0;

	if (!k)
		return 0;
	/* By string index: a pass over the samples, whatever the count of values. */
	seen = calloc(p->nr_strs, sizeof(*seen));
	if (!seen)
		return tp_err(-ENOMEM, "profile: out of memory");
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];

		for (uint32_t j = 0; j < s->nlabels; j++) {
			const struct tp_label *l = &p->labels[s->label_off + j];

			if (l->key != k || !l->str || seen[l->str])
				continue;
			seen[l->str] = true;
			if ((size_t)n < max)
				values[n] = tp_profile_str(p, l->str);
			n++;
		}
	}
	free(seen);
	return n;
}

int taproot_profile_sample_type_index(const struct taproot_profile *p, const char *type)
{
	uint32_t id = tp_profile_str_find(p, type);

	for (size_t i = 0; id && i < p->nvalues; i++)
		if (p->sample_type[i][0] == id)
			return (int)i;
	return -ENOENT;
}

/*
 * "[FILE]" for each mapping of @p, FILE its file's base name, in one
 * allocation (*@names, to free): the name of a frame without a function,
 * as pprof shows it; a name in brackets already ("[vdso]", a module's
 * "[ext4]") as it is. NULL for a mapping without a file.
 */
static int map_names(const struct taproot_profile *p, const char ***names)
{
	size_t room = p->nr_maps * sizeof(char *);
	const char **n;
	char *pos;

	for (size_t i = 0; i < p->nr_maps; i++)
		room += strlen(tp_profile_str(p, p->maps[i].file)) + 3;
	n = malloc(room ? room : 1);
	if (!n)
		return tp_err(-ENOMEM, "profile: out of memory");
	pos = (char *)(n + p->nr_maps);
	for (size_t i = 0; i < p->nr_maps; i++) {
		const char *file = tp_profile_str(p, p->maps[i].file);
		const char *base = tp_path_base(file);
		size_t len = strlen(base);

		n[i] = NULL;
		if (!*file)
			continue;
		if (file[0] == '[') {
			n[i] = file;
			continue;
		}
		n[i] = pos;
		pos[0] = '[';
		memcpy(pos + 1, base, len);
		memcpy(pos + 1 + len, "]", 2);
		pos += len + 3;
	}
	*names = n;
	return 0;
}

int taproot_profile_foreach_sample(const struct taproot_profile *p, taproot_profile_sample_fn fn,
				   void *arg)
{
	struct taproot_profile_frame_view *v = NULL;
	size_t alloc = 0;
	const char **mnames = NULL;
	int ret = map_names(p, &mnames);

	if (ret)
		return ret;
	/* The truncated sample is the last, i == nr_samples. */
	for (size_t i = 0; !ret && i < p->nr_samples + (p->folded ? 1 : 0); i++) {
		const bool trunc = i == p->nr_samples;
		const uint32_t *ids = trunc ? &p->trunc_loc : p->locs + p->samples[i].loc_off;
		uint32_t nlocs = trunc ? 1 : p->samples[i].nlocs;
		size_t nr = 0;

		for (uint32_t j = 0; j < nlocs; j++) {
			const struct tp_location *l = &p->locations[ids[j] - 1];
			const struct tp_mapping *m = l->mapping ? &p->maps[l->mapping - 1] : NULL;
			const char *file = m && m->file ? tp_profile_str(p, m->file) : NULL;
			uint32_t n = l->nlines ? l->nlines : 1;

			if (tp_grow((void **)&v, &alloc, nr + n, sizeof(*v)) < 0) {
				ret = -ENOMEM;
				break;
			}
			for (uint32_t k = 0; k < n; k++, nr++) {
				struct taproot_profile_frame_view *fv = &v[nr];

				fv->mapping = file;
				fv->address = l->address;
				fv->inlined = k + 1 < n;
				if (l->nlines)
					fv->name = tp_profile_str(p, p->funcs[p->lines[l->line_off + k]
									 .function - 1].name);
				else if (m && mnames[l->mapping - 1])
					fv->name = mnames[l->mapping - 1];
				else
					fv->name = "<unknown>";
			}
		}
		if (!ret)
			ret = fn(trunc ? p->trunc_values : p->values + i * p->nvalues, v, nr, arg);
	}
	free(v);
	free(mnames);
	return ret;
}

void taproot_profile_stats(const struct taproot_profile *p,
			   struct taproot_profile_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->adds = p->adds;
	st->folded = p->folded;
	st->stacks = p->nr_samples;
	st->max_stacks = p->max_stacks;
	st->locations = p->nr_locations;
	st->functions = p->nr_funcs;
	st->mappings = p->nr_maps;
	st->strings = p->nr_strs;
	st->bytes = sizeof(*p) + p->nr_comments * sizeof(*p->comments) +
		p->alloc_chars + p->alloc_strs * sizeof(*p->strs) +
		p->alloc_maps * sizeof(*p->maps) +
		p->alloc_funcs * sizeof(*p->funcs) +
		p->alloc_locations * sizeof(*p->locations) +
		p->alloc_lines * sizeof(*p->lines) +
		p->alloc_samples * sizeof(*p->samples) +
		p->alloc_locs * sizeof(*p->locs) +
		p->alloc_labels * sizeof(*p->labels) +
		p->alloc_values * sizeof(*p->values) +
		p->alloc_scratch_locs * sizeof(*p->scratch_locs) +
		p->alloc_scratch_lines * sizeof(*p->scratch_lines) +
		p->alloc_scratch_labels * sizeof(*p->scratch_labels) +
		tp_index_bytes(&p->str_ht) + tp_index_bytes(&p->map_ht) +
		tp_index_bytes(&p->func_ht) + tp_index_bytes(&p->loc_ht) +
		tp_index_bytes(&p->sample_ht);
}
