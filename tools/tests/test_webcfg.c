// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of `netlat exporter --web.config.file`: HTTPS and basic auth, with
 * a CA and a server certificate the openssl command makes in the
 * temporary directory for each run (no key is in the tree), bcrypt hashes
 * from libxcrypt, a TLS client of our own (OpenSSL) and a real Prometheus.
 * Included by test_netlat.c after test_exporter.c (start_exporter,
 * start_prometheus, need_program).
 */
#include <crypt.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define WEB_USER	"prometheus"
#define WEB_PASS	"s3cret:with colon"	/* the first ':' splits user and password */

/* bcrypt of @pass with the prefix @prefix ("$2b$") and @cost. */
static const char *bcrypt_hash_cost(const char *prefix, unsigned long cost, const char *pass)
{
	static char hash[CRYPT_OUTPUT_SIZE];
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data cd;

	memset(&cd, 0, sizeof(cd));
	if (!crypt_gensalt_rn(prefix, cost, NULL, 0, salt, sizeof(salt)) ||
	    !crypt_rn(pass, salt, &cd, sizeof(cd)))
		return "(no bcrypt)";
	snprintf(hash, sizeof(hash), "%s", cd.output);
	return hash;
}

/* Cost 5: fast tests. */
static const char *bcrypt_hash(const char *prefix, const char *pass)
{
	return bcrypt_hash_cost(prefix, 5, pass);
}

/*
 * tls/ca.crt, tls/server.crt (for IP 127.0.0.1) and tls/server.key, and a
 * client certificate tls/client.{crt,key} from the same CA, made once.
 */
static bool make_certs(void)
{
	static int made;	/* 0 not yet, 1 made, -1 failed */
	const char *dir = tmp_path("tls");
	char cmd[8192];

	if (made)
		return made > 0;
	if (!need_program("openssl", "openssl"))
		return false;
	mkdir(dir, 0700);
	/* EC keys: made in milliseconds; extensions Go's verifier insists on */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && exec >log 2>&1 && "
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout ca.key -out ca.crt -days 2 -subj /CN=netlat-test-ca "
		 "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign && "
		 "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' >server.ext && "
		 "printf 'extendedKeyUsage=clientAuth\\n' >client.ext && "
		 "for n in server client; do "
		 "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout $n.key -out $n.csr -subj /CN=$n && "
		 "openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -set_serial 0x$(openssl rand -hex 8) -days 2 "
		 "-extfile $n.ext -out $n.crt || exit 1; done", dir);
	made = system(cmd) == 0 ? 1 : -1;
	if (made < 0) {
		char *log = read_file(tmp_path("tls/log"), NULL);

		fprintf(stderr, "    openssl: %s\n", log);
		free(log);
	}
	return CHECK(made > 0);
}

/* Write @text to the temporary file @name; its path. */
static const char *write_tmp(const char *name, const char *text)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		CHECK(!"write a temporary file");
	return path;
}

/* A web config in tls/: TLS with @tls_extra lines, users @users (YAML lines). */
static const char *web_config(const char *name, const char *tls_extra, const char *users)
{
	char text[8192], path[64];

	snprintf(text, sizeof(text), "# written by the tools' tests\n"
		 "tls_server_config:\n  cert_file: server.crt   # next to this file\n"
		 "  key_file: \"%s\"\n%s" "basic_auth_users:\n%s",
		 tmp_path("tls/server.key"), tls_extra, users);
	snprintf(path, sizeof(path), "tls/%s", name);
	return write_tmp(path, text);
}

/*
 * GET /metrics from 127.0.0.1:@port over TLS, the server checked against
 * tls/ca.crt, with basic auth @userpass ("user:password", NULL: none) and
 * the client certificate tls/client.crt if @client_cert. The response,
 * "" when TLS failed.
 */
