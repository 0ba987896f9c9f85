/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioctl arguments: the size-first structures of uapi/linux/netlat.h and
 * who may change global state. Used by every unit that serves an ioctl.
 */
#ifndef _NETLAT_UARG_H
#define _NETLAT_UARG_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>

/*
 * Who may open the device and read it (records, histograms, flows):
 * CAP_NET_ADMIN, CAP_PERFMON or CAP_SYS_ADMIN.
 */
bool netlat_may_read(void);
/*
 * Who may change what is traced (probes, configuration, filters,
 * triggers, snapshots, a reset): CAP_PERFMON or CAP_SYS_ADMIN, as for
 * perf and BPF tracing; CAP_NET_ADMIN alone may not.
 */
bool netlat_may_trace(void);

/*
 * Copy a size-first argument in. Shorter than @min_size (the first
 * published size) or larger than a page is -EINVAL; bytes beyond @ksize
 * must be zero (-EINVAL). *@usize gets the caller's size.
 */
int netlat_copy_arg(void *karg, size_t ksize, size_t min_size,
		    void __user *uarg, u32 *usize);

/*
 * netlat_copy_arg(), then what every ioctl checks next: a flag outside
 * @known is -EINVAL, and so is a nonzero byte in the @resv_len bytes at
 * @resv (fields of @karg the caller leaves zero; NULL, 0 for none). Each
 * argument begins with its size, then its flags: the macros below check
 * that at build time.
 */
int __netlat_get_arg(void *karg, size_t ksize, size_t min_size, u32 known,
		     const void *resv, size_t resv_len, void __user *uarg,
		     u32 *usize);

#define netlat_arg_head_check(arg)					\
	BUILD_BUG_ON(offsetof(typeof(arg), size) != 0 ||		\
		     offsetof(typeof(arg), flags) != sizeof(u32))

/* __netlat_get_arg() into the variable @arg */
#define netlat_get_arg(arg, min_size, known, uarg, usize) ({		\
	netlat_arg_head_check(arg);					\
	__netlat_get_arg(&(arg), sizeof(arg), min_size, known, NULL, 0,	\
			 uarg, usize);					\
})

/* The same, and the field @resv of @arg must be zero */
#define netlat_get_arg_resv(arg, min_size, known, resv, uarg, usize) ({ \
	netlat_arg_head_check(arg);					\
	__netlat_get_arg(&(arg), sizeof(arg), min_size, known,		\
			 &(arg).resv, sizeof((arg).resv), uarg, usize);	\
})

/* Copy back as much of @karg as the caller's @usize has room for. */
int netlat_copy_out(void __user *uarg, const void *karg, size_t ksize,
		    u32 usize);

/*
 * Copy @n entries of @ksize bytes from @src to the user array @dst of
 * @usize-byte entries: a smaller entry gets our first bytes, a larger
 * one's tail is zeroed. 0 or -EFAULT.
 */
int netlat_copy_array_out(u64 dst, u32 usize, const void *src, size_t ksize,
			  unsigned int n);

#endif /* _NETLAT_UARG_H */
