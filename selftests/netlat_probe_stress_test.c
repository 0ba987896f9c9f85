// SPDX-License-Identifier: GPL-2.0
/*
 * Probe groups under stress (issue #3): a bulk TCP transfer through a lossy
 * link while netlat is rmmod/insmod-cycled with every available probe
 * group enabled.
 *
 * Topology: nl_lossy_pair() (netlat_tcp.h) with netem dropping 5% on
 * nla0. One connection A -> B runs for the whole test: a sender thread
 * streams a position dependent byte pattern, a receiver thread checks
 * every byte.
 *
 * Each of NETLAT_STRESS_CYCLES (4) cycles loads netlat afresh with
 * ring_kb=4096 (the first one unloads the module the lane loaded), enables
 * every available group (TCP and, with virtio_net loaded, virtio; the odd
 * cycles at the packet level), reads
 * and checks everything while the transfer runs, measures one window,
 * stops tracing, drains, closes the reader and rmmods with the transfer
 * running: refused while an ftrace user is armed, then with the groups
 * that have none still enabled.
 *
 * Oracles, none of them netlat's own word:
 *  - the transfer: bytes received equal bytes sent, pattern intact, and
 *    the sender's namespace counted retransmissions (RetransSegs grows);
 *  - a clean start per load: the stream header reports the new load's
 *    ring size, nothing is enabled yet, every CPU's sequences start at 0,
 *    every record is whole and of the test connection (either direction);
 *  - a clean end per load: after STOP (probes still enabled, traffic still
 *    flowing) the reader gets exactly the records each CPU's counters say
 *    were stored, LOST ones included, and nothing more comes;
 *  - retransmissions per window: the segments of the COUNTED retransmit
 *    records in the window never exceed the RetransSegs delta of namespace
 *    A; unless the group is partial on this kernel they fall short by at
 *    most the records LOST, so with none they are equal. No retransmit
 *    hook misses a hit (nmissed): the softirq's retransmits interrupt the
 *    reader's return probes (on 6.1 with ipmodify=1, see RING_PARAM).
 *    The window's edges are quiet: the sender
 *    pauses until every byte is acknowledged before each counter read;
 *  - with the reader closed, rmmod is refused (the kernel's refcnt of the
 *    module is not 0) exactly while one of netlat's own ftrace users
 *    (ftrace callback, fprobe, wrapped call) is armed, and succeeds at
 *    once when their groups go off, the others still enabled; the
 *    kernel stays clean (the lane checks dmesg, taint and kmemleak).
 *
 * The lane runs this test under single-threaded TCG (see lib.sh).
 * netlat ends loaded with default parameters. Needs root, nl_ko_path(),
 * veth and sch_netem; skips otherwise.
 */
#include "netlat_util.h"

#include <stdarg.h>
#include "netlat_tcp.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define MiB		(1024ull * 1024)
#define LOSS_PCT	5
/*
 * ring_kb: not the default, so a new load shows. ipmodify=1: on 6.1
 * (no fprobe) the retransmit functions are wrapped calls only when asked
 * (wrap.c), and only they see a softirq's retransmit that interrupts a
 * reader's return probe; without it that hit is counted as missed.
 */
#define RING_PARAM	"ring_kb=4096 ipmodify=1"
#define RING_BYTES	(4 * MiB)
#define SYS_NETLAT	"/sys/module/netlat"

#define ADDR_A		"192.0.2.1"
#define ADDR_B		"192.0.2.2"
#define DEV_A		"nla0"
#define DEV_B		"nlb0"

static int g_ns_a = -1, g_ns_b = -1;
static char g_net_skip[128];

static long long retrans_segs(void)
{
	return nl_mib(g_ns_a, "snmp", "Tcp", "RetransSegs");
}

/* ---- the transfer ------------------------------------------------------ */

static inline uint8_t pat(uint64_t off)
{
	return (uint8_t)(off ^ (off >> 8) * 31 ^ (off >> 16) * 7 ^ (off >> 24));
}

struct xfer {
	int cli, srv;
	uint16_t sport, dport;
	pthread_t tx, rx;
	bool tx_started, rx_started;
	int stop, pause, idle;		/* atomics */
	uint64_t tx_bytes, rx_bytes, bad, first_bad;
	int tx_err;
};

