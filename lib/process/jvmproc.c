// SPDX-License-Identifier: GPL-2.0
/*
 * The HotSpot JVM of a process (process.h): its libjvm.so among the
 * process's mappings, the tables lib/runtime/hotspot.c reads of it, kept
 * with the process until its maps change, and the names of the code in
 * its code cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "process/process-private.h"
#include "runtime/runtime.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/util.h"

/* The code heaps are read again at most this often while a pc is in none. */
#define JVM_HEAPS_REFRESH_MS	1000

static int jvm_read(void *proc, uint64_t addr, void *dst, size_t len)
{
	return taproot_proc_read_mem(proc, addr, dst, len);
}

static bool is_libjvm(const char *path)
{
	return !strcmp(tp_path_base(path), "libjvm.so");
}

/* @proc's (first) mapping of libjvm.so, its ELF file open, or NULL. */
static const struct taproot_map *jvm_lib(struct taproot_proc *proc)
{
	const struct taproot_map *m;
	uint64_t start = 0;

	for (size_t i = 0; i < taproot_proc_map_count(proc) && !start; i++) {
		const struct taproot_map *mi = taproot_proc_map(proc, i);

		if (is_libjvm(mi->path))
			start = mi->start;
	}
	/* Found by its address, which opens its ELF file. */
	if (!start || taproot_proc_find_map(proc, start, &m) < 0 || !m->elf)
		return NULL;
	return m;
}

/* Which libjvm.so @m is, where: its file's key, its start and bias. */
static uint64_t jvm_lib_id(const struct taproot_map *m)
{
	size_t len;
	const uint8_t *key = taproot_elf_key(m->elf, &len);

	return tp_hash_mix(tp_hash_mix(tp_hash_bytes(key, len), m->start), m->bias);
}

static int proc_jvm(struct taproot_proc *proc, struct tp_jvm *j)
{
	const struct taproot_map *m = jvm_lib(proc);
	uint64_t addr[TP_JVM_NR_SYMS];

	if (!m)
		return -ENOENT;
	proc->jvm_lib = jvm_lib_id(m);
	if (tp_jvm_elf_syms(taproot_elf_handle(m->elf), addr) < 0)
		return tp_err(-ENOTSUP, "%s: no vmStructs tables", m->path);
	for (int k = 0; k < TP_JVM_NR_SYMS; k++)
		addr[k] += m->bias;
	return tp_jvm_read(j, addr, jvm_read, proc);
}

/* @proc's JVM, read once for the maps held: 0 with *@jp, or why not. */
static int proc_jvm_get(struct taproot_proc *proc, struct tp_jvm **jp)
{
	*jp = NULL;
	if (proc->state != TP_PROC_LIVE)
		return -ESRCH;
	/*
	 * A JVM read as it started (-EAGAIN) is read again, at most every
	 * JVM_HEAPS_REFRESH_MS: its maps may well not change once it has.
	 */
	if (proc->jvm_known && proc->jvm_err == -EAGAIN &&
	    tp_clock_ms(CLOCK_MONOTONIC_COARSE) - proc->jvm_heaps_ms >= JVM_HEAPS_REFRESH_MS)
		proc->jvm_known = false;
	if (!proc->jvm_known) {
		const struct taproot_map *m;
		struct tp_jvm found;

		/*
		 * The maps changed, libjvm.so did not: the tables read of it
		 * stand (reading them again is thousands of reads); the code
		 * heaps are read again when a pc needs it.
		 */
		if (proc->jvm && !proc->jvm_err && (m = jvm_lib(proc)) &&
		    jvm_lib_id(m) == proc->jvm_lib) {
			proc->jvm_known = true;
			*jp = proc->jvm;
			return 0;
		}
		found.major = 0;
		proc->jvm_err = proc_jvm(proc, &found);
		proc->jvm_refused = proc->jvm_err == -ENOTSUP ? found.major : 0;
		if (!proc->jvm_err && !proc->jvm && !(proc->jvm = malloc(sizeof(*proc->jvm))))
			return tp_err(-ENOMEM, NULL);
		if (!proc->jvm_err)
			*proc->jvm = found;
		proc->jvm_heaps_ms = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
		proc->jvm_known = true;
	}
	if (!proc->jvm_err)
		*jp = proc->jvm;
	return proc->jvm_err;
}

/*
 * @proc's JVM into *@jp when @pc (0: any) lies in its code cache: 0, or
 * -ENOENT, -ENOMEM.
 */
static int proc_jvm_code(struct taproot_proc *proc, uint64_t pc, struct tp_jvm **jp)
{
	uint64_t now;
	int err = proc_jvm_get(proc, jp);

	if (err == -ENOMEM)
		return err;
	if (err < 0)
		return -ENOENT;
	/* Heaps the JVM made since (it may have been read as it started). */
	if (pc && !tp_jvm_in_code(*jp, pc)) {
		now = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
		if (now - proc->jvm_heaps_ms < JVM_HEAPS_REFRESH_MS)
			return -ENOENT;
		proc->jvm_heaps_ms = now;
		if (tp_jvm_read_heaps(*jp, jvm_read, proc) < 0 || !tp_jvm_in_code(*jp, pc))
			return -ENOENT;
	}
	return 0;
}

const char *taproot_proc_jvm_refused(struct taproot_proc *proc, char *buf, size_t len)
{
	struct tp_jvm *j;

	if (proc_jvm_get(proc, &j) != -ENOTSUP)
		return NULL;
	if (proc->jvm_refused)
		snprintf(buf, len, "[java: JDK %u not supported]", proc->jvm_refused);
	else
		snprintf(buf, len, "[java: JVM tables not understood]");
	return buf;
}

