// SPDX-License-Identifier: GPL-2.0
/*
 * Entry hooks through ftrace (see fentry.h). One ftrace_ops holds every
 * hook's site in its filter, so a hook going on or off patches its site
 * only; the ops itself is registered while any hook is on (an empty
 * filter would trace every function). Sites are found in a small table by
 * their address, written under a mutex, read by the callback without one.
 * Two families may hook one site: the second hook's slot hangs off the
 * first one's (@also), tagged so that a lookup finds the first only.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/hash.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include "fentry.h"
#include "compat.h"

static bool netlat_fentry_off;			/* module parameter */

#ifdef NETLAT_FENTRY

#define NETLAT_FENTRY_BITS	6
#define NETLAT_FENTRY_MAX	(1U << NETLAT_FENTRY_BITS)
/* a slot once used: lookups go on past it */
#define NETLAT_FENTRY_GONE	1UL
/* @ip's tag on a slot reached through another's @also (sites are even) */
#define NETLAT_FENTRY_ALSO	1UL

struct netlat_fentry {
	unsigned long ip;	/* 0: never used */
	struct kprobe *kp;
	struct netlat_fentry *also;	/* the next hook on the same site */
	bool on;
	atomic64_t missed;
};

static struct netlat_fentry netlat_fentries[NETLAT_FENTRY_MAX];
static DEFINE_MUTEX(netlat_fentry_lock);
static unsigned int netlat_fentry_nr_on;	/* under the mutex */

static notrace struct netlat_fentry *netlat_fentry_find(unsigned long ip)
{
	u32 h = hash_long(ip, NETLAT_FENTRY_BITS);
	unsigned int i;

	for (i = 0; i < NETLAT_FENTRY_MAX; i++) {
		struct netlat_fentry *e =
			&netlat_fentries[(h + i) & (NETLAT_FENTRY_MAX - 1)];
		unsigned long at = READ_ONCE(e->ip);

		if (at == ip)
			return e;
		if (!at)
			break;
	}
	return NULL;
}

static notrace void netlat_fentry_func(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *op,
				       struct ftrace_regs *fregs)
{
	struct netlat_fentry *e;
	int bit;

	/*
	 * One guard per context: a softirq's hit runs inside a task's. It
	 * also holds preemption off, so a slot found below is not reused
	 * before the handler returns (a delete waits a grace period).
	 */
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		for (e = netlat_fentry_find(ip); e; e = READ_ONCE(e->also))
			if (READ_ONCE(e->on))
				atomic64_inc(&e->missed);
		return;
	}
	for (e = netlat_fentry_find(ip); e; e = READ_ONCE(e->also))
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

struct netlat_fentry *netlat_fentry_add(struct kprobe *kp)
{
	struct netlat_fentry *e = NULL, *first, *last;
	unsigned long ip = (unsigned long)kp->addr;
	u32 h = hash_long(ip, NETLAT_FENTRY_BITS);
	unsigned int i;

	if (!netlat_fentry_usable(kp) || (ip & NETLAT_FENTRY_ALSO))
		return NULL;
	mutex_lock(&netlat_fentry_lock);
	first = netlat_fentry_find(ip);
	for (i = 0; i < NETLAT_FENTRY_MAX; i++) {
		struct netlat_fentry *s =
			&netlat_fentries[(h + i) & (NETLAT_FENTRY_MAX - 1)];

		if (s->ip && s->ip != NETLAT_FENTRY_GONE)
			continue;
		s->kp = kp;
		s->on = false;
		s->also = NULL;
		atomic64_set(&s->missed, 0);
		/* the callback finds the slot only once it is whole */
		if (!first) {
			smp_store_release(&s->ip, ip);
		} else {
			WRITE_ONCE(s->ip, ip | NETLAT_FENTRY_ALSO);
			for (last = first; last->also; last = last->also)
				;
			smp_store_release(&last->also, s);
		}
		e = s;
		break;
	}
	mutex_unlock(&netlat_fentry_lock);
	return e;
}

/* The first slot of @e's site, under the mutex. */
static struct netlat_fentry *netlat_fentry_first(struct netlat_fentry *e)
{
	lockdep_assert_held(&netlat_fentry_lock);
	return netlat_fentry_find(e->ip & ~NETLAT_FENTRY_ALSO);
}

