/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal rtnetlink for the TCP tests: network namespaces joined by a veth
 * pair, addresses, links up, and a netem root qdisc (busybox has neither
 * "ip link add type veth" nor tc). Functions return 0 or -errno.
 */
#ifndef NETLAT_NL_H
#define NETLAT_NL_H

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if_addr.h>
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

/* One attribute of link @dev set (RTM_NEWLINK on the existing device). */
static inline int nlr_link_attr(const char *dev, int type, const void *data,
				size_t len)
{
	struct nlr_msg m;
	struct ifinfomsg *ifi;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	ifi = nlr_init(&m, RTM_NEWLINK, 0, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = idx;
	nlr_attr(&m, type, data, len);
	return nlr_talk(&m);
}

/* gso_max_segs of @dev: TCP builds skbs of at most that many segments. */
static inline int nlr_gso_max_segs(const char *dev, uint32_t segs)
{
	return nlr_link_attr(dev, IFLA_GSO_MAX_SEGS, &segs, sizeof(segs));
}

static inline int nlr_addr(const char *dev, int family, const char *addr,
			   int plen, unsigned int flags)
{
	struct nlr_msg m;
	struct ifaddrmsg *ifa;
	unsigned char in[16];
	size_t len = family == AF_INET6 ? 16 : 4;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	if (inet_pton(family, addr, in) != 1)
		return -EINVAL;
	ifa = nlr_init(&m, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE,
		       sizeof(*ifa));
	ifa->ifa_family = family;
	ifa->ifa_prefixlen = plen;
	ifa->ifa_flags = flags;
	ifa->ifa_index = idx;
	nlr_attr(&m, IFA_LOCAL, in, len);
	nlr_attr(&m, IFA_ADDRESS, in, len);
	return nlr_talk(&m);
}

static inline int nlr_addr4(const char *dev, const char *addr, int plen)
{
	return nlr_addr(dev, AF_INET, addr, plen, 0);
}

/* No duplicate address detection: usable once the link has carrier. */
static inline int nlr_addr6(const char *dev, const char *addr, int plen)
{
	return nlr_addr(dev, AF_INET6, addr, plen, IFA_F_NODAD);
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

/* The root qdisc of @dev back to the default (its own is deleted). */
static inline int nlr_qdisc_del(const char *dev)
{
	struct nlr_msg m;
	struct tcmsg *tc;
	int idx = if_nametoindex(dev);

	if (!idx)
		return -ENODEV;
	tc = nlr_init(&m, RTM_DELQDISC, 0, sizeof(*tc));
	tc->tcm_family = AF_UNSPEC;
	tc->tcm_ifindex = idx;
	tc->tcm_parent = TC_H_ROOT;
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

/* TSO and GSO on or off on @dev (legacy SIOCETHTOOL). */
static inline int nlr_set_gso(const char *dev, bool on)
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
		ev.data = on;
		ifr.ifr_data = (void *)&ev;
		if (ioctl(fd, SIOCETHTOOL, &ifr))
			ret = -errno;
	}
	close(fd);
	return ret;
}

/*
 * TSO and GSO off on @dev: every skb is one segment, so netem drops
 * segments, not 64 KiB bursts.
 */
static inline int nlr_no_gso(const char *dev)
{
	return nlr_set_gso(dev, false);
}

/* Move @dev (in the current netns) into the netns of @ns_fd. */
static inline int nlr_set_netns(const char *dev, int ns_fd)
{
	return nlr_link_attr(dev, IFLA_NET_NS_FD, &ns_fd, sizeof(ns_fd));
}

/* IPv6 off on @dev (current netns) before it goes up: no ND, no MLD. */
static inline void nlr_no_ipv6(const char *dev)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 dev);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		perror(path);
	close(fd);
}

/* Columns of /proc/net/dev (the device's rtnl_link_stats64, as sysfs
 * statistics/ shows them), the ones the tests use */
#define NLR_RX_BYTES		0
#define NLR_RX_PACKETS		1
#define NLR_TX_BYTES		8
#define NLR_TX_PACKETS		9
#define NLR_DEV_COUNTERS	10

/*
 * The first NLR_DEV_COUNTERS counters of @dev in the current netns, from
 * /proc/net/dev: sysfs shows only the devices of the namespace that
 * mounted it, a device moved to another namespace is not there.
 */
static inline int nlr_dev_counters(const char *dev, unsigned long long *v)
{
	char line[512], name[32];
	int ret = -ENODEV;
	FILE *f;

	f = fopen("/proc/thread-self/net/dev", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!c)
			continue;
		*c = ' ';
		if (sscanf(line, " %31s %llu %llu %llu %llu %llu %llu %llu %llu"
			   " %llu %llu", name, &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) != 11 ||
		    strcmp(name, dev))
			continue;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

#endif /* NETLAT_NL_H */
