/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows kernel versions differ. Features are detected
 * by Kbuild (see the top-level Kbuild file), not by version numbers, so a
 * distribution backport is picked up automatically.
 */
#ifndef _NETLAT_COMPAT_H
#define _NETLAT_COMPAT_H

#include <linux/ftrace.h>
#include <linux/fprobe.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/cgroup.h>
#include <net/net_namespace.h>
#include <net/tcp.h>

#ifndef NETLAT_HAVE_VM_FLAGS_SET
/* Before 6.3 vm_flags was written directly, under the mmap lock. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * Probe targets (module/tcp.c). The arguments read by the handlers are the
 * same in 6.1 and 6.12, checked against both trees:
 *   tcp_sendmsg_locked(sk, msg, size)
 *   tcp_push(sk, flags, mss_now, nonagle, size_goal)
 *   __tcp_push_pending_frames(sk, cur_mss, nonagle), tcp_push_one(sk, mss)
 *   tcp_skb_entail(sk, skb)
 *   __tcp_transmit_skb(sk, skb, clone_it, gfp_mask, rcv_nxt)
 *   tcp_retransmit_skb(sk, skb, segs), __tcp_retransmit_skb(sk, skb, segs)
 *   tcp_rtx_synack(sk, req), tcp_ack(sk, skb, flag)
 *   tracepoints net_dev_queue(skb), net_dev_start_xmit(skb, dev)
 * 7.x adds a tcp:tcp_sendmsg_locked tracepoint, but inside the copy loop
 * (once per skb filled, not once per call): it cannot give the start of a
 * sendmsg, so the packet level keeps a kprobe on the entry everywhere.
 * What does differ is inlining and splitting: 6.1 inlines
 * __tcp_retransmit_skb into tcp_retransmit_skb and has a .part.0 clone of
 * it, so all of them are probed and nested hits are merged at run time
 * (tcp.c). A signature change would be handled here, detected in Kbuild
 * like NETLAT_HAVE_VM_FLAGS_SET.
 */

/*
 * Network namespace identity (NETLAT_MATCH_NETNS): the inode number that
 * stat() of /proc/PID/ns/net reports, net->ns.inum in 6.1 and 6.12.
 */
static inline unsigned int netlat_net_inum(const struct net *net)
{
	return net->ns.inum;
}

/*
 * The cgroup v2 id of a socket's cgroup (NETLAT_KEY_CGROUP), as
 * name_to_handle_at() of its directory gives it; 0 without socket cgroup
 * data.
 */
static inline u64 netlat_sk_cgroup_id(const struct sock *sk)
{
#ifdef CONFIG_SOCK_CGROUP_DATA
	return cgroup_id(sock_cgroup_ptr((struct sock_cgroup_data *)
					 &sk->sk_cgrp_data));
#else
	return 0;
#endif
}

/*
 * Last transmit time of a write-queue skb (netlat_rec_tcp_ack.xmit_ack_ns):
 * __tcp_transmit_skb() sets the original skb's skb_mstamp_ns to
 * tp->tcp_wstamp_ns, which is tcp_clock_ns() = ktime_get_ns(), i.e.
 * CLOCK_MONOTONIC like the record timestamps, in both 6.1 and 6.12
 * (include/net/tcp.h). It is the earliest departure time: with pacing it
 * may lie slightly ahead of the actual transmit, and TCP_TX_DELAY adds its
 * delay to it; SO_TXTIME's own clock only applies to other protocols' skbs.
 * Skbs restored by TCP repair (TCPCB_REPAIRED) have no timestamp.
 */
static inline bool netlat_skb_xmit_ns(const struct sk_buff *skb, u64 *ns)
{
	if (TCP_SKB_CB(skb)->sacked & TCPCB_REPAIRED)
		return false;
	*ns = skb->skb_mstamp_ns;
	return true;
}

/*
 * The departure time an outgoing skb carries (module/track.c): TCP's
 * skb_mstamp_ns, which __tcp_transmit_skb() gives its clone as a
 * monotonic delivery time (skb_set_delivery_time()); 0 if @skb carries
 * none, or a stamp of another clock.
 */
static inline u64 netlat_skb_tx_stamp(const struct sk_buff *skb)
{
#ifdef NETLAT_HAVE_SKB_TSTAMP_TYPE
	if (skb->tstamp_type != SKB_CLOCK_MONOTONIC)
		return 0;
#else
	if (!skb->mono_delivery_time)
		return 0;
#endif
	return ktime_to_ns(skb->tstamp);
}

/*
 * Receive stamp of an skb (module/rx.c): skb->tstamp, CLOCK_REALTIME as
 * net_timestamp_check() sets it, unless the skb carries a monotonic
 * delivery time instead (forwarded with an EDT stamp): 6.1 marks that with
 * mono_delivery_time, 6.11 and later with tstamp_type.
 */
