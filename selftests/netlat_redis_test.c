// SPDX-License-Identifier: GPL-2.0
/*
 * The packet level under a real server and a real client: Debian's
 * redis-server in namespace B, redis-benchmark in namespace A (SET and
 * GET, 100-byte values) with 1,000 and with 10,000 connections, every
 * group of the send and receive paths on.
 *
 * Oracles, the kernel's own: TcpExt TCPOrigDataSent of A and B counts each
 * segment (data or FIN) sent for the first time; the packet table follows
 * or counts as not followed each of them, exactly (unless the kprobe layer
 * missed hits, counted: then at most that many short), and follows at
 * least 99%. Received segments with data are those sent less the FINs
 * (at most two per connection): the receive table's packets lie there,
 * and it follows at least 99% of what it met. The slowest request
 * redis-benchmark measured bounds every sendmsg>xmit.
 *
 * Needs root, the module, veth and /bin/redis-server and
 * /bin/redis-benchmark in the VM (the lane copies them); skips otherwise.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "netlat_tcp.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define DEV_A	"nra0"
#define DEV_B	"nrb0"
#define PORT	"6379"
#define SERVER	"/bin/redis-server"
#define CLIENT	"/bin/redis-benchmark"

#define REDIS_GROUPS (NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
		      NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV | \
		      NETLAT_PROBE_TCP_RETRANS | NETLAT_PROBE_RX)

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];

static void __attribute__((constructor)) redis_topology(void)
{
	struct rlimit rl = { 65536, 65536 };
	int fd;

	if (access(SERVER, X_OK) || access(CLIENT, X_OK)) {
		snprintf(g_skip, sizeof(g_skip), "no %s and %s", SERVER, CLIENT);
		return;
	}
	fd = nl_open(0);
	if (fd < 0) {
		snprintf(g_skip, sizeof(g_skip), NETLAT_DEVICE_PATH ": %s",
			 strerror(errno));
		return;
	}
	close(fd);
	setrlimit(RLIMIT_NOFILE, &rl);
	nl_pair_ns(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B, g_skip,
		   sizeof(g_skip));
}

/* Run @argv in namespace @ns, its output to @out; the child's pid. */
static pid_t spawn(int ns, char *const argv[], const char *out)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (nl_ns_enter(ns))
		_exit(126);
	if (out) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
	}
	execv(argv[0], argv);
	_exit(127);
}

FIXTURE(redis) {
	int fd;
	struct netlat_probes pr;
	pid_t server;
};

FIXTURE_VARIANT(redis) {
	const char *clients;
	unsigned int nclients;
	const char *requests;
	uint32_t sample;	/* netlat_config.sample */
};

FIXTURE_VARIANT_ADD(redis, c1000) {
	.clients = "1000",
	.nclients = 1000,
	.requests = "20000",
};

/* sampled 1 in 16 KiB: the counters stay every packet's */
FIXTURE_VARIANT_ADD(redis, c1000_sampled) {
	.clients = "1000",
	.nclients = 1000,
	.requests = "20000",
	.sample = 16,
};

FIXTURE_VARIANT_ADD(redis, c10000) {
	.clients = "10000",
	.nclients = 10000,
	.requests = "20000",
};

FIXTURE_SETUP(redis)
{
	char *const server[] = {
		SERVER, "--bind", ADDR_B, "--port", PORT, "--save", "",
		"--appendonly", "no", "--protected-mode", "no",
		"--maxclients", "20000", "--dir", "/tmp", NULL,
	};

	self->fd = -1;
	self->server = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	ASSERT_EQ(0, nl_ns_sysctl(g_ns_b, "/proc/sys/net/core/somaxconn", "16384"));
	ASSERT_EQ(0, nl_ns_sysctl(g_ns_b, "/proc/sys/net/ipv4/tcp_max_syn_backlog",
			       "16384"));
	ASSERT_EQ(0, nl_ns_sysctl(g_ns_a, "/proc/sys/net/ipv4/ip_local_port_range",
			       "10000 65000"));
	self->server = spawn(g_ns_b, server, "/tmp/redis-server.log");
	ASSERT_LT(0, self->server);
	ASSERT_TRUE(nl_listening(g_ns_a, ADDR_B, 6379, 30));
}

