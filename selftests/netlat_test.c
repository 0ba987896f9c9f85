// SPDX-License-Identifier: GPL-2.0
/*
 * kselftest suite of /dev/netlat, written against <linux/netlat.h>.
 *
 * Every test starts from a known state (setup: stop, configuration of
 * program start, reset, start) and restores it in teardown, so tests are
 * independent and may run in any order. The tests run sequentially; each
 * one in its own child process (kselftest harness).
 *
 * Needs root (CAP_NET_ADMIN, CAP_PERFMON or CAP_SYS_ADMIN) and the module
 * loaded; without /dev/netlat every test is skipped.
 */
#include "netlat_util.h"

#include <pthread.h>
#include <setjmp.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

/* The harness's SIGALRM handler has an unused parameter. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

#define KiB 1024ull

/* ---- state of the program start ------------------------------------- */

static struct netlat_info g_def;	/* configuration to restore */
static int g_dev_errno;			/* why the device is unusable, or 0 */
static cpu_set_t g_mask;		/* affinity at start */
static int g_cpus[CPU_SETSIZE];		/* usable CPUs (in g_mask) */
static int g_ncpus;

static void __attribute__((constructor)) netlat_snapshot(void)
{
	int fd;

	sched_getaffinity(0, sizeof(g_mask), &g_mask);
	g_ncpus = nl_usable_cpus(g_cpus, CPU_SETSIZE);
	fd = nl_open(0);
	if (fd < 0) {
		g_dev_errno = errno;
		return;
	}
	if (nl_get_info(fd, &g_def))
		g_dev_errno = errno;
	close(fd);
}

static int restore_defaults(int fd)
{
	return nl_reconfigure(fd, g_def.ring_bytes, g_def.watermark,
			      g_def.flush_ms, true);
}

/* ---- fixture ------------------------------------------------------------- */

#define MAX_MAPS 8

FIXTURE(netlat) {
	int fd;			/* the device, opened by setup */
	int fd2;		/* a second open file, if a test needs one */
	bool stream_done;	/* fd's STREAM record was read */
	struct netlat_info info;
	struct nl_ring *rings;	/* info.nr_cpus entries, see map_rings() */
	void *map[MAX_MAPS];	/* other mappings, see test_mmap() */
	size_t map_len[MAX_MAPS];
};

FIXTURE_SETUP(netlat)
{
	self->fd = self->fd2 = -1;
	if (g_dev_errno)
		SKIP(longjmp(_metadata->env, 1), "%s: %s", NETLAT_DEVICE_PATH,
		     strerror(g_dev_errno));
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	ASSERT_EQ(0, restore_defaults(self->fd));
	ASSERT_EQ(0, nl_get_info(self->fd, &self->info));
	self->rings = calloc(self->info.nr_cpus, sizeof(*self->rings));
	ASSERT_NE(NULL, self->rings);
}

FIXTURE_TEARDOWN(netlat)
{
	unsigned int i;
	int fd;

	for (i = 0; self->rings && i < self->info.nr_cpus; i++)
		nl_ring_unmap(&self->rings[i]);
	free(self->rings);
	for (i = 0; i < MAX_MAPS; i++)
		if (self->map[i])
			munmap(self->map[i], self->map_len[i]);
	if (self->fd2 >= 0)
		close(self->fd2);
	if (self->fd >= 0)
		close(self->fd);
	fd = nl_open(0);
	EXPECT_LE(0, fd);
	if (fd >= 0) {
		EXPECT_EQ(0, restore_defaults(fd));
		close(fd);
	}
}

/* ---- helpers using the harness ------------------------------------------- */

/* mmap() remembered by the fixture (unmapped in teardown); -errno or 0. */
static int test_mmap(FIXTURE_DATA(netlat) *self, void **out, int fd,
		     size_t len, int prot, int flags, unsigned int cpu,
		     uint64_t area)
{
	void *p = nl_mmap(fd, len, prot, flags, cpu, area);
	int i;

	if (p == MAP_FAILED)
		return -errno;
	for (i = 0; i < MAX_MAPS && self->map[i]; i++)
		;
	if (i == MAX_MAPS) {
		munmap(p, len);
		return -ENOSPC;
	}
	self->map[i] = p;
	self->map_len[i] = len;
	if (out)
		*out = p;
	return 0;
}

/* mmap() that must fail: its -errno (0 if it succeeded, then unmapped). */
static int mmap_err(int fd, size_t len, int prot, int flags, unsigned int cpu,
		    uint64_t area)
{
	void *p = nl_mmap(fd, len, prot, flags, cpu, area);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

static void test_munmap(FIXTURE_DATA(netlat) *self, void *p)
{
	int i;

	for (i = 0; i < MAX_MAPS; i++) {
		if (self->map[i] == p) {
			munmap(p, self->map_len[i]);
			self->map[i] = NULL;
		}
	}
}

/* Map CONS and DATA of every possible CPU on self->fd. */
static void map_rings(struct __test_metadata *_metadata,
		      FIXTURE_DATA(netlat) *self)
{
	unsigned int cpu;

	for (cpu = 0; cpu < self->info.nr_cpus; cpu++) {
		ASSERT_EQ(0, nl_ring_map(self->fd, &self->info, cpu,
					 &self->rings[cpu]))
			TH_LOG("mapping ring of cpu %u", cpu);
	}
}

static void new_log(struct __test_metadata *_metadata,
		    FIXTURE_DATA(netlat) *self, struct nl_log *l, bool keep,
		    bool seq_from_zero)
{
	ASSERT_EQ(0, nl_log_init(l, self->info.nr_cpus, keep));
	l->seq_from_zero = seq_from_zero;
}

/* read() everything pending on self->fd through @l. */
static void read_all(struct __test_metadata *_metadata,
		     FIXTURE_DATA(netlat) *self, struct nl_log *l)
{
	if (!self->stream_done)
		l->expect_stream = true;
	ASSERT_EQ(0, nl_log_drain(l, self->fd)) TH_LOG("%s", l->why);
	self->stream_done = true;
}

/* read() and check, then forget, everything pending on self->fd. */
static void discard_all(struct __test_metadata *_metadata,
			FIXTURE_DATA(netlat) *self)
{
	struct nl_log l;

	new_log(_metadata, self, &l, false, false);
	read_all(_metadata, self, &l);
	nl_log_free(&l);
}

static void refresh_info(struct __test_metadata *_metadata,
			 FIXTURE_DATA(netlat) *self)
{
	ASSERT_EQ(0, nl_get_info(self->fd, &self->info));
}

/* Stop, set ring/watermark/flush, reset, start; self->info updated. */
static void reconfigure(struct __test_metadata *_metadata,
			FIXTURE_DATA(netlat) *self, uint64_t ring_bytes,
			uint32_t watermark, uint32_t flush_ms)
{
	ASSERT_EQ(0, nl_reconfigure(self->fd, ring_bytes, watermark,
				    flush_ms, true));
	refresh_info(_metadata, self);
	ASSERT_EQ(ring_bytes, self->info.ring_bytes);
}

static void stats(struct __test_metadata *_metadata,
		  FIXTURE_DATA(netlat) *self, unsigned int cpu,
		  struct netlat_cpu_stats *st)
{
	ASSERT_EQ(0, nl_get_stats(self->fd, cpu, st)) TH_LOG("cpu %u", cpu);
}

static void pin(struct __test_metadata *_metadata, int cpu)
{
	ASSERT_EQ(0, nl_pin_thread(cpu)) TH_LOG("pinning to cpu %d", cpu);
}

static void unpin(void)
{
	nl_set_thread_mask(&g_mask);
}

static void write_marker(struct __test_metadata *_metadata, int fd,
			 const void *buf, size_t len)
{
	ASSERT_EQ((ssize_t)len, nl_write(fd, buf, len));
}

/* Per-CPU written/dropped must not have moved since @before. */
static void expect_stats_unchanged(struct __test_metadata *_metadata,
				   FIXTURE_DATA(netlat) *self, int cpu,
				   const struct netlat_cpu_stats *before)
{
	struct netlat_cpu_stats st;

	stats(_metadata, self, cpu, &st);
	EXPECT_EQ(before->written, st.written);
	EXPECT_EQ(before->dropped, st.dropped);
	EXPECT_EQ(before->prod, st.prod);
}

/* ---- threads that write markers ----------------------------------------- */

struct delayed_writer {
	int fd;
	int cpu;		/* pin to this CPU, or -1 */
	unsigned int delay_ms;	/* sleep before writing */
	unsigned int count;	/* markers to write */
	size_t len;		/* payload bytes of each */
	pid_t tid;		/* out: the thread's id */
	uint64_t t_start;	/* out: CLOCK_MONOTONIC before the first write */
	uint64_t t_end;		/* out: ... after the last one */
	int err;		/* out: -errno of a failed write or pin */
	pthread_t th;
};

static void *delayed_writer_main(void *arg)
{
	struct delayed_writer *w = arg;
	unsigned char buf[NETLAT_MARKER_MAX];
	unsigned int i;

	w->tid = gettid();
	if (w->cpu >= 0)
		w->err = nl_pin_thread(w->cpu);
	nl_sleep_ms(w->delay_ms);
	w->t_start = nl_mono_ns();
	for (i = 0; !w->err && i < w->count; i++) {
		ssize_t n;

		nl_fill_pattern(buf, w->len, i);
		n = nl_write(w->fd, buf, w->len);
		if (n != (ssize_t)w->len)
			w->err = n < 0 ? (int)n : -EIO;
	}
	w->t_end = nl_mono_ns();
	return NULL;
}

static void start_writer(struct __test_metadata *_metadata,
			 struct delayed_writer *w)
{
	ASSERT_EQ(0, pthread_create(&w->th, NULL, delayed_writer_main, w));
}

static void join_writer(struct __test_metadata *_metadata,
			struct delayed_writer *w)
{
	ASSERT_EQ(0, pthread_join(w->th, NULL));
	ASSERT_EQ(0, w->err) TH_LOG("writer: %s", strerror(-w->err));
}

/* ---- processes without privileges -------------------------------------- */

/*
 * Run fn(arg) in a child that keeps uid 0 (so the 0600 node stays
 * accessible) but holds only capability @keep (-1: none). Returns the
 * child's exit status, or -1 if it did not exit normally.
 */
static int run_with_caps(int keep, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct data[2];

		memset(data, 0, sizeof(data));
		if (keep >= 0) {
			data[keep / 32].effective = 1u << (keep % 32);
			data[keep / 32].permitted = 1u << (keep % 32);
		}
		if (syscall(SYS_capset, &hdr, data)) {
			fprintf(stderr, "# capset: %s\n", strerror(errno));
			_exit(250);
		}
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Same, as uid/gid 65534 ("nobody"): setresuid() clears every capability. */
static int run_as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534)) {
			fprintf(stderr, "# dropping to 65534: %s\n",
				strerror(errno));
			_exit(250);
		}
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Child: open the device; exit status 0 or the errno. */
static int child_open(void *arg)
{
	int fd = nl_open(0);

	(void)arg;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* ---- permissions -------------------------------------------------------- */

TEST_F(netlat, dev_node_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(NETLAT_DEVICE_PATH, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0600u, st.st_mode & 07777);
	EXPECT_EQ(0u, st.st_uid);
}

TEST_F(netlat, open_without_caps_eperm)
{
	EXPECT_EQ(EPERM, run_with_caps(-1, child_open, NULL));
}

TEST_F(netlat, open_as_nobody_denied)
{
	int ret = run_as_nobody(child_open, NULL);

	/* The 0600 node already stops uid 65534 (EACCES); never success. */
	EXPECT_TRUE(ret == EACCES || ret == EPERM) TH_LOG("status %d", ret);
}

TEST_F(netlat, open_with_one_cap_ok)
{
	static const int caps[] = { CAP_NET_ADMIN, CAP_PERFMON, CAP_SYS_ADMIN };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caps); i++) {
		EXPECT_EQ(0, run_with_caps(caps[i], child_open, NULL))
			TH_LOG("holding only capability %d", caps[i]);
	}
}

