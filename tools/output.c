// SPDX-License-Identifier: GPL-2.0
/* Text and JSON renderings of records: see output.h. */
#define _DEFAULT_SOURCE
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "output.h"
#include "virtio.h"

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

static const char *tracing_state(const struct netlat_rec_stream *s)
{
	return s->flags & NETLAT_STREAM_RUNNING ? "running" : "stopped";
}

/* ---- text ---------------------------------------------------------------- */

static void text_stream(FILE *f, const struct netlat_rec_stream *s)
{
	fprintf(f, "STREAM abi=%u nr_cpus=%u clock=%u tracing=%s ring_bytes=%llu probe_groups=0x%llx",
		s->abi_version, s->nr_cpus, s->clock_id, tracing_state(s),
		ull(s->ring_bytes), ull(s->probe_groups));
}

static void text_lost(FILE *f, const struct netlat_rec_lost *l)
{
	fprintf(f, "LOST count=%llu first_seq=%llu", ull(l->count), ull(l->first_seq));
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

static void text_marker(FILE *f, const struct netlat_rec_marker *m)
{
	fprintf(f, "MARKER pid=%u tid=%u len=%u \"", m->pid, m->tid, m->len);
	print_escaped(f, m->data, m->len, false);
	fputc('"', f);
}


/* ---- TCP records ---------------------------------------------------------- */

void format_addr(char *buf, size_t len, unsigned int family, const uint8_t *a)
{
	if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, a, buf, len))
		snprintf(buf, len, "?");
}

/* "10.0.0.1:5000>10.0.0.2:80 ck=1a2b..." */
static void text_flow(FILE *f, const struct netlat_tcp_flow *fl)
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

static void json_flow(FILE *f, const struct netlat_tcp_flow *fl)
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

void print_flow(FILE *f, const struct netlat_tcp_flow *fl, bool json)
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

/* The receive records' fields, as tcp_fields() prints the others. */
static void rx_fields(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
#define F(name, fmt, val) fprintf(f, json ? ",\"" name "\":" fmt : " " name "=" fmt, val)
#define FS(name, val) fprintf(f, json ? ",\"" name "\":\"%s\"" : " " name "=%s", val)
	switch (h->type) {
	case NETLAT_REC_RX_NETIF: {
		const struct netlat_rec_rx_netif *r = (const void *)h;

		FS("proto", r->proto == NETLAT_RX_UDP ? "udp" : "tcp");
		F("ifindex", "%d", r->ifindex);
		F("seq", "%u", r->seq);
		F("len", "%u", r->len);
		F("segs", "%u", r->segs);
		F("tcp_flags", "%u", r->tcp_flags);
		F("tstamp_ns", "%llu", ull(r->tstamp_ns));
		F("tstamp_mono_ns", "%llu", ull(r->tstamp_mono_ns));
		F("skb", "%llu", ull(r->skb_id));
		break;
	}
	case NETLAT_REC_RX_TRANSPORT:
	case NETLAT_REC_RX_QUEUE: {
		const struct netlat_rec_rx_skb *r = (const void *)h;

		FS("proto", r->proto == NETLAT_RX_UDP ? "udp" : "tcp");
		FS("where", rx_where(r->where));
		F("seq", "%u", r->seq);
		F("end_seq", "%u", r->end_seq);
		F("len", "%u", r->len);
		F("rcv_nxt", "%u", r->rcv_nxt);
		F("tstamp_ns", "%llu", ull(r->tstamp_ns));
		F("skb", "%llu", ull(r->skb_id));
		break;
	}
	case NETLAT_REC_RX_COPY: {
		const struct netlat_rec_rx_copy *r = (const void *)h;

		FS("proto", r->proto == NETLAT_RX_UDP ? "udp" : "tcp");
		F("bytes", "%u", r->bytes);
		F("seq", "%u", r->seq);
		F("end_seq", "%u", r->end_seq);
		F("pid", "%u", r->pid);
		F("tid", "%u", r->tid);
		F("peek", "%u", r->flags & NETLAT_RX_PEEK ? 1 : 0);
		F("start_ns", "%llu", ull(r->start_ns));
		F("skb", "%llu", ull(r->skb_id));
		if (NETLAT_REC_HAS(h, struct netlat_rec_rx_copy, wait_ns))
			F("wait_ns", "%llu", ull(r->wait_ns));
		break;
	}
	case NETLAT_REC_RX_PKT: {
		const struct netlat_rec_rx_pkt *r = (const void *)h;
		uint64_t from, to;
		unsigned int s;

		FS("proto", r->proto == NETLAT_RX_UDP ? "udp" : "tcp");
		FS("where", rx_where(r->where));
		F("seq", "%u", r->seq);
		F("end_seq", "%u", r->end_seq);
		F("len", "%u", r->len);
		F("segs", "%u", r->segs);
		F("pid", "%u", r->pid);
		F("tid", "%u", r->tid);
		F("ofo", "%u", r->flags & NETLAT_RXP_OFO ? 1 : 0);
		F("backlog", "%u", r->flags & NETLAT_RXP_BACKLOG ? 1 : 0);
		F("peeked", "%u", r->flags & NETLAT_RXP_PEEKED ? 1 : 0);
		F("rmem", "%u", r->rmem);
		F("rcvbuf", "%u", r->rcvbuf);
		FS("end", r->flags & NETLAT_RXP_COPIED ? "copy" :
			  r->flags & NETLAT_RXP_DROPPED ? "drop" :
			  r->flags & NETLAT_RXP_CLOSED ? "close" : "?");
		if (r->flags & NETLAT_RXP_DROPPED)
			drop_reason(f, r->drop_reason, json);
		/* each stage's duration, as the kernel's histograms got it */
		for (s = 0; s < NETLAT_NR_STAGES; s++) {
			if (!netlat_rx_pkt_stage(r, s, &from, &to))
				continue;
			fprintf(f, json ? ",\"%s\":%llu" : " %s=%llu",
				netlat_stage_name(s), ull(to - from));
		}
		break;
	}
	case NETLAT_REC_RX_DROP: {
		const struct netlat_rec_rx_drop *r = (const void *)h;

		FS("proto", r->proto == NETLAT_RX_UDP ? "udp" : "tcp");
		drop_reason(f, r->reason, json);
		F("ifindex", "%d", r->ifindex);
		F("seq", "%u", r->seq);
		F("len", "%u", r->len);
		F("skb", "%llu", ull(r->skb_id));
		break;
	}
	case NETLAT_REC_RX_WAKE: {
		const struct netlat_rec_rx_wake *r = (const void *)h;
		static const char *const ev[] = { "?", "block", "ready", "wakeup", "run" };

		FS("event", r->event < 5 ? ev[r->event] : "?");
		F("pid", "%u", r->pid);
		F("tid", "%u", r->tid);
		F("on_cpu", "%u", r->on_cpu);
		break;
	}
	}
#undef F
#undef FS
}

