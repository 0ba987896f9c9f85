// SPDX-License-Identifier: GPL-2.0
/*
 * The flight recorder commands and --filter: see flight.h. Every device
 * call goes through libnetlat; a module without a feature gets one line
 * naming it (netlat_ioctl_strerror()).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "libnetlat.h"
#include "cli.h"
#include "flight.h"
#include "output.h"
#include "snapdir.h"

#define DEFAULT_MAX_BYTES	(1ULL << 30)

static const char *dev_path(const char *path)
{
	return path ? path : NETLAT_DEVICE_PATH;
}

/* ---- --filter ------------------------------------------------------------ */

int kfilters_add(struct kfilters *k, const char *spec)
{
	char errbuf[NETLAT_ERRBUF_SIZE];

	if (k->nr == NETLAT_FILTER_MAX_RULES)
		return usage_error("too many --filter rules (at most %d)",
				   NETLAT_FILTER_MAX_RULES);
	if (netlat_parse_filter(spec, &k->rules[k->nr], errbuf))
		return usage_error("bad --filter '%s': %s", spec, errbuf);
	k->nr++;
	return -1;
}

int kfilters_apply(struct kfilters *k, const char *path)
{
	struct stat st;
	int r;

	k->fd = -1;
	if (!k->nr)
		return 0;
	path = dev_path(path);
	if (!strcmp(path, "-") || (!stat(path, &st) && !S_ISCHR(st.st_mode))) {
		error("--filter sets in-kernel rules: %s is not the netlat device", path);
		return 1;
	}
	k->fd = open_device(path);
	if (k->fd < 0)
		return 1;
	k->path = path;
	k->nr_saved = NETLAT_FILTER_MAX_RULES;
	r = netlat_get_filters(k->fd, k->saved, &k->nr_saved);
	if (!r && k->nr_saved > NETLAT_FILTER_MAX_RULES)
		r = -E2BIG;
	if (!r)
		r = netlat_set_filters(k->fd, k->rules, k->nr);
	if (r) {
		ioctl_failed_req(path, "FILTERS", NETLAT_IOC_FILTERS, -r);
		close(k->fd);
		k->fd = -1;
		return 1;
	}
	return 0;
}

void kfilters_restore(struct kfilters *k)
{
	int r;

	if (k->fd < 0)
		return;
	r = netlat_set_filters(k->fd, k->saved, k->nr_saved);
	if (r)
		ioctl_failed_req(k->path, "FILTERS (restoring the previous rules)",
				 NETLAT_IOC_FILTERS, -r);
	close(k->fd);
	k->fd = -1;
}

/* ---- writing a snapshot ---------------------------------------------------- */

/* The head of a snapshot file: its stream header and SNAPSHOT record. */
struct snap_head {
	struct netlat_rec_stream stream;
	struct netlat_rec_snapshot snap;
};

static int read_head(const char *file, struct snap_head *h)
{
	char errbuf[NETLAT_ERRBUF_SIZE];
	const struct netlat_rec_hdr *rec;
	struct netlat_source *src = netlat_open(file, errbuf);
	int r;

	if (!src) {
		error("%s", errbuf);
		return -1;
	}
	r = netlat_next(src, &rec);
	if (r == 1)
		memcpy(&h->stream, netlat_stream(src), sizeof(h->stream));
	if (r == 1)
		r = netlat_next(src, &rec);
	if (r == 1 && rec->type == NETLAT_REC_SNAPSHOT)
		memcpy(&h->snap, rec, sizeof(h->snap));
	else if (r >= 0)
		error("%s: no SNAPSHOT record after the stream header", file);
	else
		error("%s", netlat_errmsg(src));
	netlat_close(src);
	return r == 1 && rec->type == NETLAT_REC_SNAPSHOT ? 0 : -1;
}

/*
 * Copy the frozen snapshot of device @path into @tmp (created), through a
 * descriptor of its own (READ makes it a snapshot reader for good), then
 * read its head back: 0, or -1 with the reason printed and @tmp removed.
 */
static int write_snapshot(const char *path, const char *tmp, uint64_t *bytes,
			  struct snap_head *head)
{
	int fd, out, r;

