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
#include <linux/tcp.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/timekeeping.h>
#include <net/tcp.h>
#include "compat.h"

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
void netlat_sk_flow(struct netlat_flow *f, const struct sock *sk);

/*
 * The same without the cookie (left as it is): what a filter reads before
 * it knows whether a record will be written, with no SipHash.
 */
void netlat_sk_addrs(struct netlat_flow *f, const struct sock *sk);

/*
 * A TCP segment (or UDP datagram) as its headers describe it. Callers
 * declare it __uninitialized (see struct netlat_writer): the parsers zero
 * it, except netlat_parse_tcp_out(), which fills only what its callers
 * read (sequence numbers, flags, payload).
 */
struct netlat_tcp_seg {
	struct netlat_flow flow;	/* addresses and ports; cookie 0 */
	u32 seq;
	u32 ack_seq;
	u32 payload;		/* bytes after the TCP header */
	u8 tcp_flags;		/* tcp_flag_byte() */
};

/*
 * Parse the IPv4 or IPv6 and TCP headers of @skb from its network
 * offset; false if it is not an unfragmented TCP segment or the headers
 * cannot be read.
 */
bool netlat_parse_tcp(const struct sk_buff *skb, struct netlat_tcp_seg *seg);

/* The payload of @skb after its TCP header @th at offset @thoff. */
static __always_inline u32 netlat_th_payload(const struct sk_buff *skb,
					     const struct tcphdr *th, int thoff)
{
	int hlen = thoff + th->doff * 4;

	return skb->len > hlen ? skb->len - hlen : 0;
}

/* @seg's seq, payload and flags from TCP header @th at offset @thoff. */
static __always_inline void netlat_seg_from_th(const struct sk_buff *skb,
					       const struct tcphdr *th,
					       int thoff,
					       struct netlat_tcp_seg *seg)
{
	seg->seq = ntohl(th->seq);
	seg->ack_seq = ntohl(th->ack_seq);
	seg->payload = netlat_th_payload(skb, th, thoff);
	seg->tcp_flags = tcp_flag_byte(th);
}

bool netlat_th_ts_slow(const struct tcphdr *th, u32 *tsval, u32 *tsecr);

/*
 * The timestamps option (RFC 7323) of TCP header @th, whose options are
 * readable: false without one. Linux sends it first and aligned (NOP,
 * NOP, TIMESTAMP) on every segment but a SYN, as TCP's own fast path
 * expects; any other layout takes a walk of the options.
 */
static __always_inline bool netlat_th_ts(const struct tcphdr *th,
					 u32 *tsval, u32 *tsecr)
{
	const __be32 *opt = (const __be32 *)(th + 1);

	if (th->doff < (sizeof(*th) + TCPOLEN_TSTAMP_ALIGNED) / 4)
		return false;
	if (likely(*opt == htonl((TCPOPT_NOP << 24) | (TCPOPT_NOP << 16) |
				 (TCPOPT_TIMESTAMP << 8) | TCPOLEN_TIMESTAMP))) {
		*tsval = ntohl(opt[1]);
		*tsecr = ntohl(opt[2]);
		return true;
	}
	return netlat_th_ts_slow(th, tsval, tsecr);
}

/*
 * The timestamps option of the TCP segment @skb, at its transport header
 * (set by the stack that built or received it, in the linear part on
 * both ways); false without one, or if the header is not there whole.
 */
static __always_inline bool netlat_skb_ts(const struct sk_buff *skb,
					  u32 *tsval, u32 *tsecr)
{
	const struct tcphdr *th;

	if (unlikely(!skb_transport_header_was_set(skb)))
		return false;
	th = tcp_hdr(skb);
	if (unlikely((const unsigned char *)th < skb->head ||
		     (const unsigned char *)(th + 1) > skb_tail_pointer(skb) ||
		     (const unsigned char *)th + th->doff * 4 >
		     skb_tail_pointer(skb)))
		return false;
	return netlat_th_ts(th, tsval, tsecr);
}

/*
 * The TCP header of an outgoing segment of a TCP socket where the sending
 * stack put it (the transport header, in the linear part as TCP builds
 * it), behind an IPv4 or IPv6 header that says TCP, read in place with no
 * copy and no call; its offset in *@thoff. NULL for anything else (a
 * header not set or not linear, a tunnel, a fragment): netlat_parse_tcp()
 * takes the long way.
 */
