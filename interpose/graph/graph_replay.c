/* interpose/graph/graph_replay.c: graph launches in a replay run (KTRACE_REPLAY).
 *
 * A run that confirms a divergence by replaying one launch in isolation
 * (interpose/replay/) finds that launch by its kernel's name and occurrence,
 * counted in launch order as the trace numbers launches, graph nodes
 * included.  In such a run a graph launch whose nodes can all be issued one
 * by one runs node by node on its stream, in the order its records take (a
 * topological order of the edges: every dependency holds, nothing runs
 * concurrently): kernel nodes through the launch path (the launch hook,
 * so the replay's matcher counts each and confirms the one it looks for),
 * copies and memsets through the driver, host function and event nodes as
 * their stream counterparts (cuLaunchHostFunc, cuEventRecord,
 * cuStreamWaitEvent), cluster launches through cuLaunchKernelEx.  A graph
 * with any other node (semaphores, memory nodes, 2D/3D copies and memsets,
 * parameters cut, conditional bodies) runs as a graph, a NOTE says why: its
 * kernel nodes cannot be confirmed.  May call: the launch path's
 * hook (interpose/driver/hooks.h), the real driver (ktrace_real).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/driver/driver_real.h"
#include "interpose/driver/hooks.h"
#include "interpose/graph/graph_internal.h"

/* Why kernel node n cannot be launched alone, or NULL. */
static const char *kernel_alone_why(const struct kt_gnode *n)
{
	const struct ktrace_param_layout *l = n->layout;

	/* with a layout, every parameter lies in the bytes kept */
	if ((l && l->nparams && (!n->params || l->param_bytes > n->rec.param_bytes_len)) || !n->func ||
	    (!n->params && n->rec.param_bytes_len) || (n->rec.flags & KTRACE_GNODEF_PARAMS_TRUNCATED))
		return "a kernel node's parameters were not kept whole";
	if ((n->rec.cluster[0] > 1 || n->rec.cluster[1] > 1 || n->rec.cluster[2] > 1) && !KT_REAL_HAS(cuLaunchKernelEx))
		return "a kernel node launches thread-block clusters and the driver has no cuLaunchKernelEx";
	return NULL;
}

static int memset_fn_present(uint32_t elem_size)
{
	return elem_size == 1 ? KT_REAL_HAS(cuMemsetD8Async)
	       : elem_size == 2 ? KT_REAL_HAS(cuMemsetD16Async) : KT_REAL_HAS(cuMemsetD32Async);
}

static int have_event_calls(void)
{
	return KT_REAL_HAS(cuGraphEventRecordNodeGetEvent) && KT_REAL_HAS(cuGraphEventWaitNodeGetEvent) &&
	       KT_REAL_HAS(cuEventRecord) && KT_REAL_HAS(cuStreamWaitEvent);
}

/* Why node n cannot be issued alone on a stream, or NULL. */
static const char *node_alone_why(const struct kt_gnode *n)
{
	switch (n->rec.kind) {
	case KTRACE_GNODE_KERNEL:
		return kernel_alone_why(n);
	case KTRACE_GNODE_MEMCPY:
		return n->rec.copy_flags & (KTRACE_COPYF_2D | KTRACE_COPYF_3D) ? "a 2D or 3D copy node" : NULL;
	case KTRACE_GNODE_MEMSET:
		if ((n->rec.copy_flags & KTRACE_COPYF_2D) || !memset_fn_present(n->rec.elem_size))
			return "a 2D memset node";
		return NULL;
	case KTRACE_GNODE_EMPTY:
	case KTRACE_GNODE_CHILD:
		return NULL;
	case KTRACE_GNODE_HOST:
		return KT_REAL_HAS(cuGraphHostNodeGetParams) && KT_REAL_HAS(cuLaunchHostFunc) ? NULL : "a host node";
	case KTRACE_GNODE_EVENT_RECORD:
	case KTRACE_GNODE_EVENT_WAIT:
		return have_event_calls() ? NULL : "an event node";
	case KTRACE_GNODE_CONDITIONAL:
		return "a conditional node (the GPU decides which bodies run, how often)";
	default:
		return "a node that runs only inside a graph (semaphore, memory, conditional or batch memory "
		       "operation)";
	}
}

