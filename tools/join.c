// SPDX-License-Identifier: GPL-2.0
/*
 * netlat join: two hosts' captures joined packet by packet (libnetlat's
 * netlat_join): the clock line, then per direction each stage across
 * both hosts with the wire between them and its bound, and the way back
 * of each packet's ACK.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "join.h"
#include "joinhtml.h"
#include "joinjson.h"
#include "jointrace.h"
#include "notes.h"
#include "output.h"

static const char *const host_name[2] = { "A", "B" };

struct join_args {
	bool json, packets;
	bool inner;			/* inside another command's output */
	const char *trace;		/* --chrome-trace */
	struct host_notes notes[2];
	struct netlat_join_opts o;
	const char *file[2];
	bool have_addr[2];
	uint16_t family[2];
	uint8_t addr[2][16];
};

/* A record's local address is @host's, when an address selects the host. */
static bool is_host(const struct join_args *a, unsigned int host,
		    const struct netlat_rec_hdr *rec)
{
	const struct netlat_flow *f;

	if (!a->have_addr[host])
		return true;
	if (rec->type == NETLAT_REC_TCP_PKT)
		f = &((const struct netlat_rec_tcp_pkt *)rec)->flow;
	else if (rec->type == NETLAT_REC_RX_PKT)
		f = &((const struct netlat_rec_rx_pkt *)rec)->flow;
	else if (rec->type == NETLAT_REC_TCP_ACK_OUT)
		f = &((const struct netlat_rec_tcp_ack_out *)rec)->flow;
	else
		return false;
	return f->family == a->family[host] && !memcmp(f->saddr, a->addr[host], 16);
}

static int load(struct netlat_join *j, struct join_args *a, unsigned int host)
{
	char errbuf[NETLAT_ERRBUF_SIZE];
	const struct netlat_rec_hdr *rec;
	struct netlat_source *src = netlat_open(a->file[host], errbuf);
	int r;

	if (!src) {
		error("%s", errbuf);
		return -1;
	}
	while ((r = netlat_next(src, &rec)) > 0 || r == -EINTR) {
		if (r < 0)
			continue;
		if (rec->type == NETLAT_REC_NOTE)
			notes_take(&a->notes[host], (const void *)rec);
		if (!is_host(a, host, rec))
			continue;
		r = netlat_join_add(j, host, rec);
		if (r == -ENOMEM) {
			error("out of memory");
			break;
		}
		if (r == -ERANGE) {
			error("%s: --b-offset and --b-ppm move a time below zero or past 2^63 ns",
			      a->file[host]);
			break;
		}
		r = 1;
	}
	if (r < 0 && r != -ENOMEM && r != -ERANGE)
		error("%s", netlat_errmsg(src));
	netlat_close(src);
	return r < 0 ? -1 : 0;
}

static bool parse_addr(const char *s, uint16_t *family, uint8_t *addr)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = AF_INET6;
		return true;
	}
	return false;
}

/* A signed duration: "-2ms", "3.2s". */
static bool parse_signed_duration(const char *s, int64_t *ns)
{
	bool neg = *s == '-';
	uint64_t v;

	if (*s == '-' || *s == '+')
		s++;
	if (netlat_parse_duration(s, &v) || v > INT64_MAX)
		return false;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

/* ---- text ---------------------------------------------------------------- */

static void format_signed(char *buf, size_t len, int64_t ns)
{
	char d[24];

	format_duration(d, sizeof(d), ns < 0 ? -(uint64_t)ns : (uint64_t)ns);
	snprintf(buf, len, "%c%s", ns < 0 ? '-' : '+', d);
}

/* clock_B - clock_A as seconds with nanoseconds: "+3.200012345 s". */
static void format_offset(char *buf, size_t len, int64_t ns)
{
	uint64_t v = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%c%llu.%09llu s", ns < 0 ? '-' : '+', ull(v / 1000000000),
		 ull(v % 1000000000));
}

