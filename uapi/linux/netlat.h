/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * netlat: per-packet TCP latency tracing - userspace ABI.
 *
 * This header is the single definition of everything that crosses the
 * /dev/netlat boundary: the record stream, the mmap ring protocol and the
 * ioctls. It is shared by the module, the tools and the tests. See
 * Documentation/netlat.rst for the prose version.
 *
 * It is laid out as the kernel's include/uapi/linux/iommufd.h: these
 * conventions; the records, by family; the mmap ring protocol; then the
 * ioctls, each with its flags, its argument struct, that struct's
 * _SIZE_VER0 and its NETLAT_IOC_* number together.
 *
 * Conventions, as the module applies them (module/uarg.c, module/dev.c):
 *  - Every record begins with struct netlat_rec_hdr and carries its total
 *    size, so a reader skips types it does not know.
 *  - Records and ioctl structs grow only by appending fields;
 *    NETLAT_ABI_VERSION changes only for incompatible changes.
 *  - Every ioctl argument begins with __u32 size, written by the caller
 *    (sizeof the struct it knows), then __u32 flags. The number is
 *    _IO(NETLAT_IOC_TYPE, NETLAT_CMD_*): the size is in the argument.
 *  - A struct's _SIZE_VER0 is its first published size. A size below it
 *    or above one page is -EINVAL. A shorter (older) struct reads as if
 *    the fields it lacks were zero; a longer (newer) one is accepted when
 *    every byte the kernel does not know is zero, else -EINVAL. Results
 *    are written back up to the caller's size.
 *  - Reserved fields must be zero; unknown flags are rejected with
 *    -EINVAL.
 *  - An array an argument points to (filter rules, stage histograms,
 *    flows, hooks) has its entry size beside the pointer: at least the
 *    entry's _SIZE_VER0, at most one page (-EINVAL); a longer entry's
 *    tail is zeroed on output.
 *  - An ioctl number the module does not know is -ENOTTY; an argument it
 *    cannot read or write is -EFAULT.
 */

#ifndef _UAPI_LINUX_NETLAT_H
#define _UAPI_LINUX_NETLAT_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* ---- The device ---- */

/*
 * Access: the device node is 0600 and open() needs CAP_NET_ADMIN, CAP_PERFMON
 * or CAP_SYS_ADMIN in the initial user namespace (else -EPERM): enough to
 * read records, histograms and flows. Changing what is traced (probes,
 * SET_CONFIG, START, STOP, RESET, filters, triggers, snapshots, a
 * histogram reset) needs CAP_PERFMON or CAP_SYS_ADMIN of the calling task
 * (else -EPERM), checked at each call: CAP_NET_ADMIN alone does not arm
 * a probe.
 */
#define NETLAT_DEVICE_PATH	"/dev/netlat"
#define NETLAT_ABI_VERSION	1

/* ---- Common records: header, stream, losses, markers, notes ---- */

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
 * @NETLAT_REC_SNAPSHOT: second record of a snapshot stream, right after
 *	its NETLAT_REC_STREAM: why and when it was taken (struct
 *	netlat_rec_snapshot). Never stored in a ring.
 * @NETLAT_REC_SNAP_CPU: in a snapshot stream, starts the records of one
 *	CPU and gives that ring's counters (struct netlat_rec_snap_cpu).
 *	Never stored in a ring.
 * @NETLAT_REC_NOTE: in a capture file, right after a stream header: what
 *	a userspace writer (netlat record) knew of the recording host, e.g.
 *	the names of the kernel's drop reasons (struct netlat_rec_note).
 *	Never written by the module.
 * @NETLAT_REC_TCP_SENDMSG: one tcp_sendmsg_locked() call, written when it
 *	returns (struct netlat_rec_tcp_sendmsg; group NETLAT_PROBE_TCP_SENDMSG).
 * @NETLAT_REC_TCP_PUSH: a push of pending data (struct netlat_rec_tcp_push;
 *	group NETLAT_PROBE_TCP_PUSH).
 * @NETLAT_REC_TCP_SKB: an skb queued on the write queue by sendmsg
 *	(tcp_skb_entail; struct netlat_rec_tcp_skb; NETLAT_PROBE_TCP_SKB).
 * @NETLAT_REC_TCP_XMIT: a segment handed to IP by __tcp_transmit_skb
 *	(struct netlat_rec_tcp_xmit; NETLAT_PROBE_TCP_XMIT).
 * @NETLAT_REC_TCP_RETRANS: a retransmission attempt and its outcome
 *	(struct netlat_rec_tcp_retrans; NETLAT_PROBE_TCP_RETRANS).
 * @NETLAT_REC_TCP_ACK: cumulative ACK progress of a socket (struct
 *	netlat_rec_tcp_ack; NETLAT_PROBE_TCP_ACK).
 * @NETLAT_REC_TCP_DEV: a TCP skb at the qdisc (net:net_dev_queue) or handed
 *	to the driver (net:net_dev_start_xmit), flow and sequence parsed from
 *	its headers (struct netlat_rec_tcp_dev; NETLAT_PROBE_TCP_DEV).
 * @NETLAT_REC_VIRTIO: a virtio_net queue event with the virtqueue's state
 *	(struct netlat_rec_virtio; NETLAT_PROBE_VIRTIO_TX, NETLAT_PROBE_VIRTIO_RX).
 * @NETLAT_REC_RX_NETIF: a received TCP or UDP packet entering the stack
 *	(net:netif_receive_skb) with its kernel receive stamp (struct
 *	netlat_rec_rx_netif; NETLAT_PROBE_RX).
 * @NETLAT_REC_RX_TRANSPORT: a received segment or datagram reaching its
 *	socket in TCP or UDP (struct netlat_rec_rx_skb; NETLAT_PROBE_RX).
 * @NETLAT_REC_RX_QUEUE: received data queued to its socket: in order, out
 *	of order or to the backlog (struct netlat_rec_rx_skb; NETLAT_PROBE_RX).
 * @NETLAT_REC_RX_COPY: received data copied to the application (struct
 *	netlat_rec_rx_copy; NETLAT_PROBE_RX).
 * @NETLAT_REC_RX_DROP: a received TCP or UDP packet freed as dropped, with
 *	the kernel's reason (struct netlat_rec_rx_drop; NETLAT_PROBE_RX).
 * @NETLAT_REC_RX_WAKE: a reader of a TCP or UDP socket blocks, the socket
 *	signals data ready, the blocked reader is woken, it runs (struct
 *	netlat_rec_rx_wake; NETLAT_PROBE_RX_SCHED).
 * @NETLAT_REC_TCP_PKT: packet level (NETLAT_LEVEL_PACKETS): one sent TCP
 *	packet (an skb of the write queue) whose life ended, with the time of
 *	each stage the kernel followed it through (struct netlat_rec_tcp_pkt).
 * @NETLAT_REC_RX_PKT: packet level: one received TCP segment or UDP
 *	datagram whose life ended (copied to the application, dropped, or its
 *	socket closed), with the time of each receive stage (struct
 *	netlat_rec_rx_pkt; NETLAT_PROBE_RX).
 * @NETLAT_REC_TCP_ACK_OUT: packet level, with netlat_config.acks on: a
 *	pure ACK a TCP socket sent, at its driver point (struct
 *	netlat_rec_tcp_ack_out; NETLAT_PROBE_TCP_DEV).
 */
enum netlat_rec_type {
	NETLAT_REC_STREAM = 1,
	NETLAT_REC_LOST = 2,
	NETLAT_REC_MARKER = 3,
	NETLAT_REC_SNAPSHOT = 4,
	NETLAT_REC_SNAP_CPU = 5,
	NETLAT_REC_NOTE = 6,
	NETLAT_REC_TCP_SENDMSG = 16,
	NETLAT_REC_TCP_PUSH = 17,
	NETLAT_REC_TCP_SKB = 18,
	NETLAT_REC_TCP_XMIT = 19,
	NETLAT_REC_TCP_RETRANS = 20,
	NETLAT_REC_TCP_ACK = 21,
	NETLAT_REC_TCP_DEV = 22,
	NETLAT_REC_VIRTIO = 32,
	NETLAT_REC_RX_NETIF = 48,
	NETLAT_REC_RX_TRANSPORT = 49,
	NETLAT_REC_RX_QUEUE = 50,
	NETLAT_REC_RX_COPY = 51,
	NETLAT_REC_RX_DROP = 52,
	NETLAT_REC_RX_WAKE = 53,
	NETLAT_REC_TCP_PKT = 64,
	NETLAT_REC_RX_PKT = 65,
	NETLAT_REC_TCP_ACK_OUT = 66,
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
 *	NETLAT_IOC_RESET and after a ring size or mode change. Zero in
 *	NETLAT_REC_STREAM, NETLAT_REC_SNAPSHOT and NETLAT_REC_SNAP_CPU.
 *	Writes while stopped use no number.
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

/* netlat_rec_note.kind */
#define NETLAT_NOTE_DROP_REASONS 1	/* enum skb_drop_reason: "VALUE NAME\n" lines */
#define NETLAT_NOTE_KERNEL	2	/* the recording kernel's release (uname -r) */
#define NETLAT_NOTE_HOST	3	/* the recording host: "KEY VALUE\n" lines */
#define NETLAT_NOTE_CLOCK	4	/* its clocks at one moment: "KEY VALUE\n" lines */

/**
 * struct netlat_rec_note - what the writer of a capture knew of its host
 * @hdr: common header; @hdr.cpu and @hdr.ts_ns are those of the stream
 *	header the note follows, @hdr.seq is 0.
 * @kind: NETLAT_NOTE_*.
 * @version: version of the kind's text, 1; a reader skips versions it
 *	does not know.
 * @len: bytes of @text (the record is zero-padded after them).
 * @text: ASCII. NETLAT_NOTE_DROP_REASONS: whole lines "VALUE NAME\n",
 *	VALUE decimal, NAME without the SKB_DROP_REASON_ prefix, as the
 *	skb:kfree_skb tracepoint's format (its __print_symbolic table) gave
 *	them on the recording kernel; a table longer than one record takes
 *	several, each of whole lines. NETLAT_NOTE_KERNEL: the release.
 *	NETLAT_NOTE_HOST: "hostname NAME", "boot_id UUID" (the kernel's
 *	random/boot_id: two captures with the same one share a clock) and
 *	one "addr ADDRESS" per address of the writer's network namespace.
 *	NETLAT_NOTE_CLOCK, written by netlat record once a second and at
 *	its end, @hdr.ts_ns the MONOTONIC reading below: "monotonic NS",
 *	"realtime NS", "monotonic_raw NS" (clock_gettime() read in that
 *	order), and adjtimex()'s "status N", "freq N" (ppm scaled by
 *	65536), "tick N" (us per 1/"user_hz N" s), "offset N", "maxerror N",
 *	"esterror N": a step of REALTIME
 *	or a slew of MONOTONIC against MONOTONIC_RAW shows between two of
 *	them. Readers skip keys they do not know.
 *
 * The module numbers drop reasons as the running kernel does
 * (netlat_rec_rx_drop.reason), and the numbering changes between kernel
 * versions: a capture read on another host needs the recording host's
 * names. netlat record writes these notes right after the stream header
 * (CLOCK notes also between records); they hold for the records that
 * follow, until the next stream header.
 * A capture without them (cat /dev/netlat) shows the numbers. Readers
 * that predate notes skip them by their size (their sequence check may
 * count one break on that CPU).
 */
struct netlat_rec_note {
	struct netlat_rec_hdr hdr;
	__u16 kind;
	__u16 version;
	__u32 len;
	__u8 text[];
};

/* ---- Probe groups: the NETLAT_PROBE_* bits and what each attaches ---- */

/*
 * Probe groups: one bit each, reported by NETLAT_IOC_GET_INFO, the stream
 * header and NETLAT_IOC_PROBES, which enables and disables them at run
 * time. All groups are disabled at load (module parameter "probes" sets an
 * initial mask). A group is available when at least one of its probes
 * exists on the running kernel; NETLAT_IOC_PROBES reports the groups with
 * a missing probe in netlat_probes.partial.
 *
 *  NETLAT_PROBE_TCP_SENDMSG  kretprobe tcp_sendmsg_locked
 *  NETLAT_PROBE_TCP_PUSH     kprobes tcp_push, __tcp_push_pending_frames,
 *                            tcp_push_one
 *  NETLAT_PROBE_TCP_SKB      kprobe tcp_skb_entail
 *  NETLAT_PROBE_TCP_XMIT     kprobe __tcp_transmit_skb
 *  NETLAT_PROBE_TCP_RETRANS  kretprobes tcp_retransmit_skb,
 *                            __tcp_retransmit_skb (and its .part.0 clone
 *                            where GCC made one) and tcp_rtx_synack;
 *                            kretprobes on
 *                            tcp_retransmit_timer and tcp_send_loss_probe
 *                            only classify (NETLAT_RETRANS_*)
 *  NETLAT_PROBE_TCP_ACK      kprobe tcp_ack
 *  NETLAT_PROBE_TCP_DEV      tracepoints net:net_dev_queue and
 *                            net:net_dev_start_xmit
 */
#define NETLAT_PROBE_TCP_SENDMSG	(1ULL << 0)
#define NETLAT_PROBE_TCP_PUSH		(1ULL << 1)
#define NETLAT_PROBE_TCP_SKB		(1ULL << 2)
#define NETLAT_PROBE_TCP_XMIT		(1ULL << 3)
#define NETLAT_PROBE_TCP_RETRANS	(1ULL << 4)
#define NETLAT_PROBE_TCP_ACK		(1ULL << 5)
#define NETLAT_PROBE_TCP_DEV		(1ULL << 6)
/*
 * virtio_net groups (bits 16..), see struct netlat_rec_virtio. virtio_net
 * is a module: these groups are available only while it is loaded, and
 * stay enabled across its unload and reload (the probes re-attach).
 *  NETLAT_PROBE_VIRTIO_TX    kprobes start_xmit, skb_xmit_done
 *  NETLAT_PROBE_VIRTIO_RX    kprobes skb_recv_done, receive_buf,
 *                            virtnet_poll; tracepoints napi:napi_poll
 *                            (virtnet_poll's end) and
 *                            net:napi_gro_receive_entry (virtio_net
 *                            devices only)
 */
#define NETLAT_PROBE_VIRTIO_TX		(1ULL << 16)
#define NETLAT_PROBE_VIRTIO_RX		(1ULL << 17)
#define NETLAT_PROBE_VIRTIO_ALL		(NETLAT_PROBE_VIRTIO_TX | \
					 NETLAT_PROBE_VIRTIO_RX)
