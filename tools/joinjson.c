// SPDX-License-Identifier: GPL-2.0
/*
 * "netlat join --json": a clock estimate, a direction with its counts and
 * stages, a packet with its ACK's way back, each as one JSON object.
 */
#include <stdint.h>
#include <stdio.h>

#include "joinjson.h"
#include "output.h"

static const char *const host_name[2] = { "A", "B" };

static void print_i64(const char *key, int64_t v, bool comma)
{
	printf("\"%s\":", key);
	if (v == INT64_MIN || v == INT64_MAX)
		printf("null");
	else
		printf("%lld", (long long)v);
	if (comma)
		printf(",");
}

void join_json_est(const struct netlat_clock_est *e)
{
	printf("{\"from_ns\":%llu,\"to_ns\":%llu,\"at_ns\":%llu,", ull(e->from_ns),
	       ull(e->to_ns), ull(e->at_ns));
	if (e->flags & NETLAT_CLOCK_NONE)
		printf("\"offset_ns\":null,\"lo_ns\":null,\"hi_ns\":null,"
		       "\"drift_ppm\":null,\"drift_lo_ppm\":null,\"drift_hi_ppm\":null,");
	else {
		print_i64("offset_ns", e->offset_ns, true);
		print_i64("lo_ns", e->lo_ns, true);
		print_i64("hi_ns", e->hi_ns, true);
		printf("\"drift_ppm\":%.3f,\"drift_lo_ppm\":%.3f,\"drift_hi_ppm\":%.3f,",
		       e->drift_ppm, e->drift_lo_ppm, e->drift_hi_ppm);
	}
	printf("\"samples_ab\":%llu,\"samples_ba\":%llu,\"impossible\":%llu,"
	       "\"none\":%s,\"step\":%s,\"drift_at_limit\":%s}",
	       ull(e->samples_ab), ull(e->samples_ba), ull(e->impossible),
	       e->flags & NETLAT_CLOCK_NONE ? "true" : "false",
	       e->flags & NETLAT_CLOCK_STEP ? "true" : "false",
	       e->flags & NETLAT_CLOCK_DRIFT_AT_LIMIT ? "true" : "false");
}

static void print_dist_named(const char *name, const struct netlat_dist *d, bool comma)
{
	print_json_string(stdout, name);
	printf(":");
	print_dist_json(stdout, d);
	if (comma)
		printf(",");
}

/* enum netlat_xack_why, in its order */
static const char *const why_name[] = {
	"all", "no_ack", "retrans", "range", "pure_ack", "unverified", "tsval_shared",
	"ack_retrans",
	"no_rx_stamp",
	"impossible", "no_clock",
};
_Static_assert(sizeof(why_name) / sizeof(why_name[0]) == NETLAT_XACK_NR_WHY,
	       "a name per enum netlat_xack_why");

/* The direction's "ack": its counts and the three values' distributions. */
static void print_ack_direction(const struct netlat_join *j, unsigned int s,
				const struct join_direction *d)
{
	struct netlat_join_ack_counts c;
	char name[48];
	unsigned int k;

	netlat_join_ack_counts(j, &c);
	printf("\"ack\":{\"joined\":%llu,\"rtt\":%llu,\"ack_delay\":%llu,\"wire_back\":%llu,"
	       "\"wire_back_one_sided\":%llu,\"why\":{", ull(c.packets[s]), ull(c.rtt[s]),
	       ull(c.delay[s]), ull(c.wire[s]), ull(d->back_one_sided));
	for (k = 0; k < NETLAT_XACK_NR_WHY; k++)
		printf("\"%s\":%llu%s", why_name[k], ull(c.why[s][k]),
		       k + 1 < NETLAT_XACK_NR_WHY ? "," : "},");
	/* after "why": the keys before it are as they were */
	printf("\"ack_delay_pure\":%llu,\"acks_out\":%llu,\"stages\":{", ull(c.pure[s]),
	       ull(c.acks_out[s]));
	snprintf(name, sizeof(name), "%s ack delay", host_name[!s]);
	print_dist_named(name, &d->dack_delay, true);
	print_dist_named("wire back", &d->dback, true);
	print_dist_named("wire_back_bound", &d->dback_bound, true);
	snprintf(name, sizeof(name), "%s round trip", host_name[s]);
	print_dist_named(name, &d->drtt, false);
	printf("}}");
}

