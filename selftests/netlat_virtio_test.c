// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_net probe tests (NETLAT_PROBE_VIRTIO_*), against oracles netlat
 * does not produce: the datagrams this program sends and receives, the
 * devices' packet counters (/proc/net/dev of the device's namespace, the
 * same numbers as sysfs statistics/), and the virtio ring's own indices.
 *
 * Topology: the VM's two virtio NICs on one qemu hub, eth0 moved into
 * namespace A (192.0.2.1) and eth1 into B (192.0.2.2), IPv6 disabled on
 * both and static ARP entries, so that the only packets on them are the
 * test's. Needs root, the module and the NICs; skips otherwise. The last
 * test removes and reinserts virtio_net (/lib/modules/virtio_net.ko in the
 * test VM) and rebuilds the topology on the new devices.
 */
#include "netlat_util.h"

#include <poll.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include "netlat_tcp.h"
#include "netlat_nl.h"
#include "netlat_filter.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define DEV_A	"eth0"
#define DEV_B	"eth1"
#define PORT_B	9000
#define N_DGRAMS	200
#define DGRAM_LEN	1000
/* skb->len at start_xmit: Ethernet + IPv4 + UDP headers + payload */
#define FRAME_LEN	(DGRAM_LEN + 8 + 20 + 14)
#define VIRTIO_NET_KO	"/lib/modules/virtio_net.ko"
#define MiB		(1024ull * 1024)

static int g_ns_orig = -1, g_ns_a = -1, g_ns_b = -1;
static char g_skip[160];
static struct netlat_info g_def;

static int ns_enter(int fd)
{
	return setns(fd, CLONE_NEWNET) ? -errno : 0;
}

static int new_ns(void)
{
	int fd;

	if (unshare(CLONE_NEWNET))
		return -errno;
	fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ns_enter(g_ns_orig);
	return fd;
}

/* Permanent ARP entry @addr -> @mac on @dev. */
static int nlr_neigh4(const char *dev, const char *addr,
		      const unsigned char mac[6])
{
	struct nlr_msg m;
	struct ndmsg *nd;
	struct in_addr in;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	if (inet_pton(AF_INET, addr, &in) != 1)
		return -EINVAL;
	nd = nlr_init(&m, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE,
		      sizeof(*nd));
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = idx;
	nd->ndm_state = NUD_PERMANENT;
	nlr_attr(&m, NDA_DST, &in, sizeof(in));
	nlr_attr(&m, NDA_LLADDR, mac, 6);
	return nlr_talk(&m);
}

static int get_mac(const char *dev, unsigned char mac[6])
{
	struct ifreq ifr;
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		ret = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return ret;
}

/* Packet counters of @dev in the current netns (/proc/net/dev). */
static int dev_packets(const char *dev, uint64_t *rx, uint64_t *tx)
{
	unsigned long long v[NLR_DEV_COUNTERS];
	int ret = nlr_dev_counters(dev, v);

	if (!ret) {
		*rx = v[NLR_RX_PACKETS];
		*tx = v[NLR_TX_PACKETS];
	}
	return ret;
}

static int ifindex_in(int ns, const char *dev)
{
	int idx;

	ns_enter(ns);
	idx = if_nametoindex(dev);
	ns_enter(g_ns_orig);
	return idx;
}

/*
 * eth0 into A, eth1 into B (from the initial netns, where the NICs are at
 * boot and after virtio_net is reloaded), addresses, static ARP.
 */
static int topology(const char **step)
{
	unsigned char mac_a[6], mac_b[6];
	int ret;

	ns_enter(g_ns_orig);
	*step = "move " DEV_A;
	if (if_nametoindex(DEV_A) && (ret = nlr_set_netns(DEV_A, g_ns_a)))
		return ret;
	*step = "move " DEV_B;
	if (if_nametoindex(DEV_B) && (ret = nlr_set_netns(DEV_B, g_ns_b)))
		return ret;
	*step = "namespace A";
	ret = ns_enter(g_ns_a);
	if (!ret) {
		nlr_no_ipv6(DEV_A);
		ret = nlr_addr4(DEV_A, ADDR_A, 24);
	}
	if (!ret)
		ret = nlr_link_up(DEV_A);
	if (!ret)
		ret = nlr_link_up("lo");
	if (!ret)
		ret = get_mac(DEV_A, mac_a);
	if (ret)
		goto out;
	*step = "namespace B";
	ret = ns_enter(g_ns_b);
	if (!ret) {
		nlr_no_ipv6(DEV_B);
		ret = nlr_addr4(DEV_B, ADDR_B, 24);
	}
	if (!ret)
		ret = nlr_link_up(DEV_B);
	if (!ret)
		ret = nlr_link_up("lo");
	if (!ret)
		ret = get_mac(DEV_B, mac_b);
	if (!ret)
		ret = nlr_neigh4(DEV_B, ADDR_A, mac_a);
	if (ret)
		goto out;
	*step = "ARP in A";
	ret = ns_enter(g_ns_a);
	if (!ret)
		ret = nlr_neigh4(DEV_A, ADDR_B, mac_b);
out:
	ns_enter(g_ns_orig);
	return ret;
}

static void __attribute__((constructor)) virtio_topology(void)
{
	const char *step = "unshare";
	int ret;

	if (nl_device_info(&g_def, g_skip, sizeof(g_skip)))
		return;
	g_ns_orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	ret = g_ns_orig < 0 ? -errno : new_ns();
	if (ret < 0)
		goto fail;
	g_ns_a = ret;
	ret = new_ns();
	if (ret < 0)
		goto fail;
	g_ns_b = ret;
	step = "NICs";
	if (!if_nametoindex(DEV_A) || !if_nametoindex(DEV_B)) {
		ret = -ENODEV;
		goto fail;
	}
	ret = topology(&step);
	if (!ret)
		return;
fail:
	snprintf(g_skip, sizeof(g_skip), "topology: %s: %s", step,
		 strerror(-ret));
	if (g_ns_orig >= 0)
		ns_enter(g_ns_orig);
}

/* ---- traffic ------------------------------------------------------------ */

struct counts {
	uint64_t rx_b, tx_a;
};

static int read_counts(struct counts *c)
{
	uint64_t dummy;
	int ret;

	ret = ns_enter(g_ns_a);
	if (!ret)
		ret = dev_packets(DEV_A, &dummy, &c->tx_a);
	if (!ret)
		ret = ns_enter(g_ns_b);
	if (!ret)
		ret = dev_packets(DEV_B, &c->rx_b, &dummy);
	ns_enter(g_ns_orig);
	return ret;
}

/*
 * Send @n UDP datagrams A -> B, paced, and receive them in B. Returns the
 * number received, or -errno.
 */
static int udp_traffic(int n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char buf[DGRAM_LEN];
	int rx = -1, tx = -1, got = 0, i, ret = 0;
	uint64_t end;

	memset(buf, 0x5a, sizeof(buf));
	if (ns_enter(g_ns_b))
		return -errno;
	rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	sa.sin_port = htons(PORT_B);
	inet_pton(AF_INET, ADDR_B, &sa.sin_addr);
	if (rx < 0 || bind(rx, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		goto out;
	}
	if (ns_enter(g_ns_a)) {
		ret = -errno;
		goto out;
	}
	tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tx < 0) {
		ret = -errno;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&sa,
			   sizeof(sa)) != sizeof(buf)) {
			ret = -errno;
			goto out;
		}
		usleep(500);
		while (recv(rx, buf, sizeof(buf), 0) == sizeof(buf))
			got++;
	}
	end = nl_mono_ns() + 3000000000ull;
	while (got < n && nl_mono_ns() < end) {
		if (recv(rx, buf, sizeof(buf), 0) == sizeof(buf))
			got++;
		else
			usleep(1000);
	}
	ret = got;
out:
	if (rx >= 0)
		close(rx);
	if (tx >= 0)
		close(tx);
	ns_enter(g_ns_orig);
	return ret;
}

/* Wait until the counters stop moving (TX completions are counted late). */
static void settle(struct counts *c)
{
	struct counts prev;
	int stable = 0, i;

	read_counts(c);
	for (i = 0; i < 60 && stable < 4; i++) {
		prev = *c;
		nl_sleep_ms(50);
		read_counts(c);
		stable = (prev.tx_a == c->tx_a && prev.rx_b == c->rx_b) ?
			 stable + 1 : 0;
	}
}

