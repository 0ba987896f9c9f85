// SPDX-License-Identifier: GPL-2.0
/*
 * Probe registry (see probes.h). A family's probes are looked up when it
 * is attached and, if found, registered disarmed by the backend each gets
 * (hooks.c), which the registry then calls through its ops: it never asks
 * which mechanism a probe has. A family bound to a module is
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
#include <linux/slab.h>
#include <linux/netlat.h>
#include "probes.h"
#include "hooks.h"
#include "fentry.h"
#include "wrap.h"
#include "uarg.h"

u64 netlat_probes_on;
static LIST_HEAD(netlat_families);
static u64 netlat_groups_avail;		/* READ_ONCE outside the mutex */
static u64 netlat_groups_enabled;
static bool netlat_test_missing;
/* NETLAT_AT_LEVEL() bits: one level's, both while it changes */
static u32 netlat_probes_levels = NETLAT_AT_LEVEL(NETLAT_LEVEL_EVENTS);

static int netlat_probe_switch(struct netlat_probe_state *st, bool on)
{
	int err;

	if (!st->ops || st->on == on)
		return 0;
	err = st->ops->arm(st, on);
	if (!err)
		st->on = on;
	else
		pr_warn("%s %s: %d\n", on ? "enabling" : "disabling",
			st->p->name, err);
	return err;
}

static u64 netlat_probe_missed(const struct netlat_probe_state *st)
{
	return st->ops ? st->ops->missed(st) : 0;
}

static void netlat_probe_unregister(struct netlat_probe_state *st)
{
	if (!st->ops)
		return;
	st->ops->detach(st);
	st->on = false;
	st->ops = NULL;
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
	       (!p->levels || (p->levels & netlat_probes_levels));
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
		e = netlat_probe_switch(&f->state[i],
					netlat_probe_wanted(&f->probes[i],
							    enable));
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
		const struct netlat_probe *p = &f->probes[i];
		int err;

		if (p->test_only && !netlat_test_missing)
			continue;
		err = netlat_hook_attach(&f->state[i]);
		if (err && p->optional)
			continue;
		if (err) {
			if (!f->module)
				pr_info("probe %s unavailable (%d)\n", p->name,
					err);
			partial |= p->group;
			continue;
		}
		avail |= p->group;
		if (p->kind != NETLAT_TRACEPOINT)
			outside_tp |= p->group;
	}
	/* A module-bound family needs a probe in its module: is it there? */
	if (f->module && !outside_tp) {
		for (i = 0; i < f->nr_probes; i++)
			netlat_probe_unregister(&f->state[i]);
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
		f->state[i].missed_gone += netlat_probe_missed(&f->state[i]);
		netlat_probe_unregister(&f->state[i]);
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
 * notifier): every hook that holds its site's IPMODIFY right (a wrapped
 * call, ipmodify=1) gives it up, so that the patch gets it.
 */
static void netlat_hooks_yield(void)
{
	struct netlat_family *f;
	struct netlat_probe_state *st;
	unsigned int i, n = 0;

	lockdep_assert_held(&netlat_registry_lock);
	list_for_each_entry(f, &netlat_families, node) {
		for (i = 0; i < f->nr_probes; i++) {
			st = &f->state[i];
			if (st->ops && st->ops->yield && st->ops->yield(st))
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
		netlat_hooks_yield();
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

/*
 * All or nothing, and going back never arms: the probes of @enable go on
 * beside those on now, and only then do those no longer wanted go off.
 * If one cannot be armed (the kernel's text patching ran out of memory)
 * what went on goes off again; disarming does not fail (a mechanism
 * that cannot let go keeps its site and says so).
 */
static int netlat_probes_apply_all(u64 enable)
{
	u64 prev = netlat_groups_enabled;
	int err;

	err = netlat_probes_apply(prev | enable);
	return netlat_probes_apply(err ? prev : enable) ?: err;
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
		err = netlat_probes_apply_all(enable);
	mutex_unlock(&netlat_registry_lock);
	return err;
}

/* Each family's probes as the groups enabled and the levels want them. */
static int netlat_probes_switch_levels(u32 levels)
{
	struct netlat_family *f;
	int err = 0, e;

	lockdep_assert_held(&netlat_registry_lock);
	netlat_probes_levels = levels;
	list_for_each_entry(f, &netlat_families, node) {
		e = netlat_family_switch(f, netlat_groups_enabled);
		if (e && !err)
			err = e;
	}
	return err;
}

/*
 * A change of level (NETLAT_LEVEL_*) in two steps around the tables'
 * own (netlat_config_set()), as netlat_probes_apply_all(): first the
 * probes only @level needs go on beside the current level's, which may
 * fail, and then netlat_probes_level_end() takes off those of the level
 * left behind, or of @level if the change did not happen. Handlers
 * check the level themselves, so a probe of a level not in force does
 * nothing, and a hit in flight across the change does no harm.
 */
int netlat_probes_level_begin(u32 level)
{
	u32 now;
	int err;

	mutex_lock(&netlat_registry_lock);
	now = netlat_probes_levels;
	err = netlat_probes_switch_levels(now | NETLAT_AT_LEVEL(level));
	if (err)
		netlat_probes_switch_levels(now);
	mutex_unlock(&netlat_registry_lock);
	return err;
}

/* The level in force is @level: the probes of any other go off. */
void netlat_probes_level_end(u32 level)
{
	struct netlat_family *f;

	mutex_lock(&netlat_registry_lock);
	netlat_probes_switch_levels(NETLAT_AT_LEVEL(level));
	list_for_each_entry(f, &netlat_families, node)
		if (f->level_set)
			f->level_set(level);
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
			const struct netlat_probe_state *ps = &f->state[i];
			u64 n = ps->missed_gone + netlat_probe_missed(ps);

			st->group_missed[__ffs64(f->probes[i].group)] += n;
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

/* How the running kernel has @st's probe (NETLAT_HOOK_*). */
static u8 netlat_probe_mechanism(const struct netlat_family *f,
				 const struct netlat_probe_state *st)
{
	lockdep_assert_held(&netlat_registry_lock);
	if (st->ops)
		return st->ops->mechanism;
	return f->module && !f->attached ? NETLAT_HOOK_DEFERRED :
					   NETLAT_HOOK_ABSENT;
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
			h->mechanism = netlat_probe_mechanism(f, &f->state[i]);
			h->levels = p->levels;
			h->flags = (f->state[i].on ? NETLAT_HOOK_ARMED : 0) |
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

	f->state = kcalloc(f->nr_probes, sizeof(*f->state), GFP_KERNEL);
	if (!f->state)
		return -ENOMEM;
	f->groups = 0;
	for (i = 0; i < f->nr_probes; i++) {
		f->state[i].p = &f->probes[i];
		f->groups |= f->probes[i].group;
	}
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
	kfree(f->state);
	f->state = NULL;
}

void netlat_probes_assert_held(void)
{
	lockdep_assert_held(&netlat_registry_lock);
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
