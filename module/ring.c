// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU record rings: allocation, the write path, the readers' copies
 * and their wakeups, a snapshot's marks (the copy is snapcpu.c's;
 * locking rules in Documentation/design.rst).
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
#include <linux/wait.h>
#include <linux/timer.h>
#include <linux/irq_work.h>
#include <linux/cpu.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/error-injection.h>
#include "ring.h"

/*
 * One CPU's ring. Writer state is touched only by its own CPU with
 * interrupts disabled, so nested writers (softirq or hardirq interrupting
 * a process-context writer) are serialised without atomics.
 */
struct netlat_ring {
	/* writer side, own CPU, interrupts off */
	u64 seq;
	u64 last_ts;
	u64 lost_pending;
	u64 lost_first_seq;
	/*
	 * The consumer index as the last write took it: bytes before it may
	 * have been written over since, bytes from it on not. Writer-private,
	 * so that a snapshot trusts no index userspace may have moved back.
	 */
	u64 cons_seen;
	bool in_write;

	/* shared with userspace through mmap */
	struct netlat_mmap_prod *prod;
	struct netlat_mmap_cons *cons;
	void *data;		/* data pages mapped twice: no record wraps */

	/* reader side, under netlat_lock */
	u64 resyncs;

	/* prod page, data pages twice: the DATA mmap area, in order */
	struct page **map_pages;
	unsigned int nr_map_pages;
	struct page *cons_page;
};

static struct netlat_rings __rcu *netlat_rings;
bool netlat_running;
u32 netlat_watermark;
u32 netlat_mode = NETLAT_MODE_STREAM;
u32 netlat_flush_ms = 50;
DEFINE_MUTEX(netlat_lock);
DEFINE_MUTEX(netlat_map_lock);
atomic_t netlat_nr_maps = ATOMIC_INIT(0);
static unsigned int netlat_read_start;	/* round-robin first CPU of read() */
static DECLARE_WAIT_QUEUE_HEAD(netlat_wq);
static struct timer_list netlat_flush_timer;
static struct irq_work netlat_wake_work;

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
	/*
	 * A ring size that cannot be had must fail, not wake the OOM killer;
	 * charged to the caller's memory cgroup.
	 */
	return alloc_pages_node(node, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				__GFP_NOWARN | __GFP_RETRY_MAYFAIL, 0);
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
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN |
				__GFP_RETRY_MAYFAIL);
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

noinline struct netlat_rings *netlat_rings_alloc(u64 bytes)
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

/* the selftests fail it to test a configuration that cannot be had */
ALLOW_ERROR_INJECTION(netlat_rings_alloc, ERRNO);

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
		r->cons_seen = 0;
		r->resyncs = 0;
		WRITE_ONCE(r->prod->written, 0);
		WRITE_ONCE(r->prod->dropped, 0);
		WRITE_ONCE(r->prod->overwritten, 0);
		WRITE_ONCE(r->cons->cons, 0);
		smp_store_release(&r->prod->prod, 0);
	}
}

