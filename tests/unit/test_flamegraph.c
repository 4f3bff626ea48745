// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs: the profile's samples read back frame by frame
 * (taproot_profile_foreach_sample()), folded into the tree a flame graph
 * draws (taproot_flamegraph_json()), and the page taprootctl writes from
 * them (ctl/flamegraph.c), opened in a real browser:
 *
 *  - foreach_gives_frames_as_pprof_names_them: every sample once, leaf
 *    first, inline chains expanded, names as pprof shows them (a function,
 *    "[FILE]" of an unsymbolized pc, "<unknown>"), the truncated sample
 *    last, and the walk stops when the callback says so;
 *  - json_folds_samples_into_a_tree: the exact JSON of a small profile
 *    (children by name, values summed, kernel frames marked, zero values
 *    left out), an empty one, another sample type, an unknown one;
 *  - json_is_safe_in_a_script_element: names with '<', quotes, control
 *    and non-UTF-8 bytes; a stack thousands of frames deep;
 *  - page_renders_in_chromium: a raw capture of this process's own stacks
 *    (a chain of noinline functions, as test_rawfile's), replayed by
 *    `taprootctl report --flamegraph FILE`: FILE is mode 0600, has the
 *    library's licences and a policy that forbids network access, and no
 *    reference to load anything; headless Chromium, with every host name
 *    unresolvable and its network log on, draws the workload's functions
 *    as flame graph cells (named, titled, in proportion) under the page's
 *    title, and makes no request (a page that does load a remote image is
 *    seen in that log: the check can fail); then in a page that frames
 *    it, FILE#search=fgw_leaf highlights that function's cell alone and
 *    sums its samples, a click on a cell zooms into it, a search that is
 *    no regular expression is one for its text, and an empty one clears;
 *  - options_refused: --flamegraph without the CPU profile;
 *  - template_from_outside: the page's template is a file taprootctl
 *    reads ($TAPROOT_FLAMEGRAPH_PAGE, else the build tree's): one named
 *    there is filled in as it is; one missing, or without its markers
 *    ({{title}}, {{subtitle}}, {{data}}) or with another's, is an error
 *    naming it and nothing is written;
 *  - library_not_in_the_program: what is distinctive of the library and
 *    its licences is in the build tree's template, not in taprootctl (the
 *    library's licence, Apache-2.0, does not go with taprootctl's).
 *
 * The page tests need ctl/taprootctl and build/gen/flamegraph-page.html
 * (make unit builds them first) and chromium-headless-shell (scripts/deps
 * installs it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/taproot.h>

#include "taproot.h"
#include "ownstack.h"
#include "runcmd.h"
#include "newprofile.h"

#define CTL		"ctl/taprootctl"
/* The template taprootctl reads when run from this tree (ctl/flamegraph.h). */
#define TEMPLATE	"build/gen/flamegraph-page.html"
#define TEMPLATE_ENV	"TAPROOT_FLAMEGRAPH_PAGE"
#define CHROMIUM	"chromium-headless-shell"

/* ------------------------------------------------------------ helpers */

/* A user frame of /usr/bin/app. */
#define UFRAME(fn, addr) { .function = (fn), .mapping_path = "/usr/bin/app",	\
	.mapping_start = 0x400000, .mapping_limit = 0x500000, .address = (addr) }
#define KFRAME(fn, addr) { .function = (fn), .address = (addr), .is_kernel = true }

static const int64_t one[2] = { 1, 10000000 };

/* Add the stack of @n frames @f (leaf first) @times times, no labels. */
static void add(struct taproot_profile *p, const struct taproot_profile_frame *f, size_t n,
		int times)
{
	for (int i = 0; i < times; i++)
		assert_int_equal(taproot_profile_add(p, f, n, NULL, 0, one), 0);
}

/* taproot_flamegraph_json() of @p for @type, as a string to free; *@total its root's value. */
static char *fg_json(const struct taproot_profile *p, const char *type, int64_t *total, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*err = taproot_flamegraph_json(p, type, f, total);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* ------------------------------------------------- reading the samples */

/* What foreach gave: one line per sample, "VALUE: NAME[*] NAME ...", '*' when inlined. */
struct seen {
	char text[2048];
	size_t len;
	int calls, stop_at;
	const struct taproot_profile_frame_view *last;
};

static int see(const int64_t *values, const struct taproot_profile_frame_view *frames,
	       size_t nr, void *arg)
{
	struct seen *s = arg;

	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "%lld:",
				   (long long)values[0]);
	for (size_t i = 0; i < nr; i++)
		s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, " %s%s",
					   frames[i].name, frames[i].inlined ? "*" : "");
	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "\n");
	assert_true(s->len < sizeof(s->text));
	s->last = frames;
	return ++s->calls == s->stop_at ? 42 : 0;
}

