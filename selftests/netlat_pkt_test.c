// SPDX-License-Identifier: GPL-2.0
/*
 * The packet level (NETLAT_LEVEL_PACKETS): the kernel follows each sent
 * packet and writes one NETLAT_REC_TCP_PKT when its ACK comes, with
 * per-stage histograms (NETLAT_IOC_HIST). Oracles netlat does not make:
 * the bytes the test sent, the receiver's byte count, the netem delay on
 * the ACKs' path (a physical floor), and RetransSegs of the sender's
 * namespace.
 *
 * hist_equals_records: every ACKed packet's record gives the same sample,
 *	stage by stage and bucket by bucket, as the histograms; the records
 *	cover the sequence space sent (bytes + FIN) exactly once; with a
 *	20 ms netem delay on the receiver's egress, no driver>ack or
 *	xmit>ack is shorter than 20 ms, and the stage points are in order.
 * slow_only: with slow_ns above every packet's time no packet record is
 *	written, yet the histograms count every byte.
 * retrans_segs: under netem loss (one segment per skb from here on) the
 *	retransmitted-segment counters add up to RetransSegs of the two
 *	namespaces.
 * tlp_counted: tail loss probes that retransmit are counted as TLP, as
 *	many as TCPLossProbes, whichever function the loss probe enters.
 * sendmsg_within_round_trip: request/response, idle, then closed: no
 *	sendmsg>xmit longer than the slowest round trip the client measured,
 *	and a FIN without data carries no sendmsg start.
 * ack_numbers_and_stamps: each packet's ACK numbers against the kernel's
 *	sequence numbers, its ACK's receive stamp after a netem delay, and
 *	the TCP timestamps option of both ways against the wire.
 * acks_out_as_on_the_wire: with netlat_config.acks, the pure ACKs each
 *	socket sent are its ACK records, against the wire; each left after
 *	the netem delay on its way.
 * sample_by_sequence: with --sample 16, ping-pong writes: the counters
 *	stay exact (TCPOrigDataSent, the bytes written), the records and the
 *	xmit>ack histogram hold exactly the packets that cross a multiple
 *	of 16 KiB of sequence space, none missed and none more; the
 *	receiving end's records are the same packets, and its counters
 *	every packet's.
 * bad_input: malformed HIST, FLOWS and level configs are -EINVAL.
 * config_all_or_nothing: with each of SET_CONFIG's allocations failed in
 *	turn (fail_function, the debug kernel), the call is -ENOMEM and the
 *	configuration, keys and histograms read back unchanged.
 * flow_counters: the sender's own counters (TCP_INFO) against its flow's
 *	in NETLAT_IOC_FLOWS, live: bytes == tcpi_bytes_acked - 1 (the SYN)
 *	== the bytes sent, segments == tcpi_data_segs_out - tcpi_total_retrans; after the
 *	close the socket is in the closed ring with the FIN counted.
 * flow_retrans: under netem loss, the flow's retransmitted segments ==
 *	tcpi_total_retrans, and the kinds add up.
 * over_256_in_flight: one segment per skb and a 200 ms delay on the ACKs'
 *	path give more than 256 packets in flight (tcpi_snd_cwnd says so);
 *	every packet is still followed, each in a packet of its own;
 * small_budget: the same at the least table budget: what found no slot is
 *	followed in a range and counted (no_mem); the records with
 *	their ranges cover every byte once, and the segments add up.
 * groups_flip: the table's lifetime. The ACK group off with packets in
 *	flight leaves the table (the socket's counters still readable); on
 *	again it empties it, what was in flight counted as not followed:
 *	followed + not followed = TCPOrigDataSent of both namespaces.
 *
 * Topology: namespaces A and B joined by a veth pair (npa0 192.0.2.1 in
 * A, npb0 192.0.2.2 in B); GSO on, so a 64 KiB send is a handful of
 * packets. Needs root, the module, veth and sch_netem; skips otherwise.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include <stddef.h>
#include "netlat_tcp.h"
#include "netlat_wire.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define DEV_A	"npa0"
#define DEV_B	"npb0"
#define MS	1000000ull
#define DELAY_MS 20
#define BYTES	(512u << 10)

#define PKT_GROUPS (NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
		    NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV | \
		    NETLAT_PROBE_TCP_RETRANS)

/* the send stages; the receive stages after them are netlat_rxpkt_test's */
#define TX_STAGES (NETLAT_STAGE_SENDMSG_ACK + 1)

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) pkt_topology(void)
{
	int fd, ret;

	fd = nl_open(0);
	ret = fd < 0 ? -errno : nl_get_info(fd, &g_def);
	if (fd >= 0)
		close(fd);
	if (ret) {
		snprintf(g_skip, sizeof(g_skip), NETLAT_DEVICE_PATH ": %s",
			 strerror(-ret));
		return;
	}
	nl_pair_ns(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B, g_skip,
		   sizeof(g_skip));
}

/* netem on @dev in namespace @ns: @loss_pct loss, @delay_ms delay. */
static int netem(int ns, const char *dev, double loss_pct, uint32_t delay_ms)
{
	int ret = nl_ns_enter(ns);

	if (!ret)
		ret = nlr_netem_full(dev, loss_pct, delay_ms * 1000, 0);
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* A's NIC sends one segment per skb: TSO and GSO off, gso_max_segs 1. */
static int one_segment_per_skb(void)
{
	int ret = nl_ns_enter(g_ns_a);

	if (!ret)
		ret = nlr_no_gso(DEV_A);
	if (!ret)
		ret = nlr_gso_max_segs(DEV_A, 1);
	nl_ns_enter(nl_ns_home);
	return ret;
}

FIXTURE(pkt) {
	int fd;
	struct netlat_probes pr;
	struct nl_log log;
	struct nl_conn conn;
};

FIXTURE_SETUP(pkt)
{
	self->fd = -1;
	self->conn.cli = self->conn.srv = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
				g_def.nr_cpus));
	if (nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0))
		SKIP(longjmp(_metadata->env, 1), "no packet level");
	ASSERT_EQ(0, netem(g_ns_a, DEV_A, 0, 0));
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, 0));
}

FIXTURE_TEARDOWN(pkt)
{
	nl_conn_close(&self->conn);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		EXPECT_EQ(0, nl_set_sample(self->fd, 0));
		EXPECT_EQ(0, nl_set_acks(self->fd, 0));
		EXPECT_EQ(0, nl_set_table_bytes(self->fd,
						NETLAT_TABLE_BYTES_DEFAULT));
		EXPECT_EQ(0, nl_reconfigure(self->fd, g_def.ring_bytes,
					    g_def.watermark, g_def.flush_ms,
					    true));
		close(self->fd);
	}
	nl_log_free(&self->log);
	netem(g_ns_a, DEV_A, 0, 0);
	netem(g_ns_b, DEV_B, 0, 0);
	/* config_all_or_nothing's injection points, if it stopped early */
	if (!access("/sys/kernel/debug/fail_function/inject", W_OK))
		nl_put_str("/sys/kernel/debug/fail_function/inject", "\n", 0);
}

/* A connection, @bytes sent and read, FIN sent and ACKed. */
static void transfer(struct __test_metadata *_metadata,
		     FIXTURE_DATA(pkt) *self, size_t bytes)
{
	char *buf = malloc(bytes);

	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, bytes);
	ASSERT_EQ(0, nl_conn_open(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, bytes));
	free(buf);
	ASSERT_TRUE(nl_conn_finish(&self->conn, 60));
	ASSERT_EQ(bytes, self->conn.rx_bytes);
}

/*
 * RetransSegs of both namespaces: the kernel's counters are per namespace,
 * netlat's cover every socket (B retransmits a SYN-ACK whose ACK A lost).
 */
static long long retrans_segs(void)
{
	long long a = nl_mib(g_ns_a, "snmp", "Tcp", "RetransSegs");
	long long b = nl_mib(g_ns_b, "snmp", "Tcp", "RetransSegs");

	return a < 0 || b < 0 ? -1 : a + b;
}

/*
 * The packet level afresh (empty table, zeroed histograms) with
 * @slow_ns, a transfer of @bytes, then every record into the log. A kprobe
 * hit the kernel skipped in the groups @exact voids a comparison with what
 * the test did: then again, up to three times. RetransSegs of A and B
 * before and after in *@r0, *@r1.
 */
static void measured_transfer(struct __test_metadata *_metadata,
			      FIXTURE_DATA(pkt) *self, size_t bytes,
			      uint64_t slow_ns, uint64_t exact,
			      long long *r0, long long *r1)
{
	int attempt, ret;

	for (attempt = 1;; attempt++) {
		/* the level first, probes off: no events-level record of the
		 * last attempt's closing connection gets into this one */
		ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, slow_ns));
		ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, &self->pr));
		*r0 = retrans_segs();
		transfer(_metadata, self, bytes);
		*r1 = retrans_segs();
		ret = nl_collect_groups(self->fd, &self->log, &self->pr, exact);
		if (!ret || attempt == 3)
			break;
		TH_LOG("attempt %d void (%s): again", attempt, self->log.why);
		nl_conn_close(&self->conn);
		nl_log_clear(&self->log);
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", self->log.why);
}

static bool pkt_of(const struct netlat_rec_hdr *h, const struct nl_conn *c)
{
	const struct netlat_rec_tcp_pkt *p = (const void *)h;

	return h->type == NETLAT_REC_TCP_PKT && h->size >= sizeof(*p) &&
	       nl_flow_is(&p->flow, c);
}

