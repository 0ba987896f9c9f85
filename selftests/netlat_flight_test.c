// SPDX-License-Identifier: GPL-2.0
/*
 * Flight recorder tests: overwrite mode, snapshots and triggers.
 *
 * overwrite_exact: one pinned thread writes far more markers than a ring
 *	holds; the snapshot holds exactly the newest ones (the one before them
 *	would not have fitted), sequences contiguous, and the counters agree
 *	with what the test wrote: overwritten = written - kept.
 * snapshot_while_writing: writers on every CPU, snapshots taken meanwhile:
 *	every record whole and intact, per-CPU sequences and payload indices
 *	contiguous.
 * marker_trigger: a tagged marker freezes a snapshot post_ms later; POLLPRI
 *	on every file; the snapshot has the triggering record, what was
 *	written in the post window, and the pre window cut the older records.
 * state_machine: TAKE/RELEASE/READ/mmap and every -EBUSY and -ENODATA.
 * read_equals_mmap: both give the same bytes; read() works in any size.
 * live_stream_busy: overwrite mode has no live read(), CONS mmap, POLLIN.
 * invalid_args: -EINVAL for each malformed trigger field, mode, flag.
 * unprivileged: -EPERM for every setting call without capabilities.
 * snapshot_hotplug: CPU 1 offline and online while snapshots are taken.
 * unload_pending: rmmod while a trigger's post window runs, insmod again.
 * trigger_irqsoff_under_1ms: with 64 MiB rings full, a trigger's snapshot
 *	keeps no interrupts-off section of 1 ms (the irqsoff tracer; the
 *	debug kernel only).
 *
 * The oracles are what the test wrote and when. Each test restores the
 * module's state (mode, triggers, snapshot, ring settings, running).
 */
#include "netlat_util.h"
#include "netlat_snap.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define KiB 1024ull
#define MS 1000000ull
#define TAG "FLIGHT-TRIG"

static int g_cpus[CPU_SETSIZE];
static int g_ncpus;

/* ---- trigger on a tagged marker ---------------------------------------- */

static int trig_marker(int fd, uint32_t pre_ms, uint32_t post_ms)
{
	struct netlat_triggers t = {
		.armed = NETLAT_TRIG_MARKER,
		.pre_ms = pre_ms,
		.post_ms = post_ms,
		.marker_tag_len = strlen(TAG),
	};

	memcpy(t.marker_tag, TAG, strlen(TAG));
	return trig_set(fd, &t);
}

/* ---- markers with a self-describing payload ------------------------------ */

#define PAY_MAGIC 0x464c4954u

struct payload {
	uint32_t magic;
	uint32_t cpu;
	uint64_t index;
	uint64_t t_ns;		/* CLOCK_MONOTONIC just before write() */
	char kind[8];		/* "old", "pre", "post", ... */
	unsigned char fill[];
};

static size_t pay_len(uint64_t index)
{
	return sizeof(struct payload) + (index * 7) % 97;
}

static ssize_t write_pay(int fd, const char *kind, unsigned int cpu,
			 uint64_t index, uint64_t *t_ns)
{
	unsigned char buf[256];
	struct payload *p = (void *)buf;
	size_t len = pay_len(index);

	memset(buf, 0, sizeof(buf));
	p->magic = PAY_MAGIC;
	p->cpu = cpu;
	p->index = index;
	snprintf(p->kind, sizeof(p->kind), "%s", kind);
	nl_fill_pattern(p->fill, len - sizeof(*p), (uint32_t)(cpu * 1000003u + index));
	p->t_ns = nl_mono_ns();
	if (t_ns)
		*t_ns = p->t_ns;
	return nl_write(fd, buf, len);
}

/* The payload of a marker written by write_pay(), checked; NULL if not. */
static const struct payload *pay_of(const struct netlat_rec_hdr *h)
{
	const struct netlat_rec_marker *m = (const void *)h;
	const struct payload *p = (const void *)m->data;
	unsigned char want[256];

	if (h->type != NETLAT_REC_MARKER || m->len < sizeof(*p) ||
	    p->magic != PAY_MAGIC || m->len != pay_len(p->index))
		return NULL;
	nl_fill_pattern(want, m->len - sizeof(*p),
			(uint32_t)(p->cpu * 1000003u + p->index));
	return memcmp(want, p->fill, m->len - sizeof(*p)) ? NULL : p;
}

/* ---- fixture ------------------------------------------------------------- */

FIXTURE(flight) {
	int fd;
	struct netlat_info info;
	struct netlat_probes probes;
	unsigned char *buf;
	size_t cap;
};

static void __attribute__((constructor)) flight_cpus(void)
{
	g_ncpus = nl_usable_cpus(g_cpus, CPU_SETSIZE);
}

