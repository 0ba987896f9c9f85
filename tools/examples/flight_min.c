// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * flight_min - a minimal always-on flight recorder for netlat.
 *
 * Reads /dev/netlat continuously and keeps the most recent records of each
 * CPU, at most SIZE bytes per CPU, in memory or in a ring file. On SIGUSR1,
 * or when a marker whose payload starts with TAG arrives, it writes what it
 * holds to DUMP as a netlat capture ("netlat report DUMP" reads it).
 *
 *   flight_min [-m SIZE] [-f RINGFILE] [-t TAG] [-o DUMP] [-e] [-d DEVICE]
 *   flight_min -x RINGFILE [-o DUMP]
 *
 *   -m SIZE      history per CPU: MiB, or a number with a K or M suffix
 *                (default 4M)
 *   -f RINGFILE  keep the history in RINGFILE (mapped shared) instead of
 *                anonymous memory: it survives the recorder; -x extracts it
 *   -t TAG       dump when a marker starting with TAG arrives
 *                (echo -n "TAG..." > /dev/netlat)
 *   -o DUMP      dump file (default flight.nl), replaced atomically
 *   -e           dump also when stopping (SIGINT, SIGTERM, end of input)
 *   -d DEVICE    read DEVICE (or a capture file) instead of /dev/netlat
 *   -x RINGFILE  write the history of RINGFILE to DUMP and exit
 *
 * It uses only libnetlat and <linux/netlat.h>: a starting point for
 * vendors. Build: cc flight_min.c $(pkg-config --cflags --libs libnetlat)
 * (libnetlat-dev, or make -C tools install).
 *
 * Design: one thread. Signals set flags and interrupt the blocking read
 * (no SA_RESTART); a one-second timeout bounds the latency of a signal
 * that arrives just before the read blocks. Before dumping, everything
 * already in the kernel rings is drained without blocking, so the dump
 * holds every record written before the request. Records are kept per CPU
 * in arrival order, which is per-CPU sequence order: the dump is a valid
 * stream (one stream header, then each CPU's records), and its first
 * record per CPU sets the sequence baseline, so evicted history is not
 * reported as a gap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <linux/netlat.h>
#include "libnetlat.h"

#define FLIGHT_MAGIC	"NLFLIGHT"

/* The history of one CPU: a byte ring of whole records. */
struct ring {
	uint64_t head;		/* bytes ever stored */
	uint64_t tail;		/* bytes ever evicted */
	uint64_t records;	/* records held */
	uint64_t evicted;	/* records evicted to make room */
	unsigned char data[];	/* ring_bytes, a multiple of NETLAT_REC_ALIGN */
};

/* Layout of the ring file (and of the anonymous memory): header, rings. */
struct history {
	char magic[8];
	uint32_t nr_rings;
	uint32_t reserved;
	uint64_t ring_bytes;
	uint64_t stride;			/* bytes from one ring to the next */
	struct netlat_rec_stream stream;	/* header of the held records */
};

static volatile sig_atomic_t dump_requested, stop_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_requested = 1;
	else
		stop_requested = 1;
}

static struct ring *ring_of(struct history *h, unsigned int i)
{
	return (struct ring *)((char *)h + sizeof(*h) + i * h->stride);
}

/* Map the history: RINGFILE shared, or anonymous memory. NULL on error. */
static struct history *history_new(const char *ring_file, uint32_t nr_rings,
				   uint64_t ring_bytes, size_t *len)
{
	uint64_t stride = sizeof(struct ring) + ring_bytes;
	struct history *h;
	int fd = -1;

	*len = sizeof(*h) + nr_rings * stride;
	if (ring_file) {
		fd = open(ring_file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)*len) < 0) {
			fprintf(stderr, "flight_min: %s: %s\n", ring_file, strerror(errno));
			if (fd >= 0)
				close(fd);
			return NULL;
		}
	}
	h = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		 ring_file ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS, fd, 0);
	if (fd >= 0)
		close(fd);
	if (h == MAP_FAILED) {
		fprintf(stderr, "flight_min: cannot map %zu bytes: %s\n", *len, strerror(errno));
		return NULL;
	}
	memcpy(h->magic, FLIGHT_MAGIC, sizeof(h->magic));
	h->nr_rings = nr_rings;
	h->ring_bytes = ring_bytes;
	h->stride = stride;
	return h;
}

