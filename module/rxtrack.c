// SPDX-License-Identifier: GPL-2.0
/*
 * The receive table (see rxtrack.h). Bounded: NETLAT_RXT_FLOWS sockets at
 * once, each with a FIFO of NETLAT_RXT_PKTS packets in arrival order. A
 * socket that finds no free slot, or a packet that finds its socket's
 * FIFO full, is not followed and is counted (rx_untracked,
 * rx_flows_full); the data path never waits for the table. Nothing is
 * written into kernel structures and no socket or skb is dereferenced
 * from the table: their addresses are only keys. A socket's slot is
 * freed when it is destroyed (tcp:tcp_destroy_sock, udp_destroy_sock,
 * udpv6_destroy_sock), at a level change, and when the group goes off.
 * The rules are asked once per socket (and again after they change): a
 * socket they keep out keeps its slot so that its hooks stop there, and
 * its packets count as filtered, not followed.
 *
 * A packet ends: TCP, when copied_seq passes its last byte (the copy of
 * the stream is in order, whatever order the segments came in); UDP, when
 * skb_consume_udp() consumes its skb (older datagrams still in the FIFO
 * then were lost to the table: a drop it did not see; they end unfollowed
 * and are counted in rx_untracked); or at a drop. A drop
 * (skb:kfree_skb) names only the skb: the drops that matter come right
 * after the packet's arrival on the same CPU (receive buffer full,
 * backlog full, out-of-order memory, filters), so each CPU keeps a hint
 * of the last arrival it saw and a drop of that skb ends that packet.
 *
 * Concurrency: one raw spinlock per slot, taken with interrupts off for a
 * bounded scan; records are written outside it. The table is replaced
 * only under netlat_rxtrack_mutex and freed after a grace period
 * (handlers run non-preemptible: RCU-sched).
 */
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <net/sock.h>
#include <net/tcp.h>
#include "rxtrack.h"
#include "hist.h"
#include "record.h"
#include "filter.h"
#include "probes.h"
#include "pkt.h"
#include "track.h"

#define NETLAT_RXT_FLOW_BITS	7
#define NETLAT_RXT_FLOWS	(1U << NETLAT_RXT_FLOW_BITS)
#define NETLAT_RXT_PROBE	8	/* slots looked at from the hash */
#define NETLAT_RXT_PKTS		256	/* power of two */
#define NETLAT_RXT_QUEUE_SCAN	32	/* newest packets a queue event looks at */
#define NETLAT_RXT_BATCH	4	/* packets ended per lock hold */

struct netlat_rxt_pkt {
	unsigned long skb;		/* key only, never dereferenced */
	u64 netif_ns;
	u64 transport_ns;
	u64 queue_ns;
	u32 seq;
	u32 len;
	u32 rmem;
	u32 rcvbuf;
	u16 segs;
	u8 where;
	u8 flags;			/* NETLAT_RXP_* */
	bool done;
};

/*
 * A slot's filter verdict: netlat_filter_gen in the upper half (stale once
 * the rules change; 0 is no generation), this bit in the lower.
 */
#define NETLAT_RXT_OUT		(1U << 0)	/* kept out: not followed */

struct netlat_rxt_flow {
	raw_spinlock_t lock;
	const struct sock *sk;		/* NULL: free; set by cmpxchg */
	u64 verdict;			/* NETLAT_RXT_OUT, of @sk */
	u32 head, tail;			/* FIFO of pkt[], free-running */
	struct netlat_rxt_pkt pkt[NETLAT_RXT_PKTS];
};

/* The last arrival this CPU saw: what a drop right after it ends. */
struct netlat_rxt_hint {
	unsigned long skb;
	const struct netlat_rxt_flow *tbl;
	const struct sock *sk;
	u32 flow;
	u32 idx;
	u32 seq;
	u8 proto;
};

/* A packet that ended, copied out of the FIFO to be accounted unlocked. */
struct netlat_rxt_end {
	struct netlat_rxt_pkt p;
	u8 proto;
};

static const struct netlat_rxt_wake netlat_rxt_no_wake;

u32 netlat_rxtrack_level;
static struct netlat_rxt_flow __rcu *netlat_rxt_tbl;	/* RCU-sched */
static DEFINE_MUTEX(netlat_rxtrack_mutex);
static DEFINE_PER_CPU(struct netlat_rxt_hint, netlat_rxt_hint);

