// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of `netlat exporter` and `netlat stat --prometheus` on the fake
 * device (fake_dev.c, FAKE_NETLAT_HIST), checked by promtool and by a
 * real Prometheus server (Debian's prometheus package) that scrapes the
 * exporter; every address is 127.0.0.1. Included by test_netlat.c after
 * test_flight.c (fake_env, tools_path).
 */
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>

/* Longer than the exporter's request limit (8 KiB). */
#define REQ_MAX_TEST	9000
/* The exporter's connections at once (MAX_CLIENTS), each evictable after 100 ms */
#define EXPORTER_SLOTS	512

/*
 * What the fake device reports: xmit>ack (stage 4) and sendmsg>ack (5)
 * histograms, the counters. The expected figures below follow from it.
 */
#define FED_HIST "packets=10 bytes=14480 segs=12 untracked=1 flows_full=2 flows=3 merged=6 unsampled=5 " \
	"retrans_fail=1 r1=4 r2=5 h4.10=3 h4.20=5 h4.21=2 sum4=6000000 " \
	"h5.15=100 h5.16=50 h5.30=1 h5.63=2 sum5=123456789"

static const struct { unsigned int stage, bucket; uint64_t n; } fed[] = {
	{ 4, 10, 3 }, { 4, 20, 5 }, { 4, 21, 2 },
	{ 5, 15, 100 }, { 5, 16, 50 }, { 5, 30, 1 }, { 5, 63, 2 },
};

/*
 * A tool the test needs, from the Debian package @pkg: CI must have it
 * (lib.sh installs it), else skip.
 */
static bool need_program(const char *name, const char *pkg)
{
	const char *path = getenv("PATH");
	char dir[4096];
	const char *p, *end;
	bool ci = getenv("CI") && !strcmp(getenv("CI"), "true");

	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		snprintf(dir, sizeof(dir), "%.*s/%s", (int)(end - p), p, name);
		if (!access(dir, X_OK))
			return true;
	}
	if (ci) {
		fprintf(stderr, "    CI=true but %s (Debian package %s) is not installed\n", name, pkg);
		CHECK(!"a program CI must have");
	} else {
		skip_test("%s not installed (Debian package %s)", name, pkg);
	}
	return false;
}

/* A free TCP port on 127.0.0.1, or 0; @keep_fd: stay listening on it. */
static int local_port(int *keep_fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len) && (!keep_fd || !listen(fd, 1)))
		port = ntohs(sa.sin_port);
	if (keep_fd && port)
		*keep_fd = fd;
	else if (fd >= 0)
		close(fd);
	return port;
}

/* A connected socket to 127.0.0.1:@port with 10 s receive timeouts, or -1. */
static int connect_local(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read until the peer closes: a malloc'ed string ("" on error). */
static char *read_all(int fd)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		abort();
	while ((n = recv(fd, buf + len, cap - len - 1, 0)) > 0) {
		len += (size_t)n;
		if (cap - len - 1 == 0 && !(buf = realloc(buf, cap *= 2)))
			abort();
	}
	buf[len] = 0;
	return buf;
}

/* Send @req raw to 127.0.0.1:@port; the whole response (malloc'ed). */
static char *http_raw(int port, const char *req, size_t len)
{
	int fd = connect_local(port);
	char *resp;

	if (fd < 0)
		return strdup("");
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len)
		CHECK(!"send");
	resp = read_all(fd);
	close(fd);
	return resp;
}

/* GET @path (HTTP/1.0: the answer is never chunked) with @accept or none. */
static char *http_get(int port, const char *path, const char *accept)
{
	char req[2048];
	int n;

	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n%s%s%s\r\n",
		     path, port, accept ? "Accept: " : "", accept ? accept : "",
		     accept ? "\r\n" : "");
	return http_raw(port, req, (size_t)n);
}

/* The body of a response, or "". */
static const char *http_body(const char *resp)
{
	const char *p = strstr(resp, "\r\n\r\n");

	return p ? p + 4 : "";
}

/*
 * Start the exporter (its dynamic copy, on the fake) with @extra args;
 * *@port is where it listens (from its start line), 0 if it did not start.
 */
