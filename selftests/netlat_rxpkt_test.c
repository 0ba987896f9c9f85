// SPDX-License-Identifier: GPL-2.0
/*
 * The receive side of the packet level: the kernel follows each received
 * TCP segment and UDP datagram from its arrival to the copy into the
 * application, feeds the NETLAT_STAGE_RX_* histograms and writes one
 * NETLAT_REC_RX_PKT per packet (all of them with slow_ns 0). Oracles
 * netlat does not make: the bytes and datagrams the test's receiver
 * read, the sleep of a reader between its data being queued (FIONREAD)
 * and its read (a physical floor of queue>user), the bytes left unread
 * at close, Udp RcvbufErrors of the receiver's namespace.
 *
 * hist_equals_records: over TCP (a bulk stream and messages) and UDP,
 *	the RX_PKT records give the histograms bucket by bucket (count, sum,
 *	max too), the wakeup stages of the blocking bulk reader included
 *	(rx_sched on); the copied bytes are the bytes read, per flow; the
 *	per-event RX records (RX_WAKE too) are not written.
 * wait_floor: a reader that sleeps S before each read: queue>user >= S
 *	in every record, and no histogram bucket below S holds a sample.
 * events_wait: at the events level the RX_COPY records carry the wait
 *	of their oldest byte, >= S for the sleeping reader.
 * kept_out: a rule keeping only the TCP connection's receive records: the
 *	UDP socket is not followed (no record, not in the histograms, its
 *	datagrams filtered); the histograms hold the TCP bytes read.
 * trigger_packets / trigger_events: NETLAT_TRIG_RX_WAIT freezes a
 *	snapshot holding the triggering RX_PKT (RX_COPY) for a sleeping
 *	reader above the threshold; a reader below it fires nothing.
 * trigger_bad_input: RX_WAIT without its threshold, a threshold without
 *	RX_WAIT, and RX_WAIT from a caller of the first struct size: -EINVAL.
 * untracked: a socket with more unread datagrams than the table holds per
 *	socket: followed + not followed = datagrams read.
 * handshake_data: a listener deferring accept drops the handshake's bare
 *	ACK (TcpExt TCPDeferAcceptDrop of B says so); the client's data then
 *	completes it (tcp_child_process, no tcp_v4_do_rcv): followed like any
 *	other, the bytes read are its copied records'.
 * udp_drops: a full receive buffer: the packets ended as dropped are
 *	those RcvbufErrors counted, with a reason.
 * tcp_wakeups: with rx_sched on, a reader blocked before each message has
 *	one ready>wakeup and one wakeup>run per message it read, in order
 *	after its data's queueing and before its copy; a busy-polling reader
 *	beside it none; the histograms count what the records carry.
 * wakeup_groups_flip: rx_sched on and off and level changes under a
 *	blocking reader: every byte read.
 * unload_blocked_reader: rmmod with a reader asleep in its wait (the
 *	groups on, at the packet level), the module loaded again: every byte
 *	read.
 * lifetimes: the table's memory is reported while the group is on and
 *	freed with it; a closed socket's unread data ends in CLOSED records
 *	(as many bytes as were left unread) and its slot frees; the group
 *	goes off with packets in the table.
 *
 * Topology: namespaces A (sender) and B (receiver), one veth pair.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include <stddef.h>
#include <poll.h>
#include "netlat_tcp.h"
#include "netlat_filter.h"
#include "netlat_snap.h"
#include "netlat_rxread.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A		"203.0.113.1"
#define ADDR_B		"203.0.113.2"
#define DEV_A		"rpa0"
#define DEV_B		"rpb0"
#define MS		1000000ull
#define MSGS		16
#define MSG_LEN		1000
#define BULK		(256u << 10)
#define SLEEP_MS	60
#define RING		(4ull << 20)
#define RX_STAGE0	NETLAT_STAGE_RX_NETIF_TCP

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) rxpkt_topology(void)
{
	if (nl_device_info(&g_def, g_skip, sizeof(g_skip)))
		return;
	if (!nl_pair_ns(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B, g_skip,
			sizeof(g_skip)) &&
	    nl_addr_ready(g_ns_b, ADDR_B, 10))
		snprintf(g_skip, sizeof(g_skip), "address %s not usable", ADDR_B);
}

/* ---- sockets ------------------------------------------------------------ */

static int udp_open(struct nl_conn *c)
{
	return nl_udp_open(c, g_ns_a, ADDR_A, g_ns_b, ADDR_B);
}

/* The receiving socket of @c (RX records carry the socket's flow). */
static bool rx_of(const struct netlat_flow *f, const struct nl_conn *c)
{
	return f->family == c->family && f->sport == c->dport &&
	       (!f->dport || f->dport == c->sport);
}

/*
 * @n messages of MSG_LEN on @c, each read once it is queued (FIONREAD),
 * after @sleep_ms; the bytes read added to *@read. 0 or -1.
 */
static int messages(struct nl_conn *c, bool udp, unsigned int n,
		    unsigned int sleep_ms, uint64_t *read)
{
	static char buf[MSG_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		int inq = 0, tries = 0;
		ssize_t got;

		if (send(c->cli, buf, MSG_LEN, 0) != MSG_LEN)
			return -1;
		while (!ioctl(c->srv, FIONREAD, &inq) && inq < 1 &&
		       tries++ < 5000)
			nl_sleep_ms(1);
		if (inq < 1)
			return -1;
		if (sleep_ms)
			nl_sleep_ms(sleep_ms);
		got = recv(c->srv, buf, MSG_LEN, udp ? 0 : MSG_WAITALL);
		if (got != MSG_LEN)
			return -1;
		*read += got;
	}
	return 0;
}

static int set_int(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}

/* ---- records ------------------------------------------------------------- */

static bool is_rx_pkt(const struct netlat_rec_hdr *h)
{
	return h->type == NETLAT_REC_RX_PKT &&
	       h->size >= sizeof(struct netlat_rec_rx_pkt);
}

