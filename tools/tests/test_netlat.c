// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side tests of libnetlat and the netlat command on synthetic
 * captures; no module needed. Usage: test_netlat PATH-TO-NETLAT
 * Prints one line per test and ends with "N passed, N failed".
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/statfs.h>
#include <mntent.h>
#include <linux/magic.h>

#include "libnetlat.h"
#include "capture.h"
#include "json_check.h"
#include "run.h"
#include "../hist.h"
#include "../cgpath.h"

/* ==== harness ============================================================ */

static int check_failures;	/* in the running test */
static char skip_reason[256];	/* set by skip_test(): the test did not run */

static void skip_test(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void skip_test(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
}

static bool check_true(bool ok, const char *expr, const char *file, int line)
{
	if (!ok) {
		check_failures++;
		fprintf(stderr, "    %s:%d: failed: %s\n", file, line, expr);
	}
	return ok;
}

static bool check_u64(uint64_t a, uint64_t b, const char *ea, const char *eb,
		      const char *file, int line)
{
	if (a != b) {
		check_failures++;
		fprintf(stderr, "    %s:%d: %s == %llu, expected %s == %llu\n", file, line,
			ea, (unsigned long long)a, eb, (unsigned long long)b);
	}
	return a == b;
}

static bool check_contains(const char *hay, const char *needle, const char *ehay,
			   const char *file, int line)
{
	bool ok = hay && strstr(hay, needle);

	if (!ok) {
		check_failures++;
		fprintf(stderr, "    %s:%d: %s does not contain \"%s\": \"%s\"\n", file,
			line, ehay, needle, hay ? hay : "(null)");
	}
	return ok;
}

#define CHECK(cond)		check_true(!!(cond), #cond, __FILE__, __LINE__)
#define CHECK_U64(a, b)		check_u64((a), (b), #a, #b, __FILE__, __LINE__)
#define CHECK_HAS(hay, needle)	check_contains((hay), (needle), #hay, __FILE__, __LINE__)

/* ==== fixtures =========================================================== */

static char tmpdir[] = "/tmp/netlat-test.XXXXXX";
static char *netlat_bin;

#define MAX_TMP_PATHS 1024	/* names the tests use; tmp_path() aborts past it */

static char *tmp_paths[MAX_TMP_PATHS];
static size_t nr_tmp_paths;

/* The path of @name in the test directory, valid until the tests end. */
static const char *tmp_path(const char *name)
{
	size_t i, len = strlen(tmpdir) + 1 + strlen(name) + 1;

	for (i = 0; i < nr_tmp_paths; i++)
		if (!strcmp(tmp_paths[i] + strlen(tmpdir) + 1, name))
			return tmp_paths[i];
	if (nr_tmp_paths == MAX_TMP_PATHS || !(tmp_paths[i] = malloc(len))) {
		/* said, not only aborted: a forked child's abort said nothing */
		fprintf(stderr, "tmp_path(\"%s\"): %s\n", name,
			nr_tmp_paths == MAX_TMP_PATHS ?
			"more names than MAX_TMP_PATHS" : "out of memory");
		abort();
	}
	snprintf(tmp_paths[i], len, "%s/%s", tmpdir, name);
	return tmp_paths[nr_tmp_paths++];
}

/* Deterministic xorshift64: failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static uint64_t monotonic_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *write_capture(const struct capture *c, const char *name)
{
	const char *path = tmp_path(name);

	if (cap_write(c, path))
		CHECK(!"cannot write capture");
	return path;
}

static struct netlat_source *open_path(const char *path)
{
	char errbuf[NETLAT_ERRBUF_SIZE];
	struct netlat_source *src = netlat_open(path, errbuf);

	if (!src)
		fprintf(stderr, "    open %s: %s\n", path, errbuf);
	return src;
}

/* Read @src to the end: records returned, and the final code in *@code. */
static size_t drain(struct netlat_source *src, int *code)
{
	const struct netlat_rec_hdr *rec;
	size_t n = 0;
	int r;

	while ((r = netlat_next(src, &rec)) == 1)
		n++;
	*code = r;
	return n;
}

/* The base capture most tests start from: every record type, 4 CPUs. */
static void build_base(struct capture *c)
{
	cap_stream(c, 4);					/* offset 0 */
	cap_marker(c, 0, 0, TEST_MONO_NS + 100, "hello", 5);	/* 80 */
	cap_lost(c, 1, 8, TEST_MONO_NS + 200, 5, 3);		/* 128 */
	cap_marker(c, 2, 7, TEST_MONO_NS + 300, "abc", 3);	/* 168 */
}

/* ==== decoding =========================================================== */

static void check_stream_fields(const struct netlat_rec_stream *s, uint32_t nr_cpus)
{
	CHECK_U64(s->hdr.type, NETLAT_REC_STREAM);
	CHECK_U64(s->abi_version, NETLAT_ABI_VERSION);
	CHECK_U64(s->nr_cpus, nr_cpus);
	CHECK_U64(s->clock_id, 1);
	CHECK_U64(s->flags, NETLAT_STREAM_RUNNING);
	CHECK_U64(s->ring_bytes, 1 << 20);
	CHECK_U64(s->realtime_ns, TEST_REALTIME_NS);
	CHECK_U64(s->mono_ns, TEST_MONO_NS);
}

static void check_marker(const struct netlat_rec_hdr *h, unsigned int cpu, uint64_t seq,
			 const void *data, uint32_t len)
{
	const struct netlat_rec_marker *m = (const void *)h;

	if (!CHECK_U64(h->type, NETLAT_REC_MARKER))
		return;
	CHECK_U64(h->cpu, cpu);
	CHECK_U64(h->seq, seq);
	CHECK_U64(m->pid, 1000 + cpu);
	CHECK_U64(m->tid, 2000 + cpu);
	CHECK_U64(m->len, len);
	CHECK(m->len == len && !memcmp(m->data, data, len));
	CHECK_U64(h->size % NETLAT_REC_ALIGN, 0);
}

/* Every type, decoded field by field, from @src built like the test below. */
static void check_every_type(struct netlat_source *src, const unsigned char *all_bytes,
			     const char *big)
{
	const struct netlat_rec_hdr *h;
	const struct netlat_rec_lost *l;

	CHECK(netlat_stream(src) == NULL);
	CHECK_U64(netlat_next(src, &h), 1);
	check_stream_fields((const void *)h, 4);
	CHECK(netlat_stream(src) && netlat_stream(src)->nr_cpus == 4);

	CHECK_U64(netlat_next(src, &h), 1);
	check_marker(h, 0, 0, "hello", 5);
	CHECK_U64(h->ts_ns, TEST_MONO_NS + 100);
	CHECK_U64(netlat_wall_ns(netlat_stream(src), h->ts_ns), TEST_REALTIME_NS + 100);

	CHECK_U64(netlat_next(src, &h), 1);
	l = (const void *)h;
	CHECK_U64(h->type, NETLAT_REC_LOST);
	CHECK_U64(h->seq, 8);
	CHECK_U64(l->count, 5);
	CHECK_U64(l->first_seq, 3);

	CHECK_U64(netlat_next(src, &h), 1);
	check_marker(h, 2, 7, all_bytes, 256);
	CHECK_U64(netlat_next(src, &h), 1);
	check_marker(h, 3, 1, big, NETLAT_MARKER_MAX);
	CHECK_U64(h->size, NETLAT_REC_MAX_SIZE);

	CHECK_U64(netlat_next(src, &h), 1);
	CHECK_U64(h->type, 77);
	CHECK_U64(h->size, 48);
	CHECK(netlat_type_name(h->type) == NULL);

	CHECK_U64(netlat_next(src, &h), 0);
	CHECK_U64(netlat_next(src, &h), 0);
	CHECK(!netlat_errmsg(src)[0]);
}

static void build_every_type(struct capture *c, unsigned char *all_bytes, char *big)
{
	int i;

	for (i = 0; i < 256; i++)
		all_bytes[i] = (unsigned char)i;
	memset(big, 'z', NETLAT_MARKER_MAX);
	cap_stream(c, 4);
	cap_marker(c, 0, 0, TEST_MONO_NS + 100, "hello", 5);
	cap_lost(c, 1, 8, TEST_MONO_NS + 200, 5, 3);
	cap_marker(c, 2, 7, TEST_MONO_NS + 300, all_bytes, 256);
	cap_marker(c, 3, 1, TEST_MONO_NS + 400, big, NETLAT_MARKER_MAX);
	cap_other(c, 77, 1, 9, TEST_MONO_NS + 500, 48);
}

static void test_decode_every_type_from_file(void)
{
	unsigned char all_bytes[256];
	char big[NETLAT_MARKER_MAX];
	struct capture c = { 0 };
	struct netlat_source *src;

	build_every_type(&c, all_bytes, big);
	src = open_path(write_capture(&c, "types.nl"));
	if (CHECK(src)) {
		CHECK(!netlat_is_live(src));
		check_every_type(src, all_bytes, big);
		CHECK_U64(netlat_offset(src), c.len);
		netlat_close(src);
	}
	cap_free(&c);
}

/* A pipe delivers the bytes in arbitrary pieces, like `cat cap | netlat`. */
static void test_decode_every_type_from_pipe(void)
{
	unsigned char all_bytes[256];
	char big[NETLAT_MARKER_MAX];
	struct capture c = { 0 };
	struct netlat_source *src;
	int fds[2];
	pid_t pid;

	build_every_type(&c, all_bytes, big);
	if (!CHECK(pipe(fds) == 0))
		return;
	pid = fork();
	if (pid == 0) {
		size_t i;

		close(fds[0]);
		for (i = 0; i < c.len; i += 7)	/* odd-sized pieces */
			if (write(fds[1], c.buf + i, c.len - i < 7 ? c.len - i : 7) < 0)
				_exit(1);
		_exit(0);
	}
	close(fds[1]);
	src = netlat_open_fd(fds[0], "pipe", NULL);
	if (CHECK(src)) {
		netlat_set_timeout(src, 5000);
		CHECK(netlat_is_live(src));
		check_every_type(src, all_bytes, big);
		netlat_close(src);
	}
	close(fds[0]);
	waitpid(pid, NULL, 0);
	cap_free(&c);
}

/* Newer writers append fields: longer STREAM and padded records still read. */
static void test_longer_records_are_accepted(void)
{
	struct capture c = { 0 };
	struct netlat_source *src;
	const struct netlat_rec_hdr *h;
	int code;

	cap_stream_sized(&c, 2, sizeof(struct netlat_rec_stream) + 16);
	cap_marker(&c, 1, 0, TEST_MONO_NS, "x", 1);
	cap_hdr_at(&c, c.len - 48)->size = 56;
	cap_bytes(&c, "\0\0\0\0\0\0\0\0", 8);	/* the record now has 8 spare bytes */
	src = open_path(write_capture(&c, "longer.nl"));
	if (!CHECK(src))
		return;
	CHECK_U64(netlat_next(src, &h), 1);
	check_stream_fields(netlat_stream(src), 2);
	CHECK_U64(netlat_next(src, &h), 1);
	check_marker(h, 1, 0, "x", 1);
	CHECK_U64(drain(src, &code), 0);
	CHECK_U64(code, 0);
	netlat_close(src);
	cap_free(&c);
}

/* `cat a b > c`: the second STREAM record takes over (here with more CPUs). */
static void test_concatenated_captures(void)
{
	struct capture c = { 0 };
	struct netlat_source *src;
	const struct netlat_rec_hdr *h;

	cap_stream(&c, 2);
	cap_marker(&c, 1, 0, TEST_MONO_NS + 1, "a", 1);
	cap_stream(&c, 8);
	cap_marker(&c, 7, 0, TEST_MONO_NS + 2, "b", 1);
	src = open_path(write_capture(&c, "concat.nl"));
	if (!CHECK(src))
		return;
	CHECK_U64(netlat_next(src, &h), 1);
	CHECK_U64(netlat_next(src, &h), 1);
	CHECK_U64(netlat_next(src, &h), 1);
	CHECK_U64(h->type, NETLAT_REC_STREAM);
	CHECK_U64(netlat_stream(src)->nr_cpus, 8);
	CHECK_U64(netlat_next(src, &h), 1);
	check_marker(h, 7, 0, "b", 1);
	CHECK_U64(netlat_next(src, &h), 0);
	netlat_close(src);
	cap_free(&c);
}

/* ==== errors ============================================================= */

enum mutation {
	TRUNCATE, SET_SIZE, SET_TYPE, SET_MAGIC, SET_VERSION, SET_CPU,
	SET_MARKER_LEN, SET_STREAM_ABI, SET_STREAM_NR_CPUS,
};

/* Offsets of the base capture's records, by index. */
static const size_t base_offsets[] = { 0, 80, 128, 168 };

struct bad_case {
	const char *what;
	enum mutation mutation;
	int record;		/* index into base_offsets */
	unsigned long value;
	int code;
	size_t good;		/* records returned before the error */
	const char *message;
};

static const struct bad_case bad_cases[] = {
	{ "empty file", TRUNCATE, 0, 0, ENOMSG, 0, "not a netlat capture (empty)" },
	{ "shorter than a header", TRUNCATE, 0, 10, ENOMSG, 0, "not a netlat capture" },
	{ "stream header cut", TRUNCATE, 0, 60, ENODATA, 0,
	  "truncated capture: record at offset 0 needs 80 bytes, only 60 present" },
	{ "foreign magic", SET_MAGIC, 0, 0x7f, ENOMSG, 0, "not a netlat capture (bad magic 0x7f at offset 0)" },
	{ "first record not STREAM", SET_TYPE, 0, NETLAT_REC_MARKER, ENOMSG, 0,
	  "first record has type 3" },
	{ "header ABI version 2", SET_VERSION, 0, 2, EPROTONOSUPPORT, 0,
	  "unsupported ABI version 2" },
	{ "stream ABI version 3", SET_STREAM_ABI, 0, 3, EPROTONOSUPPORT, 0,
	  "unsupported ABI version 3" },
	{ "stream with no CPUs", SET_STREAM_NR_CPUS, 0, 0, ENOMSG, 0, "nr_cpus 0" },
	{ "stream header too small", SET_SIZE, 0, 24, ENOMSG, 0, "stream header of 24 bytes" },
	{ "truncated last record", TRUNCATE, 0, 216 - 5, ENODATA, 3,
	  "truncated capture: record at offset 168 needs 48 bytes, only 43 present" },
	{ "truncated inside a header", TRUNCATE, 0, 168 + 10, ENODATA, 3,
	  "truncated capture: record at offset 168" },
	{ "bad magic", SET_MAGIC, 2, 0, EBADMSG, 2, "corrupt record at offset 128: bad magic 0x00" },
	{ "record ABI version 2", SET_VERSION, 2, 2, EPROTONOSUPPORT, 2,
	  "unsupported ABI version 2" },
	{ "size below a header", SET_SIZE, 1, 16, EBADMSG, 1, "offset 80: bad size 16" },
	{ "size not aligned", SET_SIZE, 1, 44, EBADMSG, 1, "bad size 44" },
	{ "size above the maximum", SET_SIZE, 1, 520, EBADMSG, 1, "bad size 520" },
	{ "cpu beyond nr_cpus", SET_CPU, 3, 4, EBADMSG, 3, "cpu 4 but nr_cpus is 4" },
	{ "marker len 0", SET_MARKER_LEN, 1, 0, EBADMSG, 1, "MARKER len 0" },
	{ "marker len beyond the record", SET_MARKER_LEN, 1, 9, EBADMSG, 1,
	  "MARKER len 9 in a 48-byte record" },
	{ "LOST too small", SET_SIZE, 2, 24, EBADMSG, 2, "LOST of 24 bytes" },
};

static void apply_mutation(struct capture *c, const struct bad_case *bc)
{
	struct netlat_rec_hdr *h = cap_hdr_at(c, base_offsets[bc->record]);

	switch (bc->mutation) {
	case TRUNCATE:
		c->len = bc->value;
		break;
	case SET_SIZE:
		h->size = (uint16_t)bc->value;
		break;
	case SET_TYPE:
		h->type = (uint16_t)bc->value;
		break;
	case SET_MAGIC:
		h->magic = (uint8_t)bc->value;
		break;
	case SET_VERSION:
		h->version = (uint8_t)bc->value;
		break;
	case SET_CPU:
		h->cpu = (uint16_t)bc->value;
		break;
	case SET_MARKER_LEN:
		((struct netlat_rec_marker *)h)->len = (uint32_t)bc->value;
		break;
	case SET_STREAM_ABI:
		((struct netlat_rec_stream *)h)->abi_version = (uint32_t)bc->value;
		break;
	case SET_STREAM_NR_CPUS:
		((struct netlat_rec_stream *)h)->nr_cpus = (uint32_t)bc->value;
		break;
	}
}

static const struct bad_case *find_bad_case(const char *what)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		if (!strcmp(bad_cases[i].what, what))
			return &bad_cases[i];
	abort();	/* a typo in a test */
}

