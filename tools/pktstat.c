// SPDX-License-Identifier: GPL-2.0
/*
 * `netlat stat --hist` (see pktstat.h). Quantiles come from the log2
 * buckets (netlat_stage_quantile): within a factor of two, never above
 * the largest sample; count, mean and max are exact.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include "pktstat.h"
#include "cli.h"

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

static const char *const kind_names[] = {
	"other", "rto", "fast", "tlp", "syn", "synack",
};

void pktstat_print(FILE *f, const struct netlat_hist *h,
		   const struct netlat_stage_hist *st, bool json)
{
	static const double qs[] = { 0.5, 0.9, 0.99 };
	unsigned int s, k, n = h->nr_stages < NETLAT_NR_STAGES ?
			       h->nr_stages : NETLAT_NR_STAGES;

	if (json) {
		fprintf(f, "{\"packets\":%llu,\"bytes\":%llu,\"segs\":%llu,"
			"\"untracked\":%llu,\"flows\":%llu,\"flows_full\":%llu,"
			"\"retrans_fail\":%llu,\"retrans_segs\":{",
			ull(h->packets), ull(h->bytes), ull(h->segs),
			ull(h->untracked), ull(h->flows), ull(h->flows_full),
			ull(h->retrans_fail));
		for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
			fprintf(f, "%s\"%s\":%llu", k ? "," : "", kind_names[k],
				ull(h->retrans_segs[k]));
		fprintf(f, "},\"rx_packets\":%llu,\"rx_bytes\":%llu,\"rx_dropped\":%llu,"
			"\"rx_untracked\":%llu,\"rx_flows\":%llu,\"rx_flows_full\":%llu",
			ull(h->rx_packets), ull(h->rx_bytes), ull(h->rx_dropped),
			ull(h->rx_untracked), ull(h->rx_flows), ull(h->rx_flows_full));
		fputs(",\"stages\":{", f);
		for (s = 0; s < n; s++) {
			fprintf(f, "%s\"%s\":{\"count\":%llu,\"sum_ns\":%llu,"
				"\"max\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu}",
				s ? "," : "", netlat_stage_name(s), ull(st[s].count),
				ull(st[s].sum_ns), ull(st[s].max_ns),
				ull(netlat_stage_quantile(&st[s], qs[0])),
				ull(netlat_stage_quantile(&st[s], qs[1])),
				ull(netlat_stage_quantile(&st[s], qs[2])));
		}
		fputs("}}\n", f);
		return;
	}
	fprintf(f, "%-13s %10s %12s %12s %12s %12s %12s\n", "stage (ns)", "count",
		"p50", "p90", "p99", "max", "mean");
	for (s = 0; s < n; s++)
		fprintf(f, "%-13s %10llu %12llu %12llu %12llu %12llu %12.0f\n",
			netlat_stage_name(s), ull(st[s].count),
			ull(netlat_stage_quantile(&st[s], qs[0])),
			ull(netlat_stage_quantile(&st[s], qs[1])),
			ull(netlat_stage_quantile(&st[s], qs[2])), ull(st[s].max_ns),
			st[s].count ? (double)st[s].sum_ns / (double)st[s].count : 0.0);
	fprintf(f, "packets %llu, bytes %llu, segments %llu; not followed %llu; "
		"sockets %llu (%llu found no slot)\n", ull(h->packets), ull(h->bytes),
		ull(h->segs), ull(h->untracked), ull(h->flows), ull(h->flows_full));
	fputs("retransmitted segments:", f);
	for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
		fprintf(f, " %s %llu", kind_names[k], ull(h->retrans_segs[k]));
	fprintf(f, "; failed attempts %llu\n", ull(h->retrans_fail));
	fprintf(f, "received packets %llu, bytes %llu, dropped %llu; not followed %llu; "
		"sockets %llu (%llu found no slot)\n", ull(h->rx_packets),
		ull(h->rx_bytes), ull(h->rx_dropped), ull(h->rx_untracked),
		ull(h->rx_flows), ull(h->rx_flows_full));
}

static double now_s(void)
{
	return (double)monotonic_ns() / 1e9;
}

int pktstat_run(const char *path, double interval_s, double duration_s,
		bool json)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	double end = duration_s > 0 ? now_s() + duration_s : 0;
	struct netlat_hist h;
	int fd, r, rounds = 0;

	fd = open_device(path);
	if (fd < 0)
		return 1;
	catch_stop_signals();
	for (;;) {
		r = netlat_hist(fd, false, &h, st, NETLAT_NR_STAGES);
		if (r < 0) {
			close(fd);
			if (r != -ENOTTY)
				return ioctl_failed(path, "HIST", -r);
			error("%s: HIST: this module has no packet level", path);
			return 1;
		}
		if (!json && rounds++)
			putchar('\n');
		pktstat_print(stdout, &h, st, json);
		fflush(stdout);
		if (interval_s <= 0 || stop_requested ||
		    (end && now_s() + interval_s > end))
			break;
		usleep((useconds_t)(interval_s * 1e6));
		if (stop_requested)
			break;
	}
	close(fd);
	return finish_stdout() ? 1 : 0;
}
