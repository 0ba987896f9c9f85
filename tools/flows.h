/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat report": per-flow summary of TCP records. A flow is a socket
 * cookie with its 4-tuple; rows are sorted by bytes first transmitted.
 */
#ifndef NETLAT_FLOWS_H
#define NETLAT_FLOWS_H

#include <stdbool.h>
#include <stdio.h>
#include "libnetlat.h"

/* Rows printed (text and JSON); the rest is one "N more flows" line. */
#define FLOWS_SHOWN	20

struct flows;

struct flows *flows_new(void);
void flows_free(struct flows *fs);

/* Account a TCP record (others are ignored). 0 or -ENOMEM. */
int flows_add(struct flows *fs, const struct netlat_rec_hdr *rec);

bool flows_empty(const struct flows *fs);

/* The table, in text, or as a JSON object. */
void flows_print(const struct flows *fs, bool json, FILE *f);

#endif
