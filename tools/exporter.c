// SPDX-License-Identifier: GPL-2.0
/*
 * `netlat exporter` (see exporter.h). One poll() loop serves a bounded
 * number of connections, one request each (Connection: close): a scrape
 * every few seconds needs no more, and nothing can make the process grow.
 * A request must arrive whole within the timeout and fit REQ_MAX bytes;
 * the response is built at once from the ioctls, then sent as the socket
 * takes it. Idle or slow clients cannot keep a scraper out: with every
 * slot taken, a new connection takes the slot of the oldest client still
 * short of a whole request that has had a chance to send it (a poll, and
 * EVICT_AGE_NS: a TLS handshake needs round trips). The slots are many, so
 * that under a flood each still lives that long while a scraper queued
 * behind the flood waits for few turns of them (see accept_clients()).
 * With a web config file (webcfg.h) it speaks TLS (tls.h, non-blocking:
 * a handshake is part of reading the request, under the same rules) and
 * asks for basic auth.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cli.h"
#include "exporter.h"
#include "prom.h"
#include "tls.h"
#include "webcfg.h"

/*
 * A flood of N connections cycles through the slots, each living at least
 * EVICT_AGE_NS: a scraper queued behind it waits about (N - MAX_CLIENTS) /
 * MAX_CLIENTS * EVICT_AGE_NS (1,000: 0.1 s). 16 slots gave each one poll,
 * a millisecond under a flood: too short for a TLS handshake.
 */
#define MAX_CLIENTS	512
#define EVICT_AGE_NS	100000000ULL
#define REQ_MAX		8192	/* request line and headers */

#define CT_TEXT	"text/plain; version=0.0.4; charset=utf-8"
#define CT_OM	"application/openmetrics-text; version=1.0.0; charset=utf-8"

struct client {
	int fd;			/* -1: free slot */
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC: closed then */
	uint64_t evictable_ns;	/* not evicted before (accepted + EVICT_AGE_NS) */
	size_t len;		/* request bytes in req */
	char *resp;		/* NULL while the request is read */
	size_t resp_len, sent;
	bool draining;		/* all sent: read to EOF, then close */
	bool polled;		/* it had a poll() to send its request in */
	bool sniffed;		/* TLS port: its first byte was seen */
	struct tls_conn *tls;	/* NULL: plain HTTP */
	short want;		/* what TLS waits for (POLLIN, POLLOUT), 0: none */
	char req[REQ_MAX + 1];
};

struct server {
	const char *device;
	int lfd;
	uint64_t timeout_ns;
	unsigned long scrapes;
	unsigned long evicted;	/* slots taken from idle or slow clients */
	unsigned long throttled;	/* 429s: the bcrypt budget was spent */
	char last_error[NETLAT_ERRBUF_SIZE];	/* said once until it changes */
	struct webcfg web;		/* the web config file's, or all zero */
	struct tls_server *tls;		/* NULL: plain HTTP */
	struct client clients[MAX_CLIENTS];
};

/* ---- listening ------------------------------------------------------------ */

/*
 * Parse "ADDR:PORT", "[IPV6]:PORT", "localhost:PORT" or ":PORT" (every IPv4
 * address) into @ss. Numeric only, so no name service is asked (and the
 * static build needs no NSS): a listening address is an address anyway.
 */
static bool parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(spec, ':');
	char host[INET6_ADDRSTRLEN + 1];
	size_t hlen;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (!colon || !parse_u64(colon + 1, &port) || port > 65535)
		return false;
	hlen = (size_t)(colon - spec);
	if (hlen >= 2 && spec[0] == '[' && spec[hlen - 1] == ']') {
		if (hlen - 2 >= sizeof(host))
			return false;
		memcpy(host, spec + 1, hlen - 2);
		host[hlen - 2] = 0;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1;
	}
	if (hlen >= sizeof(host))
		return false;
	memcpy(host, spec, hlen);
	host[hlen] = 0;
	in4->sin_family = AF_INET;
	in4->sin_port = htons((uint16_t)port);
	*len = sizeof(*in4);
	if (!hlen) {
		in4->sin_addr.s_addr = htonl(INADDR_ANY);
		return true;
	}
	if (!strcmp(host, "localhost")) {
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return true;
	}
	return inet_pton(AF_INET, host, &in4->sin_addr) == 1;
}

