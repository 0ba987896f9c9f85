/* SPDX-License-Identifier: GPL-2.0 */
/* "netlat stat": stages and counters, once or every interval. */
#ifndef NETLAT_STAT_H
#define NETLAT_STAT_H

int cmd_stat(int argc, char **argv);

#endif
