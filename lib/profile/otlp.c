// SPDX-License-Identifier: GPL-2.0
/*
 * The OTLP profiles writer: a profile (lib/profile/profile.c), or the part
 * of it with one label value, as an OpenTelemetry
 * ExportProfilesServiceRequest in protobuf, for a collector's profiles
 * endpoint. Implemented against opentelemetry-proto v1.11.0, package
 * opentelemetry.proto.profiles.v1development (alpha: the package name
 * changes with incompatible versions); the .proto files are vendored in
 * tests/otlp/proto/, where the unit test (test_otlp.c) decodes what this
 * writes with the real protoc. Encoded by hand, written straight from the
 * profile's tables, as pprof.c is and for the same reasons (its header).
 *
 * What the request holds:
 *
 *   resource_profiles[0]         one
 *     resource.attributes        the caller's (service.name, host.name, ...),
 *                                then each of process.pid, .executable.path,
 *                                container.id, k8s.* and host.name that
 *                                every sample has, of one value
 *     schema_url                 TAPROOT_OTLP_SCHEMA_URL
 *     scope_profiles[0]          scope "taproot" TAPROOT_VERSION, schema_url
 *       profiles[i]              one per sample type, in the desc's order
 *                                (cpu: samples/count, cpu/nanoseconds;
 *                                offcpu, offwake: off_cpu/nanoseconds,
 *                                switches/count; schedlat: runqueue/...)
 *         sample_type            the type and unit
 *         samples                each (stack, labels) entry whose value of
 *                                this type is not 0: stack_index,
 *                                attribute_indices (its labels), values
 *                                (that one value); then the truncated one
 *         time_unix_nano, duration_nano, period_type, period
 *   dictionary                   shared; entry 0 of each table the zero value
 *     mapping_table              memory_start, memory_limit, file_offset,
 *                                filename; the GNU build ID as attribute
 *                                process.executable.build_id.gnu (hex)
 *     location_table             mapping_index, address, lines (function,
 *                                line), innermost first
 *     function_table             name, system_name, filename
 *     link_table                 entry 0 only: 16 and 8 zero bytes
 *     string_table               "" first
 *     attribute_table            labels and build IDs, each distinct one once
 *     stack_table                each distinct stack once, leaf first
 *
 * Labels become attributes named by the semantic conventions where they
 * name one (sem_names[]: service_name is service.name, pid process.pid,
 * tid thread.id, ...); other labels keep their key. A string label is a
 * string_value, a numeric one an int_value with its unit as unit_strindex.
 * Label keys have no '.' and the conventions' names all have one, so a
 * renamed label never meets a label of its new name: a sample's attribute
 * keys stay unique, as the dictionary requires.
 *
 * Locations, mappings and functions are written in the order of the
 * profile's tables, dense from index 1 (a part renumbered as pprof's is),
 * so an entry's index is its pprof ID. Not carried: pprof's comments and
 * default sample type (a Profile has neither), the mappings' has_* flags
 * (v1development dropped them). The truncated sample (the stack table was
 * full) is in the whole profile's request only, its stack the one
 * location "[truncated: stack table full]", no attributes, as in pprof.
 *
 * Memory: the part's tables (profile/pbenc.h), the attributes and stacks
 * (at most one per label and sample of the profile) and the output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pbenc.h"
#include "taproot.h"
#include "util/hash.h"
#include "util/util.h"

#define NR(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Taproot's labels that the semantic conventions name, and the build ID.
 * @resource: an attribute of the entity that produced the samples (the
 * host, the process, its container and pod), which the request's resource
 * also carries when every sample of the request has the same value.
 */