static notrace struct netlat_rxt_flow *netlat_rxt_tbl_get(void)
{
	return rcu_dereference_sched(netlat_rxt_tbl);
}
NOKPROBE_SYMBOL(netlat_rxt_tbl_get);

/*
 * What the rules of generation @gen say of @sk's receive records, asked
 * once per socket (from its addresses, ports and namespace; its cookie
 * only for a rule that reads it): a socket they keep out is not followed.
 * One whose rules read the hit's task is, and its records are asked again.
 */
static notrace u64 netlat_rxt_verdict(const struct sock *sk, u32 gen)
{
	struct netlat_tcp_flow flow;
	struct netlat_filter_in in = {
		.flow = &flow, .sk = sk, .net = sock_net(sk),
		.lazy_cookie = true,
	};
	bool per_hit = false;

	if (!netlat_filter_on(NETLAT_PROBE_RX))
		return (u64)gen << 32;
	memset(&flow, 0, sizeof(flow));
	netlat_sk_addrs(&flow, sk);
	if (!netlat_filter_kept(NETLAT_PROBE_RX, &in, &per_hit) && !per_hit)
		return (u64)gen << 32 | NETLAT_RXT_OUT;
	return (u64)gen << 32;
}
NOKPROBE_SYMBOL(netlat_rxt_verdict);

/*
 * @f (claimed for @sk) under the rules of @gen; a socket the rules now
 * keep out has its packets dropped from the table. Returns the verdict.
 */
static notrace u64 netlat_rxt_refresh(struct netlat_rxt_flow *f,
				      const struct sock *sk, u32 gen)
{
	u64 v = netlat_rxt_verdict(sk, gen);
	unsigned long flags;

	raw_spin_lock_irqsave(&f->lock, flags);
	if (f->sk == sk) {
		if (v & NETLAT_RXT_OUT)
			f->head = f->tail;
		WRITE_ONCE(f->verdict, v);
	}
	raw_spin_unlock_irqrestore(&f->lock, flags);
	return v;
}
NOKPROBE_SYMBOL(netlat_rxt_refresh);

/* The slot @sk holds, followed or not; NULL if none. */
static notrace struct netlat_rxt_flow *
netlat_rxt_slot(struct netlat_rxt_flow *tbl, const struct sock *sk)
{
	unsigned int h = hash_ptr(sk, NETLAT_RXT_FLOW_BITS), i;
	struct netlat_rxt_flow *f;

	for (i = 0; i < NETLAT_RXT_PROBE; i++) {
		f = &tbl[(h + i) & (NETLAT_RXT_FLOWS - 1)];
		if (READ_ONCE(f->sk) == sk)
			return f;
	}
	return NULL;
}
NOKPROBE_SYMBOL(netlat_rxt_slot);

/*
 * The slot of @sk if the table follows it, taking a free one if @create;
 * NULL if none. A socket the filters keep out keeps its slot (its hooks
 * stop here) but is not returned: *@out says so, if asked.
 */
static notrace struct netlat_rxt_flow *
netlat_rxt_find_out(const struct sock *sk, bool create, bool *out)
{
	struct netlat_rxt_flow *tbl = netlat_rxt_tbl_get(), *f;
	u32 gen = netlat_filter_gen_get();
	unsigned int h, i;
	u64 v;

	if (unlikely(!tbl))
		return NULL;
	f = netlat_rxt_slot(tbl, sk);
	if (f) {
		v = READ_ONCE(f->verdict);
		if (unlikely(v >> 32 != gen))
			v = netlat_rxt_refresh(f, sk, gen);
		goto verdict;
	}
	if (!create)
		return NULL;
	h = hash_ptr(sk, NETLAT_RXT_FLOW_BITS);
	for (i = 0; i < NETLAT_RXT_PROBE; i++) {
		f = &tbl[(h + i) & (NETLAT_RXT_FLOWS - 1)];
		if (!READ_ONCE(f->sk) && !cmpxchg(&f->sk, NULL, sk)) {
			v = netlat_rxt_refresh(f, sk, gen);
			goto verdict;
		}
	}
	/* one that would not be followed anyway is not missed */
	v = netlat_rxt_verdict(sk, gen);
	if (!(v & NETLAT_RXT_OUT))
		netlat_hist_count(NETLAT_HC_RX_FLOWS_FULL, 1);
	f = NULL;
verdict:
	if (v & NETLAT_RXT_OUT) {
		if (out)
			*out = true;
		return NULL;
	}
	return f;
}
NOKPROBE_SYMBOL(netlat_rxt_find_out);

