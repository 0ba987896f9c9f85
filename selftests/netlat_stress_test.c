// SPDX-License-Identifier: GPL-2.0
/*
 * Stress and CPU hotplug tests of netlat's rings.
 *
 * irq_and_process: on every CPU, markers written at the same time from
 * hardirq (an hrtimer) and softirq (a tasklet) by netlat_stress.ko, and
 * from process context by a thread pinned to that CPU, while this process
 * reads. Long enough to wrap the rings many times. Checked against what
 * the writers themselves counted: per CPU, attempts == received + lost,
 * exactly; per interrupt source, received == what the module stored;
 * every record's header and payload self-consistent (no torn record).
 *
 * hotplug: a CPU goes offline and online while markers are written and
 * read; records written on it before it went offline are read intact
 * while it is offline, later ones too, and every marker is accounted for.
 *
 * room_for_other_modules: a module with 4 KiB of static per-CPU data
 * loads after netlat (the kernel's reserve for them all is 8 KiB).
 *
 * Needs root, netlat loaded, and (but for hotplug) netlat_stress.ko
 * at $NETLAT_STRESS_KO (default /lib/netlat/netlat_stress.ko).
 */
#include "netlat_util.h"

#include <pthread.h>
#include <sys/syscall.h>
#include "stress/netlat_stress.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define KiB 1024ull
#define STRESS_PARAMS "/sys/module/netlat_stress/parameters/"

static struct netlat_info g_def;
static int g_dev_errno;
static int g_cpus[CPU_SETSIZE];
static int g_ncpus;

static void __attribute__((constructor)) stress_snapshot(void)
{
	int fd;

	g_ncpus = nl_usable_cpus(g_cpus, CPU_SETSIZE);
	fd = nl_open(0);
	if (fd < 0) {
		g_dev_errno = errno;
		return;
	}
	if (nl_get_info(fd, &g_def))
		g_dev_errno = errno;
	close(fd);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* ---- payload checks ------------------------------------------------------ */

struct src_track {
	uint64_t seen;
	int64_t last;		/* last index received, -1 before */
};

struct stress_check {
	unsigned int nr_cpus;
	struct src_track (*t)[NETLAT_STRESS_NR_SOURCES];	/* [cpu][src] */
	bool (*sentinel_seen);
	uint64_t *sentinel;	/* PROCESS index of the last marker per CPU */
	bool roamer_ok;		/* markers of 'r' bytes are roamers' */
	uint64_t roamed;
};

static int stress_on_marker(struct nl_log *l, const struct netlat_rec_marker *m)
{
	struct stress_check *c = l->priv;
	const struct netlat_stress_payload *p = (const void *)m->data;
	struct src_track *t;
	uint32_t i, n;

	if (c->roamer_ok && m->data[0] == 'r') {
		for (i = 0; i < m->len; i++)
			if (m->data[i] != 'r')
				return nl_fail(l->why, sizeof(l->why),
					       "roaming marker torn at %u", i);
		c->roamed++;
		return 0;
	}
	if (m->len < sizeof(*p) || p->magic != NETLAT_STRESS_MAGIC)
		return nl_fail(l->why, sizeof(l->why),
			       "cpu %u seq %llu: marker len %u magic 0x%x: not ours",
			       m->hdr.cpu, (unsigned long long)m->hdr.seq,
			       m->len, m->len >= 4 ? p->magic : 0);
	if (p->source < NETLAT_STRESS_HARDIRQ ||
	    p->source >= NETLAT_STRESS_NR_SOURCES)
		return nl_fail(l->why, sizeof(l->why), "source %u", p->source);
	if (p->cpu != m->hdr.cpu)
		return nl_fail(l->why, sizeof(l->why),
			       "payload cpu %u in a record of cpu %u (source %u)",
			       p->cpu, m->hdr.cpu, p->source);
	if ((p->source == NETLAT_STRESS_PROCESS) != (m->pid != 0 && m->tid != 0))
		return nl_fail(l->why, sizeof(l->why),
			       "source %u with pid %u tid %u", p->source,
			       m->pid, m->tid);
	if (m->len != netlat_stress_len(p->index))
		return nl_fail(l->why, sizeof(l->why),
			       "cpu %u source %u index %llu: len %u, expected %u",
			       p->cpu, p->source, (unsigned long long)p->index,
			       m->len, netlat_stress_len(p->index));
	n = m->len - sizeof(*p);
	for (i = 0; i < n; i++)
		if (p->fill[i] != netlat_stress_byte(p->source, p->cpu,
						     p->index, i))
			return nl_fail(l->why, sizeof(l->why),
				       "cpu %u source %u index %llu: torn payload at byte %u",
				       p->cpu, p->source,
				       (unsigned long long)p->index, i);
	t = &c->t[p->cpu][p->source];
	if ((int64_t)p->index <= t->last)
		return nl_fail(l->why, sizeof(l->why),
			       "cpu %u source %u: index %llu after %lld",
			       p->cpu, p->source, (unsigned long long)p->index,
			       (long long)t->last);
	t->last = (int64_t)p->index;
	t->seen++;
	if (p->source == NETLAT_STRESS_PROCESS &&
	    p->index == c->sentinel[p->cpu])
		c->sentinel_seen[p->cpu] = true;
	return 0;
}

static int stress_check_init(struct stress_check *c, struct nl_log *l,
			     unsigned int nr_cpus)
{
	unsigned int cpu, s;

	memset(c, 0, sizeof(*c));
	c->nr_cpus = nr_cpus;
	c->t = calloc(nr_cpus, sizeof(*c->t));
	c->sentinel_seen = calloc(nr_cpus, sizeof(*c->sentinel_seen));
	c->sentinel = calloc(nr_cpus, sizeof(*c->sentinel));
	if (!c->t || !c->sentinel_seen || !c->sentinel)
		return -ENOMEM;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		c->sentinel[cpu] = UINT64_MAX;
		for (s = 0; s < NETLAT_STRESS_NR_SOURCES; s++)
			c->t[cpu][s].last = -1;
	}
	if (nl_log_init(l, nr_cpus, false))
		return -ENOMEM;
	l->expect_stream = true;
	l->seq_from_zero = true;
	l->on_marker = stress_on_marker;
	l->priv = c;
	return 0;
}

