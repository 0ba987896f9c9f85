// SPDX-License-Identifier: GPL-2.0
/*
 * The send table's life (see track.h for its stages): the verdict, the
 * identity and the counters of each socket's entry, an idle entry's
 * eviction, the table's renewal when the level, the budget or a group
 * changes (netlat_skt_home), its configuration, and the figures and
 * NETLAT_IOC_FLOWS that read it from process context.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/timekeeping.h>
#include <linux/log2.h>
#include <net/sock.h>
#include <net/tcp.h>
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


u32 netlat_track_level;
u64 netlat_track_slow;
/* log2 of netlat_config.sample x NETLAT_SAMPLE_UNIT; 0: every packet */
u32 netlat_track_sample_shift;
u32 netlat_track_acks;

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
	if (!(v & NETLAT_SKT_OUT) && !f->ident) {
		/* the identity's cookie is a SipHash: only for one followed */
		memset(&f->id, 0, sizeof(f->id));
		netlat_sk_flow(&f->id, sk);
		netlat_flow_counts_start(&f->c);
		WRITE_ONCE(f->driver_range, 0);
		f->ident = true;
	} else if (v & NETLAT_SKT_OUT) {
		f->ident = false;
		f->send_next = 0;
	}
}
NOKPROBE_SYMBOL(netlat_track_refresh);
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

/* A socket with an entry is followed once it has its identity. */
static bool netlat_track_followed(const struct netlat_skt_ent *e)
{
	return READ_ONCE(container_of(e, struct netlat_track_flow, e)->ident);
}

static u64 netlat_track_left(struct netlat_skt *t, struct netlat_skt_ent *e);
static void netlat_track_carry(struct netlat_skt *old, struct netlat_skt *t,
			       u64 left);

static const struct netlat_skt_type netlat_track_type = {
	.ent_size = sizeof(struct netlat_track_flow),
	.max_pkts = NETLAT_TRACK_PKTS,
	/* the packet records are the ACK group's */
	.groups = NETLAT_TRACK_GROUPS,
	.rec_group = NETLAT_PROBE_TCP_ACK,
	.refresh = netlat_track_refresh,
	.busy = netlat_track_busy,
	.evict = netlat_track_evict,
	.left = netlat_track_left,
	.carry = netlat_track_carry,
	.followed = netlat_track_followed,
	.priv_size = sizeof(struct netlat_flows_closed),
	.priv_init = netlat_flows_closed_init,
	.no_entry = NETLAT_HC_FLOWS_FULL,
	.evicted = NETLAT_HC_EVICTED,
	.untracked = NETLAT_HC_UNTRACKED,
};

/* The send table's share of the budget: 5/8. */
NETLAT_SKT_HOME(netlat_track_home, &netlat_track_type, 5);


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
	netlat_probes_assert_held();
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

void netlat_track_set_acks(u32 acks)
{
	lockdep_assert_held(&netlat_lock);
	WRITE_ONCE(netlat_track_acks, acks);
}

u32 netlat_track_sample(void)
{
	u32 shift = READ_ONCE(netlat_track_sample_shift);

	return shift ? 1U << (shift - ilog2(NETLAT_SAMPLE_UNIT)) : 0;
}

/* Sockets followed now (a racy count, for reports). */
u64 netlat_track_flows(void)
{
	return netlat_skt_home_flows(&netlat_track_home);
}

/*
 * The table's sockets and packet slots (0 below the packet level); its
 * memory with the histograms'.
 */
u64 netlat_track_capacity(u32 *flows, u32 *pkts)
{
	return netlat_hist_mem_bytes() +
	       netlat_skt_home_capacity(&netlat_track_home, flows, pkts);
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
