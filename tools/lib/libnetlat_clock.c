// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat: B's clock against A's, bounded from causality alone (the
 * estimator under netlat_join; Documentation/join.rst).
 *
 * Each sample says theta(x) <= y (a packet from A to B cannot arrive
 * before it left) or theta(x) >= y (one from B to A). With theta(t) =
 * a + b (t - centre) in a window, each is a half-plane of (a, b); their
 * intersection is a convex polygon, clipped one sample at a time from a
 * box of the offsets and drifts considered. The bound at a time is the
 * range of theta over the polygon's vertices, exact for that model.
 */
#define _GNU_SOURCE	/* qsort_r */
#include "libnetlat.h"
#include "libnetlat_int.h"

#include <errno.h>
#include <math.h>	/* INFINITY only: no libm for the library's users */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An unbounded offset reaches this (ns, after centring): a box edge. */
#define OFFSET_BOX		1e12L
/* Constraints hold to within this (ns): the stamps are integers. */
#define EPS			1e-3L
/* Samples left out of a window before it is split instead. */
#define MAX_REMOVALS		4
/* Hull vertices tried as the one sample that contradicts the rest. */
#define MAX_CANDIDATES		128

/* theta(t) = a + b (t - centre) + shift: the window's solution set. */
struct jpoly {
	long double (*v)[2];
	size_t n, cap;
};

struct jwindow {
	struct netlat_clock_est est;
	struct jpoly poly;
	int64_t centre, shift;
	bool ok;
};

struct netlat__clock {
	uint64_t window_ns;
	double max_drift_ppm;
	int64_t asym_ns;
	struct netlat__sample *smp;	/* the caller's */
	size_t nsmp;
	struct jwindow *win;
	size_t nwin, cwin;
	struct netlat_clock_est *ests;
	struct jwindow global;
};

int netlat__grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t cap2;
	void *q;

	if (need <= *cap)
		return 0;
	cap2 = *cap ? *cap * 2 : 64;
	while (cap2 < need)
		cap2 *= 2;
	q = realloc(*p, cap2 * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = cap2;
	return 0;
}

static long double absl(long double v)
{
	return v < 0 ? -v : v;
}

static int64_t floor_ns(long double v)
{
	int64_t t = (int64_t)v;

	return (long double)t > v ? t - 1 : t;
}

static int64_t ceil_ns(long double v)
{
	int64_t t = (int64_t)v;

	return (long double)t < v ? t + 1 : t;
}

/*
 * Keep the part of polygon @p where al a + be b <= ga: one edge of a
 * convex polygon, so at most one vertex more. 0 or -ENOMEM.
 */
static int clip(struct jpoly *p, long double al, long double be, long double ga,
		struct jpoly *tmp)
{
	size_t i;

	tmp->n = 0;
	if (netlat__grow((void **)&tmp->v, &tmp->cap, p->n + 1, sizeof(*tmp->v)))
		return -ENOMEM;
	for (i = 0; i < p->n; i++) {
		const long double *u = p->v[i], *w = p->v[(i + 1) % p->n];
		long double fu = al * u[0] + be * u[1] - ga;
		long double fw = al * w[0] + be * w[1] - ga;

		if (fu <= EPS) {
			tmp->v[tmp->n][0] = u[0];
			tmp->v[tmp->n][1] = u[1];
			tmp->n++;
		}
		if ((fu < -EPS && fw > EPS) || (fu > EPS && fw < -EPS)) {
			long double r = fu / (fu - fw);

			tmp->v[tmp->n][0] = u[0] + r * (w[0] - u[0]);
			tmp->v[tmp->n][1] = u[1] + r * (w[1] - u[1]);
			tmp->n++;
		}
	}
	/* swap the buffers: @p holds the result */
	{
		struct jpoly t = *p;

		*p = *tmp;
		*tmp = t;
	}
	return 0;
}

/* The box every solution lies in: |a| <= OFFSET_BOX, |b| <= the drift limit. */
static int poly_box(struct jpoly *p, long double bmax)
{
	p->n = 0;
	if (netlat__grow((void **)&p->v, &p->cap, 4, sizeof(*p->v)))
		return -ENOMEM;
	p->v[0][0] = -OFFSET_BOX; p->v[0][1] = -bmax;
	p->v[1][0] = OFFSET_BOX;  p->v[1][1] = -bmax;
	p->v[2][0] = OFFSET_BOX;  p->v[2][1] = bmax;
	p->v[3][0] = -OFFSET_BOX; p->v[3][1] = bmax;
	p->n = 4;
	return 0;
}

