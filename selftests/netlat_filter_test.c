// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel filters (NETLAT_IOC_FILTERS) and netlat_rec_tcp_ack.xmit_ack_ns,
 * against oracles netlat does not produce: the bytes and send() calls this
 * program makes on each flow (and the receiver's byte count), the network
 * namespaces it creates, its process ids and the netem delay it sets.
 *
 * Topology, built once at program start: namespace B holds the receivers;
 * flow 1 comes from namespace A (nfa0 192.0.2.1 - nfb0 192.0.2.2, port
 * 5001), flow 2 from namespace C (nfc0 198.51.100.1 - nfd0 198.51.100.2,
 * port 5002), so the flows differ in address, port and sender namespace.
 * A netem root qdisc on nfa0 delays flow 1's data when asked. Needs root,
 * the module, veth and sch_netem; skips otherwise. Every test leaves no
 * rule behind.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "netlat_tcp.h"
#include "netlat_filter.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B1	"192.0.2.2"
#define ADDR_C	"198.51.100.1"
#define ADDR_B2	"198.51.100.2"
#define PORT_1	5001
#define PORT_2	5002
#define MiB	(1024ull * 1024)
#define MS	1000000ull
#define DEV_A_NAME	"nfa0"

/* groups whose records the flow tests check */
#define GROUPS_RULED	(NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
			 NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV)
#define GROUPS_ALL	(GROUPS_RULED | NETLAT_PROBE_TCP_SKB)

static int g_ns_a = -1, g_ns_b = -1, g_ns_c = -1;
static uint32_t g_ino_a;
static char g_net_skip[128];
static char g_dev_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) filter_topology(void)
{
	static const struct nl_pair ab = { "nfa0", ADDR_A, "nfb0", ADDR_B1 };
	static const struct nl_pair cb = { "nfc0", ADDR_C, "nfd0", ADDR_B2 };
	const char *step = "namespaces and veths";
	struct stat st;
	int ret;

	nl_device_info(&g_def, g_dev_skip, sizeof(g_dev_skip));
	ret = nl_two_senders(&g_ns_a, &g_ns_b, &g_ns_c, &ab, &cb);
	if (ret)
		goto fail;
	step = "fstat";
	ret = fstat(g_ns_a, &st) ? -errno : 0;
	if (ret)
		goto fail;
	g_ino_a = st.st_ino;
	step = "netem";
	ret = nl_ns_enter(g_ns_a);
	if (!ret)
		ret = nlr_netem(DEV_A_NAME, 0);
	nl_ns_enter(nl_ns_home);
	if (!ret)
		return;
fail:
	snprintf(g_net_skip, sizeof(g_net_skip), "%s: %s", step,
		 strerror(-ret));
	if (nl_ns_home >= 0)
		nl_ns_enter(nl_ns_home);
}

/* netem on flow 1's sending device: delay in microseconds */
static int set_delay(uint32_t us)
{
	int ret = nl_ns_enter(g_ns_a);

	if (!ret)
		ret = nlr_netem_full(DEV_A_NAME, 0, us, 0);
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* ---- rules ---------------------------------------------------------- */

static struct netlat_filter_rule rule_port(uint64_t groups, uint16_t port)
{
	return (struct netlat_filter_rule){
		.groups = groups, .match = NETLAT_MATCH_PORT, .port = port,
	};
}

static struct netlat_filter_rule rule_addr4(uint64_t groups, const char *a,
					    uint8_t plen)
{
	struct netlat_filter_rule r = {
		.groups = groups, .match = NETLAT_MATCH_ADDR,
		.family = AF_INET, .prefix_len = plen,
	};

	inet_pton(AF_INET, a, r.addr);
	return r;
}

/* ---- fixture --------------------------------------------------------- */

FIXTURE(filter) {
	int fd;
	struct nl_log log;
	struct nl_conn c1, c2;
	struct netlat_probes pr;
};

FIXTURE_SETUP(filter)
{
	self->fd = -1;
	self->c1.cli = self->c1.srv = self->c2.cli = self->c2.srv = -1;
	if (g_dev_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_dev_skip);
	if (g_net_skip[0])
		SKIP(longjmp(_metadata->env, 1), "topology: %s", g_net_skip);
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
				g_def.nr_cpus));
	ASSERT_EQ(0, nl_set_rules(self->fd, NULL, 0));
	ASSERT_EQ(0, set_delay(0));
}

