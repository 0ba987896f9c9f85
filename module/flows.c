// SPDX-License-Identifier: GPL-2.0
/*
 * Each socket's counters, the ring of closed sockets and NETLAT_IOC_FLOWS
 * (see flows.h). The counters live in the send table's entries, the ring
 * in that table's own state: this unit owns their shape and how they add
 * up, the table when and under which lock.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/kprobes.h>
#include <linux/rcupdate.h>
#include <linux/timekeeping.h>
#include "flows.h"
#include "hist.h"
#include "uarg.h"

notrace void netlat_flow_counts_start(struct netlat_flow_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->start_ns = ktime_get_mono_fast_ns();
}
NOKPROBE_SYMBOL(netlat_flow_counts_start);

notrace void netlat_flow_stats_of(struct netlat_flow_stats *e,
				  const struct netlat_flow *id,
				  const struct netlat_flow_counts *c)
{
	memset(e, 0, sizeof(*e));
	e->flow = *id;
	e->packets = c->packets;
	e->bytes = c->bytes;
	e->segs = c->segs;
	e->untracked = c->untracked;
	e->merged = c->merged;
	BUILD_BUG_ON(sizeof(e->retrans_segs) != sizeof(c->retrans_segs));
	BUILD_BUG_ON(sizeof(e->retrans_fail) != sizeof(c->retrans_fail));
	memcpy(e->retrans_segs, c->retrans_segs, sizeof(e->retrans_segs));
	memcpy(e->retrans_fail, c->retrans_fail, sizeof(e->retrans_fail));
	e->start_ns = c->start_ns;
}
NOKPROBE_SYMBOL(netlat_flow_stats_of);

notrace void netlat_flow_stats_add(struct netlat_flow_stats *to,
				   const struct netlat_flow_stats *e)
{
	unsigned int i;

	to->packets += e->packets;
	to->bytes += e->bytes;
	to->segs += e->segs;
	to->untracked += e->untracked;
	to->merged += e->merged;
	for (i = 0; i < ARRAY_SIZE(to->retrans_segs); i++)
		to->retrans_segs[i] += e->retrans_segs[i];
	for (i = 0; i < ARRAY_SIZE(to->retrans_fail); i++)
		to->retrans_fail[i] += e->retrans_fail[i];
}
NOKPROBE_SYMBOL(netlat_flow_stats_add);

void netlat_flows_closed_init(void *priv)
{
	struct netlat_flows_closed *cl = priv;

	raw_spin_lock_init(&cl->lock);
}

/* The first closed socket @cl still keeps in its ring. */
static u64 netlat_flows_oldest(const struct netlat_flows_closed *cl)
{
	return cl->closed > NETLAT_FLOWS_CLOSED_MAX ?
	       cl->closed - NETLAT_FLOWS_CLOSED_MAX : 0;
}

/* The one @e overwrites is summed with the others gone before it. */
notrace void netlat_flows_close(struct netlat_flows_closed *cl,
				const struct netlat_flow_stats *e)
{
	struct netlat_flow_stats *slot;
	unsigned long flags;

	raw_spin_lock_irqsave(&cl->lock, flags);
	slot = &cl->ring[cl->closed % NETLAT_FLOWS_CLOSED_MAX];
	if (cl->closed >= NETLAT_FLOWS_CLOSED_MAX)
		netlat_flow_stats_add(&cl->gone, slot);
	*slot = *e;
	cl->closed++;
	raw_spin_unlock_irqrestore(&cl->lock, flags);
}
NOKPROBE_SYMBOL(netlat_flows_close);

/* @from's table has no handler inside any more: its ring is read unlocked. */
void netlat_flows_carry(struct netlat_flows_closed *to,
			const struct netlat_flows_closed *from,
			struct netlat_flow_stats *live, u64 socks)
{
	unsigned long flags;
	u64 c;

	for (c = netlat_flows_oldest(from); c < from->closed; c++)
		netlat_flow_stats_add(live,
				      &from->ring[c % NETLAT_FLOWS_CLOSED_MAX]);
	netlat_flow_stats_add(live, &from->gone);
	raw_spin_lock_irqsave(&to->lock, flags);
	netlat_flow_stats_add(&to->gone, live);
	to->carried += socks + from->closed + from->carried;
	to->closed_before += from->closed + from->closed_before;
	raw_spin_unlock_irqrestore(&to->lock, flags);
}

struct netlat_flows_snap {
	struct netlat_flow_stats *e;
	u32 cap;		/* room at @e */
	u32 n;			/* entries there are (or written, with rest) */
	bool rest;		/* NETLAT_FLOWS_REST: the last of @cap sums */
	u64 summed;		/* sockets in the sum */
};

/* One socket's counters: an entry while there is room, else the sum. */
void netlat_flows_snap_one(struct netlat_flows_snap *s,
			   const struct netlat_flow_stats *e)
{
	if (s->rest && s->n + 1 >= s->cap) {
		netlat_flow_stats_add(&s->e[s->cap - 1], e);
		s->summed++;
		return;
	}
	if (s->n < s->cap)
		s->e[s->n] = *e;
	s->n++;
}

