// SPDX-License-Identifier: GPL-2.0
/*
 * The packet table (see track.h), on the socket table core (sktbl.h):
 * each socket sending has an entry, each packet in flight a slot, in
 * sequence order because TCP sends new data in order; both from the
 * budget the table was made with. A socket that finds no entry, or a
 * packet that finds no slot (NETLAT_TRACK_PKTS in flight, or the pool
 * empty), is not followed and is counted (flows_full, untracked, no_mem);
 * the data path never waits for the table. An idle socket's entry may go
 * to a new socket (evicted): its counters then end as a closed socket's.
 * Entries free when their socket is destroyed (tcp:tcp_destroy_sock),
 * when the level or budget changes, when a group of the table goes on
 * again and at unload: the table's lifetime is the core's (struct
 * netlat_skt_home), the receive table's too.
 *
 * Concurrency: a packet's begin (net_dev_queue in __tcp_transmit_skb()'s
 * call chain), ACK and retransmit of one socket are serialised by the
 * socket lock, but a neighbour's queue, the driver and the virtqueue
 * stamp its segments from any CPU; the entry's spinlock, taken with
 * interrupts off for a few loads and stores, orders them. The table
 * itself is freed only once every handler that might be inside it is
 * gone (synchronize_rcu: handlers run non-preemptible, and read the table
 * once).
 */
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/spinlock.h>
#include <linux/kprobes.h>
#include <linux/timekeeping.h>
#include <net/sock.h>
#include <net/tcp.h>
#include "track.h"
#include "hist.h"
#include "keys.h"
#include "record.h"
#include "filter.h"
#include "probes.h"
#include "pkt.h"
#include "flows.h"
#include "sktbl.h"
#include "compat.h"

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
 * An entry's filter verdict: netlat_filter_gen in the upper half (the
 * verdict is stale once the rules change), these bits in the lower.
 */
#define NETLAT_TV_OUT		NETLAT_SKT_OUT	/* not followed */
#define NETLAT_TV_REC		(1U << 1)	/* its packet records are kept */
#define NETLAT_TV_PER_HIT	(1U << 2)	/* records asked at each end */

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
 * times. A packet that sampling leaves out (netlat_config.sample) joins
 * the newest entry's range the same way (@unsampled of @merged); with
 * none to join, it takes a slot of its own as an empty packet at its
 * start, ended already (NETLAT_TRACK_FIRST_DONE), with itself as range.
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
	u16 retrans_fail;
	u16 merged;
	u16 merged_segs;
	u16 unsampled;		/* of @merged, left out by sampling */
	u16 vq_queue;
	u16 vq_free;
	u16 vq_size;
	u8 flags;
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
	struct netlat_tcp_flow id;
	struct netlat_flow_counts c;
	struct {
		u32 seq;		/* write_seq at the sendmsg's start */
		u64 ns;
	} send[NETLAT_TRACK_SENDS];
};

u32 netlat_track_level;
static u64 netlat_track_slow;
/* log2 of netlat_config.sample x NETLAT_SAMPLE_UNIT; 0: every packet */
u32 netlat_track_sample_shift;

/* What a socket's entry knows of its packets: forgotten with them. */
static notrace void netlat_track_forget(struct netlat_track_flow *f)
{
	f->send_next = 0;
	WRITE_ONCE(f->driver_range, 0);
	WRITE_ONCE(f->joined, 0);
	f->join_all_until = jiffies;
	f->tx_next = 0;
}
NOKPROBE_SYMBOL(netlat_track_forget);

static __always_inline struct netlat_track_flow *
netlat_track_flow_of(struct netlat_skt_ent *e)
{
	return e ? container_of(e, struct netlat_track_flow, e) : NULL;
}

/*
 * What the rules of generation @gen say of @sk, once per socket: from its
 * addresses, ports and namespace (its cookie only for a rule that reads
 * it), as the packet records' ack group and the table's groups.
 */
static notrace u64 netlat_track_verdict(const struct sock *sk, u32 gen)
{
	struct netlat_tcp_flow flow;
	struct netlat_filter_in in = {
		.flow = &flow, .sk = sk, .net = sock_net(sk),
		.lazy_cookie = true,
	};
	bool per_hit = false;
	u64 kept;
	u32 v;

	if (!netlat_filter_on(NETLAT_TRACK_GROUPS))
		return (u64)gen << 32 | NETLAT_TV_REC;
	memset(&flow, 0, sizeof(flow));
	netlat_sk_addrs(&flow, sk);
	kept = netlat_filter_kept(NETLAT_TRACK_GROUPS, &in, &per_hit);
	if (per_hit)		/* followed; its records as each hit has it */
		v = NETLAT_TV_PER_HIT;
	else if (!kept)
		v = NETLAT_TV_OUT;
	else
		v = kept & NETLAT_PROBE_TCP_ACK ? NETLAT_TV_REC : 0;
	return (u64)gen << 32 | v;
}
NOKPROBE_SYMBOL(netlat_track_verdict);

/*
 * The entry of @sk under a new verdict @v (entry locked): a socket followed
 * gets its identity and zeroed counters if it had none; one not followed
 * has its counters dropped (the rules changed under it) and costs its
 * hooks a look at the entry from now on.
 */
static notrace void netlat_track_refresh(struct netlat_skt_ent *e,
					 const struct sock *sk, u64 v,
					 bool claimed)
{
	struct netlat_track_flow *f = netlat_track_flow_of(e);

	if (claimed) {
		f->ident = false;
		netlat_track_forget(f);
	}
	if (!(v & NETLAT_TV_OUT) && !f->ident) {
		/* the identity's cookie is a SipHash: only for one followed */
		memset(&f->id, 0, sizeof(f->id));
		netlat_sk_flow(&f->id, sk);
		netlat_flow_counts_start(&f->c);
		WRITE_ONCE(f->driver_range, 0);
		f->ident = true;
	} else if (v & NETLAT_TV_OUT) {
		f->ident = false;
		f->send_next = 0;
	}
}
NOKPROBE_SYMBOL(netlat_track_refresh);

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

