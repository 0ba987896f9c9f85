// SPDX-License-Identifier: GPL-2.0
/*
 * The send side's text and JSON (tx.c computes it): the stage rows, the
 * directions with their median packets, the service ports, the stage
 * histograms, the slowest packets and the retransmits over time. The
 * direction and service lines serve the page (html.c) too.
 */
#include "txprint.h"
#include "output.h"
#include "flows.h"
#include "hist.h"

static void print_direction(FILE *f, const struct direction *dir, bool html)
{
	const struct packet *p = dir->median;
	char s[64], d[64];

	format_addr(s, sizeof(s), dir->family, dir->saddr);
	format_addr(d, sizeof(d), dir->family, dir->daddr);
	fprintf(f, "%s %s %s: %zu packet%s", s, html ? "-&gt;" : "->", d, dir->packets,
		dir->packets == 1 ? "" : "s");
	if (!p) {
		fputs(", none joined with a sendmsg, the device or an ACK", f);
		return;
	}
	fputs("; median packet:", f);
	if (p->pt[PT_SENDMSG]) {
		fputc(' ', f);
		print_duration(f, p->queued, html);
		fputs(" queued behind sendmsg,", f);
	}
	if (p->pt[PT_QDISC] || p->pt[PT_DRIVER]) {
		fputc(' ', f);
		print_duration(f, p->stack, html);
		fputs(" stack,", f);
	}
	if (p->pt[PT_ACK]) {
		fputc(' ', f);
		print_duration(f, p->ack_wait, html);
		fputs(" until ACK,", f);
	}
	fputc(' ', f);
	print_duration(f, p->e2e, html);
	fputs(" end to end", f);
}

static void direction_item(FILE *f, const void *st, size_t i, bool html)
{
	print_direction(f, &((const struct stages *)st)->dirs[i], html);
}

void print_directions(FILE *f, const struct stages *st, bool html)
{
	print_items(f, html, st, st->nr_dirs, DIRS_SHOWN, direction_item, "directions");
}

static void print_service(FILE *f, const struct service *svc, bool html)
{
	int k;

	fprintf(f, "port %u: %zu packet%s", svc->port, svc->packets,
		svc->packets == 1 ? "" : "s");
	for (k = 0; k < NR_ST; k++)
		if (service_stage_shown(svc, k))
			print_stage_summary(f, stage_names[k], &svc->dist[k], html);
}

static void service_item(FILE *f, const void *st, size_t i, bool html)
{
	print_service(f, &((const struct stages *)st)->svcs[i], html);
}

void print_services(FILE *f, const struct stages *st, bool html)
{
	print_items(f, html, st, st->nr_svcs, SERVICES_SHOWN, service_item, "ports");
}

void tx_text_summaries(FILE *f, const struct stages *st)
{
	if (st->nr_dirs) {
		fputs("\nwhere the time went, per direction\n", f);
		print_directions(f, st, false);
	}
	if (st->nr_svcs) {
		fputs("\nper service port, send stages (a socket's own port, or its peer's when its own is ephemeral)\n", f);
		print_services(f, st, false);
	}
}

/* A histogram per stage with samples. */
void tx_text_hists(FILE *f, const struct stages *st)
{
	int k;

	for (k = 0; k < NR_ST; k++) {
		if (!st->dist[k].count)
			continue;
		fprintf(f, "\n%s (ns)\n", stage_names[k]);
		hist_print_text(f, &st->hist[k]);
	}
}

/* ,"KEY":{"STAGE":...} of the stages shown: distributions, or with @hists histograms. */
static void json_per_stage(FILE *f, const struct stages *st, const char *key, bool hists)
{
	const char *sep = "";	/* row 0 may be one not shown */
	int k;

	fprintf(f, ",\"%s\":{", key);
	for (k = 0; k < NR_ST; k++) {
		if (!stage_shown(st, k))
			continue;
		fprintf(f, "%s\"%s\":", sep, stage_names[k]);
		sep = ",";
		if (hists)
			hist_print_json(f, &st->hist[k]);
		else
			print_dist_json(f, &st->dist[k]);
	}
	fputc('}', f);
}

void tx_text_stage_rows(FILE *f, const struct stages *st)
{
	int k;

	for (k = 0; k < NR_ST; k++)
		if (stage_shown(st, k))
			print_dist_row(f, 13, stage_names[k], &st->dist[k]);
}