TEST_F(pkt, hist_equals_records)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES], mine[NETLAT_NR_STAGES];
	uint64_t floor_ns = DELAY_MS * MS, covered = 0, acked = 0;
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	unsigned int s, b;
	long long r0, r1;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, DELAY_MS));
	measured_transfer(_metadata, self, BYTES, 0, PKT_GROUPS, &r0, &r1);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	ASSERT_EQ((uint32_t)NETLAT_NR_STAGES, hist.nr_stages);

	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;

		ASSERT_NE(NETLAT_REC_TCP_SENDMSG, h->type);
		ASSERT_NE(NETLAT_REC_TCP_XMIT, h->type);
		ASSERT_NE(NETLAT_REC_TCP_ACK, h->type);
		ASSERT_NE(NETLAT_REC_TCP_DEV, h->type);
		if (!pkt_of(h, &self->conn))
			continue;
		ASSERT_NE(0u, p->flags & NETLAT_PKT_ACKED);
		covered += p->end_seq - p->seq;
		acked++;
		/* in order: queued, sent, qdisc, driver, acknowledged */
		ASSERT_NE(0ull, p->xmit_ns);
		if (p->flags & NETLAT_PKT_SENDMSG)
			ASSERT_LE(p->sendmsg_ns, p->xmit_ns);
		if (p->flags & NETLAT_PKT_QDISC)
			ASSERT_LE(p->xmit_ns, p->qdisc_ns);
		if (p->flags & NETLAT_PKT_DRIVER) {
			ASSERT_LE(p->xmit_ns, p->driver_ns);
			/* the ACK crossed netem's delay after the segment left */
			ASSERT_LE(floor_ns, p->end_ns - p->driver_ns)
				TH_LOG("driver>ack %llu ns < %u ms, seq %u",
				       (unsigned long long)(p->end_ns - p->driver_ns),
				       DELAY_MS, p->seq);
		}
		ASSERT_LE(floor_ns, p->end_ns - p->xmit_ns);
		for (s = 0; s < TX_STAGES; s++) {
			uint64_t from, to, d;

			nl_pkt_points(p, s, &from, &to);
			if (!from || to < from)
				continue;
			d = to - from;
			mine[s].count++;
			mine[s].sum_ns += d;
			if (d > mine[s].max_ns)
				mine[s].max_ns = d;
			mine[s].bucket[nl_hist_bucket(d)]++;
		}
	}
	TH_LOG("%llu packets, %llu bytes of sequence space; kernel: packets %llu bytes %llu segs %llu untracked %llu",
	       (unsigned long long)acked, (unsigned long long)covered,
	       (unsigned long long)hist.packets, (unsigned long long)hist.bytes,
	       (unsigned long long)hist.segs,
	       (unsigned long long)hist.untracked);
	/* every byte sent and the FIN, each in exactly one packet */
	EXPECT_EQ(BYTES + 1ull, covered);
	EXPECT_EQ(0ull, hist.untracked);
	EXPECT_EQ(0ull, hist.merged);
	EXPECT_EQ(acked, hist.packets);
	EXPECT_EQ(covered, hist.bytes);
	for (s = 0; s < TX_STAGES; s++) {
		EXPECT_EQ(mine[s].count, st[s].count) TH_LOG("stage %u", s);
		EXPECT_EQ(mine[s].sum_ns, st[s].sum_ns) TH_LOG("stage %u", s);
		EXPECT_EQ(mine[s].max_ns, st[s].max_ns) TH_LOG("stage %u", s);
		for (b = 0; b < NETLAT_HIST_BUCKETS; b++)
			EXPECT_EQ(mine[s].bucket[b], st[s].bucket[b])
				TH_LOG("stage %u bucket %u", s, b);
	}
	/* the stages the floor holds for, never below it */
	for (b = 0; b < nl_hist_bucket(floor_ns); b++) {
		EXPECT_EQ(0ull, st[NETLAT_STAGE_DRIVER_ACK].bucket[b]);
		EXPECT_EQ(0ull, st[NETLAT_STAGE_XMIT_ACK].bucket[b]);
	}
	EXPECT_LT(0ull, st[NETLAT_STAGE_DRIVER_ACK].count);
	EXPECT_LT(0ull, st[NETLAT_STAGE_SENDMSG_XMIT].count);
}

/*
 * ACKs that reach a closing socket end their packets too: the transfer
 * shuts down right after its last write and netem holds each ACK 20 ms,
 * so they come in FIN_WAIT1 (tcp_rcv_state_process, not tcp:tcp_probe),
 * a site the receive group hooks as well, on here. Every byte and the
 * FIN in exactly one acknowledged packet, their segments those A's
 * TCPOrigDataSent counted, none acknowledged under the delay.
 */
TEST_F(pkt, acked_while_closing)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	const uint64_t groups = PKT_GROUPS | NETLAT_PROBE_RX;
	uint64_t covered = 0, segs = 0;
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	long long o0, o1;

	nl_need_groups(self->fd, &self->pr, groups);
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, DELAY_MS));
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	o0 = nl_mib(g_ns_a, "netstat", "TcpExt", "TCPOrigDataSent");
	transfer(_metadata, self, BYTES);
	o1 = nl_mib(g_ns_a, "netstat", "TcpExt", "TCPOrigDataSent");
	ASSERT_LE(0, o0);
	ASSERT_EQ(0, nl_collect_groups(self->fd, &self->log, &self->pr, groups))
		TH_LOG("%s", self->log.why);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;

		if (!pkt_of(h, &self->conn))
			continue;
		ASSERT_NE(0u, p->flags & NETLAT_PKT_ACKED);
		covered += p->end_seq - p->seq;
		segs += p->segs;
		ASSERT_LE(DELAY_MS * MS, p->end_ns - p->xmit_ns)
			TH_LOG("xmit>ack of seq %u", p->seq);
	}
	TH_LOG("TCPOrigDataSent +%lld; records: %llu segments, %llu bytes; kernel: packets %llu untracked %llu closed %llu",
	       o1 - o0, (unsigned long long)segs, (unsigned long long)covered,
	       (unsigned long long)hist.packets,
	       (unsigned long long)hist.untracked,
	       (unsigned long long)hist.closed);
	EXPECT_EQ(BYTES + 1ull, covered);
	EXPECT_EQ((unsigned long long)(o1 - o0), segs);
	EXPECT_EQ(0ull, hist.untracked);
	/* and B's arrivals, each followed, at tcp:tcp_probe */
	EXPECT_EQ((uint64_t)BYTES, hist.rx_bytes);
	EXPECT_EQ(0ull, hist.rx_untracked);
}

TEST_F(pkt, slow_only)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	uint64_t n = 0;
	long long r0, r1;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	/* no packet's xmit>ack comes near 60 s */
	measured_transfer(_metadata, self, BYTES / 4, 60000 * MS, PKT_GROUPS,
			  &r0, &r1);
	nl_log_for_each(&self->log, h)
		n += pkt_of(h, &self->conn);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	EXPECT_EQ(0ull, n);
	EXPECT_EQ(0ull, hist.untracked);
	EXPECT_EQ(BYTES / 4 + 1ull, hist.bytes);
	EXPECT_EQ(hist.packets, st[NETLAT_STAGE_XMIT_ACK].count);
}

/* Read exactly @len bytes of @fd; false on EOF or error. */
static bool read_exactly(int fd, char *buf, size_t len)
{
	while (len) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= n;
	}
	return true;
}

static int tcp_state(int fd)
{
	return nl_tcp_info_of(fd).b.tcpi_state;
}

/*
 * A request/response connection, idle for a while, then closed by both
 * ends (a pooled client's life). Oracle: the test's own round trips. A
 * request's or its reply's sendmsg>xmit lies inside the round trip the
 * client measured around it, so no packet's is longer than the slowest
 * round trip; the FINs, queued by shutdown() after the idle time, were
 * queued by no sendmsg and carry none (the socket's last sendmsg began
 * IDLE_MS before them).
 */
#define ROUNDS	16
#define REQ	100
#define REPLY	300
#define IDLE_MS	500
TEST_F(pkt, sendmsg_within_round_trip)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	uint64_t rtt_max = 0, with_sendmsg = 0, fins = 0;
	struct netlat_hist hist;
	const struct netlat_rec_hdr *h;
	char buf[REPLY];
	unsigned int i;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, &self->pr));
	ASSERT_EQ(0, nl_conn_connect(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < ROUNDS; i++) {
		uint64_t t0 = nl_mono_ns(), d;

		ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, REQ));
		ASSERT_TRUE(read_exactly(self->conn.srv, buf, REQ));
		ASSERT_EQ(0, nl_send_all(self->conn.srv, buf, REPLY));
		ASSERT_TRUE(read_exactly(self->conn.cli, buf, REPLY));
		d = nl_mono_ns() - t0;
		if (d > rtt_max)
			rtt_max = d;
		nl_sleep_ms(10);
	}
	nl_sleep_ms(IDLE_MS);
	ASSERT_EQ(0, shutdown(self->conn.cli, SHUT_WR));
	ASSERT_FALSE(read_exactly(self->conn.srv, buf, 1));
	ASSERT_EQ(0, shutdown(self->conn.srv, SHUT_WR));
	ASSERT_FALSE(read_exactly(self->conn.cli, buf, 1));
	/*
	 * both FINs ACKed: the server closed, and the client's socket too
	 * (TIME_WAIT is a timewait sock of its own; the fd's reads CLOSE)
	 */
	for (i = 0; i < 500 && (tcp_state(self->conn.cli) != TCP_CLOSE ||
				tcp_state(self->conn.srv) != TCP_CLOSE); i++)
		nl_sleep_ms(10);
	ASSERT_EQ(TCP_CLOSE, tcp_state(self->conn.cli));
	ASSERT_EQ(TCP_CLOSE, tcp_state(self->conn.srv));
	ASSERT_EQ(0, nl_collect_groups(self->fd, &self->log, &self->pr,
				       PKT_GROUPS)) TH_LOG("%s", self->log.why);

	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;

		if (h->type != NETLAT_REC_TCP_PKT || h->size < sizeof(*p) ||
		    !nl_flow_of(&p->flow, &self->conn) ||
		    !(p->flags & NETLAT_PKT_ACKED))
			continue;
		if (p->end_seq - p->seq == 1) {
			fins++;
			EXPECT_EQ(0u, p->flags & NETLAT_PKT_SENDMSG)
				TH_LOG("a FIN's sendmsg>xmit: %llu ns",
				       (unsigned long long)(p->xmit_ns - p->sendmsg_ns));
			continue;
		}
		if (!(p->flags & NETLAT_PKT_SENDMSG))
			continue;
		with_sendmsg++;
		EXPECT_LE(p->xmit_ns - p->sendmsg_ns, rtt_max)
			TH_LOG("seq %u: sendmsg>xmit %llu ns, slowest round trip %llu ns",
			       p->seq,
			       (unsigned long long)(p->xmit_ns - p->sendmsg_ns),
			       (unsigned long long)rtt_max);
	}
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	TH_LOG("slowest round trip %llu ns; sendmsg>xmit: %llu samples, max %llu ns",
	       (unsigned long long)rtt_max,
	       (unsigned long long)st[NETLAT_STAGE_SENDMSG_XMIT].count,
	       (unsigned long long)st[NETLAT_STAGE_SENDMSG_XMIT].max_ns);
	/* every request and reply is one packet of its own sendmsg */
	EXPECT_EQ(2ull * ROUNDS, with_sendmsg);
	EXPECT_EQ(2ull, fins);
	EXPECT_EQ(2ull * ROUNDS, st[NETLAT_STAGE_SENDMSG_XMIT].count);
	EXPECT_GE(rtt_max, st[NETLAT_STAGE_SENDMSG_XMIT].max_ns);
}

#define WIRE_SEGS	512

/* The first data segment from port @sport at @seq on the wire. */
static const struct nl_wire_seg *wire_data(const struct nl_wire_seg *s,
					   int n, uint16_t sport, uint32_t seq)
{
	for (int i = 0; i < n; i++)
		if (s[i].sport == sport && s[i].seq == seq && s[i].payload)
			return &s[i];
	return NULL;
}

/* The first segment from port @sport that acknowledges up to @ack. */
static const struct nl_wire_seg *wire_ack(const struct nl_wire_seg *s,
					  int n, uint16_t sport, uint32_t ack)
{
	for (int i = 0; i < n; i++)
		if (s[i].sport == sport && (s[i].flags & 0x10) &&
		    s[i].ack_seq == ack)
			return &s[i];
	return NULL;
}

/*
 * The ACK of each packet, for joining two hosts' captures: a ping-pong of
 * ROUNDS requests and replies, one in flight at a time, B's side delayed
 * DELAY_MS by netem. Against the kernel's own sequence numbers (repair
 * mode) and the bytes the test sent:
 *  - request i starts at A's write_seq less (ROUNDS - i) requests, its
 *    first transmission acknowledges the i replies before it, and the
 *    ACK that ended it acknowledges exactly it (B's reply, or B's ACK);
 *  - reply i likewise, acknowledging requests 0..i.
 * The ACK's receive stamp (the rx group on: the kernel stamps arrivals)
 * comes after the packet left the driver (for A's, DELAY_MS after: the
 * ACK crossed netem) and before TCP processed the ACK.
 * The TCP timestamps option against the wire (an AF_PACKET capture on
 * A's device): each sent packet's TSval is its segment's, its ACK's
 * TSecr and TSval those of the first segment back carrying its ACK
 * number; each received packet's TSval and TSecr its segment's.
 */
