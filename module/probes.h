/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe registry: every probe family (tcp.c, virtio.c, ...) hands it a
 * table of kprobes, kretprobes and tracepoints grouped in NETLAT_PROBE_*
 * groups; NETLAT_IOC_PROBES switches whole groups. A probe whose symbol
 * or tracepoint is missing leaves its group partial (or unavailable);
 * nothing about a missing probe is fatal. A family whose probes live in a
 * kernel module is attached while that module is live: its groups can be
 * enabled before, and stay enabled across an unload and reload.
 */
#ifndef _NETLAT_PROBES_H
#define _NETLAT_PROBES_H

#include <linux/kprobes.h>
#include <linux/fprobe.h>
#include <linux/tracepoint.h>
#include <linux/list.h>

enum netlat_probe_kind {
	NETLAT_KPROBE,
	NETLAT_KRETPROBE,
	NETLAT_TRACEPOINT,
};

/*
 * A return probe's handlers. A kretprobe or, where the kernel has them, an
 * fprobe (which nests across contexts like fentry.h's hooks) calls them;
 * without fprobes, a wrapper (wrap.h) for a function that never sleeps.
 */
typedef int (*netlat_ret_handler_t)(void *data, struct pt_regs *regs);

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

	/* registry state, under its mutex */
	struct kprobe kp;
	struct netlat_site *fentry;	/* kp's site hooked through ftrace */
	struct kretprobe krp;
	struct fprobe fp;		/* krp's site, if netlat_use_fprobe() */
	struct netlat_wrap *wrap;	/* krp's site wrapped instead */
	struct tracepoint *tp;
	u64 missed_gone;	/* nmissed of its registrations detached */
	bool avail;
	bool on;
};

#define NETLAT_AT_LEVEL(level)	(1U << (level))
#define NETLAT_EVENTS_ONLY	NETLAT_AT_LEVEL(NETLAT_LEVEL_EVENTS)
#define NETLAT_PACKETS_ONLY	NETLAT_AT_LEVEL(NETLAT_LEVEL_PACKETS)

/* A probe armed only at the levels @lv (NETLAT_AT_LEVEL() bits). */
#define NETLAT_KP_AT(sym, grp, fn, lv) \
	{ .name = sym, .group = grp, .kind = NETLAT_KPROBE, .pre = fn, \
	  .levels = lv }
#define NETLAT_KRP_AT(sym, grp, en, rt, type, lv) \
	{ .name = sym, .group = grp, .kind = NETLAT_KRETPROBE, .entry = en, \
	  .ret = rt, .data_size = sizeof(type), .levels = lv }
/*
 * A tracepoint handler's type is its tracepoint's prototype, data first:
 * checked at build time by the kernel's check_trace_callback_type_<tp>()
 * from the tracepoint's header (the family includes it). Inside sizeof the
 * call is type-checked, never made; a mismatch, such as a missing
 * argument (a trap under kCFI), is an incompatible-pointer warning (W=1
 * builds fail on it) or, with gcc 14, an error.
 */
#define NETLAT_TP_FN(tp, fn) \
	__builtin_choose_expr(sizeof((check_trace_callback_type_##tp(fn), 0)), \
			      (void *)(fn), NULL)
#define NETLAT_TP_AT(tp, grp, fn, lv) \
	{ .name = #tp, .group = grp, .kind = NETLAT_TRACEPOINT, \
	  .tp_fn = NETLAT_TP_FN(tp, fn), .levels = lv }

#define NETLAT_KP(sym, grp, fn)	NETLAT_KP_AT(sym, grp, fn, 0)
#define NETLAT_KRP(sym, grp, en, rt, type) \
	NETLAT_KRP_AT(sym, grp, en, rt, type, 0)
/* The same for a function that never sleeps (see .atomic). */
#define NETLAT_KRP_ATOMIC(sym, grp, en, rt, type) \
	{ .name = sym, .group = grp, .kind = NETLAT_KRETPROBE, .entry = en, \
	  .ret = rt, .data_size = sizeof(type), .atomic = true }
#define NETLAT_TP(tp, grp, fn)	NETLAT_TP_AT(tp, grp, fn, 0)

struct netlat_family {
	const char *name;
	/* NULL: the core kernel; else attached while this module is live */
	const char *module;
	struct netlat_probe *probes;
	unsigned int nr_probes;
	/* optional, under the registry mutex: before its probes register
	 * (nonzero: not attached) and after they are gone */
	int (*attach)(void);
	void (*detach)(void);
	/* optional: these of its groups go on, none of them was on */
	void (*groups_on)(u64 groups);
	/* optional, under the registry mutex: the level changed (its probes
	 * are switched for it already) */
	void (*level_set)(u32 level);
	/* optional: these of its groups went off (their probes are off and
	 * no handler runs in them), or the family is removed while on */
	void (*groups_off)(u64 groups);

	/* registry state */
	struct list_head node;
	u64 groups;		/* every group of the table */
	u64 avail;
	u64 partial;
	bool attached;
};

/* Groups whose records may be written now (handlers check their bit). */
extern u64 netlat_probes_on;

static __always_inline bool netlat_group_on(u64 group)
{
	return READ_ONCE(netlat_probes_on) & group;
}

struct netlat_probes;

int netlat_probes_init(bool test_missing);
void netlat_probes_exit(void);
int netlat_family_add(struct netlat_family *f);
void netlat_family_remove(struct netlat_family *f);
int netlat_probes_set(u64 enable);
void netlat_probes_set_level(u32 level);
void netlat_probes_state(struct netlat_probes *st);
u64 netlat_probes_available(void);
/* NETLAT_IOC_HOOKS: each hook and how the running kernel has it. */
long netlat_probes_ioc_hooks(void __user *uarg);

#endif /* _NETLAT_PROBES_H */
