/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader-side record filters of "netlat tail", "report" and "stat":
 * --type, --pid, --cpu, --since, --until, and the flow filters --port,
 * --addr, --flow. Every option given must match (AND); stream headers
 * and the SNAPSHOT and SNAP_CPU records of a snapshot always pass (they
 * describe the stream, the readers need them, and they are not counted
 * as matched), and
 * so do LOST records for the flow filters. Sequence and loss accounting
 * happen before filtering.
 *
 * Adding a filter is one entry in the table of filter.c - its option
 * name, a parse function and a match function - plus its line in
 * FILTER_HELP and netlat.1 (a test checks the man page names every option).
 */
#ifndef NETLAT_FILTER_H
#define NETLAT_FILTER_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "libnetlat.h"

/* getopt_long() values of the filter options: FILTER_OPT_BASE + index. */
#define FILTER_OPT_BASE		0x1000
#define FILTER_MAX_TERMS	16
#define FILTER_ERR_SIZE		256

struct filter_kind;

/* One option given: its kind and the value it parsed to. */
struct filter_term {
	const struct filter_kind *kind;
	uint64_t value;			/* pid, cpu, nanoseconds */
	bool wall;			/* time of day rather than relative */
	uint64_t resolved;		/* wall: the instant, once known */
	void *data;			/* kind-specific (the type bitmap, ...),
					 * freed by filter_free() */
};

struct filter {
	struct filter_term terms[FILTER_MAX_TERMS];
	unsigned int nr_terms;
	bool have_first;		/* first_ts/first_wall are set */
	uint64_t first_ts, first_wall;	/* the first record read */
	uint64_t matched;		/* records that passed (STREAM excluded) */
	char err[FILTER_ERR_SIZE];	/* why filter_parse() failed */
};

/* Help text of the filter options, for the commands that take them. */
#define FILTER_HELP \
	"FILTERS (all must match; stream and snapshot headers always pass; losses\n" \
	"count every record):\n" \
	"  --type NAME[,NAME]   only these record types (MARKER, LOST, or numbers)\n" \
	"  --pid PID            only records of process or thread PID\n" \
	"  --cpu N              only records of CPU N\n" \
	"  --since T            only records from T on: seconds after the first\n" \
	"                       record, or a local time of day HH:MM:SS[.frac]\n" \
	"  --until T            only records before T (same forms)\n" \
	"  --port N             only TCP-flow records with port N on either side\n" \
	"  --addr A[/PREFIX]    only TCP-flow records with IPv4/IPv6 address A on\n" \
	"                       either side (LOST records pass the flow filters)\n" \
	"  --flow A:P-B:P       only records of this flow, either direction\n" \
	"                       (IPv6 as [ADDR]:PORT)\n"

/*
 * @own (terminated by a zeroed entry) followed by the filter options, in
 * static storage that lasts until the next call.
 */
const struct option *filter_options(const struct option *own);

/*
 * Take getopt_long()'s result @opt with @arg: 1 a filter option, parsed;
 * 0 not a filter option; -1 a bad value, the reason in f->err.
 */
int filter_parse(struct filter *f, int opt, const char *arg);

bool filter_active(const struct filter *f);

/* True if @rec passes; @stream is the header in force. Call for every record. */
bool filter_match(struct filter *f, const struct netlat_rec_stream *stream,
		  const struct netlat_rec_hdr *rec);

void filter_free(struct filter *f);

#endif
