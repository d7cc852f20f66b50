/* test/fakecuda/fakegraph.c: the fake driver's CUDA graphs and stream capture.
 *
 * Part of the fake libcuda.so.1 (test/fakecuda/fakecuda.c has the rest):
 * enough of the graph API for ktrace's CPU tests.  A graph is a list of
 * nodes (kernel, memcpy, memset, child graph, empty, host, event record and
 * wait, conditional, memory allocation and free: the memory allocated when
 * the node is added, never freed), each with its dependencies; a clone or an
 * executable graph is a deep copy whose nodes remember the node they were
 * copied from (cuGraphNodeFindInClone, the exec's node setters, which reach
 * nodes inside child graphs too); like the
 * driver, cuGraphClone refuses a graph with conditional or memory nodes.  cuGraphLaunch runs the
 * nodes at once, in a topological order of the dependencies (ties in node
 * order), skipping disabled ones: kernels as fakecuda.c launches them (real
 * behaviour and checksum kernels in the real-memory build), copies and
 * memsets moving bytes in the real-memory build, child graphs recursively,
 * conditional nodes as the driver runs them (below).  Stream capture (cuStreamBeginCapture
 * and _v2, ToGraph, cuStreamEndCapture, with _ptsz twins) turns launches and
 * cuMemsetD32Async on the capturing stream into nodes chained one after the
 * other, and a graph launch into a child graph node.  cuGraphExecUpdate(_v2)
 * takes the new graph's parameters when the topology is the same.
 * Edges keep the data they were added with (cuGraphAddDependencies_v2)
 * and the queries return it; the fake orders every edge as a full one.
 * Every entry point counts its calls (fake_count).  Kernel parameters are
 * copied through the fake kernels' layouts (kernelParams only).
 *
 * Conditional nodes: cuGraphConditionalHandleCreate makes a handle on a
 * graph with its default value and flags; its value is, as the driver's
 * are (measured), a small index per graph in creation order: 1, 2, ...
 * (FAKECUDA_GLOBAL_HANDLES=1: a value of its own per call instead, as a
 * driver that numbered handles process-wide would).  A handle value names
 * the handle of that value of the graph using it (a conditional node's
 * graph, a running kernel's graph), else of the nearest graph around it
 * that has one (a body's graph lies in its conditional node's graph); an
 * executable graph copies its graphs' handles.  A conditional node needs a
 * handle its value names that no other conditional node uses
 * (CUDA_ERROR_INVALID_VALUE otherwise).  A launch of an exec first assigns
 * the default of each of its handles made with
 * CU_GRAPH_COND_ASSIGN_DEFAULT; the fake kernels fake_set_cond and
 * fake_loop_cond (fakecuda.c) set a handle's value as cudaGraphSetConditional
 * does on the GPU (fg_cond_set).  WHILE runs its body while the value is
 * non-zero (checked before the first run; at most FG_MAX_RUNS runs, then
 * the launch fails), IF body 0 when non-zero (body 1, if there is one,
 * when zero), SWITCH body[value] when value < size.  cuGraphNodeGetParams
 * describes conditional nodes (handle, type, size, bodies, context).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test/fakecuda/fakecuda_internal.h"

#undef cuStreamBeginCapture
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeGetParams
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphGetEdges
#undef cuGraphNodeGetDependencies
#undef cuGraphNodeGetDependentNodes
#undef cuGraphAddDependencies
#undef cuGraphRemoveDependencies
#undef cuGraphAddNode

#define API __attribute__((visibility("default")))
#define NOTE() fk_note(__func__)
#define MAX_PARAMS 8
#define PARAM_BYTES 4096
#define MAX_BODIES 4
#define MAX_HANDLES 16 /* per graph */
#define FG_MAX_RUNS (1u << 20)
#define HANDLE_BASE 0xc0de000000000000ull

struct fgraph;

struct fnode {
	CUgraphNodeType type;
	struct fgraph *owner;
	struct fnode *src;         /* copies: the node copied from */
	struct fnode **deps;
	CUgraphEdgeData *edata;    /* per dependency: the edge's data (zero: a default edge) */
	size_t ndeps;
	int disabled;
	CUfunction f;              /* kernel */
	unsigned grid[3], block[3], shm, np;
	void *pptr[MAX_PARAMS];
	unsigned char pbytes[PARAM_BYTES];
	CUDA_MEMCPY3D copy;        /* memcpy */
	CUDA_MEMSET_NODE_PARAMS set; /* memset */
	struct fgraph *child;      /* child graph */
	CUevent ev;                /* event record / wait */
	CUDA_HOST_NODE_PARAMS host; /* host function */
	struct fgraph *body[MAX_BODIES]; /* conditional */
	unsigned nbody;
	CUgraphConditionalHandle cond;
	CUgraphConditionalNodeType cond_type;
	CUgraph out[MAX_BODIES];   /* the "CUDA-owned" array phGraph_out points to */
};

/* A conditional handle: the value the driver handed out, its condition
 * value, default and flags, whether a conditional node uses it. */
struct fhandle {
	CUgraphConditionalHandle id;
	unsigned value, def, flags, used;
};
static uint64_t global_handles; /* FAKECUDA_GLOBAL_HANDLES: handed out so far */
static _Thread_local const struct fgraph *running; /* the graph whose node runs now */

struct fgraph {
	struct fnode **nodes;
	size_t n, cap;
	int exec;
	struct fnode *up;          /* the node holding it (conditional or child graph), NULL: a top graph */
	struct fhandle handles[MAX_HANDLES];
	unsigned nhandles;
};

static pthread_mutex_t fg_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- graphs and nodes ------------------------------------------------------------------ */

static struct fgraph *graph_new(void)
{
	return calloc(1, sizeof(struct fgraph));
}

static void graph_free(struct fgraph *g);

static void node_free(struct fnode *n)
{
	graph_free(n->child);
	for (unsigned b = 0; b < n->nbody; b++)
		graph_free(n->body[b]);
	free(n->deps);
	free(n->edata);
	free(n);
}