static char *https_get(int port, const char *userpass, bool client_cert)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	char req[1024], b64[512] = "", buf[16384];
	SSL *ssl = NULL;
	size_t len = 0, cap = 65536;
	char *resp = calloc(1, cap);
	int fd = connect_local(port), n;

	if (!ctx || !resp || fd < 0)
		goto out;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_load_verify_locations(ctx, tmp_path("tls/ca.crt"), NULL) != 1 ||
	    (client_cert &&
	     (SSL_CTX_use_certificate_file(ctx, tmp_path("tls/client.crt"), SSL_FILETYPE_PEM) != 1 ||
	      SSL_CTX_use_PrivateKey_file(ctx, tmp_path("tls/client.key"), SSL_FILETYPE_PEM) != 1)))
		goto out;
	ssl = SSL_new(ctx);
	if (!ssl || !SSL_set_fd(ssl, fd) ||
	    !X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1") ||
	    SSL_connect(ssl) != 1)
		goto out;
	if (userpass)
		EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)userpass,
				(int)strlen(userpass));
	n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%s\r\n",
		     userpass ? "Authorization: Basic " : "", b64, userpass ? "\r\n" : "");
	if (SSL_write(ssl, req, n) != n)
		goto out;
	while ((n = SSL_read(ssl, buf, sizeof(buf))) > 0) {
		if (len + (size_t)n >= cap && !(resp = realloc(resp, cap = 2 * cap + (size_t)n)))
			abort();
		memcpy(resp + len, buf, (size_t)n);
		len += (size_t)n;
		resp[len] = 0;
	}
out:
	ERR_clear_error();
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	if (fd >= 0)
		close(fd);
	return resp ? resp : strdup("");
}

/* The exporter on the fake with --web.config.file @cfg at 127.0.0.1:0. */
static pid_t start_web_exporter(int *port, const char *cfg)
{
	const char *args[] = { "--listen", "127.0.0.1:0", "--web.config.file", cfg, NULL };
	pid_t pid;

	fake_env("0", "0");
	setenv("FAKE_NETLAT_HIST", FED_HIST, 1);
	pid = start_exporter(port, args);
	return pid;
}

static void stop_web_exporter(pid_t pid, const char *scrapes)
{
	stop_exporter(pid, scrapes);
	unsetenv("FAKE_NETLAT_HIST");
	free(fake_done());
}

#define UNAUTHORIZED "HTTP/1.1 401 Unauthorized\r\n"
#define BASIC_REALM "WWW-Authenticate: Basic realm=\"netlat\"\r\n"

/* Right, wrong and missing credentials over TLS; each bcrypt prefix. */
static void test_web_basic_auth(void)
{
	static const char *const prefixes[] = { "$2a$", "$2b$", "$2y$" };
	char users[1024], *resp, *err;
	const char *cfg;
	int port, i;
	pid_t pid;

	if (!make_certs())
		return;
	snprintf(users, sizeof(users), "  %s: %s\n", WEB_USER, bcrypt_hash("$2y$", WEB_PASS));
	for (i = 0; i < 3; i++)
		snprintf(users + strlen(users), sizeof(users) - strlen(users), "  'user %d': %s\n",
			 i, bcrypt_hash(prefixes[i], "pw"));
	cfg = web_config("auth.yml", "", users);
	pid = start_web_exporter(&port, cfg);
	err = read_file(tmp_path("exporter.err"), NULL);
	CHECK_HAS(err, "netlat: serving https://127.0.0.1:");
	CHECK_HAS(err, "/metrics from /dev/netlat-fake (basic auth)\n");
	free(err);

	resp = https_get(port, WEB_USER ":" WEB_PASS, false);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	CHECK_HAS(resp, "\nnetlat_tcp_packets_total 10\n");
	free(resp);
	/* again: the remembered digest, the same answer */
	resp = https_get(port, WEB_USER ":" WEB_PASS, false);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	free(resp);
	for (i = 0; i < 3; i++) {
		char up[32];

		snprintf(up, sizeof(up), "user %d:pw", i);
		resp = https_get(port, up, false);
		if (!CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n"))
			fprintf(stderr, "    (bcrypt %s)\n", prefixes[i]);
		free(resp);
	}

	/* the wrong password, an unknown user, none, a prefix, another scheme */
	{
		static const char *const bad[] = {
			WEB_USER ":wrong", WEB_USER ":" WEB_PASS "x", "nobody:" WEB_PASS,
			WEB_USER ":s3cret", WEB_USER, "user 0:pw\n", NULL,
		};

		for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
			resp = https_get(port, bad[i], false);
			if (!CHECK_HAS(resp, UNAUTHORIZED) || !CHECK_HAS(resp, BASIC_REALM))
				fprintf(stderr, "    (credentials %s)\n", bad[i] ? bad[i] : "none");
			CHECK(!strstr(resp, "netlat_"));
			free(resp);
		}
	}
	stop_web_exporter(pid, "exporter stopped: 5 scrapes, ");
}

