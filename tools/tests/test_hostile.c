// SPDX-License-Identifier: GPL-2.0
/*
 * #39: a real Prometheus scrapes two exporters every second for a minute,
 * one over plain HTTP and one over HTTPS, both with basic auth, while
 * HOSTILE_N connections to each stall, drip, send garbage or wrong
 * passwords. Prometheus's own data must say that no scrape failed.
 * Included by test_netlat.c after test_webcfg.c (start_exporter,
 * start_prometheus, make_certs, conn_read, basic_header).
 */
#include <sys/resource.h>

#define HOSTILE_N	1000	/* connections to each exporter */
#define HOSTILE_SECS	60	/* NETLAT_HOSTILE_SECS=N: a shorter run by hand */
/*
 * The slowest scrape, in s: the bcrypt budget's burst (0.25), a queue
 * behind the flood (~0.1: 488 connections, 512 slots of 100 ms) and room
 * for a 2-CPU machine busy with the attack; the timeout is 1 s.
 */
#define HOSTILE_BOUND	0.8

/*
 * The kinds of hostile connection, by index modulo H_KINDS: one sends
 * nothing, one a request's start at once and nothing more, one a byte
 * every 200 ms and never a whole request, one garbage (the server must
 * answer 400 and close), one a whole request with a wrong password (401,
 * or 429 once the bcrypt budget is spent; the TLS port answers its plain
 * HTTP 400).
 */
enum hostile_kind { H_SILENT, H_STALL, H_DRIP, H_GARBAGE, H_WRONG, H_KINDS };

struct hostile_counts {
	unsigned long connects;
	unsigned long closed[H_KINDS];	/* closed by the server */
	unsigned long bad_request;	/* garbage answered 400 */
	unsigned long unauthorized, throttled;	/* wrong passwords: 401, 429 */
	unsigned long unanswered;	/* garbage closed without a word (evicted) */
	unsigned long wrong;		/* any other answer: a bug */
};

/* One exporter under attack: where, and what a request's start is there. */
struct hostile_target {
	struct sockaddr_in sa;
	const char *start;	/* never completed: a header, half a ClientHello */
	size_t start_len;
	const char *wrong;	/* a whole request with a wrong password */
};

struct hostile_conn {
	unsigned int sent;	/* bytes of the start (then 'A's) sent */
	size_t got;
	char resp[256];
};

static const char hostile_junk[] = "NOT HTTP AT ALL\r\n\r\n";

/* Open connection @i (or not yet: the next pass tries again). */
static void hostile_open(struct pollfd *p, struct hostile_conn *c,
			 const struct hostile_target *t)
{
	p->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (p->fd < 0)
		return;
	if (connect(p->fd, (const struct sockaddr *)&t->sa, sizeof(t->sa)) &&
	    errno != EINPROGRESS) {
		close(p->fd);
		p->fd = -1;
		return;
	}
	p->events = POLLIN;
	c->sent = 0;
	c->got = 0;
}

/* What connection @i of its kind sends now (@tick: a drip's 200 ms passed). */
static void hostile_send(int fd, enum hostile_kind kind, struct hostile_conn *c,
			 const struct hostile_target *t, bool tick)
{
	const char *b;

	switch (kind) {
	case H_STALL:
		if (!c->sent)
			c->sent = send(fd, t->start, t->start_len, MSG_NOSIGNAL) > 0;
		break;
	case H_DRIP:
		if (!tick)
			break;
		b = c->sent < t->start_len ? t->start + c->sent : "A";
		c->sent += send(fd, b, 1, MSG_NOSIGNAL) == 1;
		break;
	case H_GARBAGE:
	case H_WRONG:
		b = kind == H_WRONG ? t->wrong : hostile_junk;
		if (!c->sent)
			c->sent = send(fd, b, strlen(b), MSG_NOSIGNAL) > 0;
		break;
	default:
		break;
	}
}