static void stress_check_free(struct stress_check *c, struct nl_log *l)
{
	free(c->t);
	free(c->sentinel_seen);
	free(c->sentinel);
	nl_log_free(l);
}

/* Write one PROCESS marker of @index for @cpu; -errno or 0. */
static int write_process_marker(int fd, unsigned int cpu, uint64_t index)
{
	union {
		struct netlat_stress_payload p;
		unsigned char b[256];
	} u;
	uint32_t len = netlat_stress_len(index);
	ssize_t n;

	netlat_stress_fill(&u.p, NETLAT_STRESS_PROCESS, cpu, index);
	n = nl_write(fd, &u, len);
	if (n < 0)
		return (int)n;
	return n == len ? 0 : -EIO;
}

/* ---- process-context writers -------------------------------------------- */

struct pwriter {
	pthread_t th;
	int fd;
	int cpu;
	int *stop;
	uint64_t written;
	uint64_t max;
	int err;
};

static void *pwriter_main(void *arg)
{
	struct pwriter *w = arg;

	w->err = nl_pin_thread(w->cpu);
	while (!w->err && w->written < w->max &&
	       !__atomic_load_n(w->stop, __ATOMIC_ACQUIRE)) {
		w->err = write_process_marker(w->fd, w->cpu, w->written);
		if (!w->err)
			w->written++;
		if (w->written % 64 == 0)
			sched_yield();
	}
	return NULL;
}

/* ---- the stress module -------------------------------------------------- */

static int load_stress_module(const char *params)
{
	const char *path = getenv("NETLAT_STRESS_KO");
	int fd, ret;

	if (!path)
		path = "/lib/netlat/netlat_stress.ko";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int unload_stress_module(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, "netlat_stress", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			return -errno;
		nl_sleep_ms(50);
	}
	return -EBUSY;
}

struct irq_counts {
	uint64_t stored[NETLAT_STRESS_NR_SOURCES];
	uint64_t dropped[NETLAT_STRESS_NR_SOURCES];
	bool ran;
};

/* Parse the module's stats into @ic ([cpu]); 1 if done, 0 if not, -errno. */
static int read_stress_stats(struct irq_counts *ic, unsigned int nr_cpus)
{
	char line[256];
	bool done = false;
	FILE *f = fopen(STRESS_PARAMS "stats", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long hs, hd, ss, sd;
		unsigned int cpu;

		if (!strncmp(line, "done", 4)) {
			done = true;
			continue;
		}
		if (sscanf(line, "%u %llu %llu %llu %llu", &cpu, &hs, &hd, &ss,
			   &sd) != 5 || cpu >= nr_cpus) {
			fclose(f);
			return -EPROTO;
		}
		ic[cpu].ran = true;
		ic[cpu].stored[NETLAT_STRESS_HARDIRQ] = hs;
		ic[cpu].dropped[NETLAT_STRESS_HARDIRQ] = hd;
		ic[cpu].stored[NETLAT_STRESS_SOFTIRQ] = ss;
		ic[cpu].dropped[NETLAT_STRESS_SOFTIRQ] = sd;
	}
	fclose(f);
	return done;
}

