// SPDX-License-Identifier: GPL-2.0
/* netlat probes --hooks (see hooks.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "libnetlat.h"
#include "cli.h"
#include "hooks.h"

static const char *hook_mechanism_name(unsigned int m)
{
	static const char *const names[] = {
		[NETLAT_HOOK_ABSENT] = "absent",
		[NETLAT_HOOK_TRACEPOINT] = "tracepoint",
		[NETLAT_HOOK_FTRACE] = "ftrace",
		[NETLAT_HOOK_KPROBE_FTRACE] = "kprobe-ftrace",
		[NETLAT_HOOK_KPROBE] = "kprobe",
		[NETLAT_HOOK_FPROBE] = "fprobe",
		[NETLAT_HOOK_WRAPPED] = "wrapped",
		[NETLAT_HOOK_KRETPROBE] = "kretprobe",
		[NETLAT_HOOK_DEFERRED] = "deferred",
	};

	return m < sizeof(names) / sizeof(names[0]) && names[m] ? names[m] : "?";
}

/* "xmit,dev": the groups of @mask by name (bits without one as bitN). */
static void groups_text(char *buf, size_t len, uint64_t mask)
{
	size_t at = 0;
	unsigned int b;

	buf[0] = 0;
	for (b = 0; b < 64 && at < len; b++) {
		const char *n = netlat_probe_name(1ULL << b);
		int w;

		if (!(mask & (1ULL << b)))
			continue;
		w = n ? snprintf(buf + at, len - at, "%s%s", at ? "," : "", n) :
			snprintf(buf + at, len - at, "%sbit%u", at ? "," : "", b);
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

int hooks_print(int fd, const char *path)
{
	struct netlat_hook *h = NULL;
	struct netlat_hooks a;
	unsigned int i, room = 0;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.nr = room;
		a.entry_size = sizeof(*h);
		a.entries = (uintptr_t)h;
		if (ioctl(fd, NETLAT_IOC_HOOKS, &a)) {
			free(h);
			return ioctl_failed(path, "HOOKS", errno);
		}
		if (a.nr <= room)
			break;
		free(h);
		room = a.nr;
		h = calloc(room, sizeof(*h));
		if (!h)
			return ioctl_failed(path, "HOOKS", ENOMEM);
	}
	printf("%-32s %-10s %-14s %-8s %s\n", "hook", "group", "mechanism",
	       "levels", "armed");
	for (i = 0; i < a.nr; i++) {
		const char *lv = !h[i].levels ? "all" :
			h[i].levels == 1u << NETLAT_LEVEL_EVENTS ? "events" :
			h[i].levels == 1u << NETLAT_LEVEL_PACKETS ? "packets" : "?";
		char g[64];

		groups_text(g, sizeof(g), h[i].group);
		printf("%-32.63s %-10s %-14s %-8s %s%s\n", h[i].name, g,
		       hook_mechanism_name(h[i].mechanism), lv,
		       h[i].flags & NETLAT_HOOK_ARMED ? "yes" : "no",
		       h[i].flags & NETLAT_HOOK_OPTIONAL ? " (optional)" : "");
	}
	free(h);
	return 0;
}
