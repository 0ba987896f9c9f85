// SPDX-License-Identifier: GPL-2.0
/*
 * The registry's ftrace sites and entry hooks (see fentry.h). Sites are
 * found in a small open-addressed table by their address, written under
 * the registry's mutex, read by the callbacks without it. Two hooks may
 * share a site: the second one's slot hangs off the first one's (@also),
 * tagged so that a lookup finds the first only. Each backend has its own
 * ftrace_ops, which holds a site in its filter while a hook of that
 * backend on it is on, so a hook going on or off patches its site only;
 * an ops is registered while any of its hooks is on (an empty filter
 * would trace every function).
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include "fentry.h"
#include "compat.h"

static bool netlat_fentry_off;			/* module parameter */

DEFINE_MUTEX(netlat_registry_lock);

struct netlat_site netlat_sites[NETLAT_SITE_MAX];

struct netlat_site *netlat_site_add(unsigned long ip, struct kprobe *kp,
				    u8 wrap)
{
	struct netlat_site *first, *last;
	u32 h = hash_long(ip, NETLAT_SITE_BITS);
	unsigned int i;

	lockdep_assert_held(&netlat_registry_lock);
	if (ip & NETLAT_SITE_ALSO)
		return NULL;
	first = netlat_site_find(ip);
	for (i = 0; i < NETLAT_SITE_MAX; i++) {
		struct netlat_site *s =
			&netlat_sites[(h + i) & (NETLAT_SITE_MAX - 1)];

		if (s->ip && s->ip != NETLAT_SITE_GONE)
			continue;
		s->kp = kp;
		s->on = false;
		s->wrap = wrap;
		s->also = NULL;
		atomic64_set(&s->missed, 0);
		/* the callbacks find the slot only once it is whole */
		if (!first) {
			smp_store_release(&s->ip, ip);
		} else {
			WRITE_ONCE(s->ip, ip | NETLAT_SITE_ALSO);
			for (last = first; last->also; last = last->also)
				;
			smp_store_release(&last->also, s);
		}
		return s;
	}
	return NULL;
}

/* @s's site's address; its first hook, under the registry's mutex */
static unsigned long netlat_site_ip(const struct netlat_site *s)
{
	return s->ip & ~NETLAT_SITE_ALSO;
}

static struct netlat_site *netlat_site_first(const struct netlat_site *s)
{
	lockdep_assert_held(&netlat_registry_lock);
	return netlat_site_find(netlat_site_ip(s));
}

/*
 * A callback walking the chain meanwhile still finds the others: the next
 * one is tagged as the site's first before @s goes.
 */
void netlat_site_del(struct netlat_site *s)
{
	struct netlat_site *first, *p;

	first = netlat_site_first(s);
	if (first == s) {
		if (s->also)
			smp_store_release(&s->also->ip, s->ip);
	} else if (first) {
		for (p = first; p->also != s; p = p->also)
			;
		WRITE_ONCE(p->also, s->also);
	}
	WRITE_ONCE(s->ip, NETLAT_SITE_GONE);
}

/*
 * An ftrace user of ours (an ops, an fprobe) calls this module's text
 * while it is registered: it holds a reference to the module from its
 * registration until it is unregistered, so that rmmod fails (in use)
 * rather than free text a patched call still reaches, and one that
 * cannot be unregistered (ftrace failed and stopped) keeps the module
 * for good. Taken where a reference is held already (an ioctl's open
 * file, init, a module notifier).
 */
void netlat_ftrace_ref(bool get)
{
	if (get)
		__module_get(THIS_MODULE);
	else
		module_put(THIS_MODULE);
}

#ifdef NETLAT_FENTRY
/*
 * Site @ip into (@on) or out of @ops's filter, @ops registered while the
 * filter holds any (*@nr_on of them): an ops with an empty filter would
 * trace every function. The ops holds the module while registered
 * (netlat_ftrace_ref()). Out: the ops goes before the filter empties.
 */
