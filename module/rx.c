// SPDX-License-Identifier: GPL-2.0
/*
 * The receive-path probe family (NETLAT_PROBE_RX): a received TCP or UDP
 * packet from the receive core (with the skb's receive stamp) through its
 * transport and socket queues to the copy into the application, and the
 * drops on the way; NETLAT_PROBE_RX_SCHED: the reader's wakeup (rxwait.c,
 * whose handlers this family arms; at the packet level: points handed to
 * the receive table with the copy). See
 * uapi/linux/netlat.h for the records. Handlers run with preemption
 * disabled, take no lock of the kernel's, and check the group and the
 * filters before they read anything else. While NETLAT_PROBE_RX is on,
 * each packet is also handed to the receive table (rxtrack.c); at the
 * packet level that table writes the records, and the handlers here only
 * the drops.
 */
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/kprobes.h>
#include <linux/timekeeping.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/udp.h>
#include <trace/events/net.h>
#include <trace/events/sched.h>
#include <trace/events/skb.h>
#include <trace/events/sock.h>
#include <trace/events/tcp.h>
#include "record.h"
#include "probes.h"
#include "filter.h"
#include "pkt.h"
#include "compat.h"
#include "rx.h"
#include "rxtrack.h"
#include "rxwait.h"
#include "track.h"
#include "tracktbl.h"

/* Reserve an RX record about socket @sk unless the filters keep it out. */
static notrace void *netlat_rx_reserve(struct netlat_writer *w, u16 type,
				       u32 len, const struct sock *sk)
{
	struct netlat_flow flow;
	void *rec;

	if (!netlat_filter_sk_flow(NETLAT_PROBE_RX, sk, &flow))
		return NULL;
	rec = netlat_reserve_zeroed(w, type, len);
	if (rec)
		memcpy(rec + sizeof(struct netlat_rec_hdr), &flow, sizeof(flow));
	return rec;
}
NOKPROBE_SYMBOL(netlat_rx_reserve);

/* @skb's receive stamp (realtime) and the same instant on the records' clock. */
static notrace void netlat_rx_stamp(const struct sk_buff *skb, __u64 *real,
				    __u64 *mono)
{
	*real = netlat_skb_rx_stamp(skb);
	*mono = netlat_skb_rx_mono(skb);
}
NOKPROBE_SYMBOL(netlat_rx_stamp);

/* Parse @skb as TCP or UDP; its protocol, or 0. */
static notrace u8 netlat_rx_parse(const struct sk_buff *skb,
				  struct netlat_tcp_seg *seg)
{
	if (netlat_parse_tcp(skb, seg))
		return NETLAT_RX_TCP;
	if (netlat_parse_udp(skb, seg))
		return NETLAT_RX_UDP;
	return 0;
}
NOKPROBE_SYMBOL(netlat_rx_parse);

/* A parsed packet's flow past the filters (its namespace: @dev's). */
static notrace bool netlat_rx_keep_pkt(const struct netlat_tcp_seg *seg,
				       const struct net_device *dev)
{
	struct netlat_filter_in in = {
		.flow = &seg->flow, .net = dev ? dev_net(dev) : NULL,
	};

	return !netlat_filter_on(NETLAT_PROBE_RX) ||
	       netlat_filter_keep(NETLAT_PROBE_RX, &in);
}
NOKPROBE_SYMBOL(netlat_rx_keep_pkt);

/* ---- stamp: net:netif_receive_skb(skb) ---- */

