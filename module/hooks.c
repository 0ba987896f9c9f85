// SPDX-License-Identifier: GPL-2.0
/*
 * The registry's hook backends (see hooks.h). Attaching a probe registers
 * its kprobe or kretprobe disarmed, which finds the symbol and says
 * whether the site is ftrace's, and picks the backend: a kprobe at an
 * ftrace site is an entry hook (fentry.c), else a kprobe; a return probe
 * is an fprobe where the kernel has one, else a wrapped call (wrap.c) for
 * a function of the kernel image that never sleeps, else a kretprobe. A
 * tracepoint is looked up once and registered only while armed, so an
 * idle module costs nothing on its site.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/netlat.h>
#include "hooks.h"
#include "fentry.h"
#include "wrap.h"
#include "compat.h"

/* The backends, by the mechanism each is (below). */
#define NETLAT_BACKENDS		(NETLAT_HOOK_KRETPROBE + 1)
static const struct netlat_hook_ops netlat_backends[NETLAT_BACKENDS];

/* Blocked senders hold an instance while they sleep in sendmsg. */
static int netlat_maxactive(void)
{
	return max_t(int, 256, 32 * num_possible_cpus());
}

/* Kretprobe and fprobe callbacks: the probe's handlers, given its data. */
static __always_inline const struct netlat_probe *
netlat_krp_probe(struct kretprobe_instance *ri)
{
	return container_of(get_kretprobe(ri), struct netlat_probe_state,
			    krp)->p;
}

static notrace int netlat_krp_entry(struct kretprobe_instance *ri,
				    struct pt_regs *regs)
{
	return netlat_krp_probe(ri)->entry(ri->data, regs);
}
NOKPROBE_SYMBOL(netlat_krp_entry);

static notrace int netlat_krp_ret(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	return netlat_krp_probe(ri)->ret(ri->data, regs);
}
NOKPROBE_SYMBOL(netlat_krp_ret);

/* kprobe: armed in place. */
static int netlat_kprobe_arm(struct netlat_probe_state *st, bool on)
{
	return on ? enable_kprobe(&st->kp) : disable_kprobe(&st->kp);
}

static u64 netlat_kprobe_missed(const struct netlat_probe_state *st)
{
	return st->kp.nmissed;
}

static void netlat_kprobe_detach(struct netlat_probe_state *st)
{
	unregister_kprobe(&st->kp);
}



/* ftrace entry: the kprobe stays disarmed, it only found the site. */
static int netlat_fentry_arm(struct netlat_probe_state *st, bool on)
{
	return netlat_fentry_switch(st->fentry, on);
}

static u64 netlat_fentry_hook_missed(const struct netlat_probe_state *st)
{
	return st->kp.nmissed + netlat_fentry_missed(st->fentry);
}

static void netlat_fentry_detach(struct netlat_probe_state *st)
{
	/* before: unregistering waits for handlers of both */
	netlat_fentry_del(st->fentry);
	st->fentry = NULL;
	unregister_kprobe(&st->kp);
}


static int netlat_kprobe_attach(struct netlat_probe_state *st)
{
	int err;

	st->kp.symbol_name = st->p->name;
	st->kp.pre_handler = st->p->pre;
	st->kp.flags = KPROBE_FLAG_DISABLED;
	err = register_kprobe(&st->kp);
	if (err)
		return err;
	st->fentry = netlat_fentry_add(&st->kp);
	if (st->fentry)
		st->ops = &netlat_backends[NETLAT_HOOK_FTRACE];
	else if (st->kp.flags & KPROBE_FLAG_FTRACE)
		st->ops = &netlat_backends[NETLAT_HOOK_KPROBE_FTRACE];
	else
		st->ops = &netlat_backends[NETLAT_HOOK_KPROBE];
	return 0;
}

/* kretprobe: armed in place. */
static int netlat_kretprobe_arm(struct netlat_probe_state *st, bool on)
{
	return on ? enable_kretprobe(&st->krp) : disable_kretprobe(&st->krp);
}

static u64 netlat_kretprobe_missed(const struct netlat_probe_state *st)
{
	return st->krp.nmissed + st->krp.kp.nmissed;
}

static void netlat_kretprobe_detach(struct netlat_probe_state *st)
{
	unregister_kretprobe(&st->krp);
}


