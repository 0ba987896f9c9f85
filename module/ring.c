// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU record rings: allocation and the write path.
 *
 * A ring is a power-of-two data area with free-running byte indices: the
 * producer index lives in a page userspace may only read, the consumer
 * index in a page it may write. The data pages are mapped twice in a row
 * (in the kernel with vmap, in userspace with mmap), so a record is always
 * contiguous even when it wraps around the end of the ring.
 */
#include <linux/kernel.h>
#include <linux/export.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/cpumask.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>
#include <linux/hardirq.h>
#include <linux/kprobes.h>
#include "netlat.h"

static void netlat_ring_free(struct netlat_ring *r)
{
	unsigned int i, nr_data;

	if (!r)
		return;
	if (r->data)
		vunmap(r->data);
	/* map_pages holds each data page twice: free the first copy only */
	nr_data = (r->nr_map_pages - 1) / 2;
	for (i = 0; r->map_pages && i < 1 + nr_data; i++) {
		if (r->map_pages[i])
			__free_page(r->map_pages[i]);
		cond_resched();
	}
	if (r->cons_page)
		__free_page(r->cons_page);
	kvfree(r->map_pages);
	kfree(r);
}

static struct page *netlat_alloc_page(int node)
{
	/* A ring size that cannot be had must fail, not wake the OOM killer. */
	return alloc_pages_node(node, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN |
				__GFP_RETRY_MAYFAIL, 0);
}

static struct netlat_ring *netlat_ring_alloc(int cpu, u64 bytes)
{
	unsigned int i, nr_data = bytes >> PAGE_SHIFT;
	int node = cpu_to_node(cpu);
	struct netlat_ring *r;

	r = kzalloc_node(sizeof(*r), GFP_KERNEL, node);
	if (!r)
		return NULL;
	r->nr_map_pages = 1 + 2 * nr_data;
	r->map_pages = kvcalloc(r->nr_map_pages, sizeof(*r->map_pages),
				GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	if (!r->map_pages)
		goto err;
	for (i = 0; i < 1 + nr_data; i++) {
		r->map_pages[i] = netlat_alloc_page(node);
		if (!r->map_pages[i] || fatal_signal_pending(current))
			goto err;
		cond_resched();
	}
	for (i = 0; i < nr_data; i++)
		r->map_pages[1 + nr_data + i] = r->map_pages[1 + i];
	r->cons_page = netlat_alloc_page(node);
	if (!r->cons_page)
		goto err;

	r->data = vmap(r->map_pages + 1, 2 * nr_data, VM_MAP, PAGE_KERNEL);
	if (!r->data)
		goto err;
	r->prod = page_address(r->map_pages[0]);
	r->cons = page_address(r->cons_page);
	r->prod->ring_bytes = bytes;
	return r;
err:
	netlat_ring_free(r);
	return NULL;
}

struct netlat_rings *netlat_rings_alloc(u64 bytes)
{
	u64 per_cpu = (bytes >> PAGE_SHIFT) + 2;
	struct netlat_rings *rs;
	int cpu;

	/* Refuse sizes no sane machine can spare before trying to allocate. */
	if (per_cpu * num_possible_cpus() > totalram_pages() / 2)
		return ERR_PTR(-ENOMEM);