static notrace void netlat_tp_netif(void *data, struct sk_buff *skb)
{
	struct netlat_rec_rx_netif *r;
	struct netlat_tcp_seg seg __uninitialized;
	struct netlat_writer w __uninitialized;
	u8 proto;

	/* armed at the events level only: this covers a change of level */
	if (!netlat_group_on(NETLAT_PROBE_RX) || netlat_rxtrack_packets())
		return;
	proto = netlat_rx_parse(skb, &seg);
	if (!proto || !netlat_rx_keep_pkt(&seg, skb->dev))
		return;
	r = netlat_reserve_zeroed(&w, NETLAT_REC_RX_NETIF, sizeof(*r));
	if (!r)
		return;
	r->flow = seg.flow;
	r->skb_id = netlat_skb_id(skb);
	netlat_rx_stamp(skb, &r->tstamp_ns, &r->tstamp_mono_ns);
	r->seq = seg.seq;
	r->len = seg.payload;
	r->ifindex = skb->dev ? skb->dev->ifindex : 0;
	r->proto = proto;
	r->tcp_flags = seg.tcp_flags;
	r->segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_tp_netif);

/* ---- TCP transport and queues ---- */

static __always_inline u32 netlat_tcp_payload(const struct sk_buff *skb)
{
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);

	return cb->end_seq - cb->seq - !!(cb->tcp_flags & TCPHDR_SYN) -
	       !!(cb->tcp_flags & TCPHDR_FIN);
}

/*
 * Where TCP queues a segment arriving now at a socket it processes at
 * once (not a backlog's, @where 0): at the packet level, one in order
 * (its first byte at or before rcv_nxt) goes to the receive queue in this
 * same softirq, and is taken as queued at its arrival: the level arms no
 * hook on tcp_queue_rcv(). One out of order has its own hook.
 */
static __always_inline u8 netlat_rx_tcp_queued(const struct tcp_skb_cb *cb, u8 where,
					       u32 rcv_nxt)
{
	return !where && netlat_rxtrack_packets() && !after(cb->seq, rcv_nxt) ?
	       NETLAT_RX_Q_IN_ORDER : 0;
}

/* A TCP data segment of @len bytes arrives: the receive table's arrival. */
static __always_inline void netlat_rx_tcp_arrive(const struct sock *sk,
						 const struct sk_buff *skb,
						 u32 len, u32 rcv_nxt, u8 where,
						 u64 *now)
{
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);

	/* a duplicate of what is in already ends nowhere: not followed */
	if (after(cb->end_seq, rcv_nxt))
		netlat_rxtrack_arrive(sk, skb, NETLAT_RX_TCP, cb->seq, len,
				      netlat_rx_tcp_queued(cb, where, rcv_nxt),
				      now);
}

/*
 * A TCP data segment (TCP_SKB_CB filled) arrives (TRANSPORT) or is queued
 * (QUEUE): the receive table, and at the events level its record.
 */
static notrace void netlat_rx_tcp_skb(const struct sock *sk,
				      const struct sk_buff *skb, u16 type,
				      u8 where)
{
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);
	struct netlat_rec_rx_skb *r;
	struct netlat_writer w __uninitialized;
	u32 len = netlat_tcp_payload(skb);
	u64 now = 0;
	u32 rcv_nxt;

	if (!len)
		return;
	rcv_nxt = READ_ONCE(tcp_sk(sk)->rcv_nxt);
	if (type == NETLAT_REC_RX_QUEUE)
		netlat_rxtrack_queue(sk, skb, NETLAT_RX_TCP, cb->seq, len,
				     where);
	else
		netlat_rx_tcp_arrive(sk, skb, len, rcv_nxt, where, &now);
	if (netlat_rxtrack_packets())
		return;
	r = netlat_rx_reserve(&w, type, sizeof(*r), sk);
	if (!r)
		return;
	r->skb_id = netlat_skb_id(skb);
	r->seq = cb->seq;
	r->end_seq = cb->end_seq;
	r->len = len;
	r->proto = NETLAT_RX_TCP;
	r->where = where;
	r->rcv_nxt = READ_ONCE(tcp_sk(sk)->rcv_nxt);
	netlat_rx_stamp(skb, &r->tstamp_ns, &r->tstamp_mono_ns);
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_rx_tcp_skb);

/*
 * tcp_v4_do_rcv(sk, skb), tcp_v6_do_rcv(sk, skb): from tcp_v4_rcv with
 * the socket not owned, and again when the owner drains the backlog
 * (then owned: tcp_add_backlog wrote the segment's arrival already).
 */
