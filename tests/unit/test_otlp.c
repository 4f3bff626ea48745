// SPDX-License-Identifier: GPL-2.0
/*
 * The OTLP profiles writer (lib/profile/otlp.c), checked by the real protoc
 * and against the pprof writer: profiles (test_pprof's fixture, two sample
 * types, string and numeric labels, a unit, a full stack table's truncated
 * sample; an off-CPU profile with services and Kubernetes labels; an empty
 * one), whole and in parts by label, are written as
 * ExportProfilesServiceRequests, then
 *  - decoded by protoc --decode with the .proto files of opentelemetry-proto
 *    v1.11.0 vendored in tests/otlp/proto (the decode must succeed);
 *  - checked in structure: every dictionary table's entry 0 the zero value,
 *    every index in range, one Profile per sample type, unique attribute
 *    keys per sample, one value per sample;
 *  - compared with the pprof encoding of the same profile or part, decoded
 *    by protoc too: for each sample type, the values summed per stack (the
 *    stack as its chain of function names) are the same multiset.
 * Run from the top of the tree (make unit does), where tests/otlp/proto is.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "pprofcheck.h"
#include "newprofile.h"
#include "taproot.h"

#define OTLP_PROTO_DIR	"tests/otlp/proto"
#define OTLP_SERVICE	"opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
#define OTLP_RESPONSE	"opentelemetry.proto.collector.profiles.v1development." \
			"ExportProfilesServiceResponse"
#define OTLP_REQUEST	"opentelemetry.proto.collector.profiles.v1development." \
			"ExportProfilesServiceRequest"

/* ------------------------------------------------ requests read by protoc */

/* A decoded request, its dictionary and the sizes of its tables. */
struct request {
	struct tn root;
	char *text;
	const struct tn *dict, *scope;
	const char **str;
	size_t nstr, nmap, nloc, nfunc, nattr, nstack;
};

static void need_otlp_protos(void)
{
	need_protoc();
	if (access(OTLP_PROTO_DIR "/" OTLP_SERVICE, R_OK))
		fail_msg(OTLP_PROTO_DIR "/" OTLP_SERVICE " is missing: run from the top of the tree");
}

/* Decode the request (not gzipped) in the file @path. */
static void request_decode(struct request *r, const char *path)
{
	const struct tn *rp;
	char *s, *cur;
	int st;

	memset(r, 0, sizeof(*r));
	r->text = run(&st, "protoc --decode=" OTLP_REQUEST " -I " OTLP_PROTO_DIR " "
		      OTLP_SERVICE " < '%s'", path);
	assert_int_equal(st, 0);
	s = cur = strdup(r->text);
	tn_parse(&r->root, &cur);
	free(s);
	r->dict = tn_get(&r->root, "dictionary", 0);
	assert_non_null(r->dict);
	assert_int_equal(tn_count(&r->root, "resource_profiles"), 1);
	rp = tn_get(&r->root, "resource_profiles", 0);
	assert_int_equal(tn_count(rp, "scope_profiles"), 1);
	r->scope = tn_get(rp, "scope_profiles", 0);
	r->nstr = tn_count(r->dict, "string_table");
	r->str = calloc(r->nstr, sizeof(*r->str));
	for (size_t i = 0; i < r->nstr; i++)
		r->str[i] = tn_get(r->dict, "string_table", i)->val;
	r->nmap = tn_count(r->dict, "mapping_table");
	r->nloc = tn_count(r->dict, "location_table");
	r->nfunc = tn_count(r->dict, "function_table");
	r->nattr = tn_count(r->dict, "attribute_table");
	r->nstack = tn_count(r->dict, "stack_table");
}

static void request_free(struct request *r)
{
	tn_free(&r->root);
	free(r->text);
	free(r->str);
}

static const char *rstr(const struct request *r, uint64_t idx)
{
	assert_true(idx < r->nstr);
	return r->str[idx];
}

/* Entry @idx of the dictionary's table @kind, which must exist. */
static const struct tn *rent(const struct request *r, const char *kind, uint64_t idx)
{
	const struct tn *e = tn_get(r->dict, kind, idx);

	assert_non_null(e);
	return e;
}

