// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus metrics of the device (see prom.h). Every metric, its unit
 * and labels are listed in Documentation/prometheus.rst; keep them in step.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>	/* isinf: a macro, no libm */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "prom.h"
#include "cli.h"
#include "pktstat.h"
#include "cgpath.h"
#include "output.h"
#include "stagerec.h"

/* a cgroup path escaped, and all of a key's labels */
#define KEY_PATH_MAX	1024
#define KEY_LABELS_MAX	(KEY_PATH_MAX + 128)

/* ---- reading ------------------------------------------------------------- */

/*
 * The keys in use and the other's, when the kernel keeps them: 1 if an
 * eviction moved sums from a key to the other meanwhile (read again).
 */
static int read_keys(int fd, struct prom_sample *s)
{
	const struct netlat_hist *h = &s->hist;
	uint32_t k;
	int r;

	free(s->keys);
	s->keys = NULL;
	s->nr_keys = 0;
	if (h->size < sizeof(*h) || !h->key_by)
		return 0;
	s->keys = calloc(h->max_keys + 1, sizeof(*s->keys));
	if (!s->keys)
		return -ENOMEM;
	for (k = 1; k <= h->max_keys + 1; k++) {
		struct prom_key *pk = &s->keys[s->nr_keys];
		uint32_t key = k <= h->max_keys ? k : NETLAT_HIST_KEY_OTHER;

		r = pktstat_read_key(fd, key, &pk->hist, pk->st);
		/* keys turned off or fewer meanwhile */
		if (r == -EINVAL)
			return 1;
		if (r < 0)
			return r;
		pk->other = key == NETLAT_HIST_KEY_OTHER;
		if (pk->other || (pk->hist.key_flags & NETLAT_HIST_KEY_USED))
			s->nr_keys++;
	}
	return s->keys[s->nr_keys - 1].hist.keys_evicted != h->keys_evicted;
}

int prom_read(int fd, struct prom_sample *s, const char **what,
	      unsigned long *request)
{
	struct netlat_cpu_stats cs;
	unsigned int cpu;
	int r, tries = 0;

	memset(s, 0, sizeof(*s));
	/* HIST first: a module without the packet level fails here, clearly */
	*what = "HIST", *request = NETLAT_IOC_HIST;
	do {
		r = netlat_hist(fd, false, &s->hist, s->st, NETLAT_NR_STAGES);
		if (r >= 0)
			r = read_keys(fd, s);
	} while (r == 1 && ++tries < 5);
	if (r == 1)
		r = -EAGAIN;
	if (r < 0) {
		prom_sample_free(s);
		return r;
	}
	*what = "GET_INFO", *request = NETLAT_IOC_GET_INFO;
	r = netlat_get_info(fd, &s->info);
	if (r < 0)
		return r;
	*what = "PROBES", *request = NETLAT_IOC_PROBES;
	r = netlat_probes(fd, false, 0, &s->probes);
	if (r < 0)
		return r;
	*what = "GET_CPU_STATS", *request = NETLAT_IOC_GET_CPU_STATS;
	s->cpu = calloc(s->info.nr_cpus ? s->info.nr_cpus : 1, sizeof(*s->cpu));
	if (!s->cpu)
		return -ENOMEM;
	for (cpu = 0; cpu < s->info.nr_cpus; cpu++) {
		r = netlat_get_cpu_stats(fd, cpu, &cs);
		if (r == -EINVAL)	/* not a possible CPU: a hole in the ids */
			continue;
		if (r < 0) {
			prom_sample_free(s);
			return r;
		}
		s->cpu[s->nr_cpus++] = cs;
	}
	return 0;
}

void prom_sample_free(struct prom_sample *s)
{
	free(s->cpu);
	s->cpu = NULL;
	s->nr_cpus = 0;
	free(s->keys);
	s->keys = NULL;
	s->nr_keys = 0;
}

/* ---- formatting ---------------------------------------------------------- */

/*
 * The shortest text that parses back to @v, as Go's strconv 'g' -1 (and
 * so the Prometheus clients) writes it: le="2.097152e-06", not a 17-digit
 * approximation, so the same bucket has the same label in either format.
 */
static const char *fmt_float(char *buf, size_t len, double v)
{
	int prec;

	if (isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, len, "%.17g", v);
	return buf;
}