FIXTURE_TEARDOWN(filter)
{
	nl_conn_close(&self->c1);
	nl_conn_close(&self->c2);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_filters_done(self->fd, &g_def));
		close(self->fd);
	}
	set_delay(0);
	nl_log_free(&self->log);
}

static void need_groups(struct __test_metadata *_metadata,
			FIXTURE_DATA(filter) *self, uint64_t groups)
{
	if ((self->pr.available & groups) != groups)
		SKIP(longjmp(_metadata->env, 1), "groups 0x%llx missing",
		     (unsigned long long)(groups & ~self->pr.available));
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
}

static void drain(struct __test_metadata *_metadata, FIXTURE_DATA(filter) *self)
{
	ASSERT_EQ(0, nl_collect(self->fd, &self->log, self->pr.nmissed))
		TH_LOG("%s", self->log.why);
}

/* ---- traffic on both flows at once ----------------------------------- */

#define N_SENDS	48

static size_t send_size(unsigned int i)
{
	return 1000 + (i * 2749) % 9000;
}

struct sender {
	int fd;
	pthread_t th;
	int err;
	uint64_t bytes;
};

/* The sends of one flow: N_SENDS calls of send_size(i) bytes each. */
static int send_pattern(int fd, uint64_t *bytes)
{
	static const char buf[10000];
	unsigned int i;

	*bytes = 0;
	for (i = 0; i < N_SENDS; i++) {
		if (send(fd, buf, send_size(i), 0) != (ssize_t)send_size(i))
			return -1;
		*bytes += send_size(i);
	}
	return 0;
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	s->err = send_pattern(s->fd, &s->bytes);
	return NULL;
}

static void open_flows(struct __test_metadata *_metadata,
		       FIXTURE_DATA(filter) *self)
{
	ASSERT_EQ(0, nl_conn_open(&self->c1, g_ns_a, g_ns_b, ADDR_B1, PORT_1));
	ASSERT_EQ(0, nl_conn_open(&self->c2, g_ns_c, g_ns_b, ADDR_B2, PORT_2));
}

/* Send on both flows at once from two threads; finish both. */
static void two_flows(struct __test_metadata *_metadata,
		      FIXTURE_DATA(filter) *self, uint64_t *f0)
{
	struct sender s[2] = {};
	unsigned int i;

	open_flows(_metadata, self);
	s[0].fd = self->c1.cli;
	s[1].fd = self->c2.cli;
	*f0 = nl_filtered(self->fd, g_def.nr_cpus);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&s[i].th, NULL, sender_main, &s[i]));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(s[i].th, NULL));
		ASSERT_EQ(0, s[i].err);
	}
	ASSERT_TRUE(nl_conn_finish(&self->c1, 30));
	ASSERT_TRUE(nl_conn_finish(&self->c2, 30));
	EXPECT_EQ(s[0].bytes, self->c1.rx_bytes);
	EXPECT_EQ(s[1].bytes, self->c2.rx_bytes);
}

struct flows_run {
	struct __test_metadata *_metadata;
	FIXTURE_DATA(filter) *self;
	uint64_t *f0;
};

static void flows_traffic(void *arg)
{
	struct flows_run *r = arg;

	two_flows(r->_metadata, r->self, r->f0);
}

static void flows_undo(void *arg)
{
	struct flows_run *r = arg;

	nl_conn_close(&r->self->c1);
	nl_conn_close(&r->self->c2);
}

/* Enable @groups, run both flows and collect their records (retried). */
static void flows_collected(struct __test_metadata *_metadata,
			    FIXTURE_DATA(filter) *self, uint64_t groups,
			    uint64_t *f0)
{
	struct flows_run r = { _metadata, self, f0 };

	need_groups(_metadata, self, groups);
	ASSERT_EQ(0, nl_collect_retry(self->fd, &self->pr, groups, &self->log,
				      3, flows_traffic, flows_undo, &r))
		TH_LOG("%s", self->log.why);
}

/* TCP records of either side of @c, of @type (0: any TCP type). */
static size_t count_of(const struct nl_log *l, const struct nl_conn *c,
		       unsigned int type)
{
	const struct netlat_rec_hdr *h;
	size_t n = 0;

	nl_log_for_each(l, h)
		if (nl_tcp_rec_size(h->type) && (!type || h->type == type) &&
		    nl_flow_of((const void *)(h + 1), c))
			n++;
	return n;
}

