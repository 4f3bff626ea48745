// SPDX-License-Identifier: GPL-2.0
/*
 * Uploads of unwind tables and process mappings to the module, for its
 * in-kernel unwinder. The policy (when, how often, the budget) is told in
 * ktables.h; here is how.
 *
 * State, all bounded:
 *  - tables: build ID -> the module's table id (or "no table": an ELF
 *    without CFI, whose mappings follow the rbp chain), at most
 *    KT_TABLES_MAX, each with the count of uploaded processes whose
 *    mappings use it (refs), so that only unused tables are deleted;
 *  - processes: pid -> whether the module holds mappings of it, the token
 *    they were set with and when, the tables they use (their refs), when
 *    it was last uploaded and last sampled; at most TAPROOT_PROCS_MAX;
 *  - the processes waiting for an upload (a trigger came before their
 *    interval was over or while the work budget was spent, or their last
 *    upload left mappings out for want of budget), oldest first: served
 *    by every trigger and every tick, so that a process that falls quiet
 *    is uploaded all the same.
 * The uploads of one open /dev/taproot belong to it: a new ring starts
 * from nothing (tp_ktables_set_ring()).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/taproot.h>

#include "kernel/kernel.h"
#include "pipeline/ktables.h"
#include "pipeline/unwindmap.h"
#include "process/process.h"
#include "unwind/unwind.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/lru.h"
#include "util/util.h"

#define KT_PROC_INTERVAL_MS	200	/* a process uploaded at most this often */
#define KT_NOMAP_INTERVAL_MS	2000	/* ... for a pc in no mapping, all uploaded */
#define KT_DUTY_PERMILLE	250	/* of the time, at most, spent uploading */
#define KT_BURST_MS		50	/* work time saved up, at most */
#define KT_SWEEP_EVERY_MS	1000	/* look for dead processes this often */
#define KT_SWEEP_IDLE_MS	10000	/* ... among those not sampled for this long */
#define KT_SWEEP_BATCH		64	/* ... this many at a time */
#define KT_TABLES_MAX		65536	/* build IDs known */
#define KT_PROCS_MAX		TAPROOT_PROCS_MAX
#define KT_BUCKETS		4096	/* of each hash table: a power of two */
#define KT_SERVE_LOOK		64	/* waiting processes looked at per serve, at most */

#define MS	1000000ULL

/* One build ID: its table in the module, or none to upload. */
struct kt_table {
	struct kt_table *next;		/* hash chain */
	uint32_t id;			/* the module's; 0: none (yet) */
	uint32_t refs;			/* uploaded processes using it */
	bool fp;			/* no table: the rbp chain */
	uint8_t len;
	uint8_t build_id[TAPROOT_BUILD_ID_MAX];
};

/* A runtime of a process, as described to the module. */
struct kt_runtime {
	uint64_t token;			/* it was looked at with; 0 none */
	bool walked;			/* one was described */
	bool refused;			/* one was found that is not walked */
};

/* One process met in fallback samples. */
struct kt_proc {
	struct kt_proc *next;		/* hash chain */
	uint32_t pid;
	bool uploaded;			/* the module holds mappings of it */
	bool partial;			/* mappings were left out of them */
	bool never;			/* a kernel thread: nothing to upload */
	bool waiting;			/* in tp_ktables.waiting */
	bool slow;			/* ... only for pcs in no mapping, all uploaded */
	bool check;			/* ... only on evidence older than the set */
	bool put_off;			/* ... and counted deferred */
	uint64_t token;			/* of the mappings it holds */
	struct kt_runtime python;	/* its CPython interpreter */
	struct kt_runtime jvm;		/* its HotSpot JVM */
	uint64_t set_ns;		/* when they were set (MAPS_SET returned) */
	uint64_t tried_ns;		/* last upload */
	uint64_t seen_ns;		/* last fallback sample */
	struct tp_lru_node wait;	/* in tp_ktables.waiting */
	uint32_t nr_tabs;
	struct kt_table **tabs;		/* refs held, one per mapping with a table */
};