FIXTURE_SETUP(flight)
{
	struct netlat_snapshot s;
	int ret;

	self->fd = nl_open(O_NONBLOCK);
	self->buf = NULL;
	if (self->fd < 0)
		SKIP(return, "%s: %s", NETLAT_DEVICE_PATH, strerror(errno));
	ASSERT_EQ(0, nl_get_info(self->fd, &self->info));
	ret = snap_ioc(self->fd, 0, &s);
	if (ret == -EOPNOTSUPP || ret == -ENOTTY)
		SKIP(return, "no snapshots in this module: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	ASSERT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state) TH_LOG("a snapshot was left behind");
	ASSERT_EQ((uint32_t)NETLAT_MODE_STREAM, self->info.mode);
	/* only the test's own markers in the rings */
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &self->probes));
	if (self->probes.enabled)
		ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	self->cap = 64 * 1024 * 1024;
	self->buf = malloc(self->cap);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(flight)
{
	struct netlat_info info;
	struct netlat_snapshot s = { .state = ~0u };
	int fd = nl_open(0);

	free(self->buf);
	if (self->fd >= 0)
		close(self->fd);
	if (fd < 0)
		return;
	EXPECT_EQ(0, trig_off(fd));
	EXPECT_EQ(0, snap_ioc(fd, NETLAT_SNAPSHOT_RELEASE, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
	EXPECT_EQ(0, nl_control(fd, NETLAT_IOC_STOP));
	EXPECT_EQ(0, set_mode(fd, NETLAT_MODE_STREAM));
	EXPECT_EQ(0, nl_reconfigure(fd, self->info.ring_bytes,
				    self->info.watermark, self->info.flush_ms,
				    self->info.state & NETLAT_STATE_RUNNING));
	if (self->probes.enabled)
		EXPECT_EQ(0, nl_probes(fd, true, self->probes.enabled, NULL));
	EXPECT_EQ(0, nl_get_info(fd, &info));
	EXPECT_EQ((uint32_t)NETLAT_MODE_STREAM, info.mode);
	close(fd);
}

/* ---- overwrite mode ------------------------------------------------------ */

TEST_F(flight, overwrite_exact)
{
	const uint64_t ring = 16 * KiB, N = 3000;
	const int cpu = g_cpus[g_ncpus - 1];
	const struct netlat_rec_snap_cpu *sc;
	const struct payload *p = NULL;
	struct netlat_cpu_stats st;
	struct netlat_snapshot s;
	struct netlat_info info;
	struct snap_view v;
	uint64_t i, kept, bytes = 0, total = 0;
	ssize_t len;
	unsigned int c;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, ring));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	ASSERT_EQ((uint32_t)NETLAT_MODE_OVERWRITE, info.mode);
	ASSERT_EQ(0, nl_pin_thread(cpu));
	for (i = 0; i < N; i++)
		ASSERT_EQ((ssize_t)pay_len(i), write_pay(self->fd, "ow", cpu, i, NULL));
	/* far more than fits */
	ASSERT_LT(4 * ring, N * sizeof(struct payload));

	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_TAKE, &s));
	ASSERT_EQ((uint32_t)NETLAT_SNAP_FROZEN, s.state);
	len = snap_read_all(self->fd, self->buf, self->cap, 65536);
	ASSERT_LT(0, len) TH_LOG("%s", strerror((int)-len));
	ASSERT_EQ((uint64_t)len, s.bytes);
	ASSERT_EQ(0, view_parse(&v, self->buf, len, self->info.nr_cpus))
		TH_LOG("%s", v.why);
	EXPECT_EQ((uint32_t)NETLAT_SNAP_MANUAL, v.snap->reason);
	EXPECT_EQ((uint32_t)NETLAT_MODE_OVERWRITE, v.snap->mode);
	EXPECT_EQ(s.id, v.snap->id);
	EXPECT_EQ(0u, v.snap->start_ns);

	sc = v.cpu[cpu];
	ASSERT_NE(NULL, sc);
	kept = sc->records;
	ASSERT_LT(0u, kept);
	ASSERT_GT(N, kept);
	/* exactly the newest, in order, each one intact */
	for (i = 0; i < kept; i++) {
		const struct netlat_rec_hdr *h = view_rec(&v, cpu, i);

		p = pay_of(h);
		ASSERT_NE(NULL, p) TH_LOG("record %llu of cpu %d is not ours",
					  (unsigned long long)i, cpu);
		ASSERT_EQ(N - kept + i, p->index);
		ASSERT_EQ(p->index, h->seq);
		bytes += h->size;
	}
	ASSERT_NE(NULL, p);
	EXPECT_EQ(N - 1, p->index);
	EXPECT_EQ(bytes, sc->bytes);
	EXPECT_EQ(N - kept, sc->first_seq);
	/* the ring is as full as it can be: one older record would not fit */
	EXPECT_GE(ring, bytes);
	EXPECT_LT(ring, bytes + NL_MARKER_SIZE(pay_len(N - kept - 1)));
	/* the counters are the test's own counts */
	EXPECT_EQ(N, sc->written);
	EXPECT_EQ(N - kept, sc->overwritten);
	EXPECT_EQ(0u, sc->dropped);
	EXPECT_EQ(0u, sc->skipped);
	for (c = 0; c < self->info.nr_cpus; c++) {
		if (!v.cpu[c])
			continue;
		total += v.cpu[c]->written;
		EXPECT_EQ(v.cpu[c]->written,
			  v.cpu[c]->overwritten + v.cpu[c]->records +
			  v.cpu[c]->skipped);
	}
	EXPECT_EQ(N, total) TH_LOG("records on other CPUs than the test's");
	ASSERT_EQ(0, nl_get_stats(self->fd, cpu, &st));
	EXPECT_EQ(N - kept, st.overwritten);
	EXPECT_EQ(N, st.written);
	EXPECT_EQ(bytes, st.prod - st.cons);
	view_free(&v);
}

/* ---- snapshots while every CPU writes --------------------------------- */

struct writer {
	pthread_t th;
	int fd;
	int cpu;
	int *stop;
	uint64_t written;
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	ssize_t n;

	w->err = nl_pin_thread(w->cpu);
	while (!w->err && !__atomic_load_n(w->stop, __ATOMIC_ACQUIRE)) {
		n = write_pay(w->fd, "w", w->cpu, w->written, NULL);
		if (n < 0)
			w->err = (int)n;
		else
			w->written++;
	}
	return NULL;
}

TEST_F_TIMEOUT(flight, snapshot_while_writing, 120)
{
	const uint64_t ring = 64 * KiB;
	const int rounds = 12;
	struct writer *w;
	int stop = 0, i, r;
	uint64_t checked = 0;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, ring));
	w = calloc(g_ncpus, sizeof(*w));
	ASSERT_NE(NULL, w);
	for (i = 0; i < g_ncpus; i++) {
		w[i] = (struct writer){ .fd = self->fd, .cpu = g_cpus[i],
					.stop = &stop };
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, writer_main, &w[i]));
	}
	nl_sleep_ms(100);
	for (r = 0; r < rounds; r++) {
		struct netlat_snapshot s;
		struct snap_view v;

		ASSERT_EQ(0, take_view(self->fd, self->buf, self->cap, 4096 + r,
				       self->info.nr_cpus, &v))
			TH_LOG("round %d: %s", r, v.why);
		for (i = 0; i < g_ncpus; i++) {
			const struct netlat_rec_snap_cpu *sc = v.cpu[g_cpus[i]];
			const struct payload *p;
			uint64_t k, prev = 0;

			ASSERT_NE(NULL, sc);
			EXPECT_LT(0u, sc->records) TH_LOG("cpu %d", g_cpus[i]);
			EXPECT_GE(ring, sc->bytes);
			EXPECT_EQ(sc->written,
				  sc->overwritten + sc->records + sc->skipped);
			for (k = 0; k < sc->records; k++) {
				const struct netlat_rec_hdr *h =
					view_rec(&v, g_cpus[i], k);

				if (h->type == NETLAT_REC_LOST)
					continue;
				p = pay_of(h);
				ASSERT_NE(NULL, p) TH_LOG("round %d cpu %d record %llu torn",
							  r, g_cpus[i],
							  (unsigned long long)k);
				ASSERT_EQ((uint32_t)g_cpus[i], p->cpu);
				/* one writer per CPU: its indices follow */
				if (k && !sc->dropped)
					ASSERT_EQ(prev + 1, p->index);
				prev = p->index;
				checked++;
			}
		}
		view_free(&v);
		ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s));
		ASSERT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
		nl_sleep_ms(20);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < g_ncpus; i++) {
		ASSERT_EQ(0, pthread_join(w[i].th, NULL));
		ASSERT_EQ(0, w[i].err) TH_LOG("writer %d: %s", i,
					      strerror(-w[i].err));
		EXPECT_LT(ring / 32, w[i].written) TH_LOG("cpu %d wrote little", w[i].cpu);
	}
	TH_LOG("%d snapshots, %llu records checked", rounds,
	       (unsigned long long)checked);
	free(w);
}

