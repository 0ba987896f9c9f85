// SPDX-License-Identifier: GPL-2.0
/*
 * One CPU's ring copied into a snapshot while its writers go on. The
 * ring notes the bounds on its CPU (netlat_ring_mark(), ring.c: its state
 * is its own); this copies them with interrupts on, cuts from the front
 * what the writers overwrote meanwhile and walks the rest trusting no
 * size.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/string.h>
#include "snapcpu.h"
#include "ring.h"

#define NETLAT_SNAP_CHUNK	(64 * 1024)	/* copied between resched points */
#define NETLAT_SNAP_WALK	1024		/* records between resched points */

/**
 * netlat_snapcpu_copy() - copy one CPU's ring into a snapshot
 * @rs: the rings
 * @cpu: whose ring
 * @dst: room for a NETLAT_REC_SNAP_CPU record, then the records
 * @room: bytes at @dst
 * @start_ns: pre window: older records are skipped
 *
 * Process context, CPU hotplug held off (cpus_read_lock()), under the
 * snapshot's owner: the records the mark saw are copied in chunks while
 * writers go on, interrupts on; those overwritten (or consumed) during
 * the copy are cut from its front, and the rest is walked like read()
 * does, on the copy, trusting no size. Returns the bytes written.
 */
u64 netlat_snapcpu_copy(struct netlat_rings *rs, unsigned int cpu,
			void *dst, u64 room, u64 start_ns)
{
	struct netlat_rec_snap_cpu *sc = dst;
	struct netlat_ring_mark mark = {
		.rs = rs, .cpu = cpu, .copy = sc + 1, .room = room - sizeof(*sc),
	}, *m = &mark;
	void *copy = sc + 1;
	u64 len, done, start, pos, end, gone;

	netlat_ring_mark(m);
	memset(sc, 0, sizeof(*sc));
	netlat_init_hdr(&sc->hdr, NETLAT_REC_SNAP_CPU, sizeof(*sc), cpu,
			m->ts_ns);
	sc->written = m->written;
	sc->overwritten = m->overwritten;
	sc->dropped = m->dropped;
	sc->first_seq = m->first_seq;

	len = min(m->prod - m->cons, m->room);
	end = m->cons + len;
	start = m->cons;
	if (!m->copied) {
		/* Mapped twice in a row: [cons, cons + len) is contiguous. */
		/* racing the writers on purpose: the front is cut below */
		for (done = 0; done < len; done += NETLAT_SNAP_CHUNK) {
			cond_resched();
			data_race(memcpy(copy + done,
					 m->data + ((m->cons + done) & rs->mask),
					 min_t(u64, len - done,
					       NETLAT_SNAP_CHUNK)));
		}
		netlat_ring_mark_end(m);
		/* nothing written over past the mark's cons: all of it */
		if ((s64)(m->cons_end - m->cons) <= 0)
			start = m->cons;
		else if (m->cons_end - m->cons <= len &&
			 IS_ALIGNED(m->cons_end, NETLAT_REC_ALIGN))
			start = m->cons_end;
		else
			start = end;	/* all of it written over */
		/*
		 * Overwritten during the copy: the records the writers moved
		 * past, or (all of them, or the ring reset) every record the
		 * mark saw: in overwrite mode the ring holds written -
		 * overwritten records.
		 */
		gone = m->overwritten_end - m->overwritten;
		if (start == end && end != m->cons &&
		    READ_ONCE(netlat_mode) == NETLAT_MODE_OVERWRITE)
			sc->overwritten = m->written;
		else if (start != m->cons)
			sc->overwritten += min(gone, m->written - m->overwritten);
	}

	for (pos = start; pos != end;) {
		const struct netlat_rec_hdr *h = copy + (pos - m->cons);
		const struct netlat_rec_lost *lost = (const void *)h;
		u32 size = h->size;

		if (!netlat_rec_valid(h, size, end - pos))
			break;
		if (!((sc->records + sc->skipped + 1) % NETLAT_SNAP_WALK))
			cond_resched();
		if (!sc->records && h->ts_ns < start_ns) {
			sc->skipped++;
			pos += size;
			start = pos;
			continue;
		}
		/* What a reader compares: for LOST, the start of the gap. */
		if (!sc->records)
			sc->first_seq = h->type == NETLAT_REC_LOST &&
					size >= sizeof(*lost) ?
					lost->first_seq : h->seq;
		sc->records++;
		pos += size;
	}
	sc->bytes = pos - start;
	/* to the copy's start, forward in chunks: the ranges may overlap */
	for (done = 0; start != m->cons && done < sc->bytes;
	     done += NETLAT_SNAP_CHUNK) {
		memmove(copy + done, copy + (start - m->cons) + done,
			min_t(u64, sc->bytes - done, NETLAT_SNAP_CHUNK));
		cond_resched();
	}
	return sizeof(*sc) + sc->bytes;
}
