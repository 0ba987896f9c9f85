/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report": per-flow summary of TCP records. A flow is a socket
 * cookie with its 4-tuple; rows are sorted by bytes first transmitted.
 */
#ifndef NETLAT_FLOWS_H
#define NETLAT_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "libnetlat.h"

/* Rows printed (text and JSON); the rest is one "N more flows" line. */
#define FLOWS_SHOWN	20

#define NR_RTX_KINDS	(NETLAT_RETRANS_SYNACK + 1)
#define MAX_FAIL_CODES	8	/* distinct failure codes kept per flow */

struct fail_count {
	int32_t ret;
	uint64_t count;
};

/* One flow's row; read-only outside flows.c (html.c draws the table). */
struct flow_row {
	struct netlat_flow key;	/* reserved zeroed */
	uint64_t sendmsg_calls, sendmsg_bytes;
	uint64_t xmit_segs, xmit_bytes;	/* first transmissions */
	uint64_t rtx[NR_RTX_KINDS];	/* attempts by NETLAT_RETRANS_* */
	uint64_t rtx_segs[NR_RTX_KINDS];	/* segments, as RetransSegs counts them */
	uint64_t failed;		/* attempts with ret != 0 */
	struct fail_count fail[MAX_FAIL_CODES];
	unsigned int nr_fail;
	uint64_t fail_other;		/* codes beyond MAX_FAIL_CODES */
	/*
	 * Packet records (TCP_PKT): how many, the packets the kernel
	 * followed only as part of a range (NETLAT_PKT_MERGED) and their
	 * bytes, and the virtqueue the packets met (NETLAT_PKT_VQ).
	 */
	uint64_t pkt_records, merged, merged_bytes;
	uint64_t vq_pkts;
	uint16_t vq_free_min, vq_size;
};

struct flows;

struct flows *flows_new(void);
void flows_free(struct flows *fs);

/*
 * Account a TCP record (others are ignored). 0 or -ENOMEM. *@row (if
 * @row) is set to the index of the record's row (see flows_row()), or
 * SIZE_MAX for a record that has none (PUSH, SKB, ACK, DEV).
 */
int flows_add(struct flows *fs, const struct netlat_rec_hdr *rec, size_t *row);

bool flows_empty(const struct flows *fs);

/*
 * The service port of a socket's flow @fl (sport its own): the key of
 * netlat config --by port. Its own port, or its peer's when its own is in
 * the ephemeral range (net.ipv4.ip_local_port_range of the host reading:
 * a capture does not carry its host's) and the peer's is not.
 */
uint16_t flow_service_port(const struct netlat_flow *fl);

/* Row @i (an index from flows_add()); valid until the next flows_add(). */
const struct flow_row *flows_row(const struct flows *fs, size_t i);

/*
 * Every row in the order of the table (*@n of them, FLOWS_SHOWN printed):
 * an array to free(), or NULL without memory.
 */
const struct flow_row **flows_sorted(const struct flows *fs, size_t *n);

/* "EBUSY" for the errors the kernel returns for a retransmit, else the number. */
const char *flows_code_name(int32_t ret, char *buf, size_t len);

/* The table, in text, or as a JSON object. */
void flows_print(const struct flows *fs, bool json, FILE *f);

#endif
