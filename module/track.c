// SPDX-License-Identifier: GPL-2.0
/*
 * The packet table's stages (see track.h; its entries' life and its
 * configuration: tracktbl.c), on the socket table core (sktbl.h):
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
#include "tracktbl.h"
#include "trackpkt.h"
#include "hist.h"
#include "keys.h"
#include "record.h"
#include "filter.h"
#include "probes.h"
#include "pkt.h"
#include "flows.h"
#include "sktbl.h"
#include "compat.h"

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
 * @packets of @f counted (entry locked): ended by an ACK, or, if sampling
 * left them out, sent; or the rest of a range, once ACKed.
 */
static __always_inline void netlat_track_count(struct netlat_track_flow *f,
					       u32 packets, u32 bytes, u32 segs)
{
	f->c.packets += packets;
	f->c.bytes += bytes;
	f->c.segs += segs;
}

/* The totals of @packets counted under one key set: they pair with f->c. */
static __always_inline void
netlat_track_count_key(struct netlat_hist_cpu __percpu *k, u64 packets,
		       u64 bytes, u64 segs)
{
	netlat_hist_count_key(k, NETLAT_HC_PACKETS, packets);
	netlat_hist_count_key(k, NETLAT_HC_BYTES, bytes);
	netlat_hist_count_key(k, NETLAT_HC_SEGS, segs);
}

/* The totals of a packet that sampling left out, with its socket's @key. */
static notrace void netlat_track_unsampled(u32 key, u32 bytes, u16 segs)
{
	netlat_track_count_key(netlat_keys_set(key, 1), 1, bytes, segs);
	netlat_hist_count(NETLAT_HC_UNSAMPLED, 1);
}
NOKPROBE_SYMBOL(netlat_track_unsampled);

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
 * Packet @p's driver point is stamped (entry locked): its later segments,
 * if software GSO splits it, start inside the range it leaves; with no
 * qdisc point (a device without a qdisc that queues: the TCP family
 * stamps none there), the skb went to its driver at once, so the
 * driver's time is the qdisc's too.
 */
static __always_inline void netlat_track_driver_done(struct netlat_track_flow *f,
						     struct netlat_track_pkt *p)
{
	WRITE_ONCE(f->driver_range, (u64)p->seq << 32 | p->range_end);
	if (!(p->flags & NETLAT_PKT_QDISC)) {
		p->qdisc_d = p->driver_d;
		p->flags |= NETLAT_PKT_QDISC;
	}
}

/*
 * Data of @f's socket sent for the first time (entry locked, unlocked on
 * return): a packet begins, at @xmit_ns; its device points are now as
 * @dev says.
 */
