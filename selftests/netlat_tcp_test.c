// SPDX-License-Identifier: GPL-2.0
/*
 * TCP probe tests (NETLAT_PROBE_TCP_*), against oracles netlat does not
 * produce: the bytes this program sends and receives, the kernel's own
 * sequence numbers (TCP_REPAIR), and the MIB counters of the namespace that
 * retransmits (/proc/net/snmp RetransSegs, /proc/net/netstat TCPRetransFail,
 * TCPTimeouts, TCPFastRetrans, TCPSynRetrans).
 *
 * Topology, built once at program start: namespaces A and B joined by a
 * veth pair (nla0 192.0.2.1 in A, nlb0 192.0.2.2 in B), TSO/GSO off and
 * gso_max_segs 1 on nla0 so that every skb is one segment (one test turns
 * GSO on for its own length); loss comes from a netem root
 * qdisc on nla0 (and on nlb0 for the SYN-ACK test). Each test connects
 * A -> B over it and is the only TCP traffic in A and B. Needs root, the
 * module, veth and sch_netem; skips otherwise.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include <sys/syscall.h>
#include "netlat_tcp.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define DEV_A	"nla0"
#define DEV_B	"nlb0"
#define MiB	(1024ull * 1024)

static int g_ns_a = -1, g_ns_b = -1;
static char g_net_skip[128];	/* why the topology is missing, or "" */
static char g_dev_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) tcp_topology(void)
{
	int fd = nl_open(0);

	if (fd < 0 || nl_get_info(fd, &g_def))
		snprintf(g_dev_skip, sizeof(g_dev_skip), "%s: %s",
			 NETLAT_DEVICE_PATH, strerror(errno));
	if (fd >= 0)
		close(fd);
	nl_lossy_pair(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B, 0,
		      g_net_skip, sizeof(g_net_skip));
}

/* ---- MIB counters of namespace A (or B) ------------------------------ */

struct mibs {
	uint64_t t_ns;		/* CLOCK_MONOTONIC just before the read */
	long long retrans_segs, retrans_fail, timeouts, fast_retrans;
	long long syn_retrans;
};

static void mibs_read_ns(int ns, struct mibs *m)
{
	m->t_ns = nl_mono_ns();
	m->retrans_segs = nl_mib(ns, "snmp", "Tcp", "RetransSegs");
	m->retrans_fail = nl_mib(ns, "netstat", "TcpExt", "TCPRetransFail");
	m->timeouts = nl_mib(ns, "netstat", "TcpExt", "TCPTimeouts");
	m->fast_retrans = nl_mib(ns, "netstat", "TcpExt", "TCPFastRetrans");
	m->syn_retrans = nl_mib(ns, "netstat", "TcpExt", "TCPSynRetrans");
}

static void mibs_read(struct mibs *m)
{
	mibs_read_ns(g_ns_a, m);
}

/* ---- one connection A -> B ------------------------------------------- */

static int conn_open(struct nl_conn *c)
{
	return nl_conn_open(c, g_ns_a, g_ns_b, ADDR_B, 0);
}

static int set_loss_on(int ns, const char *dev, double pct)
{
	int ret = nl_ns_enter(ns);

	if (!ret)
		ret = nlr_netem(dev, pct);
	nl_ns_enter(nl_ns_home);
	return ret;
}

static int set_loss(double pct)
{
	return set_loss_on(g_ns_a, DEV_A, pct);
}

/* GSO on A's device (skbs of many segments), or off as the topology has it. */
static int set_gso(bool on)
{
	int ret = nl_ns_enter(g_ns_a);

	if (!ret)
		ret = nlr_set_gso(DEV_A, on);
	if (!ret)
		ret = nlr_gso_max_segs(DEV_A, on ? 65535 : 1);
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* ---- records --------------------------------------------------------- */

#define for_each_tcp(l, h, t, c)					\
	nl_log_for_each(l, h)						\
		if ((h)->type == (t) &&					\
		    nl_flow_is((const void *)((h) + 1), c))

struct range {
	int64_t s, e;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Do the ranges cover [from, to) without a gap? Sorts them. */
static bool covers(struct range *r, size_t n, int64_t from, int64_t to,
		   int64_t *gap)
{
	int64_t cur = from;
	size_t i;

	qsort(r, n, sizeof(*r), range_cmp);
	for (i = 0; i < n && cur < to; i++) {
		if (r[i].s > cur)
			break;
		if (r[i].e > cur)
			cur = r[i].e;
	}
	*gap = cur;
	return cur >= to;
}

/* ---- fixture --------------------------------------------------------- */

/* The module says some retransmits may bypass its probes (a probe missing). */
static bool retrans_partial;

/* ---- other users of the retransmit functions' sites (selftests/livepatch) */

#define TEST_MOD_DIR	"/lib/netlat"
#define LIVEPATCH_SYS	"/sys/kernel/livepatch/netlat_livepatch"

/* insmod TEST_MOD_DIR/@name.ko: 0, or -errno (-ENOENT: not built). */
static int test_mod_load(const char *name)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), TEST_MOD_DIR "/%s.ko", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* A number in a module parameter's file; -1 if unreadable. */
static long long test_mod_param(const char *name, const char *param)
{
	char path[160];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", name,
		 param);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* "1\n" or "0\n" in @path within @ms. */
static bool wait_flag(const char *path, char want, unsigned int ms)
{
	char c = 0;
	int fd;

	for (;; ms -= 10) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		if (read(fd, &c, 1) != 1)
			c = 0;
		close(fd);
		if (c == want)
			return true;
		if (ms < 10)
			return false;
		nl_sleep_ms(10);
	}
}

/*
 * rmmod @name; a live patch is disabled first, and its transition back
 * waited for (its sysfs directory goes with it). 0 or -errno.
 */
static int test_mod_unload(const char *name)
{
	unsigned int ms;
	int fd;

	if (!strcmp(name, "netlat_livepatch") && !access(LIVEPATCH_SYS, F_OK)) {
		fd = open(LIVEPATCH_SYS "/enabled", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			if (fd >= 0)
				close(fd);
			return -errno;
		}
		close(fd);
		for (ms = 0; !access(LIVEPATCH_SYS, F_OK); ms += 10) {
			if (ms > 30000)
				return -ETIMEDOUT;
			nl_sleep_ms(10);
		}
	}
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/* netlat unloaded and loaded again with @params (nothing may hold it). */
static int reload_netlat(const char *params)
{
	int ret, fd;

	ret = nl_unload_wait();
	if (!ret)
		ret = nl_load_netlat(params);
	if (ret)
		return ret;
	fd = nl_open_wait();
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

FIXTURE(tcp) {
	int fd;
	int lfd;		/* handshake tests: B's listener */
	bool netem_b;		/* a test put a netem qdisc on B's device */
	bool gso;		/* a test put GSO on A's device */
	const char *test_mod;	/* a test module loaded (livepatch.ko...) */
	bool reloaded;		/* netlat loaded with parameters of a test's */
	struct nl_log log;
	struct nl_conn c;
	struct netlat_probes pr;
};

FIXTURE_SETUP(tcp)
{
	self->fd = -1;
	self->lfd = -1;
	self->c.cli = self->c.srv = -1;
	if (g_dev_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_dev_skip);
	if (g_net_skip[0])
		SKIP(longjmp(_metadata->env, 1), "topology: %s", g_net_skip);
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
				g_def.nr_cpus));
	ASSERT_EQ(0, set_loss(0));
}

