// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel filters: rules checked by the probe handlers before a record
 * is reserved (NETLAT_IOC_FILTERS).
 *
 * The rules live in one array replaced as a whole under RCU; handlers run
 * with preemption disabled and read it without locks. A mask of the
 * groups that have rules is published after the array, so a handler of a
 * group without rules reads the mask and nothing else.
 */
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/uaccess.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/preempt.h>
#include <linux/socket.h>
#include <net/sock.h>
#include <net/net_namespace.h>
#include "filter.h"
#include "pkt.h"
#include "ring.h"
#include "uarg.h"
#include "compat.h"

struct netlat_filter_set {
	unsigned int nr;
	struct netlat_filter_rule rule[];
};

u64 netlat_filter_groups;
/* Of those, the groups with a rule on the netlat cookie (a SipHash). */
static u64 netlat_filter_cookie_groups;
u32 netlat_filter_gen = 1;
static struct netlat_filter_set __rcu *netlat_filter_set;
static DEFINE_MUTEX(netlat_filter_lock);
static DEFINE_PER_CPU(u64, netlat_filter_count);

/* Do the first @bits bits of @a equal those of @p? */
static notrace bool netlat_prefix_eq(const u8 *a, const u8 *p,
				     unsigned int bits)
{
	unsigned int i;

	for (i = 0; i < bits / 8; i++)
		if (a[i] != p[i])
			return false;
	bits %= 8;
	return !bits || !((a[i] ^ p[i]) & (0xff00 >> bits));
}
NOKPROBE_SYMBOL(netlat_prefix_eq);

static notrace bool netlat_rule_match(const struct netlat_filter_rule *r,
				      const struct netlat_filter_in *in)
{
	const struct netlat_flow *f = in->flow;
	u32 m = r->match;

	if ((m & (NETLAT_MATCH_ADDR | NETLAT_MATCH_PORT | NETLAT_MATCH_COOKIE)) &&
	    !f)
		return false;
	if ((m & NETLAT_MATCH_ADDR) &&
	    (f->family != r->family ||
	     (!netlat_prefix_eq(f->saddr, r->addr, r->prefix_len) &&
	      !netlat_prefix_eq(f->daddr, r->addr, r->prefix_len))))
		return false;
	if ((m & NETLAT_MATCH_PORT) && f->sport != r->port &&
	    f->dport != r->port)
		return false;
	if ((m & NETLAT_MATCH_COOKIE) &&
	    (in->lazy_cookie ? netlat_sk_id(in->sk) : f->cookie) != r->cookie)
		return false;
	if ((m & NETLAT_MATCH_SOCK_COOKIE) &&
	    (!in->sk || atomic64_read(&in->sk->sk_cookie) != r->cookie))
		return false;
	if ((m & NETLAT_MATCH_NETNS) &&
	    (!in->net || netlat_net_inum(in->net) != r->netns_ino))
		return false;
	if (m & (NETLAT_MATCH_TGID | NETLAT_MATCH_TID)) {
		/* softirq and hardirq run on behalf of no task */
		if (!in_task())
			return false;
		if ((m & NETLAT_MATCH_TGID) && current->tgid != r->tgid)
			return false;
		if ((m & NETLAT_MATCH_TID) && current->pid != r->tid)
			return false;
	}
	return true;
}
NOKPROBE_SYMBOL(netlat_rule_match);

notrace bool netlat_filter_keep(u64 group, const struct netlat_filter_in *in)
{
	const struct netlat_filter_set *s;
	bool applies = false, keep = true;
	unsigned int i;

	rcu_read_lock_sched_notrace();
	s = rcu_dereference_sched(netlat_filter_set);
	for (i = 0; s && i < s->nr; i++) {
		if (!(s->rule[i].groups & group))
			continue;
		if (netlat_rule_match(&s->rule[i], in))
			goto out;
		applies = true;
	}
	if (applies) {
		keep = false;
		netlat_filter_kept_out();
	}
out:
	rcu_read_unlock_sched_notrace();
	return keep;
}
NOKPROBE_SYMBOL(netlat_filter_keep);

notrace bool netlat_filter_sk_flow_id(u64 group, const struct sock *sk,
				      struct netlat_flow *flow, u64 id)
{
	bool cookie = false;

	memset(flow, 0, sizeof(*flow));
	netlat_sk_addrs(flow, sk);
	if (netlat_filter_on(group)) {
		/*
		 * The cookie is a SipHash: computed once, before the rules
		 * if one of them reads it, else only for a record kept (and
		 * by a rule itself if the rules change meanwhile).
		 */
		struct netlat_filter_in in = {
			.flow = flow, .sk = sk, .net = sock_net(sk),
		};

		cookie = READ_ONCE(netlat_filter_cookie_groups) & group;
		if (cookie)
			flow->cookie = id ?: netlat_sk_id(sk);
		in.lazy_cookie = !cookie;
		if (!netlat_filter_keep(group, &in))
			return false;
	}
	if (!cookie)
		flow->cookie = id ?: netlat_sk_id(sk);
	return true;
}
NOKPROBE_SYMBOL(netlat_filter_sk_flow_id);

