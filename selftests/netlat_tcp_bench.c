// SPDX-License-Identifier: GPL-2.0
/*
 * netlat_tcp_bench: TCP bulk throughput between two network namespaces
 * (veth) with the module unloaded, loaded but idle, and with every TCP
 * probe group enabled while a reader drains the rings; then with every
 * probe on but an in-kernel filter keeping all records out ("filtered":
 * the cost of a filtered-out event), and as a flight recorder (overwrite
 * mode, a trigger armed, no reader), and at the packet level (the kernel
 * follows each packet and writes one record per packet, "packets"; only
 * for packets slower than 5 ms, "slow"; with a filter keeping every socket
 * out, "kept out": what the hooks cost when the packet level follows
 * nothing). Figures, not asserts: each mode runs -k times, the modes
 * alternating, and the medians and their ratios to "unloaded" are
 * printed, and the median of each round's own ratios (TCG's speed drifts
 * over a run; a round's modes run back to back); once with the veth's
 * default GSO skbs ("gso"), once with one segment per skb ("1seg"), and
 * once over the VM's two virtio NICs on their qemu hub ("virtio": no TSO
 * there, the guest segments in software, a start_xmit per segment). With
 * probes on, records/s and lost records (LOST counts, ring drops and
 * kprobe misses) are exact, and so are records per data segment (the
 * sender namespace's OutSegs).
 *
 * The peer: when /bin/bpftrace is there (make bench puts it into the VM),
 * each round also runs a bpftrace script on the same TCP hooks (with the
 * module loaded and idle), the usual BPF way: start times in maps keyed by
 * skb, socket or thread, hist() of the deltas, count() of each hook's hits,
 * nothing printed per event; its throughput ratio is printed beside
 * netlat's, and its hit counts give the exact hook hits per data segment.
 * If bpftrace cannot run or attach, the bench says why and goes on.
 *
 * The receive benches ("rx tcp": the same bulk transfer; "rx udp": A blasts
 * 1400-byte datagrams, B counts the bytes it reads): the module unloaded,
 * and the rx and rx_sched groups on at the events level with a reader, as
 * a flight recorder, at the packet level (every packet recorded), packet
 * level slow-only (5 ms) and with every socket kept out, and the bpftrace
 * peer on the same receive hooks, alternated; medians, ratios to
 * "unloaded", and exact records per received segment (B's InSegs or
 * InDatagrams), losses and rx_untracked.
 *
 * Every transfer is an instruction-count window (netlat_insn.h): make
 * bench counts the guest's instructions per segment in each mode; -i
 * prints the kernel's symbols and every module's sections at the start and
 * netlat's at each load, for the host to name the counted addresses.
 * The server bench ("server", first): Debian's redis-server in B answers
 * redis-benchmark's GETs (100-byte values, 20 clients, no pipelining) from
 * A with the module unloaded, loaded and idle, and with every group on at
 * the events level, the packet level, slow-only and kept out: instructions
 * per request, the whole machine's (kernel and user) among them.
 *
 * -t LIST runs only the benches named in LIST (comma-separated): server,
 * gso, virtio, rx (tcp and udp), 1seg; tx is gso,virtio,1seg.
 * -K N: the packet modes keep their histograms by key too (N: the
 * NETLAT_KEY_* bits; not for the baseline module), so that beside -b the
 * packet modes give the cost of keying.
 *
 * The module is loaded from -m PATH (default /netlat.ko) and unloaded with
 * finit_module/delete_module; it is left loaded at exit. With -b PATH, each
 * round also runs an idle transfer and the events, filtered, packets and
 * slow modes with the module at PATH (a baseline build, e.g. of main: make
 * bench with NETLAT_BENCH_BASE), so a change is measured against it in the
 * same run: before this tree's modes in odd rounds, after them in even
 * ones, each module's first transfer after its load an idle one.
 *
 * usage: netlat_tcp_bench [-k repeats] [-s seconds] [-m netlat.ko]
 *                         [-b baseline.ko] [-t tx|rx|server] [-i]
 */
#include "netlat_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "netlat_nl.h"
#include "netlat_snap.h"
#include "netlat_filter.h"
#include "netlat_insn.h"

#define ADDR_B "198.51.100.2"
/* the virtio series: the VM's eth0 in A, eth1 in B, on one qemu hub */
#define VIRTIO_A "192.0.2.1"
#define VIRTIO_B "192.0.2.2"

/* B's address the transfers go to: the veth pair's, or eth1's */
static const char *dst_addr = ADDR_B;

static int ns_orig, ns_a, ns_b;
static const char *ko_path = "/netlat.ko";
/* -b: a baseline module whose modes run in the same rounds ("base") */
static const char *base_path;
/* -i: print what names the instruction windows' addresses (netlat_insn.h) */
static bool insn_names;

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "netlat_tcp_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static bool module_loaded(void)
{
	return !access("/sys/module/netlat", F_OK);
}

static void module_set(bool load)
{
	int fd, i;

	if (load == module_loaded())
		return;
	if (load) {
		fd = open(ko_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_finit_module, fd, "", 0))
			die(ko_path, errno);
		close(fd);
		for (i = 0; i < 100 && access(NETLAT_DEVICE_PATH, F_OK); i++)
			nl_sleep_ms(10);
		if (insn_names)
			nl_insn_module("netlat", ko_path);
	} else {
		/* an armed ftrace hook holds the module */
		nl_disarm();
		if (syscall(SYS_delete_module, "netlat", O_NONBLOCK))
			die("delete_module netlat", errno);
	}
}

/* The module from @path loaded in place of the one loaded now. */
static void module_reload(const char *path)
{
	module_set(false);
	ko_path = path;
	module_set(true);
}

static int new_ns(void)
{
	int fd;

	if (unshare(CLONE_NEWNET))
		die("unshare", errno);
	fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("netns", errno);
	setns(ns_orig, CLONE_NEWNET);
	return fd;
}

static void topology(void)
{
	int err;

	ns_orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	ns_a = new_ns();
	ns_b = new_ns();
	setns(ns_a, CLONE_NEWNET);
	err = nlr_veth("nba0", "nbb0", ns_b);
	if (!err)
		err = nlr_addr4("nba0", "198.51.100.1", 24);
	if (!err)
		err = nlr_link_up("nba0");
	if (!err)
		err = nlr_link_up("lo");
	setns(ns_b, CLONE_NEWNET);
	if (!err)
		err = nlr_addr4("nbb0", ADDR_B, 24);
	if (!err)
		err = nlr_link_up("nbb0");
	if (!err)
		err = nlr_link_up("lo");
	setns(ns_orig, CLONE_NEWNET);
	if (err)
		die("veth topology", -err);
}

/* Move @dev into namespace @ns with @addr/24, up. */
static int nic_into(const char *dev, int ns, const char *addr)
{
	int err = nlr_set_netns(dev, ns);

	setns(ns, CLONE_NEWNET);
	if (!err) {
		nlr_no_ipv6(dev);
		err = nlr_addr4(dev, addr, 24);
	}
	if (!err)
		err = nlr_link_up(dev);
	setns(ns_orig, CLONE_NEWNET);
	return err;
}

/*
 * eth0 into A and eth1 into B, if the VM has both: a VM's own NICs
 * (virtio_net on a qemu hub, no TSO: the guest segments each GSO packet
 * in software, one start_xmit per segment). False if absent.
 */
