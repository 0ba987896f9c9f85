/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report --html": the report as one self-contained HTML page
 * (inline SVG and CSS, a few lines of inline script, nothing fetched),
 * drawn from the numbers report_compute() computes for --json.
 */
#ifndef NETLAT_HTML_H
#define NETLAT_HTML_H

#include <stdio.h>

struct report;
struct join_page;

/*
 * Write the page of @rep, computed (report_compute()), with the join's
 * section when @peer (report --peer, join.h): 0 or -ENOMEM.
 */
int html_write(const struct report *rep, const struct join_page *peer, FILE *f);

#endif