static notrace void netlat_do_rcv(struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	/*
	 * Owned: tcp_add_backlog saw it. A listener's segment is a
	 * handshake's: tcp_child_process gives it to the new socket.
	 */
	if (sock_owned_by_user_nocheck(sk) || sk->sk_state == TCP_LISTEN)
		return;
	netlat_rx_tcp_skb(sk, skb, NETLAT_REC_RX_TRANSPORT, 0);
}
NOKPROBE_SYMBOL(netlat_do_rcv);

static notrace int netlat_v4_do_rcv_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (netlat_group_on(NETLAT_PROBE_RX) && !netlat_rxtrack_packets())
		netlat_do_rcv(regs);
	return 0;
}
NOKPROBE_SYMBOL(netlat_v4_do_rcv_pre);

static notrace int netlat_v6_do_rcv_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	/* IPv4 on an AF_INET6 socket: tcp_v6_do_rcv calls tcp_v4_do_rcv */
	if (netlat_group_on(NETLAT_PROBE_RX) && !netlat_rxtrack_packets() &&
	    skb->protocol != htons(ETH_P_IP))
		netlat_do_rcv(regs);
	return 0;
}
NOKPROBE_SYMBOL(netlat_v6_do_rcv_pre);

/*
 * The packet level's hooks of an arriving segment, one for both packet
 * tables and one clock read between them: the receive group's arrival
 * (the segments tcp_v4_do_rcv and tcp_v6_do_rcv see) and the ACK that
 * ends sent packets (the TCP_ACK group, netlat_track_ack_seg()). An
 * established socket's at tcp:tcp_probe, the first thing
 * tcp_rcv_established() does (a static call, where a kprobe takes an
 * ftrace callback per segment), the other states' at
 * tcp_rcv_state_process() (handshakes and closing sockets), a child's
 * handshake segment included (tcp_child_process() calls it). Either
 * group arms them.
 */
#define NETLAT_SEG_GROUPS	(NETLAT_PROBE_RX | NETLAT_PROBE_TCP_ACK)

static __always_inline void netlat_pkt_segment(const struct sock *sk,
					       const struct sk_buff *skb,
					       u8 state)
{
	u64 on = READ_ONCE(netlat_probes_on), now = 0;
	u32 len;

	/*
	 * Owned: tcp_add_backlog saw it; a listener's is a handshake's. The
	 * packet level writes no record of an arrival: the table only.
	 */
	if ((on & NETLAT_PROBE_RX) && netlat_rxtrack_packets() &&
	    state != TCP_LISTEN && !sock_owned_by_user_nocheck(sk)) {
		len = netlat_tcp_payload(skb);
		if (len)
			netlat_rx_tcp_arrive(sk, skb, len,
					     READ_ONCE(tcp_sk(sk)->rcv_nxt), 0,
					     &now);
	}
	/* a listener's and a SYN's are no ACK of data */
	if ((on & NETLAT_PROBE_TCP_ACK) && netlat_tracking() &&
	    state != TCP_LISTEN && state != TCP_SYN_SENT && state != TCP_CLOSE)
		netlat_track_ack_seg(sk, skb, &now);
}

static notrace void netlat_tp_pkt_segment(void *data, struct sock *sk,
					  NETLAT_TCP_PROBE_SKB *skb)
{
	netlat_pkt_segment(sk, skb, TCP_ESTABLISHED);
}
NOKPROBE_SYMBOL(netlat_tp_pkt_segment);

/* tcp_rcv_state_process(sk, skb) */
static notrace int netlat_pkt_state_process_pre(struct kprobe *p,
						struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);

	netlat_pkt_segment(sk, (void *)regs_get_kernel_argument(regs, 1),
			   READ_ONCE(sk->sk_state));
	return 0;
}
NOKPROBE_SYMBOL(netlat_pkt_state_process_pre);

