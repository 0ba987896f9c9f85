// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_net queue records (NETLAT_PROBE_VIRTIO_TX, NETLAT_PROBE_VIRTIO_RX;
 * struct netlat_rec_virtio).
 *
 * virtio_net is a module: its probes are registered when it becomes live
 * (module notifier) and unregistered when it goes; the groups are
 * available while it is loaded and stay enabled across a reload. The
 * virtqueue state is read only through the public virtio API (struct
 * virtqueue, struct virtio_device, the exported virtqueue_*() helpers,
 * resolved with symbol_get() so that netlat does not depend on
 * virtio_ring), never through virtio_net's private structures. The
 * net_device of a bare virtqueue (interrupt callbacks) comes from a small
 * table filled by a netdevice notifier: virtio device -> ifindex, for
 * netdevs whose parent is a virtio device bound to "virtio_net".
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/siphash.h>
#include <linux/random.h>
#include <linux/percpu.h>
#include <linux/kprobes.h>
#include <linux/tracepoint.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <net/ip.h>
#include <net/sock.h>
#include "netlat.h"
#include "probes.h"
#include "filter.h"

#define NV_MOD	"virtio_net"

/* ---- virtqueue helpers, resolved while virtio_net is attached ---- */

static typeof(&virtqueue_get_vring_size) nv_vring_size;
static typeof(&virtqueue_is_broken) nv_is_broken;
static typeof(&virtqueue_get_vring) nv_get_vring;

static siphash_key_t nv_dev_key;

/* ---- virtio device -> ifindex, written under RTNL, read locklessly ---- */

#define NV_MAP_SIZE	32
struct nv_map {
	const struct virtio_device *vdev;	/* NULL: free */
	const struct net_device *dev;
	int ifindex;
};
static struct nv_map nv_map[NV_MAP_SIZE];

static notrace int nv_ifindex(const struct virtio_device *vdev)
{
	unsigned int i;

	for (i = 0; i < NV_MAP_SIZE; i++)
		if (READ_ONCE(nv_map[i].vdev) == vdev)
			return READ_ONCE(nv_map[i].ifindex);
	return 0;
}
NOKPROBE_SYMBOL(nv_ifindex);

static notrace bool nv_known_dev(const struct net_device *dev)
{
	unsigned int i;

	for (i = 0; i < NV_MAP_SIZE; i++)
		if (READ_ONCE(nv_map[i].dev) == dev &&
		    READ_ONCE(nv_map[i].vdev))
			return true;
	return false;
}
NOKPROBE_SYMBOL(nv_known_dev);

static struct virtio_device *nv_netdev_vdev(struct net_device *dev)
{
	struct device *parent = dev->dev.parent;

	if (!parent || !parent->bus || strcmp(parent->bus->name, "virtio") ||
	    !parent->driver || strcmp(parent->driver->name, NV_MOD))
		return NULL;
	return dev_to_virtio(parent);
}

static void nv_map_del(const struct net_device *dev)
{
	unsigned int i;

	for (i = 0; i < NV_MAP_SIZE; i++) {
		if (nv_map[i].dev != dev)
			continue;
		WRITE_ONCE(nv_map[i].vdev, NULL);
		WRITE_ONCE(nv_map[i].dev, NULL);
	}
}

