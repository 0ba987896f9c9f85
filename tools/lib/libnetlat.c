// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat - see libnetlat.h for the contract of every function.
 */
#define _DEFAULT_SOURCE
#include "libnetlat.h"
#include "libnetlat_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#define HDR_SIZE	sizeof(struct netlat_rec_hdr)

/*
 * Large reads amortise system calls. The device refuses a read() buffer
 * smaller than one maximal record, and we read only after moving the
 * unconsumed tail (less than one record) to the front, so any buffer of
 * two maximal records or more always leaves enough room.
 */
#define READ_BUF_SIZE	(256 * 1024)
_Static_assert(READ_BUF_SIZE >= 2 * NETLAT_REC_MAX_SIZE, "read buffer too small");

/* cpu is a __u16, so a stream cannot describe more CPUs than this. */
#define MAX_NR_CPUS	65536U

#define MIN(a, b)	((a) < (b) ? (a) : (b))

static void format_msg(char *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void format_msg(char *buf, const char *fmt, ...)
{
	va_list ap;

	if (!buf)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, NETLAT_ERRBUF_SIZE, fmt, ap);
	va_end(ap);
}

const char *netlat_type_name(unsigned int type)
{
	switch (type) {
	case NETLAT_REC_STREAM:
		return "STREAM";
	case NETLAT_REC_LOST:
		return "LOST";
	case NETLAT_REC_MARKER:
		return "MARKER";
	case NETLAT_REC_SNAPSHOT:
		return "SNAPSHOT";
	case NETLAT_REC_SNAP_CPU:
		return "SNAP_CPU";
	case NETLAT_REC_NOTE:
		return "NOTE";
	case NETLAT_REC_TCP_SENDMSG:
		return "TCP_SENDMSG";
	case NETLAT_REC_TCP_PUSH:
		return "TCP_PUSH";
	case NETLAT_REC_TCP_SKB:
		return "TCP_SKB";
	case NETLAT_REC_TCP_XMIT:
		return "TCP_XMIT";
	case NETLAT_REC_TCP_RETRANS:
		return "TCP_RETRANS";
	case NETLAT_REC_TCP_ACK:
		return "TCP_ACK";
	case NETLAT_REC_TCP_DEV:
		return "TCP_DEV";
	case NETLAT_REC_TCP_ACK_OUT:
		return "TCP_ACK_OUT";
	case NETLAT_REC_VIRTIO:
		return "VIRTIO";
	case NETLAT_REC_TCP_PKT:
		return "TCP_PKT";
	case NETLAT_REC_RX_NETIF:
		return "RX_NETIF";
	case NETLAT_REC_RX_TRANSPORT:
		return "RX_TRANSPORT";
	case NETLAT_REC_RX_QUEUE:
		return "RX_QUEUE";
	case NETLAT_REC_RX_COPY:
		return "RX_COPY";
	case NETLAT_REC_RX_PKT:
		return "RX_PKT";
	case NETLAT_REC_RX_DROP:
		return "RX_DROP";
	case NETLAT_REC_RX_WAKE:
		return "RX_WAKE";
	}
	return NULL;
}

static const char *const probe_names[] = {
	"sendmsg", "push", "skb", "xmit", "retrans", "ack", "dev",
	[8] = "rx", "rx_sched",
	[16] = "virtio_tx", [17] = "virtio_rx",
};

const char *netlat_probe_name(uint64_t bit)
{
	unsigned int i;

	for (i = 0; i < sizeof(probe_names) / sizeof(probe_names[0]); i++)
		if (bit == 1ULL << i && probe_names[i])
			return probe_names[i];
	return NULL;
}

