// SPDX-License-Identifier: GPL-2.0
/*
 * The flight-recorder tools against the real module: `netlat flight`,
 * `netlat snapshot`, `netlat filters`, `netlat probes --hooks` and the
 * vendor example flight_recorder, run as a user would. The oracles are
 * the markers this program wrote (each must be in the saved file, the
 * tagged one as the trigger) and the module's state read back through
 * the ioctls (a tool must leave the mode, triggers and snapshot as it
 * found them).
 *
 * The tools are taken from /bin (the VM image) or NETLAT_BIN_DIR; the
 * tests skip when they are absent.
 */
#include "netlat_util.h"
#include "netlat_snap.h"
#include "netlat_filter.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define OUT_DIR	"/tmp/netlat-cli"

static const char *bin(const char *name)
{
	static char path[512];
	const char *dir = getenv("NETLAT_BIN_DIR");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "/bin", name);
	return path;
}

/* Start @argv[0] from the tool directory; its pid or -errno. */
static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		execv(bin(argv[0]), argv);
		_exit(127);
	}
	return pid;
}

/* Exit status of @pid within @secs, else kill it and return -1. */
static int reap(pid_t pid, unsigned int secs)
{
	uint64_t end = nl_mono_ns() + secs * 1000000000ull;
	int status;

	while (nl_mono_ns() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
						   128 + WTERMSIG(status);
		nl_sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static int run(char *const argv[], unsigned int secs)
{
	pid_t pid = spawn(argv);

	return pid < 0 ? pid : reap(pid, secs);
}

/* Wait until some trigger is armed (the tool is ready). */
static bool armed_within(int fd, unsigned int ms)
{
	struct netlat_triggers t;
	uint64_t end = nl_mono_ns() + ms * 1000000ull;

	while (nl_mono_ns() < end) {
		if (!trig_get(fd, &t) && t.armed)
			return true;
		nl_sleep_ms(20);
	}
	return false;
}

/* Remove every file of OUT_DIR; the number of regular files seen. */
static int clear_dir(void)
{
	char path[512];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	mkdir(OUT_DIR, 0700);
	dir = opendir(OUT_DIR);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' && (!d->d_name[1] ||
		    (d->d_name[1] == '.' && !d->d_name[2])))
			continue;
		snprintf(path, sizeof(path), "%s/%s", OUT_DIR, d->d_name);
		unlink(path);
		n++;
	}
	closedir(dir);
	return n;
}

/* The one file in OUT_DIR, read whole; its length, or -1. */
static ssize_t only_file(unsigned char *buf, size_t cap, char *name,
			 size_t nlen)
{
	struct dirent *d;
	char path[512];
	ssize_t len = -1;
	int n = 0, fd;
	DIR *dir = opendir(OUT_DIR);

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.') {
			snprintf(name, nlen, "%s", d->d_name);
			n++;
		}
	closedir(dir);
	if (n != 1)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", OUT_DIR, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	len = read(fd, buf, cap);
	close(fd);
	return len;
}

/* A marker "@text" among the records of @v, or NULL. */
static const struct netlat_rec_marker *find_marker(const struct snap_view *v,
						   const char *text)
{
	const struct netlat_rec_hdr *h;
	size_t n = strlen(text);

	nl_log_for_each(&v->log, h) {
		const struct netlat_rec_marker *m = (const void *)h;

		if (h->type == NETLAT_REC_MARKER && m->len == n &&
		    !memcmp(m->data, text, n))
			return m;
	}
	return NULL;
}

FIXTURE(cli) {
	int fd;
	struct netlat_info info;
	unsigned char *buf;
	size_t cap;
	struct snap_view v;
	bool parsed;
};

FIXTURE_SETUP(cli)
{
	self->fd = -1;
	if (access(bin("netlat"), X_OK))
		SKIP(return, "%s not found", bin("netlat"));
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, nl_get_info(self->fd, &self->info));
	ASSERT_EQ(0, snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL));
	ASSERT_EQ(0, trig_off(self->fd));
	ASSERT_EQ(NETLAT_MODE_STREAM, self->info.mode);
	ASSERT_EQ(0, nl_reconfigure(self->fd, self->info.ring_bytes,
				    self->info.watermark,
				    self->info.flush_ms, true));
	self->cap = snap_capacity(&self->info);
	self->buf = malloc(self->cap);
	ASSERT_NE(NULL, self->buf);
	ASSERT_LE(0, clear_dir());
}

