/* interpose/graph/graph_model.c: describing a CUDA graph from the driver.
 *
 * Owns the revision (graph_internal.h): kt_grev_describe() walks a graph
 * with the driver's queries (cuGraphGetNodes, cuGraphGetEdges, the node
 * kinds and their parameters; child graphs through
 * cuGraphChildGraphNodeGetGraph, their nodes following their child-graph
 * node), so that however a graph was built (explicitly, by stream capture,
 * by cloning) it is seen alike.  Kernel nodes are resolved through the
 * registry like a launch's kernel (first-launch work, KERNEL record,
 * layout, filter) and their parameter bytes copied through the layout.
 * Dependencies are expanded so that they connect only nodes that run: an
 * edge into a child graph goes to its first nodes, an edge out of one
 * leaves from its last nodes.  A conditional node's bodies (what the
 * program made it with, graph_cond.c) are walked as levels of their own,
 * their nodes following it; edges never cross a body's bounds.  A
 * topological order of the nodes a launch records (kernel, memcpy and
 * memset nodes not in a conditional body) gives each its place in the
 * launch's block of launch_seq numbers; the kernel, memcpy and memset
 * nodes of each body follow, one place per run of the body its ring keeps.  Regions are
 * planned as for a launch (pointer scan and, with hashing, extents and
 * read-only inputs); which nodes an edge with data enters is kept.
 * May call: the real driver's graph queries (ktrace_real), the registry
 * (the kernel_ready service), the parameter scan, the allocation map's
 * extents.
 */
#include <stdlib.h>
#include <string.h>

#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/alloc_map.h"
#include "interpose/model/kernels.h"
#include "interpose/model/read_only.h"
#include "interpose/model/services.h"