/* Copied packets of @c's receiver: count and bytes. */
static void copied_of(const struct nl_log *l, const struct nl_conn *c,
		      uint8_t proto, uint64_t *n, uint64_t *bytes)
{
	const struct netlat_rec_hdr *h;

	*n = *bytes = 0;
	nl_log_for_each(l, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		if (!is_rx_pkt(h) || p->proto != proto || !rx_of(&p->flow, c) ||
		    !(p->flags & NETLAT_RXP_COPIED))
			continue;
		(*n)++;
		*bytes += p->len;
	}
}

/* ---- fixture ------------------------------------------------------------ */

FIXTURE(rxpkt) {
	int fd;
	struct netlat_probes pr;
	struct nl_log log;
	struct nl_conn tcp, bulk, udp;
	struct nl_conn blk, busy;	/* a blocking and a busy-polling reader */
};

FIXTURE_SETUP(rxpkt)
{
	self->fd = -1;
	self->tcp.cli = self->tcp.srv = -1;
	self->bulk.cli = self->bulk.srv = -1;
	self->udp.cli = self->udp.srv = -1;
	self->blk.cli = self->blk.srv = -1;
	self->busy.cli = self->busy.srv = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
				g_def.nr_cpus));
	ASSERT_EQ(0, nl_set_rules(self->fd, NULL, 0));
	if (!(self->pr.available & NETLAT_PROBE_RX))
		SKIP(longjmp(_metadata->env, 1), "NETLAT_PROBE_RX unavailable");
	if (nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0))
		SKIP(longjmp(_metadata->env, 1), "no packet level");
}

FIXTURE_TEARDOWN(rxpkt)
{
	nl_conn_close(&self->tcp);
	nl_conn_close(&self->bulk);
	nl_conn_close(&self->udp);
	nl_conn_close(&self->blk);
	nl_conn_close(&self->busy);
	if (self->fd >= 0) {
		EXPECT_EQ(0, trig_off(self->fd));
		EXPECT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		EXPECT_EQ(0, nl_set_table_bytes(self->fd,
						NETLAT_TABLE_BYTES_DEFAULT));
		EXPECT_EQ(0, setup_rings(self->fd, NETLAT_MODE_STREAM,
					 g_def.ring_bytes));
		EXPECT_EQ(0, nl_restore(self->fd, &g_def));
		close(self->fd);
	}
	nl_log_free(&self->log);
}

/* What one run of traffic read: the oracles. */
struct traffic {
	FIXTURE_DATA(rxpkt) *self;
	uint64_t groups;		/* 0: NETLAT_PROBE_RX */
	struct nl_pollpair *pp;		/* then these readers, or NULL */
	unsigned int sleep_ms;
	bool bulk;
	uint64_t tcp_read, udp_read;
	int err;
};

static void traffic_run(void *arg)
{
	struct traffic *t = arg;
	FIXTURE_DATA(rxpkt) *self = t->self;
	char *buf;

	t->tcp_read = t->udp_read = 0;
	t->err = messages(&self->tcp, false, MSGS, t->sleep_ms, &t->tcp_read) ||
		 messages(&self->udp, true, MSGS, t->sleep_ms, &t->udp_read);
	if (!t->err && t->pp) {
		nl_poll_traffic(t->pp);
		t->err = t->pp->blk.err || t->pp->busy.err;
	}
	if (t->err || !t->bulk)
		return;
	buf = calloc(1, BULK);
	t->err = !buf || nl_conn_open(&self->bulk, g_ns_a, g_ns_b, ADDR_B, 0) ||
		 nl_send_all(self->bulk.cli, buf, BULK) ||
		 !nl_conn_finish(&self->bulk, 60);
	free(buf);
}

static void traffic_undo(void *arg)
{
	struct traffic *t = arg;

	nl_conn_close(&t->self->bulk);
	if (t->pp)
		nl_poll_undo(t->pp);
}

