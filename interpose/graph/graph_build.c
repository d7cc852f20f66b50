/* interpose/graph/graph_build.c: ktrace's copy of a graph, built node by node.
 *
 * The driver clones no graph of conditional nodes (cuGraphClone's
 * documentation), so ktrace's instrumented copy of such a graph is built
 * from the revision instead: each node that runs is added again (kernel,
 * memcpy, memset, empty, host, event record and wait nodes with the
 * parameters the driver gives for the program's node; a child graph's
 * nodes flattened into the graph holding it, the revision's edges already
 * connecting the nodes that run), and each conditional node with the same
 * type and number of bodies, whose body graphs are then filled the same
 * way.
 *
 * Conditional handles belong to their graph, and their values are small
 * indices per graph in creation order (1, 2, ..., measured on the driver):
 * the program's kernels set a condition (cudaGraphSetConditional) through
 * the handle value they are passed as a parameter, and the copy's kernels
 * pass the same parameters.  So each graph of the copy (the top, each
 * body) gets the handles the program made on the graph it copies, made
 * again in the program's order with the program's default and flags, and
 * each must come back with the program's value: then the program's value
 * in a kernel's parameters, and in each conditional node, names the copy's
 * handle of that value.  Kernel parameters are never changed.  Any handle
 * of another value, a conditional node's handle ktrace did not see made
 * (before tracing), or handles made on a child graph (its nodes are
 * flattened into the graph holding it) leave the graph without a copy: the
 * program's exec runs, unhashed, and a NOTE says why.
 *
 * ktrace adds a memset of the run counters before every first node of the
 * graph, and at the start of each body a node of ktrace_cond_advance
 * before the body's first nodes: the body's run counter, which places the
 * digests of each run in the body's ring (hashkern/hashkern_abi.h).
 * In a replay run's copy (graph_body.c) one kernel node of a body is
 * preceded and followed by a gated copy (ktrace_gated_copy): the buffers
 * it can reach, into scratch, in one run of the body only (a node of the
 * top level: gates whose counter always holds 1, open in every launch).
 * May call: the real driver (ktrace_real).
 */
#include <stdlib.h>
#include <string.h>

#include "hashkern/hashkern_abi.h"
#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/services.h"

struct gb {
	const struct kt_grev *r;
	const struct kt_gbuild_area *a;
	CUgraphNode *map;
	CUgraph *level_graph;
	uint32_t *in_start, *in_from;   /* each node's dependencies (revision edges), CSR */
};

/* The level whose graph holds level lv's nodes: the top's or a body's
 * (a child graph's nodes are flattened into the graph holding it). */
static uint32_t host_level(const struct kt_grev *r, uint32_t lv)
{
	return r->levels[lv].run == KT_GRAPH_NONE ? 0 : r->levels[lv].run;
}

/* Result word w of the area, as a device address. */
static CUdeviceptr result_word(const struct gb *b, uint64_t w)
{
	return b->a->area + (b->a->scratch_words + b->a->counters_off + w) * sizeof(uint64_t);
}

static int incoming_edges(struct gb *b)
{
	const struct kt_grev *r = b->r;

	b->in_start = calloc(r->nnodes + 2, sizeof(*b->in_start));
	b->in_from = malloc((r->nedges + 1) * sizeof(*b->in_from));
	if (!b->in_start || !b->in_from)
		return -1;
	for (uint32_t e = 0; e < r->nedges; e++)
		b->in_start[r->edges[e].to + 2]++;
	for (uint32_t i = 0; i < r->nnodes; i++)
		b->in_start[i + 2] += b->in_start[i + 1];
	for (uint32_t e = 0; e < r->nedges; e++)
		b->in_from[b->in_start[r->edges[e].to + 1]++] = r->edges[e].from;
	return 0;
}

/* ---- the program's nodes again --------------------------------------------------------- */

