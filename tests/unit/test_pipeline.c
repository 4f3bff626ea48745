// SPDX-License-Identifier: GPL-2.0
/*
 * The pipeline, end to end on the host: SAMPLE records built from this
 * process's own registers and stack (captured inside a chain of noinline
 * functions, as test_unwind does), a kernel stack of addresses from
 * /proc/kallsyms when it shows them, a LOST record and records of a pid
 * that does not exist; the profile is written and read back with the real
 * pprof tool (-traces), which must show the chain in order, main below it,
 * kernel frames above it, labels, and the lost and unknown counts in the
 * stats.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>

#include <cmocka.h>

#include <linux/taproot.h>

#include "taproot.h"
#include "pipeline/resolved.h"
#include "pipeline/symcache.h"
#include "ownstack.h"
#include "runcmd.h"

/* ------------------------------------------------------ capture */

static volatile int sink;

__attribute__((noinline)) static void pipeline_capture(struct ownstack *c)
{
	OWNSTACK_CAPTURE(c);
}

__attribute__((noinline)) static int pipeline_leaf(struct ownstack *c, int x)
{
	pipeline_capture(c);
	sink = x;
	return x + 3;
}

__attribute__((noinline)) static int pipeline_middle(struct ownstack *c, int x)
{
	int r = pipeline_leaf(c, x * 2);

	sink = r;
	return r + 2;
}

__attribute__((noinline)) static int pipeline_outer(struct ownstack *c, int x)
{
	int r = pipeline_middle(c, x + 1);

	sink = r;
	return r + 1;
}

/* ------------------------------------------------------ records */

/* Two kernel text addresses from /proc/kallsyms, when it shows them. */
static unsigned int kernel_addrs(uint64_t *k, const char **n0, const char **n1,
				 struct taproot_ksyms **ks)
{
	static char name0[128], name1[128];
	const char *name;

	if (taproot_ksyms_load(NULL, ks) < 0)
		return 0;
	/* Two functions of the core kernel. */
	k[0] = 0;
	k[1] = 0;
	{
		FILE *f = fopen("/proc/kallsyms", "re");
		char line[512], nm[256], t;
		unsigned long long a;

		assert_non_null(f);
		while (fgets(line, sizeof(line), f) && !k[1]) {
			if (sscanf(line, "%llx %c %255s", &a, &t, nm) != 3 || (t != 'T' && t != 't') ||
			    strchr(line, '['))
				continue;
			if (!strcmp(nm, "schedule") && !k[0])
				k[0] = a + 1;
			else if (!strcmp(nm, "do_syscall_64") && k[0])
				k[1] = a + 5;	/* a return address inside it */
		}
		fclose(f);
	}
	if (!k[0] || !k[1])
		return 0;
	name = taproot_ksyms_lookup(*ks, k[0], NULL, NULL);
	snprintf(name0, sizeof(name0), "%s", name ? name : "?");
	name = taproot_ksyms_lookup(*ks, k[1] - 1, NULL, NULL);
	snprintf(name1, sizeof(name1), "%s", name ? name : "?");
	*n0 = name0;
	*n1 = name1;
	return 2;
}

/* ------------------------------------------------------ helpers */

/* Position of line @needle (a substring) in @text after @from, or NULL. */
static const char *find_after(const char *text, const char *from, const char *needle)
{
	return strstr(from ? from : text, needle);
}

/* pprof -traces @out holds the capture's chain, leaf first, then @test. */
static void assert_chain(const char *out, const char *test)
{
	static const char *const chain[] = {
		"pipeline_capture", "pipeline_leaf", "pipeline_middle", "pipeline_outer",
	};
	const char *at = NULL;

	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
		at = find_after(out, at, chain[i]);
		assert_non_null(at);
	}
	assert_non_null(find_after(out, at, test));
}

/* ------------------------------------------------------ the test */

static void test_self_profile(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline_top top[4];
	struct taproot_ksyms *ks = NULL;
	struct taproot_rec_header *recs[8];
	struct taproot_rec_lost lost = { .hdr = { .size = sizeof(lost), .type = TAPROOT_REC_LOST } };
	const char *kn0 = NULL, *kn1 = NULL, *tr, *libc_line, *exe_line;
	char dir[] = "/tmp/test-pipeline-XXXXXX", path[64];
	uint64_t k[2];
	unsigned int nk, nrec = 0, i;
	char *out;
	int status;
	struct stat sb;

	assert_non_null(c);
	/* The samples' comm is the process's own: else they look exec'd since. */
	assert_int_equal(prctl(PR_SET_NAME, "test-pipeline"), 0);
	ownstack_init();
	assert_int_equal(pipeline_outer(c, 1), 10);
	nk = kernel_addrs(k, &kn0, &kn1, &ks);

	taproot_pipeline_opts_default(&o);
	o.freq_hz = 100;
	o.ksyms = ks;
	o.label_tid = true;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	/* Warming the caches up counts nothing. */
	assert_int_equal(taproot_pipeline_prewarm(p), 0);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.records, 0);
	assert_int_equal(st.samples, 0);
	assert_int_equal(st.user_stacks, 0);
	assert_true(st.sym_cache_entries > 3);

	/* 3 user-only samples, 1 with kernel frames on top, 1 of a gone pid, 1 kthread. */
	for (i = 0; i < 3; i++)
		recs[nrec++] = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid(), NULL, 0,
					       "test-pipeline");
	recs[nrec++] = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid(), k, nk,
				       "test-pipeline");
	recs[nrec++] = ownstack_sample(c, 0x3ffffff0, 0x3ffffff0, NULL, 0, "ghost");
	recs[nrec++] = ownstack_sample(NULL, 2, 2, k, nk, "kthreadd");
	lost.lost[TAPROOT_LOST_FULL] = 5;
	lost.lost[TAPROOT_LOST_NESTED] = 2;

	for (i = 0; i < nrec; i++)
		assert_int_equal(taproot_pipeline_add_record(p, recs[i], 1), 0);
	assert_int_equal(taproot_pipeline_add_record(p, &lost.hdr, 0), 0);

	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.records, nrec + 1);
	assert_int_equal(st.samples, nrec);
	assert_int_equal(st.lost, 7);
	assert_int_equal(st.user_stacks, 4);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_COMPLETE], 4);
	assert_int_equal(st.proc_unknown, 1);
	assert_int_equal(st.kernel_only, 1);
	assert_true(st.sym_cache_hits > 0);
	assert_true(taproot_pipeline_unwind_rate(&st) == 1.0);

	/* The leaf of the 3 + (1 if no kernel frames) user samples. */
	assert_true(taproot_pipeline_top(p, top, 4) >= 2);
	assert_string_equal(top[0].name, "pipeline_capture");
	assert_int_equal(top[0].samples, nk ? 3 : 4);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
	assert_int_equal(taproot_pipeline_write(p, path), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	out = run(&status, "%s -traces %s 2>&1", pprof_tool(), path);
	assert_int_equal(status, 0);
	print_message("%s", out);
	/* The chain, leaf first, then main below it. */
	assert_chain(out, "test_self_profile");
	assert_non_null(strstr(out, " main"));
	assert_non_null(strstr(out, "[unknown: "));
	assert_non_null(strstr(out, "comm:  test-pipeline"));
	assert_non_null(strstr(out, "thread_comm:  ghost"));
	assert_non_null(strstr(out, "pid:  "));
	assert_non_null(strstr(out, "tid:  "));
	if (nk) {
		/* kernel frames above the user leaf in the same trace */
		tr = strstr(out, kn0);
		assert_non_null(tr);
		assert_non_null(strstr(tr, kn1));
		assert_non_null(strstr(strstr(tr, kn1), "pipeline_capture"));
	} else {
		print_message("  (kernel addresses hidden: kernel frames not checked)\n");
	}
	free(out);

	/* Each mapping carries its own file's build ID. */
	out = run(&status, "%s -raw %s 2>&1", pprof_tool(), path);
	assert_int_equal(status, 0);
	libc_line = strstr(out, "/libc.so.6 ");
	assert_non_null(libc_line);
	assert_non_null(exe_line = strstr(out, "test_pipeline "));
	assert_true(strncmp(strchr(libc_line, ' '), strchr(exe_line, ' '), 41) != 0);
	free(out);

	/* A reset starts an empty interval; stats stay cumulative. */
	taproot_pipeline_reset(p);
	assert_int_equal(taproot_pipeline_top(p, top, 4), 0);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.stacks, 0);
	assert_int_equal(st.samples, nrec);

	if (!getenv("KEEP")) unlink(path);
	rmdir(dir);
	for (i = 0; i < nrec; i++)
		free(recs[i]);
	taproot_pipeline_free(p);
	taproot_ksyms_free(ks);
	free(c);
}

