// SPDX-License-Identifier: GPL-2.0
/*
 * seedgen: the seed corpora of the fuzz targets that are not plain files,
 * written with the library's own writers where it has them, as the kernel
 * module would lay them out otherwise:
 *
 *   DIR/nl/    netlink datagrams (tests/fuzz/fuzz_nl.c): a valid GET_INFO,
 *              GET_CONFIG (tp_config_fill()), GET_STATS (two messages),
 *              NOTIFY reply, and an NLMSG_ERROR with an extended-ACK text
 *   DIR/ring/  ring layouts (tests/fuzz/ring-input.h): samples with kernel
 *              and user stacks, LOST, a blocked interval (SWITCH out, WAKING,
 *              SWITCH in across CPUs), FORK/EXEC/EXIT, records wrapping
 *              around the end of the data area
 *   DIR/raw/   raw capture files (tests/fuzz/fuzz_raw.c) written by
 *              taproot_raw_writer_*(), gzipped and plain
 *   DIR/uwalk/ stack walks (tests/fuzz/fuzz_uwalk.c): the rbp chain, SP
 *              rules, a signal frame by rule and by trampoline, a PLT entry
 *   DIR/hotspot/ a HotSpot JVM's memory (tests/fuzz/fuzz_hotspot.c): its
 *              vmStructs tables as OpenJDK 17 lays them out, a code heap of
 *              an nmethod (java.util.HashMap.get, hash inlined at a pc) and an
 *              interpreter blob
 *   DIR/jvwalk/ a stack of a compiled and an interpreted Java frame
 *              (tests/fuzz/fuzz_jvwalk.c)
 *
 * usage: seedgen DIR   (the subdirectories must exist)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <zlib.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "kernel/kernel-private.h"
#include "taproot.h"
#include "ring-input.h"

static const char *out;

static void die(const char *what)
{
	fprintf(stderr, "seedgen: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put_file(const char *sub, const char *name, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", out, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) ||
	    fclose(f))
		die(path);
}

/* ------------------------------------------------------------ netlink */

static struct nl_msg *genl_new(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, 0, 1, 0x1c, 0, 0, cmd, TAPROOT_GENL_VERSION))
		die("nlmsg_alloc");
	return msg;
}

/* Selector byte @sel, then the messages @msgs, end to end (one datagram). */
static void put_nl(const char *name, uint8_t sel, struct nl_msg **msgs, int n)
{
	uint8_t buf[16384];
	size_t len = 1;

	buf[0] = sel;
	for (int i = 0; i < n; i++) {
		struct nlmsghdr *h = nlmsg_hdr(msgs[i]);

		if (len + NLMSG_ALIGN(h->nlmsg_len) > sizeof(buf))
			die("datagram too long");
		memcpy(buf + len, h, h->nlmsg_len);
		len += NLMSG_ALIGN(h->nlmsg_len);
		nlmsg_free(msgs[i]);
	}
	put_file("nl", name, buf, len, NULL, 0);
}

static void stats_cpu(struct nl_msg *msg, uint32_t cpu)
{
	struct nlattr *nest = nla_nest_start(msg, TAPROOT_A_STATS_CPU);

	struct nlattr *unwind;

	nla_put_u32(msg, TAPROOT_A_STAT_CPU, cpu);
	for (int a = TAPROOT_A_STAT_SAMPLES; a <= TAPROOT_A_STAT_MAX; a++)
		if (a != TAPROOT_A_STAT_PAD && a != TAPROOT_A_STAT_UNWIND)
			nla_put_u64(msg, a, 1000 * cpu + (uint64_t)a);
	unwind = nla_nest_start(msg, TAPROOT_A_STAT_UNWIND);
	for (int e = 0; e < TAPROOT_KUNWIND_NR; e++)
		nla_put_u64(msg, e + 1, 100 * cpu + (uint64_t)e);
	nla_nest_end(msg, unwind);
	nla_nest_end(msg, nest);
}

static void seeds_nl(void)
{
	struct taproot_config cfg = {
		.set = TAPROOT_CONFIG_ALL, .freq_hz = 99, .kstack_depth = 64,
		.ustack_bytes = 4096, .events = TAPROOT_EV_SAMPLE | TAPROOT_EV_SWITCH,
		.flags = 0, .ring_pages = 64, .watermark = 4096, .nr_tgids = 2,
		.tgids = { 1, 4242 }, .sched_one_in = 1,
		.unwind_frames = TAPROOT_UNWIND_FRAMES_DEFAULT,
		.unwind_mem_mib = TAPROOT_UNWIND_MEM_DEFAULT,
	};
	struct nlmsgerr e = { .error = -EINVAL };
	struct nl_msg *m[2];

	m[0] = genl_new(TAPROOT_CMD_GET_INFO);
	nla_put_u32(m[0], TAPROOT_A_ABI_VERSION, TAPROOT_ABI_VERSION);
	nla_put_u32(m[0], TAPROOT_A_NR_CPUS, 4);
	nla_put_string(m[0], TAPROOT_A_KERNEL_RELEASE, "6.1.0-56-amd64");
	nla_put_u64(m[0], TAPROOT_A_FEATURES, TAPROOT_FEAT_SAMPLING | TAPROOT_FEAT_KSTACK);
	nla_put_u8(m[0], TAPROOT_A_RUNNING, 1);
	nla_put_u32(m[0], TAPROOT_A_PAGE_SIZE, 4096);
	put_nl("info", 0, m, 1);

	m[0] = genl_new(TAPROOT_CMD_GET_CONFIG);
	if (tp_config_fill(m[0], &cfg))
		die("tp_config_fill");
	put_nl("config", 1, m, 1);

	m[0] = genl_new(TAPROOT_CMD_GET_STATS);
	nla_put_u8(m[0], TAPROOT_A_RUNNING, 0);
	stats_cpu(m[0], 0);
	stats_cpu(m[0], 1);
	m[1] = genl_new(TAPROOT_CMD_GET_STATS);
	stats_cpu(m[1], 3);
	put_nl("stats", 2, m, 2);

	/* Edges the parsers must refuse: 65 TGIDs, a CPU twice. */
	m[0] = genl_new(TAPROOT_CMD_GET_CONFIG);
	cfg.set &= ~TAPROOT_CONFIG_TGIDS;
	if (tp_config_fill(m[0], &cfg))
		die("tp_config_fill");
	{
		struct nlattr *nest = nla_nest_start(m[0], TAPROOT_A_CFG_TGIDS);

		for (uint32_t i = 1; i <= TAPROOT_MAX_TGIDS + 1; i++)
			nla_put_u32(m[0], TAPROOT_A_CFG_TGID, i);
		nla_nest_end(m[0], nest);
	}
	put_nl("config-tgids-over", 1, m, 1);

	m[0] = genl_new(TAPROOT_CMD_GET_STATS);
	nla_put_u8(m[0], TAPROOT_A_RUNNING, 1);
	stats_cpu(m[0], 2);
	m[1] = genl_new(TAPROOT_CMD_GET_STATS);
	stats_cpu(m[1], 2);
	put_nl("stats-cpu-twice", 2, m, 2);

	m[0] = genl_new(TAPROOT_CMD_NOTIFY);
	nla_put_u32(m[0], TAPROOT_A_NOTIFY, TAPROOT_NOTIFY_CONFIG);
	nla_put_u8(m[0], TAPROOT_A_RUNNING, 1);
	put_nl("notify", 3, m, 1);

	m[0] = nlmsg_alloc_simple(NLMSG_ERROR, NLM_F_ACK_TLVS | NLM_F_CAPPED);
	if (!m[0])
		die("nlmsg_alloc");
	e.msg.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	nlmsg_append(m[0], &e, sizeof(e), NLMSG_ALIGNTO);
	nla_put_string(m[0], NLMSGERR_ATTR_MSG, "taproot: frequency above TAPROOT_FREQ_MAX");
	put_nl("extack", 4, m, 1);
}

