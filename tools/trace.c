// SPDX-License-Identifier: GPL-2.0
/*
 * "netlat export --chrome-trace": see trace.h. The packets are the ones
 * report_compute() joins (the same count as "tcp_packets" in report
 * --json); this file keeps the other records the timeline shows and
 * writes the events.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "summary.h"
#include "tx.h"
#include "flows.h"
#include "output.h"

/*
 * Track ids: pid 1 holds the CPUs (tid = cpu + 1) and, as tid 0, global
 * events; flows have the pids from PID_FLOW0 on, and their lanes the tids
 * after the CPUs'.
 */
#define PID_CPUS	1
#define PID_FLOW0	100	/* pid of flow row i: PID_FLOW0 + i */

struct kept {			/* a record the timeline shows as an instant */
	size_t off;		/* in trace.buf */
	size_t stream;		/* in trace.streams: the header in force */
	uint64_t ts;		/* when it is drawn */
};

struct trace {
	unsigned char *buf;	/* copies of the kept records */
	size_t len, cap;
	struct kept *kept;
	size_t nr_kept, cap_kept;
	struct netlat_rec_stream *streams;
	size_t nr_streams;
	uint16_t max_cpu;
	bool any_cpu;
};

struct trace *trace_new(void)
{
	return calloc(1, sizeof(struct trace));
}