/*
 * The live top's self and total of @name (or a clone of it the compiler
 * made: @name.constprop.0), or NULL when it has none.
 */
static const struct taproot_pipeline_live_fn *
live_fn(const struct taproot_pipeline_live_take *t, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < t->n; i++)
		if (!strncmp(t->fns[i].name, name, n) &&
		    (!t->fns[i].name[n] || t->fns[i].name[n] == '.'))
			return &t->fns[i];
	return NULL;
}

/*
 * The live top: off by default; on, each sample counts its leaf as self
 * and every function of its stack once as total, in its group; a take
 * returns what was counted since the last one and starts again.
 */
static void test_live_top(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_pipeline_live_take t;
	const struct taproot_pipeline_live_fn *f, *outer;
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;
	struct taproot_rec_header *rec[3];

	(void)state;
	assert_non_null(c);
	assert_int_equal(prctl(PR_SET_NAME, "test-pipeline"), 0);
	ownstack_init();
	assert_int_equal(pipeline_outer(c, 1), 10);
	taproot_pipeline_opts_default(&o);
	o.freq_hz = 100;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	for (int i = 0; i < 3; i++)
		rec[i] = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid(), NULL, 0,
					 "test-pipeline");

	/* Off: nothing is counted, and there is nothing to take. */
	assert_int_equal(taproot_pipeline_add_record(p, rec[0], 1), 0);
	assert_int_equal(taproot_pipeline_live_take(p, &t), -EINVAL);

	assert_int_equal(taproot_pipeline_live(p, true), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(taproot_pipeline_add_record(p, rec[i], 1), 0);
	assert_int_equal(taproot_pipeline_live_take(p, &t), 0);
	assert_int_equal(t.samples, 3);
	assert_int_equal(t.other, 0);
	/* Most total first: the leaf's total is every sample's. */
	assert_true(t.n >= 5);
	assert_int_equal(t.fns[0].total, 3);
	f = live_fn(&t, "pipeline_capture");
	assert_non_null(f);
	assert_int_equal(f->self, 3);
	assert_int_equal(f->total, 3);
	outer = live_fn(&t, "pipeline_outer");
	assert_non_null(outer);
	assert_int_equal(outer->self, 0);
	assert_int_equal(outer->total, 3);
	assert_non_null(live_fn(&t, "main"));
	/* One group for one process: its service, else its name. */
	assert_non_null(f->group);
	assert_true(f->group[0]);
	assert_string_equal(outer->group, f->group);
	for (size_t i = 1; i < t.n; i++)
		assert_true(t.fns[i - 1].total >= t.fns[i].total);

	/* The next take holds only what came since. */
	assert_int_equal(taproot_pipeline_add_record(p, rec[0], 1), 0);
	assert_int_equal(taproot_pipeline_live_take(p, &t), 0);
	assert_int_equal(t.samples, 1);
	assert_int_equal(live_fn(&t, "pipeline_capture")->self, 1);
	assert_int_equal(taproot_pipeline_live_take(p, &t), 0);
	assert_int_equal(t.samples, 0);
	assert_int_equal(t.n, 0);

	assert_int_equal(taproot_pipeline_live(p, false), 0);
	assert_int_equal(taproot_pipeline_live_take(p, &t), -EINVAL);
	for (int i = 0; i < 3; i++)
		free(rec[i]);
	taproot_pipeline_free(p);
	free(c);
}

/*
 * Labels: a sample carries its process's (service_name, exe, cgroup read
 * from this process's /proc) and the static ones, seen by pprof; relabel
 * rules rewrite them, and a sample they drop is neither unwound nor added.
 */
static void test_labels_and_relabel(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	static const struct taproot_profile_label statics[] = {
		TAPROOT_LABEL_STR("team", "payments"),
	};
	struct taproot_relabel *rules = NULL;
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;
	struct taproot_pipeline_stats st;
	struct taproot_rec_header *rec;
	char dir[] = "/tmp/test-pipeline-XXXXXX", path[64], exe[512], want[600];
	char *out;
	ssize_t n;
	int status;

	assert_non_null(c);
	assert_int_equal(prctl(PR_SET_NAME, "test-pipeline"), 0);
	ownstack_init();
	assert_int_equal(pipeline_outer(c, 1), 10);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	rec = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid(), NULL, 0,
			      "test-pipeline");
	assert_int_equal(taproot_relabel_add(&rules, "replace exe .*/(.*) program $1"), 0);
	assert_int_equal(taproot_relabel_add(&rules, "labeldrop cgroup"), 0);

	taproot_pipeline_opts_default(&o);
	o.freq_hz = 100;
	o.relabel = rules;
	o.hostname = "web-1";
	o.kernel_release = "";		/* left out */
	o.static_labels = statics;
	o.nr_static_labels = 1;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	assert_int_equal(taproot_pipeline_add_record(p, rec, 0), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
	assert_int_equal(taproot_pipeline_write(p, path), 0);
	out = run(&status, "%s -traces %s 2>&1", pprof_tool(), path);
	assert_int_equal(status, 0);
	print_message("%s", out);
	snprintf(want, sizeof(want), "exe:  %s", exe);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "program:  test_pipeline"));
	assert_non_null(strstr(out, "service_name:  "));
	assert_non_null(strstr(out, "hostname:  web-1"));
	assert_non_null(strstr(out, "team:  payments"));
	assert_null(strstr(out, "kernel_release:"));
	assert_null(strstr(out, "cgroup:"));
	free(out);
	unlink(path);
	rmdir(dir);
	taproot_pipeline_free(p);

	/* Dropped by its executable: not unwound, not in the profile. */
	assert_int_equal(taproot_relabel_add(&rules, "drop program test_pipeline"), 0);
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	assert_int_equal(taproot_pipeline_add_record(p, rec, 0), 0);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.relabel_dropped, 1);
	assert_int_equal(st.samples, 0);
	assert_int_equal(st.user_stacks, 0);
	assert_int_equal(st.unwind_frames, 0);
	taproot_pipeline_free(p);
	taproot_relabel_free(rules);
	free(rec);
	free(c);
}