	fd = open_device(path);
	if (fd < 0)
		return -1;
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		error("cannot create %s: %s", tmp, strerror(errno));
		close(fd);
		return -1;
	}
	r = netlat_snapshot_copy(fd, out, bytes);
	close(fd);
	if (!r && fsync(out) < 0)
		r = -errno;
	if (close(out) < 0 && !r)
		r = -errno;
	if (r == -ENODATA)
		error("%s: the snapshot was released while it was read", path);
	else if (r == -EIO)
		error("%s: the snapshot stream ended early (%llu bytes)", path,
		      (unsigned long long)*bytes);
	else if (r)
		error("cannot write %s: %s", tmp, strerror(-r));
	if (!r && read_head(tmp, head))
		r = -1;
	if (r)
		unlink(tmp);
	return r ? -1 : 0;
}

/* RELEASE, if the frozen snapshot is still @id (not someone else's). */
static int release_snapshot(int fd, const char *path, uint64_t id)
{
	struct netlat_snapshot s;
	int r = netlat_snapshot(fd, 0, &s);

	if (!r && s.state == NETLAT_SNAP_FROZEN && s.id == id)
		r = netlat_snapshot(fd, NETLAT_SNAPSHOT_RELEASE, NULL);
	return r ? ioctl_failed_req(path, "SNAPSHOT release", NETLAT_IOC_SNAPSHOT, -r) : 0;
}

static void print_saved(const struct snap_head *h, uint64_t bytes, const char *file)
{
	fputs("netlat: ", stderr);
	describe_snapshot(stderr, &h->stream, &h->snap);
	fprintf(stderr, ": %llu bytes to %s\n", (unsigned long long)bytes, file);
}

/* ---- netlat snapshot --------------------------------------------------------- */

/* A snapshot to save: the frozen one, or a new one. 0, or 1 printed. */
static int freeze(int fd, const char *path, bool frozen_only, struct netlat_snapshot *s,
		  bool *took)
{
	int r = netlat_snapshot(fd, 0, s);

	*took = false;
	if (r)
		return ioctl_failed_req(path, "SNAPSHOT", NETLAT_IOC_SNAPSHOT, -r);
	if (s->state == NETLAT_SNAP_FROZEN)
		return 0;
	if (s->state == NETLAT_SNAP_PENDING) {
		error("%s: a trigger fired and its snapshot is not frozen yet (post "
		      "window): try again shortly", path);
		return 1;
	}
	if (frozen_only) {
		error("%s: no frozen snapshot", path);
		return 1;
	}
	r = netlat_snapshot(fd, NETLAT_SNAPSHOT_TAKE, s);
	if (r)
		return ioctl_failed_req(path, "SNAPSHOT take", NETLAT_IOC_SNAPSHOT, -r);
	*took = true;
	return 0;
}

/* --frozen and --keep of "netlat snapshot": getopt_long() sets them. */
static int frozen_only, keep;

int cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		OPTION_ARG("output", 'o'),
		{ "frozen", no_argument, &frozen_only, 1 },
		{ "keep", no_argument, &keep, 1 },
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	const char *output = NULL, *path = NETLAT_DEVICE_PATH;
	struct netlat_snapshot s;
	struct snap_head head;
	char tmp[PATH_MAX];
	bool took = false;
	uint64_t bytes;
	int c, fd, status;

	while ((c = next_option(argc, argv, "o:D:h", opts)) != -1) {
		if (c == 'o')
			output = optarg;
		else if (c && (status = device_option(c, argv, &path)) >= 0)
			return status;
	}
	if (!output)
		return usage_error("-o FILE is required");
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", output) >= sizeof(tmp))
		return usage_error("output path too long");
	status = device_args_done(argc, path, &fd);
	if (status >= 0)
		return status;
	status = freeze(fd, path, frozen_only, &s, &took);
	if (!status && write_snapshot(path, tmp, &bytes, &head))
		status = 1;
	if (!status && rename(tmp, output) < 0) {
		error("cannot rename %s to %s: %s", tmp, output, strerror(errno));
		unlink(tmp);
		status = 1;
	}
	if (!status)
		print_saved(&head, bytes, output);
	/* One we took is ours to release even if it could not be written. */
	if ((!status && !keep) || (status && took))
		status |= release_snapshot(fd, path, s.id);
	close(fd);
	return status;
}

