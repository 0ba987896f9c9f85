// SPDX-License-Identifier: GPL-2.0
/*
 * "netlat report": records per CPU and type, time span, losses, markers,
 * and the distribution of the time between consecutive records of a CPU.
 * The same row functions print every CPU and the total, in text or JSON.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "virtio.h"
#include "rx.h"
#include "flows.h"
#include "hist.h"
#include "output.h"

/* Kinds of record counted per CPU; STREAM records are not per-CPU data. */
enum kind { KIND_MARKER, KIND_LOST, KIND_OTHER, NR_KINDS };

static const char *const kind_names[NR_KINDS] = { "MARKER", "LOST", "other" };

#define NR_TYPES	65536	/* hdr.type is a __u16 */

struct cpu_stats {
	bool seen;
	uint64_t records;
	uint64_t by_kind[NR_KINDS];
	uint64_t first_ts, last_ts;
	uint64_t first_wall, last_wall;
	uint64_t ts_backwards;		/* breaks of the per-CPU clock rule */
	struct netlat_seq_stats seq;	/* filled in when printing */

	bool have_prev;			/* prev_ts is in the current stream */
	uint64_t prev_ts;
	struct netlat_samples gaps;	/* ts_ns deltas of consecutive records */
	struct netlat_dist gap;		/* summary of gaps, when printing */

	bool in_snap;			/* a SNAP_CPU described this CPU */
	struct netlat_rec_snap_cpu snap;	/* its counters, summed */
};

struct report {
	char *name;
	uint64_t bytes;
	uint64_t streams;
	struct netlat_rec_stream first_stream;
	uint64_t *type_counts;		/* NR_TYPES, STREAM included */

	struct cpu_stats *cpus;
	unsigned int nr_cpus;

	uint64_t markers, marker_bytes, marker_min, marker_max;

	struct stages *stages;		/* TCP records kept for the join */
	struct virtio_report *virtio;	/* per-virtqueue summary */
	struct flows *flows;		/* per-flow summary of TCP records */
	struct rx_report *rx;		/* receive-path stages and flows */
	bool no_hist;			/* no stage histograms */

	uint64_t snapshots;		/* SNAPSHOT records */
	struct netlat_rec_snapshot snap;	/* the last one */
	struct netlat_rec_stream snap_stream;	/* its stream header */
};

static void stages_free(struct stages *st);

struct report *report_new(const char *name)
{
	struct report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->name = strdup(name);
	rep->type_counts = calloc(NR_TYPES, sizeof(*rep->type_counts));
	if (!rep->name || !rep->type_counts) {
		report_free(rep);
		return NULL;
	}
	return rep;
}

void report_free(struct report *rep)
{
	unsigned int i;

	if (!rep)
		return;
	for (i = 0; i < rep->nr_cpus; i++)
		netlat_samples_free(&rep->cpus[i].gaps);
	stages_free(rep->stages);
	virtio_report_free(rep->virtio);
	flows_free(rep->flows);
	rx_report_free(rep->rx);
	free(rep->cpus);
	free(rep->type_counts);
	free(rep->name);
	free(rep);
}


/* ---- per-skb stage join of TCP records ----------------------------------- */

/*
 * Each first transmission of data (TCP_XMIT, not a retransmission) is
 * joined, on the socket cookie, with the sendmsg whose byte range holds its
 * first byte, the first qdisc and driver records of the same sequence
 * after it, and the first cumulative ACK covering its last byte.
 * xmit>ack is not joined: the module measures it per ACK (xmit_ack_ns,
 * from the last transmission of the oldest segment the ACK covers in
 * full), so it covers retransmissions too; modules before it have no
 * such field and the stage is left out.
 */
enum { ST_SM_XMIT, ST_XMIT_QDISC, ST_QDISC_DRV, ST_DRV_ACK, ST_SM_ACK, ST_XMIT_ACK,
       NR_ST };
static const char *const stage_names[NR_ST] = {
	"sendmsg>xmit", "xmit>qdisc", "qdisc>driver", "driver>ack", "sendmsg>ack",
	"xmit>ack",
};


struct j_rec {			/* one kept record, reduced */
	uint64_t cookie, ts;
	uint32_t seq, end;	/* SENDMSG: id, end_seq; ACK: snd_una */
	uint8_t stage;		/* DEV stage */
};

