// SPDX-License-Identifier: GPL-2.0
/*
 * Probe registry (see probes.h). A family's probes are looked up when it
 * is attached and, if found, registered disabled (kprobes, kretprobes) or
 * remembered (tracepoints, registered only while enabled, so an idle
 * module costs nothing on their sites). A family bound to a module is
 * attached when the module becomes live (module notifier) and detached
 * when it goes: the kernel's kprobe layer only disarms the kprobes of a
 * departing module, and a kprobe never pins the module it probes.
 *
 * Handlers never run after a family is detached: kprobes are
 * unregistered (which waits for running handlers, and for kretprobe
 * instances in flight), tracepoints unregistered and synchronised.
 */
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/kprobes.h>
#include <linux/slab.h>
#include <linux/netlat.h>
#include "probes.h"
#include "fentry.h"
#include "wrap.h"
#include "uarg.h"
#include "compat.h"

u64 netlat_probes_on;
static LIST_HEAD(netlat_families);
static u64 netlat_groups_avail;		/* READ_ONCE outside the mutex */
static u64 netlat_groups_enabled;
static bool netlat_test_missing;
static u32 netlat_probes_level;		/* NETLAT_LEVEL_* */

static void netlat_find_tp(struct tracepoint *tp, void *priv)
{
	struct netlat_probe *p = priv;

	if (!p->tp && !strcmp(tp->name, p->name))
		p->tp = tp;
}

/* Blocked senders hold an instance while they sleep in sendmsg. */
static int netlat_maxactive(void)
{
	return max_t(int, 256, 32 * num_possible_cpus());
}

/* Kretprobe and fprobe callbacks: the probe's handlers, given its data. */
static notrace int netlat_krp_entry(struct kretprobe_instance *ri,
				    struct pt_regs *regs)
{
	struct netlat_probe *p =
		container_of(get_kretprobe(ri), struct netlat_probe, krp);

	return p->entry(ri->data, regs);
}
NOKPROBE_SYMBOL(netlat_krp_entry);

static notrace int netlat_krp_ret(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	struct netlat_probe *p =
		container_of(get_kretprobe(ri), struct netlat_probe, krp);

	return p->ret(ri->data, regs);
}
NOKPROBE_SYMBOL(netlat_krp_ret);

#ifdef NETLAT_FPROBE
static notrace int netlat_fp_entry(struct fprobe *fp, unsigned long ip,
				   unsigned long ret_ip,
				   NETLAT_FPROBE_REGS *regs, void *data)
{
	struct netlat_probe *p = container_of(fp, struct netlat_probe, fp);

	return p->entry(data, netlat_fprobe_regs(regs));
}
NOKPROBE_SYMBOL(netlat_fp_entry);

static notrace void netlat_fp_exit(struct fprobe *fp, unsigned long ip,
				   unsigned long ret_ip,
				   NETLAT_FPROBE_REGS *regs, void *data)
{
	struct netlat_probe *p = container_of(fp, struct netlat_probe, fp);

	p->ret(data, netlat_fprobe_regs(regs));
}
NOKPROBE_SYMBOL(netlat_fp_exit);

/*
 * A return probe is an fprobe while on: registered then, gone when off
 * (a registered fprobe, even disabled, is called at its site). Its
 * kretprobe stays registered, disabled: it found the symbol.
 */
static bool netlat_use_fprobe(const struct netlat_probe *p)
{
	return netlat_fentry_usable(&p->krp.kp);
}

static int netlat_fprobe_switch(struct netlat_probe *p, bool on)
{
	unsigned long addr = (unsigned long)p->krp.kp.addr;
	int err;

	if (!on) {
		err = unregister_fprobe(&p->fp);
		if (!err)
			p->missed_gone += p->fp.nmissed;
		return err;
	}
	memset(&p->fp, 0, sizeof(p->fp));
	p->fp.entry_handler = netlat_fp_entry;
	p->fp.exit_handler = netlat_fp_exit;
	p->fp.entry_data_size = p->data_size;
	netlat_fprobe_maxactive(&p->fp, netlat_maxactive());
	err = register_fprobe_ips(&p->fp, &addr, 1);
	return err;
}
#else
static bool netlat_use_fprobe(const struct netlat_probe *p)
{
	return false;
}

static int netlat_fprobe_switch(struct netlat_probe *p, bool on)
{
	return -EOPNOTSUPP;
}
#endif