struct tp_ktables {
	struct taproot_procs *procs;	/* borrowed */
	struct taproot_unwinder *u;	/* borrowed */
	void *ring;			/* NULL: no uploads */
	struct tp_kops ops;
	bool disabled;			/* the module has no such ioctls */
	bool no_python;			/* the module took no PYTHON_SET */
	bool no_jvm;			/* the module took no JVM_SET */
	bool full;			/* ENOSPC, nothing freed since */
	uint32_t skip;			/* a process never uploaded (the consumer's) */

	struct kt_table *tables[KT_BUCKETS];
	size_t nr_tables;
	struct kt_proc *procs_by_pid[KT_BUCKETS];
	size_t nr_procs;
	struct tp_lru waiting;		/* processes to upload: newest at the head */

	int64_t bucket_ns;		/* work time available; < 0: debt */
	uint64_t filled_ns;		/* when the bucket was last filled */
	uint64_t work_start_ns;		/* of the upload under way */
	uint64_t sweep_ns;		/* last sweep */
	size_t sweep_at;		/* bucket the next sweep starts at */

	/* scratch of one upload */
	uint32_t budget_left_out;	/* mappings whose table waits for budget */
	struct taproot_proc_map *maps;	/* TAPROOT_MAPS_MAX */
	struct kt_table **tabs;		/* maps[i]'s table, NULL for none */
	uint64_t (*ranges)[2];		/* the process's mappings when read */
	size_t ranges_alloc;

	struct taproot_kupload_stats st;
};

/* ------------------------------------------------------------ lib/kernel */

static int kt_table_add(void *ring, const struct taproot_table_add *t, uint32_t *id)
{
	return taproot_ring_table_add(ring, t, id);
}

static int kt_table_del(void *ring, uint32_t id)
{
	return taproot_ring_table_del(ring, id);
}

static int kt_proc_token(void *ring, uint32_t pid, uint64_t *token)
{
	return taproot_ring_proc_token(ring, pid, token);
}

static int kt_maps_set(void *ring, uint32_t pid, uint64_t token,
		       const struct taproot_proc_map *maps, uint32_t nr)
{
	return taproot_ring_maps_set(ring, pid, token, maps, nr);
}

static int kt_python_set(void *ring, uint32_t pid, uint64_t token,
			 const struct taproot_python_layout *layout)
{
	return taproot_ring_python_set(ring, pid, token, layout);
}

static int kt_jvm_set(void *ring, uint32_t pid, uint64_t token,
		      const struct taproot_jvm_layout *layout)
{
	return taproot_ring_jvm_set(ring, pid, token, layout);
}

static uint64_t kt_now(void)
{
	return tp_clock_ns(CLOCK_MONOTONIC);
}

static const struct tp_kops kt_ring_ops = {
	.table_add = kt_table_add,
	.table_del = kt_table_del,
	.proc_token = kt_proc_token,
	.maps_set = kt_maps_set,
	.python_set = kt_python_set,
	.jvm_set = kt_jvm_set,
	.now_ns = kt_now,
};

/* An error of an ioctl: counted; one the module does not know turns uploads off. */
static void kt_error(struct tp_ktables *k, int err)
{
	k->st.errors++;
	if (err == -ENOTTY || err == -EOPNOTSUPP || err == -ENOSYS)
		k->disabled = true;
}

/* -------------------------------------------------------------- tables */

static size_t kt_table_bucket(const uint8_t *id, size_t len)
{
	return tp_hash_fin(tp_hash_bytes(id, len)) & (KT_BUCKETS - 1);
}

static struct kt_table *kt_table_find(struct tp_ktables *k, const uint8_t *id, size_t len)
{
	struct kt_table *t = k->tables[kt_table_bucket(id, len)];

	for (; t; t = t->next)
		if (t->len == len && !memcmp(t->build_id, id, len))
			return t;
	return NULL;
}

/* A new entry for build ID @id (1..TAPROOT_BUILD_ID_MAX bytes); NULL when full. */
static struct kt_table *kt_table_new(struct tp_ktables *k, const uint8_t *id, size_t len)
{
	size_t b = kt_table_bucket(id, len);
	struct kt_table *t;

