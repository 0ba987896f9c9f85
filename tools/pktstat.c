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
#include <string.h>
#include <sys/ioctl.h>
#include "pktstat.h"
#include "cli.h"
#include "output.h"
#include "cgpath.h"
#include "vec.h"

static const char *const kind_names[] = {
	"other", "rto", "fast", "tlp", "syn", "synack",
};

/*
 * The stage table of @n stages: text lines (@busy: only stages with
 * samples, indented), or a JSON object.
 */
static void print_stages(FILE *f, const struct netlat_stage_hist *st,
			 unsigned int n, bool json, bool busy)
{
	static const double qs[] = { 0.5, 0.9, 0.99 };
	const char *in = busy ? "  " : "";
	unsigned int s;
	bool first = true;

	if (json) {
		fputc('{', f);
		for (s = 0; s < n; s++) {
			if (busy && !st[s].count)
				continue;
			fprintf(f, "%s\"%s\":{\"count\":%llu,\"sum_ns\":%llu,"
				"\"max\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu}",
				first ? "" : ",", netlat_stage_name(s), ull(st[s].count),
				ull(st[s].sum_ns), ull(st[s].max_ns),
				ull(netlat_stage_quantile(&st[s], qs[0])),
				ull(netlat_stage_quantile(&st[s], qs[1])),
				ull(netlat_stage_quantile(&st[s], qs[2])));
			first = false;
		}
		fputc('}', f);
		return;
	}
	fprintf(f, "%s%-13s %10s %12s %12s %12s %12s %12s\n", in, "stage (ns)", "count",
		"p50", "p90", "p99", "max", "mean");
	for (s = 0; s < n; s++) {
		if (busy && !st[s].count)
			continue;
		fprintf(f, "%s%-13s %10llu %12llu %12llu %12llu %12llu %12.0f\n", in,
			netlat_stage_name(s), ull(st[s].count),
			ull(netlat_stage_quantile(&st[s], qs[0])),
			ull(netlat_stage_quantile(&st[s], qs[1])),
			ull(netlat_stage_quantile(&st[s], qs[2])), ull(st[s].max_ns),
			st[s].count ? (double)st[s].sum_ns / (double)st[s].count : 0.0);
	}
}

void pktstat_print(FILE *f, const struct netlat_hist *h,
		   const struct netlat_stage_hist *st, bool json)
{
	unsigned int k, n = h->nr_stages < NETLAT_NR_STAGES ?
			       h->nr_stages : NETLAT_NR_STAGES;

	if (json) {
		fputc('{', f);
#define HIST_JSON(field, NAME, metric, unit, help) \
		fprintf(f, "\"" #field "\":%llu,", ull(h->field));
		NETLAT_HIST_COUNTERS(HIST_JSON)
#undef HIST_JSON
		fprintf(f, "\"flows\":%llu,\"rx_flows\":%llu,\"retrans_segs\":{",
			ull(h->flows), ull(h->rx_flows));
		for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
			fprintf(f, "%s\"%s\":%llu", k ? "," : "", kind_names[k],
				ull(h->retrans_segs[k]));
		fputc('}', f);
		fputs(",\"stages\":", f);
		print_stages(f, st, n, true, false);
		fputs("}\n", f);
		return;
	}
	print_stages(f, st, n, false, false);
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
	if (h->merged)
		fprintf(f, "followed as ranges (socket or table full): %llu packets\n",
			ull(h->merged));
	if (h->unsampled || h->rx_unsampled)
		fprintf(f, "left out by sampling (counted, no stage times): %llu sent, %llu received packets\n",
			ull(h->unsampled), ull(h->rx_unsampled));
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
 * The read-print loop of the views: @once reads the kernel and prints,
 * 0, the ioctl's -errno (named @what), or 1 when it said what is wrong.
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
		if (r > 0) {		/* said why already */
			close(fd);
			return 1;
		}
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

/* ---- histograms by key: stat --hist --by ------------------------------- */

static const char *const key_fields[] = { "port", "netns", "cgroup" };

int pktstat_parse_by(const char *s, uint32_t *by)
{
	char *copy, *tok, *save = NULL;
	unsigned int i;
	int r = 0;

	*by = 0;
	if (!strcmp(s, "none"))
		return 0;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !r;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < 3 && strcmp(tok, key_fields[i]); i++)
			;
		if (i < 3)
			*by |= 1U << i;
		else
			r = -EINVAL;
	}
	free(copy);
	return r ? r : *by ? 0 : -EINVAL;
}