/* ---- netlat flight ----------------------------------------------------------- */

struct flight {
	const char *dir;
	const char *path;
	uint64_t max_bytes;
	uint64_t count;			/* exit after this many; 0: never */
	struct netlat_triggers trig;
	struct kfilters kf;
	int fd;
	bool have_info;			/* info holds the state as found */
	bool restore_mode;		/* the mode was changed: put it back */
	struct netlat_info info;	/* as found */
	bool armed;
	uint64_t saved;
	int status;
};

/* Overwrite mode and tracing on: 0, or 1 printed. */
static int flight_setup_rings(struct flight *f)
{
	int r = netlat_get_info(f->fd, &f->info);

	if (r)
		return ioctl_failed(f->path, "GET_INFO", -r);
	f->have_info = true;
	if (f->info.mode != NETLAT_MODE_OVERWRITE) {
		r = netlat_stop(f->fd);
		if (!r)
			r = netlat_set_mode(f->fd, NETLAT_MODE_OVERWRITE);
		if (r == -EINVAL) {
			error("%s: SET_CONFIG: this netlat.ko has no overwrite mode", f->path);
			return 1;
		}
		if (r)
			return ioctl_failed(f->path, "SET_CONFIG mode overwrite", -r);
		f->restore_mode = true;
	}
	r = netlat_start(f->fd);
	return r ? ioctl_failed(f->path, "START", -r) : 0;
}

/* The rings as they were: the mode, and tracing running or not. */
static void flight_restore_rings(struct flight *f)
{
	int r = 0;

	if (!f->have_info)
		return;
	if (f->restore_mode) {
		r = netlat_stop(f->fd);
		if (!r)
			r = netlat_set_mode(f->fd, f->info.mode);
	}
	if (!r)
		r = f->info.state & NETLAT_STATE_RUNNING ? netlat_start(f->fd) :
							   netlat_stop(f->fd);
	if (r)
		f->status |= ioctl_failed(f->path, "restoring the ring mode", -r);
}

/* Write the frozen snapshot to the directory, release it, rotate. */
static void flight_save(struct flight *f, const struct netlat_snapshot *s)
{
	char tmp[PATH_MAX], file[PATH_MAX], name[SNAPDIR_NAME_MAX];
	uint64_t bytes, freed, kept;
	struct snap_head head;
	unsigned int deleted;
	int r;

	snapdir_tmp_name(name, sizeof(name), (long)getpid());
	snprintf(tmp, sizeof(tmp), "%s/%s", f->dir, name);
	if (write_snapshot(f->path, tmp, &bytes, &head)) {
		f->status = 1;
	} else {
		snapdir_name(name, sizeof(name),
			     netlat_wall_ns(&head.stream, head.snap.hdr.ts_ns), head.snap.id);
		snprintf(file, sizeof(file), "%s/%s", f->dir, name);
		if (rename(tmp, file) < 0) {
			error("cannot rename %s to %s: %s", tmp, file, strerror(errno));
			unlink(tmp);
			f->status = 1;
		} else {
			print_saved(&head, bytes, file);
			f->saved++;
		}
	}
	/* Released even if it could not be saved: the next incident counts more. */
	f->status |= release_snapshot(f->fd, f->path, s->id);
	r = snapdir_rotate(f->dir, f->max_bytes, &deleted, &freed, &kept);
	if (r) {
		error("cannot rotate %s: %s", f->dir, strerror(-r));
		f->status = 1;
	} else if (deleted) {
		fprintf(stderr, "netlat: removed %u old snapshot%s (%llu bytes); %llu bytes kept\n",
			deleted, deleted == 1 ? "" : "s", (unsigned long long)freed,
			(unsigned long long)kept);
	}
}

