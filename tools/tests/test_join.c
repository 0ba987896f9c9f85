// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the two-host join (libnetlat_join.c, tools/join.c) on
 * synthetic captures of a request-response flow whose truth is known:
 * B's clock runs at a chosen offset and drift from A's, each packet's
 * one-way delay is a floor plus queueing. Included by test_netlat.c.
 */

#define SIM_T0		1000000000000ULL	/* A's time of the first request */

struct sim {
	unsigned int requests;
	uint64_t gap_ns;		/* between requests */
	int64_t offset_ns;		/* B - A at SIM_T0 */
	double ppm;			/* B's drift */
	uint64_t step_at;		/* B's clock steps by step_ns then (0: never) */
	int64_t step_ns;
	uint64_t floor_ab, floor_ba;	/* one-way delay floors */
	unsigned int forged;		/* request whose arrival B stamps too early (0: none) */
	bool one_way;			/* no responses */
	/* sim_rr(): request and reply, each ACK riding on the next packet */
	uint64_t reply_ns;		/* B replies this long after a request arrived */
	unsigned int late;		/* round whose reply follows a pure ACK (0: none) */
	unsigned int retrans_at;	/* request retransmitted (0: none) */
	unsigned int merged_at;		/* request a range of unrecorded ones follows */
	unsigned int old_tx;		/* hosts (1: A, 2: B) with 152-byte sent records */
	/* sim_rr()'s TCP timestamps option */
	unsigned int ts;		/* 1: sent records carry TSvals, 2: received ones */
	bool ts_old;			/* packet records of 168 bytes: no TSval fields */
	uint32_t ts_delta;		/* B got request retrans_at's retransmission:
					 * its TSval this much later */
	unsigned int tsdiff_at;		/* request whose copy at B has another TSval */
	bool echo_other;		/* request retrans_at's ACK echoed another TSval */
	bool rescued;			/* expected: retrans_at joined by TSval */
	bool forge_rescue;		/* B stamped that copy before A sent it */
	/* what the simulation produced */
	uint64_t b_read_bytes, a_read_bytes;
	unsigned int a_sent, b_sent;
};

static uint64_t sim_rng = 88172645463325252ULL;

static uint64_t sim_rand(void)
{
	sim_rng ^= sim_rng << 13;
	sim_rng ^= sim_rng >> 7;
	sim_rng ^= sim_rng << 17;
	return sim_rng;
}

/* Queueing: mostly a few microseconds, now and then up to 200 us. */
static uint64_t sim_queue(void)
{
	double u = (double)(sim_rand() % 1000000) / 1e6;

	return (uint64_t)(u * u * u * 200000);
}

static int64_t sim_theta(const struct sim *s, uint64_t t)
{
	int64_t th = s->offset_ns + (int64_t)(s->ppm * 1e-6 * (double)(int64_t)(t - SIM_T0));

	if (s->step_at && t >= s->step_at)
		th += s->step_ns;
	return th;
}

static uint64_t sim_b(const struct sim *s, uint64_t t)
{
	return t + sim_theta(s, t);
}

static uint64_t sim_seq_a, sim_seq_b;
static unsigned int sim_old_tx;	/* as struct sim's old_tx */
static uint16_t sim_pkt_size;	/* packet records' size, 0: the full one */

static struct netlat_rec_tcp_pkt *sim_tx(struct capture *c, uint64_t *rseq, bool a,
					 uint32_t seq, uint32_t len, uint64_t sendmsg,
					 uint64_t driver, uint16_t segs)
{
	uint16_t size = sim_old_tx & (a ? 1 : 2) ?
			offsetof(struct netlat_rec_tcp_pkt, ack_rx_ns) :
			sim_pkt_size ? sim_pkt_size : sizeof(struct netlat_rec_tcp_pkt);
	struct netlat_rec_tcp_pkt *p = cap_tcp(c, NETLAT_REC_TCP_PKT, size, (*rseq)++, 0);

	if (a)
		set_flow(p, AF_INET, "192.0.2.1", 40000, "192.0.2.2", 6379, 1);
	else
		set_flow(p, AF_INET, "192.0.2.2", 6379, "192.0.2.1", 40000, 2);
	p->hdr.ts_ns = driver + 100000;
	p->seq = seq;
	p->end_seq = seq + len;
	p->sendmsg_ns = sendmsg;
	p->xmit_ns = sendmsg + 4000;
	p->qdisc_ns = driver - 2000;
	p->driver_ns = driver;
	p->end_ns = driver + 100000;
	p->segs = segs;
	p->flags = NETLAT_PKT_ACKED;
	return p;
}

static struct netlat_rec_rx_pkt *sim_rx(struct capture *c, uint64_t *rseq, bool a,
					uint32_t seq, uint32_t len, uint64_t netif, uint16_t segs)
{
	struct netlat_rec_rx_pkt *r = cap_tcp(c, NETLAT_REC_RX_PKT,
					      sim_pkt_size ? sim_pkt_size : sizeof(*r),
					      (*rseq)++, 0);

	if (a)
		set_flow(r, AF_INET, "192.0.2.1", 40000, "192.0.2.2", 6379, 1);
	else
		set_flow(r, AF_INET, "192.0.2.2", 6379, "192.0.2.1", 40000, 2);
	r->hdr.ts_ns = netif + 30000;
	r->netif_ns = netif;
	r->transport_ns = netif + 3000;
	r->queue_ns = netif + 5000;
	r->end_ns = netif + 30000;
	r->seq = seq;
	r->end_seq = seq + len;
	r->len = len;
	r->segs = segs;
	r->proto = NETLAT_RX_TCP;
	r->flags = NETLAT_RXP_NETIF | NETLAT_RXP_QUEUED | NETLAT_RXP_COPIED;
	return r;
}

/*
 * Requests from A (100 bytes; every 7th 2,896 bytes in two segments that
 * B receives apart), responses from B (300 bytes; every 5th written as two
 * 1,000-byte packets that A's GRO merges). Request 100 is retransmitted
 * 200 ms later; response 200 never arrives.
 */
static void sim_run(struct sim *s, struct capture *a, struct capture *b)
{
	uint32_t sa = 0xfffff000, sb = 0x7ffffff0;	/* both wrap */
	unsigned int i;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(a, 1);
	cap_stream(b, 1);
	for (i = 0; i < s->requests; i++) {
		uint64_t t = SIM_T0 + i * s->gap_ns, t1 = t + 10000, t2, t3, t4;
		uint32_t len = i % 7 == 3 ? 2896 : 100;
		struct netlat_rec_tcp_pkt *p;

		p = sim_tx(a, &sim_seq_a, true, sa, len, t, t1, len > 1448 ? 2 : 1);
		s->a_sent++;
		t2 = t1 + s->floor_ab + sim_queue();
		if (i == 100) {
			p->retrans = 1;
			t2 += 200000000;
		}
		if (len > 1448) {
			sim_rx(b, &sim_seq_b, false, sa, 1448, sim_b(s, t2), 1);
			t2 += 12000;
			sim_rx(b, &sim_seq_b, false, sa + 1448, len - 1448, sim_b(s, t2), 1);
		} else if (s->forged && i == s->forged) {
			/* stamped 100 us before A's driver saw it leave */
			sim_rx(b, &sim_seq_b, false, sa, len, sim_b(s, t1) - 100000, 1);
		} else {
			sim_rx(b, &sim_seq_b, false, sa, len, sim_b(s, t2), 1);
		}
		s->b_read_bytes += len;
		sa += len;
		if (s->one_way)
			continue;
		/* B answers 40 us after its read */
		t3 = t2 + 40000;
		if (i % 5 == 1) {
			sim_tx(b, &sim_seq_b, false, sb, 1000, sim_b(s, t3 - 10000), sim_b(s, t3), 1);
			sim_tx(b, &sim_seq_b, false, sb + 1000, 1000, sim_b(s, t3 - 2000),
			       sim_b(s, t3 + 8000), 1);
			s->b_sent += 2;
			t4 = t3 + 8000 + s->floor_ba + sim_queue();
			sim_rx(a, &sim_seq_a, true, sb, 2000, t4, 2);
			s->a_read_bytes += 2000;
			sb += 2000;
			continue;
		}
		sim_tx(b, &sim_seq_b, false, sb, 300, sim_b(s, t3 - 10000), sim_b(s, t3), 1);
		s->b_sent++;
		t4 = t3 + s->floor_ba + sim_queue();
		if (i != 200) {
			sim_rx(a, &sim_seq_a, true, sb, 300, t4, 1);
			s->a_read_bytes += 300;
		}
		sb += 300;
	}
}

static struct netlat_join *sim_join(const struct capture *a, const struct capture *b,
				    const struct netlat_join_opts *o)
{
	struct netlat_join *j = netlat_join_new(o);
	const struct capture *cap[2] = { a, b };
	const struct netlat_rec_hdr *rec;
	unsigned int h;

	if (!CHECK(j))
		return NULL;
	for (h = 0; h < 2; h++) {
		const char *path = tmp_path(h ? "join-b.nl" : "join-a.nl");
		struct netlat_source *src;

		if (!CHECK(cap_write(cap[h], path) == 0))
			continue;
		src = netlat_open(path, NULL);
		if (!CHECK(src))
			continue;
		while (netlat_next(src, &rec) > 0)
			CHECK(netlat_join_add(j, h, rec) == 0);
		netlat_close(src);
	}
	CHECK(netlat_join_run(j) == 0);
	return j;
}

/* Slack for the model's one approximation: theta read at a packet's
 * arrival rather than its departure (drift x one-way delay). */
#define SIM_SLACK_NS	200

/*
 * The truth inside every bound: each window's, and each pair's wire.
 * Returns the pairs with a wire time.
 */
static int64_t sim_worst_error;	/* the largest |wire_ns - truth| of check_truth() */

