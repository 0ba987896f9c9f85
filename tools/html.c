// SPDX-License-Identifier: GPL-2.0
/*
 * "netlat report --html": see html.h. Every number on the page is a field
 * of the structures report_compute() fills for --json; this file only
 * lays them out. Tables show nanoseconds as the JSON has them; charts
 * label them in readable units and give the exact value in their <title>
 * (the hover text).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "join.h"
#include "summary.h"
#include "tx.h"
#include "txprint.h"
#include "flows.h"
#include "hist.h"
#include "output.h"
#include "virtio.h"
#include "rx.h"

#define W	760	/* width of every chart (viewBox units) */
#define LEFT	150	/* room for row labels */

/* A flow as the text report prints it, as HTML. */
static void esc_flow(FILE *f, const struct netlat_flow *fl)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&txt, &len);

	if (m) {
		print_flow(m, fl, false);
		fclose(m);
		html_esc(f, txt);
	}
	free(txt);
}

static void esc_snapshot(FILE *f, const struct report *rep)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&txt, &len);

	if (m) {
		describe_snapshot(m, &rep->snap_stream, &rep->snap);
		fclose(m);
		html_esc(f, txt);
	}
	free(txt);
}

static void dur(FILE *f, uint64_t ns)
{
	char buf[32];

	format_duration(buf, sizeof(buf), ns);
	fputs(buf, f);
}

/* Colour of a segment, by the point it ends at; of a retransmit kind. */
static const char *const point_colour[NR_PT] = {
	"#999", "#4e79a7", "#f28e2b", "#e15759", "#59a14f",
};
static const char *const rtx_colour[NR_RTX_KINDS] = {
	"#bab0ac", "#e15759", "#f28e2b", "#edc948", "#4e79a7", "#76b7b2",
};

static const char *const point_meaning[NR_PT] = {
	NULL, "queued behind sendmsg", "IP and TCP to the qdisc", "in the qdisc",
	"until the ACK",
};

static const char style[] =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
	"color:#222;margin:24px auto;max-width:1000px;padding:0 16px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid #ddd;padding-bottom:3px}h3{font-size:14px;margin:14px 0 4px}"
	".meta{color:#555;margin:0}"
	"ul.dirs{list-style:none;padding:0}ul.dirs li{background:#f4f7fb;border-left:4px solid"
	" #4e79a7;padding:6px 10px;margin:4px 0;font-size:15px}"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:4px 0}"
	"th,td{padding:2px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
	"th{background:#f6f6f6}td.l,th.l{text-align:left}"
	"svg{display:block;width:100%;max-width:" "760" "px;height:auto;margin:4px 0}"
	"svg text{font:11px system-ui,sans-serif;fill:#333}"
	".key span{display:inline-block;margin-right:14px;font-size:12px}"
	".key i{display:inline-block;width:10px;height:10px;margin-right:4px}"
	".note{color:#666;font-size:12px}#status{color:#888;font-size:11px}";

/* window.onerror puts a failure where --dump-dom and people see it. */
static const char script[] =
	"(function(){var s=document.getElementById('status');"
	"window.addEventListener('error',function(e){s.dataset.state='error';"
	"s.textContent='script error: '+e.message;});"
	"var n=document.querySelectorAll('svg').length;"
	"s.dataset.state='ok';s.textContent='rendered '+n+' charts';})();";

static void key(FILE *f, const char *colour, const char *label)
{
	fprintf(f, "<span><i style=\"background:%s\"></i>", colour);
	html_esc(f, label);
	fputs("</span>", f);
}

/* ---- header and "where the time went" ------------------------------------ */

static void header(FILE *f, const struct report *rep)
{
	const struct cpu_stats *t = &rep->total;
	char from[64];

	fputs("<h1>netlat report</h1><p class=\"meta\">capture <b>", f);
	html_esc(f, rep->name);
	fprintf(f, "</b>: %llu bytes, %llu records, %llu lost, %llu unexplained gaps",
		ull(rep->bytes), ull(t->records), ull(t->seq.lost), ull(t->seq.gaps));
	if (t->seen) {
		netlat_format_time(from, sizeof(from), t->first_wall, NETLAT_TIME_DATE);
		fprintf(f, "; from %s for ", from);
		dur(f, t->last_ts - t->first_ts);
	}
	fputs("</p>", f);
	if (rep->snapshots) {
		fputs("<p class=\"meta\">", f);
		esc_snapshot(f, rep);
		fputs("</p>", f);
	}
}

