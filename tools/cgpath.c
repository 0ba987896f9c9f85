// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup v2 ids to paths (see cgpath.h): a walk of the cgroup2 mount
 * records every directory's inode number, which is its cgroup's id.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cgpath.h"
#include "vec.h"

/*
 * A walk stops there: a host with more cgroups gets the ones seen first
 * (what earlier walks found counts too: twice as many entries at most).
 */
#define CG_MAX_DEPTH	64
#define CG_MAX_DIRS	(1 << 16)
#define CG_REWALK_SEC	5

struct cg_ent {
	uint64_t id;
	char *path;
};

static struct cg_ent *cg_tbl;
static size_t cg_n, cg_cap;
static char *cg_mount;		/* NULL: not looked for; "": none */
static double cg_walked = -1e9;

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

/* The first cgroup2 mount of this mount namespace, or "". */
static const char *find_mount(void)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	if (cg_mount)
		return cg_mount;
	f = fopen("/proc/self/mountinfo", "re");
	while (f && getline(&line, &len, f) > 0) {
		char mnt[4096], fstype[64];
		const char *sep = strstr(line, " - ");

		/* id parent major:minor root mountpoint ... - fstype ... */
		if (!sep || sscanf(sep, " - %63s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		unescape(mnt);
		cg_mount = strdup(mnt);
		break;
	}
	free(line);
	if (f)
		fclose(f);
	if (!cg_mount)
		cg_mount = strdup("");
	return cg_mount ? cg_mount : "";
}

static int cmp_id(const void *a, const void *b)
{
	const struct cg_ent *x = a, *y = b;

	return CMP(x->id, y->id);
}

/* cg_tbl is sorted by id between walks */
static struct cg_ent *find(uint64_t id)
{
	struct cg_ent key = { .id = id };

	return cg_n ? bsearch(&key, cg_tbl, cg_n, sizeof(key), cmp_id) : NULL;
}

/* After a walk: sorted, each id once (the path found first kept). */
static void sort_unique(void)
{
	size_t i, n = 0;

	qsort(cg_tbl, cg_n, sizeof(*cg_tbl), cmp_id);
	for (i = 0; i < cg_n; i++) {
		if (n && cg_tbl[n - 1].id == cg_tbl[i].id) {
			free(cg_tbl[i].path);
			continue;
		}
		cg_tbl[n++] = cg_tbl[i];
	}
	cg_n = n;
}

static void add(uint64_t id, const char *path)
{
	struct cg_ent *e;

	if (cg_n >= 2 * CG_MAX_DIRS)
		return;
	e = vec_room(cg_tbl, &cg_cap, cg_n, sizeof(*e), 64);
	if (!e)
		return;
	cg_tbl = e;
	e = &cg_tbl[cg_n];
	e->path = strdup(path);
	if (!e->path)
		return;
	e->id = id;
	cg_n++;
}

/* @dfd is @path's directory (closed here); its subdirectories recorded. */
static void walk(int dfd, char *path, size_t plen, size_t cap, int depth)
{
	struct dirent *de;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) && cg_n < 2 * CG_MAX_DIRS) {
		size_t nlen = strlen(de->d_name);
		struct stat st;
		int fd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    plen + 1 + nlen + 1 > cap)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st)) {
			close(fd);
			continue;
		}
		path[plen] = '/';
		memcpy(path + plen + 1, de->d_name, nlen + 1);
		add(st.st_ino, path);
		if (depth < CG_MAX_DEPTH)
			walk(fd, path, plen + 1 + nlen, cap, depth + 1);
		else
			close(fd);
		path[plen] = 0;
	}
	closedir(d);
}

static void walk_all(void)
{
	const char *mnt = find_mount();
	char path[4096];
	struct stat st;
	int fd;

	cg_walked = now_sec();
	if (!*mnt)
		return;
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st)) {
		close(fd);
		return;
	}
	add(st.st_ino, "/");
	path[0] = 0;
	walk(fd, path, 0, sizeof(path), 1);
	sort_unique();
}

const char *cgpath_lookup(uint64_t id)
{
	struct cg_ent *e = find(id);

	if (!e && now_sec() - cg_walked >= CG_REWALK_SEC) {
		walk_all();
		e = find(id);
	}
	return e ? e->path : NULL;
}

void cgpath_reset(void)
{
	size_t i;

	for (i = 0; i < cg_n; i++)
		free(cg_tbl[i].path);
	free(cg_tbl);
	cg_tbl = NULL;
	cg_n = cg_cap = 0;
	free(cg_mount);
	cg_mount = NULL;
	cg_walked = -1e9;
}
