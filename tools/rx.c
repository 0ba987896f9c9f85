// SPDX-License-Identifier: GPL-2.0
/*
 * Receive-path summary for "netlat report" (see rx.h).
 *
 * Every RX_TRANSPORT record (a segment or datagram arriving at its
 * socket) is joined with:
 *  - the RX_NETIF record of the same packet: TCP, the same 4-tuple (seen
 *    from the sender) and first sequence number; UDP, the same skb; the
 *    latest one not after the arrival. Its start is the skb's receive
 *    stamp when it has one (what SO_TIMESTAMPNS reports), else the
 *    tracepoint's time;
 *  - the first RX_QUEUE record after it, in order or out of order, of the
 *    same sequence (TCP; a backlogged segment is queued when its owner
 *    releases the socket) or skb (UDP);
 *  - the RX_COPY that read its last byte (TCP: the copy range of the
 *    socket holding it; UDP: the copy of the same skb after the queue).
 * Stages: netif>tcp (netif>udp), tcp>queue, queue>user (the wait for the
 * reader), netif>user. Every RX_WAKE wakeup of a blocked reader is joined
 * with the latest READY of its socket before it and the first RUN of its
 * thread after it: ready>wakeup, wakeup>run.
 *
 * An RX_PKT record (the packet level) is a packet the kernel joined
 * already: its stages go straight into the samples, the same stages the
 * kernel's histograms got; its drops are counted from the RX_DROP records
 * that level still writes.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rx.h"
#include "stagerec.h"
#include "flows.h"
#include "output.h"
#include "vec.h"

/*
 * The rows are the uapi's receive stages (stagerec.h), so that the names
 * of both levels are one and a stage the uapi adds is a row here.
 */
