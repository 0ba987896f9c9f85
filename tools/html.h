/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report --html": the report as one self-contained HTML page
 * (inline SVG and CSS, a few lines of inline script, nothing fetched),
 * drawn from the numbers report_compute() computes for --json.
 */
#ifndef NETLAT_HTML_H
#define NETLAT_HTML_H

#include <stdio.h>
#include "report.h"

/* Compute @rep (if not yet) and write the page: 0 or -ENOMEM. */
int html_write(struct report *rep, const struct netlat_seq *seq, FILE *f);

#endif