TEST_F(pkt, ack_numbers_and_stamps)
{
	const uint64_t groups = PKT_GROUPS | NETLAT_PROBE_RX;
	uint64_t floor_ns = DELAY_MS * MS;
	unsigned int seen[2] = { 0, 0 }, rx_seen = 0;
	static struct nl_wire_seg segs[WIRE_SEGS];
	const struct netlat_rec_hdr *h;
	int64_t a_snd, a_rcv;
	int wire, nwire;
	char buf[REPLY];
	unsigned int i;

	nl_need_groups(self->fd, &self->pr, groups);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	/* net_enable_timestamp() turns the stamps on from a work item */
	nl_sleep_ms(300);
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, DELAY_MS));
	wire = nl_wire_open(g_ns_a, DEV_A);
	ASSERT_LE(0, wire) TH_LOG("AF_PACKET: %s", strerror(-wire));
	ASSERT_EQ(0, nl_conn_connect(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, REQ));
		ASSERT_TRUE(read_exactly(self->conn.srv, buf, REQ));
		ASSERT_EQ(0, nl_send_all(self->conn.srv, buf, REPLY));
		ASSERT_TRUE(read_exactly(self->conn.cli, buf, REPLY));
	}
	a_snd = nl_queue_seq(self->conn.cli, TCP_SEND_QUEUE);
	a_rcv = nl_queue_seq(self->conn.cli, TCP_RECV_QUEUE);
	ASSERT_LE(0, a_snd);
	ASSERT_LE(0, a_rcv);
	/* the last reply's ACK: A's FIN */
	ASSERT_EQ(0, shutdown(self->conn.cli, SHUT_WR));
	ASSERT_FALSE(read_exactly(self->conn.srv, buf, 1));
	for (i = 0; i < 500 && tcp_state(self->conn.cli) != TCP_FIN_WAIT2; i++)
		nl_sleep_ms(10);
	ASSERT_EQ(TCP_FIN_WAIT2, tcp_state(self->conn.cli));
	ASSERT_EQ(0, nl_collect_groups(self->fd, &self->log, &self->pr,
				       groups)) TH_LOG("%s", self->log.why);
	nwire = nl_wire_read(wire, self->conn.sport, self->conn.dport, segs,
			     WIRE_SEGS);
	close(wire);
	ASSERT_LT(0, nwire);

	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *r = (const void *)h;
		const struct nl_wire_seg *ws;

		if (h->type != NETLAT_REC_RX_PKT || h->size < sizeof(*r) ||
		    r->proto != NETLAT_RX_TCP || !nl_flow_of(&r->flow, &self->conn))
			continue;
		/* the peer sent it: its port is the socket's remote one */
		ws = wire_data(segs, nwire, r->flow.dport, r->seq);
		ASSERT_NE(NULL, ws) TH_LOG("no segment at %u", r->seq);
		ASSERT_TRUE(ws->has_ts);
		EXPECT_EQ(ws->tsval, r->tsval) TH_LOG("received %u", r->seq);
		EXPECT_EQ(ws->tsecr, r->tsecr) TH_LOG("received %u", r->seq);
		rx_seen++;
	}
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;
		bool req = nl_flow_is(&p->flow, &self->conn);
		uint32_t len = req ? REQ : REPLY, seq0, ack0, k;
		const struct nl_wire_seg *ws;

		if (h->type != NETLAT_REC_TCP_PKT || h->size < sizeof(*p) ||
		    !nl_flow_of(&p->flow, &self->conn) ||
		    p->end_seq - p->seq != len)
			continue;
		ASSERT_NE(0u, p->flags & NETLAT_PKT_ACKED);
		ASSERT_NE(0u, p->flags & NETLAT_PKT_DRIVER);
		/* which round, by the kernel's own sequence numbers */
		seq0 = (uint32_t)(req ? a_snd : a_rcv) - ROUNDS * len;
		ack0 = (uint32_t)(req ? a_rcv - ROUNDS * REPLY :
				  a_snd - (ROUNDS - 1) * REQ);
		k = (p->seq - seq0) / len;
		ASSERT_EQ(0u, (p->seq - seq0) % len) TH_LOG("seq %u", p->seq);
		ASSERT_GT(ROUNDS, k) TH_LOG("seq %u", p->seq);
		EXPECT_EQ(ack0 + k * (req ? REPLY : REQ), p->sent_ack_seq)
			TH_LOG("%s %u", req ? "request" : "reply", k);
		EXPECT_EQ(p->end_seq, p->ack_seq)
			TH_LOG("%s %u", req ? "request" : "reply", k);
		ASSERT_NE(0ull, p->ack_rx_ns);
		EXPECT_LE(p->driver_ns + (req ? floor_ns : 0), p->ack_rx_ns)
			TH_LOG("%s %u: driver %llu, ACK received %llu", req ?
			       "request" : "reply", k,
			       (unsigned long long)p->driver_ns,
			       (unsigned long long)p->ack_rx_ns);
		EXPECT_LE(p->ack_rx_ns, p->end_ns);
		ws = wire_data(segs, nwire, p->flow.sport, p->seq);
		ASSERT_NE(NULL, ws) TH_LOG("no segment at %u", p->seq);
		ASSERT_TRUE(ws->has_ts);
		EXPECT_EQ(ws->tsval, p->tsval) TH_LOG("sent %u", p->seq);
		ws = wire_ack(segs, nwire, p->flow.dport, p->ack_seq);
		ASSERT_NE(NULL, ws) TH_LOG("no ACK of %u", p->ack_seq);
		EXPECT_EQ(ws->tsecr, p->ack_tsecr) TH_LOG("ACK of %u", p->seq);
		EXPECT_EQ(ws->tsval, p->ack_tsval) TH_LOG("ACK of %u", p->seq);
		seen[req]++;
	}
	TH_LOG("%u requests and %u replies with their ACK; %u received "
	       "packets; %d segments on the wire", seen[1], seen[0], rx_seen,
	       nwire);
	EXPECT_EQ(ROUNDS, seen[1]);
	EXPECT_EQ(ROUNDS, seen[0]);
	EXPECT_EQ(2 * ROUNDS, rx_seen);
}

/* A pure ACK as the wire or a record gives it, to compare as sets. */
struct ack_key {
	uint32_t ack_seq, tsval, tsecr;
	uint16_t window, sport;
};

static int ack_key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ack_key));
}

/* Whether @a is its socket's first ACK record of its number. */
static bool first_ack_out(struct nl_log *log,
			  const struct netlat_rec_tcp_ack_out *a)
{
	const struct netlat_rec_hdr *h;

	nl_log_for_each(log, h) {
		const struct netlat_rec_tcp_ack_out *o = (const void *)h;

		if (h->type == NETLAT_REC_TCP_ACK_OUT && o != a &&
		    o->ack_seq == a->ack_seq &&
		    o->flow.cookie == a->flow.cookie &&
		    h->ts_ns < a->hdr.ts_ns)
			return false;
	}
	return true;
}

/*
 * netlat_config.acks: a bulk transfer from A to B, B's egress delayed
 * DELAY_MS by netem (a qdisc: its ACKs' driver point is
 * net_dev_start_xmit). Against the wire (AF_PACKET on A's device): the
 * ACK records of both sockets are exactly the pure ACKs each sent (the
 * acknowledgment number, both TCP timestamps and the window of each).
 * Physical floors, on the one clock: each of B's ACKs left its driver at
 * least DELAY_MS after A's driver sent the packet it acknowledges, and
 * the first ACK of each number arrived at A (ack_rx_ns) after it left.
 */
TEST_F(pkt, acks_out_as_on_the_wire)
{
	const uint64_t groups = PKT_GROUPS | NETLAT_PROBE_RX;
	static struct nl_wire_seg segs[WIRE_SEGS * 8];
	static struct ack_key wire_keys[WIRE_SEGS * 8], rec_keys[WIRE_SEGS * 8];
	unsigned int nw = 0, nr = 0, floors = 0, firsts = 0, i;
	const struct netlat_rec_hdr *h, *h2;
	struct netlat_info info;
	int wire, nwire;

	nl_need_groups(self->fd, &self->pr, groups);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_set_acks(self->fd, 1));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	ASSERT_EQ(1u, info.acks);
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	nl_sleep_ms(300);
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, DELAY_MS));
	wire = nl_wire_open(g_ns_a, DEV_A);
	ASSERT_LE(0, wire) TH_LOG("AF_PACKET: %s", strerror(-wire));
	transfer(_metadata, self, 256u << 10);
	ASSERT_EQ(0, nl_collect_groups(self->fd, &self->log, &self->pr,
				       groups)) TH_LOG("%s", self->log.why);
	nwire = nl_wire_read(wire, self->conn.sport, self->conn.dport, segs,
			     WIRE_SEGS * 8);
	close(wire);
	ASSERT_LT(0, nwire);
	ASSERT_GT(WIRE_SEGS * 8, nwire);

	for (i = 0; i < (unsigned int)nwire; i++) {
		const struct nl_wire_seg *s = &segs[i];

		if (!(s->flags & 0x10) || (s->flags & 0x07) || s->payload)
			continue;
		wire_keys[nw++] = (struct ack_key){ s->ack_seq, s->tsval,
			s->tsecr, s->window, s->sport };
	}
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_ack_out *a = (const void *)h;

		if (h->type != NETLAT_REC_TCP_ACK_OUT || h->size < sizeof(*a) ||
		    !nl_flow_of(&a->flow, &self->conn))
			continue;
		ASSERT_GT(WIRE_SEGS * 8, nr);
		rec_keys[nr++] = (struct ack_key){ a->ack_seq, a->tsval,
			a->tsecr, a->window, a->flow.sport };
		if (a->flow.sport != self->conn.dport)
			continue;
		/* B's ACK of A's data: the packet it acknowledges */
		nl_log_for_each(&self->log, h2) {
			const struct netlat_rec_tcp_pkt *p = (const void *)h2;

			if (!pkt_of(h2, &self->conn) ||
			    !(p->flags & NETLAT_PKT_DRIVER) ||
			    (int32_t)(a->ack_seq - p->seq) <= 0 ||
			    (int32_t)(a->ack_seq - p->end_seq) > 0)
				continue;
			EXPECT_LE(p->driver_ns + DELAY_MS * MS, h->ts_ns)
				TH_LOG("ACK %u of packet %u", a->ack_seq, p->seq);
			floors++;
			/* a window update repeats the number, later */
			if (p->ack_seq == a->ack_seq && p->ack_rx_ns &&
			    first_ack_out(&self->log, a)) {
				EXPECT_LE(h->ts_ns, p->ack_rx_ns);
				firsts++;
			}
		}
	}
	TH_LOG("%u pure ACKs on the wire, %u records; %u ACKs after their "
	       "packet + %d ms, %u before their arrival", nw, nr, floors,
	       DELAY_MS, firsts);
	ASSERT_LT(0u, nw);
	EXPECT_EQ(nw, nr);
	qsort(wire_keys, nw, sizeof(wire_keys[0]), ack_key_cmp);
	qsort(rec_keys, nr, sizeof(rec_keys[0]), ack_key_cmp);
	for (i = 0; i < nw && i < nr; i++)
		EXPECT_EQ(0, ack_key_cmp(&wire_keys[i], &rec_keys[i]))
			TH_LOG("%u: wire ack %u tsval %u from %u, record ack %u "
			       "tsval %u from %u", i, wire_keys[i].ack_seq,
			       wire_keys[i].tsval, wire_keys[i].sport,
			       rec_keys[i].ack_seq, rec_keys[i].tsval,
			       rec_keys[i].sport);
	EXPECT_LT(0u, floors);
	EXPECT_LT(0u, firsts);
}

