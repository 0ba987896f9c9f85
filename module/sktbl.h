/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The socket table core of the packet tables (track.c sends, rxtrack.c
 * receives): sockets keyed by address, each with a FIFO of its packets in
 * flight, the packets' state taken from a pool of blocks that the table's
 * memory budget sizes. An idle socket holds an entry and no block; when a
 * new socket finds no free entry, the idle one used longest ago gives up
 * its entry (evicted). Lookup, claim, filter verdict, per-entry lock and
 * lifetime are written here once; a table type adds its own fields after
 * struct netlat_skt_ent and its packet state in the slots.
 *
 * Nothing is written into kernel structures and no socket is dereferenced
 * by the core: addresses are keys. A table is replaced only with no
 * handler inside it (its owner's grace period, RCU-sched).
 */
#ifndef _NETLAT_SKTBL_H
#define _NETLAT_SKTBL_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include "hist.h"

struct sock;
struct netlat_skt;

#define NETLAT_SKT_SLOT		64	/* bytes of one packet's state */
#define NETLAT_SKT_BLK_SLOTS	8	/* packets per block, a power of two */
#define NETLAT_SKT_NONE		U32_MAX	/* no block */

/* Verdict bit of every type: the filters keep the socket out. */
#define NETLAT_SKT_OUT		(1U << 0)

/* The head of every entry. Fields below @lock: under it. */
struct netlat_skt_ent {
	raw_spinlock_t lock;
	const struct sock *sk;	/* NULL: free; claimed by cmpxchg */
	u64 verdict;		/* filter generation << 32 | type's bits */
	u32 head, tail;		/* FIFO positions, free-running */
	u32 head_blk;		/* block of position head, or NONE */
	u32 tail_blk;		/* block of position tail - 1, or NONE */
	unsigned long used;	/* jiffies of its last packet: eviction order */
};

struct netlat_skt_type {
	size_t ent_size;	/* the type's entry, netlat_skt_ent first */
	u32 max_pkts;		/* packets in flight per socket */
	/* The rules of generation @gen on @sk: @gen << 32 | NETLAT_SKT_OUT... */
	u64 (*verdict)(const struct sock *sk, u32 gen);
	/*
	 * Entry locked, its socket @sk: @v is its new verdict (@claimed: it
	 * was just claimed). A socket no longer followed has lost its packets
	 * already. May be NULL.
	 */
	void (*refresh)(struct netlat_skt_ent *e, const struct sock *sk, u64 v,
			bool claimed);
	/* Entry locked, no packet: another socket takes it. May be NULL. */
	void (*evict)(struct netlat_skt_ent *e);
	enum netlat_hist_counter no_entry;	/* a socket found no entry */
	enum netlat_hist_counter evicted;	/* an idle entry was taken */
};

/* A position in an entry's FIFO and the block that holds it. */
struct netlat_skt_cur {
	u32 pos;
	u32 blk;
};

/* Why netlat_skt_push() found no slot. */
enum netlat_skt_full {
	NETLAT_SKT_FULL_CAP,	/* the socket has max_pkts in flight */
	NETLAT_SKT_FULL_MEM,	/* the table's pool is empty */
};

/* The budget of both tables (netlat_config.table_bytes), under netlat_lock. */
extern u64 netlat_table_bytes;

/* Process context. */
struct netlat_skt *netlat_skt_alloc(const struct netlat_skt_type *type,
				    u64 bytes);
void netlat_skt_free(struct netlat_skt *t);
u32 netlat_skt_nr_ents(const struct netlat_skt *t);
u64 netlat_skt_capacity(const struct netlat_skt *t, u32 *ents, u32 *slots);
struct netlat_skt_ent *netlat_skt_ent(struct netlat_skt *t, u32 i);

/* Handlers (any context, preemption off). */
struct netlat_skt_ent *netlat_skt_lookup(struct netlat_skt *t,
					 const struct sock *sk);
struct netlat_skt_ent *netlat_skt_find(struct netlat_skt *t,
				       const struct sock *sk, bool create,
				       bool *out);
bool netlat_skt_lock(struct netlat_skt_ent *e, const struct sock *sk,
		     unsigned long *flags);

static inline void netlat_skt_unlock(struct netlat_skt_ent *e,
				     unsigned long flags)
{
	raw_spin_unlock_irqrestore(&e->lock, flags);
}

static inline u32 netlat_skt_len(const struct netlat_skt_ent *e)
{
	return e->tail - e->head;
}

/* Entry locked, below. */
void *netlat_skt_push(struct netlat_skt *t, struct netlat_skt_ent *e,
		      enum netlat_skt_full *why);
void netlat_skt_pop(struct netlat_skt *t, struct netlat_skt_ent *e);
void netlat_skt_clear(struct netlat_skt *t, struct netlat_skt_ent *e);
void netlat_skt_release(struct netlat_skt *t, struct netlat_skt_ent *e);
void *netlat_skt_slot(struct netlat_skt *t, const struct netlat_skt_cur *c);
bool netlat_skt_first(const struct netlat_skt_ent *e, struct netlat_skt_cur *c);
bool netlat_skt_last(const struct netlat_skt_ent *e, struct netlat_skt_cur *c);
bool netlat_skt_next(struct netlat_skt *t, const struct netlat_skt_ent *e,
		     struct netlat_skt_cur *c);
bool netlat_skt_prev(struct netlat_skt *t, const struct netlat_skt_ent *e,
		     struct netlat_skt_cur *c);
void *netlat_skt_at(struct netlat_skt *t, struct netlat_skt_ent *e, u32 pos);
u32 netlat_skt_index(struct netlat_skt *t, const struct netlat_skt_ent *e);

#endif /* _NETLAT_SKTBL_H */