/* tcp_add_backlog(sk, skb, reason): the socket is owned by a process */
static notrace int netlat_backlog_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	/* a listener's backlog holds handshakes, not its own data */
	if (!netlat_group_on(NETLAT_PROBE_RX) || sk->sk_state == TCP_LISTEN)
		return 0;
	netlat_rx_tcp_skb(sk, skb, NETLAT_REC_RX_TRANSPORT, NETLAT_RX_Q_BACKLOG);
	netlat_rx_tcp_skb(sk, skb, NETLAT_REC_RX_QUEUE, NETLAT_RX_Q_BACKLOG);
	return 0;
}
NOKPROBE_SYMBOL(netlat_backlog_pre);

/*
 * tcp_child_process(parent, child, skb): the segment that completes a
 * handshake goes to the new socket without tcp_v4_do_rcv, and may carry
 * data (the bare ACK before it was lost, or dropped by a full accept
 * queue or TCP_DEFER_ACCEPT): to the child's backlog if a process owns
 * it, else processed at once.
 */
static notrace int netlat_child_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *child = (void *)regs_get_kernel_argument(regs, 1);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 2);

	if (!netlat_group_on(NETLAT_PROBE_RX))
		return 0;
	/* the packet level's tcp_rcv_state_process hook sees it then */
	if (!sock_owned_by_user_nocheck(child)) {
		if (!netlat_rxtrack_packets())
			netlat_rx_tcp_skb(child, skb, NETLAT_REC_RX_TRANSPORT,
					  0);
		return 0;
	}
	netlat_rx_tcp_skb(child, skb, NETLAT_REC_RX_TRANSPORT,
			  NETLAT_RX_Q_BACKLOG);
	netlat_rx_tcp_skb(child, skb, NETLAT_REC_RX_QUEUE, NETLAT_RX_Q_BACKLOG);
	return 0;
}
NOKPROBE_SYMBOL(netlat_child_pre);

/* tcp_queue_rcv(sk, skb, fragstolen): in order onto the receive queue */
static notrace int netlat_queue_rcv_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (netlat_group_on(NETLAT_PROBE_RX) && !netlat_rxtrack_packets())
		netlat_rx_tcp_skb((void *)regs_get_kernel_argument(regs, 0),
				  (void *)regs_get_kernel_argument(regs, 1),
				  NETLAT_REC_RX_QUEUE, NETLAT_RX_Q_IN_ORDER);
	return 0;
}
NOKPROBE_SYMBOL(netlat_queue_rcv_pre);

/*
 * tcp_data_queue(sk, skb): tcp_data_queue_ofo() is inlined everywhere, so
 * its branch is taken here: data after rcv_nxt and inside the window is
 * what tcp_data_queue() hands to it (under the socket's lock).
 */
static notrace int netlat_data_queue_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	const struct tcp_skb_cb *cb;
	const struct tcp_sock *tp;

	if (!netlat_group_on(NETLAT_PROBE_RX))
		return 0;
	cb = TCP_SKB_CB(skb);
	tp = tcp_sk(sk);
	if (cb->seq != cb->end_seq && after(cb->seq, tp->rcv_nxt) &&
	    before(cb->seq, tp->rcv_nxt + tcp_receive_window(tp)))
		netlat_rx_tcp_skb(sk, skb, NETLAT_REC_RX_QUEUE, NETLAT_RX_Q_OFO);
	return 0;
}
NOKPROBE_SYMBOL(netlat_data_queue_pre);

/* ---- TCP copy: kretprobe tcp_recvmsg(sk, msg, len, flags, ...) ---- */

/* The copy's wait: from @queued, the oldest byte's queueing, to now. */
static notrace void netlat_rx_wait(struct netlat_rec_rx_copy *r, u64 queued)
{
	if (queued && r->hdr.ts_ns >= queued)
		r->wait_ns = r->hdr.ts_ns - queued;
}
NOKPROBE_SYMBOL(netlat_rx_wait);