	if (k->nr_tables >= KT_TABLES_MAX || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->len = (uint8_t)len;
	memcpy(t->build_id, id, len);
	t->next = k->tables[b];
	k->tables[b] = t;
	k->nr_tables++;
	return t;
}

static void kt_table_remove(struct tp_ktables *k, struct kt_table *t)
{
	struct kt_table **pp = &k->tables[kt_table_bucket(t->build_id, t->len)];

	while (*pp != t)
		pp = &(*pp)->next;
	*pp = t->next;
	if (t->id)
		k->st.tables--;
	k->nr_tables--;
	free(t);
}

/*
 * The module's memory is full: delete the tables no uploaded process
 * uses. Uploads of new tables start again once one was freed.
 */
static void kt_reclaim(struct tp_ktables *k)
{
	if (!k->ring || k->disabled)
		return;
	for (size_t b = 0; b < KT_BUCKETS; b++) {
		struct kt_table *t = k->tables[b], *next;

		for (; t; t = next) {
			int err;

			next = t->next;
			if (!t->id || t->refs)
				continue;
			err = k->ops.table_del(k->ring, t->id);
			if (err && err != -ENOENT) {
				kt_error(k, err);
				continue;
			}
			k->st.tables_deleted++;
			k->full = false;
			kt_table_remove(k, t);
		}
	}
}

/* Whether the work budget still holds time, counting the upload under way. */
static bool kt_budget_left(struct tp_ktables *k)
{
	return k->bucket_ns - (int64_t)(k->ops.now_ns() - k->work_start_ns) > 0;
}

/* Build ID @id's entry when known, else its table exported, uploaded. */
static int kt_table_upload(struct tp_ktables *k, struct taproot_proc *proc,
			   const struct taproot_map *m, const uint8_t *id, size_t len,
			   struct kt_table **tp)
{
	struct taproot_table_add add = { 0 };
	struct taproot_unwind_map um;
	uint32_t table_id = 0;
	bool cached;
	int err;

	if (k->full || !k->ring)
		return -EAGAIN;
	err = taproot_proc_unwind_map(proc, m->start, &um);
	if (err < 0)
		return -EAGAIN;
	cached = !kt_budget_left(k);
	err = taproot_unwind_table_export(k->u, &um, cached ? TAPROOT_EXPORT_CACHED : 0, &add);
	if (err == -EAGAIN || err == -ENOMEM) {
		/* not ready: left out this time */
		k->budget_left_out += cached && err == -EAGAIN;
		return -EAGAIN;
	}
	if (err == -E2BIG || err == -EINVAL)
		k->st.errors++;		/* never: the rbp chain */
	if (err < 0) {
		*tp = kt_table_new(k, id, len);
		if (*tp)
			(*tp)->fp = true;
		return *tp ? 0 : -EAGAIN;
	}
	memcpy(add.build_id, id, len);
	add.build_id_len = (uint32_t)len;
	err = k->ops.table_add(k->ring, &add, &table_id);
	if (err == -ENOSPC) {
		k->st.budget_refusals++;
		k->full = true;
		return -EAGAIN;
	}
	if (err < 0 || !table_id) {
		kt_error(k, err < 0 ? err : -EPROTO);
		if (err != -EINVAL)
			return -EAGAIN;
		/* malformed to the module: never again */
		*tp = kt_table_new(k, id, len);
		if (*tp)
			(*tp)->fp = true;
		return *tp ? 0 : -EAGAIN;
	}
	if (err == 0) {
		k->st.tables_uploaded++;
		k->st.table_bytes += (uint64_t)add.nr_rows * (sizeof(uint32_t) + sizeof(uint16_t)) +
				     (uint64_t)add.nr_rules * sizeof(struct taproot_unwind_rule);
	} else {
		k->st.tables_existed++;
	}
	*tp = kt_table_new(k, id, len);
	if (!*tp) {
		/* Uploaded but not remembered: give the room back. */
		if (err == 0 && k->ops.table_del(k->ring, table_id) == 0)
			k->st.tables_deleted++;
		return -EAGAIN;
	}
	(*tp)->id = table_id;
	k->st.tables++;
	return 0;
}

/*
 * The module's name for the table of @e, *@len bytes (TAPROOT_BUILD_ID_MAX
 * at most): its build ID when that fits, else 20 bytes of hashes of what
 * names the file (a longer build ID, or, for a file without one, as Go's
 * own linker leaves them, its identity: taproot_elf_key()), which another
 * file shares only by a 160-bit chance. @out holds the hashes.
 */
static const uint8_t *kt_table_key(const struct taproot_elf *e,
				   uint8_t out[TAPROOT_BUILD_ID_MAX], size_t *len)
{
	const uint8_t *key = taproot_elf_key(e, len);
	uint64_t h[3];

	if (*len <= TAPROOT_BUILD_ID_MAX)
		return key;
	for (int i = 0; i < 3; i++)
		h[i] = tp_hash_fin(tp_hash_mix(tp_hash_bytes(key, *len), (uint64_t)i + 1));
	memcpy(out, h, TAPROOT_BUILD_ID_MAX);
	*len = TAPROOT_BUILD_ID_MAX;
	return out;
}

/*
 * The mapping @m of @proc as the module takes it, into @out and its table
 * into *@tp (NULL: none). 1: @out is to upload; 0: never (vsyscall: not
 * the process's memory); -EAGAIN: left out this time.
 */
static int kt_map_one(struct tp_ktables *k, struct taproot_proc *proc,
		      const struct taproot_map *m, struct taproot_proc_map *out,
		      struct kt_table **tp)
{
	uint8_t short_key[TAPROOT_BUILD_ID_MAX];
	const uint8_t *id;
	size_t len = 0;
	int err;