static void directions(FILE *f, const struct stages *st)
{
	fputs("<section id=\"summary\"><h2>Where the time went</h2><ul class=\"dirs\">", f);
	print_directions(f, st, true);
	fprintf(f, "</ul><p class=\"note\">%zu first transmissions joined by socket and "
		"sequence; the median packet is the one whose end-to-end time (first to "
		"last joined point) is the direction's p50. \"stack\": transmit to the "
		"driver.</p></section>", st->xmit.n);
}

static void services(FILE *f, const struct stages *st, const struct rx_report *rx)
{
	size_t n = rx_report_nr_services(rx);

	if (!(st && st->nr_svcs) && !n)
		return;
	fputs("<section id=\"services\"><h2>Per service port</h2>", f);
	if (st && st->nr_svcs) {
		fputs("<h3>Send stages</h3><ul class=\"dirs\">", f);
		print_services(f, st, true);
		fputs("</ul>", f);
	}
	if (n) {
		fputs("<h3>Receive stages</h3><ul class=\"dirs\">", f);
		rx_report_services(rx, f, true);
		fputs("</ul>", f);
	}
	fputs("<p class=\"note\">A socket's packets count for its own port, or for its "
	      "peer's when its own is in this host's ephemeral range and the peer's is not "
	      "(a client's for the server it talks to), as <code>netlat config --by port</code> "
	      "keys the kernel's histograms.</p></section>", f);
}

/* ---- per-stage table and histograms ------------------------------------- */

static void stage_row(FILE *f, const char *name, const struct netlat_dist *d)
{
	fputs("<tr><td class=\"l\">", f);
	html_esc(f, name);
	fprintf(f, "</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td>"
		"<td>%llu</td><td>%llu</td><td>%.1f</td></tr>", ull(d->count), ull(d->min),
		ull(d->p50), ull(d->p90), ull(d->p99), ull(d->p999), ull(d->max), d->mean);
}

/* The send stages (@st may be NULL), then the receive stages (rx.c). */
static void stage_table(FILE *f, const struct stages *st, const struct rx_report *rx)
{
	const struct netlat_dist *d;
	const char *name;
	unsigned int i;
	int k;

	fputs("<h3>Per-skb stages (ns)</h3><table id=\"stages\"><tr><th class=\"l\">stage</th>"
	      "<th>count</th><th>min</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th>"
	      "<th>max</th><th>mean</th></tr>", f);
	for (k = 0; st && k < NR_ST; k++)
		if (stage_shown(st, k))
			stage_row(f, stage_names[k], &st->dist[k]);
	for (i = 0; rx_report_stage(rx, i, &name, &d); i++)
		stage_row(f, name, d);
	fputs("</table>", f);
}

/* x of @v on a chart whose buckets first..last span [x0, x0 + bw * n). */
static double bucket_x(uint64_t v, unsigned int first, double x0, double bw)
{
	unsigned int k = hist_bucket(v);
	uint64_t lo, hi;
	double frac;

	hist_range(k, &lo, &hi);
	frac = k ? (double)(v - lo) / (double)((hi ? hi : UINT64_MAX) - lo) : 0.5;
	return x0 + bw * ((double)(k - first) + frac);
}

static void mark(FILE *f, const char *name, uint64_t v, double x, int top, int bottom,
		 int row)
{
	bool left = x > W - 130;	/* the label goes left of the line */

	fprintf(f, "<g><title>%s: %llu ns</title><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		"y2=\"%d\" stroke=\"#c00\" stroke-dasharray=\"3,2\"/>"
		"<text x=\"%.1f\" y=\"%d\" fill=\"#c00\"%s>%s ", name, ull(v), x, top, x,
		bottom, left ? x - 3 : x + 3, top + 10 + 12 * row,
		left ? " text-anchor=\"end\"" : "", name);
	dur(f, v);
	fputs("</text></g>", f);
}