static const char *write_bad_case(const struct bad_case *bc)
{
	struct capture c = { 0 };
	const char *path;

	build_base(&c);
	apply_mutation(&c, bc);
	path = write_capture(&c, "bad.nl");
	cap_free(&c);
	return path;
}

static void test_bad_captures_give_clear_errors(void)
{
	const struct netlat_rec_hdr *h;
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct netlat_source *src = open_path(write_bad_case(bc));
		int code;
		int before = check_failures;

		if (!CHECK(src))
			continue;
		CHECK_U64(drain(src, &code), bc->good);
		CHECK_U64(-code, bc->code);
		CHECK_HAS(netlat_errmsg(src), bc->message);
		CHECK_HAS(netlat_errmsg(src), "bad.nl: ");
		/* Final: asking again gives the same error. */
		CHECK_U64(-netlat_next(src, &h), bc->code);
		netlat_close(src);
		if (check_failures != before)
			fprintf(stderr, "    (case: %s)\n", bc->what);
	}
}

static void test_foreign_files(void)
{
	static const char text[] = "#!/bin/sh\necho this is not a netlat capture\n";
	unsigned char noise[4096];
	struct netlat_source *src;
	struct capture c = { 0 };
	size_t i;
	int code;

	cap_bytes(&c, text, sizeof(text) - 1);
	src = open_path(write_capture(&c, "text.nl"));
	if (CHECK(src)) {
		CHECK_U64(drain(src, &code), 0);
		CHECK_U64(-code, ENOMSG);
		CHECK_HAS(netlat_errmsg(src), "not a netlat capture");
		netlat_close(src);
	}
	cap_free(&c);

	for (i = 0; i < sizeof(noise); i++)
		noise[i] = (unsigned char)rnd();
	cap_bytes(&c, noise, sizeof(noise));
	src = open_path(write_capture(&c, "noise.nl"));
	if (CHECK(src)) {
		CHECK_U64(drain(src, &code), 0);
		CHECK(code < 0);
		netlat_close(src);
	}
	cap_free(&c);

	CHECK(netlat_open(tmp_path("does-not-exist"), NULL) == NULL && errno == ENOENT);
}

static void test_device_error_messages(void)
{
	char errbuf[NETLAT_ERRBUF_SIZE];

	CHECK(netlat_open("/dev/netlat-test-missing", errbuf) == NULL);
	CHECK_HAS(errbuf, "no /dev/netlat-test-missing: is the netlat module loaded?");
	CHECK(netlat_dev_open("/dev/netlat-test-missing", O_RDONLY, errbuf) == -ENOENT);
	CHECK_HAS(errbuf, "is the netlat module loaded?");
	CHECK_HAS(netlat_dev_strerror(EPERM), "permission denied: need CAP_NET_ADMIN or CAP_PERFMON");
	CHECK_HAS(netlat_dev_strerror(EACCES), "permission denied: need CAP_NET_ADMIN or CAP_PERFMON");
	CHECK_HAS(netlat_dev_strerror(EBUSY), "another reader is consuming");
}

/* ==== sequence tracking ================================================== */

static void seq_feed(struct netlat_seq *t, struct capture *c, int *gaps,
		     struct netlat_seq_gap *last_gap)
{
	size_t off = 0;

	while (off < c->len) {
		const struct netlat_rec_hdr *h = cap_hdr_at(c, off);

		if (netlat_seq_add(t, h, last_gap) == 1)
			(*gaps)++;
		off += h->size;
	}
}

