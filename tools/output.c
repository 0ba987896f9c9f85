// SPDX-License-Identifier: GPL-2.0
/* Text and JSON renderings of records: see output.h. */
#define _DEFAULT_SOURCE
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "output.h"

void print_escaped(FILE *f, const void *data, size_t len, bool json)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, f);
		else
			fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
	}
}

void print_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	print_escaped(f, s, strlen(s), true);
	fputc('"', f);
}

void print_field_u(FILE *f, bool json, const char *name, unsigned long long v)
{
	fprintf(f, json ? ",\"%s\":%llu" : " %s=%llu", name, v);
}

void print_field_s(FILE *f, bool json, const char *name, long long v)
{
	fprintf(f, json ? ",\"%s\":%lld" : " %s=%lld", name, v);
}

void print_field_str(FILE *f, bool json, const char *name, const char *v)
{
	fprintf(f, json ? ",\"%s\":\"%s\"" : " %s=%s", name, v);
}

static const char *tracing_state(const struct netlat_rec_stream *s)
{
	return s->flags & NETLAT_STREAM_RUNNING ? "running" : "stopped";
}

/* ---- STREAM, MARKER and NOTE records -------------------------------------- */

static void stream_fields(FILE *f, const struct netlat_rec_stream *s, bool json)
{
	if (json)
		fprintf(f, ",\"abi_version\":%u,\"nr_cpus\":%u,\"clock_id\":%u,\"flags\":%u,"
			"\"tracing\":\"%s\",\"ring_bytes\":%llu,\"realtime_ns\":%llu,"
			"\"mono_ns\":%llu,\"probe_groups\":%llu",
			s->abi_version, s->nr_cpus, s->clock_id, s->flags, tracing_state(s),
			ull(s->ring_bytes), ull(s->realtime_ns), ull(s->mono_ns),
			ull(s->probe_groups));
	else
		fprintf(f, "STREAM abi=%u nr_cpus=%u clock=%u tracing=%s ring_bytes=%llu probe_groups=0x%llx",
			s->abi_version, s->nr_cpus, s->clock_id, tracing_state(s),
			ull(s->ring_bytes), ull(s->probe_groups));
}

static void marker_fields(FILE *f, const struct netlat_rec_marker *m, bool json)
{
	fprintf(f, json ? ",\"pid\":%u,\"tid\":%u,\"len\":%u,\"data\":\""
			: "MARKER pid=%u tid=%u len=%u \"", m->pid, m->tid, m->len);
	print_escaped(f, m->data, m->len, json);
	fputc('"', f);
}

static const char *note_kind(unsigned int kind)
{
	switch (kind) {
	case NETLAT_NOTE_DROP_REASONS: return "drop_reasons";
	case NETLAT_NOTE_KERNEL: return "kernel";
	case NETLAT_NOTE_HOST: return "host";
	case NETLAT_NOTE_CLOCK: return "clock";
	}
	return "?";
}

/* NOTE kind=kernel version=1 len=20 "6.1.0-57-cloud-amd64" */
static void note_fields(FILE *f, const struct netlat_rec_note *n, bool json)
{
	if (json)
		fprintf(f, ",\"kind\":\"%s\",\"kind_id\":%u,\"version\":%u,\"len\":%u,\"text\":\"",
			note_kind(n->kind), n->kind, n->version, n->len);
	else
		fprintf(f, "NOTE kind=%s version=%u len=%u \"", note_kind(n->kind), n->version,
			n->len);
	print_escaped(f, n->text, n->len, json);
	fputc('"', f);
}

/* ---- TCP records ---------------------------------------------------------- */

void format_addr(char *buf, size_t len, unsigned int family, const uint8_t *a)
{
	if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, a, buf, len))
		snprintf(buf, len, "?");
}

/* "10.0.0.1:5000>10.0.0.2:80 ck=1a2b..." */
static void text_flow(FILE *f, const struct netlat_flow *fl)
{
	char s[64], d[64];

	format_addr(s, sizeof(s), fl->family, fl->saddr);
	format_addr(d, sizeof(d), fl->family, fl->daddr);
	if (fl->family == AF_INET6)
		fprintf(f, "[%s]:%u>[%s]:%u ck=%016llx", s, fl->sport, d, fl->dport,
			ull(fl->cookie));
	else
		fprintf(f, "%s:%u>%s:%u ck=%016llx", s, fl->sport, d, fl->dport,
			ull(fl->cookie));
}

