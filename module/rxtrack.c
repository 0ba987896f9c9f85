// SPDX-License-Identifier: GPL-2.0
/*
 * The receive table (see rxtrack.h), on the socket table core (sktbl.h):
 * each socket receiving has an entry, each packet a slot until it ends,
 * in arrival order; both from the table's share of the budget. A socket
 * that finds no entry, or a packet that finds no slot (NETLAT_RXTRACK_PKTS
 * queued, or the pool empty), is not followed and is counted
 * (rx_untracked, rx_flows_full, rx_no_mem); the data path never waits.
 * Sockets and skbs are keys, never written or dereferenced. An entry is
 * freed with its socket, at a level or budget change and when the group
 * goes on again; an idle one may go to a new socket. The rules are asked
 * once per socket (again after they change): one kept out keeps its
 * entry, where its hooks stop, and its packets count as filtered.
 *
 * A packet ends: TCP, when copied_seq passes its last byte (the copy is
 * in order, whatever order the segments came in); UDP, when
 * skb_consume_udp() consumes its skb (older datagrams still queued were
 * dropped unseen: they end unfollowed, in rx_untracked); or at a drop.
 * A drop (skb:kfree_skb) names only the skb: the drops that matter come
 * right after the arrival on the same CPU (receive buffer or backlog
 * full, out-of-order memory, filters), so each CPU keeps a hint of its
 * last arrival and a drop of that skb ends that packet.
 *
 * Concurrency: the entry's raw spinlock, interrupts off, for a bounded
 * scan; records are written outside it. The table is replaced under its
 * home's mutex and freed after a grace period (handlers run
 * non-preemptible, RCU-sched, and read the table once).
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
#include "keys.h"
#include "record.h"
#include "filter.h"
#include "probes.h"
#include "pkt.h"
#include "tracktbl.h"
#include "sktbl.h"

#define NETLAT_RXTRACK_PKTS		4096	/* queued per socket */
#define NETLAT_RXTRACK_QUEUE_SCAN	32	/* newest packets a queue event looks at */

struct netlat_rxtrack_pkt {
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
	u32 tsval, tsecr;		/* TCP's timestamps option, 0: none */
};

/* A socket's entry; its packets are in the core's FIFO. */
struct netlat_rxtrack_flow {
	struct netlat_skt_ent e;
	u32 next_q;		/* after the last one queued in order: a guess */
	/*
	 * netlat_sk_id() of the socket, taken when it claimed the entry: a
	 * SipHash, once per socket instead of once per packet record. (Its
	 * addresses are read from the socket at each record: kept here they
	 * would halve the entries the budget holds.)
	 */
	u64 cookie;
};

/*
 * The last arrival this CPU saw: what a drop right after it ends. One
 * that sampling left out has no slot (@unsampled): its @len bytes and its
 * socket's @key say what to take back from the counts.
 */
struct netlat_rxtrack_hint {
	unsigned long skb;
	const struct netlat_skt *tbl;
	const struct sock *sk;
	u32 flow;
	u32 idx;
	u32 seq;
	u32 len;
	u32 key;
	u8 proto;
	bool unsampled;
	bool queued;		/* taken as queued in order at its arrival */
};

/*
 * What the records of a socket's packets need of its entry, copied under
 * its lock once for the packets one hold ends: its flow, verdict and key.
 */
struct netlat_rxtrack_who {
	u64 cookie;
	u64 verdict;
	u32 key;		/* its histograms (keys.c) */
	u8 proto;
};

static __always_inline void netlat_rxtrack_who(struct netlat_rxtrack_who *who,
					       const struct netlat_skt_ent *f,
					       u8 proto)
{
	who->cookie = container_of(f, struct netlat_rxtrack_flow, e)->cookie;
	who->verdict = f->verdict;
	who->key = f->key;
	who->proto = proto;
}

static const struct netlat_rxtrack_wake netlat_rxtrack_no_wake;

u32 netlat_rxtrack_level;
static DEFINE_PER_CPU(struct netlat_rxtrack_hint, netlat_rxtrack_hint);

/* @e taken by @sk (entry locked): its cookie, once. */
static notrace void netlat_rxtrack_refresh(struct netlat_skt_ent *e,
				       const struct sock *sk, u64 v,
				       bool claimed)
{
	struct netlat_rxtrack_flow *rf = container_of(e, struct netlat_rxtrack_flow, e);

	if (claimed)
		rf->cookie = 0;
	if (!rf->cookie && !(v & NETLAT_SKT_OUT))
		rf->cookie = netlat_sk_id(sk);
}
NOKPROBE_SYMBOL(netlat_rxtrack_refresh);

