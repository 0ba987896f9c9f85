// SPDX-License-Identifier: GPL-2.0
/*
 * The packet level's histograms by key (NETLAT_KEY_*), and NETLAT_IOC_HIST.
 *
 * A socket's key is worked out when its table entry takes a verdict
 * (netlat_keys_of(): the slot, and the slot's generation above it), so a
 * packet only adds to the set its entry names. At most
 * max_keys slots; a key that finds none free goes to the other set
 * (slot 0) and is counted as folded. A few folded keys are candidates:
 * their packets are counted (nothing else), so that the busiest can be
 * told. Then a work item, once a second, evicts the slots whose keys had
 * no packet since its last look, and the least busy one when a candidate
 * had more than twice its packets; it hands each slot freed to the
 * busiest candidate and renews every socket's verdict, so that the
 * candidate's sockets find their slot and the folded ones try again. The
 * busiest keys keep their slots. A freed slot's sums move to the other's:
 * the keys and the other add up to the host's.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/rcupdate.h>
#include <linux/kprobes.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>
#include <linux/error-injection.h>
#include <net/sock.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include "compat.h"
#include "keys.h"
#include "filter.h"
#include "uarg.h"

struct netlat_key_id {
	u64 cgroup;
	u32 netns;
	u16 port;
	u16 zero;
};

enum netlat_slot_state {
	NETLAT_SLOT_FREE,
	NETLAT_SLOT_USED,
	NETLAT_SLOT_DRAINING,	/* evicted, its writers not yet gone */
};

/*
 * A key: its slot in the low bits (or a candidate's index, from
 * NETLAT_KEY_CAND_BASE on), the slot's generation above.
 */
#define NETLAT_KEY_SLOT_BITS	9
#define NETLAT_KEY_GEN_MASK	((1U << (32 - NETLAT_KEY_SLOT_BITS)) - 1)
#define NETLAT_KEY_CANDS	8
#define NETLAT_KEY_CAND_BASE	(NETLAT_MAX_KEYS_MAX + 1)
/* a slot is taken from a key with fewer than 1/NETLAT_KEY_MARGIN of its packets */
#define NETLAT_KEY_MARGIN	2

struct netlat_key_slot {
	struct netlat_key_id id;
	u32 gen;		/* what its sockets' keys carry; 0: none */
	u8 state;
	u64 seen;		/* its packets at the work's last look; a new
				 * slot's: none yet, so it outlives one look */
	struct netlat_hist_cpu __percpu *h;
};

/*
 * A folded key whose packets are counted. Its counters are never zeroed
 * (a remote store would race with the increments): a new candidate's
 * first look takes their sum as its base, the next one measures.
 */
struct netlat_key_cand {
	struct netlat_key_id id;
	u32 gen;		/* what its sockets' keys carry; 0: free */
	bool fresh;		/* no look since it was taken: no base yet */
	u64 seen;		/* its packets at the work's last look */
	u64 rate;		/* its packets between the last two looks;
				 * U64_MAX: not measured yet */
	u64 __percpu *packets;
};

struct netlat_keys {
	u32 by;
	u32 max;
	raw_spinlock_t lock;		/* a slot's state, id and gen; a
					 * candidate's id, gen and rate */
	bool pressure;			/* a key found no slot (lock) */
	bool swapped;			/* a candidate was replaced since the
					 * last look (lock) */
	atomic64_t evicted;
	atomic64_t folded;
	struct netlat_hist_sum *gone;	/* evicted slots' sums (mutex) */
	u64 mem;
	struct netlat_key_cand cand[NETLAT_KEY_CANDS];
	struct netlat_key_slot slot[];	/* [0]: the other */
};

static struct netlat_keys __rcu *netlat_keys;
/* The table pointer, the work's evictions and every reader of the sums. */
static DEFINE_MUTEX(netlat_keys_mutex);
static atomic_t netlat_keys_gen;
static void netlat_keys_look(struct work_struct *work);
static DECLARE_DELAYED_WORK(netlat_keys_work, netlat_keys_look);

/*
 * The service port: the local port of a socket, unless that port is in
 * its namespace's local port range (an ephemeral one) and the remote port
 * is not: then the remote port, the server's.
 */