/*
 * Sampling by sequence space: 16 KiB strides. Each request of the client
 * is a packet of its own (the server's one-byte reply ACKs it before the
 * next), so the client's packets are REQS x SREQ bytes in a row, then its
 * FIN; the server's are one byte each.
 */
#define SAMPLE		16
#define SAMPLE_SHIFT	14	/* log2(SAMPLE x NETLAT_SAMPLE_UNIT) */
#define SREQS		200
#define SREQ		1000
TEST_F(pkt, sample_by_sequence)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	uint32_t cli_seq[64], srv_seq[64], base = 0;
	uint64_t recs = 0, cli_recs = 0, rx_recs = 0, srv_recs = 0;
	bool matched = false, rx = self->pr.available & NETLAT_PROBE_RX;
	uint64_t groups = PKT_GROUPS | (rx ? NETLAT_PROBE_RX : 0);
	long long d0, d1 = 0;
	const struct netlat_rec_hdr *h;
	struct netlat_flow_stats fs;
	struct netlat_info info;
	struct netlat_hist hist;
	char buf[SREQ], why[256];
	unsigned int i;

	_Static_assert(SAMPLE * NETLAT_SAMPLE_UNIT == 1u << SAMPLE_SHIFT,
		       "SAMPLE_SHIFT");
	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_set_sample(self->fd, SAMPLE));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	ASSERT_EQ((uint32_t)SAMPLE, info.sample);
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	d0 = nl_orig_data_sent(g_ns_a, g_ns_b);
	ASSERT_LE(0, d0);
	ASSERT_EQ(0, nl_conn_connect(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	memset(buf, 0x6b, sizeof(buf));
	for (i = 0; i < SREQS; i++) {
		ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, SREQ));
		ASSERT_TRUE(read_exactly(self->conn.srv, buf, SREQ));
		ASSERT_EQ(0, nl_send_all(self->conn.srv, buf, 1));
		ASSERT_TRUE(read_exactly(self->conn.cli, buf, 1));
	}
	ASSERT_EQ(0, shutdown(self->conn.cli, SHUT_WR));
	ASSERT_FALSE(read_exactly(self->conn.srv, buf, 1));
	ASSERT_EQ(0, shutdown(self->conn.srv, SHUT_WR));
	ASSERT_FALSE(read_exactly(self->conn.cli, buf, 1));
	for (i = 0; i < 50; i++) {
		d1 = nl_orig_data_sent(g_ns_a, g_ns_b);
		ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
		if (hist.packets == (unsigned long long)(d1 - d0))
			break;
		nl_sleep_ms(100);
	}
	/* the client's counters (its socket may be gone: then closed) */
	ASSERT_TRUE(nl_get_flow(self->fd, &self->conn, false, &fs) ||
		    nl_get_flow(self->fd, &self->conn, true, &fs));
	ASSERT_EQ(0, nl_collect_groups(self->fd, &self->log, &self->pr,
				       groups)) TH_LOG("%s", self->log.why);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;
		const struct netlat_rec_rx_pkt *q = (const void *)h;

		if (h->type == NETLAT_REC_RX_PKT && h->size >= sizeof(*q) &&
		    nl_flow_of(&q->flow, &self->conn)) {
			rx_recs++;
			EXPECT_NE(0u, ((q->seq - 1) ^ (q->end_seq - 1)) >> SAMPLE_SHIFT)
				TH_LOG("received [%u, %u) crosses no multiple of %u",
				       q->seq, q->end_seq, 1u << SAMPLE_SHIFT);
			/* the server's socket reads the client's stream */
			if (q->flow.sport != self->conn.sport &&
			    srv_recs < NL_ARRAY_SIZE(srv_seq))
				srv_seq[srv_recs++] = q->seq;
			continue;
		}
		if (h->type != NETLAT_REC_TCP_PKT || h->size < sizeof(*p) ||
		    !nl_flow_of(&p->flow, &self->conn))
			continue;
		recs++;
		/* a joined packet holds a byte at a multiple of the stride */
		EXPECT_NE(0u, ((p->seq - 1) ^ (p->end_seq - 1)) >> SAMPLE_SHIFT)
			TH_LOG("record [%u, %u) crosses no multiple of %u",
			       p->seq, p->end_seq, 1u << SAMPLE_SHIFT);
		EXPECT_NE(0u, p->flags & NETLAT_PKT_ACKED);
		if (p->flow.sport == self->conn.sport &&
		    cli_recs < NL_ARRAY_SIZE(cli_seq))
			cli_seq[cli_recs++] = p->seq;
	}
	ASSERT_LT(0ull, cli_recs);
	/*
	 * The client's packets are [base + i x SREQ, + SREQ), then its FIN;
	 * base, its first byte, is one of SREQS + 1 values that put the
	 * first record's seq on a packet's start. For one of them the
	 * packets that hold a multiple of the stride must be exactly those
	 * recorded: none missed, none more.
	 */
	for (i = 0; i <= SREQS && !matched; i++) {
		uint64_t want = 0, found = 0;
		unsigned int j, r;

		base = cli_seq[0] - i * SREQ;
		for (j = 0; j <= SREQS; j++) {
			uint32_t a = base + j * SREQ, b = a + (j < SREQS ? SREQ : 1);

			if (!(((a - 1) ^ (b - 1)) >> SAMPLE_SHIFT))
				continue;
			want++;
			for (r = 0; r < cli_recs; r++)
				found += cli_seq[r] == a;
		}
		matched = want == cli_recs && found == cli_recs;
	}
	TH_LOG("TCPOrigDataSent +%lld; packets %llu (unsampled %llu), bytes %llu; records %llu (client %llu, its stream from %u: %s); xmit>ack samples %llu",
	       d1 - d0, (unsigned long long)hist.packets,
	       (unsigned long long)hist.unsampled,
	       (unsigned long long)hist.bytes, (unsigned long long)recs,
	       (unsigned long long)cli_recs, base,
		       matched ? "the packets that cross a stride" : "no start fits",
	       (unsigned long long)st[NETLAT_STAGE_XMIT_ACK].count);
	EXPECT_TRUE(matched);
	/* the counters are every packet's */
	EXPECT_EQ((unsigned long long)(d1 - d0), hist.packets);
	EXPECT_EQ(2ull * SREQS + 2, hist.packets);
	EXPECT_EQ((unsigned long long)SREQS * (SREQ + 1) + 2, hist.bytes);
	EXPECT_EQ(0ull, hist.untracked);
	EXPECT_EQ((unsigned long long)SREQS * SREQ + 1, fs.bytes);
	/* the joined ones, and only they, have records and stage samples */
	EXPECT_EQ(hist.packets - hist.unsampled, recs);
	EXPECT_EQ(recs, st[NETLAT_STAGE_XMIT_ACK].count);
	/*
	 * The receiving end picks the same bytes: each request its own skb
	 * (the reply comes first), the server's records are the client's,
	 * seq for seq. Received, every packet is counted: the requests and
	 * the replies, their bytes (a FIN has none).
	 */
	if (rx) {
		unsigned int r, q, both = 0;

		for (r = 0; r < cli_recs; r++)
			for (q = 0; q < srv_recs; q++)
				both += cli_seq[r] == srv_seq[q];
		TH_LOG("received: packets %llu (unsampled %llu), bytes %llu; records %llu (server %llu, %u at the client's seqs)",
		       (unsigned long long)hist.rx_packets,
		       (unsigned long long)hist.rx_unsampled,
		       (unsigned long long)hist.rx_bytes,
		       (unsigned long long)rx_recs,
		       (unsigned long long)srv_recs, both);
		EXPECT_EQ(2ull * SREQS, hist.rx_packets);
		EXPECT_EQ((unsigned long long)SREQS * (SREQ + 1), hist.rx_bytes);
		EXPECT_EQ(hist.rx_packets - hist.rx_unsampled, rx_recs);
		EXPECT_EQ(cli_recs, srv_recs);
		EXPECT_EQ(cli_recs, (uint64_t)both);
	}
	/* 200,001 bytes with the FIN: 12 or 13 multiples of 16 KiB */
	EXPECT_LE((SREQS * SREQ + 1ull) >> SAMPLE_SHIFT, cli_recs);
	EXPECT_GE(((SREQS * SREQ + 1ull) >> SAMPLE_SHIFT) + 1, cli_recs);
	EXPECT_EQ(0, nl_flows_add_up(self->fd, &hist, why, sizeof(why)))
		TH_LOG("%s", why);
}

/*
 * A packet sampling leaves out is counted when it is first sent, as
 * TCPOrigDataSent counts it: with every segment of A dropped (netem, 100%
 * loss) and the socket then reset, no packet is ever ACKed, so the
 * packets counted are exactly the ones sampling left out, and the joined
 * ones end closed. Together they are TCPOrigDataSent. A 2 KiB stride
 * over 1,448-byte segments (one per skb) leaves some of each kind.
 */
TEST_F(pkt, sampled_counted_when_sent)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	static char buf[64 << 10];
	struct netlat_hist hist;
	long long d0, d1 = 0;
	unsigned int i;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, one_segment_per_skb());
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_set_sample(self->fd, 2));
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, &self->pr));
	d0 = nl_orig_data_sent(g_ns_a, g_ns_b);
	ASSERT_LE(0, d0);
	ASSERT_EQ(0, nl_conn_connect(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, netem(g_ns_a, DEV_A, 100.0, 0));
	/* what the send buffer takes: nothing drains it */
	ASSERT_LT(0, send(self->conn.cli, buf, sizeof(buf), MSG_DONTWAIT));
	nl_sleep_ms(500);
	ASSERT_EQ(0, setsockopt(self->conn.cli, SOL_SOCKET, SO_LINGER, &lg,
				sizeof(lg)));
	close(self->conn.cli);
	self->conn.cli = -1;
	for (i = 0; i < 50; i++) {
		d1 = nl_orig_data_sent(g_ns_a, g_ns_b);
		ASSERT_EQ(0, nl_get_hist(self->fd, &hist, NULL));
		if (hist.packets + hist.closed == (unsigned long long)(d1 - d0))
			break;
		nl_sleep_ms(100);
	}
	TH_LOG("TCPOrigDataSent +%lld; packets %llu (unsampled %llu), closed %llu, not followed %llu",
	       d1 - d0, (unsigned long long)hist.packets,
	       (unsigned long long)hist.unsampled,
	       (unsigned long long)hist.closed,
	       (unsigned long long)hist.untracked);
	EXPECT_EQ((unsigned long long)(d1 - d0), hist.packets + hist.closed);
	EXPECT_EQ(hist.unsampled, hist.packets);
	EXPECT_LT(0ull, hist.unsampled);
	EXPECT_LT(0ull, hist.closed);
	EXPECT_EQ(0ull, hist.untracked);
	EXPECT_EQ(0ull, hist.merged);
}

