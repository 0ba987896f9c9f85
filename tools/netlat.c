// SPDX-License-Identifier: GPL-2.0
/*
 * netlat - tail, record and summarise netlat record streams.
 *
 * Every sub-command reads through libnetlat; this file only parses
 * arguments and formats output. Exit status: 0 success (also when stopped
 * by SIGINT/SIGTERM), 1 runtime error, 2 bad arguments.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "libnetlat.h"
#include "pktstat.h"
#include "exporter.h"
#include "prom.h"
#include "cli.h"
#include "filter.h"
#include "flight.h"
#include "join.h"
#include "notes.h"
#include "hooks.h"
#include "output.h"
#include "report.h"
#include "html.h"
#include "trace.h"

/* Unexplained gaps printed one by one before they are only counted. */
#define MAX_GAP_WARNINGS 10

/* A filter option (filter.h), or a bad one: -1 taken, else the exit status. */
static int filter_or_bad_option(struct filter *flt, int c, char **argv)
{
	int r = filter_parse(flt, c, optarg);

	if (r > 0)
		return -1;
	if (r < 0)
		return usage_error("%s", flt->err);
	return bad_option(argv);
}

/* ---- reading with stop requests and deadlines -------------------------- */

struct reader {
	struct netlat_source *src;
	struct netlat_merge *merge;	/* NULL: records in arrival order */
	struct netlat_seq *seq;
	struct netlat_rec_stream stream; /* header of the records returned */
	struct netlat_names *names;	/* drop reasons of the records returned */
	bool device;			/* the module's device: names of this host */
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0: none */
	uint64_t tick_ns;		/* also wake the caller then; 0: none */
	bool stopping;
	bool warn_gaps;
	uint64_t gap_warnings;
};

static int reader_open(struct reader *rd, const char *path, bool ordered,
		       double duration)
{
	char errbuf[NETLAT_ERRBUF_SIZE];
	struct stat st;

	memset(rd, 0, sizeof(*rd));
	rd->src = netlat_open(path, errbuf);
	if (!rd->src) {
		error("%s", errbuf);
		return -1;
	}
	rd->seq = netlat_seq_new();
	rd->names = netlat_names_new();
	rd->device = !fstat(netlat_fd(rd->src), &st) && S_ISCHR(st.st_mode);
	if (ordered)
		rd->merge = netlat_merge_new(rd->src, NETLAT_HOLD_NS_DEFAULT);
	if (!rd->seq || !rd->names || (ordered && !rd->merge)) {
		error("out of memory");
		return -1;
	}
	if (duration > 0)
		rd->deadline_ns = monotonic_ns() + (uint64_t)(duration * 1e9);
	return 0;
}

static void reader_close(struct reader *rd)
{
	netlat_merge_free(rd->merge);
	netlat_seq_free(rd->seq);
	netlat_names_free(rd->names);
	netlat_close(rd->src);
}

static bool deadline_passed(const struct reader *rd)
{
	return rd->deadline_ns && monotonic_ns() >= rd->deadline_ns;
}

/* Wake up in time for the deadline, and every TICK_MS to see signals. */
static void reader_set_timeout(struct reader *rd)
{
	uint64_t now, ms = TICK_MS;

	if (rd->deadline_ns) {
		now = monotonic_ns();
		if (rd->deadline_ns > now && (rd->deadline_ns - now) / 1000000 + 1 < ms)
			ms = (rd->deadline_ns - now) / 1000000 + 1;
	}
	if (rd->tick_ns) {
		now = monotonic_ns();
		if (rd->tick_ns > now && (rd->tick_ns - now) / 1000000 + 1 < ms)
			ms = (rd->tick_ns - now) / 1000000 + 1;
	}
	netlat_set_timeout(rd->src, (int)ms);
}

static void reader_account(struct reader *rd, const struct netlat_rec_hdr *rec)
{
	struct netlat_seq_gap gap;

	if (rec->type == NETLAT_REC_STREAM)
		memcpy(&rd->stream, rec, rec->size < sizeof(rd->stream) ?
					 rec->size : sizeof(rd->stream));
	/* without tracefs (or the right to read it) the numbers are shown */
	netlat_names_feed(rd->names, rec, rd->device);
	if (netlat_seq_add(rd->seq, rec, &gap) != 1 || !rd->warn_gaps)
		return;
	if (rd->gap_warnings++ < MAX_GAP_WARNINGS)
		error("cpu %u: unexplained gap: expected seq %llu, got %llu",
		      gap.cpu, (unsigned long long)gap.expected,
		      (unsigned long long)gap.seq);
}

/*
 * The next record, honouring stop requests and the deadline: 1 record,
 * 0 done, -1 error (already printed), 2 tick_ns passed (when set). Once
 * stopping, records already read from the device are still returned: the
 * ring no longer holds them.
 */
static int reader_next(struct reader *rd, const struct netlat_rec_hdr **rec)
{
	int r;

	for (;;) {
		if (!rd->stopping && (stop_requested || deadline_passed(rd))) {
			rd->stopping = true;
			netlat_stop_reading(rd->src);
		}
		if (rd->tick_ns && monotonic_ns() >= rd->tick_ns)
			return 2;
		reader_set_timeout(rd);
		r = rd->merge ? netlat_merge_next(rd->merge, rec)
			      : netlat_next(rd->src, rec);
		if (r == -EINTR || r == -EAGAIN)
			continue;
		if (r < 0) {
			error("%s", netlat_errmsg(rd->src));
			return -1;
		}
		if (r == 1)
			reader_account(rd, *rec);
		return r;
	}
}

