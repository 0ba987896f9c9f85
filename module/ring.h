/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU record rings: the set of rings, its mode, the write path, the
 * readers' copies (read(), mmap pages), their wakeups, and a snapshot's
 * marks of a ring's bounds (the snapshot copy is snapcpu.c's).
 *
 * Writers take no lock (interrupts off, rings found through RCU);
 * netlat_lock and netlat_map_lock order process context. The rules, in
 * full, are in Documentation/design.rst.
 */
#ifndef _NETLAT_RING_H
#define _NETLAT_RING_H

#include <linux/types.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/poll.h>
#include <linux/netlat.h>

struct netlat_ring;

/* The set of rings, replaced as a whole (RCU) when the size changes. */
struct netlat_rings {
	u64 bytes;
	u64 mask;
	u64 mem_bytes;
	struct netlat_ring *ring[];	/* nr_cpu_ids, NULL if not possible */
};

/*
 * Writer handle between netlat_ring_reserve_at() and its commit, which fills
 * every field the commit reads. Handlers declare it __uninitialized: the
 * kernels of the lane zero every stack variable on function entry
 * (INIT_STACK_ALL_ZERO), on every hook hit, whether it writes or not.
 */
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

extern struct mutex netlat_lock;
extern struct mutex netlat_map_lock;
/* userspace mappings of rings and snapshot: no swap while nonzero */
extern atomic_t netlat_nr_maps;
extern bool netlat_running;
/* NETLAT_MODE_*: changed only while stopped, under both locks */
extern u32 netlat_mode;
extern u32 netlat_watermark;
extern u32 netlat_flush_ms;

/* load and unload; writers may write once init returns */
int netlat_rings_init(u64 bytes);
void netlat_rings_exit(void);

/* the set, in process context */
struct netlat_rings *netlat_rings_alloc(u64 bytes);
void netlat_rings_free(struct netlat_rings *rs);
struct netlat_rings *netlat_rings_locked(void);
struct netlat_rings *netlat_rings_replace(struct netlat_rings *rs, u32 mode);
void netlat_rings_set_mode_locked(u32 mode);
void netlat_rings_reset(struct netlat_rings *rs);
void netlat_rings_start(void);
void netlat_rings_stop(void);

/* the write path: any context */
void *netlat_ring_reserve_at(struct netlat_writer *w, u16 type, u32 len,
			     u64 at);
void netlat_ring_publish(struct netlat_writer *w);
void netlat_ring_finish(struct netlat_writer *w);
void netlat_ring_publish_finish(struct netlat_writer *w);

/* readers */
ssize_t netlat_rings_drain(char __user *buf, size_t room);
bool netlat_rings_pending(struct netlat_rings *rs, u64 min_bytes);
bool netlat_data_pending(void);
int netlat_wait_for_data(void);
void netlat_poll_wait(struct file *file, poll_table *wait);
void netlat_arm_flush(void);
void netlat_wake_all(void);
void netlat_wake_pri(void);
void netlat_fill_stream_hdr(struct netlat_rec_stream *s,
			    const struct netlat_rings *rs, u64 probe_groups);
void netlat_ring_stats(struct netlat_rings *rs, unsigned int cpu,
		       struct netlat_cpu_stats *st);
int netlat_ring_pages(struct netlat_rings *rs, unsigned int cpu, u64 area,
		      struct page ***pages, unsigned long *nr);

/*
 * A snapshot of one ring in three steps, so that interrupts are off only
 * for a few loads and at most 256 KiB of copy: netlat_ring_mark(), on the
 * ring's CPU, notes its bounds and counters; the copy (snapcpu.c) runs in
 * process context while writers go on; netlat_ring_mark_end(), on the CPU
 * again, notes how far the writers overwrote (or a consumer consumed) the
 * oldest records meanwhile, which the copy then leaves out. The caller
 * fills in the first four fields and zeroes the rest, and holds CPU
 * hotplug off (cpus_read_lock()).
 */
struct netlat_ring_mark {
	struct netlat_rings *rs;
	unsigned int cpu;
	void *copy;		/* where the records go */
	u64 room;		/* bytes there */
	bool copied;		/* copied at the mark already */
	const void *data;	/* the ring's data, mapped twice in a row */
	u64 prod, cons;		/* the records kept at the mark */
	u64 written, overwritten, dropped;
	u64 first_seq;		/* the next record's number */
	u64 ts_ns;
	u64 cons_end;		/* the writer's cons_seen at the copy's end */
	u64 overwritten_end;
};

void netlat_ring_mark(struct netlat_ring_mark *m);
void netlat_ring_mark_end(struct netlat_ring_mark *m);

#endif /* _NETLAT_RING_H */
