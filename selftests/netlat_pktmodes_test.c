// SPDX-License-Identifier: GPL-2.0
/*
 * Filters, snapshots and triggers at the packet level (NETLAT_LEVEL_PACKETS,
 * one NETLAT_REC_TCP_PKT per sent packet at its ACK), as issue 12 has them
 * work in both levels. Oracles netlat does not make: the bytes the test
 * sent (and the receivers read), TCP_INFO's RTT, and a netem delay on the
 * receiver's egress (the ACKs' path: a physical floor of xmit>ack).
 *
 * port_filter: two connections at once, a port rule for the ack group (the
 *	packet records') naming one: every packet record is of that
 *	connection and covers exactly its bytes and FIN, none of the other;
 *	the histograms still count both (filters only keep records out).
 *	Without the rule, or with it for the event groups only, both
 *	connections' bytes are in the records.
 * flow_kept_out: the same rule for every group (what `--filter port=`
 *	sets): the other connection is not followed at all, no packet
 *	record, no socket counters live or closed, not in the histograms
 *	(they hold exactly the kept connection's bytes and FIN), its packets
 *	counted as filtered; the kept connection's counters equal its
 *	TCP_INFO (bytes acked, retransmitted and data segments).
 * manual_snapshot: overwrite mode, a transfer, a manual snapshot: it holds
 *	packet records covering the bytes sent and FIN, and no per-event
 *	record (sendmsg, xmit, ack, dev).
 * latency_trigger: NETLAT_TRIG_LATENCY with a 100 ms netem delay on the
 *	ACKs: a 3 s threshold does not fire although the rings hold packet
 *	records above the delay; a 50 ms one does, on a packet record of the
 *	connection whose xmit>ack is at least the delay.
 *
 * Topology: namespaces A and B joined by a veth pair (nma0 203.0.113.1 in
 * A, nmb0 203.0.113.2 in B), GSO on. Needs root, the module, veth and
 * sch_netem; skips otherwise.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include "netlat_tcp.h"
#include "netlat_snap.h"
#include "netlat_filter.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"203.0.113.1"
#define ADDR_B	"203.0.113.2"
#define DEV_A	"nma0"
#define DEV_B	"nmb0"
/* listening ports: below the ephemeral range, so no client port is one */
#define PORT_1	5101
#define PORT_2	5102
#define MS	1000000ull
#define BYTES	(256u << 10)
#define RING	(1ull << 20)
#define DELAY_MS 100
/* the fields tests read are in the first 128 bytes of a TCP_PKT record */
#define PKT_MIN	128u

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) pktmodes_topology(void)
{
	if (!nl_device_info(&g_def, g_skip, sizeof(g_skip)))
		nl_pair_ns(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B,
			   g_skip, sizeof(g_skip));
}