struct netlat_recvmsg_data {
	struct sock *sk;
	u64 start_ns;
	bool peek;
};

static notrace int netlat_recvmsg_entry(void *data, struct pt_regs *regs)
{
	struct netlat_recvmsg_data *d = data;

	/* nonzero: no return handler, nothing more to pay for this call */
	if (!netlat_group_on(NETLAT_PROBE_RX))
		return 1;
	d->sk = (void *)regs_get_kernel_argument(regs, 0);
	d->peek = regs_get_kernel_argument(regs, 3) & MSG_PEEK;
	/*
	 * only the events level's record has the entry time (a level
	 * changed while a reader was inside leaves that one record's 0)
	 */
	d->start_ns = netlat_rxtrack_packets() ? 0 : ktime_get_mono_fast_ns();
	return 0;
}
NOKPROBE_SYMBOL(netlat_recvmsg_entry);

/*
 * A TCP recvmsg of @sk returned @ret: the receive table's copy, with the
 * reader's wait. The queueing of the oldest byte copied (0: none) and
 * copied_seq in *@copied; false if nothing was copied.
 */
static __always_inline bool netlat_rx_tcp_copied(struct sock *sk, int ret,
						 bool peek, u64 *queued,
						 u32 *copied)
{
	struct netlat_rxtrack_wake wk;
	bool woke;

	/* a wait that ended in an error is this call's, not the next's */
	woke = !peek && netlat_rxwait_woke(sk, &wk);
	if (ret <= 0 || !netlat_group_on(NETLAT_PROBE_RX))
		return false;
	*copied = READ_ONCE(tcp_sk(sk)->copied_seq);
	*queued = netlat_rxtrack_copy_tcp(sk, *copied, ret, peek,
					  woke ? &wk : NULL);
	return true;
}

static notrace int netlat_recvmsg_ret(void *data, struct pt_regs *regs)
{
	struct netlat_recvmsg_data *d = data;
	int ret = (int)regs_return_value(regs);
	struct netlat_rec_rx_copy *r;
	struct netlat_writer w __uninitialized;
	u32 copied;
	u64 queued;

	if (!netlat_rx_tcp_copied(d->sk, ret, d->peek, &queued, &copied) ||
	    netlat_rxtrack_packets())
		return 0;
	r = netlat_rx_reserve(&w, NETLAT_REC_RX_COPY, sizeof(*r), d->sk);
	if (!r)
		return 0;
	netlat_rx_wait(r, queued);
	r->start_ns = d->start_ns;
	/* at return, not entry: the entry read was before the socket lock */
	r->end_seq = copied;
	r->seq = d->peek ? copied : copied - ret;
	r->bytes = ret;
	r->pid = current->tgid;
	r->tid = current->pid;
	r->proto = NETLAT_RX_TCP;
	r->flags = d->peek ? NETLAT_RX_PEEK : 0;
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_recvmsg_ret);

#ifdef NETLAT_HAVE_SOCK_RECV_LENGTH_TP
/*
 * sock:sock_recv_length(sk, ret, flags), after a socket's recvmsg: at the
 * packet level it stands for tcp_recvmsg's return probe (a tracepoint
 * with one probe costs its call, a return probe some 230 instructions a
 * hit), for a socket whose recvmsg is TCP's own: not kTLS's, sockmap's or
 * MPTCP's, whose bytes read are not TCP's copied bytes.
 */
static notrace void netlat_tp_recv_length(void *data, struct sock *sk,
					  int ret, int flags)
{
	u32 copied;
	u64 queued;

	if (sk->sk_protocol != IPPROTO_TCP || sk->sk_type != SOCK_STREAM ||
	    !netlat_group_on(NETLAT_PROBE_RX) || !netlat_rxtrack_packets() ||
	    (flags & MSG_ERRQUEUE) ||
	    READ_ONCE(sk->sk_prot)->recvmsg != tcp_prot.recvmsg)
		return;
	netlat_rx_tcp_copied(sk, ret, flags & MSG_PEEK, &queued, &copied);
}
NOKPROBE_SYMBOL(netlat_tp_recv_length);
#endif