#define RS_ROW_ENUM(NAME, name, rec, from, to)	STAGE_IF(rx_pkt, rec, RS_##NAME,)
#define RS_ROW_STAGE(NAME, name, rec, from, to)	\
	STAGE_IF(rx_pkt, rec, NETLAT_STAGE_##NAME,)
enum { NETLAT_STAGES(RS_ROW_ENUM) NR_RS };
static const unsigned int rs_stage[NR_RS] = { NETLAT_STAGES(RS_ROW_STAGE) };
#define rs_name(k)	netlat_stage_name(rs_stage[k])

struct rx_rec {
	uint64_t key;		/* TCP: 4-tuple hash (NETIF) or cookie; UDP: skb */
	uint64_t ts;
	uint32_t seq, end;
	uint8_t proto, where;
	bool peek;
};

struct rx_vec {
	struct rx_rec *v;
	size_t n, cap;
};

#define MAX_REASONS	8	/* distinct drop reasons kept per flow */

/* A drop reason: the recording kernel's number, its name if known. */
struct reason_count {
	uint32_t value;
	char name[NETLAT_NAME_MAX];	/* "" if the capture did not name it */
	uint64_t n;
};

struct rx_drops {
	uint64_t drops;
	struct reason_count reason[MAX_REASONS];
	uint64_t reason_other;		/* reasons beyond MAX_REASONS */
};

struct rx_flow {
	struct netlat_flow key;	/* the socket's, reserved zeroed */
	uint64_t tuple;			/* its 4-tuple hash, for drops */
	uint8_t proto;			/* NETLAT_RX_* */
	uint64_t segs, bytes_rcvd, bytes_read, ofo, backlog;
	struct rx_drops d;
};

/* An RX_DROP: the headers' flow (the sender's first), the reason. */
struct drop_rec {
	struct netlat_flow fl;
	uint8_t proto;
	uint32_t reason;
	char name[NETLAT_NAME_MAX];
};

/*
 * A service port's receive stages: the packets of the sockets whose
 * flow_service_port() it is (events-level UDP arrivals have no socket row
 * and are in none).
 */
struct rx_service {
	uint16_t port;
	uint64_t packets;
	struct netlat_samples d[NR_RS];
	struct netlat_dist dist[NR_RS];
};

struct rx_report {
	struct rx_service *svcs;	/* the most packets first, once computed */
	size_t nr_svcs, cap_svcs;
	struct rx_vec netif_tcp, netif_udp, arr, queue, copy_tcp, copy_udp;
	struct rx_vec ready, wakeup, run;	/* RX_WAKE: by cookie, tid, tid */
	struct rx_flow *flows;
	size_t nr_flows, cap_flows;
	struct drop_rec *drops;
	size_t nr_drops, cap_drops;
	struct rx_drops unmatched;	/* drops of no flow the records show */
	const struct netlat_names *names;	/* drop reasons in force */
	size_t kernel_pkts;		/* RX_PKT records */
	struct netlat_samples d[NR_RS];
	struct netlat_dist dist[NR_RS];
};

struct rx_report *rx_report_new(void)
{
	return calloc(1, sizeof(struct rx_report));
}

void rx_report_free(struct rx_report *rr)
{
	size_t i;
	int k;

	if (!rr)
		return;
	free(rr->netif_tcp.v);
	free(rr->netif_udp.v);
	free(rr->arr.v);
	free(rr->queue.v);
	free(rr->copy_tcp.v);
	free(rr->copy_udp.v);
	free(rr->ready.v);
	free(rr->wakeup.v);
	free(rr->run.v);
	free(rr->flows);
	free(rr->drops);
	for (k = 0; k < NR_RS; k++)
		netlat_samples_free(&rr->d[k]);
	for (i = 0; i < rr->nr_svcs; i++)
		for (k = 0; k < NR_RS; k++)
			netlat_samples_free(&rr->svcs[i].d[k]);
	free(rr->svcs);
	free(rr);
}

void rx_report_set_names(struct rx_report *rr, const struct netlat_names *names)
{
	rr->names = names;
}

bool rx_report_empty(const struct rx_report *rr)
{
	return !rr || (!rr->arr.n && !rr->netif_tcp.n && !rr->netif_udp.n &&
		       !rr->copy_tcp.n && !rr->copy_udp.n && !rr->nr_drops &&
		       !rr->wakeup.n && !rr->kernel_pkts);
}

static int push(struct rx_vec *a, const struct rx_rec *r)
{
	struct rx_rec *nv = vec_room(a->v, &a->cap, a->n, sizeof(*nv), 1024);

	if (!nv)
		return -ENOMEM;
	a->v = nv;
	a->v[a->n++] = *r;
	return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 1099511628211ULL;
	return h;
}

/* The 4-tuple as the local end sees it: the same for both directions. */
static uint64_t tuple_hash(uint16_t family, const uint8_t *laddr, uint16_t lport,
			   const uint8_t *raddr, uint16_t rport)
{
	uint64_t h = 1469598103934665603ULL;

	h = fnv(h, &family, sizeof(family));
	h = fnv(h, laddr, 16);
	h = fnv(h, &lport, sizeof(lport));
	h = fnv(h, raddr, 16);
	return fnv(h, &rport, sizeof(rport));
}

static uint64_t sock_tuple(const struct netlat_flow *f)
{
	return tuple_hash(f->family, f->saddr, f->sport, f->daddr, f->dport);
}

/* Headers' flow (source = the sender): the receiver's view of it. */
static uint64_t pkt_tuple(const struct netlat_flow *f)
{
	return tuple_hash(f->family, f->daddr, f->dport, f->saddr, f->sport);
}

static struct rx_flow *flow_of(struct rx_report *rr, const struct netlat_flow *f)
{
	struct netlat_flow k = *f;
	struct rx_flow *nf;
	size_t i;

	k.reserved = 0;
	/* a linear scan: the table is for the handful of flows a host reads */
	for (i = 0; i < rr->nr_flows; i++)
		if (!memcmp(&rr->flows[i].key, &k, sizeof(k)))
			return &rr->flows[i];
	nf = vec_room(rr->flows, &rr->cap_flows, rr->nr_flows, sizeof(*nf), 16);
	if (!nf)
		return NULL;
	rr->flows = nf;
	memset(&rr->flows[rr->nr_flows], 0, sizeof(*rr->flows));
	rr->flows[rr->nr_flows].key = k;
	rr->flows[rr->nr_flows].tuple = sock_tuple(&k);
	return &rr->flows[rr->nr_flows++];
}

static void add(struct rx_report *rr, int k, uint64_t from, uint64_t to)
{
	if (to >= from)
		netlat_samples_add(&rr->d[k], to - from);
}

/* The service of the socket @row; NULL without memory. */
static struct rx_service *service_of(struct rx_report *rr, const struct rx_flow *row)
{
	uint16_t port = flow_service_port(&row->key);
	struct rx_service *s;
	size_t i;

	for (i = 0; i < rr->nr_svcs; i++)
		if (rr->svcs[i].port == port)
			return &rr->svcs[i];
	s = vec_room(rr->svcs, &rr->cap_svcs, rr->nr_svcs, sizeof(*s), 8);
	if (!s)
		return NULL;
	rr->svcs = s;
	s = &rr->svcs[rr->nr_svcs++];
	memset(s, 0, sizeof(*s));
	s->port = port;
	return s;
}

/* add(), and to the service of the socket @row if it has one. */
static void add_at(struct rx_report *rr, const struct rx_flow *row, int k,
		   uint64_t from, uint64_t to)
{
	struct rx_service *s;

	add(rr, k, from, to);
	if (row && to >= from && (s = service_of(rr, row)))
		netlat_samples_add(&s->d[k], to - from);
}

/* A packet of the socket @row, for its service. */
static void count_at(struct rx_report *rr, const struct rx_flow *row)
{
	struct rx_service *s = row ? service_of(rr, row) : NULL;

	if (s)
		s->packets++;
}

/* The flow row of the socket @cookie; NULL. */
static const struct rx_flow *row_of(const struct rx_report *rr, uint64_t cookie)
{
	size_t j;

	for (j = 0; j < rr->nr_flows; j++)
		if (rr->flows[j].key.cookie == cookie)
			return &rr->flows[j];
	return NULL;
}

/* A packet the kernel followed (RX_PKT): joined by construction. */
static int add_pkt(struct rx_report *rr, const struct netlat_rec_rx_pkt *p)
{
	struct rx_flow *row = flow_of(rr, &p->flow);
	uint64_t from, to;
	int k;

	if (!row)
		return -ENOMEM;
	rr->kernel_pkts++;
	row->proto = p->proto;
	row->segs++;
	row->bytes_rcvd += p->len;
	if (p->flags & NETLAT_RXP_COPIED)
		row->bytes_read += p->len;
	if (p->flags & NETLAT_RXP_OFO)
		row->ofo++;
	if (p->flags & NETLAT_RXP_BACKLOG)
		row->backlog++;
	count_at(rr, row);
	for (k = 0; k < NR_RS; k++)
		if (netlat_rx_pkt_stage(p, rs_stage[k], &from, &to))
			add_at(rr, row, k, from, to);
	return 0;
}

int rx_report_add(struct rx_report *rr, const struct netlat_rec_hdr *h)
{
	const struct netlat_flow *fl = (const void *)(h + 1);
	struct rx_rec r = { .ts = h->ts_ns };
	struct rx_flow *row = NULL;

	if (h->type == NETLAT_REC_RX_PKT)
		return add_pkt(rr, (const void *)h);
	if (h->type == NETLAT_REC_RX_TRANSPORT || h->type == NETLAT_REC_RX_QUEUE ||
	    h->type == NETLAT_REC_RX_COPY) {
		row = flow_of(rr, fl);
		if (!row)
			return -ENOMEM;
		/* the three have proto at different offsets */
		row->proto = h->type == NETLAT_REC_RX_COPY ?
			     ((const struct netlat_rec_rx_copy *)h)->proto :
			     ((const struct netlat_rec_rx_skb *)h)->proto;
	}
	switch (h->type) {
	case NETLAT_REC_RX_NETIF: {
		const struct netlat_rec_rx_netif *n = (const void *)h;

		if (n->tstamp_mono_ns && n->tstamp_mono_ns <= h->ts_ns)
			r.ts = n->tstamp_mono_ns;
		r.seq = n->seq;
		if (n->proto == NETLAT_RX_UDP) {
			r.key = n->skb_id;
			return push(&rr->netif_udp, &r);
		}
		if (!n->len)
			return 0;
		r.key = pkt_tuple(fl);
		return push(&rr->netif_tcp, &r);
	}
	case NETLAT_REC_RX_TRANSPORT:
	case NETLAT_REC_RX_QUEUE: {
		const struct netlat_rec_rx_skb *s = (const void *)h;

		r.proto = s->proto;
		r.where = s->where;
		r.seq = s->seq;
		r.end = s->end_seq;
		r.key = s->proto == NETLAT_RX_UDP ? s->skb_id : fl->cookie;
		if (h->type == NETLAT_REC_RX_TRANSPORT) {
			row->segs++;
			row->bytes_rcvd += s->len;
			return push(&rr->arr, &r);
		}
		if (s->where == NETLAT_RX_Q_OFO)
			row->ofo++;
		if (s->where == NETLAT_RX_Q_BACKLOG) {
			row->backlog++;
			return 0;	/* queued for real when the owner releases */
		}
		return push(&rr->queue, &r);
	}
	case NETLAT_REC_RX_COPY: {
		const struct netlat_rec_rx_copy *c = (const void *)h;

		r.peek = c->flags & NETLAT_RX_PEEK;
		if (!r.peek)
			row->bytes_read += c->bytes;
		if (r.peek)
			return 0;
		r.seq = c->seq;
		r.end = c->end_seq;
		if (c->proto == NETLAT_RX_UDP) {
			r.key = c->skb_id;
			return push(&rr->copy_udp, &r);
		}
		r.key = fl->cookie;
		return push(&rr->copy_tcp, &r);
	}
	case NETLAT_REC_RX_WAKE: {
		const struct netlat_rec_rx_wake *w = (const void *)h;

		/* wakeups join their socket's READY (cookie) and RUN (tid) */
		r.key = fl->cookie;
		r.seq = w->tid;
		if (w->event == NETLAT_RX_WAKE_READY)
			return push(&rr->ready, &r);
		if (w->event == NETLAT_RX_WAKE_WAKEUP)
			return push(&rr->wakeup, &r);
		if (w->event == NETLAT_RX_WAKE_RUN) {
			r.key = w->tid;
			return push(&rr->run, &r);
		}
		return 0;
	}
	case NETLAT_REC_RX_DROP: {
		const struct netlat_rec_rx_drop *d = (const void *)h;

		struct drop_rec *nd = vec_room(rr->drops, &rr->cap_drops,
					       rr->nr_drops, sizeof(*nd), 64);

		if (!nd)
			return -ENOMEM;
		rr->drops = nd;
		struct drop_rec *dr = &rr->drops[rr->nr_drops++];
		const char *name = netlat_names_get(rr->names, d->reason);

		/* named now: a later stream of the capture may number them anew */
		memset(dr, 0, sizeof(*dr));
		dr->fl = *fl;
		dr->proto = d->proto;
		dr->reason = d->reason;
		if (name)
			snprintf(dr->name, sizeof(dr->name), "%s", name);
		return 0;
	}
	}
	return 0;
}

/* key, seq, time */
static int cmp_seq(const void *a, const void *b)
{
	const struct rx_rec *x = a, *y = b;

	if (x->key != y->key)
		return CMP(x->key, y->key);
	if (x->seq != y->seq)
		return CMP(x->seq, y->seq);
	return CMP(x->ts, y->ts);
}

/* key, time */
static int cmp_ts(const void *a, const void *b)
{
	const struct rx_rec *x = a, *y = b;

	return x->key != y->key ? CMP(x->key, y->key) : CMP(x->ts, y->ts);
}

static bool seq_before(const void *elem, const void *key)
{
	return cmp_seq(elem, key) < 0;
}

/* Index of the first record >= (@key, @seq, @ts) in @a sorted by cmp_seq. */
static size_t lower_seq(const struct rx_vec *a, uint64_t key, uint32_t seq, uint64_t ts)
{
	struct rx_rec k = { .key = key, .seq = seq, .ts = ts };

	return vec_search(a->v, a->n, sizeof(*a->v), &k, seq_before);
}

/* The latest record of (@key, @seq) at or before @ts, or NULL. */
static const struct rx_rec *before_seq(const struct rx_vec *a, uint64_t key,
				       uint32_t seq, uint64_t ts)
{
	size_t i = lower_seq(a, key, seq, ts + 1);

	if (i && a->v[i - 1].key == key && a->v[i - 1].seq == seq)
		return &a->v[i - 1];
	return NULL;
}

/* The first record of (@key, @seq) at or after @ts, or NULL. */
static const struct rx_rec *after_seq(const struct rx_vec *a, uint64_t key,
				      uint32_t seq, uint64_t ts)
{
	size_t i = lower_seq(a, key, seq, ts);

	if (i < a->n && a->v[i].key == key && a->v[i].seq == seq)
		return &a->v[i];
	return NULL;
}

/* Before the copy of socket k->key that holds byte k->seq, or of a later socket. */
static bool copy_before(const void *elem, const void *key)
{
	const struct rx_rec *x = elem, *k = key;

	/* a socket's copies follow each other in time and sequence */
	return x->key < k->key || (x->key == k->key && (int32_t)(x->end - k->seq) <= 0);
}

/* The TCP copy of socket @key whose [seq, end) holds @byte, or NULL. */
static const struct rx_rec *copy_of(const struct rx_vec *a, uint64_t key, uint32_t byte)
{
	struct rx_rec k = { .key = key, .seq = byte };
	size_t l = vec_search(a->v, a->n, sizeof(*a->v), &k, copy_before);

	if (l < a->n && a->v[l].key == key && (int32_t)(byte - a->v[l].seq) >= 0)
		return &a->v[l];
	return NULL;
}

static void join_tcp(struct rx_report *rr, const struct rx_rec *t,
		     const struct rx_flow *row)
{
	uint64_t tuple = row ? row->tuple : 0;
	const struct rx_rec *n, *q, *u;

	n = before_seq(&rr->netif_tcp, tuple, t->seq, t->ts);
	q = after_seq(&rr->queue, t->key, t->seq, t->ts);
	u = copy_of(&rr->copy_tcp, t->key, t->end - 1);
	if (u && u->ts < t->ts)
		u = NULL;	/* an older stream's copy at the same cookie */
	count_at(rr, row);
	if (n)
		add_at(rr, row, RS_RX_NETIF_TCP, n->ts, t->ts);
	if (q)
		add_at(rr, row, RS_RX_TCP_QUEUE, t->ts, q->ts);
	if (q && u)
		add_at(rr, row, RS_RX_QUEUE_USER, q->ts, u->ts);
	if (n && u)
		add_at(rr, row, RS_RX_NETIF_USER, n->ts, u->ts);
}

static void join_udp(struct rx_report *rr, const struct rx_rec *t)
{
	const struct rx_rec *n, *q, *u;

	/* per skb: the seq fields are 0, so these are lookups by time */
	n = before_seq(&rr->netif_udp, t->key, 0, t->ts);
	q = after_seq(&rr->queue, t->key, 0, t->ts);
	u = after_seq(&rr->copy_udp, t->key, 0, q ? q->ts : t->ts);
	if (n)
		add(rr, RS_RX_NETIF_UDP, n->ts, t->ts);
	if (q && u)
		add(rr, RS_RX_QUEUE_USER, q->ts, u->ts);
	if (n && u)
		add(rr, RS_RX_NETIF_USER, n->ts, u->ts);
}

static bool ts_at_or_before(const void *elem, const void *key)
{
	const struct rx_rec *x = elem, *k = key;

	return x->key < k->key || (x->key == k->key && x->ts <= k->ts);
}

static bool ts_before(const void *elem, const void *key)
{
	return cmp_ts(elem, key) < 0;
}

/* The latest record of @key at or before @ts in @a sorted by cmp_ts. */
static const struct rx_rec *latest(const struct rx_vec *a, uint64_t key, uint64_t ts)
{
	struct rx_rec k = { .key = key, .ts = ts };
	size_t l = vec_search(a->v, a->n, sizeof(*a->v), &k, ts_at_or_before);

	return l && a->v[l - 1].key == key ? &a->v[l - 1] : NULL;
}

/* The first record of @key at or after @ts in @a sorted by cmp_ts. */
static const struct rx_rec *first(const struct rx_vec *a, uint64_t key, uint64_t ts)
{
	struct rx_rec k = { .key = key, .ts = ts };
	size_t l = vec_search(a->v, a->n, sizeof(*a->v), &k, ts_before);

	return l < a->n && a->v[l].key == key ? &a->v[l] : NULL;
}

static bool addr_any(const uint8_t *a)
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, sizeof(zero));
}