/*
 * Every sendmsg of @c's sender is there: one record per send(), their
 * returns adding up to the bytes sent.
 */
static void check_sendmsg(struct __test_metadata *_metadata,
			  const struct nl_log *l, const struct nl_conn *c)
{
	const struct netlat_rec_hdr *h;
	int64_t sum = 0;
	size_t n = 0;

	nl_log_for_each(l, h) {
		const struct netlat_rec_tcp_sendmsg *s = (const void *)h;

		if (h->type != NETLAT_REC_TCP_SENDMSG || !nl_flow_is(&s->flow, c))
			continue;
		n++;
		sum += s->ret;
	}
	EXPECT_EQ(N_SENDS, n);
	EXPECT_EQ((int64_t)c->rx_bytes, sum);
}

/*
 * The transmissions of @c's sender cover every byte it sent and its FIN:
 * none was kept out.
 */
static void check_xmit(struct __test_metadata *_metadata,
		       const struct nl_log *l, const struct nl_conn *c)
{
	const struct netlat_rec_hdr *h;
	uint32_t isn = 0;
	int64_t end = 0;
	bool syn = false;
	size_t n = 0, i;
	int64_t (*r)[2] = calloc(l->nrec, sizeof(*r));

	ASSERT_NE(NULL, r);
	nl_log_for_each(l, h) {
		const struct netlat_rec_tcp_xmit *x = (const void *)h;

		if (h->type != NETLAT_REC_TCP_XMIT || !nl_flow_is(&x->flow, c))
			continue;
		if (x->tcp_flags & 0x02) {	/* SYN: the sequence origin */
			isn = x->end_seq;
			syn = true;
			continue;
		}
		r[n][0] = x->seq;
		r[n++][1] = x->end_seq;
	}
	ASSERT_TRUE(syn) TH_LOG("no SYN transmit of the flow");
	/* segments arrive in order without loss: extend a covered prefix */
	for (bool grew = true; grew;) {
		grew = false;
		for (i = 0; i < n; i++) {
			int64_t s = (uint32_t)(r[i][0] - isn);
			int64_t e = s + (uint32_t)(r[i][1] - r[i][0]);

			if (s <= end && e > end) {
				end = e;
				grew = true;
			}
		}
	}
	EXPECT_EQ((int64_t)c->rx_bytes + 1, end)
		TH_LOG("%zu XMIT records cover %lld of %llu bytes + FIN", n,
		       (long long)end, (unsigned long long)c->rx_bytes);
	free(r);
}

/*
 * Flow 1 kept, flow 2 kept out, in every ruled group; the SKB group,
 * without rules, has both; the counter grew by at least flow 2's sends.
 */
static void check_kept_1(struct __test_metadata *_metadata,
			 FIXTURE_DATA(filter) *self, uint64_t f0)
{
	uint64_t f1 = nl_filtered(self->fd, g_def.nr_cpus);

	check_sendmsg(_metadata, &self->log, &self->c1);
	check_xmit(_metadata, &self->log, &self->c1);
	EXPECT_LT(0ull, count_of(&self->log, &self->c1, NETLAT_REC_TCP_ACK));
	EXPECT_LT(0ull, count_of(&self->log, &self->c1, NETLAT_REC_TCP_DEV));
	EXPECT_EQ(0ull, count_of(&self->log, &self->c2, NETLAT_REC_TCP_SENDMSG));
	EXPECT_EQ(0ull, count_of(&self->log, &self->c2, NETLAT_REC_TCP_XMIT));
	EXPECT_EQ(0ull, count_of(&self->log, &self->c2, NETLAT_REC_TCP_ACK));
	EXPECT_EQ(0ull, count_of(&self->log, &self->c2, NETLAT_REC_TCP_DEV));
	EXPECT_LT(0ull, count_of(&self->log, &self->c1, NETLAT_REC_TCP_SKB));
	EXPECT_LT(0ull, count_of(&self->log, &self->c2, NETLAT_REC_TCP_SKB));
	EXPECT_LE((uint64_t)N_SENDS, f1 - f0)
		TH_LOG("filtered +%llu", (unsigned long long)(f1 - f0));
}