/* ------------------------------------------- stacks the module unwound */

/*
 * The leaf and the registers of its caller's frame, read through the
 * frame pointer __builtin_frame_address() makes this function keep: what
 * the module reports when its walk stops at frame 1 (UREGS_CALLER).
 */
__attribute__((noinline)) static void kpipe_capture(struct ownstack *c,
						    struct taproot_user_regs *caller)
{
	const uint64_t *fp = __builtin_frame_address(0);

	OWNSTACK_CAPTURE(c);
	memset(caller, 0, sizeof(*caller));
	caller->ip = fp[1];
	caller->sp = (uint64_t)(uintptr_t)(fp + 2);
	caller->bp = fp[0];
}

__attribute__((noinline)) static int kpipe_leaf(struct ownstack *c,
						struct taproot_user_regs *caller, int x)
{
	kpipe_capture(c, caller);
	sink = x;
	return x + 3;
}

__attribute__((noinline)) static int kpipe_outer(struct ownstack *c,
						 struct taproot_user_regs *caller, int x)
{
	int r = kpipe_leaf(c, caller, x + 1);

	sink = r;
	return r + 1;
}

static int kpipe_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	return taproot_proc_unwind_map(arg, pc, um) == 0 ? 1 : 0;
}

/* The user pcs of @c as the module would find them: the unwinder's, here. */
static unsigned int kpipe_pcs(const struct ownstack *c, uint64_t *pcs, unsigned int max)
{
	static const struct taproot_unwind_ops ops = { .map = kpipe_map };
	struct taproot_unwind_result res;
	struct taproot_unwinder *u;
	struct taproot_procs *procs;
	struct taproot_proc *proc;

	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	assert_int_equal(taproot_proc_get(procs, getpid(), 0, &proc), 0);
	assert_int_equal(taproot_unwinder_new(&ops, 0, &u), 0);
	assert_true(taproot_unwind(u, proc, &c->regs, c->stack, c->len, pcs, NULL, max, &res) > 3);
	assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);
	taproot_unwinder_free(u);
	taproot_procs_free(procs);
	return res.nr;
}

/*
 * This thread, named test-pipeline, captured six frames below its caller
 * into @c (@caller its registers), and its pcs unwound from there into
 * @pcs (room for 128): their number.
 */
static unsigned int kpipe_own_pcs(struct ownstack *c, struct taproot_user_regs *caller,
				  uint64_t *pcs)
{
	assert_non_null(c);
	assert_int_equal(prctl(PR_SET_NAME, "test-pipeline"), 0);
	ownstack_init();
	assert_int_equal(kpipe_outer(c, caller, 1), 6);
	return kpipe_pcs(c, pcs, 128);
}

/* A SAMPLE of this process with @nu module pcs @upcs, the rest as given. */
static struct taproot_rec_header *kpipe_sample(const struct taproot_user_regs *regs,
					       const uint8_t *ustack, uint32_t ulen,
					       const uint64_t *k, unsigned int nk,
					       const uint64_t *upcs, unsigned int nu,
					       unsigned int flags, unsigned int end)
{
	size_t size = (sizeof(struct taproot_rec_sample) + (nk + nu) * 8 + ulen + 7) & ~(size_t)7;
	struct taproot_rec_sample *s = calloc(1, size);
	uint64_t *a;

	assert_non_null(s);
	s->hdr.size = (uint32_t)size;
	s->hdr.type = TAPROOT_REC_SAMPLE;
	s->hdr.flags = (uint16_t)(TAPROOT_SAMPLE_F_USER_REGS | flags |
				  (nk ? TAPROOT_SAMPLE_F_IN_KERNEL : 0));
	s->pid = s->tid = (uint32_t)getpid();
	s->kstack_nr = (uint16_t)nk;
	s->upc_nr = (uint8_t)nu;
	s->unwind = (uint8_t)end;
	s->ustack_len = ulen;
	s->period_us = 10000;
	memcpy(s->comm, "test-pipeline", 13);
	s->user_regs = *regs;
	a = (uint64_t *)(s + 1);
	if (nk)
		memcpy(a, k, nk * 8);
	if (nu)
		memcpy(a + nk, upcs, nu * 8);
	if (ulen)
		memcpy(a + nk + nu, ustack, ulen);
	return &s->hdr;
}

static struct taproot_rec_header *kpipe_stack(uint64_t id, uint32_t epoch, const uint64_t *k,
					      unsigned int nk, const uint64_t *upcs,
					      unsigned int nu, unsigned int end)
{
	size_t size = sizeof(struct taproot_rec_stack) + (nk + nu) * 8;
	struct taproot_rec_stack *st = calloc(1, size);

	assert_non_null(st);
	st->hdr.size = (uint32_t)size;
	st->hdr.type = TAPROOT_REC_STACK;
	st->hdr.flags = TAPROOT_SAMPLE_F_USER_REGS | (nk ? TAPROOT_SAMPLE_F_IN_KERNEL : 0);
	st->id = id;
	st->epoch = epoch;
	st->pid = (uint32_t)getpid();
	st->kstack_nr = (uint16_t)nk;
	st->upc_nr = (uint8_t)nu;
	st->unwind = (uint8_t)end;
	if (nk)
		memcpy(st + 1, k, nk * 8);
	memcpy((uint64_t *)(st + 1) + nk, upcs, nu * 8);
	return &st->hdr;
}

static struct taproot_rec_header *kpipe_ref(uint64_t id, uint32_t epoch)
{
	struct taproot_rec_sample_ref *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->hdr.size = sizeof(*r);
	r->hdr.type = TAPROOT_REC_SAMPLE_REF;
	r->pid = r->tid = (uint32_t)getpid();
	r->period_us = 10000;
	memcpy(r->comm, "test-pipeline", 13);
	r->stack_id = id;
	r->epoch = epoch;
	return &r->hdr;
}

/* One record of a list: its CPU (the ring it came from) and the record. */
struct kpipe_rec {
	unsigned int cpu;
	struct taproot_rec_header *rec;
};

/* The profile of @p written, as pprof -traces prints it. */
static char *kpipe_written_traces(struct taproot_pipeline *p)
{
	char dir[] = "/tmp/test-pipeline-XXXXXX", path[64];
	char *out;
	int status;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
	assert_int_equal(taproot_pipeline_write(p, path), 0);
	out = run(&status, "%s -traces %s 2>&1", pprof_tool(), path);
	assert_int_equal(status, 0);
	unlink(path);
	rmdir(dir);
	return out;
}

/*
 * A pipeline fed @recs; its profile's traces (pprof -traces from the first
 * trace on: no file name nor times), its stats into @st.
 */
static char *kpipe_traces(const struct kpipe_rec *recs, unsigned int n, const uint64_t *k,
			  struct taproot_ksyms *ks, struct taproot_pipeline_stats *st)
{
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;
	char *out, *body;

	(void)k;
	taproot_pipeline_opts_default(&o);
	o.freq_hz = 100;
	o.ksyms = ks;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(taproot_pipeline_add_record(p, recs[i].rec, recs[i].cpu), 0);
	taproot_pipeline_stats(p, st);
	out = kpipe_written_traces(p);
	taproot_pipeline_free(p);
	body = strstr(out, "-----------+");
	assert_non_null(body);
	body = strdup(body);
	free(out);
	return body;
}