static void test_seq_tracking(void)
{
	struct netlat_seq *t = netlat_seq_new();
	struct netlat_seq_stats st;
	struct netlat_seq_gap gap = { 0 };
	struct capture c = { 0 };
	int gaps = 0;

	cap_stream(&c, 4);
	/* cpu0: 5 drops explained by LOST (seq 3..7), LOST itself is 8. */
	cap_marker(&c, 0, 0, 1, "a", 1);
	cap_marker(&c, 0, 1, 2, "a", 1);
	cap_marker(&c, 0, 2, 3, "a", 1);
	cap_lost(&c, 0, 8, 4, 5, 3);
	cap_marker(&c, 0, 9, 5, "a", 1);
	/* cpu2 starts mid-life: its first record is the baseline. */
	cap_marker(&c, 2, 100, 6, "a", 1);
	cap_lost(&c, 2, 103, 7, 2, 101);
	seq_feed(t, &c, &gaps, &gap);
	CHECK_U64(gaps, 0);
	netlat_seq_cpu_stats(t, 0, &st);
	CHECK_U64(st.records, 5);
	CHECK_U64(st.lost, 5);
	CHECK_U64(st.gaps, 0);
	cap_free(&c);

	/* cpu1: 10, 11, 13: one record vanished without a LOST record. */
	cap_marker(&c, 1, 10, 8, "a", 1);
	cap_marker(&c, 1, 11, 9, "a", 1);
	cap_marker(&c, 1, 13, 10, "a", 1);
	seq_feed(t, &c, &gaps, &gap);
	CHECK_U64(gaps, 1);
	CHECK_U64(gap.cpu, 1);
	CHECK_U64(gap.expected, 12);
	CHECK_U64(gap.seq, 13);
	cap_free(&c);

	/* A LOST whose first_seq does not follow, and a seq going backwards. */
	cap_lost(&c, 2, 110, 11, 3, 105);
	cap_marker(&c, 0, 5, 12, "a", 1);
	seq_feed(t, &c, &gaps, &gap);
	CHECK_U64(gaps, 3);
	CHECK_U64(gap.expected, 10);
	CHECK_U64(gap.seq, 5);
	cap_free(&c);

	/* A new stream: new baselines, no gap. */
	cap_stream(&c, 4);
	cap_marker(&c, 0, 500, 13, "a", 1);
	seq_feed(t, &c, &gaps, &gap);
	CHECK_U64(gaps, 3);

	netlat_seq_total(t, &st);
	CHECK_U64(st.records, 13);
	CHECK_U64(st.lost, 10);
	CHECK_U64(st.gaps, 3);
	CHECK_U64(netlat_seq_nr_cpus(t), 3);
	netlat_seq_free(t);
	cap_free(&c);
}

/* ==== merge ============================================================== */

/* A descriptor whose every read() returns one written batch, like the device. */
static bool batch_pipe(int fds[2])
{
	return CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds) == 0);
}

static void send_batch(int fd, struct capture *batch)
{
	CHECK(write(fd, batch->buf, batch->len) == (ssize_t)batch->len);
	cap_free(batch);
}

/* Next record of @m, expecting cpu and ts; -EAGAIN-free path. */
static void expect_merged(struct netlat_merge *m, unsigned int cpu, uint64_t ts)
{
	const struct netlat_rec_hdr *h;
	int r = netlat_merge_next(m, &h);

	if (CHECK_U64(r, 1)) {
		CHECK_U64(h->cpu, cpu);
		CHECK_U64(h->ts_ns, ts);
	}
}

static void expect_nothing_yet(struct netlat_merge *m)
{
	const struct netlat_rec_hdr *h;

	CHECK_U64(-netlat_merge_next(m, &h), EAGAIN);
}

#define MS	1000000ULL

/*
 * Records are held while an active CPU has nothing queued, released when
 * every active CPU has something queued, or when they are older than the
 * hold window. Timestamps far in the future keep the wall clock out of it.
 */
static void test_merge_holds_and_releases(void)
{
	uint64_t base = monotonic_now_ns() + 3600000 * MS;
	struct capture b = { 0 };
	struct netlat_source *src;
	struct netlat_merge *m;
	const struct netlat_rec_hdr *h;
	int fds[2];

	if (!batch_pipe(fds))
		return;
	src = netlat_open_fd(fds[0], "batches", NULL);
	m = netlat_merge_new(src, 1000 * MS);
	netlat_set_timeout(src, 20);

	cap_stream(&b, 2);
	cap_marker(&b, 0, 0, base, "a", 1);
	cap_marker(&b, 1, 0, base, "b", 1);
	send_batch(fds[1], &b);
	CHECK_U64(netlat_merge_next(m, &h), 1);
	CHECK_U64(h->type, NETLAT_REC_STREAM);
	expect_merged(m, 0, base);
	expect_nothing_yet(m);		/* cpu0 might still log at ts == base */

	cap_marker(&b, 0, 1, base + 100 * MS, "a", 1);
	cap_marker(&b, 0, 2, base + 200 * MS, "a", 1);
	send_batch(fds[1], &b);
	expect_merged(m, 1, base);
	expect_nothing_yet(m);		/* cpu1 is empty: hold cpu0 */

	cap_marker(&b, 1, 1, base + 150 * MS, "b", 1);
	send_batch(fds[1], &b);
	expect_merged(m, 0, base + 100 * MS);
	expect_merged(m, 1, base + 150 * MS);
	expect_nothing_yet(m);

	cap_marker(&b, 0, 3, base + 2000 * MS, "a", 1);
	send_batch(fds[1], &b);
	expect_merged(m, 0, base + 200 * MS);	/* over the hold window */
	expect_nothing_yet(m);

	close(fds[1]);
	expect_merged(m, 0, base + 2000 * MS);
	CHECK_U64(netlat_merge_next(m, &h), 0);
	CHECK_U64(netlat_merge_late(m), 0);
	netlat_merge_free(m);
	netlat_close(src);
	close(fds[0]);
}

/* An idle device must not hold records forever: the wall clock moves on. */
static void test_merge_releases_when_idle(void)
{
	uint64_t old = monotonic_now_ns() - 2000 * MS;
	struct capture b = { 0 };
	struct netlat_source *src;
	struct netlat_merge *m;
	const struct netlat_rec_hdr *h;
	int fds[2], r;

	if (!batch_pipe(fds))
		return;
	src = netlat_open_fd(fds[0], "batches", NULL);
	m = netlat_merge_new(src, 1000 * MS);
	netlat_set_timeout(src, 20);
	cap_stream(&b, 2);
	cap_marker(&b, 0, 0, old, "a", 1);
	cap_marker(&b, 1, 0, old, "b", 1);
	cap_marker(&b, 0, 1, old + 100 * MS, "a", 1);
	send_batch(fds[1], &b);
	CHECK_U64(netlat_merge_next(m, &h), 1);
	expect_merged(m, 0, old);
	expect_merged(m, 1, old);
	/* cpu1 is empty, but the next record is 1.9 s old by the clock. */
	do
		r = netlat_merge_next(m, &h);
	while (r == -EAGAIN);
	if (CHECK_U64(r, 1))
		CHECK_U64(h->ts_ns, old + 100 * MS);
	netlat_merge_free(m);
	netlat_close(src);
	close(fds[0]);
	close(fds[1]);
}

/* A CPU first seen after younger records left: returned anyway, counted. */
static void test_merge_counts_late_records(void)
{
	uint64_t base = monotonic_now_ns() + 3600000 * MS;
	struct capture b = { 0 };
	struct netlat_source *src;
	struct netlat_merge *m;
	const struct netlat_rec_hdr *h;
	int fds[2];

	if (!batch_pipe(fds))
		return;
	src = netlat_open_fd(fds[0], "batches", NULL);
	m = netlat_merge_new(src, 1000 * MS);
	cap_stream(&b, 2);
	cap_marker(&b, 0, 0, base, "a", 1);
	cap_marker(&b, 0, 1, base + 10 * MS, "a", 1);
	send_batch(fds[1], &b);
	cap_marker(&b, 1, 0, base + 5 * MS, "b", 1);
	send_batch(fds[1], &b);
	close(fds[1]);
	CHECK_U64(netlat_merge_next(m, &h), 1);
	expect_merged(m, 0, base);
	expect_merged(m, 0, base + 10 * MS);
	expect_merged(m, 1, base + 5 * MS);
	CHECK_U64(netlat_merge_next(m, &h), 0);
	CHECK_U64(netlat_merge_late(m), 1);
	netlat_merge_free(m);
	netlat_close(src);
	close(fds[0]);
}

/* A later STREAM is a barrier; a truncated tail is reported after the rest. */
static void test_merge_barrier_then_error(void)
{
	struct capture c = { 0 };
	struct netlat_source *src;
	struct netlat_merge *m;
	const struct netlat_rec_hdr *h;

	cap_stream(&c, 2);
	cap_marker(&c, 0, 0, TEST_MONO_NS + 5, "a", 1);
	cap_marker(&c, 1, 0, TEST_MONO_NS + 1, "b", 1);
	cap_stream(&c, 2);
	cap_marker(&c, 0, 1, TEST_MONO_NS + 3, "a", 1);
	cap_marker(&c, 1, 1, TEST_MONO_NS + 2, "b", 1);
	c.len -= 4;
	src = open_path(write_capture(&c, "barrier.nl"));
	if (!CHECK(src))
		return;
	m = netlat_merge_new(src, NETLAT_HOLD_NS_DEFAULT);
	CHECK_U64(netlat_merge_next(m, &h), 1);
	expect_merged(m, 1, TEST_MONO_NS + 1);
	expect_merged(m, 0, TEST_MONO_NS + 5);
	CHECK_U64(netlat_merge_next(m, &h), 1);
	CHECK_U64(h->type, NETLAT_REC_STREAM);
	expect_merged(m, 0, TEST_MONO_NS + 3);
	CHECK_U64(-netlat_merge_next(m, &h), ENODATA);
	CHECK_HAS(netlat_errmsg(src), "truncated capture");
	netlat_merge_free(m);
	netlat_close(src);
	cap_free(&c);
}

/* ---- merge against a model of the device's read() ---- */

#define SIM_CPUS	4
#define SIM_RECORDS	4000
#define SIM_ROOM	4096		/* bytes per read() */
#define SIM_READ_NS	(50 * 1000ULL)	/* time between read()s */
#define SIM_DRAIN_NS	(10 * 1000ULL)	/* per CPU visited: rings fill meanwhile */

struct sim_record {
	uint16_t cpu;
	uint64_t seq, ts;
	uint32_t len;
};

/* Per-CPU streams of records with bursts and idle periods (one over 1 s). */
static size_t sim_generate(struct sim_record *recs, size_t *per_cpu_start)
{
	size_t n = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < SIM_CPUS; cpu++) {
		uint64_t ts = TEST_MONO_NS + rnd_below(1000);
		size_t i, count = SIM_RECORDS / SIM_CPUS;

		per_cpu_start[cpu] = n;
		for (i = 0; i < count; i++, n++) {
			recs[n] = (struct sim_record){ (uint16_t)cpu, i, ts, 1 + (uint32_t)rnd_below(64) };
			ts += 1000 + rnd_below(40000);
			if (rnd_below(100) == 0)
				ts += rnd_below(20 * MS);
			if (cpu == 2 && i == count / 2)
				ts += 1500 * MS;
		}
	}
	per_cpu_start[SIM_CPUS] = n;
	return n;
}

/*
 * The module's read(): visit the CPUs from a rotating start, copying each
 * ring's records up to the time of the visit while they fit the buffer.
 */
