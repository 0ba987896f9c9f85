/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What netlat record notes of the recording host (NETLAT_NOTE_HOST) and of
 * its clocks once a second (NETLAT_NOTE_CLOCK), and what a reader of two
 * hosts' captures makes of them.
 */
#ifndef NETLAT_NOTES_H
#define NETLAT_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "libnetlat.h"

/* A HOST note of this host into @buf (@room bytes): its size, 0 if short. */
size_t note_host(void *buf, size_t room);
/* A CLOCK note of this moment: its size, 0 if @room is short. */
size_t note_clock(void *buf, size_t room);

/* One host's notes, as a capture gave them. */
struct host_notes {
	char hostname[65];
	char boot_id[40];
	uint64_t clocks;		/* CLOCK notes */
	uint64_t first_mono, first_raw, last_mono, last_raw;
	int64_t last_wall_gap;		/* realtime - monotonic of the last */
	uint64_t realtime_steps;	/* that gap moved by more than 1 ms */
	int64_t freq, first_freq;	/* adjtimex freq (ppm << 16) */
	unsigned int status;		/* adjtimex status of the last */
	double tick_ppm;		/* adjtimex tick against its nominal, ppm */
	bool have_freq;
};

/* Take @n into @h (other notes and unknown keys are left alone). */
void notes_take(struct host_notes *h, const struct netlat_rec_note *n);
/* MONOTONIC's rate against MONOTONIC_RAW over the notes, in ppm (0 if fewer than two). */
double notes_slew_ppm(const struct host_notes *h);

#endif
