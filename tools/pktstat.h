/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `netlat stat --hist`: the packet level's kernel histograms and counters
 * (NETLAT_IOC_HIST), read without draining any ring.
 */
#ifndef NETLAT_PKTSTAT_H
#define NETLAT_PKTSTAT_H

#include <stdbool.h>
#include <stdio.h>
#include "libnetlat.h"

/* One table (text) or one JSON object per line. */
void pktstat_print(FILE *f, const struct netlat_hist *h,
		   const struct netlat_stage_hist *st, bool json);

/*
 * Read and print every @interval_s seconds (0: once) until @duration_s
 * (0: no limit) or SIGINT/SIGTERM. The process exit status.
 */
int pktstat_run(const char *path, double interval_s, double duration_s,
		bool json);

/*
 * `netlat stat --flows`: the per-socket counters (NETLAT_IOC_FLOWS), live
 * and recently closed, and the rest summed (@summed sockets), one table
 * or one JSON object per read, same loop.
 */
void pktstat_print_flows(FILE *f, const struct netlat_flow_stats *e,
			 unsigned int n, uint64_t closed, uint64_t summed,
			 bool json);
int pktstat_flows_run(const char *path, double interval_s, double duration_s,
		      bool json);

#endif
