// SPDX-License-Identifier: GPL-2.0
/*
 * IPv6 flows and the filters on them, with live traffic, against what the
 * test's own sockets say (getsockname/getpeername, SO_COOKIE), the bytes
 * and send() calls it makes and the threads that make them.
 *
 * Topology, built once: namespace B holds the receivers; flow 1 comes from
 * namespace A (v6a0 2001:db8:1::1 and 192.0.2.1 - v6b0 2001:db8:1::2 and
 * 192.0.2.2), flow 2 from namespace C (v6c0 2001:db8:2::1 - v6d0
 * 2001:db8:2::2): different /64s. Needs root, the module, veth and IPv6;
 * skips otherwise. Every test leaves no rule behind.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include <sys/syscall.h>
#include "netlat_tcp.h"
#include "netlat_filter.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR6_A		"2001:db8:1::1"
#define ADDR6_B1	"2001:db8:1::2"
#define ADDR6_C		"2001:db8:2::1"
#define ADDR6_B2	"2001:db8:2::2"
#define ADDR4_A		"192.0.2.1"
#define ADDR4_B1	"192.0.2.2"
#define MAPPED_B1	"::ffff:192.0.2.2"
#define PORT_1		6001
#define PORT_2		6002
#define GROUPS		(NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT)
#define N_SENDS		32

static int g_ns_a = -1, g_ns_b = -1, g_ns_c = -1;
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) v6_topology(void)
{
	static const struct { int *ns; const char *addr; } ready[] = {
		{ &g_ns_a, ADDR6_A }, { &g_ns_b, ADDR6_B1 },
		{ &g_ns_c, ADDR6_C }, { &g_ns_b, ADDR6_B2 },
		{ &g_ns_a, ADDR4_A }, { &g_ns_b, ADDR4_B1 },
	};
	static const struct nl_pair ab = { "v6a0", ADDR6_A, "v6b0", ADDR6_B1 };
	static const struct nl_pair cb = { "v6c0", ADDR6_C, "v6d0", ADDR6_B2 };
	const char *step = "IPv6 socket";
	unsigned int i;
	int fd, ret;

	if (nl_device_info(&g_def, g_skip, sizeof(g_skip)))
		return;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ret = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	if (ret)
		goto fail;
	step = "namespaces and veths";
	ret = nl_two_senders(&g_ns_a, &g_ns_b, &g_ns_c, &ab, &cb);
	if (!ret)
		ret = nl_ns_addr_up(g_ns_a, "v6a0", ADDR4_A);
	if (!ret)
		ret = nl_ns_addr_up(g_ns_b, "v6b0", ADDR4_B1);
	step = "addresses usable";
	for (i = 0; !ret && i < NL_ARRAY_SIZE(ready); i++)
		ret = nl_addr_ready(*ready[i].ns, ready[i].addr, 10);
	if (!ret)
		return;
fail:
	snprintf(g_skip, sizeof(g_skip), "%s: %s", step, strerror(-ret));
	if (nl_ns_home >= 0)
		nl_ns_enter(nl_ns_home);
}

FIXTURE(v6) {
	int fd;
	struct nl_log log;
	struct nl_conn c1, c2;
	struct netlat_probes pr;
	uint64_t bytes[2];		/* sent on c1, c2 in the last round */
	unsigned int calls[2];		/* send() calls that sent something */
	pid_t tid[2];			/* the sending threads */
};

FIXTURE_SETUP(v6)
{
	self->fd = -1;
	self->c1.cli = self->c1.srv = self->c2.cli = self->c2.srv = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log,
				g_def.nr_cpus));
	ASSERT_EQ(0, nl_set_rules(self->fd, NULL, 0));
	if ((self->pr.available & GROUPS) != GROUPS)
		SKIP(longjmp(_metadata->env, 1), "groups 0x%llx missing",
		     (unsigned long long)(GROUPS & ~self->pr.available));
}

