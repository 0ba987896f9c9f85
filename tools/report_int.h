/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What "netlat report" computes, for the renderings that share it: the
 * text and JSON of report.c, the HTML page (html.c) and the timeline
 * export (trace.c). One computation (report_compute(), with tx.c's join
 * of the send side), several outputs: nothing outside report.c and tx.c
 * changes these structures.
 */
#ifndef NETLAT_REPORT_INT_H
#define NETLAT_REPORT_INT_H

#include "report.h"
#include "flows.h"
#include "hist.h"

/* Kinds of record counted per CPU; STREAM records are not per-CPU data. */
enum kind { KIND_MARKER, KIND_LOST, KIND_OTHER, NR_KINDS };

extern const char *const kind_names[NR_KINDS];

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

/*
 * Per-skb stages, as the tables name them. driver>vq: the virtio driver
 * until the virtqueue took the packet.
 */
enum { ST_SM_XMIT, ST_XMIT_QDISC, ST_QDISC_DRV, ST_DRV_VQ, ST_DRV_ACK, ST_SM_ACK,
       ST_XMIT_ACK, NR_ST };

extern const char *const stage_names[NR_ST];

/* The points of a packet's life, in time order. */
enum { PT_SENDMSG, PT_XMIT, PT_QDISC, PT_DRIVER, PT_ACK, NR_PT };

extern const char *const point_names[NR_PT];

/* One kept TCP record, reduced to what the join and the pictures use. */
struct j_rec {
	uint64_t cookie, ts;	/* SENDMSG: ts is start_ns */
	uint32_t seq, end;	/* SENDMSG: id, end_seq; XMIT: seq, seq + len;
				 * ACK: snd_una */
	size_t flow;		/* row in the flow table (SENDMSG, XMIT) */
	uint64_t seqno;		/* the record's hdr.seq */
	uint16_t cpu;
	uint8_t stage;		/* DEV: NETLAT_DEV_*; RETRANS: kind */
	union {
		struct { uint64_t ret_ts; int64_t ret; uint32_t pid, tid; } sm;
		struct { uint64_t skb_id; uint32_t len; uint16_t segs; } x;
		struct { int32_t ifindex; uint32_t len; } d;
		struct { uint64_t xmit_ack_ns; uint32_t acked; bool resent; } a;
		struct { int32_t ret; uint16_t segs; } r;
	} u;
};

struct j_vec {
	struct j_rec *v;
	size_t n, cap;
};

/*
 * One first transmission and what was joined with it. Points that would
 * go back in time are left out, so the segments between consecutive
 * points add up to @e2e, the time from the first point to the last.
 */
struct packet {
	const struct j_rec *pt[NR_PT];	/* NULL: none */
	uint64_t e2e;
	uint64_t queued;	/* sendmsg>xmit, 0 without a sendmsg */
	uint64_t stack;		/* xmit to the last device point, 0 without */
	uint64_t ack_wait;	/* the last point before the ACK to it, 0 without */
};

/* Packets from one address to another (the ports are not compared). */
struct direction {
	uint16_t family;
	uint8_t saddr[16], daddr[16];
	size_t packets;
	struct netlat_dist e2e;		/* of its packets with two points or more */
	const struct packet *median;	/* the packets whose e2e is e2e.p50, .p99 */
	const struct packet *p99;
};

/*
 * The packets of one service port: a socket's own port, or its peer's when
 * its own is ephemeral and the peer's is not (a client's segments count for
 * the server they go to), as netlat config --by port keys the kernel's
 * histograms. The stages are those of its packets' points.
 */
struct service {
	uint16_t port;
	size_t packets;
	struct netlat_dist dist[NR_ST];
};

/* Services printed (the most packets first); the rest are counted. */
#define SERVICES_SHOWN	10

/* The slowest packets (by e2e) that the JSON and the waterfall list. */
#define SLOWEST_SHOWN	20
/* Directions printed (the most packets first); the rest are counted. */
#define DIRS_SHOWN	10
/* Bins of the retransmits-over-time series (the capture's time span). */
#define RTX_BINS	48

struct stages {
	struct j_vec sm, xmit, dev, ack, rtx;
	struct j_vec resent;		/* retransmissions sent, by cookie, time */
	const struct j_vec *vq;		/* the report's virtio xmits, sorted */
	uint64_t kernel_pkts;		/* TCP_PKT records: joined by the kernel */
	struct j_vec kp;		/* their points, NR_PT per record */
	struct netlat_samples d[NR_ST];
	struct netlat_dist dist[NR_ST];
	struct hist hist[NR_ST];

	struct packet *pkts;		/* one per xmit, in xmit order */
	struct direction *dirs;		/* the most packets first */
	size_t nr_dirs;
	struct service *svcs;		/* the most packets first */
	size_t nr_svcs;
	const struct packet **slowest;	/* nr_slowest, slowest first */
	size_t nr_slowest;
	uint64_t rtx_start, rtx_bin_ns;	/* bin i: [start + i * bin_ns, +bin_ns) */
	uint64_t rtx_bins[RTX_BINS][NR_RTX_KINDS];
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

/* The stages shown: the joined ones always, xmit>ack when measured. */
bool stage_shown(const struct stages *st, int k);

/* The segment from @pkt's point @from to its next point; the next point or NR_PT. */
int packet_next_point(const struct packet *pkt, int from);

/* "sendmsg>xmit" for the points @a, @b (a static buffer of its own per call site). */
void segment_name(char *buf, size_t len, int a, int b);

/*
 * The first DIRS_SHOWN directions, a line each ("192.0.2.1 -> 192.0.2.2:
 * 12 packets; median packet: 1.8 ms queued behind sendmsg, 28 us stack,
 * 9 ms until ACK, 11 ms end to end"), then how many more; as print_items().
 * In HTML each time is a <span> whose title is its nanoseconds.
 */
void print_directions(FILE *f, const struct stages *st, bool html);

/*
 * Likewise the send stages per service port ("port 6379: 12 packets;
 * driver>ack p50 20 ms, p99 21 ms, max 22 ms; ..."), and the receive
 * stages' of @rx.
 */
void print_services(FILE *f, const struct stages *st, bool html);
void print_rx_services(FILE *f, const struct rx_report *rx, bool html);

/* Whether @svc's stage @k has samples to show. */
bool service_stage_shown(const struct service *svc, int k);

/*
 * The send side (tx.c): TCP and virtio records kept for the join, the
 * join at report_compute(), and the send side's parts of the outputs.
 */
int tx_add_tcp(struct report *rep, const struct netlat_rec_hdr *h);
int tx_add_vq(struct report *rep, const struct netlat_rec_hdr *h);
int tx_compute(struct report *rep);
void tx_free(struct stages *st);
void tx_text_stages(FILE *f, const struct stages *st, const struct rx_report *rx);
void tx_text_directions(FILE *f, const struct stages *st);
void tx_text_services(FILE *f, const struct stages *st, const struct rx_report *rx);
void tx_text_hists(FILE *f, const struct stages *st);
void tx_json_hists(FILE *f, const struct stages *st);

#endif
