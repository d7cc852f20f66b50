/* interpose/model/kernel_cache.h: each launching thread's cache of launch handle
 * -> what a launch of that kernel needs, in front of the registry.
 *
 * On the cold caches of a real program every line the launch path touches
 * costs a miss (docs/perf-capture.md).  The registry's shared map answers in
 * four dependent loads (the map, its table's size, the slot, the kernel
 * entry).  A thread's own direct-mapped cache, reached from a thread-local
 * pointer, answers in one line: a slot holds a copy of the entry's launch
 * fields (id, layout, small layout), which never change once the entry is
 * ready.  Only kernels that are ready and traced are cached; the others go
 * to the registry every time.
 *
 * Entries live until the process ends (ktrace_registry_reset in tests
 * aside); what can go stale is a handle's binding, when a module is unloaded
 * and the driver hands the same handle to a new kernel, and the ready state,
 * which a fork child resets.  Each of those bumps a generation in the
 * tracer's hot line (ktrace_kernel_cache_invalidate), and a thread whose
 * cache has another generation empties it before use.  Declarations only
 * (kernel_cache.c).
 */
#ifndef KTRACE_KERNEL_CACHE_H
#define KTRACE_KERNEL_CACHE_H

#include <stdint.h>

#include "interpose/model/param_scan.h"

struct ktrace_kernel_entry;

/* What a launch of a ready, traced kernel reads: one cache line. */
struct ktrace_kernel_hot {
	uint64_t handle;                          /* the launched handle (the cache's tag) */
	uint64_t id;                              /* kernel_id in the trace */
	const struct ktrace_param_layout *layout; /* NULL: unknown */
	struct ktrace_small_layout small;         /* the layout, when small enough */
};

/* Fill s with handle and the launch fields of k (ready). */
void ktrace_kernel_hot_set(struct ktrace_kernel_hot *s, uint64_t handle, const struct ktrace_kernel_entry *k)
	__attribute__((visibility("hidden")));

/* This thread's cached slot for handle, or NULL (not cached: ask the
 * registry, then ktrace_kernel_cache_put). */
const struct ktrace_kernel_hot *ktrace_kernel_cache_lookup(uint64_t handle) __attribute__((visibility("hidden")));

/* The generation to pass to ktrace_kernel_cache_put: read it before asking
 * the registry. */
unsigned ktrace_kernel_cache_gen(void) __attribute__((visibility("hidden")));

/* Cache k (ready, traced) for handle in this thread's cache, under
 * generation gen; returns its slot, or NULL when this thread has no cache
 * (out of memory: the launch then works from the entry). */
const struct ktrace_kernel_hot *ktrace_kernel_cache_put(uint64_t handle, const struct ktrace_kernel_entry *k,
							 unsigned gen) __attribute__((visibility("hidden")));

/* Start fetching handle's slot (a hint, for the top of the launch path). */
void ktrace_kernel_cache_prefetch(uint64_t handle) __attribute__((visibility("hidden")));

/* Every thread's cache is stale: call after each change of the registry's
 * map or of an entry's ready state, once the change is visible. */
void ktrace_kernel_cache_invalidate(void) __attribute__((visibility("hidden")));

#endif
