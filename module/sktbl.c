// SPDX-License-Identifier: GPL-2.0
/*
 * The socket table core (see sktbl.h).
 *
 * Memory: one vmalloc area per table, sized by its budget: half for the
 * entries (a power of two of them, at most NETLAT_SKT_MAX_ENTS), the rest
 * for blocks of NETLAT_SKT_BLK_SLOTS packet slots. An entry's FIFO is a
 * chain of blocks (links kept beside the blocks, not in them); a block is
 * taken when the FIFO's tail enters it and given back when its head
 * leaves it, so an idle socket holds none.
 *
 * Locking: an entry's raw spinlock (interrupts off) covers its fields and
 * its blocks' links; the pool's free list has its own, taken inside an
 * entry's when a FIFO enters or leaves a block (for each packet of a
 * socket with one in flight at a time).
 */
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <linux/kprobes.h>
#include <linux/error-injection.h>
#include <linux/netlat.h>
#include "sktbl.h"
#include "filter.h"
#include "keys.h"

#define NETLAT_SKT_PROBE	8	/* entries looked at from the hash */
#define NETLAT_SKT_MIN_ENTS	16
#define NETLAT_SKT_MAX_ENTS	(1U << 16)

u64 netlat_table_bytes = NETLAT_TABLE_BYTES_DEFAULT;

/* The entry @sk holds, followed or not; NULL if none. */
notrace struct netlat_skt_ent *netlat_skt_lookup(struct netlat_skt *t,
						 const struct sock *sk)
{
	u32 h = hash_ptr(sk, t->ent_bits), mask = (1U << t->ent_bits) - 1, i;
	struct netlat_skt_ent *e;

	for (i = 0; i < NETLAT_SKT_PROBE; i++) {
		e = netlat_skt_ent_at(t, (h + i) & mask);
		if (READ_ONCE(e->sk) == sk)
			return e;
	}
	return NULL;
}
NOKPROBE_SYMBOL(netlat_skt_lookup);

/* ---- the pool ---- */

static notrace u32 netlat_skt_blk_get(struct netlat_skt *t)
{
	u32 b;

	netlat_skt_raw_lock(&t->pool_lock);
	b = t->free_blk;
	if (b != NETLAT_SKT_NONE) {
		t->free_blk = t->link[b].next;
		WRITE_ONCE(t->nr_free, t->nr_free - 1);
	}
	netlat_skt_raw_unlock(&t->pool_lock);
	return b;
}
NOKPROBE_SYMBOL(netlat_skt_blk_get);

static notrace void netlat_skt_blk_put(struct netlat_skt *t, u32 b)
{
	netlat_skt_raw_lock(&t->pool_lock);
	t->link[b].next = t->free_blk;
	t->free_blk = b;
	WRITE_ONCE(t->nr_free, t->nr_free + 1);
	netlat_skt_raw_unlock(&t->pool_lock);
}
NOKPROBE_SYMBOL(netlat_skt_blk_put);

/*
 * A zeroed slot at the FIFO's tail, NULL if the socket has its most in
 * flight or the pool is empty (*@why).
 */
notrace void *netlat_skt_push(struct netlat_skt *t, struct netlat_skt_ent *e,
			      enum netlat_skt_full *why)
{
	struct netlat_skt_cur c = { .pos = e->tail, .blk = e->tail_blk };
	void *p;
	u32 b;