static pid_t start_exporter(int *port, const char *const *extra)
{
	const char *err_path = tmp_path("exporter.err");
	char *argv[16], *err;
	const char *p;
	int i, n = 0;
	pid_t pid;

	argv[n++] = netlat_bin;
	argv[n++] = "exporter";
	argv[n++] = "--device";
	argv[n++] = FAKE_DEV;
	while (extra && *extra && n < 15)
		argv[n++] = (char *)*extra++;
	argv[n] = NULL;
	unlink(err_path);
	pid = spawn_argv(argv, tmp_path("exporter.out"), err_path);
	*port = 0;
	for (i = 0; i < 500 && !*port; i++) {
		const char *end;

		usleep(10000);
		err = read_file(err_path, NULL);
		/* "serving http://ADDR:PORT/metrics from ..." (or https://) */
		p = strstr(err, "://");
		end = p ? strstr(p, "/metrics") : NULL;
		if (end) {
			while (end > p && end[-1] >= '0' && end[-1] <= '9')
				end--;
			*port = atoi(end);
		}
		free(err);
	}
	CHECK(*port > 0);
	return pid;
}

/* SIGTERM: it must stop cleanly (exit 0) and say how many scrapes it served. */
static void stop_exporter(pid_t pid, const char *scrapes)
{
	struct run r = { 0 };

	kill(pid, SIGTERM);
	wait_child(&r, pid, 5000);
	CHECK(!r.signalled);
	CHECK_U64(r.status, 0);
	r.err = read_file(tmp_path("exporter.err"), NULL);
	if (scrapes)
		CHECK_HAS(r.err, scrapes);
	run_free(&r);
}

/* The scrape of the fake in the text format, as checked below. */
static char *text_scrape;