/* Child: state-changing ioctls on an inherited fd fail, GET_INFO works. */
static int child_ioctls(void *arg)
{
	static const struct { const char *name; unsigned long cmd; } ctl[] = {
		{ "START", NETLAT_IOC_START },
		{ "STOP", NETLAT_IOC_STOP },
		{ "RESET", NETLAT_IOC_RESET },
	};
	struct netlat_info info;
	int fd = *(int *)arg, bad = 0, ret;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctl); i++) {
		ret = nl_control(fd, ctl[i].cmd);
		if (ret != -EPERM) {
			fprintf(stderr, "# %s without caps: %d\n", ctl[i].name,
				ret);
			bad = 1;
		}
	}
	ret = nl_set_config(fd, NETLAT_CONFIG_FLUSH_MS, 0, 0, 10);
	if (ret != -EPERM) {
		fprintf(stderr, "# SET_CONFIG without caps: %d\n", ret);
		bad = 1;
	}
	ret = nl_get_info(fd, &info);
	if (ret) {
		fprintf(stderr, "# GET_INFO without caps: %d\n", ret);
		bad = 1;
	}
	return bad;
}

TEST_F(netlat, ioctl_rechecks_caps)
{
	struct netlat_info info;

	/* Stopped: every control would otherwise be valid. */
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	EXPECT_EQ(0, run_with_caps(-1, child_ioctls, &self->fd));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(0u, info.state & NETLAT_STATE_RUNNING);
	EXPECT_EQ(g_def.flush_ms, info.flush_ms);
}

/*
 * Child holding one capability, on an inherited fd: it reads (info,
 * probes, histograms) and, with CAP_PERFMON or CAP_SYS_ADMIN only, arms
 * the probes and changes the configuration. Exit 0 or the bits of what
 * went otherwise.
 */
struct trace_caps {
	int fd;
	bool may_trace;
	uint64_t arm;			/* a group to arm */
};

static int child_trace(void *arg)
{
	const struct trace_caps *t = arg;
	int want = t->may_trace ? 0 : -EPERM, bad = 0, ret;
	struct netlat_probes pr = { 0 };
	struct netlat_info info;
	struct netlat_hist h;

	if (nl_get_info(t->fd, &info) || nl_probes(t->fd, false, 0, &pr) ||
	    nl_get_hist(t->fd, &h, NULL))
		bad |= 1;
	ret = nl_probes(t->fd, true, pr.enabled | t->arm, NULL);
	if (ret != want) {
		fprintf(stderr, "# PROBES_SET: %d, not %d\n", ret, want);
		bad |= 2;
	}
	ret = nl_set_config(t->fd, NETLAT_CONFIG_FLUSH_MS, 0, 0,
			    info.flush_ms);
	if (ret != want) {
		fprintf(stderr, "# SET_CONFIG: %d, not %d\n", ret, want);
		bad |= 4;
	}
	ret = nl_control(t->fd, NETLAT_IOC_START);
	if (ret != want) {
		fprintf(stderr, "# START: %d, not %d\n", ret, want);
		bad |= 8;
	}
	return bad;
}

/* #39: reading needs CAP_NET_ADMIN; arming, CAP_PERFMON or CAP_SYS_ADMIN */
TEST_F(netlat, net_admin_reads_perfmon_arms)
{
	static const struct { int cap; bool may_trace; } caps[] = {
		{ CAP_NET_ADMIN, false },
		{ CAP_PERFMON, true },
		{ CAP_SYS_ADMIN, true },
	};
	struct trace_caps t = { .fd = self->fd, .arm = NETLAT_PROBE_TCP_PUSH };
	struct netlat_probes pr;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caps); i++) {
		ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
		t.may_trace = caps[i].may_trace;
		EXPECT_EQ(0, run_with_caps(caps[i].cap, child_open, NULL))
			TH_LOG("open, holding only capability %d", caps[i].cap);
		EXPECT_EQ(0, run_with_caps(caps[i].cap, child_trace, &t))
			TH_LOG("holding only capability %d", caps[i].cap);
		/* the registry says whether the child armed the group */
		ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
		EXPECT_EQ(caps[i].may_trace ? NETLAT_PROBE_TCP_PUSH : 0,
			  pr.enabled & NETLAT_PROBE_TCP_PUSH)
			TH_LOG("holding only capability %d", caps[i].cap);
	}
	ASSERT_EQ(0, nl_probes(self->fd, true, 0, NULL));
}

/* ---- ioctl arguments ----------------------------------------------------- */

static const struct ioc {
	const char *name;
	unsigned long cmd;
	uint32_t size;		/* this header's struct */
	uint32_t min;		/* its first published size */
} iocs[] = {
	{ "GET_INFO", NETLAT_IOC_GET_INFO, sizeof(struct netlat_info),
	  NETLAT_INFO_SIZE_VER0 },
	{ "GET_CPU_STATS", NETLAT_IOC_GET_CPU_STATS,
	  sizeof(struct netlat_cpu_stats), NETLAT_CPU_STATS_SIZE_VER0 },
	{ "SET_CONFIG", NETLAT_IOC_SET_CONFIG, sizeof(struct netlat_config),
	  NETLAT_CONFIG_SIZE_VER0 },
	{ "START", NETLAT_IOC_START, sizeof(struct netlat_control),
	  NETLAT_CONTROL_SIZE_VER0 },
	{ "STOP", NETLAT_IOC_STOP, sizeof(struct netlat_control),
	  NETLAT_CONTROL_SIZE_VER0 },
	{ "RESET", NETLAT_IOC_RESET, sizeof(struct netlat_control),
	  NETLAT_CONTROL_SIZE_VER0 },
	{ "FLOWS", NETLAT_IOC_FLOWS, sizeof(struct netlat_flows),
	  NETLAT_FLOWS_SIZE_VER0 },
};

/*
 * Call @io with a zeroed argument of @size bytes (an all-zero body is a
 * valid request for every command: cpu 0, no config field), the __u32 at
 * @off set to @val if @off >= 0. Tracing is stopped first so that every
 * command is allowed and only the argument decides. Returns 0 or -errno;
 * @tail_ok tells whether the bytes from io->size on are still zero.
 */
static int ioc_try(int fd, const struct ioc *io, uint32_t size, int off,
		   uint32_t val, bool *tail_ok)
{
	static unsigned char *buf;
	size_t cap = 2 * sysconf(_SC_PAGESIZE) + 64, i;
	int ret;

	if (!buf)
		buf = aligned_alloc(64, cap);
	if (!buf)
		return -ENOMEM;
	memset(buf, 0, cap);
	if (off >= 0)
		memcpy(buf + off, &val, sizeof(val));
	nl_control(fd, NETLAT_IOC_STOP);
	ret = nl_ioctl(fd, io->cmd, buf, size);
	if (tail_ok) {
		*tail_ok = true;
		for (i = io->size; i < size && i < cap; i++)
			if (buf[i])
				*tail_ok = false;
	}
	return ret;
}

TEST_F(netlat, ioctl_exact_size_ok)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		EXPECT_EQ(0, ioc_try(self->fd, &iocs[i], iocs[i].size, -1, 0,
				     NULL)) TH_LOG("%s", iocs[i].name);
		/* A caller built against the first version still works. */
		EXPECT_EQ(0, ioc_try(self->fd, &iocs[i], iocs[i].min, -1, 0,
				     NULL)) TH_LOG("%s size %u", iocs[i].name,
						   iocs[i].min);
	}
}

TEST_F(netlat, ioctl_unknown_cmd_enotty)
{
	static const unsigned long cmds[] = {
		_IO(NETLAT_IOC_TYPE, 0),
		_IO(NETLAT_IOC_TYPE, NETLAT_CMD_GET_INFO - 1),
		_IO(NETLAT_IOC_TYPE, NETLAT_CMD_HOOKS + 1),
		_IO(NETLAT_IOC_TYPE, 0xff),
		_IOWR(NETLAT_IOC_TYPE, NETLAT_CMD_GET_INFO, struct netlat_info),
		_IO(NETLAT_IOC_TYPE + 1, NETLAT_CMD_GET_INFO),
	};
	struct netlat_info info;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		memset(&info, 0, sizeof(info));
		EXPECT_EQ(-ENOTTY, nl_ioctl(self->fd, cmds[i], &info,
					    sizeof(info)))
			TH_LOG("cmd 0x%lx", cmds[i]);
	}
}

TEST_F(netlat, ioctl_null_arg_efault)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		EXPECT_EQ(-EFAULT, nl_ioctl_raw(self->fd, iocs[i].cmd, NULL))
			TH_LOG("%s", iocs[i].name);
	}
}

