// SPDX-License-Identifier: GPL-2.0
/*
 * "netlat stat": the device's or a capture's stages and counters, once or
 * every interval, as text, JSON or Prometheus metrics.
 */
#define _DEFAULT_SOURCE

#include "report.h"
#include "pktstat.h"
#include "prom.h"
#include "cli.h"
#include "trace.h"
#include "reader.h"
#include "stat.h"

/* One window of "netlat stat": a report and its own loss accounting. */
struct window {
	struct report *rep;
	struct netlat_seq *seq;
};

static void window_free(struct window *w)
{
	report_free(w->rep);
	netlat_seq_free(w->seq);
	w->rep = NULL;
	w->seq = NULL;
}

/* A window begins with the stream header in force (none before the first). */
static int window_start(struct window *w, const char *name,
			const struct netlat_rec_stream *stream,
			const struct netlat_names *names)
{
	w->rep = report_new(name);
	w->seq = netlat_seq_new();
	if (!w->rep || !w->seq)
		return -1;
	report_set_names(w->rep, names);
	if (stream->hdr.type != NETLAT_REC_STREAM)
		return 0;
	netlat_seq_add(w->seq, &stream->hdr, NULL);
	return report_add(w->rep, stream, &stream->hdr);
}

/* Every record goes to the loss accounting; those that pass, to the report. */
static int window_add(struct window *w, struct filter *flt,
		      const struct netlat_rec_stream *stream,
		      const struct netlat_rec_hdr *rec)
{
	if (netlat_seq_add(w->seq, rec, NULL) < 0)
		return -1;
	if (!filter_match(flt, stream, rec))
		return 0;
	return report_add(w->rep, stream, rec);
}

/*
 * The views that read no records: the kernel's histograms or per-socket
 * counters, or Prometheus metrics. -1 when the records are to be read.
 */
static int stat_kernel_views(const struct read_args *a, const char *name)
{
	if (a->prometheus && a->keyed)
		return usage_error("--by goes with --hist: --prometheus writes every key the kernel keeps");
	if (a->prometheus) {
		if (a->json)
			return usage_error("--prometheus writes no JSON");
		return prom_textfile_run(name, a->prometheus, a->interval, a->duration);
	}
	if (a->hist && a->flows)
		return usage_error("--hist and --flows are two views: one at a time");
	if (a->keyed && !a->hist)
		return usage_error("--by goes with --hist");
	if (a->keyed)
		return pktstat_keys_run(name, a->interval, a->duration, a->json, a->by);
	if (a->hist || a->flows)
		return (a->flows ? pktstat_flows_run : pktstat_run)(name, a->interval,
								    a->duration, a->json);
	return -1;
}

/* The records' report at the end, or one per interval: <0 on error. */
static int stat_windows(struct read_args *a, const char *name, struct reader *rd)
{
	const struct netlat_rec_hdr *rec;
	struct window w = { 0 };
	uint64_t interval_ns = 0, windows = 0;
	int r;

	if (a->interval > 0) {
		interval_ns = (uint64_t)(a->interval * 1e9);
		rd->tick_ns = monotonic_ns() + interval_ns;
	}
	r = window_start(&w, name, &rd->stream, rd->names) ? -2 : 1;
	while (r > 0 && (r = reader_next(rd, &rec)) > 0) {
		if (r == 1) {
			if (window_add(&w, &a->flt, &rd->stream, rec))
				r = -2;
			continue;
		}
		/* r == 2: the interval is over. */
		if (!a->json && windows++)
			putchar('\n');
		if (report_print(w.rep, w.seq, a->json, stdout))
			r = -2;
		fflush(stdout);
		window_free(&w);
		rd->tick_ns += interval_ns;
		if (rd->tick_ns <= monotonic_ns())
			rd->tick_ns = monotonic_ns() + interval_ns;
		if (window_start(&w, name, &rd->stream, rd->names))
			r = -2;
	}
	if (r == -2)
		error("out of memory");
	if (r == 0) {
		if (!a->json && windows)
			putchar('\n');
		if (report_print(w.rep, w.seq, a->json, stdout)) {
			error("out of memory");
			r = -1;
		} else {
			r = finish_stdout() ? -1 : 0;
		}
	}
	window_free(&w);
	return r;
}

static int stat_run(struct read_args *a, int nargs, char **args)
{
	const char *name = a->device ? a->device : NETLAT_DEVICE_PATH;
	struct reader rd;
	int r;

	(void)args;
	if (nargs)
		return usage_error("too many arguments");
	r = stat_kernel_views(a, name);
	if (r >= 0)
		return r;
	if (reader_open(&rd, a->device, false, a->duration)) {
		reader_close(&rd);
		return 1;
	}
	rd.warn_gaps = true;
	catch_stop_signals();
	r = stat_windows(a, name, &rd);
	reader_close(&rd);
	return r < 0;
}

int cmd_stat(int argc, char **argv)
{
	return read_command(argc, argv, "duration interval json hist flows by prometheus device",
			    stat_run);
}