	lockdep_assert_held(&e->lock);
	if (e->tail - e->head >= t->type->max_pkts) {
		*why = NETLAT_SKT_FULL_CAP;
		return NULL;
	}
	if (e->head == e->tail && c.blk != NETLAT_SKT_NONE) {
		/* an empty FIFO's kept block: every slot of it is free */
	} else if (c.blk == NETLAT_SKT_NONE || !(c.pos & NETLAT_SKT_MASK)) {
		b = netlat_skt_blk_get(t);
		if (b == NETLAT_SKT_NONE) {
			*why = NETLAT_SKT_FULL_MEM;
			return NULL;
		}
		t->link[b].next = NETLAT_SKT_NONE;
		t->link[b].prev = c.blk;
		if (c.blk == NETLAT_SKT_NONE)
			e->head_blk = b;
		else
			t->link[c.blk].next = b;
		e->tail_blk = b;
		c.blk = b;
	}
	p = netlat_skt_slot(t, &c);
	memset(p, 0, NETLAT_SKT_SLOT);
	e->tail++;
	e->used = jiffies;
	return p;
}
NOKPROBE_SYMBOL(netlat_skt_push);

/*
 * The FIFO's head packet is done: its block goes back when it leaves it,
 * but for the last one, which an emptied FIFO keeps while more than half
 * of the pool is free: a socket with one packet in flight at a time (a
 * request, its answer) would otherwise take the pool's lock twice a
 * packet. netlat_skt_clear() gives it back (a release, an eviction).
 */
notrace void netlat_skt_pop(struct netlat_skt *t, struct netlat_skt_ent *e)
{
	u32 b = e->head_blk;

	lockdep_assert_held(&e->lock);
	e->head++;
	if (e->head == e->tail) {
		/* one packet was left: its block is the tail's too */
		if (READ_ONCE(t->nr_free) > t->nblk / 2)
			return;
		e->head_blk = e->tail_blk = NETLAT_SKT_NONE;
		netlat_skt_blk_put(t, b);
	} else if (!(e->head & NETLAT_SKT_MASK)) {
		e->head_blk = t->link[b].next;
		t->link[e->head_blk].prev = NETLAT_SKT_NONE;
		netlat_skt_blk_put(t, b);
	}
}
NOKPROBE_SYMBOL(netlat_skt_pop);

/* Every packet of @e dropped unended. */
notrace void netlat_skt_clear(struct netlat_skt *t, struct netlat_skt_ent *e)
{
	u32 b = e->head_blk, next;

	lockdep_assert_held(&e->lock);
	while (b != NETLAT_SKT_NONE) {
		next = t->link[b].next;
		netlat_skt_blk_put(t, b);
		b = next;
	}
	e->head = e->tail;
	e->head_blk = e->tail_blk = NETLAT_SKT_NONE;
}
NOKPROBE_SYMBOL(netlat_skt_clear);

/* @e's socket is gone: a new one may take it once the lock is dropped. */
notrace void netlat_skt_release(struct netlat_skt *t, struct netlat_skt_ent *e)
{
	netlat_skt_clear(t, e);
	/* stale (no generation is 0): the next socket asks */
	WRITE_ONCE(e->verdict, 0);
	smp_store_release(&e->sk, NULL);
}
NOKPROBE_SYMBOL(netlat_skt_release);

/* ---- claim, verdict, eviction ---- */

/* What the rules of generation @gen say of @sk, for an entry of @t. */
static __always_inline u64 netlat_skt_verdict(const struct netlat_skt *t,
					      const struct sock *sk, u32 gen)
{
	return (u64)gen << 32 |
	       netlat_filter_sk_verdict(t->type->groups, t->type->rec_group, sk);
}

/*
 * @e (claimed for @sk) under the rules of @gen: a socket they now keep out
 * loses its packets. Returns the verdict.
 */
static notrace u64 netlat_skt_refresh(struct netlat_skt *t,
				      struct netlat_skt_ent *e,
				      const struct sock *sk, u32 gen,
				      bool claimed)
{
	u64 v = netlat_skt_verdict(t, sk, gen);
	unsigned long flags;

	if (!netlat_skt_lock(e, sk, &flags))
		return v;
	if (v & NETLAT_SKT_OUT)
		netlat_skt_clear(t, e);
	if (t->type->refresh)
		t->type->refresh(e, sk, v, claimed);
	/* the keys may have changed too (keys.c renews the verdicts) */
	e->key = v & NETLAT_SKT_OUT ? 0 : netlat_keys_of(sk);
	WRITE_ONCE(e->verdict, v);
	netlat_skt_unlock(e, flags);
	return v;
}
NOKPROBE_SYMBOL(netlat_skt_refresh);

