// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the flight recorder pieces that need no module: the filter and
 * trigger spec parsers, reading snapshot streams (synthetic ones), the
 * shorter TCP_ACK of older modules, the snapshot directory's names and
 * rotation, and the commands' errors. Included by test_netlat.c.
 */
#include <dirent.h>
#include <sys/stat.h>
#include "../snapdir.h"

/* ==== filter specs ======================================================= */

static bool parse_ok(const char *spec, struct netlat_filter_rule *r)
{
	char errbuf[NETLAT_ERRBUF_SIZE] = "";
	int ret = netlat_parse_filter(spec, r, errbuf);

	if (ret)
		fprintf(stderr, "    '%s': %s\n", spec, errbuf);
	return ret == 0;
}

/* format(parse(spec)) parses back to the same rule. */
static void check_round_trip(const struct netlat_filter_rule *r)
{
	struct netlat_filter_rule again;
	char spec[512];

	netlat_format_filter(spec, sizeof(spec), r);
	if (CHECK(parse_ok(spec, &again)))
		CHECK(!memcmp(r, &again, sizeof(again)));
}

static void test_filter_spec_good(void)
{
	struct netlat_filter_rule r;
	char spec[512], path_spec[64];
	struct stat st;

	CHECK_U64(sizeof(r), NETLAT_FILTER_RULE_SIZE_VER0);
	if (CHECK(parse_ok("addr=192.0.2.0/24,port=5001,groups=sendmsg,xmit", &r))) {
		CHECK_U64(r.match, NETLAT_MATCH_ADDR | NETLAT_MATCH_PORT);
		CHECK_U64(r.family, AF_INET);
		CHECK_U64(r.prefix_len, 24);
		CHECK(!memcmp(r.addr, "\xc0\x00\x02\x00", 4));
		CHECK_U64(r.port, 5001);
		CHECK_U64(r.groups, NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT);
		netlat_format_filter(spec, sizeof(spec), &r);
		CHECK(!strcmp(spec, "addr=192.0.2.0/24,port=5001,groups=sendmsg,xmit"));
		check_round_trip(&r);
	}
	/* groups first: the list ends at the next KEY= */
	if (CHECK(parse_ok("groups=ack,retrans,port=80", &r))) {
		CHECK_U64(r.groups, NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_RETRANS);
		CHECK_U64(r.port, 80);
	}
	/* a host address without a prefix is /32; groups default to all */
	if (CHECK(parse_ok("addr=10.1.2.3", &r))) {
		CHECK_U64(r.prefix_len, 32);
		CHECK_U64(r.groups, NETLAT_PROBE_ALL);
		netlat_format_filter(spec, sizeof(spec), &r);
		CHECK(!strcmp(spec, "addr=10.1.2.3/32,groups=all"));
	}
	if (CHECK(parse_ok("addr=2001:db8::/32,tid=7", &r))) {
		CHECK_U64(r.family, AF_INET6);
		CHECK_U64(r.prefix_len, 32);
		CHECK(!memcmp(r.addr, "\x20\x01\x0d\xb8", 4));
		CHECK_U64(r.tid, 7);
		CHECK_U64(r.match, NETLAT_MATCH_ADDR | NETLAT_MATCH_TID);
		check_round_trip(&r);
	}
	if (CHECK(parse_ok("addr=0.0.0.0/0", &r)))
		CHECK_U64(r.prefix_len, 0);
	if (CHECK(parse_ok("cookie=0x10,pid=42", &r))) {
		CHECK_U64(r.cookie, 16);
		CHECK_U64(r.tgid, 42);
		CHECK_U64(r.match, NETLAT_MATCH_COOKIE | NETLAT_MATCH_TGID);
		check_round_trip(&r);
	}
	if (CHECK(parse_ok("sock-cookie=18446744073709551615", &r))) {
		CHECK_U64(r.cookie, UINT64_MAX);
		CHECK_U64(r.match, NETLAT_MATCH_SOCK_COOKIE);
		check_round_trip(&r);
	}
	if (CHECK(parse_ok("netns=4026531840,groups=virtio_tx", &r))) {
		CHECK_U64(r.netns_ino, 4026531840u);
		CHECK_U64(r.groups, NETLAT_PROBE_VIRTIO_TX);
		check_round_trip(&r);
	}
	if (CHECK(parse_ok("netns=net:[4026531992]", &r)))
		CHECK_U64(r.netns_ino, 4026531992u);
	/* a path: the inode stat() reports */
	if (!stat("/proc/self/ns/net", &st) && CHECK(parse_ok("netns=/proc/self/ns/net", &r)))
		CHECK_U64(r.netns_ino, st.st_ino);
	snprintf(path_spec, sizeof(path_spec), "port=1,groups=%llu",
		 (unsigned long long)NETLAT_PROBE_TCP_DEV);
	if (CHECK(parse_ok(path_spec, &r)))
		CHECK_U64(r.groups, NETLAT_PROBE_TCP_DEV);
}

