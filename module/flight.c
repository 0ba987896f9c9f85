// SPDX-License-Identifier: GPL-2.0
/*
 * Flight recorder: snapshots of the rings and the triggers that freeze
 * them (NETLAT_IOC_SNAPSHOT, NETLAT_IOC_TRIGGERS).
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include "netlat.h"

long netlat_ioc_snapshot(struct file *file, void __user *uarg)
{
	return -EOPNOTSUPP;
}

long netlat_ioc_triggers(void __user *uarg)
{
	return -EOPNOTSUPP;
}