/* Set @r, run both flows, check that flow 1 alone is kept. */
static void run_rule(struct __test_metadata *_metadata,
		     FIXTURE_DATA(filter) *self, struct netlat_filter_rule r)
{
	uint64_t f0;

	ASSERT_EQ(0, nl_set_rules(self->fd, &r, 1));
	flows_collected(_metadata, self, GROUPS_ALL, &f0);
	check_kept_1(_metadata, self, f0);
}

TEST_F(filter, by_port)
{
	run_rule(_metadata, self, rule_port(GROUPS_RULED, PORT_1));
}

/* /23: the prefix ends inside a byte */
TEST_F(filter, by_addr_prefix)
{
	run_rule(_metadata, self, rule_addr4(GROUPS_RULED, "192.0.2.0", 23));
}

/* Flow 1's sender is alone in namespace A: its records only. */
TEST_F(filter, by_netns)
{
	struct netlat_filter_rule r = {
		.groups = GROUPS_RULED, .match = NETLAT_MATCH_NETNS,
		.netns_ino = g_ino_a,
	};

	run_rule(_metadata, self, r);
}

/* No rule is left: both flows complete again. */
TEST_F(filter, cleared_rules_keep_all)
{
	struct netlat_filter_rule r = rule_port(GROUPS_RULED, PORT_1);
	uint64_t f0;

	ASSERT_EQ(0, nl_set_rules(self->fd, &r, 1));
	ASSERT_EQ(0, nl_set_rules(self->fd, NULL, 0));
	flows_collected(_metadata, self, GROUPS_ALL, &f0);
	check_sendmsg(_metadata, &self->log, &self->c1);
	check_sendmsg(_metadata, &self->log, &self->c2);
	check_xmit(_metadata, &self->log, &self->c1);
	check_xmit(_metadata, &self->log, &self->c2);
	EXPECT_EQ(f0, nl_filtered(self->fd, g_def.nr_cpus));
}

/*
 * By process on the sendmsg group: flow 2 is sent by a child process.
 * The XMIT group has no rule: both flows whole there.
 */
TEST_F(filter, by_tgid_sendmsg)
{
	struct netlat_filter_rule r = {
		.groups = NETLAT_PROBE_TCP_SENDMSG, .match = NETLAT_MATCH_TGID,
		.tgid = getpid(),
	};
	uint64_t f0, bytes;
	int status;
	pid_t child;

	need_groups(_metadata, self,
		    NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT);
	ASSERT_EQ(0, nl_set_rules(self->fd, &r, 1));
	open_flows(_metadata, self);
	f0 = nl_filtered(self->fd, g_def.nr_cpus);
	fflush(NULL);
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(send_pattern(self->c2.cli, &bytes) ? 1 : 0);
	EXPECT_EQ(0, send_pattern(self->c1.cli, &bytes));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_TRUE(nl_conn_finish(&self->c1, 30));
	ASSERT_TRUE(nl_conn_finish(&self->c2, 30));
	EXPECT_EQ(bytes, self->c1.rx_bytes);
	EXPECT_EQ(bytes, self->c2.rx_bytes);
	drain(_metadata, self);
	check_sendmsg(_metadata, &self->log, &self->c1);
	EXPECT_EQ(0ull, count_of(&self->log, &self->c2, NETLAT_REC_TCP_SENDMSG));
	check_xmit(_metadata, &self->log, &self->c1);
	check_xmit(_metadata, &self->log, &self->c2);
	EXPECT_LE((uint64_t)N_SENDS, nl_filtered(self->fd, g_def.nr_cpus) - f0);
}

/* ---- set, read back, reject ------------------------------------------ */