/*
 * Plain HTTP to the TLS port gets a plain 400 saying so, and slow or
 * stalled handshakes holding every slot keep no scrape out.
 */
static void test_web_plain_to_tls_port(void)
{
	static const char hello[] = "\x16\x03\x01\x02\x00\x01";	/* a ClientHello's start */
	char users[256], *resp;
	int port, stalled[EXPORTER_SLOTS];
	uint64_t t0;
	pid_t pid;
	size_t i;

	if (!make_certs())
		return;
	snprintf(users, sizeof(users), "  %s: %s\n", WEB_USER, bcrypt_hash("$2b$", WEB_PASS));
	pid = start_web_exporter(&port, web_config("plain.yml", "", users));
	resp = http_get(port, "/metrics", NULL);
	CHECK_HAS(resp, "HTTP/1.1 400 Bad Request\r\n");
	CHECK_HAS(http_body(resp), "this server speaks HTTPS: use https://\n");
	CHECK(!strstr(resp, "netlat_"));
	free(resp);
	resp = https_get(port, WEB_USER ":" WEB_PASS, false);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	free(resp);

	for (i = 0; i < EXPORTER_SLOTS; i++) {
		stalled[i] = connect_local(port);
		if (stalled[i] >= 0)	/* each mid-handshake, and no further */
			CHECK(send(stalled[i], hello, sizeof(hello) - 1, 0) == sizeof(hello) - 1);
	}
	usleep(100000);		/* the exporter polled them */
	t0 = monotonic_now_ns();
	resp = https_get(port, WEB_USER ":" WEB_PASS, false);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	if (!CHECK(monotonic_now_ns() - t0 < 500000000ull))
		fprintf(stderr, "    a scrape beside stalled handshakes took %.3f s\n",
			(double)(monotonic_now_ns() - t0) / 1e9);
	free(resp);
	for (i = 0; i < EXPORTER_SLOTS; i++)
		if (stalled[i] >= 0)
			close(stalled[i]);
	stop_web_exporter(pid, "exporter stopped: 2 scrapes, ");
}

/* client_auth_type RequireAndVerifyClientCert: no certificate, no scrape. */
static void test_web_client_cert(void)
{
	char tls_extra[4200];
	const char *cfg;
	char *resp;
	int port;
	pid_t pid;

	if (!make_certs())
		return;
	snprintf(tls_extra, sizeof(tls_extra), "  client_auth_type: RequireAndVerifyClientCert\n"
		 "  client_ca_file: '%s'\n  min_version: TLS13\n", tmp_path("tls/ca.crt"));
	cfg = web_config("mtls.yml", tls_extra, "");
	pid = start_web_exporter(&port, cfg);
	resp = https_get(port, NULL, true);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	free(resp);
	resp = https_get(port, NULL, false);
	CHECK(!resp[0]);
	free(resp);
	resp = https_get(port, NULL, true);
	CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n");
	free(resp);
	stop_web_exporter(pid, "exporter stopped: 2 scrapes, ");
}