static void graph_free(struct fgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		node_free(g->nodes[i]);
	free(g->nodes);
	free(g);
}

static size_t index_of(const struct fgraph *g, const struct fnode *n)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i] == n)
			return i;
	return (size_t)-1;
}

/* n depends on d by an edge of data e (NULL: a default edge). */
static int add_dep(struct fnode *n, struct fnode *d, const CUgraphEdgeData *e)
{
	struct fnode **v = realloc(n->deps, (n->ndeps + 1) * sizeof(*v));
	CUgraphEdgeData *ed;

	if (!v)
		return -1;
	n->deps = v;
	ed = realloc(n->edata, (n->ndeps + 1) * sizeof(*ed));
	if (!ed)
		return -1;
	n->edata = ed;
	memset(&ed[n->ndeps], 0, sizeof(*ed));
	if (e)
		ed[n->ndeps] = *e;
	n->deps[n->ndeps++] = d;
	return 0;
}

/* n no longer depends through its dependency d (the last takes its place). */
static void drop_dep(struct fnode *n, size_t d)
{
	n->ndeps--;
	n->deps[d] = n->deps[n->ndeps];
	n->edata[d] = n->edata[n->ndeps];
}

/* A new node of g after deps (all of g).  NULL on a bad argument. */
static struct fnode *node_add(struct fgraph *g, CUgraphNodeType type, const CUgraphNode *deps, size_t nd)
{
	struct fnode *n;

	if (!g || (nd && !deps))
		return NULL;
	for (size_t i = 0; i < nd; i++)
		if (!deps[i] || ((struct fnode *)deps[i])->owner != g)
			return NULL;
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		struct fnode **v = realloc(g->nodes, cap * sizeof(*v));

		if (!v)
			return NULL;
		g->nodes = v;
		g->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->type = type;
	n->owner = g;
	for (size_t i = 0; i < nd; i++)
		add_dep(n, (struct fnode *)deps[i], NULL);
	g->nodes[g->n++] = n;
	return n;
}

/* Kernel parameters copied through the fake kernel's layout. */
static void set_kernel(struct fnode *n, CUfunction f, const unsigned *grid, const unsigned *block, unsigned shm,
		       void **params)
{
	size_t off[MAX_PARAMS], size[MAX_PARAMS];
	unsigned np = 0;

	n->f = f;
	memcpy(n->grid, grid, sizeof(n->grid));
	memcpy(n->block, block, sizeof(n->block));
	n->shm = shm;
	memset(n->pbytes, 0, sizeof(n->pbytes));
	n->np = 0;
	if (fk_func_layout(f, &np, off, size) || np > MAX_PARAMS)
		return;
	for (unsigned i = 0; i < np; i++) {
		if (params && params[i] && off[i] + size[i] <= PARAM_BYTES)
			memcpy(n->pbytes + off[i], params[i], size[i]);
		n->pptr[i] = n->pbytes + off[i];
	}
	n->np = np;
}

static void set_kernel_v2(struct fnode *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	const unsigned grid[3] = { p->gridDimX, p->gridDimY, p->gridDimZ };
	const unsigned block[3] = { p->blockDimX, p->blockDimY, p->blockDimZ };

	set_kernel(n, p->func ? p->func : (CUfunction)p->kern, grid, block, p->sharedMemBytes, p->kernelParams);
}

static struct fgraph *graph_copy(const struct fgraph *g, int exec);

/* dst takes src's parameters (not its dependencies). */
static void params_copy(struct fnode *dst, const struct fnode *src)
{
	void *params[MAX_PARAMS];

	for (unsigned i = 0; i < src->np; i++)
		params[i] = src->pptr[i];
	if (src->type == CU_GRAPH_NODE_TYPE_KERNEL)
		set_kernel(dst, src->f, src->grid, src->block, src->shm, src->np ? params : NULL);
	dst->copy = src->copy;
	dst->set = src->set;
	dst->ev = src->ev;
	dst->host = src->host;
	dst->disabled = src->disabled;
	if (src->child) {
		graph_free(dst->child);
		dst->child = graph_copy(src->child, 0);
	}
	for (unsigned b = 0; b < src->nbody && b < MAX_BODIES; b++) {
		graph_free(dst->body[b]);
		dst->body[b] = graph_copy(src->body[b], 0);
		if (dst->body[b])
			dst->body[b]->up = dst;
	}
	if (dst->child)
		dst->child->up = dst;
	dst->nbody = src->nbody;
	dst->cond = src->cond;
	dst->cond_type = src->cond_type;
}

static struct fgraph *graph_copy(const struct fgraph *g, int exec)
{
	struct fgraph *c = graph_new();

	if (!c || !g)
		return c;
	c->exec = exec;
	memcpy(c->handles, g->handles, sizeof(c->handles));
	c->nhandles = g->nhandles;
	for (unsigned k = 0; k < c->nhandles; k++)
		c->handles[k].value = c->handles[k].def;
	for (size_t i = 0; i < g->n; i++) {
		struct fnode *n = node_add(c, g->nodes[i]->type, NULL, 0);

		if (!n)
			break;
		n->src = g->nodes[i];
		params_copy(n, g->nodes[i]);
	}
	for (size_t i = 0; i < c->n; i++) /* a dependency may come later in the list */
		for (size_t d = 0; d < g->nodes[i]->ndeps; d++)
			add_dep(c->nodes[i], c->nodes[index_of(g, g->nodes[i]->deps[d])], &g->nodes[i]->edata[d]);
	return c;
}

/* ---- running a graph ------------------------------------------------------------------- */

static CUresult run_graph(const struct fgraph *g);
static CUresult run_conditional(const struct fnode *n);

/* The address of one side of a copy. */
static void *copy_side(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t pitch)
{
	uintptr_t base = t == CU_MEMORYTYPE_HOST ? (uintptr_t)host : (uintptr_t)dev;

	return (void *)(base + x + y * pitch);
}

