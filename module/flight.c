// SPDX-License-Identifier: GPL-2.0
/*
 * Flight recorder: snapshots of the rings and the triggers that freeze
 * them (NETLAT_IOC_SNAPSHOT, NETLAT_IOC_TRIGGERS).
 *
 * Snapshot states (netlat_snap.state):
 *   EMPTY -> PENDING    a trigger fired (any context: cmpxchg), or TAKE
 *                       began (under netlat_lock until it ends)
 *   PENDING -> FROZEN   the copy is done (after the post window, or TAKE)
 *   PENDING -> CANCEL -> EMPTY   RELEASE of a pending trigger
 *   FROZEN -> EMPTY     RELEASE, not while mapped
 *
 * Locking (Documentation/design.rst): every change of state but the
 * trigger's EMPTY -> PENDING under netlat_lock; the buffer pointer, FROZEN
 * and the mapping count under netlat_map_lock too.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/cpu.h>
#include <linux/smp.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/workqueue.h>
#include <linux/uaccess.h>
#include <linux/kprobes.h>
#include <linux/timekeeping.h>
#include <linux/error-injection.h>
#include "ring.h"
#include "snapcpu.h"
#include "flight.h"
#include "probes.h"
#include "uarg.h"

/* Internal: RELEASE is cancelling a pending trigger; reported as PENDING. */
#define NETLAT_SNAP_CANCEL	3

/* Pages mapped into the kernel (vmap) and, when frozen, into userspace. */
struct netlat_snapbuf {
	void *va;
	struct page **pages;
	unsigned int nr_pages;
};

/* What fired: written only by whoever moved the state EMPTY -> PENDING. */
struct netlat_trig_hit {
	u32 bit;
	u16 type;
	u16 cpu;
	u64 seq;
	u64 ts;
	u32 pre_ms;
	u32 post_ms;
};

static struct {
	atomic_t state;
	struct netlat_snapbuf *buf;
	u64 bytes;		/* of the frozen snapshot */
	u64 id;			/* of the frozen snapshot, 0 if none */
	u64 last_id;
	u64 taken;
	atomic64_t missed;
	atomic64_t fired;
	atomic_t nr_maps;	/* userspace mappings of the snapshot */
	struct netlat_trig_hit hit;
	struct irq_work irq_work;
	struct delayed_work work;
} netlat_snap;

/*
 * Trigger settings. Changed only with netlat_trig_armed at 0 and every
 * writer that saw it nonzero gone (synchronize_rcu), then armed again
 * with a release: the write path reads them after an acquiring load.
 */
u32 netlat_trig_armed;
static struct {
	u32 retrans_kinds;
	u64 latency_ns;
	u64 rx_wait_ns;
	u32 pre_ms;
	u32 post_ms;
	u32 tag_len;
	u8 tag[NETLAT_TRIG_TAG_MAX];
} netlat_trig;

/* ---- the buffer ---- */

static u64 netlat_snap_capacity(u64 ring_bytes)
{
	return PAGE_ALIGN(sizeof(struct netlat_rec_stream) +
			  sizeof(struct netlat_rec_snapshot) +
			  (u64)nr_cpu_ids * (sizeof(struct netlat_rec_snap_cpu) +
					     ring_bytes));
}

void netlat_snapbuf_free(struct netlat_snapbuf *sb)
{
	unsigned int i;

	if (!sb)
		return;
	if (sb->va)
		vunmap(sb->va);
	for (i = 0; i < sb->nr_pages; i++) {
		__free_page(sb->pages[i]);
		cond_resched();
	}
	kvfree(sb->pages);
	kfree(sb);
}

