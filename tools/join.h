/* SPDX-License-Identifier: GPL-2.0 */
/* "netlat join": two hosts' captures joined packet by packet. */
#ifndef NETLAT_JOIN_H
#define NETLAT_JOIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "libnetlat.h"
#include "jointrace.h"

int cmd_join(int argc, char **argv);
/*
 * "netlat report A --peer B": the join of @a_path (this host, A) and
 * @b_path (its peer, B) with the defaults, printed to stdout as "netlat
 * join" prints it, its JSON object (@json) without a newline, the packets
 * left out. 0, or 1 (the error printed).
 */
int join_peer_print(const char *a_path, const char *b_path, bool json);

/*
 * One direction of a join (the sender's index, 0: A): each host's stages
 * and the wire, as the text, the JSON and the page (joinhtml.c) print them.
 */
struct join_direction {
	struct netlat_samples tx[JOIN_SIDE_STAGES], rx[JOIN_SIDE_STAGES], wire, bound;
	struct netlat_dist dtx[JOIN_SIDE_STAGES], drx[JOIN_SIDE_STAGES], dwire, dbound;
	uint64_t no_clock;
	uint64_t one_sided;	/* wire times that are a bound, not an estimate */
};

/*
 * "netlat report A --peer B --html": the join of @a_path and @b_path with
 * the defaults, kept for the page: NULL (the error printed) or one to
 * write with join_page_html() (0 or -ENOMEM) and free.
 */
struct join_page;
struct join_page *join_page_new(const char *a_path, const char *b_path);
int join_page_html(const struct join_page *p, FILE *f);
void join_page_free(struct join_page *p);

#endif