/* Every index of the packed repeated field @name of @n is in [1, @nr). */
static void indices_in_range(const struct tn *n, const char *name, size_t nr)
{
	for (size_t i = 0; i < tn_count(n, name); i++) {
		uint64_t v = tn_u64(n, name, i);

		assert_true(v >= 1 && v < nr);
	}
}

/* The attributes @field of @n refers to: key="str" or key=NUM[unit], by ','. */
static char *attrs_text(const struct request *r, const struct tn *n, const char *field)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);

	for (size_t i = 0; i < tn_count(n, field); i++) {
		const struct tn *a = rent(r, "attribute_table", tn_u64(n, field, i));
		const struct tn *v = tn_get(a, "value", 0);

		assert_non_null(v);
		fprintf(f, "%s%s=", i ? "," : "", rstr(r, tn_u64(a, "key_strindex", 0)));
		if (tn_get(v, "string_value", 0))
			fprintf(f, "\"%s\"", tn_get(v, "string_value", 0)->val);
		else
			fprintf(f, "%" PRId64, (int64_t)tn_u64(v, "int_value", 0));
		if (tn_get(a, "unit_strindex", 0))
			fprintf(f, "[%s]", rstr(r, tn_u64(a, "unit_strindex", 0)));
	}
	fclose(f);
	return t;
}

/*
 * What the proto requires of the dictionary and of the Profiles of @p:
 * zero values at index 0, indices in range, one Profile per sample type,
 * with its type and unit, one value per sample, unique attribute keys.
 */
static void check_structure(const struct request *r, const struct taproot_profile *p)
{
	static const char *const tables[] = {
		"mapping_table", "location_table", "function_table", "attribute_table",
		"stack_table",
	};
	const struct tn *e, *prof, *s;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		assert_int_equal(rent(r, tables[i], 0)->nkids, 0);
	assert_true(r->nstr >= 1);
	assert_string_equal(r->str[0], "");
	assert_int_equal(tn_count(r->dict, "link_table"), 1);
	assert_non_null(strstr(r->text, "trace_id: \"" "\\000\\000\\000\\000\\000\\000\\000\\000"
			       "\\000\\000\\000\\000\\000\\000\\000\\000\"\n"));
	assert_non_null(strstr(r->text, "span_id: \"\\000\\000\\000\\000\\000\\000\\000\\000\"\n"));

	for (size_t i = 1; (e = tn_get(r->dict, "mapping_table", i)); i++) {
		assert_true(tn_u64(e, "filename_strindex", 0) < r->nstr);
		indices_in_range(e, "attribute_indices", r->nattr);
	}
	for (size_t i = 1; (e = tn_get(r->dict, "location_table", i)); i++) {
		const struct tn *ln;

		assert_true(tn_u64(e, "mapping_index", 0) < r->nmap);
		for (size_t j = 0; (ln = tn_get(e, "lines", j)); j++)
			indices_in_range(ln, "function_index", r->nfunc);
	}
	for (size_t i = 1; (e = tn_get(r->dict, "function_table", i)); i++) {
		assert_true(tn_u64(e, "name_strindex", 0) < r->nstr);
		assert_true(tn_u64(e, "system_name_strindex", 0) < r->nstr);
		assert_true(tn_u64(e, "filename_strindex", 0) < r->nstr);
		assert_true(e->nkids > 0);	/* one of the three at least */
	}
	for (size_t i = 1; (e = tn_get(r->dict, "attribute_table", i)); i++) {
		indices_in_range(e, "key_strindex", r->nstr);
		assert_int_equal(tn_count(e, "key_strindex"), 1);
		assert_true(tn_u64(e, "unit_strindex", 0) < r->nstr);
		assert_int_equal(tn_get(e, "value", 0)->nkids, 1);
	}
	for (size_t i = 1; (e = tn_get(r->dict, "stack_table", i)); i++) {
		assert_true(tn_count(e, "location_indices") >= 1);
		indices_in_range(e, "location_indices", r->nloc);
	}

	assert_int_equal(tn_count(r->scope, "profiles"), p->nvalues);
	for (size_t t = 0; (prof = tn_get(r->scope, "profiles", t)); t++) {
		const struct tn *st = tn_get(prof, "sample_type", 0);

		assert_non_null(st);
		assert_string_equal(rstr(r, tn_u64(st, "type_strindex", 0)),
				    tp_profile_str(p, p->sample_type[t][0]));
		assert_string_equal(rstr(r, tn_u64(st, "unit_strindex", 0)),
				    tp_profile_str(p, p->sample_type[t][1]));
		for (size_t i = 0; (s = tn_get(prof, "samples", i)); i++) {
			size_t na = tn_count(s, "attribute_indices");

			indices_in_range(s, "stack_index", r->nstack);
			indices_in_range(s, "attribute_indices", r->nattr);
			assert_int_equal(tn_count(s, "values"), 1);
			for (size_t a = 0; a < na; a++)
				for (size_t b = a + 1; b < na; b++)
					assert_int_not_equal(
						tn_u64(rent(r, "attribute_table",
							    tn_u64(s, "attribute_indices", a)),
						       "key_strindex", 0),
						tn_u64(rent(r, "attribute_table",
							    tn_u64(s, "attribute_indices", b)),
						       "key_strindex", 0));
		}
	}
}

