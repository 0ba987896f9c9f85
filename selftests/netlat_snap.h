/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flight-recorder helpers of the tests: the SNAPSHOT and TRIGGERS ioctls,
 * ring mode, and a checked view of a snapshot stream. Include
 * netlat_util.h first.
 */
#ifndef NETLAT_SNAP_H
#define NETLAT_SNAP_H

/* ---- ioctl helpers ------------------------------------------------------- */

static inline int snap_ioc(int fd, uint32_t flags,
			   struct netlat_snapshot *out)
{
	struct netlat_snapshot s = { .flags = flags };
	int ret = nl_ioctl(fd, NETLAT_IOC_SNAPSHOT, &s, sizeof(s));

	if (!ret && out)
		*out = s;
	return ret;
}

static inline int trig_set(int fd, struct netlat_triggers *t)
{
	t->flags = NETLAT_TRIGGERS_SET;
	return nl_ioctl(fd, NETLAT_IOC_TRIGGERS, t, sizeof(*t));
}

static inline int trig_get(int fd, struct netlat_triggers *t)
{
	memset(t, 0, sizeof(*t));
	return nl_ioctl(fd, NETLAT_IOC_TRIGGERS, t, sizeof(*t));
}

static inline int trig_off(int fd)
{
	struct netlat_triggers t = { 0 };

	return trig_set(fd, &t);
}

static inline int set_mode(int fd, uint32_t mode)
{
	struct netlat_config cfg = { .flags = NETLAT_CONFIG_MODE, .mode = mode };

	return nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
}

/* Stopped, @mode, rings of @ring bytes, reset, started. */
static inline int setup_rings(int fd, uint32_t mode, uint64_t ring)
{
	int ret = nl_control(fd, NETLAT_IOC_STOP);

	if (!ret)
		ret = set_mode(fd, mode);
	if (!ret)
		ret = nl_reconfigure(fd, ring, ring / 4, 50, true);
	return ret;
}

/*
 * After a test of the flight recorder or the packet level: triggers off,
 * no snapshot, probes off, the events level, stream mode with rings of
 * @ring bytes, started. 0 or the first failure.
 */
static inline int nl_flight_done(int fd, uint64_t ring)
{
	int ret = trig_off(fd);

	if (!ret)
		ret = snap_ioc(fd, NETLAT_SNAPSHOT_RELEASE, NULL);
	if (!ret)
		ret = nl_probes(fd, true, 0, NULL);
	if (!ret)
		ret = nl_set_level(fd, NETLAT_LEVEL_EVENTS, 0);
	if (!ret)
		ret = setup_rings(fd, NETLAT_MODE_STREAM, ring);
	return ret;
}

static inline uint64_t snap_capacity(const struct netlat_info *info)
{
	uint64_t n = sizeof(struct netlat_rec_stream) +
		     sizeof(struct netlat_rec_snapshot) +
		     info->nr_cpus * (sizeof(struct netlat_rec_snap_cpu) +
				      info->ring_bytes);

	return NL_ALIGN(n, (uint64_t)info->page_size);
}

/* Make @fd a snapshot reader and read the whole frozen stream into @buf. */
static inline ssize_t snap_read_all(int fd, unsigned char *buf, size_t cap,
				    size_t chunk)
{
	size_t len = 0;
	ssize_t n;
	int ret = snap_ioc(fd, NETLAT_SNAPSHOT_READ, NULL);

	if (ret)
		return ret;
	for (;;) {
		size_t want = chunk < cap - len ? chunk : cap - len;

		if (!want)
			return -ENOSPC;
		n = read(fd, buf + len, want);
		if (n < 0)
			return -errno;
		if (!n)
			return len;
		len += n;
	}
}

/* ---- snapshot stream parsing ------------------------------------------ */

struct snap_view {
	const struct netlat_rec_stream *stream;
	const struct netlat_rec_snapshot *snap;
	const struct netlat_rec_snap_cpu **cpu;	/* [nr_cpus], NULL if absent */
	struct nl_log log;			/* every record, per-CPU checks */
	char why[256];
};

static inline void view_free(struct snap_view *v)
{
	free(v->cpu);
	nl_log_free(&v->log);
}

/*
 * Check the framing of a whole snapshot stream: STREAM, SNAPSHOT, then
 * SNAP_CPU sections in ascending CPU order, each followed by exactly its
 * records, every one valid, of that CPU, sequences contiguous from
 * first_seq (LOST records covering gaps). 0 or -1 with v->why.
 */