	rs = kvzalloc(struct_size(rs, ring, nr_cpu_ids), GFP_KERNEL);
	if (!rs)
		return ERR_PTR(-ENOMEM);
	rs->bytes = bytes;
	rs->mask = bytes - 1;
	for_each_possible_cpu(cpu) {
		rs->ring[cpu] = netlat_ring_alloc(cpu, bytes);
		if (!rs->ring[cpu]) {
			netlat_rings_free(rs);
			return ERR_PTR(-ENOMEM);
		}
		rs->mem_bytes += per_cpu << PAGE_SHIFT;
	}
	return rs;
}

void netlat_rings_free(struct netlat_rings *rs)
{
	int cpu;

	if (!rs)
		return;
	for_each_possible_cpu(cpu)
		netlat_ring_free(rs->ring[cpu]);
	kvfree(rs);
}

/* Caller guarantees no writer is active (tracing stopped, RCU synced). */
void netlat_rings_reset(struct netlat_rings *rs)
{
	struct netlat_ring *r;
	int cpu;

	for_each_possible_cpu(cpu) {
		r = rs->ring[cpu];
		r->seq = 0;
		r->last_ts = 0;
		r->lost_pending = 0;
		r->lost_first_seq = 0;
		r->resyncs = 0;
		WRITE_ONCE(r->prod->written, 0);
		WRITE_ONCE(r->prod->dropped, 0);
		WRITE_ONCE(r->prod->overwritten, 0);
		WRITE_ONCE(r->cons->cons, 0);
		smp_store_release(&r->prod->prod, 0);
	}
}

/* Bytes waiting in @r, or more than the ring size if userspace broke cons. */
u64 netlat_ring_used(const struct netlat_ring *r)
{
	/* cons first: a consumer moving between the loads must not inflate */
	u64 cons = READ_ONCE(r->cons->cons);

	return smp_load_acquire(&r->prod->prod) - cons;
}

bool netlat_rings_pending(struct netlat_rings *rs, u64 min_bytes)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (netlat_ring_used(rs->ring[cpu]) >= min_bytes)
			return true;
	return false;
}

static void netlat_fill_hdr(struct netlat_rec_hdr *h, struct netlat_ring *r,
			    u16 type, u32 size, u64 ts)
{
	h->size = size;
	h->type = type;
	h->magic = NETLAT_REC_MAGIC;
	h->version = NETLAT_ABI_VERSION;
	h->cpu = smp_processor_id();
	h->seq = r->seq++;
	h->ts_ns = ts;
}

static void netlat_drop(struct netlat_ring *r)
{
	if (!r->lost_pending++)
		r->lost_first_seq = r->seq;
	r->seq++;
	WRITE_ONCE(r->prod->dropped, r->prod->dropped + 1);
}

/*
 * Overwrite mode: move the consumer index (the kernel's own in this mode)
 * past the oldest records until @need bytes fit, counting them. The sizes
 * were written by this CPU, but a bad one must not make us loop or copy
 * garbage: then everything the ring held counts as overwritten (in this
 * mode the ring holds exactly written - overwritten records) and it is
 * emptied. Returns the new consumer index.
 */
static u64 netlat_overwrite(struct netlat_rings *rs, struct netlat_ring *r,
			    u64 prod, u64 cons, u32 need)
{
	u64 n = 0;

	if (prod - cons > rs->bytes || !IS_ALIGNED(cons, NETLAT_REC_ALIGN))
		goto reset;
	/* Ends: each step frees >= one header and an empty ring fits @need. */
	while (rs->bytes - (prod - cons) < need) {
		const struct netlat_rec_hdr *h = r->data + (cons & rs->mask);
		u32 size = h->size;

		if (size < sizeof(*h) || size > NETLAT_REC_MAX_SIZE ||
		    !IS_ALIGNED(size, NETLAT_REC_ALIGN) || size > prod - cons)
			goto reset;
		cons += size;
		n++;
	}
	WRITE_ONCE(r->prod->overwritten, r->prod->overwritten + n);
	WRITE_ONCE(r->cons->cons, cons);
	return cons;
reset:
	WRITE_ONCE(r->prod->overwritten, r->prod->written);
	WRITE_ONCE(r->cons->cons, prod);
	return prod;
}

/**
 * netlat_reserve() - start writing one record on this CPU's ring
 * @w: writer handle, passed on to netlat_commit()
 * @type: NETLAT_REC_* type
 * @len: record length, header included (at most NETLAT_REC_MAX_SIZE)
 *
 * Returns the record with its header filled in and its padding zeroed, or
 * NULL if tracing is off or the record had to be dropped (then it has been
 * counted). On success interrupts stay disabled until netlat_commit().
 */
