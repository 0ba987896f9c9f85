/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by netlat_test and netlat_bench: device access, the
 * size-first ioctls, record validation and the two ways of consuming the
 * rings (read() and the mmap protocol of <linux/netlat.h>).
 *
 * Nothing here depends on kselftest_harness.h: functions return 0 or a
 * negative errno, and record checks explain a failure in nl_log.why.
 * Include this header first: it defines _GNU_SOURCE.
 */
#ifndef NETLAT_UTIL_H
#define NETLAT_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <stddef.h>
#include <linux/netlat.h>

#include "netlat_layout.h"

#define NL_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NL_ALIGN(x, a)		(((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))
#define NL_MARKER_SIZE(len)	NL_ALIGN((size_t)(len) + \
				 sizeof(struct netlat_rec_marker), \
				 (size_t)NETLAT_REC_ALIGN)
#define NL_CONFIG_ALL		(NETLAT_CONFIG_RING_BYTES | \
				 NETLAT_CONFIG_WATERMARK | \
				 NETLAT_CONFIG_FLUSH_MS)

/* ---- time and CPUs ------------------------------------------------------ */

static inline uint64_t nl_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t nl_mono_ns(void)
{
	return nl_clock_ns(CLOCK_MONOTONIC);
}

static inline void nl_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Whether thread @tid of this process sleeps (state S in its stat). */
static inline bool nl_thread_sleeps(pid_t tid)
{
	char path[64], line[512], *p;
	bool s = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	/* "tid (comm) S ...": the comm may hold anything but the last ')' */
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		s = p[1] == ' ' && p[2] == 'S';
	fclose(f);
	return s;
}

/*
 * Wait up to @timeout_ms for thread *@tid of this process to sleep, e.g.
 * blocked in recv(); a thread that has not started yet (*@tid 0) is
 * waited for too.
 */
static inline bool nl_wait_sleeping(const volatile pid_t *tid,
				    unsigned int timeout_ms)
{
	unsigned int waited;

	for (waited = 0; waited <= timeout_ms; waited++) {
		if (*tid && nl_thread_sleeps(*tid))
			return true;
		nl_sleep_ms(1);
	}
	return false;
}

static inline int nl_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @n figures (sorts them): benchmarks report medians. */
static inline double nl_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), nl_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Median of the rounds' ratios @v[i] / @base[i] (neither array is
 * sorted): a round's modes run back to back, so a drift of the machine's
 * speed over the run (TCG) cancels out of each ratio.
 */
static inline double nl_median_ratio(const double *v, const double *base,
				     unsigned int n)
{
	double r[64];
	unsigned int i;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		r[i] = base[i] > 0 ? v[i] / base[i] : 0;
	return n ? nl_median(r, n) : 0;
}

/*
 * Whether the kprobe or kretprobe (@type 'k' or 'r') of netlat on @sym is
 * armed, as debugfs kprobes/list says: 1 armed, 0 registered but
 * disabled, -1 none or the list unreadable.
 */
static inline int nl_kprobe_listed(const char *sym, char type)
{
	FILE *f = fopen("/sys/kernel/debug/kprobes/list", "r");
	char line[512], where[256];
	size_t n = strlen(sym);
	int armed = -1;
	char t;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %c %255s", &t, where) != 2 || t != type ||
		    strncmp(where, sym, n) || where[n] != '+')
			continue;
		armed = !strstr(line, "[DISABLED]");
		break;
	}
	if (f)
		fclose(f);
	return armed;
}

/*
 * Whether a netlat hook of @type ('k' at entry, 'r' with its return) is
 * armed on @sym, as the kernel's own lists say: 1 armed, 0 registered
 * but not armed, -1 none or the lists unreadable. The registry registers
 * each kprobe and kretprobe (debugfs kprobes/list), and arms it as such
 * or, on a site ftrace owns, hooks that site through ftrace instead,
 * the kprobe left disabled: ftrace's enabled_functions then lists the
 * site, with netlat's entry callback for 'k' (fentry.c), another (an
 * fprobe's) for 'r'.
 */
static inline int nl_kprobe_armed(const char *sym, char type)
{
	int armed = nl_kprobe_listed(sym, type);
	size_t n = strlen(sym);
	char line[512];
	FILE *f;

	if (armed)
		return armed;
	f = fopen("/sys/kernel/debug/tracing/enabled_functions", "r");
	while (f && fgets(line, sizeof(line), f)) {
		bool ours = strstr(line, "netlat_fentry_func");

		if (strncmp(line, sym, n) || (line[n] != ' ' && line[n] != '\t'))
			continue;
		if (ours == (type == 'k'))
			armed = 1;
	}
	if (f)
		fclose(f);
	return armed;
}

