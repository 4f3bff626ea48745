// SPDX-License-Identifier: GPL-2.0
/*
 * Uploads to the module's unwinder, without a module:
 *  - taproot_unwind_table_export() on libc: the rows are the compiled
 *    table's, every rule in the ABI's form (kinds as compiled, unused
 *    fields 0, slow rules bare), compiled once and served from the cache
 *    after; -EAGAIN when only cached tables are asked; -ENODATA without CFI;
 *  - the uploader's map list of this very process (tp_ktables_build()):
 *    sorted, disjoint, libc with its table and bias, the vDSO and
 *    anonymous code on the rbp chain, each build ID uploaded once; of a
 *    stripped Go program (no GNU build ID, no CFI), its text with the
 *    table made from Go's own, named by 20 bytes, uploaded once;
 *  - its decisions through fake ioctls and a fake clock: which fallbacks
 *    upload, the per-process rate limit, ESTALE retried once, EEXIST
 *    reused, ENOSPC (tables left out, unused ones deleted), the work
 *    budget deferring, exits forgetting, a new ring forgetting;
 *  - what waits: a trigger the interval or the budget put off is served
 *    by a tick with no other trigger, as is a process twice stale or
 *    whose tables waited for the budget; a trigger older than the
 *    mappings set only reads the token, and sets them again only when
 *    it changed; the skipped process is never uploaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>

#include "pipeline/ktables.h"
#include "pipeline/unwindmap.h"
#include "unwind/unwind-private.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* ------------------------------------------------------------ export */

static int self_map(uint64_t pc, struct taproot_unwind_map *um, void *arg)
{
	return taproot_proc_unwind_map(arg, pc, um) == 0 ? 1 : 0;
}

struct fixture {
	struct taproot_procs *procs;
	struct taproot_proc *self;
	struct taproot_unwinder *u;
};

static void fixture_new(struct fixture *f)
{
	static const struct taproot_unwind_ops ops = { .map = self_map };

	assert_int_equal(taproot_procs_new(NULL, &f->procs), 0);
	assert_int_equal(taproot_proc_get(f->procs, getpid(), 0, &f->self), 0);
	assert_null(taproot_proc_gone(f->self));
	assert_int_equal(taproot_unwinder_new(&ops, 0, &f->u), 0);
}

static void fixture_free(struct fixture *f)
{
	taproot_unwinder_free(f->u);
	taproot_procs_free(f->procs);
}

/* The unwind map of this process's libc (its first executable mapping). */
static void libc_map(struct fixture *f, struct taproot_unwind_map *um)
{
	for (size_t i = 0; i < taproot_proc_map_count(f->self); i++) {
		const struct taproot_map *m = taproot_proc_map(f->self, i);

		if (strstr(m->path, "/libc.so.6")) {
			assert_int_equal(taproot_proc_unwind_map(f->self, m->start, um), 0);
			return;
		}
	}
	fail_msg("no libc mapping in this process");
}

static void check_rule(const struct tp_cfi_rule *c, const struct taproot_unwind_rule *x)
{
	assert_int_equal(x->reserved, 0);
	switch (c->kind) {
	case TP_CFI_SP:
	case TP_CFI_FP:
	case TP_CFI_PLT:
		assert_int_equal(x->kind, c->kind);
		assert_int_equal(x->cfa_off, c->cfa_off);
		assert_int_equal(x->ra_off, c->ra_off);
		assert_int_equal(x->rbp, c->rbp);
		assert_int_equal(x->rbp_off, c->rbp == TP_RBP_CFA ? c->rbp_off : 0);
		assert_int_equal(x->plt_thr, c->kind == TP_CFI_PLT ? c->plt_thr : 0);
		break;
	default:
		/* kinds that use no field: NONE, SIGNAL, END, SLOW (src dropped) */
		assert_int_equal(x->kind, c->kind);
		assert_int_equal(x->rbp, 0);
		assert_int_equal(x->plt_thr, 0);
		assert_int_equal(x->cfa_off, 0);
		assert_int_equal(x->ra_off, 0);
		assert_int_equal(x->rbp_off, 0);
	}
}

