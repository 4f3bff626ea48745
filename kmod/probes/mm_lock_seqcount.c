// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_MM_LOCK_SEQCOUNT: mm->mm_lock_seq is a seqcount_t (per-VMA locks,
 * 6.13, and Debian's 6.12): it is made odd when the mmap lock is taken for
 * writing and even again when it is released or downgraded, so it names
 * every change of the address space, and says when one is under way.
 * utab.c's generation of an address space where it exists.
 */
#include <linux/mm_types.h>

unsigned int probe(struct mm_struct *mm);
unsigned int probe(struct mm_struct *mm)
{
	return READ_ONCE(mm->mm_lock_seq.sequence);
}