FIXTURE_TEARDOWN(v6)
{
	nl_conn_close(&self->c1);
	nl_conn_close(&self->c2);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_filters_done(self->fd, &g_def));
		close(self->fd);
	}
	nl_log_free(&self->log);
}

/* ---- traffic ---------------------------------------------------------- */

struct sender {
	int fd;
	uint64_t bytes;
	unsigned int calls;
	pid_t tid;
	int err;
};

/* N_SENDS send() calls of varied sizes, counted as the kernel took them. */
static void *sender_main(void *arg)
{
	static const char buf[8192];
	struct sender *s = arg;
	unsigned int i;

	s->tid = syscall(SYS_gettid);
	for (i = 0; i < N_SENDS && !s->err; i++) {
		ssize_t n = send(s->fd, buf, 500 + (i * 1777) % 7000, 0);

		if (n <= 0)
			s->err = errno ? errno : EIO;
		else {
			s->bytes += n;
			s->calls++;
		}
	}
	return NULL;
}

struct round {
	struct __test_metadata *_metadata;
	FIXTURE_DATA(v6) *self;
	bool both;		/* c2 too, from a second thread */
};

/* c1 from this thread, c2 from another at once; every byte acked. */
static void round_traffic(void *arg)
{
	struct round *r = arg;
	struct __test_metadata *_metadata = r->_metadata;
	FIXTURE_DATA(v6) *self = r->self;
	struct sender s[2] = { { .fd = self->c1.cli }, { .fd = self->c2.cli } };
	pthread_t th;

	if (r->both)
		ASSERT_EQ(0, pthread_create(&th, NULL, sender_main, &s[1]));
	sender_main(&s[0]);
	if (r->both)
		ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, s[0].err);
	ASSERT_EQ(0, s[1].err);
	ASSERT_TRUE(nl_conn_wait_acked(&self->c1, 30));
	if (r->both)
		ASSERT_TRUE(nl_conn_wait_acked(&self->c2, 30));
	self->bytes[0] = s[0].bytes;
	self->bytes[1] = s[1].bytes;
	self->calls[0] = s[0].calls;
	self->calls[1] = s[1].calls;
	self->tid[0] = s[0].tid;
	self->tid[1] = s[1].tid;
}

/* Nothing to undo: the next round sends again on the same sockets. */
static void round_undo(void *arg __attribute__((unused)))
{
}

/* Enable GROUPS, a round of traffic, its records (retried when void). */
static void round_collected(struct __test_metadata *_metadata,
			    FIXTURE_DATA(v6) *self, bool both)
{
	struct round r = { _metadata, self, both };

	ASSERT_EQ(0, nl_collect_retry(self->fd, &self->pr, GROUPS, &self->log,
				      3, round_traffic, round_undo, &r))
		TH_LOG("%s", self->log.why);
}

static void open_flows(struct __test_metadata *_metadata,
		       FIXTURE_DATA(v6) *self, bool both)
{
	ASSERT_EQ(0, nl_conn_open(&self->c1, g_ns_a, g_ns_b, ADDR6_B1, PORT_1));
	if (both)
		ASSERT_EQ(0, nl_conn_open(&self->c2, g_ns_c, g_ns_b, ADDR6_B2,
					  PORT_2));
}

/* ---- oracles ---------------------------------------------------------- */

/* An address of a socket as netlat_flow lays it out for @family. */
static void flow_addr(struct __test_metadata *_metadata,
		      const struct sockaddr_in6 *a, int family, uint8_t *out)
{
	memset(out, 0, 16);
	if (a->sin6_family == AF_INET) {
		ASSERT_EQ(AF_INET, family);
		memcpy(out, &((const struct sockaddr_in *)a)->sin_addr, 4);
	} else if (family == AF_INET) {
		ASSERT_TRUE(IN6_IS_ADDR_V4MAPPED(&a->sin6_addr));
		memcpy(out, &a->sin6_addr.s6_addr[12], 4);
	} else {
		memcpy(out, &a->sin6_addr, 16);
	}
}