/* ---- fixture ------------------------------------------------------------ */

FIXTURE(virtio) {
	int fd;
	struct nl_log log;
	struct netlat_probes pr;
	int ia, ib;
};

static void need_topology(struct __test_metadata *_metadata,
			  FIXTURE_DATA(virtio) *self)
{
	const char *step = "";

	self->ia = ifindex_in(g_ns_a, DEV_A);
	self->ib = ifindex_in(g_ns_b, DEV_B);
	if (self->ia && self->ib)
		return;
	ASSERT_EQ(0, topology(&step)) TH_LOG("topology: %s", step);
	self->ia = ifindex_in(g_ns_a, DEV_A);
	self->ib = ifindex_in(g_ns_b, DEV_B);
	ASSERT_NE(0, self->ia);
	ASSERT_NE(0, self->ib);
}

FIXTURE_SETUP(virtio)
{
	self->fd = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	if ((self->pr.available & NETLAT_PROBE_VIRTIO_ALL) !=
	    NETLAT_PROBE_VIRTIO_ALL)
		SKIP(longjmp(_metadata->env, 1),
		     "virtio groups unavailable (available 0x%llx)",
		     (unsigned long long)self->pr.available);
	ASSERT_EQ(0, nl_reconfigure(self->fd, 8 * MiB, MiB, 50, true));
	ASSERT_EQ(0, nl_log_init(&self->log, g_def.nr_cpus, true));
	self->log.expect_stream = true;
	need_topology(_metadata, self);
}

FIXTURE_TEARDOWN(virtio)
{
	if (self->fd >= 0) {
		EXPECT_EQ(0, nl_set_rules(self->fd, NULL, 0));
		EXPECT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
		EXPECT_EQ(0, nl_reconfigure(self->fd, g_def.ring_bytes,
					    g_def.watermark, g_def.flush_ms,
					    true));
		close(self->fd);
	}
	nl_log_free(&self->log);
}

/* Disable probes, read everything; no record may have been lost. */
static void collect(struct __test_metadata *_metadata,
		    FIXTURE_DATA(virtio) *self)
{
	struct netlat_probes pr;
	unsigned int cpu;
	uint64_t lost = 0;

	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &pr));
	ASSERT_EQ(0, nl_log_drain(&self->log, self->fd))
		TH_LOG("%s", self->log.why);
	for (cpu = 0; cpu < self->log.nr_cpus; cpu++)
		lost += self->log.cpu[cpu].lost;
	ASSERT_EQ(0ull, lost) TH_LOG("records lost: the comparison is void");
	/*
	 * An interrupt callback (skb_xmit_done, skb_recv_done) that fires
	 * while another kprobe handler runs on its CPU is skipped by the
	 * kprobe layer (nmissed). The counted probes run in process or
	 * softirq context with bottom halves off: a miss there would break
	 * the exact comparisons, which is what they check.
	 */
	if (pr.nmissed != self->pr.nmissed)
		TH_LOG("kprobe hits missed: %llu",
		       (unsigned long long)(pr.nmissed - self->pr.nmissed));
}

#define for_each_vrec(self, h, r)					\
	nl_log_for_each(&(self)->log, h)				\
		if ((h)->type == NETLAT_REC_VIRTIO &&			\
		    ((r) = (const struct netlat_rec_virtio *)(h)))

/* The virtqueue fields of @r, where valid, are consistent. */
static void check_vq(struct __test_metadata *_metadata,
		     const struct netlat_rec_virtio *r)
{
	ASSERT_EQ(0, r->reserved0);
	ASSERT_EQ(0ull, r->reserved);
	if (!(r->flags & NETLAT_VIRTIO_VQ_VALID))
		return;
	ASSERT_LT(0u, r->ring_size);
	ASSERT_LE(r->num_free, r->ring_size);
	ASSERT_LE(r->ring_size, r->num_max ? r->num_max : r->ring_size);
	ASSERT_EQ(0u, r->flags & NETLAT_VIRTIO_BROKEN);
	ASSERT_EQ(r->vq_index / 2, r->queue);
	ASSERT_NE(0ull, r->dev_id);
	/* QEMU's virtio-net-pci uses split rings unless packed=on */
	ASSERT_EQ(0u, r->flags & NETLAT_VIRTIO_PACKED);
	ASSERT_NE(0u, r->flags & NETLAT_VIRTIO_SPLIT_VALID);
	/* buffers the device has not used yet fit in the ring */
	ASSERT_LE((uint16_t)(r->avail_idx - r->used_idx), r->ring_size);
}

/* ---- tests -------------------------------------------------------------- */

TEST_F(virtio, groups_available)
{
	struct netlat_info info;

	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL,
		  info.probe_groups & NETLAT_PROBE_VIRTIO_ALL);
	EXPECT_EQ(0ull, self->pr.partial & NETLAT_PROBE_VIRTIO_ALL);
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL,
			       &self->pr));
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL, self->pr.enabled);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	EXPECT_EQ(0ull, self->pr.enabled);
}

/*
 * N datagrams A -> B. Oracles: start_xmit records on eth0 == delta of
 * its tx_packets, receive_buf records on eth1 == delta of its rx_packets,
 * virtnet_poll's work done == receive_buf calls, the TX ring's avail idx
 * advancing by exactly one per start_xmit.
 */
static void traffic_check(struct __test_metadata *_metadata,
			  FIXTURE_DATA(virtio) *self)
{
	uint64_t n_xmit = 0, n_recv = 0, n_xmit_all = 0, n_recv_all = 0;
	uint64_t n_frames = 0, n_done = 0, n_rdone = 0, n_gro = 0, work = 0;
	uint64_t n_poll = 0, t0, t1;
	const struct netlat_rec_virtio *r, *first = NULL;
	const struct netlat_rec_hdr *h;
	static unsigned char seen[65536];
	struct counts c0, c1;
	int got;

	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL,
			       &self->pr));
	nl_sleep_ms(200);
	settle(&c0);
	t0 = nl_mono_ns();
	ASSERT_EQ(0, read_counts(&c0));
	got = udp_traffic(N_DGRAMS);
	ASSERT_EQ(N_DGRAMS, got);
	settle(&c1);
	t1 = nl_mono_ns();
	collect(_metadata, self);

	memset(seen, 0, sizeof(seen));
	/* records come per CPU: the base of the avail idx is the earliest */
	for_each_vrec(self, h, r)
		if (r->event == NETLAT_VIRTIO_XMIT && r->ifindex == self->ia &&
		    (!first || h->ts_ns < first->hdr.ts_ns))
			first = r;
	for_each_vrec(self, h, r) {
		bool win = h->ts_ns >= t0 && h->ts_ns <= t1;

		check_vq(_metadata, r);
		switch (r->event) {
		case NETLAT_VIRTIO_XMIT:
			ASSERT_NE(0u, r->flags & NETLAT_VIRTIO_VQ_VALID);
			ASSERT_EQ(2u * r->queue + 1, r->vq_index);
			ASSERT_NE(0ull, r->skb_id);
			if (r->ifindex != self->ia)
				break;
			n_xmit_all++;
			n_xmit += win;
			n_frames += win && r->len == FRAME_LEN;
			/* one descriptor chain per skb: avail idx + 1 */
			ASSERT_EQ(first->vq_index, r->vq_index);
			ASSERT_EQ(0, seen[(uint16_t)(r->avail_idx -
						     first->avail_idx)]++)
				TH_LOG("avail idx %u twice", r->avail_idx);
			break;
		case NETLAT_VIRTIO_XMIT_DONE:
			ASSERT_NE(0u, r->vq_index & 1u);
			n_done += r->ifindex == self->ia;
			break;
		case NETLAT_VIRTIO_RECV_DONE:
			ASSERT_EQ(0u, r->vq_index & 1u);
			n_rdone += r->ifindex == self->ib;
			break;
		case NETLAT_VIRTIO_RECV:
			if (r->ifindex != self->ib)
				break;
			n_recv_all++;
			n_recv += win;
			if (r->flags & NETLAT_VIRTIO_VQ_VALID)
				ASSERT_EQ(0, r->vq_index);
			break;
		case NETLAT_VIRTIO_POLL:
			ASSERT_LT(0, r->budget);
			ASSERT_LE(r->work, r->budget);
			ASSERT_LE(0, r->work);
			if (r->ifindex == self->ib) {
				work += r->work;
				n_poll++;
			}
			break;
		case NETLAT_VIRTIO_GRO:
			n_gro += r->ifindex == self->ib;
			break;
		default:
			ASSERT_TRUE(0) TH_LOG("event %u", r->event);
		}
	}
	TH_LOG("eth0 tx_packets +%llu, start_xmit %llu (%llu frames of the "
	       "test), xmit_done %llu; eth1 rx_packets +%llu, receive_buf "
	       "%llu, recv_done %llu, polls %llu (work %llu), gro %llu",
	       (unsigned long long)(c1.tx_a - c0.tx_a),
	       (unsigned long long)n_xmit, (unsigned long long)n_frames,
	       (unsigned long long)n_done,
	       (unsigned long long)(c1.rx_b - c0.rx_b),
	       (unsigned long long)n_recv, (unsigned long long)n_rdone,
	       (unsigned long long)n_poll, (unsigned long long)work,
	       (unsigned long long)n_gro);
	EXPECT_EQ(c1.tx_a - c0.tx_a, n_xmit);
	EXPECT_EQ(c1.rx_b - c0.rx_b, n_recv);
	EXPECT_EQ((uint64_t)N_DGRAMS, n_frames);
	EXPECT_LE((uint64_t)N_DGRAMS, n_recv);
	EXPECT_LT(0ull, n_done);
	EXPECT_LT(0ull, n_rdone);
	EXPECT_EQ(n_recv_all, work);
	EXPECT_EQ(n_recv_all, n_gro);
	/* avail idx: n_xmit_all distinct values, consecutive */
	ASSERT_LT(0ull, n_xmit_all);
	ASSERT_LE(n_xmit_all, 65536ull);
	for (got = 0; got < (int)n_xmit_all; got++)
		ASSERT_EQ(1, seen[got]) TH_LOG("avail idx +%d missing", got);
}