/* ---- fixture ------------------------------------------------------------- */

FIXTURE(stress) {
	int fd;
	char *buf;
	size_t cap;
};

FIXTURE_SETUP(stress)
{
	self->fd = -1;
	self->cap = 256 * KiB;
	self->buf = malloc(self->cap);
	ASSERT_NE(NULL, self->buf);
	if (g_dev_errno)
		SKIP(return, "%s: %s", NETLAT_DEVICE_PATH,
		     strerror(g_dev_errno));
	self->fd = nl_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
}

FIXTURE_TEARDOWN(stress)
{
	int fd;

	if (self->fd >= 0)
		close(self->fd);
	free(self->buf);
	fd = nl_open(0);
	if (fd >= 0) {
		EXPECT_EQ(0, nl_reconfigure(fd, g_def.ring_bytes,
					    g_def.watermark, g_def.flush_ms,
					    true));
		close(fd);
	}
}

/* Read everything pending through @l: records read, or -1 (l->why). */
static long consume(FIXTURE_DATA(stress) *self, struct nl_log *l)
{
	uint64_t before = l->nrec;
	ssize_t n;

	do
		n = nl_log_read(l, self->fd, self->buf, self->cap);
	while (n > 0);
	if (n == -EAGAIN)
		return (long)(l->nrec - before);
	if (n != -EPROTO)
		nl_fail(l->why, sizeof(l->why), "read: %s", strerror((int)-n));
	return -1;
}

/*
 * Write one more PROCESS marker on each CPU of @cpus (rings are drained,
 * so it is stored and flushes any pending LOST record) and read until all
 * of them arrived.
 */
static void sentinels(struct __test_metadata *_metadata,
		      FIXTURE_DATA(stress) *self, struct nl_log *l,
		      struct stress_check *c, const int *cpus, int ncpus,
		      const uint64_t *next_index)
{
	uint64_t deadline;
	int i;

	ASSERT_LE(0, consume(self, l)) TH_LOG("%s", l->why);
	for (i = 0; i < ncpus; i++) {
		c->sentinel[cpus[i]] = next_index[i];
		ASSERT_EQ(0, nl_pin_thread(cpus[i]));
		ASSERT_EQ(0, write_process_marker(self->fd, cpus[i],
						  next_index[i]));
	}
	deadline = nl_mono_ns() + 20000000000ull;
	for (;;) {
		for (i = 0; i < ncpus && c->sentinel_seen[cpus[i]]; i++)
			;
		if (i == ncpus)
			break;
		ASSERT_LT(nl_mono_ns(), deadline)
			TH_LOG("last marker of cpu %d never arrived", cpus[i]);
		ASSERT_LE(0, consume(self, l)) TH_LOG("%s", l->why);
		nl_sleep_ms(2);
	}
}

/*
 * Modules' static per-CPU data comes from one reserve the kernel shares
 * among them all (8 KiB on x86-64): netlat must leave room for the
 * others. netlat_stress.ko takes NETLAT_STRESS_PERCPU_ROOM bytes of it.
 */
TEST_F(stress, room_for_other_modules)
{
	int ret = load_stress_module("count=1 period_us=1000");

	ASSERT_EQ(0, ret)
		TH_LOG("a module with %u bytes of static per-CPU data after netlat: %s",
		       NETLAT_STRESS_PERCPU_ROOM, strerror(-ret));
	ASSERT_EQ(0, unload_stress_module());
}

