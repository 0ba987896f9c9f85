// SPDX-License-Identifier: GPL-2.0
/*
 * netlat_rxwait - the same messages to a reader blocked in recv() and to
 * one busy-polling with MSG_DONTWAIT (make demo).
 *
 *   netlat_rxwait SENDER_NETNS RECEIVER_NETNS ADDR PORT [COUNT [LEN [GAP_MS]]]
 *
 * Two TCP connections from SENDER_NETNS (a /proc/PID/ns/net path) to ADDR
 * (an IPv4 address in RECEIVER_NETNS): to PORT, read by the blocking
 * reader, and to PORT + 1, read by the busy one. COUNT messages of LEN
 * bytes (default 200 of 1000) go to each every GAP_MS milliseconds
 * (default 5), TCP_NODELAY. Each reader asks for SO_TIMESTAMPNS and says
 * how long its data waited from the kernel's receive stamp to its read
 * (p50 and p90, its own view of netlat's netif>user). Exit status 0 only
 * if both readers got every byte sent.
 */
#include "netlat_util.h"

#include <pthread.h>
#include <sys/syscall.h>
#include "netlat_tcp.h"

struct reader {
	const char *name;
	int fd;
	bool busy;
	int cpu;			/* -1: not pinned */
	pid_t tid;
	uint64_t want, got;
	double *wait_us;		/* per message: receive stamp -> read */
	unsigned int n;
	int err;
};

static unsigned int g_count = 200, g_len = 1000, g_gap_ms = 5;

/* One read of a message, with its receive stamp (CLOCK_REALTIME). */
static ssize_t read_msg(struct reader *r, char *buf, uint64_t *stamp)
{
	char ctl[CMSG_SPACE(sizeof(struct timespec))];
	struct iovec iov = { .iov_base = buf, .iov_len = g_len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	ssize_t n = recvmsg(r->fd, &mh, r->busy ? MSG_DONTWAIT : MSG_WAITALL);

	*stamp = 0;
	for (cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			*stamp = ts.tv_sec * 1000000000ull + ts.tv_nsec;
		}
	return n;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char *buf = malloc(g_len);

	r->tid = syscall(SYS_gettid);
	if (r->cpu >= 0)
		nl_pin_thread(r->cpu);
	while (buf && r->got < r->want) {
		uint64_t stamp;
		ssize_t n = read_msg(r, buf, &stamp);
		uint64_t now = nl_clock_ns(CLOCK_REALTIME);

		if (n < 0 && r->busy && errno == EAGAIN)
			continue;
		if (n <= 0) {
			r->err = n ? errno : EPIPE;
			break;
		}
		r->got += n;
		if (stamp && r->n < g_count)
			r->wait_us[r->n++] = (double)(int64_t)(now - stamp) / 1000;
	}
	free(buf);
	return NULL;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, unsigned int n, unsigned int p)
{
	return n ? v[(n - 1) * p / 100] : 0;
}

/* A connection @ns_cli -> @addr:@port listened on in @ns_srv. */
static int conn(struct nl_conn *c, int ns_cli, int ns_srv, const char *addr,
		uint16_t port)
{
	int one = 1;

	if (nl_conn_connect(c, ns_cli, ns_srv, addr, port))
		return -1;
	if (setsockopt(c->cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(c->srv, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct reader rd[2] = {
		{ .name = "blocking reader (recv)" },
		{ .name = "busy-polling reader (MSG_DONTWAIT, the sender's CPU)", .busy = true },
	};
	struct nl_conn c[2];
	pthread_t th[2];
	int ns_a, ns_b, cpus[8], ncpu, i, status = 0;
	unsigned int m, port;
	char *buf;

	if (argc < 5 || argc > 8) {
		fprintf(stderr, "usage: %s SENDER_NETNS RECEIVER_NETNS ADDR PORT [COUNT [LEN [GAP_MS]]]\n",
			argv[0]);
		return 2;
	}
	port = atoi(argv[4]);
	if (argc > 5)
		g_count = atoi(argv[5]);
	if (argc > 6)
		g_len = atoi(argv[6]);
	if (argc > 7)
		g_gap_ms = atoi(argv[7]);
	nl_ns_home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	ns_a = open(argv[1], O_RDONLY | O_CLOEXEC);
	ns_b = open(argv[2], O_RDONLY | O_CLOEXEC);
	buf = calloc(1, g_len);
	if (nl_ns_home < 0 || ns_a < 0 || ns_b < 0 || !buf || !g_count || !g_len ||
	    port < 1 || port > 65534) {
		fprintf(stderr, "netlat_rxwait: bad arguments or namespaces: %s\n",
			strerror(errno));
		return 2;
	}
	ncpu = nl_usable_cpus(cpus, 8);
	for (i = 0; i < 2; i++) {
		if (conn(&c[i], ns_a, ns_b, argv[3], port + i)) {
			fprintf(stderr, "netlat_rxwait: connection to %s:%u: %s\n",
				argv[3], port + i, strerror(errno));
			return 1;
		}
		rd[i].fd = c[i].srv;
		rd[i].want = (uint64_t)g_count * g_len;
		rd[i].wait_us = calloc(g_count, sizeof(double));
		/*
		 * The busy reader on the sender's CPU (it runs the moment the
		 * sender sleeps; a VM's spinning vCPU of its own would compete
		 * with the host's threads), the blocked one woken on the last.
		 */
		rd[i].cpu = ncpu < 2 ? -1 : rd[i].busy ? cpus[0] : cpus[ncpu - 1];
	}
	if (fcntl(rd[1].fd, F_SETFL, O_NONBLOCK))
		return 1;
	printf("netlat_rxwait: %u messages of %u bytes, %u ms apart, to %s:%u (%s) and to %s:%u (%s)\n",
	       g_count, g_len, g_gap_ms, argv[3], port, rd[0].name, argv[3],
	       port + 1, rd[1].name);
	fflush(stdout);
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, reader_main, &rd[i]))
			return 1;
	if (ncpu >= 2)
		nl_pin_thread(cpus[0]);
	for (m = 0; m < g_count; m++) {
		/* the blocked one's first: the second send does not delay it */
		for (i = 0; i < 2; i++)
			if (nl_send_all(c[i].cli, buf, g_len))
				status = 1;
		nl_sleep_ms(g_gap_ms);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		qsort(rd[i].wait_us, rd[i].n, sizeof(double), cmp_dbl);
		printf("netlat_rxwait: %s, tid %d: got %llu of %llu bytes; receive stamp -> read (SO_TIMESTAMPNS) p50 %.1f us, p90 %.1f us\n",
		       rd[i].name, (int)rd[i].tid, (unsigned long long)rd[i].got,
		       (unsigned long long)rd[i].want, pct(rd[i].wait_us, rd[i].n, 50),
		       pct(rd[i].wait_us, rd[i].n, 90));
		if (rd[i].err || rd[i].got != rd[i].want)
			status = 1;
		nl_conn_close(&c[i]);
	}
	return status;
}