FIXTURE_TEARDOWN(redis)
{
	if (self->server > 0) {
		kill(self->server, SIGTERM);
		waitpid(self->server, NULL, 0);
	}
	if (self->fd >= 0) {
		struct netlat_config off = { .flags = NETLAT_CONFIG_KEYS };

		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &off,
				      sizeof(off)));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		EXPECT_EQ(0, nl_set_sample(self->fd, 0));
		close(self->fd);
	}
}

/* The histograms of the key of service port @port (by port), or false. */
static bool port_key(int fd, uint16_t port, struct netlat_hist *k)
{
	uint32_t i;

	for (i = 1; i <= NETLAT_MAX_KEYS_DEFAULT; i++) {
		memset(k, 0, sizeof(*k));
		k->key = i;
		if (nl_ioctl(fd, NETLAT_IOC_HIST, k, sizeof(*k)))
			return false;
		if ((k->key_flags & NETLAT_HIST_KEY_USED) && k->key_port == port)
			return true;
	}
	return false;
}

/*
 * The slowest request redis-benchmark saw, SET or GET, in ns (its --csv
 * summary, max_latency_ms), or 0 if it says none. Its histogram tracks up
 * to 3 s: a longer one is not in that figure.
 */
static uint64_t benchmark_max_ns(const char *log)
{
	char line[512], test[16];
	double max_ms, worst = 0;
	FILE *f = fopen(log, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "\"%15[A-Z]\",\"%*[^\"]\",\"%*[^\"]\",\"%*[^\"]\",\"%*[^\"]\",\"%*[^\"]\",\"%*[^\"]\",\"%lf\"",
			   test, &max_ms) == 2 && max_ms > worst)
			worst = max_ms;
	fclose(f);
	return worst * 1e6;
}

