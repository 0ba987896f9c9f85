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
		  "\"drops\":1,\"drop_reasons\":{\"5\":1},"
		  "\"drops_by_reason\":[{\"reason\":5,\"name\":null,\"count\":1}],"
		  "\"drops_other_reasons\":0}");
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

/* ---- drop reasons by name ------------------------------------------------ */

/* The skb:kfree_skb format of a real 6.1 kernel (Debian 6.1.0-57). */
#define FMT_61_ENTRIES	66

static char *fixture(const char *name)
{
	char path[4096];
	const char *slash = strrchr(netlat_bin, '/');

	snprintf(path, sizeof(path), "%.*stests/data/%s",
		 slash ? (int)(slash - netlat_bin + 1) : 0, netlat_bin, name);
	return read_file(path, NULL);
}

/*
 * The tracepoint format's table, read as the kernel printed it: the
 * entries a reader of the file sees (spot checks and their number), and
 * what is not a table.
 */
static void test_drop_reason_names(void)
{
	char *fmt = fixture("kfree_skb-6.1.0-57.format");
	struct netlat_names *t = netlat_names_new(), *u = netlat_names_new();
	unsigned char buf[16 * NETLAT_REC_MAX_SIZE];
	size_t len, at, i;

	CHECK(fmt[0]);
	CHECK_U64(netlat_names_parse_symbolic(t, fmt, "reason"), FMT_61_ENTRIES);
	CHECK_U64(netlat_names_count(t), FMT_61_ENTRIES);
	CHECK(!strcmp(netlat_names_get(t, 1), "NOT_SPECIFIED"));
	CHECK(!strcmp(netlat_names_get(t, 15), "SOCKET_RCVBUFF"));
	CHECK(!strcmp(netlat_names_get(t, 16), "PROTO_MEM"));
	CHECK(!strcmp(netlat_names_get(t, 23), "TCP_OLD_DATA"));
	CHECK(!strcmp(netlat_names_get(t, 66), "MAX"));
	CHECK(!netlat_names_get(t, 0));
	CHECK(!netlat_names_get(t, 67));
	CHECK_U64(netlat_names_find(t, "PROTO_MEM"), 16);
	CHECK_U64(netlat_names_find(t, "NO_SUCH_REASON") + 1, 0);
	/* another field's table, none at all, an entry the kernel left unresolved */
	CHECK_U64(netlat_names_parse_symbolic(u, fmt, "protocol") + ENOENT, 0);
	CHECK_U64(netlat_names_parse_symbolic(u, "print fmt: \"%d\", REC->x", "reason") + ENOENT, 0);
	CHECK_U64(netlat_names_parse_symbolic(u, "__print_symbolic(REC->reason, "
		  "{ SKB_DROP_REASON_X, \"X\" }, { 0x10, \"SIXTEEN\" }, {3,\"THREE\"})", "reason"), 2);
	CHECK(!strcmp(netlat_names_get(u, 16), "SIXTEEN"));
	CHECK(!strcmp(netlat_names_get(u, 3), "THREE"));

	/* as notes: whole records of whole lines, read back to the same table */
	len = netlat_names_notes(t, NETLAT_NOTE_DROP_REASONS, buf, sizeof(buf));
	CHECK(len > NETLAT_REC_MAX_SIZE);
	netlat_names_clear(u);
	for (at = 0; at < len;) {
		const struct netlat_rec_note *n = (const void *)(buf + at);

		CHECK(n->hdr.size <= NETLAT_REC_MAX_SIZE && n->hdr.size % NETLAT_REC_ALIGN == 0);
		CHECK_U64(n->hdr.type, NETLAT_REC_NOTE);
		CHECK_U64(n->kind, NETLAT_NOTE_DROP_REASONS);
		CHECK(n->len && n->text[n->len - 1] == '\n');
		CHECK(netlat_names_add_note(u, n) > 0);
		at += n->hdr.size;
	}
	CHECK_U64(netlat_names_count(u), FMT_61_ENTRIES);
	for (i = 0; i <= 67; i++) {
		const char *a = netlat_names_get(t, (uint32_t)i), *b = netlat_names_get(u, (uint32_t)i);

		CHECK(a ? b && !strcmp(a, b) : !b);
	}
	CHECK_U64(netlat_names_notes(t, NETLAT_NOTE_DROP_REASONS, buf, NETLAT_REC_MAX_SIZE), 0);
	netlat_names_free(t);
	netlat_names_free(u);
	free(fmt);
}

/*
 * netlat record's notes: inserted right after the stream header of what
 * the tee writes, with its cpu and time; the rest byte for byte. A reader
 * of the copy counts no sequence break and passes the notes on in order.
 */