/* Does the kernel say its kprobe on @sym sits on the ftrace site? */
static inline bool nl_kprobe_on_ftrace(const char *sym)
{
	FILE *f = fopen("/sys/kernel/debug/kprobes/list", "r");
	char line[512], where[256];
	size_t n = strlen(sym);
	bool on = false;
	char t;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %c %255s", &t, where) != 2 || t != 'k' ||
		    strncmp(where, sym, n) || where[n] != '+')
			continue;
		on = strstr(line, "[FTRACE]");
		break;
	}
	if (f)
		fclose(f);
	return on;
}

/*
 * Whether the kernel's own lists say hook @k (NETLAT_IOC_HOOKS) is armed:
 * 1, 0, -1 (not there or unreadable); -2 for a hook they do not list (a
 * tracepoint, one absent or deferred). A kprobe or kretprobe is armed as
 * kprobes/list alone says; an ftrace entry hook, an fprobe or a wrapped
 * call as nl_kprobe_armed() reads ftrace's list. With @kprobes_only, an
 * fprobe or a wrapped call is not asked (-2): ftrace lists a site once
 * for all its users, and only netlat's entry callback is named there.
 */
static inline int nl_hook_listed_armed(const struct netlat_hook *k,
				       bool kprobes_only)
{
	switch (k->mechanism) {
	case NETLAT_HOOK_KPROBE:
	case NETLAT_HOOK_KPROBE_FTRACE:
		return nl_kprobe_listed(k->name, 'k');
	case NETLAT_HOOK_KRETPROBE:
		return nl_kprobe_listed(k->name, 'r');
	case NETLAT_HOOK_FTRACE:
		return nl_kprobe_armed(k->name, 'k');
	case NETLAT_HOOK_FPROBE:
	case NETLAT_HOOK_WRAPPED:
		return kprobes_only ? -2 : nl_kprobe_armed(k->name, 'r');
	}
	return -2;
}