const char *kt_grev_node_by_node_why(const struct kt_grev *r)
{
	if (!r)
		return "the graph is not described";
	if (r->untraced && r->untraced != KTRACE_GRAPH_UNTRACED_DRIVER)
		return ktrace_graph_untraced_name(r->untraced);
	if (!KT_REAL_HAS(cuLaunchKernel) || !KT_REAL_HAS(cuMemcpyAsync) || r->nrun < r->nrec || !r->run_order)
		return "the driver lacks a call a node needs";
	for (uint32_t i = 0; i < r->nnodes; i++) {
		const char *why;

		if (r->nodes[i].rec.flags & KTRACE_GNODEF_DISABLED)
			continue;
		if ((why = node_alone_why(&r->nodes[i])))
			return why;
	}
	return NULL;
}

CUresult kt_gnode_real_launch(const struct ktrace_launch_args *a, void *ctx)
{
	(void)ctx;
	if (a->config)
		return KT_REAL(cuLaunchKernelEx, a->config, a->f, a->kernel_params, a->extra);
	return KT_REAL(cuLaunchKernel, a->f, a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1],
					  a->block[2], a->shared_mem, a->stream, a->kernel_params, a->extra);
}

/* A launch of thread-block clusters: cuLaunchKernelEx with the node's
 * cluster dimensions (a's grid, block, memory and stream set). */
static void cluster_config(const struct kt_gnode *n, struct ktrace_launch_args *a, CUlaunchConfig *cfg,
			   CUlaunchAttribute *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	attr->value.clusterDim.x = n->rec.cluster[0] ? n->rec.cluster[0] : 1;
	attr->value.clusterDim.y = n->rec.cluster[1] ? n->rec.cluster[1] : 1;
	attr->value.clusterDim.z = n->rec.cluster[2] ? n->rec.cluster[2] : 1;
	memset(cfg, 0, sizeof(*cfg));
	cfg->gridDimX = a->grid[0], cfg->gridDimY = a->grid[1], cfg->gridDimZ = a->grid[2];
	cfg->blockDimX = a->block[0], cfg->blockDimY = a->block[1], cfg->blockDimZ = a->block[2];
	cfg->sharedMemBytes = a->shared_mem;
	cfg->hStream = a->stream;
	cfg->attrs = attr;
	cfg->numAttrs = 1;
	a->api = KTRACE_API_LAUNCH_KERNEL_EX;
	memcpy(a->cluster, n->rec.cluster, sizeof(a->cluster));
	a->config = cfg;
}

int kt_gnode_call_init(struct kt_gnode_call *c, const struct kt_gnode *n, CUstream s)
{
	const struct ktrace_param_layout *l = n->layout;

	memset(c, 0, sizeof(*c));
	c->size = n->rec.param_bytes_len;
	c->a.api = KTRACE_API_LAUNCH_KERNEL;
	c->a.f = (CUfunction)(uintptr_t)n->func;
	memcpy(c->a.grid, n->rec.grid, sizeof(c->a.grid));
	memcpy(c->a.block, n->rec.block, sizeof(c->a.block));
	c->a.shared_mem = n->rec.shared_mem;
	c->a.stream = s;
	if (n->rec.cluster[0] > 1 || n->rec.cluster[1] > 1 || n->rec.cluster[2] > 1)
		cluster_config(n, &c->a, &c->cfg, &c->attr);
	if (l && l->nparams) {
		if (!(c->params = calloc(l->nparams, sizeof(*c->params))))
			return -1;
		for (uint32_t i = 0; i < l->nparams; i++)
			c->params[i] = n->params + l->offset[i];
		c->a.kernel_params = c->params;
	} else if (c->size) {
		c->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		c->extra[1] = n->params;
		c->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		c->extra[3] = &c->size;
		c->extra[4] = CU_LAUNCH_PARAM_END;
		c->a.extra = c->extra;
	}
	return 0;
}