FIXTURE_TEARDOWN(tcp)
{
	nl_conn_close(&self->c);
	if (self->lfd >= 0)
		close(self->lfd);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_restore(self->fd, &g_def));
		close(self->fd);
	}
	set_loss(0);
	if (self->netem_b)
		set_loss_on(g_ns_b, DEV_B, 0);
	if (self->gso)
		EXPECT_EQ(0, set_gso(false));
	if (self->test_mod)
		EXPECT_EQ(0, test_mod_unload(self->test_mod));
	if (self->reloaded)
		EXPECT_EQ(0, reload_netlat(""));
	nl_log_free(&self->log);
}

static void need_groups(struct __test_metadata *_metadata,
			FIXTURE_DATA(tcp) *self, uint64_t groups)
{
	nl_need_groups(self->fd, &self->pr, groups);
	retrans_partial = self->pr.partial & NETLAT_PROBE_TCP_RETRANS;
}

/* Disable probes, read everything; no record may have been lost. */
static void collect(struct __test_metadata *_metadata, FIXTURE_DATA(tcp) *self)
{
	ASSERT_EQ(0, nl_collect(self->fd, &self->log, self->pr.nmissed))
		TH_LOG("%s: the comparison is void", self->log.why);
}

/* ---- tests ----------------------------------------------------------- */

TEST_F(tcp, probes_ioctl)
{
	struct netlat_probes pr;
	struct netlat_info info;

	memset(&pr, 0, sizeof(pr));
	pr.enable = ~NETLAT_PROBE_ALL;
	pr.flags = NETLAT_PROBES_SET;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_PROBES, &pr, sizeof(pr)));
	memset(&pr, 0, sizeof(pr));
	pr.flags = 2;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_PROBES, &pr, sizeof(pr)));
	memset(&pr, 0, sizeof(pr));
	pr.reserved = 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_PROBES, &pr, sizeof(pr)));
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_PROBES, &pr,
				    NETLAT_PROBES_SIZE_VER0 - 8));
	/* the size-64 version, before group_missed: accepted, nothing
	 * written past it */
	memset(&pr, 0, sizeof(pr));
	pr.group_missed[0] = 0x5a5a;
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_PROBES, &pr,
			      offsetof(struct netlat_probes, group_missed)));
	EXPECT_EQ(0x5a5aull, pr.group_missed[0]);

	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	EXPECT_EQ(pr.nmissed, nl_missed_in(&(struct netlat_probes){ 0 }, &pr,
					   ~0ULL));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(info.probe_groups, pr.available);
	EXPECT_EQ(0ull, pr.available & ~NETLAT_PROBE_ALL);
	EXPECT_EQ(0ull, pr.partial & ~pr.available);
	EXPECT_EQ(0ull, pr.enabled);
	TH_LOG("available 0x%llx partial 0x%llx", (unsigned long long)pr.available,
	       (unsigned long long)pr.partial);
	/* Every TCP group exists on the supported kernels. */
	EXPECT_EQ(NETLAT_PROBE_ALL, pr.available);
	if (~pr.available & NETLAT_PROBE_ALL)
		EXPECT_EQ(-EOPNOTSUPP, nl_probes(self->fd, true, NETLAT_PROBE_ALL, NULL));

	ASSERT_EQ(0, nl_probes(self->fd, true, pr.available, &pr));
	EXPECT_EQ(pr.available, pr.enabled);
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(pr.available, info.probe_groups_enabled);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &pr));
	EXPECT_EQ(0ull, pr.enabled);
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(0ull, info.probe_groups_enabled);
}

static const size_t msg_sizes[] = {
	1, 100, 1448, 1449, 4096, 5000, 16384, 20000, 65536, 3, 7777,
	131072, 2, 60000, 999, 30000,
};
#define N_MSGS NL_ARRAY_SIZE(msg_sizes)