static bool topology_virtio(void)
{
	int err;

	if (!if_nametoindex("eth0") || !if_nametoindex("eth1"))
		return false;
	err = nic_into("eth0", ns_a, VIRTIO_A);
	if (!err)
		err = nic_into("eth1", ns_b, VIRTIO_B);
	if (err)
		printf("bench: tcp virtio skipped: %s\n", strerror(-err));
	return !err;
}

static void *sink_main(void *arg)
{
	static char buf[1 << 17];
	int fd = *(int *)arg;

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

/* Bytes/s of one bulk transfer A -> B lasting @secs. */
static double transfer(double secs)
{
	static char buf[1 << 16];
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	uint64_t t0, end, bytes = 0;
	int lfd, cli, srv;
	pthread_t th;

	setns(ns_b, CLONE_NEWNET);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, dst_addr, &a.sin_addr);
	if (lfd < 0 || bind(lfd, (void *)&a, sizeof(a)) || listen(lfd, 1) ||
	    getsockname(lfd, (void *)&a, &alen))
		die("listen", errno);
	setns(ns_a, CLONE_NEWNET);
	cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cli < 0 || connect(cli, (void *)&a, sizeof(a)))
		die("connect", errno);
	setns(ns_orig, CLONE_NEWNET);
	srv = accept(lfd, NULL, NULL);
	if (srv < 0)
		die("accept", errno);
	pthread_create(&th, NULL, sink_main, &srv);
	nl_insn_begin();
	t0 = nl_mono_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	while (nl_mono_ns() < end) {
		ssize_t n = write(cli, buf, sizeof(buf));

		if (n <= 0)
			die("write", errno);
		bytes += n;
	}
	shutdown(cli, SHUT_WR);
	pthread_join(th, NULL);
	t0 = nl_mono_ns() - t0;
	nl_insn_mark();
	close(cli);
	close(srv);
	close(lfd);
	return (double)bytes * 1e9 / (double)t0;
}

#define UDP_DGRAM	1400

struct udp_sink {
	int fd;
	volatile bool stop;
	uint64_t bytes;	/* each read is one UDP_DGRAM datagram */
};

