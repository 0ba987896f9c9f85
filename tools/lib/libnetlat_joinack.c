// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat: the way back of each joined packet's ACK (netlat_join_ack()):
 * the sender's round trip, the receiver's packet that carried the ACK with
 * its ACK delay, and the wire back on the join's clock (libnetlat.h,
 * Documentation/join.rst).
 */
#define _GNU_SOURCE	/* qsort_r */
#include "libnetlat.h"
#include "libnetlat_int.h"
#include "libnetlat_join_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* R's segments on the flow back, for the ACKs of S's packets */
struct rflow {
	const size_t *qv;		/* R's sent records, in sequence order, */
	const int64_t *pos;		/* their ACK numbers unwrapped */
	size_t nq;
	const size_t *av;		/* R's pure ACKs, by number, then time */
	size_t na;
	const size_t *rtx;		/* R's sent records retransmitted */
	size_t nrtx;
};

/* Does @t carry the ACK numbers (a record of an older module does not)? */
static bool has_ack_numbers(const struct jtx *t)
{
	return NETLAT_REC_HAS(&t->r.hdr, struct netlat_rec_tcp_pkt, sent_ack_seq);
}

static bool rx_stamped(const struct netlat_rec_rx_pkt *r)
{
	return r->flags & NETLAT_RXP_NETIF && r->netif_ns;
}

/*
 * From the pairs: each sent record's earliest receive stamp at its peer
 * (the arrival that ended the peer's packets its ACK number covered) and
 * the pair holding its last byte, stamped, earliest (the ACK delay's start).
 */
static void scan_pairs(struct netlat_join *j)
{
	size_t i;

	for (i = 0; i < j->ntx; i++) {
		memset(&j->tx[i].ack, 0, sizeof(j->tx[i].ack));
		j->tx[i].ack.ack_pair = SIZE_MAX;
		j->tx[i].first_rx_ns = 0;
	}
	for (i = 0; i < j->npairs; i++) {
		const struct netlat_xpkt *x = &j->pairs[i];
		const struct jrx *r = netlat__jrx(x);
		struct jtx *t = &j->tx[netlat__jtx(x) - j->tx];
		size_t last = t->ack.ack_pair;

		if (!rx_stamped(x->rx))
			continue;
		if (!t->first_rx_ns || x->rx->netif_ns < t->first_rx_ns)
			t->first_rx_ns = x->rx->netif_ns;
		if (r->s < t->e && r->e >= t->e &&
		    (last == SIZE_MAX || x->rx->netif_ns < j->pairs[last].rx->netif_ns))
			t->ack.ack_pair = i;
	}
}

/*
 * The receiver's packet that carried the ACK of @t: the first of its
 * sent records @rf->qv (its sequence order, which is its transmit order)
 * that acknowledged all of @t, if that ACK number is the one that ended
 * @t. NULL if none did (R sent a pure ACK: pure_carrier() looks for its
 * record), *@why saying so, or if S did not record that packet's
 * arrival, which alone tells it apart from a pure ACK of the same number
 * before it.
 */
static const struct jtx *ack_carrier(const struct netlat_join *j, const struct jtx *t,
				     const struct rflow *rf, unsigned int *why)
{
	const size_t *qv = rf->qv;
	size_t k = netlat__first_above(rf->pos, rf->nq, t->e - 1);
	const struct jtx *q = k < rf->nq ? &j->tx[qv[k]] : NULL;

	*why = NETLAT_XACK_PURE;
	if (!q || !has_ack_numbers(q) || q->r.sent_ack_seq != t->r.ack_seq)
		return NULL;
	/* a range of R's follows the one before: one of its packets may have */
	if (k && j->tx[qv[k - 1]].r.flags & NETLAT_PKT_MERGED)
		return NULL;
	/*
	 * Its arrival at S is the ACK's stamp: one skb. Otherwise a pure ACK
	 * of the same number came first (a new connection's quick ACK, or
	 * R's delayed ACK timer fired before its reply).
	 */
	if (!q->first_rx_ns) {
		*why = NETLAT_XACK_UNVERIFIED;
		return NULL;
	}
	if (q->first_rx_ns != t->r.ack_rx_ns)
		return NULL;
	return q;
}

