/* SPDX-License-Identifier: GPL-2.0 */
/* Is a PNG screenshot drawn, or blank? Enough PNG to count its colours. */
#ifndef TEST_PNG_CHECK_H
#define TEST_PNG_CHECK_H

#include <stddef.h>
#include <stdint.h>

struct png_stats {
	uint32_t width, height;
	size_t colours;		/* distinct RGB values, counted up to 4096 */
	size_t inked;		/* pixels not (nearly) white */
};

/* Decode @path (8-bit RGB or RGBA, not interlaced): 0, or -1 if it cannot. */
int png_check(const char *path, struct png_stats *st);

#endif
