/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader's wakeup (NETLAT_PROBE_RX_SCHED): a unit under the receive
 * family, whose probe table arms the handlers below. A reader that blocks
 * in sk_wait_data() or __skb_wait_for_more_packets() takes a slot; its
 * socket's readiness, its wakeup and its run are stamped into the slot,
 * and its next copy takes them (netlat_rxwait_woke()).
 */
#ifndef _NETLAT_RXWAIT_H
#define _NETLAT_RXWAIT_H

#include <linux/types.h>

struct sock;
struct pt_regs;
struct kprobe;
struct task_struct;
struct netlat_rxtrack_wake;

/* Under the registry mutex: the group goes on, every slot empty. */
void netlat_rxwait_reset(void);

/*
 * The copy of current on @sk: the points its last wait on @sk kept, in
 * *@wk (taken: the next copy has none). False if it did not block on @sk
 * since its last copy.
 */
bool netlat_rxwait_woke(const struct sock *sk, struct netlat_rxtrack_wake *wk);

/* The handlers, for the receive family's probe table. */
int netlat_rxwait_entry(void *data, struct pt_regs *regs);
int netlat_rxwait_ret(void *data, struct pt_regs *regs);
#ifdef NETLAT_HAVE_SK_DATA_READY_TP
void netlat_rxwait_ready_tp(void *data, const struct sock *sk);
#else
int netlat_rxwait_readable_pre(struct kprobe *p, struct pt_regs *regs);
#endif
void netlat_rxwait_wakeup_tp(void *data, struct task_struct *p);
void netlat_rxwait_switch_tp(void *data, bool preempt,
			     struct task_struct *prev,
			     struct task_struct *next,
			     unsigned int prev_state);

#endif /* _NETLAT_RXWAIT_H */