TEST_F(virtio, tx_rx_match_counters)
{
	traffic_check(_metadata, self);
}

TEST_F(virtio, disable_stops_records)
{
	const struct netlat_rec_hdr *h;
	size_t n = 0;

	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL,
			       &self->pr));
	ASSERT_EQ(N_DGRAMS / 4, udp_traffic(N_DGRAMS / 4));
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	ASSERT_EQ(0, nl_log_drain(&self->log, self->fd))
		TH_LOG("%s", self->log.why);
	ASSERT_LE((size_t)N_DGRAMS / 4,
		  nl_log_count(&self->log, NETLAT_REC_VIRTIO, -1));
	nl_log_clear(&self->log);
	ASSERT_EQ(N_DGRAMS / 4, udp_traffic(N_DGRAMS / 4));
	nl_sleep_ms(100);
	ASSERT_EQ(0, nl_log_drain(&self->log, self->fd))
		TH_LOG("%s", self->log.why);
	nl_log_for_each(&self->log, h)
		n += h->type == NETLAT_REC_VIRTIO;
	EXPECT_EQ(0u, n);
}

/*
 * A TCP connection A -> B on @port, both ends non-blocking: @fd[0] in A,
 * @fd[1] in B. 0 or -errno (nothing left open).
 */
static int tcp_pair(int port, int fd[2])
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int lfd = -1, one = 1, ret = 0;

	fd[0] = fd[1] = -1;
	sa.sin_port = htons(port);
	inet_pton(AF_INET, ADDR_B, &sa.sin_addr);
	if (ns_enter(g_ns_b))
		return -errno;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
				  sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		goto fail;
	if (ns_enter(g_ns_a))
		goto fail;
	fd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd[0] < 0 || connect(fd[0], (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	fd[1] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd[1] < 0 || fcntl(fd[0], F_SETFL, O_NONBLOCK))
		goto fail;
	goto out;
fail:
	ret = -errno;
	if (fd[0] >= 0)
		close(fd[0]);
	if (fd[1] >= 0)
		close(fd[1]);
	fd[0] = fd[1] = -1;
out:
	if (lfd >= 0)
		close(lfd);
	ns_enter(g_ns_orig);
	return ret;
}

/* TCP A -> B: @total bytes over one connection. 0 or -errno. */
/* TCP_INFO of tcp_traffic()'s sender before its close */
static struct nl_tcp_info g_tcp_info;

static int tcp_traffic(size_t total)
{
	static char buf[4096];
	int fd[2], ret;
	size_t sent = 0, got = 0;
	uint64_t end = nl_mono_ns() + 20000000000ull;
	ssize_t n;

	ret = tcp_pair(PORT_B + 1, fd);
	if (ret)
		return ret;
	while (got < total && nl_mono_ns() < end) {
		if (sent < total) {
			n = send(fd[0], buf, total - sent < sizeof(buf) ?
				 total - sent : sizeof(buf), 0);
			if (n > 0)
				sent += n;
			else if (errno != EAGAIN)
				goto fail;
		}
		n = recv(fd[1], buf, sizeof(buf), 0);
		if (n > 0)
			got += n;
		else if (n == 0 || errno != EAGAIN)
			goto fail;
		else
			usleep(100);
	}
	ret = got == total ? 0 : -ETIMEDOUT;
	/* the sender's own counts, before the close sends FIN and ACKs */
	g_tcp_info = nl_tcp_info_of(fd[0]);
	goto out;
fail:
	ret = -errno;
out:
	close(fd[1]);
	close(fd[0]);
	return ret;
}

/*
 * A TCP transfer with the TCP_DEV group: every segment handed to eth0's
 * driver (net:net_dev_start_xmit) has a start_xmit record with the same
 * skb id, flow and sequence. Then the reader prints the records (text,
 * JSON) and summarises the virtqueues.
 */
