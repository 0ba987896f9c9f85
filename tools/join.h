/* SPDX-License-Identifier: GPL-2.0 */
/* "netlat join": two hosts' captures joined packet by packet. */
#ifndef NETLAT_JOIN_H
#define NETLAT_JOIN_H

#include <stdbool.h>
#include <stdio.h>

int cmd_join(int argc, char **argv);
/*
 * "netlat report A --peer B": the join of @a_path (this host, A) and
 * @b_path (its peer, B) with the defaults, printed to stdout as "netlat
 * join" prints it, its JSON object (@json) without a newline, the packets
 * left out. 0, or 1 (the error printed).
 */
int join_peer_print(const char *a_path, const char *b_path, bool json);

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
