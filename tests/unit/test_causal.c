// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU join (lib/profile/causal.c) through the pipeline, on synthetic
 * SWITCH and WAKING records whose kernel stacks name functions of a
 * kallsyms file written by the test: intervals joined by (tid, seq) across
 * CPUs and consume rounds, a waking read a round after its switch-in,
 * lost switch-ins, duplicated records, a waking after the switch-in, a
 * reused tid, scaling by sched_one_in, preemption, interrupt wakers, the
 * state labels, the trimming of tracing trampolines, a blocked stack with
 * user frames (this process's own registers and stack) or the module's
 * walk of it, its process's labels and relabel rules, the process events,
 * and the uploads for the module's unwinder that events ask for. The profiles are
 * written and read back by the real pprof tool (-raw), which must show
 * each value, stack and label, and decoded by protoc (sample types,
 * default type, label kinds).
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/taproot.h>

#include "taproot.h"
#include "ownstack.h"
#include "runcmd.h"

/* The fake kernel: each function 0x100 bytes, return addresses inside. */
#define KBASE		0xffffffff81000000ULL
enum kfn {
	K_TRACEITER,		/* __traceiter_sched_switch: trimmed */
	K_SCHEDULE,		/* __schedule */
	K_PIPE_READ,		/* pipe_read */
	K_NANOSLEEP,		/* hrtimer_nanosleep */
	K_TTWU,			/* try_to_wake_up */
	K_PIPE_WRITE,		/* pipe_write */
	K_HRTIMER,		/* hrtimer_wakeup */
	K_IO_WAIT,		/* io_schedule */
	K_NR
};
static const char *const kname[K_NR] = {
	"__traceiter_sched_switch", "__schedule", "pipe_read", "hrtimer_nanosleep",
	"try_to_wake_up", "pipe_write", "hrtimer_wakeup", "io_schedule",
};

static uint64_t kret(enum kfn f)
{
	return KBASE + (uint64_t)f * 0x100 + 0x10;
}

struct fixture {
	char dir[64];
	struct taproot_ksyms *ks;
	struct taproot_pipeline *p;
	uint64_t buf[1024];		/* one record at a time */
};

/* ------------------------------------------------------------ helpers */

static void new_pipeline(struct fixture *f, unsigned int max_intervals, uint64_t min_block)
{
	struct taproot_pipeline_opts o;

	taproot_pipeline_free(f->p);
	taproot_pipeline_opts_default(&o);
	o.ksyms = f->ks;
	o.offcpu = true;
	o.max_intervals = max_intervals;
	o.min_block_ns = min_block;
	assert_int_equal(taproot_pipeline_new(&o, &f->p), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char path[96];
	FILE *k;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-causal-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/kallsyms", f->dir);
	k = fopen(path, "w");
	assert_non_null(k);
	fprintf(k, "%016llx T _stext\n", (unsigned long long)KBASE - 0x1000);
	for (int i = 0; i < K_NR; i++)
		fprintf(k, "%016llx T %s\n", (unsigned long long)(KBASE + (uint64_t)i * 0x100),
			kname[i]);
	fprintf(k, "%016llx T _etext\n", (unsigned long long)(KBASE + K_NR * 0x100));
	assert_int_equal(fclose(k), 0);
	assert_int_equal(taproot_ksyms_load(path, &f->ks), 0);
	unlink(path);
	new_pipeline(f, 0, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	taproot_pipeline_free(f->p);
	taproot_ksyms_free(f->ks);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Append a kernel-only stack snapshot of @n frames at @at; returns its size. */
static size_t put_snap(void *at, const enum kfn *fns, unsigned int n)
{
	struct taproot_stack_snap *s = at;
	uint64_t *k = (uint64_t *)(s + 1);

	memset(s, 0, sizeof(*s));
	s->kstack_nr = (uint16_t)n;
	for (unsigned int i = 0; i < n; i++)
		k[i] = kret(fns[i]);
	return sizeof(*s) + n * 8;
}

struct sw {
	uint64_t t;
	uint16_t flags;			/* F_PREV, F_NEXT, F_PREEMPT */
	uint32_t state;
	uint32_t pid, tid;		/* prev's */
	uint64_t seq;
	uint32_t next_pid, next_tid;
	uint64_t next_seq;
	uint32_t one_in;
	const char *comm;
	const enum kfn *stack;		/* prev's, NULL: no stacks */
	unsigned int nstack;
};

static void feed(struct fixture *f, unsigned int cpu)
{
	assert_int_equal(taproot_pipeline_add_record(f->p, (void *)f->buf, cpu), 0);
}

static void do_switch(struct fixture *f, const struct sw *w)
{
	struct taproot_rec_switch *r = (void *)f->buf;
	size_t size = sizeof(*r);

	memset(f->buf, 0, sizeof(f->buf));
	r->hdr.type = TAPROOT_REC_SWITCH;
	r->hdr.time_ns = w->t;
	r->hdr.flags = w->flags;
	r->prev_state = w->state;
	r->prev_pid = w->pid;
	r->prev_tid = w->tid;
	r->prev_seq = w->seq;
	r->next_pid = w->next_pid;
	r->next_tid = w->next_tid;
	r->next_seq = w->next_seq;
	r->sched_one_in = w->one_in ? w->one_in : 1;
	snprintf(r->prev_comm, sizeof(r->prev_comm), "%s", w->comm ? w->comm : "task");
	if (w->stack) {
		r->hdr.flags |= TAPROOT_SWITCH_F_STACKS;
		size += put_snap(r + 1, w->stack, w->nstack);
	}
	r->hdr.size = (uint32_t)((size + 7) & ~(size_t)7);
	feed(f, 0);
}

/* The switch-out of (@tid, @seq) of process @pid, blocked in @fn. */
static void out(struct fixture *f, uint64_t t, uint32_t pid, uint32_t tid, uint64_t seq,
		uint32_t state, bool preempt, enum kfn fn, uint32_t one_in)
{
	enum kfn st[3] = { K_TRACEITER, K_SCHEDULE, fn };
	struct sw w = {
		.t = t, .flags = TAPROOT_SWITCH_F_PREV | (preempt ? TAPROOT_SWITCH_F_PREEMPT : 0),
		.state = state, .pid = pid, .tid = tid, .seq = seq, .one_in = one_in,
		.comm = "sleeper", .stack = st, .nstack = 3,
	};

	do_switch(f, &w);
}

static void in(struct fixture *f, uint64_t t, uint32_t pid, uint32_t tid, uint64_t seq)
{
	struct sw w = {
		.t = t, .flags = TAPROOT_SWITCH_F_NEXT, .pid = 999, .tid = 999,
		.next_pid = pid, .next_tid = tid, .next_seq = seq,
	};

	do_switch(f, &w);
}

/* A waking of (@tid, @seq) by @waker_tid in @fn (0: by an interrupt, @irq flags). */
static void wake(struct fixture *f, uint64_t t, uint32_t pid, uint32_t tid, uint64_t seq,
		 uint32_t waker_tid, uint16_t irq, enum kfn fn)
{
	struct taproot_rec_waking *r = (void *)f->buf;
	enum kfn st[2] = { K_TTWU, fn };
	size_t size = sizeof(*r);

	memset(f->buf, 0, sizeof(f->buf));
	r->hdr.type = TAPROOT_REC_WAKING;
	r->hdr.time_ns = t;
	r->hdr.flags = irq | TAPROOT_WAKING_F_STACKS;
	r->target_pid = pid;
	r->target_tid = tid;
	r->target_seq = seq;
	r->waker_pid = irq ? 0 : 4242;
	r->waker_tid = irq ? 0 : waker_tid;
	if (!irq)
		snprintf(r->waker_comm, sizeof(r->waker_comm), "writer");
	size += put_snap(r + 1, st, 2);
	r->hdr.size = (uint32_t)((size + 7) & ~(size_t)7);
	feed(f, 1);
}

static void stats(struct fixture *f, struct taproot_causal_stats *cs)
{
	struct taproot_pipeline_stats st;

	taproot_pipeline_stats(f->p, &st);
	*cs = st.causal;
}

/* pprof -raw of profile @kind, written now. */
static char *raw(struct fixture *f, enum taproot_profile_kind kind)
{
	char path[128];
	char *outp;
	int st;

	snprintf(path, sizeof(path), "%s/%s.pb.gz", f->dir, taproot_profile_kind_name(kind));
	assert_int_equal(taproot_pipeline_write_kind(f->p, kind, path), 0);
	outp = run(&st, "'%s' -raw '%s' 2>&1", pprof_tool(), path);
	assert_int_equal(st, 0);
	unlink(path);
	return outp;
}

/*
 * The sample line of pprof -raw whose stack is @locs and whose labels
 * include @label: "   VALUE1 VALUE2: L1 L2 ..." with location IDs, then
 * label lines. Instead of resolving IDs, the test checks the samples'
 * values and the names in the "Locations" section in the order of the
 * stack, through the helper below.
 */
struct rawsample {
	int64_t v[2];
	char names[1024];		/* function names of the stack, leaf first, ';' separated */
	char labels[512];		/* "key:value " as pprof prints them */
};

/* Function name of location @id in a pprof -raw text. */
static void loc_name(const char *text, unsigned long id, char *out, size_t n)
{
	const char *s = strstr(text, "Locations\n");
	char key[32];

	out[0] = '\0';
	assert_non_null(s);
	snprintf(key, sizeof(key), "\n%6lu: ", id);
	s = strstr(s, key);
	assert_non_null(s);
	s += strlen(key);
	/* "0xADDR M=1 NAME :0 s=0" or "0x0 NAME :0 s=0" (markers) */
	s = strchr(s, ' ');
	assert_non_null(s);
	s++;
	if (!strncmp(s, "M=", 2)) {
		s = strchr(s, ' ');
		assert_non_null(s);
		s++;
	}
	snprintf(out, n, "%.*s", (int)strcspn(s, " \n"), s);
}

/* Parse the samples of pprof -raw @text into @rs (at most @max); returns how many. */
static size_t parse_raw(const char *text, struct rawsample *rs, size_t max)
{
	const char *s = strstr(text, "Samples:\n");
	size_t n = 0;

	assert_non_null(s);
	s = strchr(s + 9, '\n');	/* the header line of types */
	assert_non_null(s);
	s++;
	while (*s && strncmp(s, "Locations", 9)) {
		const char *eol = strchr(s, '\n');
		long long a, b;
		int used;

		if (!eol)
			break;
		if (sscanf(s, " %lld %lld:%n", &a, &b, &used) == 2 && n < max) {
			const char *p = s + used;
			struct rawsample *r = &rs[n++];

			memset(r, 0, sizeof(*r));
			r->v[0] = a;
			r->v[1] = b;
			while (p < eol) {
				unsigned long id = strtoul(p, (char **)&p, 10);
				char name[256];

				if (!id)
					break;
				loc_name(text, id, name, sizeof(name));
				strncat(r->names, name, sizeof(r->names) - strlen(r->names) - 2);
				strcat(r->names, ";");
			}
		} else if (n && strchr(s, ':') && strchr(s, ':') < eol) {
			/* "                key:[value]" label lines of the last sample */
			const char *p = s;

			while (*p == ' ')
				p++;
			strncat(rs[n - 1].labels, p, (size_t)(eol - p) < 200 ? (size_t)(eol - p) : 200);
			strcat(rs[n - 1].labels, " ");
		}
		s = eol + 1;
	}
	return n;
}

static const struct rawsample *find_sample(const struct rawsample *rs, size_t n,
					   const char *names)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rs[i].names, names))
			return &rs[i];
	return NULL;
}

/* The names of the first of @rs (@n) that holds @sub, or NULL. */
static const char *names_with(const struct rawsample *rs, size_t n, const char *sub)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(rs[i].names, sub))
			return rs[i].names;
	return NULL;
}

