/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each socket's counters (struct netlat_flow_stats): the ones a packet
 * table keeps per entry, the ring of the sockets closed or evicted last
 * with the sum of those older, and NETLAT_IOC_FLOWS, which copies them
 * out. A layer under the send table (track.c), which owns the entries and
 * the ring's lifetime (its table's own state, netlat_skt_priv()).
 */
#ifndef _NETLAT_FLOWS_H
#define _NETLAT_FLOWS_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/netlat.h>

/* A socket's counters, under its entry's lock. */
struct netlat_flow_counts {
	u64 packets;
	u64 bytes;
	u64 segs;
	u64 untracked;
	u64 merged;
	u64 retrans_segs[8];
	u64 retrans_fail[NETLAT_RTXERR_NR];
	u64 start_ns;
};

/* Zeroed, counting from now. */
void netlat_flow_counts_start(struct netlat_flow_counts *c);
/* @e: socket @id's counters @c as the uapi has them. */
void netlat_flow_stats_of(struct netlat_flow_stats *e,
			  const struct netlat_flow *id,
			  const struct netlat_flow_counts *c);
/* @to gets @e's counts (a sum of sockets). */
void netlat_flow_stats_add(struct netlat_flow_stats *to,
			   const struct netlat_flow_stats *e);

/*
 * The last NETLAT_FLOWS_CLOSED_MAX sockets destroyed or evicted (their
 * final counters); an older one's counters are summed in @gone, and so
 * are those of the tables this one replaced with the histograms kept, so
 * that every socket's are somewhere.
 */
struct netlat_flows_closed {
	raw_spinlock_t lock;
	u64 closed;			/* sockets destroyed or evicted here */
	u64 closed_before;		/* ... in the tables it replaced */
	u64 carried;			/* sockets in @gone from those */
	struct netlat_flow_stats ring[NETLAT_FLOWS_CLOSED_MAX];
	struct netlat_flow_stats gone;	/* closed ones out of the ring */
};

/* @priv: a zeroed struct netlat_flows_closed (netlat_skt_type.priv_init). */
void netlat_flows_closed_init(void *priv);
/* Any context: a socket's final counters @e into @cl. */
void netlat_flows_close(struct netlat_flows_closed *cl,
			const struct netlat_flow_stats *e);
/*
 * Process context: @to's table replaced @from's, the histograms kept;
 * @live sums the counters of the @socks sockets @from still followed
 * (and its packets not followed): all of @from's go on summed in @to.
 */
void netlat_flows_carry(struct netlat_flows_closed *to,
			const struct netlat_flows_closed *from,
			struct netlat_flow_stats *live, u64 socks);

/* What one NETLAT_IOC_FLOWS call copies: entries, and the rest summed. */
struct netlat_flows_snap;

/* One live socket's counters @e into @s. */
void netlat_flows_snap_one(struct netlat_flows_snap *s,
			   const struct netlat_flow_stats *e);

/*
 * NETLAT_IOC_FLOWS. @live, called under rcu_read_lock_sched(), puts the
 * counters of each socket its table follows into @s (snap_one) and
 * returns that table's ring of closed sockets, NULL if there is no table.
 */
long netlat_flows_ioc(void __user *uarg,
		      struct netlat_flows_closed *
		      (*live)(struct netlat_flows_snap *s));

#endif /* _NETLAT_FLOWS_H */