static CUresult run_memcpy(const CUDA_MEMCPY3D *c)
{
	size_t rows = (c->Height ? c->Height : 1) * (c->Depth ? c->Depth : 1);
	int dd = c->dstMemoryType != CU_MEMORYTYPE_HOST, sd = c->srcMemoryType != CU_MEMORYTYPE_HOST;

	if (!fk_real_memory())
		return CUDA_SUCCESS;
	for (size_t r = 0; r < rows; r++) {
		CUresult e = fk_copy(copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY + r,
					       c->dstPitch),
				     copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY + r,
					       c->srcPitch),
				     c->WidthInBytes, dd, sd);
		if (e != CUDA_SUCCESS)
			return e;
	}
	return CUDA_SUCCESS;
}

static CUresult run_memset(const CUDA_MEMSET_NODE_PARAMS *p)
{
	size_t rows = p->height ? p->height : 1;

	if (!fk_real_memory())
		return CUDA_SUCCESS;
	for (size_t r = 0; r < rows; r++) {
		unsigned char *row = (unsigned char *)(uintptr_t)(p->dst + r * p->pitch);

		if (!fk_device_range((uintptr_t)row, p->width * p->elementSize))
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t i = 0; i < p->width; i++)
			memcpy(row + i * p->elementSize, &p->value, p->elementSize);
	}
	return CUDA_SUCCESS;
}

/* The handle value h names in graph g: g's own of that value, else the
 * nearest graph's around g. */
static struct fhandle *handle_in(const struct fgraph *g, CUgraphConditionalHandle h)
{
	for (; g; g = g->up ? g->up->owner : NULL)
		for (unsigned k = 0; k < g->nhandles; k++)
			if (g->handles[k].id == h)
				return (struct fhandle *)&g->handles[k];
	return NULL;
}

void fg_cond_set(uint64_t handle, unsigned value)
{
	struct fhandle *h = handle_in(running, handle);

	if (h)
		__atomic_store_n(&h->value, value, __ATOMIC_RELAXED);
}

static unsigned cond_value(const struct fnode *n)
{
	const struct fhandle *h = handle_in(n->owner, n->cond);

	return h ? __atomic_load_n(&h->value, __ATOMIC_RELAXED) : 0;
}

