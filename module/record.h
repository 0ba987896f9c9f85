/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record write API, for every writer (probe families, markers, other
 * modules): reserve a record on this CPU's ring, fill it, commit it.
 * Between the two, interrupts are off; nothing may sleep.
 */
#ifndef _NETLAT_RECORD_H
#define _NETLAT_RECORD_H

#include <linux/string.h>
#include "ring.h"

/**
 * netlat_reserve() - start writing one record
 * @w: writer handle, passed on to netlat_commit()
 * @type: NETLAT_REC_* type
 * @len: record length, header included (at most NETLAT_REC_MAX_SIZE)
 *
 * Returns the record with its header filled in and its padding zeroed, or
 * NULL if tracing is off or the record had to be dropped (then it has been
 * counted and will be reported by a NETLAT_REC_LOST record).
 */
static __always_inline void *netlat_reserve(struct netlat_writer *w, u16 type,
					    u32 len)
{
	return netlat_ring_reserve_at(w, type, len, 0);
}

/*
 * netlat_reserve() of a record whose time its writer has read already
 * (@at, CLOCK_MONOTONIC; the ring keeps its CPU's times in order), zeroed
 * past its header: no second clock read for it.
 */
static __always_inline void *netlat_reserve_zeroed_at(struct netlat_writer *w,
						      u16 type, u32 len, u64 at)
{
	void *rec = netlat_ring_reserve_at(w, type, len, at);

	if (rec)
		memset(rec + sizeof(struct netlat_rec_hdr), 0,
		       len - sizeof(struct netlat_rec_hdr));
	return rec;
}

/* netlat_reserve(), and the record zeroed past its header. */
static __always_inline void *netlat_reserve_zeroed(struct netlat_writer *w,
						   u16 type, u32 len)
{
	return netlat_reserve_zeroed_at(w, type, len, 0);
}

/* Publish the record of a successful netlat_reserve(); checks triggers. */
void netlat_commit(struct netlat_writer *w);

#endif /* _NETLAT_RECORD_H */
