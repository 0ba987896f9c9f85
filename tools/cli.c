// SPDX-License-Identifier: GPL-2.0
/* What the netlat sub-commands share: see cli.h. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "libnetlat.h"
#include "cli.h"

const struct command *current_command;

/* ---- messages and arguments -------------------------------------------- */

static void vmessage(const char *fmt, va_list ap)
{
	fputs("netlat: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

void print_synopsis(FILE *f, const struct command *c)
{
	fprintf(f, "usage: netlat %s %s\n", c->name, c->synopsis);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	print_synopsis(stderr, current_command);
	return EXIT_USAGE;
}

int command_help(void)
{
	print_synopsis(stdout, current_command);
	fputs(current_command->help, stdout);
	return 0;
}

int next_option(int argc, char **argv, const char *shortopts,
		const struct option *longopts)
{
	opterr = 0;
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

int bad_option(char **argv)
{
	return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
}

bool parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

bool parse_seconds(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(*out) && *out > 0 &&
	       *out < 1e9;
}

bool parse_size(const char *s, uint64_t *out)
{
	static const char suffixes[] = "KMG";
	const char *p;
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	if (!*end)
		return true;
	p = strchr(suffixes, *end);
	if (!p || !*p || end[1])
		return false;
	if (*out > (UINT64_MAX >> (10 * (p - suffixes + 1))))
		return false;
	*out <<= 10 * (p - suffixes + 1);
	return true;
}

/* ---- signals and time ---------------------------------------------------- */

volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = request_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int finish_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		error("cannot write output: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/* ---- the device ---------------------------------------------------------- */

/* What EBUSY means for each ioctl that can return it. */
static const char *busy_reason(unsigned long request)
{
	switch (request) {
	case NETLAT_IOC_SNAPSHOT:
		return "busy: a snapshot is already pending or frozen, or it is mapped";
	case NETLAT_IOC_TRIGGERS:
	case NETLAT_IOC_FILTERS:
		return strerror(EBUSY);
	}
	return "busy: tracing must be stopped (and, to resize or change the mode, "
	       "no ring mapped)";
}

int ioctl_failed_req(const char *path, const char *what, unsigned long request,
		     int err)
{
	const char *why;

	struct stat st;

	if (err == EBUSY)
		why = busy_reason(request);
	else if (err == ENOTTY && !stat(path, &st) && !S_ISCHR(st.st_mode))
		why = "not a netlat device";
	else
		why = netlat_ioctl_strerror(request, err);
	error("%s: %s: %s", path, what, why);
	return 1;
}

int ioctl_failed(const char *path, const char *what, int err)
{
	return ioctl_failed_req(path, what, 0, err);
}

int open_device(const char *path)
{
	char errbuf[NETLAT_ERRBUF_SIZE];
	int fd = netlat_dev_open(path, O_RDONLY, errbuf);

	if (fd < 0)
		error("%s", errbuf);
	return fd < 0 ? -1 : fd;
}

int device_option(int c, char **argv, const char **path)
{
	if (c == 'D') {
		*path = optarg;
		return -1;
	}
	if (c == 'h')
		return command_help();
	return bad_option(argv);
}

int device_args_done(int argc, const char *path, int *fd)
{
	if (optind < argc)
		return usage_error("too many arguments");
	if (!fd)
		return -1;
	*fd = open_device(path);
	return *fd < 0 ? 1 : -1;
}

int parse_device_args(int argc, char **argv, const char **path)
{
	static const struct option opts[] = {
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	int c, r;

	while ((c = next_option(argc, argv, "D:h", opts)) != -1) {
		r = device_option(c, argv, path);
		if (r >= 0)
			return r;
	}
	return device_args_done(argc, *path, NULL);
}

/*
 * Write @path (- for stdout) with @emit. A regular file is written as
 * PATH.tmp, then renamed, so a failure leaves no half page; anything else
 * (a FIFO, /dev/stdout) is written in place. 0 or 1 (printed).
 */
int write_output(const char *path, int (*emit)(void *arg, FILE *f), void *arg)
{
	const char *target = path;
	char tmp[4096];
	struct stat st;
	FILE *f;
	int r, werr;

	if (!strcmp(path, "-")) {
		if (!emit(arg, stdout))
			return finish_stdout();
		error("out of memory");
		return 1;
	}
	if (stat(path, &st) || S_ISREG(st.st_mode)) {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
			error("%s: name too long", path);
			return 1;
		}
		target = tmp;
	}
	f = fopen(target, "w");
	if (!f) {
		error("cannot create %s: %s", target, strerror(errno));
		return 1;
	}
	errno = 0;
	r = emit(arg, f);
	if (r)
		error("out of memory");
	werr = ferror(f);
	if (fclose(f) || werr) {
		if (!r)
			error("cannot write %s: %s", target, strerror(errno ? errno : EIO));
		r = 1;
	}
	if (target == path)
		return r ? 1 : 0;
	if (!r && rename(tmp, path)) {
		error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
		r = 1;
	}
	if (r)
		unlink(tmp);
	return r ? 1 : 0;
}