/* netem delay of @ms on B's egress: the ACKs of A's data. */
static int ack_delay(uint32_t ms)
{
	int ret = nl_ns_enter(g_ns_b);

	if (!ret)
		ret = nlr_netem_full(DEV_B, 0, ms * 1000, 0);
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* A packet record of the sending side of @c, ended by its ACK? */
static const struct netlat_rec_tcp_pkt *
acked_pkt(const struct netlat_rec_hdr *h, const struct nl_conn *c)
{
	const struct netlat_rec_tcp_pkt *p = (const void *)h;

	if (h->type != NETLAT_REC_TCP_PKT || h->size < PKT_MIN ||
	    !nl_flow_is(&p->flow, c) || !(p->flags & NETLAT_PKT_ACKED))
		return NULL;
	return p;
}

/* Sequence space @c's sender's ACKed packet records in @l cover. */
static uint64_t covered(const struct nl_log *l, const struct nl_conn *c)
{
	const struct netlat_rec_tcp_pkt *p;
	const struct netlat_rec_hdr *h;
	uint64_t n = 0;

	nl_log_for_each(l, h)
		if ((p = acked_pkt(h, c)))
			n += p->end_seq - p->seq;
	return n;
}

/* The packet level's byte counter (NETLAT_IOC_HIST, counters only). */
static uint64_t hist_bytes(int fd)
{
	struct netlat_hist h;

	memset(&h, 0, sizeof(h));
	if (nl_ioctl(fd, NETLAT_IOC_HIST, &h, sizeof(h)))
		return ~0ull;
	return h.bytes;
}

FIXTURE(pm) {
	int fd;
	struct netlat_probes pr;
	struct nl_log log;
	struct nl_conn c[2];
	unsigned char *buf;	/* snapshot stream */
	size_t cap;
	struct snap_view v;
	bool parsed;
};

FIXTURE_SETUP(pm)
{
	const char *skip = g_skip[0] ? g_skip : NULL;

	self->fd = -1;
	self->c[0].cli = self->c[0].srv = self->c[1].cli = self->c[1].srv = -1;
	if (!skip) {
		ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
					g_def.nr_cpus));
		/* a module without levels rejects the flag */
		if (nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0))
			skip = "no packet level";
	}
	if (skip)
		SKIP(longjmp(_metadata->env, 1), "%s", skip);
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
	ASSERT_EQ(0, ack_delay(0));
}

FIXTURE_TEARDOWN(pm)
{
	nl_conn_close(&self->c[0]);
	nl_conn_close(&self->c[1]);
	if (self->parsed)
		view_free(&self->v);
	free(self->buf);
	nl_log_free(&self->log);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_flight_done(self->fd, g_def.ring_bytes));
		EXPECT_EQ(0, nl_filters_done(self->fd, &g_def));
		close(self->fd);
	}
	ack_delay(0);
}

/*
 * Overwrite mode, rings of RING bytes emptied, the packet level afresh,
 * the packet groups on, room for a snapshot in self->buf.
 */
static void flight_packets(struct __test_metadata *_metadata,
			   FIXTURE_DATA(pm) *self)
{
	struct netlat_info info;

	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, RING));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	if (!self->buf) {
		self->cap = snap_capacity(&info);
		self->buf = malloc(self->cap);
		ASSERT_NE(NULL, self->buf);
	}
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	nl_need_groups(self->fd, &self->pr, NL_PKT_GROUPS);
}

/*
 * Connections 0 and 1 (to PORT_1, PORT_2) open at once, BYTES sent on
 * each in turns of 16 KiB, FINs sent and ACKed, every byte read.
 */
static void two_transfers(struct __test_metadata *_metadata,
			  FIXTURE_DATA(pm) *self)
{
	static char chunk[16384];
	size_t done;
	int i;

	memset(chunk, 0xa5, sizeof(chunk));
	ASSERT_EQ(0, nl_conn_open(&self->c[0], g_ns_a, g_ns_b, ADDR_B, PORT_1));
	ASSERT_EQ(0, nl_conn_open(&self->c[1], g_ns_a, g_ns_b, ADDR_B, PORT_2));
	for (done = 0; done < BYTES; done += sizeof(chunk))
		for (i = 0; i < 2; i++)
			ASSERT_EQ(0, nl_send_all(self->c[i].cli, chunk,
						 sizeof(chunk)));
	for (i = 0; i < 2; i++) {
		ASSERT_TRUE(nl_conn_finish(&self->c[i], 60));
		ASSERT_EQ(BYTES, self->c[i].rx_bytes);
	}
}

/*
 * The packet level afresh, @rules (@nr of them) in force, two transfers,
 * every record into self->log; again (up to three times) if a record was
 * lost or a kprobe hit skipped. The filtered counter's growth in *@kept_out.
 */
