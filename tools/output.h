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
void print_flow(FILE *f, const struct netlat_tcp_flow *fl, bool json);

/* An address of @family (AF_INET: 4 bytes, AF_INET6: 16) as text, "?" if bad. */
void format_addr(char *buf, size_t len, unsigned int family, const uint8_t *a);

/* @ns in a unit that keeps 2-3 significant digits: "950 ns", "28 us", "1.8 ms". */
void format_duration(char *buf, size_t len, uint64_t ns);

/* format_duration() of @ns; in HTML, with the exact value as the hover text. */
void print_duration(FILE *f, uint64_t ns, bool html);

/* "; NAME p50 X, p99 Y, max Z" of @d, as HTML if @html. */
void print_stage_summary(FILE *f, const char *name, const struct netlat_dist *d, bool html);

/* @d as a JSON object: count, min, p50, p90, p99, p99_9, max, mean. */
void print_dist_json(FILE *f, const struct netlat_dist *d);

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
