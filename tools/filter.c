// SPDX-License-Identifier: GPL-2.0
/* Reader-side record filters: see filter.h. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "filter.h"

#define NR_TYPES	65536	/* hdr.type is a __u16 */
#define NS		1000000000ULL
#define HALF_DAY_NS	(12 * 3600 * NS)
#define DAY_NS		(24 * 3600 * NS)

struct filter_kind {
	const char *option;	/* long option name */
	/* Fill in @t from @arg; false with the reason in @f->err. */
	bool (*parse)(struct filter *f, struct filter_term *t, const char *arg);
	/* True if @rec passes @t; never called for STREAM records. */
	bool (*match)(struct filter *f, struct filter_term *t,
		      const struct netlat_rec_stream *stream,
		      const struct netlat_rec_hdr *rec);
};

static bool bad(struct filter *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool bad(struct filter *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	return false;
}

static bool parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end && *out <= max;
}

/* ---- --type NAME[,NAME] ------------------------------------------------- */

/* A type name known to libnetlat (any case) or a number. */
static bool type_of(const char *name, unsigned int *type)
{
	uint64_t v;
	unsigned int t;

	if (parse_uint(name, NR_TYPES - 1, &v)) {
		*type = (unsigned int)v;
		return true;
	}
	for (t = 0; t < NR_TYPES; t++) {
		const char *known = netlat_type_name(t);

		if (known && !strcasecmp(known, name)) {
			*type = t;
			return true;
		}
	}
	return false;
}

static bool parse_type(struct filter *f, struct filter_term *t, const char *arg)
{
	char *list, *name, *save = NULL;
	unsigned char *set;
	unsigned int type;
	bool ok = true;

	set = t->data = calloc(NR_TYPES / 8, 1);
	list = strdup(arg);
	if (!set || !list) {
		free(list);
		return bad(f, "out of memory");
	}
	if (!*arg || arg[strlen(arg) - 1] == ',')
		ok = bad(f, "bad --type '%s': empty type name", arg);
	for (name = strtok_r(list, ",", &save); ok && name;
	     name = strtok_r(NULL, ",", &save)) {
		if (!type_of(name, &type))
			ok = bad(f, "bad --type '%s': unknown record type '%s' "
				 "(known: MARKER, LOST, STREAM, or a number)", arg, name);
		else
			set[type / 8] |= 1u << (type % 8);
	}
	free(list);
	return ok;
}

static bool match_type(struct filter *f, struct filter_term *t,
		       const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *rec)
{
	const unsigned char *set = t->data;

	(void)f;
	(void)stream;
	return set[rec->type / 8] & (1u << (rec->type % 8));
}

/* ---- --pid PID ---------------------------------------------------------- */

static bool parse_pid(struct filter *f, struct filter_term *t, const char *arg)
{
	if (!parse_uint(arg, UINT32_MAX, &t->value))
		return bad(f, "bad --pid '%s': expected a process id", arg);
	return true;
}

/*
 * The process and thread of a record, for the types that carry them.
 * New record types with a pid add a case here.
 */
static bool record_pid(const struct netlat_rec_hdr *rec, uint32_t *pid, uint32_t *tid)
{
	if (rec->type == NETLAT_REC_MARKER) {
		const struct netlat_rec_marker *m = (const void *)rec;

		*pid = m->pid;
		*tid = m->tid;
		return true;
	}
	return false;
}

static bool match_pid(struct filter *f, struct filter_term *t,
		      const struct netlat_rec_stream *stream,
		      const struct netlat_rec_hdr *rec)
{
	uint32_t pid, tid;

	(void)f;
	(void)stream;
	return record_pid(rec, &pid, &tid) && (pid == t->value || tid == t->value);
}

/* ---- --cpu N ------------------------------------------------------------ */

static bool parse_cpu(struct filter *f, struct filter_term *t, const char *arg)
{
	if (!parse_uint(arg, UINT16_MAX, &t->value))
		return bad(f, "bad --cpu '%s': expected a CPU number", arg);
	return true;
}

static bool match_cpu(struct filter *f, struct filter_term *t,
		      const struct netlat_rec_stream *stream,
		      const struct netlat_rec_hdr *rec)
{
	(void)f;
	(void)stream;
	return rec->cpu == t->value;
}

/* ---- --since / --until -------------------------------------------------- */

