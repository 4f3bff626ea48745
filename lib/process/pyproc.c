// SPDX-License-Identifier: GPL-2.0
/*
 * The CPython interpreter of a process (process.h): its ELF file among the
 * process's mappings (python3.N, or the libpython3.N it loads), what
 * lib/runtime/python.c reads of it, moved by the mapping's bias, and the
 * TLS offset of its C library's pthread keys. And reads of the process's
 * memory, for the code objects its frames name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "process/process-private.h"
#include "runtime/runtime.h"
#include "util/util.h"

/* Whether @path names the library of glibc that holds pthread_getspecific(). */
static bool is_glibc(const char *path)
{
	const char *b = tp_path_base(path);

	return !strncmp(b, "libc.so.6", 9) || !strncmp(b, "libc-2.", 7) ||
	       !strncmp(b, "libpthread.so.0", 15) || !strncmp(b, "libpthread-2.", 13);
}

static int proc_python(struct taproot_proc *proc, struct taproot_pyproc *py)
{
	uint64_t starts[2] = { 0, 0 };	/* the interpreter's, the pthread library's */
	const struct taproot_map *m;
	uint32_t tsd_off = 0;
	int err;

	memset(py, 0, sizeof(*py));
	for (size_t i = 0; i < taproot_proc_map_count(proc); i++) {
		const struct taproot_map *mi = taproot_proc_map(proc, i);
		const char *b = tp_path_base(mi->path);

		if (!starts[0] && (!strncmp(b, "python3.", 8) || !strncmp(b, "libpython3.", 11)))
			starts[0] = mi->start;
		/* libpthread (glibc before 2.34) over libc when both are there. */
		if (is_glibc(mi->path) && (!starts[1] || !strncmp(b, "libpthread", 10)))
			starts[1] = mi->start;
	}
	if (!starts[0] || taproot_proc_find_map(proc, starts[0], &m) < 0 || !m->elf)
		return -ENOENT;
	err = tp_pyelf_read(taproot_elf_handle(m->elf), m->path, &py->elf);
	if (err == -ENOTSUP || err == -EINVAL)
		snprintf(proc->py_marker, sizeof(proc->py_marker), "[python 3.%u: %s]",
			 py->elf.minor, err == -ENOTSUP ? "unsupported" : "unreadable interpreter");
	if (err < 0)
		return err;
	py->bias = m->bias;
	if (!starts[1] || taproot_proc_find_map(proc, starts[1], &m) < 0 || !m->elf ||
	    tp_glibc_tsd(taproot_elf_handle(m->elf), &tsd_off) < 0) {
		snprintf(proc->py_marker, sizeof(proc->py_marker),
			 "[python 3.%u: C library unsupported]", py->elf.minor);
		return tp_err(-ENOTSUP, "%s: no glibc pthread_getspecific() taproot knows",
			      starts[1] ? m->path : "no glibc");
	}
	tp_pyelf_layout(&py->elf, py->bias, tsd_off, &py->layout);
	return 0;
}

bool taproot_pyproc_in_eval(const struct taproot_pyproc *py, uint64_t pc)
{
	for (unsigned int i = 0; i < py->elf.eval_parts; i++)
		if (pc - py->bias >= py->elf.eval[i][0] && pc - py->bias < py->elf.eval[i][1])
			return true;
	return false;
}

int taproot_proc_python(struct taproot_proc *proc, const struct taproot_pyproc **pyp)
{
	struct taproot_pyproc found;

	*pyp = NULL;
	if (!proc->py_known) {
		proc->py_marker[0] = '\0';
		proc->py_err = proc_python(proc, &found);
		if (!proc->py_err && !proc->py && !(proc->py = malloc(sizeof(*proc->py))))
			return tp_err(-ENOMEM, NULL);
		if (!proc->py_err)
			*proc->py = found;
		proc->py_known = true;
	} else if (proc->py_err == -ENOTSUP || proc->py_err == -EINVAL) {
		/* Said once: again with the same maps, the error alone. */
		return proc->py_err;
	}
	if (!proc->py_err)
		*pyp = proc->py;
	return proc->py_err;
}

const char *taproot_proc_python_unwalked(struct taproot_proc *proc)
{
	const struct taproot_pyproc *py;

	taproot_proc_python(proc, &py);
	return proc->py_marker[0] ? proc->py_marker : NULL;
}

int taproot_proc_read_mem(const struct taproot_proc *proc, uint64_t addr, void *dst, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(proc->pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

bool taproot_proc_mem_gone(const struct taproot_proc *proc, uint64_t addr)
{
	uint8_t byte;

	return proc->state != TP_PROC_LIVE ||
	       taproot_proc_read_mem(proc, addr, &byte, sizeof(byte)) == -ESRCH;
}
