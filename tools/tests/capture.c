// SPDX-License-Identifier: GPL-2.0
/* Synthetic capture builder: see capture.h. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture.h"

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

void cap_free(struct capture *c)
{
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

void cap_bytes(struct capture *c, const void *p, size_t n)
{
	if (c->len + n > c->cap) {
		c->cap = (c->len + n) * 2 + 4096;
		c->buf = realloc(c->buf, c->cap);
		if (!c->buf) {
			perror("realloc");
			exit(2);
		}
	}
	memcpy(c->buf + c->len, p, n);
	c->len += n;
}

static void fill_hdr(struct netlat_rec_hdr *h, uint16_t type, uint16_t size,
		     uint16_t cpu, uint64_t seq, uint64_t ts)
{
	h->size = size;
	h->type = type;
	h->magic = NETLAT_REC_MAGIC;
	h->version = NETLAT_ABI_VERSION;
	h->cpu = cpu;
	h->seq = seq;
	h->ts_ns = ts;
}

/* Append a zeroed record of @size bytes with its header filled in. */
static void *append_record(struct capture *c, uint16_t type, uint16_t size,
			   uint16_t cpu, uint64_t seq, uint64_t ts)
{
	static const unsigned char zeros[NETLAT_REC_MAX_SIZE * 2];
	size_t at = c->len;

	cap_bytes(c, zeros, size);
	fill_hdr((struct netlat_rec_hdr *)(void *)(c->buf + at), type, size, cpu, seq, ts);
	return c->buf + at;
}

void cap_stream_sized(struct capture *c, uint32_t nr_cpus, uint16_t size)
{
	struct netlat_rec_stream *s = append_record(c, NETLAT_REC_STREAM, size, 0, 0,
						    TEST_MONO_NS);

	s->abi_version = NETLAT_ABI_VERSION;
	s->nr_cpus = nr_cpus;
	s->clock_id = 1;
	s->flags = NETLAT_STREAM_RUNNING;
	s->ring_bytes = 1 << 20;
	s->realtime_ns = TEST_REALTIME_NS;
	s->mono_ns = TEST_MONO_NS;
}

void cap_stream(struct capture *c, uint32_t nr_cpus)
{
	cap_stream_sized(c, nr_cpus, sizeof(struct netlat_rec_stream));
}

void cap_marker(struct capture *c, uint16_t cpu, uint64_t seq, uint64_t ts,
		const void *data, uint32_t len)
{
	uint16_t size = (uint16_t)ALIGN8(sizeof(struct netlat_rec_marker) + len);
	struct netlat_rec_marker *m = append_record(c, NETLAT_REC_MARKER, size, cpu, seq, ts);

	m->pid = 1000 + cpu;
	m->tid = 2000 + cpu;
	m->len = len;
	memcpy(m->data, data, len);
}

void cap_lost(struct capture *c, uint16_t cpu, uint64_t seq, uint64_t ts,
	      uint64_t count, uint64_t first_seq)
{
	struct netlat_rec_lost *l = append_record(c, NETLAT_REC_LOST, sizeof(*l), cpu,
						  seq, ts);

	l->count = count;
	l->first_seq = first_seq;
}

void cap_other(struct capture *c, uint16_t type, uint16_t cpu, uint64_t seq,
	       uint64_t ts, uint16_t size)
{
	append_record(c, type, size, cpu, seq, ts);
}

void cap_snapshot(struct capture *c, uint64_t id, uint32_t reason, uint32_t trigger,
		  uint16_t trig_type, uint16_t trig_cpu, uint64_t trig_seq, uint64_t ts)
{
	struct netlat_rec_snapshot *s = append_record(c, NETLAT_REC_SNAPSHOT, sizeof(*s),
						      0, 0, TEST_MONO_NS + ts);

	s->reason = reason;
	s->trigger = trigger;
	s->trig_type = trig_type;
	s->trig_cpu = trig_cpu;
	s->trig_seq = trig_seq;
	s->trig_ts_ns = trigger ? TEST_MONO_NS + ts - 100 : 0;
	s->mode = NETLAT_MODE_OVERWRITE;
	s->id = id;
}

void cap_snap_cpu(struct capture *c, uint16_t cpu, uint64_t written,
		  uint64_t overwritten, uint64_t records, uint64_t first_seq)
{
	struct netlat_rec_snap_cpu *sc = append_record(c, NETLAT_REC_SNAP_CPU, sizeof(*sc),
						       cpu, 0, TEST_MONO_NS + 900000);

	sc->written = written;
	sc->overwritten = overwritten;
	sc->records = records;
	sc->bytes = records * 48;
	sc->first_seq = first_seq;
}

struct netlat_rec_hdr *cap_hdr_at(struct capture *c, size_t offset)
{
	return (struct netlat_rec_hdr *)(void *)(c->buf + offset);
}

int cap_write(const struct capture *c, const char *path)
{
	FILE *f = fopen(path, "wb");
	int r = 0;

	if (!f)
		return -1;
	if (c->len && fwrite(c->buf, 1, c->len, f) != c->len)
		r = -1;
	if (fclose(f))
		r = -1;
	return r;
}