/* "ADDR:PORT" of a bound socket, for the start message. */
static void sock_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (!getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const void *)&ss;

			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			port = ntohs(in6->sin6_port);
		} else {
			const struct sockaddr_in *in4 = (const void *)&ss;

			inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
			port = ntohs(in4->sin_port);
		}
	}
	snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
}

/* A listening socket for @spec (parsed by parse_listen), or -1 with one line. */
static int listen_on(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, err;

	if (!parse_listen(spec, &ss, &len))
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		error("cannot listen on %s: %s", spec, strerror(errno));
		return -1;
	}
	/* a restart may rebind at once; a live listener still conflicts */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/*
	 * A deep backlog: under a flood of connections a scraper's SYN must
	 * still be queued (a dropped one costs it a second), and the loop
	 * drains the queue quickly, evicting what stalls.
	 */
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, SOMAXCONN)) {
		err = errno;
		close(fd);
		error("cannot listen on %s: %s", spec, strerror(err));
		return -1;
	}
	return fd;
}

/* ---- requests -------------------------------------------------------------- */

/* The q value of one media range's parameters (";q=0.5"), 1 if none. */
static double media_q(const char *params, const char *end)
{
	const char *p;

	for (p = params; p && p < end; p = memchr(p + 1, ';', (size_t)(end - p - 1))) {
		const char *v = p + 1;

		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		if (end - v > 2 && (v[0] == 'q' || v[0] == 'Q') && v[1] == '=')
			return strtod(v + 2, NULL);
	}
	return 1;
}

static double max_d(double a, double b)
{
	return a > b ? a : b;
}

/*
 * Whether the Accept header @accept (up to @end) prefers OpenMetrics: it
 * names application/openmetrics-text with a q above 0 and not below
 * text/plain's (Prometheus asks for it first, text 0.0.4 at q=0.5).
 */
static bool wants_openmetrics(const char *accept, const char *end)
{
	static const char om[] = "application/openmetrics-text";
	static const char text[] = "text/plain";
	double q_om = 0, q_text = 0;
	const char *p = accept;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end, *semi;
		size_t n;

		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		semi = memchr(p, ';', (size_t)(stop - p));
		n = (size_t)((semi ? semi : stop) - p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == sizeof(om) - 1 && !strncasecmp(p, om, n))
			q_om = max_d(q_om, media_q(semi, stop));
		else if (n == sizeof(text) - 1 && !strncasecmp(p, text, n))
			q_text = max_d(q_text, media_q(semi, stop));
		p = stop + 1;
	}
	return q_om > 0 && q_om >= q_text;
}

static void respond(struct client *c, const char *status, const char *type,
		    const char *extra, const char *body, size_t body_len, bool head)
{
	FILE *f = open_memstream(&c->resp, &c->resp_len);

	if (!f) {
		c->resp = NULL;
		return;
	}
	fprintf(f, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		"Connection: close\r\n\r\n", status, type, body_len, extra);
	if (!head)
		fwrite(body, 1, body_len, f);
	if (fclose(f)) {
		free(c->resp);
		c->resp = NULL;
	}
}

static void respond_text(struct client *c, const char *status, const char *extra,
			 const char *msg, bool head)
{
	respond(c, status, "text/plain; charset=utf-8", extra, msg, strlen(msg), head);
}

/* GET /metrics: a fresh read of the device. */
static void serve_metrics(struct server *srv, struct client *c, bool om, bool head)
{
	char errbuf[NETLAT_ERRBUF_SIZE], msg[NETLAT_ERRBUF_SIZE + 2];
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int r;

	if (!f) {
		respond_text(c, "500 Internal Server Error", "", "out of memory\n", head);
		return;
	}
	r = prom_collect(srv->device, f, om, errbuf);
	if (fclose(f) && !r) {
		r = -1;
		snprintf(errbuf, sizeof(errbuf), "out of memory");
	}
	if (r) {
		/* Prometheus marks the target down; the reason goes to stderr once */
		if (strcmp(errbuf, srv->last_error))
			error("scrape failed: %s", errbuf);
		snprintf(srv->last_error, sizeof(srv->last_error), "%s", errbuf);
		snprintf(msg, sizeof(msg), "%s\n", errbuf);
		respond_text(c, "503 Service Unavailable", "", msg, head);
	} else {
		if (srv->last_error[0])
			error("scrapes work again");
		srv->last_error[0] = 0;
		srv->scrapes++;
		respond(c, "200 OK", om ? CT_OM : CT_TEXT, "", body, len, head);
	}
	free(body);
}

