/* interpose/graph/graph_hash.c: ktrace's instrumented copy of an executable graph.
 *
 * Owns the hash state of an exec (struct kt_ghash): a clone of the exec's
 * mirror graph in which every hashed kernel node is preceded by nodes of
 * ktrace's checksum kernel over its regions (after the node's own
 * dependencies) and followed by others (before its dependents), as the
 * revision's hash sets say (graph_hash_plan.c: a pre set merged into the
 * dependency's post set, a region read there once for both, read-only
 * inputs not post-hashed), the exec
 * instantiated from it, one device area (the kernels' scratch words, then
 * their result words) and result slots: pinned host copies of the result
 * words with an event each.  A launch of the program's exec runs ktrace's
 * exec instead, then, on the same stream, copies the result words into a
 * free slot (cuMemcpyDtoHAsync) and records the slot's event; the graph
 * thread polls the event and writes the launch's records with the digests
 * (graph_queue.c).  Nothing waits for the GPU on the program's behalf:
 * when no slot is free after a bounded wait the program's own exec runs,
 * unhashed.  A later launch of the exec on another stream first waits for
 * the previous launch's copy (cuStreamWaitEvent on the slot's event, which
 * follows the previous launch, itself ordered before this one), so the
 * area is not overwritten before it was read.  Updates rebuild the copy and
 * apply it with cuGraphExecUpdate, or instantiate a new one with a new area
 * (also when the new scratch words would reach where an earlier revision's
 * results lie: the checksum kernel needs zeroed scratch).
 * Reference counted: launches in flight hold the state they ran with.
 * May call: the real driver (ktrace_real), the hash pipeline's kernels
 * (the hash_kernels service), hashkern/'s ABI, the queue's poll.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "format/trace_writer.h"
#include "hashkern/hashkern_abi.h"
#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/services.h"

#define KT_GSLOTS 16
#define SLOT_WAIT_NS 1000000ull
#define GROUP_WORDS (KT_HASH_MAX_REGIONS + 1)

struct kt_gslot {
	uint64_t *host;      /* pinned copy of the result words */
	uint64_t cap;        /* its words */
	CUevent ev;
	atomic_int busy;     /* a launch's copy is in flight, or its records are being written */
	atomic_int lost;     /* its event failed: never reused */
};

struct kt_ghash {
	atomic_uint refs;
	CUcontext ctx;
	atomic_int dead;     /* the context is gone: its GPU objects are not touched */
	CUgraph instr;       /* the instrumented copy the exec was instantiated from, kept while the
			      * exec lives: the driver names the exec's nodes by this graph's nodes
			      * (an update's graph is destroyed once the exec took its parameters) */
	CUgraphNode *inst_nodes; /* per node of the revision instantiated: its node in instr (an update
				  * keeps the shape, and the driver pairs nodes in creation order) */
	uint32_t inst_n;     /* entries of inst_nodes */
	CUgraphExec exec;
	CUdeviceptr area;
	uint64_t area_words, scratch_words, result_words;
	uint64_t zero_words; /* the area's first words, zero between launches: scratch of a revision
			      * only there (the results of earlier revisions lie after theirs) */
	struct kt_gslot slots[KT_GSLOTS];
	uint32_t next;
	CUstream last_stream;
	CUevent last_event;
	int have_last;
};

static const uint32_t variant_regions[KT_HASH_NVARIANTS] = KT_HASH_VARIANT_REGIONS;

/* ---- the instrumented copy ----------------------------------------------------------- */

struct build {
	struct kt_ghash *h;
	const struct kt_grev *r;
	CUfunction fn[KT_HASH_NVARIANTS];
	uint32_t max_blocks[KT_HASH_NVARIANTS];
	CUfunction advance;  /* the run counter kernel (graphs of conditional nodes) */
	CUgraph g;           /* the copy being instrumented */
	CUgraphNode *map;    /* per revision node: its node in the copy */
	CUgraph *level_graph;/* per level: its graph in the copy */
	uint32_t hash_nodes; /* checksum nodes added to the copy */
};

union hash_params {
	struct kt_hash_params_r8 r8;
	struct kt_hash_params_r32 r32;
	struct kt_hash_params_r160 r160;
};

/* One hash set of a node (graph_hash_plan.c): its regions, in entry
 * order, and where its results land. */
struct hash_set {
	const struct kt_gnode *n;
	uint64_t off;
	uint32_t count;
	uint64_t *ptr, *len;            /* malloc'd, one block */
};

