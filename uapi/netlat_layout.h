/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI's layout, checked where it is compiled: the module (uarg.c)
 * and the selftests include this file (it is not installed), so that a
 * change to linux/netlat.h that moves or resizes a field of a released
 * struct fails the module's build, not only the tests'. A struct that
 * grows gains a line here for its new size; the old lines stay.
 */
#ifndef _NETLAT_LAYOUT_H
#define _NETLAT_LAYOUT_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#else
#include <stddef.h>
#endif
#include <linux/netlat.h>

_Static_assert(sizeof(struct netlat_rec_hdr) == 24, "rec_hdr");
_Static_assert(sizeof(struct netlat_rec_stream) == 80, "rec_stream");
_Static_assert(sizeof(struct netlat_rec_lost) == 40, "rec_lost");
_Static_assert(sizeof(struct netlat_rec_marker) == 40, "rec_marker");
_Static_assert(NETLAT_MARKER_MAX + sizeof(struct netlat_rec_marker) ==
	       NETLAT_REC_MAX_SIZE, "marker max");
_Static_assert(sizeof(struct netlat_info) == 136, "info");
_Static_assert(sizeof(struct netlat_cpu_stats) == 72, "cpu_stats");
_Static_assert(sizeof(struct netlat_config) == 72, "config");
_Static_assert(sizeof(struct netlat_control) == 8, "control");
_Static_assert(sizeof(struct netlat_probes) == 576, "probes");
_Static_assert(sizeof(struct netlat_tcp_flow) == 48, "tcp_flow");
_Static_assert(sizeof(struct netlat_rec_tcp_sendmsg) == 120, "tcp_sendmsg");
_Static_assert(sizeof(struct netlat_rec_tcp_push) == 96, "tcp_push");
_Static_assert(sizeof(struct netlat_rec_tcp_skb) == 96, "tcp_skb");
_Static_assert(sizeof(struct netlat_rec_tcp_xmit) == 104, "tcp_xmit");
_Static_assert(sizeof(struct netlat_rec_tcp_retrans) == 104, "tcp_retrans");
_Static_assert(sizeof(struct netlat_rec_tcp_ack) == 96, "tcp_ack");
_Static_assert(sizeof(struct netlat_rec_tcp_dev) == 104, "tcp_dev");
_Static_assert(offsetof(struct netlat_rec_tcp_pkt, vq_ns) ==
	       NETLAT_REC_TCP_PKT_SIZE_VER0, "tcp_pkt ver0");
_Static_assert(sizeof(struct netlat_rec_tcp_pkt) == 152, "tcp_pkt");
_Static_assert(offsetof(struct netlat_rec_rx_pkt, ready_ns) ==
	       NETLAT_REC_RX_PKT_SIZE_VER0, "rx_pkt ver0");
_Static_assert(sizeof(struct netlat_rec_rx_pkt) == 168, "rx_pkt");
_Static_assert(offsetof(struct netlat_hist, merged) == NETLAT_HIST_SIZE_VER0,
	       "hist ver0");
_Static_assert(offsetof(struct netlat_hist, rx_packets) == 160, "hist rx");
_Static_assert(offsetof(struct netlat_hist, rx_wait_untracked) == 208,
	       "hist rx_wait");
_Static_assert(offsetof(struct netlat_hist, rx_unsampled) == 320,
	       "hist rx_unsampled");
_Static_assert(sizeof(struct netlat_hist) == NETLAT_HIST_SIZE_VER0 + 176, "hist");
_Static_assert(sizeof(struct netlat_flows) == NETLAT_FLOWS_SIZE_VER0, "flows");
_Static_assert(sizeof(struct netlat_flow_stats) == NETLAT_FLOW_STATS_SIZE_VER0,
	       "flow_stats");
_Static_assert(sizeof(struct netlat_stage_hist) == NETLAT_STAGE_HIST_SIZE_VER0, "stage_hist");
_Static_assert(sizeof(struct netlat_hooks) == NETLAT_HOOKS_SIZE_VER0, "hooks");
_Static_assert(sizeof(struct netlat_hook) == NETLAT_HOOK_SIZE_VER0, "hook");
_Static_assert(offsetof(struct netlat_hook, mechanism) == 72, "hook mechanism");
_Static_assert(sizeof(struct netlat_rec_snapshot) == 88, "rec_snapshot");
_Static_assert(sizeof(struct netlat_rec_snap_cpu) == 80, "rec_snap_cpu");
_Static_assert(sizeof(struct netlat_snapshot) == NETLAT_SNAPSHOT_SIZE_VER0, "snapshot");
_Static_assert(sizeof(struct netlat_triggers) == NETLAT_TRIGGERS_SIZE_VER0 + 8, "triggers");
_Static_assert(sizeof(struct netlat_filters) == NETLAT_FILTERS_SIZE_VER0, "filters");
_Static_assert(sizeof(struct netlat_filter_rule) == NETLAT_FILTER_RULE_SIZE_VER0, "filter_rule");

#endif /* _NETLAT_LAYOUT_H */