static notrace void netlat_track_begin(struct netlat_skt *t,
				       struct netlat_track_flow *f,
				       const struct sk_buff *skb,
				       const struct netlat_tcp_seg *seg,
				       u32 end_seq, u64 xmit_ns,
				       enum netlat_track_dev dev,
				       unsigned long flags)
{
	u16 segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	struct netlat_track_pkt *p;
	enum netlat_skt_full why;
	bool kept, no_mem;
	u32 key, tsecr;
	u64 now;

	f->tx_next = 1ULL << 32 | end_seq;
	if (!netlat_track_sampled(f, seg->seq, end_seq)) {
		/*
		 * Counted now, when TCPOrigDataSent counts it: it takes no
		 * slot and the ACK walk never meets it.
		 */
		key = f->e.key;
		netlat_track_count(f, 1, end_seq - seg->seq, segs);
		netlat_track_unlock(f, flags);
		netlat_track_unsampled(key, end_seq - seg->seq, segs);
		return;
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
	p->sent_ack_seq = seg->ack_seq;
	/* the slot is zeroed: no option, no TSval */
	netlat_skb_ts(skb, &p->tsval, &tsecr);
	/*
	 * A bare FIN was queued by close() or shutdown(), not by a sendmsg:
	 * the socket's last sendmsg may have started seconds before it (an
	 * idle pooled connection closing), which is no wait of this packet.
	 */
	p->sendmsg_ns = !seg->payload ? 0 : netlat_track_send_ns(f, seg->seq);
	if (p->sendmsg_ns)
		p->flags |= NETLAT_PKT_SENDMSG;
	if (dev != NETLAT_TRACK_DEV_NONE) {
		now = ktime_get_mono_fast_ns();
		/* pacing may stamp the departure ahead: then no wait */
		p->qdisc_d = now > xmit_ns ? min_t(u64, now - xmit_ns, U32_MAX) : 0;
		p->flags |= NETLAT_PKT_QDISC;
		if (dev == NETLAT_TRACK_DEV_DIRECT) {
			p->driver_d = p->qdisc_d;
			p->flags |= NETLAT_PKT_DRIVER;
			netlat_track_driver_done(f, p);
		}
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

		if (p->seq == seq)
			return p;
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

/* The driver point of @f's packet that starts at @seq, now. */
static __always_inline void netlat_track_driver_stamp(struct netlat_skt *t,
						      struct netlat_track_flow *f,
						      const struct sock *sk,
						      u32 seq)
{
	struct netlat_track_pkt *p;
	unsigned long flags;

	if (!netlat_track_stamp(t, f, sk, seq, NETLAT_PKT_DRIVER,
				offsetof(struct netlat_track_pkt, driver_d),
				&p, &flags))
		return;
	netlat_track_driver_done(f, p);
	netlat_track_unlock(f, flags);
}

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
 * the device points of a packet that starts at the segment as @dev says.
 * One hook, one entry lock, for all.
 */
notrace void netlat_track_queue_at(struct netlat_skt *t,
				   struct netlat_skt_ent *e,
				   const struct sock *sk,
				   const struct sk_buff *skb,
				   bool start, enum netlat_track_dev dev)
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
			netlat_track_begin(t, f, skb, &seg, end_seq, xmit_ns,
					   dev, flags);
			return;
		}
		netlat_track_unlock(f, flags);
	}
	/* sent again: a retransmit's device points, if its packet has none */
	if (dev == NETLAT_TRACK_DEV_NONE || netlat_track_no_start(f, &seg))
		return;
	if (dev == NETLAT_TRACK_DEV_QDISC) {
		if (netlat_track_stamp(t, f, sk, seg.seq, NETLAT_PKT_QDISC,
				       offsetof(struct netlat_track_pkt, qdisc_d),
				       &p, &flags))
			netlat_track_unlock(f, flags);
		return;
	}
	netlat_track_driver_stamp(t, f, sk, seg.seq);
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
	struct netlat_tcp_seg seg __uninitialized;

	if (!netlat_parse_tcp_out(skb, &seg))
		return;
	if (netlat_track_no_start(f, &seg))
		return;
	netlat_track_driver_stamp(t, f, sk, seg.seq);
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
	struct netlat_flow id;
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

/*
 * A packet's life ended at @end_ns, by the ACK @ack (its ack_seq @una) or
 * by its socket's end (@ack NULL): histograms, counters, its record.
 */
static notrace void netlat_track_end(const struct sock *sk,
				     const struct netlat_track_who *who,
				     const struct netlat_track_pkt *p,
				     u64 end_ns, const struct sk_buff *ack,
				     u32 una)
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
		netlat_track_count_key(key, 1, p->end_seq - p->seq, p->segs);
		/* only the slow ones leave a record */
		if (end_ns <= p->xmit_ns ||
		    end_ns - p->xmit_ns < READ_ONCE(netlat_track_slow))
			return;
	}
	if (!netlat_group_on(NETLAT_PROBE_TCP_ACK))
		return;
	/* the socket's verdict, unless a rule reads the hit's task */
	if (who->verdict & NETLAT_SKT_PER_HIT) {
		if (!netlat_filter_keep_sk(NETLAT_PROBE_TCP_ACK, sk, &who->id))
			return;
	} else if (!(who->verdict & NETLAT_SKT_REC)) {
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
	r->sent_ack_seq = p->sent_ack_seq;
	r->tsval = p->tsval;
	if (ack) {
		r->ack_rx_ns = netlat_skb_rx_mono(ack);
		r->ack_seq = una;
		netlat_skb_ts(ack, &r->ack_tsval, &r->ack_tsecr);
	}
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_track_end);

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

	netlat_track_count(f, p->merged, bytes, p->merged_segs);
	f->c.merged += p->merged;
	netlat_track_count_key(key, p->merged, bytes, p->merged_segs);
	netlat_hist_count(NETLAT_HC_MERGED, p->merged);
}
NOKPROBE_SYMBOL(netlat_track_range_done);

