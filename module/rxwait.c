// SPDX-License-Identifier: GPL-2.0
/*
 * The reader's wakeup (NETLAT_PROBE_RX_SCHED, see rxwait.h): who is
 * blocked on which socket, the socket's readiness, the wakeup and the run
 * that follow, as RX_WAKE records at the events level and as points the
 * receive table's copy takes at the packet level.
 */
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/bitmap.h>
#include <linux/sched.h>
#include <linux/kprobes.h>
#include <linux/timekeeping.h>
#include <net/sock.h>
#include "record.h"
#include "probes.h"
#include "filter.h"
#include "pkt.h"
#include "rxtrack.h"
#include "rxwait.h"

/*
 * Who is blocked on which socket: a fixed table of slots hashed by task,
 * claimed (cmpxchg) at the entry of the wait and released at its return
 * by the waiting task alone, as tcp.c's sendmsg slots. The slot holds the
 * socket's flow, computed at BLOCK, so the scheduler handlers never touch
 * the socket. The scheduler tracepoints cost one load and a compare for
 * every task that is not in its slot.
 *
 * The slot also keeps the wait's points (block, ready, wakeup, run) past
 * its release, until the task's next copy takes them (@stamped: whose
 * they are): the packet level gives them to the packet that copy ends.
 * READY names a socket, not a task: a reader that blocks claims its
 * socket's way in a second table hashed by socket, sk_data_ready()
 * stamps the way of its socket if a reader claimed one, and the wakeup
 * of a task blocked on that socket takes the stamp (its waker may be on
 * another CPU, in softirq). A socket nobody waits on (an epoll server's,
 * every socket at the packet level with no blocked reader) costs its
 * data_ready one bit, or a look at four ways once a reader of another
 * socket in its bucket blocked, and no clock read. A way claimed while a
 * ready of another socket stamps it may give the new waiter that time:
 * at most the overlap of two handlers apart, and never before the reader
 * blocked or after its wakeup; with more waiters in a bucket than ways,
 * the one claimed longest ago goes to the newest, whose ready then
 * counts and the other's not. The stamps are the RX_WAKE records' times, but at the packet
 * level only the first wakeup and run of a wait count (a reader that
 * sleeps again for the socket's lock is not woken by its data).
 */
#define NETLAT_WAIT_BITS	10
struct netlat_wait_slot {
	struct task_struct *owner;
	bool woken;
	struct netlat_flow flow;
	struct task_struct *stamped;	/* NULL: no points kept */
	const struct sock *sk;		/* key only, never dereferenced */
	u64 block_ns, ready_ns, wakeup_ns, run_ns;
};
static struct netlat_wait_slot netlat_wait_slots[1 << NETLAT_WAIT_BITS];

/*
 * A wakeup may be taken on the woken task's CPU well after its
 * sk_data_ready() (the remote wakeup list), when another socket of the
 * same bucket may have been readied meanwhile: so a bucket has ways, and
 * a socket takes the way it had or else the oldest one.
 */
#define NETLAT_READY_BITS	7
#define NETLAT_READY_WAYS	4
struct netlat_ready {
	const struct sock *sk;		/* key only; set by the waiter */
	u64 claimed_ns;			/* when a waiter took the way */
	u64 ns;				/* the socket's last ready, or 0 */
};
static struct netlat_ready netlat_ready_tbl[1 << NETLAT_READY_BITS][NETLAT_READY_WAYS];
/*
 * The buckets where a reader ever claimed a way (since the group went on):
 * an epoll server's readies look at one bit, not at four ways.
 */
static DECLARE_BITMAP(netlat_ready_used, 1 << NETLAT_READY_BITS);

static __always_inline struct netlat_ready *netlat_ready_bucket(const struct sock *sk)
{
	return netlat_ready_tbl[hash_ptr(sk, NETLAT_READY_BITS)];
}

static __always_inline struct netlat_wait_slot *netlat_wait_slot(struct task_struct *t)
{
	return &netlat_wait_slots[hash_ptr(t, NETLAT_WAIT_BITS)];
}

static notrace void netlat_rx_wake(const struct netlat_flow *flow, u32 event,
				   const struct task_struct *t, int cpu)
{
	struct netlat_rec_rx_wake *r;
	struct netlat_writer w __uninitialized;

	r = netlat_reserve_zeroed(&w, NETLAT_REC_RX_WAKE, sizeof(*r));
	if (!r)
		return;
	r->flow = *flow;
	r->event = event;
	if (t) {
		r->pid = t->tgid;
		r->tid = t->pid;
	}
	r->on_cpu = cpu;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_rx_wake);