static notrace u16 netlat_keys_port(const struct sock *sk)
{
	u16 lport = ntohs(inet_sk(sk)->inet_sport);
	u16 rport = ntohs(inet_sk(sk)->inet_dport);
	int lo, hi;

	inet_get_local_port_range(sock_net(sk), &lo, &hi);
	if (lport >= lo && lport <= hi && rport && (rport < lo || rport > hi))
		return rport;
	return lport;
}
NOKPROBE_SYMBOL(netlat_keys_port);

static notrace void netlat_keys_id(u32 by, const struct sock *sk,
				   struct netlat_key_id *id)
{
	memset(id, 0, sizeof(*id));
	if (by & NETLAT_KEY_PORT)
		id->port = netlat_keys_port(sk);
	if (by & NETLAT_KEY_NETNS)
		id->netns = netlat_net_inum(sock_net(sk));
	if (by & NETLAT_KEY_CGROUP)
		id->cgroup = netlat_sk_cgroup_id(sk);
}
NOKPROBE_SYMBOL(netlat_keys_id);

/*
 * Nonzero, and new for every slot or candidate taken: an old socket's key
 * matches none (slots are taken at renewals, candidates a few a second at
 * most: 2^23 of them take months; a match then only miscounts).
 */
static notrace u32 netlat_keys_next_gen(void)
{
	u32 gen;

	do
		gen = (u32)atomic_inc_return(&netlat_keys_gen) &
		      NETLAT_KEY_GEN_MASK;
	while (!gen);
	return gen;
}
NOKPROBE_SYMBOL(netlat_keys_next_gen);

/*
 * The candidate key of @id, which found no slot (@ks locked): its own
 * candidate, a free one, one without packets at the last look, or, once
 * between looks, the least busy one measured; 0 (the other's, uncounted)
 * if none.
 */
static notrace u32 netlat_keys_cand_of(struct netlat_keys *ks,
				       const struct netlat_key_id *id)
{
	struct netlat_key_cand *c, *take = NULL, *least = NULL;
	u32 i;

	lockdep_assert_held(&ks->lock);
	for (i = 0; i < NETLAT_KEY_CANDS; i++) {
		c = &ks->cand[i];
		if (c->gen && !memcmp(&c->id, id, sizeof(*id)))
			goto found;
		if (!c->gen || !c->rate) {
			if (!take)
				take = c;
		} else if (c->rate != U64_MAX &&
			   (!least || c->rate < least->rate)) {
			least = c;
		}
	}
	if (!take && least && !ks->swapped) {
		take = least;
		ks->swapped = true;
	}
	if (!take)
		return 0;
	c = take;
	c->id = *id;
	c->fresh = true;
	c->rate = U64_MAX;
	WRITE_ONCE(c->gen, netlat_keys_next_gen());
found:
	return (NETLAT_KEY_CAND_BASE + (u32)(c - ks->cand)) |
	       c->gen << NETLAT_KEY_SLOT_BITS;
}
NOKPROBE_SYMBOL(netlat_keys_cand_of);

/* A key that takes a slot is a candidate no more (@ks locked). */
static notrace void netlat_keys_uncand(struct netlat_keys *ks,
				       const struct netlat_key_id *id)
{
	u32 i;

	lockdep_assert_held(&ks->lock);
	for (i = 0; i < NETLAT_KEY_CANDS; i++) {
		struct netlat_key_cand *c = &ks->cand[i];

		if (c->gen && !memcmp(&c->id, id, sizeof(*id))) {
			WRITE_ONCE(c->gen, 0);
			c->rate = 0;
		}
	}
}
NOKPROBE_SYMBOL(netlat_keys_uncand);

/*
 * @sk's key, with a slot taken for it if it has none and one is free
 * (any context; its table entry locked). Linear in max_keys: once per
 * socket and verdict, never per packet.
 */
