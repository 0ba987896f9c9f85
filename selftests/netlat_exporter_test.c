// SPDX-License-Identifier: GPL-2.0
/*
 * `netlat exporter` against the real module at the packet level: after a
 * TCP transfer under netem loss, one scrape of /metrics must give what the
 * kernel and the stack counted. Oracles: the bytes sent, the sender
 * namespace's RetransSegs (not netlat's), and NETLAT_IOC_HIST read by this
 * program; and the records of every packet must still be in the rings
 * after the scrape (the exporter never reads the stream).
 *
 * Topology as netlat_pkt_test: namespaces A and B on a veth pair, one
 * segment per skb, 5% loss on A's egress. The exporter listens on
 * 127.0.0.1 inside A, with the probes off while it is scraped (its own
 * connection is TCP too). The tool comes from /bin or NETLAT_BIN_DIR.
 */
#include "netlat_util.h"

#include <setjmp.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "netlat_tcp.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define DEV_A	"nea0"
#define DEV_B	"neb0"
#define BYTES	(256u << 10)
#define ERR_LOG	"/tmp/netlat-exporter.err"

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) exp_topology(void)
{
	int fd, ret;

	fd = nl_open(0);
	ret = fd < 0 ? -errno : nl_get_info(fd, &g_def);
	if (fd >= 0)
		close(fd);
	if (ret) {
		snprintf(g_skip, sizeof(g_skip), NETLAT_DEVICE_PATH ": %s", strerror(-ret));
		return;
	}
	nl_pair_ns(&g_ns_a, DEV_A, ADDR_A, &g_ns_b, DEV_B, ADDR_B, g_skip, sizeof(g_skip));
}

static const char *bin(const char *name)
{
	static char path[512];
	const char *dir = getenv("NETLAT_BIN_DIR");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "/bin", name);
	return path;
}

/* The exporter in namespace A on a free port; its pid, the port in *@port. */
static pid_t start_exporter(int *port)
{
	char buf[4096], *p;
	pid_t pid;
	int i, fd;

	unlink(ERR_LOG);
	pid = fork();
	if (!pid) {
		fd = open(ERR_LOG, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 2) < 0 || nl_ns_enter(g_ns_a))
			_exit(126);
		execl(bin("netlat"), "netlat", "exporter", "--listen", "127.0.0.1:0",
		      (char *)NULL);
		_exit(127);
	}
	*port = 0;
	for (i = 0; i < 500 && pid > 0 && !*port; i++) {
		ssize_t n;

		usleep(10000);
		fd = open(ERR_LOG, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = 0;
		p = strstr(buf, "http://127.0.0.1:");
		if (p)
			*port = atoi(p + strlen("http://127.0.0.1:"));
	}
	return pid;
}

/* GET /metrics from namespace A: the whole response, malloc'ed, or NULL. */
static char *scrape(int port, const char *accept)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 10 };
	size_t len = 0, cap = 1 << 16;
	char req[512], *buf;
	ssize_t n;
	int fd;

	if (nl_ns_enter(g_ns_a))
		return NULL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	nl_ns_enter(nl_ns_home);
	if (fd < 0)
		return NULL;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.0\r\n%s%s%s\r\n",
		     accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
	buf = malloc(cap);
	if (!buf || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		free(buf);
		close(fd);
		return NULL;
	}
	while ((n = recv(fd, buf + len, cap - len - 1, 0)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap && !(buf = realloc(buf, cap *= 2)))
			break;
	}
	close(fd);
	if (buf)
		buf[len] = 0;
	return buf;
}

/* The value of the sample "@name " (name and labels exactly), or -1. */
static double sample(const char *text, const char *name)
{
	const char *p = text;
	size_t n = strlen(name);

	while ((p = strstr(p, name))) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p += n;
	}
	return -1;
}

FIXTURE(exp) {
	int fd;
	struct netlat_probes pr;
	struct nl_log log;
	struct nl_conn conn;
	pid_t exporter;
};