/* ---- a snapshot keeps interrupts on ----------------------------------- */

/* the quiet period, then one period per snapshot */
#define LAT_PERIODS	6

/*
 * A SCHED_FIFO thread on one CPU that sleeps 100 us at a time and notes
 * how late it wakes in period *measure - 1 (none while 0): a section with
 * interrupts off on its CPU (an IPI that copies a ring) delays its timer
 * by that long.
 */
struct lat_probe {
	pthread_t th;
	int cpu;
	int *stop, *measure;
	uint64_t max_ns[LAT_PERIODS];
	int err;
};

static void *lat_main(void *arg)
{
	struct sched_param sp = { .sched_priority = 10 };
	struct lat_probe *l = arg;

	l->err = nl_pin_thread(l->cpu);
	if (!l->err)
		l->err = -pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	while (!l->err && !__atomic_load_n(l->stop, __ATOMIC_ACQUIRE)) {
		uint64_t want = nl_mono_ns() + 100000, late;
		struct timespec ts = { .tv_sec = want / 1000000000ull,
				       .tv_nsec = want % 1000000000ull };
		int period;

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		late = nl_mono_ns() - want;
		period = __atomic_load_n(l->measure, __ATOMIC_ACQUIRE) - 1;
		if (period >= 0 && late > l->max_ns[period])
			l->max_ns[period] = late;
	}
	return NULL;
}

/* Fill @cpu's ring of @ring bytes past its size with the largest markers. */
static void *fill_main(void *arg)
{
	struct writer *w = arg;
	unsigned char buf[NETLAT_MARKER_MAX];
	uint64_t target = (uint64_t)w->written;

	memset(buf, 0x5a, sizeof(buf));
	w->written = 0;
	w->err = nl_pin_thread(w->cpu);
	while (!w->err && w->written < target) {
		ssize_t n = nl_write(w->fd, buf, sizeof(buf));

		if (n < 0)
			w->err = (int)n;
		w->written++;
	}
	return NULL;
}

/* Every test CPU's ring of @ring bytes filled past its size. */
static void fill_rings(struct __test_metadata *_metadata, int fd,
		       uint64_t ring)
{
	struct writer *w = calloc(g_ncpus, sizeof(*w));
	int i;

	ASSERT_NE(NULL, w);
	for (i = 0; i < g_ncpus; i++) {
		/* the ring's size in records of NETLAT_REC_MAX_SIZE, and more */
		w[i] = (struct writer){ .fd = fd, .cpu = g_cpus[i],
					.written = ring / NETLAT_REC_MAX_SIZE * 9 / 8 };
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, fill_main, &w[i]));
	}
	for (i = 0; i < g_ncpus; i++) {
		ASSERT_EQ(0, pthread_join(w[i].th, NULL));
		ASSERT_EQ(0, w[i].err) TH_LOG("filling cpu %d: %s", w[i].cpu,
					      strerror(-w[i].err));
	}
	free(w);
}

/*
 * With 64 MiB rings full, a snapshot (the copy a trigger makes too) must
 * not keep interrupts off for the length of a ring's copy: a timer on each
 * CPU wakes its thread about as late as it does without snapshots, not as
 * late as a copy of 64 MiB takes. A ring copied with interrupts off delays
 * a timer in every snapshot; the VM's vCPU losing its host CPU does so now
 * and then (29 ms once in CI), so the least delayed snapshot of five is
 * the one judged.
 */
TEST_F_TIMEOUT(flight, snapshot_keeps_interrupts_on, 600)
{
	const uint64_t ring = 64ull << 20;
	int stop = 0, measure = 0, i, r;
	uint64_t base_ns = 0, late_ns = 0, take_ns = UINT64_MAX, bytes = 0;
	struct lat_probe *l;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, ring));
	fill_rings(_metadata, self->fd, ring);
	l = calloc(g_ncpus, sizeof(*l));
	ASSERT_NE(NULL, l);
	for (i = 0; i < g_ncpus; i++) {
		l[i] = (struct lat_probe){ .cpu = g_cpus[i], .stop = &stop,
					   .measure = &measure };
		ASSERT_EQ(0, pthread_create(&l[i].th, NULL, lat_main, &l[i]));
	}
	nl_sleep_ms(200);
	/* what the timers do here without a snapshot: period 0 */
	__atomic_store_n(&measure, 1, __ATOMIC_RELEASE);
	nl_sleep_ms(1000);
	for (r = 1; r < LAT_PERIODS; r++) {
		struct netlat_snapshot s;
		uint64_t t0, t;

		__atomic_store_n(&measure, 0, __ATOMIC_RELEASE);
		nl_sleep_ms(50);
		__atomic_store_n(&measure, r + 1, __ATOMIC_RELEASE);
		t0 = nl_mono_ns();
		ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_TAKE, &s));
		t = nl_mono_ns() - t0;
		take_ns = t < take_ns ? t : take_ns;
		bytes = s.bytes;
		ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s));
	}
	__atomic_store_n(&measure, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < g_ncpus; i++) {
		ASSERT_EQ(0, pthread_join(l[i].th, NULL));
		ASSERT_EQ(0, l[i].err) TH_LOG("probe on cpu %d: %s", l[i].cpu,
					      strerror(-l[i].err));
	}
	late_ns = UINT64_MAX;
	for (r = 0; r < LAT_PERIODS; r++) {
		uint64_t worst = 0;

		for (i = 0; i < g_ncpus; i++)
			worst = l[i].max_ns[r] > worst ? l[i].max_ns[r] : worst;
		if (r == 0)
			base_ns = worst;
		else if (worst < late_ns)
			late_ns = worst;
		if (r)
			TH_LOG("snapshot %d: timers late by at most %.3f ms",
			       r, worst / 1e6);
	}
	TH_LOG("%llu MiB per snapshot, fastest %.1f ms; timers late by at most "
	       "%.3f ms in the least delayed snapshot, %.3f ms without",
	       (unsigned long long)(bytes >> 20), take_ns / 1e6, late_ns / 1e6,
	       base_ns / 1e6);
	/* every ring held most of its 64 MiB: the copy is long */
	EXPECT_LE((uint64_t)g_ncpus * (ring / 2), bytes);
	/* a ring's copy with interrupts off would delay a timer by ~half */
	EXPECT_LT(late_ns * 4, take_ns);
	EXPECT_LT(late_ns, base_ns + take_ns / 8);
	free(l);
}

