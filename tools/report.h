/* SPDX-License-Identifier: GPL-2.0 */
/* "netlat report": per-CPU aggregation of a record stream. */
#ifndef NETLAT_REPORT_H
#define NETLAT_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "libnetlat.h"

struct report;

struct report *report_new(const char *name);
void report_free(struct report *rep);

/*
 * Account one record, in per-CPU stream order. @stream is the header in
 * force (for wall-clock times). Returns 0 or -ENOMEM.
 */
int report_add(struct report *rep, const struct netlat_rec_stream *stream,
	       const struct netlat_rec_hdr *rec);

/*
 * The drop reason names in force for the records added from now on (the
 * reader keeps them: netlat_names_feed()); NULL shows the numbers.
 */
void report_set_names(struct report *rep, const struct netlat_names *names);

/* Draw (and put in JSON) the per-stage latency histograms: on by default. */
void report_set_hist(struct report *rep, bool on);

/*
 * Compute the summary once all records are in; @seq tracked the same
 * records (losses, gaps). Later calls do nothing. 0 or -ENOMEM.
 */
int report_compute(struct report *rep, const struct netlat_seq *seq);

/* Compute (if not yet) and print the summary: 0 or -ENOMEM. */
int report_print(struct report *rep, const struct netlat_seq *seq, bool json,
		 FILE *f);

#endif