static __always_inline bool netlat_rx_sock(const struct sock *sk)
{
	return (sk->sk_type == SOCK_STREAM && sk->sk_protocol == IPPROTO_TCP) ||
	       (sk->sk_type == SOCK_DGRAM && sk->sk_protocol == IPPROTO_UDP);
}

/*
 * A reader blocks on @sk at @now: its socket's way of the ready table (the
 * one it had, else the one claimed longest ago) takes its readies from now.
 */
static notrace void netlat_ready_claim(const struct sock *sk, u64 now)
{
	u32 bucket = hash_ptr(sk, NETLAT_READY_BITS);
	struct netlat_ready *b = netlat_ready_tbl[bucket], *e = &b[0];
	int i;

	if (!test_bit(bucket, netlat_ready_used))
		set_bit(bucket, netlat_ready_used);
	for (i = 0; i < NETLAT_READY_WAYS; i++) {
		if (READ_ONCE(b[i].sk) == sk) {
			e = &b[i];
			break;
		}
		if (READ_ONCE(b[i].claimed_ns) < READ_ONCE(e->claimed_ns))
			e = &b[i];
	}
	WRITE_ONCE(e->claimed_ns, now);
	if (READ_ONCE(e->sk) == sk)
		return;
	/* another socket's way: no wakeup takes its time for this socket */
	WRITE_ONCE(e->sk, NULL);
	smp_wmb();
	WRITE_ONCE(e->ns, 0);
	smp_wmb();
	WRITE_ONCE(e->sk, sk);
}
NOKPROBE_SYMBOL(netlat_ready_claim);

/* sk_wait_data(sk, timeo, skb), __skb_wait_for_more_packets(sk, ...) */
notrace int netlat_rxwait_entry(void *data, struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct netlat_wait_slot *s;
	struct netlat_flow flow;
	u64 now;

	if (!netlat_group_on(NETLAT_PROBE_RX_SCHED) || !netlat_rx_sock(sk) ||
	    !netlat_filter_sk_flow(NETLAT_PROBE_RX_SCHED, sk, &flow))
		return 1;	/* no return handler */
	if (!netlat_rxtrack_packets())
		netlat_rx_wake(&flow, NETLAT_RX_WAKE_BLOCK, current,
			       raw_smp_processor_id());
	s = netlat_wait_slot(current);
	if (cmpxchg(&s->owner, NULL, current)) {
		netlat_rxtrack_wait_untracked();
		return 1;	/* taken: this wait goes without */
	}
	s->flow = flow;
	WRITE_ONCE(s->woken, false);
	/* the points' owner goes first: a copy reading them sees it change */
	WRITE_ONCE(s->stamped, NULL);
	smp_wmb();
	WRITE_ONCE(s->sk, sk);
	now = ktime_get_mono_fast_ns();
	netlat_ready_claim(sk, now);
	WRITE_ONCE(s->block_ns, now);
	WRITE_ONCE(s->ready_ns, 0);
	WRITE_ONCE(s->wakeup_ns, 0);
	WRITE_ONCE(s->run_ns, 0);
	smp_wmb();
	WRITE_ONCE(s->stamped, current);
	return 0;
}
NOKPROBE_SYMBOL(netlat_rxwait_entry);

notrace int netlat_rxwait_ret(void *data, struct pt_regs *regs)
{
	struct netlat_wait_slot *s = netlat_wait_slot(current);

	if (s->owner == current)
		smp_store_release(&s->owner, NULL);
	return 0;
}
NOKPROBE_SYMBOL(netlat_rxwait_ret);

/*
 * The wait points current's last wait on @sk kept (taken: the next copy
 * has none). False if it did not block on @sk since its last copy.
 */
notrace bool netlat_rxwait_woke(const struct sock *sk,
				   struct netlat_rxtrack_wake *wk)
{
	struct netlat_wait_slot *s = netlat_wait_slot(current);
	bool same;

	if (READ_ONCE(s->stamped) != current ||
	    !netlat_group_on(NETLAT_PROBE_RX_SCHED))
		return false;
	smp_rmb();
	same = READ_ONCE(s->sk) == sk;
	wk->ready_ns = READ_ONCE(s->ready_ns);
	wk->wakeup_ns = READ_ONCE(s->wakeup_ns);
	wk->run_ns = READ_ONCE(s->run_ns);
	/* another task's wait took the slot meanwhile: its points, not ours */
	if (cmpxchg(&s->stamped, current, NULL) != current)
		return false;
	return same && wk->wakeup_ns;
}
NOKPROBE_SYMBOL(netlat_rxwait_woke);