/* @cl's sockets, oldest first, as entries if @closed, else into the sum. */
static void netlat_flows_snap_closed(struct netlat_flows_snap *s,
				     struct netlat_flows_closed *cl,
				     bool closed, u64 *nclosed)
{
	struct netlat_flow_stats *rest = s->rest ? &s->e[s->cap - 1] : NULL;
	unsigned long flags;
	u64 c;

	raw_spin_lock_irqsave(&cl->lock, flags);
	*nclosed = cl->closed + cl->closed_before;
	for (c = netlat_flows_oldest(cl); c < cl->closed; c++) {
		const struct netlat_flow_stats *e =
			&cl->ring[c % NETLAT_FLOWS_CLOSED_MAX];

		if (closed) {
			netlat_flows_snap_one(s, e);
		} else if (rest) {
			netlat_flow_stats_add(rest, e);
			s->summed++;
		}
	}
	if (rest) {
		netlat_flow_stats_add(rest, &cl->gone);
		s->summed += cl->closed -
			     min_t(u64, cl->closed, NETLAT_FLOWS_CLOSED_MAX) +
			     cl->carried;
	}
	raw_spin_unlock_irqrestore(&cl->lock, flags);
}

/*
 * The sum's last part: the packets and retransmits of sockets that had no
 * entry (the histograms' counters), then the sum after the entries.
 */
static void netlat_flows_snap_rest(struct netlat_flows_snap *s)
{
	struct netlat_flow_stats *rest = &s->e[s->cap - 1];
	unsigned int i;

	rest->untracked += netlat_hist_counter(NETLAT_HC_UNTRACKED_NO_ENTRY);
	BUILD_BUG_ON(ARRAY_SIZE(rest->retrans_segs) !=
		     NETLAT_HC_RETRANS_FAIL_NO_ENTRY - NETLAT_HC_RETRANS_SEGS_NO_ENTRY);
	for (i = 0; i < ARRAY_SIZE(rest->retrans_segs); i++)
		rest->retrans_segs[i] +=
			netlat_hist_counter(NETLAT_HC_RETRANS_SEGS_NO_ENTRY + i);
	for (i = 0; i < ARRAY_SIZE(rest->retrans_fail); i++)
		rest->retrans_fail[i] +=
			netlat_hist_counter(NETLAT_HC_RETRANS_FAIL_NO_ENTRY + i);
	rest->flags = NETLAT_FLOW_REST;
	if (s->n < s->cap - 1) {
		s->e[s->n] = *rest;
		memset(rest, 0, sizeof(*rest));
	}
	s->n++;
}

/* A bound on what one call copies out (a table's most sockets). */
#define NETLAT_FLOWS_SNAP_MAX	(65536 + NETLAT_FLOWS_CLOSED_MAX)

long netlat_flows_ioc(void __user *uarg,
		      struct netlat_flows_closed *
		      (*live)(struct netlat_flows_snap *s))
{
	struct netlat_flows_snap s = {};
	struct netlat_flows_closed *cl;
	struct netlat_flows a;
	u32 usize;
	int err;

	/* rest is the sum's count out, zero in */
	err = netlat_get_arg_resv(a, NETLAT_FLOWS_SIZE_VER0,
				  NETLAT_FLOWS_CLOSED | NETLAT_FLOWS_REST, rest,
				  uarg, &usize);
	if (err)
		return err;
	if (a.nr && (a.entry_size < NETLAT_FLOW_STATS_SIZE_VER0 ||
		     a.entry_size > PAGE_SIZE || !a.entries))
		return -EINVAL;
	/* the sum needs its entry */
	if ((a.flags & NETLAT_FLOWS_REST) && !a.nr)
		return -EINVAL;
	s.cap = min_t(u32, a.nr, NETLAT_FLOWS_SNAP_MAX);
	s.rest = a.flags & NETLAT_FLOWS_REST;
	if (s.cap) {
		s.e = kvcalloc(s.cap, sizeof(*s.e), GFP_KERNEL);
		if (!s.e)
			return -ENOMEM;
	}
	a.closed = 0;
	rcu_read_lock_sched();
	cl = live(&s);
	if (cl)
		netlat_flows_snap_closed(&s, cl, a.flags & NETLAT_FLOWS_CLOSED,
					 &a.closed);
	rcu_read_unlock_sched();
	if (s.rest)
		netlat_flows_snap_rest(&s);
	err = netlat_copy_array_out(a.entries, a.entry_size, s.e,
				    sizeof(*s.e), min(s.cap, s.n));
	kvfree(s.e);
	if (err)
		return err;
	a.nr = s.n;
	a.rest = s.summed;
	return netlat_copy_out(uarg, &a, sizeof(a), usize);
}