static void json_flow(FILE *f, const struct netlat_flow *fl)
{
	char s[64], d[64];

	format_addr(s, sizeof(s), fl->family, fl->saddr);
	format_addr(d, sizeof(d), fl->family, fl->daddr);
	fprintf(f, ",\"family\":%u,\"saddr\":\"%s\",\"sport\":%u,\"daddr\":\"%s\","
		"\"dport\":%u,\"cookie\":%llu", fl->family, s, fl->sport, d, fl->dport,
		ull(fl->cookie));
}

void format_duration(char *buf, size_t len, uint64_t ns)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	unsigned int u = 0;

	while (v >= 1000 && u < 3) {
		v /= 1000;
		u++;
	}
	if (u == 0 || v >= 100)
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else if (v >= 10)
		snprintf(buf, len, "%.1f %s", v, units[u]);
	else
		snprintf(buf, len, "%.2f %s", v, units[u]);
}

void print_duration(FILE *f, uint64_t ns, bool html)
{
	char buf[32];

	format_duration(buf, sizeof(buf), ns);
	if (html)
		fprintf(f, "<span class=\"ns\" title=\"%llu ns\">%s</span>",
			(unsigned long long)ns, buf);
	else
		fputs(buf, f);
}

void print_stage_summary(FILE *f, const char *name, const struct netlat_dist *d, bool html)
{
	fputs("; ", f);
	for (; *name; name++)
		if (html && *name == '>')
			fputs("&gt;", f);
		else
			fputc(*name, f);
	fputs(" p50 ", f);
	print_duration(f, d->p50, html);
	fputs(", p99 ", f);
	print_duration(f, d->p99, html);
	fputs(", max ", f);
	print_duration(f, d->max, html);
}

void print_items(FILE *f, bool html, const void *list, size_t n, size_t shown,
		 void (*item)(FILE *f, const void *list, size_t i, bool html),
		 const char *what)
{
	size_t i;

	for (i = 0; i < n && i < shown; i++) {
		fputs(html ? "<li class=\"dir\">" : "  ", f);
		item(f, list, i, html);
		fputs(html ? "</li>" : "\n", f);
	}
	if (n > shown)
		fprintf(f, html ? "<li>... %zu more %s</li>" : "  ... %zu more %s\n",
			n - shown, what);
}

void print_flow(FILE *f, const struct netlat_flow *fl, bool json)
{
	if (json)
		json_flow(f, fl);
	else
		text_flow(f, fl);
}

static const char *push_func(unsigned int func)
{
	switch (func) {
	case NETLAT_PUSH_TCP_PUSH: return "tcp_push";
	case NETLAT_PUSH_PENDING_FRAMES: return "push_pending";
	case NETLAT_PUSH_ONE: return "push_one";
	}
	return "?";
}

static const char *rx_proto(unsigned int proto)
{
	return proto == NETLAT_RX_UDP ? "udp" : "tcp";
}

static const char *rx_where(unsigned int where)
{
	switch (where) {
	case 0: return "-";
	case NETLAT_RX_Q_IN_ORDER: return "in_order";
	case NETLAT_RX_Q_OFO: return "ofo";
	case NETLAT_RX_Q_BACKLOG: return "backlog";
	}
	return "?";
}

static const struct netlat_names *drop_names;

void output_set_drop_names(const struct netlat_names *names)
{
	drop_names = names;
}

/* A drop reason: text its name if known, else the number; JSON both. */
static void drop_reason(FILE *f, uint32_t reason, bool json)
{
	const char *name = netlat_names_get(drop_names, reason);

	if (!json) {
		if (name)
			fprintf(f, " reason=%s", name);
		else
			fprintf(f, " reason=%u", reason);
		return;
	}
	fprintf(f, ",\"reason\":%u", reason);
	if (name) {
		fputs(",\"reason_name\":", f);
		print_json_string(f, name);
	}
}