/* An idle socket's entry goes to another: its counters end here. */
static notrace void netlat_track_evict(struct netlat_skt *t,
				       struct netlat_skt_ent *e)
{
	struct netlat_track_flow *f = netlat_track_flow_of(e);
	struct netlat_flow_stats s;

	if (!f->ident)
		return;
	netlat_track_stats(f, &s);
	s.end_ns = ktime_get_mono_fast_ns();
	s.flags = NETLAT_FLOW_EVICTED;
	netlat_track_closed(t, &s);
	f->ident = false;
}
NOKPROBE_SYMBOL(netlat_track_evict);

/*
 * A sendmsg began under a second ago and none of its bytes has begun a
 * packet yet: the entry is no idle one, taken now its packet would lose
 * its start. (A sendmsg that queued nothing stops counting after the
 * second.) Read without the lock too: a hint there, exact under it.
 */
static notrace bool netlat_track_busy(const struct netlat_skt_ent *e)
{
	const struct netlat_track_flow *f =
		container_of(e, struct netlat_track_flow, e);
	u32 n = READ_ONCE(f->send_next), i;
	u64 tx = READ_ONCE(f->tx_next);

	if (!n)
		return false;
	i = (n - 1) & (NETLAT_TRACK_SENDS - 1);
	if (tx && before(READ_ONCE(f->send[i].seq), (u32)tx))
		return false;
	return ktime_get_mono_fast_ns() - READ_ONCE(f->send[i].ns) <
	       NSEC_PER_SEC;
}
NOKPROBE_SYMBOL(netlat_track_busy);

static u64 netlat_track_left(struct netlat_skt *t, struct netlat_skt_ent *e);
static void netlat_track_carry(struct netlat_skt *old, struct netlat_skt *t,
			       u64 left);

static const struct netlat_skt_type netlat_track_type = {
	.ent_size = sizeof(struct netlat_track_flow),
	.max_pkts = NETLAT_TRACK_PKTS,
	.verdict = netlat_track_verdict,
	.refresh = netlat_track_refresh,
	.busy = netlat_track_busy,
	.evict = netlat_track_evict,
	.left = netlat_track_left,
	.carry = netlat_track_carry,
	.priv_size = sizeof(struct netlat_flows_closed),
	.priv_init = netlat_flows_closed_init,
	.no_entry = NETLAT_HC_FLOWS_FULL,
	.evicted = NETLAT_HC_EVICTED,
	.untracked = NETLAT_HC_UNTRACKED,
};

/* The send table's share of the budget: 5/8. */
NETLAT_SKT_HOME(netlat_track_home, &netlat_track_type, 5);

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

notrace void netlat_track_sendmsg_at(struct netlat_skt *t,
				     struct netlat_skt_ent *e,
				     const struct sock *sk, u32 seq)
{
	struct netlat_track_flow *f = netlat_track_flow_of(e);
	unsigned long flags;
	unsigned int i;

	if (!netlat_track_lock(f, sk, &flags))
		return;
	i = f->send_next++ & (NETLAT_TRACK_SENDS - 1);
	f->send[i].seq = seq;
	f->send[i].ns = ktime_get_mono_fast_ns();
	netlat_track_unlock(f, flags);
}
NOKPROBE_SYMBOL(netlat_track_sendmsg_at);

/* The start of the newest sendmsg that began at or before @seq. */
static notrace u64 netlat_track_send_ns(const struct netlat_track_flow *f,
					u32 seq)
{
	unsigned int n, i;

	for (n = 0; n < NETLAT_TRACK_SENDS && n < f->send_next; n++) {
		i = (f->send_next - 1 - n) & (NETLAT_TRACK_SENDS - 1);
		if (!after(f->send[i].seq, seq))
			return f->send[i].ns;
	}
	return 0;
}
NOKPROBE_SYMBOL(netlat_track_send_ns);

/*
 * No slot for a new packet: the newest entry takes the packet [@seq,
 * @end_seq) into its range if it follows on, and its counts fit.
 */
static notrace bool netlat_track_merge(struct netlat_skt *t,
				       struct netlat_track_flow *f, u32 seq,
				       u32 end_seq, u16 segs)
{
	struct netlat_track_pkt *q;
	struct netlat_skt_cur c;

	if (!netlat_skt_last(&f->e, &c))
		return false;
	q = netlat_skt_slot(t, &c);
	if (q->range_end != seq || q->merged == U16_MAX ||
	    q->merged_segs > U16_MAX - segs)
		return false;
	q->range_end = end_seq;
	q->merged++;
	q->merged_segs += segs;
	q->flags |= NETLAT_PKT_MERGED;
	return true;
}
NOKPROBE_SYMBOL(netlat_track_merge);

/*
 * Whether sampling joins the packet [@seq, @end_seq) of @f (entry
 * locked): its range is sampled, or the socket was slow lately.
 */
static __always_inline bool netlat_track_sampled(const struct netlat_track_flow *f,
						 u32 seq, u32 end_seq)
{
	return netlat_track_sampled_range(seq, end_seq) ||
	       time_before(jiffies, f->join_all_until);
}

/*
 * A packet that sampling leaves out (entry locked): counted as part of
 * the newest entry's range, or of an empty entry of its own at its
 * start. False if neither can be had.
 */
static notrace bool netlat_track_skip(struct netlat_skt *t,
				      struct netlat_track_flow *f, u32 seq,
				      u32 end_seq, u16 segs,
				      enum netlat_skt_full *why)
{
	struct netlat_track_pkt *p;
	struct netlat_skt_cur c;

