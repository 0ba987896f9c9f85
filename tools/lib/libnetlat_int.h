/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* libnetlat internals shared by its source files; not installed. */
#ifndef LIBNETLAT_INT_H
#define LIBNETLAT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct netlat_source;

/* write() all @len bytes, retrying after signals: 0 or -errno. */
int netlat__write_all(int fd, const void *p, size_t len);
/* @src's final error @err, its message from @fmt: returns -@err. */
int netlat__fail(struct netlat_source *src, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* @buf (NETLAT_ERRBUF_SIZE): why @path (a device) failed with @err. */
void netlat__format_dev_error(char *buf, const char *path, int err);
/* A whole record is buffered: netlat_next() will not read(). */
bool netlat__record_buffered(const struct netlat_source *src);

/* realloc() *@p (of *@cap elements of @size) to hold @need: 0 or -ENOMEM. */
int netlat__grow(void **p, size_t *cap, size_t need, size_t size);

/*
 * libnetlat_clock.c: B's clock against A's from causality bounds alone,
 * the estimator under netlat_join. A sample says theta(@x) <= @y
 * (@upper: a packet from A to B) or theta(@x) >= @y (from B to A), theta
 * being clock_B - clock_A at A's time @x. The estimate sets @bad on the
 * samples it leaves out as contradicting the rest.
 */
struct netlat__sample {
	int64_t x, y;
	bool upper, bad;
};

struct netlat__clock;
struct netlat_clock_est;

struct netlat__clock *netlat__clock_new(uint64_t window_ns, double max_drift_ppm,
					int64_t asym_ns);
void netlat__clock_free(struct netlat__clock *c);
/* Windows over @smp[0..n) (kept, not copied, until the next call): 0 or -ENOMEM. */
int netlat__clock_estimate(struct netlat__clock *c, struct netlat__sample *smp, size_t n);
void netlat__clock_whole(const struct netlat__clock *c, struct netlat_clock_est *est);
size_t netlat__clock_windows(const struct netlat__clock *c,
			     const struct netlat_clock_est **windows);
/* theta's bounds at A's time @t_ns from its window: false if it has none. */
bool netlat__clock_at(const struct netlat__clock *c, uint64_t t_ns, int64_t *lo_ns,
		      int64_t *hi_ns);

#endif
