// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * flight_recorder - netlat's in-kernel flight recorder, driven by a
 * vendor's program.
 *
 * The module keeps the newest records of every CPU (overwrite mode); armed
 * triggers freeze a snapshot of all the rings when something goes wrong;
 * this program waits for it, writes it to a file and releases it.
 *
 *   flight_recorder -t TRIGGER... [-o DIR] [-p POST_MS] [-n COUNT] [-d DEVICE]
 *
 *   -t TRIGGER   retrans-fail, retrans=KIND[,KIND], latency=DURATION or
 *                marker=TAG (as `netlat flight --trigger`); repeatable
 *   -o DIR       where snapshots go, as DIR/flight-ID.nl (default .)
 *   -p POST_MS   keep recording this long after the trigger (default 0)
 *   -n COUNT     exit after COUNT snapshots
 *   -d DEVICE    the device (default /dev/netlat)
 *
 * SIGINT/SIGTERM stop it; it then disarms the triggers, cancels a pending
 * snapshot and puts the rings back in the mode it found.
 *
 * It uses only libnetlat and <linux/netlat.h>; the steps are explained in
 * Documentation/libnetlat.rst ("Example: the in-kernel flight recorder").
 * Build: cc flight_recorder.c $(pkg-config --cflags --libs libnetlat).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/netlat.h>
#include "libnetlat.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* One line for a failed ioctl; libnetlat names what an old module lacks. */
static int fail(const char *what, unsigned long request, int r)
{
	fprintf(stderr, "flight_recorder: %s: %s\n", what, netlat_ioctl_strerror(request, -r));
	return 1;
}

/*
 * Step 4: the frozen snapshot to DIR/flight-ID.nl, through a descriptor
 * of its own (reading a snapshot makes a descriptor a snapshot reader
 * for good), written to a temporary name and renamed.
 */
static int save(const char *device, const char *dir, const struct netlat_snapshot *s)
{
	char errbuf[NETLAT_ERRBUF_SIZE], tmp[4096], path[4096];
	uint64_t bytes;
	int in, out, r;

	snprintf(tmp, sizeof(tmp), "%s/.flight-%llu.tmp", dir, (unsigned long long)s->id);
	snprintf(path, sizeof(path), "%s/flight-%llu.nl", dir, (unsigned long long)s->id);
	in = netlat_dev_open(device, O_RDONLY, errbuf);
	if (in < 0) {
		fprintf(stderr, "flight_recorder: %s\n", errbuf);
		return -1;
	}
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		fprintf(stderr, "flight_recorder: %s: %s\n", tmp, strerror(errno));
		close(in);
		return -1;
	}
	r = netlat_snapshot_copy(in, out, &bytes);
	close(in);
	if (close(out) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r) {
		fprintf(stderr, "flight_recorder: snapshot %llu: %s\n",
			(unsigned long long)s->id, strerror(-r));
		unlink(tmp);
		return -1;
	}
	fprintf(stderr, "flight_recorder: snapshot %llu: %llu bytes to %s\n",
		(unsigned long long)s->id, (unsigned long long)bytes, path);
	return 0;
}

/*
 * Step 5: what froze it, read in place through the read-only mapping:
 * the stream header, then the SNAPSHOT record.
 */
static void describe(int fd, const struct netlat_snapshot *s)
{
	const struct netlat_rec_snapshot *snap;
	const struct netlat_rec_hdr *first;
	const unsigned char *map = netlat_snapshot_map(fd, s);
	const char *type;

	if (!map)
		return;
	first = (const void *)map;
	snap = (const void *)(map + first->size);
	if (first->size + sizeof(*snap) <= s->bytes && snap->hdr.type == NETLAT_REC_SNAPSHOT) {
		type = netlat_type_name(snap->trig_type);
		fprintf(stderr, "flight_recorder: snapshot %llu: %s, record %s cpu %u seq %llu\n",
			(unsigned long long)snap->id,
			snap->reason == NETLAT_SNAP_TRIGGER ?
			netlat_trigger_name(snap->trigger) : "taken by hand",
			type ? type : "-", snap->trig_cpu, (unsigned long long)snap->trig_seq);
	}
	netlat_snapshot_unmap(map, s);
}