/* ------------------------------------------------- stacks and their sums */

/* Chains of function names and their values, to be summed per chain. */
struct sums {
	struct chain_sum {
		char *chain;
		int64_t v;
	} *e;
	size_t n;
};

static void sums_add(struct sums *s, char *chain, int64_t v)
{
	s->e = realloc(s->e, (s->n + 1) * sizeof(*s->e));
	assert_non_null(s->e);
	s->e[s->n++] = (struct chain_sum){ chain, v };
}

static int chain_cmp(const void *a, const void *b)
{
	return strcmp(((const struct chain_sum *)a)->chain, ((const struct chain_sum *)b)->chain);
}

/* The sums per chain, sorted, as "chain value" lines (chains of sum 0 left out). */
static char *sums_text(struct sums *s)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);

	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), chain_cmp);
	for (size_t i = 0; i < s->n;) {
		int64_t sum = 0;
		size_t j;

		for (j = i; j < s->n && !strcmp(s->e[j].chain, s->e[i].chain); j++)
			sum += s->e[j].v;
		if (sum)
			fprintf(f, "%s %" PRId64 "\n", s->e[i].chain, sum);
		i = j;
	}
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].chain);
	free(s->e);
	fclose(f);
	return t;
}

/*
 * A location as names, each followed by ';': its lines' functions
 * innermost first (@fn_field of each @line_field, named by @fn_name), or
 * its address when it has none.
 */
static void print_location(FILE *f, const struct tn *loc, const char *line_field,
			   const char *fn_field,
			   const char *(*fn_name)(const void *ctx, uint64_t id), const void *ctx)
{
	const struct tn *ln;

	if (!tn_get(loc, line_field, 0))
		fprintf(f, "0x%" PRIx64 ";", tn_u64(loc, "address", 0));
	for (size_t m = 0; (ln = tn_get(loc, line_field, m)); m++)
		fprintf(f, "%s;", fn_name(ctx, tn_u64(ln, fn_field, 0)));
}

static const char *otlp_fn_name(const void *ctx, uint64_t idx)
{
	const struct request *r = ctx;

	return rstr(r, tn_u64(rent(r, "function_table", idx), "name_strindex", 0));
}

static const char *pprof_fn_name(const void *ctx, uint64_t id)
{
	const struct decoded *d = ctx;

	return dstr(d, tn_u64(dent(d, "function", id), "name", 0));
}

/* Profile @t's values summed per stack. */
static char *otlp_sums(const struct request *r, size_t t)
{
	const struct tn *prof = tn_get(r->scope, "profiles", t), *s;
	struct sums sums = { 0 };

	for (size_t i = 0; (s = tn_get(prof, "samples", i)); i++) {
		const struct tn *st = rent(r, "stack_table", tn_u64(s, "stack_index", 0));
		char *c = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&c, &len);

		for (size_t j = 0; j < tn_count(st, "location_indices"); j++)
			print_location(f, rent(r, "location_table",
					       tn_u64(st, "location_indices", j)),
				       "lines", "function_index", otlp_fn_name, r);
		fclose(f);
		sums_add(&sums, c, (int64_t)tn_u64(s, "values", 0));
	}
	return sums_text(&sums);
}