/*
 * The socket that dropped @d: the flow of the same 4-tuple, else (an
 * unconnected UDP socket's flow has no peer) a UDP flow of the same
 * local port whose peer is unset and whose address is the packet's
 * destination or unset.
 */
static struct rx_flow *drop_flow(struct rx_report *rr, const struct drop_rec *d)
{
	uint64_t tuple = pkt_tuple(&d->fl);
	struct rx_flow *wild = NULL;
	size_t j;

	for (j = 0; j < rr->nr_flows; j++) {
		struct rx_flow *f = &rr->flows[j];

		if (f->tuple == tuple)
			return f;
		if (!wild && d->proto == NETLAT_RX_UDP && f->proto == NETLAT_RX_UDP &&
		    f->key.family == d->fl.family && f->key.sport == d->fl.dport &&
		    !f->key.dport && addr_any(f->key.daddr) &&
		    (addr_any(f->key.saddr) || !memcmp(f->key.saddr, d->fl.daddr, 16)))
			wild = f;
	}
	return wild;
}

static void count_drop(struct rx_drops *c, const struct drop_rec *d)
{
	unsigned int r;

	c->drops++;
	for (r = 0; r < MAX_REASONS && c->reason[r].n; r++)
		if (c->reason[r].value == d->reason && !strcmp(c->reason[r].name, d->name))
			break;
	if (r == MAX_REASONS) {
		c->reason_other++;
		return;
	}
	c->reason[r].value = d->reason;
	memcpy(c->reason[r].name, d->name, sizeof(d->name));
	c->reason[r].n++;
}

