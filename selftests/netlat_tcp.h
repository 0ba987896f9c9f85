/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP connections between network namespaces for the tests: namespaces
 * joined by veth pairs (netlat_nl.h), a connection whose receiving end is
 * drained by a thread that counts the bytes (the oracle of what was sent).
 * Functions return 0 or -errno and leave the calling thread in the
 * namespace the program started in. Include netlat_util.h first.
 */
#ifndef NETLAT_TCP_H
#define NETLAT_TCP_H

#include <pthread.h>
#include <setjmp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "netlat_nl.h"

/* The network namespace the program started in. */
static int nl_ns_home = -1;

static inline int nl_ns_enter(int fd)
{
	return setns(fd, CLONE_NEWNET) ? -errno : 0;
}

/* A new network namespace: its fd, or -errno. */
static inline int nl_ns_new(void)
{
	int fd;

	if (nl_ns_home < 0) {
		nl_ns_home = open("/proc/thread-self/ns/net",
				  O_RDONLY | O_CLOEXEC);
		if (nl_ns_home < 0)
			return -errno;
	}
	if (unshare(CLONE_NEWNET))
		return -errno;
	fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	nl_ns_enter(nl_ns_home);
	return fd;
}

/* An IPv6 address (a colon in it), not IPv4? */
static inline bool nl_is_v6(const char *addr)
{
	return strchr(addr, ':');
}

/* @addr (IPv4, IPv6 or v4-mapped IPv6):@port in *@a; its length. */
static inline socklen_t nl_sockaddr(struct sockaddr_in6 *a, const char *addr,
				    uint16_t port)
{
	struct sockaddr_in *a4 = (void *)a;

	memset(a, 0, sizeof(*a));
	if (nl_is_v6(addr)) {
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		return inet_pton(AF_INET6, addr, &a->sin6_addr) == 1 ?
		       sizeof(*a) : 0;
	}
	a4->sin_family = AF_INET;
	a4->sin_port = htons(port);
	return inet_pton(AF_INET, addr, &a4->sin_addr) == 1 ? sizeof(*a4) : 0;
}

