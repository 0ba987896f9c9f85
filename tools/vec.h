/* SPDX-License-Identifier: GPL-2.0 */
/* Growable arrays of the netlat command: one way to make room. */
#ifndef NETLAT_VEC_H
#define NETLAT_VEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Room for element @n of the array @v of *@cap elements of @size bytes:
 * @v itself if it has it, else @v reallocated to twice *@cap (@first if
 * empty), *@cap updated. NULL if the memory cannot be had (then @v and
 * *@cap are as they were).
 */
void *vec_room(void *v, size_t *cap, size_t n, size_t size, size_t first);

/* The order of @a and @b, -1, 0 or 1, for qsort() and vec_search() orders. */
#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

/*
 * Binary search of the @n elements of @size bytes at @base, ordered so
 * that @before(element, @key) holds for a first part of them only: the
 * index of the first element it does not hold for, @n if none.
 */
size_t vec_search(const void *base, size_t n, size_t size, const void *key,
		  bool (*before)(const void *elem, const void *key));

#endif /* NETLAT_VEC_H */
