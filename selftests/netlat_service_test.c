// SPDX-License-Identifier: GPL-2.0
/*
 * Latency per service, as an SRE reads it: two real servers (Debian's
 * redis-server), each with its client (redis-benchmark) in a cgroup of
 * its own: port 6379 in namespace B with its client in A, both ways
 * behind a 20 ms netem delay; port 6380 in D with its client in C, no
 * delay. netlat keeps the packet level's histograms by port and cgroup,
 * `netlat exporter` serves them from namespace E, and a real Prometheus
 * (Debian's) scrapes it there.
 *
 * Oracles: the physical floor (each segment of 6379 waits 20 ms in its
 * sender's qdisc before its driver, and its ACK 20 ms in the other's, so
 * no driver>ack of the key is below 20 ms: Prometheus's median of it is
 * at least 20 ms; 6380's is below); the namespaces' own MIBs (a key's
 * packets are at most, and at least 99% of, the segments its two
 * namespaces sent: TCPOrigDataSent); the cgroups' inode numbers (the
 * keys' ids) and paths; what NETLAT_IOC_HIST gives this program is what
 * Prometheus stored.
 *
 * Needs root, the module, veth, cgroup2, /bin/redis-server,
 * /bin/redis-benchmark and /bin/prometheus in the VM (the lane copies
 * them); skips otherwise.
 */
#include "netlat_util.h"

#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "netlat_tcp.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define ADDR_C	"198.51.100.1"
#define ADDR_D	"198.51.100.2"
#define DEV_A	"nsa0"
#define DEV_B	"nsb0"
#define SERVER	"/bin/redis-server"
#define CLIENT	"/bin/redis-benchmark"
#define PROM	"/bin/prometheus"
#define NETLAT	"/bin/netlat"
#define CG_ROOT	"/sys/fs/cgroup"
#define PROM_DIR "/tmp/netlat-prom"
#define EXP_PORT 9661
#define PROM_PORT 9090
#define DELAY_MS 20

#define GROUPS (NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
		NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV | \
		NETLAT_PROBE_TCP_RETRANS | NETLAT_PROBE_RX)

struct service {
	const char *port, *addr, *cgroup;
	int *ns_cli, *ns_srv;
	uint64_t cg_id;
	pid_t server;
};

static int g_ns[5] = { -1, -1, -1, -1, -1 };	/* A, B, C, D, E */
static char g_skip[128];

static struct service g_svc[2] = {
	{ .port = "6379", .addr = ADDR_B, .cgroup = "netlat_svc_slow",
	  .ns_cli = &g_ns[0], .ns_srv = &g_ns[1] },
	{ .port = "6380", .addr = ADDR_D, .cgroup = "netlat_svc_fast",
	  .ns_cli = &g_ns[2], .ns_srv = &g_ns[3] },
};

static void __attribute__((constructor)) service_topology(void)
{
	struct rlimit rl = { 65536, 65536 };
	const char *need[] = { SERVER, CLIENT, PROM, NETLAT };
	struct netlat_info info;
	unsigned int i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (access(need[i], X_OK)) {
			snprintf(g_skip, sizeof(g_skip), "no %s", need[i]);
			return;
		}
	if (nl_device_info(&info, g_skip, sizeof(g_skip)))
		return;
	if (!nl_cgroup2(CG_ROOT)) {
		snprintf(g_skip, sizeof(g_skip), "no cgroup2");
		return;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
	if (nl_pair_ns(&g_ns[0], DEV_A, ADDR_A, &g_ns[1], DEV_B, ADDR_B,
		       g_skip, sizeof(g_skip)) ||
	    nl_pair_ns(&g_ns[2], "nsc0", ADDR_C, &g_ns[3], "nsd0", ADDR_D,
		       g_skip, sizeof(g_skip)))
		return;
	/* E: the exporter and Prometheus, on its loopback only */
	g_ns[4] = nl_ns_new();
	if (g_ns[4] < 0 || nl_ns_enter(g_ns[4]) || nlr_link_up("lo"))
		snprintf(g_skip, sizeof(g_skip), "namespace E");
	nl_ns_enter(nl_ns_home);
}

/* netem delaying what @dev of @ns sends by @ms (0: none). */
static int delay(int ns, const char *dev, uint32_t ms)
{
	int ret = nl_ns_enter(ns);

	if (!ret)
		ret = nlr_netem_full(dev, 0, ms * 1000, 0);
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* cgroup @name made; its id (inode number), 0 on failure. */
static uint64_t cg_make(const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), CG_ROOT "/%s", name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return 0;
	return stat(path, &st) ? 0 : st.st_ino;
}

/*
 * Run @argv in namespace @ns and cgroup @cg (NULL: this one), its output
 * to @out; the child's pid. It dies with the test.
 */
static pid_t spawn(int ns, const char *cg, char *const argv[], const char *out)
{
	pid_t pid = fork();
	char path[256];
	int fd;

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (cg) {
		snprintf(path, sizeof(path), CG_ROOT "/%s/cgroup.procs", cg);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(125);
		close(fd);
	}
	if (nl_ns_enter(ns))
		_exit(126);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execv(argv[0], argv);
	_exit(127);
}

/* Percent-encoding of a query string's value. */
static void url_encode(char *out, size_t len, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s && n + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-_.~", c)) {
			out[n++] = (char)c;
		} else {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = 0;
}

/*
 * Prometheus's instant query @q, asked in namespace E: the value of its
 * one result, NAN if none (or more than one, or no answer).
 */
static double prom_query(const char *q)
{
	struct sockaddr_in6 a;
	socklen_t alen = nl_sockaddr(&a, "127.0.0.1", PROM_PORT);
	struct timeval tv = { .tv_sec = 20 };
	static char resp[1 << 16];
	char req[4096], enc[3072], *p;
	size_t len = 0;
	ssize_t n;
	int fd;

	url_encode(enc, sizeof(enc), q);
	n = snprintf(req, sizeof(req),
		     "GET /api/v1/query?query=%s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
		     enc);
	if (nl_ns_enter(g_ns[4]))
		return NAN;
	fd = socket(a.sin6_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	nl_ns_enter(nl_ns_home);
	if (fd < 0)
		return NAN;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (void *)&a, alen) ||
	    send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		close(fd);
		return NAN;
	}
	while (len + 1 < sizeof(resp) &&
	       (n = recv(fd, resp + len, sizeof(resp) - 1 - len, 0)) > 0)
		len += (size_t)n;
	close(fd);
	resp[len] = 0;
	/* "result":[{"metric":{...},"value":[<time>,"<value>"]}] */
	p = strstr(resp, "\"value\":[");
	if (!p || strstr(p + 1, "\"value\":[") || !(p = strchr(p, ',')) ||
	    p[1] != '"')
		return NAN;
	return strtod(p + 2, NULL);
}

