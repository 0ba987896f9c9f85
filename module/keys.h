/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packet level's histograms by key (service port, network namespace,
 * cgroup), beside the host's, and NETLAT_IOC_HIST, which reads both.
 */
#ifndef _NETLAT_KEYS_H
#define _NETLAT_KEYS_H

#include <linux/types.h>
#include "hist.h"

struct sock;

/* A socket's key as its table entry keeps it; 0: the other set. */
u32 netlat_keys_of(const struct sock *sk);
struct netlat_hist_cpu __percpu *netlat_keys_set(u32 key, u32 packets);

struct netlat_keys;
struct netlat_keys *netlat_keys_prepare(u32 by, u32 max);
void netlat_keys_discard(struct netlat_keys *ks);
void netlat_keys_install(struct netlat_keys *ks);
void netlat_keys_hist_reset(void);
long netlat_ioc_hist(void __user *uarg, u64 flows, u64 rx_flows);
void netlat_keys_exit(void);

#endif /* _NETLAT_KEYS_H */
