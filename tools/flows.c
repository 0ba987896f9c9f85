// SPDX-License-Identifier: GPL-2.0
/* Per-flow summary of TCP records: see flows.h. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flows.h"
#include "output.h"

uint16_t flow_service_port(const struct netlat_flow *fl)
{
	static unsigned int lo, hi;
	bool own, peer;

	if (!hi) {
		FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

		if (!f || fscanf(f, "%u %u", &lo, &hi) != 2 || lo > hi || hi > 65535)
			lo = 32768, hi = 60999;	/* the kernel's default */
		if (f)
			fclose(f);
	}
	own = fl->sport >= lo && fl->sport <= hi;
	peer = fl->dport >= lo && fl->dport <= hi;
	return own && !peer ? fl->dport : fl->sport;
}

struct flows {
	struct flow_row *rows;
	size_t n, cap;
	size_t *slots;			/* open addressing: row index + 1 */
	size_t nr_slots;		/* a power of two, > 2 * n */
};

struct flows *flows_new(void)
{
	return calloc(1, sizeof(struct flows));
}

void flows_free(struct flows *fs)
{
	if (!fs)
		return;
	free(fs->rows);
	free(fs->slots);
	free(fs);
}

bool flows_empty(const struct flows *fs)
{
	return !fs || !fs->n;
}

static size_t key_hash(const struct netlat_flow *k)
{
	const unsigned char *p = (const void *)k;
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return (size_t)h;
}

static size_t *slot_of(const struct flows *fs, const struct netlat_flow *k)
{
	size_t mask = fs->nr_slots - 1, i = key_hash(k) & mask;

	while (fs->slots[i] && memcmp(&fs->rows[fs->slots[i] - 1].key, k, sizeof(*k)))
		i = (i + 1) & mask;
	return &fs->slots[i];
}