/* Count what B reads until told to stop and the socket has gone quiet. */
static void *udp_sink_main(void *arg)
{
	static char buf[UDP_DGRAM];
	struct udp_sink *u = arg;

	for (;;) {
		ssize_t n = recv(u->fd, buf, sizeof(buf), 0);

		if (n < 0) {
			if (u->stop && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			continue;
		}
		u->bytes += n;
	}
	return NULL;
}

/*
 * Bytes/s B read while A blasted UDP_DGRAM-byte datagrams at it for @secs
 * (datagrams/s is that over UDP_DGRAM); what B's buffer could not take is
 * dropped (RcvbufErrors), not counted.
 */
static double udp_blast(double secs)
{
	static char buf[UDP_DGRAM];
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tmo = { .tv_usec = 100000 };
	socklen_t alen = sizeof(a);
	struct udp_sink u = { 0 };
	int rcvbuf = 4 << 20, snd;
	uint64_t t0, end;
	pthread_t th;

	setns(ns_b, CLONE_NEWNET);
	u.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, dst_addr, &a.sin_addr);
	if (u.fd < 0 || bind(u.fd, (void *)&a, sizeof(a)) ||
	    getsockname(u.fd, (void *)&a, &alen))
		die("udp bind", errno);
	setsockopt(u.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(u.fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	setns(ns_a, CLONE_NEWNET);
	snd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (snd < 0 || connect(snd, (void *)&a, sizeof(a)))
		die("udp connect", errno);
	setns(ns_orig, CLONE_NEWNET);
	pthread_create(&th, NULL, udp_sink_main, &u);
	nl_insn_begin();
	t0 = nl_mono_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	while (nl_mono_ns() < end)
		/* ENOBUFS and the like: the datagram is just not sent */
		(void)!send(snd, buf, sizeof(buf), 0);
	u.stop = true;
	pthread_join(th, NULL);
	nl_insn_mark();
	/* the sink's last 100 ms of quiet are not receive time */
	t0 = nl_mono_ns() - t0 - tmo.tv_usec * 1000ULL;
	close(snd);
	close(u.fd);
	return (double)u.bytes * 1e9 / (double)t0;
}

/* Which family wrote a record: the split of "records per segment". */
enum rec_kind { KIND_TCP, KIND_RX, KIND_OTHER, NR_KINDS };

static enum rec_kind rec_kind(unsigned int type)
{
	if ((type >= NETLAT_REC_TCP_SENDMSG && type <= NETLAT_REC_TCP_DEV) ||
	    type == NETLAT_REC_TCP_PKT)
		return KIND_TCP;
	if ((type >= NETLAT_REC_RX_NETIF && type < NETLAT_REC_TCP_PKT) ||
	    type == NETLAT_REC_RX_PKT)
		return KIND_RX;
	return KIND_OTHER;
}

/* The receive records by type, for the receive benches' split. */
static const char *const rx_type_names[] = {
	"netif", "transport", "queue", "copy", "drop", "wake", "pkt",
};
#define NR_RX_TYPES	(sizeof(rx_type_names) / sizeof(rx_type_names[0]))

/* @type's slot in rx_type_names, or -1 if not a receive record. */
static int rx_slot(unsigned int type)
{
	if (type >= NETLAT_REC_RX_NETIF && type <= NETLAT_REC_RX_WAKE)
		return type - NETLAT_REC_RX_NETIF;
	return type == NETLAT_REC_RX_PKT ? (int)NR_RX_TYPES - 1 : -1;
}

struct drain {
	int fd;
	volatile bool stop;
	uint64_t records, lost, kinds[NR_KINDS], rx_types[NR_RX_TYPES];
};

static void *drain_main(void *arg)
{
	static unsigned char buf[1 << 18];
	struct drain *d = arg;
	struct pollfd p = { .fd = d->fd, .events = POLLIN };

	for (;;) {
		ssize_t n = read(d->fd, buf, sizeof(buf));
		size_t off = 0;

		if (n < 0 && errno == EAGAIN) {
			if (d->stop)
				break;
			poll(&p, 1, 20);
			continue;
		}
		if (n <= 0)
			break;
		while (off < (size_t)n) {
			const struct netlat_rec_hdr *h = (const void *)(buf + off);

			if (h->type == NETLAT_REC_LOST)
				d->lost += ((const struct netlat_rec_lost *)h)->count;
			else if (h->type != NETLAT_REC_STREAM) {
				int slot = rx_slot(h->type);

				d->records++;
				d->kinds[rec_kind(h->type)]++;
				if (slot >= 0)
					d->rx_types[slot]++;
			}
			off += h->size;
		}
	}
	return NULL;
}

struct probe_run {
	double bps, rec_per_s;
	uint64_t records, lost, dropped, missed, filtered, overwritten, segs;
	uint64_t pkt_mem, untracked, rx_untracked, kinds[NR_KINDS];
	uint64_t rx_types[NR_RX_TYPES], rx_drops;
};

enum probe_mode {
	PROBES_READ,		/* stream mode, a reader drains */
	PROBES_FILTERED,	/* as READ, a filter keeps every record out */
	PROBES_FLIGHT,		/* overwrite mode, a trigger armed, no reader */
	PROBES_PACKETS,		/* as READ at the packet level */
	PROBES_SLOW,		/* as PACKETS, records only from 5 ms */
	PROBES_KEPT_OUT,	/* as PACKETS, a filter keeps every socket out */
	PROBES_SAMPLED,		/* as PACKETS, sent packets sampled 1 in 16 KiB */
};

#define BENCH_SAMPLE	16	/* netlat_config.sample of PROBES_SAMPLED */

/* The MIB counter @name of the /proc/net/snmp line @proto in namespace @ns. */
static uint64_t snmp_counter(int ns, const char *proto, const char *name)
{
	char line[1024], names[1024] = "";
	unsigned long long v = 0;
	size_t plen = strlen(proto);
	FILE *f;

	setns(ns, CLONE_NEWNET);
	f = fopen("/proc/net/snmp", "r");
	setns(ns_orig, CLONE_NEWNET);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *save1, *save2, *n, *x;

		if (strncmp(line, proto, plen))
			continue;
		if (!names[0]) {
			strcpy(names, line);
			continue;
		}
		n = strtok_r(names, " \n", &save1);
		x = strtok_r(line, " \n", &save2);
		while (n && x && strcmp(n, name)) {
			n = strtok_r(NULL, " \n", &save1);
			x = strtok_r(NULL, " \n", &save2);
		}
		if (n && x)
			v = strtoull(x, NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

/*
 * What one run measures: its traffic (bytes/s over @secs), the MIB counter
 * that is its segments' oracle, and the probe groups on (0: all of them).
 */
struct workload {
	double (*run)(double secs);
	uint64_t (*units)(void);	/* its units so far, if not a MIB's */
	const int *ns;
	const char *proto, *counter;
	uint64_t groups;
	const char *drops;	/* the counter of what B could not take, if any */
};

/* The TCP bench: A sends, B's sink reads; A's OutSegs are the data segments. */
static const struct workload tcp_send = {
	.run = transfer, .ns = &ns_a, .proto = "Tcp:", .counter = "OutSegs",
};

static uint64_t segs_of(const struct workload *w)
{
	if (w->units)
		return w->units();
	return snmp_counter(*w->ns, w->proto, w->counter);
}

/*
 * What the instruction window that just closed was (netlat_insn.h): the
 * series and round set by the caller, the mode, its data segments.
 */
static const char *insn_series = "";
static unsigned int insn_round;
static bool insn_base;	/* the baseline module (-b) is the one loaded */
/* -K: the packet level keeps its histograms by these NETLAT_KEY_* too */
static uint32_t bench_keys;

static void insn_label(const char *mode, uint64_t segs, double bps)
{
	printf("NETLAT-INSN w=%u series=%s mode=%s%s round=%u segs=%llu mbps=%.1f\n",
	       nl_insn_marks, insn_series, insn_base ? "base-" : "", mode,
	       insn_round, (unsigned long long)segs, bps * 8e-6);
}

/* One run of @w outside run_probes() (module unloaded or idle), labelled. */
static double run_plain(const struct workload *w, double secs,
			const char *mode)
{
	uint64_t segs0 = segs_of(w);
	double bps = w->run(secs);

	insn_label(mode, segs_of(w) - segs0, bps);
	return bps;
}

static const char *const probe_mode_names[] = {
	"events", "filtered", "flight", "packets", "slow", "keptout", "sampled",
};
_Static_assert(sizeof(probe_mode_names) / sizeof(probe_mode_names[0]) ==
	       PROBES_SAMPLED + 1, "a name for every probe_mode");

/* @w's probe groups on for one run of @secs in @mode. */
static void run_probes(const struct workload *w, double secs,
		       enum probe_mode mode, struct probe_run *r)
{
	struct netlat_filter_rule none = {
		.groups = NETLAT_PROBE_ALL,
		.match = NETLAT_MATCH_PORT,
		.port = 9,	/* discard: no traffic here uses it */
	};
	struct netlat_triggers trig = {
		.armed = NETLAT_TRIG_MARKER,
		.marker_tag_len = 5,
		.marker_tag = "never",
	};
	struct netlat_probes pr0, pr1;
	struct netlat_info info;
	struct drain d = { 0 };
	pthread_t th;
	uint64_t t0, segs0, drops0;
	unsigned int cpu;
	int err;

	memset(r, 0, sizeof(*r));
	d.fd = nl_open(O_NONBLOCK);
	if (d.fd < 0)
		die(NETLAT_DEVICE_PATH, errno);
	err = nl_control(d.fd, NETLAT_IOC_STOP);
	if (!err)
		err = set_mode(d.fd, mode == PROBES_FLIGHT ?
			       NETLAT_MODE_OVERWRITE : NETLAT_MODE_STREAM);
	if (!err)
		err = nl_reconfigure(d.fd, 4 << 20, 1 << 20, 50, true);
	if (!err && (mode == PROBES_FILTERED || mode == PROBES_KEPT_OUT))
		err = nl_set_rules(d.fd, &none, 1);
	if (!err && mode == PROBES_FLIGHT)
		err = trig_set(d.fd, &trig);
	if (!err && (mode == PROBES_PACKETS || mode == PROBES_SLOW ||
		     mode == PROBES_KEPT_OUT || mode == PROBES_SAMPLED))
		err = nl_set_level(d.fd, NETLAT_LEVEL_PACKETS,
				mode == PROBES_SLOW ? 5000000 : 0);
	if (!err && mode == PROBES_SAMPLED)
		err = nl_set_sample(d.fd, BENCH_SAMPLE);
	/* the baseline module may have no keys */
	if (!err && bench_keys && !insn_base &&
	    (mode == PROBES_PACKETS || mode == PROBES_SLOW ||
	     mode == PROBES_KEPT_OUT)) {
		struct netlat_config kc = {
			.flags = NETLAT_CONFIG_KEYS, .key_by = bench_keys,
		};

		err = nl_ioctl(d.fd, NETLAT_IOC_SET_CONFIG, &kc, sizeof(kc));
	}
	if (!err)
		err = nl_get_info(d.fd, &info);
	if (!err)
		err = nl_probes(d.fd, true, w->groups ?
				w->groups & info.probe_groups :
				info.probe_groups, &pr0);
	if (err)
		die("probes on", -err);
	if (mode != PROBES_FLIGHT)
		pthread_create(&th, NULL, drain_main, &d);
	t0 = nl_mono_ns();
	segs0 = segs_of(w);
	drops0 = w->drops ? snmp_counter(*w->ns, w->proto, w->drops) : 0;
	r->bps = w->run(secs);
	r->segs = segs_of(w) - segs0;
	insn_label(probe_mode_names[mode], r->segs, r->bps);
	if (w->drops)
		r->rx_drops = snmp_counter(*w->ns, w->proto, w->drops) - drops0;
	r->pkt_mem = info.pkt_mem_bytes;
	if (mode == PROBES_PACKETS || mode == PROBES_SLOW ||
	    mode == PROBES_SAMPLED) {
		struct netlat_hist h = { .size = sizeof(h) };

		/* packets the table could not follow: no record, no sample */
		if (!nl_ioctl(d.fd, NETLAT_IOC_HIST, &h, sizeof(h))) {
			r->untracked = h.untracked;
			r->rx_untracked = h.rx_untracked;
		}
	}
	err = nl_probes(d.fd, true, 0, &pr1);
	if (err)
		die("probes off", -err);
	t0 = nl_mono_ns() - t0;
	d.stop = true;
	if (mode != PROBES_FLIGHT)
		pthread_join(th, NULL);
	for (cpu = 0; cpu < info.nr_cpus; cpu++) {
		struct netlat_cpu_stats st;

		if (nl_get_stats(d.fd, cpu, &st))
			continue;
		r->dropped += st.dropped;
		r->filtered += st.filtered;
		r->overwritten += st.overwritten;
		/* no reader: what the rings took is what the probes wrote */
		if (mode == PROBES_FLIGHT)
			d.records += st.written;
	}
	r->records = d.records;
	memcpy(r->kinds, d.kinds, sizeof(r->kinds));
	memcpy(r->rx_types, d.rx_types, sizeof(r->rx_types));
	r->lost = d.lost;
	r->missed = pr1.nmissed - pr0.nmissed;
	r->rec_per_s = (double)d.records * 1e9 / (double)t0;
	err = trig_off(d.fd);
	if (!err && bench_keys && !insn_base) {
		struct netlat_config kc = { .flags = NETLAT_CONFIG_KEYS };

		err = nl_ioctl(d.fd, NETLAT_IOC_SET_CONFIG, &kc, sizeof(kc));
	}
	if (!err && mode == PROBES_SAMPLED)
		err = nl_set_sample(d.fd, 0);
	if (!err)
		err = nl_set_level(d.fd, NETLAT_LEVEL_EVENTS, 0);
	if (!err)
		err = nl_set_rules(d.fd, NULL, 0);
	if (!err)
		err = nl_control(d.fd, NETLAT_IOC_STOP);
	if (!err)
		err = set_mode(d.fd, NETLAT_MODE_STREAM);
	if (!err)
		err = nl_control(d.fd, NETLAT_IOC_START);
	if (err)
		die("restore", -err);
	close(d.fd);
}

/* ---- the bpftrace peer ---- */

#define BT_BIN		"/bin/bpftrace"
#define BT_SCRIPT	"/tmp/netlat_bt.bt"
#define BT_CHILD	"/tmp/netlat_bt_child"
#define BT_READY	"/tmp/netlat_bt.ready"
#define BT_GO		"/tmp/netlat_bt.go"
#define BT_OUT		"/tmp/netlat_bt.out"
#define BT_MAX_HOOKS	32

/*
 * The hooks of netlat's TCP groups (tcp.c), minus the rare retransmit
 * ones. Start times: sendmsg by thread, the write-queue skb from
 * tcp_skb_entail to its __tcp_transmit_skb, the socket's last transmit to
 * an ACK, the skb from net_dev_queue to net_dev_start_xmit. Maps are
 * pruned on the matching hit, and cleared at exit so only the histograms
 * and counts are printed.
 */
static const char bt_script[] =
	"kprobe:tcp_sendmsg_locked { @hits[probe] = count(); @send[tid] = nsecs; }\n"
	"kretprobe:tcp_sendmsg_locked /@send[tid]/ { @hits[probe] = count();"
	" @sendmsg_ns = hist(nsecs - @send[tid]); delete(@send[tid]); }\n"
	"kprobe:tcp_push, kprobe:__tcp_push_pending_frames, kprobe:tcp_push_one"
	" { @hits[probe] = count(); }\n"
	"kprobe:tcp_skb_entail { @hits[probe] = count(); @entail[arg1] = nsecs; }\n"
	"kprobe:__tcp_transmit_skb { @hits[probe] = count(); $t = @entail[arg1];"
	" if ($t) { @entail_xmit_ns = hist(nsecs - $t); delete(@entail[arg1]); }"
	" @xmit[arg0] = nsecs; }\n"
	"kprobe:tcp_ack { @hits[probe] = count(); @acksk[tid] = arg0; }\n"
	"kretprobe:tcp_ack /@acksk[tid]/ { @hits[probe] = count();"
	" $t = @xmit[@acksk[tid]]; if ($t) { @xmit_ack_ns = hist(nsecs - $t); }"
	" delete(@acksk[tid]); }\n"
	"tracepoint:net:net_dev_queue { @hits[probe] = count();"
	" @queue[args->skbaddr] = nsecs; }\n"
	"tracepoint:net:net_dev_start_xmit { @hits[probe] = count();"
	" $t = @queue[args->skbaddr]; if ($t) {"
	" @qdisc_driver_ns = hist(nsecs - $t); delete(@queue[args->skbaddr]); } }\n"
	"tracepoint:tcp:tcp_destroy_sock { @hits[probe] = count();"
	" delete(@xmit[(uint64)args->skaddr]); }\n"
	"END { clear(@send); clear(@entail); clear(@xmit); clear(@acksk);"
	" clear(@queue); }\n";

/*
 * The hooks of netlat's receive groups (rx.c: rx and rx_sched), the same
 * way: receive stamps by skb from netif_receive_skb to TCP's or UDP's
 * first look at it, the socket's last queueing to the read that returns,
 * a UDP skb from its enqueue to its consume, a woken task to its run;
 * hist() of each delta, count() of each hook. sock_def_readable stands in
 * for the sk_data_ready tracepoint 6.1 lacks.
 */
static const char bt_rx_script[] =
	"tracepoint:net:netif_receive_skb { @hits[probe] = count();"
	" @rx[(uint64)args->skbaddr] = nsecs; }\n"
	"kprobe:tcp_v4_do_rcv, kprobe:udp_queue_rcv_one_skb"
	" { @hits[probe] = count(); $t = @rx[arg1];"
	" if ($t) { @netif_sock_ns = hist(nsecs - $t); delete(@rx[arg1]); } }\n"
	"kprobe:tcp_add_backlog, kprobe:tcp_data_queue"
	" { @hits[probe] = count(); }\n"
	"kprobe:tcp_queue_rcv { @hits[probe] = count(); @queued[arg0] = nsecs; }\n"
	"kprobe:tcp_recvmsg { @hits[probe] = count(); @rd[tid] = arg0; }\n"
	"kretprobe:tcp_recvmsg /@rd[tid]/ { @hits[probe] = count();"
	" $t = @queued[@rd[tid]]; if ($t) { @queue_read_ns = hist(nsecs - $t); }"
	" delete(@rd[tid]); }\n"
	"kprobe:__udp_enqueue_schedule_skb { @hits[probe] = count();"
	" @uq[arg1] = nsecs; }\n"
	"kprobe:skb_consume_udp { @hits[probe] = count(); $t = @uq[arg1];"
	" if ($t) { @udp_queue_read_ns = hist(nsecs - $t); delete(@uq[arg1]); } }\n"
	"tracepoint:skb:kfree_skb { @hits[probe] = count();"
	" delete(@rx[(uint64)args->skbaddr]); }\n"
	"kprobe:sk_wait_data { @hits[probe] = count(); @waiting[tid] = nsecs; }\n"
	"kretprobe:sk_wait_data { @hits[probe] = count(); delete(@waiting[tid]); }\n"
	"kprobe:sock_def_readable { @hits[probe] = count(); }\n"
	"tracepoint:sched:sched_wakeup { @hits[probe] = count();"
	" @wake[args->pid] = nsecs; }\n"
	"tracepoint:sched:sched_switch { @hits[probe] = count();"
	" $t = @wake[args->next_pid]; if ($t) {"
	" @wakeup_run_ns = hist(nsecs - $t); delete(@wake[args->next_pid]); } }\n"
	"END { clear(@rx); clear(@queued); clear(@rd); clear(@uq);"
	" clear(@waiting); clear(@wake); }\n";

/* What bpftrace -c runs (under busybox sh) once every probe is attached. */
static const char bt_child[] =
	"echo > " BT_READY "\n"
	"exec cat " BT_GO "\n";

struct bt_hits {
	unsigned int n;
	char name[BT_MAX_HOOKS][64];
	uint64_t count[BT_MAX_HOOKS];
};

static bool bt_off;	/* could not run: said why once */

static bool write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t len = strlen(text);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok;
}

static bool bt_available(void)
{
	return !bt_off && !access(BT_BIN, X_OK);
}

static void bt_give_up(const char *why)
{
	char line[512];
	FILE *f = fopen(BT_OUT, "r");

	printf("bench: bpftrace peer skipped from here on: %s; its output:\n", why);
	while (f && fgets(line, sizeof(line), f))
		printf("bench: bpftrace| %s", line);
	if (f)
		fclose(f);
	bt_off = true;
}

/* Add the "@hits[probe]: N" lines of bpftrace's output to @h. */
static void bt_parse(struct bt_hits *h)
{
	char line[512], name[64];
	unsigned long long v;
	unsigned int i;
	FILE *f = fopen(BT_OUT, "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "@hits[%63[^]]]: %llu", name, &v) != 2)
			continue;
		for (i = 0; i < h->n && strcmp(h->name[i], name); i++)
			;
		if (i == h->n) {
			if (h->n == BT_MAX_HOOKS)
				continue;
			snprintf(h->name[h->n++], sizeof(h->name[0]), "%s", name);
		}
		h->count[i] += v;
	}
	if (f)
		fclose(f);
}

/* Print the histograms of the last bpftrace run (not the counts). */
static void bt_print_hists(const char *prefix, const char *label)
{
	char line[512];
	FILE *f = fopen(BT_OUT, "r");
	bool on = false;

	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '@')
			on = strncmp(line, "@hits[", 6);
		if (on && line[0] != '\n')
			printf("bench: %s%s bpftrace| %s", prefix, label, line);
	}
	if (f)
		fclose(f);
}

