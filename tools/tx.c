// SPDX-License-Identifier: GPL-2.0
/*
 * The send side of "netlat report": each first transmission of TCP data
 * joined with its sendmsg, device points and ACK (the events level), or
 * taken whole from the kernel's TCP_PKT records (the packet level); the
 * stages, directions, services and slowest packets of them; their text
 * and JSON are txprint.c's. The receive side's twin is rx.c; report.c
 * feeds both.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"
#include "output.h"
#include "vec.h"

/* ---- per-skb stage join of TCP records ----------------------------------- */

/*
 * Each first transmission of data (TCP_XMIT, not a retransmission) is
 * joined, on the socket cookie, with the sendmsg whose byte range holds its
 * first byte, the first qdisc and driver records of the same sequence
 * after it, and the first cumulative ACK covering its last byte, unless
 * some of its bytes were sent again before that ACK (Karn's ambiguity:
 * the ACK may answer the retransmission; its >ack stages are left out).
 * A VIRTIO xmit of the same socket and sequence after the driver record
 * gives driver>vq.
 * xmit>ack is not joined: the module measures it per ACK (xmit_ack_ns,
 * from the last transmission of the oldest segment the ACK covers in
 * full), left out when that segment was retransmitted (the same
 * ambiguity); modules before it have no such field and the stage is
 * left out.
 */
#define TX_ROW_NAME(NAME, name, rec, from, to)	STAGE_IF(tcp_pkt, rec, name,)

const char *const stage_names[NR_ST] = { NETLAT_STAGES(TX_ROW_NAME) };

const char *const point_names[NR_PT] = { "sendmsg", "xmit", "qdisc", "driver", "ack" };

/* A row's kernel stage and the fields of its two points in a TCP_PKT record. */
struct tx_row {
	unsigned int stage;
	size_t from, to;
};

#define TX_ROW(NAME, name, rec, from, to)				\
	STAGE_IF(tcp_pkt, rec, { NETLAT_STAGE_##NAME,			\
		 offsetof(struct netlat_rec_tcp_pkt, from),		\
		 offsetof(struct netlat_rec_tcp_pkt, to) },)

static const struct tx_row tx_rows[NR_ST] = { NETLAT_STAGES(TX_ROW) };

/*
 * The one mapping of a packet record's fields to the join's points: what
 * a packet record gives each point, and the points of a row.
 */
static const size_t pt_field[NR_PT] = {
	[PT_SENDMSG] = offsetof(struct netlat_rec_tcp_pkt, sendmsg_ns),
	[PT_XMIT] = offsetof(struct netlat_rec_tcp_pkt, xmit_ns),
	[PT_QDISC] = offsetof(struct netlat_rec_tcp_pkt, qdisc_ns),
	[PT_DRIVER] = offsetof(struct netlat_rec_tcp_pkt, driver_ns),
	[PT_ACK] = offsetof(struct netlat_rec_tcp_pkt, end_ns),
};

/* The point of the field at @off; -1 if it is none (vq_ns). */
static int field_point(size_t off)
{
	int k;

	for (k = 0; k < NR_PT; k++)
		if (pt_field[k] == off)
			return k;
	return -1;
}

/*
 * The points of row @k that the events join takes it from: false for a
 * row with a field no point is (driver>vq: the virtio join gives it), and
 * for xmit>ack, which the module measures per ACK (xmit_ack_ns), not as
 * the xmit to the ACK the join found.
 */
static bool row_points(int k, int *from, int *to)
{
	*from = field_point(tx_rows[k].from);
	*to = field_point(tx_rows[k].to);
	return k != ST_XMIT_ACK && *from >= 0 && *to >= 0;
}

bool stage_shown(const struct stages *st, int k)
{
	int a, b;

	return row_points(k, &a, &b) || st->d[k].n;
}

static int j_push(struct j_vec *a, const struct j_rec *r)
{
	struct j_rec *nv = vec_room(a->v, &a->cap, a->n, sizeof(*nv), 1024);

	if (!nv)
		return -ENOMEM;
	a->v = nv;
	a->v[a->n++] = *r;
	return 0;
}

