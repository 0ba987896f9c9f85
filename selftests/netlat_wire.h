/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wire as an oracle: the TCP segments of one connection as an
 * AF_PACKET socket on a device sees them, both ways (the frames leaving
 * the device are its own copies, taken after the qdisc). netlat reads
 * none of this; the tests compare its records with it.
 */
#ifndef _NETLAT_WIRE_H
#define _NETLAT_WIRE_H

#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include "netlat_util.h"

/* One TCP segment on the wire, in host order. */
struct nl_wire_seg {
	uint32_t seq;
	uint32_t ack_seq;
	uint32_t tsval;		/* 0: no timestamps option */
	uint32_t tsecr;
	uint32_t payload;
	uint16_t sport;
	uint16_t dport;
	uint16_t window;	/* as in the header, not scaled */
	uint8_t flags;		/* the header's flag byte */
	bool has_ts;
};

/* An AF_PACKET socket on @dev of namespace @ns; -errno on error. */
static inline int nl_wire_open(int ns, const char *dev)
{
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int fd, ret, rcvbuf = 32 << 20;

	ret = nl_ns_enter(ns);
	if (ret)
		return ret;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	ll.sll_ifindex = if_nametoindex(dev);
	/* root's: past rmem_max, for a bulk transfer's 64 KiB GSO frames */
	if (fd < 0 || !ll.sll_ifindex ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) ||
	    bind(fd, (struct sockaddr *)&ll, sizeof(ll))) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		fd = ret ? ret : -EINVAL;
	}
	nl_ns_enter(nl_ns_home);
	return fd;
}

/* The timestamps option among @len bytes of options at @o. */
static inline bool nl_wire_ts(const uint8_t *o, size_t len,
			      uint32_t *tsval, uint32_t *tsecr)
{
	size_t i = 0;

	while (i < len && o[i] != 0) {
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || o[i + 1] < 2 || i + o[i + 1] > len)
			return false;
		if (o[i] == 8 && o[i + 1] == 10) {
			*tsval = (uint32_t)o[i + 2] << 24 | o[i + 3] << 16 |
				 o[i + 4] << 8 | o[i + 5];
			*tsecr = (uint32_t)o[i + 6] << 24 | o[i + 7] << 16 |
				 o[i + 8] << 8 | o[i + 9];
			return true;
		}
		i += o[i + 1];
	}
	return false;
}

/*
 * The IPv4 TCP segments between ports @p1 and @p2 captured so far, in
 * the order seen, into @out (at most @max); how many, or -errno.
 */
static inline int nl_wire_read(int fd, uint16_t p1, uint16_t p2,
			       struct nl_wire_seg *out, int max)
{
	uint8_t frame[65536 + 64];
	int n = 0;

	while (n < max) {
		const struct iphdr *ip = (const void *)(frame + ETH_HLEN);
		const struct tcphdr *th;
		struct nl_wire_seg *s = &out[n];
		size_t ihl, thl;
		ssize_t len;

		len = recv(fd, frame, sizeof(frame), 0);
		if (len < 0)
			return errno == EAGAIN ? n : -errno;
		if ((size_t)len < ETH_HLEN + sizeof(*ip) ||
		    ((const struct ethhdr *)frame)->h_proto != htons(ETH_P_IP) ||
		    ip->protocol != IPPROTO_TCP)
			continue;
		ihl = ip->ihl * 4u;
		th = (const void *)(frame + ETH_HLEN + ihl);
		if ((size_t)len < ETH_HLEN + ihl + sizeof(*th))
			continue;
		thl = th->doff * 4u;
		if ((size_t)len < ETH_HLEN + ihl + thl)
			continue;
		memset(s, 0, sizeof(*s));
		s->sport = ntohs(th->source);
		s->dport = ntohs(th->dest);
		if (!((s->sport == p1 && s->dport == p2) ||
		      (s->sport == p2 && s->dport == p1)))
			continue;
		s->seq = ntohl(th->seq);
		s->ack_seq = ntohl(th->ack_seq);
		s->flags = ((const uint8_t *)th)[13];
		s->window = ntohs(th->window);
		s->payload = ntohs(ip->tot_len) - ihl - thl;
		s->has_ts = nl_wire_ts((const uint8_t *)(th + 1),
				       thl - sizeof(*th), &s->tsval, &s->tsecr);
		n++;
	}
	return n;
}

#endif /* _NETLAT_WIRE_H */