/* Samples @idx[0..n) on window @w's polygon; -ENOMEM, else 0 (empty: none fits). */
static int solve(struct netlat__clock *c, struct jwindow *w, const size_t *idx, size_t n,
		 struct jpoly *tmp)
{
	long double bmax = c->max_drift_ppm / 1e6L;
	size_t i;

	if (poly_box(&w->poly, bmax))
		return -ENOMEM;
	for (i = 0; i < n && w->poly.n; i++) {
		const struct netlat__sample *s = &c->smp[idx[i]];
		long double u = (long double)(s->x - w->centre);
		long double y = (long double)(s->y - w->shift);

		if (s->bad)
			continue;
		if (s->upper ? clip(&w->poly, 1, u, y, tmp) : clip(&w->poly, -1, -u, -y, tmp))
			return -ENOMEM;
	}
	return 0;
}

/* The range of theta at @t over window @w's polygon (w->poly.n > 0). */
static void poly_range(const struct jwindow *w, int64_t t, int64_t *lo, int64_t *hi)
{
	long double u = (long double)(t - w->centre), mn = INFINITY, mx = -INFINITY;
	bool open_lo = false, open_hi = false;
	size_t i;

	for (i = 0; i < w->poly.n; i++) {
		long double a = w->poly.v[i][0], v = a + w->poly.v[i][1] * u;

		if (v < mn) {
			mn = v;
			open_lo = a <= -OFFSET_BOX * 0.999L;
		}
		if (v > mx) {
			mx = v;
			open_hi = a >= OFFSET_BOX * 0.999L;
		}
	}
	*lo = open_lo ? INT64_MIN : w->shift + floor_ns(mn);
	*hi = open_hi ? INT64_MAX : w->shift + ceil_ns(mx);
}

/* @w's estimate from its polygon, over [from, to). */
static void describe(const struct netlat__clock *c, struct jwindow *w, uint64_t from,
		     uint64_t to, size_t nab, size_t nba)
{
	struct netlat_clock_est *e = &w->est;
	long double bmin = INFINITY, bmaxv = -INFINITY, lim = c->max_drift_ppm / 1e6L;
	size_t i;

	memset(e, 0, sizeof(*e));
	e->from_ns = from;
	e->to_ns = to;
	e->at_ns = w->centre;
	e->samples_ab = nab;
	e->samples_ba = nba;
	if (!nab)
		e->flags |= NETLAT_CLOCK_NO_UPPER;
	if (!nba)
		e->flags |= NETLAT_CLOCK_NO_LOWER;
	w->ok = w->poly.n > 0;
	if (!w->ok) {
		e->flags |= NETLAT_CLOCK_NONE;
		e->lo_ns = INT64_MIN;
		e->hi_ns = INT64_MAX;
		return;
	}
	poly_range(w, w->centre, &e->lo_ns, &e->hi_ns);
	for (i = 0; i < w->poly.n; i++) {
		if (w->poly.v[i][1] < bmin)
			bmin = w->poly.v[i][1];
		if (w->poly.v[i][1] > bmaxv)
			bmaxv = w->poly.v[i][1];
	}
	e->drift_lo_ppm = (double)(bmin * 1e6L);
	e->drift_hi_ppm = (double)(bmaxv * 1e6L);
	e->drift_ppm = (e->drift_lo_ppm + e->drift_hi_ppm) / 2;
	if (lim > 0 && (bmin <= -lim * 0.999L || bmaxv >= lim * 0.999L))
		e->flags |= NETLAT_CLOCK_DRIFT_AT_LIMIT;
	if (e->lo_ns == INT64_MIN || e->hi_ns == INT64_MAX)
		e->offset_ns = e->lo_ns == INT64_MIN ? e->hi_ns : e->lo_ns;
	else
		e->offset_ns = e->lo_ns + (e->hi_ns - e->lo_ns) / 2 - c->asym_ns / 2;
}

/* A rough offset to centre the numbers on: the middle of the two extremes. */
static int64_t centre_shift(const struct netlat__clock *c, const size_t *idx, size_t n)
{
	int64_t up = INT64_MAX, low = INT64_MIN;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct netlat__sample *s = &c->smp[idx[i]];

		if (s->bad)
			continue;
		if (s->upper && s->y < up)
			up = s->y;
		if (!s->upper && s->y > low)
			low = s->y;
	}
	if (up == INT64_MAX)
		return low == INT64_MIN ? 0 : low;
	if (low == INT64_MIN)
		return up;
	return low / 2 + up / 2;
}