	if (netlat_track_merge(t, f, seq, end_seq, segs)) {
		/* unsampled <= merged, which the merge kept within a u16 */
		netlat_skt_last(&f->e, &c);
		p = netlat_skt_slot(t, &c);
		p->unsampled++;
		return true;
	}
	p = netlat_skt_push(t, &f->e, why);
	if (!p)
		return false;
	p->seq = seq;
	p->end_seq = seq;
	p->range_end = end_seq;
	p->merged = 1;
	p->merged_segs = segs;
	p->unsampled = 1;
	p->flags = NETLAT_PKT_MERGED | NETLAT_TRACK_FIRST_DONE;
	return true;
}
NOKPROBE_SYMBOL(netlat_track_skip);

/* A packet of a socket without an entry (no counters of its own). */
static notrace void netlat_track_untracked(void)
{
	netlat_hist_count(NETLAT_HC_UNTRACKED, 1);
	netlat_hist_count(NETLAT_HC_UNTRACKED_NO_ENTRY, 1);
}
NOKPROBE_SYMBOL(netlat_track_untracked);

/*
 * Whether [@seq, ...) of @f's socket is sent for the first time (entry
 * locked): at or after the data that began the last packet, or, before
 * any, at snd_nxt (@at_nxt, read in __tcp_transmit_skb()'s call chain,
 * before tcp_event_new_data_sent() moves it on).
 */
static __always_inline bool netlat_track_first_sent(const struct netlat_track_flow *f,
						    u32 seq, bool at_nxt)
{
	return f->tx_next ? !before(seq, (u32)f->tx_next) : at_nxt;
}

/*
 * Data of @f's socket sent for the first time (entry locked, unlocked on
 * return): a packet begins, at @xmit_ns; its qdisc point is now if
 * @qdisc.
 */
static notrace void netlat_track_begin(struct netlat_skt *t,
				       struct netlat_track_flow *f,
				       const struct netlat_tcp_seg *seg,
				       u32 end_seq, u16 segs, u64 xmit_ns,
				       bool qdisc, unsigned long flags)
{
	struct netlat_track_pkt *p;
	enum netlat_skt_full why;
	bool kept, no_mem;
	u64 now;

	f->tx_next = 1ULL << 32 | end_seq;
	if (!netlat_track_sampled(f, seg->seq, end_seq)) {
		kept = netlat_track_skip(t, f, seg->seq, end_seq, segs, &why);
		no_mem = !kept && why == NETLAT_SKT_FULL_MEM;
		goto not_joined;
	}
	WRITE_ONCE(f->joined, 1ULL << 32 | seg->seq);
	p = netlat_skt_push(t, &f->e, &why);
	if (!p) {
		/* a range takes it in, but the pool ran dry all the same */
		kept = netlat_track_merge(t, f, seg->seq, end_seq, segs);
		no_mem = why == NETLAT_SKT_FULL_MEM;
		goto not_joined;
	}
	p->seq = seg->seq;
	p->end_seq = end_seq;
	p->range_end = end_seq;
	p->xmit_ns = xmit_ns;
	p->segs = segs;
	/*
	 * A bare FIN was queued by close() or shutdown(), not by a sendmsg:
	 * the socket's last sendmsg may have started seconds before it (an
	 * idle pooled connection closing), which is no wait of this packet.
	 */
	p->sendmsg_ns = !seg->payload ? 0 : netlat_track_send_ns(f, seg->seq);
	if (p->sendmsg_ns)
		p->flags |= NETLAT_PKT_SENDMSG;
	if (qdisc) {
		now = ktime_get_mono_fast_ns();
		/* pacing may stamp the departure ahead: then no wait */
		p->qdisc_d = now > xmit_ns ? min_t(u64, now - xmit_ns, U32_MAX) : 0;
		p->flags |= NETLAT_PKT_QDISC;
	}
	netlat_track_unlock(f, flags);
	return;
not_joined:
	if (!kept)
		f->c.untracked++;
	netlat_track_unlock(f, flags);
	if (!kept)
		netlat_hist_count(NETLAT_HC_UNTRACKED, 1);
	if (no_mem)
		netlat_hist_count(NETLAT_HC_NO_MEM, 1);
}
NOKPROBE_SYMBOL(netlat_track_begin);

/*
 * The packet that starts at @seq, searched from the newest: qdisc and
 * driver see a packet right after its transmit, and its later segments
 * (software GSO) start elsewhere and stop the search at once.
 */
static notrace struct netlat_track_pkt *
netlat_track_starting(struct netlat_skt *t, struct netlat_track_flow *f,
		      u32 seq)
{
	struct netlat_skt_cur c;
	bool more;

	for (more = netlat_skt_last(&f->e, &c); more;
	     more = netlat_skt_prev(t, &f->e, &c)) {
		struct netlat_track_pkt *p = netlat_skt_slot(t, &c);

		/* not a sampled-out packet's empty entry */
		if (p->seq == seq)
			return p->end_seq != seq ? p : NULL;
		if (before(p->seq, seq))
			break;
	}
	return NULL;
}
NOKPROBE_SYMBOL(netlat_track_starting);

/*
 * Stamp point @bit of the packet of @sk (entry @f) that starts at @seq,
 * once: now, as nanoseconds after its transmit, into the u32 at @off of
 * it. Returns true with the entry locked (*@flags) and the packet in *@pp.
 */