/* "N records, N lost[, N unexplained gaps][, N out of order]" */
static void print_totals(FILE *f, const struct reader *rd)
{
	struct netlat_seq_stats st;

	netlat_seq_total(rd->seq, &st);
	fprintf(f, "%llu records, %llu lost", (unsigned long long)st.records,
		(unsigned long long)st.lost);
	if (st.gaps)
		fprintf(f, ", %llu unexplained gaps", (unsigned long long)st.gaps);
	if (rd->merge && netlat_merge_late(rd->merge))
		fprintf(f, ", %llu out of order",
			(unsigned long long)netlat_merge_late(rd->merge));
}

/* ---- tail ---------------------------------------------------------------- */

static int cmd_tail(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "ordered", no_argument, NULL, 'O' },
		KFILTER_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const struct netlat_rec_hdr *rec;
	uint64_t count = 0, printed = 0;
	bool json = false, ordered = false;
	struct kfilters kf = { .fd = -1 };
	struct filter flt = { 0 };
	double duration = 0;
	struct reader rd;
	int c, r, status;

	while ((c = next_option(argc, argv, "n:d:jOh", filter_options(opts))) != -1) {
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, &count) || !count)
				return usage_error("bad count '%s'", optarg);
			break;
		case 'd':
			if (!parse_seconds(optarg, &duration))
				return usage_error("bad duration '%s'", optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'O':
			ordered = true;
			break;
		case KFILTER_OPT:
			status = kfilters_add(&kf, optarg);
			if (status >= 0) {
				filter_free(&flt);
				return status;
			}
			break;
		case 'h':
			return command_help();
		default:
			status = filter_or_bad_option(&flt, c, argv);
			if (status >= 0) {
				filter_free(&flt);
				return status;
			}
		}
	}
	if (argc - optind > 1) {
		filter_free(&flt);
		return usage_error("too many arguments");
	}
	if (kfilters_apply(&kf, argv[optind])) {
		filter_free(&flt);
		return 1;
	}
	if (reader_open(&rd, argv[optind], ordered, duration)) {
		reader_close(&rd);
		kfilters_restore(&kf);
		filter_free(&flt);
		return 1;
	}
	rd.warn_gaps = true;
	output_set_drop_names(rd.names);
	catch_stop_signals();

	for (;;) {
		/* Flush before a read() may block, so live output is not stuck. */
		if (netlat_is_live(rd.src) && !netlat_buffered(rd.src))
			fflush(stdout);
		r = reader_next(&rd, &rec);
		if (r <= 0)
			break;
		if (!filter_match(&flt, &rd.stream, rec))
			continue;
		print_record(stdout, &rd.stream, rec, json);
		if (rec->type != NETLAT_REC_STREAM && rec->type != NETLAT_REC_NOTE &&
		    ++printed == count)
			break;
	}
	status = finish_stdout() || r < 0;
	/* After an error its message is the one line to read. */
	if (!status) {
		fputs("netlat: ", stderr);
		print_totals(stderr, &rd);
		if (filter_active(&flt))
			fprintf(stderr, ", %llu matched", (unsigned long long)flt.matched);
		fputc('\n', stderr);
	}
	reader_close(&rd);
	kfilters_restore(&kf);
	filter_free(&flt);
	return status;
}

/* ---- record -------------------------------------------------------------- */

static int open_output(const char *path)
{
	int fd;

	if (!strcmp(path, "-"))
		return STDOUT_FILENO;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		error("cannot create %s: %s", path, strerror(errno));
	return fd;
}

/*
 * What a reader on another host needs: this kernel's drop reason names
 * and release, the host and its clocks, as NOTE records after the stream
 * header. Without tracefs
 * the capture has no names (its readers show numbers). 0 or -ENOMEM.
 */
static int record_notes(struct netlat_source *src, size_t *bytes)
{
	static unsigned char buf[64 * NETLAT_REC_MAX_SIZE];
	struct netlat_names *t = netlat_names_new();
	struct utsname u;
	size_t len = 0;
	int r;

	if (!t)
		return -ENOMEM;
	if (!uname(&u))
		len = netlat_note_text(buf, sizeof(buf), NETLAT_NOTE_KERNEL, u.release);
	len += note_host(buf + len, sizeof(buf) - len);
	len += note_clock(buf + len, sizeof(buf) - len);
	if (netlat_names_load_drop_reasons(t) > 0)
		len += netlat_names_notes(t, NETLAT_NOTE_DROP_REASONS, buf + len,
					  sizeof(buf) - len);
	netlat_names_free(t);
	r = netlat_set_tee_insert(src, buf, len);
	*bytes = r ? 0 : len;
	return r;
}

/*
 * A CLOCK note into the capture between two reads (the tee has written
 * every byte read so far): 0, or -1 (printed).
 */