static struct netlat_snapbuf *netlat_snapbuf_alloc(u64 capacity)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NOWARN |
			  __GFP_RETRY_MAYFAIL;
	u64 nr = capacity >> PAGE_SHIFT;
	struct netlat_snapbuf *sb;
	struct page *page;

	/* Like the rings: refuse what the machine cannot spare, never OOM. */
	if (nr > totalram_pages() / 2 || nr > INT_MAX)
		return NULL;
	sb = kzalloc(sizeof(*sb), GFP_KERNEL);
	if (!sb)
		return NULL;
	sb->pages = kvcalloc(nr, sizeof(*sb->pages), gfp);
	if (!sb->pages)
		goto err;
	while (sb->nr_pages < nr) {
		page = alloc_page(gfp | __GFP_ZERO);
		if (!page)
			goto err;
		sb->pages[sb->nr_pages++] = page;
		if (fatal_signal_pending(current))
			goto err;
		cond_resched();
	}
	sb->va = vmap(sb->pages, nr, VM_MAP, PAGE_KERNEL);
	if (!sb->va)
		goto err;
	return sb;
err:
	netlat_snapbuf_free(sb);
	return NULL;
}

static u64 netlat_snapbuf_bytes(const struct netlat_snapbuf *sb)
{
	return sb ? (u64)sb->nr_pages << PAGE_SHIFT : 0;
}

u64 netlat_snap_mem_bytes(void)
{
	lockdep_assert_held(&netlat_lock);
	return netlat_snapbuf_bytes(netlat_snap.buf);
}

/* Allocated lazily, in process context, under netlat_lock. */
static int netlat_snap_ensure_buf(void)
{
	struct netlat_snapbuf *sb;

	lockdep_assert_held(&netlat_lock);
	if (netlat_snap.buf)
		return 0;
	sb = netlat_snapbuf_alloc(netlat_snap_capacity(netlat_rings_locked()->bytes));
	if (!sb)
		return -ENOMEM;
	mutex_lock(&netlat_map_lock);
	netlat_snap.buf = sb;
	mutex_unlock(&netlat_map_lock);
	return 0;
}

/*
 * Under netlat_lock: an idle flight recorder (nothing held, nothing armed)
 * keeps no buffer. EMPTY means unmapped: RELEASE refuses while mapped.
 */
static void netlat_snap_trim(void)
{
	struct netlat_snapbuf *sb;

	lockdep_assert_held(&netlat_lock);
	if (atomic_read(&netlat_snap.state) != NETLAT_SNAP_EMPTY ||
	    READ_ONCE(netlat_trig_armed) || !netlat_snap.buf)
		return;
	mutex_lock(&netlat_map_lock);
	sb = netlat_snap.buf;
	netlat_snap.buf = NULL;
	mutex_unlock(&netlat_map_lock);
	netlat_snapbuf_free(sb);
}

/*
 * Ring resize (stopped, under netlat_lock): a buffer for the new size if
 * one exists now. -EBUSY while a snapshot is pending or frozen: its bytes
 * live in the buffer. @sb is NULL if there is nothing to replace.
 */
noinline int netlat_snap_prepare_resize(u64 ring_bytes,
					struct netlat_snapbuf **sb)
{
	lockdep_assert_held(&netlat_lock);
	*sb = NULL;
	if (atomic_read(&netlat_snap.state) != NETLAT_SNAP_EMPTY)
		return -EBUSY;
	if (!netlat_snap.buf)
		return 0;
	*sb = netlat_snapbuf_alloc(netlat_snap_capacity(ring_bytes));
	return *sb ? 0 : -ENOMEM;
}

ALLOW_ERROR_INJECTION(netlat_snap_prepare_resize, ERRNO);

/* Under netlat_lock and netlat_map_lock, nothing mapped: the old buffer. */
struct netlat_snapbuf *netlat_snap_swap_buf(struct netlat_snapbuf *sb)
{
	struct netlat_snapbuf *old = netlat_snap.buf;

	lockdep_assert_held(&netlat_map_lock);
	if (!sb)
		return NULL;
	netlat_snap.buf = sb;
	return old;
}

/* ---- the copy ---- */

/*
 * Fill the buffer with a snapshot stream. Under netlat_lock, with the
 * state PENDING on behalf of the caller. @hit is NULL for TAKE.
 */