notrace bool netlat_filter_keep_sk(u64 group, const struct sock *sk,
				   const struct netlat_flow *flow)
{
	struct netlat_filter_in in = {
		.flow = flow, .sk = sk, .net = sock_net(sk),
	};

	return !netlat_filter_on(group) || netlat_filter_keep(group, &in);
}
NOKPROBE_SYMBOL(netlat_filter_keep_sk);

notrace u32 netlat_filter_sk_verdict(u64 groups, u64 rec, const struct sock *sk)
{
	struct netlat_flow flow;
	struct netlat_filter_in in = {
		.flow = &flow, .sk = sk, .net = sock_net(sk),
		.lazy_cookie = true,
	};
	bool per_hit = false;
	u64 kept;

	if (!netlat_filter_on(groups))
		return NETLAT_FILTER_REC;
	/* addresses, ports, namespace; the cookie only for a rule that reads it */
	memset(&flow, 0, sizeof(flow));
	netlat_sk_addrs(&flow, sk);
	kept = netlat_filter_kept(groups, &in, &per_hit);
	if (per_hit)
		return NETLAT_FILTER_PER_HIT;
	if (!kept)
		return NETLAT_FILTER_OUT;
	return kept & rec ? NETLAT_FILTER_REC : 0;
}
NOKPROBE_SYMBOL(netlat_filter_sk_verdict);

notrace void netlat_filter_kept_out(void)
{
	/* like the ring's counters: only what tracing would have kept */
	if (READ_ONCE(netlat_running))
		this_cpu_inc(netlat_filter_count);
}
NOKPROBE_SYMBOL(netlat_filter_kept_out);

notrace u64 netlat_filter_kept(u64 groups, const struct netlat_filter_in *in,
			       bool *per_hit)
{
	const struct netlat_filter_set *s;
	u64 applies = 0, matched = 0, g;
	unsigned int i;

	rcu_read_lock_sched_notrace();
	s = rcu_dereference_sched(netlat_filter_set);
	for (i = 0; s && i < s->nr; i++) {
		g = s->rule[i].groups & groups;
		if (!g)
			continue;
		if (s->rule[i].match & (NETLAT_MATCH_TGID | NETLAT_MATCH_TID))
			*per_hit = true;
		applies |= g;
		if (netlat_rule_match(&s->rule[i], in))
			matched |= g;
	}
	rcu_read_unlock_sched_notrace();
	/* kept: no rule applies to the group, or one that does matched */
	return groups & ~(applies & ~matched);
}
NOKPROBE_SYMBOL(netlat_filter_kept);

u64 netlat_filtered(int cpu)
{
	return READ_ONCE(*per_cpu_ptr(&netlat_filter_count, cpu));
}

static bool netlat_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* Per the kernel-doc of struct netlat_filter_rule: fields of conditions
 * the rule does not have must be zero, like the reserved ones. */
static bool netlat_rule_valid(const struct netlat_filter_rule *r)
{
	u32 m = r->match;
	unsigned int bits, i;

	if (!r->groups || (r->groups & ~NETLAT_PROBE_ALL) || !m ||
	    (m & ~NETLAT_MATCH_ALL) || r->reserved0 || r->reserved1 ||
	    r->reserved)
		return false;
	if (m & NETLAT_MATCH_ADDR) {
		if (r->family == AF_INET)
			bits = 32;
		else if (r->family == AF_INET6)
			bits = 128;
		else
			return false;
		if (r->prefix_len > bits)
			return false;
		/* no bit set past the prefix, nor past an IPv4 address */
		for (i = r->prefix_len; i < 128; i++)
			if (r->addr[i / 8] & (0x80 >> (i % 8)))
				return false;
	} else if (r->family || r->prefix_len ||
		   !netlat_zero(r->addr, sizeof(r->addr))) {
		return false;
	}
	if (!(m & NETLAT_MATCH_PORT) != !r->port)
		return false;
	if (!(m & NETLAT_MATCH_NETNS) != !r->netns_ino)
		return false;
	if (!(m & NETLAT_MATCH_TGID) != !r->tgid)
		return false;
	if (!(m & NETLAT_MATCH_TID) != !r->tid)
		return false;
	if ((m & NETLAT_MATCH_COOKIE) && (m & NETLAT_MATCH_SOCK_COOKIE))
		return false;
	if (!(m & (NETLAT_MATCH_COOKIE | NETLAT_MATCH_SOCK_COOKIE)) !=
	    !r->cookie)
		return false;
	return true;
}