/* Save a frozen snapshot if there is one: 1 saved, 0 none, -1 failed. */
static int flight_check(struct flight *f)
{
	struct netlat_snapshot s;
	int r = netlat_snapshot(f->fd, 0, &s);

	if (r) {
		f->status |= ioctl_failed_req(f->path, "SNAPSHOT", NETLAT_IOC_SNAPSHOT, -r);
		return -1;
	}
	if (s.state != NETLAT_SNAP_FROZEN)
		return 0;
	flight_save(f, &s);
	return 1;
}

static int flight_loop(struct flight *f)
{
	int r;

	while (!stop_requested && !(f->count && f->saved >= f->count)) {
		r = netlat_wait_snapshot(f->fd, TICK_MS);
		if (r == -EINTR)
			continue;
		if (r < 0) {
			error("%s: poll: %s", f->path, strerror(-r));
			return -1;
		}
		/* Also on a timeout: cheap, and robust to a missed wake-up. */
		if (flight_check(f) < 0)
			return -1;
	}
	return 0;
}

/*
 * Disarm; save a snapshot that froze meanwhile (release it unsaved once
 * --count is reached), cancel a pending one; put back the rest.
 */
static void flight_teardown(struct flight *f)
{
	struct netlat_triggers none = { 0 };
	struct netlat_snapshot s;
	int r;

	if (f->armed) {
		r = netlat_set_triggers(f->fd, &none);
		if (r)
			f->status |= ioctl_failed_req(f->path, "TRIGGERS disarm",
						      NETLAT_IOC_TRIGGERS, -r);
		r = netlat_snapshot(f->fd, 0, &s);
		if (!r && s.state == NETLAT_SNAP_FROZEN && !(f->count && f->saved >= f->count))
			flight_save(f, &s);
		else if (!r && s.state != NETLAT_SNAP_EMPTY)
			netlat_snapshot(f->fd, NETLAT_SNAPSHOT_RELEASE, NULL);
	}
	kfilters_restore(&f->kf);
	flight_restore_rings(f);
}

/* Check the module first: every feature, before anything changes. */
static int flight_probe(struct flight *f)
{
	struct netlat_triggers t;
	struct netlat_snapshot s;
	int r = netlat_snapshot(f->fd, 0, &s);

	if (r)
		return ioctl_failed_req(f->path, "SNAPSHOT", NETLAT_IOC_SNAPSHOT, -r);
	r = netlat_get_triggers(f->fd, &t);
	if (r)
		return ioctl_failed_req(f->path, "TRIGGERS", NETLAT_IOC_TRIGGERS, -r);
	if (t.armed) {
		char armed[256];

		netlat_format_triggers(armed, sizeof(armed), &t);
		error("%s: triggers are already armed (%s): is another `netlat flight` "
		      "running? (`netlat triggers --disarm` disarms them)", f->path, armed);
		return 1;
	}
	return 0;
}

