/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETLAT_H
#define _NETLAT_H

#include <linux/types.h>
#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <linux/netlat.h>

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

/* The set of rings, replaced as a whole (RCU) when the size changes. */
struct netlat_rings {
	u64 bytes;
	u64 mask;
	u64 mem_bytes;
	struct netlat_ring *ring[];	/* nr_cpu_ids, NULL if not possible */
};

/* Writer handle between netlat_reserve() and netlat_commit(). */
struct netlat_writer {
	struct netlat_ring *ring;
	unsigned long irq_flags;
	u64 next;
	u64 used;
	u32 size;
};

/* ring.c */
struct netlat_rings *netlat_rings_alloc(u64 bytes);
void netlat_rings_free(struct netlat_rings *rs);
void netlat_rings_reset(struct netlat_rings *rs);
void *netlat_reserve(struct netlat_writer *w, u16 type, u32 len);
void netlat_commit(struct netlat_writer *w);
u64 netlat_ring_used(const struct netlat_ring *r);
bool netlat_rings_pending(struct netlat_rings *rs, u64 at_least);

/* Global state, owned by main.c / dev.c */
extern struct netlat_rings __rcu *netlat_rings;
extern bool netlat_running;
extern u32 netlat_watermark;
bool netlat_readers_waiting(void);
void netlat_wake_readers(void);

/* dev.c */
int netlat_dev_init(u64 ring_bytes);
void netlat_dev_exit(void);
bool netlat_capable(void);
int netlat_copy_arg(void *karg, size_t ksize, size_t min_size,
		    void __user *uarg, u32 *usize);
int netlat_copy_out(void __user *uarg, const void *karg, size_t ksize,
		    u32 usize);

/* flight.c: snapshots and triggers */
struct file;
long netlat_ioc_snapshot(struct file *file, void __user *uarg);
long netlat_ioc_triggers(void __user *uarg);

/* filter.c: in-kernel filters */
long netlat_ioc_filters(void __user *uarg);
u64 netlat_filtered(int cpu);

#endif /* _NETLAT_H */
