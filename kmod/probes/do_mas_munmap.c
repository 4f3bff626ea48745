// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_DO_MAS_MUNMAP: do_mas_munmap() (6.1), whose helper
 * do_mas_align_munmap(mas, vma, mm, ...) every removal of mappings goes
 * through, under the mmap write lock, before it changes anything:
 * utab.c's generation of an address space on such kernels comes from a
 * kprobe there (the symbol is looked up when the store is made).
 */
#include <linux/mm.h>

int probe(struct ma_state *mas, struct mm_struct *mm);
int probe(struct ma_state *mas, struct mm_struct *mm)
{
	return do_mas_munmap(mas, mm, 0, 0, NULL, false);
}