static const struct sem_name {
	const char *label, *attr;
	bool resource;
} sem_names[] = {
	{ "service_name",	"service.name",			true },
	{ "pid",		"process.pid",			true },
	{ "tid",		"thread.id",			false },
	{ "thread_comm",	"thread.name",			false },
	{ "exe",		"process.executable.path",	true },
	{ "cgroup",		"process.linux.cgroup",		false },
	{ "container_id",	"container.id",			true },
	{ "cpu",		"cpu.logical_number",		false },
	{ "hostname",		"host.name",			true },
	{ "k8s_pod_name",	"k8s.pod.name",			true },
	{ "k8s_pod_uid",	"k8s.pod.uid",			true },
	{ "k8s_namespace",	"k8s.namespace.name",		true },
	{ "k8s_container_name",	"k8s.container.name",		true },
	{ NULL,			"process.executable.build_id.gnu", false },	/* mappings' */
};

#define SEM_BUILD_ID	(NR(sem_names) - 1)
/* An attribute key that is sem_names[k].attr, not a profile's string. */
#define SEM_KEY		0x80000000u

const char *taproot_otlp_attr_name(const char *label_key)
{
	for (size_t i = 0; i < SEM_BUILD_ID; i++)
		if (!strcmp(sem_names[i].label, label_key))
			return sem_names[i].attr;
	return label_key;
}

/* An entry of the attribute table; strings are the profile's indexes. */
struct otlp_attr {
	uint32_t key;			/* a string, or SEM_KEY | sem_names index */
	uint32_t str;			/* 0: numeric, @num */
	uint32_t unit;
	int64_t num;
};

/* An entry of the stack table: location IDs of the profile, leaf first. */
struct otlp_stack {
	const uint32_t *locs;
	uint32_t nlocs;
};

/* The value every sample of a request has for a resource label (sem_names[]). */
struct otlp_common {
	enum { COMMON_UNSEEN, COMMON_ONE, COMMON_NONE } state;
	uint32_t str;			/* 0: numeric, @num */
	int64_t num;
};

/* One request being written. Entry 0 of attrs[] and stacks[] is the zero value. */
struct otlp_enc {
	const struct taproot_profile *p;
	struct tp_part pt;
	uint32_t sem_label[NR(sem_names)];	/* the label's string in p, 0: none */
	uint32_t sem_str[NR(sem_names)];	/* its name's string written, 0: unused */
	struct otlp_common common[NR(sem_names)];

	struct otlp_attr *attrs;
	size_t nr_attrs, alloc_attrs;
	struct tp_index attr_ix;
	uint32_t *label_attr;		/* by index in p->labels, kept samples' */
	uint32_t *map_attr;		/* by mapping ID: its build ID's, 0: none */

	struct otlp_stack *stacks;
	size_t nr_stacks, alloc_stacks;
	struct tp_index stack_ix;
	uint32_t *sample_stack;		/* by sample; [nr_samples]: the truncated one */
};

/* -------------------------------------------- attribute and stack tables */

static bool attr_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_attr *a = &((const struct otlp_enc *)ctx)->attrs[idx];
	const struct otlp_attr *b = key;

	return a->key == b->key && a->str == b->str && a->unit == b->unit && a->num == b->num;
}

/* The index of attribute @a in the table, added if new. 0 or -ENOMEM. */
static int attr_index(struct otlp_enc *e, const struct otlp_attr *a, uint32_t *idx)
{
	uint32_t hash = (uint32_t)tp_hash_fin(tp_hash_mix(tp_hash_mix(tp_hash_mix(
				tp_hash_mix(0, a->key), a->str), a->unit), (uint64_t)a->num));
	struct tp_index_slot *slot;

	if (tp_index_reserve(&e->attr_ix) ||
	    tp_grow((void **)&e->attrs, &e->alloc_attrs, e->nr_attrs + 1, sizeof(*e->attrs)))
		return -ENOMEM;
	slot = tp_index_probe(&e->attr_ix, hash, attr_eq, e, a);
	if (slot->idx1) {
		*idx = slot->idx1 - 1;
		return 0;
	}
	e->attrs[e->nr_attrs] = *a;
	tp_index_set(&e->attr_ix, slot, hash, e->nr_attrs);
	*idx = (uint32_t)e->nr_attrs++;
	return 0;
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_stack *a = &((const struct otlp_enc *)ctx)->stacks[idx];
	const struct otlp_stack *b = key;

	return a->nlocs == b->nlocs && !memcmp(a->locs, b->locs, b->nlocs * sizeof(*b->locs));
}