static notrace struct netlat_rxt_flow *netlat_rxt_find(const struct sock *sk,
						       bool create)
{
	return netlat_rxt_find_out(sk, create, NULL);
}
NOKPROBE_SYMBOL(netlat_rxt_find);

/* Lock @f if it still belongs to @sk (it may have been freed meanwhile). */
static notrace bool netlat_rxt_lock(struct netlat_rxt_flow *f,
				    const struct sock *sk, unsigned long *flags)
{
	raw_spin_lock_irqsave(&f->lock, *flags);
	if (likely(f->sk == sk))
		return true;
	raw_spin_unlock_irqrestore(&f->lock, *flags);
	return false;
}
NOKPROBE_SYMBOL(netlat_rxt_lock);

static notrace struct netlat_rxt_pkt *netlat_rxt_at(struct netlat_rxt_flow *f,
						    u32 i)
{
	return &f->pkt[i & (NETLAT_RXT_PKTS - 1)];
}
NOKPROBE_SYMBOL(netlat_rxt_at);

/* Moves the FIFO's head past the packets that ended. Slot locked. */
static notrace void netlat_rxt_trim(struct netlat_rxt_flow *f)
{
	while (f->head != f->tail && netlat_rxt_at(f, f->head)->done)
		f->head++;
}
NOKPROBE_SYMBOL(netlat_rxt_trim);

/* A received packet arrives at its socket's transport. */
notrace void netlat_rxtrack_arrive(const struct sock *sk,
				   const struct sk_buff *skb, u8 proto,
				   u32 seq, u32 len, u64 netif_ns)
{
	struct netlat_rxt_hint *hint;
	struct netlat_rxt_flow *f;
	struct netlat_rxt_pkt *p;
	unsigned long flags;
	bool out = false;

	f = netlat_rxt_find_out(sk, true, &out);
	if (out) {
		/* kept out by the filters: its record counts as filtered */
		netlat_filter_kept_out();
		return;
	}
	if (!f || !netlat_rxt_lock(f, sk, &flags)) {
		netlat_hist_count(NETLAT_HC_RX_UNTRACKED, 1);
		return;
	}
	netlat_rxt_trim(f);
	if (f->tail - f->head >= NETLAT_RXT_PKTS) {
		raw_spin_unlock_irqrestore(&f->lock, flags);
		netlat_hist_count(NETLAT_HC_RX_UNTRACKED, 1);
		return;
	}
	p = netlat_rxt_at(f, f->tail);
	memset(p, 0, sizeof(*p));
	p->skb = (unsigned long)skb;
	p->seq = seq;
	p->len = len;
	p->transport_ns = ktime_get_mono_fast_ns();
	p->netif_ns = netif_ns;
	if (netif_ns)
		p->flags = NETLAT_RXP_NETIF;
	p->segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	hint = this_cpu_ptr(&netlat_rxt_hint);
	hint->skb = (unsigned long)skb;
	hint->tbl = netlat_rxt_tbl_get();
	hint->sk = sk;
	hint->flow = f - hint->tbl;
	hint->idx = f->tail++;
	hint->seq = seq;
	hint->proto = proto;
	raw_spin_unlock_irqrestore(&f->lock, flags);
}
NOKPROBE_SYMBOL(netlat_rxtrack_arrive);