static int netlat_snap_take(const struct netlat_trig_hit *hit)
{
	struct netlat_rings *rs = netlat_rings_locked();
	struct netlat_snapbuf *sb = netlat_snap.buf;
	u64 start_ns = 0;
	struct netlat_rec_snapshot *snap;
	unsigned int cpu;
	u64 cap, off;
	int err = 0;

	lockdep_assert_held(&netlat_lock);
	cap = netlat_snapbuf_bytes(sb);
	if (cap < netlat_snap_capacity(rs->bytes))
		return -ENOMEM;

	netlat_fill_stream_hdr(sb->va, rs, netlat_probes_available());
	off = sizeof(struct netlat_rec_stream);
	snap = sb->va + off;
	memset(snap, 0, sizeof(*snap));
	/* Frozen when the copy of the first CPU begins. */
	netlat_init_hdr(&snap->hdr, NETLAT_REC_SNAPSHOT, sizeof(*snap),
			raw_smp_processor_id(), ktime_get_mono_fast_ns());
	snap->mode = netlat_mode;
	snap->reason = NETLAT_SNAP_MANUAL;
	if (hit) {
		u64 pre_ns = (u64)hit->pre_ms * NSEC_PER_MSEC;

		snap->reason = NETLAT_SNAP_TRIGGER;
		snap->trigger = hit->bit;
		snap->trig_type = hit->type;
		snap->trig_cpu = hit->cpu;
		snap->trig_seq = hit->seq;
		snap->trig_ts_ns = hit->ts;
		if (pre_ns && hit->ts > pre_ns)
			snap->start_ns = hit->ts - pre_ns;
	}
	start_ns = snap->start_ns;
	off += sizeof(*snap);

	/* CPUs neither come nor go between the online test and the copy. */
	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		/* Cannot happen with the capacity checked above. */
		if (cap - off < sizeof(struct netlat_rec_snap_cpu)) {
			err = -ENOSPC;
			break;
		}
		off += netlat_snapcpu_copy(rs, cpu, sb->va + off, cap - off,
					   start_ns);
		cond_resched();
	}
	cpus_read_unlock();
	if (err)
		return err;

	snap->bytes = off;
	snap->id = ++netlat_snap.last_id;
	netlat_snap.bytes = off;
	netlat_snap.id = snap->id;
	netlat_snap.taken++;
	return 0;
}

/* Under netlat_lock, after a successful copy. */
static void netlat_snap_freeze(void)
{
	lockdep_assert_held(&netlat_lock);
	mutex_lock(&netlat_map_lock);
	atomic_set(&netlat_snap.state, NETLAT_SNAP_FROZEN);
	mutex_unlock(&netlat_map_lock);
}

static void netlat_snap_work_fn(struct work_struct *work)
{
	struct netlat_trig_hit hit;
	bool frozen = false;
	u64 end, now;

	/*
	 * Jiffies can lag the monotonic clock (a vCPU held up by its host):
	 * the window is post_ms of record time, so wait out what is left.
	 */
	end = READ_ONCE(netlat_snap.hit.ts) +
	      (u64)READ_ONCE(netlat_snap.hit.post_ms) * NSEC_PER_MSEC;
	now = ktime_get_mono_fast_ns();
	if (atomic_read(&netlat_snap.state) == NETLAT_SNAP_PENDING &&
	    now < end) {
		schedule_delayed_work(&netlat_snap.work,
				      nsecs_to_jiffies(end - now) + 1);
		return;
	}

	mutex_lock(&netlat_lock);
	/* PENDING here is the trigger's: a TAKE holds netlat_lock throughout. */
	if (atomic_read(&netlat_snap.state) == NETLAT_SNAP_PENDING) {
		hit = netlat_snap.hit;
		if (!netlat_snap_take(&hit)) {
			netlat_snap_freeze();
			frozen = true;
		} else {
			atomic_set(&netlat_snap.state, NETLAT_SNAP_EMPTY);
			netlat_snap_trim();
		}
	}
	mutex_unlock(&netlat_lock);
	if (frozen)
		netlat_wake_pri();
}

