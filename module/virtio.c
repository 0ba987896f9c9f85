// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_net queue records (NETLAT_PROBE_VIRTIO_TX, NETLAT_PROBE_VIRTIO_RX;
 * struct netlat_rec_virtio).
 *
 * virtio_net is a module: the registry attaches this family while it is
 * live (probes.h); the groups are available while it is loaded and can be
 * enabled before it loads and across a reload. The
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
#include <linux/notifier.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/siphash.h>
#include <linux/random.h>
#include <linux/percpu.h>
#include <linux/kprobes.h>
#include <linux/tracepoint.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <net/sock.h>
#include <trace/events/net.h>
#include <trace/events/napi.h>
#include "record.h"
#include "probes.h"
#include "filter.h"
#include "pkt.h"
#include "track.h"
#include "tracktbl.h"
#include "virtio.h"

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
 * segment's, or NULL; its cookie not computed), the segment's socket @sk
 * and the device @dev are what the event is known by; any may be NULL.
 */
static notrace struct netlat_rec_virtio *
nv_reserve(struct netlat_writer *w, u8 event, u64 group,
	   const struct netlat_flow *flow, const struct sock *sk,
	   const struct net_device *dev)
{
	struct netlat_rec_virtio *r;

	if (netlat_filter_on(group)) {
		/* @flow's cookie (a SipHash) is not computed yet */
		struct netlat_filter_in in = {
			.flow = flow, .sk = sk, .net = dev ? dev_net(dev) : NULL,
			.lazy_cookie = flow && sk,
		};

		if (!netlat_filter_keep(group, &in))
			return NULL;
	}
	r = netlat_reserve_zeroed(w, NETLAT_REC_VIRTIO, sizeof(*r));
	if (!r)
		return NULL;
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

/*
 * The packet level: a TCP packet's first segment is stamped with the
 * virtqueue it met (track.h) instead of a record of its own.
 */
static notrace void nv_xmit_stamp(const struct sk_buff *skb,
				  struct net_device *dev)
{
	struct netlat_track_vq_state st = { .queue = skb_get_queue_mapping(skb) };
	struct virtqueue *vq;
	u32 seq;

	if (!skb->sk || !sk_fullsock(skb->sk) ||
	    skb->sk->sk_protocol != IPPROTO_TCP ||
	    !netlat_track_starts(skb->sk, skb, &seq))
		return;
	vq = dev->dev.parent ?
		nv_find_vq(dev_to_virtio(dev->dev.parent), 2 * st.queue + 1) :
		NULL;
	if (vq) {
		st.num_free = READ_ONCE(vq->num_free);
		st.size = nv_vring_size(vq);
	}
	netlat_track_vq(skb->sk, seq, &st);
}
NOKPROBE_SYMBOL(nv_xmit_stamp);

/* start_xmit(skb, dev) */
static notrace int nv_xmit_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 0);
	struct net_device *dev = (void *)regs_get_kernel_argument(regs, 1);
	struct netlat_rec_virtio *r;
	struct netlat_writer w __uninitialized;
	const struct sock *sk = NULL;
	struct netlat_tcp_seg seg __uninitialized;
	struct virtqueue *vq;
	bool tcp;
	u16 q;

	if (!netlat_group_on(NETLAT_PROBE_VIRTIO_TX))
		return 0;
	if (netlat_tracking()) {
		nv_xmit_stamp(skb, dev);
		return 0;
	}
	tcp = netlat_parse_tcp(skb, &seg);
	if (tcp && skb->sk && sk_fullsock(skb->sk))
		sk = skb->sk;
	r = nv_reserve(&w, NETLAT_VIRTIO_XMIT, NETLAT_PROBE_VIRTIO_TX,
		       tcp ? &seg.flow : NULL, sk, dev);
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
		seg.flow.cookie = sk ? netlat_sk_id(sk) : 0;
		r->flow = seg.flow;
		r->seq = seg.seq;
		r->tcp_len = seg.payload;
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
	struct netlat_writer w __uninitialized;

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

/*
 * skb_xmit_done(vq). The interrupt names a virtqueue, not an skb (the
 * used buffers are reclaimed later, in virtio_net's private code), so the
 * packet level has no packet to stamp and writes nothing.
 */
static notrace int nv_xmit_done_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (netlat_tracking())
		return 0;
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
 * The NAPI whose virtnet_poll this CPU runs (its entry to napi:napi_poll
 * after it): receive_buf()'s own arguments are private driver structures.
 * NAPI polls do not nest on a CPU.
 */
static DEFINE_PER_CPU(struct napi_struct *, nv_poll_napi);

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

/*
 * virtnet_poll(napi, budget): the NAPI its receive_buf calls run under.
 * Its end is napi:napi_poll, which every caller of a poll function
 * traces just after it with the work done: a tracepoint, so no return
 * probe is needed (a kretprobe's handler would block the kprobes of the
 * interrupts that arrive while it runs).
 */
static notrace int nv_poll_pre(struct kprobe *p, struct pt_regs *regs)
{
	/* off: the group's end cleared every CPU's (nv_groups_off) */
	if (netlat_group_on(NETLAT_PROBE_VIRTIO_RX))
		this_cpu_write(nv_poll_napi,
			       (void *)regs_get_kernel_argument(regs, 0));
	return 0;
}
NOKPROBE_SYMBOL(nv_poll_pre);

