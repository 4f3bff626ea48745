/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam between the process model and the unwinder
 * (lib/pipeline/unwindmap.c), above both layers so that neither includes
 * the other.
 */
#ifndef TAPROOT_PIPELINE_UNWINDMAP_H
#define TAPROOT_PIPELINE_UNWINDMAP_H

#include <stdint.h>

#include "process/process.h"
#include "unwind/unwind.h"

/*
 * Fill @um for @pc of @proc. Errors: as taproot_proc_find_map(), and the
 * mapping's elf_err when it has no ELF file.
 */
int taproot_proc_unwind_map(struct taproot_proc *proc, uint64_t pc,
			    struct taproot_unwind_map *um);

#endif /* TAPROOT_PIPELINE_UNWINDMAP_H */