static int netlat_probe_register(struct netlat_probe *p)
{
	int err;

	/* a probe struct is registered afresh after every detach */
	memset(&p->kp, 0, sizeof(p->kp));
	memset(&p->krp, 0, sizeof(p->krp));
	p->fentry = NULL;
	p->wrap = NULL;
	switch (p->kind) {
	case NETLAT_KPROBE:
		p->kp.symbol_name = p->name;
		p->kp.pre_handler = p->pre;
		p->kp.flags = KPROBE_FLAG_DISABLED;
		err = register_kprobe(&p->kp);
		if (!err)
			p->fentry = netlat_fentry_add(&p->kp);
		return err;
	case NETLAT_KRETPROBE:
		p->krp.kp.symbol_name = p->name;
		p->krp.kp.flags = KPROBE_FLAG_DISABLED;
		p->krp.entry_handler = netlat_krp_entry;
		p->krp.handler = netlat_krp_ret;
		p->krp.data_size = p->data_size;
		p->krp.maxactive = netlat_maxactive();
		err = register_kretprobe(&p->krp);
		/* a module's function ("module:symbol") is not wrapped */
		if (!err && p->atomic && !strchr(p->name, ':') &&
		    !netlat_use_fprobe(p))
			p->wrap = netlat_wrap_add(&p->krp.kp, p->entry, p->ret,
						  p->data_size);
		return err;
	case NETLAT_TRACEPOINT:
		if (!p->tp)
			for_each_kernel_tracepoint(netlat_find_tp, p);
		return p->tp ? 0 : -ENOENT;
	}
	return -EINVAL;
}

/* A site that refuses the wrap (a live patch has it): the kretprobe. */
static int netlat_wrap_probe_switch(struct netlat_probe *p, bool on)
{
	int err = netlat_wrap_switch(p->wrap, on);

	if (!err || !on)
		return err;
	pr_info("%s: wrapping it failed (%d), a kretprobe instead\n", p->name,
		err);
	netlat_wrap_del(p->wrap);
	p->wrap = NULL;
	return enable_kretprobe(&p->krp);
}