static void test_exporter_fake(void)
{
	static const char *const text_lines[] = {
		"# TYPE netlat_tcp_stage_seconds histogram\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"xmit_ack\",le=\"5.12e-07\"} 0\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"xmit_ack\",le=\"1.024e-06\"} 3\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"xmit_ack\",le=\"0.000524288\"} 3\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"xmit_ack\",le=\"0.001048576\"} 8\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"xmit_ack\",le=\"0.002097152\"} 10\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"xmit_ack\",le=\"+Inf\"} 10\n",
		"netlat_tcp_stage_seconds_sum{stage=\"xmit_ack\"} 0.006\n",
		"netlat_tcp_stage_seconds_count{stage=\"xmit_ack\"} 10\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"sendmsg_ack\",le=\"4611686018.427388\"} 151\n",
		"netlat_tcp_stage_seconds_bucket{stage=\"sendmsg_ack\",le=\"+Inf\"} 153\n",
		"netlat_tcp_stage_seconds_sum{stage=\"sendmsg_ack\"} 0.123456789\n",
		"netlat_tcp_stage_seconds_count{stage=\"sendmsg_xmit\"} 0\n",
		"# TYPE netlat_tcp_packets_total counter\nnetlat_tcp_packets_total 10\n",
		"netlat_tcp_bytes_total 14480\n",
		"netlat_tcp_segments_total 12\n",
		"netlat_tcp_untracked_packets_total 1\n",
		"netlat_tcp_merged_packets_total 6\n",
		"netlat_tcp_unsampled_packets_total 5\n",
		"netlat_tcp_sockets_no_slot_total 2\n",
		"# TYPE netlat_tcp_sockets gauge\nnetlat_tcp_sockets 3\n",
		"netlat_tcp_retransmitted_segments_total{kind=\"rto\"} 4\n",
		"netlat_tcp_retransmitted_segments_total{kind=\"fast\"} 5\n",
		"netlat_tcp_retransmitted_segments_total{kind=\"synack\"} 0\n",
		"netlat_tcp_retransmit_failures_total 1\n",
		"netlat_ring_records_filtered_total{cpu=\"0\"} 7\n",
		"netlat_kprobe_missed_total 3\n",
		"netlat_probe_group_missed_total{group=\"ack\"} 2\n",
		"netlat_probe_group_missed_total{group=\"xmit\"} 1\n",
		"netlat_probe_group_missed_total{group=\"sendmsg\"} 0\n",
		"netlat_probe_group_enabled{group=\"xmit\"} 1\n",
		"netlat_probe_group_enabled{group=\"sendmsg\"} 0\n",
		"netlat_probe_group_partial{group=\"dev\"} 1\n",
		"netlat_probe_group_deferred{group=\"virtio_rx\"} 1\n",
		"netlat_level 1\n",
		"netlat_ring_size_bytes 4096\n",
		"netlat_memory_bytes{area=\"packet_table\"} 819200\n",
	};
	static const char *const timeout[] = { "--timeout", "0.5", "--listen", "127.0.0.1:0", NULL };
	/* the send stages: those of the sent packets' record, wherever listed */
#define TCP_STAGE(NAME, name, rec, from, to)	+ !strcmp(#rec, "tcp_pkt")
	const size_t tcp = 0 NETLAT_STAGES(TCP_STAGE);
#undef TCP_STAGE
	char big[REQ_MAX_TEST], *resp;
	int port, idle[EXPORTER_SLOTS];
	uint64_t t0;
	size_t i;
	pid_t pid;

	fake_env("0", "0");
	setenv("FAKE_NETLAT_HIST", FED_HIST, 1);
	pid = start_exporter(&port, timeout);

	free(text_scrape);
	text_scrape = http_get(port, "/metrics", NULL);
	CHECK_HAS(text_scrape, "HTTP/1.1 200 OK\r\n");
	CHECK_HAS(text_scrape, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n");
	for (i = 0; i < sizeof(text_lines) / sizeof(text_lines[0]); i++)
		CHECK_HAS(text_scrape, text_lines[i]);
	CHECK(!strstr(text_scrape, "# EOF") && !strstr(text_scrape, "# UNIT"));
	/* 64 buckets (63 bounds and +Inf), sum and count for each stage */
	for (i = 0, resp = text_scrape; (resp = strstr(resp, "netlat_tcp_stage_seconds_")); resp++)
		i++;
	CHECK_U64(i, tcp * 66);
	/* and the receive stages */
	for (i = 0, resp = text_scrape; (resp = strstr(resp, "netlat_rx_stage_seconds_")); resp++)
		i++;
	CHECK_U64(i, (NETLAT_NR_STAGES - tcp) * 66);

	/* Prometheus's own Accept header: OpenMetrics */
	resp = http_get(port, "/metrics?x=1", "application/openmetrics-text;version=1.0.0,"
			"application/openmetrics-text;version=0.0.1;q=0.75,"
			"text/plain;version=0.0.4;q=0.5,*/*;q=0.1");
	CHECK_HAS(resp, "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n");
	CHECK_HAS(resp, "# TYPE netlat_tcp_stage_seconds histogram\n# UNIT netlat_tcp_stage_seconds seconds\n");
	CHECK_HAS(resp, "# TYPE netlat_tcp_packets counter\nnetlat_tcp_packets_total 10\n");
	CHECK_HAS(resp, "# UNIT netlat_tcp_bytes bytes\nnetlat_tcp_bytes_total 14480\n");
	CHECK(strlen(resp) > 6 && !strcmp(resp + strlen(resp) - 6, "# EOF\n"));
	free(resp);
	resp = http_get(port, "/metrics", "text/plain;q=0.9, application/openmetrics-text;q=0.1");
	CHECK_HAS(resp, "version=0.0.4");
	free(resp);

	resp = http_get(port, "/", NULL);
	CHECK_HAS(resp, "HTTP/1.1 404 Not Found\r\n");
	free(resp);
	resp = http_raw(port, "POST /metrics HTTP/1.1\r\n\r\n", 26);
	CHECK_HAS(resp, "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\n");
	CHECK_HAS(resp, "Allow: GET, HEAD\r\n");
	free(resp);
	resp = http_raw(port, "HEAD /metrics HTTP/1.1\r\n\r\n", 26);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	CHECK(!http_body(resp)[0]);
	free(resp);
	resp = http_raw(port, "hello\r\n\r\n", 9);
	CHECK_HAS(resp, "HTTP/1.1 400 Bad Request\r\n");
	free(resp);
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	resp = http_raw(port, big, sizeof(big));
	CHECK_HAS(resp, "HTTP/1.1 431 Request Header Fields Too Large\r\n");
	free(resp);

	/*
	 * Every slot held by a silent client: a scrape takes the oldest's
	 * slot at once, well within the timeout the others still hold.
	 */
	for (i = 0; i < EXPORTER_SLOTS; i++)
		idle[i] = connect_local(port);
	usleep(100000);		/* the exporter polled them */
	t0 = monotonic_now_ns();
	resp = http_get(port, "/metrics", NULL);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	CHECK(monotonic_now_ns() - t0 < 250000000ull);
	free(resp);
	for (i = 0; i < EXPORTER_SLOTS; i++) {
		char c;

		/* closed by the server within the timeout: EOF, not our 10 s */
		CHECK(idle[i] >= 0 && recv(idle[i], &c, 1, 0) == 0);
		close(idle[i]);
	}
	/* one idle client at least gave its slot up (draining ones may hold others) */
	stop_exporter(pid, "exporter stopped: 5 scrapes, ");
	unsetenv("FAKE_NETLAT_HIST");
	free(fake_done());
}

/* The module goes away (opens 2 and 3 fail) and comes back. */
static void test_exporter_device_gone(void)
{
	static const char *const listen[] = { "--listen", "127.0.0.1:0", NULL };
	const char *file = tmp_path("gone.prom");
	char *argv[] = { NULL, "stat", "--prometheus", (char *)file, "--interval", "0.05",
			 "--duration", "0.5", "--device", FAKE_DEV, NULL };
	char *resp, *err;
	struct run r;
	int port, i;
	pid_t pid;

	fake_env("0", "0");
	setenv("FAKE_NETLAT_FAIL_OPENS", "2,3", 1);
	pid = start_exporter(&port, listen);
	for (i = 0; i < 2; i++) {
		resp = http_get(port, "/metrics", NULL);
		CHECK_HAS(resp, "HTTP/1.1 503 Service Unavailable\r\n");
		CHECK_HAS(http_body(resp), "no /dev/netlat-fake: is the netlat module loaded?\n");
		free(resp);
	}
	resp = http_get(port, "/metrics", NULL);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	free(resp);
	stop_exporter(pid, "exporter stopped: 1 scrapes");
	err = read_file(tmp_path("exporter.err"), NULL);
	/* the start line, the failure once, the recovery, the stop line */
	CHECK_U64(count_lines(err), 4);
	CHECK_HAS(err, "netlat: scrape failed: no /dev/netlat-fake: is the netlat module loaded?\n"
		  "netlat: scrapes work again\n");
	free(err);

	/* the textfile: removed while the device is gone, then back */
	argv[0] = netlat_bin;
	pid = spawn_argv(argv, tmp_path("gone.out"), tmp_path("gone.err"));
	wait_child(&r, pid, 5000);
	CHECK_U64(r.status, 0);
	err = read_file(tmp_path("gone.err"), NULL);
	CHECK(!strcmp(err, "netlat: no /dev/netlat-fake: is the netlat module loaded?\n"));
	CHECK(access(file, F_OK) == 0);
	free(err);
	unsetenv("FAKE_NETLAT_FAIL_OPENS");
	free(fake_done());
}

/* The exporter listening at @spec says @url, serves, and stops. */
static void listen_at(const char *spec, const char *url)
{
	const char *args[] = { "--listen", spec, NULL };
	char *resp, *err;
	int port;
	pid_t pid;

	fake_env("0", "0");
	pid = start_exporter(&port, args);
	err = read_file(tmp_path("exporter.err"), NULL);
	CHECK_HAS(err, url);
	free(err);
	if (strstr(url, "127.0.0.1")) {
		resp = http_get(port, "/metrics", NULL);
		CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
		free(resp);
	}
	stop_exporter(pid, NULL);
	free(fake_done());
}

#define NOT_A_DEVICE "(a regular file)"

static void test_exporter_errors(void)
{
	static const struct {
		const char *args[6];
		int status;
		const char *err;
	} cases[] = {
		{ { "--listen", "127.0.0.1" }, 2, "bad listen address '127.0.0.1'" },
		{ { "--listen", "::1:80" }, 2, "bad listen address" },
		{ { "--listen", ":99999" }, 2, "bad listen address" },
		{ { "--listen", "example.com:80" }, 2, "bad listen address" },
		{ { "--listen", "[::1:80" }, 2, "bad listen address" },
		{ { "--timeout", "0" }, 2, "bad timeout" },
		{ { "extra" }, 2, "too many arguments" },
		{ { "--device", "/nonexistent/netlat", "--listen", "127.0.0.1:0" }, 1,
		  "netlat: no /nonexistent/netlat: is the netlat module loaded?\n" },
		{ { "--device", "/dev/null", "--listen", "127.0.0.1:0" }, 1,
		  "netlat: /dev/null: HIST: " },
		{ { "--device", NOT_A_DEVICE, "--listen", "127.0.0.1:0" }, 1,
		  ": HIST: not a netlat device\n" },
	};
	char occupied[32];
	const char *args[8];
	int lfd = -1, port;
	struct run r;
	size_t i, j;

	fclose(fopen(tmp_path("not-a-device"), "w"));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_env("0", "0");
		args[0] = "exporter";
		for (j = 0; cases[i].args[j]; j++)
			args[j + 1] = strcmp(cases[i].args[j], NOT_A_DEVICE) ? cases[i].args[j] :
				      tmp_path("not-a-device");
		args[j + 1] = NULL;
		netlat_args(&r, args);
		free(fake_done());
		if (!CHECK_U64(r.status, cases[i].status) || !CHECK_HAS(r.err, cases[i].err))
			fprintf(stderr, "    (exporter %s %s)\n", args[1], args[2]);
		if (cases[i].status == 1)
			CHECK_U64(count_lines(r.err), 1);
		run_free(&r);
	}

	/* An occupied port: one line, exit 1. */
	port = local_port(&lfd);
	snprintf(occupied, sizeof(occupied), "127.0.0.1:%d", port);
	fake_env("0", "0");
	netlat(&r, "exporter", "--device", FAKE_DEV, "--listen", occupied, NULL);
	free(fake_done());
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "cannot listen on 127.0.0.1:");
	CHECK_HAS(r.err, ": Address already in use\n");
	CHECK_U64(count_lines(r.err), 1);
	run_free(&r);
	close(lfd);

	/* localhost and IPv6 loopback (where this host has IPv6) */
	listen_at("localhost:0", "http://127.0.0.1:");
	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd >= 0) {
		struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };

		if (!bind(lfd, (struct sockaddr *)&sa6, sizeof(sa6))) {
			close(lfd);
			listen_at("[::1]:0", "http://[::1]:");
		} else {
			close(lfd);
		}
	}

	/* A module without NETLAT_IOC_HIST. */
	fake_env("0", "0");
	setenv("FAKE_NETLAT_NO_HIST", "1", 1);
	netlat(&r, "exporter", "--device", FAKE_DEV, "--listen", "127.0.0.1:0", NULL);
	CHECK_U64(r.status, 1);
	CHECK(!strcmp(r.err, "netlat: /dev/netlat-fake: HIST: this netlat.ko has no packet "
		      "level (NETLAT_IOC_HIST)\n"));
	run_free(&r);
	netlat(&r, "stat", "--prometheus", tmp_path("nohist.prom"), "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 1);
	CHECK_U64(count_lines(r.err), 1);
	CHECK_HAS(r.err, "no packet level");
	CHECK(access(tmp_path("nohist.prom"), F_OK) && access(tmp_path("nohist.prom.tmp"), F_OK));
	run_free(&r);
	unsetenv("FAKE_NETLAT_NO_HIST");
	free(fake_done());
}