static int nv_netdev_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct virtio_device *vdev;
	unsigned int i;

	switch (event) {
	case NETDEV_REGISTER:
		vdev = nv_netdev_vdev(dev);
		if (!vdev)
			break;
		nv_map_del(dev);
		for (i = 0; i < NV_MAP_SIZE; i++) {
			if (nv_map[i].vdev)
				continue;
			WRITE_ONCE(nv_map[i].ifindex, dev->ifindex);
			WRITE_ONCE(nv_map[i].dev, dev);
			smp_store_release(&nv_map[i].vdev, vdev);
			break;
		}
		if (i == NV_MAP_SIZE)
			pr_info("%s: too many virtio_net devices, ifindex 0\n",
				dev->name);
		break;
	case NETDEV_UNREGISTER:
		nv_map_del(dev);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block nv_netdev_nb = {
	.notifier_call = nv_netdev_event,
};

/* ---- records ---- */

static notrace struct virtqueue *nv_find_vq(struct virtio_device *vdev,
					    unsigned int index)
{
	struct virtqueue *vq;

	list_for_each_entry(vq, &vdev->vqs, list)
		if (vq->index == index)
			return vq;
	return NULL;
}
NOKPROBE_SYMBOL(nv_find_vq);

/*
 * Reserve a record of @group unless the filters keep it out: @flow (a TCP
 * segment's, or NULL), the segment's socket @sk and the device @dev are
 * what the event is known by; any may be NULL.
 */
static notrace struct netlat_rec_virtio *
nv_reserve(struct netlat_writer *w, u8 event, u64 group,
	   const struct netlat_tcp_flow *flow, const struct sock *sk,
	   const struct net_device *dev)
{
	struct netlat_rec_virtio *r;

	if (netlat_filter_on(group)) {
		struct netlat_filter_in in = {
			.flow = flow, .sk = sk, .net = dev ? dev_net(dev) : NULL,
		};

		if (!netlat_filter_keep(group, &in))
			return NULL;
	}
	r = netlat_reserve(w, NETLAT_REC_VIRTIO, sizeof(*r));
	if (!r)
		return NULL;
	memset((void *)r + sizeof(r->hdr), 0, sizeof(*r) - sizeof(r->hdr));
	r->event = event;
	return r;
}
NOKPROBE_SYMBOL(nv_reserve);

static notrace void nv_fill_vq(struct netlat_rec_virtio *r,
			       struct virtqueue *vq)
{
	struct virtio_device *vdev = vq->vdev;

	r->dev_id = siphash_1u64((u64)(unsigned long)vdev, &nv_dev_key);
	r->vq_index = vq->index;
	r->queue = vq->index / 2;
	r->flags |= NETLAT_VIRTIO_VQ_VALID | NETLAT_VIRTIO_QUEUE_VALID;
	r->num_free = READ_ONCE(vq->num_free);
	r->num_max = vq->num_max;
	r->ring_size = nv_vring_size(vq);
	if (nv_is_broken(vq))
		r->flags |= NETLAT_VIRTIO_BROKEN;
	if (virtio_has_feature(vdev, VIRTIO_F_RING_PACKED)) {
		r->flags |= NETLAT_VIRTIO_PACKED;
	} else {
		const struct vring *vr = nv_get_vring(vq);

		r->avail_idx = virtio16_to_cpu(vdev, READ_ONCE(vr->avail->idx));
		r->used_idx = virtio16_to_cpu(vdev, READ_ONCE(vr->used->idx));
		r->flags |= NETLAT_VIRTIO_SPLIT_VALID;
	}
}
NOKPROBE_SYMBOL(nv_fill_vq);

/* A TCP segment as parsed from an outgoing skb's headers. */
struct nv_seg {
	struct netlat_tcp_flow flow;
	const struct sock *sk;
	u32 seq;
	u32 tcp_len;
};

/* Parse @skb's IP and TCP headers as tcp.c does; false if not TCP. */
static notrace bool nv_tcp_flow(struct nv_seg *s, const struct sk_buff *skb)
{
	int off = skb_network_offset(skb), thoff, hlen;
	struct netlat_tcp_flow *f = &s->flow;
	const struct tcphdr *th;
	struct tcphdr _th;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph;
		struct iphdr _iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (!iph || iph->protocol != IPPROTO_TCP || iph->ihl < 5 ||
		    (iph->frag_off & htons(IP_MF | IP_OFFSET)))
			return false;
		f->family = AF_INET;
		memcpy(f->saddr, &iph->saddr, 4);
		memcpy(f->daddr, &iph->daddr, 4);
		thoff = off + iph->ihl * 4;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h;
		struct ipv6hdr _ip6h;

		ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
		if (!ip6h || ip6h->nexthdr != IPPROTO_TCP)
			return false;
		f->family = AF_INET6;
		memcpy(f->saddr, &ip6h->saddr, 16);
		memcpy(f->daddr, &ip6h->daddr, 16);
		thoff = off + sizeof(*ip6h);
	} else {
		return false;
	}
	th = skb_header_pointer(skb, thoff, sizeof(_th), &_th);
	if (!th)
		return false;
	hlen = thoff + th->doff * 4;
	if (skb->sk && sk_fullsock(skb->sk)) {
		s->sk = skb->sk;
		f->cookie = netlat_sk_id(skb->sk);
	}
	f->sport = ntohs(th->source);
	f->dport = ntohs(th->dest);
	s->seq = ntohl(th->seq);
	s->tcp_len = skb->len > hlen ? skb->len - hlen : 0;
	return true;
}
NOKPROBE_SYMBOL(nv_tcp_flow);