TEST_F(netlat, ioctl_unmapped_arg_efault)
{
	size_t pg = self->info.page_size;
	unsigned char *p;
	unsigned int i;

	/* Page 0 read-write, page 1 inaccessible. */
	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mprotect(p + pg, pg, PROT_NONE));

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		const struct ioc *io = &iocs[i];
		uint32_t size = io->size + 8;
		unsigned char *arg = p + pg - 8;

		nl_control(self->fd, NETLAT_IOC_STOP);
		EXPECT_EQ(-EFAULT, nl_ioctl_raw(self->fd, io->cmd, p + pg))
			TH_LOG("%s: argument in a PROT_NONE page", io->name);
		/* size and flags readable, the rest of the struct is not */
		memset(arg, 0, 8);
		EXPECT_EQ(-EFAULT, nl_ioctl(self->fd, io->cmd, arg, size))
			TH_LOG("%s: struct crossing into a PROT_NONE page",
			       io->name);
	}
	munmap(p, 2 * pg);
	p = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, pg);
	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		EXPECT_EQ(-EFAULT, nl_ioctl_raw(self->fd, iocs[i].cmd, p))
			TH_LOG("%s: unmapped argument", iocs[i].name);
	}
}

TEST_F(netlat, ioctl_readonly_out_efault)
{
	size_t pg = self->info.page_size;
	struct netlat_info *info;
	struct netlat_cpu_stats *st;
	unsigned char *p;

	p = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	info = (void *)p;
	st = (void *)(p + 256);
	info->size = sizeof(*info);
	st->size = sizeof(*st);
	ASSERT_EQ(0, mprotect(p, pg, PROT_READ));
	EXPECT_EQ(-EFAULT, nl_ioctl_raw(self->fd, NETLAT_IOC_GET_INFO, info));
	EXPECT_EQ(-EFAULT, nl_ioctl_raw(self->fd, NETLAT_IOC_GET_CPU_STATS,
					st));
	munmap(p, pg);
}

TEST_F(netlat, ioctl_short_size_einval)
{
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		const uint32_t sizes[] = { 0, 1, 4, iocs[i].min - 4,
					   iocs[i].min - 1 };

		for (j = 0; j < ARRAY_SIZE(sizes); j++) {
			EXPECT_EQ(-EINVAL, ioc_try(self->fd, &iocs[i],
						   sizes[j], -1, 0, NULL))
				TH_LOG("%s size %u", iocs[i].name, sizes[j]);
		}
	}
}

TEST_F(netlat, ioctl_oversize_nonzero_tail_einval)
{
	uint32_t pg = self->info.page_size;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		const struct ioc *io = &iocs[i];

		EXPECT_EQ(-EINVAL, ioc_try(self->fd, io, io->size + 8,
					   io->size, 1, NULL))
			TH_LOG("%s: first extra byte set", io->name);
		EXPECT_EQ(-EINVAL, ioc_try(self->fd, io, io->size + 8,
					   io->size + 4, 1u << 24, NULL))
			TH_LOG("%s: last extra byte set", io->name);
		EXPECT_EQ(-EINVAL, ioc_try(self->fd, io, pg, pg - 4, 1u << 24,
					   NULL))
			TH_LOG("%s: page-sized, last byte set", io->name);
	}
}

TEST_F(netlat, ioctl_oversize_zero_tail_ok)
{
	uint32_t pg = self->info.page_size;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		const uint32_t sizes[] = { iocs[i].size + 4, iocs[i].size + 8,
					   iocs[i].size + 200, pg };

		for (j = 0; j < ARRAY_SIZE(sizes); j++) {
			bool tail_ok;

			EXPECT_EQ(0, ioc_try(self->fd, &iocs[i], sizes[j], -1,
					     0, &tail_ok))
				TH_LOG("%s size %u", iocs[i].name, sizes[j]);
			EXPECT_TRUE(tail_ok)
				TH_LOG("%s size %u: kernel wrote past its struct",
				       iocs[i].name, sizes[j]);
		}
	}
}

TEST_F(netlat, ioctl_oversize_info_content)
{
	struct {
		struct netlat_info info;
		unsigned char tail[64];
	} big;
	struct netlat_info ref;

	memset(&big, 0, sizeof(big));
	ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_GET_INFO, &big,
			      sizeof(big)));
	ASSERT_EQ(0, nl_get_info(self->fd, &ref));
	EXPECT_EQ(ref.abi_version, big.info.abi_version);
	EXPECT_EQ(ref.nr_cpus, big.info.nr_cpus);
	EXPECT_EQ(ref.ring_bytes, big.info.ring_bytes);
	EXPECT_EQ(ref.max_record, big.info.max_record);
	EXPECT_EQ(ref.flush_ms, big.info.flush_ms);
}

TEST_F(netlat, ioctl_size_above_page_einval)
{
	uint32_t pg = self->info.page_size;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		EXPECT_EQ(-EINVAL, ioc_try(self->fd, &iocs[i], pg + 8, -1, 0,
					   NULL)) TH_LOG("%s", iocs[i].name);
		EXPECT_EQ(-EINVAL, ioc_try(self->fd, &iocs[i], 0x7fffffffu,
					   -1, 0, NULL))
			TH_LOG("%s size 2^31-1", iocs[i].name);
	}
}

TEST_F(netlat, ioctl_unknown_flags_einval)
{
	static const uint32_t bad[] = { 1u << 0, 1u << 3, 1u << 31 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		for (j = 0; j < ARRAY_SIZE(bad); j++) {
			/* bits 0 and 3 (MODE) are valid SET_CONFIG flags */
			if (iocs[i].cmd == NETLAT_IOC_SET_CONFIG &&
			    (bad[j] & (NL_CONFIG_ALL | NETLAT_CONFIG_MODE)))
				continue;
			/* bit 0 is FLOWS_CLOSED */
			if (iocs[i].cmd == NETLAT_IOC_FLOWS &&
			    (bad[j] & (NETLAT_FLOWS_CLOSED | NETLAT_FLOWS_REST)))
				continue;
			EXPECT_EQ(-EINVAL, ioc_try(self->fd, &iocs[i],
						   iocs[i].size, 4, bad[j],
						   NULL))
				TH_LOG("%s flags 0x%x", iocs[i].name, bad[j]);
		}
	}
}

TEST_F(netlat, cpu_stats_reserved_einval)
{
	struct netlat_cpu_stats st = { .cpu = 0, .reserved = 1 };

	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_GET_CPU_STATS, &st,
				    sizeof(st)));
	st.reserved = 1u << 31;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_GET_CPU_STATS, &st,
				    sizeof(st)));
}

TEST_F(netlat, info_reserved_einval)
{
	struct netlat_info info = { .reserved = 1 };

	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_GET_INFO, &info,
				    sizeof(info)));
	info.reserved = 1u << 31;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_GET_INFO, &info,
				    sizeof(info)));
	info.reserved = 0;
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_GET_INFO, &info,
			      sizeof(info)));
	EXPECT_EQ(0u, info.reserved);
}

TEST_F(netlat, config_reserved_einval)
{
	struct netlat_config cfg = { .reserved = 1 };

	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	cfg.flags = NETLAT_CONFIG_FLUSH_MS;
	cfg.flush_ms = 20;
	cfg.reserved = 1ull << 63;
	EXPECT_EQ(-EINVAL, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &cfg,
				    sizeof(cfg)));
	refresh_info(_metadata, self);
	EXPECT_EQ(g_def.flush_ms, self->info.flush_ms);
}

TEST_F(netlat, cpu_stats_bad_cpu_einval)
{
	const uint32_t nr = self->info.nr_cpus;
	const uint32_t bad[] = { nr, nr + 1, 65536, 0xffffffffu };
	struct netlat_cpu_stats st;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, nl_get_stats(self->fd, bad[i], &st))
			TH_LOG("cpu %u", bad[i]);
	}
	EXPECT_EQ(0, nl_get_stats(self->fd, nr - 1, &st));
}

TEST_F(netlat, cpu_stats_sane)
{
	struct netlat_cpu_stats st, st2;
	unsigned int cpu;
	char one = 'x';

	for (cpu = 0; cpu < self->info.nr_cpus; cpu++) {
		stats(_metadata, self, cpu, &st);
		/* setup reset everything */
		EXPECT_EQ(0u, st.written);
		EXPECT_EQ(0u, st.dropped);
		EXPECT_EQ(0u, st.resyncs);
		EXPECT_EQ(st.prod, st.cons);
	}
	pin(_metadata, g_cpus[0]);
	stats(_metadata, self, g_cpus[0], &st);
	write_marker(_metadata, self->fd, &one, 1);
	stats(_metadata, self, g_cpus[0], &st2);
	EXPECT_EQ(st.written + 1, st2.written);
	EXPECT_EQ(st.prod + NL_MARKER_SIZE(1), st2.prod);
	EXPECT_EQ(st.cons, st2.cons);
	EXPECT_EQ(st.dropped, st2.dropped);
}

/* ---- SET_CONFIG / START / STOP / RESET --------------------------------- */

/* SET_CONFIG while stopped must fail with @err and change nothing. */
static void config_fails(struct __test_metadata *_metadata,
			 FIXTURE_DATA(netlat) *self, int err, uint32_t flags,
			 uint64_t ring, uint32_t wm, uint32_t flush)
{
	struct netlat_info info;

	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	EXPECT_EQ(err, nl_set_config(self->fd, flags, ring, wm, flush))
		TH_LOG("flags 0x%x ring %llu watermark %u flush_ms %u", flags,
		       (unsigned long long)ring, wm, flush);
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(self->info.ring_bytes, info.ring_bytes);
	EXPECT_EQ(self->info.watermark, info.watermark);
	EXPECT_EQ(self->info.flush_ms, info.flush_ms);
}

#define RING_WM	(NETLAT_CONFIG_RING_BYTES | NETLAT_CONFIG_WATERMARK)

TEST_F(netlat, config_ring_not_pow2_einval)
{
	config_fails(_metadata, self, -EINVAL, RING_WM, 3 * 4096, 1024, 0);
	config_fails(_metadata, self, -EINVAL, RING_WM,
		     NETLAT_RING_BYTES_MIN + 8, 1024, 0);
	config_fails(_metadata, self, -EINVAL, RING_WM, (1 << 20) - 4096,
		     1024, 0);
}

TEST_F(netlat, config_ring_too_small_einval)
{
	config_fails(_metadata, self, -EINVAL, RING_WM,
		     NETLAT_RING_BYTES_MIN / 2, 1024, 0);
	config_fails(_metadata, self, -EINVAL, RING_WM, 8, 1, 0);
	config_fails(_metadata, self, -EINVAL, NETLAT_CONFIG_RING_BYTES, 0, 0,
		     0);
}

TEST_F(netlat, config_ring_too_big_einval)
{
	config_fails(_metadata, self, -EINVAL, RING_WM,
		     NETLAT_RING_BYTES_MAX * 2, 1024, 0);
	config_fails(_metadata, self, -EINVAL, RING_WM, 1ull << 40, 1024, 0);
	config_fails(_metadata, self, -EINVAL, RING_WM, 1ull << 63, 1024, 0);
}

