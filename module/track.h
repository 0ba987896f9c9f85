/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packet table of the packet level (NETLAT_LEVEL_PACKETS): the TCP
 * family hands it each stage of a sent packet, it keeps the stage times
 * per socket and sequence, and when an ACK ends a packet it feeds the
 * histograms and writes one NETLAT_REC_TCP_PKT. It also keeps each
 * socket's counters (flows.h). A layer below the families and
 * above the registry, filter and record API: the TCP family feeds it, and
 * a device family (virtio.c) stamps the packets' device points through
 * netlat_track_vq(); no family calls another.
 */
#ifndef _NETLAT_TRACK_H
#define _NETLAT_TRACK_H

#include <linux/types.h>
#include <linux/compiler.h>

struct netlat_skt_next;

struct sock;
struct sk_buff;

/* Nonzero at the packet level: the TCP handlers call the functions below. */
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

void netlat_track_sendmsg(const struct sock *sk, u32 seq);
void netlat_track_queue(const struct sock *sk, const struct sk_buff *skb,
			bool start, bool qdisc);
void netlat_track_driver(const struct sock *sk, const struct sk_buff *skb);
/* A segment on its way into tcp_ack(); *@now: netlat_now()'s clock. */
void netlat_track_ack_seg(const struct sock *sk, const struct sk_buff *skb,
			  u64 *now);
void netlat_track_retrans(const struct sock *sk, u32 seq, u8 kind,
			  u32 segs, int ret);
void netlat_track_close(const struct sock *sk);

/*
 * The packet stamp API of the device families: the queue state a
 * packet's first segment met in a device queue (virtio_net: a TX
 * virtqueue), stamped into the packet of @sk that starts at @seq.
 */
struct netlat_track_vq_state {
	u16 queue;		/* TX queue index */
	u16 num_free;		/* free descriptors when it was added */
	u16 size;		/* ring size */
};

void netlat_track_vq(const struct sock *sk, u32 seq,
		     const struct netlat_track_vq_state *st);

/*
 * Whether @skb, a segment of @sk, may start a packet the table follows
 * (not a later segment of a software-GSO packet the driver met already),
 * its sequence number in *@seq: for a device family to leave the others
 * before it looks at its queue (a hint: the stamp checks again).
 */
bool netlat_track_starts(const struct sock *sk, const struct sk_buff *skb,
			 u32 *seq);

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
/* Process context, no lock: racy figures for reports, and the ioctl. */
u64 netlat_track_flows(void);
u64 netlat_track_mem_bytes(void);
u64 netlat_track_capacity(u32 *flows, u32 *pkts);
long netlat_track_ioc_flows(void __user *uarg);
/* Unload, the TCP family gone: no handler runs. */
void netlat_track_exit(void);

#endif /* _NETLAT_TRACK_H */