FIXTURE(service) {
	int fd;
	struct netlat_probes pr;
	pid_t exporter, prom;
};

FIXTURE_SETUP(service)
{
	char port[16], *exporter[] = {
		NETLAT, "exporter", "--listen", port, NULL,
	};
	char cfg_flag[128], *prom[] = {
		PROM, cfg_flag, "--storage.tsdb.path=" PROM_DIR "/data",
		"--web.listen-address=127.0.0.1:9090", "--log.level=warn", NULL,
	};
	FILE *f;
	int i;

	self->fd = -1;
	self->exporter = self->prom = -1;
	for (i = 0; i < 2; i++)
		g_svc[i].server = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	for (i = 0; i < 2; i++) {
		char *const server[] = {
			SERVER, "--bind", (char *)g_svc[i].addr, "--port",
			(char *)g_svc[i].port, "--save", "", "--appendonly", "no",
			"--protected-mode", "no", "--dir", "/tmp", NULL,
		};
		char log[64];

		g_svc[i].cg_id = cg_make(g_svc[i].cgroup);
		ASSERT_NE(0ull, g_svc[i].cg_id);
		snprintf(log, sizeof(log), "/tmp/%s.log", g_svc[i].cgroup);
		g_svc[i].server = spawn(*g_svc[i].ns_srv, g_svc[i].cgroup,
					server, log);
		ASSERT_LT(0, g_svc[i].server);
	}
	snprintf(port, sizeof(port), "127.0.0.1:%d", EXP_PORT);
	self->exporter = spawn(g_ns[4], NULL, exporter, "/tmp/netlat-exporter.log");
	ASSERT_LT(0, self->exporter);
	mkdir(PROM_DIR, 0755);
	f = fopen(PROM_DIR "/prometheus.yml", "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		"scrape_configs:\n  - job_name: netlat\n    static_configs:\n"
		"      - targets: ['127.0.0.1:%d']\n", EXP_PORT);
	fclose(f);
	snprintf(cfg_flag, sizeof(cfg_flag), "--config.file=%s/prometheus.yml",
		 PROM_DIR);
	self->prom = spawn(g_ns[4], NULL, prom, PROM_DIR "/log");
	ASSERT_LT(0, self->prom);
	for (i = 0; i < 2; i++)
		ASSERT_TRUE(nl_listening(*g_svc[i].ns_cli, g_svc[i].addr,
				      (uint16_t)atoi(g_svc[i].port), 60));
}

static void stop(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

FIXTURE_TEARDOWN(service)
{
	char path[256];
	int i;

	stop(&self->prom);
	stop(&self->exporter);
	for (i = 0; i < 2; i++) {
		stop(&g_svc[i].server);
		snprintf(path, sizeof(path), CG_ROOT "/%s", g_svc[i].cgroup);
		rmdir(path);
	}
	delay(g_ns[0], DEV_A, 0);
	delay(g_ns[1], DEV_B, 0);
	if (self->fd >= 0) {
		struct netlat_config off = { .flags = NETLAT_CONFIG_KEYS };

		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &off,
				      sizeof(off)));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		close(self->fd);
	}
}