static void sim_read(const struct sim_record *recs, size_t *next, const size_t *end,
		     uint64_t now, unsigned int start, struct capture *batch)
{
	static const char payload[64] = "payload";
	size_t room = SIM_ROOM - batch->len;
	unsigned int i;

	for (i = 0; i < SIM_CPUS; i++) {
		unsigned int cpu = (start + i) % SIM_CPUS;
		uint64_t visit = now + i * SIM_DRAIN_NS;

		while (next[cpu] < end[cpu] && recs[next[cpu]].ts <= visit) {
			const struct sim_record *r = &recs[next[cpu]];
			size_t size = (sizeof(struct netlat_rec_marker) + r->len + 7) & ~7UL;

			if (size > room)
				break;
			cap_marker(batch, r->cpu, r->seq, r->ts, payload, r->len);
			room -= size;
			next[cpu]++;
		}
	}
}

/* Child: write the simulated read() batches, one message each. */
static void sim_write_batches(int fd, const struct sim_record *recs, const size_t *start)
{
	size_t next[SIM_CPUS], left = start[SIM_CPUS];
	struct capture batch = { 0 };
	/* The first read() comes after every CPU's first record. */
	uint64_t now = TEST_MONO_NS + 1000;
	unsigned int k = 0, cpu;

	for (cpu = 0; cpu < SIM_CPUS; cpu++)
		next[cpu] = start[cpu];
	cap_stream(&batch, SIM_CPUS);
	while (left) {
		sim_read(recs, next, start + 1, now, k++ % SIM_CPUS, &batch);
		/* An empty read() would block: nothing to send. */
		if (batch.len && write(fd, batch.buf, batch.len) != (ssize_t)batch.len)
			_exit(1);
		cap_free(&batch);
		for (left = 0, cpu = 0; cpu < SIM_CPUS; cpu++)
			left += start[cpu + 1] - next[cpu];
		now += SIM_READ_NS;
	}
	_exit(0);
}

static bool key_before(const struct netlat_rec_hdr *a, const struct netlat_rec_hdr *b)
{
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu;
	return a->seq < b->seq;
}

static void test_merge_orders_simulated_device(void)
{
	static struct sim_record recs[SIM_RECORDS];
	size_t start[SIM_CPUS + 1], n, got = 0, next_seq[SIM_CPUS] = { 0 };
	struct netlat_rec_hdr prev = { 0 };
	const struct netlat_rec_hdr *h;
	struct netlat_source *src;
	struct netlat_merge *m;
	bool ordered = true, complete = true;
	int fds[2], r;
	pid_t pid;

	n = sim_generate(recs, start);
	if (!batch_pipe(fds))
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		sim_write_batches(fds[1], recs, start);
	}
	close(fds[1]);
	src = netlat_open_fd(fds[0], "simulated", NULL);
	m = netlat_merge_new(src, NETLAT_HOLD_NS_DEFAULT);
	CHECK_U64(netlat_merge_next(m, &h), 1);
	while ((r = netlat_merge_next(m, &h)) == 1) {
		ordered &= got == 0 || key_before(&prev, h);
		complete &= h->seq == next_seq[h->cpu]++;
		prev = *h;
		got++;
	}
	CHECK_U64(r, 0);
	CHECK_U64(got, n);
	CHECK(ordered);
	CHECK(complete);
	CHECK_U64(netlat_merge_late(m), 0);
	netlat_merge_free(m);
	netlat_close(src);
	close(fds[0]);
	waitpid(pid, NULL, 0);
}

/* ==== percentiles ======================================================== */

/* By definition: the smallest value with at least ppm/1e6 of values <= it. */
static uint64_t oracle_percentile(const uint64_t *v, size_t n, uint64_t ppm)
{
	uint64_t best = UINT64_MAX;
	size_t i, j, le;

	for (i = 0; i < n; i++) {
		for (le = 0, j = 0; j < n; j++)
			le += v[j] <= v[i];
		if ((uint64_t)le * 1000000 >= ppm * n && v[i] < best)
			best = v[i];
	}
	return best;
}

static void test_percentiles_match_oracle(void)
{
	static const uint64_t ppms[] = { 100, 1000, 10000, 100000, 250000, 333300,
					 500000, 900000, 990000, 999000, 999900, 1000000 };
	uint64_t v[300], sorted[300];
	int iter, mismatches = 0;
	size_t i, p;

	for (iter = 0; iter < 400; iter++) {
		size_t n = 1 + rnd_below(300);
		uint64_t range = iter % 3 == 0 ? 5 : iter % 3 == 1 ? 1000000 : UINT64_MAX;

		for (i = 0; i < n; i++)
			v[i] = sorted[i] = range == UINT64_MAX ? rnd() : rnd_below(range);
		netlat_sort_u64(sorted, n);
		for (p = 0; p < sizeof(ppms) / sizeof(ppms[0]); p++)
			mismatches += netlat_percentile(sorted, n, (double)ppms[p] / 10000.0) !=
				      oracle_percentile(v, n, ppms[p]);
	}
	CHECK_U64(mismatches, 0);
}

static void test_percentile_edges_and_summary(void)
{
	uint64_t v[1000];
	struct netlat_dist d;
	size_t i;

	for (i = 0; i < 1000; i++)
		v[i] = 1000 - i;	/* 1..1000, unsorted */
	netlat_dist_compute(v, 1000, &d);
	CHECK_U64(d.count, 1000);
	CHECK_U64(d.min, 1);
	CHECK_U64(d.p50, 500);
	CHECK_U64(d.p90, 900);
	CHECK_U64(d.p99, 990);
	CHECK_U64(d.p999, 999);	/* not 1000: exact, no float rounding */
	CHECK_U64(d.max, 1000);
	CHECK(d.mean > 500.49 && d.mean < 500.51);
	CHECK_U64(netlat_percentile(v, 1000, 0), 1);
	CHECK_U64(netlat_percentile(v, 1000, 100), 1000);
	CHECK_U64(netlat_percentile(v, 1000, 0.05), 1);
	CHECK_U64(netlat_percentile(v, 0, 50), 0);
	netlat_dist_compute(v, 0, &d);
	CHECK_U64(d.count, 0);
	CHECK_U64(d.max, 0);
}

static void test_samples_grow(void)
{
	struct netlat_samples s = { 0 };
	uint64_t i;

	for (i = 0; i < 100000; i++)
		CHECK(netlat_samples_add(&s, i) == 0);
	CHECK_U64(s.n, 100000);
	CHECK_U64(s.v[99999], 99999);
	netlat_samples_free(&s);
	CHECK(s.v == NULL && s.n == 0);
}

/* ==== time =============================================================== */

static void test_wall_time(void)
{
	struct netlat_rec_stream s = { .realtime_ns = TEST_REALTIME_NS, .mono_ns = TEST_MONO_NS };
	char buf[64];

	CHECK_U64(netlat_wall_ns(&s, TEST_MONO_NS + 123456789), TEST_REALTIME_NS + 123456789);
	CHECK_U64(netlat_wall_ns(&s, TEST_MONO_NS - 1000), TEST_REALTIME_NS - 1000);
	netlat_format_time(buf, sizeof(buf), TEST_REALTIME_NS + 123456789,
			   NETLAT_TIME_DATE | NETLAT_TIME_UTC);
	CHECK(!strcmp(buf, "2023-11-14 22:13:20.123456789"));
	netlat_format_time(buf, sizeof(buf), TEST_REALTIME_NS + 5, NETLAT_TIME_UTC);
	CHECK(!strcmp(buf, "22:13:20.000000005"));
}

/* ==== capture round trip ================================================= */

static bool files_equal(const char *a, const char *b)
{
	size_t la, lb;
	char *da = read_file(a, &la), *db = read_file(b, &lb);
	bool same = la == lb && !memcmp(da, db, la);

	free(da);
	free(db);
	return same;
}

static void test_tee_round_trip(void)
{
	unsigned char all_bytes[256];
	char big[NETLAT_MARKER_MAX];
	struct capture c = { 0 };
	struct netlat_source *src;
	const char *in, *out;
	int fd, code;

	build_every_type(&c, all_bytes, big);
	in = write_capture(&c, "tee-in.nl");
	out = tmp_path("tee-out.nl");
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	src = open_path(in);
	if (!CHECK(src && fd >= 0))
		return;
	netlat_set_tee(src, fd, out);
	CHECK_U64(drain(src, &code), 6);
	CHECK_U64(code, 0);
	close(fd);
	CHECK(files_equal(in, out));
	/* The copy reads back the same. */
	netlat_close(src);
	src = open_path(out);
	if (CHECK(src))
		check_every_type(src, all_bytes, big);
	netlat_close(src);
	cap_free(&c);
}

/* ==== fuzzing ============================================================ */

/* A capture with many records of every type on every CPU. */
static void build_rich(struct capture *c, int records)
{
	uint64_t seq[4] = { 0 }, ts = TEST_MONO_NS;
	char data[NETLAT_MARKER_MAX];
	int i;

	memset(data, 'm', sizeof(data));
	cap_stream(c, 4);
	for (i = 0; i < records; i++) {
		uint16_t cpu = (uint16_t)rnd_below(4);

		ts += rnd_below(5000);
		switch (rnd_below(8)) {
		case 0:
			cap_lost(c, cpu, seq[cpu] + 3, ts, 3, seq[cpu]);
			seq[cpu] += 4;
			break;
		case 1:
			cap_other(c, 40 + (uint16_t)rnd_below(3), cpu, seq[cpu]++, ts,
				  (uint16_t)(24 + 8 * rnd_below(20)));
			break;
		default:
			cap_marker(c, cpu, seq[cpu]++, ts, data,
				   1 + (uint32_t)rnd_below(NETLAT_MARKER_MAX));
		}
	}
}

static void mutate(struct capture *c)
{
	size_t at = rnd_below(c->len), n, i;
	int kind = (int)rnd_below(5);

	switch (kind) {
	case 0:		/* flip a few bytes */
		for (i = 0, n = 1 + rnd_below(8); i < n; i++)
			c->buf[rnd_below(c->len)] ^= (unsigned char)(1 + rnd_below(255));
		break;
	case 1:		/* cut short */
		c->len = at;
		break;
	case 2:		/* an interesting value in a header-ish place */
		at &= ~(size_t)7;
		if (at + 8 <= c->len) {
			static const uint64_t values[] = { 0, 1, 7, 24, 0xffff, 0xffffffffULL,
							   UINT64_MAX, 0x4e01000018ULL };
			uint64_t v = values[rnd_below(8)];

			memcpy(c->buf + at + 2 * rnd_below(4), &v, 2);
		}
		break;
	case 3:		/* drop a slice */
		n = rnd_below(c->len - at + 1);
		memmove(c->buf + at, c->buf + at + n, c->len - at - n);
		c->len -= n;
		break;
	default:	/* duplicate a slice */
		n = rnd_below(c->len - at + 1);
		if (n > 4096)
			n = 4096;
		{
			unsigned char *copy = malloc(n + 1);

			memcpy(copy, c->buf + at, n);
			cap_bytes(c, copy, n);
			free(copy);
		}
	}
}

