/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Entry hooks through ftrace, for the registry's kprobes at a function's
 * entry. A kprobe handler runs with the CPU's kprobe slot taken, so a
 * softirq or interrupt that arrives meanwhile loses its own kprobe hits
 * (nmissed); ftrace's recursion guard is one per context, so a hook in a
 * softirq runs inside one in a task. The kprobe is still registered,
 * disabled: it resolves the symbol and says the site is ftrace's.
 * A kernel without the function tracer (or without its argument
 * registers) gets stubs: every entry hook stays a kprobe.
 */
#ifndef _NETLAT_FENTRY_H
#define _NETLAT_FENTRY_H

#include <linux/kprobes.h>
#include <linux/ftrace.h>

struct netlat_fentry;
struct ftrace_ops;

/* Whether @kp (registered, disabled) can be hooked through ftrace. */
bool netlat_fentry_usable(const struct kprobe *kp);
/* Under the registry's mutex; @kp registered (disabled). NULL: use @kp. */
struct netlat_fentry *netlat_fentry_add(struct kprobe *kp);
/* Off and gone; the caller waits for a grace period before reusing @kp. */
void netlat_fentry_del(struct netlat_fentry *e);
int netlat_fentry_switch(struct netlat_fentry *e, bool on);
/* Hits lost: the same context re-entered (a handler's own call). */
u64 netlat_fentry_missed(const struct netlat_fentry *e);

/* An ftrace_ops's site on or off (wrap.c's too); the caller serialises. */
int netlat_ftrace_site(struct ftrace_ops *ops, unsigned int *nr_on,
		       unsigned long ip, bool on);

#endif /* _NETLAT_FENTRY_H */
