// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the reader filters, "netlat stat" and examples/flight_min.
 * Included by test_netlat.c (its helpers are static there); kept apart so
 * the record-type work and this work do not edit the same lines.
 */

/* cpu0 markers at +100 and +1100 ns (pid 1000), cpu1 LOST at +200, cpu2 a
 * marker at +300 (pid 1002), cpu3 an unknown type at +400. */
static void build_filter_capture(struct capture *c)
{
	build_base(c);
	cap_other(c, 77, 3, 0, TEST_MONO_NS + 400, 32);
	cap_marker(c, 0, 1, TEST_MONO_NS + 1100, "again", 5);
}

/* Lines of `netlat tail ARGS... path` without the STREAM line, concatenated. */
static int tail_lines(struct run *r, const char *path, const char *a, const char *b,
		      const char *c, const char *d)
{
	netlat(r, "tail", a, b, c ? c : path, c ? d : NULL, c && d ? path : NULL, NULL);
	return count_lines(r->out) - 1;
}

static void test_cli_filters(void)
{
	struct capture c = { 0 };
	const char *path;
	struct run r;

	build_filter_capture(&c);
	path = write_capture(&c, "filter.nl");

	CHECK_U64(tail_lines(&r, path, "--type", "LOST", NULL, NULL), 1);
	CHECK_HAS(r.out, "STREAM");
	CHECK_HAS(r.out, "LOST count=5");
	CHECK_HAS(r.err, "5 records, 5 lost, 1 matched");
	CHECK_U64(r.status, 0);
	run_free(&r);
	CHECK_U64(tail_lines(&r, path, "--type", "marker,77", NULL, NULL), 4);
	run_free(&r);
	CHECK_U64(tail_lines(&r, path, "--cpu", "0", NULL, NULL), 2);
	CHECK_HAS(r.out, "\"again\"");
	run_free(&r);
	CHECK_U64(tail_lines(&r, path, "--pid", "1002", NULL, NULL), 1);
	CHECK_HAS(r.out, "\"abc\"");
	run_free(&r);
	CHECK_U64(tail_lines(&r, path, "--pid", "2000", NULL, NULL), 2);	/* tid */
	run_free(&r);
	/* Relative to the first record (+100 ns): [+200, +400) ns. */
	CHECK_U64(tail_lines(&r, path, "--since", "0.0000001", "--until", "0.0000003"), 2);
	CHECK_HAS(r.out, "LOST");
	CHECK_HAS(r.out, "\"abc\"");
	run_free(&r);
	/* Time of day, as tail prints it (TZ=UTC). */
	CHECK_U64(tail_lines(&r, path, "--since", "22:13:20.0000003", NULL, NULL), 3);
	run_free(&r);
	CHECK_U64(tail_lines(&r, path, "--until", "22:13:20.0000003", "--cpu", "1"), 1);
	run_free(&r);
	CHECK_U64(tail_lines(&r, path, "--until", "22:13:19", NULL, NULL), 0);
	run_free(&r);
	/* -n counts the records shown. */
	CHECK_U64(tail_lines(&r, path, "--cpu", "0", "-n", "1"), 1);
	CHECK_HAS(r.out, "\"hello\"");
	run_free(&r);

	netlat(&r, "report", "--json", "--type", "MARKER", "--cpu", "0", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"total\":{\"records\":2,\"by_type\":{\"MARKER\":2,\"LOST\":0,\"other\":0}");
	CHECK_HAS(r.out, "\"markers\":{\"records\":2,\"bytes\":10");
	run_free(&r);
	cap_free(&c);
}

/* Set the flow of the TCP record @rec (as returned by cap_tcp()). */
static void set_flow(void *rec, int family, const char *saddr, uint16_t sport,
		     const char *daddr, uint16_t dport, uint64_t cookie)
{
	struct netlat_flow *fl = (void *)((struct netlat_rec_hdr *)rec + 1);

	memset(fl->saddr, 0, sizeof(fl->saddr));
	memset(fl->daddr, 0, sizeof(fl->daddr));
	fl->family = family;
	fl->cookie = cookie;
	fl->sport = sport;
	fl->dport = dport;
	inet_pton(family, saddr, fl->saddr);
	inet_pton(family, daddr, fl->daddr);
}

