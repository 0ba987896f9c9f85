/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows kernel versions differ. Features are detected
 * by Kbuild (see the top-level Kbuild file), not by version numbers, so a
 * distribution backport is picked up automatically.
 */
#ifndef _NETLAT_COMPAT_H
#define _NETLAT_COMPAT_H

#include <linux/mm.h>

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
 * What does differ is inlining: 6.1 inlines __tcp_retransmit_skb into
 * tcp_retransmit_skb, so both are probed and nested hits are merged at
 * run time (tcp.c). A signature change would be handled here, detected in
 * Kbuild like NETLAT_HAVE_VM_FLAGS_SET.
 */

#endif /* _NETLAT_COMPAT_H */
