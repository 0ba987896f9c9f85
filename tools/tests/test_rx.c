// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the receive-path report (tools/rx.c) on synthetic captures.
 * Included by test_netlat.c (its helpers are static there).
 */

static uint64_t rx_seq;	/* per-CPU sequence of the capture being built */

/* An RX record of @type on cpu 0 at TEST_MONO_NS + @ts, the TCP socket's flow. */
static void *cap_rx(struct capture *c, uint16_t type, uint16_t size, uint64_t ts)
{
	void *r = cap_tcp(c, type, size, rx_seq++, ts);

	/* the receiving socket 192.0.2.2:80, its peer 192.0.2.1:1000 */
	set_flow(r, AF_INET, "192.0.2.2", 80, "192.0.2.1", 1000, 9);
	return r;
}

/* A NETIF or DROP record: the flow of the headers, sender first, no cookie. */
static void *cap_rx_pkt(struct capture *c, uint16_t type, uint16_t size, uint64_t ts,
			bool udp)
{
	void *r = cap_tcp(c, type, size, rx_seq++, ts);

	if (udp)
		set_flow(r, AF_INET, "192.0.2.1", 4000, "192.0.2.2", 53, 0);
	else
		set_flow(r, AF_INET, "192.0.2.1", 1000, "192.0.2.2", 80, 0);
	return r;
}

static void cap_rx_skb(struct capture *c, uint16_t type, uint64_t ts, uint32_t seq,
		       uint32_t len, uint8_t where)
{
	struct netlat_rec_rx_skb *s = cap_rx(c, type, sizeof(*s), ts);

	s->proto = NETLAT_RX_TCP;
	s->seq = seq;
	s->end_seq = seq + len;
	s->len = len;
	s->where = where;
}

static void cap_rx_udp(struct capture *c, uint16_t type, uint64_t ts, uint64_t skb)
{
	struct netlat_rec_rx_skb *s = cap_rx(c, type, sizeof(*s), ts);

	set_flow(s, AF_INET, "192.0.2.2", 53, "0.0.0.0", 0, 11);
	s->proto = NETLAT_RX_UDP;
	s->skb_id = skb;
	s->len = 64;
}

static void cap_rx_wake(struct capture *c, uint64_t ts, uint32_t event, uint32_t tid)
{
	struct netlat_rec_rx_wake *w = cap_rx(c, NETLAT_REC_RX_WAKE, sizeof(*w), ts);

	w->event = event;
	w->pid = tid ? 42 : 0;
	w->tid = tid;
}