struct j_vec {
	struct j_rec *v;
	size_t n, cap;
};

struct stages {
	struct j_vec sm, xmit, dev, ack;
	struct netlat_samples d[NR_ST];
	struct netlat_dist dist[NR_ST];
	struct hist hist[NR_ST];
};

/* The stages shown: the joined ones always, xmit>ack when measured. */
static bool stage_shown(const struct stages *st, int k)
{
	return k != ST_XMIT_ACK || st->d[k].n;
}

static int j_push(struct j_vec *a, const struct j_rec *r)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		struct j_rec *nv = realloc(a->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = *r;
	return 0;
}

static int add_tcp(struct report *rep, const struct netlat_rec_hdr *h)
{
	const struct netlat_tcp_flow *fl = (const void *)(h + 1);
	struct j_rec r = { .cookie = fl->cookie, .ts = h->ts_ns };

	if (!rep->stages && !(rep->stages = calloc(1, sizeof(*rep->stages))))
		return -ENOMEM;
	if (!rep->flows && !(rep->flows = flows_new()))
		return -ENOMEM;
	if (flows_add(rep->flows, h))
		return -ENOMEM;
	switch (h->type) {
	case NETLAT_REC_TCP_SENDMSG: {
		const struct netlat_rec_tcp_sendmsg *m = (const void *)h;

		r.ts = m->start_ns;
		r.seq = m->sendmsg_id;
		r.end = m->end_seq;
		return r.seq == r.end ? 0 : j_push(&rep->stages->sm, &r);
	}
	case NETLAT_REC_TCP_XMIT: {
		const struct netlat_rec_tcp_xmit *x = (const void *)h;

		if (!x->len || (x->flags & NETLAT_TCP_RETRANSMIT))
			return 0;
		r.seq = x->seq;
		r.end = x->seq + x->len;
		return j_push(&rep->stages->xmit, &r);
	}
	case NETLAT_REC_TCP_DEV: {
		const struct netlat_rec_tcp_dev *d = (const void *)h;

		if (!d->len || !fl->cookie)
			return 0;
		r.seq = d->seq;
		r.stage = d->stage;
		return j_push(&rep->stages->dev, &r);
	}
	case NETLAT_REC_TCP_ACK: {
		const struct netlat_rec_tcp_ack *a = (const void *)h;

		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_ack, xmit_ack_ns) &&
		    a->xmit_ack_ns &&
		    netlat_samples_add(&rep->stages->d[ST_XMIT_ACK], a->xmit_ack_ns))
			return -ENOMEM;
		r.seq = a->snd_una;
		return j_push(&rep->stages->ack, &r);
	}
	}
	return 0;
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

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

/* [lo, hi): the records of @cookie in @a (sorted by cookie first). */
static void cookie_range(const struct j_vec *a, uint64_t cookie, size_t *lo, size_t *hi)
{
	size_t l = 0, h = a->n;

	while (l < h) {
		size_t m = (l + h) / 2;

		if (a->v[m].cookie < cookie)
			l = m + 1;
		else
			h = m;
	}
	*lo = l;
	for (h = l; h < a->n && a->v[h].cookie == cookie; h++)
		;
	*hi = h;
}

/* The DEV record of @stage with @seq at or after @ts, or NULL. */
static const struct j_rec *find_dev(const struct j_vec *a, uint64_t cookie, uint8_t stage,
				    uint32_t seq, uint64_t ts)
{
	struct j_rec key = { .cookie = cookie, .stage = stage, .seq = seq, .ts = ts };
	size_t l = 0, h = a->n;

	while (l < h) {
		size_t m = (l + h) / 2;

		if (cmp_dev(&a->v[m], &key) < 0)
			l = m + 1;
		else
			h = m;
	}
	if (l < a->n && a->v[l].cookie == cookie && a->v[l].stage == stage &&
	    a->v[l].seq == seq)
		return &a->v[l];
	return NULL;
}

static void add_delta(struct stages *st, int stage, uint64_t from, uint64_t to)
{
	if (to >= from)
		netlat_samples_add(&st->d[stage], to - from);
}

