// SPDX-License-Identifier: GPL-2.0
/*
 * The packet level's histograms by key (netlat config --by): two services,
 * port 7001 in namespace B (clients in A) behind a 20 ms netem delay on
 * B's egress, port 7002 in D (clients in C) without one.
 *
 * by_port: a key per service; 7001's driver>ack is never below the delay
 *	(its ACKs cross it), 7002's median is; each key's bytes are what
 *	its client sent (and its FIN), its received bytes what its server
 *	read; the keys and the other add up to the host's histograms,
 *	bucket by bucket, and each key's are its packet records'.
 * by_port_netns: a key per service and namespace, each with the bytes of
 *	its side: the clients' sent, the servers' received.
 * bounded: one slot for two services: the second's sockets are folded
 *	into the other, counted; once the first is idle it is evicted and
 *	the second takes the slot; the sums still add up.
 * busiest: one slot; a far busier key takes it from one that is never
 *	idle.
 * by_cgroup_port: each service in a cgroup of its own: a key per cgroup
 *	and port, named by its path in netlat stat and the exporter.
 * bad_input: unknown key fields, too many keys, a key beyond the slots,
 *	a reset of one key, a caller too old for the fields: -EINVAL.
 */
#include "netlat_util.h"
#include "netlat_tcp.h"
#include "netlat_nl.h"
#include <sys/stat.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define ADDR_C	"198.51.100.1"
#define ADDR_D	"198.51.100.2"
#define PORT_1	7001	/* in B, delayed */
#define PORT_2	7002	/* in D */
#define MS	1000000ull
#define DELAY_MS 20
#define BYTES	(256u << 10)

#define GROUPS (NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
		NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV | \
		NETLAT_PROBE_TCP_RETRANS | NETLAT_PROBE_RX)

static int g_ns[4] = { -1, -1, -1, -1 };	/* A, B, C, D */
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) keys_topology(void)
{
	if (nl_device_info(&g_def, g_skip, sizeof(g_skip)))
		return;
	if (!nl_pair_ns(&g_ns[0], "nka0", ADDR_A, &g_ns[1], "nkb0", ADDR_B,
			g_skip, sizeof(g_skip)))
		nl_pair_ns(&g_ns[2], "nkc0", ADDR_C, &g_ns[3], "nkd0", ADDR_D,
			   g_skip, sizeof(g_skip));
}

/* netem on B's device: @delay_ms on what B sends (the ACKs of 7001). */
static int delay_b(uint32_t delay_ms)
{
	int ret = nl_ns_enter(g_ns[1]);

	if (!ret)
		ret = nlr_netem_full("nkb0", 0, delay_ms * 1000, 0);
	nl_ns_enter(nl_ns_home);
	return ret;
}

static uint32_t ns_inode(int ns)
{
	struct stat st;

	return fstat(ns, &st) ? 0 : (uint32_t)st.st_ino;
}

static int set_keys(int fd, uint32_t by, uint32_t max)
{
	struct netlat_config cfg = {
		.flags = NETLAT_CONFIG_KEYS, .key_by = by, .max_keys = max,
	};

	return nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
}

/* One key's (or the host's: 0) histograms and counters. */
struct key_read {
	struct netlat_hist h;
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
};

static int read_key(int fd, uint32_t key, struct key_read *r)
{
	memset(r, 0, sizeof(*r));
	r->h.nr_stages = NETLAT_NR_STAGES;
	r->h.stage_size = sizeof(r->st[0]);
	r->h.stages = (uintptr_t)r->st;
	r->h.key = key;
	return nl_ioctl(fd, NETLAT_IOC_HIST, &r->h, sizeof(r->h));
}

/* Every slot in use, and the other's, into @k (room for 1 + @max). */
static int read_keys(int fd, uint32_t max, struct key_read *k, unsigned int *n)
{
	struct key_read r;
	uint32_t i;
	int ret;

	*n = 0;
	for (i = 1; i <= max; i++) {
		ret = read_key(fd, i, &r);
		if (ret)
			return ret;
		if (r.h.key_flags & NETLAT_HIST_KEY_USED)
			k[(*n)++] = r;
	}
	ret = read_key(fd, NETLAT_HIST_KEY_OTHER, &k[*n]);
	if (!ret)
		(*n)++;
	return ret;
}