/* A conditional node as the driver runs it. */
static CUresult run_conditional(const struct fnode *n)
{
	unsigned v = cond_value(n), runs = 0;
	CUresult r = CUDA_SUCCESS;

	switch (n->cond_type) {
	case CU_GRAPH_COND_TYPE_WHILE:
		for (; v && r == CUDA_SUCCESS; v = cond_value(n))
			r = ++runs > FG_MAX_RUNS ? CUDA_ERROR_LAUNCH_TIMEOUT : run_graph(n->body[0]);
		return r;
	case CU_GRAPH_COND_TYPE_IF:
		return v ? run_graph(n->body[0]) : n->nbody > 1 ? run_graph(n->body[1]) : CUDA_SUCCESS;
	case CU_GRAPH_COND_TYPE_SWITCH:
		return v < n->nbody ? run_graph(n->body[v]) : CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* At a launch: the default value of each handle of g (its child graphs'
 * and bodies' too) made with CU_GRAPH_COND_ASSIGN_DEFAULT. */
static void assign_defaults(struct fgraph *g)
{
	for (unsigned k = 0; g && k < g->nhandles; k++)
		if (g->handles[k].flags & CU_GRAPH_COND_ASSIGN_DEFAULT)
			g->handles[k].value = g->handles[k].def;
	for (size_t i = 0; g && i < g->n; i++) {
		const struct fnode *n = g->nodes[i];

		assign_defaults(n->child);
		for (unsigned b = 0; b < n->nbody; b++)
			assign_defaults(n->body[b]);
	}
}

static CUresult run_node(const struct fnode *n)
{
	if (n->disabled)
		return CUDA_SUCCESS;
	switch (n->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		return fk_launch_run(n->f, n->grid[0], (void **)n->pptr);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return run_memcpy(&n->copy);
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return run_memset(&n->set);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return run_graph(n->child);
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return fk_event_record(n->ev);
	case CU_GRAPH_NODE_TYPE_HOST:
		if (n->host.fn)
			n->host.fn(n->host.userData);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_CONDITIONAL:
		return run_conditional(n);
	default:
		return CUDA_SUCCESS;
	}
}

/* Every node once, each after its dependencies, ties in node order. */
static CUresult run_graph(const struct fgraph *g)
{
	unsigned char *done = g && g->n ? calloc(g->n, 1) : NULL;
	size_t left = g ? g->n : 0;
	const struct fgraph *outer = running;
	CUresult r = CUDA_SUCCESS;

	if (left && !done)
		return CUDA_ERROR_OUT_OF_MEMORY;
	while (left && r == CUDA_SUCCESS) {
		size_t before = left;

		for (size_t i = 0; i < g->n && r == CUDA_SUCCESS; i++) {
			size_t d = 0;

			if (done[i])
				continue;
			while (d < g->nodes[i]->ndeps && done[index_of(g, g->nodes[i]->deps[d])])
				d++;
			if (d < g->nodes[i]->ndeps)
				continue;
			running = g;
			r = run_node(g->nodes[i]);
			running = outer;
			done[i] = 1;
			left--;
			break; /* start again from the first node: the order is the lowest ready index */
		}
		if (left == before)
			r = CUDA_ERROR_INVALID_VALUE; /* a cycle */
	}
	free(done);
	return r;
}

/* ---- stream capture ------------------------------------------------------------------------ */

#define MAX_CAPTURES 16

static struct capture {
	CUstream s;
	struct fgraph *g;
	struct fnode *last;       /* the node the next one depends on */
	CUgraphNode dep;          /* last, as cuStreamGetCaptureInfo_v2 lists it */
	int active;
	cuuint64_t id;
} caps[MAX_CAPTURES];
static cuuint64_t next_capture_id = 1;

static struct capture *capture_of(CUstream s)
{
	for (int i = 0; i < MAX_CAPTURES; i++)
		if (caps[i].active && caps[i].s == s)
			return &caps[i];
	return NULL;
}

CUstreamCaptureStatus fg_capture_status(CUstream s)
{
	CUstreamCaptureStatus st;

	pthread_mutex_lock(&fg_lock);
	st = capture_of(s) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	pthread_mutex_unlock(&fg_lock);
	return st;
}

/* A node of type t appended to s's capture (NULL: s is not capturing). */
static struct fnode *capture_node(CUstream s, CUgraphNodeType t)
{
	struct capture *c = capture_of(s);
	CUgraphNode dep;
	struct fnode *n;

	if (!c)
		return NULL;
	dep = (CUgraphNode)c->last;
	n = node_add(c->g, t, c->last ? &dep : NULL, c->last ? 1 : 0);
	if (n)
		c->last = n;
	return n;
}

int fg_capture_kernel(CUstream s, CUfunction f, const unsigned *grid, const unsigned *block, unsigned shm,
		      void **params, CUresult *res)
{
	struct fnode *n;

	pthread_mutex_lock(&fg_lock);
	n = capture_node(s, CU_GRAPH_NODE_TYPE_KERNEL);
	if (n)
		set_kernel(n, f, grid, block, shm, params);
	pthread_mutex_unlock(&fg_lock);
	*res = f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
	return n != NULL;
}

int fg_capture_memset(CUstream s, CUdeviceptr d, unsigned value, unsigned elem, size_t count, CUresult *res)
{
	struct fnode *n;

	pthread_mutex_lock(&fg_lock);
	n = capture_node(s, CU_GRAPH_NODE_TYPE_MEMSET);
	if (n)
		n->set = (CUDA_MEMSET_NODE_PARAMS){ .dst = d, .value = value, .elementSize = elem, .width = count,
						    .height = 1 };
	pthread_mutex_unlock(&fg_lock);
	*res = CUDA_SUCCESS;
	return n != NULL;
}

static CUresult begin_capture(CUstream s, struct fgraph *into)
{
	CUresult r = CUDA_ERROR_ILLEGAL_STATE;

	pthread_mutex_lock(&fg_lock);
	for (int i = 0; i < MAX_CAPTURES && !capture_of(s); i++) {
		if (caps[i].active)
			continue;
		caps[i] = (struct capture){ s, into ? into : graph_new(), NULL, NULL, 1, next_capture_id++ };
		r = caps[i].g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
		caps[i].active = caps[i].g != NULL;
		break;
	}
	pthread_mutex_unlock(&fg_lock);
	return r;
}

static CUresult end_capture(CUstream s, CUgraph *g)
{
	struct capture *c;

	pthread_mutex_lock(&fg_lock);
	c = capture_of(s);
	if (c) {
		c->active = 0;
		if (g)
			*g = (CUgraph)c->g;
	}
	pthread_mutex_unlock(&fg_lock);
	return c ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
}

API CUresult cuStreamBeginCapture(CUstream s) { NOTE(); return begin_capture(s, NULL); }
API CUresult cuStreamBeginCapture_ptsz(CUstream s) { NOTE(); return begin_capture(s, NULL); }
API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m) { (void)m; NOTE(); return begin_capture(s, NULL); }
API CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode m)
{
	(void)m; NOTE(); return begin_capture(s, NULL);
}
API CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *d, const CUgraphEdgeData *e,
					 size_t n, CUstreamCaptureMode m)
{
	(void)d; (void)e; (void)n; (void)m; NOTE();
	return g ? begin_capture(s, (struct fgraph *)g) : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { NOTE(); return end_capture(s, g); }
API CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g) { NOTE(); return end_capture(s, g); }
API CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
				       const CUgraphNode **deps, size_t *n)
{
	struct capture *c;

	NOTE();
	pthread_mutex_lock(&fg_lock);
	c = capture_of(s);
	if (st)
		*st = c ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	if (id)
		*id = c ? c->id : 0;
	if (g)
		*g = c ? (CUgraph)c->g : NULL;
	if (c)
		c->dep = (CUgraphNode)c->last;
	if (deps)
		*deps = c && c->last ? &c->dep : NULL;
	if (n)
		*n = c && c->last ? 1 : 0;
	pthread_mutex_unlock(&fg_lock);
	return CUDA_SUCCESS;
}

/* ---- building graphs ------------------------------------------------------------------------- */

#define G(h) ((struct fgraph *)(h))
#define N(h) ((struct fnode *)(h))

/* Add a node of type t to g after deps, then `init` it (n in scope). */
#define ADD_NODE(t, init) \
	do { \
		struct fnode *n; \
		pthread_mutex_lock(&fg_lock); \
		n = ph ? node_add(G(g), (t), deps, nd) : NULL; \
		if (n) { \
			init; \
			*ph = (CUgraphNode)n; \
		} \
		pthread_mutex_unlock(&fg_lock); \
		return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; \
	} while (0)
#define ADD_PARAMS CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t nd

API CUresult cuGraphCreate(CUgraph *ph, unsigned flags)
{
	(void)flags; NOTE();
	if (!ph || !(*ph = (CUgraph)graph_new()))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}
/* 1 when g (or a child graph of it) has a node the driver does not clone:
 * conditional, memory allocation or free nodes. */