static bool acceptable_end(int code)
{
	return code == 0 || code == -ENOMSG || code == -EBADMSG || code == -ENODATA ||
	       code == -EPROTONOSUPPORT;
}

/* Read @path plainly, then merged with sequence tracking: never crash. */
static bool fuzz_one(const char *path, size_t len)
{
	const struct netlat_rec_hdr *h;
	struct netlat_source *src = open_path(path);
	struct netlat_seq *seq = netlat_seq_new();
	struct netlat_merge *m;
	size_t n = 0, merged = 0;
	bool ok;
	int code, r;

	n = drain(src, &code);
	ok = acceptable_end(code) && n <= len / 24 && (code == 0 || netlat_errmsg(src)[0]);
	netlat_close(src);

	src = open_path(path);
	m = netlat_merge_new(src, NETLAT_HOLD_NS_DEFAULT);
	while ((r = netlat_merge_next(m, &h)) == 1) {
		netlat_seq_add(seq, h, NULL);
		merged++;
	}
	ok &= r == code && merged == n;
	netlat_merge_free(m);
	netlat_seq_free(seq);
	netlat_close(src);
	return ok;
}

static void test_fuzz_library(void)
{
	struct capture base = { 0 }, c = { 0 };
	const char *path = tmp_path("fuzz.nl");
	int iter, bad = 0;

	build_rich(&base, 300);
	for (iter = 0; iter < 3000; iter++) {
		int rounds = 1 + (int)rnd_below(3);

		cap_bytes(&c, base.buf, base.len);
		while (rounds--)
			if (c.len)
				mutate(&c);
		cap_write(&c, path);
		if (!fuzz_one(path, c.len) && bad++ < 5)
			fprintf(stderr, "    fuzz iteration %d misbehaved\n", iter);
		cap_free(&c);
	}
	CHECK_U64(bad, 0);
	cap_free(&base);
}

/* ==== the command ======================================================== */

#define MAX_ARGS 15

