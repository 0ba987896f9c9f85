// SPDX-License-Identifier: GPL-2.0
/* virtio_net records (NETLAT_REC_VIRTIO): the report summary (output.c prints them). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "virtio.h"
#include "output.h"

/* ---- report ------------------------------------------------------------- */

#define NR_EVENTS	7

struct idx_ts {
	uint64_t ts;
	uint16_t idx;
};

struct idx_list {
	struct idx_ts *v;
	size_t n, cap;
};

static int idx_add(struct idx_list *l, uint64_t ts, uint16_t idx)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct idx_ts *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].ts = ts;
	l->v[l->n++].idx = idx;
	return 0;
}

static int idx_cmp(const void *a, const void *b)
{
	const struct idx_ts *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

struct vq_stat {
	struct idx_list xmit, done;	/* split-ring TX: avail / used idx */
	struct netlat_dist lat;
	int32_t ifindex;
	uint16_t vq_index;
	uint64_t events[NR_EVENTS];
	uint64_t bytes;		/* xmit / recv len */
	uint64_t work;		/* poll work done */
	uint64_t nf_n, nf_sum;	/* num_free samples */
	uint32_t nf_min, ring_size;
	bool broken;
};

struct virtio_report {
	struct vq_stat *vq;
	size_t n, cap;
	uint64_t no_vq;		/* records without virtqueue state */
};

struct virtio_report *virtio_report_new(void)
{
	return calloc(1, sizeof(struct virtio_report));
}

void virtio_report_free(struct virtio_report *vr)
{
	if (!vr)
		return;
	for (size_t i = 0; i < vr->n; i++) {
		free(vr->vq[i].xmit.v);
		free(vr->vq[i].done.v);
	}
	free(vr->vq);
	free(vr);
}

bool virtio_report_empty(const struct virtio_report *vr)
{
	return !vr || (!vr->n && !vr->no_vq);
}

static struct vq_stat *vq_get(struct virtio_report *vr, int32_t ifindex,
			      uint16_t vq_index)
{
	struct vq_stat *v;
	size_t i;

	for (i = 0; i < vr->n; i++)
		if (vr->vq[i].ifindex == ifindex &&
		    vr->vq[i].vq_index == vq_index)
			return &vr->vq[i];
	if (vr->n == vr->cap) {
		size_t cap = vr->cap ? 2 * vr->cap : 16;

		v = realloc(vr->vq, cap * sizeof(*v));
		if (!v)
			return NULL;
		vr->vq = v;
		vr->cap = cap;
	}
	v = &vr->vq[vr->n++];
	memset(v, 0, sizeof(*v));
	v->ifindex = ifindex;
	v->vq_index = vq_index;
	v->nf_min = UINT32_MAX;
	return v;
}

int virtio_report_add(struct virtio_report *vr, const struct netlat_rec_hdr *h)
{
	const struct netlat_rec_virtio *r = (const void *)h;
	struct vq_stat *v;
	uint16_t idx;

	if (h->type != NETLAT_REC_VIRTIO || h->size < sizeof(*r))
		return 0;
	if (r->flags & NETLAT_VIRTIO_VQ_VALID)
		idx = r->vq_index;
	else if (r->flags & NETLAT_VIRTIO_QUEUE_VALID)
		idx = r->event == NETLAT_VIRTIO_XMIT ? 2 * r->queue + 1 :
						       2 * r->queue;
	else {
		vr->no_vq++;
		return 0;
	}
	v = vq_get(vr, r->ifindex, idx);
	if (!v)
		return -ENOMEM;
	v->events[r->event < NR_EVENTS ? r->event : 0]++;
	if (r->event == NETLAT_VIRTIO_XMIT || r->event == NETLAT_VIRTIO_RECV)
		v->bytes += r->len;
	if (r->event == NETLAT_VIRTIO_POLL && r->work > 0)
		v->work += r->work;
	if (r->flags & NETLAT_VIRTIO_VQ_VALID) {
		v->nf_n++;
		v->nf_sum += r->num_free;
		if (r->num_free < v->nf_min)
			v->nf_min = r->num_free;
		v->ring_size = r->ring_size;
		if (r->flags & NETLAT_VIRTIO_BROKEN)
			v->broken = true;
	}
	if ((r->flags & NETLAT_VIRTIO_SPLIT_VALID) &&
	    ((r->event == NETLAT_VIRTIO_XMIT &&
	      idx_add(&v->xmit, h->ts_ns, r->avail_idx)) ||
	     (r->event == NETLAT_VIRTIO_XMIT_DONE &&
	      idx_add(&v->done, h->ts_ns, r->used_idx))))
		return -ENOMEM;
	return 0;
}

/*
 * Pair each start_xmit (buffer at avail idx a) with the first later
 * skb_xmit_done whose used idx is past a. Both sequences advance together,
 * so one pass over each suffices.
 */
static void vq_latency(struct vq_stat *v)
{
	struct netlat_samples s = { 0 };
	size_t i, j = 0;

	memset(&v->lat, 0, sizeof(v->lat));
	if (!v->xmit.n || !v->done.n)
		return;
	qsort(v->xmit.v, v->xmit.n, sizeof(*v->xmit.v), idx_cmp);
	qsort(v->done.v, v->done.n, sizeof(*v->done.v), idx_cmp);
	for (i = 0; i < v->xmit.n; i++) {
		const struct idx_ts *x = &v->xmit.v[i];

		while (j < v->done.n &&
		       (v->done.v[j].ts < x->ts ||
			(uint16_t)(v->done.v[j].idx - x->idx - 1) >= 0x8000))
			j++;
		if (j == v->done.n)
			break;
		if (netlat_samples_add(&s, v->done.v[j].ts - x->ts))
			break;
	}
	netlat_dist_compute(s.v, s.n, &v->lat);
	netlat_samples_free(&s);
}

static int vq_cmp(const void *a, const void *b)
{
	const struct vq_stat *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return (int)x->vq_index - (int)y->vq_index;
}

void virtio_report_print(struct virtio_report *vr, bool json, FILE *f)
{
	bool any_lat = false;
	size_t i;
	int e;

	if (virtio_report_empty(vr))
		return;
	qsort(vr->vq, vr->n, sizeof(*vr->vq), vq_cmp);
	for (i = 0; i < vr->n; i++) {
		vq_latency(&vr->vq[i]);
		any_lat |= vr->vq[i].lat.count > 0;
	}
	if (!json) {
		fprintf(f, "virtqueues (virtio_net):\n");
		fprintf(f, "  %7s %-10s %4s %8s %8s %8s %8s %8s %8s %12s %9s %9s %5s\n",
			"ifindex", "vq", "dir", "xmit", "xm_done", "rcv_done",
			"polls", "recv", "gro", "bytes", "free_min", "free_avg",
			"ring");
	} else {
		fputc('[', f);
	}
	for (i = 0; i < vr->n; i++) {
		const struct vq_stat *v = &vr->vq[i];
		char name[24];
		double avg = v->nf_n ? (double)v->nf_sum / v->nf_n : 0;

		snprintf(name, sizeof(name), "%s.%u",
			 v->vq_index & 1 ? "output" : "input", v->vq_index / 2);
		if (json) {
			fprintf(f, "%s{\"ifindex\":%d,\"vq\":\"%s\",\"vq_index\":%u,"
				"\"dir\":\"%s\",\"ring_size\":%u,\"bytes\":%llu,"
				"\"work\":%llu,\"broken\":%s,\"num_free_samples\":%llu",
				i ? "," : "", v->ifindex, name, v->vq_index,
				v->vq_index & 1 ? "tx" : "rx", v->ring_size,
				ull(v->bytes), ull(v->work),
				v->broken ? "true" : "false", ull(v->nf_n));
			if (v->nf_n)
				fprintf(f, ",\"num_free_min\":%u,\"num_free_avg\":%.1f",
					v->nf_min, avg);
			if (v->lat.count)
				fprintf(f, ",\"xmit_to_done_ns\":{\"count\":%llu,"
					"\"min\":%llu,\"p50\":%llu,\"p90\":%llu,"
					"\"p99\":%llu,\"p99_9\":%llu,\"max\":%llu,"
					"\"mean\":%.1f}", ull(v->lat.count),
					ull(v->lat.min), ull(v->lat.p50),
					ull(v->lat.p90), ull(v->lat.p99),
					ull(v->lat.p999), ull(v->lat.max),
					v->lat.mean);
			fputs(",\"events\":{", f);
			for (e = 1; e < NR_EVENTS; e++)
				fprintf(f, "%s\"%s\":%llu", e > 1 ? "," : "",
					virtio_event_name(e), ull(v->events[e]));
			fputs("}}", f);
			continue;
		}
		fprintf(f, "  %7d %-10s %4s %8llu %8llu %8llu %8llu %8llu %8llu %12llu",
			v->ifindex, name, v->vq_index & 1 ? "tx" : "rx",
			ull(v->events[NETLAT_VIRTIO_XMIT]),
			ull(v->events[NETLAT_VIRTIO_XMIT_DONE]),
			ull(v->events[NETLAT_VIRTIO_RECV_DONE]),
			ull(v->events[NETLAT_VIRTIO_POLL]),
			ull(v->events[NETLAT_VIRTIO_RECV]),
			ull(v->events[NETLAT_VIRTIO_GRO]), ull(v->bytes));
		if (v->nf_n)
			fprintf(f, " %9u %9.1f %5u%s\n", v->nf_min, avg,
				v->ring_size, v->broken ? " BROKEN" : "");
		else
			fprintf(f, " %9s %9s %5s\n", "-", "-", "-");
	}
	if (json) {
		fputc(']', f);
		return;
	}
	if (vr->no_vq)
		fprintf(f, "  %llu records without a known queue (receive_buf/poll "
			"on multi-queue devices)\n", ull(vr->no_vq));
	if (!any_lat)
		return;
	fprintf(f, "\nstart_xmit -> skb_xmit_done (first TX interrupt showing the "
		"buffer used), ns\n");
	fprintf(f, "  %7s %-10s %8s %10s %10s %10s %10s %10s %10s %12s\n",
		"ifindex", "vq", "count", "min", "p50", "p90", "p99", "p99.9",
		"max", "mean");
	for (i = 0; i < vr->n; i++) {
		const struct vq_stat *v = &vr->vq[i];

		if (!v->lat.count)
			continue;
		fprintf(f, "  %7d output.%-3u %8llu %10llu %10llu %10llu %10llu "
			"%10llu %10llu %12.1f\n", v->ifindex, v->vq_index / 2,
			ull(v->lat.count), ull(v->lat.min), ull(v->lat.p50),
			ull(v->lat.p90), ull(v->lat.p99), ull(v->lat.p999),
			ull(v->lat.max), v->lat.mean);
	}
}