/* ------------------------------------------------------------ records */

#define KRET(i)		(FR_KBASE + (uint64_t)(i) * FR_KSYM_SIZE + 0x10)

static uint64_t exe_entry;	/* FR_EXE's entry point, as mapped */

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* A user stack of @len bytes: return addresses into FR_EXE, and zeros. */
static void ustack_fill(uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 8 <= len; i += 8)
		fr_put64(p + i, i % 16 ? exe_entry + 0x40 + i : 0);
}

static size_t rec_sample(uint8_t *buf, uint64_t time, uint32_t cpu, uint32_t tid,
			 unsigned int knr, uint32_t ulen)
{
	struct taproot_rec_sample *s = (void *)buf;
	uint64_t *k = (uint64_t *)(s + 1);
	size_t size = pad8(sizeof(*s) + knr * 8 + ulen);

	memset(buf, 0, size);
	s->hdr = (struct taproot_rec_header){ (uint32_t)size, TAPROOT_REC_SAMPLE,
					      TAPROOT_SAMPLE_F_USER_REGS, time };
	s->pid = FR_PID;
	s->tid = tid;
	s->cpu = cpu;
	s->kstack_nr = (uint16_t)knr;
	s->ustack_len = ulen;
	s->period_us = 10101;
	snprintf(s->comm, sizeof(s->comm), "worker-%u", tid);
	s->user_regs.ip = exe_entry + 4;
	s->user_regs.sp = 0x7ffc0000f000ULL;
	s->user_regs.bp = s->user_regs.sp + 32;
	for (unsigned int i = 0; i < knr; i++)
		k[i] = KRET(i % FR_NR_KSYMS);
	ustack_fill((uint8_t *)(k + knr), ulen);
	return size;
}

/* A STACK of FR_PID: @knr kernel pcs, @unr user pcs into FR_EXE, walk complete. */
static size_t rec_stack(uint8_t *buf, uint64_t time, uint64_t id, unsigned int knr,
			unsigned int unr)
{
	struct taproot_rec_stack *st = (void *)buf;
	uint64_t *k = (uint64_t *)(st + 1);
	size_t size = sizeof(*st) + (knr + unr) * 8;

	memset(buf, 0, size);
	st->hdr = (struct taproot_rec_header){ (uint32_t)size, TAPROOT_REC_STACK,
					       TAPROOT_SAMPLE_F_USER_REGS |
					       (knr ? TAPROOT_SAMPLE_F_IN_KERNEL : 0), time };
	st->id = id;
	st->epoch = 1;
	st->pid = FR_PID;
	st->kstack_nr = (uint16_t)knr;
	st->upc_nr = (uint8_t)unr;
	st->unwind = TAPROOT_KUNWIND_COMPLETE;
	for (unsigned int i = 0; i < knr; i++)
		k[i] = KRET(i % FR_NR_KSYMS);
	for (unsigned int i = 0; i < unr; i++)
		k[knr + i] = exe_entry + 4 + 0x40 * i;
	return size;
}

static size_t rec_ref(uint8_t *buf, uint64_t time, uint32_t cpu, uint64_t id)
{
	struct taproot_rec_sample_ref *r = (void *)buf;

	memset(r, 0, sizeof(*r));
	r->hdr = (struct taproot_rec_header){ sizeof(*r), TAPROOT_REC_SAMPLE_REF, 0, time };
	r->pid = r->tid = FR_PID;
	r->cpu = cpu;
	r->period_us = 10101;
	snprintf(r->comm, sizeof(r->comm), "worker-%u", FR_PID);
	r->stack_id = id;
	r->epoch = 1;
	return sizeof(*r);
}

/*
 * A sample whose walk in the module stopped at frame @unr - 1 (@flags:
 * TAPROOT_SAMPLE_F_UREGS_CALLER or _VERIFY), with its user pcs.
 */
static size_t rec_sample_upcs(uint8_t *buf, uint64_t time, uint32_t cpu, unsigned int unr,
			      uint32_t ulen, unsigned int flags, uint8_t end)
{
	struct taproot_rec_sample *s = (void *)buf;
	uint64_t *u;
	size_t size;

	rec_sample(buf, time, cpu, FR_PID, 0, 0);
	size = pad8(sizeof(*s) + unr * 8 + ulen);
	memset(s + 1, 0, size - sizeof(*s));
	s->hdr.size = (uint32_t)size;
	s->hdr.flags |= (uint16_t)(TAPROOT_SAMPLE_F_UPCS | flags);
	s->upc_nr = (uint8_t)unr;
	s->unwind = end;
	s->ustack_len = ulen;
	u = (uint64_t *)(s + 1);
	for (unsigned int i = 0; i < unr; i++)
		u[i] = exe_entry + 4 + 0x40 * i;
	ustack_fill((uint8_t *)(u + unr), ulen);
	return size;
}

