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

static int check_join(char **argv)
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
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}

int main(int argc, char **argv)
{
	if (argc == 12 && !strcmp(argv[1], "relay"))
		return relay(argv + 2);
	if (argc == 7 && !strcmp(argv[1], "check"))
		return check_join(argv + 2);
	fprintf(stderr, "usage: xhost relay PORT_A PEER_A PORT_B PEER_B DELAY_AB_US "
		"DELAY_BA_US PROBE_A PROBE_B OUT STOP\n"
		"       xhost check PROBES JOIN_JSON DELAY_AB_US DELAY_BA_US ASYM_JSON\n");
	return 2;
}
