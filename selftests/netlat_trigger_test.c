// SPDX-License-Identifier: GPL-2.0
/*
 * Flight-recorder triggers on real TCP events, in overwrite mode, against
 * oracles netlat does not produce: the sender namespace's MIB counters
 * (TCPTimeouts, RetransSegs, TCPRetransFail) and the kernel's own RTT
 * estimate (TCP_INFO tcpi_rtt) under a netem delay.
 *
 * rto_trigger: a blackhole (netem 100% loss) until TCPTimeouts grows fires
 *	RETRANS_KIND(rto); the snapshot holds the triggering RTO record, the
 *	original transmission of that range before it, and the ACK that
 *	ended the loss after it (inside the post window, which spans the
 *	next, backed-off retransmission).
 * failed_retransmit_trigger: a delaying netem with a 2-packet queue makes
 *	retransmissions fail; RETRANS_FAIL fires on one with ret != 0.
 * latency_threshold: with a 100 ms netem delay, a 3 s threshold does not
 *	fire; a 50 ms one does, on an ACK of the flow whose xmit_ack_ns is
 *	at least the threshold.
 *
 * Topology: namespaces A and B joined by a veth pair (nta0 198.51.100.1
 * in A, ntb0 198.51.100.2 in B), one segment per skb on nta0, a netem root
 * qdisc on nta0. Needs root, the module, veth and sch_netem; skips
 * otherwise.
 */
#include "netlat_util.h"

#include <poll.h>
#include <setjmp.h>
#include "netlat_tcp.h"
#include "netlat_snap.h"
#include "netlat_filter.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"198.51.100.1"
#define ADDR_B	"198.51.100.2"
#define DEV_A	"nta0"
#define DEV_B	"ntb0"
#define MS	1000000ull
#define RING	(1ull << 20)

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];	/* why the topology or module is missing */
static struct netlat_info g_def;

static void __attribute__((constructor)) trigger_topology(void)
{
	int fd, ret;

	fd = nl_open(0);
	ret = fd < 0 ? -errno : nl_get_info(fd, &g_def);
	if (fd >= 0)
		close(fd);
	if (ret)
		snprintf(g_skip, sizeof(g_skip), NETLAT_DEVICE_PATH ": %s",
			 strerror(-ret));
	else
		nl_lossy_pair(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B, 0,
			      g_skip, sizeof(g_skip));
}

/* netem on A: @loss_pct loss, @delay_ms delay, queue of @limit (0: big). */
static int netem(double loss_pct, uint32_t delay_ms, uint32_t limit)
{
	int ret = nl_ns_enter(g_ns_a);

	if (!ret)
		ret = nlr_netem_full(DEV_A, loss_pct, delay_ms * 1000, limit);
	nl_ns_enter(nl_ns_home);
	return ret;
}

static long long mib_a(const char *file, const char *prefix, const char *name)
{
	return nl_mib(g_ns_a, file, prefix, name);
}

static bool pri_within(int fd, unsigned int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLPRI);
}

FIXTURE(trig) {
	int fd;
	struct netlat_probes pr;
	struct nl_conn c;
	unsigned char *buf;
	size_t cap;
	struct snap_view v;
	bool parsed;
};

FIXTURE_SETUP(trig)
{
	struct netlat_snapshot s;

	self->fd = -1;
	self->c.cli = self->c.srv = -1;
	if (g_skip[0])
		SKIP(return, "%s", g_skip);
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, &s));
	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, RING));
	self->cap = snap_capacity(&g_def) + RING * g_def.nr_cpus;
	self->buf = malloc(self->cap);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, netem(0, 0, 0));
}

FIXTURE_TEARDOWN(trig)
{
	nl_conn_close(&self->c);
	if (self->parsed)
		view_free(&self->v);
	free(self->buf);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_set_rules(self->fd, NULL, 0));
		EXPECT_EQ(0, trig_off(self->fd));
		EXPECT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, setup_rings(self->fd, NETLAT_MODE_STREAM,
					 g_def.ring_bytes));
		EXPECT_EQ(0, nl_restore(self->fd, &g_def));
		close(self->fd);
	}
	netem(0, 0, 0);
}

static void need_groups(struct __test_metadata *_metadata,
			FIXTURE_DATA(trig) *self, uint64_t groups)
{
	nl_need_groups(self->fd, &self->pr, groups);
}

