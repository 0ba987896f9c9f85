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

struct netlat_hist_cpu {
	struct netlat_stage_hist stage[NETLAT_NR_STAGES];
	u64 counter[NETLAT_HC_NR];
};

/*
 * Allocated, not DEFINE_PER_CPU: a module's static per-CPU data comes from
 * a reserve of a few KiB that the kernel shares among all modules, and
 * these histograms alone would take nearly all of it.
 */
static struct netlat_hist_cpu __percpu *netlat_hists;

int netlat_hist_init(void)
{
	netlat_hists = alloc_percpu(struct netlat_hist_cpu);
	return netlat_hists ? 0 : -ENOMEM;
}

void netlat_hist_exit(void)
{
	free_percpu(netlat_hists);
}

notrace void netlat_hist_add(enum netlat_stage stage, u64 ns)
{
	struct netlat_stage_hist __percpu *h = &netlat_hists->stage[stage];
	u64 max;

	this_cpu_inc(h->count);
	this_cpu_add(h->sum_ns, ns);
	this_cpu_inc(h->bucket[netlat_hist_bucket(ns)]);
	for (max = this_cpu_read(h->max_ns); ns > max;) {
		u64 old = this_cpu_cmpxchg(h->max_ns, max, ns);

		if (old == max)
			break;
		max = old;
	}
}
NOKPROBE_SYMBOL(netlat_hist_add);

notrace void netlat_hist_count(enum netlat_hist_counter c, u64 n)
{
	this_cpu_add(netlat_hists->counter[c], n);
}
NOKPROBE_SYMBOL(netlat_hist_count);

/* Not atomic with writers: an update racing with it may survive. */
void netlat_hist_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(netlat_hists, cpu), 0,
		       sizeof(struct netlat_hist_cpu));
}

u64 netlat_hist_mem_bytes(void)
{
	return (u64)num_possible_cpus() * sizeof(struct netlat_hist_cpu);
}

static void netlat_hist_sum(struct netlat_stage_hist *st, u64 *counter)
{
	unsigned int s, b, c;
	int cpu;

	memset(st, 0, NETLAT_NR_STAGES * sizeof(*st));
	memset(counter, 0, NETLAT_HC_NR * sizeof(*counter));
	for_each_possible_cpu(cpu) {
		const struct netlat_hist_cpu *h = per_cpu_ptr(netlat_hists,
							      cpu);

		for (s = 0; s < NETLAT_NR_STAGES; s++) {
			st[s].count += READ_ONCE(h->stage[s].count);
			st[s].sum_ns += READ_ONCE(h->stage[s].sum_ns);
			st[s].max_ns = max(st[s].max_ns,
					   READ_ONCE(h->stage[s].max_ns));
			for (b = 0; b < NETLAT_HIST_BUCKETS; b++)
				st[s].bucket[b] += READ_ONCE(h->stage[s].bucket[b]);
		}
		for (c = 0; c < NETLAT_HC_NR; c++)
			counter[c] += READ_ONCE(h->counter[c]);
	}
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

/* @flows, @rx_flows: sockets the packet and receive tables follow now. */
long netlat_ioc_hist(void __user *uarg, u64 flows, u64 rx_flows)
{
	struct netlat_stage_hist *st;
	u64 counter[NETLAT_HC_NR];
	struct netlat_hist h;
	unsigned int i, n;
	u32 usize;
	int err;

	err = netlat_copy_arg(&h, sizeof(h), NETLAT_HIST_SIZE_VER0, uarg,
			      &usize);
	if (err)
		return err;
	if ((h.flags & ~NETLAT_HIST_RESET) || h.reserved)
		return -EINVAL;
	if (h.nr_stages && (h.stage_size < NETLAT_STAGE_HIST_SIZE_VER0 ||
			    h.stage_size > PAGE_SIZE || !h.stages))
		return -EINVAL;
	if ((h.flags & NETLAT_HIST_RESET) && !netlat_capable())
		return -EPERM;
	st = kcalloc(NETLAT_NR_STAGES, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	netlat_hist_sum(st, counter);
	if (h.flags & NETLAT_HIST_RESET)
		netlat_hist_reset();
	n = min_t(u32, h.nr_stages, NETLAT_NR_STAGES);
	err = netlat_copy_array_out(h.stages, h.stage_size, st, sizeof(*st), n);
	kfree(st);
	if (err)
		return err;
	h.nr_stages = NETLAT_NR_STAGES;
	h.packets = counter[NETLAT_HC_PACKETS];
	h.bytes = counter[NETLAT_HC_BYTES];
	h.segs = counter[NETLAT_HC_SEGS];
	h.untracked = counter[NETLAT_HC_UNTRACKED];
	h.flows_full = counter[NETLAT_HC_FLOWS_FULL];
	h.flows = flows;
	for (i = 0; i < ARRAY_SIZE(h.retrans_segs); i++)
		h.retrans_segs[i] = counter[NETLAT_HC_RETRANS_SEGS + i];
	h.retrans_fail = counter[NETLAT_HC_RETRANS_FAIL];
	h.merged = counter[NETLAT_HC_MERGED];
	h.rx_packets = counter[NETLAT_HC_RX_PACKETS];
	h.rx_bytes = counter[NETLAT_HC_RX_BYTES];
	h.rx_dropped = counter[NETLAT_HC_RX_DROPPED];
	h.rx_untracked = counter[NETLAT_HC_RX_UNTRACKED];
	h.rx_flows_full = counter[NETLAT_HC_RX_FLOWS_FULL];
	h.rx_flows = rx_flows;
	h.rx_wait_untracked = counter[NETLAT_HC_RX_WAIT_UNTRACKED];
	h.no_mem = counter[NETLAT_HC_NO_MEM];
	h.evicted = counter[NETLAT_HC_EVICTED];
	h.rx_no_mem = counter[NETLAT_HC_RX_NO_MEM];
	h.rx_evicted = counter[NETLAT_HC_RX_EVICTED];
	h.closed = counter[NETLAT_HC_CLOSED];
	h.rx_closed = counter[NETLAT_HC_RX_CLOSED];
	return netlat_copy_out(uarg, &h, sizeof(h), usize);
}
