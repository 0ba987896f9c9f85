/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 ids to paths: the kernel keys by a cgroup's id, which is the
 * inode number of its directory in the cgroup2 hierarchy.
 */
#ifndef NETLAT_CGPATH_H
#define NETLAT_CGPATH_H

#include <stdint.h>

/*
 * The path of the cgroup with id @id, from the hierarchy's root ("/" for
 * the root itself), or NULL when no cgroup of the caller's view has it (a
 * removed one, one outside the caller's cgroup namespace, no cgroup2
 * mounted). Ids are never reused in a boot, so answers are kept; an id
 * not found is looked for again at most once every few seconds.
 */
const char *cgpath_lookup(uint64_t id);

/* Forget what was kept, and where the hierarchy is mounted (tests). */
void cgpath_reset(void);

#endif