/* The pprof profile's value @t summed per stack. */
static char *pprof_sums(const struct decoded *d, size_t t)
{
	const struct tn *s;
	struct sums sums = { 0 };

	for (size_t i = 0; (s = tn_get(&d->root, "sample", i)); i++) {
		char *c = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&c, &len);

		for (size_t j = 0; j < tn_count(s, "location_id"); j++)
			print_location(f, dent(d, "location", tn_u64(s, "location_id", j)),
				       "line", "function_id", pprof_fn_name, d);
		fclose(f);
		sums_add(&sums, c, (int64_t)tn_u64(s, "value", t));
	}
	return sums_text(&sums);
}

/*
 * Write @p (its part @key = @value when @key is not NULL) as an OTLP
 * request and as pprof into @dir, decode both with protoc, check the
 * request's structure and that each sample type's values summed per stack
 * are the pprof's. Returns the samples of the part (0 for the whole);
 * *@r holds the decoded request, which the caller frees.
 */
static long otlp_vs_pprof(const struct taproot_profile *p, const char *key, const char *value,
			  const struct taproot_otlp_attr *res, size_t nres, const char *dir,
			  struct request *r)
{
	void *buf, *pbuf;
	size_t len, plen;
	long n = 0;
	char *path, *ppath;
	struct decoded d;

	if (key) {
		n = taproot_otlp_encode_part(p, key, value, res, nres, false, &buf, &len);
		assert_true(n > 0);
		assert_int_equal(taproot_pprof_encode_part(p, key, value, true, &pbuf, &plen), n);
	} else {
		assert_int_equal(taproot_otlp_encode(p, res, nres, false, &buf, &len), 0);
		assert_int_equal(taproot_pprof_encode(p, true, &pbuf, &plen), 0);
	}
	path = write_buf(dir, "request.bin", buf, len);
	ppath = write_buf(dir, "profile.pb.gz", pbuf, plen);
	free(buf);
	free(pbuf);
	request_decode(r, path);
	check_structure(r, p);
	decode(&d, ppath);
	for (size_t t = 0; t < p->nvalues; t++) {
		char *o = otlp_sums(r, t), *q = pprof_sums(&d, t);

		assert_string_equal(o, q);
		free(o);
		free(q);
	}
	decoded_free(&d);
	unlink(path);
	unlink(ppath);
	free(path);
	free(ppath);
	return n;
}

/* The attributes of sample @i of Profile @t, as attrs_text() writes them. */
static char *sample_attrs(const struct request *r, size_t t, size_t i)
{
	const struct tn *s = tn_get(tn_get(r->scope, "profiles", t), "samples", i);

	assert_non_null(s);
	return attrs_text(r, s, "attribute_indices");
}

static bool has_string(const struct request *r, const char *s)
{
	for (size_t i = 0; i < r->nstr; i++)
		if (!strcmp(r->str[i], s))
			return true;
	return false;
}

/* A resource attribute KEY as protoc prints it, its value VALUE ("int_value: 3"). */
#define RES_ATTR(key, value) \
	"    attributes {\n      key: \"" key "\"\n      value {\n        " value "\n"

static const struct taproot_otlp_attr resource[] = {
	{ .key = "service.name", .str = "app" },
	{ .key = "host.name", .str = "node-1" },
	{ .key = "os.type", .str = "linux" },
	{ .key = "process.pid", .num = 42 },
};

#define NR_RESOURCE	(sizeof(resource) / sizeof(resource[0]))

/* ----------------------------------------------------------------- tests */

/*
 * test_pprof's fixture, whole: the resource and scope as given, the
 * labels under their conventions' names, numeric ones as ints with their
 * unit, the build ID on its mapping, the truncated sample; the gzipped
 * request is the plain one gzipped.
 */