/* Bring up @dev with @addr/24 or IPv6 @addr/64 (and lo) in namespace @ns. */
static inline int nl_ns_addr_up(int ns, const char *dev, const char *addr)
{
	int ret = nl_ns_enter(ns);

	if (!ret)
		ret = nl_is_v6(addr) ? nlr_addr6(dev, addr, 64) :
				       nlr_addr4(dev, addr, 24);
	if (!ret)
		ret = nlr_link_up(dev);
	if (!ret)
		ret = nlr_link_up("lo");
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* veth pair @dev_a (@addr_a, in @ns_a) - @dev_b (@addr_b, in @ns_b), up. */
static inline int nl_ns_veth(int ns_a, const char *dev_a, const char *addr_a,
			     int ns_b, const char *dev_b, const char *addr_b)
{
	int ret = nl_ns_enter(ns_a);

	if (!ret)
		ret = nlr_veth(dev_a, dev_b, ns_b);
	nl_ns_enter(nl_ns_home);
	if (!ret)
		ret = nl_ns_addr_up(ns_a, dev_a, addr_a);
	if (!ret)
		ret = nl_ns_addr_up(ns_b, dev_b, addr_b);
	return ret;
}

/* A veth pair: @dev_a with @addr_a in one namespace, @dev_b, @addr_b. */
/*
 * New namespaces *@a and *@b joined by a veth pair, @dev_a (@addr_a) in A
 * and @dev_b (@addr_b) in B, with the devices' defaults (GSO on). 0, or
 * -errno with the failed step in @why.
 */
static inline int nl_pair_ns(int *a, const char *dev_a, const char *addr_a,
			     int *b, const char *dev_b, const char *addr_b,
			     char *why, size_t len)
{
	int ret = *a = nl_ns_new();

	if (ret >= 0)
		ret = *b = nl_ns_new();
	if (ret >= 0)
		ret = nl_ns_veth(*a, dev_a, addr_a, *b, dev_b, addr_b);
	if (ret)
		snprintf(why, len, "topology: %s", strerror(-ret));
	return ret;
}

struct nl_pair {
	const char *dev_a, *addr_a, *dev_b, *addr_b;
};

/*
 * Two senders and a receiver: new namespaces *@a, *@b and *@c, the veth
 * pair @ab from A to B and @cb from C to B.
 */
static inline int nl_two_senders(int *a, int *b, int *c,
				 const struct nl_pair *ab,
				 const struct nl_pair *cb)
{
	int ret = *a = nl_ns_new();

	if (ret >= 0)
		ret = *b = nl_ns_new();
	if (ret >= 0)
		ret = *c = nl_ns_new();
	if (ret < 0)
		return ret;
	ret = nl_ns_veth(*a, ab->dev_a, ab->addr_a, *b, ab->dev_b, ab->addr_b);
	if (!ret)
		ret = nl_ns_veth(*c, cb->dev_a, cb->addr_a, *b, cb->dev_b,
				 cb->addr_b);
	return ret;
}

/* Wait until @addr can be bound in namespace @ns (an IPv6 address stays
 * tentative until its link has carrier, even without DAD). */
static inline int nl_addr_ready(int ns, const char *addr, unsigned int secs)
{
	uint64_t end = nl_mono_ns() + secs * 1000000000ull;
	struct sockaddr_in6 a;
	socklen_t alen = nl_sockaddr(&a, addr, 0);
	int ret = nl_ns_enter(ns), fd;

	while (!ret) {
		fd = socket(a.sin6_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ret = fd < 0 || bind(fd, (void *)&a, alen) ? -errno : 0;
		if (fd >= 0)
			close(fd);
		if (ret != -EADDRNOTAVAIL || nl_mono_ns() > end)
			break;
		ret = 0;
		nl_sleep_ms(10);
	}
	nl_ns_enter(nl_ns_home);
	return ret;
}

/*
 * The retransmission tests' topology: new namespaces *@a and *@b joined by
 * a veth pair, @dev_a (@addr_a/24) in A and @dev_b (@addr_b/24) in B. On
 * @dev_a TSO/GSO are off and gso_max_segs is 1, so that every skb is one
 * segment (TCP always builds GSO skbs, bounded by the device's
 * gso_max_segs) and a netem root qdisc, losing @loss_pct, drops segments.
 * 0, or -errno with the failed step in @why.
 */
static inline int nl_lossy_pair(int *a, const char *dev_a, const char *addr_a,
				int *b, const char *dev_b, const char *addr_b,
				double loss_pct, char *why, size_t len)
{
	const char *step = "namespaces";
	int ret;

	*a = ret = nl_ns_new();
	if (ret >= 0)
		*b = ret = nl_ns_new();
	if (ret < 0)
		goto fail;
	step = "veth";
	ret = nl_ns_veth(*a, dev_a, addr_a, *b, dev_b, addr_b);
	if (ret)
		goto fail;
	step = "gso off";
	ret = nl_ns_enter(*a);
	if (!ret)
		ret = nlr_no_gso(dev_a);
	if (!ret)
		ret = nlr_gso_max_segs(dev_a, 1);
	if (!ret) {
		step = "netem";
		ret = nlr_netem(dev_a, loss_pct);
	}
	nl_ns_enter(nl_ns_home);
	if (!ret)
		return 0;
fail:
	snprintf(why, len, "%s: %s", step, strerror(-ret));
	return ret;
}

/* Value of @name in the "@prefix:" table of /proc/net/@file in @ns. */
static inline long long nl_mib(int ns, const char *file,
				 const char *prefix, const char *name)
{
	char path[64], hdr[4096], val[4096], *hs, *vs, *h, *v;
	long long out = -1;
	FILE *f;

	if (nl_ns_enter(ns))
		return -1;
	snprintf(path, sizeof(path), "/proc/thread-self/net/%s", file);
	f = fopen(path, "r");
	nl_ns_enter(nl_ns_home);
	if (!f)
		return -1;
	while (fgets(hdr, sizeof(hdr), f) && fgets(val, sizeof(val), f)) {
		if (strncmp(hdr, prefix, strlen(prefix)) ||
		    hdr[strlen(prefix)] != ':')
			continue;
		h = strtok_r(hdr, " \n", &hs);
		v = strtok_r(val, " \n", &vs);
		while ((h = strtok_r(NULL, " \n", &hs)) &&
		       (v = strtok_r(NULL, " \n", &vs)))
			if (!strcmp(h, name)) {
				out = strtoll(v, NULL, 10);
				break;
			}
		break;
	}
	fclose(f);
	return out;
}

/*
 * TcpExt TCPOrigDataSent of @ns_a and @ns_b together: segments (data or
 * FIN) each sent for the first time, the packet table's oracle; -1 if
 * unreadable.
 */
static inline long long nl_orig_data_sent(int ns_a, int ns_b)
{
	long long a = nl_mib(ns_a, "netstat", "TcpExt", "TCPOrigDataSent");
	long long b = nl_mib(ns_b, "netstat", "TcpExt", "TCPOrigDataSent");

	return a < 0 || b < 0 ? -1 : a + b;
}

/* Something accepts on @addr:@port, connecting from @ns, within @secs. */
static inline bool nl_listening(int ns, const char *addr, uint16_t port,
				unsigned int secs)
{
	uint64_t end = nl_mono_ns() + secs * 1000000000ull;
	struct sockaddr_in6 a;
	socklen_t alen = nl_sockaddr(&a, addr, port);

	while (nl_mono_ns() < end) {
		int fd, ok;

		if (nl_ns_enter(ns))
			return false;
		fd = socket(a.sin6_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		nl_ns_enter(nl_ns_home);
		ok = fd >= 0 && !connect(fd, (void *)&a, alen);
		if (fd >= 0)
			close(fd);
		if (ok)
			return true;
		nl_sleep_ms(100);
	}
	return false;
}

/* The VM's cgroup2 hierarchy at @root, mounted here if nothing did. */
static inline bool nl_cgroup2(const char *root)
{
	char procs[256];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", root);
	if (!access(procs, F_OK))
		return true;
	mkdir(root, 0755);
	return !mount("cgroup2", root, "cgroup2", 0, NULL) && !access(procs, F_OK);
}

/* Write @val to the sysctl file @path in namespace @ns. */
static inline int nl_ns_sysctl(int ns, const char *path, const char *val)
{
	int ret = nl_ns_enter(ns), fd;

	if (!ret) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		ret = fd < 0 || write(fd, val, strlen(val)) < 0 ? -1 : 0;
		if (fd >= 0)
			close(fd);
	}
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* ---- the module around a test ---------------------------------------- */

/* The groups the packet level follows a sent packet with (track.c). */
#define NL_PKT_GROUPS (NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
		       NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV | \
		       NETLAT_PROBE_TCP_RETRANS)

/*
 * In a test (kselftest harness): skip unless every group in @groups is
 * available in *@pr, then enable exactly those (state back in *@pr).
 */
#define nl_need_groups(fd, pr, groups)					\
	do {								\
		uint64_t __g = (groups);				\
									\
		if (((pr)->available & __g) != __g)			\
			SKIP(longjmp(_metadata->env, 1),		\
			     "probe groups 0x%llx unavailable (available 0x%llx)", \
			     (unsigned long long)__g,			\
			     (unsigned long long)(pr)->available);	\
		ASSERT_EQ(0, nl_probes(fd, true, __g, pr));		\
		ASSERT_EQ(__g, (pr)->enabled);				\
	} while (0)

/*
 * Before a test: open the device into @fd, probes off (their state in
 * @pr), 8 MiB rings emptied, tracing on, @l ready for a read() stream.
 */
static inline int nl_prepare(int *fd, struct netlat_probes *pr,
			     struct nl_log *l, unsigned int nr_cpus)
{
	int ret;

	*fd = nl_open(0);
	if (*fd < 0)
		return -errno;
	ret = nl_probes(*fd, true, 0, pr);
	if (!ret)
		ret = nl_reconfigure(*fd, 8ull << 20, 1u << 20, 50, true);
	if (!ret)
		ret = nl_log_init(l, nr_cpus, true);
	l->expect_stream = true;
	return ret;
}

/*
 * Probes off, their state in *@pr, then every record into @l. Fails
 * (reason in @l->why) when any record was lost.
 */
static inline int nl_collect_drain(int fd, struct nl_log *l,
				   struct netlat_probes *pr)
{
	uint64_t lost = 0;
	unsigned int cpu;
	int ret = nl_probes(fd, true, 0, pr);

	if (ret)
		return nl_fail(l->why, sizeof(l->why), "probes off: %d", ret);
	ret = nl_log_drain(l, fd);
	if (ret)
		return ret;
	for (cpu = 0; cpu < l->nr_cpus; cpu++)
		lost += l->cpu[cpu].lost;
	if (lost)
		return nl_fail(l->why, sizeof(l->why), "%llu records lost",
			       (unsigned long long)lost);
	return 0;
}

/*
 * nl_collect_drain(), and fails when kprobe hits were missed since
 * @nmissed: a comparison with what the test did would be void.
 */
static inline int nl_collect(int fd, struct nl_log *l, uint64_t nmissed)
{
	struct netlat_probes pr = { 0 };
	int ret = nl_collect_drain(fd, l, &pr);

	if (!ret && pr.nmissed != nmissed)
		return nl_fail(l->why, sizeof(l->why), "%llu kprobe hits missed",
			       (unsigned long long)(pr.nmissed - nmissed));
	return ret;
}

/* Kprobe hits the probes of @groups missed between @before and @after. */
static inline uint64_t nl_missed_in(const struct netlat_probes *before,
				    const struct netlat_probes *after,
				    uint64_t groups)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < 64; i++)
		if (groups & (1ULL << i))
			n += after->group_missed[i] - before->group_missed[i];
	return n;
}