TEST_F(netlat, config_watermark_zero_einval)
{
	config_fails(_metadata, self, -EINVAL, NETLAT_CONFIG_WATERMARK, 0, 0,
		     0);
	config_fails(_metadata, self, -EINVAL, RING_WM, 64 * KiB, 0, 0);
}

TEST_F(netlat, config_watermark_above_ring_einval)
{
	uint32_t ring = self->info.ring_bytes;

	config_fails(_metadata, self, -EINVAL, NETLAT_CONFIG_WATERMARK, 0,
		     ring + 1, 0);
	config_fails(_metadata, self, -EINVAL, NETLAT_CONFIG_WATERMARK, 0,
		     0xffffffffu, 0);
	/* checked against the new ring size */
	config_fails(_metadata, self, -EINVAL, RING_WM, NETLAT_RING_BYTES_MIN,
		     NETLAT_RING_BYTES_MIN + 1, 0);
}

TEST_F(netlat, config_flush_too_big_einval)
{
	config_fails(_metadata, self, -EINVAL, NETLAT_CONFIG_FLUSH_MS, 0, 0,
		     NETLAT_FLUSH_MS_MAX + 1);
	config_fails(_metadata, self, -EINVAL, NETLAT_CONFIG_FLUSH_MS, 0, 0,
		     0xffffffffu);
}

TEST_F(netlat, config_limits_ok)
{
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	ASSERT_EQ(0, nl_set_config(self->fd, NL_CONFIG_ALL,
				   NETLAT_RING_BYTES_MIN,
				   NETLAT_RING_BYTES_MIN,
				   NETLAT_FLUSH_MS_MAX));
	refresh_info(_metadata, self);
	EXPECT_EQ(NETLAT_RING_BYTES_MIN, self->info.ring_bytes);
	EXPECT_EQ(NETLAT_RING_BYTES_MIN, self->info.watermark);
	EXPECT_EQ((__u32)NETLAT_FLUSH_MS_MAX, self->info.flush_ms);

	ASSERT_EQ(0, nl_set_config(self->fd, NETLAT_CONFIG_WATERMARK |
				   NETLAT_CONFIG_FLUSH_MS, 0, 1, 0));
	refresh_info(_metadata, self);
	EXPECT_EQ(1u, self->info.watermark);
	EXPECT_EQ(0u, self->info.flush_ms);
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
}

TEST_F(netlat, config_ignores_unselected_fields)
{
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	/* ring_bytes 3 and watermark 0 would be invalid, but are not applied */
	ASSERT_EQ(0, nl_set_config(self->fd, NETLAT_CONFIG_FLUSH_MS, 3, 0,
				   g_def.flush_ms + 1));
	refresh_info(_metadata, self);
	EXPECT_EQ(g_def.ring_bytes, self->info.ring_bytes);
	EXPECT_EQ(g_def.watermark, self->info.watermark);
	EXPECT_EQ(g_def.flush_ms + 1, self->info.flush_ms);
}

TEST_F(netlat, config_wm_flush_while_running_ok)
{
	/* Only ring_bytes needs tracing stopped. */
	ASSERT_EQ(0, nl_set_config(self->fd, NETLAT_CONFIG_WATERMARK |
				   NETLAT_CONFIG_FLUSH_MS, 0, 4096, 20));
	refresh_info(_metadata, self);
	EXPECT_NE(0u, self->info.state & NETLAT_STATE_RUNNING);
	EXPECT_EQ(4096u, self->info.watermark);
	EXPECT_EQ(20u, self->info.flush_ms);
}

TEST_F(netlat, config_ring_while_running_ebusy)
{
	uint64_t other = self->info.ring_bytes == 64 * KiB ? 128 * KiB
							     : 64 * KiB;

	EXPECT_EQ(-EBUSY, nl_set_config(self->fd, RING_WM, other, 1024, 0));
	refresh_info(_metadata, self);
	EXPECT_EQ(g_def.ring_bytes, self->info.ring_bytes);
	EXPECT_NE(0u, self->info.state & NETLAT_STATE_RUNNING);
}

TEST_F(netlat, config_ring_empties_rings)
{
	uint64_t other = self->info.ring_bytes == 64 * KiB ? 128 * KiB
							     : 64 * KiB;
	struct netlat_cpu_stats st;
	struct nl_log l;
	char msg[] = "before resize";

	pin(_metadata, g_cpus[0]);
	write_marker(_metadata, self->fd, msg, sizeof(msg));
	write_marker(_metadata, self->fd, msg, sizeof(msg));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	ASSERT_EQ(0, nl_set_config(self->fd, RING_WM, other, other / 4, 0));
	stats(_metadata, self, g_cpus[0], &st);
	EXPECT_EQ(0u, st.written);
	EXPECT_EQ(0u, st.dropped);
	EXPECT_EQ(st.prod, st.cons);
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
	new_log(_metadata, self, &l, true, false);
	read_all(_metadata, self, &l);
	EXPECT_EQ(0u, nl_log_count(&l, NETLAT_REC_MARKER, -1));
	EXPECT_EQ(other, l.stream.ring_bytes);
	nl_log_free(&l);
}

TEST_F(netlat, reset_while_running_ebusy)
{
	struct netlat_cpu_stats st;
	char one = '1';

	pin(_metadata, g_cpus[0]);
	write_marker(_metadata, self->fd, &one, 1);
	EXPECT_EQ(-EBUSY, nl_control(self->fd, NETLAT_IOC_RESET));
	stats(_metadata, self, g_cpus[0], &st);
	EXPECT_EQ(1u, st.written);
}

TEST_F(netlat, start_stop_idempotent)
{
	struct netlat_info info;

	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(0u, info.state & NETLAT_STATE_RUNNING);
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_NE(0u, info.state & NETLAT_STATE_RUNNING);
}

TEST_F(netlat, reset_zeroes_stats_and_seq)
{
	const struct netlat_rec_marker *m;
	struct netlat_cpu_stats st;
	struct nl_log l;
	unsigned int cpu, i;
	char msg[] = "reset";

	pin(_metadata, g_cpus[0]);
	for (i = 0; i < 5; i++)
		write_marker(_metadata, self->fd, msg, sizeof(msg));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_RESET));
	for (cpu = 0; cpu < self->info.nr_cpus; cpu++) {
		stats(_metadata, self, cpu, &st);
		EXPECT_EQ(0u, st.written);
		EXPECT_EQ(0u, st.dropped);
		EXPECT_EQ(0u, st.resyncs);
		EXPECT_EQ(st.prod, st.cons);
	}
	refresh_info(_metadata, self);
	EXPECT_EQ(g_def.ring_bytes, self->info.ring_bytes);
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
	write_marker(_metadata, self->fd, msg, sizeof(msg));

	new_log(_metadata, self, &l, true, true);
	read_all(_metadata, self, &l);
	ASSERT_EQ(1u, nl_log_count(&l, NETLAT_REC_MARKER, -1));
	m = nl_log_nth(&l, NETLAT_REC_MARKER, 0);
	EXPECT_EQ(0u, m->hdr.seq);
	EXPECT_EQ(g_cpus[0], m->hdr.cpu);
	nl_log_free(&l);
}

/* ---- GET_INFO ------------------------------------------------------------ */

/* Highest CPU id in /sys/devices/system/cpu/possible, plus one, or 0. */
static unsigned int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int a, b, max = 0;
	int n;

	if (!f)
		return 0;
	while ((n = fscanf(f, "%u-%u", &a, &b)) >= 1) {
		max = (n == 2 ? b : a) + 1;
		if (fgetc(f) != ',')
			break;
	}
	fclose(f);
	return max;
}

TEST_F(netlat, get_info_sane)
{
	const struct netlat_info *i = &self->info;
	unsigned int possible = possible_cpus();

	EXPECT_EQ((__u32)NETLAT_ABI_VERSION, i->abi_version);
	EXPECT_EQ(sizeof(struct netlat_rec_hdr), i->rec_hdr_size);
	EXPECT_EQ(0u, i->flags);
	EXPECT_LE(1u, i->nr_cpus);
	EXPECT_LE((unsigned int)g_ncpus, i->nr_cpus);
	if (possible) {
		EXPECT_EQ(possible, i->nr_cpus);
	}
	EXPECT_EQ(sysconf(_SC_PAGESIZE), i->page_size);
	EXPECT_LE(NETLAT_RING_BYTES_MIN, i->ring_bytes);
	EXPECT_GE(NETLAT_RING_BYTES_MAX, i->ring_bytes);
	EXPECT_EQ(0u, i->ring_bytes & (i->ring_bytes - 1));
	EXPECT_LE(i->ring_bytes * i->nr_cpus, i->mem_bytes);
	EXPECT_EQ(0u, i->probe_groups_enabled & ~i->probe_groups);
	EXPECT_NE(0u, i->state & NETLAT_STATE_RUNNING);
	EXPECT_EQ(0u, i->state & NETLAT_STATE_CONSUMER);
	EXPECT_LE(1u, i->watermark);
	EXPECT_GE(i->ring_bytes, i->watermark);
	EXPECT_GE((__u32)NETLAT_FLUSH_MS_MAX, i->flush_ms);
	EXPECT_EQ((__u32)NETLAT_REC_MAX_SIZE, i->max_record);
}

/* ---- read() -------------------------------------------------------------- */

TEST_F(netlat, read_short_count_einval)
{
	char buf[NETLAT_REC_MAX_SIZE];
	struct nl_log l;

	EXPECT_EQ(-1, read(self->fd, buf, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->fd, buf, NETLAT_REC_MAX_SIZE - 1));
	EXPECT_EQ(EINVAL, errno);
	/* nothing was consumed: the stream still starts with STREAM */
	new_log(_metadata, self, &l, false, false);
	read_all(_metadata, self, &l);
	EXPECT_TRUE(l.have_stream);
	nl_log_free(&l);
}

