// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl argument copies and the capability check (see uarg.h).
 */
#include <linux/kernel.h>
#include <linux/capability.h>
#include <linux/uaccess.h>
#include <linux/string.h>
#include "uarg.h"
/* the ABI's layout: a field moved in the uapi fails the build here */
#include "netlat_layout.h"

bool netlat_may_read(void)
{
	return capable(CAP_NET_ADMIN) || perfmon_capable();
}

bool netlat_may_trace(void)
{
	return perfmon_capable();
}

int netlat_copy_arg(void *karg, size_t ksize, size_t min_size,
		    void __user *uarg, u32 *usize)
{
	u32 size;
	int err;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size < min_size || size > PAGE_SIZE)
		return -EINVAL;
	err = copy_struct_from_user(karg, ksize, uarg, size);
	if (err == -E2BIG)
		return -EINVAL;
	*usize = size;
	return err;
}

int __netlat_get_arg(void *karg, size_t ksize, size_t min_size, u32 known,
		     const void *resv, size_t resv_len, void __user *uarg,
		     u32 *usize)
{
	/* the first two fields of every argument */
	const struct {
		u32 size;
		u32 flags;
	} *head = karg;
	int err;

	err = netlat_copy_arg(karg, ksize, min_size, uarg, usize);
	if (err)
		return err;
	if ((head->flags & ~known) || memchr_inv(resv, 0, resv_len))
		return -EINVAL;
	return 0;
}

int netlat_copy_array_out(u64 dst, u32 usize, const void *src, size_t ksize,
			  unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		void __user *d = u64_to_user_ptr(dst) + (u64)i * usize;

		if (copy_to_user(d, src + (size_t)i * ksize,
				 min_t(size_t, ksize, usize)) ||
		    (usize > ksize && clear_user(d + ksize, usize - ksize)))
			return -EFAULT;
	}
	return 0;
}

int netlat_copy_out(void __user *uarg, const void *karg, size_t ksize,
		    u32 usize)
{
	return copy_to_user(uarg, karg, min_t(size_t, ksize, usize)) ?
	       -EFAULT : 0;
}