static size_t check_truth(const struct sim *s, const struct netlat_join *j)
{
	const struct netlat_clock_est *w;
	const struct netlat_xpkt *p;
	size_t nw = netlat_join_windows(j, &w), n = netlat_join_pairs(j, &p), i, bad = 0,
	       timed = 0;

	for (i = 0; i < nw; i++) {
		int64_t th = sim_theta(s, w[i].at_ns);

		if (w[i].flags & NETLAT_CLOCK_NONE)
			continue;
		if ((w[i].lo_ns != INT64_MIN && w[i].lo_ns - SIM_SLACK_NS > th) ||
		    (w[i].hi_ns != INT64_MAX && w[i].hi_ns + SIM_SLACK_NS < th)) {
			fprintf(stderr, "# window %zu: theta %lld outside [%lld, %lld]\n", i,
				(long long)th, (long long)w[i].lo_ns, (long long)w[i].hi_ns);
			bad++;
		}
	}
	sim_worst_error = 0;
	for (i = 0; i < n; i++) {
		int64_t truth;

		if (p[i].flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_NO_CLOCK |
				  NETLAT_XPKT_RETRANS | NETLAT_XPKT_IMPOSSIBLE))
			continue;
		timed++;
		if (p[i].sender == 0) {
			/* B stamped the arrival at A-time T2: raw - theta(T2) */
			uint64_t t2 = p[i].rx->netif_ns - sim_theta(s, p[i].tx->driver_ns);

			truth = p[i].raw_ns - sim_theta(s, t2);
		} else {
			uint64_t t3 = p[i].tx->driver_ns - sim_theta(s, p[i].rx->netif_ns);

			truth = p[i].raw_ns + sim_theta(s, t3);
		}
		if (llabs(p[i].wire_ns - truth) > sim_worst_error)
			sim_worst_error = llabs(p[i].wire_ns - truth);
		if (truth < p[i].wire_lo_ns - SIM_SLACK_NS ||
		    (p[i].wire_hi_ns != INT64_MAX && truth > p[i].wire_hi_ns + SIM_SLACK_NS)) {
			if (bad++ < 5)
				fprintf(stderr, "# pair %zu (%s sent %u): wire %lld outside [%lld, %lld]\n",
					i, p[i].sender ? "B" : "A", p[i].seq, (long long)truth,
					(long long)p[i].wire_lo_ns, (long long)p[i].wire_hi_ns);
		}
	}
	CHECK_U64(bad, 0);
	return timed;
}