static void join_one(struct stages *st, const struct j_rec *x)
{
	const struct j_rec *sm = NULL, *q = NULL, *d = NULL, *a = NULL;
	size_t lo, hi, l, h;

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
	/* cumulative ACKs of a socket only move forward */
	cookie_range(&st->ack, x->cookie, &lo, &hi);
	for (l = lo, h = hi; l < h;) {
		size_t m = (l + h) / 2;

		if ((int32_t)(st->ack.v[m].seq - x->end) < 0)
			l = m + 1;
		else
			h = m;
	}
	if (l < hi)
		a = &st->ack.v[l];

	if (sm)
		add_delta(st, ST_SM_XMIT, sm->ts, x->ts);
	if (q)
		add_delta(st, ST_XMIT_QDISC, x->ts, q->ts);
	if (q && d)
		add_delta(st, ST_QDISC_DRV, q->ts, d->ts);
	if (d && a)
		add_delta(st, ST_DRV_ACK, d->ts, a->ts);
	if (sm && a)
		add_delta(st, ST_SM_ACK, sm->ts, a->ts);
}

static void stages_compute(struct stages *st)
{
	size_t i;
	int k;

	qsort(st->sm.v, st->sm.n, sizeof(*st->sm.v), cmp_ts);
	qsort(st->ack.v, st->ack.n, sizeof(*st->ack.v), cmp_ts);
	qsort(st->dev.v, st->dev.n, sizeof(*st->dev.v), cmp_dev);
	for (i = 0; i < st->xmit.n; i++)
		join_one(st, &st->xmit.v[i]);
	for (k = 0; k < NR_ST; k++) {
		hist_compute(&st->hist[k], st->d[k].v, st->d[k].n);
		netlat_dist_compute(st->d[k].v, st->d[k].n, &st->dist[k]);
	}
}

static void stages_free(struct stages *st)
{
	int k;

	if (!st)
		return;
	free(st->sm.v);
	free(st->xmit.v);
	free(st->dev.v);
	free(st->ack.v);
	for (k = 0; k < NR_ST; k++)
		netlat_samples_free(&st->d[k]);
	free(st);
}

/* A histogram per stage with samples. */
static void text_stage_hists(FILE *f, const struct stages *st)
{
	int k;

	for (k = 0; k < NR_ST; k++) {
		if (!st->dist[k].count)
			continue;
		fprintf(f, "\n%s (ns)\n", stage_names[k]);
		hist_print_text(f, &st->hist[k]);
	}
}

static void json_stage_hists(FILE *f, const struct stages *st)
{
	int k;

	fputs(",\"tcp_stage_hist\":{", f);
	for (k = 0; k < NR_ST; k++) {
		if (!stage_shown(st, k))
			continue;
		fprintf(f, "%s\"%s\":", k ? "," : "", stage_names[k]);
		hist_print_json(f, &st->hist[k]);
	}
	fputc('}', f);
}

/* The send stages and, in the same table, the receive stages (rx.c). */
static void text_stages(FILE *f, const struct stages *st, const struct rx_report *rx)
{
	int k;

	if (st)
		fprintf(f, "\nTCP per-skb stages (ns; %zu first transmissions joined by socket and sequence)\n",
			st->xmit.n);
	if (!rx_report_empty(rx))
		fprintf(f, "%sreceive stages: arrivals joined per socket by sequence (TCP), per skb (UDP)\n",
			st ? "" : "\n");
	fprintf(f, "%-13s %10s %10s %10s %10s %10s %10s %10s %12s\n", "stage", "count",
		"min", "p50", "p90", "p99", "p99.9", "max", "mean");
	for (k = 0; st && k < NR_ST; k++) {
		const struct netlat_dist *d = &st->dist[k];

		if (!stage_shown(st, k))
			continue;
		fprintf(f, "%-13s %10llu %10llu %10llu %10llu %10llu %10llu %10llu %12.1f\n",
			stage_names[k], (unsigned long long)d->count,
			(unsigned long long)d->min, (unsigned long long)d->p50,
			(unsigned long long)d->p90, (unsigned long long)d->p99,
			(unsigned long long)d->p999, (unsigned long long)d->max, d->mean);
	}
	rx_report_stage_rows(rx, f);
}