/*
 * A hook that gives a level nothing is not armed there (a hit costs even
 * when its handler returns at once): the packet level has a kprobe on
 * sendmsg's entry instead of the event level's kretprobe, no push or skb
 * hooks, no transmit hook (net_dev_queue, a tracepoint, begins its
 * packets) and no tcp_ack hook (tcp:tcp_probe ends them, and a kprobe on
 * tcp_rcv_state_process for the states but ESTABLISHED), no tcp_queue_rcv
 * hook (a segment in order at its arrival is queued then). The kernel's
 * own list of kprobes is the oracle.
 */
TEST_F(pkt, hooks_armed_per_level)
{
	static const struct {
		const char *sym;
		char type;
		int events, packets;
	} want[] = {
		{ "tcp_sendmsg_locked", 'r', 1, 0 },
		{ "tcp_sendmsg_locked", 'k', 0, 1 },
		{ "tcp_push", 'k', 1, 0 },
		{ "tcp_skb_entail", 'k', 1, 0 },
		/* the packet level begins a packet at net_dev_queue */
		{ "__tcp_transmit_skb", 'k', 1, 0 },
		/* the packet level's ACKs: tcp:tcp_probe and this */
		{ "tcp_ack", 'k', 1, 0 },
		{ "tcp_rcv_state_process", 'k', 0, 1 },
		/* the receive group's arrivals: tcp:tcp_probe and that */
		{ "tcp_v4_do_rcv", 'k', 1, 0 },
		{ "tcp_v6_do_rcv", 'k', 1, 0 },
		/* a segment in order is queued at its arrival */
		{ "tcp_queue_rcv", 'k', 1, 0 },
	};
	unsigned int i, round;

	if (nl_kprobe_armed("__tcp_transmit_skb", 'k') < 0)
		SKIP(return, "no /sys/kernel/debug/kprobes/list with netlat's kprobes");
	nl_need_groups(self->fd, &self->pr, PKT_GROUPS | NETLAT_PROBE_TCP_PUSH |
		       NETLAT_PROBE_TCP_SKB | NETLAT_PROBE_RX);
	/* there and back: the change of level switches them both ways */
	for (round = 0; round < 3; round++) {
		bool pkts = round == 1;

		ASSERT_EQ(0, nl_set_level(self->fd, pkts ? NETLAT_LEVEL_PACKETS :
					  NETLAT_LEVEL_EVENTS, 0));
		for (i = 0; i < NL_ARRAY_SIZE(want); i++) {
			int armed = nl_kprobe_armed(want[i].sym, want[i].type);

			EXPECT_EQ(pkts ? want[i].packets : want[i].events, armed)
				TH_LOG("%c %s at level %d", want[i].type,
				       want[i].sym, pkts);
		}
	}
	/* groups off: nothing of them armed at either level */
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	for (i = 0; i < NL_ARRAY_SIZE(want); i++) {
		const char *sym = want[i].sym;

		EXPECT_EQ(0, nl_kprobe_armed(sym, want[i].type))
			TH_LOG("%c %s with its group off", want[i].type, sym);
	}
}

/* NETLAT_IOC_HOOKS into a fresh array: how many, or -errno. */
static int hooks_get(int fd, struct netlat_hook **out)
{
	struct netlat_hooks a;
	int ret;

	memset(&a, 0, sizeof(a));
	ret = nl_ioctl(fd, NETLAT_IOC_HOOKS, &a, sizeof(a));
	if (ret)
		return ret;
	*out = calloc(a.nr, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	a.entry_size = sizeof(**out);
	a.entries = (uintptr_t)*out;
	ret = nl_ioctl(fd, NETLAT_IOC_HOOKS, &a, sizeof(a));
	return ret ? ret : (int)a.nr;
}

/*
 * Each hook says which mechanism the running kernel gave it, and whether
 * it is armed; the kernel's own lists say the same: a kprobe's line in
 * kprobes/list (its [FTRACE] mark, [DISABLED] or not), netlat's ftrace
 * callback in enabled_functions. At both levels, every group on.
 */
TEST_F(pkt, hooks_say_their_mechanism)
{
	uint64_t groups = PKT_GROUPS | NETLAT_PROBE_TCP_PUSH |
			  NETLAT_PROBE_TCP_SKB | NETLAT_PROBE_RX;
	unsigned int i, round, checked = 0, by_kind[NETLAT_HOOK_DEFERRED + 1];
	struct netlat_hook *h = NULL;
	struct netlat_probes pr;
	int n;

	if (nl_kprobe_armed("__tcp_transmit_skb", 'k') < 0)
		SKIP(return, "no /sys/kernel/debug/kprobes/list with netlat's kprobes");
	nl_need_groups(self->fd, &self->pr, groups);
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	for (round = 0; round < 2; round++) {
		bool pkts = round == 1;

		ASSERT_EQ(0, nl_set_level(self->fd, pkts ? NETLAT_LEVEL_PACKETS :
					  NETLAT_LEVEL_EVENTS, 0));
		n = hooks_get(self->fd, &h);
		ASSERT_LT(0, n);
		memset(by_kind, 0, sizeof(by_kind));
		for (i = 0; i < (unsigned int)n; i++) {
			const struct netlat_hook *k = &h[i];
			bool armed = k->flags & NETLAT_HOOK_ARMED;
			int list;

			ASSERT_NE(0, k->name[0]);
			ASSERT_EQ(0, k->name[sizeof(k->name) - 1]);
			ASSERT_NE(0ull, k->group);
			ASSERT_EQ(0ull, k->group & ~NETLAT_PROBE_ALL);
			ASSERT_GE(NETLAT_HOOK_DEFERRED, k->mechanism);
			ASSERT_EQ(0, k->reserved[0] | k->reserved[1] |
				  k->reserved[2] | k->reserved[3] |
				  k->reserved[4]);
			by_kind[k->mechanism]++;
			/* armed: its group on, at a level it serves */
			EXPECT_EQ(k->mechanism != NETLAT_HOOK_ABSENT &&
				  k->mechanism != NETLAT_HOOK_DEFERRED &&
				  (k->group & groups) &&
				  (!k->levels || (k->levels & (1u << pkts))),
				  armed) TH_LOG("%s", k->name);
			if (k->mechanism == NETLAT_HOOK_ABSENT) {
				/* a gap is a partial group, a clone none */
				if (!(k->flags & NETLAT_HOOK_OPTIONAL))
					EXPECT_TRUE(!!(pr.partial & k->group))
						TH_LOG("%s absent", k->name);
				continue;
			}
			list = nl_hook_listed_armed(k, false);
			if (list == -2)
				continue;	/* tracepoints: no list */
			checked++;
			EXPECT_EQ(armed, list == 1)
				TH_LOG("%s: %s, the kernel's lists say %d",
				       k->name, armed ? "armed" : "not armed",
				       list);
			if (k->mechanism == NETLAT_HOOK_KPROBE ||
			    k->mechanism == NETLAT_HOOK_KPROBE_FTRACE)
				EXPECT_EQ(k->mechanism == NETLAT_HOOK_KPROBE_FTRACE,
					  nl_kprobe_on_ftrace(k->name))
					TH_LOG("%s", k->name);
		}
		TH_LOG("level %s: %d hooks: %u tracepoints, %u ftrace, %u kprobes on ftrace, %u kprobes, %u fprobes, %u wrapped, %u kretprobes, %u absent, %u deferred",
		       pkts ? "packets" : "events", n,
		       by_kind[NETLAT_HOOK_TRACEPOINT], by_kind[NETLAT_HOOK_FTRACE],
		       by_kind[NETLAT_HOOK_KPROBE_FTRACE], by_kind[NETLAT_HOOK_KPROBE],
		       by_kind[NETLAT_HOOK_FPROBE], by_kind[NETLAT_HOOK_WRAPPED],
		       by_kind[NETLAT_HOOK_KRETPROBE], by_kind[NETLAT_HOOK_ABSENT],
		       by_kind[NETLAT_HOOK_DEFERRED]);
		free(h);
		h = NULL;
	}
	/* some hook of each level is checked against the kernel's lists */
	EXPECT_LT(0u, checked);
}

/* NETLAT_IOC_HOOKS refuses what it does not know. */
TEST_F(pkt, hooks_bad_input)
{
	struct netlat_hook e[2];
	struct netlat_hooks a;

	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a, sizeof(a)));
	ASSERT_LT(2u, a.nr);
	a.nr = 2;
	a.entry_size = sizeof(e[0]);
	a.entries = (uintptr_t)e;
	a.flags = 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a, sizeof(a)));
	a.flags = 0;
	a.entry_size = NETLAT_HOOK_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a, sizeof(a)));
	a.entry_size = sizeof(e[0]);
	a.entries = 0;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a, sizeof(a)));
	a.entries = 8;	/* a bad user address: EFAULT, nothing else */
	EXPECT_EQ(-EFAULT, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a, sizeof(a)));
	a.entries = (uintptr_t)e;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a,
				    NETLAT_HOOKS_SIZE_VER0 - 8));
	/* two asked, two written, all of them counted */
	memset(e, 0xff, sizeof(e));
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a, sizeof(a)));
	EXPECT_LT(2u, a.nr);
	EXPECT_EQ(0, e[1].name[sizeof(e[1].name) - 1]);
}

/* Every socket's counters summed in one entry (NETLAT_FLOWS_REST, nr 1). */
static int flows_sum(int fd, struct netlat_flow_stats *e)
{
	struct netlat_flows fl;

	memset(&fl, 0, sizeof(fl));
	fl.flags = NETLAT_FLOWS_REST;
	fl.nr = 1;
	fl.entry_size = sizeof(*e);
	fl.entries = (uintptr_t)e;
	if (nl_ioctl(fd, NETLAT_IOC_FLOWS, &fl, sizeof(fl)))
		return -1;
	return fl.nr == 1 && (e->flags & NETLAT_FLOW_REST) ? 0 : -1;
}