TEST_F(virtio, tcp_join_and_reader)
{
	const char *cap = "/tmp/netlat_virtio_cap";
	const struct netlat_rec_virtio *r, *best;
	const struct netlat_rec_hdr *h, *g;
	unsigned long long rep_xmit = 0, lat_count = 0;
	unsigned int dev_recs = 0, joined = 0, xmits = 0, dones = 0, text = 0;
	unsigned int json = 0;
	char cmd[256], line[1024], pat[64];
	bool have_table = false, have_lat = false;
	FILE *f;

	if (!(self->pr.available & NETLAT_PROBE_TCP_DEV))
		SKIP(return, "no TCP_DEV group");
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL |
			       NETLAT_PROBE_TCP_DEV, &self->pr));
	ASSERT_EQ(0, tcp_traffic(64 * 1024));
	nl_sleep_ms(100);
	collect(_metadata, self);

	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_dev *d = (const void *)h;

		if (h->type == NETLAT_REC_VIRTIO &&
		    ((const struct netlat_rec_virtio *)h)->ifindex == self->ia) {
			r = (const void *)h;
			xmits += r->event == NETLAT_VIRTIO_XMIT;
			dones += r->event == NETLAT_VIRTIO_XMIT_DONE;
		}
		if (h->type != NETLAT_REC_TCP_DEV || d->stage != NETLAT_DEV_DRIVER ||
		    d->ifindex != self->ia)
			continue;
		dev_recs++;
		/*
		 * skb addresses are recycled: the start_xmit of this skb is
		 * the first one with its id after it on the same CPU.
		 */
		best = NULL;
		nl_log_for_each(&self->log, g) {
			r = (const void *)g;
			if (g->type == NETLAT_REC_VIRTIO &&
			    r->event == NETLAT_VIRTIO_XMIT &&
			    r->skb_id == d->skb_id && g->cpu == h->cpu &&
			    g->ts_ns >= h->ts_ns &&
			    (!best || g->ts_ns < best->hdr.ts_ns))
				best = r;
		}
		if (!best)
			continue;
		r = best;
		EXPECT_NE(0u, r->flags & NETLAT_VIRTIO_FLOW_VALID);
		EXPECT_EQ(d->seq, r->seq);
		EXPECT_EQ(d->len, r->tcp_len);
		EXPECT_EQ(d->flow.sport, r->flow.sport);
		EXPECT_EQ(d->flow.dport, r->flow.dport);
		EXPECT_EQ(d->flow.cookie, r->flow.cookie);
		EXPECT_EQ(0, memcmp(d->flow.saddr, r->flow.saddr, 16));
		joined++;
	}
	TH_LOG("TCP_DEV driver records on eth0 %u, joined %u, start_xmit %u",
	       dev_recs, joined, xmits);
	EXPECT_LT(40u, dev_recs);	/* 64 KiB in <= 1448-byte segments */
	EXPECT_EQ(dev_recs, joined);

	if (access("/bin/netlat", X_OK))
		SKIP(return, "/bin/netlat not installed");
	f = fopen(cap, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1u, fwrite(self->log.buf, self->log.len, 1, f));
	fclose(f);

	snprintf(pat, sizeof(pat), "VIRTIO xmit ifindex=%d ", self->ia);
	snprintf(cmd, sizeof(cmd), "/bin/netlat tail %s", cap);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		text += strstr(line, pat) && strstr(line, " tcp=192.0.2.1:") &&
			strstr(line, " vq=output.");
	EXPECT_EQ(0, pclose(f));

	snprintf(pat, sizeof(pat), "\"event\":\"xmit\",\"ifindex\":%d,",
		 self->ia);
	snprintf(cmd, sizeof(cmd), "/bin/netlat tail --json %s", cap);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		json += strstr(line, "\"type\":\"VIRTIO\"") && strstr(line, pat);
	EXPECT_EQ(0, pclose(f));
	TH_LOG("reader: %u TCP xmit lines, %u JSON xmit objects", text, json);
	EXPECT_EQ(joined, text);
	EXPECT_EQ(xmits, json);

	snprintf(cmd, sizeof(cmd), "/bin/netlat report %s", cap);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		int ifi;
		char vq[32], dir[8];
		unsigned long long x;

		if (strstr(line, "virtqueues (virtio_net):"))
			have_table = true;
		if (strstr(line, "start_xmit -> skb_xmit_done"))
			have_lat = true;
		if (have_lat &&
		    sscanf(line, " %d output.%*u %llu", &ifi, &x) == 2 &&
		    ifi == self->ia)
			lat_count = x;
		if (have_table)
			fputs(line, stderr);
		if (have_table && !have_lat &&
		    sscanf(line, " %d %31s %7s %llu", &ifi, vq, dir, &x) == 4 &&
		    ifi == self->ia && !strcmp(dir, "tx"))
			rep_xmit += x;
	}
	EXPECT_EQ(0, pclose(f));
	EXPECT_TRUE(have_table);
	EXPECT_EQ((unsigned long long)xmits, rep_xmit);
	/*
	 * start_xmit -> TX interrupt pairs: one per xmit at most, and some
	 * if there was a TX interrupt at all (7.3's virtio_net cleans its TX
	 * ring mostly from start_xmit and NAPI: few or none in 64 KiB)
	 */
	TH_LOG("eth0: %u xmit, %u xmit_done records; report: %llu pairs",
	       xmits, dones, lat_count);
	EXPECT_LE(lat_count, (unsigned long long)xmits);
	if (dones) {
		EXPECT_TRUE(have_lat);
		EXPECT_LT(0ull, lat_count);
	} else {
		EXPECT_EQ(0ull, lat_count);
	}
	unlink(cap);
}

/*
 * The packet level over eth0: each TCP packet's record carries the
 * virtqueue its first segment met (start_xmit), with driver <= virtqueue
 * <= ACK, and no VIRTIO record is written, with both virtio groups on:
 * only start_xmit of virtio's kprobes is armed at that level (the
 * kernel's kprobe list), every one at the event level. Oracles: the
 * sender's TCP_INFO (data segments, retransmits, all segments) and eth0's
 * tx_packets.
 */
TEST_F(virtio, pkt_level_vq)
{
	const uint64_t groups = NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT |
				NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV |
				NETLAT_PROBE_TCP_RETRANS | NETLAT_PROBE_VIRTIO_TX |
				NETLAT_PROBE_VIRTIO_RX;
	/* what each level arms of virtio's kprobes (the kernel's list) */
	static const struct {
		const char *sym;
		int events, packets;
	} armed[] = {
		{ "start_xmit", 1, 1 },
		{ "skb_xmit_done", 1, 0 },
		{ "skb_recv_done", 1, 0 },
		{ "receive_buf", 1, 0 },
	};
	unsigned int i;
	uint64_t n_pkt = 0, n_driver = 0, n_vq = 0, n_vq_acked = 0, segs = 0;
	uint64_t vtx = 0, n_vq_all = 0, tx;
	static struct netlat_stage_hist st[NETLAT_NR_STAGES];
	const struct netlat_rec_hdr *h;
	struct netlat_hist hist;
	struct counts c0, c1;
	struct nl_tcp_info ti;

	if ((self->pr.available & groups) != groups)
		SKIP(return, "TCP groups unavailable");
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	ASSERT_LE(0, nl_kprobe_armed("start_xmit", 'k'))
		TH_LOG("no /sys/kernel/debug/kprobes/list with virtio's kprobes");
	for (i = 0; i < NL_ARRAY_SIZE(armed); i++)
		EXPECT_EQ(armed[i].events, nl_kprobe_armed(armed[i].sym, 'k'))
			TH_LOG("%s at the event level", armed[i].sym);
	if (nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0))
		SKIP(return, "no packet level");
	for (i = 0; i < NL_ARRAY_SIZE(armed); i++)
		EXPECT_EQ(armed[i].packets, nl_kprobe_armed(armed[i].sym, 'k'))
			TH_LOG("%s at the packet level", armed[i].sym);
	nl_sleep_ms(200);
	settle(&c0);
	ASSERT_EQ(0, tcp_traffic(256 * 1024));
	ti = g_tcp_info;
	settle(&c1);
	collect(_metadata, self);
	memset(&hist, 0, sizeof(hist));
	hist.nr_stages = NETLAT_NR_STAGES;
	hist.stage_size = sizeof(st[0]);
	hist.stages = (uintptr_t)st;
	ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_HIST, &hist, sizeof(hist)));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));

	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;

		/* no VIRTIO record of either direction at this level */
		if (h->type == NETLAT_REC_VIRTIO) {
			vtx++;
			continue;
		}
		/* every packet's driver>vq sample, either direction */
		if (h->type == NETLAT_REC_TCP_PKT &&
		    (p->flags & NETLAT_PKT_ACKED) &&
		    (p->flags & NETLAT_PKT_DRIVER) && (p->flags & NETLAT_PKT_VQ) &&
		    p->vq_ns >= p->driver_ns)
			n_vq_all++;
		if (h->type != NETLAT_REC_TCP_PKT || p->flow.dport != PORT_B + 1)
			continue;
		ASSERT_LE(sizeof(*p), h->size);
		ASSERT_EQ(0u, p->reserved2);
		n_pkt++;
		/* the FIN after TCP_INFO was read is no data segment */
		if (p->end_seq - p->seq > 1)
			segs += p->segs;
		if (!(p->flags & NETLAT_PKT_DRIVER))
			continue;
		n_driver++;
		if (!(p->flags & NETLAT_PKT_VQ))
			continue;
		n_vq++;
		ASSERT_LE(p->driver_ns, p->vq_ns);
		if (p->flags & NETLAT_PKT_ACKED) {
			ASSERT_LE(p->vq_ns, p->end_ns);
			n_vq_acked++;
		}
		ASSERT_LT(0u, p->vq_size);
		ASSERT_LE(p->vq_free, p->vq_size);
		ASSERT_EQ(0u, p->vq_queue);	/* one queue pair */
	}
	tx = c1.tx_a - c0.tx_a;
	TH_LOG("packets %llu, at the driver %llu, with the virtqueue %llu; data segments %llu vs TCP_INFO data_segs_out %u - total_retrans %u; eth0 tx_packets +%llu vs segs_out %u; VIRTIO records %llu",
	       (unsigned long long)n_pkt, (unsigned long long)n_driver,
	       (unsigned long long)n_vq, (unsigned long long)segs,
	       ti.data_segs_out, ti.b.tcpi_total_retrans,
	       (unsigned long long)tx, ti.segs_out,
	       (unsigned long long)vtx);
	EXPECT_LT(0ull, n_pkt);
	EXPECT_EQ(n_pkt, n_driver);
	EXPECT_EQ(n_driver, n_vq);
	EXPECT_EQ(0ull, vtx);
	/* the driver>vq histogram got exactly the records' samples (B's
	 * packets go out eth1, a virtio NIC too) */
	EXPECT_LE(n_vq_acked, n_vq_all);
	EXPECT_EQ(n_vq_all, st[NETLAT_STAGE_DRIVER_VQ].count);
	EXPECT_EQ((uint64_t)(ti.data_segs_out - ti.b.tcpi_total_retrans), segs);
	/* everything the sender sent went out eth0; after TCP_INFO was
	 * read only the close's FIN and ACK */
	EXPECT_LE((uint64_t)ti.segs_out, tx);
	EXPECT_GE((uint64_t)ti.segs_out + 3, tx);
}