static void whole_cpu_profile(void **state)
{
	struct taproot_profile *p = fixture();
	char *dir = tmpdir(), *t;
	struct request r;
	const struct tn *rp, *prof, *m;
	void *plain, *gz, *unz;
	size_t plain_len, gz_len, unz_len;

	need_otlp_protos();
	otlp_vs_pprof(p, NULL, NULL, resource, NR_RESOURCE, dir, &r);

	rp = tn_get(&r.root, "resource_profiles", 0);
	assert_int_equal(tn_count(tn_get(rp, "resource", 0), "attributes"), NR_RESOURCE);
	assert_non_null(strstr(r.text, "      key: \"service.name\"\n      value {\n"
				       "        string_value: \"app\"\n"));
	assert_non_null(strstr(r.text, "      key: \"process.pid\"\n      value {\n"
				       "        int_value: 42\n"));
	assert_string_equal(tn_get(rp, "schema_url", 0)->val, TAPROOT_OTLP_SCHEMA_URL);
	assert_string_equal(tn_get(r.scope, "schema_url", 0)->val, TAPROOT_OTLP_SCHEMA_URL);
	assert_string_equal(tn_get(tn_get(r.scope, "scope", 0), "name", 0)->val, "taproot");
	assert_string_equal(tn_get(tn_get(r.scope, "scope", 0), "version", 0)->val,
			    TAPROOT_VERSION);

	/* samples/count then cpu/nanoseconds, each with the profile's times. */
	for (size_t i = 0; (prof = tn_get(r.scope, "profiles", i)); i++) {
		const struct tn *pt = tn_get(prof, "period_type", 0);

		assert_int_equal(tn_u64(prof, "time_unix_nano", 0), TIME_NS);
		assert_int_equal(tn_u64(prof, "duration_nano", 0), DURATION_NS);
		assert_int_equal(tn_u64(prof, "period", 0), MS);
		assert_string_equal(rstr(&r, tn_u64(pt, "type_strindex", 0)), "cpu");
		assert_string_equal(rstr(&r, tn_u64(pt, "unit_strindex", 0)), "nanoseconds");
		/* Five entries and the truncated one. */
		assert_int_equal(tn_count(prof, "samples"), 6);
	}
	prof = tn_get(r.scope, "profiles", 1);
	assert_int_equal(tn_u64(tn_get(prof, "samples", 0), "values", 0), 4 * MS);

	t = sample_attrs(&r, 0, 0);
	assert_string_equal(t, "comm=\"app\",thread.name=\"worker\",state=\"R\","
			       "process.pid=42,thread.id=43,cpu.logical_number=3");
	free(t);
	t = sample_attrs(&r, 0, 2);
	assert_string_equal(t, "comm=\"app\",wait=1500[nanoseconds]");
	free(t);
	t = sample_attrs(&r, 1, 5);		/* the truncated sample: none */
	assert_string_equal(t, "");
	free(t);
	/* Labels' keys renamed are not written: no orphan strings. */
	assert_false(has_string(&r, "thread_comm"));
	assert_false(has_string(&r, "pid"));
	assert_true(has_string(&r, "[truncated: stack table full]"));

	/* The app's mapping: its range and its build ID, as the eBPF profiler's. */
	for (size_t i = 1; (m = tn_get(r.dict, "mapping_table", i)); i++) {
		if (strcmp(rstr(&r, tn_u64(m, "filename_strindex", 0)), "/usr/bin/app"))
			continue;
		assert_int_equal(tn_u64(m, "memory_start", 0), 0x400000);
		assert_int_equal(tn_u64(m, "memory_limit", 0), 0x500000);
		t = attrs_text(&r, m, "attribute_indices");
		assert_string_equal(t, "process.executable.build_id.gnu=\"deadbeef\"");
		free(t);
		break;
	}
	assert_non_null(m);
	request_free(&r);

	assert_int_equal(taproot_otlp_encode(p, resource, NR_RESOURCE, false, &plain,
					     &plain_len), 0);
	assert_int_equal(taproot_otlp_encode(p, resource, NR_RESOURCE, true, &gz, &gz_len), 0);
	unz = gunzip(gz, gz_len, &unz_len);
	assert_int_equal(unz_len, plain_len);
	assert_memory_equal(unz, plain, plain_len);
	free(plain);
	free(gz);
	free(unz);

	rm_tree(dir);
	free(dir);
	taproot_profile_free(p);
}

/*
 * Parts by label, as the push spool makes them: only the samples of the
 * value and what they reference (the truncated sample in none), the same
 * sums as pprof's part; nothing for a value no sample has.
 */