/*
 * The keys @k (the other last) add up to the host's @host: every stage's
 * count, sum and buckets, the counters a key has; "" or what differs.
 */
static const char *keys_add_up(const struct key_read *host,
			       const struct key_read *k, unsigned int n,
			       char *why, size_t len)
{
	uint64_t c, sum, b[NETLAT_HIST_BUCKETS];
	unsigned int s, i, j;

	for (s = 0; s < NETLAT_NR_STAGES; s++) {
		memset(b, 0, sizeof(b));
		for (c = sum = 0, i = 0; i < n; i++) {
			c += k[i].st[s].count;
			sum += k[i].st[s].sum_ns;
			for (j = 0; j < NETLAT_HIST_BUCKETS; j++)
				b[j] += k[i].st[s].bucket[j];
		}
		if (c != host->st[s].count || sum != host->st[s].sum_ns ||
		    memcmp(b, host->st[s].bucket, sizeof(b))) {
			snprintf(why, len, "stage %u: keys %llu samples, host %llu",
				 s, (unsigned long long)c,
				 (unsigned long long)host->st[s].count);
			return why;
		}
	}
#define SUM_FIELD(f)							\
	do {								\
		for (c = 0, i = 0; i < n; i++)				\
			c += k[i].h.f;					\
		if (c != host->h.f) {					\
			snprintf(why, len, #f ": keys %llu, host %llu",	\
				 (unsigned long long)c,			\
				 (unsigned long long)host->h.f);	\
			return why;					\
		}							\
	} while (0)
	SUM_FIELD(packets);
	SUM_FIELD(bytes);
	SUM_FIELD(segs);
	SUM_FIELD(rx_packets);
	SUM_FIELD(rx_bytes);
#undef SUM_FIELD
	return "";
}

static const struct key_read *key_of(const struct key_read *k, unsigned int n,
				     uint16_t port, uint32_t netns)
{
	unsigned int i;

	for (i = 0; i + 1 < n; i++)
		if (k[i].h.key_port == port && k[i].h.key_netns == netns)
			return &k[i];
	return NULL;
}

/* Samples of @st below 2^(@b - 1) ns: in buckets under @b. */
static uint64_t below_bucket(const struct netlat_stage_hist *st, unsigned int b)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < b; i++)
		n += st->bucket[i];
	return n;
}

/* netlat stat --prometheus's driver>ack count of @port is @k's. */
static void prometheus_has(struct __test_metadata *_metadata,
			   const struct key_read *k, uint16_t port)
{
	const char *file = "/tmp/netlat_keys.prom";
	static char out[1 << 20];
	char want[160];
	size_t n;
	FILE *f;

	if (access("/bin/netlat", X_OK))
		return;
	ASSERT_EQ(0, system("/bin/netlat stat --prometheus /tmp/netlat_keys.prom"));
	f = fopen(file, "r");
	ASSERT_NE(NULL, f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	fclose(f);
	unlink(file);
	snprintf(want, sizeof(want),
		 "\nnetlat_key_tcp_stage_seconds_count{port=\"%u\",stage=\"driver_ack\"} %llu\n",
		 port, (unsigned long long)k->st[NETLAT_STAGE_DRIVER_ACK].count);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("no %s", want + 1);
	snprintf(want, sizeof(want), "\nnetlat_key_tcp_bytes_total{port=\"%u\"} %llu\n",
		 port, (unsigned long long)k->h.bytes);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("no %s", want + 1);
}

/*
 * @k's histograms are those of the packet records of its service @port
 * in @l, sent and received, bucket by bucket.
 */
static void records_give_key(struct __test_metadata *_metadata,
			     const struct nl_log *l, const struct key_read *k,
			     uint16_t port)
{
	static struct netlat_stage_hist mine[NETLAT_NR_STAGES];
	const struct netlat_rec_hdr *h;
	unsigned int s, n = 0;
	char why[160];
	uint64_t d;

	memset(mine, 0, sizeof(mine));
	nl_log_for_each(l, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;
		const struct netlat_rec_rx_pkt *r = (const void *)h;

		if (h->type == NETLAT_REC_TCP_PKT &&
		    (p->flow.sport == port || p->flow.dport == port)) {
			n++;
			for (s = 0; s < NETLAT_NR_STAGES; s++)
				if (nl_pkt_sample(p, s, &d))
					nl_hist_add(&mine[s], d);
		} else if (h->type == NETLAT_REC_RX_PKT &&
			   (r->flow.sport == port || r->flow.dport == port)) {
			n++;
			for (s = 0; s < NETLAT_NR_STAGES; s++)
				if (nl_rx_sample(r, s, &d))
					nl_hist_add(&mine[s], d);
		}
	}
	TH_LOG("%u: %u packet records, driver>ack %llu samples", port, n,
	       (unsigned long long)mine[NETLAT_STAGE_DRIVER_ACK].count);
	ASSERT_LT(0u, n);
	EXPECT_EQ(0, nl_hist_diff(mine, k->st, why, sizeof(why)))
		TH_LOG("key %u against its records: %s", port, why);
}

FIXTURE(keys) {
	int fd;
	struct netlat_probes pr;
	struct nl_log log;
	struct nl_conn conn[2];
	struct key_read host;
	struct key_read k[16];
	unsigned int n;
};

FIXTURE_SETUP(keys)
{
	self->fd = -1;
	self->conn[0].cli = self->conn[0].srv = -1;
	self->conn[1].cli = self->conn[1].srv = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
				g_def.nr_cpus));
	if (nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0))
		SKIP(longjmp(_metadata->env, 1), "no packet level");
	ASSERT_EQ(0, delay_b(0));
}