TEST_F(tcp, sendmsg_skb_xmit_ack_dev)
{
	const uint64_t groups = NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_PUSH |
		NETLAT_PROBE_TCP_SKB | NETLAT_PROBE_TCP_XMIT |
		NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV;
	const struct netlat_rec_tcp_sendmsg *sm[N_MSGS + 1];
	const struct netlat_rec_hdr *h;
	static char buf[131072];
	struct range *xr, *qr, *dr;
	size_t i, n = 0, nx = 0, nq = 0, nd = 0, nskb = 0, npush = 0;
	int64_t total = 0, max_una = -1, gap;
	uint32_t isn;
	uint64_t cookie;

	need_groups(_metadata, self, groups);
	ASSERT_EQ(0, conn_open(&self->c));
	for (i = 0; i < N_MSGS; i++) {
		nl_fill_pattern(buf, msg_sizes[i], i);
		ASSERT_EQ((ssize_t)msg_sizes[i],
			  send(self->c.cli, buf, msg_sizes[i], 0));
		total += msg_sizes[i];
	}
	ASSERT_TRUE(nl_conn_finish(&self->c, 30));
	EXPECT_EQ((uint64_t)total, self->c.rx_bytes);
	nl_sleep_ms(100);
	collect(_metadata, self);

	/* Exactly one SENDMSG record per send(), in order, sizes as sent. */
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_SENDMSG, &self->c) {
		ASSERT_LT(n, N_MSGS) TH_LOG("more sendmsg records than sends");
		sm[n++] = (const void *)h;
	}
	ASSERT_EQ(N_MSGS, n);
	for (i = 1; i < n; i++)		/* one thread: sort by entry time */
		for (size_t j = i; j > 0 && sm[j]->start_ns < sm[j - 1]->start_ns; j--) {
			const struct netlat_rec_tcp_sendmsg *t = sm[j];

			sm[j] = sm[j - 1];
			sm[j - 1] = t;
		}
	isn = sm[0]->sendmsg_id;
	cookie = sm[0]->flow.cookie;
	for (i = 0; i < n; i++) {
		EXPECT_EQ(msg_sizes[i], sm[i]->size);
		EXPECT_EQ((int64_t)msg_sizes[i], sm[i]->ret);
		EXPECT_EQ(msg_sizes[i], (uint32_t)(sm[i]->end_seq - sm[i]->sendmsg_id));
		if (i)
			EXPECT_EQ(sm[i - 1]->end_seq, sm[i]->sendmsg_id);
		EXPECT_EQ((uint32_t)getpid(), sm[i]->pid);
		EXPECT_EQ((uint32_t)syscall(SYS_gettid), sm[i]->tid);
		EXPECT_EQ(cookie, sm[i]->flow.cookie);
		EXPECT_LE(sm[i]->start_ns, sm[i]->hdr.ts_ns);
		EXPECT_EQ(0, memcmp(sm[i]->flow.saddr, "\xc0\x00\x02\x01", 4));
		EXPECT_EQ(0, memcmp(sm[i]->flow.daddr, "\xc0\x00\x02\x02", 4));
	}

	xr = calloc(self->log.nrec, sizeof(*xr));
	qr = calloc(self->log.nrec, sizeof(*qr));
	dr = calloc(self->log.nrec, sizeof(*dr));
	ASSERT_TRUE(xr && qr && dr);

	/* Each skb queued maps to the sendmsg whose range holds it. */
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_SKB, &self->c) {
		const struct netlat_rec_tcp_skb *s = (const void *)h;
		int64_t off = (uint32_t)(s->seq - isn);

		nskb++;
		ASSERT_LT(off, total);
		for (i = 0; i < n; i++)
			if (off < (int64_t)(uint32_t)(sm[i]->end_seq - isn))
				break;
		ASSERT_LT(i, n);
		EXPECT_TRUE(!!(s->flags & NETLAT_TCP_ID_VALID));
		EXPECT_EQ(sm[i]->sendmsg_id, s->sendmsg_id)
			TH_LOG("skb at +%lld", (long long)off);
		EXPECT_EQ(cookie, s->flow.cookie);
	}
	EXPECT_LE(1ull, nskb);

	/* Transmitted data covers every byte sent, FIN included. */
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_XMIT, &self->c) {
		const struct netlat_rec_tcp_xmit *x = (const void *)h;

		if (x->tcp_flags & 0x02)	/* SYN */
			continue;
		EXPECT_EQ(cookie, x->flow.cookie);
		if (x->seq == x->end_seq)
			continue;
		xr[nx].s = (uint32_t)(x->seq - isn);
		xr[nx].e = xr[nx].s + (uint32_t)(x->end_seq - x->seq);
		EXPECT_LE(xr[nx].e, total + 1);
		nx++;
	}
	EXPECT_TRUE(covers(xr, nx, 0, total + 1, &gap))
		TH_LOG("XMIT: %zu ranges, first gap at +%lld of %lld", nx,
		       (long long)gap, (long long)total);

	/* ACKs reach the last byte and the FIN. */
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_ACK, &self->c) {
		const struct netlat_rec_tcp_ack *a = (const void *)h;
		int64_t una = (uint32_t)(a->snd_una - isn);

		if (a->snd_una == isn)	/* the SYN's ACK */
			continue;
		EXPECT_LE(una, total + 1);
		if (una > max_una)
			max_una = una;
	}
	EXPECT_EQ(total + 1, max_una);

	/* Qdisc and driver see the same bytes, parsed from the headers. */
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_DEV, &self->c) {
		const struct netlat_rec_tcp_dev *d = (const void *)h;
		struct range *r = d->stage == NETLAT_DEV_QDISC ? &qr[nq++] :
				  &dr[nd++];

		EXPECT_TRUE(d->stage == NETLAT_DEV_QDISC ||
			    d->stage == NETLAT_DEV_DRIVER);
		EXPECT_TRUE(!d->flow.cookie || d->flow.cookie == cookie);
		r->s = (uint32_t)(d->seq - isn);
		r->e = r->s + (uint32_t)(d->end_seq - d->seq);
		if (d->tcp_flags & 0x02)
			r->s = r->e = 0;
	}
	EXPECT_TRUE(covers(qr, nq, 0, total + 1, &gap))
		TH_LOG("QDISC: %zu records, gap at +%lld", nq, (long long)gap);
	EXPECT_TRUE(covers(dr, nd, 0, total + 1, &gap))
		TH_LOG("DRIVER: %zu records, gap at +%lld", nd, (long long)gap);

	/* Pushes inside the sends carry their sendmsg id. */
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_PUSH, &self->c) {
		const struct netlat_rec_tcp_push *p = (const void *)h;

		if (!(p->flags & NETLAT_TCP_ID_VALID))
			continue;
		for (i = 0; i < n; i++)
			if (sm[i]->sendmsg_id == p->sendmsg_id)
				break;
		EXPECT_LT(i, n);
		npush++;
	}
	EXPECT_LE(1ull, npush);
	TH_LOG("%zu sendmsg, %zu skb, %zu xmit, %zu qdisc, %zu driver, %zu push",
	       n, nskb, nx, nq, nd, npush);
	free(xr);
	free(qr);
	free(dr);
}

struct rtx_sum {
	size_t ok, failed, ebusy, xmit_drop, kind[6];
	long long counted_segs, ok_segs, fail_mib_segs, fast_ok_segs;
};

/* Sum the RETRANS records of flow @c (its ports as the sender sees them). */
static void rtx_sum(struct __test_metadata *_metadata, FIXTURE_DATA(tcp) *self,
		    const struct nl_conn *c, const struct mibs *b,
		    const struct mibs *a, struct rtx_sum *s)
{
	const struct netlat_rec_hdr *h;

	memset(s, 0, sizeof(*s));
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_RETRANS, c) {
		const struct netlat_rec_tcp_retrans *r = (const void *)h;

		/*
		 * Only what the two MIB reads enclose (a slow kernel may
		 * retransmit while the test sets up); the tests read them
		 * with nothing in flight, so no attempt straddles one.
		 */
		if (h->ts_ns < b->t_ns || h->ts_ns > a->t_ns)
			continue;
		ASSERT_LE(r->kind, NETLAT_RETRANS_SYNACK);
		s->kind[r->kind]++;
		if (r->flags & NETLAT_TCP_COUNTED)
			s->counted_segs += r->segs;
		if (!r->ret) {
			s->ok++;
			s->ok_segs += r->segs;
			EXPECT_TRUE(!!(r->flags & NETLAT_TCP_COUNTED));
			if (r->kind == NETLAT_RETRANS_FAST ||
			    r->kind == NETLAT_RETRANS_OTHER)
				s->fast_ok_segs += r->segs;
			continue;
		}
		s->failed++;
		/* -errno, or NET_XMIT_DROP (1) from a full qdisc */
		EXPECT_TRUE((r->ret < 0 && r->ret > -4096) || r->ret == 1)
			TH_LOG("ret %d", r->ret);
		if (r->ret == -EBUSY)
			s->ebusy++;
		else if (r->ret == 1)
			s->xmit_drop++;
		/* a failed SYN-ACK counts in neither MIB counter */
		if (r->ret != -EBUSY && r->kind != NETLAT_RETRANS_SYNACK)
			s->fail_mib_segs += r->flags & NETLAT_TCP_COUNTED ?
					    r->segs : r->segs_req;
	}
	TH_LOG("retransmits: ok %zu (%lld segs), failed %zu (EBUSY %zu, qdisc drop %zu); kinds rto %zu fast %zu tlp %zu other %zu syn %zu synack %zu",
	       s->ok, s->ok_segs, s->failed, s->ebusy, s->xmit_drop, s->kind[NETLAT_RETRANS_RTO],
	       s->kind[NETLAT_RETRANS_FAST], s->kind[NETLAT_RETRANS_TLP],
	       s->kind[NETLAT_RETRANS_OTHER], s->kind[NETLAT_RETRANS_SYN],
	       s->kind[NETLAT_RETRANS_SYNACK]);
}