static void histogram(FILE *f, const struct stages *st, int k)
{
	const struct hist *h = &st->hist[k];
	const struct netlat_dist *d = &st->dist[k];
	const int H = 174, top = 10, bottom = 144;
	unsigned int first, last, b, step;
	uint64_t peak = 0, lo, hi;
	double bw;
	char a[16], z[16];

	for (first = 0; !h->count[first]; first++)
		;
	for (last = HIST_BUCKETS - 1; !h->count[last]; last--)
		;
	for (b = first; b <= last; b++)
		if (h->count[b] > peak)
			peak = h->count[b];
	bw = (double)(W - 60) / (last - first + 1);
	step = bw >= 32 ? 1 : (unsigned int)(32 / bw) + 1;	/* labels 32 units apart */
	fputs("<h3>", f);
	html_esc(f, stage_names[k]);
	fprintf(f, "</h3><svg class=\"hist\" viewBox=\"0 0 %d %d\" role=\"img\">", W, H);
	fprintf(f, "<line x1=\"40\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>", bottom,
		W - 20, bottom);
	for (b = first; b <= last; b++) {
		double x = 40 + bw * (b - first);
		double y = bottom - (double)(bottom - top - 54) * h->count[b] / peak;

		hist_range(b, &lo, &hi);
		hist_label(a, sizeof(a), lo, 0);
		hist_label(z, sizeof(z), hi, 1);
		fprintf(f, "<g><title>[%s, %s) ns: %llu</title><rect x=\"%.1f\" y=\"%.1f\" "
			"width=\"%.1f\" height=\"%.1f\" fill=\"#4e79a7\"/></g>", a, z,
			ull(h->count[b]), x + 1, y, bw > 3 ? bw - 2 : bw, bottom - y);
		if (h->count[b] && bw >= 24)
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%llu</text>",
				x + bw / 2, y - 2, ull(h->count[b]));
		if ((b - first) % step == 0)
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
				x, bottom + 14, a);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">ns</text>", W - 20, bottom + 28);
	mark(f, "p50", d->p50, bucket_x(d->p50, first, 40, bw), top, bottom, 0);
	mark(f, "p99", d->p99, bucket_x(d->p99, first, 40, bw), top, bottom, 1);
	mark(f, "max", d->max, bucket_x(d->max, first, 40, bw), top, bottom, 2);
	fputs("</svg>", f);
}

static void stages_section(FILE *f, const struct report *rep)
{
	const struct stages *st = rep->stages;
	int k;

	fputs("<section id=\"stage-hist\"><h2>Stage latencies</h2>", f);
	stage_table(f, st, rep->rx);
	if (st && !rep->no_hist) {
		fputs("<p class=\"note\">log2 buckets: [2^(k-1), 2^k) ns; dashed: p50, p99, "
		      "max.</p>", f);
		for (k = 0; k < NR_ST; k++)
			if (st->dist[k].count)
				histogram(f, st, k);
	}
	fputs("</section>", f);
}

/* ---- packets: stacked bars and the waterfall ----------------------------- */

static void point_values(FILE *f, const struct report *rep, const struct packet *p, int k)
{
	const struct j_rec *r = p->pt[k];

	fprintf(f, "\n%s: ts %llu ns, cpu %u, record seq %llu", point_names[k], ull(r->ts),
		r->cpu, ull(r->seqno));
	switch (k) {
	case PT_SENDMSG:
		fprintf(f, ", sendmsg_id %u, end_seq %u, ret %lld, pid %u, tid %u, returned at "
			"%llu ns", r->seq, r->end, (long long)r->u.sm.ret, r->u.sm.pid,
			r->u.sm.tid, ull(r->u.sm.ret_ts));
		break;
	case PT_XMIT:
		fprintf(f, ", seq %u, len %u, segs %u, skb %016llx, flow ", r->seq, r->u.x.len,
			r->u.x.segs, ull(r->u.x.skb_id));
		esc_flow(f, &flows_row(rep->flows, r->flow)->key);
		break;
	case PT_QDISC:
	case PT_DRIVER:
		fprintf(f, ", seq %u, len %u, ifindex %d", r->seq, r->u.d.len, r->u.d.ifindex);
		break;
	case PT_ACK:
		fprintf(f, ", snd_una %u, acked %u, xmit_ack_ns %llu", r->seq, r->u.a.acked,
			ull(r->u.a.xmit_ack_ns));
		break;
	}
}

/*
 * The segments of @p as a bar from @x0, @scale px per ns, at @y: each one
 * a rect whose title holds its length and the two records' values.
 */
static void packet_bar(FILE *f, const struct report *rep, const struct packet *p,
		       double x0, double scale, double y, double h)
{
	int k, n;
	double x = x0;
	char name[32];

	for (k = packet_next_point(p, -1); (n = packet_next_point(p, k)) < NR_PT; k = n) {
		uint64_t len = p->pt[n]->ts - p->pt[k]->ts;
		double w = scale * (double)len;

		segment_name(name, sizeof(name), k, n);
		fputs("<g class=\"seg\"><title>", f);
		html_esc(f, name);
		fprintf(f, ": %llu ns", ull(len));
		point_values(f, rep, p, k);
		point_values(f, rep, p, n);
		fprintf(f, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
			"fill=\"%s\"/></g>", x, y, w > 0.5 ? w : 0.5, h, point_colour[n]);
		x += w;
	}
}

