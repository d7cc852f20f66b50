/* interpose/nvtx/nvtx.h: NVTX ranges, as the rest of the library sees them.
 *
 * libktrace.so is an NVTX injection library (NVIDIA's documented tool
 * interface: a program's NVTX instance loads the library named by
 * NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2, which
 * points the instance's push/pop, start/end, mark, domain and
 * string-registration entries at ktrace's).  Every thread's open ranges are
 * kept in a thread-local stack; each distinct path (a range inside a parent)
 * is interned once, process-wide, and written as a RANGE record
 * (docs/format.md).  The launch path, copies and memsets read the calling
 * thread's current path with one thread-local load: ktrace_nvtx_ref().
 *
 * Owns the injection entry points (core and payload extension), the domains
 * and registered strings, the thread stacks, the table of paths and its
 * RANGE records, NVTX marks (NOTE records), the ranges each CUDA graph node
 * was made in, and NVTX_INJECTION64_PATH in the environment.  Calls format/
 * (codec, writer), the tracer's notes and settings, and the Python stack's
 * hook for framework ops (through the services table, model/services.h).
 */
#ifndef KTRACE_NVTX_H
#define KTRACE_NVTX_H

#include <stdint.h>

#include <cuda.h>

#include "format/ktrace_format.h"
#include "interpose/model/nvtx_now.h"
#include "interpose/model/tracer.h"

/* The library's constructor: unless KTRACE_NVTX=0 or NVTX_INJECTION64_PATH
 * is set already (another tool, or `ktrace run`), set it to this library's
 * absolute path, so that the program's NVTX instances attach to ktrace. */
void ktrace_nvtx_preload_env(void) KTRACE_HIDDEN;

/* The trace has just been opened (ktrace_tracer.writer): write the RANGE
 * records of every path interned so far; later ones are written as they
 * are interned. */
void ktrace_nvtx_trace_opened(void) KTRACE_HIDDEN;

/* For the start-up line: "on", "off (KTRACE_NVTX=0)", "not attached (...)". */
const char *ktrace_nvtx_status(void) KTRACE_HIDDEN;
/* 1 once an NVTX instance of the process attached to ktrace. */
int ktrace_nvtx_attached(void) KTRACE_HIDDEN;

/* ---- the ranges CUDA graph nodes were made in (nvtx_nodes.c) ---- */

/* Node was just made (cuGraphAdd*Node) by the calling thread: keep its
 * ranges for the node's records at each graph launch. */
void ktrace_nvtx_node_made(uint64_t node) KTRACE_HIDDEN;
/* The graph_node_added hook (interpose/driver/hooks.h): ktrace_nvtx_node_made. */
void ktrace_on_graph_node_added(CUgraphNode n) KTRACE_HIDDEN;
/* A launch, copy or memset on stream, being captured, just became a node
 * (the one the stream's next captured work would depend on). */
void ktrace_nvtx_node_captured(CUstream stream) KTRACE_HIDDEN;
/* The ranges node was made in, flagged KTRACE_RANGEREF_GRAPH_NODE: 1, or 0
 * when it was made in none (or ktrace did not see it made). */
int ktrace_nvtx_node_ref(uint64_t node, struct ktrace_range_ref *out) KTRACE_HIDDEN;

/* The fork handler's hooks (interpose/fork.c): the table's lock; in the
 * child the parent's trace is gone (its RANGE records are written again
 * into the child's own, if it traces). */
void ktrace_nvtx_fork_prepare(void) KTRACE_HIDDEN;
void ktrace_nvtx_fork_parent(void) KTRACE_HIDDEN;
void ktrace_nvtx_fork_child(void) KTRACE_HIDDEN;

#endif