/*
 * The string table of protoc's text decoding of @gz, in order, and the
 * text itself (*@text).
 */
#define PROTO_DIR	"/usr/share/gocode/src/github.com/google/pprof/proto"

static size_t protoc_strings(const char *gz, char ***strs, char **text)
{
	size_t n = 0;
	char *t, *line;
	int st;

	if (access(PROTO_DIR "/profile.proto", R_OK))
		fail_msg(PROTO_DIR "/profile.proto is missing: install golang-github-google-pprof-dev");
	t = run(&st, "gzip -dc '%s' | protoc --decode=perftools.profiles.Profile -I " PROTO_DIR
		" profile.proto", gz);
	assert_int_equal(st, 0);
	*strs = NULL;
	for (line = strstr(t, "string_table: \""); line; line = strstr(line + 1, "string_table: \"")) {
		const char *b = line + 15;
		size_t len = strcspn(b, "\"");

		*strs = realloc(*strs, (n + 1) * sizeof(**strs));
		assert_non_null(*strs);
		(*strs)[n++] = strndup(b, len);
	}
	*text = t;
	return n;
}

/* The integer after the first "@key: " in @text (after @from), or -1. */
static long field(const char *text, const char *from, const char *key)
{
	char k[64];
	const char *s;

	snprintf(k, sizeof(k), "%s: ", key);
	s = strstr(from ? from : text, k);
	return s ? strtol(s + strlen(k), NULL, 10) : -1;
}

/* ------------------------------------------- this process's own stack */

static volatile int sink;

/* The registers and stack as the kernel would copy them at a switch-out. */
__attribute__((noinline)) static void causal_capture(struct ownstack *c)
{
	OWNSTACK_CAPTURE(c);
}

__attribute__((noinline)) static int causal_blocked_in(struct ownstack *c, int x)
{
	causal_capture(c);
	sink = x;
	return x + 1;
}

/* ------------------------------------------------------------ tests */

/*
 * The reader blocks in pipe_read (CPU 0), the writer wakes it from
 * pipe_write (CPU 1), it runs again (CPU 2): one interval in all three
 * profiles, each checked through pprof.
 */