/* Whether a hook of @e's site but @e is on, under the mutex. */
static bool netlat_fentry_others_on(struct netlat_fentry *e)
{
	struct netlat_fentry *s;

	for (s = netlat_fentry_first(e); s; s = s->also)
		if (s != e && s->on)
			return true;
	return false;
}

/*
 * Site @ip into (@on) or out of @ops's filter, @ops registered while the
 * filter holds any (*@nr_on of them): an ops with an empty filter would
 * trace every function. The caller serialises. Out: the ops goes before
 * the filter empties; if it cannot (ftrace failed and stopped), the site
 * stays on and so does the module, whose callback may still be called.
 */
int netlat_ftrace_site(struct ftrace_ops *ops, unsigned int *nr_on,
		       unsigned long ip, bool on)
{
	int err;

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
		}
		++*nr_on;
		return 0;
	}
	if (*nr_on == 1) {
		err = unregister_ftrace_function(ops);
		if (err) {
			pr_warn("ftrace: %ps stays on (%d)\n", (void *)ip, err);
			__module_get(THIS_MODULE);
			return err;
		}
	}
	--*nr_on;
	/* left in the filter, the site only finds itself off */
	err = ftrace_set_filter_ip(ops, ip, 1, 0);
	if (err)
		pr_warn("ftrace: %ps stays in a filter (%d)\n", (void *)ip, err);
	return 0;
}

static int netlat_fentry_switch_locked(struct netlat_fentry *e, bool on)
{
	int err;

	lockdep_assert_held(&netlat_fentry_lock);
	if (e->on == on)
		return 0;
	/* the site is in the filter while any of its hooks is on */
	if (netlat_fentry_others_on(e))
		err = 0;
	else
		err = netlat_ftrace_site(&netlat_fentry_ops,
					 &netlat_fentry_nr_on,
					 e->ip & ~NETLAT_FENTRY_ALSO, on);
	if (!err)
		WRITE_ONCE(e->on, on);
	return err;
}

int netlat_fentry_switch(struct netlat_fentry *e, bool on)
{
	int err;

	mutex_lock(&netlat_fentry_lock);
	err = netlat_fentry_switch_locked(e, on);
	mutex_unlock(&netlat_fentry_lock);
	return err;
}

/*
 * Out of its site's chain. A callback walking it meanwhile still finds
 * the others: the next one is tagged as the site's first before @e goes.
 */
void netlat_fentry_del(struct netlat_fentry *e)
{
	struct netlat_fentry *first, *s;

	mutex_lock(&netlat_fentry_lock);
	netlat_fentry_switch_locked(e, false);
	first = netlat_fentry_first(e);
	if (first == e) {
		if (e->also)
			smp_store_release(&e->also->ip, e->ip);
	} else if (first) {
		for (s = first; s->also != e; s = s->also)
			;
		WRITE_ONCE(s->also, e->also);
	}
	WRITE_ONCE(e->ip, NETLAT_FENTRY_GONE);
	mutex_unlock(&netlat_fentry_lock);
}

u64 netlat_fentry_missed(const struct netlat_fentry *e)
{
	return atomic64_read(&e->missed);
}

#else /* !NETLAT_FENTRY */

bool netlat_fentry_usable(const struct kprobe *kp)
{
	return false;
}

struct netlat_fentry *netlat_fentry_add(struct kprobe *kp)
{
	return NULL;
}

void netlat_fentry_del(struct netlat_fentry *e)
{
}

int netlat_fentry_switch(struct netlat_fentry *e, bool on)
{
	return -EOPNOTSUPP;
}

u64 netlat_fentry_missed(const struct netlat_fentry *e)
{
	return 0;
}

int netlat_ftrace_site(struct ftrace_ops *ops, unsigned int *nr_on,
		       unsigned long ip, bool on)
{
	return -EOPNOTSUPP;
}

#endif /* NETLAT_FENTRY */

module_param_named(kprobes_only, netlat_fentry_off, bool, 0444);
MODULE_PARM_DESC(kprobes_only, "Hook function entries with kprobes, not ftrace (to compare: kprobe hits nested in another's are lost)");