/* Run netlat with @args (NULL-terminated). */
static void netlat_args(struct run *r, const char *const *args)
{
	char *argv[MAX_ARGS + 2];
	int argc = 0;

	argv[argc++] = netlat_bin;
	while (argc <= MAX_ARGS && *args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	run_argv(r, argv);
}

/* Run netlat with the given arguments (NULL-terminated). */
static void netlat(struct run *r, ...)
{
	const char *args[MAX_ARGS + 1];
	va_list ap;
	int n = 0;

	va_start(ap, r);
	while (n < MAX_ARGS && (args[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	args[n] = NULL;
	netlat_args(r, args);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Every line of @s is one valid JSON value. */
static bool json_lines_valid(const char *s)
{
	while (*s) {
		const char *nl = strchr(s, '\n');

		if (!nl || !json_valid(s, (size_t)(nl - s)))
			return false;
		s = nl + 1;
	}
	return true;
}

static void test_cli_tail_text(void)
{
	static const char expected[] =
		"22:13:20.000000000 cpu0 seq=0 STREAM abi=1 nr_cpus=4 clock=1 tracing=running ring_bytes=1048576 probe_groups=0x0\n"
		"22:13:20.000000100 cpu0 seq=0 MARKER pid=1000 tid=2000 len=5 \"hello\"\n"
		"22:13:20.000000200 cpu1 seq=8 LOST count=5 first_seq=3\n"
		"22:13:20.000000300 cpu2 seq=7 MARKER pid=1002 tid=2002 len=7 \"q\\\"\\\\\\n\\x00\\xffz\"\n"
		"22:13:20.000000400 cpu3 seq=2 type=77 size=32\n";
	struct capture c = { 0 };
	struct run r;
	const char *path;

	cap_stream(&c, 4);
	cap_marker(&c, 0, 0, TEST_MONO_NS + 100, "hello", 5);
	cap_lost(&c, 1, 8, TEST_MONO_NS + 200, 5, 3);
	cap_marker(&c, 2, 7, TEST_MONO_NS + 300, "q\"\\\n\0\377z", 7);
	cap_other(&c, 77, 3, 2, TEST_MONO_NS + 400, 32);
	path = write_capture(&c, "tail.nl");

	netlat(&r, "tail", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!strcmp(r.out, expected));
	CHECK_HAS(r.err, "netlat: 4 records, 5 lost\n");
	run_free(&r);

	netlat(&r, "tail", "-n", "2", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_U64(count_lines(r.out), 3);
	run_free(&r);

	netlat(&r, "tail", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_U64(count_lines(r.out), 5);
	CHECK(json_lines_valid(r.out));
	CHECK_HAS(r.out, "\"data\":\"q\\\"\\\\\\n\\u0000\\u00ffz\"");
	CHECK_HAS(r.out, "\"type\":\"LOST\",\"type_id\":2,\"size\":40,\"cpu\":1,\"seq\":8");
	CHECK_HAS(r.out, "\"type\":\"unknown\",\"type_id\":77");
	run_free(&r);
	cap_free(&c);
}

static void test_cli_tail_ordered_and_gaps(void)
{
	struct capture c = { 0 };
	struct run r;
	const char *path;

	cap_stream(&c, 2);
	cap_marker(&c, 0, 0, TEST_MONO_NS + 30, "c", 1);
	cap_marker(&c, 0, 1, TEST_MONO_NS + 40, "d", 1);
	cap_marker(&c, 1, 0, TEST_MONO_NS + 10, "a", 1);
	cap_marker(&c, 1, 2, TEST_MONO_NS + 20, "b", 1);	/* seq 1 vanished */
	path = write_capture(&c, "ordered.nl");
	netlat(&r, "tail", "--ordered", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(strstr(r.out, "\"a\"") < strstr(r.out, "\"b\"") &&
	      strstr(r.out, "\"b\"") < strstr(r.out, "\"c\"") &&
	      strstr(r.out, "\"c\"") < strstr(r.out, "\"d\""));
	CHECK_HAS(r.err, "cpu 1: unexplained gap: expected seq 1, got 2");
	CHECK_HAS(r.err, "4 records, 0 lost, 1 unexplained gaps");
	run_free(&r);
	cap_free(&c);
}

static void test_cli_report(void)
{
	struct capture c = { 0 };
	struct run r;
	const char *path;

	build_base(&c);
	cap_marker(&c, 0, 1, TEST_MONO_NS + 1100, "world!", 6);
	cap_marker(&c, 0, 2, TEST_MONO_NS + 1600, "x", 1);
	path = write_capture(&c, "report.nl");

	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "5 records, 5 lost, 0 unexplained gaps");
	CHECK_HAS(r.out, "from 2023-11-14 22:13:20.000000100 to 2023-11-14 22:13:20.000001600");
	/* cpu0: 3 markers, gaps 1000 and 500 ns. */
	CHECK_HAS(r.out, "0               3          3          0          0          0      0");
	CHECK_HAS(r.out, "0               2        500        500       1000       1000       1000       1000        750.0");
	CHECK_HAS(r.out, "markers: 4 records, 15 payload bytes (len min 1, max 6)");
	run_free(&r);

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"total\":{\"records\":5,\"by_type\":{\"MARKER\":4,\"LOST\":1,\"other\":0},\"lost\":5");
	CHECK_HAS(r.out, "\"p50\":500,\"p90\":1000");
	run_free(&r);
	cap_free(&c);
}

/* Append a TCP record of @type for the flow 192.0.2.1:1000>192.0.2.2:80. */
static void *cap_tcp(struct capture *c, uint16_t type, uint16_t size, uint64_t seq,
		     uint64_t ts)
{
	struct netlat_flow *fl;
	size_t off = c->len;

	cap_other(c, type, 0, seq, TEST_MONO_NS + ts, size);
	fl = (void *)(c->buf + off + sizeof(struct netlat_rec_hdr));
	memset(fl, 0, size - sizeof(struct netlat_rec_hdr));
	fl->cookie = 7;
	fl->family = AF_INET;
	fl->sport = 1000;
	fl->dport = 80;
	memcpy(fl->saddr, "\xc0\x00\x02\x01", 4);
	memcpy(fl->daddr, "\xc0\x00\x02\x02", 4);
	return c->buf + off;
}

static void test_cli_tcp_records(void)
{
	struct netlat_rec_tcp_sendmsg *sm;
	struct netlat_rec_tcp_xmit *x;
	struct netlat_rec_tcp_dev *d;
	struct netlat_rec_tcp_ack *a;
	struct netlat_rec_tcp_retrans *rt;
	struct netlat_rec_virtio *v;
	struct netlat_flow flow;
	struct capture c = { 0 };
	struct run r;
	const char *path;
	int i;

	cap_stream(&c, 1);
	sm = cap_tcp(&c, NETLAT_REC_TCP_SENDMSG, sizeof(*sm), 0, 1000);
	sm->start_ns = TEST_MONO_NS + 100;
	sm->size = 3000;
	sm->ret = 3000;
	sm->sendmsg_id = 1000;
	sm->end_seq = 4000;
	x = cap_tcp(&c, NETLAT_REC_TCP_XMIT, sizeof(*x), 1, 2000);
	x->seq = 1000;
	x->end_seq = 2448;
	x->len = 1448;
	x->segs = 1;
	d = cap_tcp(&c, NETLAT_REC_TCP_DEV, sizeof(*d), 2, 2500);
	d->seq = 1000;
	d->end_seq = 2448;
	d->len = 1448;
	d->stage = NETLAT_DEV_QDISC;
	d = cap_tcp(&c, NETLAT_REC_TCP_DEV, sizeof(*d), 3, 3000);
	d->seq = 1000;
	d->end_seq = 2448;
	d->len = 1448;
	d->stage = NETLAT_DEV_DRIVER;
	/* virtio_net's start_xmit of it 400 ns later; one of another socket */
	flow = d->flow;
	for (i = 0; i < 2; i++) {
		size_t off = c.len;

		cap_other(&c, NETLAT_REC_VIRTIO, 0, 20 + i, TEST_MONO_NS + 3400 - i * 100,
			  sizeof(*v));
		v = (void *)(c.buf + off);
		v->event = NETLAT_VIRTIO_XMIT;
		v->flags = NETLAT_VIRTIO_FLOW_VALID;
		v->flow = flow;
		v->flow.cookie = i ? 99 : 7;
		v->seq = 1000;
		v->tcp_len = 1448;
	}
	a = cap_tcp(&c, NETLAT_REC_TCP_ACK, sizeof(*a), 4, 10000);
	a->snd_una = 2448;
	a->acked = 1448;
	rt = cap_tcp(&c, NETLAT_REC_TCP_RETRANS, sizeof(*rt), 5, 20000);
	rt->kind = NETLAT_RETRANS_FAST;
	rt->ret = 1;
	rt->segs = 1;
	path = write_capture(&c, "tcp.nl");

	netlat(&r, "tail", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "TCP_SENDMSG 192.0.2.1:1000>192.0.2.2:80 ck=0000000000000007 id=1000 size=3000 ret=3000 end_seq=4000");
	CHECK_HAS(r.out, "TCP_XMIT 192.0.2.1:1000>192.0.2.2:80 ck=0000000000000007 skb=0 seq=1000 end_seq=2448 len=1448");
	CHECK_HAS(r.out, "TCP_DEV 192.0.2.1:1000>192.0.2.2:80 ck=0000000000000007 stage=driver");
	CHECK_HAS(r.out, "TCP_RETRANS 192.0.2.1:1000>192.0.2.2:80 ck=0000000000000007 kind=fast ret=1");
	run_free(&r);

	netlat(&r, "tail", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_lines_valid(r.out));
	CHECK_HAS(r.out, "\"type\":\"TCP_ACK\"");
	CHECK_HAS(r.out, "\"saddr\":\"192.0.2.1\",\"sport\":1000,\"daddr\":\"192.0.2.2\",\"dport\":80,\"cookie\":7,\"snd_una\":2448,\"acked\":1448");
	CHECK_HAS(r.out, "\"kind\":\"fast\",\"ret\":1");
	run_free(&r);

	/* stages: sendmsg>xmit 1900, xmit>qdisc 500, qdisc>driver 500,
	 * driver>vq 400, driver>ack 7000, sendmsg>ack 9900 */
	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "sendmsg>xmit           1       1900");
	CHECK_HAS(r.out, "xmit>qdisc             1        500");
	CHECK_HAS(r.out, "qdisc>driver           1        500");
	CHECK_HAS(r.out, "\ndriver>vq              1        400        400");
	CHECK_HAS(r.out, "driver>ack             1       7000");
	CHECK_HAS(r.out, "sendmsg>ack            1       9900");
	run_free(&r);

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"tcp_stages\":{\"sendmsg>xmit\":{\"count\":1,\"min\":1900");
	run_free(&r);
	cap_free(&c);
}

/* One segment of cookie 7: xmit, driver 1000 ns later; *seq moves on. */
static void karn_segment(struct capture *c, uint64_t *rseq, uint32_t seq, uint64_t ts)
{
	struct netlat_rec_tcp_xmit *x;
	struct netlat_rec_tcp_dev *d;

	x = cap_tcp(c, NETLAT_REC_TCP_XMIT, sizeof(*x), (*rseq)++, ts);
	x->seq = seq;
	x->end_seq = seq + 1448;
	x->len = 1448;
	x->segs = 1;
	d = cap_tcp(c, NETLAT_REC_TCP_DEV, sizeof(*d), (*rseq)++, ts + 1000);
	d->seq = seq;
	d->end_seq = seq + 1448;
	d->len = 1448;
	d->stage = NETLAT_DEV_DRIVER;
}

static struct netlat_rec_tcp_ack *karn_ack(struct capture *c, uint64_t *rseq, uint32_t una,
					   uint64_t ts)
{
	struct netlat_rec_tcp_ack *a = cap_tcp(c, NETLAT_REC_TCP_ACK, sizeof(*a), (*rseq)++, ts);

	a->snd_una = una;
	a->acked = 1448;
	return a;
}

/*
 * Karn's ambiguity: an ACK that follows a retransmission of a segment's
 * bytes may answer either transmission, so neither the joined driver>ack
 * nor the module's xmit>ack of such a segment is a time. Four segments:
 * A sent again (TCP_XMIT flagged) before its ACK, whose xmit_ack_ns is
 * flagged too; B clean; C with a failed retransmit (nothing sent); D
 * retransmitted (TCP_RETRANS, ret 0) before its ACK; E whose resend the
 * capture lacks, but whose ACK the kernel flagged. Only B and C count.
 */
static void test_report_karn(void)
{
	struct netlat_rec_tcp_retrans *rt;
	struct netlat_rec_tcp_xmit *x;
	struct netlat_rec_tcp_ack *a;
	struct capture c = { 0 };
	uint64_t seq = 0;
	const char *path;
	struct run r;

	cap_stream(&c, 1);
	karn_segment(&c, &seq, 1000, 2000);			/* A */
	x = cap_tcp(&c, NETLAT_REC_TCP_XMIT, sizeof(*x), seq++, 5000);
	x->seq = 1000;
	x->end_seq = 2448;
	x->len = 1448;
	x->segs = 1;
	x->flags = NETLAT_TCP_RETRANSMIT;
	a = karn_ack(&c, &seq, 2448, 10000);
	a->xmit_ack_ns = 5000;
	a->flags = NETLAT_TCP_RETRANSMIT;
	karn_segment(&c, &seq, 2448, 11000);			/* B */
	a = karn_ack(&c, &seq, 3896, 20000);
	a->xmit_ack_ns = 9000;
	karn_segment(&c, &seq, 3896, 21000);			/* C */
	rt = cap_tcp(&c, NETLAT_REC_TCP_RETRANS, sizeof(*rt), seq++, 23000);
	rt->seq = 3896;
	rt->end_seq = 5344;
	rt->kind = NETLAT_RETRANS_RTO;
	rt->ret = -11;
	karn_ack(&c, &seq, 5344, 30000);
	karn_segment(&c, &seq, 5344, 31000);			/* D */
	rt = cap_tcp(&c, NETLAT_REC_TCP_RETRANS, sizeof(*rt), seq++, 33000);
	rt->seq = 5344;
	rt->end_seq = 6792;
	rt->kind = NETLAT_RETRANS_RTO;
	rt->segs = 1;
	karn_ack(&c, &seq, 6792, 40000);
	karn_segment(&c, &seq, 6792, 41000);			/* E */
	a = karn_ack(&c, &seq, 8240, 44000);
	a->flags = NETLAT_TCP_RETRANSMIT;
	path = write_capture(&c, "karn.nl");

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "\"driver>ack\":{\"count\":2,\"min\":8000,");
	CHECK_HAS(r.out, "\"xmit>ack\":{\"count\":1,\"min\":9000,");
	run_free(&r);
	netlat(&r, "tail", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "xmit_ack_ns=5000 retransmitted=1\n");
	CHECK_HAS(r.out, "xmit_ack_ns=9000\n");
	run_free(&r);
	cap_free(&c);
}

/* A segment of the socket @cookie (@sport > @dport): xmit, driver 1000 ns
 * later, its ACK @ack_ns after the driver. */
static void svc_segment(struct capture *c, uint64_t *rseq, uint64_t cookie, uint16_t sport,
			uint16_t dport, uint32_t seq, uint64_t ts, uint64_t ack_ns)
{
	struct netlat_rec_tcp_xmit *x;
	struct netlat_rec_tcp_dev *d;
	struct netlat_rec_tcp_ack *a;

	x = cap_tcp(c, NETLAT_REC_TCP_XMIT, sizeof(*x), (*rseq)++, ts);
	x->flow.cookie = cookie, x->flow.sport = sport, x->flow.dport = dport;
	x->seq = seq;
	x->end_seq = seq + 1448;
	x->len = 1448;
	x->segs = 1;
	d = cap_tcp(c, NETLAT_REC_TCP_DEV, sizeof(*d), (*rseq)++, ts + 1000);
	d->flow.cookie = cookie, d->flow.sport = sport, d->flow.dport = dport;
	d->seq = seq;
	d->end_seq = seq + 1448;
	d->len = 1448;
	d->stage = NETLAT_DEV_DRIVER;
	a = cap_tcp(c, NETLAT_REC_TCP_ACK, sizeof(*a), (*rseq)++, ts + 1000 + ack_ns);
	a->flow.cookie = cookie, a->flow.sport = sport, a->flow.dport = dport;
	a->snd_una = seq + 1448;
	a->acked = 1448;
}

/* A packet the socket @cookie (@sport local) received and read, @user_ns
 * after its driver stamp at @ts: 1000 ns to TCP, 1000 in the queue. */
static void svc_rx(struct capture *c, uint64_t *rseq, uint64_t cookie, uint16_t sport,
		   uint16_t dport, uint64_t ts, uint64_t user_ns)
{
	struct netlat_rec_rx_pkt *p = cap_tcp(c, NETLAT_REC_RX_PKT, sizeof(*p), (*rseq)++,
					      ts + user_ns);

	p->flow.cookie = cookie, p->flow.sport = sport, p->flow.dport = dport;
	p->netif_ns = TEST_MONO_NS + ts;
	p->transport_ns = p->netif_ns + 1000;
	p->queue_ns = p->transport_ns + 1000;
	p->end_ns = p->netif_ns + user_ns;
	p->len = 100;
	p->segs = 1;
	p->proto = NETLAT_RX_TCP;
	p->flags = NETLAT_RXP_COPIED;
}

/*
 * Packets by service port, as the kernel keys them: a client's socket
 * (its own port ephemeral) counts for the server's, a server's socket for
 * its own, a socket whose ports are both outside the ephemeral range for
 * its own.
 */
static void test_report_services(void)
{
	struct capture c = { 0 };
	uint64_t seq = 0;
	const char *path;
	struct run r;

	cap_stream(&c, 1);
	svc_segment(&c, &seq, 1, 40000, 6379, 1000, 1000, 20000);
	svc_segment(&c, &seq, 2, 8080, 50000, 5000, 2000, 3000);
	svc_segment(&c, &seq, 1, 40000, 6379, 2448, 30000, 22000);
	svc_segment(&c, &seq, 3, 1000, 2000, 9000, 31000, 5000);
	/* received: by redis's own socket and by a client of port 8080 */
	svc_rx(&c, &seq, 4, 6379, 40000, 40000, 7000);
	svc_rx(&c, &seq, 4, 6379, 40000, 41000, 9000);
	svc_rx(&c, &seq, 5, 50000, 8080, 42000, 4000);
	path = write_capture(&c, "services.nl");

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"services_count\":3,\"services\":[{\"port\":6379,\"packets\":2,"
		  "\"stages\":{\"driver>ack\":{\"count\":2,\"min\":20000,");
	CHECK_HAS(r.out, "\"max\":22000,");
	CHECK_HAS(r.out, "{\"port\":1000,\"packets\":1,\"stages\":{\"driver>ack\":{\"count\":1,"
		  "\"min\":5000,");
	CHECK_HAS(r.out, "{\"port\":8080,\"packets\":1,\"stages\":{\"driver>ack\":{\"count\":1,"
		  "\"min\":3000,");
	CHECK_HAS(r.out, "\"rx_services_count\":2,\"rx_services\":[{\"port\":6379,"
		  "\"packets\":2,\"stages\":{\"netif>tcp\":{\"count\":2,\"min\":1000,");
	CHECK_HAS(r.out, "\"netif>user\":{\"count\":2,\"min\":7000,");
	CHECK_HAS(r.out, "{\"port\":8080,\"packets\":1,\"stages\":{\"netif>tcp\":{\"count\":1,");
	run_free(&r);
	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "\n  port 6379: 2 packets; driver>ack p50 ");
	CHECK_HAS(r.out, "\n  port 8080: 1 packet; driver>ack p50 3.00 us, p99 3.00 us, max 3.00 us\n");
	CHECK_HAS(r.out, "\nper service port, receive stages\n  port 6379: 2 packets; netif>tcp p50 1.00 us");
	CHECK_HAS(r.out, "; netif>user p50 4.00 us, p99 4.00 us, max 4.00 us\n");
	run_free(&r);
	netlat(&r, "report", "--html", "-", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "<section id=\"services\"><h2>Per service port</h2>");
	CHECK_HAS(r.out, "port 8080: 1 packet; driver&gt;ack p50 <span");
	run_free(&r);
	cap_free(&c);
}

static void test_cli_errors(void)
{
	static const struct { const char *message, *bad_case; } cases[] = {
		{ "truncated capture", "truncated last record" },
		{ "not a netlat capture", "foreign magic" },
		{ "unsupported ABI version 2", "header ABI version 2" },
		{ "corrupt record at offset 128", "bad magic" },
	};
	static const char *const commands[] = { "report", "tail" };
	struct run r;
	size_t i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = write_bad_case(find_bad_case(cases[i].bad_case));

		for (j = 0; j < 2; j++) {
			netlat(&r, commands[j], path, NULL);
			CHECK_U64(r.status, 1);
			CHECK_HAS(r.err, cases[i].message);
			CHECK_U64(count_lines(r.err), 1);
			if (j == 0)
				CHECK(!r.out[0]);	/* no report of half a capture */
			run_free(&r);
		}
	}
	netlat(&r, "tail", "/dev/netlat-test-missing", NULL);
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "netlat: no /dev/netlat-test-missing: is the netlat module loaded?\n"));
	run_free(&r);
	netlat(&r, "report", tmp_path("missing.nl"), NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "cannot open");
	run_free(&r);
	netlat(&r, "info", "--device", tmp_path("report.nl"), NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "not a netlat device");
	run_free(&r);
	netlat(&r, "record", "-o", tmp_path("never.nl"), "--device", "/dev/netlat-test-missing", NULL);
	CHECK_U64(r.status, 1);
	CHECK(access(tmp_path("never.nl"), F_OK) != 0);
	run_free(&r);
}