/*
 * nl_collect_drain(), and fails only when the probes of @groups missed
 * hits since @before: a comparison that only those groups' counts make
 * is not voided by a miss elsewhere.
 */
static inline int nl_collect_groups(int fd, struct nl_log *l,
				    const struct netlat_probes *before,
				    uint64_t groups)
{
	struct netlat_probes pr;
	int ret = nl_collect_drain(fd, l, &pr);
	uint64_t n;

	if (ret)
		return ret;
	n = nl_missed_in(before, &pr, groups);
	if (n)
		return nl_fail(l->why, sizeof(l->why),
			       "%llu kprobe hits missed in groups 0x%llx",
			       (unsigned long long)n,
			       (unsigned long long)groups);
	return 0;
}

/*
 * Enable @groups (their state in *@pr), run @traffic(@arg), then every
 * record into @l; up to @tries times. A kprobe hit the kernel skipped (a
 * probe firing inside another probe's handler, e.g. from a softirq run on
 * interrupt exit) voids a comparison with what the test did: then
 * @undo(@arg), a fresh @l (the stream goes on), and again. 0, or the last
 * failure (reason in @l->why).
 */
static inline int nl_collect_retry(int fd, struct netlat_probes *pr,
				   uint64_t groups, struct nl_log *l,
				   int tries, void (*traffic)(void *),
				   void (*undo)(void *), void *arg)
{
	int attempt, ret;

	for (attempt = 1;; attempt++) {
		ret = nl_probes(fd, true, groups, pr);
		if (ret)
			return nl_fail(l->why, sizeof(l->why),
				       "probes 0x%llx: %d",
				       (unsigned long long)groups, ret);
		traffic(arg);
		ret = nl_collect(fd, l, pr->nmissed);
		if (!ret || attempt >= tries)
			return ret;
		fprintf(stderr, "# attempt %d void (%s): again\n", attempt,
			l->why);
		undo(arg);
		nl_log_free(l);
		ret = nl_log_init(l, l->nr_cpus, true);
		if (ret)
			return ret;
	}
}

