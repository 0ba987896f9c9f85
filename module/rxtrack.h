/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receive table: the RX family hands it each stage of a received TCP
 * segment or UDP datagram (arrival at the transport, queueing, the copy
 * to the application, a drop, the socket's end). It lives while
 * NETLAT_PROBE_RX is on, at both levels: at the events level it only
 * gives the copy its wait (netlat_rec_rx_copy.wait_ns); at the packet
 * level it feeds the histograms and writes one NETLAT_REC_RX_PKT per
 * slow packet, and the RX family writes no per-event record but drops;
 * a blocked reader's wakeup (RX_SCHED) comes with the copy it preceded.
 */
#ifndef _NETLAT_RXTRACK_H
#define _NETLAT_RXTRACK_H

#include <linux/types.h>
#include <linux/compiler.h>
#include "sktbl.h"
#include "hist.h"
#include "filter.h"

struct netlat_skt_next;

struct sock;
struct sk_buff;

/* Nonzero at the packet level. */
extern u32 netlat_rxtrack_level;

static __always_inline bool netlat_rxtrack_packets(void)
{
	return READ_ONCE(netlat_rxtrack_level);
}

/*
 * A blocked reader's wakeup (the RX_SCHED group's wait slot), handed to
 * the copy that follows it: CLOCK_MONOTONIC, 0 where not seen.
 */
struct netlat_rxtrack_wake {
	u64 ready_ns;
	u64 wakeup_ns;
	u64 run_ns;
};

/* The table's home (rxtrack.c); a hook reads the table in force once. */
extern struct netlat_skt_home netlat_rxtrack_home;

static __always_inline struct netlat_skt *netlat_rxtrack_tbl_get(void)
{
	return netlat_skt_home_get(&netlat_rxtrack_home);
}

/*
 * Handlers (any context, preemption off). @proto: NETLAT_RX_TCP or _UDP.
 * An arrival's time is the hook's clock, *@now (netlat_now()); its NIC
 * time the skb's receive stamp. The *_at functions are the work for a
 * socket the table follows (entry @f of table @t): the hooks below find
 * the entry inline first, as the send table's do (track.h).
 */
void netlat_rxtrack_arrive_at(struct netlat_skt *t, struct netlat_skt_ent *f,
			      const struct sock *sk, const struct sk_buff *skb,
			      u8 proto, u32 seq, u32 len, u8 queued, u64 *now);
u64 netlat_rxtrack_copy_tcp_at(struct netlat_skt *t, struct netlat_skt_ent *f,
			       const struct sock *sk, u32 copied, u32 bytes,
			       bool peek, const struct netlat_rxtrack_wake *wk);

/* A packet arrives (@queued: see netlat_rxtrack_arrive_at()'s caller). */
static __always_inline void netlat_rxtrack_arrive(const struct sock *sk,
						  const struct sk_buff *skb,
						  u8 proto, u32 seq, u32 len,
						  u8 queued, u64 *now)
{
	struct netlat_skt *t = netlat_rxtrack_tbl_get();
	struct netlat_skt_ent *f;
	bool out = false;

	/* no table: the group is going off */
	if (!t)
		return;
	f = netlat_skt_find(t, sk, true, &out);
	if (f)
		netlat_rxtrack_arrive_at(t, f, sk, skb, proto, seq, len, queued,
					 now);
	else if (out)
		/* kept out by the filters: its record counts as filtered */
		netlat_filter_kept_out();
	else
		netlat_hist_count(NETLAT_HC_RX_UNTRACKED, 1);
}
void netlat_rxtrack_queue(const struct sock *sk, const struct sk_buff *skb,
			  u8 proto, u32 seq, u32 len, u8 where);
/*
 * tcp_recvmsg() returned @bytes with copied_seq at @copied: the packets
 * whose last byte is before it end. Returns the queue time of the oldest
 * byte copied (0: unknown, or peeked). @wk: the wakeup of the wait
 * before this copy, or NULL (it did not block).
 */
static __always_inline u64 netlat_rxtrack_copy_tcp(const struct sock *sk,
						   u32 copied, u32 bytes,
						   bool peek,
						   const struct netlat_rxtrack_wake *wk)
{
	struct netlat_skt *t = netlat_rxtrack_tbl_get();
	struct netlat_skt_ent *f = t ? netlat_skt_find(t, sk, false, NULL) : NULL;

	/*
	 * No packet of the socket's in the table (sampling left them out,
	 * or the table could not follow them): nothing to end, no lock, no
	 * clock. Every packet this copy could end was put in before TCP
	 * queued its bytes, and the reader took the socket's lock since.
	 */
	if (!f || READ_ONCE(f->head) == READ_ONCE(f->tail))
		return 0;
	return netlat_rxtrack_copy_tcp_at(t, f, sk, copied, bytes, peek, wk);
}
u64 netlat_rxtrack_copy_udp(const struct sock *sk, const struct sk_buff *skb,
			    bool peek, const struct netlat_rxtrack_wake *wk);
void netlat_rxtrack_drop(const struct sk_buff *skb, u8 proto, u32 seq,
			 u32 reason);
void netlat_rxtrack_close(const struct sock *sk);
/* A blocked reader's wait that could not be followed (no wait slot). */
void netlat_rxtrack_wait_untracked(void);

/* Process context: the RX group goes on (before its hooks) or went off. */
void netlat_rxtrack_start(void);
void netlat_rxtrack_stop(void);
/*
 * Under netlat_lock (checked): a change of level or of the budget
 * @budget (netlat_config.table_bytes) empties the table; in two halves
 * as netlat_track_prepare() and _commit().
 */
int netlat_rxtrack_prepare(u32 level, u64 budget, struct netlat_skt_next *n);
void netlat_rxtrack_commit(u32 level, struct netlat_skt_next *n);
/* The receive family is gone. */
void netlat_rxtrack_exit(void);
u64 netlat_rxtrack_flows(void);
u64 netlat_rxtrack_capacity(u32 *flows, u32 *pkts);

#endif /* _NETLAT_RXTRACK_H */