/*
 * Receive path (bit 8), see struct netlat_rec_rx_netif and the others:
 *  NETLAT_PROBE_RX           tracepoints net:netif_receive_skb and
 *                            skb:kfree_skb; kprobes tcp_v4_do_rcv,
 *                            tcp_v6_do_rcv, tcp_add_backlog,
 *                            tcp_child_process, tcp_data_queue,
 *                            tcp_queue_rcv, udp_queue_rcv_one_skb,
 *                            udpv6_queue_rcv_one_skb,
 *                            __udp_enqueue_schedule_skb, skb_consume_udp;
 *                            kretprobe tcp_recvmsg. While it is enabled the
 *                            module holds net_enable_timestamp(), so every
 *                            received skb carries its receive stamp.
 */
#define NETLAT_PROBE_RX			(1ULL << 8)
/*
 *  NETLAT_PROBE_RX_SCHED     kretprobes sk_wait_data and
 *                            __skb_wait_for_more_packets (who is blocked on
 *                            which socket); tracepoint sock:sk_data_ready
 *                            (kprobe sock_def_readable where the kernel has
 *                            no such tracepoint, 6.1); tracepoints
 *                            sched:sched_wakeup and sched:sched_switch,
 *                            which write only for tasks blocked in those
 *                            waits. At the packet level they write no
 *                            record: with NETLAT_PROBE_RX on too, a blocked
 *                            reader's wakeup becomes fields of the
 *                            NETLAT_REC_RX_PKT its copy ends (ready_ns,
 *                            wakeup_ns, run_ns) and the stages
 *                            NETLAT_STAGE_RX_READY_WAKEUP, _WAKEUP_RUN.
 */
#define NETLAT_PROBE_RX_SCHED		(1ULL << 9)
#define NETLAT_PROBE_ALL		(((1ULL << 7) - 1) | NETLAT_PROBE_RX | \
					 NETLAT_PROBE_RX_SCHED | \
					 NETLAT_PROBE_VIRTIO_ALL)

/* ---- The flow: which socket a record is about ---- */

/**
 * struct netlat_flow - identity of a socket's flow: in the send, receive
 *	and packet level records, virtio XMIT and the flow statistics
 * @cookie: socket identity: a SipHash of the kernel's socket address under
 *	a key drawn at module load (the kernel's own socket cookie generator
 *	is not exported to modules). Equal for all records of one socket
 *	while it lives; not comparable across module loads; a later socket
 *	at the same address gets the same value, so join on (cookie, ports,
 *	addresses). Zero when the record has no full socket (NETLAT_REC_TCP_DEV
 *	of a request or time-wait socket's segment).
 * @family: AF_INET (2) or AF_INET6 (10). An AF_INET6 socket connected to
 *	a v4-mapped address (::ffff:a.b.c.d) is reported as AF_INET with the
 *	4-byte addresses, as on the wire, and filters see it so.
 * @sport: local (sending) port, host byte order.
 * @dport: remote port, host byte order.
 * @reserved: zero.
 * @saddr: local address: 4 bytes for AF_INET (network order) followed by
 *	zeros, 16 bytes for AF_INET6.
 * @daddr: remote address, same layout.
 */
struct netlat_flow {
	__aligned_u64 cookie;
	__u16 family;
	__u16 sport;
	__u16 dport;
	__u16 reserved;
	__u8 saddr[16];
	__u8 daddr[16];
};

/*
 * struct netlat_flow's first name, from when only TCP send records had
 * it: kept so that code written against it still compiles.
 */
#define netlat_tcp_flow netlat_flow

/* ---- TCP send records (events level) ---- */

/* Flags of TCP records (netlat_rec_tcp_*.flags) */
#define NETLAT_TCP_ID_VALID	(1U << 0)	/* sendmsg_id is known */
#define NETLAT_TCP_RETRANSMIT	(1U << 1)	/* XMIT: a retransmission; ACK: see below */
#define NETLAT_TCP_COUNTED	(1U << 2)	/* RETRANS: counted in RetransSegs */

/**
 * struct netlat_rec_tcp_sendmsg - one tcp_sendmsg_locked() call
 * @hdr: common header; @hdr.ts_ns is the time of the return.
 * @flow: the socket.
 * @start_ns: time of the entry (same clock as @hdr.ts_ns).
 * @size: bytes asked for.
 * @ret: return value: bytes accepted, or a negative errno.
 * @sendmsg_id: the socket's write_seq at entry, i.e. the sequence number
 *	of the first byte this call queues. Unique per socket among calls
 *	that queue data (until the 32-bit sequence space wraps, 4 GiB
 *	later); a call that queues nothing shares it with the next call.
 *	Every byte in [@sendmsg_id, @end_seq) came from this call.
 * @end_seq: the socket's write_seq at return.
 * @msg_flags: the MSG_* flags of the call.
 * @pid: thread group id of the caller (initial PID namespace).
 * @tid: thread id of the caller.
 * @reserved: zero.
 */
struct netlat_rec_tcp_sendmsg {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 start_ns;
	__aligned_u64 size;
	__s64 ret;
	__u32 sendmsg_id;
	__u32 end_seq;
	__u32 msg_flags;
	__u32 pid;
	__u32 tid;
	__u32 reserved;
};

/* netlat_rec_tcp_push.func: which push function was called */
#define NETLAT_PUSH_TCP_PUSH		1	/* tcp_push() */
#define NETLAT_PUSH_PENDING_FRAMES	2	/* __tcp_push_pending_frames() */
#define NETLAT_PUSH_ONE			3	/* tcp_push_one() */

/**
 * struct netlat_rec_tcp_push - a push of pending data
 * @hdr: common header.
 * @flow: the socket.
 * @sendmsg_id: the sendmsg this push happens in (see
 *	netlat_rec_tcp_sendmsg.sendmsg_id), valid if @flags has
 *	NETLAT_TCP_ID_VALID (pushes from the ACK path or the timers have none).
 * @func: NETLAT_PUSH_*.
 * @flags: NETLAT_TCP_* flags.
 * @mss: the mss argument.
 * @snd_nxt: the socket's snd_nxt at the push.
 * @write_seq: the socket's write_seq at the push.
 * @nonagle: the nonagle argument (tcp_push, __tcp_push_pending_frames).
 */
struct netlat_rec_tcp_push {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__u32 sendmsg_id;
	__u16 func;
	__u16 flags;
	__u32 mss;
	__u32 snd_nxt;
	__u32 write_seq;
	__u32 nonagle;
};

/**
 * struct netlat_rec_tcp_skb - an skb queued by sendmsg (tcp_skb_entail)
 * @hdr: common header.
 * @flow: the socket.
 * @skb_id: skb identity: SipHash of the skb address under a key drawn at
 *	load; the same value is in the NETLAT_REC_TCP_XMIT records of this
 *	skb (an skb split later by TSO/fragmentation yields new ids, joined
 *	by sequence).
 * @seq: sequence number of the skb's first byte.
 * @sendmsg_id: the sendmsg that queued it, valid with NETLAT_TCP_ID_VALID.
 *	Without it (the call was not seen) the owner is the sendmsg whose
 *	[sendmsg_id, end_seq) holds @seq.
 * @flags: NETLAT_TCP_* flags.
 * @reserved: zero.
 */
