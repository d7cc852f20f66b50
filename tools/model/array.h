/* tools/model/array.h: the growable arrays and the ordering helpers the tools
 * share (array.c).
 */
#ifndef KTRACE_TOOLS_MODEL_ARRAY_H
#define KTRACE_TOOLS_MODEL_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "common/grow.h"

/* ktrace_grow(arrp, cap, need, elem): common/grow.h. */

/* Append a zeroed element to the array that arrp points to (*n elements used,
 * capacity *cap, elem bytes each) and count it: the new element, or NULL
 * when memory runs out (nothing appended). */
void *ktrace_append(void *arrp, size_t *n, size_t *cap, size_t elem);

/* qsort, which must not see a NULL base even for 0 elements. */
void ktrace_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* The index of the first of the n elements of the array base (size bytes
 * each), sorted by key_of, whose key is key or above (n when none is): a
 * binary search. */
size_t ktrace_lower_bound(const void *base, size_t n, size_t size, uint64_t key, uint64_t (*key_of)(const void *));
/* The same for the first element whose key is above key: the count of those
 * at or below it, the last of which is the one before the index returned. */
size_t ktrace_upper_bound(const void *base, size_t n, size_t size, uint64_t key, uint64_t (*key_of)(const void *));

/* -1, 0 or 1 as a is below, equal to or above b: a comparator's step. */
static inline int ktrace_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

#endif
