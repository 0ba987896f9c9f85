// SPDX-License-Identifier: GPL-2.0
/*
 * kselftest suite of the reader against the live device: the netlat
 * command (/bin/netlat) and the flight_min example (/bin/flight_min),
 * as the test VM installs them (override: NETLAT_BIN, FLIGHT_MIN_BIN).
 *
 * The oracle is always what the test itself wrote: N markers of known
 * content into freshly reset rings. Every test starts stopped, reset and
 * started, so no record of an earlier test is counted.
 */
#include "netlat_util.h"

#include <sys/utsname.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "json_check.h"

/* The harness's SIGALRM handler has an unused parameter. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define MARKER_FMT	"reader-test-%05u"	/* 17 bytes */
#define MARKER_LEN	17
#define TAG		"FLIGHT-DUMP-NOW"
#define TAG_LEN		((ssize_t)sizeof(TAG) - 1)

static const char *netlat_bin(void)
{
	const char *p = getenv("NETLAT_BIN");

	return p ? p : "/bin/netlat";
}

static const char *flight_bin(void)
{
	const char *p = getenv("FLIGHT_MIN_BIN");

	return p ? p : "/bin/flight_min";
}

/* ---- running commands ---------------------------------------------------- */

/* Start argv with stdout and stderr to files (NULL: /dev/null). */
static pid_t spawn(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();
	int fd;

	if (pid != 0)
		return pid;
	fd = open("/dev/null", O_RDONLY);
	dup2(fd, 0);
	fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	fd = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	execv(argv[0], argv);
	_exit(127);
}

/* Exit status of @pid, waiting at most @ms (then it is killed): -1 if killed. */
static int reap(pid_t pid, unsigned int ms)
{
	int status;
	unsigned int waited = 0;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited >= ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nl_sleep_ms(10);
		waited += 10;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Run to completion (60 s at most): the exit status. */
static int run(char *const argv[], const char *out, const char *err)
{
	return reap(spawn(argv, out, err), 60000);
}

/* The whole file, NUL-terminated (an empty string if unreadable). */
static char *slurp(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (!buf)
		abort();
	while (fd >= 0 && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2 && !(buf = realloc(buf, cap *= 2)))
			abort();
	}
	if (fd >= 0)
		close(fd);
	buf[len] = 0;
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Wait up to @ms until some file consumes the rings (a reader started). */
static bool wait_for_consumer(int fd, unsigned int ms)
{
	struct netlat_info info;
	unsigned int waited;

	for (waited = 0; waited < ms; waited += 10) {
		if (!nl_get_info(fd, &info) && (info.state & NETLAT_STATE_CONSUMER))
			return true;
		nl_sleep_ms(10);
	}
	return false;
}

static bool wait_for_text(const char *path, const char *text, unsigned int ms)
{
	unsigned int waited;
	bool found = false;
	char *s;

	for (waited = 0; !found && waited < ms; waited += 20) {
		s = slurp(path);
		found = strstr(s, text) != NULL;
		free(s);
		if (!found)
			nl_sleep_ms(20);
	}
	return found;
}

/* ---- the oracle ------------------------------------------------------------ */

/* Write markers first..first+n-1 of known content; 0 or -errno. */
static int write_markers(int fd, unsigned int first, unsigned int n)
{
	char buf[32];
	unsigned int i;

	for (i = first; i < first + n; i++) {
		snprintf(buf, sizeof(buf), MARKER_FMT, i);
		if (nl_write(fd, buf, MARKER_LEN) != MARKER_LEN)
			return -errno;
	}
	return 0;
}

/* "netlat report --json FILE" agrees with the oracle: @n markers, @bytes. */
static bool report_counts(struct __test_metadata *_metadata, const char *capture,
			  unsigned int n, unsigned int bytes)
{
	char *argv[] = { (char *)netlat_bin(), "report", "--json", (char *)capture, NULL };
	char want[128];
	char *out;
	bool ok;

	if (run(argv, "/tmp/reader-report.out", "/tmp/reader-report.err") != 0) {
		char *err = slurp("/tmp/reader-report.err");

		TH_LOG("netlat report %s failed: %s", capture, err);
		free(err);
		return false;
	}
	out = slurp("/tmp/reader-report.out");
	snprintf(want, sizeof(want), "\"markers\":{\"records\":%u,\"bytes\":%u,", n,
		 bytes);
	ok = json_valid(out, strlen(out)) && strstr(out, want) &&
	     strstr(out, "\"lost\":0,\"unexplained_gaps\":0");
	if (!ok)
		TH_LOG("report of %s lacks %s: %s", capture, want, out);
	free(out);
	return ok;
}

/* "netlat report --json --type MARKER --pid PID" finds @n markers. */
static bool filtered_markers(struct __test_metadata *_metadata, const char *capture,
			     pid_t pid, unsigned int n)
{
	char pidstr[16], want[64];
	char *argv[] = { (char *)netlat_bin(), "report", "--json", "--type", "MARKER",
			 "--pid", pidstr, (char *)capture, NULL };
	char *out;
	bool ok;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	if (run(argv, "/tmp/reader-report.out", NULL) != 0)
		return false;
	out = slurp("/tmp/reader-report.out");
	snprintf(want, sizeof(want), "\"markers\":{\"records\":%u,", n);
	ok = strstr(out, want) != NULL;
	if (!ok)
		TH_LOG("--pid %d: want %s: %s", (int)pid, want, out);
	free(out);
	return ok;
}

/* ---- fixture --------------------------------------------------------------- */

FIXTURE(reader) {
	int fd;
};

FIXTURE_SETUP(reader)
{
	self->fd = nl_open(0);
	if (self->fd < 0)
		SKIP(return, "no %s: %s", NETLAT_DEVICE_PATH, strerror(errno));
	if (access(netlat_bin(), X_OK))
		SKIP(return, "no %s", netlat_bin());
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_RESET));
	ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
}