/*
 * A packet record: the kernel joined its points already, by construction.
 * Its stages go straight into the samples; its points become a packet for
 * the pictures: an XMIT entry (stage KERNEL_PKT, u.x.skb_id the index of
 * its NR_PT points in st->kp, a zero time where a point was not seen).
 */
#define KERNEL_PKT	1

static int add_pkt(struct stages *st, const struct netlat_rec_tcp_pkt *p,
		   const struct j_rec *base)
{
	struct j_rec r = *base;
	uint64_t from, to;
	int k;

	st->kernel_pkts++;
	for (k = 0; k < NR_ST; k++)
		if (netlat_pkt_stage(p, tx_rows[k].stage, &from, &to) &&
		    netlat_samples_add(&st->d[k], to - from))
			return -ENOMEM;
	r.seq = p->seq;
	r.end = p->end_seq;
	for (k = 0; k < NR_PT; k++) {
		memcpy(&r.ts, (const char *)p + pt_field[k], sizeof(r.ts));
		/* the end of a packet not ACKed is no ACK (closed) */
		if (k == PT_ACK && !(p->flags & NETLAT_PKT_ACKED))
			r.ts = 0;
		if (j_push(&st->kp, &r))
			return -ENOMEM;
	}
	r.ts = p->xmit_ns;
	r.stage = KERNEL_PKT;
	r.u.x.skb_id = st->kp.n / NR_PT - 1;
	r.u.x.len = p->end_seq - p->seq;
	r.u.x.segs = p->segs;
	return j_push(&st->xmit, &r);
}

struct stages *tx_new(void)
{
	return calloc(1, sizeof(struct stages));
}

int tx_add_tcp(struct stages *st, struct flows *fs, const struct netlat_rec_hdr *h)
{
	const struct netlat_flow *fl = (const void *)(h + 1);
	struct j_rec r = { .cookie = fl->cookie, .ts = h->ts_ns, .seqno = h->seq,
			   .cpu = h->cpu };

	if (flows_add(fs, h, &r.flow))
		return -ENOMEM;
	switch (h->type) {
	case NETLAT_REC_TCP_SENDMSG: {
		const struct netlat_rec_tcp_sendmsg *m = (const void *)h;

		r.ts = m->start_ns;
		r.seq = m->sendmsg_id;
		r.end = m->end_seq;
		r.u.sm.ret_ts = h->ts_ns;
		r.u.sm.ret = m->ret;
		r.u.sm.pid = m->pid;
		r.u.sm.tid = m->tid;
		return r.seq == r.end ? 0 : j_push(&st->sm, &r);
	}
	case NETLAT_REC_TCP_XMIT: {
		const struct netlat_rec_tcp_xmit *x = (const void *)h;

		if (!x->len)
			return 0;
		r.seq = x->seq;
		r.end = x->seq + x->len;
		if (x->flags & NETLAT_TCP_RETRANSMIT)
			return j_push(&st->resent, &r);
		r.u.x.skb_id = x->skb_id;
		r.u.x.len = x->len;
		r.u.x.segs = x->segs;
		return j_push(&st->xmit, &r);
	}
	case NETLAT_REC_TCP_DEV: {
		const struct netlat_rec_tcp_dev *d = (const void *)h;

		if (!d->len || !fl->cookie)
			return 0;
		r.seq = d->seq;
		r.stage = d->stage;
		r.u.d.ifindex = d->ifindex;
		r.u.d.len = d->len;
		return j_push(&st->dev, &r);
	}
	case NETLAT_REC_TCP_PKT: {
		struct netlat_rec_tcp_pkt buf;
		const struct netlat_rec_tcp_pkt *p = netlat_pkt_rec(h, &buf);

		return p ? add_pkt(st, p, &r) : 0;
	}
	case NETLAT_REC_TCP_ACK: {
		const struct netlat_rec_tcp_ack *a = (const void *)h;

		/* Karn: after a retransmission the ACK may answer either */
		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_ack, xmit_ack_ns) &&
		    a->xmit_ack_ns && !(a->flags & NETLAT_TCP_RETRANSMIT) &&
		    netlat_samples_add(&st->d[ST_XMIT_ACK], a->xmit_ack_ns))
			return -ENOMEM;
		r.seq = a->snd_una;
		r.u.a.acked = a->acked;
		r.u.a.resent = a->flags & NETLAT_TCP_RETRANSMIT;
		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_ack, xmit_ack_ns))
			r.u.a.xmit_ack_ns = a->xmit_ack_ns;
		return j_push(&st->ack, &r);
	}
	case NETLAT_REC_TCP_RETRANS: {
		const struct netlat_rec_tcp_retrans *t = (const void *)h;

		r.seq = t->seq;
		r.end = t->end_seq;
		r.stage = t->kind < NR_RTX_KINDS ? t->kind : NETLAT_RETRANS_OTHER;
		r.u.r.ret = t->ret;
		r.u.r.segs = t->segs;
		if (!t->ret && j_push(&st->resent, &r))
			return -ENOMEM;
		return j_push(&st->rtx, &r);
	}
	}
	return 0;
}

