/* SPDX-License-Identifier: GPL-2.0 */
/* The virtio_net probe family: TX and RX virtqueue records. */
#ifndef _NETLAT_VIRTIO_H
#define _NETLAT_VIRTIO_H

int netlat_virtio_init(void);
void netlat_virtio_exit(void);

#endif /* _NETLAT_VIRTIO_H */
