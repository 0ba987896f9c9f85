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
#include <stdlib.h>
#include "pktstat.h"
#include "cli.h"
#include "output.h"

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
			"\"merged\":%llu,\"retrans_fail\":%llu,\"retrans_segs\":{",
			ull(h->packets), ull(h->bytes), ull(h->segs),
			ull(h->untracked), ull(h->flows), ull(h->flows_full),
			ull(h->size >= sizeof(*h) ? h->merged : 0),
			ull(h->retrans_fail));
		for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
			fprintf(f, "%s\"%s\":%llu", k ? "," : "", kind_names[k],
				ull(h->retrans_segs[k]));
		fprintf(f, "},\"rx_packets\":%llu,\"rx_bytes\":%llu,\"rx_dropped\":%llu,"
			"\"rx_untracked\":%llu,\"rx_flows\":%llu,\"rx_flows_full\":%llu,"
			"\"rx_wait_untracked\":%llu",
			ull(h->rx_packets), ull(h->rx_bytes), ull(h->rx_dropped),
			ull(h->rx_untracked), ull(h->rx_flows), ull(h->rx_flows_full),
			ull(h->rx_wait_untracked));
		fprintf(f, ",\"no_mem\":%llu,\"evicted\":%llu,\"rx_no_mem\":%llu,"
			"\"rx_evicted\":%llu,\"closed\":%llu,\"rx_closed\":%llu",
			ull(h->no_mem), ull(h->evicted), ull(h->rx_no_mem),
			ull(h->rx_evicted), ull(h->closed), ull(h->rx_closed));
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
	fprintf(f, "packets %llu, bytes %llu, segments %llu; ended unacknowledged %llu; "
		"not followed %llu (%llu for memory); sockets %llu (%llu found no entry, "
		"%llu idle evicted)\n", ull(h->packets), ull(h->bytes), ull(h->segs),
		ull(h->closed), ull(h->untracked), ull(h->no_mem), ull(h->flows),
		ull(h->flows_full), ull(h->evicted));
	fputs("retransmitted segments:", f);
	for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
		fprintf(f, " %s %llu", kind_names[k], ull(h->retrans_segs[k]));
	fprintf(f, "; failed attempts %llu\n", ull(h->retrans_fail));
	fprintf(f, "received packets %llu, bytes %llu, dropped %llu; ended unread %llu; "
		"not followed %llu (%llu for memory); sockets %llu (%llu found no entry, "
		"%llu idle evicted)\n", ull(h->rx_packets), ull(h->rx_bytes),
		ull(h->rx_dropped), ull(h->rx_closed), ull(h->rx_untracked),
		ull(h->rx_no_mem), ull(h->rx_flows), ull(h->rx_flows_full),
		ull(h->rx_evicted));
	if (h->rx_wait_untracked)
		fprintf(f, "blocked readers' waits not followed (no wait slot): %llu\n",
			ull(h->rx_wait_untracked));
	if (h->size >= sizeof(*h) && h->merged)
		fprintf(f, "followed as ranges (socket or table full): %llu packets\n",
			ull(h->merged));
}

static const char *const errno_names[NETLAT_RTXERR_NR] = {
	"other", "EAGAIN", "EBUSY", "ENOMEM", "ENOBUFS", "EHOSTUNREACH",
	"EPERM", "other7",
};

static uint64_t sum8(const __u64 *v)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		s += v[i];
	return s;
}

static const char *flow_state(const struct netlat_flow_stats *e)
{
	return e->flags & NETLAT_FLOW_REST ? "rest" :
	       e->flags & NETLAT_FLOW_CLOSED ? "closed" :
	       e->flags & NETLAT_FLOW_EVICTED ? "evict" : "live";
}