TEST_F(netlat, read_stream_record)
{
	const struct netlat_rec_stream *s;
	const struct netlat_rec_marker *m;
	uint64_t mono, rt, expect_rt;
	struct nl_log l;
	char msg[] = "pending before open";

	write_marker(_metadata, self->fd, msg, sizeof(msg));
	self->fd2 = nl_open(0);
	ASSERT_LE(0, self->fd2);
	new_log(_metadata, self, &l, true, false);
	l.expect_stream = true;
	ASSERT_EQ(0, nl_log_drain(&l, self->fd2)) TH_LOG("%s", l.why);
	rt = nl_clock_ns(CLOCK_REALTIME);
	mono = nl_mono_ns();

	s = nl_log_nth(&l, NL_ANY, 0);
	ASSERT_EQ(NETLAT_REC_STREAM, s->hdr.type);
	m = nl_log_nth(&l, NL_ANY, 1);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(NETLAT_REC_MARKER, m->hdr.type);
	EXPECT_EQ(0, memcmp(m->data, msg, sizeof(msg)));

	EXPECT_EQ(0u, s->hdr.seq);
	EXPECT_GE(mono, s->hdr.ts_ns);
	EXPECT_EQ((__u32)NETLAT_ABI_VERSION, s->abi_version);
	EXPECT_EQ(self->info.nr_cpus, s->nr_cpus);
	EXPECT_EQ((__u32)CLOCK_MONOTONIC, s->clock_id);
	EXPECT_NE(0u, s->flags & NETLAT_STREAM_RUNNING);
	EXPECT_EQ(self->info.ring_bytes, s->ring_bytes);
	EXPECT_EQ(self->info.probe_groups, s->probe_groups);
	EXPECT_EQ(0u, s->reserved);
	EXPECT_LT(0u, s->mono_ns);
	EXPECT_GE(mono, s->mono_ns);
	/* the anchor maps mono_ns to wall time: check it against ours */
	expect_rt = rt - (mono - s->mono_ns);
	EXPECT_GT(250000000ll, llabs((long long)(s->realtime_ns - expect_rt)))
		TH_LOG("realtime_ns %llu, expected ~%llu",
		       (unsigned long long)s->realtime_ns,
		       (unsigned long long)expect_rt);
	nl_log_free(&l);
}

TEST_F(netlat, read_stream_flags_stopped)
{
	struct nl_log l;

	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	new_log(_metadata, self, &l, false, false);
	read_all(_metadata, self, &l);
	EXPECT_EQ(0u, l.stream.flags & NETLAT_STREAM_RUNNING);
	nl_log_free(&l);
}

TEST_F(netlat, read_nonblock_eagain)
{
	char buf[4096];
	struct pollfd pfd;
	ssize_t n = 0;
	int i;

	self->fd2 = nl_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd2);
	/* the STREAM record, then whatever is pending, then nothing */
	for (i = 0; i < 1000 && (n = read(self->fd2, buf, sizeof(buf))) > 0;
	     i++)
		;
	ASSERT_EQ(-1, n);
	ASSERT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, read(self->fd2, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	pfd = (struct pollfd){ .fd = self->fd2, .events = POLLIN };
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

TEST_F(netlat, read_blocking_wakes)
{
	struct delayed_writer w = {
		.fd = self->fd, .cpu = -1, .delay_ms = 200, .count = 1,
		.len = 24,
	};
	char buf[4096];
	const struct netlat_rec_marker *m = (const void *)buf;
	ssize_t n;

	discard_all(_metadata, self);
	start_writer(_metadata, &w);
	n = read(self->fd, buf, sizeof(buf));
	join_writer(_metadata, &w);
	ASSERT_EQ((ssize_t)NL_MARKER_SIZE(24), n)
		TH_LOG("read: %s", n < 0 ? strerror(errno) : "");
	EXPECT_EQ(NETLAT_REC_MARKER, m->hdr.type);
	EXPECT_EQ(w.tid, (pid_t)m->tid);
}

TEST_F(netlat, read_whole_records_small_buffer)
{
	static const size_t bufsz[] = { NETLAT_REC_MAX_SIZE, 700 };
	unsigned char payload[NETLAT_MARKER_MAX];
	char buf[1024];
	struct nl_log l;
	unsigned int i, b;
	ssize_t n;

	pin(_metadata, g_cpus[0]);
	discard_all(_metadata, self);
	new_log(_metadata, self, &l, true, false);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	for (b = 0; b < ARRAY_SIZE(bufsz); b++) {
		nl_log_clear(&l);
		for (i = 0; i < 30; i++) {
			size_t len = 1 + (i * 97) % NETLAT_MARKER_MAX;

			nl_fill_pattern(payload, len, i);
			write_marker(_metadata, self->fd, payload, len);
		}
		/* nl_log_read checks that whole records fill each read */
		while ((n = nl_log_read(&l, self->fd, buf, bufsz[b])) > 0) {
			ASSERT_GE((ssize_t)bufsz[b], n);
		}
		ASSERT_EQ(-EAGAIN, n) TH_LOG("%s", l.why);
		EXPECT_EQ(30u, nl_log_count(&l, NETLAT_REC_MARKER, -1));
	}
	nl_log_free(&l);
}

TEST_F(netlat, read_second_consumer_ebusy)
{
	char buf[NETLAT_REC_MAX_SIZE];
	struct netlat_info info;
	struct nl_log l;

	discard_all(_metadata, self);	/* self->fd consumes */
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_NE(0u, info.state & NETLAT_STATE_CONSUMER);

	self->fd2 = nl_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd2);
	EXPECT_EQ(-1, read(self->fd2, buf, sizeof(buf)));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-EBUSY, mmap_err(self->fd2, self->info.page_size,
				   PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				   NETLAT_MMAP_CONS));

	close(self->fd);
	self->fd = -1;
	new_log(_metadata, self, &l, false, false);
	l.expect_stream = true;
	EXPECT_EQ(0, nl_log_drain(&l, self->fd2)) TH_LOG("%s", l.why);
	nl_log_free(&l);
	close(self->fd2);
	self->fd2 = -1;
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(0u, info.state & NETLAT_STATE_CONSUMER);
}

TEST_F(netlat, consumer_held_by_mapping)
{
	char buf[NETLAT_REC_MAX_SIZE];
	void *cons;

	/* fd2 maps a CONS page and is closed: the mapping still consumes */
	self->fd2 = nl_open(0);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, test_mmap(self, &cons, self->fd2, self->info.page_size,
			       PROT_READ | PROT_WRITE, MAP_SHARED, 0,
			       NETLAT_MMAP_CONS));
	close(self->fd2);
	self->fd2 = -1;
	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(EBUSY, errno);
	test_munmap(self, cons);
	EXPECT_LT(0, read(self->fd, buf, sizeof(buf)));
}

/* ---- markers ------------------------------------------------------------- */

TEST_F(netlat, marker_roundtrip)
{
	static const size_t lens[] = {
		1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 100, 255, 256,
		NETLAT_MARKER_MAX - 1, NETLAT_MARKER_MAX,
	};
	unsigned char payload[NETLAT_MARKER_MAX];
	const struct netlat_rec_marker *m;
	struct nl_log l;
	unsigned int i;

	pin(_metadata, g_cpus[0]);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		nl_fill_pattern(payload, lens[i], i);
		write_marker(_metadata, self->fd, payload, lens[i]);
	}
	memset(payload, 0, 8);
	write_marker(_metadata, self->fd, payload, 8);
	memset(payload, 0xff, 13);
	write_marker(_metadata, self->fd, payload, 13);

	new_log(_metadata, self, &l, true, true);
	read_all(_metadata, self, &l);
	ASSERT_EQ(ARRAY_SIZE(lens) + 2, nl_log_count(&l, NL_DATA, -1));
	for (i = 0; i < ARRAY_SIZE(lens) + 2; i++) {
		size_t len = i < ARRAY_SIZE(lens) ? lens[i] :
			     i == ARRAY_SIZE(lens) ? 8 : 13;

		m = nl_log_nth(&l, NETLAT_REC_MARKER, i);
		ASSERT_NE(NULL, m);
		if (i < ARRAY_SIZE(lens))
			nl_fill_pattern(payload, len, i);
		else
			memset(payload, i == ARRAY_SIZE(lens) ? 0 : 0xff, len);
		ASSERT_EQ(len, m->len);
		/* size, zero padding: checked by nl_check_rec */
		EXPECT_EQ(NL_MARKER_SIZE(len), m->hdr.size);
		EXPECT_EQ(0, memcmp(payload, m->data, len))
			TH_LOG("payload of %zu bytes differs", len);
		EXPECT_EQ(i, m->hdr.seq);
	}
	nl_log_free(&l);
}

TEST_F(netlat, marker_fields)
{
	struct delayed_writer w = {
		.fd = self->fd, .cpu = g_cpus[g_ncpus - 1], .count = 1,
		.len = 5,
	};
	const struct netlat_rec_marker *m, *mine, *other;
	uint64_t t0, t1;
	struct nl_log l;
	char msg[] = "fields";

	pin(_metadata, g_cpus[0]);
	t0 = nl_mono_ns();
	write_marker(_metadata, self->fd, msg, sizeof(msg));
	t1 = nl_mono_ns();
	start_writer(_metadata, &w);
	join_writer(_metadata, &w);

	new_log(_metadata, self, &l, true, false);
	read_all(_metadata, self, &l);
	ASSERT_EQ(2u, nl_log_count(&l, NETLAT_REC_MARKER, -1));
	/* read() may return the CPUs in any order: tell them by length */
	mine = nl_log_nth(&l, NETLAT_REC_MARKER, 0);
	other = nl_log_nth(&l, NETLAT_REC_MARKER, 1);
	if (mine->len != sizeof(msg)) {
		m = mine;
		mine = other;
		other = m;
	}
	m = mine;
	ASSERT_EQ(sizeof(msg), m->len);
	EXPECT_EQ(getpid(), (pid_t)m->pid);
	EXPECT_EQ(gettid(), (pid_t)m->tid);
	EXPECT_EQ(g_cpus[0], m->hdr.cpu);
	EXPECT_LE(t0, m->hdr.ts_ns);
	EXPECT_GE(t1, m->hdr.ts_ns);

	m = other;
	ASSERT_EQ(5u, m->len);
	EXPECT_EQ(getpid(), (pid_t)m->pid);
	EXPECT_EQ(w.tid, (pid_t)m->tid);
	EXPECT_NE(gettid(), (pid_t)m->tid);
	EXPECT_EQ(w.cpu, m->hdr.cpu);
	EXPECT_LE(w.t_start, m->hdr.ts_ns);
	EXPECT_GE(w.t_end, m->hdr.ts_ns);
	nl_log_free(&l);
}

TEST_F(netlat, marker_len_zero)
{
	struct netlat_cpu_stats before;
	struct nl_log l;
	char c = 0;

	pin(_metadata, g_cpus[0]);
	stats(_metadata, self, g_cpus[0], &before);
	EXPECT_EQ(0, write(self->fd, &c, 0));
	EXPECT_EQ(0, write(self->fd, NULL, 0));
	expect_stats_unchanged(_metadata, self, g_cpus[0], &before);
	new_log(_metadata, self, &l, true, false);
	read_all(_metadata, self, &l);
	EXPECT_EQ(0u, nl_log_count(&l, NETLAT_REC_MARKER, -1));
	nl_log_free(&l);
}

