// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle and hygiene tests of netlat:
 *
 *  reload: rmmod/insmod in a loop while markers are written and a reader
 *	is attached. While the reader (or a writer) holds the device open,
 *	rmmod fails (the open file pins the module); the reader then sees a
 *	clean end (whole records, every marker written accounted for), and
 *	after insmod a clean start (STREAM first, sequences from 0), while
 *	other threads keep opening the device across the unload.
 *  killed_reader: readers killed while blocked in read(), while reading
 *	a busy stream and while holding a consumer mapping release the
 *	device: a new reader and a ring resize work at once.
 *  concurrent_readers: threads opening, reading and closing at the same
 *	time: one consumer at a time (EBUSY for the others), and every
 *	record read exactly once across all of them.
 *  memory: ring sizes far too large are refused with ENOMEM/EINVAL
 *	without the OOM killer; mem_bytes matches the ring sizes and the
 *	memory the kernel actually lost.
 *  no_kernel_pointers: no 8-byte word of a capture (stream header, LOST
 *	records, markers), of the ioctl results or of the producer page
 *	looks like a kernel address.
 *
 * Needs root and netlat loaded from $NETLAT_KO (default /netlat.ko) for
 * reload, which loads it again with default parameters.
 */
#include "netlat_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define KiB 1024ull
#define MiB (1024 * KiB)

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

FIXTURE(life) {
	int fd;
	struct netlat_info def;
	char *buf;
	size_t cap;
};

FIXTURE_SETUP(life)
{
	self->cap = 256 * KiB;
	self->buf = malloc(self->cap);
	ASSERT_NE(NULL, self->buf);
	self->fd = nl_open(0);
	if (self->fd < 0)
		SKIP(return, "%s: %s", NETLAT_DEVICE_PATH, strerror(errno));
	ASSERT_EQ(0, nl_get_info(self->fd, &self->def));
	close(self->fd);
	self->fd = -1;
}

FIXTURE_TEARDOWN(life)
{
	int fd = nl_open(0);

	if (fd >= 0) {
		EXPECT_EQ(0, nl_reconfigure(fd, self->def.ring_bytes,
					    self->def.watermark,
					    self->def.flush_ms, true));
		close(fd);
	}
	if (self->fd >= 0)
		close(self->fd);
	free(self->buf);
}

/* Read with O_NONBLOCK until EAGAIN, every record through @l. */
static int drain(FIXTURE_DATA(life) *self, int fd, struct nl_log *l)
{
	ssize_t n;

	do
		n = nl_log_read(l, fd, self->buf, self->cap);
	while (n > 0);
	return n == -EAGAIN ? 0 : (int)n;
}

/* ---- writers ------------------------------------------------------------ */

/*
 * Writes markers "w<index>" through short-lived open files (the module
 * must be loaded while it runs), counting what write() accepted.
 */
struct writer {
	pthread_t th;
	int stop;
	uint64_t written;
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char msg[32];

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		int fd = nl_open(0), k;

		if (fd < 0) {
			w->err = -errno;
			break;
		}
		for (k = 0; k < 50; k++) {
			int len = snprintf(msg, sizeof(msg), "w%llu",
					   (unsigned long long)w->written);

			if (nl_write(fd, msg, len) != len) {
				w->err = -EIO;
				break;
			}
			w->written++;
		}
		close(fd);
		usleep(200);
	}
	return NULL;
}

/*
 * Opens the device over and over across rmmod/insmod; the open either
 * fails as "no such device" or works (and a marker "o" goes in).
 */
struct opener {
	pthread_t th;
	int stop;
	uint64_t opened, absent;
	int err;
};

static void *opener_main(void *arg)
{
	struct opener *o = arg;

	while (!__atomic_load_n(&o->stop, __ATOMIC_ACQUIRE)) {
		int fd = nl_open(0);

		if (fd < 0) {
			if (errno != ENOENT && errno != ENODEV && errno != ENXIO) {
				o->err = -errno;
				break;
			}
			o->absent++;
		} else {
			o->opened++;
			if (nl_write(fd, "o", 1) != 1)
				o->err = -EIO;
			close(fd);
		}
		usleep(100);
	}
	return NULL;
}