static void parts_by_label(void **state)
{
	struct taproot_profile *p = fixture();
	char *dir = tmpdir();
	struct request r;
	void *buf;
	size_t len;

	need_otlp_protos();
	assert_int_equal(otlp_vs_pprof(p, "comm", "app", resource, NR_RESOURCE, dir, &r), 3);
	assert_int_equal(tn_count(tn_get(r.scope, "profiles", 0), "samples"), 3);
	assert_false(has_string(&r, "ghost"));
	assert_false(has_string(&r, "[unknown]"));
	assert_false(has_string(&r, "/usr/lib/libfoo.so.1"));
	assert_false(has_string(&r, "[truncated: stack table full]"));
	assert_int_equal(r.nmap, 1 + 2);	/* app's and [kernel.kallsyms] */
	request_free(&r);

	assert_int_equal(otlp_vs_pprof(p, "comm", "ghost", NULL, 0, dir, &r), 1);
	assert_int_equal(r.nmap, 1);
	assert_int_equal(r.nloc, 1 + 1);
	assert_false(strstr(r.text, "attributes {"));	/* no resource attributes */
	request_free(&r);

	assert_int_equal(taproot_otlp_encode_part(p, "comm", "nope", NULL, 0, true, &buf, &len), 0);
	assert_null(buf);
	assert_int_equal(len, 0);
	assert_int_equal(taproot_otlp_encode_part(p, "nope", "app", NULL, 0, true, &buf, &len), 0);
	assert_null(buf);

	rm_tree(dir);
	free(dir);
	taproot_profile_free(p);
}

/* Off-CPU stacks of two services in pods: blocked time and switches. */
static const struct taproot_profile_frame blocked_read[] = {
	KFRAME("schedule", 0xffffffff81003000),
	KFRAME("__x64_sys_read", 0xffffffff81200000),
	APP("read_loop", 7, 0x407000),
	APP("main", 33, 0x402000),
};
static const struct taproot_profile_frame blocked_lock[] = {
	KFRAME("schedule", 0xffffffff81003000),
	KFRAME("futex_wait", 0xffffffff81300000),
	APP("take_lock", 9, 0x408000),
	APP("main", 33, 0x402000),
};

#define POD_LABELS(svc, pod, tid)						\
	TAPROOT_LABEL_STR("service_name", svc),					\
	TAPROOT_LABEL_STR("container_id", "c0ffee"),				\
	TAPROOT_LABEL_STR("k8s_pod_name", pod),					\
	TAPROOT_LABEL_STR("k8s_namespace", "shop"),				\
	TAPROOT_LABEL_STR("k8s_container_name", svc),				\
	TAPROOT_LABEL_STR("k8s_pod_uid", "1234-5678"),				\
	TAPROOT_LABEL_STR("state", "S"),					\
	TAPROOT_LABEL_NUM("pid", 100),						\
	TAPROOT_LABEL_NUM("tid", tid)

static const struct taproot_profile_label l_cart[] = { POD_LABELS("cart", "cart-7d9", 101) };
static const struct taproot_profile_label l_cart2[] = { POD_LABELS("cart", "cart-7d9", 102) };
static const struct taproot_profile_label l_pay[] = { POD_LABELS("pay", "pay-5f2", 201) };

/*
 * An off-CPU profile: its own sample types (off_cpu/nanoseconds, then
 * switches/count), no period; Kubernetes labels under their conventions'
 * names; a part by service_name; a value of 0 leaves the sample out of
 * that type's Profile only; the resource holds, after the caller's
 * attributes, the process, container and pod labels every sample has
 * alike, not one the caller gave nor one with two values.
 */