notrace u32 netlat_keys_of(const struct sock *sk)
{
	struct netlat_keys *ks;
	struct netlat_key_slot *s;
	struct netlat_key_id id;
	unsigned long flags;
	u32 i, free = 0, key = 0;

	rcu_read_lock_sched_notrace();
	ks = rcu_dereference_sched(netlat_keys);
	if (!ks)
		goto none;
	netlat_keys_id(ks->by, sk, &id);
	raw_spin_lock_irqsave(&ks->lock, flags);
	for (i = 1; i <= ks->max; i++) {
		s = &ks->slot[i];
		if (s->state == NETLAT_SLOT_USED &&
		    !memcmp(&s->id, &id, sizeof(id))) {
			key = i | s->gen << NETLAT_KEY_SLOT_BITS;
			goto out;
		}
		if (s->state == NETLAT_SLOT_FREE && !free)
			free = i;
	}
	if (free) {
		s = &ks->slot[free];
		s->id = id;
		s->seen = U64_MAX;
		s->state = NETLAT_SLOT_USED;
		WRITE_ONCE(s->gen, netlat_keys_next_gen());
		key = free | s->gen << NETLAT_KEY_SLOT_BITS;
		netlat_keys_uncand(ks, &id);
	} else {
		ks->pressure = true;
		atomic64_inc(&ks->folded);
		key = netlat_keys_cand_of(ks, &id);
	}
out:
	raw_spin_unlock_irqrestore(&ks->lock, flags);
none:
	rcu_read_unlock_sched_notrace();
	return key;
}
NOKPROBE_SYMBOL(netlat_keys_of);

/*
 * The set a packet of @key adds to: its slot's while the slot is its;
 * else the other's, the packet counted for its candidate if it has one.
 */
static __always_inline struct netlat_hist_cpu __percpu *
netlat_keys_set_of(struct netlat_keys *ks, u32 key, u32 packets)
{
	u32 i = key & ((1U << NETLAT_KEY_SLOT_BITS) - 1);
	u32 gen = key >> NETLAT_KEY_SLOT_BITS;

	BUILD_BUG_ON(NETLAT_KEY_CAND_BASE + NETLAT_KEY_CANDS >
		     1U << NETLAT_KEY_SLOT_BITS);
	if (i && i <= ks->max && READ_ONCE(ks->slot[i].gen) == gen)
		return ks->slot[i].h;
	if (i >= NETLAT_KEY_CAND_BASE &&
	    i < NETLAT_KEY_CAND_BASE + NETLAT_KEY_CANDS) {
		struct netlat_key_cand *c = &ks->cand[i - NETLAT_KEY_CAND_BASE];

		if (READ_ONCE(c->gen) == gen)
			this_cpu_add(*c->packets, packets);
	}
	return ks->slot[0].h;
}

/*
 * The set @packets of @key add to besides the host's, NULL while keys are
 * off: for the handler that asks (preemption off), until it returns.
 */
notrace struct netlat_hist_cpu __percpu *netlat_keys_set(u32 key, u32 packets)
{
	struct netlat_keys *ks = rcu_dereference_sched(netlat_keys);

	return ks ? netlat_keys_set_of(ks, key, packets) : NULL;
}
NOKPROBE_SYMBOL(netlat_keys_set);

static void netlat_keys_free(struct netlat_keys *ks)
{
	u32 i;

	if (!ks)
		return;
	for (i = 0; i <= ks->max; i++)
		free_percpu(ks->slot[i].h);
	for (i = 0; i < NETLAT_KEY_CANDS; i++)
		free_percpu(ks->cand[i].packets);
	kfree(ks->gone);
	kfree(ks);
}

static struct netlat_keys *netlat_keys_alloc(u32 by, u32 max)
{
	struct netlat_keys *ks;
	u32 i;

	ks = kzalloc(struct_size(ks, slot, max + 1), GFP_KERNEL_ACCOUNT);
	if (!ks)
		return NULL;
	ks->by = by;
	ks->max = max;
	raw_spin_lock_init(&ks->lock);
	atomic64_set(&ks->evicted, 0);
	atomic64_set(&ks->folded, 0);
	ks->gone = kzalloc(sizeof(*ks->gone), GFP_KERNEL_ACCOUNT);
	for (i = 0; ks->gone && i <= max; i++) {
		ks->slot[i].h = alloc_percpu_gfp(struct netlat_hist_cpu,
						 GFP_KERNEL_ACCOUNT);
		if (!ks->slot[i].h)
			break;
	}
	if (!ks->gone || i <= max) {
		ks->max = i ? i - 1 : 0;
		netlat_keys_free(ks);
		return NULL;
	}
	for (i = 0; i < NETLAT_KEY_CANDS; i++) {
		ks->cand[i].packets = alloc_percpu_gfp(u64, GFP_KERNEL_ACCOUNT);
		if (!ks->cand[i].packets) {
			netlat_keys_free(ks);
			return NULL;
		}
	}
	ks->mem = struct_size(ks, slot, max + 1) + sizeof(*ks->gone) +
		  (u64)(max + 1) * num_possible_cpus() *
		  sizeof(struct netlat_hist_cpu) +
		  (u64)NETLAT_KEY_CANDS * num_possible_cpus() * sizeof(u64);
	return ks;
}