struct netlat_rec_tcp_skb {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 skb_id;
	__u32 seq;
	__u32 sendmsg_id;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct netlat_rec_tcp_xmit - a segment handed to IP (__tcp_transmit_skb)
 * @hdr: common header.
 * @flow: the socket.
 * @skb_id: the write-queue skb (see netlat_rec_tcp_skb.skb_id).
 * @seq: first sequence number.
 * @end_seq: sequence number after the segment (SYN and FIN count one).
 * @len: payload bytes.
 * @segs: segments (tcp_skb_pcount; GSO/TSO skbs carry several).
 * @tcp_flags: TCP header flags (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08,
 *	ACK 0x10, ...).
 * @flags: NETLAT_TCP_RETRANSMIT when the range was sent before (seq below
 *	snd_nxt, or the skb is marked as ever retransmitted).
 * @snd_una: the socket's snd_una.
 * @reserved: zero.
 */
struct netlat_rec_tcp_xmit {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 skb_id;
	__u32 seq;
	__u32 end_seq;
	__u32 len;
	__u16 segs;
	__u8 tcp_flags;
	__u8 flags;
	__u32 snd_una;
	__u32 reserved;
};

/*
 * netlat_rec_tcp_retrans.kind. Decided when the retransmit starts:
 *  SYNACK   tcp_rtx_synack() (the flow is the request's).
 *  SYN      the socket is in SYN-SENT.
 *  RTO      inside tcp_retransmit_timer(), or the socket's congestion
 *           state is Loss (the retransmissions that follow an RTO).
 *  TLP      inside tcp_send_loss_probe().
 *  FAST     congestion state Recovery, Disorder or CWR: fast retransmit /
 *           recovery (SACK, RACK, dupacks) from the ACK path.
 *  OTHER    anything else (e.g. congestion state Open).
 */
#define NETLAT_RETRANS_OTHER	0
#define NETLAT_RETRANS_RTO	1
#define NETLAT_RETRANS_FAST	2
#define NETLAT_RETRANS_TLP	3
#define NETLAT_RETRANS_SYN	4
#define NETLAT_RETRANS_SYNACK	5

/**
 * struct netlat_rec_tcp_retrans - one retransmission attempt
 * @hdr: common header; @hdr.ts_ns is the time of the return.
 * @flow: the socket (the listener's request for SYNACK).
 * @skb_id: the skb (see netlat_rec_tcp_skb.skb_id); 0 for SYNACK.
 * @seq: first sequence number, at return (trimmed if partly acked).
 * @end_seq: end sequence number, at return.
 * @ret: return value of __tcp_retransmit_skb / tcp_rtx_synack: 0 on
 *	success, else a negative errno (-EBUSY: the previous copy is still in
 *	a host queue, -EAGAIN: already acked, -ENOMEM, -ENOBUFS, -EHOSTUNREACH,
 *	...) or a positive NET_XMIT_* code of the qdisc (1: NET_XMIT_DROP,
 *	the queue refused the segment; the kernel passes these up too).
 * @segs: segments at return (tcp_skb_pcount; 1 for SYNACK).
 * @segs_req: segments asked for (the segs argument).
 * @kind: NETLAT_RETRANS_*.
 * @ca_state: congestion state at the start (TCP_CA_Open 0 ... Loss 4).
 * @flags: NETLAT_TCP_COUNTED when the attempt was added to the RetransSegs
 *	MIB counter (it got past the early checks: the socket's total_retrans
 *	grew; on success always).
 * @retransmits: icsk_retransmits (RTO backoff count) at the start.
 * @reserved: zero.
 *
 * MIB counters (per network namespace): RetransSegs (/proc/net/snmp) adds
 * @segs for every COUNTED attempt, successful or not, and 1 per successful
 * SYNACK. TCPRetransFail (/proc/net/netstat) adds, for every failure
 * except -EBUSY, @segs if COUNTED (the transmit failed) or @segs_req if
 * not (an early exit). A failed SYNACK counts in neither.
 */
struct netlat_rec_tcp_retrans {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 skb_id;
	__u32 seq;
	__u32 end_seq;
	__s32 ret;
	__u16 segs;
	__u16 segs_req;
	__u8 kind;
	__u8 ca_state;
	__u8 flags;
	__u8 retransmits;
	__u32 reserved;
};

/**
 * struct netlat_rec_tcp_ack - cumulative ACK progress (tcp_ack)
 * @hdr: common header.
 * @flow: the socket.
 * @snd_una: new snd_una: every byte before it is acknowledged.
 * @acked: bytes newly acknowledged by this ACK (snd_una advance; a SYN or
 *	FIN counts one).
 * @snd_nxt: the socket's snd_nxt.
 * @flags: NETLAT_TCP_RETRANSMIT when the segment @xmit_ack_ns measures
 *	was retransmitted: the ACK may answer an earlier transmission
 *	(Karn's ambiguity), so @xmit_ack_ns is no round trip and readers
 *	leave it out of the xmit>ack stage. Earlier modules wrote zero
 *	here (the field was reserved).
 * @xmit_ack_ns: transmit -> ACK time of the oldest segment this ACK
 *	acknowledged in full: the ACK's time (tcp_ack()'s entry) minus the
 *	time the kernel last sent that segment (its skb's transmit
 *	timestamp; for a retransmitted segment, the retransmission). 0 when
 *	no segment was acknowledged in full. What NETLAT_TRIG_LATENCY
 *	compares.
 *
 * Written only for ACKs that advance snd_una.
 */
struct netlat_rec_tcp_ack {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__u32 snd_una;
	__u32 acked;
	__u32 snd_nxt;
	__u32 flags;
	__aligned_u64 xmit_ack_ns;
};

/**
 * struct netlat_rec_tcp_ack_out - a pure ACK (no data, SYN, FIN or RST)
 *	a TCP socket handed to its device's driver: the packet level with
 *	netlat_config.acks on
 * @hdr: common header; @hdr.ts_ns is the driver point, as @driver_ns of
 *	struct netlat_rec_tcp_pkt (net:net_dev_start_xmit, or
 *	net:net_dev_queue on a device without a qdisc that queues).
 * @flow: the sending socket's flow, its cookie as its packet records'.
 * @ack_seq: the acknowledgment number: the peer's data it acknowledges
 *	(@hdr.ts_ns less the receive stamp of that data is this host's ACK
 *	delay). Every pure ACK has a record: a duplicate ACK (loss, a
 *	window update) repeats a number, and readers that join a peer's
 *	packets take the first of each.
 * @tsval: the TSval of its TCP timestamps option, 0 without one.
 * @tsecr: its TSecr.
 * @window: the window field of its header (not scaled).
 * @reserved: zero.
 */
struct netlat_rec_tcp_ack_out {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__u32 ack_seq;
	__u32 tsval;
	__u32 tsecr;
	__u16 window;
	__u16 reserved;
};

/* netlat_rec_tcp_dev.stage */
#define NETLAT_DEV_QDISC	1	/* net:net_dev_queue */
#define NETLAT_DEV_DRIVER	2	/* net:net_dev_start_xmit */

/**
 * struct netlat_rec_tcp_dev - a TCP skb entering the qdisc or the driver
 * @hdr: common header.
 * @flow: parsed from the IP and TCP headers (source = sender); @flow.cookie
 *	from the skb's socket if it is a full socket, else 0.
 * @skb_id: SipHash of this skb's address (a clone of the write-queue skb:
 *	join with TCP records by flow and sequence).
 * @seq: TCP sequence number from the header.
 * @end_seq: @seq plus payload (plus one for SYN, FIN).
 * @len: TCP payload bytes.
 * @ifindex: the device.
 * @stage: NETLAT_DEV_*.
 * @tcp_flags: TCP header flags.
 * @segs: GSO segments (1 if not GSO).
 * @reserved: zero.
 */
struct netlat_rec_tcp_dev {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 skb_id;
	__u32 seq;
	__u32 end_seq;
	__u32 len;
	__s32 ifindex;
	__u8 stage;
	__u8 tcp_flags;
	__u16 segs;
	__u32 reserved;
};

/* ---- Receive records (events level) ---- */

/* netlat_rec_rx_*.proto */
#define NETLAT_RX_TCP		6	/* IPPROTO_TCP */
#define NETLAT_RX_UDP		17	/* IPPROTO_UDP */

/**
 * struct netlat_rec_rx_netif - a received packet entering the stack
 * @hdr: common header; @hdr.ts_ns is the time of net:netif_receive_skb
 *	(after GRO, before IP).
 * @flow: parsed from the IP and TCP/UDP headers: @flow.saddr and
 *	@flow.sport are the remote sender's, @flow.daddr and @flow.dport this
 *	host's (the reverse of the socket's flow in the other RX records);
 *	@flow.cookie is 0 (no socket is known yet).
 * @skb_id: SipHash of the skb's address (see netlat_rec_tcp_skb.skb_id):
 *	the same value as in the NETLAT_REC_RX_TRANSPORT, _QUEUE and (UDP)
 *	_COPY records of this skb.
 * @tstamp_ns: the skb's receive stamp (skb->tstamp) as the kernel keeps
 *	it, CLOCK_REALTIME: the time SO_TIMESTAMPNS reports for it. 0 if the
 *	skb has none, or carries a monotonic delivery time instead (see
 *	netlat_rec_rx_skb.tstamp_ns).
 * @tstamp_mono_ns: the same instant on the records' clock
 *	(CLOCK_MONOTONIC), converted when the record is written; 0 if none.
 *	The stamp is taken in the receive core as the skb enters the stack:
 *	after GRO for drivers that use napi_gro_receive() (virtio_net among
 *	them; netif_receive_skb_list_internal()), so a merged skb carries the
 *	time GRO handed it on, after all its segments arrived; at netif_rx()
 *	for the others. It is at or before @hdr.ts_ns.
 * @seq: TCP: sequence number of the first payload byte; UDP: 0.
 * @len: TCP: payload bytes; UDP: datagram payload bytes (UDP length
 *	minus its header).
 * @ifindex: the receiving device.
 * @proto: NETLAT_RX_TCP or NETLAT_RX_UDP.
 * @tcp_flags: TCP header flags; 0 for UDP.
 * @segs: GRO segments in the skb (1 if not GRO).
 * @reserved: zero.
 *
 * Written for unfragmented IPv4 and IPv6 TCP and UDP packets only.
 */
struct netlat_rec_rx_netif {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 skb_id;
	__aligned_u64 tstamp_ns;
	__aligned_u64 tstamp_mono_ns;
	__u32 seq;
	__u32 len;
	__s32 ifindex;
	__u8 proto;
	__u8 tcp_flags;
	__u16 segs;
	__aligned_u64 reserved;
};

/* netlat_rec_rx_skb.where (NETLAT_REC_RX_QUEUE) */
#define NETLAT_RX_Q_IN_ORDER	1	/* TCP: the receive queue; UDP: queued */
#define NETLAT_RX_Q_OFO		2	/* TCP: the out-of-order queue */
#define NETLAT_RX_Q_BACKLOG	3	/* TCP: the backlog, the socket was
					 * owned by a process */

/**
 * struct netlat_rec_rx_skb - received data reaching or queued to a socket
 * @hdr: common header.
 * @flow: the receiving socket (@flow.sport is the local port).
 * @skb_id: the skb (see netlat_rec_rx_netif.skb_id).
 * @seq: TCP: the segment's first sequence number; UDP: 0.
 * @end_seq: TCP: its end sequence number (SYN and FIN count one); UDP: 0.
 * @len: payload bytes (TCP: @end_seq - @seq without SYN/FIN; UDP: the
 *	datagram's payload).
 * @proto: NETLAT_RX_TCP or NETLAT_RX_UDP.
 * @where: NETLAT_REC_RX_QUEUE: NETLAT_RX_Q_*; NETLAT_REC_RX_TRANSPORT: 0,
 *	or NETLAT_RX_Q_BACKLOG when the socket was owned and the segment goes
 *	to the backlog (the transport then meets it again when the owner
 *	releases the socket; that second pass writes no TRANSPORT record).
 * @reserved: zero.
 * @rcv_nxt: TCP: the socket's rcv_nxt when the record was written (for
 *	NETLAT_RX_Q_OFO: the hole's start); UDP: 0.
 * @reserved2: zero.
 * @tstamp_ns: the skb's receive stamp as the socket gets it
 *	(CLOCK_REALTIME, what SO_TIMESTAMPNS reports; 0 if none). Usually the
 *	stamp of netlat_rec_rx_netif.tstamp_ns; but an skb that arrives with
 *	a monotonic delivery time (a veth peer in another namespace forwards
 *	the sender's TCP departure time) has no receive stamp in the receive
 *	core, and IP's local delivery gives it the time of that moment: then
 *	the stamp is only here.
 * @tstamp_mono_ns: @tstamp_ns on CLOCK_MONOTONIC (as in
 *	netlat_rec_rx_netif); 0 if none.
 *
 * NETLAT_REC_RX_TRANSPORT (TCP: tcp_v4_do_rcv, tcp_v6_do_rcv,
 * tcp_add_backlog, or tcp_child_process for data in the segment that
 * completes a handshake; UDP: udp_queue_rcv_one_skb,
 * udpv6_queue_rcv_one_skb)
 * is written for segments with payload and every datagram.
 * NETLAT_REC_RX_QUEUE: TCP in order (tcp_queue_rcv: the fast path and
 * tcp_data_queue; segments that wait in the out-of-order queue move to the
 * receive queue later without another record), out of order (an
 * in-window segment after rcv_nxt entering tcp_data_queue: what the
 * TCPOFOQueue MIB counter counts, unless memory is short and it is
 * dropped: TCPOFODrop, a NETLAT_REC_RX_DROP), backlog (tcp_add_backlog);
 * UDP: __udp_enqueue_schedule_skb (a full receive buffer then drops it:
 * NETLAT_REC_RX_DROP).
 */
struct netlat_rec_rx_skb {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 skb_id;
	__u32 seq;
	__u32 end_seq;
	__u32 len;
	__u8 proto;
	__u8 where;
	__u16 reserved;
	__u32 rcv_nxt;
	__u32 reserved2;
	__aligned_u64 tstamp_ns;
	__aligned_u64 tstamp_mono_ns;
};

/* Flags of netlat_rec_rx_copy.flags */
#define NETLAT_RX_PEEK		(1U << 0)	/* MSG_PEEK: nothing consumed */

/**
 * struct netlat_rec_rx_copy - received data copied to the application
 * @hdr: common header; @hdr.ts_ns is when the copy was done: TCP, the
 *	return of tcp_recvmsg(); UDP, skb_consume_udp() (after the copy, in
 *	udp_recvmsg()).
 * @flow: the socket.
 * @start_ns: TCP: the entry of tcp_recvmsg() (a blocking reader's wait
 *	is in [@start_ns, @hdr.ts_ns]); UDP: 0. 0 too for a call that
 *	began at the packet level (a level changed while it read).
 * @skb_id: UDP: the datagram's skb (see netlat_rec_rx_netif.skb_id);
 *	TCP: 0.
 * @seq: TCP: the socket's copied_seq at entry: the bytes copied are
 *	[@seq, @end_seq), every byte of the stream read once is in exactly
 *	one such range; UDP: 0.
 * @end_seq: TCP: copied_seq at return. With NETLAT_RX_PEEK equal to @seq.
 * @bytes: bytes copied (the return value of tcp_recvmsg(), the length
 *	udp_recvmsg() returns). A TCP call that copied nothing writes no
 *	record; UDP writes one per datagram read, an empty one too.
 * @pid: thread group id of the reader (initial PID namespace).
 * @tid: thread id of the reader.
 * @proto: NETLAT_RX_TCP or NETLAT_RX_UDP.
 * @flags: NETLAT_RX_* flags.
 * @reserved: zero.
 * @wait_ns: the wait of the oldest byte copied: @hdr.ts_ns minus the time
 *	its packet was queued to the socket (NETLAT_REC_RX_QUEUE), as the
 *	module's receive table (see netlat_rec_rx_pkt) followed it; 0 if the
 *	table did not follow it, or for MSG_PEEK. What NETLAT_TRIG_RX_WAIT
 *	compares. Appended: absent from records of older modules (check
 *	@hdr.size).
 */
struct netlat_rec_rx_copy {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 start_ns;
	__aligned_u64 skb_id;
	__u32 seq;
	__u32 end_seq;
	__u32 bytes;
	__u32 pid;
	__u32 tid;
	__u8 proto;
	__u8 flags;
	__u16 reserved;
	__aligned_u64 wait_ns;
};

/**
 * struct netlat_rec_rx_drop - a received packet dropped (skb:kfree_skb)
 * @hdr: common header.
 * @flow: parsed from the headers, as in netlat_rec_rx_netif (@flow.saddr
 *	is the sender's); @flow.cookie is 0.
 * @skb_id: the skb (see netlat_rec_rx_netif.skb_id).
 * @reason: the kernel's enum skb_drop_reason (its numbering is the
 *	running kernel's: PROTO_MEM is 16 on Debian's 6.1.0-57, 19 on
 *	6.12.117, 20 on 7.3.4; the names are in the tracepoint's format,
 *	/sys/kernel/tracing/events/skb/kfree_skb/format, and in the
 *	NETLAT_REC_NOTE records netlat record writes).
 * @seq: TCP: sequence number; UDP: 0.
 * @len: payload bytes.
 * @ifindex: the device the packet was received on (skb_iif).
 * @proto: NETLAT_RX_TCP or NETLAT_RX_UDP.
 * @reserved: zero.
 *
 * Only skbs that were received (skb_iif set) and still hold an IPv4 or
 * IPv6 TCP or UDP header at their network offset.
 */
struct netlat_rec_rx_drop {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 skb_id;
	__u32 reason;
	__u32 seq;
	__u32 len;
	__s32 ifindex;
	__u8 proto;
	__u8 reserved[7];
};

/* netlat_rec_rx_wake.event */
#define NETLAT_RX_WAKE_BLOCK	1	/* a reader starts waiting for data */
#define NETLAT_RX_WAKE_READY	2	/* the socket signals data ready */
#define NETLAT_RX_WAKE_WAKEUP	3	/* a reader blocked on it is woken */
#define NETLAT_RX_WAKE_RUN	4	/* that reader runs again */

/**
 * struct netlat_rec_rx_wake - the reader's wakeup
 * @hdr: common header.
 * @flow: the socket.
 * @event: NETLAT_RX_WAKE_*.
 * @pid: BLOCK, WAKEUP, RUN: thread group id of the reader; READY: 0.
 * @tid: BLOCK, WAKEUP, RUN: thread id of the reader; READY: 0.
 * @on_cpu: WAKEUP: the CPU the reader is woken on (its task's CPU); RUN:
 *	the CPU it runs on; else the CPU of the record.
 * @reserved: zero.
 *
 * A reader is "blocked on" a socket from the entry of sk_wait_data()
 * (TCP) or __skb_wait_for_more_packets() (UDP) to their return; only then
 * do its scheduler events (sched:sched_wakeup of it, sched:sched_switch to
 * it, the first after a wakeup) write WAKEUP and RUN records: never the
 * host's other scheduler events. Filters are applied at BLOCK (the
 * reader's process, the socket's flow); its WAKEUP and RUN follow that
 * decision. READY is written for TCP and UDP sockets only, filtered by
 * their flow. A blocked reader's slot is in a fixed table hashed by task:
 * a reader whose slot is taken writes its BLOCK but no WAKEUP or RUN.
 */
struct netlat_rec_rx_wake {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__u32 event;
	__u32 pid;
	__u32 tid;
	__u32 on_cpu;
	__aligned_u64 reserved;
};

/* ---- virtio_net records ---- */

/* netlat_rec_virtio.event */
#define NETLAT_VIRTIO_XMIT	1	/* start_xmit(skb, dev) entry */
#define NETLAT_VIRTIO_XMIT_DONE	2	/* skb_xmit_done(vq): TX interrupt */
#define NETLAT_VIRTIO_RECV_DONE	3	/* skb_recv_done(vq): RX interrupt */
#define NETLAT_VIRTIO_POLL	4	/* virtnet_poll(napi, budget) done */
#define NETLAT_VIRTIO_RECV	5	/* receive_buf(): one received packet */
#define NETLAT_VIRTIO_GRO	6	/* net:napi_gro_receive_entry */

/* Flags of netlat_rec_virtio.flags */
#define NETLAT_VIRTIO_VQ_VALID	  (1U << 0)	/* vq_index, num_free, ring_size,
						 * broken are valid */
#define NETLAT_VIRTIO_SPLIT_VALID (1U << 1)	/* avail_idx, used_idx valid */
#define NETLAT_VIRTIO_BROKEN	  (1U << 2)	/* virtqueue_is_broken() */
#define NETLAT_VIRTIO_FLOW_VALID  (1U << 3)	/* flow, seq, tcp_len valid */
#define NETLAT_VIRTIO_QUEUE_VALID (1U << 4)	/* queue is valid */
#define NETLAT_VIRTIO_PACKED	  (1U << 5)	/* the ring is packed */

/**
 * struct netlat_rec_virtio - a virtio_net queue event and virtqueue state
 * @hdr: common header.
 * @event: NETLAT_VIRTIO_*.
 * @flags: NETLAT_VIRTIO_* flags: which optional fields are valid.
 * @queue: queue pair index N (TX queue N uses virtqueue 2N+1 "output.N",
 *	RX queue N virtqueue 2N "input.N"); valid with
 *	NETLAT_VIRTIO_QUEUE_VALID. XMIT: skb_get_queue_mapping(); XMIT_DONE,
 *	RECV_DONE: from the virtqueue; GRO: the skb's recorded RX queue;
 *	RECV, POLL: only when the device has a single queue pair (the driver
 *	does not tell which of several queues a NAPI context polls).
 * @ifindex: the net_device (of the network namespace it is in); 0 if not
 *	known (an interrupt for a virtio device whose netdev netlat has not
 *	seen registered).
 * @vq_index: virtqueue index (struct virtqueue.index: even RX, odd TX),
 *	with NETLAT_VIRTIO_VQ_VALID. The virtqueue's name is "input.N" for
 *	even and "output.N" for odd indices, N = @vq_index / 2.
 * @num_free: free descriptors (struct virtqueue.num_free), VQ_VALID.
 * @ring_size: descriptors in the ring (virtqueue_get_vring_size()), VQ_VALID.
 * @num_max: maximum ring size the device supports (struct
 *	virtqueue.num_max), VQ_VALID.
 * @avail_idx: the split ring's avail->idx (driver's producer index, free
 *	running modulo 2^16), with NETLAT_VIRTIO_SPLIT_VALID; never for a
 *	packed ring (NETLAT_VIRTIO_PACKED), which has no such index.
 * @used_idx: the split ring's used->idx (device's producer index, modulo
 *	2^16), with NETLAT_VIRTIO_SPLIT_VALID.
 * @reserved0: zero.
 * @len: XMIT: skb->len; RECV: bytes the device wrote into the buffer
 *	(virtio_net header included); GRO: skb->len; else 0.
 * @budget: POLL: the NAPI budget; else 0.
 * @work: POLL: virtnet_poll()'s work done (packets received); else 0.
 * @skb_id: XMIT and GRO: the skb's identity, the same SipHash as
 *	netlat_rec_tcp_skb.skb_id (joins TCP records); else 0.
 * @dev_id: SipHash of the virtio device's address (stable while it
 *	exists, not comparable across module loads): tells devices apart
 *	when @ifindex is 0.
 * @flow: XMIT of a TCP segment: the flow parsed from its headers (as in
 *	netlat_rec_tcp_dev), with NETLAT_VIRTIO_FLOW_VALID.
 * @seq: TCP sequence number of the segment (FLOW_VALID).
 * @tcp_len: TCP payload bytes of the segment (FLOW_VALID).
 * @reserved: zero.
 *
 * Only the public virtio API is read (struct virtqueue, virtqueue_*()
 * exports), never virtio_net's private structures. Not provided, because
 * that API does not give them: the driver's last_used_idx and shadow
 * indices, the device's event indices, the packed ring's wrap counters.
 * avail_idx/used_idx are read without the driver's queue lock: a snapshot.
 */
struct netlat_rec_virtio {
	struct netlat_rec_hdr hdr;
	__u8 event;
	__u8 flags;
	__u16 queue;
	__s32 ifindex;
	__u16 vq_index;
	__u16 avail_idx;
	__u16 used_idx;
	__u16 reserved0;
	__u32 num_free;
	__u32 ring_size;
	__u32 num_max;
	__u32 len;
	__s32 budget;
	__s32 work;
	__aligned_u64 skb_id;
	__aligned_u64 dev_id;
	struct netlat_flow flow;
	__u32 seq;
	__u32 tcp_len;
	__aligned_u64 reserved;
};

/* ---- Packet level records, and the stages they time ---- */

/* netlat_rec_tcp_pkt.flags: which stage times were seen */
#define NETLAT_PKT_SENDMSG	(1U << 0)	/* @sendmsg_ns */
#define NETLAT_PKT_QDISC	(1U << 1)	/* @qdisc_ns */
#define NETLAT_PKT_DRIVER	(1U << 2)	/* @driver_ns */
#define NETLAT_PKT_ACKED	(1U << 3)	/* ended by an ACK (hdr.ts_ns) */
#define NETLAT_PKT_CLOSED	(1U << 4)	/* ended by the socket's end */
#define NETLAT_PKT_VQ		(1U << 5)	/* @vq_ns and the queue state */
#define NETLAT_PKT_MERGED	(1U << 6)	/* @merged packets follow it */

/**
 * struct netlat_rec_tcp_pkt - one sent TCP packet, followed by the kernel
 * @hdr: common header (written when the packet's life ended).
 * @flow: the socket.
 * @seq: first sequence number of the packet (its first transmission).
 * @end_seq: sequence number after its last byte.
 * @sendmsg_ns: start of the tcp_sendmsg_locked() call that queued the
 *	packet's first byte (NETLAT_PKT_SENDMSG), else 0; 0 for a FIN
 *	without data (close() or shutdown() queued it).
 * @xmit_ns: its first transmission (__tcp_transmit_skb), always set.
 * @qdisc_ns: its first segment reached the qdisc (net:net_dev_queue);
 *	on a device without a qdisc that queues (noqueue: veth, loopback)
 *	the driver's time, so that qdisc>driver is 0 there.
 * @driver_ns: its first segment was handed to the driver
 *	(net:net_dev_start_xmit).
 * @end_ns: when its life ended: the ACK that covered its last byte
 *	(NETLAT_PKT_ACKED), or the socket's destruction (NETLAT_PKT_CLOSED).
 * @segs: segments (GSO) at its first transmission.
 * @retrans: retransmission attempts of any part of it.
 * @retrans_fail: attempts that failed (a nonzero return).
 * @flags: NETLAT_PKT_*.
 * @reserved: zero.
 * @vq_ns: its first segment was added to a virtio_net TX virtqueue
 *	(virtio_net's start_xmit; NETLAT_PKT_VQ, with the virtio_tx group
 *	on), else 0. Fields from here on are absent from records of
 *	NETLAT_REC_TCP_PKT_SIZE_VER0 bytes (older modules): readers check
 *	@hdr.size.
 * @vq_queue: the TX queue (virtqueue pair) index it went to.
 * @vq_free: free descriptors of that virtqueue when start_xmit began.
 * @vq_size: the virtqueue's ring size.
 * @merged: packets sent after this one that the kernel followed together
 *	with it as one range (NETLAT_PKT_MERGED): [@end_seq, @range_end),
 *	sent while the socket's FIFO was full or the table's memory used up
 *	(netlat_hist.merged). They have no stage times of their own; counted
 *	in netlat_hist.packets.
 * @range_end: @end_seq, or the end of the range with @merged.
 * @reserved2: zero.
 * @ack_rx_ns: the receive stamp of the ACK that ended it (NETLAT_PKT_ACKED):
 *	the skb's stamp, taken where @netif_ns of struct netlat_rec_rx_pkt
 *	is, on CLOCK_MONOTONIC; 0 when that ACK had none (no user of
 *	receive stamps on the host: the rx group is one). @ack_rx_ns to
 *	@end_ns is this host's receive path of the ACK; @driver_ns to
 *	@ack_rx_ns the round trip without it. Fields from here on are
 *	absent from records of 152 bytes (older modules): readers check
 *	@hdr.size.
 * @ack_seq: the acknowledgment number of that ACK (NETLAT_PKT_ACKED), at
 *	or after @range_end; else 0.
 * @sent_ack_seq: the acknowledgment number its first transmission carried
 *	(the peer's data it acknowledged): it matches the packet to the
 *	peer's packets it ended, in a capture of the peer's.
 * @tsval: the TSval of the TCP timestamps option (RFC 7323) its first
 *	transmission carried, 0 without one (timestamps off, or options
 *	the module could not read). The peer's struct netlat_rec_rx_pkt
 *	@tsval of the copy that arrived equals it when that copy was this
 *	first transmission, or a retransmission sent within the same tick
 *	of the TSval clock (1 ms, or 1 us with usec timestamps). Fields
 *	from here on are absent from records of 168 bytes: readers check
 *	@hdr.size.
 * @ack_tsecr: the TSecr of the ACK that ended it (NETLAT_PKT_ACKED), 0
 *	without the option: the TSval the peer echoed (RFC 7323's
 *	TS.Recent, the earliest of the segments a delayed ACK covers).
 * @ack_tsval: that ACK's TSval, 0 without the option: with the peer's
 *	capture it tells which of the peer's segments carrying @ack_seq
 *	(a packet's first transmission, struct netlat_rec_tcp_ack_out)
 *	this host received first.
 * @reserved3: zero.
 *
 * Times are CLOCK_MONOTONIC like @hdr.ts_ns, 0 when not seen; a stage's
 * duration is the difference of its two ends (enum netlat_stage), exactly
 * what the histograms of NETLAT_IOC_HIST were given.
 */
struct netlat_rec_tcp_pkt {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__u32 seq;
	__u32 end_seq;
	__aligned_u64 sendmsg_ns;
	__aligned_u64 xmit_ns;
	__aligned_u64 qdisc_ns;
	__aligned_u64 driver_ns;
	__aligned_u64 end_ns;
	__u16 segs;
	__u16 retrans;
	__u16 retrans_fail;
	__u8 flags;
	__u8 reserved;
	__aligned_u64 vq_ns;
	__u16 vq_queue;
	__u16 vq_free;
	__u16 vq_size;
	__u16 merged;
	__u32 range_end;
	__u32 reserved2;
	__aligned_u64 ack_rx_ns;
	__u32 ack_seq;
	__u32 sent_ack_seq;
	__u32 tsval;
	__u32 ack_tsecr;
	__u32 ack_tsval;
	__u32 reserved3;
};

/* The first size of struct netlat_rec_tcp_pkt; readers accept both. */
#define NETLAT_REC_TCP_PKT_SIZE_VER0	128

/* netlat_rec_rx_pkt.flags */
#define NETLAT_RXP_NETIF	(1U << 0)	/* @netif_ns: the skb had a stamp */
#define NETLAT_RXP_QUEUED	(1U << 1)	/* @queue_ns, @where */
#define NETLAT_RXP_OFO		(1U << 2)	/* was in the out-of-order queue */
#define NETLAT_RXP_BACKLOG	(1U << 3)	/* was in the backlog */
#define NETLAT_RXP_COPIED	(1U << 4)	/* ended by the copy (hdr.ts_ns) */
#define NETLAT_RXP_DROPPED	(1U << 5)	/* ended by a drop: @drop_reason */
#define NETLAT_RXP_CLOSED	(1U << 6)	/* ended by the socket's end */
#define NETLAT_RXP_PEEKED	(1U << 7)	/* read with MSG_PEEK before */

/**
 * struct netlat_rec_rx_pkt - one received packet, followed by the kernel
 * @hdr: common header (written when the packet's life ended).
 * @flow: the receiving socket (@flow.sport is the local port).
 * @netif_ns: the skb's receive stamp (taken in the receive core, after
 *	GRO on drivers that use napi_gro_receive(), see netlat_rec_rx_netif)
 *	on CLOCK_MONOTONIC (NETLAT_RXP_NETIF), else 0.
 * @transport_ns: arrival at TCP (tcp:tcp_probe, tcp_rcv_state_process,
 *	tcp_add_backlog, tcp_child_process) or UDP (udp_queue_rcv_one_skb,
 *	udpv6_queue_rcv_one_skb): where the packet begins; always set.
 * @queue_ns: first queued to the socket (NETLAT_RXP_QUEUED): its receive
 *	queue, out-of-order queue or backlog, as NETLAT_REC_RX_QUEUE. A TCP
 *	segment in order at its arrival is queued in the same softirq: its
 *	@queue_ns is its @transport_ns.
 * @end_ns: when its life ended: the copy of its last byte to the
 *	application (NETLAT_RXP_COPIED: TCP, the return of the tcp_recvmsg()
 *	whose copied_seq advance covered it; UDP, skb_consume_udp()), the
 *	drop, or the socket's destruction.
 * @seq: TCP: first payload sequence number; UDP: 0.
 * @end_seq: TCP: @seq + @len; UDP: 0.
 * @len: payload bytes.
 * @pid: thread group id of the reader that copied it (COPIED), else 0.
 * @tid: its thread id, else 0.
 * @drop_reason: NETLAT_RXP_DROPPED: the kernel's enum skb_drop_reason (as
 *	netlat_rec_rx_drop.reason), else 0.
 * @rmem: the socket's receive memory (sk_rmem_alloc) when the packet was
 *	queued, before it was charged (QUEUED), else 0.
 * @rcvbuf: the socket's sk_rcvbuf then.
 * @segs: GRO segments of the skb at its arrival.
 * @proto: NETLAT_RX_TCP or NETLAT_RX_UDP.
 * @where: NETLAT_RX_Q_* of the first queue (QUEUED), else 0.
 * @flags: NETLAT_RXP_*.
 * @reserved: zero.
 * @ready_ns: with NETLAT_PROBE_RX_SCHED on, when the reader that copied
 *	the packet (COPIED) had blocked on the socket before that copy
 *	(sk_wait_data, __skb_wait_for_more_packets): the socket's last
 *	sk_data_ready before that reader was woken, if after it blocked;
 *	else 0. Fields from here on are absent from records of
 *	NETLAT_REC_RX_PKT_SIZE_VER0 bytes (older modules): readers check
 *	@hdr.size.
 * @wakeup_ns: that reader's first sched:sched_wakeup in that wait, else 0.
 * @run_ns: its first sched:sched_switch to it after that wakeup, else 0.
 * @tsval: TCP: the TSval of the TCP timestamps option (RFC 7323) of the
 *	skb that arrived, 0 without one (or UDP). GRO merges only segments
 *	whose options are equal, so it is every segment's; it tells which
 *	transmission of the peer's (struct netlat_rec_tcp_pkt @tsval)
 *	this copy was. Fields from here on are absent from records of 168
 *	bytes: readers check @hdr.size.
 * @tsecr: TCP: that option's TSecr (the TSval of ours it echoed), else 0.
 *
 * Times are CLOCK_MONOTONIC like @hdr.ts_ns, 0 when not seen; a stage's
 * duration is the difference of its two ends (enum netlat_stage), exactly
 * what the histograms of NETLAT_IOC_HIST were given. Written only for
 * packets a stage of which reached netlat_config.slow_ns (or that were
 * dropped or not copied: they have no complete stages).
 *
 * One wait's wakeup goes to one packet: the first that the reader's next
 * copy of that socket ends (TCP: the oldest whose last byte the copy
 * passed; UDP: the datagram). The other packets of that copy, and the
 * packets of a copy that did not block, have @ready_ns, @wakeup_ns and
 * @run_ns 0. A wait whose slot in the module's table of blocked readers
 * was taken by another task's wait is counted in
 * netlat_hist.rx_wait_untracked and gives no packet its wakeup.
 */
struct netlat_rec_rx_pkt {
	struct netlat_rec_hdr hdr;
	struct netlat_flow flow;
	__aligned_u64 netif_ns;
	__aligned_u64 transport_ns;
	__aligned_u64 queue_ns;
	__aligned_u64 end_ns;
	__u32 seq;
	__u32 end_seq;
	__u32 len;
	__u32 pid;
	__u32 tid;
	__u32 drop_reason;
	__u32 rmem;
	__u32 rcvbuf;
	__u16 segs;
	__u8 proto;
	__u8 where;
	__u8 flags;
	__u8 reserved[3];
	__aligned_u64 ready_ns;
	__aligned_u64 wakeup_ns;
	__aligned_u64 run_ns;
	__u32 tsval;
	__u32 tsecr;
};

/* The first size of struct netlat_rec_rx_pkt; readers accept both. */
#define NETLAT_REC_RX_PKT_SIZE_VER0	144

/*
 * Packet-level stages (struct netlat_hist), each the time between two
 * points of struct netlat_rec_tcp_pkt:
 *  SENDMSG_XMIT   sendmsg_ns -> xmit_ns   queued behind sendmsg / cwnd
 *  XMIT_QDISC     xmit_ns -> qdisc_ns     TCP and IP output
 *  QDISC_DRIVER   qdisc_ns -> driver_ns   queueing discipline
 *  DRIVER_ACK     driver_ns -> end_ns     wire, peer and the ACK's return
 *  XMIT_ACK       xmit_ns -> end_ns       what TCP waits for an ACK
 *  SENDMSG_ACK    sendmsg_ns -> end_ns    the whole life
 *  DRIVER_VQ      driver_ns -> vq_ns      the driver until the virtqueue
 *                                         took it (virtio_net)
 * Only packets ended by an ACK are counted in the histograms.
 * Received packets (struct netlat_rec_rx_pkt), the names of the stages
 * of "netlat report":
 *  RX_NETIF_TCP   netif_ns -> transport_ns   netif>tcp: IP, TCP lookup
 *  RX_NETIF_UDP   netif_ns -> transport_ns   netif>udp
 *  RX_TCP_QUEUE   transport_ns -> queue_ns   tcp>queue (TCP only)
 *  RX_QUEUE_USER  queue_ns -> end_ns         queue>user: the wait for
 *                                            the reader
 *  RX_NETIF_USER  netif_ns -> end_ns         netif>user
 *  RX_READY_WAKEUP ready_ns -> wakeup_ns     ready>wakeup: the socket
 *                                            signalled data, its blocked
 *                                            reader is woken
 *  RX_WAKEUP_RUN  wakeup_ns -> run_ns        wakeup>run: woken, runs
 * Only packets copied to the application are counted in them; the last
 * two only for the packet a blocked reader's copy gave its wakeup (see
 * struct netlat_rec_rx_pkt), with NETLAT_PROBE_RX_SCHED on.
 */
/*
 * Each stage once, for the code that lists them (this enum, the tools'
 * names and the points they read of a record): S(NAME, name, rec, from,
 * to) is NETLAT_STAGE_##NAME, the name the tools show, and its two points,
 * fields of struct netlat_rec_##rec.
 */
#define NETLAT_STAGES(S)						\
	S(SENDMSG_XMIT, "sendmsg>xmit", tcp_pkt, sendmsg_ns, xmit_ns)	\
	S(XMIT_QDISC, "xmit>qdisc", tcp_pkt, xmit_ns, qdisc_ns)		\
	S(QDISC_DRIVER, "qdisc>driver", tcp_pkt, qdisc_ns, driver_ns)	\
	S(DRIVER_ACK, "driver>ack", tcp_pkt, driver_ns, end_ns)		\
	S(XMIT_ACK, "xmit>ack", tcp_pkt, xmit_ns, end_ns)		\
	S(SENDMSG_ACK, "sendmsg>ack", tcp_pkt, sendmsg_ns, end_ns)	\
	S(DRIVER_VQ, "driver>vq", tcp_pkt, driver_ns, vq_ns)		\
	S(RX_NETIF_TCP, "netif>tcp", rx_pkt, netif_ns, transport_ns)	\
	S(RX_NETIF_UDP, "netif>udp", rx_pkt, netif_ns, transport_ns)	\
	S(RX_TCP_QUEUE, "tcp>queue", rx_pkt, transport_ns, queue_ns)	\
	S(RX_QUEUE_USER, "queue>user", rx_pkt, queue_ns, end_ns)	\
	S(RX_NETIF_USER, "netif>user", rx_pkt, netif_ns, end_ns)	\
	S(RX_READY_WAKEUP, "ready>wakeup", rx_pkt, ready_ns, wakeup_ns)	\
	S(RX_WAKEUP_RUN, "wakeup>run", rx_pkt, wakeup_ns, run_ns)

#define __NETLAT_STAGE_ENUM(NAME, name, rec, from, to)	NETLAT_STAGE_##NAME,

enum netlat_stage {
	NETLAT_STAGES(__NETLAT_STAGE_ENUM)
	NETLAT_NR_STAGES,
};

/* ---- Snapshot records: a frozen copy of the rings ---- */

/* netlat_rec_snapshot.reason */
#define NETLAT_SNAP_MANUAL	1	/* NETLAT_IOC_SNAPSHOT with TAKE */
#define NETLAT_SNAP_TRIGGER	2	/* an armed trigger fired */

/**
 * struct netlat_rec_snapshot - what a snapshot is, after its stream header
 * @hdr: common header; @hdr.ts_ns is the time the snapshot was frozen
 *	(the copy of the first CPU began), @hdr.seq is 0.
 * @reason: NETLAT_SNAP_*.
 * @trigger: with NETLAT_SNAP_TRIGGER, the NETLAT_TRIG_* bit that fired;
 *	else 0.
 * @trig_type: record type of the record that fired the trigger (0 if
 *	manual).
 * @trig_cpu: CPU of that record.
 * @mode: NETLAT_MODE_* of the rings when the snapshot was taken.
 * @trig_seq: per-CPU sequence number of that record: the snapshot holds
 *	it, in @trig_cpu's section, unless the ring overwrote it during the
 *	post window (a window too long for the ring).
 * @trig_ts_ns: time of that record (0 if manual).
 * @start_ns: records older than this were left out by the pre window
 *	(netlat_triggers.pre_ms); 0 if the whole ring was kept.
 * @bytes: length of the snapshot stream in bytes, from the start of its
 *	NETLAT_REC_STREAM to the end of its last record.
 * @id: number of the snapshot since the module was loaded, from 1.
 * @reserved: zero.
 *
 * A snapshot stream is: NETLAT_REC_STREAM, NETLAT_REC_SNAPSHOT, then for
 * each possible CPU in ascending order a NETLAT_REC_SNAP_CPU followed by
 * that CPU's records, oldest first, exactly as the ring held them.
 */
struct netlat_rec_snapshot {
	struct netlat_rec_hdr hdr;
	__u32 reason;
	__u32 trigger;
	__u16 trig_type;
	__u16 trig_cpu;
	__u32 mode;
	__aligned_u64 trig_seq;
	__aligned_u64 trig_ts_ns;
	__aligned_u64 start_ns;
	__aligned_u64 bytes;
	__aligned_u64 id;
	__aligned_u64 reserved;
};

/**
 * struct netlat_rec_snap_cpu - one CPU's part of a snapshot
 * @hdr: common header; @hdr.cpu is the CPU, @hdr.ts_ns the time its ring
 *	was copied, @hdr.seq is 0.
 * @written: records stored in the ring since load or reset,
 *	NETLAT_REC_LOST records included (as netlat_cpu_stats.written).
 * @overwritten: records the ring overwrote to make room (overwrite mode).
 * @dropped: records not stored (stream mode: the ring was full; both
 *	modes: a probe hit inside another write on the CPU).
 * @records: records of this CPU that follow this one in the snapshot.
 * @bytes: their total size.
 * @skipped: records the ring held but the pre window left out.
 * @first_seq: sequence number of the first record that follows (the next
 *	sequence number to be used if @records is 0); the following ones are
 *	consecutive, as in the ring. If that record is a NETLAT_REC_LOST, its
 *	first_seq (where its gap begins), as a reader compares it.
 *
 * In overwrite mode, after NETLAT_IOC_RESET: @written = @overwritten +
 * @skipped + @records.
 */
struct netlat_rec_snap_cpu {
	struct netlat_rec_hdr hdr;
	__aligned_u64 written;
	__aligned_u64 overwritten;
	__aligned_u64 dropped;
	__aligned_u64 records;
	__aligned_u64 bytes;
	__aligned_u64 skipped;
	__aligned_u64 first_seq;
};

/* ---- The mmap() ring protocol ---- */

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
 *
 * In overwrite mode (NETLAT_MODE_OVERWRITE) the kernel moves the consumer
 * index itself, past the oldest records, and the CONS area cannot be
 * mapped (-EBUSY); the DATA area can, but the records in it may be
 * overwritten while they are read: take a snapshot instead.
 *
 *  NETLAT_MMAP_OFFSET(0, NETLAT_MMAP_SNAPSHOT): read-only, the frozen
 *	snapshot stream (see NETLAT_IOC_SNAPSHOT), at most
 *	netlat_snapshot.capacity long. Only while a snapshot is frozen (else
 *	-ENODATA); while it is mapped it cannot be released (-EBUSY).
 */
#define NETLAT_MMAP_CONS	0ULL
#define NETLAT_MMAP_SNAPSHOT	(1ULL << 30)
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
 * @overwritten: records overwritten to make room (overwrite mode).
 */
struct netlat_mmap_prod {
	__aligned_u64 prod;
	__aligned_u64 ring_bytes;
	__aligned_u64 written;
	__aligned_u64 dropped;
	__aligned_u64 overwritten;
};

/**
 * struct netlat_mmap_cons - consumer page of one CPU ring (read-write)
 * @cons: consumer index: bytes consumed. Written by the consumer (mmap
 *	users, or the kernel on read()).
 */
struct netlat_mmap_cons {
	__aligned_u64 cons;
};

/* ---- ioctls: the command numbers, then each ioctl with its argument ---- */

#define NETLAT_IOC_TYPE		0xBB

enum {
	NETLAT_CMD_GET_INFO = 0x80,
	NETLAT_CMD_GET_CPU_STATS,
	NETLAT_CMD_SET_CONFIG,
	NETLAT_CMD_START,
	NETLAT_CMD_STOP,
	NETLAT_CMD_RESET,
	NETLAT_CMD_PROBES,
	NETLAT_CMD_SNAPSHOT,
	NETLAT_CMD_TRIGGERS,
	NETLAT_CMD_FILTERS,
	NETLAT_CMD_HIST,
	NETLAT_CMD_FLOWS,
	NETLAT_CMD_HOOKS,
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
 * @mem_bytes: memory the module holds for rings, all CPUs, and for the
 *	snapshot buffer while it exists (see NETLAT_IOC_SNAPSHOT) (out).
 * @probe_groups: NETLAT_PROBE_* groups available on this kernel (out).
 * @probe_groups_enabled: NETLAT_PROBE_* groups enabled (out).
 * @state: NETLAT_STATE_* flags (out).
 * @watermark: ring fill in bytes at which a waiting reader is woken (out).
 * @flush_ms: period in ms at which a waiting reader is woken if any record
 *	is pending, 0 if only the watermark wakes (out).
 * @max_record: NETLAT_REC_MAX_SIZE (out).
 * @mode: NETLAT_MODE_* of the rings (out).
 * @reserved: zero.
 * @level: NETLAT_LEVEL_* in force (out; from size 104).
 * @pkt_flows: sockets the packet table has entries for (out; 0 below
 *	the packet level). An idle socket's entry goes to a new socket.
 * @slow_ns: packet level: packets faster than this write no record (out).
 * @pkt_mem_bytes: memory of the packet table and the histograms (out).
 * @rx_flows: sockets the receive table can follow at once (out; from
 *	size 120).
 * @rx_pkts: packets it can follow queued, all sockets together (out;
 *	0 while the table does not exist, as @rx_flows).
 * @rx_mem_bytes: memory of the receive table while it exists: while
 *	NETLAT_PROBE_RX is enabled, at either level (out).
 * @table_bytes: the packet tables' budget (netlat_config.table_bytes)
 *	(out; from size 144).
 * @pkt_pkts: packets in flight the packet table can follow, all its
 *	sockets together (out; 0 below the packet level, as @pkt_flows).
 * @sample: netlat_config.sample in force, 0 for every packet (out; from
 *	size 152).
 * @acks: netlat_config.acks in force (out; in a struct of 144 bytes or
 *	more).
 * @reserved2: zero.
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
	__u32 mode;
	__u32 reserved;
	__u32 level;
	__u32 pkt_flows;
	__aligned_u64 slow_ns;
	__aligned_u64 pkt_mem_bytes;
	__u32 rx_flows;
	__u32 rx_pkts;
	__aligned_u64 rx_mem_bytes;
	__aligned_u64 table_bytes;
	__u32 pkt_pkts;
	__u32 sample;
	__u32 acks;
	__u32 reserved2;
};
#define NETLAT_INFO_SIZE_VER0		72
#define NETLAT_IOC_GET_INFO	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_GET_INFO)

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
 * @overwritten: records overwritten to make room (overwrite mode) (out).
 * @filtered: probe hits on this CPU that the in-kernel filters
 *	(NETLAT_IOC_FILTERS) kept out of the ring, since load (out).
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
	__aligned_u64 overwritten;
	__aligned_u64 filtered;
};
#define NETLAT_CPU_STATS_SIZE_VER0	56
#define NETLAT_IOC_GET_CPU_STATS _IO(NETLAT_IOC_TYPE, NETLAT_CMD_GET_CPU_STATS)

