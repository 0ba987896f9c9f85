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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "exporter.h"
#include "cli.h"
#include "flight.h"
#include "join.h"
#include "notes.h"
#include "output.h"
#include "report.h"
#include "html.h"
#include "trace.h"
#include "device.h"

#include "reader.h"
#include "stat.h"

/* ---- tail ---------------------------------------------------------------- */

/* Print the records of @path that pass the filters, until tail's options say. */
static int tail_records(struct read_args *a, struct reader *rd)
{
	const struct netlat_rec_hdr *rec;
	uint64_t printed = 0;
	int r;

	for (;;) {
		/* Flush before a read() may block, so live output is not stuck. */
		if (netlat_is_live(rd->src) && !netlat_buffered(rd->src))
			fflush(stdout);
		r = reader_next(rd, &rec);
		if (r <= 0)
			break;
		if (!filter_match(&a->flt, &rd->stream, rec))
			continue;
		print_record(stdout, &rd->stream, rec, a->json);
		if (rec->type != NETLAT_REC_STREAM && rec->type != NETLAT_REC_NOTE &&
		    ++printed == a->count)
			break;
	}
	return r;
}

static int tail_run(struct read_args *a, int nargs, char **args)
{
	struct reader rd;
	int r, status;

	if (nargs > 1)
		return usage_error("too many arguments");
	if (kfilters_apply(&a->kf, args[0]))
		return 1;
	if (reader_open(&rd, args[0], a->ordered, a->duration)) {
		reader_close(&rd);
		kfilters_restore(&a->kf);
		return 1;
	}
	rd.warn_gaps = true;
	output_set_drop_names(rd.names);
	catch_stop_signals();
	r = tail_records(a, &rd);
	status = finish_stdout() || r < 0;
	/* After an error its message is the one line to read. */
	if (!status) {
		fputs("netlat: ", stderr);
		print_totals(stderr, &rd);
		if (filter_active(&a->flt))
			fprintf(stderr, ", %llu matched", (unsigned long long)a->flt.matched);
		fputc('\n', stderr);
	}
	reader_close(&rd);
	kfilters_restore(&a->kf);
	return status;
}

static int cmd_tail(int argc, char **argv)
{
	return read_command(argc, argv, "count duration json ordered filter", tail_run);
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
		OPTION_ARG("output", 'o'),
		OPTION_ARG("duration", 'd'),
		OPTION_ARG("device", 'D'),
		KFILTER_OPTION,
		HELP_OPTION,
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
	const struct join_page *peer;	/* report --peer --html: the join's section */
};

static int page_write(void *arg, FILE *f)
{
	struct page_job *j = arg;

	/* the page and the trace draw the report's numbers: computed first */
	if (report_compute(j->rep, j->seq))
		return -ENOMEM;
	return html_write(j->rep, j->peer, f);
}

static int trace_job_write(void *arg, FILE *f)
{
	struct page_job *j = arg;

	if (report_compute(j->rep, j->seq))
		return -ENOMEM;
	return trace_write(j->trace, j->rep, f);
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

/*
 * The report and, after it, the join of the capture (A) with its peer's
 * (B): text one after the other, JSON one object {"report": ..., "join":
 * ...}. The join reads the whole of both captures: FILTERS select what
 * the report counts only.
 */
static int report_print_peer(struct report *rep, struct netlat_seq *seq, bool json,
			     const char *path, const char *peer)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int r;

	if (!json) {
		if (report_print(rep, seq, false, stdout)) {
			error("out of memory");
			return 1;
		}
		printf("\nJoined with the peer's capture (netlat join %s %s):\n", path, peer);
		r = join_peer_print(path, peer, false);
		return r ? r : finish_stdout();
	}
	/* the report's object, without its newline, inside the pair */
	mem = open_memstream(&buf, &len);
	if (!mem) {
		error("out of memory");
		return 1;
	}
	r = report_print(rep, seq, true, mem);
	if (fclose(mem) || r) {
		free(buf);
		error("out of memory");
		return 1;
	}
	while (len && buf[len - 1] == '\n')
		len--;
	printf("{\"report\":%.*s,\"join\":", (int)len, buf);
	free(buf);
	r = join_peer_print(path, peer, true);
	if (r)
		return r;
	printf("}\n");
	return finish_stdout();
}

