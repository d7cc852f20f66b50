/* interpose/model/capture_thread.h: per-thread state of the capture path.
 *
 * The thread id and a cache of the current context's device (thread-locals),
 * so a traced launch makes one cheap driver call (cuCtxGetCurrent); and, for
 * the inline path of hash mode, scratch buffers for one launch (parameter
 * bytes, regions and what the extent policy needs), allocated at the
 * thread's first hashed launch, grown only when a kernel with more pointer
 * words than ever before appears, and freed when the thread exits.
 * Metadata-mode launches write straight into the trace writer's buffer and
 * need no scratch.  Calls the real driver table (driver_real.h) and libc.
 */
#ifndef KTRACE_CAPTURE_THREAD_H
#define KTRACE_CAPTURE_THREAD_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "interpose/model/alloc_map.h"
#include "interpose/model/param_scan.h"

struct ktrace_capture_tls {
	uint8_t params[KTRACE_PARAM_MAX_BYTES + 8];
	uint32_t region_cap;             /* entries in the arrays below */
	struct ktrace_region *regions;
	struct ktrace_alloc_info *allocs;
	uint64_t *ptrs, *lens, *uncut;   /* uncut: a capped region's extent before the cut */
	uint8_t *capped, *exact, *in_struct;
	int cut_any;                     /* the last plan cut some region (a CUT record each) */
	struct ktrace_alloc_cache allocs_cache; /* allocation-map answers (param_scan.h) */
};

/* This thread's scratch (NULL if out of memory). */
struct ktrace_capture_tls *ktrace_capture_tls(void) __attribute__((visibility("hidden")));
/* Make room for n regions (0, or -1 if out of memory). */
int ktrace_capture_tls_regions(struct ktrace_capture_tls *t, uint32_t n) __attribute__((visibility("hidden")));

/* Kernel thread id of the caller (cached; refreshed after fork). */
uint32_t ktrace_capture_tid(void) __attribute__((visibility("hidden")));

/* Current context (NULL if none or no driver) and its device ordinal (-1
 * unknown), with the device cached per thread and context. */
CUcontext ktrace_capture_context(int32_t *device) __attribute__((visibility("hidden")));

/* A context was destroyed: device caches keyed by it are stale. */
void ktrace_capture_context_gone(void) __attribute__((visibility("hidden")));

/* After fork in the child (cached thread ids are stale). */
void ktrace_capture_after_fork_child(void) __attribute__((visibility("hidden")));

#endif
