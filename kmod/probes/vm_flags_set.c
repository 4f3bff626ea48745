// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_VM_FLAGS_SET: vm_flags_set()/vm_flags_clear() (6.3); vma->vm_flags
 * became read-only for drivers at the same time.
 */
#include <linux/mm.h>

void probe(struct vm_area_struct *vma);
void probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYWRITE);
}
