/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * netlat: per-packet TCP latency tracing - userspace ABI.
 *
 * This header is the single definition of everything that crosses the
 * /dev/netlat boundary: the record stream, the mmap ring protocol and the
 * ioctls. It is shared by the module, the tools and the tests. See
 * Documentation/netlat.rst for the prose version.
 *
 * Compatibility rules:
 *  - Every record begins with struct netlat_rec_hdr and carries its total
 *    size, so a reader skips types it does not know.
 *  - New fields are only ever appended to a record type or an ioctl
 *    struct; NETLAT_ABI_VERSION changes only for incompatible changes.
 *  - Every ioctl argument starts with a __u32 size written by the caller.
 *    A caller may pass an older (shorter, down to the struct's _SIZE_VER0)
 *    or newer (longer, up to one page) struct: bytes the kernel does not
 *    know must be zero, reserved fields must be zero, unknown flags are
 *    rejected with -EINVAL.
 */
#ifndef _UAPI_LINUX_NETLAT_H
#define _UAPI_LINUX_NETLAT_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * Access: the device node is 0600 and open() needs CAP_NET_ADMIN, CAP_PERFMON
 * or CAP_SYS_ADMIN in the initial user namespace (else -EPERM). The ioctls
 * that change global state (SET_CONFIG, START, STOP, RESET) check the
 * calling task again; GET_INFO and GET_CPU_STATS need only the open file.
 */
#define NETLAT_DEVICE_PATH	"/dev/netlat"
#define NETLAT_ABI_VERSION	1

/* Value of netlat_rec_hdr.magic: lets a reader detect a corrupt stream. */
#define NETLAT_REC_MAGIC	0x4e

/* Records are padded to this alignment; size is always a multiple of it. */
#define NETLAT_REC_ALIGN	8

/* No record is larger than this: a read() buffer of this size always works. */
#define NETLAT_REC_MAX_SIZE	512

/**
 * enum netlat_rec_type - record types
 * @NETLAT_REC_STREAM: first record of every read() stream (struct
 *	netlat_rec_stream). Never stored in a ring.
 * @NETLAT_REC_LOST: records were dropped on this CPU because its ring was
 *	full (struct netlat_rec_lost). Always immediately precedes, on the
 *	same CPU, the first record stored after the drop.
 * @NETLAT_REC_MARKER: a user marker written with write() (struct
 *	netlat_rec_marker).
 */
enum netlat_rec_type {
	NETLAT_REC_STREAM = 1,
	NETLAT_REC_LOST = 2,
	NETLAT_REC_MARKER = 3,
};

/**
 * struct netlat_rec_hdr - common header of every record
 * @size: total size of the record in bytes, header included; a multiple of
 *	NETLAT_REC_ALIGN, at least sizeof(struct netlat_rec_hdr) and at most
 *	NETLAT_REC_MAX_SIZE. The next record starts @size bytes further.
 * @type: one of enum netlat_rec_type; unknown types are skipped by @size.
 * @magic: NETLAT_REC_MAGIC.
 * @version: NETLAT_ABI_VERSION of the writer.
 * @cpu: CPU whose ring held the record.
 * @seq: per-CPU sequence number. It increases by one for every record the
 *	module stored *or dropped* on @cpu, so on one CPU consecutive records
 *	have consecutive numbers, except right before a NETLAT_REC_LOST record,
 *	whose count equals the gap. Starts at 0 at load time, after
 *	NETLAT_IOC_RESET and after a ring size change. Zero in
 *	NETLAT_REC_STREAM. Writes while stopped use no number.
 * @ts_ns: CLOCK_MONOTONIC time in nanoseconds (the clock userspace reads
 *	with clock_gettime(CLOCK_MONOTONIC)), one clock for all CPUs,
 *	non-decreasing in @seq order on each CPU.
 */
struct netlat_rec_hdr {
	__u16 size;
	__u16 type;
	__u8 magic;
	__u8 version;
	__u16 cpu;
	__aligned_u64 seq;
	__aligned_u64 ts_ns;
};

/* Flags of netlat_rec_stream.flags */
#define NETLAT_STREAM_RUNNING	(1U << 0)	/* tracing was started */

/**
 * struct netlat_rec_stream - stream header, the first record of a reader
 * @hdr: common header; @hdr.seq is 0, @hdr.cpu is the reader's CPU and
 *	@hdr.ts_ns is the time the stream header was made (equal to @mono_ns).
 * @abi_version: NETLAT_ABI_VERSION.
 * @nr_cpus: number of possible CPU ids; every record's cpu is below it.
 * @clock_id: clock of every @hdr.ts_ns in the stream (CLOCK_MONOTONIC, 1).
 * @flags: NETLAT_STREAM_* flags.
 * @ring_bytes: bytes of record data per CPU ring.
 * @realtime_ns: CLOCK_REALTIME at the moment of @mono_ns: a record's wall
 *	time is @realtime_ns + (record ts_ns - @mono_ns).
 * @mono_ns: CLOCK_MONOTONIC sampled together with @realtime_ns.
 * @probe_groups: NETLAT_PROBE_* bits of groups available on this kernel.
 * @reserved: zero.
 */
struct netlat_rec_stream {
	struct netlat_rec_hdr hdr;
	__u32 abi_version;
	__u32 nr_cpus;
	__u32 clock_id;
	__u32 flags;
	__aligned_u64 ring_bytes;
	__aligned_u64 realtime_ns;
	__aligned_u64 mono_ns;
	__aligned_u64 probe_groups;
	__aligned_u64 reserved;
};

/**
 * struct netlat_rec_lost - records were dropped before this one
 * @hdr: common header.
 * @count: number of records dropped on @hdr.cpu since the previous record
 *	stored there; they used the sequence numbers @first_seq to
 *	@first_seq + @count - 1.
 * @first_seq: sequence number of the first dropped record.
 */
struct netlat_rec_lost {
	struct netlat_rec_hdr hdr;
	__aligned_u64 count;
	__aligned_u64 first_seq;
};

/* Largest marker payload: a marker record never exceeds NETLAT_REC_MAX_SIZE. */
#define NETLAT_MARKER_MAX	(NETLAT_REC_MAX_SIZE - 40)

/**
 * struct netlat_rec_marker - user marker, written with write(2)
 * @hdr: common header.
 * @pid: thread group id of the writer (initial PID namespace).
 * @tid: thread id of the writer (initial PID namespace).
 * @len: number of payload bytes in @data (1 to NETLAT_MARKER_MAX); the record
 *	is padded with zeros to NETLAT_REC_ALIGN after them.
 * @reserved: zero.
 * @data: the bytes passed to write(), unchanged.
 */
struct netlat_rec_marker {
	struct netlat_rec_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u32 len;
	__u32 reserved;
	__u8 data[];
};

/*
 * Probe groups. None exists yet in this ABI version; the bits are reported
 * by NETLAT_IOC_GET_INFO and the stream header.
 */
#define NETLAT_PROBE_ALL	0ULL

/*
 * mmap() ring protocol.
 *
 * Each CPU ring is exposed as two mappings, both MAP_SHARED:
 *
 *  NETLAT_MMAP_OFFSET(cpu, NETLAT_MMAP_CONS): one page, read-write, holding
 *	struct netlat_mmap_cons. Mapping it makes the caller the consumer of
 *	the rings (see NETLAT_IOC_GET_INFO); only one open file can be.
 *  NETLAT_MMAP_OFFSET(cpu, NETLAT_MMAP_DATA): read-only, exactly
 *	page_size + 2 * ring_bytes long: one page with struct
 *	netlat_mmap_prod, then the ring data mapped twice in a row, so a
 *	record that wraps around the end of the ring is still contiguous.
 *
 * Indices are free-running byte counts; the record at index i starts at
 * data[i & (ring_bytes - 1)]. Consumer loop:
 *
 *	prod = __atomic_load_n(&p->prod, __ATOMIC_ACQUIRE);
 *	while (cons != prod) { handle record at cons; cons += hdr->size; }
 *	__atomic_store_n(&c->cons, cons, __ATOMIC_RELEASE);
 *
 * The kernel only overwrites bytes before the consumer index it loads with
 * acquire semantics. A consumer index that is not within ring_bytes before
 * the producer index is treated as "ring full" by writers, and read()
 * discards the unread data of that CPU (counted in resyncs).
 */
#define NETLAT_MMAP_CONS	0ULL
#define NETLAT_MMAP_DATA	(1ULL << 31)
#define NETLAT_MMAP_CPU_SHIFT	32
#define NETLAT_MMAP_OFFSET(cpu, area) \
	(((__u64)(cpu) << NETLAT_MMAP_CPU_SHIFT) | (area))

/**
 * struct netlat_mmap_prod - producer page of one CPU ring (read-only)
 * @prod: producer index: bytes ever committed to this ring.
 * @ring_bytes: size of the ring data area (a power of two).
 * @written: records stored in this ring, NETLAT_REC_LOST records included.
 * @dropped: records not stored because the ring was full.
 */
struct netlat_mmap_prod {
	__aligned_u64 prod;
	__aligned_u64 ring_bytes;
	__aligned_u64 written;
	__aligned_u64 dropped;
};

/**
 * struct netlat_mmap_cons - consumer page of one CPU ring (read-write)
 * @cons: consumer index: bytes consumed. Written by the consumer (mmap
 *	users, or the kernel on read()).
 */
struct netlat_mmap_cons {
	__aligned_u64 cons;
};

/* ioctls */
#define NETLAT_IOC_TYPE		0xBB

enum {
	NETLAT_CMD_GET_INFO = 0x80,
	NETLAT_CMD_GET_CPU_STATS,
	NETLAT_CMD_SET_CONFIG,
	NETLAT_CMD_START,
	NETLAT_CMD_STOP,
	NETLAT_CMD_RESET,
};

/* Flags of netlat_info.state */
#define NETLAT_STATE_RUNNING	(1U << 0)	/* records are being written */
#define NETLAT_STATE_CONSUMER	(1U << 1)	/* some open file consumes */

/**
 * struct netlat_info - NETLAT_IOC_GET_INFO
 * @size: sizeof(struct netlat_info), set by the caller.
 * @flags: zero.
 * @abi_version: NETLAT_ABI_VERSION (out).
 * @rec_hdr_size: sizeof(struct netlat_rec_hdr) (out).
 * @nr_cpus: number of possible CPU ids; rings exist for each possible CPU
 *	(out).
 * @page_size: page size, for the mmap layout (out).
 * @ring_bytes: bytes of record data per CPU ring (out).
 * @mem_bytes: memory the module holds for rings, all CPUs (out).
 * @probe_groups: NETLAT_PROBE_* groups available on this kernel (out).
 * @probe_groups_enabled: NETLAT_PROBE_* groups enabled (out).
 * @state: NETLAT_STATE_* flags (out).
 * @watermark: ring fill in bytes at which a waiting reader is woken (out).
 * @flush_ms: period in ms at which a waiting reader is woken if any record
 *	is pending, 0 if only the watermark wakes (out).
 * @max_record: NETLAT_REC_MAX_SIZE (out).
 */
struct netlat_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 rec_hdr_size;
	__u32 nr_cpus;
	__u32 page_size;
	__aligned_u64 ring_bytes;
	__aligned_u64 mem_bytes;
	__aligned_u64 probe_groups;
	__aligned_u64 probe_groups_enabled;
	__u32 state;
	__u32 watermark;
	__u32 flush_ms;
	__u32 max_record;
};