/* napi:napi_poll(napi, work, budget): virtnet_poll's, if its NAPI */
static notrace void nv_napi_poll_tp(void *data, struct napi_struct *napi,
				    int work, int budget)
{
	struct netlat_rec_virtio *r;
	struct netlat_writer w __uninitialized;

	if (this_cpu_read(nv_poll_napi) != napi)
		return;
	this_cpu_write(nv_poll_napi, NULL);
	if (!netlat_group_on(NETLAT_PROBE_VIRTIO_RX))
		return;
	r = nv_reserve(&w, NETLAT_VIRTIO_POLL, NETLAT_PROBE_VIRTIO_RX, NULL,
		       NULL, napi->dev);
	if (!r)
		return;
	nv_fill_rx(r, napi->dev);
	r->budget = budget;
	r->work = work;
	netlat_commit(&w);
}
NOKPROBE_SYMBOL(nv_napi_poll_tp);

/* receive_buf(vi, rq, buf, len, ctx, xdp_xmit, stats) */
static notrace int nv_recv_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct napi_struct *napi = this_cpu_read(nv_poll_napi);
	struct net_device *dev = napi ? napi->dev : NULL;
	struct netlat_rec_virtio *r;
	struct netlat_writer w __uninitialized;

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
	struct netlat_writer w __uninitialized;
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

/* ---- the family, attached while virtio_net is live ---- */

/*
 * At the packet level only start_xmit is armed: it stamps a sent packet
 * with its virtqueue. The TX interrupt names no packet, and a received
 * packet's device point is its receive stamp (the rx group's netif_ns),
 * so the other hooks would give that level nothing but their cost.
 */
static const struct netlat_probe nv_probes[] = {
	NETLAT_KP(NV_MOD ":start_xmit", NETLAT_PROBE_VIRTIO_TX, nv_xmit_pre),
	NETLAT_KP_AT(NV_MOD ":skb_xmit_done", NETLAT_PROBE_VIRTIO_TX,
		     nv_xmit_done_pre, NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT(NV_MOD ":skb_recv_done", NETLAT_PROBE_VIRTIO_RX,
		     nv_recv_done_pre, NETLAT_EVENTS_ONLY),
	/* before receive_buf: it sets the per-CPU NAPI */
	NETLAT_KP_AT(NV_MOD ":virtnet_poll", NETLAT_PROBE_VIRTIO_RX,
		     nv_poll_pre, NETLAT_EVENTS_ONLY),
	NETLAT_TP_AT(napi_poll, NETLAT_PROBE_VIRTIO_RX, nv_napi_poll_tp,
		     NETLAT_EVENTS_ONLY),
	NETLAT_KP_AT(NV_MOD ":receive_buf", NETLAT_PROBE_VIRTIO_RX, nv_recv_pre,
		     NETLAT_EVENTS_ONLY),
	NETLAT_TP_AT(napi_gro_receive_entry, NETLAT_PROBE_VIRTIO_RX,
		     nv_gro_tp, NETLAT_EVENTS_ONLY),
};

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

/* Before the probes register: the virtqueue helpers they call. */
static int nv_attach(void)
{
	nv_vring_size = symbol_get(virtqueue_get_vring_size);
	nv_is_broken = symbol_get(virtqueue_is_broken);
	nv_get_vring = symbol_get(virtqueue_get_vring);
	if (!nv_vring_size || !nv_is_broken || !nv_get_vring) {
		nv_put_helpers();
		return -ENOENT;
	}
	return 0;
}

/*
 * No handler runs: a poll whose end went unseen (its group went off
 * meanwhile) leaves no NAPI behind for a receive_buf to read later.
 */
static void nv_forget_polls(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		per_cpu(nv_poll_napi, cpu) = NULL;
}

static void nv_groups_off(u64 groups)
{
	if (groups & NETLAT_PROBE_VIRTIO_RX)
		nv_forget_polls();
}

/*
 * A change of level switches virtnet_poll's hook and napi:napi_poll apart:
 * a poll that straddled it may have left its NAPI. Once the hits in
 * flight are done, none is left.
 */
static void nv_level_set(u32 level)
{
	synchronize_rcu();
	nv_forget_polls();
}

/* The probes are gone and no tracepoint handler still runs. */
static void nv_detach(void)
{
	nv_forget_polls();
	nv_put_helpers();
}

static bool nv_inited;

static struct netlat_family nv_family = {
	.name = "virtio_net",
	.module = NV_MOD,
	.probes = nv_probes,
	.nr_probes = ARRAY_SIZE(nv_probes),
	.attach = nv_attach,
	.detach = nv_detach,
	.groups_off = nv_groups_off,
	.level_set = nv_level_set,
};

int netlat_virtio_init(void)
{
	int err;

	get_random_bytes(&nv_dev_key, sizeof(nv_dev_key));
	err = register_netdevice_notifier(&nv_netdev_nb);
	if (err)
		return err;
	err = netlat_family_add(&nv_family);
	if (err)
		goto err_netdev;
	nv_inited = true;
	return 0;

err_netdev:
	unregister_netdevice_notifier(&nv_netdev_nb);
	return err;
}

void netlat_virtio_exit(void)
{
	if (!nv_inited)
		return;
	nv_inited = false;
	netlat_family_remove(&nv_family);
	unregister_netdevice_notifier(&nv_netdev_nb);
	memset(nv_map, 0, sizeof(nv_map));
}