TEST_F(netlat, marker_too_long_einval)
{
	static unsigned char big[1 << 20];
	static const size_t lens[] = {
		NETLAT_MARKER_MAX + 1, NETLAT_REC_MAX_SIZE, 4096, sizeof(big),
	};
	struct netlat_cpu_stats before;
	unsigned int i;

	pin(_metadata, g_cpus[0]);
	stats(_metadata, self, g_cpus[0], &before);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		EXPECT_EQ(-EINVAL, nl_write(self->fd, big, lens[i]))
			TH_LOG("len %zu", lens[i]);
	}
	expect_stats_unchanged(_metadata, self, g_cpus[0], &before);
}

TEST_F(netlat, marker_bad_pointer_efault)
{
	const struct netlat_rec_marker *m;
	struct netlat_cpu_stats before;
	struct nl_log l;
	void *volatile null = NULL;	/* hidden from -Wnonnull */
	void *gone;
	char ok = 'k';

	gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	munmap(gone, 4096);
	pin(_metadata, g_cpus[0]);
	stats(_metadata, self, g_cpus[0], &before);
	EXPECT_EQ(-EFAULT, nl_write(self->fd, null, 10));
	EXPECT_EQ(-EFAULT, nl_write(self->fd, gone, 10));
	expect_stats_unchanged(_metadata, self, g_cpus[0], &before);
	/* the failed writes used no sequence number */
	write_marker(_metadata, self->fd, &ok, 1);
	new_log(_metadata, self, &l, true, true);
	read_all(_metadata, self, &l);
	ASSERT_EQ(1u, nl_log_count(&l, NL_DATA, -1));
	m = nl_log_nth(&l, NETLAT_REC_MARKER, 0);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(0u, m->hdr.seq);
	nl_log_free(&l);
}

TEST_F(netlat, marker_while_stopped_discarded)
{
	const struct netlat_rec_marker *m;
	struct netlat_cpu_stats before;
	struct nl_log l;
	char msg[] = "stopped";

	pin(_metadata, g_cpus[0]);
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	stats(_metadata, self, g_cpus[0], &before);
	write_marker(_metadata, self->fd, msg, sizeof(msg));
	expect_stats_unchanged(_metadata, self, g_cpus[0], &before);
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
	write_marker(_metadata, self->fd, msg, 3);
	new_log(_metadata, self, &l, true, true);
	read_all(_metadata, self, &l);
	ASSERT_EQ(1u, nl_log_count(&l, NL_DATA, -1));
	m = nl_log_nth(&l, NETLAT_REC_MARKER, 0);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(3u, m->len);
	EXPECT_EQ(0u, m->hdr.seq);	/* the discarded write used no seq */
	nl_log_free(&l);
}

/* ---- poll() -------------------------------------------------------------- */

static int poll_in(int fd, int timeout_ms, short *revents)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, timeout_ms);

	*revents = pfd.revents;
	return ret;
}

TEST_F(netlat, poll_pending_immediate)
{
	short rev;
	char c = 'p';

	discard_all(_metadata, self);
	EXPECT_EQ(0, poll_in(self->fd, 0, &rev));
	write_marker(_metadata, self->fd, &c, 1);
	ASSERT_EQ(1, poll_in(self->fd, 0, &rev));
	EXPECT_NE(0, rev & POLLIN);
	discard_all(_metadata, self);
	EXPECT_EQ(0, poll_in(self->fd, 0, &rev));
}

TEST_F(netlat, poll_woken_by_flush)
{
	struct delayed_writer w = {
		.fd = self->fd, .cpu = -1, .delay_ms = 200, .count = 1,
		.len = 8,
	};
	uint64_t t0, t1, late;
	short rev;
	int ret;

	reconfigure(_metadata, self, g_def.ring_bytes, g_def.watermark, 50);
	discard_all(_metadata, self);
	t0 = nl_mono_ns();
	start_writer(_metadata, &w);
	ret = poll_in(self->fd, 10000, &rev);
	t1 = nl_mono_ns();
	join_writer(_metadata, &w);
	ASSERT_EQ(1, ret);
	EXPECT_NE(0, rev & POLLIN);
	late = t1 > w.t_end ? (t1 - w.t_end) / 1000000 : 0;
	/* 50 ms flush period; generous slack for emulated CPUs */
	EXPECT_GT(1000u, late) TH_LOG("woken %llu ms after the write",
				     (unsigned long long)late);
	TH_LOG("poll blocked %llu ms, woken %llu ms after the write",
	       (unsigned long long)(t1 - t0) / 1000000,
	       (unsigned long long)late);
}

/* flush_ms 0, watermark a quarter of a 64 KiB ring, every ring empty. */
static void setup_watermark_only(struct __test_metadata *_metadata,
				 FIXTURE_DATA(netlat) *self)
{
	reconfigure(_metadata, self, 64 * KiB, 16 * KiB, 0);
	discard_all(_metadata, self);
}

/*
 * A marker below the watermark must not wake a sleeping poller, so poll()
 * sleeps its whole timeout. (It may still return 1: at the timeout the
 * kernel checks readiness once more and data is pending then.)
 */
TEST_F(netlat, poll_flush0_no_wake_below_watermark)
{
	const unsigned int timeout_ms = 300;
	uint64_t slept_ms = 0;
	int attempt;
	short rev;

	setup_watermark_only(_metadata, self);
	for (attempt = 0; attempt < 3; attempt++) {
		struct delayed_writer w = {
			.fd = self->fd, .cpu = -1, .delay_ms = 100,
			.count = 1, .len = 8,
		};
		uint64_t t_poll;

		ASSERT_EQ(0, poll_in(self->fd, 0, &rev));
		start_writer(_metadata, &w);
		t_poll = nl_mono_ns();
		poll_in(self->fd, timeout_ms, &rev);
		slept_ms = (nl_mono_ns() - t_poll) / 1000000;
		join_writer(_metadata, &w);
		/* only conclusive if the marker came while poll slept */
		if (w.t_start > t_poll)
			break;
		discard_all(_metadata, self);
	}
	ASSERT_LT(attempt, 3) TH_LOG("the writer never ran after poll began");
	EXPECT_LE(timeout_ms - 10, slept_ms)
		TH_LOG("poll woken after %llu ms by a marker written after 100 ms",
		       (unsigned long long)slept_ms);
	/* the marker is pending, though: POLLIN without waiting */
	ASSERT_EQ(1, poll_in(self->fd, 0, &rev));
	EXPECT_NE(0, rev & POLLIN);
}

TEST_F(netlat, poll_flush0_watermark_wakes)
{
	struct delayed_writer w = {
		.fd = self->fd, .cpu = g_cpus[0], .delay_ms = 100,
		.len = 64,
	};
	uint64_t t_ret;
	short rev;
	int ret;

	setup_watermark_only(_metadata, self);
	/* crosses 16 KiB on one CPU, far from filling 64 KiB */
	w.count = 16 * KiB / NL_MARKER_SIZE(w.len) + 20;
	start_writer(_metadata, &w);
	ret = poll_in(self->fd, 5000, &rev);
	t_ret = nl_mono_ns();
	join_writer(_metadata, &w);
	ASSERT_EQ(1, ret);
	EXPECT_NE(0, rev & POLLIN);
	/* woken, not just ready when the timeout ran out */
	EXPECT_GT(w.t_end + 2000000000ull, t_ret)
		TH_LOG("poll returned %lld ms after the last of %u markers",
		       (long long)(t_ret - w.t_end) / 1000000, w.count);
}

/* ---- mmap ---------------------------------------------------------------- */

TEST_F(netlat, mmap_consume_all_cpus)
{
	unsigned char payload[NETLAT_MARKER_MAX];
	struct netlat_cpu_stats st;
	struct nl_log l;
	unsigned int cpu, k;
	int c, round;

	reconfigure(_metadata, self, 8 * KiB, 2 * KiB, 50);
	map_rings(_metadata, self);
	for (cpu = 0; cpu < self->info.nr_cpus; cpu++) {
		struct nl_ring *r = &self->rings[cpu];

		stats(_metadata, self, cpu, &st);
		EXPECT_EQ(self->info.ring_bytes, r->prod->ring_bytes);
		EXPECT_EQ(st.prod, r->prod->prod);
		EXPECT_EQ(st.cons, r->cons->cons);
		EXPECT_EQ(st.written, r->prod->written);
		EXPECT_EQ(st.dropped, r->prod->dropped);
	}
	new_log(_metadata, self, &l, true, true);
	for (c = 0; c < g_ncpus; c++) {
		struct nl_ring *r = &self->rings[g_cpus[c]];

		pin(_metadata, g_cpus[c]);
		/* 5 rounds of ~5.8 KiB in an 8 KiB ring: records wrap */
		for (round = 0; round < 5; round++) {
			nl_log_clear(&l);
			for (k = 0; k < 40; k++) {
				nl_fill_pattern(payload, 1 + (k * 37) % 200,
						k + 100 * round);
				write_marker(_metadata, self->fd, payload,
					     1 + (k * 37) % 200);
			}
			ASSERT_EQ(40, nl_ring_consume(r, &l))
				TH_LOG("%s", l.why);
			for (k = 0; k < 40; k++) {
				const struct netlat_rec_marker *m =
					nl_log_nth(&l, NL_DATA, k);

				ASSERT_EQ(NETLAT_REC_MARKER, m->hdr.type);
				ASSERT_EQ(1 + (k * 37) % 200, m->len);
				nl_fill_pattern(payload, m->len,
						k + 100 * round);
				EXPECT_EQ(0, memcmp(payload, m->data, m->len));
				EXPECT_EQ(gettid(), (pid_t)m->tid);
			}
			stats(_metadata, self, g_cpus[c], &st);
			EXPECT_EQ(r->cons->cons, st.cons);
			EXPECT_EQ(st.prod, st.cons);
			EXPECT_EQ(40u * (round + 1), st.written);
			EXPECT_EQ(0u, st.dropped);
		}
		EXPECT_LT(self->info.ring_bytes, r->cons->cons);
		/* the data is mapped twice in a row */
		EXPECT_EQ(0, memcmp(r->data, r->data + r->ring_bytes,
				    r->ring_bytes));
	}
	unpin();
	for (cpu = 0; cpu < self->info.nr_cpus; cpu++) {
		EXPECT_EQ(0u, nl_ring_pending(&self->rings[cpu]))
			TH_LOG("cpu %u", cpu);
	}
	nl_log_free(&l);
}