/* @nr CPython frames of made-up code objects at @at; returns their bytes. */
static size_t pyframes_fill(uint8_t *at, unsigned int nr)
{
	struct taproot_pyframe *f = (void *)at;

	for (unsigned int i = 0; i < nr; i++)
		f[i] = (struct taproot_pyframe){
			.code = 0x7f1000002000ULL + 0x100 * i,
			.pos = 2 * i | (i == nr - 1 ? TAPROOT_PYFRAME_ENTRY : 0),
			.cookie = 0x10400 + i,
		};
	return nr * sizeof(*f);
}

/* SAMPLE @buf of @size bytes, given @nr Python frames after its stack bytes. */
static size_t rec_sample_add_python(uint8_t *buf, size_t size, unsigned int nr)
{
	struct taproot_rec_sample *s = (void *)buf;
	struct taproot_sample_python *t = (void *)(buf + size);

	*t = (struct taproot_sample_python){ .py_nr = (uint16_t)nr };
	size += sizeof(*t) + pyframes_fill((uint8_t *)(t + 1), nr);
	s->hdr.flags |= TAPROOT_SAMPLE_F_PYTHON;
	s->hdr.size = (uint32_t)size;
	return size;
}

/* STACK @buf of @size bytes, given @nr Python frames after its pcs. */
static size_t rec_stack_add_python(uint8_t *buf, size_t size, unsigned int nr)
{
	struct taproot_rec_stack *st = (void *)buf;

	size += pyframes_fill(buf + size, nr);
	st->py_nr = (uint16_t)nr;
	st->hdr.size = (uint32_t)size;
	return size;
}

static size_t rec_lost(uint8_t *buf, uint64_t time)
{
	struct taproot_rec_lost *l = (void *)buf;

	memset(l, 0, sizeof(*l));
	l->hdr = (struct taproot_rec_header){ sizeof(*l), TAPROOT_REC_LOST, 0, time };
	l->lost[0] = 3;
	return sizeof(*l);
}

static size_t snap(uint8_t *at, unsigned int knr, uint32_t ulen)
{
	struct taproot_stack_snap *sn = (void *)at;
	uint64_t *k = (uint64_t *)(sn + 1);

	memset(sn, 0, sizeof(*sn));
	sn->kstack_nr = (uint16_t)knr;
	sn->flags = TAPROOT_SNAP_F_USER_REGS;
	sn->ustack_len = ulen;
	sn->user_regs.ip = exe_entry + 8;
	sn->user_regs.sp = 0x7ffc0000e000ULL;
	for (unsigned int i = 0; i < knr; i++)
		k[i] = KRET((i + 1) % FR_NR_KSYMS);
	ustack_fill((uint8_t *)(k + knr), ulen);
	return sizeof(*sn) + knr * 8 + ulen;
}

/* Switch from @prev (an interval starts, with stacks) to @next (one ends). */
static size_t rec_switch(uint8_t *buf, uint64_t time, uint32_t cpu, uint32_t prev,
			 uint32_t next, uint64_t seq)
{
	struct taproot_rec_switch *s = (void *)buf;
	size_t size;

	memset(s, 0, sizeof(*s));
	size = sizeof(*s) + snap(buf + sizeof(*s), 3, 32);
	size = pad8(size);
	s->hdr = (struct taproot_rec_header){ (uint32_t)size, TAPROOT_REC_SWITCH,
		TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_NEXT | TAPROOT_SWITCH_F_STACKS, time };
	s->cpu = cpu;
	s->prev_state = 1;
	s->prev_pid = FR_PID;
	s->prev_tid = prev;
	s->next_pid = FR_PID;
	s->next_tid = next;
	s->sched_one_in = 1;
	s->prev_seq = seq;
	s->next_seq = seq - 1;
	snprintf(s->prev_comm, sizeof(s->prev_comm), "worker-%u", prev);
	return size;
}

static size_t rec_waking(uint8_t *buf, uint64_t time, uint32_t cpu, uint32_t target,
			 uint32_t waker, uint64_t seq)
{
	struct taproot_rec_waking *w = (void *)buf;
	size_t size;

	memset(w, 0, sizeof(*w));
	size = pad8(sizeof(*w) + snap(buf + sizeof(*w), 2, 16));
	w->hdr = (struct taproot_rec_header){ (uint32_t)size, TAPROOT_REC_WAKING,
					      TAPROOT_WAKING_F_STACKS, time };
	w->cpu = cpu;
	w->target_pid = FR_PID;
	w->target_tid = target;
	w->waker_pid = FR_PID;
	w->waker_tid = waker;
	w->capture_ns = 100;
	w->target_seq = seq;
	snprintf(w->waker_comm, sizeof(w->waker_comm), "worker-%u", waker);
	return size;
}

static size_t rec_fork(uint8_t *buf, uint64_t time, uint32_t child)
{
	struct taproot_rec_fork *f = (void *)buf;

	memset(f, 0, sizeof(*f));
	f->hdr = (struct taproot_rec_header){ sizeof(*f), TAPROOT_REC_FORK,
					      TAPROOT_FORK_F_THREAD, time };
	f->parent_pid = FR_PID;
	f->parent_tid = FR_PID;
	f->child_pid = FR_PID;
	f->child_tid = child;
	snprintf(f->comm, sizeof(f->comm), "fuzzed");
	return sizeof(*f);
}

static size_t rec_exec(uint8_t *buf, uint64_t time, uint32_t pid)
{
	struct taproot_rec_exec *e = (void *)buf;
	size_t n = strlen(FR_EXE) + 1, size = pad8(sizeof(*e) + n);

	memset(buf, 0, size);
	e->hdr = (struct taproot_rec_header){ (uint32_t)size, TAPROOT_REC_EXEC, 0, time };
	e->pid = e->tid = e->old_tid = pid;
	e->filename_len = (uint32_t)n;
	snprintf(e->comm, sizeof(e->comm), "true");
	memcpy(e + 1, FR_EXE, n);
	return size;
}