/* The packet level afresh (@slow_ns), @t's traffic, every record. */
static void run(struct __test_metadata *_metadata, FIXTURE_DATA(rxpkt) *self,
		uint32_t level, struct traffic *t)
{
	t->self = self;
	ASSERT_EQ(0, nl_conn_connect(&self->tcp, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, set_int(self->tcp.cli, IPPROTO_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(0, udp_open(&self->udp));
	/* a level change zeroes the histograms and empties the table */
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	ASSERT_EQ(0, nl_set_level(self->fd, level, 0));
	ASSERT_EQ(0, nl_collect_retry(self->fd, &self->pr,
				      t->groups ? t->groups : NETLAT_PROBE_RX,
				      &self->log, 3, traffic_run, traffic_undo,
				      t))
		TH_LOG("%s", self->log.why);
	ASSERT_EQ(0, t->err);
	ASSERT_EQ((uint64_t)MSGS * MSG_LEN, t->tcp_read);
	ASSERT_EQ((uint64_t)MSGS * MSG_LEN, t->udp_read);
}

TEST_F(rxpkt, hist_equals_records)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES], mine[NETLAT_NR_STAGES];
	/* with rx_sched: a reader blocked before each message, one beside it */
	bool sched = self->pr.available & NETLAT_PROBE_RX_SCHED;
	struct nl_pollpair pp = {
		.blk = { .c = &self->blk },
		.busy = { .c = &self->busy, .busy = true },
		.blocked_first = true,
	};
	struct traffic t = {
		.bulk = true,
		.groups = NETLAT_PROBE_RX | (sched ? NETLAT_PROBE_RX_SCHED : 0),
	};
	uint64_t copied = 0, bytes = 0, n, b;
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	unsigned int s, k;

	if (sched) {
		int ret = nl_pollpair_setup(&pp, g_ns_a, g_ns_b, ADDR_B);

		ASSERT_LE(0, ret);
		if (!ret)
			t.pp = &pp;
	}
	run(_metadata, self, NETLAT_LEVEL_PACKETS, &t);
	ASSERT_EQ(BULK, self->bulk.rx_bytes);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	ASSERT_EQ((uint32_t)NETLAT_NR_STAGES, hist.nr_stages);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		/* at the packet level the table writes the records */
		ASSERT_NE(NETLAT_REC_RX_NETIF, h->type);
		ASSERT_NE(NETLAT_REC_RX_TRANSPORT, h->type);
		ASSERT_NE(NETLAT_REC_RX_QUEUE, h->type);
		ASSERT_NE(NETLAT_REC_RX_COPY, h->type);
		ASSERT_NE(NETLAT_REC_RX_WAKE, h->type);
		if (!is_rx_pkt(h))
			continue;
		ASSERT_EQ(sizeof(*p), h->size);
		ASSERT_NE(0ull, p->transport_ns);
		if (!(p->flags & NETLAT_RXP_COPIED))
			continue;
		copied++;
		bytes += p->len;
		/* in order: arrival, queue, copy; the reader is the test */
		ASSERT_NE(0u, p->flags & NETLAT_RXP_QUEUED);
		ASSERT_LE(p->transport_ns, p->queue_ns);
		ASSERT_LE(p->queue_ns, p->end_ns);
		if (rx_of(&p->flow, &self->tcp) || rx_of(&p->flow, &self->bulk) ||
		    rx_of(&p->flow, &self->udp) || rx_of(&p->flow, &self->blk))
			ASSERT_EQ((uint32_t)getpid(), p->pid);
		if (p->proto == NETLAT_RX_TCP)
			ASSERT_EQ(p->seq + p->len, p->end_seq);
		for (s = RX_STAGE0; s < NETLAT_NR_STAGES; s++) {
			uint64_t d;

			if (!nl_rx_sample(p, s, &d))
				continue;
			mine[s].count++;
			mine[s].sum_ns += d;
			if (d > mine[s].max_ns)
				mine[s].max_ns = d;
			mine[s].bucket[nl_hist_bucket(d)]++;
		}
	}
	TH_LOG("%llu packets copied, %llu bytes; kernel: rx_packets %llu rx_bytes %llu untracked %llu",
	       (unsigned long long)copied, (unsigned long long)bytes,
	       (unsigned long long)hist.rx_packets,
	       (unsigned long long)hist.rx_bytes,
	       (unsigned long long)hist.rx_untracked);
	EXPECT_EQ(0ull, hist.rx_untracked);
	EXPECT_EQ(copied, hist.rx_packets);
	EXPECT_EQ(bytes, hist.rx_bytes);
	/* what each receiver read, in its flow's records */
	copied_of(&self->log, &self->tcp, NETLAT_RX_TCP, &n, &b);
	EXPECT_EQ((uint64_t)MSGS * MSG_LEN, b);
	copied_of(&self->log, &self->bulk, NETLAT_RX_TCP, &n, &b);
	EXPECT_EQ((uint64_t)BULK, b);
	copied_of(&self->log, &self->udp, NETLAT_RX_UDP, &n, &b);
	EXPECT_EQ((uint64_t)MSGS, n);
	EXPECT_EQ((uint64_t)MSGS * MSG_LEN, b);
	for (s = RX_STAGE0; s < NETLAT_NR_STAGES; s++) {
		EXPECT_EQ(mine[s].count, st[s].count) TH_LOG("stage %u", s);
		EXPECT_EQ(mine[s].sum_ns, st[s].sum_ns) TH_LOG("stage %u", s);
		EXPECT_EQ(mine[s].max_ns, st[s].max_ns) TH_LOG("stage %u", s);
		for (k = 0; k < NETLAT_HIST_BUCKETS; k++)
			EXPECT_EQ(mine[s].bucket[k], st[s].bucket[k])
				TH_LOG("stage %u bucket %u", s, k);
	}
	EXPECT_LT(0ull, st[NETLAT_STAGE_RX_QUEUE_USER].count);
	EXPECT_LT(0ull, st[NETLAT_STAGE_RX_TCP_QUEUE].count);
	TH_LOG("rx_sched %s: ready>wakeup %llu samples, wakeup>run %llu; waits not followed %llu",
	       t.pp ? "on, readers blocking and busy" : "off (unavailable or one CPU)",
	       (unsigned long long)st[NETLAT_STAGE_RX_READY_WAKEUP].count,
	       (unsigned long long)st[NETLAT_STAGE_RX_WAKEUP_RUN].count,
	       (unsigned long long)hist.rx_wait_untracked);
	if (t.pp) {
		EXPECT_LT(0ull, st[NETLAT_STAGE_RX_WAKEUP_RUN].count);
		EXPECT_LT(0ull, st[NETLAT_STAGE_RX_READY_WAKEUP].count);
	} else if (!sched) {
		EXPECT_EQ(0ull, st[NETLAT_STAGE_RX_WAKEUP_RUN].count);
	}
}

/*
 * A rule keeping every receive record but the TCP connection's out: the
 * UDP socket is not followed at all (no record, nothing in the
 * histograms), each of its datagrams counts as filtered, and the
 * histograms hold exactly the bytes the TCP receiver read.
 */
