// SPDX-License-Identifier: GPL-2.0
/* log2 histograms: see hist.h. */
#include <string.h>

#include "hist.h"

unsigned int hist_bucket(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

void hist_range(unsigned int k, uint64_t *lo, uint64_t *hi)
{
	*lo = k ? 1ULL << (k - 1) : 0;
	*hi = k < 64 ? 1ULL << k : 0;
}

void hist_compute(struct hist *h, const uint64_t *v, size_t n)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < n; i++)
		h->count[hist_bucket(v[i])]++;
}

/* The first and last non-empty buckets; false if all are empty. */
static int span(const struct hist *h, unsigned int *first, unsigned int *last)
{
	unsigned int k;

	for (k = 0; k < HIST_BUCKETS && !h->count[k]; k++)
		;
	if (k == HIST_BUCKETS)
		return 0;
	*first = k;
	for (k = HIST_BUCKETS - 1; !h->count[k]; k--)
		;
	*last = k;
	return 1;
}

void hist_label(char *buf, size_t len, uint64_t v, int end)
{
	static const char suffix[] = " KMGTPE";
	unsigned int s = 0;

	if (end && !v) {		/* 2^64 */
		snprintf(buf, len, "16E");
		return;
	}
	while (v >= 1024 && s < sizeof(suffix) - 2) {
		v /= 1024;
		s++;
	}
	if (s)
		snprintf(buf, len, "%llu%c", (unsigned long long)v, suffix[s]);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void put_bar(FILE *f, unsigned int bar)
{
	unsigned int i;

	fputc('|', f);
	for (i = 0; i < HIST_WIDTH; i++)
		fputc(i < bar ? '#' : ' ', f);
	fputs("|\n", f);
}

void hist_print_text(FILE *f, const struct hist *h)
{
	unsigned int first, last, k;
	uint64_t max = 0, lo, hi;
	char a[24], b[24], range[56];

	if (!span(h, &first, &last))
		return;
	for (k = first; k <= last; k++)
		if (h->count[k] > max)
			max = h->count[k];
	for (k = first; k <= last; k++) {
		unsigned int bar = (unsigned int)(h->count[k] * HIST_WIDTH / max);

		hist_range(k, &lo, &hi);
		hist_label(a, sizeof(a), lo, 0);
		hist_label(b, sizeof(b), hi, 1);
		snprintf(range, sizeof(range), "[%s, %s)", a, b);
		fprintf(f, "  %-14s %10llu ", range, (unsigned long long)h->count[k]);
		put_bar(f, bar);
	}
}

void hist_print_json(FILE *f, const struct hist *h)
{
	unsigned int first, last, k;
	uint64_t lo, hi;

	fputc('[', f);
	if (span(h, &first, &last)) {
		for (k = first; k <= last; k++) {
			hist_range(k, &lo, &hi);
			fprintf(f, "%s{\"from\":%llu,\"to\":", k == first ? "" : ",",
				(unsigned long long)lo);
			if (hi)
				fprintf(f, "%llu", (unsigned long long)hi);
			else
				fputs("18446744073709551616", f);
			fprintf(f, ",\"count\":%llu}", (unsigned long long)h->count[k]);
		}
	}
	fputc(']', f);
}
