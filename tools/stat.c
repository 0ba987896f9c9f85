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

int cmd_stat(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "hist", no_argument, NULL, 'H' },
		{ "flows", no_argument, NULL, 'L' },
		{ "by", required_argument, NULL, 'b' },
		{ "prometheus", required_argument, NULL, 'P' },
		DEVICE_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *device = NULL, *name, *prom_file = NULL;
	const struct netlat_rec_hdr *rec;
	double duration = 0, interval = 0;
	struct filter flt = { 0 };
	struct window w = { 0 };
	uint64_t interval_ns = 0, windows = 0;
	bool json = false, hist = false, flows = false, keyed = false;
	uint32_t by = 0;
	struct reader rd;
	int c, r;

	while ((c = next_option(argc, argv, "d:i:jHLb:P:D:h", filter_options(opts))) != -1) {
		switch (c) {
		case 'd':
			if (!parse_seconds(optarg, &duration))
				return usage_error("bad duration '%s'", optarg);
			break;
		case 'i':
			if (!parse_seconds(optarg, &interval) || interval < 0.001)
				return usage_error("bad interval '%s'", optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'H':
			hist = true;
			break;
		case 'L':
			flows = true;
			break;
		case 'b':
			if (pktstat_parse_by(optarg, &by))
				return usage_error("bad --by '%s': port, netns, cgroup (comma-separated)",
						   optarg);
			keyed = true;
			break;
		case 'P':
			prom_file = optarg;
			break;
		case 'D':
			device = optarg;
			break;
		case 'h':
			return command_help();
		default:
			r = filter_or_bad_option(&flt, c, argv);
			if (r >= 0) {
				filter_free(&flt);
				return r;
			}
		}
	}
	if (optind < argc) {
		filter_free(&flt);
		return usage_error("too many arguments");
	}
	name = device ? device : NETLAT_DEVICE_PATH;
	if (prom_file && keyed) {
		filter_free(&flt);
		return usage_error("--by goes with --hist: --prometheus writes every key the kernel keeps");
	}
	if (prom_file) {
		filter_free(&flt);
		if (json)
			return usage_error("--prometheus writes no JSON");
		return prom_textfile_run(name, prom_file, interval, duration);
	}
	if (hist && flows) {
		filter_free(&flt);
		return usage_error("--hist and --flows are two views: one at a time");
	}
	if (keyed && !hist) {
		filter_free(&flt);
		return usage_error("--by goes with --hist");
	}
	if (keyed) {
		filter_free(&flt);
		return pktstat_keys_run(name, interval, duration, json, by);
	}
	if (hist || flows) {
		filter_free(&flt);
		return (flows ? pktstat_flows_run : pktstat_run)(name, interval,
								  duration, json);
	}
	if (reader_open(&rd, device, false, duration)) {
		reader_close(&rd);
		filter_free(&flt);
		return 1;
	}
	rd.warn_gaps = true;
	catch_stop_signals();
	if (interval > 0) {
		interval_ns = (uint64_t)(interval * 1e9);
		rd.tick_ns = monotonic_ns() + interval_ns;
	}
	r = window_start(&w, name, &rd.stream, rd.names) ? -2 : 1;
	while (r > 0 && (r = reader_next(&rd, &rec)) > 0) {
		if (r == 1) {
			if (window_add(&w, &flt, &rd.stream, rec))
				r = -2;
			continue;
		}
		/* r == 2: the interval is over. */
		if (!json && windows++)
			putchar('\n');
		if (report_print(w.rep, w.seq, json, stdout))
			r = -2;
		fflush(stdout);
		window_free(&w);
		rd.tick_ns += interval_ns;
		if (rd.tick_ns <= monotonic_ns())
			rd.tick_ns = monotonic_ns() + interval_ns;
		if (window_start(&w, name, &rd.stream, rd.names))
			r = -2;
	}
	if (r == -2)
		error("out of memory");
	if (r == 0) {
		if (!json && windows)
			putchar('\n');
		if (report_print(w.rep, w.seq, json, stdout)) {
			error("out of memory");
			r = -1;
		} else {
			r = finish_stdout() ? -1 : 0;
		}
	}
	window_free(&w);
	reader_close(&rd);
	filter_free(&flt);
	return r < 0;
}
