/* SPDX-License-Identifier: GPL-2.0 */
/* The module's hooks and the mechanism each has on the running kernel. */
#ifndef NETLAT_HOOKS_H
#define NETLAT_HOOKS_H

/*
 * NETLAT_IOC_HOOKS on @fd (the device @path): one line per hook, its
 * function or tracepoint, group, the mechanism the running kernel gave
 * it, the levels it serves and whether it is armed. 0, or the exit
 * status of a failed ioctl (reported on stderr).
 */
int hooks_print(int fd, const char *path);

#endif /* NETLAT_HOOKS_H */