/* The packet is queued to its socket (@where: NETLAT_RX_Q_*). */
notrace void netlat_rxtrack_queue(const struct sock *sk,
				  const struct sk_buff *skb, u8 proto,
				  u32 seq, u8 where)
{
	struct netlat_rxt_flow *f = netlat_rxt_find(sk, false);
	unsigned long flags;
	u32 i, n;

	if (!f || !netlat_rxt_lock(f, sk, &flags))
		return;
	/* queueing follows the arrival closely: the newest packets */
	for (i = f->tail, n = 0; i != f->head && n < NETLAT_RXT_QUEUE_SCAN;
	     i--, n++) {
		struct netlat_rxt_pkt *p = netlat_rxt_at(f, i - 1);

		if (p->done || (proto == NETLAT_RX_UDP ?
				p->skb != (unsigned long)skb : p->seq != seq))
			continue;
		if (where == NETLAT_RX_Q_OFO)
			p->flags |= NETLAT_RXP_OFO;
		else if (where == NETLAT_RX_Q_BACKLOG)
			p->flags |= NETLAT_RXP_BACKLOG;
		/* the first queue is where the wait for the reader begins */
		/*
		 * In order, TCP drops it no more, and may free its skb into
		 * the one before: no later free of that address is its drop.
		 */
		if (proto == NETLAT_RX_TCP && where == NETLAT_RX_Q_IN_ORDER &&
		    __this_cpu_read(netlat_rxt_hint.skb) == p->skb)
			__this_cpu_write(netlat_rxt_hint.skb, 0);
		if (!(p->flags & NETLAT_RXP_QUEUED)) {
			p->flags |= NETLAT_RXP_QUEUED;
			p->where = where;
			p->queue_ns = ktime_get_mono_fast_ns();
			p->rmem = atomic_read(&sk->sk_rmem_alloc);
			p->rcvbuf = READ_ONCE(sk->sk_rcvbuf);
		}
		break;
	}
	raw_spin_unlock_irqrestore(&f->lock, flags);
}
NOKPROBE_SYMBOL(netlat_rxtrack_queue);

static notrace void netlat_rxt_stage(enum netlat_stage stage, u64 from, u64 to)
{
	if (from && to >= from)
		netlat_hist_add(stage, to - from);
}
NOKPROBE_SYMBOL(netlat_rxt_stage);

/* The longest stage of a copied packet, as netlat_rxt_stage() counts. */
static notrace u64 netlat_rxt_span(u64 from, u64 to)
{
	return from && to >= from ? to - from : 0;
}
NOKPROBE_SYMBOL(netlat_rxt_span);

/*
 * A packet's life ended at @end_ns (packet level): histograms, counters,
 * its record. @pid, @tid: the reader that copied it, or 0; @wk: its
 * wakeup (all 0: none).
 */
static notrace void netlat_rxt_end(const struct sock *sk,
				   const struct netlat_rxt_end *e, u64 end_ns,
				   u32 reason, u32 pid, u32 tid,
				   const struct netlat_rxt_wake *wk)
{
	const struct netlat_rxt_pkt *p = &e->p;
	struct netlat_rec_rx_pkt *r;
	struct netlat_tcp_flow flow;
	struct netlat_writer w;

	if (p->flags & NETLAT_RXP_COPIED) {
		u64 slow = 0;

		netlat_rxt_stage(e->proto == NETLAT_RX_TCP ?
				 NETLAT_STAGE_RX_NETIF_TCP :
				 NETLAT_STAGE_RX_NETIF_UDP,
				 p->netif_ns, p->transport_ns);
		if (e->proto == NETLAT_RX_TCP)
			netlat_rxt_stage(NETLAT_STAGE_RX_TCP_QUEUE,
					 p->transport_ns, p->queue_ns);
		netlat_rxt_stage(NETLAT_STAGE_RX_QUEUE_USER, p->queue_ns,
				 end_ns);
		netlat_rxt_stage(NETLAT_STAGE_RX_NETIF_USER, p->netif_ns,
				 end_ns);
		netlat_rxt_stage(NETLAT_STAGE_RX_READY_WAKEUP, wk->ready_ns,
				 wk->wakeup_ns);
		netlat_rxt_stage(NETLAT_STAGE_RX_WAKEUP_RUN, wk->wakeup_ns,
				 wk->run_ns);
		netlat_hist_count(NETLAT_HC_RX_PACKETS, 1);
		netlat_hist_count(NETLAT_HC_RX_BYTES, p->len);
		slow = max(slow, netlat_rxt_span(p->netif_ns, p->transport_ns));
		slow = max(slow, netlat_rxt_span(p->transport_ns, p->queue_ns));
		slow = max(slow, netlat_rxt_span(p->queue_ns, end_ns));
		slow = max(slow, netlat_rxt_span(p->netif_ns, end_ns));
		slow = max(slow, netlat_rxt_span(wk->ready_ns, wk->wakeup_ns));
		slow = max(slow, netlat_rxt_span(wk->wakeup_ns, wk->run_ns));
		/* only the slow ones leave a record */
		if (slow < netlat_track_slow_ns())
			return;
	} else if (p->flags & NETLAT_RXP_DROPPED) {
		netlat_hist_count(NETLAT_HC_RX_DROPPED, 1);
	}
	if (!netlat_filter_sk_flow(NETLAT_PROBE_RX, sk, &flow))
		return;
	r = netlat_reserve_zeroed(&w, NETLAT_REC_RX_PKT, sizeof(*r));
	if (!r)
		return;
	r->flow = flow;
	r->netif_ns = p->netif_ns;
	r->transport_ns = p->transport_ns;
	r->queue_ns = p->queue_ns;
	r->end_ns = end_ns;
	if (e->proto == NETLAT_RX_TCP) {
		r->seq = p->seq;
		r->end_seq = p->seq + p->len;
	}
	r->len = p->len;
	r->pid = pid;
	r->tid = tid;
	r->drop_reason = reason;
	r->rmem = p->rmem;
	r->rcvbuf = p->rcvbuf;
	r->segs = p->segs;
	r->proto = e->proto;
	r->where = p->where;
	r->flags = p->flags;
	r->ready_ns = wk->ready_ns;
	r->wakeup_ns = wk->wakeup_ns;
	r->run_ns = wk->run_ns;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_rxt_end);