/* Node n's pre set, or its post set (its post-hashed regions, then the
 * pre-hashed regions of the nodes merged into it that share none of its
 * entries).  0 or -1. */
static int set_fill(const struct kt_grev *r, const struct kt_gnode *n, int post, struct hash_set *s)
{
	s->n = n;
	s->off = post ? n->post_off : n->pre_off;
	s->count = post ? n->post_entries : n->nhashed;
	s->ptr = malloc(2 * (size_t)s->count * sizeof(uint64_t) + 1);
	if (!s->ptr)
		return -1;
	s->len = s->ptr + s->count;
	if (kt_ghash_set_regions(r, n, post, s->ptr, s->len, s->count) == s->count)
		return 0;
	free(s->ptr);
	kt_graph_failed_because("a hash set's regions do not match its plan");
	return -1;
}

/* The kernel node parameters of checksum node grp of set s. */
static void group_params(const struct build *b, const struct hash_set *s, uint32_t grp, union hash_params *u,
			 void **args, CUDA_KERNEL_NODE_PARAMS *kp)
{
	uint32_t first = grp * KT_HASH_MAX_REGIONS, cnt = s->count - first, v = 0;
	uint32_t run = b->r->levels[s->n->level].run;
	uint64_t off = s->off + (uint64_t)grp * GROUP_WORDS, total = 0, blocks;
	uint64_t *ptr, *len, *cend;

	if (cnt > KT_HASH_MAX_REGIONS)
		cnt = KT_HASH_MAX_REGIONS;
	while (variant_regions[v] < cnt)
		v++;
	memset(u, 0, sizeof(*u));
	ptr = v == 0 ? u->r8.ptr : v == 1 ? u->r32.ptr : u->r160.ptr;
	len = v == 0 ? u->r8.len : v == 1 ? u->r32.len : u->r160.len;
	cend = v == 0 ? u->r8.chunk_end : v == 1 ? u->r32.chunk_end : u->r160.chunk_end;
	u->r8.h.scratch = b->h->area + off * sizeof(uint64_t);
	u->r8.h.result = b->h->area + (b->r->scratch_words + off) * sizeof(uint64_t);
	u->r8.h.done_value = 1;
	u->r8.h.n = cnt;
	if (run != KT_GRAPH_NONE) { /* a body's node: its run's ring slot */
		u->r8.h.scratch += b->r->levels[run].ring_off * sizeof(uint64_t);
		u->r8.h.result += b->r->levels[run].ring_off * sizeof(uint64_t);
		u->r8.h.iter_counter = b->h->area + (b->r->scratch_words + b->r->counters_off + run) * sizeof(uint64_t);
		u->r8.h.ring = b->r->ring;
		u->r8.h.ring_stride = b->r->levels[run].stride * sizeof(uint64_t);
	}
	for (uint32_t k = 0; k < cnt; k++) {
		ptr[k] = s->ptr[first + k];
		len[k] = s->len[first + k];
		total += kt_hash_chunks(len[k]);
		cend[k] = total;
	}
	blocks = (total + KT_HASH_WARPS_PER_BLOCK - 1) / KT_HASH_WARPS_PER_BLOCK;
	blocks = blocks > b->max_blocks[v] ? b->max_blocks[v] : blocks ? blocks : 1;
	args[0] = u;
	memset(kp, 0, sizeof(*kp));
	kp->func = b->fn[v];
	kp->gridDimX = (unsigned)blocks, kp->gridDimY = kp->gridDimZ = 1;
	kp->blockDimX = KT_HASH_BLOCK, kp->blockDimY = kp->blockDimZ = 1;
	kp->kernelParams = args;
}

/* One call for the dependencies (dependents: out) of node k: the edge-data
 * form where the driver has it (the plain one refuses edges with data, such
 * as programmatic launch edges, as a lossy query). */
static CUresult neighbours_query(CUgraphNode k, int out, CUgraphNode *v, CUgraphEdgeData *data, size_t *n)
{
	if (out && KT_REAL_HAS(cuGraphNodeGetDependentNodes_v2))
		return KT_REAL(cuGraphNodeGetDependentNodes_v2, k, v, data, n);
	if (!out && KT_REAL_HAS(cuGraphNodeGetDependencies_v2))
		return KT_REAL(cuGraphNodeGetDependencies_v2, k, v, data, n);
	if (out)
		return KT_REAL(cuGraphNodeGetDependentNodes, k, v, n);
	return KT_REAL(cuGraphNodeGetDependencies, k, v, n);
}