FIXTURE_TEARDOWN(cli)
{
	if (self->parsed)
		view_free(&self->v);
	free(self->buf);
	clear_dir();
	if (self->fd < 0)
		return;
	trig_off(self->fd);
	snap_ioc(self->fd, NETLAT_SNAPSHOT_RELEASE, NULL);
	nl_set_rules(self->fd, NULL, 0);
	setup_rings(self->fd, NETLAT_MODE_STREAM, self->info.ring_bytes);
	close(self->fd);
}

/*
 * Markers before the trigger, the tagged one, the tool saves exactly one
 * snapshot holding all of them with the tagged one as the trigger, and
 * leaves the module as it found it.
 */
static void flight_run(struct __test_metadata *_metadata,
		       FIXTURE_DATA(cli) *self, char *const argv[],
		       const char *tag)
{
	const struct netlat_rec_marker *m;
	struct netlat_triggers t;
	struct netlat_snapshot s;
	struct netlat_info info;
	char name[256], text[64], trig[64];
	ssize_t len;
	pid_t pid;
	int i;

	pid = spawn(argv);
	ASSERT_LT(0, pid);
	ASSERT_TRUE(armed_within(self->fd, 10000)) {
		reap(pid, 0);
	}
	for (i = 0; i < 10; i++) {
		snprintf(text, sizeof(text), "before-%d", i);
		ASSERT_EQ((ssize_t)strlen(text),
			  nl_write(self->fd, text, strlen(text)));
	}
	snprintf(trig, sizeof(trig), "%s: it broke", tag);
	ASSERT_EQ((ssize_t)strlen(trig), nl_write(self->fd, trig, strlen(trig)));
	ASSERT_EQ(0, reap(pid, 30));

	len = only_file(self->buf, self->cap, name, sizeof(name));
	ASSERT_LT(0, len) TH_LOG("not exactly one file in " OUT_DIR);
	ASSERT_EQ(0, view_parse(&self->v, self->buf, len, self->info.nr_cpus))
		TH_LOG("%s: %s", name, self->v.why);
	self->parsed = true;
	EXPECT_EQ(NETLAT_SNAP_TRIGGER, self->v.snap->reason);
	EXPECT_EQ(NETLAT_TRIG_MARKER, self->v.snap->trigger);
	for (i = 0; i < 10; i++) {
		snprintf(text, sizeof(text), "before-%d", i);
		EXPECT_NE(NULL, find_marker(&self->v, text)) TH_LOG("%s", text);
	}
	m = find_marker(&self->v, trig);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(self->v.snap->trig_seq, m->hdr.seq);
	EXPECT_EQ(self->v.snap->trig_cpu, m->hdr.cpu);

	/* the state it found: stream mode, nothing armed, nothing held */
	ASSERT_EQ(0, nl_get_info(self->fd, &info));
	EXPECT_EQ(NETLAT_MODE_STREAM, info.mode);
	ASSERT_EQ(0, trig_get(self->fd, &t));
	EXPECT_EQ(0u, t.armed);
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
}

TEST_F_TIMEOUT(cli, netlat_flight, 60)
{
	char *const argv[] = { "netlat", "flight", "-d", OUT_DIR,
			       "--trigger", "marker=CLI-INCIDENT",
			       "--post", "100", "--count", "1", NULL };

	flight_run(_metadata, self, argv, "CLI-INCIDENT");
}

TEST_F_TIMEOUT(cli, vendor_flight_recorder, 60)
{
	char *const argv[] = { "flight_recorder", "-t", "marker=VENDOR",
			       "-o", OUT_DIR, "-p", "100", "-n", "1", NULL };

	if (access(bin("flight_recorder"), X_OK))
		SKIP(return, "%s not found", bin("flight_recorder"));
	flight_run(_metadata, self, argv, "VENDOR");
}

/* A manual snapshot of a stream-mode ring holds what no one has read. */
TEST_F_TIMEOUT(cli, netlat_snapshot, 60)
{
	char *const argv[] = { "netlat", "snapshot", "-o", OUT_DIR "/manual",
			       NULL };
	struct netlat_snapshot s;
	char name[256], text[64];
	ssize_t len;
	int i;

	for (i = 0; i < 20; i++) {
		snprintf(text, sizeof(text), "manual-%d", i);
		ASSERT_EQ((ssize_t)strlen(text),
			  nl_write(self->fd, text, strlen(text)));
	}
	ASSERT_EQ(0, run(argv, 30));
	len = only_file(self->buf, self->cap, name, sizeof(name));
	ASSERT_LT(0, len);
	EXPECT_STREQ("manual", name);
	ASSERT_EQ(0, view_parse(&self->v, self->buf, len, self->info.nr_cpus))
		TH_LOG("%s", self->v.why);
	self->parsed = true;
	EXPECT_EQ(NETLAT_SNAP_MANUAL, self->v.snap->reason);
	for (i = 0; i < 20; i++) {
		snprintf(text, sizeof(text), "manual-%d", i);
		EXPECT_NE(NULL, find_marker(&self->v, text)) TH_LOG("%s", text);
	}
	ASSERT_EQ(0, snap_ioc(self->fd, 0, &s));
	EXPECT_EQ((uint32_t)NETLAT_SNAP_EMPTY, s.state);
}