/* The flow of @c's sender per its own socket, reported as @family. */
static struct netlat_flow want_flow(struct __test_metadata *_metadata,
					const struct nl_conn *c, int family)
{
	struct netlat_flow f = { .family = family };
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);

	EXPECT_EQ(0, getsockname(c->cli, (void *)&a, &len));
	f.sport = ntohs(a.sin6_port);
	flow_addr(_metadata, &a, family, f.saddr);
	len = sizeof(a);
	EXPECT_EQ(0, getpeername(c->cli, (void *)&a, &len));
	f.dport = ntohs(a.sin6_port);
	flow_addr(_metadata, &a, family, f.daddr);
	return f;
}

/* Either direction of @c by ports alone, whatever the family says. */
static bool ports_of(const struct netlat_flow *f, const struct nl_conn *c)
{
	return (f->sport == c->sport && f->dport == c->dport) ||
	       (f->sport == c->dport && f->dport == c->sport);
}

static size_t count_of(const struct nl_log *l, const struct nl_conn *c,
		       unsigned int type)
{
	const struct netlat_rec_hdr *h;
	size_t n = 0;

	nl_log_for_each(l, h)
		if (h->type == type &&
		    ports_of((const void *)(h + 1), c))
			n++;
	return n;
}

/*
 * Every SENDMSG and XMIT record of @c's sender has exactly the flow its
 * socket reports as @family; the sendmsg records are one per send() call
 * and add up to the bytes sent (@i: c1 or c2). With @want_xmit, at least
 * one XMIT.
 */
static void check_flow(struct __test_metadata *_metadata,
		       FIXTURE_DATA(v6) *self, const struct nl_conn *c,
		       unsigned int i, int family, bool want_xmit)
{
	struct netlat_flow want = want_flow(_metadata, c, family);
	const struct netlat_rec_hdr *h;
	size_t calls = 0, xmits = 0;
	int64_t sum = 0;

	nl_log_for_each(&self->log, h) {
		const struct netlat_flow *f = (const void *)(h + 1);

		if ((h->type != NETLAT_REC_TCP_SENDMSG &&
		     h->type != NETLAT_REC_TCP_XMIT) ||
		    f->sport != want.sport || f->dport != want.dport)
			continue;
		EXPECT_EQ(want.family, f->family);
		EXPECT_EQ(0, memcmp(want.saddr, f->saddr, 16));
		EXPECT_EQ(0, memcmp(want.daddr, f->daddr, 16));
		if (h->type == NETLAT_REC_TCP_XMIT) {
			xmits++;
			continue;
		}
		calls++;
		sum += ((const struct netlat_rec_tcp_sendmsg *)h)->ret;
	}
	EXPECT_EQ(self->calls[i], calls);
	EXPECT_EQ((int64_t)self->bytes[i], sum);
	if (want_xmit)
		EXPECT_LT(0ull, xmits);
}

/* None of c2's records, either direction, in @groups. */
static void check_none_of_c2(struct __test_metadata *_metadata,
			     FIXTURE_DATA(v6) *self, uint64_t groups)
{
	EXPECT_LT(0ull, self->bytes[1]);
	if (groups & NETLAT_PROBE_TCP_SENDMSG)
		EXPECT_EQ(0ull, count_of(&self->log, &self->c2,
					 NETLAT_REC_TCP_SENDMSG));
	if (groups & NETLAT_PROBE_TCP_XMIT)
		EXPECT_EQ(0ull, count_of(&self->log, &self->c2,
					 NETLAT_REC_TCP_XMIT));
}

/* ---- flows ------------------------------------------------------------ */

TEST_F(v6, ipv6_flow)
{
	open_flows(_metadata, self, false);
	round_collected(_metadata, self, false);
	check_flow(_metadata, self, &self->c1, 0, AF_INET6, true);
}

