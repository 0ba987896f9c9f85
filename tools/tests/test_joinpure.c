// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the join's pure-ACK carriers (libnetlat_joinack.c): a bulk
 * flow whose receiver sends no data, only pure ACKs it records
 * (TCP_ACK_OUT), on synthetic captures whose truth is known. Included by
 * test_netlat.c after test_join.c, whose helpers it uses.
 */

#define PS_N		40		/* A's segments, two per pure ACK */
#define PS_MSS		1448
#define PS_SA0		0xfffff000u	/* A's first byte: its sequence wraps */
#define PS_THETA	3200000000LL	/* B - A */
#define PS_FLOOR	30000

struct psim {
	bool ts;			/* TCP timestamps on */
	bool old_a;			/* A's packet records of 176 bytes: no ack_tsval */
	unsigned int dup;		/* ACK k+1 repeated 3 ms later, another TSval */
	unsigned int lost;		/* ACK k+1's first copy lost: the repeat carried it */
	unsigned int same;		/* ACK k+1 repeated 100 us later, its TSval */
	unsigned int rtx;		/* B retransmitted data near ACK k+1 */
};

/* A's times of segment @m: its driver, its arrival at B; B's ACK of pair @k. */
static uint64_t ps_t1(unsigned int m)
{
	return SIM_T0 + m * 250000ull;
}

static uint64_t ps_t2(unsigned int m)
{
	return ps_t1(m) + PS_FLOOR + (m % 3) * 1000;
}

static uint64_t ps_ack(unsigned int k)
{
	return ps_t2(2 * k + 1) + 40000 + (k % 5) * 1000;
}

/* The repeat of pair @k's ACK, if @s sends one: its time (A's), else 0. */
static uint64_t ps_repeat(const struct psim *s, unsigned int k)
{
	if ((s->dup && k + 1 == s->dup) || (s->lost && k + 1 == s->lost))
		return ps_ack(k) + 3000000;
	if (s->same && k + 1 == s->same)
		return ps_ack(k) + 100000;
	return 0;
}

/* A's times of B's retransmitted packet's life (s->rtx): its driver, its end. */
static uint64_t ps_rtx_from(const struct psim *s)
{
	return ps_ack(s->rtx - 1) - 500000;
}

static uint64_t ps_rtx_to(const struct psim *s)
{
	return ps_rtx_from(s) + 100000;
}

static uint64_t ps_back(unsigned int k)
{
	return PS_FLOOR + (k % 4) * 500;
}

/* The TSval of a pure ACK B sent at A's time @t: B's millisecond clock. */
static uint32_t ps_tsval(const struct psim *s, uint64_t t)
{
	return s->ts ? (uint32_t)((t + PS_THETA) / 1000000) + 5000 : 0;
}

/* B's record of a pure ACK of @ack sent at A's time @t. */
static void ps_ack_out(struct capture *b, uint32_t ack, uint64_t t, uint32_t tsval)
{
	struct netlat_rec_tcp_ack_out *o = cap_tcp(b, NETLAT_REC_TCP_ACK_OUT, sizeof(*o),
						   sim_seq_b++, 0);

	set_flow(o, AF_INET, "192.0.2.2", 6379, "192.0.2.1", 40000, 2);
	o->hdr.ts_ns = t + PS_THETA;
	o->ack_seq = ack;
	o->tsval = tsval;
	o->window = 512;
}

/*
 * A's bulk flow to B, B's pure ACK of every second segment (recorded),
 * and, for the clock's other side, ten packets of B's on another flow
 * that cross the wire in its floor, as A's fastest do, until after the
 * last ACK (a clock at each ACK's time).
 */