/* ---- one connection, receiver thread counting bytes ------------------ */

struct nl_conn {
	int cli, srv;
	uint16_t family;	/* of its flow: AF_INET6 unless IPv4 on the wire */
	uint16_t sport, dport;
	pthread_t rx;
	bool rx_started;
	uint64_t rx_bytes;
};

static inline void *nl_conn_rx_main(void *arg)
{
	struct nl_conn *c = arg;
	char buf[16384];
	ssize_t n;

	while ((n = read(c->srv, buf, sizeof(buf))) > 0)
		c->rx_bytes += n;
	return NULL;
}

/*
 * Connect from namespace @ns_cli to @addr:@port (0: any port) listened on
 * in namespace @ns_srv: both ends and their ports in @c, no thread yet.
 * An IPv6 @addr makes AF_INET6 sockets (a v4-mapped one, IPv4 on the wire).
 */
static inline int nl_conn_connect(struct nl_conn *c, int ns_cli, int ns_srv,
				  const char *addr, uint16_t port)
{
	struct sockaddr_in6 a;
	socklen_t alen = nl_sockaddr(&a, addr, port), len = alen;
	int lfd = -1, ret = -1, one = 1;

	memset(c, 0, sizeof(*c));
	c->cli = c->srv = -1;
	if (!alen || nl_ns_enter(ns_srv))
		return -1;
	c->family = alen == sizeof(a) &&
		    !IN6_IS_ADDR_V4MAPPED(&a.sin6_addr) ? AF_INET6 : AF_INET;
	lfd = socket(a.sin6_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (void *)&a, alen) || listen(lfd, 1) ||
	    getsockname(lfd, (void *)&a, &len))
		goto out;
	/* the port is at the same offset in both families */
	c->dport = ntohs(a.sin6_port);
	if (nl_ns_enter(ns_cli))
		goto out;
	c->cli = socket(a.sin6_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->cli < 0 || connect(c->cli, (void *)&a, alen))
		goto out;
	len = alen;
	if (getsockname(c->cli, (void *)&a, &len))
		goto out;
	c->sport = ntohs(a.sin6_port);
	c->srv = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c->srv >= 0)
		ret = 0;