static void test_cli_usage(void)
{
	static const char *const bad[][4] = {
		{ NULL },
		{ "bogus", NULL },
		{ "tail", "-n", "x", NULL },
		{ "tail", "-n", "0", NULL },
		{ "tail", "--duration", "-1", NULL },
		{ "tail", "--nope", NULL },
		{ "tail", "a", "b", NULL },
		{ "record", NULL },
		{ "record", "-o", NULL },
		{ "report", NULL },
		{ "report", "a", "b", NULL },
		{ "config", NULL },
		{ "config", "--ring-bytes", "12Q", NULL },
		{ "start", "extra", NULL },
	};
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		netlat(&r, bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL);
		if (!CHECK_U64(r.status, 2))
			fprintf(stderr, "    (args: %s %s)\n", bad[i][0], bad[i][1]);
		CHECK_HAS(r.err, "usage: netlat");
		run_free(&r);
	}
	netlat(&r, "tail", "--help", NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "usage: netlat tail");
	run_free(&r);
	netlat(&r, "--help", NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "report");
	run_free(&r);
}

static void test_cli_record_round_trip(void)
{
	struct capture c = { 0 };
	const char *in, *out;
	struct run r, r2;
	char *report_in;

	build_rich(&c, 2000);
	in = write_capture(&c, "rec-in.nl");
	out = tmp_path("rec-out.nl");
	netlat(&r, "record", "-o", out, "--device", in, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "recorded");
	CHECK(files_equal(in, out));
	run_free(&r);

	netlat(&r, "report", in, NULL);
	report_in = strdup(strchr(r.out, ':'));	/* skip the file name */
	netlat(&r2, "report", out, NULL);
	CHECK(!strcmp(report_in, strchr(r2.out, ':')));
	free(report_in);
	run_free(&r);
	run_free(&r2);
	cap_free(&c);
}

/* Wait until @path holds at least @bytes, up to 5 s. */
static bool wait_for_size(const char *path, off_t bytes)
{
	struct stat st;
	int i;

	for (i = 0; i < 1000; i++) {
		if (!stat(path, &st) && st.st_size >= bytes)
			return true;
		usleep(5000);
	}
	return false;
}

/*
 * Start netlat reading a FIFO we hold open, feed it @c, wait for @out to
 * reach @out_bytes, then send @sig. Returns the result.
 */
static void interrupt_reader(struct run *r, char **argv, const char *fifo,
			     const struct capture *c, const char *out, off_t out_bytes,
			     int sig)
{
	const char *err = tmp_path("sig.err");
	pid_t pid;
	int fd;

	unlink(fifo);
	memset(r, 0, sizeof(*r));
	if (!CHECK(mkfifo(fifo, 0600) == 0))
		return;
	pid = spawn_argv(argv, out, err);
	fd = open(fifo, O_WRONLY);
	CHECK(fd >= 0 && write(fd, c->buf, c->len) == (ssize_t)c->len);
	CHECK(wait_for_size(out, out_bytes));
	if (sig)
		kill(pid, sig);
	wait_child(r, pid, 5000);
	r->out = read_file(out, NULL);
	r->err = read_file(err, NULL);
	close(fd);
}

static void test_cli_signals_stop_cleanly(void)
{
	const char *fifo = tmp_path("fifo"), *out = tmp_path("sig.out");
	const char *rec = tmp_path("sig.nl");
	char *tail_argv[] = { netlat_bin, "tail", (char *)fifo, NULL };
	char *record_argv[] = { netlat_bin, "record", "-o", (char *)rec, "--device",
				(char *)fifo, NULL };
	char *duration_argv[] = { netlat_bin, "tail", "--duration", "0.3", (char *)fifo, NULL };
	struct capture c = { 0 };
	struct run r;

	build_base(&c);
	interrupt_reader(&r, tail_argv, fifo, &c, out, 200, SIGINT);
	CHECK(!r.signalled);
	CHECK_U64(r.status, 0);
	CHECK_U64(count_lines(r.out), 4);
	CHECK_HAS(r.err, "3 records, 5 lost");
	run_free(&r);

	interrupt_reader(&r, record_argv, fifo, &c, rec, (off_t)c.len, SIGTERM);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "recorded 216 bytes");
	free(r.out);
	r.out = read_file(rec, NULL);
	CHECK(!memcmp(r.out, c.buf, c.len));
	run_free(&r);

	interrupt_reader(&r, duration_argv, fifo, &c, out, 200, 0);
	CHECK(!r.signalled);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "3 records");
	run_free(&r);
	cap_free(&c);
}

/* Mutated captures through every reading command: exit 0 or 1, never a crash. */
static void test_fuzz_command(void)
{
	static const char *const modes[][4] = {
		{ "report" }, { "report", "--json" }, { "tail", "--json", "--ordered" },
	};
	struct capture base = { 0 }, c = { 0 };
	const char *path = tmp_path("cli-fuzz.nl");
	int iter, bad = 0;
	struct run r;

	build_rich(&base, 60);
	for (iter = 0; iter < 150; iter++) {
		size_t m = (size_t)iter % 3, n = 0;
		const char *args[5];
		bool ok;

		cap_bytes(&c, base.buf, base.len);
		mutate(&c);
		cap_write(&c, path);
		while (modes[m][n]) {
			args[n] = modes[m][n];
			n++;
		}
		args[n++] = path;
		args[n] = NULL;
		netlat_args(&r, args);
		ok = !r.signalled && (r.status == 0 || r.status == 1);
		if (m == 1 && r.status == 0)
			ok &= json_valid(r.out, strlen(r.out));
		if (m == 2)
			ok &= json_lines_valid(r.out);
		if (!ok && bad++ < 5)
			fprintf(stderr, "    fuzz %d (%s): status %d\n%s", iter, modes[m][0],
				r.status, r.err);
		run_free(&r);
		cap_free(&c);
	}
	CHECK_U64(bad, 0);
	cap_free(&base);
}

#include "test_reader.c"
#include "test_flight.c"
#include "test_pictures.c"
#include "test_exporter.c"
#include "test_webcfg.c"
#include "test_hostile.c"
#include "test_rx.c"
#include "test_join.c"
#include "test_joinpure.c"
#include "test_joinhtml.c"
#include "test_stages.c"

/* ==== cgroup paths ======================================================= */

/*
 * The oracle is the kernel's own: /proc/self/cgroup names this process's
 * cgroup, and stat() of that directory gives its id (its inode number).
 */