void kt_gnode_call_free(struct kt_gnode_call *c)
{
	free(c->params);
	c->params = NULL;
}

/* Kernel node n as a launch of its kernel on s through the launch path. */
static CUresult run_kernel(const struct kt_gnode *n, CUstream s)
{
	struct kt_gnode_call c;
	CUresult res;

	if (kt_gnode_call_init(&c, n, s))
		return CUDA_ERROR_OUT_OF_MEMORY;
	res = ktrace_hooks.launch(&c.a, kt_gnode_real_launch, NULL);
	kt_gnode_call_free(&c);
	return res;
}

static CUresult run_memset(const struct kt_gnode *n, CUstream s)
{
	CUdeviceptr d = n->rec.dst;

	switch (n->rec.elem_size) {
	case 1:
		return KT_REAL(cuMemsetD8Async, d, (unsigned char)n->rec.value, n->rec.count, s);
	case 2:
		return KT_REAL(cuMemsetD16Async, d, (unsigned short)n->rec.value, n->rec.count, s);
	default:
		return KT_REAL(cuMemsetD32Async, d, (unsigned int)n->rec.value, n->rec.count, s);
	}
}

/* A host function, event record or event wait node as its stream
 * counterpart on s (the function and event read from the mirror's node). */
static CUresult run_sync_node(const struct kt_gnode *n, CUstream s)
{
	CUDA_HOST_NODE_PARAMS h;
	CUevent ev = NULL;
	CUresult res;

	switch (n->rec.kind) {
	case KTRACE_GNODE_HOST:
		memset(&h, 0, sizeof(h));
		res = KT_REAL(cuGraphHostNodeGetParams, n->mirror, &h);
		return res == CUDA_SUCCESS ? KT_REAL(cuLaunchHostFunc, s, h.fn, h.userData) : res;
	case KTRACE_GNODE_EVENT_RECORD:
		res = KT_REAL(cuGraphEventRecordNodeGetEvent, n->mirror, &ev);
		return res == CUDA_SUCCESS ? KT_REAL(cuEventRecord, ev, s) : res;
	case KTRACE_GNODE_EVENT_WAIT:
		res = KT_REAL(cuGraphEventWaitNodeGetEvent, n->mirror, &ev);
		return res == CUDA_SUCCESS ? KT_REAL(cuStreamWaitEvent, s, ev, 0) : res;
	default:
		return CUDA_SUCCESS; /* empty and child-graph nodes: their nodes are in the order */
	}
}

CUresult kt_grev_run_node_by_node(const struct kt_grev *r, CUstream s)
{
	CUresult res = CUDA_SUCCESS;

	for (uint32_t k = 0; k < r->nrun && res == CUDA_SUCCESS; k++) {
		const struct kt_gnode *n = &r->nodes[r->run_order[k]];

		if (n->rec.flags & KTRACE_GNODEF_DISABLED)
			continue;
		if (n->rec.kind == KTRACE_GNODE_KERNEL) {
			res = run_kernel(n, s);
			continue;
		}
		if (n->rec.kind != KTRACE_GNODE_MEMCPY && n->rec.kind != KTRACE_GNODE_MEMSET) {
			res = run_sync_node(n, s);
			continue;
		}
		/* a copy or memset takes its number as in a recorded graph launch */
		atomic_fetch_add_explicit(&ktrace_tracer.launch_seq, 1, memory_order_relaxed);
		if (n->rec.kind == KTRACE_GNODE_MEMCPY)
			res = KT_REAL(cuMemcpyAsync, n->rec.dst, n->rec.src, n->rec.bytes, s);
		else
			res = run_memset(n, s);
	}
	return res;
}
