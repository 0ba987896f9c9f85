/* SPDX-License-Identifier: GPL-2.0 */
/* The receive-path probe family: NIC stamp, transport, queues, copy, drops. */
#ifndef _NETLAT_RX_H
#define _NETLAT_RX_H

int netlat_rx_init(void);
void netlat_rx_exit(void);

#endif /* _NETLAT_RX_H */