out:
	if (lfd >= 0)
		close(lfd);
	nl_ns_enter(nl_ns_home);
	return ret;
}

/* nl_conn_connect(), and a thread counting what the receiver reads. */
static inline int nl_conn_open(struct nl_conn *c, int ns_cli, int ns_srv,
			       const char *addr, uint16_t port)
{
	if (nl_conn_connect(c, ns_cli, ns_srv, addr, port))
		return -1;
	if (pthread_create(&c->rx, NULL, nl_conn_rx_main, c))
		return -1;
	c->rx_started = true;
	return 0;
}

static inline int nl_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static inline struct tcp_info nl_conn_info(const struct nl_conn *c)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	getsockopt(c->cli, IPPROTO_TCP, TCP_INFO, &ti, &len);
	return ti;
}

/*
 * TCP_INFO with the fields the kernel has after glibc's struct tcp_info
 * (<linux/tcp.h> cannot be included beside <netinet/tcp.h>).
 */
struct nl_tcp_info {
	struct tcp_info b;
	uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
	uint32_t segs_out, segs_in, notsent_bytes, min_rtt;
	uint32_t data_segs_in, data_segs_out;
	uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
	uint32_t delivered, delivered_ce;
	uint64_t bytes_sent, bytes_retrans;	/* every transmit's payload */
};
_Static_assert(sizeof(struct tcp_info) == 104, "glibc tcp_info");

static inline struct nl_tcp_info nl_tcp_info_of(int fd)
{
	struct nl_tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len);
	return ti;
}

/* Wait until every byte sent is acknowledged; false on timeout. */
static inline bool nl_conn_wait_acked(const struct nl_conn *c,
				      unsigned int secs)
{
	uint64_t end = nl_mono_ns() + secs * 1000000000ull;

	while (nl_mono_ns() < end) {
		int outq = -1;

		if (!ioctl(c->cli, SIOCOUTQ, &outq) && !outq)
			return true;
		nl_sleep_ms(10);
	}
	return false;
}

/* Send FIN, wait for the receiver's EOF and for our FIN to be acked. */
static inline bool nl_conn_finish(struct nl_conn *c, unsigned int secs)
{
	uint64_t end = nl_mono_ns() + secs * 1000000000ull;

	shutdown(c->cli, SHUT_WR);
	if (c->rx_started)
		pthread_join(c->rx, NULL);
	c->rx_started = false;
	while (nl_mono_ns() < end) {
		if (nl_conn_info(c).tcpi_state == TCP_FIN_WAIT2)
			return true;
		nl_sleep_ms(10);
	}
	return false;
}

static inline void nl_conn_close(struct nl_conn *c)
{
	if (c->rx_started) {
		shutdown(c->srv, SHUT_RDWR);
		pthread_join(c->rx, NULL);
	}
	c->rx_started = false;
	if (c->cli >= 0)
		close(c->cli);
	if (c->srv >= 0)
		close(c->srv);
	c->cli = c->srv = -1;
}

