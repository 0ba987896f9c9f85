// SPDX-License-Identifier: GPL-2.0
/*
 * Probe registry. At load every probe of the table is looked up and, if
 * found, registered disabled (kprobes, kretprobes) or remembered
 * (tracepoints, registered only while enabled, so an idle module costs
 * nothing on their sites). NETLAT_IOC_PROBES switches whole groups.
 *
 * Handlers never run after netlat_probes_exit() returns: kprobes are
 * unregistered (which waits for running handlers, and for kretprobe
 * instances in flight), tracepoints unregistered and synchronised. The
 * module's exit runs this before the rings are freed; it frees the filter
 * rules too, which only the handlers read.
 */
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/kprobes.h>
#include "netlat.h"
#include "probes.h"
#include "filter.h"

u64 netlat_probes_on;
static DEFINE_MUTEX(netlat_probes_lock);
static u64 netlat_groups_avail, netlat_groups_partial, netlat_groups_enabled;

static void netlat_find_tp(struct tracepoint *tp, void *priv)
{
	struct netlat_probe *p = priv;

	if (!p->tp && !strcmp(tp->name, p->name))
		p->tp = tp;
}

static int netlat_probe_register(struct netlat_probe *p)
{
	/* Blocked senders hold an instance while they sleep in sendmsg. */
	int maxactive = max_t(int, 256, 32 * num_possible_cpus());

	switch (p->kind) {
	case NETLAT_KPROBE:
		p->kp.symbol_name = p->name;
		p->kp.pre_handler = p->pre;
		p->kp.flags = KPROBE_FLAG_DISABLED;
		return register_kprobe(&p->kp);
	case NETLAT_KRETPROBE:
		p->krp.kp.symbol_name = p->name;
		p->krp.kp.flags = KPROBE_FLAG_DISABLED;
		p->krp.entry_handler = p->entry;
		p->krp.handler = p->ret;
		p->krp.data_size = p->data_size;
		p->krp.maxactive = maxactive;
		return register_kretprobe(&p->krp);
	case NETLAT_TRACEPOINT:
		for_each_kernel_tracepoint(netlat_find_tp, p);
		return p->tp ? 0 : -ENOENT;
	}
	return -EINVAL;
}

static int netlat_probe_switch(struct netlat_probe *p, bool on)
{
	int err = 0;

	if (!p->avail || p->on == on)
		return 0;
	switch (p->kind) {
	case NETLAT_KPROBE:
		err = on ? enable_kprobe(&p->kp) : disable_kprobe(&p->kp);
		break;
	case NETLAT_KRETPROBE:
		err = on ? enable_kretprobe(&p->krp) :
			   disable_kretprobe(&p->krp);
		break;
	case NETLAT_TRACEPOINT:
		err = on ? tracepoint_probe_register(p->tp, p->tp_fn, NULL) :
			   tracepoint_probe_unregister(p->tp, p->tp_fn, NULL);
		break;
	}
	if (!err)
		p->on = on;
	else
		pr_warn("%s %s: %d\n", on ? "enabling" : "disabling", p->name,
			err);
	return err;
}

static void netlat_probe_unregister(struct netlat_probe *p)
{
	if (!p->avail)
		return;
	switch (p->kind) {
	case NETLAT_KPROBE:
		unregister_kprobe(&p->kp);
		break;
	case NETLAT_KRETPROBE:
		unregister_kretprobe(&p->krp);
		break;
	case NETLAT_TRACEPOINT:
		if (p->on)
			tracepoint_probe_unregister(p->tp, p->tp_fn, NULL);
		break;
	}
	p->on = false;
	p->avail = false;
}

/* Caller holds netlat_probes_lock. */
static int netlat_probes_apply(u64 enable)
{
	unsigned int i;
	int err = 0, e;

	/*
	 * Handlers of groups going off stop writing; once the grace period
	 * ends none is still inside a record (handlers run non-preemptible).
	 */
	if (netlat_probes_on & ~enable) {
		WRITE_ONCE(netlat_probes_on, netlat_probes_on & enable);
		synchronize_rcu();
	}
	if ((enable & NETLAT_PROBE_TCP_SENDMSG) &&
	    !(netlat_groups_enabled & NETLAT_PROBE_TCP_SENDMSG))
		netlat_tcp_reset_slots();
	for (i = 0; i < netlat_tcp_nr_probes; i++) {
		struct netlat_probe *p = &netlat_tcp_probes[i];

		e = netlat_probe_switch(p, p->group & enable);

		if (e && !err)
			err = e;
	}
	e = netlat_virtio_switch(enable & NETLAT_PROBE_VIRTIO_ALL);
	if (e && !err)
		err = e;
	netlat_groups_enabled = enable;
	WRITE_ONCE(netlat_probes_on, enable);
	return err;
}