/* Bulk transfer of @bytes with @loss percent dropped on A's egress. */
static void bulk(struct __test_metadata *_metadata, FIXTURE_DATA(tcp) *self,
		 size_t bytes, double loss, struct mibs *before,
		 struct mibs *after)
{
	static char buf[65536];
	size_t done;

	ASSERT_EQ(0, conn_open(&self->c));
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 10));
	mibs_read(before);
	ASSERT_LE(0, before->retrans_segs);
	ASSERT_LE(0, before->retrans_fail);
	ASSERT_EQ(0, set_loss(loss));
	nl_fill_pattern(buf, sizeof(buf), 7);
	for (done = 0; done < bytes; done += sizeof(buf))
		ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_finish(&self->c, 120));
	EXPECT_EQ(bytes, self->c.rx_bytes);
	mibs_read(after);
	ASSERT_EQ(0, set_loss(0));
	collect(_metadata, self);
}

/*
 * RetransSegs is added in __tcp_retransmit_skb once the early checks pass,
 * before the transmit (so failed transmits count too), and in
 * tcp_rtx_synack on success; TCPRetransFail in __tcp_retransmit_skb for
 * every failure but -EBUSY. The records mark the first as COUNTED.
 */
static void check_mib(struct __test_metadata *_metadata, const struct rtx_sum *s,
		      const struct mibs *b, const struct mibs *a)
{
	long long d_segs = a->retrans_segs - b->retrans_segs;
	long long d_fail = a->retrans_fail - b->retrans_fail;

	TH_LOG("RetransSegs +%lld, TCPRetransFail +%lld; records: counted %lld ok %lld fail %lld",
	       d_segs, d_fail, s->counted_segs, s->ok_segs, s->fail_mib_segs);
	if (retrans_partial) {
		/*
		 * The module reports that callers can bypass its retransmit
		 * probes on this kernel build: every record must still be
		 * real, but some retransmits may have none.
		 */
		TH_LOG("retransmit group partial on this kernel: records <= MIB");
		EXPECT_LE(s->counted_segs, d_segs);
		EXPECT_LE(s->ok_segs, d_segs);
		EXPECT_LE(s->fail_mib_segs, d_fail);
		EXPECT_LT(0ll, s->counted_segs);
		return;
	}
	EXPECT_EQ(d_segs, s->counted_segs);
	EXPECT_LE(s->ok_segs, d_segs);
	if (!s->failed)
		EXPECT_EQ(d_segs, s->ok_segs);
	EXPECT_EQ(d_fail, s->fail_mib_segs);
}

TEST_F_TIMEOUT(tcp, retransmits_match_mib, 120)
{
	struct mibs b, a;
	struct rtx_sum s;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	bulk(_metadata, self, 4 * MiB, 3, &b, &a);
	rtx_sum(_metadata, self, &self->c, &b, &a, &s);
	EXPECT_LT(0ull, s.ok);
	check_mib(_metadata, &s, &b, &a);
}

/*
 * Failed retransmits: a delaying netem with a 2-packet queue makes
 * retransmissions find the queue full (NET_XMIT_DROP, counted in both
 * RetransSegs and TCPRetransFail) or their previous copy still queued
 * (-EBUSY, in neither).
 */
TEST_F_TIMEOUT(tcp, failed_retransmits_match_mib, 120)
{
	static char buf[65536];
	struct mibs b, a;
	struct rtx_sum s;
	size_t done;
	int ret;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	ASSERT_EQ(0, conn_open(&self->c));
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 10));
	mibs_read(&b);
	ASSERT_EQ(0, nl_ns_enter(g_ns_a));
	ret = nlr_netem_full(DEV_A, 3, 20000, 2);
	nl_ns_enter(nl_ns_home);
	ASSERT_EQ(0, ret);
	for (done = 0; done < 4 * MiB; done += sizeof(buf))
		ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_finish(&self->c, 120));
	EXPECT_EQ(4 * MiB, self->c.rx_bytes);
	mibs_read(&a);
	ASSERT_EQ(0, set_loss(0));
	collect(_metadata, self);
	rtx_sum(_metadata, self, &self->c, &b, &a, &s);
	EXPECT_LT(0ull, s.ok);
	/* a 2-packet queue behind a 20 ms delay refuses some retransmits */
	EXPECT_LT(0ull, s.failed);
	check_mib(_metadata, &s, &b, &a);
}

/* The bytes the SENDMSG records of @c say sendmsg accepted. */
static long long sendmsg_bytes_of(const struct nl_log *l, const struct nl_conn *c)
{
	const struct netlat_rec_hdr *h;
	long long bytes = 0;

	for_each_tcp(l, h, NETLAT_REC_TCP_SENDMSG, c) {
		const struct netlat_rec_tcp_sendmsg *s = (const void *)h;

		if (s->ret > 0)
			bytes += s->ret;
	}
	return bytes;
}

/*
 * Under loss, the XMIT records that are not retransmissions carry every
 * byte exactly once: their lengths add up to the bytes sendmsg accepted
 * (this program's count), their sequence space to those bytes and the
 * FIN; the retransmissions' segments are RetransSegs. With GSO (@gso) on
 * A's device too: skbs of many segments, lost and retransmitted in part.
 */
static void first_xmit_bytes(struct __test_metadata *_metadata,
			     FIXTURE_DATA(tcp) *self, bool gso)
{
	long long first_bytes = 0, first_space = 0, rtx_segs = 0;
	long long sendmsg_bytes = 0, rtx_bytes = 0;
	const struct netlat_rec_hdr *h;
	struct mibs b, a;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_SENDMSG |
		    NETLAT_PROBE_TCP_XMIT);
	if (gso) {
		self->gso = true;
		ASSERT_EQ(0, set_gso(true));
	}
	bulk(_metadata, self, 4 * MiB, 5, &b, &a);
	sendmsg_bytes = sendmsg_bytes_of(&self->log, &self->c);
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_XMIT, &self->c) {
		const struct netlat_rec_tcp_xmit *x = (const void *)h;

		if (x->tcp_flags & 0x02)	/* SYN */
			continue;
		if (x->flags & NETLAT_TCP_RETRANSMIT) {
			/* what the MIB reads enclose (see rtx_sum()) */
			if (h->ts_ns >= b.t_ns && h->ts_ns <= a.t_ns)
				rtx_segs += x->segs;
			rtx_bytes += x->len;
			continue;
		}
		first_bytes += x->len;
		first_space += (uint32_t)(x->end_seq - x->seq);
	}
	TH_LOG("%s: sendmsg %lld bytes; first transmissions %lld bytes (%lld of sequence space); retransmissions %lld bytes, %lld segments; RetransSegs +%lld",
	       gso ? "GSO" : "one segment per skb", sendmsg_bytes,
	       first_bytes, first_space, rtx_bytes, rtx_segs,
	       a.retrans_segs - b.retrans_segs);
	EXPECT_EQ((long long)(4 * MiB), sendmsg_bytes);
	EXPECT_EQ((long long)(4 * MiB), first_bytes);
	EXPECT_EQ((long long)(4 * MiB) + 1, first_space);	/* the FIN */
	EXPECT_LT(0ll, rtx_segs);
	EXPECT_EQ(a.retrans_segs - b.retrans_segs, rtx_segs);
}

