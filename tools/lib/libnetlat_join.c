// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat: two hosts' captures joined packet by packet, and B's clock
 * bounded against A's from the pairs alone (see libnetlat.h and
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

#define DEFAULT_WINDOW_NS	10000000000ULL
#define DEFAULT_MAX_DRIFT_PPM	2000.0

/* ==== records and flows ================================================== */

static uint64_t flow_hash(uint16_t family, const uint8_t *sa, uint16_t sp,
			  const uint8_t *da, uint16_t dp)
{
	uint64_t h = 1469598103934665603ULL;
	unsigned int i;

	h = (h ^ family) * 1099511628211ULL;
	h = (h ^ sp) * 1099511628211ULL;
	h = (h ^ dp) * 1099511628211ULL;
	for (i = 0; i < 16; i++) {
		h = (h ^ sa[i]) * 1099511628211ULL;
		h = (h ^ da[i]) * 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

static bool flow_is(const struct jflow *f, uint16_t family, const uint8_t *sa,
		    uint16_t sp, const uint8_t *da, uint16_t dp)
{
	return f->family == family && f->sport == sp && f->dport == dp &&
	       !memcmp(f->saddr, sa, 16) && !memcmp(f->daddr, da, 16);
}

static int rehash(struct netlat_join *j)
{
	size_t cap = j->hcap ? j->hcap * 2 : 256, i;
	uint32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < j->nflows; i++) {
		const struct jflow *f = &j->flows[i];
		size_t at = flow_hash(f->family, f->saddr, f->sport, f->daddr,
				      f->dport) & (cap - 1);

		while (h[at])
			at = (at + 1) & (cap - 1);
		h[at] = i + 1;
	}
	free(j->hash);
	j->hash = h;
	j->hcap = cap;
	return 0;
}

/* The flow's slot in the hash: its own, or the empty one it would take. */
static size_t flow_slot(const struct netlat_join *j, uint16_t family, const uint8_t *sa,
			uint16_t sp, const uint8_t *da, uint16_t dp)
{
	size_t at = flow_hash(family, sa, sp, da, dp) & (j->hcap - 1);

	while (j->hash[at] &&
	       !flow_is(&j->flows[j->hash[at] - 1], family, sa, sp, da, dp))
		at = (at + 1) & (j->hcap - 1);
	return at;
}

long netlat__join_flow_find(const struct netlat_join *j, uint16_t family,
			    const uint8_t *sa, uint16_t sp, const uint8_t *da,
			    uint16_t dp)
{
	if (!j->hcap)
		return -1;
	return (long)j->hash[flow_slot(j, family, sa, sp, da, dp)] - 1;
}

/* The flow from (@sa, @sp) to (@da, @dp): its index, or -ENOMEM. */
static long flow_get(struct netlat_join *j, uint16_t family, const uint8_t *sa,
		     uint16_t sp, const uint8_t *da, uint16_t dp)
{
	struct jflow *f;
	size_t at;

	if ((j->nflows + 1) * 2 > j->hcap && rehash(j))
		return -ENOMEM;
	at = flow_slot(j, family, sa, sp, da, dp);
	if (j->hash[at])
		return j->hash[at] - 1;
	if (netlat__grow((void **)&j->flows, &j->cflows, j->nflows + 1, sizeof(*j->flows)))
		return -ENOMEM;
	f = &j->flows[j->nflows];
	memset(f, 0, sizeof(*f));
	f->family = family;
	f->sport = sp;
	f->dport = dp;
	memcpy(f->saddr, sa, 16);
	memcpy(f->daddr, da, 16);
	j->hash[at] = j->nflows + 1;
	return j->nflows++;
}

/*
 * @seq as a 64-bit position in the flow: the one nearest the last this
 * host saw. Each host is numbered on its own; align() then moves B's
 * numbering onto A's, so that a byte has one position on both.
 */
static int64_t unwrap(struct jflow *f, unsigned int host, uint32_t seq)
{
	int64_t last;

	if (f->seen[host]) {
		last = f->last[host];
	} else {
		last = (int64_t)1 << 40 | seq;
		f->first[host] = last;
	}
	last += (int32_t)(seq - (uint32_t)last);
	f->seen[host] = true;
	f->last[host] = last;
	return last;
}

static int push_index(size_t **v, size_t *n, size_t *cap, size_t i)
{
	if (netlat__grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = i;
	return 0;
}

/*
 * @t (ns) of B moved by the options' offset and drift (around B's clock's
 * origin): false if that leaves 1 ns .. 2^63 (0 reads as "no time").
 */
static bool b_time(const struct netlat_join *j, __u64 *t)
{
	long double d = (long double)*t * (j->o.b_ppm / 1e6L);
	long double v = (long double)*t + (long double)j->o.b_offset_ns + d;

	if (!*t)
		return true;
	if (!(v >= 1.0L && v < 0x1p63L))
		return false;
	*t += j->o.b_offset_ns + (int64_t)(d < 0 ? d - 0.5L : d + 0.5L);
	return true;
}

static int b_times_tx(const struct netlat_join *j, struct netlat_rec_tcp_pkt *p)
{
	bool ok = b_time(j, &p->hdr.ts_ns) & b_time(j, &p->sendmsg_ns) &
		  b_time(j, &p->xmit_ns) & b_time(j, &p->qdisc_ns) &
		  b_time(j, &p->driver_ns) & b_time(j, &p->end_ns) & b_time(j, &p->vq_ns) &
		  b_time(j, &p->ack_rx_ns);

	return ok ? 0 : -ERANGE;
}

static int b_times_rx(const struct netlat_join *j, struct netlat_rec_rx_pkt *p)
{
	bool ok = b_time(j, &p->hdr.ts_ns) & b_time(j, &p->netif_ns) &
		  b_time(j, &p->transport_ns) & b_time(j, &p->queue_ns) &
		  b_time(j, &p->end_ns) & b_time(j, &p->ready_ns) &
		  b_time(j, &p->wakeup_ns) & b_time(j, &p->run_ns);

	return ok ? 0 : -ERANGE;
}

/*
 * The sender's flow of @fl (@swapped: @fl is the receiver's) and the
 * 64-bit range of [@seq, @end_seq) in it: the flow's index, or -ENOMEM.
 */
static long place(struct netlat_join *j, unsigned int host, const struct netlat_flow *fl,
		  bool swapped, uint32_t seq, uint32_t end_seq, int64_t *s, int64_t *e)
{
	long fi = swapped ? flow_get(j, fl->family, fl->daddr, fl->dport, fl->saddr, fl->sport)
			  : flow_get(j, fl->family, fl->saddr, fl->sport, fl->daddr, fl->dport);

	if (fi < 0)
		return fi;
	*s = unwrap(&j->flows[fi], host, seq);
	*e = *s + (uint32_t)(end_seq - seq);
	return fi;
}

static int add_tx(struct netlat_join *j, unsigned int host, const struct netlat_rec_hdr *rec)
{
	struct jtx *t;
	struct jflow *f;
	long fi;

	if (netlat__grow((void **)&j->tx, &j->ctx, j->ntx + 1, sizeof(*j->tx)))
		return -ENOMEM;
	t = &j->tx[j->ntx];
	memset(t, 0, sizeof(*t));
	if (!netlat_pkt_rec(rec, &t->r))
		return -EINVAL;
	if (t->r.hdr.size > sizeof(t->r))
		t->r.hdr.size = sizeof(t->r);
	if (host && (j->o.b_offset_ns || j->o.b_ppm) && b_times_tx(j, &t->r))
		return -ERANGE;
	fi = place(j, host, &t->r.flow, false, t->r.seq, t->r.end_seq, &t->s, &t->e);
	if (fi < 0)
		return fi;
	f = &j->flows[fi];
	t->flow = fi;
	t->host = host;
	if (push_index(&f->tx[host], &f->ntx[host], &f->ctx[host], j->ntx))
		return -ENOMEM;
	j->ntx++;
	return 0;
}

/*
 * A pure ACK: placed on the flow whose data it acknowledges (its own
 * swapped, as a received record is), numbered when the ACKs are joined.
 */
static int add_ack(struct netlat_join *j, unsigned int host, const struct netlat_rec_hdr *rec)
{
	const struct netlat_flow *fl;
	struct jack *a;
	struct jflow *f;
	long fi;

	if (rec->size < sizeof(a->r))
		return -EINVAL;
	if (netlat__grow((void **)&j->acks, &j->cacks, j->nacks + 1, sizeof(*j->acks)))
		return -ENOMEM;
	a = &j->acks[j->nacks];
	memset(a, 0, sizeof(*a));
	memcpy(&a->r, rec, sizeof(a->r));
	a->r.hdr.size = sizeof(a->r);
	if (host && (j->o.b_offset_ns || j->o.b_ppm) && !b_time(j, &a->r.hdr.ts_ns))
		return -ERANGE;
	fl = &a->r.flow;
	fi = flow_get(j, fl->family, fl->daddr, fl->dport, fl->saddr, fl->sport);
	if (fi < 0)
		return fi;
	f = &j->flows[fi];
	if (push_index(&f->ack[host], &f->nack[host], &f->cack[host], j->nacks))
		return -ENOMEM;
	j->nacks++;
	return 0;
}

static int add_rx(struct netlat_join *j, unsigned int host, const struct netlat_rec_hdr *rec)
{
	struct jrx *r;
	struct jflow *f;
	size_t len;
	long fi;

	if (rec->size < NETLAT_REC_RX_PKT_SIZE_VER0)
		return -EINVAL;
	if (((const struct netlat_rec_rx_pkt *)rec)->proto != NETLAT_RX_TCP)
		return 0;
	if (netlat__grow((void **)&j->rx, &j->crx, j->nrx + 1, sizeof(*j->rx)))
		return -ENOMEM;
	r = &j->rx[j->nrx];
	memset(r, 0, sizeof(*r));
	len = rec->size < sizeof(r->r) ? rec->size : sizeof(r->r);
	memcpy(&r->r, rec, len);
	r->r.hdr.size = len;
	if (host && (j->o.b_offset_ns || j->o.b_ppm) && b_times_rx(j, &r->r))
		return -ERANGE;
	/* the receiver's flow has itself first: the sender's is swapped */
	fi = place(j, host, &r->r.flow, true, r->r.seq, r->r.end_seq, &r->s, &r->e);
	if (fi < 0)
		return fi;
	f = &j->flows[fi];
	r->flow = fi;
	r->host = host;
	if (push_index(&f->rx[host], &f->nrx[host], &f->crx[host], j->nrx))
		return -ENOMEM;
	j->nrx++;
	return 0;
}

struct netlat_join *netlat_join_new(const struct netlat_join_opts *opts)
{
	struct netlat_join *j;

	/* written so that a NaN fails too */
	if (opts && (!(opts->max_drift_ppm >= 0 && opts->max_drift_ppm <= 1e5) ||
		     !(opts->b_ppm >= -1e5 && opts->b_ppm <= 1e5) ||
		     opts->flags & ~NETLAT_JOIN_OFFSET_ONLY)) {
		errno = EINVAL;
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		j->o = *opts;
	if (!j->o.window_ns)
		j->o.window_ns = DEFAULT_WINDOW_NS;
	if (j->o.flags & NETLAT_JOIN_OFFSET_ONLY)
		j->o.max_drift_ppm = 0;
	else if (!j->o.max_drift_ppm)
		j->o.max_drift_ppm = DEFAULT_MAX_DRIFT_PPM;
	j->clock = netlat__clock_new(j->o.window_ns, j->o.max_drift_ppm, j->o.asym_ns);
	if (!j->clock) {
		free(j);
		errno = ENOMEM;
		return NULL;
	}
	return j;
}

void netlat_join_free(struct netlat_join *j)
{
	size_t i;
	unsigned int h;

	if (!j)
		return;
	for (i = 0; i < j->nflows; i++) {
		for (h = 0; h < 2; h++) {
			free(j->flows[i].tx[h]);
			free(j->flows[i].rx[h]);
			free(j->flows[i].ack[h]);
		}
	}
	netlat__clock_free(j->clock);
	free(j->flows);
	free(j->hash);
	free(j->tx);
	free(j->rx);
	free(j->acks);
	free(j->pairs);
	free(j->smp);
	free(j->smp_pair);
	free(j->spans);
	free(j->rx_reach);
	free(j->ack_pos);
	free(j->ack_rtx);
	free(j);
}

int netlat_join_add(struct netlat_join *j, unsigned int host,
		    const struct netlat_rec_hdr *rec)
{
	if (host > 1)
		return -EINVAL;
	if (rec->type == NETLAT_REC_TCP_PKT)
		return add_tx(j, host, rec);
	if (rec->type == NETLAT_REC_RX_PKT)
		return add_rx(j, host, rec);
	if (rec->type == NETLAT_REC_TCP_ACK_OUT)
		return add_ack(j, host, rec);
	return 0;
}

/* ==== pairs ============================================================== */

struct jspan {
	int64_t s, e;			/* [s, e) of the sender's unwrapped sequence */
};

static int cmp_span(const void *a, const void *b)
{
	const struct jspan *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/*
 * The bytes in the union of @n spans: a byte received twice (a
 * retransmission both copies of which arrived) or sent twice counts once,
 * as the receiver's reader saw it once.
 */
static uint64_t span_union(struct jspan *v, size_t n)
{
	uint64_t bytes = 0;
	int64_t hi = INT64_MIN;
	size_t i;

	qsort(v, n, sizeof(*v), cmp_span);
	for (i = 0; i < n; i++) {
		int64_t from = v[i].s > hi ? v[i].s : hi;

		if (v[i].e > from)
			bytes += (uint64_t)(v[i].e - from);
		if (v[i].e > hi)
			hi = v[i].e;
	}
	return bytes;
}

static int cmp_tx_start(const void *a, const void *b, void *arg)
{
	const struct netlat_join *j = arg;
	const struct jtx *x = &j->tx[*(const size_t *)a];
	const struct jtx *y = &j->tx[*(const size_t *)b];

	return x->s < y->s ? -1 : x->s > y->s;
}

static int cmp_rx_start(const void *a, const void *b, void *arg)
{
	const struct netlat_join *j = arg;
	const struct jrx *x = &j->rx[*(const size_t *)a];
	const struct jrx *y = &j->rx[*(const size_t *)b];

	return x->s < y->s ? -1 : x->s > y->s;
}

/*
 * The first of @n received records (sorted by start) that can hold byte
 * @s or a later one: @reach[k], the furthest end of records 0..k, grows
 * with k, so the records before it all end at or before @s. A search
 * back by the longest record would scan every short record a 64 KiB GRO
 * skb spans, for every sent packet.
 */
size_t netlat__first_above(const int64_t *reach, size_t n, int64_t s)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (reach[mid] <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The shortest round trip on the sender's clock of @n sent records @tv
 * (one flow, one sender): their ACK's stamp less their driver time, the
 * ones not retransmitted, as netlat_join_ack() gives it. INT64_MAX if none.
 */
static int64_t min_rtt(const struct netlat_join *j, const size_t *tv, size_t n)
{
	int64_t best = INT64_MAX, rtt;
	size_t i;

	for (i = 0; i < n; i++)
		if (netlat__join_rtt(&j->tx[tv[i]].r, false, &rtt) == NETLAT_XACK_ALL &&
		    rtt < best)
			best = rtt;
	return best;
}

/*
 * Which transmission of @t the copy @r was, by the TSvals (0: no option,
 * or a record without the field), as the pair's flags. A retransmission
 * is sent a round trip or more after the first (an ACK or a timer that
 * waits for one triggers it): with the sender's shortest round trip
 * (@tick_ok) at least a tick, it carries another TSval, and the first's
 * TSval tells the first copy. Join.rst, "Retransmissions and TSval".
 */
static unsigned int tsval_flags(const struct jtx *t, const struct jrx *r, bool tick_ok)
{
	bool same = t->r.tsval == r->r.tsval;

	if (!t->r.tsval || !r->r.tsval)
		return t->r.retrans ? NETLAT_XPKT_RETRANS : 0;
	if (!t->r.retrans)
		/* the receiver got a copy the sender never sent first */
		return same ? 0 : NETLAT_XPKT_IMPOSSIBLE | NETLAT_XPKT_TSVAL_DIFF;
	if (!same)
		return NETLAT_XPKT_RETRANS;
	return tick_ok ? NETLAT_XPKT_TSVAL : NETLAT_XPKT_RETRANS | NETLAT_XPKT_TSVAL_TICK;
}

static int add_pair(struct netlat_join *j, size_t *cap, struct jtx *t, struct jrx *r,
		    bool tick_ok)
{
	struct netlat_xpkt *x;
	int64_t s = t->s > r->s ? t->s : r->s;
	int64_t e = t->e < r->e ? t->e : r->e;

	if (netlat__grow((void **)&j->pairs, cap, j->npairs + 1, sizeof(*j->pairs)))
		return -ENOMEM;
	x = &j->pairs[j->npairs++];
	memset(x, 0, sizeof(*x));
	x->tx = &t->r;
	x->rx = &r->r;
	x->sender = t->host;
	x->seq = t->r.seq + (uint32_t)(s - t->s);
	x->end_seq = x->seq + (uint32_t)(e - s);
	if (!r->joined++)
		x->flags |= NETLAT_XPKT_RX_FIRST;
	x->flags |= tsval_flags(t, r, tick_ok);
	if (!t->r.driver_ns || !(r->r.flags & NETLAT_RXP_NETIF) || !r->r.netif_ns)
		x->flags |= NETLAT_XPKT_NO_STAMP;
	else
		x->raw_ns = (int64_t)(r->r.netif_ns - t->r.driver_ns);
	if (t->s == r->s && t->e == r->e && t->r.segs <= 1 && r->r.segs <= 1 &&
	    !t->r.retrans)
		x->flags |= NETLAT_XPKT_EXACT;
	return 0;
}

/*
 * Whether one of @n pairs that Karn leaves in has both stamps (then the
 * packet has a wire time).
 */
static bool any_stamped(const struct netlat_xpkt *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(x[i].flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_RETRANS)))
			return true;
	return false;
}

/*
 * Sent packet @t's counts from its @n pairs @x: Karn's, the TSvals', the
 * stamps'.
 */
static void count_joined(struct netlat_join *j, struct jtx *t, unsigned int h,
			 const struct netlat_xpkt *x, size_t n)
{
	struct netlat_join_tsval_counts *tc = &j->tsval_counts;
	unsigned int any = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		any |= x[k].flags;
		tc->impossible[h] += !!(x[k].flags & NETLAT_XPKT_TSVAL_DIFF);
	}
	t->rescued = any & NETLAT_XPKT_TSVAL;
	if (t->r.retrans && !t->rescued) {
		if (any & NETLAT_XPKT_TSVAL_TICK)
			tc->tick[h]++;
		else
			j->counts.retrans[h]++;
		return;
	}
	tc->rescued[h] += t->rescued;
	if (!any_stamped(x, n))
		j->counts.no_stamp[h]++;
}

/* Every (sent, received) pair of flow @f sent by @h. */
static int pair_flow(struct netlat_join *j, struct jflow *f, unsigned int h, size_t *cap)
{
	struct netlat_join_counts *c = &j->counts;
	size_t *tv = f->tx[h], *rv = f->rx[!h];
	size_t nt = f->ntx[h], nr = f->nrx[!h], i, k, nspans = 0;
	bool tick_ok = min_rtt(j, tv, nt) >= TSVAL_TICK_NS;

	if (nt)
		qsort_r(tv, nt, sizeof(*tv), cmp_tx_start, j);
	if (nr) {
		qsort_r(rv, nr, sizeof(*rv), cmp_rx_start, j);
		if (netlat__grow((void **)&j->rx_reach, &j->crx_reach, nr,
				 sizeof(*j->rx_reach)))
			return -ENOMEM;
		for (k = 0; k < nr; k++) {
			int64_t e = j->rx[rv[k]].e;

			j->rx_reach[k] = k && j->rx_reach[k - 1] > e ? j->rx_reach[k - 1] : e;
		}
	}
	c->received[h] += nr;
	for (i = 0; i < nt; i++) {
		struct jtx *t = &j->tx[tv[i]];
		size_t first = j->npairs, n;

		c->sent[h]++;
		c->sent_bytes[h] += t->e - t->s;
		if (!nr) {
			c->no_flow[h]++;
			continue;
		}
		for (k = netlat__first_above(j->rx_reach, nr, t->s); k < nr; k++) {
			struct jrx *r = &j->rx[rv[k]];

			if (r->s >= t->e)
				break;
			if (r->e <= t->s)
				continue;
			if (add_pair(j, cap, t, r, tick_ok) ||
			    netlat__grow((void **)&j->spans, &j->cspans, nspans + 1,
					 sizeof(*j->spans)))
				return -ENOMEM;
			j->spans[nspans++] = (struct jspan){
				.s = r->s > t->s ? r->s : t->s, .e = r->e < t->e ? r->e : t->e };
		}
		n = j->npairs - first;
		if (!n) {
			c->no_record[h]++;
			continue;
		}
		c->joined[h]++;
		j->pairs[first].flags |= NETLAT_XPKT_TX_FIRST;
		count_joined(j, t, h, &j->pairs[first], n);
		if (n > 1)
			for (k = first; k < j->npairs; k++)
				j->pairs[k].flags |= NETLAT_XPKT_GSO_SPLIT;
	}
	c->joined_bytes[h] += span_union(j->spans, nspans);
	for (k = 0; k < nr; k++)
		if (!j->rx[rv[k]].joined)
			c->received_unjoined[h]++;
	return 0;
}

/*
 * The clock's samples: one per pair with both stamps and no retransmission.
 * Not one joined by TSval either: the clock rests on first transmissions
 * alone, and a rescue moves no other packet's wire.
 */
static int collect_samples(struct netlat_join *j)
{
	size_t i;

	free(j->smp);
	free(j->smp_pair);
	j->smp = calloc(j->npairs ? j->npairs : 1, sizeof(*j->smp));
	j->smp_pair = calloc(j->npairs ? j->npairs : 1, sizeof(*j->smp_pair));
	if (!j->smp || !j->smp_pair)
		return -ENOMEM;
	j->nsmp = 0;
	for (i = 0; i < j->npairs; i++) {
		const struct netlat_xpkt *x = &j->pairs[i];
		struct netlat__sample *s = &j->smp[j->nsmp];

		if (x->flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_RETRANS |
				NETLAT_XPKT_TSVAL | NETLAT_XPKT_IMPOSSIBLE))
			continue;
		j->smp_pair[j->nsmp] = i;
		s->upper = x->sender == 0;
		if (s->upper) {
			/* theta(t1) <= t2 - t1 - floor */
			s->x = x->tx->driver_ns;
			s->y = x->raw_ns - (int64_t)j->o.min_owd_ns;
		} else {
			/* theta(t4) >= t3 - t4 + floor */
			s->x = x->rx->netif_ns;
			s->y = -x->raw_ns + (int64_t)j->o.min_owd_ns;
		}
		j->nsmp++;
	}
	return 0;
}

bool netlat__join_wire(const struct netlat_join *j, unsigned int sender,
		       uint64_t t_ns, int64_t raw_ns, int64_t *wire_ns,
		       int64_t *lo_ns, int64_t *hi_ns)
{
	int64_t lo, hi, est;

	if (!netlat__clock_at(j->clock, t_ns, &lo, &hi))
		return false;
	if (lo == INT64_MIN || hi == INT64_MAX) {
		/* one side only: the estimate is the bound it has */
		est = lo == INT64_MIN ? hi : lo;
	} else {
		est = lo + (hi - lo) / 2 - j->o.asym_ns / 2;
	}
	if (sender == 0) {
		/* wire = t2 - t1 - theta */
		*wire_ns = raw_ns - est;
		*lo_ns = hi == INT64_MAX ? 0 : raw_ns - hi;
		*hi_ns = lo == INT64_MIN ? INT64_MAX : raw_ns - lo;
	} else {
		/* wire = t4 - t3 + theta; raw = t4 - t3 here */
		*wire_ns = raw_ns + est;
		*lo_ns = lo == INT64_MIN ? 0 : raw_ns + lo;
		*hi_ns = hi == INT64_MAX ? INT64_MAX : raw_ns + hi;
	}
	if (*lo_ns < 0)
		*lo_ns = 0;
	if (*wire_ns < *lo_ns)
		*wire_ns = *lo_ns;
	if (*wire_ns > *hi_ns)
		*wire_ns = *hi_ns;
	return true;
}

/* Each pair's wire from its window's bound. */
static void wire_times(struct netlat_join *j)
{
	size_t i;

	for (i = 0; i < j->nsmp; i++)
		if (j->smp[i].bad) {
			j->pairs[j->smp_pair[i]].flags |= NETLAT_XPKT_IMPOSSIBLE;
			j->counts.impossible[j->pairs[j->smp_pair[i]].sender]++;
		}
	for (i = 0; i < j->npairs; i++) {
		struct netlat_xpkt *x = &j->pairs[i];
		uint64_t t;

		j->counts.pairs[x->sender]++;
		/* the TSvals' contradictions, found as the pairs were made */
		if (x->flags & NETLAT_XPKT_TSVAL_DIFF)
			j->counts.impossible[x->sender]++;
		if (x->flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_RETRANS |
				NETLAT_XPKT_IMPOSSIBLE))
			continue;
		t = x->sender == 0 ? x->tx->driver_ns : x->rx->netif_ns;
		if (!netlat__join_wire(j, x->sender, t, x->raw_ns, &x->wire_ns,
				       &x->wire_lo_ns, &x->wire_hi_ns)) {
			x->flags |= NETLAT_XPKT_NO_CLOCK;
		} else if (x->flags & NETLAT_XPKT_TSVAL && x->wire_hi_ns < 0) {
			/* no sample tested it: arrived before it left */
			x->flags |= NETLAT_XPKT_IMPOSSIBLE;
			j->counts.impossible[x->sender]++;
		}
	}
}

