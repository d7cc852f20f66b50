/* interpose/kernel_cache.h: each launching thread's cache of launch handle
 * -> kernel entry, in front of the registry's shared map.
 *
 * The registry's map answers in four dependent loads (the map, its table's
 * size, the slot, the entry); on the cold caches of a real program each is a
 * miss.  A thread's own direct-mapped cache, reached from a thread-local
 * pointer, takes two (the cache line, the entry).  Entries live until the
 * process ends (ktrace_registry_reset in tests aside), so a cached pointer
 * never dangles; what can go stale is the handle -> entry binding, when a
 * module is unloaded and the driver hands the same handle to a new kernel.
 * Every change of the registry's map therefore bumps a generation in the
 * tracer's hot line (ktrace_kernel_cache_invalidate), and a thread whose
 * cache has another generation empties it before use.
 */
#ifndef KTRACE_KERNEL_CACHE_H
#define KTRACE_KERNEL_CACHE_H

#include <stdint.h>

struct ktrace_kernel_entry;

/* The entry of a launched handle: this thread's cache, else the registry's
 * map (ktrace_registry_lookup), whose answer is then cached.  NULL when the
 * handle is not registered. */
struct ktrace_kernel_entry *ktrace_kernel_cache_lookup(uint64_t handle) __attribute__((visibility("hidden")));

/* Every thread's cache is stale: call after each change of the map, after
 * the change is visible. */
void ktrace_kernel_cache_invalidate(void) __attribute__((visibility("hidden")));

#endif
