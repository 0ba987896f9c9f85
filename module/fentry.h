/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The registry's ftrace sites, and its entry hooks through ftrace.
 *
 * One table of hook slots by address serves both ftrace-based backends,
 * entry hooks (here) and wrapped calls (wrap.c), so that two families, or
 * both backends, may hook one site. The registry's mutex is defined here,
 * at the bottom of the registry's units, so that each of them can assert
 * it.
 *
 * Entry hooks are for the registry's kprobes at a function's entry. A
 * kprobe handler runs with the CPU's kprobe slot taken, so a softirq or
 * interrupt that arrives meanwhile loses its own kprobe hits (nmissed);
 * ftrace's recursion guard is one per context, so a hook in a softirq
 * runs inside one in a task. The kprobe is still registered, disabled: it
 * resolves the symbol and says the site is ftrace's. A kernel without the
 * function tracer (or without its argument registers) gets stubs: every
 * entry hook stays a kprobe.
 */
#ifndef _NETLAT_FENTRY_H
#define _NETLAT_FENTRY_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>

struct ftrace_ops;

/* The registry's mutex: every change to a site, a hook or a family. */
extern struct mutex netlat_registry_lock;

#define NETLAT_SITE_BITS	6
#define NETLAT_SITE_MAX		(1U << NETLAT_SITE_BITS)
/* a slot once used: lookups go on past it */
#define NETLAT_SITE_GONE	1UL
/* @ip's tag on a slot reached through another's @also (sites are even) */
#define NETLAT_SITE_ALSO	1UL

/* One hook on a site; found by its site's address without a lock. */
struct netlat_site {
	unsigned long ip;	/* 0: never used */
	struct kprobe *kp;	/* an entry hook's handler */
	struct netlat_site *also;	/* the next hook on the same site */
	/* an entry hook armed: only fentry.c's callback reads it */
	bool on;
	/* a wrapped call: 1 + its wrapper's number (wrap.c); 0: entry hook */
	u8 wrap;
	atomic64_t missed;
};

extern struct netlat_site netlat_sites[NETLAT_SITE_MAX];

/* The first hook of site @ip, or NULL; from an ftrace callback too. */
static __always_inline struct netlat_site *netlat_site_find(unsigned long ip)
{
	u32 h = hash_long(ip, NETLAT_SITE_BITS);
	unsigned int i;

	for (i = 0; i < NETLAT_SITE_MAX; i++) {
		struct netlat_site *s =
			&netlat_sites[(h + i) & (NETLAT_SITE_MAX - 1)];
		unsigned long at = READ_ONCE(s->ip);

		if (at == ip)
			return s;
		if (!at)
			break;
	}
	return NULL;
}

/*
 * Under the registry's mutex: a slot for a hook on @ip, off, chained
 * after the site's others, with @kp and @wrap; NULL if the table is full
 * or @ip odd (the caller keeps its kprobe).
 */
struct netlat_site *netlat_site_add(unsigned long ip, struct kprobe *kp,
				    u8 wrap);
/*
 * Under the registry's mutex, @s off: out of its site's chain. A callback
 * may still be inside it: a grace period before @s's hook is reused.
 */
void netlat_site_del(struct netlat_site *s);

/* A reference to the module for an ftrace user registered (@get) or gone. */
void netlat_ftrace_ref(bool get);

/* An ftrace_ops's site on or off; under the registry's mutex. */
int netlat_ftrace_site(struct ftrace_ops *ops, unsigned int *nr_on,
		       unsigned long ip, bool on);

/* Whether @kp (registered, disabled) can be hooked through ftrace. */
bool netlat_fentry_usable(const struct kprobe *kp);
/*
 * An entry hook, under the registry's mutex: @kp registered (disabled);
 * NULL: use @kp.
 */
struct netlat_site *netlat_fentry_add(struct kprobe *kp);
/* Off and gone; the caller waits for a grace period before reusing @kp. */
void netlat_fentry_del(struct netlat_site *e);
int netlat_fentry_switch(struct netlat_site *e, bool on);
/* Hits lost: the same context re-entered (a handler's own call). */
u64 netlat_fentry_missed(const struct netlat_site *e);

#endif /* _NETLAT_FENTRY_H */