/* A UDP socket in @ns bound to @addr:@port (0: any); its port in *@bound. */
static inline int nl_udp_socket(int ns, const char *addr, uint16_t port,
				uint16_t *bound)
{
	struct sockaddr_in6 a;
	socklen_t alen = nl_sockaddr(&a, addr, port), len = alen;
	int fd;

	if (!alen || nl_ns_enter(ns))
		return -1;
	fd = socket(a.sin6_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (bind(fd, (void *)&a, alen) ||
			getsockname(fd, (void *)&a, &len))) {
		close(fd);
		fd = -1;
	}
	nl_ns_enter(nl_ns_home);
	*bound = ntohs(a.sin6_port);
	return fd;
}

/*
 * A UDP "connection": c->cli in @ns_a (@addr_a) connected to c->srv in
 * @ns_b (@addr_b), no thread. 0 or -1.
 */
static inline int nl_udp_open(struct nl_conn *c, int ns_a, const char *addr_a,
			      int ns_b, const char *addr_b)
{
	struct sockaddr_in6 a;
	socklen_t alen;

	memset(c, 0, sizeof(*c));
	c->cli = nl_udp_socket(ns_a, addr_a, 0, &c->sport);
	c->srv = nl_udp_socket(ns_b, addr_b, 0, &c->dport);
	c->family = nl_is_v6(addr_b) ? AF_INET6 : AF_INET;
	alen = nl_sockaddr(&a, addr_b, c->dport);
	if (c->cli < 0 || c->srv < 0 || connect(c->cli, (void *)&a, alen))
		return -1;
	return 0;
}

/*
 * The sequence number of @fd's @queue (TCP_SEND_QUEUE: write_seq,
 * TCP_RECV_QUEUE: rcv_nxt), read in repair mode; -1 on error.
 */
static inline int64_t nl_queue_seq(int fd, int queue)
{
	int on = TCP_REPAIR_ON, off = TCP_REPAIR_OFF_NO_WP;
	socklen_t len = sizeof(uint32_t);
	int64_t ret = -1;
	uint32_t seq;

	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)))
		return -1;
	if (!setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)) &&
	    !getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq, &len))
		ret = seq;
	setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off));
	return ret;
}

/* Is @f the sending side of @c (its family and ports)? */
static inline bool nl_flow_is(const struct netlat_flow *f,
			      const struct nl_conn *c)
{
	return f->family == c->family && f->sport == c->sport &&
	       f->dport == c->dport;
}

/*
 * The flow of @c's sending side in NETLAT_IOC_FLOWS (live ones, then the
 * closed ones if @closed); false if none.
 */
static inline bool nl_get_flow(int fd, const struct nl_conn *c, bool closed,
			       struct netlat_flow_stats *out)
{
	static struct netlat_flow_stats e[256 + NETLAT_FLOWS_CLOSED_MAX];
	struct netlat_flows fl;
	unsigned int i;
	bool found = false;

	memset(&fl, 0, sizeof(fl));
	fl.flags = closed ? NETLAT_FLOWS_CLOSED : 0;
	fl.nr = NL_ARRAY_SIZE(e);
	fl.entry_size = sizeof(e[0]);
	fl.entries = (uintptr_t)e;
	if (nl_ioctl(fd, NETLAT_IOC_FLOWS, &fl, sizeof(fl)))
		return false;
	/* the newest match: closed ones come oldest first */
	for (i = 0; i < fl.nr && i < NL_ARRAY_SIZE(e); i++)
		if (nl_flow_is(&e[i].flow, c) &&
		    !!(e[i].flags & NETLAT_FLOW_CLOSED) == closed) {
			*out = e[i];
			found = true;
		}
	return found;
}

/* The sum of the 8 counters of a per-kind array (retrans_segs, ...). */
static inline uint64_t nl_sum8(const __u64 *v)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		s += v[i];
	return s;
}

/* Is @f either side of @c? */
static inline bool nl_flow_of(const struct netlat_flow *f,
			      const struct nl_conn *c)
{
	return f->family == c->family &&
	       ((f->sport == c->sport && f->dport == c->dport) ||
		(f->sport == c->dport && f->dport == c->sport));
}

/* ---- packet records and the histograms ------------------------------ */