static void print_est_text(FILE *f, const struct netlat_clock_est *e)
{
	char off[48], lo[40], hi[40];

	if (!e->samples_ab && !e->samples_ba) {
		fprintf(f, "no pair with a driver time and a receive stamp: nothing bounds it");
		return;
	}
	if (e->flags & NETLAT_CLOCK_NONE) {
		fprintf(f, "no clock fits these pairs (a clock step, or a wrong join)");
		return;
	}
	format_offset(off, sizeof(off), e->offset_ns);
	if (e->lo_ns == INT64_MIN || e->hi_ns == INT64_MAX) {
		fprintf(f, "%s, bounded on one side only (%s)", off,
			   e->lo_ns == INT64_MIN ? "no B>A pair: at most this"
						 : "no A>B pair: at least this");
	} else {
		format_signed(lo, sizeof(lo), e->lo_ns - e->offset_ns);
		format_signed(hi, sizeof(hi), e->hi_ns - e->offset_ns);
		fprintf(f, "%s [%s, %s]", off, lo, hi);
	}
	fprintf(f, ", drift %+.1f ppm [%+.1f, %+.1f]%s", e->drift_ppm, e->drift_lo_ppm,
		   e->drift_hi_ppm, e->flags & NETLAT_CLOCK_DRIFT_AT_LIMIT ? " (at the limit)" : "");
}

static void print_clock_text(FILE *f, const struct netlat_join *j)
{
	const struct netlat_clock_est *w;
	struct netlat_clock_est g;
	size_t nw = netlat_join_windows(j, &w), i, bad = 0;

	netlat_join_clock(j, &g);
	fprintf(f, "clock B-A at A %llu.%09llu s: ", ull(g.at_ns / 1000000000),
		   ull(g.at_ns % 1000000000));
	if (g.flags & NETLAT_CLOCK_NONE && nw > 1)
		fprintf(f, "no one line fits the whole capture (a step or a changing drift): "
			"by window");
	else
		print_est_text(f, &g);
	fprintf(f, "; from %llu A>B and %llu B>A pairs, %zu window%s\n", ull(g.samples_ab),
		   ull(g.samples_ba), nw, nw == 1 ? "" : "s");
	for (i = 0; i < nw; i++)
		bad |= w[i].flags & (NETLAT_CLOCK_NONE | NETLAT_CLOCK_STEP) || w[i].impossible;
	if (nw < 2 && !bad)
		return;
	for (i = 0; i < nw; i++) {
		fprintf(f, "  window %llu.%03llu-%llu.%03llu s: ", ull(w[i].from_ns / 1000000000),
			   ull(w[i].from_ns / 1000000 % 1000), ull(w[i].to_ns / 1000000000),
			   ull(w[i].to_ns / 1000000 % 1000));
		print_est_text(f, &w[i]);
		if (w[i].flags & NETLAT_CLOCK_STEP)
			fprintf(f, "; STEP: no one line joins it to the last window with a clock");
		if (w[i].impossible)
			fprintf(f, "; %llu impossible pair%s left out", ull(w[i].impossible),
				   w[i].impossible == 1 ? "" : "s");
		fprintf(f, "\n");
	}
}

/* ---- the hosts ------------------------------------------------------------- */

static bool one_boot(const struct join_args *a)
{
	return a->notes[0].boot_id[0] && !strcmp(a->notes[0].boot_id, a->notes[1].boot_id);
}