/*
 * One run of @w for @secs with the bpftrace @script attached; false (and
 * the peer off) if it did not start. Its hook hits are added to @h.
 */
static bool run_bpftrace(const struct workload *w, const char *script,
			 double secs, double *bps, uint64_t *segs,
			 struct bt_hits *h)
{
	uint64_t segs0, t0;
	int status, fd;
	pid_t pid;

	unlink(BT_READY);
	unlink(BT_GO);
	if (!write_file(BT_SCRIPT, script, 0644) ||
	    !write_file(BT_CHILD, bt_child, 0644) || mkfifo(BT_GO, 0600)) {
		bt_give_up("cannot write its files in /tmp");
		return false;
	}
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		fd = open(BT_OUT, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* -c takes an ELF binary, its arguments split at spaces */
		execl(BT_BIN, "bpftrace", "-c", "/bin/busybox sh " BT_CHILD,
		      BT_SCRIPT, (char *)NULL);
		_exit(127);
	}
	/* LLVM under TCG takes a while to compile and load the programs */
	t0 = nl_mono_ns();
	while (access(BT_READY, F_OK)) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			bt_give_up("bpftrace exited before its probes were attached");
			return false;
		}
		if (nl_mono_ns() - t0 > 300ULL * 1000000000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			bt_give_up("its probes were not attached after 300 s");
			return false;
		}
		nl_sleep_ms(50);
	}
	segs0 = segs_of(w);
	*bps = w->run(secs);
	segs0 = segs_of(w) - segs0;
	insn_label("bpftrace", segs0, *bps);
	*segs += segs0;
	/* the child's cat ends: bpftrace detaches and prints its maps */
	fd = open(BT_GO, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	waitpid(pid, &status, 0);
	bt_parse(h);
	return true;
}