/*
 * VERIFY samples of a child, @good (the module's walk right) and @bad
 * (wrong): @good while it lives, then @bad and @good once it is killed.
 * Both @good identical; @bad, not checkable then, not compared.
 */
static void verify_gone(struct taproot_rec_header *good, struct taproot_rec_header *bad,
			struct taproot_ksyms *ks)
{
	struct taproot_rec_sample *sg = (struct taproot_rec_sample *)good;
	struct taproot_rec_sample *sb = (struct taproot_rec_sample *)bad;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;
	pid_t child = fork();

	if (!child) {
		pause();
		_exit(0);
	}
	assert_true(child > 0);
	sg->pid = sg->tid = sb->pid = sb->tid = (uint32_t)child;
	taproot_pipeline_opts_default(&o);
	o.freq_hz = 100;
	o.ksyms = ks;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	assert_int_equal(taproot_pipeline_add_record(p, good, 1), 0);
	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(taproot_pipeline_add_record(p, bad, 1), 0);
	assert_int_equal(taproot_pipeline_add_record(p, good, 1), 0);
	taproot_pipeline_stats(p, &st);
	taproot_pipeline_free(p);
	assert_int_equal(st.verify_samples, 3);
	assert_int_equal(st.verify_identical, 2);
	assert_int_equal(st.verify_differing, 0);
}

/*
 * The same sample four ways: a snapshot; a STACK and a reference to it; a
 * fallback whose walk stopped at frame 1, with the caller frame's
 * registers and stack; a VERIFY sample. All four give the same profile.
 */
static void test_kernel_unwound_same_profile(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct taproot_ksyms *ks = NULL;
	struct kpipe_rec recs[4];
	const char *kn0, *kn1;
	uint64_t k[2], pcs[128], id = 0x1234567890abcdefull;
	char *want, *got;
	unsigned int nk, nu;
	size_t off;

	assert_non_null(c);
	assert_int_equal(prctl(PR_SET_NAME, "test-pipeline"), 0);
	ownstack_init();
	assert_int_equal(kpipe_outer(c, &caller, 1), 6);
	nk = kernel_addrs(k, &kn0, &kn1, &ks);
	nu = kpipe_pcs(c, pcs, 128);
	assert_true(pcs[1] == caller.ip);
	off = caller.sp - c->regs.sp;
	assert_true(off < c->len);

	recs[0] = (struct kpipe_rec){ 1, kpipe_sample(&c->regs, c->stack, (uint32_t)c->len, k, nk,
						      NULL, 0, 0, TAPROOT_KUNWIND_NONE) };
	want = kpipe_traces(recs, 1, k, ks, &st);
	print_message("%s", want);
	assert_non_null(strstr(want, "kpipe_capture"));
	assert_non_null(strstr(want, "kpipe_outer"));
	assert_int_equal(st.kunwind[TAPROOT_KUNWIND_NONE], 1);
	free(recs[0].rec);

	/* Interned: the STACK alone adds nothing, the reference the sample. */
	recs[0] = (struct kpipe_rec){ 3, kpipe_stack(id, 7, k, nk, pcs, nu,
						     TAPROOT_KUNWIND_COMPLETE) };
	recs[1] = (struct kpipe_rec){ 3, kpipe_ref(id, 7) };
	got = kpipe_traces(recs, 2, k, ks, &st);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.stack_records, 1);
	assert_int_equal(st.stack_refs, 1);
	assert_int_equal(st.stack_refs_unresolved, 0);
	assert_int_equal(st.kunwind[TAPROOT_KUNWIND_COMPLETE], 1);
	assert_int_equal(st.user_stacks, 1);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_COMPLETE], 1);
	assert_int_equal(st.unwind_frames, 0);	/* nothing unwound here */
	free(recs[0].rec);
	free(recs[1].rec);

	/* A fallback at frame 1: leaf pc, then the unwinder from the caller's frame. */
	recs[0] = (struct kpipe_rec){ 1, kpipe_sample(&caller, c->stack + off,
						      (uint32_t)(c->len - off), k, nk, pcs, 2,
						      TAPROOT_SAMPLE_F_UPCS |
						      TAPROOT_SAMPLE_F_UREGS_CALLER,
						      TAPROOT_KUNWIND_NO_CFI) };
	got = kpipe_traces(recs, 1, k, ks, &st);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(st.kunwind[TAPROOT_KUNWIND_NO_CFI], 1);
	assert_int_equal(st.kunwind_continued, 1);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_COMPLETE], 1);
	assert_int_equal(st.unwind_frames, nu - 1);
	free(recs[0].rec);

	/* VERIFY: the module's walk compared, the snapshot's in the profile. */
	recs[0] = (struct kpipe_rec){ 1, kpipe_sample(&c->regs, c->stack, (uint32_t)c->len, k, nk,
						      pcs, nu, TAPROOT_SAMPLE_F_UPCS |
						      TAPROOT_SAMPLE_F_VERIFY,
						      TAPROOT_KUNWIND_COMPLETE) };
	got = kpipe_traces(recs, 1, k, ks, &st);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(st.verify_samples, 1);
	assert_int_equal(st.verify_identical, 1);
	assert_int_equal(st.verify_differing, 0);

	/*
	 * VERIFY of a process whose memory is gone by the time its samples
	 * are unwound (a consumer behind the ring). A child has this
	 * process's stack and maps, held once read.
	 */
	pcs[1] += 16;
	recs[1] = (struct kpipe_rec){ 1, kpipe_sample(&c->regs, c->stack, (uint32_t)c->len, k, nk,
						      pcs, nu, TAPROOT_SAMPLE_F_UPCS |
						      TAPROOT_SAMPLE_F_VERIFY,
						      TAPROOT_KUNWIND_COMPLETE) };
	pcs[1] -= 16;
	verify_gone(recs[0].rec, recs[1].rec, ks);
	free(recs[0].rec);
	free(recs[1].rec);

	free(want);
	taproot_ksyms_free(ks);
	free(c);
}

/* A count of stack @id of @epoch on @cpu: @n samples of this process. */
/* A pipeline at 100 Hz that keeps replaced STACKs for drains when @counted. */
static struct taproot_pipeline *kpipe_counting(bool counted)
{
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;

	taproot_pipeline_opts_default(&o);
	o.freq_hz = 100;
	o.counted = counted;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	return p;
}

static struct taproot_count kpipe_count(uint64_t id, uint32_t epoch, uint16_t cpu, uint32_t n)
{
	struct taproot_count e = {
		.stack_id = id, .epoch = epoch, .cpu = cpu, .count = n, .period_us = 10000,
		.pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
		.first_ns = 1000, .last_ns = 2000,
	};

	memcpy(e.comm, "test-pipeline", 13);
	return e;
}

/*
 * Counted stacks: a count stands for as many references, the STACK it
 * names found in its slot or, once a newer stack took the slot, among the
 * replaced ones kept until the drain is over (with opts.counted only);
 * counts of no known stack and malformed ones are counted, not added.
 */
