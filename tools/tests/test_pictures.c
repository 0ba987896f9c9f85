// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of "netlat report --html" and "netlat export --chrome-trace",
 * #included by test_netlat.c. Their numbers are compared with those of
 * "netlat report --json" of the same capture (and with what the capture
 * was built to hold), never with the generators' own code.
 *
 * The page is loaded in headless Chromium (Debian's chromium package;
 * NETLAT_CHROMIUM names another binary): no console message, the script
 * ran, the rendered DOM holds the stage table of the JSON, and a
 * screenshot (kept in build/pictures/ with the page and the trace) is not
 * blank. Without Chromium these checks are skipped with a note, except
 * under CI=true, where that is a failure.
 */
#include <sys/stat.h>
#include "png_check.h"

/* ---- a capture with traffic both ways ------------------------------------ */

struct pev {			/* one record to write, before sorting */
	uint64_t ts;
	uint16_t cpu, type;
	unsigned int flow;
	uint32_t seq, len;
	uint64_t start;		/* SENDMSG: start_ns; ACK: xmit_ack_ns */
	uint8_t stage;		/* DEV stage, RETRANS kind */
	int32_t ret;
	const char *text;	/* MARKER */
};

struct pflow {
	uint64_t cookie;
	const char *saddr, *daddr;
	uint16_t sport, dport;
};

static const struct pflow pflows[] = {
	{ 11, "\x0a\x00\x00\x01", "\x0a\x00\x00\x02", 40000, 5001 },
	{ 12, "\x0a\x00\x00\x02", "\x0a\x00\x00\x01", 5001, 40000 },
	{ 13, "\x0a\x00\x00\x01", "\x0a\x00\x00\x02", 40002, 5001 },
};

#define PIC_PACKETS	60	/* per flow */
#define PIC_MAX_EVENTS	(3 * PIC_PACKETS * 6 + 64)	/* 6 records a packet at most */