	*tp = NULL;
	if (m->flags & TAPROOT_MAP_VSYSCALL)
		return 0;
	/* A JVM's compiled code keeps no frame pointer: lib/unwind walks it. */
	if ((m->flags & TAPROOT_MAP_ANON) && taproot_proc_jvm_owns(proc, m->start, m->end))
		return 0;
	*out = (struct taproot_proc_map){ .start = m->start, .end = m->end,
					  .flags = TAPROOT_MAP_F_FP };
	/*
	 * JIT code, special mappings, files that cannot be read. Not the
	 * vDSO: by the rbp chain, a sample on its way in or out of a vDSO
	 * call (rbp not yet pushed, or popped) lost the frames between the
	 * vDSO and the caller's rbp, libc's clock_gettime() among them.
	 * Its image, this host kernel's, is the one this process maps.
	 */
	if (!m->elf || (m->flags & (TAPROOT_MAP_ANON | TAPROOT_MAP_SPECIAL)))
		return 1;
	id = kt_table_key(m->elf, short_key, &len);
	if (!len)
		return 1;
	*tp = kt_table_find(k, id, len);
	if (!*tp) {
		err = kt_table_upload(k, proc, m, id, len, tp);
		if (err < 0)
			return err;
	}
	if ((*tp)->fp) {
		*tp = NULL;
		return 1;
	}
	out->bias = m->bias;
	out->table_id = (*tp)->id;
	out->flags = 0;
	return 1;
}

int tp_ktables_build(struct tp_ktables *k, struct taproot_proc *proc,
		     struct taproot_proc_map *maps, uint32_t max, uint32_t *left_out)
{
	uint32_t n = 0;
	size_t nr;

	*left_out = 0;
	k->budget_left_out = 0;
	if (max > TAPROOT_MAPS_MAX)
		max = TAPROOT_MAPS_MAX;	/* the room of k->tabs */
	/*
	 * The ranges first: resolving a mapping may read the maps again
	 * (one that is gone), after which the list is another.
	 */
	nr = taproot_proc_map_count(proc);
	if (tp_grow((void **)&k->ranges, &k->ranges_alloc, nr, sizeof(k->ranges[0])))
		return tp_err(-ENOMEM, NULL);
	for (size_t i = 0; i < nr; i++) {
		const struct taproot_map *m = taproot_proc_map(proc, i);

		k->ranges[i][0] = m->start;
		k->ranges[i][1] = m->end;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct taproot_map *m;
		int ret;

		/* Sorted and disjoint as read: one that moved since is left out. */
		if (taproot_proc_find_map(proc, k->ranges[i][0], &m) < 0 ||
		    m->start != k->ranges[i][0] || m->end != k->ranges[i][1] || n == max) {
			(*left_out)++;
			continue;
		}
		ret = kt_map_one(k, proc, m, &maps[n], &k->tabs[n]);
		if (ret == 1)
			n++;
		else if (ret < 0)
			(*left_out)++;
	}
	return (int)n;
}

/* ----------------------------------------------------------- processes */

static size_t kt_proc_bucket(uint32_t pid)
{
	return (pid * 2654435761U) & (KT_BUCKETS - 1);
}

static struct kt_proc *kt_proc_find(struct tp_ktables *k, uint32_t pid)
{
	struct kt_proc *e = k->procs_by_pid[kt_proc_bucket(pid)];

