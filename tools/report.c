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
#include "summary.h"
#include "virtio.h"
#include "rx.h"
#include "output.h"
#include "tx.h"
#include "txprint.h"
#include "flows.h"

static const char *const kind_names[NR_KINDS] = { "MARKER", "LOST", "other" };

#define NR_TYPES	65536	/* hdr.type is a __u16 */

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
	tx_free(rep->stages);
	virtio_report_free(rep->virtio);
	flows_free(rep->flows);
	rx_report_free(rep->rx);
	free(rep->vq.v);
	free(rep->cpus);
	free(rep->type_counts);
	free(rep->name);
	free(rep);
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

void report_set_names(struct report *rep, const struct netlat_names *names)
{
	rep->names = names;
	if (rep->rx)
		rx_report_set_names(rep->rx, names);
}

/* What the recording host noted: for the header. */
static void add_note(struct report *rep, const struct netlat_rec_note *n)
{
	const char *p = (const char *)n->text;
	size_t i;

	if (n->kind == NETLAT_NOTE_KERNEL && n->version == 1) {
		for (i = 0; i < n->len && i < sizeof(rep->kernel) - 1 && p[i] >= 0x20 && p[i] < 0x7f; i++)
			rep->kernel[i] = p[i];
		rep->kernel[i] = 0;
	}
	if (n->kind == NETLAT_NOTE_DROP_REASONS && n->version == 1)
		for (i = 0; i < n->len; i++)
			rep->drop_names += p[i] == '\n';
}

/* A TCP record with a flow: the send side's join and the flow table. */
static int add_tcp(struct report *rep, const struct netlat_rec_hdr *rec)
{
	if (!rep->stages && !(rep->stages = tx_new()))
		return -ENOMEM;
	if (!rep->flows && !(rep->flows = flows_new()))
		return -ENOMEM;
	return tx_add_tcp(rep->stages, rep->flows, rec);
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
	if (rec->type == NETLAT_REC_NOTE) {
		add_note(rep, (const void *)rec);
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
	if (netlat_rec_is_tcp(rec->type) &&
	    rec->size >= sizeof(*rec) + sizeof(struct netlat_flow) &&
	    add_tcp(rep, rec))
		return -ENOMEM;
	if (netlat_rec_is_rx(rec->type)) {
		if (!rep->rx && (rep->rx = rx_report_new()))
			rx_report_set_names(rep->rx, rep->names);
		if (!rep->rx || rx_report_add(rep->rx, rec))
			return -ENOMEM;
	}
	if (rec->type == NETLAT_REC_VIRTIO) {
		if (!rep->virtio)
			rep->virtio = virtio_report_new();
		if (!rep->virtio || virtio_report_add(rep->virtio, rec) || tx_add_vq(&rep->vq, rec))
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
	if (rep->kernel[0] || rep->drop_names)
		fprintf(f, "  recorded on kernel %s; %llu drop reason names noted\n",
			rep->kernel[0] ? rep->kernel : "?", ull(rep->drop_names));
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

/* The send stages and, in the same table, the receive stages. */
static void text_stages(FILE *f, const struct stages *st, const struct rx_report *rx)
{
	if (st && st->kernel_pkts)
		fprintf(f, "\nTCP per-packet stages (ns; %llu packets followed by the kernel)\n",
			ull(st->kernel_pkts));
	else if (st)
		fprintf(f, "\nTCP per-skb stages (ns; %zu first transmissions joined by socket and sequence)\n",
			st->xmit.n);
	if (!rx_report_empty(rx))
		fprintf(f, "%sreceive stages: arrivals joined per socket by sequence (TCP), per skb (UDP)\n",
			st ? "" : "\n");
	print_dist_header(f, 13, "stage");
	if (st)
		tx_text_stage_rows(f, st);
	rx_report_stage_rows(rx, f);
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

/* The send flows, the receive flows and the virtqueues: the last tables of both. */
static void print_tables(FILE *f, const struct report *rep, bool json)
{
	if (!flows_empty(rep->flows)) {
		fputs(json ? ",\"tcp_flows\":" : "\n", f);
		flows_print(rep->flows, json, f);
	}
	if (json)
		rx_report_json(rep->rx, f);
	else
		rx_report_flows(rep->rx, f);
	if (!virtio_report_empty(rep->virtio)) {
		fputs(json ? ",\"virtqueues\":" : "\n", f);
		virtio_report_print(rep->virtio, json, f);
	}
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
	print_dist_header(f, 6, "cpu");
	for (i = 0; i < rep->nr_cpus; i++) {
		if (!rep->cpus[i].seen)
			continue;
		snprintf(label, sizeof(label), "%u", i);
		print_dist_row(f, 6, label, &rep->cpus[i].gap);
	}
	print_dist_row(f, 6, "all", &t->gap);
	if (rep->stages || !rx_report_empty(rep->rx))
		text_stages(f, rep->stages, rep->rx);
	if (rep->stages)
		tx_text_summaries(f, rep->stages);
	rx_report_text_services(rep->rx, f);
	if (rep->stages && !rep->no_hist)
		tx_text_hists(f, rep->stages);
	print_tables(f, rep, false);
}

/* ---- JSON ---------------------------------------------------------------- */


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
	print_dist_json(f, &c->gap);
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
		"\"clock_id\":%u,\"ring_bytes\":%llu,", ull(rep->bytes), ull(rep->streams),
		s->abi_version, s->nr_cpus, s->clock_id, ull(s->ring_bytes));
	/* what the capture noted of its host: null if nothing */
	fputs("\"kernel\":", f);
	if (rep->kernel[0])
		print_json_string(f, rep->kernel);
	else
		fputs("null", f);
	fprintf(f, ",\"drop_reason_names\":%llu,\"cpus\":[", ull(rep->drop_names));
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
	if (rep->stages)
		tx_json(f, rep->stages, rep->flows, !rep->no_hist);
	print_tables(f, rep, true);
	fputs("}\n", f);
}

void report_set_hist(struct report *rep, bool on)
{
	rep->no_hist = !on;
}

int report_compute(struct report *rep, const struct netlat_seq *seq)
{
	if (rep->computed)
		return rep->compute_err;
	rep->computed = true;
	summarise(rep, seq, &rep->total);
	if (rep->stages)
		rep->compute_err = tx_compute(rep->stages, rep->flows, &rep->vq,
					      rep->total.first_ts, rep->total.last_ts);
	rx_report_compute(rep->rx);
	return rep->compute_err;
}

int report_print(struct report *rep, const struct netlat_seq *seq, bool json, FILE *f)
{
	if (report_compute(rep, seq))
		return -ENOMEM;
	if (json)
		print_json(rep, &rep->total, f);
	else
		print_text(rep, &rep->total, f);
	return 0;
}