/**
 * struct netlat_cpu_stats - NETLAT_IOC_GET_CPU_STATS
 * @size: sizeof(struct netlat_cpu_stats), set by the caller.
 * @flags: zero.
 * @cpu: the CPU to report (in); must be a possible CPU.
 * @reserved: zero.
 * @written: records stored in this CPU's ring since load or reset,
 *	NETLAT_REC_LOST records included (out).
 * @dropped: records dropped because the ring was full (out).
 * @prod: producer index (out).
 * @cons: consumer index (out).
 * @resyncs: times read() found an invalid consumer index or a corrupt
 *	record and discarded the CPU's unread data (out).
 */
struct netlat_cpu_stats {
	__u32 size;
	__u32 flags;
	__u32 cpu;
	__u32 reserved;
	__aligned_u64 written;
	__aligned_u64 dropped;
	__aligned_u64 prod;
	__aligned_u64 cons;
	__aligned_u64 resyncs;
};

/* Flags of netlat_config.flags: which fields to apply. */
#define NETLAT_CONFIG_RING_BYTES	(1U << 0)
#define NETLAT_CONFIG_WATERMARK		(1U << 1)
#define NETLAT_CONFIG_FLUSH_MS		(1U << 2)

#define NETLAT_RING_BYTES_MIN	(1ULL << 12)
#define NETLAT_RING_BYTES_MAX	(1ULL << 28)
#define NETLAT_FLUSH_MS_MAX	10000