/* Each stage's duration, as the kernel's histograms got it: @r a TCP_PKT or RX_PKT. */
static void stage_fields(FILE *f, bool json, const void *r, bool rx)
{
	uint64_t from, to;
	unsigned int s;

	for (s = 0; s < NETLAT_NR_STAGES; s++)
		if (rx ? netlat_rx_pkt_stage(r, s, &from, &to) : netlat_pkt_stage(r, s, &from, &to))
			fprintf(f, json ? ",\"%s\":%llu" : " %s=%llu",
				netlat_stage_name(s), ull(to - from));
}

/*
 * The TCP timestamps option's two words (RFC 7323) of a TCP_PKT or RX_PKT,
 * each only if set: connections without the option print as they did.
 */
static void ts_fields(FILE *f, bool json, const char *name_a, uint32_t a,
		      const char *name_b, uint32_t b)
{
	if (a)
		FIELD_NUM(name_a, a);
	if (b)
		FIELD_NUM(name_b, b);
}

/* The receive records' fields, as tcp_fields() prints the others. */
static void rx_fields(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
	switch (h->type) {
	case NETLAT_REC_RX_NETIF: {
		const struct netlat_rec_rx_netif *r = (const void *)h;

		FIELD_STR("proto", rx_proto(r->proto));
		FIELDS(ifindex, seq, len, segs, tcp_flags, tstamp_ns, tstamp_mono_ns);
		FIELD_AS(skb, skb_id);
		break;
	}
	case NETLAT_REC_RX_TRANSPORT:
	case NETLAT_REC_RX_QUEUE: {
		const struct netlat_rec_rx_skb *r = (const void *)h;

		FIELD_STR("proto", rx_proto(r->proto));
		FIELD_STR("where", rx_where(r->where));
		FIELDS(seq, end_seq, len, rcv_nxt, tstamp_ns);
		FIELD_AS(skb, skb_id);
		break;
	}
	case NETLAT_REC_RX_COPY: {
		const struct netlat_rec_rx_copy *r = (const void *)h;

		FIELD_STR("proto", rx_proto(r->proto));
		FIELDS(bytes, seq, end_seq, pid, tid);
		FIELD_BIT(peek, NETLAT_RX_PEEK);
		FIELD(start_ns);
		FIELD_AS(skb, skb_id);
		if (NETLAT_REC_HAS(h, struct netlat_rec_rx_copy, wait_ns))
			FIELD(wait_ns);
		break;
	}
	case NETLAT_REC_RX_PKT: {
		const struct netlat_rec_rx_pkt *r = (const void *)h;

		FIELD_STR("proto", rx_proto(r->proto));
		FIELD_STR("where", rx_where(r->where));
		FIELDS(seq, end_seq, len, segs, pid, tid);
		FIELD_BIT(ofo, NETLAT_RXP_OFO);
		FIELD_BIT(backlog, NETLAT_RXP_BACKLOG);
		FIELD_BIT(peeked, NETLAT_RXP_PEEKED);
		FIELDS(rmem, rcvbuf);
		FIELD_STR("end", r->flags & NETLAT_RXP_COPIED ? "copy" :
				 r->flags & NETLAT_RXP_DROPPED ? "drop" :
				 r->flags & NETLAT_RXP_CLOSED ? "close" : "?");
		if (r->flags & NETLAT_RXP_DROPPED)
			drop_reason(f, r->drop_reason, json);
		stage_fields(f, json, r, true);
		/* absent from older records (168 bytes): read only if there */
		if (NETLAT_REC_HAS(h, struct netlat_rec_rx_pkt, tsecr))
			ts_fields(f, json, "tsval", r->tsval, "tsecr", r->tsecr);
		break;
	}
	case NETLAT_REC_RX_DROP: {
		const struct netlat_rec_rx_drop *r = (const void *)h;

		FIELD_STR("proto", rx_proto(r->proto));
		drop_reason(f, r->reason, json);
		FIELDS(ifindex, seq, len);
		FIELD_AS(skb, skb_id);
		break;
	}
	case NETLAT_REC_RX_WAKE: {
		const struct netlat_rec_rx_wake *r = (const void *)h;
		static const char *const ev[] = { "?", "block", "ready", "wakeup", "run" };

		FIELD_STR("event", r->event < 5 ? ev[r->event] : "?");
		FIELDS(pid, tid, on_cpu);
		break;
	}
	}
}