struct fmt {
	FILE *f;
	bool om;
};

/*
 * HELP and TYPE (and UNIT in OpenMetrics) of the family @name. A counter's
 * family is named without "_total" in OpenMetrics and with it in 0.0.4,
 * where the TYPE line names the sample.
 */
static void family(const struct fmt *o, const char *name, const char *type,
		   const char *unit, const char *help)
{
	const char *suffix = !o->om && !strcmp(type, "counter") ? "_total" : "";

	fprintf(o->f, "# HELP %s%s %s\n", name, suffix, help);
	fprintf(o->f, "# TYPE %s%s %s\n", name, suffix, type);
	if (o->om && unit)
		fprintf(o->f, "# UNIT %s %s\n", name, unit);
}

static void counter(const struct fmt *o, const char *name, const char *unit,
		    const char *help, uint64_t v)
{
	family(o, name, "counter", unit, help);
	fprintf(o->f, "%s_total %llu\n", name, ull(v));
}

static void gauge(const struct fmt *o, const char *name, const char *unit,
		  const char *help, double v)
{
	char buf[32];

	family(o, name, "gauge", unit, help);
	fprintf(o->f, "%s %s\n", name, fmt_float(buf, sizeof(buf), v));
}

/* "sendmsg>xmit" becomes "sendmsg_xmit": no operator in a label value. */
static void stage_label(char *buf, size_t len, unsigned int stage)
{
	char *p;

	snprintf(buf, len, "%s", netlat_stage_name(stage));
	for (p = buf; *p; p++)
		if (*p == '>')
			*p = '_';
}

/*
 * The send stages (netlat_tcp_stage_seconds): those of the record sent
 * packets have, wherever the uapi lists them; the others are received.
 */