/* Bad web config files: exit 2, one line naming the file and the line, nothing served. */
static void test_web_config_errors(void)
{
	static const struct {
		const char *text, *err;	/* err follows "FILE:" */
	} cases[] = {
		{ "tls_server_config:\n  cert_file: a\n\tkey_file: b\n",
		  "3: a tab in the indentation" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n    min_version: TLS12\n",
		  "4: indented 4 spaces, the keys above it 2" },
		{ "tls_server_config: {cert_file: a, key_file: b}\n", "1: YAML's '{' is not supported" },
		{ "basic_auth_users:\n  - alice\n", "2: YAML's '-' is not supported" },
		{ "# web\n\nbasic_auth_users:\n  alice $2y$\n", "4: want KEY: VALUE" },
		{ "basic_auth_users:\n  alice: 'unterminated\n", "2: a single-quoted string without its end" },
		{ "basic_auth_users:\n  alice: secret\n", "2: user 'alice': not a bcrypt hash" },
		{ "basic_auth_users:\n  alice:\n", "2: 'alice' has no value" },
		{ "  alice: x\n", "1: an indented line before any section" },
		{ "tls_server_config:\n  cert_file: a\n", "1: tls_server_config has no key_file" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Maybe\n",
		  "4: client_auth_type 'Maybe': want NoClientCert" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
		  "4: client_ca_file, but client_auth_type NoClientCert verifies no client certificate" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n",
		  "4: min_version 'TLS14': want TLS10, TLS11, TLS12 or TLS13" },
		{ "---\nbasic_auth_users:\nbasic_auth_users:\n", "3: 'basic_auth_users' given twice" },
		/* unknown keys, at both levels */
		{ "http_server_config:\n  http2: false\n",
		  "1: unknown key 'http_server_config' (netlat knows tls_server_config and basic_auth_users)" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: x\n",
		  "4: unknown key 'cipher_suites' in tls_server_config" },
		{ "tls_server_config:\n  cert_file: /nonexistent/server.crt\n  key_file: b\n",
		  " /nonexistent/server.crt: No such file or directory" },
	};
	char name[32], want[4200];
	const char *path;
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu.yml", i);
		path = write_tmp(name, cases[i].text);
		if (cases[i].err[0] == ' ')	/* a file's reason, not the config's line */
			snprintf(want, sizeof(want), "netlat: cert_file%s\n", cases[i].err);
		else
			snprintf(want, sizeof(want), "netlat: %s:%s", path, cases[i].err);
		fake_env("0", "0");
		netlat(&r, "exporter", "--device", FAKE_DEV, "--listen", "127.0.0.1:0",
		       "--web.config.file", path, NULL);
		free(fake_done());
		if (!CHECK_U64(r.status, 2) || !CHECK_HAS(r.err, want) ||
		    !CHECK_U64(count_lines(r.err), 1))
			fprintf(stderr, "    (web config %s)\n", cases[i].text);
		CHECK(!strstr(r.err, "serving"));
		run_free(&r);
	}

	/* the file itself; a key that is not the certificate's; --web-config */
	netlat(&r, "exporter", "--web-config", tmp_path("no-such.yml"), NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "no-such.yml: No such file or directory\n");
	CHECK_U64(count_lines(r.err), 1);
	run_free(&r);
	if (!make_certs())
		return;
	snprintf(want, sizeof(want), "tls_server_config:\n  cert_file: '%s'\n  key_file: '%s'\n",
		 tmp_path("tls/server.crt"), tmp_path("tls/client.key"));
	path = write_tmp("mismatch.yml", want);
	netlat(&r, "exporter", "--web.config.file", path, NULL);
	CHECK_U64(r.status, 2);
	CHECK_HAS(r.err, "client.key is not the key of cert_file ");
	CHECK_U64(count_lines(r.err), 1);
	run_free(&r);
}

/* A real Prometheus scrapes over HTTPS with basic auth; a wrong password is a target down. */
static void test_web_prometheus(void)
{
	char users[256], jobs[2048];
	int exp_port, prom_port;
	pid_t exp_pid, prom_pid;
	const char *cfg;
	double v;
	int i;

	if (!make_certs() || !need_program("prometheus", "prometheus"))
		return;
	snprintf(users, sizeof(users), "  %s: %s\n", WEB_USER, bcrypt_hash("$2y$", WEB_PASS));
	cfg = web_config("prometheus.yml", "", users);
	exp_pid = start_web_exporter(&exp_port, cfg);
	snprintf(jobs, sizeof(jobs),
		 "      - targets: ['127.0.0.1:%d']\n"
		 "    scheme: https\n    tls_config:\n      ca_file: '%s'\n"
		 "    basic_auth:\n      username: %s\n      password: '%s'\n"
		 "  - job_name: wrong-password\n"
		 "    scheme: https\n    tls_config:\n      ca_file: '%s'\n"
		 "    basic_auth:\n      username: %s\n      password: wrong\n"
		 "    static_configs:\n      - targets: ['127.0.0.1:%d']\n",
		 exp_port, tmp_path("tls/ca.crt"), WEB_USER, WEB_PASS,
		 tmp_path("tls/ca.crt"), WEB_USER, exp_port);
	prom_pid = start_prometheus("prometheus-tls", jobs, &prom_port);
	if (CHECK(exp_port && prom_pid > 0)) {
		if (prometheus_up(prom_port, "prometheus-tls", "netlat")) {
			v = prom_query(prom_port, "netlat_tcp_packets_total{job=\"netlat\"}");
			CHECK(v == 10);
			/* both jobs scrape once a second: its first is near */
			for (i = 0, v = NAN; i < 50 && isnan(v); i++, usleep(100000))
				v = prom_query(prom_port, "up{job=\"wrong-password\"}");
			CHECK(v == 0);
		}
		stop_prometheus(prom_pid);
	}
	stop_web_exporter(exp_pid, NULL);
}