static void test_filter_spec_bad(void)
{
	static const struct { const char *spec, *message; } cases[] = {
		{ "", "empty rule" },
		{ "port", "'port' is not KEY=VALUE" },
		{ "port=5,xmit", "'xmit' is not KEY=VALUE" },
		{ "bogus=1", "unknown key 'bogus' (keys: addr, port" },
		{ "port=", "port has no value" },
		{ "port=0", "port '0' is not a number from 1 to 65535" },
		{ "port=65536", "port '65536' is not a number from 1 to 65535" },
		{ "port=-1", "port '-1' is not a number" },
		{ "port=80x", "port '80x' is not a number" },
		{ "port=1,port=2", "'port' given twice" },
		{ "addr=192.0.2.1/24", "has bits set past the /24 prefix" },
		{ "addr=192.0.2.0/33", "prefix '/33' is not 0 to 32" },
		{ "addr=2001:db8::1/129", "prefix '/129' is not 0 to 128" },
		{ "addr=192.0.2.0/", "prefix '/' is not 0 to 32" },
		{ "addr=example.com", "'example.com' is not an IPv4 or IPv6 address" },
		{ "addr=300.1.1.1", "is not an IPv4 or IPv6 address" },
		{ "cookie=0", "cookie '0' is not a number from 1" },
		{ "cookie=1,sock-cookie=2", "cookie and sock-cookie cannot be in one rule" },
		{ "netns=0", "netns '0' is not an inode number" },
		{ "netns=4294967296", "netns '4294967296' is not an inode number" },
		{ "netns=/nonexistent/ns", "netns: cannot stat '/nonexistent/ns'" },
		{ "pid=0", "pid '0' is not a number from 1 to 4294967295" },
		{ "tid=x", "tid 'x' is not a number" },
		{ "groups=sendmsg", "no condition: give at least one of" },
		{ "port=1,groups=none", "groups 'none': expected probe groups" },
		{ "port=1,groups=sendmsg,bogus", "groups 'sendmsg,bogus'" },
		{ "port=1,groups=0x100000000", "groups '0x100000000'" },
	};
	struct netlat_filter_rule r;
	char errbuf[NETLAT_ERRBUF_SIZE];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		errbuf[0] = 0;
		if (!CHECK_U64(netlat_parse_filter(cases[i].spec, &r, errbuf), -EINVAL))
			fprintf(stderr, "    (spec '%s')\n", cases[i].spec);
		CHECK_HAS(errbuf, cases[i].message);
	}
}

/* ==== trigger specs ====================================================== */

static void test_trigger_spec(void)
{
	static const struct { const char *spec, *message; } bad[] = {
		{ "", "unknown trigger ''" },
		{ "retrans", "unknown trigger 'retrans' (triggers: retrans-fail" },
		{ "retrans=", "retrans='': expected kinds" },
		{ "retrans=rto,", "retrans='rto,': expected kinds" },
		{ "retrans=slow", "retrans: unknown kind 'slow'" },
		{ "latency=5", "latency '5': expected a duration above 0 with a unit" },
		{ "latency=0ms", "latency '0ms'" },
		{ "latency=-1ms", "latency '-1ms'" },
		{ "latency=2h", "latency '2h'" },
		{ "marker=", "marker tag '' must be 1 to 16 bytes" },
		{ "marker=12345678901234567", "must be 1 to 16 bytes" },
		{ "retrans-fail=1", "unknown trigger 'retrans-fail=1'" },
	};
	char errbuf[NETLAT_ERRBUF_SIZE], out[256];
	struct netlat_triggers t = { 0 };
	uint64_t ns;
	size_t i;

	CHECK_U64(sizeof(t), NETLAT_TRIGGERS_SIZE_VER0 + 8);
	CHECK_U64(netlat_parse_trigger("retrans-fail", &t, errbuf), 0);
	CHECK_U64(netlat_parse_trigger("retrans=rto,tlp", &t, errbuf), 0);
	CHECK_U64(netlat_parse_trigger("retrans=fast", &t, errbuf), 0);	/* adds up */
	CHECK_U64(netlat_parse_trigger("latency=1.5ms", &t, errbuf), 0);
	CHECK_U64(netlat_parse_trigger("marker=OOPS,again", &t, errbuf), 0);
	CHECK_U64(netlat_parse_trigger("rx-wait=20ms", &t, errbuf), 0);
	CHECK_U64(t.armed, NETLAT_TRIG_ALL);
	CHECK_U64(t.rx_wait_ns, 20000000);
	CHECK_U64(t.retrans_kinds, (1u << NETLAT_RETRANS_RTO) | (1u << NETLAT_RETRANS_TLP) |
		  (1u << NETLAT_RETRANS_FAST));
	CHECK_U64(t.latency_ns, 1500000);
	CHECK_U64(t.marker_tag_len, 10);
	CHECK(!memcmp(t.marker_tag, "OOPS,again\0\0\0\0\0\0", NETLAT_TRIG_TAG_MAX));
	netlat_format_triggers(out, sizeof(out), &t);
	CHECK(!strcmp(out, "retrans-fail, retrans=rto,fast,tlp, latency=1500us, rx-wait=20ms, "
		      "marker=OOPS,again"));

	/* each may be given once (retrans kinds add up) */
	CHECK_U64(netlat_parse_trigger("latency=2s", &t, errbuf), -EINVAL);
	CHECK_HAS(errbuf, "latency given twice");
	CHECK_U64(netlat_parse_trigger("rx-wait=1s", &t, errbuf), -EINVAL);
	CHECK_HAS(errbuf, "rx-wait given twice");
	CHECK_U64(netlat_parse_trigger("marker=x", &t, errbuf), -EINVAL);
	CHECK_HAS(errbuf, "marker given twice");
	CHECK_U64(netlat_parse_trigger("retrans-fail", &t, errbuf), -EINVAL);
	CHECK_HAS(errbuf, "retrans-fail given twice");

	memset(&t, 0, sizeof(t));
	CHECK_U64(netlat_parse_trigger("retrans=all", &t, errbuf), 0);
	CHECK_U64(t.retrans_kinds, (1u << (NETLAT_RETRANS_SYNACK + 1)) - 1);
	netlat_format_triggers(out, sizeof(out), &t);
	CHECK(!strcmp(out, "retrans=other,rto,fast,tlp,syn,synack"));
	memset(&t, 0, sizeof(t));
	netlat_format_triggers(out, sizeof(out), &t);
	CHECK(!strcmp(out, "none"));
	CHECK_U64(netlat_parse_trigger("marker=1234567890123456", &t, errbuf), 0);
	CHECK_U64(t.marker_tag_len, NETLAT_TRIG_TAG_MAX);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&t, 0, sizeof(t));
		errbuf[0] = 0;
		if (!CHECK_U64(netlat_parse_trigger(bad[i].spec, &t, errbuf), -EINVAL))
			fprintf(stderr, "    (spec '%s')\n", bad[i].spec);
		CHECK_HAS(errbuf, bad[i].message);
	}

	CHECK(!netlat_parse_duration("250us", &ns) && ns == 250000);
	CHECK(!netlat_parse_duration("2s", &ns) && ns == 2000000000ULL);
	CHECK(!netlat_parse_duration("7ns", &ns) && ns == 7);
	CHECK(!netlat_parse_duration(".5ms", &ns) && ns == 500000);
	CHECK(netlat_parse_duration("ms", &ns) == -EINVAL);
	CHECK(netlat_parse_duration("1e30s", &ns) == -EINVAL);
	CHECK(netlat_parse_duration("nan", &ns) == -EINVAL);
}