static notrace bool netlat_track_stamp(struct netlat_skt *t,
				       struct netlat_track_flow *f,
				       const struct sock *sk, u32 seq, u8 bit,
				       size_t off, struct netlat_track_pkt **pp,
				       unsigned long *flags)
{
	struct netlat_track_pkt *p;
	u64 now;

	if (!netlat_track_lock(f, sk, flags))
		return false;
	p = netlat_track_starting(t, f, seq);
	if (!p || (p->flags & bit))
		goto out;
	now = ktime_get_mono_fast_ns();
	/* another CPU's clock may read a hair behind: then the same time */
	now = now > p->xmit_ns ? now - p->xmit_ns : 0;
	if (now > U32_MAX)
		goto out;
	*(u32 *)((char *)p + off) = now;
	p->flags |= bit;
	*pp = p;
	return true;
out:
	netlat_track_unlock(f, *flags);
	return false;
}
NOKPROBE_SYMBOL(netlat_track_stamp);

/*
 * Whether @seg of @f's socket starts no packet, so that the entry's lock
 * is not taken for it: a SYN or a bare ACK (netlat_track_xmit() starts no
 * packet for those), or a later segment of a software-GSO packet the
 * driver met already (driver_range), or, while sampling, a packet sent
 * after the newest one joined (joined).
 */
static notrace bool netlat_track_no_start(const struct netlat_track_flow *f,
					  const struct netlat_tcp_seg *seg)
{
	u64 r;

	if ((seg->tcp_flags & TCPHDR_SYN) ||
	    (!seg->payload && !(seg->tcp_flags & TCPHDR_FIN)))
		return true;
	r = READ_ONCE(f->driver_range);
	if (after(seg->seq, (u32)(r >> 32)) && before(seg->seq, (u32)r))
		return true;
	if (!READ_ONCE(netlat_track_sample_shift))
		return false;
	r = READ_ONCE(f->joined);
	return !r || after(seg->seq, (u32)r);
}
NOKPROBE_SYMBOL(netlat_track_no_start);

/*
 * net_dev_queue of a segment of @sk, in __tcp_transmit_skb()'s call chain
 * (under the socket's lock) but for a neighbour's queue: with @start, data
 * sent for the first time begins a packet, at the time TCP stamped the skb
 * (its departure time, skb->tstamp: max(tcp_wstamp_ns, tcp_clock_cache));
 * with @qdisc, the qdisc point of a packet that starts at the segment.
 * One hook, one entry lock, for both.
 */
notrace void netlat_track_queue_at(struct netlat_skt *t,
				   struct netlat_skt_ent *e,
				   const struct sock *sk,
				   const struct sk_buff *skb,
				   bool start, bool qdisc)
{
	struct netlat_track_flow *f = netlat_track_flow_of(e);
	struct netlat_tcp_seg seg __uninitialized;
	struct netlat_track_pkt *p;
	unsigned long flags;
	bool at_nxt, out = false;
	u32 end_seq;
	u64 xmit_ns;

	if (!netlat_parse_tcp_out(skb, &seg))
		return;
	/*
	 * A connecting socket's SYN: not a packet of data, but the socket's
	 * counters start here, so that they hold its SYN retransmits too.
	 * A bare ACK begins nothing.
	 */
	if (seg.tcp_flags & TCPHDR_SYN) {
		if (start && !(seg.tcp_flags & TCPHDR_ACK) && !f)
			netlat_track_find(t, sk, true);
		return;
	}
	if (!seg.payload && !(seg.tcp_flags & TCPHDR_FIN))
		return;
	at_nxt = start && seg.seq == READ_ONCE(tcp_sk(sk)->snd_nxt);
	if (!f)
		f = netlat_track_find_out(t, sk, at_nxt, &out);
	if (!f) {
		/* kept out by the filters: its record counts as filtered */
		if (at_nxt && out)
			netlat_filter_kept_out();
		else if (at_nxt)
			netlat_track_untracked();
		return;
	}
	if (start) {
		if (!netlat_track_lock(f, sk, &flags)) {
			if (at_nxt)
				netlat_track_untracked();
			return;
		}
		if (netlat_track_first_sent(f, seg.seq, at_nxt)) {
			end_seq = seg.seq + seg.payload +
				  !!(seg.tcp_flags & TCPHDR_FIN);
			xmit_ns = netlat_skb_tx_stamp(skb) ?:
				  netlat_tcp_xmit_clock(sk);
			netlat_track_begin(t, f, &seg, end_seq,
					   skb_is_gso(skb) ?
					   skb_shinfo(skb)->gso_segs : 1,
					   xmit_ns, qdisc, flags);
			return;
		}
		netlat_track_unlock(f, flags);
	}
	/* sent again: a retransmit's qdisc point, if its packet has none */
	if (!qdisc || netlat_track_no_start(f, &seg) ||
	    !netlat_track_stamp(t, f, sk, seg.seq, NETLAT_PKT_QDISC,
				offsetof(struct netlat_track_pkt, qdisc_d),
				&p, &flags))
		return;
	netlat_track_unlock(f, flags);
}
NOKPROBE_SYMBOL(netlat_track_queue_at);

/* Whether a segment with these headers sends @sk's new data (snd_nxt on). */
static __always_inline bool netlat_track_new_data(const struct sock *sk, u32 seq,
						  u8 tcp_flags, u32 payload)
{
	return !(tcp_flags & TCPHDR_SYN) && (payload || (tcp_flags & TCPHDR_FIN)) &&
	       seq == READ_ONCE(tcp_sk(sk)->snd_nxt);
}

static noinline notrace bool netlat_track_new_data_slow(const struct sock *sk,
							const struct sk_buff *skb)
{
	struct netlat_tcp_seg seg __uninitialized;

	return netlat_parse_tcp(skb, &seg) &&
	       netlat_track_new_data(sk, seg.seq, seg.tcp_flags, seg.payload);
}
NOKPROBE_SYMBOL(netlat_track_new_data_slow);