/* A known offset and 200 ppm: recovered, the truth inside every bound. */
static void test_join_offset_and_drift(void)
{
	struct sim s = { .requests = 15000, .gap_ns = 2000000, .offset_ns = 3200000000LL,
			 .ppm = 200, .floor_ab = 20000, .floor_ba = 20000 };
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join_counts c;
	struct netlat_clock_est g;
	const struct netlat_clock_est *w;
	struct netlat_join *j;
	size_t nw, timed;

	sim_run(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	netlat_join_clock(j, &g);
	nw = netlat_join_windows(j, &w);
	CHECK(!(g.flags & (NETLAT_CLOCK_NONE | NETLAT_CLOCK_NO_UPPER | NETLAT_CLOCK_NO_LOWER)));
	/* 30 s of traffic in 10 s windows */
	CHECK(nw == 3);
	CHECK(g.drift_lo_ppm <= 200 && g.drift_hi_ppm >= 200);
	CHECK(g.drift_hi_ppm - g.drift_lo_ppm < 10);
	CHECK(g.lo_ns <= sim_theta(&s, g.at_ns) && g.hi_ns >= sim_theta(&s, g.at_ns));
	/* the bound: about the floors, 40 us wide */
	CHECK(g.hi_ns - g.lo_ns <= 45000 && g.hi_ns - g.lo_ns >= 30000);
	timed = check_truth(&s, j);
	/* equal floors: the middle of the bound is the truth, to the queueing's grain */
	fprintf(stderr, "# worst wire error %lld ns\n", (long long)sim_worst_error);
	CHECK(sim_worst_error < 1000);
	netlat_join_counts(j, &c);
	/* every request joined; its bytes are what B read */
	CHECK_U64(c.sent[0], s.a_sent);
	CHECK_U64(c.joined[0], s.a_sent);
	CHECK_U64(c.joined_bytes[0], s.b_read_bytes);
	CHECK_U64(c.retrans[0], 1);
	CHECK_U64(c.impossible[0] + c.impossible[1], 0);
	/* every response but the lost one */
	CHECK_U64(c.sent[1], s.b_sent);
	CHECK_U64(c.joined[1], s.b_sent - 1);
	CHECK_U64(c.no_record[1], 1);
	CHECK_U64(c.joined_bytes[1], s.a_read_bytes);
	CHECK_U64(c.received_unjoined[0] + c.received_unjoined[1], 0);
	/* pairs with a wire: all but the retransmission's */
	CHECK_U64(timed, c.pairs[0] + c.pairs[1] - 1);
	netlat_join_free(j);
out:
	cap_free(&a);
	cap_free(&b);
}

/* GSO on the sender and GRO on the receiver: flagged, the bytes counted once. */
static void test_join_gso_gro(void)
{
	struct sim s = { .requests = 700, .gap_ns = 1000000, .offset_ns = -5000000,
			 .floor_ab = 30000, .floor_ba = 10000 };
	struct capture a = { 0 }, b = { 0 };
	const struct netlat_xpkt *p;
	struct netlat_join *j;
	size_t n, i, split = 0, merged = 0, exact = 0;

	sim_run(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	n = netlat_join_pairs(j, &p);
	for (i = 0; i < n; i++) {
		split += !!(p[i].flags & NETLAT_XPKT_GSO_SPLIT);
		merged += !!(p[i].flags & NETLAT_XPKT_GRO_MERGED);
		exact += !!(p[i].flags & NETLAT_XPKT_EXACT);
		/* never both exact and split or merged */
		CHECK(!(p[i].flags & NETLAT_XPKT_EXACT) ||
		      !(p[i].flags & (NETLAT_XPKT_GSO_SPLIT | NETLAT_XPKT_GRO_MERGED)));
	}
	/* 100 requests of two segments, 140 responses of two packets */
	CHECK_U64(split, 2 * 100);
	CHECK_U64(merged, 2 * 140);
	CHECK(exact > 0);
	check_truth(&s, j);
	/* an asymmetry of 20 us, known: the estimate lands on the truth */
	netlat_join_free(j);
	{
		struct netlat_join_opts o = { .asym_ns = 20000 };
		struct netlat_clock_est g;

		j = sim_join(&a, &b, &o);
		if (!j)
			goto out;
		netlat_join_clock(j, &g);
		CHECK(llabs(g.offset_ns - sim_theta(&s, g.at_ns)) < 3000);
		netlat_join_free(j);
	}
out:
	cap_free(&a);
	cap_free(&b);
}

/* A pair stamped before it left is flagged, never averaged in. */
static void test_join_forged_pair(void)
{
	struct sim s = { .requests = 3000, .gap_ns = 1000000, .offset_ns = 700000,
			 .ppm = -50, .floor_ab = 20000, .floor_ba = 20000, .forged = 1234 };
	struct capture a = { 0 }, b = { 0 };
	const struct netlat_xpkt *p;
	struct netlat_join_counts c;
	struct netlat_join *j;
	size_t n, i, flagged = 0;

	sim_run(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	netlat_join_counts(j, &c);
	CHECK_U64(c.impossible[0], 1);
	CHECK_U64(c.impossible[1], 0);
	n = netlat_join_pairs(j, &p);
	for (i = 0; i < n; i++)
		if (p[i].flags & NETLAT_XPKT_IMPOSSIBLE) {
			flagged++;
			CHECK(p[i].sender == 0 && p[i].raw_ns < sim_theta(&s, p[i].tx->driver_ns));
		}
	CHECK_U64(flagged, 1);
	check_truth(&s, j);
	netlat_join_free(j);
out:
	cap_free(&a);
	cap_free(&b);
}

/* B's clock steps by 5 ms: no line across it, its window gets no clock. */
static void test_join_clock_step(void)
{
	struct sim s = { .requests = 10000, .gap_ns = 2000000, .offset_ns = 1000000,
			 .ppm = 20, .floor_ab = 20000, .floor_ba = 20000,
			 .step_at = SIM_T0 + 14300000000ULL, .step_ns = 5000000 };
	struct capture a = { 0 }, b = { 0 };
	const struct netlat_clock_est *w;
	struct netlat_clock_est g;
	struct netlat_join *j;
	size_t nw, i, none = 0, step = 0;

	sim_run(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	netlat_join_clock(j, &g);
	CHECK(g.flags & NETLAT_CLOCK_NONE);
	nw = netlat_join_windows(j, &w);
	for (i = 0; i < nw; i++) {
		none += !!(w[i].flags & NETLAT_CLOCK_NONE);
		step += !!(w[i].flags & NETLAT_CLOCK_STEP);
		/* the step's own window has no clock, or starts at it */
		if (w[i].from_ns < s.step_at && w[i].to_ns > s.step_at + 1000000)
			CHECK(w[i].flags & NETLAT_CLOCK_NONE);
	}
	/* the window after the step says so, whatever lies between */
	CHECK_U64(step, 1);
	check_truth(&s, j);
	netlat_join_free(j);
out:
	cap_free(&a);
	cap_free(&b);
}

/* One direction only: a bound on one side, said so; no wire below zero. */
static void test_join_one_way(void)
{
	struct sim s = { .requests = 500, .gap_ns = 1000000, .offset_ns = 42000,
			 .floor_ab = 20000, .one_way = true };
	struct capture a = { 0 }, b = { 0 };
	const struct netlat_xpkt *p;
	struct netlat_clock_est g;
	struct netlat_join *j;
	size_t n, i;

	sim_run(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	netlat_join_clock(j, &g);
	CHECK(g.flags & NETLAT_CLOCK_NO_LOWER);
	CHECK(g.lo_ns == INT64_MIN && g.hi_ns >= sim_theta(&s, g.at_ns));
	n = netlat_join_pairs(j, &p);
	for (i = 0; i < n; i++)
		if (!(p[i].flags & (NETLAT_XPKT_RETRANS | NETLAT_XPKT_NO_CLOCK)))
			CHECK(p[i].wire_lo_ns >= 0 && p[i].wire_hi_ns == INT64_MAX);
	check_truth(&s, j);
	netlat_join_free(j);
out:
	cap_free(&a);
	cap_free(&b);
}

/*
 * What a split packet counts (A's sends against B's receives): a sent
 * packet whose first segment B never recorded still gives its stages; one
 * with a stamped pair among unstamped ones has a wire time (not no_stamp);
 * a GRO record spanning three sent packets joins each, however long.
 */
static void test_join_split_counts(void)
{
	const uint64_t t = SIM_T0;
	struct capture a = { 0 }, b = { 0 };
	const char *pa = tmp_path("split-a.nl"), *pb = tmp_path("split-b.nl");
	struct netlat_join_counts c;
	struct netlat_rec_rx_pkt *r;
	struct netlat_join *j;
	struct run run;
	unsigned int i;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(&a, 1);
	cap_stream(&b, 1);
	for (i = 0; i < 3; i++)
		sim_tx(&a, &sim_seq_a, true, 1000 + i * 2896, 2896, t + i * 1000000,
		       t + i * 1000000 + 10000, 2);
	for (i = 0; i < 4; i++)
		sim_tx(&a, &sim_seq_a, true, 9688 + i * 100, 100, t + (3 + i) * 1000000,
		       t + (3 + i) * 1000000 + 10000, 1);
	/* 1: B lost the first segment's record */
	sim_rx(&b, &sim_seq_b, false, 1000 + 1448, 1448, t + 50000, 1);
	/* 2: the first half unstamped, the second stamped */
	r = sim_rx(&b, &sim_seq_b, false, 3896, 1448, t + 1050000, 1);
	r->flags &= ~NETLAT_RXP_NETIF;
	sim_rx(&b, &sim_seq_b, false, 3896 + 1448, 1448, t + 1060000, 1);
	/* 3: neither stamped */
	for (i = 0; i < 2; i++) {
		r = sim_rx(&b, &sim_seq_b, false, 6792 + i * 1448, 1448, t + 2050000, 1);
		r->flags &= ~NETLAT_RXP_NETIF;
	}
	/* 4-6 in one GRO record, 7 alone */
	sim_rx(&b, &sim_seq_b, false, 9688, 300, t + 5050000, 3);
	sim_rx(&b, &sim_seq_b, false, 9988, 100, t + 6050000, 1);

	j = sim_join(&a, &b, NULL);
	if (j) {
		netlat_join_counts(j, &c);
		CHECK_U64(c.sent[0], 7);
		CHECK_U64(c.joined[0], 7);
		CHECK_U64(c.no_stamp[0], 1);
		CHECK_U64(c.pairs[0], 9);
		CHECK_U64(c.received_unjoined[0], 0);
		netlat_join_free(j);
	}
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&run, "join", "--json", pa, pb, NULL);
	CHECK_U64(run.status, 0);
	/* every joined packet's send stages, each receive record's once */
	CHECK_HAS(run.out, "\"A sendmsg>xmit\":{\"count\":7,");
	CHECK_HAS(run.out, "\"B netif>tcp\":{\"count\":7,");
	run_free(&run);
	/* one direction only: the wire row says it is a bound */
	netlat(&run, "join", pa, pb, NULL);
	CHECK_U64(run.status, 0);
	CHECK_HAS(run.out, "at least: 6 of them bounded on one side only");
	run_free(&run);
	/* an offset that takes B's times below zero is refused, not wrapped */
	netlat(&run, "join", "--b-offset", "-2000s", pa, pb, NULL);
	CHECK_U64(run.status, 1);
	CHECK_HAS(run.err, "--b-offset and --b-ppm move a time below zero");
	run_free(&run);
	{
		struct netlat_join_opts o = { .b_offset_ns = -2000000000000LL };
		struct netlat_join *jj = netlat_join_new(&o);
		const struct netlat_rec_hdr *rec = (const void *)(b.buf + b.len - sizeof(*r));

		if (CHECK(jj)) {
			CHECK(rec->type == NETLAT_REC_RX_PKT);
			CHECK(netlat_join_add(jj, 1, rec) == -ERANGE);
			CHECK(netlat_join_add(jj, 0, rec) == 0);
			netlat_join_free(jj);
		}
	}
	cap_free(&a);
	cap_free(&b);
	/* no packet at all: nothing bounds the clock, said so */
	cap_stream(&a, 1);
	cap_stream(&b, 1);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&run, "join", pa, pb, NULL);
	CHECK_U64(run.status, 0);
	CHECK_HAS(run.out, "no pair with a driver time and a receive stamp: nothing bounds it");
	CHECK(!strstr(run.out, "no clock fits"));
	run_free(&run);
	cap_free(&a);
	cap_free(&b);
}

/* netlat join on the files: the text and the JSON, and bad arguments. */
static void test_cli_join(void)
{
	struct sim s = { .requests = 2000, .gap_ns = 1000000, .offset_ns = 3200000000LL,
			 .ppm = 100, .floor_ab = 20000, .floor_ba = 20000 };
	struct capture a = { 0 }, b = { 0 }, both = { 0 };
	const char *pa = tmp_path("cli-join-a.nl"), *pb = tmp_path("cli-join-b.nl");
	const char *pboth = tmp_path("cli-join-both.nl");
	struct run r;

	sim_run(&s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&r, "join", pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "clock B-A at A 1000.");
	CHECK_HAS(r.out, "+3.200");
	CHECK_HAS(r.out, "A>B: 2000 of 2000 sent packets joined");
	CHECK_HAS(r.out, "1 retransmitted (Karn)");
	CHECK_HAS(r.out, "wire A>B");
	CHECK_HAS(r.out, "B netif>tcp");
	CHECK_HAS(r.out, "median packet:");
	run_free(&r);
	netlat(&r, "join", "--json", pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"directions\":[{\"sender\":\"A\",\"receiver\":\"B\",\"sent\":2000,");
	CHECK_HAS(r.out, "\"flags\":[\"exact\"]");
	CHECK_HAS(r.out, "\"flags\":[\"retrans\"]");
	run_free(&r);
	/* B's drift undone by --b-ppm: none left, the offset moved by --b-offset */
	netlat(&r, "join", "--json", "--no-packets", "--b-ppm", "-100", "--b-offset", "-3.2s",
	       pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!strstr(r.out, "\"packets\""));
	{
		const char *c = strstr(r.out, "\"clock\":{");
		double lo = 1, hi = -1;
		long long off = 1LL << 62;

		CHECK(c && sscanf(c, "\"clock\":{\"from_ns\":%*u,\"to_ns\":%*u,\"at_ns\":%*u,"
				  "\"offset_ns\":%lld", &off) == 1);
		c = c ? strstr(c, "\"drift_lo_ppm\":") : NULL;
		CHECK(c && sscanf(c, "\"drift_lo_ppm\":%lf,\"drift_hi_ppm\":%lf", &lo, &hi) == 2);
		CHECK(lo <= 0 && hi >= 0);
		/* 3.2 s less 3.2 s, and -100 ppm of B's time (1000 s + 3.2 s) */
		CHECK(llabs(off + 100320000) < 100000);
	}
	run_free(&r);
	/* one capture of both hosts (namespaces of one machine): the same clock */
	cap_bytes(&both, a.buf, a.len);
	cap_bytes(&both, b.buf + 0, b.len);
	CHECK(cap_write(&both, pboth) == 0);
	netlat(&r, "join", "--a-addr", "192.0.2.1", "--b-addr", "192.0.2.2", pboth, pboth, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "A>B: 2000 of 2000 sent packets joined");
	run_free(&r);
	netlat(&r, "join", pa, NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "two captures");
	run_free(&r);
	netlat(&r, "join", "--max-drift", "-3", pa, pb, NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "bad drift");
	run_free(&r);
	netlat(&r, "join", "--a-addr", "192.0.2.999", pa, pb, NULL);
	CHECK_U64(r.status, 2);
	run_free(&r);
	netlat(&r, "join", "--a-addr", "192.0.2.1", pa, pb, NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "go together");
	run_free(&r);
	netlat(&r, "join", "--max-drift", "nan", pa, pb, NULL);
	CHECK_U64(r.status, 2);
	run_free(&r);
	netlat(&r, "join", pa, tmp_path("no-such.nl"), NULL);
	CHECK_U64(r.status, 1);
	run_free(&r);
	cap_free(&a);
	cap_free(&b);
	cap_free(&both);
}

/* report --peer: the report of A, then its join with B; one JSON object. */
static void test_cli_report_peer(void)
{
	struct sim s = { .requests = 300, .gap_ns = 1000000, .offset_ns = 5000000,
			 .floor_ab = 20000, .floor_ba = 20000 };
	const char *pa = tmp_path("peer-a.nl"), *pb = tmp_path("peer-b.nl");
	struct capture a = { 0 }, b = { 0 };
	const char *rep, *join;
	struct run r;

	sim_run(&s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&r, "report", "--peer", pb, pa, NULL);
	CHECK_U64(r.status, 0);
	rep = strstr(r.out, "records");
	join = strstr(r.out, "Joined with the peer's capture (netlat join ");
	CHECK(rep && join && rep < join);
	CHECK_HAS(r.out, "A>B: 300 of 300 sent packets joined");
	CHECK_HAS(r.out, "wire B>A");
	run_free(&r);
	netlat(&r, "report", "--json", "--peer", pb, pa, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK(!strncmp(r.out, "{\"report\":{", 11));
	CHECK_HAS(r.out, ",\"join\":{\"hosts\":[");
	CHECK_HAS(r.out, "\"sender\":\"A\",\"receiver\":\"B\",\"sent\":300,");
	/* the join's summary only: no per-packet array */
	CHECK(!strstr(r.out, "\"packets\":["));
	run_free(&r);
	netlat(&r, "report", "--peer", tmp_path("no-such-peer.nl"), pa, NULL);
	CHECK_U64(r.status, 1);
	run_free(&r);
	cap_free(&a);
	cap_free(&b);
}

/* A HOST note and two CLOCK notes 10 s apart, B's 200 ppm fast and stepped. */
static void cap_host_notes(struct capture *c, const char *name, const char *boot, bool b)
{
	unsigned char buf[NETLAT_REC_MAX_SIZE];
	char text[256];
	size_t n;

	snprintf(text, sizeof(text), "hostname %s\nboot_id %s\naddr 192.0.2.%d\n", name, boot,
		 b ? 2 : 1);
	n = netlat_note_text(buf, sizeof(buf), NETLAT_NOTE_HOST, text);
	cap_bytes(c, buf, n);
	n = netlat_note_text(buf, sizeof(buf), NETLAT_NOTE_CLOCK,
			     "monotonic 1000000000000\nrealtime 1700000000000000000\n"
			     "monotonic_raw 1000000000000\nstatus 64\nfreq 0\n");
	cap_bytes(c, buf, n);
	n = netlat_note_text(buf, sizeof(buf), NETLAT_NOTE_CLOCK, b ?
			     "monotonic 1010002000000\nrealtime 1700000010005000000\n"
			     "monotonic_raw 1010000000000\nstatus 0\nfreq 13107200\ntick 10010\n"
			     "user_hz 100\n" :
			     "monotonic 1010000000000\nrealtime 1700000010000000000\n"
			     "monotonic_raw 1010000000000\nstatus 64\nfreq 0\n");
	cap_bytes(c, buf, n);
}

/* The host notes: names, clocks, and one boot id meaning one clock. */
static void test_cli_join_host_notes(void)
{
	struct sim s = { .requests = 300, .gap_ns = 1000000, .floor_ab = 20000,
			 .floor_ba = 20000 };
	struct capture a = { 0 }, b = { 0 };
	const char *pa = tmp_path("notes-join-a.nl"), *pb = tmp_path("notes-join-b.nl");
	struct run r;

	sim_run(&s, &a, &b);
	cap_host_notes(&a, "alpha", "0b5e6c1a-1111-2222-3333-444455556666", false);
	cap_host_notes(&b, "beta", "0b5e6c1a-1111-2222-3333-444455556666", true);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&r, "join", pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "A: alpha (boot 0b5e6c1a), adjtimex freq +0.000 ppm (unsynchronised), "
		  "MONOTONIC +0.0 ppm of MONOTONIC_RAW over 10 s\n");
	CHECK_HAS(r.out, "B: beta (boot 0b5e6c1a), adjtimex freq +200.000 ppm (+0.000 at the start), "
		  "tick +1000 ppm, MONOTONIC +200.0 ppm of MONOTONIC_RAW over 10 s, "
		  "REALTIME stepped 1 time\n");
	/* the simulation's clocks agree: one machine, 0 inside */
	CHECK_HAS(r.out, "A and B are one machine (one boot id): one clock, B-A is 0, inside the bound");
	run_free(&r);
	netlat(&r, "join", "--json", "--no-packets", pa, pb, NULL);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "{\"host\":\"B\",\"hostname\":\"beta\",\"boot_id\":"
		  "\"0b5e6c1a-1111-2222-3333-444455556666\",\"clock_notes\":2,\"freq_ppm\":200.000,"
		  "\"tick_ppm\":1000,\"slew_ppm\":200.000,\"realtime_steps\":1}],\"one_boot\":true,");
	run_free(&r);
	/* one boot id but 1 ms apart: the stamps disagree, said so */
	netlat(&r, "join", "--b-offset", "1ms", pa, pb, NULL);
	CHECK_HAS(r.out, "B-A is 0, OUTSIDE the bound: the stamps disagree");
	run_free(&r);
	/* without notes: said so */
	cap_free(&a);
	cap_free(&b);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	sim_run(&s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&r, "join", pa, pb, NULL);
	CHECK_HAS(r.out, "(no host notes: not written by netlat record)");
	CHECK(!strstr(r.out, "one machine"));
	run_free(&r);
	cap_free(&a);
	cap_free(&b);
}

/* A flow of 3 GiB (1 MiB records): B's numbering meets A's past the 2 GiB a wrap allows. */
static void test_join_long_flow(void)
{
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join_counts c;
	struct netlat_join *j;
	uint32_t seq = 0x10000000;
	unsigned int i;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(&a, 1);
	cap_stream(&b, 1);
	for (i = 0; i < 3072; i++) {
		uint64_t t = SIM_T0 + i * 1000000ull;

		sim_tx(&a, &sim_seq_a, true, seq, 1 << 20, t, t + 10000, 1);
		sim_rx(&b, &sim_seq_b, false, seq, 1 << 20, t + 50000, 1);
		seq += 1 << 20;
	}
	j = sim_join(&a, &b, NULL);
	if (j) {
		netlat_join_counts(j, &c);
		CHECK_U64(c.joined[0], 3072);
		CHECK_U64(c.joined_bytes[0], 3072ull << 20);
		CHECK_U64(c.received_unjoined[0], 0);
		netlat_join_free(j);
	}
	cap_free(&a);
	cap_free(&b);
}

/*
 * Pairs of one time at a window's end (GRO merged two of B's packets into
 * one of A's): all in one window, bounded by the polygon they are in.
 */
static void test_join_window_ties(void)
{
	struct sim s = { .floor_ab = 20000, .floor_ba = 20000 };
	struct capture a = { 0 }, b = { 0 };
	const struct netlat_xpkt *p;
	struct netlat_join *j;
	const struct netlat_clock_est *w;
	uint32_t sa = 1000, sb = 5000;
	size_t n, i, bad = 0, nw;
	unsigned int k;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(&a, 1);
	cap_stream(&b, 1);
	for (k = 0; k < 24000; k++) {
		uint64_t t = SIM_T0 + k * 1000000ull;

		sim_tx(&a, &sim_seq_a, true, sa, 100, t, t + 10000, 1);
		sim_rx(&b, &sim_seq_b, false, sa, 100, t + 10000 + 20000 + sim_queue(), 1);
		sa += 100;
		if (k == 12000 || k == 12500) {
			/* two of B's packets, one skb at A */
			sim_tx(&b, &sim_seq_b, false, sb, 100, t + 100000, t + 110000, 1);
			sim_tx(&b, &sim_seq_b, false, sb + 100, 100, t + 100000, t + 115000, 1);
			sim_rx(&a, &sim_seq_a, true, sb, 200, t + 140000, 2);
			sb += 200;
		}
	}
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	n = netlat_join_pairs(j, &p);
	for (i = 0; i < n; i++) {
		if (p[i].flags & (NETLAT_XPKT_NO_CLOCK | NETLAT_XPKT_IMPOSSIBLE))
			bad++;
		else if (p[i].wire_lo_ns > p[i].wire_hi_ns || p[i].wire_ns < p[i].wire_lo_ns)
			bad++;
	}
	CHECK_U64(bad, 0);
	/* each window counts exactly the pairs of its time span */
	nw = netlat_join_windows(j, &w);
	for (k = 0; k < nw; k++) {
		uint64_t ab = 0, ba = 0;

		for (i = 0; i < n; i++) {
			uint64_t x = p[i].sender ? p[i].rx->netif_ns : p[i].tx->driver_ns;

			if (x >= w[k].from_ns && x < w[k].to_ns) {
				ab += !p[i].sender;
				ba += p[i].sender;
			}
		}
		CHECK_U64(w[k].samples_ab, ab);
		CHECK_U64(w[k].samples_ba, ba);
	}
	check_truth(&s, j);
	netlat_join_free(j);
out:
	cap_free(&a);
	cap_free(&b);
}

/*
 * A segment retransmitted after its ACK was lost: B received both copies,
 * A sent two. Its bytes are joined once, as B's reader read them once.
 */
static void test_join_duplicate_copies(void)
{
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join_counts c;
	struct netlat_rec_tcp_pkt *p;
	struct netlat_join *j;
	uint64_t t = SIM_T0;
	uint32_t seq = 5000;
	unsigned int i;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(&a, 1);
	cap_stream(&b, 1);
	for (i = 0; i < 20; i++, t += 1000000, seq += 1000) {
		sim_tx(&a, &sim_seq_a, true, seq, 1000, t, t + 10000, 1);
		sim_rx(&b, &sim_seq_b, false, seq, 1000, t + 50000, 1);
		if (i != 7)
			continue;
		/* and once more, 200 ms later, whole and arriving whole */
		p = sim_tx(&a, &sim_seq_a, true, seq, 1000, t + 200000000, t + 200010000, 1);
		p->retrans = 1;
		sim_rx(&b, &sim_seq_b, false, seq, 1000, t + 200050000, 1);
	}
	j = sim_join(&a, &b, NULL);
	if (j) {
		netlat_join_counts(j, &c);
		CHECK_U64(c.sent[0], 21);
		CHECK_U64(c.joined[0], 21);
		CHECK_U64(c.retrans[0], 1);
		CHECK_U64(c.joined_bytes[0], 20000);
		netlat_join_free(j);
	}
	cap_free(&a);
	cap_free(&b);
}

/* ---- netlat join --chrome-trace ----------------------------------------- */

struct jt_ev {
	char ph;
	unsigned int pid, tid;
	uint64_t ts, dur;		/* ns from the trace's base */
	uint64_t from;			/* a slice's record time (its host's clock) */
	long long shift;
	bool receive, netif;
};

static const char *jt_find(const char *l, const char *key)
{
	char k[40];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(l, k);
	return p ? p + strlen(k) : NULL;
}

/* "ts":123.456 (microseconds, three decimals) as nanoseconds */
static bool jt_us(const char *l, const char *key, uint64_t *ns)
{
	const char *p = jt_find(l, key);
	unsigned long long us, frac;

	if (!p || sscanf(p, "%llu.%3llu", &us, &frac) != 2)
		return false;
	*ns = us * 1000 + frac;
	return true;
}

/* The events of a trace file, one per line as join writes them. */
static size_t jt_parse(char *text, struct jt_ev **out, uint64_t *base)
{
	size_t n = 0, cap = 0;
	struct jt_ev *ev = NULL;
	char *line, *save = NULL;
	const char *p;

	*base = 0;
	p = jt_find(text, "base_ns");
	if (p)
		*base = strtoull(p + 1, NULL, 10);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct jt_ev e = { 0 };

		p = jt_find(line, "ph");
		if (!p || !jt_find(line, "pid"))
			continue;
		e.ph = p[1];
		e.pid = (unsigned int)strtoul(jt_find(line, "pid"), NULL, 10);
		e.tid = (unsigned int)strtoul(jt_find(line, "tid"), NULL, 10);
		jt_us(line, "ts", &e.ts);
		jt_us(line, "dur", &e.dur);
		if ((p = jt_find(line, "from_ns")))
			e.from = strtoull(p, NULL, 10);
		if ((p = jt_find(line, "clock_shift_ns")))
			e.shift = strtoll(p, NULL, 10);
		e.receive = strstr(line, "\"cat\":\"receive\"");
		e.netif = strstr(line, "\"name\":\"netif>tcp\"");
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			ev = realloc(ev, cap * sizeof(*ev));
			if (!ev)
				return 0;
		}
		ev[n++] = e;
	}
	*out = ev;
	return n;
}