/*
 * Account packets that ended, outside the slot's lock; the first copied
 * one gets the reader's wakeup *@wk (then NULL: one wait, one sample).
 */
static notrace void netlat_rxt_end_all(const struct sock *sk,
				       const struct netlat_rxt_end *e,
				       unsigned int n, u64 end_ns, u32 reason,
				       bool reader,
				       const struct netlat_rxt_wake **wk)
{
	u32 pid = reader ? current->tgid : 0, tid = reader ? current->pid : 0;
	unsigned int i;

	if (!netlat_rxtrack_packets())
		return;
	for (i = 0; i < n; i++) {
		const struct netlat_rxt_wake *x = &netlat_rxt_no_wake;

		if (wk && *wk && (e[i].p.flags & NETLAT_RXP_COPIED)) {
			x = *wk;
			*wk = NULL;
		}
		netlat_rxt_end(sk, &e[i], end_ns, reason, pid, tid, x);
	}
}
NOKPROBE_SYMBOL(netlat_rxt_end_all);

/*
 * tcp_recvmsg() returned @bytes with copied_seq at @copied: the packets
 * whose last byte is before it end. Returns the queue time of the oldest
 * byte copied (0: unknown, or peeked).
 */
notrace u64 netlat_rxtrack_copy_tcp(const struct sock *sk, u32 copied,
				    u32 bytes, bool peek,
				    const struct netlat_rxt_wake *wk)
{
	struct netlat_rxt_flow *f = netlat_rxt_find(sk, false);
	struct netlat_rxt_end done[NETLAT_RXT_BATCH];
	u64 now = ktime_get_mono_fast_ns(), oldest = 0;
	u32 from = peek ? copied : copied - bytes;
	u32 to = peek ? copied + bytes : copied;
	unsigned long flags;
	unsigned int n;
	u32 i;

	if (!f)
		return 0;
	do {
		if (!netlat_rxt_lock(f, sk, &flags))
			return oldest;
		n = 0;
		for (i = f->head; i != f->tail && n < NETLAT_RXT_BATCH; i++) {
			struct netlat_rxt_pkt *p = netlat_rxt_at(f, i);
			u32 end = p->seq + p->len;

			if (p->done || !after(end, from) || !before(p->seq, to))
				continue;
			if (peek) {
				p->flags |= NETLAT_RXP_PEEKED;
				continue;
			}
			if ((p->flags & NETLAT_RXP_QUEUED) &&
			    (!oldest || p->queue_ns < oldest))
				oldest = p->queue_ns;
			if (after(end, copied))
				continue;	/* its last byte is still queued */
			p->done = true;
			p->flags |= NETLAT_RXP_COPIED;
			done[n].p = *p;
			done[n++].proto = NETLAT_RX_TCP;
		}
		netlat_rxt_trim(f);
		raw_spin_unlock_irqrestore(&f->lock, flags);
		netlat_rxt_end_all(sk, done, n, now, 0, true, &wk);
	} while (n == NETLAT_RXT_BATCH);
	return peek ? 0 : oldest;
}
NOKPROBE_SYMBOL(netlat_rxtrack_copy_tcp);