static void test_tee_insert_notes(void)
{
	char *fmt = fixture("kfree_skb-6.1.0-57.format");
	struct netlat_names *t = netlat_names_new(), *got = netlat_names_new();
	unsigned char notes[16 * NETLAT_REC_MAX_SIZE];
	const struct netlat_rec_hdr *h;
	struct netlat_seq_stats st;
	struct netlat_source *src;
	struct netlat_merge *m;
	struct netlat_seq *seq;
	struct capture c = { 0 };
	size_t len, nr_notes = 0, stream_size, other = 0;
	char *in_bytes, *out_bytes;
	size_t in_len, out_len;
	const char *in, *out;
	int fd, r;

	CHECK(netlat_names_parse_symbolic(t, fmt, "reason") > 0);
	len = netlat_names_notes(t, NETLAT_NOTE_DROP_REASONS, notes, sizeof(notes));
	cap_stream(&c, 2);
	stream_size = c.len;
	((struct netlat_rec_hdr *)c.buf)->cpu = 1;
	cap_marker(&c, 0, 10, TEST_MONO_NS + 5, "a", 1);
	cap_marker(&c, 1, 20, TEST_MONO_NS + 6, "b", 1);
	cap_marker(&c, 1, 21, TEST_MONO_NS + 7, "c", 1);
	in = write_capture(&c, "tee-in.nl");
	out = tmp_path("tee-out.nl");

	src = netlat_open(in, NULL);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	netlat_set_tee(src, fd, out);
	CHECK_U64(netlat_set_tee_insert(src, notes, len), 0);
	while ((r = netlat_next(src, &h)) == 1)
		;
	CHECK_U64(r, 0);
	netlat_close(src);
	close(fd);
	in_bytes = read_file(in, &in_len);
	out_bytes = read_file(out, &out_len);
	CHECK_U64(out_len, in_len + len);
	CHECK(!memcmp(out_bytes, in_bytes, stream_size));
	CHECK(!memcmp(out_bytes + stream_size + len, in_bytes + stream_size,
		      in_len - stream_size));

	src = netlat_open(out, NULL);
	m = netlat_merge_new(src, NETLAT_HOLD_NS_DEFAULT);
	seq = netlat_seq_new();
	while ((r = netlat_merge_next(m, &h)) == 1) {
		netlat_seq_add(seq, h, NULL);
		netlat_names_feed(got, h, false);
		if (h->type == NETLAT_REC_NOTE) {
			CHECK_U64(other, 0);		/* before every ring record */
			CHECK_U64(h->cpu, 1);
			CHECK_U64(h->ts_ns, TEST_MONO_NS);
			nr_notes++;
		} else if (h->type != NETLAT_REC_STREAM) {
			other++;
		}
	}
	CHECK_U64(r, 0);
	CHECK(nr_notes > 1);
	CHECK_U64(other, 3);
	CHECK_U64(netlat_names_count(got), FMT_61_ENTRIES);
	netlat_seq_total(seq, &st);
	CHECK_U64(st.records, 3);
	CHECK_U64(st.gaps, 0);
	netlat_seq_free(seq);
	netlat_merge_free(m);
	netlat_close(src);
	free(in_bytes);
	free(out_bytes);
	netlat_names_free(t);
	netlat_names_free(got);
	free(fmt);
	cap_free(&c);
}

static void cap_drop(struct capture *c, uint64_t ts, bool udp, uint16_t dport, uint32_t reason)
{
	struct netlat_rec_rx_drop *d = cap_rx_pkt(c, NETLAT_REC_RX_DROP, sizeof(*d), ts, udp);

	d->proto = udp ? NETLAT_RX_UDP : NETLAT_RX_TCP;
	d->flow.dport = dport;
	d->reason = reason;
}

/*
 * A capture with the recording host's notes: drops by name where the
 * notes name them, by number where not; an unconnected UDP socket's drops
 * are its own; drops of no socket seen are counted apart. A second stream
 * without notes (another capture appended) names nothing.
 */
