/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packet-level histograms and counters: sets of them per CPU (the host's,
 * and a key's: keys.c), added to from any context by this_cpu
 * operations, summed when read.
 */
#ifndef _NETLAT_HIST_H
#define _NETLAT_HIST_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/percpu.h>
#include <linux/bitops.h>
#include <linux/netlat.h>

/*
 * The counters: first those of struct netlat_hist, named once in the
 * uapi (NETLAT_HIST_COUNTERS()), then the ones by kind and the internal.
 */
#define NETLAT_HC_ENUM(field, NAME, metric, unit, help)	NETLAT_HC_##NAME,

enum netlat_hist_counter {
	NETLAT_HIST_COUNTERS(NETLAT_HC_ENUM)
	NETLAT_HC_RETRANS_SEGS,		/* + NETLAT_RETRANS_* kind, 8 of them */
	/* of NETLAT_HC_UNTRACKED, a socket's without an entry (not in uapi) */
	NETLAT_HC_UNTRACKED_NO_ENTRY = NETLAT_HC_RETRANS_SEGS + 8,
	/*
	 * Retransmits of sockets without an entry, by kind and by errno class
	 * (not in uapi): NETLAT_IOC_FLOWS's rest sums them.
	 */
	NETLAT_HC_RETRANS_SEGS_NO_ENTRY,
	NETLAT_HC_RETRANS_FAIL_NO_ENTRY = NETLAT_HC_RETRANS_SEGS_NO_ENTRY + 8,
	NETLAT_HC_NR = NETLAT_HC_RETRANS_FAIL_NO_ENTRY + NETLAT_RTXERR_NR,
};

/* Bucket of a duration: 0 for 0 ns, else 1 + floor(log2(ns)), at most 63. */
static __always_inline unsigned int netlat_hist_bucket(u64 ns)
{
	unsigned int b = fls64(ns);

	return b < NETLAT_HIST_BUCKETS ? b : NETLAT_HIST_BUCKETS - 1;
}

/* A set of histograms and counters, per CPU: the host's, or a key's. */
struct netlat_hist_cpu {
	struct netlat_stage_hist stage[NETLAT_NR_STAGES];
	u64 counter[NETLAT_HC_NR];
};

/* A set summed over the CPUs. */
struct netlat_hist_sum {
	struct netlat_stage_hist stage[NETLAT_NR_STAGES];
	u64 counter[NETLAT_HC_NR];
};

/* The host's set: hist.c's, read here only by the inline adds below. */
extern struct netlat_hist_cpu __percpu *netlat_hists;

/*
 * A stage's sample into @set: inline in the packet ends, which add seven
 * stages or more, each to the host's set and a key's. The count is not
 * kept here: it is the buckets' sum, made when the set is read.
 */
static __always_inline void netlat_hist_stage_add(struct netlat_hist_cpu
						  __percpu *set,
						  enum netlat_stage stage,
						  u64 ns)
{
	struct netlat_stage_hist __percpu *h = &set->stage[stage];
	u64 max;

	this_cpu_add(h->sum_ns, ns);
	this_cpu_inc(h->bucket[netlat_hist_bucket(ns)]);
	for (max = this_cpu_read(h->max_ns); ns > max;) {
		u64 old = this_cpu_cmpxchg(h->max_ns, max, ns);

		if (old == max)
			break;
		max = old;
	}
}

/* To the host's set and to @key's (a key's set, or NULL). */
static __always_inline void netlat_hist_add_key(struct netlat_hist_cpu
						__percpu *key,
						enum netlat_stage stage, u64 ns)
{
	netlat_hist_stage_add(netlat_hists, stage, ns);
	if (key)
		netlat_hist_stage_add(key, stage, ns);
}

/*
 * The stage from @from to @to, if both points were seen in that order:
 * its length, 0 if not (for a packet end's "was it slow?").
 */
static __always_inline u64 netlat_hist_span_key(struct netlat_hist_cpu
						__percpu *key,
						enum netlat_stage stage,
						u64 from, u64 to)
{
	if (!from || to < from)
		return 0;
	netlat_hist_add_key(key, stage, to - from);
	return to - from;
}

static __always_inline void netlat_hist_count_key(struct netlat_hist_cpu
						  __percpu *key,
						  enum netlat_hist_counter c,
						  u64 n)
{
	this_cpu_add(netlat_hists->counter[c], n);
	if (key)
		this_cpu_add(key->counter[c], n);
}

int netlat_hist_init(void);
void netlat_hist_exit(void);
void netlat_hist_add(enum netlat_stage stage, u64 ns);
void netlat_hist_count(enum netlat_hist_counter c, u64 n);
void netlat_hist_reset(void);
u64 netlat_hist_counter(enum netlat_hist_counter c);
u64 netlat_hist_mem_bytes(void);
void netlat_hist_host_sum(struct netlat_hist_sum *sum);

void netlat_hist_set_add(struct netlat_hist_cpu __percpu *set,
			 enum netlat_stage stage, u64 ns);
void netlat_hist_set_count(struct netlat_hist_cpu __percpu *set,
			   enum netlat_hist_counter c, u64 n);
void netlat_hist_set_zero(struct netlat_hist_cpu __percpu *set);
void netlat_hist_set_sum(struct netlat_hist_cpu __percpu *set,
			 struct netlat_hist_sum *sum);
void netlat_hist_sum_add(struct netlat_hist_sum *to,
			 const struct netlat_hist_sum *from);

#endif /* _NETLAT_HIST_H */
