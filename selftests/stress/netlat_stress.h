/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Marker payload of the stress scenario, shared by netlat_stress.ko
 * (interrupt-context writers) and netlat_stress_test (process-context
 * writers and the checker). Every byte is a function of (source, cpu,
 * index), so a torn or mixed-up record shows.
 */
#ifndef NETLAT_STRESS_H
#define NETLAT_STRESS_H

#include <linux/types.h>

#define NETLAT_STRESS_MAGIC	0x54534c4eU	/* "NLST" */

/* Bytes of static per-CPU data netlat_stress.ko holds, besides its own. */
#define NETLAT_STRESS_PERCPU_ROOM	4096

enum netlat_stress_source {
	NETLAT_STRESS_HARDIRQ = 1,	/* hrtimer callback */
	NETLAT_STRESS_SOFTIRQ = 2,	/* tasklet */
	NETLAT_STRESS_PROCESS = 3,	/* write() from a pinned thread */
	NETLAT_STRESS_NR_SOURCES = 4,
};

struct netlat_stress_payload {
	__u32 magic;
	__u16 source;
	__u16 cpu;
	__u64 index;
	__u8 fill[];
};

/* Payload length for @index: 16 to 112 bytes, so record sizes vary. */
static inline __u32 netlat_stress_len(__u64 index)
{
	return sizeof(struct netlat_stress_payload) + (__u32)(index % 97);
}

static inline __u8 netlat_stress_byte(__u16 source, __u16 cpu, __u64 index,
				      __u32 i)
{
	return (__u8)(index * 31 + i * 7 + source * 13 + cpu * 101);
}

static inline void netlat_stress_fill(struct netlat_stress_payload *p,
				      __u16 source, __u16 cpu, __u64 index)
{
	__u32 i, n = netlat_stress_len(index) - sizeof(*p);

	p->magic = NETLAT_STRESS_MAGIC;
	p->source = source;
	p->cpu = cpu;
	p->index = index;
	for (i = 0; i < n; i++)
		p->fill[i] = netlat_stress_byte(source, cpu, index, i);
}

#endif /* NETLAT_STRESS_H */