/* The index of stack @s in the table, added if new (the empty one is 0). 0 or -ENOMEM. */
static int stack_index(struct otlp_enc *e, const struct otlp_stack *s, uint32_t *idx)
{
	struct tp_index_slot *slot;
	uint32_t hash;

	*idx = 0;
	if (!s->nlocs)
		return 0;
	hash = (uint32_t)tp_hash_fin(tp_hash_bytes(s->locs, s->nlocs * sizeof(*s->locs)));
	if (tp_index_reserve(&e->stack_ix) ||
	    tp_grow((void **)&e->stacks, &e->alloc_stacks, e->nr_stacks + 1, sizeof(*e->stacks)))
		return -ENOMEM;
	slot = tp_index_probe(&e->stack_ix, hash, stack_eq, e, s);
	if (slot->idx1) {
		*idx = slot->idx1 - 1;
		return 0;
	}
	e->stacks[e->nr_stacks] = *s;
	tp_index_set(&e->stack_ix, slot, hash, e->nr_stacks);
	*idx = (uint32_t)e->nr_stacks++;
	return 0;
}

/* The attribute of label @l, whose strings it marks as written. */
static int label_attr(struct otlp_enc *e, const struct tp_label *l, uint32_t *idx)
{
	struct otlp_attr a = { .key = l->key, .str = l->str, .unit = l->unit };

	if (!l->str)
		a.num = l->num;
	for (size_t k = 0; k < SEM_BUILD_ID; k++)
		if (e->sem_label[k] && e->sem_label[k] == l->key) {
			a.key = SEM_KEY | (uint32_t)k;
			e->sem_str[k] = 1;
			break;
		}
	if (!(a.key & SEM_KEY))
		e->pt.str[a.key] = 1;
	e->pt.str[a.unit] = 1;
	return attr_index(e, &a, idx);
}

/* Note sample @s's value of each resource label (otlp_enc.common). */
static void note_common(struct otlp_enc *e, const struct tp_sample *s)
{
	const struct taproot_profile *p = e->p;

	for (size_t k = 0; k < SEM_BUILD_ID; k++) {
		struct otlp_common *c = &e->common[k];
		const struct tp_label *l = NULL;

		if (!sem_names[k].resource || c->state == COMMON_NONE)
			continue;
		for (uint32_t j = 0; e->sem_label[k] && j < s->nlabels && !l; j++)
			if (p->labels[s->label_off + j].key == e->sem_label[k])
				l = &p->labels[s->label_off + j];
		if (l && c->state == COMMON_UNSEEN)
			*c = (struct otlp_common){ COMMON_ONE, l->str, l->str ? 0 : l->num };
		else if (!l || c->str != l->str || (!l->str && c->num != l->num))
			c->state = COMMON_NONE;
	}
}

/*
 * Fill the tables from the part's samples and mappings, and mark every
 * string the request references (string values are written inline: the
 * string table holds keys, units and the tables' names only).
 */