static struct cpu_stats *cpu_stats_of(struct report *rep, unsigned int cpu)
{
	if (cpu >= rep->nr_cpus) {
		struct cpu_stats *c = realloc(rep->cpus, (cpu + 1) * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + rep->nr_cpus, 0, (cpu + 1 - rep->nr_cpus) * sizeof(*c));
		rep->cpus = c;
		rep->nr_cpus = cpu + 1;
	}
	return &rep->cpus[cpu];
}

static enum kind kind_of(unsigned int type)
{
	if (type == NETLAT_REC_MARKER)
		return KIND_MARKER;
	if (type == NETLAT_REC_LOST)
		return KIND_LOST;
	return KIND_OTHER;
}

/* A new reader: the time since the previous stream is not a record gap. */
static void add_stream(struct report *rep, const struct netlat_rec_stream *s)
{
	unsigned int i;

	if (!rep->streams++)
		rep->first_stream = *s;
	for (i = 0; i < rep->nr_cpus; i++)
		rep->cpus[i].have_prev = false;
}

/* Several snapshots (concatenated files) add up per CPU. */
static void add_snap_cpu(struct cpu_stats *c, const struct netlat_rec_snap_cpu *sc)
{
	c->in_snap = true;
	c->snap.written += sc->written;
	c->snap.overwritten += sc->overwritten;
	c->snap.dropped += sc->dropped;
	c->snap.records += sc->records;
	c->snap.skipped += sc->skipped;
}

static void add_marker(struct report *rep, const struct netlat_rec_marker *m)
{
	if (!rep->markers || m->len < rep->marker_min)
		rep->marker_min = m->len;
	if (m->len > rep->marker_max)
		rep->marker_max = m->len;
	rep->markers++;
	rep->marker_bytes += m->len;
}

static int add_timing(struct cpu_stats *c, uint64_t ts, uint64_t wall)
{
	if (!c->seen) {
		c->seen = true;
		c->first_ts = ts;
		c->first_wall = wall;
	}
	c->last_ts = ts;
	c->last_wall = wall;
	if (c->have_prev && ts < c->prev_ts)
		c->ts_backwards++;
	if (c->have_prev &&
	    netlat_samples_add(&c->gaps, ts >= c->prev_ts ? ts - c->prev_ts : 0))
		return -ENOMEM;
	c->have_prev = true;
	c->prev_ts = ts;
	return 0;
}

int report_add(struct report *rep, const struct netlat_rec_stream *stream,
	       const struct netlat_rec_hdr *rec)
{
	struct cpu_stats *c;

	rep->bytes += rec->size;
	rep->type_counts[rec->type]++;
	if (rec->type == NETLAT_REC_STREAM) {
		add_stream(rep, (const void *)rec);
		return 0;
	}
	if (rec->type == NETLAT_REC_SNAPSHOT) {
		rep->snapshots++;
		rep->snap = *(const struct netlat_rec_snapshot *)rec;
		rep->snap_stream = *stream;
		return 0;
	}
	c = cpu_stats_of(rep, rec->cpu);
	if (!c)
		return -ENOMEM;
	if (rec->type == NETLAT_REC_SNAP_CPU) {
		add_snap_cpu(c, (const void *)rec);
		return 0;
	}
	c->records++;
	c->by_kind[kind_of(rec->type)]++;
	if (rec->type == NETLAT_REC_MARKER)
		add_marker(rep, (const void *)rec);
	if (rec->type >= NETLAT_REC_TCP_SENDMSG && rec->type <= NETLAT_REC_TCP_DEV &&
	    rec->size >= sizeof(*rec) + sizeof(struct netlat_tcp_flow) &&
	    add_tcp(rep, rec))
		return -ENOMEM;
	if (rec->type >= NETLAT_REC_RX_NETIF && rec->type <= NETLAT_REC_RX_WAKE) {
		if (!rep->rx)
			rep->rx = rx_report_new();
		if (!rep->rx || rx_report_add(rep->rx, rec))
			return -ENOMEM;
	}
	if (rec->type == NETLAT_REC_VIRTIO) {
		if (!rep->virtio)
			rep->virtio = virtio_report_new();
		if (!rep->virtio || virtio_report_add(rep->virtio, rec))
			return -ENOMEM;
	}
	return add_timing(c, rec->ts_ns, netlat_wall_ns(stream, rec->ts_ns));
}

/* ---- totals -------------------------------------------------------------- */