/* Read and check the frozen snapshot; the record that fired it. */
static const struct netlat_rec_hdr *
frozen(struct __test_metadata *_metadata, FIXTURE_DATA(trig) *self,
       uint32_t trigger, uint16_t type)
{
	const struct netlat_rec_snapshot *sn;
	const struct netlat_rec_hdr *h, *found;
	ssize_t len;

	len = snap_read_all(self->fd, self->buf, self->cap, 65536);
	ASSERT_LT(0, len) TH_LOG("snapshot read: %s", strerror((int)-len));
	ASSERT_EQ(0, view_parse(&self->v, self->buf, len, g_def.nr_cpus))
		TH_LOG("%s", self->v.why);
	self->parsed = true;
	sn = self->v.snap;
	EXPECT_EQ(NETLAT_SNAP_TRIGGER, sn->reason);
	EXPECT_EQ(trigger, sn->trigger);
	EXPECT_EQ(type, sn->trig_type);
	EXPECT_EQ(NETLAT_MODE_OVERWRITE, sn->mode);
	found = view_trig_rec(&self->v);
	ASSERT_NE(NULL, found) TH_LOG("trigger record cpu %u seq %llu absent",
				      sn->trig_cpu,
				      (unsigned long long)sn->trig_seq);
	EXPECT_EQ(type, found->type);
	EXPECT_EQ(sn->trig_ts_ns, found->ts_ns);
	/* frozen after the post window, nothing recorded after the freeze */
	EXPECT_LE(sn->trig_ts_ns + 200 * MS, sn->hdr.ts_ns);
	nl_log_for_each(&self->v.log, h)
		EXPECT_GE(self->v.cpu[h->cpu]->hdr.ts_ns, h->ts_ns);
	return found;
}

TEST_F_TIMEOUT(trig, rto_trigger, 90)
{
	const struct netlat_rec_tcp_retrans *rt;
	const struct netlat_rec_hdr *h;
	struct netlat_triggers t = {
		.armed = NETLAT_TRIG_RETRANS_KIND,
		.retrans_kinds = 1u << NETLAT_RETRANS_RTO,
		/* the RTO retransmission is lost too: span the next one */
		.post_ms = 1500,
	};
	static char buf[65536];
	bool orig_seen = false, ack_after = false;
	struct netlat_filter_rule only = {
		.groups = NETLAT_PROBE_ALL, .match = NETLAT_MATCH_PORT,
	};
	long long to0, to1;
	uint64_t end;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS |
		    NETLAT_PROBE_TCP_XMIT | NETLAT_PROBE_TCP_ACK);
	ASSERT_EQ(0, nl_conn_open(&self->c, g_ns_a, g_ns_b, ADDR_B, 0));
	/*
	 * Only this connection's records, so only its RTO can fire: a socket
	 * an earlier test left behind (a FIN to a namespace gone) times out
	 * too (7.3 fired on one once).
	 */
	only.port = self->c.dport;
	ASSERT_EQ(0, nl_set_rules(self->fd, &only, 1));
	ASSERT_EQ(0, trig_set(self->fd, &t));
	ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 10));
	ASSERT_FALSE(pri_within(self->fd, 0)) TH_LOG("fired without an RTO");

	/* Blackhole until the kernel counts a timeout, then heal. */
	to0 = mib_a("netstat", "TcpExt", "TCPTimeouts");
	ASSERT_EQ(0, netem(100, 0, 0));
	ASSERT_EQ(0, nl_send_all(self->c.cli, buf, 4096));
	end = nl_mono_ns() + 20000 * MS;
	while ((to1 = mib_a("netstat", "TcpExt", "TCPTimeouts")) == to0 &&
	       nl_mono_ns() < end)
		nl_sleep_ms(5);
	ASSERT_EQ(0, netem(0, 0, 0));
	ASSERT_LT(to0, to1) TH_LOG("no RTO within 20 s");
	ASSERT_TRUE(pri_within(self->fd, 10000));
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 20));

	h = frozen(_metadata, self, NETLAT_TRIG_RETRANS_KIND,
		   NETLAT_REC_TCP_RETRANS);
	rt = (const void *)h;
	EXPECT_EQ(NETLAT_RETRANS_RTO, rt->kind);
	EXPECT_TRUE(nl_flow_is(&rt->flow, &self->c));
	nl_log_for_each(&self->v.log, h) {
		const struct netlat_rec_tcp_xmit *x = (const void *)h;
		const struct netlat_rec_tcp_ack *a = (const void *)h;

		/* history: the lost first transmission of the range */
		if (h->type == NETLAT_REC_TCP_XMIT &&
		    nl_flow_is(&x->flow, &self->c) && x->seq == rt->seq &&
		    !(x->flags & NETLAT_TCP_RETRANSMIT) &&
		    h->ts_ns < rt->hdr.ts_ns)
			orig_seen = true;
		/* post window: the ACK that covered the retransmission */
		if (h->type == NETLAT_REC_TCP_ACK &&
		    nl_flow_is(&a->flow, &self->c) &&
		    h->ts_ns > rt->hdr.ts_ns &&
		    (int32_t)(a->snd_una - rt->end_seq) >= 0)
			ack_after = true;
	}
	EXPECT_TRUE(orig_seen) TH_LOG("no original transmission before");
	EXPECT_TRUE(ack_after) TH_LOG("no ACK in the post window");
}

