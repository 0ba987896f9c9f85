// SPDX-License-Identifier: GPL-2.0
/*
 * "netlat report A --peer B --html": see joinhtml.h. Every number is a
 * field join.c filled for the text and the JSON (struct join_direction,
 * libnetlat's counts) or a line of the text itself (the hosts, the clock);
 * this file only lays them out: tables in the text's units with the
 * nanoseconds as hover text, a stacked bar per percentile in inline SVG.
 * Every string from a capture (hostnames, file names) goes through
 * html_esc().
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "joinhtml.h"
#include "output.h"

#define BAR_W		760	/* the page's chart width (viewBox units) */
#define BAR_LEFT	44	/* room for "p50" */
#define BAR_RIGHT	86	/* room for the total */
#define BAR_SEGS	(2 * JOIN_SIDE_STAGES + 1)	/* the sender's, the wire, the receiver's */
#define BAR_WIRE	JOIN_SIDE_STAGES

static const char *const host_letter[2] = { "A", "B" };

/* The sender's stages, the wire, the receiver's (the page's send colours first). */
static const char *const seg_colour[BAR_SEGS] = {
	"#4e79a7", "#f28e2b", "#e15759", "#9c9c9c", "#76b7b2", "#edc948", "#b07aa1",
};

/* "A", or "A (alpha)" with the capture's hostname. */
static void host_label(FILE *f, const struct join_html *h, unsigned int host)
{
	fputs(host_letter[host], f);
	if (h->hostname[host] && h->hostname[host][0]) {
		fputs(" (", f);
		html_esc(f, h->hostname[host]);
		fputc(')', f);
	}
}

/* Each line of @text as an item of a list of @cls; "STEP" lines stand out. */
static int text_lines(FILE *f, const char *text, const char *cls)
{
	char *copy = strdup(text), *rest = copy, *line;

	if (!copy)
		return -ENOMEM;
	fprintf(f, "<ul class=\"%s\">", cls);
	while ((line = strsep(&rest, "\n"))) {
		bool step = strstr(line, "STEP");

		if (!*line)
			continue;
		fputs(step ? "<li><strong>" : "<li>", f);
		html_esc(f, line + strspn(line, " "));
		fputs(step ? "</strong></li>" : "</li>", f);
	}
	fputs("</ul>", f);
	free(copy);
	return 0;
}

/* ---- a direction's counts and table ---------------------------------------- */

static void count_row(FILE *f, uint64_t n, const char *what, const char *host)
{
	fprintf(f, "<tr><td>%llu</td><td class=\"l\">%s", ull(n), what);
	if (host)
		fputs(host, f);
	fputs("</td></tr>", f);
}

/* What was joined and why the rest was not, as the text's lines say it. */
static void counts(FILE *f, const struct netlat_join_counts *c,
		   const struct netlat_join_tsval_counts *tc, unsigned int s,
		   const struct join_direction *d)
{
	const char *to = host_letter[!s];

	fprintf(f, "<p>%llu of %llu sent packets joined (%llu of %llu bytes; %llu "
		"retransmitted, joined by TSval).</p>"
		"<table class=\"join-counts\"><tr><th>packets</th><th class=\"l\">not joined, "
		"or joined without a wire time</th></tr>", ull(c->joined[s]), ull(c->sent[s]),
		ull(c->joined_bytes[s]), ull(c->sent_bytes[s]), ull(tc->rescued[s]));
	count_row(f, c->no_flow[s], "not joined: no packet of their flow at ", to);
	count_row(f, c->no_record[s], "not joined: none of their bytes at ", to);
	count_row(f, c->retrans[s], "no wire time: retransmitted (Karn)", NULL);
	count_row(f, tc->tick[s], "no wire time: retransmitted (TSval tick not provable)", NULL);
	count_row(f, c->no_stamp[s], "no wire time: without a driver time or receive stamp", NULL);
	count_row(f, c->impossible[s], "no wire time: impossible", NULL);
	count_row(f, d->no_clock, "no wire time: without a clock", NULL);
	fprintf(f, "<tr><td>%llu</td><td class=\"l\">of %s's %llu received packets of these "
		"flows not joined</td></tr></table>", ull(c->received_unjoined[s]), to,
		ull(c->received[s]));
}

static void dist_cells(FILE *f, const struct netlat_dist *d)
{
	const uint64_t v[4] = { d->p50, d->p90, d->p99, d->max };
	unsigned int i;

	if (!d->count) {
		fputs("<td>-</td><td></td><td></td><td></td><td></td>", f);
		return;
	}
	fprintf(f, "<td>%llu</td>", ull(d->count));
	for (i = 0; i < 4; i++) {
		fputs("<td>", f);
		print_duration(f, v[i], true);
		fputs("</td>", f);
	}
}