/*
 * A segment of a socket the filters keep out: new data (what would have
 * begun a packet) counts as a packet record filtered. Its header is read
 * in place, with no frame for a parsed copy.
 */
notrace void netlat_track_queue_out(const struct sock *sk,
				    const struct sk_buff *skb)
{
	const struct tcphdr *th;
	bool new_data;
	int thoff;

	th = netlat_tcp_out_th(skb, &thoff);
	if (likely(th))
		new_data = netlat_track_new_data(sk, ntohl(th->seq),
						 tcp_flag_byte(th),
						 netlat_th_payload(skb, th, thoff));
	else
		new_data = netlat_track_new_data_slow(sk, skb);
	if (new_data)
		netlat_filter_kept_out();
}
NOKPROBE_SYMBOL(netlat_track_queue_out);

/*
 * net_dev_start_xmit of a segment of @sk: its headers are parsed only if
 * the table follows @sk.
 */
notrace void netlat_track_driver_at(struct netlat_skt *t,
				    struct netlat_skt_ent *e,
				    const struct sock *sk,
				    const struct sk_buff *skb)
{
	struct netlat_track_flow *f = netlat_track_flow_of(e);
	struct netlat_track_pkt *p;
	struct netlat_tcp_seg seg __uninitialized;
	unsigned long flags;

	if (!netlat_parse_tcp_out(skb, &seg))
		return;
	if (netlat_track_no_start(f, &seg))
		return;
	if (!netlat_track_stamp(t, f, sk, seg.seq, NETLAT_PKT_DRIVER,
				offsetof(struct netlat_track_pkt, driver_d),
				&p, &flags))
		return;
	WRITE_ONCE(f->driver_range, (u64)p->seq << 32 | p->range_end);
	/*
	 * No qdisc point: the device has no qdisc that queues (the TCP
	 * family stamps none there), so the skb went to its driver at once:
	 * the driver's time is the qdisc's too.
	 */
	if (!(p->flags & NETLAT_PKT_QDISC)) {
		p->qdisc_d = p->driver_d;
		p->flags |= NETLAT_PKT_QDISC;
	}
	netlat_track_unlock(f, flags);
}
NOKPROBE_SYMBOL(netlat_track_driver_at);

notrace bool netlat_track_starts(const struct sock *sk,
				const struct sk_buff *skb, u32 *seq)
{
	struct netlat_track_flow *f = netlat_track_find(netlat_track_skt(), sk,
							 false);
	struct netlat_tcp_seg seg __uninitialized;

	if (!f || !netlat_parse_tcp_out(skb, &seg) ||
	    netlat_track_no_start(f, &seg))
		return false;
	*seq = seg.seq;
	return true;
}
NOKPROBE_SYMBOL(netlat_track_starts);

/* A virtqueue took the packet's first segment (the device families). */
notrace void netlat_track_vq(const struct sock *sk, u32 seq,
			     const struct netlat_track_vq_state *st)
{
	struct netlat_skt *t = netlat_track_skt();
	struct netlat_track_flow *f = netlat_track_find(t, sk, false);
	struct netlat_track_pkt *p;
	unsigned long flags;

	if (!f || !netlat_track_stamp(t, f, sk, seq, NETLAT_PKT_VQ,
				      offsetof(struct netlat_track_pkt, vq_d),
				      &p, &flags))
		return;
	p->vq_queue = st->queue;
	p->vq_free = st->num_free;
	p->vq_size = st->size;
	netlat_track_unlock(f, flags);
}
NOKPROBE_SYMBOL(netlat_track_vq);

/* A later point of @p as a time, 0 if not seen. */
static __always_inline u64 netlat_track_at(const struct netlat_track_pkt *p, u8 bit,
					   u32 d)
{
	return p->flags & bit ? p->xmit_ns + d : 0;
}

/*
 * What a packet's record needs of its entry, copied under its lock:
 * the socket's flow (its cookie computed once, at the claim) and verdict.
 */
struct netlat_track_who {
	struct netlat_tcp_flow id;
	u64 verdict;
	u32 key;
};

static __always_inline void netlat_track_who(const struct netlat_track_flow *f,
					     struct netlat_track_who *who)
{
	who->id = f->id;
	who->verdict = f->e.verdict;
	who->key = f->e.key;
}

