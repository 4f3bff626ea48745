/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pprof writer's test fixture, and pprof profiles read back by protoc
 * with Debian's profile.proto, for test_pprof and test_otlp (which checks
 * OTLP against pprof). Include after <cmocka.h>, with <zlib.h>.
 */
#ifndef TAPROOT_TESTS_PPROFCHECK_H
#define TAPROOT_TESTS_PPROFCHECK_H

#include "profile/profile-private.h"
#include "pbtext.h"

#define PROTO_DIR	"/usr/share/gocode/src/github.com/google/pprof/proto"

#define TIME_NS		1700000000123456789LL
#define DURATION_NS	10000000000LL
#define MS		10000000LL	/* one sample's cpu/nanoseconds at 100 Hz */

/* ------------------------------------------------- pprof read by protoc */

static inline void need_protoc(void)
{
	int st;
	char *out = run(&st, "protoc --version 2>&1");

	free(out);
	if (st)
		fail_msg("protoc is missing: install protobuf-compiler (scripts/deps)");
	if (access(PROTO_DIR "/profile.proto", R_OK))
		fail_msg(PROTO_DIR "/profile.proto is missing: install golang-github-google-pprof-dev");
}

/* A decoded profile with its string table. */
struct decoded {
	struct tn root;
	char *text;
	const char **str;
	size_t nstr;
};

static inline void decode(struct decoded *d, const char *gz_path)
{
	int st;

	memset(d, 0, sizeof(*d));
	d->text = run(&st, "gzip -dc '%s' | protoc --decode=perftools.profiles.Profile "
		      "-I " PROTO_DIR " profile.proto", gz_path);
	assert_int_equal(st, 0);
	{
		char *s = strdup(d->text), *cur = s;

		tn_parse(&d->root, &cur);
		free(s);
	}
	d->nstr = tn_count(&d->root, "string_table");
	d->str = calloc(d->nstr, sizeof(*d->str));
	for (size_t i = 0; i < d->nstr; i++)
		d->str[i] = tn_get(&d->root, "string_table", i)->val;
}

static inline void decoded_free(struct decoded *d)
{
	tn_free(&d->root);
	free(d->text);
	free(d->str);
}

static inline const char *dstr(const struct decoded *d, uint64_t idx)
{
	assert_true(idx < d->nstr);
	return d->str[idx];
}

/* Table entry @id (1-based) of @kind, checking that IDs are its index + 1. */
static inline const struct tn *dent(const struct decoded *d, const char *kind, uint64_t id)
{
	const struct tn *e;

	assert_true(id >= 1);
	e = tn_get(&d->root, kind, id - 1);
	assert_non_null(e);
	assert_int_equal(tn_u64(e, "id", 0), id);
	return e;
}

/* ----------------------------------------------------------- fixture */

static const uint8_t app_bid[] = { 0xde, 0xad, 0xbe, 0xef };

#define KFRAME(fn, addr) { .function = (fn), .address = (addr), .is_kernel = true }
#define APP(fn, ln, addr) { .function = (fn), .file = "app.c", .line = (ln),	\
	.mapping_path = "/usr/bin/app", .build_id = app_bid,			\
	.build_id_len = sizeof(app_bid), .mapping_start = 0x400000,		\
	.mapping_limit = 0x500000, .address = (addr) }

/* S1: kernel frames over user code with an inline chain. */
static const struct taproot_profile_frame s1[] = {
	KFRAME("copy_user_generic", 0xffffffff81400000),
	KFRAME("__x64_sys_read", 0xffffffff81200000),
	{ .function = "inner", .file = "app.c", .line = 11, .inlined = true },
	APP("outer", 22, 0x401234),
	APP("main", 33, 0x402000),
};

/* S3: off-wake: waker frames, "--", the blocked stack. */
static const struct taproot_profile_frame s3[] = {
	KFRAME("try_to_wake_up", 0xffffffff81100000),
	APP("waker_fn", 44, 0x403000),
	{ .function = "--" },
	KFRAME("schedule", 0xffffffff81003000),
	APP("blocked_fn", 55, 0x404000),
};