static void add_into_total(struct cpu_stats *t, const struct cpu_stats *c)
{
	int k;

	if (!t->seen || c->first_ts < t->first_ts) {
		t->first_ts = c->first_ts;
		t->first_wall = c->first_wall;
	}
	if (!t->seen || c->last_ts > t->last_ts) {
		t->last_ts = c->last_ts;
		t->last_wall = c->last_wall;
	}
	t->seen = true;
	t->records += c->records;
	for (k = 0; k < NR_KINDS; k++)
		t->by_kind[k] += c->by_kind[k];
	t->ts_backwards += c->ts_backwards;
	t->seq.records += c->seq.records;
	t->seq.lost += c->seq.lost;
	t->seq.gaps += c->seq.gaps;
}

/* Concatenate every CPU's gaps: the "all" row of the gap table. */
static int gather_gaps(const struct report *rep, struct netlat_samples *all)
{
	unsigned int i;
	size_t j;

	for (i = 0; i < rep->nr_cpus; i++)
		for (j = 0; j < rep->cpus[i].gaps.n; j++)
			if (netlat_samples_add(all, rep->cpus[i].gaps.v[j]))
				return -ENOMEM;
	return 0;
}

/* Fill in the per-CPU summaries and the total. */
static void summarise(struct report *rep, const struct netlat_seq *seq,
		      struct cpu_stats *total)
{
	struct netlat_samples all = { 0 };
	unsigned int i;

