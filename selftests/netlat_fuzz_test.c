// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzzing of the /dev/netlat interface: a seeded random sequence of
 * ioctls (random command numbers, sizes, flags, reserved fields and
 * pointers: valid, NULL, unmapped, read-only, kernel, straddling a guard
 * page), reads (random sizes and buffers), writes, mmaps (random lengths,
 * offsets, protections and flags, with random bytes written into the
 * writable consumer page) and polls, on two open files.
 *
 * Every call must end in a defined result: success with a sane value, or
 * one of the errors the ABI documents for that call. Any read() data must
 * be whole, valid records. Afterwards the device must still work. Under
 * the debug kernel the lane also fails on any KASAN/lockdep/... report.
 *
 * NETLAT_FUZZ_SEED picks the sequence (default: from the clock; it is
 * printed), NETLAT_FUZZ_SECONDS bounds the run (default 20), and
 * NETLAT_FUZZ_CALLS the number of calls (default unbounded).
 *
 * Command numbers of the VFS's own ioctls (FIONBIO, FIFREEZE, FICLONE,
 * ...; types 'T', 'X', 'f', 0x94 and 0..2) are never generated: the VFS
 * answers them before netlat sees them, and some would change the test's
 * own file (O_NONBLOCK).
 */
#include "netlat_util.h"