static int netlat_probe_switch(struct netlat_probe *p, bool on)
{
	int err = 0;

	if (!p->avail || p->on == on)
		return 0;
	switch (p->kind) {
	case NETLAT_KPROBE:
		if (p->fentry)
			err = netlat_fentry_switch(p->fentry, on);
		else
			err = on ? enable_kprobe(&p->kp) :
				   disable_kprobe(&p->kp);
		break;
	case NETLAT_KRETPROBE:
		if (netlat_use_fprobe(p))
			err = netlat_fprobe_switch(p, on);
		else if (p->wrap)
			err = netlat_wrap_probe_switch(p, on);
		else
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

static u64 netlat_probe_missed(const struct netlat_probe *p)
{
	if (!p->avail)
		return 0;
	if (p->kind == NETLAT_KPROBE)
		return p->kp.nmissed +
		       (p->fentry ? netlat_fentry_missed(p->fentry) : 0);
	if (p->kind == NETLAT_KRETPROBE)
		return p->krp.nmissed + p->krp.kp.nmissed +
		       (p->on && netlat_use_fprobe(p) ? p->fp.nmissed : 0);
	return 0;
}

static void netlat_probe_unregister(struct netlat_probe *p)
{
	if (!p->avail)
		return;
	switch (p->kind) {
	case NETLAT_KPROBE:
		/* before: unregistering waits for handlers of both */
		if (p->fentry)
			netlat_fentry_del(p->fentry);
		p->fentry = NULL;
		unregister_kprobe(&p->kp);
		break;
	case NETLAT_KRETPROBE:
		/* its misses were taken by the caller (detach) */
		if (p->on && netlat_use_fprobe(p))
			unregister_fprobe(&p->fp);
		if (p->wrap)
			netlat_wrap_del(p->wrap);
		p->wrap = NULL;
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

/* The union of what the attached families give. */
static void netlat_update_avail(void)
{
	struct netlat_family *f;
	u64 avail = 0;

	lockdep_assert_held(&netlat_registry_lock);
	list_for_each_entry(f, &netlat_families, node)
		avail |= f->avail;
	WRITE_ONCE(netlat_groups_avail, avail);
}

/* Groups of module-bound families whose module is not live now. */
static u64 netlat_groups_deferred(void)
{
	struct netlat_family *f;
	u64 deferred = 0;

	lockdep_assert_held(&netlat_registry_lock);
	list_for_each_entry(f, &netlat_families, node)
		if (f->module && !f->attached)
			deferred |= f->groups;
	return deferred;
}

/* Under the mutex: is @p armed with groups @enable at the current level? */
static bool netlat_probe_wanted(const struct netlat_probe *p, u64 enable)
{
	return (p->group & enable) &&
	       (!p->levels || (p->levels & NETLAT_AT_LEVEL(netlat_probes_level)));
}

/* Each probe of @f on or off as @enable says. */
static int netlat_family_switch(struct netlat_family *f, u64 enable)
{
	unsigned int i;
	int err = 0, e;

	lockdep_assert_held(&netlat_registry_lock);
	if (!f->attached)
		return 0;
	/* table order: a family lists context probes before their users */
	for (i = 0; i < f->nr_probes; i++) {
		struct netlat_probe *p = &f->probes[i];

		e = netlat_probe_switch(p, netlat_probe_wanted(p, enable));
		if (e && !err)
			err = e;
	}
	return err;
}

/* Register @f's probes, then switch on what is enabled. */
static void netlat_family_attach(struct netlat_family *f)
{
	u64 avail = 0, partial = 0, outside_tp = 0;
	unsigned int i;

	lockdep_assert_held(&netlat_registry_lock);
	if (f->attached || (f->attach && f->attach()))
		return;
	for (i = 0; i < f->nr_probes; i++) {
		struct netlat_probe *p = &f->probes[i];
		int err;

		if (p->test_only && !netlat_test_missing)
			continue;
		err = netlat_probe_register(p);
		if (err && p->optional)
			continue;
		if (err) {
			if (!f->module)
				pr_info("probe %s unavailable (%d)\n", p->name,
					err);
			partial |= p->group;
			continue;
		}
		p->avail = true;
		avail |= p->group;
		if (p->kind != NETLAT_TRACEPOINT)
			outside_tp |= p->group;
	}
	/* A module-bound family needs a probe in its module: is it there? */
	if (f->module && !outside_tp) {
		for (i = 0; i < f->nr_probes; i++)
			netlat_probe_unregister(&f->probes[i]);
		if (f->detach)
			f->detach();
		return;
	}
	f->avail = avail;
	f->partial = partial & avail;
	f->attached = true;
	netlat_update_avail();
	netlat_family_switch(f, netlat_groups_enabled);
	if (f->module)
		pr_info("attached to %s (groups 0x%llx)\n", f->module, avail);
}

static void netlat_family_detach(struct netlat_family *f)
{
	unsigned int i;

	lockdep_assert_held(&netlat_registry_lock);
	if (!f->attached)
		return;
	for (i = 0; i < f->nr_probes; i++) {
		f->probes[i].missed_gone += netlat_probe_missed(&f->probes[i]);
		netlat_probe_unregister(&f->probes[i]);
	}
	/* No tracepoint handler still runs once this returns. */
	tracepoint_synchronize_unregister();
	f->attached = false;
	f->avail = 0;
	f->partial = 0;
	netlat_update_avail();
	if (f->detach)
		f->detach();
	if (f->module)
		pr_info("detached from %s\n", f->module);
}

/*
 * A live patch is loading (its init, which enables it, runs after the
 * notifier): every wrapped call gives its site up for its kretprobe, so
 * the patch gets the one IPMODIFY right of the function (ipmodify=1).
 * The kretprobe goes on before the wrap goes: a call that meets both is
 * recorded once (a retransmit handler skips an entry nested in one for
 * the same skb), and none falls between them.
 */
static void netlat_wraps_yield(void)
{
	struct netlat_family *f;
	struct netlat_probe *p;
	unsigned int i, n = 0;

	lockdep_assert_held(&netlat_registry_lock);
	list_for_each_entry(f, &netlat_families, node) {
		for (i = 0; i < f->nr_probes; i++) {
			p = &f->probes[i];
			if (!p->wrap)
				continue;
			if (p->on && enable_kretprobe(&p->krp)) {
				pr_warn("%s: no kretprobe to yield its wrapped call to\n",
					p->name);
				continue;
			}
			netlat_wrap_del(p->wrap);
			p->wrap = NULL;
			n++;
		}
	}
	if (n)
		pr_info("a live patch is loading: %u wrapped calls are kretprobes now\n",
			n);
}

static int netlat_module_event(struct notifier_block *nb, unsigned long state,
			       void *data)
{
	struct module *mod = data;
	struct netlat_family *f;

	if (state == MODULE_STATE_COMING && is_livepatch_module(mod)) {
		mutex_lock(&netlat_registry_lock);
		netlat_wraps_yield();
		mutex_unlock(&netlat_registry_lock);
		return NOTIFY_DONE;
	}
	if (state != MODULE_STATE_LIVE && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&netlat_registry_lock);
	list_for_each_entry(f, &netlat_families, node) {
		if (!f->module || strcmp(f->module, mod->name))
			continue;
		if (state == MODULE_STATE_LIVE)
			netlat_family_attach(f);
		else
			netlat_family_detach(f);
	}
	mutex_unlock(&netlat_registry_lock);
	return NOTIFY_DONE;
}

static struct notifier_block netlat_module_nb = {
	.notifier_call = netlat_module_event,
};

static int netlat_probes_apply(u64 enable)
{
	struct netlat_family *f;
	int err = 0, e;

	lockdep_assert_held(&netlat_registry_lock);
	/*
	 * Handlers of groups going off stop writing; once the grace period
	 * ends none is still inside a record (handlers run non-preemptible).
	 */
	if (netlat_probes_on & ~enable) {
		WRITE_ONCE(netlat_probes_on, netlat_probes_on & enable);
		synchronize_rcu();
	}
	list_for_each_entry(f, &netlat_families, node) {
		u64 newly = enable & f->groups & ~netlat_groups_enabled;
		u64 gone = netlat_groups_enabled & f->groups & ~enable;

		if (newly && f->groups_on)
			f->groups_on(newly);
		e = netlat_family_switch(f, enable);
		if (e && !err)
			err = e;
		if (gone && f->groups_off)
			f->groups_off(gone);
	}
	netlat_groups_enabled = enable;
	WRITE_ONCE(netlat_probes_on, enable);
	return err;
}

int netlat_probes_set(u64 enable)
{
	int err;

	if (enable & ~NETLAT_PROBE_ALL)
		return -EINVAL;
	if (mutex_lock_interruptible(&netlat_registry_lock))
		return -ERESTARTSYS;
	if (enable & ~(netlat_groups_avail | netlat_groups_deferred()))
		err = -EOPNOTSUPP;
	else
		err = netlat_probes_apply(enable);
	mutex_unlock(&netlat_registry_lock);
	return err;
}

/*
 * The level (NETLAT_LEVEL_*) changed: probes that only one level needs
 * go on or off for the groups enabled. Their handlers still check the
 * level themselves: a hit in flight across the change must do no harm.
 */
void netlat_probes_set_level(u32 level)
{
	struct netlat_family *f;

	mutex_lock(&netlat_registry_lock);
	netlat_probes_level = level;
	list_for_each_entry(f, &netlat_families, node) {
		netlat_family_switch(f, netlat_groups_enabled);
		if (f->level_set)
			f->level_set(level);
	}
	mutex_unlock(&netlat_registry_lock);
}

u64 netlat_probes_available(void)
{
	return READ_ONCE(netlat_groups_avail);
}

void netlat_probes_state(struct netlat_probes *st)
{
	struct netlat_family *f;
	unsigned int i;
	u64 missed = 0, partial = 0;

	memset(st->group_missed, 0, sizeof(st->group_missed));
	mutex_lock(&netlat_registry_lock);
	list_for_each_entry(f, &netlat_families, node) {
		partial |= f->partial;
		for (i = 0; i < f->nr_probes; i++) {
			const struct netlat_probe *p = &f->probes[i];
			u64 n = p->missed_gone + netlat_probe_missed(p);

			st->group_missed[__ffs64(p->group)] += n;
			missed += n;
		}
	}
	st->available = netlat_groups_avail;
	st->partial = partial;
	st->enabled = netlat_groups_enabled;
	st->deferred = netlat_groups_deferred();
	st->nmissed = missed;
	mutex_unlock(&netlat_registry_lock);
}

/* How the running kernel has @p (NETLAT_HOOK_*). */
static u8 netlat_probe_mechanism(const struct netlat_family *f,
				 const struct netlat_probe *p)
{
	lockdep_assert_held(&netlat_registry_lock);
	if (!p->avail)
		return f->module && !f->attached ? NETLAT_HOOK_DEFERRED :
						   NETLAT_HOOK_ABSENT;
	switch (p->kind) {
	case NETLAT_TRACEPOINT:
		return NETLAT_HOOK_TRACEPOINT;
	case NETLAT_KPROBE:
		if (p->fentry)
			return NETLAT_HOOK_FTRACE;
		return p->kp.flags & KPROBE_FLAG_FTRACE ?
		       NETLAT_HOOK_KPROBE_FTRACE : NETLAT_HOOK_KPROBE;
	case NETLAT_KRETPROBE:
		if (netlat_use_fprobe(p))
			return NETLAT_HOOK_FPROBE;
		return p->wrap ? NETLAT_HOOK_WRAPPED : NETLAT_HOOK_KRETPROBE;
	}
	return NETLAT_HOOK_ABSENT;
}

/* Every family's hooks, the first @room of them in @out: how many. */
static unsigned int netlat_probes_hooks(struct netlat_hook *out,
					unsigned int room)
{
	struct netlat_family *f;
	unsigned int i, n = 0;

	mutex_lock(&netlat_registry_lock);
	list_for_each_entry(f, &netlat_families, node) {
		for (i = 0; i < f->nr_probes; i++) {
			const struct netlat_probe *p = &f->probes[i];
			struct netlat_hook *h;

			if (p->test_only && !netlat_test_missing)
				continue;
			if (n++ >= room)
				continue;
			h = &out[n - 1];
			strscpy(h->name, p->name, sizeof(h->name));
			h->group = p->group;
			h->mechanism = netlat_probe_mechanism(f, p);
			h->levels = p->levels;
			h->flags = (p->on ? NETLAT_HOOK_ARMED : 0) |
				   (p->optional ? NETLAT_HOOK_OPTIONAL : 0);
		}
	}
	mutex_unlock(&netlat_registry_lock);
	return n;
}

long netlat_probes_ioc_hooks(void __user *uarg)
{
	struct netlat_hook *h;
	struct netlat_hooks a;
	unsigned int n, room;
	u32 usize;
	int err;

	err = netlat_get_arg(a, NETLAT_HOOKS_SIZE_VER0, 0, uarg, &usize);
	if (err)
		return err;
	if (a.nr && (a.entry_size < NETLAT_HOOK_SIZE_VER0 ||
		     a.entry_size > PAGE_SIZE || !a.entries))
		return -EINVAL;
	n = netlat_probes_hooks(NULL, 0);
	if (a.nr && n) {
		room = min_t(unsigned int, a.nr, n);
		h = kcalloc(room, sizeof(*h), GFP_KERNEL);
		if (!h)
			return -ENOMEM;
		n = netlat_probes_hooks(h, room);
		err = netlat_copy_array_out(a.entries, a.entry_size, h,
					    sizeof(*h), min(room, n));
		kfree(h);
		if (err)
			return err;
	}
	a.nr = n;
	return netlat_copy_out(uarg, &a, sizeof(a), usize);
}

/* A family's probes register now, or when its module becomes live. */
int netlat_family_add(struct netlat_family *f)
{
	unsigned int i;

	f->groups = 0;
	for (i = 0; i < f->nr_probes; i++)
		f->groups |= f->probes[i].group;
	mutex_lock(&netlat_registry_lock);
	list_add_tail(&f->node, &netlat_families);
	/* a module-bound family's module may be live already */
	netlat_family_attach(f);
	mutex_unlock(&netlat_registry_lock);
	return 0;
}

/* No handler of @f runs once this returns. */
void netlat_family_remove(struct netlat_family *f)
{
	mutex_lock(&netlat_registry_lock);
	netlat_family_detach(f);
	/* what groups_on took for its enabled groups is given back */
	if (f->groups_off && (f->groups & netlat_groups_enabled))
		f->groups_off(f->groups & netlat_groups_enabled);
	list_del(&f->node);
	mutex_unlock(&netlat_registry_lock);
}

int netlat_probes_init(bool test_missing)
{
	netlat_test_missing = test_missing;
	return register_module_notifier(&netlat_module_nb);
}

/* Every family was removed. */
void netlat_probes_exit(void)
{
	unregister_module_notifier(&netlat_module_nb);
	WRITE_ONCE(netlat_probes_on, 0);
	netlat_groups_enabled = 0;
	netlat_wrap_exit();
}