struct walker {
	struct kt_grev *r;
	uint32_t cap_nodes, cap_levels;
	struct ktrace_graph_edge *raw; /* each level's own edges (node indexes) */
	uint32_t nraw, cap_raw;
	uint8_t *scratch;              /* one launch's parameter bytes */
	uint32_t why;                  /* enum ktrace_graph_untraced, 0: fine so far */
};

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t nc;
	void *q;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	q = realloc(*p, (size_t)nc * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

/* ---- driver queries -------------------------------------------------------------- */

/* The nodes of g into *v (malloc'd; NULL when none), *n of them.  0, or
 * -1 when the driver cannot say. */
static int graph_nodes(CUgraph g, CUgraphNode **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	if (KT_REAL(cuGraphGetNodes, g, NULL, n) != CUDA_SUCCESS)
		return -1;
	if (!*n)
		return 0;
	*v = calloc(*n, sizeof(**v));
	if (*v && KT_REAL(cuGraphGetNodes, g, *v, n) == CUDA_SUCCESS)
		return 0;
	free(*v);
	*v = NULL;
	*n = 0;
	return -1;
}

/* Does an edge carry data (a programmatic launch edge, ports)? */
static int edge_has_data(const CUgraphEdgeData *e)
{
	return e->type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || e->from_port || e->to_port;
}

/* The edges of g: from[i] -> to[i], *n of them (both malloc'd, one block),
 * data[i] whether edge i carries data (malloc'd; NULL when the driver has
 * no edge-data query).  -1 when the driver cannot say. */
static int graph_edges(CUgraph g, CUgraphNode **from, CUgraphNode **to, uint8_t **data, size_t *n)
{
	CUgraphEdgeData *e = NULL;
	CUresult r;

	*from = *to = NULL;
	*data = NULL;
	*n = 0;
	if (KT_REAL_HAS(cuGraphGetEdges_v2))
		r = KT_REAL(cuGraphGetEdges_v2, g, NULL, NULL, NULL, n);
	else if (KT_REAL_HAS(cuGraphGetEdges))
		r = KT_REAL(cuGraphGetEdges, g, NULL, NULL, n);
	else
		return -1;
	if (r != CUDA_SUCCESS)
		return -1;
	if (!*n)
		return 0;
	*from = calloc(2 * *n, sizeof(CUgraphNode));
	e = KT_REAL_HAS(cuGraphGetEdges_v2) ? calloc(*n, sizeof(*e)) : NULL;
	*data = e ? calloc(*n, 1) : NULL;
	if (!*from || (KT_REAL_HAS(cuGraphGetEdges_v2) && (!e || !*data))) {
		free(*from);
		free(e);
		free(*data);
		*from = NULL;
		*data = NULL;
		return -1;
	}
	*to = *from + *n;
	r = e ? KT_REAL(cuGraphGetEdges_v2, g, *from, *to, e, n) : KT_REAL(cuGraphGetEdges, g, *from, *to, n);
	for (size_t k = 0; e && r == CUDA_SUCCESS && k < *n; k++)
		(*data)[k] = (uint8_t)edge_has_data(&e[k]);
	free(e);
	if (r != CUDA_SUCCESS) {
		free(*from);
		free(*data);
		*from = *to = NULL;
		*data = NULL;
		return -1;
	}
	return 0;
}

static uint16_t node_kind(CUgraphNode node)
{
	CUgraphNodeType t;

	if (KT_REAL(cuGraphNodeGetType, node, &t) != CUDA_SUCCESS)
		return KTRACE_GNODE_UNKNOWN;
	/* CU_GRAPH_NODE_TYPE_KERNEL (0) .. _CONDITIONAL (13) are the format's kinds 1 .. 14 */
	return (unsigned)t <= CU_GRAPH_NODE_TYPE_CONDITIONAL ? (uint16_t)(t + 1) : KTRACE_GNODE_UNKNOWN;
}

/* ---- node parameters ------------------------------------------------------------- */

/* The kernel entry of a launched handle, its first-launch work done. */
static struct ktrace_kernel_entry *kernel_entry(uint64_t handle)
{
	int first = 0;

	return ktrace_services.kernel_ready(handle, &first);
}

static void read_cluster(struct kt_gnode *n)
{
	CUkernelNodeAttrValue v;

	memset(&v, 0, sizeof(v));
	if (KT_REAL(cuGraphKernelNodeGetAttribute, n->mirror, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v) !=
		    CUDA_SUCCESS)
		return;
	n->rec.cluster[0] = v.clusterDim.x;
	n->rec.cluster[1] = v.clusterDim.y;
	n->rec.cluster[2] = v.clusterDim.z;
}

static void read_kernel(struct walker *w, struct kt_gnode *n)
{
	CUDA_KERNEL_NODE_PARAMS p;
	struct ktrace_kernel_entry *k;
	uint32_t len;

	memset(&p, 0, sizeof(p));
	if (KT_REAL(cuGraphKernelNodeGetParams_v2, n->mirror, &p) != CUDA_SUCCESS)
		return;
	n->func = p.func ? (uint64_t)(uintptr_t)p.func : (uint64_t)(uintptr_t)p.kern;
	n->rec.grid[0] = p.gridDimX, n->rec.grid[1] = p.gridDimY, n->rec.grid[2] = p.gridDimZ;
	n->rec.block[0] = p.blockDimX, n->rec.block[1] = p.blockDimY, n->rec.block[2] = p.blockDimZ;
	n->rec.shared_mem = p.sharedMemBytes;
	read_cluster(n);
	k = n->func ? kernel_entry(n->func) : NULL;
	if (!k)
		return;
	n->rec.kernel_id = k->id;
	n->layout = k->layout;
	if (k->filter != KTRACE_FILTER_TRACE)
		n->rec.flags |= KTRACE_GNODEF_FILTERED;
	len = ktrace_params_assemble(k->layout, p.kernelParams, p.extra, w->scratch, KTRACE_PARAM_MAX_BYTES,
				     &n->launch_flags);
	if (n->launch_flags & KTRACE_LAUNCHF_PARAMS_TRUNCATED)
		n->rec.flags |= KTRACE_GNODEF_PARAMS_TRUNCATED;
	n->params = len ? malloc(len) : NULL;
	if (n->params)
		memcpy(n->params, w->scratch, len);
	n->rec.param_bytes = n->params;
	n->rec.param_bytes_len = n->params ? len : 0;
}

/* An address of one side of a 3D copy, and whether it lies in host memory. */
static uint64_t copy_side(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z,
			  size_t pitch, size_t height, int *is_host)
{
	uint64_t base = t == CU_MEMORYTYPE_HOST ? (uint64_t)(uintptr_t)host
			: (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED) ? (uint64_t)dev : 0;

	*is_host = t == CU_MEMORYTYPE_HOST;
	return base ? base + x + (uint64_t)y * pitch + (uint64_t)z * height * pitch : 0;
}

static void read_memcpy(struct kt_gnode *n)
{
	CUDA_MEMCPY3D p;
	int sh, dh;
	uint64_t h, d;

	memset(&p, 0, sizeof(p));
	if (KT_REAL(cuGraphMemcpyNodeGetParams, n->mirror, &p) != CUDA_SUCCESS)
		return;
	n->rec.src = copy_side(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcXInBytes, p.srcY, p.srcZ, p.srcPitch,
			       p.srcHeight, &sh);
	n->rec.dst = copy_side(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstXInBytes, p.dstY, p.dstZ, p.dstPitch,
			       p.dstHeight, &dh);
	h = p.Height ? p.Height : 1;
	d = p.Depth ? p.Depth : 1;
	n->rec.bytes = (uint64_t)p.WidthInBytes * h * d;
	n->rec.copy_flags = (d > 1 ? KTRACE_COPYF_3D : 0) | (d == 1 && h > 1 ? KTRACE_COPYF_2D : 0);
	if (p.srcMemoryType == CU_MEMORYTYPE_UNIFIED || p.dstMemoryType == CU_MEMORYTYPE_UNIFIED ||
	    p.srcMemoryType == CU_MEMORYTYPE_ARRAY || p.dstMemoryType == CU_MEMORYTYPE_ARRAY)
		n->rec.dir = KTRACE_COPY_UNKNOWN;
	else
		n->rec.dir = sh ? (dh ? KTRACE_COPY_HTOH : KTRACE_COPY_HTOD) : (dh ? KTRACE_COPY_DTOH : KTRACE_COPY_DTOD);
}

static void read_memset(struct kt_gnode *n)
{
	CUDA_MEMSET_NODE_PARAMS p;

	memset(&p, 0, sizeof(p));
	if (KT_REAL(cuGraphMemsetNodeGetParams, n->mirror, &p) != CUDA_SUCCESS)
		return;
	n->rec.dst = p.dst;
	n->rec.value = p.value;
	n->rec.elem_size = p.elementSize;
	n->rec.count = (uint64_t)p.width * (p.height ? p.height : 1);
	n->rec.copy_flags = p.height > 1 ? KTRACE_COPYF_2D : 0;
}

/* ---- the walk -------------------------------------------------------------------- */

static uint32_t walk_level(struct walker *w, CUgraph g, uint32_t parent, int depth);
static void read_conditional(struct walker *w, uint32_t i, int depth);

static uint32_t add_node(struct walker *w, CUgraphNode handle, uint32_t parent, uint32_t level)
{
	struct kt_grev *r = w->r;
	struct kt_gnode *n;

	if (r->nnodes >= KT_GRAPH_MAX_NODES) {
		w->why = KTRACE_GRAPH_UNTRACED_TOO_LARGE;
		return KT_GRAPH_NONE;
	}
	if (grow((void **)&r->nodes, &w->cap_nodes, r->nnodes + 1, sizeof(*r->nodes)))
		return KT_GRAPH_NONE;
	n = &r->nodes[r->nnodes];
	memset(n, 0, sizeof(*n));
	n->mirror = handle;
	n->level = level;
	n->child_level = KT_GRAPH_NONE;
	n->rec.handle = (uint64_t)(uintptr_t)handle;
	n->rec.parent = parent;
	n->rec.kind = node_kind(handle);
	if (parent != KT_GRAPH_NONE && (r->nodes[parent].rec.kind == KTRACE_GNODE_CONDITIONAL ||
					(r->nodes[parent].rec.flags & KTRACE_GNODEF_IN_CONDITIONAL)))
		n->rec.flags |= KTRACE_GNODEF_IN_CONDITIONAL;
	return r->nnodes++;
}

/* The handle of value h that conditional node i uses: made on the graph
 * holding i or, nearest first, on a graph around it.  NULL: not seen made. */
static const struct kt_ghandle *cond_handle(const struct kt_grev *r, uint32_t i, uint64_t h)
{
	for (uint32_t lv = r->nodes[i].level;;) {
		const struct kt_glevel *L = &r->levels[lv];

		for (uint32_t k = 0; k < L->nhandles; k++)
			if (L->handles[k].value == h)
				return &L->handles[k];
		if (L->parent == KT_GRAPH_NONE)
			return NULL;
		lv = r->nodes[L->parent].level;
	}
}

/* Conditional node i: what the program made it with, and its bodies
 * walked (the driver cannot say: the graph is untraced, `conditional`). */
static void read_conditional(struct walker *w, uint32_t i, int depth)
{
	struct kt_gnode *n = &w->r->nodes[i];
	const struct kt_ghandle *h;
	struct kt_gcond c;
	uint32_t *levels;

	if (kt_gcond_lookup(n->mirror, &c) || !(levels = calloc(c.size, sizeof(*levels)))) {
		if (!w->why)
			w->why = KTRACE_GRAPH_UNTRACED_CONDITIONAL;
		return;
	}
	w->r->ncond++;
	n->rec.cond_handle = c.handle;
	n->rec.cond_type = c.type;
	n->rec.cond_size = c.size;
	h = cond_handle(w->r, i, c.handle);
	if (h) {
		n->rec.cond_default = h->def;
		n->rec.cond_flags = KTRACE_CONDF_DEFAULT_KNOWN |
				    (h->flags & CU_GRAPH_COND_ASSIGN_DEFAULT ? KTRACE_CONDF_ASSIGN_DEFAULT : 0);
	}
	n->body_levels = levels;
	for (uint32_t b = 0; b < c.size; b++) {
		uint32_t lv = walk_level(w, c.bodies[b], i, depth + 1);

		levels[b] = lv;
		if (lv != KT_GRAPH_NONE)
			w->r->levels[lv].body = b;
	}
}

/* Read node i's parameters (a child graph: walk it). */
static void read_node(struct walker *w, uint32_t i, int depth)
{
	struct kt_gnode *n = &w->r->nodes[i];
	CUgraph child = NULL;
	uint32_t lv;

	switch (n->rec.kind) {
	case KTRACE_GNODE_KERNEL:
		read_kernel(w, n);
		break;
	case KTRACE_GNODE_MEMCPY:
		read_memcpy(n);
		break;
	case KTRACE_GNODE_MEMSET:
		read_memset(n);
		break;
	case KTRACE_GNODE_CHILD:
		if (KT_REAL(cuGraphChildGraphNodeGetGraph, n->mirror, &child) != CUDA_SUCCESS) {
			w->why = KTRACE_GRAPH_UNTRACED_QUERY;
			break;
		}
		n->rec.child_graph_id = kt_graph_new_id();
		lv = walk_level(w, child, i, depth + 1);
		w->r->nodes[i].child_level = lv; /* nodes may have moved */
		break;
	case KTRACE_GNODE_CONDITIONAL:
		read_conditional(w, i, depth);
		break;
	case KTRACE_GNODE_UNKNOWN:
		if (!w->why)
			w->why = KTRACE_GRAPH_UNTRACED_NODE_KIND;
		break;
	case KTRACE_GNODE_MEM_ALLOC:
	case KTRACE_GNODE_MEM_FREE:
		if (!w->why)
			w->why = KTRACE_GRAPH_UNTRACED_MEMORY_NODES;
		break;
	default:
		break;
	}
}

/* A node of one level: its handle in the mirror and its index. */
struct member {
	uintptr_t handle;
	uint32_t index;
};

static int cmp_member(const void *a, const void *b)
{
	uintptr_t x = ((const struct member *)a)->handle, y = ((const struct member *)b)->handle;

	return x < y ? -1 : x > y;
}

static uint32_t find_member(const struct member *m, size_t n, CUgraphNode h)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m[mid].handle == (uintptr_t)h)
			return m[mid].index;
		if (m[mid].handle < (uintptr_t)h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return KT_GRAPH_NONE;
}