int netlat_ftrace_site(struct ftrace_ops *ops, unsigned int *nr_on,
		       unsigned long ip, bool on)
{
	int err;

	lockdep_assert_held(&netlat_registry_lock);
	if (on) {
		err = ftrace_set_filter_ip(ops, ip, 0, 0);
		if (err)
			return err;
		if (!*nr_on) {
			err = register_ftrace_function(ops);
			if (err) {
				ftrace_set_filter_ip(ops, ip, 1, 0);
				return err;
			}
			netlat_ftrace_ref(true);
		}
		++*nr_on;
		return 0;
	}
	if (*nr_on == 1) {
		err = unregister_ftrace_function(ops);
		if (err) {
			pr_warn("ftrace: %ps stays on, and so does the module (%d)\n",
				(void *)ip, err);
			return err;
		}
		netlat_ftrace_ref(false);
	}
	--*nr_on;
	/* left in the filter, the site only finds itself off */
	err = ftrace_set_filter_ip(ops, ip, 1, 0);
	if (err)
		pr_warn("ftrace: %ps stays in a filter (%d)\n", (void *)ip, err);
	return 0;
}
#else
int netlat_ftrace_site(struct ftrace_ops *ops, unsigned int *nr_on,
		       unsigned long ip, bool on)
{
	return -EOPNOTSUPP;
}
#endif

#ifdef NETLAT_FENTRY

static unsigned int netlat_fentry_nr_on;	/* under the registry's mutex */

static notrace void netlat_fentry_func(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *op,
				       struct ftrace_regs *fregs)
{
	struct netlat_site *e;
	int bit;

	/*
	 * One guard per context: a softirq's hit runs inside a task's. It
	 * also holds preemption off, so a slot found below is not reused
	 * before the handler returns (a delete waits a grace period). A
	 * wrapped call's slot on the site is never on here.
	 */
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		for (e = netlat_site_find(ip); e; e = READ_ONCE(e->also))
			if (READ_ONCE(e->on))
				atomic64_inc(&e->missed);
		return;
	}
	for (e = netlat_site_find(ip); e; e = READ_ONCE(e->also))
		if (READ_ONCE(e->on))
			e->kp->pre_handler(e->kp, netlat_fregs_regs(fregs));
	ftrace_test_recursion_unlock(bit);
}
NOKPROBE_SYMBOL(netlat_fentry_func);

/*
 * No FTRACE_OPS_FL_RECURSION: that flag asks ftrace to wrap the callback
 * in its own guard (ftrace_ops_assist_func), which drops a re-entry
 * silently. The guard is the callback's, so that a miss is counted, and
 * the trampoline calls it directly.
 */
static struct ftrace_ops netlat_fentry_ops = {
	.func = netlat_fentry_func,
};

bool netlat_fentry_usable(const struct kprobe *kp)
{
	return !netlat_fentry_off &&
	       (kp->flags & KPROBE_FLAG_FTRACE);
}

struct netlat_site *netlat_fentry_add(struct kprobe *kp)
{
	if (!netlat_fentry_usable(kp))
		return NULL;
	return netlat_site_add((unsigned long)kp->addr, kp, 0);
}

/* Whether an entry hook of @e's site but @e is on. */
static bool netlat_fentry_others_on(struct netlat_site *e)
{
	struct netlat_site *s;

	for (s = netlat_site_first(e); s; s = s->also)
		if (s != e && s->on)
			return true;
	return false;
}

int netlat_fentry_switch(struct netlat_site *e, bool on)
{
	int err = 0;

	if (e->on == on)
		return 0;
	/* the site is in the filter while any of its entry hooks is on */
	if (!netlat_fentry_others_on(e))
		err = netlat_ftrace_site(&netlat_fentry_ops,
					 &netlat_fentry_nr_on,
					 netlat_site_ip(e), on);
	if (!err)
		WRITE_ONCE(e->on, on);
	return err;
}

void netlat_fentry_del(struct netlat_site *e)
{
	netlat_fentry_switch(e, false);
	netlat_site_del(e);
}

u64 netlat_fentry_missed(const struct netlat_site *e)
{
	return atomic64_read(&e->missed);
}

#else /* !NETLAT_FENTRY */

bool netlat_fentry_usable(const struct kprobe *kp)
{
	return false;
}

struct netlat_site *netlat_fentry_add(struct kprobe *kp)
{
	return NULL;
}

void netlat_fentry_del(struct netlat_site *e)
{
}

int netlat_fentry_switch(struct netlat_site *e, bool on)
{
	return -EOPNOTSUPP;
}

u64 netlat_fentry_missed(const struct netlat_site *e)
{
	return 0;
}

#endif /* NETLAT_FENTRY */

module_param_named(kprobes_only, netlat_fentry_off, bool, 0444);
MODULE_PARM_DESC(kprobes_only, "Hook function entries with kprobes, not ftrace (to compare: kprobe hits nested in another's are lost)");
