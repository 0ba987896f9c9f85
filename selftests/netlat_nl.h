/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal rtnetlink for the TCP tests: network namespaces joined by a veth
 * pair, addresses, links up, and a netem root qdisc (busybox has neither
 * "ip link add type veth" nor tc). Functions return 0 or -errno. Then the
 * namespaces A and B the tests use, the topology joining them, a TCP
 * connection across it and their MIB counters.
 */
#ifndef NETLAT_NL_H
#define NETLAT_NL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if_link.h>
#include <linux/veth.h>
#include <linux/pkt_sched.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>

struct nlr_msg {
	struct nlmsghdr *h;
	char buf[1024];
};

static inline void *nlr_tail(struct nlr_msg *m)
{
	return (char *)m->h + NLMSG_ALIGN(m->h->nlmsg_len);
}

static inline struct rtattr *nlr_attr(struct nlr_msg *m, int type,
				      const void *data, size_t len)
{
	struct rtattr *a = nlr_tail(m);

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	m->h->nlmsg_len = NLMSG_ALIGN(m->h->nlmsg_len) + RTA_ALIGN(a->rta_len);
	return a;
}

static inline struct rtattr *nlr_nest(struct nlr_msg *m, int type)
{
	return nlr_attr(m, type, NULL, 0);
}

static inline void nlr_nest_end(struct nlr_msg *m, struct rtattr *a)
{
	a->rta_len = (char *)nlr_tail(m) - (char *)a;
}

static inline void *nlr_init(struct nlr_msg *m, int type, int flags,
			     size_t hdr)
{
	memset(m->buf, 0, sizeof(m->buf));
	m->h = (struct nlmsghdr *)m->buf;
	m->h->nlmsg_type = type;
	m->h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->h->nlmsg_len = NLMSG_LENGTH(hdr);
	return NLMSG_DATA(m->h);
}

