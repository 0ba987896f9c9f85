/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every probe family knows of a packet and its socket: identities
 * that do not leak kernel pointers, the flow of a socket, and the IP and
 * TCP headers of an skb, read safely wherever the probe meets it.
 */
#ifndef _NETLAT_PKT_H
#define _NETLAT_PKT_H

#include <linux/types.h>
#include <linux/netlat.h>

struct sk_buff;
struct sock;

/* SipHash of the pointer under a key drawn at load: stable per load. */
u64 netlat_skb_id(const struct sk_buff *skb);
u64 netlat_sk_id(const struct sock *sk);

/*
 * The flow of @sk, a full socket or a request socket (sock_common), with
 * its netlat_sk_id() as the cookie. An AF_INET6 socket talking to a
 * v4-mapped peer (IPv4 on the wire) reads as the AF_INET flow it is.
 */
void netlat_sk_flow(struct netlat_tcp_flow *f, const struct sock *sk);

/*
 * The same without the cookie (left as it is): what a filter reads before
 * it knows whether a record will be written, with no SipHash.
 */
void netlat_sk_addrs(struct netlat_tcp_flow *f, const struct sock *sk);

/*
 * A TCP segment (or UDP datagram) as its headers describe it. Callers
 * declare it __uninitialized (see struct netlat_writer): the parsers zero
 * it, except netlat_parse_tcp_out(), which fills only what its callers
 * read (sequence, flags, payload).
 */
struct netlat_tcp_seg {
	struct netlat_tcp_flow flow;	/* addresses and ports; cookie 0 */
	u32 seq;
	u32 payload;		/* bytes after the TCP header */
	u8 tcp_flags;		/* tcp_flag_byte() */
};

/*
 * Parse the IPv4 or IPv6 and TCP headers of @skb from its network
 * offset; false if it is not an unfragmented TCP segment or the headers
 * cannot be read.
 */
bool netlat_parse_tcp(const struct sk_buff *skb, struct netlat_tcp_seg *seg);

/*
 * Only @seg's seq, payload and tcp_flags (not its flow) of an outgoing
 * segment of a TCP socket, whose stack set its headers: what the packet
 * level needs at the qdisc, driver and device points, where the socket is
 * known. False as netlat_parse_tcp().
 */
bool netlat_parse_tcp_out(const struct sk_buff *skb, struct netlat_tcp_seg *seg);

/* The same for UDP: ports, and the datagram's payload in @seg->payload. */
bool netlat_parse_udp(const struct sk_buff *skb, struct netlat_tcp_seg *seg);

void netlat_pkt_init(void);

#endif /* _NETLAT_PKT_H */
