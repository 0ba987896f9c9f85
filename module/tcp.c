// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP probe family: send path and retransmission records, their
 * handlers and probe table (see probes.h for the registry,
 * uapi/linux/netlat.h for the records). Handlers run with preemption
 * disabled (kprobe, kretprobe and tracepoint contexts), take no lock,
 * allocate nothing and read socket fields directly; every record passes
 * the filters (filter.h) before it goes through netlat_reserve/commit.
 */
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/percpu.h>
#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/ipv6.h>
#include <net/inet_connection_sock.h>
#include <net/request_sock.h>
#include <net/sch_generic.h>
#include <trace/events/net.h>
#include <trace/events/tcp.h>
#include "record.h"
#include "probes.h"
#include "filter.h"
#include "pkt.h"
#include "compat.h"
#include "track.h"
#include "tracktbl.h"
#include "tcp.h"

/*
 * Reserve a TCP record of @group about @sk, unless the filters keep it
 * out, and fill its flow.
 */
static notrace void *netlat_tcp_reserve(struct netlat_writer *w, u64 group,
					u16 type, u32 len, const struct sock *sk)
{
	struct netlat_flow flow;
	void *rec;

	if (!netlat_filter_sk_flow(group, sk, &flow))
		return NULL;
	rec = netlat_reserve_zeroed(w, type, len);
	if (rec)
		memcpy(rec + sizeof(struct netlat_rec_hdr), &flow, sizeof(flow));
	return rec;
}
NOKPROBE_SYMBOL(netlat_tcp_reserve);

/*
 * sendmsg ids for the probes that run inside a sendmsg (tcp_skb_entail,
 * the push functions). No per-socket state can be added, so a fixed table
 * of slots indexed by a hash of the calling task holds (task, socket, id)
 * from the entry of tcp_sendmsg_locked to its return. Only the owning
 * task writes or reads a claimed slot, so no lock is needed; a task that
 * finds its slot taken (hash collision) goes without, and its records lack
 * NETLAT_TCP_ID_VALID (the reader joins them by sequence instead).
 */
#define NETLAT_SLOT_BITS	10
struct netlat_slot {
	struct task_struct *owner;
	const struct sock *sk;
	u32 id;
};
static struct netlat_slot netlat_slots[1 << NETLAT_SLOT_BITS];

static notrace struct netlat_slot *netlat_slot(void)
{
	return &netlat_slots[hash_ptr(current, NETLAT_SLOT_BITS)];
}
NOKPROBE_SYMBOL(netlat_slot);

/*
 * Per-CPU retransmit context. The timer functions (RTO, loss probe) run
 * with bottom halves off, so "this socket is in the RTO timer / loss probe"
 * holds until their return handlers clear it; the socket pointer is
 * compared, so a nested softirq for another socket is never misattributed.
 * tcp_retransmit_skb() can also run in process context with bottom halves
 * on (release_sock() draining the backlog), where a softirq retransmit may
 * nest inside it: outer_skb, the skb a retransmit probe is recording, is
 * therefore saved on entry and restored on return, last in first out; a
 * preemptible kernel may move that context to another CPU before the
 * return, which then restores the entry CPU's.
 */
struct netlat_rtx_ctx {
	const struct sock *timer_sk;
	u8 timer_kind;
	const struct sk_buff *outer_skb;
};
static DEFINE_PER_CPU(struct netlat_rtx_ctx, netlat_rtx_ctx);

/* Groups go on that were off: no sendmsg slot, no retransmit context. */
static void netlat_tcp_groups_on(u64 groups)
{
	int cpu;

	if (groups & NETLAT_PROBE_TCP_SENDMSG)
		memset(netlat_slots, 0, sizeof(netlat_slots));
	/* a return unseen while the group was off left its context */
	if (groups & NETLAT_PROBE_TCP_RETRANS)
		for_each_possible_cpu(cpu)
			memset(per_cpu_ptr(&netlat_rtx_ctx, cpu), 0,
			       sizeof(struct netlat_rtx_ctx));
	netlat_track_groups_on(groups);
}

/*
 * Back at the event level: a sendmsg in flight when its kretprobe went
 * off at the packet level may have kept its slot. A slot cleared under
 * a running sendmsg only costs its records NETLAT_TCP_ID_VALID (its
 * return handler frees only a slot it still owns).
 */
static void netlat_tcp_level_set(u32 level)
{
	if (level == NETLAT_LEVEL_EVENTS)
		netlat_tcp_groups_on(NETLAT_PROBE_TCP_SENDMSG);
}