/* Send on a fresh rtnetlink socket of the calling thread's netns; wait ack. */
static inline int nlr_talk(struct nlr_msg *m)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char rbuf[4096];
	struct nlmsghdr *r;
	int fd, ret = -EPROTO;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (sendto(fd, m->h, m->h->nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	n = recv(fd, rbuf, sizeof(rbuf), 0);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	r = (struct nlmsghdr *)rbuf;
	if (NLMSG_OK(r, (size_t)n) && r->nlmsg_type == NLMSG_ERROR)
		ret = ((struct nlmsgerr *)NLMSG_DATA(r))->error;
out:
	close(fd);
	return ret;
}

/* veth pair @a (here) and @b (in the netns of @ns_fd). */
static inline int nlr_veth(const char *a, const char *b, int ns_fd)
{
	struct nlr_msg m;
	struct ifinfomsg *ifi, *peer;
	struct rtattr *li, *data, *pa;

	ifi = nlr_init(&m, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	nlr_attr(&m, IFLA_IFNAME, a, strlen(a) + 1);
	li = nlr_nest(&m, IFLA_LINKINFO);
	nlr_attr(&m, IFLA_INFO_KIND, "veth", 4);
	data = nlr_nest(&m, IFLA_INFO_DATA);
	pa = nlr_nest(&m, VETH_INFO_PEER);
	peer = nlr_tail(&m);
	memset(peer, 0, sizeof(*peer));
	m.h->nlmsg_len += NLMSG_ALIGN(sizeof(*peer));
	nlr_attr(&m, IFLA_IFNAME, b, strlen(b) + 1);
	nlr_attr(&m, IFLA_NET_NS_FD, &ns_fd, sizeof(ns_fd));
	nlr_nest_end(&m, pa);
	nlr_nest_end(&m, data);
	nlr_nest_end(&m, li);
	return nlr_talk(&m);
}

static inline int nlr_link_up(const char *dev)
{
	struct nlr_msg m;
	struct ifinfomsg *ifi;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	ifi = nlr_init(&m, RTM_NEWLINK, 0, sizeof(*ifi));
	ifi->ifi_index = idx;
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	return nlr_talk(&m);
}

/* gso_max_segs of @dev: TCP builds skbs of at most that many segments. */
static inline int nlr_gso_max_segs(const char *dev, uint32_t segs)
{
	struct nlr_msg m;
	struct ifinfomsg *ifi;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	ifi = nlr_init(&m, RTM_NEWLINK, 0, sizeof(*ifi));
	ifi->ifi_index = idx;
	nlr_attr(&m, IFLA_GSO_MAX_SEGS, &segs, sizeof(segs));
	return nlr_talk(&m);
}

static inline int nlr_addr4(const char *dev, const char *addr, int plen)
{
	struct nlr_msg m;
	struct ifaddrmsg *ifa;
	struct in_addr in;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	if (inet_pton(AF_INET, addr, &in) != 1)
		return -EINVAL;
	ifa = nlr_init(&m, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE,
		       sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = plen;
	ifa->ifa_index = idx;
	nlr_attr(&m, IFA_LOCAL, &in, sizeof(in));
	nlr_attr(&m, IFA_ADDRESS, &in, sizeof(in));
	return nlr_talk(&m);
}

/*
 * Root netem qdisc on @dev dropping @loss_pct percent (0..100), delaying
 * by @delay_us and holding at most @limit packets (0: 10000).
 */
static inline int nlr_netem_full(const char *dev, double loss_pct,
				 uint32_t delay_us, uint32_t limit)
{
	struct tc_netem_qopt q = { .limit = limit ? limit : 10000 };
	int64_t lat = (int64_t)delay_us * 1000;
	struct nlr_msg m;
	struct tcmsg *tc;
	struct rtattr *opt;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	if (loss_pct >= 100)
		q.loss = UINT32_MAX;
	else
		q.loss = (uint32_t)(loss_pct / 100.0 * 4294967295.0);
	tc = nlr_init(&m, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE,
		      sizeof(*tc));
	tc->tcm_family = AF_UNSPEC;
	tc->tcm_ifindex = idx;
	tc->tcm_parent = TC_H_ROOT;
	tc->tcm_handle = 0x10000;
	nlr_attr(&m, TCA_KIND, "netem", 6);
	/* netem's options: the struct, then attributes */
	opt = nlr_attr(&m, TCA_OPTIONS, &q, sizeof(q));
	if (delay_us)
		nlr_attr(&m, TCA_NETEM_LATENCY64, &lat, sizeof(lat));
	nlr_nest_end(&m, opt);
	return nlr_talk(&m);
}

/* Root netem qdisc on @dev dropping @loss_pct percent (0..100). */
static inline int nlr_netem(const char *dev, double loss_pct)
{
	struct tc_netem_qopt q = { .limit = 10000 };
	struct nlr_msg m;
	struct tcmsg *tc;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	if (loss_pct >= 100)
		q.loss = UINT32_MAX;
	else
		q.loss = (uint32_t)(loss_pct / 100.0 * 4294967295.0);
	tc = nlr_init(&m, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE,
		      sizeof(*tc));
	tc->tcm_family = AF_UNSPEC;
	tc->tcm_ifindex = idx;
	tc->tcm_parent = TC_H_ROOT;
	tc->tcm_handle = 0x10000;	/* 1: */
	nlr_attr(&m, TCA_KIND, "netem", 6);
	nlr_attr(&m, TCA_OPTIONS, &q, sizeof(q));
	return nlr_talk(&m);
}

/*
 * TSO and GSO off on @dev (legacy SIOCETHTOOL): every skb is one segment,
 * so netem drops segments, not 64 KiB bursts.
 */
static inline int nlr_no_gso(const char *dev)
{
	static const unsigned int cmds[] = { ETHTOOL_STSO, ETHTOOL_SGSO };
	struct ethtool_value ev;
	struct ifreq ifr;
	unsigned int i;
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]) && !ret; i++) {
		memset(&ifr, 0, sizeof(ifr));
		strncpy(ifr.ifr_name, dev, IFNAMSIZ - 1);
		ev.cmd = cmds[i];
		ev.data = 0;
		ifr.ifr_data = (void *)&ev;
		if (ioctl(fd, SIOCETHTOOL, &ifr))
			ret = -errno;
	}
	close(fd);
	return ret;
}

/* ---- network namespaces: the tests' A and B -------------------------- */

/* The namespace the program started in, and the tests' namespaces A, B. */
static int g_ns_orig = -1, g_ns_a = -1, g_ns_b = -1;

static inline int ns_enter(int fd)
{
	return setns(fd, CLONE_NEWNET) ? -errno : 0;
}

/* A new namespace (fd), the caller staying in g_ns_orig. */
static inline int new_ns(void)
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

/* g_ns_orig, the namespace we are in, and two new ones, g_ns_a and g_ns_b. */
static inline int nl_netns_ab(void)
{
	int ret;

	g_ns_orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	ret = g_ns_orig < 0 ? -errno : new_ns();
	if (ret < 0)
		return ret;
	g_ns_a = ret;
	ret = new_ns();
	if (ret < 0)
		return ret;
	g_ns_b = ret;
	return 0;
}