static int collect(struct otlp_enc *e)
{
	const struct taproot_profile *p = e->p;
	uint32_t *str = e->pt.str;
	int err;

	/* Entry 0 of each table: the zero value, never looked up. */
	e->nr_attrs = e->nr_stacks = 1;
	if (tp_grow((void **)&e->attrs, &e->alloc_attrs, 1, sizeof(*e->attrs)) ||
	    tp_grow((void **)&e->stacks, &e->alloc_stacks, 1, sizeof(*e->stacks)))
		return -ENOMEM;
	memset(e->attrs, 0, sizeof(*e->attrs));
	memset(e->stacks, 0, sizeof(*e->stacks));

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];
		struct otlp_stack st = { p->locs + s->loc_off, s->nlocs };

		if (!e->pt.sample[i])
			continue;
		if ((err = stack_index(e, &st, &e->sample_stack[i])))
			return err;
		note_common(e, s);
		for (uint32_t j = s->label_off; j < s->label_off + s->nlabels; j++)
			if ((err = label_attr(e, &p->labels[j], &e->label_attr[j])))
				return err;
	}
	if (e->pt.trunc) {
		struct otlp_stack st = { &p->trunc_loc, 1 };

		/* It has no labels: no resource label is every sample's. */
		for (size_t k = 0; k < SEM_BUILD_ID; k++)
			e->common[k].state = COMMON_NONE;

		if ((err = stack_index(e, &st, &e->sample_stack[p->nr_samples])))
			return err;
	}
	for (size_t i = 1; i <= p->nr_maps; i++) {
		struct otlp_attr a = { .key = SEM_KEY | SEM_BUILD_ID,
				       .str = p->maps[i - 1].build_id };

		if (!e->pt.map[i] || !a.str)
			continue;
		e->sem_str[SEM_BUILD_ID] = 1;
		if ((err = attr_index(e, &a, &e->map_attr[i])))
			return err;
	}

	for (size_t i = 0; i < p->nvalues; i++)
		str[p->sample_type[i][0]] = str[p->sample_type[i][1]] = 1;
	str[p->period_type[0]] = str[p->period_type[1]] = 1;
	tp_part_mark_tables_strings(p, &e->pt);
	return 0;
}

/* The conventions' names go after the profile's strings, those used only. */
static void number_sem_strings(struct otlp_enc *e)
{
	uint32_t next = e->pt.nr_strs;

	for (size_t k = 0; k < NR(sem_names); k++)
		if (e->sem_str[k])
			e->sem_str[k] = next++;
}

/* ------------------------------------------------------------- messages */

static void enc_value_type(struct pb *b, unsigned int field, const struct otlp_enc *e,
			   const uint32_t vt[2])
{
	size_t m = pb_begin(b, field);

	pb_u64(b, 1, e->pt.str[vt[0]]);		/* ValueType.type_strindex */
	pb_u64(b, 2, e->pt.str[vt[1]]);		/* ValueType.unit_strindex */
	pb_end(b, m);
}

/* An AnyValue: a string, or an int (written even when 0: a oneof). */
static void enc_any_value(struct pb *b, unsigned int field, const char *str, int64_t num)
{
	size_t m = pb_begin(b, field);

	if (str) {
		pb_str(b, 1, str);			/* string_value */
	} else {
		pb_key(b, 3, PB_WT_VARINT);		/* int_value */
		pb_varint(b, (uint64_t)num);
	}
	pb_end(b, m);
}

static void enc_key_value(struct pb *b, const char *key, const char *str, int64_t num)
{
	size_t kv = pb_begin(b, 1);			/* Resource.attributes */

	pb_str(b, 1, key);				/* KeyValue.key */
	enc_any_value(b, 2, str, num);
	pb_end(b, kv);
}

/*
 * The caller's attributes, then those every sample has the same value of
 * (its process, container, pod) that the caller did not give.
 */
static void enc_resource(struct pb *b, const struct otlp_enc *e,
			 const struct taproot_otlp_attr *attrs, size_t n)
{
	size_t m = pb_begin(b, 1);			/* ResourceProfiles.resource */

	for (size_t i = 0; i < n; i++)
		enc_key_value(b, attrs[i].key, attrs[i].str, attrs[i].num);
	for (size_t k = 0; k < SEM_BUILD_ID; k++) {
		const struct otlp_common *c = &e->common[k];
		bool given = false;

		for (size_t i = 0; i < n && !given; i++)
			given = !strcmp(attrs[i].key, sem_names[k].attr);
		if (c->state == COMMON_ONE && !given)
			enc_key_value(b, sem_names[k].attr,
				      c->str ? tp_profile_str(e->p, c->str) : NULL, c->num);
	}
	pb_end(b, m);
}

static void enc_sample(struct pb *b, const struct otlp_enc *e, uint32_t stack,
		       const uint32_t *attrs, uint32_t nattrs, int64_t value)
{
	size_t m = pb_begin(b, 2), f;		/* Profile.samples */

	pb_u64(b, 1, stack);			/* stack_index */
	if (nattrs) {				/* attribute_indices, packed */
		f = pb_begin(b, 2);
		for (uint32_t i = 0; i < nattrs; i++)
			pb_varint(b, attrs[i]);
		pb_end(b, f);
	}
	f = pb_begin(b, 4);			/* values, packed */
	pb_varint(b, (uint64_t)value);
	pb_end(b, f);
	pb_end(b, m);
}

