/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat join --chrome-trace": the joined packets of both hosts as one
 * Chrome trace-event timeline on A's clock (trace.h has the format).
 */
#ifndef NETLAT_JOINTRACE_H
#define NETLAT_JOINTRACE_H

#include <stdio.h>

#include "libnetlat.h"

/* A host's stages of a joined packet: the sender's, then the receiver's. */
#define JOIN_SIDE_STAGES	3
extern const unsigned int join_tx_stages[JOIN_SIDE_STAGES];
extern const unsigned int join_rx_stages[JOIN_SIDE_STAGES];

/*
 * Write @j's pairs (after netlat_join_run()) to @f: a process per host
 * named @label[host], a flow from each sent packet's driver time to its
 * receive stamp. 0 or -ENOMEM.
 */
int join_trace_write(const struct netlat_join *j, const char *const label[2], FILE *f);

#endif