static int flight_parse(struct flight *f, int argc, char **argv)
{
	static const struct option opts[] = {
		OPTION_ARG("dir", 'd'),
		OPTION_ARG("trigger", 't'),
		OPTION_ARG("pre", 'p'),
		OPTION_ARG("post", 'P'),
		OPTION_ARG("max-bytes", 'm'),
		OPTION_ARG("count", 'n'),
		KFILTER_OPTION,
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	char errbuf[NETLAT_ERRBUF_SIZE];
	uint64_t v;
	int c, r;

	while ((c = next_option(argc, argv, "d:t:m:n:D:h", opts)) != -1) {
		switch (c) {
		case 'd':
			f->dir = optarg;
			break;
		case 't':
			if (netlat_parse_trigger(optarg, &f->trig, errbuf))
				return usage_error("bad --trigger '%s': %s", optarg, errbuf);
			break;
		case 'p':
			if (!parse_u64(optarg, &v) || v > NETLAT_TRIG_PRE_MS_MAX)
				return usage_error("bad --pre '%s': milliseconds, 0 to %u",
						   optarg, NETLAT_TRIG_PRE_MS_MAX);
			f->trig.pre_ms = (uint32_t)v;
			break;
		case 'P':
			if (!parse_u64(optarg, &v) || v > NETLAT_TRIG_POST_MS_MAX)
				return usage_error("bad --post '%s': milliseconds, 0 to %u",
						   optarg, NETLAT_TRIG_POST_MS_MAX);
			f->trig.post_ms = (uint32_t)v;
			break;
		case 'm':
			if (!parse_size(optarg, &f->max_bytes) || !f->max_bytes)
				return usage_error("bad --max-bytes '%s'", optarg);
			break;
		case 'n':
			if (!parse_u64(optarg, &f->count) || !f->count)
				return usage_error("bad --count '%s'", optarg);
			break;
		case KFILTER_OPT:
			r = kfilters_add(&f->kf, optarg);
			if (r >= 0)
				return r;
			break;
		default:
			r = device_option(c, argv, &f->path);
			if (r >= 0)
				return r;
		}
	}
	if (!f->dir)
		return usage_error("-d DIR is required");
	if (!f->trig.armed)
		return usage_error("nothing to wait for: give at least one --trigger");
	if (optind < argc)
		return usage_error("too many arguments");
	return -1;
}

int cmd_flight(int argc, char **argv)
{
	struct flight f = { .path = NETLAT_DEVICE_PATH, .max_bytes = DEFAULT_MAX_BYTES,
			    .fd = -1 };
	char armed[256];
	int r;

	f.kf.fd = -1;
	r = flight_parse(&f, argc, argv);
	if (r >= 0)
		return r;
	if (mkdir(f.dir, 0755) < 0 && errno != EEXIST) {
		error("cannot create %s: %s", f.dir, strerror(errno));
		return 1;
	}
	r = snapdir_clean_tmp(f.dir);
	if (r < 0) {
		error("cannot read %s: %s", f.dir, strerror(-r));
		return 1;
	}
	f.fd = open_device(f.path);
	if (f.fd < 0)
		return 1;
	catch_stop_signals();
	if (flight_probe(&f) || kfilters_apply(&f.kf, f.path)) {
		close(f.fd);
		return 1;
	}
	f.status = flight_setup_rings(&f);
	if (!f.status) {
		r = netlat_set_triggers(f.fd, &f.trig);
		if (r)
			f.status = ioctl_failed_req(f.path, "TRIGGERS arm", NETLAT_IOC_TRIGGERS, -r);
		f.armed = !r;
	}
	if (f.armed) {
		netlat_format_triggers(armed, sizeof(armed), &f.trig);
		fprintf(stderr, "netlat: flight recorder on %s: triggers %s; pre %u ms, "
			"post %u ms; snapshots to %s (at most %llu bytes)\n", f.path, armed,
			f.trig.pre_ms, f.trig.post_ms, f.dir,
			(unsigned long long)f.max_bytes);
		if (flight_loop(&f))
			f.status = 1;
	}
	flight_teardown(&f);
	close(f.fd);
	fprintf(stderr, "netlat: flight recorder stopped: %llu snapshot%s saved\n",
		(unsigned long long)f.saved, f.saved == 1 ? "" : "s");
	return f.status;
}

/*
 * The end of "netlat filters" and "triggers": @r, what the change asked
 * for gave (0, or the -errno of ioctl @what), then @show the state. @fd
 * is closed. The exit status.
 */
static int show_after(int fd, const char *path, int r, const char *what,
		      unsigned long request, int (*show)(int fd, const char *path))
{
	if (r) {
		close(fd);
		return ioctl_failed_req(path, what, request, -r);
	}
	r = show(fd, path);
	close(fd);
	return r;
}

/* ---- netlat filters ------------------------------------------------------------ */

static int show_filters(int fd, const char *path)
{
	struct netlat_filter_rule rules[NETLAT_FILTER_MAX_RULES];
	unsigned int nr = NETLAT_FILTER_MAX_RULES, i, cpu;
	struct netlat_cpu_stats st;
	struct netlat_info info;
	uint64_t filtered = 0;
	char spec[512];
	int r;

	r = netlat_get_filters(fd, rules, &nr);
	if (r)
		return ioctl_failed_req(path, "FILTERS", NETLAT_IOC_FILTERS, -r);
	if (!nr)
		printf("no in-kernel filter rules: every record is kept\n");
	for (i = 0; i < nr && i < NETLAT_FILTER_MAX_RULES; i++) {
		netlat_format_filter(spec, sizeof(spec), &rules[i]);
		printf("rule %u: %s\n", i + 1, spec);
	}
	if (!netlat_get_info(fd, &info)) {
		for (cpu = 0; cpu < info.nr_cpus; cpu++)
			if (!netlat_get_cpu_stats(fd, cpu, &st))
				filtered += st.filtered;
		printf("kept out since load: %llu records\n", (unsigned long long)filtered);
	}
	return finish_stdout();
}

static int clear;

int cmd_filters(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "clear", no_argument, &clear, 1 },
		KFILTER_OPTION,
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	const char *path = NETLAT_DEVICE_PATH;
	struct kfilters kf = { .fd = -1 };
	int c, fd, r;

	/* --clear sets its flag: getopt_long() returns 0 for it. */
	while ((c = next_option(argc, argv, "D:h", opts)) != -1) {
		r = c == KFILTER_OPT ? kfilters_add(&kf, optarg) :
		    c ? device_option(c, argv, &path) : -1;
		if (r >= 0)
			return r;
	}
	if (clear && kf.nr)
		return usage_error("--clear and --filter exclude each other");
	r = device_args_done(argc, path, &fd);
	if (r >= 0)
		return r;
	r = clear || kf.nr ? netlat_set_filters(fd, kf.rules, kf.nr) : 0;
	return show_after(fd, path, r, "FILTERS", NETLAT_IOC_FILTERS, show_filters);
}