static notrace bool netlat_sendmsg_id(const struct sock *sk, u32 *id)
{
	struct netlat_slot *s = netlat_slot();

	if (READ_ONCE(s->owner) != current || s->sk != sk)
		return false;
	*id = s->id;
	return true;
}
NOKPROBE_SYMBOL(netlat_sendmsg_id);

/* ---- sendmsg: kretprobe tcp_sendmsg_locked(sk, msg, size) ---- */

struct netlat_sendmsg_data {
	struct sock *sk;
	u64 start_ns;
	u64 size;
	u32 id;
	u32 msg_flags;
	bool slot;
};

static notrace int netlat_sendmsg_entry(void *data, struct pt_regs *regs)
{
	struct netlat_sendmsg_data *d = data;
	struct msghdr *msg = (void *)regs_get_kernel_argument(regs, 1);
	struct netlat_slot *s = netlat_slot();

	d->sk = (void *)regs_get_kernel_argument(regs, 0);
	d->size = regs_get_kernel_argument(regs, 2);
	d->start_ns = ktime_get_mono_fast_ns();
	d->id = READ_ONCE(tcp_sk(d->sk)->write_seq);
	d->msg_flags = msg ? msg->msg_flags : 0;
	d->slot = !cmpxchg(&s->owner, NULL, current);
	if (d->slot) {
		s->sk = d->sk;
		s->id = d->id;
	}
	return 0;
}
NOKPROBE_SYMBOL(netlat_sendmsg_entry);

static notrace int netlat_sendmsg_ret(void *data, struct pt_regs *regs)
{
	struct netlat_sendmsg_data *d = data;
	struct netlat_rec_tcp_sendmsg *r;
	struct netlat_writer w __uninitialized;

	if (d->slot) {
		struct netlat_slot *s = netlat_slot();

		if (s->owner == current) {
			s->sk = NULL;
			smp_store_release(&s->owner, NULL);
		}
	}
	/* the packet level keeps the start in the packet table instead */
	if (!netlat_group_on(NETLAT_PROBE_TCP_SENDMSG) || netlat_tracking())
		return 0;
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_SENDMSG,
			       NETLAT_REC_TCP_SENDMSG, sizeof(*r), d->sk);
	if (!r)
		return 0;
	r->start_ns = d->start_ns;
	r->size = d->size;
	r->ret = (int)regs_return_value(regs);	/* an int: upper half undefined */
	r->sendmsg_id = d->id;
	r->end_seq = READ_ONCE(tcp_sk(d->sk)->write_seq);
	r->msg_flags = d->msg_flags;
	r->pid = current->tgid;
	r->tid = current->pid;
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_sendmsg_ret);

/*
 * The packet level needs only the start of a sendmsg and where its bytes
 * begin: a kprobe on its entry, no return handler and no sendmsg-id slot
 * (no record of the event level uses one there).
 */
static notrace int netlat_sendmsg_pkt_pre(struct kprobe *p,
					  struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);

	if (netlat_tracking() && netlat_group_on(NETLAT_PROBE_TCP_SENDMSG))
		netlat_track_sendmsg(sk, READ_ONCE(tcp_sk(sk)->write_seq));
	return 0;
}
NOKPROBE_SYMBOL(netlat_sendmsg_pkt_pre);

/* ---- push: tcp_push, __tcp_push_pending_frames, tcp_push_one ---- */

static notrace void netlat_push(struct pt_regs *regs, u16 func, u32 mss,
				u32 nonagle)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct netlat_rec_tcp_push *r;
	struct netlat_writer w __uninitialized;

	if (!netlat_group_on(NETLAT_PROBE_TCP_PUSH) || netlat_tracking())
		return;
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_PUSH, NETLAT_REC_TCP_PUSH,
			       sizeof(*r), sk);
	if (!r)
		return;
	if (netlat_sendmsg_id(sk, &r->sendmsg_id))
		r->flags = NETLAT_TCP_ID_VALID;
	r->func = func;
	r->mss = mss;
	r->nonagle = nonagle;
	r->snd_nxt = READ_ONCE(tp->snd_nxt);
	r->write_seq = READ_ONCE(tp->write_seq);
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_push);

/* tcp_push(sk, flags, mss_now, nonagle, size_goal) */
static notrace int netlat_tcp_push_pre(struct kprobe *p, struct pt_regs *regs)
{
	netlat_push(regs, NETLAT_PUSH_TCP_PUSH,
		    regs_get_kernel_argument(regs, 2),
		    regs_get_kernel_argument(regs, 3));
	return 0;
}
NOKPROBE_SYMBOL(netlat_tcp_push_pre);

