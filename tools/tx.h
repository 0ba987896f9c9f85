/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report": the send side (NETLAT_REC_TCP_*, and the virtio_net
 * xmits of TCP segments). Each first transmission joined with its sendmsg,
 * device points and ACK (the events level), or taken whole from the
 * kernel's TCP_PKT records (the packet level); the stages, directions,
 * services and slowest packets of them (printed by txprint.h). The
 * receive side's twin is rx.h.
 * The structures are open: the page (html.c) and the trace (trace.c) draw
 * the packets; nothing outside tx.c changes them.
 */
#ifndef NETLAT_TOOLS_TX_H
#define NETLAT_TOOLS_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "libnetlat.h"
#include "flows.h"
#include "hist.h"
#include "stagerec.h"

/*
 * Per-skb stages: the rows of NETLAT_STAGES() whose record is tcp_pkt, in
 * its order, ST_##NAME each, so that a stage the uapi adds is a row of
 * every table without an edit here.
 */
#define TX_ROW_ENUM(NAME, name, rec, from, to)	STAGE_IF(tcp_pkt, rec, ST_##NAME,)

enum { NETLAT_STAGES(TX_ROW_ENUM) NR_ST };

/* The uapi's names of the rows ("sendmsg>xmit", ...). */
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

/* A send side with no records yet: NULL without memory. */
struct stages *tx_new(void);
void tx_free(struct stages *st);
/* Keep one TCP record (with a flow) for the join, its flow in @fs: 0 or -ENOMEM. */
int tx_add_tcp(struct stages *st, struct flows *fs, const struct netlat_rec_hdr *h);
/*
 * Keep a VIRTIO record in @vq if it is a virtio_net xmit of a TCP segment
 * of a known socket: the virtqueue point of its packet (kept apart from
 * @st, as a capture with no TCP records shows no stages). 0 or -ENOMEM.
 */
int tx_add_vq(struct j_vec *vq, const struct netlat_rec_hdr *h);
/*
 * The join, once every record is in; the retransmits are binned over
 * [@first_ts, @last_ts], the capture's span. 0 or -ENOMEM.
 */
int tx_compute(struct stages *st, const struct flows *fs, struct j_vec *vq,
	       uint64_t first_ts, uint64_t last_ts);

/* The stages shown: the joined ones always, xmit>ack when measured. */
bool stage_shown(const struct stages *st, int k);
/* Whether @svc's stage @k has samples to show. */
bool service_stage_shown(const struct service *svc, int k);

/* The segment from @pkt's point @from to its next point; the next point or NR_PT. */
int packet_next_point(const struct packet *pkt, int from);

/* "sendmsg>xmit" for the points @a, @b (a static buffer of its own per call site). */
void segment_name(char *buf, size_t len, int a, int b);

#endif