/* ---- a trigger's copy under the irqsoff tracer (the debug kernel) ------ */

#define TRACING "/sys/kernel/tracing"
#define IRQSOFF_ROUNDS 5

/*
 * The irqsoff tracer's report of its longest section: where it began and
 * ended ("=> started at: f", "=> ended at: f").
 */
static void irqsoff_where(char *out, size_t len)
{
	static char trace[16384];
	const char *a, *b;

	snprintf(out, len, "?");
	if (nl_get_str(TRACING "/trace", trace, sizeof(trace)) <= 0)
		return;
	a = strstr(trace, "started at:");
	b = strstr(trace, "ended at:");
	if (a && b)
		snprintf(out, len, "%.*s, %.*s", (int)strcspn(a, "\n"), a,
			 (int)strcspn(b, "\n"), b);
}

/*
 * The number: with 64 MiB rings full, a trigger's snapshot keeps
 * no section of interrupts off for 1 ms or more, as the kernel's irqsoff
 * tracer measures it (every section of the machine, netlat's IPIs that
 * mark each ring among them). A section of the VM's own (its vCPU losing
 * its host CPU under TCG) may exceed it in one round; a copy with
 * interrupts off would in every round: the shortest of the rounds'
 * longest sections is judged.
 */
TEST_F_TIMEOUT(flight, trigger_irqsoff_under_1ms, 900)
{
	const uint64_t ring = 64ull << 20;
	uint64_t best_us = UINT64_MAX, us, deadline, bytes = 0;
	char buf[512], where[256], best_where[256] = "";
	struct netlat_snapshot s;
	int r;

	if (nl_get_str(TRACING "/available_tracers", buf, sizeof(buf)) < 0 ||
	    !strstr(buf, "irqsoff"))
		SKIP(return, "no irqsoff tracer (the lane's debug kernel has it)");
	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, ring));
	fill_rings(_metadata, self->fd, ring);
	ASSERT_EQ(0, trig_marker(self->fd, 0, 0));
	ASSERT_EQ(0, nl_put_str(TRACING "/tracing_on", "0", O_TRUNC));
	ASSERT_EQ(0, nl_put_str(TRACING "/current_tracer", "irqsoff", O_TRUNC));
	/* a section's two ends only, not every function inside it */
	nl_put_str(TRACING "/options/function-trace", "0", O_TRUNC);
	for (r = 0; r < IRQSOFF_ROUNDS; r++) {
		ASSERT_EQ(0, nl_put_str(TRACING "/tracing_max_latency", "0", O_TRUNC));
		ASSERT_EQ(0, nl_put_str(TRACING "/tracing_on", "1", O_TRUNC));
		ASSERT_LT(0, nl_write(self->fd, TAG, strlen(TAG)));
		deadline = nl_mono_ns() + 120000 * MS;
		do {
			nl_sleep_ms(20);
			ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
		} while (s.state != NETLAT_SNAP_FROZEN && nl_mono_ns() < deadline);
		ASSERT_EQ(0, nl_put_str(TRACING "/tracing_on", "0", O_TRUNC));
		ASSERT_EQ((uint32_t)NETLAT_SNAP_FROZEN, s.state);
		bytes = s.bytes;
		ASSERT_LT(0, nl_get_str(TRACING "/tracing_max_latency", buf,
				     sizeof(buf)));
		us = strtoull(buf, NULL, 10);
		irqsoff_where(where, sizeof(where));
		TH_LOG("round %d: %llu MiB copied, longest interrupts-off section %llu us (%s)",
		       r, (unsigned long long)(bytes >> 20),
		       (unsigned long long)us, where);
		if (us < best_us) {
			best_us = us;
			snprintf(best_where, sizeof(best_where), "%s", where);
		}
		ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s));
	}
	nl_put_str(TRACING "/current_tracer", "nop", O_TRUNC);
	nl_put_str(TRACING "/tracing_on", "1", O_TRUNC);
	/* every ring held most of its 64 MiB: the copy is long */
	EXPECT_LE((uint64_t)g_ncpus * (ring / 2), bytes);
	EXPECT_GT(1000ull, best_us) TH_LOG("%s", best_where);
}

/* ---- marker trigger with pre and post windows ------------------------- */

static bool pri_ready(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLPRI };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLPRI);
}