static int add_kernel(const struct kt_gnode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
		      CUgraphNode *out)
{
	const struct ktrace_param_layout *l = n->layout;
	CUDA_KERNEL_NODE_PARAMS p;
	uint8_t *bytes = NULL;
	void **args = NULL;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	if (!l || (l->nparams && (!n->params || l->param_bytes > n->rec.param_bytes_len)) ||
	    (n->rec.flags & KTRACE_GNODEF_PARAMS_TRUNCATED) || n->rec.cluster[0] > 1 || n->rec.cluster[1] > 1 ||
	    n->rec.cluster[2] > 1) {
		kt_graph_failed_because("a kernel node's parameters or launch attributes were not kept whole");
		return -1;
	}
	if (KT_GCALL(cuGraphKernelNodeGetParams_v2, n->mirror, &p))
		return -1;
	bytes = malloc(n->rec.param_bytes_len + 8);
	args = calloc(l->nparams + 1, sizeof(*args));
	if (bytes && args) {
		memcpy(bytes, n->params, n->rec.param_bytes_len);
		for (uint32_t i = 0; i < l->nparams; i++)
			args[i] = bytes + l->offset[i];
		p.kernelParams = args;
		p.extra = NULL;
		rc = KT_GCALL(cuGraphAddKernelNode_v2, out, g, nd ? deps : NULL, nd, &p) ? -1 : 0;
	}
	free(bytes);
	free(args);
	return rc;
}

/* A copy, memset, host or event node with the program's node's parameters. */
static int add_plain(const struct gb *b, const struct kt_gnode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
		     CUgraphNode *out)
{
	CUDA_MEMCPY3D c;
	CUDA_MEMSET_NODE_PARAMS s;
	CUDA_HOST_NODE_PARAMS h;
	CUevent ev = NULL;

	deps = nd ? deps : NULL;
	switch (n->rec.kind) {
	case KTRACE_GNODE_MEMCPY:
		memset(&c, 0, sizeof(c));
		return KT_GCALL(cuGraphMemcpyNodeGetParams, n->mirror, &c) ||
		       KT_GCALL(cuGraphAddMemcpyNode, out, g, deps, nd, &c, b->r->ctx) ? -1 : 0;
	case KTRACE_GNODE_MEMSET:
		memset(&s, 0, sizeof(s));
		return KT_GCALL(cuGraphMemsetNodeGetParams, n->mirror, &s) ||
		       KT_GCALL(cuGraphAddMemsetNode, out, g, deps, nd, &s, b->r->ctx) ? -1 : 0;
	case KTRACE_GNODE_HOST:
		memset(&h, 0, sizeof(h));
		return KT_GCALL(cuGraphHostNodeGetParams, n->mirror, &h) ||
		       KT_GCALL(cuGraphAddHostNode, out, g, deps, nd, &h) ? -1 : 0;
	case KTRACE_GNODE_EVENT_RECORD:
		return KT_GCALL(cuGraphEventRecordNodeGetEvent, n->mirror, &ev) ||
		       KT_GCALL(cuGraphAddEventRecordNode, out, g, deps, nd, ev) ? -1 : 0;
	case KTRACE_GNODE_EVENT_WAIT:
		return KT_GCALL(cuGraphEventWaitNodeGetEvent, n->mirror, &ev) ||
		       KT_GCALL(cuGraphAddEventWaitNode, out, g, deps, nd, ev) ? -1 : 0;
	case KTRACE_GNODE_EMPTY:
	case KTRACE_GNODE_CHILD: /* a child graph without nodes */
		return KT_GCALL(cuGraphAddEmptyNode, out, g, deps, nd) ? -1 : 0;
	default:
		kt_graph_failed_because("a node of a kind ktrace does not build again");
		return -1;
	}
}

static CUresult add_generic(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd, CUgraphNodeParams *p)
{
	if (KT_REAL_HAS(cuGraphAddNode_v2))
		return KT_REAL(cuGraphAddNode_v2, out, g, nd ? deps : NULL, NULL, nd, p);
	return KT_REAL(cuGraphAddNode, out, g, nd ? deps : NULL, nd, p);
}

/* Conditional node i with the program's handle value (the copy's graph
 * has a handle of that value, make_handles); its bodies' graphs noted. */