static u64 netlat_rxtrack_left(struct netlat_skt *t, struct netlat_skt_ent *e);

static const struct netlat_skt_type netlat_rxtrack_type = {
	.ent_size = sizeof(struct netlat_rxtrack_flow),
	.max_pkts = NETLAT_RXTRACK_PKTS,
	.groups = NETLAT_PROBE_RX,
	.rec_group = NETLAT_PROBE_RX,
	.refresh = netlat_rxtrack_refresh,
	.left = netlat_rxtrack_left,
	.no_entry = NETLAT_HC_RX_FLOWS_FULL,
	.evicted = NETLAT_HC_RX_EVICTED,
	.untracked = NETLAT_HC_RX_UNTRACKED,
};

/* The receive table's share of the budget: 3/8. */
NETLAT_SKT_HOME(netlat_rxtrack_home, &netlat_rxtrack_type, 3);

/*
 * The entry of @sk if the table follows it, claiming one if @create;
 * NULL if none. *@out, if asked: the filters keep @sk out.
 */
static __always_inline struct netlat_skt_ent *
netlat_rxtrack_find_out(struct netlat_skt *t, const struct sock *sk, bool create,
		    bool *out)
{
	return t ? netlat_skt_find(t, sk, create, out) : NULL;
}

/* The packet at cursor @c. */
static __always_inline struct netlat_rxtrack_pkt *
netlat_rxtrack_at(struct netlat_skt *t, const struct netlat_skt_cur *c)
{
	return netlat_skt_slot(t, c);
}

/* Moves the FIFO's head past the packets that ended. Entry locked. */
static notrace void netlat_rxtrack_trim(struct netlat_skt *t,
				    struct netlat_skt_ent *f)
{
	struct netlat_skt_cur c;

	while (netlat_skt_first(f, &c) && netlat_rxtrack_at(t, &c)->done)
		netlat_skt_pop(t, f);
}
NOKPROBE_SYMBOL(netlat_rxtrack_trim);

/*
 * Whether the packet level joins a received packet's stages: at the
 * event level the table keeps every packet (RX_COPY reads their
 * queueing); UDP has no sequence space to sample.
 */
static __always_inline bool netlat_rxtrack_sampled(u8 proto, u32 seq, u32 len)
{
	return proto != NETLAT_RX_TCP || !netlat_rxtrack_packets() ||
	       netlat_track_sampled_range(seq, seq + len);
}

/*
 * A TCP packet of entry @f (locked) that sampling leaves out: counted as
 * copied now, with no slot; a drop right after its arrival (its hint)
 * takes it back.
 */
static notrace void netlat_rxtrack_unsampled(struct netlat_skt *t,
					 struct netlat_skt_ent *f,
					 const struct sock *sk,
					 const struct sk_buff *skb, u32 seq,
					 u32 len)
{
	struct netlat_rxtrack_hint *hint = this_cpu_ptr(&netlat_rxtrack_hint);
	struct netlat_hist_cpu __percpu *key = netlat_keys_set(f->key, 1);

	netlat_hist_count_key(key, NETLAT_HC_RX_PACKETS, 1);
	netlat_hist_count_key(key, NETLAT_HC_RX_BYTES, len);
	netlat_hist_count(NETLAT_HC_RX_UNSAMPLED, 1);
	hint->skb = (unsigned long)skb;
	hint->tbl = t;
	hint->sk = sk;
	hint->flow = netlat_skt_index(t, f);
	hint->seq = seq;
	hint->len = len;
	hint->key = f->key;
	hint->proto = NETLAT_RX_TCP;
	hint->unsampled = true;
}
NOKPROBE_SYMBOL(netlat_rxtrack_unsampled);

/*
 * A received packet arrives at its socket's transport; @queued: where
 * TCP queues it in this same softirq (NETLAT_RX_Q_IN_ORDER: in order at
 * the packet level, which has no hook of its own there), else 0.
 */