TEST_F(filter, read_back)
{
	struct netlat_filter_rule set[3], got[4];
	unsigned char wide[3][80];
	uint32_t nr = 0, i;

	set[0] = rule_port(NETLAT_PROBE_TCP_XMIT, 80);
	set[1] = rule_addr4(NETLAT_PROBE_ALL, "10.1.0.0", 17);
	memset(&set[2], 0, sizeof(set[2]));
	set[2].groups = NETLAT_PROBE_VIRTIO_TX | NETLAT_PROBE_TCP_SENDMSG;
	set[2].match = NETLAT_MATCH_ADDR | NETLAT_MATCH_SOCK_COOKIE |
		       NETLAT_MATCH_NETNS | NETLAT_MATCH_TGID | NETLAT_MATCH_TID;
	set[2].family = AF_INET6;
	set[2].prefix_len = 65;
	memset(set[2].addr, 0xfe, 8);
	set[2].addr[8] = 0x80;
	set[2].cookie = 0x1234567890ull;
	set[2].netns_ino = g_ino_a;
	set[2].tgid = 1;
	set[2].tid = 2;
	ASSERT_EQ(0, nl_filters(self->fd, NETLAT_FILTERS_SET, set, 3, sizeof(set[0]),
			     &nr));
	EXPECT_EQ(3u, nr);

	memset(got, 0xa5, sizeof(got));
	ASSERT_EQ(0, nl_filters(self->fd, 0, got, 4, sizeof(got[0]), &nr));
	EXPECT_EQ(3u, nr);
	EXPECT_EQ(0, memcmp(set, got, sizeof(set)));
	EXPECT_EQ(0xa5, ((unsigned char *)&got[3])[0]);	/* untouched */

	/* less room: the first ones, and the count in force */
	memset(got, 0xa5, sizeof(got));
	ASSERT_EQ(0, nl_filters(self->fd, 0, got, 1, sizeof(got[0]), &nr));
	EXPECT_EQ(3u, nr);
	EXPECT_EQ(0, memcmp(&set[0], &got[0], sizeof(got[0])));
	EXPECT_EQ(0xa5, ((unsigned char *)&got[1])[0]);

	/* a longer rule: tail zeroed on the way out */
	memset(wide, 0xa5, sizeof(wide));
	ASSERT_EQ(0, nl_filters(self->fd, 0, wide, 3, sizeof(wide[0]), &nr));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, memcmp(&set[i], wide[i], sizeof(set[i])));
		EXPECT_EQ(0, wide[i][sizeof(set[i])]);
		EXPECT_EQ(0, wide[i][sizeof(wide[i]) - 1]);
	}
	/* and accepted on the way in with a zero tail */
	ASSERT_EQ(0, nl_filters(self->fd, NETLAT_FILTERS_SET, wide, 3,
			     sizeof(wide[0]), &nr));
	memset(got, 0, sizeof(got));
	ASSERT_EQ(0, nl_filters(self->fd, 0, got, 4, sizeof(got[0]), &nr));
	EXPECT_EQ(3u, nr);
	EXPECT_EQ(0, memcmp(set, got, sizeof(set)));
}

/*
 * Spoil one field of a valid rule (ADDR 192.0.2.0/24 and PORT 443): case
 * @i; returns what was spoilt, NULL past the last case.
 */
static const char *spoil(unsigned int i, struct netlat_filter_rule *r)
{
	switch (i) {
	case 0: r->groups = 0; return "groups 0";
	case 1: r->groups |= 1ull << 10; return "group outside ALL";
	case 2: r->groups |= 1ull << 63; return "group bit 63";
	case 3: r->match = 0; return "match 0";
	case 4: r->match |= 1u << 7; return "unknown match bit";
	case 5: r->family = 0; return "ADDR with family 0";
	case 6: r->family = AF_UNIX; return "ADDR with family AF_UNIX";
	case 7: r->prefix_len = 33; return "IPv4 prefix 33";
	case 8: r->family = AF_INET6; r->prefix_len = 129;
		return "IPv6 prefix 129";
	case 9: r->addr[3] = 1; return "IPv4 bit past the prefix";
	case 10: r->prefix_len = 32; r->addr[4] = 1;
		return "IPv4 address with bytes past 4";
	case 11: r->family = AF_INET6; r->prefix_len = 64; r->addr[15] = 1;
		return "IPv6 bit past the prefix";
	case 12: r->match = NETLAT_MATCH_PORT; r->prefix_len = 0;
		memset(r->addr, 0, sizeof(r->addr));
		return "family without ADDR";
	case 13: r->match = NETLAT_MATCH_PORT; r->family = 0;
		memset(r->addr, 0, sizeof(r->addr));
		return "prefix_len without ADDR";
	case 14: r->match = NETLAT_MATCH_PORT; r->family = 0;
		r->prefix_len = 0;
		return "addr without ADDR";
	case 15: r->port = 0; return "PORT with port 0";
	case 16: r->match &= ~NETLAT_MATCH_PORT; return "port without PORT";
	case 17: r->match |= NETLAT_MATCH_NETNS; return "NETNS with inode 0";
	case 18: r->netns_ino = 7; return "netns_ino without NETNS";
	case 19: r->match |= NETLAT_MATCH_COOKIE; return "COOKIE with 0";
	case 20: r->match |= NETLAT_MATCH_SOCK_COOKIE;
		return "SOCK_COOKIE with 0";
	case 21: r->match |= NETLAT_MATCH_COOKIE | NETLAT_MATCH_SOCK_COOKIE;
		r->cookie = 5;
		return "both cookies";
	case 22: r->cookie = 5; return "cookie without a cookie match";
	case 23: r->match |= NETLAT_MATCH_TGID; return "TGID with 0";
	case 24: r->tgid = 1; return "tgid without TGID";
	case 25: r->match |= NETLAT_MATCH_TID; return "TID with 0";
	case 26: r->tid = 1; return "tid without TID";
	case 27: r->reserved0 = 1; return "reserved0";
	case 28: r->reserved1 = 1; return "reserved1";
	case 29: r->reserved = 1ull << 40; return "reserved";
	}
	return NULL;
}