static int add_conditional(struct gb *b, uint32_t i, CUgraph g, const CUgraphNode *deps, size_t nd, CUgraphNode *out)
{
	const struct kt_gnode *n = &b->r->nodes[i];
	CUgraphNodeParams p;

	if (!(n->rec.cond_flags & KTRACE_CONDF_DEFAULT_KNOWN)) {
		kt_graph_failed_because("a conditional node's handle was made before tracing started: the copy "
					"cannot make it again");
		return -1;
	}
	if (!n->body_levels)
		return -1;
	memset(&p, 0, sizeof(p));
	p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	p.conditional.handle = n->rec.cond_handle;
	p.conditional.type = (CUgraphConditionalNodeType)n->rec.cond_type;
	p.conditional.size = n->rec.cond_size;
	p.conditional.ctx = b->r->ctx;
	if (kt_graph_failed("cuGraphAddNode", add_generic(out, g, deps, nd, &p)) || !p.conditional.phGraph_out)
		return -1;
	for (uint32_t k = 0; k < n->rec.cond_size; k++)
		if (n->body_levels[k] != KT_GRAPH_NONE)
			b->level_graph[n->body_levels[k]] = p.conditional.phGraph_out[k];
	return 0;
}

/* The handles the program made on level lv's graph, made again on the
 * copy's graph g in the program's order; each must have the program's
 * value.  0 or -1. */
static int make_handles(const struct gb *b, uint32_t lv, CUgraph g)
{
	const struct kt_glevel *L = &b->r->levels[lv];

	for (uint32_t k = 0; k < L->nhandles; k++) {
		const struct kt_ghandle *h = &L->handles[k];
		CUgraphConditionalHandle v = 0;

		if (KT_GCALL(cuGraphConditionalHandleCreate, &v, g, b->r->ctx, h->def,
			     h->flags & CU_GRAPH_COND_ASSIGN_DEFAULT))
			return -1;
		if (v != h->value) {
			kt_graph_failed_because("a conditional handle made again for ktrace's copy got another value than "
						"the program's (a handle made before tracing, or a driver that numbers "
						"handles otherwise)");
			return -1;
		}
	}
	return 0;
}

/* ---- ktrace's own nodes ------------------------------------------------------------------ */

/* The top's first node: the run counters and outer rings zeroed. */
static int add_zero(struct gb *b, CUgraph g, CUgraphNode *out)
{
	uint64_t words = (uint64_t)b->r->nlevels * (1u + b->a->ring);
	CUDA_MEMSET_NODE_PARAMS s = { .dst = result_word(b, 0), .value = 0, .elementSize = 4,
				      .width = (size_t)words * 2, .height = 1 };

	return KT_GCALL(cuGraphAddMemsetNode, out, g, NULL, 0, &s, b->r->ctx) ? -1 : 0;
}

/* Body lv's first node: its run counter advanced. */
static int add_advance(struct gb *b, uint32_t lv, CUgraph g, CUgraphNode *out)
{
	const struct kt_grev *r = b->r;
	uint32_t outer = r->levels[r->nodes[r->levels[lv].parent].level].run;
	struct kt_cond_advance_params p = {
		.counter = result_word(b, lv),
		.parent = outer == KT_GRAPH_NONE ? 0 : result_word(b, outer),
		.outer = result_word(b, r->nlevels + (uint64_t)lv * b->a->ring),
		.ring = b->a->ring,
	};
	void *args[1] = { &p };
	CUDA_KERNEL_NODE_PARAMS kp;

	memset(&kp, 0, sizeof(kp));
	kp.func = b->a->advance;
	kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = args;
	return KT_GCALL(cuGraphAddKernelNode_v2, out, g, NULL, 0, &kp) ? -1 : 0;
}

/* A gated copy of node i's buffers (post: after it, else before), after dep. */
static int add_gate(struct gb *b, uint32_t i, CUgraph g, const CUgraphNode *deps, size_t nd, int post,
		    CUgraphNode *out)
{
	const struct kt_grev *r = b->r;
	const struct ktrace_replay_gate *gate = b->a->gate;
	uint32_t run = r->levels[r->nodes[i].level].run;
	uint32_t outer = run == KT_GRAPH_NONE ? KT_GRAPH_NONE : r->levels[r->nodes[r->levels[run].parent].level].run;
	struct kt_gated_copy_params p = {
		/* the top level's gate: its counter always 1, open in "run 0" */
		.counter = run == KT_GRAPH_NONE ? gate->top_counter : result_word(b, run),
		.outer_counter = outer == KT_GRAPH_NONE ? 0 : result_word(b, outer),
		.table = post ? gate->post_table : gate->pre_table,
		.fired = gate->fired + (post ? 8u : 0u),
		.fired_value = 1,
		.iteration = run == KT_GRAPH_NONE ? 0 : b->a->gate_iteration,
		.outer = b->a->gate_outer,
		.n = gate->capacity,
	};
	void *args[1] = { &p };
	CUDA_KERNEL_NODE_PARAMS kp;

	memset(&kp, 0, sizeof(kp));
	kp.func = gate->copy;
	kp.gridDimX = KT_GATE_GRID;
	kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = KT_GATE_BLOCK;
	kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = args;
	return KT_GCALL(cuGraphAddKernelNode_v2, out, g, nd ? deps : NULL, nd, &kp) ? -1 : 0;
}

