/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Readers of received data for the receive tests (netlat_rx_test,
 * netlat_rxpkt_test): one read with its SO_TIMESTAMPNS stamp, and the
 * same messages to a reader blocked in recv() and to one busy-polling
 * with MSG_DONTWAIT, optionally each message only once the blocked one
 * sleeps in its recv() (so that it waits for every message).
 */
#ifndef NETLAT_RXREAD_H
#define NETLAT_RXREAD_H

#include <pthread.h>
#include <sys/syscall.h>
#include "netlat_tcp.h"

#define NL_POLL_MSGS	24
#define NL_POLL_LEN	1000
#define NL_POLL_GAP_MS	10

/*
 * One read of up to @len bytes (all of them with @waitall), with the
 * receive stamp of its data in *@stamp (0: none) and CLOCK_REALTIME just
 * after it in *@user.
 */
static inline ssize_t nl_read_stamped(int fd, void *buf, size_t len,
				      bool waitall, uint64_t *stamp,
				      uint64_t *user)
{
	char ctl[CMSG_SPACE(sizeof(struct timespec)) * 2];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	ssize_t n = recvmsg(fd, &mh, waitall ? MSG_WAITALL : 0);

	*user = nl_clock_ns(CLOCK_REALTIME);
	*stamp = 0;
	for (cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			*stamp = ts.tv_sec * 1000000000ull + ts.tv_nsec;
		}
	return n;
}

struct nl_poller {
	struct nl_conn *c;
	bool busy;			/* MSG_DONTWAIT in a loop, never blocks */
	int cpu;
	pid_t tid;
	unsigned int n;			/* messages read */
	uint64_t stamp[NL_POLL_MSGS], user[NL_POLL_MSGS];
	int err;
};

static inline void *nl_poll_reader(void *arg)
{
	static __thread char buf[NL_POLL_LEN];
	struct nl_poller *p = arg;
	unsigned int i;

	__atomic_store_n(&p->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (p->cpu >= 0)
		nl_pin_thread(p->cpu);
	for (i = 0; i < NL_POLL_MSGS && !p->err; i++) {
		uint64_t end = nl_mono_ns() + 10000000000ull;
		ssize_t n;

		/* one message per segment (TCP_NODELAY), read at once */
		do {
			n = nl_read_stamped(p->c->srv, buf, NL_POLL_LEN, !p->busy,
					    &p->stamp[i], &p->user[i]);
		} while (p->busy && n < 0 && errno == EAGAIN && nl_mono_ns() < end);
		if (n != NL_POLL_LEN)
			p->err = n < 0 ? errno : EIO;
		else
			__atomic_store_n(&p->n, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

struct nl_pollpair {
	struct nl_poller blk, busy;
	int sender_cpu;
	/* each message once the blocked reader read the ones before and sleeps */
	bool blocked_first;
	unsigned int not_asleep;	/* messages sent without it asleep */
};

/* blocked_first: wait (up to 2 s) for @p to have read @i and to sleep. */
static inline bool nl_poll_asleep(const struct nl_poller *p, unsigned int i)
{
	uint64_t end = nl_mono_ns() + 2000000000ull;
	pid_t tid;

	do {
		tid = __atomic_load_n(&p->tid, __ATOMIC_ACQUIRE);
		if (tid && __atomic_load_n(&p->n, __ATOMIC_ACQUIRE) == i &&
		    nl_thread_sleeps(tid))
			return true;
		nl_sleep_ms(1);
	} while (nl_mono_ns() < end && !p->err);
	return false;
}

/*
 * @pp's two TCP connections from namespace @ns_a to @addr in @ns_b,
 * TCP_NODELAY, the busy one's socket non-blocking; the busy reader on
 * the sender's CPU (it runs the moment the sender sleeps, with nothing to
 * wake on another CPU: a VM's spinning vCPU would compete with the host's
 * other threads for the time its data waits), the blocked one alone on
 * the last, woken there and switched to. 0, 1 with a single CPU (a busy
 * poller would starve the sender), -1 on errors.
 */
static inline int nl_pollpair_setup(struct nl_pollpair *pp, int ns_a, int ns_b,
				    const char *addr)
{
	int cpus[4], n = nl_usable_cpus(cpus, 4), one = 1, i;
	struct nl_poller *p[2] = { &pp->blk, &pp->busy };

	if (n < 2)
		return 1;
	pp->busy.cpu = pp->sender_cpu = cpus[0];
	pp->blk.cpu = cpus[n - 1];
	for (i = 0; i < 2; i++)
		if (nl_conn_connect(p[i]->c, ns_a, ns_b, addr, 0) ||
		    setsockopt(p[i]->c->cli, IPPROTO_TCP, TCP_NODELAY, &one,
			       sizeof(one)))
			return -1;
	return fcntl(pp->busy.c->srv, F_SETFL, O_NONBLOCK) ? -1 : 0;
}

static inline void nl_poll_traffic(void *arg)
{
	static char buf[NL_POLL_LEN];
	struct nl_pollpair *pp = arg;
	pthread_t tb, tp;
	unsigned int i;

	pp->blk.n = pp->busy.n = 0;
	pp->blk.tid = pp->busy.tid = 0;
	pp->blk.err = pp->busy.err = 0;
	pp->not_asleep = 0;
	if (pthread_create(&tb, NULL, nl_poll_reader, &pp->blk)) {
		pp->blk.err = EAGAIN;
		return;
	}
	if (pthread_create(&tp, NULL, nl_poll_reader, &pp->busy)) {
		pp->busy.err = EAGAIN;
		pthread_join(tb, NULL);
		return;
	}
	if (pp->sender_cpu >= 0)
		nl_pin_thread(pp->sender_cpu);
	/* both readers waiting before the first message */
	nl_sleep_ms(50);
	for (i = 0; i < NL_POLL_MSGS && !pp->blk.err && !pp->busy.err; i++) {
		if (pp->blocked_first && !nl_poll_asleep(&pp->blk, i))
			pp->not_asleep++;
		/* the blocked one's first: the second send does not delay it */
		if (send(pp->blk.c->cli, buf, NL_POLL_LEN, 0) != NL_POLL_LEN ||
		    send(pp->busy.c->cli, buf, NL_POLL_LEN, 0) != NL_POLL_LEN)
			pp->blk.err = errno ? errno : EIO;
		nl_sleep_ms(NL_POLL_GAP_MS);
	}
	pthread_join(tb, NULL);
	pthread_join(tp, NULL);
}

static inline void nl_poll_undo(void *arg)
{
	struct nl_pollpair *pp = arg;
	static char buf[NL_POLL_LEN * NL_POLL_MSGS];

	/* what an attempt left unread goes, the next starts on a message */
	while (recv(pp->blk.c->srv, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	while (recv(pp->busy.c->srv, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

#endif /* NETLAT_RXREAD_H */