TEST_F_TIMEOUT(tcp, first_xmit_bytes_under_loss, 120)
{
	first_xmit_bytes(_metadata, self, false);
}

TEST_F_TIMEOUT(tcp, first_xmit_bytes_under_loss_gso, 120)
{
	first_xmit_bytes(_metadata, self, true);
}

/*
 * iperf3's end, under loss: the receiver closes with data unread, its RST
 * makes the sender drop what it had not sent yet. Those bytes sendmsg
 * accepted were never transmitted: the first transmissions add up to
 * what the kernel says it sent the first time (TCP_INFO's bytes_sent
 * minus bytes_retrans), short of sendmsg's bytes by what the reset
 * dropped, and the retransmissions to bytes_retrans.
 */
TEST_F_TIMEOUT(tcp, first_xmit_bytes_after_reset, 120)
{
	long long first_bytes = 0, rtx_bytes = 0, sendmsg_bytes = 0;
	unsigned long long accepted = 0, read_bytes = 0;
	const struct netlat_rec_hdr *h;
	struct nl_tcp_info ti;
	static char buf[65536];
	int unsent = 0, unread = 0, i;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_SENDMSG |
		    NETLAT_PROBE_TCP_XMIT);
	ASSERT_EQ(0, nl_conn_connect(&self->c, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, set_loss(5));
	/* the sender keeps its buffer full while the receiver reads 2 MiB */
	while (read_bytes < 2 * MiB) {
		ssize_t n;

		while ((n = send(self->c.cli, buf, sizeof(buf),
				 MSG_DONTWAIT)) > 0)
			accepted += n;
		ASSERT_TRUE(n < 0 && errno == EAGAIN);
		n = recv(self->c.srv, buf, sizeof(buf), 0);
		ASSERT_LT(0, n);
		read_bytes += n;
	}
	for (;;) {
		ssize_t n = send(self->c.cli, buf, sizeof(buf), MSG_DONTWAIT);

		if (n <= 0)
			break;
		accepted += n;
	}
	/* data unread at the receiver (so it resets), unsent at the sender */
	for (i = 0; i < 500 && !unread; i++) {
		ASSERT_EQ(0, ioctl(self->c.srv, SIOCINQ, &unread));
		if (!unread)
			nl_sleep_ms(10);
	}
	ASSERT_EQ(0, ioctl(self->c.cli, SIOCOUTQNSD, &unsent));
	ASSERT_LT(0, unread);
	ASSERT_LT(0, unsent);
	close(self->c.srv);
	self->c.srv = -1;
	for (i = 0; i < 1000; i++) {
		ti = nl_tcp_info_of(self->c.cli);
		if (ti.b.tcpi_state == TCP_CLOSE)
			break;
		nl_sleep_ms(10);
	}
	ASSERT_EQ(TCP_CLOSE, ti.b.tcpi_state);
	ASSERT_EQ(0, set_loss(0));
	collect(_metadata, self);
	sendmsg_bytes = sendmsg_bytes_of(&self->log, &self->c);
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_XMIT, &self->c) {
		const struct netlat_rec_tcp_xmit *x = (const void *)h;

		if (x->flags & NETLAT_TCP_RETRANSMIT)
			rtx_bytes += x->len;
		else
			first_bytes += x->len;
	}
	TH_LOG("sendmsg accepted %llu bytes (records %lld); %d unsent before the reset; first transmissions %lld bytes, TCP_INFO %llu; retransmissions %lld bytes, TCP_INFO %llu",
	       accepted, sendmsg_bytes, unsent, first_bytes,
	       (unsigned long long)(ti.bytes_sent - ti.bytes_retrans),
	       rtx_bytes, (unsigned long long)ti.bytes_retrans);
	EXPECT_EQ((long long)accepted, sendmsg_bytes);
	EXPECT_EQ((long long)(ti.bytes_sent - ti.bytes_retrans), first_bytes);
	EXPECT_EQ((long long)ti.bytes_retrans, rtx_bytes);
	/* the reset dropped bytes sendmsg had accepted, never sent */
	EXPECT_LT(first_bytes, sendmsg_bytes);
}

TEST_F_TIMEOUT(tcp, fast_retransmit_kind, 120)
{
	struct mibs b, a;
	struct rtx_sum s;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	bulk(_metadata, self, 4 * MiB, 2, &b, &a);
	rtx_sum(_metadata, self, &self->c, &b, &a, &s);
	check_mib(_metadata, &s, &b, &a);
	EXPECT_LT(0ull, s.kind[NETLAT_RETRANS_FAST]);
	/* TCPFastRetrans: successes from the ACK path outside Loss state */
	EXPECT_EQ(a.fast_retrans - b.fast_retrans, s.fast_ok_segs);
}

TEST_F_TIMEOUT(tcp, rto_kind, 120)
{
	static char buf[32768];
	struct mibs b, a;
	struct rtx_sum s;
	uint64_t t0 = nl_mono_ns();
	ssize_t sent;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	ASSERT_EQ(0, conn_open(&self->c));
	ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 10));
	mibs_read(&b);
	/* Blackhole: everything after this is lost until the timer fires. */
	ASSERT_EQ(0, set_loss(100));
	/* whatever fits in the send buffer: nothing is acked for a while */
	sent = send(self->c.cli, buf, sizeof(buf), MSG_DONTWAIT);
	ASSERT_LT(0, sent);
	nl_sleep_ms(1000);
	ASSERT_EQ(0, set_loss(0));
	TH_LOG("blackhole over at %.2f s", (nl_mono_ns() - t0) / 1e9);
	ASSERT_TRUE(nl_conn_finish(&self->c, 60));
	TH_LOG("finished at %.2f s", (nl_mono_ns() - t0) / 1e9);
	EXPECT_EQ(sizeof(buf) + sent, self->c.rx_bytes);
	mibs_read(&a);
	collect(_metadata, self);
	rtx_sum(_metadata, self, &self->c, &b, &a, &s);
	TH_LOG("TCPTimeouts +%lld", a.timeouts - b.timeouts);
	EXPECT_LT(0, a.timeouts - b.timeouts);
	EXPECT_LT(0ull, s.kind[NETLAT_RETRANS_RTO]);
	check_mib(_metadata, &s, &b, &a);
}

/* ---- handshake retransmissions --------------------------------------- */

/*
 * A datagram A -> B and its echo B -> A, so that both neighbour entries are
 * resolved before a test drops everything one way (ARP included): else a
 * SYN could wait in the neighbour queue instead of reaching the wire.
 */