static int cmp_x(const void *a, const void *b, void *arg)
{
	const struct netlat__clock *c = arg;
	const struct netlat__sample *x = &c->smp[*(const size_t *)a];
	const struct netlat__sample *y = &c->smp[*(const size_t *)b];

	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	return x->y < y->y ? -1 : x->y > y->y;
}

static long double cross(const struct netlat__sample *o, const struct netlat__sample *a,
			 const struct netlat__sample *b)
{
	return (long double)(a->x - o->x) * (long double)(b->y - o->y) -
	       (long double)(a->y - o->y) * (long double)(b->x - o->x);
}

/*
 * The hull vertices of one side (sorted by x): the lower hull of the
 * upper bounds, the upper hull of the lower ones, leaving out @skip. Only
 * they shape the polygon. The count, into @out.
 */
static size_t hull(const struct netlat__clock *c, const size_t *idx, size_t n, bool upper,
		   size_t skip, size_t *out)
{
	size_t m = 0, i;

	for (i = 0; i < n; i++) {
		const struct netlat__sample *s = &c->smp[idx[i]];

		if (s->bad || s->upper != upper || idx[i] == skip)
			continue;
		while (m >= 2) {
			long double turn = cross(&c->smp[out[m - 2]], &c->smp[out[m - 1]], s);

			if (upper ? turn <= 0 : turn >= 0)
				m--;
			else
				break;
		}
		out[m++] = idx[i];
	}
	return m;
}

/* Two samples that cannot both hold with any drift within the limit. */
static bool conflict(const struct netlat__sample *up, const struct netlat__sample *low, long double bmax)
{
	long double dx = absl((long double)(up->x - low->x));

	return (long double)up->y + bmax * dx < (long double)low->y - EPS;
}

/*
 * A window with no solution: find the one pair whose removal gives one,
 * among the hull vertices; if several do, the one that conflicts with the
 * most vertices of the other side (a forged or misjoined pair sticks out
 * of its direction's floor). Marks it bad: true, else false.
 */
static int drop_one(struct netlat__clock *c, struct jwindow *w, const size_t *idx, size_t n,
		    size_t *hu, size_t *hl, size_t *h2, struct jpoly *tmp)
{
	long double bmax = c->max_drift_ppm / 1e6L;
	size_t nu = hull(c, idx, n, true, SIZE_MAX, hu);
	size_t nl = hull(c, idx, n, false, SIZE_MAX, hl);
	size_t best = SIZE_MAX, best_score = 0, v, k;

	if (nu + nl > MAX_CANDIDATES)
		return 0;
	for (v = 0; v < nu + nl; v++) {
		bool up = v < nu;
		size_t cand = up ? hu[v] : hl[v - nu], m, score = 0;
		int r;

		m = hull(c, idx, n, up, cand, h2);
		/* feasibility on the hulls: the changed side and the other */
		if (up) {
			memcpy(h2 + m, hl, nl * sizeof(*hl));
			m += nl;
		} else {
			memcpy(h2 + m, hu, nu * sizeof(*hu));
			m += nu;
		}
		r = solve(c, w, h2, m, tmp);
		if (r)
			return r;
		if (!w->poly.n)
			continue;
		for (k = 0; k < (up ? nl : nu); k++)
			score += up ? conflict(&c->smp[cand], &c->smp[hl[k]], bmax)
				    : conflict(&c->smp[hu[k]], &c->smp[cand], bmax);
		if (best == SIZE_MAX || score > best_score) {
			best = cand;
			best_score = score;
		}
	}
	if (best == SIZE_MAX)
		return 0;
	c->smp[best].bad = true;
	return 1;
}

/*
 * Solve window @w over samples @idx[0..n) (sorted by x): leave out up to
 * MAX_REMOVALS pairs that contradict the rest; the count left out, or
 * -ENOMEM. The polygon is empty if that was not enough.
 */
