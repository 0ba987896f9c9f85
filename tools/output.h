/* SPDX-License-Identifier: GPL-2.0 */
/* Text and JSON renderings of records, shared by the netlat sub-commands. */
#ifndef NETLAT_OUTPUT_H
#define NETLAT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "libnetlat.h"

/* A __u64 for printf's %llu, whatever uint64_t is on this platform. */
static inline unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/*
 * Bytes between double quotes' worth of escaping: printable ASCII as is,
 * \" \\ \n \t \r, anything else \xHH (text) or \u00HH (JSON: every byte
 * becomes the code point of the same value, so nothing is lost).
 */
void print_escaped(FILE *f, const void *data, size_t len, bool json);

/* A C string as a quoted JSON string. */
void print_json_string(FILE *f, const char *s);

/*
 * A field of a record: " name=VALUE" as text, ",\"name\":VALUE" in JSON.
 * The macros are for a function with FILE *f, bool json and the record r:
 * FIELD_NUM() prints a number as its type says (signed or not), FIELD()
 * r's member of that name, FIELD_AS() one of r's members by another name,
 * FIELD_BIT() whether r's flag @mask is set (0 or 1).
 */
void print_field_u(FILE *f, bool json, const char *name, unsigned long long v);
void print_field_s(FILE *f, bool json, const char *name, long long v);
void print_field_str(FILE *f, bool json, const char *name, const char *v);

#define FIELD_STR(name, v)	print_field_str(f, json, name, v)
#define FIELD_NUM(name, v)						\
	_Generic((v), int: print_field_s, long: print_field_s,		\
		 long long: print_field_s, default: print_field_u)(f, json, name, v)
#define FIELD(member)		FIELD_NUM(#member, r->member)
#define FIELD_AS(name, member)	FIELD_NUM(#name, r->member)
#define FIELD_BIT(name, mask)	FIELD_NUM(#name, !!(r->flags & (mask)))

/* FIELD() of each member named, up to eight: FIELDS(seq, end_seq, len). */
#define FIELDS(...)							\
	do {								\
		FIELDS_PICK(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1)(__VA_ARGS__); \
	} while (0)
#define FIELDS_PICK(_1, _2, _3, _4, _5, _6, _7, _8, n, ...)	FIELDS_##n
#define FIELDS_1(m)		FIELD(m)
#define FIELDS_2(m, ...)	FIELD(m); FIELDS_1(__VA_ARGS__)
#define FIELDS_3(m, ...)	FIELD(m); FIELDS_2(__VA_ARGS__)
#define FIELDS_4(m, ...)	FIELD(m); FIELDS_3(__VA_ARGS__)
#define FIELDS_5(m, ...)	FIELD(m); FIELDS_4(__VA_ARGS__)
#define FIELDS_6(m, ...)	FIELD(m); FIELDS_5(__VA_ARGS__)
#define FIELDS_7(m, ...)	FIELD(m); FIELDS_6(__VA_ARGS__)
#define FIELDS_8(m, ...)	FIELD(m); FIELDS_7(__VA_ARGS__)

/*
 * One line for @rec: text such as
 *   12:00:01.123456789 cpu1 seq=42 MARKER pid=100 tid=100 len=5 "hello"
 * or a JSON object. @stream is the header in force, for wall-clock time.
 */
void print_record(FILE *f, const struct netlat_rec_stream *stream,
		  const struct netlat_rec_hdr *rec, bool json);

/* Drop reasons in print_record(): named by @names (NULL: numbers). */
void output_set_drop_names(const struct netlat_names *names);

/*
 * A flow: text "10.0.0.1:5000>10.0.0.2:80 ck=...", or JSON fields
 * ',"family":2,"saddr":...,"cookie":N' (leading comma, no braces).
 */
void print_flow(FILE *f, const struct netlat_flow *fl, bool json);

/* An address of @family (AF_INET: 4 bytes, AF_INET6: 16) as text, "?" if bad. */
void format_addr(char *buf, size_t len, unsigned int family, const uint8_t *a);

/* @ns in a unit that keeps 2-3 significant digits: "950 ns", "28 us", "1.8 ms". */
void format_duration(char *buf, size_t len, uint64_t ns);

/* format_duration() of @ns; in HTML, with the exact value as the hover text. */
void print_duration(FILE *f, uint64_t ns, bool html);

/* "; NAME p50 X, p99 Y, max Z" of @d, as HTML if @html. */
void print_stage_summary(FILE *f, const char *name, const struct netlat_dist *d, bool html);

/*
 * The first @shown of the @n items of @list, each by @item as an indented
 * line (text) or an HTML list item, then how many more @what there are.
 */
void print_items(FILE *f, bool html, const void *list, size_t n, size_t shown,
		 void (*item)(FILE *f, const void *list, size_t i, bool html),
		 const char *what);

/*
 * @s as HTML text (element content and attribute values alike): markup
 * escaped, control characters as '?', malformed UTF-8 as U+FFFD. Here, not
 * in html.c, as the join's section (joinhtml.c) escapes too, below html.c.
 */
void html_esc(FILE *f, const char *s);

/* @d as a JSON object: count, min, p50, p90, p99, p99_9, max, mean. */
void print_dist_json(FILE *f, const struct netlat_dist *d);

/*
 * A table of distributions, the first column @width wide: its header line
 * (@first names the first column), and a row of @d labelled @label. The
 * report's gap and stage tables (report.c, tx.c, rx.c) share the columns.
 */
void print_dist_header(FILE *f, int width, const char *first);
void print_dist_row(FILE *f, int width, const char *label, const struct netlat_dist *d);

/*
 * Name of a NETLAT_VIRTIO_* event ("xmit", "xmit_done", ...), "?" if
 * unknown: here, as print_record() prints virtio records, below virtio.c.
 */
const char *virtio_event_name(unsigned int event);

/* "manual", "trigger" (NETLAT_SNAP_*); "stream", "overwrite" (NETLAT_MODE_*). */
const char *snap_reason_name(unsigned int reason);
const char *ring_mode_name(unsigned int mode);

/*
 * "snapshot 3 (trigger latency: TCP_ACK cpu 1 seq 42), overwrite mode,
 * frozen 2024-01-01 12:00:00.000000000", no newline.
 */
void describe_snapshot(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_snapshot *s);

#endif