TEST_F_TIMEOUT(trig, failed_retransmit_trigger, 150)
{
	const struct netlat_rec_tcp_retrans *rt;
	struct netlat_triggers t = {
		.armed = NETLAT_TRIG_RETRANS_FAIL,
		.post_ms = 200,
	};
	static char buf[65536];
	long long rs0, rs1, rf0, rf1;
	size_t done;
	bool fired = false;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_RETRANS);
	ASSERT_EQ(0, trig_set(self->fd, &t));
	ASSERT_EQ(0, nl_conn_open(&self->c, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 10));
	rs0 = mib_a("snmp", "Tcp", "RetransSegs");
	rf0 = mib_a("netstat", "TcpExt", "TCPRetransFail");
	/* a 2-packet queue behind a 20 ms delay refuses retransmits */
	ASSERT_EQ(0, netem(3, 20, 2));
	for (done = 0; done < 8 * 1048576 && !fired; done += sizeof(buf)) {
		ASSERT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
		fired = pri_within(self->fd, 0);
	}
	ASSERT_TRUE(nl_conn_wait_acked(&self->c, 60));
	ASSERT_EQ(0, netem(0, 0, 0));
	ASSERT_TRUE(fired || pri_within(self->fd, 5000))
		TH_LOG("no failed retransmit in %zu bytes", done);
	rs1 = mib_a("snmp", "Tcp", "RetransSegs");
	rf1 = mib_a("netstat", "TcpExt", "TCPRetransFail");

	rt = (const void *)frozen(_metadata, self, NETLAT_TRIG_RETRANS_FAIL,
				  NETLAT_REC_TCP_RETRANS);
	EXPECT_NE(0, rt->ret);
	EXPECT_TRUE(nl_flow_is(&rt->flow, &self->c));
	EXPECT_LT(rs0, rs1);
	/* -EBUSY is the one failure the kernel does not count */
	if (rt->ret != -EBUSY)
		EXPECT_LT(rf0, rf1);
	TH_LOG("ret %d, RetransSegs +%lld, TCPRetransFail +%lld", rt->ret,
	       rs1 - rs0, rf1 - rf0);
}

/* Send @bytes and wait for them to be acked; the kernel's RTT in us. */
static uint32_t exchange(struct __test_metadata *_metadata,
			 FIXTURE_DATA(trig) *self, size_t bytes)
{
	static char buf[16384];
	size_t done;

	for (done = 0; done < bytes; done += sizeof(buf))
		EXPECT_EQ(0, nl_send_all(self->c.cli, buf, sizeof(buf)));
	EXPECT_TRUE(nl_conn_wait_acked(&self->c, 30));
	return nl_conn_info(&self->c).tcpi_rtt;
}

TEST_F_TIMEOUT(trig, latency_threshold, 90)
{
	const struct netlat_rec_tcp_ack *a;
	struct netlat_triggers t = {
		.armed = NETLAT_TRIG_LATENCY,
		.latency_ns = 3000 * MS,
		.post_ms = 200,
	};
	struct netlat_triggers got;
	uint64_t fired0;
	uint32_t rtt_us;

	need_groups(_metadata, self, NETLAT_PROBE_TCP_ACK);
	ASSERT_EQ(0, netem(0, 100, 0));
	ASSERT_EQ(0, nl_conn_open(&self->c, g_ns_a, g_ns_b, ADDR_B, 0));

	/* Above every transmit -> ACK time: nothing fires. */
	ASSERT_EQ(0, trig_set(self->fd, &t));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	fired0 = got.fired;
	rtt_us = exchange(_metadata, self, 64 * 1024);
	EXPECT_LE(100000u, rtt_us) TH_LOG("netem delay not in effect");
	EXPECT_GT(3000000u, rtt_us);
	EXPECT_FALSE(pri_within(self->fd, 500));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_EQ(fired0, got.fired);

	/* Below the delay: the next ACK fires. */
	t.latency_ns = 50 * MS;
	ASSERT_EQ(0, trig_set(self->fd, &t));
	rtt_us = exchange(_metadata, self, 16 * 1024);
	EXPECT_LE(100000u, rtt_us);
	ASSERT_TRUE(pri_within(self->fd, 5000));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_LT(fired0, got.fired);

	a = (const void *)frozen(_metadata, self, NETLAT_TRIG_LATENCY,
				 NETLAT_REC_TCP_ACK);
	EXPECT_TRUE(nl_flow_is(&a->flow, &self->c));
	EXPECT_LE(50 * MS, a->xmit_ack_ns);
	/* the delay is one way: the ACK comes back undelayed */
	EXPECT_LE(100 * MS, a->xmit_ack_ns);
	EXPECT_GT(3000 * MS, a->xmit_ack_ns);
}

TEST_HARNESS_MAIN
