/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration (struct netlat_config): set all or nothing.
 */
#ifndef _NETLAT_CONFIG_H
#define _NETLAT_CONFIG_H

#include <linux/types.h>

struct netlat_config;

/*
 * Process context, the caller's capabilities checked: @cfg, of @usize
 * bytes from the caller, in force, or an error and nothing changed.
 */
int netlat_config_set(const struct netlat_config *cfg, u32 usize);

#endif /* _NETLAT_CONFIG_H */