static void test_counted_stacks(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline *p;
	struct taproot_rec_header *rec[2];
	struct taproot_count e[6];
	struct taproot_pipeline_top top[8];
	uint64_t pcs[128], id = 0x77, newer = 0x77 + TAPROOT_STACK_SLOTS;
	unsigned int nu;

	nu = kpipe_own_pcs(c, &caller, pcs);
	rec[0] = kpipe_stack(id, 1, NULL, 0, pcs, nu, TAPROOT_KUNWIND_COMPLETE);
	rec[1] = kpipe_stack(newer, 1, NULL, 0, pcs, 3, TAPROOT_KUNWIND_MAX_FRAMES);

	for (int counted = 0; counted < 2; counted++) {
		p = kpipe_counting(counted);
		/* The newer stack takes the slot of the first. */
		assert_int_equal(taproot_pipeline_add_record(p, rec[0], 2), 0);
		assert_int_equal(taproot_pipeline_add_record(p, rec[1], 2), 0);
		e[0] = kpipe_count(id, 1, 2, 5);
		e[1] = kpipe_count(newer, 1, 2, 3);
		e[2] = kpipe_count(id + 1, 1, 2, 2);		/* no such STACK */
		e[3] = kpipe_count(id, 1, 2, 0);		/* count 0 */
		e[4] = kpipe_count(id, 1, 4, 1);		/* a CPU past nr_cpus */
		e[5] = kpipe_count(0, 1, 2, 1);			/* stack id 0 */
		taproot_pipeline_counts_begin(p);
		assert_int_equal(taproot_pipeline_add_counts(p, e, 6, 4), counted ? 8 : 3);
		/* A period no rate has: 999 Hz's is 1001 us, 1 Hz's 1000000. */
		e[0].period_us = 999;
		e[1].period_us = 1000001;
		taproot_pipeline_counts_begin(p);
		assert_int_equal(taproot_pipeline_add_counts(p, e, 2, 4), 0);
		e[0].period_us = e[1].period_us = 10000;
		taproot_pipeline_stats(p, &st);
		assert_int_equal(st.counts, 3);
		assert_int_equal(st.counted_samples, 10);
		assert_int_equal(st.counted_unresolved, counted ? 2 : 7);
		assert_int_equal(st.counts_corrupt, 5);
		assert_int_equal(st.samples, counted ? 8 : 3);
		assert_int_equal(st.stack_refs, 0);
		assert_int_equal(st.kunwind[TAPROOT_KUNWIND_COMPLETE], counted ? 5 : 0);
		assert_int_equal(st.kunwind[TAPROOT_KUNWIND_MAX_FRAMES], 3);
		/* The drain over, the replaced stack is gone: a later count misses. */
		e[0] = kpipe_count(id, 1, 2, 1);
		taproot_pipeline_counts_begin(p);
		assert_int_equal(taproot_pipeline_add_counts(p, e, 1, 4), 0);
		taproot_pipeline_stats(p, &st);
		assert_int_equal(st.counted_unresolved, counted ? 3 : 8);
		/* The leaves' self counts take a count's samples whole. */
		assert_int_equal(taproot_pipeline_top(p, top, 8), 1);
		assert_int_equal(top[0].samples, st.samples);
		taproot_pipeline_free(p);
	}
	free(rec[0]);
	free(rec[1]);
	free(c);
}

/*
 * A STACK read after a drain began (as the drain reads the rings to their
 * heads) may have been written after the module took its tables, and have
 * replaced a stack the module went on counting, in the tables the next
 * drain takes: the replaced one is kept until that drain is over, not
 * freed with the ones replaced before (unwind-agreement saw one such
 * count unresolved on 7.2). The same stack replaced again keeps its copy
 * as long.
 */
static void test_counts_replaced_during_drain(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline *p;
	struct taproot_rec_header *rec[2];
	struct taproot_count e;
	uint64_t pcs[128], id = 0x91, newer = 0x91 + TAPROOT_STACK_SLOTS;
	unsigned int nu;

	nu = kpipe_own_pcs(c, &caller, pcs);
	rec[0] = kpipe_stack(id, 1, NULL, 0, pcs, nu, TAPROOT_KUNWIND_COMPLETE);
	rec[1] = kpipe_stack(newer, 1, NULL, 0, pcs, 3, TAPROOT_KUNWIND_MAX_FRAMES);
	p = kpipe_counting(1);
	assert_int_equal(taproot_pipeline_add_record(p, rec[0], 2), 0);
	/* Drain 1: begun, then the newer stack read as the rings are. */
	taproot_pipeline_counts_begin(p);
	assert_int_equal(taproot_pipeline_add_record(p, rec[1], 2), 0);
	e = kpipe_count(id, 1, 2, 4);
	assert_int_equal(taproot_pipeline_add_counts(p, &e, 1, 4), 4);
	/* Drain 2: the first stack's samples counted before it was replaced. */
	taproot_pipeline_counts_begin(p);
	e = kpipe_count(id, 1, 2, 2);
	assert_int_equal(taproot_pipeline_add_counts(p, &e, 1, 4), 2);
	/* Written again, and replaced again during drain 3: kept through drain 4. */
	assert_int_equal(taproot_pipeline_add_record(p, rec[0], 2), 0);
	taproot_pipeline_counts_begin(p);
	assert_int_equal(taproot_pipeline_add_record(p, rec[1], 2), 0);
	assert_int_equal(taproot_pipeline_add_counts(p, &e, 1, 4), 2);
	taproot_pipeline_counts_begin(p);
	assert_int_equal(taproot_pipeline_add_counts(p, &e, 1, 4), 2);
	/* Drain 5: replaced before drain 4 began, so gone. */
	taproot_pipeline_counts_begin(p);
	assert_int_equal(taproot_pipeline_add_counts(p, &e, 1, 4), 0);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.counted_samples, 12);
	assert_int_equal(st.counted_unresolved, 2);
	taproot_pipeline_free(p);
	/* Freed with a replaced STACK still kept: nothing leaks (ASan). */
	p = kpipe_counting(1);
	assert_int_equal(taproot_pipeline_add_record(p, rec[0], 2), 0);
	taproot_pipeline_counts_begin(p);
	assert_int_equal(taproot_pipeline_add_record(p, rec[1], 2), 0);
	assert_int_equal(taproot_pipeline_add_counts(p, &e, 1, 4), 2);
	taproot_pipeline_free(p);
	free(rec[0]);
	free(rec[1]);
	free(c);
}

/* An EXEC of this process at @time_ns. */
static struct taproot_rec_header *kpipe_exec(uint64_t time_ns)
{
	struct taproot_rec_exec *e = calloc(1, sizeof(*e) + 8);

	assert_non_null(e);
	e->hdr.size = sizeof(*e) + 8;
	e->filename_len = 8;
	memcpy(e + 1, "/bin/sh", 8);
	e->hdr.type = TAPROOT_REC_EXEC;
	e->hdr.time_ns = time_ns;
	e->pid = e->tid = e->old_tid = (uint32_t)getpid();
	memcpy(e->comm, "test-pipeline", 13);
	return &e->hdr;
}

/*
 * An interned stack is resolved as its STACK arrives: its samples, counted
 * ones drained after the process exec'd included, keep the names it had
 * then, and cost no symbolization of their own. A STACK read only after
 * an exec it predates (the EXEC came first in another ring) has its user
 * part left out: the maps read now are another program's.
 */