static void test_ioctl_messages(void)
{
	CHECK(!strcmp(netlat_ioctl_strerror(NETLAT_IOC_SNAPSHOT, EOPNOTSUPP),
		      "this netlat.ko has no snapshot support"));
	CHECK(!strcmp(netlat_ioctl_strerror(NETLAT_IOC_SNAPSHOT, ENOTTY),
		      "this netlat.ko has no snapshot support"));
	CHECK(!strcmp(netlat_ioctl_strerror(NETLAT_IOC_TRIGGERS, ENOTTY),
		      "this netlat.ko has no trigger support"));
	CHECK(!strcmp(netlat_ioctl_strerror(NETLAT_IOC_FILTERS, EOPNOTSUPP),
		      "this netlat.ko has no in-kernel filter support"));
	CHECK(!strcmp(netlat_ioctl_strerror(NETLAT_IOC_GET_INFO, ENOTTY),
		      "not a netlat device"));
	CHECK(!strcmp(netlat_ioctl_strerror(NETLAT_IOC_FILTERS, EPERM),
		      "permission denied: changing what is traced needs CAP_PERFMON or CAP_SYS_ADMIN"));
	CHECK(!strcmp(netlat_ioctl_strerror(NETLAT_IOC_FILTERS, EINVAL), strerror(EINVAL)));
}

/* ==== snapshot streams =================================================== */

/* Markers @first .. @first + @n - 1 on @cpu, 1 us apart. */
static void cap_markers(struct capture *c, uint16_t cpu, uint64_t first, uint64_t n)
{
	uint64_t s;

	for (s = first; s < first + n; s++)
		cap_marker(c, cpu, s, TEST_MONO_NS + s * 1000, "snap", 4);
}

/*
 * Three CPUs: cpu0 kept its newest 10 of 1000 (990 overwritten), cpu1
 * starts with a LOST record (its dropped run was overwritten), cpu2 is
 * empty. @cpu0_kept of cpu0's records are really in the stream.
 */
static void build_snapshot(struct capture *c, uint64_t id, uint64_t cpu0_kept)
{
	cap_stream(c, 3);
	cap_snapshot(c, id, NETLAT_SNAP_TRIGGER, NETLAT_TRIG_LATENCY, NETLAT_REC_TCP_ACK,
		     1, 1002, 950000);
	cap_snap_cpu(c, 0, 1000, 990, 10, 990);
	cap_markers(c, 0, 990, cpu0_kept);
	cap_snap_cpu(c, 1, 500, 497, 3, 1000);
	cap_lost(c, 1, 1000, TEST_MONO_NS + 1000000, 4, 996);
	cap_markers(c, 1, 1001, 2);
	cap_snap_cpu(c, 2, 0, 0, 0, 0);
}

/* Sequence accounting of a capture: records, lost, gaps, overwritten. */
static void seq_of(const struct capture *c, const char *name, struct netlat_seq_stats *st)
{
	struct netlat_source *src = open_path(write_capture(c, name));
	struct netlat_seq *t = netlat_seq_new();
	const struct netlat_rec_hdr *h;

	memset(st, 0xff, sizeof(*st));
	if (!CHECK(src && t))
		return;
	while (netlat_next(src, &h) == 1)
		netlat_seq_add(t, h, NULL);
	CHECK(!netlat_errmsg(src)[0]);
	netlat_seq_total(t, st);
	netlat_seq_free(t);
	netlat_close(src);
}