static void segment_key(FILE *f)
{
	char label[64];
	int k;

	fputs("<p class=\"key\">", f);
	for (k = PT_XMIT; k < NR_PT; k++) {
		snprintf(label, sizeof(label), "...>%s: %s", point_names[k], point_meaning[k]);
		key(f, point_colour[k], label);
	}
	fputs("</p>", f);
}

static void breakdown(FILE *f, const struct report *rep)
{
	const struct stages *st = rep->stages;
	size_t i;

	fputs("<section id=\"breakdown\"><h2>Send stages of the median and the p99 packet</h2>",
	      f);
	segment_key(f);
	for (i = 0; i < st->nr_dirs && i < DIRS_SHOWN; i++) {
		const struct direction *dir = &st->dirs[i];
		const struct packet *pk[2] = { dir->median, dir->p99 };
		static const char *const label[2] = { "median packet", "p99 packet" };
		char s[64], d[64];
		double scale;
		int j;

		if (!dir->median || !dir->p99)
			continue;
		format_addr(s, sizeof(s), dir->family, dir->saddr);
		format_addr(d, sizeof(d), dir->family, dir->daddr);
		fprintf(f, "<h3>%s &#8594; %s</h3><svg class=\"stack\" viewBox=\"0 0 %d 70\" "
			"role=\"img\">", s, d, W);
		scale = dir->p99->e2e ? (double)(W - LEFT - 90) / (double)dir->p99->e2e : 0;
		for (j = 0; j < 2; j++) {
			double y = 8 + 30 * j;

			fprintf(f, "<text x=\"4\" y=\"%.0f\">%s</text>", y + 14, label[j]);
			packet_bar(f, rep, pk[j], LEFT, scale, y, 20);
			fprintf(f, "<text x=\"%.1f\" y=\"%.0f\"><title>%llu ns</title>",
				LEFT + scale * (double)pk[j]->e2e + 4, y + 14, ull(pk[j]->e2e));
			dur(f, pk[j]->e2e);
			fputs("</text>", f);
		}
		fputs("</svg>", f);
	}
	fputs("</section>", f);
}

static void waterfall(FILE *f, const struct report *rep)
{
	const struct stages *st = rep->stages;
	const int row = 18;
	double scale;
	size_t i;

	if (!st->nr_slowest)
		return;
	fprintf(f, "<section id=\"waterfall\"><h2>The %zu slowest packets</h2><p class=\"note\">"
		"Each row starts at the packet's first point (label: ports and the "
		"sequence number of its first byte); hover a segment for the records.</p>", st->nr_slowest);
	segment_key(f);
	scale = st->slowest[0]->e2e ? (double)(W - LEFT - 70) / (double)st->slowest[0]->e2e : 0;
	fprintf(f, "<svg class=\"waterfall\" viewBox=\"0 0 %d %zu\" role=\"img\">", W,
		st->nr_slowest * row + 8);
	for (i = 0; i < st->nr_slowest; i++) {
		const struct packet *p = st->slowest[i];
		const struct netlat_flow *fl = &flows_row(rep->flows, p->pt[PT_XMIT]->flow)->key;
		double y = 4 + (double)(i * row);

		fprintf(f, "<text x=\"4\" y=\"%.0f\">%u&gt;%u seq %u</text>", y + 12, fl->sport,
			fl->dport, p->pt[PT_XMIT]->seq);
		packet_bar(f, rep, p, LEFT, scale, y, row - 4);
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\"><title>%llu ns</title>",
			LEFT + scale * (double)p->e2e + 4, y + 12, ull(p->e2e));
		dur(f, p->e2e);
		fputs("</text>", f);
	}
	fputs("</svg></section>", f);
}

/* ---- retransmits, losses, flows ------------------------------------------ */

