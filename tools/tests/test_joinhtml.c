// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of "netlat report A --peer B --html" (joinhtml.c): the page's
 * join section says what "netlat join A B" prints, escapes what the
 * captures hold, and fetches nothing. #included by test_netlat.c after
 * test_join.c (the simulation, the host notes) and test_pictures.c
 * (artifacts, Chromium).
 */

/* "A" or "B"'s host notes under @name, boot ids apart (two machines). */
static void jh_notes(struct capture *a, struct capture *b, const char *name_b)
{
	cap_host_notes(a, "alpha", "0b5e6c1a-1111-2222-3333-444455556666", false);
	cap_host_notes(b, name_b, "7f00aa00-9999-8888-7777-666655554444", true);
}

/* The text between @from and the next @to in @s, as a new string ("" if none). */
static char *jh_between(const char *s, const char *from, const char *to)
{
	const char *p = s ? strstr(s, from) : NULL, *e;

	if (!p)
		return strdup("");
	p += strlen(from);
	e = strstr(p, to);
	return strndup(p, e ? (size_t)(e - p) : strlen(p));
}

/* The page fetches nothing: no attribute, element or rule that loads. */
static void jh_no_fetch(const char *page)
{
	static const char *const fetchers[] = {
		"src=", "href=", "url(", "@import", "<link", "<img", "<iframe", "<object",
		"<embed", "fetch(", "XMLHttpRequest",
	};
	size_t i;

	for (i = 0; i < sizeof(fetchers) / sizeof(fetchers[0]); i++)
		if (!CHECK(!strstr(page, fetchers[i])))
			fprintf(stderr, "    the page has \"%s\"\n", fetchers[i]);
}

/* Column @i (0: count) of a text join's stage row: "%9s" each after the label. */
static void jh_column(const char *row, unsigned int i, char *out, size_t size)
{
	size_t at = 2 + 18 + 1 + 10 * i;
	char col[10];

	snprintf(col, sizeof(col), "%.9s", strlen(row) > at ? row + at : "");
	snprintf(out, size, "%s", col + strspn(col, " "));
}

/*
 * The wire row of direction @dir ("A>B") of the text join in the page's
 * table: the same count, p50, p99, max and median bound, word for word.
 */
static void jh_check_wire(const char *page, const char *text, const char *dir)
{
	static const unsigned int cols[] = { 1, 3, 4 };	/* p50, p99, max */
	char label[32], cell[32], want[64];
	const char *line;
	char *row, *bound;
	unsigned int i;

	snprintf(label, sizeof(label), "\n  wire %s ", dir);
	line = strstr(text, label);
	if (!CHECK(line))
		return;
	line++;
	snprintf(label, sizeof(label), "wire %c&gt;%c</td>", dir[0], dir[2]);
	row = jh_between(page, label, "</tr>");
	jh_column(line, 0, cell, sizeof(cell));
	snprintf(want, sizeof(want), "<td>%s</td>", cell);
	CHECK_HAS(row, want);
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		jh_column(line, cols[i], cell, sizeof(cell));
		CHECK(cell[0]);
		snprintf(want, sizeof(want), "\">%s</span>", cell);
		CHECK_HAS(row, want);
	}
	/* "+-25.0 us (median bound)" */
	bound = jh_between(line, "+-", " (median bound)");
	CHECK(bound[0] && !strchr(bound, '\n'));
	snprintf(want, sizeof(want), "\">%s</span> (median bound)", bound);
	CHECK_HAS(row, want);
	free(bound);
	free(row);
}

/*
 * "report A --peer B --html @html" of a simulation @s, B's host noted as
 * @name_b (NULL: no notes), B's capture empty unless @pair: the page,
 * its join section in *@sect. A's capture at @pa, B's at @pb.
 */
static char *jh_page(struct sim *s, const char *name_b, bool pair, const char *pa,
		     const char *pb, const char *html, const char **sect)
{
	struct capture a = { 0 }, b = { 0 }, empty = { 0 };
	struct run r;
	char *page;

	sim_run(s, &a, &b);
	if (name_b)
		jh_notes(&a, &b, name_b);
	cap_stream(&empty, 1);
	CHECK(cap_write(&a, pa) == 0 && cap_write(pair ? &b : &empty, pb) == 0);
	unlink(html);
	netlat(&r, "report", "--peer", pb, "--html", html, pa, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!r.out[0] && !r.err[0]);
	run_free(&r);
	page = read_file(html, NULL);
	CHECK(!strncmp(page, "<!DOCTYPE html>", 15) && strstr(page, "</html>\n"));
	*sect = strstr(page, "<section id=\"join\">");
	CHECK(*sect);
	cap_free(&a);
	cap_free(&b);
	cap_free(&empty);
	return page;
}