static int uncloneable(const struct fgraph *g)
{
	for (size_t i = 0; g && i < g->n; i++) {
		CUgraphNodeType t = g->nodes[i]->type;

		if (t == CU_GRAPH_NODE_TYPE_CONDITIONAL || t == CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
		    t == CU_GRAPH_NODE_TYPE_MEM_FREE || uncloneable(g->nodes[i]->child))
			return 1;
	}
	return 0;
}
API CUresult cuGraphClone(CUgraph *ph, CUgraph src)
{
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;

	NOTE();
	if (!ph || !src)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	if (!uncloneable(G(src))) {
		*ph = (CUgraph)graph_copy(G(src), 0);
		r = *ph ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&fg_lock);
	return r;
}
API CUresult cuGraphDestroy(CUgraph g)
{
	NOTE();
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	graph_free(G(g));
	pthread_mutex_unlock(&fg_lock);
	return CUDA_SUCCESS;
}
API CUresult cuGraphAddKernelNode_v2(ADD_PARAMS, const CUDA_KERNEL_NODE_PARAMS *p)
{
	NOTE();
	if (!p || (fk_env_num("FAKECUDA_GRAPH_REFUSE_HASH_NODES") && fk_is_hash_func(p->func)))
		return CUDA_ERROR_INVALID_VALUE;
	ADD_NODE(CU_GRAPH_NODE_TYPE_KERNEL, set_kernel_v2(n, p));
}
API CUresult cuGraphAddKernelNode(ADD_PARAMS, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS v2;

	NOTE();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&v2, 0, sizeof(v2));
	memcpy(&v2, p, sizeof(*p));
	ADD_NODE(CU_GRAPH_NODE_TYPE_KERNEL, set_kernel_v2(n, &v2));
}
API CUresult cuGraphAddMemcpyNode(ADD_PARAMS, const CUDA_MEMCPY3D *p, CUcontext c)
{
	(void)c; NOTE();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	ADD_NODE(CU_GRAPH_NODE_TYPE_MEMCPY, n->copy = *p);
}
API CUresult cuGraphAddMemsetNode(ADD_PARAMS, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c)
{
	(void)c; NOTE();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	ADD_NODE(CU_GRAPH_NODE_TYPE_MEMSET, n->set = *p);
}
API CUresult cuGraphAddChildGraphNode(ADD_PARAMS, CUgraph child)
{
	NOTE();
	if (!child)
		return CUDA_ERROR_INVALID_VALUE;
	ADD_NODE(CU_GRAPH_NODE_TYPE_GRAPH, n->child = graph_copy(G(child), 0));
}
API CUresult cuGraphAddEmptyNode(ADD_PARAMS) { NOTE(); ADD_NODE(CU_GRAPH_NODE_TYPE_EMPTY, (void)n); }
API CUresult cuGraphAddHostNode(ADD_PARAMS, const CUDA_HOST_NODE_PARAMS *p)
{
	NOTE();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	ADD_NODE(CU_GRAPH_NODE_TYPE_HOST, n->host = *p);
}
API CUresult cuGraphHostNodeGetParams(CUgraphNode h, CUDA_HOST_NODE_PARAMS *p)
{
	NOTE();
	if (!h || !p || N(h)->type != CU_GRAPH_NODE_TYPE_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	*p = N(h)->host;
	return CUDA_SUCCESS;
}
/* Streams run their work at once: the function runs now. */
API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data)
{
	(void)s;
	NOTE();
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	fn(data);
	return CUDA_SUCCESS;
}
API CUresult cuGraphAddMemAllocNode(ADD_PARAMS, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	NOTE();
	if (!p || !p->bytesize || fk_alloc(&p->dptr, p->bytesize) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_VALUE;
	ADD_NODE(CU_GRAPH_NODE_TYPE_MEM_ALLOC, (void)n);
}
API CUresult cuGraphAddMemFreeNode(ADD_PARAMS, CUdeviceptr d)
{
	(void)d; NOTE(); ADD_NODE(CU_GRAPH_NODE_TYPE_MEM_FREE, (void)n);
}
API CUresult cuGraphAddEventRecordNode(ADD_PARAMS, CUevent e) { NOTE(); ADD_NODE(CU_GRAPH_NODE_TYPE_EVENT_RECORD, n->ev = e); }
API CUresult cuGraphAddEventWaitNode(ADD_PARAMS, CUevent e) { NOTE(); ADD_NODE(CU_GRAPH_NODE_TYPE_WAIT_EVENT, n->ev = e); }

/* Set node n from generic parameters (kernel, memcpy, memset, child graph). */
static CUresult set_generic(struct fnode *n, const CUgraphNodeParams *p)
{
	if (!p || p->type != n->type)
		return CUDA_ERROR_INVALID_VALUE;
	switch (p->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		set_kernel_v2(n, (const CUDA_KERNEL_NODE_PARAMS *)&p->kernel);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		n->copy = p->memcpy.copyParams;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		n->set = (CUDA_MEMSET_NODE_PARAMS){ p->memset.dst, p->memset.pitch, p->memset.value,
						    p->memset.elementSize, p->memset.width, p->memset.height };
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		graph_free(n->child);
		n->child = graph_copy(G(p->graph.graph), 0);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_EMPTY:
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

/* A conditional node: its body graphs, made here, handed back. */
static CUresult add_conditional(struct fnode *n, CUgraphNodeParams *p)
{
	unsigned size = p->conditional.size;
	CUgraphConditionalNodeType t = p->conditional.type;
	struct fhandle *h = handle_in(n->owner, p->conditional.handle);

	if (!size || size > MAX_BODIES || !h || h->used || (t == CU_GRAPH_COND_TYPE_WHILE && size != 1) ||
	    (t == CU_GRAPH_COND_TYPE_IF && size > 2) || t > CU_GRAPH_COND_TYPE_SWITCH)
		return CUDA_ERROR_INVALID_VALUE;
	h->used = 1;
	n->cond = p->conditional.handle;
	n->cond_type = t;
	for (unsigned b = 0; b < size; b++) {
		n->body[b] = graph_new();
		if (n->body[b])
			n->body[b]->up = n;
		n->out[b] = (CUgraph)n->body[b];
	}
	p->conditional.phGraph_out = n->out;
	n->nbody = size;
	return CUDA_SUCCESS;
}

static CUresult add_node(ADD_PARAMS, CUgraphNodeParams *p)
{
	struct fnode *n;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	if (!p || !ph)
		return r;
	pthread_mutex_lock(&fg_lock);
	n = node_add(G(g), p->type, deps, nd);
	if (n) {
		r = p->type == CU_GRAPH_NODE_TYPE_CONDITIONAL ? add_conditional(n, p) : set_generic(n, p);
		if (r == CUDA_SUCCESS)
			*ph = (CUgraphNode)n;
		else
			G(g)->n--, node_free(n);
	}
	pthread_mutex_unlock(&fg_lock);
	return r;
}

API CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *out, CUgraph g, CUcontext ctx, unsigned def,
					   unsigned flags)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	(void)ctx; NOTE();
	pthread_mutex_lock(&fg_lock);
	if (out && g && !(flags & ~CU_GRAPH_COND_ASSIGN_DEFAULT) && G(g)->nhandles < MAX_HANDLES) {
		struct fhandle *h = &G(g)->handles[G(g)->nhandles++];

		*h = (struct fhandle){ .value = def, .def = def, .flags = flags };
		h->id = fk_env_num("FAKECUDA_GLOBAL_HANDLES") ? HANDLE_BASE + ++global_handles : G(g)->nhandles;
		*out = h->id;
		r = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&fg_lock);
	return r;
}

/* Conditional nodes only (what ktrace asks). */
API CUresult cuGraphNodeGetParams(CUgraphNode h, CUgraphNodeParams *p)
{
	struct fnode *n = N(h);

	NOTE();
	if (!n || !p)
		return CUDA_ERROR_INVALID_VALUE;
	if (n->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
		return CUDA_ERROR_NOT_SUPPORTED;
	memset(p, 0, sizeof(*p));
	p->type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	p->conditional.handle = n->cond;
	p->conditional.type = n->cond_type;
	p->conditional.size = n->nbody;
	for (unsigned b = 0; b < n->nbody; b++)
		n->out[b] = (CUgraph)n->body[b];
	p->conditional.phGraph_out = n->out;
	return CUDA_SUCCESS;
}

API CUresult cuGraphAddNode(ADD_PARAMS, CUgraphNodeParams *p) { NOTE(); return add_node(ph, g, deps, nd, p); }
API CUresult cuGraphAddNode_v2(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *e,
			       size_t nd, CUgraphNodeParams *p)
{
	(void)e; NOTE(); return add_node(ph, g, deps, nd, p);
}

static CUresult dependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *e,
			     size_t n, int add)
{
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&fg_lock);
	for (size_t i = 0; i < n && r == CUDA_SUCCESS; i++) {
		struct fnode *a = N(from[i]), *b = N(to[i]);
		size_t d = 0;

		if (!a || !b || a->owner != G(g) || b->owner != G(g)) {
			r = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		while (d < b->ndeps && b->deps[d] != a)
			d++;
		if (add && d == b->ndeps)
			add_dep(b, a, e ? &e[i] : NULL);
		else if (!add && d < b->ndeps)
			drop_dep(b, d);
	}
	pthread_mutex_unlock(&fg_lock);
	return r;
}

API CUresult cuGraphAddDependencies(CUgraph g, const CUgraphNode *a, const CUgraphNode *b, size_t n)
{
	NOTE(); return dependencies(g, a, b, NULL, n, 1);
}
API CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode *a, const CUgraphNode *b, const CUgraphEdgeData *e,
				       size_t n)
{
	NOTE(); return dependencies(g, a, b, e, n, 1);
}
API CUresult cuGraphRemoveDependencies(CUgraph g, const CUgraphNode *a, const CUgraphNode *b, size_t n)
{
	NOTE(); return dependencies(g, a, b, NULL, n, 0);
}
API CUresult cuGraphRemoveDependencies_v2(CUgraph g, const CUgraphNode *a, const CUgraphNode *b,
					  const CUgraphEdgeData *e, size_t n)
{
	NOTE(); return dependencies(g, a, b, e, n, 0);
}
API CUresult cuGraphDestroyNode(CUgraphNode h)
{
	struct fnode *n = N(h);
	struct fgraph *g;
	size_t i;

	NOTE();
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	g = n->owner;
	i = index_of(g, n);
	memmove(&g->nodes[i], &g->nodes[i + 1], (g->n - i - 1) * sizeof(*g->nodes));
	g->n--;
	for (size_t k = 0; k < g->n; k++)
		for (size_t d = 0; d < g->nodes[k]->ndeps; d++)
			if (g->nodes[k]->deps[d] == n)
				drop_dep(g->nodes[k], d--);
	node_free(n);
	pthread_mutex_unlock(&fg_lock);
	return CUDA_SUCCESS;
}