/*
 * Basic auth, if the web config asks for it: true, or false with the
 * response made (401, or 429 while password checks are over their budget:
 * the connection closes, and a right password already seen still passes).
 */
static bool authorized(struct server *srv, struct client *c, const char *auth, size_t len,
		       bool head)
{
	char extra[64];
	unsigned int retry_s = 1;

	switch (webcfg_authorize(&srv->web, auth, len, &retry_s)) {
	case WEBCFG_AUTH_OK:
		return true;
	case WEBCFG_AUTH_BUSY:
		srv->throttled++;
		snprintf(extra, sizeof(extra), "Retry-After: %u\r\n", retry_s);
		respond_text(c, "429 Too Many Requests", extra,
			     "too many password checks: retry later\n", head);
		break;
	default:
		respond_text(c, "401 Unauthorized", "WWW-Authenticate: Basic realm=\"netlat\"\r\n",
			     "Unauthorized\n", head);
	}
	return false;
}

/* A whole request head is in c->req (NUL-terminated): make the response. */
static void handle_request(struct server *srv, struct client *c)
{
	char *line_end = strstr(c->req, "\r\n"), *sp1, *sp2, *h, *path_end;
	const char *accept = NULL, *accept_end = NULL, *auth = NULL, *auth_end = NULL;
	bool head;

	*line_end = 0;
	sp1 = strchr(c->req, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7)) {
		respond_text(c, "400 Bad Request", "", "bad request line\n", false);
		return;
	}
	*sp1 = *sp2 = 0;
	for (h = line_end + 2; *h && strncmp(h, "\r\n", 2); h = strstr(h, "\r\n") + 2) {
		if (!strncasecmp(h, "Accept:", 7)) {
			accept = h + 7;
			accept_end = strstr(h, "\r\n");
		} else if (!strncasecmp(h, "Authorization:", 14) && !auth) {
			auth = h + 14;
			auth_end = strstr(h, "\r\n");
		}
	}
	head = !strcmp(c->req, "HEAD");
	/* before the path: without credentials nothing is said about it */
	if (!authorized(srv, c, auth, auth ? (size_t)(auth_end - auth) : 0, head))
		return;
	path_end = sp1 + 1 + strcspn(sp1 + 1, "?");
	*path_end = 0;
	if (strcmp(sp1 + 1, "/metrics")) {
		respond_text(c, "404 Not Found", "", "not found: the metrics are at /metrics\n",
			     head);
		return;
	}
	if (!head && strcmp(c->req, "GET")) {
		respond_text(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n",
			     "method not allowed\n", false);
		return;
	}
	serve_metrics(srv, c, accept && wants_openmetrics(accept, accept_end), head);
}

/* ---- connections ---------------------------------------------------------- */

static void client_close(struct client *c)
{
	tls_conn_free(c->tls);
	close(c->fd);
	free(c->resp);
	c->fd = -1;
	c->resp = NULL;
	c->tls = NULL;
	c->draining = false;
}

/* recv() of plain HTTP or TLS: see tls_recv(); c->want is what TLS waits for. */
static ssize_t client_recv(struct client *c, void *buf, size_t len)
{
	c->want = 0;
	return c->tls ? tls_recv(c->tls, buf, len, &c->want) : recv(c->fd, buf, len, 0);
}

static ssize_t client_send(struct client *c, const void *buf, size_t len)
{
	c->want = 0;
	return c->tls ? tls_send(c->tls, buf, len, &c->want) :
			send(c->fd, buf, len, MSG_NOSIGNAL);
}

/* How long a client may take to close after the response: it has it all. */
#define DRAIN_NS	1000000000ULL

/* A client still short of a whole request after its chance to send it. */
static bool client_evictable(const struct client *c, uint64_t now)
{
	return c->fd >= 0 && !c->resp && !c->draining && c->polled && now >= c->evictable_ns;
}

/*
 * A slot for a new connection: a free one, else the one of the oldest
 * evictable client (accepted first: the deadlines of clients reading
 * their request are their accept times plus one timeout); NULL if none.
 * The caller evicts it only once a connection was accepted.
 */
static struct client *free_slot(struct server *srv, uint64_t now)
{
	struct client *c, *old = NULL;
	size_t i;

	for (i = 0; i < MAX_CLIENTS; i++) {
		c = &srv->clients[i];
		if (c->fd < 0)
			return c;
		if (client_evictable(c, now) && (!old || c->deadline_ns < old->deadline_ns))
			old = c;
	}
	return old;
}