TEST_F_TIMEOUT(flight, marker_trigger, 60)
{
	const uint32_t pre_ms = 300, post_ms = 500;
	const int cpu = g_cpus[0], nold = 10, npre = 10;
	uint64_t t_post[512], t0, t1, t_pri = 0, start_ns, deadline, k;
	struct netlat_triggers t_before, t_after;
	struct netlat_snapshot s0, s;
	const struct netlat_rec_snap_cpu *sc;
	const struct netlat_rec_hdr *h;
	const struct payload *p;
	char trig[64];
	struct snap_view v;
	int i, npost = 0, fd2, seen_post = 0;
	ssize_t len;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, 256 * KiB));
	ASSERT_EQ(0, trig_marker(self->fd, pre_ms, post_ms));
	ASSERT_EQ(0, trig_get(self->fd, &t_before));
	ASSERT_EQ(NETLAT_TRIG_MARKER, t_before.armed);
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s0));
	fd2 = nl_open(O_NONBLOCK);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, nl_pin_thread(cpu));

	for (i = 0; i < nold; i++)
		ASSERT_LT(0, write_pay(self->fd, "old", cpu, i, NULL));
	nl_sleep_ms(pre_ms + 300);
	for (i = 0; i < npre; i++)
		ASSERT_LT(0, write_pay(self->fd, "pre", cpu, nold + i, NULL));
	EXPECT_FALSE(pri_ready(fd2));

	snprintf(trig, sizeof(trig), "%s the first", TAG);
	t0 = nl_mono_ns();
	ASSERT_EQ((ssize_t)strlen(trig), nl_write(self->fd, trig, strlen(trig)));
	t1 = nl_mono_ns();
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_PENDING, s.state);

	/* the post window: markers, and a second trigger that only counts */
	deadline = t0 + (post_ms + 10000) * MS;
	while (npost < (int)NL_ARRAY_SIZE(t_post)) {
		if (pri_ready(fd2)) {
			t_pri = nl_mono_ns();
			break;
		}
		ASSERT_GT(deadline, nl_mono_ns()) TH_LOG("no POLLPRI");
		ASSERT_LT(0, write_pay(self->fd, "post", cpu, 1000 + npost,
				       &t_post[npost]));
		npost++;
		if (npost == 3)
			ASSERT_LT(0, nl_write(self->fd, TAG " again", 17));
		nl_sleep_ms(10);
	}
	ASSERT_NE(0u, t_pri);
	EXPECT_TRUE(pri_ready(self->fd)) TH_LOG("POLLPRI on every file");
	/* frozen no earlier than post_ms after the trigger */
	EXPECT_LE(t0 + post_ms * MS, t_pri);

	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_FROZEN, s.state);
	EXPECT_EQ(s0.taken + 1, s.taken);
	EXPECT_EQ(s0.missed + 1, s.missed);
	ASSERT_EQ(0, trig_get(self->fd, &t_after));
	EXPECT_EQ(t_before.fired + 2, t_after.fired);

	len = snap_read_all(fd2, self->buf, self->cap, 1000);
	ASSERT_EQ((ssize_t)s.bytes, len);
	ASSERT_EQ(0, view_parse(&v, self->buf, len, self->info.nr_cpus))
		TH_LOG("%s", v.why);
	EXPECT_EQ((uint32_t)NETLAT_SNAP_TRIGGER, v.snap->reason);
	EXPECT_EQ(NETLAT_TRIG_MARKER, v.snap->trigger);
	EXPECT_EQ(NETLAT_REC_MARKER, v.snap->trig_type);
	EXPECT_EQ(cpu, v.snap->trig_cpu);
	/* sequences start at 0 after the reset: old, pre, then the trigger */
	EXPECT_EQ((uint64_t)(nold + npre), v.snap->trig_seq);
	EXPECT_LE(t0, v.snap->trig_ts_ns);
	EXPECT_GE(t1, v.snap->trig_ts_ns);
	start_ns = v.snap->trig_ts_ns - pre_ms * MS;
	EXPECT_EQ(start_ns, v.snap->start_ns);
	EXPECT_LE(v.snap->trig_ts_ns + post_ms * MS, v.snap->hdr.ts_ns);

	sc = v.cpu[cpu];
	ASSERT_NE(NULL, sc);
	/* the pre window cut exactly the old markers */
	EXPECT_EQ((uint64_t)nold, sc->skipped);
	EXPECT_EQ((uint64_t)nold, sc->first_seq);
	for (k = 0; k < sc->records; k++) {
		h = view_rec(&v, cpu, k);
		EXPECT_LE(start_ns, h->ts_ns);
		if (k < (uint64_t)npre) {
			p = pay_of(h);
			ASSERT_NE(NULL, p);
			EXPECT_EQ((uint64_t)(nold + k), p->index);
		} else if (k == (uint64_t)npre) {
			const struct netlat_rec_marker *m = (const void *)h;

			EXPECT_EQ(v.snap->trig_seq, h->seq);
			EXPECT_EQ(v.snap->trig_ts_ns, h->ts_ns);
			ASSERT_EQ(strlen(trig), m->len);
			EXPECT_EQ(0, memcmp(m->data, trig, m->len));
		} else if ((p = pay_of(h))) {
			/* post markers: a prefix of those written, in order */
			EXPECT_EQ((uint64_t)(1000 + seen_post), p->index);
			seen_post++;
		}
	}
	/* every post marker written well inside the window is there */
	for (i = 0; i < npost; i++)
		if (t_post[i] + 100 * MS < v.snap->trig_ts_ns + post_ms * MS)
			EXPECT_LT(i, seen_post) TH_LOG("post marker %d missing", i);
	EXPECT_LT(0, seen_post);
	EXPECT_GE(npost, seen_post);
	TH_LOG("trigger at seq %llu, %d pre, %d of %d post markers kept, POLLPRI %llu ms after",
	       (unsigned long long)v.snap->trig_seq, npre, seen_post, npost,
	       (unsigned long long)((t_pri - t0) / MS));
	view_free(&v);
	close(fd2);
}

/* ---- the state machine and its errors ---------------------------------- */