/*
 * No free entry near @sk's hash: the one without packets whose last
 * packet is oldest goes to @sk; NULL if every one has packets in flight
 * or is busy.
 */
static notrace struct netlat_skt_ent *
netlat_skt_evict(struct netlat_skt *t, const struct sock *sk, u32 h)
{
	u32 mask = (1U << t->ent_bits) - 1, i;
	struct netlat_skt_ent *e, *victim = NULL;
	const struct sock *old = NULL;
	unsigned long flags, used = 0;

	for (i = 0; i < NETLAT_SKT_PROBE; i++) {
		e = netlat_skt_ent_at(t, (h + i) & mask);
		if (READ_ONCE(e->head) != READ_ONCE(e->tail) ||
		    (t->type->busy && t->type->busy(e)))
			continue;
		if (!victim || time_before(READ_ONCE(e->used), used)) {
			victim = e;
			used = READ_ONCE(e->used);
		}
	}
	if (!victim)
		return NULL;
	netlat_skt_lock_ent(victim, &flags);
	old = victim->sk;
	if (!old || victim->head != victim->tail ||
	    (t->type->busy && t->type->busy(victim))) {
		netlat_skt_unlock(victim, flags);
		return NULL;
	}
	if (t->type->evict)
		t->type->evict(t, victim);
	netlat_skt_clear(t, victim);
	WRITE_ONCE(victim->verdict, 0);
	victim->used = jiffies;
	/* handlers of the old socket find it no more, or fail to lock it */
	WRITE_ONCE(victim->sk, sk);
	netlat_skt_unlock(victim, flags);
	netlat_hist_count(t->type->evicted, 1);
	return victim;
}
NOKPROBE_SYMBOL(netlat_skt_evict);

/*
 * @e was just claimed for @sk. Two hooks of one socket may claim at once
 * (a sendmsg's entry probe runs before the socket lock, a receive hook
 * before the backlog): a socket with two entries would have packets that
 * lookups, which return the first, never find. So the one that finds
 * another entry of @sk gives its own back, unless a packet is in it
 * already, and takes that one (if both do, both go, and the next packet
 * claims anew); NULL if @e stays.
 */
static notrace struct netlat_skt_ent *
netlat_skt_settle(struct netlat_skt *t, const struct sock *sk,
		  struct netlat_skt_ent *e)
{
	u32 h = hash_ptr(sk, t->ent_bits), mask = (1U << t->ent_bits) - 1, i;
	struct netlat_skt_ent *o;
	unsigned long flags;
	bool mine = true;

	/*
	 * Our claim before the look at the others (an eviction's store is
	 * only a release): of two racing claimers one sees the other.
	 */
	smp_mb();
	for (i = 0; i < NETLAT_SKT_PROBE; i++) {
		o = netlat_skt_ent_at(t, (h + i) & mask);
		if (o != e && READ_ONCE(o->sk) == sk)
			break;
	}
	if (i == NETLAT_SKT_PROBE)
		return NULL;
	/* a packet another hook put in @e meanwhile keeps it: the other goes */
	if (netlat_skt_lock(e, sk, &flags)) {
		mine = netlat_skt_len(e);
		if (!mine)
			netlat_skt_release(t, e);
		netlat_skt_unlock(e, flags);
	} else {
		mine = false;	/* already another socket's */
	}
	return mine ? NULL : o;
}
NOKPROBE_SYMBOL(netlat_skt_settle);

/*
 * netlat_skt_find() past its first look: the whole probe, a claim, a
 * verdict to ask. The rules are read once per socket and again after
 * they change.
 */
