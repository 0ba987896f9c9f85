/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/*
 * libnetlat - read and interpret netlat record streams.
 *
 * A netlat stream is the byte stream read() returns on /dev/netlat: one
 * NETLAT_REC_STREAM record, then records of every CPU, interleaved per
 * read() batch (see <linux/netlat.h>). A capture file is the same bytes
 * saved to disk, so every function here works on both.
 *
 * Pieces, each usable alone:
 *  - sources:   open the device, a capture file or stdin; iterate validated
 *               records with netlat_next().
 *  - merge:     re-order records of all CPUs by (ts_ns, cpu, seq).
 *  - seq:       per-CPU sequence checking and loss accounting.
 *  - samples:   exact (sort-based, nearest-rank) percentiles.
 *  - time:      CLOCK_MONOTONIC record time to wall-clock time.
 *  - device:    the ioctls, with the size-first convention filled in.
 *
 * Errors follow one convention: functions return a negative errno value
 * (or NULL with errno set); a human-readable message is available from
 * netlat_errmsg() for sources and in the caller's errbuf for open calls.
 * Messages never end with a newline and start with the source name.
 *
 * Nothing here is thread-safe; use one object per thread.
 */
#ifndef LIBNETLAT_H
#define LIBNETLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netlat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Size of the errbuf arguments below. */
#define NETLAT_ERRBUF_SIZE	256

/* ---- sources ----------------------------------------------------------- */

struct netlat_source;

/*
 * netlat_open() - open a record source
 * @path: NULL for NETLAT_DEVICE_PATH, "-" for stdin, else a device or a
 *	capture file path.
 * @errbuf: NULL, or NETLAT_ERRBUF_SIZE bytes receiving the reason on error.
 *
 * Opening the device needs CAP_NET_ADMIN or CAP_PERFMON. For paths under
 * /dev/ the usual failures get explanations ("is the netlat module
 * loaded?", "permission denied: need CAP_NET_ADMIN or CAP_PERFMON").
 * Returns NULL with errno set on failure.
 */
struct netlat_source *netlat_open(const char *path, char *errbuf);

/*
 * netlat_open_fd() - read records from an open descriptor
 * @fd: descriptor positioned at the start of a stream; not closed by
 *	netlat_close().
 * @name: used in messages.
 */
struct netlat_source *netlat_open_fd(int fd, const char *name, char *errbuf);

void netlat_close(struct netlat_source *src);

/*
 * netlat_next() - the next record of the stream
 * @rec: set to the record on success. It is 8-byte aligned, at least
 *	hdr.size bytes long, and valid until the next call on @src.
 *
 * Every returned record has passed these checks: magic, version ==
 * NETLAT_ABI_VERSION, size in [sizeof(hdr), NETLAT_REC_MAX_SIZE] and a
 * multiple of NETLAT_REC_ALIGN, cpu < nr_cpus of the stream header, and
 * for known types the type's own layout (a MARKER's len fits its size,
 * ...). The first record is always the NETLAT_REC_STREAM header; a later
 * STREAM record (concatenated captures) is validated the same way and
 * becomes the current header. Records of unknown types are returned too:
 * callers skip what they do not know.
 *
 * Returns:
 *  1		a record
 *  0		end of stream (end of file, or netlat_stop_reading())
 *  -EINTR	a signal interrupted a blocking read; call again to go on
 *  -EAGAIN	no data within the timeout (netlat_set_timeout()); ditto
 *  -ENOMSG	not a netlat capture (no valid stream header first)
 *  -EPROTONOSUPPORT unsupported ABI version
 *  -EBADMSG	corrupt record
 *  -ENODATA	truncated capture: the stream ends inside a record
 *  other	read() errors (-EBUSY: another reader is consuming)
 * Errors other than -EINTR and -EAGAIN are final: later calls return them
 * again. The message (netlat_errmsg()) gives the byte offset.
 */
int netlat_next(struct netlat_source *src, const struct netlat_rec_hdr **rec);

/* Message of the last error of @src, "" if none. */
const char *netlat_errmsg(const struct netlat_source *src);

/* The current stream header, or NULL before the first record. */
const struct netlat_rec_stream *netlat_stream(const struct netlat_source *src);

/* Name given at open time ("<stdin>" for "-"). */
const char *netlat_name(const struct netlat_source *src);

int netlat_fd(const struct netlat_source *src);

/* True if reads may block (device, pipe, ...), false for regular files. */
bool netlat_is_live(const struct netlat_source *src);

/* Stream offset of the next record: bytes consumed so far. */
uint64_t netlat_offset(const struct netlat_source *src);

/*
 * Bytes read from the descriptor but not yet returned as records. When it
 * is 0 the next netlat_next() will read(): a good moment to flush output.
 */
size_t netlat_buffered(const struct netlat_source *src);

/*
 * Wait at most @timeout_ms for data before each read() of a live source;
 * netlat_next() then returns -EAGAIN. -1 (the default) waits forever.
 */
void netlat_set_timeout(struct netlat_source *src, int timeout_ms);

/*
 * Copy every byte read from the source to @fd, one write per read() (so a
 * device capture holds whole records only). @name is used in messages; a
 * failed write is a final error of the source.
 */
void netlat_set_tee(struct netlat_source *src, int fd, const char *name);

/*
 * Records (whole, @len bytes) for the tee to write right after the
 * stream's first record, the stream header, each given its cpu and
 * ts_ns: how netlat record puts NETLAT_REC_NOTE records into a capture.
 * Call before the first netlat_next(). 0 or -ENOMEM.
 */
