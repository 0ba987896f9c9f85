// SPDX-License-Identifier: GPL-2.0
/*
 * Packet and socket identities, socket flows and header parsing shared by
 * the probe families (see pkt.h). Everything here runs in probe context:
 * no lock, no allocation, no fault.
 */
#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/skbuff.h>
#include <linux/siphash.h>
#include <linux/random.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/lockdep.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/ipv6.h>
#include "pkt.h"

static siphash_key_t netlat_sk_key, netlat_skb_key;

notrace u64 netlat_skb_id(const struct sk_buff *skb)
{
	return siphash_1u64((u64)(unsigned long)skb, &netlat_skb_key);
}
NOKPROBE_SYMBOL(netlat_skb_id);

/*
 * The last two sockets hashed on a CPU, per interrupt context level (task,
 * softirq, hardirq, NMI): a level never interrupts itself and handlers run
 * with preemption off, so one context at a time reads and writes a level's
 * entries. The hash is a function of the pointer alone, so an entry is
 * never stale. Records come in runs of one or two sockets (a connection's
 * two ends); a hit saves a SipHash.
 */
struct netlat_sk_ids_level {
	const struct sock *sk[2];
	u64 id[2];
};

struct netlat_sk_ids {
	struct netlat_sk_ids_level level[4];
};
static DEFINE_PER_CPU(struct netlat_sk_ids, netlat_sk_ids);

notrace u64 netlat_sk_id(const struct sock *sk)
{
	struct netlat_sk_ids_level *c;
	u64 id;

	lockdep_assert_preemption_disabled();
	if (unlikely(!sk))
		return siphash_1u64(0, &netlat_sk_key);
	c = &this_cpu_ptr(&netlat_sk_ids)->level[interrupt_context_level()];
	if (c->sk[0] == sk)
		return c->id[0];
	if (c->sk[1] == sk)
		return c->id[1];
	id = siphash_1u64((u64)(unsigned long)sk, &netlat_sk_key);
	c->sk[1] = c->sk[0];
	c->id[1] = c->id[0];
	c->sk[0] = sk;
	c->id[0] = id;
	return id;
}
NOKPROBE_SYMBOL(netlat_sk_id);

notrace void netlat_sk_addrs(struct netlat_flow *f, const struct sock *sk)
{
	f->family = sk->sk_family;
	f->sport = sk->sk_num;
	f->dport = ntohs(sk->sk_dport);
	if (sk->sk_family == AF_INET) {
		memcpy(f->saddr, &sk->sk_rcv_saddr, 4);
		memcpy(f->daddr, &sk->sk_daddr, 4);
#if IS_ENABLED(CONFIG_IPV6)
	} else if (sk->sk_family == AF_INET6 &&
		   ipv6_addr_v4mapped(&sk->sk_v6_daddr)) {
		f->family = AF_INET;
		memcpy(f->saddr, &sk->sk_v6_rcv_saddr.s6_addr32[3], 4);
		memcpy(f->daddr, &sk->sk_v6_daddr.s6_addr32[3], 4);
	} else if (sk->sk_family == AF_INET6) {
		memcpy(f->saddr, &sk->sk_v6_rcv_saddr, 16);
		memcpy(f->daddr, &sk->sk_v6_daddr, 16);
#endif
	}
}
NOKPROBE_SYMBOL(netlat_sk_addrs);

notrace void netlat_sk_flow(struct netlat_flow *f, const struct sock *sk)
{
	netlat_sk_addrs(f, sk);
	f->cookie = netlat_sk_id(sk);
}
NOKPROBE_SYMBOL(netlat_sk_flow);

/*
 * The addresses of @skb's unfragmented IPv4 or IPv6 header into @f and the
 * offset of its @proto header; false if it has none.
 */
static notrace bool netlat_parse_ip(const struct sk_buff *skb, u8 proto,
				    struct netlat_flow *f, int *thoff)
{
	int off = skb_network_offset(skb);

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph;
		struct iphdr _iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (!iph || iph->protocol != proto || iph->ihl < 5 ||
		    (iph->frag_off & htons(IP_MF | IP_OFFSET)))
			return false;
		f->family = AF_INET;
		memcpy(f->saddr, &iph->saddr, 4);
		memcpy(f->daddr, &iph->daddr, 4);
		*thoff = off + iph->ihl * 4;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h;
		struct ipv6hdr _ip6h;

		ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
		if (!ip6h || ip6h->nexthdr != proto)
			return false;
		f->family = AF_INET6;
		memcpy(f->saddr, &ip6h->saddr, 16);
		memcpy(f->daddr, &ip6h->daddr, 16);
		*thoff = off + sizeof(*ip6h);
	} else {
		return false;
	}
	return true;
}
NOKPROBE_SYMBOL(netlat_parse_ip);

/* A big-endian word at any alignment (options are not aligned). */
static __always_inline u32 netlat_be32_at(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/* netlat_th_ts()'s walk of options not in Linux's layout. */
notrace bool netlat_th_ts_slow(const struct tcphdr *th, u32 *tsval,
			       u32 *tsecr)
{
	const u8 *p = (const u8 *)(th + 1);
	const u8 *end = (const u8 *)th + th->doff * 4;

	while (p < end) {
		if (*p == TCPOPT_EOL)
			break;
		if (*p == TCPOPT_NOP) {
			p++;
			continue;
		}
		if (end - p < 2 || p[1] < 2 || p[1] > end - p)
			break;
		if (*p == TCPOPT_TIMESTAMP && p[1] == TCPOLEN_TIMESTAMP) {
			*tsval = netlat_be32_at(p + 2);
			*tsecr = netlat_be32_at(p + 6);
			return true;
		}
		p += p[1];
	}
	return false;
}
NOKPROBE_SYMBOL(netlat_th_ts_slow);

notrace bool netlat_parse_tcp(const struct sk_buff *skb,
			      struct netlat_tcp_seg *seg)
{
	struct netlat_flow *f = &seg->flow;
	const struct tcphdr *th;
	struct tcphdr _th;
	int thoff;

	memset(seg, 0, sizeof(*seg));
	if (!netlat_parse_ip(skb, IPPROTO_TCP, f, &thoff))
		return false;
	th = skb_header_pointer(skb, thoff, sizeof(_th), &_th);
	if (!th)
		return false;
	f->sport = ntohs(th->source);
	f->dport = ntohs(th->dest);
	netlat_seg_from_th(skb, th, thoff, seg);
	return true;
}
NOKPROBE_SYMBOL(netlat_parse_tcp);

notrace bool netlat_parse_udp(const struct sk_buff *skb,
			      struct netlat_tcp_seg *seg)
{
	struct netlat_flow *f = &seg->flow;
	const struct udphdr *uh;
	struct udphdr _uh;
	int thoff;

	memset(seg, 0, sizeof(*seg));
	if (!netlat_parse_ip(skb, IPPROTO_UDP, f, &thoff))
		return false;
	uh = skb_header_pointer(skb, thoff, sizeof(_uh), &_uh);
	if (!uh)
		return false;
	f->sport = ntohs(uh->source);
	f->dport = ntohs(uh->dest);
	/* the header's length: GRO'd UDP (fraglist) would give the first */
	seg->payload = ntohs(uh->len) > sizeof(*uh) ?
		       ntohs(uh->len) - sizeof(*uh) : 0;
	return true;
}
NOKPROBE_SYMBOL(netlat_parse_udp);

void netlat_pkt_init(void)
{
	get_random_bytes(&netlat_sk_key, sizeof(netlat_sk_key));
	get_random_bytes(&netlat_skb_key, sizeof(netlat_skb_key));
}