/* Flags of netlat_config.flags: which fields to apply. */
#define NETLAT_CONFIG_RING_BYTES	(1U << 0)
#define NETLAT_CONFIG_WATERMARK		(1U << 1)
#define NETLAT_CONFIG_FLUSH_MS		(1U << 2)
#define NETLAT_CONFIG_MODE		(1U << 3)
#define NETLAT_CONFIG_LEVEL		(1U << 4)
#define NETLAT_CONFIG_SLOW_NS		(1U << 5)
#define NETLAT_CONFIG_TABLE_BYTES	(1U << 6)
#define NETLAT_CONFIG_KEYS		(1U << 7)
#define NETLAT_CONFIG_SAMPLE		(1U << 8)
#define NETLAT_CONFIG_ACKS		(1U << 9)

/*
 * netlat_config.sample: the packet level joins the stages of the TCP
 * packets whose sequence range holds a byte at a multiple of sample x
 * NETLAT_SAMPLE_UNIT bytes.
 */
#define NETLAT_SAMPLE_UNIT	1024
#define NETLAT_SAMPLE_MAX	(1U << 16)

/*
 * What the packet level's histograms are kept by, besides the host's
 * (netlat_config.key_by): a key is the combination of the chosen fields
 * of a socket. The service port is the local port of a socket that is
 * not in the local port range of its namespace, else the remote port
 * (so a server's accepted sockets and its clients' connecting sockets
 * have the server's port). The network namespace is its inode number,
 * the cgroup the cgroup v2 id of the socket's cgroup.
 */