/* In namespace @ns: @addr/24 on @dev, @dev and lo up. */
static inline int nlr_ns_if_up(int ns, const char *dev, const char *addr)
{
	int ret = ns_enter(ns);

	if (!ret)
		ret = nlr_addr4(dev, addr, 24);
	if (!ret)
		ret = nlr_link_up(dev);
	if (!ret)
		ret = nlr_link_up("lo");
	return ret;
}

/*
 * The TCP tests' topology: namespaces A and B joined by a veth pair,
 * NL_DEV_A (NL_ADDR_A) in A, NL_DEV_B (NL_ADDR_B) in B; on NL_DEV_A TSO
 * and GSO off and gso_max_segs 1, so that every skb is one segment (TCP
 * always builds GSO skbs, bounded by the device's gso_max_segs) and netem
 * drops segments, and a netem root qdisc losing @loss_pct. Sets g_ns_*;
 * 0, or -errno with the failed step in @why. The caller stays in
 * g_ns_orig.
 */
#define NL_ADDR_A	"192.0.2.1"
#define NL_ADDR_B	"192.0.2.2"
#define NL_DEV_A	"nla0"
#define NL_DEV_B	"nlb0"

static inline int nlr_topology_ab(double loss_pct, char *why, size_t len)
{
	const char *step = "unshare";
	int ret;

	ret = nl_netns_ab();
	if (ret)
		goto fail;
	step = "veth";
	ret = ns_enter(g_ns_a);
	if (!ret)
		ret = nlr_veth(NL_DEV_A, NL_DEV_B, g_ns_b);
	if (!ret)
		ret = nlr_ns_if_up(g_ns_a, NL_DEV_A, NL_ADDR_A);
	if (ret)
		goto fail;
	step = "gso off";
	ret = nlr_no_gso(NL_DEV_A);
	if (!ret)
		ret = nlr_gso_max_segs(NL_DEV_A, 1);
	if (ret)
		goto fail;
	step = "netem";
	ret = nlr_netem(NL_DEV_A, loss_pct);
	if (ret)
		goto fail;
	step = "namespace B";
	ret = nlr_ns_if_up(g_ns_b, NL_DEV_B, NL_ADDR_B);
	if (ret)
		goto fail;
	ns_enter(g_ns_orig);
	return 0;
fail:
	snprintf(why, len, "%s: %s", step, strerror(-ret));
	if (g_ns_orig >= 0)
		ns_enter(g_ns_orig);
	return ret;
}

/*
 * One TCP connection from A to B over the topology: a listener on an
 * ephemeral port of NL_ADDR_B, a client in A. 0 with both ends and their
 * ports (host order), or -1 (errno); the caller stays in g_ns_orig.
 */
static inline int nl_connect_ab(int *cli, int *srv, uint16_t *sport,
				uint16_t *dport)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int lfd = -1, ret = -1, one = 1;

	*cli = *srv = -1;
	if (ns_enter(g_ns_b))
		return -1;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, NL_ADDR_B, &a.sin_addr);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (void *)&a, sizeof(a)) || listen(lfd, 1) ||
	    getsockname(lfd, (void *)&a, &alen))
		goto out;
	*dport = ntohs(a.sin_port);
	if (ns_enter(g_ns_a))
		goto out;
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli < 0 || connect(*cli, (void *)&a, sizeof(a)))
		goto out;
	alen = sizeof(a);
	if (getsockname(*cli, (void *)&a, &alen))
		goto out;
	*sport = ntohs(a.sin_port);
	*srv = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*srv >= 0)
		ret = 0;
out:
	if (lfd >= 0)
		close(lfd);
	ns_enter(g_ns_orig);
	return ret;
}

/* Value of @name in the "@prefix:" table of /proc/net/@file in @ns, or -1. */
static inline long long nl_mib(int ns, const char *file, const char *prefix,
			       const char *name)
{
	char path[64], hdr[4096], val[4096], *hs, *vs, *h, *v;
	long long out = -1;
	FILE *f;

	if (ns_enter(ns))
		return -1;
	snprintf(path, sizeof(path), "/proc/thread-self/net/%s", file);
	f = fopen(path, "r");
	ns_enter(g_ns_orig);
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

#endif /* NETLAT_NL_H */