static void test_resolved_stacks(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline *p;
	struct taproot_rec_header *stack, *exec, *ref;
	struct taproot_pipeline_top top[4];
	struct taproot_count e;
	uint64_t pcs[128], misses;
	unsigned int nu;

	nu = kpipe_own_pcs(c, &caller, pcs);
	stack = kpipe_stack(0x99, 1, NULL, 0, pcs, nu, TAPROOT_KUNWIND_COMPLETE);
	stack->time_ns = 1000;
	exec = kpipe_exec(2000);
	ref = kpipe_ref(0x99, 1);
	e = kpipe_count(0x99, 1, 0, 7);
	e.pid = e.tid = (uint32_t)getpid();

	for (int exec_first = 0; exec_first < 2; exec_first++) {
		p = kpipe_counting(true);
		if (exec_first)
			assert_int_equal(taproot_pipeline_add_record(p, exec, 0), 0);
		assert_int_equal(taproot_pipeline_add_record(p, stack, 0), 0);
		taproot_pipeline_stats(p, &st);
		assert_int_equal(st.resolved_stacks, 1);
		assert_true(st.resolved_bytes > 0);
		misses = st.sym_cache_misses;
		/* Three references: the one resolution serves them all. */
		for (int i = 0; i < 3; i++)
			assert_int_equal(taproot_pipeline_add_record(p, ref, 0), 0);
		if (!exec_first)
			assert_int_equal(taproot_pipeline_add_record(p, exec, 0), 0);
		taproot_pipeline_counts_begin(p);
		assert_int_equal(taproot_pipeline_add_counts(p, &e, 1, 1), 7);
		taproot_pipeline_stats(p, &st);
		assert_int_equal(st.samples, 10);
		assert_int_equal(st.resolved_samples, 10);
		assert_int_equal(st.sym_cache_misses, misses);
		assert_int_equal(st.kunwind[TAPROOT_KUNWIND_COMPLETE], 10);
		assert_int_equal(taproot_pipeline_top(p, top, 4), 1);
		assert_int_equal(top[0].samples, 10);
		if (exec_first) {
			assert_int_equal(st.user_stale, 10);
			assert_int_equal(st.user_stacks, 0);
			assert_string_equal(top[0].name, "[no stack]");
		} else {
			assert_int_equal(st.user_stale, 0);
			assert_int_equal(st.user_stacks, 10);
			assert_non_null(strstr(top[0].name, "kpipe_"));
		}
		taproot_pipeline_free(p);
	}
	free(stack);
	free(exec);
	free(ref);
	free(c);
}

/*
 * A JIT's code named late: samples whose leaf is in anonymous executable
 * memory are added while no perf map names it; the map appears (a JVM
 * writes it at exit); the flush before the profile is written names the
 * samples already added, and the later ones of the same interned stack
 * (resolved again) are named too, in the same location.
 */
static void test_jit_named_late(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	uint8_t *code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline *p;
	struct taproot_rec_header *stack, *ref;
	uint64_t pcs[129];
	unsigned int nu;
	char path[64], *out;
	FILE *pm;

	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
	nu = kpipe_own_pcs(c, &caller, pcs + 1);
	pcs[0] = (uint64_t)(uintptr_t)code + 0x40;	/* the leaf: JIT code */
	stack = kpipe_stack(0x77, 1, NULL, 0, pcs, nu + 1, TAPROOT_KUNWIND_COMPLETE);
	ref = kpipe_ref(0x77, 1);
	p = kpipe_counting(false);
	assert_int_equal(taproot_pipeline_add_record(p, stack, 0), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(taproot_pipeline_add_record(p, ref, 0), 0);
	/* No map yet: flushed, the frame stays unnamed and waits. */
	taproot_pipeline_flush(p, false);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.jit_named_late, 0);
	out = kpipe_written_traces(p);
	assert_null(strstr(out, "jit_hot_late"));
	free(out);

	pm = fopen(path, "w");
	assert_non_null(pm);
	fprintf(pm, "%lx 80 jit_hot_late\n", (unsigned long)(uintptr_t)code);
	fclose(pm);
	taproot_pipeline_flush(p, false);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.jit_named_late, 1);
	assert_int_equal(st.jit_pending_dropped, 0);
	/* Two more samples of the stack, resolved again with the name. */
	for (int i = 0; i < 2; i++)
		assert_int_equal(taproot_pipeline_add_record(p, ref, 0), 0);
	out = kpipe_written_traces(p);
	/* One trace of 5 samples (period 10 ms: 50ms), its leaf named. */
	assert_non_null(strstr(out, "jit_hot_late"));
	assert_null(strstr(strstr(out, "jit_hot_late") + 1, "jit_hot_late"));
	assert_non_null(strstr(out, "50ms"));
	free(out);
	/* Named: nothing waits any more. */
	taproot_pipeline_flush(p, false);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.jit_named_late, 1);
	taproot_pipeline_free(p);
	unlink(path);
	munmap(code, 8192);
	free(stack);
	free(ref);
	free(c);
}

/*
 * Two processes of one program: the second one's pcs are symbolized from
 * the first one's entries of the same file (sym_cache_file_hits), with its
 * own addresses, and named the same.
 */
static void test_symbolized_once_per_file(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline *p;
	struct taproot_rec_header *mine, *its;
	struct taproot_pipeline_top top[4];
	struct taproot_count e[2];
	uint64_t pcs[128], misses;
	unsigned int nu;
	pid_t child;

	nu = kpipe_own_pcs(c, &caller, pcs);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	mine = kpipe_stack(0x51, 1, NULL, 0, pcs, nu, TAPROOT_KUNWIND_COMPLETE);
	its = kpipe_stack(0x52, 1, NULL, 0, pcs, nu, TAPROOT_KUNWIND_COMPLETE);
	((struct taproot_rec_stack *)its)->pid = (uint32_t)child;
	e[0] = kpipe_count(0x51, 1, 0, 3);
	e[0].pid = e[0].tid = (uint32_t)getpid();
	e[1] = kpipe_count(0x52, 1, 0, 3);
	e[1].pid = e[1].tid = (uint32_t)child;

	p = kpipe_counting(true);
	assert_int_equal(taproot_pipeline_add_record(p, mine, 0), 0);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.sym_cache_file_hits, 0);
	misses = st.sym_cache_misses;
	assert_true(misses >= nu);
	assert_int_equal(taproot_pipeline_add_record(p, its, 0), 0);
	taproot_pipeline_stats(p, &st);
	/* Each of the child's pcs missed its own entries, and found its file's. */
	assert_int_equal(st.sym_cache_misses, misses + nu);
	assert_int_equal(st.sym_cache_file_hits, nu);
	taproot_pipeline_counts_begin(p);
	assert_int_equal(taproot_pipeline_add_counts(p, e, 2, 1), 6);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.user_stacks, 6);
	/* One leaf for both: the same names. */
	assert_int_equal(taproot_pipeline_top(p, top, 4), 1);
	assert_int_equal(top[0].samples, 6);
	assert_non_null(strstr(top[0].name, "kpipe_"));
	taproot_pipeline_free(p);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free(mine);
	free(its);
	free(c);
}

/*
 * A stack resolved under the process's name is not taken by a sample of
 * its main thread under another name (an execve came between the capture
 * and the maps' read): that sample is resolved on its own, and its user
 * part left out as the names differ.
 */