/* Hard interrupt context: only start the post window. */
static void netlat_trig_irq_work_fn(struct irq_work *iw)
{
	/* +1: the jiffy already begun must not shorten the window. */
	schedule_delayed_work(&netlat_snap.work,
			      msecs_to_jiffies(netlat_snap.hit.post_ms) + 1);
}

/* ---- the write path: any context, interrupts off ---- */

static void netlat_trig_fire(u32 bit, const struct netlat_rec_hdr *h)
{
	struct netlat_trig_hit *hit = &netlat_snap.hit;

	atomic64_inc(&netlat_snap.fired);
	if (atomic_cmpxchg(&netlat_snap.state, NETLAT_SNAP_EMPTY,
			   NETLAT_SNAP_PENDING) != NETLAT_SNAP_EMPTY) {
		atomic64_inc(&netlat_snap.missed);
		return;
	}
	hit->bit = bit;
	hit->type = h->type;
	hit->cpu = h->cpu;
	hit->seq = h->seq;
	hit->ts = h->ts_ns;
	hit->pre_ms = netlat_trig.pre_ms;
	hit->post_ms = netlat_trig.post_ms;
	/* Never wake or queue work from here: this may be any context. */
	irq_work_queue(&netlat_snap.irq_work);
}
NOKPROBE_SYMBOL(netlat_trig_fire);

/* The record netlat_commit() just stored, with triggers armed. */
void netlat_trig_check(struct netlat_writer *w, u32 armed)
{
	const struct netlat_rec_hdr *h = w->rec;
	u32 bit = 0;

	/* Pairs with the release that armed: the settings are in place. */
	smp_rmb();
	switch (h->type) {
	case NETLAT_REC_TCP_RETRANS: {
		const struct netlat_rec_tcp_retrans *rt = w->rec;

		if ((armed & NETLAT_TRIG_RETRANS_FAIL) && rt->ret)
			bit = NETLAT_TRIG_RETRANS_FAIL;
		else if ((armed & NETLAT_TRIG_RETRANS_KIND) && rt->kind < 32 &&
			 (netlat_trig.retrans_kinds & BIT(rt->kind)))
			bit = NETLAT_TRIG_RETRANS_KIND;
		break;
	}
	case NETLAT_REC_TCP_ACK: {
		const struct netlat_rec_tcp_ack *ack = w->rec;

		if ((armed & NETLAT_TRIG_LATENCY) &&
		    ack->xmit_ack_ns >= netlat_trig.latency_ns)
			bit = NETLAT_TRIG_LATENCY;
		break;
	}
	case NETLAT_REC_TCP_PKT: {
		const struct netlat_rec_tcp_pkt *pkt = w->rec;

		if ((armed & NETLAT_TRIG_LATENCY) &&
		    (pkt->flags & NETLAT_PKT_ACKED) &&
		    pkt->end_ns - pkt->xmit_ns >= netlat_trig.latency_ns)
			bit = NETLAT_TRIG_LATENCY;
		break;
	}
	case NETLAT_REC_RX_PKT: {
		const struct netlat_rec_rx_pkt *pkt = w->rec;
		const u32 both = NETLAT_RXP_QUEUED | NETLAT_RXP_COPIED;

		if ((armed & NETLAT_TRIG_RX_WAIT) &&
		    (pkt->flags & both) == both &&
		    pkt->end_ns - pkt->queue_ns >= netlat_trig.rx_wait_ns)
			bit = NETLAT_TRIG_RX_WAIT;
		break;
	}
	case NETLAT_REC_RX_COPY: {
		const struct netlat_rec_rx_copy *c = w->rec;

		if ((armed & NETLAT_TRIG_RX_WAIT) && c->wait_ns &&
		    c->wait_ns >= netlat_trig.rx_wait_ns)
			bit = NETLAT_TRIG_RX_WAIT;
		break;
	}
	case NETLAT_REC_MARKER: {
		const struct netlat_rec_marker *m = w->rec;
		u32 len = netlat_trig.tag_len;

		if ((armed & NETLAT_TRIG_MARKER) && m->len >= len &&
		    !memcmp(m->data, netlat_trig.tag, len))
			bit = NETLAT_TRIG_MARKER;
		break;
	}
	}
	if (bit)
		netlat_trig_fire(bit, h);
}
NOKPROBE_SYMBOL(netlat_trig_check);

