// SPDX-License-Identifier: GPL-2.0
/*
 * "netlat join --chrome-trace": see jointrace.h. Each record of a pair is
 * drawn once (a GSO skb pairs with several received ones, a GRO skb with
 * several sent), as its host's stages in a row. B's records are moved
 * onto A's clock by the pair's own estimate (the receive stamp less the
 * driver time less the wire), so the flow arrow between the two hosts is
 * the wire's estimate. A record with no stage (the packet level keeps the
 * stages of packets ACKed or read) or of B with no pair that has a wire
 * time has no place and is left out (the JSON's "unplaced").
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "jointrace.h"
#include "output.h"
#include "trace.h"

const unsigned int join_tx_stages[JOIN_SIDE_STAGES] = {
	NETLAT_STAGE_SENDMSG_XMIT, NETLAT_STAGE_XMIT_QDISC, NETLAT_STAGE_QDISC_DRIVER,
};
const unsigned int join_rx_stages[JOIN_SIDE_STAGES] = {
	NETLAT_STAGE_RX_NETIF_TCP, NETLAT_STAGE_RX_TCP_QUEUE, NETLAT_STAGE_RX_QUEUE_USER,
};

/* pid of host h: PID_HOST0 + h; tids are unique across the trace */
#define PID_HOST0	1

struct slot {
	const void *rec;	/* a TCP_PKT (tx) or an RX_PKT */
	const struct netlat_xpkt *pair;	/* one pair holding it, with a wire if any has */
	unsigned int host;	/* 0: A, 1: B */
	bool tx, placed;
	int64_t shift;		/* the record's time less this is A's time */
	uint64_t start, end;	/* A's time */
	unsigned int tid;
};

static bool has_wire(const struct netlat_xpkt *p)
{
	return !(p->flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_NO_CLOCK |
			     NETLAT_XPKT_RETRANS | NETLAT_XPKT_IMPOSSIBLE));
}

static const struct netlat_flow *slot_flow(const struct slot *s)
{
	return s->tx ? &((const struct netlat_rec_tcp_pkt *)s->rec)->flow
		     : &((const struct netlat_rec_rx_pkt *)s->rec)->flow;
}

static bool slot_stage(const struct slot *s, unsigned int k, uint64_t *from, uint64_t *to)
{
	return s->tx ? netlat_pkt_stage(s->rec, join_tx_stages[k], from, to)
		     : netlat_rx_pkt_stage(s->rec, join_rx_stages[k], from, to);
}

/* Where @s goes on A's clock, from its pair's wire; false if nowhere. */
static bool place(struct slot *s)
{
	const struct netlat_xpkt *p = s->pair;
	uint64_t from, to;
	unsigned int k;
	bool any = false;

	if (s->host == 1) {
		if (!has_wire(p))
			return false;
		/* A's end of the wire is on A's clock; B's end less the wire is too */
		s->shift = s->tx ? (int64_t)(p->tx->driver_ns - p->rx->netif_ns) + p->wire_ns
				 : (int64_t)(p->rx->netif_ns - p->tx->driver_ns) - p->wire_ns;
	}
	for (k = 0; k < JOIN_SIDE_STAGES; k++) {
		if (!slot_stage(s, k, &from, &to))
			continue;
		if (!any || from - s->shift < s->start)
			s->start = from - s->shift;
		if (!any || to - s->shift > s->end)
			s->end = to - s->shift;
		any = true;
	}
	return any;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	uintptr_t px = (uintptr_t)x->rec, py = (uintptr_t)y->rec;

	if (px != py)
		return px < py ? -1 : 1;
	/* of one record's pairs, one with a wire first: it places the record */
	if (has_wire(x->pair) != has_wire(y->pair))
		return has_wire(x->pair) ? -1 : 1;
	return x->pair < y->pair ? -1 : x->pair > y->pair;
}