/* The dependencies (dependents: out) of node k in the copy, malloc'd.  The
 * hash nodes ktrace adds around k depend on them by full (default) edges. */
static CUgraphNode *neighbours(CUgraphNode k, int out, size_t *n)
{
	const char *what = out ? "cuGraphNodeGetDependentNodes" : "cuGraphNodeGetDependencies";
	CUgraphEdgeData *data = NULL;
	CUgraphNode *v;

	*n = 0;
	if (kt_graph_failed(what, neighbours_query(k, out, NULL, NULL, n)))
		return NULL;
	v = calloc(*n + 1, sizeof(*v));
	if (!*n)
		return v; /* the driver refuses a second query of none (CUDA_ERROR_INVALID_VALUE) */
	data = calloc(*n + 1, sizeof(*data));
	if (v && (!data || kt_graph_failed(what, neighbours_query(k, out, v, data, n)))) {
		free(v);
		v = NULL;
	}
	free(data);
	return v;
}

/* A hashed node's neighbours in the copy before any hash node was added. */
struct around {
	CUgraphNode *deps, *succ;
	size_t nd, ns;
};

/* Add the checksum nodes of node n's pre set (post: its post set) in
 * graph lg, each after deps and before succ; *added counts them.  0 or -1. */
static int add_set(const struct build *b, const struct kt_gnode *n, int post, CUgraph lg, const CUgraphNode *deps,
		   size_t nd, const CUgraphNode *succ, size_t ns, uint32_t *added)
{
	struct hash_set s;
	int rc;

	if (set_fill(b->r, n, post, &s))
		return -1;
	rc = 0;
	for (uint32_t grp = 0; grp < kt_gset_groups(s.count) && !rc; grp++) {
		union hash_params u;
		void *args[1];
		CUDA_KERNEL_NODE_PARAMS kp;
		CUgraphNode node;

		group_params(b, &s, grp, &u, args, &kp);
		rc = KT_GCALL(cuGraphAddKernelNode_v2, &node, lg, nd ? deps : NULL, nd, &kp);
		for (size_t k = 0; k < ns && !rc; k++)
			rc = KT_GCALL(cuGraphAddDependencies, lg, &node, &succ[k], 1);
		*added += !rc;
	}
	free(s.ptr);
	return rc ? -1 : 0;
}

/* Add node i's hash nodes around it: its pre set (unless merged into its
 * dependency's post set) after i's dependencies and before i, its post set
 * (when it has one) after i and before i's dependents, the neighbours
 * taken before any hash node was added (so the post set of a node and the
 * pre set of its dependent run side by side, both before the dependent).
 * 0 or -1. */
static int add_hash_nodes(const struct build *b, uint32_t i, const struct around *a, uint32_t *added)
{
	const struct kt_gnode *n = &b->r->nodes[i];
	CUgraph lg = b->level_graph[n->level];
	CUgraphNode k = b->map[i];

	if (n->pre_host == KT_GRAPH_NONE && add_set(b, n, 0, lg, a->deps, a->nd, &k, 1, added))
		return -1;
	if (n->post_entries && add_set(b, n, 1, lg, &k, 1, a->succ, a->ns, added))
		return -1;
	return 0;
}

/* Add the hash nodes of every hashed node of the revision.  0 or -1. */
static int add_all_hash_nodes(const struct build *b, uint32_t *added)
{
	const struct kt_grev *r = b->r;
	uint32_t total = r->nrec + r->nbody_rec;
	struct around *a = calloc(total + 1, sizeof(*a));
	int rc = a ? 0 : -1;

	for (uint32_t k = 0; k < total && !rc; k++) {
		const struct kt_gnode *n = kt_grev_hash_candidate(r, k);

		if (!(n->rec.flags & KTRACE_GNODEF_HASHED))
			continue;
		a[k].deps = neighbours(b->map[n - r->nodes], 0, &a[k].nd);
		a[k].succ = neighbours(b->map[n - r->nodes], 1, &a[k].ns);
		rc = a[k].deps && a[k].succ ? 0 : -1;
	}
	for (uint32_t k = 0; k < total && !rc; k++)
		if (kt_grev_hash_candidate(r, k)->rec.flags & KTRACE_GNODEF_HASHED)
			rc = add_hash_nodes(b, (uint32_t)(kt_grev_hash_candidate(r, k) - r->nodes), &a[k], added);
	for (uint32_t k = 0; a && k < total; k++) {
		free(a[k].deps);
		free(a[k].succ);
	}
	free(a);
	return rc;
}

