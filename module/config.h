/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration (struct netlat_config): set all or nothing.
 */
#ifndef _NETLAT_CONFIG_H
#define _NETLAT_CONFIG_H

#include <linux/types.h>

#include <linux/compiler.h>

/*
 * NETLAT_IOC_SET_CONFIG. Process context, the caller's capabilities
 * checked: the caller's configuration in force, or an error and nothing
 * changed.
 */
long netlat_config_ioc(void __user *uarg);

#endif /* _NETLAT_CONFIG_H */