static int cmp_flow(const struct netlat_flow *x, const struct netlat_flow *y)
{
	int c;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	c = memcmp(x->saddr, y->saddr, sizeof(x->saddr));
	if (!c)
		c = memcmp(x->daddr, y->daddr, sizeof(x->daddr));
	if (!c && x->sport != y->sport)
		c = x->sport < y->sport ? -1 : 1;
	if (!c && x->dport != y->dport)
		c = x->dport < y->dport ? -1 : 1;
	return c;
}

/* Host, the flow as that host sees it, then start time. */
static int cmp_lane_order(const void *a, const void *b)
{
	const struct slot *x = *(const struct slot *const *)a;
	const struct slot *y = *(const struct slot *const *)b;
	int c;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	c = cmp_flow(slot_flow(x), slot_flow(y));
	if (c)
		return c;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void flow_name(char *buf, size_t len, const struct netlat_flow *fl, unsigned int lane)
{
	char s[64], d[64];
	bool v6 = fl->family == AF_INET6;

	format_addr(s, sizeof(s), fl->family, fl->saddr);
	format_addr(d, sizeof(d), fl->family, fl->daddr);
	snprintf(buf, len, v6 ? "[%s]:%u>[%s]:%u #%u" : "%s:%u>%s:%u #%u", s, fl->sport, d,
		 fl->dport, lane);
}

/*
 * Give each slot the first lane of its host and flow free at its start
 * (as many lanes as overlap: one write of many segments starts them all
 * at once). 0 or -ENOMEM.
 */
static int lanes(struct trace_out *o, struct slot **order, size_t n)
{
	uint64_t *lane_end = NULL, *grown;
	unsigned int tid = 0, nl = 0, cap = 0, l;
	char name[160];
	size_t i;

	for (i = 0; i < n; i++) {
		struct slot *s = order[i];
		bool fresh = !i || s->host != order[i - 1]->host ||
			     cmp_flow(slot_flow(s), slot_flow(order[i - 1]));

		if (fresh)
			nl = 0;
		for (l = 0; l < nl && lane_end[l] > s->start; l++)
			;
		if (l == nl) {
			if (nl == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(lane_end, cap * sizeof(*lane_end));
				if (!grown) {
					free(lane_end);
					return -ENOMEM;
				}
				lane_end = grown;
			}
			nl++;
			lane_end[l] = 0;
			flow_name(name, sizeof(name), slot_flow(s), l);
			trace_meta(o, "thread_name", PID_HOST0 + s->host, ++tid, name);
		}
		/* the flow's lanes are its last nl thread ids, in order */
		s->tid = tid - (nl - 1 - l);
		if (s->end > lane_end[l])
			lane_end[l] = s->end;
	}
	free(lane_end);
	return 0;
}

static void slices(struct trace_out *o, const struct slot *s)
{
	const struct netlat_rec_tcp_pkt *tx = s->tx ? s->rec : NULL;
	const struct netlat_rec_rx_pkt *rx = s->tx ? NULL : s->rec;
	uint64_t from, to;
	unsigned int k;

	for (k = 0; k < JOIN_SIDE_STAGES; k++) {
		if (!slot_stage(s, k, &from, &to))
			continue;
		trace_event(o, "X", PID_HOST0 + s->host, s->tid);
		fputs(",\"name\":", o->f);
		print_json_string(o->f, netlat_stage_name(s->tx ? join_tx_stages[k]
								 : join_rx_stages[k]));
		fprintf(o->f, ",\"cat\":\"%s\"", s->tx ? "send" : "receive");
		trace_ts(o, "ts", from - s->shift - o->base);
		trace_ts(o, "dur", to - from);
		fprintf(o->f, ",\"args\":{\"seq\":%u,\"end_seq\":%u,\"dur_ns\":%llu,"
			"\"from_ns\":%llu,\"clock_shift_ns\":%lld}}",
			tx ? tx->seq : rx->seq, tx ? tx->end_seq : rx->end_seq, ull(to - from),
			ull(from), (long long)s->shift);
	}
}

static const struct slot *find(const struct slot *slots, size_t n, const void *rec)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)slots[mid].rec < (uintptr_t)rec)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && slots[lo].rec == rec && slots[lo].placed ? &slots[lo] : NULL;
}