static void test_join_three_profiles(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;
	struct rawsample rs[8];
	const struct rawsample *r;
	char *txt;
	size_t n;

	out(f, 1000000, 100, 101, 7, 0x1, false, K_PIPE_READ, 1);
	wake(f, 3000000, 100, 101, 7, 202, 0, K_PIPE_WRITE);
	in(f, 3500000, 100, 101, 7);
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.joined, 0);	/* held one more round */
	assert_int_equal(cs.open, 1);
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.joined, 1);
	assert_int_equal(cs.woken, 1);
	assert_int_equal(cs.open, 0);
	assert_int_equal(cs.blocked_ns, 2500000);
	assert_int_equal(cs.wait_ns, 2000000);
	assert_int_equal(cs.runqueue_ns, 500000);

	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_non_null(strstr(txt, "off_cpu/nanoseconds"));
	assert_non_null(strstr(txt, "switches/count"));
	n = parse_raw(txt, rs, 8);
	assert_int_equal(n, 1);
	/* The trampoline is gone; the blocked function under __schedule. */
	assert_string_equal(rs[0].names, "__schedule;pipe_read;");
	assert_int_equal(rs[0].v[0], 2500000);
	assert_int_equal(rs[0].v[1], 1);
	assert_non_null(strstr(rs[0].labels, "state:[S]"));
	assert_non_null(strstr(rs[0].labels, "thread_comm:[sleeper]"));
	assert_non_null(strstr(rs[0].labels, "pid:[100]"));
	assert_null(strstr(rs[0].labels, "waker:"));
	free(txt);

	txt = raw(f, TAPROOT_PROFILE_OFFWAKE);
	n = parse_raw(txt, rs, 8);
	assert_int_equal(n, 1);
	/* Leaf first: the waker's root, its leaf, the separator, the blocked stack. */
	r = find_sample(rs, n, "pipe_write;try_to_wake_up;--;__schedule;pipe_read;");
	assert_non_null(r);
	assert_int_equal(r->v[0], 2000000);
	assert_int_equal(r->v[1], 1);
	assert_non_null(strstr(r->labels, "waker:[writer]"));
	assert_non_null(strstr(r->labels, "state:[S]"));
	free(txt);

	txt = raw(f, TAPROOT_PROFILE_SCHEDLAT);
	assert_non_null(strstr(txt, "runqueue/nanoseconds"));
	n = parse_raw(txt, rs, 8);
	assert_int_equal(n, 1);
	assert_string_equal(rs[0].names, "__schedule;pipe_read;");
	assert_int_equal(rs[0].v[0], 500000);
	free(txt);
	assert_int_equal(taproot_pipeline_adds(f->p, TAPROOT_PROFILE_CPU), 0);
}

/*
 * A waking committed on one CPU before the switch-in on another but read
 * in the next consume round: the interval waits for it.
 */
static void test_out_of_order_rounds(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;

	/* Round 1: the switch-out and the switch-in; round 2: the waking. */
	out(f, 1000, 100, 101, 8, 0x1, false, K_PIPE_READ, 1);
	in(f, 9000, 100, 101, 8);
	taproot_pipeline_end_round(f->p);
	wake(f, 5000, 100, 101, 8, 202, 0, K_PIPE_WRITE);
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.joined, 1);
	assert_int_equal(cs.woken, 1);
	assert_int_equal(cs.wait_ns, 4000);
	assert_int_equal(cs.runqueue_ns, 4000);

	/* The switch-in first (another CPU's ring read earlier), then the rest. */
	in(f, 30000, 100, 101, 9);
	taproot_pipeline_end_round(f->p);
	out(f, 10000, 100, 101, 9, 0x2, false, K_IO_WAIT, 1);
	wake(f, 20000, 100, 101, 9, 0, TAPROOT_WAKING_F_HARDIRQ, K_HRTIMER);
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.joined, 2);
	assert_int_equal(cs.woken, 2);
	assert_int_equal(cs.blocked_ns, 8000 + 20000);
	assert_int_equal(cs.unpaired_no_out, 0);
}

/* Lost ends stay unpaired, whatever comes after; nothing is joined by adjacency. */
static void test_lost_and_unpaired(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;

	out(f, 1000, 100, 101, 10, 0x1, false, K_PIPE_READ, 1);	/* its switch-in lost */
	wake(f, 1500, 100, 101, 10, 202, 0, K_PIPE_WRITE);
	in(f, 5000, 100, 101, 12);		/* another interval's, its switch-out lost */
	out(f, 6000, 100, 101, 13, 0x1, false, K_PIPE_READ, 1);
	in(f, 7000, 100, 101, 13);
	taproot_pipeline_end_round(f->p);
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.joined, 1);
	assert_int_equal(cs.blocked_ns, 1000);
	assert_int_equal(cs.unpaired_no_out, 1);	/* seq 12 */
	assert_int_equal(cs.open, 1);			/* seq 10, still asleep */

	/* A waking whose switch-out never comes is dropped after a round. */
	wake(f, 8000, 100, 101, 14, 202, 0, K_PIPE_WRITE);
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.open, 2);
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.open, 1);
	assert_int_equal(cs.wakings_outside, 1);
	taproot_pipeline_flush(f->p, false);		/* not old enough to drop */
	stats(f, &cs);
	assert_int_equal(cs.open, 1);
	taproot_pipeline_flush(f->p, true);
	stats(f, &cs);
	assert_int_equal(cs.open, 0);
	assert_int_equal(cs.unpaired_no_in, 1);
	assert_int_equal(cs.joined, 1);
	assert_int_equal(taproot_pipeline_adds(f->p, TAPROOT_PROFILE_OFFWAKE), 0);
}

/* The same record twice counts once; a waking after the switch-in is ignored. */
static void test_duplicates_and_late_waking(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;

	out(f, 1000, 100, 101, 20, 0x1, false, K_PIPE_READ, 1);
	out(f, 1000, 100, 101, 20, 0x1, false, K_PIPE_READ, 1);
	in(f, 4000, 100, 101, 20);
	in(f, 4000, 100, 101, 20);
	taproot_pipeline_end_round(f->p);
	wake(f, 4500, 100, 101, 20, 202, 0, K_PIPE_WRITE);	/* after the switch-in */
	taproot_pipeline_end_round(f->p);
	stats(f, &cs);
	assert_int_equal(cs.duplicates, 2);
	assert_int_equal(cs.wakings_outside, 1);
	assert_int_equal(cs.joined, 1);
	assert_int_equal(cs.woken, 0);
	assert_int_equal(cs.blocked_ns, 3000);
	assert_int_equal(cs.runqueue_ns, 0);	/* not woken, not preempted: unknown */
	assert_int_equal(taproot_pipeline_adds(f->p, TAPROOT_PROFILE_OFFWAKE), 0);

	/* A waking before its switch-out is not the waking of this interval. */
	out(f, 10000, 100, 101, 21, 0x1, false, K_PIPE_READ, 1);
	wake(f, 9000, 100, 101, 21, 202, 0, K_PIPE_WRITE);
	in(f, 12000, 100, 101, 21);
	taproot_pipeline_flush(f->p, true);
	stats(f, &cs);
	assert_int_equal(cs.wakings_outside, 2);
	assert_int_equal(cs.joined, 2);
	assert_int_equal(cs.woken, 0);
}

/*
 * A tid reused by a new task that reaches the seq of an interval the old
 * task never ended: the old interval is unpaired, the new one joined with
 * its own ends only.
 */
static void test_tid_reuse(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;
	struct rawsample rs[4];
	char *txt;

	out(f, 1000, 300, 301, 3, 0x1, false, K_PIPE_READ, 1);	/* the old task exits */
	taproot_pipeline_end_round(f->p);
	out(f, 900000, 400, 301, 3, 0x2, false, K_IO_WAIT, 1);
	in(f, 901000, 400, 301, 3);
	taproot_pipeline_flush(f->p, true);
	stats(f, &cs);
	assert_int_equal(cs.unpaired_no_in, 1);
	assert_int_equal(cs.joined, 1);
	assert_int_equal(cs.blocked_ns, 1000);
	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_int_equal(parse_raw(txt, rs, 4), 1);
	assert_string_equal(rs[0].names, "__schedule;io_schedule;");
	assert_non_null(strstr(rs[0].labels, "pid:[400]"));
	assert_non_null(strstr(rs[0].labels, "state:[D]"));
	free(txt);
}