/* Level lv's own edges, as node indexes, into w->raw. */
static void level_edges(struct walker *w, CUgraph g, uint32_t lv)
{
	const struct kt_glevel *L = &w->r->levels[lv];
	CUgraphNode *from, *to;
	uint8_t *data;
	struct member *m;
	size_t ne, k;

	if (graph_edges(g, &from, &to, &data, &ne)) {
		w->why = KTRACE_GRAPH_UNTRACED_QUERY;
		return;
	}
	m = malloc(L->n * sizeof(*m) + 1);
	if (m) {
		for (k = 0; k < L->n; k++)
			m[k] = (struct member){ (uintptr_t)w->r->nodes[L->members[k]].mirror, L->members[k] };
		qsort(m, L->n, sizeof(*m), cmp_member);
		for (k = 0; k < ne; k++) {
			uint32_t a = find_member(m, L->n, from[k]), b = find_member(m, L->n, to[k]);

			if (a == KT_GRAPH_NONE || b == KT_GRAPH_NONE ||
			    grow((void **)&w->raw, &w->cap_raw, w->nraw + 1, sizeof(*w->raw)))
				continue;
			w->raw[w->nraw++] = (struct ktrace_graph_edge){ a, b };
			if (data && data[k])
				w->r->nodes[b].dep_data = 1;
		}
	}
	free(m);
	free(from);
	free(data);
}