static int report_run(struct read_args *a, int nargs, char **args)
{
	struct report *rep;
	struct reader rd;
	int r;

	if (nargs != 1)
		return usage_error("expected one capture FILE");
	rep = report_new(args[0]);
	if (!rep) {
		error("out of memory");
		return 1;
	}
	report_set_hist(rep, !a->no_hist);
	r = read_capture(args[0], &a->flt, rep, NULL, &rd);
	if (!r && a->html) {
		struct join_page *jp = a->peer ?
				       join_page_new(args[0], a->peer) : NULL;
		struct page_job job = { .rep = rep, .seq = rd.seq, .peer = jp };

		r = a->peer && !jp ? 1 : write_output(a->html, page_write, &job);
		join_page_free(jp);
	}
	if (!r && a->peer && (a->json || !a->html))
		r = report_print_peer(rep, rd.seq, a->json, args[0], a->peer);
	else if (!r && (a->json || !a->html)) {
		if (report_print(rep, rd.seq, a->json, stdout)) {
			error("out of memory");
			r = 1;
		} else {
			r = finish_stdout();
		}
	}
	report_free(rep);
	reader_close(&rd);
	return r;
}

static int cmd_report(int argc, char **argv)
{
	return read_command(argc, argv, "json no-hist html peer", report_run);
}

/* ---- export -------------------------------------------------------------- */

static int export_run(struct read_args *a, int nargs, char **args)
{
	struct page_job job = { 0 };
	struct reader rd;
	int r;

	if (!a->chrome_trace || nargs != 1)
		return usage_error(a->chrome_trace ? "expected one capture FILE"
				   : "expected --chrome-trace FILE and a capture FILE");
	job.rep = report_new(args[0]);
	job.trace = trace_new();
	if (!job.rep || !job.trace) {
		error("out of memory");
		r = 1;
	} else {
		r = read_capture(args[0], &a->flt, job.rep, job.trace, &rd);
		job.seq = rd.seq;
		if (!r)
			r = write_output(a->chrome_trace, trace_job_write, &job);
		reader_close(&rd);
	}
	trace_free(job.trace);
	report_free(job.rep);
	return r;
}

static int cmd_export(int argc, char **argv)
{
	return read_command(argc, argv, "chrome-trace", export_run);
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
	{ "report", cmd_report, "[--json] [--no-hist] [--html PAGE] [--peer PEER] [FILTERS] FILE",
	  "Summarise a capture: records per CPU and type, time span, losses,\n"
	  "unexplained gaps, markers, and inter-record gap percentiles per CPU;\n"
	  "with TCP records, per-skb stage latencies, where the time went per\n"
	  "direction, and the top flows.\n"
	  "  -j, --json           one JSON object\n"
	  "      --no-hist        no log2 histograms of the stage latencies\n"
	  "      --html PAGE      write the report as one self-contained HTML page\n"
	  "                       (- for stdout) instead of the text summary\n"
	  "      --peer PEER      then join FILE (this host, A) with PEER, the other\n"
	  "                       end's capture (B), as `netlat join FILE PEER` does;\n"
	  "                       with --json one object {\"report\":...,\"join\":...};\n"
	  "                       with --html a section of the page\n"
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
	  "[--ring-bytes N[K|M|G]] [--watermark N] [--flush-ms MS] [--mode MODE] [--level LEVEL] [--slow DURATION] [--sample N] [--acks on|off] [--table-bytes N[K|M|G]] [--by FIELDS [--keys N]] [--device PATH]",
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
	  "  --acks on|off        packets level: a TCP_ACK_OUT record of each pure\n"
	  "                       ACK sent (with the dev group), what `netlat join`\n"
	  "                       needs of a host that sends no data back (off by\n"
	  "                       default: about a record per two segments received)\n"
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