/* Is node v of the copy the revision's node n (same kind; a kernel node:
 * the same kernel and grid)? */
static int same_node(CUgraphNode v, const struct kt_gnode *n)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUgraphNodeType t;

	if (KT_REAL(cuGraphNodeGetType, v, &t) != CUDA_SUCCESS || (uint32_t)t + 1 != n->rec.kind)
		return 0;
	if (n->rec.kind != KTRACE_GNODE_KERNEL)
		return 1;
	memset(&p, 0, sizeof(p));
	if (KT_REAL(cuGraphKernelNodeGetParams_v2, v, &p) != CUDA_SUCCESS)
		return 0;
	return (p.func ? (uint64_t)(uintptr_t)p.func : (uint64_t)(uintptr_t)p.kern) == n->func &&
	       p.gridDimX == n->rec.grid[0] && p.gridDimY == n->rec.grid[1] && p.gridDimZ == n->rec.grid[2];
}

/* The copy's graph and nodes of level lv (child graphs matched by the
 * driver's node order, each checked against the revision's).  0 or -1. */
static int map_level(struct build *b, uint32_t lv)
{
	const struct kt_glevel *L = &b->r->levels[lv];
	CUgraphNode *v = NULL;
	size_t n = 0;
	int rc = 0;

	if (lv == 0) {
		b->level_graph[0] = b->g;
		for (uint32_t k = 0; k < L->n && !rc; k++)
			rc = KT_GCALL(cuGraphNodeFindInClone, &b->map[L->members[k]], b->r->nodes[L->members[k]].mirror,
				      b->g);
		return rc ? -1 : 0;
	}
	if (KT_GCALL(cuGraphChildGraphNodeGetGraph, b->map[L->parent], &b->level_graph[lv]) ||
	    KT_GCALL(cuGraphGetNodes, b->level_graph[lv], NULL, &n))
		return -1;
	if (n != L->n) {
		kt_graph_failed_because("a child graph of the copy has another number of nodes");
		return -1;
	}
	v = calloc(n + 1, sizeof(*v));
	if (!v || KT_GCALL(cuGraphGetNodes, b->level_graph[lv], v, &n))
		rc = -1;
	for (uint32_t k = 0; k < L->n && !rc; k++) {
		b->map[L->members[k]] = v[k];
		rc = !same_node(v[k], &b->r->nodes[L->members[k]]);
	}
	if (rc && v)
		kt_graph_failed_because("a child graph of the copy lists its nodes in another order");
	free(v);
	return rc ? -1 : 0;
}

/* Clone mirror into b->g and instrument it.  0, or -1 (b->g destroyed). */
static int instrument(struct build *b, CUgraph mirror)
{
	const struct kt_grev *r = b->r;
	int rc = -1;

	b->g = NULL;
	b->hash_nodes = 0;
	free(b->map);
	b->map = calloc(r->nnodes + 1, sizeof(*b->map));
	b->level_graph = calloc(r->nlevels + 1, sizeof(*b->level_graph));
	if (!b->map || !b->level_graph)
		goto out;
	if (r->ncond) { /* the driver clones no graph of conditional nodes: built */
		struct kt_gbuild_area area = { b->h->area, r->scratch_words, r->counters_off, r->ring, b->advance,
					       NULL, KT_GRAPH_NONE, 0, 0 };

		rc = kt_gbuild(r, &area, &b->g, b->map, b->level_graph);
	} else if (KT_GCALL(cuGraphClone, &b->g, mirror)) {
		goto out;
	} else {
		rc = 0;
		for (uint32_t lv = 0; lv < r->nlevels && !rc; lv++)
			rc = map_level(b, lv);
	}
	if (!rc)
		rc = add_all_hash_nodes(b, &b->hash_nodes);
	if (rc && b->g) {
		KT_REAL(cuGraphDestroy, b->g);
		b->g = NULL;
	}
out:
	free(b->level_graph);
	b->level_graph = NULL;
	return rc;
}

/* ---- the state ----------------------------------------------------------------------- */

/* Zero the area on a private stream (the checksum kernel needs zeroed
 * scratch; it leaves it zeroed).  0 or -1. */