/*
 * An AF_INET6 socket to ::ffff:192.0.2.2 is IPv4 on the wire: reported as
 * AF_INET with the IPv4 addresses, and an IPv4 ADDR rule keeps it.
 */
TEST_F(v6, v4_mapped_flow)
{
	struct netlat_filter_rule r = {
		.groups = GROUPS, .match = NETLAT_MATCH_ADDR,
		.family = AF_INET, .prefix_len = 32,
	};

	ASSERT_EQ(1, inet_pton(AF_INET, ADDR4_B1, r.addr));
	ASSERT_EQ(0, nl_set_rules(self->fd, &r, 1));
	ASSERT_EQ(0, nl_conn_open(&self->c1, g_ns_a, g_ns_b, MAPPED_B1,
				  PORT_1));
	round_collected(_metadata, self, false);
	check_flow(_metadata, self, &self->c1, 0, AF_INET, true);
}

/* ---- filters on two flows at once ------------------------------------- */

static void run_rule(struct __test_metadata *_metadata,
		     FIXTURE_DATA(v6) *self, struct netlat_filter_rule r)
{
	ASSERT_EQ(0, nl_set_rules(self->fd, &r, 1));
	round_collected(_metadata, self, true);
	check_flow(_metadata, self, &self->c1, 0, AF_INET6,
		   r.groups & NETLAT_PROBE_TCP_XMIT);
	check_none_of_c2(_metadata, self, r.groups);
}

TEST_F(v6, by_prefix64)
{
	struct netlat_filter_rule r = {
		.groups = GROUPS, .match = NETLAT_MATCH_ADDR,
		.family = AF_INET6, .prefix_len = 64,
	};

	ASSERT_EQ(1, inet_pton(AF_INET6, "2001:db8:1::", r.addr));
	open_flows(_metadata, self, true);
	run_rule(_metadata, self, r);
}

TEST_F(v6, by_sock_cookie)
{
	struct netlat_filter_rule r = {
		.groups = GROUPS, .match = NETLAT_MATCH_SOCK_COOKIE,
	};
	socklen_t len = sizeof(r.cookie);

	open_flows(_metadata, self, true);
	ASSERT_EQ(0, getsockopt(self->c1.cli, SOL_SOCKET, SO_COOKIE,
				&r.cookie, &len));
	ASSERT_NE(0ull, r.cookie);
	run_rule(_metadata, self, r);
}

/* The netlat cookie of c1's sender, from a first round on c1 alone. */
TEST_F(v6, by_netlat_cookie)
{
	struct netlat_filter_rule r = {
		.groups = GROUPS, .match = NETLAT_MATCH_COOKIE,
	};
	const struct netlat_rec_hdr *h;

	open_flows(_metadata, self, true);
	round_collected(_metadata, self, false);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_sendmsg *s = (const void *)h;

		if (h->type == NETLAT_REC_TCP_SENDMSG &&
		    nl_flow_is(&s->flow, &self->c1)) {
			r.cookie = s->flow.cookie;
			break;
		}
	}
	ASSERT_NE(0ull, r.cookie);
	nl_log_free(&self->log);
	ASSERT_EQ(0, nl_log_init(&self->log, g_def.nr_cpus, true));
	run_rule(_metadata, self, r);
}

/* The sendmsg group by thread: this thread sends c1, another c2. */
TEST_F(v6, by_tid_sendmsg)
{
	struct netlat_filter_rule r = {
		.groups = NETLAT_PROBE_TCP_SENDMSG, .match = NETLAT_MATCH_TID,
		.tid = syscall(SYS_gettid),
	};

	open_flows(_metadata, self, true);
	run_rule(_metadata, self, r);
	EXPECT_EQ((pid_t)r.tid, self->tid[0]);
	EXPECT_NE(self->tid[0], self->tid[1]);
	/* XMIT has no rule: c2's transmissions are all there */
	EXPECT_LT(0ull, count_of(&self->log, &self->c2, NETLAT_REC_TCP_XMIT));
}

TEST_HARNESS_MAIN