/* A packet's life ended at @end_ns: histograms, counters, its record. */
static notrace void netlat_track_end(const struct sock *sk,
				     const struct netlat_track_who *who,
				     const struct netlat_track_pkt *p,
				     u64 end_ns)
{
	u64 qdisc_ns = netlat_track_at(p, NETLAT_PKT_QDISC, p->qdisc_d);
	u64 driver_ns = netlat_track_at(p, NETLAT_PKT_DRIVER, p->driver_d);
	u64 vq_ns = netlat_track_at(p, NETLAT_PKT_VQ, p->vq_d);
	struct netlat_rec_tcp_pkt *r;
	struct netlat_writer w __uninitialized;

	if (p->flags & NETLAT_PKT_ACKED) {
		struct netlat_hist_cpu __percpu *key = netlat_keys_set(who->key, 1);

		netlat_hist_span_key(key, NETLAT_STAGE_SENDMSG_XMIT,
				     p->sendmsg_ns, p->xmit_ns);
		netlat_hist_span_key(key, NETLAT_STAGE_XMIT_QDISC, p->xmit_ns,
				     qdisc_ns);
		netlat_hist_span_key(key, NETLAT_STAGE_QDISC_DRIVER, qdisc_ns,
				     driver_ns);
		netlat_hist_span_key(key, NETLAT_STAGE_DRIVER_ACK, driver_ns,
				     end_ns);
		netlat_hist_span_key(key, NETLAT_STAGE_XMIT_ACK, p->xmit_ns,
				     end_ns);
		netlat_hist_span_key(key, NETLAT_STAGE_SENDMSG_ACK, p->sendmsg_ns,
				     end_ns);
		netlat_hist_span_key(key, NETLAT_STAGE_DRIVER_VQ, driver_ns,
				     vq_ns);
		netlat_hist_count_key(key, NETLAT_HC_PACKETS, 1);
		netlat_hist_count_key(key, NETLAT_HC_BYTES, p->end_seq - p->seq);
		netlat_hist_count_key(key, NETLAT_HC_SEGS, p->segs);
		/* only the slow ones leave a record */
		if (end_ns <= p->xmit_ns ||
		    end_ns - p->xmit_ns < READ_ONCE(netlat_track_slow))
			return;
	}
	if (!netlat_group_on(NETLAT_PROBE_TCP_ACK))
		return;
	/* the socket's verdict, unless a rule reads the hit's task */
	if (who->verdict & NETLAT_TV_PER_HIT) {
		struct netlat_filter_in in = {
			.flow = &who->id, .sk = sk, .net = sock_net(sk),
		};

		if (netlat_filter_on(NETLAT_PROBE_TCP_ACK) &&
		    !netlat_filter_keep(NETLAT_PROBE_TCP_ACK, &in))
			return;
	} else if (!(who->verdict & NETLAT_TV_REC)) {
		netlat_filter_kept_out();
		return;
	}
	r = netlat_reserve_zeroed_at(&w, NETLAT_REC_TCP_PKT, sizeof(*r), end_ns);
	if (!r)
		return;
	r->flow = who->id;
	r->seq = p->seq;
	r->end_seq = p->end_seq;
	r->sendmsg_ns = p->sendmsg_ns;
	r->xmit_ns = p->xmit_ns;
	r->qdisc_ns = qdisc_ns;
	r->driver_ns = driver_ns;
	r->segs = p->segs;
	r->retrans = p->retrans;
	r->retrans_fail = p->retrans_fail;
	r->end_ns = end_ns;
	r->flags = p->flags & ~NETLAT_TRACK_FIRST_DONE;
	r->vq_ns = vq_ns;
	r->vq_queue = p->vq_queue;
	r->vq_free = p->vq_free;
	r->vq_size = p->vq_size;
	r->merged = p->merged;
	r->range_end = p->range_end;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_track_end);

/* A packet of @f ended by an ACK: its socket's counters (entry locked). */
static __always_inline void netlat_track_count(struct netlat_track_flow *f,
					       const struct netlat_track_pkt *p)
{
	f->c.packets++;
	f->c.bytes += p->end_seq - p->seq;
	f->c.segs += p->segs;
}

/*
 * A packet of @f ended by an ACK at @now (entry locked): if it was slow,
 * sampling joins every packet of its socket for a second.
 */
static __always_inline void netlat_track_slow_join(struct netlat_track_flow *f,
						   const struct netlat_track_pkt *p,
						   u64 now)
{
	u64 slow = READ_ONCE(netlat_track_slow);

	if (slow && READ_ONCE(netlat_track_sample_shift) &&
	    now > p->xmit_ns && now - p->xmit_ns >= slow)
		f->join_all_until = jiffies + HZ;
}

/* The range after a range entry's own packet is ACKed (entry locked). */
static notrace void netlat_track_range_done(struct netlat_track_flow *f,
					    const struct netlat_track_pkt *p)
{
	struct netlat_hist_cpu __percpu *key = netlat_keys_set(f->e.key, p->merged);
	u32 bytes = p->range_end - p->end_seq;

	f->c.packets += p->merged;
	f->c.merged += p->merged - p->unsampled;
	f->c.bytes += bytes;
	f->c.segs += p->merged_segs;
	netlat_hist_count_key(key, NETLAT_HC_PACKETS, p->merged);
	if (p->merged > p->unsampled)
		netlat_hist_count(NETLAT_HC_MERGED, p->merged - p->unsampled);
	if (p->unsampled)
		netlat_hist_count(NETLAT_HC_UNSAMPLED, p->unsampled);
	netlat_hist_count_key(key, NETLAT_HC_BYTES, bytes);
	netlat_hist_count_key(key, NETLAT_HC_SEGS, p->merged_segs);
}
NOKPROBE_SYMBOL(netlat_track_range_done);

/*
 * An ACK arriving now moves snd_una to @una: every packet below it is
 * done. The clock (*@nowp, netlat_now()) is read only for a packet it
 * ends, not for the ranges sampling left out.
 */
notrace void netlat_track_ack_at(struct netlat_skt *t, struct netlat_skt_ent *e,
				 const struct sock *sk, u32 una, u64 *nowp)
{
	struct netlat_track_flow *f = netlat_track_flow_of(e);
	struct netlat_track_pkt done[4] __uninitialized;
	struct netlat_track_who who __uninitialized;
	struct netlat_skt_cur c;
	unsigned long flags;
	unsigned int n, i;

	do {
		if (!netlat_track_lock(f, sk, &flags))
			return;
		netlat_track_who(f, &who);
		for (n = 0; n < ARRAY_SIZE(done) && netlat_skt_first(&f->e, &c);) {
			struct netlat_track_pkt *p = netlat_skt_slot(t, &c);

			if (!(p->flags & NETLAT_TRACK_FIRST_DONE)) {
				if (after(p->end_seq, una))
					break;
				done[n] = *p;
				done[n++].flags |= NETLAT_PKT_ACKED;
				netlat_track_count(f, p);
				netlat_track_slow_join(f, p, netlat_now(nowp));
				p->flags |= NETLAT_TRACK_FIRST_DONE;
			}
			/* a range entry stays until its range is ACKed */
			if (after(p->range_end, una))
				break;
			if (p->merged)
				netlat_track_range_done(f, p);
			netlat_skt_pop(t, &f->e);
		}
		netlat_track_unlock(f, flags);
		/* records are written outside the entry's lock */
		for (i = 0; i < n; i++)
			netlat_track_end(sk, &who, &done[i], *nowp);
	} while (n == ARRAY_SIZE(done));
}
NOKPROBE_SYMBOL(netlat_track_ack_at);