/* Profile @t: the samples' values of sample type @t. */
static void enc_profile(struct pb *b, const struct otlp_enc *e, size_t t)
{
	const struct taproot_profile *p = e->p;
	size_t m = pb_begin(b, 2);		/* ScopeProfiles.profiles */

	enc_value_type(b, 1, e, p->sample_type[t]);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];
		int64_t v = p->values[i * p->nvalues + t];

		if (e->pt.sample[i] && v)
			enc_sample(b, e, e->sample_stack[i], e->label_attr + s->label_off,
				   s->nlabels, v);
	}
	if (e->pt.trunc && p->trunc_values[t])
		enc_sample(b, e, e->sample_stack[p->nr_samples], NULL, 0, p->trunc_values[t]);
	pb_fixed64(b, 3, (uint64_t)p->time_nanos);	/* time_unix_nano */
	pb_i64(b, 4, p->duration_nanos);		/* duration_nano */
	if (p->period_type[0] || p->period_type[1])
		enc_value_type(b, 5, e, p->period_type);
	pb_i64(b, 6, p->period);
	pb_end(b, m);
}

static void enc_resource_profiles(struct pb *b, const struct otlp_enc *e,
				  const struct taproot_otlp_attr *resource, size_t nr_resource)
{
	size_t m = pb_begin(b, 1), sp, scope;	/* request.resource_profiles */

	enc_resource(b, e, resource, nr_resource);
	sp = pb_begin(b, 2);			/* scope_profiles */
	scope = pb_begin(b, 1);			/* InstrumentationScope */
	pb_str(b, 1, "taproot");
	pb_str(b, 2, TAPROOT_VERSION);
	pb_end(b, scope);
	for (size_t t = 0; t < e->p->nvalues; t++)
		enc_profile(b, e, t);
	pb_str(b, 3, TAPROOT_OTLP_SCHEMA_URL);
	pb_end(b, sp);
	pb_str(b, 3, TAPROOT_OTLP_SCHEMA_URL);
	pb_end(b, m);
}

static void enc_mapping(struct pb *b, const struct otlp_enc *e, size_t id)
{
	const struct tp_mapping *mp = &e->p->maps[id - 1];
	size_t m = pb_begin(b, 1), f;		/* mapping_table */

	pb_u64(b, 1, mp->start);
	pb_u64(b, 2, mp->limit);
	pb_u64(b, 3, mp->offset);
	pb_u64(b, 4, e->pt.str[mp->file]);
	if (e->map_attr[id]) {			/* attribute_indices, packed */
		f = pb_begin(b, 5);
		pb_varint(b, e->map_attr[id]);
		pb_end(b, f);
	}
	pb_end(b, m);
}

static void enc_location(struct pb *b, const struct otlp_enc *e, size_t id)
{
	const struct taproot_profile *p = e->p;
	const struct tp_location *l = &p->locations[id - 1];
	size_t m = pb_begin(b, 2);		/* location_table */

	pb_u64(b, 1, e->pt.map[l->mapping]);
	pb_u64(b, 2, l->address);
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct tp_line *ln = &p->lines[l->line_off + i];
		size_t f = pb_begin(b, 3);	/* Location.lines */

		pb_u64(b, 1, e->pt.func[ln->function]);
		pb_i64(b, 2, ln->line);
		pb_end(b, f);
	}
	pb_end(b, m);
}

static void enc_function(struct pb *b, const struct otlp_enc *e, size_t id)
{
	const struct tp_function *fn = &e->p->funcs[id - 1];
	size_t m = pb_begin(b, 3);		/* function_table */

	pb_u64(b, 1, e->pt.str[fn->name]);
	pb_u64(b, 2, e->pt.str[fn->system_name]);
	pb_u64(b, 3, e->pt.str[fn->file]);
	pb_end(b, m);
}