static int zero_area(CUdeviceptr a, size_t bytes)
{
	CUstream s = NULL;
	int rc;

	if (!KT_REAL_HAS(cuStreamCreate) || !KT_REAL_HAS(cuMemsetD8Async) || !KT_REAL_HAS(cuStreamSynchronize) ||
	    KT_REAL(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return -1;
	rc = KT_REAL(cuMemsetD8Async, a, 0, bytes, s) != CUDA_SUCCESS ||
	     KT_REAL(cuStreamSynchronize, s) != CUDA_SUCCESS;
	KT_REAL(cuStreamDestroy_v2, s);
	return rc ? -1 : 0;
}

static struct kt_ghash *state_new(CUcontext ctx, uint64_t words)
{
	struct kt_ghash *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	atomic_init(&h->refs, 1);
	h->ctx = ctx;
	h->area_words = h->zero_words = words;
	if (KT_GCALL(cuMemAlloc_v2, &h->area, words * sizeof(uint64_t)) ||
	    zero_area(h->area, words * sizeof(uint64_t))) {
		if (h->area)
			KT_REAL(cuMemFree_v2, h->area);
		free(h);
		return NULL;
	}
	return h;
}

static void state_free(struct kt_ghash *h)
{
	CUstreamCaptureMode mode;
	int began = ktrace_real_capture_relax(&mode);

	if (!atomic_load(&h->dead)) {
		if (h->exec)
			KT_REAL(cuGraphExecDestroy, h->exec);
		if (h->instr)
			KT_REAL(cuGraphDestroy, h->instr);
		if (h->area)
			KT_REAL(cuMemFree_v2, h->area);
		for (int i = 0; i < KT_GSLOTS; i++) {
			if (h->slots[i].ev)
				KT_REAL(cuEventDestroy_v2, h->slots[i].ev);
			if (h->slots[i].host)
				KT_REAL(cuMemFreeHost, h->slots[i].host);
		}
	}
	ktrace_real_capture_restore(mode, began);
	free(h->inst_nodes);
	free(h);
}

void kt_ghash_hold(struct kt_ghash *h)
{
	atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
}

void kt_ghash_release(struct kt_ghash *h)
{
	if (h && atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) == 1)
		state_free(h);
}

CUcontext kt_ghash_context(const struct kt_ghash *h)
{
	return h->ctx;
}

void kt_ghash_context_gone(struct kt_ghash *h)
{
	atomic_store(&h->dead, 1);
}

/* A top-level node the program may disable on its exec (cuGraphNodeSetEnabled
 * takes kernel, memcpy and memset nodes). */
static int can_disable(const struct kt_gnode *n)
{
	return n->rec.parent == KT_GRAPH_NONE && (n->rec.kind == KTRACE_GNODE_KERNEL ||
						 n->rec.kind == KTRACE_GNODE_MEMCPY || n->rec.kind == KTRACE_GNODE_MEMSET);
}

/* The node of h's exec that stands for revision node i, named as the driver
 * wants it: by the node of the graph the exec was instantiated from.  NULL
 * when none. */
static CUgraphNode exec_node(const struct kt_ghash *h, uint32_t i)
{
	return h->inst_nodes && i < h->inst_n ? h->inst_nodes[i] : NULL;
}

/* Disable in h's exec the nodes disabled in the program's (model indexes).
 * updated: h's exec was updated in place, which keeps each node's enabled
 * state, so a node the program enabled again is enabled again first. */
static void apply_disabled(const struct build *b, const uint32_t *disabled, uint32_t nd, int updated)
{
	const struct kt_grev *r = b->r;
	CUgraphNode node;

	if (!KT_REAL_HAS(cuGraphNodeSetEnabled))
		return;
	for (uint32_t i = 0; updated && i < r->nnodes; i++)
		if (can_disable(&r->nodes[i]) && !(r->nodes[i].rec.flags & KTRACE_GNODEF_DISABLED) &&
		    (node = exec_node(b->h, i)))
			KT_REAL(cuGraphNodeSetEnabled, b->h->exec, node, 1);
	for (uint32_t k = 0; k < nd; k++)
		if (disabled[k] < r->nnodes && (node = exec_node(b->h, disabled[k])))
			KT_REAL(cuGraphNodeSetEnabled, b->h->exec, node, 0);
}

/* Instrument a new copy into h's existing exec with cuGraphExecUpdate.  0 or
 * -1.  The driver refuses a copy of another shape (a set that came or went,
 * one checksum node more or fewer): expected, the caller then instantiates
 * one, so the refusal is not remembered as a failure for a later NOTE. */
static int update_in_place(struct build *b, CUgraph mirror)
{
	CUgraphExecUpdateResultInfo info;

	if (instrument(b, mirror))
		return -1;
	memset(&info, 0, sizeof(info));
	if (KT_REAL(cuGraphExecUpdate_v2, b->h->exec, b->g, &info) != CUDA_SUCCESS) {
		KT_REAL(cuGraphDestroy, b->g);
		return -1;
	}
	/* the exec took the copy's parameters; its nodes are still named by
	 * the graph it was instantiated from (h->instr, h->inst_nodes) */
	KT_REAL(cuGraphDestroy, b->g);
	b->g = NULL;
	return 0;
}

/* Instrument a new copy and instantiate it as h's exec.  0 or -1. */
static int make_exec(struct build *b, CUgraph mirror, uint64_t flags)
{
	const unsigned long long ok_flags = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
					    CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;

	if (instrument(b, mirror))
		return -1;
	if (KT_GCALL(cuGraphInstantiateWithFlags, &b->h->exec, b->g, flags & ok_flags)) {
		b->h->exec = NULL;
		KT_REAL(cuGraphDestroy, b->g);
		return -1;
	}
	b->h->instr = b->g;
	free(b->h->inst_nodes);
	b->h->inst_nodes = b->map;
	b->h->inst_n = b->r->nnodes;
	b->map = NULL;
	return 0;
}

/* The counters of a copy built: its checksum nodes, the kernel nodes they
 * hash, the regions whose pre-digest is read once in a merged set. */
static void count_nodes(const struct kt_grev *r, uint32_t hash_nodes)
{
	uint64_t kernels = 0, shared = 0;

	for (uint32_t k = 0; k < r->nrec + r->nbody_rec; k++) {
		const struct kt_gnode *n = kt_grev_hash_candidate(r, k);

		kernels += (n->rec.flags & KTRACE_GNODEF_HASHED) != 0;
		shared += n->nshared;
	}
	if (ktrace_tracer.writer) {
		ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_GRAPH_HASH_NODES, hash_nodes);
		ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_GRAPH_KERNEL_NODES_HASHED, kernels);
		if (shared)
			ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_HASH_PRE_SHARED, shared);
	}
}