static struct netlat_keys *netlat_keys_locked(void)
{
	return rcu_dereference_protected(netlat_keys,
					 lockdep_is_held(&netlat_keys_mutex));
}

/* Packets of a slot's key so far, sent and received. */
static u64 netlat_keys_activity(const struct netlat_key_slot *s)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct netlat_hist_cpu *h = per_cpu_ptr(s->h, cpu);

		n += READ_ONCE(h->counter[NETLAT_HC_PACKETS]) +
		     READ_ONCE(h->counter[NETLAT_HC_RX_PACKETS]);
	}
	return n;
}

/* Packets counted for a candidate so far. */
static u64 netlat_keys_cand_packets(const struct netlat_key_cand *c)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(*per_cpu_ptr(c->packets, cpu));
	return n;
}

/* The candidate with the most packets between the last two looks; NULL. */
static struct netlat_key_cand *netlat_keys_busiest(struct netlat_keys *ks)
{
	struct netlat_key_cand *c, *best = NULL;
	u32 i;

	lockdep_assert_held(&ks->lock);
	for (i = 0; i < NETLAT_KEY_CANDS; i++) {
		c = &ks->cand[i];
		if (c->gen && c->rate && c->rate != U64_MAX &&
		    (!best || c->rate > best->rate))
			best = c;
	}
	return best;
}

/* Each candidate's packets since the last look. */
static void netlat_keys_rate(struct netlat_keys *ks)
{
	unsigned long flags;
	u32 i, gen;
	u64 a;

	for (i = 0; i < NETLAT_KEY_CANDS; i++) {
		struct netlat_key_cand *c = &ks->cand[i];

		gen = READ_ONCE(c->gen);
		if (!gen)
			continue;
		a = netlat_keys_cand_packets(c);
		raw_spin_lock_irqsave(&ks->lock, flags);
		/* not taken again meanwhile (that one needs a base first) */
		if (c->gen == gen) {
			if (!c->fresh)
				c->rate = a - c->seen;
			c->fresh = false;
			c->seen = a;
		}
		raw_spin_unlock_irqrestore(&ks->lock, flags);
	}
}

static void netlat_keys_evict(struct netlat_keys *ks, struct netlat_key_slot *s)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ks->lock, flags);
	s->state = NETLAT_SLOT_DRAINING;
	WRITE_ONCE(s->gen, 0);
	raw_spin_unlock_irqrestore(&ks->lock, flags);
}

/*
 * Once a second while keys are on: evictions, of the idle keys if a key
 * found no slot, of the least busy one if a candidate had more than
 * NETLAT_KEY_MARGIN times its packets; each freed slot to the busiest
 * candidate.
 */
static void netlat_keys_look(struct work_struct *work)
{
	struct netlat_key_slot *least = NULL;
	struct netlat_key_cand *c;
	u64 a, least_rate = 0;
	struct netlat_keys *ks;
	unsigned long flags;
	bool pressure, busier;
	u32 i, n = 0;

	mutex_lock(&netlat_keys_mutex);
	ks = netlat_keys_locked();
	if (!ks)
		goto out;
	pressure = READ_ONCE(ks->pressure);
	for (i = 1; i <= ks->max; i++) {
		struct netlat_key_slot *s = &ks->slot[i];

		if (s->state != NETLAT_SLOT_USED)
			continue;
		a = netlat_keys_activity(s);
		if (pressure && a == s->seen) {
			netlat_keys_evict(ks, s);
			n++;
		} else if (s->seen != U64_MAX &&
			   (!least || a - s->seen < least_rate)) {
			least = s;
			least_rate = a - s->seen;
		}
		s->seen = a;
	}
	netlat_keys_rate(ks);
	raw_spin_lock_irqsave(&ks->lock, flags);
	ks->swapped = false;
	c = netlat_keys_busiest(ks);
	busier = !n && least && c && c->rate > NETLAT_KEY_MARGIN * least_rate;
	raw_spin_unlock_irqrestore(&ks->lock, flags);
	if (busier) {
		netlat_keys_evict(ks, least);
		n++;
	}
	/*
	 * Nothing evicted: the folded keys wait for a slot, without a
	 * renewal (they would only fold again).
	 */
	if (n) {
		raw_spin_lock_irqsave(&ks->lock, flags);
		ks->pressure = false;
		raw_spin_unlock_irqrestore(&ks->lock, flags);
		/* no handler adds to a draining slot any more */
		synchronize_rcu();
		for (i = 1; i <= ks->max; i++) {
			struct netlat_key_slot *s = &ks->slot[i];

			if (s->state != NETLAT_SLOT_DRAINING)
				continue;
			netlat_hist_set_sum(s->h, ks->gone);
			netlat_hist_set_zero(s->h);
			raw_spin_lock_irqsave(&ks->lock, flags);
			c = netlat_keys_busiest(ks);
			if (c) {
				/* the slot is the candidate's key's now */
				s->id = c->id;
				s->seen = U64_MAX;
				s->state = NETLAT_SLOT_USED;
				WRITE_ONCE(s->gen, netlat_keys_next_gen());
				WRITE_ONCE(c->gen, 0);
				c->rate = 0;
			} else {
				s->state = NETLAT_SLOT_FREE;
			}
			raw_spin_unlock_irqrestore(&ks->lock, flags);
		}
		atomic64_add(n, &ks->evicted);
		/*
		 * The sockets of folded keys (a promoted one's among them)
		 * and of evicted ones look again.
		 */
		netlat_filter_renew();
	}
	schedule_delayed_work(&netlat_keys_work, HZ);
out:
	mutex_unlock(&netlat_keys_mutex);
}