/* __tcp_push_pending_frames(sk, cur_mss, nonagle) */
static notrace int netlat_push_pending_pre(struct kprobe *p,
					   struct pt_regs *regs)
{
	netlat_push(regs, NETLAT_PUSH_PENDING_FRAMES,
		    regs_get_kernel_argument(regs, 1),
		    regs_get_kernel_argument(regs, 2));
	return 0;
}
NOKPROBE_SYMBOL(netlat_push_pending_pre);

/* tcp_push_one(sk, mss_now) */
static notrace int netlat_push_one_pre(struct kprobe *p, struct pt_regs *regs)
{
	netlat_push(regs, NETLAT_PUSH_ONE, regs_get_kernel_argument(regs, 1), 0);
	return 0;
}
NOKPROBE_SYMBOL(netlat_push_one_pre);

/* ---- skb: tcp_skb_entail(sk, skb) ---- */

static notrace int netlat_entail_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	struct netlat_rec_tcp_skb *r;
	struct netlat_writer w __uninitialized;

	if (!netlat_group_on(NETLAT_PROBE_TCP_SKB) || netlat_tracking())
		return 0;
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_SKB, NETLAT_REC_TCP_SKB,
			       sizeof(*r), sk);
	if (!r)
		return 0;
	r->skb_id = netlat_skb_id(skb);
	/* tcp_skb_entail() itself gives the skb its sequence: write_seq */
	r->seq = READ_ONCE(tcp_sk(sk)->write_seq);
	if (netlat_sendmsg_id(sk, &r->sendmsg_id))
		r->flags = NETLAT_TCP_ID_VALID;
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_entail_pre);

/* ---- xmit: __tcp_transmit_skb(sk, skb, clone_it, gfp, rcv_nxt) ---- */

static notrace int netlat_xmit_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct netlat_rec_tcp_xmit *r;
	struct netlat_writer w __uninitialized;

	/* the packet level begins its packets at net_dev_queue */
	if (!netlat_group_on(NETLAT_PROBE_TCP_XMIT) || netlat_tracking())
		return 0;
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_XMIT, NETLAT_REC_TCP_XMIT,
			       sizeof(*r), sk);
	if (!r)
		return 0;
	r->skb_id = netlat_skb_id(skb);
	r->seq = cb->seq;
	r->end_seq = cb->end_seq;
	r->len = skb->len;
	r->segs = tcp_skb_pcount(skb);
	r->tcp_flags = cb->tcp_flags;
	r->snd_una = READ_ONCE(tp->snd_una);
	if (cb->end_seq != cb->seq &&
	    (before(cb->seq, READ_ONCE(tp->snd_nxt)) ||
	     (cb->sacked & TCPCB_EVER_RETRANS)))
		r->flags = NETLAT_TCP_RETRANSMIT;
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_xmit_pre);

/* ---- retransmit context: tcp_retransmit_timer(sk), tcp_send_loss_probe(sk) */

static notrace int netlat_timer_enter(struct pt_regs *regs, u8 kind)
{
	struct netlat_rtx_ctx *c = this_cpu_ptr(&netlat_rtx_ctx);

	c->timer_sk = (void *)regs_get_kernel_argument(regs, 0);
	c->timer_kind = kind;
	return 0;
}
NOKPROBE_SYMBOL(netlat_timer_enter);

static notrace int netlat_rto_entry(void *data, struct pt_regs *regs)
{
	return netlat_timer_enter(regs, NETLAT_RETRANS_RTO);
}
NOKPROBE_SYMBOL(netlat_rto_entry);

static notrace int netlat_tlp_entry(void *data, struct pt_regs *regs)
{
	return netlat_timer_enter(regs, NETLAT_RETRANS_TLP);
}
NOKPROBE_SYMBOL(netlat_tlp_entry);

static notrace int netlat_timer_ret(void *data, struct pt_regs *regs)
{
	this_cpu_write(netlat_rtx_ctx.timer_sk, NULL);
	return 0;
}
NOKPROBE_SYMBOL(netlat_timer_ret);

/* ---- retransmit: __tcp_retransmit_skb(sk, skb, segs) ---- */

struct netlat_rtx_data {
	struct sock *sk;
	struct sk_buff *skb;
	const struct sk_buff *prev_outer_skb;
	int cpu;		/* whose outer_skb the entry set */
	u32 total_retrans;
	u16 segs_req;
	u8 kind;
	u8 ca_state;
	u8 retransmits;
};