int netlat_probes_set(u64 enable)
{
	int err;

	if (enable & ~NETLAT_PROBE_ALL)
		return -EINVAL;
	if (mutex_lock_interruptible(&netlat_probes_lock))
		return -ERESTARTSYS;
	/* virtio groups stay enabled while virtio_net is away */
	if (enable & ~(netlat_probes_available() |
		       (netlat_groups_enabled & NETLAT_PROBE_VIRTIO_ALL)))
		err = -EOPNOTSUPP;
	else
		err = netlat_probes_apply(enable);
	mutex_unlock(&netlat_probes_lock);
	return err;
}

u64 netlat_probes_available(void)
{
	return READ_ONCE(netlat_groups_avail) | netlat_virtio_available();
}

void netlat_probes_state(struct netlat_probes *st)
{
	unsigned int i;
	u64 missed = 0;

	mutex_lock(&netlat_probes_lock);
	for (i = 0; i < netlat_tcp_nr_probes; i++) {
		struct netlat_probe *p = &netlat_tcp_probes[i];

		if (!p->avail)
			continue;
		if (p->kind == NETLAT_KPROBE)
			missed += p->kp.nmissed;
		else if (p->kind == NETLAT_KRETPROBE)
			missed += p->krp.nmissed + p->krp.kp.nmissed;
	}
	st->available = netlat_probes_available();
	st->partial = netlat_groups_partial | netlat_virtio_partial();
	st->enabled = netlat_groups_enabled;
	st->nmissed = missed + netlat_virtio_nmissed();
	mutex_unlock(&netlat_probes_lock);
}

/*
 * GCC may split a probed function into a head inlined into its callers and
 * a ".part" clone that some callers enter directly, bypassing the probe on
 * the original (seen with __tcp_retransmit_skb in KASAN builds). Where such
 * a clone exists, the group does not see every call: report it partial.
 */
static const struct {
	const char *sym;
	u64 group;
} netlat_bypass_syms[] = {
	{ "__tcp_retransmit_skb.part.0", NETLAT_PROBE_TCP_RETRANS },
};

static bool netlat_symbol_probeable(const char *sym)
{
	struct kprobe kp = { .symbol_name = sym };

	if (register_kprobe(&kp))
		return false;
	unregister_kprobe(&kp);
	return true;
}

int netlat_probes_init(u64 initial, bool test_missing)
{
	unsigned int i;
	int err;

	netlat_tcp_init();
	if (netlat_virtio_init())
		pr_warn("virtio_net probes unavailable\n");
	for (i = 0; i < netlat_tcp_nr_probes; i++) {
		struct netlat_probe *p = &netlat_tcp_probes[i];

		if (p->test_only && !test_missing)
			continue;
		err = netlat_probe_register(p);
		if (err) {
			pr_info("probe %s unavailable (%d)\n", p->name, err);
			netlat_groups_partial |= p->group;
			continue;
		}
		p->avail = true;
		netlat_groups_avail |= p->group;
	}
	for (i = 0; i < ARRAY_SIZE(netlat_bypass_syms); i++) {
		if (!netlat_symbol_probeable(netlat_bypass_syms[i].sym))
			continue;
		pr_info("%s exists: its callers bypass the probes\n",
			netlat_bypass_syms[i].sym);
		netlat_groups_partial |= netlat_bypass_syms[i].group;
	}
	netlat_groups_partial &= netlat_groups_avail;
	initial &= netlat_probes_available();
	if (!initial)
		return 0;
	mutex_lock(&netlat_probes_lock);
	err = netlat_probes_apply(initial);
	mutex_unlock(&netlat_probes_lock);
	if (err)
		netlat_probes_exit();
	return err;
}

void netlat_probes_exit(void)
{
	unsigned int i;

	mutex_lock(&netlat_probes_lock);
	WRITE_ONCE(netlat_probes_on, 0);
	for (i = 0; i < netlat_tcp_nr_probes; i++)
		netlat_probe_unregister(&netlat_tcp_probes[i]);
	netlat_virtio_exit();
	netlat_groups_enabled = 0;
	netlat_groups_avail = 0;
	mutex_unlock(&netlat_probes_lock);
	/* No tracepoint handler still runs once this returns. */
	tracepoint_synchronize_unregister();
	/* so no handler reads the filter rules any more */
	netlat_filter_exit();
}