static __always_inline const struct tcphdr *
netlat_tcp_out_th(const struct sk_buff *skb, int *thoff)
{
	int noff = skb_network_offset(skb);

	if (unlikely(!skb_transport_header_was_set(skb)))
		return NULL;
	*thoff = skb_transport_offset(skb);
	if (unlikely(noff < 0 || *thoff < noff ||
		     *thoff + sizeof(struct tcphdr) > skb_headlen(skb)))
		return NULL;
	if (skb->protocol == htons(ETH_P_IP) &&
	    noff + sizeof(struct iphdr) <= *thoff) {
		const struct iphdr *iph = ip_hdr(skb);

		/* a fragment (TCP without DF): the long way refuses it */
		if (unlikely(iph->protocol != IPPROTO_TCP ||
			     (iph->frag_off & htons(IP_MF | IP_OFFSET))))
			return NULL;
	} else if (unlikely(!(skb->protocol == htons(ETH_P_IPV6) &&
			      noff + sizeof(struct ipv6hdr) <= *thoff &&
			      ipv6_hdr(skb)->nexthdr == IPPROTO_TCP))) {
		return NULL;
	}
	return tcp_hdr(skb);
}

/*
 * Only @seg's sequence numbers, payload and tcp_flags (not its flow) of
 * an outgoing segment of a TCP socket, whose stack set its headers: what
 * the packet level needs at the qdisc, driver and device points, where
 * the socket is known. False as netlat_parse_tcp(). Inline,
 * netlat_tcp_out_th().
 */
static __always_inline bool netlat_parse_tcp_out(const struct sk_buff *skb,
						 struct netlat_tcp_seg *seg)
{
	const struct tcphdr *th;
	int thoff;

	th = netlat_tcp_out_th(skb, &thoff);
	if (unlikely(!th))
		return netlat_parse_tcp(skb, seg);
	netlat_seg_from_th(skb, th, thoff, seg);
	return true;
}

/* The same for UDP: ports, and the datagram's payload in @seg->payload. */
bool netlat_parse_udp(const struct sk_buff *skb, struct netlat_tcp_seg *seg);

/*
 * The clock TCP already read for @sk, TCP's own (CLOCK_MONOTONIC, the
 * clock of the records' ktime_get_mono_fast_ns()): tcp_mstamp_refresh()
 * sets tcp_clock_cache when tcp_write_xmit() starts, when a segment
 * reaches tcp_rcv_established() or tcp_rcv_state_process() (before their
 * tcp_ack() and their queueing) and when a write timer fires, all under
 * the socket lock. The packet tables' points that have it take it instead
 * of a clock read (design.rst, "The clocks of the stages").
 */
static __always_inline u64 netlat_tcp_clock(const struct sock *sk)
{
	return READ_ONCE(tcp_sk(sk)->tcp_clock_cache);
}

/*
 * The transmit time __tcp_transmit_skb() is about to give its skb
 * (skb_mstamp_ns): the earliest departure time, the cached clock or,
 * under pacing (fq, or TCP's own), a time the pacing rate may put ahead.
 */
static __always_inline u64 netlat_tcp_xmit_clock(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max(READ_ONCE(tp->tcp_wstamp_ns), READ_ONCE(tp->tcp_clock_cache));
}

/*
 * One clock read per hook, however many tables it feeds: *@now is read
 * at the first call (0: not yet) and kept for the others.
 */
static __always_inline u64 netlat_now(u64 *now)
{
	if (!*now)
		*now = ktime_get_mono_fast_ns();
	return *now;
}

/*
 * @skb's receive stamp (netlat_skb_rx_stamp(), realtime) on the records'
 * clock, 0 if none: by the offset between the two clocks now, the
 * timekeeper's, read without reading a clock.
 */
static __always_inline u64 netlat_skb_rx_mono(const struct sk_buff *skb)
{
	u64 stamp = netlat_skb_rx_stamp(skb);

	return stamp ? stamp - ktime_to_ns(ktime_mono_to_real(0)) : 0;
}

void netlat_pkt_init(void);

#endif /* _NETLAT_PKT_H */
