/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The send table's entries and packets: what a socket's entry and a
 * packet's slot hold, and the inline steps every user of an entry takes
 * (find, lock, forget, its counters). For the table's two units only:
 * its stages (track.c) and its life (tracktbl.c).
 */
#ifndef _NETLAT_TRACKPKT_H
#define _NETLAT_TRACKPKT_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/jiffies.h>
#include "probes.h"
#include "pkt.h"
#include "flows.h"
#include "sktbl.h"


#define NETLAT_TRACK_PKTS	4096	/* in flight per socket, then ranges */
#define NETLAT_TRACK_SENDS	8	/* power of two */

/* Internal: the first packet of a range entry has ended. */
#define NETLAT_TRACK_FIRST_DONE	(1U << 7)

/*
 * The groups whose hooks feed the table: a socket the filters keep out of
 * all of them is not followed (its entry only says so).
 */
#define NETLAT_TRACK_GROUPS	(NETLAT_PROBE_TCP_SENDMSG | \
				 NETLAT_PROBE_TCP_XMIT | NETLAT_PROBE_TCP_DEV | \
				 NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_RETRANS)

/*
 * One packet in flight, in a slot of the table's pool (64 bytes). The
 * later stage points are kept as nanoseconds after @xmit_ns (a point more
 * than 4.29 s later is left unseen), so that the virtqueue point and a
 * range (below) fit.
 *
 * A range entry: when the socket has NETLAT_TRACK_PKTS in flight or the
 * pool is empty, the newest entry takes each new packet in
 * (NETLAT_PKT_MERGED): [@end_seq, @range_end) are @merged more packets of
 * @merged_segs segments, followed only as a whole (counted, bytes and
 * segments exact, no stage times). Their own packet still gets its stage
 * times. A packet that sampling leaves out (netlat_config.sample) takes
 * no slot: it is counted when it is sent.
 */
struct netlat_track_pkt {
	u32 seq;
	u32 end_seq;
	u64 sendmsg_ns;
	u64 xmit_ns;
	u32 qdisc_d;
	u32 driver_d;
	u32 vq_d;
	u32 range_end;
	u16 segs;
	u16 retrans;
	u16 merged;
	u16 merged_segs;
	u16 vq_queue;
	u16 vq_free;
	u16 vq_size;
	u8 retrans_fail;		/* at most U8_MAX: the slot is full */
	u8 flags;
	u32 sent_ack_seq;
	u32 tsval;			/* 0: none (netlat_skb_ts()) */
};

/* A socket's entry; its packets are in the core's FIFO (struct netlat_skt_ent). */
struct netlat_track_flow {
	struct netlat_skt_ent e;
	bool ident;			/* @id and @c belong to e.sk */
	u32 send_next;
	/*
	 * The last packet stamped at the driver, its seq << 32 | range_end
	 * (0: none), read without the lock: a segment that starts inside it
	 * is a later segment of its software GSO, which nothing stamps.
	 */
	u64 driver_range;
	/*
	 * Sampling: 1 << 32 | seq of the newest packet joined (0: none), read
	 * without the lock by the device points, which leave the packets
	 * sent after it at once; and the jiffies until which every packet
	 * is joined (one of the socket's was slow).
	 */
	u64 joined;
	unsigned long join_all_until;
	/*
	 * 1 << 32 | the sequence after the newest data that began a packet
	 * (0: none yet): data at or after it is sent for the first time,
	 * data before it again (a retransmit, or a transmit the device
	 * refused and TCP tries anew).
	 */
	u64 tx_next;
	struct netlat_flow id;
	struct netlat_flow_counts c;
	struct {
		u32 seq;		/* write_seq at the sendmsg's start */
		u64 ns;
	} send[NETLAT_TRACK_SENDS];
};

/* What a socket's entry knows of its packets: forgotten with them. */
static __always_inline void netlat_track_forget(struct netlat_track_flow *f)
{
	f->send_next = 0;
	WRITE_ONCE(f->driver_range, 0);
	WRITE_ONCE(f->joined, 0);
	f->join_all_until = jiffies;
	f->tx_next = 0;
}

static __always_inline struct netlat_track_flow *
netlat_track_flow_of(struct netlat_skt_ent *e)
{
	return e ? container_of(e, struct netlat_track_flow, e) : NULL;
}


/* The counters of @f as the uapi has them (entry locked). */
static __always_inline void netlat_track_stats(const struct netlat_track_flow *f,
					       struct netlat_flow_stats *e)
{
	netlat_flow_stats_of(e, &f->id, &f->c);
}

/* A socket's final counters into the table's ring of closed ones. */
static __always_inline void netlat_track_closed(struct netlat_skt *t,
						const struct netlat_flow_stats *e)
{
	netlat_flows_close(netlat_skt_priv(t), e);
}

/*
 * The entry of @sk if table @t (may be NULL) follows it, claiming one if
 * @create; NULL if none. *@out, if asked: the filters keep @sk out.
 */
static __always_inline struct netlat_track_flow *
netlat_track_find_out(struct netlat_skt *t, const struct sock *sk,
		      bool create, bool *out)
{
	if (unlikely(!t))
		return NULL;
	return netlat_track_flow_of(netlat_skt_find(t, sk, create, out));
}

static __always_inline struct netlat_track_flow *
netlat_track_find(struct netlat_skt *t, const struct sock *sk, bool create)
{
	return netlat_track_find_out(t, sk, create, NULL);
}

static __always_inline bool netlat_track_lock(struct netlat_track_flow *f,
					      const struct sock *sk,
					      unsigned long *flags)
{
	return netlat_skt_lock(&f->e, sk, flags);
}

static __always_inline void netlat_track_unlock(struct netlat_track_flow *f,
						unsigned long flags)
{
	netlat_skt_unlock(&f->e, flags);
}

#endif /* _NETLAT_TRACKPKT_H */