static void test_snapshot_stream_reading(void)
{
	struct capture c = { 0 };
	struct netlat_seq_stats st;
	struct netlat_seq_gap gap;
	struct netlat_seq *t;
	struct netlat_rec_hdr h = { .type = NETLAT_REC_MARKER, .cpu = 0 };

	CHECK(!strcmp(netlat_type_name(NETLAT_REC_SNAPSHOT), "SNAPSHOT"));
	CHECK(!strcmp(netlat_type_name(NETLAT_REC_SNAP_CPU), "SNAP_CPU"));

	/* Overwritten is not loss; the sequence starts at first_seq. */
	build_snapshot(&c, 7, 10);
	seq_of(&c, "snap.nl", &st);
	CHECK_U64(st.records, 10 + 3);
	CHECK_U64(st.lost, 4);
	CHECK_U64(st.gaps, 0);
	CHECK_U64(st.overwritten, 990 + 497);
	cap_free(&c);

	/* A section shorter than its SNAP_CPU says: one gap. */
	build_snapshot(&c, 7, 9);
	seq_of(&c, "snap-short.nl", &st);
	CHECK_U64(st.records, 9 + 3);
	CHECK_U64(st.gaps, 1);
	cap_free(&c);

	/* A hole inside a section, and more records than announced. */
	cap_stream(&c, 1);
	cap_snap_cpu(&c, 0, 10, 5, 3, 5);
	cap_markers(&c, 0, 5, 1);
	cap_markers(&c, 0, 7, 3);	/* 6 is missing; 9 is one too many */
	seq_of(&c, "snap-hole.nl", &st);
	CHECK_U64(st.gaps, 2);
	cap_free(&c);

	/* Two snapshots in one file: each restarts the sequences. */
	build_snapshot(&c, 7, 10);
	build_snapshot(&c, 8, 10);
	seq_of(&c, "snap-two.nl", &st);
	CHECK_U64(st.records, 26);
	CHECK_U64(st.gaps, 0);
	CHECK_U64(st.overwritten, 2 * (990 + 497));
	cap_free(&c);

	/* Without a SNAP_CPU the first record after a STREAM is the baseline. */
	t = netlat_seq_new();
	if (CHECK(t)) {
		h.seq = 41;
		CHECK_U64(netlat_seq_add(t, &h, &gap), 0);
		h.seq = 43;
		CHECK_U64(netlat_seq_add(t, &h, &gap), 1);
		CHECK_U64(gap.expected, 42);
		netlat_seq_free(t);
	}

	/* Records too short for their layout are corrupt. */
	cap_stream(&c, 1);
	cap_other(&c, NETLAT_REC_SNAP_CPU, 0, 0, TEST_MONO_NS, 48);
	{
		struct netlat_source *src = open_path(write_capture(&c, "snap-bad.nl"));
		int code;

		cap_free(&c);
		if (CHECK(src)) {
			CHECK_U64(drain(src, &code), 1);
			CHECK_U64(code, -EBADMSG);
			CHECK_HAS(netlat_errmsg(src), "SNAP_CPU of 48 bytes");
			netlat_close(src);
		}
	}
}

/* A run of netlat on a capture: what its output must hold. */
struct expect {
	const char *args[4];	/* before the capture path */
	const char *out[5];	/* in stdout */
	const char *err;	/* in stderr, or NULL */
	const char *absent;	/* not in stdout, or NULL */
};

/* Run each with @path last: exit 0, valid JSON with --json, the texts. */
static void expect_runs(const struct expect *e, size_t n, const char *path)
{
	const char *args[8];
	struct run r;
	size_t i, j;

	for (i = 0; i < n; i++) {
		bool json = false;

		for (j = 0; j < 4 && e[i].args[j]; j++) {
			args[j] = e[i].args[j];
			json |= !strcmp(args[j], "--json");
		}
		args[j++] = path;
		args[j] = NULL;
		netlat_args(&r, args);
		if (!CHECK_U64(r.status, 0))
			fprintf(stderr, "    (netlat %s %s): %s", args[0], args[1], r.err);
		if (json && !strcmp(args[0], "report"))
			CHECK(json_valid(r.out, strlen(r.out)));
		else if (json)
			CHECK(json_lines_valid(r.out));
		for (j = 0; j < 5 && e[i].out[j]; j++)
			CHECK_HAS(r.out, e[i].out[j]);
		if (e[i].err)
			CHECK_HAS(r.err, e[i].err);
		if (e[i].absent)
			CHECK(!strstr(r.out, e[i].absent));
		run_free(&r);
	}
}

static void test_cli_snapshot_report(void)
{
	static const struct expect runs[] = {
		{ .args = { "report" }, .out = {
		  "13 records, 4 lost, 0 unexplained gaps",
		  "snapshot 7 (trigger latency: TCP_ACK cpu 1 seq 1002), overwrite mode, frozen 2023-11-14 22:13:20.000950000",
		  "triggering record at 2023-11-14 22:13:20.000949900",
		  "0              1000          990          0          0         10",
		  "total          1500         1487          0          0         13" } },
		{ .args = { "report", "--json" }, .out = {
		  "\"snapshot\":{\"snapshots\":1,\"id\":7,\"reason\":\"trigger\",\"trigger\":\"latency\",\"trig_type\":\"TCP_ACK\",\"trig_cpu\":1,\"trig_seq\":1002",
		  "{\"cpu\":0,\"written\":1000,\"overwritten\":990,\"dropped\":0,\"skipped\":0,\"records\":10}",
		  "\"unexplained_gaps\":0" } },
		{ .args = { "tail" }, .out = {
		  "cpu0 seq=0 SNAPSHOT id=7 reason=trigger trigger=latency trig_type=TCP_ACK trig_cpu=1 trig_seq=1002",
		  "cpu1 seq=0 SNAP_CPU written=500 overwritten=497 dropped=0 records=3 bytes=144 skipped=0 first_seq=1000" },
		  .err = "13 records, 4 lost\n" },
		/* Merged by time, the descriptions still come first: no gaps. */
		{ .args = { "tail", "--ordered", "--json" }, .out = {
		  "\"type\":\"SNAP_CPU\"", "\"overwritten\":990" }, .err = "13 records, 4 lost\n" },
		/* The reader filters keep the descriptions, as stream headers. */
		{ .args = { "tail", "--cpu", "2" }, .out = { "cpu0 seq=0 SNAP_CPU", "cpu2 seq=0 SNAP_CPU" },
		  .err = "0 matched" },
	};
	struct capture c = { 0 };

	build_snapshot(&c, 7, 10);
	expect_runs(runs, sizeof(runs) / sizeof(runs[0]), write_capture(&c, "snap-cli.nl"));
	cap_free(&c);
}