/* SECONDS (from the first record) or HH:MM:SS[.frac] (local time of day). */
static bool parse_time(struct filter *f, struct filter_term *t, const char *arg)
{
	unsigned int h, m, s;
	int n = 0;
	double v;
	char *end;

	if (sscanf(arg, "%2u:%2u:%2u%n", &h, &m, &s, &n) == 3 && n == 8 &&
	    arg[2] == ':' && arg[5] == ':') {
		double frac = 0;

		if (arg[8]) {
			errno = 0;
			frac = strtod(arg + 8, &end);
			if (arg[8] != '.' || errno || *end || !(frac >= 0 && frac < 1))
				goto fail;
		}
		if (h > 23 || m > 59 || s > 59)
			goto fail;
		t->wall = true;
		t->value = ((uint64_t)h * 3600 + m * 60 + s) * NS + (uint64_t)(frac * 1e9);
		return true;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (end != arg && !*end && !errno && isfinite(v) && v >= 0 && v < 1e9 &&
	    (*arg >= '0' && *arg <= '9')) {
		t->value = (uint64_t)(v * 1e9 + 0.5);
		return true;
	}
fail:
	return bad(f, "bad --%s '%s': expected SECONDS from the first record or "
		   "a time of day HH:MM:SS[.frac]", t->kind->option, arg);
}

/*
 * The instant of a time of day: the one within twelve hours of the first
 * record, in local time (what "netlat tail" prints).
 */
static uint64_t resolve_wall(uint64_t first_wall, uint64_t tod_ns)
{
	time_t secs = (time_t)(first_wall / NS);
	struct tm tm;
	uint64_t midnight, at;

	localtime_r(&secs, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	midnight = (uint64_t)mktime(&tm) * NS;
	at = midnight + tod_ns;
	if (at + HALF_DAY_NS < first_wall)
		at += DAY_NS;
	else if (at >= first_wall + HALF_DAY_NS)
		at -= DAY_NS;
	return at;
}

/* Where @rec is on the term's scale: ns from the first record, or wall ns. */
static int64_t time_diff(struct filter *f, struct filter_term *t,
			 const struct netlat_rec_stream *stream,
			 const struct netlat_rec_hdr *rec)
{
	if (!t->wall)
		return (int64_t)(rec->ts_ns - f->first_ts) - (int64_t)t->value;
	if (!t->resolved)
		t->resolved = resolve_wall(f->first_wall, t->value);
	return (int64_t)(netlat_wall_ns(stream, rec->ts_ns) - t->resolved);
}

static bool match_since(struct filter *f, struct filter_term *t,
			const struct netlat_rec_stream *stream,
			const struct netlat_rec_hdr *rec)
{
	return time_diff(f, t, stream, rec) >= 0;
}

static bool match_until(struct filter *f, struct filter_term *t,
			const struct netlat_rec_stream *stream,
			const struct netlat_rec_hdr *rec)
{
	return time_diff(f, t, stream, rec) < 0;
}

/* ---- the table ---------------------------------------------------------- */

static const struct filter_kind kinds[] = {
	{ "type", parse_type, match_type },
	{ "pid", parse_pid, match_pid },
	{ "cpu", parse_cpu, match_cpu },
	{ "since", parse_time, match_since },
	{ "until", parse_time, match_until },
};

#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Relative --since must come before relative --until (times of day may wrap). */
static bool check_window(struct filter *f)
{
	const struct filter_term *since = NULL, *until = NULL;
	unsigned int i;

	for (i = 0; i < f->nr_terms; i++) {
		if (f->terms[i].kind->match == match_since)
			since = &f->terms[i];
		else if (f->terms[i].kind->match == match_until)
			until = &f->terms[i];
	}
	if (since && until && !since->wall && !until->wall &&
	    since->value >= until->value)
		return bad(f, "empty time window: --since must be before --until");
	return true;
}

const struct option *filter_options(const struct option *own)
{
	static struct option opts[64];
	size_t n = 0, i;

	while (own[n].name && n < sizeof(opts) / sizeof(opts[0]) - NR_KINDS - 1) {
		opts[n] = own[n];
		n++;
	}
	for (i = 0; i < NR_KINDS; i++)
		opts[n++] = (struct option){ kinds[i].option, required_argument,
					     NULL, FILTER_OPT_BASE + (int)i };
	opts[n] = (struct option){ 0 };
	return opts;
}

int filter_parse(struct filter *f, int opt, const char *arg)
{
	const struct filter_kind *kind;
	struct filter_term *t;
	unsigned int i;

	if (opt < FILTER_OPT_BASE || opt >= FILTER_OPT_BASE + (int)NR_KINDS)
		return 0;
	kind = &kinds[opt - FILTER_OPT_BASE];
	for (i = 0; i < f->nr_terms; i++) {
		if (f->terms[i].kind == kind) {
			bad(f, "--%s given twice", kind->option);
			return -1;
		}
	}
	if (f->nr_terms == FILTER_MAX_TERMS) {
		bad(f, "too many filters");
		return -1;
	}
	t = &f->terms[f->nr_terms++];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	if (!kind->parse(f, t, arg) || !check_window(f))
		return -1;
	return 1;
}

bool filter_active(const struct filter *f)
{
	return f->nr_terms > 0;
}

bool filter_match(struct filter *f, const struct netlat_rec_stream *stream,
		  const struct netlat_rec_hdr *rec)
{
	unsigned int i;

	if (rec->type == NETLAT_REC_STREAM)
		return true;
	if (!f->have_first) {
		f->have_first = true;
		f->first_ts = rec->ts_ns;
		f->first_wall = netlat_wall_ns(stream, rec->ts_ns);
	}
	for (i = 0; i < f->nr_terms; i++)
		if (!f->terms[i].kind->match(f, &f->terms[i], stream, rec))
			return false;
	f->matched++;
	return true;
}

void filter_free(struct filter *f)
{
	unsigned int i;

	for (i = 0; i < f->nr_terms; i++) {
		free(f->terms[i].data);
		f->terms[i].data = NULL;
	}
	f->nr_terms = 0;
}