static void print_hosts_text(FILE *f, const struct join_args *a,
			     const struct netlat_join *j)
{
	struct netlat_clock_est g;
	unsigned int h;

	for (h = 0; h < 2; h++) {
		const struct host_notes *n = &a->notes[h];

		if (!n->hostname[0] && !n->clocks) {
			fprintf(f, "%s: %s (no host notes: not written by netlat record)\n",
				host_name[h], a->file[h]);
			continue;
		}
		fprintf(f, "%s: %s (boot %.8s)", host_name[h], n->hostname, n->boot_id);
		if (n->have_freq)
			fprintf(f, ", adjtimex freq %+.3f ppm%s", n->freq / 65536.0,
				   n->status & 0x40 ? " (unsynchronised)" : "");
		if (n->have_freq && n->freq != n->first_freq)
			fprintf(f, " (%+.3f at the start)", n->first_freq / 65536.0);
		if (n->tick_ppm)
			fprintf(f, ", tick %+.0f ppm", n->tick_ppm);
		if (n->clocks >= 2)
			fprintf(f, ", MONOTONIC %+.1f ppm of MONOTONIC_RAW over %.0f s",
				notes_slew_ppm(n), (n->last_mono - n->first_mono) / 1e9);
		if (n->realtime_steps)
			fprintf(f, ", REALTIME stepped %llu time%s", ull(n->realtime_steps),
				   n->realtime_steps == 1 ? "" : "s");
		fprintf(f, "\n");
	}
	if (one_boot(a)) {
		netlat_join_clock(j, &g);
		fprintf(f, "A and B are one machine (one boot id): one clock, B-A is 0, %s\n",
			   !g.samples_ab && !g.samples_ba ? "not checked: no pair has both stamps" :
			   g.flags & NETLAT_CLOCK_NONE ? "and no clock fits the pairs: the stamps disagree" :
			   g.lo_ns <= 0 && g.hi_ns >= 0 ? "inside the bound" :
			   "OUTSIDE the bound: the stamps disagree");
	}
}

static void print_hosts_json(const struct join_args *a)
{
	unsigned int h;

	printf("\"hosts\":[");
	for (h = 0; h < 2; h++) {
		const struct host_notes *n = &a->notes[h];

		printf("{\"host\":\"%s\",\"hostname\":", host_name[h]);
		print_json_string(stdout, n->hostname);
		printf(",\"boot_id\":");
		print_json_string(stdout, n->boot_id);
		printf(",\"clock_notes\":%llu,\"freq_ppm\":", ull(n->clocks));
		if (n->have_freq)
			printf("%.3f", n->freq / 65536.0);
		else
			printf("null");
		printf(",\"tick_ppm\":%.0f,\"slew_ppm\":%.3f,\"realtime_steps\":%llu}%s",
		       n->tick_ppm, notes_slew_ppm(n), ull(n->realtime_steps), h ? "" : ",");
	}
	printf("],\"one_boot\":%s,", one_boot(a) ? "true" : "false");
}

/* ---- per direction -------------------------------------------------------- */

/* A wire time into @wire, its half bound into @bound, unless one-sided. */
static int add_wire(struct netlat_samples *wire, struct netlat_samples *bound,
		    uint64_t *one_sided, int64_t ns, int64_t lo_ns, int64_t hi_ns)
{
	int r = netlat_samples_add(wire, ns);

	if (hi_ns == INT64_MAX)
		(*one_sided)++;
	else if (!r)
		r = netlat_samples_add(bound, (hi_ns - lo_ns) / 2);
	return r;
}

/* The ACK's way back of pair @i's sent packet: call once per packet. */
static int collect_ack(const struct netlat_join *j, size_t i, struct join_direction *d)
{
	struct netlat_xack x;
	int r = 0;

	if (netlat_join_ack(j, i, &x))
		return 0;
	if (x.flags & NETLAT_XACK_RTT)
		r = netlat_samples_add(&d->rtt, x.rtt_ns);
	if (!r && x.flags & NETLAT_XACK_DELAY)
		r = netlat_samples_add(&d->ack_delay, x.delay_ns);
	if (!r && x.flags & NETLAT_XACK_WIRE)
		r = add_wire(&d->back, &d->back_bound, &d->back_one_sided, x.wire_ns,
			     x.wire_lo_ns, x.wire_hi_ns);
	return r;
}