static void *rx_main(void *arg)
{
	struct xfer *x = arg;
	static unsigned char buf[65536];
	ssize_t n, i;

	while ((n = read(x->srv, buf, sizeof(buf))) > 0 ||
	       (n < 0 && errno == EINTR)) {
		for (i = 0; i < n; i++)
			if (buf[i] != pat(x->rx_bytes + i) && !x->bad++)
				x->first_bad = x->rx_bytes + i;
		if (n > 0)
			x->rx_bytes += n;
	}
	return NULL;
}

static void *tx_main(void *arg)
{
	struct xfer *x = arg;
	static unsigned char buf[16384];
	size_t i;

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		ssize_t n;

		if (__atomic_load_n(&x->pause, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&x->idle, 1, __ATOMIC_SEQ_CST);
			nl_sleep_ms(1);
			continue;
		}
		/* idle before pause, seq-cst: the pauser sees one or the other */
		__atomic_store_n(&x->idle, 0, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&x->pause, __ATOMIC_SEQ_CST))
			continue;
		for (i = 0; i < sizeof(buf); i++)
			buf[i] = pat(x->tx_bytes + i);
		n = send(x->cli, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			x->tx_err = n < 0 ? errno : EIO;
			break;
		}
		x->tx_bytes += n;
	}
	__atomic_store_n(&x->idle, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int xfer_open(struct xfer *x)
{
	struct nl_conn c;
	int ret = nl_conn_connect(&c, g_ns_a, g_ns_b, ADDR_B, 0);

	x->cli = c.cli;
	x->srv = c.srv;
	x->sport = c.sport;
	x->dport = c.dport;
	if (ret)
		return -1;
	if (pthread_create(&x->rx, NULL, rx_main, x))
		return -1;
	x->rx_started = true;
	if (pthread_create(&x->tx, NULL, tx_main, x))
		return -1;
	x->tx_started = true;
	return 0;
}

static int outq(const struct xfer *x)
{
	int q = -1;

	return ioctl(x->cli, SIOCOUTQ, &q) ? -1 : q;
}

static void xfer_resume(struct xfer *x)
{
	__atomic_store_n(&x->pause, 0, __ATOMIC_SEQ_CST);
}

/* Stop sending, FIN, wait for the receiver to see EOF. */
static void xfer_finish(struct xfer *x)
{
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
	if (x->tx_started)
		pthread_join(x->tx, NULL);
	x->tx_started = false;
	shutdown(x->cli, SHUT_WR);
	if (x->rx_started)
		pthread_join(x->rx, NULL);
	x->rx_started = false;
}

static void xfer_close(struct xfer *x)
{
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
	if (x->srv >= 0)
		shutdown(x->srv, SHUT_RDWR);
	if (x->cli >= 0)
		shutdown(x->cli, SHUT_RDWR);
	if (x->tx_started)
		pthread_join(x->tx, NULL);
	if (x->rx_started)
		pthread_join(x->rx, NULL);
	x->tx_started = x->rx_started = false;
	if (x->cli >= 0)
		close(x->cli);
	if (x->srv >= 0)
		close(x->srv);
	x->cli = x->srv = -1;
}

/* A line in the kernel log: places a kernel report in the test's phases. */
static void kmsg(const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, line, n) < 0)
			n = 0;
		close(fd);
	}
}

/* ---- records ------------------------------------------------------------ */

struct cycle {
	uint64_t t0, t1;		/* the measurement window */
	uint64_t tcp, virtio, retrans;
	long long counted_segs;		/* COUNTED RETRANS in the window */
	unsigned int max_segs;		/* largest segs of a RETRANS record */
	char why[256];			/* first stray record */
};

