/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe registry: probe groups (NETLAT_PROBE_* bits), each made of
 * kprobes, kretprobes and tracepoints found at load. A probe whose symbol
 * or tracepoint is missing leaves its group partial (or unavailable);
 * nothing about a missing probe is fatal.
 */
#ifndef _NETLAT_PROBES_H
#define _NETLAT_PROBES_H

#include <linux/kprobes.h>
#include <linux/tracepoint.h>

enum netlat_probe_kind {
	NETLAT_KPROBE,
	NETLAT_KRETPROBE,
	NETLAT_TRACEPOINT,
};

struct netlat_probe {
	const char *name;	/* symbol or tracepoint name */
	u64 group;		/* NETLAT_PROBE_* bit */
	enum netlat_probe_kind kind;
	/* NETLAT_KPROBE */
	kprobe_pre_handler_t pre;
	bool test_only;		/* only with module parameter test_missing */
	/* NETLAT_KRETPROBE */
	kretprobe_handler_t entry;
	kretprobe_handler_t ret;
	size_t data_size;
	/* NETLAT_TRACEPOINT */
	void *tp_fn;

	/* state, under the registry mutex */
	struct kprobe kp;
	struct kretprobe krp;
	struct tracepoint *tp;
	bool avail;
	bool on;
};

/* Groups whose records may be written now (handlers check their bit). */
extern u64 netlat_probes_on;

static __always_inline bool netlat_group_on(u64 group)
{
	return READ_ONCE(netlat_probes_on) & group;
}

/* tcp.c: the probe table and per-load setup of the TCP records */
extern struct netlat_probe netlat_tcp_probes[];
extern const unsigned int netlat_tcp_nr_probes;
void netlat_tcp_init(void);
void netlat_tcp_reset_slots(void);

/* tcp.c: skb and socket identities (SipHash under the load's keys) */
struct sk_buff;
struct sock;
u64 netlat_skb_id(const struct sk_buff *skb);
u64 netlat_sk_id(const struct sock *sk);

/* virtio.c: virtio_net groups, attached while virtio_net is loaded */
int netlat_virtio_init(void);
void netlat_virtio_exit(void);
int netlat_virtio_switch(u64 enable);
u64 netlat_virtio_available(void);
u64 netlat_virtio_partial(void);
u64 netlat_virtio_nmissed(void);

/* probes.c */
int netlat_probes_init(u64 initial, bool test_missing);
void netlat_probes_exit(void);
struct netlat_probes;
int netlat_probes_set(u64 enable);
void netlat_probes_state(struct netlat_probes *st);
u64 netlat_probes_available(void);

#endif /* _NETLAT_PROBES_H */