/* Size of the record at byte index @at: its first 8 bytes never wrap. */
static uint16_t size_at(const struct history *h, const struct ring *r, uint64_t at)
{
	uint16_t size;

	memcpy(&size, &r->data[at % h->ring_bytes], sizeof(size));
	return size;
}

static void ring_put(struct history *h, struct ring *r, const struct netlat_rec_hdr *rec)
{
	uint64_t off, first;

	while (r->head - r->tail + rec->size > h->ring_bytes) {
		r->tail += size_at(h, r, r->tail);
		r->records--;
		r->evicted++;
	}
	off = r->head % h->ring_bytes;
	first = h->ring_bytes - off < rec->size ? h->ring_bytes - off : rec->size;
	memcpy(&r->data[off], rec, first);
	memcpy(&r->data[0], (const char *)rec + first, rec->size - first);
	r->head += rec->size;
	r->records++;
}

static int write_all(int fd, const void *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write the history to @path (via a temporary file and rename): 0 or -1. */
static int dump(const struct history *h, const char *path, unsigned int n)
{
	uint64_t bytes = sizeof(h->stream), records = 0;
	char tmp[4096];
	unsigned int i;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "flight_min: cannot create %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	err = write_all(fd, &h->stream, sizeof(h->stream));
	for (i = 0; i < h->nr_rings && !err; i++) {
		const struct ring *r = ring_of((struct history *)h, i);
		uint64_t off = r->tail % h->ring_bytes, len = r->head - r->tail;
		uint64_t first = h->ring_bytes - off < len ? h->ring_bytes - off : len;

		err = write_all(fd, &r->data[off], first) ||
		      write_all(fd, &r->data[0], len - first);
		bytes += len;
		records += r->records;
	}
	if (close(fd) < 0 || err || rename(tmp, path) < 0) {
		fprintf(stderr, "flight_min: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	fprintf(stderr, "flight_min: dump %u: %llu records, %llu bytes to %s\n", n,
		(unsigned long long)records, (unsigned long long)bytes, path);
	return 0;
}

/* -x: the history a recorder left in its ring file. */
static int extract(const char *ring_file, const char *out)
{
	struct history *h;
	struct stat st;
	int fd, r;

	fd = open(ring_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "flight_min: %s: %s\n", ring_file, strerror(errno));
		return 1;
	}
	if ((size_t)st.st_size < sizeof(*h)) {
		fprintf(stderr, "flight_min: %s: not a ring file\n", ring_file);
		close(fd);
		return 1;
	}
	h = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED || memcmp(h->magic, FLIGHT_MAGIC, sizeof(h->magic)) ||
	    sizeof(*h) + h->nr_rings * h->stride > (uint64_t)st.st_size ||
	    h->stride != sizeof(struct ring) + h->ring_bytes) {
		fprintf(stderr, "flight_min: %s: not a ring file\n", ring_file);
		return 1;
	}
	r = dump(h, out, 1);
	munmap(h, (size_t)st.st_size);
	return r < 0;
}

/* Append to the history; 1 if it is the trigger marker, -1 on error. */
static int keep(struct history **hp, size_t *len, const struct netlat_rec_hdr *rec,
		const char *ring_file, uint64_t ring_bytes, const char *tag)
{
	struct history *h = *hp;
	const struct netlat_rec_marker *m = (const void *)rec;

	if (rec->type == NETLAT_REC_STREAM) {
		const struct netlat_rec_stream *s = (const void *)rec;

		if (!h) {
			h = *hp = history_new(ring_file, s->nr_cpus, ring_bytes, len);
			if (!h)
				return -1;
		}
		/* The known part: a newer writer's longer header is cut. */
		memcpy(&h->stream, s, sizeof(h->stream));
		h->stream.hdr.size = sizeof(h->stream);
		return 0;
	}
	if (rec->cpu >= h->nr_rings)	/* a later stream with more CPUs */
		return 0;
	ring_put(h, ring_of(h, rec->cpu), rec);
	return tag && rec->type == NETLAT_REC_MARKER && m->len >= strlen(tag) &&
	       !memcmp(m->data, tag, strlen(tag));
}