/*
 * The receive benches: the receive groups on, the receiving namespace's
 * segments (TCP InSegs, UDP InDatagrams) the oracle.
 */
#define RX_GROUPS	(NETLAT_PROBE_RX | NETLAT_PROBE_RX_SCHED)
static const struct workload tcp_recv = {
	.run = transfer, .ns = &ns_b, .proto = "Tcp:", .counter = "InSegs",
	.groups = RX_GROUPS,
};
static const struct workload udp_recv = {
	.run = udp_blast, .ns = &ns_b, .proto = "Udp:",
	.counter = "InDatagrams", .groups = RX_GROUPS, .drops = "RcvbufErrors",
};

/* Records per data segment: a figure that is exact, unlike throughput. */
static double per_seg(uint64_t records, uint64_t segs)
{
	return segs ? (double)records / (double)segs : 0;
}

/* One mode's figures over the rounds. */
struct mode_acc {
	double bps[16];
	uint64_t records, segs, lost, untracked, rx_drops;
	uint64_t rx_types[NR_RX_TYPES];
};

/* The modes the baseline module (-b) runs, in this order. */
static const enum probe_mode base_modes[] = {
	PROBES_READ, PROBES_FILTERED, PROBES_PACKETS, PROBES_SLOW,
};
#define NR_BASE_MODES	(sizeof(base_modes) / sizeof(base_modes[0]))

/* Round @i of @mode into @a. */
static void run_into(const struct workload *w, double secs,
		     enum probe_mode mode, struct mode_acc *a, unsigned int i)
{
	struct probe_run r;

	run_probes(w, secs, mode, &r);
	a->bps[i] = r.bps;
	a->records += r.records;
	a->segs += r.segs;
	a->lost += r.lost + r.dropped + r.missed;
	a->untracked += r.rx_untracked;
	a->rx_drops += r.rx_drops;
	for (unsigned int j = 0; j < NR_RX_TYPES; j++)
		a->rx_types[j] += r.rx_types[j];
}

/*
 * Round @i of the baseline module (-b): loaded, an idle transfer (the
 * first after a load, as this tree's "idle" is), its modes; then this
 * tree's module is loaded again.
 */
static void base_round(const char *label, double secs, struct mode_acc *base,
		       unsigned int i)
{
	const char *mine = ko_path;
	unsigned int m;

	module_reload(base_path);
	insn_base = true;
	run_plain(&tcp_send, secs, "idle");
	for (m = 0; m < NR_BASE_MODES; m++)
		run_into(&tcp_send, secs, base_modes[m], &base[m], i);
	insn_base = false;
	module_reload(mine);
	printf("bench: tcp %s run %u: baseline module: probes %.1f Mbit/s, filtered out %.1f Mbit/s, packets %.1f Mbit/s, slow %.1f Mbit/s\n",
	       label, i + 1, base[0].bps[i] * 8e-6, base[1].bps[i] * 8e-6,
	       base[2].bps[i] * 8e-6, base[3].bps[i] * 8e-6);
}

