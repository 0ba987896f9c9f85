// SPDX-License-Identifier: GPL-2.0
/*
 * Wrapped calls (see wrap.h). One ftrace_ops that may change the
 * instruction pointer (IPMODIFY, as live patching does) holds every
 * wrapped site in its filter; its callback points the call at the site's
 * wrapper, which calls the body past the site's fentry call, so the site
 * is not hit again. Redirecting a function is safe where this is built
 * (compat.h): a kernel built for ftrace (-pg) is built without
 * interprocedural register allocation, so no caller counts on registers
 * the function leaves alone, and without IBT, so the body may be called
 * indirectly. Each slot has its own wrapper function, which is how a
 * call knows its slot. A call may run with up to six arguments, all in
 * registers (the handlers read them as a kretprobe's would).
 *
 * Known limit: a BPF program that calls one of these functions' bodies
 * itself (fexit), attached before the site is added to a registered ops,
 * skips the wrapper: ftrace tells such trampolines of an IPMODIFY user
 * only when an ops is registered.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/srcu.h>
#include "wrap.h"
#include "fentry.h"
#include "compat.h"

/*
 * ftrace gives one user per function the right to move the instruction
 * pointer (IPMODIFY): while a site is wrapped, a live patch of that
 * function, or a kprobe with a post handler on it, fails to register
 * (-EBUSY). A security fix must not wait for netlat, so wrapping is the
 * operator's choice; by default the kretprobes stay in use, and what
 * they lose (a hit nested in another kprobe's) is counted as missed.
 * Even so a live patch wins: the registry gives the wrapped sites up as
 * one loads (probes.c, netlat_hooks_yield(); hooks.c).
 */
static bool netlat_wrap_ipmodify;
module_param_named(ipmodify, netlat_wrap_ipmodify, bool, 0444);
MODULE_PARM_DESC(ipmodify, "Wrap the retransmit functions (kernels without fprobe, 6.1): no nested hit lost; given up to a live patch as it loads, but a kprobe with a post handler there fails with EBUSY while they are wrapped");

#ifdef NETLAT_WRAP

#define NETLAT_WRAP_MAX		8
#define NETLAT_WRAP_DATA	64	/* bytes of a call's own, at most */

/* Up to six arguments in registers, the result in one: what is wrapped. */
typedef unsigned long (*netlat_wrap_body_t)(unsigned long, unsigned long,
					    unsigned long, unsigned long,
					    unsigned long, unsigned long);

struct netlat_wrap {
	unsigned long ip;		/* the ftrace site; 0: a free slot */
	netlat_wrap_body_t body;	/* past the site's call */
	netlat_wrap_handler_t entry;
	netlat_wrap_handler_t ret;
	struct netlat_site *site;	/* its hook in the site table */
	bool live;			/* added, not deleted */
	bool on;			/* release: the handlers are set */
};

/*
 * A wrapper keeps its site once used: a call the callback sent to it may
 * still be on its way in, and must meet its own function's body.
 */
static struct netlat_wrap netlat_wraps[NETLAT_WRAP_MAX];
/* A call's handlers run inside it: a delete waits for them (any CPU). */
static struct srcu_struct netlat_wrap_srcu;
static bool netlat_wrap_srcu_ready;	/* under the registry's mutex */
static unsigned int netlat_wrap_nr_on;	/* under the registry's mutex */

/*
 * The handlers run as a kretprobe's would, preemption off; the body runs
 * as it was called. The entry decides whether the return handler runs.
 */
static notrace unsigned long netlat_wrap_call(unsigned int i,
					      unsigned long a0,
					      unsigned long a1,
					      unsigned long a2,
					      unsigned long a3,
					      unsigned long a4,
					      unsigned long a5)
{
	struct netlat_wrap *w = &netlat_wraps[i];
	u64 data[NETLAT_WRAP_DATA / sizeof(u64)];
	struct pt_regs regs = {
		.di = a0, .si = a1, .dx = a2, .cx = a3, .r8 = a4, .r9 = a5,
		.ip = w->ip,
	};
	unsigned long ret;
	bool hook;
	int idx;

	idx = srcu_read_lock(&netlat_wrap_srcu);
	preempt_disable_notrace();
	hook = smp_load_acquire(&w->on) && !w->entry(data, &regs);
	preempt_enable_notrace();
	ret = w->body(a0, a1, a2, a3, a4, a5);
	if (hook) {
		regs.ax = ret;
		preempt_disable_notrace();
		w->ret(data, &regs);
		preempt_enable_notrace();
	}
	srcu_read_unlock(&netlat_wrap_srcu, idx);
	return ret;
}
NOKPROBE_SYMBOL(netlat_wrap_call);