static void sim_pure(const struct psim *s, struct capture *a, struct capture *b)
{
	unsigned int m, k;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(a, 1);
	cap_stream(b, 1);
	for (m = 0; m < PS_N; m++) {
		uint32_t seq = PS_SA0 + m * PS_MSS, ack = PS_SA0 + (m | 1) * PS_MSS + PS_MSS;
		uint64_t t = ps_ack(m / 2), rep = ps_repeat(s, m / 2);
		struct netlat_rec_tcp_pkt *p;

		sim_pkt_size = s->old_a ? offsetof(struct netlat_rec_tcp_pkt, ack_tsval) : 0;
		p = sim_tx(a, &sim_seq_a, true, seq, PS_MSS, ps_t1(m) - 5000, ps_t1(m), 1);
		sim_pkt_size = 0;
		p->sent_ack_seq = 7000;
		/* the ACK that ended it: the first, or the repeat if that was lost */
		p->ack_seq = ack;
		p->ack_rx_ns = (s->lost && m / 2 + 1 == s->lost ? rep : t) + ps_back(m / 2);
		p->tsval = s->ts ? 77 : 0;
		if (!s->old_a)
			p->ack_tsval = ps_tsval(s, s->lost && m / 2 + 1 == s->lost ? rep : t);
		sim_rx(b, &sim_seq_b, false, seq, PS_MSS, ps_t2(m) + PS_THETA, 1);
		if (!(m % 2))
			continue;
		ps_ack_out(b, ack, t, ps_tsval(s, t));
		if (rep)
			ps_ack_out(b, ack, rep, s->same ? ps_tsval(s, t) : ps_tsval(s, rep));
	}
	if (s->rtx) {
		/* acknowledging none of A's segments: not a carrier of theirs */
		struct netlat_rec_tcp_pkt *p = sim_tx(b, &sim_seq_b, false, 7000, 500,
						      ps_rtx_from(s) + PS_THETA - 5000,
						      ps_rtx_from(s) + PS_THETA, 1);

		p->retrans = 1;
		p->sent_ack_seq = PS_SA0;
		p->tsval = ps_tsval(s, ps_rtx_from(s));
	}
	for (k = 0; k < 10; k++) {
		uint64_t t = SIM_T0 + k * 1250000ull;
		struct netlat_rec_tcp_pkt *p = sim_tx(b, &sim_seq_b, false, 9000 + k * 100, 100,
						      t + PS_THETA - 5000, t + PS_THETA, 1);
		struct netlat_rec_rx_pkt *r;

		set_flow(p, AF_INET, "192.0.2.2", 6380, "192.0.2.1", 40001, 3);
		r = sim_rx(a, &sim_seq_a, true, 9000 + k * 100, 100, t + PS_FLOOR, 1);
		set_flow(r, AF_INET, "192.0.2.1", 40001, "192.0.2.2", 6380, 4);
	}
}

/* What sim_pure() made of segment @m's ACK: NETLAT_XACK_ALL or why not. */
static unsigned int ps_why(const struct psim *s, unsigned int m)
{
	unsigned int k1 = m / 2 + 1;
	bool repeated = (s->dup && k1 == s->dup) || (s->lost && k1 == s->lost) ||
			(s->same && k1 == s->same);

	uint64_t t = ps_ack(k1 - 1);

	/* a copy of B's retransmitted packet may share the ACK's TSval tick */
	if (s->ts && !s->old_a)
		return (s->same && k1 == s->same) ||
		       (s->rtx && t + 1000000 >= ps_rtx_from(s) && t <= ps_rtx_to(s) + 1000000) ?
		       NETLAT_XACK_TSVAL_SHARED : NETLAT_XACK_ALL;
	/* without it: a lone pure ACK of its number, nothing retransmitted after */
	return repeated || (s->rtx && ps_rtx_to(s) >= ps_t2(m)) ? NETLAT_XACK_UNVERIFIED
								: NETLAT_XACK_ALL;
}

/*
 * Each of A's segments against the truth: its reason, and with all three
 * the ACK delay (from its arrival to its carrier's driver time), the wire
 * back and the round trip exact, the round trip the wire there, the ACK
 * delay and the wire back to the nanosecond. The faults found.
 */