FIXTURE_TEARDOWN(reader)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* (a) netlat record while markers are written; report counts them all. */
TEST_F_TIMEOUT(reader, record_then_report, 120)
{
	char *argv[] = { (char *)netlat_bin(), "record", "-o", "/tmp/reader-a.nl",
			 "--duration", "3", NULL };
	const unsigned int n = 2000;
	pid_t pid;
	char *err;

	pid = spawn(argv, NULL, "/tmp/reader-a.err");
	ASSERT_TRUE(wait_for_consumer(self->fd, 10000));
	ASSERT_EQ(0, write_markers(self->fd, 0, n));
	ASSERT_EQ(0, reap(pid, 30000));
	err = slurp("/tmp/reader-a.err");
	TH_LOG("%s", err);
	free(err);
	ASSERT_TRUE(report_counts(_metadata, "/tmp/reader-a.nl", n, n * MARKER_LEN));
	/* Filters: every marker is this process's, none is init's. */
	ASSERT_TRUE(filtered_markers(_metadata, "/tmp/reader-a.nl", getpid(), n));
	ASSERT_TRUE(filtered_markers(_metadata, "/tmp/reader-a.nl", 1, 0));
}

/*
 * netlat record notes this kernel's release and drop reason names after
 * the stream header: the capture's NOTE lines name PROTO_MEM with the
 * number the kfree_skb tracepoint's format gives it (the file itself, by
 * a plain text search), and the release uname() gives; the host note the
 * boot id the kernel gives, and a clock note follows.
 */
TEST_F_TIMEOUT(reader, record_notes_the_host, 120)
{
	static const char *const fmts[] = {
		"/sys/kernel/tracing/events/skb/kfree_skb/format",
		"/sys/kernel/debug/tracing/events/skb/kfree_skb/format",
	};
	char *rec[] = { (char *)netlat_bin(), "record", "-o", "/tmp/reader-n.nl",
			"--duration", "1", NULL };
	char *tail[] = { (char *)netlat_bin(), "tail", "--type", "NOTE",
			 "/tmp/reader-n.nl", NULL };
	char want[128], *fmt = NULL, *out, *p;
	struct utsname u;
	unsigned int i;
	pid_t pid;
	long v;

	for (i = 0; i < NL_ARRAY_SIZE(fmts) && !fmt; i++)
		if (!access(fmts[i], R_OK))
			fmt = slurp(fmts[i]);
	if (!fmt || !strstr(fmt, "\"PROTO_MEM\""))
		SKIP(free(fmt); return, "no kfree_skb format with PROTO_MEM");
	ASSERT_EQ(0, uname(&u));
	pid = spawn(rec, NULL, "/tmp/reader-n.err");
	ASSERT_TRUE(wait_for_consumer(self->fd, 10000));
	ASSERT_EQ(0, write_markers(self->fd, 0, 1));
	ASSERT_EQ(0, reap(pid, 30000));
	ASSERT_EQ(0, run(tail, "/tmp/reader-n.out", NULL));
	out = slurp("/tmp/reader-n.out");
	snprintf(want, sizeof(want), " NOTE kind=kernel version=1 len=%zu \"%s\"\n",
		 strlen(u.release), u.release);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("want %s in %s", want, out);
	/* the note's line "N PROTO_MEM", escaped by tail as \nN PROTO_MEM\n */
	p = strstr(out, " PROTO_MEM\\n");
	ASSERT_NE(NULL, p) TH_LOG("no PROTO_MEM in %s", out);
	while (p > out && p[-1] >= '0' && p[-1] <= '9')
		p--;
	v = strtol(p, NULL, 10);
	snprintf(want, sizeof(want), "{ %ld, \"PROTO_MEM\" }", v);
	EXPECT_NE(NULL, strstr(fmt, want)) TH_LOG("the capture says %ld", v);
	TH_LOG("%s: PROTO_MEM is %ld", u.release, v);
	/* the host's boot id as the kernel gives it, and its clocks */
	p = slurp("/proc/sys/kernel/random/boot_id");
	ASSERT_NE(NULL, p);
	p[strcspn(p, "\n")] = 0;
	snprintf(want, sizeof(want), "boot_id %s\\n", p);
	EXPECT_NE(NULL, strstr(out, " NOTE kind=host version=1 ")) TH_LOG("no host note");
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("want %s in %s", want, out);
	EXPECT_NE(NULL, strstr(out, " NOTE kind=clock version=1 ")) TH_LOG("no clock note");
	EXPECT_NE(NULL, strstr(out, "\"monotonic ")) TH_LOG("no monotonic reading");
	free(p);
	free(out);
	free(fmt);
}