/* Walk graph g, held by child-graph node `parent` (NONE: the exec's graph):
 * each node, then (a child graph) its graph's nodes, then g's own edges.
 * Returns g's level, or NONE. */
static uint32_t walk_level(struct walker *w, CUgraph g, uint32_t parent, int depth)
{
	struct kt_grev *r = w->r;
	CUgraphNode *nodes;
	uint32_t lv, *members;
	size_t n;

	if (depth > KT_GRAPH_MAX_DEPTH) {
		w->why = KTRACE_GRAPH_UNTRACED_TOO_LARGE;
		return KT_GRAPH_NONE;
	}
	if (graph_nodes(g, &nodes, &n)) {
		w->why = KTRACE_GRAPH_UNTRACED_QUERY;
		return KT_GRAPH_NONE;
	}
	members = malloc(n * sizeof(*members) + 1);
	if (!members || grow((void **)&r->levels, &w->cap_levels, r->nlevels + 1, sizeof(*r->levels))) {
		free(members);
		free(nodes);
		w->why = KTRACE_GRAPH_UNTRACED_QUERY;
		return KT_GRAPH_NONE;
	}
	lv = r->nlevels++;
	r->levels[lv] = (struct kt_glevel){ .parent = parent, .members = members, .run = KT_GRAPH_NONE };
	if (kt_gcond_graph_handles(g, &r->levels[lv].handles, &r->levels[lv].nhandles))
		w->why = KTRACE_GRAPH_UNTRACED_QUERY;
	for (size_t k = 0; k < n && !(w->why == KTRACE_GRAPH_UNTRACED_TOO_LARGE); k++) {
		uint32_t i = add_node(w, nodes[k], parent, lv);

		if (i == KT_GRAPH_NONE)
			break;
		r->levels[lv].members[r->levels[lv].n++] = i;
		read_node(w, i, depth);
	}
	level_edges(w, g, lv);
	free(nodes);
	return lv;
}

