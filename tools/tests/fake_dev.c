// SPDX-License-Identifier: GPL-2.0
/*
 * A fake /dev/netlat for host tests of the flight recorder commands,
 * loaded with LD_PRELOAD: opening NETLAT_FAKE_PATH gives a descriptor
 * whose ioctls, poll() and read() follow the uapi's snapshot, trigger,
 * filter and mode rules closely enough to drive "netlat flight",
 * "snapshot", "filters", "triggers" and examples/flight_recorder (mmap
 * of the snapshot too). It is a test double of the ABI,
 * not of the module: the VM tests check the module.
 *
 * Environment:
 *  FAKE_NETLAT_SNAPS   triggers that fire while armed (default 0): each
 *                      freezes a snapshot at the next poll() when none is
 *  FAKE_NETLAT_LOG     at exit, the final state is written there as
 *                      "armed=N rules=N mode=N running=N takes=N releases=N"
 *  FAKE_NETLAT_RULES   rules in force at start (port=1000+i), default 0
 *  FAKE_NETLAT_HIST    what NETLAT_IOC_HIST reports (default: all zero),
 *                      space-separated KEY=N: a counter's field
 *                      (NETLAT_HIST_COUNTERS()), flows, rx_flows, rK
 *                      (retrans_segs[K]), hS.B (stage S, bucket B), sumS
 *                      (stage S's sum_ns); count and max follow the
 *                      buckets; the level is then packets
 *  FAKE_NETLAT_NO_HIST a module without the packet level: HIST is ENOTTY
 *  FAKE_NETLAT_FAIL_OPENS=FIRST,LAST  opens FIRST to LAST (from 1) of the
 *                      device fail with ENOENT: the module went away and
 *                      came back
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/netlat.h>
#include "capture.h"

#define NETLAT_FAKE_PATH	"/dev/netlat-fake"
#define MAX_FDS			1024

static struct {
	bool init;
	unsigned int mode;
	bool running;
	struct netlat_triggers trig;
	struct netlat_filter_rule rules[NETLAT_FILTER_MAX_RULES];
	unsigned int nr_rules;
	unsigned int state;		/* NETLAT_SNAP_* */
	uint64_t id, taken, fired;
	unsigned int reason, trigger;
	int snaps_left;
	unsigned int takes, releases;
	unsigned char snap[512];
	size_t snap_len;
	struct netlat_hist hist;
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	bool packets_level;
	bool is_fake[MAX_FDS];
	bool reader[MAX_FDS];		/* NETLAT_SNAPSHOT_READ was issued */
	uint64_t read_id[MAX_FDS];
	size_t pos[MAX_FDS];
} fake;