static size_t rec_exit(uint8_t *buf, uint64_t time, uint32_t pid, uint32_t tid)
{
	struct taproot_rec_exit *x = (void *)buf;

	memset(x, 0, sizeof(*x));
	x->hdr = (struct taproot_rec_header){ sizeof(*x), TAPROOT_REC_EXIT, 0, time };
	x->pid = pid;
	x->tid = tid;
	snprintf(x->comm, sizeof(x->comm), "true");
	return sizeof(*x);
}

/* ------------------------------------------------------------ rings */

struct ring_seed {
	uint8_t flags;
	uint64_t tail[FR_MAX_CPUS];
	uint8_t data[FR_MAX_CPUS][8192];
	size_t len[FR_MAX_CPUS];
};

static void put_ring(const char *name, const struct ring_seed *s)
{
	static uint8_t buf[1 + FR_MAX_CPUS * (FR_CPU_HDR + 8192)];
	unsigned int nr = FR_F_CPUS(s->flags);
	size_t share = 0, len;

	for (unsigned int i = 0; i < nr; i++)
		if (s->len[i] > share)
			share = s->len[i];
	buf[0] = s->flags;
	len = 1 + nr * FR_CPU_HDR;
	for (unsigned int i = 0; i < nr; i++) {
		fr_put64(buf + 1 + i * FR_CPU_HDR, s->tail[i]);
		fr_put32(buf + 1 + i * FR_CPU_HDR + 8, (uint32_t)s->len[i]);
		memset(buf + len, 0, share);
		memcpy(buf + len, s->data[i], s->len[i]);
		len += share;
	}
	put_file("ring", name, buf, len, NULL, 0);
}

#define ADD(s, cpu, call)	((s).len[cpu] += call)
#define AT(s, cpu)		((s).data[cpu] + (s).len[cpu])

static void seeds_ring(void)
{
	struct ring_seed s;

	memset(&s, 0, sizeof(s));
	s.flags = (0 << 0) | (1 << 2) | FR_F_ENCODE | FR_F_LABELS;	/* 1 CPU, 2 pages */
	ADD(s, 0, rec_sample(AT(s, 0), 1000, 0, FR_PID, 4, 256));
	ADD(s, 0, rec_lost(AT(s, 0), 1500));
	ADD(s, 0, rec_sample(AT(s, 0), 2000, 0, FR_PID + 1, 2, 0));
	ADD(s, 0, rec_sample(AT(s, 0), 3000, 0, FR_PID, 0, 128));
	put_ring("samples", &s);

	memset(&s, 0, sizeof(s));
	s.flags = (1 << 0) | FR_F_OFFCPU | FR_F_ENCODE | FR_F_TWICE;	/* 2 CPUs */
	ADD(s, 0, rec_switch(AT(s, 0), 1000, 0, FR_PID + 1, FR_PID + 2, 7));
	ADD(s, 0, rec_sample(AT(s, 0), 1500, 0, FR_PID + 2, 3, 64));
	ADD(s, 1, rec_waking(AT(s, 1), 2000, 1, FR_PID + 1, FR_PID + 3, 7));
	ADD(s, 1, rec_switch(AT(s, 1), 3000, 1, FR_PID + 3, FR_PID + 1, 8));
	put_ring("offcpu", &s);

	memset(&s, 0, sizeof(s));
	s.flags = (3 << 0) | FR_F_LABELS;				/* 4 CPUs */
	ADD(s, 0, rec_fork(AT(s, 0), 100, FR_PID + 5));
	ADD(s, 1, rec_sample(AT(s, 1), 200, 1, FR_PID + 5, 1, 64));
	ADD(s, 2, rec_exec(AT(s, 2), 300, FR_PID + 9));
	ADD(s, 3, rec_exit(AT(s, 3), 400, FR_PID, FR_PID + 5));
	ADD(s, 3, rec_sample(AT(s, 3), 500, 3, FR_PID, 2, 0));
	put_ring("proc-events", &s);

	/* Records across the end of a one-page data area: the second mapping. */
	memset(&s, 0, sizeof(s));
	s.flags = FR_F_ENCODE;
	s.tail[0] = 5 * (uint64_t)FR_PAGE - 64;
	ADD(s, 0, rec_sample(AT(s, 0), 10, 0, FR_PID, 3, 128));
	ADD(s, 0, rec_lost(AT(s, 0), 20));
	put_ring("wrap", &s);

	/* A record of a size not a multiple of 8 after a good one. */
	memset(&s, 0, sizeof(s));
	s.flags = (1 << 0);
	ADD(s, 0, rec_lost(AT(s, 0), 10));
	ADD(s, 0, rec_lost(AT(s, 0), 20));
	fr_put32(s.data[0] + sizeof(struct taproot_rec_lost), sizeof(struct taproot_rec_lost) - 4);
	ADD(s, 1, rec_fork(AT(s, 1), 15, FR_PID + 7));
	put_ring("corrupt", &s);

	/* Interned stacks and the module's walks: a reference per CPU, one missing. */
	memset(&s, 0, sizeof(s));
	s.flags = (1 << 0) | FR_F_ENCODE | FR_F_LABELS;			/* 2 CPUs */
	ADD(s, 0, rec_stack(AT(s, 0), 100, 0x77, 2, 3));
	ADD(s, 0, rec_ref(AT(s, 0), 110, 0, 0x77));
	ADD(s, 1, rec_ref(AT(s, 1), 120, 1, 0x77));
	ADD(s, 1, rec_sample_upcs(AT(s, 1), 130, 1, 2, 64, TAPROOT_SAMPLE_F_UREGS_CALLER,
				  TAPROOT_KUNWIND_NO_CFI));
	ADD(s, 0, rec_sample_upcs(AT(s, 0), 140, 0, 3, 64, TAPROOT_SAMPLE_F_VERIFY,
				  TAPROOT_KUNWIND_COMPLETE));
	ADD(s, 0, rec_ref(AT(s, 0), 150, 0, 0x77));
	put_ring("interned", &s);

	/* CPython frames: in an interned stack and after a fallback's copy. */
	memset(&s, 0, sizeof(s));
	s.flags = (1 << 0) | FR_F_ENCODE;				/* 2 CPUs */
	ADD(s, 0, rec_stack_add_python(AT(s, 0), rec_stack(AT(s, 0), 100, 0x78, 1, 4), 3));
	ADD(s, 0, rec_ref(AT(s, 0), 110, 0, 0x78));
	ADD(s, 1, rec_sample_add_python(AT(s, 1),
					rec_sample_upcs(AT(s, 1), 120, 1, 2, 40, 0,
							TAPROOT_KUNWIND_NO_CFI), 2));
	ADD(s, 1, rec_sample_add_python(AT(s, 1), rec_sample(AT(s, 1), 130, 1, FR_PID, 2, 13),
					4));
	put_ring("python", &s);
}