#define NETLAT_KEY_PORT		(1U << 0)
#define NETLAT_KEY_NETNS	(1U << 1)
#define NETLAT_KEY_CGROUP	(1U << 2)
#define NETLAT_KEY_ALL		(NETLAT_KEY_PORT | NETLAT_KEY_NETNS | \
				 NETLAT_KEY_CGROUP)

#define NETLAT_MAX_KEYS_DEFAULT	32
#define NETLAT_MAX_KEYS_MAX	256

/*
 * The packet tables' memory budget (netlat_config.table_bytes): the send
 * table takes 5/8 of it, the receive table 3/8; each gives half of its
 * share to sockets and half to packets in flight.
 */
#define NETLAT_TABLE_BYTES_MIN		(1ULL << 16)
#define NETLAT_TABLE_BYTES_MAX		(1ULL << 30)
#define NETLAT_TABLE_BYTES_DEFAULT	(32ULL << 20)

/*
 * Record levels (netlat_config.level). EVENTS: the TCP groups write one
 * record per probe hit (sendmsg, push, skb, xmit, retrans, ack, dev): the
 * debugging view, every latency worked out by the reader. PACKETS: the
 * kernel follows each sent packet through the stages of the enabled
 * groups (at least xmit and ack), keeps per-stage histograms
 * (NETLAT_IOC_HIST) and writes one NETLAT_REC_TCP_PKT per packet when it
 * is acknowledged, only for packets whose xmit -> ACK time reaches
 * @slow_ns; the TCP groups write no other record. Markers, virtio
 * records, filters, snapshots and triggers work at both levels.
 */