static notrace unsigned int netlat_track_errno(int ret)
{
	switch (ret) {
	case -EAGAIN:
		return NETLAT_RTXERR_EAGAIN;
	case -EBUSY:
		return NETLAT_RTXERR_EBUSY;
	case -ENOMEM:
		return NETLAT_RTXERR_ENOMEM;
	case -ENOBUFS:
		return NETLAT_RTXERR_ENOBUFS;
	case -EHOSTUNREACH:
		return NETLAT_RTXERR_EHOSTUNREACH;
	case -EPERM:
		return NETLAT_RTXERR_EPERM;
	}
	return NETLAT_RTXERR_OTHER;
}
NOKPROBE_SYMBOL(netlat_track_errno);

/* A retransmission attempt of [@seq, ...) that the kernel counted @segs. */
notrace void netlat_track_retrans(const struct sock *sk, u32 seq, u8 kind,
				  u32 segs, int ret)
{
	struct netlat_skt *t = netlat_track_skt();
	struct netlat_track_flow *f;
	struct netlat_skt_cur c;
	unsigned long flags;
	bool out = false, more;

	/* the totals count every socket but one the filters keep out */
	f = netlat_track_find_out(t, sk, false, &out);
	if (out)
		return;
	if (segs)
		netlat_hist_count(NETLAT_HC_RETRANS_SEGS + (kind & 7), segs);
	if (ret)
		netlat_hist_count(NETLAT_HC_RETRANS_FAIL, 1);
	if (!f || !netlat_track_lock(f, sk, &flags)) {
		/* no counters of its own: NETLAT_IOC_FLOWS's rest sums these */
		if (segs)
			netlat_hist_count(NETLAT_HC_RETRANS_SEGS_NO_ENTRY +
					  (kind & 7), segs);
		if (ret)
			netlat_hist_count(NETLAT_HC_RETRANS_FAIL_NO_ENTRY +
					  netlat_track_errno(ret), 1);
		return;
	}
	f->c.retrans_segs[kind & 7] += segs;
	if (ret)
		f->c.retrans_fail[netlat_track_errno(ret)]++;
	for (more = netlat_skt_first(&f->e, &c); more;
	     more = netlat_skt_next(t, &f->e, &c)) {
		struct netlat_track_pkt *p = netlat_skt_slot(t, &c);

		if (before(seq, p->seq))
			break;
		if (before(seq, p->end_seq)) {
			p->retrans++;
			if (ret)
				p->retrans_fail++;
			break;
		}
		/* in a range: only the socket counts it */
		if (before(seq, p->range_end))
			break;
	}
	netlat_track_unlock(f, flags);
}
NOKPROBE_SYMBOL(netlat_track_retrans);

/*
 * The socket is destroyed: its packets end unacknowledged, its counters
 * go to the ring of closed sockets, its entry frees.
 */
notrace void netlat_track_close(const struct sock *sk)
{
	struct netlat_skt *t = netlat_track_skt();
	struct netlat_track_flow *f;
	struct netlat_track_who who;
	struct netlat_flow_stats e;
	struct netlat_track_pkt p;
	struct netlat_skt_cur c;
	unsigned long flags;
	u64 now = ktime_get_mono_fast_ns();
	bool ident;

	f = t ? netlat_track_flow_of(netlat_skt_lookup(t, sk)) : NULL;
	if (!f)
		return;
	for (;;) {
		if (!netlat_track_lock(f, sk, &flags))
			return;
		if (!netlat_skt_first(&f->e, &c)) {
			ident = f->ident;
			if (ident)
				netlat_track_stats(f, &e);
			f->ident = false;
			netlat_track_forget(f);
			/* a new socket may take the entry from now on */
			netlat_skt_release(t, &f->e);
			netlat_track_unlock(f, flags);
			if (ident) {
				e.end_ns = now;
				e.flags = NETLAT_FLOW_CLOSED;
				netlat_track_closed(t, &e);
			}
			return;
		}
		p = *(struct netlat_track_pkt *)netlat_skt_slot(t, &c);
		netlat_skt_pop(t, &f->e);
		netlat_track_who(f, &who);
		netlat_track_unlock(f, flags);
		/* followed, never acknowledged: counted, not lost */
		netlat_hist_count(NETLAT_HC_CLOSED, p.merged +
				  !(p.flags & NETLAT_TRACK_FIRST_DONE));
		if (p.flags & NETLAT_TRACK_FIRST_DONE)
			continue;
		p.flags |= NETLAT_PKT_CLOSED;
		netlat_track_end(sk, &who, &p, now);
	}
}
NOKPROBE_SYMBOL(netlat_track_close);

/* ---- process context ---- */

/*
 * A packet of a range entry counts with the packets merged into it; one
 * whose own end was seen counts only those (netlat_skt_type.left).
 */
static u64 netlat_track_left(struct netlat_skt *t, struct netlat_skt_ent *e)
{
	struct netlat_skt_cur c;
	bool more;
	u64 n = 0;

	for (more = netlat_skt_first(e, &c); more;
	     more = netlat_skt_next(t, e, &c)) {
		const struct netlat_track_pkt *p = netlat_skt_slot(t, &c);

		n += p->merged + !(p->flags & NETLAT_TRACK_FIRST_DONE);
	}
	return n;
}

/*
 * @t replaced @old, the histograms kept (a group went on again): the
 * counters of every socket @old knew, and its @left packets not followed,
 * go on summed in @t, so that the per-socket counters still add up.
 */