static int solve_window(struct netlat__clock *c, struct jwindow *w, size_t *idx, size_t n,
			size_t *scratch, struct jpoly *tmp)
{
	size_t *hu = scratch, *hl = scratch + n, *h2 = scratch + 2 * n;
	int removed = 0, r;

	w->shift = centre_shift(c, idx, n);
	for (;;) {
		r = solve(c, w, idx, n, tmp);
		if (r)
			return r;
		if (w->poly.n || removed == MAX_REMOVALS)
			return removed;
		r = drop_one(c, w, idx, n, hu, hl, h2, tmp);
		if (r < 0)
			return r;
		if (!r) {
			solve(c, w, idx, n, tmp);
			return removed;
		}
		removed++;
	}
}

static void unmark(struct netlat__clock *c, const size_t *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		c->smp[idx[i]].bad = false;
}

static int push_window(struct netlat__clock *c, struct jwindow *w)
{
	if (netlat__grow((void **)&c->win, &c->cwin, c->nwin + 1, sizeof(*c->win)))
		return -ENOMEM;
	c->win[c->nwin++] = *w;
	memset(w, 0, sizeof(*w));
	return 0;
}

static void side_counts(const struct netlat__clock *c, const size_t *idx, size_t n,
			size_t *nab, size_t *nba, size_t *bad)
{
	size_t i;

	*nab = *nba = *bad = 0;
	for (i = 0; i < n; i++) {
		const struct netlat__sample *s = &c->smp[idx[i]];

		if (s->bad)
			(*bad)++;
		else if (s->upper)
			(*nab)++;
		else
			(*nba)++;
	}
}

/*
 * The window [from, to) over its samples @idx[0..n): solved whole if a
 * clock fits after leaving out at most MAX_REMOVALS pairs, else split in
 * two halves down to a tenth of the window: a step ends in a window of
 * its own, which gets no clock.
 */
static int window(struct netlat__clock *c, uint64_t from, uint64_t to, size_t *idx, size_t n,
		  size_t *scratch, struct jpoly *tmp)
{
	struct jwindow w = { 0 };
	size_t nab, nba, bad, half;
	uint64_t mid;
	int r;

	if (!n)
		return 0;
	w.centre = from + (to - from) / 2;
	r = solve_window(c, &w, idx, n, scratch, tmp);
	if (r < 0)
		goto err;
	if (!w.poly.n && to - from > c->window_ns / 10 && n >= 4) {
		unmark(c, idx, n);
		free(w.poly.v);
		mid = from + (to - from) / 2;
		for (half = 0; half < n && (uint64_t)c->smp[idx[half]].x < mid; half++)
			;
		r = window(c, from, mid, idx, half, scratch, tmp);
		if (!r)
			r = window(c, mid, to, idx + half, n - half, scratch, tmp);
		return r;
	}
	/* no clock here: its pairs get none, rather than be called impossible */
	if (!w.poly.n)
		unmark(c, idx, n);
	side_counts(c, idx, n, &nab, &nba, &bad);
	describe(c, &w, from, to, nab, nba);
	w.est.impossible = bad;
	r = push_window(c, &w);
	if (!r)
		return 0;
err:
	free(w.poly.v);
	return -ENOMEM;
}

/* The window holding A's time @t, or NULL. */
static const struct jwindow *window_at(const struct netlat__clock *c, uint64_t t)
{
	size_t lo = 0, hi = c->nwin;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->win[mid].est.to_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nwin || c->win[lo].est.from_ns > t)
		return NULL;
	return &c->win[lo];
}

/*
 * A window whose clock and the last one's before it (across any windows
 * without a clock between them: a step leaves the window it falls in
 * with none) cannot meet in the middle of the gap: no one line joins
 * them, so the clock stepped (or its drift changed) there.
 */
static void mark_steps(struct netlat__clock *c)
{
	struct jwindow *p = NULL;
	size_t i;

	for (i = 0; i < c->nwin; i++) {
		struct jwindow *w = &c->win[i];
		int64_t plo, phi, lo, hi;
		uint64_t at;

		if (!w->ok)
			continue;
		if (p) {
			at = p->est.to_ns + (w->est.from_ns - p->est.to_ns) / 2;
			poly_range(p, at, &plo, &phi);
			poly_range(w, at, &lo, &hi);
			if (hi < plo || lo > phi)
				w->est.flags |= NETLAT_CLOCK_STEP;
		}
		p = w;
	}
}