/* ------------------------------------------------------------ raw files */

static void seeds_raw(void)
{
	static const char ksyms[] = "ffffffff81000000 T _stext\nffffffff81000000 T kfn0\n"
				    "ffffffff81000100 T kfn1\nffffffff81000200 T _etext\n";
	static const char maps[] = "555555556000-55555555a000 r-xp 00002000 08:01 1234    "
				   FR_EXE "\n";
	struct taproot_raw_header h = {
		.abi_version = TAPROOT_ABI_VERSION, .kernel_release = "6.1.0-56-amd64",
		.freq_hz = 99, .ustack_bytes = 4096, .cpu = true, .offcpu = true,
		.sched_one_in = 1, .label_tid = true, .start_ns = 1700000000000000000ULL,
	};
	struct taproot_raw_end end = { .duration_ns = 1000000000, .lost = 3, .corrupt = 0 };
	static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct taproot_raw_writer *w;
	static uint8_t rec[8192], plain[65536];
	char path[4096], plain_path[4096];
	gzFile gz;
	int n;

	snprintf(path, sizeof(path), "%s/raw/capture.gz", out);
	if (taproot_raw_writer_new(path, &h, &w))
		die(taproot_errmsg(-1));
	taproot_raw_write_ksyms(w, ksyms, sizeof(ksyms) - 1);
	taproot_raw_write_proc(w, FR_PID, TAPROOT_PROC_STAT, 0, "4242 (fuzzed) S 1 4242",
			       22);
	taproot_raw_write_proc(w, FR_PID, TAPROOT_PROC_MAPS, 0, maps, sizeof(maps) - 1);
	taproot_raw_write_proc(w, FR_PID + 1, TAPROOT_PROC_DIR, -ENOENT, NULL, 0);
	taproot_raw_write_elf(w, 0x801, 1234, FR_EXE, build_id, sizeof(build_id));
	rec_sample(rec, 1000, 0, FR_PID, 3, 64);
	taproot_raw_write_record(w, 0, (void *)rec);
	rec_switch(rec, 1100, 1, FR_PID + 1, FR_PID + 2, 5);
	taproot_raw_write_record(w, 1, (void *)rec);
	taproot_raw_write_round(w);
	rec_exec(rec, 1200, FR_PID);
	taproot_raw_write_record(w, 0, (void *)rec);
	rec_lost(rec, 1300);
	taproot_raw_write_record(w, 0, (void *)rec);
	rec_stack(rec, 1400, 0x99, 1, 2);
	taproot_raw_write_record(w, 1, (void *)rec);
	rec_ref(rec, 1410, 1, 0x99);
	taproot_raw_write_record(w, 1, (void *)rec);
	rec_sample_upcs(rec, 1420, 0, 2, 0, 0, TAPROOT_KUNWIND_NO_PROC);
	taproot_raw_write_record(w, 0, (void *)rec);
	if (taproot_raw_writer_finish(w, &end))
		die(taproot_errmsg(-1));

	/* The same stream uncompressed: zlib reads it as it is. */
	gz = gzopen(path, "rb");
	if (!gz)
		die(path);
	n = gzread(gz, plain, sizeof(plain));
	gzclose(gz);
	if (n <= 0)
		die("gzread");
	snprintf(plain_path, sizeof(plain_path), "plain");
	put_file("raw", plain_path, plain, (size_t)n, NULL, 0);
}

/* ------------------------------------------------------- stack walks */

/*
 * Inputs of tests/fuzz/fuzz_uwalk.c (the layout its comment gives), one
 * per kind of step: the rbp chain, SP rules saving rbp, a signal frame by
 * rule and by the trampoline's code, a PLT entry.
 */
struct useed {
	uint8_t b[1024];
	size_t n;
};

static void ub(struct useed *u, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes && u->n < sizeof(u->b); i++)
		u->b[u->n++] = (uint8_t)(v >> (8 * i));
}

/* A stack word: the mapping's start + @off, the stack's base + @off, 0, raw. */
static void uw_pc(struct useed *u, unsigned int off)	{ ub(u, 0, 1); ub(u, off << 4, 2); }
static void uw_sp(struct useed *u, unsigned int off)	{ ub(u, 1, 1); ub(u, off, 2); }
static void uw_zero(struct useed *u)			{ ub(u, 3, 1); ub(u, 0, 2); }
static void uw_raw(struct useed *u, uint64_t v)		{ ub(u, 2, 1); ub(u, v, 8); }

/* The header, one mapping at the code's base (table @table, bias the base). */
static void uw_head(struct useed *u, unsigned int nr_tables)
{
	u->n = 0;
	ub(u, nr_tables, 1);
	ub(u, 1, 1);		/* one mapping */
	ub(u, 64, 1);		/* max_frames */
	ub(u, 0, 1);		/* sp offset */
}

static void uw_map(struct useed *u, unsigned int table)
{
	ub(u, 0, 1);		/* start page */
	ub(u, 0x1f, 1);		/* pages - 1 */
	ub(u, 1, 1);		/* bias: the code's base */
	ub(u, table, 1);
	ub(u, 0, 1);
}

/* One rule: offsets in multiples of 8 */
static void uw_rule(struct useed *u, unsigned int kind, unsigned int rbp, unsigned int thr,
		    int cfa8, int ra8, int rbp8)
{
	ub(u, kind, 1);
	ub(u, rbp, 1);
	ub(u, thr, 1);
	ub(u, 0, 1);
	ub(u, (uint8_t)(int8_t)cfa8, 1);
	ub(u, (uint8_t)(int8_t)ra8, 1);
	ub(u, (uint8_t)(int8_t)rbp8, 1);
}

