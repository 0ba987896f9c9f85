// SPDX-License-Identifier: GPL-2.0
/*
 * The recording host's notes: who it is (hostname, boot id, addresses)
 * and its clocks once a second, so that a reader joining two hosts'
 * captures knows whether they share a clock and sees a step or a slew.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "notes.h"

static int add(char *text, size_t room, int len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Append to @text (@len used of @room): the new length, unchanged if it does not fit. */
static int add(char *text, size_t room, int len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text + len, room - len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room - len) {
		text[len] = 0;
		return len;
	}
	return len + n;
}

size_t note_host(void *buf, size_t room)
{
	char text[NETLAT_REC_MAX_SIZE], host[65] = "", boot[40] = "", a[INET6_ADDRSTRLEN];
	struct ifaddrs *ifa = NULL, *i;
	int len = 0;
	FILE *f;

	gethostname(host, sizeof(host) - 1);
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = 0;
		boot[strcspn(boot, "\n")] = 0;
		fclose(f);
	}
	len = add(text, sizeof(text), len, "hostname %s\nboot_id %s\n", host, boot);
	if (!getifaddrs(&ifa)) {
		for (i = ifa; i; i = i->ifa_next) {
			const void *p;

			if (!i->ifa_addr || i->ifa_flags & IFF_LOOPBACK)
				continue;
			if (i->ifa_addr->sa_family == AF_INET)
				p = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
			else if (i->ifa_addr->sa_family == AF_INET6)
				p = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
			else
				continue;
			if (inet_ntop(i->ifa_addr->sa_family, p, a, sizeof(a)))
				len = add(text, sizeof(text), len, "addr %s\n", a);
		}
		freeifaddrs(ifa);
	}
	return netlat_note_text(buf, room, NETLAT_NOTE_HOST, text);
}

static uint64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

size_t note_clock(void *buf, size_t room)
{
	char text[NETLAT_REC_MAX_SIZE];
	struct timex tx = { .modes = 0 };
	uint64_t mono = read_ns(CLOCK_MONOTONIC), real = read_ns(CLOCK_REALTIME);
	uint64_t raw = read_ns(CLOCK_MONOTONIC_RAW);
	size_t size;
	int len;

	len = snprintf(text, sizeof(text), "monotonic %llu\nrealtime %llu\nmonotonic_raw %llu\n",
		       (unsigned long long)mono, (unsigned long long)real,
		       (unsigned long long)raw);
	if (adjtimex(&tx) >= 0)
		add(text, sizeof(text), len, "status %d\nfreq %ld\ntick %ld\nuser_hz %ld\n"
		    "offset %ld\nmaxerror %ld\nesterror %ld\n", tx.status, tx.freq, tx.tick,
		    sysconf(_SC_CLK_TCK), tx.offset, tx.maxerror, tx.esterror);
	size = netlat_note_text(buf, room, NETLAT_NOTE_CLOCK, text);
	if (size)
		((struct netlat_rec_hdr *)buf)->ts_ns = mono;
	return size;
}

/* The value of "@key N" in @n's text, into *@v: true if there. */
static bool note_value(const struct netlat_rec_note *n, const char *key, long long *v)
{
	char text[NETLAT_REC_MAX_SIZE + 1], *line;
	size_t len = n->len < sizeof(text) - 1 ? n->len : sizeof(text) - 1, klen = strlen(key);

	memcpy(text, n->text, len);
	text[len] = 0;
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return sscanf(line + klen + 1, "%lld", v) == 1;
	return false;
}

/* The word after "@key " in @n's text into @out (@size bytes). */
static void note_word(const struct netlat_rec_note *n, const char *key, char *out, size_t size)
{
	char text[NETLAT_REC_MAX_SIZE + 1], *line;
	size_t len = n->len < sizeof(text) - 1 ? n->len : sizeof(text) - 1, klen = strlen(key);

	memcpy(text, n->text, len);
	text[len] = 0;
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			size_t w = strcspn(line + klen + 1, "\n");

			if (w >= size)
				w = size - 1;
			memcpy(out, line + klen + 1, w);
			out[w] = 0;
			return;
		}
}

void notes_take(struct host_notes *h, const struct netlat_rec_note *n)
{
	long long mono, raw, real, v, hz;

	if (n->version != 1)
		return;
	if (n->kind == NETLAT_NOTE_HOST) {
		note_word(n, "hostname", h->hostname, sizeof(h->hostname));
		note_word(n, "boot_id", h->boot_id, sizeof(h->boot_id));
		return;
	}
	if (n->kind != NETLAT_NOTE_CLOCK || !note_value(n, "monotonic", &mono) ||
	    !note_value(n, "monotonic_raw", &raw) || !note_value(n, "realtime", &real))
		return;
	if (h->clocks) {
		int64_t gap = real - mono, d = gap - h->last_wall_gap;

		/* a slew moves the gap by microseconds a second; a step by more */
		if (d > 1000000 || d < -1000000)
			h->realtime_steps++;
	} else {
		h->first_mono = mono;
		h->first_raw = raw;
	}
	h->last_wall_gap = real - mono;
	h->last_mono = mono;
	h->last_raw = raw;
	h->clocks++;
	if (note_value(n, "freq", &v)) {
		if (!h->have_freq)
			h->first_freq = v;
		h->freq = v;
		h->have_freq = true;
	}
	if (note_value(n, "status", &v))
		h->status = (unsigned int)v;
	/* the tick's share of the rate: tick us per 1/USER_HZ s */
	if (note_value(n, "tick", &v) && note_value(n, "user_hz", &hz) && hz > 0)
		h->tick_ppm = (double)v * hz - 1e6;
}

double notes_slew_ppm(const struct host_notes *h)
{
	if (h->clocks < 2 || h->last_raw <= h->first_raw)
		return 0;
	return ((double)(h->last_mono - h->first_mono) / (double)(h->last_raw - h->first_raw) - 1) * 1e6;
}