int netlat_set_tee_insert(struct netlat_source *src, const void *recs, size_t len);

/*
 * Stop reading: netlat_next() returns the records already read (records
 * consumed from the device must not be thrown away), then 0.
 */
void netlat_stop_reading(struct netlat_source *src);

/* "STREAM", "LOST", "MARKER", or NULL for a type this library predates. */
const char *netlat_type_name(unsigned int type);

/* ---- time-ordered merge ------------------------------------------------- */

/* Default hold window of netlat_merge_new(): one second of timestamps. */
#define NETLAT_HOLD_NS_DEFAULT	1000000000ULL

struct netlat_merge;

/*
 * netlat_merge_new() - re-order the records of @src by (ts_ns, cpu, seq)
 * @hold_ns: how long, in record time, a record may be held waiting for
 *	CPUs that have nothing queued.
 *
 * Records of one CPU arrive in order; records of different CPUs interleave
 * per read() batch. The merge queues records per CPU and releases the
 * oldest head once every CPU that produced data in this stream has a
 * record queued (then nothing older can follow), once the newest
 * timestamp seen is @hold_ns past it, or at the end of the stream. A
 * live source that times out (-EAGAIN) also advances time with the
 * CLOCK_MONOTONIC clock, so an idle device does not hold records forever.
 * A record that arrives after younger ones were released is still
 * returned, at once, and counted by netlat_merge_late(). A STREAM record
 * is a barrier: everything before it is released first. SNAPSHOT and
 * SNAP_CPU records are returned as soon as they are read (they describe
 * the records that follow them, which their timestamps do not order).
 *
 * @src stays owned by the caller and must outlive the merge.
 */
struct netlat_merge *netlat_merge_new(struct netlat_source *src,
				      uint64_t hold_ns);

/*
 * Same contract as netlat_next(), in merged order. After a final error of
 * the source the records still held are returned first, then the error.
 * On -ENOMEM the message is in netlat_errmsg() of the source.
 */
int netlat_merge_next(struct netlat_merge *m, const struct netlat_rec_hdr **rec);

/* Records returned after a younger one: they arrived too late to order. */
uint64_t netlat_merge_late(const struct netlat_merge *m);

void netlat_merge_free(struct netlat_merge *m);

/* ---- sequence and loss tracking ----------------------------------------- */

struct netlat_seq;

/* Counters of one CPU or of all. */
struct netlat_seq_stats {
	uint64_t records;	/* records seen, STREAM, SNAPSHOT, SNAP_CPU excluded */
	uint64_t lost;		/* records dropped: sum of LOST counts */
	uint64_t gaps;		/* unexplained sequence breaks */
	/* Snapshots (sums of their NETLAT_REC_SNAP_CPU counters): */
	uint64_t overwritten;	/* overwritten by newer records: not loss */
	uint64_t skipped;	/* left out by the pre window: not loss */
};

/* Details of one unexplained sequence break. */
struct netlat_seq_gap {
	unsigned int cpu;
	uint64_t expected;	/* seq the record should have had */
	uint64_t seq;		/* seq it had (first_seq for a bad LOST) */
};

struct netlat_seq *netlat_seq_new(void);
void netlat_seq_free(struct netlat_seq *t);

/*
 * netlat_seq_add() - account one record, in per-CPU stream order
 *
 * Applies the rule of the ABI: on each CPU seq grows by one per record,
 * except that a LOST record with count N and first_seq F follows seq F - 1
 * and has seq F + N. The first record of each CPU after a STREAM record
 * sets the baseline (earlier records went to earlier readers). In a
 * snapshot stream a NETLAT_REC_SNAP_CPU sets it instead: its CPU's
 * records start at first_seq (what the ring overwrote before them is
 * counted as overwritten, not lost) and number exactly its records; a
 * LOST record first in a section only adds its count. Anything else is
 * an unexplained gap: it should never happen (a snapshot section shorter
 * than announced counts one).
 * Returns 0, 1 for an unexplained gap (described in *@gap if not NULL), or
 * -ENOMEM.
 */
int netlat_seq_add(struct netlat_seq *t, const struct netlat_rec_hdr *rec,
		   struct netlat_seq_gap *gap);

/* One past the highest CPU seen. */
unsigned int netlat_seq_nr_cpus(const struct netlat_seq *t);
void netlat_seq_cpu_stats(const struct netlat_seq *t, unsigned int cpu,
			  struct netlat_seq_stats *st);
void netlat_seq_total(const struct netlat_seq *t, struct netlat_seq_stats *st);

/* ---- samples and percentiles -------------------------------------------- */

/* A growable array of values; zero-initialise ({0}) before use. */
struct netlat_samples {
	uint64_t *v;
	size_t n;
	size_t cap;
};

int netlat_samples_add(struct netlat_samples *s, uint64_t value);
void netlat_samples_free(struct netlat_samples *s);

void netlat_sort_u64(uint64_t *v, size_t n);

/*
 * netlat_percentile() - exact nearest-rank percentile of sorted values
 * @pct: in [0, 100]; resolved to 1/10000 of a percent (99.9, 99.99, ...).
 *
 * Returns the smallest value v such that at least @pct percent of the
 * values are <= v (sorted[ceil(pct / 100 * n) - 1], min for 0), computed
 * in integers so 99.9 of 1000 values is exactly the 999th. 0 if n is 0.
 */
uint64_t netlat_percentile(const uint64_t *sorted, size_t n, double pct);

/* The summary every latency table prints. */
struct netlat_dist {
	uint64_t count;
	uint64_t min, p50, p90, p99, p999, max;
	double mean;
};