/* ip at the mapping's start + @ip_off, bp at sp + @bp_off; @code: the trampoline. */
static void uw_regs(struct useed *u, unsigned int ip_off, unsigned int bp_off, bool code)
{
	ub(u, 0, 1);
	ub(u, ip_off << 4, 2);
	ub(u, 1, 1);
	ub(u, bp_off, 2);
	if (code) {
		ub(u, 0xfe, 1);	/* the sigreturn trampoline */
		ub(u, 7, 1);
		ub(u, 0x90909090909090ULL, 7);
	} else {
		ub(u, 0, 1);
	}
}

/* A ucontext at the stack's base: rsp base + 0x100, rip start + 0x40. */
static void uw_ucontext(struct useed *u)
{
	for (unsigned int i = 0; i < 5; i++)
		uw_zero(u);
	for (unsigned int g = 0; g < 17; g++) {
		if (g == 10)
			uw_sp(u, 0x110);	/* rbp */
		else if (g == 15)
			uw_sp(u, 0x100);	/* rsp */
		else if (g == 16)
			uw_pc(u, 0x40);		/* rip */
		else
			uw_raw(u, 0x1000 + g);
	}
	for (unsigned int i = 22; i < 0x100 / 8; i++)
		uw_zero(u);
	uw_zero(u);			/* at 0x100 */
	uw_zero(u);
	uw_sp(u, 0x130);		/* 0x110: {saved rbp, RA} */
	uw_pc(u, 0x80);
	for (unsigned int i = 0; i < 8; i++)
		uw_zero(u);
}

static void seeds_uwalk(void)
{
	struct useed u;

	/* The rbp chain (no table): frames at words 4, 12, 20. */
	uw_head(&u, 0);
	uw_map(&u, 0xff);
	uw_regs(&u, 0x10, 32, false);
	for (unsigned int i = 0; i < 24; i++) {
		if (i == 4 || i == 12)
			uw_sp(&u, 8 * (i + 8));
		else if (i == 5 || i == 13 || i == 21)
			uw_pc(&u, 0x100 * (i / 8 + 1));
		else
			uw_zero(&u);
	}
	put_file("uwalk", "fp-chain", u.b, u.n, NULL, 0);

	/* SP rules: [0, 0x80) CFA sp+16, rbp at CFA-16; then CFA sp+8. */
	uw_head(&u, 1);
	ub(&u, 0, 8);		/* base */
	ub(&u, 2, 1);		/* rows */
	ub(&u, 2, 1);		/* rules */
	ub(&u, 0, 1);		/* pcs 0, 0x80 */
	ub(&u, 0x80, 1);
	ub(&u, 0, 1);		/* row rules */
	ub(&u, 1, 1);
	uw_rule(&u, TAPROOT_RULE_SP, TAPROOT_RBP_CFA, 0, 2, -1, -2);
	uw_rule(&u, TAPROOT_RULE_SP, TAPROOT_RBP_SAME, 0, 1, -1, 0);
	uw_map(&u, 0);
	uw_regs(&u, 0x10, 0x40, false);
	uw_sp(&u, 0x40);	/* saved rbp */
	uw_pc(&u, 0x90);	/* RA into the second row */
	uw_pc(&u, 0x20);	/* its RA, into the first */
	uw_sp(&u, 0x50);
	uw_zero(&u);		/* RA 0: complete */
	put_file("uwalk", "sp-rules", u.b, u.n, NULL, 0);

	/* A signal frame by its rule ([0, 0x20)), then the rbp chain (no CFI). */
	uw_head(&u, 1);
	ub(&u, 0, 8);
	ub(&u, 2, 1);
	ub(&u, 2, 1);
	ub(&u, 0, 1);
	ub(&u, 0x20, 1);
	ub(&u, 0, 1);
	ub(&u, 1, 1);
	uw_rule(&u, TAPROOT_RULE_SIGNAL, TAPROOT_RBP_SAME, 0, 0, 0, 0);
	uw_rule(&u, TAPROOT_RULE_NONE, TAPROOT_RBP_SAME, 0, 0, 0, 0);
	uw_map(&u, 0);
	uw_regs(&u, 0x10, 0, false);
	uw_ucontext(&u);
	put_file("uwalk", "signal-rule", u.b, u.n, NULL, 0);

	/* The trampoline's code where no row is (a table of no rows). */
	uw_head(&u, 1);
	ub(&u, 0, 8);
	ub(&u, 0, 1);
	ub(&u, 0, 1);
	uw_map(&u, 0);
	uw_regs(&u, 0, 0, true);
	uw_ucontext(&u);
	put_file("uwalk", "trampoline", u.b, u.n, NULL, 0);

	/* A PLT entry past its push: CFA sp+16. */
	uw_head(&u, 1);
	ub(&u, 0, 8);
	ub(&u, 1, 1);
	ub(&u, 1, 1);
	ub(&u, 0, 1);
	ub(&u, 0, 1);
	uw_rule(&u, TAPROOT_RULE_PLT, TAPROOT_RBP_SAME, 11, 1, -1, 0);
	uw_map(&u, 0);
	uw_regs(&u, 0x1b, 0, false);	/* byte 11 of an entry */
	uw_zero(&u);
	uw_pc(&u, 0x30);
	uw_zero(&u);
	put_file("uwalk", "plt", u.b, u.n, NULL, 0);
}

static uint64_t read_entry(const char *path)
{
	GElf_Ehdr eh;
	uint64_t entry = 0x2000;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	elf_version(EV_CURRENT);
	if (fd < 0)
		die(path);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && gelf_getehdr(elf, &eh))
		entry = eh.e_entry;
	elf_end(elf);
	close(fd);
	return FR_EXE_BASE + entry;
}

/* ------------------------------------------------------------ hotspot */

#define JVM_BASE	0x7f0000000000ULL	/* fuzz_hotspot.c's IMAGE_BASE */
#define JVM_IMAGE	0x5000

static uint8_t jvm_img[JVM_IMAGE];
static size_t jvm_str_at = 0xa00;

static void jvm_put64(size_t off, uint64_t v)
{
	memcpy(jvm_img + off, &v, 8);
}

static void jvm_put32(size_t off, uint32_t v)
{
	memcpy(jvm_img + off, &v, 4);
}

/* @s copied into the image's string area: its address. */
static uint64_t jvm_cstr(const char *s)
{
	size_t n = strlen(s) + 1, at = jvm_str_at;

	memcpy(jvm_img + at, s, n);
	jvm_str_at += (n + 7) & ~(size_t)7;
	return JVM_BASE + at;
}