/* TCP_ACK records of older modules end before xmit_ack_ns. */
static void test_ack_record_sizes(void)
{
	static const struct expect old_runs[] = {
		{ .args = { "tail" }, .out = { "TCP_ACK 192.0.2.1:1000>192.0.2.2:80 ck=0000000000000007 snd_una=2000 acked=1000 snd_nxt=0\n" } },
		{ .args = { "report" }, .out = { "sendmsg>ack" }, .absent = "xmit>ack" },
	};
	static const struct expect new_runs[] = {
		{ .args = { "tail" }, .out = { "snd_nxt=0 xmit_ack_ns=5000\n", "snd_nxt=0 xmit_ack_ns=0\n" } },
		{ .args = { "report" }, .out = { "xmit>ack               1       5000" } },
		{ .args = { "report", "--json" }, .out = { "\"xmit>ack\":{\"count\":1,\"min\":5000" } },
	};
	const size_t old_size = offsetof(struct netlat_rec_tcp_ack, xmit_ack_ns);
	struct netlat_rec_tcp_ack *a;
	struct capture c = { 0 };
	int i;

	CHECK_U64(old_size % NETLAT_REC_ALIGN, 0);
	for (i = 0; i < 2; i++) {
		struct netlat_rec_tcp_xmit *x;

		cap_stream(&c, 1);
		x = cap_tcp(&c, NETLAT_REC_TCP_XMIT, sizeof(*x), 0, 1000);
		x->seq = 1000;
		x->len = 1000;
		a = cap_tcp(&c, NETLAT_REC_TCP_ACK, (uint16_t)(i ? sizeof(*a) : old_size), 1, 6000);
		a->snd_una = 2000;
		a->acked = 1000;
		if (i) {
			a->xmit_ack_ns = 5000;
			/* nothing acknowledged in full: 0, not a sample */
			cap_tcp(&c, NETLAT_REC_TCP_ACK, sizeof(*a), 2, 7000);
			expect_runs(new_runs, sizeof(new_runs) / sizeof(new_runs[0]),
				    write_capture(&c, "ack-new.nl"));
		} else {
			expect_runs(old_runs, sizeof(old_runs) / sizeof(old_runs[0]),
				    write_capture(&c, "ack-old.nl"));
		}
		cap_free(&c);
	}
}

/* ==== the snapshot directory ============================================= */

static void touch(const char *dir, const char *name, size_t bytes)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!CHECK(f))
		return;
	while (bytes--)
		fputc('x', f);
	fclose(f);
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void test_snapdir(void)
{
	const char *dir = tmp_path("snapdir");
	uint64_t freed, kept;
	unsigned int deleted;
	char name[SNAPDIR_NAME_MAX];

	snapdir_name(name, sizeof(name), TEST_REALTIME_NS + 123456789, 7);
	CHECK(!strcmp(name, "netlat-20231114-221320.123-7.snap"));
	CHECK(snapdir_is_snapshot(name));
	CHECK(snapdir_is_snapshot("netlat-20231114-221320.123-18446744073709551615.snap"));
	CHECK(!snapdir_is_snapshot("netlat-20231114-221320.123-.snap"));
	CHECK(!snapdir_is_snapshot("netlat-20231114-221320.123-7.snap.tmp"));
	CHECK(!snapdir_is_snapshot("netlat-2023111-221320.123-7.snap"));
	CHECK(!snapdir_is_snapshot("netlat-20231114-221320.12x-7.snap"));
	CHECK(!snapdir_is_snapshot("notes.snap"));
	snapdir_tmp_name(name, sizeof(name), 42);
	CHECK(!strcmp(name, ".netlat-42.tmp"));

	if (!CHECK(mkdir(dir, 0755) == 0))
		return;
	/* Out of order on purpose; the same millisecond is ordered by id. */
	touch(dir, "netlat-20231114-221320.500-10.snap", 100);
	touch(dir, "netlat-20231114-221320.500-9.snap", 100);
	touch(dir, "netlat-20231115-000000.000-11.snap", 100);
	touch(dir, "netlat-20231113-235959.999-8.snap", 100);
	touch(dir, "notes.txt", 1000);			/* not ours: never deleted */
	touch(dir, "netlat-bad.snap", 1000);
	touch(dir, ".netlat-123.tmp", 50);

	CHECK_U64(snapdir_rotate(dir, 1000, &deleted, &freed, &kept), 0);
	CHECK_U64(deleted, 0);
	CHECK_U64(kept, 400);
	CHECK_U64(snapdir_rotate(dir, 250, &deleted, &freed, &kept), 0);
	CHECK_U64(deleted, 2);
	CHECK_U64(freed, 200);
	CHECK_U64(kept, 200);
	CHECK(!exists(dir, "netlat-20231113-235959.999-8.snap"));
	CHECK(!exists(dir, "netlat-20231114-221320.500-9.snap"));
	CHECK(exists(dir, "netlat-20231114-221320.500-10.snap"));
	CHECK(exists(dir, "netlat-20231115-000000.000-11.snap"));
	/* The newest stays even alone over the limit. */
	CHECK_U64(snapdir_rotate(dir, 1, &deleted, &freed, &kept), 0);
	CHECK_U64(deleted, 1);
	CHECK_U64(kept, 100);
	CHECK(exists(dir, "netlat-20231115-000000.000-11.snap"));
	CHECK(exists(dir, "notes.txt") && exists(dir, "netlat-bad.snap"));

	CHECK_U64(snapdir_clean_tmp(dir), 1);
	CHECK(!exists(dir, ".netlat-123.tmp"));
	CHECK(exists(dir, "notes.txt"));
	CHECK_U64(snapdir_rotate(tmp_path("no-such-dir"), 1, &deleted, &freed, &kept),
		  -ENOENT);
}