static int jt_cmp_track(const void *a, const void *b)
{
	const struct jt_ev *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ph - y->ph;
}

/*
 * Per thread: its slices in a row, never overlapping; each arrow on a
 * slice of its thread; each thread in one process. The faults found.
 */
static size_t jt_check_tracks(struct jt_ev *ev, size_t n)
{
	size_t i, k, bad = 0;

	qsort(ev, n, sizeof(*ev), jt_cmp_track);
	for (i = 0, k = SIZE_MAX; i < n; i++) {
		const struct jt_ev *x = k != SIZE_MAX && ev[k].tid == ev[i].tid ? &ev[k] : NULL;

		if (i && ev[i].tid && ev[i - 1].tid == ev[i].tid && ev[i - 1].pid != ev[i].pid)
			bad++;
		if (ev[i].ph == 'X') {
			if (x && x->ts + x->dur > ev[i].ts)
				bad++;
			k = i;
		} else if (ev[i].ph == 'f') {
			/* at the start of a receive stamp's slice */
			if (!x || !x->netif || x->ts != ev[i].ts)
				bad++;
		} else if (ev[i].ph == 's') {
			/* inside the slice that ends at the driver time */
			if (!x || x->receive || ev[i].ts >= x->ts + x->dur)
				bad++;
		}
	}
	return bad;
}

/*
 * The trace of a simulated request-response: each of B's slices lies on
 * A's clock where the simulation put it, within the wire's bound; every
 * pair with a wire time is one arrow from a sender's slice to the start
 * of a receive slice; no two slices of one thread overlap.
 */