/* ---- edges among the nodes that run ---------------------------------------------------- */

struct idx_vec {
	uint32_t *v;
	uint32_t n, cap;
};

static void vec_push(struct idx_vec *a, uint32_t x)
{
	if (!grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		a->v[a->n++] = x;
}

/* The nodes that run standing for x at its start (roots) or end (sinks):
 * x itself, or, for a child graph that is not empty, those of its graph's
 * first (last) nodes. */
static void collect(const struct kt_grev *r, const uint8_t *has_in, const uint8_t *has_out, uint32_t x, int sinks,
		    struct idx_vec *out)
{
	const struct kt_gnode *n = &r->nodes[x];
	const struct kt_glevel *L;

	if (n->child_level == KT_GRAPH_NONE || !r->levels[n->child_level].n) {
		vec_push(out, x);
		return;
	}
	L = &r->levels[n->child_level];
	for (uint32_t k = 0; k < L->n; k++) {
		uint32_t m = L->members[k];

		if (sinks ? !has_out[m] : !has_in[m])
			collect(r, has_in, has_out, m, sinks, out);
	}
}

static int add_edge(struct kt_grev *r, uint32_t *cap, uint32_t a, uint32_t b)
{
	if (r->nedges >= KT_GRAPH_MAX_EDGES || grow((void **)&r->edges, cap, r->nedges + 1, sizeof(*r->edges)))
		return -1;
	r->edges[r->nedges++] = (struct ktrace_graph_edge){ a, b };
	return 0;
}

/* r->edges from the levels' own edges, child graphs expanded. */
static int expand_edges(struct walker *w)
{
	struct kt_grev *r = w->r;
	uint8_t *has_in = calloc(r->nnodes + 1, 1), *has_out = calloc(r->nnodes + 1, 1);
	struct idx_vec from = { 0 }, to = { 0 };
	uint32_t cap = 0;
	int rc = has_in && has_out ? 0 : -1;

	for (uint32_t k = 0; k < w->nraw && !rc; k++) {
		has_out[w->raw[k].from] = 1;
		has_in[w->raw[k].to] = 1;
	}
	for (uint32_t k = 0; k < w->nraw && !rc; k++) {
		from.n = to.n = 0;
		collect(r, has_in, has_out, w->raw[k].from, 1, &from);
		collect(r, has_in, has_out, w->raw[k].to, 0, &to);
		for (uint32_t a = 0; a < from.n && !rc; a++)
			for (uint32_t b = 0; b < to.n && !rc; b++)
				rc = add_edge(r, &cap, from.v[a], to.v[b]);
	}
	free(from.v);
	free(to.v);
	free(has_in);
	free(has_out);
	return rc;
}

/* ---- the order of a launch's records ----------------------------------------------------- */

static int runs(const struct kt_grev *r, uint32_t i)
{
	const struct kt_gnode *n = &r->nodes[i];

	return n->child_level == KT_GRAPH_NONE || !r->levels[n->child_level].n;
}

/* A kernel, memcpy or memset node: recorded at each launch (each run of
 * its body, inside a conditional body). */
static int record_kind(const struct kt_gnode *n)
{
	return n->rec.kind == KTRACE_GNODE_KERNEL || n->rec.kind == KTRACE_GNODE_MEMCPY ||
	       n->rec.kind == KTRACE_GNODE_MEMSET;
}

static int recorded(const struct kt_gnode *n)
{
	return record_kind(n) && !(n->rec.flags & (KTRACE_GNODEF_IN_CONDITIONAL | KTRACE_GNODEF_DISABLED));
}

/* Kahn's algorithm over the edges, ties in node order; nodes a cycle would
 * leave out (the driver allows none) follow in node order.  topo[] gets
 * every node that runs. */
static uint32_t topo_sort(const struct kt_grev *r, uint32_t *topo)
{
	uint32_t *indeg = calloc(r->nnodes + 1, sizeof(*indeg)), *start = calloc(r->nnodes + 2, sizeof(*start));
	uint32_t *succ = malloc((r->nedges + 1) * sizeof(*succ)), n = 0, head = 0;
	uint8_t *done = calloc(r->nnodes + 1, 1);

	if (indeg && start && succ && done) {
		for (uint32_t e = 0; e < r->nedges; e++) {
			indeg[r->edges[e].to]++;
			start[r->edges[e].from + 2]++;
		}
		for (uint32_t i = 0; i < r->nnodes; i++)
			start[i + 2] += start[i + 1];
		for (uint32_t e = 0; e < r->nedges; e++)
			succ[start[r->edges[e].from + 1]++] = r->edges[e].to;
		for (uint32_t i = 0; i < r->nnodes; i++)
			if (runs(r, i) && !indeg[i])
				topo[n++] = i, done[i] = 1;
		while (head < n) {
			uint32_t x = topo[head++];

			for (uint32_t k = start[x]; k < start[x + 1]; k++)
				if (!--indeg[succ[k]] && !done[succ[k]])
					topo[n++] = succ[k], done[succ[k]] = 1;
		}
	}
	for (uint32_t i = 0; done && i < r->nnodes; i++)
		if (runs(r, i) && !done[i])
			topo[n++] = i;
	free(indeg);
	free(start);
	free(succ);
	free(done);
	return n;
}

/* Each level's body (the run it takes its counter from), and each node's
 * body index: the levels of a node's parent come before its own. */
static void body_runs(struct kt_grev *r)
{
	for (uint32_t lv = 0; lv < r->nlevels; lv++) {
		struct kt_glevel *L = &r->levels[lv];
		const struct kt_gnode *p = L->parent == KT_GRAPH_NONE ? NULL : &r->nodes[L->parent];

		L->run = !p ? KT_GRAPH_NONE : p->rec.kind == KTRACE_GNODE_CONDITIONAL ? lv : r->levels[p->level].run;
	}
	for (uint32_t i = 0; i < r->nnodes; i++) {
		struct kt_gnode *n = &r->nodes[i];
		uint32_t run = r->levels[n->level].run;

		if (run != KT_GRAPH_NONE)
			n->rec.body = r->levels[run].body;
	}
}

/* The kernel, memcpy and memset nodes inside bodies, each body's in
 * topological order.  0 or -1. */
static int body_records(struct kt_grev *r, const uint32_t *topo, uint32_t n)
{
	free(r->body_order);
	r->body_order = NULL;
	r->nbody_rec = 0;
	r->ring = ktrace_tracer.cfg.graph_iters < 2 ? 2 : ktrace_tracer.cfg.graph_iters;
	if (r->ncond && !(r->body_order = malloc((r->nnodes + 1) * sizeof(*r->body_order))))
		return -1;
	for (uint32_t lv = 0; r->ncond && lv < r->nlevels; lv++) {
		struct kt_glevel *L = &r->levels[lv];

		L->first_rec = r->nbody_rec;
		L->nrecs = 0;
		if (L->run != lv)
			continue;
		for (uint32_t k = 0; k < n; k++)
			if (record_kind(&r->nodes[topo[k]]) && r->levels[r->nodes[topo[k]].level].run == lv)
				r->body_order[r->nbody_rec + L->nrecs++] = topo[k];
		r->nbody_rec += L->nrecs;
	}
	return 0;
}

int kt_grev_finish(struct kt_grev *r)
{
	uint32_t *topo = malloc((r->nnodes + 1) * sizeof(*topo)), n;

	free(r->order);
	free(r->run_order);
	r->order = r->run_order = NULL;
	r->nrec = r->nrun = 0;
	if (!topo)
		return -1;
	body_runs(r);
	n = topo_sort(r, topo);
	r->run_order = malloc((n + 1) * sizeof(*r->run_order));
	if (r->run_order) {
		memcpy(r->run_order, topo, n * sizeof(*topo));
		r->nrun = n;
	}
	if (body_records(r, topo, n)) {
		free(topo);
		return -1;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct kt_gnode *g = &r->nodes[topo[k]];

		if (recorded(g)) {
			g->rec.flags |= KTRACE_GNODEF_RECORDED;
			topo[r->nrec++] = topo[k];
		} else {
			g->rec.flags &= (uint16_t)~KTRACE_GNODEF_RECORDED;
		}
	}
	r->order = topo;
	r->nseq = (uint64_t)r->nrec + (uint64_t)r->nbody_rec * r->ring;
	return 0;
}

/* ---- revisions --------------------------------------------------------------------------- */

struct kt_grev *kt_grev_describe(CUgraph g, CUcontext ctx)
{
	struct walker w = { 0 };
	struct kt_grev *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	atomic_init(&r->refs, 1);
	r->ctx = ctx;
	w.r = r;
	w.scratch = malloc(KTRACE_PARAM_MAX_BYTES + 8);
	if (!w.scratch)
		w.why = KTRACE_GRAPH_UNTRACED_QUERY;
	else if (walk_level(&w, g, KT_GRAPH_NONE, 0) != 0 && !w.why)
		w.why = KTRACE_GRAPH_UNTRACED_QUERY;
	if (!w.why || w.why == KTRACE_GRAPH_UNTRACED_CONDITIONAL || w.why == KTRACE_GRAPH_UNTRACED_NODE_KIND ||
	    w.why == KTRACE_GRAPH_UNTRACED_MEMORY_NODES)
		if (expand_edges(&w))
			w.why = KTRACE_GRAPH_UNTRACED_TOO_LARGE;
	r->untraced = w.why;
	free(w.raw);
	free(w.scratch);
	return r;
}

uint32_t kt_grev_top_index(const struct kt_grev *r, CUgraphNode m)
{
	const struct kt_glevel *L = r->nlevels ? &r->levels[0] : NULL;

	for (uint32_t k = 0; L && k < L->n; k++)
		if (r->nodes[L->members[k]].mirror == m)
			return L->members[k];
	return KT_GRAPH_NONE;
}

void kt_grev_hold(struct kt_grev *r)
{
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
}

void kt_grev_release(struct kt_grev *r)
{
	if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (uint32_t i = 0; i < r->nnodes; i++) {
		free(r->nodes[i].params);
		free(r->nodes[i].regions);
		free(r->nodes[i].body_levels);
		free(r->nodes[i].pre_shared);
	}
	for (uint32_t i = 0; i < r->nlevels; i++) {
		free(r->levels[i].members);
		free(r->levels[i].handles);
	}
	free(r->nodes);
	free(r->levels);
	free(r->edges);
	free(r->order);
	free(r->run_order);
	free(r->body_order);
	free(r);
}

/* ---- regions ------------------------------------------------------------------------------ */

/* Extents of node n's regions (hash mode): as plan_hash of a launch does. */
static void plan_extents(struct kt_gnode *n, const struct ktrace_alloc_info *allocs)
{
	uint32_t c = n->nregions;
	uint64_t *ptrs = malloc(c * sizeof(*ptrs)), *lens = malloc(c * sizeof(*lens));
	uint8_t *in_struct = malloc(c), *capped = malloc(c), *exact = malloc(c);

	if (ptrs && lens && in_struct && capped && exact) {
		for (uint32_t i = 0; i < c; i++) {
			ptrs[i] = n->regions[i].ptr;
			in_struct[i] = (n->regions[i].flags & KTRACE_REGIONF_IN_STRUCT) != 0;
		}
		ktrace_alloc_map_extents(ptrs, allocs, in_struct, c, ktrace_tracer.cfg.hash_max, lens, capped, exact);
		for (uint32_t i = 0; i < c; i++) {
			struct ktrace_region *g = &n->regions[i];

			g->hash_len = lens[i];
			g->flags |= (capped[i] ? KTRACE_REGIONF_CAPPED : 0) |
				    (exact[i] && lens[i] ? KTRACE_REGIONF_EXACT : 0) | (lens[i] ? 0 : KTRACE_REGIONF_UNHASHED);
			n->nhashed += lens[i] != 0;
		}
	}
	free(ptrs);
	free(lens);
	free(in_struct);
	free(capped);
	free(exact);
}

static void plan_node(struct kt_gnode *n, int hash)
{
	uint32_t max = (n->rec.param_bytes_len + 7) / 8, c;
	struct ktrace_alloc_info *allocs;

	free(n->regions);
	n->regions = NULL;
	n->nregions = n->nhashed = 0;
	if (!max || !n->params)
		return;
	n->regions = calloc(max, sizeof(*n->regions));
	allocs = calloc(max, sizeof(*allocs));
	if (n->regions && allocs) {
		c = ktrace_params_scan(n->layout, n->params, n->rec.param_bytes_len, n->rec.grid, n->regions, allocs,
				       max, NULL);
		n->nregions = c;
		if (hash && c)
			plan_extents(n, allocs);
		if (hash && c && ktrace_tracer.cfg.hash_readonly)
			ktrace_regions_read_only(n->layout, n->regions, c);
	}
	free(allocs);
}

void kt_grev_plan_regions(struct kt_grev *r, int hash)
{
	r->max_regions = 0;
	for (uint32_t k = 0; k < r->nrec + r->nbody_rec; k++) {
		struct kt_gnode *n = &r->nodes[k < r->nrec ? r->order[k] : r->body_order[k - r->nrec]];

		if (n->rec.kind != KTRACE_GNODE_KERNEL || (n->rec.flags & KTRACE_GNODEF_FILTERED))
			continue;
		plan_node(n, hash);
		if (n->nregions > r->max_regions)
			r->max_regions = n->nregions;
	}
}
