// SPDX-License-Identifier: GPL-2.0
/*
 * The packet table (see track.h). Bounded: NETLAT_TRACK_FLOWS sockets at
 * once, each with a FIFO of NETLAT_TRACK_PKTS packets in flight, in
 * sequence order because TCP sends new data in order. A socket that finds
 * no free slot, or a packet that finds its socket's FIFO full, is not
 * followed and is counted (untracked, flows_full); the data path never
 * waits for the table. Nothing is written into kernel structures: the
 * table is keyed by the socket's address, and a slot is freed when the
 * socket is destroyed (tcp:tcp_destroy_sock), when the level changes and
 * at unload.
 *
 * Concurrency: transmit, ACK and retransmit of one socket are serialised
 * by the socket lock, but the qdisc and driver stamps of its segments may
 * come from any CPU; one spinlock per slot, taken with interrupts off for
 * a few loads and stores, orders them. The table itself is replaced only
 * with the level off and every handler gone (synchronize_rcu: handlers
 * run non-preemptible).
 */
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/kprobes.h>
#include <linux/timekeeping.h>
#include <net/sock.h>
#include <net/tcp.h>
#include "track.h"
#include "hist.h"
#include "record.h"
#include "filter.h"
#include "probes.h"
#include "pkt.h"

#define NETLAT_TRACK_FLOW_BITS	8
#define NETLAT_TRACK_FLOWS	(1U << NETLAT_TRACK_FLOW_BITS)
#define NETLAT_TRACK_PROBE	8	/* slots looked at from the hash */
#define NETLAT_TRACK_PKTS	256	/* power of two: a bulk flow's window */
#define NETLAT_TRACK_SENDS	8	/* power of two */

struct netlat_track_pkt {
	u32 seq;
	u32 end_seq;
	u64 sendmsg_ns;
	u64 xmit_ns;
	u64 qdisc_ns;
	u64 driver_ns;
	u16 segs;
	u16 retrans;
	u16 retrans_fail;
	u8 flags;
};

struct netlat_track_flow {
	raw_spinlock_t lock;
	const struct sock *sk;		/* NULL: free; set by cmpxchg */
	u32 head, tail;			/* FIFO of pkt[], free-running */
	u32 send_next;
	struct {
		u32 seq;		/* write_seq at the sendmsg's start */
		u64 ns;
	} send[NETLAT_TRACK_SENDS];
	struct netlat_track_pkt pkt[NETLAT_TRACK_PKTS];
};

u32 netlat_track_level;
static u64 netlat_track_slow;
static struct netlat_track_flow __rcu *netlat_track_tbl;	/* RCU-sched */

static notrace struct netlat_track_flow *netlat_track_tbl_get(void)
{
	return rcu_dereference_sched(netlat_track_tbl);
}
NOKPROBE_SYMBOL(netlat_track_tbl_get);

/* The slot of @sk, taking a free one if @create; NULL if none. */
static notrace struct netlat_track_flow *
netlat_track_find(const struct sock *sk, bool create)
{
	struct netlat_track_flow *tbl = netlat_track_tbl_get(), *f;
	unsigned int h, i;

	if (unlikely(!tbl))
		return NULL;
	h = hash_ptr(sk, NETLAT_TRACK_FLOW_BITS);
	for (i = 0; i < NETLAT_TRACK_PROBE; i++) {
		f = &tbl[(h + i) & (NETLAT_TRACK_FLOWS - 1)];
		if (READ_ONCE(f->sk) == sk)
			return f;
	}
	if (!create)
		return NULL;
	for (i = 0; i < NETLAT_TRACK_PROBE; i++) {
		f = &tbl[(h + i) & (NETLAT_TRACK_FLOWS - 1)];
		if (!READ_ONCE(f->sk) && !cmpxchg(&f->sk, NULL, sk))
			return f;
	}
	netlat_hist_count(NETLAT_HC_FLOWS_FULL, 1);
	return NULL;
}
NOKPROBE_SYMBOL(netlat_track_find);

/* Lock @f if it still belongs to @sk (it may have been freed meanwhile). */
static notrace bool netlat_track_lock(struct netlat_track_flow *f,
				      const struct sock *sk,
				      unsigned long *flags)
{
	raw_spin_lock_irqsave(&f->lock, *flags);
	if (likely(f->sk == sk))
		return true;
	raw_spin_unlock_irqrestore(&f->lock, *flags);
	return false;
}
NOKPROBE_SYMBOL(netlat_track_lock);