void pktstat_print_flows(FILE *f, const struct netlat_flow_stats *e,
			 unsigned int n, uint64_t closed, uint64_t summed,
			 bool json)
{
	unsigned int i, k;

	if (json) {
		fprintf(f, "{\"closed\":%llu,\"summed\":%llu,\"flows\":[",
			ull(closed), ull(summed));
		for (i = 0; i < n; i++) {
			fprintf(f, "%s{\"state\":\"%s\"", i ? "," : "",
				flow_state(&e[i]));
			print_flow(f, &e[i].flow, true);
			fprintf(f, ",\"packets\":%llu,\"bytes\":%llu,\"segs\":%llu,"
				"\"untracked\":%llu,\"merged\":%llu,\"retrans_segs\":{",
				ull(e[i].packets), ull(e[i].bytes), ull(e[i].segs),
				ull(e[i].untracked), ull(e[i].merged));
			for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
				fprintf(f, "%s\"%s\":%llu", k ? "," : "", kind_names[k],
					ull(e[i].retrans_segs[k]));
			fputs("},\"retrans_fail\":{", f);
			for (k = 0; k < NETLAT_RTXERR_NR - 1; k++)
				fprintf(f, "%s\"%s\":%llu", k ? "," : "", errno_names[k],
					ull(e[i].retrans_fail[k]));
			fputs("}}", f);
		}
		fputs("]}\n", f);
		return;
	}
	fprintf(f, "%-5s %-44s %10s %12s %10s %8s %8s %8s %8s\n", "state", "flow",
		"packets", "bytes", "segs", "rtx_segs", "rtx_fail", "unfollow", "merged");
	for (i = 0; i < n; i++) {
		fprintf(f, "%-5s ", flow_state(&e[i]));
		print_flow(f, &e[i].flow, false);
		fprintf(f, " %10llu %12llu %10llu %8llu %8llu %8llu %8llu\n",
			ull(e[i].packets), ull(e[i].bytes), ull(e[i].segs),
			ull(sum8(e[i].retrans_segs)), ull(sum8(e[i].retrans_fail)),
			ull(e[i].untracked), ull(e[i].merged));
		if (sum8(e[i].retrans_segs)) {
			fputs("      retransmitted segments:", f);
			for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
				if (e[i].retrans_segs[k])
					fprintf(f, " %s %llu", kind_names[k],
						ull(e[i].retrans_segs[k]));
			fputc('\n', f);
		}
		if (sum8(e[i].retrans_fail)) {
			fputs("      failed retransmits:", f);
			for (k = 0; k < NETLAT_RTXERR_NR; k++)
				if (e[i].retrans_fail[k])
					fprintf(f, " %s %llu", errno_names[k],
						ull(e[i].retrans_fail[k]));
			fputc('\n', f);
		}
	}
	fprintf(f, "%u entries; %llu sockets summed in rest (and the packets of sockets without an entry); %llu closed since the level was set\n",
		n, ull(summed), ull(closed));
}

static double now_s(void)
{
	return (double)monotonic_ns() / 1e9;
}

/*
 * The read-print loop of both views: @once reads the kernel and prints,
 * 0, or the ioctl's -errno (named @what).
 */
typedef int (*pktstat_once_fn)(int fd, bool json, void *ctx);

static int pktstat_loop(const char *path, double interval_s, double duration_s,
			bool json, const char *what, const char *missing,
			pktstat_once_fn once, void *ctx)
{
	double end = duration_s > 0 ? now_s() + duration_s : 0;
	int fd, r, rounds = 0;

	fd = open_device(path);
	if (fd < 0)
		return 1;
	catch_stop_signals();
	for (;;) {
		if (!json && rounds++)
			putchar('\n');
		r = once(fd, json, ctx);
		if (r < 0) {
			close(fd);
			if (r != -ENOTTY)
				return ioctl_failed(path, what, -r);
			error("%s: %s: this module has no %s", path, what, missing);
			return 1;
		}
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

#define FLOWS_ROOM	(256 + NETLAT_FLOWS_CLOSED_MAX)

static int flows_once(int fd, bool json, void *ctx)
{
	struct netlat_flow_stats *e = ctx;
	uint64_t closed = 0, summed = 0;
	int r = netlat_flows_bounded(fd, true, e, FLOWS_ROOM, &closed, &summed);

	/* a module without the sum: as many as fit */
	if (r == -EINVAL)
		r = netlat_flows(fd, true, e, FLOWS_ROOM, &closed);
	if (r >= 0)
		pktstat_print_flows(stdout, e, r < FLOWS_ROOM ? (unsigned int)r :
				    FLOWS_ROOM, closed, summed, json);
	return r < 0 ? r : 0;
}

int pktstat_flows_run(const char *path, double interval_s, double duration_s,
		      bool json)
{
	struct netlat_flow_stats *e = calloc(FLOWS_ROOM, sizeof(*e));
	int r;

	if (!e) {
		error("out of memory");
		return 1;
	}
	r = pktstat_loop(path, interval_s, duration_s, json, "FLOWS",
			 "per-flow counters", flows_once, e);
	free(e);
	return r;
}

static int hist_once(int fd, bool json, void *ctx)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_hist h;
	int r = netlat_hist(fd, false, &h, st, NETLAT_NR_STAGES);

	(void)ctx;
	if (!r)
		pktstat_print(stdout, &h, st, json);
	return r;
}

int pktstat_run(const char *path, double interval_s, double duration_s,
		bool json)
{
	return pktstat_loop(path, interval_s, duration_s, json, "HIST",
			    "packet level", hist_once, NULL);
}