/* Frames of the first sample, to check the fields other than the name. */
static int check_first(const int64_t *values, const struct taproot_profile_frame_view *f,
		       size_t nr, void *arg)
{
	assert_int_equal(nr, 7);
	/* The inline chain: two frames, one location, the outer's address and mapping. */
	assert_string_equal(f[0].name, "inl_leaf");
	assert_true(f[0].inlined);
	assert_string_equal(f[0].mapping, "/usr/bin/app");
	assert_int_equal(f[0].address, 0x401010);
	assert_string_equal(f[1].name, "outer");
	assert_false(f[1].inlined);
	assert_int_equal(f[1].address, 0x401010);
	/* Unsymbolized in a library: its file's base name; in "[vdso]": as it is. */
	assert_string_equal(f[2].name, "[libfoo.so.1]");
	assert_string_equal(f[2].mapping, "/usr/lib/libfoo.so.1");
	assert_int_equal(f[2].address, 0x7f0000001234);
	assert_string_equal(f[3].name, "[vdso]");
	/* Nothing known at all. */
	assert_string_equal(f[4].name, "<unknown>");
	assert_null(f[4].mapping);
	/* A marker: its function, no mapping, no address. */
	assert_string_equal(f[5].name, "[unknown]");
	assert_null(f[5].mapping);
	assert_int_equal(f[5].address, 0);
	/* A kernel frame: the kernel's mapping. */
	assert_string_equal(f[6].name, "do_syscall_64");
	assert_string_equal(f[6].mapping, "[kernel.kallsyms]");
	assert_int_equal(values[0], 1);
	assert_int_equal(values[1], 10000000);
	return 1;
}

