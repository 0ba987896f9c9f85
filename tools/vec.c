// SPDX-License-Identifier: GPL-2.0
/* Growable arrays (see vec.h). */
#include <stdint.h>
#include <stdlib.h>
#include "vec.h"

void *vec_room(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c;

	if (n < *cap)
		return v;
	c = *cap ? *cap * 2 : first;
	if (c < *cap || c > SIZE_MAX / size)
		return NULL;
	v = realloc(v, c * size);
	if (v)
		*cap = c;
	return v;
}