TEST_F_TIMEOUT(stress, irq_and_process, 300)
{
	const uint64_t count = env_u64("NETLAT_STRESS_COUNT", 10000);
	const uint64_t period = env_u64("NETLAT_STRESS_PERIOD_US", 100);
	const uint64_t ring = env_u64("NETLAT_STRESS_RING", 16 * KiB);
	unsigned int nr = g_def.nr_cpus, cpu;
	struct irq_counts *ic;
	struct stress_check c;
	struct pwriter *w;
	uint64_t *next, deadline, sum_att = 0, sum_lost = 0;
	uint64_t reads = 0;
	char params[96];
	int stop = 0, i, done = 0, ret;
	struct nl_log l;

	ASSERT_EQ(0, nl_reconfigure(self->fd, ring, ring / 4, 10, true));
	ASSERT_EQ(0, stress_check_init(&c, &l, nr));
	ic = calloc(nr, sizeof(*ic));
	w = calloc(g_ncpus, sizeof(*w));
	next = calloc(g_ncpus, sizeof(*next));
	ASSERT_TRUE(ic && w && next);
	/* the stream header first: this file is the consumer */
	ASSERT_LE(0, consume(self, &l)) TH_LOG("%s", l.why);

	for (i = 0; i < g_ncpus; i++) {
		w[i] = (struct pwriter){ .fd = self->fd, .cpu = g_cpus[i],
					 .stop = &stop, .max = UINT64_MAX };
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, pwriter_main, &w[i]));
	}
	snprintf(params, sizeof(params), "count=%llu period_us=%llu",
		 (unsigned long long)count, (unsigned long long)period);
	ret = load_stress_module(params);
	if (ret) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		for (i = 0; i < g_ncpus; i++)
			pthread_join(w[i].th, NULL);
		ASSERT_EQ(0, ret) TH_LOG("loading netlat_stress.ko: %s",
					 strerror(-ret));
	}

	deadline = nl_mono_ns() + 240000000000ull;
	while (!done) {
		long n = consume(self, &l);

		ASSERT_LE(0, n) TH_LOG("%s", l.why);
		reads++;
		done = read_stress_stats(ic, nr);
		ASSERT_LE(0, done) TH_LOG("stats: %s", strerror(-done));
		if (nl_mono_ns() > deadline)
			break;
		if (!n)
			nl_sleep_ms(1);
		else if (reads % 32 == 0)
			nl_sleep_ms(10);	/* a slow reader now and then */
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < g_ncpus; i++) {
		ASSERT_EQ(0, pthread_join(w[i].th, NULL));
		ASSERT_EQ(0, w[i].err) TH_LOG("writer on cpu %d: %s", w[i].cpu,
					      strerror(-w[i].err));
		next[i] = w[i].written;
	}
	ASSERT_EQ(1, done) TH_LOG("the interrupt writers did not finish in time");
	ASSERT_EQ(1, read_stress_stats(ic, nr));
	ASSERT_EQ(0, unload_stress_module());

	sentinels(_metadata, self, &l, &c, g_cpus, g_ncpus, next);

	for (i = 0; i < g_ncpus; i++) {
		const struct nl_cpu_track *t;
		struct netlat_cpu_stats st;
		uint64_t att, got;
		int s;

		cpu = g_cpus[i];
		t = &l.cpu[cpu];
		EXPECT_TRUE(ic[cpu].ran) TH_LOG("no interrupt writer on cpu %u", cpu);
		att = w[i].written + 1;		/* + the sentinel */
		got = c.t[cpu][NETLAT_STRESS_PROCESS].seen;
		for (s = NETLAT_STRESS_HARDIRQ; s <= NETLAT_STRESS_SOFTIRQ; s++) {
			EXPECT_EQ(count, ic[cpu].stored[s] + ic[cpu].dropped[s]);
			/* every record the module stored arrived */
			EXPECT_EQ(ic[cpu].stored[s], c.t[cpu][s].seen)
				TH_LOG("cpu %u source %d", cpu, s);
			att += ic[cpu].stored[s] + ic[cpu].dropped[s];
			got += c.t[cpu][s].seen;
		}
		TH_LOG("cpu %u: process %llu, hardirq %llu+%llu dropped, softirq %llu+%llu dropped, received %llu, lost %llu",
		       cpu, (unsigned long long)w[i].written + 1,
		       (unsigned long long)ic[cpu].stored[NETLAT_STRESS_HARDIRQ],
		       (unsigned long long)ic[cpu].dropped[NETLAT_STRESS_HARDIRQ],
		       (unsigned long long)ic[cpu].stored[NETLAT_STRESS_SOFTIRQ],
		       (unsigned long long)ic[cpu].dropped[NETLAT_STRESS_SOFTIRQ],
		       (unsigned long long)got, (unsigned long long)t->lost);
		/* conservation, exact: everything attempted arrived or was lost */
		EXPECT_EQ(att, got + t->lost);
		EXPECT_EQ(got, t->markers);
		EXPECT_FALSE(t->last_lost);
		/* the rings wrapped many times */
		EXPECT_LT(4 * ring, (got + t->lost) * sizeof(struct netlat_rec_marker));
		/* secondary: the module's own counters */
		ASSERT_EQ(0, nl_get_stats(self->fd, cpu, &st));
		EXPECT_EQ(t->records, st.written);
		EXPECT_EQ(t->lost, st.dropped);
		sum_att += att;
		sum_lost += t->lost;
	}
	TH_LOG("%llu markers attempted, %llu lost", (unsigned long long)sum_att,
	       (unsigned long long)sum_lost);
	free(ic);
	free(w);
	free(next);
	stress_check_free(&c, &l);
}

