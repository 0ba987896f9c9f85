/* SPDX-License-Identifier: GPL-2.0 */
/* The device commands: the ioctls of /dev/netlat from the command line. */
#ifndef NETLAT_DEVICE_H
#define NETLAT_DEVICE_H

int cmd_info(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_probes(int argc, char **argv);

#endif