/* ---- RELEASE, TAKE, READ ---- */

static int netlat_snap_release(void)
{
	int state, err = 0;

	mutex_lock(&netlat_lock);
	mutex_lock(&netlat_map_lock);
	state = atomic_read(&netlat_snap.state);
	if (state == NETLAT_SNAP_FROZEN) {
		if (atomic_read(&netlat_snap.nr_maps)) {
			err = -EBUSY;
		} else {
			atomic_set(&netlat_snap.state, NETLAT_SNAP_EMPTY);
			netlat_snap.bytes = 0;
			netlat_snap.id = 0;
		}
	} else if (state == NETLAT_SNAP_PENDING) {
		/* Triggers miss from now on; the work, if it runs, does nothing. */
		atomic_set(&netlat_snap.state, NETLAT_SNAP_CANCEL);
	}
	mutex_unlock(&netlat_map_lock);
	if (!err)
		netlat_snap_trim();
	mutex_unlock(&netlat_lock);
	if (state != NETLAT_SNAP_PENDING && state != NETLAT_SNAP_CANCEL)
		return err;

	/*
	 * Not under netlat_lock: the work takes it. The trigger that won the
	 * cmpxchg may still be on its way to irq_work_queue(): it runs with
	 * interrupts off, so synchronize_rcu() waits for it. Then the
	 * irq_work, which queues the delayed work.
	 */
	synchronize_rcu();
	irq_work_sync(&netlat_snap.irq_work);
	cancel_delayed_work_sync(&netlat_snap.work);
	mutex_lock(&netlat_lock);
	atomic_cmpxchg(&netlat_snap.state, NETLAT_SNAP_CANCEL, NETLAT_SNAP_EMPTY);
	netlat_snap_trim();
	mutex_unlock(&netlat_lock);
	return 0;
}

static int netlat_snap_take_manual(void)
{
	int err;

	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	err = netlat_snap_ensure_buf();
	if (err)
		goto out;
	err = -EBUSY;
	if (atomic_cmpxchg(&netlat_snap.state, NETLAT_SNAP_EMPTY,
			   NETLAT_SNAP_PENDING) != NETLAT_SNAP_EMPTY)
		goto out;
	err = netlat_snap_take(NULL);
	if (err) {
		atomic_set(&netlat_snap.state, NETLAT_SNAP_EMPTY);
		netlat_snap_trim();
		goto out;
	}
	netlat_snap_freeze();
out:
	mutex_unlock(&netlat_lock);
	if (!err)
		netlat_wake_pri();
	return err;
}

long netlat_ioc_snapshot(struct netlat_snap_reader *sr, void __user *uarg)
{
	const u32 known = NETLAT_SNAPSHOT_RELEASE | NETLAT_SNAPSHOT_TAKE |
			  NETLAT_SNAPSHOT_READ;
	struct netlat_snapshot s;
	u32 usize;
	int err, state;

	err = netlat_get_arg_resv(s, NETLAT_SNAPSHOT_SIZE_VER0, known, reserved,
				  uarg, &usize);
	if (err)
		return err;
	if ((s.flags & (NETLAT_SNAPSHOT_RELEASE | NETLAT_SNAPSHOT_TAKE)) &&
	    !netlat_may_trace())
		return -EPERM;
	if (s.flags & NETLAT_SNAPSHOT_RELEASE) {
		err = netlat_snap_release();
		if (err)
			return err;
	}
	if (s.flags & NETLAT_SNAPSHOT_TAKE) {
		err = netlat_snap_take_manual();
		if (err)
			return err;
	}

	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	state = atomic_read(&netlat_snap.state);
	if (s.flags & NETLAT_SNAPSHOT_READ) {
		if (state != NETLAT_SNAP_FROZEN) {
			mutex_unlock(&netlat_lock);
			return -ENODATA;
		}
		sr->id = netlat_snap.id;
		sr->pos = 0;
		WRITE_ONCE(sr->active, true);
	}
	s.state = state == NETLAT_SNAP_CANCEL ? NETLAT_SNAP_PENDING : state;
	s.bytes = state == NETLAT_SNAP_FROZEN ? netlat_snap.bytes : 0;
	s.id = state == NETLAT_SNAP_FROZEN ? netlat_snap.id : 0;
	s.capacity = netlat_snap_capacity(netlat_rings_locked()->bytes);
	s.taken = netlat_snap.taken;
	s.missed = atomic64_read(&netlat_snap.missed);
	mutex_unlock(&netlat_lock);
	return netlat_copy_out(uarg, &s, sizeof(s), usize);
}

