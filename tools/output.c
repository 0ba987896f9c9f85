// SPDX-License-Identifier: GPL-2.0
/* Text and JSON renderings of records: see output.h. */
#define _DEFAULT_SOURCE
#include <string.h>
#include "output.h"

void print_escaped(FILE *f, const void *data, size_t len, bool json)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, f);
		else
			fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
	}
}

void print_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	print_escaped(f, s, strlen(s), true);
	fputc('"', f);
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

static const char *tracing_state(const struct netlat_rec_stream *s)
{
	return s->flags & NETLAT_STREAM_RUNNING ? "running" : "stopped";
}

/* ---- text ---------------------------------------------------------------- */

static void text_stream(FILE *f, const struct netlat_rec_stream *s)
{
	fprintf(f, "STREAM abi=%u nr_cpus=%u clock=%u tracing=%s ring_bytes=%llu probe_groups=0x%llx",
		s->abi_version, s->nr_cpus, s->clock_id, tracing_state(s),
		ull(s->ring_bytes), ull(s->probe_groups));
}

static void text_lost(FILE *f, const struct netlat_rec_lost *l)
{
	fprintf(f, "LOST count=%llu first_seq=%llu", ull(l->count), ull(l->first_seq));
}

static void text_marker(FILE *f, const struct netlat_rec_marker *m)
{
	fprintf(f, "MARKER pid=%u tid=%u len=%u \"", m->pid, m->tid, m->len);
	print_escaped(f, m->data, m->len, false);
	fputc('"', f);
}

static void print_text(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *h)
{
	char when[64];

	netlat_format_time(when, sizeof(when), netlat_wall_ns(stream, h->ts_ns), 0);
	fprintf(f, "%s cpu%u seq=%llu ", when, h->cpu, ull(h->seq));
	switch (h->type) {
	case NETLAT_REC_STREAM:
		text_stream(f, (const void *)h);
		break;
	case NETLAT_REC_LOST:
		text_lost(f, (const void *)h);
		break;
	case NETLAT_REC_MARKER:
		text_marker(f, (const void *)h);
		break;
	default:
		fprintf(f, "type=%u size=%u", h->type, h->size);
	}
	fputc('\n', f);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_stream(FILE *f, const struct netlat_rec_stream *s)
{
	fprintf(f, ",\"abi_version\":%u,\"nr_cpus\":%u,\"clock_id\":%u,\"flags\":%u,"
		"\"tracing\":\"%s\",\"ring_bytes\":%llu,\"realtime_ns\":%llu,"
		"\"mono_ns\":%llu,\"probe_groups\":%llu",
		s->abi_version, s->nr_cpus, s->clock_id, s->flags, tracing_state(s),
		ull(s->ring_bytes), ull(s->realtime_ns), ull(s->mono_ns),
		ull(s->probe_groups));
}

static void json_lost(FILE *f, const struct netlat_rec_lost *l)
{
	fprintf(f, ",\"count\":%llu,\"first_seq\":%llu", ull(l->count), ull(l->first_seq));
}

static void json_marker(FILE *f, const struct netlat_rec_marker *m)
{
	fprintf(f, ",\"pid\":%u,\"tid\":%u,\"len\":%u,\"data\":\"", m->pid, m->tid, m->len);
	print_escaped(f, m->data, m->len, true);
	fputc('"', f);
}

static void print_json(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *h)
{
	const char *name = netlat_type_name(h->type);

	fprintf(f, "{\"type\":\"%s\",\"type_id\":%u,\"size\":%u,\"cpu\":%u,\"seq\":%llu,"
		"\"ts_ns\":%llu,\"wall_ns\":%llu",
		name ? name : "unknown", h->type, h->size, h->cpu, ull(h->seq),
		ull(h->ts_ns), ull(netlat_wall_ns(stream, h->ts_ns)));
	switch (h->type) {
	case NETLAT_REC_STREAM:
		json_stream(f, (const void *)h);
		break;
	case NETLAT_REC_LOST:
		json_lost(f, (const void *)h);
		break;
	case NETLAT_REC_MARKER:
		json_marker(f, (const void *)h);
		break;
	}
	fputs("}\n", f);
}

void print_record(FILE *f, const struct netlat_rec_stream *stream,
		  const struct netlat_rec_hdr *rec, bool json)
{
	if (json)
		print_json(f, stream, rec);
	else
		print_text(f, stream, rec);
}