#define NETLAT_LEVEL_EVENTS	0
#define NETLAT_LEVEL_PACKETS	1

/*
 * Ring modes (netlat_config.mode). STREAM: a full ring drops the newest
 * record and counts it (NETLAT_REC_LOST): for live readers. OVERWRITE: a
 * full ring overwrites its oldest records and counts them
 * (netlat_mmap_prod.overwritten): a flight recorder that always holds the
 * newest records, read through snapshots (NETLAT_IOC_SNAPSHOT); read() of
 * the live stream is -EBUSY in this mode.
 */
#define NETLAT_MODE_STREAM	0
#define NETLAT_MODE_OVERWRITE	1

#define NETLAT_RING_BYTES_MIN	(1ULL << 12)
#define NETLAT_RING_BYTES_MAX	(1ULL << 28)
#define NETLAT_FLUSH_MS_MAX	10000

/**
 * struct netlat_config - NETLAT_IOC_SET_CONFIG
 * @size: sizeof(struct netlat_config), set by the caller.
 * @flags: NETLAT_CONFIG_* bits: the fields to apply; others are ignored.
 *	All or nothing: on any error (-EINVAL, -EBUSY, -ENOMEM, an
 *	interrupted wait) no field has changed, the rings, tables, keys and
 *	histograms in force stay as they were.
 * @ring_bytes: new ring size per CPU: a power of two between
 *	NETLAT_RING_BYTES_MIN and NETLAT_RING_BYTES_MAX. Only while stopped,
 *	unmapped and with no snapshot pending or frozen (else -EBUSY); the
 *	rings are emptied and counters and sequences reset. If the watermark
 *	exceeds the new size without a new @watermark in the same call, it
 *	becomes a quarter of the new size.
 *	-ENOMEM if the memory cannot be had (never by invoking the OOM killer).
 * @watermark: wake a waiting reader when a ring holds at least this many
 *	bytes: 1 to ring_bytes.
 * @flush_ms: wake a waiting reader this often when anything is pending;
 *	0 disables, at most NETLAT_FLUSH_MS_MAX.
 * @reserved: zero.
 * @mode: NETLAT_MODE_*. Like @ring_bytes only while stopped and unmapped
 *	(else -EBUSY), and a change empties the rings and resets counters
 *	and sequences; setting the mode in force changes nothing.
 * @reserved2: zero.
 * @level: NETLAT_LEVEL_*. A change empties the packet table and zeroes
 *	the histograms (from size 56).
 * @sample: packet level (NETLAT_CONFIG_SAMPLE, from size 48): 0 or 1
 *	joins every packet's stages (the default); a power of
 *	two N up to NETLAT_SAMPLE_MAX joins only the packets whose sequence
 *	range [seq, end_seq) holds a byte whose sequence number is a
 *	multiple of N x NETLAT_SAMPLE_UNIT, and, while @slow_ns is set,
 *	every packet of a socket for a second after one of its joined
 *	packets was slow. The choice needs no state: the two ends of a
 *	connection choose the same bytes. A packet left out has no stage
 *	times and no record of its own; it is counted, exactly, when it is
 *	first sent (netlat_hist.unsampled, .packets, .bytes, .segs, and its
 *	socket's counters), so that every counter stays exact. A change applies to packets sent from then on. Other
 *	values, and a nonzero one without the flag, are -EINVAL. The
 *	receive table samples its TCP packets by the same rule (not the
 *	slow socket's): netlat_hist.rx_unsampled.
 * @slow_ns: packet level: write a record only for packets whose
 *	xmit -> ACK time is at least this (0: every packet).
 * @table_bytes: the packet tables' memory budget, NETLAT_TABLE_BYTES_MIN
 *	to NETLAT_TABLE_BYTES_MAX (from size 72). A change empties the
 *	tables that exist, like a change of @level; -ENOMEM if the memory
 *	cannot be had or the budget is over a quarter of RAM (a replace
 *	holds the old tables and the new together), and the old budget
 *	stays then. The tables are charged to the caller's memory cgroup.
 * @key_by: NETLAT_KEY_* bits: histograms per key as well (read with
 *	NETLAT_IOC_HIST's @key); 0 (the default): the host's only (from
 *	size 72, as @max_keys). A change of either zeroes the histograms.
 * @max_keys: keys kept at once, 1 to NETLAT_MAX_KEYS_MAX; 0 means
 *	NETLAT_MAX_KEYS_DEFAULT. Each, and the other, takes the stage
 *	histograms and counters per possible CPU, about 7.8 KB
 *	(netlat_hist.keys_mem_bytes); charged to the caller's memory cgroup.
 *	-ENOMEM, and nothing changes, if it cannot be had.
 * @acks: packet level (NETLAT_CONFIG_ACKS, from size 80): 1 writes a
 *	struct netlat_rec_tcp_ack_out for each pure ACK a TCP socket sends
 *	while NETLAT_PROBE_TCP_DEV is on, the ACKs a peer's capture joins
 *	its packets with when this host sends no data back (a bulk
 *	receiver); 0 (the default) none. A record per ACK, about one per
 *	two segments received: off unless asked for.
 * @reserved3: zero.
 */
struct netlat_config {
	__u32 size;
	__u32 flags;
	__aligned_u64 ring_bytes;
	__u32 watermark;
	__u32 flush_ms;
	__aligned_u64 reserved;
	__u32 mode;
	__u32 reserved2;
	__u32 level;
	__u32 sample;
	__aligned_u64 slow_ns;
	__aligned_u64 table_bytes;
	__u32 key_by;
	__u32 max_keys;
	__u32 acks;
	__u32 reserved3;
};
#define NETLAT_CONFIG_SIZE_VER0		32
#define NETLAT_IOC_SET_CONFIG	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_SET_CONFIG)

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
#define NETLAT_CONTROL_SIZE_VER0	8
#define NETLAT_IOC_START	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_START)
#define NETLAT_IOC_STOP		_IO(NETLAT_IOC_TYPE, NETLAT_CMD_STOP)
#define NETLAT_IOC_RESET	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_RESET)

/* Flags of netlat_probes.flags */
#define NETLAT_PROBES_SET	(1U << 0)	/* apply @enable */

/**
 * struct netlat_probes - NETLAT_IOC_PROBES: probe group state, and changes
 * @size: sizeof(struct netlat_probes), set by the caller.
 * @flags: NETLAT_PROBES_SET to make @enable the set of enabled groups;
 *	0 only reports. Setting needs the capabilities of SET_CONFIG.
 * @enable: NETLAT_PROBE_* groups to have enabled (in, with
 *	NETLAT_PROBES_SET). Bits outside NETLAT_PROBE_ALL are -EINVAL; a
 *	group that is neither available nor deferred is -EOPNOTSUPP;
 *	nothing changes then. Enabling a partial group enables the probes
 *	it has; enabling a deferred group arms it: it attaches, enabled,
 *	when its module loads.
 * @available: groups with at least one probe on this kernel (out).
 * @partial: available groups missing some probe (out).
 * @enabled: groups enabled (out, after the change).
 * @nmissed: probe hits the kernel's kprobe layer skipped since load
 *	(kprobe recursion, kretprobe instances exhausted): events that left
 *	no record and no NETLAT_REC_LOST (out).
 * @reserved: zero.
 * @deferred: groups whose probes live in a kernel module that is not
 *	loaded now (virtio_net's): they can be enabled, are not available,
 *	and become available when the module loads (out). An enabled
 *	deferred group is waiting for its module. Not in the size-56 version.
 * @group_missed: @nmissed by group: element i counts the hits skipped by
 *	the probes of the group 1 << i, so a reader can tell which stages
 *	lost events (out). They add up to @nmissed. Not in the size-64
 *	version.
 */
struct netlat_probes {
	__u32 size;
	__u32 flags;
	__aligned_u64 enable;
	__aligned_u64 available;
	__aligned_u64 partial;
	__aligned_u64 enabled;
	__aligned_u64 nmissed;
	__aligned_u64 reserved;
	__aligned_u64 deferred;
	__aligned_u64 group_missed[64];
};
#define NETLAT_PROBES_SIZE_VER0		56
#define NETLAT_IOC_PROBES	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_PROBES)

/* Flags of netlat_snapshot.flags, applied in this order */
#define NETLAT_SNAPSHOT_RELEASE	(1U << 0)	/* discard the frozen snapshot */
#define NETLAT_SNAPSHOT_TAKE	(1U << 1)	/* freeze one now */
#define NETLAT_SNAPSHOT_READ	(1U << 2)	/* read() gives the frozen one */

/* netlat_snapshot.state */
#define NETLAT_SNAP_EMPTY	0	/* none: TAKE or a trigger may freeze one */
#define NETLAT_SNAP_PENDING	1	/* a trigger fired: post window running */
#define NETLAT_SNAP_FROZEN	2	/* one is frozen, until RELEASE */

/**
 * struct netlat_snapshot - NETLAT_IOC_SNAPSHOT: take, read and release
 * @size: sizeof(struct netlat_snapshot), set by the caller.
 * @flags: NETLAT_SNAPSHOT_* (0 only reports). RELEASE and TAKE need the
 *	capabilities of SET_CONFIG. RELEASE of a mapped snapshot is -EBUSY,
 *	without one it is a no-op (a pending trigger is cancelled). TAKE
 *	copies every CPU's ring (each CPU pauses its writers only for the
 *	copy of its own ring) while tracing goes on; -EBUSY if a snapshot is
 *	pending or frozen. READ makes read() on this file return the frozen
 *	snapshot stream from its start, then 0 at its end (-ENODATA without
 *	a frozen snapshot; read() fails with -ENODATA once it is released).
 *	The file stops being a live reader for good.
 * @state: NETLAT_SNAP_* after the call (out).
 * @reserved: zero.
 * @bytes: length of the frozen snapshot stream, 0 if none (out).
 * @capacity: the longest a snapshot can be with the current ring size:
 *	the length to mmap (NETLAT_MMAP_SNAPSHOT) (out).
 * @id: netlat_rec_snapshot.id of the frozen snapshot, 0 if none (out).
 * @taken: snapshots frozen since load (out).
 * @missed: trigger hits while a snapshot was pending or frozen (out).
 *
 * A frozen snapshot makes poll() report EPOLLPRI on every open file.
 * The snapshot buffer (@capacity bytes, counted in netlat_info.mem_bytes)
 * exists while a snapshot is pending or frozen or a trigger is armed.
 */
struct netlat_snapshot {
	__u32 size;
	__u32 flags;
	__u32 state;
	__u32 reserved;
	__aligned_u64 bytes;
	__aligned_u64 capacity;
	__aligned_u64 id;
	__aligned_u64 taken;
	__aligned_u64 missed;
};
#define NETLAT_SNAPSHOT_SIZE_VER0	56
#define NETLAT_IOC_SNAPSHOT	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_SNAPSHOT)

/*
 * Triggers (netlat_triggers.armed): each fires on a record the module
 * stores (so its probe group must be enabled and the record must pass the
 * filters) and, when no snapshot is pending or frozen, freezes one after
 * the post window.
 *  RETRANS_FAIL  a NETLAT_REC_TCP_RETRANS with ret != 0
 *  RETRANS_KIND  a NETLAT_REC_TCP_RETRANS whose kind is in retrans_kinds
 *  LATENCY       a NETLAT_REC_TCP_ACK with xmit_ack_ns >= latency_ns, or
 *                an ACKed NETLAT_REC_TCP_PKT with end_ns - xmit_ns >= it
 *  MARKER        a NETLAT_REC_MARKER whose data begins with marker_tag
 *  RX_WAIT       a received packet waited for its reader at least
 *                rx_wait_ns: a NETLAT_REC_RX_PKT (packet level) with
 *                end_ns - queue_ns >= rx_wait_ns, or a NETLAT_REC_RX_COPY
 *                (events level) with wait_ns >= rx_wait_ns. At the packet
 *                level only packets slower than slow_ns leave a record:
 *                set slow_ns at or below rx_wait_ns.
 */