static size_t ps_check(const struct psim *s, const struct netlat_join *j, int64_t b_offset)
{
	const struct netlat_xpkt *p;
	size_t n = netlat_join_pairs(j, &p), i, bad = 0;

	for (i = 0; i < n; i++) {
		unsigned int m, k, why;
		uint64_t carrier;
		struct netlat_xack x;

		if (p[i].sender || !(p[i].flags & NETLAT_XPKT_TX_FIRST))
			continue;
		m = (p[i].tx->seq - PS_SA0) / PS_MSS;
		k = m / 2;
		why = ps_why(s, m);
		carrier = s->lost && k + 1 == s->lost ? ps_repeat(s, k) : ps_ack(k);
		if (!CHECK(netlat_join_ack(j, i, &x) == 0))
			continue;
		rr_near(x.why, why, 0, "why", &p[i], &bad);
		rr_near(x.rtt_ns, (int64_t)(carrier + ps_back(k) - ps_t1(m)), 0, "round trip",
			&p[i], &bad);
		if (why != NETLAT_XACK_ALL) {
			rr_near(x.flags, NETLAT_XACK_RTT, 0, "flags", &p[i], &bad);
			continue;
		}
		rr_near(x.flags, NETLAT_XACK_RTT | NETLAT_XACK_DELAY | NETLAT_XACK_WIRE |
			NETLAT_XACK_PURE_ACK, 0, "flags", &p[i], &bad);
		if (!x.ack_out || x.ack_tx || x.ack_out->hdr.ts_ns != carrier + PS_THETA + b_offset) {
			rr_near(0, 1, 0, "the carrier's record", &p[i], &bad);
			continue;
		}
		rr_near(x.delay_ns, (int64_t)(carrier - ps_t2(m)), 0, "ack delay", &p[i], &bad);
		rr_wire_near(x.wire_ns, x.wire_lo_ns, x.wire_hi_ns, ps_back(k), 0, "wire back",
			     &p[i], &bad);
		rr_near(p[x.ack_pair].wire_ns, (int64_t)(ps_t2(m) - ps_t1(m)), 0, "wire there",
			&p[i], &bad);
		rr_near(p[x.ack_pair].wire_ns + x.delay_ns + x.wire_ns, x.rtt_ns, 0,
			"there + delay + back", &p[i], &bad);
	}
	return bad;
}

/*
 * sim_pure() with @s, joined with a constant offset (B's times moved by
 * @b_offset too): its faults; *@c its counts.
 */
static size_t ps_run_moved(const struct psim *s, struct netlat_join_ack_counts *c,
			   int64_t b_offset)
{
	struct netlat_join_opts o = { .flags = NETLAT_JOIN_OFFSET_ONLY, .b_offset_ns = b_offset };
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join *j;
	size_t bad = 1;

	memset(c, 0, sizeof(*c));
	sim_pure(s, &a, &b);
	j = sim_join(&a, &b, &o);
	if (j) {
		bad = ps_check(s, j, b_offset);
		netlat_join_ack_counts(j, c);
	}
	netlat_join_free(j);
	cap_free(&a);
	cap_free(&b);
	return bad;
}

static size_t ps_run(const struct psim *s, struct netlat_join_ack_counts *c)
{
	return ps_run_moved(s, c, 0);
}

/*
 * A bulk flow acknowledged by pure ACKs B recorded: every segment has its
 * ACK delay, wire back and round trip exact; a repeat of an ACK (a window
 * update) with another TSval is not its carrier, nor is a first copy lost
 * when A's TSval is the repeat's; --b-offset moves B's pure ACKs too.
 */
static void test_join_pure_carrier(void)
{
	struct netlat_join_ack_counts c;
	struct psim s = { .ts = true };

	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.pure[0], PS_N);
	CHECK_U64(c.delay[0], PS_N);
	CHECK_U64(c.wire[0], PS_N);
	CHECK_U64(c.why[0][NETLAT_XACK_ALL], PS_N);
	CHECK_U64(c.acks_out[0], PS_N / 2);
	CHECK_U64(c.acks_out[1], 0);
	CHECK_U64(ps_run_moved(&s, &c, -1000000000), 0);
	CHECK_U64(c.pure[0], PS_N);
	s.dup = 5;
	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.pure[0], PS_N);
	CHECK_U64(c.acks_out[0], PS_N / 2 + 1);
	s.dup = 0;
	s.lost = 8;
	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.pure[0], PS_N);
}

