/* SPDX-License-Identifier: GPL-2.0 */
/* "netlat report": the send side's text and JSON, of what tx.c computed. */
#ifndef NETLAT_TOOLS_TXPRINT_H
#define NETLAT_TOOLS_TXPRINT_H

#include <stdbool.h>
#include <stdio.h>
#include "tx.h"

/*
 * The first DIRS_SHOWN directions, a line each ("192.0.2.1 -> 192.0.2.2:
 * 12 packets; median packet: 1.8 ms queued behind sendmsg, 28 us stack,
 * 9 ms until ACK, 11 ms end to end"), then how many more; as print_items().
 * In HTML each time is a <span> whose title is its nanoseconds.
 */
void print_directions(FILE *f, const struct stages *st, bool html);
/*
 * Likewise the stages per service port ("port 6379: 12 packets;
 * driver>ack p50 20 ms, p99 21 ms, max 22 ms; ...").
 */
void print_services(FILE *f, const struct stages *st, bool html);

/* The text: the stage rows (in the columns of the report's stage table), */
void tx_text_stage_rows(FILE *f, const struct stages *st);
/* "where the time went" per direction, then the stages per service port, */
void tx_text_summaries(FILE *f, const struct stages *st);
/* a histogram per stage. */
void tx_text_hists(FILE *f, const struct stages *st);
/*
 * ,"tcp_stages":{...}, with @hist ,"tcp_stage_hist":{...}, then
 * ,"tcp_packets":{...} and, with retransmits, ,"tcp_retrans_timeline":{...}
 */
void tx_json(FILE *f, const struct stages *st, const struct flows *fs, bool hist);

#endif