FIXTURE_TEARDOWN(keys)
{
	nl_conn_close(&self->conn[0]);
	nl_conn_close(&self->conn[1]);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, set_keys(self->fd, 0, 0));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		close(self->fd);
	}
	nl_log_free(&self->log);
	delay_b(0);
}

/*
 * Connection @i of the fixture (closed first if open) to @port of @srv
 * from @cli: BYTES sent, read, the client's FIN ACKed; the server's end
 * stays open (its FIN would count as a byte sent).
 */
static void transfer(struct __test_metadata *_metadata,
		     FIXTURE_DATA(keys) *self, int i, int cli, int srv,
		     const char *addr, uint16_t port)
{
	static char buf[BYTES];
	struct nl_conn *c = &self->conn[i];

	nl_conn_close(c);
	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ(0, nl_conn_open(c, cli, srv, addr, port));
	ASSERT_EQ(0, nl_send_all(c->cli, buf, sizeof(buf)));
	ASSERT_TRUE(nl_conn_finish(c, 60));
	ASSERT_EQ(BYTES, c->rx_bytes);
}

/* The packet level afresh, with keys @by and @max. */
static void start(struct __test_metadata *_metadata, FIXTURE_DATA(keys) *self,
		  uint32_t by, uint32_t max)
{
	nl_need_groups(self->fd, &self->pr, GROUPS);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, set_keys(self->fd, by, max));
}

/*
 * Everything read after the last packet's end: host, keys, other; again
 * if an eviction moved a key's sums to the other's between the reads.
 */
static void read_all(struct __test_metadata *_metadata,
		     FIXTURE_DATA(keys) *self, uint32_t max)
{
	char why[128];
	int i;

	/* the last ACK's and read's handlers may still run elsewhere */
	nl_sleep_ms(200);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, read_key(self->fd, 0, &self->host));
		ASSERT_EQ(0, read_keys(self->fd, max, self->k, &self->n));
		if (self->k[self->n - 1].h.keys_evicted ==
		    self->host.h.keys_evicted)
			break;
	}
	ASSERT_STREQ("", keys_add_up(&self->host, self->k, self->n, why,
				     sizeof(why)));
}