TEST_F(rxpkt, kept_out)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_filter_rule r = {
		.groups = NETLAT_PROBE_RX, .match = NETLAT_MATCH_PORT,
	};
	struct traffic t = { .self = self };
	uint64_t f0, kept_out, n, b, udp_recs = 0;
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	int attempt, ret;

	ASSERT_EQ(0, nl_conn_connect(&self->tcp, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, set_int(self->tcp.cli, IPPROTO_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(0, udp_open(&self->udp));
	r.port = self->tcp.dport;
	ASSERT_EQ(0, nl_set_rules(self->fd, &r, 1));
	for (attempt = 1;; attempt++) {
		/* a level change zeroes the histograms: one attempt's */
		ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
		ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_RX,
				       &self->pr));
		f0 = nl_filtered(self->fd, g_def.nr_cpus);
		traffic_run(&t);
		ret = nl_collect(self->fd, &self->log, self->pr.nmissed);
		kept_out = nl_filtered(self->fd, g_def.nr_cpus) - f0;
		if (!ret || attempt == 3)
			break;
		TH_LOG("attempt %d void (%s): again", attempt, self->log.why);
		nl_log_clear(&self->log);
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", self->log.why);
	ASSERT_EQ(0, t.err);
	ASSERT_EQ((uint64_t)MSGS * MSG_LEN, t.tcp_read);
	ASSERT_EQ((uint64_t)MSGS * MSG_LEN, t.udp_read);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		udp_recs += is_rx_pkt(h) && p->proto == NETLAT_RX_UDP;
	}
	copied_of(&self->log, &self->tcp, NETLAT_RX_TCP, &n, &b);
	TH_LOG("TCP: %llu packets copied, %llu bytes; kernel: rx_packets %llu rx_bytes %llu untracked %llu; UDP records %llu; %llu kept out",
	       (unsigned long long)n, (unsigned long long)b,
	       (unsigned long long)hist.rx_packets,
	       (unsigned long long)hist.rx_bytes,
	       (unsigned long long)hist.rx_untracked,
	       (unsigned long long)udp_recs, (unsigned long long)kept_out);
	EXPECT_EQ(0ull, udp_recs);
	EXPECT_EQ((uint64_t)MSGS * MSG_LEN, b);
	/* the UDP bytes read are in no histogram */
	EXPECT_EQ((uint64_t)MSGS * MSG_LEN, hist.rx_bytes);
	EXPECT_EQ(n, hist.rx_packets);
	EXPECT_EQ(n, st[NETLAT_STAGE_RX_QUEUE_USER].count);
	EXPECT_EQ(0ull, st[NETLAT_STAGE_RX_NETIF_UDP].count);
	EXPECT_EQ(0ull, hist.rx_untracked);
	/* every datagram the UDP receiver read arrived kept out */
	EXPECT_LE((uint64_t)MSGS, kept_out);
	ASSERT_EQ(0, nl_set_rules(self->fd, NULL, 0));
}

/* ---- the reader's wakeup ------------------------------------------------- */

/* Copied packets of @c's receiver (NULL: any) with a sample of stage @s. */
static unsigned int stage_samples(const struct nl_log *l, const struct nl_conn *c,
				  unsigned int s)
{
	const struct netlat_rec_hdr *h;
	unsigned int n = 0;
	uint64_t d;

	nl_log_for_each(l, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		n += is_rx_pkt(h) && (!c || rx_of(&p->flow, c)) &&
		     nl_rx_sample(p, s, &d);
	}
	return n;
}

/*
 * A reader blocked in recv() before each message (the sender waits for
 * it to sleep there) and a busy-polling one beside it, at the packet
 * level with rx_sched on and every packet recorded: the blocked one's
 * records carry exactly one ready>wakeup and one wakeup>run per message
 * it read, on the packet that woke it (queued, then ready, woken, run,
 * copied, in that order); the busy one's none; the histograms count the
 * same samples; no RX_WAKE record is written.
 */
TEST_F(rxpkt, tcp_wakeups)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct nl_pollpair pp = {
		.blk = { .c = &self->blk },
		.busy = { .c = &self->busy, .busy = true },
		.blocked_first = true,
	};
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	unsigned int rw, wr, s;
	int ret;

	if (!(self->pr.available & NETLAT_PROBE_RX_SCHED))
		SKIP(return, "NETLAT_PROBE_RX_SCHED unavailable");
	ret = nl_pollpair_setup(&pp, g_ns_a, g_ns_b, ADDR_B);
	if (ret == 1)
		SKIP(return, "one CPU: a busy poller would starve the sender");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_collect_retry(self->fd, &self->pr,
				      NETLAT_PROBE_RX | NETLAT_PROBE_RX_SCHED,
				      &self->log, 3, nl_poll_traffic,
				      nl_poll_undo, &pp))
		TH_LOG("%s", self->log.why);
	ASSERT_EQ(0, pp.blk.err);
	ASSERT_EQ(0, pp.busy.err);
	/* the oracle: what each reader read */
	ASSERT_EQ((unsigned int)NL_POLL_MSGS, pp.blk.n);
	ASSERT_EQ((unsigned int)NL_POLL_MSGS, pp.busy.n);
	ASSERT_EQ(0u, pp.not_asleep) TH_LOG("the blocked reader was not asleep before %u messages",
					    pp.not_asleep);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		ASSERT_NE(NETLAT_REC_RX_WAKE, h->type);
		if (!is_rx_pkt(h) || !p->wakeup_ns)
			continue;
		/* a wakeup only on a copied packet, of the blocked reader */
		ASSERT_NE(0u, p->flags & NETLAT_RXP_COPIED);
		ASSERT_TRUE(rx_of(&p->flow, &self->blk));
		ASSERT_EQ((uint32_t)pp.blk.tid, p->tid);
		/* its data queued, signalled, the reader woken, run, copying */
		EXPECT_LE(p->queue_ns, p->ready_ns);
		EXPECT_LE(p->ready_ns, p->wakeup_ns);
		EXPECT_LE(p->wakeup_ns, p->run_ns);
		EXPECT_LE(p->run_ns, p->end_ns);
	}
	rw = stage_samples(&self->log, &self->blk, NETLAT_STAGE_RX_READY_WAKEUP);
	wr = stage_samples(&self->log, &self->blk, NETLAT_STAGE_RX_WAKEUP_RUN);
	TH_LOG("%u messages read by each; blocked reader: ready>wakeup %u, wakeup>run %u (max %llu ns, %llu ns); busy: %u, %u; waits not followed %llu",
	       pp.blk.n, rw, wr,
	       (unsigned long long)st[NETLAT_STAGE_RX_READY_WAKEUP].max_ns,
	       (unsigned long long)st[NETLAT_STAGE_RX_WAKEUP_RUN].max_ns,
	       stage_samples(&self->log, &self->busy, NETLAT_STAGE_RX_READY_WAKEUP),
	       stage_samples(&self->log, &self->busy, NETLAT_STAGE_RX_WAKEUP_RUN),
	       (unsigned long long)hist.rx_wait_untracked);
	EXPECT_EQ(0ull, hist.rx_wait_untracked);
	EXPECT_EQ(pp.blk.n, rw);
	EXPECT_EQ(pp.blk.n, wr);
	EXPECT_EQ(0u, stage_samples(&self->log, &self->busy,
				    NETLAT_STAGE_RX_READY_WAKEUP));
	EXPECT_EQ(0u, stage_samples(&self->log, &self->busy,
				    NETLAT_STAGE_RX_WAKEUP_RUN));
	/* every record was written (slow_ns 0): the histograms hold as many */
	for (s = NETLAT_STAGE_RX_READY_WAKEUP; s <= NETLAT_STAGE_RX_WAKEUP_RUN; s++)
		EXPECT_EQ((uint64_t)stage_samples(&self->log, NULL, s), st[s].count)
			TH_LOG("stage %u", s);
}