int netlat_parse_probes(const char *s, uint64_t *mask)
{
	char buf[256], *tok, *save;
	uint64_t m = 0;
	unsigned int i;

	if (s[0] >= '0' && s[0] <= '9') {
		char *end;

		errno = 0;
		m = strtoull(s, &end, 0);
		if (errno || *end)
			return -EINVAL;
		*mask = m;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			m |= NETLAT_PROBE_ALL;
			continue;
		}
		if (!strcmp(tok, "none"))
			continue;
		for (i = 0; i < sizeof(probe_names) / sizeof(probe_names[0]); i++)
			if (probe_names[i] && !strcmp(tok, probe_names[i]))
				break;
		if (i == sizeof(probe_names) / sizeof(probe_names[0]))
			return -EINVAL;
		m |= 1ULL << i;
	}
	*mask = m;
	return 0;
}

bool netlat_probes_spec_all(const char *s)
{
	size_t n = strlen("all");

	for (; *s; s += strcspn(s, ","), s += !!*s)
		if (!strncmp(s, "all", n) && (s[n] == ',' || !s[n]))
			return true;
	return false;
}

const char *netlat_retrans_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		"other", "rto", "fast", "tlp", "syn", "synack",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

/*
 * Smallest size of each record type with a fixed layout, 0 for others.
 * Fields appended later are optional: an older module wrote shorter
 * records (NETLAT_REC_HAS() tells whether one is there).
 */
static size_t min_rec_size(unsigned int type)
{
	switch (type) {
	case NETLAT_REC_LOST: return sizeof(struct netlat_rec_lost);
	case NETLAT_REC_SNAPSHOT: return sizeof(struct netlat_rec_snapshot);
	case NETLAT_REC_SNAP_CPU: return sizeof(struct netlat_rec_snap_cpu);
	case NETLAT_REC_NOTE: return sizeof(struct netlat_rec_note);
	case NETLAT_REC_TCP_SENDMSG: return sizeof(struct netlat_rec_tcp_sendmsg);
	case NETLAT_REC_TCP_PUSH: return sizeof(struct netlat_rec_tcp_push);
	case NETLAT_REC_TCP_SKB: return sizeof(struct netlat_rec_tcp_skb);
	case NETLAT_REC_TCP_XMIT: return sizeof(struct netlat_rec_tcp_xmit);
	case NETLAT_REC_TCP_RETRANS: return sizeof(struct netlat_rec_tcp_retrans);
	case NETLAT_REC_TCP_ACK: return offsetof(struct netlat_rec_tcp_ack, xmit_ack_ns);
	case NETLAT_REC_TCP_DEV: return sizeof(struct netlat_rec_tcp_dev);
	case NETLAT_REC_TCP_ACK_OUT: return sizeof(struct netlat_rec_tcp_ack_out);
	case NETLAT_REC_VIRTIO: return sizeof(struct netlat_rec_virtio);
	case NETLAT_REC_TCP_PKT: return NETLAT_REC_TCP_PKT_SIZE_VER0;
	case NETLAT_REC_RX_NETIF: return sizeof(struct netlat_rec_rx_netif);
	case NETLAT_REC_RX_TRANSPORT:
	case NETLAT_REC_RX_QUEUE: return sizeof(struct netlat_rec_rx_skb);
	case NETLAT_REC_RX_COPY: return offsetof(struct netlat_rec_rx_copy, wait_ns);
	case NETLAT_REC_RX_PKT: return NETLAT_REC_RX_PKT_SIZE_VER0;
	case NETLAT_REC_RX_DROP: return sizeof(struct netlat_rec_rx_drop);
	case NETLAT_REC_RX_WAKE: return sizeof(struct netlat_rec_rx_wake);
	}
	return 0;
}

/* ==== device errors ====================================================== */

const char *netlat_dev_strerror(int err)
{
	switch (err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return "is the netlat module loaded?";
	case EPERM:
	case EACCES:
		return "permission denied: need CAP_NET_ADMIN or CAP_PERFMON";
	case EBUSY:
		return "another reader is consuming";
	}
	return strerror(err);
}