/* The page of A with B: B's offset as the text gives it, both directions' wire. */
static void test_cli_report_peer_html(void)
{
	struct sim s = { .requests = 300, .gap_ns = 1000000, .offset_ns = 5000000,
			 .ppm = 20, .floor_ab = 20000, .floor_ba = 30000 };
	const char *pa = tmp_path("jh-a.nl"), *pb = tmp_path("jh-b.nl");
	const char *html = artifact("report-peer.html"), *bin, *sect;
	char *page, *offset;
	struct run t, r;
	double off_err;

	page = jh_page(&s, "beta", true, pa, pb, html, &sect);
	netlat(&t, "join", pa, pb, NULL);
	CHECK_U64(t.status, 0);
	/* "clock B-A at A 1000.150... s: +0.004998... s [-25.0 us, +25.0 us], drift ..." */
	offset = jh_between(strstr(t.out, "clock B-A at A "), " s: ", " [");
	/* 5 ms and 20 ppm of the 150 ms to the middle: 5.003 ms */
	off_err = strtod(offset, NULL) - 0.005003;
	CHECK(off_err < 0.00003 && off_err > -0.00003);
	/* the report's own sections first, then the join's, before the footer */
	CHECK(sect && strstr(page, "<section id=\"summary\">") &&
	      strstr(page, "<section id=\"summary\">") < sect &&
	      sect < strstr(page, "<footer>"));
	CHECK_HAS(sect, "B's clock against A's");
	CHECK_HAS(sect, offset);
	CHECK_HAS(sect, "<h3 id=\"join-ab\">A (alpha) &#8594; B (beta)</h3>");
	CHECK_HAS(sect, "<h3 id=\"join-ba\">B (beta) &#8594; A (alpha)</h3>");
	CHECK_HAS(sect, "300 of 300 sent packets joined");
	CHECK_HAS(sect, "retransmitted (Karn)");
	CHECK_HAS(sect, "<svg class=\"join-bar\"");
	CHECK_HAS(sect, "B netif&gt;tcp");
	jh_check_wire(page, t.out, "A>B");
	jh_check_wire(page, t.out, "B>A");
	jh_no_fetch(page);
	CHECK(!strstr(page, "http:") && !strstr(page, "https:"));
	free(page);

	/* with --json the JSON still goes to stdout, the join in it */
	netlat(&r, "report", "--json", "--peer", pb, "--html", tmp_path("jh.html"), pa, NULL);
	CHECK_U64(r.status, 0);
	CHECK(json_valid(r.out, strlen(r.out)));
	CHECK_HAS(r.out, ",\"join\":{\"hosts\":[");
	run_free(&r);
	/* a peer that cannot be read: no page */
	unlink(tmp_path("jh-none.html"));
	netlat(&r, "report", "--peer", tmp_path("no-such-peer.nl"), "--html",
	       tmp_path("jh-none.html"), pa, NULL);
	CHECK_U64(r.status, 1);
	CHECK(access(tmp_path("jh-none.html"), F_OK) != 0);
	run_free(&r);

	bin = find_chromium();
	if (bin) {
		chromium(&r, bin, html, "--dump-dom", NULL);
		CHECK_U64(r.status, 0);
		if (!CHECK(!page_complained(r.err)))
			fprintf(stderr, "    chromium said: %s\n", r.err);
		CHECK_HAS(r.out, "id=\"status\" data-state=\"ok\"");
		CHECK_HAS(r.out, offset);
		run_free(&r);
	}
	free(offset);
	run_free(&t);
}

/* What a capture says of its host, and the files' names, are text on the page. */
static void test_cli_report_peer_html_escapes(void)
{
	struct sim s = { .requests = 50, .gap_ns = 1000000, .floor_ab = 20000,
			 .floor_ba = 20000 };
	const char *sect;
	char *page;

	page = jh_page(&s, "<script>alert(1)</script>&amp;\"x\"", true, tmp_path("jh-esc-a.nl"),
		       tmp_path("jh-<i>&b.nl"), tmp_path("jh-esc.html"), &sect);
	CHECK(!strstr(page, "<script>alert"));
	CHECK(!strstr(page, "<i>&b"));
	CHECK_HAS(sect, "B (&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;&quot;x&quot;)");
	CHECK_HAS(sect, "B: &lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;&quot;x&quot; (boot");
	CHECK_HAS(sect, "jh-&lt;i&gt;&amp;b.nl");
	/* the page's one script is its own, at the end */
	CHECK(strstr(page, "<script>") && strstr(page, "<script>") > strstr(page, "<footer>"));
	free(page);
	/*
	 * A hostname that is no UTF-8 (a lone continuation byte, an overlong
	 * '/', a surrogate, a cut sequence) keeps the page UTF-8: each bad
	 * byte one U+FFFD, the good characters as they were.
	 */
	page = jh_page(&s, "h\x80\xc0\xaf\xed\xa0\x80\xc3\xa9\xe2\x82", true,
		       tmp_path("jh-u8-a.nl"), tmp_path("jh-u8-b.nl"),
		       tmp_path("jh-u8.html"), &sect);
	CHECK_HAS(sect, "B (h\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			"\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd)");
	free(page);
}