static void test_cli_drop_reasons(void)
{
	char *fmt = fixture("kfree_skb-6.1.0-57.format");
	struct netlat_names *t = netlat_names_new();
	struct capture c = { 0 };
	unsigned char notes[16 * NETLAT_REC_MAX_SIZE];
	size_t len;
	const char *path;
	struct run r;

	CHECK(netlat_names_parse_symbolic(t, fmt, "reason") > 0);
	len = netlat_names_notes(t, NETLAT_NOTE_DROP_REASONS, notes, sizeof(notes));
	rx_seq = 0;
	cap_stream(&c, 1);
	cap_bytes(&c, notes, len);
	len = netlat_note_text(notes, sizeof(notes), NETLAT_NOTE_KERNEL, "6.1.0-57-cloud-amd64");
	cap_bytes(&c, notes, len);
	/* the UDP socket 192.0.2.2:53 unconnected; its datagrams, three dropped */
	cap_rx_udp(&c, NETLAT_REC_RX_TRANSPORT, 100, 1);
	cap_drop(&c, 200, true, 53, 15);	/* SOCKET_RCVBUFF */
	cap_drop(&c, 210, true, 53, 15);
	cap_drop(&c, 220, true, 53, 999);	/* not in the table */
	/* TCP 192.0.2.2:80 */
	cap_rx_skb(&c, NETLAT_REC_RX_TRANSPORT, 300, 1000, 100, 0);
	cap_drop(&c, 400, false, 80, 23);	/* TCP_OLD_DATA */
	/* to a port no record shows a socket of */
	cap_drop(&c, 500, true, 7777, 2);	/* NO_SOCKET */
	/* another capture appended: no notes, numbers */
	cap_stream(&c, 1);
	cap_drop(&c, 600, false, 80, 23);
	path = write_capture(&c, "drops.nl");

	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "  recorded on kernel 6.1.0-57-cloud-amd64; 66 drop reason names noted\n");
	CHECK_HAS(r.out, "udp 192.0.2.2:53>0.0.0.0:0 ck=000000000000000b segments=1 received=64 "
		  "read=0 ofo=0 backlog=0 drops=3 (SOCKET_RCVBUFF:2,reason999:1)\n");
	CHECK_HAS(r.out, " backlog=0 drops=2 (TCP_OLD_DATA:1,reason23:1)\n");
	CHECK_HAS(r.out, "drops of packets to no socket above: 1 (NO_SOCKET:1)\n");
	run_free(&r);

	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"kernel\":\"6.1.0-57-cloud-amd64\",\"drop_reason_names\":66,");
	CHECK_HAS(r.out, "\"drops\":3,\"drop_reasons\":{\"15\":2,\"999\":1},\"drops_by_reason\":["
		  "{\"reason\":15,\"name\":\"SOCKET_RCVBUFF\",\"count\":2},"
		  "{\"reason\":999,\"name\":null,\"count\":1}]");
	CHECK_HAS(r.out, "\"rx_drops_unmatched\":{\"drops\":1,\"drop_reasons\":{\"2\":1},"
		  "\"drops_by_reason\":[{\"reason\":2,\"name\":\"NO_SOCKET\",\"count\":1}]");
	run_free(&r);

	/* the page: receive stages in the stage table, the receive flows */
	netlat(&r, "report", "--html", "-", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "<tr><td class=\"l\">queue&gt;user</td><td>0</td>");
	CHECK_HAS(r.out, "<section id=\"rx-flows\"><h2>Receive flows</h2><pre>udp 192.0.2.2:53&gt;");
	CHECK_HAS(r.out, " drops=3 (SOCKET_RCVBUFF:2,reason999:1)\n");
	run_free(&r);

	/* tail: the name where the notes give one; the notes themselves */
	netlat(&r, "tail", "--type", "RX_DROP", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, " NOTE kind=kernel version=1 len=20 \"6.1.0-57-cloud-amd64\"\n");
	CHECK_HAS(r.out, " NOTE kind=drop_reasons version=1 len=");
	CHECK_HAS(r.out, " proto=udp reason=SOCKET_RCVBUFF ifindex=");
	CHECK_HAS(r.out, " proto=udp reason=999 ifindex=");
	CHECK_HAS(r.out, " proto=tcp reason=TCP_OLD_DATA ifindex=");
	CHECK_HAS(r.out, " proto=tcp reason=23 ifindex=");	/* the second stream */
	CHECK_HAS(r.err, "8 records, 0 lost, 6 matched");
	run_free(&r);
	netlat(&r, "tail", "--json", "-n", "1", "--type", "RX_DROP", path, NULL);
	CHECK_HAS(r.out, "\"reason\":15,\"reason_name\":\"SOCKET_RCVBUFF\",");
	run_free(&r);
	netlat_names_free(t);
	free(fmt);
	cap_free(&c);
}

/* The formats of two real kernels (Debian 6.1.0-57 and 6.12.117). */
#define FMT_612_ENTRIES	103

static size_t fixture_notes(const char *name, void *buf, size_t room)
{
	struct netlat_names *t = netlat_names_new();
	char *fmt = fixture(name);
	size_t len;

	CHECK(netlat_names_parse_symbolic(t, fmt, "reason") > 0);
	len = netlat_names_notes(t, NETLAT_NOTE_DROP_REASONS, buf, room);
	netlat_names_free(t);
	free(fmt);
	return len;
}