/* Summarise @v (sorted in place); all zero if n is 0. */
void netlat_dist_compute(uint64_t *v, size_t n, struct netlat_dist *d);

/* ---- time --------------------------------------------------------------- */

/* CLOCK_REALTIME nanoseconds of a record's ts_ns, by the stream's anchor. */
uint64_t netlat_wall_ns(const struct netlat_rec_stream *stream, uint64_t ts_ns);

#define NETLAT_TIME_DATE	(1U << 0)	/* prefix YYYY-MM-DD */
#define NETLAT_TIME_UTC		(1U << 1)	/* UTC instead of local time */

/* "HH:MM:SS.nnnnnnnnn" into @buf; returns snprintf-style length. */
int netlat_format_time(char *buf, size_t len, uint64_t wall_ns,
		       unsigned int flags);

/* ---- device control ----------------------------------------------------- */

/*
 * netlat_dev_open() - open the device for ioctls (NULL: NETLAT_DEVICE_PATH)
 * Returns a descriptor, or -errno with the explanation in @errbuf.
 */
int netlat_dev_open(const char *path, int oflags, char *errbuf);

/*
 * Explanation of an errno from opening or reading the device, e.g.
 * "permission denied: need CAP_NET_ADMIN or CAP_PERFMON".
 */
const char *netlat_dev_strerror(int err);

/*
 * The ioctls. Each fills in the size field (sizeof the struct this library
 * was built with) and zeroes reserved fields. Return 0 or -errno.
 */
int netlat_get_info(int fd, struct netlat_info *info);
int netlat_get_cpu_stats(int fd, unsigned int cpu, struct netlat_cpu_stats *st);
int netlat_start(int fd);
int netlat_stop(int fd);
int netlat_reset(int fd);
int netlat_set_config(int fd, const struct netlat_config *cfg);
/* NETLAT_IOC_PROBES: report into @pr; with @set, enable exactly @enable. */
int netlat_probes(int fd, bool set, uint64_t enable, struct netlat_probes *pr);
/*
 * NETLAT_IOC_HIST: the packet level's counters in *@h and up to
 * @nr_stages stage histograms in @st (NULL: counters only); @reset zeroes
 * them after the read. 0 or -errno.
 */
int netlat_hist(int fd, bool reset, struct netlat_hist *h,
		struct netlat_stage_hist *st, unsigned int nr_stages);
/*
 * The two points of @stage in a packet record; true if the kernel counted
 * that stage of the packet in its histograms (then *@to - *@from is the
 * sample it was given).
 */
bool netlat_pkt_stage(const struct netlat_rec_tcp_pkt *p, unsigned int stage,
		      uint64_t *from, uint64_t *to);
/*
 * A packet record of either size (the first 128 bytes, or with the
 * virtqueue and range fields): copied into *@buf, fields it lacks zero.
 * NULL if @h is no NETLAT_REC_TCP_PKT or too short.
 */
const struct netlat_rec_tcp_pkt *netlat_pkt_rec(const struct netlat_rec_hdr *h,
						struct netlat_rec_tcp_pkt *buf);
/*
 * NETLAT_IOC_FLOWS: the packet level's per-socket counters, up to @room
 * entries into @e (the recently closed sockets too with @closed). Returns
 * the number of entries the kernel has (more than @room: call again with
 * more room) or -errno; *@nclosed (may be NULL) gets the sockets closed.
 */
int netlat_flows(int fd, bool closed, struct netlat_flow_stats *e,
		 unsigned int room, uint64_t *nclosed);
/*
 * The same, bounded by @room (at least 1) and accounting for every
 * socket: the last entry written (NETLAT_FLOW_REST) sums the counters of
 * the sockets that did not fit, of the closed ones not listed and the
 * packets of sockets the table had no room for. Returns the entries
 * written, the sum included, or -errno; *@summed (may be NULL) gets the
 * sockets in the sum.
 */
int netlat_flows_bounded(int fd, bool closed, struct netlat_flow_stats *e,
			 unsigned int room, uint64_t *nclosed,
			 uint64_t *summed);
/* The same for a received packet's record (the NETLAT_STAGE_RX_* stages). */
bool netlat_rx_pkt_stage(const struct netlat_rec_rx_pkt *p, unsigned int stage,
			 uint64_t *from, uint64_t *to);
/*
 * "sendmsg>xmit", ... for enum netlat_stage, or NULL; the receive stages
 * carry the names of "netlat report"'s rx_stages ("netif>tcp", ...).
 */
const char *netlat_stage_name(unsigned int stage);
/*
 * Quantile @q (0..1) of a log2 histogram: linear inside the bucket that
 * holds it, so within a factor of two of the true value, and never above
 * the largest sample.
 */
uint64_t netlat_stage_quantile(const struct netlat_stage_hist *s, double q);

/*
 * True if record @rec (of struct @type) holds @field: fields appended to a
 * record type are missing from records of older modules, e.g.
 * NETLAT_REC_HAS(rec, struct netlat_rec_tcp_ack, xmit_ack_ns).
 */
