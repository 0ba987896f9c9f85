/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The send table's life (tracktbl.c): the level and sampling its hooks
 * read, the table in force, and what process context does with it
 * (configuration, renewal, figures, NETLAT_IOC_FLOWS).
 */
#ifndef _NETLAT_TRACKTBL_H
#define _NETLAT_TRACKTBL_H

#include <linux/types.h>
#include <linux/compiler.h>
#include "sktbl.h"

struct netlat_skt_next;

/* Nonzero at the packet level: the TCP handlers call the table's (track.h). */
extern u32 netlat_track_level;

static __always_inline bool netlat_tracking(void)
{
	return READ_ONCE(netlat_track_level);
}

/*
 * Sampling (netlat_config.sample), for both packet tables: log2 of the
 * stride in bytes, 0 for every packet.
 */
extern u32 netlat_track_sample_shift;

/*
 * Whether sampling joins the sequence range [@seq, @end): it holds a byte
 * at a multiple of the stride (seq - 1 and end - 1 differ above the
 * stride's bits: the stride divides 2^32, so this holds across the wrap
 * too). Both ends of a connection pick the same bytes.
 */
static __always_inline bool netlat_track_sampled_range(u32 seq, u32 end)
{
	u32 shift = READ_ONCE(netlat_track_sample_shift);

	return !shift || ((seq - 1) ^ (end - 1)) >> shift;
}

/* The table's home; a hook reads the table in force once. */
extern struct netlat_skt_home netlat_track_home;

static __always_inline struct netlat_skt *netlat_track_skt(void)
{
	return netlat_skt_home_get(&netlat_track_home);
}

/* The packet records' slow threshold: only slower packets leave one. */
extern u64 netlat_track_slow;

/* netlat_config.acks: a record of each pure ACK sent (tcp.c). */
extern u32 netlat_track_acks;

/*
 * Process context, under netlat_lock (checked): a change of level or of
 * the budget @budget empties the table. Prepare allocates and holds the
 * table's home (struct netlat_skt_next); commit cannot fail, or
 * netlat_skt_home_abort() drops what prepare made.
 */
int netlat_track_prepare(u32 level, u64 budget, struct netlat_skt_next *n);
void netlat_track_commit(u32 level, u64 slow_ns, struct netlat_skt_next *n);
/* Under the registry mutex, before their hooks: groups @on go on. */
void netlat_track_groups_on(u64 on);
/* Any context: a load of what the last netlat_track_set() left. */
u64 netlat_track_slow_ns(void);
/* Under netlat_lock: netlat_config.sample, for packets sent from now on. */
void netlat_track_set_sample(u32 sample);
u32 netlat_track_sample(void);
/* Under netlat_lock: netlat_config.acks. */
void netlat_track_set_acks(u32 acks);
/* Process context, no lock: racy figures for reports, and the ioctl. */
u64 netlat_track_flows(void);
u64 netlat_track_capacity(u32 *flows, u32 *pkts);
long netlat_track_ioc_flows(void __user *uarg);
/* Unload, the TCP family gone: no handler runs. */
void netlat_track_exit(void);

#endif /* _NETLAT_TRACKTBL_H */
