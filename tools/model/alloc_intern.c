/* tools/model/alloc_intern.c: each value a trace's records repeat (a
 * region's extent, a launch's look) kept once (alloc_intern.h), found
 * again through an open-addressing hash index over its bytes.
 */
#include "tools/model/alloc_intern.h"

#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"

const struct tm_extent ktrace_tm_no_extent;

static const unsigned char *items_of(const struct tm_intern *in)
{
	const unsigned char *p;

	memcpy(&p, in->items, sizeof p);
	return p;
}

/* A hash of v's bytes, four at a time (the values' sizes are multiples of 4). */
static size_t slot_of(const unsigned char *v, size_t size, size_t nslots)
{
	uint64_t h = 0x632be59bd9b4e019ull;

	for (size_t i = 0; i + 4 <= size; i += 4) {
		uint32_t w;

		memcpy(&w, v + i, sizeof w);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	}
	return (size_t)(h ^ h >> 29) & (nslots - 1);
}

static void place(uint32_t *slots, size_t nslots, const struct tm_intern *in, uint32_t number)
{
	size_t i = slot_of(items_of(in) + (number - 1) * in->size, in->size, nslots);
	while (slots[i])
		i = (i + 1) & (nslots - 1);
	slots[i] = number;
}

/* Make the index again, large enough (at least 64 slots) to stay under half
 * full with one more value: the slots of replaced values are dropped. */
static int grow_index(struct tm_intern *in)
{
	size_t n = in->nslots ? in->nslots : 64;
	while ((*in->nitems + 1) * 2 > n)
		n *= 2;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t k = 0; k < *in->nitems; k++)
		place(slots, n, in, (uint32_t)(k + 1));
	free(in->slots);
	in->slots = slots;
	in->nslots = n;
	in->nfilled = *in->nitems;
	return 0;
}

static int all_zero(const unsigned char *v, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (v[i])
			return 0;
	return 1;
}

uint32_t ktrace_intern_find(const struct tm_intern *in, const void *v)
{
	if (!in->nslots)
		return 0;
	for (size_t i = slot_of(v, in->size, in->nslots); in->slots[i]; i = (i + 1) & (in->nslots - 1))
		if (!memcmp(items_of(in) + (in->slots[i] - 1) * in->size, v, in->size))
			return in->slots[i];
	return 0;
}

uint32_t ktrace_intern(struct tm_intern *in, const void *v, int *oom)
{
	if (all_zero(v, in->size))
		return 0;
	uint32_t found = ktrace_intern_find(in, v);
	if (found)
		return found;
	if (*in->nitems >= UINT32_MAX - 1 || ((in->nfilled + 1) * 2 > in->nslots && grow_index(in)) ||
	    ktrace_grow(in->items, &in->cap_items, *in->nitems + 1, in->size)) {
		*oom = 1;
		return 0;
	}
	unsigned char *items;
	memcpy(&items, in->items, sizeof items);
	memcpy(items + *in->nitems * in->size, v, in->size);
	uint32_t number = (uint32_t)++*in->nitems;
	place(in->slots, in->nslots, in, number);
	in->nfilled++;
	return number;
}

/* The old value's slot stays in the index until it is made again, finding
 * nothing (its value is gone). */
int ktrace_intern_replace(struct tm_intern *in, uint32_t number, const void *v)
{
	if ((in->nfilled + 1) * 2 > in->nslots && grow_index(in))
		return -1;
	memcpy((unsigned char *)items_of(in) + (number - 1) * in->size, v, in->size);
	place(in->slots, in->nslots, in, number);
	in->nfilled++;
	return 0;
}

void ktrace_intern_free(struct tm_intern *in)
{
	free(in->slots);
	in->slots = NULL;
	in->nslots = in->nfilled = 0;
}