/* ==== the commands without a module ====================================== */

static void test_cli_flight_errors(void)
{
	static const char *const usage[][6] = {
		{ "flight", "--trigger", "retrans-fail", NULL },
		{ "flight", "-d", "x", NULL },
		{ "flight", "-d", "x", "--trigger", "latency=5", NULL },
		{ "flight", "-d", "x", "--trigger", "bogus", NULL },
		{ "flight", "-d", "x", "--pre", "3600001", NULL },
		{ "flight", "-d", "x", "--post", "1s", NULL },
		{ "flight", "-d", "x", "--max-bytes", "0", NULL },
		{ "flight", "-d", "x", "--count", "0", NULL },
		{ "flight", "-d", "x", "--filter", "port=0", NULL },
		{ "snapshot", NULL },
		{ "snapshot", "-o", "x", "extra", NULL },
		{ "filters", "--clear", "--filter", "port=1", NULL },
		{ "filters", "--filter", "addr=192.0.2.1/24", NULL },
		{ "triggers", "--nope", NULL },
		{ "tail", "--filter", "port=1,xmit", NULL },
		{ "record", "-o", "x", "--filter", "", NULL },
		{ "config", "--mode", "ring", NULL },
	};
	const char *dir = tmp_path("flight-dir");
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		netlat(&r, usage[i][0], usage[i][1], usage[i][2], usage[i][3], usage[i][4],
		       NULL);
		if (!CHECK_U64(r.status, 2))
			fprintf(stderr, "    (args: %s %s %s)\n", usage[i][0], usage[i][1],
				usage[i][2]);
		CHECK_HAS(r.err, "usage: netlat");
		CHECK_U64(count_lines(r.err), 2);
		run_free(&r);
	}
	netlat(&r, "tail", "--filter", "port=1,xmit", NULL);
	CHECK_HAS(r.err, "netlat: bad --filter 'port=1,xmit': 'xmit' is not KEY=VALUE");
	run_free(&r);
	netlat(&r, "flight", "-d", "x", "--trigger", "latency=5", NULL);
	CHECK_HAS(r.err, "bad --trigger 'latency=5': latency '5': expected a duration");
	run_free(&r);

	/* No module: one line, nothing created but the directory. */
	netlat(&r, "flight", "-d", dir, "--trigger", "retrans-fail", "--device",
	       "/dev/netlat-test-missing", NULL);
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "netlat: no /dev/netlat-test-missing: is the netlat module loaded?\n"));
	run_free(&r);
	netlat(&r, "snapshot", "-o", tmp_path("never.snap"), "--device",
	       "/dev/netlat-test-missing", NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "is the netlat module loaded?");
	CHECK(access(tmp_path("never.snap"), F_OK) != 0);
	run_free(&r);

	/*
	 * A character device without the ioctls stands for a netlat.ko that
	 * predates them (ENOTTY, like the stubs' EOPNOTSUPP): /dev/null.
	 */
	netlat(&r, "flight", "-d", dir, "--trigger", "marker=X", "--device", "/dev/null", NULL);
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "netlat: /dev/null: SNAPSHOT: this netlat.ko has no snapshot support\n"));
	run_free(&r);
	netlat(&r, "snapshot", "-o", tmp_path("never.snap"), "--device", "/dev/null", NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "this netlat.ko has no snapshot support");
	CHECK(access(tmp_path("never.snap"), F_OK) != 0);
	run_free(&r);
	netlat(&r, "triggers", "--device", "/dev/null", NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "this netlat.ko has no trigger support");
	run_free(&r);
	netlat(&r, "filters", "--device", "/dev/null", NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "this netlat.ko has no in-kernel filter support");
	run_free(&r);
	netlat(&r, "tail", "--filter", "port=80", "/dev/null", NULL);
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "netlat: /dev/null: FILTERS: this netlat.ko has no in-kernel filter support\n"));
	run_free(&r);
	netlat(&r, "record", "-o", tmp_path("never.nl"), "--filter", "port=80", "--device",
	       "/dev/null", NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "no in-kernel filter support");
	CHECK(access(tmp_path("never.nl"), F_OK) != 0);
	run_free(&r);

	/* --filter is for the device, not a capture. */
	netlat(&r, "tail", "--filter", "port=80", tmp_path("snap-cli.nl"), NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "--filter sets in-kernel rules: ");
	CHECK_HAS(r.err, "snap-cli.nl is not the netlat device");
	run_free(&r);
	netlat(&r, "triggers", "--device", tmp_path("snap-cli.nl"), NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "TRIGGERS: not a netlat device");
	run_free(&r);
}