/* A virtio XMIT record; with @flow_from, carrying that TCP record's flow. */
static void cap_virtio_flow(struct capture *c, uint64_t seq, uint64_t ts,
			    const void *flow_from)
{
	struct netlat_rec_virtio *v;
	size_t off = c->len;

	cap_other(c, NETLAT_REC_VIRTIO, 0, seq, TEST_MONO_NS + ts, sizeof(*v));
	v = (void *)(c->buf + off);
	memset((char *)v + sizeof(v->hdr), 0, sizeof(*v) - sizeof(v->hdr));
	v->event = NETLAT_VIRTIO_XMIT;
	if (flow_from) {
		v->flags = NETLAT_VIRTIO_FLOW_VALID;
		memcpy(&v->flow, (const struct netlat_rec_hdr *)flow_from + 1,
		       sizeof(v->flow));
	}
}

/*
 * Three flows - A 192.0.2.1:1000>192.0.2.2:80 (SENDMSG), B
 * 10.0.0.1:2000>10.0.0.9:443 (XMIT, and a virtio XMIT with its flow),
 * C [2001:db8::1]:3000>[2001:db8::2]:80 (ACK) - plus a virtio record
 * without a flow, a marker and a LOST record.
 */
static void build_flow_capture(struct capture *c)
{
	void *b;

	cap_stream(c, 1);
	cap_tcp(c, NETLAT_REC_TCP_SENDMSG, sizeof(struct netlat_rec_tcp_sendmsg), 0, 100);
	b = cap_tcp(c, NETLAT_REC_TCP_XMIT, sizeof(struct netlat_rec_tcp_xmit), 1, 200);
	set_flow(b, AF_INET, "10.0.0.1", 2000, "10.0.0.9", 443, 8);
	cap_virtio_flow(c, 2, 300, b);
	b = cap_tcp(c, NETLAT_REC_TCP_ACK, sizeof(struct netlat_rec_tcp_ack), 3, 400);
	set_flow(b, AF_INET6, "2001:db8::1", 3000, "2001:db8::2", 80, 9);
	cap_virtio_flow(c, 4, 500, NULL);
	cap_marker(c, 0, 5, TEST_MONO_NS + 600, "m", 1);
	cap_lost(c, 0, 8, TEST_MONO_NS + 700, 2, 6);
}

static void test_cli_flow_filters(void)
{
	static const struct {
		const char *a, *b, *c, *d;
		int lines;
		const char *has;
	} cases[] = {
		{ "--port", "80", NULL, NULL, 3, "TCP_ACK" },
		{ "--port", "443", NULL, NULL, 3, "VIRTIO" },
		{ "--port", "1000", NULL, NULL, 2, "TCP_SENDMSG" },
		{ "--port", "81", NULL, NULL, 1, "LOST" },
		{ "--addr", "10.0.0.0/8", NULL, NULL, 3, "TCP_XMIT" },
		{ "--addr", "10.0.0.9", NULL, NULL, 3, "VIRTIO" },
		{ "--addr", "10.0.0.8/31", NULL, NULL, 3, "VIRTIO" },
		{ "--addr", "10.0.0.10/31", NULL, NULL, 1, "LOST" },
		{ "--addr", "2001:db8::/32", NULL, NULL, 2, "TCP_ACK" },
		{ "--addr", "2001:db8::2", NULL, NULL, 2, "TCP_ACK" },
		{ "--addr", "192.0.2.0/24", NULL, NULL, 2, "TCP_SENDMSG" },
		{ "--flow", "192.0.2.1:1000-192.0.2.2:80", NULL, NULL, 2, "TCP_SENDMSG" },
		{ "--flow", "192.0.2.2:80-192.0.2.1:1000", NULL, NULL, 2, "TCP_SENDMSG" },
		{ "--flow", "192.0.2.2:81-192.0.2.1:1000", NULL, NULL, 1, "LOST" },
		{ "--flow", "[2001:db8::1]:3000-[2001:db8::2]:80", NULL, NULL, 2, "TCP_ACK" },
		{ "--flow", "10.0.0.0/24:2000-10.0.0.9:443", NULL, NULL, 3, "VIRTIO" },
		{ "--port", "80", "--addr", "192.0.2.1", 2, "TCP_SENDMSG" },
		{ "--port", "80", "--type", "TCP_ACK", 1, "TCP_ACK" },
	};
	struct capture c = { 0 };
	const char *path;
	struct run r;
	size_t i;

	build_flow_capture(&c);
	path = write_capture(&c, "flows.nl");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!CHECK_U64(tail_lines(&r, path, cases[i].a, cases[i].b, cases[i].c,
					  cases[i].d), cases[i].lines))
			fprintf(stderr, "    (args: %s %s %s %s)\n", cases[i].a, cases[i].b,
				cases[i].c ? cases[i].c : "", cases[i].d ? cases[i].d : "");
		CHECK_HAS(r.out, cases[i].has);
		CHECK_U64(r.status, 0);
		run_free(&r);
	}
	netlat(&r, "report", "--json", "--port", "443", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"total\":{\"records\":3,");
	run_free(&r);
	cap_free(&c);
}