/* ---- the bcrypt budget ------------------------------------------------------ */

#define FLOOD_CLIENTS	50
#define FLOOD_SECS	6

/* "Authorization: Basic ...\r\n" for @userpass into @out. */
static void basic_header(char *out, size_t len, const char *userpass)
{
	char b64[512];

	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)userpass,
			(int)strlen(userpass));
	snprintf(out, len, "Authorization: Basic %s\r\n", b64);
}

/* What the flood saw, written by its child to flood.counts. */
struct flood_counts {
	unsigned long requests, unauthorized, throttled, retry_after, other;
};

/* One response a flood client read whole: counted by its status. */
static void flood_count(struct flood_counts *fc, const char *resp)
{
	fc->requests++;
	if (strstr(resp, " 401 Unauthorized\r\n"))
		fc->unauthorized++;
	else if (strstr(resp, " 429 Too Many Requests\r\n"))
		fc->throttled++;
	else
		fc->other++;
	if (strstr(resp, "\r\nRetry-After: "))
		fc->retry_after++;
}

/*
 * Read what the server sent on @p's socket into @buf (@room bytes, *@got
 * so far; a longer response is cut): true once it closed, with @buf
 * NUL-terminated and the socket closed (p->fd -1).
 */
static bool conn_read(struct pollfd *p, char *buf, size_t *got, size_t room)
{
	ssize_t r = recv(p->fd, buf + *got, room - 1 - *got, MSG_DONTWAIT);

	if (r > 0)
		*got += (size_t)r;
	if (r > 0 && *got < room - 1)
		return false;
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	buf[*got] = 0;
	close(p->fd);
	p->fd = -1;
	return true;
}

/*
 * fork() for a child that floods with @n connections (@p's, none open
 * yet) and dies with the test: 0 in the child, its pid in the parent.
 */
static pid_t flood_fork(struct pollfd *p, int n)
{
	pid_t pid;
	int i;

	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 0; i < n; i++)
		p[i].fd = -1;
	return 0;
}

/* The flooding child's end: its @len bytes of counts into the file @name. */
static _Noreturn void flood_exit(const char *name, const void *counts, size_t len)
{
	FILE *f = fopen(tmp_path(name), "w");

	if (f) {
		fwrite(counts, len, 1, f);
		fclose(f);
	}
	_exit(0);
}

/*
 * A child process whose FLOOD_CLIENTS connections to @port send a wrong
 * password for @secs, each reconnecting as soon as it has read its
 * response and the server's close; counts in flood.counts.
 */
