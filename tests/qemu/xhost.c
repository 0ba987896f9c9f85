// SPDX-License-Identifier: GPL-2.0
/*
 * The host's side of the two-VM join test (xhost.sh).
 *
 *   xhost relay PORT_A PEER_A PORT_B PEER_B DELAY_AB_US DELAY_BA_US \
 *         PROBE_A PROBE_B OUT STOP
 *
 * Relays the two VMs' Ethernet frames (QEMU UDP socket netdevs on 127.0.0.1):
 * what A sends to PORT_A reaches B's PEER_B after DELAY_AB_US, what B
 * sends to PORT_B reaches A's PEER_A after DELAY_BA_US; nothing else
 * carries their traffic. Meanwhile it probes each VM's clock through a
 * serial port (QEMU chardev sockets PROBE_A, PROBE_B): it writes a
 * number at its own CLOCK_MONOTONIC h1, the guest answers with that
 * number and its CLOCK_MONOTONIC g, it reads the answer at h2; so the
 * guest's clock minus the host's was in [g - h2, g - h1]. Lines
 * "A|B h1 h2 g" go to OUT. Ends when the file STOP exists.
 *
 *   xhost check PROBES JOIN_JSON DELAY_AB_US DELAY_BA_US ASYM_JSON
 *
 * Judges `netlat join --json --no-packets` of the two captures against the
 * probes and the relay's delays, and the same with --asym told the
 * relay's asymmetry (ASYM_JSON); TAP lines and "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME	65536
#define QUEUE		8192

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- relay ----------------------------------------------------------------- */

struct frame {
	uint64_t due;
	size_t len;
	unsigned char *data;
};

/* One direction: frames in arrival order, each due a fixed delay later. */
struct dir {
	int in;				/* bound to the port its sender sends to */
	struct sockaddr_in to;		/* the receiver's netdev */
	uint64_t delay;
	struct frame q[QUEUE];
	unsigned int head, tail;
	unsigned long long relayed, dropped;
};

static int udp_bound(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("xhost: bind");
		exit(1);
	}
	return fd;
}

static void dir_receive(struct dir *d)
{
	unsigned char buf[MAX_FRAME];
	ssize_t n;

	while ((n = recv(d->in, buf, sizeof(buf), 0)) > 0) {
		struct frame *f = &d->q[d->tail % QUEUE];

		if (d->tail - d->head == QUEUE) {
			d->dropped++;
			continue;
		}
		f->data = malloc(n);
		if (!f->data) {
			d->dropped++;
			continue;
		}
		memcpy(f->data, buf, n);
		f->len = n;
		f->due = now_ns() + d->delay;
		d->tail++;
	}
}

/* Send what is due; the time until the next frame is (ns), or -1. */
static int64_t dir_send(struct dir *d, int out)
{
	uint64_t t = now_ns();

	while (d->head != d->tail) {
		struct frame *f = &d->q[d->head % QUEUE];

		if (f->due > t)
			return f->due - t;
		sendto(out, f->data, f->len, 0, (struct sockaddr *)&d->to, sizeof(d->to));
		free(f->data);
		d->head++;
		d->relayed++;
	}
	return -1;
}

/* ---- clock probe --------------------------------------------------------- */

struct probe {
	const char *path, *name;
	int fd;
	uint64_t sent[256];		/* h1 by number */
	unsigned int next;
	uint64_t last;
	char line[128];
	size_t len;
	unsigned long long answers;
};

static void probe_connect(struct probe *p)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (p->fd >= 0)
		return;
	p->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->path);
	if (connect(p->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(p->fd);
		p->fd = -1;
	}
}

static void probe_send(struct probe *p)
{
	unsigned char c;

	probe_connect(p);
	if (p->fd < 0 || now_ns() - p->last < 100000000ull)
		return;
	c = p->next++ & 0xff;
	p->last = now_ns();
	p->sent[c] = p->last;
	if (write(p->fd, &c, 1) != 1) {
		close(p->fd);
		p->fd = -1;
	}
}