/* Values scale by sched_one_in; preempted intervals are R+ and in schedlat. */
static void test_scaling_and_preemption(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;
	struct rawsample rs[4];
	const struct rawsample *r;
	char *txt;
	size_t n;

	out(f, 1000, 100, 101, 30, 0x1, false, K_NANOSLEEP, 16);
	wake(f, 2000, 100, 101, 30, 0, TAPROOT_WAKING_F_HARDIRQ, K_HRTIMER);
	in(f, 2100, 100, 101, 30);
	out(f, 5000, 100, 102, 31, 0, true, K_SCHEDULE, 16);	/* preempted */
	in(f, 5300, 100, 102, 31);
	taproot_pipeline_flush(f->p, true);
	stats(f, &cs);
	assert_int_equal(cs.joined, 2);
	assert_int_equal(cs.preempted, 1);
	assert_int_equal(cs.blocked_ns, 16 * (1100 + 300));
	assert_int_equal(cs.runqueue_ns, 16 * (100 + 300));

	txt = raw(f, TAPROOT_PROFILE_OFFWAKE);
	n = parse_raw(txt, rs, 4);
	assert_int_equal(n, 1);
	r = find_sample(rs, n, "hrtimer_wakeup;try_to_wake_up;--;__schedule;hrtimer_nanosleep;");
	assert_non_null(r);
	assert_int_equal(r->v[0], 16 * 1000);
	assert_int_equal(r->v[1], 16);
	assert_non_null(strstr(r->labels, "waker:[[hardirq]]"));
	free(txt);

	txt = raw(f, TAPROOT_PROFILE_SCHEDLAT);
	n = parse_raw(txt, rs, 4);
	assert_int_equal(n, 2);
	r = find_sample(rs, n, "__schedule;__schedule;");
	assert_non_null(r);
	assert_int_equal(r->v[0], 16 * 300);
	assert_int_equal(r->v[1], 16);
	assert_non_null(strstr(r->labels, "state:[R+]"));
	free(txt);
}

/*
 * taprootd changes one-in-N while tasks are off CPU: the module's
 * selection is nested (selected at N implies selected at every smaller
 * value), so an interval with both ends recorded had probability 1 / the
 * larger of its two values, and that is its weight, whichever end came
 * first.
 */
static void test_one_in_changed(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;
	struct sw in16 = { .t = 2000, .flags = TAPROOT_SWITCH_F_NEXT, .pid = 999, .tid = 999,
			   .next_pid = 100, .next_tid = 101, .next_seq = 30, .one_in = 16 };

	out(f, 1000, 100, 101, 30, 0x1, false, K_NANOSLEEP, 4);	/* raised to 16 */
	do_switch(f, &in16);
	out(f, 5000, 100, 101, 31, 0x1, false, K_NANOSLEEP, 16);	/* lowered to 1 */
	in(f, 5500, 100, 101, 31);
	in16.t = 7000;						/* in before out */
	in16.next_seq = 32;
	do_switch(f, &in16);
	out(f, 6000, 100, 101, 32, 0x1, false, K_NANOSLEEP, 2);
	taproot_pipeline_flush(f->p, true);
	stats(f, &cs);
	assert_int_equal(cs.joined, 3);
	assert_int_equal(cs.blocked_ns, 16 * 1000 + 16 * 500 + 16 * 1000);
}

/* taprootd's --sched-budget policy. */
static void test_one_in_adapt(void **state)
{
	(void)state;
	assert_int_equal(taproot_sched_one_in_adapt(1, 1, 100, 500), 1);
	/* 100000/s over 500/s: 200, the next power of two. */
	assert_int_equal(taproot_sched_one_in_adapt(1, 1, 100000, 500), 256);
	/* Powers of two times the floor; the floor alone under the budget. */
	assert_int_equal(taproot_sched_one_in_adapt(1, 3, 3000, 500), 6);
	assert_int_equal(taproot_sched_one_in_adapt(1, 4, 100, 500), 4);
	/* Down only once the rate is a quarter of what the value allows. */
	assert_int_equal(taproot_sched_one_in_adapt(256, 1, 60000, 500), 256);
	assert_int_equal(taproot_sched_one_in_adapt(256, 1, 20000, 500), 64);
	assert_int_equal(taproot_sched_one_in_adapt(256, 1, 10, 500), 1);
	/* Bounded; no budget: the floor. */
	assert_int_equal(taproot_sched_one_in_adapt(8, 1, 1e12, 500), TAPROOT_SCHED_ONE_IN_MAX);
	assert_int_equal(taproot_sched_one_in_adapt(64, 3, 1e9, 0), 3);
}

/* TASK_* states: S for interruptible, D for every other bit. */
static void test_states(void **state)
{
	static const struct { uint32_t st; const char *label; } cases[] = {
		{ 0x1, "state:[S]" }, { 0x2, "state:[D]" }, { 0x102, "state:[D]" },
		{ 0x8, "state:[D]" }, { 0x402, "state:[D]" },
	};
	struct fixture *f = *state;
	struct rawsample rs[1];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *txt;

		new_pipeline(f, 0, 0);
		out(f, 1000, 100, 101, 40, cases[i].st, false, K_PIPE_READ, 1);
		in(f, 2000, 100, 101, 40);
		taproot_pipeline_flush(f->p, true);
		txt = raw(f, TAPROOT_PROFILE_OFFCPU);
		assert_int_equal(parse_raw(txt, rs, 1), 1);
		if (!strstr(rs[0].labels, cases[i].label))
			fail_msg("state 0x%x: labels %s, want %s", cases[i].st, rs[0].labels,
				 cases[i].label);
		free(txt);
	}
}

/* Bounds: a full table drops and counts; short intervals are filtered. */
static void test_bounds_and_filter(void **state)
{
	struct fixture *f = *state;
	struct taproot_causal_stats cs;

	new_pipeline(f, 2, 1500);
	out(f, 1000, 100, 101, 50, 0x1, false, K_PIPE_READ, 1);
	out(f, 1000, 100, 102, 50, 0x1, false, K_PIPE_READ, 1);
	out(f, 1000, 100, 103, 50, 0x1, false, K_PIPE_READ, 1);	/* no room */
	in(f, 2000, 100, 101, 50);		/* 1000 ns: below the filter */
	in(f, 3000, 100, 102, 50);
	in(f, 4000, 100, 103, 50);		/* no room either */
	taproot_pipeline_flush(f->p, true);
	stats(f, &cs);
	assert_int_equal(cs.table_full, 2);
	assert_int_equal(cs.joined, 2);
	assert_int_equal(cs.filtered, 1);
	assert_int_equal(taproot_pipeline_adds(f->p, TAPROOT_PROFILE_OFFCPU), 1);
	assert_int_equal(cs.open, 0);
}

/* Records that do not add up are refused and counted, never read past their end. */
static void test_bad_snapshot(void **state)
{
	struct fixture *f = *state;
	struct taproot_rec_switch *r = (void *)f->buf;
	struct taproot_stack_snap *s = (void *)(r + 1);
	struct taproot_pipeline_stats st;

	memset(f->buf, 0, sizeof(f->buf));
	r->hdr.type = TAPROOT_REC_SWITCH;
	r->hdr.flags = TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS;
	r->hdr.time_ns = 100;
	r->prev_tid = 5;
	r->prev_pid = 5;
	s->kstack_nr = 10;		/* 80 bytes, but the record ends after the snapshot */
	r->hdr.size = sizeof(*r) + sizeof(*s);
	assert_int_equal(taproot_pipeline_add_record(f->p, &r->hdr, 0), -TAPROOT_ECORRUPT);
	taproot_pipeline_stats(f->p, &st);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.causal.switch_outs, 0);
	assert_int_equal(st.causal.open, 0);
}