static void accept_clients(struct server *srv)
{
	uint64_t now = monotonic_ns();
	struct client *c;
	int fd;

	while ((c = free_slot(srv, now))) {
		fd = accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;	/* EAGAIN, or a passing error: poll tells again */
		if (c->fd >= 0) {
			client_close(c);
			srv->evicted++;
		}
		c->fd = fd;
		c->len = c->resp_len = c->sent = 0;
		c->draining = false;
		c->polled = false;
		c->sniffed = false;
		c->want = 0;
		c->evictable_ns = now + EVICT_AGE_NS;
		c->deadline_ns = now + srv->timeout_ns;
	}
}

static void client_write(struct client *c)
{
	ssize_t n = client_send(c, c->resp + c->sent, c->resp_len - c->sent);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		client_close(c);
		return;
	}
	c->sent += (size_t)n;
	if (c->sent < c->resp_len)
		return;
	/*
	 * Closing with unread request bytes would send a reset that can
	 * destroy the response in flight: half-close, and wait for the
	 * client's close (briefly).
	 */
	free(c->resp);
	c->resp = NULL;
	c->draining = true;
	c->want = 0;
	if (c->tls)
		tls_close_notify(c->tls);
	shutdown(c->fd, SHUT_WR);
	if (c->deadline_ns > monotonic_ns() + DRAIN_NS)
		c->deadline_ns = monotonic_ns() + DRAIN_NS;
}

/*
 * A TLS port's first byte: a TLS handshake record (22) starts TLS; else
 * it is plain HTTP sent by mistake, which gets a plain 400 saying so, not
 * a handshake failure to puzzle over. -1: closed or not yet, 0: TLS on,
 * 1: the response is ready.
 */
static int client_sniff(struct server *srv, struct client *c)
{
	unsigned char b;
	ssize_t n = recv(c->fd, &b, 1, MSG_PEEK);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0) {
		client_close(c);
		return -1;
	}
	c->sniffed = true;
	if (b != 22) {
		respond_text(c, "400 Bad Request", "",
			     "this server speaks HTTPS: use https://\n", false);
		return 1;
	}
	c->tls = tls_conn_new(srv->tls, c->fd);
	if (!c->tls) {
		client_close(c);
		return -1;
	}
	return 0;
}