/* The arrow of pair @id: from the sender's driver time to the receive stamp. */
static void arrow(struct trace_out *o, const struct netlat_xpkt *p, size_t id,
		  const struct slot *tx, const struct slot *rx)
{
	uint64_t at = p->tx->driver_ns - tx->shift;

	/*
	 * Inside the slice that ends there, so that it binds to it; with no
	 * qdisc>driver stage, inside the last slice.
	 */
	if (at >= tx->end)
		at = tx->end;
	if (at > tx->start)
		at--;
	trace_event(o, "s", PID_HOST0 + tx->host, tx->tid);
	fprintf(o->f, ",\"name\":\"wire\",\"cat\":\"wire\",\"id\":%zu", id);
	trace_ts(o, "ts", at - o->base);
	fputs("}", o->f);
	trace_event(o, "f", PID_HOST0 + rx->host, rx->tid);
	fprintf(o->f, ",\"name\":\"wire\",\"cat\":\"wire\",\"id\":%zu,\"bp\":\"e\"", id);
	trace_ts(o, "ts", p->rx->netif_ns - rx->shift - o->base);
	fprintf(o->f, ",\"args\":{\"seq\":%u,\"end_seq\":%u,\"wire_ns\":%lld,"
		"\"wire_lo_ns\":%lld,\"wire_hi_ns\":", p->seq, p->end_seq, (long long)p->wire_ns,
		(long long)p->wire_lo_ns);
	if (p->wire_hi_ns == INT64_MAX)
		fputs("null}}", o->f);
	else
		fprintf(o->f, "%lld}}", (long long)p->wire_hi_ns);
}

int join_trace_write(const struct netlat_join *j, const char *const label[2], FILE *f)
{
	const struct netlat_xpkt *p;
	size_t np = netlat_join_pairs(j, &p), n = 0, nu = 0, placed = 0, unplaced = 0, arrows = 0,
	       i;
	struct slot *slots = calloc(2 * np + 1, sizeof(*slots));
	struct slot **order = calloc(2 * np + 1, sizeof(*order));
	struct trace_out o = { .f = f, .first = true };
	unsigned int h;

	if (!slots || !order) {
		free(slots);
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < np; i++) {
		slots[n++] = (struct slot){ .rec = p[i].tx, .pair = &p[i], .host = p[i].sender,
					    .tx = true };
		slots[n++] = (struct slot){ .rec = p[i].rx, .pair = &p[i], .host = !p[i].sender };
	}
	qsort(slots, n, sizeof(*slots), cmp_rec);
	for (i = 0; i < n; i++) {
		if (nu && slots[nu - 1].rec == slots[i].rec)
			continue;
		slots[nu] = slots[i];
		slots[nu].placed = place(&slots[nu]);
		if (slots[nu].placed) {
			if (!placed || slots[nu].start < o.base)
				o.base = slots[nu].start;
			order[placed++] = &slots[nu];
		} else {
			unplaced++;
		}
		nu++;
	}
	qsort(order, placed, sizeof(*order), cmp_lane_order);

	fputs("{\"traceEvents\":[", f);
	for (h = 0; h < 2; h++) {
		char name[128];

		snprintf(name, sizeof(name), h ? "%s (on A's clock)" : "%s", label[h]);
		trace_meta(&o, "process_name", PID_HOST0 + h, 0, name);
		trace_event(&o, "M", PID_HOST0 + h, 0);
		fprintf(f, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%u}}", h);
	}
	if (lanes(&o, order, placed)) {
		free(slots);
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < placed; i++)
		slices(&o, order[i]);
	for (i = 0; i < np; i++) {
		const struct slot *tx, *rx;

		if (!has_wire(&p[i]))
			continue;
		tx = find(slots, nu, p[i].tx);
		rx = find(slots, nu, p[i].rx);
		if (tx && rx)
			arrow(&o, &p[i], ++arrows, tx, rx);
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"base_ns\":\"%llu\","
		"\"records\":%zu,\"unplaced\":%zu,\"arrows\":%zu}}\n", ull(o.base), placed,
		unplaced, arrows);
	free(slots);
	free(order);
	return 0;
}