/* Zero the host's histograms and every key's (not atomic with writers). */
static void netlat_keys_hist_reset_locked(struct netlat_keys *ks)
{
	u32 i;

	netlat_hist_reset();
	if (!ks)
		return;
	for (i = 0; i <= ks->max; i++)
		netlat_hist_set_zero(ks->slot[i].h);
	memset(ks->gone, 0, sizeof(*ks->gone));
}

void netlat_keys_hist_reset(void)
{
	mutex_lock(&netlat_keys_mutex);
	netlat_keys_hist_reset_locked(netlat_keys_locked());
	mutex_unlock(&netlat_keys_mutex);
}

/*
 * The table of new keys (@by 0: none, NULL), to be installed or freed:
 * the memory is had before anything changes. -EINVAL, -ENOMEM.
 */
noinline struct netlat_keys *netlat_keys_prepare(u32 by, u32 max)
{
	struct netlat_keys *ks;

	if ((by & ~NETLAT_KEY_ALL) || max > NETLAT_MAX_KEYS_MAX)
		return ERR_PTR(-EINVAL);
	if (!by)
		return NULL;
	ks = netlat_keys_alloc(by, max ? max : NETLAT_MAX_KEYS_DEFAULT);
	return ks ? ks : ERR_PTR(-ENOMEM);
}

ALLOW_ERROR_INJECTION(netlat_keys_prepare, ERRNO);

void netlat_keys_discard(struct netlat_keys *ks)
{
	if (!IS_ERR_OR_NULL(ks))
		netlat_keys_free(ks);
}

/* @ks (from netlat_keys_prepare()) in force, every histogram zeroed. */
void netlat_keys_install(struct netlat_keys *ks)
{
	struct netlat_keys *old;

	cancel_delayed_work_sync(&netlat_keys_work);
	mutex_lock(&netlat_keys_mutex);
	old = rcu_replace_pointer(netlat_keys, ks,
				  lockdep_is_held(&netlat_keys_mutex));
	/* keys off and off again: nothing to zero */
	if (!old && !ks)
		goto out;
	/* every socket takes a key of the new table */
	netlat_filter_renew();
	synchronize_rcu();
	netlat_keys_free(old);
	netlat_keys_hist_reset_locked(ks);
	if (ks)
		schedule_delayed_work(&netlat_keys_work, HZ);
out:
	mutex_unlock(&netlat_keys_mutex);
}

void netlat_keys_exit(void)
{
	netlat_keys_install(NULL);
}

/* The sums @h.key names into @sum, and the key's fields of @h. */
static int netlat_keys_read(struct netlat_keys *ks, struct netlat_hist *h,
			    struct netlat_hist_sum *sum)
{
	struct netlat_key_slot *s;
	unsigned long flags;