static void enc_attribute(struct pb *b, const struct otlp_enc *e, const struct otlp_attr *a)
{
	size_t m = pb_begin(b, 6);		/* attribute_table */
	bool sem = a->key & SEM_KEY;

	pb_u64(b, 1, sem ? e->sem_str[a->key & ~SEM_KEY] : e->pt.str[a->key]);
	enc_any_value(b, 2, a->str ? tp_profile_str(e->p, a->str) : NULL, a->num);
	pb_u64(b, 3, e->pt.str[a->unit]);
	pb_end(b, m);
}

static void enc_stack(struct pb *b, const struct otlp_enc *e, const struct otlp_stack *s)
{
	size_t m = pb_begin(b, 7), f;		/* stack_table */

	f = pb_begin(b, 1);			/* location_indices, packed */
	for (uint32_t i = 0; i < s->nlocs; i++)
		pb_varint(b, e->pt.loc[s->locs[i]]);
	pb_end(b, f);
	pb_end(b, m);
}

static void enc_dictionary(struct pb *b, const struct otlp_enc *e)
{
	static const uint8_t zero_ids[16];
	const struct taproot_profile *p = e->p;
	size_t m = pb_begin(b, 2), f;		/* request.dictionary */

	/* Entry 0 of each table is the zero value, an empty message. */
	pb_bytes(b, 1, NULL, 0);
	for (size_t id = 1; id <= p->nr_maps; id++)
		if (e->pt.map[id])
			enc_mapping(b, e, id);
	pb_bytes(b, 2, NULL, 0);
	for (size_t id = 1; id <= p->nr_locations; id++)
		if (e->pt.loc[id])
			enc_location(b, e, id);
	pb_bytes(b, 3, NULL, 0);
	for (size_t id = 1; id <= p->nr_funcs; id++)
		if (e->pt.func[id])
			enc_function(b, e, id);
	/* But the link's: IDs of their full lengths, as the proto advises. */
	f = pb_begin(b, 4);
	pb_bytes(b, 1, zero_ids, 16);		/* trace_id */
	pb_bytes(b, 2, zero_ids, 8);		/* span_id */
	pb_end(b, f);
	for (size_t i = 0; i < p->nr_strs; i++)
		if (!i || e->pt.str[i])
			pb_str(b, 5, tp_profile_str(p, (uint32_t)i));
	for (size_t k = 0; k < NR(sem_names); k++)
		if (e->sem_str[k])
			pb_str(b, 5, sem_names[k].attr);
	pb_bytes(b, 6, NULL, 0);
	for (size_t i = 1; i < e->nr_attrs; i++)
		enc_attribute(b, e, &e->attrs[i]);
	pb_bytes(b, 7, NULL, 0);
	for (size_t i = 1; i < e->nr_stacks; i++)
		enc_stack(b, e, &e->stacks[i]);
	pb_end(b, m);
}

/* -------------------------------------------------------------- requests */

static void enc_free(struct otlp_enc *e)
{
	tp_part_free(&e->pt);
	free(e->attrs);
	tp_index_free(&e->attr_ix);
	free(e->label_attr);
	free(e->map_attr);
	free(e->stacks);
	tp_index_free(&e->stack_ix);
	free(e->sample_stack);
}

/*
 * The request of the part of @p with the string label @key = @value, or
 * of all of @p when @key is NULL. Returns the samples written or an error.
 */
