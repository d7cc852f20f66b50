/* interpose/capture/memory_events.h: the memory, copy and context hooks and
 * the fork hooks of memory_events.c.
 *
 * Owns their declarations.  memory_events.c implements the memory and copy
 * hooks of
 * interpose/driver/hooks.h and capture/'s part of the context hook (the
 * lifecycle puts them in the table, interpose/hooks.c); besides
 * those it exposes only the fork hooks, which interpose/fork.c calls:
 * prepare takes the lock that serialises the merging and splitting of VMM
 * ranges (a merge is several allocation-map updates), parent and child
 * release it.  May call: nothing (declarations only).
 */
#ifndef KTRACE_MEMORY_EVENTS_H
#define KTRACE_MEMORY_EVENTS_H

#include <stdint.h>

#include <cuda.h>

void ktrace_on_alloc(uint64_t base, uint64_t size, uint32_t kind, CUstream stream)
	__attribute__((visibility("hidden")));
void ktrace_on_free(uint64_t base, uint32_t kind, CUstream stream) __attribute__((visibility("hidden")));
void ktrace_on_unmap(uint64_t base, uint64_t size) __attribute__((visibility("hidden")));
void ktrace_on_import(uint64_t ptr) __attribute__((visibility("hidden")));
void ktrace_on_host_device_pointer(uint64_t dev, uint64_t host) __attribute__((visibility("hidden")));
void ktrace_on_memcpy(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t dir, uint32_t flags, CUstream stream,
		      CUresult res, const void *host) __attribute__((visibility("hidden")));
void ktrace_on_memset(uint64_t dst, uint64_t value, uint32_t elem_size, uint64_t count, uint32_t flags,
		      CUstream stream, CUresult res) __attribute__((visibility("hidden")));
/* capture/'s part of a context about to be destroyed (the lifecycle's context
 * hook calls it after the graphs'): its GPU times, the threads' context caches. */
void ktrace_on_context_destroy(CUcontext ctx) __attribute__((visibility("hidden")));

void ktrace_memory_events_fork_prepare(void) __attribute__((visibility("hidden")));
void ktrace_memory_events_fork_parent(void) __attribute__((visibility("hidden")));
void ktrace_memory_events_fork_child(void) __attribute__((visibility("hidden")));

#endif