/* ---- queries and graph-level setters ------------------------------------------------------- */

/* Fill v (cap *n; NULL: count only) and set *n. */
#define LIST(v, n, count, item) \
	do { \
		size_t cap_ = *(n), k_ = 0; \
		for (size_t i_ = 0; i_ < (count); i_++, k_++) \
			if ((v) && k_ < cap_) \
				(v)[k_] = (item); \
		*(n) = k_; \
	} while (0)

API CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *v, size_t *n)
{
	NOTE();
	if (!g || !n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	LIST(v, n, G(g)->n, (CUgraphNode)G(g)->nodes[i_]);
	pthread_mutex_unlock(&fg_lock);
	return CUDA_SUCCESS;
}

static CUresult edges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *e, size_t *n)
{
	size_t cap, k = 0;

	if (!g || !n)
		return CUDA_ERROR_INVALID_VALUE;
	cap = *n;
	pthread_mutex_lock(&fg_lock);
	for (size_t i = 0; i < G(g)->n; i++)
		for (size_t d = 0; d < G(g)->nodes[i]->ndeps; d++, k++)
			if (from && to && k < cap) {
				from[k] = (CUgraphNode)G(g)->nodes[i]->deps[d];
				to[k] = (CUgraphNode)G(g)->nodes[i];
				if (e)
					e[k] = G(g)->nodes[i]->edata[d];
			}
	pthread_mutex_unlock(&fg_lock);
	*n = k;
	return CUDA_SUCCESS;
}