/* One type's fields; text (" k=v") or JSON (",\"k\":v"). */
static void tcp_fields(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
	switch (h->type) {
	case NETLAT_REC_TCP_SENDMSG: {
		const struct netlat_rec_tcp_sendmsg *r = (const void *)h;

		FIELD_AS(id, sendmsg_id);
		FIELDS(size, ret, end_seq, msg_flags, pid, tid);
		FIELD_NUM("dur_ns", r->hdr.ts_ns - r->start_ns);
		break;
	}
	case NETLAT_REC_TCP_PUSH: {
		const struct netlat_rec_tcp_push *r = (const void *)h;

		FIELD_STR("func", push_func(r->func));
		if (r->flags & NETLAT_TCP_ID_VALID)
			FIELD_AS(id, sendmsg_id);
		FIELDS(mss, nonagle, snd_nxt, write_seq);
		break;
	}
	case NETLAT_REC_TCP_SKB: {
		const struct netlat_rec_tcp_skb *r = (const void *)h;

		FIELD_AS(skb, skb_id);
		FIELD(seq);
		if (r->flags & NETLAT_TCP_ID_VALID)
			FIELD_AS(id, sendmsg_id);
		break;
	}
	case NETLAT_REC_TCP_XMIT: {
		const struct netlat_rec_tcp_xmit *r = (const void *)h;

		FIELD_AS(skb, skb_id);
		FIELDS(seq, end_seq, len, segs, tcp_flags);
		FIELD_BIT(retrans, NETLAT_TCP_RETRANSMIT);
		FIELD(snd_una);
		break;
	}
	case NETLAT_REC_TCP_RETRANS: {
		const struct netlat_rec_tcp_retrans *r = (const void *)h;

		FIELD_STR("kind", netlat_retrans_kind_name(r->kind));
		FIELDS(ret, seq, end_seq, segs, segs_req);
		FIELD_BIT(counted, NETLAT_TCP_COUNTED);
		FIELDS(ca_state, retransmits);
		FIELD_AS(skb, skb_id);
		break;
	}
	case NETLAT_REC_TCP_ACK: {
		const struct netlat_rec_tcp_ack *r = (const void *)h;

		FIELDS(snd_una, acked, snd_nxt);
		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_ack, xmit_ack_ns)) {
			FIELD(xmit_ack_ns);
			/* Karn: this xmit_ack_ns is no round trip */
			if (r->flags & NETLAT_TCP_RETRANSMIT)
				FIELD_NUM("retransmitted", 1);
		}
		break;
	}
	case NETLAT_REC_TCP_DEV: {
		const struct netlat_rec_tcp_dev *r = (const void *)h;

		FIELD_STR("stage", r->stage == NETLAT_DEV_QDISC ? "qdisc" :
				   r->stage == NETLAT_DEV_DRIVER ? "driver" : "?");
		FIELDS(ifindex, seq, end_seq, len, segs, tcp_flags);
		FIELD_AS(skb, skb_id);
		break;
	}
	case NETLAT_REC_TCP_ACK_OUT: {
		const struct netlat_rec_tcp_ack_out *r = (const void *)h;

		FIELDS(ack_seq, window);
		if (r->tsval)
			FIELDS(tsval, tsecr);
		break;
	}
	case NETLAT_REC_TCP_PKT: {
		struct netlat_rec_tcp_pkt buf;
		const struct netlat_rec_tcp_pkt *r = netlat_pkt_rec(h, &buf);

		if (!r)
			break;
		FIELDS(seq, end_seq, segs, retrans, retrans_fail);
		FIELD_STR("end", r->flags & NETLAT_PKT_ACKED ? "ack" :
				 r->flags & NETLAT_PKT_CLOSED ? "close" : "?");
		if (r->flags & NETLAT_PKT_VQ)
			FIELDS(vq_queue, vq_free, vq_size);
		if (r->flags & NETLAT_PKT_MERGED)
			FIELDS(merged, range_end);
		stage_fields(f, json, r, false);
		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_pkt, sent_ack_seq)) {
			FIELD(sent_ack_seq);
			if (r->flags & NETLAT_PKT_ACKED)
				FIELD(ack_seq);
			/* this host's receive path of the ACK */
			if (r->ack_rx_ns && r->ack_rx_ns <= r->end_ns)
				FIELD_NUM("ack_rx>ack", r->end_ns - r->ack_rx_ns);
		}
		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_pkt, ack_tsecr))
			ts_fields(f, json, "tsval", r->tsval, "ack_tsecr", r->ack_tsecr);
		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_pkt, ack_tsval) &&
		    r->ack_tsval)
			FIELD(ack_tsval);
		break;
	}
	case NETLAT_REC_RX_NETIF:
	case NETLAT_REC_RX_TRANSPORT:
	case NETLAT_REC_RX_QUEUE:
	case NETLAT_REC_RX_COPY:
	case NETLAT_REC_RX_DROP:
	case NETLAT_REC_RX_WAKE:
	case NETLAT_REC_RX_PKT:
		rx_fields(f, h, json);	/* the reader checked their size */
		break;
	}
}