static void test_join_trace(void)
{
	struct sim s = { .requests = 3000, .gap_ns = 1000000, .offset_ns = -2700000000LL,
			 .ppm = 150, .floor_ab = 30000, .floor_ba = 10000 };
	struct capture a = { 0 }, b = { 0 };
	const char *pa = tmp_path("trace-join-a.nl"), *pb = tmp_path("trace-join-b.nl");
	const char *out = tmp_path("join.trace.json");
	size_t n, np, i, wired = 0, arrows = 0, b_slices = 0, bad = 0, unbound = 0;
	const struct netlat_xpkt *p;
	struct netlat_join *j;
	struct jt_ev *ev = NULL;
	int64_t width = 0, worst = 0;
	uint64_t base;
	struct run r;
	char *text;

	sim_run(&s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	np = netlat_join_pairs(j, &p);
	for (i = 0; i < np; i++) {
		if (p[i].flags & (NETLAT_XPKT_NO_STAMP | NETLAT_XPKT_NO_CLOCK |
				  NETLAT_XPKT_RETRANS | NETLAT_XPKT_IMPOSSIBLE))
			continue;
		wired++;
		if (p[i].wire_hi_ns - p[i].wire_lo_ns > width)
			width = p[i].wire_hi_ns - p[i].wire_lo_ns;
	}
	netlat_join_free(j);
	netlat(&r, "join", "--chrome-trace", out, pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "A>B: 3000 of 3000 sent packets joined");
	run_free(&r);
	text = read_file(out, NULL);
	if (!CHECK(text))
		goto out;
	CHECK(json_valid(text, strlen(text)));
	CHECK_HAS(text, "\"name\":\"process_name\",\"args\":{\"name\":\"B (on A's clock)\"}");
	CHECK_HAS(text, "\"unplaced\":1,");	/* B's copy of the retransmitted request */
	n = jt_parse(text, &ev, &base);
	free(text);
	for (i = 0; i < n; i++) {
		uint64_t at, truth;
		int64_t err;

		if (ev[i].ph == 'f')
			arrows++;
		if (ev[i].ph != 'X' || ev[i].pid != 2)
			continue;
		b_slices++;
		/* B's time of the slice's start, on A's clock: t_B - theta(t_A) */
		at = base + ev[i].ts;
		CHECK_U64(at, ev[i].from - (uint64_t)ev[i].shift);
		truth = ev[i].from - sim_theta(&s, ev[i].from - sim_theta(&s, ev[i].from));
		err = (int64_t)(at - truth);
		if (llabs(err) > worst)
			worst = llabs(err);
		if (llabs(err) > width / 2 + SIM_SLACK_NS && unbound++ < 5)
			fprintf(stderr, "# B slice at %llu: %lld ns from the truth\n",
				(unsigned long long)at, (long long)err);
	}
	fprintf(stderr, "# %zu of B's slices, %zu arrows, %zu pairs with a wire; placed "
		"within %lld ns of the truth (bound width up to %lld ns)\n", b_slices, arrows,
		wired, (long long)worst, (long long)width);
	CHECK_U64(unbound, 0);
	CHECK(b_slices > 3 * 3000);
	CHECK_U64(arrows, wired);
	bad = jt_check_tracks(ev, n);
	CHECK_U64(bad, 0);
	netlat(&r, "join", "--chrome-trace", tmp_path("no/such/dir.json"), pa, pb, NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "cannot create");
	run_free(&r);
out:
	free(ev);
	cap_free(&a);
	cap_free(&b);
}

/*
 * Five writes of 100 segments each (their sendmsg>xmit slices all start
 * at once), each answered: a lane per overlapping packet, however many;
 * with "--chrome-trace -" the trace is all of stdout.
 */
static void test_join_trace_bulk(void)
{
	struct capture a = { 0 }, b = { 0 };
	const char *pa = tmp_path("bulk-join-a.nl"), *pb = tmp_path("bulk-join-b.nl");
	uint32_t sa = 1000, sb = 9000;
	struct jt_ev *ev = NULL;
	size_t n, i, arrows = 0;
	unsigned int w, k;
	uint64_t base;
	struct run r;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(&a, 1);
	cap_stream(&b, 1);
	for (w = 0; w < 5; w++) {
		uint64_t t = SIM_T0 + w * 10000000ull;

		for (k = 0; k < 100; k++, sa += 1448) {
			sim_tx(&a, &sim_seq_a, true, sa, 1448, t, t + 10000 + k * 1000, 1);
			sim_rx(&b, &sim_seq_b, false, sa, 1448, t + 60000 + k * 1000, 1);
		}
		sim_tx(&b, &sim_seq_b, false, sb, 300, t + 300000, t + 310000, 1);
		sim_rx(&a, &sim_seq_a, true, sb, 300, t + 350000, 1);
		sb += 300;
	}
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&r, "join", "--chrome-trace", "-", pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK(!strstr(r.out, "sent packets joined"));
	CHECK_HAS(r.out, "\"unplaced\":0,\"arrows\":505}");
	CHECK_HAS(r.out, "192.0.2.1:40000>192.0.2.2:6379 #99\"");
	n = jt_parse(r.out, &ev, &base);
	for (i = 0; i < n; i++)
		arrows += ev[i].ph == 'f';
	CHECK_U64(arrows, 505);
	CHECK_U64(jt_check_tracks(ev, n), 0);
	run_free(&r);
	free(ev);
	cap_free(&a);
	cap_free(&b);
}

/* ---- the ACK's way back ----------------------------------------------------- */

#define RR_SA0		0xffffff00u	/* A's first byte: its sequence wraps */
#define RR_SB0		0x7fffff00u
#define RR_REQ		100
#define RR_REPLY	300

/* Round @i's one-way delay, either way: the floor and 0-3 us more. */
static uint64_t rr_wire(const struct sim *s, unsigned int i)
{
	return s->floor_ab + (i % 4) * 1000;
}

static void sim_sent_ack(struct netlat_rec_tcp_pkt *p, uint32_t ack)
{
	if (NETLAT_REC_HAS(&p->hdr, struct netlat_rec_tcp_pkt, sent_ack_seq))
		p->sent_ack_seq = ack;
}

/* The ACK that ended the sent record at @off of @c (pointers move as it grows). */
static void sim_ack(struct capture *c, size_t off, uint64_t ack_rx, uint32_t ack)
{
	struct netlat_rec_tcp_pkt *p = (void *)(c->buf + off);

	if (!NETLAT_REC_HAS(&p->hdr, struct netlat_rec_tcp_pkt, sent_ack_seq))
		return;
	p->ack_rx_ns = ack_rx;
	p->ack_seq = ack;
}

/* Every seventh request is two segments that B receives 12 us apart. */
static bool rr_split(unsigned int i)
{
	return i % 7 == 3;
}

/* A's time of round @i's request's driver, and of its last byte's arrival. */
static uint64_t rr_t1(const struct sim *s, unsigned int i)
{
	return SIM_T0 + i * s->gap_ns + 10000;
}

static uint64_t rr_t2(const struct sim *s, unsigned int i)
{
	return rr_t1(s, i) + rr_wire(s, i) + (rr_split(i) ? 12000 : 0);
}

/* A's time of round @i's reply leaving B, and of its arrival at A. */
static uint64_t rr_t3(const struct sim *s, unsigned int i)
{
	return rr_t2(s, i) + (s->late && i == s->late ? 2 : 1) * s->reply_ns;
}

static uint64_t rr_t4(const struct sim *s, unsigned int i)
{
	return rr_t3(s, i) + rr_wire(s, i + 1);
}

/*
 * sim_rr()'s TSvals: each host's millisecond clock from its own origin.
 * Round @i's request's, its copy's at B (another for ts_delta or
 * tsdiff_at: B got a copy A did not send first), and its reply's.
 */
static uint32_t ts_req(const struct sim *s, unsigned int i)
{
	return (uint32_t)(rr_t1(s, i) / 1000000) + 1000;
}

static uint32_t ts_req_rx(const struct sim *s, unsigned int i)
{
	return ts_req(s, i) + (s->retrans_at && i == s->retrans_at ? s->ts_delta : 0) +
	       (s->tsdiff_at && i == s->tsdiff_at);
}

static uint32_t ts_reply(const struct sim *s, unsigned int i)
{
	return (uint32_t)(sim_b(s, rr_t3(s, i)) / 1000000) + 5000;
}

/* The TSval of sent record @p, where sim_rr() gives them and it has one. */
static void ts_tx(const struct sim *s, struct netlat_rec_tcp_pkt *p, uint32_t tsval)
{
	if (s->ts & 1 && NETLAT_REC_HAS(&p->hdr, struct netlat_rec_tcp_pkt, ack_tsecr))
		p->tsval = tsval;
}

/* The TSecr of the ACK that ended the sent record at @off of @c. */
static void ts_ack(const struct sim *s, struct capture *c, size_t off, uint32_t tsecr)
{
	struct netlat_rec_tcp_pkt *p = (void *)(c->buf + off);

	if (s->ts & 1 && NETLAT_REC_HAS(&p->hdr, struct netlat_rec_tcp_pkt, ack_tsecr))
		p->ack_tsecr = tsecr;
}

static void ts_rx(const struct sim *s, struct netlat_rec_rx_pkt *r, uint32_t tsval,
		  uint32_t tsecr)
{
	if (s->ts & 2 && NETLAT_REC_HAS(&r->hdr, struct netlat_rec_rx_pkt, tsecr)) {
		r->tsval = tsval;
		r->tsecr = tsecr;
	}
}

/*
 * Requests of A (100 bytes; rr_split() ones 200 in two segments), each
 * answered by B (300 bytes) reply_ns after its last byte arrived; each
 * ACK rides on the next packet the other way: a request's on its reply, a
 * reply's on the next request. Both ways have one floor, so the clock's
 * middle is B's true clock. Round late's reply comes after B's pure ACK
 * of the request (acknowledging the same bytes); request retrans_at is
 * retransmitted (its first copy arrived); a range follows merged_at.
 */
static void sim_rr(struct sim *s, struct capture *a, struct capture *b)
{
	uint32_t sa = RR_SA0, sb = RR_SB0;
	size_t reply_off = SIZE_MAX, req_off;
	unsigned int i;

	sim_seq_a = sim_seq_b = 0;
	sim_old_tx = s->old_tx;
	sim_pkt_size = s->ts_old ? offsetof(struct netlat_rec_tcp_pkt, tsval) : 0;
	cap_stream(a, 1);
	cap_stream(b, 1);
	for (i = 0; i < s->requests; i++) {
		uint64_t t1 = rr_t1(s, i), t2 = t1 + rr_wire(s, i);
		uint64_t t3 = rr_t3(s, i), t4 = rr_t4(s, i), acked = t4;
		unsigned int segs = rr_split(i) ? 2 : 1;
		struct netlat_rec_tcp_pkt *p;

		p = sim_tx(a, &sim_seq_a, true, sa, segs * RR_REQ, t1 - 10000, t1, segs);
		req_off = (unsigned char *)p - a->buf;
		sim_sent_ack(p, sb);
		if (s->retrans_at && i == s->retrans_at)
			p->retrans = 1;
		if (s->merged_at && i == s->merged_at) {
			p->flags |= NETLAT_PKT_MERGED;
			p->merged = 1;
			p->range_end = p->end_seq;
		}
		ts_tx(s, p, ts_req(s, i));
		ts_rx(s, sim_rx(b, &sim_seq_b, false, sa, RR_REQ,
				sim_b(s, s->forge_rescue && i == s->retrans_at ? t1 - 100000 : t2),
				1),
		      ts_req_rx(s, i), i ? ts_reply(s, i - 1) : 0);
		if (segs > 1)
			ts_rx(s, sim_rx(b, &sim_seq_b, false, sa + RR_REQ, RR_REQ,
					sim_b(s, t2 + 12000), 1),
			      ts_req_rx(s, i), i ? ts_reply(s, i - 1) : 0);
		/* its first segment carried the ACK of the last reply */
		if (reply_off != SIZE_MAX) {
			sim_ack(b, reply_off, sim_b(s, t2), sb);
			ts_ack(s, b, reply_off, ts_reply(s, i - 1));
		}
		sa += segs * RR_REQ;
		if (s->late && i == s->late)
			acked = rr_t2(s, i) + s->reply_ns / 2 + rr_wire(s, i + 1);
		p = sim_tx(b, &sim_seq_b, false, sb, RR_REPLY, sim_b(s, t3 - 5000),
			   sim_b(s, t3), 1);
		reply_off = (unsigned char *)p - b->buf;
		sim_sent_ack(p, sa);
		ts_tx(s, p, ts_reply(s, i));
		ts_rx(s, sim_rx(a, &sim_seq_a, true, sb, RR_REPLY, t4, 1), ts_reply(s, i),
		      ts_req_rx(s, i));
		sim_ack(a, req_off, acked, sa);
		/* B echoed the copy it got, or another TSval (echo_other) */
		ts_ack(s, a, req_off, ts_req_rx(s, i) + (s->echo_other && i == s->retrans_at));
		sb += RR_REPLY;
		s->a_sent++;
		s->b_sent++;
	}
	sim_old_tx = 0;
	sim_pkt_size = 0;
}

/* What sim_rr() made of pair @x's packet: its ACK's way back, or why not. */
struct rr_truth {
	unsigned int why;
	int64_t there, delay, back, rtt;
};

static struct rr_truth rr_truth(const struct sim *s, const struct netlat_xpkt *x)
{
	struct rr_truth t = { .why = NETLAT_XACK_ALL };
	unsigned int i;

	if (x->sender == 0) {
		i = (x->tx->driver_ns - SIM_T0) / s->gap_ns;
		t.there = rr_t2(s, i) - rr_t1(s, i);
		t.back = rr_wire(s, i + 1);
		t.delay = rr_t3(s, i) - rr_t2(s, i);
		if (i == s->retrans_at && i)
			/* joined by TSval: the ACK's way back if it echoed it */
			t.why = s->rescued && !s->echo_other ? NETLAT_XACK_ALL
							     : NETLAT_XACK_RETRANS;
		else if (i == s->merged_at && i)
			t.why = NETLAT_XACK_RANGE;
		else if (i == s->late && i)
			t.why = NETLAT_XACK_PURE;
	} else {
		/* by its bytes: B's times may be moved by b_offset_ns */
		i = (x->tx->seq - RR_SB0) / RR_REPLY;
		t.there = rr_wire(s, i + 1);
		t.back = rr_wire(s, i + 1);
		t.delay = rr_t1(s, i + 1) - rr_t4(s, i);
		if (i + 1 == s->requests)
			t.why = NETLAT_XACK_NO_ACK;
		else if (i + 1 == s->retrans_at)
			t.why = NETLAT_XACK_ACK_RETRANS;
		/* the range after its carrier's record may hold the carrier */
		else if (s->merged_at && i == s->merged_at)
			t.why = NETLAT_XACK_PURE;
	}
	t.rtt = t.there + t.delay + t.back;
	if (t.why == NETLAT_XACK_PURE && x->sender == 0)
		t.rtt = t.there + s->reply_ns / 2 + t.back;
	return t;
}

/* |@got - @want| beyond @tol: said, and counted in *@bad. */
static void rr_near(int64_t got, int64_t want, int64_t tol, const char *what,
		    const struct netlat_xpkt *x, size_t *bad)
{
	if (llabs(got - want) <= tol)
		return;
	if ((*bad)++ < 5)
		fprintf(stderr, "# %s sent %u: %s %lld, want %lld (+-%lld)\n",
			x->sender ? "B" : "A", x->tx->seq, what, (long long)got,
			(long long)want, (long long)tol);
}

/* The clock's estimate at A's time @t: its bound's middle. */
static int64_t rr_est(const struct netlat_join *j, uint64_t t)
{
	int64_t lo = 0, hi = 0;

	CHECK(netlat_join_theta(j, t, &lo, &hi));
	return lo + (hi - lo) / 2;
}

/*
 * The identity: the round trip less the wire there, the ACK delay and the
 * wire back is the clock's estimate at the ACK's end less at the packet's
 * (A's end of each wire; 0 with a constant estimate), which a drift keeps
 * within max_drift_ppm (2000) of the round trip.
 */
static void rr_identity(const struct netlat_join *j, const struct netlat_xpkt *p,
			size_t i, const struct netlat_xack *x, size_t *bad)
{
	const struct netlat_xpkt *there = &p[x->ack_pair];
	int64_t left = there->wire_ns + x->delay_ns + x->wire_ns - x->rtt_ns, moved;

	if (p[i].sender == 0)
		moved = rr_est(j, p[i].tx->ack_rx_ns) - rr_est(j, p[i].tx->driver_ns);
	else
		moved = rr_est(j, there->rx->netif_ns) - rr_est(j, x->ack_tx->driver_ns);
	rr_near(left, moved, 1, "there + delay + back - round trip", &p[i], bad);
	rr_near(left, 0, (int64_t)(2000e-6 * x->rtt_ns) + 1, "identity's drift", &p[i], bad);
}

/* @truth inside [@lo, @hi] and @est within @tol of it. */
static void rr_wire_near(int64_t est, int64_t lo, int64_t hi, int64_t truth, int64_t tol,
			 const char *what, const struct netlat_xpkt *x, size_t *bad)
{
	if (truth < lo || truth > hi)
		rr_near(truth < lo ? lo : hi, truth, 0, what, x, bad);
	rr_near(est, truth, tol, what, x, bad);
}

/*
 * Each joined packet of sim_rr() against the truth: why it lacks a value,
 * the round trip and the ACK delay (to B's drift, @ppm of them), the wire
 * there and back (inside their bounds, the estimates exact with @ppm 0,
 * else within a microsecond), and the identity. The faults found.
 */
static size_t rr_check(const struct sim *s, const struct netlat_join *j, double ppm)
{
	const int64_t wire_tol = ppm ? 1000 : 0;
	const struct netlat_xpkt *p;
	size_t n = netlat_join_pairs(j, &p), i, bad = 0;

	for (i = 0; i < n; i++) {
		struct rr_truth t = rr_truth(s, &p[i]);
		/* the round trip and the ACK delay on B's clock */
		int64_t tol_b = (int64_t)(ppm * 1e-6 * t.rtt) + (ppm ? 2 : 0);
		struct netlat_xack x;
		const struct netlat_xpkt *there;

		if (!(p[i].flags & NETLAT_XPKT_TX_FIRST))
			continue;
		if (!CHECK(netlat_join_ack(j, i, &x) == 0))
			continue;
		rr_near(x.why, t.why, 0, "why", &p[i], &bad);
		if (t.why == NETLAT_XACK_NO_ACK || t.why == NETLAT_XACK_RETRANS ||
		    t.why == NETLAT_XACK_RANGE) {
			rr_near(x.flags, 0, 0, "flags", &p[i], &bad);
			continue;
		}
		rr_near(x.flags & NETLAT_XACK_RTT, NETLAT_XACK_RTT, 0, "rtt flag", &p[i], &bad);
		rr_near(x.rtt_ns, t.rtt, p[i].sender ? tol_b : 0, "round trip", &p[i], &bad);
		if (t.why != NETLAT_XACK_ALL) {
			rr_near(x.flags, NETLAT_XACK_RTT, 0, "flags", &p[i], &bad);
			continue;
		}
		if (x.flags != (NETLAT_XACK_RTT | NETLAT_XACK_DELAY | NETLAT_XACK_WIRE)) {
			rr_near(x.flags, 7, 0, "flags", &p[i], &bad);
			continue;
		}
		rr_near(x.delay_ns, t.delay, p[i].sender ? 0 : tol_b, "ack delay", &p[i], &bad);
		rr_near(x.raw_ns, (int64_t)(p[i].tx->ack_rx_ns - x.ack_tx->driver_ns), 0,
			"raw", &p[i], &bad);
		rr_wire_near(x.wire_ns, x.wire_lo_ns, x.wire_hi_ns, t.back, wire_tol,
			     "wire back", &p[i], &bad);
		there = &p[x.ack_pair];
		/* no wire there: test_join_tsval_impossible() checks it */
		if (there->flags & NETLAT_XPKT_IMPOSSIBLE)
			continue;
		rr_wire_near(there->wire_ns, there->wire_lo_ns, there->wire_hi_ns, t.there,
			     wire_tol, "wire there", &p[i], &bad);
		rr_identity(j, p, i, &x, &bad);
	}
	return bad;
}

#define ACK_N(...)	((const uint64_t[4]){ __VA_ARGS__ })
#define ACK_WHY(...)	((const uint64_t[NETLAT_XACK_NR_WHY]){ __VA_ARGS__ })

/*
 * Direction @s's ACK counts: its joined packets, round trips, ACK delays
 * and wire backs (@n), and each reason (@why, all of them).
 */
static void check_acks(const struct netlat_join *j, unsigned int s, const uint64_t n[4],
		       const uint64_t why[NETLAT_XACK_NR_WHY])
{
	struct netlat_join_ack_counts c;
	unsigned int k;

	netlat_join_ack_counts(j, &c);
	CHECK_U64(c.packets[s], n[0]);
	CHECK_U64(c.rtt[s], n[1]);
	CHECK_U64(c.delay[s], n[2]);
	CHECK_U64(c.wire[s], n[3]);
	for (k = 0; k < NETLAT_XACK_NR_WHY; k++)
		if (!CHECK_U64(c.why[s][k], why[k]))
			fprintf(stderr, "# sender %u, why %u\n", s, k);
}

/*
 * Request and reply with a constant offset: each value exactly the
 * truth, the round trip exactly the wire there, B's ACK delay and the
 * wire back (the offset cancels), also with B's times moved by
 * --b-offset. A reply after a pure ACK leaves its request the round trip
 * only; a retransmitted request has none, nor has a range, and the
 * replies whose ACK rode on the one or followed the other no ACK delay.
 */
static void test_join_ack_offset(void)
{
	struct sim s = { .requests = 400, .gap_ns = 1000000, .offset_ns = -3200000000LL,
			 .floor_ab = 30000, .reply_ns = 50000, .late = 77, .retrans_at = 150,
			 .merged_at = 250 };
	struct netlat_join_opts o = { .flags = NETLAT_JOIN_OFFSET_ONLY };
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join *j;
	struct netlat_xack x;

	sim_rr(&s, &a, &b);
	j = sim_join(&a, &b, &o);
	if (!j)
		goto out;
	CHECK_U64(rr_check(&s, j, 0), 0);
	check_acks(j, 0, ACK_N(400, 398, 397, 397),
		   ACK_WHY([NETLAT_XACK_ALL] = 397, [NETLAT_XACK_PURE] = 1,
			   [NETLAT_XACK_RETRANS] = 1, [NETLAT_XACK_RANGE] = 1));
	check_acks(j, 1, ACK_N(400, 399, 397, 397),
		   ACK_WHY([NETLAT_XACK_ALL] = 397, [NETLAT_XACK_NO_ACK] = 1,
			   [NETLAT_XACK_ACK_RETRANS] = 1, [NETLAT_XACK_PURE] = 1));
	CHECK(netlat_join_ack(j, SIZE_MAX, &x) == -EINVAL);
	netlat_join_free(j);
	/* B's times a second later: the same values (its ACK stamps moved too) */
	o.b_offset_ns = 1000000000;
	j = sim_join(&a, &b, &o);
	if (j)
		CHECK_U64(rr_check(&s, j, 0), 0);
	netlat_join_free(j);
out:
	cap_free(&a);
	cap_free(&b);
}

/* B's clock 200 ppm fast: each value within the drift over the round trip. */
static void test_join_ack_drift(void)
{
	struct sim s = { .requests = 400, .gap_ns = 1000000, .offset_ns = 3200000000LL,
			 .ppm = 200, .floor_ab = 30000, .reply_ns = 50000, .late = 33,
			 .retrans_at = 200 };
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join *j;

	sim_rr(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	if (!j)
		goto out;
	CHECK_U64(rr_check(&s, j, s.ppm), 0);
	check_acks(j, 0, ACK_N(400, 399, 398, 398),
		   ACK_WHY([NETLAT_XACK_ALL] = 398, [NETLAT_XACK_PURE] = 1,
			   [NETLAT_XACK_RETRANS] = 1));
	check_acks(j, 1, ACK_N(400, 399, 398, 398),
		   ACK_WHY([NETLAT_XACK_ALL] = 398, [NETLAT_XACK_NO_ACK] = 1,
			   [NETLAT_XACK_ACK_RETRANS] = 1));
	netlat_join_free(j);
out:
	cap_free(&a);
	cap_free(&b);
}

/*
 * A bulk flow: bursts of ten segments from A, which B acknowledges with
 * pure ACKs (no record), then a reply of B's that acknowledges the burst
 * once more, which A records receiving if @reply_rx.
 */
static void sim_bulk(struct capture *a, struct capture *b, bool reply_rx)
{
	const uint64_t w = 20000;
	uint32_t sa = 1000, sb = 50000;
	size_t reply_off = SIZE_MAX, off[10];
	unsigned int k, m;

	sim_seq_a = sim_seq_b = 0;
	cap_stream(a, 1);
	cap_stream(b, 1);
	for (k = 0; k < 20; k++) {
		uint64_t t = SIM_T0 + k * 1000000ull, ack_at = 0;
		struct netlat_rec_tcp_pkt *p;

		for (m = 0; m < 10; m++) {
			uint64_t t1 = t + 10000 + m * 10000;

			p = sim_tx(a, &sim_seq_a, true, sa + m * 1448, 1448, t, t1, 1);
			off[m] = (unsigned char *)p - a->buf;
			sim_sent_ack(p, sb);
			sim_rx(b, &sim_seq_b, false, sa + m * 1448, 1448, t1 + w, 1);
			if (!m && reply_off != SIZE_MAX)
				sim_ack(b, reply_off, t1 + w, sb);
			/* B's pure ACK of every second segment */
			ack_at = t1 + w + 5000 + w;
			if (m % 2) {
				sim_ack(a, off[m - 1], ack_at, sa + (m + 1) * 1448);
				sim_ack(a, off[m], ack_at, sa + (m + 1) * 1448);
			}
		}
		sa += 10 * 1448;
		p = sim_tx(b, &sim_seq_b, false, sb, 300, ack_at + 20000, ack_at + 30000, 1);
		reply_off = (unsigned char *)p - b->buf;
		sim_sent_ack(p, sa);
		if (reply_rx)
			sim_rx(a, &sim_seq_a, true, sb, 300, ack_at + 30000 + w, 1);
		sb += 300;
	}
}

/*
 * sim_bulk(): each segment has its round trip and no ACK delay, the last
 * of a burst too though the reply's number is its ACK's: A stamped the
 * reply's arrival after the pure ACK's. The reply's own ACK rides on the
 * next burst. Without A's records of the replies, the numbers alone: the
 * last two segments' ACK is then matched to the reply, which left after
 * that ACK arrived: impossible, said so.
 */
static void test_join_ack_pure(void)
{
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join *j;

	sim_bulk(&a, &b, true);
	j = sim_join(&a, &b, NULL);
	if (j) {
		check_acks(j, 0, ACK_N(200, 200, 0, 0), ACK_WHY([NETLAT_XACK_PURE] = 200));
		/* each reply but the last, whose ACK no burst carried */
		check_acks(j, 1, ACK_N(20, 19, 19, 19),
			   ACK_WHY([NETLAT_XACK_ALL] = 19, [NETLAT_XACK_NO_ACK] = 1));
		netlat_join_free(j);
	}
	cap_free(&a);
	cap_free(&b);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	sim_bulk(&a, &b, false);
	j = sim_join(&a, &b, NULL);
	if (j) {
		/*
		 * A burst's last two, ended by its last pure ACK, and the
		 * last burst's: the reply with that ACK number is a carrier
		 * A did not record arriving, which cannot be told from the
		 * pure ACK before it: no ACK delay
		 */
		check_acks(j, 0, ACK_N(200, 200, 0, 0),
			   ACK_WHY([NETLAT_XACK_PURE] = 160, [NETLAT_XACK_UNVERIFIED] = 40));
		netlat_join_free(j);
	}
	cap_free(&a);
	cap_free(&b);
}

/*
 * Records of a module before the ACK fields (152 bytes): nothing, said
 * so. B's alone old: A's round trips, and no ACK delay (B's records have
 * no ACK numbers), counted as not recorded.
 */
static void test_join_ack_old_records(void)
{
	struct sim s = { .requests = 100, .gap_ns = 1000000, .offset_ns = 5000000,
			 .floor_ab = 30000, .reply_ns = 50000, .old_tx = 3 };
	struct capture a = { 0 }, b = { 0 };
	struct netlat_join *j;
	unsigned int h;

	sim_rr(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	for (h = 0; j && h < 2; h++)
		check_acks(j, h, ACK_N(100, 0, 0, 0), ACK_WHY([NETLAT_XACK_NO_ACK] = 100));
	netlat_join_free(j);
	cap_free(&a);
	cap_free(&b);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	s.old_tx = 2;
	sim_rr(&s, &a, &b);
	j = sim_join(&a, &b, NULL);
	if (j) {
		check_acks(j, 0, ACK_N(100, 100, 0, 0), ACK_WHY([NETLAT_XACK_PURE] = 100));
		check_acks(j, 1, ACK_N(100, 0, 0, 0), ACK_WHY([NETLAT_XACK_NO_ACK] = 100));
	}
	netlat_join_free(j);
	cap_free(&a);
	cap_free(&b);
}

/* netlat join's rows of the ACK's way back, its counts, and the JSON's. */
static void test_cli_join_ack(void)
{
	struct sim s = { .requests = 400, .gap_ns = 1000000, .offset_ns = 700000,
			 .floor_ab = 30000, .reply_ns = 50000, .late = 77, .retrans_at = 150 };
	/* B>A's counts, the rows after the receiver's stages both ways */
	static const char *const rows[] = {
		"1 ACKs carried by a retransmission, 1 without an ACK stamp,",
		"\n  B queue>user ", "\n  B ack delay              398   50.0 us   50.0 us ",
		"\n  wire back B>A            398 ", "\n  A round trip             399 ",
		"\n  A ack delay ", "\n  wire back A>B ", "\n  B round trip ",
	};
	/* A>B's object, and packets: a retransmission, a pure ACK, one with all */
	static const char *const json[] = {
		"\"ack\":{\"joined\":400,\"rtt\":399,\"ack_delay\":398,\"wire_back\":398,"
		"\"wire_back_one_sided\":0,\"why\":{\"all\":398,\"no_ack\":0,\"retrans\":1,",
		"\"stages\":{\"B ack delay\":{\"count\":398,",
		"\"ack\":{\"why\":\"retrans\",\"ack_rx_ns\":",
		"\"rtt_ns\":null,\"delay_ns\":null,\"wire_back_ns\":null,",
		"\"ack\":{\"why\":\"pure_ack\",", ",\"delay_ns\":50000,\"wire_back_ns\":",
	};
	const char *pa = tmp_path("ack-join-a.nl"), *pb = tmp_path("ack-join-b.nl");
	struct capture a = { 0 }, b = { 0 };
	struct run r;
	size_t i;

	sim_rr(&s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	netlat(&r, "join", "--offset-only", pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "  the ACK's way back: 399 round trips, 398 B ACK delays, 398 wire backs "
		  "of 400 joined packets; 1 ACKs not recorded (pure ACK), 0 whose carrier A did "
		  "not record arriving, 1 retransmitted (Karn), "
		  "0 ACKs carried by a retransmission, 0 without an ACK stamp, 0 ranges, 0 without "
		  "B's receive stamp of the last byte, 0 impossible, 0 without a clock\n");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		CHECK_HAS(r.out, rows[i]);
	CHECK_HAS(r.out, " B queue>user; its ACK: 50.0 us B ack delay, ");
	run_free(&r);
	netlat(&r, "join", "--json", pa, pb, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	for (i = 0; i < sizeof(json) / sizeof(json[0]); i++)
		CHECK_HAS(r.out, json[i]);
	run_free(&r);
	cap_free(&a);
	cap_free(&b);
}

/* ---- retransmissions and TSval --------------------------------------------- */

/*
 * A>B's counts: joined by TSval, tick not provable, Karn, impossible by
 * TSval and in all; false if one is not as given.
 */
static bool check_tsval(const struct netlat_join *j, uint64_t rescued, uint64_t tick,
			uint64_t karn, uint64_t by_tsval, uint64_t impossible)
{
	struct netlat_join_tsval_counts tc;
	struct netlat_join_counts c;
	bool ok;

	netlat_join_tsval_counts(j, &tc);
	netlat_join_counts(j, &c);
	ok = CHECK_U64(tc.rescued[0], rescued);
	ok &= CHECK_U64(tc.tick[0], tick);
	ok &= CHECK_U64(c.retrans[0], karn);
	ok &= CHECK_U64(tc.impossible[0], by_tsval);
	ok &= CHECK_U64(c.impossible[0], impossible);
	/* B sent nothing twice, and its copies are its first */
	ok &= CHECK_U64(tc.rescued[1] + tc.tick[1] + c.retrans[1] + tc.impossible[1], 0);
	ok &= CHECK_U64(c.impossible[1], 0);
	return ok;
}

/* The pair of sim_rr()'s request @i (one segment): NULL if none. */
static const struct netlat_xpkt *ts_pair(const struct sim *s, const struct netlat_join *j,
					 unsigned int i)
{
	const struct netlat_xpkt *p;
	size_t n = netlat_join_pairs(j, &p), k;

	for (k = 0; k < n; k++)
		if (p[k].sender == 0 && p[k].tx->driver_ns == rr_t1(s, i))
			return &p[k];
	return NULL;
}

/* Those of @mask of the flags of request @i's pair are @want. */
static void ts_flags(const struct sim *s, const struct netlat_join *j, unsigned int i,
		     unsigned int mask, unsigned int want)
{
	const struct netlat_xpkt *x = ts_pair(s, j, i);

	if (CHECK(x))
		CHECK_U64(x->flags & mask, want);
}

/*
 * sim_rr() of @s and its join on a constant offset, checked against the
 * truth (rr_check(); not a forged one's, whose ACK stamp is not the forged
 * arrival's); NULL if the join failed.
 */
static struct netlat_join *ts_join(struct sim *s, struct capture *a, struct capture *b)
{
	static const struct netlat_join_opts o = { .flags = NETLAT_JOIN_OFFSET_ONLY };
	struct netlat_join *j;

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	sim_rr(s, a, b);
	j = sim_join(a, b, &o);
	if (j && !s->forge_rescue)
		CHECK_U64(rr_check(s, j, 0), 0);
	return j;
}

static void ts_free(struct netlat_join *j, struct capture *a, struct capture *b)
{
	netlat_join_free(j);
	cap_free(a);
	cap_free(b);
}

#define TS_KINDS	(NETLAT_XPKT_TSVAL | NETLAT_XPKT_TSVAL_TICK | NETLAT_XPKT_RETRANS)

/*
 * Round trips of 2 ms (a tick and more): a retransmitted request whose
 * copy at B has its first TSval is joined, its wire there exactly the
 * truth, and its ACK's way back too as the ACK echoed that TSval (the
 * round trip exactly there + delay + back: rr_check()); an ACK that
 * echoed another TSval leaves it none (Karn), the wire still there. It
 * bounds no clock, so a copy stamped before it left (by the others'
 * clock) is flagged impossible.
 */
static void test_join_tsval_rescue(void)
{
	struct sim s = { .requests = 200, .gap_ns = 5000000, .offset_ns = -3200000000LL,
			 .floor_ab = 30000, .reply_ns = 2000000, .retrans_at = 151, .ts = 3,
			 .rescued = true };
	const struct netlat_xpkt *x;
	struct netlat_join_counts c;
	struct netlat_clock_est g;
	struct capture a, b;
	struct netlat_join *j;
	unsigned int e;

	for (e = 0; e < 3; e++) {
		s.echo_other = e > 0;
		s.forge_rescue = e == 2;
		j = ts_join(&s, &a, &b);
		if (j && e == 2) {
			check_tsval(j, 1, 0, 0, 0, 1);
			ts_flags(&s, j, s.retrans_at, TS_KINDS | NETLAT_XPKT_IMPOSSIBLE |
				 NETLAT_XPKT_TSVAL_DIFF, NETLAT_XPKT_TSVAL | NETLAT_XPKT_IMPOSSIBLE);
		}
		if (!j || e == 2) {
			ts_free(j, &a, &b);
			continue;
		}
		check_tsval(j, 1, 0, 0, 0, 0);
		netlat_join_counts(j, &c);
		netlat_join_clock(j, &g);
		CHECK_U64(g.samples_ab, c.pairs[0] - 1);
		ts_flags(&s, j, s.retrans_at, TS_KINDS | NETLAT_XPKT_IMPOSSIBLE |
			 NETLAT_XPKT_NO_CLOCK, NETLAT_XPKT_TSVAL);
		x = ts_pair(&s, j, s.retrans_at);
		if (x)
			CHECK_U64(x->wire_ns, rr_t2(&s, s.retrans_at) - rr_t1(&s, s.retrans_at));
		check_acks(j, 0, ACK_N(200, 200 - e, 200 - e, 200 - e),
			   ACK_WHY([NETLAT_XACK_ALL] = 200 - e, [NETLAT_XACK_RETRANS] = e));
		/* B's reply before it: its ACK rode on a retransmission */
		check_acks(j, 1, ACK_N(200, 199, 198, 198),
			   ACK_WHY([NETLAT_XACK_ALL] = 198, [NETLAT_XACK_NO_ACK] = 1,
				   [NETLAT_XACK_ACK_RETRANS] = 1));
		ts_free(j, &a, &b);
	}
}

/*
 * The same with round trips of 0.46 ms (under a tick): a retransmission
 * may have carried the first TSval, so it stays out, for that reason.
 */
static void test_join_tsval_tick(void)
{
	struct sim s = { .requests = 200, .gap_ns = 1000000, .offset_ns = 700000,
			 .floor_ab = 30000, .reply_ns = 400000, .retrans_at = 151, .ts = 3 };
	struct capture a, b;
	struct netlat_join *j = ts_join(&s, &a, &b);

	if (j) {
		check_tsval(j, 0, 1, 0, 0, 0);
		ts_flags(&s, j, s.retrans_at, TS_KINDS,
			 NETLAT_XPKT_TSVAL_TICK | NETLAT_XPKT_RETRANS);
		check_acks(j, 0, ACK_N(200, 199, 199, 199),
			   ACK_WHY([NETLAT_XACK_ALL] = 199, [NETLAT_XACK_RETRANS] = 1));
	}
	ts_free(j, &a, &b);
}

/*
 * Karn as before: B got a retransmission (another TSval); A's or B's
 * records without TSvals (ts 1, 2); records of 168 bytes (an older
 * module's), whose next record's bytes are no TSval.
 */
static void test_join_tsval_karn(void)
{
	static const struct { unsigned int ts; uint32_t delta; bool old; } cases[] = {
		{ 3, 3, false }, { 1, 0, false }, { 2, 0, false }, { 3, 0, true },
	};
	struct capture a, b;
	struct netlat_join *j;
	size_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct sim s = { .requests = 200, .gap_ns = 5000000, .offset_ns = 700000,
				 .floor_ab = 30000, .reply_ns = 2000000, .retrans_at = 151,
				 .ts = cases[k].ts, .ts_delta = cases[k].delta,
				 .ts_old = cases[k].old };

		j = ts_join(&s, &a, &b);
		if (j && !check_tsval(j, 0, 0, 1, 0, 0))
			fprintf(stderr, "# case %zu\n", k);
		if (j) {
			ts_flags(&s, j, s.retrans_at, TS_KINDS, NETLAT_XPKT_RETRANS);
			check_acks(j, 0, ACK_N(200, 199, 199, 199),
				   ACK_WHY([NETLAT_XACK_ALL] = 199, [NETLAT_XACK_RETRANS] = 1));
		}
		ts_free(j, &a, &b);
	}
}

/*
 * A request not retransmitted whose copy at B has another TSval: B got a
 * copy A never sent first. Flagged impossible, no wire time, and not one
 * of the clock's samples.
 */
static void test_join_tsval_impossible(void)
{
	struct sim s = { .requests = 200, .gap_ns = 5000000, .offset_ns = 700000,
			 .floor_ab = 30000, .reply_ns = 2000000, .tsdiff_at = 78, .ts = 3 };
	struct netlat_join_counts c;
	struct netlat_clock_est g;
	struct capture a, b;
	struct netlat_join *j = ts_join(&s, &a, &b);

	if (j) {
		check_tsval(j, 0, 0, 0, 1, 1);
		ts_flags(&s, j, s.tsdiff_at, NETLAT_XPKT_IMPOSSIBLE | NETLAT_XPKT_TSVAL_DIFF |
			 NETLAT_XPKT_RETRANS, NETLAT_XPKT_IMPOSSIBLE | NETLAT_XPKT_TSVAL_DIFF);
		netlat_join_counts(j, &c);
		netlat_join_clock(j, &g);
		CHECK_U64(g.samples_ab, c.pairs[0] - 1);
	}
	ts_free(j, &a, &b);
}

/*
 * netlat join's counts of it, text and JSON; tail's TSvals where the
 * records have them, and nothing new where they do not.
 */
static void test_cli_join_tsval(void)
{
	struct sim s = { .requests = 200, .gap_ns = 5000000, .offset_ns = 700000,
			 .floor_ab = 30000, .reply_ns = 2000000, .retrans_at = 151, .ts = 3,
			 .rescued = true };
	const char *pa = tmp_path("ts-join-a.nl"), *pb = tmp_path("ts-join-b.nl");
	char tail_a[96], tail_b[64];
	/* each command, then what its output holds */
	const struct { const char *args[4]; const char *want[2]; } runs[] = {
		{ { "join", "--offset-only", pa, pb },
		  { "A>B: 200 of 200 sent packets joined (22900 of 22900 bytes; 1 "
		    "retransmitted, joined by TSval); not joined:",
		    "  no wire time: 0 retransmitted (Karn), 0 retransmitted (TSval tick not "
		    "provable), 0 without a driver time or receive stamp, 0 impossible (0 by "
		    "TSval), 0 without a clock;" } },
		{ { "join", "--json", pa, pb },
		  { "\"joined_by_tsval\":1,\"tsval_tick\":0,\"tsval_impossible\":0,",
		    "\"flags\":[\"joined_by_tsval\"]" } },
		/* request 1's record at A, its copy's at B */
		{ { "tail", pa }, { tail_a } },
		{ { "tail", "--json", pb }, { tail_b } },
	};
	struct capture a = { 0 }, b = { 0 };
	struct run r;
	size_t i, k;

	snprintf(tail_a, sizeof(tail_a), " sent_ack_seq=%u ack_seq=%u tsval=%u ack_tsecr=%u\n",
		 RR_SB0 + RR_REPLY, RR_SA0 + 2 * RR_REQ, ts_req(&s, 1), ts_req(&s, 1));
	snprintf(tail_b, sizeof(tail_b), ",\"tsval\":%u,\"tsecr\":%u}", ts_req(&s, 1),
		 ts_reply(&s, 0));
	sim_rr(&s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		netlat(&r, runs[i].args[0], runs[i].args[1], runs[i].args[2], runs[i].args[3],
		       NULL);
		CHECK_U64(r.status, 0);
		/* tail's JSON is a line per record */
		if (!strcmp(runs[i].args[0], "join") && !strcmp(runs[i].args[1], "--json"))
			CHECK(json_valid(r.out, strlen(r.out)));
		for (k = 0; k < 2 && runs[i].want[k]; k++)
			CHECK_HAS(r.out, runs[i].want[k]);
		run_free(&r);
	}
	cap_free(&a);
	cap_free(&b);
	/* records of 168 bytes: as before, no TSval */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	s.ts_old = true;
	sim_rr(&s, &a, &b);
	CHECK(cap_write(&a, pa) == 0 && cap_write(&b, pb) == 0);
	for (i = 0; i < 2; i++) {
		netlat(&r, "tail", i ? pb : pa, NULL);
		CHECK_U64(r.status, 0);
		CHECK(!strstr(r.out, "tsval=") && !strstr(r.out, "tsecr="));
		run_free(&r);
	}
	cap_free(&a);
	cap_free(&b);
}
