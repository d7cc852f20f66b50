/* interpose/driver/wrap_graph.c: CUDA graph and stream capture entry points.
 *
 * Owns the exported wrappers of every graph and capture function of
 * KTRACE_REAL_CAPTURE_FUNCS, KTRACE_REAL_GRAPH_BUILD_FUNCS and
 * KTRACE_REAL_GRAPH_EXEC_FUNCS (driver_real.h), each version under its own
 * exported name and ABI, with its _ptsz twin where the driver has one.
 * Each makes the real call with exactly the program's arguments and returns
 * its result unchanged; after a successful call (and only then) it reports
 * what happened through the graph hooks of hooks.h: a
 * capture begun or ended, a graph created, cloned or about to be destroyed,
 * an instantiation, an exec updated, node
 * parameters set on an exec, an exec about to be destroyed, an upload, a
 * node added (the ranges it is made in, interpose/nvtx/).
 * cuGraphLaunch hands the launch to the graph_launch hook, which calls
 * the real function back exactly once.  The rest (capture queries,
 * dependencies, graph-level node parameters) are passed through:
 * ktrace describes a graph from the driver when it is instantiated
 * (interpose/graph/graph_model.c), so every way of building one is seen
 * alike.  May call: the real driver through ktrace_real, the hooks of
 * hooks.h.
 */
#include <stddef.h>
#include <stdint.h>

#include "interpose/driver/hooks.h"
#include "interpose/driver/wrap.h"

/* The lists below give WRAPPER(name, params, args, report) for each entry
 * point: the real call, then `report` (which sees the driver's result as
 * `res`) when tracing is on (KT_WRAPPER_REPORT_AFTER, wrap.h). */
#define NOTHING (void)res
#define PT(s) ktrace_ptsz_stream(s)
#define MADE KT_IF_OK(ktrace_hooks.graph_node_added(*ph)) /* a node added: *ph */
/* a node added from generic parameters p (a conditional node's bodies are in p) */
#define MADE_FROM_PARAMS KT_IF_OK((ktrace_hooks.graph_node_added(*ph), ktrace_hooks.graph_node_params(*ph, g, p)))

/* ---- stream capture ------------------------------------------------------------ */

#define CAPTURE_INFO_V2_PARAMS (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g, \
				const CUgraphNode **deps, size_t *n)
#define CAPTURE_INFO_V3_PARAMS (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g, \
				const CUgraphNode **deps, const CUgraphEdgeData **data, size_t *n)
#define TO_GRAPH_PARAMS (CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *data, size_t n, \
			 CUstreamCaptureMode m)

/* A capture begun: a held post-hash is launched first (it must not become a node). */
#define BEGIN_CAPTURE_WRAPPERS(WRAPPER) \
	WRAPPER(cuStreamBeginCapture, (CUstream s), (s), KT_IF_OK(ktrace_hooks.capture_begin(s))) \
	WRAPPER(cuStreamBeginCapture_ptsz, (CUstream s), (s), KT_IF_OK(ktrace_hooks.capture_begin(PT(s)))) \
	WRAPPER(cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode m), (s, m), \
	  KT_IF_OK(ktrace_hooks.capture_begin(s))) \
	WRAPPER(cuStreamBeginCapture_v2_ptsz, (CUstream s, CUstreamCaptureMode m), (s, m), \
	  KT_IF_OK(ktrace_hooks.capture_begin(PT(s)))) \
	WRAPPER(cuStreamBeginCaptureToGraph, TO_GRAPH_PARAMS, (s, g, deps, data, n, m), \
	  KT_IF_OK(ktrace_hooks.capture_begin(s))) \
	WRAPPER(cuStreamBeginCaptureToGraph_ptsz, TO_GRAPH_PARAMS, (s, g, deps, data, n, m), \
	  KT_IF_OK(ktrace_hooks.capture_begin(PT(s))))