/*
 * eth2 (packed ring, alone on its hub) in its own namespace: N datagrams to
 * a neighbour that does not exist (static ARP). Its records must say
 * "packed" and carry no split-ring indices; start_xmit records == delta of
 * tx_packets.
 */
/* Bytes each way of duplex_traffic(), over one connection */
#define DUPLEX_BYTES	(2u << 20)

/*
 * TCP both ways at once over one connection, A <-> B: each side sends
 * DUPLEX_BYTES while it reads the other's, so that each NIC's transmit
 * runs while its receive softirq does. 0 or -errno.
 */
static int duplex_traffic(void)
{
	static char buf[16384];
	int fd[2], ret, i;
	size_t sent[2] = { 0, 0 }, got[2] = { 0, 0 };
	uint64_t end = nl_mono_ns() + 30000000000ull;
	ssize_t n;

	ret = tcp_pair(PORT_B + 2, fd);
	if (ret)
		return ret;
	while ((got[0] < DUPLEX_BYTES || got[1] < DUPLEX_BYTES) &&
	       nl_mono_ns() < end) {
		bool idle = true;

		for (i = 0; i < 2; i++) {
			if (sent[i] < DUPLEX_BYTES) {
				size_t len = DUPLEX_BYTES - sent[i];

				n = send(fd[i], buf, len < sizeof(buf) ?
					 len : sizeof(buf), 0);
				if (n > 0) {
					sent[i] += n;
					idle = false;
				} else if (errno != EAGAIN) {
					goto fail;
				}
			}
			n = recv(fd[i], buf, sizeof(buf), 0);
			if (n > 0) {
				got[i] += n;
				idle = false;
			} else if (n == 0 || errno != EAGAIN) {
				goto fail;
			}
		}
		if (idle)
			usleep(100);
	}
	ret = got[0] == DUPLEX_BYTES && got[1] == DUPLEX_BYTES ? 0 :
	      -ETIMEDOUT;
	goto out;
fail:
	ret = -errno;
out:
	close(fd[1]);
	close(fd[0]);
	return ret;
}

/* eth0's packets sent (in A) and eth1's (in B). */
static int tx_both(uint64_t *tx_a, uint64_t *tx_b)
{
	uint64_t dummy;
	int ret;

	ret = ns_enter(g_ns_a);
	if (!ret)
		ret = dev_packets(DEV_A, &dummy, tx_a);
	if (!ret)
		ret = ns_enter(g_ns_b);
	if (!ret)
		ret = dev_packets(DEV_B, &dummy, tx_b);
	ns_enter(g_ns_orig);
	return ret;
}

/*
 * No hit lost to nesting: every group on, TCP both ways at once, so that
 * the receive softirq and the NICs' interrupts run inside the send path's
 * hooks. Oracles: each NIC's tx_packets delta equals its start_xmit
 * records, exactly, and not one hook hit was missed (nmissed).
 */
TEST_F(virtio, nested_hits_kept)
{
	uint64_t a0, b0, a1, b1, xa = 0, xb = 0;
	const struct netlat_rec_virtio *r;
	const struct netlat_rec_hdr *h;
	struct netlat_probes pr;
	char why[512] = "";
	unsigned int g;
	int len = 0;

	ASSERT_NE(self->ia, self->ib) TH_LOG("ifindex %d in both", self->ia);
	ASSERT_EQ(0, nl_reconfigure(self->fd, 16 * MiB, MiB, 50, true));
	ASSERT_EQ(0, nl_probes(self->fd, true, self->pr.available,
			       &self->pr));
	nl_sleep_ms(100);
	ASSERT_EQ(0, tx_both(&a0, &b0));
	ASSERT_EQ(0, duplex_traffic());
	nl_sleep_ms(300);
	ASSERT_EQ(0, tx_both(&a1, &b1));
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	collect(_metadata, self);
	for_each_vrec(self, h, r) {
		if (r->event != NETLAT_VIRTIO_XMIT)
			continue;
		xa += r->ifindex == self->ia;
		xb += r->ifindex == self->ib;
	}
	TH_LOG("start_xmit records %llu and %llu, tx_packets +%llu and +%llu",
	       (unsigned long long)xa, (unsigned long long)xb,
	       (unsigned long long)(a1 - a0), (unsigned long long)(b1 - b0));
	EXPECT_EQ(a1 - a0, xa);
	EXPECT_EQ(b1 - b0, xb);
	/* a fast transfer each way: thousands of segments, not a handful */
	EXPECT_LT(1000ull, xa);
	EXPECT_LT(1000ull, xb);
	for (g = 0; g < 64; g++) {
		uint64_t n = pr.group_missed[g] - self->pr.group_missed[g];

		if (n)
			len += snprintf(why + len, sizeof(why) - len,
					" group bit %u: %llu", g,
					(unsigned long long)n);
	}
	EXPECT_EQ(0ull, pr.nmissed - self->pr.nmissed) TH_LOG("missed:%s", why);
}

/* The ACKs' path: B's egress delayed by this much (a physical floor) */
#define FLOOR_MS	20

/* netem on eth1 (B's egress): @delay_ms, or none (0: the default qdisc). */
static int delay_b(uint32_t delay_ms)
{
	int ret = ns_enter(g_ns_b);

	if (!ret)
		ret = delay_ms ? nlr_netem_full(DEV_B, 0, delay_ms * 1000, 0) :
				 nlr_qdisc_del(DEV_B);
	ns_enter(g_ns_orig);
	return ret;
}

/* Whether everything @fd sent was ACKed by @end: 0 or -ETIMEDOUT. */
static int acked_all(int fd, uint64_t end)
{
	int outq = -1;

	while ((ioctl(fd, SIOCOUTQ, &outq) || outq) && nl_mono_ns() < end)
		usleep(1000);
	return outq ? -ETIMEDOUT : 0;
}

/*
 * Two TCP flows A -> B at once, @total bytes each, and a little data
 * back B -> A on each (as iperf3's server answers its client). 0 or
 * -errno.
 */
static int two_flows(size_t total)
{
	static char buf[16384];
	int fd[2][2] = { { -1, -1 }, { -1, -1 } }, ret, i;
	size_t sent[2] = { 0, 0 }, got[2] = { 0, 0 };
	uint64_t end = nl_mono_ns() + 60000000000ull;
	ssize_t n;

	for (i = 0; i < 2; i++) {
		ret = tcp_pair(PORT_B + 3 + i, fd[i]);
		if (ret)
			goto out;
		/* the answer: its segments cross netem before their driver */
		if (send(fd[i][1], "ok", 2, 0) != 2) {
			ret = -errno;
			goto out;
		}
		while (got[i] < 2 && nl_mono_ns() < end) {
			n = recv(fd[i][0], buf, 2 - got[i], 0);
			if (n > 0)
				got[i] += n;
			else if (n == 0 || errno != EAGAIN)
				break;
			else
				usleep(1000);
		}
		if (got[i] != 2) {
			ret = -EPIPE;
			goto out;
		}
		got[i] = 0;
	}
	while ((got[0] < total || got[1] < total) && nl_mono_ns() < end) {
		bool idle = true;

		for (i = 0; i < 2; i++) {
			if (sent[i] < total) {
				n = send(fd[i][0], buf, total - sent[i] <
					 sizeof(buf) ? total - sent[i] :
					 sizeof(buf), 0);
				if (n > 0) {
					sent[i] += n;
					idle = false;
				} else if (errno != EAGAIN) {
					ret = -errno;
					goto out;
				}
			}
			n = recv(fd[i][1], buf, sizeof(buf), 0);
			if (n > 0) {
				got[i] += n;
				idle = false;
			} else if (n == 0 || errno != EAGAIN) {
				ret = n ? -errno : -EPIPE;
				goto out;
			}
		}
		if (idle)
			usleep(200);
	}
	ret = got[0] == total && got[1] == total ? 0 : -ETIMEDOUT;
	/*
	 * Every byte and the FIN ACKed before the caller lifts the delay: an
	 * ACK still in netem's queue then is dropped with it, and the next
	 * one (a delayed ACK, the answer to a resent FIN) crosses no delay.
	 */
	for (i = 0; !ret && i < 2; i++) {
		ret = acked_all(fd[i][0], end);
		if (!ret && shutdown(fd[i][0], SHUT_WR))
			ret = -errno;
		if (!ret)
			ret = acked_all(fd[i][0], end);
	}
out:
	for (i = 0; i < 2; i++) {
		if (fd[i][0] >= 0)
			close(fd[i][0]);
		if (fd[i][1] >= 0)
			close(fd[i][1]);
	}
	return ret;
}

