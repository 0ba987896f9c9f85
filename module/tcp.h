/* SPDX-License-Identifier: GPL-2.0 */
/* The TCP probe family: send path, retransmits, ACKs, qdisc and driver. */
#ifndef _NETLAT_TCP_H
#define _NETLAT_TCP_H

int netlat_tcp_init(void);
void netlat_tcp_exit(void);

#endif /* _NETLAT_TCP_H */