static void test_export_libc(void **state)
{
	struct taproot_table_add t = { .table_id = 77 };
	struct taproot_unwind_stats st;
	struct tp_cfi_table *ref;
	struct taproot_unwind_map um;
	const struct taproot_unwind_rule *rules;
	const uint32_t *pcs;
	const uint16_t *rr;
	struct fixture f;
	unsigned int slow = 0;

	fixture_new(&f);
	libc_map(&f, &um);
	assert_int_equal(taproot_unwind_table_export(f.u, &um, TAPROOT_EXPORT_CACHED, &t), -EAGAIN);
	assert_int_equal(taproot_unwind_table_export(f.u, &um, 0, &t), 0);
	assert_int_equal(tp_cfi_compile(um.elf, &ref), 0);

	assert_int_equal(t.table_id, 77);	/* left alone */
	assert_int_equal(t.base, ref->base);
	assert_int_equal(t.nr_rows, ref->nr);
	assert_int_equal(t.nr_rules, ref->nr_rules);
	assert_true(t.nr_rows >= 1000 && t.nr_rows <= TAPROOT_TABLE_ROWS_MAX);
	assert_true(t.nr_rules >= 2 && t.nr_rules <= TAPROOT_TABLE_RULES_MAX);
	pcs = (const uint32_t *)(uintptr_t)t.pcs;
	rr = (const uint16_t *)(uintptr_t)t.row_rules;
	rules = (const struct taproot_unwind_rule *)(uintptr_t)t.rules;
	assert_memory_equal(pcs, ref->pcs, ref->nr * sizeof(*pcs));
	assert_memory_equal(rr, ref->row_rule, ref->nr * sizeof(*rr));
	for (uint32_t i = 1; i < t.nr_rows; i++)
		assert_true(pcs[i] > pcs[i - 1]);
	for (uint32_t i = 0; i < t.nr_rows; i++)
		assert_true(rr[i] < t.nr_rules);
	assert_int_equal(rules[0].kind, TAPROOT_RULE_NONE);
	for (uint32_t i = 0; i < t.nr_rules; i++) {
		check_rule(&ref->rules[i], &rules[i]);
		slow += rules[i].kind == TAPROOT_RULE_SLOW;
	}
	print_message("  libc: %u rows, %u rules (%u slow)\n", t.nr_rows, t.nr_rules, slow);

	/* Compiled once: the second export, even cached-only, is the cache's. */
	memset(&t, 0, sizeof(t));
	assert_int_equal(taproot_unwind_table_export(f.u, &um, TAPROOT_EXPORT_CACHED, &t), 0);
	assert_int_equal(t.nr_rows, ref->nr);
	taproot_unwinder_stats(f.u, &st);
	assert_int_equal(st.compiles, 1);

	tp_cfi_table_free(ref);
	fixture_free(&f);
}

static void test_export_refuses(void **state)
{
	static const uint8_t key[] = { 1, 2, 3, 4 };
	struct taproot_unwind_map um = { .key = key, .key_len = sizeof(key) };
	struct taproot_table_add t = { 0 };
	struct fixture f;

	fixture_new(&f);
	/* No ELF to compile: an empty table, cached as such. */
	assert_int_equal(taproot_unwind_table_export(f.u, &um, 0, &t), -ENODATA);
	assert_int_equal(taproot_unwind_table_export(f.u, &um, TAPROOT_EXPORT_CACHED, &t),
			 -ENODATA);
	um.key_len = 0;
	assert_int_equal(taproot_unwind_table_export(f.u, &um, 0, &t), -EINVAL);
	fixture_free(&f);
}

/* -------------------------------------------------------- fake ioctls */

#define FAKE_MAPS_MAX	TAPROOT_MAPS_MAX

static struct fake {
	uint64_t now;			/* the clock, ns */
	uint64_t tick;			/* added by each read of it */
	unsigned int table_adds, table_dels, tokens, sets, forgets;
	uint32_t next_id;
	int add_err;			/* table_add answers this (0: a new id) */
	int stale_left;			/* maps_set answers ESTALE this often */
	int set_err;
	uint64_t gen;			/* the address space's: the token says it */
	uint64_t token;			/* the last one taken */
	uint32_t pid;
	struct taproot_proc_map maps[FAKE_MAPS_MAX];
	uint32_t nr;
	uint32_t ids[64];		/* table ids live */
	unsigned int nr_ids;
	struct taproot_table_add big_add;	/* the one with the most rows */
} fake;

static int fake_table_add(void *ring, const struct taproot_table_add *t, uint32_t *id)
{
	assert_ptr_equal(ring, &fake);
	fake.table_adds++;
	if (t->nr_rows > fake.big_add.nr_rows)
		fake.big_add = *t;
	assert_true(t->build_id_len >= 1 && t->build_id_len <= TAPROOT_BUILD_ID_MAX);
	assert_true(t->nr_rows >= 1 && t->nr_rules >= 1);
	assert_int_equal(t->reserved, 0);
	if (fake.add_err < 0)
		return fake.add_err;
	*id = ++fake.next_id;
	if (fake.nr_ids < 64)
		fake.ids[fake.nr_ids++] = *id;
	return fake.add_err;		/* 1: it existed */
}