static void test_cli_rx_report(void)
{
	struct netlat_rec_rx_netif *n;
	struct netlat_rec_rx_copy *cp;
	struct netlat_rec_rx_drop *d;
	struct capture c = { 0 };
	const char *path;
	struct run r;

	rx_seq = 0;
	cap_stream(&c, 1);
	/* an older datagram in the same skb: the join takes the latest NETIF */
	n = cap_rx_pkt(&c, NETLAT_REC_RX_NETIF, sizeof(*n), 10, true);
	n->proto = NETLAT_RX_UDP;
	n->skb_id = 77;
	/* TCP segment 1: stamped at +90, at the socket +200, queued +250 */
	n = cap_rx_pkt(&c, NETLAT_REC_RX_NETIF, sizeof(*n), 100, false);
	n->proto = NETLAT_RX_TCP;
	n->seq = 1000;
	n->len = 100;
	n->tstamp_ns = 1;
	n->tstamp_mono_ns = TEST_MONO_NS + 90;
	n = cap_rx_pkt(&c, NETLAT_REC_RX_NETIF, sizeof(*n), 100, true);
	n->proto = NETLAT_RX_UDP;
	n->skb_id = 77;
	n->len = 64;
	n->tstamp_ns = 1;
	n->tstamp_mono_ns = TEST_MONO_NS + 95;
	cap_rx_udp(&c, NETLAT_REC_RX_TRANSPORT, 150, 77);
	cap_rx_udp(&c, NETLAT_REC_RX_QUEUE, 160, 77);
	cap_rx_skb(&c, NETLAT_REC_RX_TRANSPORT, 200, 1000, 100, 0);
	cap_rx_skb(&c, NETLAT_REC_RX_QUEUE, 250, 1000, 100, NETLAT_RX_Q_IN_ORDER);
	/* segment 2, no stamp: to the backlog at +400, queued at +600 */
	n = cap_rx_pkt(&c, NETLAT_REC_RX_NETIF, sizeof(*n), 300, false);
	n->proto = NETLAT_RX_TCP;
	n->seq = 1100;
	n->len = 100;
	cap_rx_skb(&c, NETLAT_REC_RX_TRANSPORT, 400, 1100, 100, NETLAT_RX_Q_BACKLOG);
	cap_rx_skb(&c, NETLAT_REC_RX_QUEUE, 400, 1100, 100, NETLAT_RX_Q_BACKLOG);
	cp = cap_rx(&c, NETLAT_REC_RX_COPY, sizeof(*cp), 500);
	set_flow(cp, AF_INET, "192.0.2.2", 53, "0.0.0.0", 0, 11);
	cp->proto = NETLAT_RX_UDP;
	cp->skb_id = 77;
	cp->bytes = 64;
	cap_rx_skb(&c, NETLAT_REC_RX_QUEUE, 600, 1100, 100, NETLAT_RX_Q_IN_ORDER);
	/* a segment beyond a hole, and a drop of the flow */
	cap_rx_skb(&c, NETLAT_REC_RX_QUEUE, 700, 1300, 100, NETLAT_RX_Q_OFO);
	d = cap_rx_pkt(&c, NETLAT_REC_RX_DROP, sizeof(*d), 800, false);
	d->proto = NETLAT_RX_TCP;
	d->reason = 5;
	/* one read of both segments at +1000 */
	cp = cap_rx(&c, NETLAT_REC_RX_COPY, sizeof(*cp), 1000);
	cp->proto = NETLAT_RX_TCP;
	cp->seq = 1000;
	cp->end_seq = 1200;
	cp->bytes = 200;
	cp->pid = 42;
	cp->tid = 43;
	/* the reader blocks, the socket is ready, the reader is woken, runs */
	cap_rx_wake(&c, 1050, NETLAT_RX_WAKE_BLOCK, 43);
	cap_rx_wake(&c, 1100, NETLAT_RX_WAKE_READY, 0);
	cap_rx_wake(&c, 1150, NETLAT_RX_WAKE_WAKEUP, 43);
	cap_rx_wake(&c, 1300, NETLAT_RX_WAKE_RUN, 43);
	path = write_capture(&c, "rx.nl");

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"rx_stages\":{"
		  "\"netif>tcp\":{\"count\":2,\"min\":100,\"p50\":100,\"p90\":110,\"p99\":110,\"p99_9\":110,\"max\":110,\"mean\":105.0},"
		  "\"netif>udp\":{\"count\":1,\"min\":55,\"p50\":55,\"p90\":55,\"p99\":55,\"p99_9\":55,\"max\":55,\"mean\":55.0},"
		  "\"tcp>queue\":{\"count\":2,\"min\":50,\"p50\":50,\"p90\":200,\"p99\":200,\"p99_9\":200,\"max\":200,\"mean\":125.0},"
		  "\"queue>user\":{\"count\":3,\"min\":340,\"p50\":400,\"p90\":750,\"p99\":750,\"p99_9\":750,\"max\":750,\"mean\":496.7},"
		  "\"netif>user\":{\"count\":3,\"min\":405,\"p50\":700,\"p90\":910,\"p99\":910,\"p99_9\":910,\"max\":910,\"mean\":671.7},"
		  "\"ready>wakeup\":{\"count\":1,\"min\":50,\"p50\":50,\"p90\":50,\"p99\":50,\"p99_9\":50,\"max\":50,\"mean\":50.0},"
		  "\"wakeup>run\":{\"count\":1,\"min\":150,\"p50\":150,\"p90\":150,\"p99\":150,\"p99_9\":150,\"max\":150,\"mean\":150.0}}");
	CHECK_HAS(r.out, "\"saddr\":\"192.0.2.2\",\"sport\":80,\"daddr\":\"192.0.2.1\",\"dport\":1000,\"cookie\":9,"
		  "\"segments\":2,\"bytes_received\":200,\"bytes_read\":200,\"ofo\":1,\"backlog\":1,"
		  "\"drops\":1,\"drop_reasons\":{\"5\":1}}");
	CHECK_HAS(r.out, "{\"proto\":\"udp\",\"family\":2,\"saddr\":\"192.0.2.2\",\"sport\":53,");
	run_free(&r);

	/* the receive rows in the stage table, and the flow table */
	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "receive stages: arrivals joined per socket by sequence (TCP), per skb (UDP)\n");
	CHECK_HAS(r.out, "\nqueue>user             3        340        400        750        750        750        750        496.7\n");
	CHECK_HAS(r.out, "segments=2 received=200 read=200 ofo=1 backlog=1 drops=1 (reason5:1)\n");
	run_free(&r);

	/* --port selects receive records: the UDP socket's alone */
	netlat(&r, "report", "--json", "--port", "53", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "\"netif>udp\":{\"count\":1,");
	CHECK(!strstr(r.out, "\"netif>tcp\""));
	run_free(&r);

	/* tail: one line per record */
	CHECK_U64(tail_lines(&r, path, "--type", "RX_COPY", NULL, NULL), 2);
	CHECK_HAS(r.out, " proto=tcp bytes=200 seq=1000 end_seq=1200 pid=42 tid=43 peek=0");
	run_free(&r);
	CHECK_U64(tail_lines(&r, path, "--type", "RX_WAKE", NULL, NULL), 4);
	CHECK_HAS(r.out, " event=wakeup pid=42 tid=43 on_cpu=0");
	run_free(&r);
	cap_free(&c);
}