/* FAKE_NETLAT_HIST: the counters and histograms HIST reports. */
static void hist_init(const char *spec)
{
	static const struct {
		const char *name;
		size_t off;
	} keys[] = {
#define HIST_KEY(field, NAME, metric, unit, help) \
		{ #field, offsetof(struct netlat_hist, field) },
		NETLAT_HIST_COUNTERS(HIST_KEY)
#undef HIST_KEY
		{ "flows", offsetof(struct netlat_hist, flows) },
		{ "rx_flows", offsetof(struct netlat_hist, rx_flows) },
	};
	char key[32];
	unsigned long long v;
	unsigned int a, b, i;
	int n;

	fake.packets_level = true;
	while (sscanf(spec, " %31[a-z_0-9.]=%llu%n", key, &v, &n) == 2) {
		spec += n;
		if (sscanf(key, "h%u.%u", &a, &b) == 2 && a < NETLAT_NR_STAGES &&
		    b < NETLAT_HIST_BUCKETS) {
			fake.st[a].bucket[b] = v;
			fake.st[a].count += v;
			if (v && b && fake.st[a].max_ns < (1ULL << (b - 1)))
				fake.st[a].max_ns = 1ULL << (b - 1);
		} else if (sscanf(key, "sum%u", &a) == 1 && a < NETLAT_NR_STAGES) {
			fake.st[a].sum_ns = v;
		} else if (sscanf(key, "r%u", &a) == 1 && a < 8) {
			fake.hist.retrans_segs[a] = v;
		} else {
			for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				if (!strcmp(key, keys[i].name))
					memcpy((char *)&fake.hist + keys[i].off, &v, sizeof(v));
		}
	}
}

static void fake_init(void)
{
	const char *s = getenv("FAKE_NETLAT_SNAPS");
	const char *r = getenv("FAKE_NETLAT_RULES");
	unsigned int i;

	if (fake.init)
		return;
	fake.init = true;
	fake.running = true;
	fake.snaps_left = s ? atoi(s) : 0;
	fake.nr_rules = r ? (unsigned int)atoi(r) : 0;
	if (getenv("FAKE_NETLAT_HIST"))
		hist_init(getenv("FAKE_NETLAT_HIST"));
	for (i = 0; i < fake.nr_rules && i < NETLAT_FILTER_MAX_RULES; i++) {
		fake.rules[i].groups = NETLAT_PROBE_ALL;
		fake.rules[i].match = NETLAT_MATCH_PORT;
		fake.rules[i].port = (uint16_t)(1000 + i);
	}
}

/*
 * A snapshot of one CPU holding one marker (the ring overwrote 41
 * records before it), id fake.id, frozen one second later per id (so
 * the file names differ).
 */
static void freeze(unsigned int reason, unsigned int trigger)
{
	struct capture c = { 0 };
	struct netlat_rec_snapshot *sn;
	struct netlat_rec_stream *st;

	fake.id++;
	fake.taken++;
	cap_stream(&c, 1);
	cap_snapshot(&c, fake.id, reason, trigger, trigger ? NETLAT_REC_MARKER : 0, 0, 41, 0);
	cap_snap_cpu(&c, 0, 42, 41, 1, 41);
	cap_marker(&c, 0, 41, TEST_MONO_NS - 1000, "X", 1);
	st = (void *)c.buf;
	sn = (void *)(st + 1);
	st->realtime_ns += fake.id * 1000000000ULL;
	sn->mode = fake.mode;
	sn->bytes = c.len;
	fake.snap_len = c.len < sizeof(fake.snap) ? c.len : sizeof(fake.snap);
	memcpy(fake.snap, c.buf, fake.snap_len);
	cap_free(&c);
	fake.state = NETLAT_SNAP_FROZEN;
}

static bool is_fake(int fd)
{
	return fd >= 0 && fd < MAX_FDS && fake.is_fake[fd];
}

static int fake_open(void)
{
	const char *fail_opens = getenv("FAKE_NETLAT_FAIL_OPENS");
	static unsigned int opens;
	unsigned int first, last;
	int fd;

	opens++;
	if (fail_opens && sscanf(fail_opens, "%u,%u", &first, &last) == 2 &&
	    opens >= first && opens <= last) {
		errno = ENOENT;
		return -1;
	}
	fake_init();
	fd = ((int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open"))("/dev/null",
									 O_RDONLY);
	if (fd >= 0 && fd < MAX_FDS) {
		fake.is_fake[fd] = true;
		fake.reader[fd] = false;
		fake.pos[fd] = 0;
	}
	return fd;
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	va_list ap;
	mode_t mode;

	if (!strcmp(path, NETLAT_FAKE_PATH))
		return fake_open();
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return real(path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

/* What open() becomes under _FORTIFY_SOURCE (Debian's build flags). */
int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

int close(int fd)
{
	static int (*real)(int);

	if (is_fake(fd))
		fake.is_fake[fd] = false;
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "close");
	return real(fd);
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static int do_snapshot(int fd, struct netlat_snapshot *s)
{
	if (s->flags & NETLAT_SNAPSHOT_RELEASE) {
		fake.releases++;
		fake.state = NETLAT_SNAP_EMPTY;
	}
	if (s->flags & NETLAT_SNAPSHOT_TAKE) {
		if (fake.state != NETLAT_SNAP_EMPTY)
			return fail(EBUSY);
		fake.takes++;
		freeze(NETLAT_SNAP_MANUAL, 0);
	}
	if (s->flags & NETLAT_SNAPSHOT_READ) {
		if (fake.state != NETLAT_SNAP_FROZEN)
			return fail(ENODATA);
		fake.reader[fd] = true;
		fake.read_id[fd] = fake.id;
		fake.pos[fd] = 0;
	}
	s->state = fake.state;
	s->bytes = fake.state == NETLAT_SNAP_FROZEN ? fake.snap_len : 0;
	s->capacity = sizeof(fake.snap);
	s->id = fake.state == NETLAT_SNAP_FROZEN ? fake.id : 0;
	s->taken = fake.taken;
	return 0;
}

static int do_filters(struct netlat_filters *f)
{
	struct netlat_filter_rule *rules = (void *)(uintptr_t)f->rules;

	if (f->rule_size != sizeof(*rules))
		return fail(EINVAL);
	if (f->flags & NETLAT_FILTERS_SET) {
		if (f->nr_rules > NETLAT_FILTER_MAX_RULES)
			return fail(EINVAL);
		memcpy(fake.rules, rules, f->nr_rules * sizeof(*rules));
		fake.nr_rules = f->nr_rules;
		return 0;
	}
	memcpy(rules, fake.rules,
	       (f->nr_rules < fake.nr_rules ? f->nr_rules : fake.nr_rules) * sizeof(*rules));
	f->nr_rules = fake.nr_rules;
	return 0;
}

static int do_hist(struct netlat_hist *h)
{
	struct netlat_stage_hist *st = (void *)(uintptr_t)h->stages;
	unsigned int n = h->nr_stages < NETLAT_NR_STAGES ? h->nr_stages : NETLAT_NR_STAGES;
	struct netlat_hist in = *h;

	if (getenv("FAKE_NETLAT_NO_HIST"))
		return fail(ENOTTY);
	if (in.stage_size != sizeof(*st))
		return fail(EINVAL);
	*h = fake.hist;
	h->size = in.size;
	h->flags = in.flags;
	h->stage_size = in.stage_size;
	h->stages = in.stages;
	h->nr_stages = NETLAT_NR_STAGES;
	memcpy(st, fake.st, n * sizeof(*st));
	return 0;
}

static int do_ioctl(int fd, unsigned long req, void *arg)
{
	switch (req) {
	case NETLAT_IOC_GET_INFO: {
		struct netlat_info *i = arg;

		i->abi_version = NETLAT_ABI_VERSION;
		i->nr_cpus = 1;
		i->ring_bytes = 4096;
		i->state = fake.running ? NETLAT_STATE_RUNNING : 0;
		i->mode = fake.mode;
		i->level = fake.packets_level ? NETLAT_LEVEL_PACKETS : NETLAT_LEVEL_EVENTS;
		i->mem_bytes = 8192;
		i->pkt_mem_bytes = fake.packets_level ? 819200 : 0;
		i->pkt_flows = fake.packets_level ? 256 : 0;
		return 0;
	}
	case NETLAT_IOC_GET_CPU_STATS:
		((struct netlat_cpu_stats *)arg)->filtered = 7;
		return 0;
	case NETLAT_IOC_START:
	case NETLAT_IOC_STOP:
		fake.running = req == NETLAT_IOC_START;
		return 0;
	case NETLAT_IOC_SET_CONFIG: {
		struct netlat_config *c = arg;

		if (c->flags & NETLAT_CONFIG_MODE) {
			if (fake.running)
				return fail(EBUSY);
			fake.mode = c->mode;
		}
		return 0;
	}
	case NETLAT_IOC_SNAPSHOT:
		return do_snapshot(fd, arg);
	case NETLAT_IOC_TRIGGERS: {
		struct netlat_triggers *t = arg;

		if (t->flags & NETLAT_TRIGGERS_SET)
			fake.trig = *t;
		*t = fake.trig;
		t->fired = fake.fired;
		return 0;
	}
	case NETLAT_IOC_FILTERS:
		return do_filters(arg);
	case NETLAT_IOC_HIST:
		return do_hist(arg);
	case NETLAT_IOC_PROBES: {
		struct netlat_probes *p = arg;

		if (p->flags)
			return fail(EPERM);	/* the fake only reports */
		p->available = NETLAT_PROBE_ALL & ~NETLAT_PROBE_VIRTIO_ALL;
		p->enabled = NETLAT_PROBE_TCP_XMIT | NETLAT_PROBE_TCP_ACK;
		p->partial = NETLAT_PROBE_TCP_DEV;
		p->deferred = NETLAT_PROBE_VIRTIO_ALL;
		p->nmissed = 3;
		memset(p->group_missed, 0, sizeof(p->group_missed));
		p->group_missed[__builtin_ctzll(NETLAT_PROBE_TCP_ACK)] = 2;
		p->group_missed[__builtin_ctzll(NETLAT_PROBE_TCP_XMIT)] = 1;
		return 0;
	}
	}
	return fail(ENOTTY);
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (is_fake(fd))
		return do_ioctl(fd, req, arg);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}

/*
 * A trigger fires at a poll() while armed and nothing is frozen. glibc
 * declares the array write-only (access attribute); it is read here.
 */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	static int (*real)(struct pollfd *, nfds_t, int);

	if (n == 1 && is_fake(fds[0].fd)) {
		if (fake.state == NETLAT_SNAP_EMPTY && fake.trig.armed && fake.snaps_left > 0) {
			fake.snaps_left--;
			fake.fired++;
			freeze(NETLAT_SNAP_TRIGGER, fake.trig.armed & -fake.trig.armed);
		}
		/* A live reader: the device is empty, it reads end of file. */
		fds[0].revents = fake.state == NETLAT_SNAP_FROZEN ? POLLPRI : 0;
		fds[0].revents |= fds[0].events & POLLIN;
		if (fds[0].revents)
			return 1;
		if (timeout > 0)
			usleep((useconds_t)timeout * 1000);
		return 0;
	}
	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	return real(fds, n, timeout);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fds_len);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fds_len)
{
	(void)fds_len;
	return poll(fds, n, timeout);
}

ssize_t read(int fd, void *buf, size_t len)
{
	static ssize_t (*real)(int, void *, size_t);
	size_t n;

	if (is_fake(fd) && fake.reader[fd]) {
		if (fake.state != NETLAT_SNAP_FROZEN || fake.read_id[fd] != fake.id)
			return fail(ENODATA);
		/* Odd pieces: a byte stream, not records. */
		n = fake.snap_len - fake.pos[fd];
		if (n > len)
			n = len;
		if (n > 100)
			n = 100;
		memcpy(buf, fake.snap + fake.pos[fd], n);
		fake.pos[fd] += n;
		return (ssize_t)n;
	}
	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	return real(fd, buf, len);
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buf_len);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buf_len)
{
	(void)buf_len;
	return read(fd, buf, len);
}

/* The snapshot area: a read-only copy of the frozen stream. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	void *p;

	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	if (!is_fake(fd))
		return real(addr, len, prot, flags, fd, off);
	if ((uint64_t)off != NETLAT_MMAP_OFFSET(0, NETLAT_MMAP_SNAPSHOT) ||
	    len > sizeof(fake.snap) || (prot & PROT_WRITE)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (fake.state != NETLAT_SNAP_FROZEN) {
		errno = ENODATA;
		return MAP_FAILED;
	}
	p = real(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	memcpy(p, fake.snap, len < fake.snap_len ? len : fake.snap_len);
	mprotect(p, len, PROT_READ);
	return p;
}

__attribute__((destructor)) static void fake_log(void)
{
	const char *path = getenv("FAKE_NETLAT_LOG");
	FILE *f;

	if (!path || !fake.init)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "armed=%u rules=%u mode=%u running=%d takes=%u releases=%u state=%u\n",
		fake.trig.armed, fake.nr_rules, fake.mode, fake.running, fake.takes,
		fake.releases, fake.state);
	fclose(f);
}