static int collect(const struct netlat_join *j, struct join_direction *d)
{
	const struct netlat_xpkt *p;
	size_t n = netlat_join_pairs(j, &p), i;
	unsigned int k;
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		struct join_direction *dd = &d[p[i].sender];
		uint64_t from, to;

		/* each record's stages once: from its first pair */
		for (k = 0; k < JOIN_SIDE_STAGES && !r; k++) {
			if (p[i].flags & NETLAT_XPKT_TX_FIRST &&
			    netlat_pkt_stage(p[i].tx, join_tx_stages[k], &from, &to))
				r = netlat_samples_add(&dd->tx[k], to - from);
			if (!r && p[i].flags & NETLAT_XPKT_RX_FIRST &&
			    netlat_rx_pkt_stage(p[i].rx, join_rx_stages[k], &from, &to))
				r = netlat_samples_add(&dd->rx[k], to - from);
		}
		if (!r && p[i].flags & NETLAT_XPKT_TX_FIRST)
			r = collect_ack(j, i, dd);
		if (p[i].flags & NETLAT_XPKT_NO_CLOCK)
			dd->no_clock++;
		if (r || p[i].flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_NO_CLOCK |
				       NETLAT_XPKT_RETRANS | NETLAT_XPKT_IMPOSSIBLE))
			continue;
		r = add_wire(&dd->wire, &dd->bound, &dd->one_sided, p[i].wire_ns,
			     p[i].wire_lo_ns, p[i].wire_hi_ns);
	}
	for (i = 0; i < 2; i++) {
		for (k = 0; k < JOIN_SIDE_STAGES; k++) {
			netlat_dist_compute(d[i].tx[k].v, d[i].tx[k].n, &d[i].dtx[k]);
			netlat_dist_compute(d[i].rx[k].v, d[i].rx[k].n, &d[i].drx[k]);
		}
		netlat_dist_compute(d[i].wire.v, d[i].wire.n, &d[i].dwire);
		netlat_dist_compute(d[i].bound.v, d[i].bound.n, &d[i].dbound);
		netlat_dist_compute(d[i].ack_delay.v, d[i].ack_delay.n, &d[i].dack_delay);
		netlat_dist_compute(d[i].back.v, d[i].back.n, &d[i].dback);
		netlat_dist_compute(d[i].back_bound.v, d[i].back_bound.n, &d[i].dback_bound);
		netlat_dist_compute(d[i].rtt.v, d[i].rtt.n, &d[i].drtt);
	}
	return r;
}

static void free_directions(struct join_direction *d)
{
	unsigned int i, k;

	for (i = 0; i < 2; i++) {
		for (k = 0; k < JOIN_SIDE_STAGES; k++) {
			netlat_samples_free(&d[i].tx[k]);
			netlat_samples_free(&d[i].rx[k]);
		}
		netlat_samples_free(&d[i].wire);
		netlat_samples_free(&d[i].bound);
		netlat_samples_free(&d[i].ack_delay);
		netlat_samples_free(&d[i].back);
		netlat_samples_free(&d[i].back_bound);
		netlat_samples_free(&d[i].rtt);
	}
}

static void print_row(const char *host, const char *name, const struct netlat_dist *d,
		      const char *extra)
{
	char p50[32], p90[32], p99[32], max[32], label[48];

	snprintf(label, sizeof(label), "%s %s", host, name);
	if (!d->count) {
		printf("  %-18s %9s\n", label, "-");
		return;
	}
	format_duration(p50, sizeof(p50), d->p50);
	format_duration(p90, sizeof(p90), d->p90);
	format_duration(p99, sizeof(p99), d->p99);
	format_duration(max, sizeof(max), d->max);
	printf("  %-18s %9llu %9s %9s %9s %9s%s\n", label, ull(d->count), p50, p90, p99, max,
	       extra);
}

#define BOUND_LEN	48
#define EXTRA_LEN	80

/*
 * A wire row's bound: @bound after its median in the median packet's line,
 * @extra at the row's end. Empty without a wire time.
 */