/* The two points of each stage in a record; 0 if not seen. */
static inline void nl_pkt_points(const struct netlat_rec_tcp_pkt *p, unsigned int s,
			  uint64_t *from, uint64_t *to)
{
	static const size_t pts[NETLAT_NR_STAGES][2] = {
		{ offsetof(struct netlat_rec_tcp_pkt, sendmsg_ns),
		  offsetof(struct netlat_rec_tcp_pkt, xmit_ns) },
		{ offsetof(struct netlat_rec_tcp_pkt, xmit_ns),
		  offsetof(struct netlat_rec_tcp_pkt, qdisc_ns) },
		{ offsetof(struct netlat_rec_tcp_pkt, qdisc_ns),
		  offsetof(struct netlat_rec_tcp_pkt, driver_ns) },
		{ offsetof(struct netlat_rec_tcp_pkt, driver_ns),
		  offsetof(struct netlat_rec_tcp_pkt, end_ns) },
		{ offsetof(struct netlat_rec_tcp_pkt, xmit_ns),
		  offsetof(struct netlat_rec_tcp_pkt, end_ns) },
		{ offsetof(struct netlat_rec_tcp_pkt, sendmsg_ns),
		  offsetof(struct netlat_rec_tcp_pkt, end_ns) },
		{ offsetof(struct netlat_rec_tcp_pkt, driver_ns),
		  offsetof(struct netlat_rec_tcp_pkt, vq_ns) },
	};

	memcpy(from, (const char *)p + pts[s][0], sizeof(*from));
	memcpy(to, (const char *)p + pts[s][1], sizeof(*to));
}

/*
 * The sample a sent packet's record gives stage @s: ACKed packets, both
 * points seen, in order. False if none.
 */
static inline bool nl_pkt_sample(const struct netlat_rec_tcp_pkt *p,
				 unsigned int s, uint64_t *d)
{
	uint64_t from, to;

	if (s > NETLAT_STAGE_DRIVER_VQ || !(p->flags & NETLAT_PKT_ACKED))
		return false;
	nl_pkt_points(p, s, &from, &to);
	if (!from || to < from)
		return false;
	*d = to - from;
	return true;
}

/*
 * The sample a record gives stage @s, as the uapi defines the stages:
 * copied packets, both points seen, in order. False if none.
 */
static inline bool nl_rx_sample(const struct netlat_rec_rx_pkt *p,
				unsigned int s, uint64_t *d)
{
	uint64_t from, to;

	if (!(p->flags & NETLAT_RXP_COPIED))
		return false;
	switch (s) {
	case NETLAT_STAGE_RX_NETIF_TCP:
	case NETLAT_STAGE_RX_NETIF_UDP:
		if ((s == NETLAT_STAGE_RX_NETIF_TCP) != (p->proto == NETLAT_RX_TCP))
			return false;
		from = p->netif_ns, to = p->transport_ns;
		break;
	case NETLAT_STAGE_RX_TCP_QUEUE:
		if (p->proto != NETLAT_RX_TCP)
			return false;
		from = p->transport_ns, to = p->queue_ns;
		break;
	case NETLAT_STAGE_RX_QUEUE_USER:
		from = p->queue_ns, to = p->end_ns;
		break;
	case NETLAT_STAGE_RX_NETIF_USER:
		from = p->netif_ns, to = p->end_ns;
		break;
	case NETLAT_STAGE_RX_READY_WAKEUP:
		from = p->ready_ns, to = p->wakeup_ns;
		break;
	case NETLAT_STAGE_RX_WAKEUP_RUN:
		from = p->wakeup_ns, to = p->run_ns;
		break;
	default:
		return false;
	}
	if (!from || to < from)
		return false;
	*d = to - from;
	return true;
}

/* @d into a stage histogram, as the kernel adds it. */
static inline void nl_hist_add(struct netlat_stage_hist *h, uint64_t d)
{
	h->count++;
	h->sum_ns += d;
	if (d > h->max_ns)
		h->max_ns = d;
	h->bucket[nl_hist_bucket(d)]++;
}

/* The histograms of every packet record in @l (sent and received). */
static inline void nl_hist_of_log(const struct nl_log *l,
				  struct netlat_stage_hist *st)
{
	const struct netlat_rec_hdr *h;
	unsigned int s;
	uint64_t d;