static notrace u8 netlat_rtx_kind(const struct sock *sk)
{
	struct netlat_rtx_ctx *c = this_cpu_ptr(&netlat_rtx_ctx);

	if (sk->sk_state == TCP_SYN_SENT)
		return NETLAT_RETRANS_SYN;
	if (c->timer_sk == sk)
		return c->timer_kind;
	switch (inet_csk(sk)->icsk_ca_state) {
	case TCP_CA_Loss:
		return NETLAT_RETRANS_RTO;
	case TCP_CA_Recovery:
	case TCP_CA_Disorder:
	case TCP_CA_CWR:
		return NETLAT_RETRANS_FAST;
	}
	return NETLAT_RETRANS_OTHER;
}
NOKPROBE_SYMBOL(netlat_rtx_kind);

/*
 * One retransmission goes through up to three probed functions: the
 * outer tcp_retransmit_skb(), __tcp_retransmit_skb() (called from it, or
 * directly by the loss probe), and the ".part.0" clone GCC splits off it
 * in some builds (the 6.1 release and debug kernels), which callers that
 * inlined the head enter directly (tcp_retransmit_skb() in the release
 * build, tcp_send_loss_probe() in the debug build) and
 * __tcp_retransmit_skb() tail-calls. Whichever is entered first for an
 * skb writes the record; the ones nested in it for the same skb are
 * skipped. The clone's arguments are the original's (sk, skb, segs):
 * the head jumps to it with the registers untouched, checked in both
 * builds' disassembly, and checked again at each hit
 * (netlat_rtx_clone_args_ok()).
 */
static notrace int netlat_rtx_entry(void *data, struct pt_regs *regs)
{
	struct netlat_rtx_data *d = data;

	d->sk = (void *)regs_get_kernel_argument(regs, 0);
	d->skb = (void *)regs_get_kernel_argument(regs, 1);
	if (this_cpu_read(netlat_rtx_ctx.outer_skb) == d->skb)
		return 1;	/* no return handler */
	d->segs_req = regs_get_kernel_argument(regs, 2);
	d->total_retrans = READ_ONCE(tcp_sk(d->sk)->total_retrans);
	d->kind = netlat_rtx_kind(d->sk);
	d->ca_state = inet_csk(d->sk)->icsk_ca_state;
	d->retransmits = inet_csk(d->sk)->icsk_retransmits;
	d->prev_outer_skb = this_cpu_read(netlat_rtx_ctx.outer_skb);
	d->cpu = raw_smp_processor_id();
	this_cpu_write(netlat_rtx_ctx.outer_skb, d->skb);
	return 0;
}
NOKPROBE_SYMBOL(netlat_rtx_entry);

/*
 * The clone's arguments are (sk, skb, segs) in the builds checked (Debian's
 * 6.1 release and debug kernels); another compiler or config can split
 * it otherwise, and its handler runs in softirq. So before the first
 * dereference its arguments must look like those of a retransmit, read
 * without faulting: a TCP socket, and an skb of its unacknowledged
 * sequence space. Anything else skips the hit, and the kernel log says
 * so once.
 */
static notrace bool netlat_rtx_clone_args_ok(const struct sock *sk,
					     const struct sk_buff *skb,
					     unsigned long segs)
{
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);
	u16 family, type, protocol;
	u32 seq, end_seq, una, nxt;

	if (!segs || segs > U16_MAX ||
	    get_kernel_nofault(family, &sk->sk_family) ||
	    get_kernel_nofault(type, &sk->sk_type) ||
	    get_kernel_nofault(protocol, &sk->sk_protocol) ||
	    (family != AF_INET && family != AF_INET6) ||
	    type != SOCK_STREAM || protocol != IPPROTO_TCP ||
	    get_kernel_nofault(una, &tcp_sk(sk)->snd_una) ||
	    get_kernel_nofault(nxt, &tcp_sk(sk)->snd_nxt) ||
	    get_kernel_nofault(seq, &cb->seq) ||
	    get_kernel_nofault(end_seq, &cb->end_seq))
		return false;
	return !before(seq, una) && before(seq, nxt) && after(end_seq, seq);
}
NOKPROBE_SYMBOL(netlat_rtx_clone_args_ok);

static notrace int netlat_rtx_clone_entry(void *data, struct pt_regs *regs)
{
	if (unlikely(!netlat_rtx_clone_args_ok(
			(void *)regs_get_kernel_argument(regs, 0),
			(void *)regs_get_kernel_argument(regs, 1),
			regs_get_kernel_argument(regs, 2)))) {
		pr_warn_once("__tcp_retransmit_skb.part.0: arguments not (sk, skb, segs) in this build, its hits are skipped\n");
		return 1;	/* no return handler */
	}
	return netlat_rtx_entry(data, regs);
}
NOKPROBE_SYMBOL(netlat_rtx_clone_entry);