/*
 * @groups on for A's sockets only, B's egress delayed by FLOOR_MS, the two
 * flows, then every record into the fixture's log.
 */
static void floor_flows(struct __test_metadata *_metadata,
			FIXTURE_DATA(virtio) *self, uint64_t groups)
{
	struct netlat_filter_rule rule = {
		.groups = groups, .match = NETLAT_MATCH_NETNS,
	};
	struct stat st;
	int ret;

	ASSERT_EQ(0, fstat(g_ns_a, &st));
	rule.netns_ino = st.st_ino;
	ASSERT_EQ(0, nl_set_rules(self->fd, &rule, 1));
	ASSERT_EQ(0, delay_b(FLOOR_MS));
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	ret = two_flows(512 * 1024);
	EXPECT_EQ(0, delay_b(0));
	ASSERT_EQ(0, ret);
	nl_sleep_ms(2 * FLOOR_MS);
	collect(_metadata, self);
	ASSERT_EQ(0, nl_set_rules(self->fd, NULL, 0));
}

/*
 * The events level's ">ack" stages never break their physical floor:
 * B's egress delayed by FLOOR_MS, two flows A -> B over the NICs (no TSO:
 * software GSO, segments of several packets in flight at once), the
 * senders' records only (a netns rule: B's answers cross the delay before
 * their driver, so theirs may legitimately be shorter). Oracle: netem's
 * delay. `netlat report --json` of the capture: every stage ending at the
 * ACK has samples and none below the floor.
 */
TEST_F(virtio, events_ack_floor)
{
	const uint64_t groups = NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT |
				NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV;
	const char *cap = "/tmp/netlat_virtio_floor";
	static char out[1 << 16];
	unsigned int stages = 0;
	bool driver_ack = false;
	char cmd[256], *p;
	size_t n;
	FILE *f;

	if ((self->pr.available & groups) != groups)
		SKIP(return, "TCP groups unavailable");
	if (access("/bin/netlat", X_OK))
		SKIP(return, "/bin/netlat not installed");
	floor_flows(_metadata, self, groups);

	f = fopen(cap, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1u, fwrite(self->log.buf, self->log.len, 1, f));
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/bin/netlat report --json %s", cap);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	EXPECT_EQ(0, pclose(f));
	unlink(cap);
	p = strstr(out, "\"tcp_stages\":{");
	ASSERT_NE(NULL, p) TH_LOG("no tcp_stages in the report");
	p += strlen("\"tcp_stages\":{");
	/* "name":{"count":N,"min":M,...} until the object closes */
	while (*p == '"' || *p == ',') {
		unsigned long long count, min;
		char name[32];

		if (*p == ',')
			p++;
		if (sscanf(p, "\"%31[^\"]\":{\"count\":%llu,\"min\":%llu",
			   name, &count, &min) != 3)
			break;
		p = strchr(p, '}');
		ASSERT_NE(NULL, p);
		p++;
		n = strlen(name);
		if (n < 4 || strcmp(name + n - 4, ">ack"))
			continue;
		TH_LOG("%s: %llu samples, min %.2f ms", name, count, min / 1e6);
		stages++;
		driver_ack |= !strcmp(name, "driver>ack") && count;
		EXPECT_LT(0ull, count) TH_LOG("%s has no sample", name);
		EXPECT_LE((unsigned long long)FLOOR_MS * 1000000, min)
			TH_LOG("%s below the %u ms the ACK crossed", name,
			       FLOOR_MS);
	}
	EXPECT_LE(2u, stages);
	EXPECT_TRUE(driver_ack);
}

/*
 * The same floor at the packet level: the kernel joins each segment to
 * its ACK, so every packet record of the two flows (kept to A's sockets)
 * that reached the driver and was acknowledged has driver>ack, xmit>ack
 * and, when its sendmsg is known, sendmsg>ack of at least FLOOR_MS.
 */
TEST_F(virtio, packets_ack_floor)
{
	uint64_t floor = FLOOR_MS * 1000000ull, min[3] = { ~0ull, ~0ull, ~0ull };
	const char *name[3] = { "driver>ack", "xmit>ack", "sendmsg>ack" };
	const struct netlat_rec_hdr *h;
	unsigned int n[3] = { 0, 0, 0 }, i;

	if ((self->pr.available & NL_PKT_GROUPS) != NL_PKT_GROUPS)
		SKIP(return, "TCP groups unavailable");
	if (nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0))
		SKIP(return, "no packet level");
	floor_flows(_metadata, self, NL_PKT_GROUPS);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));

	nl_log_for_each(&self->log, h) {
		const struct netlat_rec_tcp_pkt *p = (const void *)h;
		uint64_t from[3];

		if (h->type != NETLAT_REC_TCP_PKT || !(p->flags & NETLAT_PKT_ACKED))
			continue;
		from[0] = p->flags & NETLAT_PKT_DRIVER ? p->driver_ns : 0;
		from[1] = p->xmit_ns;
		from[2] = p->flags & NETLAT_PKT_SENDMSG ? p->sendmsg_ns : 0;
		for (i = 0; i < 3; i++) {
			if (!from[i] || p->end_ns < from[i])
				continue;
			n[i]++;
			if (p->end_ns - from[i] < min[i])
				min[i] = p->end_ns - from[i];
		}
	}
	for (i = 0; i < 3; i++) {
		TH_LOG("%s: %u samples, min %.2f ms", name[i], n[i], min[i] / 1e6);
		EXPECT_LT(0u, n[i]) TH_LOG("%s has no sample", name[i]);
		EXPECT_LE(floor, min[i])
			TH_LOG("%s below the %u ms the ACK crossed", name[i], FLOOR_MS);
	}
}

/* Read @len bytes from non-blocking @fd by @end: 0 or -errno. */
static int recv_exact(int fd, size_t len, uint64_t end)
{
	static char buf[8192];
	size_t got = 0;

	while (got < len) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (r > 0)
			got += r;
		else if (r < 0 && errno == EAGAIN && nl_mono_ns() < end)
			poll(&pfd, 1, 100);
		else
			return r < 0 ? -errno : -EPIPE;
	}
	return 0;
}

/* Request-response over the NICs: @n requests A -> B, each answered. */
static int request_response(int n, uint64_t *b_read, uint64_t *a_read)
{
	static char buf[4096];
	uint64_t end = nl_mono_ns() + 30000000000ull;
	int fd[2], ret, i;

	*a_read = *b_read = 0;
	ret = tcp_pair(PORT_B + 20, fd);
	if (ret)
		return ret;
	for (i = 0; i < n && !ret; i++) {
		/* every 8th request is 3,000 bytes: segments of one skb */
		size_t req = i % 8 == 7 ? 3000 : 200, resp = 1000;

		ret = nl_send_all(fd[0], buf, req);
		if (!ret)
			ret = recv_exact(fd[1], req, end);
		if (!ret) {
			*b_read += req;
			ret = nl_send_all(fd[1], buf, resp);
		}
		if (!ret)
			ret = recv_exact(fd[0], resp, end);
		if (!ret)
			*a_read += resp;
	}
	close(fd[0]);
	close(fd[1]);
	return ret;
}

/* A number after "@key": in @s, or -1 (and the test fails). */
static long long json_num(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	long long v;

	if (!p || sscanf(p + strlen(key), "%lld", &v) != 1)
		return -1;
	return v;
}