TEST_F(rxpkt, wait_floor)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct traffic t = { .sleep_ms = SLEEP_MS };
	const uint64_t floor_ns = SLEEP_MS * MS;
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	uint64_t n = 0, n_tcp, n_udp, b;
	unsigned int k;

	run(_metadata, self, NETLAT_LEVEL_PACKETS, &t);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, st));
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		if (!is_rx_pkt(h) || !(p->flags & NETLAT_RXP_COPIED) ||
		    (!rx_of(&p->flow, &self->tcp) && !rx_of(&p->flow, &self->udp)))
			continue;
		n++;
		ASSERT_NE(0u, p->flags & NETLAT_RXP_QUEUED);
		EXPECT_LE(floor_ns, p->end_ns - p->queue_ns)
			TH_LOG("queue>user %llu ns < %u ms",
			       (unsigned long long)(p->end_ns - p->queue_ns),
			       SLEEP_MS);
	}
	copied_of(&self->log, &self->tcp, NETLAT_RX_TCP, &n_tcp, &b);
	EXPECT_EQ((uint64_t)MSGS * MSG_LEN, b);
	copied_of(&self->log, &self->udp, NETLAT_RX_UDP, &n_udp, &b);
	EXPECT_EQ((uint64_t)MSGS, n_udp);
	EXPECT_EQ(n_tcp + n_udp, n);
	EXPECT_EQ(n, st[NETLAT_STAGE_RX_QUEUE_USER].count);
	for (k = 0; k < nl_hist_bucket(floor_ns); k++)
		EXPECT_EQ(0ull, st[NETLAT_STAGE_RX_QUEUE_USER].bucket[k])
			TH_LOG("bucket %u", k);
	EXPECT_LE(floor_ns, st[NETLAT_STAGE_RX_QUEUE_USER].max_ns);
}

TEST_F(rxpkt, events_wait)
{
	struct traffic t = { .sleep_ms = SLEEP_MS };
	const struct netlat_rec_hdr *h;
	unsigned int n = 0;

	run(_metadata, self, NETLAT_LEVEL_EVENTS, &t);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_copy *c = (const void *)h;

		ASSERT_NE(NETLAT_REC_RX_PKT, h->type);
		if (h->type != NETLAT_REC_RX_COPY ||
		    (!rx_of(&c->flow, &self->tcp) && !rx_of(&c->flow, &self->udp)))
			continue;
		ASSERT_EQ(sizeof(*c), h->size);
		n++;
		EXPECT_LE(SLEEP_MS * MS, c->wait_ns)
			TH_LOG("wait %llu ns", (unsigned long long)c->wait_ns);
		/* the copy's wait ends at the record */
		EXPECT_GT(h->ts_ns, c->wait_ns);
	}
	/* one copy per read */
	EXPECT_EQ(2u * MSGS, n);
}

/*
 * A blocking reader while rx_sched goes on and off under it and the level
 * changes (the wait slots cleared, the receive table replaced, waits and
 * copies straddling each change): every byte sent is read; the debug
 * kernel's KASAN, lockdep and kmemleak watch the rest.
 */
TEST_F(rxpkt, wakeup_groups_flip)
{
	static char buf[MSG_LEN];
	const unsigned int n = 200;
	struct netlat_hist hist;
	unsigned int i, flips = 0;

	if (!(self->pr.available & NETLAT_PROBE_RX_SCHED))
		SKIP(return, "NETLAT_PROBE_RX_SCHED unavailable");
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true,
			       NETLAT_PROBE_RX | NETLAT_PROBE_RX_SCHED, NULL));
	/* its reader thread blocks in read() for each message */
	ASSERT_EQ(0, nl_conn_open(&self->bulk, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, set_int(self->bulk.cli, IPPROTO_TCP, TCP_NODELAY, 1));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, nl_send_all(self->bulk.cli, buf, MSG_LEN));
		if (i % 10 == 5) {
			ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_RX |
					       ((i / 10) % 2 ? 0 : NETLAT_PROBE_RX_SCHED),
					       NULL));
			flips++;
		}
		if (i % 50 == 25)
			ASSERT_EQ(0, nl_set_level(self->fd, (i / 50) % 2 ?
						  NETLAT_LEVEL_PACKETS :
						  NETLAT_LEVEL_EVENTS, 0));
		nl_sleep_ms(2);
	}
	ASSERT_TRUE(nl_conn_finish(&self->bulk, 30));
	EXPECT_EQ((uint64_t)n * MSG_LEN, self->bulk.rx_bytes);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, NULL));
	TH_LOG("%u messages, rx_sched switched %u times, 4 level changes; rx_wait_untracked %llu",
	       n, flips, (unsigned long long)hist.rx_wait_untracked);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
}

/*
 * rmmod while a reader sleeps in sk_wait_data (its wait slot claimed, the
 * kretprobe's return pending) and others' wakeup points are kept for
 * their next copy: the reader then reads what is sent after the module
 * left, and a fresh load follows it again.
 */