static int cmp_pev(const void *a, const void *b)
{
	const struct pev *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void pic_write(struct capture *c, const struct pev *e, uint64_t seq)
{
	static const uint16_t sizes[] = {
		[NETLAT_REC_TCP_SENDMSG] = sizeof(struct netlat_rec_tcp_sendmsg),
		[NETLAT_REC_TCP_XMIT] = sizeof(struct netlat_rec_tcp_xmit),
		[NETLAT_REC_TCP_RETRANS] = sizeof(struct netlat_rec_tcp_retrans),
		[NETLAT_REC_TCP_ACK] = sizeof(struct netlat_rec_tcp_ack),
		[NETLAT_REC_TCP_DEV] = sizeof(struct netlat_rec_tcp_dev),
	};
	const struct pflow *pf = &pflows[e->flow];
	struct netlat_flow *fl;
	size_t off = c->len;
	void *r;

	if (e->type == NETLAT_REC_MARKER) {
		cap_marker(c, e->cpu, seq, e->ts, e->text, (uint32_t)strlen(e->text));
		return;
	}
	if (e->type == NETLAT_REC_VIRTIO) {
		struct netlat_rec_virtio *v;

		cap_other(c, e->type, e->cpu, seq, e->ts, sizeof(*v));
		v = (void *)(c->buf + off);
		memset(&v->event, 0, sizeof(*v) - sizeof(v->hdr));
		v->event = e->stage;
		v->flags = NETLAT_VIRTIO_VQ_VALID | NETLAT_VIRTIO_QUEUE_VALID;
		v->ifindex = 2;
		v->vq_index = 1;
		v->num_free = 200;
		v->ring_size = 256;
		v->len = e->len;
		return;
	}
	cap_other(c, e->type, e->cpu, seq, e->ts, sizes[e->type]);
	r = c->buf + off;
	fl = (void *)(c->buf + off + sizeof(struct netlat_rec_hdr));
	memset(fl, 0, sizes[e->type] - sizeof(struct netlat_rec_hdr));
	fl->cookie = pf->cookie;
	fl->family = AF_INET;
	fl->sport = pf->sport;
	fl->dport = pf->dport;
	memcpy(fl->saddr, pf->saddr, 4);
	memcpy(fl->daddr, pf->daddr, 4);
	switch (e->type) {
	case NETLAT_REC_TCP_SENDMSG: {
		struct netlat_rec_tcp_sendmsg *m = r;

		m->start_ns = e->start;
		m->size = e->len;
		m->ret = e->len;
		m->sendmsg_id = e->seq;
		m->end_seq = e->seq + e->len;
		m->pid = m->tid = 4242;
		break;
	}
	case NETLAT_REC_TCP_XMIT: {
		struct netlat_rec_tcp_xmit *x = r;

		x->seq = e->seq;
		x->end_seq = e->seq + e->len;
		x->len = e->len;
		x->segs = 1;
		x->skb_id = 0x1000 + e->seq;
		break;
	}
	case NETLAT_REC_TCP_DEV: {
		struct netlat_rec_tcp_dev *d = r;

		d->seq = e->seq;
		d->end_seq = e->seq + e->len;
		d->len = e->len;
		d->stage = e->stage;
		d->ifindex = 2;
		d->segs = 1;
		break;
	}
	case NETLAT_REC_TCP_ACK: {
		struct netlat_rec_tcp_ack *a = r;

		a->snd_una = e->seq;
		a->acked = e->len;
		a->xmit_ack_ns = e->start;
		break;
	}
	case NETLAT_REC_TCP_RETRANS: {
		struct netlat_rec_tcp_retrans *t = r;

		t->seq = e->seq;
		t->end_seq = e->seq + e->len;
		t->kind = e->stage;
		t->ret = e->ret;
		t->segs = 1;
		t->segs_req = 1;
		break;
	}
	}
}

/*
 * 3 flows (two from 10.0.0.1 to 10.0.0.2, one back) of PIC_PACKETS
 * sendmsg calls of one segment each on cpu 0, their qdisc and driver
 * records on cpu 1 (none for every 7th packet), an ACK per packet (none
 * for every 11th), retransmits of several kinds, markers, and a LOST
 * record on cpu 1. Returns the first transmissions written.
 */
static size_t build_pictures(struct capture *c)
{
	static struct pev ev[PIC_MAX_EVENTS];
	uint64_t seq[2] = { 0, 0 };
	size_t n = 0, packets = 0, i;
	unsigned int f, p;
	bool lost = false;

	for (f = 0; f < 3; f++) {
		uint64_t last_x = 0, last_a = 0;

		for (p = 0; p < PIC_PACKETS; p++) {
			uint64_t t = TEST_MONO_NS + 1000000 + (uint64_t)p * 150000 + f * 7000;
			uint64_t queue = 2000 + rnd_below(p % 10 == 9 ? 900000 : 30000);
			uint64_t q, d, a;
			uint32_t s = 1000 + p * 1448;

			/* a socket transmits, and is acknowledged, in order */
			if (t + queue <= last_x)
				queue = last_x + 1 - t;
			last_x = t + queue;
			q = t + queue + 3000 + rnd_below(4000);
			d = q + 1000 + rnd_below(f == 1 ? 40000 : 3000);
			if (p % 17 == 0)
				d = q + 1 + p % 3;	/* wide histograms: a few ns ... */
			if (f == 1 && p == 30)
				d = q + 20000000;	/* ... to a stall of 20 ms */
			a = d + 60000 + rnd_below(p % 13 == 5 ? 2000000 : 200000);
			if (a <= last_a)
				a = last_a + 1;
			last_a = a;

			ev[n++] = (struct pev){ .ts = t + 1500, .type = NETLAT_REC_TCP_SENDMSG,
						.flow = f, .seq = s, .len = 1448, .start = t };
			ev[n++] = (struct pev){ .ts = t + queue, .type = NETLAT_REC_TCP_XMIT,
						.flow = f, .seq = s, .len = 1448 };
			packets++;
			if (p % 7 != 3) {
				ev[n++] = (struct pev){ .ts = q, .cpu = 1, .type = NETLAT_REC_TCP_DEV,
							.flow = f, .seq = s, .len = 1448,
							.stage = NETLAT_DEV_QDISC };
				ev[n++] = (struct pev){ .ts = d, .cpu = 1, .type = NETLAT_REC_TCP_DEV,
							.flow = f, .seq = s, .len = 1448,
							.stage = NETLAT_DEV_DRIVER };
			}
			if (p % 11 != 4)
				ev[n++] = (struct pev){ .ts = a, .type = NETLAT_REC_TCP_ACK, .flow = f,
							.seq = s + 1448, .len = 1448,
							.start = a - t - queue };
			/* after the ACK: one before it would take the packet's
			 * >ack stages away (Karn), and the headlines with them */
			if (p % 9 == 2)
				ev[n++] = (struct pev){ .ts = a + 1000, .type = NETLAT_REC_TCP_RETRANS,
							.flow = f, .seq = s, .len = 1448,
							.stage = (uint8_t)(p % 4), .ret = p % 18 == 2 ? -16 : 0 };
		}
	}
	ev[n++] = (struct pev){ .ts = TEST_MONO_NS + 900000, .cpu = 1,
				.type = NETLAT_REC_MARKER, .text = "test-start" };
	ev[n++] = (struct pev){ .ts = TEST_MONO_NS + 1200000, .cpu = 1, .type = NETLAT_REC_VIRTIO,
				.stage = NETLAT_VIRTIO_XMIT, .len = 1514 };
	ev[n++] = (struct pev){ .ts = TEST_MONO_NS + 1250000, .cpu = 0, .type = NETLAT_REC_VIRTIO,
				.stage = NETLAT_VIRTIO_XMIT_DONE };
	ev[n++] = (struct pev){ .ts = TEST_MONO_NS + 5000000, .cpu = 0,
				.type = NETLAT_REC_MARKER, .text = "midway <&>" };
	qsort(ev, n, sizeof(ev[0]), cmp_pev);
	cap_stream(c, 2);
	for (i = 0; i < n; i++) {
		if (!lost && ev[i].cpu == 1 && ev[i].ts > TEST_MONO_NS + 4000000) {
			cap_lost(c, 1, seq[1] + 3, ev[i].ts, 3, seq[1]);
			seq[1] += 4;
			lost = true;
		}
		pic_write(c, &ev[i], seq[ev[i].cpu]++);
	}
	return packets;
}

/* ---- report --json numbers ---------------------------------------------- */

struct jstage {
	unsigned long long count, min, p50, p90, p99;
};

/* The summary of @stage in report --json's "tcp_stages": true if found. */
static bool json_stage(const char *json, const char *stage, struct jstage *s)
{
	char key[64];
	const char *p = strstr(json, "\"tcp_stages\":{");

	snprintf(key, sizeof(key), "\"%s\":{", stage);
	p = p ? strstr(p, key) : NULL;
	return p && sscanf(p + strlen(key), "\"count\":%llu,\"min\":%llu,\"p50\":%llu,"
			   "\"p90\":%llu,\"p99\":%llu", &s->count, &s->min, &s->p50, &s->p90,
			   &s->p99) == 5;
}

static unsigned long long json_u64_after(const char *json, const char *anchor,
					 const char *key)
{
	const char *p = strstr(json, anchor);
	unsigned long long v = ~0ULL;

	p = p ? strstr(p, key) : NULL;
	if (p)
		sscanf(p + strlen(key), "%llu", &v);
	return v;
}

/* ---- artifacts and Chromium ---------------------------------------------- */

/* build/pictures/@name next to the tools directory (netlat_bin's). */
static const char *artifact(const char *name)
{
	static char path[8][4096];
	static int next;
	const char *slash = strrchr(netlat_bin, '/');
	char *p = path[next++ % 8];
	int dir = slash ? (int)(slash - netlat_bin) : 1;

	snprintf(p, 4096, "%.*s/../build", dir, slash ? netlat_bin : ".");
	mkdir(p, 0755);
	snprintf(p, 4096, "%.*s/../build/pictures", dir, slash ? netlat_bin : ".");
	mkdir(p, 0755);
	snprintf(p, 4096, "%.*s/../build/pictures/%s", dir, slash ? netlat_bin : ".", name);
	return p;
}

/* Chromium's path from $NETLAT_CHROMIUM or $PATH, or NULL. */
static const char *find_chromium(void)
{
	static const char *const names[] = { "chromium", "chromium-browser", "google-chrome" };
	static char found[4096];
	const char *env = getenv("NETLAT_CHROMIUM"), *path = getenv("PATH");
	size_t i;

	if (env && *env)
		return access(env, X_OK) ? NULL : env;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *p = path ? path : "/usr/bin:/bin";

		while (*p) {
			size_t n = strcspn(p, ":");

			snprintf(found, sizeof(found), "%.*s/%s", (int)n, p, names[i]);
			if (n && !access(found, X_OK))
				return found;
			p += n + (p[n] == ':');
		}
	}
	return NULL;
}