/* An RX_PKT of @size bytes: a TCP segment copied at +@ts, queued 100 before. */
static struct netlat_rec_rx_pkt *cap_rx_kpkt(struct capture *c, uint16_t size,
					     uint64_t ts, uint32_t seq)
{
	struct netlat_rec_rx_pkt *p = cap_rx(c, NETLAT_REC_RX_PKT, size, ts);

	p->proto = NETLAT_RX_TCP;
	p->flags = NETLAT_RXP_QUEUED | NETLAT_RXP_COPIED;
	p->transport_ns = TEST_MONO_NS + ts - 150;
	p->queue_ns = TEST_MONO_NS + ts - 100;
	p->end_ns = TEST_MONO_NS + ts;
	p->seq = seq;
	p->end_seq = seq + 100;
	p->len = 100;
	return p;
}

/*
 * The packet level's wakeup stages: an RX_PKT with its reader's wakeup
 * gives ready>wakeup and wakeup>run under the events level's names; a
 * first-size record (an older module) and one without a wakeup give none.
 */
static void test_cli_rx_pkt_wakeup(void)
{
	struct netlat_rec_rx_pkt *p;
	struct capture c = { 0 };
	const char *path;
	struct run r;

	rx_seq = 0;
	cap_stream(&c, 1);
	p = cap_rx_kpkt(&c, sizeof(*p), 1000, 1000);
	p->ready_ns = TEST_MONO_NS + 700;
	p->wakeup_ns = TEST_MONO_NS + 750;
	p->run_ns = TEST_MONO_NS + 900;
	cap_rx_kpkt(&c, sizeof(*p), 1100, 1100);
	cap_rx_kpkt(&c, NETLAT_REC_RX_PKT_SIZE_VER0, 1200, 1200);
	path = write_capture(&c, "rxpkt.nl");

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"queue>user\":{\"count\":3,");
	CHECK_HAS(r.out, "\"ready>wakeup\":{\"count\":1,\"min\":50,\"p50\":50,\"p90\":50,\"p99\":50,\"p99_9\":50,\"max\":50,\"mean\":50.0},"
		  "\"wakeup>run\":{\"count\":1,\"min\":150,\"p50\":150,\"p90\":150,\"p99\":150,\"p99_9\":150,\"max\":150,\"mean\":150.0}}");
	run_free(&r);
	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "\nwakeup>run             1        150        150        150        150        150        150        150.0\n");
	run_free(&r);

	/* tail: the stages on the packet's one line, none on the others */
	CHECK_U64(tail_lines(&r, path, "--type", "RX_PKT", NULL, NULL), 3);
	CHECK_HAS(r.out, " queue>user=100 ready>wakeup=50 wakeup>run=150\n");
	CHECK(!strstr(strstr(r.out, "wakeup>run=150") + 1, "wakeup>run"));
	run_free(&r);
	cap_free(&c);
}
