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
#include <linux/netlat.h>

struct sock;
struct net;

/* What the conditions of a rule can read of one event; NULL: not known. */
struct netlat_filter_in {
	const struct netlat_tcp_flow *flow;	/* ADDR, PORT, COOKIE */
	const struct sock *sk;			/* SOCK_COOKIE */
	const struct net *net;			/* NETNS */
};

/* NETLAT_PROBE_* groups that have at least one rule. */
extern u64 netlat_filter_groups;

static __always_inline bool netlat_filter_on(u64 group)
{
	return unlikely(READ_ONCE(netlat_filter_groups) & group);
}

/* Whether a record of @group about @in is stored; counts it if not. */
bool netlat_filter_keep(u64 group, const struct netlat_filter_in *in);

/* Records kept out on @cpu since load (netlat_cpu_stats.filtered). */
u64 netlat_filtered(int cpu);

long netlat_ioc_filters(void __user *uarg);

/* Drops the rules; no handler may run any more. */
void netlat_filter_exit(void);

#endif /* _NETLAT_FILTER_H */