static void netlat_track_carry(struct netlat_skt *old, struct netlat_skt *t,
			       u64 left)
{
	struct netlat_flow_stats sum, one;
	u64 socks = 0;
	u32 i;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < netlat_skt_nr_ents(old); i++) {
		struct netlat_track_flow *f =
			netlat_track_flow_of(netlat_skt_ent(old, i));

		if (!f->e.sk || !f->ident)
			continue;
		netlat_track_stats(f, &one);
		netlat_flow_stats_add(&sum, &one);
		socks++;
	}
	sum.untracked += left;
	netlat_flows_carry(netlat_skt_priv(t), netlat_skt_priv(old), &sum,
			   socks);
}

/*
 * Under netlat_lock. The table's lifetime is the core's (struct
 * netlat_skt_home): it exists at the packet level. A change of level or
 * budget (@budget, netlat_config.table_bytes) empties it and zeroes the
 * histograms; packets in flight then are not followed (they end in no
 * record). Prepare allocates, commit cannot fail.
 */
int netlat_track_prepare(u32 level, u64 budget, struct netlat_skt_next *n)
{
	BUILD_BUG_ON(sizeof(struct netlat_track_pkt) > NETLAT_SKT_SLOT);
	lockdep_assert_held(&netlat_lock);
	return netlat_skt_home_prepare(&netlat_track_home,
				       level ? NETLAT_SKT_WANT : NETLAT_SKT_DROP,
				       level != READ_ONCE(netlat_track_level),
				       budget, n);
}

void netlat_track_commit(u32 level, u64 slow_ns, struct netlat_skt_next *n)
{
	bool change = level != READ_ONCE(netlat_track_level);

	lockdep_assert_held(&netlat_lock);
	WRITE_ONCE(netlat_track_slow, slow_ns);
	if (netlat_skt_home_commit(n, false) || change)
		netlat_keys_hist_reset();
	WRITE_ONCE(netlat_track_level, level);
}

/*
 * Under the registry mutex, before their hooks: groups @on go on. One
 * that feeds the table empties it, what is in flight counted as not
 * followed: while it was off, ends went unseen.
 */
void netlat_track_groups_on(u64 on)
{
	if (on & NETLAT_TRACK_GROUPS)
		netlat_skt_home_set(&netlat_track_home, NETLAT_SKT_AS_IS, true,
				    true);
}

u64 netlat_track_slow_ns(void)
{
	return READ_ONCE(netlat_track_slow);
}

void netlat_track_set_sample(u32 sample)
{
	lockdep_assert_held(&netlat_lock);
	BUILD_BUG_ON(!is_power_of_2(NETLAT_SAMPLE_UNIT));
	BUILD_BUG_ON(ilog2(NETLAT_SAMPLE_MAX * NETLAT_SAMPLE_UNIT) >= 32);
	WRITE_ONCE(netlat_track_sample_shift, sample > 1 ?
		   ilog2(sample * NETLAT_SAMPLE_UNIT) : 0);
}

u32 netlat_track_sample(void)
{
	u32 shift = READ_ONCE(netlat_track_sample_shift);

	return shift ? 1U << (shift - ilog2(NETLAT_SAMPLE_UNIT)) : 0;
}

/* Sockets followed now (a racy count, for reports). */
u64 netlat_track_flows(void)
{
	struct netlat_skt *t;
	u64 n = 0;
	u32 i;

	rcu_read_lock_sched();
	t = netlat_track_skt();
	for (i = 0; t && i < netlat_skt_nr_ents(t); i++) {
		struct netlat_track_flow *f =
			netlat_track_flow_of(netlat_skt_ent(t, i));

		n += READ_ONCE(f->e.sk) && READ_ONCE(f->ident);
	}
	rcu_read_unlock_sched();
	return n;
}

u64 netlat_track_mem_bytes(void)
{
	u32 flows, pkts;

	return netlat_track_capacity(&flows, &pkts);
}

/*
 * The table's sockets and packet slots (0 below the packet level); its
 * memory with the histograms'.
 */
u64 netlat_track_capacity(u32 *flows, u32 *pkts)
{
	u64 n = netlat_hist_mem_bytes();

	rcu_read_lock_sched();
	n += netlat_skt_capacity(netlat_track_skt(), flows, pkts);
	rcu_read_unlock_sched();
	return n;
}

/*
 * NETLAT_IOC_FLOWS's live sockets (under rcu_read_lock_sched()): each
 * one followed, and the table's ring of closed ones.
 */
static struct netlat_flows_closed *
netlat_track_snap(struct netlat_flows_snap *s)
{
	struct netlat_skt *t = netlat_track_skt();
	struct netlat_flow_stats one;
	unsigned long flags;
	u32 i;

	if (!t)
		return NULL;
	for (i = 0; i < netlat_skt_nr_ents(t); i++) {
		struct netlat_track_flow *f =
			netlat_track_flow_of(netlat_skt_ent(t, i));
		bool ident;

		if (!READ_ONCE(f->e.sk))
			continue;
		netlat_skt_lock_ent(&f->e, &flags);
		ident = f->e.sk && f->ident;
		if (ident)
			netlat_track_stats(f, &one);
		netlat_track_unlock(f, flags);
		if (ident)
			netlat_flows_snap_one(s, &one);
	}
	return netlat_skt_priv(t);
}

long netlat_track_ioc_flows(void __user *uarg)
{
	return netlat_flows_ioc(uarg, netlat_track_snap);
}

/* The TCP family is gone (its groups went off): no handler runs. */
void netlat_track_exit(void)
{
	WRITE_ONCE(netlat_track_level, 0);
	netlat_skt_home_set(&netlat_track_home, NETLAT_SKT_DROP, false, false);
}