static void probe_read(struct probe *p, FILE *out)
{
	char buf[256];
	ssize_t n = read(p->fd, buf, sizeof(buf));
	uint64_t h2 = now_ns();
	ssize_t i;

	if (n <= 0) {
		close(p->fd);
		p->fd = -1;
		return;
	}
	for (i = 0; i < n; i++) {
		unsigned int k;
		unsigned long long g;

		if (buf[i] != '\n') {
			if (p->len < sizeof(p->line) - 1)
				p->line[p->len++] = buf[i];
			continue;
		}
		p->line[p->len] = 0;
		p->len = 0;
		/* "K G": the number written and the guest's clock when it read it */
		if (sscanf(p->line, "%u %llu", &k, &g) != 2 || k > 255 || !p->sent[k])
			continue;
		fprintf(out, "%s %llu %llu %llu\n", p->name, (unsigned long long)p->sent[k],
			(unsigned long long)h2, g);
		fflush(out);
		p->answers++;
	}
}

static int relay(char **argv)
{
	struct dir ab = { .delay = strtoull(argv[4], NULL, 10) * 1000 };
	struct dir ba = { .delay = strtoull(argv[5], NULL, 10) * 1000 };
	struct probe pr[2] = {
		{ .path = argv[6], .name = "A", .fd = -1 },
		{ .path = argv[7], .name = "B", .fd = -1 },
	};
	FILE *out = fopen(argv[8], "w");
	const char *stop = argv[9];
	struct stat st;

	if (!out) {
		perror(argv[8]);
		return 1;
	}
	/* A sends to argv[0]'s port; B's netdev listens on argv[3] */
	ab.in = udp_bound(atoi(argv[0]));
	ba.in = udp_bound(atoi(argv[2]));
	ab.to = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(atoi(argv[3])) };
	ba.to = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(atoi(argv[1])) };
	inet_pton(AF_INET, "127.0.0.1", &ab.to.sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &ba.to.sin_addr);
	while (stat(stop, &st)) {
		struct pollfd pfd[4] = {
			{ .fd = ab.in, .events = POLLIN }, { .fd = ba.in, .events = POLLIN },
			{ .fd = pr[0].fd, .events = POLLIN }, { .fd = pr[1].fd, .events = POLLIN },
		};
		int64_t w1, w2, wait_ms = 20;

		/* frames out of A go to B through ab.in, and leave from ba.in */
		w1 = dir_send(&ab, ba.in);
		w2 = dir_send(&ba, ab.in);
		if (w1 >= 0 && w1 / 1000000 < wait_ms)
			wait_ms = w1 / 1000000;
		if (w2 >= 0 && w2 / 1000000 < wait_ms)
			wait_ms = w2 / 1000000;
		poll(pfd, 4, (int)wait_ms);
		if (pfd[0].revents & POLLIN)
			dir_receive(&ab);
		if (pfd[1].revents & POLLIN)
			dir_receive(&ba);
		if (pr[0].fd >= 0 && pfd[2].revents & (POLLIN | POLLHUP))
			probe_read(&pr[0], out);
		if (pr[1].fd >= 0 && pfd[3].revents & (POLLIN | POLLHUP))
			probe_read(&pr[1], out);
		probe_send(&pr[0]);
		probe_send(&pr[1]);
	}
	fprintf(stderr, "xhost: relayed %llu A>B, %llu B>A frames (%llu, %llu dropped); "
		"%llu, %llu clock answers\n", ab.relayed, ba.relayed, ab.dropped, ba.dropped,
		pr[0].answers, pr[1].answers);
	fclose(out);
	return 0;
}

/* ---- check --------------------------------------------------------------- */

struct sample {
	uint64_t h1, h2, g;
};

static struct sample *smp[2];
static size_t nsmp[2];

static int passed, failed;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		passed++;
	else
		failed++;
}

/*
 * Guest @v's clock minus the host's at host time @h: the interval the
 * probes nearest @h give, widened by @drift_ppm for the time between.
 */