/* promtool check metrics < @path: true if it found nothing to say. */
static bool promtool_ok(const char *path)
{
	char cmd[8192];
	char *out;
	int st;

	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' > '%s' 2>&1", path,
		 tmp_path("promtool.out"));
	st = system(cmd);
	out = read_file(tmp_path("promtool.out"), NULL);
	if (st || out[0])
		fprintf(stderr, "    promtool on %s: status %d: %s", path, st, out);
	free(out);
	return !st;
}

static void test_textfile(void)
{
	const char *file = tmp_path("netlat.prom"), *tmp = tmp_path("netlat.prom.tmp");
	char *argv[] = { NULL, "stat", "--prometheus", (char *)file, "--interval", "0.01",
			 "--duration", "3", "--device", FAKE_DEV, NULL };
	char *expect, *got;
	ino_t inodes[2] = { 0, 0 };
	struct stat st;
	int reads = 0, bad = 0, i;
	struct run r;
	pid_t pid;

	fake_env("0", "0");
	setenv("FAKE_NETLAT_HIST", FED_HIST, 1);
	netlat(&r, "stat", "--prometheus", file, "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 0);
	CHECK(!r.out[0] && !r.err[0]);
	run_free(&r);
	CHECK(access(tmp, F_OK) != 0);
	CHECK(!stat(file, &st) && (st.st_mode & 0777) == 0644);
	/* the textfile is the exporter's text scrape, byte for byte */
	expect = read_file(file, NULL);
	if (text_scrape)
		CHECK(!strcmp(expect, http_body(text_scrape)));

	/* rewritten every 10 ms: a reader sees a whole file each time */
	argv[0] = netlat_bin;
	pid = spawn_argv(argv, tmp_path("textfile.out"), tmp_path("textfile.err"));
	for (i = 0; i < 400; i++) {
		if (!stat(file, &st)) {
			if (!inodes[0])
				inodes[0] = st.st_ino;
			else if (st.st_ino != inodes[0])
				inodes[1] = st.st_ino;
		}
		got = read_file(file, NULL);
		reads++;
		bad += strcmp(got, expect) != 0;
		free(got);
		usleep(2000);
	}
	kill(pid, SIGTERM);
	wait_child(&r, pid, 5000);
	CHECK(!r.signalled);
	CHECK_U64(r.status, 0);
	CHECK_U64(bad, 0);
	CHECK(inodes[1] != 0);	/* it was replaced while we read */
	CHECK(reads == 400);
	CHECK(access(tmp, F_OK) != 0);

	netlat(&r, "stat", "--prometheus", file, "--json", "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 2);
	run_free(&r);
	netlat(&r, "stat", "--prometheus", tmp_path("no/such/dir.prom"), "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 1);
	CHECK_HAS(r.err, "cannot create ");
	CHECK_U64(count_lines(r.err), 1);
	run_free(&r);
	unsetenv("FAKE_NETLAT_HIST");
	free(fake_done());
	free(expect);
}

/*
 * Every counter the uapi lists (NETLAT_HIST_COUNTERS()) reaches every
 * output with its own value: the exporter's metric and stat --hist's JSON.
 */
static void test_every_counter_everywhere(void)
{
	static const struct { const char *field, *metric; } counters[] = {
#define COUNTER_NAMES(field, NAME, metric, unit, help) { #field, #metric },
		NETLAT_HIST_COUNTERS(COUNTER_NAMES)
#undef COUNTER_NAMES
	};
	const char *file = tmp_path("every.prom");
	char spec[4096], want[160], *text;
	size_t i, len = 0;
	struct run r;

	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s=%zu ",
					counters[i].field, 1000 + i);
	snprintf(spec + len, sizeof(spec) - len, "flows=77 rx_flows=78");
	fake_env("0", "0");
	setenv("FAKE_NETLAT_HIST", spec, 1);
	netlat(&r, "stat", "--prometheus", file, "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 0);
	run_free(&r);
	text = read_file(file, NULL);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		snprintf(want, sizeof(want), "\nnetlat_%s_total %zu\n",
			 counters[i].metric, 1000 + i);
		CHECK_HAS(text, want);
	}
	CHECK_HAS(text, "\nnetlat_tcp_sockets 77\n");
	CHECK_HAS(text, "\nnetlat_rx_sockets 78\n");
	free(text);
	netlat(&r, "stat", "--hist", "--json", "--device", FAKE_DEV, NULL);
	CHECK_U64(r.status, 0);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		snprintf(want, sizeof(want), "\"%s\":%zu,", counters[i].field, 1000 + i);
		CHECK_HAS(r.out, want);
	}
	CHECK_HAS(r.out, "\"flows\":77,\"rx_flows\":78,");
	run_free(&r);
	unsetenv("FAKE_NETLAT_HIST");
	free(fake_done());
}

static void test_promtool(void)
{
	const char *scrape = tmp_path("scrape.prom");
	FILE *f;

	if (!need_program("promtool", "prometheus"))
		return;
	if (!CHECK(text_scrape && (f = fopen(scrape, "w"))))
		return;
	fputs(http_body(text_scrape), f);
	fclose(f);
	CHECK(promtool_ok(scrape));
	CHECK(promtool_ok(tmp_path("netlat.prom")));
}

/* ---- a real Prometheus ---------------------------------------------------- */

static void url_encode(char *out, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s && n + 4 < len; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-_.~", *s))
			out[n++] = *s;
		else
			n += (size_t)snprintf(out + n, len - n, "%%%02X", (unsigned char)*s);
	}
	out[n] = 0;
}