static int usage(void)
{
	fputs("usage: flight_recorder -t TRIGGER... [-o DIR] [-p POST_MS] [-n COUNT] "
	      "[-d DEVICE]\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct netlat_triggers trig = { 0 }, none = { 0 };
	char errbuf[NETLAT_ERRBUF_SIZE];
	const char *device = NULL, *dir = ".";
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long count = 0, saved = 0;
	struct netlat_snapshot s;
	struct netlat_info info;
	int c, fd, r, status = 0;

	while ((c = getopt(argc, argv, "t:o:p:n:d:")) != -1) {
		switch (c) {
		case 't':
			if (netlat_parse_trigger(optarg, &trig, errbuf)) {
				fprintf(stderr, "flight_recorder: -t %s: %s\n", optarg, errbuf);
				return usage();
			}
			break;
		case 'o':
			dir = optarg;
			break;
		case 'p':
			trig.post_ms = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 10);
			break;
		case 'd':
			device = optarg;
			break;
		default:
			return usage();
		}
	}
	if (!trig.armed || optind < argc)
		return usage();

	/* Step 1: the device, and a module that has snapshots. */
	fd = netlat_dev_open(device, O_RDONLY, errbuf);
	if (fd < 0) {
		fprintf(stderr, "flight_recorder: %s\n", errbuf);
		return 1;
	}
	r = netlat_snapshot(fd, 0, &s);
	if (!r)
		r = netlat_get_info(fd, &info);
	if (r)
		return fail("SNAPSHOT", NETLAT_IOC_SNAPSHOT, r);

	/* Step 2: overwrite mode (only while stopped: it empties the rings). */
	r = netlat_stop(fd);
	if (!r)
		r = netlat_set_mode(fd, NETLAT_MODE_OVERWRITE);
	if (!r)
		r = netlat_start(fd);
	if (r)
		return fail("overwrite mode", NETLAT_IOC_SET_CONFIG, r);

	/* Step 3: arm the triggers; signals interrupt the wait below. */
	r = netlat_set_triggers(fd, &trig);
	if (r) {
		status = fail("TRIGGERS", NETLAT_IOC_TRIGGERS, r);
		stop = 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	while (!stop && (!count || saved < count)) {
		/* POLLPRI: a snapshot is frozen. The timeout only bounds a stop. */
		r = netlat_wait_snapshot(fd, 1000);
		if (r == 0 || r == -EINTR)
			continue;
		if (r < 0 || (r = netlat_snapshot(fd, 0, &s)) < 0) {
			status = fail("wait", NETLAT_IOC_SNAPSHOT, r);
			break;
		}
		if (s.state != NETLAT_SNAP_FROZEN)
			continue;
		describe(fd, &s);
		if (save(device, dir, &s) == 0)
			saved++;
		else
			status = 1;
		/* Step 6: release it, so the next trigger can freeze another. */
		r = netlat_snapshot(fd, NETLAT_SNAPSHOT_RELEASE, NULL);
		if (r) {
			status = fail("RELEASE", NETLAT_IOC_SNAPSHOT, r);
			break;
		}
	}

	/* Step 7: disarm, cancel a pending snapshot, put the mode back. */
	netlat_set_triggers(fd, &none);
	if (!netlat_snapshot(fd, 0, &s) && s.state == NETLAT_SNAP_PENDING)
		netlat_snapshot(fd, NETLAT_SNAPSHOT_RELEASE, NULL);
	if (info.mode != NETLAT_MODE_OVERWRITE) {
		netlat_stop(fd);
		netlat_set_mode(fd, info.mode);
		if (info.state & NETLAT_STATE_RUNNING)
			netlat_start(fd);
	}
	close(fd);
	return status;
}