static void bound_text(uint64_t one_sided, const struct netlat_dist *half,
		       char bound[BOUND_LEN], char extra[EXTRA_LEN])
{
	char med[32];

	bound[0] = extra[0] = 0;
	if (one_sided) {
		/* the clock is bounded from one direction only: no middle */
		snprintf(bound, BOUND_LEN, " (at least)");
		snprintf(extra, EXTRA_LEN, "  at least: %llu of them bounded on one side only",
			 ull(one_sided));
	} else if (half->count) {
		format_duration(med, sizeof(med), half->p50);
		snprintf(bound, BOUND_LEN, " +-%s", med);
		snprintf(extra, EXTRA_LEN, "  +-%s (median bound)", med);
	}
}

/* What the ACKs' way back of direction @s had, and why the rest had not. */
static void print_ack_counts(const struct netlat_join_ack_counts *c, unsigned int s)
{
	const uint64_t *w = c->why[s];
	char pure[96] = "", shared[64] = "";

	/* only where the receiver recorded pure ACKs: else as before they were */
	if (c->acks_out[s]) {
		snprintf(pure, sizeof(pure), " (%llu by pure ACKs, of %llu TCP_ACK_OUT records)",
			 ull(c->pure[s]), ull(c->acks_out[s]));
		snprintf(shared, sizeof(shared), ", %llu whose TSval is not the ACK's alone",
			 ull(w[NETLAT_XACK_TSVAL_SHARED]));
	}
	printf("  the ACK's way back: %llu round trips, %llu %s ACK delays%s, %llu wire backs "
	       "of %llu joined packets; %llu ACKs not recorded (pure ACK), %llu whose carrier "
	       "%s did not record arriving%s, %llu retransmitted "
	       "(Karn), %llu ACKs carried by a retransmission, %llu without an ACK stamp, "
	       "%llu ranges, %llu without %s's receive stamp of the last byte, %llu impossible, "
	       "%llu without a clock\n", ull(c->rtt[s]), ull(c->delay[s]), host_name[!s], pure,
	       ull(c->wire[s]), ull(c->packets[s]), ull(w[NETLAT_XACK_PURE]),
	       ull(w[NETLAT_XACK_UNVERIFIED]), host_name[s], shared, ull(w[NETLAT_XACK_RETRANS]),
	       ull(w[NETLAT_XACK_ACK_RETRANS]),
	       ull(w[NETLAT_XACK_NO_ACK]), ull(w[NETLAT_XACK_RANGE]), ull(w[NETLAT_XACK_NO_RX]),
	       host_name[!s], ull(w[NETLAT_XACK_IMPOSSIBLE]), ull(w[NETLAT_XACK_NO_CLOCK]));
}

/* The median packet's ACK: a continuation of its line. */
static void print_median_ack(const struct join_direction *d, unsigned int s)
{
	char med[32], bound[BOUND_LEN], extra[EXTRA_LEN];

	if (!d->drtt.count)
		return;
	printf("; its ACK: ");
	if (d->dack_delay.count) {
		format_duration(med, sizeof(med), d->dack_delay.p50);
		printf("%s %s ack delay, ", med, host_name[!s]);
	}
	if (d->dback.count) {
		bound_text(d->back_one_sided, &d->dback_bound, bound, extra);
		format_duration(med, sizeof(med), d->dback.p50);
		printf("%s%s wire back, ", med, bound);
	}
	format_duration(med, sizeof(med), d->drtt.p50);
	printf("%s %s round trip", med, host_name[s]);
}