/* An XMIT of @len bytes in @segs segments, of flow A unless @sport is set. */
static void *cap_xmit(struct capture *c, uint64_t seq, uint32_t len, uint16_t segs,
		      uint8_t flags, uint16_t sport)
{
	struct netlat_rec_tcp_xmit *x = cap_tcp(c, NETLAT_REC_TCP_XMIT, sizeof(*x), seq,
						100 + seq);

	x->len = len;
	x->segs = segs;
	x->flags = flags;
	if (sport)
		set_flow(x, AF_INET, "10.0.0.1", sport, "10.0.0.9", 443, 8);
	return x;
}

static struct netlat_rec_tcp_retrans *cap_retrans(struct capture *c, uint64_t seq,
						  uint8_t kind, int32_t ret)
{
	struct netlat_rec_tcp_retrans *rt = cap_tcp(c, NETLAT_REC_TCP_RETRANS,
						    sizeof(*rt), seq, 100 + seq);

	rt->kind = kind;
	rt->ret = ret;
	rt->segs = 1;
	return rt;
}

static void test_cli_flow_table(void)
{
	struct netlat_rec_tcp_retrans *rt;
	struct netlat_rec_tcp_sendmsg *sm;
	struct capture c = { 0 };
	const char *path;
	struct run r;
	uint16_t i;

	cap_stream(&c, 1);
	/* flow A: 2 calls, 3000 bytes accepted; 3000 bytes in 3 segments
	 * first sent (the retransmitted XMIT does not count); retransmits:
	 * rto ok, fast -EBUSY twice, unknown kind 9 NET_XMIT_DROP */
	sm = cap_tcp(&c, NETLAT_REC_TCP_SENDMSG, sizeof(*sm), 0, 100);
	sm->ret = 3000;
	sm = cap_tcp(&c, NETLAT_REC_TCP_SENDMSG, sizeof(*sm), 1, 200);
	sm->ret = -EAGAIN;
	cap_xmit(&c, 2, 1448, 1, 0, 0);
	cap_xmit(&c, 3, 1552, 2, 0, 0);
	cap_xmit(&c, 4, 1448, 1, NETLAT_TCP_RETRANSMIT, 0);
	rt = cap_retrans(&c, 5, NETLAT_RETRANS_RTO, 0);
	rt->flags = NETLAT_TCP_COUNTED;		/* RetransSegs += 3 */
	rt->segs = 3;
	cap_retrans(&c, 6, NETLAT_RETRANS_FAST, -EBUSY);	/* early exits: */
	cap_retrans(&c, 7, NETLAT_RETRANS_FAST, -EBUSY);	/* not counted */
	cap_retrans(&c, 8, 9, 1)->flags = NETLAT_TCP_COUNTED;	/* += 1 */
	/* flow B: more bytes, listed first; a SYNACK sent again (+= 1), one failed */
	cap_xmit(&c, 9, 5000, 4, 0, 2000);
	set_flow(cap_retrans(&c, 10, NETLAT_RETRANS_SYNACK, 0), AF_INET, "10.0.0.1", 2000,
		 "10.0.0.9", 443, 8);
	set_flow(cap_retrans(&c, 11, NETLAT_RETRANS_SYNACK, -ENOMEM), AF_INET, "10.0.0.1",
		 2000, "10.0.0.9", 443, 8);
	path = write_capture(&c, "flowtab.nl");

	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "TCP flows by bytes first transmitted (2 flows;");
	CHECK_HAS(r.out, "       0            0        4         5000      0      0      0      0      0      2      1  10.0.0.1:2000>10.0.0.9:443 ck=0000000000000008 ENOMEM=1 rtx_segs=1\n"
		  "       2         3000        3         3000      1      1      2      0      0      0      3  192.0.2.1:1000>192.0.2.2:80 ck=0000000000000007 EBUSY=2,NET_XMIT_DROP=1 rtx_segs=4\n"
		  "retransmitted segments (what RetransSegs counts), all flows: 5; other 1 rto 3 synack 1\n");
	run_free(&r);

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"tcp_flows\":{\"count\":2,\"shown\":2,\"retrans_segs\":{\"other\":1,"
		  "\"rto\":3,\"fast\":0,\"tlp\":0,\"syn\":0,\"synack\":1},\"retrans_segs_total\":5,"
		  "\"flows\":[{\"sendmsg_calls\":0,");
	CHECK_HAS(r.out, "{\"sendmsg_calls\":2,\"sendmsg_bytes\":3000,\"xmit_segs\":3,\"xmit_bytes\":3000,"
		  "\"family\":2,\"saddr\":\"192.0.2.1\",\"sport\":1000,\"daddr\":\"192.0.2.2\",\"dport\":80,\"cookie\":7,"
		  "\"retrans\":{\"other\":1,\"rto\":1,\"fast\":2,\"tlp\":0,\"syn\":0,\"synack\":0},"
		  "\"retrans_segs\":{\"other\":1,\"rto\":3,\"fast\":0,\"tlp\":0,\"syn\":0,\"synack\":0},"
		  "\"retrans_segs_total\":4,\"retrans_failed\":3,\"retrans_failed_by_ret\":[{\"ret\":-16,\"name\":\"EBUSY\",\"count\":2},"
		  "{\"ret\":1,\"name\":\"NET_XMIT_DROP\",\"count\":1}],\"retrans_failed_other\":0}");
	run_free(&r);

	/* the flow filter keeps one row */
	netlat(&r, "report", "--port", "1000", path, NULL);
	CHECK_HAS(r.out, "(1 flows;");
	CHECK(!strstr(r.out, "10.0.0.1:2000"));
	run_free(&r);
	cap_free(&c);

	/* 25 flows: the top 20 by bytes, then a line for the rest */
	cap_stream(&c, 1);
	for (i = 1; i <= 25; i++)
		cap_xmit(&c, i, 100u * i, 1, 0, 3000 + i);
	path = write_capture(&c, "flowcap.nl");
	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "  2500      0      0      0      0      0      0      0  10.0.0.1:3025>");
	CHECK_HAS(r.out, "   600      0      0      0      0      0      0      0  10.0.0.1:3006>");
	CHECK(!strstr(r.out, "10.0.0.1:3005>"));
	CHECK_HAS(r.out, "... 5 more flows\n");
	run_free(&r);
	netlat(&r, "report", "--json", path, NULL);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"tcp_flows\":{\"count\":25,\"shown\":20,");
	run_free(&r);
	cap_free(&c);
}