/* Count "w..." markers; "o" markers are the opener's. */
struct wcount {
	uint64_t w, o;
	int64_t last;
};

static int count_marker(struct nl_log *l, const struct netlat_rec_marker *m)
{
	struct wcount *c = l->priv;
	char num[32];
	long long idx;

	if (m->len == 1 && m->data[0] == 'o') {
		c->o++;
		return 0;
	}
	if (m->data[0] != 'w' || m->len >= sizeof(num))
		return nl_fail(l->why, sizeof(l->why), "stray marker len %u",
			       m->len);
	memcpy(num, m->data + 1, m->len - 1);
	num[m->len - 1] = 0;
	idx = atoll(num);
	/* one writer: on a CPU, its markers are in order */
	c->w++;
	c->last = idx;
	return 0;
}

TEST_F_TIMEOUT(life, reload, 300)
{
	const uint64_t cycles = env_u64("NETLAT_RELOAD_CYCLES", 5);
	uint64_t cyc, reloads = 0, busy = 0;
	struct opener o = { 0 };
	struct nl_log l;
	struct wcount wc;
	int ret, tries;

	if (access(nl_ko_path(), R_OK))
		SKIP(return, "no netlat.ko to load again");
	for (cyc = 0; cyc < cycles; cyc++) {
		struct writer w = { 0 };
		unsigned int nr;
		int fd;

		/* clean start: a fresh module, a fresh stream */
		fd = nl_open(O_NONBLOCK);
		ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
		/* the module we did not load: start it from a known state */
		if (!cyc)
			ASSERT_EQ(0, nl_reconfigure(fd, self->def.ring_bytes,
						    self->def.watermark,
						    self->def.flush_ms, true));
		{
			struct netlat_info info;

			ASSERT_EQ(0, nl_get_info(fd, &info));
			nr = info.nr_cpus;
		}
		memset(&wc, 0, sizeof(wc));
		ASSERT_EQ(0, nl_log_init(&l, nr, false));
		l.expect_stream = true;
		l.seq_from_zero = true;
		l.on_marker = count_marker;
		l.priv = &wc;
		ASSERT_EQ(0, drain(self, fd, &l)) TH_LOG("%s", l.why);
		ASSERT_TRUE(l.have_stream);
		if (cyc) {
			/* the opener stops only now: it ran across insmod */
			__atomic_store_n(&o.stop, 1, __ATOMIC_RELEASE);
			ASSERT_EQ(0, pthread_join(o.th, NULL));
			ASSERT_EQ(0, o.err) TH_LOG("opener: %s", strerror(-o.err));
			ASSERT_EQ(0, drain(self, fd, &l)) TH_LOG("%s", l.why);
		}

		/* traffic while the reader is attached */
		ASSERT_EQ(0, pthread_create(&w.th, NULL, writer_main, &w));
		for (tries = 0; tries < 30; tries++) {
			ASSERT_EQ(0, drain(self, fd, &l)) TH_LOG("%s", l.why);
			nl_sleep_ms(10);
		}
		/* the open reader pins the module */
		ret = nl_unload_netlat();
		EXPECT_TRUE(ret == -EAGAIN || ret == -EBUSY)
			TH_LOG("rmmod with a reader attached: %s", strerror(-ret));
		if (!ret)
			break;
		busy++;
		__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
		ASSERT_EQ(0, pthread_join(w.th, NULL));
		ASSERT_EQ(0, w.err) TH_LOG("writer: %s", strerror(-w.err));

		/* clean end: everything written arrived whole, or was lost */
		ASSERT_EQ(0, drain(self, fd, &l)) TH_LOG("%s", l.why);
		{
			uint64_t lost = 0;
			unsigned int c;

			for (c = 0; c < nr; c++) {
				lost += l.cpu[c].lost;
				EXPECT_FALSE(l.cpu[c].last_lost);
			}
			EXPECT_EQ(w.written, wc.w + lost)
				TH_LOG("cycle %llu: written %llu, read %llu, lost %llu",
				       (unsigned long long)cyc,
				       (unsigned long long)w.written,
				       (unsigned long long)wc.w,
				       (unsigned long long)lost);
			EXPECT_LT(0u, w.written);
		}
		nl_log_free(&l);

		/* openers race the unload and the load */
		memset(&o, 0, sizeof(o));
		ASSERT_EQ(0, pthread_create(&o.th, NULL, opener_main, &o));
		close(fd);
		for (tries = 0; tries < 2000; tries++) {
			ret = nl_unload_netlat();
			if (ret != -EAGAIN && ret != -EBUSY)
				break;
			nl_sleep_ms(2);
		}
		ASSERT_EQ(0, ret) TH_LOG("rmmod: %s", strerror(-ret));
		EXPECT_TRUE(nl_wait_path("/sys/module/netlat", false, 5000));
		nl_sleep_ms(20);
		ret = nl_load_netlat("");
		ASSERT_EQ(0, ret) TH_LOG("insmod: %s", strerror(-ret));
		ASSERT_TRUE(nl_wait_path(NETLAT_DEVICE_PATH, true, 10000));
		reloads++;
	}
	if (o.th) {
		__atomic_store_n(&o.stop, 1, __ATOMIC_RELEASE);
		pthread_join(o.th, NULL);
	}
	TH_LOG("%llu reloads; rmmod refused %llu times while a reader was attached; opener: %llu opens, %llu while absent",
	       (unsigned long long)reloads, (unsigned long long)busy,
	       (unsigned long long)o.opened, (unsigned long long)o.absent);
	EXPECT_EQ(cycles, reloads);
}