/* ---- netlat triggers ----------------------------------------------------------- */

static const char *snap_state_name(unsigned int state)
{
	switch (state) {
	case NETLAT_SNAP_EMPTY: return "none";
	case NETLAT_SNAP_PENDING: return "pending (post window)";
	case NETLAT_SNAP_FROZEN: return "frozen";
	}
	return "?";
}

static int show_triggers(int fd, const char *path)
{
	struct netlat_triggers t;
	struct netlat_snapshot s;
	char armed[256];
	int r;

	r = netlat_get_triggers(fd, &t);
	if (r)
		return ioctl_failed_req(path, "TRIGGERS", NETLAT_IOC_TRIGGERS, -r);
	r = netlat_snapshot(fd, 0, &s);
	if (r)
		return ioctl_failed_req(path, "SNAPSHOT", NETLAT_IOC_SNAPSHOT, -r);
	netlat_format_triggers(armed, sizeof(armed), &t);
	printf("armed       %s\n", armed);
	printf("pre window  %u ms%s\n", t.pre_ms, t.pre_ms ? "" : " (all the rings hold)");
	printf("post window %u ms\n", t.post_ms);
	printf("fired       %llu\n", (unsigned long long)t.fired);
	printf("snapshot    %s", snap_state_name(s.state));
	if (s.state == NETLAT_SNAP_FROZEN)
		printf(", id %llu, %llu bytes", (unsigned long long)s.id,
		       (unsigned long long)s.bytes);
	printf("\ntaken       %llu\nmissed      %llu\ncapacity    %llu bytes\n",
	       (unsigned long long)s.taken, (unsigned long long)s.missed,
	       (unsigned long long)s.capacity);
	return finish_stdout();
}

static int disarm;

int cmd_triggers(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "disarm", no_argument, &disarm, 1 },
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	const char *path = NETLAT_DEVICE_PATH;
	struct netlat_triggers none = { 0 };
	int c, fd, r;

	/* --disarm sets its flag: getopt_long() returns 0 for it. */
	while ((c = next_option(argc, argv, "D:h", opts)) != -1)
		if (c && (r = device_option(c, argv, &path)) >= 0)
			return r;
	r = device_args_done(argc, path, &fd);
	if (r >= 0)
		return r;
	r = disarm ? netlat_set_triggers(fd, &none) : 0;
	return show_after(fd, path, r, "TRIGGERS disarm", NETLAT_IOC_TRIGGERS, show_triggers);
}
