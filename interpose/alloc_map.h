/* interpose/alloc_map.h: live device allocations, "which allocation holds address X".
 *
 * Filled by the memory wrappers (cuMemAlloc*, VMM, managed, host-mapped) and
 * queried on the launch path for every 8-byte word of a parameter buffer.
 * Lookups take O(log n), make no driver call and no lock that an allocating
 * thread can hold for long (readers see an immutable sorted snapshot).
 *
 * It also remembers, per allocation, the start addresses that pointer
 * arguments have had ("seen starts"), which the hash extent policy uses to
 * bound a region: see ktrace_alloc_map_extent().
 */
#ifndef KTRACE_ALLOC_MAP_H
#define KTRACE_ALLOC_MAP_H

#include <stdint.h>

struct ktrace_alloc_info {
	uint64_t base;
	uint64_t size;
	uint32_t kind;   /* enum ktrace_alloc_kind */
	int32_t device;
};

/* Register [base, base+size).  An overlapping older entry is replaced. */
void ktrace_alloc_map_insert(uint64_t base, uint64_t size, uint32_t kind, int32_t device);
/* Remove the allocation starting at base; returns 0 and fills *old, or -1 if unknown. */
int ktrace_alloc_map_remove(uint64_t base, struct ktrace_alloc_info *old);
/* Remove every allocation overlapping [base, base+size) (cuMemUnmap). */
void ktrace_alloc_map_remove_range(uint64_t base, uint64_t size);
/* Find the allocation holding addr.  Returns 1 and fills *out, or 0. */
int ktrace_alloc_map_lookup(uint64_t addr, struct ktrace_alloc_info *out);
/* Quick reject: 0 if addr is outside [lowest base, highest end) of all allocations. */
int ktrace_alloc_map_maybe(uint64_t addr);
/* That range, read once (a launch's scan tests every word against it). */
void ktrace_alloc_map_range(uint64_t *lo, uint64_t *hi);

/* Extent policy for hashing the buffer a pointer refers to (docs/format.md,
 * "Hash extents").  ptrs[0..n) are the pointer words of ONE launch with their
 * allocations; in_struct[i] (NULL: none) says the word lies inside a
 * by-value struct parameter.  Fills len[i] with the number of bytes to hash
 * from ptrs[i] and capped[i] with 1 when cut by max_bytes or the pool rule.
 * Also records the pointers as seen starts of their allocations for later
 * launches (not struct words in a pool: see the policy). */
void ktrace_alloc_map_extents(const uint64_t *ptrs, const struct ktrace_alloc_info *allocs,
			      const uint8_t *in_struct, unsigned n, uint64_t max_bytes, uint64_t *len,
			      uint8_t *capped);

/* Drop everything (fork child, shutdown). */
void ktrace_alloc_map_reset(void);
unsigned long ktrace_alloc_map_count(void);

#endif
