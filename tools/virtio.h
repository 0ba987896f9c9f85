/* SPDX-License-Identifier: GPL-2.0 */
/* virtio_net records (NETLAT_REC_VIRTIO): the report summary. */
#ifndef NETLAT_TOOLS_VIRTIO_H
#define NETLAT_TOOLS_VIRTIO_H

#include <stdbool.h>
#include <stdio.h>
#include "libnetlat.h"

/* Per-virtqueue summary for "netlat report". */
struct virtio_report;

struct virtio_report *virtio_report_new(void);
void virtio_report_free(struct virtio_report *vr);
/* Account one record (ignored unless NETLAT_REC_VIRTIO). 0 or -ENOMEM. */
int virtio_report_add(struct virtio_report *vr, const struct netlat_rec_hdr *h);
/*
 * Text table, or a JSON value (an array) when @json. Nothing if empty.
 * TX virtqueues of split rings also get the latency from start_xmit to the
 * first skb_xmit_done interrupt whose used idx shows the buffer used
 * (the avail idx at start_xmit is the buffer's position in the ring).
 */
void virtio_report_print(struct virtio_report *vr, bool json, FILE *f);
bool virtio_report_empty(const struct virtio_report *vr);

#endif