/* The first of R's pure ACKs (by number) numbered above @x: @rf->na if none. */
static size_t pure_above(const struct netlat_join *j, const struct rflow *rf, int64_t x)
{
	size_t lo = 0, hi = rf->na;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->acks[rf->av[mid]].pos <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Whether R may have retransmitted a packet in [@lo, @hi] (its driver
 * time): a copy of it, unrecorded, carries the ACK number and TSval of
 * its time, and may have been the carrier.
 */
static bool rtx_during(const struct netlat_join *j, const struct rflow *rf, uint64_t lo,
		       uint64_t hi)
{
	size_t i;

	for (i = 0; i < rf->nrtx; i++) {
		const struct netlat_rec_tcp_pkt *q = &j->tx[rf->rtx[i]].r;

		if (q->driver_ns <= hi && (!q->end_ns || q->end_ns >= lo))
			return true;
	}
	return false;
}

/*
 * R's pure ACK that carried the ACK of @t, when no packet of R's is
 * proven to have (ack_carrier()), of those R recorded (TCP_ACK_OUT) with
 * @t's ack_seq. The carrier is the one S received first, and S noted its
 * TSval (ack_tsval): the pure ACK with that TSval is it if no other
 * segment of R's with that number may have had it too (two sent within
 * one TSval tick share it). Without the TSval only a lone pure ACK of
 * that number, no packet of R's with it and no retransmission of R's
 * after P arrived leaves no other. NULL, *@why untouched if R recorded
 * no pure ACK of that number (the packets' reason stands), else said.
 */
static const struct jack *pure_carrier(const struct netlat_join *j, const struct jtx *t,
				       const struct rflow *rf, unsigned int *why)
{
	const struct netlat_rec_tcp_pkt *p = &t->r;
	int64_t at = t->e + (int32_t)(p->ack_seq - (uint32_t)t->e);
	size_t a0 = pure_above(j, rf, at - 1), a1 = pure_above(j, rf, at);
	size_t k0 = netlat__first_above(rf->pos, rf->nq, at - 1);
	size_t k1 = netlat__first_above(rf->pos, rf->nq, at), n = 0, i;
	const struct jack *c = NULL;
	uint64_t lo = 0;

	if (a0 == a1)
		return NULL;
	/* an unrecorded packet of a range of R's may have carried it */
	if (k0 && j->tx[rf->qv[k0 - 1]].r.flags & NETLAT_PKT_MERGED) {
		*why = NETLAT_XACK_PURE;
		return NULL;
	}
	if (p->ack_tsval) {
		for (i = a0; i < a1; i++)
			if (j->acks[rf->av[i]].r.tsval == p->ack_tsval) {
				c = &j->acks[rf->av[i]];
				n++;
			}
		/* a packet's TSval unknown (an older record) may be it too */
		for (i = k0; i < k1; i++) {
			const struct jtx *q = &j->tx[rf->qv[i]];

			n += !NETLAT_REC_HAS(&q->r.hdr, struct netlat_rec_tcp_pkt, tsval) ||
			     q->r.tsval == p->ack_tsval;
		}
		if (!c)
			return NULL;
		if (c->r.hdr.ts_ns > TSVAL_TICK_NS)
			lo = c->r.hdr.ts_ns - TSVAL_TICK_NS;
		if (n == 1 && !rtx_during(j, rf, lo, c->r.hdr.ts_ns + TSVAL_TICK_NS))
			return c;
		*why = NETLAT_XACK_TSVAL_SHARED;
		return NULL;
	}
	if (t->ack.ack_pair != SIZE_MAX)
		lo = j->pairs[t->ack.ack_pair].rx->netif_ns;
	if (a1 - a0 == 1 && k0 == k1 && !rtx_during(j, rf, lo, UINT64_MAX))
		return &j->acks[rf->av[a0]];
	*why = NETLAT_XACK_UNVERIFIED;
	return NULL;
}

unsigned int netlat__join_rtt(const struct netlat_rec_tcp_pkt *p, bool first,
			      int64_t *rtt_ns)
{
	if (!(p->flags & NETLAT_PKT_ACKED) || !p->ack_rx_ns || !p->driver_ns)
		return NETLAT_XACK_NO_ACK;
	if (p->retrans && !first)
		return NETLAT_XACK_RETRANS;
	if (p->flags & NETLAT_PKT_MERGED)
		return NETLAT_XACK_RANGE;
	if (p->ack_rx_ns <= p->driver_ns)
		return NETLAT_XACK_IMPOSSIBLE;
	*rtt_ns = (int64_t)(p->ack_rx_ns - p->driver_ns);
	return NETLAT_XACK_ALL;
}

/* The way back of @t's ACK into @t->ack, but its why, which is returned. */
static unsigned int ack_of(const struct netlat_join *j, struct jtx *t, const struct rflow *rf)
{
	const struct netlat_rec_tcp_pkt *p = &t->r;
	struct netlat_xack *a = &t->ack;
	const struct netlat_rec_rx_pkt *rx;
	const struct jack *c = NULL;
	const struct jtx *q;
	unsigned int why;
	uint64_t at, left;

	/*
	 * Karn, but for a packet joined by TSval whose ACK echoed that TSval:
	 * the peer sent it while the first transmission's TSval was its
	 * TS.Recent, in answer to that copy (RFC 3522's Eifel detection); a
	 * retransmission's TSval differs, since the rescue proved a tick.
	 */
	why = netlat__join_rtt(p, t->rescued && p->ack_tsecr == p->tsval, &a->rtt_ns);
	if (why != NETLAT_XACK_ALL)
		return why;
	a->flags = NETLAT_XACK_RTT;
	/* a packet proven by its stamp; else a pure ACK, where R recorded them */
	q = ack_carrier(j, t, rf, &why);
	if (!q && rf->na)
		c = pure_carrier(j, t, rf, &why);
	if (!q && !c)
		return why;
	if (q && q->r.retrans)
		return NETLAT_XACK_ACK_RETRANS;
	left = q ? q->r.driver_ns : c->r.hdr.ts_ns;
	if (a->ack_pair == SIZE_MAX || !left)
		return NETLAT_XACK_NO_RX;
	rx = j->pairs[a->ack_pair].rx;
	if (left < rx->netif_ns)
		return NETLAT_XACK_IMPOSSIBLE;
	a->flags |= NETLAT_XACK_DELAY | (c ? NETLAT_XACK_PURE_ACK : 0);
	a->ack_tx = q ? &q->r : NULL;
	a->ack_out = c ? &c->r : NULL;
	a->delay_ns = (int64_t)(left - rx->netif_ns);
	a->raw_ns = (int64_t)(p->ack_rx_ns - left);
	/* A's end of the wire back, as for a pair that R sent */
	at = t->host == 1 ? left : p->ack_rx_ns;
	if (!netlat__join_wire(j, !t->host, at, a->raw_ns, &a->wire_ns, &a->wire_lo_ns,
			       &a->wire_hi_ns))
		return NETLAT_XACK_NO_CLOCK;
	if (a->wire_hi_ns < 0) {
		/* its ACK arrived before it left: not the carrier after all */
		a->flags = NETLAT_XACK_RTT;
		a->ack_tx = NULL;
		a->ack_out = NULL;
		a->delay_ns = a->raw_ns = 0;
		return NETLAT_XACK_IMPOSSIBLE;
	}
	a->flags |= NETLAT_XACK_WIRE;
	return NETLAT_XACK_ALL;
}

static int cmp_ack_time(const void *x, const void *y, void *arg)
{
	const struct netlat_join *j = arg;
	uint64_t a = j->acks[*(const size_t *)x].r.hdr.ts_ns;
	uint64_t b = j->acks[*(const size_t *)y].r.hdr.ts_ns;

	return a < b ? -1 : a > b;
}

static int cmp_ack_pos(const void *x, const void *y, void *arg)
{
	const struct netlat_join *j = arg;
	const struct jack *a = &j->acks[*(const size_t *)x], *b = &j->acks[*(const size_t *)y];

	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return a->r.hdr.ts_ns < b->r.hdr.ts_ns ? -1 : a->r.hdr.ts_ns > b->r.hdr.ts_ns;
}

/*
 * R's pure ACKs of flow @f's data (@av, @na) numbered as the sequence
 * is, widened in R's time order from @at, then ordered by number.
 */
static void number_pure(struct netlat_join *j, size_t *av, size_t na, int64_t at)
{
	size_t i;

	if (!na)
		return;
	qsort_r(av, na, sizeof(*av), cmp_ack_time, j);
	for (i = 0; i < na; i++) {
		struct jack *a = &j->acks[av[i]];

		at += (int32_t)(a->r.ack_seq - (uint32_t)at);
		a->pos = at;
	}
	qsort_r(av, na, sizeof(*av), cmp_ack_pos, j);
}

/* The ACKs of the packets host @h sent on flow @f. */
static int acks_flow(struct netlat_join *j, struct jflow *f, unsigned int h)
{
	long ri = netlat__join_flow_find(j, f->family, f->daddr, f->dport, f->saddr,
					 f->sport);
	struct rflow rf = {
		.qv = ri >= 0 ? j->flows[ri].tx[!h] : NULL,
		.nq = ri >= 0 ? j->flows[ri].ntx[!h] : 0,
		.av = f->ack[!h], .na = f->nack[!h],
	};
	size_t i;
	int64_t at;

	if (!f->ntx[h])
		return 0;
	j->ack_counts.acks_out[h] += rf.na;
	if (netlat__grow((void **)&j->ack_pos, &j->cack_pos, rf.nq ? rf.nq : 1,
			 sizeof(*j->ack_pos)) ||
	    netlat__grow((void **)&j->ack_rtx, &j->cack_rtx, rf.nq ? rf.nq : 1,
			 sizeof(*j->ack_rtx)))
		return -ENOMEM;
	/* R's ACK numbers widened as the sequence is, from S's first packet */
	at = j->tx[f->tx[h][0]].s;
	number_pure(j, f->ack[!h], rf.na, at);
	for (i = 0; i < rf.nq; i++) {
		const struct jtx *q = &j->tx[rf.qv[i]];

		if (has_ack_numbers(q))
			at += (int32_t)(q->r.sent_ack_seq - (uint32_t)at);
		j->ack_pos[i] = at;
		if (q->r.retrans)
			j->ack_rtx[rf.nrtx++] = rf.qv[i];
	}
	rf.pos = j->ack_pos;
	rf.rtx = j->ack_rtx;
	for (i = 0; i < f->ntx[h]; i++) {
		struct jtx *t = &j->tx[f->tx[h][i]];

		t->ack.why = ack_of(j, t, &rf);
	}
	return 0;
}

int netlat__join_acks(struct netlat_join *j)
{
	struct netlat_join_ack_counts *c = &j->ack_counts;
	unsigned int h;
	size_t i;
	int r;

	scan_pairs(j);
	memset(c, 0, sizeof(*c));
	for (i = 0; i < j->nflows; i++)
		for (h = 0; h < 2; h++) {
			r = acks_flow(j, &j->flows[i], h);
			if (r)
				return r;
		}
	/* each joined sent packet once */
	for (i = 0; i < j->npairs; i++) {
		const struct netlat_xpkt *x = &j->pairs[i];
		const struct netlat_xack *a = &netlat__jtx(x)->ack;

		if (!(x->flags & NETLAT_XPKT_TX_FIRST))
			continue;
		c->packets[x->sender]++;
		c->why[x->sender][a->why]++;
		c->rtt[x->sender] += !!(a->flags & NETLAT_XACK_RTT);
		c->delay[x->sender] += !!(a->flags & NETLAT_XACK_DELAY);
		c->wire[x->sender] += !!(a->flags & NETLAT_XACK_WIRE);
		c->pure[x->sender] += !!(a->flags & NETLAT_XACK_PURE_ACK);
	}
	return 0;
}

int netlat_join_ack(const struct netlat_join *j, size_t pair, struct netlat_xack *ack)
{
	if (pair >= j->npairs)
		return -EINVAL;
	*ack = netlat__jtx(&j->pairs[pair])->ack;
	return 0;
}

void netlat_join_ack_counts(const struct netlat_join *j, struct netlat_join_ack_counts *c)
{
	*c = j->ack_counts;
}

void netlat_join_tsval_counts(const struct netlat_join *j, struct netlat_join_tsval_counts *c)
{
	*c = j->tsval_counts;
}