/* The value of an instant query with one result, NAN if none (yet). */
static double prom_query(int port, const char *query)
{
	char path[2048], enc[1800];
	char *resp;
	const char *p;
	double v = NAN;

	url_encode(enc, sizeof(enc), query);
	snprintf(path, sizeof(path), "/api/v1/query?query=%s", enc);
	resp = http_get(port, path, NULL);
	p = strstr(resp, "\"value\":[");
	if (p && (p = strstr(p, ",\"")))
		v = strtod(p + 2, NULL);
	free(resp);
	return v;
}

/*
 * histogram_quantile() as Prometheus computes it from cumulative buckets
 * (promql/quantile.go): linear inside the bucket that holds rank q * count,
 * the highest finite bound if that is +Inf. From what the fake was fed.
 */
static double expected_quantile(unsigned int stage, double q)
{
	double cum[NETLAT_HIST_BUCKETS] = { 0 }, rank, start, count;
	unsigned int b;
	size_t i;

	for (i = 0; i < sizeof(fed) / sizeof(fed[0]); i++)
		if (fed[i].stage == stage)
			for (b = fed[i].bucket; b < NETLAT_HIST_BUCKETS; b++)
				cum[b] += (double)fed[i].n;
	/* cum[b] is le=2^b ns for b < 63, cum[63] is +Inf */
	rank = q * cum[NETLAT_HIST_BUCKETS - 1];
	for (b = 0; b < NETLAT_HIST_BUCKETS - 1 && cum[b] < rank; b++)
		;
	if (b == NETLAT_HIST_BUCKETS - 1)
		return (double)(1ULL << 62) / 1e9;
	start = b ? (double)(1ULL << (b - 1)) / 1e9 : 0;
	count = cum[b] - (b ? cum[b - 1] : 0);
	rank -= b ? cum[b - 1] : 0;
	return start + ((double)(1ULL << b) / 1e9 - start) * rank / count;
}