/* read() on a file after NETLAT_SNAPSHOT_READ, under netlat_lock. */
ssize_t netlat_snap_read(struct netlat_snap_reader *sr, char __user *buf,
			 size_t count)
{
	size_t n, left;

	lockdep_assert_held(&netlat_lock);
	if (atomic_read(&netlat_snap.state) != NETLAT_SNAP_FROZEN ||
	    netlat_snap.id != sr->id)
		return -ENODATA;
	if (sr->pos >= netlat_snap.bytes || !count)
		return 0;
	n = min_t(u64, count, netlat_snap.bytes - sr->pos);
	left = copy_to_user(buf, netlat_snap.buf->va + sr->pos, n);
	if (left == n)
		return -EFAULT;
	n -= left;
	sr->pos += n;
	return n;
}

bool netlat_snap_frozen(void)
{
	return atomic_read(&netlat_snap.state) == NETLAT_SNAP_FROZEN;
}

/* ---- mmap of the frozen snapshot ---- */

static void netlat_snap_vm_open(struct vm_area_struct *vma)
{
	atomic_inc(&netlat_nr_maps);
	atomic_inc(&netlat_snap.nr_maps);
}

static void netlat_snap_vm_close(struct vm_area_struct *vma)
{
	atomic_dec(&netlat_snap.nr_maps);
	atomic_dec(&netlat_nr_maps);
}

static const struct vm_operations_struct netlat_snap_vm_ops = {
	.open = netlat_snap_vm_open,
	.close = netlat_snap_vm_close,
};

/* Under netlat_map_lock; the caller checked offset, flags, protection. */
int netlat_snap_mmap(struct vm_area_struct *vma, unsigned long len)
{
	struct netlat_snapbuf *sb = netlat_snap.buf;
	int err;

	lockdep_assert_held(&netlat_map_lock);
	if (atomic_read(&netlat_snap.state) != NETLAT_SNAP_FROZEN || !sb)
		return -ENODATA;
	if (len > netlat_snapbuf_bytes(sb))
		return -EINVAL;
	err = vm_map_pages_zero(vma, sb->pages, sb->nr_pages);
	if (err)
		return err;
	vma->vm_ops = &netlat_snap_vm_ops;
	netlat_snap_vm_open(vma);
	return 0;
}

/* ---- NETLAT_IOC_TRIGGERS ---- */