notrace struct netlat_skt_ent *netlat_skt_find_slow(struct netlat_skt *t,
						    const struct sock *sk,
						    bool create, bool *out)
{
	u32 gen = netlat_filter_gen_get(), mask, h, i;
	struct netlat_skt_ent *e, *o;
	u64 v;

	e = netlat_skt_lookup(t, sk);
	if (e)
		goto found;
	if (!create && !out)
		return NULL;
	mask = (1U << t->ent_bits) - 1;
	h = hash_ptr(sk, t->ent_bits);
	for (i = 0; create && i < NETLAT_SKT_PROBE; i++) {
		e = netlat_skt_ent_at(t, (h + i) & mask);
		if (!READ_ONCE(e->sk) && !cmpxchg(&e->sk, NULL, sk)) {
			WRITE_ONCE(e->used, jiffies);
			goto claimed;
		}
	}
	e = create ? netlat_skt_evict(t, sk, h) : NULL;
	if (e)
		goto claimed;
	/* one that would not be followed anyway is not missed */
	v = netlat_skt_verdict(t, sk, gen);
	if (create && !(v & NETLAT_SKT_OUT))
		netlat_hist_count(t->type->no_entry, 1);
	e = NULL;
	goto verdict;
claimed:
	o = netlat_skt_settle(t, sk, e);
	if (!o) {
		v = netlat_skt_refresh(t, e, sk, gen, true);
		goto verdict;
	}
	e = o;
found:
	v = READ_ONCE(e->verdict);
	if (unlikely(v >> 32 != gen))
		v = netlat_skt_refresh(t, e, sk, gen, false);
verdict:
	if (v & NETLAT_SKT_OUT) {
		if (out)
			*out = true;
		return NULL;
	}
	return e;
}
NOKPROBE_SYMBOL(netlat_skt_find_slow);

/* Entry @i, NULL past the last (handlers and process context). */
notrace struct netlat_skt_ent *netlat_skt_ent(struct netlat_skt *t, u32 i)
{
	return i < (1U << t->ent_bits) ? netlat_skt_ent_at(t, i) : NULL;
}
NOKPROBE_SYMBOL(netlat_skt_ent);

/* ---- process context ---- */

u32 netlat_skt_nr_ents(const struct netlat_skt *t)
{
	return 1U << t->ent_bits;
}

/*
 * What the table in force of @h holds (0 without one): entries, packet
 * slots, bytes. Process context, no lock: a figure for reports.
 */
u64 netlat_skt_home_capacity(struct netlat_skt_home *h, u32 *ents, u32 *slots)
{
	const struct netlat_skt *t;
	u64 bytes;

	rcu_read_lock_sched();
	t = netlat_skt_home_get(h);
	*ents = t ? 1U << t->ent_bits : 0;
	*slots = t ? t->nblk * NETLAT_SKT_BLK_SLOTS : 0;
	bytes = t ? t->bytes : 0;
	rcu_read_unlock_sched();
	return bytes;
}

/*
 * The sockets the table in force of @h follows now (its type's
 * followed(), else every entry with a socket). Process context, no
 * lock: a racy count, for reports.
 */
u64 netlat_skt_home_flows(struct netlat_skt_home *h)
{
	bool (*followed)(const struct netlat_skt_ent *e) = h->type->followed;
	struct netlat_skt *t;
	u64 n = 0;
	u32 i;

	rcu_read_lock_sched();
	t = netlat_skt_home_get(h);
	for (i = 0; t && i < netlat_skt_nr_ents(t); i++) {
		const struct netlat_skt_ent *e = netlat_skt_ent(t, i);

		n += READ_ONCE(e->sk) && (!followed || followed(e));
	}
	rcu_read_unlock_sched();
	return n;
}

/*
 * A table of @type within @bytes (vmalloc'ed: a budget in the megabytes),
 * NULL if no memory or a budget too small for the least entries and
 * blocks.
 */