TEST_F(flight, state_machine)
{
	struct netlat_snapshot s, s1;
	struct netlat_info info;
	struct netlat_triggers t;
	uint64_t fired;
	int fd2;
	void *map;
	char c;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, 64 * KiB));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	fd2 = nl_open(0);
	ASSERT_LE(0, fd2);

	/* EMPTY: RELEASE is a no-op, nothing to READ or map */
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
	EXPECT_EQ(0u, s.bytes);
	EXPECT_EQ(0u, s.id);
	EXPECT_EQ(snap_capacity(&info), s.capacity);
	EXPECT_EQ(-ENODATA, snap_ioc(fd2, NETLAT_SNAPSHOT_READ, NULL));
	EXPECT_EQ(MAP_FAILED, nl_mmap(fd2, info.page_size, PROT_READ,
				      MAP_SHARED, 0, NETLAT_MMAP_SNAPSHOT));
	EXPECT_EQ(ENODATA, errno);
	/* the idle recorder holds no buffer */
	EXPECT_EQ(info.nr_cpus * (info.ring_bytes + 2 * info.page_size),
		  info.mem_bytes);

	/* TAKE: FROZEN, numbered, counted in mem_bytes; TAKE again is busy */
	ASSERT_LT(0, nl_write(self->fd, "x", 1));
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_TAKE, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_FROZEN, s.state);
	EXPECT_LT(0u, s.bytes);
	EXPECT_EQ(s.taken, s.id) TH_LOG("ids count snapshots since load");
	EXPECT_TRUE(pri_ready(fd2));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(info.nr_cpus * (info.ring_bytes + 2 * info.page_size) +
		  s.capacity, info.mem_bytes);
	EXPECT_EQ(-EBUSY, snap_ioc(self->fd, NETLAT_SNAPSHOT_TAKE, NULL));
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s1));
	EXPECT_EQ(s.id, s1.id);
	EXPECT_EQ(s.taken, s1.taken);

	/* mapped: no RELEASE, no resize, no mode change; writable is EPERM */
	EXPECT_EQ(MAP_FAILED, nl_mmap(fd2, s.capacity, PROT_READ | PROT_WRITE,
				      MAP_SHARED, 0, NETLAT_MMAP_SNAPSHOT));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(MAP_FAILED, nl_mmap(fd2, s.capacity + info.page_size,
				      PROT_READ, MAP_SHARED, 0,
				      NETLAT_MMAP_SNAPSHOT));
	EXPECT_EQ(EINVAL, errno);
	map = nl_mmap(fd2, s.capacity, PROT_READ, MAP_SHARED, 0,
		      NETLAT_MMAP_SNAPSHOT);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	EXPECT_EQ(-EBUSY, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	EXPECT_EQ(-EBUSY, set_mode(self->fd, NETLAT_MODE_STREAM));
	EXPECT_EQ(-EBUSY, nl_set_config(self->fd, NETLAT_CONFIG_RING_BYTES,
					32 * KiB, 0, 0));
	EXPECT_EQ(0, munmap(map, s.capacity));
	/* frozen, unmapped: the ring size still cannot change under it */
	EXPECT_EQ(-EBUSY, nl_set_config(self->fd, NETLAT_CONFIG_RING_BYTES,
					32 * KiB, 0, 0));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));

	/* READ, then RELEASE: the reader gets -ENODATA */
	ASSERT_EQ(0, snap_ioc(fd2, NETLAT_SNAPSHOT_READ, NULL));
	EXPECT_EQ(1, read(fd2, &c, 1));
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s1));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s1.state);
	EXPECT_EQ(0u, s1.id);
	EXPECT_EQ(-1, read(fd2, &c, 1));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_FALSE(pri_ready(fd2));
	/* a new snapshot is not the one the reader asked for */
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_TAKE, &s1));
	EXPECT_EQ(s.id + 1, s1.id);
	EXPECT_EQ(-1, read(fd2, &c, 1));
	EXPECT_EQ(ENODATA, errno);
	/* a trigger hit while frozen is missed */
	ASSERT_EQ(0, trig_marker(self->fd, 0, 0));
	ASSERT_EQ(0, trig_get(self->fd, &t));
	fired = t.fired;
	ASSERT_LT(0, nl_write(self->fd, TAG, strlen(TAG)));
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_FROZEN, s.state);
	EXPECT_EQ(s1.id, s.id);
	EXPECT_EQ(s1.missed + 1, s.missed);
	ASSERT_EQ(0, trig_get(self->fd, &t));
	EXPECT_EQ(fired + 1, t.fired);
	/* RELEASE and TAKE in one call: a fresh one */
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE |
			      NETLAT_SNAPSHOT_TAKE, &s));
	EXPECT_EQ(s1.id + 1, s.id);
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));

	/* PENDING: a long post window; TAKE busy, nothing to read; RELEASE cancels */
	ASSERT_EQ(0, trig_marker(self->fd, 0, 60000));
	ASSERT_LT(0, nl_write(self->fd, TAG, strlen(TAG)));
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_PENDING, s.state);
	EXPECT_EQ(0u, s.bytes);
	EXPECT_EQ(-EBUSY, snap_ioc(self->fd, NETLAT_SNAPSHOT_TAKE, NULL));
	EXPECT_EQ(-ENODATA, snap_ioc(fd2, NETLAT_SNAPSHOT_READ, NULL));
	EXPECT_FALSE(pri_ready(fd2));
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s1));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s1.state);
	EXPECT_EQ(s.taken, s1.taken);
	/* still armed: it fires again, and a disarm leaves it pending */
	ASSERT_LT(0, nl_write(self->fd, TAG, strlen(TAG)));
	ASSERT_EQ(0, trig_off(self->fd));
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_PENDING, s.state);
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
	nl_sleep_ms(100);
	EXPECT_FALSE(pri_ready(fd2)) TH_LOG("a cancelled trigger froze");
	/* idle again: the buffer is gone */
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(info.nr_cpus * (info.ring_bytes + 2 * info.page_size),
		  info.mem_bytes);
	close(fd2);
}

TEST_F(flight, read_equals_mmap)
{
	static const size_t chunks[] = { 1, 7, 24, 513, 4096, 1 << 20 };
	const int cpu = g_cpus[0];
	struct netlat_snapshot s;
	unsigned char *rd;
	size_t i, len;
	ssize_t n;
	void *map;
	int fd2;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, 16 * KiB));
	ASSERT_EQ(0, nl_pin_thread(cpu));
	for (i = 0; i < 600; i++)
		ASSERT_LT(0, write_pay(self->fd, "m", cpu, i, NULL));
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_TAKE, &s));
	len = s.bytes;
	map = nl_mmap(self->fd, s.capacity, PROT_READ, MAP_SHARED, 0,
		      NETLAT_MMAP_SNAPSHOT);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	rd = malloc(len + 1);
	ASSERT_NE(NULL, rd);
	for (i = 0; i < NL_ARRAY_SIZE(chunks); i++) {
		fd2 = nl_open(0);
		ASSERT_LE(0, fd2);
		memset(rd, 0xa5, len + 1);
		n = snap_read_all(fd2, rd, len + 1, chunks[i]);
		ASSERT_EQ((ssize_t)len, n) TH_LOG("chunk %zu", chunks[i]);
		EXPECT_EQ(0, memcmp(rd, map, len)) TH_LOG("chunk %zu", chunks[i]);
		/* at the end: 0, again */
		EXPECT_EQ(0, read(fd2, rd, 1));
		close(fd2);
	}
	/* the whole stream parses */
	{
		struct snap_view v;

		EXPECT_EQ(0, view_parse(&v, map, len, self->info.nr_cpus))
			TH_LOG("%s", v.why);
		view_free(&v);
	}
	EXPECT_EQ(0, munmap(map, s.capacity));
	free(rd);
}