#define NETLAT_TRIG_RETRANS_FAIL	(1U << 0)
#define NETLAT_TRIG_RETRANS_KIND	(1U << 1)
#define NETLAT_TRIG_LATENCY		(1U << 2)
#define NETLAT_TRIG_MARKER		(1U << 3)
#define NETLAT_TRIG_RX_WAIT		(1U << 4)
#define NETLAT_TRIG_ALL			((1U << 5) - 1)

#define NETLAT_TRIGGERS_SET	(1U << 0)	/* apply the trigger fields */

#define NETLAT_TRIG_TAG_MAX	16
#define NETLAT_TRIG_PRE_MS_MAX	3600000
#define NETLAT_TRIG_POST_MS_MAX	60000

/**
 * struct netlat_triggers - NETLAT_IOC_TRIGGERS: arm, disarm, report
 * @size: sizeof(struct netlat_triggers), set by the caller.
 * @flags: NETLAT_TRIGGERS_SET replaces every trigger setting with the
 *	fields below (armed 0 disarms all); needs the capabilities of
 *	SET_CONFIG. 0 only reports them.
 * @armed: NETLAT_TRIG_* bits (in with SET, out).
 * @retrans_kinds: bit (1 << NETLAT_RETRANS_*) for each kind that fires
 *	RETRANS_KIND: nonzero if and only if RETRANS_KIND is armed, no bit
 *	above NETLAT_RETRANS_SYNACK.
 * @latency_ns: LATENCY threshold: nonzero if and only if LATENCY is
 *	armed.
 * @pre_ms: keep only records from this long before the triggering
 *	record (0: all the rings hold); at most NETLAT_TRIG_PRE_MS_MAX.
 * @post_ms: keep recording this long after the trigger, then freeze; at
 *	most NETLAT_TRIG_POST_MS_MAX.
 * @marker_tag_len: length of @marker_tag, 1 to NETLAT_TRIG_TAG_MAX if and
 *	only if MARKER is armed, else 0.
 * @marker_tag: the tag; bytes from @marker_tag_len on must be zero.
 * @reserved: zero.
 * @fired: trigger hits since load, frozen or missed (out).
 * @rx_wait_ns: RX_WAIT threshold: nonzero if and only if RX_WAIT is armed
 *	(from size 72; a caller of size NETLAT_TRIGGERS_SIZE_VER0 cannot arm
 *	it).
 *
 * Any field out of range, or set for a trigger that is not armed, is
 * -EINVAL and nothing changes. Arming allocates the snapshot buffer
 * (-ENOMEM if it cannot be had).
 */
struct netlat_triggers {
	__u32 size;
	__u32 flags;
	__u32 armed;
	__u32 retrans_kinds;
	__aligned_u64 latency_ns;
	__u32 pre_ms;
	__u32 post_ms;
	__u32 marker_tag_len;
	__u8 marker_tag[NETLAT_TRIG_TAG_MAX];
	__u32 reserved;
	__aligned_u64 fired;
	__aligned_u64 rx_wait_ns;
};
#define NETLAT_TRIGGERS_SIZE_VER0	64
#define NETLAT_IOC_TRIGGERS	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_TRIGGERS)

/* netlat_filter_rule.match: the conditions of a rule, all must hold */
#define NETLAT_MATCH_ADDR	(1U << 0)	/* either address in addr/prefix */
#define NETLAT_MATCH_PORT	(1U << 1)	/* either port is port */
#define NETLAT_MATCH_COOKIE	(1U << 2)	/* netlat_flow.cookie */
#define NETLAT_MATCH_SOCK_COOKIE (1U << 3)	/* the kernel's SO_COOKIE */
#define NETLAT_MATCH_NETNS	(1U << 4)	/* network namespace inode */
#define NETLAT_MATCH_TGID	(1U << 5)	/* current process */
#define NETLAT_MATCH_TID	(1U << 6)	/* current thread */
#define NETLAT_MATCH_ALL	((1U << 7) - 1)

#define NETLAT_FILTER_MAX_RULES	16

/**
 * struct netlat_filter_rule - one in-kernel filter rule
 * @groups: NETLAT_PROBE_* groups the rule applies to: nonzero, within
 *	NETLAT_PROBE_ALL.
 * @match: NETLAT_MATCH_* conditions, at least one; all must hold.
 * @family: AF_INET or AF_INET6 with MATCH_ADDR, else 0.
 * @prefix_len: MATCH_ADDR prefix length: up to 32 (AF_INET) or 128.
 * @reserved0: zero.
 * @addr: MATCH_ADDR address, network order (4 bytes for AF_INET); bits
 *	past @prefix_len must be zero.
 * @port: MATCH_PORT port, host order, nonzero.
 * @reserved1: zero.
 * @netns_ino: MATCH_NETNS: inode number of the network namespace (as
 *	stat() of /proc/PID/ns/net reports it), nonzero.
 * @cookie: MATCH_COOKIE: netlat_flow.cookie of the socket;
 *	MATCH_SOCK_COOKIE: the socket cookie getsockopt(SO_COOKIE) returns
 *	(only sockets whose cookie was asked for have one). Nonzero. A rule
 *	may not have both.
 * @tgid: MATCH_TGID: process id (initial PID namespace), nonzero.
 * @tid: MATCH_TID: thread id, nonzero.
 * @reserved: zero.
 *
 * What a condition reads: ADDR, PORT and the cookies the record's TCP flow
 * (the socket, or the headers of the packet); NETNS the socket's or the
 * device's namespace; TGID and TID the task the probe runs in, and only
 * in process context (sendmsg, and what it calls). A record without the
 * value a condition reads (no flow, softirq context) does not match it.
 */
struct netlat_filter_rule {
	__aligned_u64 groups;
	__u32 match;
	__u16 family;
	__u8 prefix_len;
	__u8 reserved0;
	__u8 addr[16];
	__u16 port;
	__u16 reserved1;
	__u32 netns_ino;
	__aligned_u64 cookie;
	__u32 tgid;
	__u32 tid;
	__aligned_u64 reserved;
};
#define NETLAT_FILTER_RULE_SIZE_VER0	64

#define NETLAT_FILTERS_SET	(1U << 0)	/* replace the rules */

/**
 * struct netlat_filters - NETLAT_IOC_FILTERS: set and read back the rules
 * @size: sizeof(struct netlat_filters), set by the caller.
 * @flags: NETLAT_FILTERS_SET replaces every rule with the @nr_rules rules
 *	at @rules (0 removes all); needs the capabilities of SET_CONFIG.
 *	Without it the rules in force are copied to @rules, at most
 *	@nr_rules of them.
 * @nr_rules: in: rules at @rules (SET: at most NETLAT_FILTER_MAX_RULES,
 *	else -EINVAL), or room there; out: rules in force.
 * @rule_size: sizeof(struct netlat_filter_rule) as the caller knows it;
 *	NETLAT_FILTER_RULE_SIZE_VER0 up to a page, same rules as @size.
 * @rules: user address of an array of @nr_rules rules of @rule_size bytes.
 * @reserved: zero.
 *
 * A record of a probe group is stored when no rule applies to the group,
 * or at least one rule that applies to it matches; a kept-out record
 * costs only the test and counts in netlat_cpu_stats.filtered. Markers
 * are never filtered. Any malformed rule is -EINVAL and nothing changes.
 */
struct netlat_filters {
	__u32 size;
	__u32 flags;
	__u32 nr_rules;
	__u32 rule_size;
	__aligned_u64 rules;
	__aligned_u64 reserved;
};
#define NETLAT_FILTERS_SIZE_VER0	32
#define NETLAT_IOC_FILTERS	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_FILTERS)

/*
 * Histogram buckets: bucket 0 counts durations of 0 ns, bucket b (1..63)
 * durations d with 2^(b-1) <= d < 2^b ns; bucket 63 also counts longer
 * ones.
 */
#define NETLAT_HIST_BUCKETS	64

/**
 * struct netlat_stage_hist - one stage's histogram (NETLAT_IOC_HIST)
 * @count: samples.
 * @sum_ns: sum of the samples.
 * @max_ns: the largest sample.
 * @bucket: log2 buckets, see NETLAT_HIST_BUCKETS.
 */
struct netlat_stage_hist {
	__aligned_u64 count;
	__aligned_u64 sum_ns;
	__aligned_u64 max_ns;
	__aligned_u64 bucket[NETLAT_HIST_BUCKETS];
};
#define NETLAT_STAGE_HIST_SIZE_VER0	536

/* Flags of netlat_hist.flags */
#define NETLAT_HIST_RESET	(1U << 0)	/* zero after reading */

/* netlat_hist.key: the packets of no key kept (folded) */
#define NETLAT_HIST_KEY_OTHER	0xffffffffU

/* Flags of netlat_hist.key_flags */
#define NETLAT_HIST_KEY_USED	(1U << 0)	/* the slot holds a key */

/**
 * struct netlat_hist - NETLAT_IOC_HIST: the packet level's histograms and
 *	counters, summed over every CPU, without any reader draining a ring
 * @size: sizeof(struct netlat_hist), set by the caller.
 * @flags: NETLAT_HIST_RESET (needs the capabilities of SET_CONFIG) zeroes
 *	the histograms and counters after they are read (not atomically
 *	with writers: a packet may land in neither read).
 * @nr_stages: in: room at @stages in entries; out: NETLAT_NR_STAGES.
 *	Entries up to the smaller of the two are written.
 * @stage_size: sizeof(struct netlat_stage_hist), set by the caller.
 * @stages: user pointer to an array of struct netlat_stage_hist, one per
 *	enum netlat_stage; 0 with @nr_stages 0 reads only the counters.
 * @packets: packets followed to their end (out).
 * @bytes: their sequence space (end_seq - seq) (out).
 * @segs: their segments at the first transmission (out).
 * @untracked: packets not followed: their socket had no entry in the
 *	table, or no slot was left for them (the table's memory, see
 *	@no_mem, or the socket's most in flight, then not even in a range)
 *	(out).
 * @flows_full: lookups of a socket that found no entry free or idle (each
 *	of its sendmsg calls and new packets while the table is full) (out).
 * @flows: sockets followed now (out).
 * @retrans_segs: segments retransmitted, by NETLAT_RETRANS_* kind, as the
 *	kernel counts them in RetransSegs (out).
 * @retrans_fail: failed retransmission attempts (out).
 * @unsampled: packets among @packets that sampling left out of the join
 *	(netlat_config.sample): counted with their bytes and segments when
 *	first sent (not when ACKed, nor in @closed), without stage times
 *	(out; a field reserved, zero, before).
 * @merged: packets among @packets followed only as part of a range: sent
 *	while their socket had 4096 packets followed in flight or the
 *	table's memory was used up,
 *	taken into the newest entry's range (struct netlat_rec_tcp_pkt
 *	@merged); their bytes and segments are in @bytes and @segs, they have
 *	no stage times (out; from size 160).
 * @rx_packets: received packets followed to their copy to the
 *	application, and those sampling left out (@rx_unsampled) (out; from
 *	size 168, as the fields below).
 * @rx_bytes: their payload bytes (out).
 * @rx_dropped: followed received packets that were dropped (out).
 * @rx_untracked: received packets not followed: their socket's slot was
 *	full (netlat_info.rx_pkts), no slot was free, or they were in the
 *	table when NETLAT_PROBE_RX went off (out).
 * @rx_flows_full: lookups of a socket that found no free slot (out).
 * @rx_flows: sockets the receive table follows now (out).
 * @rx_wait_untracked: waits of readers blocked on a socket (with
 *	NETLAT_PROBE_RX_SCHED on) whose wakeup was not followed: their slot
 *	in the table of blocked readers was taken by another task's wait
 *	(out; from size 216).
 * @no_mem: sent packets among @untracked and @merged that found the
 *	table's memory for packets in flight used up (netlat_info.pkt_pkts)
 *	(out; from size 256, as the fields below).
 * @evicted: sockets whose entry in the packet table went to another
 *	socket while they had nothing in flight (their counters end as a
 *	closed socket's, NETLAT_FLOW_EVICTED) (out).
 * @rx_no_mem: received packets among @rx_untracked that found the receive
 *	table's memory for packets used up (out).
 * @rx_evicted: sockets whose entry in the receive table went to another
 *	socket while they had no packet queued (out).
 * @closed: sent packets followed that ended with their socket before an
 *	ACK covered them (NETLAT_PKT_CLOSED; a range's packets included):
 *	@packets + @closed + @untracked + the packets in flight are every
 *	packet sent (out).
 * @rx_closed: received packets followed that ended with their socket
 *	before the application read them (NETLAT_RXP_CLOSED) (out).
 * @key: in (from size 320, as the fields below): 0 reads the host's
 *	histograms and counters; 1 to @max_keys one key's slot;
 *	NETLAT_HIST_KEY_OTHER the packets of sockets whose key was not kept
 *	(no slot free when the socket was first seen, or their key was
 *	evicted). Of a key, @stages and @packets, @bytes, @segs,
 *	@rx_packets and @rx_bytes are counted (the rest is zero); the keys'
 *	and the other's add up to the host's (unless a reset raced with
 *	packets). @flags must not have NETLAT_HIST_RESET with a key, nor a
 *	caller's size be below 320 (-EINVAL), nor @key be beyond
 *	@max_keys (-EINVAL).
 * @key_flags: NETLAT_HIST_KEY_USED if the slot holds a key (out).
 * @key_by: NETLAT_KEY_* in force (out).
 * @max_keys: slots (out); 0 while @key_by is 0.
 * @key_port: the key's service port, if NETLAT_KEY_PORT (out).
 * @key_reserved: zero (out).
 * @key_netns: the key's network namespace inode, if NETLAT_KEY_NETNS
 *	(out).
 * @key_cgroup: the key's cgroup v2 id, if NETLAT_KEY_CGROUP (out).
 * @keys_evicted: keys that gave their slot up, idle for a second or more,
 *	to a key that found none, or less than half as busy over a second
 *	as a key that found none (out).
 * @keys_folded: times a socket's key found no slot (once per table
 *	entry, sent and received, and again at each renewal): its packets
 *	went to the other's (out); it tries again after the next eviction.
 * @keys_mem_bytes: memory of the keys' histograms (out).
 * @rx_unsampled: received TCP packets among @rx_packets that sampling
 *	(netlat_config.sample) left out of the join: counted with their
 *	bytes at their arrival, without stage times or records; one dropped
 *	right after its arrival moves to @rx_dropped (out; from size 328).
 */