/* A Symbol (length at 4, body at 6) of @s at @off. */
static void jvm_symbol(size_t off, const char *s)
{
	uint16_t n = (uint16_t)strlen(s);

	memcpy(jvm_img + off + 4, &n, 2);
	memcpy(jvm_img + off + 6, s, n);
}

/*
 * A JVM's memory as tests/fuzz/fuzz_hotspot.c takes it: the exported
 * globals first, the tables, then the objects, at OpenJDK 17's offsets.
 */
static void seeds_hotspot(void)
{
	static const struct {
		const char *type, *field;
		uint64_t off;			/* the static one: its image offset */
		int is_static;
	} fields[] = {
		{ "CodeCache", "_heaps", 0x1000, 1 },
		{ "Abstract_VM_Version", "_vm_major_version", 0x1030, 1 },
		{ "GrowableArrayBase", "_len", 0, 0 },
		{ "GrowableArray<int>", "_data", 8, 0 },
		{ "CodeHeap", "_memory", 8, 0 },
		{ "CodeHeap", "_segmap", 120, 0 },
		{ "CodeHeap", "_log2_segment_size", 256, 0 },
		{ "VirtualSpace", "_low_boundary", 0, 0 },
		{ "VirtualSpace", "_high_boundary", 8, 0 },
		{ "CodeBlob", "_name", 96, 0 },
		{ "CompiledMethod", "_method", 112, 0 },
		{ "Method", "_constMethod", 8, 0 },
		{ "ConstMethod", "_constants", 8, 0 },
		{ "ConstMethod", "_name_index", 34, 0 },
		{ "ConstantPool", "_pool_holder", 24, 0 },
		{ "Klass", "_name", 24, 0 },
		{ "Symbol", "_length", 4, 0 },
		{ "Symbol", "_body", 6, 0 },
		{ "CodeBlob", "_code_begin", 32, 0 },
		{ "CompiledMethod", "_scopes_data_begin", 120, 0 },
		{ "nmethod", "_metadata_offset", 260, 0 },
		{ "nmethod", "_scopes_pcs_offset", 268, 0 },
		{ "nmethod", "_dependencies_offset", 272, 0 },
		{ "ConstMethod", "_flags", 28, 0 },
		{ "ConstMethod", "_code_size", 32, 0 },
		{ "ConstantPool", "_source_file_name_index", 54, 0 },
		{ "CodeBlob", "_frame_size", 28, 0 },
		{ "CodeBlob", "_frame_complete_offset", 20, 0 },
		{ "CompiledMethod", "_deopt_handler_begin", 128, 0 },
		{ "nmethod", "_orig_pc_offset", 300, 0 },
		{ "Thread", "_osthread", 40, 0 },	/* one taproot does not read */
	};
	static const uint8_t segmap[32] = { 0, 1, 2, 3, 0, 1,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const uint64_t globals[] = {
		JVM_BASE + 0x100, 48, 0, 8, 24, 32, 40,	/* vmStructs, its entry's layout */
		JVM_BASE + 0x800, 40, 0, 32,		/* vmTypes */
	};
	size_t e = 0x100, i;
	uint16_t index = 2;

	memset(jvm_img, 0, sizeof(jvm_img));
	for (i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
		jvm_put64(8 * i, globals[i]);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++, e += 48) {
		jvm_put64(e, jvm_cstr(fields[i].type));
		jvm_put64(e + 8, jvm_cstr(fields[i].field));
		memcpy(jvm_img + e + 24, &fields[i].is_static, 4);
		jvm_put64(e + (fields[i].is_static ? 40 : 32),
			  fields[i].is_static ? JVM_BASE + fields[i].off : fields[i].off);
	}
	/* vmTypes: HeapBlock 16, ConstantPool 72; then the end (zeroes). */
	jvm_put64(0x800, jvm_cstr("HeapBlock"));
	jvm_put64(0x800 + 32, 16);
	jvm_put64(0x828, jvm_cstr("ConstantPool"));
	jvm_put64(0x828 + 32, 72);
	jvm_put64(0x850, jvm_cstr("ConstMethod"));
	jvm_put64(0x850 + 32, 48);
	jvm_put32(0x1030, 17);
	/* CodeCache::_heaps -> a GrowableArray of one CodeHeap. */
	jvm_put64(0x1000, JVM_BASE + 0x1010);
	jvm_img[0x1010] = 1;
	jvm_put64(0x1018, JVM_BASE + 0x1040);
	jvm_put64(0x1040, JVM_BASE + 0x1100);
	/* The heap: code [0x4000, 0x5000), 128-byte segments, its map at 0x1300. */
	jvm_put64(0x1100 + 8, JVM_BASE + 0x4000);
	jvm_put64(0x1100 + 16, JVM_BASE + 0x5000);
	jvm_put64(0x1100 + 120, JVM_BASE + 0x1300);
	jvm_img[0x1100 + 256] = 7;
	memcpy(jvm_img + 0x1300, segmap, sizeof(segmap));
	/* Segments 0-3: an nmethod of Method 0x2000; 4-5: the interpreter. */
	jvm_put64(0x4010 + 96, jvm_cstr("nmethod"));
	jvm_put64(0x4010 + 112, JVM_BASE + 0x2000);
	jvm_put64(0x4210 + 96, jvm_cstr("Interpreter"));
	jvm_put64(0x2000 + 8, JVM_BASE + 0x2100);
	jvm_put64(0x2100 + 8, JVM_BASE + 0x2200);
	memcpy(jvm_img + 0x2100 + 34, &index, 2);
	jvm_put64(0x2200 + 24, JVM_BASE + 0x2400);
	jvm_put64(0x2200 + 72 + 8 * index, JVM_BASE + 0x2600);
	jvm_put64(0x2400 + 24, JVM_BASE + 0x2500);
	jvm_symbol(0x2500, "java/util/HashMap");
	jvm_symbol(0x2600, "get");
	/*
	 * Its debug information, after its 0x160-byte header: code from
	 * +0x160; PcDescs at +0x180 (a sentinel, then pc 0x20 of scope 10);
	 * metadata at +0x1a0 (get, hash); scopes data at 0x3800: scope 2
	 * get@4, scope 10 hash@7 inlined in it.
	 */
	jvm_put64(0x4010 + 32, JVM_BASE + 0x4010 + 0x160);
	/* A frame of 6 words, complete 0x10 into the code, deoptimized at 0x40. */
	jvm_put32(0x4010 + 28, 6);
	jvm_put32(0x4010 + 20, 0x10);
	jvm_put64(0x4010 + 128, JVM_BASE + 0x4010 + 0x1a0);
	jvm_put32(0x4010 + 300, 16);
	jvm_put64(0x4010 + 120, JVM_BASE + 0x3800);
	jvm_put32(0x4010 + 260, 0x1a0);
	jvm_put32(0x4010 + 268, 0x180);
	jvm_put32(0x4010 + 272, 0x1a0);
	jvm_put32(0x4010 + 0x180, (uint32_t)-1);
	jvm_put32(0x4010 + 0x190, 0x20);
	jvm_put32(0x4010 + 0x194, 10);
	jvm_put64(0x4010 + 0x1a0, JVM_BASE + 0x2000);
	jvm_put64(0x4010 + 0x1a8, JVM_BASE + 0x2800);
	memcpy(jvm_img + 0x3800 + 2, (const uint8_t[]){ 0, 1, 5 }, 3);
	memcpy(jvm_img + 0x3800 + 10, (const uint8_t[]){ 2, 2, 8 }, 3);
	jvm_put64(0x2800 + 8, JVM_BASE + 0x2900);
	jvm_put64(0x2900 + 8, JVM_BASE + 0x2200);
	index = 3;
	memcpy(jvm_img + 0x2900 + 34, &index, 2);
	jvm_put64(0x2200 + 72 + 8 * index, JVM_BASE + 0x2700);
	jvm_symbol(0x2700, "hash");
	/*
	 * The pool's source file, entry 4: HashMap.java. hash's line number
	 * table, after its 48-byte ConstMethod and 6 bytes of code: bci 0 at
	 * line 336 (0xff: signed deltas 0 and 336, UNSIGNED5 of 672: 224 7),
	 * bci 3 at line 337 (bci 7's line), then the end.
	 */
	index = 4;
	memcpy(jvm_img + 0x2200 + 54, &index, 2);
	jvm_put64(0x2200 + 72 + 8 * index, JVM_BASE + 0x2780);
	jvm_symbol(0x2780, "HashMap.java");
	jvm_img[0x2900 + 28] = 1;
	jvm_img[0x2900 + 32] = 6;
	memcpy(jvm_img + 0x2900 + 48 + 6, (const uint8_t[]){ 0xff, 0, 224, 7, 3 << 3 | 1, 0 },
	       6);
	put_file("hotspot", "jvm17", jvm_img, sizeof(jvm_img), NULL, 0);
}

/* ------------------------------------------------------------ jvwalk */

#define JV_IMAGE	0x7f0000000000ULL	/* fuzz_jvwalk.c's IMAGE_BASE */
#define JV_STACK	0x7ffd00000000ULL	/* ... and STACK_BASE */

static void put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * A walk tests/fuzz/fuzz_jvwalk.c takes whole: a compiled frame of 32
 * bytes at the leaf, then an interpreted one (its Method* and bytecode
 * pointer in place) whose return address is 0. One code heap of 64-byte
 * segments at image + 0x1000: an "nmethod" blob of 8 segments, then an
 * "Interpreter" one.
 */
static void seeds_jvwalk(void)
{
	static uint8_t in[64 + 0x2000 + 0xa0];
	static const uint16_t fields[11] = { 16, 0, 8, 16, 20, 24, 32, 40, 8, 48, 16 };
	uint8_t *p = in, *img, *stk;

	*p++ = 0;			/* mode */
	*p++ = 16;			/* max frames */
	*p++ = 1;			/* heaps */
	put_le(p, 0x1000, 2);		/* low, length, segmap, log2 */
	put_le(p + 2, 0x1000, 2);
	put_le(p + 4, 0x100, 2);
	p[6] = 6;
	p += 4 * 8;
	for (int i = 0; i < 11; i++, p += 2)
		put_le(p, fields[i], 2);
	p++;				/* reserved */
	put_le(p, 0x1100, 2);		/* ip */
	put_le(p + 2, 0, 2);		/* sp */
	p[4] = 0;			/* bp: a stack offset */
	put_le(p + 5, 0x40, 2);
	p += 7 + 8;			/* r13 0 */
	put_le(p, 0x2000, 2);
	img = p + 2;
	stk = img + 0x2000;

	memcpy(img + 0x80, "nmethod", 8);
	memcpy(img + 0x90, "Interpreter", 12);
	memset(img + 0x100, 0xff, 64);
	for (int i = 0; i < 8; i++)
		img[0x100 + i] = img[0x108 + i] = (uint8_t)i;
	put_le(img + 0x1010, JV_IMAGE + 0x80, 8);	/* the nmethod */
	put_le(img + 0x1018, JV_IMAGE + 0x1040, 8);
	put_le(img + 0x1020, 4, 4);
	put_le(img + 0x1024, 8, 4);
	put_le(img + 0x1028, 7, 4);
	put_le(img + 0x1030, JV_IMAGE + 0x11f0, 8);
	put_le(img + 0x1038, 8, 4);
	put_le(img + 0x1210, JV_IMAGE + 0x90, 8);	/* the interpreter */
	put_le(img + 0x1218, JV_IMAGE + 0x1240, 8);
	put_le(img + 0x1808, JV_IMAGE + 0x1900, 8);	/* Method, ConstMethod */
	put_le(img + 0x1910, 100, 2);

	put_le(stk + 0x10, JV_STACK + 0x80, 8);		/* the compiled frame */
	put_le(stk + 0x18, JV_IMAGE + 0x1250, 8);
	put_le(stk + 0x40, JV_IMAGE + 0x1900 + 48 + 5, 8);	/* the interpreted one */
	put_le(stk + 0x68, JV_IMAGE + 0x1800, 8);
	put_le(stk + 0x78, JV_STACK + 0x90, 8);
	put_file("jvwalk", "compiled-interpreted", in, sizeof(in), NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seedgen DIR\n");
		return 2;
	}
	out = argv[1];
	exe_entry = read_entry(FR_EXE);
	seeds_nl();
	seeds_ring();
	seeds_raw();
	seeds_uwalk();
	seeds_hotspot();
	seeds_jvwalk();
	return 0;
}