struct kt_ghash *kt_ghash_build(struct kt_ghash *h, CUgraph mirror, const struct kt_grev *r, uint64_t flags,
				const uint32_t *disabled, uint32_t ndisabled, uint32_t *why)
{
	struct build b = { .r = r };
	uint64_t need = r->scratch_words + r->result_words;
	int pushed = ktrace_real_ctx_push(r->ctx), updated = 0;

	*why = KTRACE_GRAPH_UNTRACED_DRIVER;
	if (ktrace_services.hash_kernels(r->ctx, b.fn, b.max_blocks)) {
		kt_graph_failed_because("ktrace's checksum kernels are not loaded in the graph's context");
		goto fail;
	}
	if (r->ncond && ktrace_services.hash_cond_advance(r->ctx, &b.advance)) {
		kt_graph_failed_because("ktrace's run counter kernel is not loaded in the graph's context");
		goto fail;
	}
	if (h && h->exec && !atomic_load(&h->dead) && h->area_words >= need && r->scratch_words <= h->zero_words) {
		b.h = h;
		updated = update_in_place(&b, mirror) == 0;
		if (updated)
			goto done;
	}
	kt_ghash_release(h);
	h = NULL;
	b.h = state_new(r->ctx, need ? need : 1);
	if (!b.h || make_exec(&b, mirror, flags))
		goto fail;
	h = b.h;
done:
	count_nodes(r, b.hash_nodes);
	h->scratch_words = r->scratch_words;
	h->result_words = r->result_words;
	if (h->zero_words > r->scratch_words)
		h->zero_words = r->scratch_words;
	apply_disabled(&b, disabled, ndisabled, updated);
	free(b.map);
	ktrace_real_ctx_pop(pushed);
	*why = KTRACE_GRAPH_TRACED;
	return h;
fail:
	if (b.h && b.h != h)
		kt_ghash_release(b.h);
	kt_ghash_release(h);
	free(b.map);
	ktrace_real_ctx_pop(pushed);
	return NULL;
}

