/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The registry's hooks: a probe as a family describes it (constant), and
 * its registry state with the backend it got when it was attached, one
 * backend per mechanism (ftrace entry, kprobe, fprobe, wrapped call,
 * kretprobe, tracepoint). The registry calls a probe's backend through
 * its ops and never asks which it is; a backend may hand a probe over to
 * another (a wrapped call to its kretprobe) by changing its ops.
 */
#ifndef _NETLAT_HOOKS_H
#define _NETLAT_HOOKS_H

#include <linux/kprobes.h>
#include <linux/fprobe.h>
#include <linux/tracepoint.h>
#include <linux/types.h>

enum netlat_probe_kind {
	NETLAT_KPROBE,
	NETLAT_KRETPROBE,
	NETLAT_TRACEPOINT,
	NETLAT_PROBE_KINDS
};

/*
 * A return probe's handlers. A kretprobe or, where the kernel has them, an
 * fprobe (which nests across contexts like fentry.h's hooks) calls them;
 * without fprobes, a wrapper (wrap.h) for a function that never sleeps.
 */
typedef int (*netlat_ret_handler_t)(void *data, struct pt_regs *regs);

/* A probe as its family describes it: constant (probes.h's macros). */
struct netlat_probe {
	const char *name;	/* symbol ("module:symbol") or tracepoint */
	u64 group;		/* NETLAT_PROBE_* bit */
	enum netlat_probe_kind kind;
	/* NETLAT_KPROBE */
	kprobe_pre_handler_t pre;
	bool test_only;		/* only with module parameter test_missing */
	/* a compiler clone only some builds have: its absence is no gap */
	bool optional;
	/*
	 * NETLAT_AT_LEVEL() bits of the levels (NETLAT_LEVEL_*) at which it is
	 * armed while its group is on; 0: at every level. A hook that gives a
	 * level nothing is not hit there (a hit costs even when it returns
	 * at once).
	 */
	u8 levels;
	/* NETLAT_KRETPROBE: @data, data_size bytes of the call's own */
	netlat_ret_handler_t entry;	/* nonzero: no return handler */
	netlat_ret_handler_t ret;
	size_t data_size;
	/* the function never sleeps: without fprobes it is wrapped (wrap.h) */
	bool atomic;
	/* NETLAT_TRACEPOINT */
	void *tp_fn;
};

struct netlat_probe_state;

/* A backend: every call under the registry's mutex (fentry.h). */
struct netlat_hook_ops {
	u8 mechanism;		/* NETLAT_HOOK_* */
	/* armed (@on) or not; the registry calls it only for a change */
	int (*arm)(struct netlat_probe_state *st, bool on);
	/* hits lost while attached */
	u64 (*missed)(const struct netlat_probe_state *st);
	/* unregistered: no handler of it runs once this returns */
	void (*detach)(struct netlat_probe_state *st);
	/* optional: a live patch loads; true if the site was given up */
	bool (*yield)(struct netlat_probe_state *st);
};

/* A probe's registry state, under the registry's mutex. */
struct netlat_probe_state {
	const struct netlat_probe *p;
	const struct netlat_hook_ops *ops;	/* NULL: not attached */
	struct kprobe kp;
	struct netlat_site *fentry;	/* kp's site hooked through ftrace */
	struct kretprobe krp;
	struct fprobe fp;		/* krp's site, as an fprobe */
	struct netlat_wrap *wrap;	/* krp's site wrapped */
	struct tracepoint *tp;
	u64 missed_gone;	/* nmissed of its registrations detached */
	bool on;
};

/*
 * Under the registry's mutex: @st's probe found and registered disarmed,
 * @st->ops its backend; nonzero: not there.
 */
int netlat_hook_attach(struct netlat_probe_state *st);

#endif /* _NETLAT_HOOKS_H */