API CUresult cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n)
{
	NOTE(); return edges(g, from, to, NULL, n);
}
API CUresult cuGraphGetEdges_v2(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *e, size_t *n)
{
	NOTE(); return edges(g, from, to, e, n);
}
API CUresult cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType *t)
{
	NOTE();
	if (!h || !t)
		return CUDA_ERROR_INVALID_VALUE;
	*t = N(h)->type;
	return CUDA_SUCCESS;
}
/* The driver (580, measured) refuses a query that passes an array for no
 * entries: CUDA_ERROR_INVALID_VALUE; so does the fake. */
static CUresult node_dependencies(CUgraphNode h, CUgraphNode *v, CUgraphEdgeData *e, size_t *n)
{
	size_t cap;

	if (!h || !n || (v && !*n))
		return CUDA_ERROR_INVALID_VALUE;
	cap = *n;
	pthread_mutex_lock(&fg_lock);
	LIST(v, n, N(h)->ndeps, (CUgraphNode)N(h)->deps[i_]);
	for (size_t i = 0; e && v && i < *n && i < cap; i++)
		e[i] = N(h)->edata[i];
	pthread_mutex_unlock(&fg_lock);
	return CUDA_SUCCESS;
}
static CUresult node_dependents(CUgraphNode h, CUgraphNode *v, CUgraphEdgeData *e, size_t *n)
{
	size_t cap, k = 0;
	struct fgraph *g;

	if (!h || !n || (v && !*n))
		return CUDA_ERROR_INVALID_VALUE;
	cap = *n;
	pthread_mutex_lock(&fg_lock);
	g = N(h)->owner;
	for (size_t i = 0; i < g->n; i++)
		for (size_t d = 0; d < g->nodes[i]->ndeps; d++)
			if (g->nodes[i]->deps[d] == N(h)) {
				if (v && k < cap)
					v[k] = (CUgraphNode)g->nodes[i];
				if (e && v && k < cap)
					e[k] = g->nodes[i]->edata[d];
				k++;
			}
	pthread_mutex_unlock(&fg_lock);
	*n = k;
	return CUDA_SUCCESS;
}
API CUresult cuGraphNodeGetDependencies(CUgraphNode h, CUgraphNode *v, size_t *n)
{
	NOTE(); return node_dependencies(h, v, NULL, n);
}
API CUresult cuGraphNodeGetDependencies_v2(CUgraphNode h, CUgraphNode *v, CUgraphEdgeData *e, size_t *n)
{
	NOTE(); return node_dependencies(h, v, e, n);
}
API CUresult cuGraphNodeGetDependentNodes(CUgraphNode h, CUgraphNode *v, size_t *n)
{
	NOTE(); return node_dependents(h, v, NULL, n);
}
API CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode h, CUgraphNode *v, CUgraphEdgeData *e, size_t *n)
{
	NOTE(); return node_dependents(h, v, e, n);
}
API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS *p)
{
	struct fnode *n = N(h);

	NOTE();
	if (!n || !p || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	p->func = n->f;
	p->gridDimX = n->grid[0], p->gridDimY = n->grid[1], p->gridDimZ = n->grid[2];
	p->blockDimX = n->block[0], p->blockDimY = n->block[1], p->blockDimZ = n->block[2];
	p->sharedMemBytes = n->shm;
	p->kernelParams = n->np ? n->pptr : NULL;
	return CUDA_SUCCESS;
}
API CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p)
{
	NOTE();
	if (!h || !p || N(h)->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	set_kernel_v2(N(h), p);
	pthread_mutex_unlock(&fg_lock);
	return CUDA_SUCCESS;
}
API CUresult cuGraphMemcpyNodeGetParams(CUgraphNode h, CUDA_MEMCPY3D *p)
{
	NOTE();
	if (!h || !p || N(h)->type != CU_GRAPH_NODE_TYPE_MEMCPY)
		return CUDA_ERROR_INVALID_VALUE;
	*p = N(h)->copy;
	return CUDA_SUCCESS;
}
API CUresult cuGraphMemcpyNodeSetParams(CUgraphNode h, const CUDA_MEMCPY3D *p)
{
	NOTE();
	if (!h || !p || N(h)->type != CU_GRAPH_NODE_TYPE_MEMCPY)
		return CUDA_ERROR_INVALID_VALUE;
	N(h)->copy = *p;
	return CUDA_SUCCESS;
}
API CUresult cuGraphMemsetNodeGetParams(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS *p)
{
	NOTE();
	if (!h || !p || N(h)->type != CU_GRAPH_NODE_TYPE_MEMSET)
		return CUDA_ERROR_INVALID_VALUE;
	*p = N(h)->set;
	return CUDA_SUCCESS;
}
API CUresult cuGraphMemsetNodeSetParams(CUgraphNode h, const CUDA_MEMSET_NODE_PARAMS *p)
{
	NOTE();
	if (!h || !p || N(h)->type != CU_GRAPH_NODE_TYPE_MEMSET)
		return CUDA_ERROR_INVALID_VALUE;
	N(h)->set = *p;
	return CUDA_SUCCESS;
}
API CUresult cuGraphNodeSetParams(CUgraphNode h, CUgraphNodeParams *p)
{
	CUresult r;

	NOTE();
	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	r = set_generic(N(h), p);
	pthread_mutex_unlock(&fg_lock);
	return r;
}
API CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode h, CUgraph *g)
{
	NOTE();
	if (!h || !g || N(h)->type != CU_GRAPH_NODE_TYPE_GRAPH)
		return CUDA_ERROR_INVALID_VALUE;
	*g = (CUgraph)N(h)->child;
	return CUDA_SUCCESS;
}
API CUresult cuGraphNodeFindInClone(CUgraphNode *out, CUgraphNode orig, CUgraph clone)
{
	NOTE();
	if (!out || !orig || !clone)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < G(clone)->n; i++)
		if (G(clone)->nodes[i]->src == N(orig)) {
			*out = (CUgraphNode)G(clone)->nodes[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

/* ---- executable graphs ------------------------------------------------------------------------ */

static CUresult instantiate(CUgraphExec *ph, CUgraph g)
{
	if (!ph || !g)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	*ph = (CUgraphExec)graph_copy(G(g), 1);
	pthread_mutex_unlock(&fg_lock);
	return *ph ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuGraphInstantiateWithFlags(CUgraphExec *ph, CUgraph g, unsigned long long f)
{
	(void)f; NOTE(); return instantiate(ph, g);
}
API CUresult cuGraphInstantiateWithParams(CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	CUresult r;

	NOTE();
	r = instantiate(ph, g);
	if (p)
		p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
	return r;
}
API CUresult cuGraphExecDestroy(CUgraphExec e)
{
	NOTE();
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	graph_free(G(e));
	pthread_mutex_unlock(&fg_lock);
	return CUDA_SUCCESS;
}

/* Launch e on s: into s's capture as a child graph node, else run it now. */
static CUresult launch(CUgraphExec e, CUstream s)
{
	struct fnode *n;
	CUresult r;

	if (!e || !G(e)->exec)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	n = capture_node(s, CU_GRAPH_NODE_TYPE_GRAPH);
	if (n)
		n->child = graph_copy(G(e), 0);
	pthread_mutex_unlock(&fg_lock);
	if (n)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&fg_lock);
	assign_defaults(G(e));
	r = run_graph(G(e));
	pthread_mutex_unlock(&fg_lock);
	return r;
}

API CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { NOTE(); return launch(e, s); }
API CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) { NOTE(); return launch(e, s); }
API CUresult cuGraphUpload(CUgraphExec e, CUstream s) { (void)s; NOTE(); return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

/* Same topology: as many nodes, of the same types, with the same
 * dependencies by position. */
static int same_topology(const struct fgraph *a, const struct fgraph *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		if (a->nodes[i]->type != b->nodes[i]->type || a->nodes[i]->ndeps != b->nodes[i]->ndeps)
			return 0;
		for (size_t d = 0; d < a->nodes[i]->ndeps; d++)
			if (index_of(a, a->nodes[i]->deps[d]) != index_of(b, b->nodes[i]->deps[d]))
				return 0;
	}
	return 1;
}

API CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	CUresult r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;

	NOTE();
	if (!e || !g)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fg_lock);
	if (same_topology(G(e), G(g))) {
		for (size_t i = 0; i < G(e)->n; i++) {
			int off = G(e)->nodes[i]->disabled;

			params_copy(G(e)->nodes[i], G(g)->nodes[i]);
			G(e)->nodes[i]->disabled = off;
		}
		r = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&fg_lock);
	if (info) {
		memset(info, 0, sizeof(*info));
		info->result = r == CUDA_SUCCESS ? CU_GRAPH_EXEC_UPDATE_SUCCESS : CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
	}
	return r;
}