static int grow(struct flows *fs)
{
	size_t nr = fs->nr_slots ? fs->nr_slots * 2 : 64, i;
	size_t *old = fs->slots, old_nr = fs->nr_slots;
	struct flow_row *rows = realloc(fs->rows, nr / 2 * sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	fs->rows = rows;
	fs->slots = calloc(nr, sizeof(*fs->slots));
	if (!fs->slots) {
		fs->slots = old;
		return -ENOMEM;
	}
	fs->cap = nr / 2;	/* at most half the slots in use */
	fs->nr_slots = nr;
	for (i = 0; i < old_nr; i++)
		if (old[i])
			*slot_of(fs, &fs->rows[old[i] - 1].key) = old[i];
	free(old);
	return 0;
}

static struct flow_row *row_of(struct flows *fs, const struct netlat_flow *fl)
{
	struct netlat_flow k = *fl;
	size_t *slot;

	k.reserved = 0;
	if (fs->n == fs->cap && grow(fs))
		return NULL;
	slot = slot_of(fs, &k);
	if (!*slot) {
		memset(&fs->rows[fs->n], 0, sizeof(fs->rows[fs->n]));
		fs->rows[fs->n].key = k;
		*slot = ++fs->n;
	}
	return &fs->rows[*slot - 1];
}

static void add_failure(struct flow_row *r, int32_t ret)
{
	unsigned int i;

	r->failed++;
	for (i = 0; i < r->nr_fail && r->fail[i].ret != ret; i++)
		;
	if (i == MAX_FAIL_CODES) {
		r->fail_other++;
		return;
	}
	if (i == r->nr_fail)
		r->fail[r->nr_fail++] = (struct fail_count){ .ret = ret };
	r->fail[i].count++;
}

/*
 * An attempt; its segments as the RetransSegs MIB counter takes them:
 * every COUNTED attempt's segments, successful or not, and one per
 * successful SYNACK (see struct netlat_rec_tcp_retrans).
 */
static void add_retrans(struct flow_row *r, const struct netlat_rec_tcp_retrans *rt)
{
	unsigned int k = rt->kind < NR_RTX_KINDS ? rt->kind : NETLAT_RETRANS_OTHER;

	r->rtx[k]++;
	if (k == NETLAT_RETRANS_SYNACK)
		r->rtx_segs[k] += !rt->ret;
	else if (rt->flags & NETLAT_TCP_COUNTED)
		r->rtx_segs[k] += rt->segs;
	if (rt->ret)
		add_failure(r, rt->ret);
}

/*
 * A packet the kernel followed: its first transmission. The packets of
 * its range are first transmissions too: their bytes are exact, their
 * segments are not in the record (the kernel's counters have them).
 */
static void add_pkt(struct flow_row *r, const struct netlat_rec_tcp_pkt *p)
{
	r->pkt_records++;
	r->xmit_segs += p->segs;
	r->xmit_bytes += p->end_seq - p->seq;
	if (p->flags & NETLAT_PKT_MERGED) {
		r->merged += p->merged;
		r->merged_bytes += p->range_end - p->end_seq;
		r->xmit_bytes += p->range_end - p->end_seq;
	}
	if (p->flags & NETLAT_PKT_VQ) {
		if (!r->vq_pkts++ || p->vq_free < r->vq_free_min)
			r->vq_free_min = p->vq_free;
		r->vq_size = p->vq_size;
	}
}

int flows_add(struct flows *fs, const struct netlat_rec_hdr *rec, size_t *row)
{
	const struct netlat_rec_tcp_sendmsg *sm = (const void *)rec;
	const struct netlat_rec_tcp_xmit *x = (const void *)rec;
	struct flow_row *r;

	if (row)
		*row = SIZE_MAX;
	if (rec->type != NETLAT_REC_TCP_SENDMSG && rec->type != NETLAT_REC_TCP_XMIT &&
	    rec->type != NETLAT_REC_TCP_RETRANS && rec->type != NETLAT_REC_TCP_PKT)
		return 0;
	r = row_of(fs, (const void *)(rec + 1));
	if (!r)
		return -ENOMEM;
	if (row)
		*row = (size_t)(r - fs->rows);
	switch (rec->type) {
	case NETLAT_REC_TCP_SENDMSG:
		r->sendmsg_calls++;
		r->sendmsg_bytes += sm->ret > 0 ? (uint64_t)sm->ret : 0;
		break;
	case NETLAT_REC_TCP_XMIT:
		if (!(x->flags & NETLAT_TCP_RETRANSMIT)) {
			r->xmit_segs += x->segs;
			r->xmit_bytes += x->len;
		}
		break;
	case NETLAT_REC_TCP_RETRANS:
		add_retrans(r, (const void *)rec);
		break;
	case NETLAT_REC_TCP_PKT: {
		/* a packet the kernel followed: its first transmission */
		struct netlat_rec_tcp_pkt buf;
		const struct netlat_rec_tcp_pkt *p = netlat_pkt_rec(rec, &buf);

		if (p)
			add_pkt(r, p);
		break;
	}
	}
	return 0;
}

/* Bytes first transmitted, then bytes accepted by sendmsg, descending. */
static int cmp_rows(const void *a, const void *b)
{
	const struct flow_row *x = *(const struct flow_row *const *)a;
	const struct flow_row *y = *(const struct flow_row *const *)b;

	if (x->xmit_bytes != y->xmit_bytes)
		return x->xmit_bytes < y->xmit_bytes ? 1 : -1;
	if (x->sendmsg_bytes != y->sendmsg_bytes)
		return x->sendmsg_bytes < y->sendmsg_bytes ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

const struct flow_row *flows_row(const struct flows *fs, size_t i)
{
	return &fs->rows[i];
}

const char *flows_code_name(int32_t ret, char *buf, size_t len)
{
	switch (ret) {
	case -EBUSY: return "EBUSY";
	case -EAGAIN: return "EAGAIN";
	case -ENOMEM: return "ENOMEM";
	case -ENOBUFS: return "ENOBUFS";
	case -EHOSTUNREACH: return "EHOSTUNREACH";
	case 1: return "NET_XMIT_DROP";
	case 2: return "NET_XMIT_CN";
	}
	snprintf(buf, len, "%d", ret);
	return buf;
}

static void text_failures(FILE *f, const struct flow_row *r)
{
	char buf[16];
	unsigned int i;

	for (i = 0; i < r->nr_fail; i++)
		fprintf(f, "%s%s=%llu", i ? "," : " ", flows_code_name(r->fail[i].ret, buf, sizeof(buf)),
			ull(r->fail[i].count));
	if (r->fail_other)
		fprintf(f, ",more=%llu", ull(r->fail_other));
}

static uint64_t sum_kinds(const uint64_t *v)
{
	uint64_t s = 0;
	int k;

	for (k = 0; k < NR_RTX_KINDS; k++)
		s += v[k];
	return s;
}

/* "{"other":N,"rto":N,...}" */
static void json_kinds(FILE *f, const uint64_t *v)
{
	int k;

	for (k = 0; k < NR_RTX_KINDS; k++)
		fprintf(f, "%s\"%s\":%llu", k ? "," : "{", netlat_retrans_kind_name(k), ull(v[k]));
	fputc('}', f);
}

static void text_row(FILE *f, const struct flow_row *r)
{
	int k;

	fprintf(f, "%8llu %12llu %8llu %12llu", ull(r->sendmsg_calls),
		ull(r->sendmsg_bytes), ull(r->xmit_segs), ull(r->xmit_bytes));
	for (k = 0; k < NR_RTX_KINDS; k++)
		fprintf(f, " %6llu", ull(r->rtx[k]));
	fprintf(f, " %6llu  ", ull(r->failed));
	print_flow(f, &r->key, false);
	text_failures(f, r);
	if (sum_kinds(r->rtx_segs))
		fprintf(f, " rtx_segs=%llu", ull(sum_kinds(r->rtx_segs)));
	if (r->merged)
		fprintf(f, " merged=%llu (%llu bytes)", ull(r->merged), ull(r->merged_bytes));
	if (r->vq_pkts)
		fprintf(f, " vq_free_min=%u/%u", r->vq_free_min, r->vq_size);
	fputc('\n', f);
}

static void json_row(FILE *f, const struct flow_row *r)
{
	char buf[16];
	unsigned int i;

	fprintf(f, "{\"sendmsg_calls\":%llu,\"sendmsg_bytes\":%llu,\"xmit_segs\":%llu,"
		"\"xmit_bytes\":%llu", ull(r->sendmsg_calls), ull(r->sendmsg_bytes),
		ull(r->xmit_segs), ull(r->xmit_bytes));
	print_flow(f, &r->key, true);
	fputs(",\"retrans\":", f);
	json_kinds(f, r->rtx);
	fputs(",\"retrans_segs\":", f);
	json_kinds(f, r->rtx_segs);
	/* the one number to compare with nstat's TcpRetransSegs */
	fprintf(f, ",\"retrans_segs_total\":%llu", ull(sum_kinds(r->rtx_segs)));
	fprintf(f, ",\"retrans_failed\":%llu,\"retrans_failed_by_ret\":[", ull(r->failed));
	for (i = 0; i < r->nr_fail; i++)
		fprintf(f, "%s{\"ret\":%d,\"name\":\"%s\",\"count\":%llu}", i ? "," : "",
			r->fail[i].ret, flows_code_name(r->fail[i].ret, buf, sizeof(buf)),
			ull(r->fail[i].count));
	fprintf(f, "],\"retrans_failed_other\":%llu", ull(r->fail_other));
	/* the packet level's: only for flows with packet records */
	if (r->pkt_records)
		fprintf(f, ",\"packet_records\":%llu,\"merged_packets\":%llu,"
			"\"merged_bytes\":%llu,\"vq_packets\":%llu,\"vq_free_min\":%u,"
			"\"vq_size\":%u", ull(r->pkt_records), ull(r->merged),
			ull(r->merged_bytes), ull(r->vq_pkts), r->vq_free_min, r->vq_size);
	fputc('}', f);
}

/* Retransmitted segments by kind of all @n flows, shown or not. */
static void all_retrans_segs(const struct flow_row *const *order, size_t n, uint64_t *segs)
{
	size_t i;
	int k;

	memset(segs, 0, NR_RTX_KINDS * sizeof(*segs));
	for (i = 0; i < n; i++)
		for (k = 0; k < NR_RTX_KINDS; k++)
			segs[k] += order[i]->rtx_segs[k];
}

static void text_table(FILE *f, const struct flow_row *const *order, size_t n,
		       size_t shown)
{
	uint64_t segs[NR_RTX_KINDS];
	bool pkts = false;
	size_t i;
	int k;

	for (i = 0; i < shown; i++)
		pkts |= order[i]->merged || order[i]->vq_pkts;
	fprintf(f, "TCP flows by bytes first transmitted (%zu flows; sm: sendmsg calls and "
		"bytes accepted; tx: first transmissions;\nretransmit attempts by kind, "
		"failed ones by return code)\n", n);
	if (pkts)
		fputs("merged: packets the kernel followed only as part of a range (more than "
		      "256 in flight; their bytes are in tx_bytes,\ntheir segments are not); "
		      "vq_free_min: the fewest free virtqueue descriptors a packet met / ring size\n",
		      f);
	fprintf(f, "%8s %12s %8s %12s", "sm_calls", "sm_bytes", "tx_segs", "tx_bytes");
	for (k = 0; k < NR_RTX_KINDS; k++)
		fprintf(f, " %6s", netlat_retrans_kind_name(k));
	fprintf(f, " %6s  %s\n", "failed", "flow");
	for (i = 0; i < shown; i++)
		text_row(f, order[i]);
	if (n > shown)
		fprintf(f, "... %zu more flows\n", n - shown);
	all_retrans_segs(order, n, segs);
	if (!sum_kinds(segs))
		return;
	fprintf(f, "retransmitted segments (what RetransSegs counts), all flows: %llu;",
		ull(sum_kinds(segs)));
	for (k = 0; k < NR_RTX_KINDS; k++)
		if (segs[k])
			fprintf(f, " %s %llu", netlat_retrans_kind_name(k), ull(segs[k]));
	fputc('\n', f);
}

static void json_table(FILE *f, const struct flow_row *const *order, size_t n,
		       size_t shown)
{
	uint64_t segs[NR_RTX_KINDS];
	size_t i;

	all_retrans_segs(order, n, segs);
	fprintf(f, "{\"count\":%zu,\"shown\":%zu,\"retrans_segs\":", n, shown);
	json_kinds(f, segs);
	fprintf(f, ",\"retrans_segs_total\":%llu,\"flows\":[", ull(sum_kinds(segs)));
	for (i = 0; i < shown; i++) {
		fputs(i ? "," : "", f);
		json_row(f, order[i]);
	}
	fputs("]}", f);
}

const struct flow_row **flows_sorted(const struct flows *fs, size_t *n)
{
	const struct flow_row **order = calloc(fs->n ? fs->n : 1, sizeof(*order));
	size_t i;

	*n = fs->n;
	if (!order)
		return NULL;
	for (i = 0; i < fs->n; i++)
		order[i] = &fs->rows[i];
	qsort(order, fs->n, sizeof(*order), cmp_rows);
	return order;
}

void flows_print(const struct flows *fs, bool json, FILE *f)
{
	size_t n, shown = fs->n < FLOWS_SHOWN ? fs->n : FLOWS_SHOWN;
	const struct flow_row **order = flows_sorted(fs, &n);

	if (!order) {
		fputs(json ? "null" : "TCP flows: out of memory\n", f);
		return;
	}
	if (json)
		json_table(f, order, n, shown);
	else
		text_table(f, order, n, shown);
	free(order);
}