/* The log2 bucket of @v by counting doublings: the oracle of hist_bucket(). */
static unsigned int brute_bucket(uint64_t v)
{
	unsigned int k = 0;
	uint64_t hi = 1;	/* bucket k is [hi / 2, hi) */

	while (k < 64 && v >= hi) {
		k++;
		hi = k < 64 ? hi * 2 : 0;
	}
	return k;
}

static void test_hist_buckets(void)
{
	static const uint64_t edges[] = {
		0, 1, 2, 3, 4, 7, 8, 1023, 1024, 1025, 1ULL << 40, (1ULL << 40) - 1,
		1ULL << 63, (1ULL << 63) - 1, UINT64_MAX,
	};
	uint64_t v = 12345, lo, hi;
	struct hist h;
	size_t i;

	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		CHECK_U64(hist_bucket(edges[i]), brute_bucket(edges[i]));
		hist_range(hist_bucket(edges[i]), &lo, &hi);
		CHECK(edges[i] >= lo && (!hi || edges[i] < hi));
	}
	for (i = 0; i < 10000; i++) {
		v = v * 6364136223846793005ULL + 1442695040888963407ULL;
		CHECK_U64(hist_bucket(v >> (v % 64)), brute_bucket(v >> (v % 64)));
	}
	hist_compute(&h, edges, sizeof(edges) / sizeof(edges[0]));
	CHECK_U64(h.count[0], 1);
	CHECK_U64(h.count[2], 2);	/* 2, 3 */
	CHECK_U64(h.count[11], 2);	/* 1024, 1025 */
	CHECK_U64(h.count[64], 2);	/* 2^63, UINT64_MAX */
}

/* sendmsg>xmit delay of the i-th of the histogram test's skbs. */
static uint64_t hist_delay(unsigned int i)
{
	return i < 3 ? i : (uint64_t)i * i * 7919 % 100000;
}