static bool guest_offset(unsigned int v, uint64_t h, double drift_ppm, double *lo, double *hi)
{
	size_t i, best = SIZE_MAX;
	uint64_t bd = UINT64_MAX;

	for (i = 0; i < nsmp[v]; i++) {
		uint64_t d = smp[v][i].h1 > h ? smp[v][i].h1 - h : h - smp[v][i].h1;

		if (d < bd) {
			bd = d;
			best = i;
		}
	}
	if (best == SIZE_MAX || bd > 2000000000ull)
		return false;
	*lo = (double)smp[v][best].g - (double)smp[v][best].h2 - drift_ppm * 1e-6 * bd;
	*hi = (double)smp[v][best].g - (double)smp[v][best].h1 + drift_ppm * 1e-6 * bd;
	return true;
}

/* "key":N after @p, or false (null, or absent). */
static bool json_ll(const char *p, const char *key, long long *v)
{
	char k[64];

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = p ? strstr(p, k) : NULL;
	return p && sscanf(p + strlen(k), "%lld", v) == 1;
}

static bool json_dbl(const char *p, const char *key, double *v)
{
	char k[64];

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = p ? strstr(p, k) : NULL;
	return p && sscanf(p + strlen(k), "%lf", v) == 1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void check_join(char **argv)
{
	FILE *f = fopen(argv[0], "r");
	char *json = slurp(argv[1]), *p, name[4];
	double dab = strtod(argv[2], NULL) * 1000, dba = strtod(argv[3], NULL) * 1000;
	unsigned long long h1, h2, g;
	unsigned int windows = 0, overlap = 0;
	double rate[2] = { 0, 0 }, rate_err[2] = { 1e9, 1e9 }, probe_drift, probe_err;
	long long at, lo, hi, from, to;
	double drift_lo, drift_hi;
	size_t cap[2] = { 0, 0 };

	if (!f || !json) {
		check(false, "the probes (%s) and the join's JSON (%s) are there", argv[0], argv[1]);
		goto out;
	}
	while (fscanf(f, "%3s %llu %llu %llu", name, &h1, &h2, &g) == 4) {
		unsigned int v = name[0] == 'B';

		if (nsmp[v] == cap[v]) {
			cap[v] = cap[v] ? 2 * cap[v] : 1024;
			smp[v] = realloc(smp[v], cap[v] * sizeof(*smp[v]));
		}
		smp[v][nsmp[v]++] = (struct sample){ h1, h2, g };
	}
	check(nsmp[0] >= 20 && nsmp[1] >= 20, "each VM's clock probed (%zu, %zu answers)",
	      nsmp[0], nsmp[1]);
	/*
	 * Each guest's rate against the host's from its two best probes (the
	 * shortest round trips) of the first and last quarter of its answers:
	 * B's against A's is the drift the slew injected, plus the guests'
	 * own; its error the round trips over the time between.
	 */
	for (unsigned int v = 0; v < 2; v++) {
		size_t q = nsmp[v] / 4, i, b0 = 0, b1 = nsmp[v] ? nsmp[v] - 1 : 0;

		for (i = 0; i < q; i++) {
			if (smp[v][i].h2 - smp[v][i].h1 < smp[v][b0].h2 - smp[v][b0].h1)
				b0 = i;
			if (smp[v][nsmp[v] - 1 - i].h2 - smp[v][nsmp[v] - 1 - i].h1 <
			    smp[v][b1].h2 - smp[v][b1].h1)
				b1 = nsmp[v] - 1 - i;
		}
		if (q < 2)
			break;
		{
			double t0 = (smp[v][b0].h1 + smp[v][b0].h2) / 2.0;
			double t1 = (smp[v][b1].h1 + smp[v][b1].h2) / 2.0;
			double o0 = smp[v][b0].g - t0, o1 = smp[v][b1].g - t1;

			rate[v] = (o1 - o0) / (t1 - t0) * 1e6;
			rate_err[v] = ((smp[v][b0].h2 - smp[v][b0].h1) +
				       (smp[v][b1].h2 - smp[v][b1].h1)) / 2.0 / (t1 - t0) * 1e6;
			printf("# %s's clock against the host's: %+.1f +- %.1f ppm over %.0f s\n",
			       v ? "B" : "A", rate[v], rate_err[v], (t1 - t0) / 1e9);
		}
	}
	probe_drift = rate[1] - rate[0];
	probe_err = rate_err[0] + rate_err[1];
	check(probe_drift - probe_err < 1100 && probe_drift + probe_err > 900,
	      "the probes see B's clock run %+.1f +- %.1f ppm against A's (adjtimex: +1000)",
	      probe_drift, probe_err);

	/* every window of the join against the probes at its time */
	p = strstr(json, "\"windows\":[");
	while (p && (p = strstr(p, "{\"from_ns\":"))) {
		double alo, ahi, blo, bhi, plo, phi, ha;

		if (!json_ll(p, "from_ns", &from) || !json_ll(p, "to_ns", &to) ||
		    !json_ll(p, "at_ns", &at)) {
			p++;
			continue;
		}
		p++;
		if (!json_ll(p, "lo_ns", &lo) || !json_ll(p, "hi_ns", &hi))
			continue;
		/* A's time at to the host's: by A's nearest probe */
		ha = 0;
		{
			size_t i, best = 0;
			long long bd = -1;

			for (i = 0; i < nsmp[0]; i++) {
				long long d = llabs((long long)(smp[0][i].g - at));

				if (bd < 0 || d < bd) {
					bd = d;
					best = i;
				}
			}
			if (!nsmp[0])
				continue;
			ha = (double)at - ((double)smp[0][best].g -
					   ((double)smp[0][best].h1 + smp[0][best].h2) / 2);
		}
		if (!guest_offset(0, (uint64_t)ha, 1000, &alo, &ahi) ||
		    !guest_offset(1, (uint64_t)ha, 1000, &blo, &bhi))
			continue;
		plo = blo - ahi;
		phi = bhi - alo;
		windows++;
		if (lo <= phi && hi >= plo)
			overlap++;
		printf("# window at A %.3f s: join B-A in [%lld, %lld] ns, probes [%.0f, %.0f] ns\n",
		       at / 1e9, lo, hi, plo, phi);
	}
	check(windows > 0 && overlap == windows,
	      "the join's bound overlaps the serial probes' in every window (%u of %u)",
	      overlap, windows);
	p = strstr(json, "\"clock\":{");
	if (json_dbl(p, "drift_lo_ppm", &drift_lo) && json_dbl(p, "drift_hi_ppm", &drift_hi))
		check(drift_lo <= probe_drift + probe_err && drift_hi >= probe_drift - probe_err &&
		      drift_lo > 0,
		      "the join's drift [%+.1f, %+.1f] ppm meets the probes' %+.1f +- %.1f, and "
		      "is not 0", drift_lo, drift_hi, probe_drift, probe_err);
	else
		check(false, "the join found one line for the whole capture");
	/* the wire never below the relay's delay, less the bound */
	for (int s = 0; s < 2; s++) {
		const char *d = strstr(json, s ? "\"sender\":\"B\"" : "\"sender\":\"A\"");
		long long joined, wmin, bmax;
		const char *w = d ? strstr(d, "\"wire\":") : NULL;
		const char *b = d ? strstr(d, "\"wire_bound\":") : NULL;
		double delay = s ? dba : dab;

		if (!json_ll(d, "joined", &joined) || !json_ll(w, "min", &wmin) ||
		    !json_ll(b, "max", &bmax)) {
			check(false, "%s>%s: the join's direction is there", s ? "B" : "A",
			      s ? "A" : "B");
			continue;
		}
		check(joined > 1000 && wmin + bmax >= delay,
		      "%s>%s: %lld packets joined, the wire's minimum %.3f ms (+ bound %.3f ms) "
		      "not below the relay's %.3f ms", s ? "B" : "A", s ? "A" : "B", joined,
		      wmin / 1e6, bmax / 1e6, delay / 1e6);
	}
	/*
	 * The ACK's way back: the sender's round trip, on its clock alone, is
	 * at least the relay's delays both ways; the wire back, like the wire
	 * there, never below the relay's delay less the bound. redis answers
	 * each request at once, so most ACKs ride on the peer's data.
	 */
	for (int s = 0; s < 2; s++) {
		const char *d = strstr(json, s ? "\"sender\":\"B\"" : "\"sender\":\"A\"");
		const char *a = d ? strstr(d, "\"ack\":{") : NULL;
		const char *r = NULL, *w = a ? strstr(a, "\"wire back\":") : NULL;
		const char *b = a ? strstr(a, "\"wire_back_bound\":") : NULL;
		long long joined, rtt, dly, rmin, wmin, bmax;
		double back = s ? dab : dba;
		char key[32];

		snprintf(key, sizeof(key), "\"%s round trip\":", s ? "B" : "A");
		r = a ? strstr(a, key) : NULL;
		if (!json_ll(a, "joined", &joined) || !json_ll(a, "rtt", &rtt) ||
		    !json_ll(a, "ack_delay", &dly) || !json_ll(r, "min", &rmin) ||
		    !json_ll(w, "min", &wmin) || !json_ll(b, "max", &bmax)) {
			check(false, "%s>%s: the join's ACK way back is there", s ? "B" : "A",
			      s ? "A" : "B");
			continue;
		}
		check(rtt * 2 > joined && rmin >= dab + dba,
		      "%s>%s: %lld of %lld joined packets have a round trip on %s's clock alone, "
		      "the shortest %.3f ms not below the relays' %.3f ms both ways", s ? "B" : "A",
		      s ? "A" : "B", rtt, joined, s ? "B" : "A", rmin / 1e6, (dab + dba) / 1e6);
		check(dly * 2 > joined && wmin + bmax >= back,
		      "%s>%s: %lld ACKs rode on %s's data; the wire back's minimum %.3f ms "
		      "(+ bound %.3f ms) not below the relay's %.3f ms", s ? "B" : "A",
		      s ? "A" : "B", dly, s ? "A" : "B", wmin / 1e6, bmax / 1e6, back / 1e6);
		/* A's bulk transfer: B answers it with pure ACKs alone (--acks on) */
		if (!s) {
			long long pure = -1, acks_out = -1;

			json_ll(a, "ack_delay_pure", &pure);
			json_ll(a, "acks_out", &acks_out);
			/* a delayed ACK can carry the ACKs of several packets */
			check(pure > 0 && acks_out > 0,
			      "A>B: %lld ACK delays from B's pure ACKs (%lld TCP_ACK_OUT records), "
			      "the wire back's floor above holding for them too", pure, acks_out);
		}
	}
	/* told the asymmetry, the estimate is centred: each wire at least its delay */
	free(json);
	json = slurp(argv[4]);
	for (int s = 0; s < 2 && json; s++) {
		const char *d = strstr(json, s ? "\"sender\":\"B\"" : "\"sender\":\"A\"");
		const char *w = d ? strstr(d, "\"wire\":") : NULL;
		double delay = s ? dba : dab;
		long long wmin = -1;
		bool have = json_ll(w, "min", &wmin);

		check(have && wmin >= delay - 500000,
		      "with --asym, %s>%s: the wire's minimum %.3f ms is the relay's %.3f ms or more "
		      "(less 0.5 ms)", s ? "B" : "A", s ? "A" : "B", wmin / 1e6, delay / 1e6);
	}
	if (!json)
		check(false, "the join with --asym (%s) is there", argv[4]);
out:
	free(json);
	if (f)
		fclose(f);
}

/* ---- xping: the application's round trip against its joined parts ------- */

/* as selftests/netlat_xping.c and tests/qemu/init.sh have them */
#define XPING_PORT	7001
#define XPING_REQ	100
#define XPING_REPLY	300
/* the clock reads around the stamps, and the guest's two paths to one clock */
#define XPING_SLOP_NS	50000LL
#define NUL		LLONG_MIN

struct xreq {
	long long t0, t1;		/* A's clock: before send(), after the read */
	bool seen;
};

/* One pair of the join's per-packet JSON on the xping flow. */
struct xpkt {
	bool by_a;			/* A sent it: a request; else a reply */
	unsigned int sport, dport;
	uint32_t seq, end_seq;
	long long driver, netif, wire, ack_delay;
	long long tx_stages, rx_stages;	/* the sender's, the receiver's, summed */
	bool pure_carrier;		/* its ACK rode on a pure ACK (--acks on) */
};

static long long json_or_nul(const char *p, const char *key)
{
	long long v;

	return json_ll(p, key, &v) ? v : NUL;
}

/* The keys' values after @p, summed; NUL if any is null or absent. */
static long long json_sum(const char *p, const char *const *keys, unsigned int n)
{
	long long sum = 0, v;

	for (unsigned int k = 0; k < n; k++) {
		if (!json_ll(p, keys[k], &v))
			return NUL;
		sum += v;
	}
	return sum;
}

/* A packet object of @line (join_json_packet's, one a line), or false. */
static bool xpkt_parse(const char *line, struct xpkt *x)
{
	static const char *const tx[] = { "sendmsg>xmit", "xmit>qdisc", "qdisc>driver" };
	static const char *const rx[] = { "netif>tcp", "tcp>queue", "queue>user" };
	const char *p = strstr(line, "{\"sender\":\"A\",\"family\":");
	const char *q = strstr(line, "{\"sender\":\"B\",\"family\":");
	long long sport, dport, seq, end;

	if (!p && !q)
		return false;
	x->by_a = p != NULL;
	p = p ? p : q;
	if (!json_ll(p, "sport", &sport) || !json_ll(p, "dport", &dport) ||
	    !json_ll(p, "seq", &seq) || !json_ll(p, "end_seq", &end))
		return false;
	x->sport = sport;
	x->dport = dport;
	x->seq = seq;
	x->end_seq = end;
	x->driver = json_or_nul(p, "driver_ns");
	x->netif = json_or_nul(p, "netif_ns");
	x->wire = json_or_nul(p, "wire_ns");
	x->ack_delay = json_or_nul(strstr(p, "\"ack\":{"), "delay_ns");
	/* one packet a line */
	x->pure_carrier = strstr(p, "\"carrier\":\"pure_ack\"") != NULL;
	x->tx_stages = json_sum(strstr(p, "\"send\":{"), tx, 3);
	x->rx_stages = json_sum(strstr(p, "\"receive\":{"), rx, 3);
	return true;
}

/* The join's clock window holding A's time @t, as window_at() finds it; -1 if none. */
static long window_of(const long long (*win)[2], size_t nwin, long long t)
{
	for (size_t i = 0; i < nwin; i++)
		if (win[i][0] <= t && t < win[i][1])
			return (long)i;
	return -1;
}

/*
 * The first byte of the stream on which request (reply) i begins at
 * first + i * @size: the most common such first of the packets of @size
 * whose A time (@by_a: the request's driver time, else the reply's
 * arrival) falls inside one request's interval. Found so, the packets
 * are then matched to requests by their bytes alone.
 */
static bool stream_base(const struct xpkt *x, size_t nx, bool by_a, uint32_t size,
			const struct xreq *rq, unsigned long n, uint32_t *base)
{
	uint32_t *c = calloc(nx ? nx : 1, sizeof(*c));
	size_t nc = 0, best = 0, best_votes = 0, i, k;
	unsigned long r;

	for (i = 0; c && i < nx; i++) {
		long long t = by_a ? x[i].driver : x[i].netif;

		if (x[i].by_a != by_a || x[i].end_seq - x[i].seq != size || t == NUL)
			continue;
		for (r = 0; r < n; r++)
			if (rq[r].seen && rq[r].t0 <= t && t <= rq[r].t1)
				break;
		if (r < n)
			c[nc++] = x[i].seq - (uint32_t)(r * size);
	}
	for (i = 0; i < nc; i++) {
		size_t votes = 0;

		for (k = 0; k < nc; k++)
			votes += c[k] == c[i];
		if (votes > best_votes) {
			best = i;
			best_votes = votes;
		}
	}
	if (nc)
		*base = c[best];
	free(c);
	return nc > 0;
}

static const struct xpkt *xpkt_find(const struct xpkt *x, size_t nx, bool by_a, uint32_t seq,
				    uint32_t size)
{
	for (size_t i = 0; i < nx; i++)
		if (x[i].by_a == by_a && x[i].seq == seq && x[i].end_seq == seq + size)
			return &x[i];
	return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* The median and the largest of @v[0..@n), sorted here; in us. */
static void med_max(long long *v, size_t n, double *med, double *max)
{
	qsort(v, n, sizeof(*v), cmp_ll);
	*med = n ? v[n / 2] / 1e3 : 0;
	*max = n ? v[n - 1] / 1e3 : 0;
}

/*
 * The xping flow (selftests/netlat_xping.c: N requests of A to B's port
 * 7001, each answered at once) against `netlat join --json` of it (its
 * packet lines, and the line holding "windows"): for each request, P the
 * request A sent and R the reply, which carried P's ACK. Its joined parts,
 * A's send stages of P, P's wire, B's ACK delay of P (P's arrival to R's
 * driver), R's wire and A's receive stages of R to the copy, must add up
 * to S within its application round trip app = t1 - t0, which holds them
 * and the syscalls around them. The two wires carry the join's clock
 * with opposite signs, so their sum is free of its offset, but not of a
 * change of window between P and R: such requests are left out of the
 * bounds on S.
 */
static void check_xping(const char *lines, const char *json, unsigned long n)
{
	FILE *f = fopen(lines, "r"), *j = fopen(json, "r");
	struct xreq *rq = calloc(n ? n : 1, sizeof(*rq));
	long long (*win)[2] = NULL, *app = calloc(n ? n : 1, 3 * sizeof(long long));
	long long *sum = app + n, *gap = sum + n, least = LLONG_MAX;
	size_t nx = 0, cx = 0, nwin = 0, m = 0;
	unsigned long found = 0, carrier_bad = 0, outside = 0, straddle = 0, over = 0, i;
	unsigned long pure = 0;
	unsigned int port = 0;
	struct xpkt *x = NULL;
	char *line = NULL, *p;
	size_t len = 0;
	uint32_t base_a = 0, base_b = 0;
	bool have_base;

	if (!f || !j || !rq || !app || !n) {
		check(false, "xping: its lines (%s) and its join (%s) are there", lines, json);
		goto out;
	}
	while (getline(&line, &len, f) > 0) {
		unsigned long k;
		long long t0, t1;
		unsigned int pt;

		if (sscanf(line, "xping: %lu %lld %lld %u", &k, &t0, &t1, &pt) == 4 && k < n &&
		    t1 >= t0) {
			rq[k] = (struct xreq){ t0, t1, true };
			port = pt;
		}
	}
	while (getline(&line, &len, j) > 0) {
		struct xpkt one;

		p = strstr(line, "\"windows\":[");
		while (p && *p != ']' && (p = strstr(p, "{\"from_ns\":"))) {
			long long from, to;

			if (json_ll(p, "from_ns", &from) && json_ll(p, "to_ns", &to)) {
				win = realloc(win, (nwin + 1) * sizeof(*win));
				win[nwin][0] = from;
				win[nwin++][1] = to;
			}
			p = strpbrk(p + 1, "{]");
		}
		if (!xpkt_parse(line, &one) ||
		    !(one.by_a ? one.sport == port && one.dport == XPING_PORT
			       : one.sport == XPING_PORT && one.dport == port))
			continue;
		if (nx == cx) {
			cx = cx ? 2 * cx : 256;
			x = realloc(x, cx * sizeof(*x));
		}
		x[nx++] = one;
	}
	have_base = stream_base(x, nx, true, XPING_REQ, rq, n, &base_a) &&
		    stream_base(x, nx, false, XPING_REPLY, rq, n, &base_b);
	for (i = 0; have_base && i < n; i++) {
		const struct xpkt *P = xpkt_find(x, nx, true, base_a + i * XPING_REQ, XPING_REQ);
		const struct xpkt *R = xpkt_find(x, nx, false, base_b + i * XPING_REPLY,
						 XPING_REPLY);
		long long s;

		if (!rq[i].seen || !P || !R || P->tx_stages == NUL || P->wire == NUL ||
		    P->ack_delay == NUL || R->wire == NUL || R->rx_stages == NUL ||
		    P->driver == NUL || P->netif == NUL || R->driver == NUL || R->netif == NUL)
			continue;
		/* B acknowledged P at once, before R (a new connection's quick ACK) */
		if (P->pure_carrier) {
			pure++;
			continue;
		}
		found++;
		/* both on B's clock: the join's carrier of P's ACK is R */
		if (P->ack_delay != R->driver - P->netif)
			carrier_bad++;
		/* on A's clock alone: P's sendmsg in send(), R's copy in the read */
		if (P->driver - P->tx_stages < rq[i].t0 - XPING_SLOP_NS ||
		    R->netif + R->rx_stages > rq[i].t1 + XPING_SLOP_NS)
			outside++;
		if (window_of(win, nwin, P->driver) != window_of(win, nwin, R->netif)) {
			straddle++;
			continue;
		}
		s = P->tx_stages + P->wire + P->ack_delay + R->wire + R->rx_stages;
		app[m] = rq[i].t1 - rq[i].t0;
		sum[m] = s;
		gap[m] = app[m] - s;
		if (gap[m] < least)
			least = gap[m];
		over += gap[m] > 2000000;
		m++;
	}
	check(found * 100 >= n * 95,
	      "xping: %lu of %lu requests joined with every part (A's send stages, the wire "
	      "there, B's ACK delay, the wire back, A's receive stages), at least 95%% (%lu "
	      "whose ACK was a pure ACK before the reply left out)", found, n, pure);
	check(found && !carrier_bad,
	      "xping: the join's ACK delay of each request is B's time from its arrival to the "
	      "reply's driver (%lu of %lu not)", carrier_bad, found);
	check(found && !outside,
	      "xping: on A's clock, each request's sendmsg and its reply's copy lie inside "
	      "send() to the read's return (50 us; %lu of %lu not)", outside, found);
	check(m && least >= -XPING_SLOP_NS,
	      "xping: every request's joined parts S fit in its round trip: app - S >= -50 us "
	      "(least %+.1f us of %zu; %lu across a clock window's edge left out)",
	      m ? least / 1e3 : 0.0, m, straddle);
	{
		double am, ax, sm, sx, gm, gx;

		med_max(app, m, &am, &ax);
		med_max(sum, m, &sm, &sx);
		med_max(gap, m, &gm, &gx);
		printf("# xping: app median %.1f us, max %.1f us; S median %.1f us, max %.1f us; "
		       "app - S median %.1f us, max %.1f us (%lu above 2 ms)\n",
		       am, ax, sm, sx, gm, gx, over);
		check(m && gm <= 1000,
		      "xping: the median of app - S, %.1f us, is 1 ms or less (the syscalls "
		      "around the stamps; max %.1f us)", gm, gx);
	}
out:
	if (f)
		fclose(f);
	if (j)
		fclose(j);
	free(line);
	free(rq);
	free(app);
	free(win);
	free(x);
}

static int summary(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}

int main(int argc, char **argv)
{
	if (argc == 12 && !strcmp(argv[1], "relay"))
		return relay(argv + 2);
	if ((argc == 7 || argc == 10) && !strcmp(argv[1], "check")) {
		check_join(argv + 2);
		if (argc == 10)
			check_xping(argv[7], argv[8], strtoul(argv[9], NULL, 10));
		return summary();
	}
	if (argc == 5 && !strcmp(argv[1], "xping")) {
		check_xping(argv[2], argv[3], strtoul(argv[4], NULL, 10));
		return summary();
	}
	fprintf(stderr, "usage: xhost relay PORT_A PEER_A PORT_B PEER_B DELAY_AB_US "
		"DELAY_BA_US PROBE_A PROBE_B OUT STOP\n"
		"       xhost check PROBES JOIN_JSON DELAY_AB_US DELAY_BA_US ASYM_JSON "
		"[XPING_LINES XPING_JSON XPING_N]\n"
		"       xhost xping XPING_LINES XPING_JSON XPING_N\n");
	return 2;
}