static void print_direction_text(const struct netlat_join_counts *c,
				 const struct netlat_join_tsval_counts *tc,
				 const struct netlat_join_ack_counts *ac, unsigned int s,
				 const struct join_direction *d)
{
	const char *from = host_name[s], *to = host_name[!s];
	char bound[BOUND_LEN], bback[BOUND_LEN], extra[EXTRA_LEN], med[32], wire[32];
	char name[16];
	unsigned int k;

	printf("\n%s>%s: %llu of %llu sent packets joined (%llu of %llu bytes; %llu "
	       "retransmitted, joined by TSval)", from, to, ull(c->joined[s]), ull(c->sent[s]),
	       ull(c->joined_bytes[s]), ull(c->sent_bytes[s]), ull(tc->rescued[s]));
	printf("; not joined: %llu with no packet of their flow at %s, %llu with none of "
	       "their bytes\n", ull(c->no_flow[s]), to, ull(c->no_record[s]));
	printf("  no wire time: %llu retransmitted (Karn), %llu retransmitted (TSval tick not "
	       "provable), %llu without a driver time or receive stamp, %llu impossible (%llu "
	       "by TSval), %llu without a clock; %llu of %s's %llu received packets of these "
	       "flows not joined\n", ull(c->retrans[s]), ull(tc->tick[s]), ull(c->no_stamp[s]),
	       ull(c->impossible[s]), ull(tc->impossible[s]), ull(d->no_clock),
	       ull(c->received_unjoined[s]), to, ull(c->received[s]));
	print_ack_counts(ac, s);
	printf("  %-18s %9s %9s %9s %9s %9s\n", "stage", "count", "p50", "p90", "p99", "max");
	for (k = 0; k < JOIN_SIDE_STAGES; k++)
		print_row(from, netlat_stage_name(join_tx_stages[k]), &d->dtx[k], "");
	bound_text(d->one_sided, &d->dbound, bound, extra);
	snprintf(name, sizeof(name), "%s>%s", from, to);
	print_row("wire", name, &d->dwire, extra);
	for (k = 0; k < JOIN_SIDE_STAGES; k++)
		print_row(to, netlat_stage_name(join_rx_stages[k]), &d->drx[k], "");
	/* the ACK's way back: R's delay, the wire back, S's round trip */
	print_row(to, "ack delay", &d->dack_delay, "");
	bound_text(d->back_one_sided, &d->dback_bound, bback, extra);
	snprintf(name, sizeof(name), "%s>%s", to, from);
	print_row("wire back", name, &d->dback, extra);
	print_row(from, "round trip", &d->drtt, "");
	if (d->dwire.count) {
		format_duration(wire, sizeof(wire), d->dwire.p50);
		printf("  median packet: ");
		for (k = 0; k < JOIN_SIDE_STAGES; k++) {
			format_duration(med, sizeof(med), d->dtx[k].p50);
			printf("%s %s %s, ", med, from, netlat_stage_name(join_tx_stages[k]));
		}
		printf("%s%s wire, ", wire, bound);
		for (k = 0; k < JOIN_SIDE_STAGES; k++) {
			format_duration(med, sizeof(med), d->drx[k].p50);
			printf("%s %s %s%s", med, to, netlat_stage_name(join_rx_stages[k]),
			       k + 1 < JOIN_SIDE_STAGES ? ", " : "");
		}
		print_median_ack(d, s);
		printf("\n");
	}
}

/* ---- JSON ------------------------------------------------------------------ */

/* The join's JSON object (@a->inner: without its newline). */
static void print_json(const struct join_args *a, const struct netlat_join *j,
		       const struct join_direction *d)
{
	const struct netlat_clock_est *w;
	const struct netlat_xpkt *p;
	struct netlat_clock_est g;
	size_t nw = netlat_join_windows(j, &w), n, i;

	netlat_join_clock(j, &g);
	printf("{");
	print_hosts_json(a);
	printf("\"clock\":");
	join_json_est(&g);
	printf(",\"windows\":[");
	for (i = 0; i < nw; i++) {
		join_json_est(&w[i]);
		printf(i + 1 < nw ? "," : "");
	}
	printf("],\"directions\":[");
	join_json_direction(j, 0, &d[0]);
	printf(",");
	join_json_direction(j, 1, &d[1]);
	printf("]");
	if (a->packets) {
		n = netlat_join_pairs(j, &p);
		printf(",\"packets\":[");
		for (i = 0; i < n; i++) {
			join_json_packet(j, i);
			printf(i + 1 < n ? ",\n" : "");
		}
		printf("]");
	}
	printf(a->inner ? "}" : "}\n");
}