#define NETLAT_WRAP_FN(i)						\
static notrace unsigned long netlat_wrap_fn##i(unsigned long a0,	\
					       unsigned long a1,	\
					       unsigned long a2,	\
					       unsigned long a3,	\
					       unsigned long a4,	\
					       unsigned long a5)	\
{									\
	return netlat_wrap_call(i, a0, a1, a2, a3, a4, a5);		\
}									\
NOKPROBE_SYMBOL(netlat_wrap_fn##i)

NETLAT_WRAP_FN(0);
NETLAT_WRAP_FN(1);
NETLAT_WRAP_FN(2);
NETLAT_WRAP_FN(3);
NETLAT_WRAP_FN(4);
NETLAT_WRAP_FN(5);
NETLAT_WRAP_FN(6);
NETLAT_WRAP_FN(7);

static const netlat_wrap_body_t netlat_wrap_fns[NETLAT_WRAP_MAX] = {
	netlat_wrap_fn0, netlat_wrap_fn1, netlat_wrap_fn2, netlat_wrap_fn3,
	netlat_wrap_fn4, netlat_wrap_fn5, netlat_wrap_fn6, netlat_wrap_fn7,
};

/*
 * Only sets the instruction pointer, calling nothing: no recursion to
 * guard against, so no call goes unwrapped. It may be preempted, and a
 * site's slot reused meanwhile, a wrapper never: it is taken only if it
 * is bound to @ip.
 */
static notrace void netlat_wrap_func(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	struct netlat_site *s;
	unsigned int n;

	if (!regs)
		return;
	for (s = netlat_site_find(ip); s; s = READ_ONCE(s->also)) {
		n = READ_ONCE(s->wrap);
		if (!n || READ_ONCE(netlat_wraps[n - 1].ip) != ip)
			continue;
		if (READ_ONCE(netlat_wraps[n - 1].on))
			instruction_pointer_set(regs,
					(unsigned long)netlat_wrap_fns[n - 1]);
		return;
	}
}
NOKPROBE_SYMBOL(netlat_wrap_func);

static struct ftrace_ops netlat_wrap_ops = {
	.func = netlat_wrap_func,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
};

struct netlat_wrap *netlat_wrap_add(struct kprobe *kp,
				    netlat_wrap_handler_t entry,
				    netlat_wrap_handler_t ret,
				    size_t data_size)
{
	unsigned long ip = (unsigned long)kp->addr;
	struct netlat_wrap *w = NULL;
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(netlat_wrap_fns) != NETLAT_WRAP_MAX);
	lockdep_assert_held(&netlat_registry_lock);
	/* the site is the function's first instruction */
	if (!netlat_wrap_ipmodify || !entry || !ret ||
	    !netlat_fentry_usable(kp) || kp->offset ||
	    data_size > NETLAT_WRAP_DATA)
		return NULL;
	if (!netlat_wrap_srcu_ready) {
		if (init_srcu_struct(&netlat_wrap_srcu))
			return NULL;
		netlat_wrap_srcu_ready = true;
	}
	for (i = 0; i < NETLAT_WRAP_MAX; i++) {
		struct netlat_wrap *s = &netlat_wraps[i];

		/* its own wrapper again after a delete, else a free one */
		if (s->ip == ip) {
			w = s->live ? NULL : s;
			break;
		}
		if (!s->ip && !w)
			w = s;
	}
	if (!w)
		return NULL;
	w->site = netlat_site_add(ip, NULL, w - netlat_wraps + 1);
	if (!w->site)
		return NULL;
	w->body = (netlat_wrap_body_t)(ip + MCOUNT_INSN_SIZE);
	w->entry = entry;
	w->ret = ret;
	w->live = true;
	/* bound for good: the callback finds it through w->site from now */
	WRITE_ONCE(w->ip, ip);
	return w;
}

int netlat_wrap_switch(struct netlat_wrap *w, bool on)
{
	int err;

	lockdep_assert_held(&netlat_registry_lock);
	if (w->on == on)
		return 0;
	/* on: fails if another IPMODIFY user (a live patch) has the site */
	err = netlat_ftrace_site(&netlat_wrap_ops, &netlat_wrap_nr_on, w->ip,
				 on);
	if (err)
		return err;
	if (on)
		/* the handlers, set before, are what a call sees */
		smp_store_release(&w->on, true);
	else
		WRITE_ONCE(w->on, false);
	return 0;
}

void netlat_wrap_del(struct netlat_wrap *w)
{
	netlat_wrap_switch(w, false);
	netlat_site_del(w->site);
	w->site = NULL;
	w->live = false;
	/*
	 * The slot may be reused at once, and fentry.c's callback may be
	 * walking it (preemption off): an entry hook's slot waits for a grace
	 * period in its kprobe's unregistering, this one here.
	 */
	synchronize_rcu();
	/* a call that saw "on" may still run a handler: it never sleeps */
	synchronize_srcu(&netlat_wrap_srcu);
}

/*
 * At unload, every wrap deleted: the last site's unregistering waited for
 * the calls still in the trampolines and wrappers (tasks RCU), none sleeps.
 */
void netlat_wrap_exit(void)
{
	if (netlat_wrap_srcu_ready)
		cleanup_srcu_struct(&netlat_wrap_srcu);
}

#else /* !NETLAT_WRAP */

struct netlat_wrap *netlat_wrap_add(struct kprobe *kp,
				    netlat_wrap_handler_t entry,
				    netlat_wrap_handler_t ret,
				    size_t data_size)
{
	return NULL;
}

int netlat_wrap_switch(struct netlat_wrap *w, bool on)
{
	return -EOPNOTSUPP;
}

void netlat_wrap_del(struct netlat_wrap *w)
{
}

void netlat_wrap_exit(void)
{
}

#endif /* NETLAT_WRAP */