/* ==== examples/flight_recorder =========================================== */

static void recorder(struct run *r, ...)
{
	va_list ap;

	va_start(ap, r);
	run_example(r, "flight_recorder", ap);
	va_end(ap);
}

/* Without a module it can only fail, clearly; in the VM it records. */
static void test_flight_recorder_example(void)
{
	struct run r;

	recorder(&r, NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "usage: flight_recorder -t TRIGGER");
	run_free(&r);
	recorder(&r, "-t", "latency=5", NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "flight_recorder: -t latency=5: latency '5': expected a duration");
	run_free(&r);
	recorder(&r, "-t", "retrans-fail", "-d", "/dev/netlat-test-missing", NULL);
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "flight_recorder: no /dev/netlat-test-missing: is the netlat module loaded?\n"));
	run_free(&r);
	recorder(&r, "-t", "marker=X", "-d", "/dev/null", NULL);
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "flight_recorder: SNAPSHOT: this netlat.ko has no snapshot support\n"));
	run_free(&r);
}

/* Defined with the fake device below. */
static void fake_env(const char *snaps, const char *rules);
static char *fake_done(void);
static const char *tools_path(const char *rel);

/* On the fake device it records: two snapshots, described through mmap. */
static void test_flight_recorder_fake(void)
{
	const char *dir = tmp_path("fake-recorder");
	char *argv[] = { (char *)tools_path("tests/flight_recorder-dyn"), "-t", "marker=X",
			 "-p", "10", "-n", "2", "-o", (char *)dir, "-d", "/dev/netlat-fake",
			 NULL };
	struct stat st;
	struct run r;
	char *log;

	if (!CHECK(mkdir(dir, 0755) == 0))
		return;
	fake_env("2", "0");
	run_argv(&r, argv);
	log = fake_done();
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "flight_recorder: snapshot 1: marker, record MARKER cpu 0 seq 41\n");
	CHECK_HAS(r.err, "flight_recorder: snapshot 2: 296 bytes to ");
	CHECK(!strcmp(log, "armed=0 rules=0 mode=0 running=1 takes=0 releases=2 state=0\n"));
	free(log);
	run_free(&r);
	CHECK(exists(dir, "flight-1.nl") && exists(dir, "flight-2.nl"));
	CHECK(!stat(tmp_path("fake-recorder/flight-2.nl"), &st) && st.st_size == 296);
	netlat(&r, "report", tmp_path("fake-recorder/flight-2.nl"), NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "snapshot 2 (trigger marker: MARKER cpu 0 seq 41)");
	run_free(&r);
}

/* ==== the commands on a fake device ====================================== */

#define FAKE_DEV	"/dev/netlat-fake"

/* The netlat under test, while netlat_bin points at its dynamic copy. */
static char *orig_bin;