	while (e && e->pid != pid)
		e = e->next;
	return e;
}

static struct kt_proc *kt_proc_add(struct tp_ktables *k, uint32_t pid)
{
	size_t b = kt_proc_bucket(pid);
	struct kt_proc *e;

	if (k->nr_procs >= KT_PROCS_MAX || !(e = calloc(1, sizeof(*e))))
		return NULL;
	e->pid = pid;
	e->next = k->procs_by_pid[b];
	k->procs_by_pid[b] = e;
	k->nr_procs++;
	return e;
}

/* Drop the refs @e holds on tables. */
static void kt_proc_release(struct kt_proc *e)
{
	for (uint32_t i = 0; i < e->nr_tabs; i++)
		e->tabs[i]->refs--;
	free(e->tabs);
	e->tabs = NULL;
	e->nr_tabs = 0;
}

/* Take refs on the tables of the @n mappings just set, for @e. 0 or -ENOMEM. */
static int kt_proc_hold(struct tp_ktables *k, struct kt_proc *e, uint32_t n)
{
	struct kt_table **tabs;
	uint32_t nr = 0;

	for (uint32_t i = 0; i < n; i++)
		nr += k->tabs[i] != NULL;
	tabs = nr ? malloc(nr * sizeof(*tabs)) : NULL;
	if (nr && !tabs)
		return -ENOMEM;
	kt_proc_release(e);
	nr = 0;
	for (uint32_t i = 0; i < n; i++)
		if (k->tabs[i]) {
			k->tabs[i]->refs++;
			tabs[nr++] = k->tabs[i];
		}
	e->tabs = tabs;
	e->nr_tabs = nr;
	return 0;
}

/* @e holds no mappings in the module any more: its tables' refs go. */
static void kt_proc_unload(struct tp_ktables *k, struct kt_proc *e)
{
	if (e->uploaded)
		k->st.procs--;
	e->uploaded = false;
	kt_proc_release(e);
	if (k->full)
		kt_reclaim(k);
}

/* Forget @e here and, when it holds mappings there, in the module. */
static void kt_proc_drop(struct tp_ktables *k, struct kt_proc *e, bool in_module)
{
	struct kt_proc **pp = &k->procs_by_pid[kt_proc_bucket(e->pid)];
	int err;

	if (in_module && e->uploaded && k->ring && !k->disabled) {
		err = k->ops.maps_set(k->ring, e->pid, e->token, NULL, 0);
		if (!err)
			k->st.maps_forgotten++;
		else if (err != -ESRCH)
			kt_error(k, err);
	}
	kt_proc_unload(k, e);
	if (e->waiting)
		tp_lru_unlink(&k->waiting, &e->wait);
	while (*pp != e)
		pp = &(*pp)->next;
	*pp = e->next;
	k->nr_procs--;
	free(e);
}

/* The mappings of @n were set with @token: what @e holds now. */
static void kt_proc_set(struct tp_ktables *k, struct kt_proc *e, uint64_t token,
			uint32_t n, uint32_t left_out)
{
	if (kt_proc_hold(k, e, n) < 0) {
		/* Without refs its tables could be deleted under it: forget it. */
		k->st.errors++;
		k->ops.maps_set(k->ring, e->pid, token, NULL, 0);
		return;
	}
	if (!e->uploaded)
		k->st.procs++;
	e->uploaded = true;
	e->token = token;
	e->set_ns = k->ops.now_ns();
	e->partial = left_out > 0;
	k->st.maps_uploaded++;
	k->st.maps_left_out += left_out;
	for (uint32_t i = 0; i < n; i++)
		k->st.maps_fp += (k->maps[i].flags & TAPROOT_MAP_F_FP) != 0;
}

/*
 * Runtime @rt of a process, looked at with @token: @found is what looking
 * for it gave (0: a layout, -ENOENT: none, other: one that is not walked),
 * @set what the module answered (0 when @found was not 0). Returns -ESTALE
 * as a MAPS_SET's, for the caller to try again; any other refusal is
 * counted and not tried again with this token. A module without the
 * ioctl (-ENOTTY) sets *@unsupported: the mappings still go.
 */
static int kt_runtime_done(struct tp_ktables *k, struct kt_runtime *rt, uint64_t token,
			   int found, int set, bool *unsupported, uint64_t *walked,
			   uint64_t *unwalked)
{
	if (found == -ENOENT)
		return 0;	/* none yet: looked for again at the next upload */
	if (found < 0) {
		*unwalked += !rt->refused;
		rt->refused = true;
		rt->token = token;
		return 0;
	}
	if (set == -ESTALE)
		return set;
	if (set == -ENOTTY)
		*unsupported = true;
	else if (set)
		kt_error(k, set);
	else if (!rt->walked)
		(*walked)++;
	rt->walked |= !set;
	rt->token = token;
	return 0;
}

/*
 * After @e's mappings were set with @token: describe its CPython
 * interpreter and its HotSpot JVM to the module, where it runs ones the
 * module walks (kt_runtime_done()).
 */
static int kt_runtimes(struct tp_ktables *k, struct kt_proc *e, struct taproot_proc *proc,
		       uint64_t token)
{
	const struct taproot_pyproc *py;
	struct taproot_jvm_layout jvm;
	int found, set = 0, err;

	if (k->ops.python_set && !k->no_python && e->python.token != token) {
		found = taproot_proc_python(proc, &py);
		if (!found)
			set = k->ops.python_set(k->ring, e->pid, token, &py->layout);
		err = kt_runtime_done(k, &e->python, token, found, set, &k->no_python,
				      &k->st.python_procs, &k->st.python_unwalked);
		if (err)
			return err;
	}
	if (k->ops.jvm_set && !k->no_jvm && e->jvm.token != token) {
		found = taproot_proc_jvm_layout(proc, &jvm);
		if (found == -ENOMEM)
			return found;
		set = found ? 0 : k->ops.jvm_set(k->ring, e->pid, token, &jvm);
		return kt_runtime_done(k, &e->jvm, token, found, set, &k->no_jvm,
				       &k->st.jvm_procs, &k->st.jvm_unwalked);
	}
	return 0;
}

/*
 * One try: a token, the maps read after it, the set. 0 done (or nothing
 * more to do), -ESTALE to try again, another error. When only old
 * evidence asked (e->check), a token equal to the one the module's
 * mappings were set with says they are still those of the address space:
 * nothing more is read or set.
 */
static int kt_upload_once(struct tp_ktables *k, struct kt_proc *e)
{
	struct taproot_proc *proc;
	uint32_t left_out;
	uint64_t token;
	int n, err;

	err = k->ops.proc_token(k->ring, e->pid, &token);
	if (err == -EINVAL)
		e->never = true;	/* a kernel thread */
	if (err)
		return err;
	if (e->check && e->uploaded && !e->partial && token == e->token) {
		k->st.maps_current++;
		return 0;
	}
	/*
	 * The maps read after the token, once: a process first met here
	 * (its samples' stacks are resolved after this) is not read twice.
	 */
	err = taproot_proc_get_current(k->procs, (int)e->pid, &proc);
	if (err < 0)
		return err == -ESRCH ? err : -ENOMEM;
	n = tp_ktables_build(k, proc, k->maps, TAPROOT_MAPS_MAX, &left_out);
	if (n < 0)
		return n;
	if (!n)
		return 0;	/* nothing to set now: its samples fall back */
	err = k->ops.maps_set(k->ring, e->pid, token, k->maps, (uint32_t)n);
	if (!err) {
		kt_proc_set(k, e, token, (uint32_t)n, left_out);
		err = kt_runtimes(k, e, proc, token);
	}
	return err;
}

static void kt_want(struct tp_ktables *k, struct kt_proc *e, bool slow, bool check);

/*
 * Upload @e's mappings: ESTALE once more at once, then again once the
 * interval is over, as when mappings were left out because their tables
 * wait for the work budget: the process still wants its upload, whether
 * or not another trigger comes. (Each try compiles what the budget allows,
 * and a process's mappings settle, so the tries end.)
 */
static void kt_upload(struct tp_ktables *k, struct kt_proc *e)
{
	bool again = false;
	int err = kt_upload_once(k, e);

	if (err == -ESTALE) {
		k->st.stale_retries++;
		err = kt_upload_once(k, e);
		if (err == -ESTALE) {
			k->st.stale_retries++;
			again = true;
			err = 0;
		}
	}
	if (err == -ESRCH) {
		/*
		 * Gone: the module dropped it too. Kept here until the sweep,
		 * so that its samples still in the rings wait out the interval
		 * instead of asking the module again, each.
		 */
		kt_proc_unload(k, e);
	} else if (err == -ENOSPC) {
		k->st.budget_refusals++;
		k->full = true;
	} else if (err && err != -EINVAL) {
		kt_error(k, err);
	}
	/* A table refused for room: make some, for the next upload. */
	if (k->full)
		kt_reclaim(k);
	if (again || (!err && k->budget_left_out))
		kt_want(k, e, false, false);
}

/* Refill the work bucket for the time gone by. */
static void kt_fill(struct tp_ktables *k, uint64_t now)
{
	uint64_t dt = now - k->filled_ns;

	k->filled_ns = now;
	if (dt > 3600 * 1000 * MS)
		dt = 3600 * 1000 * MS;
	k->bucket_ns += (int64_t)(dt * KT_DUTY_PERMILLE / 1000);
	if (k->bucket_ns > (int64_t)(KT_BURST_MS * MS))
		k->bucket_ns = (int64_t)(KT_BURST_MS * MS);
}

/* Processes not sampled for a while whose EXIT was missed: forget the dead. */
static void kt_sweep(struct tp_ktables *k, uint64_t now)
{
	unsigned int seen = 0;

	k->sweep_ns = now;
	for (size_t n = 0; n < KT_BUCKETS && seen < KT_SWEEP_BATCH; n++) {
		struct kt_proc *e = k->procs_by_pid[k->sweep_at], *next;

		k->sweep_at = (k->sweep_at + 1) & (KT_BUCKETS - 1);
		for (; e; e = next) {
			next = e->next;
			seen++;
			if (now - e->seen_ns >= KT_SWEEP_IDLE_MS * MS &&
			    kill((pid_t)e->pid, 0) < 0 && errno == ESRCH)
				kt_proc_drop(k, e, true);
		}
	}
}

/*
 * @e wants an upload: into the waiting list if not there yet. @slow: only
 * for a pc in no mapping while all of them are uploaded, which waits the
 * longer interval unless another reason joins it; @check: only on old
 * evidence, which a token equal to the set's answers, unless another
 * reason joins it.
 */
static void kt_want(struct tp_ktables *k, struct kt_proc *e, bool slow, bool check)
{
	if (e->waiting) {
		e->slow &= slow;
		e->check &= check;
		return;
	}
	e->waiting = true;
	e->slow = slow;
	e->check = check;
	e->put_off = false;
	tp_lru_push(&k->waiting, &e->wait);
}

/*
 * Upload the waiting processes whose interval is over, oldest first, while
 * the work budget holds time; at most KT_SERVE_LOOK of them looked at.
 */
static void kt_serve(struct tp_ktables *k, uint64_t now)
{
	struct tp_lru_node *n, *newer;
	unsigned int looked = 0;

	kt_fill(k, now);
	for (n = k->waiting.tail; n && looked < KT_SERVE_LOOK; n = newer, looked++) {
		struct kt_proc *e = tp_lru_entry(n, struct kt_proc, wait);
		uint64_t interval = (e->slow ? KT_NOMAP_INTERVAL_MS : KT_PROC_INTERVAL_MS) * MS;
		uint64_t t;

		newer = n->prev;
		if (e->tried_ns && now - e->tried_ns < interval)
			continue;
		if (k->bucket_ns <= 0) {
			if (!e->put_off)
				k->st.deferred++;
			e->put_off = true;
			break;
		}
		tp_lru_unlink(&k->waiting, n);
		e->waiting = false;
		e->tried_ns = now;
		k->work_start_ns = now;
		kt_upload(k, e);	/* may make @e wait again, at the head */
		t = k->ops.now_ns();
		k->bucket_ns -= (int64_t)(t - now);
		k->st.work_ns += t - now;
		now = t;
	}
}

void tp_ktables_sample(struct tp_ktables *k, uint32_t pid, unsigned int unwind,
		       uint64_t time_ns)
{
	uint64_t now;
	struct kt_proc *e;

	if (!k || !k->ring || k->disabled || !pid || pid == k->skip)
		return;
	if (unwind != TAPROOT_KUNWIND_NO_PROC && unwind != TAPROOT_KUNWIND_STALE &&
	    unwind != TAPROOT_KUNWIND_NO_MAPPING)
		return;
	now = k->ops.now_ns();
	if (now - k->sweep_ns >= KT_SWEEP_EVERY_MS * MS)
		kt_sweep(k, now);
	e = kt_proc_find(k, pid);
	if (!e && !(e = kt_proc_add(k, pid))) {
		k->st.errors++;		/* more processes than the module holds */
		return;
	}
	e->seen_ns = now;
	if (e->never)
		return;
	/*
	 * slow: a pc in no mapping, all of them uploaded: a library mapped
	 * since, rarely. check: taken before the mappings the module holds
	 * were set, which may be current (a consumer behind its rings would
	 * otherwise set each process's again for each interval of its
	 * backlog) or not (it changed since): the token tells; but a pc in
	 * no mapping may be in one mapped since, which 5.10's generation
	 * does not count: that needs the maps.
	 */
	kt_want(k, e, unwind == TAPROOT_KUNWIND_NO_MAPPING && e->uploaded && !e->partial,
		e->uploaded && time_ns < e->set_ns && unwind != TAPROOT_KUNWIND_NO_MAPPING);
	kt_serve(k, now);
}

void tp_ktables_tick(struct tp_ktables *k)
{
	if (k && k->ring && !k->disabled && k->waiting.tail)
		kt_serve(k, k->ops.now_ns());
}

void tp_ktables_skip(struct tp_ktables *k, uint32_t pid)
{
	k->skip = pid;
}

void tp_ktables_exit(struct tp_ktables *k, uint32_t pid)
{
	struct kt_proc *e;

	if (!k || !(e = kt_proc_find(k, pid)))
		return;
	kt_proc_drop(k, e, true);
}

/* ------------------------------------------------------------ the whole */

int tp_ktables_new(struct taproot_procs *procs, struct taproot_unwinder *u,
		   struct tp_ktables **kp)
{
	struct tp_ktables *k = calloc(1, sizeof(*k));