/* An ACK's run (netlat_skt_end_run()): its batch and what it needs. */
struct netlat_track_acked {
	struct netlat_track_pkt done[NETLAT_SKT_BATCH];
	struct netlat_track_who who;
	const struct sock *sk;
	const struct sk_buff *skb;
	u64 *nowp;
	u32 una;
};

/*
 * A packet of the ACK's run (entry locked): its own packet ends once at
 * or below snd_una; a range entry stays until its range is ACKed too.
 */
static __always_inline unsigned int
netlat_track_acked_end(struct netlat_skt_ent *e, void *slot, void *arg,
		       unsigned int n)
{
	struct netlat_track_flow *f = netlat_track_flow_of(e);
	struct netlat_track_acked *a = arg;
	struct netlat_track_pkt *p = slot;
	unsigned int v = 0;

	if (!(p->flags & NETLAT_TRACK_FIRST_DONE)) {
		if (after(p->end_seq, a->una))
			return NETLAT_SKT_STOP;
		netlat_track_count(f, 1, p->end_seq - p->seq, p->segs);
		netlat_track_slow_join(f, p, netlat_now(a->nowp));
		/* the record drops FIRST_DONE; the slot keeps ACKED unread */
		p->flags |= NETLAT_TRACK_FIRST_DONE | NETLAT_PKT_ACKED;
		v = NETLAT_SKT_TAKE;
	}
	if (after(p->range_end, a->una))
		return v | NETLAT_SKT_STOP;
	if (p->merged)
		netlat_track_range_done(f, p);
	return v | NETLAT_SKT_POP;
}

static __always_inline void netlat_track_acked_held(struct netlat_skt *t,
						    struct netlat_skt_ent *e,
						    void *arg, unsigned int n)
{
	struct netlat_track_acked *a = arg;

	netlat_track_who(netlat_track_flow_of(e), &a->who);
}

/* records are written outside the entry's lock */
static __always_inline void netlat_track_acked_account(void *arg,
						       unsigned int n)
{
	struct netlat_track_acked *a = arg;
	unsigned int i;

	for (i = 0; i < n; i++)
		netlat_track_end(a->sk, &a->who, &a->done[i], *a->nowp,
				 a->skb, a->una);
}

/*
 * An ACK @skb arriving now moves snd_una to @una: every packet below it
 * is done. The clock (*@nowp, netlat_now()) is read only for a packet it
 * ends, not for the ranges sampling left out.
 */
notrace void netlat_track_ack_at(struct netlat_skt *t, struct netlat_skt_ent *e,
				 const struct sock *sk,
				 const struct sk_buff *skb, u32 una, u64 *nowp)
{
	struct netlat_track_acked a __uninitialized;

	/*
	 * Packets begin in @sk's transmit path, ACKs end them in its receive
	 * path: the socket's lock (its owner, or the softirq's spinlock)
	 * orders the two, so an ACK of a socket with nothing in flight
	 * (sampling left its packets out, or all are ACKed) takes no entry
	 * lock.
	 */
	lockdep_assert(lockdep_sock_is_held(sk));
	if (netlat_skt_idle(e, sk))
		return;
	a.sk = sk;
	a.skb = skb;
	a.nowp = nowp;
	a.una = una;
	netlat_skt_end_run(t, e, sk, a.done, sizeof(a.done[0]),
			   netlat_track_acked_end, netlat_track_acked_held,
			   netlat_track_acked_account, &a);
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
			if (ret && p->retrans_fail != U8_MAX)
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
		netlat_track_end(sk, &who, &p, now, NULL, 0);
	}
}
NOKPROBE_SYMBOL(netlat_track_close);