static bool close_to(double a, double b)
{
	bool ok = fabs(a - b) <= 1e-9 * fabs(b);

	if (!ok)
		fprintf(stderr, "    got %.17g, expected %.17g\n", a, b);
	return ok;
}

/* Replace every @from in @s (of @len bytes room) by @to. */
static void replace_all(char *s, size_t len, const char *from, const char *to)
{
	char *p;

	while ((p = strstr(s, from)) && strlen(s) - strlen(from) + strlen(to) < len) {
		memmove(p + strlen(to), p + strlen(from), strlen(p + strlen(from)) + 1);
		memcpy(p, to, strlen(to));
	}
}

/*
 * Every query of the example dashboard (Documentation/grafana-netlat.json)
 * is valid PromQL for this Prometheus, with Grafana's variables set.
 */
static void dashboard_queries(int port)
{
	char *json = read_file(tools_path("../Documentation/grafana-netlat.json"), NULL);
	char expr[1024], path[4096], enc[3000], *resp;
	const char *p = json;
	int n = 0;
	size_t i;

	while ((p = strstr(p, "\"expr\": \""))) {
		for (p += 9, i = 0; *p && *p != '"' && i < sizeof(expr) - 1; p++)
			expr[i++] = *p == '\\' ? *++p : *p;	/* \" and \\ only */
		expr[i] = 0;
		replace_all(expr, sizeof(expr), "$__rate_interval", "1m");
		replace_all(expr, sizeof(expr), "$instance", ".*");
		url_encode(enc, sizeof(enc), expr);
		snprintf(path, sizeof(path), "/api/v1/query?query=%s", enc);
		resp = http_get(port, path, NULL);
		if (!CHECK_HAS(resp, "\"status\":\"success\""))
			fprintf(stderr, "    (dashboard query %s)\n", expr);
		free(resp);
		n++;
	}
	CHECK(n >= 8);
	free(json);
}

