// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat: the time-ordered merge of a source's CPUs and the sequence
 * and loss tracking of a stream (see libnetlat.h).
 */
#define _DEFAULT_SOURCE
#include "libnetlat.h"
#include "libnetlat_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ==== time-ordered merge ================================================= */

/* Records of one CPU waiting to be merged, oldest at buf[head]. */
struct cpu_queue {
	unsigned char *buf;
	size_t cap, head, tail;
	bool active;		/* produced data in the current stream */
};

struct netlat_merge {
	struct netlat_source *src;
	uint64_t hold_ns;

	struct cpu_queue *queues;
	unsigned int nr_queues;
	unsigned int nr_active;
	/* Min-heap of CPUs with queued records, keyed by their head record. */
	unsigned int *heap;
	unsigned int heap_len;

	uint64_t now_ns;	/* newest time seen: the hold window's clock */
	bool ended;		/* the source has nothing more */
	int pending_err;	/* source error, returned once drained */

	/* A STREAM record waits here until everything before it is out. */
	bool have_barrier;
	union {
		struct netlat_rec_hdr hdr;
		unsigned char bytes[NETLAT_REC_MAX_SIZE];
	} barrier;

	/*
	 * SNAPSHOT and SNAP_CPU describe what follows: returned as soon as
	 * read, before the records of their CPU (which come after them).
	 */
	bool have_pass;
	union {
		struct netlat_rec_hdr hdr;
		unsigned char bytes[NETLAT_REC_MAX_SIZE];
	} pass;

	bool emitted_any;
	struct netlat_rec_hdr last;	/* key of the last record returned */
	uint64_t late;
};

struct netlat_merge *netlat_merge_new(struct netlat_source *src, uint64_t hold_ns)
{
	struct netlat_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->src = src;
	m->hold_ns = hold_ns;
	return m;
}

void netlat_merge_free(struct netlat_merge *m)
{
	unsigned int i;

	if (!m)
		return;
	for (i = 0; i < m->nr_queues; i++)
		free(m->queues[i].buf);
	free(m->queues);
	free(m->heap);
	free(m);
}

uint64_t netlat_merge_late(const struct netlat_merge *m)
{
	return m->late;
}

static const struct netlat_rec_hdr *queue_head(const struct cpu_queue *q)
{
	return (const struct netlat_rec_hdr *)(const void *)(q->buf + q->head);
}

static bool queue_empty(const struct cpu_queue *q)
{
	return q->head == q->tail;
}

static bool key_less(const struct netlat_rec_hdr *a, const struct netlat_rec_hdr *b)
{
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu;
	return a->seq < b->seq;
}

static bool heap_less(const struct netlat_merge *m, unsigned int i, unsigned int j)
{
	return key_less(queue_head(&m->queues[m->heap[i]]),
			queue_head(&m->queues[m->heap[j]]));
}

static void heap_swap(struct netlat_merge *m, unsigned int i, unsigned int j)
{
	unsigned int t = m->heap[i];

	m->heap[i] = m->heap[j];
	m->heap[j] = t;
}

