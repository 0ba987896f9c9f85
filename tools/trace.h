/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat export --chrome-trace": a capture as Chrome trace-event JSON
 * (the JSON Object Format: {"traceEvents":[...]}), which ui.perfetto.dev
 * and chrome://tracing load.
 *
 *  - a process per TCP flow; each packet the report joined (a first
 *    transmission) is a row of complete slices ("ph":"X"), one per
 *    segment between its points (sendmsg, xmit, qdisc, driver, ack), with
 *    the records' values as args; packets that overlap in time go to
 *    different threads ("lanes") of the flow, as slices of one thread
 *    must nest;
 *  - a process "cpus" with a thread per CPU: the driver (TCP_DEV at the
 *    driver) and virtqueue (VIRTIO) records as instant events;
 *  - markers and the record that fired a snapshot's trigger as global
 *    instant events ("ph":"i", "s":"g");
 *  - metadata events ("ph":"M") naming the processes and threads.
 * Times are microseconds from the first record, to the nanosecond.
 */
#ifndef NETLAT_TRACE_H
#define NETLAT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "libnetlat.h"

struct report;
struct trace;

struct trace *trace_new(void);
void trace_free(struct trace *tr);

/* Keep what the timeline shows of @rec besides packets: 0 or -ENOMEM. */
int trace_add(struct trace *tr, const struct netlat_rec_stream *stream,
	      const struct netlat_rec_hdr *rec);

/* Write the trace of @rep, fed the same records and computed (report_compute()): 0 or -ENOMEM. */
int trace_write(struct trace *tr, const struct report *rep, FILE *f);

/* Writing events of the format, for this unit and jointrace.c. */
struct trace_out {
	FILE *f;
	uint64_t base;		/* ts 0 of the trace */
	bool first;		/* no event written yet */
};

/* Start an event: the separator, then {"ph":..., up to the fields. */
void trace_event(struct trace_out *o, const char *ph, unsigned int pid, unsigned int tid);
/* ,"NAME":microseconds from the base, exactly (three decimals) */
void trace_ts(struct trace_out *o, const char *name, uint64_t ns);
/* A whole metadata event (thread_name, process_name) naming a track. */
void trace_meta(struct trace_out *o, const char *what, unsigned int pid, unsigned int tid,
		const char *name);

#endif