static void test_resolved_other_name(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline *p;
	struct taproot_rec_header *stack;
	struct taproot_count e[2];
	uint64_t pcs[128];
	unsigned int nu;

	nu = kpipe_own_pcs(c, &caller, pcs);
	stack = kpipe_stack(0x61, 1, NULL, 0, pcs, nu, TAPROOT_KUNWIND_COMPLETE);
	e[0] = kpipe_count(0x61, 1, 0, 2);
	e[0].pid = e[0].tid = (uint32_t)getpid();
	e[1] = e[0];
	memset(e[1].comm, 0, sizeof(e[1].comm));
	memcpy(e[1].comm, "other-program", 13);
	e[1].count = 3;

	p = kpipe_counting(true);
	assert_int_equal(taproot_pipeline_add_record(p, stack, 0), 0);
	taproot_pipeline_counts_begin(p);
	assert_int_equal(taproot_pipeline_add_counts(p, e, 2, 1), 5);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.resolved_samples, 2);
	assert_int_equal(st.user_stacks, 2);
	assert_int_equal(st.user_stale, 3);
	taproot_pipeline_free(p);
	free(stack);
	free(c);
}

/* The resolutions' pool: its budget, its bytes, its memo keys. */
static void test_resolved_pool(void **state)
{
	struct taproot_profile_frame f[3] = {
		{ .function = "inlined_leaf", .inlined = true },
		{ .function = "leaf", .mapping_path = "/bin/x", .key = (const void *)7 },
		{ .function = "main", .mapping_path = "/bin/x", .key = (const void *)9 },
	};
	struct tp_stack_outcome o = { .user = TP_STACK_UNWOUND };
	struct tp_resolved_pool pool = { .max = 1 << 20 };
	struct tp_resolved *a, *b;
	size_t one;

	a = tp_resolved_new(&pool, f, 3, &o, 5, "x");
	assert_non_null(a);
	one = pool.bytes;
	assert_int_equal(a->frames->nr, 3);
	assert_string_equal(a->frames->frames[2].function, "main");
	assert_ptr_not_equal(a->frames->frames[2].function, f[2].function);
	assert_int_equal(a->generation, 5);
	/*
	 * The frames' keys kept (the symbolized-pc cache's serials, which
	 * stand for their frames for ever): another stack through the same
	 * pcs shares their locations' memo.
	 */
	assert_null(a->frames->frames[0].key);
	assert_ptr_equal(a->frames->frames[1].key, (const void *)7);
	assert_ptr_equal(a->frames->frames[2].key, (const void *)9);
	b = tp_resolved_new(&pool, f, 3, &o, 5, "x");
	assert_non_null(b);
	assert_ptr_equal(b->frames->frames[1].key, a->frames->frames[1].key);
	assert_int_equal(pool.bytes, 2 * one);
	assert_int_equal(pool.made, 2);
	tp_resolved_free(&pool, b);
	/* Beyond the budget: refused and counted. */
	pool.max = 2 * one - 1;
	assert_null(tp_resolved_new(&pool, f, 3, &o, 5, "x"));
	assert_int_equal(pool.over_budget, 1);
	tp_resolved_free(&pool, a);
	tp_resolved_free(&pool, NULL);
	assert_int_equal(pool.bytes, 0);
}

/*
 * The symbolized-pc cache's serials: never 0, never handed out twice,
 * emptied or not, so that a key copied into a resolution can never name
 * another entry's frames.
 */
static void test_symcache_serials(void **state)
{
	struct taproot_profile_frame f = { .function = "f", .mapping_path = "/bin/x" };
	struct tp_symcache c;
	struct tp_sym *a, *b, *again;
	uint64_t last;

	assert_int_equal(tp_symcache_init(&c, 4), 0);
	a = tp_symcache_add(&c, 1, 2, 0x1000, 0, &f, 1, 0);
	b = tp_symcache_add(&c, 1, 2, 0x2000, 0, &f, 1, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a->serial != 0 && b->serial != 0 && a->serial != b->serial);
	assert_ptr_equal(tp_symcache_find(&c, 1, 2, 0x1000, 0), a);
	last = b->serial > a->serial ? b->serial : a->serial;
	tp_symcache_clear(&c);
	assert_null(tp_symcache_find(&c, 1, 2, 0x1000, 0));
	again = tp_symcache_add(&c, 1, 2, 0x1000, 0, &f, 1, 0);
	assert_non_null(again);
	assert_true(again->serial > last);
	tp_symcache_free(&c);
}

/*
 * References that miss: another epoch, a slot a newer stack took, another
 * CPU's slots, another process's stack; counted, not added. VERIFY's
 * identical and differing walks; the markers of stacks that end in the
 * module.
 */
static void test_kernel_unwound_edges(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_user_regs caller;
	struct taproot_pipeline_stats st;
	struct kpipe_rec recs[16];
	struct taproot_rec_sample_ref *ref;
	uint64_t pcs[128], bad[128], id = 0x42;
	unsigned int nu, n = 0, i;
	char *got;

	nu = kpipe_own_pcs(c, &caller, pcs);

	recs[n++] = (struct kpipe_rec){ 0, kpipe_stack(id, 1, NULL, 0, pcs, nu,
						       TAPROOT_KUNWIND_COMPLETE) };
	recs[n++] = (struct kpipe_rec){ 0, kpipe_ref(id, 1) };		/* resolved */
	recs[n++] = (struct kpipe_rec){ 0, kpipe_ref(id, 2) };		/* another epoch */
	recs[n++] = (struct kpipe_rec){ 1, kpipe_ref(id, 1) };		/* another CPU */
	recs[n++] = (struct kpipe_rec){ 0, kpipe_ref(id, 1) };
	ref = (void *)recs[n - 1].rec;
	ref->pid = ref->tid = 1;					/* another process */
	/* The same slot, a newer stack: the old id misses, the new one is found. */
	recs[n++] = (struct kpipe_rec){ 0, kpipe_stack(id + TAPROOT_STACK_SLOTS, 1, NULL, 0,
						       pcs, 3, TAPROOT_KUNWIND_MAX_FRAMES) };
	recs[n++] = (struct kpipe_rec){ 0, kpipe_ref(id, 1) };
	recs[n++] = (struct kpipe_rec){ 0, kpipe_ref(id + TAPROOT_STACK_SLOTS, 1) };
	/* A CPU past the mirror's bound keeps nothing. */
	recs[n++] = (struct kpipe_rec){ 9000, kpipe_stack(id, 1, NULL, 0, pcs, nu,
							  TAPROOT_KUNWIND_COMPLETE) };
	recs[n++] = (struct kpipe_rec){ 9000, kpipe_ref(id, 1) };
	got = kpipe_traces(recs, n, NULL, NULL, &st);
	print_message("%s", got);
	assert_int_equal(st.stack_records, 2);
	assert_int_equal(st.stack_refs, 7);
	assert_int_equal(st.stack_refs_unresolved, 5);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.kunwind[TAPROOT_KUNWIND_COMPLETE], 1);
	assert_int_equal(st.kunwind[TAPROOT_KUNWIND_MAX_FRAMES], 1);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_MAX_DEPTH], 1);
	assert_non_null(strstr(got, "[max depth]"));
	free(got);
	for (i = 0; i < n; i++)
		free(recs[i].rec);
	n = 0;

	/* VERIFY: identical, a prefix of a MAX_FRAMES walk, and two that differ. */
	memcpy(bad, pcs, sizeof(pcs));
	bad[1] += 16;
	recs[n++] = (struct kpipe_rec){ 0, kpipe_sample(&c->regs, c->stack, (uint32_t)c->len,
							NULL, 0, pcs, nu,
							TAPROOT_SAMPLE_F_UPCS | TAPROOT_SAMPLE_F_VERIFY,
							TAPROOT_KUNWIND_COMPLETE) };
	recs[n++] = (struct kpipe_rec){ 0, kpipe_sample(&c->regs, c->stack, (uint32_t)c->len,
							NULL, 0, pcs, 3,
							TAPROOT_SAMPLE_F_UPCS | TAPROOT_SAMPLE_F_VERIFY,
							TAPROOT_KUNWIND_MAX_FRAMES) };
	recs[n++] = (struct kpipe_rec){ 0, kpipe_sample(&c->regs, c->stack, (uint32_t)c->len,
							NULL, 0, bad, nu,
							TAPROOT_SAMPLE_F_UPCS | TAPROOT_SAMPLE_F_VERIFY,
							TAPROOT_KUNWIND_COMPLETE) };
	/* Fewer pcs than the unwinder's, not MAX_FRAMES: not the same walk. */
	recs[n++] = (struct kpipe_rec){ 0, kpipe_sample(&c->regs, c->stack, (uint32_t)c->len,
							NULL, 0, pcs, 3,
							TAPROOT_SAMPLE_F_UPCS | TAPROOT_SAMPLE_F_VERIFY,
							TAPROOT_KUNWIND_FAULT) };
	/* Without a stack copy: the module's pcs and its reason as the marker. */
	recs[n++] = (struct kpipe_rec){ 0, kpipe_sample(&c->regs, NULL, 0, NULL, 0, pcs, 2,
							TAPROOT_SAMPLE_F_UPCS,
							TAPROOT_KUNWIND_NO_PROC) };
	got = kpipe_traces(recs, n, NULL, NULL, &st);
	print_message("%s", got);
	assert_int_equal(st.samples, 5);
	assert_int_equal(st.verify_samples, 4);
	assert_int_equal(st.verify_identical, 2);
	assert_int_equal(st.verify_differing, 2);
	assert_true(taproot_pipeline_verify_rate(&st) == 0.5);
	assert_int_equal(st.kunwind[TAPROOT_KUNWIND_NO_PROC], 1);
	assert_int_equal(st.kunwind_continued, 0);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_TRUNCATED], 1);
	assert_non_null(strstr(got, "[no unwind tables]"));
	free(got);
	for (i = 0; i < n; i++)
		free(recs[i].rec);
	free(c);
}