	h->key_by = ks ? ks->by : 0;
	h->max_keys = ks ? ks->max : 0;
	h->keys_evicted = ks ? atomic64_read(&ks->evicted) : 0;
	h->keys_folded = ks ? atomic64_read(&ks->folded) : 0;
	h->keys_mem_bytes = ks ? ks->mem : 0;
	h->key_flags = 0;
	h->key_port = 0;
	h->key_reserved = 0;
	h->key_netns = 0;
	h->key_cgroup = 0;
	if (!h->key) {
		netlat_hist_host_sum(sum);
		return 0;
	}
	if (!ks || (h->key != NETLAT_HIST_KEY_OTHER && h->key > ks->max))
		return -EINVAL;
	if (h->key == NETLAT_HIST_KEY_OTHER) {
		netlat_hist_set_sum(ks->slot[0].h, sum);
		netlat_hist_sum_add(sum, ks->gone);
		return 0;
	}
	/* the work drains under the mutex: a slot is free or used here */
	s = &ks->slot[array_index_nospec(h->key, ks->max + 1)];
	raw_spin_lock_irqsave(&ks->lock, flags);
	if (s->state == NETLAT_SLOT_USED) {
		h->key_flags = NETLAT_HIST_KEY_USED;
		h->key_port = s->id.port;
		h->key_netns = s->id.netns;
		h->key_cgroup = s->id.cgroup;
	}
	raw_spin_unlock_irqrestore(&ks->lock, flags);
	netlat_hist_set_sum(s->h, sum);
	return 0;
}

/* @flows, @rx_flows: sockets the packet and receive tables follow now. */
long netlat_ioc_hist(void __user *uarg, u64 flows, u64 rx_flows)
{
	struct netlat_hist_sum *sum;
	struct netlat_hist h;
	unsigned int i, n;
	const u64 *counter;
	u32 usize;
	int err;

	err = netlat_get_arg(h, NETLAT_HIST_SIZE_VER0, NETLAT_HIST_RESET, uarg,
			     &usize);
	if (err)
		return err;
	if (h.key && ((h.flags & NETLAT_HIST_RESET) ||
		      usize < offsetofend(struct netlat_hist, keys_mem_bytes)))
		return -EINVAL;
	if (h.nr_stages && (h.stage_size < NETLAT_STAGE_HIST_SIZE_VER0 ||
			    h.stage_size > PAGE_SIZE || !h.stages))
		return -EINVAL;
	if ((h.flags & NETLAT_HIST_RESET) && !netlat_may_trace())
		return -EPERM;
	sum = kzalloc(sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	mutex_lock(&netlat_keys_mutex);
	err = netlat_keys_read(netlat_keys_locked(), &h, sum);
	if (!err && (h.flags & NETLAT_HIST_RESET))
		netlat_keys_hist_reset_locked(netlat_keys_locked());
	mutex_unlock(&netlat_keys_mutex);
	n = min_t(u32, h.nr_stages, NETLAT_NR_STAGES);
	if (!err)
		err = netlat_copy_array_out(h.stages, h.stage_size, sum->stage,
					    sizeof(sum->stage[0]), n);
	if (err)
		goto out;
	counter = sum->counter;
	if (h.key)
		flows = rx_flows = 0;
	h.nr_stages = NETLAT_NR_STAGES;
#define NETLAT_HIST_ONE(field, NAME, metric, unit, help) + 1
	/* every u64 of the counters' part is one the mapper names, or apart */
	BUILD_BUG_ON((0 NETLAT_HIST_COUNTERS(NETLAT_HIST_ONE)) + 2 +
		     ARRAY_SIZE(h.retrans_segs) !=
		     (offsetof(struct netlat_hist, key) -
		      offsetof(struct netlat_hist, packets)) / sizeof(u64) +
		     (sizeof(h) - offsetof(struct netlat_hist, rx_unsampled)) /
		     sizeof(u64));
#undef NETLAT_HIST_ONE
#define NETLAT_HIST_FILL(field, NAME, metric, unit, help) \
	h.field = counter[NETLAT_HC_##NAME];
	NETLAT_HIST_COUNTERS(NETLAT_HIST_FILL)
#undef NETLAT_HIST_FILL
	h.flows = flows;
	h.rx_flows = rx_flows;
	for (i = 0; i < ARRAY_SIZE(h.retrans_segs); i++)
		h.retrans_segs[i] = counter[NETLAT_HC_RETRANS_SEGS + i];
	err = netlat_copy_out(uarg, &h, sizeof(h), usize);
out:
	kfree(sum);
	return err;
}