/* Chromium with the page @html and one action (--dump-dom, --screenshot=...). */
static void chromium(struct run *r, const char *bin, const char *html, const char *action,
		     const char *size)
{
	char url[4200], abs[4096], profile[4200];
	char *argv[20];
	int n = 0;

	if (!realpath(html, abs))
		snprintf(abs, sizeof(abs), "%s", html);
	snprintf(url, sizeof(url), "file://%s", abs);
	snprintf(profile, sizeof(profile), "--user-data-dir=%s", tmp_path("chromium-profile"));
	argv[n++] = (char *)bin;
	argv[n++] = "--headless";
	if (geteuid() == 0)
		argv[n++] = "--no-sandbox";	/* Chromium refuses root otherwise */
	argv[n++] = "--disable-gpu";
	argv[n++] = "--no-first-run";
	argv[n++] = "--disable-extensions";
	argv[n++] = "--disable-background-networking";
	argv[n++] = "--disable-component-update";
	argv[n++] = "--hide-scrollbars";
	argv[n++] = "--enable-logging=stderr";
	argv[n++] = "--v=0";
	argv[n++] = profile;
	if (size)
		argv[n++] = (char *)size;
	argv[n++] = (char *)action;
	argv[n++] = url;
	argv[n] = NULL;
	run_argv(r, argv);
}