TEST_F(keys, by_port)
{
	const struct key_read *k1, *k2, *other;
	uint64_t floor = DELAY_MS * MS, p50;

	start(_metadata, self, NETLAT_KEY_PORT, 8);
	ASSERT_EQ(0, delay_b(DELAY_MS));
	transfer(_metadata, self, 0, g_ns[0], g_ns[1], ADDR_B, PORT_1);
	transfer(_metadata, self, 1, g_ns[2], g_ns[3], ADDR_D, PORT_2);
	read_all(_metadata, self, 8);

	EXPECT_EQ((uint32_t)NETLAT_KEY_PORT, self->host.h.key_by);
	EXPECT_EQ(8u, self->host.h.max_keys);
	EXPECT_LT(0ull, self->host.h.keys_mem_bytes);
	ASSERT_EQ(3u, self->n) TH_LOG("two keys and the other");
	k1 = key_of(self->k, self->n, PORT_1, 0);
	k2 = key_of(self->k, self->n, PORT_2, 0);
	other = &self->k[self->n - 1];
	ASSERT_NE(NULL, k1);
	ASSERT_NE(NULL, k2);
	EXPECT_EQ(0ull, other->h.packets + other->h.rx_packets);
	EXPECT_EQ(0ull, self->host.h.keys_folded);
	/* the client's bytes and its FIN; what the server read */
	EXPECT_EQ(BYTES + 1ull, k1->h.bytes);
	EXPECT_EQ(BYTES + 1ull, k2->h.bytes);
	if (self->pr.enabled & NETLAT_PROBE_RX) {
		EXPECT_EQ((uint64_t)BYTES, k1->h.rx_bytes);
		EXPECT_EQ((uint64_t)BYTES, k2->h.rx_bytes);
	}
	/* every ACK of 7001 crossed the delay: nothing below 2^24 ns */
	ASSERT_LT(0ull, k1->st[NETLAT_STAGE_DRIVER_ACK].count);
	EXPECT_EQ(0ull, below_bucket(&k1->st[NETLAT_STAGE_DRIVER_ACK],
				     25));
	EXPECT_LE(floor, k1->st[NETLAT_STAGE_DRIVER_ACK].sum_ns /
			 k1->st[NETLAT_STAGE_DRIVER_ACK].count);
	ASSERT_LT(0ull, k2->st[NETLAT_STAGE_DRIVER_ACK].count);
	p50 = below_bucket(&k2->st[NETLAT_STAGE_DRIVER_ACK], 25);
	TH_LOG("7001 driver>ack: %llu samples, max %llu ns; 7002: %llu of %llu below 16.7 ms",
	       (unsigned long long)k1->st[NETLAT_STAGE_DRIVER_ACK].count,
	       (unsigned long long)k1->st[NETLAT_STAGE_DRIVER_ACK].max_ns,
	       (unsigned long long)p50,
	       (unsigned long long)k2->st[NETLAT_STAGE_DRIVER_ACK].count);
	EXPECT_LT(k2->st[NETLAT_STAGE_DRIVER_ACK].count / 2, p50);
	prometheus_has(_metadata, k1, PORT_1);
	prometheus_has(_metadata, k2, PORT_2);

	/* a record per packet: each key is what its records give */
	{
		struct netlat_probes pr;

		ASSERT_EQ(0, nl_collect_drain(self->fd, &self->log, &pr))
			TH_LOG("%s", self->log.why);
		records_give_key(_metadata, &self->log, k1, PORT_1);
		records_give_key(_metadata, &self->log, k2, PORT_2);
	}

	/* what netlat stat --hist --by port prints of them */
	if (!access("/bin/netlat", X_OK)) {
		static char out[1 << 16];
		char want[96];
		FILE *f = popen("/bin/netlat stat --hist --by port --json", "r");
		size_t n;

		ASSERT_NE(NULL, f);
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = 0;
		EXPECT_EQ(0, pclose(f));
		snprintf(want, sizeof(want), "{\"port\":%u,\"packets\":%llu,\"bytes\":%llu,",
			 PORT_1, (unsigned long long)k1->h.packets,
			 (unsigned long long)k1->h.bytes);
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s not in %s", want, out);
		EXPECT_NE(NULL, strstr(out, "{\"other\":true,\"packets\":0,"));
		EXPECT_EQ(0, system("/bin/netlat info | grep -q '^keys  *by port, 8 at most, '"));
	}
}