void trace_free(struct trace *tr)
{
	if (!tr)
		return;
	free(tr->buf);
	free(tr->kept);
	free(tr->streams);
	free(tr);
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	np = realloc(*p, n * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static int keep(struct trace *tr, const struct netlat_rec_hdr *rec, uint64_t ts)
{
	if (!tr->nr_streams)
		return 0;	/* libnetlat never returns records before a header */
	if (grow((void **)&tr->buf, &tr->cap, tr->len + rec->size, 1) ||
	    grow((void **)&tr->kept, &tr->cap_kept, tr->nr_kept + 1, sizeof(*tr->kept)))
		return -ENOMEM;
	memcpy(tr->buf + tr->len, rec, rec->size);
	tr->kept[tr->nr_kept++] = (struct kept){ .off = tr->len, .ts = ts,
						 .stream = tr->nr_streams - 1 };
	tr->len += rec->size;
	return 0;
}

int trace_add(struct trace *tr, const struct netlat_rec_stream *stream,
	      const struct netlat_rec_hdr *rec)
{
	switch (rec->type) {
	case NETLAT_REC_STREAM: {
		struct netlat_rec_stream *ns = realloc(tr->streams,
						       (tr->nr_streams + 1) * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		tr->streams = ns;
		ns[tr->nr_streams++] = *stream;
		return 0;
	}
	case NETLAT_REC_SNAPSHOT: {
		const struct netlat_rec_snapshot *s = (const void *)rec;

		return s->reason == NETLAT_SNAP_TRIGGER ? keep(tr, rec, s->trig_ts_ns) : 0;
	}
	case NETLAT_REC_MARKER:
		return keep(tr, rec, rec->ts_ns);
	case NETLAT_REC_TCP_DEV:
		if (((const struct netlat_rec_tcp_dev *)rec)->stage != NETLAT_DEV_DRIVER)
			return 0;
		break;
	case NETLAT_REC_VIRTIO:
		break;
	default:
		return 0;
	}
	if (!tr->any_cpu || rec->cpu > tr->max_cpu)
		tr->max_cpu = rec->cpu;
	tr->any_cpu = true;
	return keep(tr, rec, rec->ts_ns);
}

/* ---- writing ------------------------------------------------------------- */

void trace_event(struct trace_out *o, const char *ph, unsigned int pid, unsigned int tid)
{
	fprintf(o->f, "%s\n{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u", o->first ? "" : ",", ph, pid,
		tid);
	o->first = false;
}

void trace_ts(struct trace_out *o, const char *name, uint64_t ns)
{
	fprintf(o->f, ",\"%s\":%llu.%03llu", name, ull(ns / 1000), ull(ns % 1000));
}

void trace_meta(struct trace_out *o, const char *what, unsigned int pid, unsigned int tid,
		const char *name)
{
	trace_event(o, "M", pid, tid);
	fprintf(o->f, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	print_json_string(o->f, name);
	fputs("}}", o->f);
}

/* The JSON of @rec (print_record()'s object, without its newline). */
static void record_json(FILE *f, const struct netlat_rec_stream *stream,
			const struct netlat_rec_hdr *rec)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		fputs("null", f);
		return;
	}
	print_record(m, stream, rec, true);
	fclose(m);
	while (len && buf[len - 1] == '\n')
		len--;
	fwrite(buf, 1, len, f);
	free(buf);
}

static void instants(struct trace_out *o, const struct trace *tr)
{
	char name[80];
	size_t i;

	for (i = 0; i < tr->nr_kept; i++) {
		const struct kept *k = &tr->kept[i];
		const struct netlat_rec_hdr *rec = (const void *)(tr->buf + k->off);
		bool global = rec->type == NETLAT_REC_MARKER || rec->type == NETLAT_REC_SNAPSHOT;

		if (rec->type == NETLAT_REC_MARKER) {
			const struct netlat_rec_marker *m = (const void *)rec;
			size_t n = m->len < 40 ? m->len : 40, j;

			snprintf(name, sizeof(name), "marker ");
			for (j = 0; j < n; j++)
				name[7 + j] = m->data[j] >= 0x20 && m->data[j] < 0x7f ? m->data[j] : '.';
			name[7 + n] = 0;
		} else if (rec->type == NETLAT_REC_SNAPSHOT) {
			const char *t = netlat_trigger_name(((const struct netlat_rec_snapshot *)rec)->trigger);

			snprintf(name, sizeof(name), "trigger %s", t ? t : "?");
		} else if (rec->type == NETLAT_REC_VIRTIO) {
			snprintf(name, sizeof(name), "virtio %s",
				 virtio_event_name(((const struct netlat_rec_virtio *)rec)->event));
		} else {
			snprintf(name, sizeof(name), "driver");
		}
		trace_event(o, "i", PID_CPUS, global ? 0 : rec->cpu + 1u);
		fputs(",\"name\":", o->f);
		print_json_string(o->f, name);
		fprintf(o->f, ",\"cat\":\"%s\",\"s\":\"%s\"", global ? "marker" : "device",
			global ? "g" : "t");
		trace_ts(o, "ts", k->ts - o->base);
		fputs(",\"args\":", o->f);
		record_json(o->f, &tr->streams[k->stream], rec);
		fputc('}', o->f);
	}
}

/* The values of @p's point @k as JSON members, e.g. "xmit":{"cpu":0,...}. */
static void point_args(FILE *f, const struct packet *p, int k)
{
	const struct j_rec *r = p->pt[k];

	fprintf(f, "\"%s\":{\"ts_ns\":%llu,\"cpu\":%u,\"rec_seq\":%llu", point_names[k],
		ull(r->ts), r->cpu, ull(r->seqno));
	switch (k) {
	case PT_SENDMSG:
		fprintf(f, ",\"sendmsg_id\":%u,\"end_seq\":%u,\"ret\":%lld,\"pid\":%u,\"tid\":%u,"
			"\"return_ts_ns\":%llu", r->seq, r->end, (long long)r->u.sm.ret,
			r->u.sm.pid, r->u.sm.tid, ull(r->u.sm.ret_ts));
		break;
	case PT_XMIT:
		fprintf(f, ",\"seq\":%u,\"len\":%u,\"segs\":%u,\"skb_id\":%llu", r->seq,
			r->u.x.len, r->u.x.segs, ull(r->u.x.skb_id));
		break;
	case PT_QDISC:
	case PT_DRIVER:
		fprintf(f, ",\"seq\":%u,\"len\":%u,\"ifindex\":%d", r->seq, r->u.d.len,
			r->u.d.ifindex);
		break;
	case PT_ACK:
		fprintf(f, ",\"snd_una\":%u,\"acked\":%u,\"xmit_ack_ns\":%llu", r->seq,
			r->u.a.acked, ull(r->u.a.xmit_ack_ns));
		break;
	}
	fputc('}', f);
}

static void slice(struct trace_out *o, const struct packet *p, size_t id, unsigned int pid,
		  unsigned int tid, int a, int b)
{
	const struct j_rec *x = p->pt[PT_XMIT];
	uint64_t from = p->pt[a]->ts, to = p->pt[b]->ts;
	char name[32];

	if (a == b)
		snprintf(name, sizeof(name), "%s", point_names[a]);
	else
		segment_name(name, sizeof(name), a, b);
	trace_event(o, "X", pid, tid);
	fprintf(o->f, ",\"name\":\"%s\",\"cat\":\"packet\"", name);
	trace_ts(o, "ts", from - o->base);
	trace_ts(o, "dur", to - from);
	fprintf(o->f, ",\"args\":{\"packet\":%zu,\"seq\":%u,\"len\":%u,\"dur_ns\":%llu,"
		"\"end_to_end_ns\":%llu,", id, x->seq, x->u.x.len, ull(to - from), ull(p->e2e));
	point_args(o->f, p, a);
	if (a != b) {
		fputc(',', o->f);
		point_args(o->f, p, b);
	}
	fputs("}}", o->f);
}

static uint64_t first_ts(const struct packet *p)
{
	return p->pt[packet_next_point(p, -1)]->ts;
}

/* Flow, then start time. */
static int cmp_start(const void *a, const void *b)
{
	const struct packet *x = *(const struct packet *const *)a;
	const struct packet *y = *(const struct packet *const *)b;
	size_t fx = x->pt[PT_XMIT]->flow, fy = y->pt[PT_XMIT]->flow;

	if (fx != fy)
		return fx < fy ? -1 : 1;
	if (first_ts(x) != first_ts(y))
		return first_ts(x) < first_ts(y) ? -1 : 1;
	return x < y ? -1 : x > y;
}

struct lane {
	uint64_t end;		/* of its last packet */
	unsigned int tid;
};

/*
 * Each flow's packets, on the first lane (thread) free at their start:
 * slices of one thread never overlap. Thread ids are unique across the
 * trace, from @tid on (Perfetto identifies a thread by its tid alone).
 */
static int packets(struct trace_out *o, const struct report *rep, unsigned int tid)
{
	const struct stages *st = rep->stages;
	const struct packet **order;
	struct lane *lanes = NULL;
	size_t nr_lanes = 0, cap = 0, i, flow = SIZE_MAX;
	char name[160];

	order = malloc((st->xmit.n ? st->xmit.n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < st->xmit.n; i++)
		order[i] = &st->pkts[i];
	qsort(order, st->xmit.n, sizeof(*order), cmp_start);
	for (i = 0; i < st->xmit.n; i++) {
		const struct packet *p = order[i];
		unsigned int pid = PID_FLOW0 + (unsigned int)p->pt[PT_XMIT]->flow;
		uint64_t start = first_ts(p);
		size_t lane, id = (size_t)(p - st->pkts);
		int a, b;

		if (p->pt[PT_XMIT]->flow != flow) {
			char *txt = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&txt, &len);

			flow = p->pt[PT_XMIT]->flow;
			nr_lanes = 0;
			if (m) {
				print_flow(m, &flows_row(rep->flows, flow)->key, false);
				fclose(m);
			}
			snprintf(name, sizeof(name), "flow %s", txt ? txt : "?");
			free(txt);
			trace_meta(o, "process_name", pid, 0, name);
			trace_event(o, "M", pid, 0);
			fprintf(o->f, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%zu}}",
				flow + 10);
		}
		for (lane = 0; lane < nr_lanes && lanes[lane].end > start; lane++)
			;
		if (lane == nr_lanes) {
			if (grow((void **)&lanes, &cap, nr_lanes + 1, sizeof(*lanes))) {
				free(order);
				return -ENOMEM;
			}
			lanes[nr_lanes++].tid = tid++;
			snprintf(name, sizeof(name), "packets, lane %zu", lane);
			trace_meta(o, "thread_name", pid, lanes[lane].tid, name);
		}
		lanes[lane].end = start + p->e2e;
		a = packet_next_point(p, -1);
		b = packet_next_point(p, a);
		if (b == NR_PT)
			slice(o, p, id, pid, lanes[lane].tid, a, a);
		for (; b < NR_PT; a = b, b = packet_next_point(p, b))
			slice(o, p, id, pid, lanes[lane].tid, a, b);
	}
	free(lanes);
	free(order);
	return 0;
}

