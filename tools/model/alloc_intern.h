/* tools/model/alloc_intern.h: the allocations (base, size) of a trace's
 * regions, each kept once (alloc_intern.c): a region holds the number of its
 * allocation, not the two 64-bit fields.
 */
#ifndef KTRACE_TOOLS_MODEL_ALLOC_INTERN_H
#define KTRACE_TOOLS_MODEL_ALLOC_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* A region's allocation: base 0 and size 0 when it is not known. */
struct tm_alloc {
	uint64_t base, size;
};

/* The table being filled while a trace loads: the allocations (*allocs,
 * *nallocs of them, the trace's) and an open-addressing index over them. */
struct alloc_intern {
	struct tm_alloc **allocs;
	size_t *nallocs, cap_allocs;
	uint32_t *slots; /* 1 + the allocation's index; 0: empty */
	size_t nslots;   /* a power of two, or 0 */
};

/* The number of allocation a (1 + its index in *in->allocs; 0 for base 0
 * and size 0), adding it when it is new; 0 with *oom set when memory runs out. */
uint32_t ktrace_alloc_intern(struct alloc_intern *in, struct tm_alloc a, int *oom);

/* Free the index (the allocations are the trace's). */
void ktrace_alloc_intern_free(struct alloc_intern *in);

#endif