static void join_wakeups(struct rx_report *rr)
{
	size_t i;

	qsort(rr->ready.v, rr->ready.n, sizeof(struct rx_rec), cmp_ts);
	qsort(rr->run.v, rr->run.n, sizeof(struct rx_rec), cmp_ts);
	for (i = 0; i < rr->wakeup.n; i++) {
		const struct rx_rec *w = &rr->wakeup.v[i];
		const struct rx_rec *rd = latest(&rr->ready, w->key, w->ts);
		const struct rx_rec *ru = first(&rr->run, w->seq, w->ts);

		const struct rx_flow *row = row_of(rr, w->key);

		if (rd)
			add_at(rr, row, RS_RX_READY_WAKEUP, rd->ts, w->ts);
		if (ru)
			add_at(rr, row, RS_RX_WAKEUP_RUN, w->ts, ru->ts);
	}
}

/* Most packets first, then by port. */
static int cmp_svcs(const void *a, const void *b)
{
	const struct rx_service *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return CMP(x->port, y->port);
}

void rx_report_compute(struct rx_report *rr)
{
	size_t i;
	int k;

	if (!rr)
		return;
	qsort(rr->netif_tcp.v, rr->netif_tcp.n, sizeof(struct rx_rec), cmp_seq);
	qsort(rr->netif_udp.v, rr->netif_udp.n, sizeof(struct rx_rec), cmp_seq);
	qsort(rr->queue.v, rr->queue.n, sizeof(struct rx_rec), cmp_seq);
	qsort(rr->copy_udp.v, rr->copy_udp.n, sizeof(struct rx_rec), cmp_seq);
	qsort(rr->copy_tcp.v, rr->copy_tcp.n, sizeof(struct rx_rec), cmp_ts);
	for (i = 0; i < rr->arr.n; i++) {
		const struct rx_rec *t = &rr->arr.v[i];

		if (t->proto == NETLAT_RX_UDP) {
			join_udp(rr, t);
			continue;
		}
		/* the arrival's flow row gives its 4-tuple */
		join_tcp(rr, t, row_of(rr, t->key));
	}
	for (i = 0; i < rr->nr_drops; i++) {
		struct rx_flow *row = drop_flow(rr, &rr->drops[i]);

		count_drop(row ? &row->d : &rr->unmatched, &rr->drops[i]);
	}
	join_wakeups(rr);
	for (k = 0; k < NR_RS; k++)
		netlat_dist_compute(rr->d[k].v, rr->d[k].n, &rr->dist[k]);
	for (i = 0; i < rr->nr_svcs; i++)
		for (k = 0; k < NR_RS; k++)
			netlat_dist_compute(rr->svcs[i].d[k].v, rr->svcs[i].d[k].n,
					    &rr->svcs[i].dist[k]);
	qsort(rr->svcs, rr->nr_svcs, sizeof(*rr->svcs), cmp_svcs);
}