static void offcpu_by_service(void **state)
{
	struct taproot_profile_desc desc;
	struct taproot_profile *p;
	char *dir = tmpdir(), *t;
	struct request r;
	const struct tn *prof;

	need_otlp_protos();
	taproot_profile_desc_offcpu(&desc);
	desc.time_nanos = TIME_NS;
	assert_int_equal(taproot_profile_new(&desc, &p), 0);
	{
		const int64_t v1[2] = { 5000, 1 }, v2[2] = { 7000, 2 }, v0[2] = { 0, 1 };

		assert_int_equal(taproot_profile_add(p, blocked_read, NR(blocked_read),
						     l_cart, NR(l_cart), v1), 0);
		assert_int_equal(taproot_profile_add(p, blocked_lock, NR(blocked_lock),
						     l_cart2, NR(l_cart2), v2), 0);
		assert_int_equal(taproot_profile_add(p, blocked_read, NR(blocked_read),
						     l_pay, NR(l_pay), v2), 0);
		assert_int_equal(taproot_profile_add(p, blocked_read, NR(blocked_read),
						     l_cart2, NR(l_cart2), v0), 0);
	}

	otlp_vs_pprof(p, NULL, NULL, resource, NR_RESOURCE, dir, &r);
	/* The resource: the caller's, then the labels every sample has alike. */
	assert_non_null(strstr(r.text, RES_ATTR("k8s.namespace.name", "string_value: \"shop\"")));
	assert_non_null(strstr(r.text, RES_ATTR("container.id", "string_value: \"c0ffee\"")));
	assert_null(strstr(r.text, "key: \"k8s.pod.name\""));		/* two pods */
	assert_null(strstr(r.text, RES_ATTR("process.pid", "int_value: 100")));	/* given */
	prof = tn_get(r.scope, "profiles", 0);
	assert_null(tn_get(prof, "period_type", 0));
	assert_int_equal(tn_count(prof, "samples"), 3);		/* not the 0 ns */
	assert_int_equal(tn_count(tn_get(r.scope, "profiles", 1), "samples"), 4);
	assert_int_equal(r.nstack, 1 + 2);			/* read, lock */
	t = sample_attrs(&r, 0, 0);
	assert_string_equal(t, "service.name=\"cart\",container.id=\"c0ffee\","
			       "k8s.pod.name=\"cart-7d9\",k8s.namespace.name=\"shop\","
			       "k8s.container.name=\"cart\",k8s.pod.uid=\"1234-5678\","
			       "state=\"S\",process.pid=100,thread.id=101");
	free(t);
	request_free(&r);

	assert_int_equal(otlp_vs_pprof(p, "service_name", "cart", resource, NR_RESOURCE, dir,
				       &r), 3);
	assert_false(has_string(&r, "pay"));
	t = sample_attrs(&r, 1, 2);
	assert_string_equal(t, "service.name=\"cart\",container.id=\"c0ffee\","
			       "k8s.pod.name=\"cart-7d9\",k8s.namespace.name=\"shop\","
			       "k8s.container.name=\"cart\",k8s.pod.uid=\"1234-5678\","
			       "state=\"S\",process.pid=100,thread.id=102");
	free(t);
	request_free(&r);
	assert_int_equal(otlp_vs_pprof(p, "service_name", "pay", NULL, 0, dir, &r), 1);
	assert_non_null(strstr(r.text, RES_ATTR("service.name", "string_value: \"pay\"")));
	assert_non_null(strstr(r.text, RES_ATTR("k8s.pod.name", "string_value: \"pay-5f2\"")));
	assert_non_null(strstr(r.text, RES_ATTR("process.pid", "int_value: 100")));
	assert_null(strstr(r.text, "key: \"thread.id\""));	/* not the resource's */
	request_free(&r);

	rm_tree(dir);
	free(dir);
	taproot_profile_free(p);
}

/* An empty profile: a Profile per type without samples, tables of zero values. */
static void empty_profile(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	char *dir = tmpdir();
	struct request r;
	void *buf;
	size_t len;

	need_otlp_protos();
	otlp_vs_pprof(p, NULL, NULL, NULL, 0, dir, &r);
	assert_int_equal(tn_count(r.scope, "profiles"), 2);
	assert_int_equal(tn_count(tn_get(r.scope, "profiles", 0), "samples"), 0);
	assert_int_equal(r.nmap + r.nloc + r.nfunc + r.nattr + r.nstack, 5);
	assert_int_equal(r.nstr, 5);		/* "", samples, count, cpu, nanoseconds */
	request_free(&r);
	assert_int_equal(taproot_otlp_encode_part(p, "service_name", "x", NULL, 0, false,
						  &buf, &len), 0);
	assert_null(buf);

	rm_tree(dir);
	free(dir);
	taproot_profile_free(p);
}

