// SPDX-License-Identifier: GPL-2.0
/*
 * netlat_bench: figures, not asserts.
 *
 *  marker_write  markers/s written by one pinned thread into /dev/netlat
 *                and, with the same payload and count, into ftrace's
 *                trace_marker (skipped if tracefs is absent).
 *  drain         records/s consumed from one full ring via read() and via
 *                the mmap protocol.
 *
 * Each figure is the median of -k repetitions, the two sides alternating,
 * because emulated CPUs are noisy. Losses are printed: they are exact.
 * Output lines start with "bench:". The configuration is restored at exit.
 *
 * usage: netlat_bench [-n markers] [-k repeats] [-r ring_bytes] [-c cpu]
 */
#include "netlat_util.h"

#include <sys/mount.h>
#include <sys/stat.h>

#define PAYLOAD 32	/* bytes of each marker */

static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

struct opts {
	uint64_t markers;
	unsigned int repeats;
	uint64_t ring_bytes;	/* 0: keep the current size */
	int cpu;
};

static double per_sec(uint64_t count, uint64_t ns)
{
	return ns ? (double)count * 1e9 / (double)ns : 0;
}

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "netlat_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint64_t dropped_on(int fd, int cpu)
{
	struct netlat_cpu_stats st;
	int err = nl_get_stats(fd, cpu, &st);

	if (err)
		die("GET_CPU_STATS", -err);
	return st.dropped;
}

/* Walk the records of a buffer as a consumer would: count them. */
static uint64_t touch_records(const unsigned char *p, size_t len)
{
	uint64_t n = 0;
	size_t off = 0;

	while (off + sizeof(struct netlat_rec_hdr) <= len) {
		const struct netlat_rec_hdr *h = (const void *)(p + off);

		if (h->magic != NETLAT_REC_MAGIC || !h->size)
			break;
		n += h->type != NETLAT_REC_STREAM;
		off += h->size;
	}
	return n;
}

/* read() until EAGAIN (fd is O_NONBLOCK): records read. */
static uint64_t drain_read(int fd, unsigned char *buf, size_t cap)
{
	uint64_t n = 0;
	ssize_t got;

	while ((got = read(fd, buf, cap)) > 0)
		n += touch_records(buf, (size_t)got);
	if (got < 0 && errno != EAGAIN)
		die("read", errno);
	return n;
}

/* The mmap consumer loop of <linux/netlat.h>: records consumed. */
static uint64_t drain_mmap(struct nl_ring *r)
{
	uint64_t prod = __atomic_load_n(&r->prod->prod, __ATOMIC_ACQUIRE);
	uint64_t cons = __atomic_load_n(&r->cons->cons, __ATOMIC_RELAXED);
	uint64_t n = 0;

	while (cons != prod) {
		const struct netlat_rec_hdr *h =
			(const void *)(r->data + (cons & (r->ring_bytes - 1)));

		if (h->magic != NETLAT_REC_MAGIC || !h->size)
			die("corrupt record in the mmap ring", EPROTO);
		n++;
		cons += h->size;
	}
	__atomic_store_n(&r->cons->cons, cons, __ATOMIC_RELEASE);
	return n;
}

/* Write @count markers; returns the nanoseconds spent in write(). */
static uint64_t write_markers(int fd, uint64_t count, const void *payload)
{
	uint64_t i, t0 = nl_mono_ns();

	for (i = 0; i < count; i++)
		if (write(fd, payload, PAYLOAD) != PAYLOAD)
			die("write", errno);
	return nl_mono_ns() - t0;
}

/* ---- ftrace's trace_marker -------------------------------------------- */

struct tracefs {
	int marker_fd;		/* -1: not available */
	char dir[64];
	char saved_on;		/* tracing_on before, '1' or '0' */
};

static int tracefs_file(const struct tracefs *t, const char *name, int flags)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	return open(path, flags | O_CLOEXEC);
}

static void tracefs_set_on(const struct tracefs *t, char on)
{
	int fd = tracefs_file(t, "tracing_on", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, &on, 1) != 1)
			fprintf(stderr, "netlat_bench: tracing_on: %s\n",
				strerror(errno));
		close(fd);
	}
}