/* Lines of Chromium's log that are the page's: console messages, fetches. */
static bool page_complained(const char *log)
{
	return strstr(log, "CONSOLE") || strstr(log, "Refused to") ||
	       strstr(log, "net::ERR") || strstr(log, "Uncaught");
}

/* The row of @stage in the rendered stage table, as --json has it. */
static void check_stage_row(const char *dom, const char *json, const char *stage,
			    const char *escaped)
{
	struct jstage s;
	char row[512];

	if (!CHECK(json_stage(json, stage, &s)))
		return;
	snprintf(row, sizeof(row), "<td class=\"l\">%s</td><td>%llu</td><td>%llu</td>"
		 "<td>%llu</td><td>%llu</td><td>%llu</td>", escaped, s.count, s.min, s.p50,
		 s.p90, s.p99);
	CHECK_HAS(dom, row);
}

/*
 * The headline of the direction @saddr -> @daddr: the median packet of
 * report --json's tcp_packets, its times in order as the spans' titles.
 */
static void check_headline(const char *page, const char *json, const char *saddr,
			   const char *daddr)
{
	static const char *const keys[] = {
		"\"queued_ns\":", "\"stack_ns\":", "\"ack_wait_ns\":", "\"end_to_end_ns\":",
	};
	char anchor[128], want[64];
	const char *li, *end, *p;
	size_t i;

	snprintf(anchor, sizeof(anchor), "\"saddr\":\"%s\",\"daddr\":\"%s\"", saddr, daddr);
	p = strstr(json, anchor);
	p = p ? strstr(p, "\"median_packet\":{") : NULL;
	snprintf(anchor, sizeof(anchor), "<li class=\"dir\">%s -&gt; %s: ", saddr, daddr);
	li = strstr(page, anchor);
	end = li ? strstr(li, "</li>") : NULL;
	if (!CHECK(p && li && end))
		return;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = strstr(p, keys[i]);
		unsigned long long ns;

		if (!CHECK(v && sscanf(v + strlen(keys[i]), "%llu", &ns) == 1))
			return;
		snprintf(want, sizeof(want), "<span class=\"ns\" title=\"%llu ns\">", ns);
		li = strstr(li, want);
		if (!CHECK(li && li < end))
			fprintf(stderr, "    no %s after the previous time in the %s -> %s headline\n",
				want, saddr, daddr);
		if (!li)
			return;
	}
}