/* start_xmit(skb, dev) */
static notrace int nv_xmit_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 0);
	struct net_device *dev = (void *)regs_get_kernel_argument(regs, 1);
	struct netlat_rec_virtio *r;
	struct netlat_writer w;
	struct virtqueue *vq;
	struct nv_seg seg = {};
	bool tcp;
	u16 q;

	if (!netlat_group_on(NETLAT_PROBE_VIRTIO_TX))
		return 0;
	tcp = nv_tcp_flow(&seg, skb);
	r = nv_reserve(&w, NETLAT_VIRTIO_XMIT, NETLAT_PROBE_VIRTIO_TX,
		       tcp ? &seg.flow : NULL, seg.sk, dev);
	if (!r)
		return 0;
	q = skb_get_queue_mapping(skb);
	vq = dev->dev.parent ?
		nv_find_vq(dev_to_virtio(dev->dev.parent), 2 * q + 1) : NULL;
	if (vq)
		nv_fill_vq(r, vq);
	r->queue = q;
	r->flags |= NETLAT_VIRTIO_QUEUE_VALID;
	r->ifindex = dev->ifindex;
	r->len = skb->len;
	r->skb_id = netlat_skb_id(skb);
	if (tcp) {
		r->flow = seg.flow;
		r->seq = seg.seq;
		r->tcp_len = seg.tcp_len;
		r->flags |= NETLAT_VIRTIO_FLOW_VALID;
	}
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(nv_xmit_pre);