/*
 * Rows with samples; netif>udp/tcp only for a protocol that was seen, the
 * wakeup stages only when the rx_sched group recorded any (a WAKEUP, or
 * an RX_PKT with the wakeup of its reader).
 */
static bool rs_shown(const struct rx_report *rr, int k)
{
	if (k == RS_RX_READY_WAKEUP || k == RS_RX_WAKEUP_RUN)
		return rr->wakeup.n || rr->dist[RS_RX_READY_WAKEUP].count ||
		       rr->dist[RS_RX_WAKEUP_RUN].count;
	return rr->dist[k].count || (k != RS_RX_NETIF_TCP && k != RS_RX_NETIF_UDP);
}

void rx_report_stage_rows(const struct rx_report *rr, FILE *f)
{
	int k;

	if (rx_report_empty(rr))
		return;
	for (k = 0; k < NR_RS; k++)
		if (rs_shown(rr, k))
			print_dist_row(f, 13, rs_name(k), &rr->dist[k]);
}


/*
 * "drops":N,"drop_reasons":{"VALUE":N},"drops_by_reason":[{"reason":V,
 * "name":"NAME" or null,"count":N}],"drops_other_reasons":N; a leading
 * comma unless @first.
 */
static void json_drops(FILE *f, const struct rx_drops *d, bool first)
{
	unsigned int n, m;

	fprintf(f, "%s\"drops\":%llu,\"drop_reasons\":{", first ? "" : ",", ull(d->drops));
	/* by number: one key per number (appended captures may name it twice) */
	for (n = 0; n < MAX_REASONS && d->reason[n].n; n++) {
		uint64_t sum = 0;

		for (m = 0; m < n && d->reason[m].value != d->reason[n].value; m++)
			;
		if (m < n)
			continue;
		for (m = n; m < MAX_REASONS && d->reason[m].n; m++)
			if (d->reason[m].value == d->reason[n].value)
				sum += d->reason[m].n;
		fprintf(f, "%s\"%u\":%llu", n ? "," : "", d->reason[n].value, ull(sum));
	}
	fputs("},\"drops_by_reason\":[", f);
	for (n = 0; n < MAX_REASONS && d->reason[n].n; n++) {
		fprintf(f, "%s{\"reason\":%u,\"name\":", n ? "," : "", d->reason[n].value);
		if (d->reason[n].name[0])
			print_json_string(f, d->reason[n].name);
		else
			fputs("null", f);
		fprintf(f, ",\"count\":%llu}", ull(d->reason[n].n));
	}
	fprintf(f, "],\"drops_other_reasons\":%llu", ull(d->reason_other));
}