static notrace int netlat_rtx_ret(void *data, struct pt_regs *regs)
{
	struct netlat_rtx_data *d = data;
	const struct tcp_skb_cb *cb = TCP_SKB_CB(d->skb);
	struct netlat_rec_tcp_retrans *r;
	struct netlat_writer w __uninitialized;
	u32 counted;

	if (likely(raw_smp_processor_id() == d->cpu))
		this_cpu_write(netlat_rtx_ctx.outer_skb, d->prev_outer_skb);
	else
		/*
		 * Preempted in process context and moved (a preemptible
		 * kernel: 7.3's lazy preemption): the entry's CPU still names
		 * this skb, and would skip its next retransmit there as
		 * nested; undone unless something replaced it since.
		 */
		cmpxchg(&per_cpu(netlat_rtx_ctx, d->cpu).outer_skb, d->skb,
			d->prev_outer_skb);
	if (!netlat_group_on(NETLAT_PROBE_TCP_RETRANS))
		return 0;
	/* segments the kernel added to RetransSegs for this attempt */
	counted = READ_ONCE(tcp_sk(d->sk)->total_retrans) - d->total_retrans;
	/* rare and what matters most: a record at either level */
	if (netlat_tracking())
		netlat_track_retrans(d->sk, cb->seq, d->kind, counted,
				     (int)regs_return_value(regs));
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_RETRANS,
			       NETLAT_REC_TCP_RETRANS, sizeof(*r), d->sk);
	if (!r)
		return 0;
	r->skb_id = netlat_skb_id(d->skb);
	r->seq = cb->seq;
	r->end_seq = cb->end_seq;
	r->ret = (int)regs_return_value(regs);
	r->segs = tcp_skb_pcount(d->skb);
	r->segs_req = d->segs_req;
	r->kind = d->kind;
	r->ca_state = d->ca_state;
	r->retransmits = d->retransmits;
	if (counted)
		r->flags = NETLAT_TCP_COUNTED;
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_rtx_ret);

/* ---- SYN-ACK retransmit: tcp_rtx_synack(sk, req) ---- */

static notrace int netlat_synack_entry(void *data, struct pt_regs *regs)
{
	*(struct request_sock **)data =
		(void *)regs_get_kernel_argument(regs, 1);
	return 0;
}
NOKPROBE_SYMBOL(netlat_synack_entry);

static notrace int netlat_synack_ret(void *data, struct pt_regs *regs)
{
	struct request_sock *req = *(struct request_sock **)data;
	struct netlat_rec_tcp_retrans *r;
	struct netlat_writer w __uninitialized;

	if (!netlat_group_on(NETLAT_PROBE_TCP_RETRANS))
		return 0;
	if (netlat_tracking())
		netlat_track_retrans((const struct sock *)req,
				     tcp_rsk(req)->snt_isn, NETLAT_RETRANS_SYNACK,
				     !regs_return_value(regs),
				     (int)regs_return_value(regs));
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_RETRANS,
			       NETLAT_REC_TCP_RETRANS, sizeof(*r),
			       (const struct sock *)req);
	if (!r)
		return 0;
	r->seq = tcp_rsk(req)->snt_isn;
	r->end_seq = r->seq + 1;
	r->ret = (int)regs_return_value(regs);
	r->segs = 1;
	r->segs_req = 1;
	r->kind = NETLAT_RETRANS_SYNACK;
	r->retransmits = req->num_retrans;
	if (!r->ret)
		r->flags = NETLAT_TCP_COUNTED;
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_synack_ret);

/* ---- ACK: tcp_ack(sk, skb, flag) ---- */

/*
 * tcp_ack(sk, skb, flag) entry, at both levels. The ACK's effect is known
 * on entry: tcp_ack() moves snd_una to the segment's ack_seq whenever it
 * is after snd_una and not after snd_nxt, and otherwise leaves it (an old
 * ACK, a receiver's data, one of data not sent). So no return probe (whose
 * handler would hold the CPU's kprobe slot where kretprobes remain): the
 * ACK is stamped when it arrives, before tcp_ack() frees what it covered.
 * The packet level ends the packets below the new snd_una; the event
 * level writes the record, with the transmit -> ACK time of the oldest
 * unacknowledged segment (the head of the retransmit queue; tcp_ack runs
 * under the socket lock) if the ACK covers it.
 */
