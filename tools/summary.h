/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A capture's summary: what report_compute() (report.c) computed of it,
 * with the send and receive sides (tx.h, rx.h), for the renderings that
 * share it: the text and JSON of report.c, the HTML page (html.c) and the
 * timeline export (trace.c). Data only: the renderings take it computed
 * and read it, so they need nothing of report.c itself; nothing outside
 * report.c changes it.
 */
#ifndef NETLAT_SUMMARY_H
#define NETLAT_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include "libnetlat.h"
#include "tx.h"

struct virtio_report;
struct rx_report;

/* Kinds of record counted per CPU; STREAM records are not per-CPU data. */
enum kind { KIND_MARKER, KIND_LOST, KIND_OTHER, NR_KINDS };

struct cpu_stats {
	bool seen;
	uint64_t records;
	uint64_t by_kind[NR_KINDS];
	uint64_t first_ts, last_ts;
	uint64_t first_wall, last_wall;
	uint64_t ts_backwards;		/* breaks of the per-CPU clock rule */
	struct netlat_seq_stats seq;	/* filled in by report_compute() */

	bool have_prev;			/* prev_ts is in the current stream */
	uint64_t prev_ts;
	struct netlat_samples gaps;	/* ts_ns deltas of consecutive records */
	struct netlat_dist gap;		/* summary of gaps, by report_compute() */

	bool in_snap;			/* a SNAP_CPU described this CPU */
	struct netlat_rec_snap_cpu snap;	/* its counters, summed */
};

struct report {
	char *name;
	uint64_t bytes;
	uint64_t streams;
	struct netlat_rec_stream first_stream;
	uint64_t *type_counts;		/* NR_TYPES, STREAM included */

	struct cpu_stats *cpus;
	unsigned int nr_cpus;
	struct cpu_stats total;		/* by report_compute() */
	bool computed;
	int compute_err;		/* what report_compute() returned */

	uint64_t markers, marker_bytes, marker_min, marker_max;

	struct stages *stages;		/* TCP records kept for the join */
	struct virtio_report *virtio;	/* per-virtqueue summary */
	struct rx_report *rx;		/* receive-path stages and flows */
	struct j_vec vq;		/* virtio_net xmits of TCP segments */
	const struct netlat_names *names;	/* drop reasons in force */
	uint64_t drop_names;		/* drop reason names the notes gave */
	char kernel[65];		/* the recording kernel's release, if noted */
	struct flows *flows;		/* per-flow summary of TCP records */
	bool no_hist;			/* no stage histograms */

	uint64_t snapshots;		/* SNAPSHOT records */
	struct netlat_rec_snapshot snap;	/* the last one */
	struct netlat_rec_stream snap_stream;	/* its stream header */
};

#endif