static void retransmits(FILE *f, const struct stages *st)
{
	const int H = 160, top = 10, bottom = 130;
	uint64_t peak = 0, sum;
	double bw = (double)(W - 60) / RTX_BINS;
	int b, k;

	fputs("<section id=\"retrans\"><h2>Retransmits by kind over time</h2>", f);
	if (!st->rtx.n) {
		fputs("<p>No retransmit attempts.</p></section>", f);
		return;
	}
	fputs("<p class=\"key\">", f);
	for (k = 0; k < NR_RTX_KINDS; k++)
		key(f, rtx_colour[k], netlat_retrans_kind_name(k));
	fputs("</p>", f);
	for (b = 0; b < RTX_BINS; b++) {
		for (sum = 0, k = 0; k < NR_RTX_KINDS; k++)
			sum += st->rtx_bins[b][k];
		if (sum > peak)
			peak = sum;
	}
	fprintf(f, "<svg class=\"rtx\" viewBox=\"0 0 %d %d\" role=\"img\">", W, H);
	fprintf(f, "<line x1=\"40\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>"
		"<text x=\"36\" y=\"%d\" text-anchor=\"end\">%llu</text>", bottom, W - 20,
		bottom, top + 10, ull(peak));
	for (b = 0; b < RTX_BINS; b++) {
		double x = 40 + bw * b, y = bottom;

		fprintf(f, "<g><title>+%llu ns to +%llu ns:", ull((uint64_t)b * st->rtx_bin_ns),
			ull((uint64_t)(b + 1) * st->rtx_bin_ns));
		for (k = 0; k < NR_RTX_KINDS; k++)
			fprintf(f, " %s %llu", netlat_retrans_kind_name(k),
				ull(st->rtx_bins[b][k]));
		fputs("</title>", f);
		for (k = 0; k < NR_RTX_KINDS; k++) {
			double h = (double)(bottom - top) * st->rtx_bins[b][k] / peak;

			if (!st->rtx_bins[b][k])
				continue;
			y -= h;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"/>", x + 1, y, bw - 2, h, rtx_colour[k]);
		}
		fputs("</g>", f);
	}
	fprintf(f, "<text x=\"40\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" "
		"text-anchor=\"end\">+", bottom + 14, W - 20, bottom + 14);
	dur(f, st->rtx_bin_ns * RTX_BINS);
	fputs("</text></svg></section>", f);
}

static void loss_row(FILE *f, const char *label, const struct cpu_stats *c)
{
	fprintf(f, "<tr><td class=\"l\">%s</td><td>%llu</td><td>%llu</td><td>%llu</td>"
		"<td>%llu</td><td>%llu</td></tr>", label, ull(c->records),
		ull(c->by_kind[KIND_LOST]), ull(c->seq.lost), ull(c->seq.gaps),
		ull(c->ts_backwards));
}

static void losses(FILE *f, const struct report *rep)
{
	unsigned int i;
	char label[16];

	fprintf(f, "<section id=\"losses\"><h2>Losses</h2><p>%llu records lost, %llu "
		"unexplained gaps.</p><table><tr><th class=\"l\">cpu</th><th>records</th>"
		"<th>LOST records</th><th>lost</th><th>gaps</th><th>ts backwards</th></tr>",
		ull(rep->total.seq.lost), ull(rep->total.seq.gaps));
	for (i = 0; i < rep->nr_cpus; i++) {
		if (!rep->cpus[i].seen)
			continue;
		snprintf(label, sizeof(label), "%u", i);
		loss_row(f, label, &rep->cpus[i]);
	}
	loss_row(f, "total", &rep->total);
	fputs("</table>", f);
	if (rep->snapshots) {
		fputs("<h3>Snapshot rings (overwritten and skipped are not loss)</h3><table><tr>"
		      "<th class=\"l\">cpu</th><th>written</th><th>overwritten</th>"
		      "<th>dropped</th><th>skipped</th><th>records</th></tr>", f);
		for (i = 0; i < rep->nr_cpus; i++) {
			const struct netlat_rec_snap_cpu *c = &rep->cpus[i].snap;

			if (!rep->cpus[i].in_snap)
				continue;
			fprintf(f, "<tr><td class=\"l\">%u</td><td>%llu</td><td>%llu</td>"
				"<td>%llu</td><td>%llu</td><td>%llu</td></tr>", i, ull(c->written),
				ull(c->overwritten), ull(c->dropped), ull(c->skipped),
				ull(c->records));
		}
		fputs("</table>", f);
	}
	fputs("</section>", f);
}