static void test_invalid(void **state)
{
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;
	struct taproot_pipeline_stats st;
	struct taproot_rec_sample s = { .hdr = { .size = sizeof(s), .type = TAPROOT_REC_SAMPLE } };

	taproot_pipeline_opts_default(&o);
	o.freq_hz = 0;
	assert_int_equal(taproot_pipeline_new(&o, &p), -EINVAL);
	assert_null(p);
	o.freq_hz = 99;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	s.kstack_nr = 3;		/* does not fit in the record */
	assert_int_equal(taproot_pipeline_add_record(p, &s.hdr, 0), -TAPROOT_ECORRUPT);
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.samples, 0);
	taproot_pipeline_free(p);
}

/*
 * --symbolize none: the frames of this binary and libc leave the pipeline
 * unnamed (addresses in mappings with their build IDs and offsets), the
 * kernel's stay named; the real pprof, told where the binaries are by
 * build ID ($PPROF_BINARY_PATH/BUILD_ID/NAME, as a server keeps them),
 * names the chain as a local run would.
 */
static void test_symbolize_none(void **state)
{
	struct ownstack *c = calloc(1, sizeof(*c));
	struct taproot_pipeline_opts o;
	struct taproot_pipeline *p;
	struct taproot_pipeline_stats st;
	struct taproot_ksyms *ks = NULL;
	struct taproot_rec_header *recs[3];
	const char *kn0 = NULL, *kn1 = NULL, *at, *bid;
	char dir[] = "/tmp/test-pipeline-XXXXXX", path[64], exe[4096];
	unsigned int nk, i;
	uint64_t k[2];
	ssize_t n;
	char *out, *raw;
	int status;

	assert_non_null(c);
	assert_int_equal(prctl(PR_SET_NAME, "test-pipeline"), 0);
	ownstack_init();
	assert_int_equal(pipeline_outer(c, 1), 10);
	nk = kernel_addrs(k, &kn0, &kn1, &ks);

	taproot_pipeline_opts_default(&o);
	o.freq_hz = 100;
	o.ksyms = ks;
	o.symbolize_none = true;
	assert_int_equal(taproot_pipeline_new(&o, &p), 0);
	for (i = 0; i < 3; i++) {
		recs[i] = ownstack_sample(c, (uint32_t)getpid(), (uint32_t)getpid(),
					  i ? NULL : k, i ? 0 : nk, "test-pipeline");
		assert_int_equal(taproot_pipeline_add_record(p, recs[i], 1), 0);
	}
	taproot_pipeline_stats(p, &st);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_COMPLETE], 3);
	/* Left unnamed on purpose: not counted as frames the symbolizer missed. */
	assert_int_equal(st.frames_unsymbolized, 0);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
	assert_int_equal(taproot_pipeline_write(p, path), 0);

	/* As written: no name of ours, mappings with build IDs, kernel named. */
	raw = run(&status, "%s -raw -symbolize=none %s 2>&1", pprof_tool(), path);
	assert_int_equal(status, 0);
	print_message("%s", raw);
	assert_null(strstr(raw, "pipeline_capture"));
	assert_null(strstr(raw, "pipeline_outer"));
	assert_null(strstr(raw, " main "));
	if (nk)
		assert_non_null(strstr(raw, kn0));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	/* "ID: START/LIMIT/OFFSET FILE BUILD_ID" */
	at = strstr(raw, "\nMappings\n");
	assert_non_null(at);
	at = strstr(at, exe);
	assert_non_null(at);
	bid = at + strlen(exe) + 1;
	assert_true(strspn(bid, "0123456789abcdef") >= 40);

	/* A server's copy of the binary, by build ID: pprof names the chain. */
	free(run(&status, "mkdir -p %s/bin/%.*s && cp %s %s/bin/%.*s/ 2>&1", dir,
		 (int)strspn(bid, "0123456789abcdef"), bid, exe, dir,
		 (int)strspn(bid, "0123456789abcdef"), bid));
	assert_int_equal(status, 0);
	out = run(&status, "PPROF_BINARY_PATH=%s/bin HOME=%s %s -traces -symbolize=local %s 2>&1",
		  dir, dir, pprof_tool(), path);
	assert_int_equal(status, 0);
	print_message("%s", out);
	assert_chain(out, "test_symbolize_none");
	free(out);
	free(raw);

	free(run(&status, "rm -rf %s", dir));
	for (i = 0; i < 3; i++)
		free(recs[i]);
	taproot_pipeline_free(p);
	taproot_ksyms_free(ks);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_profile),
		cmocka_unit_test(test_live_top),
		cmocka_unit_test(test_labels_and_relabel),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_kernel_unwound_same_profile),
		cmocka_unit_test(test_kernel_unwound_edges),
		cmocka_unit_test(test_counted_stacks),
		cmocka_unit_test(test_resolved_stacks),
		cmocka_unit_test(test_counts_replaced_during_drain),
		cmocka_unit_test(test_resolved_pool),
		cmocka_unit_test(test_symcache_serials),
		cmocka_unit_test(test_jit_named_late),
		cmocka_unit_test(test_symbolized_once_per_file),
		cmocka_unit_test(test_resolved_other_name),
		cmocka_unit_test(test_symbolize_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