/* cookie, then time */
static int cmp_ts(const void *a, const void *b)
{
	const struct j_rec *x = a, *y = b;

	return x->cookie != y->cookie ? CMP(x->cookie, y->cookie) : CMP(x->ts, y->ts);
}

/* cookie, stage, seq, time */
static int cmp_dev(const void *a, const void *b)
{
	const struct j_rec *x = a, *y = b;

	if (x->cookie != y->cookie)
		return CMP(x->cookie, y->cookie);
	if (x->stage != y->stage)
		return CMP(x->stage, y->stage);
	if (x->seq != y->seq)
		return CMP(x->seq, y->seq);
	return CMP(x->ts, y->ts);
}

static bool cookie_before(const void *elem, const void *key)
{
	return ((const struct j_rec *)elem)->cookie < ((const struct j_rec *)key)->cookie;
}

/* [lo, hi): the records of @cookie in @a (sorted by cookie first). */
static void cookie_range(const struct j_vec *a, uint64_t cookie, size_t *lo, size_t *hi)
{
	struct j_rec key = { .cookie = cookie };
	size_t h;

	*lo = vec_search(a->v, a->n, sizeof(*a->v), &key, cookie_before);
	for (h = *lo; h < a->n && a->v[h].cookie == cookie; h++)
		;
	*hi = h;
}

static bool dev_before(const void *elem, const void *key)
{
	return cmp_dev(elem, key) < 0;
}

/* The DEV record of @stage with @seq at or after @ts, or NULL. */
static const struct j_rec *find_dev(const struct j_vec *a, uint64_t cookie, uint8_t stage,
				    uint32_t seq, uint64_t ts)
{
	struct j_rec key = { .cookie = cookie, .stage = stage, .seq = seq, .ts = ts };
	size_t l = vec_search(a->v, a->n, sizeof(*a->v), &key, dev_before);

	if (l < a->n && a->v[l].cookie == cookie && a->v[l].stage == stage &&
	    a->v[l].seq == seq)
		return &a->v[l];
	return NULL;
}

/*
 * Whether bytes of @x were sent again after it and no later than @until:
 * an ACK from then on may answer either transmission (Karn's ambiguity),
 * so the time from @x to it is no measure of anything.
 */
static bool resent_before(const struct j_vec *resent, const struct j_rec *x, uint64_t until)
{
	size_t lo, hi, l, h;

	cookie_range(resent, x->cookie, &lo, &hi);
	for (l = lo, h = hi; l < h;) {
		size_t m = (l + h) / 2;

		if (resent->v[m].ts <= x->ts)
			l = m + 1;
		else
			h = m;
	}
	for (; l < hi && resent->v[l].ts <= until; l++)
		if ((int32_t)(resent->v[l].seq - x->end) < 0 &&
		    (int32_t)(resent->v[l].end - x->seq) > 0)
			return true;
	return false;
}

static void add_delta(struct stages *st, int stage, uint64_t from, uint64_t to)
{
	if (to >= from)
		netlat_samples_add(&st->d[stage], to - from);
}