/* Bytes waiting in @r, or more than the ring size if userspace broke cons. */
static u64 netlat_ring_used(const struct netlat_ring *r)
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
 * netlat_ring_reserve_at() - start writing one record on this CPU's ring
 * @w: writer handle, passed on to netlat_ring_publish() and _finish()
 * @type: NETLAT_REC_* type
 * @len: record length, header included (at most NETLAT_REC_MAX_SIZE)
 * @at: the record's time (CLOCK_MONOTONIC) if its writer read it already
 *	(a packet's end), else 0: the clock is read here
 *
 * Returns the record with its header filled in and its padding zeroed, or
 * NULL if tracing is off or the record had to be dropped (then it has been
 * counted). On success interrupts stay disabled until netlat_ring_finish().
 */
void *netlat_ring_reserve_at(struct netlat_writer *w, u16 type, u32 len,
			     u64 at)
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
	/* what this write may overwrite lies before cons */
	if ((s64)(cons - r->cons_seen) > 0)
		r->cons_seen = cons;

	/* One clock for all CPUs, kept monotonic per CPU. */
	ts = at ?: ktime_get_mono_fast_ns();
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
NOKPROBE_SYMBOL(netlat_ring_reserve_at);
/* Other modules may write records too (the stress test's irq writers). */
EXPORT_SYMBOL_GPL(netlat_ring_reserve_at);

static __always_inline void __netlat_ring_publish(struct netlat_writer *w)
{
	struct netlat_ring *r = w->ring;

	WRITE_ONCE(r->prod->written, r->prod->written + 1);
	/* Record bytes must be visible before the index that covers them. */
	smp_store_release(&r->prod->prod, w->next);
}

/* Make the reserved record visible to readers (still in the write). */
void netlat_ring_publish(struct netlat_writer *w)
{
	__netlat_ring_publish(w);
}
NOKPROBE_SYMBOL(netlat_ring_publish);

static __always_inline void __netlat_ring_finish(struct netlat_writer *w)
{
	u32 watermark = READ_ONCE(netlat_watermark);

	w->ring->in_write = false;
	/*
	 * Readers sleep only when every ring is empty, so crossing the
	 * watermark is the one moment worth a wakeup; wq_has_sleeper()
	 * orders the prod store before its check of the queue.
	 */
	if (w->used >= watermark && w->used - w->size < watermark &&
	    wq_has_sleeper(&netlat_wq))
		irq_work_queue(&netlat_wake_work);
	local_irq_restore(w->irq_flags);
}

/**
 * netlat_ring_finish() - end the write begun by netlat_ring_reserve_at()
 * @w: the writer handle, its record published
 *
 * The reader is never woken from here: that could be hardirq context
 * under scheduler locks. Above the watermark an irq_work does it later.
 */
void netlat_ring_finish(struct netlat_writer *w)
{
	__netlat_ring_finish(w);
}
NOKPROBE_SYMBOL(netlat_ring_finish);

/* Both halves in one call: a record no trigger looks at (record.c). */
void netlat_ring_publish_finish(struct netlat_writer *w)
{
	__netlat_ring_publish(w);
	__netlat_ring_finish(w);
}
NOKPROBE_SYMBOL(netlat_ring_publish_finish);

/* ---- readers: wakeups, never from the write path itself ---- */

static void netlat_wake_work_fn(struct irq_work *work)
{
	wake_up_interruptible_all(&netlat_wq);
}

/* Process context: the mode changed, a reader asleep for data must see it. */
void netlat_wake_all(void)
{
	wake_up_interruptible_all(&netlat_wq);
}

/* Process context only: a snapshot was frozen. */
void netlat_wake_pri(void)
{
	wake_up_interruptible_poll(&netlat_wq, EPOLLPRI);
}

void netlat_poll_wait(struct file *file, poll_table *wait)
{
	poll_wait(file, &netlat_wq, wait);
}

bool netlat_data_pending(void)
{
	struct netlat_rings *rs;
	bool pending;

	rcu_read_lock();
	rs = rcu_dereference(netlat_rings);
	pending = rs && netlat_rings_pending(rs, 1);
	rcu_read_unlock();
	return pending;
}

void netlat_arm_flush(void)
{
	u32 ms = READ_ONCE(netlat_flush_ms);

	if (ms && !timer_pending(&netlat_flush_timer))
		mod_timer(&netlat_flush_timer, jiffies + msecs_to_jiffies(ms));
}

static void netlat_flush_timer_fn(struct timer_list *t)
{
	/* Overwrite mode: pollers wait for snapshots, not data. */
	if (READ_ONCE(netlat_mode) == NETLAT_MODE_OVERWRITE)
		return;
	if (netlat_data_pending())
		wake_up_interruptible_all(&netlat_wq);
	if (wq_has_sleeper(&netlat_wq))
		netlat_arm_flush();
}

/*
 * Sleep until a ring has data. The flush timer is armed only after we are
 * on the queue, so it either sees us and re-arms, or we see it pending.
 */
int netlat_wait_for_data(void)
{
	DEFINE_WAIT(wait);
	int err = 0;

	for (;;) {
		prepare_to_wait(&netlat_wq, &wait, TASK_INTERRUPTIBLE);
		netlat_arm_flush();
		/* Overwrite mode: read() finds -EBUSY under the lock. */
		if (netlat_data_pending() ||
		    READ_ONCE(netlat_mode) == NETLAT_MODE_OVERWRITE)
			break;
		if (signal_pending(current)) {
			err = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	finish_wait(&netlat_wq, &wait);
	return err;
}

/* ---- readers: copies ---- */

/* Rings as seen by process context holding netlat_lock or netlat_map_lock. */
struct netlat_rings *netlat_rings_locked(void)
{
	return rcu_dereference_protected(netlat_rings,
					 lockdep_is_held(&netlat_lock) ||
					 lockdep_is_held(&netlat_map_lock));
}

void netlat_fill_stream_hdr(struct netlat_rec_stream *s,
			    const struct netlat_rings *rs, u64 probe_groups)
{
	u64 mono_before;

	memset(s, 0, sizeof(*s));
	s->abi_version = NETLAT_ABI_VERSION;
	s->nr_cpus = nr_cpu_ids;
	s->clock_id = CLOCK_MONOTONIC;
	s->flags = READ_ONCE(netlat_running) ? NETLAT_STREAM_RUNNING : 0;
	s->ring_bytes = rs->bytes;
	/* The pair must describe one instant: bracket the realtime read. */
	mono_before = ktime_get_mono_fast_ns();
	s->realtime_ns = ktime_get_real_ns();
	s->mono_ns = mono_before + (ktime_get_mono_fast_ns() - mono_before) / 2;
	netlat_init_hdr(&s->hdr, NETLAT_REC_STREAM, sizeof(*s),
			raw_smp_processor_id(), s->mono_ns);
	s->probe_groups = probe_groups;
}

/*
 * Copy whole records of one ring to @buf. Returns bytes copied or -EFAULT
 * when nothing could be copied.
 *
 * The records are checked one by one and copied in one copy_to_user()
 * (the data is mapped twice, so [cons, end) is contiguous): under
 * hardened usercopy each copy from the vmalloc'd ring looks its area up.
 * On a fault they are copied one by one, so that only whole records count.
 */
static ssize_t netlat_drain_ring(struct netlat_rings *rs, struct netlat_ring *r,
				 char __user *buf, size_t room)
{
	u64 prod = smp_load_acquire(&r->prod->prod);
	u64 cons = READ_ONCE(r->cons->cons);
	u64 start = cons, end;
	size_t copied = 0;
	bool fault = false, resync = false;

	if (prod - cons > rs->bytes || !IS_ALIGNED(cons, NETLAT_REC_ALIGN)) {
		/* A consumer index from userspace we cannot use: start over. */
		r->resyncs++;
		cons = prod;
	}
	for (end = cons; end != prod;) {
		const struct netlat_rec_hdr *h = r->data + (end & rs->mask);
		u32 size = READ_ONCE(h->size);

		if (!netlat_rec_valid(h, size, prod - end)) {
			resync = true;
			break;
		}
		if (size > room - (end - cons))
			break;
		end += size;
	}
	if (end != cons &&
	    copy_to_user(buf, r->data + (cons & rs->mask), end - cons)) {
		while (cons != end) {
			const struct netlat_rec_hdr *h = r->data + (cons & rs->mask);
			u32 size = READ_ONCE(h->size);

			/*
			 * Checked again: a consumer index written through the
			 * mmap may have let the producer reuse these bytes.
			 */
			if (!netlat_rec_valid(h, size, end - cons) ||
			    copy_to_user(buf + copied, h, size)) {
				fault = true;
				break;
			}
			copied += size;
			cons += size;
		}
	} else {
		copied = end - cons;
		cons = end;
	}
	/* what followed the invalid record is skipped, as ever */
	if (resync && !fault) {
		r->resyncs++;
		cons = prod;
	}
	/* The producer may reuse the bytes once it sees this. */
	if (cons != start)
		smp_store_release(&r->cons->cons, cons);
	return fault && !copied ? -EFAULT : copied;
}

/* read(): whole records of every ring, under netlat_lock. */
ssize_t netlat_rings_drain(char __user *buf, size_t room)
{
	struct netlat_rings *rs = netlat_rings_locked();
	unsigned int i, cpu, start = netlat_read_start;
	size_t copied = 0;
	ssize_t n;

	/* netlat_read_start too */
	lockdep_assert_held(&netlat_lock);
	/* Rotate the first CPU so one busy CPU cannot starve the others. */
	netlat_read_start = (start + 1) % nr_cpu_ids;
	for (i = 0; i < nr_cpu_ids; i++) {
		cpu = (start + i) % nr_cpu_ids;
		if (!rs->ring[cpu])
			continue;
		n = netlat_drain_ring(rs, rs->ring[cpu], buf + copied,
				      room - copied);
		if (n < 0)
			return copied ? copied : n;
		copied += n;
		if (room - copied < sizeof(struct netlat_rec_hdr))
			break;
	}
	return copied;
}

/* NETLAT_IOC_GET_CPU_STATS, under netlat_lock; the filter count is not ours. */
void netlat_ring_stats(struct netlat_rings *rs, unsigned int cpu,
		       struct netlat_cpu_stats *st)
{
	struct netlat_ring *r = rs->ring[cpu];

	lockdep_assert_held(&netlat_lock);
	st->written = READ_ONCE(r->prod->written);
	st->dropped = READ_ONCE(r->prod->dropped);
	st->prod = smp_load_acquire(&r->prod->prod);
	st->cons = READ_ONCE(r->cons->cons);
	st->resyncs = r->resyncs;
	st->overwritten = READ_ONCE(r->prod->overwritten);
}

/* The pages of one mmap area of @cpu's ring (NETLAT_MMAP_CONS or _DATA). */
int netlat_ring_pages(struct netlat_rings *rs, unsigned int cpu, u64 area,
		      struct page ***pages, unsigned long *nr)
{
	struct netlat_ring *r = rs->ring[cpu];

	switch (area) {
	case NETLAT_MMAP_CONS:
		*pages = &r->cons_page;
		*nr = 1;
		return 0;
	case NETLAT_MMAP_DATA:
		*pages = r->map_pages;
		*nr = r->nr_map_pages;
		return 0;
	}
	return -EINVAL;
}

/* ---- snapshots: the ring's side (snapcpu.c copies) ---- */

/* copied with interrupts off (tens of microseconds), or in chunks */
#define NETLAT_SNAP_IRQ_BYTES	(256 * 1024)

/*
 * On the ring's CPU with interrupts off (an IPI, or a direct call there),
 * or anywhere for an offline CPU: either way no writer of that ring runs.
 */
static void netlat_ring_mark_fn(void *arg)
{
	struct netlat_ring_mark *m = arg;
	struct netlat_rings *rs = m->rs;
	struct netlat_ring *r = rs->ring[m->cpu];

	m->data = r->data;
	m->ts_ns = ktime_get_mono_fast_ns();
	m->prod = smp_load_acquire(&r->prod->prod);
	m->cons = READ_ONCE(r->cons->cons);
	/* a stream-mode consumer's index is not trusted */
	if (m->prod - m->cons > rs->bytes ||
	    !IS_ALIGNED(m->cons, NETLAT_REC_ALIGN))
		m->cons = m->prod;
	m->written = READ_ONCE(r->prod->written);
	m->overwritten = READ_ONCE(r->prod->overwritten);
	m->dropped = READ_ONCE(r->prod->dropped);
	/* Nothing kept: the next record's number (a pending LOST comes first). */
	m->first_seq = r->lost_pending ? r->lost_first_seq : r->seq;
	/*
	 * A short copy is made here, exact: writers of a small ring could
	 * overwrite all of it while a copy with interrupts on runs.
	 */
	if (m->prod - m->cons <= NETLAT_SNAP_IRQ_BYTES) {
		memcpy(m->copy, r->data + (m->cons & rs->mask),
		       min(m->prod - m->cons, m->room));
		m->copied = true;
	}
}

/*
 * Where netlat_ring_mark_fn() runs, after the copy. A write reuses only
 * bytes before the consumer index it took (cons_seen; in overwrite mode it
 * moved the index past them itself): the copy's bytes from cons_end on
 * were copied before anything overwrote them. The IPI orders the copy's
 * loads before this, and this before the CPU's next write.
 */
static void netlat_ring_mark_end_fn(void *arg)
{
	struct netlat_ring_mark *m = arg;
	struct netlat_ring *r = m->rs->ring[m->cpu];

	m->cons_end = r->cons_seen;
	m->overwritten_end = READ_ONCE(r->prod->overwritten);
}

/*
 * Run @fn(@m) on @m->cpu, or here if it is offline (cpus_read_lock held:
 * an online CPU stays so). Never here for an online CPU: its writers run.
 * If the call failed, @m keeps its zeroes: an empty section.
 */
static void netlat_ring_on_cpu(smp_call_func_t fn, struct netlat_ring_mark *m)
{
	if (!cpu_online(m->cpu))
		fn(m);
	else
		WARN_ON_ONCE(smp_call_function_single(m->cpu, fn, m, 1));
}

void netlat_ring_mark(struct netlat_ring_mark *m)
{
	netlat_ring_on_cpu(netlat_ring_mark_fn, m);
}

void netlat_ring_mark_end(struct netlat_ring_mark *m)
{
	netlat_ring_on_cpu(netlat_ring_mark_end_fn, m);
}


/* ---- the set: start, stop, swap, mode ---- */

void netlat_rings_start(void)
{
	/* Writers see the reset ring state before they see "running". */
	smp_store_release(&netlat_running, true);
}

/* Stop writers and wait until none is inside a write. */
void netlat_rings_stop(void)
{
	if (!READ_ONCE(netlat_running))
		return;
	WRITE_ONCE(netlat_running, false);
	synchronize_rcu();
}

/*
 * Under netlat_map_lock, stopped, nothing mapped: @rs and @mode replace
 * the set in force, which is returned; free it after synchronize_rcu().
 */
struct netlat_rings *netlat_rings_replace(struct netlat_rings *rs, u32 mode)
{
	struct netlat_rings *old = netlat_rings_locked();

	lockdep_assert_held(&netlat_map_lock);
	rcu_assign_pointer(netlat_rings, rs);
	WRITE_ONCE(netlat_mode, mode);
	return old;
}

/*
 * Same rings, another mode: emptied, counters and sequences reset. Under
 * netlat_map_lock, nothing mapped.
 */
void netlat_rings_set_mode_locked(u32 mode)
{
	lockdep_assert_held(&netlat_map_lock);
	WRITE_ONCE(netlat_mode, mode);
	netlat_rings_reset(netlat_rings_locked());
}

int netlat_rings_init(u64 bytes)
{
	struct netlat_rings *rs;

	rs = netlat_rings_alloc(bytes);
	if (IS_ERR(rs))
		return PTR_ERR(rs);
	rcu_assign_pointer(netlat_rings, rs);
	netlat_watermark = bytes / 4;
	init_irq_work(&netlat_wake_work, netlat_wake_work_fn);
	timer_setup(&netlat_flush_timer, netlat_flush_timer_fn, 0);
	WRITE_ONCE(netlat_running, true);
	return 0;
}

/* No file is open and no snapshot work runs any more. */
void netlat_rings_exit(void)
{
	struct netlat_rings *rs;

	netlat_rings_stop();
	timer_shutdown_sync(&netlat_flush_timer);
	irq_work_sync(&netlat_wake_work);
	rs = rcu_dereference_protected(netlat_rings, true);
	RCU_INIT_POINTER(netlat_rings, NULL);
	netlat_rings_free(rs);
}