/* FORK, EXEC and EXIT records reach the process model and are counted. */
static void test_proc_events(void **state)
{
	struct fixture *f = *state;
	struct taproot_pipeline_stats st;
	struct taproot_rec_fork fk = { .hdr = { .size = sizeof(fk), .type = TAPROOT_REC_FORK } };
	struct taproot_rec_exit ex = { .hdr = { .size = sizeof(ex), .type = TAPROOT_REC_EXIT,
						.flags = TAPROOT_EXIT_F_GROUP_DEAD } };
	struct {
		struct taproot_rec_exec e;
		char name[8];
	} ec = { .e = { .hdr = { .size = sizeof(ec), .type = TAPROOT_REC_EXEC },
			.filename_len = 8 }, .name = "/bin/xy" };

	fk.parent_pid = fk.parent_tid = 1;
	fk.child_pid = fk.child_tid = 4000000;
	ec.e.pid = ec.e.tid = ec.e.old_tid = 4000000;
	ex.pid = ex.tid = 4000000;
	assert_int_equal(taproot_pipeline_add_record(f->p, &fk.hdr, 0), 0);
	assert_int_equal(taproot_pipeline_add_record(f->p, &ec.e.hdr, 0), 0);
	assert_int_equal(taproot_pipeline_add_record(f->p, &ex.hdr, 0), 0);
	taproot_pipeline_stats(f->p, &st);
	assert_int_equal(st.proc_events, 3);
	assert_int_equal(st.other_records, 0);
}

/*
 * A cache of symbolized pcs smaller than one stack: it must not be emptied
 * while a stack borrows from it (under ASan, a use after free otherwise).
 */
static void test_tiny_sym_cache(void **state)
{
	struct fixture *f = *state;
	struct taproot_pipeline_opts o;
	struct taproot_causal_stats cs;
	struct rawsample rs[4];
	char *txt;

	taproot_pipeline_free(f->p);
	taproot_pipeline_opts_default(&o);
	o.ksyms = f->ks;
	o.offcpu = true;
	o.sym_cache_entries = 2;
	assert_int_equal(taproot_pipeline_new(&o, &f->p), 0);
	for (uint64_t i = 0; i < 8; i++) {
		out(f, 1000 + i * 100, 100, 101, 60 + i, 0x1, false,
		    i % 2 ? K_PIPE_READ : K_NANOSLEEP, 1);
		wake(f, 1050 + i * 100, 100, 101, 60 + i, 202, 0, K_PIPE_WRITE);
		in(f, 1060 + i * 100, 100, 101, 60 + i);
	}
	taproot_pipeline_flush(f->p, true);
	stats(f, &cs);
	assert_int_equal(cs.joined, 8);
	txt = raw(f, TAPROOT_PROFILE_OFFWAKE);
	assert_int_equal(parse_raw(txt, rs, 4), 2);
	assert_non_null(find_sample(rs, 2, "pipe_write;try_to_wake_up;--;__schedule;pipe_read;"));
	assert_non_null(find_sample(rs, 2,
				    "pipe_write;try_to_wake_up;--;__schedule;hrtimer_nanosleep;"));
	free(txt);
}

/*
 * protoc's decoding of the three files: sample types and the default one
 * through the string table, no period type, labels as strings (state,
 * waker) and numbers (pid), the "--" frame a function of its own.
 */
static void test_protoc_fields(void **state)
{
	static const struct {
		enum taproot_profile_kind kind;
		const char *type0, *unit0, *type1, *unit1;
	} files[] = {
		{ TAPROOT_PROFILE_OFFCPU, "off_cpu", "nanoseconds", "switches", "count" },
		{ TAPROOT_PROFILE_OFFWAKE, "off_cpu", "nanoseconds", "switches", "count" },
		{ TAPROOT_PROFILE_SCHEDLAT, "runqueue", "nanoseconds", "switches", "count" },
	};
	struct fixture *f = *state;

	out(f, 1000, 100, 101, 7, 0x2, false, K_IO_WAIT, 1);
	wake(f, 1500, 100, 101, 7, 202, 0, K_PIPE_WRITE);
	in(f, 1700, 100, 101, 7);
	taproot_pipeline_flush(f->p, true);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[128], **strs, *text;
		const char *st1, *lab;
		size_t n;

		snprintf(path, sizeof(path), "%s/%s.pb.gz", f->dir,
			 taproot_profile_kind_name(files[i].kind));
		assert_int_equal(taproot_pipeline_write_kind(f->p, files[i].kind, path), 0);
		n = protoc_strings(path, &strs, &text);
		unlink(path);
		assert_true(n > 4);
		assert_string_equal(strs[0], "");
		/* sample_type { type unit } twice, then default_sample_type. */
		st1 = strstr(text, "sample_type {");
		assert_non_null(st1);
		assert_string_equal(strs[field(text, st1, "type")], files[i].type0);
		assert_string_equal(strs[field(text, st1, "unit")], files[i].unit0);
		st1 = strstr(st1 + 1, "sample_type {");
		assert_non_null(st1);
		assert_string_equal(strs[field(text, st1, "type")], files[i].type1);
		assert_string_equal(strs[field(text, st1, "unit")], files[i].unit1);
		assert_null(strstr(st1 + 1, "sample_type {"));
		assert_string_equal(strs[field(text, NULL, "default_sample_type")], files[i].type0);
		assert_null(strstr(text, "period_type"));
		/* Labels: pid a number, state a string. */
		lab = strstr(text, "label {");
		assert_non_null(lab);
		assert_string_equal(strs[field(text, lab, "key")], "pid");
		assert_int_equal(field(text, lab, "num"), 100);
		for (lab = strstr(text, "label {"); lab; lab = strstr(lab + 1, "label {"))
			if (!strcmp(strs[field(text, lab, "key")], "state"))
				break;
		assert_non_null(lab);
		assert_string_equal(strs[field(text, lab, "str")], "D");
		if (files[i].kind == TAPROOT_PROFILE_OFFWAKE) {
			bool sep = false, waker = false;

			for (size_t k = 0; k < n; k++) {
				sep |= !strcmp(strs[k], "--");
				waker |= !strcmp(strs[k], "writer");
			}
			assert_true(sep && waker);
		}
		for (size_t k = 0; k < n; k++)
			free(strs[k]);
		free(strs);
		free(text);
	}
}

/*
 * A switch-out whose snapshot has user registers and a copy of the user
 * stack (this process's own, taken in causal_blocked_in): the blocked
 * stack is the kernel frames on top of the unwound, symbolized user frames.
 */
/*
 * The switch-out of this process's main thread (interval @seq, state
 * @pstate), blocked in __schedule <- pipe_read <- its own stack (@u).
 */
static void out_self(struct fixture *f, struct ownstack *u, uint64_t t, uint64_t seq,
		     uint32_t pstate)
{
	struct taproot_rec_switch *r = (void *)f->buf;
	struct taproot_stack_snap *sn = (void *)(r + 1);
	enum kfn st[2] = { K_SCHEDULE, K_PIPE_READ };
	size_t size, len = u->len;

	memset(f->buf, 0, sizeof(f->buf));
	r->hdr.type = TAPROOT_REC_SWITCH;
	r->hdr.time_ns = t;
	r->hdr.flags = TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS;
	r->prev_state = pstate;
	r->prev_pid = r->prev_tid = (uint32_t)getpid();
	r->prev_seq = seq;
	r->sched_one_in = 1;
	snprintf(r->prev_comm, sizeof(r->prev_comm), "me");
	/* The record's comm is the process's own: else it looks exec'd since. */
	assert_int_equal(prctl(PR_SET_NAME, "me"), 0);
	size = sizeof(*r) + put_snap(sn, st, 2);
	sn->flags = TAPROOT_SNAP_F_USER_REGS;
	sn->user_regs = u->regs;
	/* The user stack follows the kernel frames; the buffer bounds its copy. */
	if (len > sizeof(f->buf) - size - 8)
		len = (sizeof(f->buf) - size - 8) & ~(size_t)7;
	sn->ustack_len = (uint32_t)len;
	memcpy((char *)f->buf + size, u->stack, len);
	size += len;
	r->hdr.size = (uint32_t)((size + 7) & ~(size_t)7);
	feed(f, 0);
}