static int record_clock(int fd, const char *output, uint64_t *bytes)
{
	unsigned char buf[NETLAT_REC_MAX_SIZE];
	size_t len = note_clock(buf, sizeof(buf));

	if (len && write(fd, buf, len) != (ssize_t)len) {
		error("cannot write %s: %s", output, strerror(errno));
		return -1;
	}
	*bytes += len;
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "device", required_argument, NULL, 'D' },
		KFILTER_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *output = NULL, *device = NULL;
	const struct netlat_rec_hdr *rec;
	struct kfilters kf = { .fd = -1 };
	double duration = 0;
	struct reader rd;
	int c, r, fd;
	uint64_t bytes, clocks = 0;
	size_t notes;

	while ((c = next_option(argc, argv, "o:d:D:h", opts)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'd':
			if (!parse_seconds(optarg, &duration))
				return usage_error("bad duration '%s'", optarg);
			break;
		case 'D':
			device = optarg;
			break;
		case KFILTER_OPT:
			r = kfilters_add(&kf, optarg);
			if (r >= 0)
				return r;
			break;
		case 'h':
			return command_help();
		default:
			return bad_option(argv);
		}
	}
	if (!output)
		return usage_error("-o FILE is required");
	if (optind < argc)
		return usage_error("too many arguments");
	/* Open the device first: a missing module must not leave a file. */
	if (kfilters_apply(&kf, device))
		return 1;
	if (reader_open(&rd, device, false, duration)) {
		reader_close(&rd);
		kfilters_restore(&kf);
		return 1;
	}
	fd = open_output(output);
	if (fd < 0) {
		reader_close(&rd);
		kfilters_restore(&kf);
		return 1;
	}
	netlat_set_tee(rd.src, fd, output);
	rd.warn_gaps = true;
	catch_stop_signals();

	/* The tee writes each read() as it happens; parsing checks and counts. */
	/* only the module's records are this host's: a file is copied as it is */
	notes = 0;
	if (rd.device && record_notes(rd.src, &notes)) {
		error("out of memory");
		r = -1;
	} else {
		/* the clocks once a second between the records, and at the end */
		rd.tick_ns = rd.device ? monotonic_ns() + 1000000000ull : 0;
		while ((r = reader_next(&rd, &rec)) > 0) {
			if (r != 2)
				continue;
			rd.tick_ns += 1000000000ull;
			if (record_clock(fd, output, &clocks)) {
				r = -1;
				break;
			}
		}
		if (rd.device && netlat_offset(rd.src) && record_clock(fd, output, &clocks))
			r = -1;
	}
	bytes = netlat_offset(rd.src) + netlat_buffered(rd.src);
	if (bytes)
		bytes += notes + clocks;	/* written besides the device's bytes */
	if (fd != STDOUT_FILENO && close(fd) < 0) {
		error("cannot write %s: %s", output, strerror(errno));
		r = -1;
	}
	if (r == 0) {
		fprintf(stderr, "netlat: recorded %llu bytes to %s: ",
			(unsigned long long)bytes, output);
		print_totals(stderr, &rd);
		fputc('\n', stderr);
	}
	reader_close(&rd);
	kfilters_restore(&kf);
	return r < 0;
}

/* ---- report -------------------------------------------------------------- */

struct page_job {
	struct report *rep;
	const struct netlat_seq *seq;
	struct trace *trace;
};

static int page_write(void *arg, FILE *f)
{
	struct page_job *j = arg;

	return html_write(j->rep, j->seq, f);
}

static int trace_job_write(void *arg, FILE *f)
{
	struct page_job *j = arg;

	return trace_write(j->trace, j->rep, j->seq, f);
}

/*
 * Read the capture @path through @flt into @rep (and @tr, if any): 0, or
 * 1 with the reason printed. Nothing is printed of part of a capture.
 */
static int read_capture(const char *path, struct filter *flt, struct report *rep,
			struct trace *tr, struct reader *rd)
{
	const struct netlat_rec_hdr *rec;
	int r;

