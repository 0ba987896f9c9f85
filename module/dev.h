/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/netlat: the misc device and its file operations. */
#ifndef _NETLAT_DEV_H
#define _NETLAT_DEV_H

int netlat_dev_init(void);
void netlat_dev_exit(void);

#endif /* _NETLAT_DEV_H */