/* k alternating runs of the eight modes; medians, ratios, losses. */
static void series(const char *label, unsigned int k, double secs)
{
	double un[16], idle[16], on[16], rps[16], filt[16], fl[16], pk[16], sl[16];
	double ko[16], sa[16] = { 0 };
	uint64_t sa_recs = 0, sa_segs = 0;
	uint64_t recs = 0, lost = 0, dropped = 0, missed = 0, segs = 0;
	uint64_t filtered = 0, fl_recs = 0, overwritten = 0, pkt_mem = 0;
	uint64_t ko_recs = 0;
	uint64_t pk_recs = 0, pk_segs = 0, sl_recs = 0, sl_segs = 0, untracked = 0;
	uint64_t ev_kinds[NR_KINDS] = { 0 }, pk_kinds[NR_KINDS] = { 0 };
	double mu, mi, mo, mf, mfl, mpk, msl, mko, bt[16];
	uint64_t bt_segs = 0;
	struct mode_acc base[NR_BASE_MODES] = { 0 };
	struct bt_hits hits = { 0 };
	unsigned int i, nbt = 0;

	transfer(0.5);		/* warm up: ARP, caches */
	insn_series = label;
	for (i = 0; i < k; i++) {
		struct probe_run r, rf, rfl, rp, rs, rko, rsa;

		insn_round = i + 1;
		module_set(false);
		un[i] = run_plain(&tcp_send, secs, "unloaded");
		/* the baseline module first in odd rounds, last in even ones */
		if (base_path && (i % 2))
			base_round(label, secs, base, i);
		module_set(true);
		idle[i] = run_plain(&tcp_send, secs, "idle");
		run_probes(&tcp_send, secs, PROBES_READ, &r);
		run_probes(&tcp_send, secs, PROBES_FILTERED, &rf);
		run_probes(&tcp_send, secs, PROBES_FLIGHT, &rfl);
		run_probes(&tcp_send, secs, PROBES_PACKETS, &rp);
		run_probes(&tcp_send, secs, PROBES_SLOW, &rs);
		run_probes(&tcp_send, secs, PROBES_KEPT_OUT, &rko);
		run_probes(&tcp_send, secs, PROBES_SAMPLED, &rsa);
		sa[i] = rsa.bps;
		sa_recs += rsa.records;
		sa_segs += rsa.segs;
		untracked += rsa.untracked;
		on[i] = r.bps;
		ko[i] = rko.bps;
		ko_recs += rko.records;
		missed += rko.missed;
		filt[i] = rf.bps;
		fl[i] = rfl.bps;
		pk[i] = rp.bps;
		sl[i] = rs.bps;
		segs += r.segs;
		pk_recs += rp.records;
		for (unsigned int j = 0; j < NR_KINDS; j++) {
			ev_kinds[j] += r.kinds[j];
			pk_kinds[j] += rp.kinds[j];
		}
		pk_segs += rp.segs;
		sl_recs += rs.records;
		sl_segs += rs.segs;
		pkt_mem = rp.pkt_mem;
		untracked += rp.untracked + rs.untracked;
		lost += rp.lost + rs.lost;
		dropped += rp.dropped + rs.dropped;
		missed += rp.missed + rs.missed;
		rps[i] = r.rec_per_s;
		recs += r.records;
		lost += r.lost;
		dropped += r.dropped;
		missed += r.missed + rf.missed + rfl.missed;
		filtered += rf.filtered;
		fl_recs += rfl.records;
		overwritten += rfl.overwritten;
		printf("bench: tcp %s run %u: unloaded %.1f Mbit/s, idle %.1f Mbit/s, probes %.1f Mbit/s, %.0f records/s, lost %llu, missed %llu; filtered out %.1f Mbit/s (%llu records stored); flight %.1f Mbit/s; packets %.1f Mbit/s (%.3f records/segment); slow %.1f Mbit/s (%.4f records/segment); packets, every socket kept out %.1f Mbit/s; packets sampled (1 in %u KiB) %.1f Mbit/s (%.4f records/segment)\n",
		       label, i + 1, un[i] * 8e-6, idle[i] * 8e-6, on[i] * 8e-6,
		       rps[i], (unsigned long long)(r.lost + r.dropped),
		       (unsigned long long)r.missed, filt[i] * 8e-6,
		       (unsigned long long)rf.records, fl[i] * 8e-6,
		       pk[i] * 8e-6, per_seg(rp.records, rp.segs), sl[i] * 8e-6,
		       per_seg(rs.records, rs.segs), ko[i] * 8e-6, BENCH_SAMPLE,
		       sa[i] * 8e-6, per_seg(rsa.records, rsa.segs));
		if (base_path && !(i % 2))
			base_round(label, secs, base, i);
		if (bt_available() &&
		    run_bpftrace(&tcp_send, bt_script, secs, &bt[nbt],
				 &bt_segs, &hits)) {
			printf("bench: tcp %s run %u: bpftrace peer %.1f Mbit/s\n",
			       label, i + 1, bt[nbt] * 8e-6);
			nbt++;
		}
	}
	/* before the medians below sort the rounds' figures */
	printf("bench: tcp %s per-round ratios to unloaded (median over %u rounds of each round's ratio): idle %.3f, probes %.3f, filtered %.3f, flight %.3f, packets %.3f, slow %.3f, packets kept out %.3f, packets sampled %.3f",
	       label, k, nl_median_ratio(idle, un, k),
	       nl_median_ratio(on, un, k), nl_median_ratio(filt, un, k),
	       nl_median_ratio(fl, un, k), nl_median_ratio(pk, un, k),
	       nl_median_ratio(sl, un, k), nl_median_ratio(ko, un, k),
	       nl_median_ratio(sa, un, k));
	if (nbt == k)
		printf(", bpftrace peer %.3f", nl_median_ratio(bt, un, k));
	printf("\n");
	mko = nl_median(ko, k);
	mpk = nl_median(pk, k);
	msl = nl_median(sl, k);
	mu = nl_median(un, k);
	mi = nl_median(idle, k);
	mo = nl_median(on, k);
	mf = nl_median(filt, k);
	mfl = nl_median(fl, k);
	printf("bench: tcp %s throughput median of %u x %.1f s: unloaded %.1f Mbit/s, loaded idle %.1f Mbit/s, all TCP probes %.1f Mbit/s, all filtered out %.1f Mbit/s, flight recorder %.1f Mbit/s\n",
	       label, k, secs, mu * 8e-6, mi * 8e-6, mo * 8e-6, mf * 8e-6,
	       mfl * 8e-6);
	printf("bench: tcp %s ratios: idle/unloaded %.3f, probes/unloaded %.3f, filtered/unloaded %.3f, flight/unloaded %.3f, packets/unloaded %.3f, slow/unloaded %.3f, kept out/unloaded %.3f\n",
	       label, mi / mu, mo / mu, mf / mu, mfl / mu, mpk / mu, msl / mu,
	       mko / mu);
	printf("bench: tcp %s packets, every socket kept out by a filter: %llu records (the hooks' own cost: nothing followed, nothing written)\n",
	       label, (unsigned long long)ko_recs);
	printf("bench: tcp %s records per data segment (OutSegs): sampled (1 in %u KiB) %.4f\n",
	       label, BENCH_SAMPLE, per_seg(sa_recs, sa_segs));
	printf("bench: tcp %s records per data segment (OutSegs): events %.3f, packets %.3f, slow (>= 5 ms) %.4f; packet table and histograms %llu bytes, %llu packets not followed\n",
	       label, per_seg(recs, segs), per_seg(pk_recs, pk_segs),
	       per_seg(sl_recs, sl_segs), (unsigned long long)pkt_mem,
	       (unsigned long long)untracked);
	if (base_path) {
		printf("bench: tcp %s baseline module ratios: probes/unloaded %.3f, filtered/unloaded %.3f, packets/unloaded %.3f, slow/unloaded %.3f\n",
		       label, nl_median(base[0].bps, k) / mu,
		       nl_median(base[1].bps, k) / mu,
		       nl_median(base[2].bps, k) / mu,
		       nl_median(base[3].bps, k) / mu);
		printf("bench: tcp %s baseline module records per data segment: events %.3f, packets %.3f\n",
		       label, per_seg(base[0].records, base[0].segs),
		       per_seg(base[2].records, base[2].segs));
	}
	printf("bench: tcp %s records per data segment by family: events TCP %.3f, RX %.3f, other %.3f; packets TCP %.3f, RX %.3f, other %.3f\n",
	       label, per_seg(ev_kinds[KIND_TCP], segs),
	       per_seg(ev_kinds[KIND_RX], segs),
	       per_seg(ev_kinds[KIND_OTHER], segs),
	       per_seg(pk_kinds[KIND_TCP], pk_segs),
	       per_seg(pk_kinds[KIND_RX], pk_segs),
	       per_seg(pk_kinds[KIND_OTHER], pk_segs));
	if (nbt) {
		double mbt = nl_median(bt, nbt);
		unsigned int j;

		printf("bench: tcp %s peer: bpftrace hist() of deltas on the same hooks %.1f Mbit/s, bpftrace/unloaded %.3f (median of %u rounds)\n",
		       label, mbt * 8e-6, mbt / mu, nbt);
		for (j = 0; j < hits.n; j++)
			printf("bench: tcp %s hook hits per data segment (bpftrace count()): %s %.3f\n",
			       label, hits.name[j], per_seg(hits.count[j], bt_segs));
		bt_print_hists("tcp ", label);
	} else {
		printf("bench: tcp %s peer: no bpftrace figures (see above)\n",
		       label);
	}
	printf("bench: tcp %s filtered: %llu probe hits kept out in-kernel; flight: %llu records written, %llu overwritten\n",
	       label, (unsigned long long)filtered,
	       (unsigned long long)fl_recs, (unsigned long long)overwritten);
	printf("bench: tcp %s probes: %.0f records/s (median), %llu records, %llu lost in LOST records, %llu dropped by rings, %llu kprobe misses\n",
	       label, nl_median(rps, k), (unsigned long long)recs,
	       (unsigned long long)lost, (unsigned long long)dropped,
	       (unsigned long long)missed);
}

