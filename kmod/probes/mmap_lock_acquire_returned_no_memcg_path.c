// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_MMAP_LOCK_ACQUIRE_RETURNED_NO_MEMCG_PATH: the
 * mmap_lock_acquire_returned probe prototype is (void *data,
 * struct mm_struct *mm, bool write, bool success) (6.14 on); see
 * mmap_lock_acquire_returned_memcg_path.c for the one before.
 */
#include <trace/events/mmap_lock.h>

static void fn(void *data, struct mm_struct *mm, bool write, bool success)
{
}

void probe(void);
void probe(void)
{
	check_trace_callback_type_mmap_lock_acquire_returned(fn);
}