/* Wrapped call; a site that refuses it (a live patch has it): the kretprobe. */
static int netlat_wrap_arm(struct netlat_probe_state *st, bool on)
{
	int err = netlat_wrap_switch(st->wrap, on);

	if (!err || !on)
		return err;
	pr_info("%s: wrapping it failed (%d), a kretprobe instead\n",
		st->p->name, err);
	netlat_wrap_del(st->wrap);
	st->wrap = NULL;
	st->ops = &netlat_backends[NETLAT_HOOK_KRETPROBE];
	return enable_kretprobe(&st->krp);
}

static void netlat_wrap_detach(struct netlat_probe_state *st)
{
	netlat_wrap_del(st->wrap);
	st->wrap = NULL;
	unregister_kretprobe(&st->krp);
}

/*
 * A live patch is loading: the site goes to the kretprobe, which goes on
 * before the wrap goes, so that a call that meets both is recorded once
 * (a retransmit handler skips an entry nested in one for the same skb)
 * and none falls between them.
 */
static bool netlat_wrap_yield(struct netlat_probe_state *st)
{
	if (st->on && enable_kretprobe(&st->krp)) {
		pr_warn("%s: no kretprobe to yield its wrapped call to\n",
			st->p->name);
		return false;
	}
	netlat_wrap_del(st->wrap);
	st->wrap = NULL;
	st->ops = &netlat_backends[NETLAT_HOOK_KRETPROBE];
	return true;
}


#ifdef NETLAT_FPROBE
static notrace int netlat_fp_entry(struct fprobe *fp, unsigned long ip,
				   unsigned long ret_ip,
				   NETLAT_FPROBE_REGS *regs, void *data)
{
	struct netlat_probe_state *st =
		container_of(fp, struct netlat_probe_state, fp);

	return st->p->entry(data, netlat_fprobe_regs(regs));
}
NOKPROBE_SYMBOL(netlat_fp_entry);

static notrace void netlat_fp_exit(struct fprobe *fp, unsigned long ip,
				   unsigned long ret_ip,
				   NETLAT_FPROBE_REGS *regs, void *data)
{
	struct netlat_probe_state *st =
		container_of(fp, struct netlat_probe_state, fp);

	st->p->ret(data, netlat_fprobe_regs(regs));
}
NOKPROBE_SYMBOL(netlat_fp_exit);

/*
 * fprobe: registered while armed, gone when not (a registered fprobe,
 * even disabled, is called at its site). Its kretprobe stays registered,
 * disarmed: it found the symbol.
 */
static int netlat_fprobe_arm(struct netlat_probe_state *st, bool on)
{
	unsigned long addr = (unsigned long)st->krp.kp.addr;
	int err;

	if (!on) {
		err = unregister_fprobe(&st->fp);
		if (err)
			return err;
		st->missed_gone += st->fp.nmissed;
		netlat_ftrace_ref(false);
		return 0;
	}
	memset(&st->fp, 0, sizeof(st->fp));
	st->fp.entry_handler = netlat_fp_entry;
	st->fp.exit_handler = netlat_fp_exit;
	st->fp.entry_data_size = st->p->data_size;
	netlat_fprobe_maxactive(&st->fp, netlat_maxactive());
	err = register_fprobe_ips(&st->fp, &addr, 1);
	if (!err)
		netlat_ftrace_ref(true);
	return err;
}

static u64 netlat_fprobe_missed(const struct netlat_probe_state *st)
{
	return netlat_kretprobe_missed(st) + (st->on ? st->fp.nmissed : 0);
}

/* its misses were taken by the caller (detach) */
static void netlat_fprobe_detach(struct netlat_probe_state *st)
{
	if (st->on && !unregister_fprobe(&st->fp))
		netlat_ftrace_ref(false);
	unregister_kretprobe(&st->krp);
}

#endif

static int netlat_kretprobe_attach(struct netlat_probe_state *st)
{
	const struct netlat_probe *p = st->p;
	int err;

	st->krp.kp.symbol_name = p->name;
	st->krp.kp.flags = KPROBE_FLAG_DISABLED;
	st->krp.entry_handler = netlat_krp_entry;
	st->krp.handler = netlat_krp_ret;
	st->krp.data_size = p->data_size;
	st->krp.maxactive = netlat_maxactive();
	err = register_kretprobe(&st->krp);
	if (err)
		return err;
	st->ops = &netlat_backends[NETLAT_HOOK_KRETPROBE];
#ifdef NETLAT_FPROBE
	if (netlat_fentry_usable(&st->krp.kp)) {
		st->ops = &netlat_backends[NETLAT_HOOK_FPROBE];
		return 0;
	}
#endif
	/* a module's function ("module:symbol") is not wrapped */
	if (p->atomic && !strchr(p->name, ':'))
		st->wrap = netlat_wrap_add(&st->krp.kp, p->entry, p->ret,
					   p->data_size);
	if (st->wrap)
		st->ops = &netlat_backends[NETLAT_HOOK_WRAPPED];
	return 0;
}