/* ---- killed readers ------------------------------------------------------ */

enum { KILL_BLOCKED, KILL_BUSY, KILL_MAPPED };

static void reader_child(int how, int ready)
{
	static char buf[64 * 1024];
	struct netlat_info info;
	int fd = nl_open(0);

	if (fd < 0 || nl_get_info(fd, &info))
		_exit(2);
	if (how == KILL_MAPPED) {
		struct nl_ring r;

		if (nl_ring_map(fd, &info, 0, &r))
			_exit(3);
		if (write(ready, "r", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	if (read(fd, buf, sizeof(buf)) <= 0)	/* the stream header */
		_exit(5);
	if (write(ready, "r", 1) != 1)
		_exit(4);
	for (;;)
		if (read(fd, buf, sizeof(buf)) < 0 && errno != EINTR)
			_exit(6);
}

TEST_F_TIMEOUT(life, killed_reader, 120)
{
	static const char *const what[] = { "blocked in read()",
					    "reading a busy stream",
					    "holding a consumer mapping" };
	struct netlat_info info;
	struct nl_log l;
	int how, pfd[2], status, k, fd;
	pid_t pid;
	char c;

	fd = nl_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	/* no flush wakeups: a blocked reader stays blocked */
	ASSERT_EQ(0, nl_reconfigure(fd, 64 * KiB, 64 * KiB, 0, true));
	for (how = KILL_BLOCKED; how <= KILL_MAPPED; how++) {
		ASSERT_EQ(0, pipe(pfd));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(pfd[0]);
			reader_child(how, pfd[1]);
		}
		close(pfd[1]);
		ASSERT_EQ(1, read(pfd[0], &c, 1)) TH_LOG("child did not start");
		close(pfd[0]);
		for (k = 0; how == KILL_BUSY && k < 2000; k++) {
			ASSERT_EQ(2, nl_write(fd, "mk", 2));
		}
		nl_sleep_ms(100);
		ASSERT_EQ(0, nl_get_info(fd, &info));
		EXPECT_NE(0u, info.state & NETLAT_STATE_CONSUMER);
		/* while it lives, this file cannot consume */
		EXPECT_EQ(-1, read(fd, self->buf, self->cap));
		EXPECT_EQ(EBUSY, errno);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("%s: child exited %d",
							what[how], WEXITSTATUS(status));
		/* released: no consumer, no mapping, this file may read */
		ASSERT_EQ(0, nl_get_info(fd, &info));
		EXPECT_EQ(0u, info.state & NETLAT_STATE_CONSUMER)
			TH_LOG("consumer left behind by a reader %s", what[how]);
		ASSERT_EQ(0, nl_control(fd, NETLAT_IOC_STOP));
		EXPECT_EQ(0, nl_set_config(fd, NETLAT_CONFIG_RING_BYTES,
					   32 * KiB, 0, 0))
			TH_LOG("resize after a reader %s was killed", what[how]);
		ASSERT_EQ(0, nl_set_config(fd, NETLAT_CONFIG_RING_BYTES,
					   64 * KiB, 0, 0));
		ASSERT_EQ(0, nl_control(fd, NETLAT_IOC_RESET));
		ASSERT_EQ(0, nl_control(fd, NETLAT_IOC_START));
		ASSERT_EQ(0, nl_log_init(&l, info.nr_cpus, false));
		l.expect_stream = true;
		l.seq_from_zero = true;
		ASSERT_EQ(2, nl_write(fd, "ok", 2));
		ASSERT_EQ(0, drain(self, fd, &l)) TH_LOG("%s", l.why);
		EXPECT_EQ(1u, l.cpu[0].markers + (info.nr_cpus > 1 ?
						  l.cpu[1].markers : 0));
		nl_log_free(&l);
		/* hand the consumer role back for the next child */
		close(fd);
		fd = nl_open(O_NONBLOCK);
		ASSERT_LE(0, fd);
	}
	close(fd);
}

/* ---- concurrent readers --------------------------------------------------- */

struct shared_log {
	pthread_mutex_t lock;
	struct nl_log log;
	uint64_t streams, ebusy, reads, opens;
	int stop;
	char why[256];
	bool failed;
};

/* Feed one read() result; a STREAM record only at the start of a file. */
static void shared_feed(struct shared_log *s, const char *buf, ssize_t n,
			bool first)
{
	ssize_t off = 0;

	if (first) {
		const struct netlat_rec_hdr *h = (const void *)buf;

		if (h->type != NETLAT_REC_STREAM ||
		    nl_check_rec(buf, n, s->log.nr_cpus, s->why, sizeof(s->why))) {
			if (h->type != NETLAT_REC_STREAM)
				snprintf(s->why, sizeof(s->why),
					 "first record of a file: type %u", h->type);
			s->failed = true;
			return;
		}
		s->streams++;
		off = h->size;
	}
	while (off < n && !s->failed) {
		const struct netlat_rec_hdr *h = (const void *)(buf + off);

		if (nl_log_add(&s->log, h, n - off)) {
			memcpy(s->why, s->log.why, sizeof(s->why));
			s->failed = true;
			return;
		}
		off += h->size;
	}
}

static void *concurrent_reader(void *arg)
{
	struct shared_log *s = arg;
	char *buf = malloc(16 * KiB);
	unsigned int round = 0;

	while (buf && !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		int fd = nl_open(O_NONBLOCK), k;
		bool first = true;

		if (fd < 0)
			break;
		pthread_mutex_lock(&s->lock);
		s->opens++;
		pthread_mutex_unlock(&s->lock);
		for (k = 0; k < 1 + (int)(round++ % 4); k++) {
			ssize_t n;

			/* read and log as one step: records stay in order */
			pthread_mutex_lock(&s->lock);
			n = read(fd, buf, 16 * KiB);
			if (n > 0) {
				s->reads++;
				shared_feed(s, buf, n, first);
				first = false;
			} else if (n < 0 && errno == EBUSY) {
				s->ebusy++;
			} else if (n < 0 && errno != EAGAIN) {
				snprintf(s->why, sizeof(s->why), "read: %s",
					 strerror(errno));
				s->failed = true;
			}
			pthread_mutex_unlock(&s->lock);
			usleep(300);
		}
		close(fd);
	}
	free(buf);
	return NULL;
}

TEST_F_TIMEOUT(life, concurrent_readers, 120)
{
	const int nreaders = 4;
	struct shared_log s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t th[nreaders];
	struct writer w = { 0 };
	uint64_t lost = 0, seen = 0;
	bool first = true;
	unsigned int c;
	ssize_t n;
	int fd, i;

	fd = nl_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nl_reconfigure(fd, 64 * KiB, 16 * KiB, 10, true));
	close(fd);
	ASSERT_EQ(0, nl_log_init(&s.log, self->def.nr_cpus, false));
	s.log.seq_from_zero = true;
	for (i = 0; i < nreaders; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, concurrent_reader, &s));
	ASSERT_EQ(0, pthread_create(&w.th, NULL, writer_main, &w));
	nl_sleep_ms(3000);
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(w.th, NULL));
	ASSERT_EQ(0, w.err);
	nl_sleep_ms(200);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nreaders; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	ASSERT_FALSE(s.failed) TH_LOG("%s", s.why);

	/* what the readers left: one more reader takes it */
	fd = nl_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	while ((n = read(fd, self->buf, self->cap)) > 0) {
		shared_feed(&s, self->buf, n, first);
		first = false;
	}
	ASSERT_EQ(-1, n);
	ASSERT_EQ(EAGAIN, errno);
	close(fd);
	ASSERT_FALSE(s.failed) TH_LOG("%s", s.why);
	for (c = 0; c < s.log.nr_cpus; c++) {
		lost += s.log.cpu[c].lost;
		seen += s.log.cpu[c].markers;
	}
	TH_LOG("%d readers: %llu opens, %llu reads with data, %llu EBUSY; %llu markers written, %llu read, %llu lost",
	       nreaders, (unsigned long long)s.opens,
	       (unsigned long long)s.reads, (unsigned long long)s.ebusy,
	       (unsigned long long)w.written, (unsigned long long)seen,
	       (unsigned long long)lost);
	/* each record was read exactly once, by whoever was the consumer */
	EXPECT_EQ(w.written, seen + lost);
	EXPECT_LT(0u, s.ebusy);
	EXPECT_LT(1u, s.streams);
	nl_log_free(&s.log);
}