/*
 * The packet of @x: the joined records as points, less any that would go
 * back in time (the stage tables leave such a delta out too).
 */
static void make_packet(struct packet *p, const struct j_rec *sm, const struct j_rec *x,
			const struct j_rec *q, const struct j_rec *d, const struct j_rec *a)
{
	const struct j_rec *pt[NR_PT] = { sm, x, q, d, a }, *last;
	int k;

	memset(p, 0, sizeof(*p));
	if (sm && sm->ts <= x->ts) {
		p->pt[PT_SENDMSG] = sm;
		p->e2e = x->ts - sm->ts;
	}
	p->pt[PT_XMIT] = last = x;
	for (k = PT_XMIT + 1; k < NR_PT; k++) {
		if (!pt[k] || pt[k]->ts < last->ts)
			continue;
		p->pt[k] = pt[k];
		p->e2e += pt[k]->ts - last->ts;
		last = pt[k];
	}
	if (p->pt[PT_SENDMSG])
		p->queued = x->ts - p->pt[PT_SENDMSG]->ts;
	last = p->pt[PT_DRIVER] ? p->pt[PT_DRIVER] : p->pt[PT_QDISC];
	if (last)
		p->stack = last->ts - x->ts;
	if (p->pt[PT_ACK])
		p->ack_wait = p->pt[PT_ACK]->ts - (last ? last->ts : x->ts);
}

int packet_next_point(const struct packet *pkt, int from)
{
	int k;

	for (k = from + 1; k < NR_PT && !pkt->pt[k]; k++)
		;
	return k;
}

void segment_name(char *buf, size_t len, int a, int b)
{
	snprintf(buf, len, "%s>%s", point_names[a], point_names[b]);
}

static void join_one(struct stages *st, const struct j_rec *x, struct packet *p)
{
	const struct j_rec *sm = NULL, *q = NULL, *d = NULL, *a = NULL, *v;
	const struct j_rec *pts[NR_PT] = { [PT_XMIT] = x };
	size_t lo, hi, l, h;
	int k, f, t;

	if (x->stage == KERNEL_PKT) {
		const struct j_rec *pt = &st->kp.v[x->u.x.skb_id * NR_PT];

		/* its samples are in already; only the picture's packet */
		if (p)
			make_packet(p, pt[PT_SENDMSG].ts ? &pt[PT_SENDMSG] : NULL, x,
				    pt[PT_QDISC].ts ? &pt[PT_QDISC] : NULL,
				    pt[PT_DRIVER].ts ? &pt[PT_DRIVER] : NULL,
				    pt[PT_ACK].ts ? &pt[PT_ACK] : NULL);
		return;
	}

	/* sendmsg ranges of a socket follow each other in time and sequence */
	cookie_range(&st->sm, x->cookie, &lo, &hi);
	for (l = lo, h = hi; l < h;) {
		size_t m = (l + h) / 2;

		if ((int32_t)(st->sm.v[m].end - x->seq) <= 0)
			l = m + 1;
		else
			h = m;
	}
	if (l < hi && (int32_t)(x->seq - st->sm.v[l].seq) >= 0)
		sm = &st->sm.v[l];
	q = find_dev(&st->dev, x->cookie, NETLAT_DEV_QDISC, x->seq, x->ts);
	d = find_dev(&st->dev, x->cookie, NETLAT_DEV_DRIVER, x->seq, q ? q->ts : x->ts);
	v = d ? find_dev(st->vq, x->cookie, 0, x->seq, d->ts) : NULL;
	/*
	 * Its ACK comes after the segment reached the driver (or left TCP):
	 * a socket address, and so its cookie, is reused by later sockets,
	 * whose ACKs must not be taken. From there on cumulative ACKs of one
	 * socket only move forward.
	 */
	cookie_range(&st->ack, x->cookie, &lo, &hi);
	for (l = lo, h = hi; l < h;) {
		size_t m = (l + h) / 2;

		if (st->ack.v[m].ts < (d ? d->ts : x->ts))
			l = m + 1;
		else
			h = m;
	}
	for (h = hi; l < h;) {
		size_t m = (l + h) / 2;

		if ((int32_t)(st->ack.v[m].seq - x->end) < 0)
			l = m + 1;
		else
			h = m;
	}
	/*
	 * The kernel's word first: an ACK of a segment it sent again answers
	 * either transmission, whether or not the capture shows the resend
	 * (a hit missed, a record kept out).
	 */
	if (l < hi && !st->ack.v[l].u.a.resent &&
	    !resent_before(&st->resent, x, st->ack.v[l].ts))
		a = &st->ack.v[l];

	pts[PT_SENDMSG] = sm;
	pts[PT_QDISC] = q;
	pts[PT_DRIVER] = d;
	pts[PT_ACK] = a;
	for (k = 0; k < NR_ST; k++)
		if (row_points(k, &f, &t) && pts[f] && pts[t])
			add_delta(st, k, pts[f]->ts, pts[t]->ts);
	/* the virtqueue is no point of the packet: its row apart */
	if (v)
		add_delta(st, ST_DRIVER_VQ, d->ts, v->ts);
	if (p)
		make_packet(p, sm, x, q, d, a);
}