static int udp_ping(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET }, from;
	struct timeval tv = { .tv_sec = 5 };
	socklen_t alen = sizeof(a);
	int fd[2] = { -1, -1 };	/* A's, B's */
	int i, ret = -1;
	char byte = 'p';

	if (nl_ns_enter(g_ns_b))
		return -1;
	fd[1] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	if (fd[1] < 0 || bind(fd[1], (void *)&a, sizeof(a)) ||
	    getsockname(fd[1], (void *)&a, &alen) || nl_ns_enter(g_ns_a))
		goto out;
	fd[0] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd[0] < 0 || connect(fd[0], (void *)&a, sizeof(a)))
		goto out;
	for (i = 0; i < 2; i++)
		setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	alen = sizeof(from);
	if (send(fd[0], &byte, 1, 0) == 1 &&
	    recvfrom(fd[1], &byte, 1, 0, (void *)&from, &alen) == 1 &&
	    sendto(fd[1], &byte, 1, 0, (void *)&from, alen) == 1 &&
	    recv(fd[0], &byte, 1, 0) == 1)
		ret = 0;
out:
	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* Listen in B (self->lfd) and start a non-blocking connect from A. */
static int hs_start(FIXTURE_DATA(tcp) *self)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	struct nl_conn *c = &self->c;
	int ret = -1;

	if (nl_ns_enter(g_ns_b))
		return -1;
	self->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	if (self->lfd < 0 || bind(self->lfd, (void *)&a, sizeof(a)) ||
	    listen(self->lfd, 1) || getsockname(self->lfd, (void *)&a, &alen) ||
	    nl_ns_enter(g_ns_a))
		goto out;
	c->dport = ntohs(a.sin_port);
	c->cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->cli < 0 || !connect(c->cli, (void *)&a, sizeof(a)) ||
	    errno != EINPROGRESS)
		goto out;
	alen = sizeof(a);
	if (!getsockname(c->cli, (void *)&a, &alen)) {
		c->family = AF_INET;
		c->sport = ntohs(a.sin_port);
		ret = 0;
	}
out:
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* The connect completes without error and B accepts it. */
static bool hs_finish(FIXTURE_DATA(tcp) *self, int ms)
{
	struct pollfd p = { .fd = self->c.cli, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = -1;

	if (poll(&p, 1, ms) != 1 ||
	    getsockopt(self->c.cli, SOL_SOCKET, SO_ERROR, &err, &len) || err)
		return false;
	p.fd = self->lfd;
	p.events = POLLIN;
	if (poll(&p, 1, ms) != 1)
		return false;
	self->c.srv = accept4(self->lfd, NULL, NULL, SOCK_CLOEXEC);
	return self->c.srv >= 0;
}

/* Wait until RetransSegs of @ns exceeds @from. */
static bool wait_retrans(int ns, long long from, unsigned int secs)
{
	uint64_t end = nl_mono_ns() + secs * 1000000000ull;

	while (nl_mono_ns() < end) {
		if (nl_mib(ns, "snmp", "Tcp", "RetransSegs") > from)
			return true;
		nl_sleep_ms(10);
	}
	return false;
}

/*
 * A handshake whose first retransmission is lost: everything leaving
 * @dev (in @ns) is dropped until RetransSegs of @ns has grown, then the
 * link heals and the connect completes. The MIB counters of @ns before
 * and after in @b, @a. A kprobe miss voids the run: up to three tries.
 */
static void lossy_handshake(struct __test_metadata *_metadata,
			    FIXTURE_DATA(tcp) *self, int ns, const char *dev,
			    struct mibs *b, struct mibs *a)
{
	uint64_t t0;
	int attempt;

	for (attempt = 1;; attempt++) {
		need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
		ASSERT_EQ(0, udp_ping());
		mibs_read_ns(ns, b);
		ASSERT_LE(0, b->retrans_segs);
		ASSERT_LE(0, b->syn_retrans);
		ASSERT_EQ(0, set_loss_on(ns, dev, 100));
		t0 = nl_mono_ns();
		ASSERT_EQ(0, hs_start(self));
		ASSERT_TRUE(wait_retrans(ns, b->retrans_segs, 10));
		ASSERT_EQ(0, set_loss_on(ns, dev, 0));
		TH_LOG("healed at %.2f s", (nl_mono_ns() - t0) / 1e9);
		ASSERT_TRUE(hs_finish(self, 15000));
		TH_LOG("connected at %.2f s", (nl_mono_ns() - t0) / 1e9);
		mibs_read_ns(ns, a);
		if (!nl_collect(self->fd, &self->log, self->pr.nmissed))
			return;
		ASSERT_GT(3, attempt) TH_LOG("%s: the comparison is void",
					     self->log.why);
		TH_LOG("attempt %d void (%s): again", attempt, self->log.why);
		nl_conn_close(&self->c);
		close(self->lfd);
		self->lfd = -1;
		nl_log_free(&self->log);
		ASSERT_EQ(0, nl_log_init(&self->log, g_def.nr_cpus, true));
		nl_sleep_ms(200);	/* the closed connection's FINs */
	}
}

/*
 * Every RETRANS record of @c is a successful retransmit of kind @kind of
 * the segment at @isn; the COUNTED ones add up to RetransSegs and to
 * TCPSynRetrans (which counts handshake retransmits only). Exactly, even
 * with the group partial: a SYN is retransmitted from
 * tcp_retransmit_timer() (tcp_timer.c) through the probed
 * tcp_retransmit_skb(), and a SYN-ACK by an indirect call of
 * tcp_rtx_synack().
 */
static void check_handshake(struct __test_metadata *_metadata,
			    FIXTURE_DATA(tcp) *self, const struct nl_conn *c,
			    uint8_t kind, uint32_t isn, const struct mibs *b,
			    const struct mibs *a)
{
	const struct netlat_rec_hdr *h;
	struct rtx_sum s;

	rtx_sum(_metadata, self, c, b, a, &s);
	TH_LOG("ISN %u; TCPSynRetrans +%lld", isn, a->syn_retrans - b->syn_retrans);
	EXPECT_LT(0ull, s.kind[kind]);
	EXPECT_EQ(s.ok + s.failed, s.kind[kind]);
	EXPECT_EQ(0ull, s.failed);
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_RETRANS, c) {
		const struct netlat_rec_tcp_retrans *r = (const void *)h;

		EXPECT_EQ(kind, r->kind);
		EXPECT_EQ(0, r->ret);
		EXPECT_EQ(isn, r->seq);
		EXPECT_EQ(isn + 1, r->end_seq);
		EXPECT_EQ(1, r->segs);
	}
	check_mib(_metadata, &s, b, a);
	EXPECT_EQ(a->retrans_segs - b->retrans_segs, s.counted_segs);
	EXPECT_EQ(a->syn_retrans - b->syn_retrans, s.counted_segs);
}