static void filtered_run(struct __test_metadata *_metadata,
			 FIXTURE_DATA(pm) *self,
			 struct netlat_filter_rule *rules, uint32_t nr,
			 uint64_t *kept_out)
{
	uint64_t f0;
	int attempt, ret;

	ASSERT_EQ(0, nl_set_rules(self->fd, rules, nr));
	for (attempt = 1;; attempt++) {
		ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
		nl_need_groups(self->fd, &self->pr, NL_PKT_GROUPS);
		f0 = nl_filtered(self->fd, g_def.nr_cpus);
		two_transfers(_metadata, self);
		ret = nl_collect(self->fd, &self->log, self->pr.nmissed);
		*kept_out = nl_filtered(self->fd, g_def.nr_cpus) - f0;
		if (!ret || attempt == 3)
			break;
		TH_LOG("attempt %d void (%s): again", attempt, self->log.why);
		nl_conn_close(&self->c[0]);
		nl_conn_close(&self->c[1]);
		nl_log_clear(&self->log);
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", self->log.why);
}

TEST_F_TIMEOUT(pm, port_filter, 180)
{
	struct netlat_filter_rule r = {
		.groups = NETLAT_PROBE_TCP_ACK,
		.match = NETLAT_MATCH_PORT,
		.port = PORT_1,
	};
	const struct netlat_rec_hdr *h;
	uint64_t kept_out, pkts = 0;

	nl_need_groups(self->fd, &self->pr, NL_PKT_GROUPS);

	/* no rule: both connections in the records */
	filtered_run(_metadata, self, NULL, 0, &kept_out);
	EXPECT_EQ(BYTES + 1ull, covered(&self->log, &self->c[0]));
	EXPECT_EQ(BYTES + 1ull, covered(&self->log, &self->c[1]));
	EXPECT_EQ(0ull, kept_out);
	nl_conn_close(&self->c[0]);
	nl_conn_close(&self->c[1]);
	nl_log_clear(&self->log);

	/* PORT_1 for the event groups only: packet records are the ack
	 * group's, so both connections stay */
	r.groups = NL_PKT_GROUPS & ~NETLAT_PROBE_TCP_ACK;
	filtered_run(_metadata, self, &r, 1, &kept_out);
	EXPECT_EQ(BYTES + 1ull, covered(&self->log, &self->c[0]));
	EXPECT_EQ(BYTES + 1ull, covered(&self->log, &self->c[1]));
	nl_conn_close(&self->c[0]);
	nl_conn_close(&self->c[1]);
	nl_log_clear(&self->log);

	/* PORT_1 for the ack group: connection 0's packets only */
	r.groups = NETLAT_PROBE_TCP_ACK;
	filtered_run(_metadata, self, &r, 1, &kept_out);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;

		if (h->type != NETLAT_REC_TCP_PKT)
			continue;
		pkts++;
		ASSERT_LE(PKT_MIN, h->size);
		EXPECT_TRUE(nl_flow_of(&p->flow, &self->c[0]))
			TH_LOG("packet record of ports %u > %u kept",
			       p->flow.sport, p->flow.dport);
	}
	TH_LOG("%llu packet records kept, %llu kept out",
	       (unsigned long long)pkts, (unsigned long long)kept_out);
	EXPECT_EQ(BYTES + 1ull, covered(&self->log, &self->c[0]));
	EXPECT_EQ(0ull, covered(&self->log, &self->c[1]));
	EXPECT_LT(0ull, kept_out);
	/* the histograms count what the filter kept out: both connections */
	EXPECT_EQ(2 * (BYTES + 1ull), hist_bytes(self->fd));
}