static int usage(void)
{
	fputs("usage: flight_min [-m SIZE] [-f RINGFILE] [-t TAG] [-o DUMP] [-e] [-d DEVICE]\n"
	      "       flight_min -x RINGFILE [-o DUMP]\n", stderr);
	return 2;
}

/* MiB, or a number with a K or M suffix; a multiple of NETLAT_REC_ALIGN. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-' || v == 0 || v > (1ULL << 30))
		return -1;
	if (!*end || !strcmp(end, "M"))
		v <<= 20;
	else if (!strcmp(end, "K"))
		v <<= 10;
	else
		return -1;
	if (v < NETLAT_REC_MAX_SIZE || v % NETLAT_REC_ALIGN)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	const char *device = NULL, *ring_file = NULL, *tag = NULL;
	const char *out = "flight.nl", *extract_from = NULL;
	uint64_t ring_bytes = 4ULL << 20;
	char errbuf[NETLAT_ERRBUF_SIZE];
	const struct netlat_rec_hdr *rec;
	struct netlat_source *src;
	struct history *h = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned int dumps = 0;
	bool dump_at_exit = false, draining = false, stopping = false;
	size_t len = 0;
	int c, r, status = 0;

	while ((c = getopt(argc, argv, "m:f:t:o:ed:x:h")) != -1) {
		switch (c) {
		case 'm':
			if (parse_size(optarg, &ring_bytes))
				return usage();
			break;
		case 'f':
			ring_file = optarg;
			break;
		case 't':
			if (!*optarg)
				return usage();
			tag = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'e':
			dump_at_exit = true;
			break;
		case 'd':
			device = optarg;
			break;
		case 'x':
			extract_from = optarg;
			break;
		default:
			return usage();
		}
	}
	if (optind < argc)
		return usage();
	if (extract_from)
		return extract(extract_from, out);

	src = netlat_open(device, errbuf);
	if (!src) {
		fprintf(stderr, "flight_min: %s\n", errbuf);
		return 1;
	}
	/* No SA_RESTART: a signal must interrupt the blocking read. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	netlat_set_timeout(src, 1000);

	for (;;) {
		if (stop_requested && !stopping) {
			/* Keep what was already read from the device, then end. */
			netlat_stop_reading(src);
			stopping = true;
		}
		if (dump_requested && !draining && !stopping) {
			/* First everything already in the kernel rings. */
			netlat_set_timeout(src, 0);
			draining = true;
		}
		r = netlat_next(src, &rec);
		if (r == -EAGAIN && draining) {
			dump_requested = 0;
			draining = false;
			netlat_set_timeout(src, 1000);
			if (h && dump(h, out, ++dumps) < 0)
				status = 1;
			continue;
		}
		if (r == -EINTR || r == -EAGAIN)
			continue;
		if (r <= 0)
			break;
		r = keep(&h, &len, rec, ring_file, ring_bytes, tag);
		if (r < 0) {
			status = 1;
			break;
		}
		if (r != 1 || draining || stopping)
			continue;
		/*
		 * The trigger: a file is in order, dump at once; from the device,
		 * records of other CPUs written before the marker may follow it
		 * in this read, so drain first, as for SIGUSR1.
		 */
		if (netlat_is_live(src))
			dump_requested = 1;
		else if (dump(h, out, ++dumps) < 0)
			status = 1;
	}
	if (r < 0 && status == 0) {
		fprintf(stderr, "flight_min: %s\n", netlat_errmsg(src));
		status = 1;
	}
	if (dump_at_exit && h && dump(h, out, ++dumps) < 0)
		status = 1;
	netlat_close(src);
	if (h)
		munmap(h, len);
	return status;
}
