// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * libnetlat: opening /dev/netlat and its ioctls (see libnetlat.h).
 */
#define _DEFAULT_SOURCE
#include "libnetlat.h"
#include "libnetlat_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>

/* ==== device control ===================================================== */

int netlat_dev_open(const char *path, int oflags, char *errbuf)
{
	int fd;

	if (!path)
		path = NETLAT_DEVICE_PATH;
	fd = open(path, oflags | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		netlat__format_dev_error(errbuf, path, err);
		return -err;
	}
	return fd;
}

static int netlat_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

int netlat_get_info(int fd, struct netlat_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return netlat_ioctl(fd, NETLAT_IOC_GET_INFO, info);
}

int netlat_get_cpu_stats(int fd, unsigned int cpu, struct netlat_cpu_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->cpu = cpu;
	return netlat_ioctl(fd, NETLAT_IOC_GET_CPU_STATS, st);
}

static int netlat_control(int fd, unsigned long request)
{
	struct netlat_control ctl = { .size = sizeof(ctl) };

	return netlat_ioctl(fd, request, &ctl);
}

int netlat_start(int fd)
{
	return netlat_control(fd, NETLAT_IOC_START);
}

int netlat_stop(int fd)
{
	return netlat_control(fd, NETLAT_IOC_STOP);
}

int netlat_reset(int fd)
{
	return netlat_control(fd, NETLAT_IOC_RESET);
}

int netlat_probes(int fd, bool set, uint64_t enable, struct netlat_probes *pr)
{
	memset(pr, 0, sizeof(*pr));
	pr->size = sizeof(*pr);
	pr->flags = set ? NETLAT_PROBES_SET : 0;
	pr->enable = enable;
	return netlat_ioctl(fd, NETLAT_IOC_PROBES, pr);
}

int netlat_hist(int fd, bool reset, struct netlat_hist *h,
		struct netlat_stage_hist *st, unsigned int nr_stages)
{
	memset(h, 0, sizeof(*h));
	h->size = sizeof(*h);
	h->flags = reset ? NETLAT_HIST_RESET : 0;
	h->nr_stages = st ? nr_stages : 0;
	h->stage_size = sizeof(*st);
	h->stages = (uintptr_t)st;
	return netlat_ioctl(fd, NETLAT_IOC_HIST, h);
}

static int netlat_flows_call(int fd, uint32_t flags,
			     struct netlat_flow_stats *e, unsigned int room,
			     uint64_t *nclosed, uint64_t *summed)
{
	struct netlat_flows a;
	int r;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.nr = e ? room : 0;
	a.entry_size = sizeof(*e);
	a.entries = (uintptr_t)e;
	r = netlat_ioctl(fd, NETLAT_IOC_FLOWS, &a);
	if (r < 0)
		return r;
	if (nclosed)
		*nclosed = a.closed;
	if (summed)
		*summed = a.rest;
	return (int)a.nr;
}

int netlat_flows(int fd, bool closed, struct netlat_flow_stats *e,
		 unsigned int room, uint64_t *nclosed)
{
	return netlat_flows_call(fd, closed ? NETLAT_FLOWS_CLOSED : 0, e, room,
				 nclosed, NULL);
}

int netlat_flows_bounded(int fd, bool closed, struct netlat_flow_stats *e,
			 unsigned int room, uint64_t *nclosed,
			 uint64_t *summed)
{
	if (!e || !room)
		return -EINVAL;
	return netlat_flows_call(fd, NETLAT_FLOWS_REST |
				 (closed ? NETLAT_FLOWS_CLOSED : 0), e, room,
				 nclosed, summed);
}

int netlat_set_config(int fd, const struct netlat_config *cfg)
{
	struct netlat_config c = *cfg;

	c.size = sizeof(c);
	c.reserved = 0;
	return netlat_ioctl(fd, NETLAT_IOC_SET_CONFIG, &c);
}