/* ---- UDP ---- */

static notrace void netlat_rx_udp_skb(const struct sock *sk,
				      const struct sk_buff *skb, u16 type,
				      u8 where, u32 len)
{
	struct netlat_rec_rx_skb *r;
	struct netlat_writer w __uninitialized;
	u64 now = 0;

	if (type == NETLAT_REC_RX_QUEUE)
		netlat_rxtrack_queue(sk, skb, NETLAT_RX_UDP, 0, len, where);
	else
		netlat_rxtrack_arrive(sk, skb, NETLAT_RX_UDP, 0, len, 0, &now);
	if (netlat_rxtrack_packets())
		return;
	r = netlat_rx_reserve(&w, type, sizeof(*r), sk);
	if (!r)
		return;
	r->skb_id = netlat_skb_id(skb);
	r->len = len;
	r->proto = NETLAT_RX_UDP;
	r->where = where;
	netlat_rx_stamp(skb, &r->tstamp_ns, &r->tstamp_mono_ns);
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_rx_udp_skb);

/* udp_queue_rcv_one_skb(sk, skb), udpv6_queue_rcv_one_skb(sk, skb) */
static notrace int netlat_udp_rcv_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	struct netlat_tcp_seg seg __uninitialized;

	if (!netlat_group_on(NETLAT_PROBE_RX) || !netlat_parse_udp(skb, &seg))
		return 0;
	netlat_rx_udp_skb(sk, skb, NETLAT_REC_RX_TRANSPORT, 0, seg.payload);
	return 0;
}
NOKPROBE_SYMBOL(netlat_udp_rcv_pre);

/* __udp_enqueue_schedule_skb(sk, skb): the UDP header is pulled already */
static notrace int netlat_udp_enqueue_pre(struct kprobe *p,
					  struct pt_regs *regs)
{
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);

	if (netlat_group_on(NETLAT_PROBE_RX))
		netlat_rx_udp_skb((void *)regs_get_kernel_argument(regs, 0),
				  skb, NETLAT_REC_RX_QUEUE,
				  NETLAT_RX_Q_IN_ORDER, skb->len);
	return 0;
}
NOKPROBE_SYMBOL(netlat_udp_enqueue_pre);

/*
 * skb_consume_udp(sk, skb, len): udp_recvmsg and udpv6_recvmsg call it
 * once the datagram is copied, with the length they return (negated
 * when peeking).
 */
static notrace int netlat_udp_consume_pre(struct kprobe *p,
					  struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	int len = (int)regs_get_kernel_argument(regs, 2);
	struct netlat_rec_rx_copy *r;
	struct netlat_rxtrack_wake wk;
	struct netlat_writer w __uninitialized;
	u64 queued;

	if (!netlat_group_on(NETLAT_PROBE_RX))
		return 0;
	queued = netlat_rxtrack_copy_udp(sk, skb, len < 0,
					 len >= 0 && netlat_rxwait_woke(sk, &wk) ?
					 &wk : NULL);
	if (netlat_rxtrack_packets())
		return 0;
	r = netlat_rx_reserve(&w, NETLAT_REC_RX_COPY, sizeof(*r), sk);
	if (!r)
		return 0;
	if (len >= 0)
		netlat_rx_wait(r, queued);
	r->skb_id = netlat_skb_id(skb);
	r->bytes = len < 0 ? -len : len;
	r->pid = current->tgid;
	r->tid = current->pid;
	r->proto = NETLAT_RX_UDP;
	r->flags = len < 0 ? NETLAT_RX_PEEK : 0;
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_udp_consume_pre);

/* ---- drops: skb:kfree_skb (signature in compat.h) ---- */