static void test_cli_stage_hist(void)
{
	enum { N = 500 };
	struct netlat_rec_tcp_sendmsg *sm;
	struct netlat_rec_tcp_xmit *x;
	uint64_t count[65] = { 0 }, lo, hi;
	struct capture c = { 0 };
	char expect[8192], *p = expect;
	unsigned int i, k, first = 65, last = 0;
	const char *path;
	struct run r;

	cap_stream(&c, 1);
	for (i = 0; i < N; i++) {
		uint64_t base = 1000 + (uint64_t)i * 200000;

		sm = cap_tcp(&c, NETLAT_REC_TCP_SENDMSG, sizeof(*sm), 2 * i, base);
		sm->start_ns = TEST_MONO_NS + base;
		sm->ret = 100;
		sm->sendmsg_id = 1000 + 100 * i;
		sm->end_seq = sm->sendmsg_id + 100;
		x = cap_tcp(&c, NETLAT_REC_TCP_XMIT, sizeof(*x), 2 * i + 1,
			    base + hist_delay(i));
		x->seq = 1000 + 100 * i;
		x->end_seq = x->seq + 100;
		x->len = 100;
		x->segs = 1;
		count[brute_bucket(hist_delay(i))]++;
	}
	path = write_capture(&c, "hist.nl");

	for (k = 0; k < 65; k++) {
		if (count[k] && first == 65)
			first = k;
		if (count[k])
			last = k;
	}
	p += sprintf(p, "\"tcp_stage_hist\":{\"sendmsg>xmit\":[");
	for (k = first; k <= last; k++) {
		lo = k ? 1ULL << (k - 1) : 0;
		hi = 1ULL << k;
		p += sprintf(p, "%s{\"from\":%llu,\"to\":%llu,\"count\":%llu}",
			     k == first ? "" : ",", (unsigned long long)lo,
			     (unsigned long long)hi, (unsigned long long)count[k]);
	}
	sprintf(p, "],\"xmit>qdisc\":[]");

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, expect);
	run_free(&r);

	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "\nsendmsg>xmit (ns)\n  [0, 1)                  1 |");
	CHECK_HAS(r.out, "\n  [1, 2)                  1 |");
	CHECK_HAS(r.out, "\n  [2, 4)                  1 |");
	CHECK_HAS(r.out, "[64K, 128K)");
	CHECK(!strstr(r.out, "xmit>qdisc (ns)"));
	run_free(&r);

	netlat(&r, "report", "--no-hist", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!strstr(r.out, "sendmsg>xmit (ns)"));
	run_free(&r);
	netlat(&r, "report", "--json", "--no-hist", path, NULL);
	CHECK(!strstr(r.out, "tcp_stage_hist"));
	run_free(&r);
	cap_free(&c);
}

/*
 * Packet-level records (TCP_PKT): report takes each stage straight from a
 * record, as the kernel's histograms got it (netlat_pkt_stage), tail
 * prints the stages, and a packet ended by its socket's close counts in no
 * ACK stage; export sees one packet per record.
 */