TEST_F(keys, by_port_netns)
{
	const uint32_t by = NETLAT_KEY_PORT | NETLAT_KEY_NETNS;
	const struct key_read *a, *b, *c, *d;

	start(_metadata, self, by, 8);
	transfer(_metadata, self, 0, g_ns[0], g_ns[1], ADDR_B, PORT_1);
	transfer(_metadata, self, 1, g_ns[2], g_ns[3], ADDR_D, PORT_2);
	read_all(_metadata, self, 8);

	a = key_of(self->k, self->n, PORT_1, ns_inode(g_ns[0]));
	b = key_of(self->k, self->n, PORT_1, ns_inode(g_ns[1]));
	c = key_of(self->k, self->n, PORT_2, ns_inode(g_ns[2]));
	d = key_of(self->k, self->n, PORT_2, ns_inode(g_ns[3]));
	ASSERT_EQ(5u, self->n) TH_LOG("four keys and the other");
	ASSERT_TRUE(a && b && c && d);
	EXPECT_EQ(BYTES + 1ull, a->h.bytes);
	EXPECT_EQ(BYTES + 1ull, c->h.bytes);
	/* the servers sent nothing yet (their FIN comes at the close) */
	EXPECT_EQ(0ull, b->h.bytes);
	EXPECT_EQ(0ull, d->h.bytes);
	if (self->pr.enabled & NETLAT_PROBE_RX) {
		EXPECT_EQ((uint64_t)BYTES, b->h.rx_bytes);
		EXPECT_EQ((uint64_t)BYTES, d->h.rx_bytes);
		EXPECT_EQ(0ull, a->h.rx_bytes);
	}
}

TEST_F_TIMEOUT(keys, bounded, 120)
{
	const struct key_read *k1, *k2, *other;
	uint64_t folded;
	int i;


	start(_metadata, self, NETLAT_KEY_PORT, 1);
	transfer(_metadata, self, 0, g_ns[0], g_ns[1], ADDR_B, PORT_1);
	/* no slot for 7002: counted as other, and as folded */
	transfer(_metadata, self, 1, g_ns[2], g_ns[3], ADDR_D, PORT_2);
	read_all(_metadata, self, 1);
	folded = self->host.h.keys_folded;
	EXPECT_LE(2ull, folded) TH_LOG("7002's client and server");
	/* unless 7001 was idle long enough already (a slow kernel) */
	if (!self->host.h.keys_evicted) {
		ASSERT_EQ(2u, self->n);
		k1 = key_of(self->k, self->n, PORT_1, 0);
		other = &self->k[1];
		ASSERT_NE(NULL, k1);
		EXPECT_EQ(BYTES + 1ull, k1->h.bytes);
		EXPECT_EQ(BYTES + 1ull, other->h.bytes);
	}
	/* 7001's sockets stay, idle */

	/* 7001 idle: 7002 takes its slot within a few of the work's looks */
	for (i = 0; i < 10; i++) {
		transfer(_metadata, self, 1, g_ns[2], g_ns[3], ADDR_D, PORT_2);
		read_all(_metadata, self, 1);
		if (key_of(self->k, self->n, PORT_2, 0))
			break;
		nl_sleep_ms(1000);
	}
	k2 = key_of(self->k, self->n, PORT_2, 0);
	ASSERT_NE(NULL, k2) TH_LOG("7002 never got the slot");
	EXPECT_LE(1ull, self->host.h.keys_evicted);
	/* the evicted key's packets went to the other: all still add up */
	EXPECT_LE(2 * (BYTES + 1ull), self->k[self->n - 1].h.bytes);
	TH_LOG("after %d rounds: evicted %llu, folded %llu, 7002's slot %llu bytes",
	       i, (unsigned long long)self->host.h.keys_evicted,
	       (unsigned long long)self->host.h.keys_folded,
	       (unsigned long long)k2->h.bytes);
}

/*
 * busiest: one slot; 7001 takes it and stays busy a little (a byte every
 * 300 ms: never idle for the work's second), while 7002, folded, is far
 * busier (16 KiB every 20 ms): the slot goes to 7002, and 7001 is folded
 * in its turn. A policy of evicting idle keys only never hands it over.
 */
