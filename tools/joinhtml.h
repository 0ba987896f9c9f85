/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report A --peer B --html": the page's section of the join,
 * drawn from what join.c computed for its text and JSON (no number of
 * its own): the hosts and the clock as the text has them, then per
 * direction a table and a stacked bar of each host's stages and the wire.
 */
#ifndef NETLAT_JOINHTML_H
#define NETLAT_JOINHTML_H

#include <stdio.h>

#include "join.h"

/* A join as join.c hands it over. */
struct join_html {
	const struct netlat_join *j;		/* after netlat_join_run() */
	const struct join_direction *d;		/* [2], by sender: 0 is A */
	const char *file[2];			/* A's capture, B's */
	const char *hostname[2];		/* as noted in the capture, or "" */
	const char *hosts, *clock;		/* the text's host lines, clock lines */
};

/* Write the section to @f: 0 or -ENOMEM (a write error is @f's). */
int join_html_write(const struct join_html *h, FILE *f);

#endif