static int cmp_pair_time(const void *a, const void *b)
{
	const struct netlat_xpkt *x = a, *y = b;
	uint64_t tx = x->tx->driver_ns ? x->tx->driver_ns : x->tx->hdr.ts_ns;
	uint64_t ty = y->tx->driver_ns ? y->tx->driver_ns : y->tx->hdr.ts_ns;

	if (x->sender != y->sender)
		return x->sender < y->sender ? -1 : 1;
	return tx < ty ? -1 : tx > ty;
}

/* GRO: a received record that holds bytes of several sent ones. */
static void mark_merged(struct netlat_join *j)
{
	size_t i;

	for (i = 0; i < j->npairs; i++) {
		if (netlat__jrx(&j->pairs[i])->joined > 1)
			j->pairs[i].flags |= NETLAT_XPKT_GRO_MERGED;
	}
}

/*
 * B's positions of flow @f onto A's: B's first record is placed within
 * 2 GiB of A's first (both captures start near one another), which fixes
 * the multiple of 2^32 for the whole flow, however many bytes A's capture
 * holds before B's starts.
 */
static void align(struct netlat_join *j, struct jflow *f)
{
	int64_t want, shift;
	size_t i;

	if (!f->seen[0] || !f->seen[1])
		return;
	want = f->first[0] + (int32_t)((uint32_t)f->first[1] - (uint32_t)f->first[0]);
	shift = want - f->first[1] - f->b_shift;
	if (!shift)
		return;
	for (i = 0; i < f->ntx[1]; i++) {
		j->tx[f->tx[1][i]].s += shift;
		j->tx[f->tx[1][i]].e += shift;
	}
	for (i = 0; i < f->nrx[1]; i++) {
		j->rx[f->rx[1][i]].s += shift;
		j->rx[f->rx[1][i]].e += shift;
	}
	f->b_shift += shift;
}