/* Check and count the kept records of @l, then forget them. */
static int account(struct nl_log *l, const struct xfer *x, struct cycle *c)
{
	const struct netlat_rec_hdr *h;
	int bad = 0;

	nl_log_for_each(l, h) {
		const struct netlat_flow *f = (const void *)(h + 1);

		if (h->type == NETLAT_REC_VIRTIO)
			c->virtio++;
		if (!nl_tcp_rec_size(h->type))
			continue;
		c->tcp++;
		if (f->family != AF_INET ||
		    !((f->sport == x->sport && f->dport == x->dport) ||
		      (f->sport == x->dport && f->dport == x->sport))) {
			if (!bad++)
				snprintf(c->why, sizeof(c->why),
					 "TCP record type %u cpu %u seq %llu: family %u ports %u -> %u, test connection %u <-> %u",
					 h->type, h->cpu,
					 (unsigned long long)h->seq, f->family,
					 f->sport, f->dport, x->sport, x->dport);
			continue;
		}
		if (h->type == NETLAT_REC_TCP_RETRANS &&
		    f->sport == x->sport) {
			const struct netlat_rec_tcp_retrans *r = (const void *)h;

			c->retrans++;
			if (r->segs > c->max_segs)
				c->max_segs = r->segs;
			if ((r->flags & NETLAT_TCP_COUNTED) && c->t0 &&
			    h->ts_ns >= c->t0 && (!c->t1 || h->ts_ns <= c->t1))
				c->counted_segs += r->segs;
		}
	}
	nl_log_clear(l);
	return bad;
}

/* Read and check for @ms while the transfer runs. */
static int read_for(struct nl_log *l, int fd, const struct xfer *x,
		    struct cycle *c, unsigned int ms)
{
	uint64_t end = nl_mono_ns() + ms * 1000000ull;
	int ret;

	do {
		ret = nl_log_drain(l, fd);
		if (ret)
			return ret;
		if (account(l, x, c))
			return -EPROTO;
		if (ms)
			nl_sleep_ms(20);
	} while (nl_mono_ns() < end);
	return 0;
}

/*
 * Pause the sender and wait until all it sent is acknowledged, reading
 * (and checking) records meanwhile. 0, -ETIMEDOUT or a read_for() error.
 */
static int xfer_quiesce(struct xfer *x, struct nl_log *l, int fd,
			struct cycle *c, unsigned int secs)
{
	uint64_t end = nl_mono_ns() + secs * 1000000000ull;
	int ret;

	__atomic_store_n(&x->pause, 1, __ATOMIC_SEQ_CST);
	while (nl_mono_ns() < end) {
		if (__atomic_load_n(&x->idle, __ATOMIC_SEQ_CST) && !outq(x)) {
			nl_sleep_ms(50);	/* settle */
			if (!outq(x))
				return 0;
		}
		ret = read_for(l, fd, x, c, 0);
		if (ret)
			return ret;
		nl_sleep_ms(20);
	}
	return -ETIMEDOUT;
}

/*
 * The clean end: with tracing stopped, every CPU's stream as read ends
 * exactly where the module's counters say, and a later drain finds
 * nothing. 0, or -1 with the reason in @why.
 */
static int check_end(struct nl_log *l, int fd, const struct xfer *x,
		     struct cycle *c, char *why, size_t len)
{
	struct netlat_cpu_stats st;
	unsigned int cpu;
	uint64_t nrec;

	if (nl_control(fd, NETLAT_IOC_STOP))
		return nl_fail(why, len, "STOP: %s", strerror(errno));
	if (read_for(l, fd, x, c, 0))
		return nl_fail(why, len, "drain after STOP: %s%s", l->why,
			       c->why);
	for (cpu = 0; cpu < l->nr_cpus; cpu++) {
		const struct nl_cpu_track *t = &l->cpu[cpu];
		uint64_t next = t->started ? t->next_seq : 0;

		if (nl_get_stats(fd, cpu, &st))
			return nl_fail(why, len, "cpu stats: %s",
				       strerror(errno));
		if (t->records != st.written || next != st.written + t->lost ||
		    t->lost > st.dropped)
			return nl_fail(why, len,
				       "cpu %u: read %llu records up to seq %llu, LOST %llu; module: written %llu, dropped %llu",
				       cpu, (unsigned long long)t->records,
				       (unsigned long long)next,
				       (unsigned long long)t->lost,
				       (unsigned long long)st.written,
				       (unsigned long long)st.dropped);
	}
	nrec = l->nrec;
	nl_sleep_ms(100);		/* traffic and probes go on */
	if (read_for(l, fd, x, c, 0))
		return nl_fail(why, len, "drain: %s%s", l->why, c->why);
	if (l->nrec != nrec)
		return nl_fail(why, len, "%llu records after STOP",
			       (unsigned long long)(l->nrec - nrec));
	return 0;
}