notrace void netlat_rxtrack_arrive_at(struct netlat_skt *t,
				      struct netlat_skt_ent *f,
				      const struct sock *sk,
				      const struct sk_buff *skb, u8 proto,
				      u32 seq, u32 len, u8 queued, u64 *now)
{
	struct netlat_rxtrack_hint *hint;
	struct netlat_rxtrack_pkt *p;
	enum netlat_skt_full why;
	unsigned long flags;

	if (!netlat_skt_lock(f, sk, &flags)) {
		netlat_hist_count(NETLAT_HC_RX_UNTRACKED, 1);
		return;
	}
	netlat_rxtrack_trim(t, f);
	if (!netlat_rxtrack_sampled(proto, seq, len)) {
		netlat_rxtrack_unsampled(t, f, sk, skb, seq, len);
		this_cpu_write(netlat_rxtrack_hint.queued, !!queued);
		netlat_skt_unlock(f, flags);
		return;
	}
	p = netlat_skt_push(t, f, &why);
	if (!p) {
		netlat_skt_unlock(f, flags);
		netlat_hist_count(NETLAT_HC_RX_UNTRACKED, 1);
		if (why == NETLAT_SKT_FULL_MEM)
			netlat_hist_count(NETLAT_HC_RX_NO_MEM, 1);
		return;
	}
	p->skb = (unsigned long)skb;
	p->seq = seq;
	p->len = len;
	p->transport_ns = netlat_now(now);
	/* the stamp's conversion only for a packet the table follows */
	p->netif_ns = netlat_skb_rx_mono(skb);
	if (p->netif_ns)
		p->flags = NETLAT_RXP_NETIF;
	p->segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	if (proto == NETLAT_RX_TCP)
		netlat_skb_ts(skb, &p->tsval, &p->tsecr);
	/* a drop instead takes this back (netlat_rxtrack_drop()) */
	if (queued) {
		p->flags |= NETLAT_RXP_QUEUED;
		p->where = queued;
		p->queue_ns = p->transport_ns;
		p->rmem = atomic_read(&sk->sk_rmem_alloc);
		p->rcvbuf = READ_ONCE(sk->sk_rcvbuf);
	}
	hint = this_cpu_ptr(&netlat_rxtrack_hint);
	hint->skb = (unsigned long)skb;
	hint->tbl = t;
	hint->sk = sk;
	hint->flow = netlat_skt_index(t, f);
	hint->idx = f->tail - 1;
	hint->seq = seq;
	hint->proto = proto;
	hint->unsampled = false;
	hint->queued = !!queued;
	netlat_skt_unlock(f, flags);
}
NOKPROBE_SYMBOL(netlat_rxtrack_arrive_at);

/* Is @p the packet queued (a UDP one by its skb, a TCP one by its start)? */
static __always_inline bool netlat_rxtrack_is(const struct netlat_rxtrack_pkt *p,
					  const struct sk_buff *skb, u8 proto, u32 seq)
{
	return !p->done && (proto == NETLAT_RX_UDP ?
			    p->skb == (unsigned long)skb : p->seq == seq);
}

/* The packet at position @pos of @f if it is the one queued; else NULL. */
static notrace struct netlat_rxtrack_pkt *
netlat_rxtrack_queued_at(struct netlat_skt *t, struct netlat_skt_ent *f, u32 pos,
		     const struct sk_buff *skb, u8 proto, u32 seq)
{
	struct netlat_rxtrack_pkt *p = netlat_skt_at(t, f, pos);

	return p && netlat_rxtrack_is(p, skb, proto, seq) ? p : NULL;
}
NOKPROBE_SYMBOL(netlat_rxtrack_queued_at);

/*
 * The packet of @f being queued (@where). Queueing follows the arrival
 * closely: on this CPU it is the last arrival (its hint, no walk); a
 * backlog drained later queues in order, the one after the last queued in
 * order; else one of the newest packets.
 */
static notrace struct netlat_rxtrack_pkt *
netlat_rxtrack_queued(struct netlat_skt *t, struct netlat_skt_ent *f,
		  const struct netlat_rxtrack_hint *hint, const struct sk_buff *skb,
		  u8 proto, u32 seq, u8 where)
{
	struct netlat_rxtrack_flow *rf = container_of(f, struct netlat_rxtrack_flow, e);
	struct netlat_rxtrack_pkt *p;
	struct netlat_skt_cur c;
	bool more;
	u32 n;

	c.pos = hint ? hint->idx : rf->next_q;
	p = netlat_rxtrack_queued_at(t, f, c.pos, skb, proto, seq);
	if (!p && hint) {
		c.pos = rf->next_q;
		p = netlat_rxtrack_queued_at(t, f, c.pos, skb, proto, seq);
	}
	for (more = !p && netlat_skt_last(f, &c), n = 0;
	     more && n < NETLAT_RXTRACK_QUEUE_SCAN;
	     more = netlat_skt_prev(t, f, &c), n++) {
		p = netlat_rxtrack_at(t, &c);
		if (netlat_rxtrack_is(p, skb, proto, seq))
			break;
		p = NULL;
	}
	if (p && where == NETLAT_RX_Q_IN_ORDER)
		rf->next_q = c.pos + 1;
	return p;
}
NOKPROBE_SYMBOL(netlat_rxtrack_queued);