void netlat__format_dev_error(char *buf, const char *path, int err)
{
	if (err == ENOENT || err == ENODEV || err == ENXIO)
		format_msg(buf, "no %s: %s", path, netlat_dev_strerror(err));
	else
		format_msg(buf, "%s: %s", path, netlat_dev_strerror(err));
}

/* Only device paths get the module-specific explanations. */
static bool is_device_path(const char *path)
{
	return strncmp(path, "/dev/", 5) == 0;
}

/* ==== sources ============================================================ */

struct netlat_source {
	int fd;
	bool own_fd;
	bool live;		/* reads may block: poll() for timeouts */
	bool device;		/* character device: explain its errors */
	bool eof;		/* read() returned 0, or reading stopped */
	bool stopped;		/* netlat_stop_reading(): no more read() */
	char *name;
	int timeout_ms;
	int tee_fd;
	char *tee_name;
	unsigned char *tee_insert;	/* records to tee after the stream header */
	size_t tee_insert_len;

	/* buf[start, end) holds bytes read but not consumed. */
	unsigned char *buf;
	size_t start, end;
	uint64_t offset;	/* stream offset of buf[start] */

	bool have_stream;
	struct netlat_rec_stream stream;

	int err;		/* final error, 0 if none */
	char errmsg[NETLAT_ERRBUF_SIZE];
};

static struct netlat_source *source_new(int fd, bool own_fd, const char *name,
					char *errbuf)
{
	struct netlat_source *src;
	struct stat st;

	if (fstat(fd, &st) < 0) {
		format_msg(errbuf, "%s: %s", name, strerror(errno));
		return NULL;
	}
	src = calloc(1, sizeof(*src));
	if (!src)
		goto nomem;
	src->buf = malloc(READ_BUF_SIZE);
	src->name = strdup(name);
	if (!src->buf || !src->name)
		goto nomem;
	src->fd = fd;
	src->own_fd = own_fd;
	src->live = !S_ISREG(st.st_mode);
	src->device = S_ISCHR(st.st_mode);
	src->timeout_ms = -1;
	src->tee_fd = -1;
	return src;
nomem:
	netlat_close(src);
	format_msg(errbuf, "%s: out of memory", name);
	errno = ENOMEM;
	return NULL;
}

struct netlat_source *netlat_open(const char *path, char *errbuf)
{
	struct netlat_source *src;
	int fd, err;