/* Copy in and check @nr rules; NULL set for none. Nothing is in force yet. */
static struct netlat_filter_set *netlat_filter_copy_in(const u8 __user *rules,
						       u32 nr, u32 rule_size)
{
	struct netlat_filter_set *s;
	u32 i;
	int err;

	if (!nr)
		return NULL;
	s = kzalloc(struct_size(s, rule, nr), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->nr = nr;
	for (i = 0; i < nr; i++) {
		err = copy_struct_from_user(&s->rule[i], sizeof(s->rule[i]),
					    rules + (size_t)i * rule_size,
					    rule_size);
		if (err == -E2BIG || (!err && !netlat_rule_valid(&s->rule[i])))
			err = -EINVAL;
		if (err) {
			kfree(s);
			return ERR_PTR(err);
		}
	}
	return s;
}

static void netlat_filter_gen_next(void)
{
	u32 gen = netlat_filter_gen + 1;

	lockdep_assert_held(&netlat_filter_lock);
	smp_store_release(&netlat_filter_gen, gen ? gen : 1);
}

/* Every socket's verdict is made again: what it depends on changed. */
void netlat_filter_renew(void)
{
	mutex_lock(&netlat_filter_lock);
	netlat_filter_gen_next();
	mutex_unlock(&netlat_filter_lock);
}

static void netlat_filter_replace(struct netlat_filter_set *new)
{
	struct netlat_filter_set *old;
	u64 groups = 0, cookie_groups = 0;
	unsigned int i;

	for (i = 0; new && i < new->nr; i++) {
		groups |= new->rule[i].groups;
		if (new->rule[i].match & NETLAT_MATCH_COOKIE)
			cookie_groups |= new->rule[i].groups;
	}
	mutex_lock(&netlat_filter_lock);
	old = rcu_replace_pointer(netlat_filter_set, new,
				  lockdep_is_held(&netlat_filter_lock));
	/* after the rules: a handler that sees a group's bit finds them */
	WRITE_ONCE(netlat_filter_groups, groups);
	WRITE_ONCE(netlat_filter_cookie_groups, cookie_groups);
	/* and a handler that sees the new generation finds them too */
	netlat_filter_gen_next();
	mutex_unlock(&netlat_filter_lock);
	if (old) {
		synchronize_rcu();
		kfree(old);
	}
}

/* Copy up to @room rules in force to @rules; returns how many are in force. */
static int netlat_filter_copy_out(u8 __user *rules, u32 room, u32 rule_size,
				  u32 *nr)
{
	const struct netlat_filter_set *s;
	size_t len = min_t(size_t, rule_size, sizeof(s->rule[0]));
	u8 __user *dst;
	int err = 0;
	u32 i;

	mutex_lock(&netlat_filter_lock);
	s = rcu_dereference_protected(netlat_filter_set,
				      lockdep_is_held(&netlat_filter_lock));
	*nr = s ? s->nr : 0;
	for (i = 0; i < min(room, *nr) && !err; i++) {
		dst = rules + (size_t)i * rule_size;
		if (copy_to_user(dst, &s->rule[i], len) ||
		    clear_user(dst + len, rule_size - len))
			err = -EFAULT;
	}
	mutex_unlock(&netlat_filter_lock);
	return err;
}

long netlat_ioc_filters(void __user *uarg)
{
	struct netlat_filter_set *new;
	struct netlat_filters a;
	u8 __user *rules;
	u32 usize;
	int err;

	err = netlat_get_arg_resv(a, NETLAT_FILTERS_SIZE_VER0,
				  NETLAT_FILTERS_SET, reserved, uarg, &usize);
	if (err)
		return err;
	if (a.rule_size < NETLAT_FILTER_RULE_SIZE_VER0 ||
	    a.rule_size > PAGE_SIZE)
		return -EINVAL;
	rules = u64_to_user_ptr(a.rules);
	if (a.flags & NETLAT_FILTERS_SET) {
		if (!netlat_may_trace())
			return -EPERM;
		if (a.nr_rules > NETLAT_FILTER_MAX_RULES)
			return -EINVAL;
		new = netlat_filter_copy_in(rules, a.nr_rules, a.rule_size);
		if (IS_ERR(new))
			return PTR_ERR(new);
		/* a.nr_rules is now the number in force */
		netlat_filter_replace(new);
	} else {
		err = netlat_filter_copy_out(rules, a.nr_rules, a.rule_size,
					     &a.nr_rules);
		if (err)
			return err;
	}
	return netlat_copy_out(uarg, &a, sizeof(a), usize);
}

void netlat_filter_exit(void)
{
	WRITE_ONCE(netlat_filter_groups, 0);
	WRITE_ONCE(netlat_filter_cookie_groups, 0);
	/* the probes are gone: no reader is left */
	kfree(rcu_replace_pointer(netlat_filter_set, NULL, true));
}