#define TCP_STAGE(NAME, name, rec, from, to)	\
	STAGE_IF(tcp_pkt, rec, [NETLAT_STAGE_##NAME] = true,)
static const bool tcp_stage[NETLAT_NR_STAGES] = { NETLAT_STAGES(TCP_STAGE) };
#undef TCP_STAGE

/*
 * One histogram per stage of the send (@tcp) or the receive side, in
 * seconds, labelled @labels (each with its comma) and the stage; with
 * @busy only the stages with samples. Kernel bucket b (b >= 1) holds
 * [2^(b-1), 2^b) ns and bucket 0 holds 0, so bucket b's upper bound is
 * 2^b ns: le="2^b ns" counts buckets 0..b.
 * Bucket 63 also holds longer samples: it is only in +Inf. _count is the
 * sum of the buckets, not the kernel's count, so that it always equals
 * the +Inf bucket even when a packet landed between the kernel's updates
 * of the two.
 */
static void stage_series(const struct fmt *o, const char *name,
			 const char *labels, const struct netlat_stage_hist *st,
			 bool tcp, bool busy)
{
	unsigned int stage, b;
	char label[32], le[32], sum[32];

	for (stage = 0; stage < NETLAT_NR_STAGES; stage++) {
		const struct netlat_stage_hist *h = &st[stage];
		uint64_t cum = 0;

		if (tcp_stage[stage] != tcp || (busy && !h->count))
			continue;
		stage_label(label, sizeof(label), stage);
		for (b = 0; b < NETLAT_HIST_BUCKETS - 1; b++) {
			cum += h->bucket[b];
			fprintf(o->f, "%s_bucket{%sstage=\"%s\",le=\"%s\"} %llu\n", name,
				labels, label,
				fmt_float(le, sizeof(le), (double)(1ULL << b) / 1e9),
				ull(cum));
		}
		cum += h->bucket[NETLAT_HIST_BUCKETS - 1];
		fprintf(o->f, "%s_bucket{%sstage=\"%s\",le=\"+Inf\"} %llu\n", name,
			labels, label, ull(cum));
		fprintf(o->f, "%s_sum{%sstage=\"%s\"} %s\n", name, labels, label,
			fmt_float(sum, sizeof(sum), (double)h->sum_ns / 1e9));
		fprintf(o->f, "%s_count{%sstage=\"%s\"} %llu\n", name, labels, label,
			ull(cum));
	}
}

static void stage_family(const struct fmt *o, const struct prom_sample *s,
			 const char *name, const char *help, bool tcp)
{
	family(o, name, "histogram", "seconds", help);
	stage_series(o, name, "", s->st, tcp, false);
}

static void stage_histograms(const struct fmt *o, const struct prom_sample *s)
{
	stage_family(o, s, "netlat_tcp_stage_seconds",
		     "Time TCP packets spent in each stage, from sendmsg to the ACK "
		     "that covered them (packet level; log2 buckets of the kernel).",
		     true);
	stage_family(o, s, "netlat_rx_stage_seconds",
		     "Time received packets spent in each stage, from the receive "
		     "core to the copy to the application (packet level; log2 "
		     "buckets of the kernel).", false);
}

/* A label value as the text format wants it: \\, \" and \n escaped. */
static size_t label_value(char *buf, size_t len, const char *v)
{
	size_t n = 0;

	for (; *v && n + 3 < len; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n')
			buf[n++] = '\\';
		buf[n++] = *v == '\n' ? 'n' : *v;
	}
	buf[n] = 0;
	return n;
}

/*
 * The labels of a key: the fields the kernel keys by, "other" for the
 * packets of the keys it did not keep. The cgroup is its v2 id, and its
 * path in cgroup_path when this host has it (empty once removed).
 */
static void key_labels(char *buf, size_t len, const struct prom_sample *s,
		       const struct prom_key *k)
{
	uint32_t by = s->hist.key_by;
	const char *path;
	char esc[KEY_PATH_MAX];
	size_t n = 0;

	buf[0] = 0;
	if ((by & NETLAT_KEY_PORT) && n < len)
		n += k->other ? snprintf(buf + n, len - n, "port=\"other\",") :
				snprintf(buf + n, len - n, "port=\"%u\",", k->hist.key_port);
	if ((by & NETLAT_KEY_NETNS) && n < len)
		n += k->other ? snprintf(buf + n, len - n, "netns=\"other\",") :
				snprintf(buf + n, len - n, "netns=\"%u\",", k->hist.key_netns);
	if ((by & NETLAT_KEY_CGROUP) && n < len)
		n += k->other ? snprintf(buf + n, len - n, "cgroup=\"other\",") :
				snprintf(buf + n, len - n, "cgroup=\"%llu\",",
					 ull(k->hist.key_cgroup));
	if ((by & NETLAT_KEY_CGROUP) && n < len) {
		path = k->other ? "other" : cgpath_lookup(k->hist.key_cgroup);
		label_value(esc, sizeof(esc), path ? path : "");
		n += snprintf(buf + n, len - n, "cgroup_path=\"%s\",", esc);
	}
}

/* A stage family per key: the stages with samples. */
static void key_stage_family(const struct fmt *o, const struct prom_sample *s,
			     const char *name, const char *help, bool tcp)
{
	char kl[KEY_LABELS_MAX];
	unsigned int i;

	family(o, name, "histogram", "seconds", help);
	for (i = 0; i < s->nr_keys; i++) {
		key_labels(kl, sizeof(kl), s, &s->keys[i]);
		stage_series(o, name, kl, s->keys[i].st, tcp, true);
	}
}

static void key_counter(const struct fmt *o, const struct prom_sample *s,
			const char *name, const char *unit, const char *help,
			size_t off)
{
	char kl[KEY_LABELS_MAX];
	unsigned int i;

	family(o, name, "counter", unit, help);
	for (i = 0; i < s->nr_keys; i++) {
		const struct prom_key *k = &s->keys[i];
		uint64_t v;

		memcpy(&v, (const char *)&k->hist + off, sizeof(v));
		key_labels(kl, sizeof(kl), s, k);
		kl[strlen(kl) - 1] = 0;		/* no trailing comma */
		fprintf(o->f, "%s_total{%s} %llu\n", name, kl, ull(v));
	}
}

/* Per service (netlat config --by): only when the kernel keeps keys. */
static void key_metrics(const struct fmt *o, const struct prom_sample *s)
{
	const struct netlat_hist *h = &s->hist;

	if (!s->nr_keys)
		return;
	key_stage_family(o, s, "netlat_key_tcp_stage_seconds",
			 "netlat_tcp_stage_seconds per key (netlat config --by); "
			 "other: the keys not kept.", true);
	key_stage_family(o, s, "netlat_key_rx_stage_seconds",
			 "netlat_rx_stage_seconds per key (netlat config --by); "
			 "other: the keys not kept.", false);
	key_counter(o, s, "netlat_key_tcp_packets", NULL,
		    "netlat_tcp_packets per key.", offsetof(struct netlat_hist, packets));
	key_counter(o, s, "netlat_key_tcp_bytes", "bytes",
		    "netlat_tcp_bytes per key.", offsetof(struct netlat_hist, bytes));
	key_counter(o, s, "netlat_key_rx_packets", NULL,
		    "netlat_rx_packets per key.", offsetof(struct netlat_hist, rx_packets));
	key_counter(o, s, "netlat_key_rx_bytes", "bytes",
		    "netlat_rx_bytes per key.", offsetof(struct netlat_hist, rx_bytes));
	counter(o, "netlat_keys_evicted", NULL,
		"Keys that gave their slot up, idle, to a key that found none.",
		h->keys_evicted);
	counter(o, "netlat_keys_folded_sockets", NULL,
		"Sockets whose key found no slot: counted in the other key.",
		h->keys_folded);
	gauge(o, "netlat_keys_limit", NULL, "Keys kept at once (netlat config --keys).",
	      (double)h->max_keys);
	gauge(o, "netlat_keys_memory_bytes", "bytes",
	      "Memory of the histograms by key.", (double)h->keys_mem_bytes);
}

/* The per-CPU ring counters: a metric each, from a field of netlat_cpu_stats. */
static const struct ring_counter {
	const char *name;
	size_t field;
	const char *help;
} ring_counters[] = {
	{ "netlat_ring_records_written", offsetof(struct netlat_cpu_stats, written),
	  "Records stored in the CPU's ring, LOST records included." },
	{ "netlat_ring_records_dropped", offsetof(struct netlat_cpu_stats, dropped),
	  "Records dropped: the ring was full, or a probe hit inside another write." },
	{ "netlat_ring_records_filtered", offsetof(struct netlat_cpu_stats, filtered),
	  "Probe hits the in-kernel filters kept out of the ring." },
	{ "netlat_ring_records_overwritten", offsetof(struct netlat_cpu_stats, overwritten),
	  "Records overwritten to make room (overwrite mode)." },
	{ "netlat_ring_resyncs", offsetof(struct netlat_cpu_stats, resyncs),
	  "Times a reader found a bad consumer index or record and skipped the CPU's unread data." },
};

static void cpu_counter(const struct fmt *o, const struct prom_sample *s,
			const struct ring_counter *c)
{
	unsigned int i;

	family(o, c->name, "counter", NULL, c->help);
	for (i = 0; i < s->nr_cpus; i++) {
		uint64_t v;

		memcpy(&v, (const char *)&s->cpu[i] + c->field, sizeof(v));
		fprintf(o->f, "%s_total{cpu=\"%u\"} %llu\n", c->name, s->cpu[i].cpu, ull(v));
	}
}

/* One 0/1 gauge per probe group: is its bit set in @mask. */
/* The hook hits each group's probes missed, for the groups this tool names. */
static void group_missed_counter(const struct fmt *o, const struct netlat_probes *pr)
{
	const char *name = "netlat_probe_group_missed";
	unsigned int bit;

	family(o, name, "counter", NULL,
	       "Probe hits skipped (nested in the same context, or in a kprobe's handler), by the probe group they belong to.");
	for (bit = 0; bit < 64; bit++) {
		const char *g = netlat_probe_name(1ULL << bit);

		if (g)
			fprintf(o->f, "%s_total{group=\"%s\"} %llu\n", name, g,
				ull(pr->group_missed[bit]));
	}
}

static void group_gauge(const struct fmt *o, const char *name, const char *help,
			uint64_t mask)
{
	unsigned int bit;

	family(o, name, "gauge", NULL, help);
	for (bit = 0; bit < 64; bit++) {
		const char *g = netlat_probe_name(1ULL << bit);

		if (g)
			fprintf(o->f, "%s{group=\"%s\"} %d\n", name, g,
				!!(mask & (1ULL << bit)));
	}
}

/* The counters of struct netlat_hist, as the uapi lists them. */
static void hist_counters(const struct fmt *o, const struct netlat_hist *h)
{
#define HIST_COUNTER(field, NAME, metric, unit, help) \
	counter(o, "netlat_" #metric, *(unit) ? (unit) : NULL, help, h->field);
	NETLAT_HIST_COUNTERS(HIST_COUNTER)
#undef HIST_COUNTER
}

void prom_format(FILE *f, const struct prom_sample *s, bool openmetrics)
{
	const struct fmt o = { .f = f, .om = openmetrics };
	const struct netlat_hist *h = &s->hist;
	const struct netlat_info *in = &s->info;
	unsigned int k;

	stage_histograms(&o, s);
	key_metrics(&o, s);
	hist_counters(&o, h);
	gauge(&o, "netlat_tcp_sockets", NULL,
	      "Sockets the packet table follows now.", (double)h->flows);
	gauge(&o, "netlat_tcp_sockets_limit", NULL,
	      "Sockets the packet table has entries for.", (double)in->pkt_flows);
	gauge(&o, "netlat_tcp_packets_limit", NULL,
	      "Packets in flight the packet table can follow, all sockets together.",
	      (double)in->pkt_pkts);
	gauge(&o, "netlat_table_budget_bytes", "bytes",
	      "The packet tables' memory budget (netlat config --table-bytes).",
	      (double)in->table_bytes);
	gauge(&o, "netlat_rx_sockets", NULL,
	      "Sockets the receive table follows now.", (double)h->rx_flows);
	family(&o, "netlat_tcp_retransmitted_segments", "counter", NULL,
	       "Segments retransmitted, by kind, as the kernel counts them in RetransSegs.");
	for (k = NETLAT_RETRANS_OTHER; k <= NETLAT_RETRANS_SYNACK; k++)
		fprintf(f, "netlat_tcp_retransmitted_segments_total{kind=\"%s\"} %llu\n",
			netlat_retrans_kind_name(k), ull(h->retrans_segs[k]));

	for (k = 0; k < sizeof(ring_counters) / sizeof(ring_counters[0]); k++)
		cpu_counter(&o, s, &ring_counters[k]);
	counter(&o, "netlat_kprobe_missed", NULL,
		"Probe hits skipped (nested in the same context or in a kprobe's handler, no return instance): "
		"events lost without a LOST record.", s->probes.nmissed);
	group_missed_counter(&o, &s->probes);

	group_gauge(&o, "netlat_probe_group_available",
		    "1 if the probe group has a probe on this kernel.", s->probes.available);
	group_gauge(&o, "netlat_probe_group_enabled",
		    "1 if the probe group is enabled.", s->probes.enabled);
	group_gauge(&o, "netlat_probe_group_partial",
		    "1 if the probe group is available but misses a probe on this kernel.",
		    s->probes.partial);
	group_gauge(&o, "netlat_probe_group_deferred",
		    "1 if the probe group's probes live in a kernel module that is not loaded.",
		    s->probes.deferred);

	gauge(&o, "netlat_level", NULL,
	      "Record level: 0 events (a record per probe hit), 1 packets (kernel histograms).",
	      (double)in->level);
	gauge(&o, "netlat_tracing", NULL, "1 if records are being written.",
	      (in->state & NETLAT_STATE_RUNNING) ? 1 : 0);
	gauge(&o, "netlat_consumer", NULL, "1 if an open file consumes the rings.",
	      (in->state & NETLAT_STATE_CONSUMER) ? 1 : 0);
	gauge(&o, "netlat_slow_threshold_seconds", "seconds",
	      "Packet level: packets whose transmit-to-ACK time is below this write no record.",
	      (double)in->slow_ns / 1e9);
	gauge(&o, "netlat_ring_size_bytes", "bytes", "Bytes of record data per CPU ring.",
	      (double)in->ring_bytes);
	family(&o, "netlat_memory_bytes", "gauge", "bytes",
	       "Memory the module holds: rings (and the snapshot buffer while it exists), "
	       "packet table (and histograms), receive table.");
	fprintf(f, "netlat_memory_bytes{area=\"rings\"} %llu\n", ull(in->mem_bytes));
	fprintf(f, "netlat_memory_bytes{area=\"packet_table\"} %llu\n", ull(in->pkt_mem_bytes));
	fprintf(f, "netlat_memory_bytes{area=\"receive_table\"} %llu\n", ull(in->rx_mem_bytes));
	if (openmetrics)
		fputs("# EOF\n", f);
}

/* ---- collecting ----------------------------------------------------------- */

/* Why an ioctl failed, naming the missing feature as the tools do. */
static const char *ioctl_reason(const char *path, unsigned long request, int err)
{
	struct stat st;

	if (err == ENOTTY && !stat(path, &st) && !S_ISCHR(st.st_mode))
		return "not a netlat device";
	if (request == NETLAT_IOC_HIST && (err == ENOTTY || err == EOPNOTSUPP))
		return "this netlat.ko has no packet level (NETLAT_IOC_HIST)";
	if (err == EPERM || err == EACCES)
		return netlat_dev_strerror(err);
	return netlat_ioctl_strerror(request, err);
}

int prom_collect(const char *path, FILE *f, bool openmetrics, char *errbuf)
{
	struct prom_sample s;
	unsigned long request;
	const char *what;
	int fd, r;

	/* opened per scrape: an idle exporter holds no reference to the module */
	fd = netlat_dev_open(path, O_RDONLY, errbuf);
	if (fd < 0)
		return -1;
	r = prom_read(fd, &s, &what, &request);
	close(fd);
	if (r < 0) {
		snprintf(errbuf, NETLAT_ERRBUF_SIZE, "%s: %s: %s", path, what,
			 ioctl_reason(path, request, -r));
		return -1;
	}
	prom_format(f, &s, openmetrics);
	prom_sample_free(&s);
	return 0;
}

/* ---- textfile ------------------------------------------------------------- */

/* fsync the directory of @file, so that the rename itself is durable. */
static void sync_dir(const char *file)
{
	char *copy = strdup(file);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/* One atomic write of @file: 0, or -1 with one line in @errbuf. */
static int write_textfile(const char *path, const char *file, char *tmp, char *errbuf)
{
	FILE *f;
	int fd, err;

	if (!(f = fopen(tmp, "w"))) {
		snprintf(errbuf, NETLAT_ERRBUF_SIZE, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	/* node_exporter reads the text format 0.0.4 only */
	if (prom_collect(path, f, false, errbuf)) {
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fd = fileno(f);
	if (fflush(f) || ferror(f) || fsync(fd) < 0) {
		err = errno;
		fclose(f);
		unlink(tmp);
		snprintf(errbuf, NETLAT_ERRBUF_SIZE, "cannot write %s: %s", tmp, strerror(err));
		return -1;
	}
	if (fclose(f) || rename(tmp, file) < 0) {
		err = errno;
		unlink(tmp);
		snprintf(errbuf, NETLAT_ERRBUF_SIZE, "cannot write %s: %s", file, strerror(err));
		return -1;
	}
	sync_dir(file);
	return 0;
}

int prom_textfile_run(const char *path, const char *file, double interval_s,
		      double duration_s)
{
	char errbuf[NETLAT_ERRBUF_SIZE], last[NETLAT_ERRBUF_SIZE] = "", *tmp;
	uint64_t end = 0, next, now;
	size_t len = strlen(file) + 5;
	unsigned long writes = 0;

	tmp = malloc(len);
	if (!tmp) {
		error("out of memory");
		return 1;
	}
	snprintf(tmp, len, "%s.tmp", file);
	if (duration_s > 0)
		end = monotonic_ns() + (uint64_t)(duration_s * 1e9);
	catch_stop_signals();
	next = monotonic_ns();
	for (;;) {
		if (!write_textfile(path, file, tmp, errbuf)) {
			writes++;
			last[0] = 0;
		} else if (!writes) {
			/* the first write fails: a setup problem, say so and exit */
			error("%s", errbuf);
			free(tmp);
			return 1;
		} else {
			/* later (module unloaded?): no stale metrics, keep trying */
			unlink(file);
			if (strcmp(errbuf, last))
				error("%s", errbuf);
			snprintf(last, sizeof(last), "%s", errbuf);
		}
		if (interval_s <= 0 || stop_requested)
			break;
		/* on a fixed schedule, so the writes do not drift */
		next += (uint64_t)(interval_s * 1e9);
		now = monotonic_ns();
		if (next < now)
			next = now;
		if (end && next > end)
			break;
		while (!stop_requested && (now = monotonic_ns()) < next)
			usleep(next - now > TICK_MS * 1000000ULL ? TICK_MS * 1000 :
			       (useconds_t)((next - now) / 1000));
		if (stop_requested)
			break;
	}
	free(tmp);
	return 0;
}