/* Label keys and attribute names; a resource attribute needs a key. */
static void attribute_names_and_errors(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_otlp_attr bad[] = { { .key = "host.name", .str = "h" },
						 { .str = "x" } };
	void *buf = (void *)1;
	size_t len = 1;

	assert_string_equal(taproot_otlp_attr_name("service_name"), "service.name");
	assert_string_equal(taproot_otlp_attr_name("hostname"), "host.name");
	assert_string_equal(taproot_otlp_attr_name("exe"), "process.executable.path");
	assert_string_equal(taproot_otlp_attr_name("cgroup"), "process.linux.cgroup");
	assert_string_equal(taproot_otlp_attr_name("k8s_namespace"), "k8s.namespace.name");
	assert_string_equal(taproot_otlp_attr_name("systemd_unit"), "systemd_unit");
	assert_int_equal(taproot_otlp_encode(p, bad, 2, false, &buf, &len), -EINVAL);
	assert_null(buf);
	assert_int_equal(len, 0);
	assert_int_equal(taproot_otlp_encode_part(p, NULL, "x", NULL, 0, false, &buf, &len),
			 -EINVAL);
	taproot_profile_free(p);
}

/*
 * A collector's answer as it sends it, made by the real protoc from the
 * text @text of an ExportProfilesServiceResponse, read back: *@rejected
 * and @msg. The reader's return.
 */
static int response_of(const char *dir, const char *text, int64_t *rejected, char *msg,
		       size_t len)
{
	char *path, *out;
	size_t n;
	void *d;
	int st, ret;

	assert_true(asprintf(&path, "%s/response.bin", dir) > 0);
	out = run(&st, "printf '%%s' '%s' | protoc --encode=" OTLP_RESPONSE " -I " OTLP_PROTO_DIR
		  " " OTLP_SERVICE " >%s", text, path);
	assert_int_equal(st, 0);
	free(out);
	d = read_file(path, &n);
	ret = taproot_otlp_read_response(d, n, rejected, msg, len);
	free(d);
	free(path);
	return ret;
}

/*
 * The collector's answer: what partial_success says it rejected, its
 * message made printable and cut to the buffer; an empty answer rejects
 * nothing; bytes that are no message are refused, and never read past.
 */
static void collector_responses(void **state)
{
	static const uint8_t cut[] = { 0x0a, 0x05, 0x08, 0x03 };	/* length 5, 2 bytes */
	static const uint8_t bad_varint[] = { 0x0a, 0x02, 0x08, 0xff };
	char *dir = tmpdir(), msg[16];
	int64_t rejected = -1;

	need_otlp_protos();
	assert_int_equal(response_of(dir, "partial_success { rejected_profiles: 3 "
				     "error_message: \"too old\" }", &rejected, msg, sizeof(msg)), 0);
	assert_int_equal(rejected, 3);
	assert_string_equal(msg, "too old");
	assert_int_equal(response_of(dir, "", &rejected, msg, sizeof(msg)), 0);
	assert_int_equal(rejected, 0);
	assert_string_equal(msg, "");
	assert_int_equal(response_of(dir, "partial_success { error_message: "
				     "\"bad\\tsample\\n of a long message\" }", &rejected, msg,
				     sizeof(msg)), 0);
	assert_int_equal(rejected, 0);
	assert_string_equal(msg, "bad?sample? of ");
	assert_int_equal(taproot_otlp_read_response(cut, sizeof(cut), &rejected, msg,
						    sizeof(msg)), -EBADMSG);
	assert_int_equal(taproot_otlp_read_response(bad_varint, sizeof(bad_varint), &rejected, msg,
						    sizeof(msg)), -EBADMSG);
	assert_int_equal(taproot_otlp_read_response("<html>", 6, &rejected, msg, sizeof(msg)),
			 -EBADMSG);
	rm_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_cpu_profile),
		cmocka_unit_test(parts_by_label),
		cmocka_unit_test(offcpu_by_service),
		cmocka_unit_test(empty_profile),
		cmocka_unit_test(attribute_names_and_errors),
		cmocka_unit_test(collector_responses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