noinline struct netlat_skt *netlat_skt_alloc(const struct netlat_skt_type *type,
					     u64 bytes)
{
	/* the type's state after the header, in the budget too */
	size_t hdr = ALIGN(sizeof(struct netlat_skt) + type->priv_size,
			   SMP_CACHE_BYTES);
	u64 ents, rest, nblk, link_bytes;
	struct netlat_skt *t;
	u32 i, bits;
	char *mem;

	BUILD_BUG_ON(!is_power_of_2(NETLAT_SKT_BLK_SLOTS));
	if (bytes < hdr)
		return NULL;
	ents = (bytes - hdr) / 2 / type->ent_size;
	ents = clamp_t(u64, ents, NETLAT_SKT_MIN_ENTS, NETLAT_SKT_MAX_ENTS);
	bits = ilog2(ents);
	ents = 1ULL << bits;
	if (hdr + ents * type->ent_size >= bytes)
		return NULL;
	/* the link array's alignment, within the budget too */
	rest = bytes - hdr - ents * type->ent_size;
	rest -= min_t(u64, rest, SMP_CACHE_BYTES);
	nblk = rest / (NETLAT_SKT_BLK_BYTES + sizeof(struct netlat_skt_link));
	nblk = min_t(u64, nblk, U32_MAX / NETLAT_SKT_BLK_SLOTS);
	if (nblk < 2)
		return NULL;
	link_bytes = ALIGN(nblk * sizeof(struct netlat_skt_link),
			   SMP_CACHE_BYTES);
	/* charged to the caller; a budget that cannot be had fails quietly */
	mem = __vmalloc(hdr + link_bytes + ents * type->ent_size +
			nblk * NETLAT_SKT_BLK_BYTES,
			GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	if (!mem)
		return NULL;
	t = (struct netlat_skt *)mem;
	memset(t, 0, sizeof(*t));
	t->type = type;
	if (type->priv_size) {
		t->priv = mem + sizeof(*t);
		memset(t->priv, 0, type->priv_size);
		if (type->priv_init)
			type->priv_init(t->priv);
	}
	t->ent_size = type->ent_size;
	t->ent_bits = bits;
	t->nblk = nblk;
	t->bytes = hdr + link_bytes + ents * type->ent_size +
		   nblk * NETLAT_SKT_BLK_BYTES;
	t->link = (struct netlat_skt_link *)(mem + hdr);
	t->ents = mem + hdr + link_bytes;
	t->blks = t->ents + ents * type->ent_size;
	raw_spin_lock_init(&t->pool_lock);
	memset(t->ents, 0, ents * type->ent_size);
	for (i = 0; i < ents; i++) {
		struct netlat_skt_ent *e = netlat_skt_ent_at(t, i);

		raw_spin_lock_init(&e->lock);
		e->head_blk = e->tail_blk = NETLAT_SKT_NONE;
	}
	/* the free list in order: the first blocks are used most */
	for (i = 0; i < nblk; i++)
		t->link[i].next = i + 1 < nblk ? i + 1 : NETLAT_SKT_NONE;
	t->free_blk = 0;
	t->nr_free = nblk;
	return t;
}

/* the selftests fail it to test a configuration that cannot be had */
ALLOW_ERROR_INJECTION(netlat_skt_alloc, NULL);

void netlat_skt_free(struct netlat_skt *t)
{
	vfree(t);
}

/* Packets still in @t, which no handler is inside: not followed. */
static u64 netlat_skt_count_left(struct netlat_skt *t)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < netlat_skt_nr_ents(t); i++) {
		struct netlat_skt_ent *e = netlat_skt_ent_at(t, i);

		if (!e->sk || !netlat_skt_len(e))
			continue;
		n += t->type->left ? t->type->left(t, e) : netlat_skt_len(e);
	}
	if (n)
		netlat_hist_count(t->type->untracked, n);
	return n;
}