/* The modes of the receive benches, in this order. */
static const enum probe_mode rx_modes[] = {
	PROBES_READ, PROBES_FLIGHT, PROBES_PACKETS, PROBES_SLOW, PROBES_KEPT_OUT,
};
static const char *const rx_mode_names[] = {
	"events", "flight", "packets", "slow", "kept out",
};
#define NR_RX_MODES	(sizeof(rx_modes) / sizeof(rx_modes[0]))

/*
 * k alternating rounds of @w with the module unloaded and the receive
 * groups on in each of rx_modes; medians, ratios, records per segment.
 */
static void rx_series(const char *label, const struct workload *w,
		      unsigned int k, double secs)
{
	struct mode_acc acc[NR_RX_MODES] = { 0 };
	double un[16], bt[16], mu;
	struct bt_hits hits = { 0 };
	uint64_t bt_segs = 0;
	unsigned int i, m, nbt = 0;
	bool bt_ok;

	w->run(0.5);		/* warm up: ARP, caches */
	insn_series = label;
	for (i = 0; i < k; i++) {
		insn_round = i + 1;
		module_set(false);
		un[i] = run_plain(w, secs, "unloaded");
		module_set(true);
		for (m = 0; m < NR_RX_MODES; m++)
			run_into(w, secs, rx_modes[m], &acc[m], i);
		bt_ok = bt_available() &&
			run_bpftrace(w, bt_rx_script, secs, &bt[nbt], &bt_segs,
				     &hits);
		printf("bench: %s run %u: unloaded %.1f Mbit/s", label, i + 1,
		       un[i] * 8e-6);
		for (m = 0; m < NR_RX_MODES; m++)
			printf(", %s %.1f Mbit/s", rx_mode_names[m],
			       acc[m].bps[i] * 8e-6);
		if (bt_ok)
			printf(", bpftrace peer %.1f Mbit/s", bt[nbt++] * 8e-6);
		printf("\n");
	}
	if (nbt) {
		unsigned int j;

		printf("bench: %s peer: bpftrace hist() of deltas on the same hooks, bpftrace/unloaded %.3f (median of %u rounds' ratios)\n",
		       label, nl_median_ratio(bt, un, nbt), nbt);
		for (j = 0; j < hits.n; j++)
			printf("bench: %s hook hits per segment (bpftrace count()): %s %.3f\n",
			       label, hits.name[j], per_seg(hits.count[j], bt_segs));
		bt_print_hists("", label);
	}
	/* before the medians below sort the rounds' figures */
	printf("bench: %s per-round ratios to unloaded (median over %u rounds of each round's ratio):",
	       label, k);
	for (m = 0; m < NR_RX_MODES; m++)
		printf("%s %s %.3f", m ? "," : "", rx_mode_names[m],
		       nl_median_ratio(acc[m].bps, un, k));
	printf("\n");
	mu = nl_median(un, k);
	printf("bench: %s receive throughput median of %u x %.1f s: unloaded %.1f Mbit/s",
	       label, k, secs, mu * 8e-6);
	for (m = 0; m < NR_RX_MODES; m++)
		printf(", %s %.1f Mbit/s", rx_mode_names[m],
		       nl_median(acc[m].bps, k) * 8e-6);
	printf("\nbench: %s ratios (rx + rx_sched groups):", label);
	for (m = 0; m < NR_RX_MODES; m++)
		printf("%s %s/unloaded %.3f", m ? "," : "", rx_mode_names[m],
		       nl_median(acc[m].bps, k) / mu);
	for (m = 0; m < NR_RX_MODES; m++) {
		const struct mode_acc *a = &acc[m];
		unsigned int j;

		printf("\nbench: %s %s: %llu records, %llu received segments (%s %s), %.4f records/segment, %llu lost, dropped or missed, %llu rx_untracked",
		       label, rx_mode_names[m], (unsigned long long)a->records,
		       (unsigned long long)a->segs, w->proto, w->counter,
		       per_seg(a->records, a->segs),
		       (unsigned long long)a->lost,
		       (unsigned long long)a->untracked);
		if (w->drops)
			printf(", %llu %s", (unsigned long long)a->rx_drops,
			       w->drops);
		printf("\nbench: %s %s records per segment by type:", label,
		       rx_mode_names[m]);
		for (j = 0; j < NR_RX_TYPES; j++)
			printf("%s %s %.4f", j ? "," : "", rx_type_names[j],
			       per_seg(a->rx_types[j], a->segs));
	}
	printf("\n");
}

/* ---- the server series: redis-server and redis-benchmark ---- */

#define REDIS_SERVER	"/bin/redis-server"
#define REDIS_BENCH	"/bin/redis-benchmark"
#define REDIS_PORT	"6379"
/* a run's GETs per second of its length: TCG serves a few thousand */
#define REDIS_RPS	2000

static uint64_t server_requests;	/* answered by the runs so far */

/* Run @argv in namespace @ns, its output dropped; its pid. */
static pid_t spawn_in(int ns, char *const argv[])
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	if (setns(ns, CLONE_NEWNET))
		_exit(126);
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/* redis-benchmark spins for ever on a connection refused */
	if (strcmp(argv[0], REDIS_SERVER))
		alarm(300);
	execv(argv[0], argv);
	_exit(127);
}

/*
 * redis-benchmark from A: @n requests of @test (set, get) with 100-byte
 * values, by 20 clients, one request each in flight. True if it exited 0.
 */
static bool redis_bench(const char *test, unsigned long n)
{
	char num[24];
	char *const argv[] = {
		REDIS_BENCH, "-h", ADDR_B, "-p", REDIS_PORT, "-c", "20",
		"-n", num, "-t", (char *)test, "-d", "100", "-P", "1", "-q",
		NULL,
	};
	pid_t pid;
	int st;

	snprintf(num, sizeof(num), "%lu", n);
	pid = spawn_in(ns_a, argv);
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st);
}

/* Whether redis-server in B takes a connection from A. */
static bool server_listening(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(atoi(REDIS_PORT)) };
	bool ok;
	int fd;

	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	setns(ns_a, CLONE_NEWNET);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ok = fd >= 0 && !connect(fd, (void *)&a, sizeof(a));
	if (fd >= 0)
		close(fd);
	setns(ns_orig, CLONE_NEWNET);
	return ok;
}