/* Windows of at least window_ns, each with both directions where it can. */
static int estimate(struct netlat__clock *c)
{
	size_t *idx, *scratch, i, start, nab = 0, nba = 0, bad = 0;
	struct jpoly tmp = { 0 };
	uint64_t from;
	int r = -ENOMEM;

	idx = malloc((c->nsmp + 1) * sizeof(*idx));
	scratch = malloc((3 * c->nsmp + 1) * sizeof(*scratch));
	if (!idx || !scratch)
		goto out;
	for (i = 0; i < c->nsmp; i++)
		idx[i] = i;
	qsort_r(idx, c->nsmp, sizeof(*idx), cmp_x, c);
	r = 0;
	for (start = 0; start < c->nsmp && !r; ) {
		bool ab = false, ba = false;
		uint64_t to;
		size_t end;

		from = c->smp[idx[start]].x;
		to = from + c->window_ns;
		for (end = start; end < c->nsmp; end++) {
			const struct netlat__sample *s = &c->smp[idx[end]];

			if ((uint64_t)s->x >= to && ab && ba)
				break;
			ab |= s->upper;
			ba |= !s->upper;
		}
		/* samples of one time (a GSO send's pairs) stay in one window */
		while (end > start && end < c->nsmp && c->smp[idx[end]].x == c->smp[idx[end - 1]].x)
			end++;
		/* a short tail joins this window rather than stand alone */
		if (end < c->nsmp &&
		    (uint64_t)c->smp[idx[c->nsmp - 1]].x < (uint64_t)c->smp[idx[end]].x + c->window_ns / 2)
			end = c->nsmp;
		to = end < c->nsmp ? (uint64_t)c->smp[idx[end]].x
				   : (uint64_t)c->smp[idx[end - 1]].x + 1;
		r = window(c, from, to, idx + start, end - start, scratch, &tmp);
		start = end;
	}
	if (r)
		goto out;
	mark_steps(c);
	/* the whole capture as one line, without the pairs the windows left out */
	if (c->nsmp) {
		from = c->smp[idx[0]].x;
		c->global.centre = from + (c->smp[idx[c->nsmp - 1]].x - from) / 2;
		c->global.shift = centre_shift(c, idx, c->nsmp);
		r = solve(c, &c->global, idx, c->nsmp, &tmp);
		if (r)
			goto out;
		side_counts(c, idx, c->nsmp, &nab, &nba, &bad);
		describe(c, &c->global, from, c->smp[idx[c->nsmp - 1]].x + 1, nab, nba);
		c->global.est.impossible = bad;
	} else {
		describe(c, &c->global, 0, 0, 0, 0);
	}
out:
	free(tmp.v);
	free(idx);
	free(scratch);
	return r;
}

struct netlat__clock *netlat__clock_new(uint64_t window_ns, double max_drift_ppm,
					int64_t asym_ns)
{
	struct netlat__clock *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->window_ns = window_ns;
	c->max_drift_ppm = max_drift_ppm;
	c->asym_ns = asym_ns;
	return c;
}

static void clear_windows(struct netlat__clock *c)
{
	size_t i;

	for (i = 0; i < c->nwin; i++)
		free(c->win[i].poly.v);
	c->nwin = 0;
	free(c->ests);
	c->ests = NULL;
}

void netlat__clock_free(struct netlat__clock *c)
{
	if (!c)
		return;
	clear_windows(c);
	free(c->win);
	free(c->global.poly.v);
	free(c);
}

int netlat__clock_estimate(struct netlat__clock *c, struct netlat__sample *smp, size_t n)
{
	size_t i;
	int r;

	clear_windows(c);
	c->smp = smp;
	c->nsmp = n;
	r = estimate(c);
	c->ests = calloc(c->nwin ? c->nwin : 1, sizeof(*c->ests));
	if (r || !c->ests)
		return -ENOMEM;
	for (i = 0; i < c->nwin; i++)
		c->ests[i] = c->win[i].est;
	return 0;
}

void netlat__clock_whole(const struct netlat__clock *c, struct netlat_clock_est *est)
{
	*est = c->global.est;
}

size_t netlat__clock_windows(const struct netlat__clock *c,
			     const struct netlat_clock_est **windows)
{
	*windows = c->ests;
	return c->nwin;
}

bool netlat__clock_at(const struct netlat__clock *c, uint64_t t_ns, int64_t *lo_ns,
		      int64_t *hi_ns)
{
	const struct jwindow *w = window_at(c, t_ns);

	if (!w || !w->ok)
		return false;
	poly_range(w, t_ns, lo_ns, hi_ns);
	return true;
}