/* ---- memory --------------------------------------------------------------- */

static uint64_t meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			v = strtoull(line + klen + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/*
 * Free memory in bytes as the page allocator sees it: the zones' free
 * pages plus the pages each CPU keeps cached (free, but not in MemFree).
 */
static uint64_t free_bytes(void)
{
	char line[256];
	uint64_t pages = 0;
	unsigned long long v;
	FILE *f = fopen("/proc/zoneinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " pages free %llu", &v) == 1 ||
		    sscanf(line, " count: %llu", &v) == 1)
			pages += v;
	if (f)
		fclose(f);
	return pages * sysconf(_SC_PAGESIZE);
}

static uint64_t oom_kills(void)
{
	char line[256];
	uint64_t v = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "oom_kill ", 9))
			v = strtoull(line + 9, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

TEST_F_TIMEOUT(life, memory, 120)
{
	uint64_t total = meminfo_kb("MemTotal") * KiB, ring;
	int64_t before, after;
	uint64_t oom = oom_kills(), expect, page = sysconf(_SC_PAGESIZE);
	unsigned int ncpu = self->def.nr_cpus;
	struct netlat_info info;
	int fd, ret;

	fd = nl_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nl_control(fd, NETLAT_IOC_STOP));

	/* larger than the ABI allows */
	EXPECT_EQ(-EINVAL, nl_set_config(fd, NETLAT_CONFIG_RING_BYTES,
					 NETLAT_RING_BYTES_MAX * 2, 0, 0));
	EXPECT_EQ(-EINVAL, nl_set_config(fd, NETLAT_CONFIG_RING_BYTES,
					 1ull << 62, 0, 0));
	/* allowed by the ABI, but all CPUs together exceed half the RAM */
	for (ring = 1 * MiB; ring * ncpu <= total / 2; ring *= 2)
		;
	if (ring <= NETLAT_RING_BYTES_MAX) {
		ret = nl_set_config(fd, NETLAT_CONFIG_RING_BYTES, ring, 0, 0);
		EXPECT_EQ(-ENOMEM, ret) TH_LOG("%llu MiB per CPU on %llu MiB of RAM",
					       (unsigned long long)(ring / MiB),
					       (unsigned long long)(total / MiB));
	}
	ASSERT_EQ(0, nl_get_info(fd, &info));
	EXPECT_EQ(self->def.ring_bytes, info.ring_bytes);
	EXPECT_EQ(oom, oom_kills()) TH_LOG("the OOM killer ran");

	/* mem_bytes is the rings and their control pages, nothing hidden */
	ASSERT_EQ(0, nl_set_config(fd, NETLAT_CONFIG_RING_BYTES, 4 * KiB, 0, 0));
	ASSERT_EQ(0, nl_get_info(fd, &info));
	EXPECT_EQ(ncpu * (4 * KiB + 2 * page), info.mem_bytes);
	/* the page allocator's count: the rings cost what netlat reports */
	before = free_bytes();
	ASSERT_EQ(0, nl_set_config(fd, NETLAT_CONFIG_RING_BYTES, 32 * MiB, 0, 0));
	after = free_bytes();
	ASSERT_EQ(0, nl_get_info(fd, &info));
	expect = ncpu * (32 * MiB + 2 * page);
	EXPECT_EQ(expect, info.mem_bytes);
	TH_LOG("32 MiB rings: mem_bytes %llu, free memory dropped by %lld",
	       (unsigned long long)info.mem_bytes,
	       (long long)(before - after));
	EXPECT_LT((int64_t)(expect * 9 / 10), before - after);
	EXPECT_GT((int64_t)(expect * 11 / 10 + 2 * MiB), before - after);
	/* and all of it comes back */
	before = free_bytes();
	ASSERT_EQ(0, nl_set_config(fd, NETLAT_CONFIG_RING_BYTES, 4 * KiB, 0, 0));
	after = free_bytes();
	TH_LOG("back to 4 KiB rings: free memory grew by %lld",
	       (long long)(after - before));
	EXPECT_LT((int64_t)(expect * 9 / 10), after - before);
	EXPECT_GT((int64_t)(expect * 11 / 10 + 2 * MiB), after - before);
	close(fd);
}

