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
#include <net/tcp.h>
#include "sktbl.h"
#include "tracktbl.h"

struct sock;
struct sk_buff;

/*
 * The hooks' work, for a socket the table follows (entry @e of table @t;
 * queue: NULL if none yet). The hooks below find the entry inline first
 * (design.rst, "The packet tables and their budget"), so that a socket
 * not followed costs them no call.
 */
void netlat_track_sendmsg_at(struct netlat_skt *t, struct netlat_skt_ent *e,
			     const struct sock *sk, u32 seq);
/*
 * What net_dev_queue stamps of a packet that starts at its segment: the
 * device group is off (NONE); the device's qdisc may queue it (QDISC: the
 * qdisc point; the driver's comes at net_dev_start_xmit); or the device
 * has no qdisc and __dev_queue_xmit() calls its driver at once (DIRECT:
 * both points now, and net_dev_start_xmit, which would add only the
 * segment's checks and the driver's lock, is not looked at).
 */
enum netlat_track_dev {
	NETLAT_TRACK_DEV_NONE,
	NETLAT_TRACK_DEV_QDISC,
	NETLAT_TRACK_DEV_DIRECT,
};

void netlat_track_queue_at(struct netlat_skt *t, struct netlat_skt_ent *e,
			   const struct sock *sk, const struct sk_buff *skb,
			   bool start, enum netlat_track_dev dev);
void netlat_track_queue_out(const struct sock *sk, const struct sk_buff *skb);
void netlat_track_driver_at(struct netlat_skt *t, struct netlat_skt_ent *e,
			    const struct sock *sk, const struct sk_buff *skb);
void netlat_track_ack_at(struct netlat_skt *t, struct netlat_skt_ent *e,
			 const struct sock *sk, const struct sk_buff *skb,
			 u32 una, u64 *now);

/* sendmsg entry: the bytes from @seq on are queued from now. */
static __always_inline void netlat_track_sendmsg(const struct sock *sk,
						 u32 seq)
{
	struct netlat_skt *t = netlat_track_skt();
	struct netlat_skt_ent *e = t ? netlat_skt_find(t, sk, true, NULL) : NULL;

	if (e)
		netlat_track_sendmsg_at(t, e, sk, seq);
}

/*
 * net_dev_queue of a segment of @sk: with @start, data sent for the first
 * time begins a packet; the device's points of a packet that starts at
 * the segment as @dev says. A socket kept out only counts its new data as
 * packet records filtered.
 */
static __always_inline void netlat_track_queue(const struct sock *sk,
					       const struct sk_buff *skb,
					       bool start,
					       enum netlat_track_dev dev)
{
	struct netlat_skt *t = netlat_track_skt();
	struct netlat_skt_ent *e;
	bool out = false;

	if (unlikely(!t))
		return;
	/* one not in its hash's entry, or claiming one, goes the long way */
	e = netlat_skt_find_home(t, sk, &out);
	if (unlikely(out)) {
		if (start)
			netlat_track_queue_out(sk, skb);
		return;
	}
	netlat_track_queue_at(t, e, sk, skb, start, dev);
}

/* net_dev_start_xmit of a segment of @sk: the driver point. */
static __always_inline void netlat_track_driver(const struct sock *sk,
						const struct sk_buff *skb)
{
	struct netlat_skt *t = netlat_track_skt();
	struct netlat_skt_ent *e = t ? netlat_skt_find(t, sk, false, NULL) : NULL;

	if (e)
		netlat_track_driver_at(t, e, sk, skb);
}

/*
 * A segment reaches tcp_ack() of @sk (under its lock): if it ACKs data
 * sent and not yet ACKed, the packets below its ack_seq end. A segment
 * TCP then refuses (PAWS, a sequence outside the window) ends them all
 * the same: its ACK reached the host. *@now: the hook's clock
 * (netlat_now()), read only if a packet ends.
 */
static __always_inline void netlat_track_ack_seg(const struct sock *sk,
						 const struct sk_buff *skb,
						 u64 *now)
{
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 una = cb->ack_seq;
	struct netlat_skt *t;
	struct netlat_skt_ent *e;

	if (!(cb->tcp_flags & TCPHDR_ACK) || !after(una, READ_ONCE(tp->snd_una)) ||
	    after(una, READ_ONCE(tp->snd_nxt)))
		return;
	t = netlat_track_skt();
	e = t ? netlat_skt_find(t, sk, false, NULL) : NULL;
	if (e)
		netlat_track_ack_at(t, e, sk, skb, una, now);
}
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

#endif /* _NETLAT_TRACK_H */