struct netlat_hist {
	__u32 size;
	__u32 flags;
	__u32 nr_stages;
	__u32 stage_size;
	__aligned_u64 stages;
	__aligned_u64 packets;
	__aligned_u64 bytes;
	__aligned_u64 segs;
	__aligned_u64 untracked;
	__aligned_u64 flows_full;
	__aligned_u64 flows;
	__aligned_u64 retrans_segs[8];
	__aligned_u64 retrans_fail;
	__aligned_u64 unsampled;
	__aligned_u64 merged;
	__aligned_u64 rx_packets;
	__aligned_u64 rx_bytes;
	__aligned_u64 rx_dropped;
	__aligned_u64 rx_untracked;
	__aligned_u64 rx_flows_full;
	__aligned_u64 rx_flows;
	__aligned_u64 rx_wait_untracked;
	__aligned_u64 no_mem;
	__aligned_u64 evicted;
	__aligned_u64 rx_no_mem;
	__aligned_u64 rx_evicted;
	__aligned_u64 closed;
	__aligned_u64 rx_closed;
	__u32 key;
	__u32 key_flags;
	__u32 key_by;
	__u32 max_keys;
	__u16 key_port;
	__u16 key_reserved;
	__u32 key_netns;
	__aligned_u64 key_cgroup;
	__aligned_u64 keys_evicted;
	__aligned_u64 keys_folded;
	__aligned_u64 keys_mem_bytes;
	__aligned_u64 rx_unsampled;
};
#define NETLAT_HIST_SIZE_VER0		152
#define NETLAT_IOC_HIST		_IO(NETLAT_IOC_TYPE, NETLAT_CMD_HIST)

/*
 * The counters of struct netlat_hist, each named once for the code that
 * lists them (the module's copy out, the tools' JSON and metrics), in the
 * manner of the kernel's __BPF_FUNC_MAPPER. C(field, NAME, metric, unit,
 * help): the field; the module's name for its counter (NETLAT_HC_##NAME);
 * the metric an exporter serves, netlat_##metric (a counter: _total);
 * its unit ("" or "bytes"); its help. Apart from these: the gauges
 * (@flows, @rx_flows), the counters by kind (@retrans_segs) and the keys'
 * fields.
 */
#define NETLAT_HIST_COUNTERS(C)						\
	C(packets, PACKETS, tcp_packets, "",				\
	  "TCP packets followed from their first transmission to their end.") \
	C(bytes, BYTES, tcp_bytes, "bytes",				\
	  "Sequence space of the followed TCP packets.")		\
	C(segs, SEGS, tcp_segments, "",					\
	  "Segments of the followed TCP packets at their first transmission.") \
	C(untracked, UNTRACKED, tcp_untracked_packets, "",		\
	  "TCP packets not followed: their socket had no entry or no slot was left.") \
	C(closed, CLOSED, tcp_closed_packets, "",			\
	  "TCP packets followed that ended with their socket before an ACK.") \
	C(no_mem, NO_MEM, tcp_no_memory_packets, "",			\
	  "TCP packets not followed or merged into a range: the table's memory was used up.") \
	C(merged, MERGED, tcp_merged_packets, "",			\
	  "TCP packets followed only as part of a range: their socket or the table was full.") \
	C(unsampled, UNSAMPLED, tcp_unsampled_packets, "",		\
	  "TCP packets counted but left out of the stage histograms by sampling.") \
	C(flows_full, FLOWS_FULL, tcp_sockets_no_slot, "",		\
	  "Lookups of a socket that found no entry free or idle in the packet table.") \
	C(evicted, EVICTED, tcp_sockets_evicted, "",			\
	  "Idle sockets whose packet table entry went to another socket.") \
	C(retrans_fail, RETRANS_FAIL, tcp_retransmit_failures, "",	\
	  "Retransmission attempts that failed.")			\
	C(rx_packets, RX_PACKETS, rx_packets, "",			\
	  "Received packets followed to their copy to the application (packet level).") \
	C(rx_bytes, RX_BYTES, rx_bytes, "bytes",			\
	  "Their payload bytes.")					\
	C(rx_dropped, RX_DROPPED, rx_dropped_packets, "",		\
	  "Followed received packets that were dropped.")		\
	C(rx_untracked, RX_UNTRACKED, rx_untracked_packets, "",		\
	  "Received packets not followed: their socket had no entry or no slot was left.") \
	C(rx_closed, RX_CLOSED, rx_closed_packets, "",			\
	  "Received packets followed that ended with their socket, unread.") \
	C(rx_no_mem, RX_NO_MEM, rx_no_memory_packets, "",		\
	  "Received packets not followed: the receive table's memory was used up.") \
	C(rx_unsampled, RX_UNSAMPLED, rx_unsampled_packets, "",		\
	  "Received TCP packets counted but left out of the stage histograms by sampling.") \
	C(rx_flows_full, RX_FLOWS_FULL, rx_sockets_no_slot, "",		\
	  "Lookups of a socket that found no entry free or idle in the receive table.") \
	C(rx_evicted, RX_EVICTED, rx_sockets_evicted, "",		\
	  "Idle sockets whose receive table entry went to another socket.") \
	C(rx_wait_untracked, RX_WAIT_UNTRACKED, rx_untracked_waits, "",	\
	  "Waits of blocked readers whose wakeup was not followed: no free wait slot.")

/*
 * Failed retransmission attempts of a flow, by the errno the kernel's
 * __tcp_retransmit_skb() returned (netlat_flow_stats.retrans_fail[]):
 * the ones TCP itself returns, then everything else.
 */
#define NETLAT_RTXERR_OTHER		0
#define NETLAT_RTXERR_EAGAIN		1	/* beyond the peer's window */
#define NETLAT_RTXERR_EBUSY		2	/* still in a host queue */
#define NETLAT_RTXERR_ENOMEM		3	/* no memory to split or copy */
#define NETLAT_RTXERR_ENOBUFS		4	/* the qdisc dropped it */
#define NETLAT_RTXERR_EHOSTUNREACH	5	/* no route */
#define NETLAT_RTXERR_EPERM		6	/* a netfilter drop */
#define NETLAT_RTXERR_NR		8

/* Flags of netlat_flow_stats.flags */
#define NETLAT_FLOW_CLOSED	(1U << 0)	/* the socket was destroyed */
#define NETLAT_FLOW_EVICTED	(1U << 1)	/* idle, its entry taken: a
						 * later entry counts on */
#define NETLAT_FLOW_REST	(1U << 2)	/* the sum of the sockets not
						 * listed (NETLAT_FLOWS_REST) */

/**
 * struct netlat_flow_stats - one socket's counters at the packet level
 *	(NETLAT_IOC_FLOWS); counted by the kernel while the socket has a slot
 *	in the packet table (from its first sendmsg or transmit)
 * @flow: the socket (cookie, ports, addresses; never a kernel pointer).
 * @packets: packets ended by an ACK (as netlat_hist.packets).
 * @bytes: their sequence space (end_seq - seq), the FIN included.
 * @segs: their segments at the first transmission.
 * @untracked: packets of this socket not followed (as netlat_hist.untracked).
 * @merged: packets among @packets that were followed only as part of a
 *	range (the socket had more than its FIFO's packets in flight, see
 *	netlat_hist.merged).
 * @retrans_segs: segments retransmitted, by NETLAT_RETRANS_* kind, as the
 *	kernel counts them in RetransSegs (TCP_INFO tcpi_total_retrans).
 * @retrans_fail: failed retransmission attempts by NETLAT_RTXERR_* errno.
 * @start_ns: CLOCK_MONOTONIC time the socket got its slot.
 * @end_ns: the socket's destruction (NETLAT_FLOW_CLOSED), else 0.
 * @flags: NETLAT_FLOW_*.
 * @reserved: zero.
 */
struct netlat_flow_stats {
	struct netlat_flow flow;
	__aligned_u64 packets;
	__aligned_u64 bytes;
	__aligned_u64 segs;
	__aligned_u64 untracked;
	__aligned_u64 merged;
	__aligned_u64 retrans_segs[8];
	__aligned_u64 retrans_fail[NETLAT_RTXERR_NR];
	__aligned_u64 start_ns;
	__aligned_u64 end_ns;
	__u32 flags;
	__u32 reserved;
};
#define NETLAT_FLOW_STATS_SIZE_VER0	240

#define NETLAT_FLOWS_CLOSED_MAX	64

/* Flags of netlat_flows.flags */
#define NETLAT_FLOWS_CLOSED	(1U << 0)	/* the recently closed ones too */
#define NETLAT_FLOWS_REST	(1U << 1)	/* the last entry sums the rest */

/**
 * struct netlat_flows - NETLAT_IOC_FLOWS: per-socket counters of the
 *	packet level, read live without any reader draining a ring
 * @size: sizeof(struct netlat_flows), set by the caller.
 * @flags: NETLAT_FLOWS_CLOSED also copies the sockets destroyed most
 *	recently (kept in a ring of NETLAT_FLOWS_CLOSED_MAX, oldest
 *	overwritten; reading does not remove them), after the live ones.
 *	NETLAT_FLOWS_REST bounds the answer by @nr and accounts for every
 *	socket: the last entry written (NETLAT_FLOW_REST, no flow) sums the
 *	counters of the sockets that did not fit, of the closed ones not
 *	listed (not asked for, or overwritten in the ring), and the
 *	@untracked packets and the retransmits of sockets that found no
 *	entry in the table. The entries' sums then equal NETLAT_IOC_HIST's
 *	packets, bytes, segs, untracked, merged and retrans_segs[] (but for
 *	packets ending meanwhile), and their retrans_fail[] add up to its
 *	retrans_fail.
 * @nr: in: room at @entries in entries (at least 1 with
 *	NETLAT_FLOWS_REST); out: the entries there are (live, plus closed
 *	with NETLAT_FLOWS_CLOSED), or with NETLAT_FLOWS_REST the entries
 *	written, the sum included. Entries up to the smaller of the two are
 *	written.
 * @entry_size: sizeof(struct netlat_flow_stats), set by the caller: at
 *	least NETLAT_FLOW_STATS_SIZE_VER0, at most a page; a larger entry's
 *	tail is zeroed.
 * @entries: user pointer to the array; 0 with @nr 0 only counts.
 * @closed: sockets destroyed since the level was set (out); their counts
 *	stay in NETLAT_IOC_HIST's totals.
 * @rest: in: zero; out: the sockets summed in the NETLAT_FLOW_REST entry
 *	(not counting sockets that found no entry: they have no identity).
 */
struct netlat_flows {
	__u32 size;
	__u32 flags;
	__u32 nr;
	__u32 entry_size;
	__aligned_u64 entries;
	__aligned_u64 closed;
	__aligned_u64 rest;
};
#define NETLAT_FLOWS_SIZE_VER0		40
#define NETLAT_IOC_FLOWS	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_FLOWS)

/* netlat_hook.mechanism: how the running kernel has the hook */
#define NETLAT_HOOK_ABSENT		0	/* no such symbol or tracepoint here */
#define NETLAT_HOOK_TRACEPOINT		1	/* a tracepoint probe */
#define NETLAT_HOOK_FTRACE		2	/* netlat's callback on the ftrace site */
#define NETLAT_HOOK_KPROBE_FTRACE	3	/* a kprobe on the ftrace site */
#define NETLAT_HOOK_KPROBE		4	/* a kprobe (a breakpoint) */
#define NETLAT_HOOK_FPROBE		5	/* entry and return: an fprobe */
#define NETLAT_HOOK_WRAPPED		6	/* entry and return: the call wrapped */
#define NETLAT_HOOK_KRETPROBE		7	/* entry and return: a kretprobe */
#define NETLAT_HOOK_DEFERRED		8	/* its module is not loaded now */

/* Flags of netlat_hook.flags */
#define NETLAT_HOOK_ARMED	(1U << 0)	/* armed now */
#define NETLAT_HOOK_OPTIONAL	(1U << 1)	/* a clone some builds lack */

/**
 * struct netlat_hook - one hook of the module (NETLAT_IOC_HOOKS)
 * @name: the function ("module:function" for a module's) or the
 *	tracepoint, NUL-terminated.
 * @group: its NETLAT_PROBE_* group, or groups for one that several
 *	share (armed while any of them is on).
 * @mechanism: NETLAT_HOOK_*: what the running kernel gave it when its
 *	family attached (a kprobe goes on the function's ftrace site when it
 *	has one; a return probe is an fprobe where the kernel has them, else
 *	a wrapped call or a kretprobe). So a reader sees which path each
 *	kernel takes: where a tracepoint or a symbol is missing, the hook is
 *	ABSENT and its group partial (NETLAT_IOC_PROBES).
 * @levels: bit 1 << NETLAT_LEVEL_* for each level at which the hook is
 *	armed while its group is on; 0: every level.
 * @flags: NETLAT_HOOK_ARMED while it is armed; NETLAT_HOOK_OPTIONAL for a
 *	compiler clone only some builds have (absent, it is no gap).
 * @reserved: zero.
 */
struct netlat_hook {
	char name[64];
	__aligned_u64 group;
	__u8 mechanism;
	__u8 levels;
	__u8 flags;
	__u8 reserved[5];
};
#define NETLAT_HOOK_SIZE_VER0		80

/**
 * struct netlat_hooks - NETLAT_IOC_HOOKS: the module's hooks and the
 *	mechanism each has on the running kernel
 * @size: sizeof(struct netlat_hooks), set by the caller.
 * @flags: zero.
 * @nr: in: room at @entries in entries; out: the hooks there are. Entries
 *	up to the smaller of the two are written, in the module's order.
 * @entry_size: sizeof(struct netlat_hook), set by the caller when @nr is
 *	not 0: at least NETLAT_HOOK_SIZE_VER0, at most a page; a larger
 *	entry's tail is zeroed.
 * @entries: user pointer to the array; 0 with @nr 0 only counts.
 */
struct netlat_hooks {
	__u32 size;
	__u32 flags;
	__u32 nr;
	__u32 entry_size;
	__aligned_u64 entries;
};
#define NETLAT_HOOKS_SIZE_VER0		24
#define NETLAT_IOC_HOOKS	_IO(NETLAT_IOC_TYPE, NETLAT_CMD_HOOKS)

#endif /* _UAPI_LINUX_NETLAT_H */