TEST_F_TIMEOUT(keys, busiest, 120)
{
	static char buf[16384];
	const struct key_read *k1, *k2;
	uint64_t start_ns, other;
	unsigned int i;

	start(_metadata, self, NETLAT_KEY_PORT, 1);
	ASSERT_EQ(0, nl_conn_open(&self->conn[0], g_ns[0], g_ns[1], ADDR_B, PORT_1));
	ASSERT_EQ(0, nl_send_all(self->conn[0].cli, buf, 1));
	nl_sleep_ms(100);
	ASSERT_EQ(0, nl_conn_open(&self->conn[1], g_ns[2], g_ns[3], ADDR_D, PORT_2));
	start_ns = nl_mono_ns();
	for (i = 1;; i++) {
		ASSERT_EQ(0, nl_send_all(self->conn[1].cli, buf, sizeof(buf)));
		if (!(i % 15))
			ASSERT_EQ(0, nl_send_all(self->conn[0].cli, buf, 1));
		nl_sleep_ms(20);
		if (i % 30)
			continue;
		ASSERT_EQ(0, read_keys(self->fd, 1, self->k, &self->n));
		if (key_of(self->k, self->n, PORT_2, 0))
			break;
		ASSERT_GT(30000000000ull, nl_mono_ns() - start_ns)
			TH_LOG("7002 never got the slot");
	}
	TH_LOG("7002 took the slot after %.1f s",
	       (nl_mono_ns() - start_ns) / 1e9);
	other = self->k[self->n - 1].h.packets;
	/*
	 * Both go on (7002 never idle, so it keeps the slot): 7002's sockets
	 * find their slot, 7001's packets are the other's.
	 */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, nl_send_all(self->conn[1].cli, buf, sizeof(buf)));
		ASSERT_EQ(0, nl_send_all(self->conn[0].cli, buf, 1));
		nl_sleep_ms(300);
	}
	read_all(_metadata, self, 1);
	k1 = key_of(self->k, self->n, PORT_1, 0);
	k2 = key_of(self->k, self->n, PORT_2, 0);
	EXPECT_EQ(NULL, k1);
	ASSERT_NE(NULL, k2);
	EXPECT_LE(1ull, self->host.h.keys_evicted);
	/* 7002's client and server, then 7001's */
	EXPECT_LE(4ull, self->host.h.keys_folded);
	EXPECT_LE(other + 3, self->k[self->n - 1].h.packets)
		TH_LOG("7001's packets not in the other");
	EXPECT_LT(0ull, k2->h.packets) TH_LOG("7002's sockets never found the slot");
	TH_LOG("evicted %llu, folded %llu, 7002's slot %llu packets",
	       (unsigned long long)self->host.h.keys_evicted,
	       (unsigned long long)self->host.h.keys_folded,
	       (unsigned long long)k2->h.packets);
}

/* the VM's cgroup2 hierarchy (nl_cgroup2() mounts it if nothing did) */
#define CG_ROOT	"/sys/fs/cgroup"

/* This process into cgroup @dir ("" the root); its id, 0 on failure. */
static uint64_t cg_enter(const char *dir)
{
	char path[256];
	struct stat st;
	int fd, ok;

	snprintf(path, sizeof(path), CG_ROOT "%s%s", *dir ? "/" : "", dir);
	if (*dir && mkdir(path, 0755) && errno != EEXIST)
		return 0;
	if (stat(path, &st))
		return 0;
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/cgroup.procs");
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return 0;
	ok = write(fd, "0", 1) == 1;	/* "0": the writer */
	close(fd);
	return ok ? st.st_ino : 0;
}

/*
 * A popen()ed command's output, into @out of @len; the command's status
 * checked.
 */
static void cmd_out(struct __test_metadata *_metadata, const char *cmd,
		    char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n;

	ASSERT_NE(NULL, f);
	n = fread(out, 1, len - 1, f);
	out[n] = 0;
	EXPECT_EQ(0, pclose(f)) TH_LOG("%s", cmd);
}

/*
 * by_cgroup_port: each service's sockets made in a cgroup of its own
 * (a socket keeps the cgroup of the task that made it; an accepted one
 * the listener's): a key per cgroup and port, its id the directory's
 * inode, its bytes the client's; the tools name the cgroup by its path.
 */