static void client_read(struct server *srv, struct client *c)
{
	ssize_t n;
	int r;

	if (c->draining) {
		/* discard what it still sends, so that close() does not reset */
		n = recv(c->fd, c->req, REQ_MAX, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			client_close(c);
		return;
	}
	if (srv->tls && !c->sniffed) {
		r = client_sniff(srv, c);
		if (r < 0)
			return;
		if (r > 0)
			goto respond;
	}
	/* TLS may hold decrypted bytes that no poll() announces: read them all */
	for (;;) {
		n = client_recv(c, c->req + c->len, REQ_MAX - c->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			client_close(c);
			return;
		}
		c->len += (size_t)n;
		c->req[c->len] = 0;
		if (strstr(c->req, "\r\n\r\n")) {
			handle_request(srv, c);
			break;
		}
		if (c->len == REQ_MAX) {
			respond_text(c, "431 Request Header Fields Too Large", "",
				     "request too large\n", false);
			break;
		}
	}
respond:
	if (!c->resp)	/* out of memory: nothing to say */
		client_close(c);
	else
		client_write(c);	/* most responses fit the socket at once */
}

/* Serve until a stop request. */
static void serve(struct server *srv)
{
	struct pollfd pfd[MAX_CLIENTS + 1];
	struct client *idx[MAX_CLIENTS + 1];
	uint64_t now;
	nfds_t n, i;
	int timeout;

	while (!stop_requested) {
		bool room = false;

		/* their poll comes now: from here on they may be evicted */
		for (i = 0; i < MAX_CLIENTS; i++)
			if (srv->clients[i].fd >= 0 && !srv->clients[i].polled)
				srv->clients[i].polled = true;

		now = monotonic_ns();
		timeout = TICK_MS;	/* a stop request between checks waits this at most */
		n = 1;
		for (i = 0; i < MAX_CLIENTS; i++) {
			struct client *c = &srv->clients[i];

			if (c->fd < 0) {
				room = true;
				continue;
			}
			if (now >= c->deadline_ns) {
				client_close(c);	/* too slow: the slot is needed */
				room = true;
				continue;
			}
			if ((c->deadline_ns - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((c->deadline_ns - now) / 1000000) + 1;
			if (client_evictable(c, now))
				room = true;
			else if (!c->resp && !c->draining &&
				 (c->evictable_ns - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((c->evictable_ns - now) / 1000000) + 1;	/* room then */
			pfd[n].fd = c->fd;
			pfd[n].events = c->want ? c->want : c->resp ? POLLOUT : POLLIN;
			idx[n++] = c;
		}
		/* every slot busy with a response: new ones wait in the backlog */
		pfd[0].fd = room ? srv->lfd : -1;
		pfd[0].events = POLLIN;
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			error("poll: %s", strerror(errno));
			return;
		}
		for (i = 1; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (idx[i]->resp)
				client_write(idx[i]);
			else
				client_read(srv, idx[i]);
		}
		if (pfd[0].revents & POLLIN)
			accept_clients(srv);
	}
}

/* ---- the command ------------------------------------------------------------ */

/* Read the device once, so a setup problem is one line at start. */
static int check_device(const char *path)
{
	char errbuf[NETLAT_ERRBUF_SIZE];
	FILE *f = fopen("/dev/null", "w");
	int r;

	if (!f) {
		error("/dev/null: %s", strerror(errno));
		return -1;
	}
	r = prom_collect(path, f, false, errbuf);
	fclose(f);
	if (r)
		error("%s", errbuf);
	return r;
}

int exporter_main(int argc, char **argv)
{
	static const struct option opts[] = {
		OPTION_ARG("listen", 'l'),
		OPTION_ARG("timeout", 't'),
		OPTION_ARG("web.config.file", 'W'),	/* node_exporter's name */
		OPTION_ARG("web-config", 'W'),		/* this command's style */
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	const char *listen_spec = EXPORTER_LISTEN_DEFAULT, *device = NULL, *web_config = NULL;
	char err[NETLAT_ERRBUF_SIZE + 4096];
	static struct server srv;
	struct sockaddr_storage ss;
	char name[INET6_ADDRSTRLEN + 16];
	socklen_t sl;
	double timeout = 10;
	size_t i;
	int c, r;

	while ((c = next_option(argc, argv, "l:t:D:h", opts)) != -1) {
		switch (c) {
		case 'l':
			listen_spec = optarg;
			break;
		case 't':
			if (!parse_seconds(optarg, &timeout) || timeout < 0.01)
				return usage_error("bad timeout '%s'", optarg);
			break;
		case 'W':
			web_config = optarg;
			break;
		default:
			r = device_option(c, argv, &device);
			if (r >= 0)
				return r;
		}
	}
	if (optind < argc)
		return usage_error("too many arguments");
	if (!parse_listen(listen_spec, &ss, &sl))
		return usage_error("bad listen address '%s': want IPV4:PORT, [IPV6]:PORT, "
				   "localhost:PORT or :PORT", listen_spec);
	/* what the file says is an argument: a bad one is exit 2, before anything */
	if (web_config && (webcfg_load(web_config, &srv.web, err, sizeof(err)) ||
			   (srv.web.tls && !(srv.tls = tls_server_new(&srv.web, err, sizeof(err)))))) {
		error("%s", err);
		webcfg_free(&srv.web);
		return EXIT_USAGE;
	}
	srv.device = device ? device : NETLAT_DEVICE_PATH;
	srv.timeout_ns = (uint64_t)(timeout * 1e9);
	for (i = 0; i < MAX_CLIENTS; i++)
		srv.clients[i].fd = -1;
	r = 1;
	if (check_device(srv.device))
		goto out;
	srv.lfd = listen_on(listen_spec);
	if (srv.lfd < 0)
		goto out;
	catch_stop_signals();
	signal(SIGPIPE, SIG_IGN);
	sock_name(srv.lfd, name, sizeof(name));
	error("serving %s://%s/metrics from %s%s", srv.tls ? "https" : "http", name, srv.device,
	      srv.web.nr_users ? " (basic auth)" : "");
	serve(&srv);
	for (i = 0; i < MAX_CLIENTS; i++)
		if (srv.clients[i].fd >= 0)
			client_close(&srv.clients[i]);
	close(srv.lfd);
	error("exporter stopped: %lu scrapes, %lu idle or slow clients evicted, "
	      "%lu password checks refused (429)", srv.scrapes, srv.evicted, srv.throttled);
	r = stop_requested ? 0 : 1;
out:
	tls_server_free(srv.tls);
	webcfg_free(&srv.web);
	return r;
}