static void test_user_stack(void **state)
{
	struct fixture *f = *state;
	struct ownstack *u = calloc(1, sizeof(*u));
	struct rawsample rs[2];
	char *txt, *at;

	assert_non_null(u);
	ownstack_init();
	assert_int_equal(causal_blocked_in(u, 1), 2);
	out_self(f, u, 1000, 3, 0x1);
	in(f, 5000, (uint32_t)getpid(), (uint32_t)getpid(), 3);
	taproot_pipeline_flush(f->p, true);
	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_int_equal(parse_raw(txt, rs, 2), 1);
	assert_int_equal(rs[0].v[0], 4000);
	/* Kernel frames on top, then the function that blocked and its callers. */
	static const char want[] = "__schedule;pipe_read;causal_capture;causal_blocked_in";

	if (strncmp(rs[0].names, want, strlen(want)))
		fail_msg("offcpu stack: %s", rs[0].names);
	/* ... down to main (the unwind went through the whole copy). */
	at = strstr(rs[0].names, ";test_user_stack;");
	assert_non_null(at);
	assert_non_null(strstr(at, ";main;"));
	free(txt);
	free(u);
}

/* ------------------------------------- stacks the module walked (UPCS) */

static int self_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	return taproot_proc_unwind_map(arg, pc, um) == 0 ? 1 : 0;
}

/* The user pcs of @u as the module's walk finds them: the unwinder's, here. */
static unsigned int self_pcs(const struct ownstack *u, uint64_t *pcs, unsigned int max)
{
	static const struct taproot_unwind_ops ops = { .map = self_map };
	struct taproot_unwind_result res;
	struct taproot_unwinder *uw;
	struct taproot_procs *procs;
	struct taproot_proc *proc;

	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	assert_int_equal(taproot_proc_get(procs, getpid(), 0, &proc), 0);
	assert_int_equal(taproot_unwinder_new(&ops, 0, &uw), 0);
	assert_true(taproot_unwind(uw, proc, &u->regs, u->stack, u->len, pcs, NULL, max,
				   &res) > 3);
	assert_int_equal(res.end, TAPROOT_UNWIND_COMPLETE);
	taproot_unwinder_free(uw);
	taproot_procs_free(procs);
	return res.nr;
}

/* A snapshot's flags that say its walk ended @end (enum taproot_kunwind). */
#define SNAP_END(end) ((uint16_t)((end) << TAPROOT_SNAP_UNWIND_SHIFT))

/*
 * A snapshot as the module writes a walk at @sn: kernel frames @st (@nst),
 * then @n pcs as its "stack bytes", the leaf's ip, sp, bp alone; @flags
 * (the walk's end, SNAP_END(), among them) are added to USER_REGS | UPCS.
 * Returns its size.
 */
static size_t put_snap_upcs(struct taproot_stack_snap *sn, const enum kfn *st, unsigned int nst,
			    const struct ownstack *u, const uint64_t *pcs, unsigned int n,
			    uint16_t flags)
{
	size_t size = put_snap(sn, st, nst);

	sn->flags = TAPROOT_SNAP_F_USER_REGS | TAPROOT_SNAP_F_UPCS | flags;
	sn->user_regs.ip = u->regs.ip;
	sn->user_regs.sp = u->regs.sp;
	sn->user_regs.bp = u->regs.bp;
	sn->ustack_len = n * 8;
	memcpy((char *)sn + size, pcs, n * 8);
	return size + n * 8;
}

/* The switch-out of this process's main thread with the module's walk. */
static void out_self_upcs(struct fixture *f, struct ownstack *u, uint64_t t, uint64_t seq,
			  const uint64_t *pcs, unsigned int n, uint16_t flags)
{
	struct taproot_rec_switch *r = (void *)f->buf;
	enum kfn st[2] = { K_SCHEDULE, K_PIPE_READ };
	size_t size;

	memset(f->buf, 0, sizeof(f->buf));
	r->hdr.type = TAPROOT_REC_SWITCH;
	r->hdr.time_ns = t;
	r->hdr.flags = TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS;
	r->prev_state = 0x1;
	r->prev_pid = r->prev_tid = (uint32_t)getpid();
	r->prev_seq = seq;
	r->sched_one_in = 1;
	snprintf(r->prev_comm, sizeof(r->prev_comm), "me");
	assert_int_equal(prctl(PR_SET_NAME, "me"), 0);
	size = sizeof(*r) + put_snap_upcs((void *)(r + 1), st, 2, u, pcs, n, flags);
	r->hdr.size = (uint32_t)((size + 7) & ~(size_t)7);
	feed(f, 0);
}

/* This process wakes interval (@tid, @seq) of process 100, its walk as the waker's stack. */
static void wake_self_upcs(struct fixture *f, struct ownstack *u, uint64_t t, uint32_t tid,
			   uint64_t seq, const uint64_t *pcs, unsigned int n)
{
	struct taproot_rec_waking *r = (void *)f->buf;
	enum kfn st[2] = { K_TTWU, K_PIPE_WRITE };
	size_t size;

	memset(f->buf, 0, sizeof(f->buf));
	r->hdr.type = TAPROOT_REC_WAKING;
	r->hdr.time_ns = t;
	r->hdr.flags = TAPROOT_WAKING_F_STACKS;
	r->target_pid = 100;
	r->target_tid = tid;
	r->target_seq = seq;
	r->waker_pid = r->waker_tid = (uint32_t)getpid();
	snprintf(r->waker_comm, sizeof(r->waker_comm), "me");
	size = sizeof(*r) + put_snap_upcs((void *)(r + 1), st, 2, u, pcs, n,
					  SNAP_END(TAPROOT_KUNWIND_COMPLETE));
	r->hdr.size = (uint32_t)((size + 7) & ~(size_t)7);
	feed(f, 1);
}

/*
 * Snapshots whose user part is the module's walk (TAPROOT_SNAP_F_UPCS):
 * the pcs are symbolized as they are (leaf exact, the others at pc - 1),
 * nothing is unwound here, and the stacks are those the unwinder finds
 * from a copy. A walk cut at the frame cap (USTACK_TRUNC) ends in
 * "[max depth]", one that stopped (USTACK_FAULT) in the marker of the end
 * the snapshot tells: "[truncated]" for FAULT, "[no mapping]" for
 * NO_MAPPING.
 */