static int netlat_trig_validate(const struct netlat_triggers *t)
{
	const u32 kinds = BIT(NETLAT_RETRANS_SYNACK + 1) - 1;
	unsigned int i;

	if (t->armed & ~NETLAT_TRIG_ALL)
		return -EINVAL;
	if ((t->armed & NETLAT_TRIG_RETRANS_KIND) ?
	    !t->retrans_kinds || (t->retrans_kinds & ~kinds) :
	    t->retrans_kinds)
		return -EINVAL;
	if (!(t->armed & NETLAT_TRIG_LATENCY) != !t->latency_ns)
		return -EINVAL;
	if (!(t->armed & NETLAT_TRIG_RX_WAIT) != !t->rx_wait_ns)
		return -EINVAL;
	if (t->pre_ms > NETLAT_TRIG_PRE_MS_MAX ||
	    t->post_ms > NETLAT_TRIG_POST_MS_MAX)
		return -EINVAL;
	if ((t->armed & NETLAT_TRIG_MARKER) ?
	    !t->marker_tag_len || t->marker_tag_len > NETLAT_TRIG_TAG_MAX :
	    t->marker_tag_len)
		return -EINVAL;
	for (i = t->marker_tag_len; i < NETLAT_TRIG_TAG_MAX; i++)
		if (t->marker_tag[i])
			return -EINVAL;
	return 0;
}

static void netlat_trig_apply(const struct netlat_triggers *t)
{
	lockdep_assert_held(&netlat_lock);
	if (READ_ONCE(netlat_trig_armed)) {
		WRITE_ONCE(netlat_trig_armed, 0);
		/* Writers run with interrupts off: this waits for them. */
		synchronize_rcu();
	}
	netlat_trig.retrans_kinds = t->retrans_kinds;
	netlat_trig.latency_ns = t->latency_ns;
	netlat_trig.rx_wait_ns = t->rx_wait_ns;
	netlat_trig.pre_ms = t->pre_ms;
	netlat_trig.post_ms = t->post_ms;
	netlat_trig.tag_len = t->marker_tag_len;
	memcpy(netlat_trig.tag, t->marker_tag, NETLAT_TRIG_TAG_MAX);
	smp_store_release(&netlat_trig_armed, t->armed);
}

long netlat_ioc_triggers(void __user *uarg)
{
	struct netlat_triggers t;
	u32 usize;
	int err;

	err = netlat_get_arg_resv(t, NETLAT_TRIGGERS_SIZE_VER0,
				  NETLAT_TRIGGERS_SET, reserved, uarg, &usize);
	if (err)
		return err;
	if (t.flags & NETLAT_TRIGGERS_SET) {
		err = netlat_trig_validate(&t);
		if (err)
			return err;
		if (!netlat_may_trace())
			return -EPERM;
	}
	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	if (t.flags & NETLAT_TRIGGERS_SET) {
		/* A trigger must never find no buffer to freeze into. */
		if (t.armed) {
			err = netlat_snap_ensure_buf();
			if (err)
				goto out;
		}
		netlat_trig_apply(&t);
		netlat_snap_trim();
	}
	t.armed = netlat_trig_armed;
	t.retrans_kinds = netlat_trig.retrans_kinds;
	t.latency_ns = netlat_trig.latency_ns;
	t.rx_wait_ns = netlat_trig.rx_wait_ns;
	t.pre_ms = netlat_trig.pre_ms;
	t.post_ms = netlat_trig.post_ms;
	t.marker_tag_len = netlat_trig.tag_len;
	memcpy(t.marker_tag, netlat_trig.tag, NETLAT_TRIG_TAG_MAX);
	t.fired = atomic64_read(&netlat_snap.fired);
out:
	mutex_unlock(&netlat_lock);
	return err ? err : netlat_copy_out(uarg, &t, sizeof(t), usize);
}

/* ---- load and unload ---- */

int netlat_flight_init(void)
{
	atomic_set(&netlat_snap.state, NETLAT_SNAP_EMPTY);
	init_irq_work(&netlat_snap.irq_work, netlat_trig_irq_work_fn);
	INIT_DELAYED_WORK(&netlat_snap.work, netlat_snap_work_fn);
	return 0;
}

/* No file open (no ioctl runs). */
void netlat_flight_exit(void)
{
	WRITE_ONCE(netlat_trig_armed, 0);
	/* a writer that saw triggers armed is done firing (interrupts off) */
	synchronize_rcu();
	irq_work_sync(&netlat_snap.irq_work);
	cancel_delayed_work_sync(&netlat_snap.work);
	netlat_snapbuf_free(netlat_snap.buf);
	netlat_snap.buf = NULL;
}
