// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_DO_VMI_MUNMAP: do_vmi_munmap() (6.2 on), over do_vmi_align_munmap(vmi,
 * vma, mm, start, end, ...), the helper that removals of mappings enter
 * but a MAP_FIXED mapping's over others, which __mmap_region(file, addr,
 * len, ...) makes itself (6.12 on). utab.c's generation of an address
 * space on such kernels comes from kprobes on both (the symbols are
 * looked up when the store is made; a kernel without __mmap_region falls
 * back to a coarser generation).
 */
#include <linux/mm.h>

int probe(struct vma_iterator *vmi, struct mm_struct *mm);
int probe(struct vma_iterator *vmi, struct mm_struct *mm)
{
	return do_vmi_munmap(vmi, mm, 0, 0, NULL, false);
}
