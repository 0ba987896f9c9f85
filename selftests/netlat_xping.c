// SPDX-License-Identifier: GPL-2.0
/*
 * The two-VM join test's ping-pong (not a test): the application's own
 * round trip of each request, which the joined parts of its request and
 * reply must add up to (tests/qemu/xhost.c, check).
 *
 *   netlat_xping server PORT
 *   netlat_xping client ADDR PORT N
 *   netlat_xping sink PORT
 *   netlat_xping bulk ADDR PORT BYTES
 *
 * The server accepts one connection and answers each REQ bytes read with
 * REPLY bytes written, until EOF. The client sends N requests, each a
 * pause after the last reply so that each request and reply is a packet
 * of its own and the reply carries the request's ACK, and then prints
 * "xping: I T0 T1 PORT" per request: CLOCK_MONOTONIC (the clock of
 * netlat's records) before its send() and after the read that completed
 * its reply, and its local port; last "xping: done N ...".
 *
 * The bulk client sends BYTES one way and returns once the sink has
 * read them all (the sink closes at the client's end): the receiver
 * answers with ACKs only, and nothing is in flight when it returns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ	100	/* one segment each way, well under the MSS */
#define REPLY	300
#define PAUSE_NS 5000000L

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Exactly @len bytes: 1, 0 at EOF before any, -1 on an error or a short end. */
static int read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 && got == 0 ? 0 : -1;
		got += n;
	}
	return 1;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Nagle off: each send() leaves at once, not held for the last one's ACK */
static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		perror("xping: TCP_NODELAY");
}

/* One connection accepted on @port (the listener closed), or -1. */
static int accept_one(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, l, fd;

	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1)) {
		perror("xping: listen");
		return -1;
	}
	fd = accept(l, NULL, NULL);
	if (fd < 0)
		perror("xping: accept");
	close(l);
	return fd;
}

/* Connected to @addr:@port, retrying while the peer starts; -1 if not. */
static int dial(const char *addr, int port, struct sockaddr_in *sa)
{
	int fd = -1, tries;

	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
		fprintf(stderr, "xping: bad address %s\n", addr);
		return -1;
	}
	for (tries = 0; tries < 20; tries++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)sa, sizeof(*sa)))
			return fd;
		if (fd >= 0)
			close(fd);
		sleep(1);
	}
	perror("xping: connect");
	return -1;
}

/* Reads until EOF, then closes: the bulk client's end. */
static int sink(int port)
{
	int fd = accept_one(port);
	unsigned long long total = 0;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		total += n > 0 ? n : 0;
	close(fd);
	printf("xping: sink read %llu bytes\n", total);
	return n < 0;
}

static int bulk(const char *addr, int port, unsigned long long bytes)
{
	struct sockaddr_in sa;
	unsigned long long left = bytes;
	char buf[65536];
	int fd = dial(addr, port, &sa);

	if (fd < 0)
		return 1;
	memset(buf, 'b', sizeof(buf));
	while (left) {
		size_t len = left < sizeof(buf) ? left : sizeof(buf);

		if (write_all(fd, buf, len)) {
			perror("xping: bulk");
			return 1;
		}
		left -= len;
	}
	/* the sink's close after our end: everything read, nothing in flight */
	if (shutdown(fd, SHUT_WR) || read(fd, buf, 1) != 0) {
		perror("xping: bulk end");
		return 1;
	}
	close(fd);
	printf("xping: bulk sent %llu bytes\n", bytes);
	return 0;
}

static int server(int port)
{
	char req[REQ], reply[REPLY];
	unsigned long n = 0;
	int fd, r;

	memset(reply, 'r', sizeof(reply));
	fd = accept_one(port);
	if (fd < 0)
		return 1;
	nodelay(fd);
	while ((r = read_all(fd, req, sizeof(req))) == 1) {
		if (write_all(fd, reply, sizeof(reply))) {
			perror("xping: write");
			return 1;
		}
		n++;
	}
	if (r < 0) {
		fprintf(stderr, "xping: a request cut short after %lu\n", n);
		return 1;
	}
	close(fd);
	return 0;
}

static int client(const char *addr, int port, unsigned long n)
{
	struct timespec pause = { 0, PAUSE_NS };
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char req[REQ], reply[REPLY];
	uint64_t (*t)[2];
	unsigned long i;
	int fd;

	memset(req, 'q', sizeof(req));
	t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return 2;
	/* the server may still be starting */
	fd = dial(addr, port, &sa);
	if (fd < 0)
		return 1;
	nodelay(fd);
	if (getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		perror("xping: getsockname");
		return 1;
	}
	for (i = 0; i < n; i++) {
		nanosleep(&pause, NULL);
		t[i][0] = now_ns();
		if (write_all(fd, req, sizeof(req)) || read_all(fd, reply, sizeof(reply)) != 1) {
			perror("xping: request");
			break;
		}
		t[i][1] = now_ns();
	}
	close(fd);
	/* printed after the last, so that the console's writes delay none */
	for (unsigned long k = 0; k < i; k++)
		printf("xping: %lu %llu %llu %u\n", k, (unsigned long long)t[k][0],
		       (unsigned long long)t[k][1], ntohs(sa.sin_port));
	printf("xping: done %lu of %lu requests of %d bytes, replies of %d, port %u\n", i, n,
	       REQ, REPLY, ntohs(sa.sin_port));
	free(t);
	return i == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), strtoul(argv[4], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "sink"))
		return sink(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "bulk"))
		return bulk(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10));
	fprintf(stderr, "usage: netlat_xping server PORT\n"
		"       netlat_xping client ADDR PORT N\n"
		"       netlat_xping sink PORT\n"
		"       netlat_xping bulk ADDR PORT BYTES\n");
	return 2;
}