/* One type's fields; text (" k=v") or JSON (",\"k\":v"). */
static void tcp_fields(FILE *f, const struct netlat_rec_hdr *h, bool json)
{
#define F(name, fmt, val) fprintf(f, json ? ",\"" name "\":" fmt : " " name "=" fmt, val)
#define FS(name, val) fprintf(f, json ? ",\"" name "\":\"%s\"" : " " name "=%s", val)
	switch (h->type) {
	case NETLAT_REC_TCP_SENDMSG: {
		const struct netlat_rec_tcp_sendmsg *r = (const void *)h;

		F("id", "%u", r->sendmsg_id);
		F("size", "%llu", ull(r->size));
		F("ret", "%lld", (long long)r->ret);
		F("end_seq", "%u", r->end_seq);
		F("msg_flags", "%u", r->msg_flags);
		F("pid", "%u", r->pid);
		F("tid", "%u", r->tid);
		F("dur_ns", "%llu", ull(r->hdr.ts_ns - r->start_ns));
		break;
	}
	case NETLAT_REC_TCP_PUSH: {
		const struct netlat_rec_tcp_push *r = (const void *)h;

		FS("func", push_func(r->func));
		if (r->flags & NETLAT_TCP_ID_VALID)
			F("id", "%u", r->sendmsg_id);
		F("mss", "%u", r->mss);
		F("nonagle", "%u", r->nonagle);
		F("snd_nxt", "%u", r->snd_nxt);
		F("write_seq", "%u", r->write_seq);
		break;
	}
	case NETLAT_REC_TCP_SKB: {
		const struct netlat_rec_tcp_skb *r = (const void *)h;

		F("skb", "%llu", ull(r->skb_id));
		F("seq", "%u", r->seq);
		if (r->flags & NETLAT_TCP_ID_VALID)
			F("id", "%u", r->sendmsg_id);
		break;
	}
	case NETLAT_REC_TCP_XMIT: {
		const struct netlat_rec_tcp_xmit *r = (const void *)h;

		F("skb", "%llu", ull(r->skb_id));
		F("seq", "%u", r->seq);
		F("end_seq", "%u", r->end_seq);
		F("len", "%u", r->len);
		F("segs", "%u", r->segs);
		F("tcp_flags", "%u", r->tcp_flags);
		F("retrans", "%u", !!(r->flags & NETLAT_TCP_RETRANSMIT));
		F("snd_una", "%u", r->snd_una);
		break;
	}
	case NETLAT_REC_TCP_RETRANS: {
		const struct netlat_rec_tcp_retrans *r = (const void *)h;

		FS("kind", netlat_retrans_kind_name(r->kind));
		F("ret", "%d", r->ret);
		F("seq", "%u", r->seq);
		F("end_seq", "%u", r->end_seq);
		F("segs", "%u", r->segs);
		F("segs_req", "%u", r->segs_req);
		F("counted", "%u", !!(r->flags & NETLAT_TCP_COUNTED));
		F("ca_state", "%u", r->ca_state);
		F("retransmits", "%u", r->retransmits);
		F("skb", "%llu", ull(r->skb_id));
		break;
	}
	case NETLAT_REC_TCP_ACK: {
		const struct netlat_rec_tcp_ack *r = (const void *)h;

		F("snd_una", "%u", r->snd_una);
		F("acked", "%u", r->acked);
		F("snd_nxt", "%u", r->snd_nxt);
		if (NETLAT_REC_HAS(h, struct netlat_rec_tcp_ack, xmit_ack_ns)) {
			F("xmit_ack_ns", "%llu", ull(r->xmit_ack_ns));
			/* Karn: this xmit_ack_ns is no round trip */
			if (r->flags & NETLAT_TCP_RETRANSMIT)
				F("retransmitted", "%u", 1);
		}
		break;
	}
	case NETLAT_REC_TCP_DEV: {
		const struct netlat_rec_tcp_dev *r = (const void *)h;

		FS("stage", r->stage == NETLAT_DEV_QDISC ? "qdisc" :
			    r->stage == NETLAT_DEV_DRIVER ? "driver" : "?");
		F("ifindex", "%d", r->ifindex);
		F("seq", "%u", r->seq);
		F("end_seq", "%u", r->end_seq);
		F("len", "%u", r->len);
		F("segs", "%u", r->segs);
		F("tcp_flags", "%u", r->tcp_flags);
		F("skb", "%llu", ull(r->skb_id));
		break;
	}
	case NETLAT_REC_TCP_PKT: {
		struct netlat_rec_tcp_pkt buf;
		const struct netlat_rec_tcp_pkt *r = netlat_pkt_rec(h, &buf);
		uint64_t from, to;
		unsigned int s;

		if (!r)
			break;
		F("seq", "%u", r->seq);
		F("end_seq", "%u", r->end_seq);
		F("segs", "%u", r->segs);
		F("retrans", "%u", r->retrans);
		F("retrans_fail", "%u", r->retrans_fail);
		FS("end", r->flags & NETLAT_PKT_ACKED ? "ack" :
			  r->flags & NETLAT_PKT_CLOSED ? "close" : "?");
		if (r->flags & NETLAT_PKT_VQ) {
			F("vq_queue", "%u", r->vq_queue);
			F("vq_free", "%u", r->vq_free);
			F("vq_size", "%u", r->vq_size);
		}
		if (r->flags & NETLAT_PKT_MERGED) {
			F("merged", "%u", r->merged);
			F("range_end", "%u", r->range_end);
		}
		/* each stage's duration, as the kernel's histograms got it */
		for (s = 0; s < NETLAT_NR_STAGES; s++) {
			if (!netlat_pkt_stage(r, s, &from, &to))
				continue;
			fprintf(f, json ? ",\"%s\":%llu" : " %s=%llu",
				netlat_stage_name(s), ull(to - from));
		}
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
#undef F
#undef FS
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
#define F(name, fmt, val) fprintf(f, json ? ",\"" name "\":" fmt : " " name "=" fmt, val)
#define FS(name, val) fprintf(f, json ? ",\"" name "\":\"%s\"" : " " name "=%s", val)
	if (h->type == NETLAT_REC_SNAPSHOT) {
		const struct netlat_rec_snapshot *s = (const void *)h;

		F("id", "%llu", ull(s->id));
		FS("reason", snap_reason_name(s->reason));
		FS("trigger", trigger_name(s->trigger));
		FS("trig_type", s->trig_type ? type_name(s->trig_type) : "none");
		F("trig_cpu", "%u", s->trig_cpu);
		F("trig_seq", "%llu", ull(s->trig_seq));
		F("trig_ts_ns", "%llu", ull(s->trig_ts_ns));
		F("start_ns", "%llu", ull(s->start_ns));
		FS("mode", ring_mode_name(s->mode));
		F("bytes", "%llu", ull(s->bytes));
	} else {
		const struct netlat_rec_snap_cpu *c = (const void *)h;

		F("written", "%llu", ull(c->written));
		F("overwritten", "%llu", ull(c->overwritten));
		F("dropped", "%llu", ull(c->dropped));
		F("records", "%llu", ull(c->records));
		F("bytes", "%llu", ull(c->bytes));
		F("skipped", "%llu", ull(c->skipped));
		F("first_seq", "%llu", ull(c->first_seq));
	}
#undef F
#undef FS
}

static bool is_snap(const struct netlat_rec_hdr *h)
{
	return h->type == NETLAT_REC_SNAPSHOT || h->type == NETLAT_REC_SNAP_CPU;
}

/* Records that carry a flow right after their header: TCP and RX. */
static bool is_tcp(const struct netlat_rec_hdr *h)
{
	return ((h->type >= NETLAT_REC_TCP_SENDMSG && h->type <= NETLAT_REC_TCP_DEV) ||
		h->type == NETLAT_REC_TCP_PKT ||
		netlat_rec_is_rx(h->type)) &&
	       h->size >= sizeof(*h) + sizeof(struct netlat_tcp_flow);
}

static void text_tcp(FILE *f, const struct netlat_rec_hdr *h)
{
	fprintf(f, "%s ", netlat_type_name(h->type));
	text_flow(f, (const void *)(h + 1));
	tcp_fields(f, h, false);
}

static void json_tcp(FILE *f, const struct netlat_rec_hdr *h)
{
	json_flow(f, (const void *)(h + 1));
	tcp_fields(f, h, true);
}

static void print_text(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *h)
{
	char when[64];

	netlat_format_time(when, sizeof(when), netlat_wall_ns(stream, h->ts_ns), 0);
	fprintf(f, "%s cpu%u seq=%llu ", when, h->cpu, ull(h->seq));
	switch (h->type) {
	case NETLAT_REC_STREAM:
		text_stream(f, (const void *)h);
		break;
	case NETLAT_REC_LOST:
		text_lost(f, (const void *)h);
		break;
	case NETLAT_REC_MARKER:
		text_marker(f, (const void *)h);
		break;
	case NETLAT_REC_NOTE:
		note_fields(f, (const void *)h, false);
		break;
	default:
		if (is_snap(h)) {
			fputs(netlat_type_name(h->type), f);
			snap_fields(f, h, false);
		} else if (is_tcp(h)) {
			text_tcp(f, h);
		} else if (!virtio_print_fields(f, h, false)) {
			fprintf(f, "type=%u size=%u", h->type, h->size);
		}
	}
	fputc('\n', f);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_stream(FILE *f, const struct netlat_rec_stream *s)
{
	fprintf(f, ",\"abi_version\":%u,\"nr_cpus\":%u,\"clock_id\":%u,\"flags\":%u,"
		"\"tracing\":\"%s\",\"ring_bytes\":%llu,\"realtime_ns\":%llu,"
		"\"mono_ns\":%llu,\"probe_groups\":%llu",
		s->abi_version, s->nr_cpus, s->clock_id, s->flags, tracing_state(s),
		ull(s->ring_bytes), ull(s->realtime_ns), ull(s->mono_ns),
		ull(s->probe_groups));
}

static void json_lost(FILE *f, const struct netlat_rec_lost *l)
{
	fprintf(f, ",\"count\":%llu,\"first_seq\":%llu", ull(l->count), ull(l->first_seq));
}

static void json_marker(FILE *f, const struct netlat_rec_marker *m)
{
	fprintf(f, ",\"pid\":%u,\"tid\":%u,\"len\":%u,\"data\":\"", m->pid, m->tid, m->len);
	print_escaped(f, m->data, m->len, true);
	fputc('"', f);
}

static void print_json(FILE *f, const struct netlat_rec_stream *stream,
		       const struct netlat_rec_hdr *h)
{
	const char *name = netlat_type_name(h->type);

	fprintf(f, "{\"type\":\"%s\",\"type_id\":%u,\"size\":%u,\"cpu\":%u,\"seq\":%llu,"
		"\"ts_ns\":%llu,\"wall_ns\":%llu",
		name ? name : "unknown", h->type, h->size, h->cpu, ull(h->seq),
		ull(h->ts_ns), ull(netlat_wall_ns(stream, h->ts_ns)));
	switch (h->type) {
	case NETLAT_REC_STREAM:
		json_stream(f, (const void *)h);
		break;
	case NETLAT_REC_LOST:
		json_lost(f, (const void *)h);
		break;
	case NETLAT_REC_MARKER:
		json_marker(f, (const void *)h);
		break;
	case NETLAT_REC_NOTE:
		note_fields(f, (const void *)h, true);
		break;
	default:
		if (is_snap(h))
			snap_fields(f, h, true);
		else if (is_tcp(h))
			json_tcp(f, h);
		else
			virtio_print_fields(f, h, true);
	}
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