/* Whether @resp starts with the status line of @status ("400 Bad Request"). */
static bool status_is(const char *resp, const char *status)
{
	return !strncmp(resp, "HTTP/1.1 ", 9) && !strncmp(resp + 9, status, strlen(status)) &&
	       !strncmp(resp + 9 + strlen(status), "\r\n", 2);
}

/* The server closed connection @c of @kind: count what it said. */
static void hostile_closed(struct hostile_counts *hc, enum hostile_kind kind,
			   const struct hostile_conn *c)
{
	bool answers = kind == H_GARBAGE || kind == H_WRONG;

	hc->closed[kind]++;
	if (!c->got)
		hc->unanswered += answers;
	else if (answers && status_is(c->resp, "400 Bad Request"))
		hc->bad_request++;
	else if (kind == H_WRONG && status_is(c->resp, "401 Unauthorized"))
		hc->unauthorized++;
	else if (kind == H_WRONG && status_is(c->resp, "429 Too Many Requests"))
		hc->throttled++;
	else
		hc->wrong++;
}

/*
 * A child process that keeps HOSTILE_N connections open to each of the
 * @nr targets for @secs, each one the server closes opened again at once;
 * the counts in hostile.counts.
 */
static pid_t hostile_clients(const struct hostile_target *t, int nr, unsigned int secs)
{
	static struct pollfd p[2 * HOSTILE_N];
	static struct hostile_conn c[2 * HOSTILE_N];
	struct hostile_counts hc = { 0 };
	uint64_t end, next_drip = 0;
	int i, n = nr * HOSTILE_N;
	pid_t pid;

	pid = flood_fork(p, n);
	if (pid)
		return pid;
	end = monotonic_now_ns() + secs * 1000000000ull;
	while (monotonic_now_ns() < end) {
		bool tick = monotonic_now_ns() >= next_drip;

		if (tick)
			next_drip = monotonic_now_ns() + 200000000ull;
		for (i = 0; i < n; i++) {
			if (p[i].fd < 0) {
				hostile_open(&p[i], &c[i], &t[i / HOSTILE_N]);
				hc.connects += p[i].fd >= 0;
			}
			if (p[i].fd >= 0)
				hostile_send(p[i].fd, i % H_KINDS, &c[i], &t[i / HOSTILE_N], tick);
		}
		if (poll(p, (nfds_t)n, 50) <= 0)
			continue;
		for (i = 0; i < n; i++)
			if (p[i].fd >= 0 && p[i].revents &&
			    conn_read(&p[i], c[i].resp, &c[i].got, sizeof(c[i].resp)))
				hostile_closed(&hc, i % H_KINDS, &c[i]);
	}
	flood_exit("hostile.counts", &hc, sizeof(hc));
}

/* The value of @fmt (with the job and the seconds) over the attack. */
static double hostile_query(int prom_port, const char *fmt, const char *job, unsigned int secs)
{
	char query[256];

	snprintf(query, sizeof(query), fmt, job, secs);
	return prom_query(prom_port, query);
}

/*
 * What Prometheus recorded of @job over the last @secs: every up 1, about
 * one sample a second, and the slowest scrape within @bound seconds.
 */
static void hostile_job_ok(int prom_port, const char *job, unsigned int secs, double bound)
{
	double v;

	v = hostile_query(prom_port, "min_over_time(up{job=\"%s\"}[%us])", job, secs);
	if (!CHECK(v == 1))
		fprintf(stderr, "    job %s: a scrape failed (min up %g)\n", job, v);
	v = hostile_query(prom_port, "count_over_time(up{job=\"%s\"}[%us])", job, secs);
	if (!CHECK(v >= secs - 5 && v <= secs + 2))
		fprintf(stderr, "    job %s: %g scrapes in %u s\n", job, v, secs);
	v = hostile_query(prom_port,
			  "max_over_time(scrape_duration_seconds{job=\"%s\"}[%us])", job, secs);
	if (!CHECK(v < bound))
		fprintf(stderr, "    job %s: slowest scrape %g s\n", job, v);
	else
		printf("    job %s: %u s of scrapes beside %d hostile connections: slowest %.3f s\n",
		       job, secs, HOSTILE_N, v);
}

