// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_MMAP_LOCK_ACQUIRE_RETURNED_MEMCG_PATH: the mmap_lock_acquire_returned
 * probe prototype is (void *data, struct mm_struct *mm,
 * const char *memcg_path, bool write, bool success) (5.11 to 6.13);
 * HAS_MMAP_LOCK_ACQUIRE_RETURNED_NO_MEMCG_PATH is the later one, without
 * memcg_path.
 */
#include <trace/events/mmap_lock.h>

static void fn(void *data, struct mm_struct *mm, const char *memcg_path,
	       bool write, bool success)
{
}

void probe(void);
void probe(void)
{
	check_trace_callback_type_mmap_lock_acquire_returned(fn);
}