TEST_F(rxpkt, unload_blocked_reader)
{
	static char buf[MSG_LEN];
	int i, ret;

	if (!(self->pr.available & NETLAT_PROBE_RX_SCHED))
		SKIP(return, "NETLAT_PROBE_RX_SCHED unavailable");
	if (access(nl_ko_path(), R_OK))
		SKIP(return, "no netlat.ko to load again");
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true,
			       NETLAT_PROBE_RX | NETLAT_PROBE_RX_SCHED, NULL));
	ASSERT_EQ(0, nl_conn_open(&self->blk, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, set_int(self->blk.cli, IPPROTO_TCP, TCP_NODELAY, 1));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, nl_send_all(self->blk.cli, buf, MSG_LEN));
		nl_sleep_ms(10);
	}
	/*
	 * The reader asleep in its wait, the groups on; they go off (the
	 * return probe pending: nl_unload_wait() disarms, as an armed
	 * ftrace hook holds the module), then the module goes.
	 */
	close(self->fd);
	self->fd = -1;
	ret = nl_unload_wait();
	ASSERT_EQ(0, ret) TH_LOG("rmmod: %s", strerror(-ret));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, nl_send_all(self->blk.cli, buf, MSG_LEN));
	nl_sleep_ms(100);
	ret = nl_load_netlat("");
	ASSERT_EQ(0, ret) TH_LOG("insmod: %s", strerror(-ret));
	self->fd = nl_open_wait();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true,
			       NETLAT_PROBE_RX | NETLAT_PROBE_RX_SCHED, NULL));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, nl_send_all(self->blk.cli, buf, MSG_LEN));
		nl_sleep_ms(10);
	}
	ASSERT_TRUE(nl_conn_finish(&self->blk, 30));
	EXPECT_EQ(24ull * MSG_LEN, self->blk.rx_bytes);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
}

/* ---- the wait trigger ---------------------------------------------------- */

static bool pri_within(int fd, unsigned int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLPRI);
}

static void run_trigger(struct __test_metadata *_metadata,
			FIXTURE_DATA(rxpkt) *self, uint32_t level,
			uint16_t type)
{
	struct netlat_triggers t = {
		.armed = NETLAT_TRIG_RX_WAIT,
		.rx_wait_ns = 150 * MS,
		.post_ms = 100,
	};
	size_t cap = snap_capacity(&g_def) + RING * g_def.nr_cpus;
	unsigned char *buf = malloc(cap);
	const struct netlat_rec_hdr *h, *found = NULL;
	struct netlat_triggers got;
	struct snap_view v;
	uint64_t fired0, read = 0;
	ssize_t len;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
	ASSERT_EQ(0, setup_rings(self->fd, NETLAT_MODE_OVERWRITE, RING));
	ASSERT_EQ(0, nl_set_level(self->fd, level, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_RX, &self->pr));
	ASSERT_EQ(0, nl_conn_connect(&self->tcp, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, set_int(self->tcp.cli, IPPROTO_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(0, trig_set(self->fd, &t));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_EQ(NETLAT_TRIG_RX_WAIT, got.armed);
	EXPECT_EQ(150 * MS, got.rx_wait_ns);
	fired0 = got.fired;

	/* a reader at once: below the threshold, nothing fires */
	ASSERT_EQ(0, messages(&self->tcp, false, 4, 0, &read));
	EXPECT_FALSE(pri_within(self->fd, 500));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_EQ(fired0, got.fired);

	/* a reader that sleeps past it: its copy fires */
	ASSERT_EQ(0, messages(&self->tcp, false, 2, 300, &read));
	ASSERT_EQ(6ull * MSG_LEN, read);
	ASSERT_TRUE(pri_within(self->fd, 5000));
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_LT(fired0, got.fired);

	len = snap_read_all(self->fd, buf, cap, 65536);
	ASSERT_LT(0, len) TH_LOG("snapshot read: %s", strerror((int)-len));
	ASSERT_EQ(0, view_parse(&v, buf, len, g_def.nr_cpus)) TH_LOG("%s", v.why);
	EXPECT_EQ(NETLAT_SNAP_TRIGGER, v.snap->reason);
	EXPECT_EQ(NETLAT_TRIG_RX_WAIT, v.snap->trigger);
	EXPECT_EQ(type, v.snap->trig_type);
	nl_log_for_each(&v.log, h)
		if (h->cpu == v.snap->trig_cpu && h->seq == v.snap->trig_seq)
			found = h;
	ASSERT_NE(NULL, found);
	ASSERT_EQ(type, found->type);
	if (type == NETLAT_REC_RX_PKT) {
		const struct netlat_rec_rx_pkt *p = (const void *)found;

		EXPECT_TRUE(rx_of(&p->flow, &self->tcp));
		EXPECT_LE(300 * MS, p->end_ns - p->queue_ns);
	} else {
		const struct netlat_rec_rx_copy *c = (const void *)found;

		EXPECT_TRUE(rx_of(&c->flow, &self->tcp));
		EXPECT_LE(300 * MS, c->wait_ns);
	}
	view_free(&v);
	free(buf);
}

TEST_F_TIMEOUT(rxpkt, trigger_packets, 60)
{
	run_trigger(_metadata, self, NETLAT_LEVEL_PACKETS, NETLAT_REC_RX_PKT);
}

TEST_F_TIMEOUT(rxpkt, trigger_events, 60)
{
	run_trigger(_metadata, self, NETLAT_LEVEL_EVENTS, NETLAT_REC_RX_COPY);
}

TEST_F(rxpkt, trigger_bad_input)
{
	struct netlat_triggers t = { .armed = NETLAT_TRIG_RX_WAIT };
	struct netlat_triggers got;

	EXPECT_EQ(-EINVAL, trig_set(self->fd, &t));
	memset(&t, 0, sizeof(t));
	t.rx_wait_ns = MS;
	EXPECT_EQ(-EINVAL, trig_set(self->fd, &t));
	/* the first size has no threshold: RX_WAIT cannot be armed */
	memset(&t, 0, sizeof(t));
	t.armed = NETLAT_TRIG_RX_WAIT;
	t.flags = NETLAT_TRIGGERS_SET;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_TRIGGERS, &t,
				    NETLAT_TRIGGERS_SIZE_VER0));
	memset(&t, 0, sizeof(t));
	t.armed = NETLAT_TRIG_ALL + 1;
	t.rx_wait_ns = MS;
	EXPECT_EQ(-EINVAL, trig_set(self->fd, &t));
	/* nothing changed */
	ASSERT_EQ(0, trig_get(self->fd, &got));
	EXPECT_EQ(0u, got.armed);
	EXPECT_EQ(0ull, got.rx_wait_ns);
	/* the first size still reads and disarms */
	memset(&t, 0, sizeof(t));
	t.flags = NETLAT_TRIGGERS_SET;
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_TRIGGERS, &t,
			      NETLAT_TRIGGERS_SIZE_VER0));
}

