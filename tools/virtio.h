/* SPDX-License-Identifier: GPL-2.0 */
/* virtio_net records (NETLAT_REC_VIRTIO): printing and the report summary. */
#ifndef NETLAT_TOOLS_VIRTIO_H
#define NETLAT_TOOLS_VIRTIO_H

#include <stdbool.h>
#include <stdio.h>
#include "libnetlat.h"

/* Name of a NETLAT_VIRTIO_* event ("xmit", "xmit_done", ...), "?" if unknown. */
const char *virtio_event_name(unsigned int event);

/*
 * The fields of a NETLAT_REC_VIRTIO record after the common part of the
 * line: text (" k=v") or JSON (",\"k\":v"). False if @h is not one.
 */
bool virtio_print_fields(FILE *f, const struct netlat_rec_hdr *h, bool json);

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