/**
 * struct netlat_config - NETLAT_IOC_SET_CONFIG
 * @size: sizeof(struct netlat_config), set by the caller.
 * @flags: NETLAT_CONFIG_* bits: the fields to apply; others are ignored.
 * @ring_bytes: new ring size per CPU: a power of two between
 *	NETLAT_RING_BYTES_MIN and NETLAT_RING_BYTES_MAX. Only while stopped
 *	and unmapped (else -EBUSY); the rings are emptied and counters and
 *	sequences reset. If the watermark exceeds the new size without a new
 *	@watermark in the same call, it becomes a quarter of the new size.
 *	-ENOMEM if the memory cannot be had (never by invoking the OOM killer).
 * @watermark: wake a waiting reader when a ring holds at least this many
 *	bytes: 1 to ring_bytes.
 * @flush_ms: wake a waiting reader this often when anything is pending;
 *	0 disables, at most NETLAT_FLUSH_MS_MAX.
 * @reserved: zero.
 */
struct netlat_config {
	__u32 size;
	__u32 flags;
	__aligned_u64 ring_bytes;
	__u32 watermark;
	__u32 flush_ms;
	__aligned_u64 reserved;
};

/**
 * struct netlat_control - NETLAT_IOC_START, NETLAT_IOC_STOP, NETLAT_IOC_RESET
 * @size: sizeof(struct netlat_control), set by the caller.
 * @flags: zero.
 *
 * START and STOP are idempotent. After STOP returns no writer is still
 * writing. RESET needs tracing stopped and no ring mapped (else -EBUSY):
 * it empties every ring, restarts sequences at 0 and zeroes the counters.
 */
struct netlat_control {
	__u32 size;
	__u32 flags;
};

/* First published size of each ioctl struct: the smallest size accepted. */
#define NETLAT_INFO_SIZE_VER0		72
#define NETLAT_CPU_STATS_SIZE_VER0	56
#define NETLAT_CONFIG_SIZE_VER0		32
#define NETLAT_CONTROL_SIZE_VER0	8

#define NETLAT_IOC_GET_INFO	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_GET_INFO)
#define NETLAT_IOC_GET_CPU_STATS _IO(NETLAT_IOC_TYPE, NETLAT_CMD_GET_CPU_STATS)
#define NETLAT_IOC_SET_CONFIG	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_SET_CONFIG)
#define NETLAT_IOC_START	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_START)
#define NETLAT_IOC_STOP		_IO(NETLAT_IOC_TYPE, NETLAT_CMD_STOP)
#define NETLAT_IOC_RESET	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_RESET)

#endif /* _UAPI_LINUX_NETLAT_H */