/* ---- bounds and lifetimes ------------------------------------------------ */

/* Send @n datagrams of @len on @c, none read. */
static int udp_burst(struct nl_conn *c, unsigned int n, size_t len)
{
	static char buf[128];
	unsigned int i;

	for (i = 0; i < n; i++)
		if (send(c->cli, buf, len, 0) != (ssize_t)len)
			return -1;
	return 0;
}

/* Read every queued datagram of @c's receiver; how many. */
static unsigned int udp_drain(struct nl_conn *c)
{
	char buf[128];
	unsigned int n = 0;

	while (recv(c->srv, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

/*
 * At the packet level, @sent datagrams to self->udp (its receive buffer
 * @rcvbuf, forced) before any is read, then every one read: how many in
 * *@got, RcvbufErrors of B meanwhile in *@errs, the counters after.
 */
static void udp_flood(struct __test_metadata *_metadata,
		      FIXTURE_DATA(rxpkt) *self, unsigned int sent, int rcvbuf,
		      unsigned int *got, long long *errs, struct netlat_hist *hist,
		      struct netlat_info *info)
{
	long long err0, err1;

	ASSERT_EQ(0, udp_open(&self->udp));
	ASSERT_EQ(0, set_int(self->udp.srv, SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_RX, &self->pr));
	err0 = nl_mib(g_ns_b, "snmp", "Udp", "RcvbufErrors");
	ASSERT_EQ(0, udp_burst(&self->udp, sent, 100));
	nl_sleep_ms(200);
	*got = udp_drain(&self->udp);
	err1 = nl_mib(g_ns_b, "snmp", "Udp", "RcvbufErrors");
	/* the table's figures while it exists (the group goes off below) */
	if (info)
		ASSERT_EQ(0, nl_get_info(self->fd, info));
	ASSERT_LE(0, err0);
	*errs = err1 - err0;
	ASSERT_EQ(0, nl_collect(self->fd, &self->log, self->pr.nmissed))
		TH_LOG("%s", self->log.why);
	ASSERT_EQ(0, nl_get_hist(self->fd, hist, NULL));
}

TEST_F(rxpkt, untracked)
{
	const unsigned int sent = 400;
	struct netlat_hist hist;
	struct netlat_info info;
	unsigned int got;
	long long errs;

	/* the least budget: fewer packets than the flood queues */
	ASSERT_EQ(0, nl_set_table_bytes(self->fd, NETLAT_TABLE_BYTES_MIN));
	udp_flood(_metadata, self, sent, 16 << 20, &got, &errs, &hist, &info);
	ASSERT_EQ(NETLAT_TABLE_BYTES_MIN, info.table_bytes);
	ASSERT_LT(info.rx_pkts, sent);
	ASSERT_LT(8u, info.rx_pkts);
	TH_LOG("sent %u, read %u; followed %llu, not followed %llu (%llu for memory), table %u packets",
	       sent, got, (unsigned long long)hist.rx_packets,
	       (unsigned long long)hist.rx_untracked,
	       (unsigned long long)hist.rx_no_mem, info.rx_pkts);
	ASSERT_EQ(0, errs);
	ASSERT_EQ(sent, got);
	/*
	 * The table's memory filled: the rest was counted, not followed. A
	 * socket's first block may start past its first slot.
	 */
	EXPECT_GE((uint64_t)info.rx_pkts, hist.rx_packets);
	EXPECT_LT((uint64_t)info.rx_pkts - 8, hist.rx_packets);
	EXPECT_EQ(hist.rx_untracked, hist.rx_no_mem);
	EXPECT_EQ((uint64_t)got, hist.rx_packets + hist.rx_untracked);
}

/*
 * A listener in B deferring accept (TCP_DEFER_ACCEPT: it drops the bare
 * ACK of a handshake), a client from A connected to it; c describes the
 * pair for the records.
 */
static int deferred_pair(int *lfd, int *cli, struct nl_conn *c)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int secs = 5, ret = -1;

	*lfd = *cli = -1;
	memset(c, 0, sizeof(*c));
	c->cli = c->srv = -1;
	c->family = AF_INET;
	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	if (nl_ns_enter(g_ns_b))
		return -1;
	*lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lfd < 0 || bind(*lfd, (void *)&a, len) ||
	    setsockopt(*lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs,
		       sizeof(secs)) ||
	    listen(*lfd, 8) || getsockname(*lfd, (void *)&a, &len))
		goto out;
	c->dport = ntohs(a.sin_port);
	if (nl_ns_enter(g_ns_a))
		goto out;
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli < 0 || connect(*cli, (void *)&a, len))
		goto out;
	len = sizeof(a);
	if (getsockname(*cli, (void *)&a, &len))
		goto out;
	c->sport = ntohs(a.sin_port);
	ret = 0;
out:
	nl_ns_enter(nl_ns_home);
	return ret;
}