TEST_F(flight, live_stream_busy)
{
	struct pollfd pfd;
	char buf[NETLAT_REC_MAX_SIZE];
	int fd2;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, 16 * KiB));
	ASSERT_LT(0, nl_write(self->fd, "data", 4));
	fd2 = nl_open(O_NONBLOCK);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-1, read(fd2, buf, sizeof(buf)));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(MAP_FAILED, nl_mmap(fd2, self->info.page_size,
				      PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				      NETLAT_MMAP_CONS));
	EXPECT_EQ(EBUSY, errno);
	pfd = (struct pollfd){ .fd = fd2, .events = POLLIN | POLLPRI };
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	/* the mode cannot change while running; setting it again is fine */
	EXPECT_EQ(-EBUSY, set_mode(self->fd, NETLAT_MODE_STREAM));
	EXPECT_EQ(0, set_mode(self->fd, NETLAT_MODE_OVERWRITE));
	/* back in stream mode the live stream works */
	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_STREAM, 16 * KiB));
	ASSERT_LT(0, nl_write(self->fd, "data", 4));
	EXPECT_LT(0, read(fd2, buf, sizeof(buf)));
	close(fd2);
}

/* ---- CPU hotplug during snapshots ------------------------------------------ */

#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"

/* "0" or "1" into CPU 1's online file: 0 or -errno. */
static int cpu1_online(bool on)
{
	int fd = open(CPU1_ONLINE, O_WRONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

/* A writer whose work is taking CPU 1 down and up (written: cycles). */
static void *toggler_main(void *arg)
{
	struct writer *t = arg;

	while (!t->err && !__atomic_load_n(t->stop, __ATOMIC_ACQUIRE)) {
		t->err = cpu1_online(false);
		nl_sleep_ms(15);
		if (!t->err)
			t->err = cpu1_online(true);
		if (!t->err)	/* the test thread reads it meanwhile */
			__atomic_fetch_add(&t->written, 1, __ATOMIC_RELAXED);
		nl_sleep_ms(15);
	}
	return NULL;
}

/*
 * CPU 1 goes offline and online while snapshots are taken and CPU 1 has
 * records: an offline CPU's ring is copied too, every snapshot is whole.
 */
TEST_F_TIMEOUT(flight, snapshot_hotplug, 120)
{
	struct writer w = { 0 }, tg = { 0 };
	uint64_t deadline;
	cpu_set_t all;
	int stop = 0, r;

	if (access(CPU1_ONLINE, W_OK))
		SKIP(return, "cpu1 cannot be taken offline here");
	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, 16 * KiB));
	/* records on CPUs 1 and 0 first, then a writer on CPU 0 throughout */
	ASSERT_EQ(0, nl_pin_thread(1));
	for (r = 0; r < 100; r++) {
		ASSERT_LT(0, write_pay(self->fd, "cpu1", 1, r, NULL));
	}
	ASSERT_EQ(0, nl_pin_thread(0));
	ASSERT_LT(0, write_pay(self->fd, "cpu0", 0, 0, NULL));
	CPU_ZERO(&all);
	for (r = 0; r < g_ncpus; r++)
		CPU_SET(g_cpus[r], &all);
	ASSERT_EQ(0, nl_set_thread_mask(&all));
	w = (struct writer){ .fd = self->fd, .cpu = 0, .stop = &stop };
	tg.stop = &stop;
	ASSERT_EQ(0, pthread_create(&w.th, NULL, writer_main, &w));
	ASSERT_EQ(0, pthread_create(&tg.th, NULL, toggler_main, &tg));
	/* at least 40 snapshots and 3 hotplug cycles (slow under TCG) */
	deadline = nl_mono_ns() + 60000 * MS;
	for (r = 0; r < 40 || (__atomic_load_n(&tg.written, __ATOMIC_RELAXED) < 3 &&
			       nl_mono_ns() < deadline); r++) {
		struct snap_view v;

		ASSERT_EQ(0, take_view(self->fd, self->buf, self->cap, 65536,
				       self->info.nr_cpus, &v))
			TH_LOG("round %d: %s", r, v.why);
		ASSERT_NE(NULL, v.cpu[1]);
		/* CPU 1's markers survive its offline periods */
		EXPECT_LE(100u, v.cpu[1]->written);
		EXPECT_LT(0u, v.cpu[0]->records);
		view_free(&v);
		ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(tg.th, NULL));
	ASSERT_EQ(0, pthread_join(w.th, NULL));
	EXPECT_EQ(0, tg.err) TH_LOG("cpu1 online/offline: %s", strerror(-tg.err));
	EXPECT_EQ(0, w.err);
	EXPECT_EQ(0, cpu1_online(true));
	EXPECT_LT(0u, tg.written);
	TH_LOG("%llu offline/online cycles during %d snapshots",
	       (unsigned long long)tg.written, r);
}

/* ---- module unload with a trigger pending ------------------------------- */

/*
 * rmmod while the post window runs: the delayed work must be gone with
 * the module (else its timer fires into freed memory: the kernel is not
 * clean), and the module loads again with nothing pending.
 */
TEST_F_TIMEOUT(flight, unload_pending, 60)
{
	struct netlat_snapshot s;
	struct netlat_triggers t;
	struct netlat_info info;
	int ret;

	if (access(nl_ko_path(), R_OK))
		SKIP(return, "no netlat.ko to load again");
	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, 16 * KiB));
	ASSERT_EQ(0, trig_marker(self->fd, 0, 1500));
	ASSERT_LT(0, nl_write(self->fd, TAG, strlen(TAG)));
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	ASSERT_EQ((uint32_t)NETLAT_SNAP_PENDING, s.state);
	close(self->fd);
	self->fd = -1;
	ret = nl_unload_wait();
	ASSERT_EQ(0, ret) TH_LOG("rmmod: %s", strerror(-ret));
	/* past the end of the post window, with the module gone */
	nl_sleep_ms(2000);
	ret = nl_load_netlat("");
	ASSERT_EQ(0, ret) TH_LOG("insmod: %s", strerror(-ret));
	self->fd = nl_open_wait();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
	EXPECT_EQ(0u, s.taken);
	ASSERT_EQ(0, trig_get(self->fd, &t));
	EXPECT_EQ(0u, t.armed);
	EXPECT_EQ(0u, t.fired);
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ((uint32_t)NETLAT_MODE_STREAM, info.mode);
}

/* ---- malformed arguments -------------------------------------------------- */