/* The keys the kernel keeps, summed over the fields not shown. */
struct key_group {
	bool other;
	uint16_t port;
	uint32_t netns;
	uint64_t cgroup;
	uint64_t keys, packets, bytes, rx_packets, rx_bytes;
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
};

struct keys_view {
	uint32_t by;
	struct key_group *g;
	size_t n, cap;
};

int pktstat_read_key(int fd, uint32_t key, struct netlat_hist *h,
		     struct netlat_stage_hist *st)
{
	memset(h, 0, sizeof(*h));
	h->size = sizeof(*h);
	h->nr_stages = NETLAT_NR_STAGES;
	h->stage_size = sizeof(*st);
	h->stages = (uintptr_t)st;
	h->key = key;
	return ioctl(fd, NETLAT_IOC_HIST, h) ? -errno : 0;
}

static int add_key(struct keys_view *v, const struct netlat_hist *h,
		   const struct netlat_stage_hist *st, bool other)
{
	struct key_group key = { .other = other }, *g;
	unsigned int s, b;
	size_t i;

	if (!other) {
		key.port = v->by & NETLAT_KEY_PORT ? h->key_port : 0;
		key.netns = v->by & NETLAT_KEY_NETNS ? h->key_netns : 0;
		key.cgroup = v->by & NETLAT_KEY_CGROUP ? h->key_cgroup : 0;
	}
	for (i = 0; i < v->n; i++) {
		g = &v->g[i];
		if (g->other == key.other && g->port == key.port &&
		    g->netns == key.netns && g->cgroup == key.cgroup)
			break;
	}
	if (i == v->n) {
		struct key_group *ng = vec_room(v->g, &v->cap, v->n,
						sizeof(*ng), 16);

		if (!ng)
			return -ENOMEM;
		v->g = ng;
		v->g[v->n++] = key;
	}
	g = &v->g[i];
	g->keys++;
	g->packets += h->packets;
	g->bytes += h->bytes;
	g->rx_packets += h->rx_packets;
	g->rx_bytes += h->rx_bytes;
	for (s = 0; s < NETLAT_NR_STAGES; s++) {
		g->st[s].count += st[s].count;
		g->st[s].sum_ns += st[s].sum_ns;
		if (st[s].max_ns > g->st[s].max_ns)
			g->st[s].max_ns = st[s].max_ns;
		for (b = 0; b < NETLAT_HIST_BUCKETS; b++)
			g->st[s].bucket[b] += st[s].bucket[b];
	}
	return 0;
}

static void print_key_name(FILE *f, const struct key_group *g, uint32_t by,
			   bool json)
{
	bool first = true;

	if (g->other) {
		fputs(json ? "\"other\":true" : "other", f);
		return;
	}
	if (by & NETLAT_KEY_PORT) {
		fprintf(f, json ? "\"port\":%u" : "port %u", g->port);
		first = false;
	}
	if (by & NETLAT_KEY_NETNS) {
		fprintf(f, json ? "%s\"netns\":%u" : "%snetns %u", first ? "" :
			json ? "," : ", ", g->netns);
		first = false;
	}
	if (by & NETLAT_KEY_CGROUP) {
		const char *path = cgpath_lookup(g->cgroup);

		fprintf(f, json ? "%s\"cgroup\":%llu" : "%scgroup %llu", first ? "" :
			json ? "," : ", ", ull(g->cgroup));
		if (json) {
			fputs(",\"cgroup_path\":", f);
			if (path)
				print_json_string(f, path);
			else
				fputs("null", f);
		} else if (path) {
			fprintf(f, " (%s)", path);
		}
	}
}