static void flow_table(FILE *f, const struct report *rep)
{
	const struct flow_row **order;
	size_t n, i, shown;
	bool pkts = false;
	char buf[16];
	unsigned int j;
	int k;

	if (flows_empty(rep->flows))
		return;
	order = flows_sorted(rep->flows, &n);
	if (!order)
		return;
	shown = n < FLOWS_SHOWN ? n : FLOWS_SHOWN;
	for (i = 0; i < shown; i++)
		pkts |= order[i]->merged || order[i]->vq_pkts;
	fprintf(f, "<section id=\"flows\"><h2>TCP flows</h2><p class=\"note\">%zu flows by bytes "
		"first transmitted; retransmit attempts by kind.</p><table><tr>"
		"<th class=\"l\">flow</th><th>sm calls</th><th>sm bytes</th><th>tx segs</th>"
		"<th>tx bytes</th>", n);
	for (k = 0; k < NR_RTX_KINDS; k++)
		fprintf(f, "<th>%s</th>", netlat_retrans_kind_name(k));
	fputs("<th>failed</th>", f);
	if (pkts)
		fputs("<th title=\"packets followed only as part of a range (more than 256 in "
		      "flight)\">merged</th><th title=\"the fewest free virtqueue descriptors "
		      "a packet met / ring size\">vq free min</th>", f);
	fputs("</tr>", f);
	for (i = 0; i < shown; i++) {
		const struct flow_row *r = order[i];

		fputs("<tr><td class=\"l\">", f);
		esc_flow(f, &r->key);
		fprintf(f, "</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td>",
			ull(r->sendmsg_calls), ull(r->sendmsg_bytes), ull(r->xmit_segs),
			ull(r->xmit_bytes));
		for (k = 0; k < NR_RTX_KINDS; k++)
			fprintf(f, "<td>%llu</td>", ull(r->rtx[k]));
		fprintf(f, "<td>%llu", ull(r->failed));
		for (j = 0; j < r->nr_fail; j++)
			fprintf(f, "%s%s=%llu", j ? "," : " (",
				flows_code_name(r->fail[j].ret, buf, sizeof(buf)),
				ull(r->fail[j].count));
		fprintf(f, "%s</td>", r->nr_fail ? ")" : "");
		if (pkts && r->vq_pkts)
			fprintf(f, "<td>%llu</td><td>%u/%u</td>", ull(r->merged),
				r->vq_free_min, r->vq_size);
		else if (pkts)
			fprintf(f, "<td>%llu</td><td>-</td>", ull(r->merged));
		fputs("</tr>", f);
	}
	fputs("</table>", f);
	if (n > shown)
		fprintf(f, "<p>... %zu more flows</p>", n - shown);
	fputs("</section>", f);
	free(order);
}

/* The receive table as the text report prints it. */
static void rx_flow_table(FILE *f, const struct report *rep)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *m;

	if (rx_report_empty(rep->rx) || !(m = open_memstream(&txt, &len)))
		return;
	rx_report_flows(rep->rx, m);
	fclose(m);
	if (len) {
		/* the text's first lines are a blank one and its title */
		fputs("<section id=\"rx-flows\"><h2>Receive flows</h2><pre>", f);
		html_esc(f, txt + strspn(txt, "\n") + strcspn(txt + strspn(txt, "\n"), "\n") + 1);
		fputs("</pre></section>", f);
	}
	free(txt);
}

int html_write(const struct report *rep, const struct join_page *peer, FILE *f)
{
	/* No fetch can happen: the policy forbids every source but inline. */
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
	      "<meta name=\"viewport\" content=\"width=device-width\"><title>netlat report: ", f);
	html_esc(f, rep->name);
	fprintf(f, "</title><style>%s</style></head>\n<body>", style);
	header(f, rep);
	if (rep->stages) {
		directions(f, rep->stages);
		services(f, rep->stages, rep->rx);
		stages_section(f, rep);
		breakdown(f, rep);
		waterfall(f, rep);
		retransmits(f, rep->stages);
	} else {
		fputs("<section id=\"summary\"><h2>Where the time went</h2><p>No TCP records in "
		      "this capture.</p></section>", f);
		services(f, NULL, rep->rx);
		if (!rx_report_empty(rep->rx))
			stages_section(f, rep);
	}
	losses(f, rep);
	flow_table(f, rep);
	rx_flow_table(f, rep);
	if (!virtio_report_empty(rep->virtio))
		fputs("<p class=\"note\">The capture has virtqueue records: "
		      "<code>netlat report</code> tabulates them.</p>", f);
	if (peer && join_page_html(peer, f))
		return -ENOMEM;
	fprintf(f, "\n<footer><p id=\"status\" data-state=\"static\">netlat</p></footer>"
		"<script>%s</script></body></html>\n", script);
	return 0;
}