static void foreach_gives_frames_as_pprof_names_them(void **state)
{
	struct taproot_profile *p = new_cpu(3);
	const struct taproot_profile_frame a[] = {
		{ .function = "inl_leaf", .inlined = true },
		{ .function = "outer", .mapping_path = "/usr/bin/app", .mapping_start = 0x400000,
		  .mapping_limit = 0x500000, .address = 0x401010 },
		{ .mapping_path = "/usr/lib/libfoo.so.1", .mapping_start = 0x7f0000000000,
		  .mapping_limit = 0x7f0000100000, .address = 0x7f0000001234 },
		{ .mapping_path = "[vdso]", .mapping_start = 0x7ffff000,
		  .mapping_limit = 0x7ffff800, .address = 0x7ffff100 },
		{ .address = 0x1234 },
		{ .function = "[unknown]" },
		KFRAME("do_syscall_64", 0xffffffff81001000),
	};
	const struct taproot_profile_frame b[] = { UFRAME("leaf", 0x401000),
						   UFRAME("main", 0x402000) };
	const struct taproot_profile_frame c[] = { UFRAME("main", 0x402000) };
	const struct taproot_profile_frame d[] = { UFRAME("other", 0x403000) };
	const struct taproot_profile_label l = TAPROOT_LABEL_STR("comm", "app");
	struct seen s = { 0 };

	assert_int_equal(taproot_profile_sample_type_index(p, "samples"), 0);
	assert_int_equal(taproot_profile_sample_type_index(p, "cpu"), 1);
	assert_int_equal(taproot_profile_sample_type_index(p, "count"), -ENOENT);
	assert_int_equal(taproot_profile_sample_type_index(p, "nope"), -ENOENT);

	/* Nothing yet: no call. */
	assert_int_equal(taproot_profile_foreach_sample(p, see, &s), 0);
	assert_int_equal(s.calls, 0);

	add(p, a, 7, 1);
	add(p, b, 2, 2);
	/* The same stack with labels: another entry, another call. */
	assert_int_equal(taproot_profile_add(p, b, 2, &l, 1, one), 0);
	/* The table holds 3: these go to the truncated sample. */
	add(p, c, 1, 2);
	add(p, d, 1, 1);
	assert_int_equal(taproot_profile_foreach_sample(p, see, &s), 0);
	print_message("%s", s.text);
	assert_string_equal(s.text,
			    "1: inl_leaf* outer [libfoo.so.1] [vdso] <unknown> [unknown] "
			    "do_syscall_64\n"
			    "2: leaf main\n"
			    "1: leaf main\n"
			    "3: [truncated: stack table full]\n");
	assert_int_equal(taproot_profile_foreach_sample(p, check_first, NULL), 1);

	/* A callback's non-zero return ends the walk and is returned. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(taproot_profile_foreach_sample(p, see, &s), 42);
	assert_int_equal(s.calls, 2);
	taproot_profile_free(p);
}

/* ------------------------------------------------------- the JSON tree */

static void json_folds_samples_into_a_tree(void **state)
{
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame bam[] = { UFRAME("b", 0x401100), UFRAME("a", 0x401000),
						     UFRAME("main", 0x402000) };
	const struct taproot_profile_frame cam[] = { UFRAME("c", 0x401200), UFRAME("a", 0x401000),
						     UFRAME("main", 0x402000) };
	const struct taproot_profile_frame m[] = { UFRAME("main", 0x402000) };
	const struct taproot_profile_frame km[] = { KFRAME("sys_read", 0xffffffff81002000),
						    UFRAME("main", 0x402000) };
	/* Another binary's "main", another root: one node per name, whatever the address. */
	const struct taproot_profile_frame zm[] = { UFRAME("main", 0x402100),
						    UFRAME("_start", 0x400100) };
	const int64_t zero[2] = { 0, 0 };
	int64_t total = -1;
	char *json;
	int err;

	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	assert_string_equal(json, "{\"n\":\"all\",\"v\":0}\n");
	assert_int_equal(total, 0);
	free(json);

	add(p, bam, 3, 2);
	add(p, cam, 3, 1);
	add(p, m, 1, 1);
	add(p, km, 2, 1);
	add(p, zm, 2, 3);
	/* A sample of value 0 adds no node. */
	assert_int_equal(taproot_profile_add(p, (const struct taproot_profile_frame[]){
		UFRAME("zero", 0x405000) }, 1, NULL, 0, zero), 0);
	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	print_message("%s", json);
	assert_string_equal(json,
		"{\"n\":\"all\",\"v\":8,\"c\":["
		"{\"n\":\"_start\",\"v\":3,\"c\":[{\"n\":\"main\",\"v\":3}]},"
		"{\"n\":\"main\",\"v\":5,\"c\":["
		"{\"n\":\"a\",\"v\":3,\"c\":[{\"n\":\"b\",\"v\":2},{\"n\":\"c\",\"v\":1}]},"
		"{\"n\":\"sys_read\",\"v\":1,\"l\":\"kernel\"}]}]}\n");
	assert_int_equal(total, 8);
	free(json);

	/* Another sample type: the same tree in its unit. */
	json = fg_json(p, "cpu", &total, &err);
	assert_int_equal(err, 0);
	assert_non_null(strstr(json, "{\"n\":\"all\",\"v\":80000000,"));
	assert_non_null(strstr(json, "{\"n\":\"b\",\"v\":20000000}"));
	assert_int_equal(total, 80000000);
	free(json);

	json = fg_json(p, "nanoseconds", &total, &err);
	assert_int_equal(err, -ENOENT);
	assert_non_null(strstr(taproot_errmsg(err), "nanoseconds"));
	free(json);
	taproot_profile_free(p);
}

static void json_is_safe_in_a_script_element(void **state)
{
	enum { DEEP = 5000 };
	struct taproot_profile *p = new_cpu(0);
	const struct taproot_profile_frame odd[] = {
		UFRAME("</script><b>\"x\"\\", 0x401000),
		UFRAME("tab\there & \xff\xc3\xa9t\xc3", 0x402000),
	};
	/* A surrogate and an overlong form (not UTF-8 whatever their bytes say), DEL. */
	const struct taproot_profile_frame bad[] = { UFRAME("s\xed\xa0\x80o\xe0\x80\xaf\x7f",
							    0x403000) };
	struct taproot_profile_frame *deep = calloc(DEEP, sizeof(*deep));
	char names[DEEP][16];
	int64_t total;
	size_t opens = 0, closes = 0;
	char *json;
	int err;

	assert_non_null(deep);
	add(p, odd, 2, 1);
	add(p, bad, 1, 1);
	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	print_message("%s", json);
	/* No '<', '>' or '&' anywhere; quotes and backslashes escaped; é kept. */
	assert_null(strpbrk(json, "<>&"));
	assert_string_equal(json,
		"{\"n\":\"all\",\"v\":2,\"c\":["
		"{\"n\":\"s\\ufffd\\ufffd\\ufffdo\\ufffd\\ufffd\\ufffd\\u007f\",\"v\":1},"
		"{\"n\":\"tab\\u0009here \\u0026 \\ufffd\xc3\xa9t\\ufffd\",\"v\":1,\"c\":["
		"{\"n\":\"\\u003c/script\\u003e\\u003cb\\u003e\\\"x\\\"\\\\\",\"v\":1}]}]}\n");
	free(json);
	taproot_profile_free(p);

	/* Deeper than any real stack: written without recursion, every node closed. */
	p = new_cpu(0);
	for (int i = 0; i < DEEP; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		deep[i] = (struct taproot_profile_frame)UFRAME(names[i], 0x401000 + (uint64_t)i);
	}
	add(p, deep, DEEP, 1);
	add(p, deep + 1, DEEP - 1, 1);
	json = fg_json(p, "samples", &total, &err);
	assert_int_equal(err, 0);
	assert_int_equal(total, 2);
	for (const char *c = json; *c; c++) {
		opens += *c == '{';
		closes += *c == '}';
	}
	assert_int_equal(opens, DEEP + 1);
	assert_int_equal(closes, DEEP + 1);
	/* The outermost frame under the root; the leaf's caller has value 2, the leaf 1. */
	assert_non_null(strstr(json, "{\"n\":\"all\",\"v\":2,\"c\":[{\"n\":\"f4999\",\"v\":2,"));
	assert_non_null(strstr(json, "{\"n\":\"f1\",\"v\":2,\"c\":[{\"n\":\"f0\",\"v\":1}]}"));
	free(json);
	free(deep);
	taproot_profile_free(p);
}

/* ------------------------------------------------- the page, in a browser */

static char tmpdir[] = "/tmp/test-flamegraph-XXXXXX";
static volatile int sink;

/*
 * The workload whose stacks the page must show: fgw_outer calls
 * fgw_middle, which calls fgw_leaf, and fgw_other; each leaf captures its
 * own stack. The values are used after each call, so no call is a tail
 * call that would leave its caller out of the stack; no clone renames
 * one (fgw_leaf.constprop.0).
 */
__attribute__((noinline, noclone)) static int fgw_leaf(struct ownstack *c, int x)
{
	OWNSTACK_CAPTURE(c);
	sink = x;
	return x + 1;
}

__attribute__((noinline, noclone)) static int fgw_other(struct ownstack *c, int x)
{
	OWNSTACK_CAPTURE(c);
	sink = x;
	return x + 2;
}

__attribute__((noinline, noclone)) static int fgw_middle(struct ownstack *c, int x)
{
	int r = fgw_leaf(c, x * 2);

	sink = r;
	return r + 3;
}

__attribute__((noinline, noclone)) static int fgw_outer(struct ownstack *leaf, struct ownstack *other)
{
	int r = fgw_middle(leaf, 1) + fgw_other(other, 2);

	sink = r;
	return r;
}

/* What record --raw does: the process model's reads into the file as they happen. */
static void rec_read(void *arg, int pid, enum taproot_proc_file file, int err,
		     const char *data, size_t len)
{
	assert_int_equal(taproot_raw_write_proc(arg, pid, file, err, data, len), 0);
}

static void rec_elf(void *arg, uint64_t dev, uint64_t ino, const char *path,
		    const uint8_t *bid, size_t bid_len)
{
	assert_int_equal(taproot_raw_write_elf(arg, dev, ino, path, bid, bid_len), 0);
}

/*
 * A raw capture at @path of 3 samples of fgw_leaf's stack and 1 of
 * fgw_other's, as record --raw writes one (test_rawfile's
 * rawfile_replay_self checks that a replay holds the same stacks).
 */
static void write_capture(const char *path)
{
	static const char ksyms[] = "ffffffff81000000 T _stext\n";
	struct ownstack *leaf = calloc(1, sizeof(*leaf)), *other = calloc(1, sizeof(*other));
	struct taproot_raw_header h = {
		.abi_version = TAPROOT_ABI_VERSION, .kernel_release = "6.1.0-test",
		.hostname = "fg-test-host", .freq_hz = 99, .cpu = true, .sched_one_in = 1,
		.start_ns = 1700000000000000000ull,
	};
	struct taproot_raw_end end = { .duration_ns = 2500000000ull };
	struct taproot_procs_observer obs = { .read = rec_read, .elf = rec_elf };
	struct taproot_pipeline_opts o;
	struct taproot_procs_opts po;
	struct taproot_raw_writer *w;
	struct taproot_pipeline *p;
	struct taproot_ksyms *ks;
	char comm[32] = "";
	FILE *f;

	assert_non_null(leaf);
	assert_non_null(other);
	ownstack_init();
	assert_int_equal(fgw_outer(leaf, other), 10);
	f = fmemopen((void *)ksyms, strlen(ksyms), "r");
	assert_non_null(f);
	assert_int_equal(taproot_ksyms_read(f, &ks), 0);
	fclose(f);
	/* The main thread's samples carry the real comm, as the kernel's do. */
	f = fopen("/proc/self/comm", "re");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';

	assert_int_equal(taproot_raw_writer_new(path, &h, &w), 0);
	assert_int_equal(taproot_raw_write_ksyms(w, ksyms, strlen(ksyms)), 0);
	obs.arg = w;
	taproot_procs_opts_default(&po);
	po.observer = &obs;
	taproot_pipeline_opts_default(&o);
	o.freq_hz = h.freq_hz;
	o.ksyms = ks;
	o.hostname = h.hostname;
	o.kernel_release = h.kernel_release;
	o.procs = &po;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	assert_int_equal(taproot_pipeline_prewarm(p), 0);
	for (int i = 0; i < 4; i++) {
		struct taproot_rec_header *rec = ownstack_sample(i < 3 ? leaf : other,
							       (uint32_t)getpid(),
							       (uint32_t)getpid(), NULL, 0, comm);

		/* As record: the pipeline first (its /proc reads go before), then the record. */
		assert_int_equal(taproot_pipeline_add_record(p, rec, 1), 0);
		assert_int_equal(taproot_raw_write_record(w, 1, rec), 0);
		free(rec);
	}
	taproot_pipeline_end_round(p);
	assert_int_equal(taproot_raw_write_round(w), 0);
	assert_int_equal(taproot_raw_writer_finish(w, &end), 0);
	taproot_pipeline_free(p);
	taproot_ksyms_free(ks);
	free(leaf);
	free(other);
}

/*
 * The output of the shell command printf(@fmt, ...), stderr included, to
 * free; *@status its exit status, which may well be an error's.
 */
static char *run_cli(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *run_cli(int *status, const char *fmt, ...)
{
	char *cmd, *out, *tail;
	va_list ap;
	int sh;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	out = run(&sh, "%s 2>&1; echo \"[exit $?]\"", cmd);
	assert_int_equal(sh, 0);
	tail = strrchr(out, '[');
	assert_non_null(tail);
	assert_int_equal(sscanf(tail, "[exit %d]", status), 1);
	*tail = '\0';
	free(cmd);
	return out;
}

/* The whole of @path, NUL-terminated; *@len its length. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* @page without its <script> elements' contents: the markup a browser reads for what to load. */
static char *markup(const char *page)
{
	char *out = strdup(page), *o = out;
	const char *s = page;

	assert_non_null(out);
	while (*s) {
		const char *open = strstr(s, "<script"), *close;

		if (!open) {
			strcpy(o, s);
			return out;
		}
		close = strstr(open, "</script>");
		assert_non_null(close);
		memcpy(o, s, (size_t)(open - s));
		o += open - s;
		s = close + strlen("</script>");
	}
	*o = '\0';
	return out;
}

/*
 * Open file://@path in headless Chromium, every host name unresolvable,
 * the network log in @netlog; its DOM once the page's scripts ran (with
 * reduced motion: no transitions to wait for). Its console errors fail
 * the test.
 */
static char *chromium_dom(const char *path, const char *netlog, const char *more)
{
	char log[256], *dom, *err;
	size_t len;
	int status;

	snprintf(log, sizeof(log), "%s/chromium.log", tmpdir);
	dom = run(&status, "%s --no-sandbox --disable-gpu --window-size=1400,900 "
		  "--force-prefers-reduced-motion --virtual-time-budget=10000 "
		  "--host-resolver-rules='MAP * ~NOTFOUND' --log-net-log=%s %s "
		  "--dump-dom 'file://%s' 2>%s", CHROMIUM, netlog, more, path, log);
	assert_int_equal(status, 0);
	err = slurp(log, &len);
	if (strstr(err, "CONSOLE"))
		fail_msg("%s: the page's console says:\n%s", path, err);
	free(err);
	return dom;
}

/* The URLs Chromium's network log (--log-net-log) shows a request for, one a line. */
static char *requests(const char *netlog)
{
	size_t len, n = 0;
	char *log = slurp(netlog, &len), *out = calloc(1, len + 1);
	const char *s = log;

	assert_non_null(out);
	/* Every request's events carry its URL as "url":"..." in their params. */
	while ((s = strstr(s, "\"url\":\"")) != NULL) {
		const char *u = s + strlen("\"url\":\""), *e = strchr(u, '"');

		assert_non_null(e);
		memcpy(out + n, u, (size_t)(e - u));
		n += (size_t)(e - u);
		out[n++] = '\n';
		s = e;
	}
	out[n] = '\0';
	free(log);
	return out;
}

/* Fail unless @dom holds @needle. */
static void want(const char *what, const char *dom, const char *needle)
{
	if (!strstr(dom, needle))
		fail_msg("%s lacks '%s':\n%.4000s", what, needle, dom);
}

/*
 * The harness that frames the page and does what a user does, reading
 * back the frame's DOM after each step: the search the address asked for,
 * a click on fgw_middle, a search that is not a valid expression, none.
 */
static const char harness[] =
	"<!DOCTYPE html><html><body><pre id=\"result\">pending</pre>\n"
	"<iframe id=\"f\" src=\"fg.html#search=fgw_leaf\" "
	"style=\"width:1400px;height:800px;border:0\"></iframe>\n"
	"<script>\n"
	"const f = document.getElementById('f'), out = [];\n"
	"const cell = (n) => f.contentDocument.querySelector('g.frame[name=\"' + n + '\"]');\n"
	"const width = (n) => cell(n) ? cell(n).getAttribute('width') : 'none';\n"
	"const lit = () => [...f.contentDocument.querySelectorAll('g.frame')].filter((g) =>\n"
	"  (g.querySelector('rect').getAttribute('fill') || '').toUpperCase() === '#E600E6')\n"
	"  .map((g) => g.getAttribute('name')).join(',');\n"
	"const details = () => f.contentDocument.getElementById('details').textContent;\n"
	"const steps = [\n"
	"  () => {\n"
	"    out.push('searched=' + f.contentDocument.getElementById('search').value);\n"
	"    out.push('highlighted=' + lit());\n"
	"    out.push('details=' + details());\n"
	"    out.push('before: all=' + width('all') + ' middle=' + width('fgw_middle') +\n"
	"             ' other=' + width('fgw_other'));\n"
	"    cell('fgw_middle').dispatchEvent(new MouseEvent('click', { bubbles: true }));\n"
	"  },\n"
	"  () => {\n"
	"    out.push('zoomed: all=' + width('all') + ' middle=' + width('fgw_middle') +\n"
	"             ' leaf=' + width('fgw_leaf') + ' other=' + width('fgw_other'));\n"
	"    out.push('outer=' + cell('fgw_outer').getAttribute('class'));\n"
	"    f.contentWindow.location.hash = '#search=' + encodeURIComponent('fgw_(');\n"
	"  },\n"
	"  () => {\n"
	"    out.push('bad=' + f.contentDocument.getElementById('search').className +\n"
	"             ' [' + lit() + '] ' + details());\n"
	"    f.contentWindow.location.hash = '';\n"
	"  },\n"
	"  () => {\n"
	"    out.push('cleared=[' + lit() + '] [' + details() + ']');\n"
	"    document.getElementById('result').textContent = '\\n' + out.join('\\n') + '\\n';\n"
	"  },\n"
	"];\n"
	"const next = (i) => setTimeout(() => { steps[i](); if (i + 1 < steps.length) next(i + 1); },\n"
	"                               1000);\n"
	"f.addEventListener('load', () => next(0));\n"
	"</script></body></html>\n";

/* The width attribute of @name's cell in @dom, as a number (-1: none). */
static double cell_width(const char *dom, const char *name)
{
	char needle[128];
	const char *c, *w;

	snprintf(needle, sizeof(needle), "name=\"%s\"", name);
	c = strstr(dom, needle);
	if (!c)
		return -1;
	/* d3-flame-graph sets the cell's width before its name: look back in its <g>. */
	while (c > dom && strncmp(c, "<g ", 3))
		c--;
	w = strstr(c, " width=\"");
	assert_non_null(w);
	return strtod(w + strlen(" width=\""), NULL);
}

static void page_renders_in_chromium(void **state)
{
	char raw[128], out[128], page[128], netlog[128], hpath[128], ctrl[128];
	char *text, *marks, *dom, *reqs, *res;
	struct stat st;
	size_t len;
	int status;
	FILE *f;

	if (access(CTL, X_OK))
		fail_msg("%s is missing: run the tests through 'make unit', which builds it", CTL);
	free(run(&status, "command -v %s", CHROMIUM));
	if (status)
		fail_msg("no %s: scripts/deps installs it", CHROMIUM);
	snprintf(raw, sizeof(raw), "%s/fg.raw", tmpdir);
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	snprintf(page, sizeof(page), "%s/fg.html", tmpdir);
	snprintf(netlog, sizeof(netlog), "%s/net.json", tmpdir);
	snprintf(hpath, sizeof(hpath), "%s/harness.html", tmpdir);
	snprintf(ctrl, sizeof(ctrl), "%s/control.html", tmpdir);
	write_capture(raw);

	/* Any umask: the page names the functions profiled, as the profiles do. */
	text = run_cli(&status, "umask 022 && %s report %s --output %s --flamegraph %s",
		       CTL, raw, out, page);
	if (status)
		fail_msg("report --flamegraph failed (%d):\n%s", status, text);
	free(text);
	assert_int_equal(stat(page, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	text = slurp(page, &len);
	print_message("  %s: %zu bytes\n", page, len);
	/* The library and its licences are in the file; it needs nothing else. */
	want("the page", text, "Licensed under the Apache License, Version 2.0");
	want("the page", text, "Permission to use, copy, modify, and/or distribute this software");
	want("the page", text, "<meta http-equiv=\"Content-Security-Policy\"\n"
	     "      content=\"default-src 'none'; script-src 'unsafe-inline'; "
	     "style-src 'unsafe-inline'\">");
	marks = markup(text);
	for (const char *bad = "src=\0href=\0<link\0<iframe\0<img\0@import\0url(\0";
	     *bad; bad += strlen(bad) + 1)
		if (strstr(marks, bad))
			fail_msg("the page's markup holds '%s', which may load something:\n%s", bad,
				 marks);
	free(marks);
	want("the page", text, "\"n\":\"fgw_leaf\",\"v\":3");
	/* Every marker of the template filled in. */
	for (const char *m = "{{title}}\0{{subtitle}}\0{{data}}\0"; *m; m += strlen(m) + 1)
		if (strstr(text, m))
			fail_msg("the page still holds the template's %s", m);
	free(text);

	/*
	 * Opened as a user opens it: the cells, the title, no request at all.
	 * A cell is checked by what the library sets as it draws it (its name,
	 * its <title>, its width), not by its label: that text is set in a
	 * transition, on an animation frame, which comes in real time while
	 * the page's clock is virtual: it may not have come yet.
	 */
	dom = chromium_dom(page, netlog, "");
	want("the page as drawn", dom, "<h1>recording fg.raw on fg-test-host</h1>");
	want("the page as drawn", dom, "4 CPU samples at 99 Hz over 2.5 s");
	for (const char *fn = "fgw_outer\0fgw_middle\0fgw_leaf\0fgw_other\0"; *fn;
	     fn += strlen(fn) + 1) {
		char needle[128];

		snprintf(needle, sizeof(needle), "name=\"%s\" class=\"frame\">", fn);
		want("the page as drawn", dom, needle);
		snprintf(needle, sizeof(needle), "<title>%s (", fn);
		want("the page as drawn", dom, needle);
	}
	want("the page as drawn", dom, "<title>fgw_leaf (75.000%, 3 samples)</title>");
	want("the page as drawn", dom, "<title>fgw_other (25.000%, 1 samples)</title>");
	assert_true(cell_width(dom, "fgw_leaf") > 0);
	/* The leaf's cell is three quarters of its caller's, as its samples. */
	assert_true(cell_width(dom, "fgw_leaf") / cell_width(dom, "fgw_outer") > 0.74);
	assert_true(cell_width(dom, "fgw_leaf") / cell_width(dom, "fgw_outer") < 0.76);
	free(dom);
	reqs = requests(netlog);
	if (reqs[0])
		fail_msg("opening the page requested:\n%s", reqs);
	free(reqs);

	/* The log does show a request when there is one: the check above can fail. */
	f = fopen(ctrl, "we");
	assert_non_null(f);
	fputs("<!DOCTYPE html><img src=\"http://flamegraph.example/x.png\">\n", f);
	fclose(f);
	free(chromium_dom(ctrl, netlog, ""));
	reqs = requests(netlog);
	want("the control page's requests", reqs, "http://flamegraph.example/x.png");
	free(reqs);

	/* Searched from the page's address, then a cell clicked. */
	f = fopen(hpath, "we");
	assert_non_null(f);
	fputs(harness, f);
	fclose(f);
	dom = chromium_dom(hpath, netlog, "--allow-file-access-from-files");
	res = strstr(dom, "<pre id=\"result\">");
	assert_non_null(res);
	print_message("%.600s\n", res);
	want("the harness", res, "\nsearched=fgw_leaf\n");
	want("the harness", res, "\nhighlighted=fgw_leaf\n");
	want("the harness", res, "\ndetails=search: 3 of 4 samples (75.0%)\n");
	/* Zoomed into fgw_middle: it spans the chart, its sibling is gone, its callers fade. */
	{
		double all, middle, leaf;
		const char *z = strstr(res, "\nzoomed: ");

		assert_non_null(z);
		assert_int_equal(sscanf(z, "\nzoomed: all=%lf middle=%lf leaf=%lf", &all, &middle,
					&leaf), 3);
		assert_true(all > 1000);
		assert_true(middle == all);
		assert_true(leaf == all);
		want("the harness", z, " other=none\n");
		want("the harness", res, "\nouter=frame fade\n");
	}
	/* Not an expression: searched as text, and the box says so. None: all cleared. */
	want("the harness", res, "\nbad=bad [] search: no frame matches\n");
	want("the harness", res, "\ncleared=[] []\n");
	free(dom);
	free(run(&status, "rm -rf %s/*", tmpdir));
}

static void options_refused(void **state)
{
	char raw[128], out[128];
	int status;
	char *text;

	if (access(CTL, X_OK))
		fail_msg("%s is missing: run the tests through 'make unit', which builds it", CTL);
	text = run_cli(&status, "%s record --events offcpu --flamegraph %s/x.html --output %s/d",
		       CTL, tmpdir, tmpdir);
	assert_int_equal(status, 2);
	want("record --events offcpu --flamegraph", text, "it needs --events cpu");
	free(text);
	text = run_cli(&status, "%s report x.raw --output %s/d --flamegraph", CTL, tmpdir);
	assert_int_equal(status, 2);
	want("report --flamegraph", text, "'report --flamegraph' needs a value");
	free(text);

	/* A recording without CPU samples: refused before anything is written. */
	snprintf(raw, sizeof(raw), "%s/offcpu.raw", tmpdir);
	snprintf(out, sizeof(out), "%s/out-offcpu", tmpdir);
	{
		struct taproot_raw_header h = {
			.abi_version = TAPROOT_ABI_VERSION, .kernel_release = "6.1.0-test",
			.freq_hz = 99, .offcpu = true, .sched_one_in = 1,
		};
		struct taproot_raw_end end = { .duration_ns = 1000000000 };
		struct taproot_raw_writer *w;

		assert_int_equal(taproot_raw_writer_new(raw, &h, &w), 0);
		assert_int_equal(taproot_raw_writer_finish(w, &end), 0);
	}
	text = run_cli(&status, "%s report %s --output %s --flamegraph %s/x.html", CTL, raw, out,
		       tmpdir);
	assert_int_equal(status, 1);
	want("report --flamegraph of an off-CPU recording", text,
	     "'report --flamegraph' draws the CPU profile");
	free(text);
	assert_int_equal(access(out, F_OK), -1);
	free(run(&status, "rm -rf %s/*", tmpdir));
}

/* A recording of CPU samples with no sample at all, at @path. */
static void write_empty_cpu(const char *path)
{
	struct taproot_raw_header h = {
		.abi_version = TAPROOT_ABI_VERSION, .kernel_release = "6.1.0-test",
		.hostname = "tpl-host", .freq_hz = 99, .cpu = true, .sched_one_in = 1,
	};
	struct taproot_raw_end end = { .duration_ns = 1000000000 };
	struct taproot_raw_writer *w;

	assert_int_equal(taproot_raw_writer_new(path, &h, &w), 0);
	assert_int_equal(taproot_raw_writer_finish(w, &end), 0);
}

/* Write @text to @path. */
static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void template_from_outside(void **state)
{
	/*
	 * Not templates: none there, no markers, two trees, the source's
	 * page.html (the library not inlined yet).
	 */
	static const struct {
		const char *file, *text, *says;
	} bad[] = {
		{ "none.html", NULL, "No such file or directory" },
		{ "plain.html", "<!DOCTYPE html><p>no markers here {{ }}</p>\n",
		  "no {{title}} marker" },
		{ "twice.html", "{{title}}{{subtitle}}{{data}}{{data}}", "2 {{data}} markers" },
		{ "source.html", "{{title}}{{subtitle}}{{data}}{{scripts}}",
		  "unknown marker {{scripts}}" },
	};
	char raw[128], out[128], page[128], tpl[128];
	size_t len;
	int status;
	char *text;

	if (access(CTL, X_OK))
		fail_msg("%s is missing: run the tests through 'make unit', which builds it", CTL);
	snprintf(raw, sizeof(raw), "%s/cpu.raw", tmpdir);
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	snprintf(page, sizeof(page), "%s/fg.html", tmpdir);
	write_empty_cpu(raw);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(tpl, sizeof(tpl), "%s/%s", tmpdir, bad[i].file);
		if (bad[i].text)
			put(tpl, bad[i].text);
		text = run_cli(&status, "%s=%s %s report %s --output %s --flamegraph %s",
			       TEMPLATE_ENV, tpl, CTL, raw, out, page);
		print_message("  %s", text);
		assert_int_equal(status, 1);
		want("report with a bad template", text, tpl);
		want("report with a bad template", text, "$" TEMPLATE_ENV);
		want("report with a bad template", text, bad[i].says);
		free(text);
		/* Refused before anything is written: no page, no profiles. */
		assert_int_equal(access(page, F_OK), -1);
		assert_int_equal(access(out, F_OK), -1);
	}

	/* One of ours: filled in as it is, whatever else it holds. */
	snprintf(tpl, sizeof(tpl), "%s/mine.html", tmpdir);
	put(tpl, "<title>{{title}}</title>{ {{x}{{title}}|{{subtitle}}|{{data}}|{{\n");
	text = run_cli(&status, "%s=%s %s report %s --output %s --flamegraph %s", TEMPLATE_ENV,
		       tpl, CTL, raw, out, page);
	if (status)
		fail_msg("report with a template of its own failed (%d):\n%s", status, text);
	free(text);
	text = slurp(page, &len);
	assert_string_equal(text,
		"<title>recording cpu.raw on tpl-host</title>{ {{x}recording cpu.raw on tpl-host|"
		"0 CPU samples at 99 Hz over 1.0 s (taprootctl report, taproot " TAPROOT_VERSION
		")|{\"n\":\"all\",\"v\":0}\n|{{\n");
	free(text);
	free(run(&status, "rm -rf %s/*", tmpdir));
}

static void library_not_in_the_program(void **state)
{
	/*
	 * The library's name, its licence's words, the bundle's own code
	 * (its UMD wrapper's global), the name of the bundle's file.
	 */
	static const char *const lib[] = {
		"d3-flame-graph", "Licensed under the Apache License", "flamegraph={}",
		"d3-flamegraph.umd.min.js",
	};
	size_t tlen, blen;
	char *tpl, *bin;

	if (access(CTL, X_OK) || access(TEMPLATE, R_OK))
		fail_msg("%s or %s is missing: run the tests through 'make unit', which builds "
			 "them", CTL, TEMPLATE);
	tpl = slurp(TEMPLATE, &tlen);
	bin = slurp(CTL, &blen);
	for (size_t i = 0; i < sizeof(lib) / sizeof(lib[0]); i++) {
		/* In the template: the check below can fail. */
		if (!memmem(tpl, tlen, lib[i], strlen(lib[i])))
			fail_msg("%s lacks '%s': pick what is distinctive of its library now",
				 TEMPLATE, lib[i]);
		if (memmem(bin, blen, lib[i], strlen(lib[i])))
			fail_msg("%s holds '%s': the flame graph library is in the program", CTL,
				 lib[i]);
	}
	free(tpl);
	free(bin);
}

static int setup(void **state)
{
	/* The pages' template is the build tree's, but where a test names its own. */
	unsetenv(TEMPLATE_ENV);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(foreach_gives_frames_as_pprof_names_them),
		cmocka_unit_test(json_folds_samples_into_a_tree),
		cmocka_unit_test(json_is_safe_in_a_script_element),
		cmocka_unit_test(page_renders_in_chromium),
		cmocka_unit_test(options_refused),
		cmocka_unit_test(template_from_outside),
		cmocka_unit_test(library_not_in_the_program),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