static notrace int netlat_ack_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *ack = (void *)regs_get_kernel_argument(regs, 1);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 una = TCP_SKB_CB(ack)->ack_seq;
	u32 prior = READ_ONCE(tp->snd_una);
	u32 nxt = READ_ONCE(tp->snd_nxt);
	struct netlat_rec_tcp_ack *r;
	const struct sk_buff *head;
	struct netlat_writer w __uninitialized;
	u64 xmit_ns;

	/* the packet level's ACKs are netlat_pkt_ack()'s */
	if (!netlat_group_on(NETLAT_PROBE_TCP_ACK) || netlat_tracking() ||
	    !after(una, prior) || after(una, nxt))
		return 0;
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_ACK, NETLAT_REC_TCP_ACK,
			       sizeof(*r), sk);
	if (!r)
		return 0;
	r->snd_una = una;
	r->acked = una - prior;
	r->snd_nxt = nxt;
	head = tcp_rtx_queue_head(sk);
	/* 0 means "none acked in full": an earliest departure time still
	 * ahead (pacing) reads as the smallest nonzero time */
	if (head && netlat_skb_xmit_ns(head, &xmit_ns) &&
	    !before(una, TCP_SKB_CB(head)->end_seq)) {
		r->xmit_ack_ns = r->hdr.ts_ns > xmit_ns ?
				 r->hdr.ts_ns - xmit_ns : 1;
		if (TCP_SKB_CB(head)->sacked & TCPCB_EVER_RETRANS)
			r->flags = NETLAT_TCP_RETRANSMIT;
	}
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(netlat_ack_pre);

/*
 * ---- ACK at the packet level ----
 *
 * Its hooks are the arriving segment's, which the receive group shares:
 * rx.c's tcp:tcp_probe and tcp_rcv_state_process() (netlat_track_ack_seg()).
 */

/* ---- qdisc and driver: net:net_dev_queue, net:net_dev_start_xmit ---- */

/*
 * Whether the TX queue @skb was given has a qdisc that queues: a device
 * without one (noqueue: veth, loopback, tunnels) hands the skb to its
 * driver at once, so the packet level takes no lock or clock for a qdisc
 * point there (the driver's time stands for it, netlat_track_dev()).
 * net_dev_queue fires inside __dev_queue_xmit()'s rcu_read_lock_bh(),
 * after the queue was picked.
 */
static notrace bool netlat_dev_queues(const struct sk_buff *skb)
{
	const struct netdev_queue *txq;

	if (unlikely(!skb->dev))
		return true;
	txq = netdev_get_tx_queue(skb->dev, skb_get_queue_mapping(skb));
	return READ_ONCE(rcu_dereference_bh(txq->qdisc)->enqueue);
}
NOKPROBE_SYMBOL(netlat_dev_queues);

/* Not the per-CPU control socket that sends RSTs and TIME-WAIT ACKs */
static __always_inline const struct sock *netlat_own_tcp_sk(const struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;

	return sk && sk_fullsock(sk) && sk->sk_type == SOCK_STREAM &&
	       sk->sk_protocol == IPPROTO_TCP ? sk : NULL;
}

static notrace void netlat_dev(const struct sk_buff *skb,
			       const struct net_device *dev, u8 stage)
{
	struct netlat_rec_tcp_dev *r;
	struct netlat_tcp_seg seg __uninitialized;
	struct netlat_writer w __uninitialized;
	const struct sock *sk;

	/* the packet level's: netlat_tp_pkt_queue(), netlat_tp_start_xmit() */
	if (!netlat_group_on(NETLAT_PROBE_TCP_DEV) || netlat_tracking())
		return;
	sk = netlat_own_tcp_sk(skb);
	if (!netlat_parse_tcp(skb, &seg))
		return;
	if (netlat_filter_on(NETLAT_PROBE_TCP_DEV)) {
		struct netlat_filter_in in = {
			.flow = &seg.flow, .sk = sk,
			.net = dev ? dev_net(dev) : NULL,
			.lazy_cookie = !!sk,
		};

		if (!netlat_filter_keep(NETLAT_PROBE_TCP_DEV, &in))
			return;
	}
	r = netlat_reserve_zeroed(&w, NETLAT_REC_TCP_DEV, sizeof(*r));
	if (!r)
		return;
	seg.flow.cookie = sk ? netlat_sk_id(sk) : 0;
	r->flow = seg.flow;
	r->skb_id = netlat_skb_id(skb);
	r->seq = seg.seq;
	r->end_seq = r->seq + seg.payload +
		     !!(seg.tcp_flags & TCPHDR_SYN) + !!(seg.tcp_flags & TCPHDR_FIN);
	r->len = seg.payload;
	r->ifindex = dev ? dev->ifindex : 0;
	r->stage = stage;
	r->tcp_flags = seg.tcp_flags;
	r->segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_dev);