int netlat_join_run(struct netlat_join *j)
{
	size_t cap = j->npairs, i;
	unsigned int h;
	int r;

	/* a second run starts over */
	j->npairs = 0;
	memset(&j->counts, 0, sizeof(j->counts));
	memset(&j->tsval_counts, 0, sizeof(j->tsval_counts));
	for (i = 0; i < j->nrx; i++)
		j->rx[i].joined = 0;
	for (i = 0; i < j->nflows; i++)
		align(j, &j->flows[i]);
	for (i = 0; i < j->nflows; i++)
		for (h = 0; h < 2; h++) {
			r = pair_flow(j, &j->flows[i], h, &cap);
			if (r)
				return r;
		}
	mark_merged(j);
	/* A>B first, then B>A, each in the sender's time */
	if (j->npairs)
		qsort(j->pairs, j->npairs, sizeof(*j->pairs), cmp_pair_time);
	r = collect_samples(j);
	if (!r)
		r = netlat__clock_estimate(j->clock, j->smp, j->nsmp);
	if (r)
		return r;
	wire_times(j);
	return netlat__join_acks(j);
}

size_t netlat_join_pairs(const struct netlat_join *j, const struct netlat_xpkt **pairs)
{
	*pairs = j->pairs;
	return j->npairs;
}

void netlat_join_clock(const struct netlat_join *j, struct netlat_clock_est *est)
{
	netlat__clock_whole(j->clock, est);
}

size_t netlat_join_windows(const struct netlat_join *j,
			   const struct netlat_clock_est **windows)
{
	return netlat__clock_windows(j->clock, windows);
}

bool netlat_join_theta(const struct netlat_join *j, uint64_t t_ns, int64_t *lo_ns,
		       int64_t *hi_ns)
{
	return netlat__clock_at(j->clock, t_ns, lo_ns, hi_ns);
}

void netlat_join_counts(const struct netlat_join *j, struct netlat_join_counts *c)
{
	*c = j->counts;
}