static const struct netlat_flow *packet_flow(const struct flows *fs,
						 const struct packet *p)
{
	return &flows_row(fs, p->pt[PT_XMIT]->flow)->key;
}

/* Family, source, destination: what tells directions apart. */
static int cmp_addrs(unsigned int fx, const uint8_t *sx, const uint8_t *dx,
		     unsigned int fy, const uint8_t *sy, const uint8_t *dy)
{
	int c;

	if (fx != fy)
		return CMP(fx, fy);
	c = memcmp(sx, sy, 16);
	return c ? c : memcmp(dx, dy, 16);
}

static int cmp_dir_key(const struct netlat_flow *x, const struct netlat_flow *y)
{
	return cmp_addrs(x->family, x->saddr, x->daddr, y->family, y->saddr, y->daddr);
}

static const struct flows *sort_flows;	/* for the qsort() comparators */

/* Direction, then transmission order. */
static int cmp_by_dir(const void *a, const void *b)
{
	const struct packet *x = *(const struct packet *const *)a;
	const struct packet *y = *(const struct packet *const *)b;
	int c = cmp_dir_key(packet_flow(sort_flows, x), packet_flow(sort_flows, y));

	return c ? c : CMP(x, y);
}

/* Most packets first. */
static int cmp_dirs(const void *a, const void *b)
{
	const struct direction *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return cmp_addrs(x->family, x->saddr, x->daddr, y->family, y->saddr, y->daddr);
}

/* Slowest first; among equals, the earlier transmission first. */
static int cmp_slow(const void *a, const void *b)
{
	const struct packet *x = *(const struct packet *const *)a;
	const struct packet *y = *(const struct packet *const *)b;

	if (x->e2e != y->e2e)
		return x->e2e < y->e2e ? 1 : -1;
	return CMP(x->pt[PT_XMIT]->ts, y->pt[PT_XMIT]->ts);
}

static bool two_points(const struct packet *p)
{
	return packet_next_point(p, packet_next_point(p, -1)) < NR_PT;
}

/* The first of @n packets with two points whose e2e is @v. */
static const struct packet *packet_at(const struct packet *const *p, size_t n, uint64_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (two_points(p[i]) && p[i]->e2e == v)
			return p[i];
	return NULL;
}

/* The direction of the @n packets at @p (all of one direction). */
static int add_direction(struct stages *st, const struct flows *fs,
			 const struct packet *const *p, size_t n, struct netlat_samples *e2e)
{
	const struct netlat_flow *fl = packet_flow(fs, p[0]);
	struct direction *d = &st->dirs[st->nr_dirs++];
	size_t i;

	memset(d, 0, sizeof(*d));
	d->family = fl->family;
	memcpy(d->saddr, fl->saddr, sizeof(fl->saddr));
	memcpy(d->daddr, fl->daddr, sizeof(fl->daddr));
	d->packets = n;
	e2e->n = 0;
	for (i = 0; i < n; i++)
		if (two_points(p[i]) && netlat_samples_add(e2e, p[i]->e2e))
			return -ENOMEM;
	netlat_dist_compute(e2e->v, e2e->n, &d->e2e);
	if (d->e2e.count) {
		d->median = packet_at(p, n, d->e2e.p50);
		d->p99 = packet_at(p, n, d->e2e.p99);
	}
	return 0;
}