/* ---- no kernel pointers ----------------------------------------------------- */

/* First 8-byte word in @p[0..len) that looks like a kernel address. */
static long find_kptr(const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t off;
	uint64_t v;

	for (off = 0; off + 8 <= len; off += 4) {
		memcpy(&v, b + off, 8);
		if (v >= 0xffff800000000000ull)
			return (long)off;
	}
	return -1;
}

TEST_F_TIMEOUT(life, no_kernel_pointers, 120)
{
	struct netlat_cpu_stats st;
	struct netlat_info info;
	struct nl_log l;
	struct nl_ring r;
	char msg[200];
	long at;
	int fd, k;
	unsigned int c;

	fd = nl_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	/* a small ring: the capture holds LOST records too */
	ASSERT_EQ(0, nl_reconfigure(fd, 4 * KiB, 4 * KiB, 10, true));
	memset(msg, 'a', sizeof(msg));
	for (k = 0; k < 200; k++)
		ASSERT_EQ(1 + k % 150, nl_write(fd, msg, 1 + k % 150));
	ASSERT_EQ(0, nl_log_init(&l, self->def.nr_cpus, true));
	l.expect_stream = true;
	ASSERT_EQ(0, drain(self, fd, &l)) TH_LOG("%s", l.why);
	for (k = 0; k < 10; k++)
		ASSERT_EQ(3, nl_write(fd, "end", 3));
	ASSERT_EQ(0, drain(self, fd, &l)) TH_LOG("%s", l.why);
	EXPECT_LT(0u, nl_log_count(&l, NETLAT_REC_LOST, -1));
	EXPECT_EQ(1u, nl_log_count(&l, NETLAT_REC_STREAM, -1));
	at = find_kptr(l.buf, l.len);
	EXPECT_EQ(-1, at) TH_LOG("kernel-looking value at byte %ld of the capture", at);

	ASSERT_EQ(0, nl_get_info(fd, &info));
	EXPECT_EQ(-1, find_kptr(&info, sizeof(info)));
	for (c = 0; c < info.nr_cpus; c++) {
		ASSERT_EQ(0, nl_get_stats(fd, c, &st));
		EXPECT_EQ(-1, find_kptr(&st, sizeof(st)));
	}
	close(fd);
	/* the producer page, through a consumer mapping on a fresh file */
	fd = nl_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nl_ring_map(fd, &info, 0, &r));
	EXPECT_EQ(-1, find_kptr(r.prod, info.page_size));
	EXPECT_EQ(-1, find_kptr(r.cons, info.page_size));
	nl_ring_unmap(&r);
	close(fd);
	TH_LOG("scanned %zu bytes of capture (%zu records)", l.len,
	       nl_log_count(&l, NL_ANY, -1));
	nl_log_free(&l);
}

TEST_HARNESS_MAIN