/*
 * When a packet reached its socket's queue @where: TCP's clock where TCP
 * queues it in order or out of order (netlat_tcp_clock()); a backlog is
 * queued before TCP reads it, and UDP has none: a read of our own.
 */
static notrace u64 netlat_rxtrack_queue_clock(const struct sock *sk, u8 proto,
					  u8 where)
{
	if (proto == NETLAT_RX_TCP && where != NETLAT_RX_Q_BACKLOG)
		return netlat_tcp_clock(sk);
	return ktime_get_mono_fast_ns();
}
NOKPROBE_SYMBOL(netlat_rxtrack_queue_clock);

/* The packet is queued to its socket (@where: NETLAT_RX_Q_*). */
notrace void netlat_rxtrack_queue(const struct sock *sk,
				  const struct sk_buff *skb, u8 proto,
				  u32 seq, u32 len, u8 where)
{
	struct netlat_rxtrack_hint *hint = this_cpu_ptr(&netlat_rxtrack_hint);
	struct netlat_skt *t = netlat_rxtrack_tbl_get();
	struct netlat_skt_ent *f;
	struct netlat_rxtrack_pkt *p;
	unsigned long flags;

	if (!t)
		return;
	/* left out by sampling: no slot; in order, its drops are over */
	if (!netlat_rxtrack_sampled(proto, seq, len)) {
		if (where == NETLAT_RX_Q_IN_ORDER &&
		    hint->skb == (unsigned long)skb)
			hint->skb = 0;
		return;
	}
	/* the arrival on this CPU names the entry: no lookup */
	f = hint->tbl == t && hint->sk == sk ? netlat_skt_ent(t, hint->flow) :
					       NULL;
	if (!f || !netlat_skt_lock(f, sk, &flags)) {
		hint = NULL;
		f = netlat_skt_find(t, sk, false, NULL);
		if (!f || !netlat_skt_lock(f, sk, &flags))
			return;
	}
	p = netlat_rxtrack_queued(t, f, hint, skb, proto, seq, where);
	if (!p)
		goto unlock;
	if (where == NETLAT_RX_Q_OFO)
		p->flags |= NETLAT_RXP_OFO;
	else if (where == NETLAT_RX_Q_BACKLOG)
		p->flags |= NETLAT_RXP_BACKLOG;
	/*
	 * In order, TCP drops it no more, and may free its skb into the one
	 * before: no later free of that address is its drop.
	 */
	if (proto == NETLAT_RX_TCP && where == NETLAT_RX_Q_IN_ORDER &&
	    __this_cpu_read(netlat_rxtrack_hint.skb) == p->skb)
		__this_cpu_write(netlat_rxtrack_hint.skb, 0);
	/* the first queue is where the wait for the reader begins */
	if (!(p->flags & NETLAT_RXP_QUEUED)) {
		p->flags |= NETLAT_RXP_QUEUED;
		p->where = where;
		p->queue_ns = netlat_rxtrack_queue_clock(sk, proto, where);
		p->rmem = atomic_read(&sk->sk_rmem_alloc);
		p->rcvbuf = READ_ONCE(sk->sk_rcvbuf);
	}
unlock:
	netlat_skt_unlock(f, flags);
}
NOKPROBE_SYMBOL(netlat_rxtrack_queue);

/*
 * A packet's life ended at @end_ns (packet level): histograms, counters,
 * its record. @pid, @tid: the reader that copied it, or 0; @wk: its
 * wakeup (all 0: none).
 */
