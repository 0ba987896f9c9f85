// SPDX-License-Identifier: GPL-2.0
/*
 * The commit half of the record write API: the ring publishes the record,
 * then the armed triggers see it while the write is still open (a probe
 * hit inside the check is dropped by the ring, not nested).
 */
#include <linux/kernel.h>
#include <linux/export.h>
#include <linux/kprobes.h>
#include "record.h"
#include "flight.h"

void netlat_commit(struct netlat_writer *w)
{
	u32 armed = READ_ONCE(netlat_trig_armed);

	if (likely(!armed)) {
		netlat_ring_publish_finish(w);
		return;
	}
	netlat_ring_publish(w);
	netlat_trig_check(w, armed);
	netlat_ring_finish(w);
}
NOKPROBE_SYMBOL(netlat_commit);
EXPORT_SYMBOL_GPL(netlat_commit);