/* @rel under the tools directory (where the netlat under test is). */
static const char *tools_path(const char *rel)
{
	static char path[4][4096];
	static int next;
	const char *bin = orig_bin ? orig_bin : netlat_bin;
	const char *slash = strrchr(bin, '/');
	char cwd[2048] = "";
	char *p = path[next++ % 4];

	if (bin[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	snprintf(p, sizeof(path[0]), "%s%s%.*s%s", cwd, cwd[0] ? "/" : "",
		 slash ? (int)(slash - bin + 1) : 0, bin, rel);
	return p;
}

/*
 * Run netlat (its dynamic copy) with tests/fake_dev.so preloaded; the
 * fake's final state lands in a log that fake_done() returns.
 */
static void fake_env(const char *snaps, const char *rules)
{
	setenv("LD_PRELOAD", tools_path("tests/fake_dev.so"), 1);
	setenv("FAKE_NETLAT_SNAPS", snaps, 1);
	setenv("FAKE_NETLAT_RULES", rules, 1);
	setenv("FAKE_NETLAT_LOG", tmp_path("fake.log"), 1);
	unlink(tmp_path("fake.log"));
	if (!orig_bin) {
		orig_bin = netlat_bin;
		netlat_bin = strdup(tools_path("tests/netlat-dyn"));
	}
}

static char *fake_done(void)
{
	unsetenv("LD_PRELOAD");
	unsetenv("FAKE_NETLAT_SNAPS");
	unsetenv("FAKE_NETLAT_RULES");
	unsetenv("FAKE_NETLAT_LOG");
	if (orig_bin) {
		free(netlat_bin);
		netlat_bin = orig_bin;
		orig_bin = NULL;
	}
	return read_file(tmp_path("fake.log"), NULL);
}

static int count_snapshots(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_cli_flight_fake(void)
{
	const char *dir = tmp_path("fake-flight");
	char *log, file[4096];
	struct run r;
	pid_t pid;
	char *argv[] = { NULL, "flight", "-d", (char *)dir, "--trigger", "retrans-fail",
			 "--device", FAKE_DEV, NULL };

	/* Three triggers, two files' room: the oldest goes; all is put back. */
	fake_env("3", "2");
	netlat(&r, "flight", "-d", dir, "--trigger", "marker=X", "--count", "3",
	       "--max-bytes", "600", "--filter", "port=80", "--device", FAKE_DEV, NULL);
	log = fake_done();
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "netlat: flight recorder on /dev/netlat-fake: triggers marker=X; pre 0 ms, post 0 ms");
	CHECK_HAS(r.err, "netlat: snapshot 3 (trigger marker: MARKER cpu 0 seq 41), overwrite mode, frozen 2023-11-14 22:13:23.000000000: 296 bytes to ");
	CHECK_HAS(r.err, "netlat: removed 1 old snapshot (296 bytes); 592 bytes kept\n");
	CHECK_HAS(r.err, "flight recorder stopped: 3 snapshots saved\n");
	CHECK(!strcmp(log, "armed=0 rules=2 mode=0 running=1 takes=0 releases=3 state=0\n"));
	CHECK_U64(count_snapshots(dir), 2);
	CHECK(!exists(dir, "netlat-20231114-221321.000-1.snap"));
	CHECK(exists(dir, "netlat-20231114-221322.000-2.snap"));
	free(log);
	run_free(&r);
	snprintf(file, sizeof(file), "%s/netlat-20231114-221323.000-3.snap", dir);
	netlat(&r, "report", file, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "1 records, 0 lost, 0 unexplained gaps");
	CHECK_HAS(r.out, "total            42           41          0          0          1");
	run_free(&r);

	/* SIGTERM while waiting: disarmed, mode back, exit 0. */
	fake_env("0", "0");
	argv[0] = netlat_bin;
	pid = spawn_argv(argv, tmp_path("fake.out"), tmp_path("fake.err"));
	usleep(300000);
	kill(pid, SIGTERM);
	wait_child(&r, pid, 5000);
	log = fake_done();
	CHECK_U64(r.status, 0);
	CHECK(!r.signalled);
	CHECK(!strcmp(log, "armed=0 rules=0 mode=0 running=1 takes=0 releases=0 state=0\n"));
	free(log);
}

static void test_cli_snapshot_fake(void)
{
	const char *out = tmp_path("fake.snap");
	struct run r;
	char *log;

	fake_env("0", "0");
	netlat(&r, "snapshot", "-o", out, "--device", FAKE_DEV, NULL);
	log = fake_done();
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.err, "netlat: snapshot 1 (manual), stream mode, frozen 2023-11-14 22:13:21.000000000: 296 bytes to ");
	CHECK(!strcmp(log, "armed=0 rules=0 mode=0 running=1 takes=1 releases=1 state=0\n"));
	free(log);
	run_free(&r);
	netlat(&r, "report", "--json", out, NULL);
	CHECK_HAS(r.out, "\"snapshot\":{\"snapshots\":1,\"id\":1,\"reason\":\"manual\",\"trigger\":\"none\"");
	run_free(&r);
	CHECK(access(tmp_path("fake.snap.tmp"), F_OK) != 0);

	fake_env("0", "0");
	netlat(&r, "snapshot", "-o", out, "--keep", "--device", FAKE_DEV, NULL);
	log = fake_done();
	CHECK_U64(r.status, 0);
	CHECK(!strcmp(log, "armed=0 rules=0 mode=0 running=1 takes=1 releases=0 state=2\n"));
	free(log);
	run_free(&r);

	fake_env("0", "0");
	netlat(&r, "snapshot", "-o", tmp_path("none.snap"), "--frozen", "--device", FAKE_DEV, NULL);
	free(fake_done());
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "netlat: /dev/netlat-fake: no frozen snapshot\n"));
	CHECK(access(tmp_path("none.snap"), F_OK) != 0);
	run_free(&r);
}

/* netlat ARGS on the fake with @rules in force: the exit status and state. */
struct fake_case {
	const char *rules;
	const char *args[8];
	int status;
	const char *out;	/* stdout, whole */
	const char *log;	/* in the fake's final state */
};

static void test_cli_filters_triggers_fake(void)
{
	static const struct fake_case cases[] = {
		{ "0", { "filters", "--filter", "port=80", "--filter",
			 "addr=10.0.0.0/8,groups=xmit", "--device", FAKE_DEV }, 0,
		  "rule 1: port=80,groups=all\nrule 2: addr=10.0.0.0/8,groups=xmit\n"
		  "kept out since load: 7 records\n", "rules=2" },
		{ "3", { "filters", "--clear", "--device", FAKE_DEV }, 0,
		  "no in-kernel filter rules: every record is kept\n"
		  "kept out since load: 7 records\n", "rules=0" },
		/* tail sets its rules and puts the old ones back, also on an error */
		{ "3", { "tail", "--filter", "port=80", FAKE_DEV }, 1, "", "rules=3" },
		{ "0", { "triggers", "--device", FAKE_DEV }, 0,
		  "armed       none\npre window  0 ms (all the rings hold)\npost window 0 ms\n"
		  "fired       0\nsnapshot    none\ntaken       0\nmissed      0\n"
		  "capacity    512 bytes\n", "armed=0" },
	};
	struct run r;
	size_t i;
	char *log;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_env("0", cases[i].rules);
		netlat_args(&r, cases[i].args);
		log = fake_done();
		if (!CHECK_U64(r.status, cases[i].status) || !CHECK(!strcmp(r.out, cases[i].out)))
			fprintf(stderr, "    (netlat %s %s): %s%s", cases[i].args[0],
				cases[i].args[1], r.out, r.err);
		CHECK_HAS(log, cases[i].log);
		free(log);
		run_free(&r);
	}
}