static void print_keys(FILE *f, const struct keys_view *v,
		       const struct netlat_hist *host, bool json)
{
	unsigned int i, used = 0;
	size_t k;

	for (k = 0; k < v->n; k++)
		used += v->g[k].other ? 0 : (unsigned int)v->g[k].keys;
	if (json) {
		fputs("{\"key_by\":[", f);
		for (i = 0; i < 3; i++)
			if (host->key_by & (1U << i))
				fprintf(f, "%s\"%s\"", host->key_by & ((1U << i) - 1) ?
					"," : "", key_fields[i]);
		fprintf(f, "],\"max_keys\":%u,\"used\":%u,\"evicted\":%llu,"
			"\"folded\":%llu,\"mem_bytes\":%llu,\"keys\":[", host->max_keys,
			used, ull(host->keys_evicted), ull(host->keys_folded),
			ull(host->keys_mem_bytes));
		for (k = 0; k < v->n; k++) {
			const struct key_group *g = &v->g[k];

			fputs(k ? ",{" : "{", f);
			print_key_name(f, g, v->by, true);
			fprintf(f, ",\"packets\":%llu,\"bytes\":%llu,\"rx_packets\":%llu,"
				"\"rx_bytes\":%llu,\"stages\":", ull(g->packets),
				ull(g->bytes), ull(g->rx_packets), ull(g->rx_bytes));
			print_stages(f, g->st, NETLAT_NR_STAGES, true, true);
			fputc('}', f);
		}
		fputs("]}\n", f);
		return;
	}
	fprintf(f, "keys: %u of %u slots used; %llu evicted; %llu sockets folded "
		"into other; %llu bytes\n", used, host->max_keys,
		ull(host->keys_evicted), ull(host->keys_folded),
		ull(host->keys_mem_bytes));
	for (k = 0; k < v->n; k++) {
		const struct key_group *g = &v->g[k];

		print_key_name(f, g, v->by, false);
		fprintf(f, ": packets %llu, bytes %llu; received packets %llu, "
			"bytes %llu\n", ull(g->packets), ull(g->bytes),
			ull(g->rx_packets), ull(g->rx_bytes));
		print_stages(f, g->st, NETLAT_NR_STAGES, false, true);
	}
}

/*
 * Every key in use and the other's into @v; 1 if an eviction moved sums
 * meanwhile (read again), 0, or -errno.
 */
static int keys_read(int fd, struct keys_view *v, struct netlat_hist *host)
{
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_hist h;
	uint32_t k;
	int r;

	v->n = 0;
	for (k = 1; k <= host->max_keys; k++) {
		r = pktstat_read_key(fd, k, &h, st);
		if (r)
			return r == -EINVAL ? 1 : r;	/* fewer keys now */
		if ((h.key_flags & NETLAT_HIST_KEY_USED) && (r = add_key(v, &h, st, false)))
			return r;
	}
	r = pktstat_read_key(fd, NETLAT_HIST_KEY_OTHER, &h, st);
	if (!r)
		r = add_key(v, &h, st, true);
	if (r)
		return r == -EINVAL ? 1 : r;
	return h.keys_evicted != host->keys_evicted || h.key_by != host->key_by ||
	       h.max_keys != host->max_keys;
}

static int keys_once(int fd, bool json, void *ctx)
{
	struct keys_view *v = ctx;
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_hist host;
	int r, tries = 0;

again:
	r = pktstat_read_key(fd, 0, &host, st);
	if (r)
		return r;
	if (!host.key_by) {
		error("the kernel keeps no histograms by key: netlat config --by FIELDS");
		return 1;
	}
	if (!v->by)
		v->by = host.key_by;
	if (v->by & ~host.key_by) {
		error("the kernel keeps its histograms by other fields (netlat config --by)");
		return 1;
	}
	r = keys_read(fd, v, &host);
	if (r == 1 && ++tries < 5)
		goto again;
	if (r == 1)
		r = -EAGAIN;
	if (!r)
		print_keys(stdout, v, &host, json);
	return r;
}

int pktstat_keys_run(const char *path, double interval_s, double duration_s,
		     bool json, uint32_t by)
{
	struct keys_view v = { .by = by };
	int r = pktstat_loop(path, interval_s, duration_s, json, "HIST",
			     "histograms by key", keys_once, &v);

	free(v.g);
	return r;
}