/* A peer with nothing to pair: the page says, as the text does, that nothing bounds it. */
static void test_cli_report_peer_html_unpaired(void)
{
	struct sim s = { .requests = 40, .gap_ns = 1000000, .floor_ab = 20000,
			 .floor_ba = 20000 };
	const char *pa = tmp_path("jh-lone-a.nl"), *pb = tmp_path("jh-empty.nl"), *sect;
	char *page;
	struct run t;

	page = jh_page(&s, NULL, false, pa, pb, tmp_path("jh-lone.html"), &sect);
	netlat(&t, "report", "--peer", pb, pa, NULL);
	CHECK_U64(t.status, 0);
	CHECK_HAS(t.out, "no pair with a driver time and a receive stamp: nothing bounds it");
	CHECK_HAS(sect, "no pair with a driver time and a receive stamp: nothing bounds it");
	CHECK_HAS(sect, "0 of 40 sent packets joined");
	CHECK_HAS(sect, "(no host notes: not written by netlat record)");
	/* no stage to draw either way, the tables' rows empty as the text's */
	CHECK(sect && !strstr(sect, "<svg class=\"join-bar\""));
	CHECK_HAS(sect, "No stage to draw");
	CHECK_HAS(sect, "wire A&gt;B</td><td>-</td>");
	jh_no_fetch(page);
	free(page);
	run_free(&t);
}

/*
 * Nothing on the page loads from elsewhere, whatever the captures say: a
 * hostname that is a URL stays text, to stdout as to a file.
 */
static void test_cli_report_peer_html_self_contained(void)
{
	struct sim s = { .requests = 100, .gap_ns = 1000000, .offset_ns = -7000000,
			 .floor_ab = 20000, .floor_ba = 20000 };
	const char *pa = tmp_path("jh-sc-a.nl"), *pb = tmp_path("jh-sc-b.nl"), *sect;
	char *page;
	struct run r;

	page = jh_page(&s, "http://example.com/x.js", true, pa, pb, tmp_path("jh-sc.html"),
		       &sect);
	CHECK_HAS(sect, "B (http://example.com/x.js)");
	CHECK_HAS(page, "Content-Security-Policy");
	jh_no_fetch(page);
	netlat(&r, "report", "--peer", pb, "--html", "-", pa, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!strcmp(r.out, page));
	run_free(&r);
	free(page);
}

/* A clock step: the text's window lines on the page, the step's standing out. */
static void test_cli_report_peer_html_step(void)
{
	struct sim s = { .requests = 10000, .gap_ns = 2000000, .offset_ns = 1000000,
			 .ppm = 20, .floor_ab = 20000, .floor_ba = 20000,
			 .step_at = SIM_T0 + 14300000000ULL, .step_ns = 5000000 };
	const char *pa = tmp_path("jh-step-a.nl"), *pb = tmp_path("jh-step-b.nl"), *sect;
	const char *end, *line;
	char want[512], *page;
	struct run t;

	page = jh_page(&s, NULL, true, pa, pb, tmp_path("jh-step.html"), &sect);
	netlat(&t, "join", pa, pb, NULL);
	CHECK_U64(t.status, 0);
	/* "  window 14.000-16.000 s: ...; STEP: no one line joins it ...\n" */
	end = strstr(t.out, "; STEP:");
	for (line = end; line && line > t.out && line[-1] != '\n'; line--)
		;
	if (CHECK(end && !strncmp(line, "  window ", 9))) {
		snprintf(want, sizeof(want), "<li><strong>%.*s; STEP: no one line joins it",
			 (int)(end - line - 2), line + 2);
		CHECK_HAS(sect, want);
	}
	CHECK_HAS(sect, "no one line fits the whole capture");
	free(page);
	run_free(&t);
}