static void test_cli_packet_records(void)
{
	enum { N = 100 };
	struct netlat_rec_tcp_pkt *pk;
	struct capture c = { 0 };
	char expect[256];
	unsigned int i;
	const char *path, *trace = tmp_path("pkt.trace.json");
	struct run r;

	cap_stream(&c, 1);
	for (i = 0; i < N; i++) {
		uint64_t t = TEST_MONO_NS + 1000000 + (uint64_t)i * 100000;

		pk = cap_tcp(&c, NETLAT_REC_TCP_PKT, sizeof(*pk), i, t - TEST_MONO_NS + 30000000);
		pk->seq = 1000 + 1448 * i;
		pk->end_seq = pk->seq + 1448;
		pk->sendmsg_ns = t;
		pk->xmit_ns = t + 1000 + i;		/* sendmsg>xmit 1000..1099 */
		pk->qdisc_ns = pk->xmit_ns + 2000;
		pk->driver_ns = pk->qdisc_ns + 3000;
		pk->end_ns = pk->driver_ns + 20000000;	/* driver>ack 20 ms */
		pk->segs = 1;
		pk->flags = NETLAT_PKT_SENDMSG | NETLAT_PKT_QDISC | NETLAT_PKT_DRIVER |
			    NETLAT_PKT_ACKED | NETLAT_PKT_VQ;
		pk->vq_ns = pk->driver_ns + 500 + i % 10;	/* driver>vq 500..509 */
		pk->vq_queue = 0;
		pk->vq_free = 200 - i;				/* the fewest: 101 */
		pk->vq_size = 256;
		pk->range_end = pk->end_seq;
		if (i % 10 == 0) {
			/* 5 more packets of 1000 bytes followed as its range */
			pk->flags |= NETLAT_PKT_MERGED;
			pk->merged = 5;
			pk->range_end = pk->end_seq + 5000;
		}
	}
	/* closed before its ACK: like the kernel's histograms, no stage counts */
	pk = cap_tcp(&c, NETLAT_REC_TCP_PKT, sizeof(*pk), N, 90000000);
	pk->seq = 1000 + 1448 * N;
	pk->end_seq = pk->seq + 1;
	pk->xmit_ns = TEST_MONO_NS + 80000000;
	pk->qdisc_ns = pk->xmit_ns + 2000;
	pk->end_ns = TEST_MONO_NS + 90000000;
	pk->flags = NETLAT_PKT_QDISC | NETLAT_PKT_CLOSED;
	path = write_capture(&c, "pkt.nl");

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"sendmsg>xmit\":{\"count\":100,\"min\":1000,");
	CHECK_HAS(r.out, "\"max\":1099,");
	CHECK_HAS(r.out, "\"xmit>qdisc\":{\"count\":100,\"min\":2000,");
	snprintf(expect, sizeof(expect), "\"driver>ack\":{\"count\":%d,\"min\":20000000,", N);
	CHECK_HAS(r.out, expect);
	snprintf(expect, sizeof(expect), "\"xmit>ack\":{\"count\":%d,\"min\":20005000,", N);
	CHECK_HAS(r.out, expect);
	/* the virtio driver's stage; no other sample source than the records */
	CHECK_HAS(r.out, "\"driver>vq\":{\"count\":100,\"min\":500,\"p50\":504,");
	CHECK_HAS(r.out, "\"max\":509,\"mean\":504.5}");
	CHECK_HAS(r.out, ",\"tcp_stage_hist\":{");
	/* 10 records with 5 merged packets each; 101 records; 100 met the vq */
	CHECK_HAS(r.out, "\"packet_records\":101,\"merged_packets\":50,"
		  "\"merged_bytes\":50000,\"vq_packets\":100,\"vq_free_min\":101,"
		  "\"vq_size\":256}");
	/* 100 packets of 1448 bytes, the closing one of 1, the ranges */
	CHECK_HAS(r.out, "\"xmit_segs\":100,\"xmit_bytes\":194801,");
	run_free(&r);

	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "TCP per-packet stages (ns; 101 packets followed by the kernel)");
	CHECK_HAS(r.out, "\ndriver>vq            100        500        504        508        509"
		  "        509        509        504.5\n");
	CHECK_HAS(r.out, "\ndriver>vq (ns)\n");
	CHECK_HAS(r.out, " merged=50 (50000 bytes) vq_free_min=101/256\n");
	run_free(&r);
	netlat(&r, "report", "--html", "-", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "<tr><td class=\"l\">driver&gt;vq</td><td>100</td><td>500</td>");
	CHECK_HAS(r.out, "<td>50</td><td>101/256</td></tr>");
	run_free(&r);

	netlat(&r, "tail", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, " TCP_PKT ");
	/* no end of line: a stage the uapi adds follows */
	CHECK_HAS(r.out, " seq=1000 end_seq=2448 segs=1 retrans=0 retrans_fail=0 end=ack "
		  "vq_queue=0 vq_free=200 vq_size=256 merged=5 range_end=7448 "
		  "sendmsg>xmit=1000 xmit>qdisc=2000 qdisc>driver=3000 driver>ack=20000000 "
		  "xmit>ack=20005000 sendmsg>ack=20006000 driver>vq=500");
	/* no range, no merged fields */
	CHECK_HAS(r.out, " seq=2448 end_seq=3896 segs=1 retrans=0 retrans_fail=0 end=ack "
		  "vq_queue=0 vq_free=199 vq_size=256 sendmsg>xmit=1001 ");
	/* a bare FIN: no stages; its first transmission acknowledged nothing */
	CHECK_HAS(r.out, " end=close sent_ack_seq=0\n");
	run_free(&r);

	netlat(&r, "export", "--chrome-trace", trace, path, NULL);
	CHECK_U64(r.status, 0);
	run_free(&r);
	cap_free(&c);
}

