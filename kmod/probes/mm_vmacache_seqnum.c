// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_MM_VMACACHE_SEQNUM: mm->vmacache_seqnum (before 6.1), bumped under
 * the mmap write lock whenever a VMA is removed (munmap, a MAP_FIXED
 * mapping over another, mremap, a merge): utab.c's generation of an
 * address space on such kernels.
 */
#include <linux/mm_types.h>

u64 probe(struct mm_struct *mm);
u64 probe(struct mm_struct *mm)
{
	return READ_ONCE(mm->vmacache_seqnum);
}