void *netlat_reserve(struct netlat_writer *w, u16 type, u32 len)
{
	u32 size = ALIGN(len, NETLAT_REC_ALIGN);
	struct netlat_rings *rs;
	struct netlat_ring *r;
	u64 prod, cons, need, used, ts;
	void *rec;

	if (WARN_ON_ONCE(size < sizeof(struct netlat_rec_hdr) ||
			 size > NETLAT_REC_MAX_SIZE))
		return NULL;
	local_irq_save(w->irq_flags);
	/*
	 * An NMI could land between another writer's reserve and commit on
	 * this CPU. NMI code paths are not probed, so this is a guard.
	 */
	if (unlikely(in_nmi()) || !smp_load_acquire(&netlat_running))
		goto out;
	/* Interrupts off is an RCU read-side critical section. */
	rs = rcu_dereference_sched(netlat_rings);
	if (unlikely(!rs))
		goto out;
	r = rs->ring[smp_processor_id()];
	/*
	 * Interrupts are off, so only a probe hit inside our own window
	 * (a kprobe on something we call) can nest: drop and count it.
	 */
	if (unlikely(r->in_write)) {
		netlat_drop(r);
		goto out;
	}

	prod = r->prod->prod;
	/* Pairs with the consumer's release: it is done with the bytes. */
	cons = smp_load_acquire(&r->cons->cons);
	used = prod - cons;
	need = size;
	if (r->lost_pending)
		need += sizeof(struct netlat_rec_lost);
	/* An out-of-range cons (written by userspace) reads as "full". */
	if (used > rs->bytes || rs->bytes - used < need) {
		/* Set only while stopped: ordered by netlat_running's acquire. */
		if (READ_ONCE(netlat_mode) != NETLAT_MODE_OVERWRITE) {
			netlat_drop(r);
			goto out;
		}
		cons = netlat_overwrite(rs, r, prod, cons, need);
	}

	/* One clock for all CPUs, kept monotonic per CPU. */
	ts = ktime_get_mono_fast_ns();
	if (ts < r->last_ts)
		ts = r->last_ts;
	r->last_ts = ts;

	if (r->lost_pending) {
		struct netlat_rec_lost *lost = r->data + (prod & rs->mask);

		netlat_fill_hdr(&lost->hdr, r, NETLAT_REC_LOST, sizeof(*lost), ts);
		lost->count = r->lost_pending;
		lost->first_seq = r->lost_first_seq;
		r->lost_pending = 0;
		prod += sizeof(*lost);
		WRITE_ONCE(r->prod->written, r->prod->written + 1);
	}

	rec = r->data + (prod & rs->mask);
	*(u64 *)(rec + size - sizeof(u64)) = 0;
	netlat_fill_hdr(rec, r, type, size, ts);
	r->in_write = true;
	w->ring = r;
	w->rec = rec;
	w->next = prod + size;
	w->used = w->next - cons;
	w->size = size;
	return rec;
out:
	local_irq_restore(w->irq_flags);
	return NULL;
}
NOKPROBE_SYMBOL(netlat_reserve);
/* Other modules may write records too (the stress test's irq writers). */
EXPORT_SYMBOL_GPL(netlat_reserve);

/**
 * netlat_commit() - publish the record returned by netlat_reserve()
 * @w: the writer handle
 *
 * The reader is never woken from here: that could be hardirq context
 * under scheduler locks. Above the watermark an irq_work does it later.
 */
void netlat_commit(struct netlat_writer *w)
{
	struct netlat_ring *r = w->ring;
	u32 watermark = READ_ONCE(netlat_watermark);
	u32 armed = READ_ONCE(netlat_trig_armed);

	WRITE_ONCE(r->prod->written, r->prod->written + 1);
	/* Record bytes must be visible before the index that covers them. */
	smp_store_release(&r->prod->prod, w->next);
	/* Still in_write: a probe hit inside the check is dropped, not nested. */
	if (unlikely(armed))
		netlat_trig_check(w, armed);
	r->in_write = false;
	/*
	 * Readers sleep only when every ring is empty, so crossing the
	 * watermark is the one moment worth a wakeup; wq_has_sleeper()
	 * orders the prod store before its check of the queue.
	 */
	if (w->used >= watermark && w->used - w->size < watermark &&
	    netlat_readers_waiting())
		netlat_wake_readers();
	local_irq_restore(w->irq_flags);
}
NOKPROBE_SYMBOL(netlat_commit);
EXPORT_SYMBOL_GPL(netlat_commit);