static notrace void netlat_tp_kfree_skb(NETLAT_KFREE_SKB_PROTO)
{
	struct netlat_rec_rx_drop *r;
	struct netlat_tcp_seg seg __uninitialized;
	struct netlat_writer w __uninitialized;
	u8 proto;

	if (!netlat_group_on(NETLAT_PROBE_RX))
		return;
	/* only what was received: the receive core set skb_iif */
	if (!skb->skb_iif)
		return;
	proto = netlat_rx_parse(skb, &seg);
	if (!proto)
		return;
	netlat_rxtrack_drop(skb, proto, seg.seq, reason);
	if (!netlat_rx_keep_pkt(&seg, skb->dev))
		return;
	r = netlat_reserve_zeroed(&w, NETLAT_REC_RX_DROP, sizeof(*r));
	if (!r)
		return;
	r->flow = seg.flow;
	r->skb_id = netlat_skb_id(skb);
	r->reason = reason;
	r->seq = seg.seq;
	r->len = seg.payload;
	r->ifindex = skb->skb_iif;
	r->proto = proto;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_tp_kfree_skb);

/* ---- a socket's end: its packets leave the receive table ---- */

/* tcp:tcp_destroy_sock(sk) */
static notrace void netlat_rx_tp_destroy(void *data, struct sock *sk)
{
	if (netlat_group_on(NETLAT_PROBE_RX))
		netlat_rxtrack_close(sk);
}
NOKPROBE_SYMBOL(netlat_rx_tp_destroy);

/* udp_destroy_sock(sk), udpv6_destroy_sock(sk): sk_prot->destroy */
static notrace int netlat_udp_destroy_pre(struct kprobe *p,
					  struct pt_regs *regs)
{
	if (netlat_group_on(NETLAT_PROBE_RX))
		netlat_rxtrack_close((void *)regs_get_kernel_argument(regs, 0));
	return 0;
}
NOKPROBE_SYMBOL(netlat_udp_destroy_pre);

/* ---- the table ---- */

/* Whether this family holds net_enable_timestamp(); under the registry. */
static bool netlat_rx_stamps;

static void netlat_rx_groups_on(u64 groups)
{
	/* no wait is in a slot while the group was off */
	if (groups & NETLAT_PROBE_RX_SCHED) {
		netlat_rxwait_reset();
	}
	if ((groups & NETLAT_PROBE_RX) && !netlat_rx_stamps) {
		net_enable_timestamp();
		netlat_rx_stamps = true;
	}
	if (groups & NETLAT_PROBE_RX)
		netlat_rxtrack_start();
}

static void netlat_rx_groups_off(u64 groups)
{
	if ((groups & NETLAT_PROBE_RX) && netlat_rx_stamps) {
		net_disable_timestamp();
		netlat_rx_stamps = false;
	}
	/* what is still followed is counted as not followed, its table gone */
	if (groups & NETLAT_PROBE_RX)
		netlat_rxtrack_stop();
}