/* The earliest time drawn: records, sendmsg entries, triggers. */
static uint64_t base_ts(const struct trace *tr, const struct report *rep)
{
	uint64_t base = rep->total.seen ? rep->total.first_ts : UINT64_MAX;
	size_t i;

	for (i = 0; i < tr->nr_kept; i++)
		if (tr->kept[i].ts < base)
			base = tr->kept[i].ts;
	for (i = 0; rep->stages && i < rep->stages->xmit.n; i++)
		if (first_ts(&rep->stages->pkts[i]) < base)
			base = first_ts(&rep->stages->pkts[i]);
	return base == UINT64_MAX ? 0 : base;
}

int trace_write(struct trace *tr, const struct report *rep, FILE *f)
{
	struct trace_out o = { .f = f, .first = true };
	char name[32];
	unsigned int c;

	o.base = base_ts(tr, rep);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":", f);
	print_json_string(f, rep->name);
	fprintf(f, ",\"base_ts_ns\":%llu,\"packets\":%zu},\"traceEvents\":[", ull(o.base),
		rep->stages ? rep->stages->xmit.n : 0);
	trace_meta(&o, "process_name", PID_CPUS, 0, "cpus, markers, triggers");
	trace_event(&o, "M", PID_CPUS, 0);
	fputs(",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":1}}", f);
	trace_meta(&o, "thread_name", PID_CPUS, 0, "markers and triggers");
	for (c = 0; tr->any_cpu && c <= tr->max_cpu; c++) {
		snprintf(name, sizeof(name), "cpu %u", c);
		trace_meta(&o, "thread_name", PID_CPUS, c + 1, name);
	}
	instants(&o, tr);
	/* the lanes' thread ids follow the CPUs' */
	if (rep->stages && packets(&o, rep, tr->any_cpu ? tr->max_cpu + 2u : 1))
		return -ENOMEM;
	fputs("\n]}\n", f);
	return 0;
}