static inline u64 netlat_skb_rx_stamp(const struct sk_buff *skb)
{
#ifdef NETLAT_HAVE_SKB_TSTAMP_TYPE
	if (skb->tstamp_type != SKB_CLOCK_REALTIME)
		return 0;
#else
	if (skb->mono_delivery_time)
		return 0;
#endif
	return ktime_to_ns(skb->tstamp);
}

/* tcp:tcp_probe's skb: const from 7.x on. */
#ifdef NETLAT_HAVE_TCP_PROBE_CONST_SKB
#define NETLAT_TCP_PROBE_SKB	const struct sk_buff
#else
#define NETLAT_TCP_PROBE_SKB	struct sk_buff
#endif

/*
 * skb:kfree_skb's handler. 6.1: (skb, location, reason); 6.12 added the
 * receiving socket, rx_sk (not read here), const from 7.x on.
 */
#if defined(NETLAT_HAVE_KFREE_SKB_CONST_RX_SK)
#define NETLAT_KFREE_SKB_PROTO	void *data, struct sk_buff *skb, \
				void *location, enum skb_drop_reason reason, \
				const struct sock *rx_sk
#elif defined(NETLAT_HAVE_KFREE_SKB_RX_SK)
#define NETLAT_KFREE_SKB_PROTO	void *data, struct sk_buff *skb, \
				void *location, enum skb_drop_reason reason, \
				struct sock *rx_sk
#else
#define NETLAT_KFREE_SKB_PROTO	void *data, struct sk_buff *skb, \
				void *location, enum skb_drop_reason reason
#endif

/*
 * The arguments an ftrace callback sees (module/fentry.c). With
 * DYNAMIC_FTRACE_WITH_ARGS, x86-64's ftrace_regs is a pt_regs whose
 * argument registers are always saved: a kprobe handler reads them
 * through regs_get_kernel_argument() as it would its own. 6.1 names it
 * fregs->regs; from 6.12 on it is behind arch_ftrace_regs().
 */
#if defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS) && defined(CONFIG_X86_64)
/*
 * entry hooks through ftrace (fentry.c); without them (no function
 * tracer, or no saved arguments) every entry hook is a kprobe
 */
#define NETLAT_FENTRY
#ifdef arch_ftrace_regs
#define netlat_fregs_regs(fregs)	(&arch_ftrace_regs(fregs)->regs)
#else
#define netlat_fregs_regs(fregs)	(&(fregs)->regs)
#endif
#endif

/*
 * Return probes through fprobe (module/probes.c), where the kernel has it
 * with handlers that can skip the return (6.12 and later): its ftrace
 * recursion guard is per context, as fentry.c's, where a kretprobe's
 * handler takes the CPU's kprobe slot. 6.12 gives the handlers a pt_regs,
 * 7.x an ftrace_regs; 6.12 sizes the return pool (nr_maxactive), 7.x
 * keeps returns on the function graph's shadow stack.
 */
#if defined(CONFIG_FPROBE) && defined(NETLAT_HAVE_FPROBE_CB) && \
	defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS) && defined(CONFIG_X86_64)
#define NETLAT_FPROBE
#ifdef NETLAT_HAVE_FPROBE_FREGS
#define NETLAT_FPROBE_REGS		struct ftrace_regs
#define netlat_fprobe_regs(r)		netlat_fregs_regs(r)
#else
#define NETLAT_FPROBE_REGS		struct pt_regs
#define netlat_fprobe_regs(r)		(r)
#endif
static inline void netlat_fprobe_maxactive(struct fprobe *fp, int n)
{
#ifdef NETLAT_HAVE_FPROBE_MAXACTIVE
	fp->nr_maxactive = n;
#endif
}
#endif

/*
 * Return probes by wrapping the function (module/wrap.c), where there is
 * no fprobe (6.1): an ftrace callback with the registers saved may move
 * the instruction pointer (x86-64's ftrace_regs_caller copies it back),
 * and without IBT or kCFI the body may be called at no ENDBR or hash.
 * Only what was tested: GCC, x86-64, no IBT, no CFI by either name
 * (CONFIG_CFI_CLANG became CONFIG_CFI in 6.18). Anything else keeps the
 * kretprobe, which `netlat probes --hooks` names.
 */
#if !defined(NETLAT_FPROBE) && defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS) && \
	defined(CONFIG_X86_64) && defined(CONFIG_CC_IS_GCC) && \
	!defined(CONFIG_X86_KERNEL_IBT) && !defined(CONFIG_CFI_CLANG) && \
	!defined(CONFIG_CFI)
#define NETLAT_WRAP
#endif

#endif /* _NETLAT_COMPAT_H */
