// SPDX-License-Identifier: GPL-2.0
/* The snapshot directory of "netlat flight": see snapdir.h. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "snapdir.h"

#define PREFIX		"netlat-"
#define SUFFIX		".snap"
#define TMP_PREFIX	".netlat-"
#define TMP_SUFFIX	".tmp"

/* "YYYYmmdd-HHMMSS.mmm": fixed width, so names sort by time. */
#define STAMP_LEN	19

void snapdir_name(char *buf, size_t len, uint64_t wall_ns, uint64_t id)
{
	time_t secs = (time_t)(wall_ns / 1000000000ULL);
	unsigned int ms = (unsigned int)(wall_ns % 1000000000ULL / 1000000);
	char stamp[32];
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm))
		strcpy(stamp, "00000000-000000");
	snprintf(buf, len, PREFIX "%s.%03u-%llu" SUFFIX, stamp, ms,
		 (unsigned long long)id);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The id of a snapshot file name, which snapdir_is_snapshot() accepted. */
static uint64_t name_id(const char *name)
{
	return strtoull(name + strlen(PREFIX) + STAMP_LEN + 1, NULL, 10);
}

bool snapdir_is_snapshot(const char *name)
{
	static const char shape[] = "dddddddd-dddddd.ddd";
	const char *p = name + strlen(PREFIX);
	size_t i;

	if (strncmp(name, PREFIX, strlen(PREFIX)) || !has_suffix(name, SUFFIX) ||
	    strlen(p) < STAMP_LEN + 1 + 1 + strlen(SUFFIX))
		return false;
	for (i = 0; i < STAMP_LEN; i++)
		if (shape[i] == 'd' ? p[i] < '0' || p[i] > '9' : p[i] != shape[i])
			return false;
	if (p[STAMP_LEN] != '-')
		return false;
	for (p += STAMP_LEN + 1; *p != '.'; p++)
		if (*p < '0' || *p > '9')
			return false;
	return !strcmp(p, SUFFIX);
}

void snapdir_tmp_name(char *buf, size_t len, long pid)
{
	snprintf(buf, len, TMP_PREFIX "%ld" TMP_SUFFIX, pid);
}

int snapdir_clean_tmp(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) &&
		    has_suffix(de->d_name, TMP_SUFFIX) &&
		    !unlinkat(dirfd(d), de->d_name, 0))
			n++;
	closedir(d);
	return n;
}

struct snap_file {
	char name[256];
	uint64_t id;
	uint64_t bytes;
};

/* Oldest first: by the time stamp, then by id. */
static int older_first(const void *a, const void *b)
{
	const struct snap_file *x = a, *y = b;
	int c = strncmp(x->name, y->name, strlen(PREFIX) + STAMP_LEN);

	if (c)
		return c;
	return (x->id > y->id) - (x->id < y->id);
}

/* The snapshot files of @d with their sizes; -errno on failure. */
static int list_snapshots(DIR *d, struct snap_file **out, size_t *nr)
{
	struct snap_file *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;

	while ((de = readdir(d))) {
		if (!snapdir_is_snapshot(de->d_name) || strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		strcpy(v[n].name, de->d_name);
		v[n].id = name_id(de->d_name);
		v[n].bytes = (uint64_t)st.st_size;
		n++;
	}
	qsort(v, n, sizeof(*v), older_first);
	*out = v;
	*nr = n;
	return 0;
}

int snapdir_rotate(const char *dir, uint64_t max_bytes, unsigned int *deleted,
		   uint64_t *freed, uint64_t *kept)
{
	struct snap_file *v;
	uint64_t total = 0;
	size_t n, i;
	DIR *d = opendir(dir);
	int r;

	*deleted = 0;
	*freed = *kept = 0;
	if (!d)
		return -errno;
	r = list_snapshots(d, &v, &n);
	if (r) {
		closedir(d);
		return r;
	}
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	for (i = 0; i + 1 < n && total > max_bytes; i++) {
		if (unlinkat(dirfd(d), v[i].name, 0) < 0)
			continue;
		total -= v[i].bytes;
		*freed += v[i].bytes;
		(*deleted)++;
	}
	*kept = total;
	free(v);
	closedir(d);
	return 0;
}
