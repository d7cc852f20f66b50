/* tools/model/alloc_intern.c: each allocation of a trace's regions kept once
 * (alloc_intern.h), found again through an open-addressing hash index.
 */
#include "tools/model/alloc_intern.h"

#include <stdlib.h>

#include "tools/model/array.h"

static size_t slot_of(struct tm_alloc a, size_t nslots)
{
	uint64_t h = a.base * 0x9e3779b97f4a7c15ull ^ (a.size + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h ^ h >> 29) & (nslots - 1);
}

static void place(uint32_t *slots, size_t nslots, const struct tm_alloc *allocs, uint32_t number)
{
	size_t i = slot_of(allocs[number - 1], nslots);
	while (slots[i])
		i = (i + 1) & (nslots - 1);
	slots[i] = number;
}

/* Double the index (at least 64 slots), keeping it under half full. */
static int grow_index(struct alloc_intern *in)
{
	size_t n = in->nslots ? in->nslots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t k = 0; k < *in->nallocs; k++)
		place(slots, n, *in->allocs, (uint32_t)(k + 1));
	free(in->slots);
	in->slots = slots;
	in->nslots = n;
	return 0;
}

uint32_t ktrace_alloc_intern(struct alloc_intern *in, struct tm_alloc a, int *oom)
{
	if (!a.base && !a.size)
		return 0;
	if (in->nslots) {
		for (size_t i = slot_of(a, in->nslots); in->slots[i]; i = (i + 1) & (in->nslots - 1)) {
			const struct tm_alloc *have = &(*in->allocs)[in->slots[i] - 1];
			if (have->base == a.base && have->size == a.size)
				return in->slots[i];
		}
	}
	if (*in->nallocs >= UINT32_MAX - 1 || ((*in->nallocs + 1) * 2 > in->nslots && grow_index(in)) ||
	    ktrace_grow(in->allocs, &in->cap_allocs, *in->nallocs + 1, sizeof **in->allocs)) {
		*oom = 1;
		return 0;
	}
	(*in->allocs)[(*in->nallocs)++] = a;
	uint32_t number = (uint32_t)*in->nallocs;
	place(in->slots, in->nslots, *in->allocs, number);
	return number;
}

void ktrace_alloc_intern_free(struct alloc_intern *in)
{
	free(in->slots);
	in->slots = NULL;
	in->nslots = 0;
}
