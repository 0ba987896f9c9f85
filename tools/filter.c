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
#include <arpa/inet.h>
#include <stddef.h>

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

/* ---- --port, --addr, --flow --------------------------------------------- */

/* One side of a flow: an address (with a prefix length) and/or a port. */
struct endpoint {
	bool has_addr, has_port;
	uint16_t family;		/* AF_INET, AF_INET6 */
	unsigned int prefix;		/* bits of addr that must match */
	uint8_t addr[16];
	uint16_t port;
};

/* Both sides for --flow; side[0] alone for --port and --addr. */
struct flow_spec {
	struct endpoint side[2];
	bool pair;
};

/*
 * The TCP flow a record carries, or NULL: every TCP and RX record, and
 * virtio records with NETLAT_VIRTIO_FLOW_VALID.
 */
static const struct netlat_flow *record_flow(const struct netlat_rec_hdr *rec)
{
	if ((netlat_rec_is_tcp(rec->type) || netlat_rec_is_rx(rec->type)) &&
	    rec->size >= sizeof(*rec) + sizeof(struct netlat_flow))
		return (const void *)(rec + 1);
	if (rec->type == NETLAT_REC_VIRTIO &&
	    rec->size >= offsetof(struct netlat_rec_virtio, flow) +
			 sizeof(struct netlat_flow) &&
	    (((const struct netlat_rec_virtio *)rec)->flags & NETLAT_VIRTIO_FLOW_VALID))
		return &((const struct netlat_rec_virtio *)rec)->flow;
	return NULL;
}

static bool parse_port_str(const char *s, uint16_t *port)
{
	uint64_t v;

	if (!parse_uint(s, UINT16_MAX, &v))
		return false;
	*port = (uint16_t)v;
	return true;
}

/* ADDR[/PREFIX], IPv4 or IPv6 (no brackets). */
static bool parse_addr_str(const char *s, struct endpoint *ep)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned int max;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	memset(ep->addr, 0, sizeof(ep->addr));
	if (inet_pton(AF_INET, buf, ep->addr) == 1)
		ep->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, ep->addr) == 1)
		ep->family = AF_INET6;
	else
		return false;
	max = ep->family == AF_INET ? 32 : 128;
	if (slash && !parse_uint(slash, max, &v))
		return false;
	ep->prefix = slash ? (unsigned int)v : max;
	ep->has_addr = true;
	return true;
}

/* ADDR:PORT or [ADDR6]:PORT (the address may carry a /prefix). */
static bool parse_endpoint(const char *s, struct endpoint *ep)
{
	char buf[INET6_ADDRSTRLEN + 16], *colon;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || close[1] != ':')
			return false;
		*close = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(buf, ':');
		if (!colon || strchr(buf, ':') != colon)
			return false;
		*colon = '\0';
	}
	ep->has_port = true;
	return parse_addr_str(buf[0] == '[' ? buf + 1 : buf, ep) &&
	       parse_port_str(colon + 1, &ep->port);
}

static struct flow_spec *new_spec(struct filter *f, struct filter_term *t)
{
	t->data = calloc(1, sizeof(struct flow_spec));
	if (!t->data)
		bad(f, "out of memory");
	return t->data;
}

static bool parse_port(struct filter *f, struct filter_term *t, const char *arg)
{
	struct flow_spec *fs = new_spec(f, t);

	if (!fs)
		return false;
	fs->side[0].has_port = true;
	if (!parse_port_str(arg, &fs->side[0].port))
		return bad(f, "bad --port '%s': expected a port number 0-65535", arg);
	return true;
}

static bool parse_addr(struct filter *f, struct filter_term *t, const char *arg)
{
	struct flow_spec *fs = new_spec(f, t);

	if (!fs)
		return false;
	if (!parse_addr_str(arg, &fs->side[0]))
		return bad(f, "bad --addr '%s': expected an IPv4 or IPv6 address, "
			   "optionally /PREFIX", arg);
	return true;
}

static bool parse_flow(struct filter *f, struct filter_term *t, const char *arg)
{
	struct flow_spec *fs = new_spec(f, t);
	const char *dash;
	char *first;
	bool ok;

	if (!fs)
		return false;
	/* IPv6 addresses hold no '-': the separator is the only one */
	dash = strchr(arg, '-');
	first = dash ? strndup(arg, (size_t)(dash - arg)) : NULL;
	ok = dash && first && !strchr(dash + 1, '-') &&
	     parse_endpoint(first, &fs->side[0]) && parse_endpoint(dash + 1, &fs->side[1]);
	free(first);
	fs->pair = true;
	if (!ok)
		return bad(f, "bad --flow '%s': expected ADDR:PORT-ADDR:PORT "
			   "(IPv6 as [ADDR]:PORT)", arg);
	return true;
}

static bool addr_match(const struct endpoint *ep, uint16_t family, const uint8_t *addr)
{
	unsigned int full = ep->prefix / 8, rest = ep->prefix % 8;

	if (family != ep->family || memcmp(addr, ep->addr, full))
		return false;
	return !rest || !((addr[full] ^ ep->addr[full]) & (0xff00u >> rest) & 0xff);
}

static bool endpoint_match(const struct endpoint *ep, uint16_t family,
			   const uint8_t *addr, uint16_t port)
{
	return (!ep->has_port || ep->port == port) &&
	       (!ep->has_addr || addr_match(ep, family, addr));
}

/* --port and --addr: either side; --flow: both sides, in either direction. */
static bool match_flow(struct filter *f, struct filter_term *t,
		       const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *rec)
{
	const struct flow_spec *fs = t->data;
	const struct netlat_flow *fl;
	const struct endpoint *a = &fs->side[0], *b = &fs->side[1];

	(void)f;
	(void)stream;
	if (rec->type == NETLAT_REC_LOST)
		return true;
	fl = record_flow(rec);
	if (!fl)
		return false;
	if (!fs->pair)
		return endpoint_match(a, fl->family, fl->saddr, fl->sport) ||
		       endpoint_match(a, fl->family, fl->daddr, fl->dport);
	return (endpoint_match(a, fl->family, fl->saddr, fl->sport) &&
		endpoint_match(b, fl->family, fl->daddr, fl->dport)) ||
	       (endpoint_match(b, fl->family, fl->saddr, fl->sport) &&
		endpoint_match(a, fl->family, fl->daddr, fl->dport));
}

/* ---- the table ---------------------------------------------------------- */

static const struct filter_kind kinds[] = {
	{ "type", parse_type, match_type },
	{ "pid", parse_pid, match_pid },
	{ "cpu", parse_cpu, match_cpu },
	{ "since", parse_time, match_since },
	{ "until", parse_time, match_until },
	{ "port", parse_port, match_flow },
	{ "addr", parse_addr, match_flow },
	{ "flow", parse_flow, match_flow },
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

	/* Descriptions of the stream or of a snapshot: the readers need them. */
	if (rec->type == NETLAT_REC_STREAM || rec->type == NETLAT_REC_SNAPSHOT ||
	    rec->type == NETLAT_REC_SNAP_CPU || rec->type == NETLAT_REC_NOTE)
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