/*
 * SYN retransmit: A's SYN and its first retransmission are lost. Records
 * of kind SYN for A's socket, at A's ISN (rcv_nxt - 1 of B's end).
 */
TEST_F_TIMEOUT(tcp, syn_retransmit, 90)
{
	struct mibs b, a;
	int64_t seq;

	lossy_handshake(_metadata, self, g_ns_a, DEV_A, &b, &a);
	seq = nl_queue_seq(self->c.srv, TCP_RECV_QUEUE);
	ASSERT_LE(0, seq) TH_LOG("TCP_REPAIR: %s", strerror(errno));
	check_handshake(_metadata, self, &self->c, NETLAT_RETRANS_SYN,
			(uint32_t)seq - 1, &b, &a);
}

/*
 * B's SYN-ACKs lost until B's listener has retransmitted one, then the
 * records checked (check_handshake()): kind SYNACK with the request's
 * flow (B's side: the listening port is the source) at B's ISN (rcv_nxt
 * - 1 of A's end), counted in B. The request in *@req, B's MIBs in @b, @a.
 */
static void synack_lossy_checked(struct __test_metadata *_metadata,
				 FIXTURE_DATA(tcp) *self, struct nl_conn *req,
				 struct mibs *b, struct mibs *a)
{
	int64_t seq;

	self->netem_b = true;
	lossy_handshake(_metadata, self, g_ns_b, DEV_B, b, a);
	seq = nl_queue_seq(self->c.cli, TCP_RECV_QUEUE);
	ASSERT_LE(0, seq) TH_LOG("TCP_REPAIR: %s", strerror(errno));
	req->family = AF_INET;
	req->sport = self->c.dport;
	req->dport = self->c.sport;
	check_handshake(_metadata, self, req, NETLAT_RETRANS_SYNACK,
			(uint32_t)seq - 1, b, a);
}

/*
 * SYN-ACK retransmit: B's SYN-ACKs are lost until B's listener has
 * retransmitted one (its request timer, or A's SYN retransmit). Records of
 * kind SYNACK with the request's flow (B's side: the listening port is
 * the source) at B's ISN (rcv_nxt - 1 of A's end), counted in B.
 */
TEST_F_TIMEOUT(tcp, synack_retransmit, 90)
{
	const struct netlat_rec_hdr *h;
	struct nl_conn req = {};
	struct mibs b, a;
	uint64_t cookie = 0;

	synack_lossy_checked(_metadata, self, &req, &b, &a);
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_RETRANS, &req) {
		const struct netlat_rec_tcp_retrans *r = (const void *)h;

		EXPECT_EQ(0, memcmp(r->flow.saddr, "\xc0\x00\x02\x02", 4));
		EXPECT_EQ(0, memcmp(r->flow.daddr, "\xc0\x00\x02\x01", 4));
		EXPECT_EQ(0ull, r->skb_id);
		EXPECT_TRUE(!cookie || cookie == r->flow.cookie);
		cookie = r->flow.cookie;
	}
}

/* The mechanism of netlat's hook on @fn, or -1. */
static int hook_mechanism(int fd, const char *fn)
{
	struct netlat_hook h[128];
	struct netlat_hooks a = {
		.size = sizeof(a), .nr = 128, .entry_size = sizeof(h[0]),
		.entries = (uintptr_t)h,
	};
	unsigned int i;

	if (nl_ioctl(fd, NETLAT_IOC_HOOKS, &a, sizeof(a)))
		return -1;
	for (i = 0; i < a.nr && i < 128; i++)
		if (!strcmp(h[i].name, fn))
			return h[i].mechanism;
	return -1;
}

/*
 * #39: a live patch of a function netlat hooks loads while the group is
 * on (netlat holds no IPMODIFY site by default), takes effect (its copy
 * of tcp_rtx_synack() counts the SYN-ACKs it sends again: TCPSynRetrans),
 * and netlat's records still add up to the MIB through the patched
 * function.
 */
TEST_F_TIMEOUT(tcp, synack_retransmit_live_patched, 120)
{
	struct nl_conn req = {};
	struct mibs b, a;
	long long calls;
	int ret;

	if (access("/sys/kernel/livepatch", F_OK))
		SKIP(return, "the kernel has no live patching");
	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	ret = test_mod_load("netlat_livepatch");
	if (ret == -ENOENT)
		SKIP(return, TEST_MOD_DIR "/netlat_livepatch.ko not built");
	ASSERT_EQ(0, ret) TH_LOG("loading the live patch: %s", strerror(-ret));
	self->test_mod = "netlat_livepatch";
	ASSERT_TRUE(wait_flag(LIVEPATCH_SYS "/transition", '0', 30000))
		TH_LOG("the patch's transition did not end");
	synack_lossy_checked(_metadata, self, &req, &b, &a);
	calls = test_mod_param("netlat_livepatch", "calls");
	TH_LOG("the patched tcp_rtx_synack() ran %lld times", calls);
	/* every SYN-ACK sent again was the patch's */
	EXPECT_LT(0, calls);
	EXPECT_EQ(a.syn_retrans - b.syn_retrans, calls);
}

/*
 * #39, with ipmodify=1 (netlat wraps the retransmit functions where the
 * kernel has no fprobe, 6.1): a live patch still wins. The module
 * notifier gives the wrapped sites up as the patch loads, each to its
 * kretprobe, so the patch loads, and netlat's records still add up to
 * the MIB through the patched function.
 */
TEST_F_TIMEOUT(tcp, live_patch_takes_a_wrapped_site, 120)
{
	struct nl_conn req = {};
	struct mibs b, a;
	int ret;

	if (access("/sys/kernel/livepatch", F_OK))
		SKIP(return, "the kernel has no live patching");
	if (access(TEST_MOD_DIR "/netlat_livepatch.ko", F_OK))
		SKIP(return, TEST_MOD_DIR "/netlat_livepatch.ko not built");
	/* the fixture's descriptor would keep netlat loaded */
	EXPECT_EQ(0, nl_restore(self->fd, &g_def));
	close(self->fd);
	self->fd = -1;
	self->reloaded = true;
	ASSERT_EQ(0, reload_netlat("ipmodify=1"));
	nl_log_free(&self->log);
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
				g_def.nr_cpus));
	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	if (hook_mechanism(self->fd, "tcp_rtx_synack") != NETLAT_HOOK_WRAPPED)
		SKIP(return, "no wrapped calls on this kernel (mechanism %d)",
		     hook_mechanism(self->fd, "tcp_rtx_synack"));
	ret = test_mod_load("netlat_livepatch");
	ASSERT_EQ(0, ret) TH_LOG("loading the live patch: %s", strerror(-ret));
	self->test_mod = "netlat_livepatch";
	ASSERT_TRUE(wait_flag(LIVEPATCH_SYS "/transition", '0', 30000))
		TH_LOG("the patch's transition did not end");
	EXPECT_EQ(NETLAT_HOOK_KRETPROBE,
		  hook_mechanism(self->fd, "tcp_rtx_synack"));
	EXPECT_EQ(NETLAT_HOOK_KRETPROBE,
		  hook_mechanism(self->fd, "tcp_retransmit_skb"));
	synack_lossy_checked(_metadata, self, &req, &b, &a);
	EXPECT_EQ(a.syn_retrans - b.syn_retrans,
		  test_mod_param("netlat_livepatch", "calls"));
}