static double json_dbl(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	double v;

	if (!p || sscanf(p + strlen(key), "%lf", &v) != 1)
		return -1e9;
	return v;
}

/* `netlat join --json --no-packets` of @cap (both hosts) with @extra options. */
static char *join_json(const char *cap, const char *extra)
{
	static char out[1 << 16];
	char cmd[512];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "/bin/netlat join --json --no-packets --a-addr "
		 ADDR_A " --b-addr " ADDR_B " %s %s %s", extra, cap, cap);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	return pclose(f) ? NULL : out;
}

/*
 * netlat join on real packets: A and B are namespaces of this VM, their
 * NICs on the qemu hub, so the two "hosts" share one clock and the truth
 * is theta = 0; then B's times moved by a known offset and drift
 * (--b-offset, --b-ppm), which the estimate must recover. Oracles: the
 * shared clock (0 inside the bound), the forged clock, the bytes each
 * side read (every one joined), and physics: with one clock no packet is
 * stamped at its receiver before its sender's driver saw it leave (no
 * impossible pair); netem delaying B's egress by FLOOR_MS lands in B's
 * qdisc>driver stage, never on the wire.
 */
TEST_F(virtio, join_two_namespaces)
{
	const uint64_t groups = NL_PKT_GROUPS | NETLAT_PROBE_RX;
	const char *cap = "/tmp/netlat_virtio_join";
	long long at, lo, hi, truth, floor, wire;
	uint64_t b_read, a_read;
	const char *dir;
	char *out;
	FILE *f;
	int ret;

	if ((self->pr.available & groups) != groups)
		SKIP(return, "TCP or receive groups unavailable");
	if (access("/bin/netlat", X_OK))
		SKIP(return, "/bin/netlat not installed");
	if (nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0))
		SKIP(return, "no packet level");
	ASSERT_EQ(0, nl_probes(self->fd, true, groups, &self->pr));
	/* netem on B's egress: a qdisc before B's driver, so B's own stage */
	ASSERT_EQ(0, delay_b(FLOOR_MS));
	ret = request_response(200, &b_read, &a_read);
	EXPECT_EQ(0, delay_b(0));
	ASSERT_EQ(0, ret) TH_LOG("traffic: %s", strerror(-ret));
	nl_sleep_ms(300);
	collect(_metadata, self);
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	f = fopen(cap, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1u, fwrite(self->log.buf, self->log.len, 1, f));
	fclose(f);

	/* one clock: 0 inside the bound, every byte joined, nothing impossible */
	out = join_json(cap, "");
	ASSERT_NE(NULL, out) TH_LOG("netlat join failed");
	at = json_num(out, "\"at_ns\":");
	lo = json_num(out, "\"lo_ns\":");
	hi = json_num(out, "\"hi_ns\":");
	TH_LOG("one clock: B-A in [%lld, %lld] ns at %lld; A read %llu, B read %llu",
	       lo, hi, at, (unsigned long long)a_read, (unsigned long long)b_read);
	EXPECT_LE(lo, 0);
	EXPECT_GE(hi, 0);
	EXPECT_LT(hi - lo, 50000000) TH_LOG("no useful bound");
	dir = strstr(out, "\"sender\":\"A\"");
	EXPECT_EQ((long long)b_read, json_num(dir, "\"joined_bytes\":"));
	EXPECT_EQ(0, json_num(dir, "\"impossible\":"));
	dir = strstr(out, "\"sender\":\"B\"");
	EXPECT_EQ((long long)a_read, json_num(dir, "\"joined_bytes\":"));
	EXPECT_EQ(0, json_num(dir, "\"impossible\":"));
	EXPECT_EQ(NULL, strstr(out, "\"none\":true"));
	/*
	 * B's netem delay is in B's qdisc>driver, not on the wire back: were
	 * it on the wire, every packet's wire would be FLOOR_MS or more. The
	 * median, not the tail: a vCPU the host held up delays a few packets'
	 * receive stamps (a p99 of 13 ms once in CI).
	 */
	floor = json_num(strstr(dir ? dir : "", "\"B qdisc>driver\":"), "\"min\":");
	wire = json_num(strstr(dir ? dir : "", "\"wire\":"), "\"p50\":");
	TH_LOG("B>A: B qdisc>driver min %.2f ms, wire p50 %.3f ms", floor / 1e6, wire / 1e6);
	EXPECT_LE((long long)FLOOR_MS * 1000000, floor);
	EXPECT_LE(0, wire);
	EXPECT_GT((long long)FLOOR_MS * 1000000 / 2, wire);

	/* B's clock 3.2 s ahead and 250 ppm fast: recovered within the bound */
	out = join_json(cap, "--b-offset 3.2s --b-ppm 250");
	ASSERT_NE(NULL, out) TH_LOG("netlat join --b-offset failed");
	at = json_num(out, "\"at_ns\":");
	lo = json_num(out, "\"lo_ns\":");
	hi = json_num(out, "\"hi_ns\":");
	truth = 3200000000LL + at / 4000;
	TH_LOG("forged clock: B-A in [%lld, %lld] ns at %lld, truth %lld; drift %.1f..%.1f ppm",
	       lo, hi, at, truth, json_dbl(out, "\"drift_lo_ppm\":"),
	       json_dbl(out, "\"drift_hi_ppm\":"));
	EXPECT_LE(lo, truth);
	EXPECT_GE(hi, truth);
	EXPECT_LE(json_dbl(out, "\"drift_lo_ppm\":"), 250);
	EXPECT_GE(json_dbl(out, "\"drift_hi_ppm\":"), 250);
	unlink(cap);
}

/*
 * Filters on the virtio records: TX kept by the TCP port only (start_xmit
 * of TCP segments; UDP and the bare-virtqueue events have no flow, so
 * they do not match), RX by namespace B only (the devices' namespaces).
 */
TEST_F(virtio, filters)
{
	struct netlat_filter_rule r[2] = {
		{ .groups = NETLAT_PROBE_VIRTIO_TX, .match = NETLAT_MATCH_PORT,
		  .port = PORT_B + 1 },
		{ .groups = NETLAT_PROBE_VIRTIO_RX, .match = NETLAT_MATCH_NETNS },
	};
	const struct netlat_rec_virtio *v;
	const struct netlat_rec_hdr *h;
	size_t tcp_tx = 0, other_tx = 0, rx_b = 0, rx_other = 0;
	uint64_t f0;
	struct stat st;

	ASSERT_EQ(0, fstat(g_ns_b, &st));
	r[1].netns_ino = st.st_ino;
	ASSERT_NE(self->ia, self->ib) TH_LOG("the ifindex tells A from B");
	ASSERT_EQ(0, nl_set_rules(self->fd, r, 2));
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL,
			       &self->pr));
	f0 = nl_filtered(self->fd, g_def.nr_cpus);
	EXPECT_EQ(N_DGRAMS / 4, udp_traffic(N_DGRAMS / 4));
	EXPECT_EQ(0, tcp_traffic(64 * 1024));
	collect(_metadata, self);
	EXPECT_EQ(0, nl_set_rules(self->fd, NULL, 0));
	for_each_vrec(self, h, v) {
		if (v->event == NETLAT_VIRTIO_XMIT &&
		    (v->flags & NETLAT_VIRTIO_FLOW_VALID) &&
		    (v->flow.sport == PORT_B + 1 || v->flow.dport == PORT_B + 1))
			tcp_tx++;
		else if (v->event == NETLAT_VIRTIO_XMIT ||
			 v->event == NETLAT_VIRTIO_XMIT_DONE)
			other_tx++;
		else if (v->ifindex == self->ib)
			rx_b++;
		else
			rx_other++;
	}
	TH_LOG("TCP start_xmit %zu, other TX %zu, RX in B %zu, other RX %zu",
	       tcp_tx, other_tx, rx_b, rx_other);
	EXPECT_LT(0u, tcp_tx);
	EXPECT_EQ(0u, other_tx);
	EXPECT_LE((size_t)N_DGRAMS / 4, rx_b);
	EXPECT_EQ(0u, rx_other);
	/* the datagrams' start_xmit at least */
	EXPECT_LE((uint64_t)N_DGRAMS / 4, nl_filtered(self->fd, g_def.nr_cpus) - f0);
}