TEST_F(pkt, retrans_segs)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_hist hist;
	long long r0, r1;
	uint64_t sum;
	unsigned int k;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	/* one segment per skb, as the retransmit tests of netlat_tcp_test
	 * have it: netem then loses segments (the tests after this one do
	 * not mind) */
	ASSERT_EQ(0, one_segment_per_skb());
	ASSERT_EQ(0, netem(g_ns_a, DEV_A, 5, 0));
	measured_transfer(_metadata, self, BYTES, 0, NETLAT_PROBE_TCP_RETRANS,
			  &r0, &r1);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	for (sum = 0, k = 0; k < 8; k++)
		sum += hist.retrans_segs[k];
	TH_LOG("RetransSegs (A + B) +%lld, counted %llu (rto %llu fast %llu tlp %llu synack %llu), failed %llu",
	       r1 - r0, (unsigned long long)sum,
	       (unsigned long long)hist.retrans_segs[NETLAT_RETRANS_RTO],
	       (unsigned long long)hist.retrans_segs[NETLAT_RETRANS_FAST],
	       (unsigned long long)hist.retrans_segs[NETLAT_RETRANS_TLP],
	       (unsigned long long)hist.retrans_segs[NETLAT_RETRANS_SYNACK],
	       (unsigned long long)hist.retrans_fail);
	ASSERT_LE(0, r0);
	EXPECT_LT(0, r1 - r0);
	EXPECT_EQ((uint64_t)(r1 - r0), sum);

	/*
	 * Per socket: one entry of NETLAT_IOC_FLOWS sums every socket, those
	 * without an entry of their own too (a SYN-ACK's request socket):
	 * the same RetransSegs, and the failures of the totals.
	 */
	{
		struct netlat_flow_stats e;
		uint64_t fails = 0;

		ASSERT_EQ(0, flows_sum(self->fd, &e));
		for (sum = 0, k = 0; k < 8; k++) {
			sum += e.retrans_segs[k];
			EXPECT_EQ(hist.retrans_segs[k], e.retrans_segs[k])
				TH_LOG("kind %u", k);
		}
		for (k = 0; k < NETLAT_RTXERR_NR; k++)
			fails += e.retrans_fail[k];
		EXPECT_EQ((uint64_t)(r1 - r0), sum);
		EXPECT_EQ(hist.retrans_fail, fails);
	}
}

/*
 * Retransmits of a socket without an entry: its data all sent, and lost,
 * at the events level; then the packet level afresh (an empty table) and
 * the loss lifted: the RTO retransmits a socket that sends nothing new,
 * so no entry holds them. NETLAT_IOC_FLOWS's one summing entry must still
 * count them, like the totals and RetransSegs. Misses of the retransmit
 * hooks would void the comparison: checked.
 */
TEST_F(pkt, retrans_without_entry)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_probes p0, p1;
	struct netlat_flow_stats e;
	struct netlat_hist hist;
	uint64_t sum = 0, total = 0;
	char buf[4000];
	long long r0, r1;
	unsigned int k;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, one_segment_per_skb());
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, NULL));
	ASSERT_EQ(0, nl_conn_open(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, netem(g_ns_a, DEV_A, 100, 0));
	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, sizeof(buf)));
	nl_sleep_ms(20);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, &p0));
	r0 = retrans_segs();
	ASSERT_EQ(0, netem(g_ns_a, DEV_A, 0, 0));
	ASSERT_TRUE(nl_conn_finish(&self->conn, 60));
	ASSERT_EQ(sizeof(buf), self->conn.rx_bytes);
	r1 = retrans_segs();
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &p1));
	if (p1.nmissed != p0.nmissed)
		SKIP(return, "%llu hook hits missed: no comparison",
		     (unsigned long long)(p1.nmissed - p0.nmissed));
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	ASSERT_EQ(0, flows_sum(self->fd, &e));
	for (k = 0; k < 8; k++) {
		sum += e.retrans_segs[k];
		total += hist.retrans_segs[k];
	}
	TH_LOG("RetransSegs (A + B) +%lld, totals %llu, flows %llu (rto %llu)",
	       r1 - r0, (unsigned long long)total, (unsigned long long)sum,
	       (unsigned long long)e.retrans_segs[NETLAT_RETRANS_RTO]);
	ASSERT_LE(0, r0);
	EXPECT_LT(0, r1 - r0);
	EXPECT_EQ((uint64_t)(r1 - r0), total);
	EXPECT_EQ((uint64_t)(r1 - r0), sum);
}

/*
 * Tail loss probes: after a first exchange (a small RTT), a 1 s netem
 * delay on the ACKs' path makes the loss probe fire before any ACK; with
 * nothing new to send it retransmits. The second message is one segment,
 * sent within sendmsg(): with more, one could still wait behind TCP small
 * queues when the probe fires (the debug kernel's TX completions are
 * slow), and a probe that sends new data retransmits nothing, yet
 * TCPLossProbes counts it. TCPLossProbes counts the probes:
 * the TLP-kind retransmitted segments must equal it, and the kinds add up
 * to RetransSegs; in the 6.1 debug build tcp_send_loss_probe() enters the
 * ".part.0" clone of __tcp_retransmit_skb() directly.
 */
TEST_F(pkt, tlp_counted)
{
	static char buf[3000];
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_hist hist, hist0;
	long long lp0, lp1, r0, r1;
	uint64_t sum = 0, tlp;
	unsigned int k;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	EXPECT_EQ(0ull, self->pr.partial & NETLAT_PROBE_TCP_RETRANS)
		TH_LOG("the retransmit group misses a path on this kernel");
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_conn_open(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_wait_acked(&self->conn, 10));
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, 1000));
	/* the counters' window is the MIBs': a loaded VM may have sent a
	 * loss probe in the first exchange already */
	lp0 = nl_mib(g_ns_a, "netstat", "TcpExt", "TCPLossProbes");
	r0 = retrans_segs();
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist0, st));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, 1000));
	ASSERT_TRUE(nl_conn_wait_acked(&self->conn, 20));
	lp1 = nl_mib(g_ns_a, "netstat", "TcpExt", "TCPLossProbes");
	r1 = retrans_segs();
	ASSERT_EQ(0, nl_collect_groups(self->fd, &self->log, &self->pr,
				       NETLAT_PROBE_TCP_RETRANS))
		TH_LOG("%s", self->log.why);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	for (k = 0; k < 8; k++)
		sum += hist.retrans_segs[k] - hist0.retrans_segs[k];
	tlp = hist.retrans_segs[NETLAT_RETRANS_TLP] -
	      hist0.retrans_segs[NETLAT_RETRANS_TLP];
	TH_LOG("TCPLossProbes +%lld, RetransSegs +%lld; counted tlp +%llu rto +%llu, all +%llu",
	       lp1 - lp0, r1 - r0, (unsigned long long)tlp,
	       (unsigned long long)(hist.retrans_segs[NETLAT_RETRANS_RTO] -
				    hist0.retrans_segs[NETLAT_RETRANS_RTO]),
	       (unsigned long long)sum);
	ASSERT_LE(0, lp0);
	ASSERT_LT(0, lp1 - lp0) TH_LOG("no loss probe fired: nothing to check");
	EXPECT_EQ((uint64_t)(lp1 - lp0), tlp);
	EXPECT_EQ((uint64_t)(r1 - r0), sum);
}

TEST_F(pkt, bad_input)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_config cfg;
	struct netlat_hist h;

	ASSERT_EQ(0, nl_get_hist(self->fd, &h, st));
	h.flags = 2;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HIST, &h, sizeof(h)));
	h.flags = 0;
	h.stage_size = 8;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HIST, &h, sizeof(h)));
	h.stage_size = sizeof(st[0]);
	h.stages = 0;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HIST, &h, sizeof(h)));
	h.stages = 8;	/* a bad user address: EFAULT, nothing else */
	EXPECT_EQ(-EFAULT, nl_ioctl(self->fd, NETLAT_IOC_HIST, &h, sizeof(h)));
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HIST, &h,
				    NETLAT_HIST_SIZE_VER0 - 8));
	/* counters only */
	h.nr_stages = 0;
	h.stages = 0;
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_HIST, &h, sizeof(h)));
	EXPECT_EQ((uint32_t)NETLAT_NR_STAGES, h.nr_stages);
	/* the first size is still accepted */
	h.nr_stages = 0;
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_HIST, &h,
			      NETLAT_HIST_SIZE_VER0));

	{
		struct netlat_flow_stats e[2];
		struct netlat_flows fl;

		memset(&fl, 0, sizeof(fl));
		fl.nr = 2;
		fl.entry_size = sizeof(e[0]);
		fl.entries = (uintptr_t)e;
		EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl, sizeof(fl)));
		fl.flags = 4;
		EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
					    sizeof(fl)));
		fl.flags = 0;
		fl.rest = 1;	/* out only */
		EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
					    sizeof(fl)));
		fl.rest = 0;
		/* the sum needs an entry of its own */
		fl.flags = NETLAT_FLOWS_REST;
		fl.nr = 0;
		EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
					    sizeof(fl)));
		fl.nr = 1;
		EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
				      sizeof(fl)));
		EXPECT_EQ(1u, fl.nr);
		EXPECT_EQ((uint32_t)NETLAT_FLOW_REST, e[0].flags);
		fl.flags = 0;
		fl.entry_size = NETLAT_FLOW_STATS_SIZE_VER0 - 8;
		fl.nr = 2;
		EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
					    sizeof(fl)));
		fl.nr = 2;
		fl.entry_size = 8192;
		EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
					    sizeof(fl)));
		fl.nr = 2;
		fl.entry_size = sizeof(e[0]);
		fl.entries = 0;
		EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
					    sizeof(fl)));
		EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl,
					    NETLAT_FLOWS_SIZE_VER0 - 8));
		/* counting only */
		fl.nr = 0;
		EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_FLOWS, &fl, sizeof(fl)));
		/* an unknown command number of netlat's type stays -ENOTTY */
		EXPECT_EQ(-ENOTTY, nl_ioctl_raw(self->fd,
					       _IO(NETLAT_IOC_TYPE, NETLAT_CMD_HOOKS + 1),
					       &fl));
	}

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = NETLAT_CONFIG_LEVEL;
	cfg.level = 2;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.level = NETLAT_LEVEL_PACKETS;
	/* a sample without its flag, one not a power of two, one too large */
	cfg.sample = 16;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.flags = NETLAT_CONFIG_SAMPLE;
	cfg.sample = 3;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.sample = NETLAT_SAMPLE_MAX * 2;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.sample = 16;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    offsetof(struct netlat_config, sample)));
	/* acks: without its flag, not 0 or 1, a caller without the field */
	memset(&cfg, 0, sizeof(cfg));
	cfg.acks = 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.flags = NETLAT_CONFIG_ACKS;
	cfg.acks = 2;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.acks = 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    offsetof(struct netlat_config, acks)));
	cfg.reserved3 = 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	{
		struct netlat_info info;

		ASSERT_EQ(0, nl_get_info(self->fd, &info));
		EXPECT_EQ(0u, info.acks);
	}
	/* a budget out of range, or asked by a caller without the field */
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = NETLAT_CONFIG_TABLE_BYTES;
	cfg.table_bytes = NETLAT_TABLE_BYTES_MIN - 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.table_bytes = NETLAT_TABLE_BYTES_MAX + 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.table_bytes = NETLAT_TABLE_BYTES_MIN;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    offsetof(struct netlat_config, table_bytes)));
	{
		struct netlat_info info;

		ASSERT_EQ(0, nl_get_info(self->fd, &info));
		EXPECT_EQ(NETLAT_TABLE_BYTES_DEFAULT, info.table_bytes);
	}
}

