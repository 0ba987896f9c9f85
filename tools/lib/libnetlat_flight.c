// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat - the flight recorder: ring mode, snapshots, triggers and
 * in-kernel filters, and the specs of triggers and filter rules. See
 * libnetlat.h for the contract of every function.
 */
#define _DEFAULT_SOURCE
#include "libnetlat.h"
#include "libnetlat_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ==== ioctls ============================================================= */

static int flight_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

const char *netlat_ioctl_strerror(unsigned long request, int err)
{
	static const struct {
		unsigned long request;
		const char *missing;
	} features[] = {
		{ NETLAT_IOC_SNAPSHOT, "this netlat.ko has no snapshot support" },
		{ NETLAT_IOC_TRIGGERS, "this netlat.ko has no trigger support" },
		{ NETLAT_IOC_FILTERS, "this netlat.ko has no in-kernel filter support" },
		{ NETLAT_IOC_HIST, "this netlat.ko has no packet level" },
		{ NETLAT_IOC_FLOWS, "this netlat.ko has no per-flow counters" },
	};
	size_t i;

	if (err == ENOTTY || err == EOPNOTSUPP)
		for (i = 0; i < ARRAY_SIZE(features); i++)
			if (features[i].request == request)
				return features[i].missing;
	switch (err) {
	case ENOTTY:
		return "not a netlat device";
	case EPERM:
	case EACCES:
		return "permission denied: changing what is traced needs CAP_PERFMON or CAP_SYS_ADMIN";
	}
	return strerror(err);
}

int netlat_set_mode(int fd, unsigned int mode)
{
	struct netlat_config cfg = {
		.size = sizeof(cfg),
		.flags = NETLAT_CONFIG_MODE,
		.mode = mode,
	};

	return flight_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg);
}

int netlat_snapshot(int fd, unsigned int flags, struct netlat_snapshot *snap)
{
	struct netlat_snapshot s = { .size = sizeof(s), .flags = flags };
	int r = flight_ioctl(fd, NETLAT_IOC_SNAPSHOT, &s);

	if (snap)
		*snap = s;
	return r;
}

#define COPY_BUF_SIZE	(256 * 1024)

int netlat_snapshot_copy(int fd, int out_fd, uint64_t *bytes)
{
	struct netlat_snapshot snap;
	unsigned char *buf;
	ssize_t n;
	int r;

	*bytes = 0;
	r = netlat_snapshot(fd, NETLAT_SNAPSHOT_READ, &snap);
	if (r < 0)
		return r;
	buf = malloc(COPY_BUF_SIZE);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		n = read(fd, buf, COPY_BUF_SIZE);
		if (n < 0 && errno == EINTR)
			continue;
		r = n < 0 ? -errno : 0;
		if (n <= 0)
			break;
		r = netlat__write_all(out_fd, buf, (size_t)n);
		if (r < 0)
			break;
		*bytes += (uint64_t)n;
	}
	free(buf);
	if (!r && *bytes != snap.bytes)
		r = -EIO;
	return r;
}

const void *netlat_snapshot_map(int fd, const struct netlat_snapshot *snap)
{
	void *p;

	if (!snap->bytes) {
		errno = ENODATA;
		return NULL;
	}
	p = mmap(NULL, snap->bytes, PROT_READ, MAP_SHARED, fd,
		 (off_t)NETLAT_MMAP_OFFSET(0, NETLAT_MMAP_SNAPSHOT));
	return p == MAP_FAILED ? NULL : p;
}

int netlat_snapshot_unmap(const void *map, const struct netlat_snapshot *snap)
{
	return munmap((void *)map, snap->bytes) < 0 ? -errno : 0;
}

int netlat_wait_snapshot(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLPRI };
	int r = poll(&pfd, 1, timeout_ms);

	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	if (pfd.revents & POLLPRI)
		return 1;
	return pfd.revents & POLLNVAL ? -EBADF : -EIO;
}

int netlat_get_triggers(int fd, struct netlat_triggers *t)
{
	memset(t, 0, sizeof(*t));
	t->size = sizeof(*t);
	return flight_ioctl(fd, NETLAT_IOC_TRIGGERS, t);
}

int netlat_set_triggers(int fd, const struct netlat_triggers *t)
{
	struct netlat_triggers c = *t;

	c.size = sizeof(c);
	c.flags = NETLAT_TRIGGERS_SET;
	c.reserved = 0;
	c.fired = 0;
	return flight_ioctl(fd, NETLAT_IOC_TRIGGERS, &c);
}