static notrace void netlat_tp_dev_queue(void *data, struct sk_buff *skb)
{
	netlat_dev(skb, skb->dev, NETLAT_DEV_QDISC);
}
NOKPROBE_SYMBOL(netlat_tp_dev_queue);

/*
 * A pure ACK of @sk at its driver point (netlat_config.acks): the
 * ACKs a peer's capture needs to join its packets when @sk sends no data.
 */
static noinline notrace void netlat_ack_out(const struct sock *sk,
					    const struct sk_buff *skb)
{
	struct netlat_rec_tcp_ack_out *r;
	struct netlat_writer w __uninitialized;
	const struct tcphdr *th;
	u32 tsval, tsecr;
	int thoff;

	th = netlat_tcp_out_th(skb, &thoff);
	if (!th || !th->ack || th->syn || th->fin || th->rst ||
	    netlat_th_payload(skb, th, thoff))
		return;
	r = netlat_tcp_reserve(&w, NETLAT_PROBE_TCP_DEV,
			       NETLAT_REC_TCP_ACK_OUT, sizeof(*r), sk);
	if (!r)
		return;
	r->ack_seq = ntohl(th->ack_seq);
	r->window = ntohs(th->window);
	if (netlat_skb_ts(skb, &tsval, &tsecr)) {
		r->tsval = tsval;
		r->tsecr = tsecr;
	}
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(netlat_ack_out);

/*
 * net_dev_queue at the packet level: a packet of new data begins (the
 * transmit group) and meets the qdisc (the device group), one hook for
 * both; __tcp_transmit_skb() has no hook there.
 */
static notrace void netlat_tp_pkt_queue(void *data, struct sk_buff *skb)
{
	const struct sock *sk = netlat_own_tcp_sk(skb);
	u64 on = READ_ONCE(netlat_probes_on);
	enum netlat_track_dev dev;

	if (!sk || !netlat_tracking() ||
	    !(on & (NETLAT_PROBE_TCP_XMIT | NETLAT_PROBE_TCP_DEV)))
		return;
	dev = !(on & NETLAT_PROBE_TCP_DEV) ? NETLAT_TRACK_DEV_NONE :
	      netlat_dev_queues(skb) ? NETLAT_TRACK_DEV_QDISC :
	      NETLAT_TRACK_DEV_DIRECT;
	/* a device without a qdisc: its driver point is now */
	if (unlikely(READ_ONCE(netlat_track_acks)) &&
	    dev == NETLAT_TRACK_DEV_DIRECT)
		netlat_ack_out(sk, skb);
	netlat_track_queue(sk, skb, on & NETLAT_PROBE_TCP_XMIT, dev);
}
NOKPROBE_SYMBOL(netlat_tp_pkt_queue);

/*
 * net_dev_start_xmit: at the packet level the driver point of a socket's
 * own segment (anything else, every other protocol and RSTs, leaves before
 * its headers are parsed, and so does a segment of a socket the table does
 * not follow), ahead of the event level's record and its frame.
 */
static notrace void netlat_tp_start_xmit(void *data, const struct sk_buff *skb,
					 const struct net_device *dev)
{
	const struct sock *sk;

	if (netlat_tracking()) {
		sk = netlat_own_tcp_sk(skb);
		/* a device without a qdisc had it at net_dev_queue */
		if (sk && netlat_group_on(NETLAT_PROBE_TCP_DEV) &&
		    netlat_dev_queues(skb)) {
			if (unlikely(READ_ONCE(netlat_track_acks)))
				netlat_ack_out(sk, skb);
			netlat_track_driver(sk, skb);
		}
		return;
	}
	netlat_dev(skb, dev, NETLAT_DEV_DRIVER);
}
NOKPROBE_SYMBOL(netlat_tp_start_xmit);

/* ---- socket end: tcp:tcp_destroy_sock(sk) ---- */

static notrace void netlat_tp_destroy_sock(void *data, struct sock *sk)
{
	if (netlat_tracking())
		netlat_track_close(sk);
}
NOKPROBE_SYMBOL(netlat_tp_destroy_sock);

/* ---- the table ---- */

/*
 * Hooks that give one level nothing are armed only at the other
 * (.levels): the packet level needs no push or skb records, only the
 * start of a sendmsg and the snd_una an ACK leads to (kprobes where the
 * event level needs kretprobes); the event level frees no packet-table
 * slots. While the level changes both levels' hooks are armed
 * (netlat_probes_level_begin()), so only the packet level's sendmsg
 * kprobe stamps a sendmsg into the table: none is stamped twice.
 */
static const struct netlat_probe netlat_tcp_probes[] = {
	NETLAT_KRP_AT("tcp_sendmsg_locked", NETLAT_PROBE_TCP_SENDMSG,
		      netlat_sendmsg_entry, netlat_sendmsg_ret,
		      struct netlat_sendmsg_data, NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT("tcp_sendmsg_locked", NETLAT_PROBE_TCP_SENDMSG,
		     netlat_sendmsg_pkt_pre, NETLAT_PACKETS_ONLY),
	NETLAT_KP_AT("tcp_push", NETLAT_PROBE_TCP_PUSH, netlat_tcp_push_pre,
		     NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT("__tcp_push_pending_frames", NETLAT_PROBE_TCP_PUSH,
		     netlat_push_pending_pre, NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT("tcp_push_one", NETLAT_PROBE_TCP_PUSH, netlat_push_one_pre,
		     NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT("tcp_skb_entail", NETLAT_PROBE_TCP_SKB, netlat_entail_pre,
		     NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT("__tcp_transmit_skb", NETLAT_PROBE_TCP_XMIT,
		     netlat_xmit_pre, NETLAT_EVENTS_ONLY),
	/* context first: enabled before the retransmit probe (table order) */
	NETLAT_KRP_ATOMIC("tcp_retransmit_timer", NETLAT_PROBE_TCP_RETRANS,
			  netlat_rto_entry, netlat_timer_ret, long),
	NETLAT_KRP_ATOMIC("tcp_send_loss_probe", NETLAT_PROBE_TCP_RETRANS,
			  netlat_tlp_entry, netlat_timer_ret, long),
	NETLAT_KRP_ATOMIC("tcp_retransmit_skb", NETLAT_PROBE_TCP_RETRANS,
			  netlat_rtx_entry, netlat_rtx_ret, struct netlat_rtx_data),
	NETLAT_KRP_ATOMIC("__tcp_retransmit_skb", NETLAT_PROBE_TCP_RETRANS,
			  netlat_rtx_entry, netlat_rtx_ret, struct netlat_rtx_data),
	/* only where GCC split it (see netlat_rtx_entry) */
	{ .name = "__tcp_retransmit_skb.part.0",
	  .group = NETLAT_PROBE_TCP_RETRANS, .kind = NETLAT_KRETPROBE,
	  .entry = netlat_rtx_clone_entry, .ret = netlat_rtx_ret,
	  .data_size = sizeof(struct netlat_rtx_data), .atomic = true,
	  .optional = true },
	NETLAT_KRP_ATOMIC("tcp_rtx_synack", NETLAT_PROBE_TCP_RETRANS,
			  netlat_synack_entry, netlat_synack_ret,
			  struct request_sock *),
	NETLAT_KP_AT("tcp_ack", NETLAT_PROBE_TCP_ACK, netlat_ack_pre,
		     NETLAT_EVENTS_ONLY),
	NETLAT_TP_AT(net_dev_queue, NETLAT_PROBE_TCP_DEV, netlat_tp_dev_queue,
		     NETLAT_EVENTS_ONLY),
	/* the packet level's: armed while either of its groups is on */
	NETLAT_TP_AT(net_dev_queue,
		     NETLAT_PROBE_TCP_XMIT | NETLAT_PROBE_TCP_DEV,
		     netlat_tp_pkt_queue, NETLAT_PACKETS_ONLY),
	NETLAT_TP(net_dev_start_xmit, NETLAT_PROBE_TCP_DEV,
		  netlat_tp_start_xmit),
	/* the packet level frees a socket's slot in the packet table */
	NETLAT_TP_AT(tcp_destroy_sock, NETLAT_PROBE_TCP_XMIT,
		     netlat_tp_destroy_sock, NETLAT_PACKETS_ONLY),
	/* a symbol no kernel has: proves a missing probe is not fatal (tests) */
	{ .name = "netlat_no_such_symbol", .group = NETLAT_PROBE_TCP_PUSH,
	  .kind = NETLAT_KPROBE, .pre = netlat_push_one_pre, .test_only = true },
};

static struct netlat_family netlat_tcp_family = {
	.name = "tcp",
	.probes = netlat_tcp_probes,
	.nr_probes = ARRAY_SIZE(netlat_tcp_probes),
	.groups_on = netlat_tcp_groups_on,
	.level_set = netlat_tcp_level_set,
};

int netlat_tcp_init(void)
{
	return netlat_family_add(&netlat_tcp_family);
}

void netlat_tcp_exit(void)
{
	netlat_family_remove(&netlat_tcp_family);
	netlat_track_exit();
}