/*
 * Two pure ACKs of one number in one TSval tick: which came first is
 * unknown, its two segments get the round trip only, counted.
 */
static void test_join_pure_tsval_shared(void)
{
	struct netlat_join_ack_counts c;
	struct psim s = { .ts = true, .same = 11 };

	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.pure[0], PS_N - 2);
	CHECK_U64(c.rtt[0], PS_N);
	CHECK_U64(c.why[0][NETLAT_XACK_TSVAL_SHARED], 2);
}

/*
 * Without the ACK's TSval (timestamps off, or A's records of 176 bytes):
 * a lone pure ACK of the number is the carrier, a number repeated leaves
 * its segments unverified.
 */
static void test_join_pure_no_tsval(void)
{
	struct netlat_join_ack_counts c;
	struct psim s = { .dup = 3 };

	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.pure[0], PS_N - 2);
	CHECK_U64(c.why[0][NETLAT_XACK_UNVERIFIED], 2);
	s = (struct psim){ .ts = true, .old_a = true, .lost = 4 };
	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.pure[0], PS_N - 2);
	CHECK_U64(c.why[0][NETLAT_XACK_UNVERIFIED], 2);
}

/*
 * B retransmitted a packet (its copy unrecorded carries the ACK number
 * of its time): the ACKs within a TSval tick of its life, and without
 * TSvals every segment that arrived before it ended, are not told apart.
 */
static void test_join_pure_retrans(void)
{
	struct netlat_join_ack_counts c;
	struct psim s = { .ts = true, .rtx = 10 };

	/* ACKs about 500 us apart: four within a tick of its 100 us, eight segments */
	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.why[0][NETLAT_XACK_TSVAL_SHARED], 8);
	/* the nine ACKs before it ended: eighteen segments */
	s.ts = false;
	CHECK_U64(ps_run(&s, &c), 0);
	CHECK_U64(c.why[0][NETLAT_XACK_UNVERIFIED], 18);
}

/* sim_pure()'s captures with @s written to @pa and @pb. */
static void ps_write(const struct psim *s, const char *pa, const char *pb)
{
	struct capture a = { 0 }, b = { 0 };

	sim_pure(s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	cap_free(&a);
	cap_free(&b);
}

/* netlat join's count line and JSON with B's pure ACKs recorded. */
static void test_cli_join_pure(void)
{
	/* A>B's reasons and counts, a packet's carrier, one not told apart */
	static const char *const json[] = {
		"\"unverified\":0,\"tsval_shared\":2,",
		"},\"ack_delay_pure\":38,\"acks_out\":21,\"stages\":{",
		",\"carrier\":\"pure_ack\"}", "\"why\":\"tsval_shared\",",
	};
	const char *pa = tmp_path("pure-join-a.nl"), *pb = tmp_path("pure-join-b.nl");
	struct run r;
	size_t i;

	ps_write(&(struct psim){ .ts = true, .same = 2 }, pa, pb);
	netlat(&r, "join", "--offset-only", pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "  the ACK's way back: 40 round trips, 38 B ACK delays (38 by pure "
		  "ACKs, of 21 TCP_ACK_OUT records), 38 wire backs of 40 joined packets; 0 ACKs "
		  "not recorded (pure ACK), 0 whose carrier A did not record arriving, 2 whose "
		  "TSval is not the ACK's alone, 0 retransmitted (Karn)");
	/* B>A: A recorded no pure ACKs, the line as it was */
	CHECK_HAS(r.out, "0 round trips, 0 A ACK delays, 0 wire backs of 10 joined packets; 0 "
		  "ACKs not recorded (pure ACK), 0 whose carrier B did not record arriving, 0 "
		  "retransmitted");
	run_free(&r);
	netlat(&r, "join", "--json", pa, pb, NULL);
	CHECK(r.status == 0 && json_valid(r.out, strlen(r.out)));
	for (i = 0; i < sizeof(json) / sizeof(json[0]); i++)
		CHECK_HAS(r.out, json[i]);
	run_free(&r);
}
