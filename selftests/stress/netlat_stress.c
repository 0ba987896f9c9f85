// SPDX-License-Identifier: GPL-2.0
/*
 * netlat_stress: writes MARKER records into netlat's rings from interrupt
 * context, for netlat_stress_test. On every online CPU a pinned hrtimer
 * (hardirq context) writes one marker per period and schedules a tasklet
 * (softirq context) that writes one more, until each source has made
 * @count attempts on that CPU. Meanwhile the test writes markers from
 * process context on the same CPUs, so writers nest in every order.
 *
 * Markers carry pid 0, tid 0 and a struct netlat_stress_payload. What each
 * source attempted, stored and saw dropped is the test's oracle, read from
 * /sys/module/netlat_stress/parameters/stats:
 *	<cpu> <hard stored> <hard dropped> <soft stored> <soft dropped>
 * one line per CPU that ran, then "done" when every source finished.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include "record.h"
#include "netlat_stress.h"

static unsigned int count = 20000;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "Markers per source per CPU");
static unsigned int period_us = 100;
module_param(period_us, uint, 0444);
MODULE_PARM_DESC(period_us, "hrtimer period in microseconds");

struct stress_src {
	u64 stored;
	u64 dropped;
};

struct stress_cpu {
	struct hrtimer timer;
	struct tasklet_struct tasklet;
	struct stress_src src[NETLAT_STRESS_NR_SOURCES];
	/*
	 * Static per-CPU data of modules comes from one reserve (8 KiB on
	 * x86-64) the kernel shares among them all; netlat must leave room
	 * for the others. This module, loaded after netlat, takes half.
	 */
	u8 room[NETLAT_STRESS_PERCPU_ROOM];
};

static DEFINE_PER_CPU(struct stress_cpu, stress_cpus);
static struct cpumask stress_mask;	/* CPUs whose timer was started */
static bool stress_stopping;

/* One marker of @source on this CPU, interrupts as the caller has them. */
static void stress_write(struct stress_cpu *sc, u16 source)
{
	struct stress_src *s = &sc->src[source];
	u64 index = s->stored + s->dropped;
	u32 len = netlat_stress_len(index);
	struct netlat_rec_marker *m;
	struct netlat_writer w;

	m = netlat_reserve(&w, NETLAT_REC_MARKER, sizeof(*m) + len);
	if (!m) {
		s->dropped++;
		return;
	}
	m->pid = 0;
	m->tid = 0;
	m->len = len;
	m->reserved = 0;
	netlat_stress_fill((struct netlat_stress_payload *)m->data, source,
			   smp_processor_id(), index);
	netlat_commit(&w);
	s->stored++;
}

static bool stress_src_done(struct stress_cpu *sc, u16 source)
{
	struct stress_src *s = &sc->src[source];

	return s->stored + s->dropped >= count;
}

static void stress_tasklet(struct tasklet_struct *t)
{
	struct stress_cpu *sc = from_tasklet(sc, t, tasklet);

	if (!stress_src_done(sc, NETLAT_STRESS_SOFTIRQ))
		stress_write(sc, NETLAT_STRESS_SOFTIRQ);
}

static enum hrtimer_restart stress_timer(struct hrtimer *t)
{
	struct stress_cpu *sc = container_of(t, struct stress_cpu, timer);

	if (!stress_src_done(sc, NETLAT_STRESS_HARDIRQ))
		stress_write(sc, NETLAT_STRESS_HARDIRQ);
	if (!stress_src_done(sc, NETLAT_STRESS_SOFTIRQ))
		tasklet_schedule(&sc->tasklet);
	if (READ_ONCE(stress_stopping) ||
	    (stress_src_done(sc, NETLAT_STRESS_HARDIRQ) &&
	     stress_src_done(sc, NETLAT_STRESS_SOFTIRQ)))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime((u64)period_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

/* Runs on each CPU (IPI): the timer is pinned to the CPU it starts on. */
static void stress_start_cpu(void *unused)
{
	struct stress_cpu *sc = this_cpu_ptr(&stress_cpus);

	hrtimer_start(&sc->timer, ns_to_ktime((u64)period_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static int stress_stats_get(char *buf, const struct kernel_param *kp)
{
	bool done = true;
	int cpu, n = 0;

	for_each_cpu(cpu, &stress_mask) {
		struct stress_cpu *sc = per_cpu_ptr(&stress_cpus, cpu);
		struct stress_src *h = &sc->src[NETLAT_STRESS_HARDIRQ];
		struct stress_src *s = &sc->src[NETLAT_STRESS_SOFTIRQ];

		n += scnprintf(buf + n, PAGE_SIZE - n, "%d %llu %llu %llu %llu\n",
			       cpu, READ_ONCE(h->stored), READ_ONCE(h->dropped),
			       READ_ONCE(s->stored), READ_ONCE(s->dropped));
		done &= READ_ONCE(h->stored) + READ_ONCE(h->dropped) >= count &&
			READ_ONCE(s->stored) + READ_ONCE(s->dropped) >= count;
	}
	if (done)
		n += scnprintf(buf + n, PAGE_SIZE - n, "done\n");
	return n;
}

static const struct kernel_param_ops stress_stats_ops = {
	.get = stress_stats_get,
};
module_param_cb(stats, &stress_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "Per CPU: hardirq stored, dropped, softirq stored, dropped");

#ifndef NETLAT_HAVE_HRTIMER_SETUP
/* Before hrtimer_setup() the callback was set after hrtimer_init(). */
static void hrtimer_setup(struct hrtimer *timer,
			  enum hrtimer_restart (*function)(struct hrtimer *),
			  clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

static int __init stress_init(void)
{
	int cpu;

	if (!count || !period_us)
		return -EINVAL;
	for_each_possible_cpu(cpu) {
		struct stress_cpu *sc = per_cpu_ptr(&stress_cpus, cpu);

		hrtimer_setup(&sc->timer, stress_timer, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		tasklet_setup(&sc->tasklet, stress_tasklet);
	}
	cpus_read_lock();
	cpumask_copy(&stress_mask, cpu_online_mask);
	on_each_cpu(stress_start_cpu, NULL, 1);
	cpus_read_unlock();
	pr_info("%u markers per source on CPUs %*pbl, every %u us\n", count,
		cpumask_pr_args(&stress_mask), period_us);
	return 0;
}

static void __exit stress_exit(void)
{
	int cpu;

	WRITE_ONCE(stress_stopping, true);
	for_each_possible_cpu(cpu) {
		struct stress_cpu *sc = per_cpu_ptr(&stress_cpus, cpu);

		hrtimer_cancel(&sc->timer);
		tasklet_kill(&sc->tasklet);
	}
}

module_init(stress_init);
module_exit(stress_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("netlat stress: interrupt-context record writers (test only)");