TEST_F_TIMEOUT(pm, flow_kept_out, 120)
{
	struct netlat_filter_rule r = {
		.groups = NETLAT_PROBE_ALL,
		.match = NETLAT_MATCH_PORT,
		.port = PORT_1,
	};
	const struct netlat_rec_tcp_pkt *p;
	const struct netlat_rec_hdr *h;
	struct netlat_flow_stats fs;
	struct nl_tcp_info ti;
	uint64_t kept_out, other = 0, rtx, data;

	nl_need_groups(self->fd, &self->pr, NL_PKT_GROUPS);
	filtered_run(_metadata, self, &r, 1, &kept_out);
	nl_log_for_each(&self->log, h) {
		p = (const void *)h;
		if (h->type == NETLAT_REC_TCP_PKT && h->size >= PKT_MIN &&
		    nl_flow_of(&p->flow, &self->c[1]))
			other++;
	}
	EXPECT_EQ(0ull, other);
	EXPECT_EQ(BYTES + 1ull, covered(&self->log, &self->c[0]));
	EXPECT_EQ(BYTES + 1ull, hist_bytes(self->fd));
	/*
	 * What was filtered is the other connection's packets of new data:
	 * at least its bytes in packets of at most 64 KiB (GSO's most), at
	 * most one per data segment TCP_INFO counts (not resent) and a FIN
	 * of its own from each end.
	 */
	ti = nl_tcp_info_of(self->c[1].cli);
	data = ti.data_segs_out - ti.b.tcpi_total_retrans;
	TH_LOG("kept out: %llu packets filtered; the other's data_segs_out %u, total_retrans %llu",
	       (unsigned long long)kept_out, ti.data_segs_out,
	       (unsigned long long)ti.b.tcpi_total_retrans);
	EXPECT_LE((uint64_t)(BYTES + 65535) / 65536, kept_out);
	EXPECT_GE(data + 2, kept_out);
	EXPECT_FALSE(nl_get_flow(self->fd, &self->c[1], false, &fs));

	/* the kept one, live: its FIN sent and ACKed (two_transfers) */
	ti = nl_tcp_info_of(self->c[0].cli);
	ASSERT_TRUE(nl_get_flow(self->fd, &self->c[0], false, &fs));
	rtx = ti.b.tcpi_total_retrans;
	data = ti.data_segs_out - rtx;
	TH_LOG("kept: bytes %llu segs %llu rtx %llu; TCP_INFO bytes_acked %llu data_segs_out %u total_retrans %llu; %llu kept out",
	       (unsigned long long)fs.bytes, (unsigned long long)fs.segs,
	       (unsigned long long)nl_sum8(fs.retrans_segs),
	       (unsigned long long)ti.bytes_acked, ti.data_segs_out,
	       (unsigned long long)rtx, (unsigned long long)kept_out);
	/* TCP_INFO's bytes acked count the SYN's sequence number too */
	EXPECT_EQ(ti.bytes_acked - 1, fs.bytes);
	EXPECT_EQ(rtx, nl_sum8(fs.retrans_segs));
	/* a FIN of its own is a packet but no data segment */
	EXPECT_LE(data, fs.segs);
	EXPECT_GE(data + 1, fs.segs);

	/*
	 * Closed (the ports stay in c[]): the kept one in the ring of closed
	 * sockets, not the other. The collection turned the groups off; on
	 * again they start the table afresh (its sockets' ends went
	 * unseen), so two new connections on the same ports.
	 */
	ASSERT_EQ(0, nl_probes(self->fd, true, NL_PKT_GROUPS, NULL));
	nl_conn_close(&self->c[0]);
	nl_conn_close(&self->c[1]);
	two_transfers(_metadata, self);
	nl_conn_close(&self->c[0]);
	nl_conn_close(&self->c[1]);
	nl_sleep_ms(200);
	EXPECT_TRUE(nl_get_flow(self->fd, &self->c[0], true, &fs));
	EXPECT_FALSE(nl_get_flow(self->fd, &self->c[1], true, &fs));
}

/* Freeze @fd's snapshot, read it into self->v. */
static void view_taken(struct __test_metadata *_metadata,
		       FIXTURE_DATA(pm) *self)
{
	if (self->parsed)
		view_free(&self->v);
	self->parsed = false;
	ASSERT_EQ(0, take_view(self->fd, self->buf, self->cap, 65536,
			       g_def.nr_cpus, &self->v))
		TH_LOG("%s", self->v.why);
	self->parsed = true;
}