static void test_cli_report_html(void)
{
	static const char *const stages[][2] = {
		{ "sendmsg>xmit", "sendmsg&gt;xmit" }, { "xmit>qdisc", "xmit&gt;qdisc" },
		{ "qdisc>driver", "qdisc&gt;driver" }, { "driver>ack", "driver&gt;ack" },
		{ "sendmsg>ack", "sendmsg&gt;ack" }, { "xmit>ack", "xmit&gt;ack" },
	};
	static const char *const fetchers[] = {
		"http:", "https:", "//cdn", "<link", "@import", "url(", " src=", "<iframe",
		"<img", "fetch(", "XMLHttpRequest",
	};
	const char *html = artifact("report.html"), *png = artifact("report.png");
	struct capture c = { 0 };
	struct png_stats ps;
	const char *path, *bin, *ci = getenv("CI");
	char shot[4200], dir_line[512];
	struct run r, j;
	char *page;
	size_t i;

	build_pictures(&c);
	path = write_capture(&c, "pictures.nl");
	CHECK(cap_write(&c, artifact("pictures.nl")) == 0);	/* to draw it again */
	netlat(&j, "report", "--json", path, NULL);
	CHECK_U64(j.status, 0);
	CHECK(json_valid(j.out, strlen(j.out)));

	unlink(html);
	netlat(&r, "report", "--html", html, path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!r.out[0]);
	CHECK(!r.err[0]);
	run_free(&r);
	page = read_file(html, NULL);
	CHECK(!strncmp(page, "<!DOCTYPE html>", 15));
	CHECK_HAS(page, "</html>\n");
	for (i = 0; i < sizeof(fetchers) / sizeof(fetchers[0]); i++)
		if (!CHECK(!strstr(page, fetchers[i])))
			fprintf(stderr, "    the page has \"%s\"\n", fetchers[i]);
	CHECK_HAS(page, "Content-Security-Policy");
	/* The headline of each direction: the text report's, the JSON's packet. */
	snprintf(dir_line, sizeof(dir_line), "10.0.0.1 -&gt; 10.0.0.2: %u packets; median packet:",
		 2 * PIC_PACKETS);
	CHECK_HAS(page, dir_line);
	snprintf(dir_line, sizeof(dir_line), "10.0.0.2 -&gt; 10.0.0.1: %u packets; median packet:",
		 PIC_PACKETS);
	CHECK_HAS(page, dir_line);
	check_headline(page, j.out, "10.0.0.1", "10.0.0.2");
	check_headline(page, j.out, "10.0.0.2", "10.0.0.1");
	/* Every number in the stage table is the JSON's. */
	for (i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
		check_stage_row(page, j.out, stages[i][0], stages[i][1]);
	free(page);

	/* The text report says the same, in the same words. */
	netlat(&r, "report", path, NULL);
	CHECK_HAS(r.out, "where the time went, per direction\n  10.0.0.");
	CHECK_HAS(r.out, "10.0.0.2 -> 10.0.0.1: 60 packets; median packet: ");
	run_free(&r);

	/* The same page from - (stdout). */
	netlat(&r, "report", "--html", "-", path, NULL);
	CHECK_U64(r.status, 0);
	page = read_file(html, NULL);
	CHECK(!strcmp(r.out, page));
	free(page);
	run_free(&r);

	bin = find_chromium();
	if (!bin) {
		fprintf(stderr, "    chromium not found (apt-get install chromium, or set "
			"NETLAT_CHROMIUM): browser checks skipped%s\n",
			ci && !strcmp(ci, "true") ? "; CI=true: that is a failure" : "");
		CHECK(!(ci && !strcmp(ci, "true")));
		run_free(&j);
		cap_free(&c);
		return;
	}
	chromium(&r, bin, html, "--dump-dom", NULL);
	CHECK_U64(r.status, 0);
	if (!CHECK(!page_complained(r.err)))
		fprintf(stderr, "    chromium said: %s\n", r.err);
	CHECK_HAS(r.out, "id=\"status\" data-state=\"ok\"");
	CHECK_HAS(r.out, "rendered ");
	for (i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		CHECK_HAS(r.out, stages[i][1]);
		check_stage_row(r.out, j.out, stages[i][0], stages[i][1]);
	}
	check_headline(r.out, j.out, "10.0.0.1", "10.0.0.2");
	check_headline(r.out, j.out, "10.0.0.2", "10.0.0.1");
	run_free(&r);

	unlink(png);
	snprintf(shot, sizeof(shot), "--screenshot=%s", png);
	chromium(&r, bin, html, shot, "--window-size=1100,2600");
	CHECK_U64(r.status, 0);
	if (!CHECK(!page_complained(r.err)))
		fprintf(stderr, "    chromium said: %s\n", r.err);
	run_free(&r);
	if (CHECK(png_check(png, &ps) == 0)) {
		CHECK_U64(ps.width, 1100);
		CHECK(ps.colours >= 16);	/* text, bars of several colours */
		CHECK(ps.inked > (size_t)ps.width * ps.height / 50);
		fprintf(stderr, "    screenshot %s: %ux%u, %zu colours, %zu inked pixels\n", png,
			ps.width, ps.height, ps.colours, ps.inked);
	}
	run_free(&j);
	cap_free(&c);
}

/* ---- the trace ------------------------------------------------------------ */

/* "12.345" microseconds as nanoseconds. */
static bool us_to_ns(const char *s, unsigned long long *ns)
{
	unsigned long long us, frac;
	int n = 0;

	if (sscanf(s, "%llu.%3llu%n", &us, &frac, &n) != 2 || n < 5 || s[n - 4] != '.')
		return false;
	*ns = us * 1000 + frac;
	return true;
}

struct tslice {
	unsigned long long packet, ts, dur, e2e;
};

static int cmp_tslice(const void *a, const void *b)
{
	const struct tslice *x = a, *y = b;

	if (x->packet != y->packet)
		return x->packet < y->packet ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Field @key ("ts" gives "ts":) of the event line @ev, or NULL. */
static const char *ev_field(const char *ev, const char *key)
{
	char k[32];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(ev, k);
	return p ? p + strlen(k) : NULL;
}

static void test_cli_export_chrome_trace(void)
{
	const char *trace = artifact("trace.json");
	struct capture c = { 0 };
	struct tslice *sl;
	size_t n = 0, packets, i, instants = 0, meta = 0, bad = 0, distinct = 0, bad_tids = 0;
	static unsigned int tid_pid[4096];
	unsigned long long sum = 0, end = 0, max_e2e = 0, report_packets;
	struct run r, j;
	char *text, *line;
	const char *path;

	packets = build_pictures(&c);
	path = write_capture(&c, "trace.nl");
	netlat(&j, "report", "--json", path, NULL);
	report_packets = json_u64_after(j.out, "\"tcp_packets\":{", "\"count\":");
	CHECK_U64(report_packets, packets);

	unlink(trace);
	netlat(&r, "export", "--chrome-trace", trace, path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!r.err[0]);
	run_free(&r);
	text = read_file(trace, NULL);
	CHECK(json_valid(text, strlen(text)));
	CHECK_HAS(text, "{\"displayTimeUnit\":\"ns\"");
	CHECK_HAS(text, "\"traceEvents\":[");
	CHECK_HAS(text, "\"name\":\"process_name\",\"args\":{\"name\":\"flow 10.0.0.2:5001>10.0.0.1:40000");
	CHECK_HAS(text, "\"name\":\"thread_name\",\"args\":{\"name\":\"cpu 1\"}");
	CHECK_HAS(text, "\"name\":\"marker midway <&>\"");
	/* device events on their CPU's thread (tid = cpu + 1) */
	CHECK_HAS(text, "{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"name\":\"virtio xmit\"");
	CHECK_HAS(text, "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"name\":\"virtio xmit_done\"");
	CHECK_HAS(text, "{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"name\":\"driver\"");
	sl = calloc(strlen(text) / 40 + 1, sizeof(*sl));
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		const char *ts, *dur, *pid, *tid, *pk, *e2e;
		unsigned int p, t;

		/* Perfetto knows a thread by its tid: one process per tid */
		if (sscanf(line, "{\"ph\":\"%*[A-Za-z]\",\"pid\":%u,\"tid\":%u", &p, &t) == 2 &&
		    (t || p == 1)) {
			if (t >= sizeof(tid_pid) / sizeof(tid_pid[0]))
				CHECK(!"tid out of the test's range");
			else if (!tid_pid[t])
				tid_pid[t] = p;
			else if (tid_pid[t] != p && bad_tids++ < 3)
				fprintf(stderr, "    tid %u in pids %u and %u\n", t, tid_pid[t], p);
		}

		if (!strncmp(line, "{\"ph\":\"i\"", 9)) {
			instants++;
			CHECK(ev_field(line, "ts") && ev_field(line, "pid") && ev_field(line, "tid"));
			continue;
		}
		if (!strncmp(line, "{\"ph\":\"M\"", 9))
			meta++;
		if (strncmp(line, "{\"ph\":\"X\"", 9))
			continue;
		ts = ev_field(line, "ts");
		dur = ev_field(line, "dur");
		pid = ev_field(line, "pid");
		tid = ev_field(line, "tid");
		pk = ev_field(line, "packet");
		e2e = ev_field(line, "end_to_end_ns");
		if (!ts || !dur || !pid || !tid || !pk || !e2e ||
		    !us_to_ns(ts, &sl[n].ts) || !us_to_ns(dur, &sl[n].dur) ||
		    sscanf(pk, "%llu", &sl[n].packet) != 1 || sscanf(e2e, "%llu", &sl[n].e2e) != 1) {
			if (bad++ < 3)
				fprintf(stderr, "    bad slice: %.200s\n", line);
			continue;
		}
		n++;
	}
	CHECK_U64(bad, 0);
	CHECK_U64(bad_tids, 0);
	CHECK(meta >= 5);
	/* 2 markers, 2 virtqueue events, the driver records of 3 flows */
	CHECK_U64(instants, 2 + 2 + 3 * (PIC_PACKETS - (PIC_PACKETS + 3) / 7));
	qsort(sl, n, sizeof(*sl), cmp_tslice);
	for (i = 0; i < n; i++) {
		bool first = !i || sl[i].packet != sl[i - 1].packet;
		bool last = i + 1 == n || sl[i + 1].packet != sl[i].packet;

		if (first) {
			distinct++;
			sum = 0;
		} else if (sl[i].ts < end) {
			CHECK(!"slices of a packet overlap");
			fprintf(stderr, "    packet %llu\n", sl[i].packet);
		}
		sum += sl[i].dur;
		end = sl[i].ts + sl[i].dur;
		if (last && !CHECK_U64(sum, sl[i].e2e))
			fprintf(stderr, "    packet %llu\n", sl[i].packet);
		if (last && sum > max_e2e)
			max_e2e = sum;
	}
	CHECK_U64(distinct, packets);
	CHECK_U64(distinct, report_packets);
	/* the slowest packet of the trace is the report's */
	CHECK_U64(max_e2e, json_u64_after(j.out, "\"slowest\":[", "\"end_to_end_ns\":"));
	free(sl);
	free(text);
	run_free(&j);

	netlat(&r, "export", "--chrome-trace", "-", path, NULL);
	CHECK_U64(r.status, 0);
	text = read_file(trace, NULL);
	CHECK(!strcmp(r.out, text));
	free(text);
	run_free(&r);
	cap_free(&c);
}

static void test_cli_pictures_errors(void)
{
	static const struct { const char *message, *bad_case; } cases[] = {
		{ "truncated capture", "truncated last record" },
		{ "not a netlat capture", "foreign magic" },
		{ "corrupt record at offset 128", "bad magic" },
	};
	const char *out = tmp_path("never.out");
	struct run r, ref;
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = write_bad_case(find_bad_case(cases[i].bad_case));

		netlat(&ref, "report", path, NULL);
		netlat(&r, "report", "--html", out, path, NULL);
		CHECK_U64(r.status, 1);
		CHECK_HAS(r.err, cases[i].message);
		CHECK(!strcmp(r.err, ref.err));
		CHECK(access(out, F_OK) != 0);
		run_free(&r);
		netlat(&r, "export", "--chrome-trace", out, path, NULL);
		CHECK_U64(r.status, 1);
		CHECK(!strcmp(r.err, ref.err));
		CHECK(access(out, F_OK) != 0);
		run_free(&r);
		run_free(&ref);
	}
	/* Not a regular file: written in place, never replaced by a rename. */
	netlat(&r, "report", "--html", "/dev/full", tmp_path("report.nl"), NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "cannot write /dev/full: No space left on device");
	run_free(&r);
	CHECK(!stat("/dev/full", &st) && S_ISCHR(st.st_mode));
	netlat(&r, "export", "--chrome-trace", tmp_path("no-such-dir/trace.json"),
	       tmp_path("report.nl"), NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "cannot create");
	run_free(&r);
	netlat(&r, "export", tmp_path("report.nl"), NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "usage: netlat export");
	run_free(&r);
	netlat(&r, "report", "--html", NULL);
	CHECK_U64(r.status, 2);
	run_free(&r);
	/* a capture without TCP records still makes a page and a trace */
	netlat(&r, "report", "--html", out, tmp_path("report.nl"), NULL);
	CHECK_U64(r.status, 0);
	run_free(&r);
	CHECK(access(out, F_OK) == 0);
	netlat(&r, "export", "--chrome-trace", "-", tmp_path("report.nl"), NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	run_free(&r);
	unlink(out);
}

/* A flight recorder's snapshot: its description, rings and trigger. */
static void test_cli_pictures_snapshot(void)
{
	struct capture c = { 0 };
	const char *path;
	struct run r;

	build_snapshot(&c, 7, 10);
	path = write_capture(&c, "snap-pictures.nl");
	netlat(&r, "report", "--html", "-", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "snapshot 7 (trigger latency: TCP_ACK cpu 1 seq 1002), overwrite mode");
	CHECK_HAS(r.out, "<tr><td class=\"l\">0</td><td>1000</td><td>990</td><td>0</td>"
		  "<td>0</td><td>10</td></tr>");
	CHECK_HAS(r.out, "4 records lost, 0 unexplained gaps.");
	run_free(&r);
	netlat(&r, "export", "--chrome-trace", "-", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"name\":\"trigger latency\"");
	CHECK_HAS(r.out, "\"args\":{\"type\":\"SNAPSHOT\"");
	run_free(&r);
	cap_free(&c);
}

/* Many directions, packets with nothing joined: counted, one empty slice each. */
static void test_cli_pictures_many_directions(void)
{
	struct capture c = { 0 };
	const char *path;
	struct run r;
	unsigned int i;
	char want[64];

	cap_stream(&c, 1);
	for (i = 0; i < 12; i++) {
		struct netlat_rec_tcp_xmit *x = cap_tcp(&c, NETLAT_REC_TCP_XMIT, sizeof(*x), i,
							1000 + 100 * i);

		x->flow.cookie = 100 + i;
		x->flow.daddr[3] = (uint8_t)(10 + i);
		x->seq = 5000;
		x->end_seq = 5100;
		x->len = 100;
		x->segs = 1;
	}
	path = write_capture(&c, "directions.nl");
	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK_HAS(r.out, "  192.0.2.1 -> 192.0.2.10: 1 packet, none joined with a sendmsg, "
		  "the device or an ACK\n");
	CHECK_HAS(r.out, "  ... 2 more directions\n");
	run_free(&r);
	netlat(&r, "report", "--json", path, NULL);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, "\"tcp_packets\":{\"count\":12,\"directions_count\":12,");
	CHECK_HAS(r.out, "\"median_packet\":null,\"p99_packet\":null");
	CHECK_HAS(r.out, "\"slowest\":[]");
	run_free(&r);
	netlat(&r, "report", "--html", "-", path, NULL);
	CHECK_HAS(r.out, "<li>... 2 more directions</li>");
	CHECK(!strstr(r.out, "id=\"waterfall\""));
	run_free(&r);
	netlat(&r, "export", "--chrome-trace", "-", path, NULL);
	CHECK(json_valid(r.out, strlen(r.out)));
	for (i = 0; i < 12; i++) {
		snprintf(want, sizeof(want), "\"dur\":0.000,\"args\":{\"packet\":%u,", i);
		CHECK_HAS(r.out, want);
	}
	CHECK_HAS(r.out, "\"pid\":100,\"tid\":1,\"name\":\"xmit\",\"cat\":\"packet\"");
	run_free(&r);
	cap_free(&c);
}