void join_json_direction(const struct netlat_join *j, unsigned int s,
			 const struct join_direction *d)
{
	struct netlat_join_counts cs, *c = &cs;
	struct netlat_join_tsval_counts tc;
	char name[48];
	unsigned int k;

	netlat_join_counts(j, c);
	netlat_join_tsval_counts(j, &tc);
	printf("{\"sender\":\"%s\",\"receiver\":\"%s\",\"sent\":%llu,\"sent_bytes\":%llu,"
	       "\"joined\":%llu,\"joined_bytes\":%llu,\"no_flow\":%llu,\"no_record\":%llu,"
	       "\"retrans\":%llu,\"no_stamp\":%llu,\"impossible\":%llu,\"no_clock\":%llu,"
	       "\"wire_one_sided\":%llu,\"received\":%llu,\"received_unjoined\":%llu,"
	       "\"joined_by_tsval\":%llu,\"tsval_tick\":%llu,\"tsval_impossible\":%llu,"
	       "\"stages\":{",
	       host_name[s], host_name[!s], ull(c->sent[s]), ull(c->sent_bytes[s]),
	       ull(c->joined[s]), ull(c->joined_bytes[s]), ull(c->no_flow[s]),
	       ull(c->no_record[s]), ull(c->retrans[s]), ull(c->no_stamp[s]),
	       ull(c->impossible[s]), ull(d->no_clock), ull(d->one_sided), ull(c->received[s]),
	       ull(c->received_unjoined[s]), ull(tc.rescued[s]), ull(tc.tick[s]),
	       ull(tc.impossible[s]));
	for (k = 0; k < JOIN_SIDE_STAGES; k++) {
		snprintf(name, sizeof(name), "%s %s", host_name[s], netlat_stage_name(join_tx_stages[k]));
		print_dist_named(name, &d->dtx[k], true);
	}
	print_dist_named("wire", &d->dwire, true);
	print_dist_named("wire_bound", &d->dbound, true);
	for (k = 0; k < JOIN_SIDE_STAGES; k++) {
		snprintf(name, sizeof(name), "%s %s", host_name[!s], netlat_stage_name(join_rx_stages[k]));
		print_dist_named(name, &d->drx[k], k + 1 < JOIN_SIDE_STAGES);
	}
	printf("},");
	print_ack_direction(j, s, d);
	printf("}");
}

static void print_stage_fields(bool tx, const void *rec)
{
	unsigned int k;
	uint64_t from, to;

	for (k = 0; k < JOIN_SIDE_STAGES; k++) {
		bool ok = tx ? netlat_pkt_stage(rec, join_tx_stages[k], &from, &to)
			     : netlat_rx_pkt_stage(rec, join_rx_stages[k], &from, &to);

		print_json_string(stdout, netlat_stage_name(tx ? join_tx_stages[k] : join_rx_stages[k]));
		if (ok)
			printf(":%llu", ull(to - from));
		else
			printf(":null");
		printf(k + 1 < JOIN_SIDE_STAGES ? "," : "");
	}
}

/* The packet's "ack": why it lacks a value, and the values (null if not). */
static void print_ack_packet(const struct netlat_join *j, size_t i,
			     const struct netlat_rec_tcp_pkt *tx)
{
	struct netlat_xack x;
	bool wire;

	if (netlat_join_ack(j, i, &x))
		return;
	wire = x.flags & NETLAT_XACK_WIRE;
	printf(",\"ack\":{\"why\":\"%s\",", x.why < NETLAT_XACK_NR_WHY ? why_name[x.why] : "");
	print_i64("ack_rx_ns", tx->ack_rx_ns ? (int64_t)tx->ack_rx_ns : INT64_MAX, true);
	print_i64("rtt_ns", x.flags & NETLAT_XACK_RTT ? x.rtt_ns : INT64_MAX, true);
	print_i64("delay_ns", x.flags & NETLAT_XACK_DELAY ? x.delay_ns : INT64_MAX, true);
	print_i64("wire_back_ns", wire ? x.wire_ns : INT64_MAX, true);
	print_i64("wire_back_lo_ns", wire ? x.wire_lo_ns : INT64_MAX, true);
	print_i64("wire_back_hi_ns", wire ? x.wire_hi_ns : INT64_MAX, false);
	printf(",\"carrier\":%s}", !(x.flags & NETLAT_XACK_DELAY) ? "null" :
				      x.flags & NETLAT_XACK_PURE_ACK ? "\"pure_ack\"" : "\"packet\"");
}

void join_json_packet(const struct netlat_join *j, size_t i)
{
	/* by bit; TX_FIRST and RX_FIRST are the library's bookkeeping */
	static const char *const flag_names[] = {
		"exact", "gso_split", "gro_merged", "retrans", "no_stamp", "no_clock",
		"impossible", NULL, NULL, "joined_by_tsval", "tsval_tick", "tsval_differ",
	};
	const struct netlat_xpkt *pairs;
	size_t n_pairs = netlat_join_pairs(j, &pairs);
	const struct netlat_xpkt *p;
	unsigned int k, n = 0;
	bool wire;

	if (i >= n_pairs)
		return;
	p = &pairs[i];
	wire = !(p->flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_NO_CLOCK |
			     NETLAT_XPKT_RETRANS | NETLAT_XPKT_IMPOSSIBLE));
	printf("{\"sender\":\"%s\"", host_name[p->sender]);
	print_flow(stdout, &p->tx->flow, true);
	printf(",\"seq\":%u,\"end_seq\":%u,\"flags\":[", p->seq, p->end_seq);
	for (k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
		if (p->flags & (1U << k) && flag_names[k])
			printf("%s\"%s\"", n++ ? "," : "", flag_names[k]);
	printf("],\"driver_ns\":%llu,\"netif_ns\":%llu,", ull(p->tx->driver_ns),
	       ull(p->rx->netif_ns));
	if (wire) {
		print_i64("wire_ns", p->wire_ns, true);
		print_i64("wire_lo_ns", p->wire_lo_ns, true);
		print_i64("wire_hi_ns", p->wire_hi_ns, true);
	} else {
		printf("\"wire_ns\":null,\"wire_lo_ns\":null,\"wire_hi_ns\":null,");
	}
	printf("\"send\":{");
	print_stage_fields(true, p->tx);
	printf("},\"receive\":{");
	print_stage_fields(false, p->rx);
	printf("}");
	print_ack_packet(j, i, p->tx);
	printf("}");
}