static void test_user_stack_upcs(void **state)
{
	static const char want[] = "__schedule;pipe_read;causal_capture;causal_blocked_in";
	struct fixture *f = *state;
	struct ownstack *u = calloc(1, sizeof(*u));
	struct taproot_pipeline_stats st;
	struct rawsample rs[4];
	uint64_t pcs[128];
	unsigned int n;
	const char *at;
	char *txt;

	assert_non_null(u);
	ownstack_init();
	assert_int_equal(causal_blocked_in(u, 1), 2);
	n = self_pcs(u, pcs, 128);

	/* Blocked: the same stack as from the copy (test_user_stack). */
	out_self_upcs(f, u, 1000, 3, pcs, n, SNAP_END(TAPROOT_KUNWIND_COMPLETE));
	in(f, 5000, (uint32_t)getpid(), (uint32_t)getpid(), 3);
	/* Waker: this process, of a sleeper of process 100. */
	out(f, 10000, 100, 101, 7, 0x1, false, K_PIPE_READ, 1);
	wake_self_upcs(f, u, 12000, 101, 7, pcs, n);
	in(f, 13000, 100, 101, 7);
	taproot_pipeline_flush(f->p, true);
	taproot_pipeline_stats(f->p, &st);
	assert_int_equal(st.causal.joined, 2);
	assert_int_equal(st.causal_upcs, 2);
	assert_int_equal(st.user_stacks, 2);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_COMPLETE], 2);
	assert_int_equal(st.unwind_frames, 0);	/* nothing unwound here */

	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_int_equal(parse_raw(txt, rs, 4), 2);
	at = strstr(rs[0].names, want) ? rs[0].names : rs[1].names;
	if (strncmp(at, want, strlen(want)))
		fail_msg("offcpu stack: %s", at);
	at = strstr(at, ";test_user_stack_upcs;");
	assert_non_null(at);
	assert_non_null(strstr(at, ";main;"));
	assert_null(strstr(txt, "[truncated]"));
	free(txt);

	txt = raw(f, TAPROOT_PROFILE_OFFWAKE);
	assert_int_equal(parse_raw(txt, rs, 4), 1);
	/* The waker's frames, whole, then the separator and the blocked stack. */
	assert_non_null(strstr(rs[0].names, ";main;"));
	if (!strstr(rs[0].names, ";test_user_stack_upcs;causal_blocked_in") ||
	    !strstr(rs[0].names, ";causal_capture;pipe_write;try_to_wake_up;--;"
				 "__schedule;pipe_read;"))
		fail_msg("offwake stack: %s", rs[0].names);
	free(txt);

	/* Cut at the frame cap, and a walk that stopped: their markers. */
	new_pipeline(f, 0, 0);
	out_self_upcs(f, u, 1000, 3, pcs, 2,
		      SNAP_END(TAPROOT_KUNWIND_MAX_FRAMES) | TAPROOT_SNAP_F_USTACK_TRUNC);
	in(f, 5000, (uint32_t)getpid(), (uint32_t)getpid(), 3);
	out_self_upcs(f, u, 6000, 4, pcs, 1,
		      SNAP_END(TAPROOT_KUNWIND_FAULT) | TAPROOT_SNAP_F_USTACK_FAULT);
	in(f, 9000, (uint32_t)getpid(), (uint32_t)getpid(), 4);
	out_self_upcs(f, u, 10000, 5, pcs, 2,
		      SNAP_END(TAPROOT_KUNWIND_NO_MAPPING) | TAPROOT_SNAP_F_USTACK_FAULT);
	in(f, 15000, (uint32_t)getpid(), (uint32_t)getpid(), 5);
	taproot_pipeline_flush(f->p, true);
	taproot_pipeline_stats(f->p, &st);
	assert_int_equal(st.causal_upcs, 3);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_MAX_DEPTH], 1);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_TRUNCATED], 1);
	assert_int_equal(st.unwind[TAPROOT_UNWIND_NO_MAPPING], 1);
	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_int_equal(parse_raw(txt, rs, 4), 3);
	assert_non_null(find_sample(rs, 3, "__schedule;pipe_read;causal_capture;[truncated];"));
	/* (pprof -raw's names end at a space: "[max depth]" reads "[max".) */
	at = names_with(rs, 3, ";[max");
	if (!at || strncmp(at, want, strlen(want)) || strstr(at, "test_user_stack_upcs"))
		fail_msg("offcpu stack cut at the frame cap: %s", at ? at : txt);
	at = names_with(rs, 3, ";[no");
	if (!at || strncmp(at, want, strlen(want)))
		fail_msg("offcpu stack of a walk without a mapping: %s", at ? at : txt);
	free(txt);

	new_pipeline(f, 0, 0);
	free(u);
}

/* ------------------------------------- uploads the events ask for */

/* The module's ioctls, faked: the pids whose address space a token was asked for. */
static struct {
	uint32_t pids[16];
	unsigned int nr;
} kfake;

static int kfake_token(void *ring, uint32_t pid, uint64_t *token)
{
	assert_ptr_equal(ring, &kfake);
	if (kfake.nr < 16)
		kfake.pids[kfake.nr] = pid;
	kfake.nr++;
	return -ESRCH;		/* gone: the upload ends there */
}

static int kfake_table_add(void *ring, const struct taproot_table_add *t, uint32_t *id)
{
	fail_msg("a table upload after ESRCH");
	return -EINVAL;
}

static int kfake_table_del(void *ring, uint32_t id)
{
	fail_msg("a table deleted, none uploaded");
	return -EINVAL;
}

static int kfake_maps_set(void *ring, uint32_t pid, uint64_t token,
			  const struct taproot_proc_map *maps, uint32_t nr)
{
	fail_msg("mappings set after ESRCH");
	return -EINVAL;
}

static uint64_t kfake_now(void)
{
	return 1000000000000ULL;	/* no time goes by: no rate limit comes in */
}

static const struct tp_kops kfake_ops = {
	.table_add = kfake_table_add,
	.table_del = kfake_table_del,
	.proc_token = kfake_token,
	.maps_set = kfake_maps_set,
	.now_ns = kfake_now,
};

/*
 * A SWITCH out of process @pid (@type TAPROOT_REC_SWITCH) or a WAKING by it
 * (TAPROOT_REC_WAKING; @pid 0: a hard interrupt's), with a snapshot of
 * flags @sflags: with UPCS one pc, else an empty copy.
 */
static void event_snap(struct fixture *f, uint16_t type, uint64_t t, uint32_t pid,
		       uint16_t sflags)
{
	struct taproot_rec_header *h = (void *)f->buf;
	enum kfn st[2] = { K_SCHEDULE, K_PIPE_READ };
	struct taproot_stack_snap *sn;
	size_t size;

	memset(f->buf, 0, sizeof(f->buf));
	if (type == TAPROOT_REC_SWITCH) {
		struct taproot_rec_switch *r = (void *)f->buf;

		h->flags = TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS;
		r->prev_state = 0x1;
		r->prev_pid = pid;
		r->prev_tid = pid + 1;
		r->prev_seq = t;
		r->next_pid = r->next_tid = 7;
		r->sched_one_in = 1;
		snprintf(r->prev_comm, sizeof(r->prev_comm), "blocker");
		size = sizeof(*r);
	} else {
		struct taproot_rec_waking *r = (void *)f->buf;

		h->flags = TAPROOT_WAKING_F_STACKS | (pid ? 0 : TAPROOT_WAKING_F_HARDIRQ);
		r->target_pid = 7;
		r->target_tid = 8;
		r->target_seq = t;
		r->waker_pid = pid;
		r->waker_tid = pid ? pid + 1 : 0;
		if (pid)
			snprintf(r->waker_comm, sizeof(r->waker_comm), "waker");
		size = sizeof(*r);
	}
	h->type = type;
	h->time_ns = t;
	sn = (void *)((char *)f->buf + size);
	size += put_snap(sn, st, 2);
	sn->flags = sflags;
	if (sflags & TAPROOT_SNAP_F_UPCS) {
		sn->user_regs.ip = 0x401000;
		memcpy((char *)f->buf + size, &sn->user_regs.ip, 8);
		sn->ustack_len = 8;
		size += 8;
	}
	h->size = (uint32_t)((size + 7) & ~(size_t)7);
	feed(f, 0);
}

/*
 * A causal event's snapshot whose walk fell back for want of uploads
 * (NO_PROC, STALE, NO_MAPPING) has the uploader ask for its task's
 * process, as a sample does: a SWITCH's prev, a WAKING's waker (not the
 * woken task); whether the snapshot is a copy or, with USTACK_PRIVATE,
 * the pcs found. Other ends (whole walks, NO_CFI, no walk) and snapshots
 * without a user part (an interrupt's wakeup) ask for nothing, nor does
 * anything once the ring is gone. The ioctls are fakes: a token answered
 * ESRCH ends each upload.
 */