/* The number @fmt ("Name %lld ...") reads from a line of @path, or -1. */
static long long proc_number(const char *path, const char *fmt)
{
	long long n = -1;
	char line[128];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* MemTotal of /proc/meminfo in KiB (the kernel's totalram_pages), or 0. */
static unsigned long long mem_total_kb(void)
{
	long long kb = proc_number("/proc/meminfo", "MemTotal: %lld kB");

	return kb > 0 ? kb : 0;
}

/* The OOM killer's kills so far (/proc/vmstat oom_kill), or -1. */
static long long oom_kills(void)
{
	return proc_number("/proc/vmstat", "oom_kill %lld");
}

/*
 * The tables' budget is at most a quarter of RAM: a replace holds the old
 * tables and the new together. Asked for more (a 1 GiB budget on this 1
 * GiB VM once woke the OOM killer), SET_CONFIG is -ENOMEM and the budget
 * stays; a quarter is accepted (at the event level: no table is made).
 * The issue's own call, the packet level and 1 GiB at once with every
 * group on, is refused whole: the level stays, the packet level still
 * works afterwards, and the OOM killer never ran.
 */
TEST_F(pkt, table_budget_within_ram)
{
	unsigned long long pages = mem_total_kb() / 4;
	uint64_t quarter = pages / 4 * 4096ull, over = quarter + 4096;
	struct netlat_config both = {
		.flags = NETLAT_CONFIG_LEVEL | NETLAT_CONFIG_TABLE_BYTES,
		.level = NETLAT_LEVEL_PACKETS,
		.table_bytes = 1ull << 30,
	};
	long long kills = oom_kills();
	struct netlat_info info;

	ASSERT_LT(0ull, pages);
	if (over > NETLAT_TABLE_BYTES_MAX)
		SKIP(return, "more than 4 GiB of RAM: no budget the uapi allows is over a quarter of it");
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	ASSERT_EQ(0, nl_set_table_bytes(self->fd, quarter));
	EXPECT_EQ(-ENOMEM, nl_set_table_bytes(self->fd, over));
	EXPECT_EQ(-ENOMEM, nl_set_table_bytes(self->fd, NETLAT_TABLE_BYTES_MAX));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(quarter, info.table_bytes);
	EXPECT_EQ(0, nl_set_table_bytes(self->fd, NETLAT_TABLE_BYTES_DEFAULT));

	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_ALL, NULL));
	EXPECT_EQ(-ENOMEM, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &both,
				    sizeof(both)));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ((uint32_t)NETLAT_LEVEL_EVENTS, info.level);
	EXPECT_EQ(NETLAT_TABLE_BYTES_DEFAULT, info.table_bytes);
	/* the previous configuration works: the packet level as before */
	EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	/* a kernel without VM_EVENT_COUNTERS (the debug one) has no count */
	if (kills < 0) {
		TH_LOG("no oom_kill in /proc/vmstat: the OOM killer's count is not checked here");
	} else {
		EXPECT_EQ(kills, oom_kills());
	}
}

/*
 * SET_CONFIG all or nothing. The kernel's fail_function (the lane's debug
 * kernel has it; others skip) makes the Nth of netlat's allocations fail
 * in this task (/proc/thread-self/fail-nth), for N = 1, 2, ... until a
 * call that changes every field at once succeeds. Each failing call
 * returns -ENOMEM and leaves everything as it was: the info's fields, the
 * keys, and the histograms (a table replaced would have zeroed them).
 */
#define FEI "/sys/kernel/debug/fail_function"
static const char *const g_config_allocs[] = {
	"netlat_keys_prepare", "netlat_rings_alloc",
	"netlat_snap_prepare_resize", "netlat_skt_alloc",
};

/* SET_CONFIG with the @nth allocation of this task failed (0: none). */
static int set_config_failing(int fd, struct netlat_config *cfg, unsigned int nth)
{
	char buf[16];
	int ret;

	snprintf(buf, sizeof(buf), "%u", nth);
	if (nl_put_str("/proc/thread-self/fail-nth", buf, 0))
		return -EIO;
	ret = nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, cfg, sizeof(*cfg));
	/* fewer allocations than @nth: the count must not outlive the call */
	nl_put_str("/proc/thread-self/fail-nth", "0", 0);
	return ret;
}

static void expect_same_config(struct __test_metadata *_metadata,
			       const struct netlat_info *a,
			       const struct netlat_info *b)
{
	EXPECT_EQ(a->ring_bytes, b->ring_bytes);
	EXPECT_EQ(a->mem_bytes, b->mem_bytes);
	EXPECT_EQ(a->watermark, b->watermark);
	EXPECT_EQ(a->flush_ms, b->flush_ms);
	EXPECT_EQ(a->mode, b->mode);
	EXPECT_EQ(a->level, b->level);
	EXPECT_EQ(a->slow_ns, b->slow_ns);
	EXPECT_EQ(a->table_bytes, b->table_bytes);
	EXPECT_EQ(a->pkt_mem_bytes, b->pkt_mem_bytes);
	EXPECT_EQ(a->rx_mem_bytes, b->rx_mem_bytes);
	EXPECT_EQ(a->sample, b->sample);
}

TEST_F(pkt, config_all_or_nothing)
{
	bool rx = self->pr.available & NETLAT_PROBE_RX;
	uint64_t groups = PKT_GROUPS | (rx ? NETLAT_PROBE_RX : 0);
	struct netlat_info before, after;
	struct netlat_config cfg;
	struct netlat_hist h0, h1;
	unsigned int i, nth, failed = 0;
	char path[128];
	int ret = -1;

	if (access(FEI "/inject", W_OK))
		SKIP(return, "no fail_function (the lane's debug kernel has it)");
	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	transfer(_metadata, self, 64 << 10);
	ASSERT_EQ(0, nl_get_hist(self->fd, &h0, NULL));
	ASSERT_LT(0ull, h0.packets);
	/* the rings change only while stopped */
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	ASSERT_EQ(0, nl_get_info(self->fd, &before));

	ASSERT_EQ(0, nl_put_str(FEI "/verbose", "0", 0));	/* no stack dumps */
	ASSERT_EQ(0, nl_put_str(FEI "/probability", "0", 0));	/* fail-nth only */
	for (i = 0; i < sizeof(g_config_allocs) / sizeof(g_config_allocs[0]); i++) {
		ASSERT_EQ(0, nl_put_str(FEI "/inject", g_config_allocs[i], 0))
			TH_LOG("%s is not injectable", g_config_allocs[i]);
		if (!strcmp(g_config_allocs[i], "netlat_skt_alloc"))
			continue;	/* fails with NULL */
		/* -ENOMEM, as the unsigned number the file parses */
		snprintf(path, sizeof(path), FEI "/%s/retval", g_config_allocs[i]);
		ASSERT_EQ(0, nl_put_str(path, "0xfffffffffffffff4", 0));
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = NETLAT_CONFIG_RING_BYTES | NETLAT_CONFIG_WATERMARK |
		    NETLAT_CONFIG_FLUSH_MS | NETLAT_CONFIG_MODE |
		    NETLAT_CONFIG_LEVEL | NETLAT_CONFIG_SLOW_NS |
		    NETLAT_CONFIG_TABLE_BYTES | NETLAT_CONFIG_KEYS |
		    NETLAT_CONFIG_SAMPLE;
	cfg.ring_bytes = before.ring_bytes * 2;
	cfg.watermark = 4096;
	cfg.flush_ms = before.flush_ms + 1;
	cfg.mode = before.mode == NETLAT_MODE_STREAM ? NETLAT_MODE_OVERWRITE :
						       NETLAT_MODE_STREAM;
	cfg.level = NETLAT_LEVEL_PACKETS;
	cfg.slow_ns = before.slow_ns + 1000000;
	cfg.table_bytes = before.table_bytes * 2;
	cfg.key_by = NETLAT_KEY_PORT;
	cfg.max_keys = 8;
	cfg.sample = 16;
	for (nth = 1; nth <= 16; nth++) {
		ret = set_config_failing(self->fd, &cfg, nth);
		if (!ret)
			break;
		failed++;
		EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", nth);
		ASSERT_EQ(0, nl_get_info(self->fd, &after));
		expect_same_config(_metadata, &before, &after);
		ASSERT_EQ(0, nl_get_hist(self->fd, &h1, NULL));
		EXPECT_EQ(h0.packets, h1.packets) TH_LOG("allocation %u", nth);
		EXPECT_EQ(h0.rx_packets, h1.rx_packets);
		EXPECT_EQ(0u, h1.key_by);
	}
	nl_put_str(FEI "/inject", "\n", 0);	/* every injection point gone */
	ASSERT_EQ(0, ret);
	/* the keys, the rings, their snapshot buffer, each table that exists */
	EXPECT_EQ(rx ? 5u : 4u, failed);
	TH_LOG("%u allocations failed one at a time, each leaving the configuration whole", failed);
	ASSERT_EQ(0, nl_get_info(self->fd, &after));
	EXPECT_EQ(cfg.ring_bytes, after.ring_bytes);
	EXPECT_EQ(cfg.watermark, after.watermark);
	EXPECT_EQ(cfg.flush_ms, after.flush_ms);
	EXPECT_EQ(cfg.mode, after.mode);
	EXPECT_EQ(cfg.slow_ns, after.slow_ns);
	EXPECT_EQ(cfg.table_bytes, after.table_bytes);
	EXPECT_EQ(cfg.sample, after.sample);
	ASSERT_EQ(0, nl_get_hist(self->fd, &h1, NULL));
	EXPECT_EQ((uint32_t)NETLAT_KEY_PORT, h1.key_by);
	EXPECT_EQ(0ull, h1.packets);	/* new tables: zeroed */

	/* back: the mode and the keys (the teardown does the rest) */
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = NETLAT_CONFIG_MODE | NETLAT_CONFIG_KEYS;
	cfg.mode = before.mode;
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg)));
}

TEST_F(pkt, flow_counters)
{
	struct netlat_flow_stats fs, cs;
	struct nl_tcp_info ti;
	char *buf = malloc(BYTES);
	struct nl_conn c;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, BYTES);
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, &self->pr));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_conn_open(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, BYTES));
	free(buf);
	ASSERT_TRUE(nl_conn_wait_acked(&self->conn, 30));
	/* the last ACK's return handler may still run on another CPU */
	nl_sleep_ms(100);
	ti = nl_tcp_info_of(self->conn.cli);
	/* live: nothing drained, the socket still open */
	ASSERT_EQ(true, nl_get_flow(self->fd, &self->conn, false, &fs));
	TH_LOG("flow: packets %llu bytes %llu segs %llu rtx %llu; TCP_INFO: bytes_acked %llu data_segs_out %u total_retrans %u",
	       (unsigned long long)fs.packets, (unsigned long long)fs.bytes,
	       (unsigned long long)fs.segs,
	       (unsigned long long)nl_sum8(fs.retrans_segs),
	       (unsigned long long)ti.bytes_acked, ti.data_segs_out,
	       ti.b.tcpi_total_retrans);
	EXPECT_EQ((uint64_t)BYTES, fs.bytes);
	/* TCP_INFO's bytes acked count the SYN's sequence number too */
	EXPECT_EQ(ti.bytes_acked - 1, fs.bytes);
	EXPECT_EQ((uint64_t)(ti.data_segs_out - ti.b.tcpi_total_retrans),
		  fs.segs);
	EXPECT_EQ((uint64_t)ti.b.tcpi_total_retrans, nl_sum8(fs.retrans_segs));
	EXPECT_EQ(0ull, fs.untracked);
	EXPECT_EQ(0u, fs.flags);
	EXPECT_NE(0ull, fs.flow.cookie);
	EXPECT_LE(fs.packets, fs.segs);
	EXPECT_LT(0ull, fs.start_ns);

	/* closed: the FIN counted, the counters kept in the closed ring */
	ASSERT_TRUE(nl_conn_finish(&self->conn, 60));
	c = self->conn;
	nl_conn_close(&self->conn);
	nl_sleep_ms(200);
	ASSERT_EQ(false, nl_get_flow(self->fd, &c, false, &cs));
	ASSERT_EQ(true, nl_get_flow(self->fd, &c, true, &cs));
	EXPECT_EQ(BYTES + 1ull, cs.bytes);
	EXPECT_EQ(fs.flow.cookie, cs.flow.cookie);
	EXPECT_NE(0u, cs.flags & NETLAT_FLOW_CLOSED);
	EXPECT_LE(cs.start_ns, cs.end_ns);
}

