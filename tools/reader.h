/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading records for a command: a capture or the device, until it ends,
 * a deadline or a stop request, in arrival or time order, with losses and
 * unexplained gaps counted.
 */
#ifndef NETLAT_READER_H
#define NETLAT_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "libnetlat.h"
#include "filter.h"
#include "flight.h"

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

/*
 * What the options of the commands that read records (tail, report,
 * export, stat) give: each option is parsed in one place for all of them.
 */
struct read_args {
	struct filter flt;		/* FILTERS */
	struct kfilters kf;		/* --filter */
	uint64_t count;
	double duration, interval;
	const char *html, *peer, *chrome_trace, *prometheus, *device;
	uint32_t by;			/* --by, if keyed */
	bool json, ordered, hist, no_hist, flows, keyed;
};

/*
 * A command that reads records: parse --help, FILTERS and the options
 * @names (space-separated long names, each known to reader.c), then @run
 * with them and the @nargs arguments left at @args. The exit status.
 */
int read_command(int argc, char **argv, const char *names,
		 int (*run)(struct read_args *a, int nargs, char **args));

/*
 * Open @path (the device, a capture, - for stdin), @ordered: merge the
 * CPUs in time order; stop after @duration seconds (0: never). 0, or -1
 * (the error printed).
 */
int reader_open(struct reader *rd, const char *path, bool ordered, double duration);
void reader_close(struct reader *rd);
/*
 * The next record, honouring stop requests and the deadline: 1 record,
 * 0 done, -1 error (already printed), 2 tick_ns passed (when set).
 */
int reader_next(struct reader *rd, const struct netlat_rec_hdr **rec);
/* "N records, N lost[, N unexplained gaps][, N out of order]" */
void print_totals(FILE *f, const struct reader *rd);

#endif