static int fake_table_del(void *ring, uint32_t id)
{
	fake.table_dels++;
	return 0;
}

static int fake_proc_token(void *ring, uint32_t pid, uint64_t *token)
{
	fake.tokens++;
	*token = fake.token = fake.gen;
	return 0;
}

static int fake_maps_set(void *ring, uint32_t pid, uint64_t token,
			 const struct taproot_proc_map *maps, uint32_t nr)
{
	if (!nr) {
		fake.forgets++;
		return 0;
	}
	fake.sets++;
	if (fake.stale_left > 0) {
		fake.stale_left--;
		return -ESTALE;
	}
	if (fake.set_err)
		return fake.set_err;
	assert_int_equal(token, fake.token);	/* the last one taken */
	assert_true(nr <= FAKE_MAPS_MAX);
	fake.pid = pid;
	fake.nr = nr;
	memcpy(fake.maps, maps, nr * sizeof(*maps));
	return 0;
}

static uint64_t fake_now(void)
{
	fake.now += fake.tick;
	return fake.now;
}

static const struct tp_kops fake_ops = {
	.table_add = fake_table_add,
	.table_del = fake_table_del,
	.proc_token = fake_proc_token,
	.maps_set = fake_maps_set,
	.now_ns = fake_now,
};

static void fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.now = 1000000000000ULL;
}

#define MS 1000000ULL

/* ------------------------------------------------------ the map list */

static void test_build_self(void **state)
{
	static struct taproot_proc_map maps[TAPROOT_MAPS_MAX];
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct taproot_kupload_stats st;
	struct tp_ktables *k;
	struct fixture f;
	uint32_t left;
	bool libc = false, vdso = false, anon = false;
	int n;

	assert_true(jit != MAP_FAILED);
	fake_reset();
	fixture_new(&f);
	assert_int_equal(tp_ktables_new(f.procs, f.u, &k), 0);
	tp_ktables_set_ring(k, &fake, &fake_ops);

	n = tp_ktables_build(k, f.self, maps, TAPROOT_MAPS_MAX, &left);
	if (n < 3)
		fail_msg("%d mappings: %s", n, taproot_errmsg(n));
	assert_int_equal(left, 0);
	for (int i = 0; i < n; i++) {
		const struct taproot_map *m;

		assert_true(maps[i].start < maps[i].end);
		if (i)
			assert_true(maps[i].start >= maps[i - 1].end);
		assert_int_equal(taproot_proc_find_map(f.self, maps[i].start, &m), 0);
		if (maps[i].flags & TAPROOT_MAP_F_FP) {
			assert_int_equal(maps[i].table_id, 0);
			assert_int_equal(maps[i].bias, 0);
			anon |= maps[i].start == (uint64_t)(uintptr_t)jit;
			continue;
		}
		assert_int_equal(maps[i].flags, 0);
		assert_true(maps[i].table_id > 0 && maps[i].table_id <= fake.next_id);
		assert_int_equal(maps[i].bias, m->bias);
		libc |= strstr(m->path, "/libc.so.6") != NULL;
		/* The vDSO by its table, not the rbp chain. */
		vdso |= (m->flags & TAPROOT_MAP_VDSO) != 0;
	}
	assert_true(libc);
	assert_true(vdso);
	assert_true(anon);
	assert_true(fake.table_adds >= 3);	/* libc, ld.so, the vDSO at least */

	/* The same build IDs again: nothing uploaded twice. */
	unsigned int adds = fake.table_adds;

	assert_int_equal(tp_ktables_build(k, f.self, maps, TAPROOT_MAPS_MAX, &left), n);
	assert_int_equal(fake.table_adds, adds);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.tables_uploaded, adds);
	assert_int_equal(st.tables, adds);
	assert_true(st.table_bytes > 1000);

	tp_ktables_free(k);
	fixture_free(&f);
	munmap(jit, 4096);
}

/*
 * A stripped Go program (build/fixtures/go/, made by the Makefile): its
 * text gets a table (Go's linker writes no GNU build ID; the table's rows
 * come from .gopclntab), named to the module by 20 bytes, and a second
 * build uploads nothing again.
 */