/* sendmsg entry: the bytes from @seq on are queued from @start_ns. */
notrace void netlat_track_sendmsg(const struct sock *sk, u32 seq,
				  u64 start_ns)
{
	struct netlat_track_flow *f = netlat_track_find(sk, true);
	unsigned long flags;
	unsigned int i;

	if (!f || !netlat_track_lock(f, sk, &flags))
		return;
	i = f->send_next++ & (NETLAT_TRACK_SENDS - 1);
	f->send[i].seq = seq;
	f->send[i].ns = start_ns;
	raw_spin_unlock_irqrestore(&f->lock, flags);
}
NOKPROBE_SYMBOL(netlat_track_sendmsg);

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

/* __tcp_transmit_skb of new data: a packet begins. */
notrace void netlat_track_xmit(const struct sock *sk, const struct sk_buff *skb)
{
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);
	struct netlat_track_flow *f;
	struct netlat_track_pkt *p;
	unsigned long flags;

	/* data or FIN sent for the first time: it starts at snd_nxt */
	if (cb->end_seq == cb->seq || (cb->tcp_flags & TCPHDR_SYN) ||
	    cb->seq != READ_ONCE(tcp_sk(sk)->snd_nxt))
		return;
	f = netlat_track_find(sk, true);
	if (!f) {
		netlat_hist_count(NETLAT_HC_UNTRACKED, 1);
		return;
	}
	if (!netlat_track_lock(f, sk, &flags))
		return;
	if (f->tail - f->head >= NETLAT_TRACK_PKTS) {
		raw_spin_unlock_irqrestore(&f->lock, flags);
		netlat_hist_count(NETLAT_HC_UNTRACKED, 1);
		return;
	}
	p = &f->pkt[f->tail & (NETLAT_TRACK_PKTS - 1)];
	memset(p, 0, sizeof(*p));
	p->seq = cb->seq;
	p->end_seq = cb->end_seq;
	p->xmit_ns = ktime_get_mono_fast_ns();
	p->segs = tcp_skb_pcount(skb);
	p->sendmsg_ns = netlat_track_send_ns(f, cb->seq);
	if (p->sendmsg_ns)
		p->flags |= NETLAT_PKT_SENDMSG;
	f->tail++;
	raw_spin_unlock_irqrestore(&f->lock, flags);
}
NOKPROBE_SYMBOL(netlat_track_xmit);

/*
 * The packet that starts at @seq, searched from the newest: qdisc and
 * driver see a packet right after its transmit, and its later segments
 * (software GSO) start elsewhere and stop the search at once.
 */
static notrace struct netlat_track_pkt *
netlat_track_starting(struct netlat_track_flow *f, u32 seq)
{
	u32 i;

	for (i = f->tail; i != f->head; i--) {
		struct netlat_track_pkt *p = &f->pkt[(i - 1) &
						     (NETLAT_TRACK_PKTS - 1)];

		if (p->seq == seq)
			return p;
		if (before(p->seq, seq))
			break;
	}
	return NULL;
}
NOKPROBE_SYMBOL(netlat_track_starting);

/* net_dev_queue (@driver false) or net_dev_start_xmit of a segment. */
notrace void netlat_track_dev(const struct sock *sk, u32 seq, bool driver)
{
	struct netlat_track_flow *f = netlat_track_find(sk, false);
	struct netlat_track_pkt *p;
	unsigned long flags;

	if (!f || !netlat_track_lock(f, sk, &flags))
		return;
	p = netlat_track_starting(f, seq);
	if (p) {
		u8 bit = driver ? NETLAT_PKT_DRIVER : NETLAT_PKT_QDISC;

		if (!(p->flags & bit)) {
			p->flags |= bit;
			if (driver)
				p->driver_ns = ktime_get_mono_fast_ns();
			else
				p->qdisc_ns = ktime_get_mono_fast_ns();
		}
	}
	raw_spin_unlock_irqrestore(&f->lock, flags);
}
NOKPROBE_SYMBOL(netlat_track_dev);

static notrace void netlat_track_stage(enum netlat_stage stage, u64 from,
				       u64 to)
{
	if (from && to >= from)
		netlat_hist_add(stage, to - from);
}
NOKPROBE_SYMBOL(netlat_track_stage);

