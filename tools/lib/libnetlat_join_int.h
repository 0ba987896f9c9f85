/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/*
 * The join's state, shared by the pairing (libnetlat_join.c) and the
 * ACK's way back (libnetlat_joinack.c); not installed.
 */
#ifndef LIBNETLAT_JOIN_INT_H
#define LIBNETLAT_JOIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libnetlat.h"

/*
 * Linux's coarsest TSval tick: two stamps a tick apart or more carry
 * different TSvals (1 us with usec timestamps, which is finer).
 */
#define TSVAL_TICK_NS	1000000

struct jflow {
	uint16_t family, sport, dport;
	uint8_t saddr[16], daddr[16];	/* sender first */
	bool seen[2];
	int64_t last[2];		/* unwrapped sequence, per host */
	int64_t first[2];		/* each host's first record's position */
	int64_t b_shift;		/* added to B's positions by align() */
	size_t *tx[2], ntx[2], ctx[2];	/* indices of packets host h sent */
	size_t *rx[2], nrx[2], crx[2];	/* ... and received */
	size_t *ack[2], nack[2], cack[2];	/* pure ACKs host h sent of its data */
};

struct jtx {
	struct netlat_rec_tcp_pkt r;
	int64_t s, e;
	uint32_t flow;
	uint8_t host;
	uint64_t first_rx_ns;		/* its earliest receive stamp at the peer, 0: none */
	struct netlat_xack ack;		/* its ACK's way back */
	bool rescued;			/* retransmitted, joined by TSval */
};

/* A pure ACK (TCP_ACK_OUT), on the flow of the data it acknowledges. */
struct jack {
	struct netlat_rec_tcp_ack_out r;
	int64_t pos;			/* its number unwrapped, as the sender's bytes */
};

struct jrx {
	struct netlat_rec_rx_pkt r;
	int64_t s, e;
	uint32_t flow;
	uint8_t host;
	uint32_t joined;		/* sent records sharing its bytes */
};

struct netlat_join {
	struct netlat_join_opts o;
	struct jtx *tx;
	size_t ntx, ctx;
	struct jrx *rx;
	size_t nrx, crx;
	struct jack *acks;
	size_t nacks, cacks;
	struct jflow *flows;
	size_t nflows, cflows;
	uint32_t *hash;			/* flow index + 1, open addressing */
	size_t hcap;
	struct netlat_xpkt *pairs;
	size_t npairs;
	struct netlat__sample *smp;	/* the clock's samples, */
	size_t *smp_pair;		/* each one's pair */
	size_t nsmp;
	struct netlat__clock *clock;
	struct netlat_join_counts counts;
	struct netlat_join_ack_counts ack_counts;
	struct netlat_join_tsval_counts tsval_counts;
	struct jspan *spans;		/* a flow's joined byte ranges, scratch */
	size_t cspans;
	int64_t *rx_reach;		/* a flow's received ends so far, scratch */
	size_t crx_reach;
	int64_t *ack_pos;		/* a flow's ACK numbers unwrapped, scratch */
	size_t cack_pos;
	size_t *ack_rtx;		/* a flow's retransmitted packets, scratch */
	size_t cack_rtx;
};

/* The record of @x's sender, and of its receiver, as the join holds them. */
static inline const struct jtx *netlat__jtx(const struct netlat_xpkt *x)
{
	return (const struct jtx *)((const char *)x->tx - offsetof(struct jtx, r));
}

static inline const struct jrx *netlat__jrx(const struct netlat_xpkt *x)
{
	return (const struct jrx *)((const char *)x->rx - offsetof(struct jrx, r));
}

/* The first of @v[0..@n) (not decreasing) above @x: @n if none. */
size_t netlat__first_above(const int64_t *v, size_t n, int64_t x);
/* The flow from (@sa, @sp) to (@da, @dp): its index, or -1 if none. */
long netlat__join_flow_find(const struct netlat_join *j, uint16_t family,
			    const uint8_t *sa, uint16_t sp, const uint8_t *da,
			    uint16_t dp);
/*
 * The wire of a packet host @sender sent: @raw_ns is its receive stamp
 * less its driver time, each on its own host's clock, @t_ns A's end of
 * it (A's time). Its estimate and bound from the clock there, as
 * struct netlat_xpkt has them; false if no clock holds @t_ns.
 */
bool netlat__join_wire(const struct netlat_join *j, unsigned int sender,
		       uint64_t t_ns, int64_t raw_ns, int64_t *wire_ns,
		       int64_t *lo_ns, int64_t *hi_ns);
/*
 * The round trip of @p on its sender's clock into *@rtt_ns: NETLAT_XACK_ALL,
 * or the enum netlat_xack_why it has none. @first: its ACK is known to
 * answer its first transmission, retransmitted or not.
 */
unsigned int netlat__join_rtt(const struct netlat_rec_tcp_pkt *p, bool first,
			      int64_t *rtt_ns);
/* Each sent packet's ACK's way back, after the wires: 0 or -ENOMEM. */
int netlat__join_acks(struct netlat_join *j);

#endif