static const struct taproot_profile_frame s4[] = { { .function = "[unknown]" } };

/* S5: an unsymbolized frame of a library. */
static const struct taproot_profile_frame s5[] = {
	{ .mapping_path = "/usr/lib/libfoo.so.1", .mapping_start = 0x7f0000000000,
	  .mapping_limit = 0x7f0000100000, .mapping_offset = 0x1000,
	  .address = 0x7f0000001230 },
	APP("main", 33, 0x402000),
};

static const struct taproot_profile_frame s6[] = { APP("lost_a", 1, 0x405000) };
static const struct taproot_profile_frame s7[] = { APP("lost_b", 2, 0x406000) };

static const struct taproot_profile_label l_s1[] = {
	TAPROOT_LABEL_STR("comm", "app"),
	TAPROOT_LABEL_STR("thread_comm", "worker"),
	TAPROOT_LABEL_STR("state", "R"),
	TAPROOT_LABEL_NUM("pid", 42),
	TAPROOT_LABEL_NUM("tid", 43),
	TAPROOT_LABEL_NUM("cpu", 3),
};
static const struct taproot_profile_label l_s2[] = {
	TAPROOT_LABEL_STR("comm", "app"),
	TAPROOT_LABEL_STR("thread_comm", "worker"),
	TAPROOT_LABEL_STR("state", "R"),
	TAPROOT_LABEL_NUM("pid", 42),
	TAPROOT_LABEL_NUM("tid", 44),
	TAPROOT_LABEL_NUM("cpu", 3),
};
static const struct taproot_profile_label l_s3[] = {
	TAPROOT_LABEL_STR("comm", "app"),
	{ .key = "wait", .num = 1500, .unit = "nanoseconds" },
};
static const struct taproot_profile_label l_s4[] = { TAPROOT_LABEL_STR("comm", "ghost") };

#define NR(a)	(sizeof(a) / sizeof((a)[0]))
#define ADD(fr, lb, ...) do {						\
	const int64_t v_[2] = { __VA_ARGS__ };				\
	assert_int_equal(taproot_profile_add(p, fr, NR(fr), lb, NR(lb), v_), 0); \
} while (0)
#define ADD0(fr, ...) do {						\
	const int64_t v_[2] = { __VA_ARGS__ };				\
	assert_int_equal(taproot_profile_add(p, fr, NR(fr), NULL, 0, v_), 0); \
} while (0)

static inline struct taproot_profile *fixture(void)
{
	static const char *const comments[] = { "taproot test fixture" };
	struct taproot_profile_desc d;
	struct taproot_profile *p;
	struct taproot_profile_stats st;

	taproot_profile_desc_cpu(&d, 100);
	d.time_nanos = TIME_NS;
	d.duration_nanos = DURATION_NS;
	d.max_stacks = 5;
	d.comments = comments;
	d.nr_comments = 1;
	assert_int_equal(taproot_profile_new(&d, &p), 0);

	ADD(s1, l_s1, 1, MS);
	ADD(s1, l_s1, 1, MS);
	ADD(s1, l_s2, 1, MS);
	ADD(s1, l_s1, 1, MS);
	ADD(s3, l_s3, 1, MS);
	ADD(s4, l_s4, 1, MS);
	ADD(s4, l_s4, 1, MS);
	ADD0(s5, 1, MS);
	/* The table is full (5 stacks): new ones fold, known ones merge. */
	ADD0(s6, 1, MS);
	ADD0(s7, 2, 2 * MS);
	ADD(s1, l_s1, 1, MS);
	taproot_profile_stats(p, &st);
	assert_int_equal(st.stacks, 5);
	assert_int_equal(st.folded, 2);
	assert_int_equal(st.adds, 11);
	return p;
}

#endif /* TAPROOT_TESTS_PPROFCHECK_H */
