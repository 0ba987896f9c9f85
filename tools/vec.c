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

size_t vec_search(const void *base, size_t n, size_t size, const void *key,
		  bool (*before)(const void *elem, const void *key))
{
	const char *p = base;
	size_t l = 0, h = n;

	while (l < h) {
		size_t m = l + (h - l) / 2;

		if (before(p + m * size, key))
			l = m + 1;
		else
			h = m;
	}
	return l;
}