int taproot_proc_jvm_frames(struct taproot_proc *proc, uint64_t pc, struct tp_jvm_frame *fr,
			    int max)
{
	struct tp_jvm *j;
	int err = proc_jvm_code(proc, pc, &j);

	if (err < 0)
		return err;
	err = tp_jvm_frames(j, pc, jvm_read, proc, fr, max);
	return err < 0 ? -ENOENT : err;
}

int taproot_proc_jvm_blob(struct taproot_proc *proc, uint64_t pc, struct tp_jvm_blob *b)
{
	struct tp_jvm *j;
	int err = proc_jvm_code(proc, pc, &j);

	if (err < 0)
		return err;
	return tp_jvm_blob(j, pc, jvm_read, proc, b) < 0 ? -ENOENT : 0;
}

/* The Method* bits of an interpreted frame's pc (its address >> 3). */
#define JVM_INTERP_METHOD_MASK	((1ULL << TAPROOT_UPC_JVM_BCI_SHIFT) - 1)

bool taproot_proc_jvm_owns(struct taproot_proc *proc, uint64_t start, uint64_t end)
{
	struct tp_jvm *j;

	if (proc_jvm_get(proc, &j) < 0)
		return false;
	if (!j->nr_heaps && tp_jvm_read_heaps(j, jvm_read, proc) < 0)
		return false;
	for (unsigned int i = 0; i < j->nr_heaps; i++)
		if (j->heap[i].low < end && start < j->heap[i].high)
			return true;
	return false;
}

int taproot_proc_jvm_interp_pc(struct taproot_proc *proc, uint64_t method, uint64_t bcp,
			       uint64_t *pc)
{
	struct tp_jvm *j;
	uint32_t bci;
	int err;

	if (!taproot_upc_jvm_method(method, 0))
		return -ENOENT;
	if ((err = proc_jvm_code(proc, 0, &j)) < 0)
		return err;
	err = tp_jvm_bci(j, method, bcp, jvm_read, proc, &bci) < 0;
	if (err)
		bci = TAPROOT_UPC_JVM_BCI_NONE;
	*pc = taproot_upc_jvm_method(method, bci);
	return err;
}

uint64_t taproot_proc_jvm_method_cookie(struct taproot_proc *proc, uint64_t pc)
{
	uint64_t method = (pc & JVM_INTERP_METHOD_MASK) << 3, cm = 0;
	struct tp_jvm *j;

	if (!taproot_pc_is_jvm_interp(pc) || proc_jvm_code(proc, 0, &j) < 0 ||
	    jvm_read(proc, method + j->field[TP_JVMF_CONST_METHOD], &cm, sizeof(cm)) < 0)
		return 0;
	return cm;
}

int taproot_proc_jvm_interp_frame(struct taproot_proc *proc, uint64_t pc,
				  struct tp_jvm_frame *fr)
{
	uint32_t bci = (uint32_t)(pc >> TAPROOT_UPC_JVM_BCI_SHIFT) & 0xffff;
	struct tp_jvm *j;
	int err;

	if (!taproot_pc_is_jvm_interp(pc))
		return -ENOENT;
	if ((err = proc_jvm_code(proc, 0, &j)) < 0)
		return err;
	err = tp_jvm_method_frame(j, (pc & JVM_INTERP_METHOD_MASK) << 3, bci, jvm_read, proc, fr);
	return err < 0 ? -ENOENT : 0;
}

/*
 * The address of code pc @upc: the one in the 2 GiB from the JVM's lowest
 * heap with its low 31 bits, as the heaps lie within 2 GiB of it.
 */
static uint64_t jvm_code_addr(const struct tp_jvm *j, uint64_t upc)
{
	uint64_t lo = UINT64_MAX;

	for (unsigned int i = 0; i < j->nr_heaps; i++)
		if (j->heap[i].low < lo)
			lo = j->heap[i].low;
	return lo + ((upc - lo) & TAPROOT_UPC_JVM_PC_MASK);
}

int taproot_proc_jvm_code_frames(struct taproot_proc *proc, uint64_t upc,
				 struct tp_jvm_frame *fr, int max)
{
	uint32_t id = (uint32_t)(upc >> TAPROOT_UPC_JVM_ID_SHIFT) & TAPROOT_UPC_JVM_NOID;
	struct tp_jvm_blob b;
	struct tp_jvm *j;
	uint64_t pc;
	int err;

	if ((upc >> 60) != (TAPROOT_UPC_JVM_CODE >> 60))
		return -ENOENT;
	if ((err = proc_jvm_code(proc, 0, &j)) < 0)
		return err;
	if (!j->nr_heaps && tp_jvm_read_heaps(j, jvm_read, proc) < 0)
		return -ENOENT;
	pc = jvm_code_addr(j, upc);
	if ((err = proc_jvm_code(proc, pc, &j)) < 0)
		return err;
	if (id != TAPROOT_UPC_JVM_NOID &&
	    (tp_jvm_blob(j, pc, jvm_read, proc, &b) < 0 || b.compile_id < 0 ||
	     ((uint32_t)b.compile_id & TAPROOT_UPC_JVM_NOID) != id))
		return -ESTALE;
	err = tp_jvm_frames(j, pc, jvm_read, proc, fr, max);
	return err < 0 ? -ENOENT : err;
}

int taproot_proc_jvm_layout(struct taproot_proc *proc, struct taproot_jvm_layout *l)
{
	struct tp_jvm *j;
	int err = proc_jvm_get(proc, &j);

	if (err == -ENOMEM)
		return err;
	if (err < 0)
		return err == -ENOTSUP ? err : -ENOENT;
	if (!j->nr_heaps && tp_jvm_read_heaps(j, jvm_read, proc) < 0)
		return -ENOENT;
	return tp_jvm_layout(j, l);
}