	*kp = NULL;
	if (k) {
		k->maps = calloc(TAPROOT_MAPS_MAX, sizeof(*k->maps));
		k->tabs = calloc(TAPROOT_MAPS_MAX, sizeof(*k->tabs));
	}
	if (!k || !k->maps || !k->tabs) {
		tp_ktables_free(k);
		return tp_err(-ENOMEM, NULL);
	}
	k->procs = procs;
	k->u = u;
	k->ops = kt_ring_ops;
	*kp = k;
	return 0;
}

/* Forget every process and table, here only (or the processes in the module too). */
static void kt_clear(struct tp_ktables *k, bool in_module)
{
	k->full = false;	/* no reclaim while the processes go */
	/* The processes first: they hold refs on tables. */
	for (size_t b = 0; b < KT_BUCKETS; b++)
		while (k->procs_by_pid[b])
			kt_proc_drop(k, k->procs_by_pid[b], in_module);
	for (size_t b = 0; b < KT_BUCKETS; b++)
		while (k->tables[b])
			kt_table_remove(k, k->tables[b]);
	k->disabled = false;
}

void tp_ktables_free(struct tp_ktables *k)
{
	if (!k)
		return;
	k->ring = NULL;		/* the caller's ring may be closed by now */
	kt_clear(k, false);
	free(k->maps);
	free(k->tabs);
	free(k->ranges);
	free(k);
}

void tp_ktables_set_ring(struct tp_ktables *k, void *ring, const struct tp_kops *ops)
{
	if (ring == k->ring)
		return;
	/* The old ring is still open: what its processes hold there is freed now. */
	kt_clear(k, true);
	k->ring = ring;
	k->ops = ops ? *ops : kt_ring_ops;
	k->filled_ns = k->ops.now_ns();
	k->bucket_ns = (int64_t)(KT_BURST_MS * MS);
	k->sweep_ns = k->filled_ns;
	k->work_start_ns = k->filled_ns;
}

void tp_ktables_stats(const struct tp_ktables *k, struct taproot_kupload_stats *st)
{
	if (!k) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = k->st;
}