	memset(st, 0, NETLAT_NR_STAGES * sizeof(*st));
	nl_log_for_each(l, h) {
		for (s = 0; s < NETLAT_NR_STAGES; s++) {
			if (h->type == NETLAT_REC_TCP_PKT &&
			    nl_pkt_sample((const void *)h, s, &d))
				nl_hist_add(&st[s], d);
			else if (h->type == NETLAT_REC_RX_PKT &&
				 nl_rx_sample((const void *)h, s, &d))
				nl_hist_add(&st[s], d);
		}
	}
}

/* The first difference of two sets of histograms, in @why; 0 if none. */
static inline int nl_hist_diff(const struct netlat_stage_hist *a,
			       const struct netlat_stage_hist *b, char *why,
			       size_t len)
{
	unsigned int s, k;

	for (s = 0; s < NETLAT_NR_STAGES; s++) {
		if (a[s].count != b[s].count || a[s].sum_ns != b[s].sum_ns ||
		    a[s].max_ns != b[s].max_ns)
			return nl_fail(why, len, "stage %u: count %llu/%llu sum %llu/%llu max %llu/%llu",
				       s, (unsigned long long)a[s].count,
				       (unsigned long long)b[s].count,
				       (unsigned long long)a[s].sum_ns,
				       (unsigned long long)b[s].sum_ns,
				       (unsigned long long)a[s].max_ns,
				       (unsigned long long)b[s].max_ns);
		for (k = 0; k < NETLAT_HIST_BUCKETS; k++)
			if (a[s].bucket[k] != b[s].bucket[k])
				return nl_fail(why, len, "stage %u bucket %u: %llu/%llu",
					       s, k,
					       (unsigned long long)a[s].bucket[k],
					       (unsigned long long)b[s].bucket[k]);
	}
	return 0;
}

/*
 * The per-socket counters, in a bounded answer (fewer entries than
 * sockets): with the rest's sum they add up to the totals in @h.
 */
static inline int nl_flows_add_up(int fd, const struct netlat_hist *h,
				  char *why, size_t len)
{
	static struct netlat_flow_stats e[128];
	struct netlat_flow_stats sum;
	struct netlat_flows fl;
	unsigned int i;

	memset(&fl, 0, sizeof(fl));
	fl.flags = NETLAT_FLOWS_CLOSED | NETLAT_FLOWS_REST;
	fl.nr = NL_ARRAY_SIZE(e);
	fl.entry_size = sizeof(e[0]);
	fl.entries = (uintptr_t)e;
	if (nl_ioctl(fd, NETLAT_IOC_FLOWS, &fl, sizeof(fl)))
		return nl_fail(why, len, "FLOWS: %s", strerror(errno));
	if (!fl.nr || fl.nr > NL_ARRAY_SIZE(e) ||
	    !(e[fl.nr - 1].flags & NETLAT_FLOW_REST))
		return nl_fail(why, len, "%u entries, the last no sum", fl.nr);
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < fl.nr; i++) {
		sum.packets += e[i].packets;
		sum.bytes += e[i].bytes;
		sum.segs += e[i].segs;
		sum.untracked += e[i].untracked;
		sum.merged += e[i].merged;
	}
	fprintf(stderr, "# flows: %u entries, %llu sockets summed, %llu closed\n",
		fl.nr, (unsigned long long)fl.rest,
		(unsigned long long)fl.closed);
	if (sum.packets != h->packets || sum.bytes != h->bytes ||
	    sum.segs != h->segs || sum.untracked != h->untracked ||
	    sum.merged != h->merged)
		return nl_fail(why, len, "flows: packets %llu/%llu bytes %llu/%llu segs %llu/%llu untracked %llu/%llu merged %llu/%llu",
			       (unsigned long long)sum.packets,
			       (unsigned long long)h->packets,
			       (unsigned long long)sum.bytes,
			       (unsigned long long)h->bytes,
			       (unsigned long long)sum.segs,
			       (unsigned long long)h->segs,
			       (unsigned long long)sum.untracked,
			       (unsigned long long)h->untracked,
			       (unsigned long long)sum.merged,
			       (unsigned long long)h->merged);
	return 0;
}

#endif /* NETLAT_TCP_H */