/* (b) The raw device bytes (what `cat /dev/netlat` saves) are a capture. */
TEST_F_TIMEOUT(reader, raw_read_is_a_capture, 120)
{
	const unsigned int n = 500;
	char buf[65536];
	int rfd, out;
	ssize_t r;

	ASSERT_EQ(0, write_markers(self->fd, 0, n));
	rfd = nl_open(O_NONBLOCK);
	ASSERT_LE(0, rfd);
	out = open("/tmp/reader-b.nl", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, out);
	while ((r = read(rfd, buf, sizeof(buf))) > 0)
		ASSERT_EQ(r, write(out, buf, (size_t)r));
	ASSERT_EQ(EAGAIN, errno);
	close(out);
	close(rfd);
	ASSERT_TRUE(report_counts(_metadata, "/tmp/reader-b.nl", n, n * MARKER_LEN));
}

/* (c) tail -n K: one line per record (K + the stream header), JSON lines. */
TEST_F_TIMEOUT(reader, tail_lines_and_json, 120)
{
	char *text[] = { (char *)netlat_bin(), "tail", "-n", "25", "--duration", "20", NULL };
	char *json[] = { (char *)netlat_bin(), "tail", "--json", "-n", "25",
			 "--duration", "20", NULL };
	char *out, *line, *nl;
	int lines = 0, markers = 0;

	ASSERT_EQ(0, write_markers(self->fd, 0, 40));
	ASSERT_EQ(0, run(text, "/tmp/reader-c.out", NULL));
	out = slurp("/tmp/reader-c.out");
	EXPECT_EQ(26, count_lines(out));
	EXPECT_NE(NULL, strstr(out, " STREAM abi=1 "));
	EXPECT_NE(NULL, strstr(out, "MARKER pid="));
	free(out);

	ASSERT_EQ(0, write_markers(self->fd, 100, 40));
	ASSERT_EQ(0, run(json, "/tmp/reader-c.json", NULL));
	out = slurp("/tmp/reader-c.json");
	EXPECT_EQ(26, count_lines(out));
	for (line = out; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = 0;
		lines++;
		if (!json_valid(line, strlen(line)) || !strstr(line, "\"type\":") ||
		    !strstr(line, "\"cpu\":") || !strstr(line, "\"seq\":") ||
		    !strstr(line, "\"ts_ns\":") || !strstr(line, "\"wall_ns\":")) {
			TH_LOG("bad line %d: %s", lines, line);
			_metadata->passed = 0;
		}
		if (strstr(line, "\"type\":\"MARKER\"")) {
			markers++;
			if (!strstr(line, "\"len\":17,\"data\":\"reader-test-0")) {
				TH_LOG("bad marker: %s", line);
				_metadata->passed = 0;
			}
		}
	}
	EXPECT_EQ(25, markers);
	free(out);
}