TEST_F(filter, malformed_einval)
{
	struct netlat_filter_rule good[2], bad[2], got[2];
	unsigned char wide[2][72];
	struct netlat_filters f;
	uint32_t nr, i;

	good[0] = rule_addr4(NETLAT_PROBE_TCP_ACK, "192.0.2.0", 24);
	good[0].match |= NETLAT_MATCH_PORT;
	good[0].port = 443;
	good[1] = rule_port(NETLAT_PROBE_TCP_DEV, 22);
	ASSERT_EQ(0, nl_set_rules(self->fd, good, 2));

	for (i = 0;; i++) {
		const char *what;

		/* the bad one second: the first must not take effect either */
		bad[0] = good[1];
		bad[1] = good[0];
		what = spoil(i, &bad[1]);
		if (!what)
			break;
		EXPECT_EQ(-EINVAL, nl_set_rules(self->fd, bad, 2))
			TH_LOG("%s accepted", what);
	}
	EXPECT_EQ(30u, i);

	/* the arguments around the rules */
	memcpy(bad, good, sizeof(good));
	EXPECT_EQ(-EINVAL, nl_filters(self->fd, 2 | NETLAT_FILTERS_SET, bad, 2,
				   sizeof(bad[0]), NULL));
	EXPECT_EQ(-EINVAL, nl_filters(self->fd, 2, bad, 2, sizeof(bad[0]), NULL));
	EXPECT_EQ(-EINVAL, nl_filters(self->fd, NETLAT_FILTERS_SET, bad,
				   NETLAT_FILTER_MAX_RULES + 1, sizeof(bad[0]),
				   NULL));
	EXPECT_EQ(-EINVAL, nl_filters(self->fd, NETLAT_FILTERS_SET, bad, 2,
				   NETLAT_FILTER_RULE_SIZE_VER0 - 8, NULL));
	EXPECT_EQ(-EINVAL, nl_filters(self->fd, NETLAT_FILTERS_SET, bad, 2,
				   getpagesize() + 8, NULL));
	EXPECT_EQ(-EINVAL, nl_filters(self->fd, 0, got, 2,
				   NETLAT_FILTER_RULE_SIZE_VER0 - 8, NULL));
	memset(wide, 0, sizeof(wide));
	memcpy(wide[0], &good[0], sizeof(good[0]));
	memcpy(wide[1], &good[1], sizeof(good[1]));
	wide[1][70] = 1;		/* an unknown field set */
	EXPECT_EQ(-EINVAL, nl_filters(self->fd, NETLAT_FILTERS_SET, wide, 2,
				   sizeof(wide[0]), NULL));
	memset(&f, 0, sizeof(f));
	f.flags = NETLAT_FILTERS_SET;
	f.rule_size = sizeof(bad[0]);
	f.reserved = 1;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FILTERS, &f, sizeof(f)));
	f.reserved = 0;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_FILTERS, &f,
				    NETLAT_FILTERS_SIZE_VER0 - 8));
	EXPECT_EQ(-EFAULT, nl_filters(self->fd, NETLAT_FILTERS_SET, NULL, 1,
				   sizeof(bad[0]), NULL));

	/* nothing changed */
	memset(got, 0, sizeof(got));
	ASSERT_EQ(0, nl_filters(self->fd, 0, got, 2, sizeof(got[0]), &nr));
	EXPECT_EQ(2u, nr);
	EXPECT_EQ(0, memcmp(good, got, sizeof(good)));
}