/* ---- snapshots ------------------------------------------------------------ */

const char *snap_reason_name(unsigned int reason)
{
	switch (reason) {
	case NETLAT_SNAP_MANUAL: return "manual";
	case NETLAT_SNAP_TRIGGER: return "trigger";
	}
	return "?";
}

const char *ring_mode_name(unsigned int mode)
{
	switch (mode) {
	case NETLAT_MODE_STREAM: return "stream";
	case NETLAT_MODE_OVERWRITE: return "overwrite";
	}
	return "?";
}

static const char *trigger_name(unsigned int bit)
{
	const char *name = netlat_trigger_name(bit);

	return name ? name : bit ? "?" : "none";
}

static const char *type_name(unsigned int type)
{
	const char *name = netlat_type_name(type);

	return name ? name : "?";
}

void describe_snapshot(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_snapshot *s)
{
	char when[64];

	netlat_format_time(when, sizeof(when), netlat_wall_ns(stream, s->hdr.ts_ns),
			   NETLAT_TIME_DATE);
	fprintf(f, "snapshot %llu (%s", ull(s->id), snap_reason_name(s->reason));
	if (s->reason == NETLAT_SNAP_TRIGGER)
		fprintf(f, " %s: %s cpu %u seq %llu", trigger_name(s->trigger),
			type_name(s->trig_type), s->trig_cpu, ull(s->trig_seq));
	fprintf(f, "), %s mode, frozen %s", ring_mode_name(s->mode), when);
}

/* SNAPSHOT and SNAP_CPU fields; text (" k=v") or JSON (",\"k\":v"). */
static void snap_fields(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
	if (h->type == NETLAT_REC_SNAPSHOT) {
		const struct netlat_rec_snapshot *r = (const void *)h;

		FIELD(id);
		FIELD_STR("reason", snap_reason_name(r->reason));
		FIELD_STR("trigger", trigger_name(r->trigger));
		FIELD_STR("trig_type", r->trig_type ? type_name(r->trig_type) : "none");
		FIELDS(trig_cpu, trig_seq, trig_ts_ns, start_ns);
		FIELD_STR("mode", ring_mode_name(r->mode));
		FIELD(bytes);
	} else {
		const struct netlat_rec_snap_cpu *r = (const void *)h;

		FIELDS(written, overwritten, dropped, records, bytes, skipped, first_seq);
	}
}

static bool is_snap(const struct netlat_rec_hdr *h)
{
	return h->type == NETLAT_REC_SNAPSHOT || h->type == NETLAT_REC_SNAP_CPU;
}

/* Records that carry a flow right after their header: TCP and RX. */
static bool is_tcp(const struct netlat_rec_hdr *h)
{
	return (netlat_rec_is_tcp(h->type) || netlat_rec_is_rx(h->type)) &&
	       h->size >= sizeof(*h) + sizeof(struct netlat_flow);
}

/* A record of a flow: as text its type first, then the flow and its fields. */
static void flow_record(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
	if (!json)
		fprintf(f, "%s ", netlat_type_name(h->type));
	print_flow(f, (const void *)(h + 1), json);
	tcp_fields(f, h, json);
}

