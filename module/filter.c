// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel filters: rules checked by the probe handlers before a record
 * is reserved (NETLAT_IOC_FILTERS).
 */
#include <linux/kernel.h>
#include "netlat.h"

long netlat_ioc_filters(void __user *uarg)
{
	return -EOPNOTSUPP;
}

u64 netlat_filtered(int cpu)
{
	return 0;
}