#define CAPTURE_WRAPPERS(WRAPPER) \
	WRAPPER(cuStreamEndCapture, (CUstream s, CUgraph *g), (s, g), \
	  ktrace_hooks.capture_end(s, res == CUDA_SUCCESS && g ? *g : NULL, res)) \
	WRAPPER(cuStreamEndCapture_ptsz, (CUstream s, CUgraph *g), (s, g), \
	  ktrace_hooks.capture_end(PT(s), res == CUDA_SUCCESS && g ? *g : NULL, res)) \
	WRAPPER(cuStreamGetCaptureInfo, (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id), (s, st, id), \
	  NOTHING) \
	WRAPPER(cuStreamGetCaptureInfo_ptsz, (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id), (s, st, id), \
	  NOTHING) \
	WRAPPER(cuStreamGetCaptureInfo_v2, CAPTURE_INFO_V2_PARAMS, (s, st, id, g, deps, n), NOTHING) \
	WRAPPER(cuStreamGetCaptureInfo_v2_ptsz, CAPTURE_INFO_V2_PARAMS, (s, st, id, g, deps, n), NOTHING) \
	WRAPPER(cuStreamGetCaptureInfo_v3, CAPTURE_INFO_V3_PARAMS, (s, st, id, g, deps, data, n), NOTHING) \
	WRAPPER(cuStreamGetCaptureInfo_v3_ptsz, CAPTURE_INFO_V3_PARAMS, (s, st, id, g, deps, data, n), NOTHING) \
	WRAPPER(cuStreamUpdateCaptureDependencies, (CUstream s, CUgraphNode *d, size_t n, unsigned int f), \
	  (s, d, n, f), NOTHING) \
	WRAPPER(cuStreamUpdateCaptureDependencies_ptsz, (CUstream s, CUgraphNode *d, size_t n, unsigned int f), \
	  (s, d, n, f), NOTHING) \
	WRAPPER(cuStreamUpdateCaptureDependencies_v2, \
	  (CUstream s, CUgraphNode *d, const CUgraphEdgeData *e, size_t n, unsigned int f), (s, d, e, n, f), NOTHING) \
	WRAPPER(cuStreamUpdateCaptureDependencies_v2_ptsz, \
	  (CUstream s, CUgraphNode *d, const CUgraphEdgeData *e, size_t n, unsigned int f), (s, d, e, n, f), NOTHING)

/* ---- building graphs ------------------------------------------------------------- */

/* The parameters every cuGraphAdd*Node starts with. */
#define ADD(...) (CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t n, __VA_ARGS__)
#define DEPS_PARAMS (CUgraph g, const CUgraphNode *from, const CUgraphNode *to, size_t n)
#define DEPS_V2_PARAMS (CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *e, size_t n)