static notrace void netlat_ready(const struct sock *sk)
{
	u32 bucket = hash_ptr(sk, NETLAT_READY_BITS);
	struct netlat_ready *b = netlat_ready_tbl[bucket];
	struct netlat_flow flow __uninitialized;	/* filled whole */
	int i;

	if (!netlat_group_on(NETLAT_PROBE_RX_SCHED) || !netlat_rx_sock(sk))
		return;
	/* the clock only for a socket a reader blocked on */
	if (test_bit(bucket, netlat_ready_used)) {
		for (i = 0; i < NETLAT_READY_WAYS; i++) {
			if (READ_ONCE(b[i].sk) == sk) {
				WRITE_ONCE(b[i].ns, ktime_get_mono_fast_ns());
				break;
			}
		}
	}
	if (netlat_rxtrack_packets() ||
	    !netlat_filter_sk_flow(NETLAT_PROBE_RX_SCHED, sk, &flow))
		return;
	netlat_rx_wake(&flow, NETLAT_RX_WAKE_READY, NULL, raw_smp_processor_id());
}
NOKPROBE_SYMBOL(netlat_ready);

#ifdef NETLAT_HAVE_SK_DATA_READY_TP
/* sock:sk_data_ready(sk), in sock_def_readable() and the others */
notrace void netlat_rxwait_ready_tp(void *data, const struct sock *sk)
{
	netlat_ready(sk);
}
NOKPROBE_SYMBOL(netlat_rxwait_ready_tp);
#else
/* sock_def_readable(sk): TCP's and UDP's sk_data_ready */
notrace int netlat_rxwait_readable_pre(struct kprobe *p, struct pt_regs *regs)
{
	netlat_ready((void *)regs_get_kernel_argument(regs, 0));
	return 0;
}
NOKPROBE_SYMBOL(netlat_rxwait_readable_pre);
#endif

/* sched:sched_wakeup(p): only a task in its wait slot writes */
notrace void netlat_rxwait_wakeup_tp(void *data, struct task_struct *p)
{
	struct netlat_wait_slot *s;

	if (!netlat_group_on(NETLAT_PROBE_RX_SCHED))
		return;
	s = netlat_wait_slot(p);
	if (READ_ONCE(s->owner) != p || READ_ONCE(s->woken))
		return;
	WRITE_ONCE(s->woken, true);
	if (!READ_ONCE(s->wakeup_ns)) {
		const struct sock *sk = READ_ONCE(s->sk);
		u64 now = ktime_get_mono_fast_ns(), ready;
		const struct netlat_ready *b = netlat_ready_bucket(sk);
		int i;

		for (i = 0; i < NETLAT_READY_WAYS; i++) {
			if (READ_ONCE(b[i].sk) != sk)
				continue;
			smp_rmb();
			ready = READ_ONCE(b[i].ns);
			smp_rmb();
			if (READ_ONCE(b[i].sk) == sk &&
			    ready >= READ_ONCE(s->block_ns) && ready <= now)
				WRITE_ONCE(s->ready_ns, ready);
			break;
		}
		WRITE_ONCE(s->wakeup_ns, now);
	}
	if (!netlat_rxtrack_packets())
		netlat_rx_wake(&s->flow, NETLAT_RX_WAKE_WAKEUP, p, task_cpu(p));
}
NOKPROBE_SYMBOL(netlat_rxwait_wakeup_tp);

/* sched:sched_switch: the woken reader runs */
notrace void netlat_rxwait_switch_tp(void *data, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state)
{
	struct netlat_wait_slot *s;

	if (!netlat_group_on(NETLAT_PROBE_RX_SCHED))
		return;
	s = netlat_wait_slot(next);
	if (READ_ONCE(s->owner) != next || !READ_ONCE(s->woken))
		return;
	WRITE_ONCE(s->woken, false);
	if (!READ_ONCE(s->run_ns))
		WRITE_ONCE(s->run_ns, ktime_get_mono_fast_ns());
	if (!netlat_rxtrack_packets())
		netlat_rx_wake(&s->flow, NETLAT_RX_WAKE_RUN, next,
			       raw_smp_processor_id());
}
NOKPROBE_SYMBOL(netlat_rxwait_switch_tp);

/* The group goes on: no wait is in a slot while it was off. */
void netlat_rxwait_reset(void)
{
	netlat_probes_assert_held();
	memset(netlat_wait_slots, 0, sizeof(netlat_wait_slots));
	memset(netlat_ready_tbl, 0, sizeof(netlat_ready_tbl));
	bitmap_zero(netlat_ready_used, 1 << NETLAT_READY_BITS);
}
