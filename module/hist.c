// SPDX-License-Identifier: GPL-2.0
/*
 * Packet-level histograms and counters (see hist.h, and struct
 * netlat_hist in the uapi). A probe handler interrupted by another on the
 * same CPU must not lose an update: every change is one this_cpu
 * operation, interrupt-safe by itself, and the maximum a cmpxchg loop.
 */
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include "hist.h"
#include "uarg.h"

/*
 * Allocated, not DEFINE_PER_CPU: a module's static per-CPU data comes from
 * a reserve of a few KiB that the kernel shares among all modules, and
 * these histograms alone would take nearly all of it.
 */
struct netlat_hist_cpu __percpu *netlat_hists;

int netlat_hist_init(void)
{
	netlat_hists = alloc_percpu(struct netlat_hist_cpu);
	return netlat_hists ? 0 : -ENOMEM;
}

void netlat_hist_exit(void)
{
	free_percpu(netlat_hists);
}

notrace void netlat_hist_set_add(struct netlat_hist_cpu __percpu *set,
				 enum netlat_stage stage, u64 ns)
{
	netlat_hist_stage_add(set, stage, ns);
}
NOKPROBE_SYMBOL(netlat_hist_set_add);

notrace void netlat_hist_set_count(struct netlat_hist_cpu __percpu *set,
				   enum netlat_hist_counter c, u64 n)
{
	this_cpu_add(set->counter[c], n);
}
NOKPROBE_SYMBOL(netlat_hist_set_count);

notrace void netlat_hist_add(enum netlat_stage stage, u64 ns)
{
	netlat_hist_set_add(netlat_hists, stage, ns);
}
NOKPROBE_SYMBOL(netlat_hist_add);

notrace void netlat_hist_count(enum netlat_hist_counter c, u64 n)
{
	this_cpu_add(netlat_hists->counter[c], n);
}
NOKPROBE_SYMBOL(netlat_hist_count);

/* Not atomic with writers: an update racing with it may survive. */
void netlat_hist_set_zero(struct netlat_hist_cpu __percpu *set)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(set, cpu), 0, sizeof(struct netlat_hist_cpu));
}

void netlat_hist_reset(void)
{
	netlat_hist_set_zero(netlat_hists);
}

u64 netlat_hist_mem_bytes(void)
{
	return (u64)num_possible_cpus() * sizeof(struct netlat_hist_cpu);
}

void netlat_hist_sum_add(struct netlat_hist_sum *to,
			 const struct netlat_hist_sum *from)
{
	unsigned int s, b, c;

	for (s = 0; s < NETLAT_NR_STAGES; s++) {
		to->stage[s].count += from->stage[s].count;
		to->stage[s].sum_ns += from->stage[s].sum_ns;
		to->stage[s].max_ns = max(to->stage[s].max_ns,
					  from->stage[s].max_ns);
		for (b = 0; b < NETLAT_HIST_BUCKETS; b++)
			to->stage[s].bucket[b] += from->stage[s].bucket[b];
	}
	for (c = 0; c < NETLAT_HC_NR; c++)
		to->counter[c] += from->counter[c];
}

/* Adds @set, summed over the CPUs, to @sum (process context). */
void netlat_hist_set_sum(struct netlat_hist_cpu __percpu *set,
			 struct netlat_hist_sum *sum)
{
	unsigned int s, b, c;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct netlat_hist_cpu *h = per_cpu_ptr(set, cpu);

		for (s = 0; s < NETLAT_NR_STAGES; s++) {
			sum->stage[s].sum_ns += READ_ONCE(h->stage[s].sum_ns);
			sum->stage[s].max_ns = max(sum->stage[s].max_ns,
						   READ_ONCE(h->stage[s].max_ns));
			/* the count is the buckets' (the adds keep no other) */
			for (b = 0; b < NETLAT_HIST_BUCKETS; b++) {
				u64 n = READ_ONCE(h->stage[s].bucket[b]);

				sum->stage[s].bucket[b] += n;
				sum->stage[s].count += n;
			}
		}
		for (c = 0; c < NETLAT_HC_NR; c++)
			sum->counter[c] += READ_ONCE(h->counter[c]);
	}
}

void netlat_hist_host_sum(struct netlat_hist_sum *sum)
{
	netlat_hist_set_sum(netlat_hists, sum);
}

/* One counter, summed (process context). */
u64 netlat_hist_counter(enum netlat_hist_counter c)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(netlat_hists, cpu)->counter[c]);
	return n;
}

