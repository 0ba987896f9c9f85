/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "netlat join --json": the objects of the join's JSON that join.c puts
 * together: a clock estimate, a direction, a packet.
 */
#ifndef NETLAT_JOINJSON_H
#define NETLAT_JOINJSON_H

#include <stddef.h>

#include "joinhtml.h"
#include "libnetlat.h"

void join_json_est(const struct netlat_clock_est *e);
/* Direction @s (the sender: 0 is A) of @j, its stages in @d. */
void join_json_direction(const struct netlat_join *j, unsigned int s,
			 const struct join_direction *d);
/* Pair @i of @j with its sent packet's ACK. */
void join_json_packet(const struct netlat_join *j, size_t i);

#endif