static notrace void nv_vq_event(struct pt_regs *regs, u64 group, u8 event)
{
	struct virtqueue *vq = (void *)regs_get_kernel_argument(regs, 0);
	struct netlat_rec_virtio *r;
	struct netlat_writer w;

	if (!netlat_group_on(group))
		return;
	/* a bare virtqueue: no device to read a namespace from */
	r = nv_reserve(&w, event, group, NULL, NULL, NULL);
	if (!r)
		return;
	nv_fill_vq(r, vq);
	r->ifindex = nv_ifindex(vq->vdev);
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(nv_vq_event);

/* skb_xmit_done(vq) */
static notrace int nv_xmit_done_pre(struct kprobe *p, struct pt_regs *regs)
{
	nv_vq_event(regs, NETLAT_PROBE_VIRTIO_TX, NETLAT_VIRTIO_XMIT_DONE);
	return 0;
}
NOKPROBE_SYMBOL(nv_xmit_done_pre);

/* skb_recv_done(rvq) */
static notrace int nv_recv_done_pre(struct kprobe *p, struct pt_regs *regs)
{
	nv_vq_event(regs, NETLAT_PROBE_VIRTIO_RX, NETLAT_VIRTIO_RECV_DONE);
	return 0;
}
NOKPROBE_SYMBOL(nv_recv_done_pre);

/*
 * The device whose RX NAPI context this CPU runs (virtnet_poll entry to
 * return): receive_buf()'s own arguments are private driver structures.
 * NAPI polls do not nest on a CPU.
 */
static DEFINE_PER_CPU(struct net_device *, nv_poll_dev);

/* RX queue state when the device has one queue pair (see the uapi). */
static notrace void nv_fill_rx(struct netlat_rec_virtio *r,
			       struct net_device *dev)
{
	struct virtqueue *vq;

	r->ifindex = dev->ifindex;
	if (dev->real_num_rx_queues != 1 || !dev->dev.parent)
		return;
	vq = nv_find_vq(dev_to_virtio(dev->dev.parent), 0);
	if (vq)
		nv_fill_vq(r, vq);
}
NOKPROBE_SYMBOL(nv_fill_rx);

struct nv_poll_data {
	struct napi_struct *napi;
	int budget;
};

/* virtnet_poll(napi, budget) */
static notrace int nv_poll_entry(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
{
	struct nv_poll_data *d = (void *)ri->data;

	d->napi = (void *)regs_get_kernel_argument(regs, 0);
	d->budget = regs_get_kernel_argument(regs, 1);
	this_cpu_write(nv_poll_dev, d->napi->dev);
	return 0;
}
NOKPROBE_SYMBOL(nv_poll_entry);

static notrace int nv_poll_ret(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct nv_poll_data *d = (void *)ri->data;
	struct netlat_rec_virtio *r;
	struct netlat_writer w;

	this_cpu_write(nv_poll_dev, NULL);
	if (!netlat_group_on(NETLAT_PROBE_VIRTIO_RX))
		return 0;
	r = nv_reserve(&w, NETLAT_VIRTIO_POLL, NETLAT_PROBE_VIRTIO_RX, NULL,
		       NULL, d->napi->dev);
	if (!r)
		return 0;
	nv_fill_rx(r, d->napi->dev);
	r->budget = d->budget;
	r->work = (int)regs_return_value(regs);
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(nv_poll_ret);

/* receive_buf(vi, rq, buf, len, ctx, xdp_xmit, stats) */
static notrace int nv_recv_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct net_device *dev = this_cpu_read(nv_poll_dev);
	struct netlat_rec_virtio *r;
	struct netlat_writer w;

	if (!netlat_group_on(NETLAT_PROBE_VIRTIO_RX))
		return 0;
	r = nv_reserve(&w, NETLAT_VIRTIO_RECV, NETLAT_PROBE_VIRTIO_RX, NULL,
		       NULL, dev);
	if (!r)
		return 0;
	if (dev)
		nv_fill_rx(r, dev);
	r->len = regs_get_kernel_argument(regs, 3);
	netlat_commit(&w);
	return 0;
}
NOKPROBE_SYMBOL(nv_recv_pre);

/* net:napi_gro_receive_entry(skb), virtio_net devices only */
static notrace void nv_gro_tp(void *data, const struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;
	struct netlat_rec_virtio *r;
	struct netlat_writer w;
	struct virtqueue *vq;

	if (!netlat_group_on(NETLAT_PROBE_VIRTIO_RX) || !dev ||
	    !nv_known_dev(dev))
		return;
	r = nv_reserve(&w, NETLAT_VIRTIO_GRO, NETLAT_PROBE_VIRTIO_RX, NULL,
		       NULL, dev);
	if (!r)
		return;
	r->ifindex = dev->ifindex;
	if (skb_rx_queue_recorded(skb)) {
		r->queue = skb_get_rx_queue(skb);
		vq = nv_find_vq(dev_to_virtio(dev->dev.parent), 2 * r->queue);
		if (vq)
			nv_fill_vq(r, vq);
		r->flags |= NETLAT_VIRTIO_QUEUE_VALID;
	}
	r->len = skb->len;
	r->skb_id = netlat_skb_id(skb);
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(nv_gro_tp);

/* ---- probe table, attached while virtio_net is live ---- */

enum nv_kind { NV_KP, NV_KRP, NV_TP };

struct nv_probe {
	const char *name;
	u64 group;
	enum nv_kind kind;
	kprobe_pre_handler_t pre;
	kretprobe_handler_t entry, ret;
	size_t data_size;
	void *tp_fn;
	struct kprobe kp;
	struct kretprobe krp;
	struct tracepoint *tp;
	bool avail, on;
};

static struct nv_probe nv_probes[] = {
	{ .name = NV_MOD ":start_xmit", .group = NETLAT_PROBE_VIRTIO_TX,
	  .kind = NV_KP, .pre = nv_xmit_pre },
	{ .name = NV_MOD ":skb_xmit_done", .group = NETLAT_PROBE_VIRTIO_TX,
	  .kind = NV_KP, .pre = nv_xmit_done_pre },
	{ .name = NV_MOD ":skb_recv_done", .group = NETLAT_PROBE_VIRTIO_RX,
	  .kind = NV_KP, .pre = nv_recv_done_pre },
	/* before receive_buf: it sets the per-CPU device */
	{ .name = NV_MOD ":virtnet_poll", .group = NETLAT_PROBE_VIRTIO_RX,
	  .kind = NV_KRP, .entry = nv_poll_entry, .ret = nv_poll_ret,
	  .data_size = sizeof(struct nv_poll_data) },
	{ .name = NV_MOD ":receive_buf", .group = NETLAT_PROBE_VIRTIO_RX,
	  .kind = NV_KP, .pre = nv_recv_pre },
	{ .name = "napi_gro_receive_entry", .group = NETLAT_PROBE_VIRTIO_RX,
	  .kind = NV_TP, .tp_fn = nv_gro_tp },
};

static DEFINE_MUTEX(nv_lock);
static bool nv_inited, nv_attached;
static u64 nv_want;			/* groups enabled (registry's view) */
static u64 nv_avail, nv_partial;	/* READ_ONCE outside nv_lock */
static u64 nv_missed_gone;		/* nmissed of detached probes */

static void nv_find_tp(struct tracepoint *tp, void *priv)
{
	struct nv_probe *p = priv;

	if (!p->tp && !strcmp(tp->name, p->name))
		p->tp = tp;
}

static int nv_register(struct nv_probe *p)
{
	memset(&p->kp, 0, sizeof(p->kp));
	memset(&p->krp, 0, sizeof(p->krp));
	switch (p->kind) {
	case NV_KP:
		p->kp.symbol_name = p->name;
		p->kp.pre_handler = p->pre;
		p->kp.flags = KPROBE_FLAG_DISABLED;
		return register_kprobe(&p->kp);
	case NV_KRP:
		p->krp.kp.symbol_name = p->name;
		p->krp.kp.flags = KPROBE_FLAG_DISABLED;
		p->krp.entry_handler = p->entry;
		p->krp.handler = p->ret;
		p->krp.data_size = p->data_size;
		p->krp.maxactive = max_t(int, 64, 8 * num_possible_cpus());
		return register_kretprobe(&p->krp);
	case NV_TP:
		if (!p->tp)
			for_each_kernel_tracepoint(nv_find_tp, p);
		return p->tp ? 0 : -ENOENT;
	}
	return -EINVAL;
}

static int nv_switch_one(struct nv_probe *p, bool on)
{
	int err = 0;

	if (!p->avail || p->on == on)
		return 0;
	switch (p->kind) {
	case NV_KP:
		err = on ? enable_kprobe(&p->kp) : disable_kprobe(&p->kp);
		break;
	case NV_KRP:
		err = on ? enable_kretprobe(&p->krp) :
			   disable_kretprobe(&p->krp);
		break;
	case NV_TP:
		err = on ? tracepoint_probe_register(p->tp, p->tp_fn, NULL) :
			   tracepoint_probe_unregister(p->tp, p->tp_fn, NULL);
		break;
	}
	if (!err)
		p->on = on;
	else
		pr_warn("%s %s: %d\n", on ? "enabling" : "disabling", p->name,
			err);
	return err;
}

static u64 nv_missed(const struct nv_probe *p)
{
	if (!p->avail)
		return 0;
	if (p->kind == NV_KP)
		return p->kp.nmissed;
	if (p->kind == NV_KRP)
		return p->krp.nmissed + p->krp.kp.nmissed;
	return 0;
}

/* Caller holds nv_lock. */
static int nv_apply(void)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(nv_probes); i++) {
		struct nv_probe *p = &nv_probes[i];
		int e = nv_switch_one(p, nv_attached && (p->group & nv_want));

		if (e && !err)
			err = e;
	}
	return err;
}

static void nv_put_helpers(void)
{
	if (nv_vring_size)
		symbol_put(virtqueue_get_vring_size);
	if (nv_is_broken)
		symbol_put(virtqueue_is_broken);
	if (nv_get_vring)
		symbol_put(virtqueue_get_vring);
	nv_vring_size = NULL;
	nv_is_broken = NULL;
	nv_get_vring = NULL;
}

/* Caller holds nv_lock. Registers the probes on a live virtio_net. */
static void nv_attach(void)
{
	u64 avail = 0, partial = 0;
	unsigned int i;

	if (nv_attached)
		return;
	nv_vring_size = symbol_get(virtqueue_get_vring_size);
	nv_is_broken = symbol_get(virtqueue_is_broken);
	nv_get_vring = symbol_get(virtqueue_get_vring);
	if (!nv_vring_size || !nv_is_broken || !nv_get_vring) {
		nv_put_helpers();
		return;
	}
	for (i = 0; i < ARRAY_SIZE(nv_probes); i++) {
		struct nv_probe *p = &nv_probes[i];
		int err = nv_register(p);

		if (err) {
			partial |= p->group;
			continue;
		}
		p->avail = true;
		if (p->kind != NV_TP)
			avail |= p->group;
	}
	if (!avail) {
		/* virtio_net is not (or no longer) there */
		for (i = 0; i < ARRAY_SIZE(nv_probes); i++)
			nv_probes[i].avail = false;
		nv_put_helpers();
		return;
	}
	nv_attached = true;
	WRITE_ONCE(nv_partial, partial & avail);
	WRITE_ONCE(nv_avail, avail);
	nv_apply();
	pr_info("attached to " NV_MOD " (groups 0x%llx)\n", avail);
}

/* Caller holds nv_lock. */
static void nv_detach(void)
{
	unsigned int i;

	if (!nv_attached)
		return;
	WRITE_ONCE(nv_avail, 0);
	WRITE_ONCE(nv_partial, 0);
	for (i = 0; i < ARRAY_SIZE(nv_probes); i++) {
		struct nv_probe *p = &nv_probes[i];

		if (!p->avail)
			continue;
		switch (p->kind) {
		case NV_KP:
			unregister_kprobe(&p->kp);
			break;
		case NV_KRP:
			unregister_kretprobe(&p->krp);
			break;
		case NV_TP:
			if (p->on)
				tracepoint_probe_unregister(p->tp, p->tp_fn,
							    NULL);
			break;
		}
		nv_missed_gone += nv_missed(p);
		p->avail = false;
		p->on = false;
	}
	/* no tracepoint handler still uses the helpers */
	tracepoint_synchronize_unregister();
	nv_attached = false;
	nv_put_helpers();
	pr_info("detached from " NV_MOD "\n");
}

/*
 * Attach when virtio_net is live (its init has run), detach when it
 * goes. The kernel's kprobe layer itself only disarms ("gone") kprobes of
 * a departing module; they stay registered until unregistered here, and
 * a kprobe never pins the module it probes.
 */
static int nv_module_event(struct notifier_block *nb, unsigned long state,
			   void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, NV_MOD))
		return NOTIFY_DONE;
	mutex_lock(&nv_lock);
	if (state == MODULE_STATE_LIVE)
		nv_attach();
	else if (state == MODULE_STATE_GOING)
		nv_detach();
	mutex_unlock(&nv_lock);
	return NOTIFY_DONE;
}

