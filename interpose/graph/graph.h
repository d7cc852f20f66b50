/* interpose/graph/graph.h: what the rest of libktrace.so asks of the CUDA
 * graph module (interpose/graph/).
 *
 * The driver wrappers report graph and capture calls through the graph hooks
 * of interpose/driver/hooks.h, which this module implements (declared
 * here); the launch, copy and order paths ask ktrace_stream_capturing()
 * whether a stream is being captured (the stream_capturing service); the
 * lifecycle puts those in their tables (interpose/hooks.c), registers the
 * queue of graph launches in flight with the poller thread
 * (ktrace_graph_poll, ktrace_graph_pending), drains it at exit and calls
 * the fork hooks (interpose/fork.c).  Declarations only.
 */
#ifndef KTRACE_GRAPH_H
#define KTRACE_GRAPH_H

#include <stdatomic.h>

#include <cuda.h>

#include "interpose/driver/hooks.h"
#include "interpose/model/tracer.h"

/* The graph hooks (interpose/driver/hooks.h). */
void ktrace_on_capture_begin(CUstream s) KTRACE_HIDDEN;
void ktrace_on_capture_end(CUstream s, CUgraph g, CUresult res) KTRACE_HIDDEN;
void ktrace_on_graph_new(CUgraph g, CUgraph from) KTRACE_HIDDEN;
void ktrace_on_graph_cond_handle(CUgraphConditionalHandle h, CUgraph g, unsigned int def, unsigned int flags)
	KTRACE_HIDDEN;
void ktrace_on_graph_node_params(CUgraphNode n, CUgraph g, const CUgraphNodeParams *p) KTRACE_HIDDEN;
void ktrace_on_graph_destroy(CUgraph g) KTRACE_HIDDEN;
void ktrace_on_graph_instantiated(CUgraphExec e, CUgraph g, uint64_t flags) KTRACE_HIDDEN;
void ktrace_on_graph_exec_destroy(CUgraphExec e) KTRACE_HIDDEN;
void ktrace_on_graph_exec_updated(CUgraphExec e, CUgraph g) KTRACE_HIDDEN;
void ktrace_on_graph_exec_node_set(CUgraphExec e, const struct ktrace_graph_node_set *s) KTRACE_HIDDEN;
CUresult ktrace_on_graph_launch(CUgraphExec e, CUstream s, ktrace_real_graph_launch_fn real, void *ctx) KTRACE_HIDDEN;
void ktrace_on_graph_upload(CUgraphExec e, CUstream s) KTRACE_HIDDEN;
/* A context is about to be destroyed (before the memory hooks' turn):
 * graph launches whose digests are in flight in it are written without
 * them, ktrace's instrumented copies in it are forgotten. */
void ktrace_on_graph_context_destroy(CUcontext ctx) KTRACE_HIDDEN;

/* Is stream s (as recorded: a _ptsz call's stream 0 is CU_STREAM_PER_THREAD)
 * being captured?  One atomic load while no capture is under way. */
int ktrace_stream_capturing(CUstream s) KTRACE_HIDDEN;

/* Wait at most timeout_ms for graph launches whose digests are in flight,
 * then write every pending record (digests that did not land: missing).
 * Called at exit, before the writer closes. */
void ktrace_graph_drain(unsigned timeout_ms) KTRACE_HIDDEN;
/* The queue's poller client (interpose/poller/poller.h): write the records
 * of launches whose digests landed (force: all of them, without the missing
 * digests); returns how many launches were written.  And the launches
 * waiting. */
int ktrace_graph_poll(int force) KTRACE_HIDDEN;
long ktrace_graph_pending(void) KTRACE_HIDDEN;

/* Fork hooks (interpose/fork.c): prepare takes the module's locks, parent
 * releases them, child forgets every graph, exec and pending launch of the
 * parent (their GPU objects are the parent's) and releases them. */
void ktrace_graph_fork_prepare(void) KTRACE_HIDDEN;
void ktrace_graph_fork_parent(void) KTRACE_HIDDEN;
void ktrace_graph_fork_child(void) KTRACE_HIDDEN;

#endif