/*
 * Prometheus on a free port of 127.0.0.1, its files in the temporary
 * directory @name, scraping every second as the job "netlat" (and "@jobs"
 * says the rest: the jobs' lines after "static_configs:", and more jobs);
 * its pid and *@port, or -1.
 */
static pid_t start_prometheus(const char *name, const char *jobs, int *port)
{
	char flag_cfg[4200], flag_data[4200], flag_listen[64], path[200];
	char *argv[] = { "prometheus", flag_cfg, flag_data, flag_listen,
			 "--log.level=warn", NULL };
	const char *dir = tmp_path(name), *log;
	pid_t pid;
	FILE *f;

	*port = local_port(NULL);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/prometheus.yml", name);
	f = fopen(tmp_path(path), "w");
	if (!CHECK(f && *port))
		return -1;
	/* a short interval so that the test waits little */
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		"scrape_configs:\n  - job_name: netlat\n    static_configs:\n%s", jobs);
	fclose(f);
	snprintf(flag_cfg, sizeof(flag_cfg), "--config.file=%s", tmp_path(path));
	snprintf(flag_data, sizeof(flag_data), "--storage.tsdb.path=%s/data", dir);
	/* its own port on 127.0.0.1: never the packaged service's :9090 */
	snprintf(flag_listen, sizeof(flag_listen), "--web.listen-address=127.0.0.1:%d", *port);
	snprintf(path, sizeof(path), "%s/log", name);
	log = tmp_path(path);
	unsetenv("LD_PRELOAD");	/* the fake is for the exporter only */
	argv[0] = "/usr/bin/prometheus";
	if (access(argv[0], X_OK))
		argv[0] = "prometheus";
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGTERM);	/* never outlives the test */
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	CHECK(pid > 0);
	return pid;
}