static const struct netlat_probe netlat_rx_probes[] = {
	/* the packet level reads the arrival from the skb, later */
	NETLAT_TP_AT(netif_receive_skb, NETLAT_PROBE_RX, netlat_tp_netif,
		     NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT("tcp_v4_do_rcv", NETLAT_PROBE_RX, netlat_v4_do_rcv_pre,
		     NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT("tcp_v6_do_rcv", NETLAT_PROBE_RX, netlat_v6_do_rcv_pre,
		     NETLAT_EVENTS_ONLY),
	/* the packet level's, for the send table's ACKs too */
	NETLAT_TP_AT(tcp_probe, NETLAT_SEG_GROUPS, netlat_tp_pkt_segment,
		     NETLAT_PACKETS_ONLY),
	NETLAT_KP_AT("tcp_rcv_state_process", NETLAT_SEG_GROUPS,
		     netlat_pkt_state_process_pre, NETLAT_PACKETS_ONLY),
	NETLAT_KP("tcp_add_backlog", NETLAT_PROBE_RX, netlat_backlog_pre),
	NETLAT_KP("tcp_child_process", NETLAT_PROBE_RX, netlat_child_pre),
	NETLAT_KP("tcp_data_queue", NETLAT_PROBE_RX, netlat_data_queue_pre),
	/* the packet level takes a segment in order as queued at arrival */
	NETLAT_KP_AT("tcp_queue_rcv", NETLAT_PROBE_RX, netlat_queue_rcv_pre,
		     NETLAT_EVENTS_ONLY),
#ifdef NETLAT_HAVE_SOCK_RECV_LENGTH_TP
	/* the packet level needs only the return, which a tracepoint has */
	NETLAT_KRP_AT("tcp_recvmsg", NETLAT_PROBE_RX, netlat_recvmsg_entry,
		      netlat_recvmsg_ret, struct netlat_recvmsg_data,
		      NETLAT_EVENTS_ONLY),
	NETLAT_TP_AT(sock_recv_length, NETLAT_PROBE_RX, netlat_tp_recv_length,
		     NETLAT_PACKETS_ONLY),
#else
	NETLAT_KRP("tcp_recvmsg", NETLAT_PROBE_RX, netlat_recvmsg_entry,
		   netlat_recvmsg_ret, struct netlat_recvmsg_data),
#endif
	NETLAT_KP("udp_queue_rcv_one_skb", NETLAT_PROBE_RX, netlat_udp_rcv_pre),
	NETLAT_KP("udpv6_queue_rcv_one_skb", NETLAT_PROBE_RX,
		  netlat_udp_rcv_pre),
	NETLAT_KP("__udp_enqueue_schedule_skb", NETLAT_PROBE_RX,
		  netlat_udp_enqueue_pre),
	NETLAT_KP("skb_consume_udp", NETLAT_PROBE_RX, netlat_udp_consume_pre),
	NETLAT_TP(kfree_skb, NETLAT_PROBE_RX, netlat_tp_kfree_skb),
	NETLAT_TP(tcp_destroy_sock, NETLAT_PROBE_RX, netlat_rx_tp_destroy),
	/* without them a UDP socket's slot is taken until the group goes off */
	{ .name = "udp_destroy_sock", .group = NETLAT_PROBE_RX,
	  .kind = NETLAT_KPROBE, .pre = netlat_udp_destroy_pre,
	  .optional = true },
	{ .name = "udpv6_destroy_sock", .group = NETLAT_PROBE_RX,
	  .kind = NETLAT_KPROBE, .pre = netlat_udp_destroy_pre,
	  .optional = true },
	/* slots first: the scheduler handlers read them */
	NETLAT_KRP("sk_wait_data", NETLAT_PROBE_RX_SCHED, netlat_rxwait_entry,
		   netlat_rxwait_ret, long),
	NETLAT_KRP("__skb_wait_for_more_packets", NETLAT_PROBE_RX_SCHED,
		   netlat_rxwait_entry, netlat_rxwait_ret, long),
#ifdef NETLAT_HAVE_SK_DATA_READY_TP
	NETLAT_TP(sk_data_ready, NETLAT_PROBE_RX_SCHED, netlat_rxwait_ready_tp),
#else
	NETLAT_KP("sock_def_readable", NETLAT_PROBE_RX_SCHED,
		  netlat_rxwait_readable_pre),
#endif
	NETLAT_TP(sched_wakeup, NETLAT_PROBE_RX_SCHED, netlat_rxwait_wakeup_tp),
	NETLAT_TP(sched_switch, NETLAT_PROBE_RX_SCHED, netlat_rxwait_switch_tp),
};

static struct netlat_family netlat_rx_family = {
	.name = "rx",
	.probes = netlat_rx_probes,
	.nr_probes = ARRAY_SIZE(netlat_rx_probes),
	.groups_on = netlat_rx_groups_on,
	.groups_off = netlat_rx_groups_off,
};

int netlat_rx_init(void)
{
	return netlat_family_add(&netlat_rx_family);
}

void netlat_rx_exit(void)
{
	netlat_family_remove(&netlat_rx_family);
	netlat_rxtrack_exit();
}