/* Child without capabilities: reading works, setting is -EPERM. */
static int child_nocaps(int fd)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	struct netlat_filter_rule r = rule_port(NETLAT_PROBE_TCP_ACK, 1);
	uint32_t nr = 0;

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data))
		return 10;
	if (nl_filters(fd, 0, &r, 1, sizeof(r), &nr) || nr != 1)
		return 11;
	if (nl_set_rules(fd, &r, 1) != -EPERM)
		return 12;
	return nl_set_rules(fd, NULL, 0) == -EPERM ? 0 : 13;
}

TEST_F(filter, set_needs_caps)
{
	struct netlat_filter_rule r = rule_port(NETLAT_PROBE_TCP_XMIT, 9), got;
	uint32_t nr = 0;
	int status;
	pid_t child;

	ASSERT_EQ(0, nl_set_rules(self->fd, &r, 1));
	fflush(NULL);
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(child_nocaps(self->fd));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, nl_filters(self->fd, 0, &got, 1, sizeof(got), &nr));
	EXPECT_EQ(1u, nr);
	EXPECT_EQ(0, memcmp(&r, &got, sizeof(r)));
}

/* ---- xmit_ack_ns ----------------------------------------------------- */

#define DELAY_MS	400

/* Flow 1 alone, with @delay_ms on its data path; the xmit_ack_ns seen. */
static size_t ack_times(struct __test_metadata *_metadata,
			FIXTURE_DATA(filter) *self, unsigned int delay_ms,
			uint64_t *t, size_t max, size_t *zero)
{
	const struct netlat_rec_hdr *h;
	uint64_t bytes;
	size_t n = 0;

	*zero = 0;
	need_groups(_metadata, self, NETLAT_PROBE_TCP_ACK);
	ASSERT_EQ(0, set_delay(delay_ms * 1000));
	ASSERT_EQ(0, nl_conn_open(&self->c1, g_ns_a, g_ns_b, ADDR_B1, PORT_1));
	ASSERT_EQ(0, send_pattern(self->c1.cli, &bytes));
	ASSERT_TRUE(nl_conn_finish(&self->c1, 60));
	EXPECT_EQ(bytes, self->c1.rx_bytes);
	drain(_metadata, self);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_ack *a = (const void *)h;

		if (h->type != NETLAT_REC_TCP_ACK || !nl_flow_is(&a->flow, &self->c1))
			continue;
		if (!a->xmit_ack_ns)
			(*zero)++;
		else if (n < max)
			t[n++] = a->xmit_ack_ns;
	}
	return n;
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

TEST_F_TIMEOUT(filter, xmit_ack_vs_delay, 120)
{
	static uint64_t t[4096];
	size_t n, zero, i;

	n = ack_times(_metadata, self, DELAY_MS, t, NL_ARRAY_SIZE(t), &zero);
	ASSERT_LT(0ull, n);
	qsort(t, n, sizeof(t[0]), u64_cmp);
	TH_LOG("delay %u ms: %zu ACKs timed (%zu not): min %.1f ms max %.1f ms",
	       DELAY_MS, n, zero, t[0] / 1e6, t[n - 1] / 1e6);
	for (i = 0; i < n; i++)
		ASSERT_LE(DELAY_MS * MS, t[i]) TH_LOG("ACK %zu of %zu", i, n);
}

TEST_F_TIMEOUT(filter, xmit_ack_without_delay, 120)
{
	static uint64_t t[4096];
	size_t n, zero;

	n = ack_times(_metadata, self, 0, t, NL_ARRAY_SIZE(t), &zero);
	ASSERT_LT(0ull, n);
	qsort(t, n, sizeof(t[0]), u64_cmp);
	TH_LOG("no delay: %zu ACKs timed (%zu not): min %.3f ms median %.3f ms max %.1f ms",
	       n, zero, t[0] / 1e6, t[n / 2] / 1e6, t[n - 1] / 1e6);
	/* delayed ACKs wait up to 200 ms; most are immediate */
	EXPECT_GT(DELAY_MS * MS, t[n - 1]);
	EXPECT_GT(DELAY_MS * MS / 4, t[n / 2]);
}

TEST_HARNESS_MAIN