/* Wait until Prometheus (in @name) has scraped @job once: else its log. */
static bool prometheus_up(int port, const char *name, const char *job)
{
	char query[128], path[200], *log;
	double v = NAN;
	int i;

	snprintf(query, sizeof(query), "up{job=\"%s\"} == 1", job);
	/* the first scrape lands a few seconds after start */
	for (i = 0; i < 300 && isnan(v); i++) {
		usleep(100000);
		v = prom_query(port, query);
	}
	if (CHECK(v == 1))
		return true;
	snprintf(path, sizeof(path), "%s/log", name);
	log = read_file(tmp_path(path), NULL);
	fprintf(stderr, "    prometheus log: %s\n", log);
	free(log);
	return false;
}

static void stop_prometheus(pid_t pid)
{
	struct run r = { 0 };

	kill(pid, SIGTERM);
	wait_child(&r, pid, 20000);
	CHECK(!r.signalled);
}

static void test_prometheus_scrapes(void)
{
	static const char *const listen[] = { "--listen", "127.0.0.1:0", NULL };
	static const struct { const char *query; double want; } counts[] = {
		{ "netlat_tcp_stage_seconds_count{stage=\"xmit_ack\"}", 10 },
		{ "netlat_tcp_stage_seconds_count{stage=\"sendmsg_ack\"}", 153 },
		{ "netlat_tcp_stage_seconds_sum{stage=\"xmit_ack\"}", 0.006 },
		{ "netlat_tcp_retransmitted_segments_total{kind=\"rto\"}", 4 },
		{ "sum(netlat_tcp_retransmitted_segments_total)", 9 },
		{ "netlat_tcp_packets_total", 10 },
		{ "netlat_probe_group_enabled{group=\"ack\"}", 1 },
	};
	static const struct { unsigned int stage; const char *label; double q; } quantiles[] = {
		{ 4, "xmit_ack", 0.5 }, { 4, "xmit_ack", 0.9 }, { 4, "xmit_ack", 0.99 },
		{ 5, "sendmsg_ack", 0.5 }, { 5, "sendmsg_ack", 0.99 },
	};
	char query[256], job[64], *resp;
	int exp_port, prom_port;
	pid_t exp_pid, prom_pid;
	double v;
	size_t k;

	if (!need_program("prometheus", "prometheus"))
		return;
	fake_env("0", "0");
	setenv("FAKE_NETLAT_HIST", FED_HIST, 1);
	exp_pid = start_exporter(&exp_port, listen);
	snprintf(job, sizeof(job), "      - targets: ['127.0.0.1:%d']\n", exp_port);
	prom_pid = start_prometheus("prometheus", job, &prom_port);
	if (!CHECK(exp_port && prom_pid > 0))
		goto out;
	prometheus_up(prom_port, "prometheus", "netlat");
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		v = prom_query(prom_port, counts[k].query);
		if (!close_to(v, counts[k].want)) {
			fprintf(stderr, "    (query %s)\n", counts[k].query);
			CHECK(!"the query's value");
		}
	}
	for (k = 0; k < sizeof(quantiles) / sizeof(quantiles[0]); k++) {
		snprintf(query, sizeof(query),
			 "histogram_quantile(%g, netlat_tcp_stage_seconds_bucket{stage=\"%s\"})",
			 quantiles[k].q, quantiles[k].label);
		v = prom_query(prom_port, query);
		if (!close_to(v, expected_quantile(quantiles[k].stage, quantiles[k].q))) {
			fprintf(stderr, "    (query %s)\n", query);
			CHECK(!"histogram_quantile() from the fed buckets");
		}
	}
	dashboard_queries(prom_port);
	/* it scraped OpenMetrics: the units came through */
	resp = http_get(prom_port, "/api/v1/metadata?metric=netlat_tcp_bytes", NULL);
	CHECK_HAS(resp, "\"type\":\"counter\"");
	CHECK_HAS(resp, "\"unit\":\"bytes\"");
	free(resp);
	stop_prometheus(prom_pid);
out:
	stop_exporter(exp_pid, NULL);
	unsetenv("FAKE_NETLAT_HIST");
	free(fake_done());
}
