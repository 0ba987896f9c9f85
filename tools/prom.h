/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's packet-level histograms and counters as Prometheus metrics
 * (Documentation/prometheus.rst): read at each scrape with the ioctls
 * alone (HIST, GET_INFO, GET_CPU_STATS, PROBES), so no ring is drained and
 * any reader can run beside; written in the text format 0.0.4 or in
 * OpenMetrics 1.0.0. `netlat exporter` serves them over HTTP, `netlat stat
 * --prometheus FILE` writes them for node_exporter's textfile collector.
 */
#ifndef NETLAT_PROM_H
#define NETLAT_PROM_H

#include <stdbool.h>
#include <stdio.h>
#include "libnetlat.h"

/* One key's histograms (netlat config --by), or the other's. */
struct prom_key {
	bool other;
	struct netlat_hist hist;
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
};

/* Everything one scrape reads from the device. */
struct prom_sample {
	struct netlat_info info;
	struct netlat_probes probes;
	struct netlat_hist hist;
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	unsigned int nr_cpus;		/* entries of @cpu */
	struct netlat_cpu_stats *cpu;	/* the possible CPUs, ascending */
	unsigned int nr_keys;		/* entries of @keys, the other last */
	struct prom_key *keys;
};

/*
 * Read @s from the open device @fd. 0, or -errno with the failing ioctl's
 * name in *@what and its request in *@request.
 */
int prom_read(int fd, struct prom_sample *s, const char **what,
	      unsigned long *request);
void prom_sample_free(struct prom_sample *s);

/* The exposition of @s: OpenMetrics (ends with "# EOF") or text 0.0.4. */
void prom_format(FILE *f, const struct prom_sample *s, bool openmetrics);

/*
 * Open @path, read and format: 0, or -1 with one line saying why in
 * @errbuf (NETLAT_ERRBUF_SIZE bytes).
 */
int prom_collect(const char *path, FILE *f, bool openmetrics, char *errbuf);

/*
 * `netlat stat --prometheus FILE`: write the exposition to FILE.tmp, fsync
 * it and rename it over FILE (a reader sees the old file or the new one,
 * never a part), once or every @interval_s seconds until @duration_s
 * (0: no limit) or SIGINT/SIGTERM. The process exit status.
 */
int prom_textfile_run(const char *path, const char *file, double interval_s,
		      double duration_s);

#endif