TEST_F_TIMEOUT(rxpkt, handshake_data, 60)
{
	static char buf[MSG_LEN];
	int lfd, cli, srv = -1, ret;
	struct netlat_probes after;
	struct netlat_hist hist;
	long long dr0, dr1;
	struct nl_conn c;
	uint64_t n, b;
	ssize_t got = 0, r;

	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	nl_need_groups(self->fd, &self->pr, NETLAT_PROBE_RX);
	/*
	 * One CPU for the whole exchange: the client's bare ACK, sent from
	 * a softirq, and the data must queue on the same CPU's backlog, or
	 * the data can overtake the ACK and complete the handshake first
	 * (seen once on the debug kernel under TCG), dropping nothing.
	 * The harness runs each test in a child of its own.
	 */
	ASSERT_EQ(0, nl_pin_thread(sched_getcpu()));
	dr0 = nl_mib(g_ns_b, "netstat", "TcpExt", "TCPDeferAcceptDrop");
	ASSERT_LE(0, dr0);
	ret = deferred_pair(&lfd, &cli, &c);
	/* the data completes the handshake: no tcp_v4_do_rcv for it */
	if (!ret && send(cli, buf, MSG_LEN, 0) != MSG_LEN)
		ret = -1;
	if (!ret)
		srv = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	while (srv >= 0 && got < MSG_LEN &&
	       (r = recv(srv, buf, MSG_LEN - got, 0)) > 0)
		got += r;
	dr1 = nl_mib(g_ns_b, "netstat", "TcpExt", "TCPDeferAcceptDrop");
	ASSERT_EQ(0, nl_collect_drain(self->fd, &self->log, &after))
		TH_LOG("%s", self->log.why);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, NULL));
	copied_of(&self->log, &c, NETLAT_RX_TCP, &n, &b);
	TH_LOG("TCPDeferAcceptDrop +%lld; read %zd; records: %llu packets, %llu bytes; rx_untracked %llu",
	       dr1 - dr0, got, (unsigned long long)n, (unsigned long long)b,
	       (unsigned long long)hist.rx_untracked);
	if (srv >= 0)
		close(srv);
	if (cli >= 0)
		close(cli);
	if (lfd >= 0)
		close(lfd);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(MSG_LEN, got);
	/* the handshake's bare ACK was dropped: the data completed it */
	ASSERT_LT(dr0, dr1);
	EXPECT_EQ((uint64_t)MSG_LEN, b);
	EXPECT_EQ(0ull, hist.rx_untracked);
}

TEST_F(rxpkt, udp_drops)
{
	const unsigned int sent = 200;
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	uint64_t dropped = 0, copied = 0;
	unsigned int got;
	long long errs;

	/* the smallest buffer: a few datagrams fit */
	udp_flood(_metadata, self, sent, 1, &got, &errs, &hist, NULL);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		if (!is_rx_pkt(h) || !rx_of(&p->flow, &self->udp))
			continue;
		if (p->flags & NETLAT_RXP_DROPPED) {
			dropped++;
			EXPECT_NE(0u, p->drop_reason);
			EXPECT_EQ(0u, p->flags & NETLAT_RXP_COPIED);
		}
		copied += !!(p->flags & NETLAT_RXP_COPIED);
	}
	TH_LOG("sent %u, read %u, RcvbufErrors +%lld; records: dropped %llu copied %llu",
	       sent, got, errs, (unsigned long long)dropped,
	       (unsigned long long)copied);
	ASSERT_LT(0, errs);
	/* each drop the kernel counted ended a packet of the table */
	EXPECT_EQ((uint64_t)errs, dropped);
	EXPECT_EQ(dropped, hist.rx_dropped);
	EXPECT_EQ((uint64_t)got, copied);
	EXPECT_EQ(sent, got + (unsigned int)errs);
}

TEST_F(rxpkt, lifetimes)
{
	static char buf[4 * MSG_LEN];
	struct netlat_info info;
	struct netlat_hist hist;
	const struct netlat_rec_hdr *h;
	uint64_t closed = 0, read = 0, cookie = 0;
	int inq = 0, tries = 0;

	/* no table while the group is off */
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(0ull, info.rx_mem_bytes);
	EXPECT_EQ(0u, info.rx_flows);
	EXPECT_EQ(0u, info.rx_pkts);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_RX, &self->pr));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_LT(0u, info.rx_flows);
	EXPECT_LT(0u, info.rx_pkts);
	/* within its share of the budget: 64-byte slots, and entries */
	EXPECT_GE(info.table_bytes / 8 * 3, info.rx_mem_bytes);
	EXPECT_LT((uint64_t)info.rx_pkts * 64 + info.rx_flows * 16ull,
		  info.rx_mem_bytes);

	/* TCP: half read, the rest left unread at close */
	ASSERT_EQ(0, nl_conn_connect(&self->tcp, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, set_int(self->tcp.cli, IPPROTO_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(0, messages(&self->tcp, false, 2, 0, &read));
	ASSERT_EQ(0, nl_send_all(self->tcp.cli, buf, sizeof(buf)));
	while (!ioctl(self->tcp.srv, FIONREAD, &inq) &&
	       inq < (int)sizeof(buf) && tries++ < 5000)
		nl_sleep_ms(1);
	ASSERT_EQ((int)sizeof(buf), inq);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, NULL));
	EXPECT_LE(1ull, hist.rx_flows);
	close(self->tcp.srv);
	self->tcp.srv = -1;

	/* UDP: a socket with datagrams in the table as the group goes off */
	ASSERT_EQ(0, udp_open(&self->udp));
	ASSERT_EQ(0, udp_burst(&self->udp, 8, 100));
	nl_sleep_ms(100);
	ASSERT_EQ(0, nl_collect(self->fd, &self->log, self->pr.nmissed))
		TH_LOG("%s", self->log.why);
	/*
	 * The socket's cookie from the packets it read: at its destruction
	 * TCP has given its port back already (the flow's port reads 0).
	 */
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		if (is_rx_pkt(h) && rx_of(&p->flow, &self->tcp) &&
		    (p->flags & NETLAT_RXP_COPIED))
			cookie = p->flow.cookie;
	}
	ASSERT_NE(0ull, cookie);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_rx_pkt *p = (const void *)h;

		if (!is_rx_pkt(h) || p->flow.cookie != cookie ||
		    !(p->flags & NETLAT_RXP_CLOSED))
			continue;
		EXPECT_EQ(0u, p->flags & NETLAT_RXP_COPIED);
		closed += p->len;
	}
	/* what the reader never read ended with its socket */
	EXPECT_EQ(sizeof(buf), closed);
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(0ull, info.rx_mem_bytes);
	ASSERT_EQ(0, nl_get_hist(self->fd, &hist, NULL));
	EXPECT_EQ(0ull, hist.rx_flows);
	/* and on again: a fresh table, the old datagrams not in it */
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_RX, &self->pr));
	EXPECT_EQ(8u, udp_drain(&self->udp));
	/* a level change with packets in the table */
	ASSERT_EQ(0, udp_burst(&self->udp, 8, 100));
	nl_sleep_ms(100);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	EXPECT_EQ(8u, udp_drain(&self->udp));
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
}

TEST_HARNESS_MAIN
