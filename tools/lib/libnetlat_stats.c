// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat: samples, percentiles, the stream's clock and the packet
 * level's stages (see libnetlat.h).
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

/* ==== samples and percentiles ============================================ */

int netlat_samples_add(struct netlat_samples *s, uint64_t value)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = value;
	return 0;
}

void netlat_samples_free(struct netlat_samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void netlat_sort_u64(uint64_t *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), compare_u64);
}

#define PPM	1000000ULL	/* percentiles in parts per million */

uint64_t netlat_percentile(const uint64_t *sorted, size_t n, double pct)
{
	uint64_t ppm, rank;

	if (n == 0)
		return 0;
	if (!(pct > 0))		/* also NaN */
		return sorted[0];
	if (pct >= 100)
		return sorted[n - 1];
	/*
	 * rank = ceil(ppm * n / PPM) without floating point (0.999 * 1000 is
	 * not 999 in binary) and without overflowing ppm * n.
	 */
	ppm = (uint64_t)(pct * 10000.0 + 0.5);
	rank = ppm * (n / PPM) + (ppm * (n % PPM) + PPM - 1) / PPM;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

void netlat_dist_compute(uint64_t *v, size_t n, struct netlat_dist *d)
{
	long double sum = 0;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (n == 0)
		return;
	netlat_sort_u64(v, n);
	for (i = 0; i < n; i++)
		sum += v[i];
	d->count = n;
	d->min = v[0];
	d->p50 = netlat_percentile(v, n, 50);
	d->p90 = netlat_percentile(v, n, 90);
	d->p99 = netlat_percentile(v, n, 99);
	d->p999 = netlat_percentile(v, n, 99.9);
	d->max = v[n - 1];
	d->mean = (double)(sum / n);
}

/* ==== time =============================================================== */

uint64_t netlat_wall_ns(const struct netlat_rec_stream *stream, uint64_t ts_ns)
{
	/* Unsigned wrap-around gives the right answer for ts before mono_ns. */
	return stream->realtime_ns + (ts_ns - stream->mono_ns);
}

int netlat_format_time(char *buf, size_t len, uint64_t wall_ns, unsigned int flags)
{
	const char *fmt = flags & NETLAT_TIME_DATE ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S";
	time_t secs = (time_t)(wall_ns / 1000000000ULL);
	unsigned int ns = (unsigned int)(wall_ns % 1000000000ULL);
	char date[64];
	struct tm tm;
	bool ok;

	ok = flags & NETLAT_TIME_UTC ? gmtime_r(&secs, &tm) != NULL
				     : localtime_r(&secs, &tm) != NULL;
	if (!ok || !strftime(date, sizeof(date), fmt, &tm))
		return snprintf(buf, len, "%llu.%09u", (unsigned long long)secs, ns);
	return snprintf(buf, len, "%s.%09u", date, ns);
}

/* ==== the packet level's records and stages ============================ */

const struct netlat_rec_tcp_pkt *netlat_pkt_rec(const struct netlat_rec_hdr *h,
						struct netlat_rec_tcp_pkt *buf)
{
	if (h->type != NETLAT_REC_TCP_PKT || h->size < NETLAT_REC_TCP_PKT_SIZE_VER0)
		return NULL;
	memset(buf, 0, sizeof(*buf));
	memcpy(buf, h, h->size < sizeof(*buf) ? h->size : sizeof(*buf));
	return buf;
}

const char *netlat_stage_name(unsigned int stage)
{
	static const char *const names[NETLAT_NR_STAGES] = {
#define STAGE_NAME(NAME, name, rec, from, to)	[NETLAT_STAGE_##NAME] = name,
		NETLAT_STAGES(STAGE_NAME)
#undef STAGE_NAME
	};

	return stage < NETLAT_NR_STAGES ? names[stage] : NULL;
}

/* A case of a stage of record @rec's reader, none of the other's. */
#define STAGE_CASE_tcp_pkt_tcp_pkt(NAME, from_, to_)			\
	case NETLAT_STAGE_##NAME: *from = p->from_, *to = p->to_; break;
#define STAGE_CASE_rx_pkt_rx_pkt(NAME, from_, to_)			\
	case NETLAT_STAGE_##NAME: *from = p->from_, *to = p->to_; break;
#define STAGE_CASE_tcp_pkt_rx_pkt(NAME, from_, to_)
#define STAGE_CASE_rx_pkt_tcp_pkt(NAME, from_, to_)
#define STAGE_CASE_tcp_pkt(NAME, name, rec, from_, to_)			\
	STAGE_CASE_tcp_pkt_##rec(NAME, from_, to_)
#define STAGE_CASE_rx_pkt(NAME, name, rec, from_, to_)			\
	STAGE_CASE_rx_pkt_##rec(NAME, from_, to_)

bool netlat_pkt_stage(const struct netlat_rec_tcp_pkt *p, unsigned int stage,
		      uint64_t *from, uint64_t *to)
{
	switch (stage) {
	NETLAT_STAGES(STAGE_CASE_tcp_pkt)
	default:
		return false;
	}
	/* what the kernel counts: ACKed packets, both points seen, in order */
	return (p->flags & NETLAT_PKT_ACKED) && *from && *to >= *from;
}

bool netlat_rx_pkt_stage(const struct netlat_rec_rx_pkt *p, unsigned int stage,
			 uint64_t *from, uint64_t *to)
{
	bool tcp = p->proto == NETLAT_RX_TCP;

	/*
	 * The protocol's own stages; a first-size record (an older module)
	 * has no wakeup fields, and is read in place: not past its size.
	 */
	if ((stage == NETLAT_STAGE_RX_NETIF_TCP && !tcp) ||
	    (stage == NETLAT_STAGE_RX_NETIF_UDP && tcp) ||
	    (stage == NETLAT_STAGE_RX_TCP_QUEUE && !tcp) ||
	    ((stage == NETLAT_STAGE_RX_READY_WAKEUP ||
	      stage == NETLAT_STAGE_RX_WAKEUP_RUN) && p->hdr.size < sizeof(*p)))
		return false;
	switch (stage) {
	NETLAT_STAGES(STAGE_CASE_rx_pkt)
	default:
		return false;
	}
	/* what the kernel counts: copied packets, both points seen, in order */
	return (p->flags & NETLAT_RXP_COPIED) && *from && *to >= *from;
}

uint64_t netlat_stage_quantile(const struct netlat_stage_hist *s, double q)
{
	uint64_t rank, seen = 0, lo, hi;
	unsigned int b;

	if (!s->count)
		return 0;
	rank = (uint64_t)(q * (double)(s->count - 1)) + 1;
	for (b = 0; b < NETLAT_HIST_BUCKETS; b++) {
		if (seen + s->bucket[b] < rank) {
			seen += s->bucket[b];
			continue;
		}
		if (!b)
			return 0;
		lo = 1ULL << (b - 1);
		hi = b == NETLAT_HIST_BUCKETS - 1 ? s->max_ns : (lo << 1) - 1;
		/* linear within the bucket, never past the largest sample */
		lo += (uint64_t)((double)(hi - lo) * (double)(rank - seen) /
				 (double)s->bucket[b]);
		return lo < s->max_ns ? lo : s->max_ns;
	}
	return s->max_ns;
}
