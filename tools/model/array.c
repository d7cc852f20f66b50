/* tools/model/array.c: appending to growable arrays (their growth is common/grow.c) and sorting (array.h). */
#include "tools/model/array.h"

#include <stdlib.h>
#include <string.h>

void *ktrace_append(void *arrp, size_t *n, size_t *cap, size_t elem)
{
	char *p;

	if (ktrace_grow(arrp, cap, *n + 1, elem))
		return NULL;
	memcpy(&p, arrp, sizeof p);
	p += *n * elem;
	memset(p, 0, elem);
	(*n)++;
	return p;
}

/* The index of the first element whose key is above key (upper) or at or
 * above it (lower). */
static size_t bound(const void *base, size_t n, size_t size, uint64_t key, uint64_t (*key_of)(const void *),
		    int upper)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k = key_of((const char *)base + mid * size);

		if (k < key || (upper && k == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t ktrace_lower_bound(const void *base, size_t n, size_t size, uint64_t key, uint64_t (*key_of)(const void *))
{
	return bound(base, n, size, key, key_of, 0);
}

size_t ktrace_upper_bound(const void *base, size_t n, size_t size, uint64_t key, uint64_t (*key_of)(const void *))
{
	return bound(base, n, size, key, key_of, 1);
}

void ktrace_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}