static void json_packet(FILE *f, const struct flows *fs, const struct packet *p)
{
	const struct j_rec *x;
	char name[32];
	int k, n;
	bool any = false;

	if (!p) {
		fputs("null", f);
		return;
	}
	x = p->pt[PT_XMIT];
	fprintf(f, "{\"seq\":%u,\"len\":%u", x->seq, x->u.x.len);
	print_flow(f, &flows_row(fs, x->flow)->key, true);
	fprintf(f, ",\"end_to_end_ns\":%llu,\"queued_ns\":%llu,\"stack_ns\":%llu,"
		"\"ack_wait_ns\":%llu,\"points_ns\":{", ull(p->e2e), ull(p->queued),
		ull(p->stack), ull(p->ack_wait));
	for (k = 0; k < NR_PT; k++) {
		if (!p->pt[k])
			continue;
		fprintf(f, "%s\"%s\":%llu", any ? "," : "", point_names[k], ull(p->pt[k]->ts));
		any = true;
	}
	fputs("},\"segments_ns\":{", f);
	for (k = packet_next_point(p, -1); (n = packet_next_point(p, k)) < NR_PT; k = n) {
		segment_name(name, sizeof(name), k, n);
		fprintf(f, "%s\"%s\":%llu", k == packet_next_point(p, -1) ? "" : ",", name,
			ull(p->pt[n]->ts - p->pt[k]->ts));
	}
	fputs("}}", f);
}

/* Per direction: packets, end-to-end percentiles, the median and p99 packet. */
static void json_packets(FILE *f, const struct stages *st, const struct flows *fs)
{
	char s[64], d[64];
	size_t i;

	fprintf(f, ",\"tcp_packets\":{\"count\":%zu,\"directions_count\":%zu,\"directions\":[",
		st->xmit.n, st->nr_dirs);
	for (i = 0; i < st->nr_dirs && i < DIRS_SHOWN; i++) {
		const struct direction *dir = &st->dirs[i];

		format_addr(s, sizeof(s), dir->family, dir->saddr);
		format_addr(d, sizeof(d), dir->family, dir->daddr);
		fprintf(f, "%s{\"family\":%u,\"saddr\":\"%s\",\"daddr\":\"%s\",\"packets\":%zu,"
			"\"end_to_end\":", i ? "," : "", dir->family, s, d, dir->packets);
		print_dist_json(f, &dir->e2e);
		fputs(",\"median_packet\":", f);
		json_packet(f, fs, dir->median);
		fputs(",\"p99_packet\":", f);
		json_packet(f, fs, dir->p99);
		fputc('}', f);
	}
	fprintf(f, "],\"services_count\":%zu,\"services\":[", st->nr_svcs);
	for (i = 0; i < st->nr_svcs && i < SERVICES_SHOWN; i++) {
		const struct service *svc = &st->svcs[i];
		const char *sep = "";
		int k;

		fprintf(f, "%s{\"port\":%u,\"packets\":%zu,\"stages\":{", i ? "," : "",
			svc->port, svc->packets);
		for (k = 0; k < NR_ST; k++) {
			if (!service_stage_shown(svc, k))
				continue;
			fprintf(f, "%s\"%s\":", sep, stage_names[k]);
			print_dist_json(f, &svc->dist[k]);
			sep = ",";
		}
		fputs("}}", f);
	}
	fputs("],\"slowest\":[", f);
	for (i = 0; i < st->nr_slowest; i++) {
		fputs(i ? "," : "", f);
		json_packet(f, fs, st->slowest[i]);
	}
	fputs("]}", f);
}

/* Retransmit attempts by kind over the capture's time span. */
static void json_retrans_timeline(FILE *f, const struct stages *st)
{
	int b, k;

	fprintf(f, ",\"tcp_retrans_timeline\":{\"start_ns\":%llu,\"bin_ns\":%llu,\"kinds\":[",
		ull(st->rtx_start), ull(st->rtx_bin_ns));
	for (k = 0; k < NR_RTX_KINDS; k++)
		fprintf(f, "%s\"%s\"", k ? "," : "", netlat_retrans_kind_name(k));
	fputs("],\"bins\":[", f);
	for (b = 0; b < RTX_BINS; b++) {
		fputs(b ? ",[" : "[", f);
		for (k = 0; k < NR_RTX_KINDS; k++)
			fprintf(f, "%s%llu", k ? "," : "", ull(st->rtx_bins[b][k]));
		fputc(']', f);
	}
	fputs("]}", f);
}

void tx_json(FILE *f, const struct stages *st, const struct flows *fs, bool hist)
{
	json_per_stage(f, st, "tcp_stages", false);
	if (hist)
		json_per_stage(f, st, "tcp_stage_hist", true);
	json_packets(f, st, fs);
	if (st->rtx.n)
		json_retrans_timeline(f, st);
}
