// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a capture or the device for the commands that read records
 * (tail, report, export, stat): stop requests, deadlines, ordering by
 * time, loss accounting, and their FILTERS options.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "reader.h"

/* Unexplained gaps printed one by one before they are only counted. */
#define MAX_GAP_WARNINGS 10

/* A filter option (filter.h), or a bad one: -1 taken, else the exit status. */
int filter_or_bad_option(struct filter *flt, int c, char **argv)
{
	int r = filter_parse(flt, c, optarg);

	if (r > 0)
		return -1;
	if (r < 0)
		return usage_error("%s", flt->err);
	return bad_option(argv);
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
