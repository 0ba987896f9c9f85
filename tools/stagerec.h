/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stages of the uapi (NETLAT_STAGES()) by their record, for code that
 * lists one side's: STAGE_IF(tcp_pkt, rec, ...) is the arguments after
 * @rec for a stage of struct netlat_rec_tcp_pkt, nothing for another
 * record's, so that a stage the uapi adds joins its side's lists with no
 * edit in the tools.
 */
#ifndef NETLAT_TOOLS_STAGEREC_H
#define NETLAT_TOOLS_STAGEREC_H

#define STAGE_IF(want, rec, ...)	STAGE_IF_##want##_##rec(__VA_ARGS__)
#define STAGE_IF_tcp_pkt_tcp_pkt(...)	__VA_ARGS__
#define STAGE_IF_tcp_pkt_rx_pkt(...)
#define STAGE_IF_rx_pkt_rx_pkt(...)	__VA_ARGS__
#define STAGE_IF_rx_pkt_tcp_pkt(...)

#endif
