/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report A --peer B --html": the page's section of the join,
 * drawn from what join.c computed for its text and JSON (no number of
 * its own): the hosts and the clock as the text has them, then per
 * direction a table and a stacked bar of each host's stages and the wire.
 */
#ifndef NETLAT_JOINHTML_H
#define NETLAT_JOINHTML_H

#include <stdint.h>
#include <stdio.h>

#include "libnetlat.h"
#include "jointrace.h"

/*
 * One direction of a join (the sender's index, 0: A): each host's stages
 * and the wire, as the text, the JSON and the page (joinhtml.c) print them.
 * Here, as join.c hands it to the page, so that this header, below
 * join.c, includes nothing of join's.
 */
struct join_direction {
	struct netlat_samples tx[JOIN_SIDE_STAGES], rx[JOIN_SIDE_STAGES], wire, bound;
	struct netlat_dist dtx[JOIN_SIDE_STAGES], drx[JOIN_SIDE_STAGES], dwire, dbound;
	uint64_t no_clock;
	uint64_t one_sided;	/* wire times that are a bound, not an estimate */
	/* the ACK's way back, once per sent packet (netlat_join_ack()) */
	struct netlat_samples ack_delay, back, back_bound, rtt;
	struct netlat_dist dack_delay, dback, dback_bound, drtt;
	uint64_t back_one_sided;
};

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
