/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log2 histograms of nanosecond samples, drawn in the terminal in the
 * style of bpftrace's hist(): bucket 0 holds 0, bucket k >= 1 holds
 * [2^(k-1), 2^k).
 */
#ifndef NETLAT_HIST_H
#define NETLAT_HIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HIST_BUCKETS	65
#define HIST_WIDTH	40	/* characters of the longest bar */

struct hist {
	uint64_t count[HIST_BUCKETS];
};

unsigned int hist_bucket(uint64_t v);
/* The bucket's range [*lo, *hi); *hi is 0 for the last (2^64). */
void hist_range(unsigned int k, uint64_t *lo, uint64_t *hi);

/* A bucket bound as bpftrace prints it: 512, 8K, 16M; @end: 0 means 2^64. */
void hist_label(char *buf, size_t len, uint64_t v, int end);

void hist_compute(struct hist *h, const uint64_t *v, size_t n);

/* "[8K, 16K)   1234 |#########     |" lines, empty buckets inside only. */
void hist_print_text(FILE *f, const struct hist *h);

/* [{"from":8192,"to":16384,"count":1234},...], the same buckets. */
void hist_print_json(FILE *f, const struct hist *h);

#endif
