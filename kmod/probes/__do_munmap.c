// SPDX-License-Identifier: GPL-2.0
/*
 * HAS___DO_MUNMAP: __do_munmap(mm, start, len, uf, downgrade) (4.20 to
 * 6.0), which every removal of mappings enters (munmap, a MAP_FIXED
 * mapping over others, mremap, brk), under the mmap write lock, before it
 * changes anything: utab.c's generation of an address space on such
 * kernels comes from a kprobe there (the symbol is looked up when the
 * store is made; the kernel's vmacache_seqnum is the fallback).
 */
#include <linux/mm.h>

int probe(struct mm_struct *mm);
int probe(struct mm_struct *mm)
{
	return __do_munmap(mm, 0, 0, NULL, false);
}