/*
 * Process context, @n->h locked: what @want asks of the table within
 * @budget (netlat_config.table_bytes), the new table allocated if one is
 * needed. @want: whether the table should exist, within its share of the
 * budget; NETLAT_SKT_AS_IS leaves that to the table in force, so that
 * callers that race (the level set under netlat_lock, a group going on
 * under the registry's mutex) never decide it from a stale reading.
 * @renew: replaced even if it exists as wanted (a group of it went off,
 * or the level was set again). -ENOMEM: nothing allocated.
 */
static int netlat_skt_home_decide(struct netlat_skt_next *n,
				  enum netlat_skt_want want, bool renew,
				  u64 budget)
{
	struct netlat_skt_home *h = n->h;
	struct netlat_skt *old;
	bool exists;

	lockdep_assert_held(&h->lock);
	old = rcu_dereference_protected(h->tbl, lockdep_is_held(&h->lock));
	exists = want == NETLAT_SKT_AS_IS ? !!old : want == NETLAT_SKT_WANT;
	n->bytes = exists ? budget / 8 * h->share : 0;
	n->t = NULL;
	n->replace = renew || !!old != exists || n->bytes != h->bytes;
	if (n->replace && exists) {
		n->t = netlat_skt_alloc(h->type, n->bytes);
		if (!n->t)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The first half of a change that must not fail once it begins (a new
 * configuration): @h locked and the new table allocated, or -ENOMEM with
 * nothing held. netlat_skt_home_commit() or _abort() ends it.
 */
int netlat_skt_home_prepare(struct netlat_skt_home *h,
			    enum netlat_skt_want want, bool renew, u64 budget,
			    struct netlat_skt_next *n)
{
	int err;

	n->h = h;
	mutex_lock(&h->lock);
	err = netlat_skt_home_decide(n, want, renew, budget);
	if (err)
		mutex_unlock(&h->lock);
	return err;
}

void netlat_skt_home_abort(struct netlat_skt_next *n)
{
	lockdep_assert_held(&n->h->lock);
	netlat_skt_free(n->t);
	mutex_unlock(&n->h->lock);
}

/*
 * The prepared table in force, @n->h unlocked. @count_left: the old
 * table's packets in flight count as not followed (not when the
 * histograms are reset with it). Returns 1 if a table came or went, else 0.
 */
int netlat_skt_home_commit(struct netlat_skt_next *n, bool count_left)
{
	struct netlat_skt_home *h = n->h;
	struct netlat_skt *old;

	lockdep_assert_held(&h->lock);
	if (!n->replace) {
		mutex_unlock(&h->lock);
		return 0;
	}
	old = rcu_dereference_protected(h->tbl, lockdep_is_held(&h->lock));
	rcu_assign_pointer(h->tbl, n->t);
	h->bytes = n->bytes;
	if (old) {
		/* no handler is inside the old table once this returns */
		synchronize_rcu();
		if (count_left) {
			u64 left = netlat_skt_count_left(old);

			if (n->t && h->type->carry)
				h->type->carry(old, n->t, left);
		}
		netlat_skt_free(old);
	}
	mutex_unlock(&h->lock);
	return old || n->t;
}

/*
 * Process context: the table as @want asks (netlat_skt_home_decide())
 * within netlat_table_bytes, at once. Returns 1 if a table came or went,
 * 0 if not, -ENOMEM (the old one kept).
 */
int netlat_skt_home_set(struct netlat_skt_home *h, enum netlat_skt_want want,
			bool renew, bool count_left)
{
	struct netlat_skt_next n = { .h = h };
	int err;

	mutex_lock(&h->lock);
	err = netlat_skt_home_decide(&n, want, renew,
				     READ_ONCE(netlat_table_bytes));
	if (err) {
		mutex_unlock(&h->lock);
		return err;
	}
	return netlat_skt_home_commit(&n, count_left);
}