TEST_F_TIMEOUT(pm, manual_snapshot, 120)
{
	static const uint16_t per_event[] = {
		NETLAT_REC_TCP_SENDMSG, NETLAT_REC_TCP_PUSH,
		NETLAT_REC_TCP_SKB, NETLAT_REC_TCP_XMIT,
		NETLAT_REC_TCP_ACK, NETLAT_REC_TCP_DEV,
	};
	struct netlat_probes after;
	char *data;
	unsigned int i;
	int attempt;

	data = malloc(BYTES);
	ASSERT_NE(NULL, data);
	memset(data, 0x3c, BYTES);
	for (attempt = 1;; attempt++) {
		flight_packets(_metadata, self);
		ASSERT_EQ(0, nl_conn_open(&self->c[0], g_ns_a, g_ns_b, ADDR_B,
					  0));
		ASSERT_EQ(0, nl_send_all(self->c[0].cli, data, BYTES));
		ASSERT_TRUE(nl_conn_finish(&self->c[0], 60));
		ASSERT_EQ(BYTES, self->c[0].rx_bytes);
		view_taken(_metadata, self);
		ASSERT_EQ(0, nl_probes(self->fd, false, 0, &after));
		if (after.nmissed == self->pr.nmissed || attempt == 3)
			break;
		TH_LOG("attempt %d void (%llu kprobe hits missed): again",
		       attempt, (unsigned long long)(after.nmissed -
						    self->pr.nmissed));
		ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
		nl_conn_close(&self->c[0]);
	}
	free(data);
	EXPECT_EQ((uint32_t)NETLAT_SNAP_MANUAL, self->v.snap->reason);
	EXPECT_EQ((uint32_t)NETLAT_MODE_OVERWRITE, self->v.snap->mode);
	EXPECT_EQ(0u, nl_log_count(&self->v.log, NETLAT_REC_LOST, -1));
	EXPECT_EQ(BYTES + 1ull, covered(&self->v.log, &self->c[0]));
	for (i = 0; i < NL_ARRAY_SIZE(per_event); i++)
		EXPECT_EQ(0u, nl_log_count(&self->v.log, per_event[i], -1))
			TH_LOG("records of type %u at the packet level",
			       per_event[i]);
	TH_LOG("snapshot: %zu packet records, %llu bytes",
	       nl_log_count(&self->v.log, NETLAT_REC_TCP_PKT, -1),
	       (unsigned long long)self->v.snap->bytes);
}

/* Snapshot state within @ms: NETLAT_SNAP_FROZEN as soon as it is. */
static uint32_t snap_state_within(int fd, unsigned int ms)
{
	uint64_t end = nl_mono_ns() + ms * MS;
	struct netlat_snapshot s;

	for (;;) {
		if (snap_ioc(fd, 0, &s))
			return ~0u;
		if (s.state == NETLAT_SNAP_FROZEN || nl_mono_ns() >= end)
			return s.state;
		nl_sleep_ms(20);
	}
}

/* Send @bytes on connection 0, wait for their ACK: TCP's RTT in us. */
static uint32_t acked_exchange(struct __test_metadata *_metadata,
			       FIXTURE_DATA(pm) *self, size_t bytes)
{
	static char chunk[8192];
	size_t done;

	for (done = 0; done < bytes; done += sizeof(chunk))
		EXPECT_EQ(0, nl_send_all(self->c[0].cli, chunk, sizeof(chunk)));
	EXPECT_TRUE(nl_conn_wait_acked(&self->c[0], 30));
	return nl_conn_info(&self->c[0]).tcpi_rtt;
}

/* Packet records of connection 0 in self->v whose xmit>ack is >= @ns. */
static size_t slower_than(FIXTURE_DATA(pm) *self, uint64_t ns)
{
	const struct netlat_rec_tcp_pkt *p;
	const struct netlat_rec_hdr *h;
	size_t n = 0;

	nl_log_for_each(&self->v.log, h)
		if ((p = acked_pkt(h, &self->c[0])) &&
		    p->end_ns - p->xmit_ns >= ns)
			n++;
	return n;
}