int netlat_get_filters(int fd, struct netlat_filter_rule *rules, unsigned int *nr)
{
	struct netlat_filters f = {
		.size = sizeof(f),
		.nr_rules = *nr,
		.rule_size = sizeof(*rules),
		.rules = (uintptr_t)rules,
	};
	int r = flight_ioctl(fd, NETLAT_IOC_FILTERS, &f);

	if (!r)
		*nr = f.nr_rules;
	return r;
}

int netlat_set_filters(int fd, const struct netlat_filter_rule *rules, unsigned int nr)
{
	struct netlat_filters f = {
		.size = sizeof(f),
		.flags = NETLAT_FILTERS_SET,
		.nr_rules = nr,
		.rule_size = sizeof(*rules),
		.rules = (uintptr_t)rules,
	};

	return flight_ioctl(fd, NETLAT_IOC_FILTERS, &f);
}

/* ==== specs ============================================================== */

static int spec_error(char *errbuf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int spec_error(char *errbuf, const char *fmt, ...)
{
	va_list ap;

	if (errbuf) {
		va_start(ap, fmt);
		vsnprintf(errbuf, NETLAT_ERRBUF_SIZE, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A decimal or 0x-hexadecimal number without sign, within [min, max]. */
static bool parse_number(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && !*end && *out >= min && *out <= max;
}

int netlat_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	double v;
	char *end;
	size_t i;

	if ((*s < '0' || *s > '9') && *s != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v = v * units[i].ns + 0.5;
		if (v >= 18e18)
			return -EINVAL;
		*ns = (uint64_t)v;
		return 0;
	}
	return -EINVAL;
}

/* ---- filter rules ------------------------------------------------------- */

#define FILTER_KEYS	"addr, port, cookie, sock-cookie, netns, pid, tid, groups"

static int parse_addr(struct netlat_filter_rule *r, const char *v, char *errbuf)
{
	char addr[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(v, '/');
	size_t len = slash ? (size_t)(slash - v) : strlen(v);
	unsigned int bits, i;
	uint64_t prefix;

	if (len >= sizeof(addr))
		return spec_error(errbuf, "addr '%s' is not an IPv4 or IPv6 address", v);
	memcpy(addr, v, len);
	addr[len] = 0;
	if (inet_pton(AF_INET, addr, r->addr) == 1) {
		r->family = AF_INET;
		bits = 32;
	} else if (inet_pton(AF_INET6, addr, r->addr) == 1) {
		r->family = AF_INET6;
		bits = 128;
	} else {
		return spec_error(errbuf, "addr '%s' is not an IPv4 or IPv6 address", addr);
	}
	prefix = bits;
	if (slash && !parse_number(slash + 1, 0, bits, &prefix))
		return spec_error(errbuf, "addr '%s': prefix '/%s' is not 0 to %u",
				  v, slash + 1, bits);
	r->prefix_len = (uint8_t)prefix;
	for (i = (unsigned int)prefix; i < bits; i++)
		if (r->addr[i / 8] & (0x80 >> (i % 8)))
			return spec_error(errbuf,
					  "addr '%s' has bits set past the /%u prefix",
					  v, (unsigned int)prefix);
	r->match |= NETLAT_MATCH_ADDR;
	return 0;
}

/* A namespace inode: a number, "net:[N]", or a path to stat. */
static int parse_netns(struct netlat_filter_rule *r, const char *v, char *errbuf)
{
	unsigned long long n;
	struct stat st;
	int used = 0;

	if (*v >= '0' && *v <= '9') {
		uint64_t ino;

		if (!parse_number(v, 1, UINT32_MAX, &ino))
			return spec_error(errbuf, "netns '%s' is not an inode number "
					  "(1 to %u) or a path", v, UINT32_MAX);
		r->netns_ino = (uint32_t)ino;
	} else if (sscanf(v, "net:[%llu]%n", &n, &used) == 1 && !v[used]) {
		if (!n || n > UINT32_MAX)
			return spec_error(errbuf, "netns '%s': inode out of range", v);
		r->netns_ino = (uint32_t)n;
	} else {
		if (stat(v, &st) < 0)
			return spec_error(errbuf, "netns: cannot stat '%s': %s", v,
					  strerror(errno));
		if (!st.st_ino || st.st_ino > UINT32_MAX)
			return spec_error(errbuf, "netns '%s': inode %llu is not a "
					  "namespace inode", v,
					  (unsigned long long)st.st_ino);
		r->netns_ino = (uint32_t)st.st_ino;
	}
	r->match |= NETLAT_MATCH_NETNS;
	return 0;
}

static int parse_id(const char *key, const char *v, uint64_t max, uint64_t *out,
		    char *errbuf)
{
	if (!parse_number(v, 1, max, out))
		return spec_error(errbuf, "%s '%s' is not a number from 1 to %llu",
				  key, v, (unsigned long long)max);
	return 0;
}

static int filter_key(struct netlat_filter_rule *r, const char *key, const char *v,
		      char *errbuf)
{
	uint64_t n;
	int err;

	if (!*v)
		return spec_error(errbuf, "%s has no value", key);
	if (!strcmp(key, "addr"))
		return parse_addr(r, v, errbuf);
	if (!strcmp(key, "netns"))
		return parse_netns(r, v, errbuf);
	if (!strcmp(key, "groups")) {
		uint64_t groups = 0;

		err = netlat_parse_probes(v, &groups);
		r->groups = groups;
		if (err || !groups || (groups & ~(uint64_t)NETLAT_PROBE_ALL))
			return spec_error(errbuf, "groups '%s': expected probe groups "
					  "(sendmsg,push,skb,xmit,retrans,ack,dev,"
					  "virtio_tx,virtio_rx or all)", v);
		return 0;
	}
	if (!strcmp(key, "port")) {
		err = parse_id(key, v, UINT16_MAX, &n, errbuf);
		r->port = (uint16_t)n;
		r->match |= NETLAT_MATCH_PORT;
	} else if (!strcmp(key, "cookie") || !strcmp(key, "sock-cookie")) {
		err = parse_id(key, v, UINT64_MAX, &n, errbuf);
		r->cookie = n;
		r->match |= key[0] == 'c' ? NETLAT_MATCH_COOKIE : NETLAT_MATCH_SOCK_COOKIE;
	} else if (!strcmp(key, "pid")) {
		err = parse_id(key, v, UINT32_MAX, &n, errbuf);
		r->tgid = (uint32_t)n;
		r->match |= NETLAT_MATCH_TGID;
	} else if (!strcmp(key, "tid")) {
		err = parse_id(key, v, UINT32_MAX, &n, errbuf);
		r->tid = (uint32_t)n;
		r->match |= NETLAT_MATCH_TID;
	} else {
		return spec_error(errbuf, "unknown key '%s' (keys: " FILTER_KEYS ")", key);
	}
	return err;
}

/* Keys whose value is a comma-separated list: "groups=sendmsg,xmit". */
static bool list_key(const char *key)
{
	return !strcmp(key, "groups");
}

int netlat_parse_filter(const char *spec, struct netlat_filter_rule *rule,
			char *errbuf)
{
	static const char *const keys[] = {
		"addr", "port", "cookie", "sock-cookie", "netns", "pid", "tid", "groups",
	};
	char buf[512], *tok, *next, *eq, *value;
	unsigned int seen = 0;
	size_t i;
	int r;

	memset(rule, 0, sizeof(*rule));
	if (!*spec)
		return spec_error(errbuf, "empty rule (keys: " FILTER_KEYS ")");
	if (strlen(spec) >= sizeof(buf))
		return spec_error(errbuf, "rule too long");
	strcpy(buf, spec);
	for (tok = buf; tok; tok = next) {
		eq = strchr(tok, '=');
		/* The value runs to the next comma, or for a list to the next key. */
		next = strchr(tok, ',');
		if (eq && (!next || eq < next))
			*eq = 0;
		else
			return spec_error(errbuf, "'%.*s' is not KEY=VALUE (keys: "
					  FILTER_KEYS ")",
					  next ? (int)(next - tok) : (int)strlen(tok), tok);
		value = eq + 1;
		while (next && list_key(tok)) {
			char *comma = strchr(next + 1, ',');
			char *eq2 = strchr(next + 1, '=');

			if (eq2 && (!comma || eq2 < comma))
				break;
			next = comma;
		}
		if (next)
			*next++ = 0;
		for (i = 0; i < ARRAY_SIZE(keys) && strcmp(keys[i], tok); i++)
			;
		if (i < ARRAY_SIZE(keys) && (seen & (1U << i)))
			return spec_error(errbuf, "'%s' given twice", tok);
		if (i < ARRAY_SIZE(keys))
			seen |= 1U << i;
		r = filter_key(rule, tok, value, errbuf);
		if (r)
			return r;
	}
	if ((rule->match & NETLAT_MATCH_COOKIE) && (rule->match & NETLAT_MATCH_SOCK_COOKIE))
		return spec_error(errbuf, "cookie and sock-cookie cannot be in one rule");
	if (!rule->match)
		return spec_error(errbuf, "no condition: give at least one of addr, port, "
				  "cookie, sock-cookie, netns, pid, tid");
	if (!rule->groups)
		rule->groups = NETLAT_PROBE_ALL;
	return 0;
}

/* snprintf() onto the end of @buf, keeping the total it would need. */
struct spec_out {
	char *buf;
	size_t len;
	int n;
};

static void out_add(struct spec_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_add(struct spec_out *o, const char *fmt, ...)
{
	size_t at = (size_t)o->n < o->len ? (size_t)o->n : o->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf ? o->buf + at : NULL, o->buf ? o->len - at : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->n += n;
}

static void out_groups(struct spec_out *o, uint64_t groups)
{
	const char *sep = "";
	unsigned int i;

	if (groups == NETLAT_PROBE_ALL) {
		out_add(o, "all");
		return;
	}
	for (i = 0; i < 64; i++) {
		const char *name = netlat_probe_name(1ULL << i);

		if (!(groups & (1ULL << i)))
			continue;
		if (name)
			out_add(o, "%s%s", sep, name);
		else
			out_add(o, "%s0x%llx", sep, 1ULL << i);
		sep = ",";
	}
}

int netlat_format_filter(char *buf, size_t len, const struct netlat_filter_rule *r)
{
	struct spec_out o = { .buf = buf, .len = len };
	char addr[INET6_ADDRSTRLEN];

	if (len)
		buf[0] = 0;
	if (r->match & NETLAT_MATCH_ADDR) {
		if (!inet_ntop(r->family, r->addr, addr, sizeof(addr)))
			strcpy(addr, "?");
		out_add(&o, "addr=%s/%u,", addr, r->prefix_len);
	}
	if (r->match & NETLAT_MATCH_PORT)
		out_add(&o, "port=%u,", r->port);
	if (r->match & NETLAT_MATCH_COOKIE)
		out_add(&o, "cookie=%llu,", (unsigned long long)r->cookie);
	if (r->match & NETLAT_MATCH_SOCK_COOKIE)
		out_add(&o, "sock-cookie=%llu,", (unsigned long long)r->cookie);
	if (r->match & NETLAT_MATCH_NETNS)
		out_add(&o, "netns=%u,", r->netns_ino);
	if (r->match & NETLAT_MATCH_TGID)
		out_add(&o, "pid=%u,", r->tgid);
	if (r->match & NETLAT_MATCH_TID)
		out_add(&o, "tid=%u,", r->tid);
	out_add(&o, "groups=");
	out_groups(&o, r->groups);
	return o.n;
}

/* ---- triggers ----------------------------------------------------------- */

const char *netlat_trigger_name(unsigned int bit)
{
	switch (bit) {
	case NETLAT_TRIG_RETRANS_FAIL:
		return "retrans-fail";
	case NETLAT_TRIG_RETRANS_KIND:
		return "retrans";
	case NETLAT_TRIG_LATENCY:
		return "latency";
	case NETLAT_TRIG_MARKER:
		return "marker";
	case NETLAT_TRIG_RX_WAIT:
		return "rx-wait";
	}
	return NULL;
}

#define TRIGGER_FORMS	"retrans-fail, retrans=KIND[,KIND], latency=DURATION, " \
			"rx-wait=DURATION, marker=TAG"

static int parse_kinds(const char *v, uint32_t *kinds, char *errbuf)
{
	char buf[128], *tok, *save;
	unsigned int k;

	if (!*v || strlen(v) >= sizeof(buf) || v[strlen(v) - 1] == ',')
		return spec_error(errbuf, "retrans='%s': expected kinds (other, rto, "
				  "fast, tlp, syn, synack, all)", v);
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*kinds |= (1U << (NETLAT_RETRANS_SYNACK + 1)) - 1;
			continue;
		}
		for (k = 0; k <= NETLAT_RETRANS_SYNACK; k++)
			if (!strcmp(tok, netlat_retrans_kind_name(k)))
				break;
		if (k > NETLAT_RETRANS_SYNACK)
			return spec_error(errbuf, "retrans: unknown kind '%s' (kinds: other, "
					  "rto, fast, tlp, syn, synack, all)", tok);
		*kinds |= 1U << k;
	}
	return 0;
}

int netlat_parse_trigger(const char *spec, struct netlat_triggers *t, char *errbuf)
{
	const char *eq = strchr(spec, '=');
	size_t klen = eq ? (size_t)(eq - spec) : strlen(spec);
	const char *v = eq ? eq + 1 : NULL;
	uint64_t ns;

	if (!strcmp(spec, "retrans-fail")) {
		if (t->armed & NETLAT_TRIG_RETRANS_FAIL)
			return spec_error(errbuf, "retrans-fail given twice");
		t->armed |= NETLAT_TRIG_RETRANS_FAIL;
		return 0;
	}
	if (v && klen == 7 && !strncmp(spec, "retrans", klen)) {
		if (parse_kinds(v, &t->retrans_kinds, errbuf))
			return -EINVAL;
		t->armed |= NETLAT_TRIG_RETRANS_KIND;
		return 0;
	}
	if (v && ((klen == 7 && !strncmp(spec, "latency", klen)) ||
		  (klen == 7 && !strncmp(spec, "rx-wait", klen)))) {
		bool rx = spec[0] == 'r';
		uint32_t bit = rx ? NETLAT_TRIG_RX_WAIT : NETLAT_TRIG_LATENCY;
		const char *name = rx ? "rx-wait" : "latency";

		if (t->armed & bit)
			return spec_error(errbuf, "%s given twice", name);
		if (netlat_parse_duration(v, &ns) || !ns)
			return spec_error(errbuf, "%s '%s': expected a duration above "
					  "0 with a unit: ns, us, ms or s (e.g. 200ms)",
					  name, v);
		*(rx ? &t->rx_wait_ns : &t->latency_ns) = ns;
		t->armed |= bit;
		return 0;
	}
	if (v && klen == 6 && !strncmp(spec, "marker", klen)) {
		size_t len = strlen(v);

		if (t->armed & NETLAT_TRIG_MARKER)
			return spec_error(errbuf, "marker given twice");
		if (!len || len > NETLAT_TRIG_TAG_MAX)
			return spec_error(errbuf, "marker tag '%s' must be 1 to %d bytes",
					  v, NETLAT_TRIG_TAG_MAX);
		memset(t->marker_tag, 0, sizeof(t->marker_tag));
		memcpy(t->marker_tag, v, len);
		t->marker_tag_len = (uint32_t)len;
		t->armed |= NETLAT_TRIG_MARKER;
		return 0;
	}
	return spec_error(errbuf, "unknown trigger '%s' (triggers: " TRIGGER_FORMS ")",
			  spec);
}

static void out_duration(struct spec_out *o, uint64_t ns)
{
	if (ns % 1000000000ULL == 0)
		out_add(o, "%llus", (unsigned long long)(ns / 1000000000ULL));
	else if (ns % 1000000ULL == 0)
		out_add(o, "%llums", (unsigned long long)(ns / 1000000ULL));
	else if (ns % 1000ULL == 0)
		out_add(o, "%lluus", (unsigned long long)(ns / 1000ULL));
	else
		out_add(o, "%lluns", (unsigned long long)ns);
}

int netlat_format_triggers(char *buf, size_t len, const struct netlat_triggers *t)
{
	struct spec_out o = { .buf = buf, .len = len };
	const char *sep = "";
	unsigned int k;

	if (len)
		buf[0] = 0;
	if (t->armed & NETLAT_TRIG_RETRANS_FAIL) {
		out_add(&o, "retrans-fail");
		sep = ", ";
	}
	if (t->armed & NETLAT_TRIG_RETRANS_KIND) {
		out_add(&o, "%sretrans=", sep);
		sep = "";
		for (k = 0; k < 32; k++) {
			if (!(t->retrans_kinds & (1U << k)))
				continue;
			out_add(&o, "%s%s", sep, netlat_retrans_kind_name(k));
			sep = ",";
		}
		sep = ", ";
	}
	if (t->armed & NETLAT_TRIG_LATENCY) {
		out_add(&o, "%slatency=", sep);
		out_duration(&o, t->latency_ns);
		sep = ", ";
	}
	if (t->armed & NETLAT_TRIG_RX_WAIT) {
		out_add(&o, "%srx-wait=", sep);
		out_duration(&o, t->rx_wait_ns);
		sep = ", ";
	}
	if (t->armed & NETLAT_TRIG_MARKER) {
		out_add(&o, "%smarker=%.*s", sep,
			(int)(t->marker_tag_len < NETLAT_TRIG_TAG_MAX ?
			      t->marker_tag_len : NETLAT_TRIG_TAG_MAX),
			(const char *)t->marker_tag);
		sep = ", ";
	}
	if (!*sep)
		out_add(&o, "none");
	return o.n;
}