static void tracefs_open(struct tracefs *t)
{
	unsigned int i;
	int fd;

	t->marker_fd = -1;
	for (i = 0; i < 2 * NL_ARRAY_SIZE(tracefs_dirs); i++) {
		const char *dir = tracefs_dirs[i % NL_ARRAY_SIZE(tracefs_dirs)];

		/* second pass: try to mount tracefs at the first place */
		if (i == NL_ARRAY_SIZE(tracefs_dirs))
			mount("tracefs", tracefs_dirs[0], "tracefs", 0, NULL);
		snprintf(t->dir, sizeof(t->dir), "%s", dir);
		t->marker_fd = tracefs_file(t, "trace_marker", O_WRONLY);
		if (t->marker_fd >= 0)
			break;
	}
	if (t->marker_fd < 0)
		return;
	t->saved_on = '1';
	fd = tracefs_file(t, "tracing_on", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, &t->saved_on, 1) != 1)
			t->saved_on = '1';
		close(fd);
	}
	tracefs_set_on(t, '1');
}

static void tracefs_close(struct tracefs *t)
{
	if (t->marker_fd < 0)
		return;
	tracefs_set_on(t, t->saved_on);
	close(t->marker_fd);
}

/* Events overwritten in ftrace's buffer of @cpu, or 0 if unknown. */
static uint64_t tracefs_overrun(const struct tracefs *t, int cpu)
{
	char name[64], line[128];
	unsigned long long v = 0;
	FILE *f;
	int fd;

	snprintf(name, sizeof(name), "per_cpu/cpu%d/stats", cpu);
	fd = tracefs_file(t, name, O_RDONLY);
	if (fd < 0)
		return 0;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "overrun: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* ---- the two benchmarks ------------------------------------------------- */

static void bench_marker_write(int fd, const struct netlat_info *info,
			       const struct opts *o, unsigned char *buf,
			       size_t cap)
{
	uint64_t per_fill = info->ring_bytes / NL_MARKER_SIZE(PAYLOAD) * 3 / 4;
	double *nl = calloc(o->repeats, sizeof(double));
	double *tm = calloc(o->repeats, sizeof(double));
	unsigned char payload[PAYLOAD];
	uint64_t lost = 0, overrun = 0;
	struct tracefs t;
	unsigned int rep;

	if (!nl || !tm)
		die("calloc", ENOMEM);
	nl_fill_pattern(payload, sizeof(payload), 1);
	tracefs_open(&t);
	for (rep = 0; rep < o->repeats; rep++) {
		uint64_t done = 0, ns = 0, d0 = dropped_on(fd, o->cpu);

		/* in ring-sized chunks, drained untimed: no record dropped */
		drain_read(fd, buf, cap);
		while (done < o->markers) {
			uint64_t n = o->markers - done < per_fill ?
				     o->markers - done : per_fill;

			ns += write_markers(fd, n, payload);
			drain_read(fd, buf, cap);
			done += n;
		}
		lost += dropped_on(fd, o->cpu) - d0;
		nl[rep] = per_sec(o->markers, ns);
		if (t.marker_fd >= 0) {
			uint64_t o0 = tracefs_overrun(&t, o->cpu);

			tm[rep] = per_sec(o->markers,
					  write_markers(t.marker_fd,
							o->markers, payload));
			overrun += tracefs_overrun(&t, o->cpu) - o0;
		}
		printf("bench: rep %u marker_write netlat=%.0f/s trace_marker=%.0f/s\n",
		       rep, nl[rep], tm[rep]);
	}
	if (t.marker_fd >= 0) {
		double a = nl_median(nl, o->repeats), b = nl_median(tm, o->repeats);

		printf("bench: marker_write netlat=%.0f/s trace_marker=%.0f/s ratio=%.2f netlat_lost=%llu trace_marker_overrun=%llu\n",
		       a, b, b ? a / b : 0, (unsigned long long)lost,
		       (unsigned long long)overrun);
	} else {
		printf("bench: marker_write netlat=%.0f/s trace_marker=skipped (no tracefs) netlat_lost=%llu\n",
		       nl_median(nl, o->repeats), (unsigned long long)lost);
	}
	tracefs_close(&t);
	free(nl);
	free(tm);
}

static void bench_drain(int fd, const struct netlat_info *info,
			const struct opts *o, unsigned char *buf, size_t cap)
{
	uint64_t fill = info->ring_bytes / NL_MARKER_SIZE(PAYLOAD);
	double *rd = calloc(o->repeats, sizeof(double));
	double *mm = calloc(o->repeats, sizeof(double));
	unsigned char payload[PAYLOAD];
	uint64_t lost = 0, short_reads = 0;
	struct nl_ring ring;
	unsigned int rep;
	int err;

	if (!rd || !mm)
		die("calloc", ENOMEM);
	nl_fill_pattern(payload, sizeof(payload), 2);
	/* the same file reads and maps: it is the one consumer */
	err = nl_ring_map(fd, info, o->cpu, &ring);
	if (err)
		die("mmap", -err);
	drain_read(fd, buf, cap);
	for (rep = 0; rep < o->repeats; rep++) {
		uint64_t d0 = dropped_on(fd, o->cpu), n, t0;

		write_markers(fd, fill, payload);
		t0 = nl_mono_ns();
		n = drain_read(fd, buf, cap);
		rd[rep] = per_sec(n, nl_mono_ns() - t0);
		short_reads += n != fill;

		write_markers(fd, fill, payload);
		t0 = nl_mono_ns();
		n = drain_mmap(&ring);
		mm[rep] = per_sec(n, nl_mono_ns() - t0);
		short_reads += n != fill;
		lost += dropped_on(fd, o->cpu) - d0;
		printf("bench: rep %u drain read=%.0f/s mmap=%.0f/s\n", rep,
		       rd[rep], mm[rep]);
	}
	nl_ring_unmap(&ring);
	{
		double a = nl_median(rd, o->repeats), b = nl_median(mm, o->repeats);

		printf("bench: drain records=%llu read=%.0f/s mmap=%.0f/s ratio=%.2f lost=%llu incomplete=%llu\n",
		       (unsigned long long)fill, a, b, a ? b / a : 0,
		       (unsigned long long)lost,
		       (unsigned long long)short_reads);
	}
	free(rd);
	free(mm);
}

int main(int argc, char **argv)
{
	struct opts o = { .markers = 200000, .repeats = 5, .cpu = -1 };
	struct netlat_info saved, info;
	size_t cap = 256 * 1024;
	unsigned char *buf;
	int fd, opt, err, cpus[1] = { 0 };

	while ((opt = getopt(argc, argv, "n:k:r:c:")) != -1) {
		switch (opt) {
		case 'n':
			o.markers = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			o.repeats = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			o.ring_bytes = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			o.cpu = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n markers] [-k repeats] [-r ring_bytes] [-c cpu]\n",
				argv[0]);
			return 2;
		}
	}
	if (!o.repeats || !o.markers) {
		fprintf(stderr, "netlat_bench: -n and -k must be positive\n");
		return 2;
	}
	if (o.cpu < 0) {
		if (nl_usable_cpus(cpus, 1) < 1)
			die("sched_getaffinity", errno);
		o.cpu = cpus[0];
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	fd = nl_open(O_NONBLOCK);
	if (fd < 0)
		die(NETLAT_DEVICE_PATH, errno);
	err = nl_get_info(fd, &saved);
	if (err)
		die("GET_INFO", -err);
	/* a known state: empty rings, counters at zero, running */
	err = nl_reconfigure(fd, o.ring_bytes ? o.ring_bytes : saved.ring_bytes,
			     o.ring_bytes ? o.ring_bytes / 4 : saved.watermark,
			     saved.flush_ms, true);
	if (err)
		die("configuring", -err);
	err = nl_get_info(fd, &info);
	if (err)
		die("GET_INFO", -err);
	err = nl_pin_thread(o.cpu);
	if (err)
		die("sched_setaffinity", -err);
	buf = malloc(cap);
	if (!buf)
		die("malloc", ENOMEM);

	printf("bench: config ring_bytes=%llu nr_cpus=%u cpu=%d markers=%llu repeats=%u payload=%d\n",
	       (unsigned long long)info.ring_bytes, info.nr_cpus, o.cpu,
	       (unsigned long long)o.markers, o.repeats, PAYLOAD);
	bench_marker_write(fd, &info, &o, buf, cap);
	bench_drain(fd, &info, &o, buf, cap);

	err = nl_reconfigure(fd, saved.ring_bytes, saved.watermark,
			     saved.flush_ms, saved.state & NETLAT_STATE_RUNNING);
	if (err)
		fprintf(stderr, "netlat_bench: restoring the configuration: %s\n",
			strerror(-err));
	free(buf);
	close(fd);
	return err ? 1 : 0;
}