static notrace void netlat_rxtrack_end(const struct sock *sk,
				   const struct netlat_rxtrack_who *who,
				   const struct netlat_rxtrack_pkt *p, u64 end_ns,
				   u32 reason, u32 pid, u32 tid,
				   const struct netlat_rxtrack_wake *wk)
{
	struct netlat_rec_rx_pkt *r;
	struct netlat_writer w __uninitialized;

	if (p->flags & NETLAT_RXP_COPIED) {
		struct netlat_hist_cpu __percpu *key = netlat_keys_set(who->key, 1);
		u64 slow_ns = netlat_track_slow_ns(), slow;

		/* its longest stage: only the slow ones leave a record */
		slow = netlat_hist_span_key(key, who->proto == NETLAT_RX_TCP ?
					    NETLAT_STAGE_RX_NETIF_TCP :
					    NETLAT_STAGE_RX_NETIF_UDP,
					    p->netif_ns, p->transport_ns);
		if (who->proto == NETLAT_RX_TCP)
			slow = max(slow, netlat_hist_span_key(key,
					NETLAT_STAGE_RX_TCP_QUEUE,
					p->transport_ns, p->queue_ns));
		slow = max(slow, netlat_hist_span_key(key,
				NETLAT_STAGE_RX_QUEUE_USER, p->queue_ns, end_ns));
		slow = max(slow, netlat_hist_span_key(key,
				NETLAT_STAGE_RX_NETIF_USER, p->netif_ns, end_ns));
		slow = max(slow, netlat_hist_span_key(key,
				NETLAT_STAGE_RX_READY_WAKEUP, wk->ready_ns,
				wk->wakeup_ns));
		slow = max(slow, netlat_hist_span_key(key,
				NETLAT_STAGE_RX_WAKEUP_RUN, wk->wakeup_ns,
				wk->run_ns));
		netlat_hist_count_key(key, NETLAT_HC_RX_PACKETS, 1);
		netlat_hist_count_key(key, NETLAT_HC_RX_BYTES, p->len);
		/* with no threshold, every one */
		if (slow_ns && slow < slow_ns)
			return;
	} else if (p->flags & NETLAT_RXP_DROPPED) {
		netlat_hist_count(NETLAT_HC_RX_DROPPED, 1);
	} else if (p->flags & NETLAT_RXP_CLOSED) {
		netlat_hist_count(NETLAT_HC_RX_CLOSED, 1);
	}
	/* the socket's verdict, unless a rule reads the hit's task */
	if (who->verdict & NETLAT_SKT_PER_HIT) {
		struct netlat_flow flow = { .cookie = who->cookie };

		netlat_sk_addrs(&flow, sk);
		if (!netlat_filter_keep_sk(NETLAT_PROBE_RX, sk, &flow))
			return;
	}
	r = netlat_reserve_zeroed_at(&w, NETLAT_REC_RX_PKT, sizeof(*r), end_ns);
	if (!r)
		return;
	/* zeroed: the addresses a family leaves unused stay 0 */
	netlat_sk_addrs(&r->flow, sk);
	r->flow.cookie = who->cookie;
	r->netif_ns = p->netif_ns;
	r->transport_ns = p->transport_ns;
	r->queue_ns = p->queue_ns;
	r->end_ns = end_ns;
	if (who->proto == NETLAT_RX_TCP) {
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
	r->proto = who->proto;
	r->where = p->where;
	r->flags = p->flags;
	r->ready_ns = wk->ready_ns;
	r->wakeup_ns = wk->wakeup_ns;
	r->run_ns = wk->run_ns;
	r->tsval = p->tsval;
	r->tsecr = p->tsecr;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_rxtrack_end);

/*
 * Account packets that ended, outside the slot's lock; the first copied
 * one gets the reader's wakeup *@wk (then NULL: one wait, one sample).
 */
static notrace void netlat_rxtrack_end_all(const struct sock *sk,
				       const struct netlat_rxtrack_who *who,
				       const struct netlat_rxtrack_pkt *e,
				       unsigned int n, u64 end_ns, u32 reason,
				       bool reader,
				       const struct netlat_rxtrack_wake **wk)
{
	u32 pid = reader ? current->tgid : 0, tid = reader ? current->pid : 0;
	unsigned int i;

	if (!netlat_rxtrack_packets())
		return;
	for (i = 0; i < n; i++) {
		const struct netlat_rxtrack_wake *x = &netlat_rxtrack_no_wake;

		if (wk && *wk && (e[i].flags & NETLAT_RXP_COPIED)) {
			x = *wk;
			*wk = NULL;
		}
		netlat_rxtrack_end(sk, who, &e[i], end_ns, reason, pid, tid, x);
	}
}
NOKPROBE_SYMBOL(netlat_rxtrack_end_all);

/* What a read's or a close's run of packets needs (netlat_skt_end_run()). */
struct netlat_rxtrack_run {
	struct netlat_rxtrack_pkt done[NETLAT_SKT_BATCH];
	struct netlat_rxtrack_who who;
	const struct sock *sk;
	const struct netlat_rxtrack_wake *wk;
	u64 now, oldest;
	u32 from, to;		/* the bytes read; a copy's to: copied_seq */
	bool reader, peek;	/* reader false: the socket closes */
	u8 proto;
};

/*
 * A packet a read meets (entry locked): one that ended before leaves from
 * the head; one whose last byte it copies ends; one read in part stays.
 */
static __always_inline unsigned int
netlat_rxtrack_read_end(struct netlat_skt_ent *e, void *slot, void *arg,
			unsigned int n)
{
	struct netlat_rxtrack_run *r = arg;
	struct netlat_rxtrack_pkt *p = slot;
	u32 end = p->seq + p->len;
	unsigned int i;

	if (p->done)
		return NETLAT_SKT_POP;
	if (!after(end, r->from) || !before(p->seq, r->to))
		return 0;
	if (r->peek) {
		p->flags |= NETLAT_RXP_PEEKED;
		return 0;
	}
	if ((p->flags & NETLAT_RXP_QUEUED) &&
	    (!r->oldest || p->queue_ns < r->oldest))
		r->oldest = p->queue_ns;
	if (after(end, r->to))
		return 0;	/* its last byte is still queued */
	p->done = true;
	/*
	 * The same bytes twice in a batch: the second is a resent segment TCP
	 * dropped in the backlog, a drop the arrival hint (gone) did not see.
	 */
	for (i = 0; i < n; i++)
		if ((r->done[i].flags & NETLAT_RXP_COPIED) &&
		    r->done[i].seq == p->seq && r->done[i].len == p->len)
			break;
	p->flags |= i < n ? NETLAT_RXP_DROPPED : NETLAT_RXP_COPIED;
	return NETLAT_SKT_TAKE | NETLAT_SKT_POP;
}

/* A close's walk: every packet leaves; one not ended yet ends uncopied. */
static __always_inline unsigned int
netlat_rxtrack_close_end(struct netlat_skt_ent *e, void *slot, void *arg,
			 unsigned int n)
{
	struct netlat_rxtrack_pkt *p = slot;

	if (p->done)
		return NETLAT_SKT_POP;
	p->done = true;
	p->flags |= NETLAT_RXP_CLOSED;
	return NETLAT_SKT_TAKE | NETLAT_SKT_POP;
}

static __always_inline void netlat_rxtrack_read_held(struct netlat_skt *t,
						     struct netlat_skt_ent *e,
						     void *arg, unsigned int n)
{
	struct netlat_rxtrack_run *r = arg;

	if (n)
		netlat_rxtrack_who(&r->who, e, r->proto);
}

static __always_inline void netlat_rxtrack_close_held(struct netlat_skt *t,
						      struct netlat_skt_ent *e,
						      void *arg, unsigned int n)
{
	netlat_rxtrack_read_held(t, e, arg, n);
	/* all gone: a new socket may take the entry from now on */
	if (!netlat_skt_len(e))
		netlat_skt_release(t, e);
}

static __always_inline void netlat_rxtrack_run_account(void *arg,
						       unsigned int n)
{
	struct netlat_rxtrack_run *r = arg;

	/* a read's clock only for packets it ends */
	if (n)
		netlat_rxtrack_end_all(r->sk, &r->who, r->done, n,
				       netlat_now(&r->now), 0, r->reader,
				       &r->wk);
}

/* netlat_rxtrack_copy_tcp() (rxtrack.h) of a socket with packets queued. */
notrace u64 netlat_rxtrack_copy_tcp_at(struct netlat_skt *t,
				       struct netlat_skt_ent *f,
				       const struct sock *sk, u32 copied,
				       u32 bytes, bool peek,
				       const struct netlat_rxtrack_wake *wk)
{
	struct netlat_rxtrack_run r __uninitialized;

	r.sk = sk;
	r.wk = wk;
	r.now = r.oldest = 0;
	r.from = peek ? copied : copied - bytes;
	r.to = peek ? copied + bytes : copied;
	r.reader = true;
	r.peek = peek;
	r.proto = NETLAT_RX_TCP;
	netlat_skt_end_run(t, f, sk, r.done, sizeof(r.done[0]),
			   netlat_rxtrack_read_end, netlat_rxtrack_read_held,
			   netlat_rxtrack_run_account, &r);
	return peek ? 0 : r.oldest;
}
NOKPROBE_SYMBOL(netlat_rxtrack_copy_tcp_at);

/* skb_consume_udp(): the datagram @skb was copied (or peeked). */
notrace u64 netlat_rxtrack_copy_udp(const struct sock *sk,
				    const struct sk_buff *skb, bool peek,
				    const struct netlat_rxtrack_wake *wk)
{
	struct netlat_skt *t = netlat_rxtrack_tbl_get();
	struct netlat_skt_ent *f = netlat_rxtrack_find_out(t, sk, false, NULL);
	struct netlat_rxtrack_pkt *p = NULL;
	struct netlat_skt_cur c;
	struct netlat_rxtrack_pkt done __uninitialized;
	struct netlat_rxtrack_who who __uninitialized;
	unsigned long flags;
	u64 now, queued = 0;
	u32 lost = 0;
	bool more;

	if (!f)
		return 0;
	now = ktime_get_mono_fast_ns();
	if (!netlat_skt_lock(f, sk, &flags))
		return 0;
	for (more = netlat_skt_first(f, &c); more;
	     more = netlat_skt_next(t, f, &c)) {
		p = netlat_rxtrack_at(t, &c);
		if (!p->done && p->skb == (unsigned long)skb)
			break;
	}
	if (!more) {
		/* not followed (no slot was left when it came) */
		netlat_skt_unlock(f, flags);
		return 0;
	}
	if (peek) {
		p->flags |= NETLAT_RXP_PEEKED;
		netlat_skt_unlock(f, flags);
		return 0;
	}
	/* datagrams queued before it and never read: gone unseen (a drop
	 * the hint missed), unless a peek may read past them */
	for (more = netlat_skt_first(f, &c); more && netlat_rxtrack_at(t, &c) != p;
	     more = netlat_skt_next(t, f, &c)) {
		struct netlat_rxtrack_pkt *o = netlat_rxtrack_at(t, &c);

		if (!o->done && !(o->flags & NETLAT_RXP_PEEKED)) {
			o->done = true;
			lost++;
		}
	}
	p->done = true;
	p->flags |= NETLAT_RXP_COPIED;
	if (p->flags & NETLAT_RXP_QUEUED)
		queued = p->queue_ns;
	done = *p;
	netlat_rxtrack_who(&who, f, NETLAT_RX_UDP);
	netlat_rxtrack_trim(t, f);
	netlat_skt_unlock(f, flags);
	if (lost)
		netlat_hist_count(NETLAT_HC_RX_UNTRACKED, lost);
	netlat_rxtrack_end_all(sk, &who, &done, 1, now, 0, true, &wk);
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
	struct netlat_rxtrack_hint *hint = this_cpu_ptr(&netlat_rxtrack_hint);
	struct netlat_skt_ent *f;
	struct netlat_rxtrack_pkt done __uninitialized;
	struct netlat_rxtrack_who who __uninitialized;
	struct netlat_skt *tbl;
	const struct sock *sk;
	struct netlat_rxtrack_pkt *p;
	unsigned long flags;
	bool found = false;

	if (hint->skb != (unsigned long)skb || hint->proto != proto ||
	    (proto == NETLAT_RX_TCP && hint->seq != seq))
		return;
	hint->skb = 0;
	tbl = netlat_rxtrack_tbl_get();
	if (!tbl || tbl != hint->tbl)
		return;
	/*
	 * Taken as queued at its arrival, and the bytes at @seq accepted
	 * already: this is a duplicate's skb at the address of ours (freed
	 * into the segment before it once queued), not our packet's drop.
	 * A TCP socket's memory stays a TCP socket's (SLAB_TYPESAFE_BY_RCU):
	 * the read is safe even if the socket is gone.
	 */
	if (hint->queued && after(READ_ONCE(tcp_sk(hint->sk)->rcv_nxt), seq))
		return;
	if (hint->unsampled) {
		struct netlat_hist_cpu __percpu *key =
			netlat_keys_set(hint->key, 0);

		/* counted as copied at its arrival: dropped instead */
		netlat_hist_count_key(key, NETLAT_HC_RX_PACKETS, -1ULL);
		netlat_hist_count_key(key, NETLAT_HC_RX_BYTES, -(u64)hint->len);
		netlat_hist_count(NETLAT_HC_RX_UNSAMPLED, -1ULL);
		netlat_hist_count(NETLAT_HC_RX_DROPPED, 1);
		return;
	}
	f = netlat_skt_ent(tbl, hint->flow);
	sk = hint->sk;
	if (!f || !netlat_skt_lock(f, sk, &flags))
		return;
	/* still in the FIFO, the same packet, not ended meanwhile */
	p = netlat_skt_at(tbl, f, hint->idx);
	if (p && p->skb == (unsigned long)skb && !p->done) {
		/*
		 * Taken as queued at its arrival (the packet level, in
		 * order), and dropped instead: it never was.
		 */
		if (p->where == NETLAT_RX_Q_IN_ORDER) {
			p->flags &= ~NETLAT_RXP_QUEUED;
			p->where = 0;
			p->queue_ns = 0;
			p->rmem = 0;
			p->rcvbuf = 0;
		}
		p->done = true;
		p->flags |= NETLAT_RXP_DROPPED;
		done = *p;
		netlat_rxtrack_who(&who, f, proto);
		found = true;
		netlat_rxtrack_trim(tbl, f);
	}
	netlat_skt_unlock(f, flags);
	if (found)
		netlat_rxtrack_end_all(sk, &who, &done, 1,
				       ktime_get_mono_fast_ns(), reason, false,
				       NULL);
}
NOKPROBE_SYMBOL(netlat_rxtrack_drop);

/* The socket is destroyed: its packets end uncopied, its slot frees. */
notrace void netlat_rxtrack_close(const struct sock *sk)
{
	struct netlat_skt *tbl = netlat_rxtrack_tbl_get();
	struct netlat_skt_ent *f = tbl ? netlat_skt_lookup(tbl, sk) : NULL;
	struct netlat_rxtrack_run r __uninitialized;

	if (!f)
		return;
	r.sk = sk;
	r.wk = NULL;
	r.now = ktime_get_mono_fast_ns();
	r.reader = false;
	r.proto = sk->sk_protocol == IPPROTO_TCP ? NETLAT_RX_TCP :
						   NETLAT_RX_UDP;
	netlat_skt_end_run(tbl, f, sk, r.done, sizeof(r.done[0]),
			   netlat_rxtrack_close_end, netlat_rxtrack_close_held,
			   netlat_rxtrack_run_account, &r);
}
NOKPROBE_SYMBOL(netlat_rxtrack_close);

notrace void netlat_rxtrack_wait_untracked(void)
{
	if (netlat_rxtrack_packets())
		netlat_hist_count(NETLAT_HC_RX_WAIT_UNTRACKED, 1);
}
NOKPROBE_SYMBOL(netlat_rxtrack_wait_untracked);

/* ---- process context ---- */

/* A packet not ended yet counts (netlat_skt_type.left). */
static u64 netlat_rxtrack_left(struct netlat_skt *t, struct netlat_skt_ent *e)
{
	struct netlat_skt_cur c;
	bool more;
	u64 n = 0;

	for (more = netlat_skt_first(e, &c); more;
	     more = netlat_skt_next(t, e, &c))
		n += !netlat_rxtrack_at(t, &c)->done;
	return n;
}

/*
 * The table's lifetime is the core's (struct netlat_skt_home); it is
 * wanted while the group is on, at either level (the event level's
 * RX_COPY records read their oldest byte's queueing from it).
 */

/* Under the registry mutex, before its hooks: the group goes on. */
void netlat_rxtrack_start(void)
{
	netlat_probes_assert_held();
	netlat_skt_home_set(&netlat_rxtrack_home, NETLAT_SKT_WANT, true, true);
}

/* Under the registry mutex: the group went off, no handler runs. */
void netlat_rxtrack_stop(void)
{
	netlat_probes_assert_held();
	netlat_skt_home_set(&netlat_rxtrack_home, NETLAT_SKT_DROP, false, true);
}

/*
 * Under netlat_lock: a change of level or budget empties the table. The
 * group's state is the home's to know (a group going on at the same time
 * builds it under the registry's mutex, not this one): decided under the
 * home's lock, held from prepare to commit.
 */
int netlat_rxtrack_prepare(u32 level, u64 budget, struct netlat_skt_next *n)
{
	BUILD_BUG_ON(sizeof(struct netlat_rxtrack_pkt) > NETLAT_SKT_SLOT);
	lockdep_assert_held(&netlat_lock);
	return netlat_skt_home_prepare(&netlat_rxtrack_home, NETLAT_SKT_AS_IS,
				       level != READ_ONCE(netlat_rxtrack_level),
				       budget, n);
}

void netlat_rxtrack_commit(u32 level, struct netlat_skt_next *n)
{
	lockdep_assert_held(&netlat_lock);
	netlat_skt_home_commit(n, false);
	WRITE_ONCE(netlat_rxtrack_level, level);
}

/* The receive family is gone: no handler runs. */
void netlat_rxtrack_exit(void)
{
	WRITE_ONCE(netlat_rxtrack_level, 0);
	netlat_skt_home_set(&netlat_rxtrack_home, NETLAT_SKT_DROP, false, false);
}

/* Sockets followed now (a racy count, for reports). */
u64 netlat_rxtrack_flows(void)
{
	return netlat_skt_home_flows(&netlat_rxtrack_home);
}

/* The table's sockets and packet slots, and its memory (0: no table). */
u64 netlat_rxtrack_capacity(u32 *flows, u32 *pkts)
{
	return netlat_skt_home_capacity(&netlat_rxtrack_home, flows, pkts);
}