static pid_t password_flood(int port, unsigned int secs)
{
	static struct pollfd p[FLOOD_CLIENTS];
	static char resp[FLOOD_CLIENTS][1024];
	static size_t got[FLOOD_CLIENTS];
	struct flood_counts fc = { 0 };
	char req[1024], auth[600];
	uint64_t end;
	pid_t pid;
	int i, n;

	basic_header(auth, sizeof(auth), WEB_USER ":wrong");
	n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: x\r\n%s\r\n", auth);
	pid = flood_fork(p, FLOOD_CLIENTS);
	if (pid)
		return pid;
	end = monotonic_now_ns() + secs * 1000000000ull;
	while (monotonic_now_ns() < end) {
		for (i = 0; i < FLOOD_CLIENTS; i++) {
			if (p[i].fd >= 0)
				continue;
			/* blocking connect and send: the backlog takes them at once */
			p[i].fd = connect_local(port);
			p[i].events = POLLIN;
			got[i] = 0;
			if (p[i].fd >= 0 && send(p[i].fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
				close(p[i].fd);
				p[i].fd = -1;
			}
		}
		if (poll(p, FLOOD_CLIENTS, 50) <= 0)
			continue;
		for (i = 0; i < FLOOD_CLIENTS; i++) {
			if (p[i].fd >= 0 && p[i].revents &&
			    conn_read(&p[i], resp[i], &got[i], sizeof(resp[i])) && got[i])
				flood_count(&fc, resp[i]);
		}
	}
	flood_exit("flood.counts", &fc, sizeof(fc));
}

/* How long one bcrypt of @hash takes here now: the slowest of three, in s. */
static double bcrypt_seconds(const char *hash)
{
	static struct crypt_data cd;
	double worst = 0, t;
	uint64_t t0;
	int i;

	for (i = 0; i < 3; i++) {
		t0 = monotonic_now_ns();
		crypt_rn("not it", hash, &cd, sizeof(cd));
		t = (double)(monotonic_now_ns() - t0) / 1e9;
		worst = t > worst ? t : worst;
	}
	return worst;
}

/*
 * @count scrapes with the right password beside a flood of wrong ones: all
 * 200, each within @bound seconds; the slowest, in s.
 */
static double scrapes_beside_flood(int port, const char *auth, int count, double bound)
{
	char req[1024], *resp;
	double t, worst = 0;
	uint64_t t0;
	int i, n;

	n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: x\r\n%s\r\n", auth);
	for (i = 0; i < count; i++) {
		usleep(200000);
		t0 = monotonic_now_ns();
		resp = http_raw(port, req, (size_t)n);
		t = (double)(monotonic_now_ns() - t0) / 1e9;
		worst = t > worst ? t : worst;
		if (!CHECK_HAS(resp, "HTTP/1.1 200 OK\r\n") || !CHECK(t < bound))
			fprintf(stderr, "    scrape %d beside the flood: %.3f s (bound %.3f s)\n",
				i, t, bound);
		free(resp);
	}
	return worst;
}

/*
 * A flood of wrong passwords (FLOOD_CLIENTS in a loop; bcrypt of cost 11)
 * spends the bcrypt budget: the flood gets 429 with Retry-After, and a
 * client with the right password, seen once before, keeps scraping.
 * Without the budget each poll of the exporter's loop runs a bcrypt for
 * each slot with a request (up to 50 bcrypts: seconds), and the scrapes
 * wait that long. With it, password checks get a quarter of the time and a burst of
 * 250 ms, and a check may overrun its budget by the one bcrypt it ran: a
 * scrape waits at most for the burst and two bcrypts; the bound adds half
 * a second for a loaded machine (the test measures a bcrypt here first).
 */
static void test_web_bcrypt_budget(void)
{
	char users[256], auth[600];
	struct flood_counts fc = { 0 };
	const char *hash;
	double bound, t, worst;
	struct run r = { 0 };
	char *resp;
	size_t len;
	int port;
	pid_t pid, flood;

	basic_header(auth, sizeof(auth), WEB_USER ":" WEB_PASS);
	/* cost 11 (~0.2 s): cost 5 (~6 ms) is too cheap to flood with */
	hash = bcrypt_hash_cost("$2b$", 11, WEB_PASS);
	t = bcrypt_seconds(hash);
	bound = 0.25 + 2 * t + 0.5;
	snprintf(users, sizeof(users), "basic_auth_users:\n  %s: %s\n", WEB_USER, hash);
	fake_env("0", "0");
	setenv("FAKE_NETLAT_HIST", FED_HIST, 1);
	pid = start_exporter(&port, (const char *const[]){ "--listen", "127.0.0.1:0",
		"--web.config.file", write_tmp("budget.yml", users), NULL });
	/* the right password once: from now on its SHA-256 digest */
	worst = scrapes_beside_flood(port, auth, 1, 10);
	flood = password_flood(port, FLOOD_SECS);
	usleep(500000);		/* the flood spent the burst */
	worst = scrapes_beside_flood(port, auth, 20, bound);
	wait_child(&r, flood, (FLOOD_SECS + 10) * 1000);
	resp = read_file(tmp_path("flood.counts"), &len);
	if (CHECK_U64(len, sizeof(fc)))
		memcpy(&fc, resp, sizeof(fc));
	free(resp);
	CHECK(fc.throttled > 0 && fc.retry_after == fc.throttled);
	CHECK(fc.unauthorized > 0 && !fc.other);
	printf("    bcrypt %.3f s; beside %lu wrong passwords (%lu 401, %lu 429) "
	       "the slowest scrape took %.3f s (bound %.3f s)\n", t, fc.requests,
	       fc.unauthorized, fc.throttled, worst, bound);
	stop_exporter(pid, "exporter stopped: 21 scrapes, ");
	unsetenv("FAKE_NETLAT_HIST");
	free(fake_done());
}