/*
 * #39: kprobes with post handlers (IPMODIFY users on an ftrace site) on
 * every retransmit function netlat hooks register while the group is on.
 * Where netlat's return probes there are kretprobes (6.1 without
 * ipmodify=1), the other module's come first: the kernel (6.1 and 6.12
 * alike) joins a post handler to a kprobe site armed without one by
 * setting the handler and keeping the arming, then disarms the site as
 * one armed with it, and warns ("Failed to disarm kprobe-ftrace").
 */
TEST_F(tcp, post_kprobes_beside_retransmit_group)
{
	bool first = hook_mechanism(self->fd, "tcp_retransmit_skb") ==
		     NETLAT_HOOK_KRETPROBE;
	struct netlat_probes pr;
	int ret;

	if (!first)
		need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	ret = test_mod_load("netlat_postkprobe");
	if (ret == -ENOENT)
		SKIP(return, TEST_MOD_DIR "/netlat_postkprobe.ko not built");
	ASSERT_EQ(0, ret) TH_LOG("kprobes with post handlers: %s",
				 strerror(-ret));
	self->test_mod = "netlat_postkprobe";
	TH_LOG("post handlers registered %s the retransmit group went on",
	       first ? "before" : "after");
	if (first)
		need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	EXPECT_EQ(NETLAT_PROBE_TCP_RETRANS,
		  pr.enabled & NETLAT_PROBE_TCP_RETRANS);
}

TEST_F(tcp, disable_stops_records)
{
	static char buf[10000];
	const struct netlat_rec_hdr *h;
	size_t before = 0, after = 0;
	struct netlat_info info;
	uint64_t t_off;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_XMIT | NETLAT_PROBE_TCP_SENDMSG);
	ASSERT_EQ(0, conn_open(&self->c));
	ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 10));
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_TCP_SENDMSG, NULL));
	t_off = nl_mono_ns();
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(NETLAT_PROBE_TCP_SENDMSG, info.probe_groups_enabled);
	ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_finish(&self->c, 30));
	collect(_metadata, self);
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_XMIT, &self->c) {
		if (h->ts_ns < t_off)
			before++;
		else
			after++;
	}
	EXPECT_LT(0ull, before);
	EXPECT_EQ(0ull, after);
	before = after = 0;
	for_each_tcp(&self->log, h, NETLAT_REC_TCP_SENDMSG, &self->c) {
		if (h->ts_ns < t_off)
			before++;
		else
			after++;
	}
	EXPECT_EQ(1ull, before);
	EXPECT_EQ(1ull, after);	/* its group stayed on */
}

static bool wait_dev(void)
{
	int i;

	for (i = 0; i < 500 && access(NETLAT_DEVICE_PATH, F_OK); i++)
		nl_sleep_ms(10);
	return !access(NETLAT_DEVICE_PATH, F_OK);
}

/*
 * A probe whose symbol does not exist is skipped, not fatal: reload the
 * module with test_missing=1 (one extra kprobe on a symbol no kernel has,
 * in the push group), which must load, report the push group partial but
 * available, and enable it. The module is then reloaded as it was.
 */
TEST(missing_symbol_not_fatal)
{
	struct netlat_probes pr = { 0 };
	int ko, fd, ret;

	if (g_dev_skip[0])
		SKIP(return, "%s", g_dev_skip);
	ko = open("/netlat.ko", O_RDONLY | O_CLOEXEC);
	if (ko < 0)
		SKIP(return, "/netlat.ko: %s (not in the test VM)", strerror(errno));
	nl_disarm();
	if (syscall(SYS_delete_module, "netlat", O_NONBLOCK))
		SKIP(return, "cannot unload netlat: %s", strerror(errno));
	ret = syscall(SYS_finit_module, ko, "test_missing=1", 0);
	EXPECT_EQ(0, ret) TH_LOG("load with test_missing=1: %s", strerror(errno));
	if (!ret) {
		EXPECT_TRUE(wait_dev());
		fd = nl_open(0);
		EXPECT_LE(0, fd);
		if (fd >= 0) {
			EXPECT_EQ(0, nl_probes(fd, false, 0, &pr));
			EXPECT_TRUE(pr.partial & NETLAT_PROBE_TCP_PUSH);
			EXPECT_EQ((uint64_t)NETLAT_PROBE_ALL, pr.available);
			EXPECT_EQ(0, nl_probes(fd, true, NETLAT_PROBE_TCP_PUSH, &pr));
			EXPECT_EQ((uint64_t)NETLAT_PROBE_TCP_PUSH, pr.enabled);
			EXPECT_EQ(0, nl_probes(fd, true, 0, &pr));
			close(fd);
		}
		EXPECT_EQ(0, syscall(SYS_delete_module, "netlat", O_NONBLOCK))
			TH_LOG("unload: %s", strerror(errno));
	}
	ASSERT_EQ(0, syscall(SYS_finit_module, ko, "", 0))
		TH_LOG("reload: %s", strerror(errno));
	ASSERT_TRUE(wait_dev());
	close(ko);
}

/*
 * The reader on a capture of real TCP records: every sendmsg printed, and
 * the per-skb stage table joins transmissions with their sendmsg, qdisc,
 * driver and ACK records. Skipped without /bin/netlat (host runs).
 */
TEST_F(tcp, reader_prints_and_joins)
{
	static char buf[65536];
	const char *cap = "/tmp/netlat_tcp_cap";
	char cmd[256], line[512];
	unsigned int sendmsgs = 0, joined = 0, i;
	FILE *f;

	if (access("/bin/netlat", X_OK))
		SKIP(return, "/bin/netlat not installed");
	need_groups(_metadata, self, NETLAT_PROBE_ALL & self->pr.available);
	ASSERT_EQ(0, conn_open(&self->c));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_finish(&self->c, 30));
	collect(_metadata, self);
	f = fopen(cap, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1u, fwrite(self->log.buf, self->log.len, 1, f));
	fclose(f);

	snprintf(cmd, sizeof(cmd), "/bin/netlat tail %s", cap);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "TCP_SENDMSG ") && strstr(line, " size=65536 "))
			sendmsgs++;
	EXPECT_EQ(0, pclose(f));
	EXPECT_EQ(8u, sendmsgs);

	snprintf(cmd, sizeof(cmd), "/bin/netlat report %s", cap);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long n;

		fputs(line, stderr);
		if (sscanf(line, "sendmsg>ack %llu", &n) == 1 && n > 0)
			joined++;
		if (sscanf(line, "qdisc>driver %llu", &n) == 1 && n > 0)
			joined++;
	}
	EXPECT_EQ(0, pclose(f));
	EXPECT_EQ(2u, joined);
	unlink(cap);
}

TEST_HARNESS_MAIN