/* The wire's bound as the text gives it: "+-X (median bound)", or "at least". */
static void bound_cell(FILE *f, const struct join_direction *d)
{
	fputs("<td class=\"l\">", f);
	if (d->one_sided) {
		fprintf(f, "at least: %llu of them bounded on one side only", ull(d->one_sided));
	} else if (d->dbound.count) {
		fputs("+-", f);
		print_duration(f, d->dbound.p50, true);
		fputs(" (median bound)", f);
	}
	fputs("</td>", f);
}

static void stage_row(FILE *f, const char *host, const char *name, const struct netlat_dist *d)
{
	fprintf(f, "<tr><td class=\"l\">%s ", host);
	html_esc(f, name);
	fputs("</td>", f);
	dist_cells(f, d);
	fputs("<td></td></tr>", f);
}

static void table(FILE *f, unsigned int s, const struct join_direction *d)
{
	const char *from = host_letter[s], *to = host_letter[!s];
	unsigned int k;

	fprintf(f, "<table id=\"join-%s-stages\" class=\"join-stages\"><tr><th class=\"l\">stage"
		"</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>max</th>"
		"<th class=\"l\">bound</th></tr>", s ? "ba" : "ab");
	for (k = 0; k < JOIN_SIDE_STAGES; k++)
		stage_row(f, from, netlat_stage_name(join_tx_stages[k]), &d->dtx[k]);
	fprintf(f, "<tr class=\"wire\"><td class=\"l\">wire %s&gt;%s</td>", from, to);
	dist_cells(f, &d->dwire);
	bound_cell(f, d);
	fputs("</tr>", f);
	for (k = 0; k < JOIN_SIDE_STAGES; k++)
		stage_row(f, to, netlat_stage_name(join_rx_stages[k]), &d->drx[k]);
	fputs("</table>", f);
}

/* ---- a direction's stacked bars -------------------------------------------- */

/* The segments' names: "A sendmsg>xmit", ..., "wire A>B", ..., "B queue>user". */
static void seg_name(char *buf, size_t len, unsigned int s, unsigned int k)
{
	if (k < BAR_WIRE)
		snprintf(buf, len, "%s %s", host_letter[s], netlat_stage_name(join_tx_stages[k]));
	else if (k == BAR_WIRE)
		snprintf(buf, len, "wire %s>%s", host_letter[s], host_letter[!s]);
	else
		snprintf(buf, len, "%s %s", host_letter[!s],
			 netlat_stage_name(join_rx_stages[k - BAR_WIRE - 1]));
}

static const struct netlat_dist *seg_dist(const struct join_direction *d, unsigned int k)
{
	if (k < BAR_WIRE)
		return &d->dtx[k];
	return k == BAR_WIRE ? &d->dwire : &d->drx[k - BAR_WIRE - 1];
}

/* @d's value at percentile row @row: p50, p99, max. */
static uint64_t at(const struct netlat_dist *d, unsigned int row)
{
	return row == 0 ? d->p50 : row == 1 ? d->p99 : d->max;
}

/* The wire's +- median bound as a whisker under the end of its segment. */
static void whisker(FILE *f, const struct join_direction *d, double x, double scale, double y)
{
	double b = scale * (double)d->dbound.p50, lo = x - b, hi = x + b;

	if (d->one_sided || !d->dbound.count)
		return;
	if (lo < BAR_LEFT)
		lo = BAR_LEFT;
	if (hi > BAR_W - BAR_RIGHT)
		hi = BAR_W - BAR_RIGHT;
	fprintf(f, "<g class=\"bound\"><title>the wire's end +-%llu ns (median bound)</title>"
		"<path d=\"M%.2f %.1fV%.1fM%.2f %.1fH%.2fM%.2f %.1fV%.1f\" stroke=\"#222\" "
		"stroke-width=\"1.5\" fill=\"none\"/></g>", ull(d->dbound.p50), lo, y + 21, y + 27,
		lo, y + 24, hi, hi, y + 21, y + 27);
}

/*
 * One bar a percentile: each stage's own p50 (p99, max) side by side, the
 * row's sum as its width (not one packet's: the text's "median packet"
 * sums the medians likewise).
 */