/* the debug kernel under TCG: 10,000 connections take a while */
TEST_F_TIMEOUT(redis, benchmark, 400)
{
	char *const client[] = {
		CLIENT, "-h", ADDR_B, "-p", PORT, "-c", (char *)variant->clients,
		"-n", (char *)variant->requests, "-t", "set,get", "-d", "100",
		"--csv", NULL,
	};
	struct netlat_config by_port = {
		.flags = NETLAT_CONFIG_KEYS, .key_by = NETLAT_KEY_PORT,
	};
	unsigned long long pkts, rx, sent;
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_probes after;
	struct netlat_hist h, k;
	long long d0, d1;
	uint64_t missed, slowest;
	unsigned int i;
	pid_t pid;
	int status;

	if (variant->nclients > 1000 && nl_debug_kernel())
		SKIP(return, "10,000 connections: too slow for the debug kernel under TCG (the release kernels run them)");
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_set_sample(self->fd, variant->sample));
	/* and by service port: the clients' sockets and the server's */
	ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &by_port,
			      sizeof(by_port)));
	nl_need_groups(self->fd, &self->pr, REDIS_GROUPS);
	d0 = nl_orig_data_sent(g_ns_a, g_ns_b);
	ASSERT_LE(0, d0);
	pid = spawn(g_ns_a, client, "/tmp/redis-benchmark.log");
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("redis-benchmark: status 0x%x", status);
	/* the last ACKs and FINs: until the counts settle */
	for (i = 0; i < 50; i++) {
		nl_sleep_ms(200);
		d1 = nl_orig_data_sent(g_ns_a, g_ns_b);
		ASSERT_EQ(0, nl_get_hist(self->fd, &h, NULL));
		sent = d1 - d0;
		pkts = h.packets + h.closed + h.untracked;
		if (pkts == sent)
			break;
	}
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &after));
	missed = nl_missed_in(&self->pr, &after, REDIS_GROUPS);
	rx = h.rx_packets + h.rx_closed + h.rx_untracked + h.rx_dropped;
	TH_LOG("%s clients: sent segments %llu: followed %llu (%llu of them ended with their socket), not %llu (no entry %llu lookups, no memory %llu, evicted %llu); received: followed %llu (%llu ended unread), not %llu (evicted %llu); %llu kprobe misses",
	       variant->clients, sent,
	       (unsigned long long)(h.packets + h.closed),
	       (unsigned long long)h.closed,
	       (unsigned long long)h.untracked,
	       (unsigned long long)h.flows_full, (unsigned long long)h.no_mem,
	       (unsigned long long)h.evicted,
	       (unsigned long long)(h.rx_packets + h.rx_closed),
	       (unsigned long long)h.rx_closed,
	       (unsigned long long)h.rx_untracked,
	       (unsigned long long)h.rx_evicted, (unsigned long long)missed);
	/* each SET and GET is a request and an answer at least */
	EXPECT_LE(2 * 2 * 20000ull, sent);
	EXPECT_LE(pkts, sent);
	EXPECT_LE(sent - pkts, missed);
	EXPECT_LE(pkts * 99, (h.packets + h.closed) * 100ull);
	/*
	 * Received with data: what was sent, less the FINs, two per
	 * connection (the SET and the GET test each open every client, and
	 * a few more connections ask the server's configuration).
	 */
	EXPECT_LE(rx, sent);
	EXPECT_LE(sent - 4ull * variant->nclients - 16 - missed, rx);
	EXPECT_LE(rx * 99, (h.rx_packets + h.rx_closed) * 100ull);
	/*
	 * Every socket is redis's: its key has every packet, both ways (read
	 * between two equal reads of the host's, late FINs settled).
	 */
	for (i = 0; i < 10; i++) {
		struct netlat_hist h2;

		ASSERT_EQ(0, nl_get_hist(self->fd, &h, NULL));
		ASSERT_TRUE(port_key(self->fd, atoi(PORT), &k));
		ASSERT_EQ(0, nl_get_hist(self->fd, &h2, NULL));
		if (h.packets == h2.packets && h.rx_packets == h2.rx_packets)
			break;
		nl_sleep_ms(200);
	}
	EXPECT_EQ(h.packets, k.packets);
	EXPECT_EQ(h.rx_packets, k.rx_packets);
	EXPECT_EQ(0ull, k.keys_folded);
	/*
	 * A request's sendmsg>xmit, and its answer's, lie inside the
	 * request's latency that redis-benchmark measured (from its write to
	 * the answer read; the FINs, queued by close(), have no sendmsg), so
	 * none is longer than the slowest request, where it measured that.
	 */
	ASSERT_EQ(0, nl_get_hist(self->fd, &h, st));
	slowest = benchmark_max_ns("/tmp/redis-benchmark.log");
	TH_LOG("sendmsg>xmit: %llu samples, max %.3f ms; redis-benchmark's slowest request %.3f ms; xmit>ack: %llu samples of %llu packets (%llu unsampled, %llu merged)",
	       (unsigned long long)st[NETLAT_STAGE_SENDMSG_XMIT].count,
	       st[NETLAT_STAGE_SENDMSG_XMIT].max_ns / 1e6, slowest / 1e6,
	       (unsigned long long)st[NETLAT_STAGE_XMIT_ACK].count,
	       (unsigned long long)h.packets,
	       (unsigned long long)h.unsampled, (unsigned long long)h.merged);
	/*
	 * The stage samples are the packets joined one by one (a paced
	 * packet's ACK may read a clock behind its transmit: no sample);
	 * sampling leaves most of them out, counted.
	 */
	EXPECT_GE(h.packets - h.unsampled - h.merged,
		  st[NETLAT_STAGE_XMIT_ACK].count);
	EXPECT_LE((h.packets - h.unsampled - h.merged) * 99,
		  st[NETLAT_STAGE_XMIT_ACK].count * 100);
	if (variant->sample) {
		EXPECT_LT(h.packets / 2, h.unsampled);
	} else {
		EXPECT_EQ(0ull, h.unsampled);
	}
	ASSERT_LT(0ull, slowest);
	EXPECT_LT(0ull, st[NETLAT_STAGE_SENDMSG_XMIT].count);
	if (slowest < 3000 * 1000000ull)
		EXPECT_LE(st[NETLAT_STAGE_SENDMSG_XMIT].max_ns, slowest);
}

TEST_HARNESS_MAIN