/*
 * The numbering differs between kernels: 6.12 numbers 103 reasons where
 * 6.1 numbers 66, SOCKET_RCVBUFF is 15 on 6.1 and 6 on 6.12, and 16 is
 * PROTO_MEM on one and UNICAST_IN_L2_MULTICAST on the other. Two captures
 * appended, each with its kernel's notes: each drop is named by its own.
 */
static void test_cli_drop_reasons_two_kernels(void)
{
	struct netlat_names *t = netlat_names_new();
	unsigned char notes[32 * NETLAT_REC_MAX_SIZE];
	char *fmt = fixture("kfree_skb-6.12.117.format");
	struct capture c = { 0 };
	const char *path;
	struct run r;

	CHECK_U64(netlat_names_parse_symbolic(t, fmt, "reason"), FMT_612_ENTRIES);
	CHECK(!strcmp(netlat_names_get(t, 2), "NOT_SPECIFIED"));
	CHECK(!strcmp(netlat_names_get(t, 6), "SOCKET_RCVBUFF"));
	CHECK(!strcmp(netlat_names_get(t, 19), "PROTO_MEM"));
	CHECK(!strcmp(netlat_names_get(t, 16), "UNICAST_IN_L2_MULTICAST"));
	netlat_names_free(t);
	free(fmt);

	rx_seq = 0;
	cap_stream(&c, 1);
	cap_bytes(&c, notes, fixture_notes("kfree_skb-6.1.0-57.format", notes, sizeof(notes)));
	cap_rx_udp(&c, NETLAT_REC_RX_TRANSPORT, 100, 1);
	cap_drop(&c, 200, true, 53, 15);
	cap_drop(&c, 210, true, 53, 15);
	cap_drop(&c, 220, true, 53, 16);
	cap_stream(&c, 1);
	cap_bytes(&c, notes, fixture_notes("kfree_skb-6.12.117.format", notes, sizeof(notes)));
	cap_rx_udp(&c, NETLAT_REC_RX_TRANSPORT, 300, 2);
	cap_drop(&c, 400, true, 53, 6);
	cap_drop(&c, 410, true, 53, 16);
	path = write_capture(&c, "drops2.nl");

	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, " drops=5 (SOCKET_RCVBUFF:3,PROTO_MEM:1,UNICAST_IN_L2_MULTICAST:1)\n");
	run_free(&r);
	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"drops\":5,\"drop_reasons\":{\"15\":2,\"16\":2,\"6\":1},"
		  "\"drops_by_reason\":[{\"reason\":15,\"name\":\"SOCKET_RCVBUFF\",\"count\":2},"
		  "{\"reason\":16,\"name\":\"PROTO_MEM\",\"count\":1},"
		  "{\"reason\":6,\"name\":\"SOCKET_RCVBUFF\",\"count\":1},"
		  "{\"reason\":16,\"name\":\"UNICAST_IN_L2_MULTICAST\",\"count\":1}]");
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

/*
 * A first-size RX_PKT (an older module) read in place at the end of the
 * mapped memory: no stage reader looks past its 144 bytes, and it has no
 * wakeup stages.
 */
static void test_rx_pkt_stage_first_size(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#define STAGE_REC(NAME, name, rec, from_, to_)	[NETLAT_STAGE_##NAME] = #rec,
	static const char *const rec[NETLAT_NR_STAGES] = { NETLAT_STAGES(STAGE_REC) };
#undef STAGE_REC
	struct netlat_rec_rx_pkt *p;
	uint64_t from, to;
	unsigned int k;

	if (!CHECK(m != MAP_FAILED))
		return;
	/* the page after the record faults */
	CHECK(!mprotect(m + page, page, PROT_NONE));
	p = (void *)(m + page - NETLAT_REC_RX_PKT_SIZE_VER0);
	memset(p, 0, NETLAT_REC_RX_PKT_SIZE_VER0);
	p->hdr.size = NETLAT_REC_RX_PKT_SIZE_VER0;
	p->hdr.type = NETLAT_REC_RX_PKT;
	p->proto = NETLAT_RX_TCP;
	p->flags = NETLAT_RXP_COPIED;
	p->netif_ns = 100;
	p->transport_ns = 200;
	p->queue_ns = 300;
	p->end_ns = 400;
	for (k = 0; k < NETLAT_NR_STAGES; k++) {
		bool got = netlat_rx_pkt_stage(p, k, &from, &to);

		if (k == NETLAT_STAGE_RX_READY_WAKEUP || k == NETLAT_STAGE_RX_WAKEUP_RUN ||
		    k == NETLAT_STAGE_RX_NETIF_UDP || strcmp(rec[k], "rx_pkt"))
			CHECK(!got);
		else
			CHECK(got);
	}
	CHECK(netlat_rx_pkt_stage(p, NETLAT_STAGE_RX_NETIF_USER, &from, &to) &&
	      from == 100 && to == 400);
	munmap(m, 2 * page);
}

