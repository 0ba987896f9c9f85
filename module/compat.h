/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows kernel versions differ. Features are detected
 * by Kbuild (see the top-level Kbuild file), not by version numbers, so a
 * distribution backport is picked up automatically.
 */
#ifndef _NETLAT_COMPAT_H
#define _NETLAT_COMPAT_H

#include <linux/mm.h>

#ifndef NETLAT_HAVE_VM_FLAGS_SET
/* Before 6.3 vm_flags was written directly, under the mmap lock. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#endif /* _NETLAT_COMPAT_H */