static void test_event_uploads(void **state)
{
	struct fixture *f = *state;
	const uint16_t copy = TAPROOT_SNAP_F_USER_REGS, upcs = copy | TAPROOT_SNAP_F_UPCS;
	const uint32_t p = 4194401;	/* above PID_MAX_LIMIT: no such process */

	memset(&kfake, 0, sizeof(kfake));
	assert_int_equal(tp_pipeline_set_kring(f->p, &kfake, &kfake_ops), 0);
	event_snap(f, TAPROOT_REC_SWITCH, 1000, p, copy | SNAP_END(TAPROOT_KUNWIND_NO_PROC));
	assert_int_equal(kfake.nr, 1);
	assert_int_equal(kfake.pids[0], p);
	event_snap(f, TAPROOT_REC_SWITCH, 2000, p + 1, upcs | SNAP_END(TAPROOT_KUNWIND_COMPLETE));
	event_snap(f, TAPROOT_REC_SWITCH, 3000, p + 2,
		   upcs | SNAP_END(TAPROOT_KUNWIND_MAX_FRAMES) | TAPROOT_SNAP_F_USTACK_TRUNC);
	event_snap(f, TAPROOT_REC_SWITCH, 4000, p + 3, copy | SNAP_END(TAPROOT_KUNWIND_NO_CFI));
	event_snap(f, TAPROOT_REC_SWITCH, 5000, p + 4, copy | SNAP_END(TAPROOT_KUNWIND_NONE));
	assert_int_equal(kfake.nr, 1);
	event_snap(f, TAPROOT_REC_SWITCH, 6000, p + 5,
		   upcs | SNAP_END(TAPROOT_KUNWIND_STALE) | TAPROOT_SNAP_F_USTACK_FAULT);
	event_snap(f, TAPROOT_REC_WAKING, 7000, p + 6, copy | SNAP_END(TAPROOT_KUNWIND_NO_MAPPING));
	event_snap(f, TAPROOT_REC_WAKING, 8000, p + 7, upcs | SNAP_END(TAPROOT_KUNWIND_COMPLETE));
	event_snap(f, TAPROOT_REC_WAKING, 9000, 0, SNAP_END(TAPROOT_KUNWIND_NONE));
	assert_int_equal(kfake.nr, 3);
	assert_int_equal(kfake.pids[1], p + 5);
	assert_int_equal(kfake.pids[2], p + 6);

	/* No ring, no upload. */
	assert_int_equal(tp_pipeline_set_kring(f->p, NULL, NULL), 0);
	event_snap(f, TAPROOT_REC_SWITCH, 10000, p + 8, copy | SNAP_END(TAPROOT_KUNWIND_NO_PROC));
	assert_int_equal(kfake.nr, 3);
}

/*
 * An interval carries its process's labels (this process's exe); rules on
 * them drop it before its stack is resolved; rules on the state, known
 * only with the interval, drop it when it is written.
 */
static void test_labels_and_relabel(void **state)
{
	struct fixture *f = *state;
	struct ownstack *u = calloc(1, sizeof(*u));
	struct taproot_relabel *rules = NULL;
	struct taproot_pipeline_opts o;
	struct taproot_pipeline_stats st;
	struct rawsample rs[2];
	char exe[512], want[600], *txt;
	ssize_t n;

	assert_non_null(u);
	ownstack_init();
	assert_int_equal(causal_blocked_in(u, 1), 2);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	out_self(f, u, 1000, 3, 0x1);
	in(f, 5000, (uint32_t)getpid(), (uint32_t)getpid(), 3);
	taproot_pipeline_flush(f->p, true);
	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_int_equal(parse_raw(txt, rs, 2), 1);
	snprintf(want, sizeof(want), "exe:[%s]", exe);
	if (!strstr(rs[0].labels, want) || !strstr(rs[0].labels, "service_name:[test_causal]"))
		fail_msg("offcpu labels: %s", rs[0].labels);
	free(txt);

	/* A rule on the executable: dropped before its stack is unwound. */
	taproot_pipeline_opts_default(&o);
	o.ksyms = f->ks;
	o.offcpu = true;
	assert_int_equal(taproot_relabel_add(&rules, "drop exe .*/test_causal"), 0);
	o.relabel = rules;
	taproot_pipeline_free(f->p);
	assert_int_equal(taproot_pipeline_new(&o, &f->p), 0);
	out_self(f, u, 1000, 3, 0x1);
	in(f, 5000, (uint32_t)getpid(), (uint32_t)getpid(), 3);
	taproot_pipeline_flush(f->p, true);
	taproot_pipeline_stats(f->p, &st);
	assert_int_equal(st.causal.relabel_dropped, 1);
	assert_int_equal(st.causal.joined, 0);
	assert_int_equal(st.user_stacks, 0);
	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_int_equal(parse_raw(txt, rs, 2), 0);
	free(txt);
	taproot_pipeline_free(f->p);
	taproot_relabel_free(rules);

	/* A rule on the state: S dropped when written, D kept; both unwound. */
	rules = NULL;
	assert_int_equal(taproot_relabel_add(&rules, "keep state D"), 0);
	o.relabel = rules;
	assert_int_equal(taproot_pipeline_new(&o, &f->p), 0);
	out_self(f, u, 1000, 3, 0x1);
	in(f, 5000, (uint32_t)getpid(), (uint32_t)getpid(), 3);
	out_self(f, u, 6000, 4, 0x2);
	in(f, 9000, (uint32_t)getpid(), (uint32_t)getpid(), 4);
	taproot_pipeline_flush(f->p, true);
	taproot_pipeline_stats(f->p, &st);
	assert_int_equal(st.user_stacks, 2);
	assert_int_equal(st.causal.joined, 2);
	assert_int_equal(st.causal.relabel_dropped, 1);
	txt = raw(f, TAPROOT_PROFILE_OFFCPU);
	assert_int_equal(parse_raw(txt, rs, 2), 1);
	assert_int_equal(rs[0].v[0], 3000);
	assert_non_null(strstr(rs[0].labels, "state:[D]"));
	free(txt);
	new_pipeline(f, 0, 0);
	taproot_relabel_free(rules);
	free(u);
}

/* Without opts.offcpu, causal records are counted and ignored; no profiles. */
static void test_off(void **state)
{
	struct fixture *f = *state;
	struct taproot_pipeline_opts o;
	struct taproot_pipeline_stats st;

	taproot_pipeline_free(f->p);
	taproot_pipeline_opts_default(&o);
	assert_int_equal(taproot_pipeline_new(&o, &f->p), 0);
	out(f, 1000, 100, 101, 7, 0x1, false, K_PIPE_READ, 1);
	taproot_pipeline_stats(f->p, &st);
	assert_int_equal(st.other_records, 1);
	assert_false(taproot_pipeline_has(f->p, TAPROOT_PROFILE_OFFCPU));
	assert_true(taproot_pipeline_has(f->p, TAPROOT_PROFILE_CPU));
	assert_int_equal(taproot_pipeline_write_kind(f->p, TAPROOT_PROFILE_OFFWAKE, "/nonexistent"),
			 -ENOENT);
	new_pipeline(f, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_join_three_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_order_rounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_and_unpaired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicates_and_late_waking, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tid_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scaling_and_preemption, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_in_changed, setup, teardown),
		cmocka_unit_test(test_one_in_adapt),
		cmocka_unit_test_setup_teardown(test_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds_and_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tiny_sym_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protoc_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_stack_upcs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_uploads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_labels_and_relabel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_off, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