/*
 * " (NAME:N,reasonV:N,...)": named reasons by name (one name that two
 * kernels number differently, in appended captures, once), others by
 * number.
 */
static void text_reasons(FILE *f, const struct rx_drops *d)
{
	unsigned int n, m, shown = 0;

	for (n = 0; n < MAX_REASONS && d->reason[n].n; n++) {
		const struct reason_count *r = &d->reason[n];
		uint64_t sum = r->n;

		for (m = 0; m < n && (!r->name[0] || strcmp(d->reason[m].name, r->name)); m++)
			;
		if (m < n)
			continue;	/* counted with the first of its name */
		for (m = n + 1; r->name[0] && m < MAX_REASONS && d->reason[m].n; m++)
			if (!strcmp(d->reason[m].name, r->name))
				sum += d->reason[m].n;
		fputs(shown++ ? "," : " (", f);
		if (r->name[0])
			fprintf(f, "%s:%llu", r->name, ull(sum));
		else
			fprintf(f, "reason%u:%llu", r->value, ull(sum));
	}
	if (d->reason_other)
		fprintf(f, ",more:%llu", ull(d->reason_other));
	if (n)
		fputc(')', f);
}

void rx_report_json(const struct rx_report *rr, FILE *f)
{
	bool first = true;
	size_t i;
	int k;

	if (rx_report_empty(rr))
		return;
	fputs(",\"rx_stages\":{", f);
	for (k = 0; k < NR_RS; k++) {
		if (!rs_shown(rr, k))
			continue;
		fprintf(f, "%s\"%s\":", first ? "" : ",", rs_name(k));
		print_dist_json(f, &rr->dist[k]);
		first = false;
	}
	fputs("},\"rx_flows\":[", f);
	for (i = 0; i < rr->nr_flows; i++) {
		const struct rx_flow *r = &rr->flows[i];

		fprintf(f, "%s{\"proto\":\"%s\"", i ? "," : "",
			r->proto == NETLAT_RX_UDP ? "udp" : "tcp");
		print_flow(f, &r->key, true);
		fprintf(f, ",\"segments\":%llu,\"bytes_received\":%llu,\"bytes_read\":%llu,"
			"\"ofo\":%llu,\"backlog\":%llu", ull(r->segs), ull(r->bytes_rcvd),
			ull(r->bytes_read), ull(r->ofo), ull(r->backlog));
		json_drops(f, &r->d, false);
		fputc('}', f);
	}
	fputc(']', f);
	fputs(",\"rx_drops_unmatched\":{", f);
	json_drops(f, &rr->unmatched, true);
	fprintf(f, "},\"rx_services_count\":%zu,\"rx_services\":[", rr->nr_svcs);
	for (i = 0; i < rr->nr_svcs && i < RX_SERVICES_SHOWN; i++) {
		const struct rx_service *s = &rr->svcs[i];

		fprintf(f, "%s{\"port\":%u,\"packets\":%llu,\"stages\":{", i ? "," : "",
			s->port, ull(s->packets));
		for (first = true, k = 0; k < NR_RS; k++) {
			if (!s->dist[k].count)
				continue;
			fprintf(f, "%s\"%s\":", first ? "" : ",", rs_name(k));
			print_dist_json(f, &s->dist[k]);
			first = false;
		}
		fputs("}}", f);
	}
	fputc(']', f);
}

