/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The socket table core of the packet tables (track.c sends, rxtrack.c
 * receives): sockets keyed by address, each with a FIFO of its packets in
 * flight, the packets' state taken from a pool of blocks that the table's
 * memory budget sizes. An idle socket holds an entry and no block; when a
 * new socket finds no free entry, the idle one used longest ago gives up
 * its entry (evicted). Lookup, claim, filter verdict, per-entry lock and
 * lifetime are written here once, and so is how a run of packets ends in
 * batches (netlat_skt_end_run()); a table type adds its own fields after
 * struct netlat_skt_ent and its packet state in the slots.
 *
 * Nothing is written into kernel structures and no socket is dereferenced
 * by the core: addresses are keys. A table is replaced only with no
 * handler inside it (its owner's grace period, RCU-sched).
 */
#ifndef _NETLAT_SKTBL_H
#define _NETLAT_SKTBL_H

#include <linux/types.h>
#include <linux/string.h>
#include <linux/lockdep.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/hash.h>
#include "hist.h"
#include "filter.h"

struct sock;
struct netlat_skt;

#define NETLAT_SKT_SLOT		64	/* bytes of one packet's state */
#define NETLAT_SKT_BLK_SLOTS	8	/* packets per block, a power of two */
#define NETLAT_SKT_NONE		U32_MAX	/* no block */

/*
 * An entry's verdict: netlat_filter_gen in the upper half (stale once the
 * rules change; 0 is no generation), netlat_filter_sk_verdict()'s bits in
 * the lower: the socket kept out (not followed), its records kept, or
 * asked at each record.
 */
#define NETLAT_SKT_OUT		NETLAT_FILTER_OUT
#define NETLAT_SKT_REC		NETLAT_FILTER_REC
#define NETLAT_SKT_PER_HIT	NETLAT_FILTER_PER_HIT

/* The head of every entry. Fields below @lock: under it. */
struct netlat_skt_ent {
	raw_spinlock_t lock;
	const struct sock *sk;	/* NULL: free; claimed by cmpxchg */
	u64 verdict;		/* filter generation << 32 | type's bits */
	u32 head, tail;		/* FIFO positions, free-running */
	/*
	 * The blocks of positions head and tail - 1, or NONE. An empty FIFO
	 * (head == tail) may keep its last block, both naming it: the next
	 * packet's (netlat_skt_push()).
	 */
	u32 head_blk;
	u32 tail_blk;
	unsigned long used;	/* jiffies of its last packet: eviction order */
	u32 key;		/* its histograms' key (keys.c), with @verdict */
};

struct netlat_skt_type {
	size_t ent_size;	/* the type's entry, netlat_skt_ent first */
	u32 max_pkts;		/* packets in flight per socket */
	/*
	 * The groups whose rules a socket's verdict asks: kept out of all,
	 * it is not followed; @rec_group's rules keep its records or not.
	 */
	u64 groups;
	u64 rec_group;
	/*
	 * Entry locked, its socket @sk: @v is its new verdict (@claimed: it
	 * was just claimed). A socket no longer followed has lost its packets
	 * already. May be NULL.
	 */
	void (*refresh)(struct netlat_skt_ent *e, const struct sock *sk, u64 v,
			bool claimed);
	/*
	 * No packet in @e, yet it must not go to another socket now (its
	 * socket is about to send). Asked without the lock when a victim
	 * is chosen, then again with it. May be NULL.
	 */
	bool (*busy)(const struct netlat_skt_ent *e);
	/* Entry locked, no packet: another socket takes it. May be NULL. */
	void (*evict)(struct netlat_skt *t, struct netlat_skt_ent *e);
	/*
	 * The table is going, no handler inside: the packets of @e in flight
	 * that it counts as not followed. May be NULL (then its FIFO's
	 * length).
	 */
	u64 (*left)(struct netlat_skt *t, struct netlat_skt_ent *e);
	/*
	 * @t replaces @old (no handler in it any more) with the histograms
	 * kept: what the type keeps of @old goes on in @t, @left of its
	 * packets not followed. May be NULL.
	 */
	void (*carry)(struct netlat_skt *old, struct netlat_skt *t, u64 left);
	/*
	 * Whether @e, which has a socket, counts as one the table follows
	 * (read without the lock, for reports). May be NULL (then it does).
	 */
	bool (*followed)(const struct netlat_skt_ent *e);
	/* The type's state of a table, zeroed with it: netlat_skt_priv(). */
	size_t priv_size;
	void (*priv_init)(void *priv);		/* may be NULL */
	enum netlat_hist_counter untracked;	/* packets left at a renewal */
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

/* A block's neighbours in its FIFO (kept beside the blocks, not in them). */
struct netlat_skt_link {
	u32 next;
	u32 prev;
};

/*
 * A table. Its layout is here only for the inline FIFO walk below, which
 * every packet's hooks take several times: the rest is sktbl.c's.
 */
struct netlat_skt {
	const struct netlat_skt_type *type;
	size_t ent_size;	/* type->ent_size, one load nearer */
	u32 ent_bits;
	u32 nblk;
	u64 bytes;
	raw_spinlock_t pool_lock;
	u32 free_blk;		/* free list through link[].next */
	u32 nr_free;		/* blocks on it (read without the lock: a hint) */
	struct netlat_skt_link *link;
	char *ents;
	char *blks;
	void *priv;		/* type->priv_size bytes, or NULL */
};

#define NETLAT_SKT_BLK_BYTES	(NETLAT_SKT_SLOT * NETLAT_SKT_BLK_SLOTS)
#define NETLAT_SKT_MASK		(NETLAT_SKT_BLK_SLOTS - 1)

/*
 * The budget of both tables (netlat_config.table_bytes), written under
 * netlat_lock before the tables are rebuilt; read under each home's lock.
 */
extern u64 netlat_table_bytes;

/*
 * Where a table of a type lives, and when: the lifetime of both tables.
 * A table exists while its owner wants it (the send table at the packet
 * level; the receive table while its group is on), within its share of
 * the budget. A change of level or budget replaces it by an empty one,
 * and so does a group that feeds it going on again: while it was off,
 * ends of packets and of sockets went unseen (a socket destroyed then
 * would leave its entry to whoever gets its address). The packets left
 * in a table replaced or freed count as not followed (the type's
 * untracked) unless the histograms are reset with it (a change of level
 * or budget); the type may carry its counters over (carry).
 */
struct netlat_skt_home {
	const struct netlat_skt_type *type;
	u32 share;			/* eighths of the budget */
	struct mutex lock;
	struct netlat_skt __rcu *tbl;	/* RCU-sched */
	u64 bytes;			/* the budget of the table in force */
};

#define NETLAT_SKT_HOME(name, t, eighths) \
	struct netlat_skt_home name = { \
		.type = (t), .share = (eighths), \
		.lock = __MUTEX_INITIALIZER(name.lock), \
	}

/* The table in force, NULL if none (a handler: preemption off). */
static __always_inline struct netlat_skt *
netlat_skt_home_get(struct netlat_skt_home *h)
{
	return rcu_dereference_sched(h->tbl);
}

/* What a caller of netlat_skt_home_set() wants of the table. */
enum netlat_skt_want {
	NETLAT_SKT_DROP,	/* none */
	NETLAT_SKT_WANT,	/* one */
	NETLAT_SKT_AS_IS,	/* one if one exists now (decided under h->lock) */
};

int netlat_skt_home_set(struct netlat_skt_home *h, enum netlat_skt_want want,
			bool renew, bool count_left);

/*
 * A change in two halves, for a caller that must not fail once it
 * commits: prepare decides and allocates with the home locked (held on
 * success), commit or abort ends it.
 */
struct netlat_skt_next {
	struct netlat_skt_home *h;
	struct netlat_skt *t;		/* the new table, NULL for none */
	u64 bytes;			/* its budget */
	bool replace;			/* false: the table in force stays */
};

int netlat_skt_home_prepare(struct netlat_skt_home *h,
			    enum netlat_skt_want want, bool renew, u64 budget,
			    struct netlat_skt_next *n);
int netlat_skt_home_commit(struct netlat_skt_next *n, bool count_left);
void netlat_skt_home_abort(struct netlat_skt_next *n);
u64 netlat_skt_home_capacity(struct netlat_skt_home *h, u32 *ents, u32 *slots);
u64 netlat_skt_home_flows(struct netlat_skt_home *h);

/* Process context. */
struct netlat_skt *netlat_skt_alloc(const struct netlat_skt_type *type,
				    u64 bytes);
void netlat_skt_free(struct netlat_skt *t);
u32 netlat_skt_nr_ents(const struct netlat_skt *t);
struct netlat_skt_ent *netlat_skt_ent(struct netlat_skt *t, u32 i);

/* Handlers (any context, preemption off). */
struct netlat_skt_ent *netlat_skt_lookup(struct netlat_skt *t,
					 const struct sock *sk);
struct netlat_skt_ent *netlat_skt_find_slow(struct netlat_skt *t,
					    const struct sock *sk, bool create,
					    bool *out);

/*
 * The tables' locks, inline. A packet's hooks take its entry's a dozen
 * times a request, always with preemption off already; the kernel's
 * raw_spin_lock_irqsave() is a call that counts preemption too, and its
 * unlock another call (UNINLINE_SPIN_UNLOCK on Debian's kernels): about
 * 30 instructions a take, against about 12 for the same queued spinlock
 * taken inline with interrupts off (on 7.x the unlock stays a static
 * call). A kernel that checks its locks (lockdep, DEBUG_SPINLOCK) gets
 * the kernel's calls, so that lockdep still sees every take. An entry's
 * lock is taken and dropped only through these (netlat_skt_lock(),
 * netlat_skt_lock_ent(), netlat_skt_unlock()): an inline take paired with
 * the kernel's unlock would unbalance the preemption count.
 */
#if defined(CONFIG_DEBUG_SPINLOCK) || defined(CONFIG_DEBUG_LOCK_ALLOC)
#define netlat_skt_raw_lock_irqsave(l, flags)	raw_spin_lock_irqsave(l, flags)
#define netlat_skt_raw_unlock_irqrestore(l, flags) \
	raw_spin_unlock_irqrestore(l, flags)
/* the pool's, under an entry's: interrupts off already */
#define netlat_skt_raw_lock(l) \
	do { lockdep_assert_irqs_disabled(); raw_spin_lock(l); } while (0)
#define netlat_skt_raw_unlock(l)		raw_spin_unlock(l)
#else
#define netlat_skt_raw_lock_irqsave(l, flags)		\
	do {						\
		local_irq_save(flags);			\
		arch_spin_lock(&(l)->raw_lock);		\
		__acquire(l);				\
	} while (0)
#define netlat_skt_raw_unlock_irqrestore(l, flags)	\
	do {						\
		__release(l);				\
		arch_spin_unlock(&(l)->raw_lock);	\
		local_irq_restore(flags);		\
	} while (0)
#define netlat_skt_raw_lock(l) \
	do { arch_spin_lock(&(l)->raw_lock); __acquire(l); } while (0)
#define netlat_skt_raw_unlock(l) \
	do { __release(l); arch_spin_unlock(&(l)->raw_lock); } while (0)
#endif

/*
 * Lock @e if it still belongs to @sk (it may have been freed meanwhile).
 * Inline: every packet's hooks take it several times.
 */
static __always_inline bool netlat_skt_lock(struct netlat_skt_ent *e,
					    const struct sock *sk,
					    unsigned long *flags)
{
	netlat_skt_raw_lock_irqsave(&e->lock, *flags);
	if (likely(e->sk == sk))
		return true;
	netlat_skt_raw_unlock_irqrestore(&e->lock, *flags);
	return false;
}

/* Lock @e whoever it belongs to (an eviction, the flows ioctl). */
static __always_inline void netlat_skt_lock_ent(struct netlat_skt_ent *e,
						unsigned long *flags)
{
	netlat_skt_raw_lock_irqsave(&e->lock, *flags);
}

static __always_inline void netlat_skt_unlock(struct netlat_skt_ent *e,
					      unsigned long flags)
{
	netlat_skt_raw_unlock_irqrestore(&e->lock, flags);
}

/*
 * Whether @e holds no packet of @sk, read without its lock: only for a
 * caller whom @sk's own lock orders after every push of @sk's packets.
 * An entry claimed by another socket meanwhile holds none of them.
 */
static __always_inline bool netlat_skt_idle(const struct netlat_skt_ent *e,
					    const struct sock *sk)
{
	return READ_ONCE(e->head) == READ_ONCE(e->tail) ||
	       READ_ONCE(e->sk) != sk;
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

/*
 * The FIFO walk (entry locked): inline, as the hooks take it several
 * times a packet.
 */
static __always_inline void *netlat_skt_slot(struct netlat_skt *t,
					     const struct netlat_skt_cur *c)
{
	return t->blks + (size_t)c->blk * NETLAT_SKT_BLK_BYTES +
	       (c->pos & NETLAT_SKT_MASK) * NETLAT_SKT_SLOT;
}

static __always_inline bool netlat_skt_first(const struct netlat_skt_ent *e,
					     struct netlat_skt_cur *c)
{
	c->pos = e->head;
	c->blk = e->head_blk;
	return e->head != e->tail;
}

static __always_inline bool netlat_skt_last(const struct netlat_skt_ent *e,
					    struct netlat_skt_cur *c)
{
	c->pos = e->tail - 1;
	c->blk = e->tail_blk;
	return e->head != e->tail;
}

static __always_inline bool netlat_skt_next(struct netlat_skt *t,
					    const struct netlat_skt_ent *e,
					    struct netlat_skt_cur *c)
{
	if (c->pos + 1 == e->tail)
		return false;
	c->pos++;
	if (!(c->pos & NETLAT_SKT_MASK))
		c->blk = t->link[c->blk].next;
	return true;
}

static __always_inline bool netlat_skt_prev(struct netlat_skt *t,
					    const struct netlat_skt_ent *e,
					    struct netlat_skt_cur *c)
{
	if (c->pos == e->head)
		return false;
	if (!(c->pos & NETLAT_SKT_MASK))
		c->blk = t->link[c->blk].prev;
	c->pos--;
	return true;
}

#define NETLAT_SKT_AT_STEPS	4	/* blocks netlat_skt_at() walks back */

/*
 * The slot of position @pos of @e if it is in the FIFO and near its tail
 * (a packet that just arrived); NULL if not.
 */
static __always_inline void *netlat_skt_at(struct netlat_skt *t,
					   struct netlat_skt_ent *e, u32 pos)
{
	struct netlat_skt_cur c;
	u32 steps;

	if (!netlat_skt_last(e, &c) || pos - e->head >= e->tail - e->head)
		return NULL;
	steps = ((c.pos & ~NETLAT_SKT_MASK) - (pos & ~NETLAT_SKT_MASK)) /
		NETLAT_SKT_BLK_SLOTS;
	if (steps > NETLAT_SKT_AT_STEPS)
		return NULL;
	while (steps--)
		c.blk = t->link[c.blk].prev;
	c.pos = pos;
	return netlat_skt_slot(t, &c);
}

/*
 * Ending packets in batches. A socket's packets end in runs (an ACK
 * acknowledges several, a read copies several, a close ends them all):
 * under the entry's lock the run's packets are copied out of the FIFO
 * into a batch on the caller's stack, then accounted (histograms,
 * counters, records) with the lock dropped, so that the lock is held for
 * a few loads and stores a packet whatever a record costs. A batch holds
 * NETLAT_SKT_BATCH packets; a longer run takes the lock again for the
 * rest. The type says which packets end (@end), what it keeps of the
 * entry while it holds the lock (@held) and how it accounts a batch
 * (@account); the helpers are inline and their callbacks constants, so
 * that each walk compiles to the loop it would be written as, with no
 * call through a pointer.
 */
#define NETLAT_SKT_BATCH	4	/* packets ended per lock hold */

/*
 * What @end says of a packet (bits; none: it has not ended, it stays and
 * the walk goes on). It may change the packet's slot first: the batch
 * gets the slot as @end left it.
 */
#define NETLAT_SKT_TAKE		1U	/* ended: copied into the batch */
#define NETLAT_SKT_POP		2U	/* out of the FIFO, if at its head */
#define NETLAT_SKT_STOP		4U	/* the walk ends with it */

/*
 * The packets of @e (locked) that end, from the head, into @batch (slots
 * of @size bytes) until @end says stop, the FIFO ends or the batch is
 * full. A packet may end out of order (a later one's bytes copied first):
 * one not at the head once a packet before it stayed is marked by @end
 * and left for a later walk to pop. @end is shown the batch's count so
 * far (@n), @arg its caller's. Returns the packets taken.
 */
static __always_inline unsigned int
netlat_skt_take(struct netlat_skt *t, struct netlat_skt_ent *e, void *batch,
		size_t size,
		unsigned int (*end)(struct netlat_skt_ent *e, void *slot,
				    void *arg, unsigned int n),
		void *arg)
{
	struct netlat_skt_cur c;
	unsigned int n = 0, v;
	bool head = true, more;

	lockdep_assert_held(&e->lock);
	for (more = netlat_skt_first(e, &c); more && n < NETLAT_SKT_BATCH;) {
		void *slot = netlat_skt_slot(t, &c);

		v = end(e, slot, arg, n);
		/* before the pop: a block freed may go to another entry */
		if (v & NETLAT_SKT_TAKE)
			memcpy(batch + (size_t)n++ * size, slot, size);
		if (v & NETLAT_SKT_STOP)
			break;
		if (head && (v & NETLAT_SKT_POP)) {
			netlat_skt_pop(t, e);
			more = netlat_skt_first(e, &c);
		} else {
			head = false;
			more = netlat_skt_next(t, e, &c);
		}
	}
	return n;
}

/*
 * A run of @sk's packets ends: batches taken by netlat_skt_take() from
 * its entry @e, each with the lock held, then @held (lock still held,
 * @n taken: what the records need of the entry), then accounted by
 * @account without the lock; again while a batch comes back full. Stops
 * if @e is no longer @sk's.
 */
static __always_inline void
netlat_skt_end_run(struct netlat_skt *t, struct netlat_skt_ent *e,
		   const struct sock *sk, void *batch, size_t size,
		   unsigned int (*end)(struct netlat_skt_ent *e, void *slot,
				       void *arg, unsigned int n),
		   void (*held)(struct netlat_skt *t, struct netlat_skt_ent *e,
				void *arg, unsigned int n),
		   void (*account)(void *arg, unsigned int n), void *arg)
{
	unsigned long flags;
	unsigned int n;

	do {
		if (!netlat_skt_lock(e, sk, &flags))
			return;
		n = netlat_skt_take(t, e, batch, size, end, arg);
		held(t, e, arg, n);
		netlat_skt_unlock(e, flags);
		account(arg, n);
	} while (n == NETLAT_SKT_BATCH);
}

static __always_inline struct netlat_skt_ent *
netlat_skt_ent_at(struct netlat_skt *t, u32 i)
{
	return (struct netlat_skt_ent *)(t->ents + (size_t)i * t->ent_size);
}

/* The table type's own state of @t (netlat_skt_type.priv_size). */
static __always_inline void *netlat_skt_priv(struct netlat_skt *t)
{
	return t->priv;
}

/*
 * What the entry @sk's hash names says, without a call: the entry if it
 * is @sk's, its verdict current and followed; NULL otherwise, with *@out
 * set if it is @sk's, current and kept out. A hook asks this first, so
 * that a socket the filters keep out costs it a few loads and no call.
 */
static __always_inline struct netlat_skt_ent *
netlat_skt_find_home(struct netlat_skt *t, const struct sock *sk, bool *out)
{
	struct netlat_skt_ent *e = netlat_skt_ent_at(t,
						     hash_ptr(sk, t->ent_bits));
	u64 v;

	if (likely(READ_ONCE(e->sk) == sk)) {
		v = READ_ONCE(e->verdict);
		if (likely(v >> 32 == netlat_filter_gen_get())) {
			if (likely(!(v & NETLAT_SKT_OUT)))
				return e;
			*out = true;
		}
	}
	return NULL;
}

/*
 * The entry of @sk if the table follows it, claiming one if @create (a
 * free one, else an idle one's); NULL if none. A socket the filters keep
 * out keeps its entry (so that its hooks stop here) but is not returned:
 * *@out says so, if asked (for a socket without an entry too). Inline:
 * every hook of every packet asks, and a socket is nearly always in the
 * entry its hash names, its verdict current.
 */
static __always_inline struct netlat_skt_ent *
netlat_skt_find(struct netlat_skt *t, const struct sock *sk, bool create,
		bool *out)
{
	bool home_out = false;
	struct netlat_skt_ent *e = netlat_skt_find_home(t, sk, &home_out);

	if (likely(e))
		return e;
	if (home_out) {
		/* kept out: every hook of its packets ends here */
		if (out)
			*out = true;
		return NULL;
	}
	return netlat_skt_find_slow(t, sk, create, out);
}

static __always_inline u32 netlat_skt_index(struct netlat_skt *t,
					    const struct netlat_skt_ent *e)
{
	return ((const char *)e - t->ents) / t->ent_size;
}

#endif /* _NETLAT_SKTBL_H */
