// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat: the way back of each joined packet's ACK (netlat_join_ack()):
 * the sender's round trip, the receiver's packet that carried the ACK with
 * its ACK delay, and the wire back on the join's clock (libnetlat.h,
 * Documentation/join.rst).
 */
#include "libnetlat.h"
#include "libnetlat_int.h"
#include "libnetlat_join_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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
 * sent records @qv[0..@nq) (its sequence order, which is its transmit
 * order; @pos their ACK numbers on @t's flow) that acknowledged all of
 * @t, if that ACK number is the one that ended @t. NULL if none did (R
 * sent a pure ACK, which it has no record of), *@why saying so, or if S
 * did not record that packet's arrival, which alone tells it apart from
 * a pure ACK of the same number before it.
 */
static const struct jtx *ack_carrier(const struct netlat_join *j, const struct jtx *t,
				     const size_t *qv, const int64_t *pos, size_t nq,
				     unsigned int *why)
{
	size_t k = netlat__first_above(pos, nq, t->e - 1);
	const struct jtx *q = k < nq ? &j->tx[qv[k]] : NULL;

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

/*
 * The way back of @t's ACK into @t->ack, but its why, which is returned;
 * @qv, @pos, @nq as ack_carrier()'s.
 */
static unsigned int ack_of(const struct netlat_join *j, struct jtx *t, const size_t *qv,
		   const int64_t *pos, size_t nq)
{
	const struct netlat_rec_tcp_pkt *p = &t->r;
	struct netlat_xack *a = &t->ack;
	const struct netlat_rec_rx_pkt *rx;
	const struct jtx *q;
	unsigned int why;
	uint64_t at;

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
	q = ack_carrier(j, t, qv, pos, nq, &why);
	if (!q)
		return why;
	if (q->r.retrans)
		return NETLAT_XACK_ACK_RETRANS;
	if (a->ack_pair == SIZE_MAX || !q->r.driver_ns)
		return NETLAT_XACK_NO_RX;
	rx = j->pairs[a->ack_pair].rx;
	if (q->r.driver_ns < rx->netif_ns)
		return NETLAT_XACK_IMPOSSIBLE;
	a->flags |= NETLAT_XACK_DELAY;
	a->ack_tx = &q->r;
	a->delay_ns = (int64_t)(q->r.driver_ns - rx->netif_ns);
	a->raw_ns = (int64_t)(p->ack_rx_ns - q->r.driver_ns);
	/* A's end of the wire back, as for a pair that R sent */
	at = q->host == 0 ? q->r.driver_ns : p->ack_rx_ns;
	if (!netlat__join_wire(j, q->host, at, a->raw_ns, &a->wire_ns, &a->wire_lo_ns,
			       &a->wire_hi_ns))
		return NETLAT_XACK_NO_CLOCK;
	if (a->wire_hi_ns < 0) {
		/* its ACK arrived before it left: not the carrier after all */
		a->flags = NETLAT_XACK_RTT;
		a->ack_tx = NULL;
		a->delay_ns = a->raw_ns = 0;
		return NETLAT_XACK_IMPOSSIBLE;
	}
	a->flags |= NETLAT_XACK_WIRE;
	return NETLAT_XACK_ALL;
}

/* The ACKs of the packets host @h sent on flow @f. */
static int acks_flow(struct netlat_join *j, const struct jflow *f, unsigned int h)
{
	long ri = netlat__join_flow_find(j, f->family, f->daddr, f->dport, f->saddr,
					 f->sport);
	const size_t *qv = ri >= 0 ? j->flows[ri].tx[!h] : NULL;
	size_t nq = ri >= 0 ? j->flows[ri].ntx[!h] : 0, i;
	int64_t at;

	if (!f->ntx[h])
		return 0;
	if (netlat__grow((void **)&j->ack_pos, &j->cack_pos, nq ? nq : 1,
			 sizeof(*j->ack_pos)))
		return -ENOMEM;
	/* R's ACK numbers widened as the sequence is, from S's first packet */
	at = j->tx[f->tx[h][0]].s;
	for (i = 0; i < nq; i++) {
		const struct jtx *q = &j->tx[qv[i]];

		if (has_ack_numbers(q))
			at += (int32_t)(q->r.sent_ack_seq - (uint32_t)at);
		j->ack_pos[i] = at;
	}
	for (i = 0; i < f->ntx[h]; i++) {
		struct jtx *t = &j->tx[f->tx[h][i]];

		t->ack.why = ack_of(j, t, qv, j->ack_pos, nq);
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
	for (i = 0; i < j->nflows; i++)
		for (h = 0; h < 2; h++) {
			r = acks_flow(j, &j->flows[i], h);
			if (r)
				return r;
		}
	/* each joined sent packet once */
	memset(c, 0, sizeof(*c));
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