TEST_F(flight, invalid_args)
{
	struct netlat_triggers good = {
		.armed = NETLAT_TRIG_RETRANS_KIND | NETLAT_TRIG_LATENCY |
			 NETLAT_TRIG_MARKER | NETLAT_TRIG_RETRANS_FAIL,
		.retrans_kinds = 1u << NETLAT_RETRANS_RTO,
		.latency_ns = 5 * MS,
		.pre_ms = 10,
		.post_ms = 20,
		.marker_tag_len = 3,
		.marker_tag = "abc",
	};
	struct netlat_triggers t, back;
	struct netlat_config cfg;
	struct netlat_snapshot s;
	struct netlat_info info;
	int i, n = 0;

	/* each of these differs from a valid setting in one field */
	for (i = 0; i < 16; i++) {
		t = good;
		switch (i) {
		case 0: t.armed |= 1u << 4; break;
		case 1: t.retrans_kinds = 0; break;
		case 2: t.retrans_kinds |= 1u << (NETLAT_RETRANS_SYNACK + 1); break;
		case 3: t.armed &= ~NETLAT_TRIG_RETRANS_KIND; break; /* kinds set */
		case 4: t.latency_ns = 0; break;
		case 5: t.armed &= ~NETLAT_TRIG_LATENCY; break;	/* latency set */
		case 6: t.pre_ms = NETLAT_TRIG_PRE_MS_MAX + 1; break;
		case 7: t.post_ms = NETLAT_TRIG_POST_MS_MAX + 1; break;
		case 8: t.marker_tag_len = 0; break;
		case 9: t.marker_tag_len = NETLAT_TRIG_TAG_MAX + 1; break;
		case 10: t.marker_tag[5] = 'x'; break;	/* past the length */
		case 11: t.armed &= ~NETLAT_TRIG_MARKER; break; /* tag set */
		case 12: t.reserved = 1; break;
		case 13: t.flags = 2; break;
		case 14: t.armed = 0; t.retrans_kinds = 0; t.latency_ns = 0;
			 t.marker_tag_len = 0; memset(t.marker_tag, 0, 16);
			 t.marker_tag[0] = 'a'; break;	/* tag, nothing armed */
		default: t.retrans_kinds = 1u << 31; break;
		}
		if (i == 13) {
			EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_TRIGGERS,
						    &t, sizeof(t)));
		} else {
			EXPECT_EQ(-EINVAL, trig_set(self->fd, &t))
				TH_LOG("case %d", i);
		}
		n++;
	}
	/* nothing changed: still disarmed */
	ASSERT_EQ(0, trig_get(self->fd, &back));
	EXPECT_EQ(0u, back.armed);
	EXPECT_EQ(0u, back.marker_tag_len);
	/* the valid one is taken and reads back */
	t = good;
	ASSERT_EQ(0, trig_set(self->fd, &t));
	ASSERT_EQ(0, trig_get(self->fd, &back));
	EXPECT_EQ(good.armed, back.armed);
	EXPECT_EQ(good.retrans_kinds, back.retrans_kinds);
	EXPECT_EQ(good.latency_ns, back.latency_ns);
	EXPECT_EQ(good.pre_ms, back.pre_ms);
	EXPECT_EQ(good.post_ms, back.post_ms);
	EXPECT_EQ(good.marker_tag_len, back.marker_tag_len);
	EXPECT_EQ(0, memcmp(good.marker_tag, back.marker_tag, 16));
	/* a bad one now leaves the good one in force */
	t = good;
	t.latency_ns = 0;
	EXPECT_EQ(-EINVAL, trig_set(self->fd, &t));
	ASSERT_EQ(0, trig_get(self->fd, &back));
	EXPECT_EQ(good.latency_ns, back.latency_ns);
	ASSERT_EQ(0, trig_off(self->fd));

	/* the ring mode */
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	EXPECT_EQ(-EINVAL, set_mode(self->fd, 2));
	EXPECT_EQ(-EINVAL, set_mode(self->fd, 0xffffffffu));
	cfg = (struct netlat_config){ .flags = NETLAT_CONFIG_MODE,
				      .mode = NETLAT_MODE_OVERWRITE,
				      .reserved2 = 1 };
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg = (struct netlat_config){ .flags = NETLAT_CONFIG_SLOW_NS << 1 };
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ((uint32_t)NETLAT_MODE_STREAM, info.mode);
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));

	/* the snapshot call */
	s = (struct netlat_snapshot){ .flags = 1u << 3 };
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SNAPSHOT, &s, sizeof(s)));
	s = (struct netlat_snapshot){ .reserved = 1 };
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SNAPSHOT, &s, sizeof(s)));
	s = (struct netlat_snapshot){ 0 };
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SNAPSHOT, &s,
				    NETLAT_SNAPSHOT_SIZE_VER0 - 8));
	TH_LOG("%d malformed trigger settings refused", n);
}

/* ---- without privileges --------------------------------------------------- */

/* Child with no capability at all; the inherited fd stays usable. */
static int child_calls(void *arg)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	struct netlat_triggers t = { .armed = NETLAT_TRIG_MARKER,
				     .marker_tag_len = 1, .marker_tag = "x" };
	struct netlat_snapshot s;
	int fd = *(int *)arg, bad = 0;

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data))
		return 250;
	if (trig_set(fd, &t) != -EPERM)
		bad |= 1;
	if (snap_ioc(fd, NETLAT_SNAPSHOT_TAKE, NULL) != -EPERM)
		bad |= 2;
	if (snap_ioc(fd, NETLAT_SNAPSHOT_RELEASE, NULL) != -EPERM)
		bad |= 4;
	if (set_mode(fd, NETLAT_MODE_OVERWRITE) != -EPERM)
		bad |= 8;
	/* reports need only the open file */
	if (trig_get(fd, &t) || snap_ioc(fd, 0, &s))
		bad |= 16;
	return bad;
}

TEST_F(flight, unprivileged)
{
	struct netlat_triggers t;
	struct netlat_snapshot s;
	struct netlat_info info;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_calls(&self->fd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("bits of calls not refused: %d",
						 WEXITSTATUS(status));
	/* and nothing changed */
	ASSERT_EQ(0, trig_get(self->fd, &t));
	EXPECT_EQ(0u, t.armed);
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ((uint32_t)NETLAT_MODE_STREAM, info.mode);
}

TEST_HARNESS_MAIN