/*
 * A hostile target at 127.0.0.1:@port whose request starts with @start,
 * its wrong password in @wrong.
 */
static void hostile_target(struct hostile_target *t, int port, const char *start, size_t len,
			   const char *wrong)
{
	memset(t, 0, sizeof(*t));
	t->sa.sin_family = AF_INET;
	t->sa.sin_port = htons((uint16_t)port);
	t->sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	t->start = start;
	t->start_len = len;
	t->wrong = wrong;
}

/*
 * Prometheus's jobs: "netlat" at @plain_port (plain HTTP) and "netlat-tls"
 * at @tls_port over HTTPS with the password, "no-password" without it.
 */
static void hostile_jobs(char *jobs, size_t len, int plain_port, int tls_port)
{
	const char *ca = tmp_path("tls/ca.crt");

	snprintf(jobs, len,
		 "      - targets: ['127.0.0.1:%d']\n"
		 "    basic_auth:\n      username: %s\n      password: '%s'\n"
		 "  - job_name: netlat-tls\n"
		 "    scheme: https\n    tls_config:\n      ca_file: '%s'\n"
		 "    basic_auth:\n      username: %s\n      password: '%s'\n"
		 "    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
		 "  - job_name: no-password\n"
		 "    scheme: https\n    tls_config:\n      ca_file: '%s'\n"
		 "    static_configs:\n      - targets: ['127.0.0.1:%d']\n",
		 plain_port, WEB_USER, WEB_PASS, ca, WEB_USER, WEB_PASS, tls_port, ca, tls_port);
}

/*
 * The hostile child's counts, checked: garbage got 400s, wrong passwords
 * 401s and 429s (the budget was spent), nothing else.
 */
static void hostile_counts_ok(void)
{
	struct hostile_counts hc = { 0 };
	size_t len;
	char *buf = read_file(tmp_path("hostile.counts"), &len);

	if (CHECK_U64(len, sizeof(hc)))
		memcpy(&hc, buf, sizeof(hc));
	free(buf);
	CHECK(hc.bad_request > 0 && hc.unauthorized > 0 && hc.throttled > 0);
	CHECK_U64(hc.wrong, 0);
	printf("    %lu hostile connections: closed %lu silent, %lu stalled, %lu dripping, "
	       "%lu garbage, %lu wrong passwords (%lu answered 400, %lu 401, %lu 429, "
	       "%lu evicted first)\n", hc.connects, hc.closed[H_SILENT], hc.closed[H_STALL],
	       hc.closed[H_DRIP], hc.closed[H_GARBAGE], hc.closed[H_WRONG], hc.bad_request,
	       hc.unauthorized, hc.throttled, hc.unanswered);
}

/*
 * The soft limit on open files raised to @need if below (often 1,024, the
 * hard limit higher), the old one in *@old: false, the test skipped, if
 * the hard limit is too low.
 */
static bool nofile_at_least(rlim_t need, struct rlimit *old)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, old))
		return CHECK(!"getrlimit");
	rl = *old;
	if (rl.rlim_cur >= need)
		return true;
	rl.rlim_cur = need;
	if (rl.rlim_max < need || setrlimit(RLIMIT_NOFILE, &rl)) {
		skip_test("%lu open files needed, the limit is %lu (ulimit -Hn)",
			  (unsigned long)need, (unsigned long)old->rlim_max);
		return false;
	}
	return true;
}

/* The exporter's last line in the temporary file @name, after @label. */
static void print_stopped(const char *label, const char *name)
{
	char *err = read_file(tmp_path(name), NULL);
	const char *stopped = strstr(err, "exporter stopped");

	printf("    %s: %s", label, stopped ? stopped : err);
	free(err);
}