TEST_F(netlat, mmap_bad_length_einval)
{
	size_t pg = self->info.page_size, data = nl_data_len(&self->info);
	const int rw = PROT_READ | PROT_WRITE;

	EXPECT_EQ(-EINVAL, mmap_err(self->fd, 2 * pg, rw, MAP_SHARED, 0,
				    NETLAT_MMAP_CONS));
	EXPECT_EQ(-EINVAL, mmap_err(self->fd, data - pg, PROT_READ,
				    MAP_SHARED, 0, NETLAT_MMAP_DATA));
	EXPECT_EQ(-EINVAL, mmap_err(self->fd, data + pg, PROT_READ,
				    MAP_SHARED, 0, NETLAT_MMAP_DATA));
	EXPECT_EQ(-EINVAL, mmap_err(self->fd, pg + self->info.ring_bytes,
				    PROT_READ, MAP_SHARED, 0,
				    NETLAT_MMAP_DATA));
	EXPECT_EQ(-EINVAL, mmap_err(self->fd, pg, PROT_READ, MAP_SHARED, 0,
				    NETLAT_MMAP_DATA));
}

TEST_F(netlat, mmap_private_einval)
{
	EXPECT_EQ(-EINVAL, mmap_err(self->fd, self->info.page_size,
				    PROT_READ | PROT_WRITE, MAP_PRIVATE, 0,
				    NETLAT_MMAP_CONS));
	EXPECT_EQ(-EINVAL, mmap_err(self->fd, nl_data_len(&self->info),
				    PROT_READ, MAP_PRIVATE, 0,
				    NETLAT_MMAP_DATA));
}

TEST_F(netlat, mmap_data_write_eperm)
{
	EXPECT_EQ(-EPERM, mmap_err(self->fd, nl_data_len(&self->info),
				   PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				   NETLAT_MMAP_DATA));
}

TEST_F(netlat, mmap_data_mprotect_write_fails)
{
	size_t len = nl_data_len(&self->info);
	void *p;

	ASSERT_EQ(0, test_mmap(self, &p, self->fd, len, PROT_READ, MAP_SHARED,
			       0, NETLAT_MMAP_DATA));
	EXPECT_EQ(-1, mprotect(p, len, PROT_READ | PROT_WRITE));
	EXPECT_EQ(-1, mprotect(p, self->info.page_size,
			       PROT_READ | PROT_WRITE));
	test_munmap(self, p);
}

TEST_F(netlat, mmap_bad_cpu_einval)
{
	const uint32_t nr = self->info.nr_cpus;
	/* above 2^31 the VFS rejects the offset itself (EOVERFLOW) */
	const uint32_t bad[] = { nr, nr + 1, 4096, 0x7fffffffu };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, mmap_err(self->fd, self->info.page_size,
					    PROT_READ | PROT_WRITE,
					    MAP_SHARED, bad[i],
					    NETLAT_MMAP_CONS))
			TH_LOG("CONS of cpu %u", bad[i]);
		EXPECT_EQ(-EINVAL, mmap_err(self->fd,
					    nl_data_len(&self->info),
					    PROT_READ, MAP_SHARED, bad[i],
					    NETLAT_MMAP_DATA))
			TH_LOG("DATA of cpu %u", bad[i]);
	}
}

TEST_F(netlat, mmap_bad_area_einval)
{
	const uint64_t pg = self->info.page_size;
	const uint64_t bad[] = {
		pg, NETLAT_MMAP_SNAPSHOT + pg, NETLAT_MMAP_DATA + pg,
		NETLAT_MMAP_DATA | (1ull << 30), 1,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, mmap_err(self->fd, pg, PROT_READ,
					    MAP_SHARED, 0, bad[i]))
			TH_LOG("area offset 0x%llx",
			       (unsigned long long)bad[i]);
	}
}

TEST_F(netlat, config_while_mapped_ebusy)
{
	uint64_t other = self->info.ring_bytes == 64 * KiB ? 128 * KiB
							     : 64 * KiB;
	size_t pg = self->info.page_size;
	void *p;

	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	/* a DATA mapping */
	ASSERT_EQ(0, test_mmap(self, &p, self->fd, nl_data_len(&self->info),
			       PROT_READ, MAP_SHARED, 0, NETLAT_MMAP_DATA));
	EXPECT_EQ(-EBUSY, nl_set_config(self->fd, RING_WM, other, 1024, 0));
	test_munmap(self, p);
	/* a CONS page, its file closed */
	self->fd2 = nl_open(0);
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, test_mmap(self, &p, self->fd2, pg,
			       PROT_READ | PROT_WRITE, MAP_SHARED, 0,
			       NETLAT_MMAP_CONS));
	close(self->fd2);
	self->fd2 = -1;
	EXPECT_EQ(-EBUSY, nl_set_config(self->fd, RING_WM, other, 1024, 0));
	test_munmap(self, p);
	EXPECT_EQ(0, nl_set_config(self->fd, RING_WM, other, 1024, 0));
}

TEST_F(netlat, mmap_data_not_consumer)
{
	void *p;

	discard_all(_metadata, self);	/* self->fd consumes */
	self->fd2 = nl_open(0);
	ASSERT_LE(0, self->fd2);
	/* only the CONS page makes a consumer */
	EXPECT_EQ(0, test_mmap(self, &p, self->fd2, nl_data_len(&self->info),
			       PROT_READ, MAP_SHARED, 0, NETLAT_MMAP_DATA));
	EXPECT_EQ(-EBUSY, mmap_err(self->fd2, self->info.page_size,
				   PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				   NETLAT_MMAP_CONS));
}

TEST_F(netlat, mmap_bogus_cons_resync)
{
	const int c = g_cpus[0];
	struct nl_ring *r = &self->rings[c];
	const struct netlat_rec_lost *lost;
	const struct netlat_rec_marker *m;
	struct netlat_cpu_stats st;
	struct nl_log l;
	char a = 'A', b = 'B', cc = 'C';

	pin(_metadata, c);
	ASSERT_EQ(0, nl_ring_map(self->fd, &self->info, c, r));
	write_marker(_metadata, self->fd, &a, 1);		/* seq 0 */
	/* a consumer index ahead of the producer is invalid */
	__atomic_store_n(&r->cons->cons, r->prod->prod + 64,
			 __ATOMIC_RELEASE);
	write_marker(_metadata, self->fd, &b, 1);		/* seq 1 */
	stats(_metadata, self, c, &st);
	EXPECT_EQ(1u, st.written);
	EXPECT_EQ(1u, st.dropped) TH_LOG("an invalid cons must read as full");
	nl_ring_unmap(r);

	/* read() resyncs: A is discarded, B was dropped */
	new_log(_metadata, self, &l, true, false);
	read_all(_metadata, self, &l);
	EXPECT_EQ(0u, nl_log_count(&l, NL_DATA, c));
	stats(_metadata, self, c, &st);
	EXPECT_EQ(1u, st.resyncs);
	EXPECT_EQ(st.prod, st.cons);

	write_marker(_metadata, self->fd, &cc, 1);
	nl_log_clear(&l);
	read_all(_metadata, self, &l);
	ASSERT_EQ(2u, nl_log_count(&l, NL_DATA, c));
	lost = nl_log_nth(&l, NL_DATA, 0);
	m = nl_log_nth(&l, NL_DATA, 1);
	ASSERT_EQ(NETLAT_REC_LOST, lost->hdr.type);
	EXPECT_EQ(1u, lost->count);
	EXPECT_EQ(1u, lost->first_seq);
	EXPECT_EQ(2u, lost->hdr.seq);
	ASSERT_EQ(NETLAT_REC_MARKER, m->hdr.type);
	EXPECT_EQ('C', m->data[0]);
	EXPECT_EQ(3u, m->hdr.seq);
	nl_log_free(&l);
}

/* ---- ring full, stalled reader ------------------------------------------ */

struct idx_payload {
	uint32_t tag;
	uint32_t cpu;
	uint64_t idx;
};

#define IDX_TAG 0x534c4e4e	/* "NNLS" */

static void write_idx(struct __test_metadata *_metadata, int fd, int cpu,
		      uint64_t idx)
{
	struct idx_payload p = { IDX_TAG, cpu, idx };

	write_marker(_metadata, fd, &p, sizeof(p));
}

static uint64_t marker_idx(const struct netlat_rec_marker *m)
{
	struct idx_payload p;

	memcpy(&p, m->data, sizeof(p));
	return p.idx;
}

TEST_F(netlat, ring_full_drops_newest)
{
	const size_t rec = NL_MARKER_SIZE(sizeof(struct idx_payload));
	const uint64_t K = 1000;
	const int c = g_cpus[0];
	const struct netlat_rec_lost *lost;
	const struct netlat_rec_marker *m;
	struct netlat_cpu_stats st;
	struct nl_log l;
	uint64_t i, S;

	reconfigure(_metadata, self, NETLAT_RING_BYTES_MIN, 1024, 50);
	pin(_metadata, c);
	for (i = 0; i < K; i++)
		write_idx(_metadata, self->fd, c, i);	/* all return len */
	stats(_metadata, self, c, &st);
	S = st.written;
	TH_LOG("%llu of %llu markers stored in a %llu-byte ring",
	       (unsigned long long)S, (unsigned long long)K,
	       (unsigned long long)self->info.ring_bytes);
	EXPECT_EQ(K - S, st.dropped);
	ASSERT_GE(self->info.ring_bytes, S * rec);
	EXPECT_LE(self->info.ring_bytes / 2, S * rec);
	EXPECT_EQ(S * rec, st.prod - st.cons);

	/* the stored markers are the first ones */
	new_log(_metadata, self, &l, true, true);
	read_all(_metadata, self, &l);
	ASSERT_EQ(S, nl_log_count(&l, NL_DATA, c));
	for (i = 0; i < S; i++) {
		m = nl_log_nth(&l, NETLAT_REC_MARKER, i);
		ASSERT_NE(NULL, m);
		EXPECT_EQ(i, marker_idx(m));
		EXPECT_EQ(i, m->hdr.seq);
	}

	/* the next stored marker is preceded by LOST covering the drops */
	write_idx(_metadata, self->fd, c, K);
	nl_log_clear(&l);
	read_all(_metadata, self, &l);
	ASSERT_EQ(2u, nl_log_count(&l, NL_DATA, c));
	lost = nl_log_nth(&l, NL_DATA, 0);
	m = nl_log_nth(&l, NL_DATA, 1);
	ASSERT_EQ(NETLAT_REC_LOST, lost->hdr.type);
	EXPECT_EQ(K - S, lost->count);
	EXPECT_EQ(S, lost->first_seq);
	EXPECT_EQ(K, lost->hdr.seq);
	ASSERT_EQ(NETLAT_REC_MARKER, m->hdr.type);
	EXPECT_EQ(K, marker_idx(m));
	EXPECT_EQ(K + 1, m->hdr.seq);
	stats(_metadata, self, c, &st);
	EXPECT_EQ(S + 2, st.written);
	EXPECT_EQ(K - S, st.dropped);
	nl_log_free(&l);
}