const char *virtio_event_name(unsigned int event)
{
	switch (event) {
	case NETLAT_VIRTIO_XMIT: return "xmit";
	case NETLAT_VIRTIO_XMIT_DONE: return "xmit_done";
	case NETLAT_VIRTIO_RECV_DONE: return "recv_done";
	case NETLAT_VIRTIO_POLL: return "poll";
	case NETLAT_VIRTIO_RECV: return "recv";
	case NETLAT_VIRTIO_GRO: return "gro";
	}
	return "?";
}

/* An address of @fl, as virtio records have always printed it (IPv6 in full). */
static void print_addr(FILE *f, const struct netlat_flow *fl, bool src,
		       char *buf, size_t len)
{
	const uint8_t *a = src ? fl->saddr : fl->daddr;

	(void)f;
	if (fl->family == 10)
		snprintf(buf, len, "%x:%x:%x:%x:%x:%x:%x:%x",
			 a[0] << 8 | a[1], a[2] << 8 | a[3], a[4] << 8 | a[5],
			 a[6] << 8 | a[7], a[8] << 8 | a[9], a[10] << 8 | a[11],
			 a[12] << 8 | a[13], a[14] << 8 | a[15]);
	else
		snprintf(buf, len, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

/*
 * The fields of a NETLAT_REC_VIRTIO record after the common part of the
 * line: text (" k=v") or JSON (",\"k\":v"). False if @h is not one.
 */
static bool virtio_fields(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
	const struct netlat_rec_virtio *r = (const void *)h;
	char s[48], d[48];

	if (h->type != NETLAT_REC_VIRTIO || h->size < sizeof(*r))
		return false;
	if (json)
		fprintf(f, ",\"event\":\"%s\"", virtio_event_name(r->event));
	else
		fprintf(f, "VIRTIO %s", virtio_event_name(r->event));
	FIELD(ifindex);
	if (r->flags & NETLAT_VIRTIO_QUEUE_VALID)
		FIELD(queue);
	if (r->flags & NETLAT_VIRTIO_VQ_VALID) {
		if (json)
			fprintf(f, ",\"vq\":\"%s.%u\"", r->vq_index & 1 ?
				"output" : "input", r->vq_index / 2);
		else
			fprintf(f, " vq=%s.%u", r->vq_index & 1 ?
				"output" : "input", r->vq_index / 2);
		FIELDS(vq_index, num_free, ring_size, num_max);
		if (r->flags & NETLAT_VIRTIO_SPLIT_VALID)
			FIELDS(avail_idx, used_idx);
		if (json)
			fprintf(f, ",\"packed\":%s,\"broken\":%s",
				r->flags & NETLAT_VIRTIO_PACKED ? "true" : "false",
				r->flags & NETLAT_VIRTIO_BROKEN ? "true" : "false");
		else if (r->flags & (NETLAT_VIRTIO_PACKED | NETLAT_VIRTIO_BROKEN))
			fprintf(f, "%s%s",
				r->flags & NETLAT_VIRTIO_PACKED ? " packed" : "",
				r->flags & NETLAT_VIRTIO_BROKEN ? " BROKEN" : "");
	}
	switch (r->event) {
	case NETLAT_VIRTIO_XMIT:
	case NETLAT_VIRTIO_RECV:
	case NETLAT_VIRTIO_GRO:
		FIELD(len);
		break;
	case NETLAT_VIRTIO_POLL:
		FIELDS(budget, work);
		break;
	}
	if (r->skb_id) {
		if (json)
			FIELD(skb_id);
		else
			fprintf(f, " skb=%016llx", ull(r->skb_id));
	}
	if (r->flags & NETLAT_VIRTIO_FLOW_VALID) {
		print_addr(f, &r->flow, true, s, sizeof(s));
		print_addr(f, &r->flow, false, d, sizeof(d));
		if (json)
			fprintf(f, ",\"family\":%u,\"saddr\":\"%s\",\"sport\":%u,"
				"\"daddr\":\"%s\",\"dport\":%u,\"cookie\":%llu",
				r->flow.family, s, r->flow.sport, d,
				r->flow.dport, ull(r->flow.cookie));
		else
			fprintf(f, " tcp=%s:%u>%s:%u ck=%016llx", s,
				r->flow.sport, d, r->flow.dport,
				ull(r->flow.cookie));
		FIELDS(seq, tcp_len);
	}
	if (json)
		FIELD(flags);
	return true;
}

/* What follows the fields every record has: its own, text or JSON. */
static void record_fields(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
	switch (h->type) {
	case NETLAT_REC_STREAM:
		stream_fields(f, (const void *)h, json);
		break;
	case NETLAT_REC_LOST: {
		const struct netlat_rec_lost *r = (const void *)h;

		if (!json)
			fputs("LOST", f);
		FIELDS(count, first_seq);
		break;
	}
	case NETLAT_REC_MARKER:
		marker_fields(f, (const void *)h, json);
		break;
	case NETLAT_REC_NOTE:
		note_fields(f, (const void *)h, json);
		break;
	default:
		if (is_snap(h)) {
			if (!json)
				fputs(netlat_type_name(h->type), f);
			snap_fields(f, h, json);
		} else if (is_tcp(h)) {
			flow_record(f, h, json);
		} else if (!virtio_fields(f, h, json) && !json) {
			fprintf(f, "type=%u size=%u", h->type, h->size);
		}
	}
}

static void print_text(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *h)
{
	char when[64];

	netlat_format_time(when, sizeof(when), netlat_wall_ns(stream, h->ts_ns), 0);
	fprintf(f, "%s cpu%u seq=%llu ", when, h->cpu, ull(h->seq));
	record_fields(f, h, false);
	fputc('\n', f);
}

static void print_json(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *h)
{
	const char *name = netlat_type_name(h->type);

	fprintf(f, "{\"type\":\"%s\",\"type_id\":%u,\"size\":%u,\"cpu\":%u,\"seq\":%llu,"
		"\"ts_ns\":%llu,\"wall_ns\":%llu",
		name ? name : "unknown", h->type, h->size, h->cpu, ull(h->seq),
		ull(h->ts_ns), ull(netlat_wall_ns(stream, h->ts_ns)));
	record_fields(f, h, true);
	fputs("}\n", f);
}

void print_record(FILE *f, const struct netlat_rec_stream *stream,
		  const struct netlat_rec_hdr *rec, bool json)
{
	if (json)
		print_json(f, stream, rec);
	else
		print_text(f, stream, rec);
}

void print_dist_json(FILE *f, const struct netlat_dist *d)
{
	fprintf(f, "{\"count\":%llu,\"min\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,"
		"\"p99_9\":%llu,\"max\":%llu,\"mean\":%.1f}", ull(d->count), ull(d->min),
		ull(d->p50), ull(d->p90), ull(d->p99), ull(d->p999), ull(d->max), d->mean);
}

void print_dist_header(FILE *f, int width, const char *first)
{
	fprintf(f, "%-*s %10s %10s %10s %10s %10s %10s %10s %12s\n", width, first, "count",
		"min", "p50", "p90", "p99", "p99.9", "max", "mean");
}

void print_dist_row(FILE *f, int width, const char *label, const struct netlat_dist *d)
{
	fprintf(f, "%-*s %10llu %10llu %10llu %10llu %10llu %10llu %10llu %12.1f\n", width,
		label, ull(d->count), ull(d->min), ull(d->p50), ull(d->p90), ull(d->p99),
		ull(d->p999), ull(d->max), d->mean);
}

/*
 * The length of the well-formed UTF-8 sequence at @s (RFC 3629: no
 * overlong form, no surrogate, nothing above U+10FFFF), 0 if none.
 */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned int c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (n == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return n;
}

/*
 * @s as the text of an HTML page: its markup characters escaped, control
 * characters as '?', and a byte that begins no well-formed UTF-8 as
 * U+FFFD (a capture's hostname or file name is whatever bytes it was),
 * so the page stays valid UTF-8.
 */
void html_esc(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n;

	while (*u) {
		switch (*u) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (*u < 0x20 && *u != '\n') {
				fputc('?', f);
			} else {
				n = utf8_len(u);
				if (n)
					fwrite(u, 1, n, f);
				else
					fputs("\xef\xbf\xbd", f);
				u += n ? n : 1;
				continue;
			}
		}
		u++;
	}
}
