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
};

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
	c = cpu_stats_of(rep, rec->cpu);
	if (!c)
		return -ENOMEM;
	c->records++;
	c->by_kind[kind_of(rec->type)]++;
	if (rec->type == NETLAT_REC_MARKER)
		add_marker(rep, (const void *)rec);
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

static void print_text(struct report *rep, const struct cpu_stats *t, FILE *f)
{
	unsigned int i;
	char label[16];
	int k;

	text_header(f, rep, t);
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
	fprintf(f, ",\"markers\":{\"records\":%llu,\"bytes\":%llu,\"len_min\":%llu,"
		"\"len_max\":%llu}}\n", ull(rep->markers), ull(rep->marker_bytes),
		ull(rep->marker_min), ull(rep->marker_max));
}

void report_print(struct report *rep, const struct netlat_seq *seq, bool json, FILE *f)
{
	struct cpu_stats total;

	summarise(rep, seq, &total);
	if (json)
		print_json(rep, &total, f);
	else
		print_text(rep, &total, f);
}
