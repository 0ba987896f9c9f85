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

static void format_dev_error(char *buf, const char *path, int err)
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
			format_dev_error(errbuf, path, err);
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
static int fail(struct netlat_source *src, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct netlat_source *src, int err, const char *fmt, ...)
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
		return fail(src, ENOMSG, "not a netlat capture (%s at offset %llu)",
			    what, offset);
	return fail(src, EBADMSG, "corrupt record at offset %llu: %s", offset, what);
}

static int unsupported_version(struct netlat_source *src, unsigned int version)
{
	return fail(src, EPROTONOSUPPORT,
		    "unsupported ABI version %u (this tool reads version %d)",
		    version, NETLAT_ABI_VERSION);
}

static int read_error(struct netlat_source *src, int err)
{
	if (src->device)
		return fail(src, err, "%s", netlat_dev_strerror(err));
	return fail(src, err, "read: %s", strerror(err));
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
		return fail(src, -r, "cannot write %s: %s", src->tee_name, strerror(-r));
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
		return fail(src, errno, "poll: %s", strerror(errno));
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
static bool record_buffered(const struct netlat_source *src)
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
		return fail(src, ENOMSG, "not a netlat capture (%s)",
			    left ? "shorter than a record header" : "empty");
	if (left == 0)
		return 0;
	return fail(src, ENODATA,
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
		return fail(m->src, ENOMEM, "out of memory holding records for ordering");
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
		return fail(m->src, ENOMEM, "out of memory holding records for ordering");
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
		if (!merge_draining(m) && record_buffered(m->src)) {
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

/* ==== device control ===================================================== */

int netlat_dev_open(const char *path, int oflags, char *errbuf)
{
	int fd;

	if (!path)
		path = NETLAT_DEVICE_PATH;
	fd = open(path, oflags | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		format_dev_error(errbuf, path, err);
		return -err;
	}
	return fd;
}

static int netlat_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

int netlat_get_info(int fd, struct netlat_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return netlat_ioctl(fd, NETLAT_IOC_GET_INFO, info);
}

int netlat_get_cpu_stats(int fd, unsigned int cpu, struct netlat_cpu_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->cpu = cpu;
	return netlat_ioctl(fd, NETLAT_IOC_GET_CPU_STATS, st);
}

static int netlat_control(int fd, unsigned long request)
{
	struct netlat_control ctl = { .size = sizeof(ctl) };

	return netlat_ioctl(fd, request, &ctl);
}

int netlat_start(int fd)
{
	return netlat_control(fd, NETLAT_IOC_START);
}

int netlat_stop(int fd)
{
	return netlat_control(fd, NETLAT_IOC_STOP);
}

int netlat_reset(int fd)
{
	return netlat_control(fd, NETLAT_IOC_RESET);
}

int netlat_probes(int fd, bool set, uint64_t enable, struct netlat_probes *pr)
{
	memset(pr, 0, sizeof(*pr));
	pr->size = sizeof(*pr);
	pr->flags = set ? NETLAT_PROBES_SET : 0;
	pr->enable = enable;
	return netlat_ioctl(fd, NETLAT_IOC_PROBES, pr);
}

int netlat_hist(int fd, bool reset, struct netlat_hist *h,
		struct netlat_stage_hist *st, unsigned int nr_stages)
{
	memset(h, 0, sizeof(*h));
	h->size = sizeof(*h);
	h->flags = reset ? NETLAT_HIST_RESET : 0;
	h->nr_stages = st ? nr_stages : 0;
	h->stage_size = sizeof(*st);
	h->stages = (uintptr_t)st;
	return netlat_ioctl(fd, NETLAT_IOC_HIST, h);
}

const struct netlat_rec_tcp_pkt *netlat_pkt_rec(const struct netlat_rec_hdr *h,
						struct netlat_rec_tcp_pkt *buf)
{
	if (h->type != NETLAT_REC_TCP_PKT || h->size < NETLAT_REC_TCP_PKT_SIZE_VER0)
		return NULL;
	memset(buf, 0, sizeof(*buf));
	memcpy(buf, h, h->size < sizeof(*buf) ? h->size : sizeof(*buf));
	return buf;
}

static int netlat_flows_call(int fd, uint32_t flags,
			     struct netlat_flow_stats *e, unsigned int room,
			     uint64_t *nclosed, uint64_t *summed)
{
	struct netlat_flows a;
	int r;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.nr = e ? room : 0;
	a.entry_size = sizeof(*e);
	a.entries = (uintptr_t)e;
	r = netlat_ioctl(fd, NETLAT_IOC_FLOWS, &a);
	if (r < 0)
		return r;
	if (nclosed)
		*nclosed = a.closed;
	if (summed)
		*summed = a.rest;
	return (int)a.nr;
}

int netlat_flows(int fd, bool closed, struct netlat_flow_stats *e,
		 unsigned int room, uint64_t *nclosed)
{
	return netlat_flows_call(fd, closed ? NETLAT_FLOWS_CLOSED : 0, e, room,
				 nclosed, NULL);
}

int netlat_flows_bounded(int fd, bool closed, struct netlat_flow_stats *e,
			 unsigned int room, uint64_t *nclosed,
			 uint64_t *summed)
{
	if (!e || !room)
		return -EINVAL;
	return netlat_flows_call(fd, NETLAT_FLOWS_REST |
				 (closed ? NETLAT_FLOWS_CLOSED : 0), e, room,
				 nclosed, summed);
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

	switch (stage) {
	NETLAT_STAGES(STAGE_CASE_rx_pkt)
	default:
		return false;
	}
	/* the protocol's own stages; a first-size record has no wakeup */
	if ((stage == NETLAT_STAGE_RX_NETIF_TCP && !tcp) ||
	    (stage == NETLAT_STAGE_RX_NETIF_UDP && tcp) ||
	    (stage == NETLAT_STAGE_RX_TCP_QUEUE && !tcp) ||
	    ((stage == NETLAT_STAGE_RX_READY_WAKEUP ||
	      stage == NETLAT_STAGE_RX_WAKEUP_RUN) && p->hdr.size < sizeof(*p)))
		return false;
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

int netlat_set_config(int fd, const struct netlat_config *cfg)
{
	struct netlat_config c = *cfg;

	c.size = sizeof(c);
	c.reserved = 0;
	return netlat_ioctl(fd, NETLAT_IOC_SET_CONFIG, &c);
}