static void heap_sift_up(struct netlat_merge *m, unsigned int i)
{
	while (i && heap_less(m, i, (i - 1) / 2)) {
		heap_swap(m, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_sift_down(struct netlat_merge *m, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, min = i;

		if (l < m->heap_len && heap_less(m, l, min))
			min = l;
		if (r < m->heap_len && heap_less(m, r, min))
			min = r;
		if (min == i)
			return;
		heap_swap(m, i, min);
		i = min;
	}
}

/* Size the queues for a new stream and forget which CPUs were active. */
static int merge_begin_stream(struct netlat_merge *m, unsigned int nr_cpus)
{
	unsigned int i;

	if (nr_cpus > m->nr_queues) {
		struct cpu_queue *q = realloc(m->queues, nr_cpus * sizeof(*q));
		unsigned int *heap = realloc(m->heap, nr_cpus * sizeof(*heap));

		if (q)
			m->queues = q;
		if (heap)
			m->heap = heap;
		if (!q || !heap)
			return -ENOMEM;
		memset(q + m->nr_queues, 0, (nr_cpus - m->nr_queues) * sizeof(*q));
		m->nr_queues = nr_cpus;
	}
	for (i = 0; i < m->nr_queues; i++)
		m->queues[i].active = false;
	m->nr_active = 0;
	return 0;
}

/* Room for @size more bytes: compact, and grow when over half full. */
static int queue_reserve(struct cpu_queue *q, size_t size)
{
	size_t live = q->tail - q->head;

	if (q->tail + size <= q->cap)
		return 0;
	if (live + size > q->cap / 2) {
		size_t cap = q->cap ? q->cap * 2 : 16 * NETLAT_REC_MAX_SIZE;
		unsigned char *buf;

		while (cap < 2 * (live + size))
			cap *= 2;
		buf = realloc(q->buf, cap);
		if (!buf)
			return -ENOMEM;
		q->buf = buf;
		q->cap = cap;
	}
	memmove(q->buf, q->buf + q->head, live);
	q->head = 0;
	q->tail = live;
	return 0;
}

static int merge_enqueue(struct netlat_merge *m, const struct netlat_rec_hdr *rec)
{
	struct cpu_queue *q = &m->queues[rec->cpu];
	bool was_empty = queue_empty(q);

	if (queue_reserve(q, rec->size))
		return netlat__fail(m->src, ENOMEM, "out of memory holding records for ordering");
	memcpy(q->buf + q->tail, rec, rec->size);
	q->tail += rec->size;
	if (!q->active) {
		q->active = true;
		m->nr_active++;
	}
	if (was_empty) {
		m->heap[m->heap_len++] = rec->cpu;
		heap_sift_up(m, m->heap_len - 1);
	}
	if (rec->ts_ns > m->now_ns)
		m->now_ns = rec->ts_ns;
	return 0;
}

static bool merge_draining(const struct netlat_merge *m)
{
	return m->ended || m->pending_err || m->have_barrier;
}

static bool merge_can_release(const struct netlat_merge *m)
{
	const struct netlat_rec_hdr *oldest;

	if (!m->heap_len)
		return false;
	if (merge_draining(m))
		return true;
	/* Every active CPU has a record queued: nothing older can follow. */
	if (m->heap_len == m->nr_active)
		return true;
	oldest = queue_head(&m->queues[m->heap[0]]);
	return m->now_ns >= oldest->ts_ns && m->now_ns - oldest->ts_ns >= m->hold_ns;
}

static const struct netlat_rec_hdr *merge_pop(struct netlat_merge *m)
{
	struct cpu_queue *q = &m->queues[m->heap[0]];
	const struct netlat_rec_hdr *rec = queue_head(q);

	/* The bytes stay in place until the next enqueue on this queue. */
	q->head += rec->size;
	if (queue_empty(q)) {
		q->head = q->tail = 0;
		m->heap[0] = m->heap[--m->heap_len];
	}
	heap_sift_down(m, 0);

	if (m->emitted_any && key_less(rec, &m->last))
		m->late++;
	m->last = *rec;
	m->emitted_any = true;
	return rec;
}

static int merge_release_barrier(struct netlat_merge *m, const struct netlat_rec_hdr **rec)
{
	const struct netlat_rec_stream *s = (const void *)m->barrier.bytes;

	m->have_barrier = false;
	if (merge_begin_stream(m, s->nr_cpus))
		return netlat__fail(m->src, ENOMEM, "out of memory holding records for ordering");
	*rec = &m->barrier.hdr;
	return 1;
}

/* An idle live source: its records are CLOCK_MONOTONIC, so is "now". */
static void merge_advance_clock(struct netlat_merge *m)
{
	const struct netlat_rec_stream *s = netlat_stream(m->src);
	struct timespec now;
	uint64_t ns;

	if (!s || s->clock_id != CLOCK_MONOTONIC || clock_gettime(CLOCK_MONOTONIC, &now))
		return;
	ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	if (ns > m->now_ns)
		m->now_ns = ns;
}

/* Read one record into the queues. 0 go on, or a negative errno to return. */
static int merge_pull(struct netlat_merge *m)
{
	const struct netlat_rec_hdr *rec;
	int r = netlat_next(m->src, &rec);

	if (r == 1 && rec->type == NETLAT_REC_STREAM) {
		memcpy(m->barrier.bytes, rec, rec->size);
		m->have_barrier = true;
		return 0;
	}
	if (r == 1 && (rec->type == NETLAT_REC_SNAPSHOT || rec->type == NETLAT_REC_SNAP_CPU ||
		       rec->type == NETLAT_REC_NOTE)) {
		memcpy(m->pass.bytes, rec, rec->size);
		m->have_pass = true;
		return 0;
	}
	if (r == 1) {
		/* Out of memory: release what is held, then report it. */
		if (merge_enqueue(m, rec))
			m->pending_err = ENOMEM;
		return 0;
	}
	if (r == 0)
		m->ended = true;
	else if (r == -EAGAIN)
		merge_advance_clock(m);
	else if (r != -EINTR)
		m->pending_err = -r;
	return r == -EAGAIN || r == -EINTR ? r : 0;
}

int netlat_merge_next(struct netlat_merge *m, const struct netlat_rec_hdr **rec)
{
	int r;

	for (;;) {
		if (m->have_pass) {
			m->have_pass = false;
			*rec = &m->pass.hdr;
			return 1;
		}
		/*
		 * Take in the rest of the read() batch first: it is a snapshot
		 * of all CPUs, and may hold older records of CPUs not seen yet.
		 */
		if (!merge_draining(m) && netlat__record_buffered(m->src)) {
			merge_pull(m);
			continue;
		}
		if (merge_can_release(m)) {
			*rec = merge_pop(m);
			return 1;
		}
		if (m->have_barrier)
			return merge_release_barrier(m, rec);
		if (m->pending_err)
			return -m->pending_err;
		if (m->ended)
			return 0;
		r = merge_pull(m);
		if (r == -EAGAIN && merge_can_release(m))
			continue;
		if (r < 0)
			return r;
	}
}

/* ==== sequence and loss tracking ========================================= */

struct cpu_seq {
	bool seen;		/* baseline set in the current stream */
	uint64_t expected;
	/*
	 * A snapshot section (after NETLAT_REC_SNAP_CPU): the baseline is its
	 * first_seq, even for a LOST record (whose dropped run went before
	 * the copy), and it must end at first_seq + records.
	 */
	bool in_snap, snap_first;
	uint64_t snap_end;
	struct netlat_seq_stats stats;
};

struct netlat_seq {
	struct cpu_seq *cpus;
	unsigned int nr_cpus;
};

struct netlat_seq *netlat_seq_new(void)
{
	return calloc(1, sizeof(struct netlat_seq));
}

void netlat_seq_free(struct netlat_seq *t)
{
	if (t)
		free(t->cpus);
	free(t);
}

static struct cpu_seq *seq_cpu(struct netlat_seq *t, unsigned int cpu)
{
	if (cpu >= t->nr_cpus) {
		struct cpu_seq *c = realloc(t->cpus, (cpu + 1) * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + t->nr_cpus, 0, (cpu + 1 - t->nr_cpus) * sizeof(*c));
		t->cpus = c;
		t->nr_cpus = cpu + 1;
	}
	return &t->cpus[cpu];
}

/* A snapshot section with fewer records than its SNAP_CPU announced. */
static bool snap_short(const struct cpu_seq *c)
{
	return c->in_snap && c->expected != c->snap_end;
}

static void snap_close(struct cpu_seq *c)
{
	if (snap_short(c))
		c->stats.gaps++;
	c->in_snap = false;
}

/* A new reader: earlier records went elsewhere, so no CPU has a baseline. */
static void seq_new_stream(struct netlat_seq *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_cpus; i++) {
		snap_close(&t->cpus[i]);
		t->cpus[i].seen = false;
	}
}

/* False, with the details in *@g, if @seq breaks the expectation. */
static bool seq_matches(const struct cpu_seq *c, uint64_t seq, struct netlat_seq_gap *g)
{
	if (!c->seen || seq == c->expected)
		return true;
	g->expected = c->expected;
	g->seq = seq;
	return false;
}

/* The records of a CPU in a snapshot follow: they start at first_seq. */
static void seq_snap_cpu(struct cpu_seq *c, const struct netlat_rec_snap_cpu *sc)
{
	snap_close(c);
	c->in_snap = true;
	c->snap_first = true;
	c->seen = true;
	c->expected = sc->first_seq;
	c->snap_end = sc->first_seq + sc->records;
	c->stats.overwritten += sc->overwritten;
	c->stats.skipped += sc->skipped;
}

int netlat_seq_add(struct netlat_seq *t, const struct netlat_rec_hdr *rec,
		   struct netlat_seq_gap *gap)
{
	struct netlat_seq_gap g = { .cpu = rec->cpu };
	struct cpu_seq *c;
	bool ok = true;

	if (rec->type == NETLAT_REC_STREAM) {
		seq_new_stream(t);
		return 0;
	}
	c = seq_cpu(t, rec->cpu);
	if (!c)
		return -ENOMEM;
	/* Descriptions of a snapshot or the host, not ring records: no number. */
	if (rec->type == NETLAT_REC_SNAPSHOT || rec->type == NETLAT_REC_NOTE)
		return 0;
	if (rec->type == NETLAT_REC_SNAP_CPU) {
		seq_snap_cpu(c, (const void *)rec);
		return 0;
	}
	c->stats.records++;

	if (rec->type == NETLAT_REC_LOST) {
		const struct netlat_rec_lost *lost = (const void *)rec;

		/* The dropped records took first_seq .. first_seq + count - 1. */
		if (!c->snap_first) {
			ok = seq_matches(c, lost->first_seq, &g);
			c->expected = lost->first_seq + lost->count;
			c->seen = true;
		}
		c->stats.lost += lost->count;
	}
	if (ok)
		ok = seq_matches(c, rec->seq, &g);
	c->expected = rec->seq + 1;
	c->seen = true;
	c->snap_first = false;
	if (c->in_snap && c->expected > c->snap_end && ok) {
		/* More records than the snapshot announced. */
		g.expected = c->snap_end;
		g.seq = rec->seq;
		c->in_snap = false;
		ok = false;
	}

	if (ok)
		return 0;
	c->stats.gaps++;
	if (gap)
		*gap = g;
	return 1;
}

unsigned int netlat_seq_nr_cpus(const struct netlat_seq *t)
{
	return t->nr_cpus;
}

void netlat_seq_cpu_stats(const struct netlat_seq *t, unsigned int cpu,
			  struct netlat_seq_stats *st)
{
	static const struct netlat_seq_stats none;

	*st = cpu < t->nr_cpus ? t->cpus[cpu].stats : none;
	if (cpu < t->nr_cpus && snap_short(&t->cpus[cpu]))
		st->gaps++;
}

void netlat_seq_total(const struct netlat_seq *t, struct netlat_seq_stats *st)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < t->nr_cpus; i++) {
		struct netlat_seq_stats c;

		netlat_seq_cpu_stats(t, i, &c);
		st->records += c.records;
		st->lost += c.lost;
		st->gaps += c.gaps;
		st->overwritten += c.overwritten;
		st->skipped += c.skipped;
	}
}
