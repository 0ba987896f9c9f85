/* SPDX-License-Identifier: GPL-2.0 */
/* Build synthetic captures: the bytes read() on /dev/netlat would return. */
#ifndef TEST_CAPTURE_H
#define TEST_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "libnetlat.h"

#define TEST_MONO_NS		5000000000ULL		/* stream anchor */
#define TEST_REALTIME_NS	1700000000000000000ULL	/* 2023-11-14 22:13:20 UTC */

struct capture {
	unsigned char *buf;
	size_t len, cap;
};

void cap_free(struct capture *c);
void cap_bytes(struct capture *c, const void *p, size_t n);

/* A STREAM record of @size bytes (sizeof(struct netlat_rec_stream) or more). */
void cap_stream_sized(struct capture *c, uint32_t nr_cpus, uint16_t size);
void cap_stream(struct capture *c, uint32_t nr_cpus);
void cap_marker(struct capture *c, uint16_t cpu, uint64_t seq, uint64_t ts,
		const void *data, uint32_t len);
void cap_lost(struct capture *c, uint16_t cpu, uint64_t seq, uint64_t ts,
	      uint64_t count, uint64_t first_seq);
/* A record of a type this library does not know, zero-filled. */
void cap_other(struct capture *c, uint16_t type, uint16_t cpu, uint64_t seq,
	       uint64_t ts, uint16_t size);

/*
 * A SNAPSHOT record (overwrite mode) frozen at TEST_MONO_NS + @ts; with a
 * @trigger, the triggering record was 100 ns before.
 */
void cap_snapshot(struct capture *c, uint64_t id, uint32_t reason, uint32_t trigger,
		  uint16_t trig_type, uint16_t trig_cpu, uint64_t trig_seq, uint64_t ts);
/* A SNAP_CPU record: @records 48-byte records from @first_seq follow. */
void cap_snap_cpu(struct capture *c, uint16_t cpu, uint64_t written,
		  uint64_t overwritten, uint64_t records, uint64_t first_seq);

/* The record header at byte @offset, to corrupt it on purpose. */
struct netlat_rec_hdr *cap_hdr_at(struct capture *c, size_t offset);

/* Write to @path (created or truncated); 0 or -1. */
int cap_write(const struct capture *c, const char *path);

#endif