TEST_F(virtio, packed_ring)
{
	static const unsigned char peer[6] = { 2, 0, 0, 0, 0, 4 };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const struct netlat_rec_virtio *r;
	const struct netlat_rec_hdr *h;
	uint64_t rx, tx0, tx1, t0, t1, n = 0, packed = 0, done = 0;
	char buf[DGRAM_LEN];
	int ns_c, idx, fd, i;

	memset(buf, 0, sizeof(buf));
	if (!if_nametoindex("eth2"))
		SKIP(return, "no eth2 (packed ring NIC)");
	ASSERT_EQ(0, ns_enter(g_ns_orig));
	ns_c = new_ns();
	ASSERT_LE(0, ns_c);
	ASSERT_EQ(0, nlr_set_netns("eth2", ns_c));
	ASSERT_EQ(0, ns_enter(ns_c));
	nlr_no_ipv6("eth2");
	ASSERT_EQ(0, nlr_addr4("eth2", "192.0.2.3", 24));
	ASSERT_EQ(0, nlr_link_up("eth2"));
	ASSERT_EQ(0, nlr_neigh4("eth2", "192.0.2.4", peer));
	idx = if_nametoindex("eth2");
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	sa.sin_port = htons(PORT_B);
	inet_pton(AF_INET, "192.0.2.4", &sa.sin_addr);

	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL,
			       &self->pr));
	nl_sleep_ms(100);
	t0 = nl_mono_ns();
	ASSERT_EQ(0, dev_packets("eth2", &rx, &tx0));
	for (i = 0; i < N_DGRAMS / 2; i++) {
		ASSERT_EQ((ssize_t)sizeof(buf),
			  sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&sa,
				 sizeof(sa)));
		usleep(500);
	}
	for (i = 0; i < 40; i++) {
		nl_sleep_ms(50);
		ASSERT_EQ(0, dev_packets("eth2", &rx, &tx1));
		if (tx1 - tx0 >= N_DGRAMS / 2)
			break;
	}
	nl_sleep_ms(200);
	ASSERT_EQ(0, dev_packets("eth2", &rx, &tx1));
	t1 = nl_mono_ns();
	close(fd);
	/* back where the reload test expects it: the initial namespace */
	ASSERT_EQ(0, nlr_set_netns("eth2", g_ns_orig));
	ns_enter(g_ns_orig);
	close(ns_c);
	collect(_metadata, self);

	for_each_vrec(self, h, r) {
		if (r->ifindex != idx || h->ts_ns < t0 || h->ts_ns > t1)
			continue;
		if (!(r->flags & NETLAT_VIRTIO_VQ_VALID))
			continue;
		ASSERT_NE(0u, r->flags & NETLAT_VIRTIO_PACKED);
		ASSERT_EQ(0u, r->flags & NETLAT_VIRTIO_SPLIT_VALID);
		ASSERT_EQ(0, r->avail_idx);
		ASSERT_EQ(0, r->used_idx);
		ASSERT_LE(r->num_free, r->ring_size);
		ASSERT_EQ(0u, r->flags & NETLAT_VIRTIO_BROKEN);
		packed++;
		n += r->event == NETLAT_VIRTIO_XMIT;
		done += r->event == NETLAT_VIRTIO_XMIT_DONE;
	}
	TH_LOG("eth2 tx_packets +%llu, start_xmit %llu, xmit_done %llu",
	       (unsigned long long)(tx1 - tx0), (unsigned long long)n,
	       (unsigned long long)done);
	EXPECT_EQ((uint64_t)N_DGRAMS / 2, tx1 - tx0);
	EXPECT_EQ(tx1 - tx0, n);
	EXPECT_LT(0ull, (unsigned long long)packed);
}

static int rm_virtio_net(void)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (!syscall(SYS_delete_module, "virtio_net", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY && errno != EWOULDBLOCK)
			return -errno;
		nl_sleep_ms(100);
	}
	return -errno;
}

static int ins_virtio_net(void)
{
	int fd = open(VIRTIO_NET_KO, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * virtio_net removed and inserted again while the groups are enabled:
 * the groups become unavailable but stay enabled, the probes re-attach
 * and records of the new devices flow.
 */
TEST_F(virtio, reload_reattaches)
{
	struct netlat_probes pr;
	int i, old_a = self->ia;

	if (access(VIRTIO_NET_KO, R_OK))
		SKIP(return, VIRTIO_NET_KO " not present");
	if (access("/sys/module/virtio_net", F_OK))
		SKIP(return, "virtio_net is not a module");
	ASSERT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL,
			       &self->pr));
	ASSERT_EQ(0, rm_virtio_net());
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	EXPECT_EQ(0ull, pr.available & NETLAT_PROBE_VIRTIO_ALL);
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL, pr.enabled);
	/* a set that keeps them enabled is accepted while they are away */
	EXPECT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL, &pr));
	ASSERT_EQ(0, ins_virtio_net());
	for (i = 0; i < 100 && (!if_nametoindex(DEV_A) ||
				!if_nametoindex(DEV_B)); i++)
		nl_sleep_ms(100);
	ASSERT_NE(0u, if_nametoindex(DEV_A));
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL,
		  pr.available & NETLAT_PROBE_VIRTIO_ALL);
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL, pr.enabled);
	need_topology(_metadata, self);
	TH_LOG("eth0 ifindex %d -> %d", old_a, self->ia);
	/* discard what the old devices left, then the full check again */
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	ASSERT_EQ(0, nl_log_drain(&self->log, self->fd))
		TH_LOG("%s", self->log.why);
	nl_log_clear(&self->log);
	traffic_check(_metadata, self);
}

/*
 * Groups enabled while virtio_net is not loaded (every bare-metal host):
 * they are deferred, the set is accepted, `netlat probes --enable all`
 * arms them beside every available TCP group, and they attach, enabled,
 * when virtio_net loads: its records match the NICs' counters again.
 */
TEST_F(virtio, enable_before_load)
{
	const char *dir = getenv("NETLAT_BIN_DIR");
	char cmd[256], out[1024];
	struct netlat_probes pr;
	uint64_t tcp_avail;
	size_t n;
	FILE *p;
	int i;

	if (access(VIRTIO_NET_KO, R_OK))
		SKIP(return, VIRTIO_NET_KO " not present");
	if (access("/sys/module/virtio_net", F_OK))
		SKIP(return, "virtio_net is not a module");
	ASSERT_EQ(0, rm_virtio_net());
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	EXPECT_EQ(0ull, pr.available & NETLAT_PROBE_VIRTIO_ALL);
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL, pr.deferred);
	EXPECT_EQ(0ull, pr.enabled);
	tcp_avail = pr.available;

	/* the README's command, as a new user types it */
	snprintf(cmd, sizeof(cmd), "%s/netlat probes --enable all 2>&1",
		 dir ? dir : "/bin");
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	EXPECT_EQ(0, pclose(p));
	EXPECT_NE(NULL, strstr(out, "waiting    virtio_tx,virtio_rx"));
	/* one log line: the TAP parser reads lines at column 0 */
	for (n = 0; out[n]; n++)
		if (out[n] == '\n')
			out[n] = ';';
	TH_LOG("netlat probes --enable all: %s", out);
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	EXPECT_EQ(tcp_avail | NETLAT_PROBE_VIRTIO_ALL, pr.enabled);

	/* a deferred group alone, from nothing enabled */
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &pr));
	EXPECT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_TX, &pr));
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_TX, pr.enabled);
	EXPECT_EQ(0, nl_probes(self->fd, true, NETLAT_PROBE_VIRTIO_ALL, &pr));

	ASSERT_EQ(0, ins_virtio_net());
	for (i = 0; i < 100 && (!if_nametoindex(DEV_A) ||
				!if_nametoindex(DEV_B)); i++)
		nl_sleep_ms(100);
	ASSERT_NE(0u, if_nametoindex(DEV_A));
	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL,
		  pr.available & NETLAT_PROBE_VIRTIO_ALL);
	EXPECT_EQ(0ull, pr.deferred);
	EXPECT_EQ(NETLAT_PROBE_VIRTIO_ALL, pr.enabled);
	need_topology(_metadata, self);
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, &self->pr));
	ASSERT_EQ(0, nl_log_drain(&self->log, self->fd))
		TH_LOG("%s", self->log.why);
	nl_log_clear(&self->log);
	traffic_check(_metadata, self);
}

TEST_HARNESS_MAIN
