// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a capture or the device for the commands that read records
 * (tail, report, export, stat): stop requests, deadlines, ordering by
 * time, loss accounting, and their options (FILTERS among them).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "pktstat.h"
#include "reader.h"

/* Unexplained gaps printed one by one before they are only counted. */
#define MAX_GAP_WARNINGS 10

/* getopt_long() values of the options without a short form: past a char's. */
enum { OPT_LONG_ONLY = 0x100, OPT_NO_HIST = OPT_LONG_ONLY, OPT_HTML, OPT_PEER };

/* Every option of the commands that read records; each names its own. */
static const struct option read_options[] = {
	OPTION_ARG("count", 'n'),
	OPTION_ARG("duration", 'd'),
	OPTION_ARG("interval", 'i'),
	OPTION_FLAG("json", 'j'),
	OPTION_FLAG("ordered", 'O'),
	OPTION_FLAG("hist", 'H'),
	OPTION_FLAG("no-hist", OPT_NO_HIST),
	OPTION_ARG("html", OPT_HTML),
	OPTION_ARG("peer", OPT_PEER),
	OPTION_FLAG("flows", 'L'),
	OPTION_ARG("by", 'b'),
	OPTION_ARG("chrome-trace", 'c'),
	OPTION_ARG("prometheus", 'P'),
	DEVICE_OPTION,
	KFILTER_OPTION,
	HELP_OPTION,
};

#define NR_READ_OPTIONS (sizeof(read_options) / sizeof(read_options[0]))

/* Is @name one of the space-separated words of @names? */
static bool named(const char *names, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = strstr(names, name); p; p = strstr(p + len, name))
		if ((p == names || p[-1] == ' ') && (!p[len] || p[len] == ' '))
			return true;
	return false;
}

/*
 * The long options @names, --help and FILTERS, and into @shortopts the
 * short forms: static storage, until the next call.
 */
static const struct option *pick_options(const char *names, char *shortopts)
{
	static struct option opts[NR_READ_OPTIONS + 1];
	const struct option *o;
	size_t n = 0;

	for (o = read_options; o < read_options + NR_READ_OPTIONS; o++) {
		if (o->val != 'h' && !named(names, o->name))
			continue;
		opts[n++] = *o;
		if (o->val >= OPT_LONG_ONLY)
			continue;
		*shortopts++ = (char)o->val;
		if (o->has_arg)
			*shortopts++ = ':';
	}
	*shortopts = '\0';
	opts[n] = (struct option){ 0 };
	return filter_options(opts);
}

/* The flag that the option @c sets, if it only sets one. */
static bool *flag_of(struct read_args *a, int c)
{
	switch (c) {
	case 'j': return &a->json;
	case 'O': return &a->ordered;
	case 'H': return &a->hist;
	case OPT_NO_HIST: return &a->no_hist;
	case 'L': return &a->flows;
	}
	return NULL;
}

/* Where the option @c keeps its argument, if it only keeps it. */
static const char **text_of(struct read_args *a, int c)
{
	switch (c) {
	case OPT_HTML: return &a->html;
	case OPT_PEER: return &a->peer;
	case 'c': return &a->chrome_trace;
	case 'P': return &a->prometheus;
	}
	return NULL;
}

/* Take option @c of getopt_long(): -1 taken, else the exit status. */
static int take_option(struct read_args *a, int c, char **argv)
{
	const char **text;
	bool *flag;
	int r;

	switch (c) {
	case 'n':
		if (!parse_u64(optarg, &a->count) || !a->count)
			return usage_error("bad count '%s'", optarg);
		return -1;
	case 'd':
		if (!parse_seconds(optarg, &a->duration))
			return usage_error("bad duration '%s'", optarg);
		return -1;
	case 'i':
		if (!parse_seconds(optarg, &a->interval) || a->interval < 0.001)
			return usage_error("bad interval '%s'", optarg);
		return -1;
	case 'b':
		if (pktstat_parse_by(optarg, &a->by))
			return usage_error("bad --by '%s': port, netns, cgroup (comma-separated)",
					   optarg);
		a->keyed = true;
		return -1;
	case 'D':
		a->device = optarg;
		return -1;
	case KFILTER_OPT:
		return kfilters_add(&a->kf, optarg);
	case 'h':
		return command_help();
	}
	flag = flag_of(a, c);
	text = text_of(a, c);
	if (flag)
		*flag = true;
	else if (text)
		*text = optarg;
	if (flag || text)
		return -1;
	r = filter_parse(&a->flt, c, optarg);
	if (r > 0)
		return -1;
	if (r < 0)
		return usage_error("%s", a->flt.err);
	return bad_option(argv);
}

/* -1 to go on (then free @a's filter), else the exit status. */
static int read_args_parse(struct read_args *a, int argc, char **argv, const char *names)
{
	char shortopts[2 * NR_READ_OPTIONS + 1];
	const struct option *longopts = pick_options(names, shortopts);
	int c, r;

	memset(a, 0, sizeof(*a));
	a->kf.fd = -1;
	while ((c = next_option(argc, argv, shortopts, longopts)) != -1) {
		r = take_option(a, c, argv);
		if (r >= 0) {
			filter_free(&a->flt);
			return r;
		}
	}
	return -1;
}

int read_command(int argc, char **argv, const char *names,
		 int (*run)(struct read_args *a, int nargs, char **args))
{
	struct read_args a;
	int r = read_args_parse(&a, argc, argv, names);

	if (r >= 0)
		return r;
	r = run(&a, argc - optind, argv + optind);
	filter_free(&a.flt);
	return r;
}

int reader_open(struct reader *rd, const char *path, bool ordered, double duration)
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

void reader_close(struct reader *rd)
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
int reader_next(struct reader *rd, const struct netlat_rec_hdr **rec)
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
void print_totals(FILE *f, const struct reader *rd)
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