/* skb_consume_udp(): the datagram @skb was copied (or peeked). */
notrace u64 netlat_rxtrack_copy_udp(const struct sock *sk,
				    const struct sk_buff *skb, bool peek,
				    const struct netlat_rxt_wake *wk)
{
	struct netlat_rxt_flow *f = netlat_rxt_find(sk, false);
	u64 now = ktime_get_mono_fast_ns(), queued = 0;
	struct netlat_rxt_pkt *p = NULL;
	struct netlat_rxt_end done;
	unsigned long flags;
	u32 i, at, lost = 0;

	if (!f || !netlat_rxt_lock(f, sk, &flags))
		return 0;
	for (at = f->head; at != f->tail; at++) {
		p = netlat_rxt_at(f, at);
		if (!p->done && p->skb == (unsigned long)skb)
			break;
	}
	if (at == f->tail) {
		/* not followed (its FIFO was full when it came) */
		raw_spin_unlock_irqrestore(&f->lock, flags);
		return 0;
	}
	if (peek) {
		p->flags |= NETLAT_RXP_PEEKED;
		raw_spin_unlock_irqrestore(&f->lock, flags);
		return 0;
	}
	/* datagrams queued before it and never read: gone unseen (a drop
	 * the hint missed), unless a peek may read past them */
	for (i = f->head; i != at; i++) {
		struct netlat_rxt_pkt *o = netlat_rxt_at(f, i);

		if (!o->done && !(o->flags & NETLAT_RXP_PEEKED)) {
			o->done = true;
			lost++;
		}
	}
	p->done = true;
	p->flags |= NETLAT_RXP_COPIED;
	if (p->flags & NETLAT_RXP_QUEUED)
		queued = p->queue_ns;
	done.p = *p;
	done.proto = NETLAT_RX_UDP;
	netlat_rxt_trim(f);
	raw_spin_unlock_irqrestore(&f->lock, flags);
	if (lost)
		netlat_hist_count(NETLAT_HC_RX_UNTRACKED, lost);
	netlat_rxt_end_all(sk, &done, 1, now, 0, true, &wk);
	return queued;
}
NOKPROBE_SYMBOL(netlat_rxtrack_copy_udp);

/*
 * skb:kfree_skb of a received skb, with its headers' protocol and (TCP)
 * sequence: the packet that just arrived on this CPU?
 */
notrace void netlat_rxtrack_drop(const struct sk_buff *skb, u8 proto, u32 seq,
				 u32 reason)
{
	struct netlat_rxt_hint *hint = this_cpu_ptr(&netlat_rxt_hint);
	struct netlat_rxt_flow *tbl, *f;
	struct netlat_rxt_end done;
	const struct sock *sk;
	struct netlat_rxt_pkt *p;
	unsigned long flags;
	bool found = false;

	if (hint->skb != (unsigned long)skb || hint->proto != proto ||
	    (proto == NETLAT_RX_TCP && hint->seq != seq))
		return;
	hint->skb = 0;
	tbl = netlat_rxt_tbl_get();
	if (!tbl || tbl != hint->tbl)
		return;
	f = &tbl[hint->flow];
	sk = hint->sk;
	if (!netlat_rxt_lock(f, sk, &flags))
		return;
	p = netlat_rxt_at(f, hint->idx);
	/* still in the FIFO, the same packet, not ended meanwhile */
	if (hint->idx - f->head < f->tail - f->head &&
	    p->skb == (unsigned long)skb && !p->done) {
		p->done = true;
		p->flags |= NETLAT_RXP_DROPPED;
		done.p = *p;
		done.proto = proto;
		found = true;
		netlat_rxt_trim(f);
	}
	raw_spin_unlock_irqrestore(&f->lock, flags);
	if (found)
		netlat_rxt_end_all(sk, &done, 1, ktime_get_mono_fast_ns(),
				   reason, false, NULL);
}
NOKPROBE_SYMBOL(netlat_rxtrack_drop);