/* ---- the command ------------------------------------------------------------ */

struct trace_job {
	const struct netlat_join *j;
	const struct join_args *a;
};

/* "A host1", "B host2": the hosts' names when their captures noted them. */
static int trace_job_write(void *arg, FILE *f)
{
	const struct trace_job *job = arg;
	char label[2][sizeof(job->a->notes[0].hostname) + 8];
	const char *labels[2] = { label[0], label[1] };
	unsigned int h;

	for (h = 0; h < 2; h++)
		snprintf(label[h], sizeof(label[h]), job->a->notes[h].hostname[0] ? "%s %s" : "%s",
			 host_name[h], job->a->notes[h].hostname);
	return join_trace_write(job->j, labels, f);
}

/*
 * Join @a's two captures into *@jp (to free even on an error) and @d
 * (zeroed first): 0, or 1 (the error printed).
 */
static int join_run(struct join_args *a, struct netlat_join **jp, struct join_direction *d)
{
	memset(d, 0, 2 * sizeof(*d));
	*jp = netlat_join_new(&a->o);
	if (!*jp) {
		error("cannot join: %s", strerror(errno));
		return 1;
	}
	if (load(*jp, a, 0) || load(*jp, a, 1))
		return 1;
	if (netlat_join_run(*jp) || collect(*jp, d)) {
		error("out of memory");
		return 1;
	}
	return 0;
}

/*
 * Join @a's two captures and print the result, text or JSON; the trace
 * too if asked. 0, or 1 (the error printed).
 */
static int join_and_print(struct join_args *a)
{
	struct join_direction d[2];
	struct netlat_join *j;
	struct netlat_join_counts c;
	struct netlat_join_ack_counts ac;
	struct netlat_join_tsval_counts tc;
	int r = join_run(a, &j, d);

	if (!r && a->trace) {
		struct trace_job job = { .j = j, .a = a };

		r = write_output(a->trace, trace_job_write, &job);
	}
	/* a trace on stdout is all that goes there */
	if (!r && !(a->trace && !strcmp(a->trace, "-"))) {
		if (a->json) {
			print_json(a, j, d);
		} else {
			netlat_join_counts(j, &c);
			print_hosts_text(stdout, a, j);
			print_clock_text(stdout, j);
			netlat_join_ack_counts(j, &ac);
			netlat_join_tsval_counts(j, &tc);
			print_direction_text(&c, &tc, &ac, 0, &d[0]);
			print_direction_text(&c, &tc, &ac, 1, &d[1]);
		}
		if (!a->inner)
			r = finish_stdout();
	}
	free_directions(d);
	netlat_join_free(j);
	return r;
}

