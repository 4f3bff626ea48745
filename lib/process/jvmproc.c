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

/* The code heaps are read again at most this often while a pc is in none. */
#define JVM_HEAPS_REFRESH_MS	1000

static int jvm_read(void *proc, uint64_t addr, void *dst, size_t len)
{
	return taproot_proc_read_mem(proc, addr, dst, len);
}

static bool is_libjvm(const char *path)
{
	const char *b = strrchr(path, '/');

	return !strcmp(b ? b + 1 : path, "libjvm.so");
}

static int proc_jvm(struct taproot_proc *proc, struct tp_jvm *j)
{
	uint64_t addr[TP_JVM_NR_SYMS], start = 0;
	const struct taproot_map *m;

	for (size_t i = 0; i < taproot_proc_map_count(proc) && !start; i++) {
		const struct taproot_map *mi = taproot_proc_map(proc, i);

		if (is_libjvm(mi->path))
			start = mi->start;
	}
	/* Found by its address, which opens its ELF file. */
	if (!start || taproot_proc_find_map(proc, start, &m) < 0 || !m->elf)
		return -ENOENT;
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
	if (!proc->jvm_known) {
		struct tp_jvm found;

		proc->jvm_err = proc_jvm(proc, &found);
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

int taproot_proc_jvm_frames(struct taproot_proc *proc, uint64_t pc, struct tp_jvm_frame *fr,
			    int max)
{
	struct tp_jvm *j;
	uint64_t now;
	int err = proc_jvm_get(proc, &j);

	if (err == -ENOMEM)
		return err;
	if (err < 0)
		return -ENOENT;
	/* Heaps the JVM made since (it may have been read as it started). */
	if (!tp_jvm_in_code(j, pc)) {
		now = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
		if (now - proc->jvm_heaps_ms < JVM_HEAPS_REFRESH_MS)
			return -ENOENT;
		proc->jvm_heaps_ms = now;
		if (tp_jvm_read_heaps(j, jvm_read, proc) < 0 || !tp_jvm_in_code(j, pc))
			return -ENOENT;
	}
	err = tp_jvm_frames(j, pc, jvm_read, proc, fr, max);
	return err < 0 ? -ENOENT : err;
}
