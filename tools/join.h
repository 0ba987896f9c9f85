/* SPDX-License-Identifier: GPL-2.0 */
/* "netlat join": two hosts' captures joined packet by packet. */
#ifndef NETLAT_JOIN_H
#define NETLAT_JOIN_H

int cmd_join(int argc, char **argv);

#endif