/* Bind the calling thread to one CPU. */
static inline int nl_pin_thread(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static inline int nl_set_thread_mask(const cpu_set_t *set)
{
	return sched_setaffinity(0, sizeof(*set), set) ? -errno : 0;
}

/* CPUs the calling thread may run on, ascending; returns how many. */
static inline int nl_usable_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/* ---- device and ioctls -------------------------------------------------- */

static inline int nl_open(int extra_flags)
{
	return open(NETLAT_DEVICE_PATH, O_RDWR | O_CLOEXEC | extra_flags);
}

/* ioctl() returning 0 or -errno; arg is passed untouched. */
static inline int nl_ioctl_raw(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/* ioctl() on a size-first argument: stores size in its first __u32. */
static inline int nl_ioctl(int fd, unsigned long cmd, void *arg, uint32_t size)
{
	memcpy(arg, &size, sizeof(size));
	return nl_ioctl_raw(fd, cmd, arg);
}

static inline int nl_get_info(int fd, struct netlat_info *info)
{
	memset(info, 0, sizeof(*info));
	return nl_ioctl(fd, NETLAT_IOC_GET_INFO, info, sizeof(*info));
}

/* The device's info in *@info, for a test's setup: 0, or -errno and the
 * reason (a skip) in @why. */
static inline int nl_device_info(struct netlat_info *info, char *why,
				 size_t len)
{
	int fd = nl_open(0);
	int ret = fd < 0 ? -errno : nl_get_info(fd, info);

	if (fd >= 0)
		close(fd);
	if (ret)
		snprintf(why, len, "%s: %s", NETLAT_DEVICE_PATH,
			 strerror(-ret));
	return ret;
}

static inline int nl_get_stats(int fd, unsigned int cpu,
			       struct netlat_cpu_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cpu = cpu;
	return nl_ioctl(fd, NETLAT_IOC_GET_CPU_STATS, st, sizeof(*st));
}

static inline int nl_set_config(int fd, uint32_t flags, uint64_t ring_bytes,
				uint32_t watermark, uint32_t flush_ms)
{
	struct netlat_config cfg = {
		.flags = flags,
		.ring_bytes = ring_bytes,
		.watermark = watermark,
		.flush_ms = flush_ms,
	};

	return nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
}

/* NETLAT_IOC_START, _STOP or _RESET. */
static inline int nl_control(int fd, unsigned long cmd)
{
	struct netlat_control ctl = { 0 };

	return nl_ioctl(fd, cmd, &ctl, sizeof(ctl));
}

/*
 * A known state: stop, apply ring/watermark/flush, reset (sequences and
 * counters at 0, rings empty) and start again if asked. Needs no mapping.
 */
static inline int nl_reconfigure(int fd, uint64_t ring_bytes,
				 uint32_t watermark, uint32_t flush_ms,
				 bool start)
{
	int ret;

	ret = nl_control(fd, NETLAT_IOC_STOP);
	if (!ret)
		ret = nl_set_config(fd, NL_CONFIG_ALL, ring_bytes, watermark,
				    flush_ms);
	if (!ret)
		ret = nl_control(fd, NETLAT_IOC_RESET);
	if (!ret && start)
		ret = nl_control(fd, NETLAT_IOC_START);
	return ret;
}

/* The record level (NETLAT_LEVEL_*) and packet records from @slow_ns. */
static inline int nl_set_level(int fd, uint32_t level, uint64_t slow_ns)
{
	struct netlat_config cfg = {
		.flags = NETLAT_CONFIG_LEVEL | NETLAT_CONFIG_SLOW_NS,
		.level = level,
		.slow_ns = slow_ns,
	};

	return nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
}

/*
 * The lane's debug kernel (KASAN, lockdep, kmemleak): the only one with
 * kmemleak, which /init mounts debugfs for. Far slower under TCG.
 */
static inline bool nl_debug_kernel(void)
{
	return !access("/sys/kernel/debug/kmemleak", F_OK);
}

/* A record of each pure ACK sent (netlat_config.acks): 1 on, 0 off. */
static inline int nl_set_acks(int fd, uint32_t acks)
{
	struct netlat_config cfg = {
		.flags = NETLAT_CONFIG_ACKS,
		.acks = acks,
	};

	return nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
}

/* Sampling of the sent packets (netlat_config.sample); 0: every one. */
static inline int nl_set_sample(int fd, uint32_t sample)
{
	struct netlat_config cfg = {
		.flags = NETLAT_CONFIG_SAMPLE,
		.sample = sample,
	};

	return nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
}

/* The packet tables' memory budget (netlat_config.table_bytes). */
static inline int nl_set_table_bytes(int fd, uint64_t bytes)
{
	struct netlat_config cfg = {
		.flags = NETLAT_CONFIG_TABLE_BYTES,
		.table_bytes = bytes,
	};

	return nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
}

/* write() of one marker: the byte count or -errno. */
static inline ssize_t nl_write(int fd, const void *buf, size_t len)
{
	ssize_t n = write(fd, buf, len);

	return n < 0 ? -errno : n;
}

/* ---- loading and unloading the module ---------------------------------- */

/* The netlat.ko to load again: $NETLAT_KO, default /netlat.ko. */
static inline const char *nl_ko_path(void)
{
	const char *p = getenv("NETLAT_KO");

	return p && *p ? p : "/netlat.ko";
}

/* insmod nl_ko_path() with module parameters @params ("" for none). */
static inline int nl_load_netlat(const char *params)
{
	int fd, ret;

	fd = open(nl_ko_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* rmmod netlat, failing at once (-EWOULDBLOCK) while it is in use. */
static inline int nl_unload_netlat(void)
{
	return syscall(SYS_delete_module, "netlat", O_NONBLOCK) ? -errno : 0;
}

/*
 * Every probe group off, if the device is there and this open may change
 * them: an armed ftrace hook holds the module (rmmod: in use).
 */
static inline void nl_disarm(void)
{
	struct netlat_probes pr = {
		.size = sizeof(pr), .flags = NETLAT_PROBES_SET,
	};
	int fd = open(NETLAT_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	ioctl(fd, NETLAT_IOC_PROBES, &pr);
	close(fd);
}

/*
 * The kernel's reference count of module @name (/sys/module/NAME/refcnt):
 * open files, and netlat's own ftrace users. -errno if unreadable.
 */
static inline long nl_module_refcnt(const char *name)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

/*
 * rmmod netlat, its probes disarmed first, trying for up to 2 s while a
 * last user lets go.
 */
static inline int nl_unload_wait(void)
{
	int i, ret = -EBUSY;

	nl_disarm();
	for (i = 0; i < 100 && ret; i++) {
		ret = nl_unload_netlat();
		if (ret)
			nl_sleep_ms(20);
	}
	return ret;
}

/* open() of the device just loaded, once its node is there (2 s). */
static inline int nl_open_wait(void)
{
	int i, fd = -1;

	for (i = 0; i < 100 && (fd = nl_open(O_NONBLOCK)) < 0; i++)
		nl_sleep_ms(20);
	return fd;
}

/* Wait up to @ms for @path to exist (@present) or not. */
static inline bool nl_wait_path(const char *path, bool present,
				unsigned int ms)
{
	while (ms--) {
		if (!access(path, F_OK) == present)
			return true;
		nl_sleep_ms(1);
	}
	return !access(path, F_OK) == present;
}

/* @s into the file @path (procfs, debugfs, tracefs), opened O_WRONLY and
 * @flags: 0, or -errno (-EIO for a short write). */
static inline int nl_put_str(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(s))
		ret = -EIO;
	close(fd);
	return ret;
}

/* The first @len - 1 bytes of @path into @buf, NUL-ended: the bytes read,
 * or -errno. */
static inline ssize_t nl_get_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while (got < (ssize_t)len - 1 &&
	       (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return got;
}

/* Deterministic payload bytes, zeros and 0xff included. */
static inline void nl_fill_pattern(void *buf, size_t len, uint32_t seed)
{
	unsigned char *p = buf;
	uint32_t x = seed * 2654435761u + 12345;
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (i % 7 == 3) ? 0 : (i % 11 == 5) ? 0xff :
		       (unsigned char)(x >> 16);
	}
}

/* ---- record validation -------------------------------------------------- */

static inline int nl_fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int nl_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Check one record at @p with @avail readable bytes against the header's
 * rules; 0 if valid, else -1 and the reason in @why.
 */
/* Size of a TCP record type's struct, 0 for other types. */
static inline size_t nl_tcp_rec_size(unsigned int type)
{
	switch (type) {
	case NETLAT_REC_TCP_SENDMSG: return sizeof(struct netlat_rec_tcp_sendmsg);
	case NETLAT_REC_TCP_PUSH: return sizeof(struct netlat_rec_tcp_push);
	case NETLAT_REC_TCP_SKB: return sizeof(struct netlat_rec_tcp_skb);
	case NETLAT_REC_TCP_XMIT: return sizeof(struct netlat_rec_tcp_xmit);
	case NETLAT_REC_TCP_RETRANS: return sizeof(struct netlat_rec_tcp_retrans);
	case NETLAT_REC_TCP_ACK: return sizeof(struct netlat_rec_tcp_ack);
	case NETLAT_REC_TCP_DEV: return sizeof(struct netlat_rec_tcp_dev);
	case NETLAT_REC_TCP_ACK_OUT: return sizeof(struct netlat_rec_tcp_ack_out);
	}
	return 0;
}

/* Size of an RX record type's struct, 0 for other types. */
static inline size_t nl_rx_rec_size(unsigned int type)
{
	switch (type) {
	case NETLAT_REC_RX_NETIF: return sizeof(struct netlat_rec_rx_netif);
	case NETLAT_REC_RX_TRANSPORT:
	case NETLAT_REC_RX_QUEUE: return sizeof(struct netlat_rec_rx_skb);
	case NETLAT_REC_RX_COPY: return sizeof(struct netlat_rec_rx_copy);
	case NETLAT_REC_RX_DROP: return sizeof(struct netlat_rec_rx_drop);
	case NETLAT_REC_RX_WAKE: return sizeof(struct netlat_rec_rx_wake);
	case NETLAT_REC_RX_PKT: return NETLAT_REC_RX_PKT_SIZE_VER0;
	}
	return 0;
}

/*
 * NETLAT_IOC_HIST into *@h and every stage's histogram into @st (NULL:
 * the counters only).
 */
static inline int nl_get_hist(int fd, struct netlat_hist *h,
			      struct netlat_stage_hist *st)
{
	memset(h, 0, sizeof(*h));
	if (st) {
		memset(st, 0, NETLAT_NR_STAGES * sizeof(*st));
		h->nr_stages = NETLAT_NR_STAGES;
		h->stage_size = sizeof(*st);
		h->stages = (uintptr_t)st;
	}
	return nl_ioctl(fd, NETLAT_IOC_HIST, h, sizeof(*h));
}

/* The histogram bucket of a duration, as the kernel counts it. */
static inline unsigned int nl_hist_bucket(uint64_t ns)
{
	unsigned int b = ns ? 64 - __builtin_clzll(ns) : 0;

	return b < NETLAT_HIST_BUCKETS ? b : NETLAT_HIST_BUCKETS - 1;
}

/* NETLAT_IOC_PROBES: report (set=false) or set the enabled groups. */
static inline int nl_probes(int fd, bool set, uint64_t enable,
			    struct netlat_probes *out)
{
	struct netlat_probes pr = {
		.flags = set ? NETLAT_PROBES_SET : 0,
		.enable = enable,
	};
	int ret = nl_ioctl(fd, NETLAT_IOC_PROBES, &pr, sizeof(pr));

	if (!ret && out)
		*out = pr;
	return ret;
}

/*
 * The armed hooks that are netlat's own ftrace users (an ftrace callback,
 * an fprobe, a wrapped call: each holds the module while registered),
 * as NETLAT_IOC_HOOKS says: how many, their groups into *@groups; or
 * -errno.
 */
static inline int nl_ftrace_hooks_armed(int fd, uint64_t *groups)
{
	static struct netlat_hook h[128];
	struct netlat_hooks a = {
		.nr = 128, .entry_size = sizeof(h[0]),
		.entries = (uintptr_t)h,
	};
	unsigned int i;
	int ret, n = 0;

	*groups = 0;
	ret = nl_ioctl(fd, NETLAT_IOC_HOOKS, &a, sizeof(a));
	if (ret)
		return ret;
	for (i = 0; i < a.nr && i < 128; i++) {
		if (!(h[i].flags & NETLAT_HOOK_ARMED))
			continue;
		if (h[i].mechanism != NETLAT_HOOK_FTRACE &&
		    h[i].mechanism != NETLAT_HOOK_FPROBE &&
		    h[i].mechanism != NETLAT_HOOK_WRAPPED)
			continue;
		*groups |= h[i].group;
		n++;
	}
	return n;
}

/* After a test: probes off, ring settings of @def, tracing on. */
static inline int nl_restore(int fd, const struct netlat_info *def)
{
	int ret = nl_probes(fd, true, 0, NULL);

	return ret ? ret : nl_reconfigure(fd, def->ring_bytes, def->watermark,
					  def->flush_ms, true);
}

static inline int nl_check_rec(const void *p, size_t avail,
			       unsigned int nr_cpus, char *why, size_t wlen)
{
	const struct netlat_rec_hdr *h = p;
	const struct netlat_rec_marker *m = p;
	const struct netlat_rec_lost *l = p;
	const struct netlat_rec_stream *s = p;
	size_t i;

	if (avail < sizeof(*h))
		return nl_fail(why, wlen, "%zu bytes: no room for a header",
			       avail);
	if (h->magic != NETLAT_REC_MAGIC)
		return nl_fail(why, wlen, "bad magic 0x%x (type %u size %u)",
			       h->magic, h->type, h->size);
	if (h->version != NETLAT_ABI_VERSION)
		return nl_fail(why, wlen, "version %u", h->version);
	if (h->size < sizeof(*h) || h->size > NETLAT_REC_MAX_SIZE ||
	    h->size % NETLAT_REC_ALIGN)
		return nl_fail(why, wlen, "bad size %u (type %u)", h->size,
			       h->type);
	if (h->size > avail)
		return nl_fail(why, wlen, "size %u > %zu bytes available",
			       h->size, avail);
	if (h->cpu >= nr_cpus)
		return nl_fail(why, wlen, "cpu %u >= nr_cpus %u", h->cpu,
			       nr_cpus);

	switch (h->type) {
	case NETLAT_REC_STREAM:
		if (h->size < sizeof(*s))
			return nl_fail(why, wlen, "STREAM size %u", h->size);
		if (h->seq != 0)
			return nl_fail(why, wlen, "STREAM seq %llu",
				       (unsigned long long)h->seq);
		break;
	case NETLAT_REC_LOST:
		if (h->size < sizeof(*l))
			return nl_fail(why, wlen, "LOST size %u", h->size);
		if (l->count == 0)
			return nl_fail(why, wlen, "LOST count 0 (seq %llu)",
				       (unsigned long long)h->seq);
		if (l->first_seq + l->count != h->seq)
			return nl_fail(why, wlen,
				       "LOST seq %llu != first_seq %llu + count %llu",
				       (unsigned long long)h->seq,
				       (unsigned long long)l->first_seq,
				       (unsigned long long)l->count);
		break;
	case NETLAT_REC_MARKER:
		if (h->size < sizeof(*m))
			return nl_fail(why, wlen, "MARKER size %u", h->size);
		if (m->len < 1 || m->len > NETLAT_MARKER_MAX)
			return nl_fail(why, wlen, "MARKER len %u", m->len);
		if (h->size != NL_MARKER_SIZE(m->len))
			return nl_fail(why, wlen, "MARKER len %u in size %u",
				       m->len, h->size);
		if (m->reserved)
			return nl_fail(why, wlen, "MARKER reserved %u",
				       m->reserved);
		for (i = m->len; i < h->size - sizeof(*m); i++)
			if (m->data[i])
				return nl_fail(why, wlen,
					       "MARKER padding byte %zu is 0x%x",
					       i, m->data[i]);
		break;
	case NETLAT_REC_TCP_SENDMSG:
	case NETLAT_REC_TCP_PUSH:
	case NETLAT_REC_TCP_SKB:
	case NETLAT_REC_TCP_XMIT:
	case NETLAT_REC_TCP_RETRANS:
	case NETLAT_REC_TCP_ACK:
	case NETLAT_REC_TCP_DEV:
	case NETLAT_REC_TCP_ACK_OUT:
	case NETLAT_REC_RX_NETIF:
	case NETLAT_REC_RX_TRANSPORT:
	case NETLAT_REC_RX_QUEUE:
	case NETLAT_REC_RX_COPY:
	case NETLAT_REC_RX_DROP:
	case NETLAT_REC_RX_WAKE:
	case NETLAT_REC_RX_PKT:
		if (h->size < nl_tcp_rec_size(h->type) + nl_rx_rec_size(h->type))
			return nl_fail(why, wlen, "TCP/RX type %u size %u",
				       h->type, h->size);
		break;
	case NETLAT_REC_VIRTIO:
		if (h->size < sizeof(struct netlat_rec_virtio))
			return nl_fail(why, wlen, "VIRTIO size %u", h->size);
		break;
	case NETLAT_REC_TCP_PKT:
		if (h->size < sizeof(struct netlat_rec_tcp_pkt))
			return nl_fail(why, wlen, "TCP_PKT size %u", h->size);
		break;
	default:
		return nl_fail(why, wlen, "unknown type %u (size %u)", h->type,
			       h->size);
	}
	return 0;
}

/* ---- record log: validates a stream of records, per-CPU -------------- */

struct nl_cpu_track {
	bool started;		/* a record of this CPU was seen */
	bool last_lost;		/* ... and the last one was LOST */
	uint64_t next_seq;
	uint64_t last_ts;
	uint64_t records;	/* records seen, LOST included */
	uint64_t markers;
	uint64_t lost_records;
	uint64_t lost;		/* sum of LOST counts */
	uint64_t lost_pending;	/* LOST count since the last marker */
};

struct nl_log;
typedef int (*nl_marker_fn)(struct nl_log *l,
			    const struct netlat_rec_marker *m);

struct nl_log {
	unsigned int nr_cpus;
	bool expect_stream;	/* a read() stream: first record is STREAM */
	bool seq_from_zero;	/* sequences restarted (RESET): start at 0 */
	bool keep;		/* keep a copy of every record in buf */
	bool have_stream;
	struct netlat_rec_stream stream;
	struct nl_cpu_track *cpu;
	unsigned char *buf;	/* kept records, back to back */
	size_t len, cap;
	uint64_t nrec;
	nl_marker_fn on_marker;	/* optional extra check of each marker */
	void *priv;
	char why[256];		/* the first problem found */
};

static inline int nl_log_init(struct nl_log *l, unsigned int nr_cpus,
			      bool keep)
{
	memset(l, 0, sizeof(*l));
	l->nr_cpus = nr_cpus;
	l->keep = keep;
	l->cpu = calloc(nr_cpus ? nr_cpus : 1, sizeof(*l->cpu));
	return l->cpu ? 0 : -ENOMEM;
}

static inline void nl_log_free(struct nl_log *l)
{
	free(l->cpu);
	free(l->buf);
	l->cpu = NULL;
	l->buf = NULL;
}

/* Forget the kept records (not the per-CPU sequence state). */
static inline void nl_log_clear(struct nl_log *l)
{
	l->len = 0;
}

#define nl_log_for_each(l, h)						\
	for ((h) = (const struct netlat_rec_hdr *)(l)->buf;		\
	     (const unsigned char *)(h) < (l)->buf + (l)->len;		\
	     (h) = (const struct netlat_rec_hdr *)				\
		   ((const unsigned char *)(h) + (h)->size))

/* Record type selectors besides enum netlat_rec_type. */
#define NL_ANY	0	/* every record */
#define NL_DATA	(-1)	/* every record but STREAM: what the rings held */

static inline bool nl_type_match(const struct netlat_rec_hdr *h, int type)
{
	return type == NL_ANY ||
	       (type == NL_DATA ? h->type != NETLAT_REC_STREAM :
				  h->type == type);
}

/* Kept records of @type on @cpu (-1: any). */
static inline size_t nl_log_count(const struct nl_log *l, int type, int cpu)
{
	const struct netlat_rec_hdr *h;
	size_t n = 0;

	nl_log_for_each(l, h)
		if (nl_type_match(h, type) && (cpu < 0 || h->cpu == cpu))
			n++;
	return n;
}

/* The idx-th kept record of @type, or NULL. */
static inline const void *nl_log_nth(const struct nl_log *l, int type,
				     size_t idx)
{
	const struct netlat_rec_hdr *h;

	nl_log_for_each(l, h)
		if (nl_type_match(h, type) && !idx--)
			return h;
	return NULL;
}

static inline int nl_log_keep(struct nl_log *l, const void *rec, size_t size)
{
	if (l->len + size > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 65536;
		unsigned char *nb;

		while (cap < l->len + size)
			cap *= 2;
		nb = realloc(l->buf, cap);
		if (!nb)
			return nl_fail(l->why, sizeof(l->why), "out of memory");
		l->buf = nb;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, rec, size);
	l->len += size;
	return 0;
}

/*
 * Validate one record (see nl_check_rec) and its place in the stream:
 * STREAM first on a read() stream and only there; per CPU, sequences
 * gapless except for LOST records whose first_seq/count cover the gap
 * exactly, never two LOST in a row, timestamps non-decreasing. 0 or -1
 * with l->why.
 */
static inline int nl_log_add(struct nl_log *l, const void *rec, size_t avail)
{
	const struct netlat_rec_hdr *h = rec;
	const struct netlat_rec_lost *lr = rec;
	struct nl_cpu_track *t;
	uint64_t expect;

	if (nl_check_rec(rec, avail, l->nr_cpus, l->why, sizeof(l->why)))
		return -1;
	if (l->expect_stream && !l->have_stream) {
		if (h->type != NETLAT_REC_STREAM)
			return nl_fail(l->why, sizeof(l->why),
				       "first record is type %u, not STREAM",
				       h->type);
		memcpy(&l->stream, rec, sizeof(l->stream));
		l->have_stream = true;
		l->nrec++;
		return l->keep ? nl_log_keep(l, rec, h->size) : 0;
	}
	if (h->type == NETLAT_REC_STREAM)
		return nl_fail(l->why, sizeof(l->why),
			       "STREAM record in the middle of the data");

	t = &l->cpu[h->cpu];
	expect = t->started ? t->next_seq : 0;
	if (t->started || l->seq_from_zero) {
		uint64_t first = h->type == NETLAT_REC_LOST ? lr->first_seq
							      : h->seq;

		if (first != expect)
			return nl_fail(l->why, sizeof(l->why),
				       "cpu %u: %s seq %llu (first %llu), expected %llu",
				       h->cpu,
				       h->type == NETLAT_REC_LOST ? "LOST"
								  : "record",
				       (unsigned long long)h->seq,
				       (unsigned long long)first,
				       (unsigned long long)expect);
	}
	if (t->started && h->ts_ns < t->last_ts)
		return nl_fail(l->why, sizeof(l->why),
			       "cpu %u seq %llu: ts %llu < previous %llu",
			       h->cpu, (unsigned long long)h->seq,
			       (unsigned long long)h->ts_ns,
			       (unsigned long long)t->last_ts);
	if (h->type == NETLAT_REC_LOST) {
		if (t->last_lost)
			return nl_fail(l->why, sizeof(l->why),
				       "cpu %u seq %llu: two LOST records in a row",
				       h->cpu, (unsigned long long)h->seq);
		t->lost_records++;
		t->lost += lr->count;
		t->lost_pending += lr->count;
	}
	t->last_lost = h->type == NETLAT_REC_LOST;
	t->started = true;
	t->next_seq = h->seq + 1;
	t->last_ts = h->ts_ns;
	t->records++;
	l->nrec++;
	if (h->type == NETLAT_REC_MARKER) {
		t->markers++;
		if (l->on_marker && l->on_marker(l, rec))
			return -1;
		t->lost_pending = 0;
	}
	return l->keep ? nl_log_keep(l, rec, h->size) : 0;
}

/*
 * One read() of up to @cap bytes into @buf, every record validated and
 * the records required to fill the returned bytes exactly. Returns the
 * byte count, -errno from read(), or -EPROTO (reason in l->why).
 */
static inline ssize_t nl_log_read(struct nl_log *l, int fd, void *buf,
				  size_t cap)
{
	ssize_t n = read(fd, buf, cap);
	size_t off = 0;

	if (n < 0)
		return -errno;
	if (n == 0) {
		nl_fail(l->why, sizeof(l->why), "read() returned 0");
		return -EPROTO;
	}
	while (off < (size_t)n) {
		if (nl_log_add(l, (char *)buf + off, (size_t)n - off))
			return -EPROTO;
		off += ((const struct netlat_rec_hdr *)((char *)buf + off))->size;
	}
	return n;
}

/*
 * read() with O_NONBLOCK until -EAGAIN: every pending record goes through
 * @l. 0, -errno from read() or -EPROTO (l->why).
 */
static inline int nl_log_drain(struct nl_log *l, int fd)
{
	static char buf[65536];
	int fl = fcntl(fd, F_GETFL);
	ssize_t n;

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	do
		n = nl_log_read(l, fd, buf, sizeof(buf));
	while (n > 0);
	fcntl(fd, F_SETFL, fl);
	if (n == -EAGAIN && l->expect_stream && !l->have_stream) {
		nl_fail(l->why, sizeof(l->why), "no STREAM record on first read");
		return -EPROTO;
	}
	if (n != -EAGAIN && n != -EPROTO)
		nl_fail(l->why, sizeof(l->why), "read: %s", strerror((int)-n));
	return n == -EAGAIN ? 0 : (int)n;
}

/* ---- mmap consumer ------------------------------------------------------ */

struct nl_ring {
	unsigned int cpu;
	uint64_t ring_bytes;
	size_t page;
	struct netlat_mmap_cons *cons;	/* CONS page, NULL if not mapped */
	struct netlat_mmap_prod *prod;	/* start of the DATA mapping */
	const unsigned char *data;	/* ring data, mapped twice */
	size_t data_len;
};

static inline size_t nl_data_len(const struct netlat_info *info)
{
	return info->page_size + 2 * info->ring_bytes;
}

/* mmap() of one area; MAP_FAILED and errno on failure. */
static inline void *nl_mmap(int fd, size_t len, int prot, int flags,
			    unsigned int cpu, uint64_t area)
{
	return mmap(NULL, len, prot, flags, fd,
		    (off_t)NETLAT_MMAP_OFFSET(cpu, area));
}

static inline void nl_ring_unmap(struct nl_ring *r)
{
	if (r->cons)
		munmap(r->cons, r->page);
	if (r->prod)
		munmap(r->prod, r->data_len);
	r->cons = NULL;
	r->prod = NULL;
	r->data = NULL;
}

/* Map the CONS page and the DATA area of @cpu: 0 or -errno. */
static inline int nl_ring_map(int fd, const struct netlat_info *info,
			      unsigned int cpu, struct nl_ring *r)
{
	void *p;

	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	r->ring_bytes = info->ring_bytes;
	r->page = info->page_size;
	r->data_len = nl_data_len(info);
	p = nl_mmap(fd, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, cpu,
		    NETLAT_MMAP_CONS);
	if (p == MAP_FAILED)
		return -errno;
	r->cons = p;
	p = nl_mmap(fd, r->data_len, PROT_READ, MAP_SHARED, cpu,
		    NETLAT_MMAP_DATA);
	if (p == MAP_FAILED) {
		int err = -errno;

		nl_ring_unmap(r);
		return err;
	}
	r->prod = p;
	r->data = (const unsigned char *)p + r->page;
	return 0;
}

static inline uint64_t nl_ring_pending(const struct nl_ring *r)
{
	return __atomic_load_n(&r->prod->prod, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&r->cons->cons, __ATOMIC_RELAXED);
}

/*
 * Consume everything committed to the ring with the documented protocol,
 * each record through @l. Returns the number of records or -1 (l->why).
 */
static inline long nl_ring_consume(struct nl_ring *r, struct nl_log *l)
{
	uint64_t prod = __atomic_load_n(&r->prod->prod, __ATOMIC_ACQUIRE);
	uint64_t cons = __atomic_load_n(&r->cons->cons, __ATOMIC_RELAXED);
	long n = 0;

	if (prod - cons > r->ring_bytes)
		return nl_fail(l->why, sizeof(l->why),
			       "cpu %u: prod %llu cons %llu: more than a ring",
			       r->cpu, (unsigned long long)prod,
			       (unsigned long long)cons);
	while (cons != prod) {
		const struct netlat_rec_hdr *h =
			(const void *)(r->data + (cons & (r->ring_bytes - 1)));

		if (nl_log_add(l, h, prod - cons))
			return -1;
		if (h->cpu != r->cpu)
			return nl_fail(l->why, sizeof(l->why),
				       "record of cpu %u in ring %u", h->cpu,
				       r->cpu);
		cons += h->size;
		n++;
	}
	__atomic_store_n(&r->cons->cons, cons, __ATOMIC_RELEASE);
	return n;
}

#endif /* NETLAT_UTIL_H */
