/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETLAT_H
#define _NETLAT_H

#include <linux/types.h>
#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/netlat.h>

struct file;
struct vm_area_struct;
struct netlat_snapbuf;

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
	void *rec;
	unsigned long irq_flags;
	u64 next;
	u64 used;
	u32 size;
};

/* What read() and the snapshot copy check before they trust a record. */
static inline bool netlat_rec_valid(const struct netlat_rec_hdr *h, u32 size,
				    u64 avail)
{
	return size >= sizeof(*h) && size <= NETLAT_REC_MAX_SIZE &&
	       IS_ALIGNED(size, NETLAT_REC_ALIGN) && size <= avail &&
	       READ_ONCE(h->magic) == NETLAT_REC_MAGIC;
}

/* A header for a record that is not in a ring: sequence 0. */
static inline void netlat_init_hdr(struct netlat_rec_hdr *h, u16 type,
				   u16 size, u16 cpu, u64 ts)
{
	h->size = size;
	h->type = type;
	h->magic = NETLAT_REC_MAGIC;
	h->version = NETLAT_ABI_VERSION;
	h->cpu = cpu;
	h->seq = 0;
	h->ts_ns = ts;
}

/* ring.c */
struct netlat_rings *netlat_rings_alloc(u64 bytes);
void netlat_rings_free(struct netlat_rings *rs);
void netlat_rings_reset(struct netlat_rings *rs);
void *netlat_reserve(struct netlat_writer *w, u16 type, u32 len);
void netlat_commit(struct netlat_writer *w);
u64 netlat_ring_used(const struct netlat_ring *r);
bool netlat_rings_pending(struct netlat_rings *rs, u64 min_bytes);

/* Global state, owned by main.c / dev.c */
extern struct netlat_rings __rcu *netlat_rings;
extern bool netlat_running;
extern u32 netlat_watermark;
/* NETLAT_MODE_*: set only while stopped, under netlat_lock and netlat_map_lock */
extern u32 netlat_mode;
extern struct mutex netlat_lock;
extern struct mutex netlat_map_lock;
extern atomic_t netlat_nr_maps;
bool netlat_readers_waiting(void);
void netlat_wake_readers(void);
void netlat_wake_pri(void);

/* dev.c */
int netlat_dev_init(u64 ring_bytes);
void netlat_dev_exit(void);
bool netlat_capable(void);
int netlat_copy_arg(void *karg, size_t ksize, size_t min_size,
		    void __user *uarg, u32 *usize);
int netlat_copy_out(void __user *uarg, const void *karg, size_t ksize,
		    u32 usize);
struct netlat_rings *netlat_rings_locked(void);
void netlat_stop_live_reader(struct file *file);
void netlat_fill_stream_hdr(struct netlat_rec_stream *s,
			    const struct netlat_rings *rs);

/* flight.c: snapshots and triggers */

/* A file that asked for NETLAT_SNAPSHOT_READ reads the frozen snapshot. */
struct netlat_snap_reader {
	bool active;
	u64 id;		/* the snapshot it reads; another one is -ENODATA */
	u64 pos;
};

extern u32 netlat_trig_armed;	/* NETLAT_TRIG_* bits, read in commit */
void netlat_trig_check(struct netlat_writer *w, u32 armed);
long netlat_ioc_snapshot(struct file *file, struct netlat_snap_reader *sr,
			 void __user *uarg);
long netlat_ioc_triggers(void __user *uarg);
ssize_t netlat_snap_read(struct netlat_snap_reader *sr, char __user *buf,
			 size_t count);
bool netlat_snap_frozen(void);
int netlat_snap_mmap(struct vm_area_struct *vma, unsigned long len);
u64 netlat_snap_mem_bytes(void);
int netlat_snap_prepare_resize(u64 ring_bytes, struct netlat_snapbuf **sb);
struct netlat_snapbuf *netlat_snap_swap_buf(struct netlat_snapbuf *sb);
void netlat_snapbuf_free(struct netlat_snapbuf *sb);
int netlat_flight_init(void);
void netlat_flight_exit(void);

/* filter.c: in-kernel filters */
long netlat_ioc_filters(void __user *uarg);
u64 netlat_filtered(int cpu);

#endif /* _NETLAT_H */