/* The stage @k of @p from its points: 0 and false if it has not both. */
static bool packet_stage(const struct packet *p, int k, uint64_t *d)
{
	const struct j_rec *a, *b;
	int f, t;

	if (!row_points(k, &f, &t))
		return false;
	a = p->pt[f];
	b = p->pt[t];
	if (!a || !b || b->ts < a->ts)
		return false;
	*d = b->ts - a->ts;
	return true;
}

static int cmp_by_service(const void *a, const void *b)
{
	const struct packet *x = *(const struct packet *const *)a;
	const struct packet *y = *(const struct packet *const *)b;
	uint16_t px = flow_service_port(packet_flow(sort_flows, x));
	uint16_t py = flow_service_port(packet_flow(sort_flows, y));

	return px != py ? CMP(px, py) : CMP(x, y);
}

/* Most packets first, then by port. */
static int cmp_svcs(const void *a, const void *b)
{
	const struct service *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return CMP(x->port, y->port);
}

bool service_stage_shown(const struct service *svc, int k)
{
	return svc->dist[k].count;
}

#define SERVICE_OF(p) flow_service_port(packet_flow(fs, (p)))

/* The packets of @order (@n; sorted again here) into services. */
static int summarise_services(struct stages *st, const struct flows *fs,
			      const struct packet **order, size_t n)
{
	struct netlat_samples d[NR_ST] = { { 0 } };
	size_t i, first, nr = 1;
	uint64_t v;
	int k, r = 0;

	sort_flows = fs;
	qsort(order, n, sizeof(*order), cmp_by_service);
	for (i = 1; i < n; i++)
		nr += SERVICE_OF(order[i]) != SERVICE_OF(order[i - 1]);
	st->svcs = calloc(nr, sizeof(*st->svcs));
	if (!st->svcs)
		return -ENOMEM;
	for (first = 0; !r && first < n; first = i) {
		struct service *svc = &st->svcs[st->nr_svcs++];

		svc->port = SERVICE_OF(order[first]);
		for (i = first; i < n && SERVICE_OF(order[i]) == svc->port; i++)
			for (k = 0; k < NR_ST; k++)
				if (packet_stage(order[i], k, &v) &&
				    netlat_samples_add(&d[k], v))
					r = -ENOMEM;
		svc->packets = i - first;
		for (k = 0; k < NR_ST; k++) {
			netlat_dist_compute(d[k].v, d[k].n, &svc->dist[k]);
			d[k].n = 0;
		}
	}
	for (k = 0; k < NR_ST; k++)
		netlat_samples_free(&d[k]);
	if (!r)
		qsort(st->svcs, st->nr_svcs, sizeof(*st->svcs), cmp_svcs);
	return r;
}

#undef SERVICE_OF

/* Directions (most packets first), their percentiles and packets; the slowest. */
static int summarise_packets(struct stages *st, const struct flows *fs)
{
	struct netlat_samples e2e = { 0 };
	const struct packet **order;
	size_t i, first, n = 1;
	int r = 0;

	order = malloc((st->xmit.n ? st->xmit.n : 1) * sizeof(*order));
	st->slowest = malloc((st->xmit.n ? st->xmit.n : 1) * sizeof(*st->slowest));
	if (!order || !st->slowest) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < st->xmit.n; i++)
		order[i] = &st->pkts[i];
	sort_flows = fs;
	qsort(order, st->xmit.n, sizeof(*order), cmp_by_dir);
	for (i = 1; i < st->xmit.n; i++)
		n += !!cmp_dir_key(packet_flow(fs, order[i]), packet_flow(fs, order[i - 1]));
	st->dirs = malloc(n * sizeof(*st->dirs));
	if (!st->dirs) {
		free(order);
		return -ENOMEM;
	}
	for (first = 0, i = 1; !r && st->xmit.n && i <= st->xmit.n; i++)
		if (i == st->xmit.n ||
		    cmp_dir_key(packet_flow(fs, order[i]), packet_flow(fs, order[first]))) {
			r = add_direction(st, fs, order + first, i - first, &e2e);
			first = i;
		}
	netlat_samples_free(&e2e);
	if (!r)
		r = summarise_services(st, fs, order, st->xmit.n);
	free(order);
	if (r)
		return r;
	qsort(st->dirs, st->nr_dirs, sizeof(*st->dirs), cmp_dirs);
	for (i = 0; i < st->xmit.n; i++)
		if (two_points(&st->pkts[i]))
			st->slowest[st->nr_slowest++] = &st->pkts[i];
	qsort(st->slowest, st->nr_slowest, sizeof(*st->slowest), cmp_slow);
	if (st->nr_slowest > SLOWEST_SHOWN)
		st->nr_slowest = SLOWEST_SHOWN;
	return 0;
}