size_t rx_report_nr_services(const struct rx_report *rr)
{
	return rx_report_empty(rr) ? 0 : rr->nr_svcs;
}

static void service_item(FILE *f, const void *rr, size_t i, bool html)
{
	const struct rx_service *s = &((const struct rx_report *)rr)->svcs[i];
	int k;

	fprintf(f, "port %u: %llu packet%s", s->port, ull(s->packets),
		s->packets == 1 ? "" : "s");
	for (k = 0; k < NR_RS; k++)
		if (s->dist[k].count)
			print_stage_summary(f, rs_name(k), &s->dist[k], html);
}

void rx_report_services(const struct rx_report *rr, FILE *f, bool html)
{
	print_items(f, html, rr, rx_report_nr_services(rr), RX_SERVICES_SHOWN,
		    service_item, "ports");
}

void rx_report_text_services(const struct rx_report *rr, FILE *f)
{
	if (!rx_report_nr_services(rr))
		return;
	fputs("\nper service port, receive stages\n", f);
	rx_report_services(rr, f, false);
}

void rx_report_flows(const struct rx_report *rr, FILE *f)
{
	size_t i;

	if (rx_report_empty(rr) || (!rr->nr_flows && !rr->unmatched.drops))
		return;
	fprintf(f, "\nReceive flows (local first)\n");
	for (i = 0; i < rr->nr_flows; i++) {
		const struct rx_flow *r = &rr->flows[i];

		fprintf(f, "%s ", r->proto == NETLAT_RX_UDP ? "udp" : "tcp");
		print_flow(f, &r->key, false);
		fprintf(f, " segments=%llu received=%llu read=%llu ofo=%llu backlog=%llu drops=%llu",
			ull(r->segs), ull(r->bytes_rcvd), ull(r->bytes_read), ull(r->ofo),
			ull(r->backlog), ull(r->d.drops));
		text_reasons(f, &r->d);
		fputc('\n', f);
	}
	if (rr->unmatched.drops) {
		fprintf(f, "drops of packets to no socket above: %llu", ull(rr->unmatched.drops));
		text_reasons(f, &rr->unmatched);
		fputc('\n', f);
	}
}

bool rx_report_stage(const struct rx_report *rr, unsigned int i, const char **name,
		     const struct netlat_dist **d)
{
	int k;

	if (rx_report_empty(rr))
		return false;
	for (k = 0; k < NR_RS; k++) {
		if (!rs_shown(rr, k) || i--)
			continue;
		*name = rs_name(k);
		*d = &rr->dist[k];
		return true;
	}
	return false;
}
