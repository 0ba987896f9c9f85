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
 * NETLAT_IOC_HIST of @key (0: the host's, which also says the keys'; a
 * slot; NETLAT_HIST_KEY_OTHER), every stage into @st: 0 or -errno.
 */
int pktstat_read_key(int fd, uint32_t key, struct netlat_hist *h,
		     struct netlat_stage_hist *st);
/* "port,netns,cgroup" (any of them, or "none") as NETLAT_KEY_* bits. */
int pktstat_parse_by(const char *s, uint32_t *by);
/*
 * The kernel's histograms by key, grouped by the fields @by (0: all the
 * kernel keeps), then the other's.
 */
int pktstat_keys_run(const char *path, double interval_s, double duration_s,
		     bool json, uint32_t by);

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