/*
 * Requests/s of @secs worth of GETs; the window holds the client's whole
 * life (its start and connections too, the same in every mode).
 */
static double server_run(double secs)
{
	unsigned long n = secs * REDIS_RPS > 100 ? secs * REDIS_RPS : 100;
	uint64_t t0;
	bool ok;

	nl_insn_begin();
	t0 = nl_mono_ns();
	ok = redis_bench("get", n);
	t0 = nl_mono_ns() - t0;
	nl_insn_mark();
	if (!ok)
		die("redis-benchmark", EIO);
	server_requests += n;
	return (double)n * 1e9 / (double)t0;
}

static uint64_t server_units(void)
{
	return server_requests;
}

/* Every group on: what the service's default (NETLAT_PROBES=all) costs. */
static const struct workload server = {
	.run = server_run, .units = server_units, .ns = &ns_a,
};

static const enum probe_mode server_modes[] = {
	PROBES_READ, PROBES_PACKETS, PROBES_SLOW, PROBES_KEPT_OUT,
	PROBES_SAMPLED,
};
#define NR_SERVER_MODES	(sizeof(server_modes) / sizeof(server_modes[0]))

/*
 * k alternating rounds of redis-server in B answering redis-benchmark's
 * GETs from A: the module unloaded, loaded and idle, and each mode with
 * every group on. The instruction windows count per request (make bench's
 * report adds the whole machine's, kernel and user, for this series).
 */
static void server_series(unsigned int k, double secs)
{
	char *const srv[] = {
		REDIS_SERVER, "--bind", ADDR_B, "--port", REDIS_PORT,
		"--save", "", "--appendonly", "no", "--protected-mode", "no",
		"--dir", "/tmp", NULL,
	};
	struct mode_acc acc[NR_SERVER_MODES] = { 0 };
	double un[16], idle[16];
	unsigned int i, m;
	pid_t pid;

	if (access(REDIS_SERVER, X_OK) || access(REDIS_BENCH, X_OK)) {
		printf("bench: server skipped: no %s and %s in this VM\n",
		       REDIS_SERVER, REDIS_BENCH);
		return;
	}
	module_set(true);
	pid = spawn_in(ns_b, srv);
	/* the server up, and the key the GETs read set (100 bytes) */
	for (i = 0; i < 300 && pid > 0 && !server_listening(); i++)
		nl_sleep_ms(100);
	if (pid <= 0 || i == 300 || !redis_bench("set", 1)) {
		printf("bench: server skipped: redis-server did not answer\n");
		goto out;
	}
	insn_series = "server";
	server_run(0.5);	/* warm up */
	for (i = 0; i < k; i++) {
		insn_round = i + 1;
		module_set(false);
		un[i] = run_plain(&server, secs, "unloaded");
		module_set(true);
		idle[i] = run_plain(&server, secs, "idle");
		for (m = 0; m < NR_SERVER_MODES; m++)
			run_into(&server, secs, server_modes[m], &acc[m], i);
		printf("bench: server run %u: unloaded %.0f requests/s, idle %.0f",
		       i + 1, un[i], idle[i]);
		for (m = 0; m < NR_SERVER_MODES; m++)
			printf(", %s %.0f", probe_mode_names[server_modes[m]],
			       acc[m].bps[i]);
		printf("\n");
	}
	printf("bench: server: redis-benchmark GET, 100-byte values, 20 clients, every group on; per-round ratios to unloaded (median over %u rounds):",
	       k);
	for (m = 0; m < NR_SERVER_MODES; m++)
		printf("%s %s %.3f", m ? "," : "",
		       probe_mode_names[server_modes[m]],
		       nl_median_ratio(acc[m].bps, un, k));
	printf("\n");
	for (m = 0; m < NR_SERVER_MODES; m++)
		printf("bench: server %s: %llu records for %llu requests, %.4f per request, %llu lost, dropped or missed\n",
		       probe_mode_names[server_modes[m]],
		       (unsigned long long)acc[m].records,
		       (unsigned long long)acc[m].segs,
		       per_seg(acc[m].records, acc[m].segs),
		       (unsigned long long)acc[m].lost);
out:
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* Whether -t @only names the bench @name (none: every bench). */
static bool bench_wanted(const char *only, const char *name)
{
	char list[128], *tok, *save = NULL;

	if (!*only)
		return true;
	snprintf(list, sizeof(list), "%s", only);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, name) ||
		    (!strcmp(tok, "tx") && (!strcmp(name, "gso") ||
					    !strcmp(name, "virtio") ||
					    !strcmp(name, "1seg"))))
			return true;
	return false;
}

/* Every name in -t @only is a bench's. */
static bool bench_list_ok(const char *only)
{
	static const char *const names[] = {
		"server", "gso", "virtio", "rx", "1seg", "tx",
	};
	char list[128], *tok, *save = NULL;
	unsigned int i;

	if (strlen(only) >= sizeof(list))
		return false;
	snprintf(list, sizeof(list), "%s", only);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]) &&
			    strcmp(tok, names[i]); i++)
			;
		if (i == sizeof(names) / sizeof(names[0]))
			return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	unsigned int k = 5;
	double secs = 2;
	const char *only = "";
	int opt, err;

	while ((opt = getopt(argc, argv, "k:s:m:b:t:iK:")) != -1) {
		switch (opt) {
		case 'k':
			k = strtoul(optarg, NULL, 0);
			break;
		case 's':
			secs = strtod(optarg, NULL);
			break;
		case 'm':
			ko_path = optarg;
			break;
		case 'b':
			base_path = optarg;
			break;
		case 't':
			only = optarg;
			break;
		case 'i':
			insn_names = true;
			break;
		case 'K':
			bench_keys = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-k repeats] [-s seconds] [-m netlat.ko] [-b baseline.ko] [-t server,gso,virtio,rx,1seg,tx] [-i] [-K key_by]\n",
				argv[0]);
			return 2;
		}
	}
	if (!k || k > 16 || secs <= 0 || !bench_list_ok(only)) {
		fprintf(stderr, "netlat_tcp_bench: -k 1..16, -s > 0, -t a list of server, gso, virtio, rx, 1seg, tx\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(BT_BIN, X_OK))
		printf("bench: no %s in this VM: no bpftrace peer\n", BT_BIN);
	topology();
	/* the code the instruction windows may count, for the host to name */
	if (insn_names) {
		nl_insn_kallsyms();
		nl_insn_modules("netlat", ko_path);
	}
	/* a real server first: what an owner pays per request */
	if (bench_wanted(only, "server"))
		server_series(k, secs);
	/* veth defaults: TCP sends GSO skbs of up to 64 KiB */
	if (bench_wanted(only, "gso"))
		series("gso", k, secs);
	if (bench_wanted(only, "virtio") && topology_virtio()) {
		dst_addr = VIRTIO_B;
		series("virtio", k, secs);
		dst_addr = ADDR_B;
	}
	if (bench_wanted(only, "rx")) {
		rx_series("rx tcp", &tcp_recv, k, secs);
		rx_series("rx udp", &udp_recv, k, secs);
	}
	if (!bench_wanted(only, "1seg")) {
		module_set(true);
		return 0;
	}
	/* one segment per skb: the per-packet record rate */
	setns(ns_a, CLONE_NEWNET);
	err = nlr_no_gso("nba0");
	if (!err)
		err = nlr_gso_max_segs("nba0", 1);
	setns(ns_orig, CLONE_NEWNET);
	if (err)
		printf("bench: tcp 1seg skipped: %s\n", strerror(-err));
	else
		series("1seg", k, secs);
	module_set(true);
	return 0;
}