static void bars(FILE *f, unsigned int s, const struct join_direction *d)
{
	static const char *const row_name[3] = { "p50", "p99", "max" };
	const double w = BAR_W - BAR_LEFT - BAR_RIGHT;
	char name[48], buf[32];
	unsigned int row, k;

	fprintf(f, "<svg class=\"join-bar\" viewBox=\"0 0 %d 100\" role=\"img\">", BAR_W);
	for (row = 0; row < 3; row++) {
		double y = 6 + 31 * row, x = BAR_LEFT, scale, wire_end = 0;
		uint64_t total = 0;

		for (k = 0; k < BAR_SEGS; k++)
			total += at(seg_dist(d, k), row);
		fprintf(f, "<text x=\"4\" y=\"%.0f\">%s</text>", y + 14, row_name[row]);
		if (!total)
			continue;
		scale = w / (double)total;
		for (k = 0; k < BAR_SEGS; k++) {
			uint64_t v = at(seg_dist(d, k), row);
			double sw = scale * (double)v;

			seg_name(name, sizeof(name), s, k);
			format_duration(buf, sizeof(buf), v);
			fputs("<g class=\"seg\"><title>", f);
			html_esc(f, name);
			fprintf(f, " %s: %s (%llu ns)%s</title><rect x=\"%.2f\" y=\"%.1f\" "
				"width=\"%.2f\" height=\"20\" fill=\"%s\"/>", row_name[row], buf,
				ull(v), k == BAR_WIRE && d->one_sided ? ", at least" : "", x, y, sw,
				seg_colour[k]);
			if (sw >= 52)
				fprintf(f, "<text x=\"%.2f\" y=\"%.0f\" style=\"fill:#fff\">%s</text>",
					x + 4, y + 14, buf);
			fputs("</g>", f);
			x += sw;
			if (k == BAR_WIRE)
				wire_end = x;
		}
		if (d->dwire.count)
			whisker(f, d, wire_end, scale, y);
		format_duration(buf, sizeof(buf), total);
		fprintf(f, "<text x=\"%d\" y=\"%.0f\"><title>%llu ns</title>%s</text>",
			BAR_W - BAR_RIGHT + 6, y + 14, ull(total), buf);
	}
	fputs("</svg><p class=\"key\">", f);
	for (k = 0; k < BAR_SEGS; k++) {
		seg_name(name, sizeof(name), s, k);
		fprintf(f, "<span><i style=\"background:%s\"></i>", seg_colour[k]);
		html_esc(f, name);
		fputs("</span>", f);
	}
	fputs("</p>", f);
}

static bool any_stage(const struct join_direction *d)
{
	unsigned int k;

	for (k = 0; k < BAR_SEGS; k++)
		if (seg_dist(d, k)->count)
			return true;
	return false;
}

static void direction(FILE *f, const struct join_html *h, const struct netlat_join_counts *c,
		      unsigned int s)
{
	const struct join_direction *d = &h->d[s];
	struct netlat_join_tsval_counts tc;

	netlat_join_tsval_counts(h->j, &tc);
	fprintf(f, "<h3 id=\"join-%s\">", s ? "ba" : "ab");
	host_label(f, h, s);
	fputs(" &#8594; ", f);
	host_label(f, h, !s);
	fputs("</h3>", f);
	counts(f, c, &tc, s, d);
	table(f, s, d);
	if (any_stage(d))
		bars(f, s, d);
	else
		fputs("<p class=\"note\">No stage to draw: no packet of this direction joined.</p>",
		      f);
}

int join_html_write(const struct join_html *h, FILE *f)
{
	struct netlat_join_counts c;

	netlat_join_counts(h->j, &c);
	fputs("<section id=\"join\"><h2>Joined with the peer's capture</h2><p class=\"meta\">"
	      "<code>netlat join ", f);
	html_esc(f, h->file[0]);
	fputc(' ', f);
	html_esc(f, h->file[1]);
	fputs("</code>: A is this capture's host, B its peer's; every time on A's clock. "
	      "Both captures are read whole.</p>", f);
	if (text_lines(f, h->hosts, "join-hosts"))
		return -ENOMEM;
	fputs("<h3 id=\"join-clock\">B's clock against A's</h3>", f);
	if (text_lines(f, h->clock, "join-clock-lines"))
		return -ENOMEM;
	direction(f, h, &c, 0);
	direction(f, h, &c, 1);
	fputs("<p class=\"note\">Each bar puts each stage's own p50 (p99, max) side by side, "
	      "drawn to the bar's full width; their sum is not one packet's. The wire runs "
	      "from the sender's driver to the receiver's receive stamp; its whisker is the "
	      "median bound the clock leaves it.</p></section>", f);
	return 0;
}