static struct notifier_block nv_module_nb = {
	.notifier_call = nv_module_event,
};

int netlat_virtio_switch(u64 enable)
{
	int err;

	mutex_lock(&nv_lock);
	nv_want = enable;
	err = nv_apply();
	mutex_unlock(&nv_lock);
	return err;
}

u64 netlat_virtio_available(void)
{
	return READ_ONCE(nv_avail);
}

u64 netlat_virtio_partial(void)
{
	return READ_ONCE(nv_partial);
}

u64 netlat_virtio_nmissed(void)
{
	u64 n;
	unsigned int i;

	mutex_lock(&nv_lock);
	n = nv_missed_gone;
	for (i = 0; i < ARRAY_SIZE(nv_probes); i++)
		n += nv_missed(&nv_probes[i]);
	mutex_unlock(&nv_lock);
	return n;
}

int netlat_virtio_init(void)
{
	int err;

	get_random_bytes(&nv_dev_key, sizeof(nv_dev_key));
	err = register_netdevice_notifier(&nv_netdev_nb);
	if (err)
		return err;
	err = register_module_notifier(&nv_module_nb);
	if (err) {
		unregister_netdevice_notifier(&nv_netdev_nb);
		return err;
	}
	nv_inited = true;
	/* virtio_net may be loaded already: then its symbols resolve */
	mutex_lock(&nv_lock);
	nv_attach();
	mutex_unlock(&nv_lock);
	return 0;
}

void netlat_virtio_exit(void)
{
	if (!nv_inited)
		return;
	unregister_module_notifier(&nv_module_nb);
	mutex_lock(&nv_lock);
	nv_want = 0;
	nv_detach();
	mutex_unlock(&nv_lock);
	unregister_netdevice_notifier(&nv_netdev_nb);
	memset(nv_map, 0, sizeof(nv_map));
	nv_inited = false;
}
