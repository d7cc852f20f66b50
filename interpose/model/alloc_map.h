/* interpose/model/alloc_map.h: live device allocations, "which allocation holds address X".
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

/* Snapshots, for scans that run after the launch (interpose/capture/launch_expand.c):
 * the launching thread keeps a reference on the map as it was at the launch,
 * the writer thread scans against it later and drops the reference.  A
 * snapshot is immutable while referenced. */
struct ktrace_alloc_snap;
/* The current snapshot, without a reference (to compare with one held). */
const struct ktrace_alloc_snap *ktrace_alloc_map_current(void);
/* Start fetching what ktrace_alloc_map_current() reads (a hint). */
void ktrace_alloc_map_prefetch(void);
/* A reference on the current snapshot; NULL when the map was never filled. */
const struct ktrace_alloc_snap *ktrace_alloc_map_hold(void);
void ktrace_alloc_map_release(const struct ktrace_alloc_snap *s);
/* Called (from an allocating thread, write lock held) when the map has run
 * out of spare snapshot buffers while some are held: the holder should
 * release what it can soon.  NULL: none. */
void ktrace_alloc_map_set_waker(void (*fn)(void));
/* Lookups in a held snapshot (s may be NULL: empty). */
int ktrace_alloc_snap_lookup(const struct ktrace_alloc_snap *s, uint64_t addr, struct ktrace_alloc_info *out);
void ktrace_alloc_snap_range(const struct ktrace_alloc_snap *s, uint64_t *lo, uint64_t *hi);
/* Distinct for every published state of the map (0 for NULL): cached
 * answers keyed by it stay valid as long as the key is the same. */
uint64_t ktrace_alloc_snap_gen(const struct ktrace_alloc_snap *s);

/* Extent policy for hashing the buffer a pointer refers to (docs/format.md,
 * "Hash extents").  ptrs[0..n) are the pointer words of ONE launch with their
 * allocations; in_struct[i] (NULL: none) says the word lies inside a
 * by-value struct parameter and is a pointer by its value alone (rule 6:
 * it bounds nothing).  Fills len[i] with the number of bytes to hash
 * from ptrs[i], capped[i] with 1 when cut by max_bytes or the pool rule, and
 * (exact may be NULL) exact[i] with 1 when the region ends at the end of its
 * allocation's range (rule 1 alone decided it) and the allocation is no pool
 * (at most max_bytes; any size when max_bytes is 0).  Also records the
 * pointers as seen starts of their allocations for later launches (not
 * the in_struct words: see the policy). */
void ktrace_alloc_map_extents(const uint64_t *ptrs, const struct ktrace_alloc_info *allocs,
			      const uint8_t *in_struct, unsigned n, uint64_t max_bytes, uint64_t *len,
			      uint8_t *capped, uint8_t *exact);
/* The same, and (uncut may be NULL) uncut[i] with the bytes rules 1 to 3
 * gave the region before rules 4 and 5 cut it: for a CUT record when
 * capped[i] is set (docs/format.md, "CUT"). */
void ktrace_alloc_map_extents_uncut(const uint64_t *ptrs, const struct ktrace_alloc_info *allocs,
				    const uint8_t *in_struct, unsigned n, uint64_t max_bytes, uint64_t *len,
				    uint8_t *capped, uint8_t *exact, uint64_t *uncut);

/* Fork hooks, called by interpose/fork.c: prepare takes the write lock, then
 * the seen-table lock; parent and child release them. */
void ktrace_alloc_map_fork_prepare(void);
void ktrace_alloc_map_fork_parent(void);
void ktrace_alloc_map_fork_child(void);

/* Drop everything (fork child, shutdown). */
void ktrace_alloc_map_reset(void);
unsigned long ktrace_alloc_map_count(void);
/* Snapshot buffers made so far (tests: the pool stays bounded). */
unsigned ktrace_alloc_map_buffers(void);

#endif