	if (!path)
		path = NETLAT_DEVICE_PATH;
	if (!strcmp(path, "-"))
		return source_new(STDIN_FILENO, false, "<stdin>", errbuf);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (is_device_path(path))
			netlat__format_dev_error(errbuf, path, err);
		else
			format_msg(errbuf, "cannot open %s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	src = source_new(fd, true, path, errbuf);
	if (!src) {
		err = errno;
		close(fd);
		errno = err;
	}
	return src;
}

struct netlat_source *netlat_open_fd(int fd, const char *name, char *errbuf)
{
	return source_new(fd, false, name ? name : "<fd>", errbuf);
}

void netlat_close(struct netlat_source *src)
{
	if (!src)
		return;
	if (src->own_fd)
		close(src->fd);
	free(src->buf);
	free(src->name);
	free(src->tee_name);
	free(src->tee_insert);
	free(src);
}

const char *netlat_errmsg(const struct netlat_source *src)
{
	return src->errmsg;
}

const struct netlat_rec_stream *netlat_stream(const struct netlat_source *src)
{
	return src->have_stream ? &src->stream : NULL;
}

const char *netlat_name(const struct netlat_source *src)
{
	return src->name;
}

int netlat_fd(const struct netlat_source *src)
{
	return src->fd;
}

bool netlat_is_live(const struct netlat_source *src)
{
	return src->live;
}

uint64_t netlat_offset(const struct netlat_source *src)
{
	return src->offset;
}

size_t netlat_buffered(const struct netlat_source *src)
{
	return src->end - src->start;
}

void netlat_set_timeout(struct netlat_source *src, int timeout_ms)
{
	src->timeout_ms = timeout_ms;
}

void netlat_set_tee(struct netlat_source *src, int fd, const char *name)
{
	free(src->tee_name);
	src->tee_name = strdup(name ? name : "<tee>");
	src->tee_fd = fd;
}

int netlat_set_tee_insert(struct netlat_source *src, const void *recs, size_t len)
{
	unsigned char *p = len ? malloc(len) : NULL;

	if (len && !p)
		return -ENOMEM;
	if (len)
		memcpy(p, recs, len);
	free(src->tee_insert);
	src->tee_insert = p;
	src->tee_insert_len = len;
	return 0;
}

static int tee_bytes(struct netlat_source *src, const unsigned char *p, size_t len);

/*
 * Until the first record is consumed buf[0, end) is the stream from its
 * start: once the stream header is whole, tee it, the inserted records
 * (given its cpu and time) and what follows. @flush: the stream ends, tee
 * what there is.
 */
static int tee_pending(struct netlat_source *src, bool flush)
{
	const struct netlat_rec_hdr *s = (const void *)src->buf;
	size_t at = 0, n = src->end;
	bool whole = n >= HDR_SIZE && s->size >= HDR_SIZE && n >= s->size;
	int r;

	if (!src->tee_insert || src->tee_fd < 0)
		return 0;
	if (!whole && !flush && n < NETLAT_REC_MAX_SIZE)
		return 0;	/* the next read() comes back here */
	if (!whole) {
		r = tee_bytes(src, src->buf, n);	/* no stream header: as it is */
		goto done;
	}
	while (at + HDR_SIZE <= src->tee_insert_len) {
		struct netlat_rec_hdr *h = (void *)(src->tee_insert + at);

		if (h->size < HDR_SIZE || at + h->size > src->tee_insert_len)
			break;
		h->cpu = s->cpu;
		h->ts_ns = s->ts_ns;
		at += h->size;
	}
	r = tee_bytes(src, src->buf, s->size);
	if (!r)
		r = tee_bytes(src, src->tee_insert, at);
	if (!r)
		r = tee_bytes(src, src->buf + s->size, n - s->size);
done:
	free(src->tee_insert);
	src->tee_insert = NULL;
	return r;
}

void netlat_stop_reading(struct netlat_source *src)
{
	tee_pending(src, true);
	src->eof = true;
	src->stopped = true;
}

/* Record a final error; returns -err for tail calls. */
int netlat__fail(struct netlat_source *src, int err, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = (size_t)snprintf(src->errmsg, sizeof(src->errmsg), "%s: ", src->name);
	if (n < sizeof(src->errmsg)) {
		va_start(ap, fmt);
		vsnprintf(src->errmsg + n, sizeof(src->errmsg) - n, fmt, ap);
		va_end(ap);
	}
	src->err = err;
	return -err;
}

/*
 * A record that fails validation. Before the stream header has been seen
 * the bytes are not known to be netlat at all, so say that instead of
 * "corrupt".
 */
static int bad_record(struct netlat_source *src, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad_record(struct netlat_source *src, const char *fmt, ...)
{
	unsigned long long offset = src->offset;
	char what[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!src->have_stream)
		return netlat__fail(src, ENOMSG, "not a netlat capture (%s at offset %llu)",
			    what, offset);
	return netlat__fail(src, EBADMSG, "corrupt record at offset %llu: %s", offset, what);
}

static int unsupported_version(struct netlat_source *src, unsigned int version)
{
	return netlat__fail(src, EPROTONOSUPPORT,
		    "unsupported ABI version %u (this tool reads version %d)",
		    version, NETLAT_ABI_VERSION);
}

static int read_error(struct netlat_source *src, int err)
{
	if (src->device)
		return netlat__fail(src, err, "%s", netlat_dev_strerror(err));
	return netlat__fail(src, err, "read: %s", strerror(err));
}

int netlat__write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int tee_bytes(struct netlat_source *src, const unsigned char *p, size_t len)
{
	int r;

	if (src->tee_fd < 0)
		return 0;
	r = netlat__write_all(src->tee_fd, p, len);
	if (r < 0)
		return netlat__fail(src, -r, "cannot write %s: %s", src->tee_name, strerror(-r));
	return 0;
}

/* Wait for data if a timeout is set: 1 ready, -EAGAIN, -EINTR, -errno. */
static int wait_readable(struct netlat_source *src)
{
	struct pollfd pfd = { .fd = src->fd, .events = POLLIN };
	int r;

	if (src->timeout_ms < 0 || !src->live)
		return 1;
	r = poll(&pfd, 1, src->timeout_ms);
	if (r < 0 && errno == EINTR)
		return -EINTR;
	if (r < 0)
		return netlat__fail(src, errno, "poll: %s", strerror(errno));
	return r ? 1 : -EAGAIN;
}

/* Move the unconsumed bytes to the front so a read() gets the rest. */
static void compact(struct netlat_source *src)
{
	size_t left = src->end - src->start;

	if (src->start == 0)
		return;
	memmove(src->buf, src->buf + src->start, left);
	src->start = 0;
	src->end = left;
}

/* One read() into the free space: 1 got data, 0 end, negative errno. */
static int read_more(struct netlat_source *src)
{
	ssize_t n;
	int r;

	compact(src);
	r = wait_readable(src);
	if (r < 0)
		return r;
	n = read(src->fd, src->buf + src->end, READ_BUF_SIZE - src->end);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return -errno;
	if (n < 0)
		return read_error(src, errno);
	if (n == 0) {
		src->eof = true;
		return tee_pending(src, true);
	}
	if (src->tee_insert && src->offset == 0 && src->start == 0) {
		src->end += (size_t)n;
		r = tee_pending(src, false);
		return r < 0 ? r : 1;
	}
	r = tee_bytes(src, src->buf + src->end, (size_t)n);
	src->end += (size_t)n;
	return r < 0 ? r : 1;
}

/* Make @need bytes available at buf[start]: 1 done, 0 stream ended first. */
static int ensure_bytes(struct netlat_source *src, size_t need)
{
	int r;

	while (src->end - src->start < need) {
		if (src->eof)
			return 0;
		r = read_more(src);
		if (r < 0)
			return r;
	}
	return 1;
}

static const struct netlat_rec_hdr *current_record(const struct netlat_source *src)
{
	/* start only ever advances by validated sizes: 8-byte aligned. */
	return (const struct netlat_rec_hdr *)(const void *)(src->buf + src->start);
}

/* A whole record is buffered: netlat_next() will not read(). */
bool netlat__record_buffered(const struct netlat_source *src)
{
	size_t left = netlat_buffered(src);

	return !src->err && left >= HDR_SIZE && left >= current_record(src)->size;
}

/* The stream ended with fewer than the @need bytes the next record needs. */
static int stream_end(struct netlat_source *src, size_t need)
{
	size_t left = netlat_buffered(src);

	/* Bytes after netlat_stop_reading() were never read: not an error. */
	if (src->stopped)
		return 0;
	if (!src->have_stream && (left == 0 || need == HDR_SIZE))
		return netlat__fail(src, ENOMSG, "not a netlat capture (%s)",
			    left ? "shorter than a record header" : "empty");
	if (left == 0)
		return 0;
	return netlat__fail(src, ENODATA,
		    "truncated capture: record at offset %llu needs %zu bytes, only %zu present",
		    (unsigned long long)src->offset, need, left);
}

static int check_header(struct netlat_source *src, const struct netlat_rec_hdr *h)
{
	if (h->magic != NETLAT_REC_MAGIC)
		return bad_record(src, "bad magic 0x%02x", h->magic);
	if (!src->have_stream && h->type != NETLAT_REC_STREAM)
		return bad_record(src, "first record has type %u, not STREAM", h->type);
	if (h->version != NETLAT_ABI_VERSION)
		return unsupported_version(src, h->version);
	if (h->size < HDR_SIZE || h->size > NETLAT_REC_MAX_SIZE ||
	    h->size % NETLAT_REC_ALIGN)
		return bad_record(src, "bad size %u", h->size);
	if (h->type != NETLAT_REC_STREAM && h->cpu >= src->stream.nr_cpus)
		return bad_record(src, "cpu %u but nr_cpus is %u", h->cpu,
				  src->stream.nr_cpus);
	return 0;
}

static int check_stream(struct netlat_source *src, const struct netlat_rec_stream *s)
{
	if (s->hdr.size < sizeof(*s))
		return bad_record(src, "stream header of %u bytes, expected %zu",
				  s->hdr.size, sizeof(*s));
	if (s->abi_version != NETLAT_ABI_VERSION)
		return unsupported_version(src, s->abi_version);
	if (s->nr_cpus == 0 || s->nr_cpus > MAX_NR_CPUS)
		return bad_record(src, "stream header with nr_cpus %u", s->nr_cpus);
	if (s->hdr.cpu >= s->nr_cpus)
		return bad_record(src, "stream header with cpu %u but nr_cpus %u",
				  s->hdr.cpu, s->nr_cpus);
	return 0;
}

static int check_marker(struct netlat_source *src, const struct netlat_rec_marker *m)
{
	if (m->hdr.size < sizeof(*m))
		return bad_record(src, "MARKER of %u bytes", m->hdr.size);
	if (m->len == 0 || m->len > NETLAT_MARKER_MAX ||
	    m->len > m->hdr.size - sizeof(*m))
		return bad_record(src, "MARKER len %u in a %u-byte record",
				  m->len, m->hdr.size);
	return 0;
}

/* Type-specific layout checks; unknown types only need a valid header. */
static int check_body(struct netlat_source *src, const struct netlat_rec_hdr *h)
{
	switch (h->type) {
	case NETLAT_REC_STREAM:
		return check_stream(src, (const struct netlat_rec_stream *)h);
	case NETLAT_REC_MARKER:
		return check_marker(src, (const struct netlat_rec_marker *)h);
	case NETLAT_REC_NOTE:
		if (h->size < sizeof(struct netlat_rec_note) ||
		    ((const struct netlat_rec_note *)h)->len > h->size - sizeof(struct netlat_rec_note))
			return bad_record(src, "NOTE that does not fit its %u bytes", h->size);
		return 0;
	}
	if (h->size < min_rec_size(h->type))
		return bad_record(src, "%s of %u bytes", netlat_type_name(h->type),
				  h->size);
	return 0;
}

/* A newer writer may append fields: keep the ones this library knows. */
static void adopt_stream(struct netlat_source *src, const struct netlat_rec_hdr *h)
{
	memcpy(&src->stream, h, MIN((size_t)h->size, sizeof(src->stream)));
	src->have_stream = true;
}

int netlat_next(struct netlat_source *src, const struct netlat_rec_hdr **rec)
{
	const struct netlat_rec_hdr *h;
	size_t size;
	int r;

	if (src->err)
		return -src->err;
	r = ensure_bytes(src, HDR_SIZE);
	if (r <= 0)
		return r < 0 ? r : stream_end(src, HDR_SIZE);
	r = check_header(src, current_record(src));
	if (r)
		return r;
	size = current_record(src)->size;
	r = ensure_bytes(src, size);
	if (r <= 0)
		return r < 0 ? r : stream_end(src, size);
	h = current_record(src);
	r = check_body(src, h);
	if (r)
		return r;
	if (h->type == NETLAT_REC_STREAM)
		adopt_stream(src, h);
	src->start += size;
	src->offset += size;
	*rec = h;
	return 1;
}
