// SPDX-License-Identifier: GPL-2.0
/*
 * Every stage of the uapi in every output that lists stages: the twin of
 * test_every_counter_everywhere (test_exporter.c). The stages come from
 * NETLAT_STAGES(), not from a list of this file, so that a stage added to
 * the uapi and left out of an output fails here, naming both.
 * Included by test_netlat.c (its helpers are static there).
 */

/* A stage as the uapi defines it: its name, its record and its two points. */
struct uapi_stage {
	const char *name, *rec;
	size_t from, to;	/* offsets of the points in struct netlat_rec_##rec */
};

static const struct uapi_stage uapi_stages[NETLAT_NR_STAGES] = {
#define UAPI_STAGE(NAME, name, rec, from_, to_)				\
	[NETLAT_STAGE_##NAME] = { name, #rec, offsetof(struct netlat_rec_##rec, from_), \
				  offsetof(struct netlat_rec_##rec, to_) },
	NETLAT_STAGES(UAPI_STAGE)
#undef UAPI_STAGE
};

/* How an output spells a stage's name. */
enum stage_spelling {
	SPELL_PLAIN,	/* "sendmsg>xmit": text and JSON */
	SPELL_HTML,	/* "sendmsg&gt;xmit" */
	SPELL_LABEL,	/* "sendmsg_xmit": a Prometheus label value */
};

static void spell_stage(char *buf, size_t len, const char *name, enum stage_spelling how)
{
	size_t n = 0;

	for (; *name && n + 5 < len; name++) {
		if (*name != '>' || how == SPELL_PLAIN)
			buf[n++] = *name;
		else if (how == SPELL_LABEL)
			buf[n++] = '_';
		else
			n += (size_t)snprintf(buf + n, len - n, "&gt;");
	}
	buf[n] = 0;
}

/*
 * @want in @out; with @number (@want ends in a value) followed by no
 * digit, so that "=100" is not found in "=1000".
 */
static bool has_whole(const char *out, const char *want, bool number)
{
	const char *p = out;

	while (p && (p = strstr(p, want))) {
		p += strlen(want);
		if (!number || *p < '0' || *p > '9')
			return true;
	}
	return false;
}

/*
 * Each stage of record @rec ("tcp_pkt", "rx_pkt", or NULL for all) in
 * @out, as @fmt around its name spelt @how and, where @fmt has them, its
 * values @a[k] and @b[k] (NULL: none), so that an output that shows one
 * stage's numbers under another's name fails too. A failure names the
 * stage and @output (the command and its options).
 */
static void stages_in(const char *out, const char *output, const char *rec,
		      const char *fmt, enum stage_spelling how,
		      const unsigned int *a, const unsigned int *b)
{
	bool number = strlen(fmt) > 1 && !strcmp(fmt + strlen(fmt) - 2, "%u");
	char name[64], want[160];
	unsigned int k;

	for (k = 0; k < NETLAT_NR_STAGES; k++) {
		if (rec && strcmp(uapi_stages[k].rec, rec))
			continue;
		spell_stage(name, sizeof(name), uapi_stages[k].name, how);
		snprintf(want, sizeof(want), fmt, name, a ? a[k] : 0, b ? b[k] : 0);
		if (!out || !has_whole(out, want, number)) {
			const char *c;

			check_failures++;
			fprintf(stderr, "    stage %s missing from %s (no \"",
				uapi_stages[k].name, output);
			for (c = want; *c; c++)
				fputs(*c == '\n' ? "\\n" : (char[]){ *c, 0 }, stderr);
			fputs("\")\n", stderr);
		}
	}
}

/*
 * A copy of @out from @from up to @to (not included; the end without one),
 * to look for the stages in one table of an output; NULL without @from.
 */
static char *out_section(const char *out, const char *from, const char *to)
{
	const char *p = out ? strstr(out, from) : NULL, *end;

	if (!p)
		return NULL;
	end = strstr(p + strlen(from), to);
	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/* A copy of the object that is JSON member @key ("\"KEY\":{") in @out, or NULL. */
static char *json_object(const char *out, const char *key)
{
	const char *p = out ? strstr(out, key) : NULL, *q;
	bool in_string = false;
	int depth = 0;

	if (!p)
		return NULL;
	for (q = p + strlen(key) - 1; *q; q++) {
		if (in_string) {
			if (*q == '\\' && q[1])
				q++;
			else if (*q == '"')
				in_string = false;
		} else if (*q == '"') {
			in_string = true;
		} else if (*q == '{') {
			depth++;
		} else if (*q == '}' && !--depth) {
			return strndup(p, (size_t)(q + 1 - p));
		}
	}
	return NULL;
}

/* stages_in() on a section, freed after. */
static void stages_in_part(char *part, const char *output, const char *rec,
			   const char *fmt, enum stage_spelling how,
			   const unsigned int *a, const unsigned int *b)
{
	stages_in(part, output, rec, fmt, how, a, b);
	free(part);
}

/*
 * Fill the points of every stage of record @rec at @p that are still
 * zero, in the uapi's order: a stage's first point at @base, its second
 * after its first. A stage added to the uapi gets its samples from here
 * without a change, as long as its points come after the ones before it.
 */
static void fill_points(void *p, const char *rec, uint64_t base, uint64_t step)
{
	unsigned int k;

	for (k = 0; k < NETLAT_NR_STAGES; k++) {
		uint64_t *from = (void *)((char *)p + uapi_stages[k].from);
		uint64_t *to = (void *)((char *)p + uapi_stages[k].to);

		if (strcmp(uapi_stages[k].rec, rec))
			continue;
		if (!*from)
			*from = base;
		if (!*to)
			*to = *from + step * (k + 1);
	}
}

/* Per stage, the samples the library reads of a capture and their least value. */
struct stage_nums {
	unsigned int count[NETLAT_NR_STAGES], min[NETLAT_NR_STAGES];
};

static void count_stages(struct stage_nums *n, const void *rec, bool rx)
{
	uint64_t from, to;
	unsigned int k;

	for (k = 0; k < NETLAT_NR_STAGES; k++) {
		if (!(rx ? netlat_rx_pkt_stage(rec, k, &from, &to) :
			   netlat_pkt_stage(rec, k, &from, &to)))
			continue;
		if (!n->count[k]++ || to - from < n->min[k])
			n->min[k] = (unsigned int)(to - from);
	}
}

/* A received TCP or UDP packet, copied to its reader, counted in @n. */
static void every_stage_rx(struct capture *c, struct stage_nums *n, uint64_t seq,
			   uint64_t t, bool udp)
{
	struct netlat_rec_rx_pkt *p = cap_tcp(c, NETLAT_REC_RX_PKT, sizeof(*p), seq,
					      t + 900000);

	if (udp)
		set_flow(p, AF_INET, "192.0.2.2", 53, "192.0.2.1", 4000, 0);
	else
		set_flow(p, AF_INET, "192.0.2.2", 80, "192.0.2.1", 1000, 9);
	p->proto = udp ? NETLAT_RX_UDP : NETLAT_RX_TCP;
	p->flags = NETLAT_RXP_NETIF | NETLAT_RXP_QUEUED | NETLAT_RXP_COPIED;
	p->seq = 5000 + 100 * (uint32_t)seq;
	p->end_seq = p->seq + 100;
	p->len = 100;
	p->segs = 1;
	fill_points(p, "rx_pkt", TEST_MONO_NS + t, 700 + seq);
	count_stages(n, p, true);
}

/*
 * A packet-level capture in which every stage has samples, in time order:
 * TCP_PKT records ended by their ACK, received TCP and UDP packets copied
 * to their reader. @n: what the library reads of it, the numbers the
 * outputs must show (each stage's least value is its own).
 */
static const char *every_stage_capture(struct stage_nums *n)
{
	struct capture c = { 0 };
	uint64_t seq = 0;
	unsigned int i;
	const char *path;

	memset(n, 0, sizeof(*n));
	cap_stream(&c, 1);
	for (i = 0; i < 4; i++) {
		uint64_t t = 3000000 * i + 1000000;
		struct netlat_rec_tcp_pkt *p = cap_tcp(&c, NETLAT_REC_TCP_PKT, sizeof(*p),
						       seq++, t + 900000);

		p->seq = 1000 + 1448 * i;
		p->end_seq = p->seq + 1448;
		p->segs = 1;
		p->range_end = p->end_seq;
		p->vq_size = 256;
		p->flags = NETLAT_PKT_SENDMSG | NETLAT_PKT_QDISC | NETLAT_PKT_DRIVER |
			   NETLAT_PKT_ACKED | NETLAT_PKT_VQ;
		fill_points(p, "tcp_pkt", TEST_MONO_NS + t, 1000 + i);
		count_stages(n, p, false);
		/* p is not used past here: the capture's buffer moves */
		every_stage_rx(&c, n, seq++, t + 1000000, false);
		every_stage_rx(&c, n, seq++, t + 2000000, true);
	}
	path = write_capture(&c, "every-stage.nl");
	cap_free(&c);
	return path;
}

/*
 * Every stage the uapi lists (NETLAT_STAGES()) is in every output that
 * lists stages, with its own numbers, from a capture and from the
 * device's histograms: report's stage table (text, --json, --html), tail
 * (text, --json), stat --hist (text, --json) and the metrics (stat
 * --prometheus, which test_textfile holds to the exporter's scrape byte
 * for byte), the send stages in netlat_tcp_stage_seconds and the receive
 * ones in netlat_rx_stage_seconds. report's histograms are of the send
 * stages (struct netlat_rec_tcp_pkt's): each of those has one. The
 * per-port summaries and the join are left out: they show the stages of
 * the joined packets, which a packet-level stage such as driver>vq need
 * not be.
 */
static void test_every_stage_everywhere(void)
{
	unsigned int dev[NETLAT_NR_STAGES], k;
	const char *path, *file = tmp_path("every-stage.prom");
	char spec[4096], *text;
	struct stage_nums n;
	size_t len = 0;
	struct run r;

	path = every_stage_capture(&n);
	for (k = 0; k < NETLAT_NR_STAGES; k++)
		if (!n.count[k]) {
			check_failures++;
			fprintf(stderr, "    the capture gives stage %s no sample\n",
				uapi_stages[k].name);
		}

	netlat(&r, "report", path, NULL);
	CHECK_U64(r.status, 0);
	/* a row of the stage table (count, min), the send stages' histograms */
	stages_in_part(out_section(r.out, "\nstage ", "\n\n"), "report's stage table",
		       NULL, "\n%-13s %10u %10u ", SPELL_PLAIN, n.count, n.min);
	stages_in(r.out, "report's histograms", "tcp_pkt", "\n%s (ns)\n", SPELL_PLAIN,
		  NULL, NULL);
	run_free(&r);
	netlat(&r, "report", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	stages_in_part(json_object(r.out, "\"tcp_stages\":{"), "report --json's tcp_stages",
		       "tcp_pkt", "\"%s\":{\"count\":%u,\"min\":%u,", SPELL_PLAIN,
		       n.count, n.min);
	stages_in_part(json_object(r.out, "\"rx_stages\":{"), "report --json's rx_stages",
		       "rx_pkt", "\"%s\":{\"count\":%u,\"min\":%u,", SPELL_PLAIN,
		       n.count, n.min);
	stages_in_part(json_object(r.out, "\"tcp_stage_hist\":{"),
		       "report --json's tcp_stage_hist", "tcp_pkt", "\"%s\":[", SPELL_PLAIN,
		       NULL, NULL);
	run_free(&r);
	netlat(&r, "report", "--html", "-", path, NULL);
	CHECK_U64(r.status, 0);
	stages_in_part(out_section(r.out, "<table id=\"stages\"", "</table>"),
		       "report --html's stage table", NULL,
		       "<tr><td class=\"l\">%s</td><td>%u</td><td>%u</td>", SPELL_HTML,
		       n.count, n.min);
	stages_in(r.out, "report --html's histograms", "tcp_pkt", "<h3>%s</h3>", SPELL_HTML,
		  NULL, NULL);
	run_free(&r);

	/* each record's line: its own stages, the least on some line */
	netlat(&r, "tail", path, NULL);
	CHECK_U64(r.status, 0);
	stages_in(r.out, "tail", NULL, " %s=%u", SPELL_PLAIN, n.min, NULL);
	run_free(&r);
	netlat(&r, "tail", "--json", path, NULL);
	CHECK_U64(r.status, 0);
	stages_in(r.out, "tail --json", NULL, ",\"%s\":%u", SPELL_PLAIN, n.min, NULL);
	run_free(&r);

	/* the device's histograms: stage k's 5 + k samples in bucket 10 + k */
	for (k = 0; k < NETLAT_NR_STAGES; k++) {
		dev[k] = 5 + k;
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "h%u.%u=%u ",
					k, 10 + k, dev[k]);
	}
	fake_env("0", "0");
	setenv("FAKE_NETLAT_HIST", spec, 1);
	netlat(&r, "stat", "--hist", "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 0);
	stages_in_part(out_section(r.out, "stage (ns) ", "\npackets "), "stat --hist", NULL,
		       "\n%-13s %10u ", SPELL_PLAIN, dev, NULL);
	run_free(&r);
	netlat(&r, "stat", "--hist", "--json", "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	stages_in_part(json_object(r.out, "\"stages\":{"), "stat --hist --json", NULL,
		       "\"%s\":{\"count\":%u,", SPELL_PLAIN, dev, NULL);
	run_free(&r);
	netlat(&r, "stat", "--prometheus", file, "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 0);
	run_free(&r);
	text = read_file(file, NULL);
	stages_in(text, "the metrics' netlat_tcp_stage_seconds", "tcp_pkt",
		  "\nnetlat_tcp_stage_seconds_count{stage=\"%s\"} %u", SPELL_LABEL, dev, NULL);
	stages_in(text, "the metrics' netlat_rx_stage_seconds", "rx_pkt",
		  "\nnetlat_rx_stage_seconds_count{stage=\"%s\"} %u", SPELL_LABEL, dev, NULL);
	free(text);
	unsetenv("FAKE_NETLAT_HIST");
	free(fake_done());
}