static inline int view_parse(struct snap_view *v, const unsigned char *buf,
			     size_t len, unsigned int nr_cpus)
{
	const struct netlat_rec_hdr *h;
	size_t off = 0;
	int last_cpu = -1;

	memset(v, 0, sizeof(*v));
	v->cpu = calloc(nr_cpus, sizeof(*v->cpu));
	if (!v->cpu || nl_log_init(&v->log, nr_cpus, true))
		return nl_fail(v->why, sizeof(v->why), "out of memory");
	if (nl_check_rec(buf, len, nr_cpus, v->why, sizeof(v->why)))
		return -1;
	v->stream = (const void *)buf;
	if (v->stream->hdr.type != NETLAT_REC_STREAM ||
	    v->stream->abi_version != NETLAT_ABI_VERSION ||
	    v->stream->nr_cpus != nr_cpus)
		return nl_fail(v->why, sizeof(v->why), "bad STREAM record");
	off = v->stream->hdr.size;
	v->snap = (const void *)(buf + off);
	if (len - off < sizeof(*v->snap) ||
	    v->snap->hdr.type != NETLAT_REC_SNAPSHOT ||
	    v->snap->hdr.size != sizeof(*v->snap) ||
	    v->snap->hdr.magic != NETLAT_REC_MAGIC || v->snap->hdr.seq ||
	    v->snap->reserved)
		return nl_fail(v->why, sizeof(v->why), "bad SNAPSHOT record");
	if (v->snap->bytes != len)
		return nl_fail(v->why, sizeof(v->why),
			       "SNAPSHOT bytes %llu, stream %zu",
			       (unsigned long long)v->snap->bytes, len);
	off += sizeof(*v->snap);
	while (off < len) {
		const struct netlat_rec_snap_cpu *sc = (const void *)(buf + off);
		struct nl_cpu_track *t;
		size_t end, n = 0;

		if (len - off < sizeof(*sc) ||
		    sc->hdr.type != NETLAT_REC_SNAP_CPU ||
		    sc->hdr.size != sizeof(*sc) ||
		    sc->hdr.magic != NETLAT_REC_MAGIC || sc->hdr.seq ||
		    sc->hdr.cpu >= nr_cpus || (int)sc->hdr.cpu <= last_cpu)
			return nl_fail(v->why, sizeof(v->why),
				       "bad SNAP_CPU at offset %zu", off);
		last_cpu = sc->hdr.cpu;
		v->cpu[sc->hdr.cpu] = sc;
		off += sizeof(*sc);
		end = off + sc->bytes;
		if (end > len)
			return nl_fail(v->why, sizeof(v->why),
				       "cpu %u: %llu bytes past the end",
				       sc->hdr.cpu,
				       (unsigned long long)sc->bytes);
		/* the log checks contiguity from first_seq */
		t = &v->log.cpu[sc->hdr.cpu];
		t->started = true;
		t->next_seq = sc->first_seq;
		while (off < end) {
			h = (const void *)(buf + off);
			if (nl_log_add(&v->log, h, end - off)) {
				snprintf(v->why, sizeof(v->why), "%s",
					 v->log.why);
				return -1;
			}
			if (h->cpu != sc->hdr.cpu)
				return nl_fail(v->why, sizeof(v->why),
					       "record of cpu %u in section %u",
					       h->cpu, sc->hdr.cpu);
			off += h->size;
			n++;
		}
		if (n != sc->records)
			return nl_fail(v->why, sizeof(v->why),
				       "cpu %u: %zu records, SNAP_CPU says %llu",
				       sc->hdr.cpu, n,
				       (unsigned long long)sc->records);
	}
	return 0;
}

/* TAKE, read the stream through a new file in @chunk pieces, parse it. */
static inline int take_view(int fd, unsigned char *buf, size_t cap,
			    size_t chunk, unsigned int nr_cpus,
			    struct snap_view *v)
{
	struct netlat_snapshot s;
	ssize_t len;
	int rd, ret;

	memset(v, 0, sizeof(*v));
	ret = snap_ioc(fd, NETLAT_SNAPSHOT_TAKE, &s);
	if (ret)
		return nl_fail(v->why, sizeof(v->why), "TAKE: %s",
			       strerror(-ret));
	rd = nl_open(0);
	if (rd < 0)
		return nl_fail(v->why, sizeof(v->why), "open: %s",
			       strerror(errno));
	len = snap_read_all(rd, buf, cap, chunk);
	close(rd);
	if (len != (ssize_t)s.bytes)
		return nl_fail(v->why, sizeof(v->why), "read %zd of %llu bytes",
			       len, (unsigned long long)s.bytes);
	return view_parse(v, buf, len, nr_cpus);
}

/* The record that fired a trigger snapshot (trig_cpu, trig_seq), or NULL. */
static inline const struct netlat_rec_hdr *
view_trig_rec(const struct snap_view *v)
{
	const struct netlat_rec_hdr *h, *found = NULL;

	nl_log_for_each(&v->log, h)
		if (h->cpu == v->snap->trig_cpu && h->seq == v->snap->trig_seq)
			found = h;
	return found;
}

/* i-th record of @cpu's section, or NULL. */
static inline const struct netlat_rec_hdr *
view_rec(const struct snap_view *v, unsigned int cpu, uint64_t i)
{
	const struct netlat_rec_snap_cpu *sc = v->cpu[cpu];
	const unsigned char *p;

	if (!sc || i >= sc->records)
		return NULL;
	p = (const unsigned char *)(sc + 1);
	while (i--)
		p += ((const struct netlat_rec_hdr *)p)->size;
	return (const void *)p;
}

#endif /* NETLAT_SNAP_H */
