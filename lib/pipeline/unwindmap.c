// SPDX-License-Identifier: GPL-2.0
/*
 * The seam between the process model and the unwinder: the mapping of a
 * process that holds a pc, as the unwinder asks for it. Here, above both
 * layers, so that neither knows the other.
 */
#include <errno.h>
#include <string.h>

#include "pipeline/unwindmap.h"
#include "util/util.h"

int taproot_proc_unwind_map(struct taproot_proc *proc, uint64_t pc,
			    struct taproot_unwind_map *um)
{
	const struct taproot_map *m;
	int err;

	memset(um, 0, sizeof(*um));
	err = taproot_proc_find_map(proc, pc, &m);
	if (err)
		return err;
	if (!m->elf)
		return m->elf_err ? m->elf_err :
		       tp_err(-ENOENT, "pid %d: 0x%llx is in a mapping without a file (%s)",
			      taproot_proc_pid(proc), (unsigned long long)pc,
			      m->path[0] ? m->path : "anonymous");
	um->elf = taproot_elf_handle(m->elf);
	um->key = taproot_elf_key(m->elf, &um->key_len);
	um->bias = m->bias;
	um->start = m->start;
	um->end = m->end;
	return 0;
}