/*
 * The test: Prometheus scrapes both exporters every second (its
 * scrape timeout is the interval, 1 s: a slower scrape is up 0) while
 * the hostile child attacks both for HOSTILE_SECS. Prometheus must say
 * that every scrape of both worked, about one a second, each within
 * HOSTILE_BOUND, and the job without the password is down throughout. Each
 * guard is needed: without eviction silent clients hold every slot for the
 * timeout; with a slot lost after one poll (16 slots did that) a TLS
 * handshake is cut; without the bcrypt budget wrong passwords take the
 * loop's time.
 */
static void test_hostile_scrapes(void)
{
	static const char hello[] = "\x16\x03\x01\x02\x00\x01";	/* half a ClientHello */
	static const char head[] = "GET /metrics HTTP/1.1\r\nX-Slow: ";
	const char *env = getenv("NETLAT_HOSTILE_SECS");
	unsigned int secs = env && atoi(env) > 0 ? (unsigned int)atoi(env) : HOSTILE_SECS;
	char users[256], text[300], jobs[4096], auth[600], wrong[1024];
	int plain_port, tls_port, prom_port;
	pid_t plain, tls, prom, hostile;
	struct hostile_target t[2];
	struct run r = { 0 };
	struct rlimit old;
	double v;

	if (!make_certs() || !need_program("prometheus", "prometheus") ||
	    !nofile_at_least(2 * HOSTILE_N + 64, &old))
		return;
	snprintf(users, sizeof(users), "  %s: %s\n", WEB_USER, bcrypt_hash("$2y$", WEB_PASS));
	basic_header(auth, sizeof(auth), WEB_USER ":wrong");
	snprintf(wrong, sizeof(wrong), "GET /metrics HTTP/1.1\r\nHost: x\r\n%s\r\n", auth);
	/* plain HTTP with basic auth: the wrong passwords cost bcrypts there */
	snprintf(text, sizeof(text), "basic_auth_users:\n%s", users);
	plain = start_web_exporter(&plain_port, write_tmp("hostile-plain.yml", text));
	rename(tmp_path("exporter.err"), tmp_path("exporter-plain.err"));
	tls = start_web_exporter(&tls_port, web_config("hostile.yml", "", users));
	hostile_jobs(jobs, sizeof(jobs), plain_port, tls_port);
	prom = start_prometheus("prometheus-hostile", jobs, &prom_port);
	if (!CHECK(plain_port && tls_port && prom > 0) ||
	    !prometheus_up(prom_port, "prometheus-hostile", "netlat") ||
	    !prometheus_up(prom_port, "prometheus-hostile", "netlat-tls"))
		goto out;
	hostile_target(&t[0], plain_port, head, sizeof(head) - 1, wrong);
	hostile_target(&t[1], tls_port, hello, sizeof(hello) - 1, wrong);
	hostile = hostile_clients(t, 2, secs);
	wait_child(&r, hostile, (int)(secs + 10) * 1000);
	CHECK(!r.signalled && r.status == 0);
	sleep(2);	/* the last scrapes are in */
	hostile_counts_ok();
	hostile_job_ok(prom_port, "netlat", secs, HOSTILE_BOUND);
	hostile_job_ok(prom_port, "netlat-tls", secs, HOSTILE_BOUND);
	v = hostile_query(prom_port, "max_over_time(up{job=\"%s\"}[%us])", "no-password", secs);
	if (!CHECK(v == 0))
		fprintf(stderr, "    the job without the password: max up %g\n", v);
out:
	if (prom > 0)
		stop_prometheus(prom);
	stop_web_exporter(tls, NULL);
	stop_exporter(plain, NULL);
	setrlimit(RLIMIT_NOFILE, &old);
	print_stopped("plain", "exporter-plain.err");
	print_stopped("https", "exporter.err");
}
