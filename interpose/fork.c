/* interpose/fork.c: the interposer's one fork handler.
 *
 * Owns the pthread_atfork registration (ktrace_fork_handler_install(), once
 * per process image, by the initialisation, before tracing turns on, or
 * earlier by the NVTX injection, see below) and the order in which each
 * module's fork hooks run.  May call: those hooks only.
 *
 * prepare, in the forking thread: first a post-hash the hash pipeline holds
 * back for a merge is launched (its lock is taken and released, none kept);
 * then each module takes its locks, in this order
 *   1. registry        ktrace_registry_lock; the metadata worker finishes the
 *                      module it is parsing (at most 250 ms) and is held
 *                      between jobs until parent or child
 *   2. Triton cache    its index lock (meta/triton_cache.c)
 *   3. Inductor cache  its index lock (meta/inductor.c)
 *   4. memory events   the VMM merge lock
 *   5. allocation map  its write lock, then its seen-table lock
 *   6. CUDA graphs     the table of graphs and executable graphs
 *   7. NVTX ranges     the table of range paths (and its domains, strings)
 *   8. NCCL            the table of communicators
 * parent: the locks are released in reverse order (8 to 1); the worker
 *   resumes.
 * child (only the forking thread exists):
 *   a. tracer          tracing off; the parent's writer, hash pipeline,
 *                      modules of ktrace's kernels and GPU times (their
 *                      events, samples and locks) are abandoned without
 *                      touching their locks or threads
 *                      (with KTRACE_FOLLOW_FORK=1 the child starts its own
 *                      trace at its first driver call)
 *   b. driver loader   its lock re-initialised
 *   then 8 to 1 release their locks, in reverse order; NCCL (8) forgets
 *   the parent's communicators and numbers its operations from 0; the NVTX ranges (7)
 *   write their RANGE records again into a traced child's own trace; the graphs (6) forget
 *   the parent's graphs, executable graphs and graph launches waiting for
 *   their digests (the GPU objects are the parent's), then the poller
 *   thread's state (its thread is the parent's) is reset; the registry (1) also
 *   forgets the worker and every record written, so that a traced child
 *   writes them again in its own trace
 *   c. capture         thread-local caches (thread id, context) go stale
 *
 * Why this order.  No module calls, while holding its lock, into a module
 * with an earlier lock: a thread holding the VMM lock takes the allocation
 * map's write lock (4 before 5), the cache indexes, the allocation map and
 * the graph table call nobody, the NVTX table's holder calls only the trace
 * writer, the NCCL table's holder calls nobody, and the registry's holders never take a later lock.  So the
 * prepare hooks cannot wait on each other in a cycle.  The registry comes
 * first because its prepare waits for the worker's parse in progress, and a
 * parse takes the Triton and Inductor locks: holding those first would make
 * that wait run to its timeout.  Locks of ktrace's other threads (the
 * writer's, the hash pipeline's) are not taken: the child abandons those
 * objects instead (a).
 *
 * The NVTX injection (interpose/nvtx/) is used before the initialisation
 * (a program's NVTX calls come before its first driver call): it installs
 * the handler too, when an NVTX instance attaches; every hook is safe
 * before the initialisation.
 *
 * One handler, registered at initialisation, also fixes its place among
 * other libraries' handlers (prepare handlers run in the reverse order of
 * registration): libcuda.so.1 registers a child handler only (seen with
 * driver 580), so no driver lock is taken before ours.
 */
#include <pthread.h>

#include "interpose/capture/memory_events.h"
#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/lifecycle.h"
#include "interpose/model/alloc_map.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/tracer.h"
#include "interpose/nccl/nccl.h"
#include "interpose/nvtx/nvtx.h"
#include "interpose/poller/poller.h"
#include "interpose/registry/registry.h"
#include "meta/kernel_meta.h"

static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	ktrace_hash_flush_held(KTRACE_CTR_HASH_FLUSH_OTHER); /* the parent's held post-hash is launched before the child exists */
	ktrace_registry_fork_prepare();
	ktrace_triton_cache_fork_prepare();
	ktrace_inductor_cache_fork_prepare();
	ktrace_memory_events_fork_prepare();
	ktrace_alloc_map_fork_prepare();
	ktrace_graph_fork_prepare();
	ktrace_nvtx_fork_prepare();
	ktrace_nccl_fork_prepare();
}

static void fork_parent(void)
{
	ktrace_nccl_fork_parent();
	ktrace_nvtx_fork_parent();
	ktrace_graph_fork_parent();
	ktrace_alloc_map_fork_parent();
	ktrace_memory_events_fork_parent();
	ktrace_inductor_cache_fork_parent();
	ktrace_triton_cache_fork_parent();
	ktrace_registry_fork_parent();
}

static void fork_child(void)
{
	ktrace_tracer_fork_child();
	ktrace_real_driver_fork_child();
	ktrace_nccl_fork_child();
	ktrace_nvtx_fork_child();
	ktrace_graph_fork_child();
	ktrace_poller_fork_child();
	ktrace_alloc_map_fork_child();
	ktrace_memory_events_fork_child();
	ktrace_inductor_cache_fork_child();
	ktrace_triton_cache_fork_child();
	ktrace_registry_fork_child();
	ktrace_capture_after_fork_child();
}

static void install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void ktrace_fork_handler_install(void)
{
	pthread_once(&install_once, install);
}