/* (d) flight_min: SIGUSR1 and a tagged marker dump what was written before. */
TEST_F_TIMEOUT(reader, flight_min_dumps, 120)
{
	char *argv[] = { (char *)flight_bin(), "-m", "64K", "-f", "/tmp/reader-d.ring",
			 "-t", TAG, "-o", "/tmp/reader-d.nl", NULL };
	char *extract[] = { (char *)flight_bin(), "-x", "/tmp/reader-d.ring",
			    "-o", "/tmp/reader-d2.nl", NULL };
	char *busy[] = { (char *)netlat_bin(), "tail", "-n", "1", NULL };
	const unsigned int n = 300;
	char *err;
	pid_t pid;

	if (access(flight_bin(), X_OK))
		SKIP(return, "no %s", flight_bin());
	pid = spawn(argv, NULL, "/tmp/reader-d.err");
	ASSERT_TRUE(wait_for_consumer(self->fd, 10000));
	ASSERT_EQ(0, write_markers(self->fd, 0, n));
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	ASSERT_TRUE(wait_for_text("/tmp/reader-d.err", "dump 1:", 20000));
	ASSERT_TRUE(report_counts(_metadata, "/tmp/reader-d.nl", n, n * MARKER_LEN));

	/* Another reader is refused while flight_min consumes: one message. */
	ASSERT_EQ(1, run(busy, NULL, "/tmp/reader-d.busy"));
	err = slurp("/tmp/reader-d.busy");
	EXPECT_EQ(1, count_lines(err));
	free(err);

	ASSERT_EQ(0, write_markers(self->fd, n, 10));
	ASSERT_EQ(TAG_LEN, nl_write(self->fd, TAG, TAG_LEN));
	ASSERT_TRUE(wait_for_text("/tmp/reader-d.err", "dump 2:", 20000));
	ASSERT_TRUE(report_counts(_metadata, "/tmp/reader-d.nl", n + 11,
				  (n + 10) * MARKER_LEN + TAG_LEN));

	ASSERT_EQ(0, kill(pid, SIGTERM));
	ASSERT_EQ(0, reap(pid, 20000));
	/* The ring file outlives the recorder. */
	ASSERT_EQ(0, run(extract, NULL, NULL));
	ASSERT_TRUE(report_counts(_metadata, "/tmp/reader-d2.nl", n + 11,
				  (n + 10) * MARKER_LEN + TAG_LEN));
}

/* netlat stat: the live window's report counts what the test wrote. */
TEST_F_TIMEOUT(reader, stat_counts_live_markers, 120)
{
	char *argv[] = { (char *)netlat_bin(), "stat", "--json", "--duration", "3",
			 "--type", "MARKER", NULL };
	const unsigned int n = 700;
	char want[128];
	char *out;
	pid_t pid;

	pid = spawn(argv, "/tmp/reader-f.out", NULL);
	ASSERT_TRUE(wait_for_consumer(self->fd, 10000));
	ASSERT_EQ(0, write_markers(self->fd, 0, n));
	ASSERT_EQ(0, reap(pid, 30000));
	out = slurp("/tmp/reader-f.out");
	EXPECT_EQ(1, count_lines(out));
	EXPECT_TRUE(json_valid(out, strlen(out)));
	snprintf(want, sizeof(want), "\"total\":{\"records\":%u,\"by_type\":{\"MARKER\":%u,", n, n);
	EXPECT_NE(NULL, strstr(out, want));
	snprintf(want, sizeof(want), "\"markers\":{\"records\":%u,\"bytes\":%u,", n,
		 n * MARKER_LEN);
	EXPECT_NE(NULL, strstr(out, want));
	free(out);
}

/* (e) A truncated capture: exit 1 and one message, from tail and report. */
TEST_F_TIMEOUT(reader, truncated_capture_fails_cleanly, 120)
{
	char *tail[] = { (char *)netlat_bin(), "tail", "/tmp/reader-e.nl", NULL };
	char *report[] = { (char *)netlat_bin(), "report", "/tmp/reader-e.nl", NULL };
	char *argv[] = { (char *)netlat_bin(), "record", "-o", "/tmp/reader-e.nl",
			 "--duration", "2", NULL };
	struct stat st;
	char *err;

	ASSERT_EQ(0, write_markers(self->fd, 0, 50));
	ASSERT_EQ(0, run(argv, NULL, NULL));
	ASSERT_EQ(0, stat("/tmp/reader-e.nl", &st));
	ASSERT_LT(200, st.st_size);
	ASSERT_EQ(0, truncate("/tmp/reader-e.nl", st.st_size - 5));

	ASSERT_EQ(1, run(tail, "/tmp/reader-e.out", "/tmp/reader-e.err"));
	err = slurp("/tmp/reader-e.err");
	EXPECT_EQ(1, count_lines(err));
	EXPECT_NE(NULL, strstr(err, "truncated capture"));
	free(err);

	ASSERT_EQ(1, run(report, "/tmp/reader-e.out", "/tmp/reader-e.err"));
	err = slurp("/tmp/reader-e.err");
	EXPECT_EQ(1, count_lines(err));
	EXPECT_NE(NULL, strstr(err, "truncated capture"));
	free(err);
	err = slurp("/tmp/reader-e.out");
	EXPECT_EQ(0, (int)strlen(err));	/* no report of half a capture */
	free(err);
}

TEST_HARNESS_MAIN
