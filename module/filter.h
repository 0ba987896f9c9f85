/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel filters (NETLAT_IOC_FILTERS), checked by the probe families
 * before they reserve a record. netlat_filter_on() is the only cost for a
 * group without rules: one load and a test.
 */
#ifndef _NETLAT_FILTER_H
#define _NETLAT_FILTER_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <asm/barrier.h>
#include <linux/netlat.h>

struct sock;
struct net;

/* What the conditions of a rule can read of one event; NULL: not known. */
struct netlat_filter_in {
	const struct netlat_flow *flow;	/* ADDR, PORT, COOKIE */
	const struct sock *sk;			/* SOCK_COOKIE */
	const struct net *net;			/* NETNS */
	/*
	 * @flow's cookie is not computed (a SipHash): a COOKIE condition
	 * computes netlat_sk_id(@sk), so a hit no such rule reads skips it.
	 */
	bool lazy_cookie;
};

/* NETLAT_PROBE_* groups that have at least one rule. */
extern u64 netlat_filter_groups;

/*
 * Changes whenever the rules do (never 0): a verdict kept per socket
 * (netlat_filter_kept()) holds while this is the value it was made at.
 */
extern u32 netlat_filter_gen;

static __always_inline u32 netlat_filter_gen_get(void)
{
	return smp_load_acquire(&netlat_filter_gen);
}

static __always_inline bool netlat_filter_on(u64 group)
{
	return unlikely(READ_ONCE(netlat_filter_groups) & group);
}

/* Whether a record of @group about @in is stored; counts it if not. */
bool netlat_filter_keep(u64 group, const struct netlat_filter_in *in);

/*
 * @sk's flow into @flow unless the rules of @group keep @sk's records out
 * (counted then): its addresses first, its cookie (@id if the caller
 * knows it already, else computed) only for a record kept.
 */
bool netlat_filter_sk_flow_id(u64 group, const struct sock *sk,
			      struct netlat_flow *flow, u64 id);

static inline bool netlat_filter_sk_flow(u64 group, const struct sock *sk,
					 struct netlat_flow *flow)
{
	return netlat_filter_sk_flow_id(group, sk, flow, 0);
}

/*
 * Whether the rules of @group keep a record of @sk, whose flow @flow its
 * table entry keeps (cookie included): for a socket whose rules read the
 * hit's task, asked at each record (counted if kept out).
 */
bool netlat_filter_keep_sk(u64 group, const struct sock *sk,
			   const struct netlat_flow *flow);

/*
 * What the rules say of @sk once per socket (a packet table's entry keeps
 * it): NETLAT_FILTER_OUT, the filters keep it out of every one of
 * @groups; NETLAT_FILTER_PER_HIT, a rule reads the hit's task, so each
 * record asks again; else NETLAT_FILTER_REC if the records of @rec are
 * kept (0: they are not, the socket is still followed).
 */
#define NETLAT_FILTER_OUT	(1U << 0)
#define NETLAT_FILTER_REC	(1U << 1)
#define NETLAT_FILTER_PER_HIT	(1U << 2)

u32 netlat_filter_sk_verdict(u64 groups, u64 rec, const struct sock *sk);

/*
 * Of @groups, those whose records about @in the rules keep, for a caller
 * that asks once per socket; counts nothing. *@per_hit is set if a rule
 * of them reads the hit's task (TGID, TID): then the answer holds for
 * this hit only.
 */
u64 netlat_filter_kept(u64 groups, const struct netlat_filter_in *in,
		       bool *per_hit);

/* A record kept out by such a verdict: counted as netlat_filter_keep() does. */
void netlat_filter_kept_out(void);
/* Verdicts kept per socket are made again (keys.c: a socket's key). */
void netlat_filter_renew(void);

/* Records kept out on @cpu since load (netlat_cpu_stats.filtered). */
u64 netlat_filtered(int cpu);

long netlat_ioc_filters(void __user *uarg);

/* Drops the rules; no handler may run any more. */
void netlat_filter_exit(void);

#endif /* _NETLAT_FILTER_H */