static void test_build_go(void **state)
{
	static struct taproot_proc_map maps[TAPROOT_MAPS_MAX];
	const char *bin = "build/fixtures/go/gosplit-exe-stripped";
	struct taproot_proc *proc;
	struct tp_ktables *k;
	struct fixture f;
	uint32_t left;
	bool text = false;
	pid_t pid;
	int n = 0;

	fake_reset();
	fixture_new(&f);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl(bin, bin, "30", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(tp_ktables_new(f.procs, f.u, &k), 0);
	tp_ktables_set_ring(k, &fake, &fake_ops);
	/*
	 * Until the child's text is mapped, for up to 60 s (a loaded host can
	 * take seconds to get there). Not until its exe link names the
	 * program: exec sets that before it maps the program's segments, and
	 * a build in between found no text to make a table of (2 of 4 ASan
	 * runs failed so).
	 */
	for (int tries = 0;; tries++) {
		char path[64], line[PATH_MAX + 128];
		bool mapped = false;
		FILE *maps_file;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		maps_file = fopen(path, "re");
		while (maps_file && !mapped && fgets(line, sizeof(line), maps_file))
			mapped = strstr(line, " r-xp ") && strstr(line, "gosplit-exe-stripped");
		if (maps_file)
			fclose(maps_file);
		if (mapped)
			break;
		if (tries == 6000)
			fail_msg("%s did not start within 60 s", bin);
		usleep(10000);
	}
	assert_int_equal(taproot_proc_get(f.procs, (uint32_t)pid, 0, &proc), 0);
	n = tp_ktables_build(k, proc, maps, TAPROOT_MAPS_MAX, &left);
	for (int i = 0; i < n; i++) {
		const struct taproot_map *m;

		if (taproot_proc_find_map(proc, maps[i].start, &m) == 0 &&
		    strstr(m->path, "gosplit-exe-stripped") && !(maps[i].flags & TAPROOT_MAP_F_FP)) {
			assert_true(maps[i].table_id > 0);
			text = true;
		}
	}
	assert_true(text);
	/* Its table and the vDSO's: a static Go program maps no library. */
	assert_int_equal(fake.table_adds, 2);
	assert_int_equal(fake.big_add.build_id_len, TAPROOT_BUILD_ID_MAX);
	assert_true(fake.big_add.nr_rows > 1000);
	assert_int_equal(tp_ktables_build(k, proc, maps, TAPROOT_MAPS_MAX, &left), n);
	assert_int_equal(fake.table_adds, 2);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	tp_ktables_free(k);
	fixture_free(&f);
}

/* ------------------------------------------------------- decisions */

static void test_decisions(void **state)
{
	struct taproot_kupload_stats st;
	struct tp_ktables *k;
	struct fixture f;
	uint32_t pid = (uint32_t)getpid();

	fake_reset();
	fixture_new(&f);
	assert_int_equal(tp_ktables_new(f.procs, f.u, &k), 0);

	/* No ring: nothing, whatever comes. */
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	tp_ktables_sample(NULL, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	tp_ktables_exit(NULL, pid);
	tp_ktables_set_ring(k, &fake, &fake_ops);

	/* Walks that ended otherwise upload nothing. */
	for (unsigned int w = 0; w < TAPROOT_KUNWIND_NR; w++)
		if (w != TAPROOT_KUNWIND_NO_PROC && w != TAPROOT_KUNWIND_STALE &&
		    w != TAPROOT_KUNWIND_NO_MAPPING)
			tp_ktables_sample(k, pid, w, fake.now);
	tp_ktables_sample(k, 0, TAPROOT_KUNWIND_NO_PROC, fake.now);
	assert_int_equal(fake.tokens, 0);

	/* The first fallback uploads; the next ones wait out the interval. */
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	assert_int_equal(fake.tokens, 1);
	assert_int_equal(fake.sets, 1);
	assert_int_equal(fake.pid, pid);
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_STALE, fake.now);
	fake.now += 100 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_STALE, fake.now);
	assert_int_equal(fake.sets, 1);

	/* Stale: a new token and maps read again, once at once. */
	fake.now += 300 * MS;
	fake.stale_left = 1;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_STALE, fake.now);
	assert_int_equal(fake.tokens, 3);
	assert_int_equal(fake.sets, 3);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.stale_retries, 1);
	assert_int_equal(st.maps_uploaded, 2);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.errors, 0);

	/* Twice stale: given up until the next trigger, not an error. */
	fake.now += 300 * MS;
	fake.stale_left = 2;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_STALE, fake.now);
	tp_ktables_stats(k, &st);
	assert_int_equal(fake.sets, 5);
	assert_int_equal(st.stale_retries, 3);
	assert_int_equal(st.maps_uploaded, 2);
	assert_int_equal(st.errors, 0);
	fake.now += 300 * MS;
	tp_ktables_tick(k);			/* test_waiting has more */
	assert_int_equal(fake.sets, 6);

	/* A pc in no mapping, everything uploaded: only every 2 s. */
	fake.now += 300 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_MAPPING, fake.now);
	fake.now += 300 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_MAPPING, fake.now);
	assert_int_equal(fake.sets, 6);
	fake.now += 2000 * MS;
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 7);

	/* The exit forgets it in the module; an unknown pid's exit does nothing. */
	tp_ktables_exit(k, pid);
	tp_ktables_exit(k, pid + 1000000);
	assert_int_equal(fake.forgets, 1);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.maps_forgotten, 1);
	assert_int_equal(st.procs, 0);
	assert_true(st.tables > 0);		/* kept for the next process */

	/* A new ring: what the old one held is forgotten, tables included. */
	fake.now += 300 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	assert_int_equal(fake.sets, 8);
	tp_ktables_set_ring(k, NULL, NULL);
	assert_int_equal(fake.forgets, 2);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.tables, 0);
	assert_int_equal(st.procs, 0);

	tp_ktables_free(k);
	fixture_free(&f);
}