/* A packet's life ended at @end_ns: histograms, counters, its record. */
static notrace void netlat_track_end(const struct sock *sk,
				     const struct netlat_track_pkt *p,
				     u64 end_ns)
{
	struct netlat_rec_tcp_pkt *r;
	struct netlat_tcp_flow flow;
	struct netlat_writer w;

	if (p->flags & NETLAT_PKT_ACKED) {
		netlat_track_stage(NETLAT_STAGE_SENDMSG_XMIT, p->sendmsg_ns,
				   p->xmit_ns);
		netlat_track_stage(NETLAT_STAGE_XMIT_QDISC, p->xmit_ns,
				   p->qdisc_ns);
		netlat_track_stage(NETLAT_STAGE_QDISC_DRIVER, p->qdisc_ns,
				   p->driver_ns);
		netlat_track_stage(NETLAT_STAGE_DRIVER_ACK, p->driver_ns,
				   end_ns);
		netlat_track_stage(NETLAT_STAGE_XMIT_ACK, p->xmit_ns, end_ns);
		netlat_track_stage(NETLAT_STAGE_SENDMSG_ACK, p->sendmsg_ns,
				   end_ns);
		netlat_hist_count(NETLAT_HC_PACKETS, 1);
		netlat_hist_count(NETLAT_HC_BYTES, p->end_seq - p->seq);
		netlat_hist_count(NETLAT_HC_SEGS, p->segs);
		/* only the slow ones leave a record */
		if (end_ns - p->xmit_ns < READ_ONCE(netlat_track_slow))
			return;
	}
	if (!netlat_group_on(NETLAT_PROBE_TCP_ACK))
		return;
	memset(&flow, 0, sizeof(flow));
	netlat_sk_flow(&flow, sk);
	if (netlat_filter_on(NETLAT_PROBE_TCP_ACK)) {
		struct netlat_filter_in in = {
			.flow = &flow, .sk = sk, .net = sock_net(sk),
		};

		if (!netlat_filter_keep(NETLAT_PROBE_TCP_ACK, &in))
			return;
	}
	r = netlat_reserve_zeroed(&w, NETLAT_REC_TCP_PKT, sizeof(*r));
	if (!r)
		return;
	r->flow = flow;
	r->seq = p->seq;
	r->end_seq = p->end_seq;
	r->sendmsg_ns = p->sendmsg_ns;
	r->xmit_ns = p->xmit_ns;
	r->qdisc_ns = p->qdisc_ns;
	r->driver_ns = p->driver_ns;
	r->segs = p->segs;
	r->retrans = p->retrans;
	r->retrans_fail = p->retrans_fail;
	r->end_ns = end_ns;
	r->flags = p->flags;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_track_end);

/* tcp_ack returned with snd_una at @una: every packet below it is done. */
notrace void netlat_track_ack(const struct sock *sk, u32 una)
{
	struct netlat_track_flow *f = netlat_track_find(sk, false);
	struct netlat_track_pkt done[4];
	u64 now = ktime_get_mono_fast_ns();
	unsigned long flags;
	unsigned int n, i;

	if (!f)
		return;
	do {
		if (!netlat_track_lock(f, sk, &flags))
			return;
		for (n = 0; n < ARRAY_SIZE(done) && f->head != f->tail; n++) {
			struct netlat_track_pkt *p =
				&f->pkt[f->head & (NETLAT_TRACK_PKTS - 1)];

			if (after(p->end_seq, una))
				break;
			done[n] = *p;
			done[n].flags |= NETLAT_PKT_ACKED;
			f->head++;
		}
		raw_spin_unlock_irqrestore(&f->lock, flags);
		/* records are written outside the slot's lock */
		for (i = 0; i < n; i++)
			netlat_track_end(sk, &done[i], now);
	} while (n == ARRAY_SIZE(done));
}
NOKPROBE_SYMBOL(netlat_track_ack);

