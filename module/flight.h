/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flight recorder: snapshots of the rings (NETLAT_IOC_SNAPSHOT) and the
 * triggers that freeze them (NETLAT_IOC_TRIGGERS).
 */
#ifndef _NETLAT_FLIGHT_H
#define _NETLAT_FLIGHT_H

#include <linux/types.h>
#include <linux/compiler.h>

struct netlat_writer;
struct netlat_snapbuf;
struct vm_area_struct;

/* A file that asked for NETLAT_SNAPSHOT_READ reads the frozen snapshot. */
struct netlat_snap_reader {
	bool active;
	u64 id;		/* the snapshot it reads; another one is -ENODATA */
	u64 pos;
};

/* NETLAT_TRIG_* bits; nonzero: commit calls netlat_trig_check() */
extern u32 netlat_trig_armed;
void netlat_trig_check(struct netlat_writer *w, u32 armed);

long netlat_ioc_snapshot(struct netlat_snap_reader *sr, void __user *uarg);
long netlat_ioc_triggers(void __user *uarg);
ssize_t netlat_snap_read(struct netlat_snap_reader *sr, char __user *buf,
			 size_t count);
bool netlat_snap_frozen(void);
int netlat_snap_mmap(struct vm_area_struct *vma, unsigned long len);

/* ring resize (dev.c): the snapshot buffer follows the ring size */
u64 netlat_snap_mem_bytes(void);
int netlat_snap_prepare_resize(u64 ring_bytes, struct netlat_snapbuf **sb);
struct netlat_snapbuf *netlat_snap_swap_buf(struct netlat_snapbuf *sb);
void netlat_snapbuf_free(struct netlat_snapbuf *sb);

int netlat_flight_init(void);
void netlat_flight_exit(void);

#endif /* _NETLAT_FLIGHT_H */