TEST_F(pkt, flow_retrans)
{
	struct netlat_flow_stats fs;
	struct nl_tcp_info ti;
	long long r0, r1;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, netem(g_ns_a, DEV_A, 5, 0));
	measured_transfer(_metadata, self, BYTES, 0, PKT_GROUPS, &r0, &r1);
	ti = nl_tcp_info_of(self->conn.cli);
	ASSERT_EQ(true, nl_get_flow(self->fd, &self->conn, false, &fs));
	TH_LOG("flow: rtx segs %llu (rto %llu fast %llu tlp %llu syn %llu), failed %llu; tcpi_total_retrans %u",
	       (unsigned long long)nl_sum8(fs.retrans_segs),
	       (unsigned long long)fs.retrans_segs[NETLAT_RETRANS_RTO],
	       (unsigned long long)fs.retrans_segs[NETLAT_RETRANS_FAST],
	       (unsigned long long)fs.retrans_segs[NETLAT_RETRANS_TLP],
	       (unsigned long long)fs.retrans_segs[NETLAT_RETRANS_SYN],
	       (unsigned long long)nl_sum8(fs.retrans_fail), ti.b.tcpi_total_retrans);
	EXPECT_LT(0u, ti.b.tcpi_total_retrans);
	EXPECT_EQ((uint64_t)ti.b.tcpi_total_retrans, nl_sum8(fs.retrans_segs));
	EXPECT_EQ(BYTES + 1ull, fs.bytes);
}

/*
 * One segment per skb and a 200 ms delay on the ACKs' path: many packets
 * in flight. Every byte is followed, in a packet of its own or in a range
 * (@small: the table's least budget, less than the window needs); the
 * records, the histograms and the socket's counters agree with TCP_INFO.
 */
static void in_flight(struct __test_metadata *_metadata,
		      FIXTURE_DATA(pkt) *self, bool small)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	const size_t bytes = 3u << 20;
	uint64_t covered = 0, recs = 0, merged = 0;
	const struct netlat_rec_hdr *h;
	struct netlat_flow_stats fs = { 0 };
	struct netlat_info info;
	struct netlat_hist hist;
	struct nl_tcp_info ti;
	long long r0, r1;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_EQ(0, one_segment_per_skb());
	if (small)
		ASSERT_EQ(0, nl_set_table_bytes(self->fd, NETLAT_TABLE_BYTES_MIN));
	/* 256 packets in flight over 200 ms take only 15 Mbit/s */
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, 200));
	measured_transfer(_metadata, self, bytes, 0, PKT_GROUPS, &r0, &r1);
	ti = nl_tcp_info_of(self->conn.cli);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	ASSERT_EQ(true, nl_get_flow(self->fd, &self->conn, false, &fs));
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;

		if (!pkt_of(h, &self->conn))
			continue;
		recs++;
		ASSERT_NE(0u, p->flags & NETLAT_PKT_ACKED);
		if (p->flags & NETLAT_PKT_MERGED) {
			ASSERT_LT(0u, p->merged);
			merged += p->merged;
			covered += p->range_end - p->seq;
		} else {
			ASSERT_EQ(p->end_seq, p->range_end);
			covered += p->end_seq - p->seq;
		}
	}
	TH_LOG("cwnd %u, table %u packets; records %llu + merged %llu = kernel packets %llu (merged %llu, untracked %llu, for memory %llu); bytes %llu; segs %llu, data_segs_out %u - total_retrans %u",
	       ti.b.tcpi_snd_cwnd, info.pkt_pkts, (unsigned long long)recs,
	       (unsigned long long)merged, (unsigned long long)hist.packets,
	       (unsigned long long)hist.merged,
	       (unsigned long long)hist.untracked,
	       (unsigned long long)hist.no_mem,
	       (unsigned long long)covered, (unsigned long long)fs.segs,
	       ti.data_segs_out, ti.b.tcpi_total_retrans);
	EXPECT_EQ(0ull, hist.untracked);
	EXPECT_EQ(bytes + 1ull, covered);
	EXPECT_EQ(bytes + 1ull, hist.bytes);
	EXPECT_EQ(bytes + 1ull, fs.bytes);
	EXPECT_EQ(recs + merged, hist.packets);
	EXPECT_EQ(hist.merged, merged);
	EXPECT_EQ(fs.merged, merged);
	/* one segment per skb: segments == packets; the FIN may be its own */
	EXPECT_EQ(fs.packets, fs.segs);
	EXPECT_LE((uint64_t)(ti.data_segs_out - ti.b.tcpi_total_retrans),
		  fs.segs);
	EXPECT_GE((uint64_t)(ti.data_segs_out - ti.b.tcpi_total_retrans) + 1,
		  fs.segs);
	/* the followed packets alone got stage samples */
	EXPECT_EQ(recs, st[NETLAT_STAGE_XMIT_ACK].count);
	if (!small) {
		/* a window of any size: a packet of its own each */
		EXPECT_EQ(0ull, hist.merged);
		EXPECT_EQ(0ull, hist.no_mem);
	} else {
		/* what found no slot was merged, for memory, and counted */
		EXPECT_EQ(hist.merged, hist.no_mem);
	}
	/*
	 * The condition itself: more packets in flight than 256 (the old
	 * table's most), or than the small table holds. A sender slowed by
	 * a loaded host is not cwnd-limited, its cwnd stays lower (198 and
	 * 203 seen on the debug kernel beside other VMs): then the test
	 * showed nothing, which is no failure.
	 */
	if (ti.b.tcpi_snd_cwnd <= (small ? info.pkt_pkts : 256u)) {
		if (!_metadata->passed)
			return;
		SKIP(return, "not provoked: cwnd %u", ti.b.tcpi_snd_cwnd);
	}
	if (small)
		EXPECT_LT(0ull, hist.merged);
}

/* the debug kernel under TCG needs more than the default 30 s */
TEST_F_TIMEOUT(pkt, over_256_in_flight, 150)
{
	in_flight(_metadata, self, false);
}

/* A budget too small for the window: counted, nothing stalls. */
TEST_F_TIMEOUT(pkt, small_budget, 150)
{
	in_flight(_metadata, self, true);
}

TEST_F_TIMEOUT(pkt, groups_flip, 90)
{
	const uint64_t acks = NETLAT_PROBE_TCP_ACK;
	struct netlat_probes before, after;
	struct netlat_flow_stats fs;
	struct netlat_hist h;
	unsigned long long pkts = 0;
	long long d0, d1 = 0;
	uint64_t missed;
	char *buf = malloc(BYTES);
	char why[256];
	unsigned int r;

	nl_need_groups(self->fd, &self->pr, PKT_GROUPS);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x3c, BYTES);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, &before));
	/* the ACKs' path slow: packets stay in flight */
	ASSERT_EQ(0, netem(g_ns_b, DEV_B, 0, 100));
	d0 = nl_orig_data_sent(g_ns_a, g_ns_b);
	ASSERT_LE(0, d0);
	ASSERT_EQ(0, nl_conn_open(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, BYTES / 2));
	/* off with packets in flight: the table stays, readable */
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS & ~acks, NULL));
	EXPECT_TRUE(nl_get_flow(self->fd, &self->conn, false, &fs));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, BYTES / 2));
	nl_sleep_ms(50);
	/* on again: emptied, what was in flight counted */
	ASSERT_EQ(0, nl_probes(self->fd, true, PKT_GROUPS, NULL));
	free(buf);
	ASSERT_TRUE(nl_conn_finish(&self->conn, 60));
	for (r = 0; r < 50; r++) {
		d1 = nl_orig_data_sent(g_ns_a, g_ns_b);
		ASSERT_EQ(0, nl_get_hist(self->fd, &h, NULL));
		pkts = h.packets + h.closed + h.untracked;
		if (pkts == (unsigned long long)(d1 - d0))
			break;
		nl_sleep_ms(100);
	}
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &after));
	missed = nl_missed_in(&before, &after, PKT_GROUPS);
	TH_LOG("sent segments %lld: followed %llu, closed %llu, not followed %llu; %llu kprobe misses",
	       d1 - d0, (unsigned long long)h.packets,
	       (unsigned long long)h.closed, (unsigned long long)h.untracked,
	       (unsigned long long)missed);
	EXPECT_LE(pkts, (unsigned long long)(d1 - d0));
	EXPECT_LE((unsigned long long)(d1 - d0) - pkts, missed);
	/* the packets in flight at the flip */
	EXPECT_LT(0ull, h.untracked);
	EXPECT_LT(0ull, h.packets);
	/* the old table's sockets carried on: the counters still add up */
	EXPECT_EQ(0, nl_flows_add_up(self->fd, &h, why, sizeof(why)))
		TH_LOG("%s", why);
}

/* The table's memory is held only at the packet level, and reported. */
TEST_F(pkt, memory)
{
	struct netlat_info a, b, c;

	ASSERT_EQ(0, nl_get_info(self->fd, &a));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_get_info(self->fd, &b));
	EXPECT_EQ((uint32_t)NETLAT_LEVEL_EVENTS, a.level);
	EXPECT_EQ((uint32_t)NETLAT_LEVEL_PACKETS, b.level);
	EXPECT_LT(a.pkt_mem_bytes, b.pkt_mem_bytes);
	EXPECT_EQ(0u, a.pkt_flows);
	EXPECT_LT(0u, b.pkt_flows);
	EXPECT_LT(b.pkt_flows, b.pkt_pkts);
	EXPECT_EQ(NETLAT_TABLE_BYTES_DEFAULT, b.table_bytes);
	/* the send table's share of the budget, the histograms beside */
	EXPECT_GE(b.table_bytes / 8 * 5, b.pkt_mem_bytes - a.pkt_mem_bytes);
	EXPECT_LT(b.table_bytes / 8 * 4, b.pkt_mem_bytes - a.pkt_mem_bytes);
	TH_LOG("packet table and histograms: %llu bytes for %u sockets, %u packets in flight",
	       (unsigned long long)b.pkt_mem_bytes, b.pkt_flows, b.pkt_pkts);
	/* a new budget: a new table within it */
	ASSERT_EQ(0, nl_set_table_bytes(self->fd, 4u << 20));
	ASSERT_EQ(0, nl_get_info(self->fd, &c));
	EXPECT_EQ(4u << 20, c.table_bytes);
	EXPECT_GE((4u << 20) / 8 * 5, c.pkt_mem_bytes - a.pkt_mem_bytes);
	EXPECT_GT(b.pkt_flows, c.pkt_flows);
	EXPECT_GT(b.pkt_pkts, c.pkt_pkts);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	ASSERT_EQ(0, nl_get_info(self->fd, &b));
	EXPECT_EQ(a.pkt_mem_bytes, b.pkt_mem_bytes);
	EXPECT_EQ(0u, b.pkt_pkts);
}

TEST_HARNESS_MAIN