/* `netlat filters --filter SPEC` sets the rule the spec says; --clear. */
TEST_F_TIMEOUT(cli, netlat_filters, 60)
{
	char *const set[] = { "netlat", "filters", "--filter",
			      "addr=192.0.2.0/24,port=5001,groups=sendmsg,xmit",
			      "--filter", "pid=1", NULL };
	char *const bad[] = { "netlat", "filters", "--filter",
			      "addr=192.0.2.1/24", NULL };
	char *const clear[] = { "netlat", "filters", "--clear", NULL };
	struct netlat_filter_rule r[4];
	uint32_t nr = 0;
	int i;

	ASSERT_EQ(0, run(set, 30));
	memset(r, 0, sizeof(r));
	ASSERT_EQ(0, nl_filters(self->fd, 0, r, 4, sizeof(r[0]), &nr));
	ASSERT_EQ(2u, nr);
	for (i = 0; i < 2; i++) {
		if (r[i].match & NETLAT_MATCH_TGID) {
			EXPECT_EQ(1u, r[i].tgid);
			EXPECT_EQ(NETLAT_MATCH_TGID, r[i].match);
			EXPECT_EQ(NETLAT_PROBE_ALL, r[i].groups);
			continue;
		}
		EXPECT_EQ(NETLAT_MATCH_ADDR | NETLAT_MATCH_PORT, r[i].match);
		EXPECT_EQ(NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT,
			  r[i].groups);
		EXPECT_EQ(2, r[i].family);
		EXPECT_EQ(24, r[i].prefix_len);
		EXPECT_EQ(0, memcmp(r[i].addr, "\xc0\x00\x02\x00", 4));
		EXPECT_EQ(5001, r[i].port);
	}
	/* host bits past the prefix: refused, the rules stay */
	EXPECT_NE(0, run(bad, 30));
	ASSERT_EQ(0, nl_filters(self->fd, 0, r, 4, sizeof(r[0]), &nr));
	EXPECT_EQ(2u, nr);
	ASSERT_EQ(0, run(clear, 30));
	ASSERT_EQ(0, nl_filters(self->fd, 0, r, 4, sizeof(r[0]), &nr));
	EXPECT_EQ(0u, nr);
}

/*
 * `netlat probes --hooks`: a line per hook the ioctl lists, in its order,
 * each with the hook's name and the mechanism the ioctl says.
 */
TEST_F_TIMEOUT(cli, netlat_probes_hooks, 60)
{
	static const char *const mech[] = {
		"absent", "tracepoint", "ftrace", "kprobe-ftrace", "kprobe",
		"fprobe", "wrapped", "kretprobe", "deferred",
	};
	char *const argv[] = { "netlat", "probes", "--hooks", NULL };
	char line[256], name[128], group[32], how[32];
	struct netlat_hook h[128];
	struct netlat_hooks a;
	unsigned int i = 0;
	pid_t pid;
	FILE *f;
	int out;

	memset(&a, 0, sizeof(a));
	a.nr = NL_ARRAY_SIZE(h);
	a.entry_size = sizeof(h[0]);
	a.entries = (uintptr_t)h;
	ASSERT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_HOOKS, &a, sizeof(a)));
	ASSERT_GE(NL_ARRAY_SIZE(h), a.nr);
	out = open(OUT_DIR "/hooks", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, out);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(out, 1);
		execv(bin(argv[0]), argv);
		_exit(127);
	}
	close(out);
	ASSERT_EQ(0, reap(pid, 30));
	f = fopen(OUT_DIR "/hooks", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));	/* the header */
	while (fgets(line, sizeof(line), f)) {
		ASSERT_EQ(3, sscanf(line, "%127s %31s %31s", name, group, how));
		ASSERT_GT(a.nr, i) TH_LOG("extra line: %s", line);
		EXPECT_STREQ(h[i].name, name);
		ASSERT_GT(NL_ARRAY_SIZE(mech), h[i].mechanism);
		EXPECT_STREQ(mech[h[i].mechanism], how) TH_LOG("%s", name);
		i++;
	}
	fclose(f);
	EXPECT_EQ(a.nr, i);
}

TEST_HARNESS_MAIN