void kt_ghash_upload(struct kt_ghash *h, CUstream s)
{
	if (h->exec && !atomic_load(&h->dead) && KT_REAL_HAS(cuGraphUpload))
		KT_REAL(cuGraphUpload, h->exec, s);
}

/* ---- result slots ------------------------------------------------------------------------ */

static struct kt_gslot *claim_slot(struct kt_ghash *h)
{
	for (uint32_t k = 0; k < KT_GSLOTS; k++) {
		struct kt_gslot *s = &h->slots[(h->next + k) % KT_GSLOTS];
		int expect = 0;

		if (!atomic_load(&s->lost) && atomic_compare_exchange_strong(&s->busy, &expect, 1)) {
			h->next = (h->next + k + 1) % KT_GSLOTS;
			return s;
		}
	}
	return NULL;
}

/* A slot's pinned copy of `words` result words and its event.  0 or -1. */
static int slot_ready(struct kt_gslot *s, uint64_t words)
{
	if (s->cap < words) {
		if (s->host)
			KT_REAL(cuMemFreeHost, s->host);
		s->host = NULL;
		s->cap = 0;
		if (KT_REAL(cuMemHostAlloc, (void **)&s->host, words * sizeof(uint64_t), CU_MEMHOSTALLOC_PORTABLE) !=
		    CUDA_SUCCESS) {
			s->host = NULL;
			return -1;
		}
		s->cap = words;
	}
	if (!s->ev && KT_REAL(cuEventCreate, &s->ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
		s->ev = NULL;
		return -1;
	}
	return 0;
}

struct kt_gslot *kt_ghash_slot(struct kt_ghash *h, uint64_t words, CUstream stream, CUgraphExec *exec,
			       uint32_t *why)
{
	struct kt_gslot *s;
	uint64_t t0 = 0;

	*why = KTRACE_HASH_SKIP_UNAVAILABLE;
	if (!h->exec || atomic_load(&h->dead) || words != h->result_words)
		return NULL;
	while (!(s = claim_slot(h))) {
		uint64_t now = ktrace_now_ns();

		if (!t0) {
			t0 = now;
		} else if (now - t0 > SLOT_WAIT_NS) {
			ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_HASH_SKIPPED_NOSLOT, 1);
			*why = KTRACE_HASH_SKIP_NOSLOT;
			return NULL;
		}
		kt_gthread_poll();
		sched_yield();
	}
	if (slot_ready(s, words)) {
		atomic_store(&s->busy, 0);
		return NULL;
	}
	if (h->have_last && h->last_stream != stream)
		KT_REAL(cuStreamWaitEvent, stream, h->last_event, 0);
	*exec = h->exec;
	return s;
}

int kt_ghash_after_launch(struct kt_ghash *h, struct kt_gslot *slot, CUstream s, uint64_t words, CUresult res)
{
	CUdeviceptr results = h->area + h->scratch_words * sizeof(uint64_t);

	if (res != CUDA_SUCCESS ||
	    KT_REAL(cuMemcpyDtoHAsync_v2, slot->host, results, words * sizeof(uint64_t), s) != CUDA_SUCCESS) {
		atomic_store(&slot->busy, 0);
		return -1;
	}
	if (KT_REAL(cuEventRecord, slot->ev, s) != CUDA_SUCCESS) {
		atomic_store(&slot->lost, 1); /* the copy may still land: never reuse its memory */
		return -1;
	}
	h->last_stream = s;
	h->last_event = slot->ev;
	h->have_last = 1;
	return 0;
}

int kt_ghash_slot_landed(struct kt_ghash *h, struct kt_gslot *slot)
{
	CUresult r;
	int pushed;

	if (atomic_load(&h->dead))
		return -1;
	pushed = ktrace_real_ctx_push(h->ctx);
	r = KT_REAL(cuEventQuery, slot->ev);
	ktrace_real_ctx_pop(pushed);
	if (r == CUDA_ERROR_NOT_READY)
		return 0;
	return r == CUDA_SUCCESS ? 1 : -1;
}

const uint64_t *kt_ghash_slot_words(const struct kt_gslot *slot)
{
	return slot->host;
}

void kt_ghash_slot_free(struct kt_ghash *h, struct kt_gslot *slot, int landed)
{
	(void)h;
	if (landed < 0)
		atomic_store(&slot->lost, 1);
	atomic_store(&slot->busy, 0);
}