/* Retransmit attempts by kind in RTX_BINS bins of [@from, @to]. */
static void bin_retransmits(struct stages *st, uint64_t from, uint64_t to)
{
	size_t i, b;

	st->rtx_start = from;
	st->rtx_bin_ns = (to - from) / RTX_BINS + 1;
	for (i = 0; i < st->rtx.n; i++) {
		const struct j_rec *r = &st->rtx.v[i];

		b = r->ts < from ? 0 : (size_t)((r->ts - from) / st->rtx_bin_ns);
		st->rtx_bins[b < RTX_BINS ? b : RTX_BINS - 1][r->stage]++;
	}
}

/* The join, once every record is in. */
int tx_compute(struct stages *st, const struct flows *fs, struct j_vec *vq,
	       uint64_t first_ts, uint64_t last_ts)
{
	size_t i;
	int k;

	qsort(vq->v, vq->n, sizeof(*vq->v), cmp_dev);
	st->vq = vq;
	qsort(st->sm.v, st->sm.n, sizeof(*st->sm.v), cmp_ts);
	qsort(st->ack.v, st->ack.n, sizeof(*st->ack.v), cmp_ts);
	qsort(st->dev.v, st->dev.n, sizeof(*st->dev.v), cmp_dev);
	qsort(st->resent.v, st->resent.n, sizeof(*st->resent.v), cmp_ts);
	st->pkts = calloc(st->xmit.n ? st->xmit.n : 1, sizeof(*st->pkts));
	for (i = 0; i < st->xmit.n; i++)
		join_one(st, &st->xmit.v[i], st->pkts ? &st->pkts[i] : NULL);
	for (k = 0; k < NR_ST; k++) {
		hist_compute(&st->hist[k], st->d[k].v, st->d[k].n);
		netlat_dist_compute(st->d[k].v, st->d[k].n, &st->dist[k]);
	}
	bin_retransmits(st, first_ts, last_ts);
	return st->pkts ? summarise_packets(st, fs) : -ENOMEM;
}

void tx_free(struct stages *st)
{
	int k;

	if (!st)
		return;
	free(st->sm.v);
	free(st->xmit.v);
	free(st->dev.v);
	free(st->ack.v);
	free(st->rtx.v);
	free(st->resent.v);
	free(st->kp.v);
	free(st->pkts);
	free(st->dirs);
	free(st->svcs);
	free(st->slowest);
	for (k = 0; k < NR_ST; k++)
		netlat_samples_free(&st->d[k]);
	free(st);
}

/* ---- the virtio join ---- */

int tx_add_vq(struct j_vec *vq, const struct netlat_rec_hdr *h)
{
	const struct netlat_rec_virtio *v = (const void *)h;
	struct j_rec r = { .cookie = v->flow.cookie, .ts = h->ts_ns, .seq = v->seq,
			   .seqno = h->seq, .cpu = h->cpu };

	if (v->event != NETLAT_VIRTIO_XMIT || !(v->flags & NETLAT_VIRTIO_FLOW_VALID) ||
	    !v->tcp_len || !v->flow.cookie)
		return 0;
	return j_push(vq, &r);
}