	memset(total, 0, sizeof(*total));
	for (i = 0; i < rep->nr_cpus; i++) {
		struct cpu_stats *c = &rep->cpus[i];

		netlat_seq_cpu_stats(seq, i, &c->seq);
		if (c->seen)
			add_into_total(total, c);
	}
	/* Without memory for the union the "all" row is left empty. */
	if (!gather_gaps(rep, &all))
		netlat_dist_compute(all.v, all.n, &total->gap);
	netlat_samples_free(&all);
	for (i = 0; i < rep->nr_cpus; i++)
		netlat_dist_compute(rep->cpus[i].gaps.v, rep->cpus[i].gaps.n,
				    &rep->cpus[i].gap);
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

static uint64_t span_ns(const struct cpu_stats *c)
{
	return c->last_ts - c->first_ts;
}

/* ---- text ---------------------------------------------------------------- */

static void text_header(FILE *f, const struct report *rep, const struct cpu_stats *t)
{
	const struct netlat_rec_stream *s = &rep->first_stream;
	char from[64], to[64];

	fprintf(f, "capture %s: %llu bytes, %llu stream%s\n", rep->name,
		ull(rep->bytes), ull(rep->streams), rep->streams == 1 ? "" : "s");
	fprintf(f, "  abi %u, %u cpus, clock %u, tracing %s, %llu-byte rings\n",
		s->abi_version, s->nr_cpus, s->clock_id,
		s->flags & NETLAT_STREAM_RUNNING ? "running" : "stopped",
		ull(s->ring_bytes));
	fprintf(f, "  %llu records, %llu lost, %llu unexplained gaps\n",
		ull(t->records), ull(t->seq.lost), ull(t->seq.gaps));
	if (!t->seen)
		return;
	netlat_format_time(from, sizeof(from), t->first_wall, NETLAT_TIME_DATE);
	netlat_format_time(to, sizeof(to), t->last_wall, NETLAT_TIME_DATE);
	fprintf(f, "  from %s to %s (%llu.%09llu s)\n", from, to,
		ull(span_ns(t) / 1000000000), ull(span_ns(t) % 1000000000));
}

static void text_records_row(FILE *f, const char *label, const struct cpu_stats *c)
{
	char first[32], last[32];
	int k;

	netlat_format_time(first, sizeof(first), c->first_wall, 0);
	netlat_format_time(last, sizeof(last), c->last_wall, 0);
	fprintf(f, "%-6s %10llu", label, ull(c->records));
	for (k = 0; k < NR_KINDS; k++)
		fprintf(f, " %10llu", ull(c->by_kind[k]));
	fprintf(f, " %10llu %6llu  %s  %s %6llu.%09llu\n", ull(c->seq.lost),
		ull(c->seq.gaps), first, last, ull(span_ns(c) / 1000000000),
		ull(span_ns(c) % 1000000000));
}

static void text_gap_row(FILE *f, const char *label, const struct netlat_dist *d)
{
	fprintf(f, "%-6s %10llu %10llu %10llu %10llu %10llu %10llu %10llu %12.1f\n",
		label, ull(d->count), ull(d->min), ull(d->p50), ull(d->p90),
		ull(d->p99), ull(d->p999), ull(d->max), d->mean);
}

static void text_other_types(FILE *f, const struct report *rep)
{
	unsigned int type;
	bool any = false;

	for (type = 0; type < NR_TYPES; type++) {
		if (!rep->type_counts[type] || netlat_type_name(type))
			continue;
		fprintf(f, "%s type %u: %llu", any ? "," : "other types:", type,
			ull(rep->type_counts[type]));
		any = true;
	}
	if (any)
		fputc('\n', f);
}

static void text_warnings(FILE *f, const struct report *rep)
{
	unsigned int i;

	for (i = 0; i < rep->nr_cpus; i++)
		if (rep->cpus[i].ts_backwards)
			fprintf(f, "warning: cpu %u: timestamp went backwards %llu times\n",
				i, ull(rep->cpus[i].ts_backwards));
}

/* ---- snapshots ------------------------------------------------------------ */

static void add_snap_total(struct netlat_rec_snap_cpu *t, const struct netlat_rec_snap_cpu *c)
{
	t->written += c->written;
	t->overwritten += c->overwritten;
	t->dropped += c->dropped;
	t->skipped += c->skipped;
	t->records += c->records;
}

static void text_snap_row(FILE *f, const char *label, const struct netlat_rec_snap_cpu *c)
{
	fprintf(f, "%-6s %12llu %12llu %10llu %10llu %10llu\n", label, ull(c->written),
		ull(c->overwritten), ull(c->dropped), ull(c->skipped), ull(c->records));
}

static void text_snapshot(FILE *f, const struct report *rep)
{
	const struct netlat_rec_snapshot *s = &rep->snap;
	struct netlat_rec_snap_cpu total = { 0 };
	char when[64];
	unsigned int i;

	fputc('\n', f);
	describe_snapshot(f, &rep->snap_stream, s);
	fputc('\n', f);
	if (s->reason == NETLAT_SNAP_TRIGGER) {
		netlat_format_time(when, sizeof(when),
				   netlat_wall_ns(&rep->snap_stream, s->trig_ts_ns), NETLAT_TIME_DATE);
		fprintf(f, "  triggering record at %s\n", when);
	}
	if (s->start_ns) {
		netlat_format_time(when, sizeof(when),
				   netlat_wall_ns(&rep->snap_stream, s->start_ns), NETLAT_TIME_DATE);
		fprintf(f, "  pre window: records from %s on\n", when);
	}
	if (rep->snapshots > 1)
		fprintf(f, "  %llu snapshots: the last one is described, the counters add up\n",
			ull(rep->snapshots));
	fprintf(f, "\nsnapshot per cpu (overwritten and skipped are not loss)\n");
	fprintf(f, "%-6s %12s %12s %10s %10s %10s\n", "cpu", "written", "overwritten",
		"dropped", "skipped", "records");
	for (i = 0; i < rep->nr_cpus; i++) {
		char label[16];

		if (!rep->cpus[i].in_snap)
			continue;
		snprintf(label, sizeof(label), "%u", i);
		text_snap_row(f, label, &rep->cpus[i].snap);
		add_snap_total(&total, &rep->cpus[i].snap);
	}
	text_snap_row(f, "total", &total);
}

static void json_snap_row(FILE *f, const struct netlat_rec_snap_cpu *c)
{
	fprintf(f, "\"written\":%llu,\"overwritten\":%llu,\"dropped\":%llu,"
		"\"skipped\":%llu,\"records\":%llu", ull(c->written), ull(c->overwritten),
		ull(c->dropped), ull(c->skipped), ull(c->records));
}

static void json_snapshot(FILE *f, const struct report *rep)
{
	const struct netlat_rec_snapshot *s = &rep->snap;
	const char *trigger = netlat_trigger_name(s->trigger);
	const char *trig_type = netlat_type_name(s->trig_type);
	struct netlat_rec_snap_cpu total = { 0 };
	unsigned int i;
	bool any = false;

	fprintf(f, ",\"snapshot\":{\"snapshots\":%llu,\"id\":%llu,\"reason\":\"%s\","
		"\"trigger\":\"%s\",\"trig_type\":\"%s\",\"trig_cpu\":%u,\"trig_seq\":%llu,"
		"\"trig_ts_ns\":%llu,\"start_ns\":%llu,\"frozen_ts_ns\":%llu,\"mode\":\"%s\","
		"\"bytes\":%llu,\"cpus\":[", ull(rep->snapshots), ull(s->id),
		snap_reason_name(s->reason), trigger ? trigger : "none",
		s->trig_type && trig_type ? trig_type : "none", s->trig_cpu, ull(s->trig_seq),
		ull(s->trig_ts_ns), ull(s->start_ns), ull(s->hdr.ts_ns),
		ring_mode_name(s->mode), ull(s->bytes));
	for (i = 0; i < rep->nr_cpus; i++) {
		if (!rep->cpus[i].in_snap)
			continue;
		fprintf(f, "%s{\"cpu\":%u,", any ? "," : "", i);
		json_snap_row(f, &rep->cpus[i].snap);
		fputc('}', f);
		add_snap_total(&total, &rep->cpus[i].snap);
		any = true;
	}
	fputs("],\"total\":{", f);
	json_snap_row(f, &total);
	fputs("}}", f);
}

static void print_text(struct report *rep, const struct cpu_stats *t, FILE *f)
{
	unsigned int i;
	char label[16];
	int k;

	text_header(f, rep, t);
	if (rep->snapshots)
		text_snapshot(f, rep);
	fprintf(f, "\nrecords per cpu (LOST: LOST records; lost: records they report dropped)\n");
	fprintf(f, "%-6s %10s", "cpu", "records");
	for (k = 0; k < NR_KINDS; k++)
		fprintf(f, " %10s", kind_names[k]);
	fprintf(f, " %10s %6s  %-18s  %-18s %16s\n", "lost", "gaps", "first", "last",
		"duration(s)");
	for (i = 0; i < rep->nr_cpus; i++) {
		if (!rep->cpus[i].seen)
			continue;
		snprintf(label, sizeof(label), "%u", i);
		text_records_row(f, label, &rep->cpus[i]);
	}
	text_records_row(f, "total", t);
	text_other_types(f, rep);
	text_warnings(f, rep);

	fprintf(f, "\nmarkers: %llu records, %llu payload bytes", ull(rep->markers),
		ull(rep->marker_bytes));
	if (rep->markers)
		fprintf(f, " (len min %llu, max %llu)", ull(rep->marker_min),
			ull(rep->marker_max));
	fprintf(f, "\n\ninter-record gap per cpu (ns)\n");
	fprintf(f, "%-6s %10s %10s %10s %10s %10s %10s %10s %12s\n", "cpu", "count",
		"min", "p50", "p90", "p99", "p99.9", "max", "mean");
	for (i = 0; i < rep->nr_cpus; i++) {
		if (!rep->cpus[i].seen)
			continue;
		snprintf(label, sizeof(label), "%u", i);
		text_gap_row(f, label, &rep->cpus[i].gap);
	}
	text_gap_row(f, "all", &t->gap);
	if (rep->stages || !rx_report_empty(rep->rx))
		text_stages(f, rep->stages, rep->rx);
	if (rep->stages && !rep->no_hist)
		text_stage_hists(f, rep->stages);
	if (!flows_empty(rep->flows)) {
		fputc('\n', f);
		flows_print(rep->flows, false, f);
	}
	rx_report_flows(rep->rx, f);
	if (!virtio_report_empty(rep->virtio)) {
		fputc('\n', f);
		virtio_report_print(rep->virtio, false, f);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_dist(FILE *f, const struct netlat_dist *d)
{
	fprintf(f, "{\"count\":%llu,\"min\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,"
		"\"p99_9\":%llu,\"max\":%llu,\"mean\":%.1f}",
		ull(d->count), ull(d->min), ull(d->p50), ull(d->p90), ull(d->p99),
		ull(d->p999), ull(d->max), d->mean);
}

/* The fields of a CPU row, without braces: shared by "cpus" and "total". */
static void json_row(FILE *f, const struct cpu_stats *c)
{
	int k;

	fprintf(f, "\"records\":%llu,\"by_type\":{", ull(c->records));
	for (k = 0; k < NR_KINDS; k++)
		fprintf(f, "%s\"%s\":%llu", k ? "," : "", kind_names[k], ull(c->by_kind[k]));
	fprintf(f, "},\"lost\":%llu,\"unexplained_gaps\":%llu,\"ts_backwards\":%llu,"
		"\"first_ts_ns\":%llu,\"last_ts_ns\":%llu,\"first_wall_ns\":%llu,"
		"\"last_wall_ns\":%llu,\"duration_ns\":%llu,\"inter_record_gap_ns\":",
		ull(c->seq.lost), ull(c->seq.gaps), ull(c->ts_backwards),
		ull(c->first_ts), ull(c->last_ts), ull(c->first_wall),
		ull(c->last_wall), ull(span_ns(c)));
	json_dist(f, &c->gap);
}

static void json_types(FILE *f, const struct report *rep)
{
	const char *name;
	unsigned int type;
	bool any = false;

	fputs("\"types\":[", f);
	for (type = 0; type < NR_TYPES; type++) {
		if (!rep->type_counts[type])
			continue;
		name = netlat_type_name(type);
		fprintf(f, "%s{\"type_id\":%u,\"type\":\"%s\",\"records\":%llu}",
			any ? "," : "", type, name ? name : "unknown",
			ull(rep->type_counts[type]));
		any = true;
	}
	fputc(']', f);
}

static void print_json(struct report *rep, const struct cpu_stats *t, FILE *f)
{
	const struct netlat_rec_stream *s = &rep->first_stream;
	unsigned int i;
	bool any = false;

	fputs("{\"file\":", f);
	print_json_string(f, rep->name);
	fprintf(f, ",\"bytes\":%llu,\"streams\":%llu,\"abi_version\":%u,\"nr_cpus\":%u,"
		"\"clock_id\":%u,\"ring_bytes\":%llu,\"cpus\":[",
		ull(rep->bytes), ull(rep->streams), s->abi_version, s->nr_cpus,
		s->clock_id, ull(s->ring_bytes));
	for (i = 0; i < rep->nr_cpus; i++) {
		if (!rep->cpus[i].seen)
			continue;
		fprintf(f, "%s{\"cpu\":%u,", any ? "," : "", i);
		json_row(f, &rep->cpus[i]);
		fputc('}', f);
		any = true;
	}
	fputs("],\"total\":{", f);
	json_row(f, t);
	fputs("},", f);
	json_types(f, rep);
	if (rep->snapshots)
		json_snapshot(f, rep);
	fprintf(f, ",\"markers\":{\"records\":%llu,\"bytes\":%llu,\"len_min\":%llu,"
		"\"len_max\":%llu}", ull(rep->markers), ull(rep->marker_bytes),
		ull(rep->marker_min), ull(rep->marker_max));
	if (rep->stages) {
		int k;

		fputs(",\"tcp_stages\":{", f);
		for (k = 0; k < NR_ST; k++) {
			if (!stage_shown(rep->stages, k))
				continue;
			fprintf(f, "%s\"%s\":", k ? "," : "", stage_names[k]);
			json_dist(f, &rep->stages->dist[k]);
		}
		fputc('}', f);
		if (!rep->no_hist)
			json_stage_hists(f, rep->stages);
	}
	if (!flows_empty(rep->flows)) {
		fputs(",\"tcp_flows\":", f);
		flows_print(rep->flows, true, f);
	}
	rx_report_json(rep->rx, f);
	if (!virtio_report_empty(rep->virtio)) {
		fputs(",\"virtqueues\":", f);
		virtio_report_print(rep->virtio, true, f);
	}
	fputs("}\n", f);
}

void report_set_hist(struct report *rep, bool on)
{
	rep->no_hist = !on;
}

void report_print(struct report *rep, const struct netlat_seq *seq, bool json, FILE *f)
{
	struct cpu_stats total;

	summarise(rep, seq, &total);
	if (rep->stages)
		stages_compute(rep->stages);
	rx_report_compute(rep->rx);
	if (json)
		print_json(rep, &total, f);
	else
		print_text(rep, &total, f);
}
