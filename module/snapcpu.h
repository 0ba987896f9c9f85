/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One CPU's ring copied into a snapshot while its writers go on
 * (flight.c's snapshots, a CPU at a time).
 */
#ifndef _NETLAT_SNAPCPU_H
#define _NETLAT_SNAPCPU_H

#include <linux/types.h>

struct netlat_rings;

u64 netlat_snapcpu_copy(struct netlat_rings *rs, unsigned int cpu,
			void *dst, u64 room, u64 start_ns);

#endif /* _NETLAT_SNAPCPU_H */