	if (reader_open(rd, path, false, 0))
		return 1;
	report_set_names(rep, rd->names);
	output_set_drop_names(rd->names);	/* the trace's record arguments */
	catch_stop_signals();
	while ((r = reader_next(rd, &rec)) > 0) {
		if (!filter_match(flt, &rd->stream, rec))
			continue;
		if (report_add(rep, &rd->stream, rec) ||
		    (tr && trace_add(tr, &rd->stream, rec))) {
			error("out of memory");
			return 1;
		}
	}
	/* A report of part of a capture would pass for the whole: none. */
	return r < 0;
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-hist", no_argument, NULL, 'H' },
		{ "html", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *html = NULL;
	struct filter flt = { 0 };
	struct report *rep;
	bool json = false, hist = true;
	struct reader rd;
	int c, r;

	while ((c = next_option(argc, argv, "jh", filter_options(opts))) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'H':
			hist = false;
			break;
		case 'W':
			html = optarg;
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
	if (argc - optind != 1) {
		filter_free(&flt);
		return usage_error("expected one capture FILE");
	}
	rep = report_new(argv[optind]);
	if (!rep) {
		error("out of memory");
		filter_free(&flt);
		return 1;
	}
	report_set_hist(rep, hist);
	r = read_capture(argv[optind], &flt, rep, NULL, &rd);
	if (!r && html) {
		struct page_job job = { .rep = rep, .seq = rd.seq };

		r = write_output(html, page_write, &job);
	}
	if (!r && (json || !html)) {
		if (report_print(rep, rd.seq, json, stdout)) {
			error("out of memory");
			r = 1;
		} else {
			r = finish_stdout();
		}
	}
	report_free(rep);
	reader_close(&rd);
	filter_free(&flt);
	return r;
}

/* ---- export -------------------------------------------------------------- */

static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "chrome-trace", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct page_job job = { 0 };
	const char *out = NULL;
	struct filter flt = { 0 };
	struct reader rd;
	int c, r;

	while ((c = next_option(argc, argv, "c:h", filter_options(opts))) != -1) {
		switch (c) {
		case 'c':
			out = optarg;
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
	if (!out || argc - optind != 1) {
		filter_free(&flt);
		return usage_error(out ? "expected one capture FILE"
				       : "expected --chrome-trace FILE and a capture FILE");
	}
	job.rep = report_new(argv[optind]);
	job.trace = trace_new();
	if (!job.rep || !job.trace) {
		error("out of memory");
		r = 1;
	} else {
		r = read_capture(argv[optind], &flt, job.rep, job.trace, &rd);
		job.seq = rd.seq;
		if (!r)
			r = write_output(out, trace_job_write, &job);
		reader_close(&rd);
	}
	trace_free(job.trace);
	report_free(job.rep);
	filter_free(&flt);
	return r;
}

/* ---- stat ---------------------------------------------------------------- */

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

static int cmd_stat(int argc, char **argv)
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

/* ---- device commands ---------------------------------------------------- */

static void add_cpu_stats(struct netlat_cpu_stats *total, const struct netlat_cpu_stats *st)
{
	total->written += st->written;
	total->dropped += st->dropped;
	total->prod += st->prod;
	total->cons += st->cons;
	total->resyncs += st->resyncs;
	total->overwritten += st->overwritten;
	total->filtered += st->filtered;
}

/* The sent packets whose stages the packet level joins. */
static const char *sample_text(const struct netlat_info *info)
{
	static char buf[64];

	if (info->sample <= 1)
		return "every packet joined";
	snprintf(buf, sizeof(buf), "TCP packets sampled every %u KiB",
		 info->sample * NETLAT_SAMPLE_UNIT / 1024);
	return buf;
}

static void print_info(const char *path, const struct netlat_info *info)
{
	printf("device        %s\n", path);
	printf("abi version   %u\n", info->abi_version);
	printf("tracing       %s%s\n", info->state & NETLAT_STATE_RUNNING ? "running" : "stopped",
	       info->state & NETLAT_STATE_CONSUMER ? ", a reader is consuming" : "");
	printf("cpus          %u\n", info->nr_cpus);
	printf("ring bytes    %llu per cpu\n", (unsigned long long)info->ring_bytes);
	printf("ring mode     %s\n", ring_mode_name(info->mode));
	printf("level         %s", info->level == NETLAT_LEVEL_PACKETS ? "packets" : "events");
	if (info->level == NETLAT_LEVEL_PACKETS)
		printf(" (records for packets from %llu ns; %s; table %llu bytes, %u sockets, %u packets in flight)",
		       (unsigned long long)info->slow_ns, sample_text(info),
		       (unsigned long long)info->pkt_mem_bytes, info->pkt_flows,
		       info->pkt_pkts);
	putchar('\n');
	if (info->rx_flows)
		printf("rx table      %llu bytes (%u sockets, %u packets queued; while rx is on)\n",
		       (unsigned long long)info->rx_mem_bytes, info->rx_flows,
		       info->rx_pkts);
	if (info->table_bytes)
		printf("table budget  %llu bytes\n", (unsigned long long)info->table_bytes);
	printf("memory        %llu bytes\n", (unsigned long long)info->mem_bytes);
	printf("watermark     %u bytes\n", info->watermark);
	printf("flush         %u ms%s\n", info->flush_ms, info->flush_ms ? "" : " (off)");
	printf("page size     %u\n", info->page_size);
	printf("max record    %u bytes\n", info->max_record);
	printf("probe groups  0x%llx available, 0x%llx enabled\n",
	       (unsigned long long)info->probe_groups,
	       (unsigned long long)info->probe_groups_enabled);
}

/* pending = prod - cons: bytes waiting in the ring. */
static void print_cpu_stats_row(const char *label, const struct netlat_cpu_stats *st)
{
	printf("%-6s %12llu %12llu %12llu %12llu %12llu %8llu %12llu %12llu\n", label,
	       (unsigned long long)st->written, (unsigned long long)st->dropped,
	       (unsigned long long)st->prod, (unsigned long long)st->cons,
	       (unsigned long long)(st->prod - st->cons),
	       (unsigned long long)st->resyncs, (unsigned long long)st->overwritten,
	       (unsigned long long)st->filtered);
}

static int print_cpu_table(int fd, const char *path, unsigned int nr_cpus)
{
	struct netlat_cpu_stats st, total = { 0 };
	unsigned int cpu;
	char label[16];
	int r;

	printf("\n%-6s %12s %12s %12s %12s %12s %8s %12s %12s\n", "cpu", "written",
	       "dropped", "prod", "cons", "pending", "resyncs", "overwritten", "filtered");
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		r = netlat_get_cpu_stats(fd, cpu, &st);
		if (r == -EINVAL)	/* not a possible CPU: it has no ring */
			continue;
		if (r < 0)
			return ioctl_failed(path, "GET_CPU_STATS", -r);
		snprintf(label, sizeof(label), "%u", cpu);
		print_cpu_stats_row(label, &st);
		add_cpu_stats(&total, &st);
	}
	print_cpu_stats_row("total", &total);
	return 0;
}

/* The histograms by key, if the kernel keeps them (a module without: no). */
static void print_keys_info(int fd)
{
	static const char *const fields[] = { "port", "netns", "cgroup" };
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_hist h;
	unsigned int i;

	if (pktstat_read_key(fd, 0, &h, st) || !h.key_by)
		return;
	printf("keys          by");
	for (i = 0; i < 3; i++)
		if (h.key_by & (1U << i))
			printf("%s%s", h.key_by & ((1U << i) - 1) ? "," : " ", fields[i]);
	printf(", %u at most, %llu bytes; %llu evicted, %llu sockets folded\n",
	       h.max_keys, (unsigned long long)h.keys_mem_bytes,
	       (unsigned long long)h.keys_evicted, (unsigned long long)h.keys_folded);
}

static int show_info(int fd, const char *path)
{
	struct netlat_info info;
	int r;

	r = netlat_get_info(fd, &info);
	if (r < 0)
		return ioctl_failed(path, "GET_INFO", -r);
	if (info.abi_version != NETLAT_ABI_VERSION) {
		error("%s: unsupported ABI version %u (this tool reads version %d)",
		      path, info.abi_version, NETLAT_ABI_VERSION);
		return 1;
	}
	print_info(path, &info);
	print_keys_info(fd);
	return print_cpu_table(fd, path, info.nr_cpus) || finish_stdout();
}

static int cmd_info(int argc, char **argv)
{
	const char *path = NETLAT_DEVICE_PATH;
	int fd, status;

	status = parse_device_args(argc, argv, &path);
	if (status >= 0)
		return status;
	fd = open_device(path);
	if (fd < 0)
		return 1;
	status = show_info(fd, path);
	close(fd);
	return status;
}

static int run_ioctl(const char *path, int (*op)(int fd), const char *what)
{
	int fd = open_device(path), r;

	if (fd < 0)
		return 1;
	r = op(fd);
	close(fd);
	return r < 0 ? ioctl_failed(path, what, -r) : 0;
}

static int control_command(int argc, char **argv, int (*op)(int fd), const char *what)
{
	const char *path = NETLAT_DEVICE_PATH;
	int status = parse_device_args(argc, argv, &path);

	return status >= 0 ? status : run_ioctl(path, op, what);
}

static int cmd_start(int argc, char **argv)
{
	return control_command(argc, argv, netlat_start, "START");
}

static int cmd_stop(int argc, char **argv)
{
	return control_command(argc, argv, netlat_stop, "STOP");
}

static int cmd_reset(int argc, char **argv)
{
	return control_command(argc, argv, netlat_reset, "RESET");
}

/* The settings of "netlat config", for run_ioctl()'s plain callback. */
static struct netlat_config new_config;

static int apply_config(int fd)
{
	return netlat_set_config(fd, &new_config);
}

static int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ring-bytes", required_argument, NULL, 'r' },
		{ "watermark", required_argument, NULL, 'w' },
		{ "flush-ms", required_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },
		{ "level", required_argument, NULL, 'l' },
		{ "slow", required_argument, NULL, 's' },
		{ "sample", required_argument, NULL, 'S' },
		{ "table-bytes", required_argument, NULL, 'T' },
		{ "by", required_argument, NULL, 'b' },
		{ "keys", required_argument, NULL, 'k' },
		DEVICE_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *path = NETLAT_DEVICE_PATH;
	struct netlat_config *cfg = &new_config;
	uint64_t v;
	int c;

	while ((c = next_option(argc, argv, "r:w:f:m:l:s:S:T:b:k:D:h", opts)) != -1) {
		switch (c) {
		case 'r':
			if (!parse_size(optarg, &v))
				return usage_error("bad ring size '%s'", optarg);
			cfg->ring_bytes = v;
			cfg->flags |= NETLAT_CONFIG_RING_BYTES;
			break;
		case 'w':
			if (!parse_size(optarg, &v) || v > UINT32_MAX)
				return usage_error("bad watermark '%s'", optarg);
			cfg->watermark = (uint32_t)v;
			cfg->flags |= NETLAT_CONFIG_WATERMARK;
			break;
		case 'f':
			if (!parse_u64(optarg, &v) || v > NETLAT_FLUSH_MS_MAX)
				return usage_error("bad flush period '%s'", optarg);
			cfg->flush_ms = (uint32_t)v;
			cfg->flags |= NETLAT_CONFIG_FLUSH_MS;
			break;
		case 'm':
			if (!strcmp(optarg, "stream"))
				cfg->mode = NETLAT_MODE_STREAM;
			else if (!strcmp(optarg, "overwrite"))
				cfg->mode = NETLAT_MODE_OVERWRITE;
			else
				return usage_error("bad mode '%s': stream or overwrite", optarg);
			cfg->flags |= NETLAT_CONFIG_MODE;
			break;
		case 'l':
			if (!strcmp(optarg, "events"))
				cfg->level = NETLAT_LEVEL_EVENTS;
			else if (!strcmp(optarg, "packets"))
				cfg->level = NETLAT_LEVEL_PACKETS;
			else
				return usage_error("bad level '%s': events or packets", optarg);
			cfg->flags |= NETLAT_CONFIG_LEVEL;
			break;
		case 's':
			if (netlat_parse_duration(optarg, &v))
				return usage_error("bad duration '%s': a number and ns, us, ms or s",
						   optarg);
			cfg->slow_ns = v;
			cfg->flags |= NETLAT_CONFIG_SLOW_NS;
			break;
		case 'S':
			if (!parse_u64(optarg, &v) || v > NETLAT_SAMPLE_MAX ||
			    (v & (v - 1)))
				return usage_error("bad --sample '%s': 0, 1 or a power of two up to %u",
						   optarg, NETLAT_SAMPLE_MAX);
			cfg->sample = (uint32_t)v;
			cfg->flags |= NETLAT_CONFIG_SAMPLE;
			break;
		case 'T':
			if (!parse_size(optarg, &v) || v < NETLAT_TABLE_BYTES_MIN ||
			    v > NETLAT_TABLE_BYTES_MAX)
				return usage_error("bad table budget '%s': 64K to 1G", optarg);
			cfg->table_bytes = v;
			cfg->flags |= NETLAT_CONFIG_TABLE_BYTES;
			break;
		case 'b':
			if (pktstat_parse_by(optarg, &cfg->key_by))
				return usage_error("bad --by '%s': port, netns, cgroup (comma-separated) or none",
						   optarg);
			cfg->flags |= NETLAT_CONFIG_KEYS;
			break;
		case 'k':
			if (!parse_u64(optarg, &v) || !v || v > NETLAT_MAX_KEYS_MAX)
				return usage_error("bad --keys '%s': 1 to %u", optarg,
						   NETLAT_MAX_KEYS_MAX);
			cfg->max_keys = (uint32_t)v;
			break;
		case 'D':
			path = optarg;
			break;
		case 'h':
			return command_help();
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return usage_error("too many arguments");
	if (cfg->max_keys && !(cfg->flags & NETLAT_CONFIG_KEYS))
		return usage_error("--keys goes with --by");
	if (!cfg->flags)
		return usage_error("nothing to set");
	return run_ioctl(path, apply_config, "SET_CONFIG");
}

static void print_probe_mask(const char *label, uint64_t m)
{
	unsigned int i;
	bool any = false;

	printf("%-10s", label);
	for (i = 0; i < 64; i++) {
		const char *n;

		if (!(m & (1ULL << i)))
			continue;
		n = netlat_probe_name(1ULL << i);
		if (n)
			printf("%s%s", any ? "," : " ", n);
		else
			printf("%sbit%u", any ? "," : " ", i);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
}

/* Which groups' probes missed hits (nmissed by group). */
static void print_group_missed(const struct netlat_probes *pr)
{
	unsigned int i;
	bool any = false;

	printf("%-10s", "missed in");
	for (i = 0; i < 64; i++) {
		const char *n = netlat_probe_name(1ULL << i);

		if (!pr->group_missed[i])
			continue;
		if (n)
			printf("%s%s=%llu", any ? "," : " ", n,
			       (unsigned long long)pr->group_missed[i]);
		else
			printf("%sbit%u=%llu", any ? "," : " ", i,
			       (unsigned long long)pr->group_missed[i]);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
}

static int cmd_probes(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "enable", required_argument, NULL, 'e' },
		{ "hooks", no_argument, NULL, 'H' },
		DEVICE_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *path = NETLAT_DEVICE_PATH;
	struct netlat_probes pr;
	uint64_t enable = 0;
	bool set = false, all = false, hooks = false;
	int c, fd, r;

	while ((c = next_option(argc, argv, "e:HD:h", opts)) != -1) {
		switch (c) {
		case 'H':
			hooks = true;
			break;
		case 'e':
			if (netlat_parse_probes(optarg, &enable))
				return usage_error("bad probe groups '%s'", optarg);
			all = netlat_probes_spec_all(optarg);
			set = true;
			break;
		default:
			r = device_option(c, argv, &path);
			if (r >= 0)
				return r;
		}
	}
	r = device_args_done(argc, path, &fd);
	if (r >= 0)
		return r;
	/* "all": what this kernel has, and the groups waiting for a module */
	r = all ? netlat_probes(fd, false, 0, &pr) : 0;
	if (!r && all)
		enable &= pr.available | pr.deferred;
	if (!r)
		r = netlat_probes(fd, set, enable, &pr);
	if (r < 0) {
		close(fd);
		return ioctl_failed(path, "PROBES", -r);
	}
	if (hooks) {
		r = hooks_print(fd, path);
		close(fd);
		return r;
	}
	close(fd);
	print_probe_mask("available", pr.available);
	print_probe_mask("partial", pr.partial);
	print_probe_mask("enabled", pr.enabled);
	print_probe_mask("deferred", pr.deferred);
	print_probe_mask("waiting", pr.enabled & pr.deferred);
	printf("%-10s %llu\n", "nmissed", (unsigned long long)pr.nmissed);
	print_group_missed(&pr);
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

static const struct command commands[] = {
	{ "tail", cmd_tail,
	  "[-n COUNT] [--duration SECS] [--json] [--ordered] [--filter SPEC]... [FILTERS] [FILE]",
	  "Print one line per record of FILE (default " NETLAT_DEVICE_PATH ", - for\n"
	  "stdin) until it ends, COUNT records, SECS seconds or SIGINT/SIGTERM; then\n"
	  "print the records, losses and unexplained gaps to stderr.\n"
	  "  -n, --count COUNT    stop after COUNT records (stream headers, notes excluded)\n"
	  "  -d, --duration SECS  stop after SECS seconds of running time\n"
	  "  -j, --json           one JSON object per line\n"
	  "  -O, --ordered        merge CPUs in timestamp order (holds records up to 1 s)\n"
	  KFILTER_HELP
	  FILTER_HELP },
	{ "record", cmd_record, "-o FILE [--duration SECS] [--device PATH] [--filter SPEC]...",
	  "Copy the raw record stream to FILE (- for stdout) until SECS seconds or\n"
	  "SIGINT/SIGTERM. The file is a capture, like `cat " NETLAT_DEVICE_PATH "`.\n"
	  "  -o, --output FILE    capture file to write\n"
	  "  -d, --duration SECS  stop after SECS seconds\n"
	  "  -D, --device PATH    read PATH instead of " NETLAT_DEVICE_PATH "\n"
	  KFILTER_HELP },
	{ "report", cmd_report, "[--json] [--no-hist] [--html PAGE] [FILTERS] FILE",
	  "Summarise a capture: records per CPU and type, time span, losses,\n"
	  "unexplained gaps, markers, and inter-record gap percentiles per CPU;\n"
	  "with TCP records, per-skb stage latencies, where the time went per\n"
	  "direction, and the top flows.\n"
	  "  -j, --json           one JSON object\n"
	  "      --no-hist        no log2 histograms of the stage latencies\n"
	  "      --html PAGE      write the report as one self-contained HTML page\n"
	  "                       (- for stdout) instead of the text summary\n"
	  FILTER_HELP },
	{ "export", cmd_export, "--chrome-trace TRACE [FILTERS] FILE",
	  "Convert a capture to a timeline: Chrome trace-event JSON that\n"
	  "ui.perfetto.dev and chrome://tracing load. A process per TCP flow with\n"
	  "each packet's stages as slices, one per CPU with the driver and\n"
	  "virtqueue events, markers and triggers as instant events.\n"
	  "  -c, --chrome-trace TRACE  the trace file to write (- for stdout)\n"
	  FILTER_HELP },
	{ "join", cmd_join,
	  "[--json [--no-packets]] [--window DUR] [--min-owd DUR] [--asym DUR] [--max-drift PPM] [--offset-only] [--a-addr ADDR --b-addr ADDR] [--chrome-trace TRACE] A B",
	  "Join two hosts' captures packet by packet: the packets A sent with those\n"
	  "B received, and the reverse (records of the packet level with the\n"
	  "receive group on, on both hosts). Prints B's clock against A's,\n"
	  "bounded from the pairs alone (no packet arrives before it left), then\n"
	  "per direction the sender's stages, the wire with its bound, the\n"
	  "receiver's stages, and what was not joined and why.\n"
	  "  -j, --json           one JSON object, with every pair (--no-packets: none)\n"
	  "  -w, --window DUR     the clock's windows (default 10s)\n"
	  "  -m, --min-owd DUR    each one-way delay is at least DUR\n"
	  "  -a, --asym DUR       the delays' floors differ by DUR (A>B minus B>A)\n"
	  "  -M, --max-drift PPM  the largest drift considered (default 2000)\n"
	  "      --offset-only    no drift: one offset per window\n"
	  "      --a-addr ADDR    A's records are those of local address ADDR\n"
	  "      --b-addr ADDR    B's likewise (both hosts in one capture)\n"
	  "      --b-offset DUR   add DUR to B's times (a known clock difference)\n"
	  "      --b-ppm PPM      and scale them by PPM\n"
	  "  -c, --chrome-trace TRACE  also write both hosts' packets on A's clock as a\n"
	  "                       Chrome trace, the wire as arrows (-: only the trace,\n"
	  "                       on stdout)\n" },
	{ "stat", cmd_stat,
	  "[--duration SECS] [--interval SECS] [--json] [--hist [--by FIELDS] | --flows] [--prometheus FILE] [--device PATH] [FILTERS]",
	  "Read the device live and print the tables of `netlat report` for the\n"
	  "records that arrived: once at the end (SECS, or SIGINT/SIGTERM), or for\n"
	  "each interval. With --hist, print the packet level's kernel histograms\n"
	  "and counters instead (`netlat config --level packets`): no records are\n"
	  "read, so it runs beside any reader; once, or every interval. With\n"
	  "--flows, print the kernel's per-socket counters of that level (bytes,\n"
	  "segments, retransmitted segments by kind, failed retransmits by\n"
	  "errno), the live sockets and the last 64 closed, the same way. With\n"
	  "--prometheus, write them as Prometheus metrics (those of `netlat\n"
	  "exporter`) to FILE for node_exporter's textfile collector instead.\n"
	  "  -H, --hist           the kernel's per-stage histograms and counters\n"
	  "  -b, --by FIELDS      with --hist, the kernel's histograms by key\n"
	  "                       (`netlat config --by`), grouped by FIELDS: port,\n"
	  "                       netns, cgroup, comma-separated\n"
	  "  -L, --flows          the kernel's per-socket counters\n"
	  "  -P, --prometheus FILE  write the metrics to FILE.tmp, then rename it\n"
	  "  -d, --duration SECS  stop after SECS seconds\n"
	  "  -i, --interval SECS  a report per SECS seconds of arrivals\n"
	  "  -j, --json           one JSON object per report, one per line\n"
	  "  -D, --device PATH    read PATH instead of " NETLAT_DEVICE_PATH "\n"
	  FILTER_HELP },
	{ "exporter", exporter_main, EXPORTER_SYNOPSIS, EXPORTER_HELP },
	{ "info", cmd_info, "[--device PATH]",
	  "Show the device state and the per-CPU ring counters.\n" },
	{ "start", cmd_start, "[--device PATH]", "Start tracing.\n" },
	{ "stop", cmd_stop, "[--device PATH]", "Stop tracing.\n" },
	{ "reset", cmd_reset, "[--device PATH]",
	  "Empty the rings, restart sequences and zero the counters (tracing stopped).\n" },
	{ "config", cmd_config,
	  "[--ring-bytes N[K|M|G]] [--watermark N] [--flush-ms MS] [--mode MODE] [--level LEVEL] [--slow DURATION] [--sample N] [--table-bytes N[K|M|G]] [--by FIELDS [--keys N]] [--device PATH]",
	  "Change the ring size (stopped and unmapped only), the reader wake-up\n"
	  "watermark in bytes, the flush period (0 disables), or the ring mode\n"
	  "(stopped and unmapped only): stream (a full ring drops the newest\n"
	  "record, for live readers) or overwrite (it overwrites the oldest: a\n"
	  "flight recorder, read with `netlat snapshot`).\n"
	  "  --level events       a record per probe hit: the debugging view\n"
	  "  --level packets      the kernel follows each sent packet: per-stage\n"
	  "                       histograms (`netlat stat --hist`) and one TCP_PKT\n"
	  "                       record per packet; needs the xmit and ack groups\n"
	  "  --slow DURATION      packets level: records only for packets whose\n"
	  "                       transmit-to-ACK time reaches DURATION (e.g. 10ms)\n"
	  "  --sample N           packets level, TCP: join the stages of\n"
	  "                       the packets that hold a byte at a multiple of\n"
	  "                       N KiB of sequence space (both ends of a connection\n"
	  "                       pick the same bytes), and of every packet of a\n"
	  "                       socket for a second after a slow one (--slow);\n"
	  "                       the others are only counted. N a power of two,\n"
	  "                       0 or 1: every packet (the default)\n"
	  "  --table-bytes N      the packet tables' memory (default 32M, 64K to 1G):\n"
	  "                       sockets and packets in flight they can follow;\n"
	  "                       a change empties them\n"
	  "  --by FIELDS          packets level: histograms per key as well (port,\n"
	  "                       netns, cgroup, comma-separated; none: the host's\n"
	  "                       only), read with `netlat stat --hist --by`; a\n"
	  "                       change zeroes the histograms\n"
	  "  --keys N             keys kept at once (default 32, at most 256); the\n"
	  "                       packets of the others are counted as other\n" },
	{ "probes", cmd_probes, "[--enable GROUPS] [--hooks] [--device PATH]",
	  "Show the probe groups (available, partial, enabled, missed kprobe hits);\n"
	  "with --enable, enable exactly GROUPS: a comma-separated list of\n"
	  "sendmsg,push,skb,xmit,retrans,ack,dev,rx,rx_sched,virtio_tx,virtio_rx,\n"
	  "or all, none, or a number.\n"
	  "  -H, --hooks          list each hook instead: its group, the mechanism\n"
	  "                       this kernel gave it (tracepoint, ftrace,\n"
	  "                       kprobe-ftrace, kprobe, fprobe, wrapped, kretprobe;\n"
	  "                       absent, deferred), its levels, armed or not\n" },
	{ "snapshot", cmd_snapshot, "-o FILE [--frozen] [--keep] [--device PATH]",
	  "Write a snapshot of every CPU's ring to FILE: the frozen one if a\n"
	  "trigger froze one, else a new one taken now; then release it.\n"
	  "`netlat report FILE` reads it.\n"
	  "  -o, --output FILE    snapshot file (written as FILE.tmp, then renamed)\n"
	  "      --frozen         only a frozen snapshot: fail if there is none\n"
	  "      --keep           do not release it (another reader may want it)\n"
	  "  -D, --device PATH    use PATH instead of " NETLAT_DEVICE_PATH "\n" },
	{ "flight", cmd_flight,
	  "-d DIR --trigger SPEC... [--pre MS] [--post MS] [--max-bytes N] [--count N] [--filter SPEC]...",
	  "Run as a flight recorder: put the rings in overwrite mode, start tracing,\n"
	  "arm the triggers, and write each snapshot they freeze to DIR as\n"
	  "netlat-YYYYmmdd-HHMMSS.mmm-ID.snap (UTC), deleting the oldest to stay\n"
	  "under the size limit. SIGINT/SIGTERM (or --count) disarm the triggers,\n"
	  "release the snapshot and put back the ring mode and filters.\n"
	  "  -d, --dir DIR        snapshot directory (created if missing)\n"
	  "  -t, --trigger SPEC   retrans-fail, retrans=KIND[,KIND] (other, rto, fast,\n"
	  "                       tlp, syn, synack, all), latency=DURATION (transmit to\n"
	  "                       ACK, e.g. 200ms), rx-wait=DURATION (a received\n"
	  "                       packet's wait for its reader: queue>user; needs\n"
	  "                       the rx group), marker=TAG; repeatable\n"
	  "      --pre MS         keep only MS before the trigger (default: all)\n"
	  "      --post MS        keep recording MS after the trigger (default 0)\n"
	  "  -m, --max-bytes N    snapshot files total at most N (default 1G)\n"
	  "  -n, --count N        exit after N snapshots\n"
	  "  -D, --device PATH    use PATH instead of " NETLAT_DEVICE_PATH "\n"
	  KFILTER_HELP },
	{ "filters", cmd_filters, "[--clear | --filter SPEC...] [--device PATH]",
	  "Show the in-kernel filter rules in force and the records they kept out;\n"
	  "with --clear remove them, with --filter replace them (they stay set).\n"
	  "      --clear          remove every rule\n"
	  "      --filter SPEC    a rule (repeatable, up to 16)\n"
	  "  -D, --device PATH    use PATH instead of " NETLAT_DEVICE_PATH "\n"
	  FILTER_SPEC_HELP },
	{ "triggers", cmd_triggers, "[--disarm] [--device PATH]",
	  "Show the armed triggers, their windows and counts, and the snapshot state;\n"
	  "with --disarm disarm them first.\n"
	  "      --disarm         disarm every trigger\n"
	  "  -D, --device PATH    use PATH instead of " NETLAT_DEVICE_PATH "\n" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_usage(FILE *f)
{
	size_t i;

	fputs("usage: netlat COMMAND [OPTIONS]\n\ncommands:\n", f);
	for (i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].synopsis);
	fputs("\n`netlat COMMAND --help` describes a command.\n", f);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return 0;
	}
	for (i = 0; i < NR_COMMANDS; i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			current_command = &commands[i];
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	error("unknown command '%s'", argv[1]);
	print_usage(stderr);
	return EXIT_USAGE;
}