/* tracepoint: registered while armed. */
static int netlat_tp_arm(struct netlat_probe_state *st, bool on)
{
	return on ? tracepoint_probe_register(st->tp, st->p->tp_fn, NULL) :
		    tracepoint_probe_unregister(st->tp, st->p->tp_fn, NULL);
}

static u64 netlat_tp_missed(const struct netlat_probe_state *st)
{
	return 0;
}

/* the caller waits for its handlers (tracepoint_synchronize_unregister) */
static void netlat_tp_detach(struct netlat_probe_state *st)
{
	if (st->on)
		tracepoint_probe_unregister(st->tp, st->p->tp_fn, NULL);
}


static void netlat_find_tp(struct tracepoint *tp, void *priv)
{
	struct netlat_probe_state *st = priv;

	if (!st->tp && !strcmp(tp->name, st->p->name))
		st->tp = tp;
}

static int netlat_tp_attach(struct netlat_probe_state *st)
{
	if (!st->tp)
		for_each_kernel_tracepoint(netlat_find_tp, st);
	if (!st->tp)
		return -ENOENT;
	st->ops = &netlat_backends[NETLAT_HOOK_TRACEPOINT];
	return 0;
}

/*
 * A kprobe on an ftrace site is one because kprobes_only=1, or because
 * the site table is full. A wrapped call's misses are its kretprobe's.
 */
static const struct netlat_hook_ops netlat_backends[NETLAT_BACKENDS] = {
#define NETLAT_BACKEND(m, a, mi, d, ...) \
	[m] = { .mechanism = m, .arm = a, .missed = mi, .detach = d, \
		__VA_ARGS__ }
	NETLAT_BACKEND(NETLAT_HOOK_TRACEPOINT, netlat_tp_arm, netlat_tp_missed,
		       netlat_tp_detach),
	NETLAT_BACKEND(NETLAT_HOOK_FTRACE, netlat_fentry_arm,
		       netlat_fentry_hook_missed, netlat_fentry_detach),
	NETLAT_BACKEND(NETLAT_HOOK_KPROBE_FTRACE, netlat_kprobe_arm,
		       netlat_kprobe_missed, netlat_kprobe_detach),
	NETLAT_BACKEND(NETLAT_HOOK_KPROBE, netlat_kprobe_arm,
		       netlat_kprobe_missed, netlat_kprobe_detach),
#ifdef NETLAT_FPROBE
	NETLAT_BACKEND(NETLAT_HOOK_FPROBE, netlat_fprobe_arm,
		       netlat_fprobe_missed, netlat_fprobe_detach),
#endif
	NETLAT_BACKEND(NETLAT_HOOK_WRAPPED, netlat_wrap_arm,
		       netlat_kretprobe_missed, netlat_wrap_detach,
		       .yield = netlat_wrap_yield),
	NETLAT_BACKEND(NETLAT_HOOK_KRETPROBE, netlat_kretprobe_arm,
		       netlat_kretprobe_missed, netlat_kretprobe_detach),
#undef NETLAT_BACKEND
};

static int (*const netlat_hook_attach_kind[NETLAT_PROBE_KINDS])
	(struct netlat_probe_state *st) = {
	[NETLAT_KPROBE] = netlat_kprobe_attach,
	[NETLAT_KRETPROBE] = netlat_kretprobe_attach,
	[NETLAT_TRACEPOINT] = netlat_tp_attach,
};

int netlat_hook_attach(struct netlat_probe_state *st)
{
	lockdep_assert_held(&netlat_registry_lock);
	/* a probe is registered afresh after every detach */
	memset(&st->kp, 0, sizeof(st->kp));
	memset(&st->krp, 0, sizeof(st->krp));
	st->fentry = NULL;
	st->wrap = NULL;
	st->ops = NULL;
	if (st->p->kind >= NETLAT_PROBE_KINDS)
		return -EINVAL;
	return netlat_hook_attach_kind[st->p->kind](st);
}