/* The sum of the kernel's keys of service port @port: packets, or -1. */
static long long port_packets(int fd, uint16_t port, struct netlat_hist *host)
{
	long long sum = 0;
	struct netlat_hist k;
	uint32_t i;

	for (i = 1; i <= host->max_keys; i++) {
		memset(&k, 0, sizeof(k));
		k.key = i;
		if (nl_ioctl(fd, NETLAT_IOC_HIST, &k, sizeof(k)))
			return -1;
		if ((k.key_flags & NETLAT_HIST_KEY_USED) && k.key_port == port)
			sum += (long long)k.packets;
	}
	return sum;
}

TEST_F_TIMEOUT(service, two_services_in_prometheus, 600)
{
	struct netlat_config keys = {
		.flags = NETLAT_CONFIG_KEYS,
		.key_by = NETLAT_KEY_PORT | NETLAT_KEY_CGROUP, .max_keys = 16,
	};
	long long sent[2], d0[2], kernel[2];
	double v, p50[2];
	struct netlat_hist h;
	char q[512];
	int i, t, status;

	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &keys,
			      sizeof(keys)));
	nl_need_groups(self->fd, &self->pr, GROUPS);
	/* Prometheus scrapes the exporter (its first scrape takes a while) */
	for (t = 0, v = NAN; t < 120 && v != 1; t++) {
		nl_sleep_ms(500);
		v = prom_query("up{job=\"netlat\"}");
	}
	ASSERT_EQ(1, v) TH_LOG("Prometheus never scraped the exporter (see %s/log)",
			       PROM_DIR);
	ASSERT_EQ(0, delay(g_ns[0], DEV_A, DELAY_MS));
	ASSERT_EQ(0, delay(g_ns[1], DEV_B, DELAY_MS));

	for (i = 0; i < 2; i++) {
		char *const client[] = {
			CLIENT, "-h", (char *)g_svc[i].addr, "-p",
			(char *)g_svc[i].port, "-c", "50", "-n", "2000",
			"-t", "set,get", "-d", "100", "-q", NULL,
		};
		pid_t pid;

		d0[i] = nl_orig_data_sent(*g_svc[i].ns_cli, *g_svc[i].ns_srv);
		ASSERT_LE(0, d0[i]);
		pid = spawn(*g_svc[i].ns_cli, g_svc[i].cgroup, client,
			    "/tmp/redis-benchmark.log");
		ASSERT_LT(0, pid);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("redis-benchmark on %s: status 0x%x",
			       g_svc[i].port, status);
	}
	/* the last ACKs and FINs: until the kernel's keys stop moving */
	for (t = 0, kernel[0] = kernel[1] = -2; t < 50; t++) {
		long long k0, k1;

		nl_sleep_ms(300);
		ASSERT_EQ(0, nl_get_hist(self->fd, &h, NULL));
		k0 = port_packets(self->fd, 6379, &h);
		k1 = port_packets(self->fd, 6380, &h);
		if (k0 == kernel[0] && k1 == kernel[1])
			break;
		kernel[0] = k0;
		kernel[1] = k1;
	}
	for (i = 0; i < 2; i++)
		sent[i] = nl_orig_data_sent(*g_svc[i].ns_cli, *g_svc[i].ns_srv) - d0[i];
	EXPECT_EQ(0ull, h.keys_folded);

	for (i = 0; i < 2; i++) {
		/* a scrape after the last packet: Prometheus has the kernel's */
		snprintf(q, sizeof(q), "sum(netlat_key_tcp_packets_total{port=\"%s\"})",
			 g_svc[i].port);
		for (t = 0, v = NAN; t < 60 && v != kernel[i]; t++) {
			nl_sleep_ms(500);
			v = prom_query(q);
		}
		EXPECT_EQ(kernel[i], v) TH_LOG("%s", q);
		/* the key's packets against the namespaces' own count */
		EXPECT_LE(kernel[i], sent[i]);
		EXPECT_LE(sent[i] * 99, kernel[i] * 100);
		/* its cgroup, by id and by path */
		snprintf(q, sizeof(q),
			 "count(netlat_key_tcp_packets_total{port=\"%s\",cgroup=\"%llu\",cgroup_path=\"/%s\"})",
			 g_svc[i].port, (unsigned long long)g_svc[i].cg_id,
			 g_svc[i].cgroup);
		EXPECT_EQ(1, prom_query(q)) TH_LOG("%s", q);
		snprintf(q, sizeof(q),
			 "histogram_quantile(0.5, sum by (port, le) (netlat_key_tcp_stage_seconds_bucket{stage=\"driver_ack\",port=\"%s\"}))",
			 g_svc[i].port);
		p50[i] = prom_query(q);
	}
	TH_LOG("6379 (20 ms each way): %lld of %lld segments followed, driver>ack p50 %.2f ms; 6380: %lld of %lld, p50 %.2f ms",
	       kernel[0], sent[0], p50[0] * 1e3, kernel[1], sent[1], p50[1] * 1e3);
	EXPECT_LE(DELAY_MS / 1e3, p50[0]);
	EXPECT_GT(DELAY_MS / 1e3, p50[1]);
}

TEST_HARNESS_MAIN