/* The gated node: a gated copy, the node, a gated copy; the last stands
 * for the node in the edges to its successors. */
static int add_gated_kernel(struct gb *b, uint32_t i, CUgraph g, const CUgraphNode *deps, size_t nd)
{
	CUgraphNode pre = NULL, node = NULL;

	return add_gate(b, i, g, deps, nd, 0, &pre) || add_kernel(&b->r->nodes[i], g, &pre, 1, &node) ||
	       add_gate(b, i, g, &node, 1, 1, &b->map[i]) ? -1 : 0;
}

/* ---- the walk ------------------------------------------------------------------------------ */

/* Node i (of level graph g) after its dependencies, else after the level's entry. */
static int add_node(struct gb *b, uint32_t i, CUgraph g, CUgraphNode entry)
{
	const struct kt_gnode *n = &b->r->nodes[i];
	uint32_t nd = b->in_start[i + 1] - b->in_start[i];
	CUgraphNode *deps = calloc(nd + 1, sizeof(*deps));
	int rc = deps ? 0 : -1;

	for (uint32_t k = 0; k < nd && !rc; k++)
		rc = (deps[k] = b->map[b->in_from[b->in_start[i] + k]]) ? 0 : -1;
	if (!nd && entry)
		deps[nd++] = entry;
	if (!rc && n->rec.kind == KTRACE_GNODE_KERNEL && b->a->gate && i == b->a->gate_node)
		rc = add_gated_kernel(b, i, g, deps, nd);
	else if (!rc && n->rec.kind == KTRACE_GNODE_KERNEL)
		rc = add_kernel(n, g, deps, nd, &b->map[i]);
	else if (!rc && n->rec.kind == KTRACE_GNODE_CONDITIONAL)
		rc = add_conditional(b, i, g, deps, nd, &b->map[i]);
	else if (!rc)
		rc = add_plain(b, n, g, deps, nd, &b->map[i]);
	free(deps);
	return rc;
}

/* The nodes level lv's graph holds, in the revision's topological order. */
static int build_level(struct gb *b, uint32_t lv)
{
	const struct kt_grev *r = b->r;
	CUgraph g = b->level_graph[lv];
	CUgraphNode entry = NULL;
	int rc;

	if (!g)
		return -1;
	rc = make_handles(b, lv, g) || (lv ? add_advance(b, lv, g, &entry) : add_zero(b, g, &entry));
	for (uint32_t k = 0; k < r->nrun && !rc; k++) {
		uint32_t i = r->run_order[k];

		if (host_level(r, r->nodes[i].level) == lv)
			rc = add_node(b, i, g, entry);
	}
	return rc ? -1 : 0;
}

int kt_gbuild(const struct kt_grev *r, const struct kt_gbuild_area *a, CUgraph *g, CUgraphNode *map,
	      CUgraph *level_graph)
{
	struct gb b = { .r = r, .a = a, .map = map, .level_graph = level_graph };
	int rc = -1;

	*g = NULL;
	for (uint32_t lv = 0; lv < r->nlevels; lv++)
		if (r->levels[lv].nhandles && host_level(r, lv) != lv) {
			kt_graph_failed_because("conditional handles were made on a child graph, whose nodes the copy "
						"holds in the graph around it");
			return -1;
		}
	if (!a->advance || incoming_edges(&b) || KT_GCALL(cuGraphCreate, g, 0))
		goto out;
	level_graph[0] = *g;
	rc = 0;
	for (uint32_t lv = 0; lv < r->nlevels && !rc; lv++)
		if (host_level(r, lv) == lv)
			rc = build_level(&b, lv);
	for (uint32_t lv = 0; lv < r->nlevels && !rc; lv++)
		level_graph[lv] = level_graph[host_level(r, lv)];
	if (rc) {
		KT_REAL(cuGraphDestroy, *g);
		*g = NULL;
	}
out:
	free(b.in_start);
	free(b.in_from);
	return rc;
}