/* ---- the test ----------------------------------------------------------- */

FIXTURE(pstress) {
	struct xfer x;
	int fd;
};

FIXTURE_SETUP(pstress)
{
	self->x.cli = self->x.srv = -1;
	self->fd = -1;
	if (access(NETLAT_DEVICE_PATH, F_OK))
		SKIP(return, "%s: %s", NETLAT_DEVICE_PATH, strerror(errno));
	if (access(nl_ko_path(), R_OK))
		SKIP(return, "no %s to load again", nl_ko_path());
	if (g_ns_a < 0 &&
	    nl_lossy_pair(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B,
			  LOSS_PCT, g_net_skip, sizeof(g_net_skip)))
		SKIP(return, "topology: %s", g_net_skip);
}

FIXTURE_TEARDOWN(pstress)
{
	xfer_close(&self->x);
	if (self->fd >= 0)
		close(self->fd);
	/* leave netlat loaded as the lane did, with no group enabled */
	if (!access(SYS_NETLAT, F_OK)) {
		nl_disarm();
		nl_unload_netlat();
		nl_wait_path(SYS_NETLAT, false, 5000);
	}
	nl_load_netlat("");
	nl_wait_path(NETLAT_DEVICE_PATH, true, 10000);
}

TEST_F_TIMEOUT(pstress, netem_reload, 300)
{
	const unsigned int cycles = getenv("NETLAT_STRESS_CYCLES") ?
		atoi(getenv("NETLAT_STRESS_CYCLES")) : 4;
	long long total_d = 0, total_counted = 0;
	unsigned int cyc, exact = 0;
	uint64_t t_start = nl_mono_ns();
	char why[256];
	int ret;

	ASSERT_EQ(0, xfer_open(&self->x)) TH_LOG("connect: %s", strerror(errno));
	TH_LOG("connection %s:%u -> %s:%u, %d%% loss on %s",
	       ADDR_A, self->x.sport, ADDR_B, self->x.dport, LOSS_PCT, DEV_A);
	/* every cycle starts on a load of its own */
	nl_disarm();
	ASSERT_EQ(0, nl_unload_netlat());
	ASSERT_TRUE(nl_wait_path(SYS_NETLAT, false, 5000));

	for (cyc = 0; cyc < cycles; cyc++) {
		struct netlat_probes pr, pr_end;
		uint64_t ftrace_groups;
		int ftrace_hooks;
		long refcnt;
		struct netlat_info info;
		struct cycle c = { 0 };
		struct nl_log l;
		long long b, a, d, missed;
		uint64_t lost = 0, want;
		unsigned int cpu, g;
		char missed_in[256];
		bool partial;
		int len;

		kmsg("netlat_probe_stress: cycle %u: insmod\n", cyc);
		ret = nl_load_netlat(RING_PARAM);
		ASSERT_EQ(0, ret) TH_LOG("cycle %u: insmod: %s", cyc,
					 strerror(-ret));
		ASSERT_TRUE(nl_wait_path(NETLAT_DEVICE_PATH, true, 10000));

		/* a clean start: this load's rings, nothing enabled yet */
		self->fd = nl_open(O_NONBLOCK);
		ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
		ASSERT_EQ(0, nl_get_info(self->fd, &info));
		ASSERT_EQ(RING_BYTES, info.ring_bytes);
		ASSERT_EQ(0ull, info.probe_groups_enabled);
		ASSERT_EQ(0, nl_log_init(&l, info.nr_cpus, true));
		l.expect_stream = true;
		l.seq_from_zero = true;
		ASSERT_EQ(0, read_for(&l, self->fd, &self->x, &c, 0))
			TH_LOG("cycle %u: %s%s", cyc, l.why, c.why);
		ASSERT_EQ(RING_BYTES, l.stream.ring_bytes);

		ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
		want = pr.available & NETLAT_PROBE_ALL;
		ASSERT_NE(0ull, want & NETLAT_PROBE_TCP_RETRANS);
		partial = pr.partial & NETLAT_PROBE_TCP_RETRANS;
		kmsg("netlat_probe_stress: cycle %u: enabling 0x%llx\n", cyc,
		     (unsigned long long)want);
		ASSERT_EQ(0, nl_probes(self->fd, true, want, &pr));
		ASSERT_EQ(want, pr.enabled);
		if (cyc & 1) {
			/* odd loads follow each packet: the table lives
			 * through loss, reads and the unload */
			struct netlat_config cfg = {
				.flags = NETLAT_CONFIG_LEVEL,
				.level = NETLAT_LEVEL_PACKETS,
			};

			ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG,
					      &cfg, sizeof(cfg)));
		}

		/* traffic, probes on, reader attached */
		ret = read_for(&l, self->fd, &self->x, &c, 1000);
		ASSERT_EQ(0, ret) TH_LOG("cycle %u: %s%s", cyc, l.why, c.why);

		/* the window: quiet edges, probes on throughout */
		ret = xfer_quiesce(&self->x, &l, self->fd, &c, 60);
		ASSERT_EQ(0, ret)
			TH_LOG("cycle %u: quiesce: %s (outq %d) %s%s", cyc,
			       strerror(-ret), outq(&self->x), l.why, c.why);
		c.t0 = nl_mono_ns();
		b = retrans_segs();
		ASSERT_LE(0, b);
		xfer_resume(&self->x);
		ASSERT_EQ(0, read_for(&l, self->fd, &self->x, &c, 1500))
			TH_LOG("cycle %u: %s%s", cyc, l.why, c.why);
		ret = xfer_quiesce(&self->x, &l, self->fd, &c, 60);
		ASSERT_EQ(0, ret)
			TH_LOG("cycle %u: quiesce: %s (outq %d) %s%s", cyc,
			       strerror(-ret), outq(&self->x), l.why, c.why);
		a = retrans_segs();
		c.t1 = nl_mono_ns();
		nl_sleep_ms(50);
		ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr_end));
		EXPECT_EQ(want, pr_end.enabled);
		xfer_resume(&self->x);

		/* a clean end, the probes enabled and the traffic on */
		nl_sleep_ms(100);
		ASSERT_EQ(0, check_end(&l, self->fd, &self->x, &c, why,
				       sizeof(why)))
			TH_LOG("cycle %u: %s", cyc, why);

		d = a - b;
		missed = nl_missed_in(&pr, &pr_end, NETLAT_PROBE_TCP_RETRANS);
		missed_in[0] = '\0';
		for (g = 0, len = 0; g < 64; g++)
			if (nl_missed_in(&pr, &pr_end, 1ULL << g))
				len += snprintf(missed_in + len,
						sizeof(missed_in) - len,
						" bit %u: %llu", g,
						(unsigned long long)
						nl_missed_in(&pr, &pr_end,
							     1ULL << g));
		EXPECT_EQ(pr_end.nmissed - pr.nmissed,
			  nl_missed_in(&pr, &pr_end, ~0ULL));
		EXPECT_EQ(0ull, nl_missed_in(&pr, &pr_end, ~want))
			TH_LOG("cycle %u: misses in groups not enabled", cyc);
		for (cpu = 0; cpu < l.nr_cpus; cpu++)
			lost += l.cpu[cpu].lost;
		TH_LOG("cycle %u: groups 0x%llx%s; %llu TCP, %llu virtio records, %llu lost, %llu kprobe misses (%lld in retrans)%s; RetransSegs +%lld, counted retransmit segs %lld (%llu retransmit records)",
		       cyc, (unsigned long long)want,
		       partial ? " (retrans partial)" : "",
		       (unsigned long long)c.tcp,
		       (unsigned long long)c.virtio, (unsigned long long)lost,
		       (unsigned long long)(pr_end.nmissed - pr.nmissed),
		       missed, missed_in, d, c.counted_segs,
		       (unsigned long long)c.retrans);
		/*
		 * No hit lost to nesting: a retransmit in a softirq that
		 * interrupts a task's return probe (a reader's recvmsg) is
		 * still seen, on every kernel (fprobes, or wrap.c on 6.1
		 * with ipmodify=1).
		 */
		EXPECT_EQ(0, missed)
			TH_LOG("cycle %u: retransmit hooks lost hits:%s", cyc,
			       missed_in);
		EXPECT_LT(0ull, c.tcp);
		/* records are never invented ... */
		EXPECT_LE(c.counted_segs, d)
			TH_LOG("cycle %u: more retransmitted segments recorded than counted", cyc);
		/* ... and only missed or lost ones are missing */
		if (!partial && !missed && !lost) {
			EXPECT_EQ(d, c.counted_segs)
				TH_LOG("cycle %u: RetransSegs delta vs records", cyc);
			exact++;
		} else if (!partial) {
			EXPECT_LE(d, c.counted_segs + (missed + (long long)lost) *
				     (c.max_segs ? c.max_segs : 1))
				TH_LOG("cycle %u: RetransSegs delta vs records", cyc);
		}
		total_d += d;
		total_counted += c.counted_segs;
		nl_log_free(&l);

		/*
		 * Unload with the transfer running. The groups with an
		 * ftrace user armed hold the module: rmmod is refused, by
		 * the kernel's own count, until they go off; the others stay
		 * enabled across the unload.
		 */
		ftrace_hooks = nl_ftrace_hooks_armed(self->fd, &ftrace_groups);
		ASSERT_LE(0, ftrace_hooks);
		close(self->fd);
		self->fd = -1;
		refcnt = nl_module_refcnt("netlat");
		ret = nl_unload_netlat();
		TH_LOG("cycle %u: %d ftrace users armed (groups 0x%llx), module refcnt %ld, rmmod: %s",
		       cyc, ftrace_hooks, (unsigned long long)ftrace_groups,
		       refcnt, ret ? strerror(-ret) : "unloaded");
		if (ftrace_hooks) {
			EXPECT_LT(0, refcnt);
			ASSERT_EQ(-EWOULDBLOCK, ret)
				TH_LOG("cycle %u: rmmod with %d ftrace users armed",
				       cyc, ftrace_hooks);
			self->fd = nl_open(0);
			ASSERT_LE(0, self->fd);
			ASSERT_EQ(0, nl_probes(self->fd, true,
					       want & ~ftrace_groups, NULL));
			ASSERT_EQ(0, nl_ftrace_hooks_armed(self->fd,
							   &ftrace_groups));
			close(self->fd);
			self->fd = -1;
			EXPECT_EQ(0, nl_module_refcnt("netlat"));
			kmsg("netlat_probe_stress: cycle %u: rmmod, groups 0x%llx enabled\n",
			     cyc, (unsigned long long)(want & ~ftrace_groups));
			ret = nl_unload_netlat();
		} else {
			EXPECT_EQ(0, refcnt);
		}
		kmsg("netlat_probe_stress: cycle %u: rmmod returned %d\n", cyc, ret);
		ASSERT_EQ(0, ret) TH_LOG("cycle %u: rmmod after the reader closed: %s",
					 cyc, strerror(-ret));
		ASSERT_TRUE(nl_wait_path(SYS_NETLAT, false, 5000));
		nl_sleep_ms(100);	/* traffic without netlat */
	}

	xfer_finish(&self->x);
	TH_LOG("%u cycles in %.1f s (%u with an exact comparison); sent %llu bytes, received %llu, %llu bad; RetransSegs +%lld in the windows, counted %lld",
	       cycles, (nl_mono_ns() - t_start) / 1e9, exact,
	       (unsigned long long)self->x.tx_bytes,
	       (unsigned long long)self->x.rx_bytes,
	       (unsigned long long)self->x.bad, total_d, total_counted);
	EXPECT_EQ(0, self->x.tx_err) TH_LOG("send: %s", strerror(self->x.tx_err));
	EXPECT_LT(0ull, self->x.tx_bytes);
	EXPECT_EQ(self->x.tx_bytes, self->x.rx_bytes);
	EXPECT_EQ(0ull, self->x.bad)
		TH_LOG("first bad byte at offset %llu",
		       (unsigned long long)self->x.first_bad);
	/* 5% loss over seconds of bulk traffic: retransmissions happened */
	EXPECT_LT(0, total_d);
}

TEST_HARNESS_MAIN