/* ---- conservation: received + lost == written, concurrently ------------- */

struct cons_writer {
	pthread_t th;
	int fd;
	int cpu;
	uint64_t target;	/* markers to write */
	uint64_t deadline;	/* ... unless CLOCK_MONOTONIC passes this */
	const int *go;
	uint64_t written;	/* out: write() calls that returned len */
	int err;		/* out */
	int done;		/* out */
};

static void *cons_writer_main(void *arg)
{
	struct cons_writer *w = arg;
	struct idx_payload p = { IDX_TAG, w->cpu, 0 };
	uint64_t i;

	w->err = nl_pin_thread(w->cpu);
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; !w->err && i < w->target; i++) {
		ssize_t n;

		p.idx = i;
		n = nl_write(w->fd, &p, sizeof(p));
		if (n != sizeof(p)) {
			w->err = n < 0 ? (int)n : -EIO;
			break;
		}
		w->written = i + 1;
		if (!(i & 1023) && nl_mono_ns() > w->deadline)
			break;
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Per-CPU expectations checked on every marker the consumer sees. */
struct cons_check {
	int64_t *last_idx;	/* -1 before the first marker */
	uint64_t *sentinel;	/* idx of the last marker, once known */
	bool *seen_sentinel;
	uint64_t *markers;	/* writers' markers received */
};

static int cons_on_marker(struct nl_log *l, const struct netlat_rec_marker *m)
{
	struct cons_check *cc = l->priv;
	unsigned int c = m->hdr.cpu;
	struct idx_payload p;
	uint64_t lost = l->cpu[c].lost_pending;

	if (m->len != sizeof(p))
		return nl_fail(l->why, sizeof(l->why), "marker len %u",
			       m->len);
	memcpy(&p, m->data, sizeof(p));
	if (p.tag != IDX_TAG || p.cpu != c)
		return nl_fail(l->why, sizeof(l->why),
			       "marker of writer %u (tag 0x%x) in ring %u",
			       p.cpu, p.tag, c);
	if ((int64_t)p.idx <= cc->last_idx[c])
		return nl_fail(l->why, sizeof(l->why),
			       "cpu %u: index %llu after %lld", c,
			       (unsigned long long)p.idx,
			       (long long)cc->last_idx[c]);
	/* every index skipped is accounted for by LOST records */
	if (p.idx - (uint64_t)(cc->last_idx[c] + 1) != lost)
		return nl_fail(l->why, sizeof(l->why),
			       "cpu %u: index %llu after %lld, but LOST says %llu",
			       c, (unsigned long long)p.idx,
			       (long long)cc->last_idx[c],
			       (unsigned long long)lost);
	cc->last_idx[c] = (int64_t)p.idx;
	if (p.idx == cc->sentinel[c])
		cc->seen_sentinel[c] = true;
	else
		cc->markers[c]++;
	return 0;
}

/* Consume what is there, via read() or the rings: records, or -1. */
static long consume(FIXTURE_DATA(netlat) *self, struct nl_log *l,
		    bool use_mmap, char *buf, size_t cap)
{
	uint64_t before = l->nrec;
	unsigned int cpu;
	ssize_t n;

	if (use_mmap) {
		for (cpu = 0; cpu < self->info.nr_cpus; cpu++)
			if (nl_ring_consume(&self->rings[cpu], l) < 0)
				return -1;
		return (long)(l->nrec - before);
	}
	n = nl_log_read(l, self->fd, buf, cap);
	if (n == -EAGAIN)
		return 0;
	if (n < 0) {
		if (n != -EPROTO)
			nl_fail(l->why, sizeof(l->why), "read: %s",
				strerror((int)-n));
		return -1;
	}
	return (long)(l->nrec - before);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static void conservation(struct __test_metadata *_metadata,
			 FIXTURE_DATA(netlat) *self, bool use_mmap)
{
	const uint64_t M = env_u64("NETLAT_TEST_MARKERS", 50000);
	const uint64_t secs = env_u64("NETLAT_TEST_SECONDS", 8);
	const size_t cap = 256 * KiB;
	unsigned int nr, cpu;
	struct cons_writer *w;
	struct cons_check cc;
	struct nl_log l;
	uint64_t deadline, sum_w = 0, sum_m = 0, sum_l = 0;
	int go = 0, c, done, rounds = 0;
	char *buf;
	long n;

	reconfigure(_metadata, self, 64 * KiB, 16 * KiB, 50);
	nr = self->info.nr_cpus;
	new_log(_metadata, self, &l, false, true);
	l.expect_stream = !use_mmap;
	l.on_marker = cons_on_marker;
	l.priv = &cc;
	cc.last_idx = calloc(nr, sizeof(*cc.last_idx));
	cc.sentinel = calloc(nr, sizeof(*cc.sentinel));
	cc.seen_sentinel = calloc(nr, sizeof(*cc.seen_sentinel));
	cc.markers = calloc(nr, sizeof(*cc.markers));
	w = calloc(g_ncpus, sizeof(*w));
	buf = malloc(cap);
	ASSERT_TRUE(cc.last_idx && cc.sentinel && cc.seen_sentinel &&
		    cc.markers && w && buf);
	for (cpu = 0; cpu < nr; cpu++) {
		cc.last_idx[cpu] = -1;
		cc.sentinel[cpu] = UINT64_MAX;
	}
	if (use_mmap) {
		map_rings(_metadata, self);
	} else {
		ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	}

	/* one pinned writer per CPU; this thread consumes, unpinned */
	deadline = nl_mono_ns() + secs * 1000000000ull;
	for (c = 0; c < g_ncpus; c++) {
		w[c] = (struct cons_writer){
			.fd = self->fd, .cpu = g_cpus[c], .target = M,
			.deadline = deadline, .go = &go,
		};
		ASSERT_EQ(0, pthread_create(&w[c].th, NULL, cons_writer_main,
					    &w[c]));
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	do {
		done = 0;
		for (c = 0; c < g_ncpus; c++)
			done += __atomic_load_n(&w[c].done, __ATOMIC_ACQUIRE);
		n = consume(self, &l, use_mmap, buf, cap);
		ASSERT_LE(0, n) TH_LOG("%s", l.why);
		/* now and then a slow reader, so that rings overflow */
		if (++rounds % 16 == 0)
			nl_sleep_ms(20);
		else if (!n)
			nl_sleep_ms(1);
	} while (done < g_ncpus || n > 0);
	for (c = 0; c < g_ncpus; c++) {
		ASSERT_EQ(0, pthread_join(w[c].th, NULL));
		ASSERT_EQ(0, w[c].err) TH_LOG("writer on cpu %d: %s",
					      w[c].cpu, strerror(-w[c].err));
	}

	/*
	 * Rings are empty: one last marker per CPU is stored for sure and
	 * flushes the pending LOST count before it.
	 */
	for (c = 0; c < g_ncpus; c++) {
		cc.sentinel[w[c].cpu] = w[c].written;
		pin(_metadata, w[c].cpu);
		write_idx(_metadata, self->fd, w[c].cpu, w[c].written);
	}
	unpin();
	deadline = nl_mono_ns() + 10000000000ull;
	for (;;) {
		for (c = 0; c < g_ncpus && cc.seen_sentinel[w[c].cpu]; c++)
			;
		if (c == g_ncpus)
			break;
		ASSERT_LT(nl_mono_ns(), deadline)
			TH_LOG("last marker of cpu %d not received", w[c].cpu);
		n = consume(self, &l, use_mmap, buf, cap);
		ASSERT_LE(0, n) TH_LOG("%s", l.why);
		if (!n)
			nl_sleep_ms(5);
	}

	for (c = 0; c < g_ncpus; c++) {
		const struct nl_cpu_track *t = &l.cpu[w[c].cpu];
		struct netlat_cpu_stats st;

		cpu = w[c].cpu;
		TH_LOG("cpu %u: written %llu received %llu lost %llu in %llu LOST records",
		       cpu, (unsigned long long)w[c].written,
		       (unsigned long long)cc.markers[cpu],
		       (unsigned long long)t->lost,
		       (unsigned long long)t->lost_records);
		/* the oracle: what this test wrote */
		EXPECT_EQ(w[c].written, cc.markers[cpu] + t->lost);
		EXPECT_FALSE(t->last_lost);
		/* secondary: the module's own counters */
		stats(_metadata, self, cpu, &st);
		EXPECT_EQ(t->records, st.written);
		EXPECT_EQ(t->lost, st.dropped);
		EXPECT_EQ(st.prod, st.cons);
		if (use_mmap) {
			EXPECT_EQ(st.written,
				  self->rings[cpu].prod->written);
			EXPECT_EQ(st.dropped,
				  self->rings[cpu].prod->dropped);
		}
		sum_w += w[c].written;
		sum_m += cc.markers[cpu];
		sum_l += t->lost;
	}
	EXPECT_EQ(sum_w, sum_m + sum_l);
	for (cpu = 0; cpu < nr; cpu++)
		if (cc.sentinel[cpu] == UINT64_MAX) {
			EXPECT_EQ(0u, l.cpu[cpu].records)
				TH_LOG("records on cpu %u, which had no writer",
				       cpu);
		}
	if (!sum_l)
		TH_LOG("note: no record was dropped this time");
	if (sum_w < M * g_ncpus)
		TH_LOG("note: writers stopped at the %llu s deadline",
		       (unsigned long long)secs);
	free(cc.last_idx);
	free(cc.sentinel);
	free(cc.seen_sentinel);
	free(cc.markers);
	free(w);
	free(buf);
	nl_log_free(&l);
}

TEST_F_TIMEOUT(netlat, conservation_read, 120)
{
	conservation(_metadata, self, false);
}

TEST_F_TIMEOUT(netlat, conservation_mmap, 120)
{
	conservation(_metadata, self, true);
}

TEST_HARNESS_MAIN