static void test_cli_filter_usage(void)
{
	static const char *const bad[][3] = {
		{ "--type", "FOO", "unknown record type 'FOO'" },
		{ "--type", "MARKER,", "empty type name" },
		{ "--type", "70000", "unknown record type" },
		{ "--pid", "x", "bad --pid 'x'" },
		{ "--cpu", "-1", "bad --cpu '-1'" },
		{ "--since", "25:00:00", "HH:MM:SS" },
		{ "--until", "1:2:3", "HH:MM:SS" },
		{ "--since", "-1", "SECONDS" },
		{ "--since", "abc", "SECONDS" },
		{ "--port", "70000", "bad --port '70000'" },
		{ "--port", "http", "bad --port" },
		{ "--addr", "1.2.3", "bad --addr '1.2.3'" },
		{ "--addr", "10.0.0.0/33", "bad --addr" },
		{ "--addr", "::1/129", "bad --addr" },
		{ "--flow", "1.2.3.4:1", "bad --flow" },
		{ "--flow", "[::1:80-1.2.3.4:5", "bad --flow" },
		{ "--flow", "::1:80-1.2.3.4:5", "bad --flow" },
		{ "--flow", "1.2.3.4:1-1.2.3.5:x", "bad --flow" },
	};
	static const char *const commands[] = { "tail", "report", "stat" };
	struct run r;
	size_t i, j;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (j = 0; j < 3; j++) {
			netlat(&r, commands[j], bad[i][0], bad[i][1], "x", NULL);
			if (!CHECK_U64(r.status, 2))
				fprintf(stderr, "    (args: %s %s %s)\n", commands[j],
					bad[i][0], bad[i][1]);
			CHECK_HAS(r.err, bad[i][2]);
			CHECK_HAS(r.err, "usage: netlat");
			CHECK_U64(count_lines(r.err), 2);
			run_free(&r);
		}
	}
	netlat(&r, "report", "--since", "5", "--until", "2", "x", NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "empty time window");
	run_free(&r);
	netlat(&r, "tail", "--cpu", "1", "--cpu", "2", "x", NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "--cpu given twice");
	run_free(&r);
	netlat(&r, "stat", "--interval", "0", NULL);
	CHECK_U64(r.status, 2);
	run_free(&r);
	netlat(&r, "stat", "extra", NULL);
	CHECK_U64(r.status, 2);
	run_free(&r);
	netlat(&r, "stat", "--help", NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "--interval");
	CHECK_HAS(r.out, "--since");
	run_free(&r);
}

/* stat on a capture prints exactly what report prints; errors are final. */
static void test_cli_stat(void)
{
	struct capture c = { 0 };
	const char *path;
	struct run r, r2;

	build_filter_capture(&c);
	path = write_capture(&c, "stat.nl");
	netlat(&r, "report", path, NULL);
	netlat(&r2, "stat", "--device", path, NULL);
	CHECK_U64(r2.status, 0);
	CHECK(r.out[0] && !strcmp(r.out, r2.out));
	run_free(&r);
	run_free(&r2);
	netlat(&r, "report", "--json", "--pid", "1000", path, NULL);
	netlat(&r2, "stat", "--json", "--pid", "1000", "--device", path, "--interval", "10", NULL);
	CHECK_U64(r2.status, 0);
	CHECK(r.out[0] && !strcmp(r.out, r2.out));
	run_free(&r);
	run_free(&r2);
	netlat(&r, "stat", "--device", write_bad_case(find_bad_case("truncated last record")), NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "truncated capture");
	CHECK_U64(count_lines(r.err), 1);
	CHECK(!r.out[0]);
	run_free(&r);
	cap_free(&c);
}

/* Interval reports of a live source: a pipe fed slowly. */
static void test_cli_stat_intervals(void)
{
	struct capture c = { 0 }, more = { 0 };
	char *fifo = (char *)tmp_path("stat.fifo");
	char *argv[] = { netlat_bin, "stat", "--json", "--interval", "0.2",
			 "--device", fifo, NULL };
	const char *out = tmp_path("stat.out"), *err = tmp_path("stat.err");
	struct run r = { 0 };
	int fds[2];
	char *text;
	pid_t pid;

	if (mkfifo(fifo, 0600)) {
		CHECK(!"mkfifo");
		return;
	}
	build_base(&c);
	cap_marker(&more, 0, 1, TEST_MONO_NS + 5000, "later", 5);
	pid = spawn_argv(argv, out, err);
	fds[1] = open(fifo, O_WRONLY);	/* waits for the reader */
	CHECK(write(fds[1], c.buf, c.len) == (ssize_t)c.len);
	usleep(500 * 1000);
	CHECK(write(fds[1], more.buf, more.len) == (ssize_t)more.len);
	usleep(100 * 1000);
	close(fds[1]);
	wait_child(&r, pid, 5000);
	CHECK_U64(r.status, 0);
	text = read_file(out, NULL);
	/* At least three windows: the base, one or more empty, the marker. */
	CHECK(count_lines(text) >= 3);
	CHECK(json_lines_valid(text));
	CHECK_HAS(text, "\"total\":{\"records\":3,");
	CHECK_HAS(text, "\"total\":{\"records\":0,");
	CHECK_HAS(text, "\"total\":{\"records\":1,");
	free(text);
	cap_free(&c);
	cap_free(&more);
}

/* The path of examples/@name, next to the netlat binary under test. */
static char *example_bin(const char *name)
{
	static char path[4096];
	const char *slash = strrchr(netlat_bin, '/');

	snprintf(path, sizeof(path), "%.*sexamples/%s",
		 slash ? (int)(slash - netlat_bin + 1) : 0, netlat_bin, name);
	return path;
}

