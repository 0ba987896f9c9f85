/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return hooks without a kprobe, for the registry's kretprobes on
 * functions that never sleep, where the kernel has no fprobe (6.1): the
 * function's ftrace site sends the call to a wrapper that runs the entry
 * handler, calls the function's body and runs the return handler with its
 * result. A kretprobe's handler holds the CPU's kprobe slot, so the
 * kretprobes of a softirq that interrupts one are lost (nmissed); a
 * wrapper is an ordinary call, ftrace's recursion guard is one per
 * context, and nothing is lost. The kretprobe is still registered,
 * disabled: it resolves the symbol and says the site is ftrace's.
 * Only with the parameter ipmodify=1: a wrapped site is the one that
 * live patching needs (wrap.c).
 */
#ifndef _NETLAT_WRAP_H
#define _NETLAT_WRAP_H

#include <linux/kprobes.h>

struct netlat_wrap;

/* The handlers of a wrapped call, as a kretprobe's (probes.h). */
typedef int (*netlat_wrap_handler_t)(void *data, struct pt_regs *regs);

/*
 * Under the registry's mutex; @kp the kretprobe's (registered, disabled)
 * on a function of the kernel image (a module's could go with its module,
 * still in the filter), @data_size bytes of the call's own for the
 * handlers. NULL: use the kretprobe (also without ipmodify=1).
 */
struct netlat_wrap *netlat_wrap_add(struct kprobe *kp,
				    netlat_wrap_handler_t entry,
				    netlat_wrap_handler_t ret,
				    size_t data_size);
/* Under the registry's mutex, as the add. */
int netlat_wrap_switch(struct netlat_wrap *w, bool on);
/*
 * Off for good, under the registry's mutex; no handler of @w runs once
 * this returns. Its wrapper is kept for its site: until the last site is
 * off, a call may still be on its way in.
 */
void netlat_wrap_del(struct netlat_wrap *w);
/* At unload, after every delete. */
void netlat_wrap_exit(void);

#endif /* _NETLAT_WRAP_H */