#define GRAPH_BUILD_WRAPPERS(WRAPPER) \
	WRAPPER(cuGraphCreate, (CUgraph *ph, unsigned int f), (ph, f), KT_IF_OK(ktrace_hooks.graph_new(*ph, NULL))) \
	WRAPPER(cuGraphClone, (CUgraph *ph, CUgraph src), (ph, src), KT_IF_OK(ktrace_hooks.graph_new(*ph, src))) \
	WRAPPER(cuGraphDestroyNode, (CUgraphNode node), (node), NOTHING) \
	WRAPPER(cuGraphAddKernelNode, ADD(const CUDA_KERNEL_NODE_PARAMS_v1 *p), (ph, g, deps, n, p), MADE) \
	WRAPPER(cuGraphAddKernelNode_v2, ADD(const CUDA_KERNEL_NODE_PARAMS *p), (ph, g, deps, n, p), MADE) \
	WRAPPER(cuGraphAddMemcpyNode, ADD(const CUDA_MEMCPY3D *p, CUcontext c), (ph, g, deps, n, p, c), MADE) \
	WRAPPER(cuGraphAddMemsetNode, ADD(const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c), (ph, g, deps, n, p, c), \
	  MADE) \
	WRAPPER(cuGraphAddHostNode, ADD(const CUDA_HOST_NODE_PARAMS *p), (ph, g, deps, n, p), MADE) \
	WRAPPER(cuGraphAddChildGraphNode, ADD(CUgraph child), (ph, g, deps, n, child), MADE) \
	WRAPPER(cuGraphAddEmptyNode, (CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t n), \
	  (ph, g, deps, n), MADE) \
	WRAPPER(cuGraphAddEventRecordNode, ADD(CUevent ev), (ph, g, deps, n, ev), MADE) \
	WRAPPER(cuGraphAddEventWaitNode, ADD(CUevent ev), (ph, g, deps, n, ev), MADE) \
	WRAPPER(cuGraphAddMemAllocNode, ADD(CUDA_MEM_ALLOC_NODE_PARAMS *p), (ph, g, deps, n, p), MADE) \
	WRAPPER(cuGraphAddMemFreeNode, ADD(CUdeviceptr d), (ph, g, deps, n, d), MADE) \
	WRAPPER(cuGraphAddNode, ADD(CUgraphNodeParams *p), (ph, g, deps, n, p), MADE_FROM_PARAMS) \
	WRAPPER(cuGraphAddNode_v2, \
	  (CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *e, size_t n, \
	   CUgraphNodeParams *p), (ph, g, deps, e, n, p), MADE_FROM_PARAMS) \
	WRAPPER(cuGraphAddDependencies, DEPS_PARAMS, (g, from, to, n), NOTHING) \
	WRAPPER(cuGraphAddDependencies_v2, DEPS_V2_PARAMS, (g, from, to, e, n), NOTHING) \
	WRAPPER(cuGraphRemoveDependencies, DEPS_PARAMS, (g, from, to, n), NOTHING) \
	WRAPPER(cuGraphRemoveDependencies_v2, DEPS_V2_PARAMS, (g, from, to, e, n), NOTHING) \
	WRAPPER(cuGraphKernelNodeSetParams, (CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1 *p), (node, p), \
	  NOTHING) \
	WRAPPER(cuGraphKernelNodeSetParams_v2, (CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p), (node, p), \
	  NOTHING) \
	WRAPPER(cuGraphMemcpyNodeSetParams, (CUgraphNode node, const CUDA_MEMCPY3D *p), (node, p), NOTHING) \
	WRAPPER(cuGraphMemsetNodeSetParams, (CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p), (node, p), \
	  NOTHING) \
	WRAPPER(cuGraphNodeSetParams, (CUgraphNode node, CUgraphNodeParams *p), (node, p), NOTHING) \
	WRAPPER(cuGraphConditionalHandleCreate, \
	  (CUgraphConditionalHandle *ph, CUgraph g, CUcontext c, unsigned int def, unsigned int f), (ph, g, c, def, f), \
	  KT_IF_OK(ktrace_hooks.graph_cond_handle(*ph, g, def, f)))

/* ---- executable graphs ------------------------------------------------------------- */

#define INSTANTIATE_LOG_PARAMS (CUgraphExec *ph, CUgraph g, CUgraphNode *err, char *log, size_t cap)
#define INSTANTIATE_PARAMS_PARAMS (CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
#define INSTANTIATED(flags) KT_IF_OK(ktrace_hooks.graph_instantiated(*ph, g, (flags)))