/* A retransmission attempt of [@seq, ...) that the kernel counted @segs. */
notrace void netlat_track_retrans(const struct sock *sk, u32 seq, u8 kind,
				  u32 segs, int ret)
{
	struct netlat_track_flow *f;
	unsigned long flags;
	u32 i;

	if (segs)
		netlat_hist_count(NETLAT_HC_RETRANS_SEGS + (kind & 7), segs);
	if (ret)
		netlat_hist_count(NETLAT_HC_RETRANS_FAIL, 1);
	f = netlat_track_find(sk, false);
	if (!f || !netlat_track_lock(f, sk, &flags))
		return;
	for (i = f->head; i != f->tail; i++) {
		struct netlat_track_pkt *p = &f->pkt[i & (NETLAT_TRACK_PKTS - 1)];

		if (before(seq, p->seq))
			break;
		if (before(seq, p->end_seq)) {
			p->retrans++;
			if (ret)
				p->retrans_fail++;
			break;
		}
	}
	raw_spin_unlock_irqrestore(&f->lock, flags);
}
NOKPROBE_SYMBOL(netlat_track_retrans);

/* The socket is destroyed: its packets end unacknowledged, its slot frees. */
notrace void netlat_track_close(const struct sock *sk)
{
	struct netlat_track_flow *f = netlat_track_find(sk, false);
	struct netlat_track_pkt p;
	unsigned long flags;
	u64 now = ktime_get_mono_fast_ns();

	if (!f)
		return;
	for (;;) {
		if (!netlat_track_lock(f, sk, &flags))
			return;
		if (f->head == f->tail) {
			f->send_next = 0;
			/* a new socket may take the slot from now on */
			smp_store_release(&f->sk, NULL);
			raw_spin_unlock_irqrestore(&f->lock, flags);
			return;
		}
		p = f->pkt[f->head++ & (NETLAT_TRACK_PKTS - 1)];
		p.flags |= NETLAT_PKT_CLOSED;
		raw_spin_unlock_irqrestore(&f->lock, flags);
		netlat_track_end(sk, &p, now);
	}
}
NOKPROBE_SYMBOL(netlat_track_close);

/* ---- process context ---- */

static struct netlat_track_flow *netlat_track_alloc(void)
{
	struct netlat_track_flow *tbl;
	unsigned int i;

	tbl = vzalloc(array_size(NETLAT_TRACK_FLOWS, sizeof(*tbl)));
	if (!tbl)
		return NULL;
	for (i = 0; i < NETLAT_TRACK_FLOWS; i++)
		raw_spin_lock_init(&tbl[i].lock);
	return tbl;
}

/*
 * Under netlat_lock. The table exists only at the packet level; a change
 * of level empties it and zeroes the histograms. Packets in flight at
 * the change are not followed (they end in no record).
 */
int netlat_track_set(u32 level, u64 slow_ns)
{
	struct netlat_track_flow *old, *tbl = NULL;

	WRITE_ONCE(netlat_track_slow, slow_ns);
	if (level == READ_ONCE(netlat_track_level))
		return 0;
	if (level) {
		tbl = netlat_track_alloc();
		if (!tbl)
			return -ENOMEM;
	}
	WRITE_ONCE(netlat_track_level, 0);
	/* no handler is inside the table once this returns */
	synchronize_rcu();
	old = rcu_dereference_protected(netlat_track_tbl, true);
	rcu_assign_pointer(netlat_track_tbl, tbl);
	vfree(old);
	netlat_hist_reset();
	WRITE_ONCE(netlat_track_level, level);
	return 0;
}

u64 netlat_track_slow_ns(void)
{
	return READ_ONCE(netlat_track_slow);
}

/* Sockets followed now (a racy count, for reports). */
u64 netlat_track_flows(void)
{
	struct netlat_track_flow *tbl;
	unsigned int i;
	u64 n = 0;

	rcu_read_lock_sched();
	tbl = netlat_track_tbl_get();
	for (i = 0; tbl && i < NETLAT_TRACK_FLOWS; i++)
		n += !!READ_ONCE(tbl[i].sk);
	rcu_read_unlock_sched();
	return n;
}

u64 netlat_track_mem_bytes(void)
{
	u64 n = netlat_hist_mem_bytes();

	if (READ_ONCE(netlat_track_level))
		n += PAGE_ALIGN(NETLAT_TRACK_FLOWS *
				sizeof(struct netlat_track_flow));
	return n;
}

unsigned int netlat_track_max_flows(void)
{
	return NETLAT_TRACK_FLOWS;
}

/* The TCP family is gone: no handler runs. */
void netlat_track_exit(void)
{
	WRITE_ONCE(netlat_track_level, 0);
	synchronize_rcu();
	vfree(rcu_dereference_protected(netlat_track_tbl, true));
	RCU_INIT_POINTER(netlat_track_tbl, NULL);
}