/* Run examples/@name with the arguments in @ap (NULL-terminated). */
static void run_example(struct run *r, const char *name, va_list ap)
{
	char *argv[16];
	int n = 0;

	argv[n++] = example_bin(name);
	while (n < 15 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	argv[n] = NULL;
	run_argv(r, argv);
}

static void flight(struct run *r, ...)
{
	va_list ap;

	va_start(ap, r);
	run_example(r, "flight_min", ap);
	va_end(ap);
}

static void test_flight_min(void)
{
	char *in, *dump = (char *)tmp_path("flight.nl"), *ring = (char *)tmp_path("flight.ring");
	struct capture c = { 0 };
	struct run r;
	char data[64];
	int i;

	cap_stream(&c, 2);
	for (i = 0; i < 200; i++) {
		/* 8 bytes: 48-byte records */
		snprintf(data, sizeof(data), i == 150 ? "DUMPNOW!" : "m%03d-xx", i);
		cap_marker(&c, (uint16_t)(i % 2), (uint64_t)i / 2,
			   TEST_MONO_NS + (uint64_t)i * 1000, data, (uint32_t)strlen(data));
	}
	in = (char *)write_capture(&c, "flight-in.nl");

	/* The tag dumps the 151 records up to the marker; the history is big. */
	flight(&r, "-d", in, "-t", "DUMPNOW", "-o", dump, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "dump 1: 151 records");
	run_free(&r);
	netlat(&r, "report", "--json", dump, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "\"total\":{\"records\":151,");
	CHECK_HAS(r.out, "\"unexplained_gaps\":0");
	run_free(&r);

	/* 1 KiB per CPU: only the newest records of each CPU, still a valid capture. */
	flight(&r, "-d", in, "-m", "1K", "-e", "-o", dump, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "dump 1: 42 records");	/* 48-byte records: 21 per CPU */
	run_free(&r);
	netlat(&r, "tail", dump, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "\"m199-xx\"");
	CHECK(!strstr(r.out, "\"m157-xx\""));
	CHECK_HAS(r.out, "\"m158-xx\"");
	CHECK_HAS(r.err, "42 records, 0 lost\n");
	run_free(&r);

	/* A ring file outlives the recorder: -x extracts it. */
	flight(&r, "-d", in, "-m", "1K", "-f", ring, "-o", dump, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!r.err[0]);
	run_free(&r);
	unlink(dump);
	flight(&r, "-x", ring, "-o", dump, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "dump 1: 42 records");
	run_free(&r);
	netlat(&r, "report", dump, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "42 records, 0 lost, 0 unexplained gaps");
	run_free(&r);

	flight(&r, "-m", "3Q", NULL);
	CHECK_U64(r.status, 2);
	run_free(&r);
	flight(&r, "-x", in, "-o", dump, NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "not a ring file");
	run_free(&r);
	flight(&r, "-d", "/dev/netlat-test-missing", NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "is the netlat module loaded?");
	run_free(&r);
	cap_free(&c);
}

/* netlat.1 documents every command and every long option the help shows. */
static void test_man_page_complete(void)
{
	char path[4096], opt[64], man_opt[128];
	const char *slash = strrchr(netlat_bin, '/');
	struct run all, one;
	char *man, *line, *p;
	size_t i, j;

	snprintf(path, sizeof(path), "%.*snetlat.1",
		 slash ? (int)(slash - netlat_bin + 1) : 0, netlat_bin);
	man = read_file(path, NULL);
	CHECK(man[0]);
	netlat(&all, "--help", NULL);
	for (line = strstr(all.out, "commands:\n"); line && (line = strchr(line, '\n'));) {
		char cmd[32], mark[64];

		line++;
		if (sscanf(line, " %31[a-z]", cmd) != 1 || line[0] != ' ')
			break;
		snprintf(mark, sizeof(mark), ".B %s\n", cmd);
		if (!CHECK_HAS(man, mark))
			continue;
		netlat(&one, cmd, "--help", NULL);
		for (p = one.out; (p = strstr(p, "--")); p += 2) {
			for (i = 0; i < sizeof(opt) - 1 && (p[i] == '-' || (p[i] >= 'a' && p[i] <= 'z')); i++)
				opt[i] = p[i];
			opt[i] = 0;
			for (i = j = 0; opt[i] && j < sizeof(man_opt) - 2; i++) {
				if (opt[i] == '-')
					man_opt[j++] = '\\';
				man_opt[j++] = opt[i];
			}
			man_opt[j] = 0;
			CHECK_HAS(man, man_opt);
		}
		run_free(&one);
	}
	run_free(&all);
	free(man);
}