static void test_cgroup_path_of_own_cgroup(void)
{
	char *line = NULL, dir[4200], mnt[4096] = "";
	struct mntent *me;
	const char *path;
	struct statfs sfs;
	struct stat st;
	size_t len = 0;
	FILE *f;

	cgpath_reset();
	f = setmntent("/proc/self/mounts", "r");
	while (f && (me = getmntent(f)))
		if (!strcmp(me->mnt_type, "cgroup2")) {
			snprintf(mnt, sizeof(mnt), "%s", me->mnt_dir);
			break;
		}
	if (f)
		endmntent(f);
	if (!mnt[0] || statfs(mnt, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		skip_test("no cgroup2 hierarchy mounted");
		return;
	}
	f = fopen("/proc/self/cgroup", "r");
	if (!CHECK(f))
		return;
	while (getline(&line, &len, f) > 0 && strncmp(line, "0::", 3))
		;
	fclose(f);
	if (!line || strncmp(line, "0::", 3)) {
		free(line);
		skip_test("no cgroup v2 line in /proc/self/cgroup");
		return;
	}
	line[strcspn(line, "\n")] = 0;
	snprintf(dir, sizeof(dir), "%s%s", mnt, line + 3);
	/* a cgroup namespace's view may not match the mount's */
	if (stat(dir, &st)) {
		free(line);
		skip_test("%s not in the cgroup2 mount", dir);
		return;
	}
	path = cgpath_lookup(st.st_ino);
	CHECK(path && !strcmp(path, line + 3));
	if (!CHECK(stat(mnt, &st) == 0))
		return;
	path = cgpath_lookup(st.st_ino);
	CHECK(path && !strcmp(path, "/"));
	/* ids count up from the root's (1) */
	CHECK(!cgpath_lookup(UINT64_MAX));
	free(line);
	cgpath_reset();
}

/* ==== main =============================================================== */

struct test {
	const char *name;
	void (*run)(void);
};

static const struct test tests[] = {
	{ "decode every record type from a file", test_decode_every_type_from_file },
	{ "cgroup path of this process's cgroup id", test_cgroup_path_of_own_cgroup },
	{ "decode every record type from a pipe", test_decode_every_type_from_pipe },
	{ "longer records from newer writers", test_longer_records_are_accepted },
	{ "concatenated captures", test_concatenated_captures },
	{ "bad captures give clear errors", test_bad_captures_give_clear_errors },
	{ "foreign files", test_foreign_files },
	{ "device error messages", test_device_error_messages },
	{ "sequence and loss tracking", test_seq_tracking },
	{ "merge holds and releases", test_merge_holds_and_releases },
	{ "merge releases when the device is idle", test_merge_releases_when_idle },
	{ "merge counts late records", test_merge_counts_late_records },
	{ "merge barrier, then the error", test_merge_barrier_then_error },
	{ "merge orders a simulated device", test_merge_orders_simulated_device },
	{ "percentiles match a brute-force oracle", test_percentiles_match_oracle },
	{ "percentile edges and summary", test_percentile_edges_and_summary },
	{ "samples grow", test_samples_grow },
	{ "wall-clock time", test_wall_time },
	{ "capture round trip through the tee", test_tee_round_trip },
	{ "fuzz the library", test_fuzz_library },
	{ "netlat tail output", test_cli_tail_text },
	{ "netlat tail --ordered and gaps", test_cli_tail_ordered_and_gaps },
	{ "netlat report", test_cli_report },
	{ "netlat tail and report of TCP records", test_cli_tcp_records },
	{ "report: no >ack stage of a segment sent again before its ACK (Karn)", test_report_karn },
	{ "report: packets sent and received by service port, a client's counted for its server's", test_report_services },
	{ "netlat errors", test_cli_errors },
	{ "netlat usage", test_cli_usage },
	{ "netlat record round trip", test_cli_record_round_trip },
	{ "netlat stops cleanly on signals", test_cli_signals_stop_cleanly },
	{ "fuzz the command", test_fuzz_command },
	/* test_reader.c */
	{ "netlat filters", test_cli_filters },
	{ "netlat flow filters", test_cli_flow_filters },
	{ "netlat report flow table", test_cli_flow_table },
	{ "log2 histogram buckets", test_hist_buckets },
	{ "netlat report stage histograms", test_cli_stage_hist },
	{ "netlat report and tail of packet records", test_cli_packet_records },
	{ "netlat filter usage errors", test_cli_filter_usage },
	{ "netlat stat", test_cli_stat },
	{ "netlat stat --interval", test_cli_stat_intervals },
	{ "flight_min example", test_flight_min },
	/* test_rx.c */
	{ "netlat report of receive records", test_cli_rx_report },
	{ "drop reason names from a tracepoint format", test_drop_reason_names },
	{ "notes inserted after the stream header", test_tee_insert_notes },
	{ "netlat report and tail: drop reasons by name", test_cli_drop_reasons },
	{ "drop reasons of two kernels in one capture", test_cli_drop_reasons_two_kernels },
	{ "netlat report and tail of RX_PKT wakeup stages", test_cli_rx_pkt_wakeup },
	{ "RX_PKT stage readers stay within a first-size record", test_rx_pkt_stage_first_size },
	{ "netlat.1 covers every command and option", test_man_page_complete },
	/* test_join.c */
	{ "join: a known offset and drift inside every bound", test_join_offset_and_drift },
	{ "join: GSO and GRO splits, a known asymmetry", test_join_gso_gro },
	{ "join: a pair stamped before it left is flagged", test_join_forged_pair },
	{ "join: a clock step gets no clock", test_join_clock_step },
	{ "join: one direction bounds one side", test_join_one_way },
	{ "join: a flow longer than 2 GiB", test_join_long_flow },
	{ "join: pairs of one time stay in one window", test_join_window_ties },
	{ "join: a byte received twice is joined once", test_join_duplicate_copies },
	{ "join: a split packet's stages, stamps and bounds counted once", test_join_split_counts },
	{ "netlat join", test_cli_join },
	{ "netlat join --chrome-trace: both hosts on A's clock", test_join_trace },
	{ "netlat join --chrome-trace: a lane per overlapping packet", test_join_trace_bulk },
	{ "netlat join: host notes", test_cli_join_host_notes },
	{ "netlat report --peer: the report, then the join", test_cli_report_peer },
	{ "join: the ACK's way back, a constant offset: exact", test_join_ack_offset },
	{ "join: the ACK's way back with a drift", test_join_ack_drift },
	{ "join: a bulk flow's pure ACKs have no ACK delay", test_join_ack_pure },
	{ "join: records without the ACK fields", test_join_ack_old_records },
	{ "netlat join: the ACK's way back", test_cli_join_ack },
	{ "join: a retransmission joined by TSval, exact", test_join_tsval_rescue },
	{ "join: TSval under a tick round trip: not provable", test_join_tsval_tick },
	{ "join: TSval: Karn's rule where it does not tell", test_join_tsval_karn },
	{ "join: TSvals that differ without a retransmission", test_join_tsval_impossible },
	{ "netlat join and tail: TSvals", test_cli_join_tsval },
	/* test_joinpure.c */
	{ "join: pure ACK carriers of a bulk flow, exact", test_join_pure_carrier },
	{ "join: pure ACKs of one number and TSval: not told apart", test_join_pure_tsval_shared },
	{ "join: pure ACK carriers without the ACK's TSval", test_join_pure_no_tsval },
	{ "join: pure ACKs near a retransmission of the receiver's", test_join_pure_retrans },
	{ "netlat join: pure ACK carriers", test_cli_join_pure },
	/* test_joinhtml.c */
	{ "netlat report --peer --html: the join's section, the text's numbers", test_cli_report_peer_html },
	{ "netlat report --peer --html: a capture's hostname and file names escaped", test_cli_report_peer_html_escapes },
	{ "netlat report --peer --html: an unpaired peer bounds nothing", test_cli_report_peer_html_unpaired },
	{ "netlat report --peer --html: nothing fetched", test_cli_report_peer_html_self_contained },
	{ "netlat report --peer --html: a clock step flagged", test_cli_report_peer_html_step },
	/* test_flight.c */
	{ "filter specs: good ones and round trips", test_filter_spec_good },
	{ "filter specs: bad ones give precise reasons", test_filter_spec_bad },
	{ "trigger specs", test_trigger_spec },
	{ "ioctl error messages name the missing feature", test_ioctl_messages },
	{ "snapshot stream reading", test_snapshot_stream_reading },
	{ "netlat report and tail of a snapshot", test_cli_snapshot_report },
	{ "TCP_ACK of older and newer modules", test_ack_record_sizes },
	{ "snapshot directory names and rotation", test_snapdir },
	{ "flight commands: usage and missing features", test_cli_flight_errors },
	{ "flight_recorder example", test_flight_recorder_example },
	{ "flight_recorder example on a fake device", test_flight_recorder_fake },
	{ "netlat flight on a fake device", test_cli_flight_fake },
	{ "netlat snapshot on a fake device", test_cli_snapshot_fake },
	{ "netlat filters, triggers, tail --filter on a fake device",
	  test_cli_filters_triggers_fake },
	/* test_pictures.c */
	{ "netlat report --html in headless Chromium", test_cli_report_html },
	{ "netlat export --chrome-trace", test_cli_export_chrome_trace },
	{ "netlat report --html and export: errors", test_cli_pictures_errors },
	{ "netlat report --html and export of a snapshot", test_cli_pictures_snapshot },
	{ "netlat report --html and export: many directions", test_cli_pictures_many_directions },
	/* test_exporter.c */
	{ "netlat exporter on a fake device", test_exporter_fake },
	{ "netlat exporter: bad input, one line each", test_exporter_errors },
	{ "netlat exporter and textfile while the module is gone", test_exporter_device_gone },
	{ "netlat stat --prometheus: atomic textfile", test_textfile },
	{ "every counter of the uapi in the metrics and stat --hist --json", test_every_counter_everywhere },
	{ "every stage of the uapi in report, tail, stat --hist and the metrics", test_every_stage_everywhere },
	{ "promtool check metrics accepts the metrics", test_promtool },
	{ "a real Prometheus scrapes netlat exporter", test_prometheus_scrapes },
	/* test_webcfg.c */
	{ "netlat exporter --web.config.file: basic auth over TLS, 401 without", test_web_basic_auth },
	{ "netlat exporter --web.config.file: plain HTTP and stalled handshakes on the TLS port", test_web_plain_to_tls_port },
	{ "netlat exporter --web.config.file: client certificates", test_web_client_cert },
	{ "netlat exporter --web.config.file: bad files, exit 2 and the line", test_web_config_errors },
	{ "a real Prometheus scrapes netlat exporter over HTTPS with basic auth", test_web_prometheus },
	{ "netlat exporter --web.config.file: a flood of wrong passwords gets 429, scrapes go on", test_web_bcrypt_budget },
	/* test_hostile.c */
	{ "a real Prometheus scrapes netlat exporter (HTTP, HTTPS) beside 1,000 hostile connections each", test_hostile_scrapes },
};

static void remove_tmpdir(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	while (nr_tmp_paths)
		free(tmp_paths[--nr_tmp_paths]);
}

int main(int argc, char **argv)
{
	const char *only = getenv("NETLAT_TESTS");
	int passed = 0, failed = 0, skipped = 0;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-NETLAT\n", argv[0]);
		return 2;
	}
	netlat_bin = argv[1];
	setenv("TZ", "UTC", 1);	/* wall-clock output is compared as text */
	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	run_init(tmpdir);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		/* NETLAT_TESTS=TEXT: only the tests whose names hold TEXT */
		if (only && !strstr(tests[i].name, only))
			continue;
		check_failures = 0;
		skip_reason[0] = 0;
		tests[i].run();
		if (skip_reason[0] && !check_failures) {
			printf("skip - %s: %s\n", tests[i].name, skip_reason);
			fflush(stdout);
			skipped++;
			continue;
		}
		printf("%s - %s\n", check_failures ? "FAIL" : "ok", tests[i].name);
		fflush(stdout);
		if (check_failures)
			failed++;
		else
			passed++;
	}
	remove_tmpdir();
	if (skipped)
		printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