TEST_F(keys, by_cgroup_port)
{
	const uint32_t by = NETLAT_KEY_CGROUP | NETLAT_KEY_PORT;
	const struct key_read *k1 = NULL, *k2 = NULL;
	static char out[1 << 20];
	uint64_t id1, id2;
	char want[256];
	unsigned int i;

	if (!nl_cgroup2(CG_ROOT))
		SKIP(return, "no cgroup2");
	start(_metadata, self, by, 8);
	id1 = cg_enter("netlat_k1");
	ASSERT_NE(0ull, id1);
	transfer(_metadata, self, 0, g_ns[0], g_ns[1], ADDR_B, PORT_1);
	id2 = cg_enter("netlat_k2");
	ASSERT_NE(0ull, id2);
	transfer(_metadata, self, 1, g_ns[2], g_ns[3], ADDR_D, PORT_2);
	ASSERT_NE(0ull, cg_enter(""));
	read_all(_metadata, self, 8);

	ASSERT_EQ(3u, self->n) TH_LOG("two keys and the other");
	for (i = 0; i + 1 < self->n; i++) {
		if (self->k[i].h.key_cgroup == id1)
			k1 = &self->k[i];
		if (self->k[i].h.key_cgroup == id2)
			k2 = &self->k[i];
	}
	ASSERT_NE(NULL, k1) TH_LOG("no key of cgroup %llu", (unsigned long long)id1);
	ASSERT_NE(NULL, k2) TH_LOG("no key of cgroup %llu", (unsigned long long)id2);
	EXPECT_EQ(PORT_1, k1->h.key_port);
	EXPECT_EQ(PORT_2, k2->h.key_port);
	EXPECT_EQ(BYTES + 1ull, k1->h.bytes);
	EXPECT_EQ(BYTES + 1ull, k2->h.bytes);
	if (self->pr.enabled & NETLAT_PROBE_RX) {
		EXPECT_EQ((uint64_t)BYTES, k1->h.rx_bytes);
		EXPECT_EQ((uint64_t)BYTES, k2->h.rx_bytes);
	}
	if (access("/bin/netlat", X_OK))
		goto out;
	cmd_out(_metadata, "/bin/netlat stat --hist --by cgroup --json", out,
		sizeof(out));
	snprintf(want, sizeof(want), "{\"cgroup\":%llu,\"cgroup_path\":\"/netlat_k1\",\"packets\":%llu,",
		 (unsigned long long)id1, (unsigned long long)k1->h.packets);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s not in %s", want, out);
	ASSERT_EQ(0, system("/bin/netlat stat --prometheus /tmp/netlat_cg.prom"));
	cmd_out(_metadata, "cat /tmp/netlat_cg.prom", out, sizeof(out));
	unlink("/tmp/netlat_cg.prom");
	snprintf(want, sizeof(want),
		 "\nnetlat_key_tcp_bytes_total{port=\"%u\",cgroup=\"%llu\",cgroup_path=\"/netlat_k2\"} %llu\n",
		 PORT_2, (unsigned long long)id2, (unsigned long long)k2->h.bytes);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("no %s", want + 1);
out:
	/* their sockets still hold them: removed, they linger as dying */
	EXPECT_EQ(0, rmdir(CG_ROOT "/netlat_k1"));
	EXPECT_EQ(0, rmdir(CG_ROOT "/netlat_k2"));
}

TEST_F(keys, bad_input)
{
	struct netlat_config cfg = {
		.flags = NETLAT_CONFIG_KEYS, .key_by = NETLAT_KEY_PORT,
	};
	struct key_read r;

	EXPECT_EQ(-EINVAL, set_keys(self->fd, 1U << 3, 0));
	EXPECT_EQ(-EINVAL, set_keys(self->fd, NETLAT_KEY_PORT,
				    NETLAT_MAX_KEYS_MAX + 1));
	/* a caller whose struct ends before the fields cannot mean them */
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    offsetof(struct netlat_config, key_by)));
	/* no keys: only the host's */
	EXPECT_EQ(-EINVAL, read_key(self->fd, 1, &r));
	EXPECT_EQ(-EINVAL, read_key(self->fd, NETLAT_HIST_KEY_OTHER, &r));
	ASSERT_EQ(0, set_keys(self->fd, NETLAT_KEY_PORT, 4));
	EXPECT_EQ(0, read_key(self->fd, 4, &r));
	EXPECT_EQ(0u, r.h.key_flags);
	EXPECT_EQ(-EINVAL, read_key(self->fd, 5, &r));
	memset(&r, 0, sizeof(r));
	r.h.key = 1;
	r.h.flags = NETLAT_HIST_RESET;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_HIST, &r.h,
				    sizeof(r.h)));
	EXPECT_EQ(4u, (read_key(self->fd, 0, &r), r.h.max_keys));
	/* keys off again */
	ASSERT_EQ(0, set_keys(self->fd, 0, 0));
	EXPECT_EQ(0u, (read_key(self->fd, 0, &r), r.h.key_by));
}

TEST_HARNESS_MAIN