/* The socket is destroyed: its packets end uncopied, its slot frees. */
notrace void netlat_rxtrack_close(const struct sock *sk)
{
	struct netlat_rxt_flow *tbl = netlat_rxt_tbl_get();
	struct netlat_rxt_flow *f = tbl ? netlat_rxt_slot(tbl, sk) : NULL;
	u8 proto = sk->sk_protocol == IPPROTO_TCP ? NETLAT_RX_TCP :
						    NETLAT_RX_UDP;
	struct netlat_rxt_end done[NETLAT_RXT_BATCH];
	u64 now = ktime_get_mono_fast_ns();
	unsigned long flags;
	unsigned int n;

	if (!f)
		return;
	for (;;) {
		if (!netlat_rxt_lock(f, sk, &flags))
			return;
		for (n = 0; f->head != f->tail && n < NETLAT_RXT_BATCH;
		     f->head++) {
			struct netlat_rxt_pkt *p = netlat_rxt_at(f, f->head);

			if (p->done)
				continue;
			p->done = true;
			p->flags |= NETLAT_RXP_CLOSED;
			done[n].p = *p;
			done[n++].proto = proto;
		}
		if (f->head == f->tail && !n) {
			/* stale (no generation is 0): the next socket asks */
			WRITE_ONCE(f->verdict, 0);
			/* a new socket may take the slot from now on */
			smp_store_release(&f->sk, NULL);
			raw_spin_unlock_irqrestore(&f->lock, flags);
			return;
		}
		raw_spin_unlock_irqrestore(&f->lock, flags);
		netlat_rxt_end_all(sk, done, n, now, 0, false, NULL);
	}
}
NOKPROBE_SYMBOL(netlat_rxtrack_close);

notrace void netlat_rxtrack_wait_untracked(void)
{
	if (netlat_rxtrack_packets())
		netlat_hist_count(NETLAT_HC_RX_WAIT_UNTRACKED, 1);
}
NOKPROBE_SYMBOL(netlat_rxtrack_wait_untracked);

/* ---- process context ---- */

static struct netlat_rxt_flow *netlat_rxt_alloc(void)
{
	struct netlat_rxt_flow *tbl;
	unsigned int i;

	tbl = vzalloc(array_size(NETLAT_RXT_FLOWS, sizeof(*tbl)));
	if (!tbl)
		return NULL;
	for (i = 0; i < NETLAT_RXT_FLOWS; i++)
		raw_spin_lock_init(&tbl[i].lock);
	return tbl;
}

/*
 * Replace the table by @tbl (NULL: none). Packets in the old one are not
 * followed to their end and leave no record. Under the mutex.
 */
static void netlat_rxt_replace(struct netlat_rxt_flow *tbl)
{
	struct netlat_rxt_flow *old;

	old = rcu_dereference_protected(netlat_rxt_tbl,
					lockdep_is_held(&netlat_rxtrack_mutex));
	rcu_assign_pointer(netlat_rxt_tbl, tbl);
	if (!old)
		return;
	/* no handler is inside the old table once this returns */
	synchronize_rcu();
	vfree(old);
}

/* The group goes on: a table to follow packets in (none if no memory). */
void netlat_rxtrack_start(void)
{
	mutex_lock(&netlat_rxtrack_mutex);
	if (!rcu_access_pointer(netlat_rxt_tbl))
		netlat_rxt_replace(netlat_rxt_alloc());
	mutex_unlock(&netlat_rxtrack_mutex);
}

void netlat_rxtrack_stop(void)
{
	mutex_lock(&netlat_rxtrack_mutex);
	netlat_rxt_replace(NULL);
	mutex_unlock(&netlat_rxtrack_mutex);
}

void netlat_rxtrack_set_level(u32 level)
{
	lockdep_assert_held(&netlat_lock);
	mutex_lock(&netlat_rxtrack_mutex);
	if (level != READ_ONCE(netlat_rxtrack_level)) {
		WRITE_ONCE(netlat_rxtrack_level, level);
		/* nothing followed at one level ends at the other */
		if (rcu_access_pointer(netlat_rxt_tbl))
			netlat_rxt_replace(netlat_rxt_alloc());
	}
	mutex_unlock(&netlat_rxtrack_mutex);
}

/* Sockets followed now (a racy count, for reports). */
u64 netlat_rxtrack_flows(void)
{
	struct netlat_rxt_flow *tbl;
	unsigned int i;
	u64 n = 0;

	rcu_read_lock_sched();
	tbl = netlat_rxt_tbl_get();
	for (i = 0; tbl && i < NETLAT_RXT_FLOWS; i++)
		n += !!READ_ONCE(tbl[i].sk);
	rcu_read_unlock_sched();
	return n;
}

u64 netlat_rxtrack_mem_bytes(void)
{
	return rcu_access_pointer(netlat_rxt_tbl) ?
	       PAGE_ALIGN(NETLAT_RXT_FLOWS * sizeof(struct netlat_rxt_flow)) :
	       0;
}

unsigned int netlat_rxtrack_max_flows(void)
{
	return NETLAT_RXT_FLOWS;
}

unsigned int netlat_rxtrack_max_pkts(void)
{
	return NETLAT_RXT_PKTS;
}