#include <sys/syscall.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define KiB 1024ull

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool one_in(unsigned int n)
{
	return rnd_below(n) == 0;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

enum { OP_IOCTL, OP_READ, OP_WRITE, OP_MMAP, OP_POLL, OP_REOPEN, OP_NR };
static const char *const op_name[OP_NR] = {
	"ioctl", "read", "write", "mmap", "poll", "reopen",
};

struct fuzz {
	int fd[2];
	long page;
	unsigned int nr_cpus;
	unsigned char *area;	/* page 0, 1 rw; page 2 read-only; page 3 none */
	void *unmapped;		/* an address with nothing mapped */
	uint64_t calls[OP_NR];
	uint64_t ok[OP_NR];
	uint64_t errs[OP_NR][134];
	uint64_t cons_writes;
	char why[256];
};

/* A pointer for an argument; @len is what the kernel may touch. */
static void *rnd_ptr(struct fuzz *f, size_t len)
{
	unsigned char *rw_end = f->area + 2 * f->page;

	switch (rnd_below(10)) {
	case 0:
		return NULL;
	case 1:
		return f->unmapped;
	case 2:
		return f->area + 2 * f->page;		/* read-only */
	case 3:
		return (void *)0xffff888000000000ull;	/* kernel memory */
	case 4:	/* runs into the read-only page */
		return rw_end - (len > 1 ? rnd_below(len) + 1 : 1);
	case 5:	/* misaligned inside the writable pages */
		return f->area + 1 + rnd_below(f->page);
	case 6:
		return (void *)(uintptr_t)rnd();
	default:
		return f->area;
	}
}

/* Random bytes in the writable pages, then plausible header fields. */
static void rnd_fill(struct fuzz *f)
{
	uint64_t *p = (uint64_t *)f->area;
	size_t i;

	for (i = 0; i < 128; i++)
		p[i] = one_in(3) ? 0 : rnd();
}

static uint32_t rnd_size(void)
{
	static const uint32_t sizes[] = { 0, 4, 7, 8, 24, 31, 32, 55, 56, 57,
					  71, 72, 73, 128, 4095, 4096, 4097,
					  0xffffffffu };

	return one_in(4) ? (uint32_t)rnd() :
	       sizes[rnd_below(NL_ARRAY_SIZE(sizes))];
}

static uint64_t rnd_ring_bytes(void)
{
	switch (rnd_below(6)) {
	case 0:
		return rnd();
	case 1:
		return 0;
	case 2:
		return (1ull << 28) + 4096;	/* too big */
	case 3:
		return 1ull << 40;		/* far too big */
	default:	/* valid and small: the fuzzer must not eat memory */
		return 1ull << (12 + rnd_below(7));
	}
}

static unsigned long rnd_ioctl_cmd(void)
{
	static const unsigned long valid[] = {
		NETLAT_IOC_GET_INFO, NETLAT_IOC_GET_CPU_STATS,
		NETLAT_IOC_SET_CONFIG, NETLAT_IOC_START, NETLAT_IOC_STOP,
		NETLAT_IOC_RESET, NETLAT_IOC_SNAPSHOT, NETLAT_IOC_TRIGGERS,
		NETLAT_IOC_HIST, NETLAT_IOC_FLOWS, NETLAT_IOC_HOOKS,
	};
	unsigned long cmd;
	unsigned int type;

	switch (rnd_below(4)) {
	case 0:
	case 1:
		return valid[rnd_below(NL_ARRAY_SIZE(valid))];
	case 2:	/* netlat's type, any direction, number and size */
		return _IOC(rnd_below(4), NETLAT_IOC_TYPE, rnd_below(256),
			    rnd_below(1 << 14));
	default:
		do {
			cmd = (uint32_t)rnd();
			type = _IOC_TYPE(cmd);
		} while (type == 'T' || type == 'X' || type == 'f' ||
			 type == 0x94 || type <= 2);
		return cmd;
	}
}

static void note(struct fuzz *f, int op, long ret, int err)
{
	f->calls[op]++;
	if (ret >= 0)
		f->ok[op]++;
	else if (err > 0 && err < 134)
		f->errs[op][err]++;
}

static bool err_in(int err, const int *list)
{
	for (; *list; list++)
		if (*list == err)
			return true;
	return false;
}

static int fuzz_ioctl(struct fuzz *f)
{
	static const int allowed[] = { EINVAL, EFAULT, ENOTTY, EBUSY, ENOMEM,
				       ENODATA, EOPNOTSUPP, 0 };
	unsigned long cmd = rnd_ioctl_cmd();
	int fd = f->fd[rnd_below(2)];
	uint32_t *u32 = (uint32_t *)f->area;
	uint64_t *u64 = (uint64_t *)f->area;
	void *arg;
	long ret;

	rnd_fill(f);
	u32[0] = rnd_size();
	if (!one_in(3))
		u32[0] = (uint32_t[]){ 8, 32, 56, 72 }[rnd_below(4)];
	u32[1] = one_in(2) ? 0 : one_in(2) ? (uint32_t)rnd() : rnd_below(8); /* flags */
	if (cmd == NETLAT_IOC_GET_CPU_STATS && !one_in(3)) {
		u32[2] = rnd_below(f->nr_cpus + 2);
		u32[3] = one_in(4) ? (uint32_t)rnd() : 0;
	}
	if (cmd == NETLAT_IOC_SET_CONFIG) {
		u64[1] = rnd_ring_bytes();
		u32[4] = one_in(3) ? (uint32_t)rnd() : (uint32_t)rnd_below(1 << 20);
		u32[5] = one_in(3) ? (uint32_t)rnd() : (uint32_t)rnd_below(200);
		u64[3] = one_in(4) ? rnd() : 0;
		u32[8] = one_in(4) ? (uint32_t)rnd() : (uint32_t)rnd_below(3);
		u32[9] = one_in(4) ? (uint32_t)rnd() : 0;
	}
	if (cmd == NETLAT_IOC_FLOWS && !one_in(3)) {
		u32[2] = rnd_below(4) ? rnd_below(8) : (uint32_t)rnd();	/* nr */
		u32[3] = rnd_below(2) ? sizeof(struct netlat_flow_stats) :
			 (uint32_t)rnd_below(1 << 13);		/* entry_size */
		/* entries: into the writable pages, or anywhere */
		u64[2] = one_in(2) ? (uintptr_t)(f->area + f->page) : rnd();
		u64[4] = one_in(4) ? rnd() : 0;			/* rest: in, zero */
		if (u64[2] == (uintptr_t)(f->area + f->page) && u32[2] > 4)
			u32[2] = 4;	/* at most one page of entries */
	}
	if (cmd == NETLAT_IOC_HOOKS && !one_in(3)) {
		u32[1] = one_in(4) ? (uint32_t)rnd() : 0;		/* flags */
		u32[2] = rnd_below(4) ? rnd_below(40) : (uint32_t)rnd();	/* nr */
		u32[3] = rnd_below(2) ? sizeof(struct netlat_hook) :
			 (uint32_t)rnd_below(1 << 13);		/* entry_size */
		u64[2] = one_in(2) ? (uintptr_t)(f->area + f->page) : rnd();
		if (u64[2] == (uintptr_t)(f->area + f->page) && u32[2] > 40)
			u32[2] = 40;	/* at most one page of entries */
	}
	/* READ would make the file a snapshot reader: reads stop being records */
	if (cmd == NETLAT_IOC_SNAPSHOT)
		u32[1] &= ~NETLAT_SNAPSHOT_READ;
	if (cmd == NETLAT_IOC_TRIGGERS && !one_in(3)) {
		u32[2] = rnd_below(1 << 5);		/* armed */
		u32[3] = one_in(2) ? 0 : rnd_below(1 << 7);	/* retrans_kinds */
		u64[2] = one_in(2) ? 0 : rnd_below(1000000);	/* latency_ns */
		u32[6] = rnd_below(3) ? rnd_below(100) : (uint32_t)rnd();
		u32[7] = rnd_below(3) ? rnd_below(100) : (uint32_t)rnd();
		u32[8] = rnd_below(18);			/* marker_tag_len */
		u32[13] = one_in(4) ? (uint32_t)rnd() : 0;	/* reserved */
	}
	arg = one_in(4) ? rnd_ptr(f, u32[0]) : f->area;
	/*
	 * Nor from a random pointer into the writable pages (their bytes are
	 * random): READ is bit 2 of the flags, in the byte at offset 4.
	 */
	if (cmd == NETLAT_IOC_SNAPSHOT && (unsigned char *)arg >= f->area &&
	    (unsigned char *)arg + 4 < f->area + 2 * f->page)
		((unsigned char *)arg)[4] &= ~NETLAT_SNAPSHOT_READ;
	ret = ioctl(fd, cmd, arg);
	note(f, OP_IOCTL, ret, errno);
	if (ret > 0 || (ret < 0 && !err_in(errno, allowed)))
		return nl_fail(f->why, sizeof(f->why),
			       "ioctl(0x%lx, size %u) = %ld (%s)", cmd, u32[0],
			       ret, strerror(errno));
	return 0;
}

/* Whole, valid records or a documented error. */
/*
 * Once the consumer index was scribbled on, read() may start in the middle
 * of a record whose bytes (a marker payload, say) look like a header. The
 * kernel promises only what it validates before copying: magic, size
 * bounds and alignment, whole records. Check exactly that.
 */
static int fuzz_check_framing(struct fuzz *f, const struct netlat_rec_hdr *h,
			      size_t avail)
{
	if (avail < sizeof(*h) || h->magic != NETLAT_REC_MAGIC ||
	    h->size < sizeof(*h) || h->size > NETLAT_REC_MAX_SIZE ||
	    h->size % NETLAT_REC_ALIGN || h->size > avail)
		return nl_fail(f->why, sizeof(f->why),
			       "badly framed record after a consumer scribble");
	return 0;
}

static int fuzz_read(struct fuzz *f)
{
	static const int allowed[] = { EINVAL, EFAULT, EAGAIN, EBUSY, 0 };
	static const size_t sizes[] = { 0, 1, 24, 511, 512, 513, 4096, 8192,
					65536 };
	int fd = f->fd[rnd_below(2)];
	size_t len = one_in(4) ? rnd_below(3 * f->page) :
			 sizes[rnd_below(NL_ARRAY_SIZE(sizes))];
	void *buf = f->area;
	size_t off = 0;
	ssize_t n;

	if (len > 2 * (size_t)f->page || one_in(5))
		buf = rnd_ptr(f, len);
	/* never block: the flag may only be changed by us */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	n = read(fd, buf, len);
	note(f, OP_READ, n, errno);
	if (n < 0)
		return err_in(errno, allowed) ? 0 :
		       nl_fail(f->why, sizeof(f->why), "read(%zu) failed: %s",
			       len, strerror(errno));
	if ((size_t)n > len)
		return nl_fail(f->why, sizeof(f->why), "read(%zu) = %zd", len, n);
	if (buf != f->area)
		return 0;	/* a partly readable buffer: count only */
	while (off < (size_t)n) {
		const struct netlat_rec_hdr *h = (const void *)(f->area + off);

		if (f->cons_writes ? fuzz_check_framing(f, h, n - off) :
		    nl_check_rec(h, n - off, f->nr_cpus, f->why, sizeof(f->why)))
			return -1;
		off += h->size;
	}
	return 0;
}

static int fuzz_write(struct fuzz *f)
{
	static const int allowed[] = { EINVAL, EFAULT, 0 };
	int fd = f->fd[rnd_below(2)];
	size_t len = one_in(8) ? rnd() : rnd_below(NETLAT_MARKER_MAX + 64);
	void *buf = one_in(3) ? rnd_ptr(f, len) : f->area;
	ssize_t n;

	if (buf == f->area && len > 2 * (size_t)f->page)
		len = 2 * f->page;
	n = write(fd, buf, len);
	note(f, OP_WRITE, n, errno);
	if (n < 0)
		return err_in(errno, allowed) ? 0 :
		       nl_fail(f->why, sizeof(f->why), "write(%zu): %s", len,
			       strerror(errno));
	if ((size_t)n != len)
		return nl_fail(f->why, sizeof(f->why), "write(%zu) = %zd", len, n);
	return 0;
}

static int fuzz_mmap(struct fuzz *f)
{
	static const int allowed[] = { EINVAL, EPERM, EBUSY, EACCES, ENOMEM,
				       EOVERFLOW, ENODEV, ENODATA, 0 };
	static const int prots[] = { PROT_READ, PROT_WRITE,
				     PROT_READ | PROT_WRITE, PROT_NONE,
				     PROT_READ | PROT_EXEC };
	struct netlat_info info;
	int fd = f->fd[rnd_below(2)];
	int prot = prots[rnd_below(NL_ARRAY_SIZE(prots))];
	int flags = one_in(5) ? MAP_PRIVATE : MAP_SHARED;
	uint64_t cpu = one_in(5) ? rnd() >> 32 : rnd_below(f->nr_cpus + 1);
	uint64_t area = one_in(5) ? rnd() & 0xffffffffull & ~(f->page - 1ull) :
			one_in(8) ? NETLAT_MMAP_SNAPSHOT :
			one_in(2) ? NETLAT_MMAP_CONS : NETLAT_MMAP_DATA;
	size_t len;
	void *p;

	if (nl_get_info(fd, &info))
		return nl_fail(f->why, sizeof(f->why), "GET_INFO: %s",
			       strerror(errno));
	switch (rnd_below(5)) {
	case 0:
		len = f->page;
		break;
	case 1:
		len = nl_data_len(&info);
		break;
	case 2:
		len = rnd_below(4 * f->page) + 1;
		break;
	case 3:
		len = nl_data_len(&info) + f->page * (rnd_below(3) + 1);
		break;
	default:
		len = (size_t)1 << rnd_below(40);
	}
	p = mmap(NULL, len, prot, flags, fd,
		 (off_t)((cpu << NETLAT_MMAP_CPU_SHIFT) | area));
	note(f, OP_MMAP, p == MAP_FAILED ? -1 : 0, errno);
	if (p == MAP_FAILED)
		return err_in(errno, allowed) ? 0 :
		       nl_fail(f->why, sizeof(f->why),
			       "mmap(len %zu prot %d cpu %llu area 0x%llx): %s",
			       len, prot, (unsigned long long)cpu,
			       (unsigned long long)area, strerror(errno));
	if (area == NETLAT_MMAP_DATA && (prot & PROT_WRITE)) {
		munmap(p, len);
		return nl_fail(f->why, sizeof(f->why),
			       "DATA area mapped writable");
	}
	if (area == NETLAT_MMAP_SNAPSHOT && (prot & PROT_WRITE)) {
		munmap(p, len);
		return nl_fail(f->why, sizeof(f->why),
			       "snapshot mapped writable");
	}
	if (area != NETLAT_MMAP_CONS && area != NETLAT_MMAP_DATA &&
	    area != NETLAT_MMAP_SNAPSHOT) {
		munmap(p, len);
		return nl_fail(f->why, sizeof(f->why),
			       "mmap of area 0x%llx succeeded",
			       (unsigned long long)area);
	}
	/* garbage into the one page userspace may write: the consumer index */
	if (area == NETLAT_MMAP_CONS && (prot & PROT_WRITE)) {
		volatile uint64_t *cons = p;

		*cons = one_in(2) ? rnd() : *cons + 8 * rnd_below(64);
		f->cons_writes++;
	}
	munmap(p, len);
	return 0;
}

static int fuzz_poll(struct fuzz *f)
{
	struct pollfd pfd = { .fd = f->fd[rnd_below(2)],
			      .events = (short)rnd() };
	int n = poll(&pfd, 1, 0);

	note(f, OP_POLL, n, errno);
	if (n < 0)
		return nl_fail(f->why, sizeof(f->why), "poll: %s",
			       strerror(errno));
	return 0;
}

static int fuzz_reopen(struct fuzz *f)
{
	int i = rnd_below(2);

	close(f->fd[i]);
	f->fd[i] = nl_open(O_NONBLOCK | (one_in(4) ? O_RDONLY : 0));
	note(f, OP_REOPEN, f->fd[i], errno);
	if (f->fd[i] < 0)
		return nl_fail(f->why, sizeof(f->why), "reopen: %s",
			       strerror(errno));
	return 0;
}

/* Undo what random calls may have set that a reconfigure does not. */
static int fuzz_leave_nothing(int fd)
{
	struct netlat_snapshot snap = { .flags = NETLAT_SNAPSHOT_RELEASE };
	struct netlat_triggers trig = { .flags = NETLAT_TRIGGERS_SET };
	struct netlat_filters filt = {
		.flags = NETLAT_FILTERS_SET,
		.rule_size = sizeof(struct netlat_filter_rule),
	};
	struct netlat_config cfg = { .flags = NETLAT_CONFIG_MODE,
				     .mode = NETLAT_MODE_STREAM };
	int ret;

	ret = nl_ioctl(fd, NETLAT_IOC_SNAPSHOT, &snap, sizeof(snap));
	if (!ret)
		ret = nl_ioctl(fd, NETLAT_IOC_TRIGGERS, &trig, sizeof(trig));
	if (!ret)
		ret = nl_ioctl(fd, NETLAT_IOC_FILTERS, &filt, sizeof(filt));
	if (!ret)
		ret = nl_control(fd, NETLAT_IOC_STOP);
	if (!ret)
		ret = nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
	return ret;
}

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, interface, 180)
{
	uint64_t seed = env_u64("NETLAT_FUZZ_SEED", 0);
	uint64_t secs = env_u64("NETLAT_FUZZ_SECONDS", 20);
	uint64_t max_calls = env_u64("NETLAT_FUZZ_CALLS", UINT64_MAX);
	struct netlat_info def, info;
	uint64_t deadline, total = 0;
	struct fuzz *f;
	int fd, op, e, ret;
	char marker[] = "after the fuzz";
	const struct netlat_rec_marker *m;
	struct nl_log l;
	char *buf;

	f = calloc(1, sizeof(*f));
	buf = malloc(64 * KiB);
	ASSERT_TRUE(f && buf);
	fd = nl_open(0);
	if (fd < 0)
		SKIP(return, "%s: %s", NETLAT_DEVICE_PATH, strerror(errno));
	ASSERT_EQ(0, nl_get_info(fd, &def));
	close(fd);
	if (!seed)
		seed = nl_clock_ns(CLOCK_REALTIME) | 1;
	rng_state = seed;
	ksft_print_msg("fuzz seed %llu (NETLAT_FUZZ_SEED to repeat)\n",
		       (unsigned long long)seed);

	f->page = sysconf(_SC_PAGESIZE);
	f->nr_cpus = def.nr_cpus;
	f->area = mmap(NULL, 4 * f->page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f->area);
	ASSERT_EQ(0, mprotect(f->area + 2 * f->page, f->page, PROT_READ));
	ASSERT_EQ(0, mprotect(f->area + 3 * f->page, f->page, PROT_NONE));
	f->unmapped = mmap(NULL, f->page, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f->unmapped);
	ASSERT_EQ(0, munmap(f->unmapped, f->page));
	f->fd[0] = nl_open(O_NONBLOCK);
	f->fd[1] = nl_open(O_NONBLOCK);
	ASSERT_LE(0, f->fd[0]);
	ASSERT_LE(0, f->fd[1]);

	deadline = nl_mono_ns() + secs * 1000000000ull;
	ret = 0;
	while (!ret && total < max_calls &&
	       (total % 64 || nl_mono_ns() < deadline)) {
		uint64_t r = rnd_below(100);

		op = r < 40 ? OP_IOCTL : r < 60 ? OP_READ : r < 75 ? OP_WRITE :
		     r < 92 ? OP_MMAP : r < 98 ? OP_POLL : OP_REOPEN;
		switch (op) {
		case OP_IOCTL: ret = fuzz_ioctl(f); break;
		case OP_READ: ret = fuzz_read(f); break;
		case OP_WRITE: ret = fuzz_write(f); break;
		case OP_MMAP: ret = fuzz_mmap(f); break;
		case OP_POLL: ret = fuzz_poll(f); break;
		default: ret = fuzz_reopen(f); break;
		}
		total++;
	}
	for (op = 0; op < OP_NR; op++) {
		char line[512];
		int n;

		n = snprintf(line, sizeof(line), "%-6s %8llu calls, %8llu ok",
			     op_name[op], (unsigned long long)f->calls[op],
			     (unsigned long long)f->ok[op]);
		for (e = 1; e < 134; e++)
			if (f->errs[op][e] && n < (int)sizeof(line) - 32)
				n += snprintf(line + n, sizeof(line) - n,
					      ", %s %llu", strerrorname_np(e),
					      (unsigned long long)f->errs[op][e]);
		ksft_print_msg("%s\n", line);
	}
	ksft_print_msg("fuzz: %llu calls ran (seed %llu), %llu consumer-index scribbles\n",
		       (unsigned long long)total, (unsigned long long)seed,
		       (unsigned long long)f->cons_writes);
	EXPECT_EQ(0, ret) TH_LOG("call %llu (seed %llu): %s",
				 (unsigned long long)total,
				 (unsigned long long)seed, f->why);
	close(f->fd[0]);
	close(f->fd[1]);

	/* the device still works: defaults back, a marker round trip */
	fd = nl_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	/* and keeps nothing: no snapshot, no trigger, no filter, stream mode */
	EXPECT_EQ(0, fuzz_leave_nothing(fd));
	ASSERT_EQ(0, nl_reconfigure(fd, def.ring_bytes, def.watermark,
				    def.flush_ms, true));
	ASSERT_EQ(0, nl_get_info(fd, &info));
	EXPECT_EQ(def.ring_bytes, info.ring_bytes);
	ASSERT_EQ((ssize_t)sizeof(marker), nl_write(fd, marker, sizeof(marker)));
	ASSERT_EQ(0, nl_log_init(&l, def.nr_cpus, true));
	l.expect_stream = true;
	l.seq_from_zero = true;
	ASSERT_EQ(0, nl_log_drain(&l, fd)) TH_LOG("%s", l.why);
	ASSERT_EQ(1u, nl_log_count(&l, NETLAT_REC_MARKER, -1));
	m = nl_log_nth(&l, NETLAT_REC_MARKER, 0);
	EXPECT_EQ(0, memcmp(m->data, marker, sizeof(marker)));
	nl_log_free(&l);
	close(fd);
	munmap(f->area, 4 * f->page);
	free(f);
	free(buf);
}

TEST_HARNESS_MAIN