static long encode(const struct taproot_profile *p, const char *key, const char *value,
		   const struct taproot_otlp_attr *resource, size_t nr_resource, bool gzip,
		   void **buf, size_t *len)
{
	struct otlp_enc e = { .p = p };
	struct pb b = { 0 };
	long n;
	int err;

	*buf = NULL;
	*len = 0;
	for (size_t i = 0; i < nr_resource; i++)
		if (!resource[i].key)
			return tp_err(-EINVAL, "otlp: resource attribute %zu has no key", i);
	n = tp_part_select(p, key, value, &e.pt);
	if (n < 0)
		return tp_err((int)n, "otlp: out of memory");
	if (key && !n) {
		tp_part_free(&e.pt);
		return 0;
	}
	for (size_t k = 0; k < SEM_BUILD_ID; k++)
		e.sem_label[k] = tp_profile_str_find(p, sem_names[k].label);
	e.label_attr = calloc(p->nr_labels + 1, sizeof(*e.label_attr));
	e.map_attr = calloc(p->nr_maps + 1, sizeof(*e.map_attr));
	e.sample_stack = calloc(p->nr_samples + 1, sizeof(*e.sample_stack));
	if (!e.label_attr || !e.map_attr || !e.sample_stack || collect(&e)) {
		enc_free(&e);
		return tp_err(-ENOMEM, "otlp: out of memory");
	}
	tp_part_renumber(p, &e.pt);
	number_sem_strings(&e);

	enc_resource_profiles(&b, &e, resource, nr_resource);
	enc_dictionary(&b, &e);
	enc_free(&e);
	err = pb_finish(&b, gzip, "otlp", buf, len);
	return err ? err : n;
}

int taproot_otlp_encode(const struct taproot_profile *p,
			const struct taproot_otlp_attr *resource, size_t nr_resource,
			bool gzip, void **buf, size_t *len)
{
	long n = encode(p, NULL, NULL, resource, nr_resource, gzip, buf, len);

	return n < 0 ? (int)n : 0;
}

long taproot_otlp_encode_part(const struct taproot_profile *p, const char *key,
			      const char *value, const struct taproot_otlp_attr *resource,
			      size_t nr_resource, bool gzip, void **buf, size_t *len)
{
	if (!key || !value)
		return tp_err(-EINVAL, "otlp: a part needs a label and a value");
	return encode(p, key, value, resource, nr_resource, gzip, buf, len);
}

long taproot_otlp_write_part_file(const struct taproot_profile *p, const char *key,
				  const char *value, const struct taproot_otlp_attr *resource,
				  size_t nr_resource, const char *path)
{
	void *buf;
	size_t len;
	long n = taproot_otlp_encode_part(p, key, value, resource, nr_resource, true, &buf, &len);

	return tp_part_write_file(n, buf, len, path);
}

/* ------------------------------------------------- the collector's answer */

/* A varint of @d at *@i (within @n); false for none whole. */
static bool reply_varint(const uint8_t *d, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned int shift = 0; *i < n && shift < 64; shift += 7) {
		uint8_t b = d[(*i)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

int taproot_otlp_read_response(const void *data, size_t n, int64_t *rejected, char *msg,
			       size_t len)
{
	const uint8_t *d = data;
	size_t i = 0, end = n;
	uint64_t key, v;
	bool inner = false;

	*rejected = 0;
	if (len)
		msg[0] = '\0';
	while (i < end) {
		unsigned int field, wt;

		if (!reply_varint(d, end, &i, &key))
			return -EBADMSG;
		field = (unsigned int)(key >> 3);
		wt = (unsigned int)(key & 7);
		if (wt == PB_WT_VARINT) {
			if (!reply_varint(d, end, &i, &v))
				return -EBADMSG;
			if (inner && field == 1)	/* rejected_profiles */
				*rejected = (int64_t)v;
			continue;
		}
		if (wt == PB_WT_I64 || wt == PB_WT_I32) {	/* skipped */
			size_t k = wt == PB_WT_I64 ? 8 : 4;

			if (end - i < k)
				return -EBADMSG;
			i += k;
			continue;
		}
		if (wt != PB_WT_LEN || !reply_varint(d, end, &i, &v) || v > end - i)
			return -EBADMSG;
		if (!inner && field == 1) {
			/* partial_success: its fields, to its end, are all that is read. */
			inner = true;
			end = i + (size_t)v;
			continue;
		}
		if (inner && field == 2 && len) {	/* error_message */
			size_t k = v < len ? (size_t)v : len - 1;

			for (size_t j = 0; j < k; j++) {
				uint8_t c = d[i + j];

				msg[j] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
			}
			msg[k] = '\0';
		}
		i += (size_t)v;
	}
	return 0;
}