FIXTURE_SETUP(exp)
{
	self->fd = -1;
	self->exporter = -1;
	self->conn.cli = self->conn.srv = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	if (access(bin("netlat"), X_OK))
		SKIP(longjmp(_metadata->env, 1), "no %s", bin("netlat"));
	ASSERT_EQ(0, nl_prepare(&self->fd, &self->pr, &self->log, g_def.nr_cpus));
	if (nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0))
		SKIP(longjmp(_metadata->env, 1), "no packet level");
}

FIXTURE_TEARDOWN(exp)
{
	if (self->exporter > 0) {
		kill(self->exporter, SIGKILL);
		waitpid(self->exporter, NULL, 0);
	}
	nl_conn_close(&self->conn);
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		EXPECT_EQ(0, nl_reconfigure(self->fd, g_def.ring_bytes, g_def.watermark,
					    g_def.flush_ms, true));
		close(self->fd);
	}
	nl_log_free(&self->log);
	if (nl_ns_enter(g_ns_a) == 0) {
		nlr_netem_full(DEV_A, 0, 0, 0);
		nl_ns_enter(nl_ns_home);
	}
}

TEST_F(exp, scrape_matches_kernel)
{
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	uint64_t retrans = 0, records = 0;
	char *text, *om, name[128];
	struct netlat_probes pr;
	long long r0, r1;
	double v, cum;
	unsigned int k, b;
	int port, status;
	char *buf;

	nl_need_groups(self->fd, &self->pr, NL_PKT_GROUPS);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	/* one segment per skb and 5% loss: retransmits RetransSegs counts */
	ASSERT_EQ(0, nl_ns_enter(g_ns_a));
	ASSERT_EQ(0, nlr_no_gso(DEV_A));
	ASSERT_EQ(0, nlr_gso_max_segs(DEV_A, 1));
	ASSERT_EQ(0, nlr_netem_full(DEV_A, 5, 0, 0));
	ASSERT_EQ(0, nl_ns_enter(nl_ns_home));

	/* per namespace in the kernel; netlat counts every socket (B may
	 * retransmit a SYN-ACK whose ACK A lost) */
	r0 = nl_mib(g_ns_a, "snmp", "Tcp", "RetransSegs") +
	     nl_mib(g_ns_b, "snmp", "Tcp", "RetransSegs");
	buf = malloc(BYTES);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, BYTES);
	ASSERT_EQ(0, nl_conn_open(&self->conn, g_ns_a, g_ns_b, ADDR_B, 0));
	ASSERT_EQ(0, nl_send_all(self->conn.cli, buf, BYTES));
	free(buf);
	ASSERT_TRUE(nl_conn_finish(&self->conn, 60));
	r1 = nl_mib(g_ns_a, "snmp", "Tcp", "RetransSegs") +
	     nl_mib(g_ns_b, "snmp", "Tcp", "RetransSegs");
	/* nothing more is counted, the exporter's own connection included */
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &pr));
	/* a kprobe hit the kernel skipped would void the comparison */
	if (pr.nmissed != self->pr.nmissed)
		SKIP(return, "%llu kprobe hits missed: the counts are void",
		     (unsigned long long)(pr.nmissed - self->pr.nmissed));
	memset(&hist, 0, sizeof(hist));
	hist.nr_stages = NETLAT_NR_STAGES;
	hist.stage_size = sizeof(st[0]);
	hist.stages = (uintptr_t)st;
	ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_HIST, &hist, sizeof(hist)));

	self->exporter = start_exporter(&port);
	ASSERT_LT(0, port);
	text = scrape(port, NULL);
	om = scrape(port, "application/openmetrics-text;version=1.0.0");
	ASSERT_NE(NULL, text);
	ASSERT_NE(NULL, om);
	kill(self->exporter, SIGTERM);
	ASSERT_EQ(self->exporter, waitpid(self->exporter, &status, 0));
	self->exporter = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_NE(NULL, strstr(text, "HTTP/1.1 200 OK\r\n"));
	EXPECT_NE(NULL, strstr(om, "application/openmetrics-text; version=1.0.0"));
	EXPECT_EQ(0, strcmp(om + strlen(om) - 6, "# EOF\n"));

	for (k = 0; k < 8; k++)
		retrans += hist.retrans_segs[k];
	v = sample(text, "netlat_tcp_stage_seconds_count{stage=\"xmit_ack\"}");
	TH_LOG("scraped: xmit_ack count %.0f; kernel: packets %llu, bytes %llu, "
	       "retransmitted %llu; RetransSegs +%lld", v,
	       (unsigned long long)hist.packets, (unsigned long long)hist.bytes,
	       (unsigned long long)retrans, r1 - r0);
	/* the stage _count is the packets, all ACKed */
	EXPECT_EQ((double)hist.packets, v);
	EXPECT_EQ((double)st[NETLAT_STAGE_XMIT_ACK].count, v);
	EXPECT_EQ((double)hist.packets, sample(text, "netlat_tcp_packets_total"));
	EXPECT_EQ(BYTES + 1.0, sample(text, "netlat_tcp_bytes_total"));
	EXPECT_EQ(0.0, sample(text, "netlat_tcp_untracked_packets_total"));
	EXPECT_EQ(1.0, sample(text, "netlat_level"));
	/* retransmitted segments by kind add up to RetransSegs */
	v = 0;
	for (k = NETLAT_RETRANS_OTHER; k <= NETLAT_RETRANS_SYNACK; k++) {
		static const char *const kinds[] = { "other", "rto", "fast", "tlp", "syn", "synack" };

		snprintf(name, sizeof(name), "netlat_tcp_retransmitted_segments_total{kind=\"%s\"}",
			 kinds[k]);
		EXPECT_EQ((double)hist.retrans_segs[k], sample(text, name));
		v += sample(text, name);
	}
	EXPECT_LT(0, r1 - r0);
	EXPECT_EQ((double)(r1 - r0), v);
	/* every bucket, cumulative, as the kernel has it */
	for (k = 0; k < NETLAT_NR_STAGES; k++) {
		static const char *const stages[NETLAT_NR_STAGES] = {
			"sendmsg_xmit", "xmit_qdisc", "qdisc_driver", "driver_ack",
			"xmit_ack", "sendmsg_ack", "driver_vq", "netif_tcp", "netif_udp",
			"tcp_queue", "queue_user", "netif_user", "ready_wakeup",
			"wakeup_run",
		};
		const char *fam = k < NETLAT_STAGE_RX_NETIF_TCP ? "netlat_tcp_stage_seconds" :
								  "netlat_rx_stage_seconds";

		for (b = 0, cum = 0; b < NETLAT_HIST_BUCKETS - 1; b++) {
			char le[32];

			cum += (double)st[k].bucket[b];
			snprintf(le, sizeof(le), "%.9g", (double)(1ull << b) / 1e9);
			snprintf(name, sizeof(name), "%s_bucket{stage=\"%s\",le=\"%s\"}",
				 fam, stages[k], le);
			/* %.9g is the exporter's shortest form for the small ones */
			if (b < 30)
				EXPECT_EQ(cum, sample(text, name)) TH_LOG("%s", name);
		}
		snprintf(name, sizeof(name), "%s_bucket{stage=\"%s\",le=\"+Inf\"}",
			 fam, stages[k]);
		EXPECT_EQ((double)st[k].count, sample(text, name)) TH_LOG("%s", name);
	}
	free(text);
	free(om);

	/* the exporter drained nothing: one record per packet is still there */
	ASSERT_EQ(0, nl_collect(self->fd, &self->log, self->pr.nmissed)) TH_LOG("%s", self->log.why);
	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;

		records += h->type == NETLAT_REC_TCP_PKT && h->size >= sizeof(*p) &&
			   nl_flow_is(&p->flow, &self->conn);
	}
	EXPECT_EQ(hist.packets, records);
}

TEST_HARNESS_MAIN