/* ---- CPU hotplug ---------------------------------------------------------- */

static int set_online(int cpu, bool on)
{
	char path[96];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/* A writer that runs wherever the scheduler puts it (no pinning). */
struct roamer {
	pthread_t th;
	int fd;
	int *stop;
	uint64_t written;
	int err;
};

static void *roamer_main(void *arg)
{
	struct roamer *r = arg;
	char buf[64];

	memset(buf, 'r', sizeof(buf));
	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		ssize_t n = nl_write(r->fd, buf, 1 + r->written % sizeof(buf));

		if (n < 0) {
			r->err = (int)n;
			break;
		}
		r->written++;
		usleep(500);
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, hotplug, 240)
{
	const int victim = 1, K = 300, cycles = 4;
	unsigned int nr = g_def.nr_cpus;
	struct netlat_cpu_stats st;
	struct stress_check c;
	int stop = 0, cyc, k, cpus[2] = { 0, victim };
	struct roamer r = { .fd = self->fd, .stop = &stop };
	uint64_t next[2] = { 0, 0 }, seen = 0, lost = 0;
	struct nl_log l;

	if (access("/sys/devices/system/cpu/cpu1/online", W_OK))
		SKIP(return, "cpu1 cannot be taken offline here");
	ASSERT_EQ(0, nl_reconfigure(self->fd, 1024 * KiB, 256 * KiB, 10, true));
	ASSERT_EQ(0, stress_check_init(&c, &l, nr));
	c.roamer_ok = true;
	ASSERT_LE(0, consume(self, &l)) TH_LOG("%s", l.why);

	ASSERT_EQ(0, pthread_create(&r.th, NULL, roamer_main, &r));
	for (cyc = 0; cyc < cycles; cyc++) {
		/* records on the victim, left unread across the offline */
		ASSERT_EQ(0, nl_pin_thread(victim));
		for (k = 0; k < K; k++)
			ASSERT_EQ(0, write_process_marker(self->fd, victim,
							  next[1]++));
		ASSERT_EQ(0, nl_pin_thread(0));
		ASSERT_EQ(0, set_online(victim, false));
		ASSERT_EQ(0, nl_get_stats(self->fd, victim, &st));
		EXPECT_LT(st.cons, st.prod) TH_LOG("victim's records gone");
		for (k = 0; k < K; k++)
			ASSERT_EQ(0, write_process_marker(self->fd, 0, next[0]++));
		/* read while it is offline: the victim's records, intact */
		ASSERT_LE(0, consume(self, &l)) TH_LOG("%s", l.why);
		ASSERT_EQ(0, nl_get_stats(self->fd, victim, &st));
		EXPECT_EQ(st.cons, st.prod);
		ASSERT_EQ(0, set_online(victim, true));
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(r.th, NULL));
	ASSERT_EQ(0, r.err);
	sentinels(_metadata, self, &l, &c, cpus, 2, next);

	for (k = 0; k < 2; k++) {
		const struct nl_cpu_track *t = &l.cpu[cpus[k]];

		seen += t->markers;
		lost += t->lost;
		EXPECT_FALSE(t->last_lost);
		/* nothing lost on a CPU: every pinned marker arrived */
		if (!t->lost)
			EXPECT_EQ(next[k] + 1,
				  c.t[cpus[k]][NETLAT_STRESS_PROCESS].seen);
	}
	TH_LOG("%d offline/online cycles: %llu markers pinned, %llu roaming, %llu received, %llu lost",
	       cycles, (unsigned long long)(next[0] + next[1] + 2),
	       (unsigned long long)r.written, (unsigned long long)seen,
	       (unsigned long long)lost);
	EXPECT_EQ(r.written, c.roamed);
	EXPECT_EQ(next[0] + next[1] + 2 + r.written, seen + lost);
	EXPECT_EQ(nr, (unsigned int)sysconf(_SC_NPROCESSORS_CONF));
	stress_check_free(&c, &l);
}

TEST_HARNESS_MAIN
