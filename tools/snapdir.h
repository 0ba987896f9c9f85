/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The snapshot directory of "netlat flight": file names and rotation.
 * Snapshot files are named netlat-YYYYmmdd-HHMMSS.mmm-ID.snap (UTC time
 * the snapshot was frozen, its id); they are written as .netlat-*.tmp and
 * renamed, so a reader never sees half a file. Only files with these
 * names are ever deleted.
 */
#ifndef NETLAT_SNAPDIR_H
#define NETLAT_SNAPDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAPDIR_NAME_MAX	64

/* The file name for a snapshot frozen at @wall_ns (CLOCK_REALTIME) with @id. */
void snapdir_name(char *buf, size_t len, uint64_t wall_ns, uint64_t id);

/* True if @name is a snapshot file name (what rotation may delete). */
bool snapdir_is_snapshot(const char *name);

/* The temporary name a snapshot is written to before the rename. */
void snapdir_tmp_name(char *buf, size_t len, long pid);

/* Delete temporary files a killed writer left: count deleted, or -errno. */
int snapdir_clean_tmp(const char *dir);

/*
 * snapdir_rotate() - delete the oldest snapshot files of @dir (by the
 * time and id in their names) until the snapshot files total at most
 * @max_bytes; the newest one is never deleted, even alone over the limit.
 * @deleted, @freed: files deleted and their bytes; @kept: bytes left.
 * 0 or -errno (the directory could not be read).
 */
int snapdir_rotate(const char *dir, uint64_t max_bytes, unsigned int *deleted,
		   uint64_t *freed, uint64_t *kept);

#endif
