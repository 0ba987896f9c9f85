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

#include <linux/list.h>
#include "hooks.h"

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
	const struct netlat_probe *probes;
	unsigned int nr_probes;
	/* optional, under the registry mutex: before its probes register
	 * (nonzero: not attached) and after they are gone */
	int (*attach)(void);
	void (*detach)(void);
	/* optional, under the registry mutex: these of its groups go on,
	 * none of them was on */
	void (*groups_on)(u64 groups);
	/* optional, under the registry mutex: the level changed (its probes
	 * are switched for it already) */
	void (*level_set)(u32 level);
	/* optional, under the registry mutex: these of its groups went off
	 * (their probes are off and no handler runs in them), or the family
	 * is removed while on */
	void (*groups_off)(u64 groups);

	/* registry state */
	struct netlat_probe_state *state;	/* one per probe */
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

/* Asserts what a family's callback runs under ("the registry mutex"). */
void netlat_probes_assert_held(void);

int netlat_probes_init(bool test_missing);
void netlat_probes_exit(void);
int netlat_family_add(struct netlat_family *f);
void netlat_family_remove(struct netlat_family *f);
int netlat_probes_set(u64 enable);
int netlat_probes_level_begin(u32 level);
void netlat_probes_level_end(u32 level);
void netlat_probes_state(struct netlat_probes *st);
u64 netlat_probes_available(void);
/* NETLAT_IOC_HOOKS: each hook and how the running kernel has it. */
long netlat_probes_ioc_hooks(void __user *uarg);

#endif /* _NETLAT_PROBES_H */