/*
 * A process first met in a fallback sample: its upload reads its maps
 * once, after the token, and the samples' own resolution that follows
 * finds them read (a short-lived process costs one read of /proc, not two).
 */
static void test_first_upload_reads_once(void **state)
{
	struct taproot_procs_stats before, after;
	struct taproot_proc *proc;
	struct tp_ktables *k;
	struct fixture f;
	pid_t pid;

	fake_reset();
	fixture_new(&f);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	assert_int_equal(tp_ktables_new(f.procs, f.u, &k), 0);
	tp_ktables_set_ring(k, &fake, &fake_ops);
	taproot_procs_get_stats(f.procs, &before);
	tp_ktables_sample(k, (uint32_t)pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	assert_int_equal(fake.tokens, 1);
	assert_int_equal(fake.sets, 1);
	assert_int_equal(fake.pid, (uint32_t)pid);
	assert_int_equal(taproot_proc_get(f.procs, pid, 0, &proc), 0);
	assert_null(taproot_proc_gone(proc));
	taproot_procs_get_stats(f.procs, &after);
	assert_int_equal(after.procs_read - before.procs_read, 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	tp_ktables_free(k);
	fixture_free(&f);
}

static void test_budget_and_space(void **state)
{
	/* Code without a table (JIT code's): uploaded when the others cannot be. */
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct taproot_kupload_stats st;
	struct tp_ktables *k;
	struct fixture f;
	uint32_t pid = (uint32_t)getpid();

	assert_true(jit != MAP_FAILED);
	fake_reset();
	fixture_new(&f);
	assert_int_equal(tp_ktables_new(f.procs, f.u, &k), 0);
	tp_ktables_set_ring(k, &fake, &fake_ops);

	/* EEXIST: the module's id is used, nothing counted as uploaded. */
	fake.add_err = 1;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	tp_ktables_stats(k, &st);
	assert_true(st.tables_existed >= 2);
	assert_int_equal(st.tables_uploaded, 0);
	assert_int_equal(st.maps_uploaded, 1);
	for (uint32_t i = 0; i < fake.nr; i++)
		assert_true((fake.maps[i].flags & TAPROOT_MAP_F_FP) || fake.maps[i].table_id);
	tp_ktables_set_ring(k, NULL, NULL);

	/*
	 * ENOSPC: the mappings that needed a table are left out, the rest
	 * uploaded; no table is tried again until one could be freed.
	 */
	fake_reset();
	tp_ktables_set_ring(k, &fake, &fake_ops);
	fake.add_err = -ENOSPC;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	tp_ktables_stats(k, &st);
	assert_int_equal(fake.table_adds, 1);
	assert_int_equal(st.budget_refusals, 1);
	assert_true(st.maps_left_out >= 2);
	assert_int_equal(st.errors, 0);
	for (uint32_t i = 0; i < fake.nr; i++)
		assert_true(fake.maps[i].flags & TAPROOT_MAP_F_FP);
	fake.now += 300 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_MAPPING, fake.now);	/* partial: 200 ms */
	assert_int_equal(fake.sets, 2);
	assert_int_equal(fake.table_adds, 1);
	tp_ktables_set_ring(k, NULL, NULL);

	/*
	 * The work budget: every clock read takes 30 ms, so the first upload
	 * spends more than the 50 ms saved up, and the next processes wait.
	 */
	fake_reset();
	tp_ktables_set_ring(k, &fake, &fake_ops);
	fake.tick = 30 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	assert_int_equal(fake.sets, 1);
	tp_ktables_sample(k, 1, TAPROOT_KUNWIND_NO_PROC, fake.now);	/* init */
	tp_ktables_stats(k, &st);
	assert_int_equal(st.deferred, 1);
	assert_true(st.work_ns > 0);
	assert_int_equal(fake.tokens, 1);

	tp_ktables_free(k);
	fixture_free(&f);
	munmap(jit, 4096);
}

/* ------------------------------------------------------------ waiting */

static void test_waiting(void **state)
{
	struct taproot_kupload_stats st;
	struct tp_ktables *k;
	struct fixture f;
	uint32_t pid = (uint32_t)getpid();
	uint64_t set;

	fake_reset();
	fixture_new(&f);
	assert_int_equal(tp_ktables_new(f.procs, f.u, &k), 0);
	tp_ktables_set_ring(k, &fake, &fake_ops);

	/* The consumer's own process: never, whatever its walks say. */
	tp_ktables_skip(k, pid);
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	tp_ktables_tick(k);
	assert_int_equal(fake.tokens, 0);
	tp_ktables_skip(k, 0);

	/* Put off by the interval, then served by a tick: no other trigger. */
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	assert_int_equal(fake.sets, 1);
	set = fake.now;
	fake.now += 10 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_STALE, fake.now);
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 1);
	fake.now += 300 * MS;
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 2);
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 2);		/* served: no longer waiting */

	/*
	 * Taken before the mappings were last set: only the token is read,
	 * and as it is still the set's, nothing more. Once the address space
	 * changed (another token), old evidence has them set again; a pc in
	 * no mapping always does (5.10's generation misses a new mapping).
	 */
	fake.now += 300 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_STALE, set);
	assert_int_equal(fake.tokens, 3);
	assert_int_equal(fake.sets, 2);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.maps_current, 1);
	fake.now += 300 * MS;
	fake.gen++;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, set);
	assert_int_equal(fake.sets, 3);
	fake.now += 2000 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_MAPPING, set);
	assert_int_equal(fake.sets, 4);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.maps_current, 1);

	/* Twice stale: tried again once the interval is over, unasked. */
	fake.now += 300 * MS;
	fake.stale_left = 2;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_STALE, fake.now);
	assert_int_equal(fake.sets, 6);
	fake.now += 100 * MS;
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 6);
	fake.now += 200 * MS;
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 7);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.maps_uploaded, 5);
	assert_int_equal(st.errors, 0);
	tp_ktables_free(k);
	fixture_free(&f);

	/*
	 * The work budget: every clock read takes 30 ms, so the first upload
	 * spends what was saved up and leaves tables out (nothing compiled
	 * yet: a new unwinder); the process waits, and a tick once the budget
	 * filled again uploads it whole.
	 */
	fake_reset();
	fixture_new(&f);
	assert_int_equal(tp_ktables_new(f.procs, f.u, &k), 0);
	tp_ktables_set_ring(k, &fake, &fake_ops);
	fake.tick = 30 * MS;
	tp_ktables_sample(k, pid, TAPROOT_KUNWIND_NO_PROC, fake.now);
	tp_ktables_stats(k, &st);
	assert_int_equal(fake.sets, 1);
	assert_true(st.maps_left_out > 0);
	fake.tick = 0;
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 1);		/* the bucket is in debt */
	tp_ktables_stats(k, &st);
	assert_int_equal(st.deferred, 1);
	fake.now += 10000 * MS;
	tp_ktables_tick(k);
	assert_int_equal(fake.sets, 2);
	tp_ktables_stats(k, &st);
	assert_int_equal(st.maps_uploaded, 2);
	for (uint32_t i = 0; i < fake.nr; i++)
		assert_true((fake.maps[i].flags & TAPROOT_MAP_F_FP) || fake.maps[i].table_id);

	tp_ktables_free(k);
	fixture_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_libc),
		cmocka_unit_test(test_export_refuses),
		cmocka_unit_test(test_build_self),
		cmocka_unit_test(test_build_go),
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_first_upload_reads_once),
		cmocka_unit_test(test_budget_and_space),
		cmocka_unit_test(test_waiting),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
