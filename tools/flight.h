/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flight recorder commands ("netlat snapshot", "flight", "filters",
 * "triggers") and the --filter option of tail, record and flight, which
 * sets in-kernel filter rules (NETLAT_IOC_FILTERS) for as long as the
 * command runs, then puts back the rules that were in force.
 */
#ifndef NETLAT_FLIGHT_H
#define NETLAT_FLIGHT_H

#include <stdbool.h>
#include "libnetlat.h"

/* getopt_long() value of --filter. */
#define KFILTER_OPT	0x2000
#define KFILTER_OPTION	OPTION_ARG("filter", KFILTER_OPT)

#define KFILTER_HELP \
	"  --filter SPEC        in-kernel filter rule while this runs (repeatable;\n" \
	"                       see `netlat filters --help`)\n"

struct kfilters {
	struct netlat_filter_rule rules[NETLAT_FILTER_MAX_RULES];
	unsigned int nr;
	struct netlat_filter_rule saved[NETLAT_FILTER_MAX_RULES];
	unsigned int nr_saved;
	int fd;				/* open while the rules are set */
	const char *path;
};

/* Parse a --filter SPEC: -1 taken, else the exit status (a usage error). */
int kfilters_add(struct kfilters *k, const char *spec);

/*
 * Set the rules (if any were given) on device @path (NULL: the default),
 * keeping the rules in force to restore: 0, or 1 with the reason printed.
 */
int kfilters_apply(struct kfilters *k, const char *path);

/* Put back the rules that were in force; nothing if none were set. */
void kfilters_restore(struct kfilters *k);

int cmd_snapshot(int argc, char **argv);
int cmd_flight(int argc, char **argv);
int cmd_filters(int argc, char **argv);
int cmd_triggers(int argc, char **argv);

#define FILTER_SPEC_HELP \
	"SPEC: comma-separated conditions, all of which must hold:\n" \
	"  addr=A[/PREFIX]  IPv4 or IPv6 address or prefix, either side of the flow\n" \
	"  port=N           either port\n" \
	"  cookie=N         netlat's socket cookie (ck= in tail output)\n" \
	"  sock-cookie=N    the socket's SO_COOKIE\n" \
	"  netns=INODE|PATH network namespace: an inode number or a path such as\n" \
	"                   /proc/PID/ns/net\n" \
	"  pid=TGID, tid=TID  the process or thread (process context only)\n" \
	"  groups=G[,G...]  the probe groups the rule applies to (default all)\n" \
	"A group with rules keeps a record if any of its rules matches; markers\n" \
	"are never filtered. Example: addr=192.0.2.0/24,port=5001,groups=sendmsg,xmit\n"

#endif