#define NETLAT_REC_HAS(rec, type, field) \
	((rec)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

/*
 * A send-path record with a flow after its header: NETLAT_REC_TCP_SENDMSG
 * ... _TCP_DEV, TCP_PKT or TCP_ACK_OUT.
 */
static inline bool netlat_rec_is_tcp(unsigned int type)
{
	return (type >= NETLAT_REC_TCP_SENDMSG && type <= NETLAT_REC_TCP_DEV) ||
	       type == NETLAT_REC_TCP_PKT || type == NETLAT_REC_TCP_ACK_OUT;
}

/* A receive-path record: NETLAT_REC_RX_NETIF ... _RX_WAKE, or RX_PKT. */
static inline bool netlat_rec_is_rx(unsigned int type)
{
	return (type >= NETLAT_REC_RX_NETIF && type <= NETLAT_REC_RX_WAKE) ||
	       type == NETLAT_REC_RX_PKT;
}

/*
 * Explanation of an errno from the ioctl @request (NETLAT_IOC_*),
 * naming the missing feature when the module predates it: ENOTTY or
 * EOPNOTSUPP from NETLAT_IOC_SNAPSHOT gives "this netlat.ko has no
 * snapshot support", and so on.
 */
const char *netlat_ioctl_strerror(unsigned long request, int err);

/* Name of one NETLAT_PROBE_* bit ("sendmsg", "xmit", ...), or NULL. */
const char *netlat_probe_name(uint64_t bit);
/*
 * Parse a comma-separated list of probe group names ("all", "none" or the
 * names of netlat_probe_name) or a number. 0 or -EINVAL.
 */
int netlat_parse_probes(const char *s, uint64_t *mask);
/*
 * Whether such a list says "all": then enable what the kernel has
 * (available) and what waits for a module (deferred), nothing it cannot.
 */
bool netlat_probes_spec_all(const char *s);
/* Name of a NETLAT_RETRANS_* kind ("rto", "fast", ...). */
const char *netlat_retrans_kind_name(unsigned int kind);

/* ---- flight recorder: ring mode, snapshots, triggers, filters ----------- */

/*
 * The ring mode (NETLAT_MODE_STREAM or NETLAT_MODE_OVERWRITE). Only while
 * tracing is stopped and no ring is mapped (else -EBUSY); a change empties
 * the rings. -EINVAL from a module without modes.
 */
int netlat_set_mode(int fd, unsigned int mode);

/*
 * NETLAT_IOC_SNAPSHOT with NETLAT_SNAPSHOT_* @flags (0 only reports);
 * the state after the call in *@snap (may be NULL).
 */
int netlat_snapshot(int fd, unsigned int flags, struct netlat_snapshot *snap);

/*
 * netlat_snapshot_copy() - write the frozen snapshot stream to @out_fd
 * @fd: a descriptor of the device opened for this alone: it becomes a
 *	snapshot reader for good (NETLAT_SNAPSHOT_READ) and is left at the
 *	end of the stream.
 * @bytes: set to the bytes written.
 *
 * -ENODATA if there is no frozen snapshot or it was released meanwhile,
 * -EIO if the stream is not as long as the module said, or a write error.
 */
int netlat_snapshot_copy(int fd, int out_fd, uint64_t *bytes);

/*
 * Map the frozen snapshot read-only: @snap->bytes bytes (as returned by
 * netlat_snapshot()); NULL with errno set (ENODATA: none frozen). While
 * mapped it cannot be released. netlat_snapshot_unmap() with the same
 * @snap undoes it.
 */
const void *netlat_snapshot_map(int fd, const struct netlat_snapshot *snap);
int netlat_snapshot_unmap(const void *map, const struct netlat_snapshot *snap);

/*
 * Wait up to @timeout_ms (-1: forever) for a frozen snapshot (poll()
 * POLLPRI). 1 frozen, 0 timed out, -EINTR on a signal, or -errno.
 */
int netlat_wait_snapshot(int fd, int timeout_ms);

/* NETLAT_IOC_TRIGGERS: report into @t; set replaces every trigger setting. */
int netlat_get_triggers(int fd, struct netlat_triggers *t);
int netlat_set_triggers(int fd, const struct netlat_triggers *t);

/*
 * NETLAT_IOC_FILTERS. get: *@nr is the room at @rules in, the rules in
 * force out (only the first room ones are copied). set: replace the rules
 * with @nr rules (0 removes every rule).
 */
int netlat_get_filters(int fd, struct netlat_filter_rule *rules, unsigned int *nr);
int netlat_set_filters(int fd, const struct netlat_filter_rule *rules, unsigned int nr);

/*
 * netlat_parse_filter() - one filter rule from a spec
 * @spec: comma-separated KEY=VALUE conditions, all of which must hold:
 *	addr=A[/PREFIX] (IPv4 or IPv6, either side of the flow), port=N
 *	(either side), cookie=N (netlat_flow.cookie), sock-cookie=N
 *	(SO_COOKIE), netns=INODE|PATH (a number, or a path such as
 *	/proc/PID/ns/net), pid=TGID, tid=TID, and groups=G[,G...] (the probe
 *	groups the rule applies to, as netlat_parse_probes(); default all).
 *	Example: "addr=192.0.2.0/24,port=5001,groups=sendmsg,xmit".
 * @errbuf: NETLAT_ERRBUF_SIZE bytes for the reason on error (may be NULL).
 *
 * Checks everything the module checks (a prefix's host bits are zero, ...)
 * so a bad spec is refused with a precise reason. 0 or -EINVAL.
 */
int netlat_parse_filter(const char *spec, struct netlat_filter_rule *rule,
			char *errbuf);

/* The spec of @rule, as netlat_parse_filter() reads it; snprintf-style. */
int netlat_format_filter(char *buf, size_t len, const struct netlat_filter_rule *rule);

/*
 * netlat_parse_trigger() - add one trigger to @t (zero it first)
 * @spec: "retrans-fail" (a failed retransmit), "retrans=KIND[,KIND]" (a
 *	retransmit of these kinds: other, rto, fast, tlp, syn, synack, all),
 *	"latency=DURATION" (a transmit->ACK time of at least DURATION: a
 *	number with ns, us, ms or s), "rx-wait=DURATION" (a received
 *	packet waited at least DURATION in its socket's queue for the
 *	reader), "marker=TAG" (a marker whose data begins with TAG, 1 to
 *	NETLAT_TRIG_TAG_MAX bytes).
 *
 * Sets the armed bit and its field; pre_ms and post_ms are the caller's.
 * A trigger given twice is an error, except retrans kinds, which add up.
 * 0 or -EINVAL with the reason in @errbuf.
 */
int netlat_parse_trigger(const char *spec, struct netlat_triggers *t, char *errbuf);

/*
 * The armed triggers of @t as specs separated by ", " ("none" if none);
 * snprintf-style.
 */
int netlat_format_triggers(char *buf, size_t len, const struct netlat_triggers *t);

/* "retrans-fail", "retrans", "latency", "marker", "rx-wait" for a NETLAT_TRIG_* bit, or NULL. */
const char *netlat_trigger_name(unsigned int bit);

/* A duration: a number (fractions allowed) and ns, us, ms or s. 0 or -EINVAL. */
int netlat_parse_duration(const char *s, uint64_t *ns);

/* ---- names of the kernel's numbered values (libnetlat_names.c) --------- */

/*
 * A table of value -> name, for enum skb_drop_reason (the reason of
 * NETLAT_REC_RX_DROP and netlat_rec_rx_pkt.drop_reason), whose numbering
 * is the running kernel's: names come from the skb:kfree_skb tracepoint's
 * format on the recording host, or a capture's NETLAT_REC_NOTE records.
 */
#define NETLAT_NAME_MAX		48	/* longest name kept, NUL included */

struct netlat_names;

struct netlat_names *netlat_names_new(void);
void netlat_names_free(struct netlat_names *t);
void netlat_names_clear(struct netlat_names *t);
size_t netlat_names_count(const struct netlat_names *t);
/* Add or replace one name (@len bytes, no NUL). 0, -EINVAL, -ENOMEM. */
int netlat_names_add(struct netlat_names *t, uint32_t value, const char *name, size_t len);
/* The name of @value, or NULL (then show the number). */
const char *netlat_names_get(const struct netlat_names *t, uint32_t value);
/* The value named @name, or -1. */
long netlat_names_find(const struct netlat_names *t, const char *name);
/*
 * The { VALUE, "NAME" } entries of "__print_symbolic(REC->@field, ...)"
 * in the tracepoint format text @fmt: the number added, -ENOENT (no such
 * table), -ENOMEM.
 */
int netlat_names_parse_symbolic(struct netlat_names *t, const char *fmt, const char *field);
/*
 * The running kernel's drop reasons, from the kfree_skb tracepoint's
 * format in tracefs (/sys/kernel/tracing, or /sys/kernel/debug/tracing):
 * the number added, or -errno (-ENOENT: no tracefs or no such table).
 */
int netlat_names_load_drop_reasons(struct netlat_names *t);
/*
 * @t as NETLAT_REC_NOTE records of @kind, into @buf (@room bytes; a
 * record takes at most NETLAT_REC_MAX_SIZE): the bytes used, 0 if empty
 * or out of room. hdr.cpu, seq and ts_ns are 0: see netlat_set_tee_insert().
 */
size_t netlat_names_notes(const struct netlat_names *t, unsigned int kind, void *buf,
			  size_t room);
/* One NOTE of @kind holding @text (cut to fit): its size, 0 if @room is short. */
size_t netlat_note_text(void *buf, size_t room, unsigned int kind, const char *text);
/* The names of a NETLAT_NOTE_DROP_REASONS note: the number added, or -ENOMEM. */
int netlat_names_add_note(struct netlat_names *t, const struct netlat_rec_note *n);
/*
 * Keep @t the drop reason names of the records that follow @rec (feed it
 * every record): a STREAM clears it and, when the source is the @device,
 * loads the running kernel's; a drop-reason NOTE adds its names. 0 or
 * -errno of the load.
 */
int netlat_names_feed(struct netlat_names *t, const struct netlat_rec_hdr *rec, bool device);

/* ---- two hosts: joining their packets, estimating their clocks --------- */

/*
 * netlat_join pairs the packets host A sent (NETLAT_REC_TCP_PKT) with the
 * ones host B received (NETLAT_REC_RX_PKT), and the reverse: the flow's
 * 4-tuple swapped and overlapping byte ranges, so one sent skb split by
 * GSO or several merged by GRO still pair. From the pairs it bounds B's
 * clock against A's, theta(t) = clock_B - clock_A = a + b (t - t0), in
 * windows of A's time: a packet cannot arrive before it left, so each
 * A>B pair gives theta <= B's receive stamp - A's driver time (minus
 * @min_owd_ns), each B>A pair theta >= B's driver time - A's receive
 * stamp; the (a, b) that satisfy all of a window form a convex polygon,
 * and the bound at a time is the range of theta there. A window whose
 * pairs admit no clock (a step, or a pair that contradicts the rest) is
 * split or has that pair flagged; its packets get no wire time, never an
 * averaged one. Documentation/join.rst has the method and its limits.
 */
struct netlat_join;

/**
 * struct netlat_join_opts - how to join (zero: the defaults)
 * @window_ns: the clock's windows in A's time (0: 10 s).
 * @min_owd_ns: each one-way delay is known to be at least this.
 * @asym_ns: the floors' asymmetry, A>B minus B>A, if known: moves the
 *	estimate (the middle of the bound, which assumes equal floors) by
 *	-@asym_ns / 2; the bound itself does not rest on it.
 * @max_drift_ppm: the largest drift b considered (0: 2000 ppm); 0 with
 *	NETLAT_JOIN_OFFSET_ONLY.
 * @flags: NETLAT_JOIN_*.
 * @b_offset_ns: add to every time of B's records (a known clock map, or
 *	a test's forged offset).
 * @b_ppm: and scale B's times by 1 + @b_ppm/1e6 first (around 0, the
 *	origin of its CLOCK_MONOTONIC): B's clock then reads
 *	t + @b_offset_ns + t * @b_ppm/1e6.
 */
struct netlat_join_opts {
	uint64_t window_ns;
	uint64_t min_owd_ns;
	int64_t asym_ns;
	double max_drift_ppm;
	unsigned int flags;
	int64_t b_offset_ns;
	double b_ppm;
};

#define NETLAT_JOIN_OFFSET_ONLY	(1U << 0)	/* model theta as a constant */

/* netlat_xpkt.flags */
#define NETLAT_XPKT_EXACT	(1U << 0)	/* one segment each, the same bytes */
#define NETLAT_XPKT_GSO_SPLIT	(1U << 1)	/* the sent skb arrived in several */
#define NETLAT_XPKT_GRO_MERGED	(1U << 2)	/* the received skb held several sent ones */
#define NETLAT_XPKT_RETRANS	(1U << 3)	/* retransmitted, its copy unknown: no wire time (Karn) */
#define NETLAT_XPKT_NO_STAMP	(1U << 4)	/* no driver time or no receive stamp */
#define NETLAT_XPKT_NO_CLOCK	(1U << 5)	/* no clock bound at its time */
#define NETLAT_XPKT_IMPOSSIBLE	(1U << 6)	/* contradicts the other pairs' clock */
#define NETLAT_XPKT_TX_FIRST	(1U << 7)	/* the first pair of its sent record */
#define NETLAT_XPKT_RX_FIRST	(1U << 8)	/* the first pair of its received record */
/*
 * The TCP timestamps option (records with tsval; Documentation/join.rst,
 * "Retransmissions and TSval"):
 */
#define NETLAT_XPKT_TSVAL	(1U << 9)	/* retransmitted, but this copy's TSval is
						 * its first transmission's: a wire time */
#define NETLAT_XPKT_TSVAL_TICK	(1U << 10)	/* with RETRANS: the TSvals equal, but the
						 * sender's round trips do not show a
						 * retransmission a tick later */
#define NETLAT_XPKT_TSVAL_DIFF	(1U << 11)	/* with IMPOSSIBLE: not retransmitted, yet
						 * the TSvals differ */

/**
 * struct netlat_xpkt - a sent packet and a received one holding its bytes
 * @tx: the sender's record (the packet's fields, whatever size it had).
 * @rx: the receiver's.
 * @sender: 0 if A sent it, 1 if B did.
 * @flags: NETLAT_XPKT_*.
 * @seq: first byte both records hold (the sender's sequence numbers).
 * @end_seq: the byte after the last.
 * @raw_ns: @rx->netif_ns - @tx->driver_ns, each on its own host's clock.
 * @wire_ns: the wire's estimate: @raw_ns less the clock's estimate
 *	(valid without NO_STAMP, NO_CLOCK, RETRANS, IMPOSSIBLE).
 * @wire_lo_ns: the wire lies in [@wire_lo_ns, @wire_hi_ns], never below 0.
 * @wire_hi_ns: INT64_MAX if the clock is bounded on one side only.
 */
struct netlat_xpkt {
	const struct netlat_rec_tcp_pkt *tx;
	const struct netlat_rec_rx_pkt *rx;
	unsigned int sender;
	unsigned int flags;
	uint32_t seq, end_seq;
	int64_t raw_ns;
	int64_t wire_ns, wire_lo_ns, wire_hi_ns;
};

/* netlat_clock_est.flags */
#define NETLAT_CLOCK_NO_UPPER	(1U << 0)	/* no A>B pair: theta unbounded above */
#define NETLAT_CLOCK_NO_LOWER	(1U << 1)	/* no B>A pair: unbounded below */
#define NETLAT_CLOCK_NONE	(1U << 2)	/* no clock satisfies the window's pairs */
#define NETLAT_CLOCK_STEP	(1U << 3)	/* no line joins it to the last window with a clock */
#define NETLAT_CLOCK_DRIFT_AT_LIMIT (1U << 4)	/* the drift reached max_drift_ppm */

/**
 * struct netlat_clock_est - B's clock against A's over an interval
 * @from_ns: the interval, A's CLOCK_MONOTONIC.
 * @to_ns: its end (exclusive).
 * @at_ns: the time the offset below is given for (the middle).
 * @offset_ns: clock_B - clock_A at @at_ns: the middle of [@lo_ns, @hi_ns]
 *	less asym_ns / 2.
 * @lo_ns: clock_B - clock_A at @at_ns is at least this,
 * @hi_ns: and at most this (INT64_MIN, INT64_MAX when unbounded).
 * @drift_ppm: the middle of the drifts the pairs allow, ppm of A's time,
 * @drift_lo_ppm: the lowest,
 * @drift_hi_ppm: the highest.
 * @samples_ab: A>B pairs that bound it,
 * @samples_ba: B>A pairs.
 * @impossible: pairs left out as contradicting the others.
 * @flags: NETLAT_CLOCK_*.
 */
struct netlat_clock_est {
	uint64_t from_ns, to_ns, at_ns;
	int64_t offset_ns, lo_ns, hi_ns;
	double drift_ppm, drift_lo_ppm, drift_hi_ppm;
	uint64_t samples_ab, samples_ba, impossible;
	unsigned int flags;
};

/**
 * struct netlat_join_counts - what was and was not joined, per sender
 *	(index 0: A sent, B received; 1: the reverse)
 * @sent: packet records of the sender,
 * @sent_bytes: their bytes.
 * @joined: those that share bytes with a record of the receiver,
 * @joined_bytes: the bytes shared, each byte of the sequence once (a
 *	retransmission that arrived twice counts once).
 * @no_flow: not joined: the receiver has no packet of that flow.
 * @no_record: not joined: the receiver has the flow but none of its bytes
 *	(lost, or outside the other capture).
 * @retrans: joined, retransmitted, and which copy arrived is unknown
 *	(Karn's rule): no wire time. Neither those joined by TSval nor those
 *	whose TSval tick is not provable (struct netlat_join_tsval_counts).
 * @no_stamp: joined, not left out by Karn, and none of its pairs has both
 *	a driver time and a receive stamp: no wire time.
 * @received: packet records of the receiver for flows of the sender,
 * @received_unjoined: of which none holds a byte of a sent record.
 * @pairs: struct netlat_xpkt produced,
 * @impossible: of which contradict the clock of the rest.
 */
struct netlat_join_counts {
	uint64_t sent[2], sent_bytes[2];
	uint64_t joined[2], joined_bytes[2];
	uint64_t no_flow[2], no_record[2], retrans[2], no_stamp[2];
	uint64_t received[2], received_unjoined[2];
	uint64_t pairs[2], impossible[2];
};

/* A join with @opts (NULL: defaults), or NULL (errno EINVAL, ENOMEM). */
struct netlat_join *netlat_join_new(const struct netlat_join_opts *opts);
void netlat_join_free(struct netlat_join *j);
/*
 * Feed a record of host @host (0: A, 1: B); TCP_PKT, TCP RX_PKT, TCP_ACK_OUT
 * records are kept (copied). 0, or -ENOMEM, -EINVAL (bad @host, short
 * record), -ERANGE (a time of B's that b_offset_ns and b_ppm move below
 * zero or past 2^63). An add invalidates the pairs of an earlier run.
 */
int netlat_join_add(struct netlat_join *j, unsigned int host,
		    const struct netlat_rec_hdr *rec);
/* Pair the records and estimate the clock; after every add. 0 or -ENOMEM. */
int netlat_join_run(struct netlat_join *j);
/*
 * The pairs, ordered by the sender's time of each packet; valid until the
 * next netlat_join_add(), netlat_join_run() or netlat_join_free().
 */
size_t netlat_join_pairs(const struct netlat_join *j, const struct netlat_xpkt **pairs);
/* The clock over the whole capture (one line: a + b t). */
void netlat_join_clock(const struct netlat_join *j, struct netlat_clock_est *est);
/* The windows, in time order. */
size_t netlat_join_windows(const struct netlat_join *j,
			   const struct netlat_clock_est **windows);
/*
 * Bounds of clock_B - clock_A at A's time @t_ns, from its window: false
 * if none holds @t_ns or its pairs admit no clock.
 */
bool netlat_join_theta(const struct netlat_join *j, uint64_t t_ns, int64_t *lo_ns,
		       int64_t *hi_ns);
void netlat_join_counts(const struct netlat_join *j, struct netlat_join_counts *c);

/*
 * The ACK's way back (records with ack_rx_ns, ack_seq and sent_ack_seq):
 * a packet P that host S sent to host R was ended by an ACK that S
 * stamped at ack_rx_ns. The round trip, P's driver time to that stamp,
 * is on S's clock alone. When that ACK rode on a data packet Q of R's
 * (its first transmission's sent_ack_seq is P's ack_seq), R's record of
 * Q splits it: R's ACK delay, from R's receive stamp of P's last byte to
 * Q's driver time, on R's clock alone, and the wire back, Q's driver
 * time to S's stamp, on the join's clock as a pair's wire. A pure ACK
 * has a record only with netlat_config.acks on (TCP_ACK_OUT): it splits
 * it as Q does if P's ack_tsval tells it from R's other segments of that
 * number; otherwise P has its round trip only.
 */

/* netlat_xack.flags: the values it holds */
#define NETLAT_XACK_RTT		(1U << 0)	/* @rtt_ns */
#define NETLAT_XACK_DELAY	(1U << 1)	/* @ack_tx, @ack_pair, @delay_ns, @raw_ns */
#define NETLAT_XACK_WIRE	(1U << 2)	/* @wire_ns, @wire_lo_ns, @wire_hi_ns */
#define NETLAT_XACK_PURE_ACK	(1U << 3)	/* a pure ACK carried it: @ack_out */

/* netlat_xack.why: why it lacks a value, the first reason that applies */
enum netlat_xack_why {
	NETLAT_XACK_ALL,		/* it has all three */
	/* no value at all: */
	NETLAT_XACK_NO_ACK,		/* no ACK stamp: not ended by an ACK, no
					 * receive stamps on S, no driver time, or a
					 * record of an older module (152 bytes) */
	NETLAT_XACK_RETRANS,		/* retransmitted: which copy the ACK answered
					 * is unknown (Karn) */
	NETLAT_XACK_RANGE,		/* NETLAT_PKT_MERGED: the ACK is the range's */
	/* the round trip only: */
	NETLAT_XACK_PURE,		/* no packet R recorded carried the ACK: a pure
					 * ACK not recorded (or R's records have no
					 * ACK numbers) */
	NETLAT_XACK_UNVERIFIED,		/* S has no receive record of R's packet with
					 * the ACK's number (a bare FIN, no rx group):
					 * it may have followed a pure ACK of that
					 * number (a quick or delayed ACK); or,
					 * without its TSval, a pure ACK of it and
					 * another of R's segments may have */
	NETLAT_XACK_TSVAL_SHARED,	/* two of R's segments of that number had, or
					 * may have had, its TSval (one tick) */
	NETLAT_XACK_ACK_RETRANS,	/* the packet that carried it was
					 * retransmitted (Karn) */
	NETLAT_XACK_NO_RX,		/* R has no receive stamp of P's last byte */
	NETLAT_XACK_IMPOSSIBLE,		/* the records contradict each other (a time
					 * before its cause) */
	/* no wire back: */
	NETLAT_XACK_NO_CLOCK,		/* no clock bound at its time */
	NETLAT_XACK_NR_WHY
};

/**
 * struct netlat_xack - the way back of a joined packet's ACK (its sent
 *	record's: the same for each pair of one record)
 * @flags: NETLAT_XACK_*.
 * @why: enum netlat_xack_why.
 * @rtt_ns: the round trip on the sender's clock: the sent record's
 *	ack_rx_ns less its driver_ns.
 * @ack_tx: the receiver's sent record that carried the ACK; NULL when a
 *	pure ACK did (NETLAT_XACK_PURE_ACK).
 * @ack_pair: the pair (index of netlat_join_pairs()) whose received record
 *	holds the packet's last byte: the ACK delay starts at its netif_ns.
 * @delay_ns: the receiver's ACK delay on its clock: @ack_tx->driver_ns
 *	(or @ack_out->hdr.ts_ns) less that receive stamp.
 * @raw_ns: the sent record's ack_rx_ns less that driver time, each on
 *	its own host's clock.
 * @wire_ns: the wire back: @raw_ns with the clock, as
 *	netlat_xpkt.wire_ns of a pair that @ack_tx's host sent.
 * @wire_lo_ns: it lies in [@wire_lo_ns, @wire_hi_ns], never below 0;
 * @wire_hi_ns: INT64_MAX if the clock is bounded on one side only.
 * @ack_out: the receiver's record of the pure ACK that carried the ACK
 *	(NETLAT_XACK_PURE_ACK), else NULL.
 *
 * With all three and the clock's offset constant, @rtt_ns is the pair's
 * wire_ns plus @delay_ns plus @wire_ns exactly (the offset cancels); a
 * drift leaves the drift over the round trip between them.
 */
struct netlat_xack {
	unsigned int flags;
	unsigned int why;
	int64_t rtt_ns;
	const struct netlat_rec_tcp_pkt *ack_tx;
	size_t ack_pair;
	int64_t delay_ns, raw_ns;
	int64_t wire_ns, wire_lo_ns, wire_hi_ns;
	const struct netlat_rec_tcp_ack_out *ack_out;
};

/**
 * struct netlat_join_ack_counts - the ACKs' way back of the joined sent
 *	packets, per sender (index 0: A sent, B received; 1: the reverse)
 * @packets: joined sent packets (netlat_join_counts.joined),
 * @rtt: of which with a round trip,
 * @delay: with the receiver's ACK delay,
 * @wire: with a wire back.
 * @why: the packets per enum netlat_xack_why ([NETLAT_XACK_ALL]: all three).
 * @pure: of @delay, those whose ACK a pure ACK carried (NETLAT_XACK_PURE_ACK),
 * @acks_out: the receiver's TCP_ACK_OUT records of these flows (0: no acks on).
 * Filled by pointer with no size, as struct netlat_xack: their layout is
 * fixed once LIBNETLAT_1.1 is released (a later value: a new function).
 */
struct netlat_join_ack_counts {
	uint64_t packets[2];
	uint64_t rtt[2], delay[2], wire[2];
	uint64_t why[2][NETLAT_XACK_NR_WHY];
	uint64_t pure[2], acks_out[2];
};

/*
 * The ACK's way back of pair @pair's sent packet (valid as the pairs
 * are): 0, or -EINVAL if there is no such pair.
 */
int netlat_join_ack(const struct netlat_join *j, size_t pair, struct netlat_xack *ack);
void netlat_join_ack_counts(const struct netlat_join *j, struct netlat_join_ack_counts *c);

/**
 * struct netlat_join_tsval_counts - what the TCP timestamps option told of
 *	the joined sent packets, per sender (index 0: A sent, B received; 1:
 *	the reverse); records without it (tsval 0) count nowhere here
 * @rescued: retransmitted, but a copy that arrived carried the first
 *	transmission's TSval, and the sender's shortest round trip on the
 *	flow is at least a TSval tick (1 ms), so no retransmission did:
 *	that copy was the first transmission. Its pairs with that TSval have
 *	wire times (NETLAT_XPKT_TSVAL) and its ACK's way back is given if the
 *	ACK echoed that TSval.
 * @tick: retransmitted, a copy with the first TSval arrived, but the
 *	sender's shortest round trip is under a tick (or unknown): a
 *	retransmission may have carried that TSval too. No wire time
 *	(NETLAT_XPKT_TSVAL_TICK).
 * @impossible: pairs of packets not retransmitted whose TSvals differ
 *	(NETLAT_XPKT_TSVAL_DIFF): counted in netlat_join_counts.impossible.
 */
struct netlat_join_tsval_counts {
	uint64_t rescued[2], tick[2], impossible[2];
};

void netlat_join_tsval_counts(const struct netlat_join *j, struct netlat_join_tsval_counts *c);

#ifdef __cplusplus
}
#endif

#endif /* LIBNETLAT_H */