TEST_F_TIMEOUT(pm, latency_trigger, 120)
{
	struct netlat_triggers t = {
		.armed = NETLAT_TRIG_LATENCY,
		.latency_ns = 3000 * MS,
		.post_ms = 200,
	};
	const struct netlat_rec_snapshot *sn;
	const struct netlat_rec_tcp_pkt *p;
	const struct netlat_rec_hdr *fired;
	struct netlat_triggers got;
	uint64_t fired0;
	uint32_t rtt_us;

	flight_packets(_metadata, self);
	ASSERT_EQ(0, ack_delay(DELAY_MS));
	ASSERT_EQ(0, nl_conn_open(&self->c[0], g_ns_a, g_ns_b, ADDR_B, 0));

	/* threshold above the delay: nothing fires, though packets were slow */
	ASSERT_EQ(0, trig_set(self->fd, &t));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	fired0 = got.fired;
	rtt_us = acked_exchange(_metadata, self, 64 * 1024);
	EXPECT_LE(DELAY_MS * 1000u, rtt_us) TH_LOG("netem delay not in effect");
	EXPECT_GT(3000000u, rtt_us);
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, snap_state_within(self->fd, 500));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_EQ(fired0, got.fired);
	/* what the rings held: packet records at least the delay, none >= 3 s */
	view_taken(_metadata, self);
	EXPECT_LT(0u, slower_than(self, DELAY_MS * MS));
	EXPECT_EQ(0u, slower_than(self, t.latency_ns));
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));

	/* threshold below the delay: the next ACKed packet fires */
	t.latency_ns = 50 * MS;
	ASSERT_EQ(0, trig_set(self->fd, &t));
	rtt_us = acked_exchange(_metadata, self, 16 * 1024);
	EXPECT_LE(DELAY_MS * 1000u, rtt_us);
	ASSERT_EQ((uint32_t)NETLAT_SNAP_FROZEN, snap_state_within(self->fd, 5000));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_LT(fired0, got.fired);

	view_free(&self->v);
	self->parsed = false;
	{
		ssize_t len = snap_read_all(self->fd, self->buf, self->cap,
					    65536);

		ASSERT_LT(0, len) TH_LOG("read: %s", strerror((int)-len));
		ASSERT_EQ(0, view_parse(&self->v, self->buf, len,
					g_def.nr_cpus)) TH_LOG("%s", self->v.why);
		self->parsed = true;
	}
	sn = self->v.snap;
	EXPECT_EQ((uint32_t)NETLAT_SNAP_TRIGGER, sn->reason);
	EXPECT_EQ((uint32_t)NETLAT_TRIG_LATENCY, sn->trigger);
	EXPECT_EQ(NETLAT_REC_TCP_PKT, sn->trig_type);
	fired = view_trig_rec(&self->v);
	ASSERT_NE(NULL, fired) TH_LOG("record cpu %u seq %llu not in it",
				      sn->trig_cpu,
				      (unsigned long long)sn->trig_seq);
	p = acked_pkt(fired, &self->c[0]);
	ASSERT_NE(NULL, p) TH_LOG("fired on type %u", fired->type);
	/* the ACK crossed the delay: a floor the threshold is under */
	TH_LOG("fired on seq %u: xmit>ack %llu us, tcpi_rtt %u us",
	       p->seq, (unsigned long long)(p->end_ns - p->xmit_ns) / 1000,
	       rtt_us);
	EXPECT_LE(DELAY_MS * MS, p->end_ns - p->xmit_ns);
	EXPECT_GT(3000 * MS, p->end_ns - p->xmit_ns);
	EXPECT_EQ(sn->trig_ts_ns, fired->ts_ns);
}

TEST_HARNESS_MAIN