int cmd_join(int argc, char **argv)
{
	static const struct option opts[] = {
		OPTION_FLAG("json", 'j'),
		OPTION_FLAG("no-packets", 'N'),
		OPTION_ARG("window", 'w'),
		OPTION_ARG("min-owd", 'm'),
		OPTION_ARG("asym", 'a'),
		OPTION_ARG("max-drift", 'M'),
		OPTION_FLAG("offset-only", 'O'),
		OPTION_ARG("a-addr", 'A'),
		OPTION_ARG("b-addr", 'B'),
		OPTION_ARG("b-offset", 'o'),
		OPTION_ARG("b-ppm", 'p'),
		OPTION_ARG("chrome-trace", 'c'),
		HELP_OPTION,
		{ 0 }
	};
	struct join_args a = { .packets = true };
	char *end;
	int ch;

	while ((ch = next_option(argc, argv, "jw:m:a:M:c:h", opts)) != -1) {
		switch (ch) {
		case 'j':
			a.json = true;
			break;
		case 'N':
			a.packets = false;
			break;
		case 'w':
			if (netlat_parse_duration(optarg, &a.o.window_ns) || !a.o.window_ns)
				return usage_error("bad window '%s'", optarg);
			break;
		case 'm':
			if (netlat_parse_duration(optarg, &a.o.min_owd_ns))
				return usage_error("bad delay '%s'", optarg);
			break;
		case 'a':
			if (!parse_signed_duration(optarg, &a.o.asym_ns))
				return usage_error("bad asymmetry '%s'", optarg);
			break;
		case 'M':
			a.o.max_drift_ppm = strtod(optarg, &end);
			if (*end || end == optarg ||
			    !(a.o.max_drift_ppm > 0 && a.o.max_drift_ppm <= 1e5))
				return usage_error("bad drift '%s' (ppm, up to 100000)", optarg);
			break;
		case 'O':
			a.o.flags |= NETLAT_JOIN_OFFSET_ONLY;
			break;
		case 'A':
		case 'B':
			if (!parse_addr(optarg, &a.family[ch == 'B'], a.addr[ch == 'B']))
				return usage_error("bad address '%s'", optarg);
			a.have_addr[ch == 'B'] = true;
			break;
		case 'o':
			if (!parse_signed_duration(optarg, &a.o.b_offset_ns))
				return usage_error("bad offset '%s'", optarg);
			break;
		case 'p':
			a.o.b_ppm = strtod(optarg, &end);
			if (*end || end == optarg || !(a.o.b_ppm >= -1e5 && a.o.b_ppm <= 1e5))
				return usage_error("bad drift '%s' (ppm)", optarg);
			break;
		case 'c':
			a.trace = optarg;
			break;
		case 'h':
			return command_help();
		default:
			return bad_option(argv);
		}
	}
	if (argc - optind != 2)
		return usage_error("two captures: A's and B's (the same file twice with --a-addr and --b-addr)");
	if (a.have_addr[0] != a.have_addr[1])
		return usage_error("--a-addr and --b-addr go together");
	a.file[0] = argv[optind];
	a.file[1] = argv[optind + 1];
	return join_and_print(&a);
}

int join_peer_print(const char *a_path, const char *b_path, bool json)
{
	struct join_args a = { .json = json, .inner = true };

	a.file[0] = a_path;
	a.file[1] = b_path;
	return join_and_print(&a);
}

/* ---- report --peer --html ------------------------------------------------ */

struct join_page {
	struct join_args a;
	struct netlat_join *j;
	struct join_direction d[2];
};

struct join_page *join_page_new(const char *a_path, const char *b_path)
{
	struct join_page *p = calloc(1, sizeof(*p));

	if (!p) {
		error("out of memory");
		return NULL;
	}
	p->a.inner = true;
	p->a.file[0] = a_path;
	p->a.file[1] = b_path;
	if (join_run(&p->a, &p->j, p->d)) {
		join_page_free(p);
		return NULL;
	}
	return p;
}

void join_page_free(struct join_page *p)
{
	if (!p)
		return;
	free_directions(p->d);
	netlat_join_free(p->j);
	free(p);
}

/* The text's clock lines (@clock) or host lines, as a string (NULL: out of memory). */
static char *text_of(const struct join_page *p, bool clock)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	if (clock)
		print_clock_text(m, p->j);
	else
		print_hosts_text(m, &p->a, p->j);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The page's section of the join: the text's host and clock lines, the directions. */
int join_page_html(const struct join_page *p, FILE *f)
{
	struct join_html h = {
		.j = p->j, .d = p->d,
		.file = { p->a.file[0], p->a.file[1] },
		.hostname = { p->a.notes[0].hostname, p->a.notes[1].hostname },
	};
	char *hosts = text_of(p, false), *clock = text_of(p, true);
	int r = -ENOMEM;

	h.hosts = hosts;
	h.clock = clock;
	if (hosts && clock)
		r = join_html_write(&h, f);
	free(hosts);
	free(clock);
	return r;
}
