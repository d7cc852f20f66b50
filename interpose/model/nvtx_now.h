/* interpose/model/nvtx_now.h: the calling thread's NVTX range reference.
 *
 * Owns ktrace_nvtx_now (nvtx_now.c), the innermost range the calling thread
 * has open and the framework sequence number in effect: interpose/nvtx/
 * writes it as ranges open and close; the launch path, copies, memsets and
 * graph launches read it with one thread-local load (ktrace_nvtx_ref()).
 * May call: nothing (a declaration and one inline load).
 */
#ifndef KTRACE_NVTX_NOW_H
#define KTRACE_NVTX_NOW_H

#include <stdint.h>

#include "format/ktrace_format.h"

/* The range reference of the calling thread: its innermost open range and
 * the framework sequence number in effect (range 0: none open). */
extern __thread struct ktrace_range_ref ktrace_nvtx_now
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

/* Copy the calling thread's reference into *out; returns its range (0: none). */
static inline uint32_t ktrace_nvtx_ref(struct ktrace_range_ref *out)
{
	*out = ktrace_nvtx_now;
	return out->range;
}

#endif