/* The node of g made from node h, looking inside child graphs too (the
 * driver lets a program set a node of a child graph on the exec).  As the
 * driver, only a node of the graph the exec was instantiated from names one
 * of its nodes (not a node of a graph it was updated from). */
static struct fnode *node_made_from(const struct fgraph *g, const struct fnode *h, int depth)
{
	struct fnode *x = NULL;

	for (size_t i = 0; g && i < g->n && !x; i++)
		if (g->nodes[i]->src == h)
			x = g->nodes[i];
	for (size_t i = 0; g && i < g->n && !x && depth < 16; i++)
		x = node_made_from(g->nodes[i]->child, h, depth + 1);
	return x;
}

/* The node of exec e made from node h of the graph it was instantiated from. */
static struct fnode *exec_node(CUgraphExec e, CUgraphNode h)
{
	return e && h ? node_made_from(G(e), N(h), 0) : NULL;
}

/* Run `set` on the exec's node x of node h (type t), under the lock. */
#define EXEC_SET(t, set) \
	do { \
		struct fnode *x; \
		CUresult r_ = CUDA_ERROR_INVALID_VALUE; \
		pthread_mutex_lock(&fg_lock); \
		x = exec_node(e, h); \
		if (x && x->type == (t)) { \
			set; \
			r_ = CUDA_SUCCESS; \
		} \
		pthread_mutex_unlock(&fg_lock); \
		return r_; \
	} while (0)

API CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec e, CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p)
{
	NOTE();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	EXEC_SET(CU_GRAPH_NODE_TYPE_KERNEL, set_kernel_v2(x, p));
}
API CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode h, const CUDA_MEMCPY3D *p, CUcontext c)
{
	(void)c; NOTE();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	EXEC_SET(CU_GRAPH_NODE_TYPE_MEMCPY, x->copy = *p);
}
API CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec e, CUgraphNode h, const CUDA_MEMSET_NODE_PARAMS *p,
					    CUcontext c)
{
	(void)c; NOTE();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	EXEC_SET(CU_GRAPH_NODE_TYPE_MEMSET, x->set = *p);
}
API CUresult cuGraphExecNodeSetParams(CUgraphExec e, CUgraphNode h, CUgraphNodeParams *p)
{
	struct fnode *x;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	NOTE();
	pthread_mutex_lock(&fg_lock);
	x = exec_node(e, h);
	if (x && p)
		r = set_generic(x, p);
	pthread_mutex_unlock(&fg_lock);
	return r;
}
API CUresult cuGraphNodeSetEnabled(CUgraphExec e, CUgraphNode h, unsigned on)
{
	NOTE();
	pthread_mutex_lock(&fg_lock);
	{
		struct fnode *x = exec_node(e, h);

		if (x)
			x->disabled = !on;
		pthread_mutex_unlock(&fg_lock);
		return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	}
}

/* ---- what ktrace's hashing of graphs calls besides ---------------------------------------------- */

API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	(void)s;
	NOTE();
	if (!fk_real_memory() || !n)
		return CUDA_SUCCESS;
	if (!fk_device_range((uintptr_t)d, n))
		return CUDA_ERROR_INVALID_VALUE;
	memset((void *)(uintptr_t)d, v, n);
	return CUDA_SUCCESS;
}