/* Report node parameters set on exec e: `what` and the member given. */
#define NODE_SET(what_, ...) \
	do { \
		struct ktrace_graph_node_set s_ = { .what = KTRACE_GSET_##what_, .node = node, __VA_ARGS__ }; \
		if (res == CUDA_SUCCESS) \
			ktrace_hooks.graph_exec_node_set(e, &s_); \
	} while (0)

#define GRAPH_EXEC_WRAPPERS(WRAPPER) \
	WRAPPER(cuGraphInstantiate, INSTANTIATE_LOG_PARAMS, (ph, g, err, log, cap), INSTANTIATED(0)) \
	WRAPPER(cuGraphInstantiate_v2, INSTANTIATE_LOG_PARAMS, (ph, g, err, log, cap), INSTANTIATED(0)) \
	WRAPPER(cuGraphInstantiateWithFlags, (CUgraphExec *ph, CUgraph g, unsigned long long f), (ph, g, f), \
	  INSTANTIATED(f)) \
	WRAPPER(cuGraphInstantiateWithParams, INSTANTIATE_PARAMS_PARAMS, (ph, g, p), INSTANTIATED(p ? p->flags : 0)) \
	WRAPPER(cuGraphInstantiateWithParams_ptsz, INSTANTIATE_PARAMS_PARAMS, (ph, g, p), \
	  INSTANTIATED(p ? p->flags : 0)) \
	WRAPPER(cuGraphUpload, (CUgraphExec e, CUstream s), (e, s), KT_IF_OK(ktrace_hooks.graph_upload(e, s))) \
	WRAPPER(cuGraphUpload_ptsz, (CUgraphExec e, CUstream s), (e, s), KT_IF_OK(ktrace_hooks.graph_upload(e, PT(s)))) \
	WRAPPER(cuGraphExecUpdate, (CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *r), \
	  (e, g, err, r), KT_IF_OK(ktrace_hooks.graph_exec_updated(e, g))) \
	WRAPPER(cuGraphExecUpdate_v2, (CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *r), (e, g, r), \
	  KT_IF_OK(ktrace_hooks.graph_exec_updated(e, g))) \
	WRAPPER(cuGraphExecKernelNodeSetParams, \
	  (CUgraphExec e, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1 *p), (e, node, p), \
	  NODE_SET(KERNEL_V1, .kernel_v1 = p)) \
	WRAPPER(cuGraphExecKernelNodeSetParams_v2, \
	  (CUgraphExec e, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p), (e, node, p), \
	  NODE_SET(KERNEL, .kernel = p)) \
	WRAPPER(cuGraphExecMemcpyNodeSetParams, \
	  (CUgraphExec e, CUgraphNode node, const CUDA_MEMCPY3D *p, CUcontext c), (e, node, p, c), \
	  NODE_SET(MEMCPY, .copy = p, .ctx = c)) \
	WRAPPER(cuGraphExecMemsetNodeSetParams, \
	  (CUgraphExec e, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c), (e, node, p, c), \
	  NODE_SET(MEMSET, .set = p, .ctx = c)) \
	WRAPPER(cuGraphExecNodeSetParams, (CUgraphExec e, CUgraphNode node, CUgraphNodeParams *p), (e, node, p), \
	  NODE_SET(GENERIC, .generic = p)) \
	WRAPPER(cuGraphExecChildGraphNodeSetParams, (CUgraphExec e, CUgraphNode node, CUgraph child), \
	  (e, node, child), NODE_SET(CHILD, .child = child)) \
	WRAPPER(cuGraphNodeSetEnabled, (CUgraphExec e, CUgraphNode node, unsigned int on), (e, node, on), \
	  NODE_SET(ENABLED, .enabled = on))

#define BEGIN_CAPTURE_WRAPPER(...) KT_WRAPPER_ORDERED(KTRACE_CTR_HASH_FLUSH_OTHER, __VA_ARGS__)
BEGIN_CAPTURE_WRAPPERS(BEGIN_CAPTURE_WRAPPER)
CAPTURE_WRAPPERS(KT_WRAPPER_REPORT_AFTER)
GRAPH_BUILD_WRAPPERS(KT_WRAPPER_REPORT_AFTER)
GRAPH_EXEC_WRAPPERS(KT_WRAPPER_REPORT_AFTER)

/* Destruction: reported before the real call, while the object exists. */
KTRACE_EXPORT CUresult cuGraphDestroy(CUgraph g)
{
	KT_WRAP_REPORT_BEFORE(cuGraphDestroy, (g), 1, ktrace_hooks.graph_destroy(g))
}

KTRACE_EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
	KT_WRAP_REPORT_BEFORE(cuGraphExecDestroy, (e), 1, ktrace_hooks.graph_exec_destroy(e))
}

/* ---- launches ------------------------------------------------------------------------ */

typedef __typeof__(ktrace_real.cuGraphLaunch) graph_launch_fn;

struct graph_launch_call {
	graph_launch_fn fn;
	CUstream stream;   /* as the program gave it */
};

static CUresult call_graph_launch(CUgraphExec e, void *ctx)
{
	const struct graph_launch_call *c = ctx;

	return c->fn(e, c->stream);
}

#define DEFINE_GRAPH_LAUNCH_WRAPPER(name, hook_stream) \
	KTRACE_EXPORT CUresult name(CUgraphExec e, CUstream s) \
	{ \
		KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_OTHER); \
		KT_REAL_OR_NOT_SUPPORTED(name); \
		if (!ktrace_tracing_on()) \
			return fn(e, s); \
		struct graph_launch_call c = { fn, s }; \
		return ktrace_hooks.graph_launch(e, hook_stream, call_graph_launch, &c); \
	}

DEFINE_GRAPH_LAUNCH_WRAPPER(cuGraphLaunch, s)
DEFINE_GRAPH_LAUNCH_WRAPPER(cuGraphLaunch_ptsz, PT(s))
