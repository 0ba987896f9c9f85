/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report": the receive path (NETLAT_REC_RX_*). Stages joined per
 * socket by sequence (TCP) or per skb (UDP), and a per-flow receive table.
 */
#ifndef NETLAT_TOOLS_RX_H
#define NETLAT_TOOLS_RX_H

#include <stdbool.h>
#include <stdio.h>
#include "libnetlat.h"

struct rx_report;

struct rx_report *rx_report_new(void);
void rx_report_free(struct rx_report *rr);
/* The drop reason names in force for the records added from now on. */
void rx_report_set_names(struct rx_report *rr, const struct netlat_names *names);
/* Account one record (ignored unless NETLAT_REC_RX_*). 0 or -ENOMEM. */
int rx_report_add(struct rx_report *rr, const struct netlat_rec_hdr *h);
bool rx_report_empty(const struct rx_report *rr);
/* Join the records: before anything is printed. */
void rx_report_compute(struct rx_report *rr);
/* The stage rows, in the columns of the TCP stage table (text). */
void rx_report_stage_rows(const struct rx_report *rr, FILE *f);
/* "rx_stages":{...} and "rx_flows":[...], each with a leading comma. */
void rx_report_json(const struct rx_report *rr, FILE *f);
/* Shown stage @i (from 0) for other renderings: false past the last. */
bool rx_report_stage(const struct rx_report *rr, unsigned int i, const char **name,
		     const struct netlat_dist **d);
/* The per-flow receive table (text). */
void rx_report_flows(const struct rx_report *rr, FILE *f);

/* Service ports shown (the most packets first); the rest are counted. */
#define RX_SERVICES_SHOWN	10

/*
 * Service ports (flow_service_port()) with received packets, and the first
 * RX_SERVICES_SHOWN of them, the most packets first, a line each ("port
 * 6379: 12 packets; netif>tcp p50 8 us, p99 9 us, max 9 us; ..."), then
 * how many more, as print_items(); the text's section of them.
 */
size_t rx_report_nr_services(const struct rx_report *rr);
void rx_report_services(const struct rx_report *rr, FILE *f, bool html);
void rx_report_text_services(const struct rx_report *rr, FILE *f);

#endif
